"""tenferro.special against scipy.special (values) and finite differences (derivatives).

/work/shared/oracles has no special-function, logsumexp or softmax cases (its ops come
from PyTorch's OpInfo of the linear-algebra and elementwise ops tenferro had then): the
references here are SciPy's values, central finite differences and closed-form limits.
"""
import json
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.special as sc

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision

S = tf.special


def _u(lo, hi, extra=()):
    """Uniform samples of shape (2, 3), the last entries replaced by ``extra``."""
    def sample(rng, shape=(2, 3)):
        x = rng.uniform(lo, hi, shape)
        flat = x.reshape(-1)
        for i, v in enumerate(extra):
            flat[-1 - i] = v
        return x
    return sample


def _cu(re, im):
    def sample(rng, shape=(2, 3)):
        return rng.uniform(*re, shape) + 1j * rng.uniform(*im, shape)
    return sample


# name -> (real sampler, complex sampler or None: SciPy has no complex version)
UNARY = {
    "gammaln": (_u(0.2, 5, (-2.3, -0.6)), None),
    "gamma": (_u(0.2, 4, (-2.3, -0.6)), _cu((0.3, 3), (-2, 2))),
    "loggamma": (_u(0.2, 5), _cu((-2.5, 3), (-2, 2))),
    "digamma": (_u(0.2, 5, (-2.3, -0.6)), _cu((-2.5, 3), (-2, 2))),
    "erf": (_u(-2.5, 2.5), _cu((-1.5, 1.5), (-1.5, 1.5))),
    "erfc": (_u(-2.5, 2.5), _cu((-1.5, 1.5), (-1.5, 1.5))),
    "erfcx": (_u(-2, 5, (55.0, 120.0)), _cu((-1, 3), (-1.5, 1.5))),
    "erfinv": (_u(-0.95, 0.95), None),
    "erfcinv": (_u(0.05, 1.95), None),
    "ndtr": (_u(-3, 3), _cu((-2, 2), (-1, 1))),
    "ndtri": (_u(0.02, 0.98), None),
    "log_ndtr": (_u(-10, 4, (-35.0, 7.0)), _cu((-2, 2), (-1, 1))),
    "expit": (_u(-6, 6), None),
    "logit": (_u(0.05, 0.95), None),
    "log_expit": (_u(-6, 6), None),
    "entr": (_u(0.05, 3), None),
    "i0": (_u(-4, 4), None),
    "i0e": (_u(-4, 4), None),
    "i1": (_u(-4, 4), None),
    "i1e": (_u(-4, 4), None),
    "sinc": (_u(-3, 3, (0.03, -0.07)), _cu((-2, 2), (-1, 1))),
    "spence": (_u(0.05, 3, (1.02,)), _cu((0.2, 2), (-1, 1))),
    "rgamma": (_u(-3.5, 4, (0.0, -1.0, -2.0)), _cu((0.3, 3), (-1, 1))),
    "cbrt": (_u(-3, 3), None),
    "exp2": (_u(-2, 2), None),
    "exp10": (_u(-1, 1), None),
    "cosm1": (_u(-3, 3, (1e-4,)), None),
    "exprel": (_u(-3, 4, (0.0, 1e-3, -0.4)), None),
    "sindg": (_u(-200, 200), None),
    "cosdg": (_u(-200, 200), None),
    "tandg": (_u(-80, 80), None),
    "cotdg": (_u(10, 170), None),
    "exp1": (_u(0.1, 4), _cu((0.3, 2), (-1, 1))),
    "expi": (_u(-2, 3, (-0.3, 0.4)), _cu((0.3, 2), (-1, 1))),
    "j0": (_u(-8, 8), None),
    "j1": (_u(-8, 8, (0.03,)), None),
    "y0": (_u(0.2, 8), None),
    "y1": (_u(0.2, 8), None),
    "k0": (_u(0.2, 5), None),
    "k1": (_u(0.2, 5), None),
    "k0e": (_u(0.2, 5), None),
    "k1e": (_u(0.2, 5), None),
}
# name -> (sampler of the first argument, sampler of the second, complex?)
BINARY = {
    "xlogy": (_u(-2, 2), _u(0.1, 3), True),
    "xlog1py": (_u(-2, 2), _u(-0.9, 3), True),
    "rel_entr": (_u(0.1, 3), _u(0.1, 3), False),
    "kl_div": (_u(0.1, 3), _u(0.1, 3), False),
    "betaln": (_u(0.3, 4), _u(0.3, 4), False),
    "beta": (_u(0.3, 4), _u(0.3, 4), False),
    "huber": (_u(0.5, 2), _u(-3, 3), False),
    "pseudo_huber": (_u(0.1, 2), _u(-3, 3), False),
    "boxcox": (_u(0.2, 3), _u(-1.5, 2, (0.0, 1e-3)), False),
    "boxcox1p": (_u(-0.5, 3), _u(-1.5, 2, (0.0, -1e-3)), False),
    # 1 + λy > 0 on these ranges
    "inv_boxcox": (_u(-0.4, 0.8), _u(-1, 1.5, (0.0, 2e-3)), False),
    "inv_boxcox1p": (_u(-0.4, 0.8), _u(-1, 1.5, (0.0, -2e-3)), False),
    "poch": (_u(0.3, 4), _u(-0.5, 3), False),
}


def _rng(name):
    return np.random.default_rng(sum(map(ord, name)))


def _same(actual, expected, rtol=0.0):
    actual = actual.numpy() if isinstance(actual, tf.Tensor) else np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0, equal_nan=True)


# ---- values and NumPy/SciPy dispatch ------------------------------------------------------

@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_scipy(name):
    rng = _rng(name)
    real, cplx = UNARY[name]
    ref_fn = np.sinc if name == "sinc" else getattr(sc, name)
    for x in [real(rng), real(rng).astype(np.float32)] + ([cplx(rng)] if cplx else []):
        _same(getattr(S, name)(x), ref_fn(x))
        # scipy.special.<name> (numpy.sinc) on a tensor dispatches to tenferro
        t = tf.tensor(x, requires_grad=x.dtype.kind in "fc")
        out = ref_fn(t)
        assert isinstance(out, tf.Tensor) and out.requires_grad
        _same(out, ref_fn(x))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_match_scipy(name):
    rng = _rng(name)
    fa, fb, cplx = BINARY[name]
    a, b = fa(rng, (3, 1)), fb(rng, (4,))
    _same(getattr(S, name)(a, b), getattr(sc, name)(a, b))
    _same(getattr(S, name)(a.astype(np.float32), b.astype(np.float32)),
          getattr(sc, name)(a.astype(np.float32), b.astype(np.float32)))
    out = getattr(sc, name)(tf.tensor(a, requires_grad=True), b)
    assert isinstance(out, tf.Tensor) and out.requires_grad and out.shape == (3, 4)
    if cplx:
        za, zb = a + 0.5j, b - 0.3j
        _same(getattr(S, name)(za, zb), getattr(sc, name)(za, zb))


