# cython: language_level=3
"""The tape core: graph nodes, topological order and cotangent accumulation.

Every op application that a ``requires_grad`` tensor flows through records one
:class:`Node`; a leaf tensor with ``requires_grad=True`` owns a leaf node (``op is
None``). A tensor names its place in the graph by ``(tensor._node, tensor._index)``.

:func:`run_backward` walks the graph from the roots: a post-order depth-first search
finds the nodes that lead to a target, its reverse is a topological order, and each
node's pullback runs once with the summed cotangents of its outputs. ``None`` is a
structural zero everywhere: a node whose outputs all received ``None`` is skipped.

A pullback of a gather (indexing, take, diagonal) may return a ``SparseCotangent``
(``tenferro/_sparse.py``): adding one to a slot only appends its parts, and a slot is
densified (one buffer, or one ``sparse_sum`` op under create_graph) when it leaves the
accumulator: before the node's pullback reads it, as a result, as a leaf's gradient. So
k uses of one tensor cost O(size + touched entries), not O(k * size).

``tape_twin.py`` holds the same algorithm in plain Python; ``tests/_kernels/test_tape.py``
checks that both agree.
"""

from cpython.number cimport PyNumber_InPlaceAdd
from libc.string cimport memcpy
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF, Py_REFCNT, Py_XDECREF
from cpython.weakref cimport PyWeakref_NewRef


cdef extern from "Python.h":
    # the member descriptor of a __slots__ entry and its offset in the instance
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
from numpy import asarray, generic, ndarray
cimport numpy as cnp
# small real arrays without NumPy's dispatch (the matmul pullback, cotangent sums)
from tenferro._kernels.small_ops cimport (elementwise_into as _elementwise_into,
                                          matmul as _blas_matmul, negative_small,
                                          same_small as _same_small, scaled_small)

cnp.import_array()


# ---------------------------------------------------------------------------------------
# The autograd state of the calling thread: grad mode and the active dual level
# ---------------------------------------------------------------------------------------
# Every op reads both when it records (apply1/apply). As attributes of a threading.local
# they cost ~570 instructions per read (the thread's dict is looked up each time), ~1.1k
# of a small op's ~10k; as C thread-local variables one load. ``tenferro._state.STATE``
# is an AutogradState under the compiled engine (tape_twin.AutogradState, a
# threading.local, under TENFERRO_PURE_PYTHON=1); a new thread starts at the defaults.
cdef extern from *:
    """
    #if defined(_MSC_VER)
    #define TF_THREAD_LOCAL __declspec(thread)
    #else
    #define TF_THREAD_LOCAL __thread
    #endif
    static TF_THREAD_LOCAL int tf_grad_enabled = 1;
    static TF_THREAD_LOCAL long tf_fw_level = 0;
    """
    int tf_grad_enabled
    long tf_fw_level


cdef class AutogradState:
    """Grad mode (reverse: ops record graph nodes) and the id of the active forward-AD
    dual level (0: none), per thread."""

    @property
    def grad_enabled(self):
        return bool(tf_grad_enabled)

    @grad_enabled.setter
    def grad_enabled(self, value):
        global tf_grad_enabled
        tf_grad_enabled = 1 if value else 0

    @property
    def fw_level(self):
        return tf_fw_level

    @fw_level.setter
    def fw_level(self, long value):
        global tf_fw_level
        tf_fw_level = value

# In-place changes (``t[i] = v``, ``t += u``) and node creation share one counter: a node
# remembers its number (``seq``), a tensor changed in place the number of its last change
# (its ``_version``). A backward through a node whose input changed after the node was
# made raises: the node would read the new value and follow the new graph link. With no
# in-place change since a node was made (the usual case) the check is one comparison.
cdef Py_ssize_t _counter = 0
cdef Py_ssize_t _last_change = 0
cdef object _inplace_error = RuntimeError
cdef object _sparse_type = None    # tenferro._sparse.SparseCotangent (set by _engine)


def new_version():
    """Number an in-place change: the changed tensor's new ``_version``."""
    global _counter, _last_change
    _counter += 1
    _last_change = _counter
    return _counter


def set_inplace_error(cls):
    """The exception class raised for a backward through a tensor changed in place."""
    global _inplace_error
    _inplace_error = cls


def set_sparse_type(cls):
    """The class of sparse cotangents (``tenferro._sparse.SparseCotangent``)."""
    global _sparse_type
    _sparse_type = cls


cdef void _check_versions(Node node) except *:
    cdef Py_ssize_t i
    for i in range(len(node.inputs)):
        x = node.inputs[i]
        if x._version > node.seq:
            raise _inplace_error(
                f"backward through {node.op.name!r} needs its input {i} (shape {x.shape}, "
                f"{x.dtype}) as it was when {node.op.name!r} ran, but that tensor was "
                f"modified in place afterwards (t[...] = v, t += u, ...; now at version "
                f"{x._version}, the op saw version {node.seq} or older); change a copy "
                f"instead (u = tf.asarray(t, copy=True); u[...] = v), or change t before "
                f"using it, or use the functional spelling t.at[...].set(v)")


cdef class Node:
    """One recorded op application, or a leaf (``op is None``)."""
    cdef public object op            # the Op: .name, .vjp(ctx, needs, gs, xs, ys)
    cdef public object ctx           # op-specific non-differentiable data
    cdef public tuple inputs         # input Tensors: parent links and saved values
    cdef public tuple out_data       # output arrays
    cdef public object out_tangents  # per output its forward-mode tangents (a _fw chain), or None
    cdef public object leaf          # weakref to the leaf Tensor (leaf nodes only)
    cdef public Py_ssize_t n_out
    cdef public bint freed
    cdef public Py_ssize_t seq        # creation number (shared with in-place versions)
    # scratch of one traversal, reset when it ends
    cdef list pending
    cdef int mark
    cdef bint needed
    # the dual level's list of nodes with tangents refers to them weakly (_engine)
    cdef object __weakref__

    def __init__(self, op, ctx, tuple inputs, tuple out_data, leaf=None):
        _fill_node(self, op, ctx, inputs, out_data,
                   len(out_data) if out_data is not None else 1, leaf)

    @property
    def is_leaf(self):
        return self.op is None

    def __repr__(self):
        if self.op is None:
            return "<Node leaf>"
        return f"<Node {self.op.name}{' (freed)' if self.freed else ''}>"


cdef object _add(object a, object b):
    """The sum of two cotangents of one slot; ``a`` is the slot's accumulator, passed as
    ``_add(slot_list[i], b)``."""
    if a is None:
        return b
    if type(a) is _sparse_type:
        return a.add(b)
    if type(b) is _sparse_type:
        return b.add(a)
    # An accumulator referenced only by the slot list and the caller's temporary (two
    # references) is owned by the tape: add in place instead of allocating (the HIPS
    # autograd trick; k uses of a large tensor then allocate nothing for the sums). A
    # view (base set), a read-only array (a seed) or one whose dtype or shape would
    # change is summed out of place. The twin always adds out of place: same values.
    # (``a`` is never rebound here, so Cython does not take a reference of its own: should
    # a Cython version take one, the count is 3 and every sum is out of place, never the
    # reverse; tests/_kernels/test_vjp_kernels.py checks that sums do happen in place.)
    global _in_place_adds
    if type(a) is ndarray and type(b) is ndarray:
        small = _add_small(<cnp.ndarray>a, <cnp.ndarray>b, Py_REFCNT(a) == 2)
        if small is not None:
            return small
    if (type(a) is ndarray and type(b) is ndarray and Py_REFCNT(a) == 2
            and a.base is None and a.dtype is b.dtype and a.shape == b.shape
            and a.flags.writeable):
        _in_place_adds += 1
        PyNumber_InPlaceAdd(a, b)
        return a
    return a + b


