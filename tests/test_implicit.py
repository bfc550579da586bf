"""Implicit differentiation: tf.custom_root and tf.fixed_point (tenferro/custom.py)."""
import numpy as np
import pytest
import scipy.integrate
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


def test_zero_dimensional_unknown():
    # a 0-d unknown: the adjoint solve's -λ is a NumPy scalar, which once reached the
    # reverse pass as a tensor's data and failed ("Cannot set flags on array scalars")
    def root(a):
        return tf.custom_root(lambda x, a: x * x - a, np.array(1.0),
                              lambda f, x0: scipy.optimize.root(f, x0).x, a)

    def newton(a):
        return tf.fixed_point(lambda x, a: 0.5 * (x + a / x), np.array(1.0), a)

    for fn in (root, newton):
        a = tf.tensor(2.0, requires_grad=True)
        x = fn(a)
        assert x.shape == ()
        gx, = tf.grad([x], [a])
        np.testing.assert_allclose(gx.numpy(), 0.5 / np.sqrt(2.0), rtol=1e-8)
        check_grads(fn, [np.array(2.0)], modes=("rev", "fwd"), order=2)


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


# ---- the convergence criterion (issue 28) --------------------------------------------------

def cubic(x, p):
    return x + x ** 3 / 3 - p


P6 = np.linspace(-2, 2, 6)


@pytest.mark.parametrize("scale", [1.0, 1e6, 1e-6])
def test_custom_root_accepts_scipy_root_with_its_default_tolerance(scale):
    """scipy.optimize.root's default (hybr, xtol 1.49e-8) leaves ‖f‖ ~ 1e-10 relative on
    well-scaled problems: accepted, whatever the units of f (the test is relative to
    ‖∂f/∂x·x*‖, so multiplying f by a constant changes nothing)."""
    f = lambda x, p: scale * cubic(x, p)  # noqa: E731
    pt = tf.tensor(P6, requires_grad=True)
    x = tf.custom_root(f, np.zeros(6), lambda fun, x0: scipy.optimize.root(fun, x0), pt)
    g, = tf.grad(tf.sum(x), [pt])
    np.testing.assert_allclose(g.numpy(), 1 / (1 + x.numpy() ** 2), rtol=1e-7)
    th = THETA
    x2 = tf.custom_root(lambda x, t: scale * grad_objective(x, t), np.zeros(N),
                        lambda fun, x0: scipy.optimize.root(fun, x0), th)
    assert np.linalg.norm(grad_objective(x2, th).numpy()) < 1e-8


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # broyden1's own 0/0 on f/1e6
@pytest.mark.parametrize("scale", [1.0, 1e-6])
def test_custom_root_rejects_a_root_that_is_not_converged(scale):
    """broyden1 stops on an absolute ‖f‖ ≤ 6e-6 and reports success: on the bilevel problem
    that is 1e-6 relative to ‖∂f/∂x·x*‖ (f as is) or no progress at all (f scaled by
    1e-6): refused, with the residual, the threshold and its parts."""
    f = lambda x, t: scale * grad_objective(x, t)  # noqa: E731
    solver = lambda fun, x0: scipy.optimize.root(fun, x0, method="broyden1")  # noqa: E731
    with pytest.raises(tf.LinAlgError) as e:
        tf.custom_root(f, np.zeros(N), solver, THETA)
    msg = str(e.value)
    res = float(msg.split("‖f(x, *params)‖₂ = ")[1].split(" ")[0])
    assert 1e-7 < res / scale < 10
    assert "atol + rtol·scale with atol = 0, rtol = 1.49e-08, scale = ‖∂f/∂x · x‖₂" in msg
    assert "Tighten the solver's tolerance" in msg
    # the same solver, tightened, is accepted
    tight = lambda fun, x0: scipy.optimize.root(fun, x0, method="broyden1",  # noqa: E731
                                                options={"fatol": 1e-13 * scale})
    x = tf.custom_root(f, np.zeros(N), tight, THETA)
    np.testing.assert_allclose(x.numpy(), argmin(THETA).numpy(), rtol=1e-10)


