"""tf.einsum: forward and forward + backward against the NumPy primal, on one thread.

  Matmul   einsum("ij,jk->ik", a, b)
  Chain    einsum("ij,jk,kl->il", a, b, c) (the greedy path contracts two at a time)

at n = 4 (per-call overhead), 64 and 256 (BLAS-bound). The floor is the NumPy primal
``np.einsum(subscripts, *ops, optimize=path)`` with the path ``np.einsum_path`` picks,
which is what tenferro runs too; the backward pass costs two more contractions per step,
so forward + backward is expected near 3x the primal at large n. ``numpy_forward_backward``
is the hand-written NumPy twin (matmuls along the same path, gradients by hand): the floor
for forward + backward.
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


class _EinsumBench:
    """Shared setup: operands of size n x n, a cotangent, NumPy's path."""
    params = [4, 64, 256]
    param_names = ["n"]
    subscripts = None
    n_operands = 0

    def setup(self, n):
        rng = np.random.default_rng(0)
        self.arrays = [rng.standard_normal((n, n)) for _ in range(self.n_operands)]
        self.cot = rng.standard_normal((n, n))
        self.path = np.einsum_path(self.subscripts, *self.arrays, optimize="greedy")[0]
        self.tensors = [tf.tensor(a) for a in self.arrays]
        self.leaves = [tf.tensor(a, requires_grad=True) for a in self.arrays]
        tf.einsum(self.subscripts, *self.tensors)   # plan once (cached per shapes)

    def time_numpy_primal(self, n):
        np.einsum(self.subscripts, *self.arrays, optimize=self.path)

    def time_numpy_forward_backward(self, n):
        self.numpy_forward_backward(*self.arrays, self.cot)

    def time_tf_forward(self, n):
        tf.einsum(self.subscripts, *self.tensors)

    def time_tf_forward_backward(self, n):
        y = tf.einsum(self.subscripts, *self.leaves)
        tf.grad([y], self.leaves, [self.cot])


class Matmul(_EinsumBench):
    subscripts = "ij,jk->ik"
    n_operands = 2

    @staticmethod
    def numpy_forward_backward(a, b, g):
        y = a @ b
        return y, g @ b.T, a.T @ g


class Chain(_EinsumBench):
    subscripts = "ij,jk,kl->il"
    n_operands = 3

    @staticmethod
    def numpy_forward_backward(a, b, c, g):
        # the greedy path for square operands: (a b) first, then with c
        t = a @ b
        y = t @ c
        gt = g @ c.T
        return y, gt @ b.T, a.T @ gt, t.T @ g
