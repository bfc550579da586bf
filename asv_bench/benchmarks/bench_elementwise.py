"""Elementwise functions: NumPy's primal against tenferro's forward and forward + backward.

  logaddexp  y = logaddexp(a, b); backward: the softmax weights σ(a − b), σ(b − a)
  copysign   y = copysign(a, b); backward: ±1 by sign agreement for a, a zero for b
  exp        y = exp(a), the reference: backward ȳ·y

for float64 vectors of n = 16 (per-call overhead) and 4096 entries. The tenferro
forward + backward is ``tf.grad`` of y with a random seed with respect to every input.

``python asv_bench/benchmarks/bench_elementwise.py`` prints the medians and
forward + backward ÷ NumPy primal (``--cpu``: process time instead of wall time).
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools

# op -> (NumPy function, tenferro function, number of inputs)
OPS = {
    "logaddexp": (np.logaddexp, tf.logaddexp, 2),
    "copysign": (np.copysign, tf.copysign, 2),
    "exp": (np.exp, tf.exp, 1),
}


class Elementwise:
    params = [list(OPS), [16, 4096]]
    param_names = ["op", "n"]

    def setup(self, op, n):
        rng = np.random.default_rng(0)
        self.np_fn, self.tf_fn, k = OPS[op]
        self.xs = [rng.standard_normal(n) for _ in range(k)]
        self.tensors = [tf.tensor(x) for x in self.xs]
        self.leaves = [tf.tensor(x, requires_grad=True) for x in self.xs]
        self.seed = rng.standard_normal(n)

    def time_numpy_primal(self, op, n):
        self.np_fn(*self.xs)

    def time_tf_forward(self, op, n):
        self.tf_fn(*self.tensors)

    def time_tf_forward_backward(self, op, n):
        tf.grad([self.tf_fn(*self.leaves)], self.leaves, [self.seed])


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_numpy_primal", "time_tf_forward", "time_tf_forward_backward")
    print(f"{'op':10} {'n':>5} {'numpy us':>9} {'tf fwd us':>9} {'tf f+b us':>9} "
          f"{'f+b/numpy':>9}")
    for op in Elementwise.params[0]:
        for n in Elementwise.params[1]:
            b = setup_bench(Elementwise, op, n)
            ts = medians_us([getattr(b, name) for name in names], (op, n), timer=cpu_timer())
            print(f"{op:10} {n:5d} {ts[0]:9.2f} {ts[1]:9.2f} {ts[2]:9.2f} "
                  f"{ts[2] / ts[0]:9.2f}", flush=True)


if __name__ == "__main__":
    main()
