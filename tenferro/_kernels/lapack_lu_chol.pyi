# Type stub of lapack_lu_chol.pyx (batched LU and Cholesky drivers and the solves with
# their factors, on ndarrays).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

__all__ = ["getrf", "lu", "potrf", "getrs", "trtrs"]

_Arr = NDArray[Any]

# (lu, piv), or with return_info (lu, piv, info)
def getrf(a: _Arr, return_info: bool = ...) -> tuple[_Arr, NDArray[np.int32]] | tuple[
    _Arr, NDArray[np.int32], NDArray[Any]]: ...
def lu(a: _Arr, return_perm: bool = ...) -> tuple[_Arr, ...]: ...
def potrf(a: _Arr, lower: bool = ...) -> _Arr: ...
@overload
def getrs(lu: _Arr, piv: NDArray[np.int32], b: _Arr, trans: int = ...,
          outer: None = ...) -> _Arr: ...
@overload
def getrs(lu: _Arr, piv: NDArray[np.int32], b: _Arr, trans: int,
          outer: _Arr) -> tuple[_Arr, _Arr]: ...
def trtrs(a: _Arr, b: _Arr, lower: bool = ..., trans: int = ...,
          unit_diagonal: bool = ...) -> _Arr: ...

def _set_small(n: int) -> int: ...