# Cotangent sums of small real arrays (a loop of small ops makes thousands per backward)
# as small_ops' C loop instead of NumPy's ufunc call (~0.4 µs of dispatch for a few
# additions): the same IEEE additions element by element, so the same bits.


cdef object _add_small(cnp.ndarray a, cnp.ndarray b, bint owned_a):
    """a + b (in place into ``a`` when the tape owns it: ``owned_a`` and a writeable base
    array) by small_ops' loop, or None when the operands are not small contiguous real
    arrays of one shape and dtype."""
    global _in_place_adds
    cdef cnp.ndarray out
    if not _same_small(a, b):
        return None
    if owned_a and cnp.PyArray_BASE(a) == NULL and cnp.PyArray_ISWRITEABLE(a):
        out = a
        _in_place_adds += 1
    else:
        out = cnp.PyArray_SimpleNew(cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a),
                                    cnp.PyArray_TYPE(a))
    _elementwise_into(out, a, b, False)
    return out


cdef Py_ssize_t _in_place_adds = 0


def in_place_adds():
    """How many cotangent sums were done in place so far (for tests and benchmarks)."""
    return _in_place_adds


cdef object _check_cast(object c, object x, Node node, Py_ssize_t i):
    """Give cotangent c the dtype and shape of primal x (docs/design.md#dtypes)."""
    return _cast_cotangent(c, x, node.op, i)


cdef object _cast_cotangent(object c, object x, object op, Py_ssize_t i):
    """_check_cast for input ``i`` of ``op`` (its name in the messages)."""
    if type(c) is _sparse_type:   # carries x's dtype; cast when densified
        if c.shape != x.shape:
            raise RuntimeError(
                f"internal error: the pullback of {op.name!r} returned a sparse "
                f"cotangent of shape {c.shape} for input {i} of shape {x.shape}; please "
                f"report this")
        return c
    if type(c) is not ndarray:   # NumPy arithmetic on 0-d arrays returns scalars
        c = asarray(c)
    if c.dtype is not x.dtype and c.dtype != x.dtype:
        if c.dtype.kind == 'c' and x.dtype.kind != 'c':
            c = c.real
        c = c.astype(x.dtype)
    if c.shape != x.shape:
        raise RuntimeError(
            f"internal error: the pullback of {op.name!r} returned a cotangent of shape "
            f"{c.shape} for input {i} of shape {x.shape}; please report this")
    return c


cdef extern from "numpy/arrayobject.h":
    # a NumPy scalar as a 0-d array (what asarray does, without its Python call)
    object _PyArray_FromScalar "PyArray_FromScalar" (object scalar, void* outcode)


cdef inline tuple _inputs(tuple refs, list slots):
    """The values of the slots numbered ``refs``."""
    cdef Py_ssize_t n = len(refs)
    if n == 1:
        return (slots[<Py_ssize_t>refs[0]],)
    if n == 2:
        return (slots[<Py_ssize_t>refs[0]], slots[<Py_ssize_t>refs[1]])
    return tuple([slots[<Py_ssize_t>r] for r in refs])


def replay_forward(list plan, list slots, list guards, object check, dict dyn_ctx):
    """The forward of a tf.compile trace (tenferro/_capture.py): each op's replay
    function on its input slots, its outputs into its slots, in the recorded order;
    ``check(guard, slots)`` before op k for each guard at position k (and those at the
    end after the last op); the new ctx of the ``dyn`` ops into ``dyn_ctx``."""
    cdef Py_ssize_t k = 0, gi = 0, ng = len(guards), first, n_out, i
    cdef tuple e
    for entry in plan:
        while gi < ng and (<tuple>guards[gi])[0] == k:
            check(guards[gi], slots)
            gi += 1
        e = <tuple>entry
        fn = e[0]
        out = fn(*_inputs(<tuple>e[1], slots))
        if e[5]:
            out, dyn_ctx[k] = out
        first = e[3]
        n_out = e[4]
        if n_out == 1:
            if type(out) is not ndarray:    # NumPy returns scalars for 0-d results
                out = _PyArray_FromScalar(out, NULL) if isinstance(out, generic) \
                    else asarray(out)
            slots[first] = out
        else:
            for i in range(n_out):
                slots[first + i] = out[i]
        k += 1
    while gi < ng:
        check(guards[gi], slots)
        gi += 1


def replay_pullbacks(list plan, list ops, list ctxs, list ins, list needs, list slots,
                     dict dyn_ctx, list cts):
    """The pullbacks of a tf.compile trace (tenferro/_capture.py) in reverse order: each
    op's cotangents (``cts``, one per slot, None a zero; seeded with the outputs') go
    through its compiled kernel or its rule into the slots of its traced inputs, summed
    as the tape sums them (_add: in place when the tape owns the accumulator). ``slots``
    holds every value of the forward replay; ``plan[k] = (fn, get, single, first, n_out,
    dyn)``. Leaves the inputs' cotangents in ``cts``."""
    cdef Py_ssize_t k, i, first, n_out
    cdef tuple need, xs, ys, gk, refs
    cdef bint by_kernel, any_g
    cdef int kernel
    for k in range(len(plan) - 1, -1, -1):
        entry = <tuple>plan[k]
        first = entry[3]
        n_out = entry[4]
        if n_out == 1:
            g0 = cts[first]
            if g0 is None:
                continue
            if type(g0) is _sparse_type:
                g0 = g0.densify()
            cts[first] = None
            gk = (g0,)
            ys = (slots[first],)
        else:
            gk = tuple(cts[first:first + n_out])
            any_g = False
            for i in range(n_out):
                if gk[i] is not None:
                    any_g = True
                cts[first + i] = None
            if not any_g:
                continue
            gk = tuple([g.densify() if type(g) is _sparse_type else g for g in gk])
            g0 = gk[0]
            ys = tuple(slots[first:first + n_out])
        xs = _inputs(<tuple>entry[1], slots)
        c = dyn_ctx[k] if entry[5] else ctxs[k]
        need = <tuple>needs[k]
        op = ops[k]
        kernel = op.kernel
        cots = None
        by_kernel = False
        if kernel and n_out == 1:
            cots = _vjp_kernel(kernel, c, need, g0, list(xs), ys)
            by_kernel = cots is not None
        if cots is None:
            cots = op.vjp(c, need, gk, xs, ys)
        refs = <tuple>ins[k]
        for i in range(len(refs)):
            if not need[i]:
                continue
            ci = cots[i]
            if ci is None:
                continue
            if by_kernel:
                if type(ci) is not ndarray:
                    ci = asarray(ci)
            else:
                ci = _cast_cotangent(ci, xs[i], op, i)
            r = refs[i]
            cts[r] = _add(cts[r], ci)


