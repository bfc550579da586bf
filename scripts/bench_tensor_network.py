"""A closed 4x4 square-lattice tensor network on one thread: tenferro against its peers.

16 tensors (open boundary: corner rank 2, edge rank 3, bulk rank 4), every bond of
dimension 6, contracted to a scalar (the network of ``TensorNetwork`` in
asv_bench/benchmarks/bench_einsum.py, loaded from that file). Prints the median time per
call of, in one run:

* tenferro value: ``tf.einsum(subscripts, *tensors)`` (default optimize="auto");
* the baseline: ``opt_einsum.contract(subscripts, *arrays, optimize=path)`` with the path
  precomputed, and opt_einsum's ``contract_expression`` (parsing done once) for reference;
* tenferro value + gradient w.r.t. all 16 tensors (``tf.grad``);
* both with ``optimize="auto-hq"`` (dynamic programming here: a 4x cheaper path,
  searched once);
* both again along ``numpy.einsum_path``'s greedy path (tf.einsum's order before it took
  opt_einsum's: NumPy caps intermediates at the largest input, ~1000x the flops here);
* PyTorch value + gradient: ``torch.einsum`` with ``torch.backends.opt_einsum`` enabled
  (strategy "auto"), and ``opt_einsum.contract(..., backend="torch")`` along the
  precomputed path, when torch is importable;
* JAX value + gradient: ``jax.jit(jax.value_and_grad(f, argnums=all))`` with ``jnp.einsum``
  along the precomputed path (float64), when jax is importable.

Every peer's value and gradients are checked against tenferro's before timing. Targets
(issue 11): tenferro value <= 1.5x opt_einsum.contract, value + gradient <= 1.0x PyTorch.

    python scripts/bench_tensor_network.py [--rows 4 --cols 4 --bond 6] [--profile]

``--profile`` prints cProfile's top entries for tenferro's value + gradient.
"""
import argparse
import importlib.util
import os
import pathlib
import statistics
import sys
import timeit

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"   # before NumPy is imported (by the module loaded below)
# XLA's CPU backend on one thread as well
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")

_PATH = (pathlib.Path(__file__).resolve().parents[1] / "asv_bench" / "benchmarks"
         / "bench_einsum.py")
_spec = importlib.util.spec_from_file_location("_tenferro_bench_einsum", _PATH)
B = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(B)

import numpy as np  # noqa: E402
import opt_einsum  # noqa: E402

import tenferro as tf  # noqa: E402

REPEAT = 15          # timeit repeats; the median of them is reported
TARGET = 0.05        # seconds per repeat, to pick the number of calls per repeat


def median_ms(fn):
    """Median over REPEAT runs of the time of one call of ``fn``, in ms."""
    number = 1
    while True:          # grow the call count until one repeat takes TARGET/5 or more
        t = timeit.timeit(fn, number=number)
        if t >= TARGET / 5:
            break
        number *= 4
    number = max(1, int(number * TARGET / max(t, 1e-9)))
    times = timeit.repeat(fn, number=number, repeat=REPEAT)
    return statistics.median(times) / number * 1e3


def close(got, want, what):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12,
                               err_msg=what)


def tenferro_workloads(subscripts, arrays, optimize="auto"):
    tensors = [tf.tensor(a) for a in arrays]
    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]

    def value():
        return tf.einsum(subscripts, *tensors, optimize=optimize)

    def value_and_grad():
        y = tf.einsum(subscripts, *leaves, optimize=optimize)
        return y, tf.grad([y], leaves)

    return value, value_and_grad


def torch_workloads(subscripts, arrays, path):
    """PyTorch's value + gradient, or {} when torch is not importable."""
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
    torch.backends.opt_einsum.enabled = True
    torch.backends.opt_einsum.strategy = "auto"
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]

    def einsum_vg():
        y = torch.einsum(subscripts, *leaves)
        return y, torch.autograd.grad(y, leaves)

    def contract_vg():
        y = opt_einsum.contract(subscripts, *leaves, optimize=path, backend="torch")
        return y, torch.autograd.grad(y, leaves)

    return {"PyTorch torch.einsum (opt_einsum 'auto') value+grad": einsum_vg,
            "PyTorch opt_einsum.contract(path) value+grad": contract_vg}


