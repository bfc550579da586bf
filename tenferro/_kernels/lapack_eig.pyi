# Type stub of lapack_eig.pyx (batched eigenvalue and singular value drivers on ndarrays).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any

from numpy.typing import NDArray

__all__ = ["svd", "eigh", "eig"]

_Arr = NDArray[Any]

def _testing_force_gesvd(on: bool) -> None: ...
# (u, s, vt), or s alone when compute_uv is False
def svd(a: _Arr, full_matrices: bool = ...,
        compute_uv: bool = ...) -> tuple[_Arr, _Arr, _Arr] | _Arr: ...
# (w, v), or w alone when compute_v is False
def eigh(a: _Arr, lower: bool = ..., compute_v: bool = ...) -> tuple[_Arr, _Arr] | _Arr: ...
def eig(a: _Arr, compute_v: bool = ...) -> tuple[_Arr, _Arr] | _Arr: ...
