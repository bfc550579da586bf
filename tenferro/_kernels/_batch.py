"""Naming the matrix of a stack that an error is about (shared by the kernels, their
twins and the linalg ops; needs NumPy only, so importing a kernel never imports the
tensor layer)."""
import numpy as np

__all__ = ["batch_index"]


def batch_index(flat_index, batch_shape):
    """The batch position (a tuple) of the ``flat_index``-th matrix of a stack."""
    if not batch_shape:
        return ()
    return tuple(int(i) for i in np.unravel_index(flat_index, batch_shape))
