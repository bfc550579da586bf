"""Engine overhead: what tenferro adds on top of NumPy for tiny tensors, on one thread.

With 4-element float64 vectors the arithmetic costs almost nothing, so these timings are
the engine itself: creating a leaf, recording a node per op, seeding and walking the
graph, accumulating cotangents. Each workload has a hand-written NumPy twin (value and
gradient by hand, no engine) as the floor to compare with.

  exp_sum        x.exp().sum() forward + backward (``.backward()`` and ``tf.grad``)
  chain          100 small elementwise ops (alternating ``y * 1.01`` and ``y.sin()``),
                 then ``sum``, forward + backward: the per-op cost of the engine
  create_graph   exp_sum again with ``create_graph=True``; the plain backward above must
                 not pay for this generality
  jvp            forward mode ``tf.jvp`` of exp_sum

The workload functions are plain module-level functions so that
``scripts/bench_engine.py`` times exactly the same code with ``timeit``.
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

N = 4           # vector length: small enough that the engine dominates
CHAIN = 100     # elementwise ops in the chain workload (plus one final sum)


def data():
    """The fixed input vector and a tangent for the forward-mode workload."""
    a = np.linspace(-1.0, 1.0, N)
    v = np.linspace(0.5, 2.0, N)
    return a, v


# --- exp_sum: L(x) = sum(exp(x)), dL/dx = exp(x) -------------------------------------

def exp_sum(x):
    return x.exp().sum()


def tf_exp_sum_backward(a):
    x = tf.tensor(a, requires_grad=True)
    exp_sum(x).backward()
    return x.grad


def tf_exp_sum_grad(a):
    x = tf.tensor(a, requires_grad=True)
    return tf.grad(exp_sum(x), x)[0]


def tf_exp_sum_grad_create_graph(a):
    x = tf.tensor(a, requires_grad=True)
    return tf.grad(exp_sum(x), x, create_graph=True)[0]


def np_exp_sum_grad(a):
    e = np.exp(a)
    return e.sum(), e


# --- chain: 100 alternating y * 1.01 and sin(y), then sum ----------------------------

def chain(x):
    y = x
    for _ in range(CHAIN // 2):
        y = y * 1.01
        y = y.sin()
    return y.sum()


def tf_chain_backward(a):
    x = tf.tensor(a, requires_grad=True)
    chain(x).backward()
    return x.grad


def np_chain_grad(a):
    # Forward, saving what the backward needs: cos(y) before each sin.
    saved = []
    y = a
    for _ in range(CHAIN // 2):
        y = y * 1.01
        saved.append(np.cos(y))
        y = np.sin(y)
    value = y.sum()
    # Backward: d sum / dy = 1, then the chain rule through each op in reverse.
    g = np.ones_like(a)
    for c in reversed(saved):
        g = g * c
        g = g * 1.01
    return value, g


# --- jvp: forward mode of exp_sum along v -----------------------------------------------

def tf_exp_sum_jvp(a, v):
    return tf.jvp(exp_sum, (a,), (v,))


def np_exp_sum_jvp(a, v):
    e = np.exp(a)
    return e.sum(), (e * v).sum()


# --- asv -------------------------------------------------------------------------------

class EngineOverhead:
    """Forward + backward of tiny workloads; compare each with its ``numpy_`` twin."""

    def setup(self):
        self.a, self.v = data()

    def time_exp_sum_backward(self):
        tf_exp_sum_backward(self.a)

    def time_exp_sum_grad(self):
        tf_exp_sum_grad(self.a)

    def time_exp_sum_grad_create_graph(self):
        tf_exp_sum_grad_create_graph(self.a)

    def time_exp_sum_jvp(self):
        tf_exp_sum_jvp(self.a, self.v)

    def time_exp_sum_numpy(self):
        np_exp_sum_grad(self.a)

    def time_exp_sum_jvp_numpy(self):
        np_exp_sum_jvp(self.a, self.v)

    def time_chain100_backward(self):
        tf_chain_backward(self.a)

    def time_chain100_numpy(self):
        np_chain_grad(self.a)
