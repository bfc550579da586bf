"""Views share values with their base: writes through a view change the base and every
other view (values and graph), as in NumPy and PyTorch (tenferro/_ops/views.py)."""
import gc
import json
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import tenferro as tf
from tenferro._ops import views
from tenferro.testing import check_grads

RNG = np.random.default_rng(7)


# ---- every kind of view shares values with its base, both ways ---------------------------
# (name, make the view of x, the same view of a NumPy array, an index into it that is written)
VIEWS = [
    ("slice", lambda x: x[1:3], None, (0, 1)),
    ("step slice", lambda x: x[::2, ::-1], None, (1, 0)),
    ("int", lambda x: x[2], None, (1,)),
    ("ellipsis+newaxis", lambda x: x[..., None, 1], None, (2, 0)),
    ("reshape", lambda x: x.reshape(3, 2, 2), None, (1, 0, 1)),
    ("reshape fn", lambda x: tf.reshape(x, (12,)), lambda a: a.reshape(12), (5,)),
    ("ravel", lambda x: tf.ravel(x), np.ravel, (7,)),
    ("flatten", lambda x: x.flatten(), lambda a: a.reshape(-1), (3,)),
    ("T", lambda x: x.T, None, (3, 1)),
    ("mT", lambda x: x.mT, None, (2, 2)),
    ("transpose", lambda x: tf.transpose(x), np.transpose, (0, 2)),
    ("permute_dims", lambda x: tf.permute_dims(x, (1, 0)),
     lambda a: np.permute_dims(a, (1, 0)), (1, 2)),
    ("moveaxis", lambda x: tf.moveaxis(x, 0, 1), lambda a: np.moveaxis(a, 0, 1), (2, 1)),
    ("swapaxes", lambda x: x.swapaxes(0, 1), None, (3, 0)),
    ("expand_dims", lambda x: tf.expand_dims(x, 1), lambda a: np.expand_dims(a, 1),
     (2, 0, 3)),
    ("squeeze", lambda x: tf.squeeze(x[None]), lambda a: np.squeeze(a[None]), (1, 1)),
    ("diagonal", lambda x: x.diagonal(), lambda a: _writable(np.diagonal(a)), (2,)),
    ("diagonal offset", lambda x: tf.diagonal(x, 1),
     lambda a: _writable(np.diagonal(a, 1)), (1,)),
    ("linalg.diagonal", lambda x: tf.linalg.diagonal(x),
     lambda a: _writable(np.diagonal(a)), (1,)),
    ("unstack", lambda x: tf.unstack(x, axis=1)[2], lambda a: np.moveaxis(a, 1, 0)[2], (1,)),
    ("view of view", lambda x: x.T[1:][:, ::2], None, (1, 1)),
]
IDS = [v[0] for v in VIEWS]


def _writable(d):
    d.flags.writeable = True       # NumPy's diagonal views are read-only by default
    return d


def _np_view(make, np_make, a):
    return (np_make or make)(a)


