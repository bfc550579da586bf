"""Speedup of tenferro.distributed.map_value_and_grad with 2 worker processes over 1,
against the same pools doing the same arithmetic in plain NumPy (the machine's ceiling).

    python scripts/bench_distributed.py [--executor pool|dask] [--shards 8] [--reps 11]
                                        [--n 3000] [--d 600]

Each shard is a BLAS-bound piece: loss = Σ tanh(X W) for X of n×d and W of d×d, one GEMM
forward and one in the pullback (~130 ms on one thread at the defaults). Every process
runs one BLAS thread (set before NumPy is imported; spawned workers inherit it).

Timed, on a 1-worker and a 2-worker process pool (or Dask LocalCluster), interleaved call by call (the machine
is a shared virtual one whose speed drifts, so only ratios of neighbouring calls mean
anything):

* ``numpy``  — the ceiling: each worker computes the shard's value and gradient by hand
  in NumPy (the shards generated on the worker, so nothing but W and the gradient
  travels); no tenferro anywhere;
* ``list``   — map_value_and_grad with the shards as a list (hashed on every call, so a
  shard changed in place is never used stale);
* ``Shards`` — map_value_and_grad with a ``tf.distributed.Shards`` handle (hashed once).

Prints, for each, the median time per call, the speedup of 2 workers over 1 (ratio of
medians, and the median of the ratios of neighbouring calls), tenferro's speedup as a
fraction of the NumPy ceiling's, the serial fraction s that Amdahl's law
T(n) = T(1)(s + (1-s)/n) gives, the driver's own CPU per call, and the bytes a call
moves. Checks that 1 and 2 workers return bitwise the same value and gradient, equal to
the serial run's and the NumPy twin's up to rounding; exits non-zero when they disagree.
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
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro.distributed import Shards, map_value_and_grad  # noqa: E402


def make_data(n_shards: int, n: int, d: int) -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(0)
    shards = [rng.standard_normal((n, d)) / np.sqrt(d) for _ in range(n_shards)]
    return shards, rng.standard_normal((d, d))


def tanh_loss(w, x):
    return tf.tanh(tf.as_tensor(x) @ w).sum()


_WORKER_SHARDS: dict[tuple[int, int, int], list[np.ndarray]] = {}


def numpy_value_and_grad(w: np.ndarray, x: Any, shape: tuple[int, int, int]):
    """The ceiling's task: a shard's value and gradient by hand. ``x`` is the shard (a
    Dask worker resolves a scattered shard's future) or its index (a pool's worker makes
    the shards itself, once)."""
    if isinstance(x, int):
        if shape not in _WORKER_SHARDS:
            _WORKER_SHARDS[shape] = make_data(*shape)[0]
        x = _WORKER_SHARDS[shape][x]
    y = np.tanh(x @ w)
    return y.sum(), x.T @ (1.0 - y * y)


def numpy_call(ex, w, shape, shards):
    client = getattr(ex, "_client", None)
    if client is not None:        # Dask: W goes to each worker once, as tenferro sends it
        [w] = client.scatter([w], broadcast=True, hash=False)
    futures = [ex.submit(numpy_value_and_grad, w, x, shape) for x in shards]
    value, grad = futures[0].result()
    for fu in futures[1:]:
        v, g = fu.result()
        value, grad = value + v, grad + g
    return value, grad


def make_executors(kind: str) -> tuple[dict[int, Any], list[Any]]:
    """{number of workers: executor} for 1 and 2 workers, and what closes them."""
    if kind == "pool":
        ctx = multiprocessing.get_context("spawn")
        pools = {k: concurrent.futures.ProcessPoolExecutor(k, mp_context=ctx) for k in (1, 2)}
        return pools, [ex.shutdown for ex in pools.values()]
    import distributed    # dask[distributed]
    one_thread = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                   "MKL_NUM_THREADS")}
    executors, closers = {}, []
    for k in (1, 2):
        cluster = distributed.LocalCluster(n_workers=k, threads_per_worker=1, processes=True,
                                           dashboard_address=None, env=one_thread)
        client = distributed.Client(cluster)
        executors[k] = client.get_executor()
        closers += [client.close, cluster.close]
    return executors, closers


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--d", type=int, default=600)
    ap.add_argument("--executor", choices=("pool", "dask"), default="pool",
                    help="a spawn ProcessPoolExecutor, or a Dask LocalCluster's "
                         "client.get_executor() (worker processes, one thread each)")
    ap.add_argument("--warmup", type=int, default=3,
                    help="calls per pool and kind before timing (workers start, import "
                         "tenferro and receive the shards: a pool cannot send a task to a "
                         "chosen worker, so tasks carry a shard until every worker has "
                         "reported holding it)")
    args = ap.parse_args()
    shape = (args.shards, args.n, args.d)
    shards, w = make_data(*shape)

    t0, c0 = time.perf_counter(), time.process_time()
    v_serial, g_serial = map_value_and_grad(tanh_loss, shards, w)
    t_serial, c_serial = time.perf_counter() - t0, time.process_time() - c0
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"serial (driver): {t_serial:.2f} s per call ({c_serial:.2f} s CPU), "
          f"{c_serial / args.shards * 1e3:.0f} ms CPU per shard", flush=True)

    handle = Shards(shards)      # hashed once, read-only copies
    runs = {
        "numpy": lambda ex: numpy_call(ex, w, shape, ceiling_shards[ex]),
        "list": lambda ex: map_value_and_grad(tanh_loss, shards, w, executor=ex),
        "Shards": lambda ex: map_value_and_grad(tanh_loss, handle, w, executor=ex),
    }
    pools, closers = make_executors(args.executor)
    ceiling_shards = {ex: (ex._client.scatter(shards, broadcast=True, hash=False)
                           if args.executor == "dask" else range(len(shards)))
                      for ex in pools.values()}
    configs = [(kind, k) for kind in runs for k in pools]
    times: dict[tuple[str, int], list[float]] = {c: [] for c in configs}
    driver_cpu: dict[str, list[float]] = {kind: [] for kind in runs}
    results: dict[tuple[str, int], tuple[float, np.ndarray]] = {}
    try:
        for kind, k in configs:            # warm-up: start, import, receive shards
            for _ in range(max(args.warmup, 1)):
                results[kind, k] = runs[kind](pools[k])
        print(f"warmed up; timing {args.reps} rounds of {len(configs)} calls", flush=True)
        for rep in range(args.reps):
            for kind, k in (configs if rep % 2 == 0 else configs[::-1]):
                t0, c0 = time.perf_counter(), time.process_time()
                v, g = runs[kind](pools[k])
                times[kind, k].append(time.perf_counter() - t0)
                driver_cpu[kind].append(time.process_time() - c0)
                if kind != "numpy" and (v != results[kind, k][0]
                                        or not np.array_equal(g, results[kind, k][1])):
                    print(f"FAIL: {kind} on {k} worker(s) changed its result between calls")
                    return 1
    finally:
        for close in closers:
            close()

    print(f"load average {os.getloadavg()[0]:.1f} after the runs")
    speedups = {}
    for kind in runs:
        t1, t2 = times[kind, 1], times[kind, 2]
        speedups[kind] = speedup = statistics.median(t1) / statistics.median(t2)
        paired = statistics.median(a / b for a, b in zip(t1, t2))
        s = min(1.0, max(0.0, 2 / speedup - 1))   # (1: no speedup, a saturated machine)
        print(f"{kind}:")
        for k in pools:
            ts = times[kind, k]
            print(f"  {k} worker{'s' if k > 1 else ' '}: median {statistics.median(ts):.3f} s "
                  f"per call ({', '.join(f'{t:.3f}' for t in ts)})")
        line = (f"  speedup 2 vs 1: {speedup:.2f}x (median of neighbouring-call ratios "
                f"{paired:.2f}x)")
        if kind != "numpy":
            line += f"; {speedup / speedups['numpy']:.0%} of the NumPy ceiling's"
        print(line)
        print(f"  Amdahl serial fraction s = {s:.3f}: bound for 64 workers "
              f"1/(s + (1-s)/64) = {1 / (s + (1 - s) / 64):.1f}x")
        c_driver = statistics.median(driver_cpu[kind])
        s_cpu = c_driver / (c_driver + c_serial)
        print(f"  driver CPU per call: {c_driver * 1e3:.1f} ms = serial fraction {s_cpu:.4f} "
              f"of the call's CPU (load-independent); Amdahl bound for 64 workers "
              f"{1 / (s_cpu + (1 - s_cpu) / 64):.1f}x")
    if min(speedups.values()) < 1.2:
        print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: the "
              f"workers share the cores with other processes, so wall-clock speedup is "
              f"not measurable here; the driver-CPU lines are)")
    print(f"bytes per call: {args.shards} tasks x (params {w.nbytes / 1e6:.1f} MB + gradient "
          f"{w.nbytes / 1e6:.1f} MB) = {args.shards * 2 * w.nbytes / 1e6:.1f} MB; shards "
          f"{sum(x.nbytes for x in shards) / 1e6:.0f} MB sent once")

    v1, g1 = results["Shards", 1]
    ok = all(results[kind, k][0] == v1 and np.array_equal(results[kind, k][1], g1)
             for kind in ("list", "Shards") for k in pools)
    ok = ok and bool(np.isclose(v1, v_serial, rtol=1e-12)
                     and np.allclose(g1, g_serial, rtol=1e-10, atol=1e-10))
    vn, gn = results["numpy", 2]
    ok = ok and bool(np.isclose(v1, vn, rtol=1e-12) and np.allclose(g1, gn, rtol=1e-9,
                                                                      atol=1e-9))
    print("values: list/Shards on 1 and 2 workers bitwise equal; serial and the NumPy twin "
          "within rounding:", "OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
