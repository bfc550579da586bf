"""np.linalg's decompositions with NumPy's signatures and result types (``SVDResult``,
``EighResult``, ...): svd, svdvals, eigh, eigvalsh, eig, eigvals, qr, cholesky, cond,
tensorinv, tensorsolve."""
import math
from typing import Any, Literal, Sequence

import numpy as np
from numpy.typing import ArrayLike
from numpy.lib.array_utils import normalize_axis_index

from .. import linalg
from .._errors import LinAlgError, ShapeError
from .._ops import elementwise, manipulation, sorting, structure
from .._tensor import Tensor
from .plumbing import _R, _arr, _fallback, _farr, _numpy_check, _numpy_version

# tf.linalg's own functions follow the array API (svd's full_matrices=False, lower-case
# result fields); NumPy's spellings get NumPy's defaults and result types. These always
# run tenferro's LAPACK path (plain=False), so plain and tracked calls agree exactly.

@_numpy_version(np.linalg.svd, plain=False)
def _svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
         hermitian: bool = False) -> Any:
    if hermitian:
        return _svd_hermitian(_arr(a), compute_uv)
    if not compute_uv:
        return linalg.svdvals(a)
    return _R.SVDResult(*linalg.svd(a, full_matrices=full_matrices))


def _svd_hermitian(a: Tensor, compute_uv: bool) -> Any:
    """NumPy's svd(hermitian=True): eigh, then |λ| sorted descending; U's columns are the
    eigenvectors and Vh = (U·sign(λ))ᴴ (NumPy's choice; sign(0) = 0 included)."""
    if not compute_uv:
        return sorting.sort(elementwise.abs(linalg.eigvalsh(a)), axis=-1, descending=True)
    w, v = linalg.eigh(a)
    sgn = np.sign(w._data)
    order = np.argsort(np.abs(w._data), axis=-1)[..., ::-1]
    s = manipulation.take_along_axis(elementwise.abs(w), order, axis=-1)
    u = manipulation.take_along_axis(v, order[..., None, :], axis=-1)
    sgn = np.take_along_axis(sgn, order, axis=-1)
    vh = elementwise.conj(structure.matrix_transpose(u * sgn[..., None, :]))
    return _R.SVDResult(u, s, vh)  # type: ignore[arg-type]  # tensors in NumPy's result type


@_numpy_version(np.linalg.svdvals, plain=False)
def _svdvals(x: ArrayLike, /) -> Tensor:
    return linalg.svdvals(x)


@_numpy_version(np.linalg.eigh, plain=False)
def _eigh(a: ArrayLike, UPLO: Literal["L", "U", "l", "u"] = "L") -> Any:
    return _R.EighResult(*linalg.eigh(a, UPLO))


@_numpy_version(np.linalg.eigvalsh, plain=False)
def _eigvalsh(a: ArrayLike, UPLO: Literal["L", "U", "l", "u"] = "L") -> Tensor:
    return linalg.eigvalsh(a, UPLO)


def _real_if_real(a: Tensor, w: Tensor, *more: Tensor) -> tuple[Tensor, ...]:
    """NumPy's eig/eigvals return real arrays for a real matrix whose eigenvalues are all
    real; tenferro's are complex: take the real parts then (differentiably)."""
    if a.dtype.kind != "c" and np.all(w._data.imag == 0):
        return (elementwise.real(w),) + tuple(elementwise.real(m) for m in more)
    return (w,) + more


@_numpy_version(np.linalg.eig, plain=False)
def _eig(a: ArrayLike) -> Any:
    a = _farr(a)
    return _R.EigResult(*_real_if_real(a, *linalg.eig(a)))  # type: ignore[arg-type]  # tensors


@_numpy_version(np.linalg.eigvals, plain=False)
def _eigvals(a: ArrayLike) -> Tensor:
    a = _farr(a)
    return _real_if_real(a, linalg.eigvals(a))[0]


@_numpy_version(np.linalg.qr, plain=False)
def _qr(a: ArrayLike, mode: Literal["reduced", "complete", "r", "raw"] = "reduced") -> Any:
    if mode == "reduced" or mode == "complete":      # (narrows mode for the checker)
        return _R.QRResult(*linalg.qr(a, mode=mode))
    if mode == "r":
        return linalg.qr(a, mode="r")
    return _fallback(np.linalg.qr, (a,), {"mode": mode})


@_numpy_version(np.linalg.cholesky, plain=False)
def _cholesky(a: ArrayLike, /, *, upper: bool = False) -> Tensor:
    return linalg.cholesky(a, upper=upper)


@_numpy_version(np.linalg.cond, plain=False)
def _cond(x: ArrayLike, p: float | Literal["fro", "nuc"] | None = None) -> Tensor:
    """NumPy's cond: s_max/s_min (p None/2), s_min/s_max (p = -2), else
    norm(x, p)·norm(inv(x), p); a singular matrix raises LinAlgError from inv for those p."""
    x = _farr(x)
    if x.ndim < 2 or x.shape[-1] == 0 or x.shape[-2] == 0:
        _numpy_check(np.linalg.cond, "an empty or 1-d input", x, p)
    if p is None or p == 2 or p == -2:
        s = linalg.svdvals(x)
        with np.errstate(all="ignore"):
            return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    return (linalg.norm(x, p, axis=(-2, -1))
            * linalg.norm(linalg.inv(x), p, axis=(-2, -1)))


@_numpy_version(np.linalg.tensorinv, plain=False)
def _tensorinv(a: ArrayLike, ind: int = 2) -> Tensor:
    a = _arr(a)
    if ind <= 0:
        raise ShapeError("Invalid ind argument.")
    inv_shape = a.shape[ind:] + a.shape[:ind]
    n = math.prod(a.shape[ind:])
    return structure.reshape(linalg.inv(structure.reshape(a, (n, -1))), inv_shape)


@_numpy_version(np.linalg.tensorsolve, plain=False)
def _tensorsolve(a: ArrayLike, b: ArrayLike, axes: Sequence[int] | None = None) -> Tensor:
    a, b = _arr(a), _arr(b)
    if axes is not None:
        rest = [k for k in range(a.ndim) if k not in [normalize_axis_index(x, a.ndim)
                                                      for x in axes]]
        a = structure.transpose(a, rest + [normalize_axis_index(x, a.ndim) for x in axes])
    old = a.shape[-(a.ndim - b.ndim):]
    n = math.prod(old)
    if a.size != n * n:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return structure.reshape(linalg.solve(structure.reshape(a, (n, n)), structure.ravel(b)), old)