def test_custom_root_tolerances():
    rough = lambda fun, x0: scipy.optimize.root(fun, x0, method="broyden1")  # noqa: E731
    # tol= is the older spelling of an absolute tolerance: atol=tol, rtol=0
    x = tf.custom_root(grad_objective, np.zeros(N), rough, THETA, tol=1e-4)
    assert np.linalg.norm(grad_objective(x, THETA).numpy()) <= 1e-4
    tf.custom_root(grad_objective, np.zeros(N), rough, THETA, rtol=1e-4)
    tf.custom_root(grad_objective, np.zeros(N), rough, THETA, rtol=0, atol=1e-4)
    with pytest.raises(tf.LinAlgError, match="residual"):
        tf.custom_root(grad_objective, np.zeros(N), rough, THETA, tol=1e-10)
    with pytest.raises(tf.ShapeError, match="either tol .* or rtol/atol"):
        tf.custom_root(grad_objective, np.zeros(N), rough, THETA, tol=1e-4, rtol=1e-4)
    for kw in ({"rtol": -1.0}, {"atol": np.nan}, {"tol": np.inf}):
        with pytest.raises(tf.ShapeError, match="must be finite and >= 0"):
            tf.custom_root(grad_objective, np.zeros(N), rough, THETA, **kw)
    with pytest.raises(tf.ShapeError, match="rtol must be a number"):
        tf.custom_root(grad_objective, np.zeros(N), rough, THETA, rtol="tight")
    # a scipy result that reports failure: its message is in the error
    with pytest.raises(tf.LinAlgError, match="The solver reported failure"):
        tf.custom_root(grad_objective, np.zeros(N),
                       lambda fun, x0: scipy.optimize.root(fun, x0, options={"maxfev": 3}),
                       THETA)


def test_custom_root_at_zero_needs_atol():
    """x* = 0 where f rounds to a non-zero value: ‖∂f/∂x·x*‖ = 0, only atol can accept."""
    f = lambda x, t: tf.exp(x) - 1 - t * 1e-17  # noqa: E731  (f(0) = -1e-17 with t = 1)
    at_zero = lambda fun, x0: np.zeros_like(x0)  # noqa: E731
    with pytest.raises(tf.LinAlgError, match="scale = .* = 0 .*if x is the root, give atol"):
        tf.custom_root(f, np.ones(1), at_zero, np.ones(1))
    t = tf.tensor(np.ones(1), requires_grad=True)
    x = tf.custom_root(f, np.ones(1), at_zero, t, atol=1e-15)
    g, = tf.grad(tf.sum(x), [t])
    np.testing.assert_allclose(g.numpy(), [1e-17])


def test_custom_root_at_the_edge_of_the_domain():
    """x* = 1 - a² of √(1 - x) = a: f is NaN beyond 1, where the central difference of the
    scale reaches with a = 1e-6; the one-sided difference takes over, and the root (whose
    residual, 1.1e-11, is the rounding of 1 - x at 1e-12 from the edge) is accepted."""
    a = tf.tensor(np.array([1e-6]), requires_grad=True)
    x = tf.custom_root(lambda x, a: tf.sqrt(1 - x) - a, np.zeros(1),
                       lambda fun, x0: 1 - np.array([1e-6]) ** 2, a)
    g, = tf.grad(tf.sum(x), [a])
    np.testing.assert_allclose(g.numpy(), [-2e-6], rtol=1e-4)    # dx/da = -2a


def test_fixed_point_tol_is_absolute_and_stops_on_the_step():
    """tol=t: the iteration stops at the first ‖Δx‖ ≤ t and returns that iterate; the
    returned point is exactly the one the test accepted (no recomputed residual)."""
    calls = []

    def g(x, a):
        calls.append(x.numpy().copy())
        return 0.5 * x + a
    x = tf.fixed_point(g, np.zeros(2), np.ones(2), tol=1e-3)
    steps = [np.linalg.norm(b - a) for a, b in zip(calls, calls[1:] + [x.numpy()])]
    assert steps[-1] <= 1e-3 < steps[-2]
    np.testing.assert_array_equal(x.numpy(), 0.5 * calls[-1] + 1)     # = g(x_k)
    assert len(calls) == 12          # x_0..x_11: the first k with ‖Δx‖ = √2·2⁻ᵏ ≤ 1e-3 is 11


def test_fixed_point_default_rtol_by_dtype():
    for dtype, rtol in ((np.float64, 1e-10), (np.float32, 3e-4)):
        xs = []
        g = lambda x, a: (xs.append(x.numpy().copy()), 0.5 * x + a)[1]  # noqa: E731
        x = tf.fixed_point(g, np.zeros(3, dtype), np.ones(3, dtype)).numpy()
        assert x.dtype == dtype
        step = np.linalg.norm(x - xs[-1])
        prev = np.linalg.norm(xs[-1] - xs[-2])
        assert step <= rtol * np.linalg.norm(x) < prev


