"""tf.einsum: forward and forward + backward against the NumPy primal, on one thread.

  Matmul   einsum("ij,jk->ik", a, b)
  Chain    einsum("ij,jk,kl->il", a, b, c) (the greedy path contracts two at a time)

at n = 4 (per-call overhead), 64 and 256 (BLAS-bound). The floor is the NumPy primal
``np.einsum(subscripts, *ops, optimize=path)`` with the path ``np.einsum_path`` picks,
which for these chains is the path tenferro takes from opt_einsum too; the backward pass
costs two more contractions per step, so forward + backward is expected near 3x the primal
at large n. ``numpy_forward_backward`` is the hand-written NumPy twin (matmuls along the
same path, gradients by hand): the floor for forward + backward.

  TensorNetwork   closed square-lattice networks contracted to a scalar: 4x4 sites, bond
                  6 (16 tensors, ranks 2-4) and 4x5 sites, bond 4 (20 tensors). Value,
                  value + gradient w.r.t. every tensor, and the baseline
                  ``opt_einsum.contract`` with the same path precomputed (``path`` below).
                  scripts/bench_tensor_network.py prints these side by side with PyTorch.
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
import opt_einsum  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


class _EinsumBench:
    """Shared setup: operands of size n x n, a cotangent, NumPy's path."""
    params = [4, 64, 256]
    param_names = ["n"]
    subscripts = None
    n_operands = 0

    def setup(self, n):
        rng = np.random.default_rng(0)
        self.arrays = [rng.standard_normal((n, n)) for _ in range(self.n_operands)]
        self.cot = rng.standard_normal((n, n))
        self.path = np.einsum_path(self.subscripts, *self.arrays, optimize="greedy")[0]
        self.tensors = [tf.tensor(a) for a in self.arrays]
        self.leaves = [tf.tensor(a, requires_grad=True) for a in self.arrays]
        tf.einsum(self.subscripts, *self.tensors)   # plan once (cached per shapes)

    def time_numpy_primal(self, n):
        np.einsum(self.subscripts, *self.arrays, optimize=self.path)

    def time_numpy_forward_backward(self, n):
        self.numpy_forward_backward(*self.arrays, self.cot)

    def time_tf_forward(self, n):
        tf.einsum(self.subscripts, *self.tensors)

    def time_tf_forward_backward(self, n):
        y = tf.einsum(self.subscripts, *self.leaves)
        tf.grad([y], self.leaves, [self.cot])


class Matmul(_EinsumBench):
    subscripts = "ij,jk->ik"
    n_operands = 2

    @staticmethod
    def numpy_forward_backward(a, b, g):
        y = a @ b
        return y, g @ b.T, a.T @ g


class Chain(_EinsumBench):
    subscripts = "ij,jk,kl->il"
    n_operands = 3

    @staticmethod
    def numpy_forward_backward(a, b, c, g):
        # the greedy path for square operands: (a b) first, then with c
        t = a @ b
        y = t @ c
        gt = g @ c.T
        return y, gt @ b.T, a.T @ gt, t.T @ g


def lattice_network(rows, cols, bond, seed=0):
    """(subscripts, arrays) of a closed rows x cols square lattice with open boundary: one
    tensor per site, one index of size ``bond`` per nearest-neighbour bond (corner rank 2,
    edge 3, bulk 4), every index summed."""
    names, terms = {}, []
    for r in range(rows):
        for c in range(cols):
            term = ""
            for rr, cc in ((r - 1, c), (r, c - 1), (r, c + 1), (r + 1, c)):
                if 0 <= rr < rows and 0 <= cc < cols:
                    key = frozenset({(r, c), (rr, cc)})
                    term += names.setdefault(key, opt_einsum.get_symbol(len(names)))
            terms.append(term)
    rng = np.random.default_rng(seed)
    # entries of size 1/bond keep the scalar of order one
    arrays = [rng.standard_normal((bond,) * len(t)) / bond for t in terms]
    return ",".join(terms) + "->", arrays


class TensorNetwork:
    """A 16- and a 20-tensor network: tf.einsum value and value + gradient vs opt_einsum."""
    params = ["4x4_bond6", "4x5_bond4"]
    param_names = ["network"]
    shapes = {"4x4_bond6": (4, 4, 6), "4x5_bond4": (4, 5, 4)}

    def setup(self, network):
        self.subscripts, self.arrays = lattice_network(*self.shapes[network])
        self.path = opt_einsum.contract_path(self.subscripts, *self.arrays)[0]
        self.tensors = [tf.tensor(a) for a in self.arrays]
        self.leaves = [tf.tensor(a, requires_grad=True) for a in self.arrays]
        # the path search and the backward specs (built lazily) are made once, here
        self.time_tf_value_and_grad(network)

    def time_opt_einsum_contract(self, network):
        opt_einsum.contract(self.subscripts, *self.arrays, optimize=self.path)

    def time_tf_value(self, network):
        tf.einsum(self.subscripts, *self.tensors)

    def time_tf_value_and_grad(self, network):
        y = tf.einsum(self.subscripts, *self.leaves)
        tf.grad([y], self.leaves)
