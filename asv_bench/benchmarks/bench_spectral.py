"""SVD and eigh: the fused F-matrix kernel, and forward + backward against SciPy, one thread.

  SpectralKernel   spectral.svd_core / eigh_core (Cython, GIL released) against their NumPy
                   twins in _kernels/spectral_twin.py, for one k x k matrix (k = 4, 16, 64, 256)
                   and a stack of 1000 4 x 4: the core of the SVD / eigh pullback from
                   X = UᴴŪ, Y = VᴴV̄ and the spectrum in one pass, where NumPy builds a dozen
                   k x k temporaries (and pays per-call overhead on tiny matrices).
  SVD              u, s, vt = svd(a); the loss sum(u*G1) + sum(s*g) + sum(vt*G2), forward
                   + backward ("loss"), and the same gradient as tf.grad([u, s, vt], a,
                   [G1, g, G2]) ("grad_outputs", without the loss's own six ops)
  Eigh             w, v = eigh(a); the loss sum(w*g) + sum(v*G1), same two spellings

at n = 4, 16, 64, 256, float64 and complex128. The floor is the SciPy primal with its
default arguments (``scipy.linalg.svd(a)``: gesdd with vectors; ``scipy.linalg.eigh(a)``:
syevr/heevr with vectors). Targets (forward + backward / SciPy primal): svd <= 1.5x at
n = 16 and <= 1.3x at n = 256; eigh <= 1.4x at both. Complex cotangents are phase-invariant
(Ḡ = U ∘ R with R real, see ``_cotangents``), so the gauge check runs and passes.

``python asv_bench/benchmarks/bench_spectral.py`` prints the medians and ratios directly.
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
    from ._common import random_array as _random
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads
    from _common import random_array as _random

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro._kernels import spectral_twin as twin  # noqa: E402
from tenferro._kernels import spectral as kernel  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


def _cotangents(q, dtype, rng):
    """A cotangent for the vectors q: random for real dtypes; q ∘ R (R real) for complex,
    so that Im diag(qᴴ q̄) = 0 (phase-invariant, the gauge check passes)."""
    r = rng.standard_normal(q.shape)
    return r if dtype == "float64" else q * r


# ---- the kernel ---------------------------------------------------------------------------

class SpectralKernel:
    params = [["1x4", "1x16", "1x64", "1x256", "1000x4"], ["float64", "complex128"],
              ["cython", "numpy"]]
    param_names = ["stack", "dtype", "impl"]

    def setup(self, stack, dtype, impl):
        b, k = map(int, stack.split("x"))
        rng = np.random.default_rng(0)
        self.X = _random((b, k, k), dtype, rng)
        self.Y = _random((b, k, k), dtype, rng)
        self.s = np.sort(np.abs(rng.standard_normal((b, k))), axis=-1)[:, ::-1].copy()
        self.sbar = rng.standard_normal((b, k))
        self.out = np.empty((b, k, k), self.X.dtype)
        self.sinv = np.empty((b, k))
        self.fn = kernel if impl == "cython" else twin

    def time_svd_core(self, stack, dtype, impl):
        # ε as tf.linalg.svd's default: k·eps·s_max²
        self.fn.svd_core(self.X, self.Y, self.s, self.sbar, 0.0, 1e-15, 0, self.out, self.sinv)

    def time_eigh_core(self, stack, dtype, impl):
        self.fn.eigh_core(self.X, self.s, self.sbar, 0.0, 1e-15, self.out)


# ---- forward + backward against the SciPy primal -----------------------------------------

class _Bench:
    params = [[4, 16, 64, 256], ["float64", "complex128"]]
    param_names = ["n", "dtype"]


class SVD(_Bench):
    def setup(self, n, dtype):
        rng = np.random.default_rng(1)
        self.a = _random((n, n), dtype, rng)
        self.leaf = tf.tensor(self.a, requires_grad=True)
        # phase-invariant cotangents are built from the factors tenferro itself returns
        u, s, vt = (t.numpy() for t in tf.linalg.svd(self.a))
        self.G1 = _cotangents(u, dtype, rng)
        self.g = rng.standard_normal(n)
        self.G2 = _cotangents(vt, dtype, rng)
        # the loss Re Σ conj(G)∘y has the cotangent G on y
        self.L1, self.L2 = self.G1.conj(), self.G2.conj()

    def time_scipy_primal(self, n, dtype):
        sla.svd(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.svd(self.a)

    def time_tf_loss(self, n, dtype):
        u, s, vt = tf.linalg.svd(self.leaf)
        loss = tf.sum(u * self.L1) + tf.sum(s * self.g) + tf.sum(vt * self.L2)
        tf.grad(tf.real(loss) if dtype == "complex128" else loss, self.leaf)

    def time_tf_grad_outputs(self, n, dtype):
        u, s, vt = tf.linalg.svd(self.leaf)
        tf.grad([u, s, vt], self.leaf, [self.G1, self.g, self.G2])


class Eigh(_Bench):
    def setup(self, n, dtype):
        rng = np.random.default_rng(2)
        a = _random((n, n), dtype, rng)
        self.a = a + a.conj().T
        self.leaf = tf.tensor(self.a, requires_grad=True)
        w, v = (t.numpy() for t in tf.linalg.eigh(self.a))
        self.g = rng.standard_normal(n)
        self.G1 = _cotangents(v, dtype, rng)
        self.L1 = self.G1.conj()

    def time_scipy_primal(self, n, dtype):
        sla.eigh(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.eigh(self.a)

    def time_tf_loss(self, n, dtype):
        w, v = tf.linalg.eigh(self.leaf)
        loss = tf.sum(w * self.g) + tf.sum(v * self.L1)
        tf.grad(tf.real(loss) if dtype == "complex128" else loss, self.leaf)

    def time_tf_grad_outputs(self, n, dtype):
        w, v = tf.linalg.eigh(self.leaf)
        tf.grad([w, v], self.leaf, [self.g, self.G1])


# ---- a direct table (python asv_bench/benchmarks/bench_spectral.py) ----------------------

def _interleaved(fns, budget=0.05, repeat=15):
    """Median time of each function, and the median over rounds of each time / the first
    one's, timing the functions in turn within every round (robust to a busy machine)."""
    import timeit
    timers = [timeit.Timer(f) for f in fns]
    numbers = [max(1, int(budget / max(t.timeit(1), 1e-7))) for t in timers]
    rounds = [[t.timeit(k) / k for t, k in zip(timers, numbers)] for _ in range(repeat)]
    med = lambda xs: sorted(xs)[len(xs) // 2]
    times = [med([r[i] for r in rounds]) for i in range(len(fns))]
    ratios = [med([r[i] / r[0] for r in rounds]) for i in range(len(fns))]
    return times, ratios


def _table():
    print("kernel: spectral.{svd,eigh}_core, cython vs numpy twin (median µs)")
    for stack in SpectralKernel.params[0]:
        for dtype in SpectralKernel.params[1]:
            row = []
            for name in ("svd_core", "eigh_core"):
                fns = []
                for impl in ("cython", "numpy"):
                    b = SpectralKernel()
                    b.setup(stack, dtype, impl)
                    fns.append(lambda b=b, impl=impl: getattr(b, "time_" + name)(
                        stack, dtype, impl))
                (tc, tn), (_, r) = _interleaved(fns)
                row.append(f"{name} {tc * 1e6:8.1f} vs {tn * 1e6:8.1f} ({r:5.1f}x)")
            print(f"  {stack:>7s} {dtype:10s}  " + "   ".join(row))
    print("forward + backward / scipy primal (median µs, median ratio)")
    for cls in (SVD, Eigh):
        for dtype in cls.params[1]:
            for n in cls.params[0]:
                b = cls()
                b.setup(n, dtype)
                names = ("scipy_primal", "tf_forward", "tf_loss", "tf_grad_outputs")
                times, ratios = _interleaved(
                    [lambda m=m: getattr(b, "time_" + m)(n, dtype) for m in names])
                cells = [f"{m[3:] if m != 'scipy_primal' else 'scipy'} {t * 1e6:9.1f}"
                         + ("" if m == "scipy_primal" else f" ({r:4.2f}x)")
                         for m, t, r in zip(names, times, ratios)]
                print(f"  {cls.__name__:4s} {dtype:10s} n={n:3d}  " + "  ".join(cells))


if __name__ == "__main__":
    _table()
