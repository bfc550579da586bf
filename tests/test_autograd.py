"""Reverse mode: grad/backward semantics, seeds, graph lifetime, grad mode, errors."""
import threading

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, random_array


def leaf(a, dtype=None):
    return tf.tensor(a, dtype=dtype, requires_grad=True)


# ---- grad vs backward -------------------------------------------------------------------

def test_readme_example():
    a = np.array([0.5, -1.0, 2.0, 0.1])
    x = leaf(a)
    out = x.exp().sum()
    assert out.ndim == 0
    (gx,) = tf.grad([out], [x], retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), np.exp(a))
    assert x.grad is None                      # grad never touches .grad
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a))


def test_seed_spellings():
    x = leaf([1.0, 2.0])
    out = (x * x).sum()
    (g,) = tf.grad([out], [x], None, tf.GradOptions(retain_graph=True))
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    out.backward(None, [x], tf.BackwardOptions())
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    y = leaf(3.0)
    (gy,) = tf.grad(y * y, y)                   # single tensors instead of lists
    assert gy.item() == 6.0


def test_backward_accumulates_and_zero_grad():
    x = leaf([1.0, 2.0])
    out = (3.0 * x).sum()
    out.backward(retain_graph=True)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    x.zero_grad()
    assert x.grad is None


def test_backward_inputs_restricts_accumulation():
    x, y = leaf([1.0]), leaf([2.0])
    out = (x * y).sum()
    out.backward(inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), [2.0])
    assert y.grad is None


def test_grad_of_intermediate_and_unreachable():
    x, z = leaf([1.0, 2.0]), leaf([5.0])
    h = x * 2.0
    out = (h * h).sum()
    gh, gx, gz, gc = tf.grad([out], [h, x, z, tf.tensor([1.0])])
    np.testing.assert_allclose(gh.numpy(), 2 * h.numpy())
    np.testing.assert_allclose(gx.numpy(), 8 * x.numpy())
    assert gz is None and gc is None


def test_multiple_outputs_with_seeds_and_duplicate_inputs():
    x = leaf([1.0, 2.0, 3.0])
    y1, y2 = x * 2.0, x.sin()
    g1, g2 = tf.grad([y1, y2], [x, x], [np.ones(3), np.array([1.0, 0.0, 2.0])])
    expected = 2.0 + np.cos(x.numpy()) * [1.0, 0.0, 2.0]
    np.testing.assert_allclose(g1.numpy(), expected)
    np.testing.assert_allclose(g2.numpy(), expected)


def test_shared_subexpression_accumulates():
    x = leaf(2.0)
    y = x * x
    out = y * y + y          # x^4 + x^2
    (g,) = tf.grad(out, x)
    assert g.item() == pytest.approx(4 * 8 + 2 * 2)


def test_returned_gradient_does_not_alias():
    x = leaf(np.ones(3))
    seed = np.ones(3)
    (g,) = tf.grad(x + 1.0, x, seed)
    g.numpy()[0] = 5.0
    assert seed[0] == 1.0
    s = leaf(2.0)
    (g1,) = tf.grad(s, s)
    g1.numpy()[...] = 7.0     # must not corrupt the cached implicit seed
    (g2,) = tf.grad(s, s)
    assert g2.item() == 1.0


def test_seed_is_not_copied_but_never_aliased_or_written():
    # The seed reaches the pullbacks as a read-only view (no copy); a gradient that is a
    # view of it is copied before it reaches the user.
    x = leaf(np.arange(6.0))
    seed = tf.tensor(np.ones((2, 3)))
    (g,) = tf.grad(x.reshape(2, 3), x, seed)      # reshape's pullback returns a view
    assert not np.shares_memory(g.numpy(), seed.numpy()) and g.numpy().flags.writeable
    g.numpy()[0] = 5.0
    np.testing.assert_array_equal(seed.numpy(), np.ones((2, 3)))


