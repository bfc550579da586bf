"""argmax, argmin, count_nonzero, nonzero, searchsorted (int64 results without a gradient),
where with Python scalars, NumPy's non-differentiable spellings, and every error path."""
import numpy as np
import pytest

import tenferro as tf
from tenferro._ops import searching as SE
from tenferro.testing import record_calls

REAL_DTYPES = [np.float64, np.float32, np.int8, np.int16, np.int32, np.int64, np.uint8,
               np.uint16, np.uint32, np.uint64, np.bool_]
ALL_DTYPES = REAL_DTYPES + [np.complex128, np.complex64]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(0, 2, shape)
    return x.astype(dtype)


def _is_index(t, shape):
    assert isinstance(t, tf.Tensor) and t.dtype == np.int64 and not t.requires_grad
    assert t.shape == shape


# ---- argmax / argmin --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL_DTYPES)
@pytest.mark.parametrize("shape,axis", [((5,), None), ((5,), 0), ((5,), -1), ((3, 4), None),
                                        ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin_match_numpy(dtype, shape, axis, keepdims):
    x = _data(shape, dtype)
    for name in ("argmax", "argmin"):
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        got = getattr(tf, name)(x, axis=axis, keepdims=keepdims)
        _is_index(got, np.shape(want))
        np.testing.assert_array_equal(got.numpy(), want)


def test_argmax_first_occurrence_and_nan():
    x = tf.tensor([1.0, 3.0, 3.0, -2.0, -2.0], requires_grad=True)
    assert tf.argmax(x).item() == 1 and tf.argmin(x).item() == 3
    y = tf.tensor([[1.0, np.nan, 5.0, np.nan], [0.0, 2.0, 2.0, -1.0]])
    np.testing.assert_array_equal(tf.argmax(y, axis=1).numpy(), [1, 1])
    np.testing.assert_array_equal(tf.argmin(y, axis=1).numpy(), [1, 3])


def test_arg_methods_and_numpy_functions():
    x = tf.tensor([[1.0, 4.0], [3.0, 2.0]], requires_grad=True)
    np.testing.assert_array_equal(x.argmax(1).numpy(), [1, 0])
    np.testing.assert_array_equal(x.argmin(axis=0, keepdims=True).numpy(), [[0, 1]])
    assert x.argmax().item() == 1
    # NumPy's own functions run on the payload (also for a tensor that requires grad)
    for fn in (np.argmax, np.argmin):
        got = fn(x, axis=0)
        assert type(got) is np.ndarray
        np.testing.assert_array_equal(got, fn(x.numpy(), axis=0))
    with pytest.raises(TypeError, match="out="):
        x.argmax(0, np.empty(2, np.int64))


# ---- count_nonzero / nonzero --------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (-1, 0, 1), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_count_nonzero_matches_numpy(dtype, axis, keepdims):
    x = _data((2, 3, 4), dtype, seed=1)
    want = np.count_nonzero(x, axis=axis, keepdims=keepdims)
    got = tf.count_nonzero(x, axis=axis, keepdims=keepdims)
    _is_index(got, np.shape(want))
    np.testing.assert_array_equal(got.numpy(), want)


def test_count_nonzero_complex_nan_and_bool():
    assert tf.count_nonzero(np.array([0j, 1j, 1 + 0j, 0j])).item() == 2
    assert tf.count_nonzero(np.array([0.0, np.nan, -0.0, np.inf])).item() == 2
    assert tf.count_nonzero(np.array([True, False, True])).item() == 2
    assert tf.count_nonzero(np.zeros((0, 3))).item() == 0


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 2, 3), (0, 3)])
def test_nonzero_matches_numpy(dtype, shape):
    x = _data(shape, dtype, seed=2)
    got = tf.nonzero(x)
    want = np.nonzero(x)
    assert isinstance(got, tuple) and len(got) == len(shape)
    for g, w in zip(got, want):
        _is_index(g, w.shape)
        np.testing.assert_array_equal(g.numpy(), w)


def test_nonzero_method_and_numpy_functions():
    x = tf.tensor([[0.0, 1.5], [2.0, 0.0]], requires_grad=True)
    rows, cols = x.nonzero()
    np.testing.assert_array_equal(rows.numpy(), [0, 1])
    np.testing.assert_array_equal(cols.numpy(), [1, 0])
    for fn in (np.nonzero, np.count_nonzero, np.argwhere, np.flatnonzero):
        got = fn(x)
        want = fn(x.numpy())
        if isinstance(want, tuple):
            assert all(type(g) is np.ndarray for g in got)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
        else:
            assert not isinstance(got, tf.Tensor)
            np.testing.assert_array_equal(got, want)


