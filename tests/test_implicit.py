"""Implicit differentiation: tf.custom_root and tf.fixed_point (tenferro/custom.py)."""
import numpy as np
import pytest
import scipy.optimize

import tenferro as tf
from tenferro import rules
from tenferro.testing import check_grads, check_low_precision

N = 4
_rng = np.random.default_rng(7)
_M = _rng.standard_normal((N, N))
A = _M @ _M.T / N + np.eye(N)
THETA = _rng.standard_normal(N)
W = 0.5 * _rng.standard_normal((N, N)) / np.sqrt(N)      # ‖W‖₂ < 1: a contraction
B = _rng.standard_normal(N)
C = _rng.standard_normal(N)


# ---- (1) bilevel: x*(θ) = argmin ½xᵀAx - θᵀx + ¼Σx⁴, the root of Ax - θ + x³ ----------------

def grad_objective(x, theta):
    return A @ x - theta + x ** 3


def minimize_solver(theta_values):
    """scipy.optimize.minimize, then a Newton polish of the gradient's root: a minimiser
    stops where the objective stops changing in floating point (‖∇‖ ≈ 1e-6 for BFGS's
    default gtol, 1e-10 at best), while the implicit derivative is as accurate as the root."""
    def solver(fun, x0):
        objective = lambda x: (0.5 * x @ A @ x - theta_values @ x  # noqa: E731
                               + 0.25 * np.sum(x ** 4))
        hessian = lambda x: A + 3 * np.diag(x ** 2)  # noqa: E731
        inner = scipy.optimize.minimize(objective, x0, jac=fun, method="BFGS")
        assert inner.success
        return scipy.optimize.root(fun, inner.x, jac=hessian, tol=1e-14)
    return solver


def argmin(theta, dense_max=200):
    th = theta.numpy() if isinstance(theta, tf.Tensor) else np.asarray(theta)
    return tf.custom_root(grad_objective, np.zeros(N), minimize_solver(th), theta,
                          dense_max=dense_max)


def analytic_jacobian(theta):
    """dx*/dθ = (A + 3 diag(x*²))⁻¹ (differentiate A x* - θ + x*³ = 0)."""
    x = argmin(theta).numpy()
    return x, np.linalg.inv(A + 3 * np.diag(x ** 2))


def unrolled_argmin(theta, steps=60):
    """Newton's method written in tenferro ops: differentiable by unrolling."""
    x = tf.zeros(N)
    for _ in range(steps):
        hess = A + 3 * tf.stack([tf.stack([x[i] ** 2 if i == j else x[i] * 0
                                           for j in range(N)]) for i in range(N)])
        x = x - tf.linalg.solve(hess, grad_objective(x, theta))
    return x


@pytest.mark.parametrize("dense_max", [200, 0])      # dense A, and gmres on the operators
def test_bilevel_reverse_and_forward_equal_analytic(dense_max):
    x, jac = analytic_jacobian(THETA)
    theta = tf.tensor(THETA, requires_grad=True)
    xs = argmin(theta, dense_max)
    np.testing.assert_allclose(xs.numpy(), x, rtol=1e-14, atol=1e-14)
    assert np.linalg.norm(grad_objective(xs, THETA).numpy()) < 1e-12
    g, = tf.grad(tf.sum(xs * C), [theta])
    np.testing.assert_allclose(g.numpy(), jac.T @ C, rtol=1e-8, atol=1e-12)
    _, t = tf.jvp(lambda th: argmin(th, dense_max), [THETA], [C])
    np.testing.assert_allclose(t.numpy(), jac @ C, rtol=1e-8, atol=1e-12)


def test_bilevel_equals_unrolled_newton_to_second_order():
    theta = tf.tensor(THETA, requires_grad=True)
    g1, = tf.grad(tf.sum(argmin(theta) ** 2), [theta])
    g2, = tf.grad(tf.sum(unrolled_argmin(theta) ** 2), [theta])
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-8, atol=1e-12)
    _, _, h1 = tf.hvp(lambda th: tf.sum(argmin(th) ** 2), [THETA], [C])
    _, _, h2 = tf.hvp(lambda th: tf.sum(unrolled_argmin(th) ** 2), [THETA], [C])
    np.testing.assert_allclose(h1[0].numpy(), h2[0].numpy(), rtol=1e-8, atol=1e-12)


def test_bilevel_check_grads_second_order():
    check_grads(argmin, [THETA], modes=("rev", "fwd"), order=2)


# ---- (2) the fixed point of x = tanh(Wx + b) -------------------------------------------------

def layer(x, w, b):
    return tf.tanh(w @ x + b)


def fixed(w, b, **kw):
    x0 = np.zeros(N, np.asarray(w.numpy() if isinstance(w, tf.Tensor) else w).dtype)
    return tf.fixed_point(layer, x0, w, b, **kw)


def unrolled(w, b, steps=200):
    x = tf.zeros(N, dtype=w.dtype if isinstance(w, tf.Tensor) else None)
    for _ in range(steps):
        x = layer(x, w, b)
    return x