def test_pullback_writing_into_its_cotangent_fails_loudly():
    from tenferro._engine import apply1
    from tenferro._ops.registry import Op

    def bad_vjp(ctx, needs, gs, xs, ys):
        gs[0] *= 2.0                                  # a rule must never do this
        return (gs[0],)

    op = Op("test_inplace", bad_vjp, lambda ctx, ts, xs, ys: (ts[0],))
    x = leaf(np.ones(3))
    seed = np.ones(3)
    with pytest.raises(ValueError, match="read-only"):
        tf.grad(apply1(op, (x,), np.ones(3)), x, seed)
    np.testing.assert_array_equal(seed, np.ones(3))


# ---- implicit seed and seed validation ----------------------------------------------------

def test_implicit_seed_only_for_one_element():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = tf.grad((x * x).sum(keepdims=True), x)       # shape (1,) is one element
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0, 6.0])
    y = x * 2.0
    with pytest.raises(tf.ShapeError, match=r"shape \(3,\)"):
        tf.grad(y, x)
    with pytest.raises(tf.ShapeError, match="grad_outputs"):
        y.backward()
    assert x.grad is None
    y.backward(np.ones(3))                    # the graph is intact after the error
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_implicit_seed_rejects_complex_output():
    z = leaf([1 + 1j])
    with pytest.raises(tf.DTypeError, match="real"):
        tf.grad((z * z).sum(), z)


@pytest.mark.parametrize("seed,err", [
    (np.ones(2), tf.ShapeError),
    (np.ones(3, dtype=complex), tf.DTypeError),
    (np.array(["a", "b", "c"]), tf.DTypeError),
    (object(), tf.DTypeError),
])
def test_bad_seed_leaves_state_untouched(seed, err):
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    with pytest.raises(err):
        y.backward(seed)
    assert x.grad is None
    y.backward(np.ones(3))
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


def test_seed_count_mismatch():
    x = leaf([1.0])
    with pytest.raises(tf.ShapeError, match="grad_outputs"):
        tf.grad([x * 2.0], [x], [np.ones(1), np.ones(1)])


def test_seed_dtype_cast_to_output():
    x = leaf(np.ones(2, np.float32))
    (g,) = tf.grad(x * 3.0, x, np.ones(2))        # float64 seed, float32 output
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), [3.0, 3.0])


# ---- graph lifetime ---------------------------------------------------------------------

def test_second_backward_without_retain_raises_and_keeps_grad():
    x = leaf([1.0, 2.0])
    out = (x * x).sum()
    out.backward()
    before = x.grad.numpy().copy()
    with pytest.raises(tf.GraphFreedError, match="retain_graph=True"):
        out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), before)
    with pytest.raises(tf.GraphFreedError):
        tf.grad(out, x)
    assert isinstance(tf.GraphFreedError("x"), RuntimeError)


def test_retain_graph_allows_repeat_and_partial_reuse():
    x = leaf([1.0, 2.0])
    y = x.exp()
    a = y.sum()
    a.backward(retain_graph=True)
    b = (y * 2.0).sum()
    b.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp([1.0, 2.0]))


def test_freed_part_is_reported_from_another_root():
    x = leaf([1.0, 2.0])
    y = x.exp()
    y.sum().backward()                        # frees exp and sum
    with pytest.raises(tf.GraphFreedError):
        (y * 2.0).sum().backward()


def test_backward_on_constant_raises():
    with pytest.raises(tf.TenferroError, match="requires_grad"):
        tf.tensor([1.0]).sum().backward()


# ---- create_graph -----------------------------------------------------------------------

def test_grad_of_grad():
    x = leaf([0.5, 2.0])
    y = (x * x * x).sum()
    (g,) = tf.grad(y, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    (h,) = tf.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.numpy())


def test_create_graph_backward_makes_grad_differentiable():
    x = leaf(1.5)
    (x.sin() * x).backward(create_graph=True)
    g = x.grad                        # sin x + x cos x
    assert g.requires_grad
    (h,) = tf.grad(g, x)              # 2 cos x - x sin x
    assert h.item() == pytest.approx(2 * np.cos(1.5) - 1.5 * np.sin(1.5))


