"""Batched linear algebra split over threads (tenferro._threads): a stack of 1000 8 x 8
float64 matrices through svd and eigh (forward + backward) and cholesky, solve and qr
(forward + backward), with tf.set_num_threads(1) and (2), OpenBLAS on one thread.

On a 2-core machine the 2-thread time is ~0.5-0.6x the 1-thread time for every one of
them (the stacks run on tenferro's native worker threads; the LAPACK-bound kernels and
the plain-loop Cholesky, LU and QR kernels of these small matrices all split);
forward + backward gains a little less (the NumPy work of the backward rules stays on
one thread). ``python scripts/bench_threads.py`` prints the full table with speedups
(also 100 x 32 x 32 and each kernel alone).
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from . import _common as common
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as common

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402

common.limit_threads()  # NumPy may have been imported before this module: limit its pools


class BatchedSmall:
    params = [["svd", "eigh", "cholesky", "solve", "qr"], [1, 2]]
    param_names = ["op", "threads"]

    def setup(self, op, threads):
        rng = np.random.default_rng(0)
        nb, n = 1000, 8
        a = rng.standard_normal((nb, n, n))
        if op in ("eigh", "cholesky"):
            a = a @ a.transpose(0, 2, 1) / n + np.eye(n)
        self.a = a
        self.leaf = tf.tensor(a, requires_grad=True)
        self.rhs = rng.standard_normal((nb, n, 2))
        self.f = {
            "svd": lambda x: tf.linalg.svd(x, full_matrices=False),
            "eigh": tf.linalg.eigh,
            "cholesky": lambda x: (tf.linalg.cholesky(x),),
            "solve": lambda x: (tf.linalg.solve(x, self.rhs),),
            "qr": tf.linalg.qr,
        }[op]
        self.gs = [rng.standard_normal(o.shape) for o in self.f(self.a)]
        self.old = tf.get_num_threads()
        tf.set_num_threads(threads)

    def teardown(self, op, threads):
        tf.set_num_threads(self.old)

    def time_forward(self, op, threads):
        self.f(self.a)

    def time_forward_backward(self, op, threads):
        tf.grad(list(self.f(self.leaf)), [self.leaf], self.gs)
