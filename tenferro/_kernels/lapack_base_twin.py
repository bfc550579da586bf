"""NumPy twin of ``lapack_base.pyx``: ``all_finite``, and the helpers that the twins of
the LAPACK driver modules (lapack_eig_twin.py, lapack_qr_twin.py, lapack_lu_chol_twin.py)
share, as lapack_base.pyx's are shared by the compiled drivers.
``tests/_kernels/test_all_finite.py`` checks that both agree.
"""
from typing import Any

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
    triangle for eigh), naming it, like the compiled drivers."""
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


def _lapack_solve_operands(a: _Arr, b: _Arr) -> tuple[_Arr, _Arr, tuple[int, ...]]:
    a = _lapack_array(a)
    b = _lapack_array(b)
    dt = _np.result_type(a.dtype, b.dtype)
    batch = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return a.astype(dt, copy=False), b.astype(dt, copy=False), batch
