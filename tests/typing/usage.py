"""A small typed user program: ``mypy --strict`` must accept it (see .ci/run, stage
"typing"), and the types asserted below are what a type checker sees of tenferro's
public API. It also runs (``python tests/typing/usage.py``); it is not a pytest module
(no ``test_`` name) and is not collected.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray
from typing_extensions import assert_type

import tenferro as tf
from tenferro.custom import custom_jvp, custom_vjp
from tenferro.forward import UnpackedDualTensor
from tenferro.functional import PyTree


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

    # a custom_vjp/custom_jvp is called like the function it decorates
    assert isinstance(square, custom_vjp)
    plain_square: Callable[[tf.Tensor], tf.Tensor] = square
    assert_type(square(w), tf.Tensor)

    def scaled(t: tf.Tensor, k: float) -> tf.Tensor:
        return k * t

    scale = tf.custom_vjp(scaled, nondiff_argnums=(1,))
    scale.defvjp(lambda t, k: (k * t, None), lambda k, res, g: (k * g,))
    assert_type(scale(w, 2.0), tf.Tensor)

    @tf.custom_jvp
    def cube(t: tf.Tensor) -> tf.Tensor:
        return t ** 3

    @cube.defjvp
    def cube_jvp(primals: tuple[tf.Tensor, ...],
                 tangents: tuple[tf.Tensor, ...]) -> tuple[tf.Tensor, tf.Tensor]:
        (t,), (dt,) = primals, tangents
        return t ** 3, 3 * t ** 2 * dt

    assert isinstance(cube, custom_jvp)
    assert_type(cube(w), tf.Tensor)
    tf.testing.check_grads(cube, [np.array([0.5, -1.0])], order=1, tol=(1e-6, 1e-5, 1e-6))
    root = tf.fixed_point(lambda r, p: 0.5 * r + p, np.zeros(3), w)
    assert_type(root, tf.Tensor)
    assert_type(tf.custom_root(lambda r, p: r - p, np.zeros(3), lambda fun, r0: r0 + 0.0, w,
                               tol=1.0), tf.Tensor)

    # function transforms: Jacobians and Hessians are pytrees (their leaves' types follow
    # the arguments: Tensors here), so they are PyTree (Any) to the checker
    jac_fn = tf.jacobian(lambda a: tf.tanh(x @ a), mode="fwd")
    assert_type(jac_fn, Callable[..., PyTree])
    j2: tf.Tensor = jac_fn(w)
    h2: tf.Tensor = tf.hessian(lambda a, b: tf.sum(a * b * b), argnums=1)(w, w)
    hp: tf.Tensor = tf.hessp(lambda a: tf.sum(a ** 4))(w, tf.ones_like(w))
    op = tf.linear_operator(lambda a: tf.sin(a), w, "vjp")
    assert op.shape == (3, 3)

    @tf.checkpoint
    def block(t: tf.Tensor) -> tf.Tensor:
        return tf.tanh(t) * 2

    @tf.checkpoint(check=False)
    def block2(t: tf.Tensor, s: float) -> tf.Tensor:
        return tf.sin(t) * s

    assert_type(block(w), tf.Tensor)
    assert_type(block2(w, 0.5), tf.Tensor)

    # distributions: methods and frozen distributions give Tensors
    assert_type(tf.stats.norm(0.0, 2.0).logpdf(w), tf.Tensor)
    assert_type(tf.stats.gamma.cdf(tf.abs(w) + 0.1, 2.0, scale=1.5), tf.Tensor)
    assert_type(tf.stats.binom.pmf(np.arange(3), 5, 0.3), tf.Tensor)
    assert_type(tf.stats.multivariate_normal.logpdf(x, mean=tf.zeros(3), cov=spd),
                tf.Tensor)
    assert_type(tf.stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), np.ones(3)), tf.Tensor)

    # FFT: the norm is one of three literals
    assert_type(tf.fft.fft(w, norm="ortho"), tf.Tensor)
    assert_type(tf.fft.irfftn(tf.fft.rfftn(x), s=(5, 3), axes=(0, 1)), tf.Tensor)
    assert_type(tf.fft.fftshift(tf.fft.fftfreq(8, d=0.5)), tf.Tensor)

    # the testing helpers
    carr = tf.testing.random_array((2, 3), tf.complex128, rng=1)
    assert_type(carr, NDArray[Any])
    assert_type(tf.testing.random_spd(3), NDArray[Any])
    tf.testing.check_low_precision(lambda t: tf.sum(tf.exp(t)), [np.ones(3)])
    tf.testing.check_grads(lambda t: tf.fft.fft(t), [carr], modes=("rev",), order=2)

    print(float(value), jac.shape, hess.shape, float(sign * tf.exp(logabsdet)),
          float(v) if not isinstance(v, tf.Tensor) else v, g, val, gs, j2.shape, h2.shape,
          hp.shape, root.shape, plain_square(w))


if __name__ == "__main__":
    main()