# every function of several arguments: (number of arguments, scipy function)
_MULTI = {name: (getattr(sc, name).nin, getattr(sc, name)) for name in S.__all__
          if isinstance(getattr(sc, name, None), np.ufunc) and getattr(sc, name).nin > 1}
_MULTI["polygamma"] = (2, sc.polygamma)      # Python functions in SciPy
_MULTI["logsumexp"] = (2, lambda a, b: sc.logsumexp(a, b=b))


@pytest.mark.parametrize("name", sorted(_MULTI))
def test_mixed_integer_float_promotion_is_numpy2(name):
    """Issue 24: an int64 tensor with a float32 one gives float64, computed in float64
    (SciPy's value to rounding), in every position; int16 or bool with float32 stays
    float32 (NumPy 2's result_type); a Python number is weak (float32 stays float32)."""
    nin, ref_fn = _MULTI[name]
    f = S.logsumexp if name == "logsumexp" else getattr(S, name)
    fn = (lambda a, b: f(a, b=b)) if name == "logsumexp" else f
    ints = np.array([1, 2, 3])
    f32 = np.array([0.25, 0.5, 0.75], np.float32)
    for pos in range(nin):
        for other in ("f32", "int64"):
            for int_dt, want in ((np.int64, np.float64), (np.int16, np.float32),
                                 (np.bool_, np.float32)):
                if int_dt == np.bool_ and name in ("polygamma", "expn"):
                    continue                 # an order n: SciPy rejects bool
                args = [ints.astype(int_dt) if k == pos else
                        (f32 if other == "f32" or k != (pos + 1) % nin else ints)
                        for k in range(nin)]
                if not any(a.dtype == np.float32 for a in args):
                    continue
                exp_dt = np.result_type(*(a.dtype for a in args))
                assert exp_dt == want or other == "int64", (args, exp_dt)
                # (SciPy warns when expn/polygamma truncate a float order, and so do we)
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    got = fn(*(tf.tensor(a) for a in args))
                    ref = np.asarray(ref_fn(*(a.astype(np.float64) for a in args)))
                assert got.dtype == exp_dt, (name, [a.dtype for a in args], got.dtype)
                tol = 1e-14 if exp_dt == np.float64 else 1e-5   # float32 loops
                np.testing.assert_allclose(got.numpy(), ref, rtol=tol, atol=0, equal_nan=True)
    # Python numbers are weak: the float32 tensor keeps its precision in every position
    for pos in range(nin):
        args = [2 if k == pos else tf.tensor(f32) for k in range(nin)]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert fn(*args).dtype == np.float32, (name, pos)


def test_scipy_gammaln_on_a_tensor_has_a_gradient():
    x = tf.tensor([0.3, 1.7, 4.2, -0.5], requires_grad=True)
    y = sc.gammaln(x)
    assert isinstance(y, tf.Tensor)
    (g,) = tf.grad(tf.sum(y), [x])
    _same(g, sc.digamma(x.numpy()), rtol=1e-15)
    x.grad = None
    tf.sum(sc.gammaln(x)).backward()
    _same(x.grad, sc.digamma(x.numpy()), rtol=1e-15)


def test_other_functions_match_scipy():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.2, 4, (2, 3))
    for n in (0, 1, 2, 3):
        _same(S.polygamma(n, x), sc.polygamma(n, x), rtol=1e-15)
    _same(S.polygamma(np.array([[0], [2]]), x[0]), sc.polygamma(np.array([[0], [2]]), x[0]))
    _same(S.multigammaln(x + 1, 3), sc.multigammaln(x + 1, 3), rtol=1e-14)
    _same(S.zeta(x + 1.2, x), sc.zeta(x + 1.2, x))
    _same(S.zeta(x + 1.2), sc.zeta(x + 1.2))
    _same(S.gammainc(x, x[::-1]), sc.gammainc(x, x[::-1]))
    _same(S.gammaincc(x, x[::-1]), sc.gammaincc(x, x[::-1]))
    p = rng.uniform(0.05, 0.95, (2, 3))
    _same(S.betainc(x, x[::-1], p), sc.betainc(x, x[::-1], p))
    _same(S.betaincc(x, x[::-1], p), sc.betaincc(x, x[::-1], p))
    _same(S.stdtr(x, x - 2), sc.stdtr(x, x - 2))
    _same(S.softplus(x - 2), np.logaddexp(0, x - 2))
    # scipy.special.zeta(x, q) and softplus on tensors dispatch to tenferro too
    q = tf.tensor(x, requires_grad=True)
    out = sc.zeta(3.0, q)
    assert isinstance(out, tf.Tensor) and out.requires_grad
    _same(out, sc.zeta(3.0, x))
    out = sc.softplus(q)
    assert isinstance(out, tf.Tensor) and out.requires_grad
    _same(out, sc.softplus(x))
    assert S.psi is S.digamma


def test_integer_inputs_become_float64():
    k = np.arange(1, 5)
    for f in (S.gammaln, S.erf, S.expit, S.i0, S.sinc):
        out = f(k)
        assert out.dtype == np.float64
        _same(out, (np.sinc if f is S.sinc else getattr(sc, f.__name__))(k.astype(float)))
    assert S.xlogy(2, 3).dtype == np.float64
    assert S.polygamma(1, k).dtype == np.float64
    assert S.logsumexp(k).dtype == np.float64


@pytest.mark.parametrize("name", [n for n in sorted(UNARY) if UNARY[n][1] is None]
                         + ["rel_entr", "kl_div", "huber", "betaln", "gammainc"])
def test_complex_input_raises_where_scipy_has_no_complex_version(name):
    z = np.array([0.5 + 0.5j])
    f = getattr(S, name)
    with pytest.raises(tf.DTypeError, match="real tensors only"):
        f(z) if name in UNARY else f(z, z)


# ---- derivatives ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_grads(name):
    rng = _rng(name)
    real, cplx = UNARY[name]
    f = getattr(S, name)
    x = real(rng)
    check_grads(f, (x,))
    check_low_precision(f, (x,), rtol=5e-3)
    if cplx is not None:
        z = cplx(rng)
        check_grads(f, (z,))
        check_low_precision(f, (z,), rtol=5e-3)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_grads_broadcast(name):
    rng = _rng(name)
    fa, fb, cplx = BINARY[name]
    f = getattr(S, name)
    a, b = fa(rng, (3, 1)), fb(rng, (4,))
    check_grads(f, (a, b))
    check_low_precision(f, (a, b), rtol=5e-3)
    if cplx:
        check_grads(f, (a + 0.3j * rng.standard_normal(a.shape),
                        b + 0.3j * rng.standard_normal(b.shape)))


