"""The twin of small_matmul.pyx: np.matmul itself (the kernel makes NumPy's BLAS call)."""
from typing import Any

import numpy as np

__all__ = ["matmul"]


def matmul(a: Any, b: Any) -> Any:
    """``np.matmul(a, b)`` as an ndarray (0-d for two vectors)."""
    return np.asarray(np.matmul(a, b))
