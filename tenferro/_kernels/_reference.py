"""Pure-Python twins of the compiled kernels.

``Node`` and ``run_backward`` mirror ``tape.pyx`` line for line (read that file's
docstring for the algorithm). Set ``TENFERRO_PURE_PYTHON=1`` to run tenferro on these
twins; ``tests/_kernels/test_tape.py`` checks that both give the same results.
"""

from sys import getrefcount

from numpy import asarray, generic, ndarray


# creation numbers and in-place versions share one counter (see tape.pyx)
_counter = [0, 0]          # [counter, number of the last in-place change]
_inplace_error = [RuntimeError]
_sparse_type = [None]      # tenferro._sparse.SparseCotangent (set by _engine)


def new_version():
    _counter[0] += 1
    _counter[1] = _counter[0]
    return _counter[0]


def set_inplace_error(cls):
    _inplace_error[0] = cls


def set_sparse_type(cls):
    _sparse_type[0] = cls


def _check_versions(node):
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
                 "freed", "seq", "pending", "mark", "needed")

    def __init__(self, op, ctx, inputs, out_data, leaf=None):
        self.op = op
        self.ctx = ctx
        self.inputs = inputs
        self.out_data = out_data
        self.out_tangents = None
        self.leaf = leaf
        self.n_out = len(out_data) if out_data is not None else 1
        self.freed = False
        _counter[0] += 1
        self.seq = _counter[0]
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
    if a is None:
        return b
    if type(a) is _sparse_type[0]:
        return a.add(b)
    if type(b) is _sparse_type[0]:
        return b.add(a)
    return a + b