def _base():
    return tf.tensor(np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("name,make,np_make,idx", VIEWS, ids=IDS)
def test_a_write_through_a_view_changes_the_base_and_other_views(name, make, np_make, idx):
    x = _base()
    ref = np.arange(12.0).reshape(3, 4)
    v = make(x)
    other = x[:, 1:]                      # a sibling view made before the write
    vref = _np_view(make, np_make, ref)
    assert type(vref) is np.ndarray and np.shares_memory(vref, ref)    # (the NumPy reference is a view as well)
    v[idx] = 100.0
    vref[idx] = 100.0
    np.testing.assert_array_equal(x.numpy(), ref)
    np.testing.assert_array_equal(v.numpy(), vref)
    np.testing.assert_array_equal(other.numpy(), ref[:, 1:])
    v += 1.0
    vref += 1.0
    np.testing.assert_array_equal(x.numpy(), ref)
    np.testing.assert_array_equal(other.numpy(), ref[:, 1:])


@pytest.mark.parametrize("name,make,np_make,idx", VIEWS, ids=IDS)
def test_a_write_to_the_base_shows_in_its_views(name, make, np_make, idx):
    x = _base()
    ref = np.arange(12.0).reshape(3, 4)
    v = make(x)
    x[1] = -5.0
    ref[1] = -5.0
    x *= 2.0
    ref *= 2.0
    np.testing.assert_array_equal(v.numpy(), _np_view(make, np_make, ref))


def test_views_share_memory_with_the_base_after_writes():
    x = _base()
    v = x[1:]
    v[0, 0] = 7.0
    assert np.shares_memory(np.asarray(v), np.asarray(x))


def test_real_and_imag_are_views_of_a_complex_tensor():
    z = tf.tensor(np.array([1 + 2j, 3 - 4j, -1j]))
    re, im = z.real, tf.imag(z)
    re[0] = 10.0
    im[1:] += 1.0
    np.testing.assert_array_equal(z.numpy(), [10 + 2j, 3 - 3j, 0j])
    np.testing.assert_array_equal(re.numpy(), [10.0, 3.0, 0.0])
    np.testing.assert_array_equal(im.numpy(), [2.0, -3.0, 0.0])


@pytest.mark.parametrize("make", [
    lambda x: x[[0, 2]],                      # integer array: a copy, as in NumPy
    lambda x: x[x > 3.0],                     # mask
    lambda x: x[:, [1]],
    lambda x: x.T.reshape(12),                # reshape that NumPy must copy
    lambda x: tf.reshape(x, (12,), copy=True),
    lambda x: tf.asarray(x, copy=True),
    lambda x: x + 0.0,
], ids=["int array", "mask", "mixed", "reshape copy", "copy=True", "asarray copy",
        "arithmetic"])
def test_copies_do_not_share_writes(make):
    x = _base()
    c = make(x)
    c[...] = -1.0
    np.testing.assert_array_equal(x.numpy(), np.arange(12.0).reshape(3, 4))
    x[...] = 5.0
    np.testing.assert_array_equal(c.numpy(), np.full(c.shape, -1.0))


def test_broadcast_view_follows_its_base_and_refuses_writes():
    x = tf.tensor([1.0, 2.0, 3.0])
    for shape in [(2, 3), (100, 3)]:          # small (a copy) and large (NumPy's view)
        b = tf.broadcast_to(x, shape)
        x[0] = 9.0
        np.testing.assert_array_equal(b.numpy(), np.broadcast_to(x.numpy(), shape))
        data, version = x.numpy(), x._version
        with pytest.raises(tf.InPlaceError, match="broadcast"):
            b[0, 0] = 1.0
        with pytest.raises(tf.InPlaceError, match="broadcast"):
            b[1:] += 1.0
        assert x.numpy() is data and x._version == version
        x = tf.tensor([1.0, 2.0, 3.0])


# ---- gradients ---------------------------------------------------------------------------

def test_the_issues_example_gives_pytorchs_gradients():
    # a = x * 2; v = a[1:]; v *= y; loss = sum(a * a) + sum(v): as computed by PyTorch 2.13
    # (a = [2, 4y0, 6y1] after the write), and checked by central differences below
    xa, ya = np.array([1.0, 2.0, 3.0]), np.array([5.0, 7.0])
    x = tf.tensor(xa, requires_grad=True)
    y = tf.tensor(ya, requires_grad=True)
    a = x * 2.0
    v = a[1:]
    v *= y
    loss = (a * a).sum() + v.sum()
    loss.backward()
    # d/dx: a0 = 2x0 -> 8x0; a1 = 2x1y0 -> (2a1 + 1)·2y0; a2 = 2x2y1 -> (2a2 + 1)·2y1
    a1, a2 = 2 * xa[1] * ya[0], 2 * xa[2] * ya[1]
    np.testing.assert_allclose(x.grad.numpy(), [8 * xa[0], (2 * a1 + 1) * 2 * ya[0],
                                                (2 * a2 + 1) * 2 * ya[1]])
    np.testing.assert_allclose(y.grad.numpy(), [(2 * a1 + 1) * 2 * xa[1],
                                                (2 * a2 + 1) * 2 * xa[2]])


def _through_views(x, y):
    a = x * 1.0
    v = a[1:]
    w = a.reshape(2, 3).T                   # made before the writes
    v *= y[:5]
    w[0, 1] = w[2, 0] * y[5]                # reads the family, writes through another view
    a[0] += v[2] * 3.0
    d = a.reshape(2, 3)
    d.diagonal()[...] = d[0, 2] - y[0]
    return (a ** 2).sum() + (w * y[:1]).sum() + (v ** 3).sum()


def _complex_parts(z, y):
    c = z * (1.0 + 0.5j)
    re, im = c.real, c.imag
    re[1:] = re[1:] * y
    im *= re
    s = c[::2]
    s += z[1:3] * 2j
    return (c * c.conj()).real.sum() + (c ** 2).imag.sum() + (im ** 2).sum()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gradients_through_writes_to_views_match_finite_differences(dtype):
    x = RNG.standard_normal(6).astype(dtype)
    y = RNG.standard_normal(6)
    if dtype == np.complex128:
        x = x + 1j * RNG.standard_normal(6)
        f = lambda x, y: (_through_views(x, y) * (1 + 2j)).real
    else:
        f = _through_views
    check_grads(f, [x, y], modes=("rev", "fwd"), order=2)


def test_gradients_through_real_and_imag_views():
    z = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    y = RNG.standard_normal(3)
    check_grads(_complex_parts, [z, y], modes=("rev", "fwd"), order=2)


def test_float32_follows_float64():
    x = RNG.standard_normal(6)
    y = RNG.standard_normal(6)

    def grads(dt):
        xs = tf.tensor(x.astype(dt), requires_grad=True)
        ys = tf.tensor(y.astype(dt), requires_grad=True)
        out = _through_views(xs, ys)
        assert out.dtype == dt
        return [g.numpy() for g in tf.grad(out, [xs, ys])]

    for g32, g64 in zip(grads(np.float32), grads(np.float64)):
        np.testing.assert_allclose(g32, g64, rtol=2e-4, atol=2e-4)


def test_a_view_written_later_sees_the_new_graph():
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = tf.tensor(4.0, requires_grad=True)
    a = x * 1.0
    w = a[:2]                    # made before the write, read after it
    a[1] = y
    (gx, gy) = tf.grad((w * w).sum(), [x, y])
    np.testing.assert_array_equal(gx.numpy(), [2.0, 0.0, 0.0])
    assert gy.item() == 8.0


def test_forward_mode_through_a_write_to_a_view():
    x, t = np.array([1.0, 2.0, 3.0]), np.array([1.0, 10.0, 100.0])

    def f(a):
        c = a * a
        v = c[1:]
        v *= a[:2]
        return c

    val, tan = tf.jvp(f, [x], [t])
    np.testing.assert_allclose(val.numpy(), [1.0, 4.0, 18.0])
    # c1 = a1²a0, c2 = a2²a1
    np.testing.assert_allclose(tan.numpy(), [2.0, 2 * 2 * 1 * 10 + 4 * 1,
                                             2 * 3 * 2 * 100 + 9 * 10])


def test_updates_that_read_views_of_the_tensor_itself():
    # t[i] = t[i-1] * t[i] + 1 reads two views of t and writes a third (PyTorch raises
    # here; tenferro differentiates through the old values)
    def rec(a):
        t = a * 1.0
        for i in range(1, t.shape[0]):
            t[i] = t[i - 1] * t[i] + 1.0
        t[1:] += t[:-1]
        return t

    a = np.array([1.5, -0.5, 2.0, 0.7])
    ref = a.copy()
    for i in range(1, 4):
        ref[i] = ref[i - 1] * ref[i] + 1.0
    ref[1:] += ref[:-1].copy()
    np.testing.assert_allclose(rec(tf.tensor(a)).numpy(), ref)
    check_grads(rec, [a])


# ---- versions are per family: a saved value changed through any member raises ---------

def test_backward_through_a_value_changed_through_another_view_raises():
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 3.0
    b = a[:2]
    c = b * x[:2]           # multiply saved b (a view of a)
    v = a[1:]
    v[0] = 0.0              # changes b's entries through another view
    with pytest.raises(tf.InPlaceError, match="'multiply'.*modified in place"):
        c.sum().backward()
    assert x.grad is None
    (g,) = tf.grad(a.sum(), [x])          # the changed family itself differentiates fine
    np.testing.assert_array_equal(g.numpy(), [3.0, 0.0, 3.0])


def test_versions_move_for_every_member():
    a = tf.tensor(np.zeros((2, 2)))
    v, w = a[0], a.T
    a[1, 1] = 1.0
    assert v._version == w._version == a._version > 0


# ---- refused writes change nothing -------------------------------------------------------

@pytest.mark.parametrize("stmt", ["v[0] = 1.0", "v += 1.0", "v *= 2.0", "t[0, 0] = 0.0",
                                  "d[...] = 0.0", "r[0] = 0.0"])
def test_a_write_through_a_view_of_a_leaf_that_requires_grad_raises(stmt):
    x = tf.tensor(np.arange(4.0).reshape(2, 2), requires_grad=True)
    v, t, d, r = x[0], x.T, x.diagonal(), tf.reshape(x, (4,))
    state = [(u._node, u.numpy(), u._version) for u in (x, v, t, d, r)]
    with pytest.raises(tf.InPlaceError, match="view of a leaf"):
        exec(stmt)
    assert [(u._node, u.numpy(), u._version) for u in (x, v, t, d, r)] == state
    with tf.no_grad():                    # an optimizer-style update is allowed
        exec(stmt)
    assert x.is_leaf and x.requires_grad and x._version > 0


def test_optimizer_step_on_a_slice_under_no_grad():
    w = tf.tensor([1.0, -2.0, 3.0], requires_grad=True)
    head = w[:2]                          # a view kept across steps
    (head * head).sum().backward()
    with tf.no_grad():
        w[:2] -= 0.25 * w.grad[:2]
    np.testing.assert_allclose(w.numpy(), [0.5, -1.0, 3.0])
    np.testing.assert_allclose(head.numpy(), [0.5, -1.0])
    assert w.is_leaf and w.requires_grad
    w.zero_grad()
    (head * head).sum().backward()        # head follows w's new value and graph place
    np.testing.assert_allclose(w.grad.numpy(), [1.0, -2.0, 0.0])


def test_errors_change_nothing_in_the_family():
    x = tf.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    a = x * 1.0
    v, w = a[0], a.T
    before = [(u._node, u.numpy(), u._version) for u in (a, v, w)]
    with pytest.raises(tf.ShapeError):
        v[...] = tf.ones(4)
    with pytest.raises(tf.ShapeError, match="cannot change the shape"):
        v += np.ones((2, 3))
    with pytest.raises(tf.DTypeError):
        w[0, 0] = 1j
    with pytest.raises(IndexError):
        v[7] = 1.0
    assert [(u._node, u.numpy(), u._version) for u in (a, v, w)] == before


# ---- the SciPy pattern that motivated this ------------------------------------------------

def test_scipy_style_overlap_add():
    # scipy.signal.oaconvolve: ret_overpart = ret[sl]; ret_overpart += part
    xa = RNG.standard_normal((3, 4))

    def overlap_add(x):
        ret = tf.zeros(6, dtype=x.dtype)
        for i in range(3):
            ret_overpart = ret[i:i + 4]
            ret_overpart += x[i]
        return ret

    ref = np.zeros(6)
    for i in range(3):
        ref[i:i + 4] += xa[i]
    np.testing.assert_allclose(overlap_add(tf.tensor(xa)).numpy(), ref)
    check_grads(overlap_add, [xa])


# ---- the family's bookkeeping ------------------------------------------------------------

def test_dead_views_are_pruned():
    x = _base()
    for i in range(5000):
        x[i % 3]
    group = x[0]._view[0]
    assert len(group.views) < 100


def test_the_base_is_freed_with_its_last_view_without_the_collector():
    gc.disable()
    try:
        x = tf.tensor(np.ones(5))
        v = x[1:]
        ref = weakref.ref(x)
        del x
        assert ref() is not None          # the view keeps its base
        del v
        assert ref() is None              # no reference cycle: freed at once
    finally:
        gc.enable()


def _twin_gradients():
    x = tf.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    y = tf.tensor([0.5, -1.0, 2.0, 1.5, 0.3, -0.7], requires_grad=True)
    out = _through_views(x, y)
    return [g.numpy().tolist() for g in tf.grad(out, [x, y])]


def test_python_twin_agrees(tmp_path):
    """TENFERRO_PURE_PYTHON=1 (the tape's Python twin) gives the same results."""
    code = ("import json, sys; sys.path.insert(0, %r); import test_views as t; "
            "print(json.dumps(t._twin_gradients()))" % os.path.dirname(__file__))
    env = dict(os.environ, TENFERRO_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=tmp_path)
    assert json.loads(out.stdout) == _twin_gradients()


def test_a_view_the_copy_cannot_show_is_written_by_positions():
    # b's payload is Fortran-ordered (NumPy keeps x.T's layout), so b.T.reshape(12) is a
    # view of it; the C-ordered copy a write starts from cannot show that reshape
    xa = RNG.standard_normal((4, 3))
    b_ref = xa.T + 0.0
    assert b_ref.flags.f_contiguous and np.shares_memory(b_ref.T.reshape(12), b_ref)
    ref_v = b_ref.T.reshape(12)
    ref_v[5] = -1.0

    def f(x, y):
        b = x.T + 0.0
        v = b.T.reshape(12)
        assert v._view is not None
        v[5] = y * 2.0
        v[::3] *= y
        return b

    out = f(tf.tensor(xa), tf.tensor(-0.5))
    np.testing.assert_array_equal(out.numpy(), _fortran_ref(xa))
    b = tf.tensor(xa).T + 0.0
    steps = b.T.reshape(12)._view[1]
    assert views._target(b.numpy().copy(), steps) is None     # (the fallback ran)
    check_grads(f, [xa, np.array(0.7)], modes=("rev", "fwd"), order=2)


def _fortran_ref(xa):
    b = xa.T + 0.0
    v = b.T.reshape(12)
    v[5] = -1.0
    v[::3] *= -0.5
    return b


def test_t_idx_op_equals_writes_once():
    x = tf.tensor(np.arange(4.0), requires_grad=True)
    y = x * 1.0
    y[1:3] += 1.0           # s = y[1:3]; s += 1 (writes through); y[1:3] = s (nothing)
    assert y.grad_fn.op.name == "view_set"
    assert y.grad_fn.inputs[0].grad_fn.op.name == "multiply_scalar"
    np.testing.assert_array_equal(y.numpy(), [0.0, 2.0, 3.0, 3.0])
    x2 = tf.tensor(np.arange(4.0), requires_grad=True)
    with pytest.raises(tf.InPlaceError, match="leaf"):
        x2[1:3] += 1.0      # still refused on a leaf
