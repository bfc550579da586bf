"""The direct-LAPACK primal layer (tenferro/_kernels/lapack_*.pyx) against SciPy and NumPy.

Each driver runs on the same input as its scipy.linalg (``check_finite=False``, so only
the wrapper is timed) and numpy.linalg counterpart, on one thread:

  Single   one n x n matrix, n = 4, 16, 64, 256, float64 and complex128. At n = 4 the
           timings are per-call overhead; at 256 LAPACK itself dominates and the ratio
           should be ~1.
  Batch    a stack of 1000 4x4 float64 matrices: tenferro's one nogil loop against
           numpy's batched gufunc (or SciPy's batched call) and a Python loop of scipy
           calls, which is what a wrapper-per-matrix costs.

``python asv_bench/benchmarks/bench_lapack.py`` prints the median timings and the ratio
tenferro / scipy and tenferro / numpy without asv.
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402

from tenferro.linalg import _lapack as lp  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


def _rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def inputs(shape, dtype):
    """A general matrix (stack), a Hermitian positive definite one, a lower triangular one
    and a right-hand side, all of ``shape`` (*batch, n, n)."""
    n = shape[-1]
    a = _rand(shape, dtype)
    spd = a @ np.swapaxes(a, -1, -2).conj() + n * np.eye(n)
    tri = np.tril(a) + n * np.eye(n)
    b = _rand(shape[:-1] + (1,), dtype, seed=1)
    return a, spd, tri, b


# The three implementations of each driver, on the arrays of ``inputs``. None: no
# counterpart (numpy.linalg has no LU and no triangular solve).
DRIVERS = {
    "svd": (lambda a, h, t, b, f: lp.svd(a),
            lambda a, h, t, b, f: sla.svd(a, full_matrices=False, check_finite=False),
            lambda a, h, t, b, f: np.linalg.svd(a, full_matrices=False)),
    "eigh": (lambda a, h, t, b, f: lp.eigh(h),
             lambda a, h, t, b, f: sla.eigh(h, driver="evd", check_finite=False),
             lambda a, h, t, b, f: np.linalg.eigh(h)),
    "qr": (lambda a, h, t, b, f: lp.qr(a),
           lambda a, h, t, b, f: sla.qr(a, mode="economic", check_finite=False),
           lambda a, h, t, b, f: np.linalg.qr(a)),
    "cholesky": (lambda a, h, t, b, f: lp.potrf(h),
                 lambda a, h, t, b, f: sla.cholesky(h, lower=True, check_finite=False),
                 lambda a, h, t, b, f: np.linalg.cholesky(h)),
    "getrf": (lambda a, h, t, b, f: lp.getrf(a),
              lambda a, h, t, b, f: sla.lu_factor(a, check_finite=False),
              None),
    "lu": (lambda a, h, t, b, f: lp.lu(a),
           lambda a, h, t, b, f: sla.lu(a, check_finite=False),
           None),
    "eig": (lambda a, h, t, b, f: lp.eig(a),
            lambda a, h, t, b, f: sla.eig(a, check_finite=False),
            lambda a, h, t, b, f: np.linalg.eig(a)),
    "getrs": (lambda a, h, t, b, f: lp.getrs(f[0], f[1], b),
              lambda a, h, t, b, f: sla.lu_solve(f[2], b, check_finite=False),
              None),
    "trtrs": (lambda a, h, t, b, f: lp.trtrs(t, b, lower=True),
              lambda a, h, t, b, f: sla.solve_triangular(t, b, lower=True,
                                                         check_finite=False),
              None),
}
IMPLS = ("tenferro", "scipy", "numpy")

# The stack of 1000 4x4: numpy's gufuncs batch natively, scipy.linalg.lu does since 1.11;
# "scipy_loop" is a Python loop of one scipy call per matrix.
BATCH_SHAPE = (1000, 4, 4)
BATCH = {
    "svd": (lambda a, h: lp.svd(a), lambda a, h: np.linalg.svd(a, full_matrices=False),
            lambda m, h: sla.svd(m, full_matrices=False, check_finite=False)),
    "eigh": (lambda a, h: lp.eigh(h), lambda a, h: np.linalg.eigh(h),
             lambda m, h: sla.eigh(h, driver="evd", check_finite=False)),
    "qr": (lambda a, h: lp.qr(a), lambda a, h: np.linalg.qr(a),
           lambda m, h: sla.qr(m, mode="economic", check_finite=False)),
    "cholesky": (lambda a, h: lp.potrf(h), lambda a, h: np.linalg.cholesky(h),
                 lambda m, h: sla.cholesky(h, lower=True, check_finite=False)),
    "lu": (lambda a, h: lp.lu(a), lambda a, h: sla.lu(a, check_finite=False),
           lambda m, h: sla.lu(m, check_finite=False)),
}


class Single:
    """One n x n matrix: tenferro's driver vs scipy.linalg and numpy.linalg."""
    params = (list(DRIVERS), [4, 16, 64, 256], ["float64", "complex128"], list(IMPLS))
    param_names = ["driver", "n", "dtype", "impl"]

    def setup(self, driver, n, dtype, impl):
        self.fn = DRIVERS[driver][IMPLS.index(impl)]
        if self.fn is None:
            raise NotImplementedError   # asv skips: no such numpy function
        self.a, self.h, self.t, self.b = inputs((n, n), dtype)
        self.f = lp.getrf(self.a) + (sla.lu_factor(self.a),)

    def time_primal(self, driver, n, dtype, impl):
        self.fn(self.a, self.h, self.t, self.b, self.f)