def _check_cast(c, x, node, i):
    """Give cotangent c the dtype and shape of primal x (DESIGN §2)."""
    if type(c) is _sparse_type[0]:   # carries x's dtype; cast when densified
        if c.shape != x.shape:
            raise RuntimeError(
                f"internal error: the pullback of {node.op.name!r} returned a sparse "
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


def _tensor_list(x, tensor_type):
    if type(x) is tensor_type:
        return [x]
    if type(x) is list or type(x) is tuple:
        return list(x) if all(type(t) is tensor_type for t in x) else None
    return None


def _plain_seeds(outs, grad_outputs, ones, tensor_type):
    gos = None
    if grad_outputs is not None:
        if type(grad_outputs) is list or type(grad_outputs) is tuple:
            gos = list(grad_outputs)
        else:
            gos = [grad_outputs]
        if len(gos) != len(outs):
            return None
    roots, seeds = [], []
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


def owned(g):
    g = asarray(g)
    if not g.flags.writeable:
        return g.copy()
    base = g.base
    if base is None:
        return g
    # references to base: g's, this local and getrefcount's argument (tape.pyx: two)
    if type(base) is ndarray and getrefcount(base) == 3 and base.base is None:
        return g
    return g.copy()


def grad_plain(outputs, inputs, grad_outputs, tensor_type, state, ones, freed_error):
    """tf.grad's common call, or None when the general path must handle it (tape.pyx)."""
    outs = _tensor_list(outputs, tensor_type)
    ins = _tensor_list(inputs, tensor_type)
    if outs is None or ins is None:
        return None
    rs = _plain_seeds(outs, grad_outputs, ones, tensor_type)
    if rs is None:
        return None
    targets = [(x._node, x._index) for x in ins if x._node is not None]
    saved = state.grad_enabled
    state.grad_enabled = False
    try:
        res = run_backward(rs[0], rs[1], targets, False, False, None, freed_error)
    finally:
        state.grad_enabled = saved
    out, it = [], iter(res)
    for x in ins:
        g = None if x._node is None else next(it)
        out.append(None if g is None else tensor_type._wrap(owned(g)))
    return out


def backward_plain(outputs, grad_outputs, tensor_type, state, ones, freed_error):
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


# =========================================================================================
# spectral twins: NumPy versions of spectral.pyx (same names, signatures and results);
# tests/_kernels/test_spectral.py checks that both agree. Formulas: spectral.pyx docstring.
# =========================================================================================

import numpy as np  # noqa: E402  (this section only; the tape twin above needs no NumPy)


def _spectral_gap_inverse(d, e2):
    """F = d/(d² + ε²), 0 where the denominator is 0 (d = 0 and ε = 0)."""
    den = d * d + e2
    return np.divide(d, den, out=np.zeros_like(den), where=den != 0)


def svd_core(X, Y, s, sbar, eps, rel, mode, out, sinv):
    """Fill ``out`` (B, k, k) and ``sinv`` (B, k) with the SVD pullback core;
    ε_b = eps + rel·s_max²."""
    smax = s[:, 0].astype(np.float64) if s.shape[1] else np.zeros(s.shape[0])
    e = eps + rel * smax * smax
    eps2 = e * e
    e2 = eps2[:, None]
    s2 = s * s
    den = s2 * s2 + e2
    sinv[...] = np.divide(s2 * s, den, out=np.zeros_like(den), where=den != 0)
    # the two poles of 1/(s_j² − s_i²), see spectral.pyx: σF ≈ 1/(s_j − s_i) (broadened)
    # and G ≈ 1/(s_j + s_i) (exact unless s_i + s_j ~ 0)
    sig = (s[:, None, :] + s[:, :, None]).astype(np.float64)
    F = sig * _spectral_gap_inverse(s2[:, None, :] - s2[:, :, None], eps2[:, None, None])
    sig2 = sig * sig
    gden = sig2 * sig2 + eps2[:, None, None]
    G = np.divide(sig2 * sig, gden, out=np.zeros_like(gden), where=gden != 0)
    k = s.shape[1]
    G[:, np.arange(k), np.arange(k)] = 0
    P = np.zeros(out.shape, out.dtype) if X is None else X - X.conj().transpose(0, 2, 1)
    Q = np.zeros(out.shape, out.dtype) if Y is None else Y - Y.conj().transpose(0, 2, 1)
    core = (0.5 * (F * (P + Q) + G * (P - Q))).astype(out.dtype)
    diag = np.zeros(s.shape, out.dtype) if sbar is None else sbar.astype(out.dtype)
    if X is not None:
        xd = np.diagonal(X, 0, 1, 2)
        if out.dtype.kind == "c":
            diag = diag + 1j * xd.imag * sinv
        if mode == 1:
            core -= X * sinv[:, None, :]
            diag = diag - xd * sinv
    if Y is not None and mode == 2:
        core -= Y.conj().transpose(0, 2, 1) * sinv[:, :, None]
        diag = diag - np.diagonal(Y, 0, 1, 2).conj() * sinv
    k = s.shape[1]
    core[:, np.arange(k), np.arange(k)] = diag
    out[...] = core


def eigh_core(X, w, wbar, eps, rel, out):
    """Fill ``out`` (B, k, k) with the eigh pullback core; ε_b = eps + rel·max|λ|."""
    k = w.shape[1]
    scale = (np.maximum(np.abs(w[:, 0]), np.abs(w[:, -1])).astype(np.float64) if k
             else np.zeros(w.shape[0]))
    e = eps + rel * scale
    F = _spectral_gap_inverse(w[:, None, :] - w[:, :, None], (e * e)[:, None, None])
    core = 0.5 * F * (X - X.conj().transpose(0, 2, 1))
    core[:, np.arange(k), np.arange(k)] = 0 if wbar is None else wbar
    out[...] = core


def phase_check(X, Y, GU, GV):
    """(worst, flat): the largest |Im(X_ii + Y_ii)| / (‖GU[b, :, i]‖ + ‖GV[b, i, :]‖)."""
    num = 0
    den = 0
    if X is not None:
        num = np.diagonal(X, 0, 1, 2).imag.astype(np.float64)
        den = np.sqrt(np.sum(np.abs(GU.astype(np.complex128)) ** 2, axis=1))
    if Y is not None:
        num = num + np.diagonal(Y, 0, 1, 2).imag
        den = den + np.sqrt(np.sum(np.abs(GV.astype(np.complex128)) ** 2, axis=2))
    num = np.abs(num)
    if num.size == 0:
        return 0.0, 0
    ratio = np.where(num == 0, 0.0, num / np.where(den > 0, den, 1.0))
    ratio = np.where((num != 0) & (den == 0), 1e300, ratio)
    flat = int(np.argmax(ratio))
    return float(ratio.reshape(-1)[flat]), flat


# =======================================================================================
# lapack_twins: NumPy/SciPy twins of lapack.pyx
# =======================================================================================
# Same names, signatures, results and errors as the compiled drivers in lapack.pyx
# (whose docstrings are the reference), written with numpy.linalg / scipy.linalg one
# matrix or one gufunc call at a time. ``tests/_kernels/test_lapack.py`` checks that both
# agree; lapack.pyx also calls these for 0-size inputs.

import warnings as _warnings  # noqa: E402

import numpy as _np  # noqa: E402


def _lapack_array(a):
    a = _np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_np.float64)
    if a.dtype.char not in "fdFD":
        from .._errors import DTypeError
        raise DTypeError(f"LAPACK needs float32, float64, complex64 or complex128 input, "
                         f"got {a.dtype}; convert with .astype(np.float64) first")
    return a


def _lapack_where(k, batch):
    if not batch:
        return "the matrix"
    from ..linalg._common import batch_index
    return f"matrix {batch_index(k, batch)} of the stack"


def _lapack_flat(a):
    batch = a.shape[:-2]
    nb = int(_np.prod(batch, dtype=_np.int64))
    return a.reshape((nb,) + a.shape[-2:]), batch


def _lapack_check_finite(a, what, tri=None):
    """The iterative drivers reject a matrix with a NaN/Inf entry (in its referenced
    triangle for eigh), naming it, like lapack.pyx."""
    from .._errors import LinAlgError
    if a.size == 0:
        return
    flat, batch = _lapack_flat(a)
    if tri == "lower":
        flat = _np.tril(flat)
    elif tri == "upper":
        flat = _np.triu(flat)
    bad = ~_np.isfinite(flat).reshape(flat.shape[0], -1).all(axis=1)
    if bad.any():
        k = int(_np.flatnonzero(bad)[0])
        raise LinAlgError(f"{what}: {_lapack_where(k, batch)} has a non-finite entry (NaN "
                          "or Inf); LAPACK cannot decompose it")