def test_fixed_point_errors_report_the_numbers_and_what_to_do():
    # not a contraction
    with pytest.raises(tf.LinAlgError, match=r"after 30 iterations.*last step .* > atol \+ "
                       r"rtol·‖x_k\+1‖₂ = 0 \+ 1e-10·.*The steps grow"):
        tf.fixed_point(lambda x, a: 2 * x + a, np.zeros(2), np.ones(2), max_iter=30)
    # a slow contraction: how many more iterations are needed
    with pytest.raises(tf.LinAlgError, match=r"shrink slowly \(by 0.99 per iteration; about "
                       r"(\d+) more iterations"):
        tf.fixed_point(lambda x, a: 0.99 * x + a, np.zeros(2), np.ones(2), max_iter=50)
    # towards x = 0: relative test impossible, atol works
    with pytest.raises(tf.LinAlgError, match=r"shrink towards x = 0.*give .*atol"):
        tf.fixed_point(lambda x: 0.5 * x, np.ones(2), max_iter=100)
    x = tf.fixed_point(lambda x: 0.5 * x, np.ones(2), atol=1e-12)
    assert np.linalg.norm(x.numpy()) <= 1e-12
    # a stall at g's rounding floor (simulated noise of 1e-7): the error suggests an rtol
    # that converges
    rng = np.random.default_rng(1)
    noisy = lambda x, a: 0.5 * x + a + 1e-7 * rng.standard_normal(2)  # noqa: E731
    with pytest.raises(tf.LinAlgError, match=r"stopped decreasing.*pass rtol >= ") as e:
        tf.fixed_point(noisy, np.zeros(2), np.ones(2), max_iter=200)
    rtol = float(str(e.value).split("pass rtol >= ")[1].split(";")[0])
    assert 1e-8 < rtol < 1e-5
    x = tf.fixed_point(noisy, np.zeros(2), np.ones(2), rtol=rtol, max_iter=200)
    np.testing.assert_allclose(x.numpy(), [2, 2], rtol=1e-5)
    # non-finite values stop at once
    with pytest.raises(tf.LinAlgError, match="non-finite values at iteration 2"), \
            np.errstate(over="ignore"):
        tf.fixed_point(lambda x: 1e200 * x + 1, np.ones(1))
    with pytest.raises(tf.ShapeError, match="max_iter = 0"):
        tf.fixed_point(lambda x: x, np.zeros(1), max_iter=0)
    with pytest.raises(tf.DTypeError, match="float16"):
        tf.fixed_point(lambda x: x, np.zeros(1, np.float16))
    with pytest.raises(tf.DTypeError, match="float128|longdouble"):
        tf.custom_root(lambda x: x, np.zeros(1, np.longdouble), lambda fun, x0: x0)


# ---- gauge: power iteration whose sign flips every step -------------------------------------

_Q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((N, N)))
A0 = _Q @ np.diag([3.0, 1.5, 1.0, 0.5]) @ _Q.T          # dominant eigenvalue 3, gap 2x
PHI = 0.1 * np.random.default_rng(4).standard_normal(N)


def flip_power(x, phi):
    """One power-iteration step with A = A0 + diag(φ), negated: x ← -Ax/‖Ax‖. Its iterates
    converge to the dominant eigenvector up to a sign that alternates."""
    ax = (A0 + tf.diag(phi)) @ x
    return -ax / tf.linalg.norm(ax)


def sign_gauge(x, phi):
    """x times the sign of its largest-magnitude entry: a choice made on the values (a
    constant for the derivative), applied with tenferro ops."""
    v = x.numpy()
    return x * tf.as_tensor(np.sign(v[np.argmax(np.abs(v))]).astype(v.dtype))


def eigvec(phi, **kw):
    x0 = np.ones(N, np.asarray(phi.numpy() if isinstance(phi, tf.Tensor) else phi).dtype)
    return tf.fixed_point(flip_power, x0, phi, gauge=sign_gauge, **kw)


def test_gauge_makes_a_sign_flipping_iteration_converge():
    with pytest.raises(tf.LinAlgError, match=r"after 1000 iterations.*converge in absolute "
                       r"value but their signs flip.*pass gauge="):
        tf.fixed_point(flip_power, np.ones(N), PHI)
    x = eigvec(PHI).numpy()
    w, v = np.linalg.eigh(A0 + np.diag(PHI))
    ref = v[:, -1] * np.sign(v[np.argmax(np.abs(v[:, -1])), -1])
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-9)
    assert x[np.argmax(np.abs(x))] > 0
    # the map with its gauge: G(x*) = x* to the tolerance
    g = sign_gauge(flip_power(tf.as_tensor(x), PHI), PHI).numpy()
    assert np.linalg.norm(g - x) <= 2e-10


