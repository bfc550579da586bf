"""tenferro.integrate.solve_ivp / odeint: values against SciPy, derivatives against
analytic solutions and central finite differences (reverse and forward), errors.

The derivative solves use the primal's tolerances, so the derivative is as accurate as
the solution: the finite-difference checks solve at rtol 1e-12 (DOP853) and difference
with a step of 1e-4, where the O(h²) truncation (~1e-8) and the solver's noise divided by
the step (~1e-12 / 1e-4) both sit below the check's rtol of 1e-6.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.integrate

import tenferro as tf
from tenferro.integrate import _ode
from tenferro.testing import check_grads, record_calls

TIGHT = dict(method="DOP853", rtol=1e-12, atol=1e-14)
FD_TOL = (1e-4, 1e-6, 1e-9)      # (step, rtol, atol) of check_grads


def decay(t, y, k):
    return -k * y


def oscillator(t, y, w):
    return tf.stack([y[1], -(w ** 2) * y[0]])


def forced(t, y, a, b):
    # time-dependent and nonlinear: y' = a·sin(t)·y − b·y³ (componentwise)
    return a * tf.sin(t) * y - b * y ** 3


# ---- values ---------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_values_match_scipy(method):
    y0 = np.array([1.0, 0.5])
    a, b = np.array([0.3, -0.2]), 0.4
    te = np.linspace(0, 3, 7)
    kw = dict(method=method, t_eval=te, rtol=1e-8, atol=1e-10)
    for grad in (False, True):
        r = tf.integrate.solve_ivp(forced, (0.0, 3.0), y0,
                                   args=(tf.tensor(a, requires_grad=grad), b), **kw)
        # the dense output is kept (for the adjoint) only when a node is recorded:
        # DOP853's interpolant costs evaluations, so nfev tells
        ref = scipy.integrate.solve_ivp(lambda t, y: a * np.sin(t) * y - b * y ** 3, (0, 3),
                                        y0, dense_output=grad, **kw)
        assert isinstance(r.y, tf.Tensor) and r.y.shape == (2, 7)
        np.testing.assert_allclose(r.y.numpy(), ref.y, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(r.t.numpy(), te)
        assert r.success and r.status == 0 and r.nfev == ref.nfev
        assert r.y.requires_grad == grad


def test_solver_steps_without_t_eval_and_dense_output():
    r = tf.integrate.solve_ivp(decay, (0.0, 2.0), [1.0], args=(0.5,), dense_output=True)
    ref = scipy.integrate.solve_ivp(lambda t, y: -0.5 * y, (0, 2), [1.0])
    np.testing.assert_array_equal(r.t.numpy(), ref.t)
    np.testing.assert_allclose(r.y.numpy(), ref.y, rtol=1e-14)
    np.testing.assert_allclose(r.sol(1.0), ref.y[:, -1] * 0 + np.exp(-0.5), rtol=1e-3)
    assert r.message == ref.message and r["nfev"] == r.nfev


def test_complex_values_match_scipy():
    lam = np.array([-0.3 + 2.0j, 0.1 - 1.0j])
    y0 = np.array([1.0 + 0.5j, -0.2j])
    r = tf.integrate.solve_ivp(lambda t, y, l: l * y, (0.0, 2.0), y0, t_eval=[1.0, 2.0],
                               args=(tf.tensor(lam),), rtol=1e-10, atol=1e-12)
    assert r.y.dtype == np.complex128
    np.testing.assert_allclose(r.y.numpy(), y0[:, None] * np.exp(np.outer(lam, [1.0, 2.0])),
                               rtol=1e-8)


# ---- derivatives against analytic solutions -------------------------------------------------

def test_decay_gradient_analytic():
    # y' = −k y: y(T) = y0 e^{−kT}; dy/dk = −T y0 e^{−kT}, dy/dy0 = e^{−kT},
    # dy/dT = −k y(T) (T in t_eval), dy/dt0 = k y(T) (t0 in t_span)
    k0, y00, T = 0.7, 2.0, 1.5
    k = tf.tensor(k0, requires_grad=True)
    y0 = tf.tensor([y00], requires_grad=True)
    t0 = tf.tensor(0.0, requires_grad=True)
    te = tf.tensor([0.5, T], requires_grad=True)
    r = tf.integrate.solve_ivp(decay, (t0, 2.0), y0, t_eval=te, args=(k,), **TIGHT)
    gk, gy0, gt0, gte = tf.grad([r.y[0, -1]], [k, y0, t0, te])
    yT = y00 * np.exp(-k0 * T)
    np.testing.assert_allclose(gk.numpy(), -T * yT, rtol=1e-9)
    np.testing.assert_allclose(gy0.numpy(), [np.exp(-k0 * T)], rtol=1e-9)
    np.testing.assert_allclose(gt0.numpy(), k0 * yT, rtol=1e-9)
    np.testing.assert_allclose(gte.numpy(), [0.0, -k0 * yT], rtol=1e-9, atol=1e-15)
    # forward mode: the same numbers as tangents
    _, dk = tf.jvp(lambda kk: tf.integrate.solve_ivp(decay, (0.0, 2.0), [y00], t_eval=[T],
                                                     args=(kk,), **TIGHT).y, [k0], [1.0])
    np.testing.assert_allclose(dk.numpy(), [[-T * yT]], rtol=1e-9)
    _, dt = tf.jvp(lambda tt: tf.integrate.solve_ivp(decay, (tt, 2.0), [y00], t_eval=[T],
                                                     args=(k0,), **TIGHT).y, [0.0], [1.0])
    np.testing.assert_allclose(dt.numpy(), [[k0 * yT]], rtol=1e-9)


def test_stiff_decay_adjoint_uses_the_forward_trajectory():
    # y' = −k y with k T = 60: y(T) = e^{−60} ≈ 9e-27. Re-integrating y backwards from
    # y(T) would amplify the solver's error by e^{60}; reading the forward dense output
    # keeps every digit the tolerance allows (relative accuracy on a 1e-26 gradient).
    k0, T = 30.0, 2.0
    k = tf.tensor(k0, requires_grad=True)
    y0 = tf.tensor([1.0], requires_grad=True)
    r = tf.integrate.solve_ivp(decay, (0.0, T), y0, t_eval=[T], args=(k,), method="Radau",
                               rtol=1e-10, atol=1e-40)
    gk, gy0 = tf.grad([r.y[0, 0]], [k, y0])
    np.testing.assert_allclose(gy0.numpy(), [np.exp(-k0 * T)], rtol=1e-7)
    np.testing.assert_allclose(gk.numpy(), -T * np.exp(-k0 * T), rtol=1e-7)


def test_harmonic_oscillator_analytic():
    # x'' = −ω² x: x(T) = x0 cos ωT + v0 sin(ωT)/ω
    w0, T, x0, v0 = 1.3, 2.0, 0.7, -0.4
    w = tf.tensor(w0, requires_grad=True)
    y0 = tf.tensor([x0, v0], requires_grad=True)
    r = tf.integrate.solve_ivp(oscillator, (0.0, T), y0, t_eval=[T], args=(w,), **TIGHT)
    gw, gy0 = tf.grad([r.y[0, 0]], [w, y0])
    c, s = np.cos(w0 * T), np.sin(w0 * T)
    dxdw = -x0 * T * s + v0 * (T * c / w0 - s / w0 ** 2)
    np.testing.assert_allclose(gw.numpy(), dxdw, rtol=1e-9)
    np.testing.assert_allclose(gy0.numpy(), [c, s / w0], rtol=1e-9)
    _, tw = tf.jvp(lambda ww: tf.integrate.solve_ivp(oscillator, (0.0, T), [x0, v0],
                                                     t_eval=[T], args=(ww,), **TIGHT).y,
                   [w0], [1.0])
    np.testing.assert_allclose(tw.numpy()[0, 0], dxdw, rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_linear_system_matches_matrix_exp(dtype):
    # y' = A y: y(T) = expm(A T) y0, so dL/dA through the ODE equals dL/dA through
    # tf.linalg.matrix_exp's own derivative
    rng = np.random.default_rng(3)
    n, T = 3, 1.2
    A = rng.standard_normal((n, n)) * 0.5
    y0 = rng.standard_normal(n)
    w = rng.standard_normal(n)
    if dtype == np.complex128:
        A = A + 0.5j * rng.standard_normal((n, n))
        y0 = y0 + 1j * rng.standard_normal(n)
        w = w + 1j * rng.standard_normal(n)

    def loss_ode(a, y):
        yT = tf.integrate.solve_ivp(lambda t, yy, aa: aa @ yy, (0.0, T), y, t_eval=[T],
                                    args=(a,), **TIGHT).y[:, 0]
        return tf.real(tf.sum(yT * np.conj(w)))

    def loss_expm(a, y):
        return tf.real(tf.sum((tf.linalg.matrix_exp(a * T) @ y) * np.conj(w)))

    a1 = tf.tensor(A, requires_grad=True)
    ya = tf.tensor(y0, requires_grad=True)
    g_ode = tf.grad([loss_ode(a1, ya)], [a1, ya])
    g_exp = tf.grad([loss_expm(a1, ya)], [a1, ya])
    for u, v in zip(g_ode, g_exp):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-9, atol=1e-11)
    ta, ty = rng.standard_normal((n, n)).astype(dtype), rng.standard_normal(n).astype(dtype)
    _, j_ode = tf.jvp(loss_ode, [A, y0], [ta, ty])
    _, j_exp = tf.jvp(loss_expm, [A, y0], [ta, ty])
    np.testing.assert_allclose(j_ode.numpy(), j_exp.numpy(), rtol=1e-9)


# ---- derivatives against finite differences --------------------------------------------------

def test_check_grads_nonlinear_all_inputs():
    # y0, the parameters, t_eval and both ends of t_span at once, reverse and forward
    def f(y0, a, b, te, t0):
        return tf.integrate.solve_ivp(forced, (t0, 3.0), y0, t_eval=te, args=(a, b),
                                      **TIGHT).y
    check_grads(f, [np.array([1.0, 0.5]), np.array([0.3, -0.2]), np.array(0.4),
                    np.array([0.5, 1.7, 2.9]), np.array(0.1)], order=1, tol=FD_TOL)


@pytest.mark.parametrize("method", ["RK45", "Radau", "BDF", "LSODA"])
def test_check_grads_each_method(method):
    # the derivative solves use the caller's method (Radau/BDF: with the adjoint's Jacobian
    # sparsity pattern); each method's own truncation error sets the tolerance here
    def f(y0, a, b):
        return tf.integrate.solve_ivp(forced, (0.0, 2.0), y0, t_eval=[1.0, 2.0], args=(a, b),
                                      method=method, rtol=1e-11, atol=1e-13).y
    check_grads(f, [np.array([1.0, 0.5]), np.array([0.3, -0.2]), np.array(0.4)], order=1,
                tol=(1e-4, 1e-5, 1e-8))


@pytest.mark.parametrize("method", ["BDF", "DOP853"])
def test_check_grads_complex_methods(method):
    def f(y0, lam):
        return tf.integrate.solve_ivp(lambda t, y, l: l * y - 0.1 * y * tf.conj(y) * y,
                                      (0.0, 1.0), y0, t_eval=[1.0], args=(lam,),
                                      method=method, rtol=1e-11, atol=1e-13).y
    check_grads(f, [np.array([0.5 + 0.2j, -0.3j]), np.array([-0.2 + 1.0j, 0.1 - 0.5j])],
                order=1, tol=(1e-4, 1e-5, 1e-8))


def test_check_grads_solver_steps_and_t_span():
    # without t_eval, the first column is y(t0) and the last y(t1): both move with t_span
    def f(y0, t0, t1):
        r = tf.integrate.solve_ivp(forced, (t0, t1), y0, args=(0.5, 0.3), **TIGHT)
        return tf.stack([r.y[:, 0], r.y[:, -1]])
    check_grads(f, [np.array([1.0, -0.5]), np.array(0.2), np.array(2.5)], order=1,
                tol=FD_TOL)


def test_check_grads_backwards_in_time():
    def f(y0, a):
        return tf.integrate.solve_ivp(forced, (3.0, 0.5), y0, t_eval=[2.0, 0.5],
                                      args=(a, 0.2), **TIGHT).y
    check_grads(f, [np.array([0.4, 0.9]), np.array([0.3, 0.1])], order=1, tol=FD_TOL)


def test_check_grads_complex():
    def f(y0, lam, m):
        fun = lambda t, y, l, mm: l * y + mm @ (y * tf.conj(y))
        return tf.integrate.solve_ivp(fun, (0.0, 1.0), y0, t_eval=[0.4, 1.0],
                                      args=(lam, m), **TIGHT).y
    rng = np.random.default_rng(1)
    check_grads(f, [np.array([0.5 + 0.2j, -0.3j]), np.array([-0.2 + 1.0j, 0.1 - 0.5j]),
                    0.1 * (rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2)))],
                order=1, tol=FD_TOL)


def test_non_finite_cotangent_propagates():
    # a NaN cotangent (sqrt of a negative value downstream) gives NaN gradients, as
    # through any op, instead of SciPy's refusal of a non-finite adjoint state
    k = tf.tensor(0.5, requires_grad=True)
    y0 = tf.tensor([1.0, 2.0], requires_grad=True)
    r = tf.integrate.solve_ivp(decay, (0, 1), y0, t_eval=[1.0], args=(k,))
    with np.errstate(invalid="ignore"):
        loss = tf.sum(tf.sqrt(r.y - 1.0))     # y(1) = [1.21, 0.61]
    gk, gy = tf.grad([loss], [k, y0])
    assert np.isnan(gk.item()) and np.all(np.isnan(gy.numpy()))


def test_check_grads_real_state_complex_parameter():
    # a complex parameter of a real system makes the derivative states complex; y's part
    # of them is real
    def f(y0, lam):
        return tf.integrate.solve_ivp(lambda t, y, l: tf.real(l * y) - 0.2 * y ** 2,
                                      (0.0, 1.5), y0, t_eval=[0.7, 1.5], args=(lam,),
                                      **TIGHT).y
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no ComplexWarning from a cast
        check_grads(f, [np.array([0.5, -0.3]), np.array([-0.2 + 1.0j, 0.1 - 0.5j])],
                    order=1, tol=FD_TOL)


def test_composes_with_other_ops_and_backward():
    k = tf.tensor(0.8, requires_grad=True)
    scale = tf.tensor(2.0, requires_grad=True)
    y0 = tf.exp(scale) * tf.ones(2)
    r = tf.integrate.solve_ivp(decay, (0.0, 1.0), y0, t_eval=[1.0], args=(k,), **TIGHT)
    loss = tf.sum(r.y ** 2)
    loss.backward()
    yT = np.exp(2.0 - 0.8)
    # loss = 2 e^{2s − 2k}: d/ds = 2 loss, d/dk = −2 loss
    np.testing.assert_allclose(scale.grad.numpy(), 4 * yT ** 2, rtol=1e-9)
    np.testing.assert_allclose(k.grad.numpy(), -4 * yT ** 2, rtol=1e-9)


def test_float32_input_computes_in_float64():
    # as SciPy: the solve runs in float64; the gradient comes back in y0's dtype
    y0 = tf.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    r = tf.integrate.solve_ivp(decay, (0.0, 1.0), y0, t_eval=[1.0], args=(0.5,), **TIGHT)
    assert r.y.dtype == np.float64
    g, = tf.grad([tf.sum(r.y)], [y0])
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), np.exp(-0.5) * np.ones(2), rtol=1e-6)


# ---- odeint ---------------------------------------------------------------------------------

def test_odeint_matches_scipy_and_differentiates():
    t = np.linspace(0.0, 2.0, 5)
    y0 = np.array([1.0, 0.0])
    out = tf.integrate.odeint(lambda y, tt, w: oscillator(tt, y, w), y0, t, args=(1.5,))
    ref = scipy.integrate.odeint(lambda y, tt: [y[1], -2.25 * y[0]], y0, t)
    assert out.shape == (5, 2)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-8)
    out2, info = tf.integrate.odeint(oscillator, y0, t, args=(1.5,), tfirst=True,
                                     full_output=True)
    np.testing.assert_allclose(out2.numpy(), out.numpy(), rtol=1e-14)
    assert info["nfev"] > 0

    def f(y0, w, tt):
        return tf.integrate.odeint(oscillator, y0, tt, args=(w,), tfirst=True, rtol=1e-12,
                                   atol=1e-13)
    check_grads(f, [y0, np.array(1.5), np.array([0.1, 0.9, 2.0])], order=1,
                tol=(1e-4, 1e-5, 1e-8))


# ---- errors ---------------------------------------------------------------------------------

def _no_record(monkeypatch):
    return record_calls(monkeypatch, _ode, "apply1")


def test_wrong_shape_raises(monkeypatch):
    calls = _no_record(monkeypatch)
    k = tf.tensor(1.0, requires_grad=True)
    with pytest.raises(tf.ShapeError, match=r"returned shape \(3,\) for y of shape \(2,\)"):
        tf.integrate.solve_ivp(lambda t, y, k: tf.concat([y, y[:1]]) * k, (0, 1),
                               [1.0, 2.0], args=(k,))
    with pytest.raises(tf.ShapeError, match="1-dimensional"):
        tf.integrate.solve_ivp(decay, (0, 1), np.ones((2, 2)), args=(k,))
    with pytest.raises(tf.ShapeError, match="pair"):
        tf.integrate.solve_ivp(decay, (0, 1, 2), [1.0], args=(k,))
    with pytest.raises(tf.ShapeError, match="refused the input.*t_eval"):
        tf.integrate.solve_ivp(decay, (0, 1), [1.0], t_eval=[0.5, 2.0], args=(k,))
    with pytest.raises(tf.ShapeError, match="t_eval must be a 1-d"):
        tf.integrate.solve_ivp(decay, (0, 1), [1.0], t_eval=[[0.5]], args=(k,))
    with pytest.raises(tf.ShapeError, match="t must be a 1-d"):
        tf.integrate.odeint(lambda y, t, k: -k * y, [1.0], 1.0, args=(k,))
    assert calls == []


def test_non_finite_and_failed_integration_raise(monkeypatch):
    calls = _no_record(monkeypatch)
    c = tf.tensor(1.0, requires_grad=True)
    with pytest.raises(tf.IntegrationError, match="not finite at t = .*LSODA"):
        tf.integrate.solve_ivp(lambda t, y, c: tf.log(y - c), (0, 1), [0.5], args=(c,))
    # y' = y² from y(0) = 1 blows up at t = 1: the solver fails before t = 2
    with pytest.raises(tf.IntegrationError) as e:
        tf.integrate.solve_ivp(lambda t, y, c: c * y ** 2, (0, 2), [1.0], args=(c,))
    assert "Radau" in str(e.value) and "t_span" in str(e.value)
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, tf.TenferroError)
    assert calls == []
    assert c.grad is None


def test_unsupported_options_and_second_order():
    with pytest.raises(tf.UnsupportedADError, match="events"):
        tf.integrate.solve_ivp(decay, (0, 1), [1.0], args=(1.0,), events=lambda t, y, k: y)
    with pytest.raises(tf.UnsupportedADError, match="Dfun"):
        tf.integrate.odeint(lambda y, t: -y, [1.0], [0.0, 1.0], Dfun=lambda y, t: -1.0)
    for method in ("LSODA", "Radau"):
        with pytest.raises(tf.DTypeError, match=f"{method}.*real systems only"):
            tf.integrate.solve_ivp(decay, (0, 1), [1.0j], args=(1.0,), method=method)
    k = tf.tensor(0.5, requires_grad=True)
    # second order through the times: refused (the first order works)
    t1 = tf.tensor(1.0, requires_grad=True)
    r = tf.integrate.solve_ivp(decay, (0, t1), [1.0], args=(0.5,), rtol=1e-8)
    (g,) = tf.grad([r.y[0, -1]], [t1])
    np.testing.assert_allclose(g.item(), -0.5 * np.exp(-0.5), rtol=1e-6)
    r = tf.integrate.solve_ivp(decay, (0, t1), [1.0], args=(k,), rtol=1e-8)
    with pytest.raises(tf.UnsupportedADError, match="through the times"):
        tf.grad([r.y[0, -1]], [k, t1], create_graph=True)
    with pytest.raises(tf.UnsupportedADError, match="tangent of the times"):
        tf.hvp(lambda tt: tf.integrate.solve_ivp(decay, (0, tt), [1.0], args=(0.5,)).y[0, -1],
               [1.0], [1.0])


def _forced(t, y, k):
    return -k[0] * y + k[1] * tf.sin(y[::-1]) + 0.1 * tf.cos(t)


@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA", "BDF"])
def test_second_order(method):
    """Under create_graph the VJP solves the adjoint system, and on Tensors the JVP the
    variational system, as solve_ivp calls of right-hand sides written in tenferro ops,
    so both differentiate again: check_grads' every second-order combination (reverse
    over reverse, forward over reverse, reverse over forward, forward over forward) in y0
    and args, with and without t_eval, real and complex."""
    tight = dict(method=method, rtol=1e-10, atol=1e-12)
    y0, k = np.array([1.0, -0.5]), np.array([0.7, 0.3])
    check_grads(lambda y, kk: tf.integrate.solve_ivp(
        _forced, (0.0, 1.5), y, t_eval=np.linspace(0.2, 1.5, 4), args=(kk,), **tight).y,
        [y0, k])
    if method == "RK45":
        check_grads(lambda y, kk: tf.integrate.solve_ivp(
            _forced, (0.0, 1.5), y, args=(kk,), **tight).y[:, -1], [y0, k])
        check_grads(lambda y, lam: tf.integrate.solve_ivp(
            lambda t, u, c: c * u, (0.0, 1.0), y, t_eval=[0.5, 1.0], args=(lam,),
            **tight).y, [np.array([1.0 + 0.5j, -0.5j]), np.array([-0.3 + 0.8j])])


def test_hessian_of_the_ode_fit_loss():
    """examples/ode_fit.py's loss: tf.hessian against central differences of the
    gradient, and Hessian-vector products by two tf.grad calls and by tf.hvp."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "examples" / "ode_fit.py"
    spec = importlib.util.spec_from_file_location("ode_fit", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x0 = np.log(mod.START)
    h = tf.hessian(mod.loss)(x0)
    h = h.numpy() if isinstance(h, tf.Tensor) else np.asarray(h)
    vg = tf.value_and_grad(mod.loss)
    eps = 1e-5
    fd = np.array([(vg(x0 + eps * e)[1] - vg(x0 - eps * e)[1]) / (2 * eps)
                   for e in np.eye(4)])
    np.testing.assert_allclose(h, fd, rtol=1e-4, atol=1e-4 * np.abs(fd).max())
    np.testing.assert_allclose(h, h.T, rtol=1e-6, atol=1e-8 * np.abs(h).max())
    v = np.array([0.3, -1.0, 0.5, 0.2])
    t = tf.tensor(x0, requires_grad=True)
    (g,) = tf.grad([mod.loss(t)], [t], create_graph=True)
    (hv,) = tf.grad([(g * v).sum()], [t])
    np.testing.assert_allclose(hv.numpy(), h @ v, rtol=1e-8, atol=1e-10 * np.abs(h).max())
    _, _, hv2 = tf.hvp(mod.loss, x0, v)                         # forward over reverse
    np.testing.assert_allclose(hv2.numpy(), h @ v, rtol=1e-6, atol=1e-8 * np.abs(h).max())


def test_derivative_not_finite_raises():
    # y' = k·sqrt(y) from y0 = 0 stays at 0 (the primal is fine), but ∂f/∂y = ∞ there:
    # the adjoint and tangent systems refuse it instead of returning NaN
    k = tf.tensor(1.0, requires_grad=True)
    y0 = tf.tensor([0.0], requires_grad=True)
    fun = lambda t, y, k: k * tf.sqrt(y)
    r = tf.integrate.solve_ivp(fun, (0, 1), y0, t_eval=[1.0], args=(k,))
    np.testing.assert_array_equal(r.y.numpy(), [[0.0]])
    with pytest.raises(tf.IntegrationError, match="adjoint .* not finite"):
        tf.grad([r.y[0, 0]], [y0])
    with pytest.raises(tf.IntegrationError, match="tangent .* not finite"):
        tf.jvp(lambda y: tf.integrate.solve_ivp(fun, (0, 1), y, t_eval=[1.0],
                                                args=(1.0,)).y, [[0.0]], [[1.0]])
    assert y0.grad is None and k.grad is None


# ---- docs/ode.md ----------------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "ode.md"


def test_doc_examples():
    """Runs every ```python block of docs/ode.md in order, in one namespace (the blocks
    hold their own assertions: the analytic decay gradient, the fitted rate, the error)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 3
    namespace: dict = {}
    for k, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name}[block {k}]", "exec"), namespace)
    assert abs(namespace["k_fit"] - 1.3) < 0.02


def test_compile_replays_with_t_eval_and_runs_eagerly_without():
    def f(k, y0, t_eval=(0.5, 1.0)):
        return tf.sum(tf.integrate.solve_ivp(decay, (0.0, 1.0), y0, t_eval=t_eval,
                                             args=(k,), **TIGHT).y)
    cf = tf.compile(f)
    for kv in (0.5, 0.9, 1.3):
        k = tf.tensor(kv, requires_grad=True)
        out = cf(k, tf.tensor([1.0, 2.0]))
        gk, = tf.grad([out], [k])
        np.testing.assert_allclose(out.item(), 3 * (np.exp(-kv / 2) + np.exp(-kv)), rtol=1e-10)
        np.testing.assert_allclose(gk.item(), -3 * (np.exp(-kv / 2) / 2 + np.exp(-kv)),
                                   rtol=1e-9)
    assert cf.records == 1 and cf.replays == 3, cf.explain()
    cf = tf.compile(lambda k, y0: f(k, y0, None))
    k = tf.tensor(0.5, requires_grad=True)
    out = cf(k, tf.tensor([1.0, 2.0]))
    assert out.item() == f(k, tf.tensor([1.0, 2.0]), None).item() and cf.replays == 0
    assert "solve_ivp without t_eval" in next(iter(cf.explain().values()))