def svd(a, full_matrices=False, compute_uv=True):
    """Twin of lapack.svd: numpy.linalg.svd."""
    from .._errors import LinAlgError
    a = _lapack_array(a)
    _lapack_check_finite(a, "SVD did not converge")
    try:
        r = _np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    except _np.linalg.LinAlgError as e:
        raise LinAlgError(f"SVD did not converge: {e}") from None
    return tuple(r) if compute_uv else r


def eigh(a, lower=True, compute_v=True):
    """Twin of lapack.eigh: numpy.linalg.eigh / eigvalsh."""
    from .._errors import LinAlgError
    a = _lapack_array(a)
    _lapack_check_finite(a, "eigh did not converge", "lower" if lower else "upper")
    uplo = "L" if lower else "U"
    try:
        if compute_v:
            return tuple(_np.linalg.eigh(a, UPLO=uplo))
        return _np.linalg.eigvalsh(a, UPLO=uplo)
    except _np.linalg.LinAlgError as e:
        raise LinAlgError(f"eigh did not converge: {e}") from None


def qr(a, mode="reduced"):
    """Twin of lapack.qr: numpy.linalg.qr."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    r = _np.linalg.qr(_lapack_array(a), mode=mode)
    return r if mode == "r" else tuple(r)


def getrf(a, return_info=False):
    """Twin of lapack.getrf: scipy.linalg.lu_factor per matrix."""
    import scipy.linalg as sla
    a = _lapack_array(a)
    flat, batch = _lapack_flat(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    lu = _np.empty(flat.shape, a.dtype)
    piv = _np.zeros((flat.shape[0], k), _np.int32)
    info = _np.zeros(flat.shape[0], _np.int32)
    if k:
        for i in range(flat.shape[0]):
            with _warnings.catch_warnings():   # exactly singular: reported through info
                _warnings.simplefilter("ignore", sla.LinAlgWarning)
                lu[i], piv[i] = sla.lu_factor(flat[i], check_finite=False)
            zero = _np.flatnonzero(_np.diagonal(lu[i]) == 0)
            info[i] = zero[0] + 1 if zero.size else 0
    lu = lu.reshape(a.shape)
    piv = piv.reshape(batch + (k,))
    if return_info:
        return lu, piv, info.reshape(batch)
    return lu, piv


def lu(a):
    """Twin of lapack.lu: scipy.linalg.lu per matrix (p of a's real dtype)."""
    import scipy.linalg as sla
    a = _lapack_array(a)
    flat, batch = _lapack_flat(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    rdt = _np.finfo(a.dtype).dtype
    p = _np.broadcast_to(_np.eye(m, dtype=rdt), (flat.shape[0], m, m)).copy()
    l_ = _np.zeros((flat.shape[0], m, k), a.dtype)
    u = _np.zeros((flat.shape[0], k, n), a.dtype)
    if k:
        for i in range(flat.shape[0]):
            p[i], l_[i], u[i] = sla.lu(flat[i], check_finite=False)
    return p.reshape(batch + (m, m)), l_.reshape(batch + (m, k)), u.reshape(batch + (k, n))


def potrf(a, lower=True):
    """Twin of lapack.potrf: scipy.linalg.cholesky per matrix."""
    import scipy.linalg as sla
    from .._errors import LinAlgError
    a = _lapack_array(a)
    flat, batch = _lapack_flat(a)
    out = _np.empty(flat.shape, a.dtype)
    if a.shape[-1]:
        for i in range(flat.shape[0]):
            try:
                out[i] = sla.cholesky(flat[i], lower=lower, check_finite=False)
            except _np.linalg.LinAlgError as e:
                raise LinAlgError(f"{_lapack_where(i, batch)} is not positive definite "
                                  f"({e})") from None
    return out.reshape(a.shape)


def eig(a, compute_v=True):
    """Twin of lapack.eig: numpy.linalg.eig / eigvals, always complex."""
    from .._errors import LinAlgError
    a = _lapack_array(a)
    _lapack_check_finite(a, "eig did not converge")
    cdt = _np.result_type(a.dtype, _np.complex64)
    try:
        if compute_v:
            w, v = _np.linalg.eig(a)
            return w.astype(cdt, copy=False), v.astype(cdt, copy=False)
        return _np.linalg.eigvals(a).astype(cdt, copy=False)
    except _np.linalg.LinAlgError as e:
        raise LinAlgError(f"eig did not converge: {e}") from None


def _lapack_solve_operands(a, b):
    a = _lapack_array(a)
    b = _lapack_array(b)
    dt = _np.result_type(a.dtype, b.dtype)
    batch = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return a.astype(dt, copy=False), b.astype(dt, copy=False), batch


def _lapack_solve_stacks(name, a, b, trans):
    """getrs/trtrs twins' operands: trans checked, a and b of one dtype flattened to
    broadcast (nb, n, n) and (nb, n, nrhs) stacks, with the batch shape and a zero x."""
    if trans not in (0, 1, 2):
        raise ValueError(f"{name}: trans must be 0, 1 or 2, got {trans!r}")
    a, b, batch = _lapack_solve_operands(a, b)
    n, nrhs = b.shape[-2:]
    nb = int(_np.prod(batch, dtype=_np.int64))
    fa = _np.broadcast_to(a, batch + (n, n)).reshape((nb, n, n))
    fb = _np.broadcast_to(b, batch + (n, nrhs)).reshape((nb, n, nrhs))
    return fa, fb, batch, _np.zeros(fb.shape, b.dtype)


def getrs(lu, piv, b, trans=0):
    """Twin of lapack.getrs: scipy.linalg.lu_solve per matrix."""
    import scipy.linalg as sla
    lu, fb, batch, out = _lapack_solve_stacks("getrs", lu, b, trans)
    nb, n, nrhs = fb.shape
    piv = _np.broadcast_to(_np.asarray(piv), batch + (n,)).reshape((nb, n))
    if n and nrhs:
        for i in range(nb):
            out[i] = sla.lu_solve((lu[i], piv[i]), fb[i], trans=trans, check_finite=False)
    return out.reshape(batch + (n, nrhs))


def trtrs(a, b, lower=False, trans=0, unit_diagonal=False):
    """Twin of lapack.trtrs: scipy.linalg.solve_triangular per matrix."""
    import scipy.linalg as sla
    from .._errors import LinAlgError
    fa, fb, batch, out = _lapack_solve_stacks("trtrs", a, b, trans)
    nb, n, nrhs = fb.shape
    if n and nrhs:
        for i in range(nb):
            try:
                out[i] = sla.solve_triangular(fa[i], fb[i], lower=lower, trans=trans,
                                              unit_diagonal=unit_diagonal,
                                              check_finite=False)
            except _np.linalg.LinAlgError as e:
                raise LinAlgError(f"{_lapack_where(i, batch)} is singular ({e})") from None
    return out.reshape(batch + (n, nrhs))


# =======================================================================================
# triangular twins: twins of triangular.pyx (trsm and the fused backprops)
# =======================================================================================

def _tri_adjoint_solve(a, g, lower, trans, unit_diagonal, left):
    """op(a)⁻ᴴ g (left) or g op(a)⁻ᴴ (right), with the trtrs twin above."""
    cplx = a.dtype.kind == "c"
    if not left:   # g M⁻ᴴ = (M⁻¹ gᴴ)ᴴ
        gh = g.swapaxes(-1, -2).conj()
        return trtrs(a, gh, lower, trans, unit_diagonal).swapaxes(-1, -2).conj()
    if trans == 1 and cplx:   # M⁻ᴴ = conj(a)⁻¹: conj(a⁻¹ conj(g))
        return trtrs(a, g.conj(), lower, 0, unit_diagonal).conj()
    # M⁻ᴴ is a⁻ᴴ for trans 0, a⁻¹ for trans 2 (and for real trans 1)
    return trtrs(a, g, lower, 2 if trans == 0 else 0, unit_diagonal)


def solve_triangular_backprop(a, x, gx, lower, trans, unit_diagonal, left, need_a=True,
                              need_b=True):
    """Twin of triangular.solve_triangular_backprop (RULES.md "solve_triangular"):
    G = M⁻ᴴX̄ (left) or X̄M⁻ᴴ (right), M = op(a); Ā = P(op⁻¹(−GXᴴ)) or P(op⁻¹(−XᴴG)),
    P keeping the triangle the solve reads (strict for unit_diagonal)."""
    dt = _np.result_type(a.dtype, x.dtype, gx.dtype)
    a, x, gx = (_np.asarray(v).astype(dt, copy=False) for v in (a, x, gx))
    batch = _np.broadcast_shapes(a.shape[:-2], x.shape[:-2], gx.shape[:-2])
    n = a.shape[-1]
    shape = batch + x.shape[-2:]
    if a.size == 0 or x.size == 0:
        g = _np.zeros(shape, dt)
    else:
        g = _tri_adjoint_solve(a, _np.broadcast_to(gx, shape), lower, trans,
                               unit_diagonal, left)
    ga = None
    if need_a:
        xh = x.swapaxes(-1, -2).conj()
        mbar = -(g @ xh if left else xh @ g) if g.size else _np.zeros(batch + (n, n), dt)
        mbar = _np.broadcast_to(mbar, batch + (n, n))
        if trans == 1:
            mbar = mbar.swapaxes(-1, -2)
        elif trans == 2:
            mbar = mbar.swapaxes(-1, -2).conj()
        k = (-1 if lower else 1) if unit_diagonal else 0
        ga = _np.tril(mbar, k) if lower else _np.triu(mbar, k)
    return ga, (g if need_b else None)


def trsm(a, b, lower=False, trans=0, unit_diagonal=False, left=True, check=False):
    """Twin of triangular.trsm: the triangle and op(a) made explicit, then
    numpy.linalg.solve (x op(a) = b solved as op(a)ᵀxᵀ = bᵀ)."""
    from .._errors import LinAlgError
    a, b, batch = _lapack_solve_operands(a, b)
    shape = batch + b.shape[-2:]
    if a.size == 0 or b.size == 0:
        return _np.zeros(shape, a.dtype)
    n = a.shape[-1]
    t = _np.tril(a) if lower else _np.triu(a)
    if unit_diagonal:
        t = t.copy()
        t[..., _np.arange(n), _np.arange(n)] = 1
    elif check:
        bad = (_np.diagonal(t, 0, -2, -1) == 0).any(axis=-1)
        if bad.any():
            k = int(_np.flatnonzero(_np.broadcast_to(bad, batch))[0])
            raise LinAlgError(f"{_lapack_where(k, batch)} is singular: a diagonal entry "
                              "of the triangular matrix is exactly zero")
    if trans:
        t = t.swapaxes(-1, -2)
        if trans == 2:
            t = t.conj()
    t = _np.broadcast_to(t, batch + (n, n))
    if left:
        return _np.linalg.solve(t, _np.broadcast_to(b, shape))
    bt = _np.broadcast_to(b, shape).swapaxes(-1, -2)
    return _np.linalg.solve(t.swapaxes(-1, -2), bt).swapaxes(-1, -2)


def qr_backprop(q, r, gq, gr, rtol=0.0):
    """Twin of triangular.qr_backprop (RULES.md "qr", m >= n): M = R R̄ᴴ − Q̄ᴴQ,
    Ā = (Q̄ + Q copyltu(M)) R⁻ᴴ, copyltu(M) = tril(M) + tril₋(M)ᴴ with real diagonal."""
    from .._errors import LinAlgError
    mag = _np.abs(_np.diagonal(r, 0, -2, -1))
    if mag.size:
        bad = ~(mag.min(axis=-1) > rtol * mag.max(axis=-1))
        if bad.any():
            k = int(_np.flatnonzero(bad)[0])
            raise LinAlgError(f"{_lapack_where(k, r.shape[:-2])}: R is singular to working "
                              "precision")
    if gq is None and gr is None:
        return _np.zeros(q.shape, q.dtype)
    mm = 0
    if gr is not None:
        mm = r @ gr.swapaxes(-1, -2).conj()
    if gq is not None:
        mm = mm - gq.swapaxes(-1, -2).conj() @ q
    low = _np.tril(mm, -1)
    c = low + low.swapaxes(-1, -2).conj()
    n = q.shape[-1]
    c[..., _np.arange(n), _np.arange(n)] = _np.diagonal(mm, 0, -2, -1).real
    b = q @ c if gq is None else gq + q @ c
    if b.size == 0:
        return b
    # B R⁻ᴴ = (R⁻¹ Bᴴ)ᴴ
    return trsm(r, b, False, 2, False, False)


def cholesky_backprop(l, gl):
    """Twin of triangular.cholesky_backprop (RULES.md "cholesky"): Ā = ½(S + Sᴴ),
    S = L⁻ᴴ Φ(LᴴL̄) L⁻¹, Φ = tril with the diagonal halved."""
    if l.size == 0:
        return _np.zeros(_np.broadcast_shapes(l.shape, gl.shape), l.dtype)
    p = _np.tril(l.swapaxes(-1, -2).conj() @ _np.tril(gl))
    n = l.shape[-1]
    p[..., _np.arange(n), _np.arange(n)] *= 0.5
    s = trsm(l, p, True, 2, False, True)
    s = trsm(l, s, True, 0, False, False)
    return 0.5 * (s + s.swapaxes(-1, -2).conj())


def _lapack_lstsq_stacks(name, a, b):
    """gelsd/lstsq_qr twins' operands: a and b of one dtype flattened to broadcast
    (nb, m, n) and (nb, m, k) stacks, with the batch shape."""
    a, b, batch = _lapack_solve_operands(a, b)
    if b.shape[-2] != a.shape[-2]:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape} do not fit "
                         "(*batch, m, n) and (*batch, m, k)")
    m, n = a.shape[-2:]
    k = b.shape[-1]
    nb = int(_np.prod(batch, dtype=_np.int64))
    fa = _np.broadcast_to(a, batch + (m, n)).reshape((nb, m, n))
    fb = _np.broadcast_to(b, batch + (m, k)).reshape((nb, m, k))
    return fa, fb, batch