@pytest.mark.parametrize("dense_max", [200, 0])
def test_fixed_point_equals_unrolled(dense_max):
    w = tf.tensor(W, requires_grad=True)
    b = tf.tensor(B, requires_grad=True)
    x = fixed(w, b, dense_max=dense_max)
    # the default test ‖Δx‖ ≤ 1e-10·‖x‖ bounds the error of the returned x_k+1 by
    # ρ/(1-ρ)·1e-10·‖x‖ for a map contracting by ρ (here ρ ≤ ‖W‖₂: tanh is 1-Lipschitz)
    rho = np.linalg.norm(W, 2)
    x_ref = unrolled(W, B).numpy()
    err = np.linalg.norm(x.numpy() - x_ref)
    assert err <= rho / (1 - rho) * 1e-10 * np.linalg.norm(x_ref)
    # a tighter rtol is met too
    x_tight = fixed(W, B, rtol=1e-14)
    np.testing.assert_allclose(x_tight.numpy(), x_ref, rtol=0, atol=1e-14)
    g1 = tf.grad(tf.sum(x * C), [w, b])
    g2 = tf.grad(tf.sum(unrolled(w, b) * C), [w, b])
    for a, e in zip(g1, g2):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-8, atol=1e-12)
    tw, tb = np.ones((N, N)), C
    _, t1 = tf.jvp(lambda w_, b_: fixed(w_, b_, dense_max=dense_max), [W, B], [tw, tb])
    _, t2 = tf.jvp(unrolled, [W, B], [tw, tb])
    np.testing.assert_allclose(t1.numpy(), t2.numpy(), rtol=1e-8, atol=1e-12)


def test_fixed_point_second_order_equals_unrolled():
    loss = lambda fn: (lambda w, b: tf.sum(tf.sin(fn(w, b))))  # noqa: E731
    _, _, h1 = tf.hvp(loss(fixed), [W, B], [np.ones((N, N)), C])
    _, _, h2 = tf.hvp(loss(unrolled), [W, B], [np.ones((N, N)), C])
    for a, e in zip(h1, h2):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-8, atol=1e-12)
    w = tf.tensor(W, requires_grad=True)
    b = tf.tensor(B, requires_grad=True)
    gb1, = tf.grad(tf.sum(fixed(w, b) ** 2), [b], create_graph=True)
    gb2, = tf.grad(tf.sum(unrolled(w, b) ** 2), [b], create_graph=True)
    hw1, = tf.grad(tf.sum(gb1 * C), [w])
    hw2, = tf.grad(tf.sum(gb2 * C), [w])
    np.testing.assert_allclose(hw1.numpy(), hw2.numpy(), rtol=1e-8, atol=1e-12)


def test_fixed_point_check_grads_and_low_precision():
    check_grads(fixed, [W, B], modes=("rev", "fwd"), order=2)
    check_low_precision(fixed, [W, B])
    x32 = fixed(W.astype(np.float32), B.astype(np.float32))
    assert x32.dtype == np.float32


# ---- other solvers, shapes, errors -----------------------------------------------------------

def test_scipy_root_on_a_matrix_unknown():
    """x (2, 3) solving x + x³/3 = P: scipy.optimize.root flattens; the result keeps x0's
    shape and dx/dP = 1 / (1 + x²) elementwise."""
    p = np.linspace(-2, 2, 6).reshape(2, 3)
    f = lambda x, p: x + x ** 3 / 3 - p  # noqa: E731

    def solve(p_):
        return tf.custom_root(f, np.zeros((2, 3)),
                              lambda fun, x0: scipy.optimize.root(fun, x0, tol=1e-14), p_)
    pt = tf.tensor(p, requires_grad=True)
    x = solve(pt)
    assert x.shape == (2, 3)
    g, = tf.grad(tf.sum(x), [pt])
    np.testing.assert_allclose(g.numpy(), 1 / (1 + x.numpy() ** 2), rtol=1e-10)
    check_grads(solve, [p], order=2)


def test_user_loop_solver_and_no_params():
    newton = lambda fun, x: x - fun(x) / (2 * x)  # noqa: E731

    def solver(fun, x):
        for _ in range(50):
            x = newton(fun, x)
        return tf.tensor(x)                      # a Tensor is accepted
    two = tf.custom_root(lambda x: x ** 2 - 2.0, np.array([1.0]), solver)
    np.testing.assert_allclose(two.numpy(), [np.sqrt(2)], rtol=1e-15)
    assert not two.requires_grad


def test_no_convergence_raises_with_the_residual():
    with pytest.raises(tf.LinAlgError, match=r"residual ‖f\(x, \*params\)‖₂ = .* > .* = "
                       r"atol \+ rtol·scale"):
        tf.custom_root(grad_objective, np.zeros(N), lambda fun, x0: x0, THETA)
    with pytest.raises(tf.LinAlgError, match=r"after 30 iterations.*residual"):
        tf.fixed_point(lambda x, a: 2 * x + a, np.zeros(2), np.ones(2), max_iter=30)
    with pytest.raises(tf.LinAlgError, match="residual"):
        tf.custom_root(lambda x, a: x - a, np.zeros(2), lambda fun, x0: x0 + np.nan,
                       np.ones(2))


def test_singular_jacobian_raises():
    theta = tf.tensor([0.0], requires_grad=True)
    x = tf.custom_root(lambda x, t: x ** 3 - t, np.array([0.0]), lambda fun, x0: x0, theta)
    with pytest.raises(tf.LinAlgError, match="singular"):
        tf.grad(tf.sum(x), [theta])


def test_bad_input():
    with pytest.raises(tf.DTypeError, match="complex"):
        tf.custom_root(lambda x, a: x - a, np.zeros(2), lambda fun, x0: x0, np.ones(2) + 1j)
    with pytest.raises(tf.ShapeError, match="one equation per unknown"):
        tf.custom_root(lambda x, a: tf.sum(x - a), np.zeros(2), lambda fun, x0: x0,
                       np.ones(2))
    with pytest.raises(tf.ShapeError, match="3 values for 2 unknowns"):
        tf.custom_root(lambda x, a: x - a, np.zeros(2), lambda fun, x0: np.zeros(3),
                       np.ones(2))


def test_rules_table_lists_the_implicit_ops():
    names = [row[0] for row in rules.table()]
    assert "custom_root" in names and "fixed_point" in names
    w = tf.tensor(W, requires_grad=True)
    assert fixed(w, B).grad_fn.op.name == "fixed_point"
