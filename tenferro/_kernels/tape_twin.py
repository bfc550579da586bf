"""Pure-Python twin of ``tape.pyx`` (the graph's ``Node`` and the backward pass).

``Node`` and ``run_backward`` mirror ``tape.pyx`` line for line (read that file's
docstring for the algorithm). ``tenferro._kernels.load("tape")`` returns this module
instead of the compiled one when ``TENFERRO_PURE_PYTHON=1``; ``tests/_kernels/test_tape.py``
checks that both give the same results.
"""

import threading
import weakref
from sys import getrefcount
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy import asarray, generic, ndarray
from numpy.typing import NDArray

if TYPE_CHECKING:
    from .._ops.registry import Op
    from .._tensor import Tensor


# creation numbers and in-place versions share one counter (see tape.pyx)
_counter = [0, 0]          # [counter, number of the last in-place change]
_inplace_error: list[type[BaseException]] = [RuntimeError]
# tenferro._sparse.SparseCotangent (set by _engine)
_sparse_type: list[type | None] = [None]


def new_version() -> int:
    _counter[0] += 1
    _counter[1] = _counter[0]
    return _counter[0]


def set_inplace_error(cls: type[BaseException]) -> None:
    _inplace_error[0] = cls


def set_sparse_type(cls: type | None) -> None:
    _sparse_type[0] = cls


def _check_versions(node: "Node") -> None:
    for i, x in enumerate(node.inputs):
        if x._version > node.seq:
            raise _inplace_error[0](
                f"backward through {node.op.name!r} needs its input {i} (shape {x.shape}, "
                f"{x.dtype}) as it was when {node.op.name!r} ran, but that tensor was "
                f"modified in place afterwards (t[...] = v, t += u, ...; now at version "
                f"{x._version}, the op saw version {node.seq} or older); change a copy "
                f"instead (u = tf.asarray(t, copy=True); u[...] = v), or change t before "
                f"using it, or use the functional spelling t.at[...].set(v)")


class Node:
    """One recorded op application, or a leaf (``op is None``)."""
    __slots__ = ("op", "ctx", "inputs", "out_data", "out_tangents", "leaf", "n_out",
                 "freed", "seq", "pending", "mark", "needed", "__weakref__")

    def __init__(self, op: Any, ctx: Any, inputs: tuple[Any, ...],
                 out_data: tuple[Any, ...] | None, leaf: Any = None) -> None:
        self.op = op
        self.ctx = ctx
        self.inputs = inputs
        self.out_data = out_data
        self.out_tangents: Any = None
        self.leaf = leaf
        self.n_out = len(out_data) if out_data is not None else 1
        self.freed = False
        _counter[0] += 1
        self.seq = _counter[0]
        self.pending: list[Any] | None = None
        self.mark = 0
        self.needed = False

    @property
    def is_leaf(self) -> bool:
        return self.op is None

    def __repr__(self) -> str:
        if self.op is None:
            return "<Node leaf>"
        return f"<Node {self.op.name}{' (freed)' if self.freed else ''}>"


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if type(a) is _sparse_type[0]:
        return a.add(b)
    if type(b) is _sparse_type[0]:
        return b.add(a)
    return a + b


def _check_cast(c: Any, x: Any, node: Node, i: int) -> Any:
    """Give cotangent c the dtype and shape of primal x (docs/design.md#dtypes)."""
    return _cast_cotangent(c, x, node.op, i)


def _cast_cotangent(c: Any, x: Any, op: Any, i: int) -> Any:
    """_check_cast for input ``i`` of ``op`` (its name in the messages)."""
    if type(c) is _sparse_type[0]:   # carries x's dtype; cast when densified
        if c.shape != x.shape:
            raise RuntimeError(
                f"internal error: the pullback of {op.name!r} returned a sparse "
                f"cotangent of shape {c.shape} for input {i} of shape {x.shape}; please "
                f"report this")
        return c
    if type(c) is not ndarray:   # NumPy arithmetic on 0-d arrays returns scalars
        c = asarray(c)
    if c.dtype != x.dtype:
        if c.dtype.kind == "c" and x.dtype.kind != "c":
            c = c.real
        c = c.astype(x.dtype)
    if c.shape != x.shape:
        raise RuntimeError(
            f"internal error: the pullback of {op.name!r} returned a cotangent of shape "
            f"{c.shape} for input {i} of shape {x.shape}; please report this")
    return c


