"""Bessel functions of real order in tf.special (tenferro/special/_bessel.py): jv (jn), yv,
yn, iv, ive, kv, kve, spherical_jn, spherical_yn and gammasgn — SciPy's values, the
derivative in x by the recurrences in the order (any order in x), the order not
differentiated."""
import numpy as np
import pytest
import scipy.special as sc

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision

S = tf.special

INTEGER_ORDERS = (0.0, 1.0, 3.0, -2.0)
ORDERS = INTEGER_ORDERS + (0.5, 2.7, -1.3)
# name -> x range for any order, x range for integer orders (None: the same)
DOMAINS = {
    "jv": ((0.05, 12.0), (-12.0, 12.0)),
    "yv": ((0.2, 12.0), None),
    "iv": ((0.05, 6.0), (-6.0, 6.0)),
    "ive": ((0.05, 30.0), (-30.0, 30.0)),
    "kv": ((0.1, 8.0), None),
    "kve": ((0.1, 40.0), None),
}


def _x(name, v, rng, shape=(2, 3)):
    lo, hi = DOMAINS[name][1] if float(v).is_integer() and DOMAINS[name][1] else \
        DOMAINS[name][0]
    return rng.uniform(lo, hi, shape)


def test_values_are_scipys():
    x = np.concatenate([np.linspace(-20, 20, 401), [0.0, 1e-8, 50.0, 300.0, np.nan,
                                                     np.inf, -np.inf]])
    v = np.array([-3.5, -2.0, -1.3, -1.0, 0.0, 0.5, 1.0, 2.0, 2.7, 7.0, 30.5])[:, None]
    with np.errstate(all="ignore"):
        for name in DOMAINS:
            np.testing.assert_array_equal(getattr(S, name)(v, x).numpy(),
                                          getattr(sc, name)(v, x))
        n = np.array([-1, 0, 1, 2, 5, 20])[:, None]
        np.testing.assert_array_equal(S.jn(n, x).numpy(), sc.jn(n, x))
        np.testing.assert_array_equal(S.yn(n, x).numpy(), sc.yn(n, x))
        np.testing.assert_array_equal(S.kn(n, x).numpy(), sc.kn(n, x))
        n = np.array([0, 1, 2, 5, 20])[:, None]
        for name in ("spherical_jn", "spherical_yn"):
            f, ref = getattr(S, name), getattr(sc, name)
            np.testing.assert_array_equal(f(n, x).numpy(), ref(n, x))
            # derivative=True: the recurrence, against SciPy's own derivative
            got = f(n, x, derivative=True).numpy()
            want = ref(n, x, derivative=True)
            fin = np.isfinite(want) & (np.abs(x) > 0.05)
            np.testing.assert_allclose(got[fin], want[fin], rtol=1e-13,
                                       atol=1e-13 * np.abs(want[fin]).max())
        np.testing.assert_array_equal(S.gammasgn(x).numpy(), sc.gammasgn(x))


def test_float32_stays_float32_and_is_close():
    rng = np.random.default_rng(1)
    for name in DOMAINS:
        for v in (0.0, 1.0, 2.7):
            x = _x(name, v, rng, (50,))
            got = getattr(S, name)(v, tf.tensor(x.astype(np.float32)))
            assert got.dtype == tf.float32
            want = getattr(sc, name)(v, x.astype(np.float32).astype(np.float64))
            # near a zero of J, Y the relative error is meaningless: scaled by the maximum
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-5,
                                       atol=2e-6 * np.abs(want).max())
    x32 = np.float32([0.5, 2.0, 7.0])
    for name in ("spherical_jn", "spherical_yn"):
        out = getattr(S, name)(2, x32)
        assert out.dtype == tf.float32
        np.testing.assert_allclose(out.numpy(), getattr(sc, name)(2, x32.astype(float)),
                                   rtol=2e-6)
    assert S.jv(1, np.array([1, 2])).dtype == tf.float64      # integers become float64


@pytest.mark.parametrize("name", sorted(DOMAINS))
@pytest.mark.parametrize("v", ORDERS)
def test_grads_in_x(name, v):
    rng = np.random.default_rng(abs(hash((name, v))) % 2**32)
    f = getattr(S, name)
    x = _x(name, v, rng)
    check_grads(lambda t: f(v, t), (x,))
    check_low_precision(lambda t: f(v, t), (x,), rtol=5e-3)