# ---- searchsorted -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64, np.uint16])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(dtype, side):
    x1 = np.array([0, 1, 1, 2, 5, 7], dtype=dtype)
    x2 = np.array([[0, 1, 3], [7, 8, 1]], dtype=dtype)
    got = tf.searchsorted(x1, x2, side=side)
    _is_index(got, x2.shape)
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(x1, x2, side=side))
    # the index condition of the standard
    for v, i in zip(x2.ravel(), got.numpy().ravel()):
        if side == "left":
            assert (i == 0 or x1[i - 1] < v) and (i == len(x1) or v <= x1[i])
        else:
            assert (i == 0 or x1[i - 1] <= v) and (i == len(x1) or v < x1[i])


def test_searchsorted_sorter_scalar_and_nan():
    x1 = tf.tensor([5.0, 1.0, 3.0], requires_grad=True)
    sorter = tf.argsort(x1)
    got = tf.searchsorted(x1, tf.tensor([0.0, 3.0, 4.0, 9.0]), sorter=sorter)
    np.testing.assert_array_equal(got.numpy(), [0, 1, 2, 3])
    s = tf.searchsorted(tf.tensor([1, 2, 3]), 2.5)
    _is_index(s, ())
    assert s.item() == 2
    # NaN sorts last, consistently with tf.sort
    srt = tf.sort(tf.tensor([np.nan, 1.0, 2.0]))
    np.testing.assert_array_equal(
        tf.searchsorted(srt, tf.tensor([np.nan, 3.0, 0.0])).numpy(), [2, 2, 0])
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    np.testing.assert_array_equal(x.searchsorted(tf.tensor([1.5])).numpy(), [1])
    got = np.searchsorted(x, 1.5)
    assert not isinstance(got, tf.Tensor) and got == 1


# ---- where with Python scalars (the 2024.12 signature) ----------------------------------

def test_where_takes_python_scalars():
    c = tf.tensor([True, False, True])
    f32 = tf.tensor([1.0, 2.0, 3.0], dtype=tf.float32)
    y = tf.where(c, f32, 0.5)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), [1.0, 0.5, 3.0])
    y = tf.where(c, 7, tf.tensor([1, 2, 3], dtype=tf.int8))
    assert y.dtype == np.int8
    np.testing.assert_array_equal(y.numpy(), [7, 2, 7])
    y = tf.where(c, False, tf.tensor([True, True, False]))
    assert y.dtype == np.bool_
    np.testing.assert_array_equal(y.numpy(), [False, True, False])
    y = tf.where(c, 1j, tf.tensor([1.0, 2.0, 3.0]))
    assert y.dtype == np.complex128
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g, = tf.grad([tf.sum(tf.where(c, x, 0.0))], [x])
    np.testing.assert_array_equal(g.numpy(), [1.0, 0.0, 1.0])


# ---- errors -----------------------------------------------------------------------------

def test_errors_record_nothing(monkeypatch):
    calls = record_calls(monkeypatch, SE, "_int64")
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    for fn in (tf.argmax, tf.argmin):
        with pytest.raises(tf.ShapeError, match="out of bounds"):
            fn(x, axis=2)
        with pytest.raises(tf.ShapeError, match="must be an int"):
            fn(x, axis=(0, 1))
        with pytest.raises(tf.ShapeError, match="empty"):
            fn(np.zeros((3, 0)), axis=1)
        with pytest.raises(tf.ShapeError, match="empty"):
            fn(np.zeros(0))
        with pytest.raises(tf.DTypeError, match="not ordered"):
            fn(np.array([1j, 2.0]))
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        tf.count_nonzero(x, axis=(0, 5))
    with pytest.raises(tf.ShapeError, match="repeated axis"):
        tf.count_nonzero(x, axis=(1, -1))
    with pytest.raises(tf.ShapeError, match="0-d"):
        tf.nonzero(tf.tensor(1.0))
    with pytest.raises(ValueError):            # ShapeError is a ValueError
        tf.nonzero(tf.tensor(1.0))
    assert calls == [] and x.grad is None


def test_searchsorted_errors():
    with pytest.raises(tf.ShapeError, match="1-D"):
        tf.searchsorted(np.ones((2, 2)), np.ones(2))
    with pytest.raises(tf.ShapeError, match="1-D"):
        tf.searchsorted(np.float64(1.0), 1.0)
    with pytest.raises(tf.DTypeError, match="not ordered"):
        tf.searchsorted(np.array([1j, 2j]), np.ones(2))
    with pytest.raises(tf.DTypeError, match="not ordered"):
        tf.searchsorted(np.ones(2), np.array([1j]))
    with pytest.raises(ValueError, match="side must be"):
        tf.searchsorted(np.ones(2), 1.0, side="middle")
    with pytest.raises(tf.DTypeError, match="integer indices"):
        tf.searchsorted(np.ones(2), 1.0, sorter=np.array([0.0, 1.0]))
    with pytest.raises(tf.ShapeError, match="sorter has shape"):
        tf.searchsorted(np.ones(2), 1.0, sorter=np.array([0]))
    with pytest.raises(IndexError, match="out of range"):
        tf.searchsorted(np.ones(2), 1.0, sorter=np.array([0, 2]))