def gauge_invariant(phi):
    """xᵀ B x with B = diag(1..N): the same for x and -x."""
    x = eigvec(phi)
    return tf.sum(x * x * np.arange(1.0, N + 1, dtype=x.dtype))


def gauge_fixed(phi):
    return eigvec(phi) * 1.0


def test_gauge_derivatives_match_finite_differences_and_unrolling():
    check_grads(gauge_invariant, [PHI], modes=("rev", "fwd"), order=2)
    check_grads(gauge_fixed, [PHI], modes=("rev", "fwd"), order=2)
    # and the derivative of 80 unrolled steps of gauge ∘ g from the fixed point
    # (contraction 0.5 per step: 2^-80 of the start's influence is left)
    x_star = eigvec(PHI).numpy()
    phi = tf.tensor(PHI, requires_grad=True)
    y = tf.as_tensor(x_star)
    for _ in range(80):
        y = sign_gauge(flip_power(y, phi), phi)
    c = np.arange(1.0, N + 1)
    gu, = tf.grad(tf.sum(y * c), [phi])
    gi, = tf.grad(tf.sum(eigvec(phi) * c), [phi])
    np.testing.assert_allclose(gi.numpy(), gu.numpy(), rtol=1e-9, atol=1e-12)


def test_gauge_float32_against_float64():
    x32 = eigvec(PHI.astype(np.float32))
    assert x32.dtype == np.float32
    # float32's default rtol 3e-4 and a contraction ρ = 1/2 bound the error by
    # ρ/(1-ρ)·3e-4·‖x‖ = 3e-4
    assert np.linalg.norm(x32.numpy() - eigvec(PHI).numpy()) <= 3e-4 + 1e-6
    check_low_precision(gauge_invariant, [PHI])
    check_low_precision(gauge_fixed, [PHI])


def test_gauge_bad_input():
    with pytest.raises(TypeError, match="gauge must be a function"):
        tf.fixed_point(flip_power, np.ones(N), PHI, gauge=1.0)
    with pytest.raises(tf.ShapeError, match=r"gauge\(g\(x\)\) has shape \(2,\)"):
        tf.fixed_point(flip_power, np.ones(N), PHI, gauge=lambda x, p: x[:2])


# ---- issue 28: a C4v CTMRG of the 2D Ising model, chi 8, with the defaults ----------------
#
# x packs the corner C (χ×χ) and the edge T (χ×2×χ). One step grows the corner by an edge
# pair and a site, keeps the χ largest-magnitude eigenvectors P of the (symmetric)
# enlarged corner, and renormalises C ← PᵀMP, T ← Pᵀ(T a)P, each normalised. β = 0.30 is
# where the old criterion failed (it stopped on ‖Δx‖ ≤ 1.8e-12, then refused the root for
# ‖x - g(x)‖ = 9.3e-12: the iteration's rounding floor); β = 0.40 is the issue's.

CHI = 8


def ising_site(beta):
    """a[u,l,d,r] = Σ_s W[s,u]W[s,l]W[s,d]W[s,r] with W Wᵀ = exp(βσσ') the bond weight."""
    c, s = tf.sqrt(tf.cosh(beta)), tf.sqrt(tf.sinh(beta))
    w = tf.stack([tf.stack([c, s]), tf.stack([c, -s])])
    return tf.einsum("su,sl,sd,sr->uldr", w, w, w, w)


def ctm_unpack(x):
    return x[:CHI * CHI].reshape((CHI, CHI)), x[CHI * CHI:].reshape((CHI, 2, CHI))


def ctm_pack(c, t):
    return tf.concat([c.reshape((-1,)), t.reshape((-1,))])


def ctm_step(x, beta):
    c, t = ctm_unpack(x)
    a = ising_site(beta)
    m = tf.einsum("ab,api,bqj,pquv->iujv", c, t, t, a).reshape((2 * CHI, 2 * CHI))
    w, u = tf.linalg.eigh(0.5 * (m + m.mT))
    p = u[:, np.argsort(-np.abs(w.numpy()))[:CHI]]     # (a choice: constant, like a sign)
    cn = p.mT @ m @ p
    pr = p.reshape((CHI, 2, CHI))
    tn = tf.einsum("api,aqb,uqvp,bvj->iuj", pr, t, a, pr)
    tn = 0.5 * (tn + tf.permute_dims(tn, (2, 1, 0)))
    return ctm_pack(cn / tf.linalg.norm(cn), tn / tf.linalg.norm(tn))