def gelsd(a, b, rcond):
    """Twin of lapack.gelsd: scipy.linalg.lstsq(cond=rcond, lapack_driver="gelsd") per
    matrix -> (x, rank int64, s); 0-size stacks and k = 0 give correctly shaped results."""
    import scipy.linalg as sla
    from .._errors import LinAlgError
    fa, fb, batch = _lapack_lstsq_stacks("gelsd", a, b)
    nb, m, n = fa.shape
    k = fb.shape[-1]
    x = _np.zeros((nb, n, k), fa.dtype)
    rank = _np.zeros(nb, _np.int64)
    s = _np.zeros((nb, min(m, n)), fa.real.dtype)
    if m and n:
        _lapack_check_finite(fa.reshape(batch + (m, n)),
                             "SVD did not converge in least squares")
        for i in range(nb):
            rhs = fb[i] if k else _np.zeros((m, 1), fa.dtype)   # LAPACK wants a column
            try:
                xi, _, rank[i], s[i] = sla.lstsq(fa[i], rhs, cond=rcond, check_finite=False,
                                                 lapack_driver="gelsd")
            except _np.linalg.LinAlgError as e:
                raise LinAlgError(f"SVD did not converge in least squares: "
                                  f"{_lapack_where(i, batch)} (gelsd: {e})") from None
            x[i] = xi[:, :k]
    return x.reshape(batch + (n, k)), rank.reshape(batch), s.reshape(batch + (min(m, n),))