def test_third_order():
    x = leaf(0.7)
    (g,) = tf.grad(x.exp() * x, x, create_graph=True)
    (h,) = tf.grad(g, x, create_graph=True)
    (t,) = tf.grad(h, x)
    assert t.item() == pytest.approx(np.exp(0.7) * (0.7 + 3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_create_graph_common_call_equals_general_path(dtype):
    # tf.grad(outs, ins, create_graph=True) with implicit seeds takes a compiled path;
    # options=GradOptions(create_graph=True) the general one: the same gradients, the
    # same graph behind them (second derivatives), None for an unreachable input, the
    # output itself as an input, and the graph kept (retain_graph)
    x = leaf(np.array([0.3, -0.7, 1.1], dtype))
    y = leaf(np.array([2.0], dtype))
    unused = leaf(np.array([1.0], dtype))
    opts = tf.GradOptions(create_graph=True)

    def outs():
        a = (x.exp() * x).sum()
        b = (x.sin() * y).sum()
        return a, b

    a, b = outs()
    fast = tf.grad([a, b], [x, y, unused], create_graph=True)
    a2, b2 = outs()
    slow = tf.grad([a2, b2], [x, y, unused], options=opts)
    assert fast[2] is None and slow[2] is None
    for f, s_ in zip(fast[:2], slow[:2]):
        assert f.requires_grad and f.dtype == s_.dtype
        np.testing.assert_array_equal(f.numpy(), s_.numpy())
        (h1,) = tf.grad(f.sum(), [x], retain_graph=True)
        (h2,) = tf.grad(s_.sum(), [x], retain_graph=True)
        np.testing.assert_array_equal(h1.numpy(), h2.numpy())
    again = tf.grad([a], [x], create_graph=True)          # the graph was kept
    np.testing.assert_array_equal(again[0].numpy(),
                                  tf.grad([a2], [x], options=opts)[0].numpy())
    (same,) = tf.grad([a], [a], create_graph=True)       # d a / d a = 1
    assert same.item() == 1.0


# ---- tensors, dtypes, conventions -------------------------------------------------------

def test_dtype_promotion_and_cotangent_dtypes():
    a = leaf(np.ones(3, np.float32))
    b = leaf(np.ones(3, np.float64))
    c = leaf(np.ones(3, np.complex64))
    y = a * b
    assert y.dtype == np.float64
    z = (a * c)
    assert z.dtype == np.complex64
    ga, gb = tf.grad(y.sum(), [a, b])
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    ga, gc = tf.grad((z * z.conj()).real.sum(), [a, c])
    assert ga.dtype == np.float32 and gc.dtype == np.complex64


def test_complex_convention_matches_pytorch():
    z0 = np.array([1 + 2j, -0.5 + 0.25j])
    z = leaf(z0)
    (g,) = tf.grad((z.abs() ** 2).sum(), z)
    np.testing.assert_allclose(g.numpy(), 2 * z0)
    (g,) = tf.grad((z * z).real.sum(), z)            # Re z² -> 2 conj(z)
    np.testing.assert_allclose(g.numpy(), 2 * z0.conj())


def test_real_input_through_complex_computation_gets_real_gradient():
    x = leaf([0.3, -1.2])
    y = (x * (1 + 2j)).abs().sum()
    (g,) = tf.grad(y, x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), np.sqrt(5) * np.sign([0.3, -1.2]))


def test_broadcast_cotangent_summed_back():
    a, b = leaf(np.ones((3, 1))), leaf(np.arange(4.0))
    ga, gb = tf.grad((a * b).sum(), [a, b])
    assert ga.shape == (3, 1) and gb.shape == (4,)
    np.testing.assert_allclose(ga.numpy(), np.full((3, 1), 6.0))
    np.testing.assert_allclose(gb.numpy(), np.full(4, 3.0))


def test_rank0_scalars():
    x = leaf(2.0)
    assert x.shape == () and x.ndim == 0 and x.size == 1
    y = x * x
    assert float(y) == 4.0 and y.item() == 4.0
    (g,) = tf.grad(y, x)
    assert g.shape == () and g.item() == 4.0


@pytest.mark.parametrize("data,dtype", [([1, 2], np.int64), ([True, False], np.bool_),
                                        ([1.0, 2], np.float64), ([1j], np.complex128),
                                        (np.arange(3, dtype=np.int32), np.int32),
                                        (np.arange(3, dtype=np.uint8), np.uint8),
                                        (np.ones(2, np.float32), np.float32),
                                        (np.ones(2, np.complex64), np.complex64)])
def test_tensor_dtypes(data, dtype):
    assert tf.tensor(data).dtype == dtype


@pytest.mark.parametrize("data", [np.ones(2, np.float16), np.array([object()]),
                                  np.array(["a"]), np.ones(2, np.longdouble)])
def test_unsupported_dtypes_raise(data):
    with pytest.raises(tf.DTypeError):
        tf.tensor(data)
    with pytest.raises(TypeError):          # DTypeError is also a TypeError
        tf.as_tensor(data)


def test_explicit_dtype_and_as_tensor_no_copy():
    a = np.ones(3)
    assert tf.as_tensor(a).numpy() is a
    assert tf.tensor(a).numpy() is not a
    assert tf.tensor([1, 2], dtype=np.complex128).dtype == np.complex128
    with pytest.raises(tf.DTypeError):
        tf.tensor([1 + 1j], dtype=np.float64)
    assert tf.tensor([1.5], dtype=np.int64).tolist() == [1]     # NumPy's cast
    with pytest.raises(tf.DTypeError):
        tf.tensor([1.0], dtype=np.float16)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint32, np.bool_])
