"""tf.linalg.eig and tf.linalg.solve: forward + backward against the SciPy primal, one thread.

  Eig     w, v = eig(a); cotangents on w and on v (a gauge-invariant one, V ∘ R with R
          real, so the phase check passes), then tf.grad
  Solve   x = solve(a, b) with a vector b (n,); cotangent on x, gradients of a and b

at n = 4, 16 (per-call overhead), 64 and 256 (LAPACK-bound), float64 and complex128. The
floor is the SciPy primal (``scipy.linalg.eig(a)``, ``scipy.linalg.solve(a, b)`` with
their default arguments). Solve's backward reuses the forward LU (one getrs with
trans=2 and an outer product), so forward + backward should stay near the primal at
large n (target: <= 1.5x at n = 16, <= 2.0x at n = 256). Eig's backward adds a few
matmuls and an LU solve with Vᴴ, cheap next to the O(25 n³) of geev.

``python asv_bench/benchmarks/bench_eig.py`` prints the medians and ratios directly.
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads, medians
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads, medians

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


def _matrix(n, dtype, rng):
    a = rng.standard_normal((n, n))
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal((n, n))
    return a + 3 * np.eye(n)   # well conditioned


class _Bench:
    params = [[4, 16, 64, 256], ["float64", "complex128"]]
    param_names = ["n", "dtype"]


class Eig(_Bench):
    def setup(self, n, dtype):
        rng = np.random.default_rng(0)
        self.a = _matrix(n, dtype, rng)
        self.leaf = tf.tensor(self.a, requires_grad=True)
        # the cotangent must be phase-invariant for tenferro's own eigenvectors
        v = tf.linalg.eig(self.a).vectors.numpy()
        self.gw = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        # V̄ = V ∘ R (R real): Im diag(VᴴV̄) = 0, a phase-invariant cotangent
        self.gv = v * rng.standard_normal((n, n))

    def time_scipy_primal(self, n, dtype):
        sla.eig(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.eig(self.a)

    def time_tf_forward_backward(self, n, dtype):
        w, v = tf.linalg.eig(self.leaf)
        tf.grad([w, v], [self.leaf], [self.gw, self.gv])


class Solve(_Bench):
    def setup(self, n, dtype):
        rng = np.random.default_rng(1)
        self.a = _matrix(n, dtype, rng)
        self.b = _matrix(n, dtype, rng)[:, 0]
        self.g = _matrix(n, dtype, rng)[:, 1]
        self.leaves = [tf.tensor(self.a, requires_grad=True),
                       tf.tensor(self.b, requires_grad=True)]

    def time_scipy_primal(self, n, dtype):
        sla.solve(self.a, self.b)

    def time_tf_forward(self, n, dtype):
        tf.linalg.solve(self.a, self.b)

    def time_tf_forward_backward(self, n, dtype):
        x = tf.linalg.solve(*self.leaves)
        tf.grad([x], self.leaves, [self.g])


def main():
    print(f"{'bench':6} {'n':>4} {'dtype':10} {'scipy us':>9} {'tf fwd us':>9} "
          f"{'tf f+b us':>9} {'f+b/scipy':>9}")
    for cls in (Eig, Solve):
        for dtype in _Bench.params[1]:
            for n in _Bench.params[0]:
                b = cls()
                b.setup(n, dtype)
                ts = [medians([lambda f=f: f(n, dtype)])[0] * 1e6 for f in
                      (b.time_scipy_primal, b.time_tf_forward, b.time_tf_forward_backward)]
                print(f"{cls.__name__:6} {n:4d} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} "
                      f"{ts[2]:9.1f} {ts[2] / ts[0]:9.2f}")


if __name__ == "__main__":
    main()
