"""NumPy twin of ``inverse.pyx`` (the LU inverse and the determinant helpers; same
names, signatures and results).

``tests/_kernels/test_inverse.py`` checks that both agree.
"""

from typing import Any

import numpy as _np
from numpy.typing import ArrayLike, NDArray

from .lapack_base_twin import _lapack_array
from .lapack_lu_chol_twin import getrf


def lu_inverse(lu: NDArray[Any], piv: NDArray[_np.int32], scale: ArrayLike | None = None,
               trans: int = 0, overwrite_lu: bool = False) -> NDArray[_np.inexact[Any]]:
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
    flat: NDArray[Any] = lu.reshape((nb, n, n))  # (NumPy 2.4 stubs: shape ())
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


def pivot_parity(piv: NDArray[_np.int32]) -> int | NDArray[_np.int64]:
    """Twin of inverse.pivot_parity: 1 where an odd number of piv[..., i] != i, else 0."""
    piv = _np.asarray(piv)
    odd = _np.count_nonzero(piv != _np.arange(piv.shape[-1]), axis=-1).astype(_np.int64) & 1
    return int(odd) if piv.ndim == 1 else odd


def pivot_perm(piv: NDArray[_np.int32]) -> NDArray[_np.intp]:
    """Twin of inverse.pivot_perm: the interchanges applied in turn to 0..n-1."""
    piv = _np.asarray(piv)
    n = piv.shape[-1]
    if piv.size and (piv.min() < 0 or piv.max() >= n):
        raise ValueError(f"pivot_perm: pivots must be row indices 0..{n - 1}")
    flat = piv.reshape(-1, n)
    out = _np.broadcast_to(_np.arange(n, dtype=_np.intp), flat.shape).copy()
    rows = _np.arange(flat.shape[0])
    for i in range(n):
        j = flat[:, i]
        out[rows, i], out[rows, j] = out[rows, j], out[rows, i].copy()
    perm: NDArray[_np.intp] = out.reshape(piv.shape)
    return perm


def tiny_pivots(lu: NDArray[Any], rtol: float) -> bool | NDArray[_np.bool_]:
    """Twin of inverse.tiny_pivots: min |u_ii| <= rtol·max |u_ii| per matrix."""
    a = _np.abs(_np.diagonal(_np.asarray(lu), 0, -2, -1))
    if a.shape[-1] == 0:
        t = _np.zeros(a.shape[:-1], bool)      # no pivot is tiny (NumPy's min would fail)
    else:
        t = a.min(-1) <= rtol * a.max(-1)
    return bool(t) if t.ndim == 0 else t


def lu_det(a: NDArray[Any], rtol: float, log: bool = False,
           check_finite: bool = False) -> tuple[Any, ...] | None:
    """Twin of inverse.lu_det: getrf, then det.py's NumPy formulas for the determinant or
    (sign, log|det|), and tiny_pivots; None for a non-finite entry with check_finite."""
    if check_finite and not _np.isfinite(_np.asarray(a)).all():
        return None
    lu, piv = getrf(a)  # type: ignore[misc]  # (without return_info: 2 values)
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
