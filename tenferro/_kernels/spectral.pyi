# Type stub of spectral.pyx (the SVD/eigh pullback cores, filled in place).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any

from numpy.typing import NDArray

_Arr = NDArray[Any]

# (worst, flat position b*k + i)
def phase_check(X: _Arr | None, Y: _Arr | None, GU: _Arr | None,
                GV: _Arr | None) -> tuple[float, int]: ...
def svd_core(X: _Arr | None, Y: _Arr | None, s: _Arr, sbar: _Arr | None, eps: float,
             rel: float, mode: int, out: _Arr, sinv: _Arr, drel: float = ...) -> None: ...
def eigh_core(X: _Arr, w: _Arr, wbar: _Arr | None, eps: float, rel: float,
              out: _Arr, drel: float = ...) -> None: ...

# the fused pullbacks: Ā written to out
def svd_backward(u: _Arr, s: _Arr, vt: _Arr, gu: _Arr | None, sbar: _Arr | None,
                 gvt: _Arr | None, eps: float, rel: float, out: _Arr,
                 drel: float = ...) -> None: ...
def eigh_backward(v: _Arr, w: _Arr, gv: _Arr, wbar: _Arr | None, eps: float, rel: float,
                  out: _Arr, drel: float = ...) -> None: ...


