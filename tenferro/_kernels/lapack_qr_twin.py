"""NumPy/SciPy twin of ``lapack_qr.pyx`` (the batched QR and least-squares drivers).

Same names, signatures, results and errors as the compiled drivers in lapack_qr.pyx
(whose docstrings are the reference), written with numpy.linalg / scipy.linalg one
matrix or one gufunc call at a time. ``tests/_kernels/test_lapack.py`` checks that both
agree; lapack_qr.pyx also calls these for 0-size inputs.
"""
from typing import Any, Literal

import numpy as _np
from numpy.typing import ArrayLike, NDArray

from .._errors import LinAlgError
from .lapack_base_twin import (_lapack_array, _lapack_check_finite, _lapack_flat,
                               _lapack_solve_operands, _lapack_where)

_Arr = NDArray[Any]

__all__ = ["qr", "gelsd", "lstsq_qr", "pinv_qr"]


def qr(a: _Arr,
       mode: Literal["reduced", "complete", "r"] = "reduced") -> tuple[_Arr, _Arr] | _Arr:
    """Twin of lapack_qr.qr: numpy.linalg.qr."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    r: Any = _np.linalg.qr(_lapack_array(a), mode=mode)   # (q, r), or r for mode "r"
    return r if mode == "r" else tuple(r)


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
    """Twin of lapack_qr.gelsd: scipy.linalg.lstsq(cond=rcond, lapack_driver="gelsd") per
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
    """Twin of lapack_qr.lstsq_qr: numpy.linalg.qr (of a, or of aᴴ when wide) and the
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
    """Twin of lapack_qr.pinv_qr: numpy.linalg.qr (of a, or of aᴴ when wide) per matrix whose
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
