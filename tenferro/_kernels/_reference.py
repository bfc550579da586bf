"""Pure-Python twins of the compiled kernels.

``Node`` and ``run_backward`` mirror ``tape.pyx`` line for line (read that file's
docstring for the algorithm). Set ``TENFERRO_PURE_PYTHON=1`` to run tenferro on these
twins; ``tests/_kernels/test_tape.py`` checks that both give the same results.
"""

from numpy import asarray, ndarray


class Node:
    """One recorded op application, or a leaf (``op is None``)."""
    __slots__ = ("op", "ctx", "inputs", "out_data", "out_tangents", "leaf", "n_out",
                 "freed", "pending", "mark", "needed")

    def __init__(self, op, ctx, inputs, out_data, leaf=None):
        self.op = op
        self.ctx = ctx
        self.inputs = inputs
        self.out_data = out_data
        self.out_tangents = None
        self.leaf = leaf
        self.n_out = len(out_data) if out_data is not None else 1
        self.freed = False
        self.pending = None
        self.mark = 0
        self.needed = False

    @property
    def is_leaf(self):
        return self.op is None

    def __repr__(self):
        if self.op is None:
            return "<Node leaf>"
        return f"<Node {self.op.name}{' (freed)' if self.freed else ''}>"


def _add(a, b):
    return b if a is None else a + b


def _check_cast(c, x, node, i):
    """Give cotangent c the dtype and shape of primal x (DESIGN §2)."""
    if type(c) is not ndarray:   # NumPy arithmetic on 0-d arrays returns scalars
        c = asarray(c)
    if c.dtype != x.dtype:
        if c.dtype.kind == "c" and x.dtype.kind != "c":
            c = c.real
        c = c.astype(x.dtype)
    if c.shape != x.shape:
        raise RuntimeError(
            f"internal error: the pullback of {node.op.name!r} returned a cotangent of shape "
            f"{c.shape} for input {i} of shape {x.shape}; please report this")
    return c


def _discover(roots, targets, all_leaves, freed_error):
    """Post-order DFS from the roots; marks which nodes lead to a target."""
    order = []
    for root in roots:
        if root.mark != 0:
            continue
        root.mark = 1
        nstack, pstack = [root], [0]
        while nstack:
            node = nstack[-1]
            if node.freed:
                raise freed_error(
                    f"backward reached {node!r}, whose saved values were freed by an earlier "
                    "backward pass; pass retain_graph=True to the first backward/grad call "
                    "if you need to differentiate through the graph twice")
            pos = pstack[-1]
            advanced = False
            while pos < len(node.inputs):
                parent = node.inputs[pos]._node
                pos += 1
                if parent is not None and parent.mark == 0:
                    parent.mark = 1
                    pstack[-1] = pos
                    nstack.append(parent)
                    pstack.append(0)
                    advanced = True
                    break
            if advanced:
                continue
            nstack.pop()
            pstack.pop()
            node.mark = 2
            if all_leaves:
                need = True
            else:
                need = node in targets or any(
                    x._node is not None and x._node.needed for x in node.inputs)
            node.needed = need
            order.append(node)
    return order


def run_backward(roots, seeds, targets, create_graph, retain_graph, graph_rule, freed_error):
    """Propagate ``seeds`` from ``roots`` back through the graph (see tape.pyx)."""
    all_leaves = targets is None
    target_map = {}
    results = None
    leaf_results = []
    order = []
    processed = []
    if not all_leaves:
        results = [None] * len(targets)
        for k, (node, i) in enumerate(targets):
            target_map.setdefault(node, []).append((i, k))
    root_nodes = [node for node, _ in roots]
    try:
        order = _discover(root_nodes, target_map, all_leaves, freed_error)
        for (node, i), seed in zip(roots, seeds):
            if node.pending is None:
                node.pending = [None] * node.n_out
            node.pending[i] = _add(node.pending[i], seed)
        for node in reversed(order):
            if not node.needed or node.pending is None:
                continue
            gs = node.pending
            if not all_leaves and node in target_map:
                for i, slot in target_map[node]:
                    results[slot] = gs[i]
            if node.op is None:
                if all_leaves and gs[0] is not None:
                    leaf_results.append((node, gs[0]))
                continue
            inputs = node.inputs
            needs = [x._node is not None and x._node.needed for x in inputs]
            if not any(needs):
                continue
            processed.append(node)
            if all(g is None for g in gs):
                continue
            if create_graph:
                cots = graph_rule(node, tuple(gs), tuple(needs))
            else:
                cots = node.op.vjp(node.ctx, tuple(needs), tuple(gs),
                                   tuple(x._data for x in inputs), node.out_data)
                cots = tuple(None if (c is None or not needs[i])
                             else _check_cast(c, inputs[i]._data, node, i)
                             for i, c in enumerate(cots))
            for i, (x, c) in enumerate(zip(inputs, cots)):
                if c is None or not needs[i]:
                    continue
                parent = x._node
                if parent.pending is None:
                    parent.pending = [None] * parent.n_out
                parent.pending[x._index] = _add(parent.pending[x._index], c)
            node.pending = None
        if not retain_graph:
            for node in processed:
                node.freed = True
                node.inputs = ()
                node.out_data = None
                node.out_tangents = None
                node.ctx = None
    finally:
        for node in order:
            node.mark = 0
            node.needed = False
            node.pending = None
        for node in root_nodes:
            node.mark = 0
            node.pending = None
    return leaf_results if all_leaves else results
