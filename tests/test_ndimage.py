"""tf.ndimage: values against scipy.ndimage for every boundary mode, the VJP equal to the
transpose of SciPy's filter matrix (the folding of the extension's cotangent), derivatives
(reverse, forward, second order; real and complex) in the input, the weights and the
coordinates, precision, errors."""
import numpy as np
import pytest
import scipy.ndimage as nd

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]
SHAPES = [(7,), (5, 6), (1, 4), (2, 3, 4)]


def _filters(rng, ndim):
    """(id, tf function, SciPy function) of the filters, with their parameters."""
    w = rng.standard_normal((3,) * ndim)
    w2 = rng.standard_normal((2,) * ndim)
    yield "uniform3", lambda m: (lambda a: tf.ndimage.uniform_filter(a, 3, mode=m, cval=0.5),
                                 lambda a: nd.uniform_filter(a, 3, mode=m, cval=0.5))
    yield "uniform-even-origin", lambda m: (
        lambda a: tf.ndimage.uniform_filter(a, 4, mode=m, origin=-1),
        lambda a: nd.uniform_filter(a, 4, mode=m, origin=-1))
    yield "uniform-big", lambda m: (lambda a: tf.ndimage.uniform_filter(a, 9, mode=m),
                                    lambda a: nd.uniform_filter(a, 9, mode=m))
    for sigma, order in ((1.0, 0), (2.5, 0), (0.8, 1), (1.3, 2)):
        yield f"gauss{sigma}-{order}", lambda m, s=sigma, o=order: (
            lambda a: tf.ndimage.gaussian_filter(a, s, order=o, mode=m, cval=-0.3),
            lambda a: nd.gaussian_filter(a, s, order=o, mode=m, cval=-0.3))
    yield "gauss-truncate", lambda m: (
        lambda a: tf.ndimage.gaussian_filter(a, 1.5, mode=m, truncate=1.2),
        lambda a: nd.gaussian_filter(a, 1.5, mode=m, truncate=1.2))
    # 1-D constant weights: the separable op (SciPy's correlate1d and its adjoint)
    w1 = list(rng.standard_normal(4))
    yield "correlate1d-even", lambda m: (
        lambda a: tf.ndimage.correlate1d(a, w1, axis=0, mode=m, cval=0.7, origin=1),
        lambda a: nd.correlate1d(a, w1, axis=0, mode=m, cval=0.7, origin=1))
    yield "convolve1d-big", lambda m: (
        lambda a: tf.ndimage.convolve1d(a, np.arange(1.0, 12.0), mode=m, origin=-2),
        lambda a: nd.convolve1d(a, np.arange(1.0, 12.0), mode=m, origin=-2))
    yield "convolve1d-even", lambda m: (
        lambda a: tf.ndimage.convolve1d(a, w1, mode=m),
        lambda a: nd.convolve1d(a, w1, mode=m))
    yield "correlate", lambda m: (lambda a: tf.ndimage.correlate(a, w, mode=m, cval=0.2),
                                  lambda a: nd.correlate(a, w, mode=m, cval=0.2))
    yield "convolve-even", lambda m: (lambda a: tf.ndimage.convolve(a, w2, mode=m),
                                      lambda a: nd.convolve(a, w2, mode=m))
    yield "correlate-origin", lambda m: (
        lambda a: tf.ndimage.correlate(a, w2, mode=m, origin=-1),
        lambda a: nd.correlate(a, w2, mode=m, origin=-1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_values(shape, mode):
    rng = np.random.default_rng(len(shape))
    for cid, make in _filters(rng, len(shape)):
        ours, theirs = make(mode)
        for dtype in (np.float64, np.complex128):
            x = random_array(shape, dtype, rng)
            expected = theirs(x)
            got = ours(x)
            assert got.shape == expected.shape, cid
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{cid} {dtype}")


def _matrix(fn, shape, dtype=np.float64):
    """The dense matrix of SciPy's (linear, up to the constant cval) filter."""
    n = int(np.prod(shape))
    offset = fn(np.zeros(shape, dtype)).ravel()
    return np.stack([fn(np.eye(n, dtype=dtype)[j].reshape(shape)).ravel() - offset
                     for j in range(n)], axis=1)


@pytest.mark.parametrize("mode", MODES)
def test_vjp_is_the_transposed_filter(mode):
    """The VJP in the input is Fᵀw, F SciPy's filter matrix: for reflect, mirror and
    nearest Fᵀ ≠ F (the extension reads edge entries twice; its adjoint folds them back),
    and the test sees the difference; also ⟨F x, w⟩ = ⟨x, F* w⟩."""
    rng = np.random.default_rng(5)
    for shape in ((6,), (4, 5)):
        for cid, make in _filters(rng, len(shape)):
            ours, theirs = make(mode)
            f = _matrix(theirs, shape)
            x = rng.standard_normal(shape)
            y, pullback = tf.vjp(ours, x)
            w = rng.standard_normal(y.shape)
            (g,) = pullback(w)
            np.testing.assert_allclose(g.numpy().ravel(), f.T @ w.ravel(), rtol=1e-12,
                                       atol=1e-12, err_msg=f"{cid} {shape}")
            lin = y.numpy() - theirs(np.zeros(shape))
            assert abs(np.vdot(w, lin) - np.vdot(g.numpy(), x)) < 1e-11 * np.abs(w).sum()
    if mode in ("reflect", "mirror", "nearest"):   # not self-adjoint: the check has teeth
        f = _matrix(lambda a: nd.correlate1d(a, [1.0, 2.0, 4.0], mode=mode), (6,))
        g = _matrix(lambda a: nd.correlate1d(a, [4.0, 2.0, 1.0], mode=mode), (6,))
        assert not np.allclose(f.T, g)   # Fᵀ is not the filter with the reversed kernel


@pytest.mark.parametrize("mode", MODES)
def test_grads(mode):
    rng = np.random.default_rng(11)
    x = random_array((4, 5), np.float64, rng)
    z = random_array((5,), np.complex128, rng)
    for a in (x, z):
        check_grads(lambda t: tf.ndimage.uniform_filter(t, 3, mode=mode), [a])
        check_grads(lambda t: tf.ndimage.gaussian_filter(t, 1.1, mode=mode, cval=0.4), [a])
        check_grads(lambda t: tf.ndimage.gaussian_filter(t, 0.9, order=1, mode=mode), [a])
        check_grads(lambda t: tf.ndimage.correlate1d(t, [0.5, -1.0, 2.0, 0.3], axis=0,
                                                     mode=mode, cval=0.2, origin=1), [a])
        check_grads(lambda t: tf.ndimage.convolve1d(t, [0.5, -1.0, 2.0], mode=mode), [a])
    # the weights are differentiable too (real and complex)
    w = random_array((2, 3), np.float64, rng)
    check_grads(lambda t, u: tf.ndimage.correlate(t, u, mode=mode), [x, w])
    check_grads(lambda t, u: tf.ndimage.convolve(t, u, mode=mode, cval=1.5), [x, w])
    wz = random_array((3,), np.complex128, rng)
    check_grads(lambda t, u: tf.ndimage.correlate(t, u, mode=mode), [z, wz])
    check_grads(lambda t, u: tf.ndimage.convolve1d(t, u, mode=mode), [z, wz])


def test_separable_filters_are_scipys_primal():
    """uniform/gaussian filters and correlate1d with constant weights run SciPy's compiled
    correlate1d (one op): the values are SciPy's to the bit, with or without grad."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((9, 8))
    for mode in MODES:
        got = tf.ndimage.gaussian_filter(tf.tensor(x, requires_grad=True), 1.7, mode=mode,
                                         cval=0.3)
        assert np.array_equal(got.numpy(), nd.gaussian_filter(x, 1.7, mode=mode, cval=0.3))
        got = tf.ndimage.correlate1d(x, [1.0, 2.0, -0.5], axis=1, mode=mode)
        assert np.array_equal(got.numpy(), nd.correlate1d(x, [1.0, 2.0, -0.5], axis=1,
                                                          mode=mode))


def test_axes_and_per_axis_parameters():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5, 6))
    pairs = [
        (tf.ndimage.uniform_filter(x, (2, 3), axes=(2, 0)),
         nd.uniform_filter(x, (2, 3), axes=(2, 0))),
        (tf.ndimage.gaussian_filter(x, (0.0, 1.0, 2.0), mode=("wrap", "nearest", "mirror")),
         nd.gaussian_filter(x, (0.0, 1.0, 2.0), mode=("wrap", "nearest", "mirror"))),
        (tf.ndimage.gaussian_filter(x, 1.0, radius=2, axes=1),
         nd.gaussian_filter(x, 1.0, radius=2, axes=1)),
        (tf.ndimage.correlate(x, np.arange(6.0).reshape(3, 2), axes=(2, 0)),
         nd.correlate(x, np.arange(6.0).reshape(3, 2), axes=(2, 0))),
        (tf.ndimage.uniform_filter1d(x, 4, axis=1), nd.uniform_filter1d(x, 4, axis=1)),
        (tf.ndimage.gaussian_filter1d(x, 1.5, axis=0, order=1),
         nd.gaussian_filter1d(x, 1.5, axis=0, order=1)),
        (tf.ndimage.correlate1d(x, [1.0, -2.0, 0.5], axis=0, mode="constant"),
         nd.correlate1d(x, [1.0, -2.0, 0.5], axis=0, mode="constant")),
        (tf.ndimage.convolve1d(x, [1.0, -2.0], axis=2), nd.convolve1d(x, [1.0, -2.0], axis=2)),
    ]
    for got, expected in pairs:
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)


MAP_MODES = ["constant", "grid-constant", "nearest", "reflect", "mirror", "grid-wrap",
             "grid-mirror"]


@pytest.mark.parametrize("mode", MAP_MODES)
def test_map_coordinates(mode):
    rng = np.random.default_rng(4)
    for shape in ((5, 6), (7,), (1, 4), (3, 2, 4)):
        x = rng.standard_normal(shape)
        c = rng.uniform(-2.5, 8.5, (len(shape), 30))
        c[:, :4] = np.round(c[:, :4])   # grid points too
        expected = nd.map_coordinates(x, c, order=1, mode=mode, cval=0.4)
        got = tf.ndimage.map_coordinates(x, c, order=1, mode=mode, cval=0.4)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
        # linear in the input: the VJP is the transpose of SciPy's interpolation matrix
        f = _matrix(lambda a: nd.map_coordinates(a, c, order=1, mode=mode, cval=0.4), shape)
        _, pullback = tf.vjp(lambda a: tf.ndimage.map_coordinates(a, c, order=1, mode=mode,
                                                                  cval=0.4), x)
        w = rng.standard_normal(30)
        np.testing.assert_allclose(pullback(w)[0].numpy().ravel(), f.T @ w, atol=1e-12)
    # derivatives in the input and the coordinates, away from cell boundaries (where the
    # interpolant has kinks), real and complex input
    x = random_array((4, 5), np.complex128, rng)
    c = np.floor(rng.uniform(-1.0, 5.0, (2, 3, 2))) + rng.uniform(0.2, 0.8, (2, 3, 2))
    if mode == "constant":   # inside, where SciPy's constant mode is differentiable
        c = np.clip(c, 0.2, 2.8)
    check_grads(lambda a, b: tf.ndimage.map_coordinates(a, b, order=1, mode=mode), [x, c])


def test_map_coordinates_slope_at_a_point():
    """The derivative in a coordinate is the slope of its cell (independent of SciPy)."""
    x = np.array([0.0, 1.0, 4.0, 9.0])
    c = tf.tensor([[1.25, 2.5]], requires_grad=True)
    y = tf.ndimage.map_coordinates(x, c, order=1)
    (g,) = tf.grad([y.sum()], [c])
    np.testing.assert_allclose(g.numpy(), [[3.0, 5.0]])


def test_low_precision():
    x = np.random.default_rng(0).standard_normal((5, 6))
    check_low_precision(lambda a: tf.ndimage.gaussian_filter(a, 1.0), [x])
    check_low_precision(lambda a: tf.ndimage.uniform_filter(a, 3, mode="mirror"), [x])
    check_low_precision(lambda a, w: tf.ndimage.correlate(a, w), [x, np.ones((2, 2))])
    assert tf.ndimage.gaussian_filter(x.astype(np.float32), 1.0).dtype == np.float32
    assert tf.ndimage.uniform_filter(np.arange(5), 3).dtype == np.float64


def test_errors():
    x = tf.tensor(np.ones((4, 5)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="mode must be one of"):
        tf.ndimage.uniform_filter(x, 3, mode="periodic")
    with pytest.raises(tf.ShapeError, match="sigma must be a finite number >= 0"):
        tf.ndimage.gaussian_filter(x, -1.0)
    with pytest.raises(tf.ShapeError, match="order must be >= 0"):
        tf.ndimage.gaussian_filter(x, 1.0, order=-1)
    with pytest.raises(tf.ShapeError, match="size must be >= 1"):
        tf.ndimage.uniform_filter(x, 0)
    with pytest.raises(tf.ShapeError, match="one per filtered axis"):
        tf.ndimage.uniform_filter(x, (2, 3, 4))
    with pytest.raises(tf.ShapeError, match="weights of dimension 1"):
        tf.ndimage.correlate(x, np.ones(3))
    with pytest.raises(tf.ShapeError, match="origin 2 is invalid"):
        tf.ndimage.correlate(x, np.ones((3, 3)), origin=2)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        tf.ndimage.gaussian_filter(x, 1.0, axes=2)
    with pytest.raises(tf.ShapeError, match="0-d"):
        tf.ndimage.uniform_filter(np.float64(1.0))
    with pytest.raises(tf.UnsupportedADError, match="only order=1"):
        tf.ndimage.map_coordinates(x, np.zeros((2, 3)), order=3)
    with pytest.raises(tf.ShapeError, match="grid-wrap"):
        tf.ndimage.map_coordinates(x, np.zeros((2, 3)), mode="wrap")
    with pytest.raises(tf.ShapeError, match=r"shape \(input.ndim, ...\)"):
        tf.ndimage.map_coordinates(x, np.zeros((3, 3)))
    with pytest.raises(tf.UnsupportedADError, match="output="):
        tf.ndimage.correlate(x, np.ones((2, 2)), output=np.empty((4, 5)))