def _fixed(value, like):
    """A constant argument in the precision of the differentiated one (float32 checks)."""
    return np.asarray(value, like.dtype)


def test_grads_in_the_differentiable_argument_only():
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 4, (3, 1))
    x = rng.uniform(0.1, 5, (4,))
    p = rng.uniform(0.05, 0.95, (4,))
    cases = [
        (lambda t: S.gammainc(_fixed(a, t), t), x),
        (lambda t: S.gammaincc(_fixed(a, t), t), x),
        (lambda t: S.zeta(_fixed(a + 1.1, t), t), x + 0.2),
        (lambda t: S.betainc(_fixed(a, t), _fixed(a[::-1], t), t), p),
        (lambda t: S.betaincc(_fixed(a, t), _fixed(a[::-1], t), t), p),
        (lambda t: S.stdtr(_fixed(a, t), t), x - 2.5),
        (lambda t: S.stdtr(_fixed(np.inf, t), t), x - 2.5),
        # an int16 order keeps float32 x in float32 (NumPy 2; int64 would give float64)
        (lambda t: S.polygamma(np.array([[0], [1], [3]], np.int16), t), x),
        (lambda t: S.polygamma(2, t), np.array([-2.4, -0.3, 0.7, 3.0])),
        (lambda t: S.multigammaln(t, 4), x + 2),
        (lambda t: S.softplus(t), x - 2.5),
    ]
    for f, arg in cases:
        check_grads(f, (arg,))
        check_low_precision(f, (arg,), rtol=5e-3)
    # complex polygamma (the derivative of the complex digamma)
    z = rng.uniform(-3, 3, (2, 3)) + 1j * rng.uniform(-2, 2, (2, 3))
    check_grads(lambda t: S.polygamma(1, t), (z,))


def test_complex_polygamma_continues_scipy_and_the_recurrence():
    x = np.concatenate([np.linspace(-3.7, 25.3, 13), [-150.3, -1234.6]])
    for n in (1, 2, 3, 5):
        _same(S.polygamma(n, x.astype(complex)).numpy().real, sc.polygamma(n, x), rtol=1e-13)
    z = np.array([-50.3 + 2j, 0.1 + 30j, 3 - 0.5j, -0.5 + 1e-3j, 1e3 + 1e3j,
                  -150.5 + 0.7j, -1e5 + 1j])     # the last two by the reflection formula
    # ψ₁(z) − ψ₁(z + 1) = 1/z², and ψ₁ = the complex derivative of scipy's digamma
    # (where 1/z² is not much smaller than ψ₁: the difference would cancel its digits)
    lhs = S.polygamma(1, z[:6]).numpy() - S.polygamma(1, z[:6] + 1).numpy()
    np.testing.assert_allclose(lhs, 1 / z[:6] ** 2, rtol=1e-11)
    # (not at −1e5 + i: SciPy's digamma there has ~1e-12 absolute error, the difference
    # quotient amplifies it past 1e-7)
    h = 1e-5
    fd = (sc.digamma(z[:6] + h) - sc.digamma(z[:6] - h)) / (2 * h)
    np.testing.assert_allclose(S.polygamma(1, z[:6]).numpy(), fd, rtol=1e-7)
    # reflection ψ₁(1 − z) + ψ₁(z) = π²/sin²(πz)
    np.testing.assert_allclose(S.polygamma(1, 1 - z[2:4]).numpy() + S.polygamma(1, z[2:4]).numpy(),
                               np.pi ** 2 / np.sin(np.pi * z[2:4]) ** 2, rtol=1e-11)


def _d1(f, x):
    t = tf.tensor(np.asarray(x, dtype=float), requires_grad=True)
    (g,) = tf.grad(tf.sum(f(t)), [t])
    return g.numpy()


def _d2(f, x):
    t = tf.tensor(np.asarray(x, dtype=float), requires_grad=True)
    (g,) = tf.grad(tf.sum(f(t)), [t], create_graph=True)
    (h,) = tf.grad(tf.sum(g), [t])
    return h.numpy()


def test_unsupported_arguments_raise_naming_them():
    p = tf.tensor(1.5, requires_grad=True)
    cases = [("zeta", lambda x: S.zeta(x, 2.0), "'x'"),
             ("zeta", lambda x: S.zeta(x + 1), "'x'"),
             ("polygamma", lambda n: S.polygamma(n, 2.0), "'n'")]
    for name, f, arg in cases:
        with pytest.raises(tf.UnsupportedADError, match=arg) as err:
            f(p)
        assert f"tf.special.{name}" in str(err.value)
        assert isinstance(f(p.detach()), tf.Tensor)       # without the derivative it works
    # forward mode too: a tangent on the argument raises
    with pytest.raises(tf.UnsupportedADError, match="'x'"):
        tf.jvp(lambda x: S.zeta(x, 2.0), (np.array(2.5),), (np.array(1.0),))
    # SciPy's own ufunc on a tracked tensor reaches the same check
    with pytest.raises(tf.UnsupportedADError, match="'x'"):
        sc.zeta(p + 1, 2.0)


def test_polygamma_rule_is_the_next_order():
    x = np.array([-1.3, 0.4, 2.5, 7.0])
    for n in (0, 1, 2):
        _same(_d1(lambda t: S.polygamma(n, t), x), sc.polygamma(n + 1, x), rtol=1e-14)
        _same(_d2(lambda t: S.polygamma(n, t), x), sc.polygamma(n + 2, x), rtol=1e-14)
    _same(_d1(S.digamma, x), sc.polygamma(1, x), rtol=1e-14)
    _same(_d2(S.gammaln, x), sc.polygamma(1, x), rtol=1e-14)


# ---- boundaries -------------------------------------------------------------------------------

