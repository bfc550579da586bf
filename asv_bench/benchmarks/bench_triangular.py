"""tf.linalg.solve_triangular: forward + backward against the SciPy primal, one thread,
and the fused backprop kernel (tenferro/_kernels/triangular_backprop.pyx) against its NumPy
twin.

  SolveTriangular  x = solve_triangular(a, b, lower=True) with a (n, n), b (n, n);
                   cotangent on x, then tf.grad for a and b
  Backprop         the kernel alone (G = a⁻ᴴx̄ and Ā = tril(−G xᴴ)) vs the twin in
                   triangular_backprop_twin.py (SciPy solve + matmul + tril)
  Solve            the recursive batched solve (triangular_backprop.trsm: flops in ?gemm,
                   leaves through inverted 16x16 blocks) vs one ?trsm call
                   (lapack_lu_chol.trtrs), for
                   op(a)x = b and x op(a) = b

at n = 4, 16 (per-call overhead), 64 and 256 (BLAS-bound), float64 and complex128.
The floor is ``scipy.linalg.solve_triangular(a, b, lower=True)`` with its default
arguments. Targets for forward + backward ÷ primal: <= 2.5x at n = 16, <= 3.5x at
n = 256. The backward is one trsm (n²k) plus a gemm restricted to the triangle (~n²k/2)
against the primal's one trsm, so ~2.5x is the flop floor at large n.

``python asv_bench/benchmarks/bench_triangular.py`` prints the medians and ratios
(functions timed alternately, so machine load hits them alike; ``--cpu`` times with the
process CPU clock).
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
from tenferro._kernels import lapack_lu_chol as _lapack  # noqa: E402
from tenferro._kernels import triangular_backprop as _kernel  # noqa: E402
from tenferro._kernels import triangular_backprop_twin as _reference  # noqa: E402

_random = common.random_array
common.limit_threads()  # NumPy may have been imported before this module: limit its pools


class _Bench(common.SizeDtype):
    def setup(self, n, dtype):
        rng = np.random.default_rng(0)
        self.a = np.tril(_random((n, n), dtype, rng)) + 3 * np.sqrt(n) * np.eye(n)
        self.b = _random((n, n), dtype, rng)
        self.g = _random((n, n), dtype, rng)
        self.x = sla.solve_triangular(self.a, self.b, lower=True)
        self.leaf_a = tf.tensor(self.a, requires_grad=True)
        self.leaf_b = tf.tensor(self.b, requires_grad=True)


class SolveTriangular(_Bench):
    def time_scipy_primal(self, n, dtype):
        sla.solve_triangular(self.a, self.b, lower=True)

    def time_tf_forward(self, n, dtype):
        tf.linalg.solve_triangular(self.a, self.b, lower=True)

    def time_tf_forward_backward(self, n, dtype):
        x = tf.linalg.solve_triangular(self.leaf_a, self.leaf_b, lower=True)
        tf.grad([x], [self.leaf_a, self.leaf_b], [self.g])


class Backprop(_Bench):
    def time_kernel(self, n, dtype):
        _kernel.solve_triangular_backprop(self.a, self.x, self.g, True, 0, False, True)

    def time_twin(self, n, dtype):
        _reference.solve_triangular_backprop(self.a, self.x, self.g, True, 0, False, True)


class Solve(_Bench):
    def time_recursive_left(self, n, dtype):
        _kernel.trsm(self.a, self.b, True, 0, False, True)

    def time_recursive_right(self, n, dtype):
        _kernel.trsm(self.a, self.b, True, 0, False, False)

    def time_trsm_left(self, n, dtype):
        _lapack.trtrs(self.a, self.b, lower=True)

    def time_trsm_right(self, n, dtype):   # x a = b  <=>  aᵀ xᵀ = bᵀ
        _lapack.trtrs(self.a, self.b.T, lower=True, trans=1)


def main():
    print(f"{'n':>4} {'dtype':10} {'scipy us':>9} {'tf fwd us':>9} {'tf f+b us':>9} "
          f"{'f+b/scipy':>9} {'kernel us':>9} {'twin us':>9} {'twin/kern':>9} "
          f"{'trsm/rec L':>10} {'trsm/rec R':>10}")
    timer = common.cpu_timer()
    for dtype in common.DTYPES:
        for n in common.SIZES:
            s, k, v = (common.setup_bench(cls, n, dtype)
                       for cls in (SolveTriangular, Backprop, Solve))
            ts = common.medians_us(
                [s.time_scipy_primal, s.time_tf_forward, s.time_tf_forward_backward,
                 k.time_kernel, k.time_twin, v.time_recursive_left, v.time_trsm_left,
                 v.time_recursive_right, v.time_trsm_right], (n, dtype), timer=timer)
            print(f"{n:4d} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} "
                  f"{ts[2] / ts[0]:9.2f} {ts[3]:9.1f} {ts[4]:9.1f} {ts[4] / ts[3]:9.2f} "
                  f"{ts[6] / ts[5]:10.2f} {ts[8] / ts[7]:10.2f}", flush=True)


if __name__ == "__main__":
    main()