def test_grads_with_an_order_array_broadcast():
    rng = np.random.default_rng(3)
    v = np.array([[0.0], [1.5], [4.0]])
    x = rng.uniform(0.3, 6, (4,))
    for name in DOMAINS:
        f = getattr(S, name)
        check_grads(lambda t: f(v, t), (x,))
    n = np.array([[0], [1], [4]])
    check_grads(lambda t: S.yn(n, t), (x,))
    check_grads(lambda t: S.kn(n, t), (x,))
    check_grads(lambda t: S.jn(n, t), (x - 3,))
    # a float32 tensor with an int16 order stays float32 (NumPy 2) through the rules
    out = S.jv(np.int16(2), tf.tensor(x.astype(np.float32), requires_grad=True))
    assert out.dtype == tf.float32


@pytest.mark.parametrize("name", ["spherical_jn", "spherical_yn"])
def test_spherical_grads(name):
    rng = np.random.default_rng(5)
    f = getattr(S, name)
    n = np.array([[0], [1], [2], [5]])
    x = rng.uniform(0.4, 8, (3,))
    for pts in (x, -x) if name == "spherical_jn" else (x, -x):
        check_grads(lambda t: f(n, t), (pts,))
        check_grads(lambda t: f(n, t, derivative=True), (pts,))
        check_low_precision(lambda t: f(n, t), (pts,), rtol=5e-3)
    # the derivative of the value is SciPy's derivative=True
    t = tf.tensor(x, requires_grad=True)
    (g,) = tf.grad([tf.sum(f(3, t))], [t])
    np.testing.assert_allclose(g.numpy(), getattr(sc, name)(3, x, derivative=True),
                               rtol=1e-13)


def test_derivatives_against_closed_forms():
    x = np.linspace(0.2, 15, 60)
    t = tf.tensor(x, requires_grad=True)
    # order ½: J = √(2/(πx))·sin x, Y = −√(2/(πx))·cos x, I = √(2/(πx))·sinh x,
    # K = √(π/(2x))·e^(−x) (DLMF 10.16.1, 10.39.2); their derivatives in closed form
    c = np.sqrt(2 / (np.pi * x))
    want = {
        "jv": c * (np.cos(x) - np.sin(x) / (2 * x)),
        "yv": c * (np.sin(x) + np.cos(x) / (2 * x)),
        "iv": c * (np.cosh(x) - np.sinh(x) / (2 * x)),
        "kv": -np.sqrt(np.pi / (2 * x)) * np.exp(-x) * (1 + 1 / (2 * x)),
        "ive": c * (np.cosh(x) - np.sinh(x) / (2 * x) - np.sinh(x)) * np.exp(-x),
        "kve": -np.sqrt(np.pi / (2 * x)) / (2 * x),
    }
    worst = 0.0
    for name, d in want.items():
        (g,) = tf.grad([tf.sum(getattr(S, name)(0.5, t))], [t])
        err = np.abs(g.numpy() - d) / np.maximum(np.abs(d), 1e-300)
        worst = max(worst, np.max(err[np.abs(d) > 1e-3 * np.abs(d).max()]))
        np.testing.assert_allclose(g.numpy(), d, rtol=1e-12, atol=1e-14 * np.abs(d).max())
    assert worst < 1e-12
    # the second derivative of J_v: Bessel's equation x²J'' + xJ' + (x² − v²)J = 0
    for v in (0.0, 1.0, 2.7):
        (g,) = tf.grad([tf.sum(S.jv(v, t))], [t], create_graph=True)
        (h,) = tf.grad([tf.sum(g)], [t])
        j, dj = sc.jv(v, x), sc.jvp(v, x)
        np.testing.assert_allclose(h.numpy(), -(x * dj + (x * x - v * v) * j) / (x * x),
                                   rtol=1e-11, atol=1e-13)