cdef list _discover(list roots, dict targets, bint all_leaves, object freed_error):
    """Post-order DFS from the roots; marks which nodes lead to a target."""
    cdef list order = []
    cdef list nstack, pstack
    cdef Node root, node, parent
    cdef Py_ssize_t pos, n
    cdef bint advanced, need
    for root in roots:
        if root.mark != 0:
            continue
        root.mark = 1
        nstack = [root]
        pstack = [0]
        while nstack:
            node = nstack[-1]
            if node.freed:
                raise freed_error(
                    f"backward reached {node!r}, whose saved values were freed by an earlier "
                    "backward pass; pass retain_graph=True to the first backward/grad call "
                    "if you need to differentiate through the graph twice")
            if node.seq < _last_change:
                _check_versions(node)
            pos = pstack[-1]
            n = len(node.inputs)
            advanced = False
            while pos < n:
                parent = _node_of(node.inputs[pos])
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
                need = node in targets
                if not need:
                    for x in node.inputs:
                        parent = _node_of(x)
                        if parent is not None and parent.needed:
                            need = True
                            break
            node.needed = need
            order.append(node)
    return order


def run_backward(list roots, list seeds, list targets, bint create_graph,
                 bint retain_graph, object graph_rule, object freed_error):
    """Propagate ``seeds`` from ``roots`` back through the graph.

    roots: list of (Node, output index); seeds: the matching cotangents.
    targets: list of (Node, output index) whose cotangents are wanted, or None for
    "every reachable leaf". create_graph: call ``graph_rule(node, gs, needs)`` (which
    records the pullback's own ops) instead of the plain NumPy pullback.
    Returns the list of cotangents aligned with ``targets`` or, when targets is None,
    a list of (leaf Node, cotangent). Nothing is freed unless the whole pass succeeds.
    """
    return _run_backward(roots, seeds, targets, create_graph, retain_graph, graph_rule,
                         freed_error)


cdef list _run_backward(list roots, list seeds, list targets, bint create_graph,
                        bint retain_graph, object graph_rule, object freed_error):
    cdef bint all_leaves = targets is None
    cdef dict target_map = {}
    cdef list results = None
    cdef list leaf_results = []
    cdef list order = []
    cdef list root_nodes = []
    cdef list processed = []
    cdef Node node, parent
    cdef Py_ssize_t i, k, n, idx
    cdef tuple inputs, needs_t, cots
    cdef list gs, needs, xs
    cdef bint any_need, any_g
    cdef int kernel
    cdef bint by_kernel = False

    if not all_leaves:
        results = [None] * len(targets)
        for k in range(len(targets)):
            node, i = targets[k]
            target_map.setdefault(node, []).append((i, k))
    for k in range(len(roots)):
        node = roots[k][0]
        root_nodes.append(node)
    try:
        order = _discover(root_nodes, target_map, all_leaves, freed_error)
        for k in range(len(roots)):
            node, i = roots[k]
            if node.pending is None:
                node.pending = [None] * node.n_out
            node.pending[i] = _add(node.pending[i], seeds[k])
        for k in range(len(order) - 1, -1, -1):
            node = order[k]
            if not node.needed or node.pending is None:
                continue
            gs = node.pending
            for i in range(len(gs)):
                if type(gs[i]) is _sparse_type:
                    gs[i] = gs[i].densify()
            if not all_leaves and node in target_map:
                for i, slot in target_map[node]:
                    results[slot] = gs[i]
            if node.op is None:
                if all_leaves and gs[0] is not None:
                    leaf_results.append((node, gs[0]))
                continue
            inputs = node.inputs
            n = len(inputs)
            needs = [False] * n
            any_need = False
            for i in range(n):
                parent = _node_of(inputs[i])
                if parent is not None and parent.needed:
                    needs[i] = True
                    any_need = True
            if not any_need:
                continue
            any_g = False
            for g in gs:
                if g is not None:
                    any_g = True
                    break
            processed.append(node)
            if not any_g:
                continue
            needs_t = tuple(needs)
            if create_graph:
                cots = tuple(graph_rule(node, tuple(gs), needs_t))
            else:
                xs = [None] * n
                for i in range(n):
                    xs[i] = _data_of(inputs[i])
                op = node.op
                kernel = getattr(op, "kernel", 0)
                cots = None
                by_kernel = False
                if kernel and len(gs) == 1:
                    cots = _vjp_kernel(kernel, node.ctx, needs_t, gs[0], xs,
                                       node.out_data)
                    by_kernel = cots is not None
                if cots is None:
                    cots = tuple(op.vjp(node.ctx, needs_t, tuple(gs), tuple(xs),
                                        node.out_data))
            for i in range(n):
                c = cots[i]
                if c is None or not needs[i]:
                    continue
                x = inputs[i]
                if by_kernel:    # its input's dtype and shape by construction
                    if type(c) is not ndarray:    # (0-d NumPy arithmetic gives scalars)
                        c = asarray(c)
                elif not create_graph:
                    c = _check_cast(c, xs[i], node, i)
                parent = _node_of(x)
                idx = _slot(x, 2) if type(x) is _tensor_type else x._index
                if parent.pending is None:
                    parent.pending = [None] * parent.n_out
                parent.pending[idx] = _add(parent.pending[idx], c)
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
    if all_leaves:
        return leaf_results
    return results


# ---------------------------------------------------------------------------------------
# tf.grad's common call in one compiled function
# ---------------------------------------------------------------------------------------
# grad(outputs, inputs, seeds) with Tensors, ndarray seeds of the outputs' dtypes and
# shapes (or none for 0-d float outputs), no options: validating, seeding, the walk and
# handing out the results cost ~3.5 µs in Python around a ~1 µs walk (n = 16, one node),
# as much as many pullbacks. Anything else (and every error) is left to autograd.grad's
# general path: this returns None before it has changed anything.

cdef list _tensor_list(object x, object tensor_type):
    if type(x) is tensor_type:
        return [x]
    if type(x) is list or type(x) is tuple:
        for t in x:
            if type(t) is not tensor_type:
                return None
        return list(x)
    return None


cdef tuple _plain_seeds(list outs, object grad_outputs, dict ones, object tensor_type):
    """(roots, read-only seeds) of the common call, or None for the general path."""
    cdef list gos = None, roots = [], seeds = []
    cdef Py_ssize_t k
    if grad_outputs is not None:
        if type(grad_outputs) is list or type(grad_outputs) is tuple:
            gos = list(grad_outputs)
        else:
            gos = [grad_outputs]
        if len(gos) != len(outs):
            return None
    for k in range(len(outs)):
        o = outs[k]
        if o._node is None:
            return None
        d = o._data
        g = None if gos is None else gos[k]
        if g is None:
            if d.ndim != 0 or d.dtype.kind != 'f':
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
            g.setflags(write=False)       # (cheaper than through g.flags)
        roots.append((o._node, o._index))
        seeds.append(g)
    return roots, seeds


cdef inline object _wrap_as(object tensor_type, object data):
    """``tensor_type._wrap(data)``; without the Python call for the bound Tensor class."""
    if tensor_type is _tensor_type:
        return _new_tensor(data, None, 0)
    return tensor_type._wrap(data)


