"""tf.linalg.det, slogdet, matrix_exp and norm: forward + backward against the SciPy
primal, one thread.

  Det        d = det(a); cotangent 1, then tf.grad        (floor: scipy.linalg.det)
  Slogdet    s, l = slogdet(a); cotangent on l             (floor: numpy.linalg.slogdet;
                                                            SciPy has no slogdet)
  MatrixExp  e = matrix_exp(a), ‖a‖ ~ 1; cotangent on e    (floor: scipy.linalg.expm)
  NormFro    norm(a) (Frobenius)                           (floor: scipy.linalg.norm(a))
  NormNuc    norm(a, "nuc")                                (floor: scipy.linalg.norm(a, "nuc"))
  Sqrtm      x = sqrtm(a) (n = 16, 64 only); cotangent on x (floor: scipy.linalg.sqrtm)
  Logm       x = logm(a) (n = 16, 64 only); cotangent on x  (floor: scipy.linalg.logm)

at n = 4, 16 (per-call overhead), 64 and 256 (LAPACK/BLAS-bound), float64 and complex128.
Targets for forward + backward ÷ primal (n = 16 / n = 256): det <= 3x / 2.5x, slogdet
<= 3x / 2.5x, matrix_exp <= 2x / 2.5x, norm fro <= 3x / 3x, norm nuc <= 1.3x / 2x.

What bounds them (measured with OpenBLAS 0.3.31, one thread): at n <= 16 the per-call
overhead (tf.grad alone is ~3–6 µs, SciPy's primals are 4–30 µs); at n = 256 the
det/slogdet backward is c·A⁻ᴴ from the forward's LU factors, 4n³/3 flops pushed into
gemm/trmm by _kernels/inverse.pyx (~1.2x getrf in float64, where getrs with n right-hand
sides was ~4.5x: trsm runs at a third of gemm's speed here), so forward + backward is
~2.2–2.5x getrf; the matrix_exp backward is the Fréchet derivative on the Padé data the
forward kept (about twice the forward's matmuls: ~2.2x in all at n = 256); the nuclear
norm's gradient U Vᴴ needs the singular vectors, which the forward computes (gesdd with vectors, 2.2x the
values-only gesdd of the floor) when a derivative is needed.

``FrechetAlgorithms`` is the benchmark that chose the matrix_exp backward: L(A, E) from
the forward's saved Padé data (tenferro's kernel, _kernels/expm.pyx, and its NumPy twin)
against scipy.linalg.expm_frechet (recomputes the Padé data per call) and the 2n x 2n
block exponential exp([[A, E], [0, A]]).

``MatrixExpNorms`` runs matrix_exp at ‖A‖₁ = 0.1, 1, 5, 50 (Padé degree 5, 9, 13 and 13
with 4 squarings): each branch of the kernels. The matrix_exp forward + backward costs,
for degree m with s squarings, these n x n gemms (plus ?getrf + ?getri, ~2.5 gemms in
float64): forward m=5: 4, 9: 6, 13: 7, each + s; backward m=5: 8, 9: 12, 13: 14, each +
2s. SciPy's primal is its forward minus one gemm, with ?getrs (n right-hand sides, ~3.5
gemms) for our ?getri; so at n = 256 the ratio cannot go much below ~2.

``python asv_bench/benchmarks/bench_matfuncs.py`` prints the medians and ratios directly
(primal and forward + backward timed alternately, so machine load hits both alike).
"""
import importlib
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

_random = common.random_array
common.limit_threads()  # NumPy may have been imported before this module: limit its pools


class _Bench(common.SizeDtype):
    def setup(self, n, dtype):
        rng = np.random.default_rng(0)
        self.a = self.matrix(n, dtype, rng)
        self.leaf = tf.tensor(self.a, requires_grad=True)

    @staticmethod
    def matrix(n, dtype, rng):
        return _random((n, n), dtype, rng)


class Det(_Bench):
    def setup(self, n, dtype):
        super().setup(n, dtype)
        self.g = np.ones((), dtype)

    def time_scipy_primal(self, n, dtype):
        sla.det(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.det(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.det(self.leaf)], [self.leaf], [self.g])


class Slogdet(_Bench):
    def time_scipy_primal(self, n, dtype):
        np.linalg.slogdet(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.slogdet(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.slogdet(self.leaf).logabsdet], [self.leaf])


class MatrixExp(_Bench):
    @staticmethod
    def matrix(n, dtype, rng):
        return _random((n, n), dtype, rng) / np.sqrt(n)   # spectral radius ~ 1

    def setup(self, n, dtype):
        super().setup(n, dtype)
        self.g = _random((n, n), dtype, np.random.default_rng(1))

    def time_scipy_primal(self, n, dtype):
        sla.expm(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.matrix_exp(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.matrix_exp(self.leaf)], [self.leaf], [self.g])


class MatrixExpNorms:
    """matrix_exp forward + backward ÷ scipy.linalg.expm at ‖A‖₁ = 0.1, 1, 5, 50."""
    params = [[16, 256], common.DTYPES, [0.1, 1.0, 5.0, 50.0]]
    param_names = ["n", "dtype", "norm1"]

    def setup(self, n, dtype, norm1):
        rng = np.random.default_rng(3)
        a = _random((n, n), dtype, rng)
        self.a = a * (norm1 / np.abs(a).sum(axis=0).max())
        self.leaf = tf.tensor(self.a, requires_grad=True)
        self.g = _random((n, n), dtype, rng)

    def time_scipy_primal(self, n, dtype, norm1):
        sla.expm(self.a)

    def time_tf_forward_backward(self, n, dtype, norm1):
        tf.grad([tf.linalg.matrix_exp(self.leaf)], [self.leaf], [self.g])