def test_xlogy_family_at_zero():
    x = tf.tensor([0.0, 0.0, 0.0, 2.0], requires_grad=True)
    y = tf.tensor([2.0, 0.0, 1.0, 3.0], requires_grad=True)
    out = S.xlogy(x, y)
    _same(out, [0.0, 0.0, 0.0, 2 * math.log(3)])
    gx, gy = tf.grad(tf.sum(out), [x, y])
    # ∂x = log y also at x = 0 (x·log y is linear in x); ∂y = 0 at x = 0 (the function is
    # 0 for every y there), not 0/0
    _same(gx, [math.log(2), -np.inf, 0.0, math.log(3)])
    _same(gy, [0.0, 0.0, 0.0, 2 / 3])
    gx, gy = tf.grad(tf.sum(S.xlog1py(x, y - 1)), [x, y])
    _same(gx, [math.log(2), -np.inf, 0.0, math.log(3)], rtol=1e-15)
    _same(gy, [0.0, 0.0, 0.0, 2 / 3], rtol=1e-15)
    # the second derivative at x = 0 is finite too
    # the mixed second derivative at x = 0 is d/dx (x/y) = 1/y (y != 0)
    (g,) = tf.grad(tf.sum(S.xlogy(x, y)), [y], create_graph=True)
    (h,) = tf.grad(tf.sum(g), [x])
    _same(h.numpy()[[0, 2, 3]], [0.5, 1.0, 1 / 3])


def test_entropies_at_the_boundary():
    _same(_d1(S.entr, [0.0, -1.0, 0.5]), [np.inf, 0.0, -math.log(0.5) - 1])
    x = tf.tensor([0.0, 0.0, 2.0, -1.0], requires_grad=True)
    y = tf.tensor([2.0, 0.0, 0.0, 1.0], requires_grad=True)
    gx, gy = tf.grad(tf.sum(S.rel_entr(x, y)), [x, y])
    # x = 0 < y: the one-sided limits; x = y = 0: no derivative (the function jumps to inf)
    _same(gx, [-np.inf, np.nan, 0.0, 0.0])
    _same(gy, [0.0, 0.0, 0.0, 0.0])
    gx, gy = tf.grad(tf.sum(S.kl_div(x, y)), [x, y])
    _same(gx, [-np.inf, np.nan, 0.0, 0.0])
    _same(gy, [1.0, 1.0, 0.0, 0.0])


def test_huber_at_the_boundary():
    d = tf.tensor([-1.0, 0.0, 0.0, 1.0, 1.0, np.nan], requires_grad=True)
    r = tf.tensor([2.0, 3.0, 0.0, 0.5, -3.0, 1.0], requires_grad=True)
    gd, gr = tf.grad(tf.sum(S.huber(d, r)), [d, r])
    _same(gd, [0.0, 3.0, 0.0, 0.0, 2.0, np.nan])
    _same(gr, [0.0, 0.0, 0.0, 0.5, -1.0, np.nan])
    gd, gr = tf.grad(tf.sum(S.pseudo_huber(d, r)), [d, r])
    # δ → 0: pseudo_huber → |δ||r|, so ∂δ → |r| and ∂r → 0
    _same(gd[:3], [0.0, 3.0, 0.0])
    _same(gr[:3], [0.0, 0.0, 0.0])
    assert np.isnan(gd[5]) and np.isnan(gr[5])


def test_logistic_and_normal_tails():
    _same(_d1(S.expit, [40.0, -40.0, -800.0]),
          [math.exp(-40) / (1 + math.exp(-40)) ** 2] * 2 + [0.0], rtol=1e-15)
    assert _d2(S.expit, [-800.0, 800.0]).tolist() == [0.0, 0.0]
    # d/dx log Φ(x) = φ(x)/Φ(x) as x → −∞, against the asymptotic series of Mills' ratio
    # Φ(x)/φ(x) = (1/|x|)·Σ (−1)ᵏ(2k−1)!!/x²ᵏ (DLMF 7.12.1): no overflow nor cancellation
    x = np.array([-40.0, -1e5])
    mills = sum((-1) ** k * math.prod(range(1, 2 * k, 2)) / x ** (2 * k) for k in range(9))
    np.testing.assert_allclose(_d1(S.log_ndtr, x), -x / mills, rtol=1e-15)
    np.testing.assert_allclose(_d2(S.log_ndtr, [-1e5]), [-1.0], rtol=1e-9)
    assert _d1(S.log_ndtr, [40.0]) == [0.0] and _d2(S.log_ndtr, [40.0]) == [0.0]
    _same(S.log_ndtr(np.array(-40.0)), sc.log_ndtr(-40.0))
    # erfinv near ±1: large finite derivatives, inf at ±1; ndtri likewise
    d = _d1(S.erfinv, [1 - 1e-15, -1 + 1e-15, 1.0])
    y = sc.erfinv(1 - 1e-15)
    np.testing.assert_allclose(d[:2], [math.sqrt(math.pi) / 2 * math.exp(y * y)] * 2, rtol=1e-12)
    assert d[2] == np.inf
    _same(_d1(S.ndtri, [0.5, 0.0]), [math.sqrt(2 * math.pi), np.inf])
    _same(_d1(S.logit, [0.5, 0.0]), [4.0, np.inf])
    _same(_d1(S.logit, [1.0]), [np.inf])


def test_removable_singularities():
    # i1'(0) = i1e'(0) = ½, i1''(0) = 0; sinc'(0) = 0, sinc''(0) = −π²/3; spence'(1) = −1,
    # spence''(1) = ½: limits of the formulas, also to second order
    _same(_d1(S.i1, [0.0]), [0.5])
    _same(_d1(S.i1e, [0.0]), [0.5])
    _same(_d2(S.i1, [0.0]), [0.0])
    _same(_d1(S.sinc, [0.0]), [0.0])
    np.testing.assert_allclose(_d2(S.sinc, [0.0]), [-math.pi ** 2 / 3], rtol=1e-15)
    _same(_d1(S.spence, [1.0]), [-1.0])
    np.testing.assert_allclose(_d2(S.spence, [1.0]), [0.5], rtol=1e-15)
    # near the singular points the series keep the digits the formulas would cancel
    np.testing.assert_allclose(_d1(S.sinc, [1e-9]), [-math.pi ** 2 / 3 * 1e-9], rtol=1e-12)
    np.testing.assert_allclose(_d1(S.spence, [1 + 1e-9]), [-1 + 0.5e-9], rtol=1e-15)
    # the gamma density at x = 0: 0, 1, inf for a > 1, = 1, < 1
    _same(np.concatenate([_d1(lambda t: S.gammainc(a, t), [0.0]) for a in (2.0, 1.0, 0.5)]),
          [0.0, 1.0, np.inf])


def test_nan_outside_the_domain_as_scipy():
    _same(S.loggamma(np.array([-0.5, 2.0])), sc.loggamma([-0.5, 2.0]))
    g = _d1(S.loggamma, [-0.5, 2.0])
    assert np.isnan(g[0]) and g[1] == sc.digamma(2.0)
    assert np.isnan(_d1(S.erfinv, [1.5])[0]) and np.isnan(S.erfinv(1.5).item())
    assert np.isnan(_d1(S.entr, [np.nan])[0])


