"""Naming the matrix of a stack that an error is about (shared by the kernels, their
twins and the linalg ops; needs NumPy only, so importing a kernel never imports the
tensor layer)."""
from __future__ import annotations

import numpy as np

__all__ = ["batch_index"]


def batch_index(flat_index: int, batch_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The batch position (a tuple) of the ``flat_index``-th matrix of a stack."""
    if not batch_shape:
        return ()
    return tuple(int(i) for i in np.unravel_index(flat_index, batch_shape))