def lstsq_qr(a, b, rcond):
    """Twin of lapack.lstsq_qr: numpy.linalg.qr (of a, or of aᴴ when wide) and the
    singular values of R per matrix; gelsd's twin for the rank-deficient ones ->
    (x, rank, s, res, r); 0-size stacks and k = 0 give correctly shaped results."""
    import scipy.linalg as sla
    fa, fb, batch = _lapack_lstsq_stacks("lstsq_qr", a, b)
    nb, m, n = fa.shape
    k = fb.shape[-1]
    p = min(m, n)
    rdt = fa.real.dtype
    x = _np.zeros((nb, n, k), fa.dtype)
    rank = _np.zeros(nb, _np.int64)
    s = _np.zeros((nb, p), rdt)
    res = _np.zeros((nb, k), rdt)
    r = _np.zeros((nb, p, p), fa.dtype)
    if m and n:
        _lapack_check_finite(fa.reshape(batch + (m, n)),
                             "SVD did not converge in least squares")
        # gelsd's rank rule (?lalsd): s <= rc·s_max are zero, rc = eps unless 0 < rcond < 1
        rc = rcond if 0 < rcond < 1 else _np.finfo(rdt).eps / 2
        for i in range(nb):
            ai = fa[i] if m >= n else fa[i].conj().T
            q, r[i] = _np.linalg.qr(ai, mode="complete")[0], _np.linalg.qr(ai, mode="r")[:p]
            s[i] = _np.linalg.svd(r[i], compute_uv=False)
            if (s[i] > rdt.type(rc) * s[i, 0]).all():
                rank[i] = p
                if m >= n:
                    c = q.conj().T @ fb[i]
                    x[i] = sla.solve_triangular(r[i], c[:n], check_finite=False)
                    res[i] = _np.sum(_np.abs(c[n:]) ** 2, axis=0)
                else:
                    y = sla.solve_triangular(r[i], fb[i], trans=2, check_finite=False)
                    x[i] = q[:, :m] @ y
            else:
                x[i], rank[i], s[i] = (v[0] for v in gelsd(fa[i][None], fb[i][None], rcond))
                if rank[i] == n and m > n:
                    res[i] = _np.sum(_np.abs(fb[i] - fa[i] @ x[i]) ** 2, axis=0)
    return (x.reshape(batch + (n, k)), rank.reshape(batch), s.reshape(batch + (p,)),
            res.reshape(batch + (k,)), r.reshape(batch + (p, p)))


