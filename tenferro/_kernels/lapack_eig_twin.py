"""NumPy twin of ``lapack_eig.pyx`` (the batched eigenvalue and singular value drivers).

Same names, signatures, results and errors as the compiled drivers in lapack_eig.pyx
(whose docstrings are the reference), written with numpy.linalg one gufunc call at a
time. ``tests/_kernels/test_lapack.py`` checks that both agree; lapack_eig.pyx also calls
these for 0-size inputs.
"""
from typing import Any, Literal

import numpy as _np
from numpy.typing import NDArray

from .._errors import LinAlgError
from .lapack_base_twin import _lapack_array, _lapack_check_finite

_Arr = NDArray[Any]

__all__ = ["svd", "eigh", "eig"]


def svd(a: _Arr, full_matrices: bool = False,
        compute_uv: bool = True) -> tuple[_Arr, _Arr, _Arr] | _Arr:
    """Twin of lapack_eig.svd: numpy.linalg.svd."""
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
    """Twin of lapack_eig.eigh: numpy.linalg.eigh / eigvalsh."""
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


def eig(a: _Arr, compute_v: bool = True) -> tuple[_Arr, _Arr] | _Arr:
    """Twin of lapack_eig.eig: numpy.linalg.eig / eigvals, always complex."""
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
