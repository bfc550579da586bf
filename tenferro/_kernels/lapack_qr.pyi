# Type stub of lapack_qr.pyx (batched QR and least-squares drivers on ndarrays).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["qr", "gelsd", "lstsq_qr", "pinv_qr"]

_Arr = NDArray[Any]

# (q, r), or r alone for mode "r"
def qr(a: _Arr, mode: Literal["reduced", "complete", "r"] = ...) -> tuple[_Arr, _Arr] | _Arr: ...
# (x, rank, s)
def gelsd(a: _Arr, b: _Arr, rcond: float) -> tuple[_Arr, NDArray[np.int64], _Arr]: ...
# (x, rank, s, res, r)
def lstsq_qr(a: _Arr, b: _Arr, rcond: float) -> tuple[_Arr, NDArray[np.int64], _Arr, _Arr,
                                                       _Arr]: ...
# (x, full)
def pinv_qr(a: _Arr, rtol: ArrayLike) -> tuple[_Arr, NDArray[np.bool_]]: ...