def pinv_qr(a, rtol):
    """Twin of lapack.pinv_qr: numpy.linalg.qr (of a, or of aᴴ when wide) per matrix whose
    singular values are all > rtol·s_max, x = R⁻¹Qᴴ (or its conjugate transpose); zeros
    and full = False elsewhere."""
    import scipy.linalg as sla
    a = _lapack_array(a)
    flat, batch = _lapack_flat(a)
    m, n = a.shape[-2:]
    nb = flat.shape[0]
    rt = _np.broadcast_to(_np.asarray(rtol, _np.float64), batch).reshape(nb)
    x = _np.zeros((nb, n, m), a.dtype)
    full = _np.zeros(nb, bool)
    for i in range(nb if m and n else 0):
        f = flat[i] if m >= n else flat[i].conj().T
        if not _np.isfinite(f).all():
            continue
        q, r = _np.linalg.qr(f)
        s = _np.linalg.svd(r, compute_uv=False)
        if (s > rt[i] * s[0]).all():
            y = sla.solve_triangular(r, q.conj().T, check_finite=False)   # F⁺
            x[i] = y if m >= n else y.conj().T
            full[i] = True
    return x.reshape(batch + (n, m)), full.reshape(batch)


# =======================================================================================
# inverse twin: NumPy version of inverse.pyx (same name, signature and results);
# tests/_kernels/test_inverse.py checks that both agree.
# =======================================================================================

def lu_inverse(lu, piv, scale=None, trans=0, overwrite_lu=False):
    """Twin of inverse.lu_inverse: scale·op(A)⁻¹ (op = identity, ᵀ, ᴴ for trans 0, 1, 2)
    from getrf's (lu, piv), here as U⁻¹L⁻¹ with the interchanges applied to the columns
    in reverse order (overwrite_lu is only a permission: ignored here)."""
    import scipy.linalg as sla
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_inverse: trans must be 0, 1 or 2, got {trans!r}")
    lu = _np.asarray(lu)
    dt = lu.dtype if scale is None else _np.result_type(lu.dtype, _np.asarray(scale).dtype)
    lu = _lapack_array(lu.astype(dt, copy=False))
    dt = lu.dtype
    n = lu.shape[-1]
    batch = lu.shape[:-2]
    piv = _np.asarray(piv)
    if piv.size and (piv.min() < 0 or piv.max() >= n):
        raise ValueError(f"lu_inverse: pivots must be row indices 0..{n - 1} (piv from "
                         "getrf)")
    nb = int(_np.prod(batch, dtype=_np.int64))
    if nb == 0 or n == 0:
        return _np.zeros(batch + (n, n), dt)
    flat = lu.reshape((nb, n, n))
    fp = piv.reshape((nb, n))
    out = _np.empty(flat.shape, dt)
    eye = _np.eye(n, dtype=dt)
    for k in range(flat.shape[0]):
        with _np.errstate(divide="ignore", invalid="ignore"):
            ui = sla.solve_triangular(flat[k], eye, lower=False, check_finite=False)
            li = sla.solve_triangular(flat[k], eye, lower=True, unit_diagonal=True,
                                      check_finite=False)
            x = ui @ li
        for j in range(n - 2, -1, -1):
            p = fp[k, j]
            if p != j:
                x[:, [j, p]] = x[:, [p, j]]
        out[k] = x
    if trans:
        out = out.swapaxes(-1, -2)
        if trans == 2:
            out = out.conj()
    out = _np.ascontiguousarray(out)
    if scale is not None:
        out *= _np.broadcast_to(_np.asarray(scale, dt), batch).reshape(-1, 1, 1)
    return out.reshape(batch + (n, n))