def replay_forward(plan: list[Any], slots: list[Any], guards: list[Any], check: Any,
                   dyn_ctx: dict[int, Any]) -> None:
    """The forward of a tf.compile trace (see tape.pyx)."""
    gi, ng = 0, len(guards)
    for k, (fn, refs, single, first, n_out, dyn) in enumerate(plan):
        while gi < ng and guards[gi][0] == k:
            check(guards[gi], slots)
            gi += 1
        out = fn(*[slots[r] for r in refs])
        if dyn:
            out, dyn_ctx[k] = out
        slots[first:first + n_out] = [asarray(out)] if n_out == 1 else list(out)
    for guard in guards[gi:]:
        check(guard, slots)


def replay_pullbacks(plan: list[Any], ops: list[Any], ctxs: list[Any], ins: list[Any],
                     needs: list[Any], slots: list[Any], dyn_ctx: dict[int, Any],
                     cts: list[Any]) -> None:
    """The pullbacks of a tf.compile trace in reverse order (see tape.pyx; the twin runs
    every op's rule and sums out of place)."""
    sparse = _sparse_type[0]
    for k in range(len(plan) - 1, -1, -1):
        _, refs, single, first, n_out, dyn = plan[k]
        gk = tuple(cts[first:first + n_out])
        cts[first:first + n_out] = [None] * n_out
        if all(g is None for g in gk):
            continue
        gk = tuple([g.densify() if type(g) is sparse else g for g in gk])
        ys = tuple(slots[first:first + n_out])
        xs = tuple([slots[r] for r in refs])
        op = ops[k]
        need = needs[k]
        cots = op.vjp(dyn_ctx[k] if dyn else ctxs[k], need, gk, xs, ys)
        for i, r in enumerate(ins[k]):
            if need[i] and cots[i] is not None:
                cts[r] = _add(cts[r], _cast_cotangent(cots[i], xs[i], op, i))


def _discover(roots: list[Node], targets: dict[Node, Any], all_leaves: bool,
              freed_error: type[BaseException]) -> list[Node]:
    """Post-order DFS from the roots; marks which nodes lead to a target."""
    order: list[Node] = []
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
            if node.seq < _counter[1]:
                _check_versions(node)
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


def run_backward(roots: list[tuple[Node, int]], seeds: list[Any],
                 targets: list[tuple[Node, int]] | None, create_graph: bool,
                 retain_graph: bool, graph_rule: Callable[..., Any] | None,
                 freed_error: type[BaseException]) -> list[Any]:
    """Propagate ``seeds`` from ``roots`` back through the graph (see tape.pyx)."""
    all_leaves = targets is None
    target_map: dict[Node, list[tuple[int, int]]] = {}
    results: list[Any] = []
    leaf_results: list[Any] = []
    order: list[Node] = []
    processed: list[Node] = []
    if targets is not None:    # (not all_leaves)
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
            for i, g in enumerate(gs):
                if type(g) is _sparse_type[0]:
                    gs[i] = g.densify()
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
                # create_graph passes a graph_rule
                cots = graph_rule(node, tuple(gs), tuple(needs))  # type: ignore[misc]
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


def _tensor_list(x: Any, tensor_type: "type[Tensor]") -> list[Any] | None:
    if type(x) is tensor_type:
        return [x]
    if type(x) is list or type(x) is tuple:
        return list(x) if all(type(t) is tensor_type for t in x) else None
    return None


def _plain_seeds(outs: list[Any], grad_outputs: Any, ones: dict[Any, Any],
                 tensor_type: "type[Tensor]") -> tuple[list[tuple[Node, int]], list[Any]] | None:
    gos: list[Any] | None = None
    if grad_outputs is not None:
        if type(grad_outputs) is list or type(grad_outputs) is tuple:
            gos = list(grad_outputs)
        else:
            gos = [grad_outputs]
        if len(gos) != len(outs):
            return None
    roots: list[tuple[Node, int]] = []
    seeds: list[Any] = []
    for k, o in enumerate(outs):
        if o._node is None:
            return None
        d = o._data
        g = None if gos is None else gos[k]
        if g is None:
            if d.ndim != 0 or d.dtype.kind != "f":
                return None
            g = ones.get(d.dtype)
            if g is None:
                return None
        else:
            if type(g) is tensor_type:
                g = g._data
            elif type(g) is float or isinstance(g, generic):
                g = asarray(g)
            if type(g) is not ndarray or g.dtype != d.dtype or g.shape != d.shape:
                return None
            g = g.view()
            g.setflags(write=False)
        roots.append((o._node, o._index))
        seeds.append(g)
    return roots, seeds


