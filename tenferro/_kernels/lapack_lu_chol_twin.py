"""NumPy/SciPy twin of ``lapack_lu_chol.pyx`` (the batched LU and Cholesky drivers and
the solves with their factors).

Same names, signatures, results and errors as the compiled drivers in lapack_lu_chol.pyx
(whose docstrings are the reference), written with scipy.linalg one matrix at a time.
``tests/_kernels/test_lapack.py`` checks that both agree; lapack_lu_chol.pyx also calls
these for 0-size inputs.
"""
import warnings as _warnings
from typing import Any

import numpy as _np
from numpy.typing import NDArray

from .._errors import LinAlgError
from .lapack_base_twin import (_lapack_array, _lapack_flat, _lapack_solve_operands,
                               _lapack_where)

_Arr = NDArray[Any]

__all__ = ["getrf", "lu", "potrf", "getrs", "trtrs"]


def getrf(a: _Arr, return_info: bool = False) -> tuple[_Arr, NDArray[_np.int32]] | tuple[
        _Arr, NDArray[_np.int32], NDArray[Any]]:
    """Twin of lapack_lu_chol.getrf: scipy.linalg.lu_factor per matrix."""
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
    """Twin of lapack_lu_chol.lu: scipy.linalg.lu per matrix (p of a's real dtype; perm from p)."""
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
    """Twin of lapack_lu_chol.potrf: scipy.linalg.cholesky per matrix."""
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
    """Twin of lapack_lu_chol.getrs: scipy.linalg.lu_solve per matrix (and −x outerᴴ)."""
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
    """Twin of lapack_lu_chol.trtrs: scipy.linalg.solve_triangular per matrix."""
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