cpdef object owned(object g):
    """A gradient handed to the user shares memory with nothing else (autograd._own on
    ndarrays): a read-only array (a seed, a cached one) or a view of an array that
    anything else still references is copied. A view of an array referenced by nothing
    but the view (a kernel's (1, m, n) result seen as (m, n), a buffer a freed node
    saved) is handed out as it is: a 512 KB copy costs 0.1-0.2 ms at n = 256."""
    if type(g) is not ndarray:
        g = asarray(g)                    # NumPy returns scalars for 0-d results
    if not g.flags.writeable:
        return g.copy()
    base = g.base
    if base is None:
        return g
    # references to base: g's and this function's local (CPython reference counts)
    if type(base) is ndarray and Py_REFCNT(base) == 2 and base.base is None:
        return g
    return g.copy()


def grad_plain(object outputs, object inputs, object grad_outputs, object tensor_type,
               object state, dict ones, object freed_error):
    """``autograd.grad(outputs, inputs, grad_outputs)`` without options in its common
    case, or None (nothing done) when the general path must handle the call.

    ``ones``: dtype -> read-only 0-d one (the implicit seed of a 0-d float output; a
    dtype not in it yet goes to the general path, which adds it). Seeds are read-only
    views; a gradient that is a view or read-only is copied before it is returned."""
    cdef list outs = _tensor_list(outputs, tensor_type)
    cdef list ins = _tensor_list(inputs, tensor_type)
    cdef tuple rs
    if outs is None or ins is None:
        return None
    rs = _plain_seeds(outs, grad_outputs, ones, tensor_type)
    if rs is None:
        return None
    return _grad_pass(ins, rs[0], rs[1], state, False, None, freed_error, tensor_type)


cdef list _grad_pass(list ins, list roots, list seeds, object state, bint graph,
                     object rule, object freed_error, object tensor_type):
    """The walk of grad_plain (graph False) and grad_graph: grad mode set to ``graph``
    while it runs (restored after), the graph kept when ``graph``; one result per input,
    None where unreachable, arrays handed out as owned Tensors (Tensors as they are)."""
    cdef list targets = [], res, out = []
    cdef Py_ssize_t j = 0
    for x in ins:
        if x._node is not None:
            targets.append((x._node, x._index))
    saved = state.grad_enabled
    state.grad_enabled = graph
    try:
        res = _run_backward(roots, seeds, targets, graph, graph, rule, freed_error)
    finally:
        state.grad_enabled = saved
    for x in ins:
        if x._node is None:
            out.append(None)
            continue
        g = res[j]
        j += 1
        if g is not None and not isinstance(g, tensor_type):
            g = _wrap_as(tensor_type, owned(g))
        out.append(g)
    return out


def grad_graph(object outputs, object inputs, object tensor_type, object state,
               dict ones, object freed_error, object rule):
    """``autograd.grad(outputs, inputs, create_graph=True)`` with implicit seeds (0-d
    float outputs) and no other option, or None (nothing done) when the general path
    must handle the call: the same pass as autograd._run's (seeds the cached read-only
    ones wrapped as Tensors, grad mode on while the rules record, the graph kept), with
    the Python argument handling around it in C (~1.5 µs of x.exp().sum()'s ~9 µs)."""
    cdef list outs = _tensor_list(outputs, tensor_type)
    cdef list ins = _tensor_list(inputs, tensor_type)
    cdef list roots = [], seeds = []
    if outs is None or ins is None:
        return None
    for o in outs:
        if o._node is None:
            return None
        d = o._data
        if d.ndim != 0 or d.dtype.kind != 'f':
            return None
        g = ones.get(d.dtype)
        if g is None:
            return None
        roots.append((o._node, o._index))
        seeds.append(_wrap_as(tensor_type, g))
    return _grad_pass(ins, roots, seeds, state, True, rule, freed_error, tensor_type)


def backward_plain(object outputs, object grad_outputs, object tensor_type, object state,
                   dict ones, object freed_error):
    """``autograd.backward(outputs, grad_outputs)`` without inputs or options in its
    common case (True), or False (nothing done) for the general path. Accumulates into
    ``.grad`` of every reachable live leaf only after the whole pass succeeded."""
    cdef list outs = _tensor_list(outputs, tensor_type)
    cdef list pairs
    cdef tuple rs
    cdef Node node
    if outs is None:
        return False
    rs = _plain_seeds(outs, grad_outputs, ones, tensor_type)
    if rs is None:
        return False
    saved = state.grad_enabled
    state.grad_enabled = False
    try:
        pairs = _run_backward(rs[0], rs[1], None, False, False, None, freed_error)
        for node, g in pairs:
            t = node.leaf()
            if t is None:                 # the leaf Tensor is gone
                continue
            g = _wrap_as(tensor_type, owned(g))
            t.grad = g if t.grad is None else t.grad + g
    finally:
        state.grad_enabled = saved
    return True

# ---------------------------------------------------------------------------------------
# Recording an op application (every op's primal goes through here)
# ---------------------------------------------------------------------------------------
# apply1/apply wrap an op's output arrays as Tensors, attach a Node when grad mode is on
# and an input requires grad, and hand over to forward mode when a dual level is active.
# In Python they cost ~0.5 µs per op (as much as a small op's NumPy work); here the Node
# and the Tensors are made without Python calls. _engine.py binds the Tensor class, the
# thread-local autograd state and its Python forward-mode step once at import.

cdef object _tensor_new = None    # object.__new__ bound to tenferro.Tensor
cdef object _tensor_type = None
cdef object _state = None         # tenferro._state.STATE (thread-local)
cdef bint _state_native = False   # _state is an AutogradState: read the C variables
cdef object _forward = None       # _engine._forward(op, ctx, inputs, outs, results, node)
cdef object _node_type = None     # None: this module's Node; else the class to record with


def set_node_type(cls):
    """Record graph nodes of class ``cls`` (the twin's Node, for the tests that run the
    twin's backward in-process), or of this module's Node again with ``None``."""
    global _node_type
    _node_type = None if cls is Node else cls


# A Tensor is made by its type's tp_new (object's: zeroed slots, no __init__) and its seven
# __slots__ are filled through their offsets in the object, which the slots' member
# descriptors give: setting them by name costs ~230 instructions each (~8% of a small
# op's forward + backward). Dealloc clears the slots as for any instance. _slot(t, k)
# and _set_slot(t, k, v) index TENSOR_SLOTS: Tensor.__slots__ (tenferro/_tensor.py)
# starts with the same seven names in the same order (tests/test_tensor_slots.py).
TENSOR_SLOTS = ("_data", "_node", "_index", "_fw", "grad", "_version", "_view")
cdef Py_ssize_t[7] _slot_offsets
cdef tuple _SLOTS = TENSOR_SLOTS
cdef object _zero = 0
cdef tuple _no_args = ()


def bind_engine(tensor_type, state, forward):
    """Tell the compiled apply1/apply the Tensor class, the autograd state and the
    forward-mode step (called once by ``tenferro._engine``)."""
    global _tensor_type, _tensor_new, _state, _state_native, _forward
    cdef Py_ssize_t k
    for k in range(7):
        descr = tensor_type.__dict__[_SLOTS[k]]
        if type(descr).__name__ != "member_descriptor":
            raise TypeError(f"{tensor_type.__name__}.{_SLOTS[k]} is not a __slots__ member")
        _slot_offsets[k] = (<PyMemberDescrObject*>descr).d_member.offset
    _tensor_type = tensor_type
    _tensor_new = object.__new__
    _state = state
    _state_native = type(state) is AutogradState
    _forward = forward


