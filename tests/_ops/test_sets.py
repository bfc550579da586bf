"""unique_all / unique_counts / unique_inverse / unique_values and numpy.unique on tensors:
values against NumPy for every dtype family, NaNs distinct, signed zeros merged, the
derivative of the values (a gather at the first occurrences) at every order."""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.float32, np.complex128, np.complex64, np.int8, np.int64, np.uint8,
          np.uint64, np.bool_]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(0, 2, shape)
    return x.astype(dtype)


def _index(t, shape):
    assert isinstance(t, tf.Tensor) and t.dtype == np.int64 and not t.requires_grad
    assert t.shape == shape


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2), (0,), ()])
def test_unique_all_matches_numpy(dtype, shape):
    x = _data(shape, dtype)
    v, i, inv, c = np.unique(x.ravel(), return_index=True, return_inverse=True,
                             return_counts=True, equal_nan=False)
    r = tf.unique_all(x)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    assert r.values.dtype == x.dtype and r.values.shape == v.shape
    np.testing.assert_array_equal(r.values.numpy(), v)
    _index(r.indices, v.shape)
    np.testing.assert_array_equal(r.indices.numpy(), i)
    _index(r.inverse_indices, x.shape)          # 2024.12: the input's shape
    np.testing.assert_array_equal(r.inverse_indices.numpy(), inv.reshape(x.shape))
    _index(r.counts, v.shape)
    np.testing.assert_array_equal(r.counts.numpy(), c)
    # the other three agree with unique_all
    rc = tf.unique_counts(x)
    assert rc._fields == ("values", "counts")
    np.testing.assert_array_equal(rc.values.numpy(), v)
    np.testing.assert_array_equal(rc.counts.numpy(), c)
    ri = tf.unique_inverse(x)
    assert ri._fields == ("values", "inverse_indices")
    np.testing.assert_array_equal(ri.inverse_indices.numpy(), inv.reshape(x.shape))
    uv = tf.unique_values(x)
    assert isinstance(uv, tf.Tensor)
    np.testing.assert_array_equal(uv.numpy(), v)
    # reconstruction and first occurrences
    np.testing.assert_array_equal(r.values.numpy()[r.inverse_indices.numpy()], x)
    np.testing.assert_array_equal(x.ravel()[r.indices.numpy()], r.values.numpy())


def test_nans_are_distinct_and_signed_zeros_merge():
    x = np.array([np.nan, 1.0, -0.0, np.nan, 0.0, 1.0])
    r = tf.unique_all(x)
    vals = r.values.numpy()
    assert np.isnan(vals).sum() == 2 and len(vals) == 4
    np.testing.assert_array_equal(r.counts.numpy(), [2, 2, 1, 1])
    np.testing.assert_array_equal(r.indices.numpy(), [2, 1, 0, 3])
    assert np.signbit(vals[0])                    # -0.0 came first
    np.testing.assert_array_equal(r.inverse_indices.numpy(), [2, 1, 0, 3, 0, 1])
    z = np.array([complex(np.nan, 1), 1j, complex(np.nan, 1), 1j])
    rz = tf.unique_counts(z)
    np.testing.assert_array_equal(rz.counts.numpy(), [2, 1, 1])


# ---- derivatives ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_values_check_grads_distinct(dtype):
    x = random_array((3, 4), dtype, rng=3)
    check_grads(lambda a: tf.unique_values(a), [x], order=2)
    check_grads(lambda a: tf.unique_all(a).values * 2.0, [x], order=2)
    check_grads(lambda a: tf.exp(tf.unique_inverse(a).values), [x], order=2)


def test_values_gradient_goes_to_first_occurrence():
    x = tf.tensor([[3.0, 1.0], [3.0, 1.0], [2.0, 3.0]], requires_grad=True)
    r = tf.unique_counts(x)
    np.testing.assert_array_equal(r.values.numpy(), [1.0, 2.0, 3.0])
    g, = tf.grad([r.values], [x], [np.array([10.0, 20.0, 30.0])])
    np.testing.assert_array_equal(g.numpy(), [[30.0, 10.0], [0.0, 0.0], [20.0, 0.0]])
    _, t = tf.jvp(tf.unique_values, [tf.tensor([3.0, 1.0, 3.0])],
                  [tf.tensor([1.0, 2.0, 4.0])])
    np.testing.assert_array_equal(t.numpy(), [2.0, 1.0])
    # a gather: second derivative 0, through create_graph
    g, = tf.grad([tf.sum(tf.unique_values(x) ** 2)], [x], create_graph=True)
    h, = tf.grad([tf.sum(g)], [x])
    np.testing.assert_array_equal(h.numpy(), [[2.0, 2.0], [0.0, 0.0], [2.0, 0.0]])


def test_low_precision():
    x = random_array((5,), np.float64, rng=4)
    check_low_precision(lambda a: tf.unique_values(a), [x])
    check_low_precision(lambda a: tf.unique_all(a).values,
                        [random_array((2, 3), np.complex128, rng=5)])


# ---- numpy.unique and NumPy 2's unique_* on tensors -----------------------------------------

@pytest.mark.parametrize("flags", [(False, False, False), (True, False, False),
                                   (False, True, False), (False, False, True),
                                   (True, True, True)])
def test_numpy_unique_dispatch(flags):
    x = np.array([[2.0, np.nan, 1.0], [2.0, np.nan, 0.0]])
    t = tf.tensor(x, requires_grad=True)
    ri, rv, rc = flags
    got = np.unique(t, return_index=ri, return_inverse=rv, return_counts=rc)
    want = np.unique(x, return_index=ri, return_inverse=rv, return_counts=rc)
    if not any(flags):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    assert got[0].requires_grad
    for g, w in zip(got, want):
        assert isinstance(g, tf.Tensor) and g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w)
    # NumPy's default merges NaNs; equal_nan=False keeps them apart
    assert np.unique(t, equal_nan=False).shape == (5,)


def test_numpy_unique_axis():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])
    t = tf.tensor(x, requires_grad=True)
    v, i, c = np.unique(t, axis=0, return_index=True, return_counts=True)
    wv, wi, wc = np.unique(x, axis=0, return_index=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), wv)
    np.testing.assert_array_equal(i.numpy(), wi)
    np.testing.assert_array_equal(c.numpy(), wc)
    g, = tf.grad([v], [t], [np.array([[1.0, 2.0], [3.0, 4.0]])])
    np.testing.assert_array_equal(g.numpy(), [[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])
    check_grads(lambda a: np.unique(a, axis=1), [random_array((2, 3), rng=6)], order=2)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        np.unique(t, axis=2)


def test_numpy_unique_all_family():
    x = tf.tensor([1.0, 1.0, np.nan, np.nan], requires_grad=True)
    for np_fn, tf_fn in ((np.unique_all, tf.unique_all), (np.unique_counts, tf.unique_counts),
                         (np.unique_inverse, tf.unique_inverse)):
        got, want = np_fn(x), tf_fn(x)
        assert type(got) is type(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    v = np.unique_values(x)
    assert isinstance(v, tf.Tensor) and v.requires_grad and v.shape == (3,)
