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

``python asv_bench/benchmarks/bench_lstsq.py`` prints the medians and ratios directly.
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads, medians
    from ._common import random_array as _array
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads, medians
    from _common import random_array as _array

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


class _Bench:
    params = [[4, 16, 64, 256], ["float64", "complex128"]]
    param_names = ["n", "dtype"]


class Lstsq(_Bench):
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


class Pinv(_Bench):
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
    print(f"{'bench':6} {'n':>4} {'dtype':10} {'scipy us':>9} {'tf fwd us':>9} "
          f"{'tf f+b us':>9} {'f+b/scipy':>9}")
    for cls in (Lstsq, Pinv):
        for dtype in _Bench.params[1]:
            for n in _Bench.params[0]:
                b = cls()
                b.setup(n, dtype)
                ts = [t * 1e6 for t in medians(
                    [lambda f=f: f(n, dtype) for f in (b.time_scipy_primal, b.time_tf_forward,
                                                       b.time_tf_forward_backward)])]
                print(f"{cls.__name__:6} {n:4d} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} "
                      f"{ts[2]:9.1f} {ts[2] / ts[0]:9.2f}")


if __name__ == "__main__":
    main()
