"""The array API linalg extension's products (tenferro/linalg/products.py): forward and
forward + backward against the NumPy primal, one thread.

  cross          tf.linalg.cross of a batch of 1000 3-vectors (1000, 3) x (1000, 3)
                 (floor: numpy.linalg.cross)
  vecdot         tf.linalg.vecdot of 1000 pairs of 16-vectors (1000, 16)
                 (floor: numpy.vecdot)
  matrix_power   tf.linalg.matrix_power of a 16 x 16 matrix, power 5
                 (floor: numpy.linalg.matrix_power)

with a random cotangent, float64 and complex128 (class ``LinalgExt``; asv params op, dtype).
``numpy_forward_backward`` is the hand-written NumPy twin (the primal, then the same
pullback formulas: two cross products; two broadcast products; for A⁵ = A·(A²)² three
matmuls forward and six backward): the floor for forward + backward. The pullbacks of
cross and vecdot write two arrays of the inputs' size, so forward + backward is several
times the primal (a reduction, for vecdot) even in NumPy.

``python asv_bench/benchmarks/bench_linalg_ext.py`` prints the medians and ratios (primal
and tenferro timed alternately), then the table that chose matrix_power's rule
(``--strategies`` prints only that one): forward + backward of three implementations of
A^n at matrix sizes 4, 16, 64 and n = 2..16, float64:

  op        tf.linalg.matrix_power: one op; the rules run the repeated-squaring program's
            product rule (O(log n) products, see products.py)
  compose   the same program recorded as tf.matmul nodes (the same products, plus each
            node's dispatch and backward cost)
  sum       one op whose pullback is Ā = Σ_k (Aᴴ)^k Ḡ (Aᴴ)^(n−1−k) by Horner's scheme
            (2(n − 1) products, and n − 1 in the forward)
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from . import _common as common
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common as common

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402

_random = common.random_array
common.limit_threads()  # NumPy may have been imported before this module: limit its pools


class LinalgExt:
    """cross / vecdot / matrix_power: the NumPy primal, tf forward, tf forward + tf.grad."""
    params = [["cross", "vecdot", "matrix_power"], common.DTYPES]
    param_names = ["op", "dtype"]

    def setup(self, op, dtype):
        rng = np.random.default_rng(0)
        if op == "cross":
            a, b = _random((1000, 3), dtype, rng), _random((1000, 3), dtype, rng)
            self.np_fn = lambda: np.linalg.cross(a, b)
            self.np_fb = lambda g: (np.linalg.cross(a, b), np.linalg.cross(b.conj(), g),
                                    np.linalg.cross(g, a.conj()))
            self.tf_fn = tf.linalg.cross
            args, out = (a, b), (1000, 3)
        elif op == "vecdot":
            a, b = _random((1000, 16), dtype, rng), _random((1000, 16), dtype, rng)
            self.np_fn = lambda: np.vecdot(a, b)
            self.np_fb = lambda g: (np.vecdot(a, b), g.conj()[:, None] * b, g[:, None] * a)
            self.tf_fn = tf.linalg.vecdot
            args, out = (a, b), (1000,)
        else:
            a = _random((16, 16), dtype, rng) / 8.0          # spectral radius ~ 1/2
            self.np_fn = lambda: np.linalg.matrix_power(a, 5)
            self.np_fb = lambda g: _power5_forward_backward(a, g)
            self.tf_fn = lambda x: tf.linalg.matrix_power(x, 5)
            args, out = (a,), (16, 16)
        self.args = args
        self.leaves = [tf.tensor(x, requires_grad=True) for x in args]
        self.cot = _random(out, dtype, rng)

    def time_numpy_primal(self, op, dtype):
        self.np_fn()

    def time_numpy_forward_backward(self, op, dtype):
        self.np_fb(self.cot)

    def time_tf_forward(self, op, dtype):
        self.tf_fn(*self.args)

    def time_tf_forward_backward(self, op, dtype):
        tf.grad([self.tf_fn(*self.leaves)], self.leaves, [self.cot])


def _power5_forward_backward(a, g):
    """A⁵ = A·(A²)² and its pullback Ā, by hand in NumPy."""
    a2 = a @ a
    a4 = a2 @ a2
    y = a @ a4
    ah, a2h = a.conj().T, a2.conj().T
    ga, ga4 = g @ a4.conj().T, ah @ g             # y = A·A⁴
    ga2 = ga4 @ a2h + a2h @ ga4                   # A⁴ = A²·A²
    return y, ga + ga2 @ ah + ah @ ga2            # A² = A·A


# ---- the table printers (not asv benchmarks) --------------------------------------------

def _power_alternatives():
    """compose(x, n) and sum(x, n): the two rejected implementations of matrix_power."""
    from tenferro._engine import apply1
    from tenferro._ops.registry import OPS, defop
    from tenferro.linalg import products
    from tenferro.linalg._common import mH

    def compose(x, n):
        vals = [x]
        for i, j in products._power_program(n):
            vals.append(tf.matmul(vals[i], vals[j]))
        return vals[-1]

    def sum_vjp(ctx, needs, gs, xs, ys):
        # S₁ = Ḡ, S_{m+1} = Aᴴ S_m + Ḡ (Aᴴ)^m;  Ā = S_n
        powers, n = ctx
        g = gs[0]
        ah = mH(powers[0])
        s = g
        for m in range(1, n):
            s = ah @ s + g @ mH(powers[m - 1])
        return (s,)

    op = OPS.get("bench_matrix_power_sum") or defop("bench_matrix_power_sum", sum_vjp, None)

    def sum_rule(x, n):
        d = x.numpy()
        powers = [d]
        for _ in range(n - 1):
            powers.append(powers[-1] @ d)
        return apply1(op, (x,), powers[-1], ctx=(powers, n))

    return compose, sum_rule


def strategies(timer=None):
    compose, sum_rule = _power_alternatives()
    fns = {"op": tf.linalg.matrix_power, "compose": compose, "sum": sum_rule}
    print(f"{'A^n':6} {'m':>3} {'n':>3} {'numpy us':>9} {'op us':>8} {'compose':>8} "
          f"{'sum':>8} {'comp/op':>8} {'sum/op':>8}")
    rng = np.random.default_rng(1)
    for m in (4, 16, 64):
        a = rng.standard_normal((m, m)) / np.sqrt(m)
        g = rng.standard_normal((m, m))
        leaf = tf.tensor(a, requires_grad=True)
        ref = tf.grad(tf.linalg.matrix_power(leaf, 7), leaf, g)[0].numpy()
        for f in fns.values():           # the alternatives compute the same gradient
            assert np.allclose(tf.grad(f(leaf, 7), leaf, g)[0].numpy(), ref)
        for n in (2, 3, 5, 8, 10, 16):
            calls = [lambda: np.linalg.matrix_power(a, n)] + [
                lambda f=f: tf.grad(f(leaf, n), leaf, g) for f in fns.values()]
            ts = [t * 1e6 for t in common.medians(calls, timer=timer)]
            print(f"{'':6} {m:3d} {n:3d} {ts[0]:9.1f} {ts[1]:8.1f} {ts[2]:8.1f} "
                  f"{ts[3]:8.1f} {ts[2] / ts[1]:8.2f} {ts[3] / ts[1]:8.2f}", flush=True)


def main(argv=()):
    timer = common.cpu_timer(argv)
    if "--strategies" not in argv:
        print(f"{'op':13} {'dtype':10} {'numpy us':>9} {'np f+b us':>9} {'tf fwd us':>9} "
              f"{'tf f+b us':>9} {'f+b/numpy':>9} {'f+b/np f+b':>10}")
        for op in LinalgExt.params[0]:
            for dtype in LinalgExt.params[1]:
                b = common.setup_bench(LinalgExt, op, dtype)
                ts = common.medians_us([b.time_numpy_primal, b.time_numpy_forward_backward,
                                        b.time_tf_forward, b.time_tf_forward_backward],
                                       (op, dtype), timer=timer)
                print(f"{op:13} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} "
                      f"{ts[3]:9.1f} {ts[3] / ts[0]:9.2f} {ts[3] / ts[1]:10.2f}",
                      flush=True)
        print()
    strategies(timer)


if __name__ == "__main__":
    main(sys.argv[1:])