def test_multigammaln_checks_its_arguments_like_scipy():
    with pytest.raises(ValueError, match="condition a"):
        S.multigammaln(np.array([0.9, 3.0]), 3)
    with pytest.raises(ValueError, match="positive integer"):
        S.multigammaln(3.0, 2.5)


def test_expn_and_radian():
    x = np.array([0.2, 1.1, 3.5, 7.0])
    n = np.array([[0], [1], [2], [5]])
    _same(S.expn(n, x), sc.expn(n, x))
    _same(S.radian(30.0, x, x[::-1]), sc.radian(30.0, x, x[::-1]))
    # d/dx Eₙ = −Eₙ₋₁, and E₋₁(x) = e^(−x)(1/x + 1/x²) below n = 0 (SciPy's is NaN)
    check_grads(lambda t: S.expn(n, t), (x,))
    # an int16 n keeps float32 x in float32 (NumPy 2; int64 n gives float64, as SciPy)
    check_low_precision(lambda t: S.expn(n.astype(np.int16), t), (x,), rtol=5e-3)
    _same(_d1(lambda t: S.expn(3, t), x), -sc.expn(2, x), rtol=1e-15)
    np.testing.assert_allclose(_d2(lambda t: S.expn(0, t), x),
                               np.exp(-x) * (1 / x + 2 / x ** 2 + 2 / x ** 3), rtol=1e-14)
    p = tf.tensor(2.0, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="'n'"):
        S.expn(p, 1.5)
    out = sc.expn(2, tf.tensor(x, requires_grad=True))
    assert isinstance(out, tf.Tensor) and out.requires_grad
    check_grads(S.radian, (x, x[:, None], np.array(12.0)))
    d, m, s_ = (tf.tensor(v, requires_grad=True) for v in (30.0, 15.0, 40.0))
    grads = tf.grad(S.radian(d, m, s_), [d, m, s_])
    np.testing.assert_allclose([g.item() for g in grads],
                               np.pi / 180 * np.array([1, 1 / 60, 1 / 3600]), rtol=1e-15)


def test_removable_singularities_of_the_new_functions():
    # exprel′(0) = ½, exprel″(0) = ⅓ (Taylor near 0, where (xeˣ − eˣ + 1)/x² cancels)
    _same(_d1(S.exprel, [0.0]), [0.5])
    np.testing.assert_allclose(_d2(S.exprel, [0.0]), [1 / 3], rtol=1e-15)
    np.testing.assert_allclose(_d1(S.exprel, [1e-9]), [0.5 + 1e-9 / 3], rtol=1e-15)
    _same(_d1(S.j1, [0.0]), [0.5])
    # 1/Γ at the poles of Γ: (−1)ⁿn! and −2(−1)ⁿn!ψ(n+1) (Γ(1−x)sin(πx)/π near x = −n)
    n = np.arange(5.0)
    fact = sc.gamma(n + 1)
    np.testing.assert_allclose(_d1(S.rgamma, -n), (-1) ** n * fact, rtol=1e-14)
    np.testing.assert_allclose(_d2(S.rgamma, -n), -2 * (-1) ** n * fact * sc.digamma(n + 1),
                               rtol=1e-13)
    # Box-Cox at λ = 0: ∂λ (x^λ − 1)/λ = (log x)²/2; ∂λ inv_boxcox = −e^y·y²/2
    x = np.array([0.3, 2.0, 5.0])
    np.testing.assert_allclose(_d1(lambda lam: S.boxcox(x, lam), np.zeros(3)),
                               np.log(x) ** 2 / 2, rtol=1e-15)
    np.testing.assert_allclose(_d1(lambda lam: S.boxcox1p(x, lam), np.zeros(3)),
                               np.log1p(x) ** 2 / 2, rtol=1e-15)
    y = np.array([-0.5, 0.3, 1.2])
    np.testing.assert_allclose(_d1(lambda lam: S.inv_boxcox(y, lam), np.zeros(3)),
                               -np.exp(y) * y ** 2 / 2, rtol=1e-15)
    np.testing.assert_allclose(_d1(lambda lam: S.inv_boxcox1p(y, lam), np.zeros(3)),
                               -np.exp(y) * y ** 2 / 2, rtol=1e-15)
    # and close to λ = 0 the series keeps the digits the formulas would cancel
    lam = 1e-7
    np.testing.assert_allclose(_d1(lambda t: S.boxcox(x, t), np.full(3, lam)),
                               np.log(x) ** 2 / 2 + lam * np.log(x) ** 3 / 3, rtol=1e-13)


# ---- derivatives in the shape parameters ----------------------------------------------------
#
# References: mpmath (arbitrary precision: a test dependency, pure Python) differentiating
# P(a, x), I_x(a, b) and the t cdf numerically at 40-50 digits; each in the
# representation whose value is small (Q = 1 − P, 1 − I), so that the differences keep
# the digits of tiny derivatives.

def _mp():
    import mpmath
    return mpmath


def _grad_orders(f, arg, others):
    """∂f/∂arg and ∂²f/∂arg² of f(arg, *others) summed over entries (elementwise
    functions: the entries' own derivatives), by reverse mode."""
    t = tf.tensor(np.asarray(arg, dtype=float), requires_grad=True)
    (g,) = tf.grad(tf.sum(f(t, *others)), [t], create_graph=True)
    (h,) = tf.grad(tf.sum(g), [t])
    return g.numpy(), h.numpy()


def test_gammainc_da_against_mpmath():
    mp = _mp()
    mp.mp.dps = 40
    a = np.array([0.1, 0.5, 1.0, 2.7, 7.3, 20.0, 50.0])[:, None]
    x = np.array([1e-3, 0.05, 0.7, 3.2, 8.0, 19.5, 21.0, 49.0, 55.0, 100.0])[None, :]
    a, x = np.broadcast_arrays(a, x)
    d1, d2 = _grad_orders(lambda s, v: S.gammainc(s, v), a, (x,))
    c1, c2 = _grad_orders(lambda s, v: S.gammaincc(s, v), a, (x,))
    r1, r2 = np.empty(a.shape), np.empty(a.shape)
    for i in np.ndindex(a.shape):
        av, xv = mp.mpf(a[i]), mp.mpf(x[i])
        if xv < av:
            f = lambda s: mp.gammainc(s, 0, xv, regularized=True)
        else:
            f = lambda s: -mp.gammainc(s, xv, mp.inf, regularized=True)
        r1[i], r2[i] = float(mp.diff(f, av)), float(mp.diff(f, av, 2))
    np.testing.assert_allclose(d1, r1, rtol=1e-11, atol=0)
    np.testing.assert_allclose(d2, r2, rtol=1e-11, atol=0)
    _same(c1, -d1)
    _same(c2, -d2)
    assert (d1 < 0).all()     # P decreases in a (the values span 1e-1 .. 1e-44)


