"""Batched linear algebra on 1 vs 2 threads (tenferro._threads): a stack of 1000 8 x 8
and of 100 32 x 32 float64 matrices through svd, eigh, cholesky, solve and qr, forward
alone and forward + backward (tf.grad with random cotangents on every output), and the
compiled kernels alone. OPENBLAS_NUM_THREADS=1 (OpenBLAS runs each small call on one
thread anyway); the thread count is set with tf.set_num_threads, the two counts timed
alternately in the same run (medians of --repeat rounds, wall clock).

    OPENBLAS_NUM_THREADS=1 python scripts/bench_threads.py [--repeat 15] [--quick] [--small N]

--small N sets the largest side that potrf/getrf/getrs and the Cholesky backprop run as
plain loops instead of LAPACK/BLAS (tenferro/_kernels/_small.pxd; default 16): --small 0
measures the LAPACK/BLAS path, which stays serial (tenferro._threads.BLAS3_LOCKED).

Columns: median ms on 1 and 2 threads, the speedup, and the cores the 2-thread runs
really got (process CPU time / wall time; ~1 means another process held the second core
and the speedup says nothing; a split stack's thread overhead shows as cores > speedup,
and so does the ~200 µs an idle worker spins after each call, tenferro/_kernels/
_workers.pyx). Each timed round follows one untimed call, so that it measures the
steady state of a loop (workers awake) rather than their wake-up after the other
thread count's round.
The speedup of forward + backward is bounded by the NumPy work of the backward rules
(batched matmul, elementwise), which runs on one thread whatever tf.set_num_threads says
(Amdahl).
"""
import argparse
import os
import sys
import time
import timeit

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro._kernels import (inverse, lapack_eig, lapack_lu_chol,  # noqa: E402
                               lapack_qr, spectral, triangular_backprop)


def _cases(nb, n, rng):
    a = rng.standard_normal((nb, n, n))
    spd = a @ a.transpose(0, 2, 1) / n + np.eye(n)
    rhs = rng.standard_normal((nb, n, 2))
    A, S, R = (tf.tensor(x, requires_grad=True) for x in (a, spd, rhs))

    def fwd_bwd(f, leaves):
        outs = f()
        outs = outs if isinstance(outs, tuple) else (outs,)
        gs = [rng.standard_normal(o.shape) for o in outs]

        def run():
            o = f()
            tf.grad(list(o if isinstance(o, tuple) else (o,)), leaves, gs)
        return run

    svd = lambda: tf.linalg.svd(A, full_matrices=False)         # noqa: E731
    eigh = lambda: tf.linalg.eigh(S)                              # noqa: E731
    chol = lambda: tf.linalg.cholesky(S)                          # noqa: E731
    solve = lambda: tf.linalg.solve(A, R)                         # noqa: E731
    qr = lambda: tf.linalg.qr(A)                                  # noqa: E731
    u, s, vt = lapack_eig.svd(a)
    w, v = lapack_eig.eigh(spd)
    q, r = lapack_qr.qr(a)
    lfac = lapack_lu_chol.potrf(spd)
    lu, piv = lapack_lu_chol.getrf(a)
    X = rng.standard_normal((nb, n, n))
    gq, gr, gl = (rng.standard_normal((nb, n, n)) for _ in range(3))

    def svd_core():
        spectral.svd_core(X, X, s, s, 0.0, 1e-12, 0, np.empty((nb, n, n)), np.empty((nb, n)))

    def eigh_core():
        spectral.eigh_core(X, w, w, 0.0, 1e-12, np.empty((nb, n, n)))

    return [
        ("svd fwd", svd), ("svd fwd+bwd", fwd_bwd(svd, [A])),
        ("eigh fwd", eigh), ("eigh fwd+bwd", fwd_bwd(eigh, [S])),
        ("cholesky fwd", chol), ("cholesky fwd+bwd", fwd_bwd(chol, [S])),
        ("solve fwd", solve), ("solve fwd+bwd", fwd_bwd(solve, [A, R])),
        ("qr fwd", qr), ("qr fwd+bwd", fwd_bwd(qr, [A])),
        ("kernel gesdd", lambda: lapack_eig.svd(a)),
        ("kernel svd_core", svd_core),
        ("kernel syevd", lambda: lapack_eig.eigh(spd)),
        ("kernel eigh_core", eigh_core),
        ("kernel potrf", lambda: lapack_lu_chol.potrf(spd)),
        ("kernel chol_backprop", lambda: triangular_backprop.cholesky_backprop(lfac, gl)),
        ("kernel getrf", lambda: lapack_lu_chol.getrf(a)),
        ("kernel getrs", lambda: lapack_lu_chol.getrs(lu, piv, rhs)),
        ("kernel geqrf+orgqr", lambda: lapack_qr.qr(a)),
        ("kernel qr_backprop", lambda: triangular_backprop.qr_backprop(q, r, gq, np.triu(gr))),
    ]


def _medians(fn, counts, repeat):
    """Median wall seconds per call under each thread count, timed alternately (each
    round after one untimed call), and the median cores in use (process CPU time / wall
    time) of the last count."""
    timer = timeit.Timer(fn)
    tf.set_num_threads(1)
    number = max(1, timer.autorange()[0] // 5)
    samples = {t: [] for t in counts}
    cores = []
    for _ in range(repeat):
        for t in counts:
            tf.set_num_threads(t)
            # one untimed call first: the native workers sleep after ~200 µs idle (the
            # other count's round), and the first split call after that waits for the
            # OS to wake them (up to milliseconds on a VM); a loop that keeps calling
            # finds them awake, and that steady state is what is timed
            fn()
            c0 = time.process_time()
            samples[t].append(timer.timeit(number) / number)
            cores.append((time.process_time() - c0) / number / samples[t][-1])
    return [float(np.median(samples[t])) for t in counts] + [float(np.median(cores[1::2]))]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--quick", action="store_true", help="1000 8x8 only, 5 rounds")
    p.add_argument("--small", type=int, default=None,
                   help="largest side of the plain-loop kernels (0: LAPACK/BLAS path)")
    args = p.parse_args(argv)
    if args.small is not None:
        for mod in (lapack_lu_chol, triangular_backprop, inverse):
            mod._set_small(args.small)
        print(f"plain-loop kernels up to side {args.small}")
    repeat = 5 if args.quick else args.repeat
    shapes = [(1000, 8)] if args.quick else [(1000, 8), (100, 32)]
    old = tf.get_num_threads()
    print(f"{'stack':>10} {'case':<22} {'1 thread ms':>12} {'2 threads ms':>13} {'speedup':>8}"
          f" {'cores used':>10}")
    try:
        for nb, n in shapes:
            rng = np.random.default_rng(0)
            for name, fn in _cases(nb, n, rng):
                t1, t2, used = _medians(fn, (1, 2), repeat)
                print(f"{nb:>5}x{n}x{n} {name:<22} {t1 * 1e3:>12.3f} {t2 * 1e3:>13.3f} "
                      f"{t1 / t2:>7.2f}x {used:>10.2f}", flush=True)
    finally:
        tf.set_num_threads(old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
