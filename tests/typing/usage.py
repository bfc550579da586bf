"""A small typed user program: ``mypy --strict`` must accept it (see .ci/run, stage
"typing"), and the types asserted below are what a type checker sees of tenferro's
public API. It also runs (``python tests/typing/usage.py``); it is not a pytest module
(no ``test_`` name) and is not collected.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from typing_extensions import assert_type

import tenferro as tf
from tenferro.forward import UnpackedDualTensor


def loss(w: tf.Tensor, x: tf.Tensor) -> tf.Tensor:
    return tf.sum(tf.tanh(x @ w) ** 2) + 0.5 * tf.mean(w * w)


def main() -> None:
    rng = np.random.default_rng(0)
    x = tf.tensor(rng.standard_normal((5, 3)))
    w = tf.tensor(rng.standard_normal(3), requires_grad=True)
    assert_type(x, tf.Tensor)
    assert_type(x.shape, tuple[int, ...])
    assert_type(x.dtype, np.dtype)
    assert_type(x.T, tf.Tensor)
    assert_type(x[0, 1:], tf.Tensor)
    assert_type(-x + 1.0, tf.Tensor)
    assert_type(2 * x, tf.Tensor)
    assert_type(x == 0, tf.Tensor)
    assert_type(x.sum(axis=0), tf.Tensor)
    assert_type(x.reshape(3, 5).mT, tf.Tensor)
    assert_type(tf.exp(x), tf.Tensor)
    assert_type(tf.maximum(x, 0.0), tf.Tensor)
    assert_type(tf.einsum("ij,j->i", x, w), tf.Tensor)
    assert_type(tf.zeros((2, 2), dtype=tf.float32), tf.Tensor)
    arr: NDArray[np.float64] = np.ones(3)
    assert_type(tf.as_tensor(arr), tf.Tensor)
    assert_type(x.numpy(), NDArray[Any])

    # reverse mode
    value = loss(w, x)
    value.backward()
    assert w.grad is not None
    assert_type(w.grad, tf.Tensor)
    (gw,) = tf.grad(loss(w, x), [w])
    assert_type(gw, tf.Tensor | None)
    with tf.no_grad():
        assert not loss(w, x).requires_grad
    vg = tf.value_and_grad(loss)
    v, g = vg(w, x)

    # forward mode and higher order
    out, tangent = tf.jvp(lambda a: tf.sin(a), (w,), (tf.ones_like(w),))
    assert_type(out, tf.Tensor)
    assert_type(tangent, tf.Tensor)
    with tf.forward_ad.dual_level():
        d = tf.forward_ad.make_dual(w, tf.ones_like(w))
        assert_type(tf.forward_ad.unpack_dual(tf.cos(d)), UnpackedDualTensor)
    val, gs, hv = tf.hvp(lambda a: tf.sum(a ** 3), w, tf.ones_like(w))
    assert_type(hv, tf.Tensor)
    jac = tf.jacobian(lambda a: tf.tanh(x @ a))(w)
    hess = tf.hessian(lambda a: tf.sum(a ** 4))(w)

    # linear algebra
    a = tf.tensor(rng.standard_normal((3, 3))) + 3 * tf.eye(3)
    spd = a @ a.mT
    assert_type(tf.linalg.solve(a, w), tf.Tensor)
    assert_type(tf.linalg.inv(a), tf.Tensor)
    assert_type(tf.linalg.det(a), tf.Tensor)
    assert_type(tf.linalg.cholesky(spd), tf.Tensor)
    sign, logabsdet = tf.linalg.slogdet(a)
    assert_type(tf.linalg.matrix_exp(a), tf.Tensor)
    assert_type(tf.linalg.norm(a), tf.Tensor)
    assert_type(a.det(), tf.Tensor)

    # special functions and distributions
    assert_type(tf.special.gammaln(tf.abs(w) + 1), tf.Tensor)
    assert_type(tf.special.xlogy(w, tf.abs(w) + 1), tf.Tensor)
    assert_type(tf.special.softmax(w), tf.Tensor)
    assert_type(tf.stats.norm.logpdf(w, 0.0, 1.0), tf.Tensor)
    assert_type(tf.stats.poisson.logpmf(np.arange(3), tf.abs(w) + 1), tf.Tensor)

    # custom rules, FFT, sorting, and the testing helpers
    @tf.custom_vjp
    def square(t: tf.Tensor) -> tf.Tensor:
        return t * t

    def square_fwd(t: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return t * t, t

    def square_bwd(t: tf.Tensor, g: tf.Tensor) -> tuple[tf.Tensor]:
        return (2 * t * g,)

    square.defvjp(square_fwd, square_bwd)
    assert_type(tf.fft.rfft(w), tf.Tensor)
    assert_type(tf.sort(w, descending=True), tf.Tensor)
    assert_type(tf.unstack(x), tuple[tf.Tensor, ...])
    assert_type(tf.testing.random_tensor((3,), requires_grad=True), tf.Tensor)
    tf.testing.check_grads(lambda t: tf.sum(square(t)), [w.detach()], order=1)

    print(float(value), jac.shape, hess.shape, float(sign * tf.exp(logabsdet)),
          float(v) if not isinstance(v, tf.Tensor) else v, g, val, gs)


if __name__ == "__main__":
    main()
