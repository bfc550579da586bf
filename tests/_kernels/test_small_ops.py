"""small_ops.pyx makes NumPy's own BLAS call for small real products: the same bits as
np.matmul (its twin) for every operand layout it covers, None for what it does not."""
import numpy as np
import pytest

from tenferro._kernels import small_ops, small_ops_twin

SHAPES = [((4, 4), (4, 4)), ((2, 4), (4, 4)), ((4, 4), (4, 2)), ((1, 1), (1, 5)),
          ((5, 1), (1, 1)), ((16, 32), (32, 32)), ((3, 5), (5, 7)), ((4, 4), (4,)),
          ((2, 4), (4,)), ((4,), (4, 4)), ((4,), (4, 2)), ((4,), (4,)), ((1,), (1,))]


def _layout(x, order):
    return np.asfortranarray(x) if order == "F" and x.ndim == 2 else x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("orders", ["CC", "CF", "FC", "FF"])
@pytest.mark.parametrize("shapes", SHAPES)
def test_same_bits_as_numpy(shapes, orders, dtype):
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = _layout(rng.standard_normal(shapes[0]).astype(dtype), orders[0])
        b = _layout(rng.standard_normal(shapes[1]).astype(dtype), orders[1])
        got = small_ops.matmul(a, b)
        want = small_ops_twin.matmul(a, b)
        assert got is not None
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous


def test_views_and_strided_vectors():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 4))
    v = rng.standard_normal((4, 3))[:, 1]              # a column: stride 3 entries
    for x, y in [(a.T, v), (v, a.T), (a, a[1]), (a[:, 2], v)]:
        got = small_ops.matmul(x, y)
        assert got is not None
        np.testing.assert_array_equal(got, np.matmul(x, y))


def test_declines_what_it_does_not_cover():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 4))
    cases = [
        (a, a.T),                                    # one buffer: NumPy may use ?syrk
        (a, a),
        (rng.standard_normal((2, 4, 4)), a),          # a batch
        (a + 1j, a),                                  # complex
        (a.astype(np.float32), a),                    # mixed dtypes
        (a[:, ::2], rng.standard_normal((2, 3))),     # strided matrix
        (a[::-1], a.copy()),                          # negative stride
        (np.zeros((0, 4)), a),                        # empty
        (a.astype(np.int64), a.astype(np.int64)),     # integers
        (a.tolist(), a),                              # not ndarrays
        (rng.standard_normal(4)[::-1], rng.standard_normal(4)),   # negative vector stride
        (a, rng.standard_normal(3)),                  # mismatched sides (NumPy raises)
        (a.astype(">f8"), a.astype(">f8")),           # byte-swapped
    ]
    for x, y in cases:
        assert small_ops.matmul(x, y) is None, (np.shape(x), np.shape(y))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (1,), (4,), (2, 4), (4, 4), (32, 32)])
def test_add_and_subtract_same_bits_as_numpy(shape, dtype):
    rng = np.random.default_rng(3)
    a = np.asarray(rng.standard_normal(shape)).astype(dtype)
    b = np.asarray(rng.standard_normal(shape)).astype(dtype)
    for name in ("add", "subtract"):
        got = getattr(small_ops, name)(a, b)
        want = getattr(small_ops_twin, name)(a, b)
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    # special values: IEEE, as NumPy
    big = np.finfo(dtype).max
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, big], dtype)
    y = np.array([-np.inf, -np.inf, 1.0, -0.0, -0.0, big], dtype)
    for name in ("add", "subtract"):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(getattr(small_ops, name)(x, y),
                                          getattr(np, name)(x, y))


def test_add_and_subtract_decline():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 4))
    for x, y in [(a, a[0]),                        # broadcasting
                 (a, a.T),                         # not C-contiguous
                 (a, a.astype(np.float32)),        # mixed dtypes
                 (a + 1j, a + 1j),                 # complex
                 (np.ones(2000), np.ones(2000)),   # large: NumPy's SIMD loop
                 (a.tolist(), a)]:
        assert small_ops.add(x, y) is None and small_ops.subtract(x, y) is None


def test_cotangent_sums_in_place_and_out_of_place():
    """The tape's small sums (tape.pyx _add) equal NumPy's, in place when it owns the
    accumulator."""
    import tenferro as tf
    from tenferro._kernels import tape
    before = tape.in_place_adds()
    x = tf.tensor(rng_vals := np.random.default_rng(5).standard_normal(4), requires_grad=True)
    y = x * 2.0 + x * 3.0 + x.exp() + x
    (g,) = tf.grad([y.sum()], [x])
    np.testing.assert_allclose(g.numpy(), 6.0 + np.exp(rng_vals), rtol=1e-15)
    assert tape.in_place_adds() > before


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (4,), (2, 4), (32, 32)])
def test_negative_and_scaled_same_bits_as_numpy(shape, dtype):
    rng = np.random.default_rng(7)
    g = np.asarray(rng.standard_normal(shape)).astype(dtype)
    c = np.asarray(1.7, dtype)
    for got, want in [(small_ops.negative(g), small_ops_twin.negative(g)),
                      (small_ops.scaled(g, c), small_ops_twin.scaled(g, c))]:
        assert got is not None and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert np.signbit(small_ops.negative(np.zeros(2, dtype))).all()      # −0, as NumPy
    # declined: another dtype of the scalar, a Python float, large, non-contiguous
    assert small_ops.scaled(g, np.asarray(1.7, np.float16)) is None
    assert small_ops.scaled(g, 1.7) is None
    assert small_ops.negative(np.ones(2000, dtype)) is None
    assert small_ops.negative(np.ones((4, 4), dtype).T[::2]) is None
