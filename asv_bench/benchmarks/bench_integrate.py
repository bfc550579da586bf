"""tenferro.integrate.solve_ivp: the forward solve, forward + backward (the adjoint) and a
jvp (the variational equations) against SciPy's solve_ivp on NumPy.

  problem   y' = tanh(W y), n = 8 (W: 8×8, the 64 parameters differentiated), 11 output
            times on [0, 5], rtol 1e-8, atol 1e-10; methods RK45, DOP853 and Radau

``scipy_primal`` is scipy.integrate.solve_ivp with the same right-hand side in NumPy (the
floor of the forward solve), ``tf_forward`` the solve with W a plain Tensor,
``tf_forward_backward`` the solve with W requiring grad and ``tf.grad`` of Σ y²,
``tf_jvp`` ``tf.jvp`` along W.

``python asv_bench/benchmarks/bench_integrate.py`` prints the medians (process time with ``--cpu``) and
the ratios tf_forward ÷ scipy, f+b ÷ tf_forward and jvp ÷ tf_forward.
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
import scipy.integrate  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools

N = 8
T_EVAL = np.linspace(0.0, 5.0, 11)
TOL = dict(rtol=1e-8, atol=1e-10)


def _rhs(t, y, w):
    return tf.tanh(w @ y)


class SolveIvp:
    params = [["RK45", "DOP853", "Radau"]]
    param_names = ["method"]

    def setup(self, method):
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal((N, N)) / np.sqrt(N) - np.eye(N)
        self.y0 = rng.standard_normal(N)
        self.w = tf.tensor(self.a)
        self.leaf = tf.tensor(self.a, requires_grad=True)

    def _solve(self, w, method):
        return tf.integrate.solve_ivp(_rhs, (0.0, 5.0), self.y0, method=method,
                                      t_eval=T_EVAL, args=(w,), **TOL)

    def time_scipy_primal(self, method):
        a = self.a
        scipy.integrate.solve_ivp(lambda t, y: np.tanh(a @ y), (0.0, 5.0), self.y0,
                                  method=method, t_eval=T_EVAL, **TOL)

    def time_tf_forward(self, method):
        self._solve(self.w, method)

    def time_tf_forward_backward(self, method):
        y = self._solve(self.leaf, method).y
        tf.grad([tf.sum(y ** 2)], [self.leaf])

    def time_tf_jvp(self, method):
        tf.jvp(lambda w: self._solve(w, method).y, [self.a], [self.a])


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_scipy_primal", "time_tf_forward", "time_tf_forward_backward",
             "time_tf_jvp")
    print(f"{'method':7} {'scipy ms':>9} {'tf fwd':>9} {'tf f+b':>9} {'tf jvp':>9} "
          f"{'fwd/scipy':>9} {'f+b/fwd':>8} {'jvp/fwd':>8}")
    for method in SolveIvp.params[0]:
        b = setup_bench(SolveIvp, method)
        ts = [t / 1e3 for t in medians_us([getattr(b, name) for name in names], (method,),
                                          timer=cpu_timer())]
        print(f"{method:7} {ts[0]:9.2f} {ts[1]:9.2f} {ts[2]:9.2f} {ts[3]:9.2f} "
              f"{ts[1] / ts[0]:9.2f} {ts[2] / ts[1]:8.2f} {ts[3] / ts[1]:8.2f}", flush=True)


if __name__ == "__main__":
    main()
