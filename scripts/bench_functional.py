"""Jacobian cost against vector-Jacobian products, on one thread (medians).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/bench_functional.py

f(x) = tanh(A @ x), A (n, n), n = 64. Prints the median time of
  * one vjp           tf.vjp(f, x) and one pullback call (record + one reverse pass)
  * n vjps            n separate tf.vjp(f, x) + pullback calls: the naive Jacobian
  * one pullback      one more reverse pass on an already recorded graph
  * jacobian rev/fwd  tf.jacobian(f, mode=...)
  * hessian n=32, hessp n=64 (f = sum(tanh(A @ x)**2))
and the ratio of tf.jacobian(mode="rev") to n × (one vjp), the target being <= 1.5.
"""
import os
import timeit

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402


def median_s(fn, repeat=15):
    number = max(1, int(0.02 / max(min(timeit.repeat(fn, number=1, repeat=3)), 1e-7)))
    return float(np.median(timeit.repeat(fn, number=number, repeat=repeat))) / number


def main(n=64):
    rng = np.random.default_rng(0)
    A = tf.as_tensor(rng.standard_normal((n, n)) / np.sqrt(n))
    x = rng.standard_normal(n)
    e0 = np.zeros(n)
    e0[0] = 1.0

    def f(x):
        return tf.tanh(A @ x)

    def one_vjp():
        _, pb = tf.vjp(f, x)
        pb(e0)

    def n_vjps():
        for i in range(n):
            e = np.zeros(n)
            e[i] = 1.0
            _, pb = tf.vjp(f, x)
            pb(e)

    _, pb = tf.vjp(f, x)
    jac_rev, jac_fwd = tf.jacobian(f, mode="rev"), tf.jacobian(f, mode="fwd")

    def loss(x):
        return tf.sum(tf.tanh(A @ x) ** 2)

    m = 32
    A32 = tf.as_tensor(rng.standard_normal((m, m)) / np.sqrt(m))
    hess = tf.hessian(lambda x: tf.sum(tf.tanh(A32 @ x) ** 2))
    hp = tf.hessp(loss)
    x32, p = rng.standard_normal(m), rng.standard_normal(n)

    t = {
        "one vjp (record + 1 pullback)": median_s(one_vjp),
        f"{n} vjps (record + pullback each)": median_s(n_vjps, 7),
        "one pullback on a recorded graph": median_s(lambda: pb(e0)),
        f"jacobian rev n={n}": median_s(lambda: jac_rev(x), 7),
        f"jacobian fwd n={n}": median_s(lambda: jac_fwd(x), 7),
        f"hessian n={m}": median_s(lambda: hess(x32), 7),
        f"hessp n={n}": median_s(lambda: hp(x, p)),
    }
    for k, v in t.items():
        print(f"{k:40s} {v * 1e6:10.1f} us")
    base = n * t["one vjp (record + 1 pullback)"]
    print(f"jacobian rev / ({n} x one vjp)          {t[f'jacobian rev n={n}'] / base:6.2f}")
    print(f"jacobian fwd / ({n} x one vjp)          {t[f'jacobian fwd n={n}'] / base:6.2f}")
    print(f"jacobian rev / {n} separate vjps        "
          f"{t[f'jacobian rev n={n}'] / t[f'{n} vjps (record + pullback each)']:6.2f}")


if __name__ == "__main__":
    main()