def owned(g: Any) -> NDArray[Any]:
    a: NDArray[Any] = asarray(g)
    c: NDArray[Any]
    if not a.flags.writeable:
        c = a.copy()
        return c
    base = a.base
    if base is None:
        return a
    # references to base: a's, this local and getrefcount's argument (tape.pyx: two)
    if type(base) is ndarray and getrefcount(base) == 3 and base.base is None:
        return a
    c = a.copy()
    return c


def grad_plain(outputs: Any, inputs: Any, grad_outputs: Any,
               tensor_type: "type[Tensor]",
               state: Any, ones: dict[Any, Any],
               freed_error: type[BaseException]) -> list[Any] | None:
    """tf.grad's common call, or None when the general path must handle it (tape.pyx)."""
    outs = _tensor_list(outputs, tensor_type)
    ins = _tensor_list(inputs, tensor_type)
    if outs is None or ins is None:
        return None
    rs = _plain_seeds(outs, grad_outputs, ones, tensor_type)
    if rs is None:
        return None
    return _grad_pass(ins, rs[0], rs[1], state, False, None, freed_error, tensor_type)


def _grad_pass(ins: list[Any], roots: list[Any], seeds: list[Any], state: Any, graph: bool,
               rule: Callable[..., Any] | None, freed_error: type[BaseException],
               tensor_type: "type[Tensor]") -> list[Any]:
    """The walk of grad_plain (graph False) and grad_graph (tape.pyx)."""
    targets = [(x._node, x._index) for x in ins if x._node is not None]
    saved = state.grad_enabled
    state.grad_enabled = graph
    try:
        res = run_backward(roots, seeds, targets, graph, graph, rule, freed_error)
    finally:
        state.grad_enabled = saved
    out: list[Any] = []
    it = iter(res)
    for x in ins:
        g = None if x._node is None else next(it)
        if g is not None and not isinstance(g, tensor_type):
            g = tensor_type._wrap(owned(g))
        out.append(g)
    return out


def grad_graph(outputs: Any, inputs: Any, tensor_type: "type[Tensor]", state: Any,
               ones: dict[Any, Any], freed_error: type[BaseException],
               rule: Callable[..., Any]) -> list[Any] | None:
    """tf.grad(..., create_graph=True) with implicit seeds, or None (tape.pyx)."""
    outs = _tensor_list(outputs, tensor_type)
    ins = _tensor_list(inputs, tensor_type)
    if outs is None or ins is None:
        return None
    roots, seeds = [], []
    for o in outs:
        d = o._data
        if o._node is None or d.ndim != 0 or d.dtype.kind != "f" or d.dtype not in ones:
            return None
        roots.append((o._node, o._index))
        seeds.append(tensor_type._wrap(ones[d.dtype]))
    return _grad_pass(ins, roots, seeds, state, True, rule, freed_error, tensor_type)


def backward_plain(outputs: Any, grad_outputs: Any, tensor_type: "type[Tensor]",
                   state: Any, ones: dict[Any, Any], freed_error: type[BaseException]) -> bool:
    """tf.backward's common call (True), or False for the general path (tape.pyx)."""
    outs = _tensor_list(outputs, tensor_type)
    if outs is None:
        return False
    rs = _plain_seeds(outs, grad_outputs, ones, tensor_type)
    if rs is None:
        return False
    saved = state.grad_enabled
    state.grad_enabled = False
    try:
        pairs = run_backward(rs[0], rs[1], None, False, False, None, freed_error)
        for node, g in pairs:
            t = node.leaf()
            if t is None:
                continue
            g = tensor_type._wrap(owned(g))
            t.grad = g if t.grad is None else t.grad + g
    finally:
        state.grad_enabled = saved
    return True


class AutogradState(threading.local):
    """Grad mode (reverse: ops record graph nodes) and the id of the active forward-AD
    dual level (0: none), per thread (twin of tape.pyx's C thread-local variables)."""

    def __init__(self) -> None:
        self.grad_enabled: bool = True
        self.fw_level: int = 0


# Recording an op application: twins of tape.pyx's bind_engine/apply1/apply.
# None: this module's Node; else the class to record with
_node_type: list[Any] = [None]


def set_node_type(cls: type | Callable[..., Any] | None) -> None:
    _node_type[0] = None if cls is Node else cls


_engine: list[Any] = [None, None, None]   # [Tensor class, autograd STATE, _engine._forward]


def bind_engine(tensor_type: "type[Tensor]", state: Any,
                forward: Callable[..., None]) -> None:
    """Tell apply1/apply the Tensor class, the autograd state and the forward-mode step."""
    _engine[0], _engine[1], _engine[2] = tensor_type, state, forward