def test_betainc_dab_against_mpmath():
    mp = _mp()
    mp.mp.dps = 50
    vals = [0.2, 1.5, 9.0, 40.0]
    pts = np.array([(a, b, x) for a in vals for b in vals
                    for x in (0.02, 0.3, 0.7, 0.97)])
    a, b, x = (tf.tensor(c, requires_grad=True) for c in pts.T)
    ga, gb = tf.grad(tf.sum(S.betainc(a, b, x)), [a, b], create_graph=True)
    gaa, gab = tf.grad(tf.sum(ga), [a, b])
    (gbb,) = tf.grad(tf.sum(gb), [b])
    got = np.stack([g.numpy() for g in (ga, gb, gaa, gab, gbb)])
    orders = [(1, 0), (0, 1), (2, 0), (1, 1), (0, 2)]
    checked = 0
    for i, (av, bv, xv) in enumerate(pts):
        av, bv, xv = mp.mpf(av), mp.mpf(bv), mp.mpf(xv)
        lower = mp.betainc(av, bv, 0, xv, regularized=True)
        if min(lower, 1 - lower) < mp.mpf(10) ** -25:
            continue      # the value (and its derivatives) below what 50 digits resolve
        if lower < 0.5:
            f = lambda s, u: mp.betainc(s, u, 0, xv, regularized=True)
        else:
            f = lambda s, u: -mp.betainc(s, u, xv, 1, regularized=True)
        ref = [float(mp.diff(f, (av, bv), o)) for o in orders]
        np.testing.assert_allclose(got[:, i], ref, rtol=1e-11, atol=0,
                                   err_msg=str(pts[i]))
        checked += 1
    assert checked >= 55
    # betaincc's are the negatives
    a2, b2 = (tf.tensor(c, requires_grad=True) for c in pts.T[:2])
    ga2, gb2 = tf.grad(tf.sum(S.betaincc(a2, b2, pts[:, 2])), [a2, b2])
    _same(ga2, -ga.numpy())
    _same(gb2, -gb.numpy())


def test_stdtr_ddf_against_mpmath():
    mp = _mp()
    mp.mp.dps = 50
    nu = np.array([0.3, 1.0, 2.5, 12.0, 50.0, 300.0, 1e4, 1e6])[:, None]
    t = np.array([-30.0, -3.0, -0.2, 1e-3, 0.5, 2.0, 7.0])[None, :]
    nu, t = np.broadcast_arrays(nu, t)
    d1, d2 = _grad_orders(lambda v, s: S.stdtr(v, s), nu, (t,))
    r1, r2 = np.empty(nu.shape), np.empty(nu.shape)
    for i in np.ndindex(nu.shape):
        tv = mp.mpf(t[i])
        # F(ν, t) = ½ I_(ν/(ν+t²))(ν/2, ½) for t < 0, 1 − F(ν, −t) for t > 0
        f = lambda v: mp.betainc(v / 2, mp.mpf(0.5), 0, v / (v + tv * tv),
                                 regularized=True) / 2
        sign = -np.sign(t[i])
        r1[i] = sign * float(mp.diff(f, mp.mpf(nu[i])))
        r2[i] = sign * float(mp.diff(f, mp.mpf(nu[i]), 2))
    # the t-distribution tends to the normal one (∂F/∂ν ~ 1/ν²): in the far tails
    # (min(F, 1 − F) < 0.001) the derivative is a difference of terms ~ν²/t² times larger
    tail = sc.stdtr(nu, -np.abs(t)) < 1e-3
    rtol = 1e-11 + np.where(tail, 1e-16 * nu ** 2 / t ** 2, 0)
    for got, ref in ((d1, r1), (d2, r2)):
        ok = ref != 0           # mpmath's difference underflows at ν = 1e6, t = −30
        err = np.abs(got[ok] - ref[ok]) / np.abs(ref[ok])
        assert (err <= rtol[ok]).all(), (nu[ok][err > rtol[ok]], t[ok][err > rtol[ok]],
                                          err[err > rtol[ok]])
    assert (d1[t > 0] > 0).all() and (d1[t < 0] < 0).all()


def test_shape_grads_against_finite_differences():
    rng = np.random.default_rng(21)
    a = rng.uniform(0.5, 6, (3, 1))
    x = np.array([0.3, 2.0, 5.5, 12.0])
    b = rng.uniform(0.5, 6, (4,))
    p = rng.uniform(0.05, 0.95, (2, 1, 1))
    df = np.array([[0.8], [4.5], [30.0]])
    t = np.array([-4.0, -0.6, 0.4, 2.5])
    for f, args in [(S.gammainc, (a, x)), (S.gammaincc, (a, x)),
                    (S.betainc, (a, b, p)), (S.betaincc, (a, b, p)), (S.stdtr, (df, t))]:
        check_grads(f, args)                 # reverse, forward, second order
        check_low_precision(f, args, rtol=5e-3)
    # scipy.special's ufuncs on tensors are differentiable in the shape too
    ta = tf.tensor(a[:, 0], requires_grad=True)
    (g,) = tf.grad(tf.sum(sc.gammainc(ta, 2.0)), [ta])
    _same(g, _d1(lambda s: S.gammainc(s, 2.0), a[:, 0]))
    # forward mode
    _, tang = tf.jvp(lambda s: S.betainc(s, 2.0, 0.3), (a[:, 0],), (np.ones(3),))
    _same(tang, _d1(lambda s: S.betainc(s, 2.0, 0.3), a[:, 0]))


def test_shape_derivatives_to_third_order_in_x():
    """The derivative in the shape is an op whose own derivative in x is the density
    differentiated in the shape (a closed form): mixed derivatives to any order in x."""
    def da(f, i):
        def g(*args):
            ts = [v if isinstance(v, tf.Tensor) else tf.tensor(v) for v in args]
            return tf.grad(tf.sum(f(*ts)), [ts[i]], create_graph=True)[0]
        return g
    a = np.array([0.7, 2.5, 9.0])
    x = np.array([0.4, 3.0, 8.5])
    # ∂²P/∂a∂x at every order in x: a function of x with a fixed
    # (reverse mode: the function itself runs a reverse pass)
    check_grads(lambda v: da(S.gammainc, 0)(tf.tensor(a, requires_grad=True), v), (x,),
                modes=("rev",))
    check_grads(lambda v: da(S.betainc, 1)(a, tf.tensor(a[::-1], requires_grad=True), v),
                (np.array([0.2, 0.5, 0.9]),), modes=("rev",))
    check_grads(lambda v: da(S.stdtr, 0)(tf.tensor([1.5, 7.0, 40.0], requires_grad=True),
                                         v), (np.array([-2.0, 0.3, 1.1]),), modes=("rev",))


