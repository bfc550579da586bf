"""Index updates: forward and forward + backward against NumPy's in-place primal.

  setitem   y = x * 1; y[idx] = v     (NumPy: y = x.copy(); y[idx] = v)
  at_add    y = x.at[idx].add(v)      (NumPy: y = x.copy(); np.add.at(y, idx, v))
  at_mul    y = x.at[idx].multiply(v) (NumPy: y = x.copy(); np.multiply.at(y, idx, v))

for a float64 vector of n = 10 000 and 1000 random indices (with repeats for at_add and
at_mul; unique for setitem) — the gradient flows to both x and v. tenferro copies x on
every update (tensors are never written in place), so the primal ratio is at least the
cost of one copy over NumPy's in-place write.

Views (``ViewWrites``), on a 64 x 64 float64 tensor:

  slice         x[3:40]                              (NumPy: the same view)
  transpose     x.T
  write_view    y = x * 1; s = y[3:40]; s += u      (NumPy: the same on arrays)
  overlap_add   scipy.signal.oaconvolve's pattern: ret = zeros(1088); for each of the 64
                rows, part = ret[16 i : 16 i + 64]; part += x[i]

``python asv_bench/benchmarks/bench_inplace.py`` prints the medians and ratios
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


def _setitem(x, idx, v):
    y = x * 1.0
    y[idx] = v
    return y


class IndexUpdate:
    params = [["setitem", "at_add", "at_mul"]]
    param_names = ["op"]

    def setup(self, op):
        rng = np.random.default_rng(0)
        n = 10_000
        self.x = rng.standard_normal(n)
        if op == "setitem":
            idx = rng.permutation(n)[:1000]
        else:
            idx = rng.integers(0, n, 1000)
        self.v = rng.standard_normal(1000)
        np_update = {"setitem": lambda y, v: y.__setitem__(idx, v),
                     "at_add": lambda y, v: np.add.at(y, idx, v),
                     "at_mul": lambda y, v: np.multiply.at(y, idx, v)}[op]

        def np_fn(x, v):
            y = x.copy()
            np_update(y, v)
            return y

        self.np_fn = np_fn
        self.tf_fn = {"setitem": lambda x, v: _setitem(x, idx, v),
                      "at_add": lambda x, v: x.at[idx].add(v),
                      "at_mul": lambda x, v: x.at[idx].multiply(v)}[op]
        self.tensors = (tf.tensor(self.x), tf.tensor(self.v))
        self.leaves = (tf.tensor(self.x, requires_grad=True),
                       tf.tensor(self.v, requires_grad=True))
        self.seed = rng.standard_normal(n)

    def time_numpy_primal(self, op):
        self.np_fn(self.x, self.v)

    def time_tf_forward(self, op):
        self.tf_fn(*self.tensors)

    def time_tf_forward_backward(self, op):
        tf.grad([self.tf_fn(*self.leaves)], list(self.leaves), [self.seed])


def _write_view(x, u):
    y = x * 1.0
    s = y[3:40]
    s += u
    return y


def _overlap_add(x):
    zeros = tf.zeros if isinstance(x, tf.Tensor) else np.zeros
    ret = zeros(16 * x.shape[0] + 64)
    for i in range(x.shape[0]):
        part = ret[16 * i:16 * i + 64]
        part += x[i]
    return ret


class ViewWrites:
    params = [["slice", "transpose", "write_view", "overlap_add"]]
    param_names = ["case"]

    def setup(self, case):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((64, 64))
        self.u = rng.standard_normal((37, 64))
        self.fn = {"slice": lambda x, u: x[3:40], "transpose": lambda x, u: x.T,
                   "write_view": _write_view, "overlap_add": lambda x, u: _overlap_add(x)}[case]
        self.tensors = (tf.tensor(self.x), tf.tensor(self.u))
        self.leaves = (tf.tensor(self.x, requires_grad=True),
                       tf.tensor(self.u, requires_grad=True))
        self.case = case

    def time_numpy_primal(self, case):
        self.fn(self.x, self.u)

    def time_tf_forward(self, case):
        self.fn(*self.tensors)

    def time_tf_forward_backward(self, case):
        out = self.fn(*self.leaves)
        leaves = [t for t in self.leaves if t is self.leaves[0] or self.case == "write_view"]
        tf.grad([out.sum()], leaves)


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_numpy_primal", "time_tf_forward", "time_tf_forward_backward")
    print(f"{'op':8} {'numpy us':>9} {'tf fwd us':>9} {'tf f+b us':>9} {'f+b/numpy':>9}")
    for op in IndexUpdate.params[0]:
        b = setup_bench(IndexUpdate, op)
        ts = medians_us([getattr(b, name) for name in names], (op,), timer=cpu_timer())
        print(f"{op:8} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} {ts[2] / ts[0]:9.2f}",
              flush=True)
    print(f"{'view':12} {'numpy us':>9} {'tf fwd us':>9} {'tf f+b us':>9} {'fwd/numpy':>9}")
    for case in ViewWrites.params[0]:
        b = setup_bench(ViewWrites, case)
        ts = medians_us([getattr(b, name) for name in names], (case,), timer=cpu_timer())
        print(f"{case:12} {ts[0]:9.2f} {ts[1]:9.2f} {ts[2]:9.2f} {ts[1] / ts[0]:9.2f}",
              flush=True)


if __name__ == "__main__":
    main()
