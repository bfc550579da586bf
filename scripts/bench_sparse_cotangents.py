"""Many scalar indexings of one tensor: the cost of accumulating their cotangents.

(a) x of shape (n, n, n, n) with requires_grad; loss = sum over a, b of x[a, b, a, b]
    written as n^2 scalar index operations (the TRG example's ``--trace loop``). Times
    tf.grad(loss, x) (plain backward) and tf.grad(loss, x, create_graph=True), medians.
(b) examples/trg_ising.py at one beta point (lnZ, u, c: one forward, a create_graph
    reverse pass, a second reverse pass) with --trace loop and --trace einsum, and, if
    PyTorch is importable, the same algorithm in PyTorch (scripts/trg_torch.py).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/bench_sparse_cotangents.py
    python scripts/bench_sparse_cotangents.py --only a --n 24 --repeat 5
    python scripts/bench_sparse_cotangents.py --only b --chi 24 --iterations 20

Each workload is also timed with the pullbacks of getitem, take and diagonal swapped back
to the dense scatters they were before the sparse cotangents ("dense", the baseline of
the same run); "sparse" is the library as it is.
"""
import contextlib
import argparse
import importlib.util
import os
import pathlib
import statistics
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # before NumPy is imported

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def dense_pullbacks():
    """The former pullbacks: a dense scatter of the cotangent into zeros per use."""
    from tenferro._ops import manipulation, structure
    from tenferro._ops.registry import OPS
    dense = {
        "getitem": lambda ctx, needs, gs, xs, ys: (
            structure._scatter(gs[0], ctx[0], xs[0].shape, ctx[1]),),
        "take": lambda ctx, needs, gs, xs, ys: (manipulation._scatter(gs[0], ctx),),
        "diagonal": lambda ctx, needs, gs, xs, ys: (
            structure._embed(gs[0], xs[0].shape, ctx),),
    }
    saved = {name: OPS[name].vjp for name in dense}
    try:
        for name, vjp in dense.items():
            OPS[name].vjp = vjp
        yield
    finally:
        for name, vjp in saved.items():
            OPS[name].vjp = vjp


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def median_s(fn, repeat):
    fn()   # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def diag_loss(x, n):
    total = tf.zeros((), dtype=x.dtype)
    for a in range(n):
        for b in range(n):
            total = total + x[a, b, a, b]
    return total


def part_a(n, repeat):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((n,) * 4)
    ref = np.zeros_like(x0)
    for a in range(n):
        for b in range(n):
            ref[a, b, a, b] += 1.0

    def forward():
        x = tf.tensor(x0, requires_grad=True)
        return x, diag_loss(x, n)

    def plain():
        x, loss = forward()
        (g,) = tf.grad(loss, x)
        return g

    def create_graph():
        x, loss = forward()
        (g,) = tf.grad(loss, x, create_graph=True)
        return g

    print(f"(a) x shape {(n,) * 4}, loss = sum of {n * n} scalar x[a, b, a, b]; medians of "
          f"{repeat}; backward = (forward + grad) - forward")
    for label, switch in (("dense", dense_pullbacks), ("sparse", contextlib.nullcontext)):
        with switch():
            np.testing.assert_array_equal(plain().numpy(), ref)
            np.testing.assert_array_equal(create_graph().numpy(), ref)
            t_fwd = median_s(forward, repeat)
            t_plain = median_s(plain, repeat)
            t_cg = median_s(create_graph, repeat)
        print(f"    {label:6s} forward {t_fwd * 1e3:7.2f} ms   backward "
              f"{(t_plain - t_fwd) * 1e3:8.2f} ms   backward(create_graph) "
              f"{(t_cg - t_fwd) * 1e3:8.2f} ms")


def part_b(chi, iterations, beta, repeat):
    trg = _load(ROOT / "examples" / "trg_ising.py", "_trg_ising")
    rows = {}
    for trace in ("loop", "einsum"):
        res = trg.thermodynamics(beta, chi, iterations, trace)
        t = median_s(lambda: trg.thermodynamics(beta, chi, iterations, trace), repeat)
        rows[trace] = (t, res)
    with dense_pullbacks():
        t_dense = median_s(lambda: trg.thermodynamics(beta, chi, iterations, "loop"), repeat)
    torch_t = None
    try:
        import torch  # noqa: F401
    except ImportError:
        print("(b) PyTorch is not importable: no comparison")
    else:
        tt = _load(ROOT / "scripts" / "trg_torch.py", "_trg_torch")
        torch_t = {}
        for trace in ("loop", "einsum"):
            res = tt.thermodynamics(beta, chi, iterations, trace)
            t = median_s(lambda: tt.thermodynamics(beta, chi, iterations, trace), repeat)
            torch_t[trace] = (t, res)
    print(f"(b) TRG chi={chi}, {iterations} iterations, beta={beta}: seconds per point "
          f"(lnZ, u, c), median of {repeat}")
    for trace in ("loop", "einsum"):
        t, (lnz, u, c) = rows[trace]
        line = f"    tenferro --trace {trace:6s} {t:7.3f} s  lnZ={lnz:.12f} u={u:.10f} c={c:.6f}"
        if torch_t is not None:
            tt_, (lnz_t, u_t, c_t) = torch_t[trace]
            line += (f"\n    torch    --trace {trace:6s} {tt_:7.3f} s  lnZ={lnz_t:.12f} "
                     f"u={u_t:.10f} c={c_t:.6f}\n    ratio tenferro/torch {t / tt_:.2f}")
        print(line)
    print(f"    tenferro --trace loop with the dense pullbacks (before): {t_dense:7.3f} s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=("a", "b"))
    p.add_argument("--n", type=int, default=24)
    p.add_argument("--chi", type=int, default=24)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--beta", type=float, default=0.44)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    tape = "pure Python" if os.environ.get("TENFERRO_PURE_PYTHON") else "compiled"
    print(f"tenferro tape: {tape}")
    if args.only in (None, "a"):
        part_a(args.n, args.repeat)
    if args.only in (None, "b"):
        part_b(args.chi, args.iterations, args.beta, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