def ctm_gauge(x, beta):
    """Eigenvector signs: C → SCS, T → STS with S = diag(s); s_i the sign of the
    largest-magnitude entry of T[i, :, 0] (T[0, :, 0] is invariant, so this is canonical)."""
    c, t = ctm_unpack(x)
    col = t.numpy()[:, :, 0]
    s = np.sign(col[np.arange(CHI), np.argmax(np.abs(col), axis=1)])
    s = tf.as_tensor(np.where(s == 0, 1, s).astype(col.dtype))
    return ctm_pack(c * s[:, None] * s[None, :], t * s[:, None, None] * s[None, None, :])


def ctm_x0():
    rng = np.random.default_rng(0)
    c = np.zeros((CHI, CHI))
    t = np.zeros((CHI, 2, CHI))
    c[0, 0] = t[0, 0, 0] = 1.0
    c += 1e-3 * (lambda r: r + r.T)(rng.standard_normal((CHI, CHI)))
    t += 1e-3 * (lambda r: r + r.transpose(2, 1, 0))(rng.standard_normal((CHI, 2, CHI)))
    return np.concatenate([c.ravel(), t.ravel()])


def ctm_env(beta, **kw):
    return tf.fixed_point(ctm_step, ctm_x0(), beta, gauge=ctm_gauge, **kw)


def log_kappa(x, beta):
    """ln κ = -βf per site: κ = Z(C⁴T⁴a) Z(C⁴) / Z(C⁴T²)² (scale and gauge invariant)."""
    c, t = ctm_unpack(x)
    env = tf.einsum("ab,bpc,cd,dqe,ef,frg,gh,hsa->pqrs", c, t, c, t, c, t, c, t)
    z1 = tf.sum(env * ising_site(beta))
    zc = tf.einsum("ab,bc,cd,da->", c, c, c, c)
    zt = tf.einsum("ab,bpc,cd,de,epf,fa->", c, t, c, c, t, c)
    return tf.log(z1 * zc / zt ** 2)


def onsager(beta):
    k = 1 / np.sinh(2 * beta) ** 2
    integrand = lambda th: np.log(np.cosh(2 * beta) ** 2  # noqa: E731
                                  + np.sqrt(1 + k * k - 2 * k * np.cos(2 * th)) / k)
    return np.log(2) / 2 + scipy.integrate.quad(integrand, 0, np.pi)[0] / (2 * np.pi)


def free_energy(beta):
    return log_kappa(ctm_env(beta), beta)


@pytest.mark.parametrize("beta", [0.30, 0.40])
def test_ctmrg_ising_converges_with_the_defaults_and_differentiates(beta):
    lk = free_energy(beta).item()
    assert abs(lk - onsager(beta)) < 1e-9          # chi 8 is exact to 1.4e-15 / 1.3e-10
    b = tf.tensor(beta, requires_grad=True)
    g1, = tf.grad(free_energy(b), [b], create_graph=True)
    g2, = tf.grad(g1, [b])
    h = 1e-4                                       # 5-point central differences
    fs = {k: free_energy(beta + k * h).item() for k in (-2, -1, 1, 2)}
    fd1 = (fs[-2] - 8 * fs[-1] + 8 * fs[1] - fs[2]) / (12 * h)
    fd2 = (-fs[-2] + 16 * fs[-1] - 30 * lk + 16 * fs[1] - fs[2]) / (12 * h * h)
    assert abs(g1.item() - fd1) < 1e-8 * abs(fd1)
    assert abs(g2.item() - fd2) < 1e-5 * abs(fd2)
    _, t = tf.jvp(free_energy, [np.array(beta)], [np.array(1.0)])
    assert abs(t.item() - g1.item()) < 1e-12 * abs(g1.item())
    # unrolled: 150 steps of gauge ∘ step in tenferro ops, from the fixed point (a constant)
    y = tf.as_tensor(ctm_env(beta).numpy())
    b = tf.tensor(beta, requires_grad=True)
    for _ in range(150):
        y = ctm_gauge(ctm_step(y, b), b)
    gu, = tf.grad(log_kappa(y, b), [b])
    assert abs(gu.item() - g1.item()) < 1e-10 * abs(g1.item())


