"""Cost of NumPy's and SciPy's two OpenBLAS thread pools spinning against each other.

    python scripts/bench_blas_pools.py [--sizes 64 200 600] [--rounds 3]

A loop alternates tenferro's einsum (NumPy's OpenBLAS) and svd (SciPy's OpenBLAS, through
tenferro's LAPACK driver) on n x n matrices, as every tensor-network loop does. Each
configuration runs in its own process (a library reads its environment once), the
configurations interleaved round by round; prints the median time per step and its ratio
to the one-thread run:

* ``one thread``      OPENBLAS_NUM_THREADS=1;
* ``OpenBLAS spin``   OPENBLAS_THREAD_TIMEOUT=28: OpenBLAS's default, idle threads spin
  2^28 cycles (~0.1 s) before sleeping (tenferro leaves a value the user set alone);
* ``tenferro``        nothing set: tenferro shortens the spin to 2^BLAS_SPIN cycles at
  import (tenferro/_threads.py, "Two OpenBLAS thread pools").

Exits non-zero when the tenferro configuration is more than 1.5x the one-thread time at
the largest size (where threads should help, not hurt), or when a run fails.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

STEP = r"""
import sys, time
import numpy as np
import tenferro as tf
n = int(sys.argv[1])
rng = np.random.default_rng(0)
a, b = tf.tensor(rng.standard_normal((n, n))), tf.tensor(rng.standard_normal((n, n)))
def step():
    return tf.linalg.svd(tf.einsum("ij,jk->ik", a, b))
step()
k = max(3, int(5e7 / n ** 3))
times = []
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(k):
        step()
    times.append((time.perf_counter() - t0) / k)
print(sorted(times)[2])
"""

CONFIGS = [("one thread", {"OPENBLAS_NUM_THREADS": "1"}),
           ("OpenBLAS spin", {"OPENBLAS_THREAD_TIMEOUT": "28"}),
           ("tenferro", {})]


def run(n: int, env: dict[str, str]) -> float:
    base = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_THREAD_TIMEOUT")}
    out = subprocess.run([sys.executable, "-c", STEP, str(n)], env={**base, **env},
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 200, 600])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; einsum + svd "
          f"of n x n per step, median over {args.rounds} interleaved rounds")
    ok = True
    for n in args.sizes:
        times: dict[str, list[float]] = {name: [] for name, _ in CONFIGS}
        for r in range(args.rounds):
            for name, env in (CONFIGS if r % 2 == 0 else CONFIGS[::-1]):
                times[name].append(run(n, env))
        one = statistics.median(times["one thread"])
        cells = [f"{name} {statistics.median(ts) * 1e3:8.2f} ms "
                 f"({statistics.median(ts) / one:4.2f}x)" for name, ts in times.items()]
        print(f"n = {n:4d}: " + "  ".join(cells), flush=True)
        if n == max(args.sizes) and statistics.median(times["tenferro"]) > 1.5 * one:
            print(f"FAIL: at n = {n} the default configuration is more than 1.5x the "
                  f"one-thread time")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
