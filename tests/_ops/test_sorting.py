"""sort (differentiable gather by the sorting permutation) and argsort: values against
NumPy for every dtype family, stability (also descending), NaN order, derivatives of every
order, NumPy dispatch, errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tenferro as tf
from tenferro._ops import sorting as S
from tenferro.testing import check_grads, check_low_precision, random_array

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64]


def _stable_desc_order(row):
    """Indices sorting ``row`` descending, equal entries in their original order."""
    return sorted(range(len(row)), key=lambda i: (-row[i], i))


# ---- values -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32] + INT_DTYPES + [np.bool_])
@pytest.mark.parametrize("shape,axis", [((7,), -1), ((7,), 0), ((3, 5), 0), ((3, 5), 1),
                                        ((2, 3, 4), 1), ((2, 0, 3), 1), ((0,), 0)])
def test_values_match_numpy(dtype, shape, axis):
    rng = np.random.default_rng(0)
    x = (rng.integers(0, 4, shape) if dtype != np.float64 else rng.standard_normal(shape))
    x = x.astype(dtype)
    for t in (tf.tensor(x), tf.tensor(x, requires_grad=x.dtype.kind == "f")):
        y = tf.sort(t, axis=axis)
        assert y.dtype == x.dtype and y.shape == x.shape
        np.testing.assert_array_equal(y.numpy(), np.sort(x, axis=axis))
        i = tf.argsort(t, axis=axis)
        assert i.dtype == np.int64 and not i.requires_grad
        np.testing.assert_array_equal(i.numpy(), np.argsort(x, axis=axis, kind="stable"))
        yd = tf.sort(t, axis=axis, descending=True)
        np.testing.assert_array_equal(yd.numpy(), np.flip(np.sort(x, axis=axis), axis))


def test_descending_is_stable():
    x = np.array([1.0, 3.0, 1.0, 2.0, 3.0, 1.0])
    want = _stable_desc_order(x)            # [1, 4, 3, 0, 2, 5], not reversed ascending
    assert want == [1, 4, 3, 0, 2, 5]
    np.testing.assert_array_equal(tf.argsort(x, descending=True).numpy(), want)
    np.testing.assert_array_equal(tf.argsort(x, descending=True, stable=False).numpy(), want)
    # stacked rows, along the first axis
    m = np.array([[2, 0], [1, 0], [2, 1], [1, 1]], dtype=np.int8)
    np.testing.assert_array_equal(tf.argsort(m, axis=0, descending=True).numpy(),
                                  [[0, 2], [2, 3], [1, 0], [3, 1]])


def test_signed_zeros_keep_their_order():
    x = np.array([0.0, -0.0, 1.0, -0.0, 0.0])
    for desc in (False, True):
        y = tf.sort(x, descending=desc).numpy()
        zeros = np.signbit(y[y == 0])
        np.testing.assert_array_equal(zeros, [False, True, True, False])


def test_nan_last_ascending_first_descending():
    x = np.array([2.0, np.nan, -1.0, np.nan, 0.5])
    np.testing.assert_array_equal(tf.sort(x).numpy(), np.sort(x))
    np.testing.assert_array_equal(tf.argsort(x).numpy(), [2, 4, 0, 1, 3])
    np.testing.assert_array_equal(tf.argsort(x, descending=True).numpy(), [1, 3, 0, 4, 2])
    y = tf.sort(tf.tensor(x, requires_grad=True), descending=True).numpy()
    assert np.isnan(y[:2]).all()
    np.testing.assert_array_equal(y[2:], [2.0, 0.5, -1.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=0, max_size=12), st.booleans())
def test_argsort_matches_python_sorted(vals, desc):
    x = np.array(vals, dtype=np.int64)
    want = _stable_desc_order(vals) if desc else sorted(range(len(vals)), key=vals.__getitem__)
    np.testing.assert_array_equal(tf.argsort(x, descending=desc).numpy(),
                                  np.array(want, dtype=np.int64))
    np.testing.assert_array_equal(tf.sort(x, descending=desc).numpy(),
                                  np.array([vals[i] for i in want], dtype=np.int64))


# ---- derivatives ------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axis", [((6,), -1), ((4, 5), 0), ((4, 5), 1),
                                        ((2, 3, 4), 1), ((1,), 0)])
@pytest.mark.parametrize("descending", [False, True])
def test_check_grads(shape, axis, descending):
    x = random_array(shape, np.float64, rng=1)
    check_grads(lambda a: tf.sort(a, axis=axis, descending=descending), [x], order=2)
    # inside a larger graph (the sorted values feed a nonlinear function)
    check_grads(lambda a: tf.sin(tf.sort(a * a, axis=axis, descending=descending)), [x],
                order=2)


def test_gradient_goes_to_source_entry_with_ties():
    # stable: the k-th equal output entry came from the k-th equal input entry
    x = tf.tensor([2.0, 1.0, 2.0, 0.0], requires_grad=True)
    g, = tf.grad([tf.sort(x)], [x], [np.array([10.0, 20.0, 30.0, 40.0])])
    np.testing.assert_array_equal(g.numpy(), [30.0, 20.0, 40.0, 10.0])
    g, = tf.grad([tf.sort(x, descending=True)], [x], [np.array([10.0, 20.0, 30.0, 40.0])])
    np.testing.assert_array_equal(g.numpy(), [10.0, 30.0, 20.0, 40.0])
    _, t = tf.jvp(lambda a: tf.sort(a, descending=True), [tf.tensor([2.0, 1.0, 2.0, 0.0])],
                  [tf.tensor([1.0, 2.0, 3.0, 4.0])])
    np.testing.assert_array_equal(t.numpy(), [1.0, 3.0, 2.0, 4.0])


def test_second_derivative_is_zero():
    x = tf.tensor([0.3, -1.0, 2.0], requires_grad=True)
    y = tf.sort(x)
    g, = tf.grad([tf.sum(y * tf.tensor([1.0, 2.0, 3.0]))], [x], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [2.0, 1.0, 3.0])
    h, = tf.grad([tf.sum(g * g)], [x])
    assert h is None or np.array_equal(h.numpy(), np.zeros(3))


def test_low_precision():
    x = random_array((3, 6), np.float64, rng=2)
    check_low_precision(lambda a: tf.sort(a, axis=1), [x])
    check_low_precision(lambda a: tf.sort(a, axis=0, descending=True), [x])


def test_constant_input_records_nothing(monkeypatch):
    from tenferro.testing import record_calls
    calls = record_calls(monkeypatch, S, "apply1")
    y = tf.sort(np.array([3.0, 1.0]))
    assert not y.requires_grad and calls == []
    y = tf.sort(tf.tensor([3.0, 1.0], requires_grad=True))
    assert y.requires_grad and len(calls) == 1


# ---- NumPy spellings ----------------------------------------------------------------------

def test_numpy_sort_dispatches_to_differentiable_sort():
    x = tf.tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]], requires_grad=True)
    y = np.sort(x)
    assert isinstance(y, tf.Tensor) and y.requires_grad
    np.testing.assert_array_equal(y.numpy(), np.sort(x.numpy()))
    y0 = np.sort(x, axis=0, kind="quicksort")
    np.testing.assert_array_equal(y0.numpy(), np.sort(x.numpy(), axis=0))
    yf = np.sort(x, axis=None)
    assert yf.shape == (6,)
    g, = tf.grad([yf], [x], [np.arange(6.0)])
    np.testing.assert_array_equal(g.numpy(), [[4.0, 2.0, 3.0], [1.0, 0.0, 5.0]])
    with pytest.raises(TypeError, match="order="):
        np.sort(x, order="a")


def test_numpy_argsort_returns_numpy_result():
    x = tf.tensor([3.0, 1.0, 2.0], requires_grad=True)
    i = np.argsort(x)
    assert type(i) is np.ndarray
    np.testing.assert_array_equal(i, [1, 2, 0])
    m = x.argsort()
    assert isinstance(m, tf.Tensor) and m.dtype == np.int64
    np.testing.assert_array_equal(m.numpy(), [1, 2, 0])
    np.testing.assert_array_equal(x.argsort(descending=True).numpy(), [0, 2, 1])
    np.testing.assert_array_equal(tf.tensor([[2, 1], [0, 3]]).argsort(axis=None).numpy(),
                                  [2, 1, 0, 3])


# ---- errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [tf.sort, tf.argsort])
def test_complex_raises(fn):
    x = tf.tensor(np.array([1 + 1j, 2 - 1j]), requires_grad=True)
    with pytest.raises(tf.DTypeError, match="not ordered"):
        fn(x)
    with pytest.raises(TypeError):            # DTypeError is a TypeError
        fn(x)
    assert x.grad is None


@pytest.mark.parametrize("fn", [tf.sort, tf.argsort])
def test_bad_axis_raises(fn, monkeypatch):
    from tenferro.testing import record_calls
    calls = record_calls(monkeypatch, S, "apply1")
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        fn(x, axis=2)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        fn(tf.tensor(1.0), axis=-1)
    with pytest.raises(tf.ShapeError, match="must be an int"):
        fn(x, axis=(0, 1))
    assert calls == []