def leaf_tensor(data: NDArray[Any], requires_grad: bool) -> "Tensor":
    """``Tensor._wrap(data)`` for an ndarray ``data`` (taken as it is), with a leaf Node
    (a weak reference back to the Tensor) when ``requires_grad``."""
    t: Tensor = _engine[0]._wrap(data)
    if requires_grad:
        t._node = (_node_type[0] or Node)(None, None, (), None, weakref.ref(t))
    return t


# Capture (tenferro/compile.py; see tape.pyx): [recorder, its thread's ident]
_recorder: list[Any] = [None, 0]


def set_recorder(recorder: Any) -> Any:
    """Start (an object with lists ``nodes`` and ``escapes``) or stop (None) recording on
    the calling thread; returns the recorder that was active."""
    previous = _recorder[0]
    _recorder[0], _recorder[1] = recorder, threading.get_ident()
    return previous


def _record(op: "Op", inputs: "tuple[Tensor, ...]", node: Any) -> None:
    if threading.get_ident() != _recorder[1]:
        return
    if node is not None:
        _recorder[0].nodes.append(node)
        return
    for x in inputs:
        if x._node is not None:
            _recorder[0].escapes.append(op.name)
            return


def apply1(op: "Op", inputs: "Sequence[Tensor]", out: NDArray[Any] | generic,
           ctx: Any = None) -> "Tensor":
    """Wrap the single output array ``out`` of ``op(*inputs)`` as a Tensor."""
    tensor_type, state, forward = _engine
    if type(inputs) is not tuple:
        inputs = tuple(inputs)
    if type(out) is not ndarray:      # NumPy returns scalars for 0-d results
        out = asarray(out)
    node = None
    if state.grad_enabled:
        for x in inputs:
            if x._node is not None:
                node = (_node_type[0] or Node)(op, ctx, inputs, (out,))
                break
    if _recorder[0] is not None:
        _record(op, inputs, node)
    t: Tensor = tensor_type._wrap(out, node, 0)
    if state.fw_level:
        forward(op, ctx, inputs, (out,), (t,), node)
    return t


class ViewGroup:
    """A base tensor and the views made of it (weak references; see tape.pyx)."""
    __slots__ = ("base", "views", "prune_at", "__weakref__")

    def __init__(self, base: "Tensor") -> None:
        self.base = base
        self.views: list[Any] = []
        self.prune_at = 16

    def members(self) -> "list[Tensor]":
        """The views that are alive, in the order they were made (prunes the dead)."""
        refs = [r for r in self.views if r() is not None]
        self.views = refs
        self.prune_at = 2 * len(refs) + 16
        return [v for v in (r() for r in refs) if v is not None]


def as_view(out: "Tensor", src: "Tensor", step: Any) -> "Tensor":
    """Make the new Tensor ``out`` the view of ``src`` by ``step`` (returns ``out``)."""
    link = src._view
    if type(link) is tuple:
        group, steps = link[0], link[1] + (step,)
    else:
        group = None if link is None else link()
        if group is None:                   # src is no base yet (or its views all died)
            group = ViewGroup(src)
            src._view = weakref.ref(group)
        steps = (step,)
    out._view = (group, steps)
    group.views.append(weakref.ref(out))
    if len(group.views) > group.prune_at:
        group.members()
    return out


def sum_small(op: "Op", t: Any) -> "Tensor | None":
    """``apply1(op, (t,), numpy.add.reduce(t._data, None))`` for a Tensor ``t`` whose
    payload is an aligned, native-order, C-contiguous float64/float32 array of at most
    65536 entries; None for any other ``t`` (the compiled kernel sums those in C)."""
    if type(t) is not _engine[0]:
        return None
    a = t._data
    if (type(a) is not ndarray or a.size > 65536 or a.dtype.type not in (np.float64, np.float32)
            or not (a.flags.c_contiguous and a.flags.aligned and a.dtype.isnative)):
        return None
    return apply1(op, (t,), np.add.reduce(a, None))


def apply(op: "Op", inputs: "Sequence[Tensor]", outs: Sequence[NDArray[Any] | generic],
          ctx: Any = None) -> "tuple[Tensor, ...]":
    """Wrap the output arrays ``outs`` (a tuple) of ``op(*inputs)`` as Tensors."""
    tensor_type, state, forward = _engine
    if type(inputs) is not tuple:
        inputs = tuple(inputs)
    if type(outs) is not tuple:
        outs = tuple(outs)
    for o in outs:
        if type(o) is not ndarray:    # NumPy returns scalars for 0-d results
            outs = tuple([o if type(o) is ndarray else asarray(o) for o in outs])
            break
    node = None
    if state.grad_enabled:
        for x in inputs:
            if x._node is not None:
                node = (_node_type[0] or Node)(op, ctx, inputs, outs)
                break
    if _recorder[0] is not None:
        _record(op, inputs, node)
    nondiff = op.nondiff
    wrap = tensor_type._wrap
    results = tuple([wrap(d, None if (node is None or i in nondiff) else node, i)
                     for i, d in enumerate(outs)])
    if state.fw_level:
        forward(op, ctx, inputs, outs, results, node)
    return results


