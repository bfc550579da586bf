"""tenferro.special: forward and forward + backward against SciPy's primal.

  gammaln    y = gammaln(x); by hand: gammaln(x) and ȳ·digamma(x)
  erf        y = erf(x); by hand: erf(x) and ȳ·2/√π·exp(−x²)
  log_ndtr   y = log_ndtr(x); by hand: log_ndtr(x) and ȳ·√(2/π)/erfcx(−x/√2)
  logsumexp  y = logsumexp(x) (all of x); by hand: logsumexp(x) and ȳ·exp(x − y)

for float64 vectors of n = 16 (per-call overhead) and 10⁴ entries (x in (0.2, 5) for
gammaln, standard normal otherwise). ``scipy_primal`` is SciPy's value alone,
``scipy_by_hand`` SciPy's value plus the derivative written by hand in NumPy/SciPy (the
floor of any forward + backward), ``tf_forward_backward`` is ``tf.grad`` with a random
seed (logsumexp: a scalar seed).

``python asv_bench/benchmarks/bench_special.py`` prints the medians, f+b ÷ by-hand and
the excess f+b − 1.5·by-hand (the target: at most the engine's ~10 µs per-op overhead);
``--cpu`` times process time instead of wall time.
"""
import math
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads

import numpy as np  # noqa: E402
import scipy.special as sc  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools

_C_ERF = 2 / math.sqrt(math.pi)
_C_LOG_NDTR = math.sqrt(2 / math.pi)
_INV_SQRT2 = 1 / math.sqrt(2)


def _lse_by_hand(x, g):
    y = sc.logsumexp(x)
    return y, g * np.exp(x - y)


# op -> (SciPy primal, SciPy primal + derivative by hand (x, seed), tenferro function)
OPS = {
    "gammaln": (sc.gammaln, lambda x, g: (sc.gammaln(x), g * sc.digamma(x)),
                tf.special.gammaln),
    "erf": (sc.erf, lambda x, g: (sc.erf(x), g * (_C_ERF * np.exp(-(x * x)))),
            tf.special.erf),
    "log_ndtr": (sc.log_ndtr,
                 lambda x, g: (sc.log_ndtr(x), g * (_C_LOG_NDTR / sc.erfcx(-_INV_SQRT2 * x))),
                 tf.special.log_ndtr),
    "logsumexp": (sc.logsumexp, _lse_by_hand, tf.special.logsumexp),
}


class Special:
    params = [list(OPS), [16, 10000]]
    param_names = ["op", "n"]

    def setup(self, op, n):
        rng = np.random.default_rng(0)
        self.primal, self.by_hand, self.tf_fn = OPS[op]
        self.x = rng.uniform(0.2, 5, n) if op == "gammaln" else rng.standard_normal(n)
        self.tensor = tf.tensor(self.x)
        self.leaf = tf.tensor(self.x, requires_grad=True)
        self.seed = np.asarray(1.0) if op == "logsumexp" else rng.standard_normal(n)

    def time_scipy_primal(self, op, n):
        self.primal(self.x)

    def time_scipy_by_hand(self, op, n):
        self.by_hand(self.x, self.seed)

    def time_tf_forward(self, op, n):
        self.tf_fn(self.tensor)

    def time_tf_forward_backward(self, op, n):
        tf.grad([self.tf_fn(self.leaf)], [self.leaf], [self.seed])


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_scipy_primal", "time_scipy_by_hand", "time_tf_forward",
             "time_tf_forward_backward")
    print(f"{'op':10} {'n':>6} {'scipy us':>9} {'by hand':>9} {'tf fwd':>9} {'tf f+b':>9} "
          f"{'f+b/hand':>9} {'f+b-1.5hand':>11}")
    for op in Special.params[0]:
        for n in Special.params[1]:
            b = setup_bench(Special, op, n)
            ts = medians_us([getattr(b, name) for name in names], (op, n), timer=cpu_timer())
            print(f"{op:10} {n:6d} {ts[0]:9.2f} {ts[1]:9.2f} {ts[2]:9.2f} {ts[3]:9.2f} "
                  f"{ts[3] / ts[1]:9.2f} {ts[3] - 1.5 * ts[1]:11.2f}", flush=True)


if __name__ == "__main__":
    main()
