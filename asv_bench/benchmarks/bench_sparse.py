"""Many indexings of one tensor: the backward adds their sparse cotangents into one buffer.

loss = sum over a, b of x[a, b, a, b] (n^2 scalar indexings of an (n, n, n, n) tensor,
the TRG example's ``--trace loop``); the backward used to add n^2 dense zero tensors
(O(n^2 · n^4)), now it scatters n^2 scalars into one buffer (tenferro/_sparse.py).
Timed: tf.grad of the recorded loss (graph kept), plain and with create_graph=True.
``scripts/bench_sparse_cotangents.py`` times the same workload as a script.
"""
import os
import sys

try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()


class ManyIndexings:
    params = [12, 24]
    param_names = ["n"]

    def setup(self, n):
        self.x = tf.tensor(np.ones((n,) * 4), requires_grad=True)
        total = tf.zeros(())
        for a in range(n):
            for b in range(n):
                total = total + self.x[a, b, a, b]
        self.loss = total

    def time_grad(self, n):
        tf.grad(self.loss, [self.x], retain_graph=True)

    def time_grad_create_graph(self, n):
        tf.grad(self.loss, [self.x], create_graph=True)
