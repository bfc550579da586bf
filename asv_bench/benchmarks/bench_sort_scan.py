"""tf.sort and the cumulative scans: the NumPy primal against tenferro's forward and
forward + backward, on one thread.

  Sort             y = sort(x) of a float64 vector of length n = 10_000
  CumulativeSum    y = cumulative_sum(x, axis=1) of a 1000 x 100 float64 matrix
  CumulativeProd   y = cumulative_prod(x, axis=1), the same shape, with exact zeros in x

sort's forward needs the sorting permutation (argsort + gather instead of np.sort) and
its backward scatters the cotangent back by it. cumulative_sum's backward is one reversed
cumsum. cumulative_prod's backward never divides (exact with zeros): an exclusive
cumprod and a linear recurrence run as a Hillis-Steele scan, log2(100) = 7 vectorised
steps, so it costs several primals.

``python asv_bench/benchmarks/bench_sort_scan.py`` prints the medians and ratios directly
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


class _ForwardBackward:
    """numpy primal / tf forward (constant input) / tf forward + backward (leaf input)."""
    shape = None

    def setup(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal(self.shape)
        self.x[rng.random(self.shape) < 0.01] = 0.0   # exact zeros (prod must stay exact)
        self.tensor = tf.tensor(self.x)
        self.leaf = tf.tensor(self.x, requires_grad=True)
        self.seed = rng.standard_normal(self.shape)

    def time_numpy_primal(self):
        self.np_fn(self.x)

    def time_tf_forward(self):
        self.tf_fn(self.tensor)

    def time_tf_forward_backward(self):
        tf.grad([self.tf_fn(self.leaf)], [self.leaf], [self.seed])


class Sort(_ForwardBackward):
    shape = (10_000,)

    @staticmethod
    def np_fn(a):
        return np.sort(a, kind="stable")

    @staticmethod
    def tf_fn(t):
        return tf.sort(t)


class CumulativeSum(_ForwardBackward):
    shape = (1000, 100)

    @staticmethod
    def np_fn(a):
        return np.cumsum(a, axis=1)

    @staticmethod
    def tf_fn(t):
        return tf.cumulative_sum(t, axis=1)


class CumulativeProd(_ForwardBackward):
    shape = (1000, 100)

    @staticmethod
    def np_fn(a):
        return np.cumprod(a, axis=1)

    @staticmethod
    def tf_fn(t):
        return tf.cumulative_prod(t, axis=1)


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_numpy_primal", "time_tf_forward", "time_tf_forward_backward")
    print(f"{'op':15} {'numpy us':>9} {'tf fwd us':>9} {'tf f+b us':>9} {'fwd/numpy':>9} "
          f"{'f+b/numpy':>9}")
    for cls in (Sort, CumulativeSum, CumulativeProd):
        b = setup_bench(cls)
        ts = medians_us([getattr(b, name) for name in names], (), timer=cpu_timer())
        print(f"{cls.__name__:15} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} {ts[1] / ts[0]:9.2f} "
              f"{ts[2] / ts[0]:9.2f}", flush=True)


if __name__ == "__main__":
    main()