class Batch:
    """1000 4x4 float64 matrices: one nogil loop vs numpy's gufunc vs a scipy loop."""
    params = [list(BATCH)]
    param_names = ["driver"]

    def setup(self, driver):
        self.a, self.h, _, _ = inputs(BATCH_SHAPE, "float64")
        self.impls = BATCH[driver]

    def time_tenferro(self, driver):
        self.impls[0](self.a, self.h)

    def time_numpy_batched(self, driver):
        self.impls[1](self.a, self.h)

    def time_scipy_loop(self, driver):
        one = self.impls[2]
        for k in range(self.a.shape[0]):
            one(self.a[k], self.h[k])


def _medians(fns, budget=0.3, rounds=9):
    """Median seconds per call of each fn() (None: skipped). The rounds of the functions
    are interleaved so that a change in machine load hits all of them alike."""
    import time
    live = [fn for fn in fns if fn is not None]
    numbers = []
    for fn in live:          # calls per round: ~budget / rounds seconds
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        numbers.append(max(1, int(budget / rounds / one)))
    samples = [[] for _ in live]
    for _ in range(rounds):
        for i, fn in enumerate(live):
            t0 = time.perf_counter()
            for _ in range(numbers[i]):
                fn()
            samples[i].append((time.perf_counter() - t0) / numbers[i])
    it = iter(float(np.median(x)) for x in samples)
    return [None if fn is None else next(it) for fn in fns]


def main():
    print("one matrix: median time per call (us); ratio = tenferro / other")
    print(f"{'driver':9} {'n':>4} {'dtype':10} {'tenferro':>9} {'scipy':>9} {'numpy':>9} "
          f"{'tf/scipy':>8} {'tf/numpy':>8}")
    for name, impls in DRIVERS.items():
        for dtype in ("float64", "complex128"):
            for n in (4, 16, 64, 256):
                a, h, t, b = inputs((n, n), dtype)
                f = lp.getrf(a) + (sla.lu_factor(a),)
                times = [None if t_ is None else t_ * 1e6 for t_ in _medians(
                    [None if fn is None else (lambda fn=fn: fn(a, h, t, b, f))
                     for fn in impls])]
                tf_, sp, nm = times
                print(f"{name:9} {n:4} {dtype:10} {tf_:9.2f} {sp:9.2f} "
                      f"{'-' if nm is None else f'{nm:.2f}':>9} {tf_ / sp:8.2f} "
                      f"{'-' if nm is None else f'{tf_ / nm:.2f}':>8}")
    print("\n1000 4x4 float64: median time per stack (us)")
    print(f"{'driver':9} {'tenferro':>9} {'batched':>9} {'scipy loop':>10} "
          f"{'tf/batched':>10} {'tf/loop':>8}")
    a, h, _, _ = inputs(BATCH_SHAPE, "float64")
    for name, (tfn, batched, one) in BATCH.items():
        t0, t1, t2 = (x * 1e6 for x in _medians(
            [lambda: tfn(a, h), lambda: batched(a, h),
             lambda: [one(a[k], h[k]) for k in range(a.shape[0])]], budget=1.5, rounds=7))
        print(f"{name:9} {t0:9.1f} {t1:9.1f} {t2:10.1f} {t0 / t1:10.2f} {t0 / t2:8.3f}")


if __name__ == "__main__":
    main()