class NormFro(_Bench):
    def time_scipy_primal(self, n, dtype):
        sla.norm(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.norm(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.norm(self.leaf)], [self.leaf])


class NormNuc(_Bench):
    def time_scipy_primal(self, n, dtype):
        sla.norm(self.a, "nuc")

    def time_tf_forward(self, n, dtype):
        tf.linalg.norm(self.a, "nuc")

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.norm(self.leaf, "nuc")], [self.leaf])


class _SchurFunc:
    """sqrtm/logm at n = 16 and 64 (kept quick: SciPy's primals are Python-level Schur
    code, ~0.1-10 ms here), on a well-conditioned general matrix (eigenvalues near n^½·2.5,
    in the right half-plane)."""
    params = [[16, 64], common.DTYPES]
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        rng = np.random.default_rng(3)
        self.a = _random((n, n), dtype, rng) + 2.5 * np.sqrt(n) * np.eye(n)
        self.leaf = tf.tensor(self.a, requires_grad=True)
        self.g = _random((n, n), dtype, np.random.default_rng(4))


class Sqrtm(_SchurFunc):
    """Backward: ?trsyl on the Schur form of X that the forward keeps (one extra Schur
    decomposition in the forward when a derivative is needed)."""

    def time_scipy_primal(self, n, dtype):
        sla.sqrtm(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.sqrtm(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.sqrtm(self.leaf)], [self.leaf], [self.g])


class Logm(_SchurFunc):
    """Backward: SciPy's logm of the 2n x 2n block [[Aᵀ, cḠ], [0, Aᵀ]] (~8x the flops)."""

    def time_scipy_primal(self, n, dtype):
        sla.logm(self.a)

    def time_tf_forward(self, n, dtype):
        tf.linalg.logm(self.a)

    def time_tf_forward_backward(self, n, dtype):
        tf.grad([tf.linalg.logm(self.leaf)], [self.leaf], [self.g])


class FrechetAlgorithms(common.SizeDtype):
    """L(A, E) for one cotangent E, given A (the backward of matrix_exp alone)."""

    def setup(self, n, dtype):
        rng = np.random.default_rng(2)
        self.a = MatrixExp.matrix(n, dtype, rng)
        self.e = _random((n, n), dtype, rng)
        self.mf = importlib.import_module("tenferro.linalg.matfuncs")
        self.ref = importlib.import_module("tenferro._kernels.expm_twin")
        self.data = self.mf.expm_pade(self.a)[1]      # what the forward keeps
        self.ref_data = self.ref.expm_pade(self.a)[1]
        self.zero = np.zeros((n, n), self.a.dtype)

    def time_saved_pade(self, n, dtype):
        self.mf.expm_frechet(self.data, self.e)

    def time_saved_pade_numpy(self, n, dtype):
        self.ref.expm_frechet(self.ref_data, self.e)

    def time_scipy_expm_frechet(self, n, dtype):
        sla.expm_frechet(self.a, self.e, compute_expm=False, check_finite=False)

    def time_block_exponential(self, n, dtype):
        sla.expm(np.block([[self.a, self.e], [self.zero, self.a]]))


def main(names=None):
    classes = [Det, Slogdet, MatrixExp, NormFro, NormNuc]
    schur = [Sqrtm, Logm]
    if names:
        classes = [c for c in classes if c.__name__ in names]
        schur = [c for c in schur if c.__name__ in names]
    if classes:
        common.print_forward_backward_table(classes)
    if schur:
        common.print_forward_backward_table(schur, params=_SchurFunc.params)
    if not names or "MatrixExpNorms" in names:
        print(f"\n{'expm':9} {'n':>4} {'dtype':10} {'norm1':>6} {'scipy us':>9} "
              f"{'tf f+b us':>9} {'f+b/scipy':>9}")
        for dtype in MatrixExpNorms.params[1]:
            for n in MatrixExpNorms.params[0]:
                for norm1 in MatrixExpNorms.params[2]:
                    b = common.setup_bench(MatrixExpNorms, n, dtype, norm1)
                    ts = common.medians_us([b.time_scipy_primal, b.time_tf_forward_backward],
                                           (n, dtype, norm1))
                    print(f"{'':9} {n:4d} {dtype:10} {norm1:6g} {ts[0]:9.1f} {ts[1]:9.1f} "
                          f"{ts[1] / ts[0]:9.2f}", flush=True)
    if names and "FrechetAlgorithms" not in names:
        return
    print(f"\n{'L(A, E)':9} {'n':>4} {'dtype':10} {'saved us':>9} {'numpy us':>9} "
          f"{'frechet':>9} {'block':>9}")
    for dtype in common.DTYPES:
        for n in common.SIZES:
            b = common.setup_bench(FrechetAlgorithms, n, dtype)
            ts = common.medians_us([b.time_saved_pade, b.time_saved_pade_numpy,
                                    b.time_scipy_expm_frechet, b.time_block_exponential],
                                   (n, dtype), repeat=7)
            print(f"{'':9} {n:4d} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} "
                  f"{ts[3]:9.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