def test_third_derivative_in_a_shape_raises():
    for name, f, arg in [("gammainc", lambda s: S.gammainc(s, 2.0), "'a'"),
                         ("gammainc", lambda s: S.gammaincc(s, 2.0), "'a'"),
                         ("betainc", lambda s: S.betainc(s, 2.0, 0.3), "'a'"),
                         ("betainc", lambda s: S.betaincc(2.0, s, 0.3), "'b'"),
                         ("stdtr", lambda s: S.stdtr(s, 0.7), "'df'")]:
        s = tf.tensor(1.7, requires_grad=True)
        (g,) = tf.grad(f(s), [s], create_graph=True)
        (h,) = tf.grad(g, [s], create_graph=True)      # the second derivative works
        assert np.isfinite(h.item())
        msg = f"no third derivative in {arg}"
        with pytest.raises(tf.UnsupportedADError, match=msg) as err:
            tf.grad(h, [s])
        assert f"tf.special.{name}" in str(err.value)
    # forward over reverse: tf.hvp gives the second derivative; the hvp of the first
    # derivative needs the forward rule of the second, which raises
    a = np.array([0.6, 1.7, 30.0])
    _, g, hv = tf.hvp(lambda s: tf.sum(S.gammainc(s, 2.0)), a, np.ones(3))
    _same(g, _d1(lambda s: S.gammainc(s, 2.0), a))
    np.testing.assert_allclose(hv.numpy(), _d2(lambda s: S.gammainc(s, 2.0), a), rtol=1e-14)

    def first(s):
        return tf.sum(tf.grad(tf.sum(S.gammainc(s, 2.0)), [s], create_graph=True)[0])
    with pytest.raises(tf.UnsupportedADError, match="no third derivative in 'a'"):
        tf.hvp(first, a, np.ones(3))
    # the mixed (b, a) second derivative of betainc is there, the next one in a is not
    a = tf.tensor(1.7, requires_grad=True)
    b = tf.tensor(2.2, requires_grad=True)
    (ga,) = tf.grad(S.betainc(a, b, 0.4), [a], create_graph=True)
    (gab,) = tf.grad(ga, [b], create_graph=True)
    with pytest.raises(tf.UnsupportedADError, match="'a'"):
        tf.grad(gab, [a])


def test_shape_derivatives_at_the_edges():
    # x = 0 and x = inf: P is 0 and 1 for every a, so ∂a = 0; a <= 0 and x < 0: NaN
    g = _d1(lambda s: S.gammainc(s, np.array([0.0, np.inf, 1.0, 1.0, -1.0])),
            [2.0, 2.0, 0.0, -1.0, 2.0])
    _same(g, [0.0, 0.0, np.nan, np.nan, np.nan])
    _same(_d2(lambda s: S.gammainc(s, np.array([0.0, np.inf])), [2.0, 2.0]), [0.0, 0.0])
    # betainc at x = 0 and 1: 0 and 1 for every a, b
    x = np.array([0.0, 1.0, 0.5, 0.5])
    _same(_d1(lambda s: S.betainc(s, 2.0, x), [2.0, 2.0, 0.0, -1.0]),
          [0.0, 0.0, np.nan, np.nan])
    _same(_d1(lambda s: S.betainc(2.0, s, x), [2.0, 2.0, 0.0, -1.0]),
          [0.0, 0.0, np.nan, np.nan])
    # stdtr: F(ν, 0) = ½ and F(ν, ±inf) = 0, 1 for every ν; ν = inf is the normal cdf
    # (the limit of ∂F/∂ν is 0); ν <= 0: NaN like the value
    t = np.array([0.0, np.inf, -np.inf, 1.0, 1.0])
    _same(_d1(lambda s: S.stdtr(s, t), [3.0, 3.0, 3.0, np.inf, -1.0]),
          [0.0, 0.0, 0.0, 0.0, np.nan])
    assert np.isnan(S.stdtr(-1.0, 1.0).item())
    # float32 in, float32 derivatives
    a32 = tf.tensor(np.float32(2.5), requires_grad=True)
    (g32,) = tf.grad(S.gammainc(a32, np.float32(1.5)), [a32])
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32.item(), _d1(lambda s: S.gammainc(s, 1.5), [2.5])[0],
                               rtol=1e-6)


def test_shape_derivatives_of_large_parameters():
    """Series and continued fraction converge for large shapes (a few thousand terms
    at most); where they cannot in _SHAPE_MAX_TERMS the derivative is NaN, never a
    truncated sum."""
    # the iteration limit of the series (tenferro/special/_shape_series.py)
    from tenferro.special import _shape_series as sp
    a = np.array([400.0, 400.0, 3000.0])
    x = np.array([380.0, 430.0, 3000.0])
    g = _d1(lambda s: S.gammainc(s, x), a)
    h = 1e-3     # P is smooth in a: central differences of SciPy's value, O(h²) = 1e-7
    fd = (sc.gammainc(a + h, x) - sc.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    # large a with b < 1 in the lower tail: the series would need ~1e4-1e5 terms, the
    # continued fraction converges
    p, q = np.array([2e4, 2e4, 7.0]), np.array([0.6, 0.6, 3e4])
    u = np.array([0.999, 0.9998, 2.5e-4])
    gp = _d1(lambda s: S.betainc(s, q, u), p)
    gq = _d1(lambda s: S.betainc(p, s, u), q)
    # (log I changes by ~log u per unit p: h = 0.01 keeps truncation and rounding ~1e-10)
    fp = (sc.betainc(p + 0.01, q, u) - sc.betainc(p - 0.01, q, u)) / 0.02
    np.testing.assert_allclose(gp[:2], fp[:2], rtol=1e-8)
    fq = (sc.betainc(p, q + 1, u) - sc.betainc(p, q - 1, u)) / 2
    np.testing.assert_allclose(gq[2], fq[2], rtol=1e-7)
    old = sp._SHAPE_MAX_TERMS
    sp._SHAPE_MAX_TERMS = 5
    try:
        g = _d1(lambda s: S.gammainc(s, x), a)
        assert np.isnan(g).all()
        g = _d1(lambda s: S.betainc(s, 300.0, 0.5), [300.0])
        assert np.isnan(g).all()
    finally:
        sp._SHAPE_MAX_TERMS = old


# ---- logsumexp, softmax, log_softmax -----------------------------------------------------

_A = np.random.default_rng(11).standard_normal((3, 4))
_B = np.random.default_rng(12).uniform(0.5, 2, (3, 4))
_BS = np.random.default_rng(13).standard_normal((3, 4))
_C = _A + 1j * np.random.default_rng(14).standard_normal((3, 4))
LSE_CASES = [dict(), dict(axis=1), dict(axis=0, keepdims=True), dict(axis=(0, 1)),
             dict(axis=-1, return_sign=True), dict(b=_B, axis=1),
             dict(b=_BS, axis=1, return_sign=True), dict(b=_BS), dict(b=_B[0], axis=1,
                                                                     keepdims=True)]


@pytest.mark.parametrize("kw", LSE_CASES, ids=lambda kw: ",".join(sorted(kw)) or "default")
def test_logsumexp_matches_scipy(kw):
    for a in (_A, _C, _A.astype(np.float32)):
        ref = sc.logsumexp(a, **kw)
        got = S.logsumexp(a, **kw)
        ref, got = (ref, got) if isinstance(ref, tuple) else ((ref,), (got,))
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            r = np.asarray(r)
            assert g.shape == r.shape and g.dtype == r.dtype
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-6 if r.dtype == np.float32
                                       else 1e-13, equal_nan=True)


