"""Truncated SVD, tf.linalg.svd(a, max_rank=k), against the full SVD then slicing, one thread.

  SVDTruncated   primal ("primal") and primal + gradient of the gauge-invariant loss
                 sum(C ∘ (u diag(s) vt)) + sum(s) + |uᵀB|² ("loss"), for a 300 x 300
                 float64 matrix and k = 10: "truncated" takes the partial path (svds +
                 Rayleigh–Ritz; the rules solve the coupling to the discarded subspace by
                 conjugate gradients), "full" computes tf.linalg.svd and slices [:k] (the
                 same derivative, computed from all singular triplets).

scripts/bench_svd_truncated.py measures the 1000 x 1000, k = 20 case of the brief (target:
truncated primal + gradient <= 0.3x the full one).
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


class SVDTruncated:
    params = [["truncated", "full"]]
    param_names = ["method"]

    def setup(self, method):
        rng = np.random.default_rng(0)
        n, self.k = 300, 10
        # a decaying spectrum, the usual case for truncation
        q1 = np.linalg.qr(rng.standard_normal((n, n)))[0]
        q2 = np.linalg.qr(rng.standard_normal((n, n)))[0]
        self.a = (q1 * 0.97 ** np.arange(n)) @ q2.T
        self.C = tf.tensor(rng.standard_normal((n, n)))
        self.B = tf.tensor(rng.standard_normal((n, 2)))

    def _svd(self, a, method):
        if method == "truncated":
            return tf.linalg.svd(a, max_rank=self.k)
        u, s, vt = tf.linalg.svd(a)
        return u[:, :self.k], s[:self.k], vt[:self.k]

    def time_primal(self, method):
        self._svd(self.a, method)

    def time_loss(self, method):
        x = tf.tensor(self.a, requires_grad=True)
        u, s, vt = self._svd(x, method)
        loss = tf.sum(self.C * ((u * s) @ vt)) + tf.sum(s) + tf.sum((u.mT @ self.B) ** 2)
        tf.grad(loss, x)


if __name__ == "__main__":
    import timeit
    for method in SVDTruncated.params[0]:
        b = SVDTruncated()
        b.setup(method)
        for name in ("time_primal", "time_loss"):
            f = getattr(b, name)
            t = sorted(timeit.repeat(lambda: f(method), number=1, repeat=15))[7]
            print(f"{method:>10} {name:12} {t * 1e3:8.2f} ms")
