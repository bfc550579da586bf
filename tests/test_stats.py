"""tenferro.stats against scipy.stats (values) and finite differences (derivatives)."""
import math

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision

RTOL = 1e-12
CONT_METHODS = ("logpdf", "pdf", "logcdf", "cdf", "sf", "logsf")
DISC_METHODS = ("logpmf", "pmf", "logcdf", "cdf", "sf", "logsf")


def _differentiable(*names):
    """Whether tenferro.special differentiates all of ``names``. tenferro.stats calls
    SciPy's ufunc on Tensors for the others: their values are right, and a derivative
    through them raises UnsupportedADError (tested below instead of the derivative)."""
    try:
        import tenferro.special as sp
    except ImportError:
        return not names
    return all(hasattr(sp, n) for n in names)


def _u(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


# name -> (shape parameter samplers, standardized interior sampler)
CONTINUOUS = {
    "norm": ((), _u(-3, 3)),
    "expon": ((), _u(0.05, 4)),
    "laplace": ((), _u(-4, 4)),
    "cauchy": ((), _u(-6, 6)),
    "logistic": ((), _u(-5, 5)),
    "uniform": ((), _u(0.05, 0.95)),
    "t": ((_u(0.7, 12),), _u(-4, 4)),
    "gamma": ((_u(0.6, 5),), _u(0.2, 5)),
    "beta": ((_u(0.6, 5), _u(0.6, 5)), _u(0.05, 0.95)),
    "lognorm": ((_u(0.3, 2),), _u(0.2, 5)),
    "chi2": ((_u(0.6, 8),), _u(0.2, 8)),
    "chi": ((_u(0.6, 8),), _u(0.2, 3)),
    "f": ((_u(0.6, 8), _u(0.6, 8)), _u(0.1, 4)),
    "rayleigh": ((), _u(0.1, 3)),
    "weibull_min": ((_u(0.5, 4),), _u(0.1, 2)),
    "pareto": ((_u(0.5, 4),), _u(1.05, 5)),
    # kappa below 50: SciPy's series (the normal approximation above: test_vonmises_*)
    "vonmises": ((_u(0.2, 8),), _u(-3, 3)),
}
# one-sided supports: x = -5 (loc 0.1, scale 1) lies below them
ONE_SIDED = ("expon", "uniform", "gamma", "beta", "lognorm", "chi2", "chi", "f", "rayleigh",
             "weibull_min", "pareto")
# the tenferro.special functions each method is composed of
_CDF = ("cdf", "logcdf", "sf", "logsf")
NEEDS = {
    **{("norm", m): ("ndtr",) for m in ("cdf", "sf")},
    **{("norm", m): ("log_ndtr",) for m in ("logcdf", "logsf")},
    **{("lognorm", m): ("ndtr",) for m in ("cdf", "sf")},
    **{("lognorm", m): ("log_ndtr",) for m in ("logcdf", "logsf")},
    ("t", "logpdf"): ("gammaln",), ("t", "pdf"): ("gammaln",),
    **{("t", m): ("stdtr",) for m in _CDF},
    ("gamma", "logpdf"): ("xlogy", "gammaln"), ("gamma", "pdf"): ("xlogy", "gammaln"),
    ("gamma", "cdf"): ("gammainc",), ("gamma", "logcdf"): ("gammainc",),
    ("gamma", "sf"): ("gammaincc",), ("gamma", "logsf"): ("gammaincc",),
    ("beta", "logpdf"): ("xlogy", "xlog1py", "betaln"),
    ("beta", "pdf"): ("xlogy", "xlog1py", "betaln"),
    ("beta", "cdf"): ("betainc",), ("beta", "logcdf"): ("betainc",),
    ("beta", "sf"): ("betaincc",), ("beta", "logsf"): ("betaincc",),
    ("poisson", "logpmf"): ("xlogy", "gammaln"), ("poisson", "pmf"): ("xlogy", "gammaln"),
    ("poisson", "cdf"): ("gammaincc",), ("poisson", "logcdf"): ("gammaincc",),
    ("poisson", "sf"): ("gammainc",), ("poisson", "logsf"): ("gammainc",),
    ("binom", "logpmf"): ("gammaln", "xlogy", "xlog1py"),
    ("binom", "pmf"): ("gammaln", "xlogy", "xlog1py"),
    **{("binom", m): ("betainc",) for m in _CDF},
    ("nbinom", "logpmf"): ("gammaln", "xlog1py"), ("nbinom", "pmf"): ("gammaln", "xlog1py"),
    ("nbinom", "cdf"): ("betainc",), ("nbinom", "logcdf"): ("betainc",),
    ("nbinom", "sf"): ("betaincc",), ("nbinom", "logsf"): ("betaincc",),
}
# methods whose shape parameter enters an incomplete gamma/beta function and are checked in
# x, loc and scale only: none since tf.special differentiates gammainc/betainc/stdtr in
# their shape arguments too (kept as the switch, should one ever lose that again)
SHAPE_IN_INCOMPLETE: set = set()


def _check_or_unsupported(name, method, run, needs=None):
    """``run()`` checks derivatives; without the special functions it must raise."""
    if _differentiable(*(NEEDS.get((name, method), ()) if needs is None else needs)):
        run()
    else:
        with pytest.raises(tf.UnsupportedADError):
            run()


def _cont_args(name, rng, xshape=(3, 4)):
    samplers, zs = CONTINUOUS[name]
    loc = rng.uniform(-1, 1, xshape[-1:])
    scale = rng.uniform(0.5, 2, xshape[:1] + (1,))
    shapes = [s(rng, (1, xshape[-1])) for s in samplers]
    x = loc + scale * zs(rng, xshape)
    return x, shapes, loc, scale


def _assert_matches(actual, expected, rtol=RTOL, atol=0.0):
    actual = actual.numpy() if isinstance(actual, tf.Tensor) else np.asarray(actual)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_array_equal(np.isposinf(actual), np.isposinf(expected))
    np.testing.assert_array_equal(np.isneginf(actual), np.isneginf(expected))
    fin = np.isfinite(expected)
    np.testing.assert_allclose(actual[fin], expected[fin], rtol=rtol, atol=atol)


# ---- values ------------------------------------------------------------------------------

def _versus_scipy(name, method, ours, expected):
    """ours == SciPy's to 1e-12 relative; vonmises' cdf family to SciPy's own accuracy:
    its series (kappa < 50 here) has about 13 correct digits in absolute terms (1e-13),
    so the log forms are compared as probabilities (tenferro's is checked to 1e-15
    against quadrature in test_vonmises_cdf_against_quadrature)."""
    if name != "vonmises" or method in ("logpdf", "pdf"):
        _assert_matches(ours, expected)
        return
    if method in ("logcdf", "logsf"):
        with np.errstate(invalid="ignore"):
            ours, expected = tf.exp(ours), np.exp(expected)
    _assert_matches(ours, expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("method", CONT_METHODS)
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_values_match_scipy(name, method):
    rng = np.random.default_rng(1)
    x, shapes, loc, scale = _cont_args(name, rng)
    ours = getattr(getattr(tf.stats, name), method)(x, *shapes, loc, scale)
    _versus_scipy(name, method, ours,
                  getattr(getattr(scipy.stats, name), method)(x, *shapes, loc, scale))
    # keywords, and x, loc, scale as Tensors
    ours = getattr(getattr(tf.stats, name), method)(
        tf.tensor(x), *shapes, loc=tf.tensor(loc), scale=tf.tensor(scale))
    _versus_scipy(name, method, ours, getattr(getattr(scipy.stats, name), method)(
        x, *shapes, loc=loc, scale=scale))


@pytest.mark.parametrize("method", CONT_METHODS)
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_domain_matches_scipy(name, method):
    """Invalid parameters (NaN), x outside the support, at its ends, infinite and NaN x."""
    rng = np.random.default_rng(2)
    samplers = CONTINUOUS[name][0]
    pts = np.array([-np.inf, -7.0, -1.0, -1e-300, 0.0, 0.3, 0.5, 1.0, 1.5, 7.0, np.inf, np.nan])
    x = pts[:, None]
    scale = np.array([1.0, 2.0, -1.0, 0.0, 1.0, np.nan, 0.7])
    loc = np.array([0.0, 0.0, 0.0, 0.0, np.nan, 0.0, -0.2])
    shapes = []
    for i, s in enumerate(samplers):
        v = s(rng, scale.shape)
        v[(4 + i) % 7] = -0.5 if i == 0 else 0.0      # out of domain
        shapes.append(v)
    dist = getattr(scipy.stats, name)
    with np.errstate(all="ignore"):
        expected = getattr(dist, method)(x, *shapes, loc, scale)
        valid = ~np.isnan(dist.cdf(0.5, *shapes, loc, scale))
    # deliberate difference: SciPy's formula gives NaN at x = ±inf for some distributions
    # (gamma: (a - 1) log x - x = inf - inf); tenferro gives the limit, logpdf -inf, pdf 0
    # (not vonmises: its density is periodic, without a limit at ±inf: NaN as in SciPy)
    limit = np.isinf(x) & valid & np.isnan(expected) & (name != "vonmises")
    if method in ("logpdf", "pdf"):
        expected = np.where(limit, -np.inf if method == "logpdf" else 0.0, expected)
    _versus_scipy(name, method,
                  getattr(getattr(tf.stats, name), method)(x, *shapes, loc, scale), expected)


def test_scalar_and_default_arguments():
    out = tf.stats.expon.logpdf(0.5)
    assert isinstance(out, tf.Tensor) and out.shape == () and out.dtype == np.float64
    assert out.item() == scipy.stats.expon.logpdf(0.5)
    assert tf.stats.laplace.cdf([[-1.0], [2.0]], [0.0, 1.0]).shape == (2, 2)
    # integer data become float64
    _assert_matches(tf.stats.cauchy.logpdf(np.arange(4), 1, 2),
                    scipy.stats.cauchy.logpdf(np.arange(4), 1, 2))


def test_argument_errors():
    with pytest.raises(TypeError, match="missing required parameter 'a'"):
        tf.stats.gamma.logpdf(1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sigma'"):
        tf.stats.norm.logpdf(1.0, sigma=2.0)
    with pytest.raises(TypeError, match="multiple values for argument 'loc'"):
        tf.stats.norm.logpdf(1.0, 0.0, loc=1.0)
    with pytest.raises(TypeError, match="at most 2 parameters"):
        tf.stats.norm.logpdf(1.0, 0.0, 1.0, 2.0)
    with pytest.raises(tf.DTypeError, match="real"):
        tf.stats.norm.logpdf(np.array([1j]))
    with pytest.raises(tf.ShapeError):
        tf.stats.norm.logpdf(np.zeros(3), np.zeros(2))


def test_elementary_tails_are_accurate():
    """Far tails where a naive formula over/underflows; references are closed forms."""
    z = np.array([-800.0, -40.0, 40.0, 800.0])
    ours = tf.stats.laplace.logcdf(z).numpy()
    np.testing.assert_allclose(ours[:2], z[:2] - math.log(2), rtol=RTOL)
    np.testing.assert_allclose(ours[2:], -0.5 * np.exp(-z[2:]), rtol=RTOL)
    np.testing.assert_allclose(tf.stats.logistic.logcdf(z).numpy(),
                               -np.logaddexp(0, -z), rtol=RTOL)
    np.testing.assert_allclose(tf.stats.logistic.logpdf(z).numpy(),
                               -np.abs(z) - 2 * np.log1p(np.exp(-np.abs(z))), rtol=RTOL)
    np.testing.assert_allclose(tf.stats.expon.logsf(z[2:]).numpy(), -z[2:], rtol=RTOL)
    # Cauchy's left tail: arctan2 keeps relative accuracy (1/2 + arctan(z)/pi would not)
    big = np.array([-1e10, -1e200])
    np.testing.assert_allclose(tf.stats.cauchy.cdf(big).numpy(), -1 / (np.pi * big),
                               rtol=RTOL)
    np.testing.assert_allclose(tf.stats.cauchy.logsf(-big).numpy(),
                               np.log(-1 / (np.pi * big)), rtol=RTOL)


def test_norm_tails():
    for f, g, x in (("logcdf", "logcdf", -40.0), ("logsf", "logsf", 40.0),
                    ("cdf", "cdf", -30.0), ("sf", "sf", 30.0), ("logcdf", "logcdf", 10.0)):
        _assert_matches(getattr(tf.stats.norm, f)(x), getattr(scipy.stats.norm, g)(x))
    if not _differentiable("log_ndtr"):
        with pytest.raises(tf.UnsupportedADError):
            tf.stats.norm.logcdf(tf.tensor(-40.0, requires_grad=True))
        return
    # and their gradients: d/dx log Φ(x) = φ(x)/Φ(x) ≈ -x for x -> -inf
    x = tf.tensor(-40.0, requires_grad=True)
    (g,) = tf.grad(tf.stats.norm.logcdf(x), [x])
    ref = math.exp(scipy.stats.norm.logpdf(-40.0) - scipy.stats.norm.logcdf(-40.0))
    np.testing.assert_allclose(g.item(), ref, rtol=1e-10)


# ---- derivatives ---------------------------------------------------------------------------

def _cont_checked_args(name, method, rng):
    """f and the arguments to differentiate: x, every shape parameter, loc and scale, with
    broadcasting (x (3, 4), shapes (1, 4), loc (4,), scale (3, 1)); only x, loc, scale
    where the shape parameter enters an incomplete gamma/beta function."""
    x, shapes, loc, scale = _cont_args(name, rng)
    f = getattr(getattr(tf.stats, name), method)
    if (name, method) in SHAPE_IN_INCOMPLETE:
        # the fixed shapes take x's precision (check_low_precision passes float32 x)
        return (lambda x, loc, scale: f(x, *[np.asarray(s, x.dtype) for s in shapes], loc,
                                        scale)), (x, loc, scale)
    k = len(shapes)
    return (lambda x, *p: f(x, *p[:k], loc=p[k], scale=p[k + 1])), (x, *shapes, loc, scale)


@pytest.mark.parametrize("method", CONT_METHODS)
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_grads(name, method):
    """Reverse, forward and second order against finite differences."""
    f, args = _cont_checked_args(name, method, np.random.default_rng(3))
    _check_or_unsupported(name, method, lambda: check_grads(f, args))


@pytest.mark.parametrize("method", CONT_METHODS)
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_float32(name, method):
    f, args = _cont_checked_args(name, method, np.random.default_rng(4))
    _check_or_unsupported(name, method, lambda: check_low_precision(f, args, rtol=5e-3))
    # Python numbers keep float32
    shapes = [1.5] * len(CONTINUOUS[name][0])
    out = getattr(getattr(tf.stats, name), method)(np.full(3, 0.5, np.float32), *shapes,
                                                   0.1, 1.5)
    assert out.dtype == np.float32


def test_mixed_integer_float_promotion_is_numpy2():
    """Issue 24: an int64 array with a float32 one gives float64 (NumPy 2, as tf.special
    and the elementwise ops), an int16 or bool one float32, integers alone float64; the
    value is SciPy's. A discrete distribution's k (a count) takes its parameters'
    precision (documented in stats._floats)."""
    x32 = np.array([0.25, 0.5, 1.5], np.float32)
    i64, i16 = np.array([0, 1, 2]), np.array([0, 1, 2], np.int16)
    norm = tf.stats.norm
    for args, want in (((i64, x32), np.float64), ((x32, i64), np.float64),
                       ((i16, x32), np.float32), ((x32, i64, x32), np.float64),
                       ((i64,), np.float64), ((i64, i64), np.float64),
                       ((x32, 1, 2.0), np.float32), ((i16.astype(bool), x32), np.float32),
                       # a float32 scale in a float64 result: log(scale) in float64 too
                       ((x32, i64.astype(np.float64), x32), np.float64)):
        out = norm.logpdf(*(tf.tensor(a) if isinstance(a, np.ndarray) else a for a in args))
        assert out.dtype == want, (args, out.dtype)
        ref = scipy.stats.norm.logpdf(*(np.asarray(a, np.float64) for a in args))
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6 if want == np.float32 else 1e-14)
    assert tf.stats.poisson.logpmf(tf.tensor(i64), tf.tensor(x32)).dtype == np.float32
    assert tf.stats.poisson.logpmf(tf.tensor(i64), tf.tensor(i16)).dtype == np.float64


def _grads(out, inputs):
    return [g.numpy() for g in tf.grad(tf.sum(out), inputs)]


@pytest.mark.parametrize("method", CONT_METHODS)
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_invalid_parameters_give_nan_derivatives_there_only(name, method):
    """Entries with scale <= 0 (value NaN) get NaN derivatives; the other entries of the
    same call keep exact derivatives; x outside the support gives derivative 0."""
    # t's logpdf uses gammaln of df alone, a constant here
    needs = () if name == "t" and method in ("logpdf", "pdf") else None
    _check_or_unsupported(name, method, lambda: _invalid_parameter_case(name, method), needs)


def _invalid_parameter_case(name, method):
    shapes = [np.full(4, 1.5) for _ in CONTINUOUS[name][0]]
    f = getattr(getattr(tf.stats, name), method)
    # inside the support (pareto's starts at loc + scale), and x = -5 outside it
    shift = 1.5 if name == "pareto" else 0.0
    x = tf.tensor([0.3 + shift, 0.4 + shift, 0.45 + shift, -5.0], requires_grad=True)
    scale = tf.tensor([1.0, -1.0, 0.8, 1.0], requires_grad=True)
    loc = tf.tensor([0.1, 0.1, np.nan, 0.1], requires_grad=True)
    out = f(x, *shapes, loc, scale)
    values = out.numpy()
    assert np.isnan(values[1]) and np.isnan(values[2]) and np.isfinite(values[0])
    gx, gl, gs = _grads(out, [x, loc, scale])
    for g in (gx, gl, gs):
        assert np.isnan(g[1]) and np.isnan(g[2]) and np.isfinite(g[0])
    # entry 0 alone gives the same derivatives
    single = f(x[0], *[s[0] for s in shapes], loc[0], scale[0])
    g0 = tf.grad(single, [x, loc, scale])
    np.testing.assert_allclose([gx[0], gl[0], gs[0]], [g.numpy()[0] for g in g0], rtol=1e-14)
    # x = -5 is outside the support of the one-sided distributions: value constant there
    if name in ONE_SIDED:
        assert gx[3] == 0 and gl[3] == 0 and gs[3] == 0
    # forward mode sees the same
    _, tangent = tf.jvp(lambda s: f(x.detach(), *shapes, loc.detach(), s), [scale.detach()],
                        [tf.tensor(np.ones(4))])
    t = tangent.numpy()
    assert np.isnan(t[1]) and np.isnan(t[2]) and np.isfinite(t[0]) and np.isfinite(t[3])


def test_outside_support_derivative_is_zero_and_finite():
    x = tf.tensor([-1.0, 0.5, np.inf], requires_grad=True)
    scale = tf.tensor(2.0, requires_grad=True)
    out = tf.stats.expon.logpdf(x, 0.0, scale)
    assert out.numpy()[0] == -np.inf and out.numpy()[2] == -np.inf
    gx, gs = tf.grad(tf.sum(tf.where(np.isfinite(out.numpy()), out, 0.0)), [x, scale])
    np.testing.assert_array_equal(gx.numpy(), [0.0, -0.5, 0.0])
    np.testing.assert_allclose(gs.numpy(), 0.5 / 4 - 0.5)
    # uniform: derivative of the constant density -log(scale) in scale, 0 in x and loc
    u, loc = tf.tensor([0.2, 3.0], requires_grad=True), tf.tensor(0.0, requires_grad=True)
    gu, gl, gsc = tf.grad(tf.sum(tf.stats.uniform.pdf(u, loc, scale)), [u, loc, scale])
    np.testing.assert_array_equal(gu.numpy(), [0.0, 0.0])
    assert gl.item() == 0.0 and gsc.item() == -0.25


def test_frozen_distributions():
    x = np.linspace(-2, 2, 5)
    frozen = tf.stats.laplace(0.5, scale=2.0)
    _assert_matches(frozen.logpdf(x), scipy.stats.laplace(0.5, scale=2.0).logpdf(x))
    _assert_matches(frozen.sf(x), scipy.stats.laplace.sf(x, 0.5, 2.0))
    _assert_matches(tf.stats.geom(0.3).pmf(np.arange(4)), scipy.stats.geom(0.3).pmf(np.arange(4)))
    with pytest.raises(AttributeError):
        frozen.rvs
    loc = tf.tensor(0.5, requires_grad=True)
    (g,) = tf.grad(tf.stats.logistic(loc).logpdf(1.0), [loc])
    np.testing.assert_allclose(g.item(), -math.tanh(-0.25), rtol=1e-14)


# ---- discrete ------------------------------------------------------------------------------

DISCRETE = {
    # name: (parameter samplers (of a valid draw), k range)
    "bernoulli": ((_u(0.1, 0.9),), (0, 2)),
    "geom": ((_u(0.1, 0.9),), (1, 8)),
    "poisson": ((_u(0.5, 6),), (0, 10)),
    "binom": ((lambda rng, s: rng.integers(1, 15, s).astype(float), _u(0.1, 0.9)), (0, 15)),
    "nbinom": ((_u(0.5, 6), _u(0.1, 0.9)), (0, 12)),
}


def _disc_args(name, rng, shape=(5, 4)):
    samplers, (lo, hi) = DISCRETE[name]
    params = [s(rng, (1, shape[-1])) for s in samplers]
    k = rng.integers(lo, hi, shape).astype(float)
    if name == "binom":       # 0 <= k < n: finite logpmf and logsf (finite differences)
        k = np.minimum(k, params[0] - 1)
    return k, params


@pytest.mark.parametrize("method", DISC_METHODS)
@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_values_match_scipy(name, method):
    rng = np.random.default_rng(5)
    k, params = _disc_args(name, rng)
    _assert_matches(getattr(getattr(tf.stats, name), method)(k, *params),
                    getattr(getattr(scipy.stats, name), method)(k, *params))
    # loc, integer k, and k between the integers
    kk = np.array([[-1], [0], [1], [2], [3]]) + np.array([0.0, 0.5])[:, None, None]
    _assert_matches(getattr(getattr(tf.stats, name), method)(kk.astype(float), *params, loc=1),
                    getattr(getattr(scipy.stats, name), method)(kk, *params, loc=1))
    ints = np.arange(-1, 4)[:, None]
    _assert_matches(getattr(getattr(tf.stats, name), method)(ints, *params),
                    getattr(getattr(scipy.stats, name), method)(ints, *params))


@pytest.mark.parametrize("method", DISC_METHODS)
@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_domain_matches_scipy(name, method):
    k = np.array([-np.inf, -1.0, 0.0, 1.0, 2.0, 2.5, 5.0, np.inf, np.nan])[:, None]
    p = np.array([0.0, 1.0, 0.3, -0.1, 1.2, np.nan])
    if name == "poisson":
        params = [np.array([0.0, 1.0, 2.5, -0.1, 3.0, np.nan])]
    elif name in ("binom", "nbinom"):
        params = [np.array([3.0, 2.5 if name == "binom" else 0.0, 4.0, 2.0, -1.0, 1.0]), p]
    else:
        params = [p]
    dist = getattr(scipy.stats, name)
    with np.errstate(all="ignore"):
        expected = getattr(dist, method)(k, *params)
        valid = ~np.isnan(dist.cdf(0.0, *params))
    # as for the continuous ones: the limit at k = inf where SciPy's formula gives NaN
    limit = np.isinf(k) & valid & np.isnan(expected)
    if method in ("logpmf", "pmf"):
        expected = np.where(limit, -np.inf if method == "logpmf" else 0.0, expected)
    _assert_matches(getattr(getattr(tf.stats, name), method)(k, *params), expected)


@pytest.mark.parametrize("method", DISC_METHODS)
@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_grads(name, method):
    """Derivatives in the continuous parameters (binom's n only by the closed form below,
    nbinom's n only in logpmf/pmf); k is data, with derivative 0."""
    rng = np.random.default_rng(6)
    k, params = _disc_args(name, rng)
    if name == "bernoulli" and method in ("sf", "logsf"):
        k = np.zeros_like(k)      # sf = 0 at k = 1: logsf -inf, no finite difference
    f = getattr(getattr(tf.stats, name), method)
    if name == "binom" or (name == "nbinom" and method not in ("logpmf", "pmf")):
        n = params[0]     # fixed, in p's precision (check_low_precision passes float32 p)
        g, args = (lambda p: f(k, np.asarray(n, p.dtype), p)), (params[1],)
    else:
        g, args = (lambda *ps: f(k, *ps)), tuple(params)

    def run():
        check_grads(g, args)
        check_low_precision(g, args, rtol=5e-3)
        kt = tf.tensor(k, requires_grad=True)
        (gk,) = tf.grad(tf.sum(f(kt, *params)), [kt])
        np.testing.assert_array_equal(gk.numpy(), np.zeros_like(k))

    _check_or_unsupported(name, method, run)


def test_binom_derivative_in_n_is_the_digamma_formula():
    if not _differentiable("gammaln", "xlogy", "xlog1py"):
        with pytest.raises(tf.UnsupportedADError):
            tf.stats.binom.logpmf(1.0, tf.tensor(3.0, requires_grad=True), 0.5)
        return
    k = np.array([0.0, 2.0, 5.0, 7.0])
    n = tf.tensor([7.0, 9.0, 12.0, 7.0], requires_grad=True)
    p = 0.35
    (g,) = tf.grad(tf.sum(tf.stats.binom.logpmf(k, n, p)), [n])
    nv = n.numpy()
    ref = scipy.special.digamma(nv + 1) - scipy.special.digamma(nv - k + 1) + math.log1p(-p)
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-12)
    (g2,) = tf.grad(tf.sum(tf.grad(tf.sum(tf.stats.binom.logpmf(k, n, p)), [n],
                                   create_graph=True)[0]), [n])
    ref2 = scipy.special.polygamma(1, nv + 1) - scipy.special.polygamma(1, nv - k + 1)
    np.testing.assert_allclose(g2.numpy(), ref2, rtol=1e-10)


def test_geom_and_bernoulli_at_p_one():
    """p = 1 is inside the domain: finite values get finite derivatives."""
    p = tf.tensor([1.0, 1.0, 1.0], requires_grad=True)
    k = np.array([1.0, 2.0, 3.0])
    for method, value, deriv in (("cdf", [1, 1, 1], [1, 0, 0]), ("sf", [0, 0, 0], [-1, 0, 0]),
                                 ("logpmf", [0, -np.inf, -np.inf], None)):
        out = getattr(tf.stats.geom, method)(k, p)
        np.testing.assert_array_equal(out.numpy(), value)
        with np.errstate(divide="ignore"):
            _assert_matches(out, getattr(scipy.stats.geom, method)(k, 1.0))
        if deriv is not None:
            (g,) = tf.grad(tf.sum(out), [p])
            np.testing.assert_allclose(g.numpy(), deriv, atol=1e-15)
    (g,) = tf.grad(tf.stats.geom.logpmf(1.0, p[0]), [p])
    np.testing.assert_array_equal(g.numpy(), [1.0, 0.0, 0.0])
    q = tf.tensor([0.0, 1.0], requires_grad=True)
    out = tf.stats.bernoulli.logpmf([0.0, 1.0], q)
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0])
    (g,) = tf.grad(tf.sum(out), [q])
    np.testing.assert_array_equal(g.numpy(), [-1.0, 1.0])