def test_logsumexp_edge_cases():
    assert S.logsumexp([-np.inf, -np.inf]).item() == -np.inf
    assert S.logsumexp([1.0, 2.0], b=[0.0, 0.0]).item() == -np.inf
    assert S.logsumexp([np.inf, 1.0], b=[0.0, 1.0]).item() == 1.0
    assert np.isnan(S.logsumexp([1.0, 2.0], b=[1.0, -2.0]).item())
    out, sgn = S.logsumexp([1.0, 2.0], b=[1.0, -2.0], return_sign=True)
    ref = sc.logsumexp([1.0, 2.0], b=[1.0, -2.0], return_sign=True)
    np.testing.assert_allclose([out.item(), sgn.item()], ref, rtol=1e-15)
    # an entry with b = 0 and a = inf gets a zero gradient, not NaN
    a = tf.tensor([np.inf, 1.0, 2.0], requires_grad=True)
    b = tf.tensor([0.0, 1.0, 1.0], requires_grad=True)
    ga, gb = tf.grad(S.logsumexp(a, b=b), [a, b])
    _same(ga, [0.0, *sc.softmax([1.0, 2.0])], rtol=1e-15)
    assert np.isfinite(gb.numpy()[1:]).all()


def test_logsumexp_softmax_grads():
    check_grads(lambda x: S.logsumexp(x, axis=1), (_A,))
    check_grads(lambda x: S.logsumexp(x, axis=0, keepdims=True), (_C,))
    check_grads(lambda x, w: S.logsumexp(x, b=w, axis=1), (_A, _B))
    check_grads(lambda x, w: S.logsumexp(x, b=w, axis=1, return_sign=True)[0], (_A, _BS))
    check_low_precision(lambda x, w: S.logsumexp(x, b=w), (_A, _B), rtol=5e-3)
    for axis in (None, 0, 1):
        for x in (_A, _C):
            _same(S.softmax(x, axis=axis), sc.softmax(x, axis=axis), rtol=1e-13)
            _same(S.log_softmax(x, axis=axis), sc.log_softmax(x, axis=axis), rtol=1e-13)
        check_grads(lambda x: S.softmax(x, axis=axis), (_A,))
        check_grads(lambda x: S.log_softmax(x, axis=axis), (_C,))
    check_low_precision(lambda x: S.softmax(x, axis=1), (_A,), rtol=5e-3)


# ---- SciPy's array-API mode --------------------------------------------------------------------

_CHILD = r"""
import json, numpy as np, scipy.special as sc, tenferro as tf
x = tf.tensor([0.3, 1.7, 2.5], requires_grad=True)
out = {}
for name, f in [("gammaln", lambda t: sc.gammaln(t)), ("digamma", lambda t: sc.digamma(t)),
                ("polygamma", lambda t: sc.polygamma(2, t)),
                ("multigammaln", lambda t: sc.multigammaln(t + 1, 2)),
                ("zeta", lambda t: sc.zeta(3.0, t)), ("log_ndtr", lambda t: sc.log_ndtr(t)),
                ("i1e", lambda t: sc.i1e(t)), ("softplus", lambda t: sc.softplus(t))]:
    y = f(x)
    (g,) = tf.grad(tf.sum(y), [x])
    out[name] = [type(y).__name__, y.numpy().tolist(), g.numpy().tolist()]
print(json.dumps(out))
"""


def test_scipy_array_api_mode_finds_tenferro_special(tmp_path):
    """Under SCIPY_ARRAY_API=1 SciPy's special functions call ``xp.special.<name>`` of the
    tensor's namespace: tenferro.special, also for SciPy's non-ufunc functions."""
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    # `python -c` puts the working directory first on sys.path: run it elsewhere, so the
    # child imports the installed tenferro, not the source tree (no compiled kernels)
    proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    x = np.array([0.3, 1.7, 2.5])
    h = 1e-6
    refs = {"gammaln": sc.gammaln, "digamma": sc.digamma,
            "polygamma": lambda t: sc.polygamma(2, t),
            "multigammaln": lambda t: np.array([sc.multigammaln(v + 1, 2) for v in t]),
            "zeta": lambda t: sc.zeta(3.0, t), "log_ndtr": sc.log_ndtr, "i1e": sc.i1e,
            "softplus": lambda t: np.logaddexp(0, t)}
    for name, ref in refs.items():
        kind, value, grad = res[name]
        assert kind == "Tensor", name
        np.testing.assert_allclose(value, ref(x), rtol=1e-14, err_msg=name)
        np.testing.assert_allclose(grad, (ref(x + h) - ref(x - h)) / (2 * h), rtol=1e-6,
                                   err_msg=name)


def test_docs_example_runs():
    """The example of docs/special.md: a Student-t fit whose gradient goes through
    scipy.special.gammaln on tensors; it matches scipy.stats.t.fit."""
    import pathlib
    import re
    import scipy.stats
    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "special.md"
    if not doc.exists():
        pytest.skip("docs/special.md is not in this tree")
    text = doc.read_text()
    block = re.search(r"## Example.*?```python\n(.*?)```", text, re.S).group(1)
    scope = {}
    exec(compile(block, str(doc), "exec"), scope)
    df, _, scale = scipy.stats.t.fit(scope["data"], floc=0)
    np.testing.assert_allclose([scope["df_hat"], scope["s_hat"]], [df, scale], rtol=1e-4)
