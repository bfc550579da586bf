"""tf.signal: values against scipy.signal, derivatives in both inputs (reverse, forward,
second order; real and complex), every mode and method, broadcasting axes, lfilter in b, a
and x, precision, errors."""
import numpy as np
import pytest
import scipy.signal as ss

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

SHAPES = [   # (in1, in2): longer/shorter/equal, 2-D mixed, 3-D
    ((7,), (3,)), ((3,), (7,)), ((5,), (5,)), ((1,), (4,)),
    ((4, 6), (3, 2)), ((2, 3), (4, 5)), ((4, 3), (2, 5)), ((3, 2, 4), (2, 2, 3)),
]
MODES = ["full", "same", "valid"]


def _pair(sa, sb, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return random_array(sa, dtype, rng), random_array(sb, dtype, rng)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_values(sa, sb, mode, dtype):
    a, b = _pair(sa, sb, dtype)
    for name in ("convolve", "correlate"):
        for method in ("auto", "direct", "fft"):
            try:
                expected = getattr(ss, name)(a, b, mode, method)
            except ValueError:   # valid mode with neither input larger: tf raises too
                with pytest.raises(tf.ShapeError, match="at least as large"):
                    getattr(tf.signal, name)(a, b, mode, method)
                continue
            got = getattr(tf.signal, name)(a, b, mode, method)
            assert got.shape == expected.shape and got.dtype == expected.dtype
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    for name in ("fftconvolve", "oaconvolve"):
        try:
            expected = getattr(ss, name)(a, b, mode)
        except ValueError:
            continue
        np.testing.assert_allclose(getattr(tf.signal, name)(a, b, mode).numpy(), expected,
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sa,sb", [s for s in SHAPES if s != ((4, 3), (2, 5))])
def test_grads(sa, sb, mode):
    for k, dtype in enumerate((np.float64, np.complex128)):
        a, b = _pair(sa, sb, dtype, seed=k)
        check_grads(lambda p, q: tf.signal.convolve(p, q, mode), [a, b])
        check_grads(lambda p, q: tf.signal.correlate(p, q, mode, method="direct"), [a, b])
    # a real input with a complex one: the real input's gradient is the real part
    a, b = _pair(sa, sb, np.float64, seed=3)
    check_grads(lambda p, q: tf.signal.correlate(p, q * (1 + 0.5j), mode), [a, b])


def test_vjp_is_the_adjoint():
    """⟨conv(a, b), w⟩ = ⟨a, conv_a*(w)⟩ for every mode: the cotangent of a bilinear map
    is the transpose of the linear map in each input (random a, b, w; complex)."""
    rng = np.random.default_rng(7)
    for mode in MODES:
        a, b = random_array((6, 4), np.complex128, rng), random_array((3, 2), np.complex128, rng)
        z, pullback = tf.vjp(lambda p, q: tf.signal.convolve(p, q, mode), a, b)
        w = random_array(z.shape, np.complex128, rng)
        ga, gb = pullback(w)
        assert abs(np.vdot(w, z.numpy()) - np.vdot(ga.numpy(), a)) < 1e-12 * np.abs(z).sum() * 10
        # the map is linear in b as well: ⟨z, w⟩ through b
        assert abs(np.vdot(w, z.numpy()) - np.vdot(gb.numpy(), b)) < 1e-12 * np.abs(z).sum() * 10


@pytest.mark.parametrize("name", ["fftconvolve", "oaconvolve"])
def test_axes_broadcast(name):
    """Convolution along some axes, the others broadcasting (size 1 against n): the
    cotangent of the broadcast input is summed back."""
    rng = np.random.default_rng(1)
    a, b = random_array((3, 8), np.float64, rng), random_array((1, 3), np.float64, rng)
    for mode in MODES:
        expected = getattr(ss, name)(a, b, mode, axes=1)
        got = getattr(tf.signal, name)(a, b, mode, axes=1)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
        check_grads(lambda p, q: getattr(tf.signal, name)(p, q, mode, axes=[-1]), [a, b])
    az, bz = random_array((2, 5, 3), np.complex128, rng), random_array((2, 2, 1), np.complex128, rng)
    np.testing.assert_allclose(getattr(tf.signal, name)(az, bz, "same", axes=(0, 1)).numpy(),
                               getattr(ss, name)(az, bz, "same", axes=(0, 1)), rtol=1e-12,
                               atol=1e-12)
    check_grads(lambda p, q: getattr(tf.signal, name)(p, q, axes=(0, 1)), [az, bz])


def test_low_precision_and_dtypes():
    a, b = _pair((9,), (4,), np.float64)
    for name in ("convolve", "correlate", "fftconvolve"):
        check_low_precision(lambda p, q: getattr(tf.signal, name)(p, q, "same"), [a, b])
    assert tf.signal.convolve(a.astype(np.float32), b.astype(np.float32)).dtype == np.float32
    assert tf.signal.convolve(np.arange(3), np.arange(2)).dtype == np.float64
    np.testing.assert_allclose(tf.signal.convolve(np.arange(3), np.arange(2)).numpy(),
                               ss.convolve(np.arange(3), np.arange(2)))


LFILTERS = [   # (b, a): FIR, IIR of orders 1-3, b longer than x, a longer than b
    ([0.5, 0.25], [1.0]),
    ([1.0, -0.3], [1.0, -0.6]),
    ([0.2, 0.4, 0.2], [2.0, -0.9, 0.3]),
    ([0.3], [1.0, -0.5, 0.1, 0.05]),
    ([0.1, 0.2, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.3], [1.0, 0.4]),
]


@pytest.mark.parametrize("b,a", LFILTERS)
def test_lfilter(b, a):
    rng = np.random.default_rng(len(b) + len(a))
    b, a = np.array(b), np.array(a)
    x = rng.standard_normal((2, 7))
    for axis in (-1, 0):
        np.testing.assert_allclose(tf.signal.lfilter(b, a, x, axis=axis).numpy(),
                                   ss.lfilter(b, a, x, axis=axis), rtol=1e-12, atol=1e-12)
    check_grads(lambda p, q, s: tf.signal.lfilter(p, q, s), [b, a, x])
    check_grads(lambda p, q, s: tf.signal.lfilter(p, q, s, axis=0), [b, a, x])
    zb, za = b * (1 + 0.3j), a + 0.1j * np.arange(len(a)) / len(a)
    zx = random_array((7,), np.complex128, rng)
    np.testing.assert_allclose(tf.signal.lfilter(zb, za, zx).numpy(), ss.lfilter(zb, za, zx),
                               rtol=1e-12, atol=1e-12)
    check_grads(lambda p, q, s: tf.signal.lfilter(p, q, s), [zb, za, zx])
    check_low_precision(lambda p, q, s: tf.signal.lfilter(p, q, s), [b, a, x])


@pytest.mark.parametrize("b,a", LFILTERS)
@pytest.mark.parametrize("n", [7, 2])       # (2: fewer samples than delays for most filters)
def test_lfilter_initial_conditions(b, a, n):
    """lfilter(b, a, x, zi=zi) -> (y, zf) as SciPy's; derivatives in b, a, x and zi (both
    outputs: zf's cotangent too), reverse, forward and second order, real and complex."""
    rng = np.random.default_rng(len(b) * 10 + len(a) + n)
    b, a = np.array(b), np.array(a)
    k = max(len(a), len(b)) - 1
    x = rng.standard_normal((2, n))
    zi = rng.standard_normal((2, k))
    for axis, xx, zz in ((-1, x, zi), (0, x.T, zi.T), (-1, x, zi[:1])):   # (last: broadcast)
        y, zf = tf.signal.lfilter(b, a, xx, axis=axis, zi=zz)
        yr, zfr = ss.lfilter(b, a, xx, axis=axis, zi=zz)
        np.testing.assert_allclose(y.numpy(), yr, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(zf.numpy(), zfr, rtol=1e-12, atol=1e-12)
        assert zf.shape == zfr.shape
    check_grads(lambda p, q, s, z: tf.signal.lfilter(p, q, s, zi=z), [b, a, x, zi])
    check_grads(lambda p, q, s, z: tf.signal.lfilter(p, q, s, axis=0, zi=z), [b, a, x.T, zi.T],
                order=1)
    zb, za = b * (1 + 0.3j), a + 0.1j * np.arange(len(a)) / len(a)
    zx = random_array((n,), np.complex128, rng)
    zz = random_array((k,), np.complex128, rng)
    for got, ref in zip(tf.signal.lfilter(zb, za, zx, zi=zz), ss.lfilter(zb, za, zx, zi=zz)):
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)
    check_grads(lambda p, q, s, z: tf.signal.lfilter(p, q, s, zi=z), [zb, za, zx, zz])


def test_lfilter_state_carries_across_blocks():
    """Filtering in two blocks, the first's zf the second's zi, is filtering in one: also
    for the gradient through the state."""
    b, a = np.array([0.2, 0.4, 0.2]), np.array([1.0, -0.9, 0.3])
    x = np.random.default_rng(3).standard_normal(12)

    def blocks(s):
        y1, z1 = tf.signal.lfilter(b, a, s[:5], zi=np.zeros(2))
        y2, _ = tf.signal.lfilter(b, a, s[5:], zi=z1)
        return (tf.concatenate([y1, y2]) ** 2).sum()

    whole = lambda s: (tf.signal.lfilter(b, a, s) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(blocks(tf.tensor(x)).item(), whole(tf.tensor(x)).item(),
                               rtol=1e-13)
    np.testing.assert_allclose(tf.value_and_grad(blocks)(x)[1],
                               tf.value_and_grad(whole)(x)[1], rtol=1e-12)


@pytest.mark.parametrize("b,a", [([0.2, 0.4, 0.2], [1.0, -0.9, 0.3]), ([0.5, 0.25], [1.0]),
                                 ([0.3], [2.0, -0.5, 0.1, 0.05])])
def test_lfilter_zi(b, a):
    b, a = np.array(b), np.array(a)
    np.testing.assert_allclose(tf.signal.lfilter_zi(b, a).numpy(), ss.lfilter_zi(b, a),
                               rtol=1e-13, atol=1e-15)
    check_grads(lambda p, q: tf.signal.lfilter_zi(p, q), [b, a])
    check_grads(lambda p, q: tf.signal.lfilter_zi(p, q), [b * (1 + 0.5j), a + 0.1j], order=1)
    # the steady state: a step filtered from it stays at its final value from the start
    zi = tf.signal.lfilter_zi(b, a).numpy()
    y, _ = tf.signal.lfilter(b, a, np.ones(6), zi=zi)
    np.testing.assert_allclose(y.numpy(), np.full(6, b.sum() / a.sum()), rtol=1e-12)


def test_lfilter_adjoint_runs_backwards():
    """x̄ = Hᵀȳ with H the causal filter matrix: its transpose is anti-causal (the first
    input sample's cotangent sees every output, the last one only the last output)."""
    b, a = np.array([1.0, 0.5]), np.array([1.0, -0.8])
    x = np.zeros(6)
    h = np.array([ss.lfilter(b, a, np.eye(6)[j]) for j in range(6)]).T   # columns: impulses
    _, pullback = tf.vjp(lambda s: tf.signal.lfilter(b, a, s), x)
    w = np.random.default_rng(0).standard_normal(6)
    np.testing.assert_allclose(pullback(w)[0].numpy(), h.T @ w, rtol=1e-12, atol=1e-14)


def test_lfilter_lagged_sums_plain_and_recorded_agree():
    """The b/a cotangents' lagged sums: a plain backward takes k dot products (few lags),
    a recorded one (create_graph) the FFT convolution; both the same numbers, complex,
    along a middle axis, and for more lags than samples."""
    from tenferro.signal import _DIRECT_LAGS, _lagged
    rng = np.random.default_rng(7)
    for shape, axis, k in (((3, 9, 2), 1, 4), ((5,), 0, 8), ((4, 40), 1, _DIRECT_LAGS)):
        v = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        u = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        plain = _lagged(v, u, k, axis)
        recorded = _lagged(tf.tensor(v), tf.tensor(u), k, axis)
        assert isinstance(plain, np.ndarray) and isinstance(recorded, tf.Tensor)
        np.testing.assert_allclose(plain, recorded.numpy(), rtol=1e-12, atol=1e-12)
        vm, um = np.moveaxis(v, axis, 0), np.moveaxis(u, axis, 0)
        n = vm.shape[0]
        ref = [np.sum(vm[j:] * np.conj(um[:n - j])) if j < n else 0 for j in range(k)]
        np.testing.assert_allclose(plain, ref, rtol=1e-12, atol=1e-12)


def test_errors():
    a = tf.tensor(np.ones(4), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="same number of dimensions"):
        tf.signal.convolve(a, np.ones((2, 2)))
    with pytest.raises(tf.ShapeError, match="mode must be"):
        tf.signal.correlate(a, a, mode="circular")
    with pytest.raises(tf.ShapeError, match="method must be"):
        tf.signal.convolve(a, a, method="winograd")
    with pytest.raises(tf.ShapeError, match="at least as large"):
        tf.signal.convolve(np.ones((4, 2)), np.ones((2, 4)), "valid")
    with pytest.raises(tf.ShapeError, match="0-d"):
        tf.signal.convolve(np.float64(1.0), np.float64(2.0))
    with pytest.raises(tf.ShapeError, match="empty"):
        tf.signal.fftconvolve(a, np.ones(0))
    with pytest.raises(tf.ShapeError, match="neither match nor are 1"):
        tf.signal.fftconvolve(np.ones((3, 4)), np.ones((2, 4)), axes=1)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        tf.signal.oaconvolve(a, a, axes=1)
    with pytest.raises(tf.ShapeError, match="a\\[0\\] must be nonzero"):
        tf.signal.lfilter([1.0], [0.0, 1.0], a)
    with pytest.raises(tf.ShapeError, match="1-D coefficient"):
        tf.signal.lfilter(np.ones((2, 2)), [1.0], a)
    with pytest.raises(tf.ShapeError, match=r"zi must have shape \(1,\)"):
        tf.signal.lfilter([1.0, 0.5], [1.0], a, zi=np.zeros(2))
    with pytest.raises(tf.ShapeError, match=r"zi must have shape \(2, 4\)"):
        tf.signal.lfilter([1.0, 0.5, 0.2], [1.0], np.ones((3, 4)), axis=0, zi=np.zeros((2, 2)))
    with pytest.raises(tf.ShapeError, match="1-D coefficient"):
        tf.signal.lfilter_zi(np.ones((2, 2)), [1.0])
    with pytest.raises(tf.ShapeError, match="a\\[0\\] must be nonzero"):
        tf.signal.lfilter_zi([1.0], [0.0, 1.0])
    with pytest.raises(tf.LinAlgError, match="singular"):
        tf.signal.lfilter_zi([1.0, 0.0], [1.0, -1.0])      # a pole at z = 1: no steady state