def ctm_step_traced(x, beta):
    """ctm_step with the kept eigenvectors chosen by tf.argsort (replayable by tf.compile)."""
    c, t = ctm_unpack(x)
    a = ising_site(beta)
    m = tf.einsum("ab,api,bqj,pquv->iujv", c, t, t, a).reshape((2 * CHI, 2 * CHI))
    w, u = tf.linalg.eigh(0.5 * (m + m.mT))
    p = u[:, tf.argsort(tf.abs(w), descending=True)[:CHI]]
    cn = p.mT @ m @ p
    pr = p.reshape((CHI, 2, CHI))
    tn = tf.einsum("api,aqb,uqvp,bvj->iuj", pr, t, a, pr)
    tn = 0.5 * (tn + tf.permute_dims(tn, (2, 1, 0)))
    return ctm_pack(cn / tf.linalg.norm(cn), tn / tf.linalg.norm(tn))


def ctm_gauge_traced(x, beta):
    """ctm_gauge with the signs by tf.argmax and tf.sign (replayable by tf.compile)."""
    c, t = ctm_unpack(x)
    col = t[:, :, 0]
    s = tf.sign(col[np.arange(CHI), tf.argmax(tf.abs(col), axis=1)])
    s = s + (1.0 - s * s)
    return ctm_pack(c * s[:, None] * s[None, :], t * s[:, None, None] * s[None, None, :])


@pytest.mark.parametrize("dense_max", [200, 0])     # dense A, and GMRES on the vjp operator
def test_fixed_point_compiled_step_equals_eager(dense_max):
    """compile=True replays gauge ∘ step (argsort, argmax, sign inside the trace): the same
    iterates bit for bit, so the same fixed point and derivative as the eager iteration,
    and the same as the NumPy-choice step that cannot be compiled."""
    def run(step, gauge, compile, order):
        b = tf.tensor(0.40, requires_grad=True)
        x = tf.fixed_point(step, ctm_x0(), b, gauge=gauge, compile=compile,
                           dense_max=dense_max)
        lk = log_kappa(x, b)
        g1, = tf.grad(lk, [b], create_graph=order == 2)
        out = [lk.item(), g1.item()]
        if order == 2:
            out.append(tf.grad(g1, [b])[0].item())
        return x.numpy(), out
    order = 2 if dense_max else 1
    xe, ve = run(ctm_step_traced, ctm_gauge_traced, False, order)
    xc, vc = run(ctm_step_traced, ctm_gauge_traced, True, order)
    np.testing.assert_array_equal(xc, xe)
    assert vc == ve
    xn, vn = run(ctm_step, ctm_gauge, True, order)      # NumPy choices: runs eagerly
    np.testing.assert_allclose(xn, xe, rtol=0, atol=1e-12)
    np.testing.assert_allclose(vn, ve, rtol=1e-12)
    assert abs(ve[0] - onsager(0.40)) < 1e-9


def test_fixed_point_compiled_step_is_replayed():
    calls = []

    def g(x, a):
        calls.append(1)          # Python side effects run once: when the step is recorded
        return 0.5 * x + a
    x = tf.fixed_point(g, np.zeros(2), np.ones(2), tol=1e-3, compile=True)
    y = tf.fixed_point(g, np.zeros(2), np.ones(2), tol=1e-3)
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert len(calls) == 1 + 12          # compiled: 1 recording; eager: 12 steps


def test_fixed_point_keeps_the_compiled_map_for_the_same_functions():
    import tenferro.custom as custom
    calls = []

    def g(x, a):
        calls.append(1)          # runs when the map is recorded only
        return 0.5 * x + a

    x1 = tf.fixed_point(g, np.zeros(2), np.ones(2), compile=True)
    x2 = tf.fixed_point(g, np.zeros(2), np.full(2, 3.0), compile=True)    # new params
    assert len(calls) == 1
    np.testing.assert_array_equal(x1.numpy(), tf.fixed_point(g, np.zeros(2), np.ones(2)).numpy())
    np.testing.assert_array_equal(x2.numpy(), tf.fixed_point(g, np.zeros(2),
                                                             np.full(2, 3.0)).numpy())
    (cm,) = custom._MAPS[g].values()
    assert cm.records == 1
    tf.fixed_point(g, np.zeros(3), np.ones(3), compile=True)    # a new shape: records
    assert cm.records == 2
    import gc
    import weakref
    alive = weakref.ref(g)
    n = len(custom._MAPS)
    del g, cm
    gc.collect()
    assert alive() is None and len(custom._MAPS) == n - 1     # the cache does not keep g
