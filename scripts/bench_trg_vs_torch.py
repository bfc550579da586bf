"""examples/trg_ising.py against the same program in PyTorch (scripts/trg_torch.py), side
by side in one run: per beta, ln Z (forward), u (a create_graph grad) and c (a second
grad), one thread, interleaved repeats, medians and the ratio tenferro / torch.

    python scripts/bench_trg_vs_torch.py --chi 24 --iterations 20 --repeat 5

Exits 1 when the results of the two disagree (ln Z, u and c to 1e-4 relative: torch's broadened svd has no degenerate blocks), or when
--target is given and the median ratio of the whole program is above it.
"""
import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tenferro(trg, beta, chi, iterations):
    import tenferro as tf
    t0 = time.perf_counter()
    b = tf.tensor(beta, requires_grad=True)
    ln_z = trg.trg_ln_z(b, chi, iterations)
    t1 = time.perf_counter()
    (d1,) = tf.grad([ln_z], [b], create_graph=True)
    t2 = time.perf_counter()
    (d2,) = tf.grad([d1], [b])
    t3 = time.perf_counter()
    return (float(ln_z), -float(d1), beta ** 2 * float(d2)), (t1 - t0, t2 - t1, t3 - t2)


def _torch(trt, beta, chi, iterations):
    import torch
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    b = torch.tensor(beta, dtype=torch.float64, requires_grad=True)
    ln_z = trt.trg_ln_z(b, chi, iterations)
    t1 = time.perf_counter()
    (d1,) = torch.autograd.grad(ln_z, b, create_graph=True)
    t2 = time.perf_counter()
    (d2,) = torch.autograd.grad(d1, b)
    t3 = time.perf_counter()
    return ((float(ln_z.detach()), -float(d1.detach()), beta ** 2 * float(d2)),
            (t1 - t0, t2 - t1, t3 - t2))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chi", type=int, default=24)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--beta", type=float, default=0.44)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--target", type=float, default=None)
    args = p.parse_args(argv)
    trg = _load(ROOT / "examples" / "trg_ising.py", "_trg_ising")
    trt = _load(ROOT / "scripts" / "trg_torch.py", "_trg_torch")
    if trt.torch is None:
        print("PyTorch is not importable; nothing to compare")
        return 0
    runs = {"tenferro": [], "torch": []}
    vals = {}
    for rep in range(args.repeat + 1):                       # the first is a warm-up
        for name, fn, mod in (("tenferro", _tenferro, trg), ("torch", _torch, trt)):
            v, t = fn(mod, args.beta, args.chi, args.iterations)
            vals[name] = v
            if rep:
                runs[name].append(t)
    print(f"TRG chi={args.chi}, {args.iterations} steps, beta={args.beta}, one thread, "
          f"median of {args.repeat} (interleaved)")
    print(f"{'':>9} {'lnZ fwd':>9} {'u grad':>9} {'c grad':>9} {'total':>9}   (lnZ, u, c)")
    med = {}
    for name, ts in runs.items():
        cols = [statistics.median(t[i] for t in ts) for i in range(3)]
        med[name] = statistics.median(sum(t) for t in ts)
        print(f"{name:>9} {cols[0]:>9.3f} {cols[1]:>9.3f} {cols[2]:>9.3f} {med[name]:>9.3f}   "
              f"{tuple(round(x, 10) for x in vals[name])}")
    ratio = med["tenferro"] / med["torch"]
    print(f"ratio tenferro / torch (total): {ratio:.2f}")
    # the programs differ in the treatment of degenerate pairs (tenferro: the exact limit)
    ok = all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(vals["tenferro"], vals["torch"]))
    if not ok:
        print("the two programs disagree: [FAILED]")
        return 1
    if args.target is not None and ratio > args.target:
        print(f"ratio above the target {args.target}: [FAILED]")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