def test_special_points():
    z = tf.tensor([0.0], requires_grad=True)
    # J₀'(0) = 0, J₀''(0) = −½; J₁'(0) = ½, J₁''(0) = 0; J₂'(0) = 0
    for v, d1, d2 in ((0, 0.0, -0.5), (1, 0.5, 0.0), (2, 0.0, 0.25)):
        (g,) = tf.grad([tf.sum(S.jv(v, z))], [z], create_graph=True)
        (h,) = tf.grad([tf.sum(g)], [z])
        assert g.numpy()[0] == d1 and h.numpy()[0] == d2
    # I₀'(0) = 0, I₁'(0) = ½; ive has a kink at 0 in v = 0 (e^(−|x|)): 0 there, as i0e
    for v, d1 in ((0, 0.0), (1, 0.5)):
        (g,) = tf.grad([tf.sum(S.iv(v, z))], [z])
        assert g.numpy()[0] == d1
        (g,) = tf.grad([tf.sum(S.ive(v, z))], [z])
        assert g.numpy()[0] == d1
    # spherical: j₀'(0) = 0, j₁'(0) = ⅓, jₙ'(0) = 0 for n >= 2 (no 0/0)
    (g,) = tf.grad([tf.sum(S.spherical_jn(np.array([0, 1, 2, 3]), tf.broadcast_to(z, (4,))))],
                   [z])
    np.testing.assert_allclose(g.numpy(), [1 / 3], rtol=1e-15)
    # NaN in, NaN out (value and derivative)
    nan = tf.tensor([np.nan, 1.0], requires_grad=True)
    for f in (S.jv, S.yv, S.iv, S.ive, S.kv, S.kve, S.yn, S.kn, S.spherical_jn,
              S.spherical_yn):
        y = f(1, nan)
        (g,) = tf.grad([tf.sum(y)], [nan])
        assert np.isnan(y.numpy()[0]) and np.isnan(g.numpy()[0])
        assert np.isfinite(g.numpy()[1])


def test_gammasgn_is_piecewise_constant():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 3.0])
    t = tf.tensor(x, requires_grad=True)
    y = sc.gammasgn(t)                                  # SciPy's ufunc dispatches
    assert isinstance(y, tf.Tensor)
    np.testing.assert_array_equal(y.numpy(), sc.gammasgn(x))
    (g,) = tf.grad([tf.sum(y * t)], [t], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), sc.gammasgn(x))     # d(sgn·x) = sgn
    (h,) = tf.grad([tf.sum(g)], [t])
    np.testing.assert_array_equal(h.numpy(), 0.0)
    check_grads(lambda u: S.gammasgn(u) * u * u, (x,))


@pytest.mark.parametrize("name", sorted(DOMAINS) + ["jn", "yn", "kn",
                                                      "spherical_jn", "spherical_yn"])
def test_a_tracked_order_raises_naming_it(name):
    f = getattr(S, name)
    arg = "'n'" if name in ("yn", "kn", "spherical_jn", "spherical_yn") else "'v'"
    n = tf.tensor(1.0, requires_grad=True)
    x = np.array([0.5, 2.0])
    with pytest.raises(tf.UnsupportedADError, match=arg) as err:
        f(n, x)
    assert "not differentiable" in str(err.value)
    assert isinstance(f(n.detach(), x), tf.Tensor)     # without the derivative it works
    assert isinstance(f(1, x), tf.Tensor)
    # forward mode: a tangent on the order raises too
    if not name.startswith("spherical"):
        with pytest.raises(tf.UnsupportedADError, match=arg):
            tf.jvp(lambda u: f(u, x), (np.array(1.0),), (np.array(1.0),))
        # SciPy's own ufunc on a tracked order reaches the same check
        with pytest.raises(tf.UnsupportedADError, match=arg):
            getattr(sc, name)(n, x)


def test_spherical_order_must_be_an_integer():
    with pytest.raises(tf.DTypeError, match="integer"):
        S.spherical_jn(1.5, 2.0)
    with pytest.raises(tf.DTypeError, match="integer"):
        S.spherical_jn(np.nan, 2.0)
    # integer-valued floats are orders (as SciPy, which casts them)
    np.testing.assert_array_equal(S.spherical_jn(np.array([2.0, 3.0]), 2.0).numpy(),
                                  sc.spherical_jn([2, 3], 2.0))
    with pytest.raises(tf.DTypeError):
        S.spherical_yn(1, np.array([1 + 1j]))


def test_scipy_ufuncs_dispatch_with_a_gradient():
    x = np.array([0.7, 2.2, 5.0])
    t = tf.tensor(x, requires_grad=True)
    for name in ("jv", "jn", "yv", "yn", "iv", "ive", "kv", "kn", "kve"):
        y = getattr(sc, name)(2, t)
        assert isinstance(y, tf.Tensor)
        (g,) = tf.grad([tf.sum(y)], [t])
        assert np.all(np.isfinite(g.numpy()))
    (g,) = tf.grad([tf.sum(sc.jv(2, t))], [t])
    np.testing.assert_allclose(g.numpy(), sc.jvp(2, x), rtol=1e-13)