# =======================================================================================
# expm twins: NumPy versions of expm.pyx (same names, signatures and results; the
# algorithm and formulas are in expm.pyx's docstring). tests/_kernels/test_expm.py checks
# that both agree. ``data`` is (groups, par): one _ExpmPade per distinct (m, s) with the
# indices of its matrices, and the (nb, 2) int32 (m, s) of each matrix ((0, 0): NaN).
# =======================================================================================

# Padé coefficients b_j of r_m(x) = p_m(x)/p_m(−x), p_m(x) = Σ b_j x^j (Higham 2005)
_EXPM_B = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# ‖A‖₁ bounds θ_m for degree m without scaling (double precision, Higham 2005 Table 2.3)
_EXPM_THETA = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
               (7, 9.504178996162932e-1), (9, 2.097847961257068e0))
_EXPM_THETA13 = 5.371920351148152


def _expm_degree(norm1):
    """(m, s): Padé degree and number of squarings for a matrix of 1-norm ``norm1``
    ((0, 0) when it is not finite).

    The 1-norm, not the sharper η = max(‖A⁴‖^(1/4), ‖A⁶‖^(1/6)) that scipy.linalg.expm
    uses for the value (Al-Mohy & Higham 2009a): the derivative's truncation terms are
    words A^j E A^l, which η does not bound (for A = 1000·(upper shift), 4×4, η = 0 and
    the degree-3 approximant's L is 5% off, while its value is exact).
    """
    import math
    if not math.isfinite(norm1):
        return 0, 0
    for m, theta in _EXPM_THETA:
        if norm1 <= theta:
            return m, 0
    return 13, max(0, math.ceil(math.log2(norm1 / _EXPM_THETA13)))


def _expm_combine(coef, mats):
    """Σ coef[k] mats[k] for each row of coef (a scalar k-th entry of mats is that
    multiple of I)."""
    out = []
    for row in coef:
        acc = None
        for c, x in zip(row, mats):
            acc = c * x if acc is None else acc + c * x
        out.append(acc)
    return out


class _ExpmPade:
    """exp(A) for a stack sharing one (m, s), and what L(A, ·) reuses."""
    __slots__ = ("m", "s", "a", "pows", "w", "w1", "z1", "qinv", "r", "xs", "value")

    def __init__(self, a, m, s):
        self.m, self.s = m, s
        b = _EXPM_B[m]
        n = a.shape[-1]
        eye = _np.eye(n, dtype=a.dtype)
        q = 3 if m == 13 else (m - 1) // 2              # A², A⁴, ..., A^2q
        a = a * 2.0 ** -s
        pows = [a @ a]
        while len(pows) < q:
            pows.append(pows[-1] @ pows[0])
        if m == 13:
            a6 = pows[2]
            w1, z1 = _expm_combine([b[9:14:2], b[8:13:2]], pows)
            w2, z2 = _expm_combine([b[3:8:2], b[2:7:2]], pows)
            w = a6 @ w1 + (w2 + b[1] * eye)
            v = a6 @ z1 + (z2 + b[0] * eye)
            self.w1, self.z1 = w1, z1
        else:
            w, v = _expm_combine([b[3::2], b[2::2]], pows)
            w = w + b[1] * eye
            v = v + b[0] * eye
            self.w1 = self.z1 = None
        u = a @ w
        self.a, self.pows, self.w = a, pows, w
        # r_m(A) = Q⁻¹(V + U), Q = V − U, Q⁻¹ kept for L
        self.qinv = _np.linalg.inv(v - u)
        self.r = self.qinv @ (v + u)
        xs = [self.r]
        for _ in range(s):
            xs.append(xs[-1] @ xs[-1])
        self.value = xs.pop()
        self.xs = xs                                    # X_0 = r, X_k = X_{k−1}², k < s

    def frechet(self, e):
        """L(A, E) for a stack E of A's shape (Al-Mohy & Higham 2009, Alg. 6.4)."""
        m, a, pows = self.m, self.a, self.pows
        b = _EXPM_B[m]
        e = e * 2.0 ** -self.s
        a2 = pows[0]
        ms = [a @ e + e @ a]                            # M₂ = L(A², E)
        for k in range(1, len(pows)):                   # M_2k = A^(2k−2) M₂ + M_(2k−2) A²
            ms.append(pows[k - 1] @ ms[0] + ms[-1] @ a2)
        if m == 13:
            a6, m6 = pows[2], ms[2]
            lw1, lz1 = _expm_combine([b[9:14:2], b[8:13:2]], ms)
            lw2, lz2 = _expm_combine([b[3:8:2], b[2:7:2]], ms)
            lw = a6 @ lw1 + m6 @ self.w1 + lw2          # L_W = L(A⁶W₁ + W₂, E)
            lv = a6 @ lz1 + m6 @ self.z1 + lz2
        else:
            lw, lv = _expm_combine([b[3::2], b[2::2]], ms)
        lu_ = a @ lw + e @ self.w                       # L_U = L(A W, E)
        # L(r_m) = (V − U)⁻¹(L_U + L_V + (L_U − L_V) r_m)
        lx = self.qinv @ (lu_ + lv + (lu_ - lv) @ self.r)
        for x in self.xs:                               # X_(k+1) = X_k²
            lx = x @ lx + lx @ x
        return lx


