"""Fit a logistic regression to sharded data on a Dask cluster with scipy.optimize.

The negative log-likelihood is a sum over shards of data; ``tenferro.distributed.
map_value_and_grad`` evaluates each shard's value and gradient on a worker of a
``LocalCluster`` (2 worker processes, one BLAS thread each; on a real cluster only the
``Client`` changes) and adds them on the driver in shard order, so the value and
gradient, and therefore every L-BFGS-B iterate, are bit for bit those of the serial
run. Each shard (20 000 × 4 floats) is sent to the workers once, not per iteration,
and wrapped in a ``Shards`` handle it is hashed once, not per iteration.

    python examples/distributed_fit.py [--shards 4] [--rows 20000]

Synthetic data (seeded): features x ~ N(0, 1), labels y ~ Bernoulli(σ(x·w_true)). Prints
one line per iteration with the elapsed time, then checks that the cluster's fit equals
the serial fit (same data, executor=None) and is within 0.1 of w_true. Exits with status
1 if either check fails.
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"        # one BLAS thread here and in the workers (inherited)

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro.distributed import Shards, map_value_and_grad  # noqa: E402

W_TRUE = np.array([1.5, -2.0, 0.5, 1.0])


def nll(w, shard):
    """The negative log-likelihood of one shard: Σ log(1 + e^z) − y z, z = x·w."""
    x, y = shard
    z = tf.as_tensor(x) @ w
    return (tf.logaddexp(0.0, z) - tf.as_tensor(y) * z).sum()


def make_shards(n_shards, rows, seed=0, w_true=None):
    w_true = W_TRUE if w_true is None else w_true
    rng = np.random.default_rng(seed)
    shards = []
    for _ in range(n_shards):
        x = rng.standard_normal((rows, w_true.size))
        p = 1.0 / (1.0 + np.exp(-(x @ w_true)))
        shards.append((x, (rng.uniform(size=rows) < p).astype(np.float64)))
    return shards


def fit(shards, executor, label):
    t0 = time.perf_counter()
    it = [0]

    def progress(w):
        it[0] += 1
        print(f"  {label} iteration {it[0]:2d}  {time.perf_counter() - t0:6.2f} s  "
              f"w = {np.array2string(w, precision=4)}", flush=True)

    res = minimize(lambda w: map_value_and_grad(nll, shards, w, executor=executor),
                   np.zeros(W_TRUE.size), jac=True, method="L-BFGS-B", callback=progress,
                   options={"gtol": 1e-8})
    print(f"  {label}: {res.nit} iterations, {res.nfev} evaluations, "
          f"{time.perf_counter() - t0:.2f} s, loss {res.fun:.6f}")
    return res


def main(argv=None, use_cluster=True):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--rows", type=int, default=20000)
    args = ap.parse_args(argv)
    # copied read-only and hashed once: an iteration sends each worker 16-byte tokens
    shards = Shards(make_shards(args.shards, args.rows))

    print(f"{args.shards} shards of {args.rows} rows; serial fit (executor=None):")
    serial = fit(shards, None, "serial")
    if use_cluster:
        from dask.distributed import Client, LocalCluster
        t0 = time.perf_counter()
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            print(f"LocalCluster with 2 worker processes started in "
                  f"{time.perf_counter() - t0:.1f} s; fit on it:")
            dist = fit(shards, client.get_executor(), "cluster")
    else:
        dist = serial

    ok = True
    same = np.array_equal(dist.x, serial.x)
    print(f"cluster fit == serial fit bit for bit: {same}")
    if not np.allclose(dist.x, serial.x, rtol=1e-10, atol=1e-12):
        print("FAIL: the cluster's fit differs from the serial fit")
        ok = False
    err = np.abs(dist.x - W_TRUE).max()
    print(f"w = {np.array2string(dist.x, precision=4)}, w_true = {W_TRUE}, "
          f"max error {err:.3f}")
    if err > 0.1:
        print("FAIL: the fit is more than 0.1 from w_true")
        ok = False
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