# ---- multivariate normal ---------------------------------------------------------------------

def _spd_from(a):
    """A positive-definite covariance as a differentiable function of a free matrix."""
    return a @ a.mT + tf.tensor(np.eye(a.shape[-1], dtype=a.dtype))


@pytest.mark.parametrize("cov_kind", ["scalar", "diag", "full"])
@pytest.mark.parametrize("xshape", [(3,), (5, 3), (2, 5, 3), (1, 3)])
def test_mvn_matches_scipy(cov_kind, xshape):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(xshape)
    mean = rng.standard_normal(3)
    cov = {"scalar": 1.7, "diag": rng.uniform(0.5, 2, 3),
           "full": tf.testing.random_spd(3, rng=rng)}[cov_kind]
    for method in ("logpdf", "pdf"):
        _assert_matches(getattr(tf.stats.multivariate_normal, method)(x, mean, cov),
                        getattr(scipy.stats.multivariate_normal, method)(x, mean, cov))
    _assert_matches(tf.stats.multivariate_normal(mean=mean, cov=cov).logpdf(x),
                    scipy.stats.multivariate_normal(mean=mean, cov=cov).logpdf(x))


def test_mvn_scipy_shape_conventions():
    mvn, ref = tf.stats.multivariate_normal, scipy.stats.multivariate_normal
    _assert_matches(mvn.logpdf([0.1, 0.2, -0.3]), ref.logpdf([0.1, 0.2, -0.3]))  # d = 1
    _assert_matches(mvn.logpdf(0.4, cov=2.0), ref.logpdf(0.4, cov=2.0))
    _assert_matches(mvn.logpdf([0.1, 0.2], mean=[0.0, 1.0]), ref.logpdf([0.1, 0.2], [0, 1]))
    x = np.random.default_rng(0).standard_normal((4, 2))
    cov = np.array([[2.0, 0.3], [0.1, 1.0]])      # only the lower triangle is read
    _assert_matches(mvn.logpdf(x, cov=cov), ref.logpdf(x, cov=cov))
    # a 1-D cov without mean fixes the dimension (SciPy raises there)
    _assert_matches(mvn.logpdf(x, cov=[1.0, 2.0]), ref.logpdf(x, mean=[0, 0], cov=[1.0, 2.0]))


