"""Sparse cotangents (tenferro/_sparse.py): the pullbacks of indexing, take,
take_along_axis, diagonal and trace return a SparseCotangent that the tape adds into one
dense buffer (one sparse_sum op under create_graph=True)."""
import numpy as np
import pytest

import tenferro as tf
from tenferro import _sparse
from tenferro._kernels import tape_twin
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.complex128]

# keys of every kind: ints, negative ints, slices, None, Ellipsis, masks, integer arrays
# with repeated positions (those accumulate)
KEYS = [
    (1, 2, 0),
    (-1, slice(None), 1),
    (slice(1, 3), None, Ellipsis),
    (Ellipsis, 2),
    (np.array([0, 0, 2, 1, 0]),),
    (np.array([1, 1]), slice(None), np.array([2, 2])),
    (np.array([[True, False, True, False], [False] * 4, [True] * 4]),),
    (0, np.array([3, 3, 0])),
]


def _np_key(key):
    return key if any(k is Ellipsis for k in key) else key + (Ellipsis,)


def _many_uses(x, weights):
    """Σ_k Re-valued weights_k · x[KEYS[k]] (a real loss of 2 * len(KEYS) + 3 indexings)."""
    total = 0.0
    for key, w in zip(KEYS, weights):
        total = total + (x[key] * w).sum()
    total = total + x[0, 0, 0] * 2.0 + x[0, 0, 0] + (x[1] * x[1]).sum()   # repeats + dense
    return tf.real(total) if np.iscomplexobj(x.numpy()) else total


def _reference_gradient(x0, weights):
    """The same gradient of a real x accumulated densely by NumPy, one np.add.at a key."""
    g = np.zeros_like(x0)
    for key, w in zip(KEYS, weights):
        np.add.at(g, _np_key(key), np.broadcast_to(w, x0[_np_key(key)].shape))
    g[0, 0, 0] += 3.0
    g[1] += 2 * x0[1]
    return g


def _weights(x0, dtype, rng):
    return [random_array(x0[_np_key(key)].shape, dtype, rng) for key in KEYS]