cdef inline object _slot(object t, Py_ssize_t k):
    """Slot ``k`` of a Tensor (its class's, or a subclass's: the same offset) read
    through its offset, without the attribute lookup (~250 instructions from C)."""
    cdef PyObject* v = (<PyObject**>((<char*><PyObject*>t) + _slot_offsets[k]))[0]
    if v == NULL:
        return getattr(t, _SLOTS[k])      # unset: the usual AttributeError
    return <object>v


cdef inline object _node_of(object x):
    """``x._node``"""
    if type(x) is _tensor_type:
        return _slot(x, 1)
    return x._node


cdef inline object _data_of(object x):
    """``x._data``"""
    if type(x) is _tensor_type:
        return _slot(x, 0)
    return x._data


cdef inline bint _grad_enabled() except -1:
    """Grad mode of the calling thread."""
    if _state_native:
        return tf_grad_enabled
    return bool(_state.grad_enabled)


cdef inline long _fw_level() except? -1:
    """The active dual level of the calling thread (0: none)."""
    if _state_native:
        return tf_fw_level
    return _state.fw_level


cdef inline void _set_slot(object t, Py_ssize_t k, object value):
    """Store ``value`` (a new reference) in the empty slot ``k`` of a fresh Tensor."""
    Py_INCREF(value)
    (<PyObject**>((<char*><PyObject*>t) + _slot_offsets[k]))[0] = <PyObject*>value


cdef inline object _new_tensor(object data, object node, Py_ssize_t index):
    """``Tensor._wrap(data, node, index)`` without the Python call."""
    t = (<PyTypeObject*>_tensor_type).tp_new(_tensor_type, <PyObject*>_no_args, NULL)
    _set_slot(t, 0, data)
    _set_slot(t, 1, node)
    _set_slot(t, 2, index if index else _zero)
    _set_slot(t, 3, None)
    _set_slot(t, 4, None)
    _set_slot(t, 5, _zero)
    _set_slot(t, 6, None)
    return t


cdef inline object _new_node(object op, object ctx, tuple inputs, tuple out_data):
    """``Node(op, ctx, inputs, out_data)`` without argument parsing."""
    if _node_type is not None:
        return _node_type(op, ctx, inputs, out_data)
    return _make_node(op, ctx, inputs, out_data, len(out_data), None)


cdef inline void _fill_node(Node node, object op, object ctx, tuple inputs, tuple out_data,
                            Py_ssize_t n_out, object leaf):
    """Every field of a new Node (Node.__init__ and _make_node share it)."""
    global _counter
    node.op = op
    node.ctx = ctx
    node.inputs = inputs
    node.out_data = out_data
    node.out_tangents = None
    node.leaf = leaf
    node.n_out = n_out
    node.freed = False
    _counter += 1
    node.seq = _counter
    node.pending = None
    node.mark = 0
    node.needed = False


cdef Node _make_node(object op, object ctx, tuple inputs, tuple out_data, Py_ssize_t n_out,
                     object leaf):
    """A Node as Node.__init__ fills it (``leaf``: the weakref of a leaf's Tensor), without
    the Python-level call of Node(...)."""
    cdef Node node = Node.__new__(Node)
    _fill_node(node, op, ctx, inputs, out_data, n_out, leaf)
    return node


def leaf_tensor(object data, bint requires_grad):
    """``Tensor._wrap(data)`` for an ndarray ``data`` (taken as it is), with a leaf Node
    (a weak reference back to the Tensor) when ``requires_grad``: tf.tensor's common case
    without the Python calls of Tensor.__init__ (~4k instructions of ~11k)."""
    t = _new_tensor(data, None, 0)
    if requires_grad:
        ref = PyWeakref_NewRef(t, None)
        if _node_type is not None:
            node = _node_type(None, None, (), None, ref)
        else:
            node = _make_node(None, None, (), None, 1, ref)
        t._node = node        # (the slot holds None: the descriptor drops that reference)
    return t


# ---------------------------------------------------------------------------------------
# Capture (tenferro/compile.py): the nodes one call of a function records
# ---------------------------------------------------------------------------------------
# While tf.compile records a function, every node that apply1/apply make on the recording
# thread is appended to ``recorder.nodes`` in the order the ops ran, and an op applied to
# graph values with grad mode off (a result computed from the traced inputs that the
# trace would not contain) is named in ``recorder.escapes``. Outside a recording this
# costs one pointer comparison per op.
from cpython.pythread cimport PyThread_get_thread_ident

cdef object _recorder = None
cdef unsigned long _recorder_thread = 0


def set_recorder(recorder):
    """Start (an object with lists ``nodes`` and ``escapes``) or stop (None) recording on
    the calling thread; returns the recorder that was active."""
    global _recorder, _recorder_thread
    previous = _recorder
    _recorder = recorder
    _recorder_thread = PyThread_get_thread_ident()
    return previous


cdef void _record(object op, tuple inputs, object node) except *:
    if PyThread_get_thread_ident() != _recorder_thread:
        return
    if node is not None:
        _recorder.nodes.append(node)
        return
    for x in inputs:
        if _node_of(x) is not None:
            _recorder.escapes.append(op.name)
            return


def apply1(op, inputs, out, ctx=None):
    """Wrap the single output array ``out`` of ``op(*inputs)`` as a Tensor."""
    if type(inputs) is not tuple:
        inputs = tuple(inputs)
    if type(out) is not ndarray:      # NumPy returns scalars for 0-d results
        out = asarray(out)
    return _apply1(op, <tuple>inputs, out, ctx)


cdef object _apply1(object op, tuple inputs, object out, object ctx):
    node = None
    if _grad_enabled():
        for x in inputs:
            if _node_of(x) is not None:
                node = _new_node(op, ctx, inputs, (out,))
                break
    if _recorder is not None:
        _record(op, inputs, node)
    t = _new_tensor(out, node, 0)
    if _fw_level():
        _forward(op, ctx, inputs, (out,), (t,), node)
    return t


# ---------------------------------------------------------------------------------------
# Views: tensors that show part of another tensor's values (x[1:], x.T, x.reshape(..), ...)
# ---------------------------------------------------------------------------------------
# A view's ``_view`` slot holds ``(group, steps)``: the ViewGroup of its base tensor and the
# steps that make the view's value from the base's (tenferro/_ops/views.py defines and
# replays them; a view of a view has the base's group and the steps joined). The base's
# slot holds a weak reference to the group: views keep the group and the group keeps the
# base, with no reference cycle. A write through any member (views.py) gives the base its
# new value and every live view its new value and graph place. Registering a view costs a
# tuple and a weak reference; dead references are pruned whenever the list has doubled.

cdef inline void _replace_slot(object t, Py_ssize_t k, object value):
    """Store ``value`` in slot ``k`` of Tensor ``t``, releasing what it held."""
    cdef PyObject** p = <PyObject**>((<char*><PyObject*>t) + _slot_offsets[k])
    cdef PyObject* old = p[0]
    Py_INCREF(value)
    p[0] = <PyObject*>value
    Py_XDECREF(old)


cdef class ViewGroup:
    """A base tensor and the views made of it (weak references)."""
    cdef public object base        # the base Tensor
    cdef public list views         # weakref.ref of each view made of the base
    cdef Py_ssize_t prune_at       # prune dead references when views grows past this
    cdef object __weakref__

    def __init__(self, base):
        self.base = base
        self.views = []
        self.prune_at = 16

    def members(self):
        """The views that are alive, in the order they were made (prunes the dead)."""
        cdef list live = []
        cdef list refs = []
        for r in self.views:
            v = r()
            if v is not None:
                live.append(v)
                refs.append(r)
        self.views = refs
        self.prune_at = 2 * len(refs) + 16
        return live