def _expm_wide(x):
    return x.astype(_np.complex128 if x.dtype.kind == "c" else _np.float64, copy=False)


def expm_pade(a):
    """Twin of expm.expm_pade: (exp(a), (groups, par)) in float64/complex128."""
    a = _expm_wide(a)
    n = a.shape[-1]
    flat = a.reshape((int(_np.prod(a.shape[:-2])), n, n))
    if a.size == 0:                              # ‖·‖₁ of an empty matrix is 0: (3, 0)
        par = _np.tile(_np.array([3, 0], _np.int32), (flat.shape[0], 1))
        return _np.zeros(a.shape, a.dtype), ([], par)
    norms = _np.abs(flat).sum(axis=-2).max(axis=-1)
    par = _np.array([_expm_degree(float(v)) for v in norms], _np.int32).reshape(-1, 2)
    value = _np.full(flat.shape, _np.nan, a.dtype)
    groups = []
    for key in sorted(set(map(tuple, par.tolist()))):
        if key == (0, 0):
            continue
        idx = _np.flatnonzero((par == key).all(axis=1))
        p = _ExpmPade(flat[idx], *key)
        groups.append((idx, p))
        value[idx] = p.value
    return value.reshape(a.shape), (groups, par)


def expm_frechet(data, e, adjoint=False):
    """Twin of expm.expm_frechet: L(A, E), or L(Aᴴ, E) = L(A, Eᴴ)ᴴ with ``adjoint``."""
    groups, _ = data
    e = _expm_wide(e)
    if groups and groups[0][1].a.dtype != e.dtype:
        e = e.astype(groups[0][1].a.dtype)
    n = e.shape[-1]
    flat = e.reshape((int(_np.prod(e.shape[:-2])), n, n))
    if adjoint:
        flat = flat.swapaxes(-1, -2).conj()
    out = _np.full(flat.shape, _np.nan, e.dtype)
    for idx, p in groups:
        out[idx] = p.frechet(flat[idx])
    if adjoint:
        out = out.swapaxes(-1, -2).conj()
    return _np.ascontiguousarray(out).reshape(e.shape)


def pivot_parity(piv):
    """Twin of inverse.pivot_parity: 1 where an odd number of piv[..., i] != i, else 0."""
    piv = _np.asarray(piv)
    odd = _np.count_nonzero(piv != _np.arange(piv.shape[-1]), axis=-1).astype(_np.int64) & 1
    return int(odd) if piv.ndim == 1 else odd


def tiny_pivots(lu, rtol):
    """Twin of inverse.tiny_pivots: min |u_ii| <= rtol·max |u_ii| per matrix."""
    a = _np.abs(_np.diagonal(_np.asarray(lu), 0, -2, -1))
    if a.shape[-1] == 0:
        t = _np.zeros(a.shape[:-1], bool)      # no pivot is tiny (NumPy's min would fail)
    else:
        t = a.min(-1) <= rtol * a.max(-1)
    return bool(t) if t.ndim == 0 else t


def lu_det(a, rtol, log=False, check_finite=False):
    """Twin of inverse.lu_det: getrf, then det.py's NumPy formulas for the determinant or
    (sign, log|det|), and tiny_pivots; None for a non-finite entry with check_finite."""
    if check_finite and not _np.isfinite(_np.asarray(a)).all():
        return None
    lu, piv = getrf(a)
    diag = _np.diagonal(lu, 0, -2, -1)
    odd = _np.asarray(pivot_parity(piv), bool)
    tiny = tiny_pivots(lu, rtol)
    if not log:
        p = diag.prod(-1)
        return lu, piv, _np.where(odd, -p, p), tiny
    absd = _np.abs(diag)
    with _np.errstate(divide="ignore"):        # log 0 = -inf is the answer
        logabs = _np.log(absd).sum(-1)
    if lu.dtype.kind == "c":
        sign = (diag / _np.where(absd == 0, 1, absd)).prod(-1)   # 0 for a zero pivot
        sign = _np.where(odd, -sign, sign)
    else:                                      # (−1)^(interchanges + negative pivots)
        neg = odd + _np.count_nonzero(diag < 0, axis=-1)
        sign = _np.where(absd.all(-1), 1.0 - 2.0 * (neg & 1), 0.0).astype(lu.dtype)
    return lu, piv, sign, logabs, tiny