COMPLEX_X = ["jv", "yv", "iv", "ive", "kv", "kve"]
# complex points off the branch cut (the negative real axis, where a non-integer order
# jumps): finite differences across it would compare the two sides
ZS = np.array([0.3 + 0.8j, -1.2 + 1.5j, 2.5 - 0.4j, -0.6 - 2.1j, 4.0 + 3.0j, 0.05 + 0.02j])
VS = np.array([0.0, 0.5, 1.0, 2.3, -0.7, 3.0])


@pytest.mark.parametrize("name", COMPLEX_X)
def test_complex_x(name):
    """Complex x, real order, as SciPy: the value is SciPy's bit for bit; the derivative
    (holomorphic, ive aside) against finite differences in every mode and order 2, and
    against SciPy's own derivative functions (jvp, yvp, ivp, kvp) where they exist."""
    f, ref = getattr(S, name), getattr(sc, name)
    for dt, rdt in ((np.complex128, np.float64), (np.complex64, np.float32)):
        y = f(VS.astype(rdt), ZS.astype(dt))
        assert y.dtype == dt
        np.testing.assert_array_equal(y.numpy(), ref(VS.astype(rdt), ZS.astype(dt)))
    check_grads(lambda z: f(VS, z), (ZS,))
    check_grads(lambda z: f(VS[:, None], z), (ZS[:3],))       # broadcast order
    t = tf.tensor(ZS, requires_grad=True)
    (g,) = tf.grad([f(VS, t)], [t], [np.ones(ZS.size, complex)])
    deriv = {"jv": sc.jvp, "yv": sc.yvp, "iv": sc.ivp, "kv": sc.kvp}.get(name)
    if deriv is not None:
        # holomorphic: x̄ = ȳ·conj(f'(z)) (docs/design.md)
        np.testing.assert_allclose(g.numpy(), np.conj(deriv(VS, ZS)), rtol=1e-12, atol=1e-14)
    elif name == "kve":
        want = sc.kvp(VS, ZS) * np.exp(ZS) + sc.kve(VS, ZS)          # (K_v e^z)'
        np.testing.assert_allclose(g.numpy(), np.conj(want), rtol=1e-12, atol=1e-14)


def test_complex_ive_is_not_holomorphic():
    """ive(v, z) = I_v(z)·e^(−|Re z|): moving z along the imaginary axis changes only I_v,
    along the real axis also the scaling; the JVP in both directions against SciPy's ivp."""
    v, z = VS, ZS
    s = np.sign(z.real)
    for dz in (np.ones(z.size, complex), 1j * np.ones(z.size)):
        _, tang = tf.jvp(lambda u: S.ive(v, u), (tf.tensor(z),), (tf.tensor(dz),))
        want = (sc.ivp(v, z) * dz - s * sc.iv(v, z) * dz.real) * np.exp(-np.abs(z.real))
        np.testing.assert_allclose(tang.numpy(), want, rtol=1e-12, atol=1e-14)


def test_python_scalar_order_with_a_complex_tensor_x():
    # the Python float takes the tensor's complex dtype when promoted: it is still a
    # real order (this raised "v must be real" once)
    z = tf.tensor(ZS, requires_grad=True)
    for name in COMPLEX_X:
        f = getattr(S, name)
        np.testing.assert_allclose(f(1.5, z).numpy(), f(np.float64(1.5), ZS).numpy(),
                                   rtol=1e-15)
    (g,) = tf.grad([S.jv(1.5, z)], [z], [np.ones(ZS.size, complex)])
    (g_ref,) = tf.grad([S.jv(np.array(1.5), z)], [z], [np.ones(ZS.size, complex)])
    np.testing.assert_array_equal(g.numpy(), g_ref.numpy())


def test_complex_order_raises():
    for name in COMPLEX_X:
        with pytest.raises(tf.DTypeError, match="v must be real"):
            getattr(S, name)(1.0 + 0.5j, ZS)
    with pytest.raises(tf.DTypeError):          # no complex loop in SciPy: still refused
        S.yn(1, ZS)
    with pytest.raises(tf.DTypeError):
        S.kn(1, ZS)
