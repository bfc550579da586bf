"""Creation functions: values and default dtypes against NumPy, the differentiable ones
(asarray of tensors, full with a tensor fill value, linspace between tensors) against
finite differences, copy semantics and the error paths."""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads


@pytest.mark.parametrize("obj,dtype", [
    (1, np.int64), (1.5, np.float64), (True, np.bool_), (1j, np.complex128),
    ([1, 2], np.int64), ([1, 2.0], np.float64), ([[True], [False]], np.bool_),
    (np.arange(3, dtype=np.uint16), np.uint16), (np.float32(2), np.float32),
])
def test_asarray_infers_dtypes_like_numpy(obj, dtype):
    t = tf.asarray(obj)
    assert isinstance(t, tf.Tensor) and t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(obj))


def test_asarray_of_tensors():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    assert tf.asarray(x) is x and tf.asarray(x, copy=False) is x
    c = tf.asarray(x, copy=True)
    assert c is not x and not c.is_leaf and c.numpy() is not x.numpy()
    c[0] = 5.0                                     # the copy changes, x does not
    assert x.tolist() == [1.0, 2.0]
    (g,) = tf.grad((c * x).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [5.0, 4.0])
    f32 = tf.asarray(x, dtype=tf.float32)
    assert f32.dtype == np.float32 and f32.requires_grad
    with pytest.raises(ValueError, match="copy=False"):
        tf.asarray(x, dtype=tf.float32, copy=False)
    s = tf.asarray([x[0] * 2.0, x[1] ** 2])       # a list of tracked tensors: a stack
    (g,) = tf.grad(s.sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    check_grads(lambda a: tf.asarray([a, a * a]), [np.array([0.5, -1.0])])
    check_grads(lambda a: tf.asarray(a, copy=True), [np.array([0.5, -1.0])])


def test_asarray_copy_semantics():
    a = np.arange(3.0)
    assert tf.asarray(a).numpy() is a
    assert tf.asarray(a, copy=False).numpy() is a
    assert tf.asarray(a, copy=True).numpy() is not a
    with pytest.raises(ValueError, match="copy=False"):
        tf.asarray([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        tf.asarray(a, dtype=tf.float32, copy=False)
    with pytest.raises(tf.DTypeError):
        tf.asarray(np.ones(2, np.float16))
    with pytest.raises(ValueError, match="cpu"):
        tf.asarray([1], device="gpu")


@pytest.mark.parametrize("fn,args,kw", [
    ("zeros", ((2, 3),), {}), ("ones", (4,), {"dtype": tf.int8}), ("empty", ((0, 2),), {}),
    ("eye", (3,), {}), ("eye", (2, 4), {"k": 1, "dtype": tf.complex64}),
    ("arange", (5,), {}), ("arange", (1, 2.5, 0.5), {}), ("arange", (10, 0, -3), {}),
    ("linspace", (0.0, 1.0, 5), {}), ("linspace", (0, 1j, 4), {"endpoint": False}),
    ("full", ((2,), 7), {}), ("full", ((2,), True), {}), ("full", ((2,), 0.5), {}),
    ("full", ((1,), 2j), {}),
])
def test_creation_values_and_dtypes(fn, args, kw):
    t = getattr(tf, fn)(*args, **kw)
    ref = getattr(np, fn)(*args, **kw)
    assert t.dtype == ref.dtype
    if fn != "empty":
        np.testing.assert_array_equal(t.numpy(), ref)
    assert t.shape == ref.shape and not t.requires_grad


def test_like_functions():
    x = tf.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    for fn, ref in ((tf.zeros_like, 0), (tf.ones_like, 1)):
        t = fn(x)
        assert t.dtype == np.float32 and t.shape == (2, 3) and not t.requires_grad
        assert (t.numpy() == ref).all()
    assert tf.empty_like(x, dtype=tf.int16).dtype == np.int16
    f = tf.full_like(x, 3)
    assert f.dtype == np.float32 and (f.numpy() == 3).all()
    # NumPy's spellings on tensors give constant tensors too
    assert isinstance(np.zeros_like(x), tf.Tensor) and not np.zeros_like(x).requires_grad
    assert np.full_like(x, 2.0).dtype == np.float32


def test_full_and_linspace_are_differentiable_in_tensor_values():
    check_grads(lambda v: tf.full((2, 3), v), [np.array(0.7)])
    check_grads(lambda v: tf.full_like(tf.zeros(3, dtype=tf.complex128), v),
                [np.array(0.7 + 0.2j)])
    check_grads(lambda a, b: tf.linspace(a, b, 5), [np.array(-1.0), np.array(2.0)])
    check_grads(lambda a, b: tf.linspace(a, b, 4, endpoint=False),
                [np.array(-1.0), np.array(2.0)])
    out = tf.linspace(tf.tensor(0.0), 1.0, 7)
    np.testing.assert_allclose(out.numpy(), np.linspace(0, 1, 7), rtol=1e-15, atol=1e-16)
    assert out.numpy()[-1] == 1.0


@pytest.mark.parametrize("args,kw", [
    ((-3, 0, 10), {}), ((0.0, 1.0, 4), {"base": 2.0, "endpoint": False}),
    ((1, 2), {"dtype": tf.float32}), ((0, 1j, 5), {}), ((2.0, -1.0, 1), {}),
    ((0.0, 1.0, 0), {}),
])
def test_logspace_values_match_numpy(args, kw):
    t = tf.logspace(*args, **kw)
    ref = np.logspace(*args, **kw)
    assert t.dtype == ref.dtype and t.shape == ref.shape and not t.requires_grad
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-15, atol=0)


def test_logspace_is_differentiable_in_endpoints_and_base():
    check_grads(lambda a, b: tf.logspace(a, b, 5), [np.array(-1.0), np.array(0.5)])
    check_grads(lambda a, b, base: tf.logspace(a, b, 4, base=base, endpoint=False),
                [np.array(-1.0), np.array(2.0), np.array(3.0)])
    check_grads(lambda a: tf.logspace(a, 1j, 3), [np.array(0.3 - 0.2j)])


def test_from_dlpack():
    a = np.arange(4.0)
    t = tf.from_dlpack(a)
    assert t.dtype == np.float64 and np.shares_memory(t.numpy(), a)
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a)
    x = tf.tensor([1.0], requires_grad=True)
    assert tf.from_dlpack(x) is x
    with pytest.raises(tf.UnsupportedADError, match="detach"):
        np.from_dlpack(x)              # exporting would drop the gradient
    np.testing.assert_array_equal(np.from_dlpack(x.detach()), [1.0])


@pytest.mark.parametrize("call,exc,match", [
    (lambda: tf.zeros((2, -1)), tf.ShapeError, "negative"),
    (lambda: tf.ones("a"), tf.ShapeError, "shape"),
    (lambda: tf.full((2,), tf.tensor([1.0, 2.0])), tf.ShapeError, "0-d"),
    (lambda: tf.full((2,), 1j, dtype=tf.float64), tf.DTypeError, "complex"),
    (lambda: tf.linspace(0, 1, -1), tf.ShapeError, "non-negative"),
    (lambda: tf.logspace(0, 1, -1), tf.ShapeError, "non-negative"),
    (lambda: tf.logspace(0, 1j, 3, dtype=tf.float64), tf.DTypeError, "complex"),
    (lambda: tf.arange(0, 5, 0), ValueError, "zero"),
    (lambda: tf.zeros(3, dtype=np.float16), tf.DTypeError, "float16"),
    (lambda: tf.eye(2, device="cuda"), ValueError, "cpu"),
])
def test_creation_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