def jax_workloads(subscripts, arrays, path):
    """JAX's jit-compiled value + gradient, or {} when jax is not importable."""
    try:
        import jax
    except ImportError:
        return {}
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def f(*xs):
        return jnp.einsum(subscripts, *xs, optimize=list(path))

    vg = jax.jit(jax.value_and_grad(f, argnums=tuple(range(len(arrays)))))
    xs = [jnp.asarray(a) for a in arrays]

    def run():
        y, gs = vg(*xs)
        y.block_until_ready()
        for g in gs:
            g.block_until_ready()
        return y, gs

    return {"JAX jit(value_and_grad) value+grad": run}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--cols", type=int, default=4)
    parser.add_argument("--bond", type=int, default=6)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    subscripts, arrays = B.lattice_network(args.rows, args.cols, args.bond)
    path, info = opt_einsum.contract_path(subscripts, *arrays)
    tf_path, tf_info = tf.einsum_path(subscripts, *arrays)
    numpy_path, numpy_report = np.einsum_path(subscripts, *arrays, optimize="greedy")
    numpy_flops = float(numpy_report.split("Optimized FLOP count:")[1].split()[0])
    print(f"{args.rows}x{args.cols} lattice, bond {args.bond}: {len(arrays)} tensors; "
          f"flops: tenferro path {tf_info.opt_cost:.3g}, opt_einsum 'auto' "
          f"{info.opt_cost:.3g}, numpy.einsum_path greedy {numpy_flops:.3g}; largest "
          f"intermediate {tf_info.largest_intermediate} elements")

    value, value_and_grad = tenferro_workloads(subscripts, arrays)
    expr = opt_einsum.contract_expression(subscripts, *[a.shape for a in arrays],
                                          optimize=path)
    want = opt_einsum.contract(subscripts, *arrays, optimize=path)
    y, grads = value_and_grad()
    close(value().numpy(), want, "tenferro value")
    close(y.numpy(), want, "tenferro value (grad)")
    close(expr(*arrays), want, "contract_expression")

    rows = [("opt_einsum.contract(path) value [baseline]",
             lambda: opt_einsum.contract(subscripts, *arrays, optimize=path)),
            ("opt_einsum.contract_expression value", lambda: expr(*arrays)),
            ("tenferro tf.einsum value", value),
            ("tenferro tf.einsum value+grad", value_and_grad)]
    # the previous default: NumPy's greedy path under its memory cap
    old_value, old_value_and_grad = tenferro_workloads(subscripts, arrays, numpy_path)
    close(old_value().numpy(), want, "tenferro value along NumPy's path")
    rows += [("tenferro value, numpy.einsum_path greedy path (old)", old_value),
             ("tenferro value+grad, numpy.einsum_path greedy path (old)", old_value_and_grad)]
    # a better path for a network contracted many times: searched once (cached)
    hq_value, hq_value_and_grad = tenferro_workloads(subscripts, arrays, "auto-hq")
    close(hq_value().numpy(), want, "tenferro value, auto-hq")
    rows += [("tenferro value, optimize='auto-hq'", hq_value),
             ("tenferro value+grad, optimize='auto-hq'", hq_value_and_grad)]
    peers = {**torch_workloads(subscripts, arrays, path),
             **jax_workloads(subscripts, arrays, path)}
    for name, fn in peers.items():
        py, pg = fn()
        close(py.detach().numpy() if hasattr(py, "detach") else py, want, name)
        for k, (g, w) in enumerate(zip(pg, grads)):
            close(g.detach().numpy() if hasattr(g, "detach") else g, w.numpy(),
                  f"{name} gradient {k}")
        rows.append((name, fn))
    if not peers:
        print("(torch and jax are not importable: peers skipped)")

    times = {name: median_ms(fn) for name, fn in rows}
    base = times[rows[0][0]]
    width = max(len(name) for name, _ in rows)
    print(f"{'workload':<{width}}  {'ms':>8}  {'÷ baseline':>10}")
    for name, _ in rows:
        print(f"{name:<{width}}  {times[name]:8.3f}  {times[name] / base:10.2f}")
    value_ratio = times["tenferro tf.einsum value"] / base
    print(f"target tenferro value <= 1.5x opt_einsum.contract: {value_ratio:.2f}x "
          f"({'met' if value_ratio <= 1.5 else 'MISSED'})")
    torch_name = "PyTorch torch.einsum (opt_einsum 'auto') value+grad"
    if torch_name in times:
        vg_ratio = times["tenferro tf.einsum value+grad"] / times[torch_name]
        print(f"target tenferro value+grad <= 1.0x PyTorch torch.einsum: {vg_ratio:.2f}x "
              f"({'met' if vg_ratio <= 1.0 else 'MISSED'})")
        best = min(t for n, t in times.items() if n.startswith("PyTorch"))
        print(f"tenferro value+grad ÷ fastest PyTorch variant: "
              f"{times['tenferro tf.einsum value+grad'] / best:.2f}x")

    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            value_and_grad()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    sys.exit(main())
