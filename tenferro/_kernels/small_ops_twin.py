"""The twin of small_ops.pyx: NumPy itself (the kernels make NumPy's BLAS call and its
elementwise operations without its dispatch)."""
from typing import Any

import numpy as np

__all__ = ["matmul", "add", "subtract", "negative", "scaled"]


def matmul(a: Any, b: Any) -> Any:
    """``np.matmul(a, b)`` as an ndarray (0-d for two vectors)."""
    return np.asarray(np.matmul(a, b))


def add(a: Any, b: Any) -> Any:
    """``a + b`` as an ndarray."""
    return np.asarray(np.add(a, b))


def subtract(a: Any, b: Any) -> Any:
    """``a - b`` as an ndarray."""
    return np.asarray(np.subtract(a, b))


def negative(g: Any) -> Any:
    """``-g`` as an ndarray."""
    return np.asarray(np.negative(g))


def scaled(g: Any, c: Any) -> Any:
    """``g * c`` as an ndarray."""
    return np.asarray(np.multiply(g, c))
