# Type stub of inverse.pyx (inverses and determinants from getrf's factors).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["lu_inverse", "pivot_parity", "tiny_pivots", "lu_det"]

def _set_block(nb: int, tb: int = ...) -> None: ...
def lu_inverse(lu: NDArray[Any], piv: NDArray[np.int32], scale: ArrayLike | None = ...,
               trans: int = ..., overwrite_lu: bool = ...) -> NDArray[np.inexact[Any]]: ...
def pivot_parity(piv: NDArray[np.int32]) -> int | NDArray[np.int64]: ...
def tiny_pivots(lu: NDArray[Any], rtol: float) -> bool | NDArray[np.bool_]: ...
# (lu, piv, det, tiny), or with log (lu, piv, sign, logabsdet, tiny); None when
# check_finite finds a NaN or Inf
def lu_det(a: NDArray[Any], rtol: float, log: bool = ...,
           check_finite: bool = ...) -> tuple[Any, ...] | None: ...

# _inverse on a chunk of a stack, for tenferro._threads.run_split: (OK or bad, 0)
def _inverse_part(lu3: NDArray[Any], piv2: NDArray[np.int32], sc: NDArray[Any] | None,
                  out: NDArray[Any], code: int, tr: int) -> tuple[int, int]: ...