def test_mvn_batched():
    rng = np.random.default_rng(8)
    covs = tf.testing.random_spd(3, batch=(4,), rng=rng)
    means = rng.standard_normal((4, 3))
    x = rng.standard_normal((6, 1, 3))
    out = tf.stats.multivariate_normal.logpdf(x, means, covs)
    assert out.shape == (6, 4)
    for j in range(4):
        _assert_matches(out[:, j], scipy.stats.multivariate_normal.logpdf(
            x[:, 0], means[j], covs[j]))
    out = tf.stats.multivariate_normal.logpdf(x[:1], None, covs)     # batched cov only
    assert out.shape == (1, 4)


def test_mvn_grads():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 3))
    mean = rng.standard_normal((3, 3))
    a = rng.standard_normal((3, 3, 3))
    diag = rng.uniform(0.5, 2, 3)

    def full(x, mean, a):
        return tf.stats.multivariate_normal.logpdf(x, mean, _spd_from(a))

    check_grads(full, (x, mean, a))
    check_low_precision(full, (x, mean, a), rtol=5e-3)
    check_grads(lambda x, m, d: tf.stats.multivariate_normal.logpdf(x, m, d),
                (x[0], mean[0], diag))
    check_grads(lambda x, m, c: tf.stats.multivariate_normal.pdf(x, m, c),
                (x[0], mean[0], np.array(1.3)))
    # the gradient in cov is that of the symmetric matrix: compare with the
    # closed form  d logpdf / d Σ = ½ (Σ⁻¹ r rᵀ Σ⁻¹ - Σ⁻¹)  on symmetric directions
    sigma = tf.testing.random_spd(3, rng=rng)
    r = x[0, 0] - mean[0]
    c = tf.tensor(sigma, requires_grad=True)
    (g,) = tf.grad(tf.stats.multivariate_normal.logpdf(x[0, 0], mean[0], c), [c])
    inv = np.linalg.inv(sigma)
    ref = 0.5 * (inv @ np.outer(r, r) @ inv - inv)
    direction = rng.standard_normal((3, 3))
    direction = direction + direction.T
    np.testing.assert_allclose(np.sum(g.numpy() * direction), np.sum(ref * direction),
                               rtol=1e-10)