def as_view(out, src, step):
    """Make the new Tensor ``out`` the view of ``src`` by ``step`` (returns ``out``)."""
    cdef ViewGroup group
    cdef tuple steps
    link = _slot(src, 6)
    if type(link) is tuple:
        group = <ViewGroup>(<tuple>link)[0]
        steps = (<tuple>link)[1] + (step,)
    else:
        g = None if link is None else link()
        if g is None:                       # src is no base yet (or its views all died)
            g = ViewGroup(src)
            _replace_slot(src, 6, PyWeakref_NewRef(g, None))
        group = <ViewGroup>g
        steps = (step,)
    _replace_slot(out, 6, (group, steps))
    group.views.append(PyWeakref_NewRef(out, None))
    if len(group.views) > group.prune_at:
        group.members()
    return out


# ---------------------------------------------------------------------------------------
# t.sum() of a small float tensor (the loss at the end of most programs)
# ---------------------------------------------------------------------------------------
# numpy.add.reduce costs ~9k instructions (~1 µs) on 4 elements, two thirds of t.sum()
# and ~15% of a whole x.exp().sum() forward+backward (~10k on the 256 entries of a 16 x 16
# loss, whose summing takes ~300). For an aligned, native-order, C-contiguous
# float64/float32 payload of at most 65536 entries this computes the same bits in C:
# NumPy's reduction starts from the identity 0 and adds the pairwise sum of the entries
# (numpy/_core/src/umath/loops_utils.h.src, <TYPE>_pairwise_sum: a plain loop below 8
# entries, 8 accumulators combined pairwise up to 128, then the remainder; above 128 the
# sum of the two halves, the first cut to a multiple of 8), accumulating in the payload's
# own type. Larger payloads take NumPy's path (which releases the GIL while it sums).
# tests/_kernels/test_sum_small.py compares the bits with numpy.add.reduce for every size
# up to 130 and sizes across the recursion's cuts, dtypes and layouts.

cdef enum:
    _PAIRWISE_BLOCK = 128       # NumPy's PW_BLOCKSIZE: above it NumPy recurses
    _SUM_SMALL_MAX = 65536      # the largest payload sum_small sums


ctypedef fused _real_t:
    double
    float


cdef _real_t _pairwise(const _real_t* a, Py_ssize_t n) noexcept nogil:
    """NumPy's pairwise sum of the n entries of a, in their own type."""
    cdef _real_t r0, r1, r2, r3, r4, r5, r6, r7, res
    cdef Py_ssize_t i, half
    if n > _PAIRWISE_BLOCK:
        half = n >> 1
        half -= half % 8
        return _pairwise(a, half) + _pairwise(a + half, n - half)
    if n < 8:
        res = 0
        for i in range(n):
            res += a[i]
        return res
    r0 = a[0]; r1 = a[1]; r2 = a[2]; r3 = a[3]
    r4 = a[4]; r5 = a[5]; r6 = a[6]; r7 = a[7]
    i = 8
    while i < n - (n % 8):
        r0 += a[i]; r1 += a[i + 1]; r2 += a[i + 2]; r3 += a[i + 3]
        r4 += a[i + 4]; r5 += a[i + 5]; r6 += a[i + 6]; r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


def sum_small(op, t):
    """``apply1(op, (t,), numpy.add.reduce(t._data, None))`` for a Tensor ``t`` whose
    payload is an aligned, native-order, C-contiguous float64/float32 array of at most
    65536 entries, with the sum computed in C; None for any other ``t`` (the caller then
    takes NumPy's path)."""
    cdef cnp.ndarray a, out
    cdef Py_ssize_t n
    cdef int typenum
    if type(t) is not _tensor_type:
        return None
    data = t._data
    if type(data) is not ndarray:
        return None
    a = <cnp.ndarray>data
    if not cnp.PyArray_ISCARRAY_RO(a):
        return None
    n = cnp.PyArray_SIZE(a)
    if n > _SUM_SMALL_MAX:
        return None
    typenum = cnp.PyArray_TYPE(a)
    if typenum == cnp.NPY_DOUBLE:
        out = cnp.PyArray_SimpleNew(0, NULL, cnp.NPY_DOUBLE)
        (<double*>cnp.PyArray_DATA(out))[0] = 0.0 + _pairwise(
            <const double*>cnp.PyArray_DATA(a), n)
    elif typenum == cnp.NPY_FLOAT:
        out = cnp.PyArray_SimpleNew(0, NULL, cnp.NPY_FLOAT)
        (<float*>cnp.PyArray_DATA(out))[0] = <float>0.0 + _pairwise(
            <const float*>cnp.PyArray_DATA(a), n)
    else:
        return None
    return _apply1(op, (t,), out, None)


def apply(op, inputs, outs, ctx=None):
    """Wrap the output arrays ``outs`` (a tuple) of ``op(*inputs)`` as Tensors."""
    cdef Py_ssize_t i, n
    cdef list res
    if type(inputs) is not tuple:
        inputs = tuple(inputs)
    if type(outs) is not tuple:
        outs = tuple(outs)
    n = len(outs)
    for i in range(n):
        if type(outs[i]) is not ndarray:   # NumPy returns scalars for 0-d results
            outs = tuple([o if type(o) is ndarray else asarray(o) for o in outs])
            break
    node = None
    if _grad_enabled():
        for x in inputs:
            if _node_of(x) is not None:
                node = _new_node(op, ctx, inputs, outs)
                break
    if _recorder is not None:
        _record(op, inputs, node)
    nondiff = op.nondiff
    res = [None] * n
    for i in range(n):
        res[i] = _new_tensor(outs[i], None if (node is None or i in nondiff) else node, i)
    results = tuple(res)
    if _fw_level():
        _forward(op, ctx, inputs, outs, results, node)
    return results


# ---------------------------------------------------------------------------------------
# Compiled pullbacks of the most common ops (plain backward only)
# ---------------------------------------------------------------------------------------
# A small op's Python pullback (closure, derivative lambda, conj, tuple) costs ~0.3-0.4 µs
# on top of its one or two NumPy calls. For real payloads these kernels make the same
# NumPy calls in the same order as the rule of the op that declares it (so the results
# are bit-identical; tests/_kernels/test_vjp_kernels.py checks every kernel against the
# rules of the ops that declare it; the one exception, a large full sum's zero-stride
# view, has the rule's values, see _SUM_VIEW_MIN) and return None for anything else
# (complex values, promotion, broadcasting), which then runs the Python rule.
# create_graph=True always runs the rule on Tensors.
#
# The tape knows no op: each kernel has a code named by what it computes (g = ḡ, the
# output's cotangent; x, y the input and output; c the ndarray or s the scalar in ctx),
# and an op opts in where its rule is written: defop(..., kernel=VJP_EXP) in
# _ops/elementwise.py, _ops/reductions.py and linalg/matfuncs.py (op.kernel; the
# backward passes read it). tape_twin.py exports the same codes and has no kernels.

