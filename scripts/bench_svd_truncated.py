"""Truncated SVD (tf.linalg.svd(a, max_rank=k)) against the full SVD then slicing, primal
plus gradient of a gauge-invariant loss of u, s and vt; medians, one thread, same run.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/bench_svd_truncated.py [n k reps]

Two test matrices: a Gaussian one (flat spectrum near the top: small gaps at the cut, the
hard case for the iterative parts) and one with a geometrically decaying spectrum (the
usual case for truncation, e.g. tensor networks).
"""
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402


def loss(a, k, truncated, C, B):
    if truncated:
        u, s, vt = tf.linalg.svd(a, max_rank=k)
    else:
        u, s, vt = tf.linalg.svd(a)
        u, s, vt = u[:, :k], s[:k], vt[:k, :]
    return (tf.sum(C * ((u * s) @ vt)) + tf.sum(s)
            + tf.sum(tf.abs(u.mT @ B) ** 2) + tf.sum(tf.abs(vt @ B) ** 2))


def primal_and_grad(a, k, truncated, C, B):
    x = tf.tensor(a, requires_grad=True)
    g, = tf.grad([loss(x, k, truncated, C, B)], [x])
    return g.numpy()


def median_times(fs, reps):
    """Median seconds of each function; the runs are interleaved so that a change of the
    machine's load hits all of them alike."""
    ts = [[] for _ in fs]
    for _ in range(reps):
        for f, t in zip(fs, ts):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
    return [float(np.median(t)) for t in ts]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rng = np.random.default_rng(0)
    gauss = rng.standard_normal((n, n))
    q1 = np.linalg.qr(rng.standard_normal((n, n)))[0]
    q2 = np.linalg.qr(rng.standard_normal((n, n)))[0]
    decay = (q1 * 0.97 ** np.arange(n)) @ q2.T
    C = tf.tensor(rng.standard_normal((n, n)))
    B = tf.tensor(rng.standard_normal((n, 2)))
    print(f"n = {n}, k = {k}, {reps} reps, medians, OMP_NUM_THREADS="
          f"{os.environ['OMP_NUM_THREADS']}")
    for name, a in (("gaussian", gauss), ("decaying 0.97^i", decay)):
        g_t = primal_and_grad(a, k, True, C, B)
        g_f = primal_and_grad(a, k, False, C, B)
        err = np.abs(g_t - g_f).max() / np.abs(g_f).max()
        t_full, t_trunc, p_full, p_trunc = median_times(
            [lambda: primal_and_grad(a, k, False, C, B),
             lambda: primal_and_grad(a, k, True, C, B),
             lambda: tf.linalg.svd(a),
             lambda: tf.linalg.svd(a, max_rank=k)], reps)
        print(f"{name:>16}: primal+grad truncated {t_trunc:.3f} s, full {t_full:.3f} s, "
              f"ratio {t_trunc / t_full:.3f} | primal {p_trunc:.3f} s vs {p_full:.3f} s, "
              f"ratio {p_trunc / p_full:.3f} | max rel. gradient difference {err:.1e}")


if __name__ == "__main__":
    main()
