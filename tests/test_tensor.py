"""The Tensor object's protocols: the array namespace, NumPy dispatch (a tenferro op, NumPy
on the payload, or an error instead of a dropped gradient), conversions, formatting,
DLPack, pickling and copying."""
import copy
import operator
import pickle

import numpy as np
import pytest

import tenferro as tf


def test_array_namespace():
    t = tf.ones(2)
    assert t.__array_namespace__() is tf
    assert t.__array_namespace__(api_version="2023.12") is tf
    with pytest.raises(ValueError, match="2024.12"):
        t.__array_namespace__(api_version="2099.01")
    assert t.device == "cpu" and t.to_device("cpu") is t
    with pytest.raises(ValueError, match="cpu"):
        t.to_device("cuda:0")


# ---- NumPy on tensors ----------------------------------------------------------------------

def test_numpy_function_with_a_rule_is_differentiable():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    y = np.sum(np.exp(x))
    assert isinstance(y, tf.Tensor) and y.requires_grad


@pytest.mark.parametrize("call,expected_type", [
    (lambda t: np.isnan(t), np.ndarray), (lambda t: np.shape(t), tuple),
    (lambda t: np.ndim(t), int), (lambda t: np.greater(t, 0), np.ndarray),
    (lambda t: np.allclose(t, t), bool), (lambda t: np.array_equal(t, t), bool),
])
def test_non_differentiable_numpy_functions_return_numpys_result(call, expected_type):
    x = tf.tensor([1.0, np.nan], requires_grad=True)
    out = call(x)
    ref = call(x.numpy())
    assert isinstance(out, expected_type) and not isinstance(out, tf.Tensor)
    np.testing.assert_array_equal(out, ref)


def test_unknown_numpy_function_runs_on_plain_values_and_refuses_tracked_ones():
    # np.intersect1d is one of the few NumPy functions without a tenferro version
    a = np.array([0.0, 4.0, 7.0])
    b = np.array([4.0, 1.0, 7.0])
    np.testing.assert_array_equal(np.intersect1d(tf.tensor(a), b), np.intersect1d(a, b))
    x = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="numpy.intersect1d.*detach"):
        np.intersect1d(x, b)
    with tf.no_grad():                     # nothing is recorded, so nothing is lost
        np.testing.assert_array_equal(np.intersect1d(x, b), np.intersect1d(a, b))
    with tf.forward_ad.dual_level():       # a forward-mode tangent counts as a derivative
        d = tf.forward_ad.make_dual(tf.tensor(a), tf.tensor(np.ones(3)))
        with pytest.raises(tf.UnsupportedADError):
            np.intersect1d(d, b)
    # tensors nested in lists are found too
    with pytest.raises(tf.UnsupportedADError):
        np.intersect1d([x[0], 1.0], b)


def test_asarray_of_a_tracked_tensor_refuses_to_drop_the_gradient():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="drop its gradient"):
        np.asarray(x)
    with pytest.raises(tf.UnsupportedADError):
        np.array([x, x])
    assert np.asarray(x.detach()) is x.numpy()
    c = tf.tensor([1.0, 2.0])
    assert np.asarray(c) is c.numpy()
    assert np.asarray(c, dtype=np.float32).dtype == np.float32
    assert np.array(c, copy=True) is not c.numpy()


# ---- conversions -----------------------------------------------------------------------

def test_python_conversions():
    assert float(tf.tensor(2.5)) == 2.5 and int(tf.tensor(3)) == 3
    assert complex(tf.tensor(1 + 2j)) == 1 + 2j and bool(tf.tensor(True))
    assert operator.index(tf.tensor(4)) == 4
    assert [10, 20, 30][tf.tensor(1)] == 20
    with pytest.raises(TypeError, match="integer"):
        operator.index(tf.tensor(1.0))
    with pytest.raises(TypeError):
        float(tf.tensor(1j))
    assert float(tf.tensor(2.0, requires_grad=True)) == 2.0   # like PyTorch: allowed


