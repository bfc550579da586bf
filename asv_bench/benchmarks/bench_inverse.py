"""tf.linalg.inv forward + backward against the SciPy primal, and the LU inverse kernel
(tenferro/_kernels/inverse.pyx) that inv's primal and the det/slogdet pullbacks use.

  Inv        y = inv(a); cotangent on y, then tf.grad        (floor: scipy.linalg.inv)
  LUInverse  A⁻ᴴ from getrf's factors (what det's backward needs): the kernel
             (U⁻¹L⁻¹Pᵀ on gemm/trmm-rich recursive blocks, 4n³/3 flops) against getrs
             on an identity (2n³ flops of trsm) and LAPACK's getri (4n³/3, half in trsm)

at n = 4, 16, 64 and 256, float64 and complex128, one thread. Target for inv (forward +
backward ÷ primal): <= 2.5x at n = 16 and 256. The backward is −YᴴȲYᴴ (two gemm), and
the primal getrf + kernel is cheaper than SciPy's getrf + getri, so inv runs at ~1.1-1.7x.
Measured with OpenBLAS 0.3.31, one thread, loaded machine (medians, µs):

    A⁻ᴴ        n = 16: kernel  getrs(I)  getri     n = 256: kernel  getrs(I)  getri
    float64            5.1     8.9       3.4                481     1608      1164
    complex128         7.0     12.2      3.9                1763    3167      3938

``python asv_bench/benchmarks/bench_inverse.py`` prints the medians and ratios directly.
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads, medians
    from ._common import random_array as _random
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads, medians
    from _common import random_array as _random

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402
import scipy.linalg.lapack as sll  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro._kernels import inverse as _inverse  # noqa: E402
from tenferro.linalg import _lapack  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools

PARAMS = [[4, 16, 64, 256], ["float64", "complex128"]]


class Inv:
    params = PARAMS
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        rng = np.random.default_rng(0)
        self.a = _random((n, n), dtype, rng) + 3 * np.eye(n)
        self.leaf = tf.tensor(self.a, requires_grad=True)
        self.g = _random((n, n), dtype, np.random.default_rng(1))

    def time_scipy_primal(self, n, dtype):
        sla.inv(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.inv(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.inv(self.leaf)], [self.leaf], [self.g])


class LUInverse:
    params = PARAMS
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        a = _random((n, n), dtype, np.random.default_rng(2)) + 3 * np.eye(n)
        self.lu, self.piv = _lapack.getrf(a)
        self.eye = np.eye(n, dtype=dtype)
        self.luf = np.array(self.lu, order="F")
        self.getri = sll.zgetri if dtype == "complex128" else sll.dgetri

    def time_kernel(self, n, dtype):
        _inverse.lu_inverse(self.lu, self.piv, None, 2)

    def time_getrs_identity(self, n, dtype):
        _lapack.getrs(self.lu, self.piv, self.eye, 2)

    def time_getri(self, n, dtype):
        self.getri(self.luf, self.piv)     # SciPy's wrapper takes 0-based pivots


def _microseconds(cls, names):
    """(n, dtype, medians in µs of the methods ``names``) of benchmark ``cls`` per case."""
    for dtype in PARAMS[1]:
        for n in PARAMS[0]:
            b = cls()
            b.setup(n, dtype)
            fns = [lambda f=getattr(b, name): f(n, dtype) for name in names]
            yield n, dtype, [t * 1e6 for t in medians(fns)]


def main():
    print(f"{'bench':9} {'n':>4} {'dtype':10} {'scipy us':>9} {'tf fwd us':>9} "
          f"{'tf f+b us':>9} {'f+b/scipy':>9}")
    for n, dtype, ts in _microseconds(
            Inv, ("time_scipy_primal", "time_tf_forward", "time_tf_forward_backward")):
        print(f"{'Inv':9} {n:4d} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} "
              f"{ts[2] / ts[0]:9.2f}", flush=True)
    print(f"\n{'A⁻ᴴ':9} {'n':>4} {'dtype':10} {'kernel':>9} {'getrs(I)':>9} {'getri':>9}")
    for n, dtype, ts in _microseconds(
            LUInverse, ("time_kernel", "time_getrs_identity", "time_getri")):
        print(f"{'':9} {n:4d} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f}",
              flush=True)


if __name__ == "__main__":
    main()
