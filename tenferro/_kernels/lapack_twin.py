"""NumPy/SciPy twin of ``lapack.pyx`` (the batched LAPACK drivers).

Same names, signatures, results and errors as the compiled drivers in lapack.pyx (whose
docstrings are the reference), written with numpy.linalg / scipy.linalg one matrix or
one gufunc call at a time. ``tests/_kernels/test_lapack.py`` checks that both agree;
lapack.pyx also calls these for 0-size inputs.
"""

import warnings as _warnings
from typing import Any, Literal

import numpy as _np
from numpy.typing import ArrayLike, NDArray

from .._errors import DTypeError, LinAlgError
from ._batch import batch_index

_Arr = NDArray[Any]


def all_finite(a: Any) -> bool:
    """``bool(numpy.isfinite(a).all())`` for an ndarray ``a`` (True when empty)."""
    return bool(_np.isfinite(a).all())


def _lapack_array(a: ArrayLike) -> _Arr:
    a = _np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_np.float64)
    if a.dtype.char not in "fdFD":
        raise DTypeError(f"LAPACK needs float32, float64, complex64 or complex128 input, "
                         f"got {a.dtype}; convert with .astype(np.float64) first")
    return a


def _lapack_where(k: int, batch: tuple[int, ...]) -> str:
    if not batch:
        return "the matrix"
    return f"matrix {batch_index(k, batch)} of the stack"


def _lapack_flat(a: _Arr) -> tuple[_Arr, tuple[int, ...]]:
    batch = a.shape[:-2]
    nb = int(_np.prod(batch, dtype=_np.int64))
    return a.reshape((nb,) + a.shape[-2:]), batch


def _lapack_check_finite(a: _Arr, what: str, tri: str | None = None) -> None:
    """The iterative drivers reject a matrix with a NaN/Inf entry (in its referenced
    triangle for eigh), naming it, like lapack.pyx."""
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


def svd(a: _Arr, full_matrices: bool = False,
        compute_uv: bool = True) -> tuple[_Arr, _Arr, _Arr] | _Arr:
    """Twin of lapack.svd: numpy.linalg.svd."""
    a = _lapack_array(a)
    _lapack_check_finite(a, "SVD did not converge")
    try:
        # (NumPy's overloads want compute_uv as a Literal; r is (u, s, vh) or s)
        r: Any = _np.linalg.svd(a, full_matrices=full_matrices,  # type: ignore[call-overload]
                                compute_uv=compute_uv)
    except _np.linalg.LinAlgError as e:
        raise LinAlgError(f"SVD did not converge: {e}") from None
    return tuple(r) if compute_uv else r


def eigh(a: _Arr, lower: bool = True,
         compute_v: bool = True) -> tuple[_Arr, _Arr] | _Arr:
    """Twin of lapack.eigh: numpy.linalg.eigh / eigvalsh."""
    a = _lapack_array(a)
    _lapack_check_finite(a, "eigh did not converge", "lower" if lower else "upper")
    uplo: Literal["L", "U"] = "L" if lower else "U"
    try:
        if compute_v:
            w_, v = _np.linalg.eigh(a, UPLO=uplo)
            return w_, v
        w: _Arr = _np.linalg.eigvalsh(a, UPLO=uplo)
        return w
    except _np.linalg.LinAlgError as e:
        raise LinAlgError(f"eigh did not converge: {e}") from None


def qr(a: _Arr,
       mode: Literal["reduced", "complete", "r"] = "reduced") -> tuple[_Arr, _Arr] | _Arr:
    """Twin of lapack.qr: numpy.linalg.qr."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    r: Any = _np.linalg.qr(_lapack_array(a), mode=mode)   # (q, r), or r for mode "r"
    return r if mode == "r" else tuple(r)


def getrf(a: _Arr, return_info: bool = False) -> tuple[_Arr, NDArray[_np.int32]] | tuple[
        _Arr, NDArray[_np.int32], NDArray[Any]]:
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


def lu(a: _Arr, return_perm: bool = False) -> tuple[_Arr, ...]:
    """Twin of lapack.lu: scipy.linalg.lu per matrix (p of a's real dtype; perm from p)."""
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
    p = p.reshape(batch + (m, m))
    if return_perm:
        return (p, l_.reshape(batch + (m, k)), u.reshape(batch + (k, n)),
                _np.argmax(p, axis=-2).astype(_np.intp))
    return p, l_.reshape(batch + (m, k)), u.reshape(batch + (k, n))


def potrf(a: _Arr, lower: bool = True) -> _Arr:
    """Twin of lapack.potrf: scipy.linalg.cholesky per matrix."""
    import scipy.linalg as sla
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


def eig(a: _Arr, compute_v: bool = True) -> tuple[_Arr, _Arr] | _Arr:
    """Twin of lapack.eig: numpy.linalg.eig / eigvals, always complex."""
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


def _lapack_solve_operands(a: _Arr, b: _Arr) -> tuple[_Arr, _Arr, tuple[int, ...]]:
    a = _lapack_array(a)
    b = _lapack_array(b)
    dt = _np.result_type(a.dtype, b.dtype)
    batch = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return a.astype(dt, copy=False), b.astype(dt, copy=False), batch


def _lapack_solve_stacks(name: str, a: _Arr, b: _Arr,
                         trans: int) -> tuple[_Arr, _Arr, tuple[int, ...], _Arr]:
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


def getrs(lu: _Arr, piv: NDArray[_np.int32], b: _Arr, trans: int = 0,
          outer: _Arr | None = None) -> Any:
    """Twin of lapack.getrs: scipy.linalg.lu_solve per matrix (and −x outerᴴ)."""
    import scipy.linalg as sla
    lu, fb, batch, out = _lapack_solve_stacks("getrs", lu, b, trans)
    nb, n, nrhs = fb.shape
    piv = _np.broadcast_to(_np.asarray(piv), batch + (n,)).reshape((nb, n))
    if n and nrhs:
        for i in range(nb):
            out[i] = sla.lu_solve((lu[i], piv[i]), fb[i], trans=trans, check_finite=False)
    x = out.reshape(batch + (n, nrhs))
    if outer is None:
        return x
    return x, -(x @ _np.conj(_np.swapaxes(outer, -1, -2)))


def trtrs(a: _Arr, b: _Arr, lower: bool = False, trans: int = 0,
          unit_diagonal: bool = False) -> _Arr:
    """Twin of lapack.trtrs: scipy.linalg.solve_triangular per matrix."""
    import scipy.linalg as sla
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


def _lapack_lstsq_stacks(name: str, a: _Arr,
                         b: _Arr) -> tuple[_Arr, _Arr, tuple[int, ...]]:
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


def gelsd(a: _Arr, b: _Arr, rcond: float) -> tuple[_Arr, NDArray[_np.int64], _Arr]:
    """Twin of lapack.gelsd: scipy.linalg.lstsq(cond=rcond, lapack_driver="gelsd") per
    matrix -> (x, rank int64, s); 0-size stacks and k = 0 give correctly shaped results."""
    import scipy.linalg as sla
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


def lstsq_qr(a: _Arr, b: _Arr, rcond: float) -> tuple[_Arr, NDArray[_np.int64], _Arr, _Arr,
                                                      _Arr]:
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


def pinv_qr(a: _Arr, rtol: ArrayLike) -> tuple[_Arr, NDArray[_np.bool_]]:
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