def test_format():
    assert f"{tf.tensor(3.14159):.2f}" == "3.14"
    assert f"{tf.tensor([1.0, 2.5]):.3f}" == "[1.000, 2.500]"
    assert f"{tf.tensor(7):>4d}" == "   7"
    assert f"{tf.tensor([1.0])}" == str(tf.tensor([1.0]))
    assert format(tf.tensor(1 + 1j), ".1f") == "1.0+1.0j"


def test_repr_shows_non_default_dtypes():
    assert repr(tf.tensor([1, 2])) == "tensor([1, 2])"
    assert "dtype=int8" in repr(tf.tensor([1], dtype=tf.int8))
    assert "dtype" not in repr(tf.tensor([True]))


def test_dlpack():
    t = tf.arange(4.0)
    assert np.shares_memory(np.from_dlpack(t), t.numpy())
    assert t.__dlpack_device__() == t.numpy().__dlpack_device__()
    ro = tf.broadcast_to(tf.tensor([1.0]), (3,))          # a read-only payload
    np.testing.assert_array_equal(np.from_dlpack(ro), [1.0, 1.0, 1.0])


# ---- pickling and copying -----------------------------------------------------------------

def _roundtrips(t):
    return [pickle.loads(pickle.dumps(t)), copy.copy(t), copy.deepcopy(t)]


@pytest.mark.parametrize("t", [tf.tensor([1.0, 2.0]), tf.tensor([[1, 2]], dtype=tf.int16),
                               tf.tensor([True, False]), tf.tensor(3 + 1j),
                               tf.tensor(np.ones(3, np.float32))])
def test_copies_of_constants(t):
    for c in _roundtrips(t):
        assert isinstance(c, tf.Tensor) and c is not t
        assert c.dtype == t.dtype and c.shape == t.shape and not c.requires_grad
        np.testing.assert_array_equal(c.numpy(), t.numpy())


def test_copies_of_a_leaf_keep_requires_grad_and_grad():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    for c in _roundtrips(x):
        assert c.requires_grad and c.is_leaf and c._node is not x._node
        np.testing.assert_array_equal(c.grad.numpy(), [2.0, 4.0])
        (c * 3.0).sum().backward()                 # its own leaf: x.grad is untouched
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    d = copy.deepcopy(x)
    assert not np.shares_memory(d.numpy(), x.numpy())
    assert not np.shares_memory(d.grad.numpy(), x.grad.numpy())


def test_copies_of_a_non_leaf_are_detached_leaves():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    for c in _roundtrips(y):
        assert c.requires_grad and c.is_leaf and c.grad_fn is None
        np.testing.assert_array_equal(c.numpy(), [2.0, 4.0])
        (g,) = tf.grad(c.sum(), [c])
        np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])


def test_pickle_inside_containers():
    x = tf.tensor([1.0], requires_grad=True)
    d = pickle.loads(pickle.dumps({"w": x, "b": [x, 2]}))
    assert d["w"] is d["b"][0] and d["w"].requires_grad


def test_as_tensor_with_dtype_keeps_the_graph():
    # as_tensor(t, dtype=...) on a tracked tensor used to return a detached copy: the
    # gradient vanished without a word. Same dtype -> t itself; another dtype -> astype.
    t = tf.tensor([1.0, 2.0], requires_grad=True)
    assert tf.as_tensor(t, dtype=tf.float64) is t
    assert tf.as_tensor(t, dtype="float64") is t
    for dtype, scale in ((tf.complex128, 3.0), (tf.float32, 2.0)):
        u = tf.as_tensor(t, dtype=dtype)
        assert u.dtype == dtype
        (g,) = tf.grad([tf.sum(tf.real(u) * scale)], [t])
        np.testing.assert_allclose(g.numpy(), [scale, scale])
