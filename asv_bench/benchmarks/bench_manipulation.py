"""Manipulation and indexing functions: forward and forward + backward against NumPy.

  take   y = take(x, idx) of a float64 vector, n = 10 000, 1000 random indices (repeats);
         backward: a scatter-add (numpy.bincount on the indices)
  roll   y = roll(x, 5, axis=1) of a 64 x 64 float64 matrix; backward: roll back
  tile   y = tile(x, (2, 3)) of a 64 x 64 float64 matrix; backward: a sum over the copies

``python asv_bench/benchmarks/bench_manipulation.py`` prints the medians and ratios
(``--cpu``: process time instead of wall time).
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


class Manipulation:
    params = [["take", "roll", "tile"]]
    param_names = ["op"]

    def setup(self, op):
        rng = np.random.default_rng(0)
        if op == "take":
            self.x = rng.standard_normal(10_000)
            idx = rng.integers(0, 10_000, 1000)
            self.np_fn = lambda a: np.take(a, idx)
            self.tf_fn = lambda a: tf.take(a, idx)
        elif op == "roll":
            self.x = rng.standard_normal((64, 64))
            self.np_fn = lambda a: np.roll(a, 5, axis=1)
            self.tf_fn = lambda a: tf.roll(a, 5, axis=1)
        else:
            self.x = rng.standard_normal((64, 64))
            self.np_fn = lambda a: np.tile(a, (2, 3))
            self.tf_fn = lambda a: tf.tile(a, (2, 3))
        self.tensor = tf.tensor(self.x)
        self.leaf = tf.tensor(self.x, requires_grad=True)
        self.seed = rng.standard_normal(self.np_fn(self.x).shape)

    def time_numpy_primal(self, op):
        self.np_fn(self.x)

    def time_tf_forward(self, op):
        self.tf_fn(self.tensor)

    def time_tf_forward_backward(self, op):
        tf.grad([self.tf_fn(self.leaf)], [self.leaf], [self.seed])


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_numpy_primal", "time_tf_forward", "time_tf_forward_backward")
    print(f"{'op':5} {'numpy us':>9} {'tf fwd us':>9} {'tf f+b us':>9} {'f+b/numpy':>9}")
    for op in Manipulation.params[0]:
        b = setup_bench(Manipulation, op)
        ts = medians_us([getattr(b, name) for name in names], (op,), timer=cpu_timer())
        print(f"{op:5} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} {ts[2] / ts[0]:9.2f}",
              flush=True)


if __name__ == "__main__":
    main()
