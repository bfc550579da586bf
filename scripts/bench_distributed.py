"""Speedup of tenferro.distributed.map_value_and_grad with 2 worker processes over 1.

    python scripts/bench_distributed.py [--shards 8] [--reps 5] [--n 3000] [--d 600]

Each shard is a BLAS-bound piece (loss = Σ tanh(X W) for X of n×d, W of d×d: one GEMM
forward, two in the pullback, a few hundred ms on one thread). Every process runs one
BLAS thread (the environment is set before NumPy is imported, and spawned workers
inherit it). Calls on a 1-worker and a 2-worker process pool are interleaved (the machine
is shared), after --warmup calls each (8: workers start, import tenferro, receive the
shards). Prints the median time per call, the speedup, the serial fraction s that
Amdahl's law T(n) = T(1)(s + (1-s)/n) gives for it, the driver's own CPU per call (the
serial part measured without the other agents' load: hashing the shards, pickling the
parameters, adding the results) against the CPU of the shards, the bytes a call moves,
and checks
that the two pools return bitwise the same value and gradient, equal to the serial run's
up to rounding. Exits non-zero when the values disagree.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import concurrent.futures  # noqa: E402
import multiprocessing  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro.distributed import map_value_and_grad  # noqa: E402


def tanh_loss(w, x):
    return tf.tanh(tf.as_tensor(x) @ w).sum()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--d", type=int, default=600)
    ap.add_argument("--warmup", type=int, default=8,
                    help="calls per pool before timing: a pool cannot send a task to a "
                         "given worker, so a worker receives a shard the first time a task "
                         "of it lands there (a second round trip); the timed calls are the "
                         "steady state once the workers hold the shards")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    shards = [rng.standard_normal((args.n, args.d)) / np.sqrt(args.d)
              for _ in range(args.shards)]
    w = rng.standard_normal((args.d, args.d))

    t0, c0 = time.perf_counter(), time.process_time()
    v_serial, g_serial = map_value_and_grad(tanh_loss, shards, w)
    t_serial, c_serial = time.perf_counter() - t0, time.process_time() - c0
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"serial (driver): {t_serial:.2f} s per call ({c_serial:.2f} s CPU), "
          f"{c_serial / args.shards * 1e3:.0f} ms CPU per shard")

    ctx = multiprocessing.get_context("spawn")
    pools = {k: concurrent.futures.ProcessPoolExecutor(k, mp_context=ctx) for k in (1, 2)}
    times: dict[int, list[float]] = {1: [], 2: []}
    driver_cpu: list[float] = []      # the driver's own work in a pool call
    results = {}
    try:
        for k, ex in pools.items():            # warm-up: start, import, receive shards
            for _ in range(max(args.warmup, 1)):
                results[k] = map_value_and_grad(tanh_loss, shards, w, executor=ex)
        for rep in range(args.reps):
            for k in ((1, 2) if rep % 2 == 0 else (2, 1)):
                t0, c0 = time.perf_counter(), time.process_time()
                v, g = map_value_and_grad(tanh_loss, shards, w, executor=pools[k])
                times[k].append(time.perf_counter() - t0)
                driver_cpu.append(time.process_time() - c0)
                if v != results[k][0] or not np.array_equal(g, results[k][1]):
                    print(f"FAIL: {k} worker(s) changed its result between calls")
                    return 1
    finally:
        for ex in pools.values():
            ex.shutdown()

    t1, t2 = statistics.median(times[1]), statistics.median(times[2])
    speedup = t1 / t2
    s = min(1.0, max(0.0, 2 * t2 / t1 - 1))   # (1: no speedup at all, a saturated machine)
    per_task = w.nbytes * 2                  # params out, gradient back
    print(f"1 worker : median {t1:.3f} s per call ({', '.join(f'{t:.3f}' for t in times[1])})")
    print(f"2 workers: median {t2:.3f} s per call ({', '.join(f'{t:.3f}' for t in times[2])})")
    if speedup < 1.2:
        print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: the "
              f"workers share the cores with other processes, so wall-clock speedup is "
              f"not measurable here; the driver-CPU line below is)")
    print(f"speedup 2 vs 1: {speedup:.2f}x (efficiency {speedup / 2:.0%}); "
          f"Amdahl serial fraction s = {s:.3f}; bound for 64 workers "
          f"1/(s + (1-s)/64) = {1 / (s + (1 - s) / 64):.1f}x")
    c_driver = statistics.median(driver_cpu)
    s_cpu = c_driver / (c_driver + c_serial)
    print(f"driver CPU per pool call (hash shards, pickle params, add results): "
          f"{c_driver * 1e3:.1f} ms = serial fraction {s_cpu:.4f} of the call's CPU "
          f"(load-independent); Amdahl bound for 64 workers {1 / (s_cpu + (1 - s_cpu) / 64):.1f}x")
    print(f"bytes per call: {args.shards} tasks x (params {w.nbytes / 1e6:.1f} MB + gradient "
          f"{w.nbytes / 1e6:.1f} MB) = {args.shards * per_task / 1e6:.1f} MB; shards "
          f"{sum(x.nbytes for x in shards) / 1e6:.0f} MB sent once")

    ok = (results[1][0] == results[2][0] and np.array_equal(results[1][1], results[2][1])
          and np.isclose(results[1][0], v_serial, rtol=1e-12)
          and np.allclose(results[1][1], g_serial, rtol=1e-10, atol=1e-10))
    print("values: 1 and 2 workers bitwise equal, serial within rounding:",
          "OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
