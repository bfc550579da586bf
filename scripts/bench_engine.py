"""Engine overhead on one thread, as a plain script (a few seconds).

Times the workloads of ``asv_bench/benchmarks/bench_engine.py`` (the same functions,
loaded from that file) with ``timeit.repeat`` and prints the median µs per call, µs per op
for the 100-op chain, and the ratio to the hand-written NumPy baseline. If PyTorch is
importable, its numbers for the same workloads are printed too.

    python scripts/bench_engine.py
"""
import importlib.util
import os
import pathlib
import statistics
import sys
import timeit

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"   # before NumPy is imported (by the module loaded below)

_PATH = pathlib.Path(__file__).resolve().parents[1] / "asv_bench" / "benchmarks" / "bench_engine.py"
_spec = importlib.util.spec_from_file_location("_tenferro_bench_engine", _PATH)
W = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(W)

import numpy as np  # noqa: E402

REPEAT = 7           # timeit repeats; the median of them is reported
TARGET = 0.05        # seconds per repeat, to pick the number of calls per repeat


def median_us(fn):
    """Median over REPEAT runs of the time of one call of ``fn``, in µs."""
    number = 1
    while True:          # grow the call count until one repeat takes TARGET/5 or more
        t = timeit.timeit(fn, number=number)
        if t >= TARGET / 5:
            break
        number *= 4
    number = max(1, int(number * TARGET / max(t, 1e-9)))
    times = timeit.repeat(fn, number=number, repeat=REPEAT)
    return statistics.median(times) / number * 1e6


def check(a, v):
    """The timed tenferro workloads must compute what the NumPy baselines compute."""
    _, g = W.np_exp_sum_grad(a)
    for name, fn in [("backward", W.tf_exp_sum_backward), ("grad", W.tf_exp_sum_grad),
                     ("create_graph", W.tf_exp_sum_grad_create_graph)]:
        np.testing.assert_allclose(fn(a).numpy(), g, rtol=1e-13, err_msg=f"exp_sum {name}")
    np.testing.assert_allclose(W.tf_chain_backward(a).numpy(), W.np_chain_grad(a)[1],
                               rtol=1e-12, err_msg="chain")
    val, tan = W.tf_exp_sum_jvp(a, v)
    np.testing.assert_allclose([val.item(), tan.item()], W.np_exp_sum_jvp(a, v), rtol=1e-13,
                               err_msg="jvp")


def torch_workloads(a, v):
    """The same workloads in PyTorch, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    from torch.func import jvp as tjvp

    vt = torch.tensor(v)

    def exp_sum_backward():
        x = torch.tensor(a, requires_grad=True)
        x.exp().sum().backward()
        return x.grad

    def exp_sum_grad():
        x = torch.tensor(a, requires_grad=True)
        return torch.autograd.grad(x.exp().sum(), x)[0]

    def exp_sum_grad_create_graph():
        x = torch.tensor(a, requires_grad=True)
        return torch.autograd.grad(x.exp().sum(), x, create_graph=True)[0]

    def exp_sum_jvp():
        return tjvp(lambda x: x.exp().sum(), (torch.tensor(a),), (vt,))

    def chain_backward():
        x = torch.tensor(a, requires_grad=True)
        W.chain(x).backward()   # torch tensors have * and .sin()/.sum() too
        return x.grad

    return {"exp_sum_backward": exp_sum_backward, "exp_sum_grad": exp_sum_grad,
            "exp_sum_create_graph": exp_sum_grad_create_graph, "exp_sum_jvp": exp_sum_jvp,
            "chain_backward": chain_backward}


def main():
    a, v = W.data()
    check(a, v)

    # (row name, tenferro workload, its NumPy baseline, ops in the workload)
    rows = [
        ("exp_sum_backward", lambda: W.tf_exp_sum_backward(a), lambda: W.np_exp_sum_grad(a), 2),
        ("exp_sum_grad", lambda: W.tf_exp_sum_grad(a), lambda: W.np_exp_sum_grad(a), 2),
        ("exp_sum_create_graph", lambda: W.tf_exp_sum_grad_create_graph(a),
         lambda: W.np_exp_sum_grad(a), 2),
        ("exp_sum_jvp", lambda: W.tf_exp_sum_jvp(a, v), lambda: W.np_exp_sum_jvp(a, v), 2),
        ("chain_backward", lambda: W.tf_chain_backward(a), lambda: W.np_chain_grad(a),
         W.CHAIN + 1),
    ]
    torch_fns = torch_workloads(a, v)

    print(f"tenferro engine overhead: float64 vectors of {W.N} elements, one thread, "
          f"median of {REPEAT} repeats; forward + backward (or forward-mode jvp) per call")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, tenferro {W.tf.__version__}"
          + ("" if torch_fns is None else f", torch {__import__('torch').__version__}"))
    head = f"{'workload':22s} {'ops':>4s} {'µs/call':>9s} {'µs/op':>7s} {'numpy µs':>9s} {'ratio':>6s}"
    if torch_fns is not None:
        head += f" {'torch µs':>9s} {'vs torch':>8s}"
    print(head)
    for name, fn, base, nops in rows:
        t, tb = median_us(fn), median_us(base)
        line = f"{name:22s} {nops:4d} {t:9.2f} {t / nops:7.2f} {tb:9.2f} {t / tb:6.1f}"
        if torch_fns is not None:
            try:
                tt = median_us(torch_fns[name])
            except Exception as e:  # noqa: BLE001 - report, keep the tenferro numbers
                line += f"  torch failed: {type(e).__name__}: {e}"
            else:
                line += f" {tt:9.2f} {t / tt:8.2f}"
        print(line)
    print("ratio = tenferro / hand-written NumPy (value and gradient by hand, no engine); "
          f"chain = {W.CHAIN} elementwise ops + sum")


if __name__ == "__main__":
    main()
