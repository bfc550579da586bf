"""tf.linalg.norm ('fro' and 'nuc'): forward + backward against the SciPy/NumPy primal,
one thread (LU's forward + backward is in bench_decomp.py).

  Fro  n = norm(a) (ord None: the 2-norm of all entries); a scalar cotangent
  Nuc  n = norm(a, 'nuc') (the sum of singular values); a scalar cotangent

at n = 16 (per-call overhead) and 256, float64 and complex128. The floors are
``scipy.linalg.norm(a)`` and ``numpy.linalg.norm(a, 'nuc')``. Targets for forward +
backward ÷ primal: fro <= 3x at both sizes; nuc <= 1.3x (n = 16) and <= 2x (n = 256).

Fro: the primal is one dot (~2 µs at n = 16), the backward one scaled copy x·(n̄/n); what
is left is the engine's fixed cost (~5 µs for tf.grad over one node). Nuc: the gradient
U Vᴴ needs the singular vectors, while the primal computes singular values only (gesdd
jobz='N'). ``time_svd_vectors`` / ``time_svd_values`` is that floor: ~2.2x at n = 16 and
256 on this OpenBLAS (LAPACK alone; NumPy's own overhead makes the baseline ~1.7x
gesdd-values at n = 16), so the n = 256 target is below the floor.

``python asv_bench/benchmarks/bench_lu_norm.py`` prints the medians and ratios directly
(the functions timed alternately; ``--cpu`` uses the process CPU clock).
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
from tenferro.linalg import _lapack  # noqa: E402

_random = common.random_array
common.limit_threads()  # NumPy may have been imported before this module: limit its pools


class _Bench(common.SizeDtype):
    params = [[16, 256], common.DTYPES]

    def setup(self, n, dtype):
        rng = np.random.default_rng(0)
        self.a = _random((n, n), dtype, rng) + 3 * np.eye(n)
        self.leaf = tf.tensor(self.a, requires_grad=True)
        self.seed = tf.tensor(np.float64(0.7))


class Fro(_Bench):
    def time_scipy_primal(self, n, dtype):
        sla.norm(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.norm(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.norm(self.leaf)], [self.leaf], [self.seed])


class Nuc(_Bench):
    def time_scipy_primal(self, n, dtype):
        np.linalg.norm(self.a, "nuc")

    def time_tf_forward(self, n, dtype):
        tf.linalg.norm(self.a, "nuc")

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.norm(self.leaf, "nuc")], [self.leaf], [self.seed])

    def time_svd_values(self, n, dtype):
        _lapack.svd(self.a, compute_uv=False)

    def time_svd_vectors(self, n, dtype):
        _lapack.svd(self.a, full_matrices=False)


def main():
    common.print_forward_backward_table(
        (Fro, Nuc), _Bench.params, floor="base", timer=common.cpu_timer(),
        extra=[("uv/vals", ["time_svd_values", "time_svd_vectors"],
                lambda t: f"{t[1] / t[0]:.2f}")])


if __name__ == "__main__":
    main()
