"""Index updates (t.at[idx].set/add/multiply, t[idx] = v, t += u): values against NumPy,
derivatives in both operands against finite differences (every order), the version
counter that stops a backward through a changed tensor, and the error paths."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.complex128]
MASK = np.array([True, False, True, False, True])

# (id, index, shape of x, shape of v)
KEYS = [
    ("int", 2, (5, 3), (3,)),
    ("int-broadcast-scalar", (1, 2), (5, 3), ()),
    ("slice", slice(1, 4), (5, 3), (3, 3)),
    ("slice-broadcast", (slice(None, None, -2), 0), (5, 3), (1,)),
    ("ellipsis-none", (Ellipsis, 1), (2, 5, 3), (2, 5)),
    ("mask", MASK, (5, 3), (3, 3)),
    ("intarr-unique", np.array([4, 0, 2]), (5, 3), (3, 3)),
    ("intarr-dup", np.array([1, 3, 1, 1]), (5, 3), (4, 3)),
    ("pairs-dup", (np.array([0, 0, 4]), np.array([2, 2, 1])), (5, 3), (3,)),
    ("tensor-index", tf.tensor([3, 0, 3]), (5, 3), (3, 1)),
]


def _numpy_set(x, key, v):
    y = x.copy()
    y[key.numpy() if isinstance(key, tf.Tensor) else key] = v
    return y


def _numpy_add(x, key, v):
    y = x.copy()
    np.add.at(y, key.numpy() if isinstance(key, tf.Tensor) else key,
              np.broadcast_to(v, y[key.numpy() if isinstance(key, tf.Tensor) else key].shape))
    return y


def _numpy_multiply(x, key, v):
    y = x.copy()
    k = key.numpy() if isinstance(key, tf.Tensor) else key
    np.multiply.at(y, k, np.broadcast_to(v, y[k].shape))
    return y


UPDATES = {
    "set": (lambda x, k, v: x.at[k].set(v), _numpy_set),
    "add": (lambda x, k, v: x.at[k].add(v), _numpy_add),
    "multiply": (lambda x, k, v: x.at[k].multiply(v), _numpy_multiply),
}


@pytest.mark.parametrize("kind", sorted(UPDATES))
@pytest.mark.parametrize("case", KEYS, ids=[k[0] for k in KEYS])
def test_update_values(kind, case):
    _, key, xs, vs = case
    rng = np.random.default_rng(1)
    x, v = random_array(xs, np.float64, rng), random_array(vs, np.float64, rng)
    f, ref = UPDATES[kind]
    out = f(tf.tensor(x), key, tf.tensor(v))
    np.testing.assert_allclose(out.numpy(), ref(x, key, v), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", sorted(UPDATES))
@pytest.mark.parametrize("case", KEYS, ids=[k[0] for k in KEYS])
def test_update_grads(kind, case, dtype):
    _, key, xs, vs = case
    rng = np.random.default_rng(2)
    x, v = random_array(xs, dtype, rng), random_array(vs, dtype, rng)
    f = UPDATES[kind][0]
    check_grads(lambda a, b: f(a, key, b), [x, v])


def test_multiply_exact_at_zero_factors():
    # two zero factors on one entry: y0 = x0·v0·v1, so dy0/dv0 = x0·v1 = 0 and
    # dy0/dx0 = v0·v1 = 0, while with one zero factor the other factor's derivative is
    # x0·v0 ≠ 0 — all without dividing by a factor
    x = np.array([2.0, 3.0])
    key = np.array([0, 0, 1])
    xt = tf.tensor(x, requires_grad=True)
    for v, gx_ref, gv_ref in (([0.0, 0.0, 5.0], [0.0, 5.0], [0.0, 0.0, 3.0]),
                              ([0.0, 4.0, 5.0], [0.0, 5.0], [8.0, 0.0, 3.0])):
        vt = tf.tensor(v, requires_grad=True)
        gx, gv = tf.grad(xt.at[key].multiply(vt).sum(), [xt, vt])
        np.testing.assert_array_equal(gx.numpy(), gx_ref)
        np.testing.assert_array_equal(gv.numpy(), gv_ref)
        check_grads(lambda a, b: a.at[key].multiply(b), [x, np.array(v)])


def test_set_at_repeated_index_keeps_numpys_value_and_its_gradient():
    x = tf.tensor(np.zeros(3), requires_grad=True)
    v = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    key = np.array([1, 1, 0])
    y = x.at[key].set(v)
    np.testing.assert_array_equal(y.numpy(), _numpy_set(np.zeros(3), key, v.numpy()))
    gx, gv = tf.grad(y, [x, v], [np.array([10.0, 20.0, 30.0])])
    np.testing.assert_array_equal(gx.numpy(), [0.0, 0.0, 30.0])
    np.testing.assert_array_equal(gv.numpy(), [0.0, 20.0, 10.0])   # only the kept value


def test_divide_and_get():
    x = np.array([1.0, 2.0, 4.0])
    t = tf.tensor(x)
    np.testing.assert_allclose(t.at[1:].divide(2.0).numpy(), [1.0, 1.0, 2.0])
    np.testing.assert_array_equal(t.at[::2].get().numpy(), x[::2])
    check_grads(lambda a, b: a.at[[0, 2]].divide(b), [x, np.array([2.0, -3.0])])


def test_low_precision():
    rng = np.random.default_rng(3)
    x, v = random_array((5, 3), np.float64, rng), random_array((2, 3), np.float64, rng)
    check_low_precision(lambda a, b: a.at[[1, 3]].set(b) * a, [x, v])


# ---- t[idx] = v and t op= u --------------------------------------------------------------

@pytest.mark.parametrize("case", KEYS, ids=[k[0] for k in KEYS])
def test_setitem_matches_functional_set(case):
    _, key, xs, vs = case
    rng = np.random.default_rng(4)
    x, v = random_array(xs, np.float64, rng), random_array(vs, np.float64, rng)

    def inplace(a, b):
        c = a * 1.0
        c[key] = b * 2.0
        return c

    out = inplace(tf.tensor(x), tf.tensor(v))
    np.testing.assert_array_equal(out.numpy(), _numpy_set(x, key, 2 * v))
    check_grads(inplace, [x, v])


def test_setitem_rebinds_the_object_and_counts_versions():
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2.0
    alias = y
    assert y._version == 0 and y.grad_fn.op.name == "multiply_scalar"
    y[0] = 0.0
    assert alias is y and y._version > 0 and y.grad_fn.op.name == "index_set"
    v1 = y._version
    y += 1.0
    assert y._version > v1
    np.testing.assert_array_equal(y.numpy(), [1.0, 5.0, 7.0])
    (g,) = tf.grad(y.sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [0.0, 2.0, 2.0])


def test_backward_through_a_changed_input_raises_naming_the_op():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    z = x * 3.0
    w = z.exp()          # exp keeps z: its backward needs z as it was
    z[0] = 5.0
    with pytest.raises(tf.InPlaceError, match="'exp'.*modified in place"):
        w.sum().backward()
    assert x.grad is None                 # nothing accumulated
    (g,) = tf.grad(z.sum(), [x])          # the changed tensor itself is fine
    np.testing.assert_array_equal(g.numpy(), [0.0, 3.0])


def test_optimizer_step_under_no_grad():
    w = tf.tensor([1.0, -2.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    with tf.no_grad():
        w -= 0.1 * w.grad
    assert w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.numpy(), [0.8, -1.6])
    with pytest.raises(tf.InPlaceError):        # the old graph saw the old w
        loss.backward()
    w.zero_grad()
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.6, -3.2])


@pytest.mark.parametrize("stmt", ["x[0] = 1.0", "x += 1.0", "x *= 2.0"])
def test_leaf_that_requires_grad_cannot_change_in_place(stmt):
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    node, data = x._node, x.numpy()
    with pytest.raises(tf.InPlaceError, match="leaf"):
        exec(stmt)
    assert x._node is node and x.numpy() is data and x._version == 0


def test_integer_and_bool_tensors():
    t = tf.arange(6)
    t[1:3] = 7
    t[t > 6] += 1
    np.testing.assert_array_equal(t.numpy(), [0, 8, 8, 3, 4, 5])
    assert t.dtype == np.int64
    b = tf.zeros(3, dtype=tf.bool)
    b[1] = True
    b |= tf.tensor([True, False, False])
    np.testing.assert_array_equal(b.numpy(), [True, True, False])


def test_inplace_operator_forms():
    x = tf.tensor(np.arange(1.0, 5.0), requires_grad=True)
    y = x + 0.0
    y -= 1.0
    y *= y
    y /= 2.0
    y **= 2.0
    y[1:3] += x[1:3]
    y @= np.eye(4)
    ref = ((np.arange(1.0, 5.0) - 1) ** 2 / 2) ** 2
    ref[1:3] += np.arange(2.0, 4.0)
    np.testing.assert_allclose(y.numpy(), ref)
    check_grads(lambda a: _chain(a), [np.arange(1.0, 5.0)])


def _chain(a):
    y = a + 0.0
    y *= a
    y[::2] = y[::2] * 3.0
    y -= a
    return y


def _recurrence(a):
    """t[i] = f(t[i - 1], t[i]) in a loop: every update reads values of t itself."""
    t = a * 1.0
    for i in range(1, t.shape[0]):
        t[i] = t[i - 1] * t[i] + 1.0
    t[t.numpy() > 100.0] = 100.0
    t += t * 0.5
    return t


def test_updates_that_read_the_tensor_itself():
    a = np.array([1.5, -0.5, 2.0, 0.7])
    ref = a.copy()
    for i in range(1, 4):
        ref[i] = ref[i - 1] * ref[i] + 1.0
    ref[ref > 100.0] = 100.0
    ref *= 1.5
    np.testing.assert_allclose(_recurrence(tf.tensor(a)).numpy(), ref)
    check_grads(_recurrence, [a])


def _twin_recurrence_gradient():
    x = tf.tensor([1.5, -0.5, 2.0, 0.7], requires_grad=True)
    return tf.grad(_recurrence(x).sum(), [x])[0].numpy().tolist()


def test_python_twin_agrees(tmp_path):
    """TENFERRO_PURE_PYTHON=1 (the tape's Python twin) gives the same in-place results."""
    code = ("import json, sys; sys.path.insert(0, %r); import test_inplace as t; "
            "print(json.dumps(t._twin_recurrence_gradient()))" % os.path.dirname(__file__))
    env = dict(os.environ, TENFERRO_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=tmp_path)
    assert json.loads(out.stdout) == _twin_recurrence_gradient()


def test_forward_mode_through_setitem():
    x, t = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0])

    def f(a):
        c = a * a
        c[1] = a[0] * 10.0
        return c

    _, tan = tf.jvp(f, [x], [t])
    np.testing.assert_allclose(tan.numpy(), [2.0, 10.0, 6.0])


def test_errors_change_nothing():
    x = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1.0
    node, data, version = y._node, y.numpy(), y._version
    with pytest.raises(tf.ShapeError, match="broadcast"):
        y[0] = tf.tensor([1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match="shape"):
        y[5] = 1.0
    with pytest.raises(tf.DTypeError, match="complex"):
        y[0] = 1j
    with pytest.raises(tf.ShapeError, match="cannot change the shape"):
        y += np.ones((3, 2, 2))
    i = tf.arange(3)
    with pytest.raises(tf.DTypeError, match="astype"):
        i += 0.5
    assert y._node is node and y.numpy() is data and y._version == version
    np.testing.assert_array_equal(i.numpy(), [0, 1, 2])


def test_float32_keeps_its_dtype_in_place():
    y = tf.tensor(np.ones(3, np.float32))
    y += np.ones(3)                      # float64 operand: cast back (same kind)
    assert y.dtype == np.float32
    y[0] = np.float64(5.0)
    assert y.dtype == np.float32 and y.numpy()[0] == 5.0