def _cast_like(t: Any, dtype: Any) -> Any:
    if t.dtype.kind == "c" and dtype.kind != "c":
        t = t.real
    return t.astype(dtype)


def graph_rule(node: Any, gs: tuple[Any, ...],
               needs: tuple[bool, ...]) -> tuple[Any, ...]:
    """Run a pullback on Tensors so that its own ops are recorded (create_graph=True)."""
    # plain loops and one-output fast paths: this runs once per node of every
    # create_graph pass, and generator expressions cost ~1 µs each here
    T = _engine[0]
    wrap = T._wrap
    op = node.op
    xs = node.inputs
    tangents = node.out_tangents
    nondiff = op.nondiff
    out_data = node.out_data
    ys: tuple[Any, ...]
    if len(out_data) == 1 and tangents is None:
        ys = (wrap(out_data[0], None if 0 in nondiff else node, 0),)
    else:
        ys_list = []
        i = 0
        for d in out_data:
            y = wrap(d, None if i in nondiff else node, i)
            if tangents is not None and tangents[i] is not None:
                y._fw = tangents[i]     # the output's chain (_engine: one tangent per level)
            ys_list.append(y)
            i += 1
        ys = tuple(ys_list)
    for g in gs:
        if g is not None and not isinstance(g, T):
            gs = tuple([g if (g is None or isinstance(g, T)) else wrap(g) for g in gs])
            break
    cots = op.vjp(node.ctx, needs, gs, xs, ys)
    out: list[Any] = []
    i = 0
    for c in cots:
        if c is None or not needs[i]:
            out.append(None)
            i += 1
            continue
        x = xs[i]._data
        if type(c) is _sparse_type[0]:   # densified by the tape, cast to x's dtype then
            if c.shape != x.shape:
                raise RuntimeError(
                    f"internal error: the pullback of {op.name!r} returned a sparse "
                    f"cotangent of shape {c.shape} for input {i} of shape {x.shape}; "
                    "please report this")
            out.append(c)
            i += 1
            continue
        if not isinstance(c, T):
            c = wrap(asarray(c))
        d = c._data
        if d.dtype != x.dtype:
            c = _cast_like(c, x.dtype)
        if d.shape != x.shape:
            raise RuntimeError(
                f"internal error: the pullback of {op.name!r} returned a cotangent of "
                f"shape {d.shape} for input {i} of shape {x.shape}; please report this")
        out.append(c)
        i += 1
    return tuple(out)


# ---- compiled pullbacks and in-place sums: the twin has neither ------------------------
# tape.pyx's vjp_kernel makes the same NumPy calls as the rules of the ops that declare
# its codes (defop(..., kernel=VJP_EXP)); the twin runs the rules themselves
# (tests/_kernels/test_vjp_kernels.py compares the kernels with them) and always sums
# cotangents out of place (the same values). The codes are tape.pyx's, so that an op
# declares the same one whichever module tenferro._kernels.load("tape") picks.

VJP_EXP = 1
VJP_SIN = 2
VJP_COS = 3
VJP_TANH = 4
VJP_LOG = 5
VJP_NEGATIVE = 6
VJP_SUM = 7
VJP_SCALAR_SAME = 8
VJP_SCALAR_NEGATED = 9
VJP_SCALAR_TIMES = 10
VJP_SCALAR_OVER = 11
VJP_OVER_X = 12
VJP_ADD = 13
VJP_SUBTRACT = 14
VJP_MULTIPLY = 15
VJP_DIVIDE = 16
VJP_ARRAY_TIMES = 17
VJP_ARRAY_SAME = 18
VJP_ARRAY_NEGATED = 19
VJP_ARRAY_OVER = 20
VJP_ARRAY_OVER_X = 21
VJP_NORM2_ALL = 22
VJP_MATMUL = 23
VJP_TRANSPOSE2 = 24
VJP_DIAGONAL2 = 25


def vjp_kernel(kernel: int, ctx: Any, needs: tuple[bool, ...], g: Any, xs: tuple[Any, ...],
               ys: tuple[Any, ...]) -> tuple[Any, ...] | None:
    return None


def in_place_adds() -> int:
    return 0
