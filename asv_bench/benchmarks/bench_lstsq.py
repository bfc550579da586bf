"""tf.linalg.lstsq and tf.linalg.pinv: forward + backward against the SciPy primal, one thread.

  Lstsq   x, res, rank, s = lstsq(a, b), a (2n, n), b a vector (2n,); cotangents on x and
          on the residuals, gradients of a and b
  Pinv    x = pinv(a), a (2n, n); cotangent on x, gradient of a

at n = 4, 16 (per-call overhead), 64 and 256 (LAPACK-bound), float64 and complex128. The
floor is the SciPy primal with its default arguments (``scipy.linalg.lstsq(a, b)``, i.e.
gelsd, and ``scipy.linalg.pinv(a)``). lstsq's primal is a QR of A (geqrf, ormqr, trsm)
with the singular values of R for the rank and the singular_values output (gelsd only
for a rank-deficient matrix); its backward never re-solves nor refactors: at full column
rank K = (AᴴA)⁻¹ = R⁻¹R⁻ᴴ with the primal's R, and matmuls of O(mn). pinv at full rank
is R⁻¹Qᴴ from the same QR (an SVD otherwise). Targets: lstsq <= 1.2x at n = 16 and
<= 0.8x at n = 256; pinv (whose rule is six matmuls of X and A) <= 1.3x and <= 1.8x.

``python asv_bench/benchmarks/bench_lstsq.py`` prints the medians and ratios directly
(``--cpu``: with the process CPU clock).
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
import scipy.linalg as sla  # noqa: E402

import tenferro as tf  # noqa: E402

_array = common.random_array
common.limit_threads()  # NumPy may have been imported before this module: limit its pools


class Lstsq(common.SizeDtype):
    def setup(self, n, dtype):
        rng = np.random.default_rng(0)
        self.a = _array((2 * n, n), dtype, rng)
        self.b = _array((2 * n,), dtype, rng)
        self.gx = _array((n,), dtype, rng)
        self.gr = np.ones(1)
        self.leaves = [tf.tensor(self.a, requires_grad=True),
                       tf.tensor(self.b, requires_grad=True)]

    def time_scipy_primal(self, n, dtype):
        sla.lstsq(self.a, self.b)

    def time_tf_forward(self, n, dtype):
        tf.linalg.lstsq(self.a, self.b)

    def time_tf_forward_backward(self, n, dtype):
        x, res, _, _ = tf.linalg.lstsq(*self.leaves)
        tf.grad([x, res], self.leaves, [self.gx, self.gr])


class Pinv(common.SizeDtype):
    def setup(self, n, dtype):
        rng = np.random.default_rng(1)
        self.a = _array((2 * n, n), dtype, rng)
        self.g = _array((n, 2 * n), dtype, rng)
        self.leaf = tf.tensor(self.a, requires_grad=True)

    def time_scipy_primal(self, n, dtype):
        sla.pinv(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.pinv(self.a)

    def time_tf_forward_backward(self, n, dtype):
        x = tf.linalg.pinv(self.leaf)
        tf.grad([x], [self.leaf], [self.g])


def main():
    common.print_forward_backward_table((Lstsq, Pinv), timer=common.cpu_timer())


if __name__ == "__main__":
    main()