def test_mvn_errors():
    mvn = tf.stats.multivariate_normal
    with pytest.raises(tf.LinAlgError, match="not positive definite"):
        mvn.logpdf([0.0, 0.0], cov=[[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(tf.LinAlgError, match="singular covariances are not supported"):
        mvn.logpdf([0.0, 0.0], cov=[[1.0, 1.0], [1.0, 1.0]], allow_singular=True)
    with pytest.raises(ValueError, match="positive definite"):     # as SciPy: a ValueError
        mvn.logpdf([0.0, 0.0], mean=[0, 0], cov=[1.0, -2.0])
    with pytest.raises(tf.LinAlgError):
        mvn.logpdf([0.0, 0.0], mean=[0, 0], cov=0.0)
    with pytest.raises(tf.ShapeError, match="3 components"):
        mvn.logpdf(np.zeros((4, 3)), mean=[0, 0])
    with pytest.raises(tf.ShapeError, match="cov has shape"):
        mvn.logpdf(np.zeros((4, 2)), mean=[0, 0], cov=np.eye(3))


# ---- Dirichlet ------------------------------------------------------------------------------

def test_dirichlet():
    rng = np.random.default_rng(10)
    alpha = np.array([0.8, 2.0, 3.5])
    x = rng.dirichlet(alpha, size=5).T          # components on the first axis, as SciPy
    for method in ("logpdf", "pdf"):
        _assert_matches(getattr(tf.stats.dirichlet, method)(x, alpha),
                        getattr(scipy.stats.dirichlet, method)(x, alpha))
        _assert_matches(getattr(tf.stats.dirichlet, method)(x[:2], alpha),
                        getattr(scipy.stats.dirichlet, method)(x[:2], alpha))
    _assert_matches(tf.stats.dirichlet(alpha).logpdf(x[:, 0]),
                    scipy.stats.dirichlet.logpdf(x[:, 0], alpha))
    # on the simplex: differentiate in the first K - 1 components (the last is 1 - sum)
    def run():
        check_grads(lambda x, a: tf.stats.dirichlet.logpdf(x, a), (x[:2], alpha))
        check_low_precision(lambda x, a: tf.stats.dirichlet.logpdf(x, a), (x[:2], alpha),
                            rtol=5e-3)

    if _differentiable("gammaln", "xlogy"):
        run()
    else:
        with pytest.raises(tf.UnsupportedADError):
            run()
    with pytest.raises(tf.stats.DomainError, match="alpha must be > 0"):
        tf.stats.dirichlet.logpdf(x, [1.0, -1.0, 2.0])
    with pytest.raises(tf.stats.DomainError, match="sum to 1"):
        tf.stats.dirichlet.logpdf([0.2, 0.3, 0.6], alpha)
    with pytest.raises(tf.stats.DomainError, match="> 0 where alpha_i < 1"):
        tf.stats.dirichlet.logpdf([0.0, 0.5, 0.5], alpha)
    with pytest.raises(tf.ShapeError, match="one-dimensional"):
        tf.stats.dirichlet.logpdf(x, alpha[None])


# ---- shape parameters of incomplete gamma/beta functions ----------------------------------

@pytest.mark.parametrize("name, args, param", [
    ("gamma", (1.2, "p"), "a"), ("beta", (0.3, "p", 2.0), "a"), ("t", (0.3, "p"), "df"),
    ("chi2", (1.2, "p"), "df"), ("chi", (1.2, "p"), "df"), ("f", (0.8, "p", 3.0), "dfn"),
    ("f", (2.5, 3.0, "p"), "dfd"),
])
def test_unsupported_shape_derivative_names_the_parameter(name, args, param):
    p = tf.tensor(1.5, requires_grad=True)
    call = [p if a == "p" else a for a in args]
    try:
        getattr(tf.stats, name).cdf(*call)
    except tf.UnsupportedADError as err:
        assert f"'{param}'" in str(err) and f"tf.stats.{name}.cdf" in str(err)
        # without a derivative in that parameter the call works
        getattr(tf.stats, name).cdf(*[p.detach() if a == "p" else a for a in args])
    else:     # tenferro.special differentiates this shape argument: check that derivative
        check_grads(lambda q: getattr(tf.stats, name).cdf(
            *[q if a == "p" else a for a in args]), (np.array(1.5),))


# ---- the module's worked example --------------------------------------------------------------

def test_module_example_fits_a_gamma_distribution():
    if not _differentiable("gammaln", "xlogy"):
        with pytest.raises(tf.UnsupportedADError):
            tf.value_and_grad(lambda a: tf.sum(tf.stats.gamma.logpdf(1.0, a)))(1.5)
        return
    data = scipy.stats.gamma.rvs(2.5, scale=1.5, size=500, random_state=0)

    def nll(log_params):
        a, scale = tf.exp(log_params[0]), tf.exp(log_params[1])
        return -tf.sum(tf.stats.gamma.logpdf(data, a, scale=scale))

    fit = scipy.optimize.minimize(tf.value_and_grad(nll), np.zeros(2), jac=True,
                                  method="BFGS")
    a_hat, scale_hat = np.exp(fit.x)
    a_ref, _, scale_ref = scipy.stats.gamma.fit(data, floc=0)
    np.testing.assert_allclose([a_hat, scale_hat], [a_ref, scale_ref], rtol=1e-4)
    assert fit.success
    # the example in the docstring is this code
    assert "tf.stats.gamma.logpdf(data, a, scale=scale)" in tf.stats.__doc__


def test_doc_example_fits_like_scipy():
    """docs/stats.md's maximum-likelihood example runs (now that tf.special gives the
    derivative in the gamma shape) and lands on scipy.stats.gamma.fit's estimate."""
    import re
    from pathlib import Path
    doc = Path(__file__).resolve().parents[1] / "docs" / "stats.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)
    fit_blocks = [b for b in blocks if "minimize" in b]   # the first block is a synopsis
    assert len(fit_blocks) == 1
    namespace = {}
    exec(compile(fit_blocks[0], "stats.md[fit example]", "exec"), namespace)
    a_ref, _, scale_ref = scipy.stats.gamma.fit(namespace["data"], floc=0)
    np.testing.assert_allclose([namespace["a_hat"], namespace["scale_hat"]],
                               [a_ref, scale_ref], rtol=1e-4)


# ---- the distributions of issue 29: tails, vonmises' cdf ----------------------------------

def test_log_cdf_keeps_the_small_complement():
    """logcdf = log1p(-sf) above the median (SciPy's rv_continuous rule): the digits of a
    probability within 1e-11 of 1 come from its complement, not from log(1 - 1e-11)."""
    cases = [("chi2", 60.0, (3.0,)), ("chi", 7.0, (2.4,)), ("rayleigh", 7.0, ()),
             ("weibull_min", 8.0, (1.7,)), ("f", 4000.0, (3.0, 9.0)), ("pareto", 1e4, (2.5,)),
             ("gamma", 40.0, (2.0,))]
    for name, x, shapes in cases:
        dist = getattr(scipy.stats, name)
        sf = dist.sf(x, *shapes)
        assert 0 < sf < 1e-8, name
        np.testing.assert_allclose(getattr(tf.stats, name).logcdf(x, *shapes).item(),
                                   np.log1p(-sf), rtol=1e-12, err_msg=name)
        # and the lower tail of the sf (log1p(-cdf) below the median)
        lo = dist.ppf(1e-10, *shapes)
        np.testing.assert_allclose(getattr(tf.stats, name).logsf(lo, *shapes).item(),
                                   np.log1p(-dist.cdf(lo, *shapes)), rtol=1e-10,
                                   err_msg=name)


def test_far_tails_match_scipy():
    x = np.array([30.0, 80.0, 300.0])
    for name, shapes in (("chi2", (4.0,)), ("rayleigh", ()), ("weibull_min", (0.8,)),
                         ("pareto", (1.5,)), ("chi", (3.0,)), ("f", (4.0, 6.0))):
        for method in ("logpdf", "logsf", "sf", "pdf"):
            _assert_matches(getattr(getattr(tf.stats, name), method)(x, *shapes),
                            getattr(getattr(scipy.stats, name), method)(x, *shapes))


def _vonmises_cdf_quad(x, kappa):
    """The von Mises cdf on [-pi, pi] by adaptive quadrature of SciPy's density."""
    import scipy.integrate
    return np.array([scipy.integrate.quad(lambda u: scipy.stats.vonmises.pdf(u, k), -np.pi,
                                          xi, epsabs=1e-17, epsrel=1e-14, limit=400)[0]
                     for xi, k in zip(x, kappa)])


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
@pytest.mark.parametrize("kappa", [0.0, 0.5, 5.0, 49.9, 50.0, 80.0, 300.0, 1e4])
def test_vonmises_cdf_against_quadrature(kappa):
    """Absolute accuracy 2e-15 for every kappa, also above 50, where SciPy's normal
    approximation is off by up to ~3e-6 (and where tenferro's values differ from it);
    the derivative in x is the density to 1e-14 relative to its maximum."""
    x = np.array([-3.0, -2.0, -1.0, -0.3, -0.05, 0.0, 0.1, 0.5, 1.5, 3.0])
    if kappa >= 300:    # the mass lies within a few 1/sqrt(kappa) of 0
        x = x / math.sqrt(kappa) * 4
    ref = _vonmises_cdf_quad(x, np.full(x.shape, kappa))
    xt = tf.tensor(x, requires_grad=True)
    cdf = tf.stats.vonmises.cdf(xt, kappa)
    np.testing.assert_allclose(cdf.numpy(), ref, rtol=0, atol=2e-15)
    np.testing.assert_allclose(tf.stats.vonmises.sf(x, kappa).numpy(), 1 - ref, rtol=0,
                               atol=2e-15)
    (g,) = tf.grad(tf.sum(cdf), [xt])
    pdf = scipy.stats.vonmises.pdf(x, kappa)
    np.testing.assert_allclose(g.numpy(), pdf, rtol=0, atol=1e-14 * max(1.0, pdf.max()))
    if kappa < 50:      # SciPy's series: its ~13 digits
        np.testing.assert_allclose(cdf.numpy(), scipy.stats.vonmises.cdf(x, kappa), rtol=0,
                                   atol=2e-13)


def test_vonmises_is_periodic_like_scipy():
    """The density repeats every 2π·scale; the cdf adds one per whole turn (SciPy's)."""
    x = np.array([-9.0, -4.0, 3.5, 7.0, 20.0])
    for method in ("logpdf", "pdf"):
        _assert_matches(getattr(tf.stats.vonmises, method)(x, 2.0, 0.3, 1.5),
                        getattr(scipy.stats.vonmises, method)(x, 2.0, 0.3, 1.5))
    np.testing.assert_allclose(tf.stats.vonmises.cdf(x, 2.0, 0.3, 1.5).numpy(),
                               scipy.stats.vonmises.cdf(x, 2.0, 0.3, 1.5), rtol=0, atol=1e-13)
    assert np.isnan(tf.stats.vonmises.pdf(np.inf, 1.0).item())     # no limit: NaN (SciPy)


@pytest.mark.parametrize("method", ["cdf", "logcdf", "sf", "logsf"])
def test_vonmises_cdf_grads_large_kappa(method):
    """kappa = 60..120 (where SciPy switches to its approximation): reverse, forward and
    second order in x, kappa, loc and scale."""
    rng = np.random.default_rng(11)
    kappa = rng.uniform(60, 120, (1, 3))
    x = rng.uniform(-0.2, 0.2, (2, 3))
    f = getattr(tf.stats.vonmises, method)
    check_grads(lambda x, k, l, s: f(x, k, l, s), (x, kappa, np.array(0.01), np.array(0.9)))


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
def test_vonmises_cdf_kappa_derivative_formula():
    """d/dκ F(x) = ∫_{-π}^{x} (cos u − I₁/I₀) f(u) du, by quadrature."""
    import scipy.integrate
    x, kappa = 0.7, 3.0
    a1 = scipy.special.i1e(kappa) / scipy.special.i0e(kappa)
    ref = scipy.integrate.quad(lambda u: (math.cos(u) - a1) *
                               scipy.stats.vonmises.pdf(u, kappa), -np.pi, x,
                               epsabs=1e-16, epsrel=1e-14)[0]
    k = tf.tensor(kappa, requires_grad=True)
    (g,) = tf.grad(tf.stats.vonmises.cdf(x, k), [k])
    np.testing.assert_allclose(g.item(), ref, rtol=1e-12)


def test_vonmises_series_coefficients_and_blocks():
    """The op behind vonmises' cdf (tenferro/stats.py, stats.vonmises_series): the κ-derivative
    coefficients r_n^(k) of its recurrence against central differences of r_n^(k-1), and
    the blocked sum (κ = 1e4: ~900 terms, several blocks of entries; per-entry κ) against
    the direct sum with np.sin."""
    from tenferro.stats import _vm_coefs, _vm_series_np
    kappa = np.array([0.05, 0.3, 2.0, 40.0])
    h = 1e-5
    for k in (1, 2, 3):
        c = _vm_coefs(kappa, 0, k)
        hi, lo = _vm_coefs(kappa + h, 0, k - 1), _vm_coefs(kappa - h, 0, k - 1)
        m = min(len(c), len(hi), len(lo))
        np.testing.assert_allclose(c[:m], (hi[:m] - lo[:m]) / (2 * h), rtol=0, atol=1e-8)
    np.testing.assert_allclose(_vm_coefs(np.array([0.0]), 0, 1)[:2, 0], [0.5, 0.0])
    rng = np.random.default_rng(4)
    x = rng.uniform(-np.pi, np.pi, 2500)
    for kap in (np.array(1e4), rng.choice([0.5, 3.0, 30.0], x.shape)):
        got = _vm_series_np(x, kap, ("sin", -1, 0))
        kk = np.broadcast_to(kap, x.shape)
        n = np.arange(1, 1200)[:, None]
        r = scipy.special.ive(n, kk) / scipy.special.i0e(kk)
        ref = (r * np.sin(n * x) / n).sum(axis=0)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13)


# ---- entropy ----------------------------------------------------------------------------------

# name -> shape parameter values, including both sides of SciPy's branch points
ENTROPY_SHAPES = {
    "norm": [], "expon": [], "laplace": [], "cauchy": [], "logistic": [], "uniform": [],
    "rayleigh": [],
    "t": [[0.7, 3.0, 99.0, 100.0, 150.0, 1e4, np.inf]],
    "gamma": [[0.6, 3.0, 249.0, 251.0, 1e4]],
    "beta": [[0.6, 3.0, 40.0], [[0.8], [5.0]]],
    "lognorm": [[0.3, 1.0, 2.0]],
    "chi2": [[0.6, 3.0, 249.0, 251.0, 1e4]],
    "chi": [[0.6, 3.0, 299.0, 301.0, 1e4]],
    "f": [[0.6, 3.0, 50.0], [[0.8], [7.0]]],
    "weibull_min": [[0.5, 1.0, 3.0]],
    "pareto": [[0.5, 1.0, 3.0]],
    "vonmises": [[0.0, 0.5, 5.0, 60.0, 1e3]],
}


def test_entropy_covers_every_continuous_distribution():
    assert set(ENTROPY_SHAPES) == set(CONTINUOUS)


@pytest.mark.parametrize("name", sorted(ENTROPY_SHAPES))
def test_entropy_matches_scipy(name):
    shapes = [np.asarray(v) for v in ENTROPY_SHAPES[name]]
    dist, ours = getattr(scipy.stats, name), getattr(tf.stats, name)
    # an invalid scale (negative, NaN) or loc (NaN) gives NaN, as in SciPy
    bad_scale = np.array([2.5, -1.0, np.nan, 0.5]).reshape((4,) + (1,) * len(shapes))
    bad_loc = np.array([0.0, 0.0, 0.0, np.nan]).reshape(bad_scale.shape)
    with np.errstate(all="ignore"):
        for kw in ({}, {"scale": 2.5}, {"loc": 1.0, "scale": 0.3},
                   {"loc": bad_loc, "scale": bad_scale}):
            out = ours.entropy(*shapes, **kw)
            assert isinstance(out, tf.Tensor)
            _assert_matches(out, dist.entropy(*shapes, **kw))
        _assert_matches(ours(*shapes, scale=2.0).entropy(),
                        dist(*shapes, scale=2.0).entropy())


def _entropy_checked_args(name, rng):
    samplers = CONTINUOUS[name][0]
    shapes = [s(rng, (3,)) for s in samplers]
    return shapes, rng.uniform(0.5, 2, (3,)), rng.uniform(-1, 1, (3,))


@pytest.mark.parametrize("name", sorted(ENTROPY_SHAPES))
def test_entropy_grads(name):
    """Reverse, forward, second order in the shapes and scale; 0 in loc."""
    rng = np.random.default_rng(12)
    shapes, scale, loc = _entropy_checked_args(name, rng)
    k = len(shapes)
    f = getattr(tf.stats, name).entropy
    check_grads(lambda *p: f(*p[:k], scale=p[k]), (*shapes, scale))
    check_low_precision(lambda *p: f(*p[:k], scale=p[k]), (*shapes, scale), rtol=5e-3)
    lt = tf.tensor(loc, requires_grad=True)
    (gl,) = tf.grad(tf.sum(f(*shapes, loc=lt, scale=scale)), [lt])
    np.testing.assert_array_equal(gl.numpy(), np.zeros(3))
    # an invalid scale: NaN value and NaN derivatives in that entry only
    sc = tf.tensor([scale[0], -1.0, scale[2]], requires_grad=True)
    out = f(*shapes, scale=sc)
    (gs,) = tf.grad(tf.sum(out), [sc])
    assert np.isnan(out.numpy()[1]) and np.isnan(gs.numpy()[1])
    assert np.all(np.isfinite(gs.numpy()[[0, 2]]))


def test_entropy_branch_points_are_differentiable():
    """Second order on both sides of SciPy's switches to asymptotic series."""
    for name, values in (("t", [99.0, 101.0]), ("gamma", [249.0, 251.0]),
                         ("chi2", [249.0, 251.0]), ("chi", [299.0, 301.0])):
        check_grads(getattr(tf.stats, name).entropy, (np.array(values),))


def test_discrete_entropy():
    p = np.array([0.0, 0.05, 0.3, 0.5, 0.9, 1.0])
    _assert_matches(tf.stats.bernoulli.entropy(p), scipy.stats.bernoulli.entropy(p))
    q = p[1:]
    with np.errstate(all="ignore"):
        expected = scipy.stats.geom.entropy(q)
    # deliberate difference: SciPy's formula gives 0·log 0 = NaN at p = 1; the entropy of
    # a point mass is 0
    assert np.isnan(expected[-1])
    expected[-1] = 0.0
    _assert_matches(tf.stats.geom.entropy(q), expected)
    _assert_matches(tf.stats.geom(0.3).entropy(), scipy.stats.geom(0.3).entropy())
    inner = np.array([0.05, 0.3, 0.7])
    for dist in (tf.stats.bernoulli, tf.stats.geom):
        check_grads(dist.entropy, (inner,))
    _assert_matches(tf.stats.bernoulli.entropy([-0.1, 1.1, np.nan, 0.5]),
                    scipy.stats.bernoulli.entropy([-0.1, 1.1, np.nan, 0.5]))
    for name in ("poisson", "binom", "nbinom"):
        with pytest.raises(tf.stats.NoClosedFormError, match="no closed form"):
            getattr(tf.stats, name).entropy(2.0, 0.5)
        assert issubclass(tf.stats.NoClosedFormError, NotImplementedError)


@pytest.mark.parametrize("cov_kind", ["scalar", "diag", "full"])
def test_mvn_entropy(cov_kind):
    rng = np.random.default_rng(13)
    cov = {"scalar": 1.7, "diag": rng.uniform(0.5, 2, 3),
           "full": tf.testing.random_spd(3, rng=rng)}[cov_kind]
    mean = rng.standard_normal(3)
    ref = scipy.stats.multivariate_normal.entropy(mean, cov)
    _assert_matches(tf.stats.multivariate_normal.entropy(mean, cov), ref)
    _assert_matches(tf.stats.multivariate_normal(mean=mean, cov=cov).entropy(), ref)
    if cov_kind != "scalar":
        _assert_matches(tf.stats.multivariate_normal.entropy(cov=cov), ref)


def test_mvn_entropy_grads_and_batches():
    rng = np.random.default_rng(14)
    a = rng.standard_normal((4, 3, 3))
    ent = tf.stats.multivariate_normal.entropy
    check_grads(lambda a: ent(cov=_spd_from(a)), (a,))
    check_low_precision(lambda a: ent(cov=_spd_from(a)), (a,), rtol=5e-3)
    check_grads(lambda d: ent(cov=d), (rng.uniform(0.5, 2, 3),))
    # ∂H/∂Σ = ½ Σ⁻¹ on symmetric directions
    sigma = tf.testing.random_spd(3, rng=rng)
    c = tf.tensor(sigma, requires_grad=True)
    (g,) = tf.grad(ent(cov=c), [c])
    direction = rng.standard_normal((3, 3))
    direction = direction + direction.T
    np.testing.assert_allclose(np.sum(g.numpy() * direction),
                               np.sum(0.5 * np.linalg.inv(sigma) * direction), rtol=1e-12)
    covs = tf.testing.random_spd(3, batch=(4,), rng=rng)
    out = ent(cov=covs)
    assert out.shape == (4,)
    for j in range(4):
        _assert_matches(out[j], scipy.stats.multivariate_normal.entropy(cov=covs[j]))
    m = tf.tensor(rng.standard_normal(3), requires_grad=True)
    (gm,) = tf.grad(ent(m, covs[0]), [m])
    np.testing.assert_array_equal(gm.numpy(), np.zeros(3))
    with pytest.raises(tf.LinAlgError, match="not positive definite"):
        ent(cov=[[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(tf.ShapeError, match="cov has shape"):
        ent([0.0, 0.0], np.eye(3))


def test_dirichlet_entropy():
    alpha = np.array([0.8, 2.0, 3.5, 0.3])
    _assert_matches(tf.stats.dirichlet.entropy(alpha), scipy.stats.dirichlet.entropy(alpha))
    _assert_matches(tf.stats.dirichlet(alpha).entropy(), scipy.stats.dirichlet.entropy(alpha))
    check_grads(tf.stats.dirichlet.entropy, (alpha,))
    check_low_precision(tf.stats.dirichlet.entropy, (alpha,), rtol=5e-3)
    with pytest.raises(tf.stats.DomainError, match="alpha must be > 0"):
        tf.stats.dirichlet.entropy([1.0, 0.0])


def test_scipy_stats_on_a_tracked_tensor_raises_and_tf_stats_is_the_spelling():
    """scipy.stats' distributions call np.asarray on their arguments: on a Tensor that
    requires grad that raises (never a silently dropped gradient); tf.stats.<name> is the
    differentiable spelling of the same call."""
    x = tf.tensor([1.0, 2.5], requires_grad=True)
    with pytest.raises(tf.UnsupportedADError):
        scipy.stats.chi2.logpdf(x, 3.0)
    out = tf.stats.chi2.logpdf(x, 3.0)
    _assert_matches(out, scipy.stats.chi2.logpdf([1.0, 2.5], 3.0))
    (g,) = tf.grad(tf.sum(out), [x])
    np.testing.assert_allclose(g.numpy(), (3.0 / 2 - 1) / np.array([1.0, 2.5]) - 0.5,
                               rtol=1e-14)