@pytest.mark.parametrize("dtype", DTYPES)
def test_many_index_uses_equal_dense_reference(dtype):
    rng = np.random.default_rng(0)
    x0 = random_array((3, 4, 5), dtype, rng)
    ws = _weights(x0, dtype, rng)
    x = tf.tensor(x0, requires_grad=True)
    (g,) = tf.grad(_many_uses(x, ws), [x])
    assert type(g) is tf.Tensor and type(g._data) is np.ndarray and g.dtype == dtype
    if dtype == np.complex128:
        # a real loss of complex x: the gradient's real inner product with a direction v
        # is the directional derivative (docs/design.md#complex-numbers), checked by a
        # central difference
        v = random_array(x0.shape, dtype, rng)
        h = 1e-6
        fd = (float(_many_uses(tf.tensor(x0 + h * v), ws))
              - float(_many_uses(tf.tensor(x0 - h * v), ws))) / (2 * h)
        np.testing.assert_allclose(np.real(np.vdot(g.numpy(), v)), fd, rtol=1e-7)
    else:
        np.testing.assert_allclose(g.numpy(), _reference_gradient(x0, ws), rtol=1e-13,
                                   atol=1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
def test_many_index_uses_low_precision(dtype):
    rng = np.random.default_rng(5)
    x0 = random_array((3, 4, 5), dtype, rng)
    ws = _weights(x0, np.float64, rng)
    check_low_precision(lambda x: _many_uses(x, [w.astype(x.dtype) for w in ws]), [x0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_many_index_uses_first_and_second_order(dtype):
    rng = np.random.default_rng(1)
    x0 = random_array((3, 4, 5), dtype, rng)
    ws = _weights(x0, dtype, rng)
    check_grads(lambda x: _many_uses(x, ws) * _many_uses(x, ws), [x0], order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_diagonal_trace_many_uses(dtype):
    rng = np.random.default_rng(2)
    a0 = random_array((4, 4, 3), dtype, rng)
    idx = np.array([[0, 3, 3], [1, 1, 0]])

    def f(a):
        out = tf.take(a, [2, 2, 0], axis=1).sum() * 1.5
        out = out + tf.take_along_axis(a, np.broadcast_to(idx[:, None, :], (2, 4, 3)),
                                       axis=0).sum()
        out = out + (tf.diagonal(a, 0, 0, 1) ** 2).sum() + tf.diagonal(a, 1, 0, 1).sum()
        out = out + tf.trace(a, -1, 0, 1).sum() + tf.take(a, [1, 1], axis=2).sum()
        out = out + (a * a).sum()        # a dense contribution among the sparse ones
        for i in range(4):
            out = out + a[i, i, 0] * a[i, 0, 1]
        return tf.real(out) if dtype == np.complex128 else out

    check_grads(f, [a0], order=2)


def test_mixed_dense_first_and_sparse_first():
    # dense then sparse, sparse then dense, sparse then dense then sparse in one slot
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((4, 3))
    for f in (lambda x: (x * x).sum() + x[1, 2] * 3.0,
              lambda x: x[1, 2] * 3.0 + (x * x).sum(),
              lambda x: x[0].sum() + (x * x).sum() + x[[0, 0]].sum() + x[:, 1].sum()):
        x = tf.tensor(x0, requires_grad=True)
        (g,) = tf.grad(f(x), [x])
        h = 1e-6
        fd = np.zeros_like(x0)
        for i in np.ndindex(x0.shape):
            e = np.zeros_like(x0)
            e[i] = h
            fd[i] = (float(f(tf.tensor(x0 + e))) - float(f(tf.tensor(x0 - e)))) / (2 * h)
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-7, atol=1e-8)


def test_grad_of_intermediate_and_accumulation_over_two_backwards():
    x0 = np.arange(6.0).reshape(2, 3)
    x = tf.tensor(x0, requires_grad=True)
    y = x * 2.0                   # a non-leaf target that receives sparse cotangents
    loss = y[0, 1] + y[1].sum() + y[[0, 0], [2, 2]].sum()
    gy, gx = tf.grad(loss, [y, x], retain_graph=True)
    expected_y = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(gy.numpy(), expected_y)
    np.testing.assert_array_equal(gx.numpy(), 2 * expected_y)
    # retain_graph: the same pass again gives the same result (no state kept from the first)
    (gx2,) = tf.grad(loss, [x], retain_graph=True)
    np.testing.assert_array_equal(gx2.numpy(), 2 * expected_y)
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 4 * expected_y)
    # a leaf indexed directly accumulates into .grad as well
    z = tf.tensor(x0, requires_grad=True)
    z[1, 1].backward()
    (z[1, 1] + z[0].sum()).backward()
    np.testing.assert_array_equal(z.grad.numpy(), [[1.0, 1.0, 1.0], [0.0, 2.0, 0.0]])


def test_results_are_fresh_arrays():
    # the densified buffer is handed out; two gradients never share memory
    x = tf.tensor(np.zeros(5), requires_grad=True)
    g1 = tf.grad(x[1] + x[2], [x])[0]
    g2 = tf.grad(x[1] + x[2], [x])[0]
    assert not np.shares_memory(g1.numpy(), g2.numpy())
    g1._data[0] = 7.0
    assert g2.numpy()[0] == 0.0


def test_custom_vjp_bwd_sees_dense_cotangents():
    seen = []

    @tf.custom_vjp
    def double(x):
        return x * 2.0

    def fwd(x):
        return double(x), None

    def bwd(res, g):
        seen.append(type(g))
        return (g * 2.0,)

    double.defvjp(fwd, bwd)
    x = tf.tensor(np.arange(4.0), requires_grad=True)
    y = double(x)
    (g,) = tf.grad(y[1] + y[[3, 3]].sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [0.0, 2.0, 0.0, 4.0])
    assert seen and all(t is not _sparse.SparseCotangent for t in seen)


def test_one_buffer_for_many_uses(monkeypatch):
    """576 scalar indexings of a (24, 24, 24, 24) tensor: one dense buffer, no per-use
    dense scatter (counted, not timed)."""
    calls = {"zeros": 0}
    real_np = np

    class CountingNumpy:
        def __getattr__(self, name):
            return getattr(real_np, name)

        @staticmethod
        def zeros(*a, **k):
            calls["zeros"] += 1
            return real_np.zeros(*a, **k)

    monkeypatch.setattr(_sparse, "np", CountingNumpy())
    from tenferro._ops import structure
    monkeypatch.setattr(structure, "_scatter_np",
                        lambda *a: pytest.fail("dense scatter in a backward pass"))
    n = 24
    x = tf.tensor(np.ones((n,) * 4), requires_grad=True)
    total = tf.zeros(())
    for a in range(n):
        for b in range(n):
            total = total + x[a, b, a, b]
    (g,) = tf.grad(total, [x], retain_graph=True)
    assert calls["zeros"] == 1
    expected = np.zeros((n,) * 4)
    for a in range(n):
        for b in range(n):
            expected[a, b, a, b] = 1.0
    np.testing.assert_array_equal(g.numpy(), expected)
    # create_graph: one sparse_sum node with one input per use, allocated once as well
    (g,) = tf.grad(total, [x], create_graph=True)
    assert calls["zeros"] == 2
    assert g.grad_fn is None or g.grad_fn.op.name == "sparse_sum"
    np.testing.assert_array_equal(g.numpy(), expected)


def test_create_graph_records_one_sparse_sum_node():
    x = tf.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    loss = sum(x[i, j] ** 3 for i in range(3) for j in range(4) if (i + j) % 2 == 0)
    (g,) = tf.grad(loss, [x], create_graph=True)
    # the six scalar cotangents 3 x_ij^2 (recorded, they depend on x) are added into the
    # gradient by one sparse_sum op
    node = g.grad_fn
    assert node.op.name == "sparse_sum" and len(node.inputs) == 6
    assert node is not None
    names = set()
    stack = [node]
    while stack:
        n = stack.pop()
        names.add(n.op.name if n.op is not None else "leaf")
        stack.extend(t._node for t in n.inputs if t._node is not None)
    assert "sparse_sum" in names and "index_add" not in names
    mask = (np.add.outer(np.arange(3), np.arange(4)) % 2 == 0)
    np.testing.assert_array_equal(g.numpy(), np.where(mask, 3 * x.numpy() ** 2, 0.0))
    (h,) = tf.grad(g.sum(), [x])
    np.testing.assert_array_equal(h.numpy(), np.where(mask, 6 * x.numpy(), 0.0))


def test_forward_over_reverse_through_sparse_sum():
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((3, 4))
    v = rng.standard_normal((3, 4))

    def f(x):
        return (x[0] ** 3).sum() + x[1, 2] * x[2, 3] + (x[[0, 0, 2]] ** 2).sum()

    _, _, hv = tf.hvp(f, (tf.tensor(x0),), (tf.tensor(v),))
    hv = hv[0] if isinstance(hv, (tuple, list)) else hv
    h = 1e-5
    x = tf.tensor(x0 + h * v, requires_grad=True)
    gp = tf.grad(f(x), [x])[0].numpy()
    x = tf.tensor(x0 - h * v, requires_grad=True)
    gm = tf.grad(f(x), [x])[0].numpy()
    np.testing.assert_allclose(hv.numpy(), (gp - gm) / (2 * h), rtol=1e-6, atol=1e-8)


def test_many_more_uses_than_entries_fold_into_the_buffer():
    # parts holding more entries than the tensor are folded into the dense buffer
    x = tf.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    total = 0.0
    for _ in range(40):
        total = total + x[[0, 1, 1, 2, 0]].sum()
    (g,) = tf.grad(total, [x], retain_graph=True)
    np.testing.assert_array_equal(g.numpy(), [80.0, 80.0, 40.0])
    (g,) = tf.grad(total, [x], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [80.0, 80.0, 40.0])


def test_sparse_cotangent_add_and_densify_directly():
    from tenferro._ops.structure import _GETITEM_SCATTER
    s = _sparse.SparseCotangent((2, 3), np.float64, _GETITEM_SCATTER,
                                ((0, 1, Ellipsis), True), np.float64(2.0))
    s.add(np.ones((2, 3)))
    s.add(_sparse.SparseCotangent((2, 3), np.float64, _GETITEM_SCATTER,
                                  ((np.array([1, 1]), Ellipsis), False), np.ones((2, 3))))
    # complex values for a real target keep their real part (docs/design.md#dtypes)
    s.add(_sparse.SparseCotangent((2, 3), np.float64, _GETITEM_SCATTER,
                                  ((0, 0, Ellipsis), True), np.array(1.0 + 5.0j)))
    d = s.densify()
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d, [[2.0, 3.0, 1.0], [3.0, 3.0, 3.0]])
    assert "SparseCotangent" in repr(s)


def _gradients(seed):
    rng = np.random.default_rng(seed)
    x0 = random_array((3, 4, 5), np.float64, rng)
    ws = _weights(x0, np.float64, rng)
    x = tf.tensor(x0, requires_grad=True)
    loss = _many_uses(x, ws) ** 2
    (g1,) = tf.grad(loss, [x], retain_graph=True)
    loss.backward(retain_graph=True)
    (g2,) = tf.grad(loss, [x], create_graph=True)
    (h,) = tf.grad((g2 * g2).sum(), [x])
    return [g1.numpy(), x.grad.numpy(), g2.numpy(), h.numpy()]


@pytest.mark.parametrize("seed", range(2))
def test_pure_python_twin_agrees(seed, use_tape):
    compiled = _gradients(seed)
    use_tape(tape_twin)
    twin = _gradients(seed)
    for a, b in zip(compiled, twin):
        np.testing.assert_array_equal(a, b)   # same algorithm, same additions


def test_backward_create_graph_accumulates_dense_grad():
    # .grad from backward(create_graph=True) is a dense, differentiable Tensor
    x = tf.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    loss = x[0] ** 3 + (x[[1, 1]] ** 2).sum()
    loss.backward(create_graph=True)
    g = x.grad
    assert type(g) is tf.Tensor and type(g._data) is np.ndarray
    np.testing.assert_array_equal(g.numpy(), [3.0, 8.0, 0.0])
    (h,) = tf.grad(g.sum(), [x], retain_graph=True)
    np.testing.assert_array_equal(h.numpy(), [6.0, 4.0, 0.0])
    loss.backward()                 # a second pass adds into .grad
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 16.0, 0.0])