from numpy import (cos as _np_cos, empty as _np_empty, multiply as _np_multiply,
                   sin as _np_sin, zeros as _np_zeros)

cpdef enum:
    # one input x, ctx None (1-7) or a real scalar s (8-12); the order of the codes is
    # the order of the checks in _vjp_kernel
    VJP_EXP = 1             # ḡ·y                 (y = exp x)
    VJP_SIN = 2             # ḡ·cos x
    VJP_COS = 3             # ḡ·(−sin x)
    VJP_TANH = 4            # ḡ·(1 − y·y)
    VJP_LOG = 5             # ḡ·(1/x)
    VJP_NEGATIVE = 6        # −ḡ
    VJP_SUM = 7             # ḡ broadcast to x's shape (the sum of every entry)
    VJP_SCALAR_SAME = 8     # ḡ                   (x + s, x − s)
    VJP_SCALAR_NEGATED = 9  # −ḡ                  (s − x)
    VJP_SCALAR_TIMES = 10   # ḡ·s                 (x·s, s·x)
    VJP_SCALAR_OVER = 11    # ḡ/s                 (x / s)
    VJP_OVER_X = 12         # −ḡ·(y/x)            (y = s / x)
    # two inputs a, b of y's shape
    VJP_ADD = 13            # (ḡ, ḡ)
    VJP_SUBTRACT = 14       # (ḡ, −ḡ)
    VJP_MULTIPLY = 15       # (ḡ·b, ḡ·a)
    VJP_DIVIDE = 16         # (ḡ/b, −ḡ·(y/b))
    # one input x and an ndarray c in ctx, both of y's shape
    VJP_ARRAY_TIMES = 17    # ḡ·c                 (x·c, c·x)
    VJP_ARRAY_SAME = 18     # ḡ                   (x + c, c + x, x − c)
    VJP_ARRAY_NEGATED = 19  # −ḡ                  (c − x)
    VJP_ARRAY_OVER = 20     # ḡ/c                 (x / c)
    VJP_ARRAY_OVER_X = 21   # −ḡ·(y/x)            (y = c / x)
    # the 2-norm of every entry (ctx None, 0-d output)
    VJP_NORM2_ALL = 22      # x·(ḡ/y), 0 at y = 0
    # y = a @ b with 1-D or 2-D real a, b of y's dtype
    VJP_MATMUL = 23         # (ḡ bᵀ, aᵀ ḡ), outer products for 1-D operands
    # y = xᵀ of a 2-D x (ctx (1, 0))
    VJP_TRANSPOSE2 = 24     # ḡᵀ
    # y = the main diagonal of a small C-contiguous 2-D x (ctx (0, 0, 1))
    VJP_DIAGONAL2 = 25      # zeros of x's shape with ḡ on the diagonal (dense)


cdef inline bint _real_like(object a, cnp.PyArray_Descr* dtype):
    """``a`` is an ndarray of the real dtype ``dtype`` (``a.dtype is dtype``, read from
    the array struct: ~250 instructions less than the attribute)."""
    return type(a) is ndarray and cnp.PyArray_DESCR(<cnp.ndarray>a) == dtype


# From this many entries the cotangent of a full sum is a read-only view of the 0-d ḡ
# with x's shape (all strides 0) instead of a filled array: the same values (the rule
# fills an array), no allocation (f64 256 x 256: ~30 µs of page faults and stores less per
# backward). Smaller sums keep the filled array: the consumers' ufuncs are a little
# faster on contiguous operands there. A view is never summed into in place nor handed to
# the user as it is (_add and owned check writeable), and rules do not write to their ḡ.
cdef Py_ssize_t _SUM_VIEW_MIN = 1024


cdef object _broadcast_view(cnp.ndarray g, cnp.ndarray x):
    """A read-only view of the 0-d ``g`` with the shape of ``x``, every stride 0."""
    cdef int nd = cnp.PyArray_NDIM(x), i
    cdef cnp.npy_intp zeros[64]
    for i in range(nd):
        zeros[i] = 0
    v = cnp.PyArray_New(ndarray, nd, cnp.PyArray_DIMS(x), cnp.PyArray_TYPE(g), zeros,
                        cnp.PyArray_DATA(g), 0, 0, None)
    cnp.set_array_base(<cnp.ndarray>v, g)
    return v




cdef inline object _mm(object x, object y):
    """x @ y, by NumPy's own BLAS call without its dispatch where small_ops covers it
    (the same bits)."""
    r = _blas_matmul(x, y)
    return x @ y if r is None else r


cdef inline object _neg(object g):
    """−g (small real arrays without NumPy's dispatch: small_ops)."""
    r = negative_small(g)
    return -g if r is None else r


cdef object _diagonal_kernel(object ctx, object g, object x, cnp.PyArray_Descr* dt):
    """The diagonal's pullback as the dense array its sparse cotangent densifies to (zeros
    with ḡ on the main diagonal), for a C-contiguous real 2-D x of at most 1024 entries:
    no sparse cotangent and no densify for the small matrices of a loop. The same values
    (copies, no arithmetic); None otherwise."""
    cdef cnp.ndarray X, G, out
    cdef Py_ssize_t i, k, n, sg
    cdef char* po
    cdef char* pg
    cdef Py_ssize_t sz
    if ctx != (0, 0, 1) or not _real_like(x, dt):
        return None
    X = <cnp.ndarray>x
    G = <cnp.ndarray>g
    if (cnp.PyArray_NDIM(X) != 2 or cnp.PyArray_SIZE(X) > 1024
            or not cnp.PyArray_ISCARRAY_RO(X) or cnp.PyArray_NDIM(G) != 1):
        return None
    n = cnp.PyArray_DIM(X, 1)
    k = min(cnp.PyArray_DIM(X, 0), n)
    if cnp.PyArray_DIM(G, 0) != k:
        return None
    out = cnp.PyArray_ZEROS(2, cnp.PyArray_DIMS(X), cnp.PyArray_TYPE(X), 0)
    sz = cnp.PyArray_ITEMSIZE(X)
    sg = cnp.PyArray_STRIDE(G, 0)
    po = <char*>cnp.PyArray_DATA(out)
    pg = <char*>cnp.PyArray_DATA(G)
    for i in range(k):
        memcpy(po + i * (n + 1) * sz, pg + i * sg, sz)
    return (out,)


cdef object _matmul_kernel(tuple needs, object g, object a, object b,
                           cnp.PyArray_Descr* dt):
    """_ops/structure.py's _matmul_vjp_2d for real a, b of y's dtype (the same products)."""
    cdef int na, nb
    if not (_real_like(a, dt) and _real_like(b, dt)):
        return None
    na = cnp.PyArray_NDIM(<cnp.ndarray>a)
    nb = cnp.PyArray_NDIM(<cnp.ndarray>b)
    if na > 2 or nb > 2:
        return None
    ga = gb = None
    if na == 2:
        if nb == 2:                                        # (m, k) @ (k, n)
            if needs[0]:
                ga = _mm(g, b.T)
            if needs[1]:
                gb = _mm(a.T, g)
        else:                                              # (m, k) @ (k,)
            if needs[0]:
                ga = _np_multiply.outer(g, b)
            if needs[1]:
                gb = _mm(a.T, g)
    elif nb == 2:                                          # (k,) @ (k, n)
        if needs[0]:
            ga = _mm(b, g)
        if needs[1]:
            gb = _np_multiply.outer(a, g)
    else:                                                  # (k,) @ (k,)
        if needs[0]:
            ga = g * b
        if needs[1]:
            gb = a * g
    return (ga, gb)


