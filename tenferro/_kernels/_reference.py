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
    F = _spectral_gap_inverse(s2[:, None, :] - s2[:, :, None], eps2[:, None, None])
    acc = np.zeros(out.shape, out.dtype)
    if X is not None:
        acc += (X - X.conj().transpose(0, 2, 1)) * s[:, None, :]
    if Y is not None:
        acc += s[:, :, None] * (Y - Y.conj().transpose(0, 2, 1))
    core = F * acc
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


def getrs(lu, piv, b, trans=0):
    """Twin of lapack.getrs: scipy.linalg.lu_solve per matrix."""
    if trans not in (0, 1, 2):
        raise ValueError(f"getrs: trans must be 0, 1 or 2, got {trans!r}")
    import scipy.linalg as sla
    lu, b, batch = _lapack_solve_operands(lu, b)
    n, nrhs = b.shape[-2:]
    nb = int(_np.prod(batch, dtype=_np.int64))
    lu = _np.broadcast_to(lu, batch + (n, n)).reshape((nb, n, n))
    piv = _np.broadcast_to(_np.asarray(piv), batch + (n,)).reshape((nb, n))
    fb = _np.broadcast_to(b, batch + (n, nrhs)).reshape((nb, n, nrhs))
    out = _np.zeros(fb.shape, b.dtype)
    if n and nrhs:
        for i in range(fb.shape[0]):
            out[i] = sla.lu_solve((lu[i], piv[i]), fb[i], trans=trans, check_finite=False)
    return out.reshape(batch + (n, nrhs))


def trtrs(a, b, lower=False, trans=0, unit_diagonal=False):
    """Twin of lapack.trtrs: scipy.linalg.solve_triangular per matrix."""
    if trans not in (0, 1, 2):
        raise ValueError(f"trtrs: trans must be 0, 1 or 2, got {trans!r}")
    import scipy.linalg as sla
    from .._errors import LinAlgError
    a, b, batch = _lapack_solve_operands(a, b)
    n, nrhs = b.shape[-2:]
    nb = int(_np.prod(batch, dtype=_np.int64))
    fa = _np.broadcast_to(a, batch + (n, n)).reshape((nb, n, n))
    fb = _np.broadcast_to(b, batch + (n, nrhs)).reshape((nb, n, nrhs))
    out = _np.zeros(fb.shape, b.dtype)
    if n and nrhs:
        for i in range(fa.shape[0]):
            try:
                out[i] = sla.solve_triangular(fa[i], fb[i], lower=lower, trans=trans,
                                              unit_diagonal=unit_diagonal,
                                              check_finite=False)
            except _np.linalg.LinAlgError as e:
                raise LinAlgError(f"{_lapack_where(i, batch)} is singular ({e})") from None
    return out.reshape(batch + (n, nrhs))


# =======================================================================================
# triangular twins: twin of triangular.pyx (the fused solve_triangular backprop)
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


def gelsd(a, b, rcond):
    """Twin of lapack.gelsd: scipy.linalg.lstsq(cond=rcond, lapack_driver="gelsd") per
    matrix -> (x, rank int64, s); 0-size stacks and k = 0 give correctly shaped results."""
    import scipy.linalg as sla
    from .._errors import LinAlgError
    a, b, batch = _lapack_solve_operands(a, b)
    if b.shape[-2] != a.shape[-2]:
        raise ValueError(f"gelsd: shapes {a.shape} and {b.shape} do not fit "
                         "(*batch, m, n) and (*batch, m, k)")
    m, n = a.shape[-2:]
    k = b.shape[-1]
    nb = int(_np.prod(batch, dtype=_np.int64))
    fa = _np.broadcast_to(a, batch + (m, n)).reshape((nb, m, n))
    fb = _np.broadcast_to(b, batch + (m, k)).reshape((nb, m, k))
    x = _np.zeros((nb, n, k), a.dtype)
    rank = _np.zeros(nb, _np.int64)
    s = _np.zeros((nb, min(m, n)), a.real.dtype)
    if m and n:
        _lapack_check_finite(fa.reshape(batch + (m, n)),
                             "SVD did not converge in least squares")
        for i in range(nb):
            rhs = fb[i] if k else _np.zeros((m, 1), a.dtype)   # LAPACK wants a column
            try:
                xi, _, rank[i], s[i] = sla.lstsq(fa[i], rhs, cond=rcond, check_finite=False,
                                                 lapack_driver="gelsd")
            except _np.linalg.LinAlgError as e:
                raise LinAlgError(f"SVD did not converge in least squares: "
                                  f"{_lapack_where(i, batch)} (gelsd: {e})") from None
            x[i] = xi[:, :k]
    return x.reshape(batch + (n, k)), rank.reshape(batch), s.reshape(batch + (min(m, n),))
