"""Peak memory and time of gradient checkpointing on a deep chain, on one thread.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/bench_checkpoint.py

The chain: L = 64 layers x <- tanh(W_i @ x), x of shape (200, 500) float64 (0.8 MB per
activation), W_i (200, 200), loss = sum(x**2); the gradient is taken with respect to the
input and all 64 weights. Without checkpointing every layer keeps its matmul output and
its tanh output on the graph (O(L) activations). With ``tf.checkpoint`` around each of
S = 8 segments of 8 layers, the graph keeps only the segment boundaries and the
backward pass holds the intermediates of one segment at a time (O(L/S + S)), for one
extra forward evaluation of every segment.

Peak memory is measured by tracemalloc (NumPy reports its data allocations to it),
from before the forward pass to after the gradients are returned (the weights and the
input are made before); the returned gradients are part of the peak, so it is also
shown without them. Two cases: the gradient with respect to the input and all 64
weights (20 MB of gradients whatever the schedule), and with respect to the input only.
Times are medians of 3 runs without tracemalloc.
"""
import os
import time
import tracemalloc

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402

LAYERS, SEGMENTS, WIDTH, BATCH = 64, 8, 200, 500


def segment(x, *weights):
    for w in weights:
        x = tf.tanh(w @ x)
    return x


def loss(x, weights, checkpointed):
    per = LAYERS // SEGMENTS
    run = tf.checkpoint(segment) if checkpointed else segment
    for s in range(SEGMENTS):
        x = run(x, *weights[s * per:(s + 1) * per])
    return tf.sum(x ** 2)


def leaves(x0, w0, weights_grad):
    x = tf.tensor(x0, requires_grad=True)
    ws = [tf.tensor(w, requires_grad=weights_grad) for w in w0]
    return x, ws


def gradients(x, ws, checkpointed):
    wanted = [x] + [w for w in ws if w.requires_grad]
    return tf.grad(loss(x, ws, checkpointed), wanted)


def peak_mb(x, ws, checkpointed):
    """Peak traced memory (MB) of one forward + backward, the inputs excluded."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    gs = gradients(x, ws, checkpointed)
    peak = (tracemalloc.get_traced_memory()[1] - base) / 2**20
    tracemalloc.stop()
    return peak, sum(g.numpy().nbytes for g in gs) / 2**20


def median_s(x, ws, checkpointed, repeat=3):
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        gradients(x, ws, checkpointed)
        runs.append(time.perf_counter() - t0)
    return float(np.median(runs))


def main():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((WIDTH, BATCH))
    w0 = [rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH) for _ in range(LAYERS)]
    print(f"chain: {LAYERS} layers tanh(W @ x), x {x0.shape} float64 "
          f"({x0.nbytes / 2**20:.2f} MB per activation), {SEGMENTS} checkpointed segments "
          f"of {LAYERS // SEGMENTS} layers")
    print(f"{'gradient w.r.t.':18s}{'checkpoint':>11s}{'peak MB':>9s}{'grads MB':>9s}"
          f"{'peak-grads':>11s}{'time s':>8s}")
    for weights_grad in (True, False):
        x, ws = leaves(x0, w0, weights_grad)
        ref = gradients(x, ws, False)
        ck = gradients(x, ws, True)
        err = max(float(np.max(np.abs(a.numpy() - b.numpy()))) for a, b in zip(ref, ck))
        del ref, ck
        row = {}
        for checkpointed in (False, True):
            peak, grads = peak_mb(x, ws, checkpointed)
            row[checkpointed] = (peak, grads, median_s(x, ws, checkpointed))
            what = "x and all W" if weights_grad else "x only"
            print(f"{what:18s}{str(checkpointed):>11s}{peak:9.1f}{grads:9.1f}"
                  f"{peak - grads:11.1f}{row[checkpointed][2]:8.3f}")
        (p0, g0, t0), (p1, g1, t1) = row[False], row[True]
        print(f"  -> peak {p0 / p1:.2f}x lower ({(p0 - g0) / (p1 - g1):.2f}x lower above the "
              f"returned gradients), time {t1 / t0:.2f}x, max |grad difference| {err:.1e}")


if __name__ == "__main__":
    main()
