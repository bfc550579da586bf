"""Function transforms (tenferro/functional.py) on one thread.

  Jacobian   f(x) = tanh(A @ x), R^64 -> R^64: tf.jacobian in reverse mode (one recorded
             graph, 64 reverse passes) and forward mode (64 tangent evaluations), against
             the baseline of 64 separate tf.vjp calls (record + pullback each)
  Hessian    f(x) = sum(tanh(A @ x)**2), n = 32: forward-over-reverse, 32 JVPs of the
             gradient
  hessp      the same f at n = 64: one Hessian-vector product (forward-over-reverse)
  checkpoint an 8-layer chain tanh(W_i @ x), x (32, 16), gradient with and without
             tf.checkpoint around the chain (the overhead of the recomputation)

scripts/bench_functional.py prints the ratios; scripts/bench_checkpoint.py the memory.
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


class Jacobian:
    params = [[64], ["rev", "fwd"]]
    param_names = ["n", "mode"]

    def setup(self, n, mode):
        rng = np.random.default_rng(0)
        a = tf.as_tensor(rng.standard_normal((n, n)) / np.sqrt(n))
        self.f = lambda x: tf.tanh(a @ x)
        self.x = rng.standard_normal(n)
        self.jac = tf.jacobian(self.f, mode=mode)
        self.seeds = np.eye(n)

    def time_jacobian(self, n, mode):
        self.jac(self.x)

    def time_separate_vjps(self, n, mode):
        for e in self.seeds:
            _, pullback = tf.vjp(self.f, self.x)
            pullback(e)


class Hessian:
    params = [[32]]
    param_names = ["n"]

    def setup(self, n):
        rng = np.random.default_rng(0)
        a = tf.as_tensor(rng.standard_normal((n, n)) / np.sqrt(n))
        self.hess = tf.hessian(lambda x: tf.sum(tf.tanh(a @ x) ** 2))
        self.x = rng.standard_normal(n)

    def time_hessian(self, n):
        self.hess(self.x)


class Hessp:
    params = [[64]]
    param_names = ["n"]

    def setup(self, n):
        rng = np.random.default_rng(0)
        a = tf.as_tensor(rng.standard_normal((n, n)) / np.sqrt(n))
        self.f = lambda x: tf.sum(tf.tanh(a @ x) ** 2)
        self.vg = tf.value_and_grad(self.f, hessp=True)
        self.x, self.p = rng.standard_normal(n), rng.standard_normal(n)

    def time_hessp(self, n):
        self.vg.hessp(self.x, self.p)

    def time_value_and_grad(self, n):
        self.vg(self.x)


def _chain(x, *ws):
    for w in ws:
        x = tf.tanh(w @ x)
    return x


class Checkpoint:
    params = [[False, True]]
    param_names = ["checkpointed"]

    def setup(self, checkpointed):
        rng = np.random.default_rng(0)
        self.x = tf.tensor(rng.standard_normal((32, 16)), requires_grad=True)
        self.ws = [tf.tensor(rng.standard_normal((32, 32)) / 6, requires_grad=True)
                   for _ in range(8)]
        self.run = tf.checkpoint(_chain) if checkpointed else _chain

    def time_grad(self, checkpointed):
        tf.grad(tf.sum(self.run(self.x, *self.ws) ** 2), [self.x] + self.ws)