def vjp_kernel(int kernel, object ctx, tuple needs, object g, tuple xs, tuple ys):
    """Cotangents by the compiled pullback ``kernel`` (a VJP_* code) of an op's rule, or
    None when the kernel does not cover this case and the op's Python rule must run."""
    return _vjp_kernel(kernel, ctx, needs, g, list(xs), ys)


cdef object _vjp_kernel(int kernel, object ctx, tuple needs, object g, list xs, tuple ys):
    cdef object x, y, a, b
    cdef cnp.PyArray_Descr* dt
    y = ys[0]
    if type(y) is not ndarray:
        return None
    dt = cnp.PyArray_DESCR(<cnp.ndarray>y)
    if not cnp.PyArray_ISFLOAT(<cnp.ndarray>y) or not _real_like(g, dt):
        return None
    x = xs[0]
    if kernel == VJP_MATMUL:
        return _matmul_kernel(needs, g, x, xs[1], dt)
    if kernel == VJP_TRANSPOSE2:
        if ctx != (1, 0) or not _real_like(x, dt):
            return None
        return (g.T,)
    if kernel == VJP_DIAGONAL2:
        return _diagonal_kernel(ctx, g, x, dt)
    if kernel == VJP_NORM2_ALL:
        # x̄ = x·(n̄/n) with the scalar a C double, as _vnorm_vjp computes it in Python
        # floats (0 at n = 0); other norms (ctx set) and complex x take the rule
        if ctx is not None or not _real_like(x, dt) or cnp.PyArray_NDIM(<cnp.ndarray>y) != 0:
            return None
        nf = float(y)
        if nf == 0:
            return (_np_zeros(x.shape, x.dtype),)
        return (x * (float(g) / nf),)
    if kernel >= VJP_ARRAY_TIMES:
        # x ∘ c or c ∘ x with c = ctx of x's dtype; covered when nothing was broadcast
        # onto x (its cotangent then needs no un-broadcasting sum)
        if not (_real_like(x, dt) and _real_like(ctx, dt)
                and cnp.PyArray_SAMESHAPE(<cnp.ndarray>x, <cnp.ndarray>y)):
            return None
        if kernel == VJP_ARRAY_TIMES:
            return (g * ctx,)
        if kernel == VJP_ARRAY_SAME:
            return (g,)
        if kernel == VJP_ARRAY_NEGATED:
            return (_neg(g),)
        if kernel == VJP_ARRAY_OVER:
            return (g / ctx,)
        if kernel == VJP_ARRAY_OVER_X:
            return (-g * (y / x),)
        return None
    if kernel <= VJP_OVER_X:
        if not _real_like(x, dt):
            return None
        if kernel == VJP_EXP:
            return (g * y,)
        if kernel == VJP_SIN:
            return (g * _np_cos(x),)
        if kernel == VJP_COS:
            return (g * -_np_sin(x),)
        if kernel == VJP_TANH:
            return (g * (1 - y * y),)
        if kernel == VJP_LOG:
            return (g * (1 / x),)
        if kernel == VJP_NEGATIVE or kernel == VJP_SCALAR_NEGATED:
            return (_neg(g),)
        if kernel == VJP_SUM:
            if ctx is not None:
                return None
            if cnp.PyArray_SIZE(<cnp.ndarray>x) >= _SUM_VIEW_MIN and \
                    cnp.PyArray_NDIM(<cnp.ndarray>g) == 0:
                return (_broadcast_view(<cnp.ndarray>g, <cnp.ndarray>x),)
            a = _np_empty(x.shape, dtype=g.dtype)
            a[...] = g
            return (a,)
        if kernel == VJP_SCALAR_SAME:
            return (g,)
        if kernel == VJP_SCALAR_TIMES:
            a = scaled_small(g, ctx, False)
            return (g * ctx if a is None else a,)
        if kernel == VJP_SCALAR_OVER:
            return (g / ctx,)
        if kernel == VJP_OVER_X:
            return (-g * (y / x),)
        return None
    a = x
    b = xs[1]
    if not (_real_like(a, dt) and _real_like(b, dt)
            and cnp.PyArray_SAMESHAPE(<cnp.ndarray>a, <cnp.ndarray>y)
            and cnp.PyArray_SAMESHAPE(<cnp.ndarray>b, <cnp.ndarray>y)):
        return None
    if kernel == VJP_ADD:
        return (g if needs[0] else None, g if needs[1] else None)
    if kernel == VJP_SUBTRACT:
        return (g if needs[0] else None, _neg(g) if needs[1] else None)
    if kernel == VJP_MULTIPLY:
        return (g * b if needs[0] else None, g * a if needs[1] else None)
    if kernel == VJP_DIVIDE:
        return (g / b if needs[0] else None, -g * (y / b) if needs[1] else None)
    return None


# ---------------------------------------------------------------------------------------
# create_graph=True: a pullback run on Tensors, recording its own ops
# ---------------------------------------------------------------------------------------

cdef object _cast_like(object t, object dtype):
    """Give a cotangent Tensor the dtype of its primal (real part for a real primal)."""
    if t.dtype.kind == 'c' and dtype.kind != 'c':
        t = t.real
    return t.astype(dtype)


def graph_rule(node, tuple gs, tuple needs):
    """Run ``node``'s pullback on Tensors so that its own ops are recorded (the
    ``graph_rule`` of run_backward under create_graph=True): the outputs become Tensors of
    ``node`` (with their forward tangents, if any), the cotangents Tensors of the input
    dtypes and shapes; a sparse cotangent is passed on (the tape densifies it)."""
    cdef Py_ssize_t i, n_out = len(node.out_data)
    cdef list ys_list, out
    cdef tuple ys
    op = node.op
    xs = node.inputs
    tangents = node.out_tangents
    nondiff = op.nondiff
    out_data = node.out_data
    if n_out == 1 and tangents is None:
        ys = (_new_tensor(out_data[0], None if 0 in nondiff else node, 0),)
    else:
        ys_list = []
        for i in range(n_out):
            y = _new_tensor(out_data[i], None if i in nondiff else node, i)
            if tangents is not None and tangents[i] is not None:
                y._fw = tangents[i]     # the output's chain (_engine: one tangent per level)
            ys_list.append(y)
        ys = tuple(ys_list)
    for g in gs:
        if g is not None and not isinstance(g, _tensor_type):
            gs = tuple([g if (g is None or isinstance(g, _tensor_type))
                        else _new_tensor(g, None, 0) for g in gs])
            break
    cots = op.vjp(node.ctx, needs, gs, xs, ys)
    out = []
    i = 0
    for c in cots:
        if c is None or not needs[i]:
            out.append(None)
            i += 1
            continue
        x = (<object>xs[i])._data
        if type(c) is _sparse_type:   # densified by the tape, cast to x's dtype then
            if c.shape != x.shape:
                raise RuntimeError(
                    f"internal error: the pullback of {op.name!r} returned a sparse "
                    f"cotangent of shape {c.shape} for input {i} of shape {x.shape}; "
                    "please report this")
            out.append(c)
            i += 1
            continue
        if not isinstance(c, _tensor_type):
            c = _new_tensor(asarray(c), None, 0)
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
