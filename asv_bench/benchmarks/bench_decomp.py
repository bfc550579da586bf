"""tf.linalg.qr, cholesky and lu: forward + backward against the SciPy primal, one thread.

  QR        q, r = qr(a) (reduced); cotangents on q and r, then tf.grad
  Cholesky  l = cholesky(a) of a Hermitian positive-definite a; cotangent on l
  LU        p, l, u = lu(a); cotangents on l and u

at n = 4, 16 (per-call overhead), 64 and 256 (LAPACK/BLAS-bound), float64 and complex128.
The floor is the SciPy primal with its default arguments: ``scipy.linalg.qr(a,
mode="economic")``, ``scipy.linalg.cholesky(a, lower=True)``, ``scipy.linalg.lu(a)``.
Targets for forward + backward ÷ primal: qr <= 1.5x (n = 16) and <= 1.4x (n = 256),
cholesky <= 3x and <= 5x, lu <= 2.5x and <= 3x. Each backward is a few matmuls and two
(qr: one) triangular solves with the factors (no inverse is formed), so at large n it is
bound by trsm/gemm speed relative to geqrf/potrf/getrf.

``time_kernel_backward`` times the compiled backprop alone (tenferro/_kernels/
triangular_backprop.pyx): qr_backprop needs ~4.7n³ flops at n = m (M's lower triangle 5n³/3, the
?hemm 2n³, the solve n³), i.e. >= ~1000 µs at gemm speed (f64, n = 256) against
~1900 µs for geqrf + orgqr, so qr's ratio cannot go below ~1.5 on this BLAS;
cholesky_backprop needs ~5n³/6 (the blocked reverse mode) against potrf's n³/3.

``python asv_bench/benchmarks/bench_decomp.py`` prints the medians and ratios directly
(primal and forward + backward timed alternately, so machine load hits both alike;
``--cpu`` times with the process CPU clock instead of the wall clock, which is steadier
on a machine shared with other jobs).
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
from tenferro._kernels import triangular_backprop as _kernel  # noqa: E402

_random = common.random_array
common.limit_threads()  # NumPy may have been imported before this module: limit its pools


class QR(common.SizeDtype):
    def setup(self, n, dtype):
        rng = np.random.default_rng(0)
        self.a = _random((n, n), dtype, rng) + 3 * np.eye(n)   # full rank
        self.leaf = tf.tensor(self.a, requires_grad=True)
        self.gs = [_random((n, n), dtype, rng), _random((n, n), dtype, rng)]
        self.q, self.r = (x.numpy() for x in tf.linalg.qr(self.a))

    def time_scipy_primal(self, n, dtype):
        sla.qr(self.a, mode="economic")

    def time_tf_forward(self, n, dtype):
        tf.linalg.qr(self.a)

    def time_tf_forward_backward(self, n, dtype):
        q, r = tf.linalg.qr(self.leaf)
        tf.grad([q, r], [self.leaf], self.gs)

    def time_kernel_backward(self, n, dtype):
        _kernel.qr_backprop(self.q, self.r, *self.gs)


class Cholesky(common.SizeDtype):
    def setup(self, n, dtype):
        rng = np.random.default_rng(1)
        x = _random((n, n), dtype, rng)
        self.a = x @ x.conj().T / n + np.eye(n)   # Hermitian positive definite
        self.leaf = tf.tensor(self.a, requires_grad=True)
        self.g = np.tril(_random((n, n), dtype, rng))
        self.l = tf.linalg.cholesky(self.a).numpy()

    def time_scipy_primal(self, n, dtype):
        sla.cholesky(self.a, lower=True)

    def time_tf_forward(self, n, dtype):
        tf.linalg.cholesky(self.a)

    def time_tf_forward_backward(self, n, dtype):
        l = tf.linalg.cholesky(self.leaf)
        tf.grad([l], [self.leaf], [self.g])

    def time_kernel_backward(self, n, dtype):
        _kernel.cholesky_backprop(self.l, self.g)


class LU(common.SizeDtype):
    def setup(self, n, dtype):
        rng = np.random.default_rng(2)
        self.a = _random((n, n), dtype, rng)
        self.leaf = tf.tensor(self.a, requires_grad=True)
        self.gs = [np.tril(_random((n, n), dtype, rng), -1), np.triu(_random((n, n), dtype, rng))]

    def time_scipy_primal(self, n, dtype):
        sla.lu(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.lu(self.a)

    def time_tf_forward_backward(self, n, dtype):
        p, l, u = tf.linalg.lu(self.leaf)
        tf.grad([l, u], [self.leaf], self.gs)


def main():
    common.print_forward_backward_table(
        (QR, Cholesky, LU), timer=common.cpu_timer(),
        extra=[("kernel bwd", ["time_kernel_backward"], lambda t: f"{t[0]:.1f}")])


if __name__ == "__main__":
    main()