def test_integer_tensors_do_not_require_grad(dtype):
    with pytest.raises(tf.DTypeError, match="dtype=tf.float64"):
        tf.tensor([1, 0], dtype=dtype, requires_grad=True)
    t = tf.tensor([1, 0], dtype=dtype)
    with pytest.raises(tf.DTypeError):
        t.requires_grad = True
    assert not t.requires_grad


def test_leaf_flags_detach_and_set_requires_grad():
    x = tf.tensor([1.0, 2.0])
    assert not x.requires_grad and x.is_leaf
    assert x.set_requires_grad(True) is x and x.requires_grad
    y = x * 2.0
    assert y.requires_grad and not y.is_leaf
    d = y.detach()
    assert not d.requires_grad and np.shares_memory(d.numpy(), y.numpy())
    y.set_requires_grad(False)
    assert not y.requires_grad
    assert tf.grad((y * 2.0).sum(), x) == [None]
    x.requires_grad = False
    assert not x.requires_grad


def test_numpy_interop():
    x = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert isinstance(np.exp(x), tf.Tensor) and np.exp(x).requires_grad
    np.testing.assert_array_equal(np.asarray(x.detach()), x.numpy())
    with pytest.raises(tf.UnsupportedADError, match="drop its gradient"):
        np.asarray(x)                       # would silently lose the gradient
    with tf.no_grad():
        assert np.asarray(x) is x.numpy()   # nothing is recorded: nothing is lost
    assert isinstance(np.ones(2) + x, tf.Tensor)
    assert "requires_grad=True" in repr(x)
    with pytest.raises(tf.UnsupportedADError, match="no differentiable tenferro version"):
        np.intersect1d(x, x)
    np.testing.assert_array_equal(np.intersect1d(x.detach(), x.detach()),
                                  np.intersect1d(x.numpy(), x.numpy()))


# ---- grad mode ----------------------------------------------------------------------------

