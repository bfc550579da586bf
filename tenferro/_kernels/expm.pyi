# Type stub of expm.pyx (the compiled Padé matrix exponential and its Fréchet derivative).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["expm_pade", "expm_frechet"]

# (saved, par): what expm_frechet reuses; par is (nb, 2) int32 (m, s) per matrix
ExpmData = tuple[Any, NDArray[np.int32]]

def expm_pade(a: NDArray[Any]) -> tuple[NDArray[np.inexact[Any]], ExpmData]: ...
def expm_frechet(data: ExpmData, e: NDArray[Any],
                 adjoint: bool = ...) -> NDArray[np.inexact[Any]]: ...
