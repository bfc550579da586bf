"""tf.integrate: values against scipy.integrate, derivatives in y, x, dx and initial
(reverse, forward, second order; real and complex y), precision, errors."""
import numpy as np
import pytest
import scipy.integrate as si

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

NAMES = ["trapezoid", "simpson", "cumulative_trapezoid", "cumulative_simpson"]


def _points(shape, axis, rng):
    """Strictly increasing, non-uniform sample points along ``axis``."""
    return np.cumsum(rng.uniform(0.2, 1.0, shape), axis=axis)


def _spellings(shape, axis, rng):
    n = shape[axis]
    yield "dx-default", {}
    yield "dx", {"dx": 0.37}
    yield "x-1d", {"x": _points((n,), 0, rng)}
    yield "x-nd", {"x": _points(shape, axis, rng)}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9])
def test_values(name, n):
    rng = np.random.default_rng(n)
    for shape, axis in (((n,), -1), ((3, n), 1), ((n, 2, 3), 0), ((2, n, 3), -2)):
        y = rng.standard_normal(shape)
        for cid, kw in _spellings(shape, axis, rng):
            if name.startswith("cumulative") and n == 0:
                continue
            expected = getattr(si, name)(y, **kw, axis=axis)
            got = getattr(tf.integrate, name)(y, **kw, axis=axis)
            assert isinstance(got, tf.Tensor)
            assert got.shape == np.shape(expected), (cid, shape)
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{cid} {shape} axis={axis}")


@pytest.mark.parametrize("name", ["cumulative_trapezoid", "cumulative_simpson"])
def test_initial(name):
    rng = np.random.default_rng(0)
    y = rng.standard_normal((3, 6))
    for n in (2, 6):
        expected = getattr(si, name)(y[:, :n], initial=0, axis=1)
        got = getattr(tf.integrate, name)(y[:, :n], initial=0, axis=1)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    init = rng.standard_normal((3, 1))
    np.testing.assert_allclose(
        tf.integrate.cumulative_simpson(y, initial=init).numpy(),
        si.cumulative_simpson(y, initial=init), rtol=1e-12, atol=1e-12)
    check_grads(lambda a, b: tf.integrate.cumulative_simpson(a, initial=b), [y, init])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_grads_in_y_x_dx(name, n):
    rng = np.random.default_rng(10 + n)
    f = getattr(tf.integrate, name)
    for dtype in (np.float64, np.complex128):
        y = random_array((2, n), dtype, rng)
        check_grads(lambda a: f(a, axis=1), [y])
        check_grads(lambda a, d: f(a, dx=d, axis=1), [y, np.array(0.4)])
        x1 = _points((n,), 0, rng)
        check_grads(lambda a, b: f(a, x=b, axis=1), [y, x1])
        xn = _points((2, n), 1, rng)
        check_grads(lambda a, b: f(a, x=b, axis=1), [y, xn])
    # along a leading axis of a batch
    y3 = random_array((n, 2, 2), np.float64, rng)
    check_grads(lambda a, b: f(a, x=b, axis=0), [y3, _points((n,), 0, rng)])


def test_simpson_is_exact_and_grad_in_x():
    """Odd uniform samples integrate cubics exactly, non-uniform ones quadratics; then the
    derivative in the sample points is the fundamental theorem's: f(b) at the upper end,
    -f(a) at the lower, 0 inside (a check independent of SciPy)."""
    x = np.linspace(0.0, 2.0, 9)
    assert abs(float(tf.integrate.simpson(x ** 3 - x, x=x)) - (2.0 ** 4 / 4 - 2.0)) < 1e-12
    xt = tf.tensor(np.sort(np.random.default_rng(0).uniform(0.0, 2.0, 9)), requires_grad=True)
    f = lambda v: v ** 2 - 3 * v
    (gx,) = tf.grad([tf.integrate.simpson(f(xt), x=xt)], [xt])
    ends = xt.detach().numpy()[[0, -1]]
    np.testing.assert_allclose(gx.numpy()[[0, -1]], [-f(ends[0]), f(ends[1])], atol=1e-10)
    np.testing.assert_allclose(gx.numpy()[1:-1], 0.0, atol=1e-10)


def test_zero_spacing_matches_scipy_without_nan():
    """SciPy's simpson counts a term with a zero spacing as 0; so does tf, and the masked
    division sends no NaN into the gradient."""
    x = np.array([0.0, 0.0, 1.0, 2.0, 2.5])
    y = np.array([1.0, 2.0, 0.5, -1.0, 3.0])
    np.testing.assert_allclose(tf.integrate.simpson(y, x=x).numpy(), si.simpson(y, x=x),
                               rtol=1e-12)
    xt = tf.tensor(x, requires_grad=True)
    yt = tf.tensor(y, requires_grad=True)
    gy, gx = tf.grad([tf.integrate.simpson(yt, x=xt)], [yt, xt])
    assert np.isfinite(gy.numpy()).all() and np.isfinite(gx.numpy()).all()


@pytest.mark.parametrize("name", NAMES)
def test_low_precision(name):
    rng = np.random.default_rng(3)
    y = rng.standard_normal((2, 7))
    x = _points((7,), 0, rng)
    check_low_precision(lambda a, b: getattr(tf.integrate, name)(a, x=b), [y, x])
    assert getattr(tf.integrate, name)(y.astype(np.float32)).dtype == np.float32
    assert getattr(tf.integrate, name)(np.arange(5)).dtype == np.float64


def test_errors():
    y = tf.tensor(np.ones((3, 4)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="at least one dimension"):
        tf.integrate.trapezoid(np.float64(1.0))
    with pytest.raises(tf.AxisError, match="out of bounds"):
        tf.integrate.simpson(y, axis=2)
    with pytest.raises(tf.ShapeError, match="one sample point per value"):
        tf.integrate.trapezoid(y, x=np.arange(3.0))
    with pytest.raises(tf.ShapeError, match="does not broadcast"):
        tf.integrate.trapezoid(y, x=np.ones((2, 4)))
    with pytest.raises(tf.ShapeError, match="1-D of length 4 or have y's shape"):
        tf.integrate.simpson(y, x=np.ones((3, 5)))
    with pytest.raises(tf.ShapeError, match="x must be real"):
        tf.integrate.trapezoid(y, x=np.ones(4) * 1j)
    with pytest.raises(tf.ShapeError, match="initial must be None or 0"):
        tf.integrate.cumulative_trapezoid(y, initial=1.0)
    with pytest.raises(tf.ShapeError, match="at least one point"):
        tf.integrate.cumulative_trapezoid(np.ones((2, 0)))
    with pytest.raises(tf.ShapeError, match="strictly increasing"):
        tf.integrate.cumulative_simpson(y, x=np.array([0.0, 1.0, 1.0, 2.0]))
    with pytest.raises(tf.ShapeError, match="dx must be a scalar"):
        tf.integrate.simpson(y, dx=np.ones(2))
    with pytest.raises(tf.ShapeError, match="initial must be a scalar"):
        tf.integrate.cumulative_simpson(y, initial=np.ones(4))