def test_no_grad_and_enable_grad():
    x = leaf([1.0])
    with tf.no_grad():
        assert not tf.is_grad_enabled()
        y = x * 2.0
        with tf.enable_grad():
            z = x * 2.0
    assert tf.is_grad_enabled()
    assert not y.requires_grad and z.requires_grad

    @tf.no_grad()
    def f(t):
        return t * 3.0
    assert not f(x).requires_grad


def test_grad_mode_is_thread_local():
    seen = []
    with tf.no_grad():
        th = threading.Thread(target=lambda: seen.append(tf.is_grad_enabled()))
        th.start()
        th.join()
        assert not tf.is_grad_enabled()
    assert seen == [True]


def test_grad_mode_restored_after_exception():
    with pytest.raises(RuntimeError):
        with tf.no_grad():
            raise RuntimeError
    assert tf.is_grad_enabled()


# ---- vjp and value_and_grad ---------------------------------------------------------------

def test_vjp():
    a = np.array([0.2, 0.4])
    out, pullback = tf.vjp(lambda x, y: x * y.sin(), a, np.array([1.0, 2.0]))
    np.testing.assert_allclose(out.numpy(), a * np.sin([1.0, 2.0]))
    gx, gy = pullback(np.array([1.0, 1.0]))
    np.testing.assert_allclose(gx.numpy(), np.sin([1.0, 2.0]))
    np.testing.assert_allclose(gy.numpy(), a * np.cos([1.0, 2.0]))
    gx2, _ = pullback(np.array([2.0, 0.0]))     # callable again
    np.testing.assert_allclose(gx2.numpy(), [2 * np.sin(1.0), 0.0])
    _, pb = tf.vjp(lambda x, y: x * 2.0, a, a)
    np.testing.assert_array_equal(pb(np.ones(2))[1].numpy(), np.zeros(2))   # unused -> zeros


def test_value_and_grad_with_scipy_minimize():
    from scipy.optimize import minimize
    target = np.array([1.0, -2.0, 0.5])

    def loss(x):
        r = x - target
        return (r * r).sum() + (x[0] * x[1] - 1.0) ** 2 * 0.0

    fg = tf.value_and_grad(lambda x: ((x - target) ** 2).sum() + x.cos().sum() * 0.1)
    v, g = fg(np.zeros(3))
    assert isinstance(v, float) and isinstance(g, np.ndarray) and g.shape == (3,)
    res = minimize(fg, np.zeros(3), jac=True, method="BFGS")
    assert res.success
    # stationary point of the loss: 2(x - t) - 0.1 sin x = 0
    np.testing.assert_allclose(2 * (res.x - target) - 0.1 * np.sin(res.x), 0, atol=1e-5)


def test_value_and_grad_tensor_in_tensor_out_and_argnums():
    f = tf.value_and_grad(lambda x, y: (x * y).sum(), argnums=(0, 1))
    v, (gx, gy) = f(tf.tensor([1.0, 2.0]), tf.tensor([3.0, 4.0]))
    assert isinstance(v, tf.Tensor) and v.item() == 11.0
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])


def test_check_grads_on_composite():
    def f(x, y):
        return ((x * y).sin() + (x / (y * y + 1.0))).sum(axis=0)
    for dt in (np.float64, np.complex128):
        check_grads(f, [random_array((3, 2), dt, 1), random_array((3, 2), dt, 2)])


def test_set_grad_enabled_call_context_and_decorator():
    # PyTorch semantics: a plain call switches recording at once; a with-block restores
    # the mode of before; as a decorator only the function's calls see the mode.
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    assert tf.is_grad_enabled()
    try:
        tf.set_grad_enabled(False)
        assert not tf.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        tf.set_grad_enabled(True)
    assert tf.is_grad_enabled() and (x * 2).requires_grad
    with tf.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with tf.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not tf.is_grad_enabled()
    assert tf.is_grad_enabled()

    @tf.set_grad_enabled(False)
    def double(t):
        return t * 2

    assert tf.is_grad_enabled()
    assert not double(x).requires_grad
    assert tf.is_grad_enabled()
