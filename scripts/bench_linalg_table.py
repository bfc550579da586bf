"""Forward+backward ÷ SciPy primal for each linalg op (one thread, medians, same run).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/bench_linalg_table.py [n ...]

Forward+backward is ``tf.grad(outputs, a, cotangents)`` with fixed random cotangents on
every differentiable output (phase-invariant ones for complex vectors), i.e. the cost of
one primal plus one pullback; the baseline is the SciPy call a user would otherwise make.
The ratio is the median of five per-round ratios, baseline and tenferro measured
alternately (see paired_us).
"""
import os
import sys
import timeit

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402

import tenferro as tf  # noqa: E402


def median_us(fn, budget=0.4):
    n = 1
    while True:
        t = timeit.timeit(fn, number=n)
        if t > 0.02 or n >= 1 << 16:
            break
        n *= 2
    reps = max(5, min(31, int(budget / max(t, 1e-9))))
    return float(np.median(timeit.repeat(fn, number=n, repeat=reps))) / n * 1e6


def paired_us(base, fb, rounds=5):
    """Medians of the baseline and of tenferro, and the median of their per-round ratio:
    the two are measured alternately, round by round, so that a slow phase of the
    machine (this VM drifts by 5-10% over seconds) hits both sides of each ratio."""
    tb, tt, ratios = [], [], []
    for _ in range(rounds):
        b, t = median_us(base, 0.4 / rounds), median_us(fb, 0.4 / rounds)
        tb.append(b)
        tt.append(t)
        ratios.append(t / b)
    return float(np.median(tb)), float(np.median(tt)), float(np.median(ratios))


def cases(n, dtype, rng):
    def rand(*shape):
        a = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        return a.astype(dtype)

    a = rand(n, n) + 3 * np.eye(n)
    spd = a @ a.conj().T / n + np.eye(n)
    tall = rand(2 * n, n)
    b = rand(n, n)

    def phase_free(v):       # V ∘ R with R real: Im diag(Vᴴ V̄) = 0
        return v * rng.standard_normal(v.shape)

    u, s, vt = tf.linalg.svd(a)
    w, v = tf.linalg.eigh(spd)
    yield "svd", a, lambda x: tf.linalg.svd(x), \
        [phase_free(u.numpy()), rand(n).real.copy(), phase_free(vt.numpy().conj().T).conj().T], \
        lambda: sla.svd(a, full_matrices=False)
    yield "eigh", spd, lambda x: tf.linalg.eigh(x), [rand(n).real.copy(), phase_free(v.numpy())], \
        lambda: sla.eigh(spd)
    yield "qr", a, lambda x: tf.linalg.qr(x), [rand(n, n), rand(n, n)], \
        lambda: sla.qr(a, mode="economic")
    yield "cholesky", spd, lambda x: (tf.linalg.cholesky(x),), [rand(n, n)], \
        lambda: sla.cholesky(spd, lower=True)
    yield "lu", a, lambda x: tf.linalg.lu(x)[1:], [rand(n, n), rand(n, n)], lambda: sla.lu(a)
    yield "solve", a, lambda x: (tf.linalg.solve(x, b),), [rand(n, n)], lambda: sla.solve(a, b)
    yield "inv", a, lambda x: (tf.linalg.inv(x),), [rand(n, n)], lambda: sla.inv(a)
    yield "pinv (2n x n)", tall, lambda x: (tf.linalg.pinv(x),), [rand(n, 2 * n)], \
        lambda: np.linalg.pinv(tall)
    yield "det", a, lambda x: (tf.linalg.det(x),), [rand()], lambda: sla.det(a)
    yield "slogdet", a, lambda x: (tf.linalg.slogdet(x).logabsdet,), [rand().real.copy()], \
        lambda: np.linalg.slogdet(a)
    upper = np.triu(a)
    yield "solve_triangular", upper, \
        lambda x: (tf.linalg.solve_triangular(x, b),), [rand(n, n)], \
        lambda: sla.solve_triangular(upper, b)
    bt = rand(2 * n, n)
    yield "lstsq (2n x n)", tall, lambda x: (tf.linalg.lstsq(x, bt).x,), [rand(n, n)], \
        lambda: sla.lstsq(tall, bt)
    small = a / np.linalg.norm(a, 1)
    yield "matrix_exp", small, lambda x: (tf.linalg.matrix_exp(x),), [rand(n, n)], \
        lambda: sla.expm(small)
    yield "norm fro", a, lambda x: (tf.linalg.norm(x),), [rand().real.copy()], \
        lambda: sla.norm(a)
    yield "norm nuc", a, lambda x: (tf.linalg.norm(x, "nuc"),), [rand().real.copy()], \
        lambda: np.linalg.norm(a, "nuc")


def main():
    args = sys.argv[1:]
    only = [a for a in args if not a.isdigit()]
    sizes = [int(x) for x in args if x.isdigit()] or [16, 256]
    rng = np.random.default_rng(0)
    print(f"{'op':14} {'dtype':10} {'n':>4} {'scipy µs':>10} {'tf f+b µs':>10} {'ratio':>6}")
    for dtype in ("float64", "complex128"):
        for n in sizes:
            for name, a, f, cots, base in cases(n, dtype, rng):
                if only and not any(name.startswith(o) for o in only):
                    continue
                x = tf.tensor(a, requires_grad=True)
                seeds = [tf.tensor(c) for c in cots]   # upstream cotangents: made once

                def fb():
                    outs = f(x)
                    tf.grad(list(outs), [x], seeds)

                t_base, t_tf, ratio = paired_us(base, fb)
                print(f"{name:14} {dtype:10} {n:4d} {t_base:10.1f} {t_tf:10.1f} "
                      f"{ratio:6.2f}", flush=True)


if __name__ == "__main__":
    main()
