"""The tracked subset: what CI compares between the previous commit and HEAD.

``scripts/asv_compare.py`` runs this file's benchmarks (asv_bench/tracked.conf.json)
against the tenferro of both commits and fails CI when one got slower by more than its
factor (see asv_bench/README.md for the noise measurement behind the factor). The subset is small
so that it fits CI's time budget twice over:

  Engine.time_exp_sum_grad        x.exp().sum() forward + tf.grad, 4 elements: the
                                  engine's fixed cost per call (bench_engine.py)
  Engine.time_chain100_backward   100 elementwise ops + sum, forward + backward: the
                                  engine's cost per op
  Engine.time_numpy_control       the hand-written NumPy twin of the chain: no tenferro
                                  code at all, so any "change" it shows is machine noise
  Linalg.time_forward_backward    forward + backward of one linalg family at n = 16 (per
                                  call overhead) and n = 256 (LAPACK/BLAS-bound), float64:
                                  svd, eigh, qr, cholesky, lu, solve, det, einsum (matmul)
  TensorNetwork.time_value_and_grad  a 20-tensor einsum network, value + gradient

Each workload is the method of the family's own benchmark class (bench_spectral.py,
bench_decomp.py, ...), so there is one definition of it. The classes here have NO asv
``setup``: with a setup hook asv times every sample as ONE call (asv#966), which for a
20 µs call is mostly timer and cache noise; without one asv batches as many calls as fill
``sample_time`` per sample. The inputs are built on the first call (asv's calibration and
warm-up calls, never a timed sample) and cached.

The clock is the process CPU time (``timer = time.process_time``), not the wall clock: on
a 2-core machine a second job takes the benchmark off the CPU now and then, which the
wall clock counts and the CPU clock does not (asv_bench/README.md, "Noise", has the
measurement). Every workload here runs on one thread, so CPU time is its duration.
"""
import functools
import importlib
import os
import sys
import time

# This file is asv's whole benchmark_dir of tracked.conf.json, apart from the full suite
# in ../benchmarks: asv imports every module of its benchmark_dir before it runs anything,
# against the tenferro being measured, and one full-suite module that does not import
# against the base commit's tenferro (a benchmark of an internal kernel added since, say)
# would stop the base's run. The workloads come from ../benchmarks, imported by path:
# _common (which sets the BLAS/OpenMP thread variables to 1 on import: keep it first)
# and bench_engine here, the linalg families when their benchmark first runs.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
import _common as common  # noqa: E402
import bench_engine  # noqa: E402

common.limit_threads()  # NumPy may have been imported before this module: limit its pools

SIZES = [16, 256]

# family -> (module, benchmark class, its forward + backward method); float64 where the
# class takes a dtype (all but einsum's Matmul, which is float64 only). The modules are
# imported when a benchmark first runs, not here: a family module that does not import
# against some commit's tenferro (at the base of a comparison, say) then fails that
# family's benchmarks only. (asv would also discover a class imported here by name as a
# benchmark of this file.)
FAMILIES = {
    "svd": ("bench_spectral", "SVD", "time_tf_grad_outputs"),
    "eigh": ("bench_spectral", "Eigh", "time_tf_grad_outputs"),
    "qr": ("bench_decomp", "QR", "time_tf_forward_backward"),
    "cholesky": ("bench_decomp", "Cholesky", "time_tf_forward_backward"),
    "lu": ("bench_decomp", "LU", "time_tf_forward_backward"),
    "solve": ("bench_eig", "Solve", "time_tf_forward_backward"),
    "det": ("bench_matfuncs", "Det", "time_tf_forward_backward"),
    "einsum": ("bench_einsum", "Matmul", "time_tf_forward_backward"),
}


def _sibling(name):
    """The full suite's benchmark module ``name`` (../benchmarks/name.py)."""
    return importlib.import_module(name)


@functools.lru_cache(maxsize=None)
def _family_call(family, n):
    """A no-argument function running ``family``'s forward + backward at size n."""
    module, cls, method = FAMILIES[family]
    args = (n,) if cls == "Matmul" else (n, "float64")
    bench = common.setup_bench(getattr(_sibling(module), cls), *args)
    return functools.partial(getattr(bench, method), *args)


@functools.lru_cache(maxsize=None)
def _network_call(network):
    bench = common.setup_bench(_sibling("bench_einsum").TensorNetwork, network)
    return functools.partial(bench.time_tf_value_and_grad, network)


_A, _ = bench_engine.data()


class Engine:
    """The engine's overhead on 4-element vectors (see bench_engine.py)."""
    timer = time.process_time

    def time_exp_sum_grad(self):
        bench_engine.tf_exp_sum_grad(_A)

    def time_chain100_backward(self):
        bench_engine.tf_chain_backward(_A)

    def time_numpy_control(self):
        bench_engine.np_chain_grad(_A)


class Linalg:
    """Forward + backward of each linalg family, float64, n = 16 and 256."""
    timer = time.process_time
    params = [list(FAMILIES), SIZES]
    param_names = ["family", "n"]

    def time_forward_backward(self, family, n):
        _family_call(family, n)()


class TensorNetwork:
    """A closed 4x5 lattice network, bond 4: tf.einsum value + gradient of all 20 tensors."""
    timer = time.process_time

    def time_value_and_grad(self):
        _network_call("4x5_bond4")()


def main():
    """Print the median CPU µs of every tracked benchmark (no asv needed)."""
    cases = [("Engine.time_exp_sum_grad", Engine().time_exp_sum_grad),
             ("Engine.time_chain100_backward", Engine().time_chain100_backward),
             ("Engine.time_numpy_control", Engine().time_numpy_control)]
    cases += [(f"Linalg.time_forward_backward({f}, {n})", _family_call(f, n))
              for f in FAMILIES for n in SIZES]
    cases += [("TensorNetwork.time_value_and_grad", TensorNetwork().time_value_and_grad)]
    for (name, _), t in zip(cases, common.medians([fn for _, fn in cases], repeat=7,
                                                  timer=time.process_time)):
        print(f"{name:48} {t * 1e6:12.1f} us")


if __name__ == "__main__":
    main()
