"""Reductions: values against NumPy/SciPy, derivatives of every order, ties, zeros, errors."""
import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings, strategies as st

import tenferro as tf
from tenferro._ops import reductions as R
from tenferro.testing import check_grads, check_low_precision, random_array

OPS = ["sum", "mean", "var", "std", "prod", "max", "min", "logsumexp"]
REAL_ONLY = {"max", "min"}
NP = {"sum": np.sum, "mean": np.mean, "var": np.var, "std": np.std, "prod": np.prod,
      "max": np.max, "min": np.min}

# (shape, axis): scalars, vectors, matrices, 3-d with adjacent and separate axes, axis=()
CASES = [((), None), ((), ()), ((5,), None), ((5,), 0), ((5,), -1), ((3, 4), None),
         ((3, 4), 0), ((3, 4), 1), ((3, 4), (0, 1)), ((3, 4), ()), ((2, 3, 4), 1),
         ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 1)), ((2, 3, 4), (0, 1, 2))]
GRAD_CASES = [((5,), None, False), ((3, 4), 1, False), ((3, 4), 0, True),
              ((2, 3, 4), (0, 2), False), ((2, 3, 4), (1, 2), True), ((3, 4), (), False)]


def _dtypes(name):
    return [np.float64] if name in REAL_ONLY else [np.float64, np.complex128]


def _count(shape, axis):
    return int(np.prod([shape[a] for a in R.normalize_axis(axis, len(shape))]))


def reference(name, x, axis, keepdims, ddof=0):
    if name == "logsumexp":
        if axis == () or x.ndim == 0:
            return x.copy()
        return scipy.special.logsumexp(x, axis=axis, keepdims=keepdims)
    if name in ("var", "std"):
        return NP[name](x, axis=axis, ddof=ddof, keepdims=keepdims)
    return NP[name](x, axis=axis, keepdims=keepdims)


def call(name, x, axis=None, keepdims=False, ddof=0):
    f = getattr(tf, name)
    if name in ("var", "std"):
        return f(x, axis=axis, ddof=ddof, keepdims=keepdims)
    return f(x, axis=axis, keepdims=keepdims)


# ---- values -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_values_match_numpy(name, shape, axis, keepdims):
    dtypes = [np.float64, np.float32] + ([] if name in REAL_ONLY else [np.complex128])
    for dtype in dtypes:
        x = random_array(shape, dtype, rng=1)
        ddofs = [0, 1] if name in ("var", "std") and _count(shape, axis) > 1 else [0]
        for ddof in ddofs:
            got = call(name, x, axis, keepdims, ddof)
            want = np.asarray(reference(name, x, axis, keepdims, ddof))
            assert isinstance(got, tf.Tensor)
            assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
            rtol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name", OPS)
def test_methods_and_numpy_overrides(name):
    x = tf.tensor(random_array((3, 4), rng=2), requires_grad=True)
    want = call(name, x, axis=1, keepdims=True).numpy()
    methods = [name] + {"max": ["amax"], "min": ["amin"]}.get(name, [])
    for m in methods:
        np.testing.assert_array_equal(getattr(x, m)(axis=1, keepdims=True).numpy(), want)
    overrides = {"max": [np.max, np.amax], "min": [np.min, np.amin]}.get(name, [NP.get(name)])
    for fn in overrides:
        if fn is None:
            continue
        y = fn(x, axis=1, keepdims=True)
        assert isinstance(y, tf.Tensor) and y.requires_grad
        np.testing.assert_array_equal(y.numpy(), want)
    assert tf.amax is tf.max and tf.amin is tf.min


def test_var_std_of_complex_are_real():
    x = random_array((4, 3), np.complex64, rng=3)
    for f, ref in ((tf.var, np.var), (tf.std, np.std)):
        y = f(x, axis=0, ddof=1)
        assert y.dtype == np.float32
        np.testing.assert_allclose(y.numpy(), ref(x, axis=0, ddof=1), rtol=1e-5)


def test_axis_empty_tuple_returns_input_values():
    x = random_array((2, 3), rng=4)
    for name in ("sum", "mean", "prod", "max", "min", "logsumexp"):
        np.testing.assert_array_equal(call(name, x, axis=()).numpy(), x)
    for name in ("var", "std"):
        np.testing.assert_array_equal(call(name, x, axis=()).numpy(), np.zeros_like(x))


def test_empty_reductions():
    e = np.zeros((0, 3))
    assert tf.sum(e).item() == 0 and tf.prod(e).item() == 1
    np.testing.assert_array_equal(tf.sum(e, axis=0).numpy(), np.zeros(3))
    np.testing.assert_array_equal(tf.prod(e, axis=0).numpy(), np.ones(3))
    assert np.isnan(tf.mean(e).item())
    assert tf.logsumexp(e).item() == -np.inf
    np.testing.assert_array_equal(tf.logsumexp(e, axis=0).numpy(), np.full(3, -np.inf))
    assert tf.max(e, axis=1).shape == (0,)   # nothing reduced over an empty axis
    for name in ("sum", "mean", "prod", "logsumexp"):
        x = tf.tensor(e, requires_grad=True)
        g, = tf.grad([call(name, x, axis=0)], [x], [np.ones(3)])
        assert g.shape == (0, 3)


# ---- derivatives ------------------------------------------------------------------------

@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("shape,axis,keepdims", GRAD_CASES)
def test_check_grads(name, shape, axis, keepdims):
    for dtype in _dtypes(name):
        x = random_array(shape, dtype, rng=5)
        check_grads(lambda a: call(name, a, axis, keepdims), [x], modes=("rev", "fwd"), order=2)
        if name in ("var", "std") and _count(shape, axis) > 1:
            check_grads(lambda a: call(name, a, axis, keepdims, ddof=1), [x], order=2)


@pytest.mark.parametrize("name", OPS)
def test_check_grads_scalar_input(name):
    for dtype in _dtypes(name):
        x = random_array((), dtype, rng=6)
        check_grads(lambda a: call(name, a), [x], order=2)
        check_grads(lambda a: call(name, a, axis=(), keepdims=True), [x], order=2)
        # a 0-d value inside a larger graph
        check_grads(lambda a: call(name, a.reshape(())), [x.reshape(1)], order=2)


@pytest.mark.parametrize("name", OPS)
def test_low_precision(name):
    for dtype in _dtypes(name):
        x = random_array((3, 4), dtype, rng=7)
        check_low_precision(lambda a: call(name, a, axis=1), [x])
        check_low_precision(lambda a: call(name, a), [x])


def test_prod_third_order_and_composite():
    # third order runs through the rules of the recurrences behind prod's derivative
    check_grads(lambda a: tf.prod(a, axis=(0, 2)), [random_array((2, 3, 2), np.complex128, 8)],
                order=3)
    check_grads(lambda a: tf.prod(a), [np.array([1.5, 0.0, -2.0, 0.0, 0.5])], order=3)


# ---- max / min ties ---------------------------------------------------------------------

def _grad(f, x, seed=None):
    x = tf.tensor(x, requires_grad=True)
    y = f(x)
    g, = tf.grad([y], [x], None if seed is None else [seed])
    return g.numpy()


def test_max_min_ties_split_evenly():
    np.testing.assert_array_equal(_grad(tf.max, [1.0, 3.0, 3.0]), [0, 0.5, 0.5])
    np.testing.assert_array_equal(_grad(tf.min, [2.0, 1.0, 1.0, 5.0]), [0, 0.5, 0.5, 0])
    np.testing.assert_array_equal(_grad(lambda a: tf.amax(a, axis=()), [3.0, 3.0], np.ones(2)),
                                  [1, 1])
    np.testing.assert_array_equal(_grad(tf.max, np.ones((2, 2))), np.full((2, 2), 0.25))
    g = _grad(lambda a: tf.max(a, axis=1, keepdims=True), [[1.0, 3.0, 3.0], [4.0, 4.0, 4.0]],
              seed=np.array([[2.0], [3.0]]))
    np.testing.assert_allclose(g, [[0, 1, 1], [1, 1, 1]], rtol=1e-15)


def test_max_min_jvp_averages_tied_tangents():
    _, t = tf.jvp(lambda a: tf.max(a), [tf.tensor([1.0, 3.0, 3.0])], [tf.tensor([10.0, 2.0, 4.0])])
    assert t.item() == 3.0
    _, t = tf.jvp(lambda a: tf.min(a, axis=0), [tf.tensor([[1.0, 2.0], [1.0, 0.0]])],
                  [tf.tensor([[1.0, 5.0], [2.0, 7.0]])])
    np.testing.assert_array_equal(t.numpy(), [1.5, 7.0])


def test_max_second_order_is_zero():
    x = tf.tensor([1.0, 3.0, 3.0, -2.0], requires_grad=True)
    g, = tf.grad([tf.max(x)], [x], create_graph=True)
    h, = tf.grad([tf.sum(g * tf.tensor([1.0, 2.0, 3.0, 4.0]))], [x])
    assert h is None or np.array_equal(h.numpy(), np.zeros(4))
    _, _, hv = tf.hvp(lambda a: tf.max(a) ** 2, [tf.tensor([1.0, 3.0, 3.0])],
                      [tf.tensor([1.0, 1.0, 1.0])])
    np.testing.assert_allclose(hv[0].numpy(), [0, 1, 1])   # d/dx (2·y·w)·v = 2·w·(w·v)


def test_max_with_nan_sends_cotangent_to_nan():
    g = _grad(tf.max, [1.0, np.nan, 2.0])
    np.testing.assert_array_equal(g, [0, 1, 0])


# ---- prod with zeros --------------------------------------------------------------------

def _leave_one_out(x):
    return np.array([np.prod(np.delete(x, i)) for i in range(len(x))])


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 5.0], [2.0, 0.0, 3.0, 0.0], [0.0], [4.0],
                               [0.0, 0.0, 0.0], [1.5, -2.0, 0.5, 3.0]])
def test_prod_gradient_is_exact_with_zeros(x):
    x = np.array(x)
    np.testing.assert_array_equal(_grad(tf.prod, x), _leave_one_out(x))
    _, t = tf.jvp(tf.prod, [tf.tensor(x)], [tf.tensor(np.arange(1.0, len(x) + 1))])
    assert t.item() == pytest.approx(_leave_one_out(x) @ np.arange(1.0, len(x) + 1), abs=0)


def test_prod_complex_gradient_with_zero():
    x = np.array([1 + 2j, 0, 3 - 1j, 2j])
    np.testing.assert_array_equal(_grad(tf.prod, x, seed=np.array(1 + 0j)),
                                  np.conj(_leave_one_out(x)))


def test_prod_rows_with_zeros_over_separate_axes():
    x = np.arange(12.0).reshape(2, 3, 2) - 5.0      # one zero in the (0, 2) slice of j=2
    g = _grad(lambda a: tf.prod(a, axis=(0, 2)), x, seed=np.array([1.0, 2.0, 3.0]))
    want = np.empty_like(x)
    for j in range(3):
        flat = x[:, j, :].ravel()
        want[:, j, :] = (j + 1) * _leave_one_out(flat).reshape(2, 2)
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 5.0], [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0]])
def test_prod_hessian_with_zeros(x):
    # H_ik = Π_{j∉{i,k}} x_j (i ≠ k), H_ii = 0: exact and finite through create_graph
    x = np.array(x)
    n = len(x)
    want = np.array([[0.0 if i == k else np.prod(np.delete(x, [i, k])) for k in range(n)]
                     for i in range(n)])
    xt = tf.tensor(x, requires_grad=True)
    g, = tf.grad([tf.prod(xt)], [xt], create_graph=True)
    rows = [tf.grad([g], [xt], [np.eye(n)[i]], retain_graph=True)[0].numpy() for i in range(n)]
    assert np.all(np.isfinite(rows))
    np.testing.assert_array_equal(np.array(rows), want)
    v = np.arange(1.0, n + 1)
    _, _, hv = tf.hvp(tf.prod, [tf.tensor(x)], [tf.tensor(v)])
    np.testing.assert_allclose(hv[0].numpy(), want @ v, rtol=1e-14)


# ---- std at constant input --------------------------------------------------------------

@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("c", [2.0, 1 - 2j])
def test_std_constant_input_zero_gradient(ddof, c):
    x = np.full(3, c)
    assert tf.std(x, ddof=ddof).item() == 0
    xt = tf.tensor(x, requires_grad=True)
    g, = tf.grad([tf.std(xt, ddof=ddof)], [xt], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))
    h, = tf.grad([tf.sum(tf.real(g))], [xt])
    assert h is None or np.all(np.isfinite(h.numpy()))
    _, t = tf.jvp(lambda a: tf.std(a, ddof=ddof), [tf.tensor(x)], [tf.tensor(np.ones_like(x))])
    assert t.item() == 0
    _, _, hv = tf.hvp(lambda a: tf.std(a, ddof=ddof), [tf.tensor(x)], [tf.tensor(np.ones(3) * c)])
    assert np.all(np.isfinite(hv[0].numpy()))


def test_std_one_constant_row():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]])
    g = _grad(lambda a: tf.std(a, axis=1, ddof=1), x, seed=np.ones(2))
    c = x[0] - x[0].mean()
    np.testing.assert_allclose(g[0], c / (2 * np.std(x[0], ddof=1)), rtol=1e-14)
    np.testing.assert_array_equal(g[1], np.zeros(3))


# ---- logsumexp --------------------------------------------------------------------------

def test_logsumexp_is_stable():
    x = np.array([1000.0, 1000.0])
    assert tf.logsumexp(x).item() == pytest.approx(1000 + np.log(2), rel=1e-15)
    np.testing.assert_allclose(_grad(tf.logsumexp, x), [0.5, 0.5])
    x = np.array([-1000.0, -1001.0])
    assert np.isfinite(tf.logsumexp(x).item())


def test_logsumexp_all_neg_inf():
    x = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    y = tf.logsumexp(x, axis=1)
    np.testing.assert_array_equal(y.numpy(), [-np.inf, 0.0])
    g = _grad(lambda a: tf.logsumexp(a, axis=1), x, seed=np.ones(2))
    np.testing.assert_array_equal(g, [[0, 0], [1, 0]])


def test_logsumexp_gradient_is_softmax():
    x = random_array((3, 5), rng=9)
    soft = np.exp(x - scipy.special.logsumexp(x, axis=1, keepdims=True))
    np.testing.assert_allclose(_grad(lambda a: tf.logsumexp(a, axis=1), x, seed=np.ones(3)),
                               soft, rtol=1e-14)


# ---- errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", OPS)
def test_axis_errors(name):
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        call(name, x, axis=2)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        call(name, x, axis=(0, -3))
    with pytest.raises(tf.ShapeError, match="repeated axis"):
        call(name, x, axis=(1, -1))
    with pytest.raises(tf.ShapeError, match="must be None, an int or a tuple"):
        call(name, x, axis=1.0)
    assert x.grad is None


@pytest.mark.parametrize("name", ["var", "std"])
def test_ddof_too_large(name):
    x = np.ones((2, 3))
    with pytest.raises(tf.ShapeError, match=r"ddof=3 over 3 element"):
        call(name, x, axis=1, ddof=3)
    with pytest.raises(tf.ShapeError, match=r"ddof=1 over 1 element"):
        call(name, np.ones(()), ddof=1)
    with pytest.raises(tf.ShapeError, match="ddof"):
        call(name, np.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError):   # ShapeError is a ValueError, as NumPy users expect
        call(name, x, axis=0, ddof=2)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_max_min_errors(name):
    with pytest.raises(tf.ShapeError, match="zero-length axis"):
        getattr(tf, name)(np.zeros((0, 3)), axis=0)
    with pytest.raises(tf.ShapeError, match="zero-length axis"):
        getattr(tf, name)(np.zeros(0))
    with pytest.raises(tf.DTypeError, match="real tensors only"):
        getattr(tf, name)(np.ones(3, dtype=complex))


# ---- the recurrences behind prod's derivative ---------------------------------------------

def _linscan_loop(a, b, reverse):
    h = np.zeros(a.shape, np.result_type(a, b))
    prev = 0
    order = range(len(a) - 1, -1, -1) if reverse else range(len(a))
    for i in order:
        prev = a[i] * prev + b[i]
        h[i] = prev
    return h


@pytest.mark.parametrize("impl", ["_linscan_np", "_linscan_hs_np", "_linscan_loop_np"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 13])
def test_linscan_matches_sequential_loop(impl, reverse, n):
    scan = getattr(R, impl)
    a = random_array((n, 2), np.complex128, rng=10)
    b = random_array((n, 2), np.float64, rng=11)
    a[n // 2:n // 2 + 1] = 0
    np.testing.assert_allclose(scan(a, b, 0, reverse), _linscan_loop(a, b, reverse),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(scan(a.T, b.T, 1, reverse).T,
                               _linscan_loop(a, b, reverse), rtol=1e-13, atol=1e-13)
    h = scan(a[:, 0], b[:, 1], 0, reverse)                # 1-D
    np.testing.assert_allclose(h, _linscan_loop(a[:, :1], b[:, 1:], reverse)[:, 0],
                               rtol=1e-13, atol=1e-13)
    assert h.dtype == np.complex128


def test_linscan_strategy_switch(monkeypatch):
    # many short recurrences side by side: the loop; a few long ones: Hillis-Steele
    from tenferro.testing import record_calls
    loops = record_calls(monkeypatch, R, "_linscan_loop_np")
    scans = record_calls(monkeypatch, R, "_linscan_hs_np")
    R._linscan_np(np.ones((300, 8)), np.ones((300, 8)), 1, False)
    assert len(loops) == 1 and not scans
    R._linscan_np(np.ones((2, 1000)), np.ones((2, 1000)), 1, True)
    assert len(loops) == 1 and len(scans) == 1
    # both give the same (exact, division-free) result on data with zeros
    a = random_array((64, 50), rng=31)
    a[::7, ::5] = 0
    b = random_array((64, 50), rng=32)
    np.testing.assert_allclose(R._linscan_loop_np(a, b, 1, True),
                               R._linscan_hs_np(a, b, 1, True), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
def test_recurrence_ops_check_grads(reverse):
    a = random_array((4, 3), np.complex128, rng=12)
    b = random_array((4, 3), np.complex128, rng=13)
    check_grads(lambda p, q: R._linscan(p, q, 1, reverse), [a, b], order=2)
    check_grads(lambda p: R._excl(p, 0, reverse), [a], order=2)
    check_grads(lambda p: R._shift(p, 1, reverse), [a], order=2)
    e = R._excl_np(np.array([2.0, 0.0, 3.0, 5.0]), 0, reverse)
    np.testing.assert_array_equal(e, [0, 15, 5, 1] if reverse else [1, 2, 0, 0])


# ---- property-based ---------------------------------------------------------------------

@st.composite
def _arrays_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    size = int(np.prod(shape))
    vals = draw(st.lists(st.integers(-3, 3), min_size=size, max_size=size))
    axes = draw(st.lists(st.sampled_from(range(len(shape))), unique=True)) if shape else []
    axis = None if draw(st.booleans()) else tuple(axes)
    return np.array(vals, dtype=np.float64).reshape(shape), axis, draw(st.booleans())


def _per_slice(x, axis, fn):
    """Apply fn (1-d -> 1-d) to every reduction slice of x (reduced axes flattened)."""
    axes = R.normalize_axis(axis, x.ndim)
    rest = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, rest + list(axes))
    flat = moved.reshape(int(np.prod([x.shape[i] for i in rest])), -1)
    out = np.array([fn(row) for row in flat]).reshape(moved.shape)
    return np.transpose(out, np.argsort(rest + list(axes)))


@settings(max_examples=60, deadline=None)
@given(_arrays_and_axes())
def test_prod_and_max_gradients_exact(case):
    x, axis, keepdims = case
    seed = np.ones(np.shape(np.prod(x, axis=axis, keepdims=keepdims)))
    g = _grad(lambda a: tf.prod(a, axis=axis, keepdims=keepdims), x, seed=seed)
    np.testing.assert_array_equal(g, _per_slice(x, axis, _leave_one_out))
    g = _grad(lambda a: tf.max(a, axis=axis, keepdims=keepdims), x, seed=seed)
    np.testing.assert_array_equal(
        g, _per_slice(x, axis, lambda r: (r == r.max()) / np.sum(r == r.max())))


@settings(max_examples=40, deadline=None)
@given(_arrays_and_axes())
def test_values_match_numpy_property(case):
    x, axis, keepdims = case
    for name in ("sum", "mean", "prod", "max", "min"):
        np.testing.assert_allclose(call(name, x, axis, keepdims).numpy(),
                                   NP[name](x, axis=axis, keepdims=keepdims), rtol=1e-14)
    if _count(x.shape, axis) > 1:
        np.testing.assert_allclose(call("var", x, axis, keepdims, ddof=1).numpy(),
                                   np.var(x, axis=axis, ddof=1, keepdims=keepdims),
                                   rtol=1e-12, atol=1e-12)


# ---- dtypes (array API 2024.12: integer/bool inputs, dtype=) ---------------------------------

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64]
ALL_DTYPES = [np.bool_] + INT_DTYPES + [np.float32, np.float64, np.complex64, np.complex128]


def _ints(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-2, 3, shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_sum_prod_dtypes_match_numpy(dtype, axis):
    x = _ints((2, 3, 2), dtype)
    for name in ("sum", "prod"):
        got = getattr(tf, name)(x, axis=axis)
        want = getattr(np, name)(x, axis=axis)
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_max_min_mean_var_std_dtypes(dtype):
    x = _ints((3, 4), dtype, seed=1)
    if np.dtype(dtype).kind != "c":
        for name in ("max", "min"):
            got = getattr(tf, name)(x, axis=0)
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got.numpy(), getattr(np, name)(x, axis=0))
    for name in ("mean", "var", "std"):
        got = getattr(tf, name)(x, axis=1)
        want = getattr(np, name)(x.astype(np.result_type(x, np.float64)) if x.dtype.kind in "biu"
                                 else x, axis=1)
        assert got.dtype == want.dtype, (name, got.dtype)
        if x.dtype.kind in "biu":
            assert got.dtype == np.float64           # the default floating dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_dtype_keyword():
    u8 = np.array([200, 100], dtype=np.uint8)
    assert tf.sum(u8).dtype == np.uint64 and tf.sum(u8).item() == 300
    assert tf.sum(u8, dtype=tf.uint8).dtype == np.uint8       # no second widening
    assert tf.sum(u8, dtype=tf.uint8).item() == 44
    assert tf.prod(u8, dtype=tf.uint16).dtype == np.uint16
    assert tf.sum(np.array([True, True, False])).item() == 2
    assert tf.sum(np.array([True, True])).dtype == np.int64
    # a differentiable cast: float32 in, float64 out, float32 gradient
    x = tf.tensor(np.array([1.5, 2.5], np.float32), requires_grad=True)
    for f in (tf.sum, tf.prod):
        y = f(x, dtype=tf.float64)
        assert y.dtype == np.float64
        g, = tf.grad([y], [x])
        assert g.dtype == np.float32
        np.testing.assert_allclose(g.numpy(), [1.0, 1.0] if f is tf.sum else [2.5, 1.5])
    check_grads(lambda a: tf.sum(a, axis=0, dtype=tf.complex128), [random_array((3, 2))],
                order=2)
    check_grads(lambda a: tf.prod(a, axis=1, dtype=tf.complex128), [random_array((3, 2))],
                order=2)
    with pytest.raises(tf.DTypeError, match="cannot hold the complex"):
        tf.sum(np.ones(2, complex), dtype=tf.float64)
    with pytest.raises(tf.DTypeError):
        tf.prod(np.ones(2), dtype=np.float16)


def test_axis_positional_rest_keyword_only():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(tf.sum(x, 1).numpy(), x.sum(1))
    np.testing.assert_array_equal(tf.max(x, 0).numpy(), x.max(0))
    for name in ("sum", "prod", "mean", "var", "std", "max", "min"):
        with pytest.raises(TypeError):
            getattr(tf, name)(x, 1, True)      # keepdims (and dtype) by keyword only
        with pytest.raises(TypeError):
            getattr(tf, name)(x=x)             # x is positional-only


# ---- var / std: the standard's correction, NumPy's ddof ---------------------------------------

def test_correction_is_ddof_and_may_be_fractional():
    x = random_array((4, 5), rng=20)
    for name in ("var", "std"):
        f, ref = getattr(tf, name), getattr(np, name)
        np.testing.assert_allclose(f(x, axis=1, correction=1).numpy(),
                                   ref(x, axis=1, ddof=1), rtol=1e-14)
        np.testing.assert_allclose(f(x, axis=0, correction=0.5).numpy(),
                                   ref(x, axis=0, ddof=0.5), rtol=1e-14)
        check_grads(lambda a: f(a, axis=0, correction=1.5), [x], order=2)
        with pytest.raises(TypeError, match="not both"):
            f(x, correction=1, ddof=1)
        with pytest.raises(TypeError, match="real number"):
            f(x, correction="1")


@pytest.mark.parametrize("name", ["var", "std"])
def test_correction_too_large_gives_nan(name):
    f = getattr(tf, name)
    x = tf.tensor(np.array([[1.0, 2.0], [3.0, 5.0]]), requires_grad=True)
    y = f(x, axis=1, correction=2)
    assert np.isnan(y.numpy()).all()
    g, = tf.grad([y], [x], [np.ones(2)])
    assert np.isnan(g.numpy()).all()
    assert np.isnan(f(x, correction=7).item())
    # the standard's empty reductions: NaN, no warning, no error
    with np.errstate(all="raise"):
        assert np.isnan(f(np.zeros(0)).item())
        out = f(np.zeros((0, 3)), axis=0)
    assert out.shape == (3,) and np.isnan(out.numpy()).all()
    # NumPy's spelling ddof keeps raising (test_ddof_too_large), also through np.var
    with pytest.raises(tf.ShapeError, match="ddof=2 over 2"):
        getattr(np, name)(x, axis=1, ddof=2)
    with pytest.raises(tf.ShapeError, match="ddof=2 over 2"):
        getattr(np, name)(x, axis=1, correction=2)


def test_mean_of_nothing_is_nan_also_for_complex():
    with np.errstate(all="raise"):
        m = tf.mean(np.zeros((0, 2), complex), axis=0)
    assert m.dtype == np.complex128
    assert np.isnan(m.numpy().real).all() and np.isnan(m.numpy().imag).all()


# ---- cumulative_sum / cumulative_prod -------------------------------------------------------

SCAN_CASES = [((6,), None), ((6,), 0), ((6,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1),
              ((2, 3, 4), -1), ((3, 0), 1), ((0, 3), 0)]


def _np_scan(name, x, axis, include_initial=False, dtype=None):
    f = np.cumsum if name == "cumulative_sum" else np.cumprod
    ax = 0 if axis is None else axis
    y = f(x, axis=ax, dtype=dtype)
    if include_initial:
        shape = list(y.shape)
        shape[ax] = 1
        y = np.concatenate([np.full(shape, 0 if f is np.cumsum else 1, y.dtype), y], axis=ax)
    return y


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,axis", SCAN_CASES)
@pytest.mark.parametrize("include_initial", [False, True])
def test_scans_match_numpy(name, dtype, shape, axis, include_initial):
    x = _ints(shape, dtype, seed=2)
    got = getattr(tf, name)(x, axis=axis, include_initial=include_initial)
    want = _np_scan(name, x, axis, include_initial)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_scans_dtype_keyword(name):
    f = getattr(tf, name)
    x = np.array([100, 3, 2], dtype=np.uint8)
    for dt in (np.uint8, np.uint16, np.float64):
        got = f(x, dtype=dt)
        assert got.dtype == dt
        np.testing.assert_array_equal(got.numpy(), _np_scan(name, x, None, dtype=dt))
    with pytest.raises(tf.DTypeError, match="cannot hold the complex"):
        f(np.ones(2, complex), dtype=tf.float32)
    check_grads(lambda a: f(a, axis=1, dtype=tf.complex128), [random_array((2, 3))], order=2)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape,axis,include_initial",
                         [((5,), None, False), ((5,), 0, True), ((3, 4), 0, False),
                          ((3, 4), 1, True), ((2, 3, 4), 1, False), ((2, 3, 4), -1, True),
                          ((1, 3), 0, False), ((3, 1), 1, True)])
def test_scans_check_grads(name, dtype, shape, axis, include_initial):
    f = getattr(tf, name)
    x = random_array(shape, dtype, rng=21)
    check_grads(lambda a: f(a, axis=axis, include_initial=include_initial), [x], order=2)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_scans_low_precision(name):
    f = getattr(tf, name)
    for dtype in (np.float64, np.complex128):
        x = random_array((3, 5), dtype, rng=22)
        check_low_precision(lambda a: f(a, axis=1), [x])
        check_low_precision(lambda a: f(a, axis=0, include_initial=True), [x])


def test_cumulative_sum_gradient_is_suffix_sum():
    x = tf.tensor(np.zeros((2, 4)), requires_grad=True)
    g, = tf.grad([tf.cumulative_sum(x, axis=1, include_initial=True)], [x],
                 [np.array([[100.0, 1, 2, 3, 4], [100.0, 5, 6, 7, 8]])])
    np.testing.assert_array_equal(g.numpy(), [[10, 9, 7, 4], [26, 21, 15, 8]])


def _cumprod_vjp_brute(x, ybar):
    """x̄_k = Σ_{i>=k} ȳ_i Π_{j<=i, j≠k} x_j, real x (every product formed explicitly)."""
    n = len(x)
    return np.array([sum(ybar[i] * np.prod(np.delete(x[:i + 1], k)) for i in range(k, n))
                     for k in range(n)])


def _cumprod_hessian_brute(x, ybar):
    """∂²(Σ ȳ_i y_i)/∂x_k∂x_l = Σ_{i>=max(k,l)} ȳ_i Π_{j<=i, j∉{k,l}} x_j (k ≠ l), 0 at k = l."""
    n = len(x)
    h = np.zeros((n, n))
    for k in range(n):
        for l in range(n):
            if k != l:
                h[k, l] = sum(ybar[i] * np.prod(np.delete(x[:i + 1], [k, l]))
                              for i in range(max(k, l), n))
    return h


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, -1.5, 0.5], [2.0, 0.0, 3.0, 0.0, 4.0],
                               [0.0, 0.0, 1.0], [0.0], [1.5, -2.0, 0.5, 3.0]])
def test_cumulative_prod_exact_with_zeros(x):
    x = np.array(x)
    n = len(x)
    ybar = np.arange(1.0, n + 1)
    xt = tf.tensor(x, requires_grad=True)
    y = tf.cumulative_prod(xt)
    np.testing.assert_array_equal(y.numpy(), np.cumprod(x))
    g, = tf.grad([y], [xt], [ybar], create_graph=True)
    want = _cumprod_vjp_brute(x, ybar)
    assert np.all(np.isfinite(g.numpy()))
    np.testing.assert_array_equal(g.numpy(), want)          # dyadic values: exact
    # forward mode: ẏ = J ẋ, J_ik = Π_{j<=i, j≠k} x_j
    J = np.array([[np.prod(np.delete(x[:i + 1], k)) if k <= i else 0.0 for k in range(n)]
                  for i in range(n)])
    v = np.arange(2.0, n + 2)
    _, t = tf.jvp(tf.cumulative_prod, [tf.tensor(x)], [tf.tensor(v)])
    np.testing.assert_array_equal(t.numpy(), J @ v)
    # second order (reverse-over-reverse and forward-over-reverse), also exact
    H = _cumprod_hessian_brute(x, ybar)
    rows = [tf.grad([g], [xt], [np.eye(n)[k]], retain_graph=True)[0] for k in range(n)]
    rows = np.array([np.zeros(n) if r is None else r.numpy() for r in rows])
    np.testing.assert_array_equal(rows, H)
    _, _, hv = tf.hvp(lambda a: tf.sum(tf.cumulative_prod(a) * tf.tensor(ybar)),
                      [tf.tensor(x)], [tf.tensor(v)])
    np.testing.assert_array_equal(hv[0].numpy(), H @ v)
    # and against finite differences, in both modes, through second order
    check_grads(tf.cumulative_prod, [x], order=2)


def test_cumulative_prod_zeros_batched_complex_third_order():
    x = random_array((2, 4), np.complex128, rng=23)
    x[0, 1] = 0
    x[1, 0] = x[1, 3] = 0
    g = _grad(lambda a: tf.cumulative_prod(a, axis=1), x, seed=np.ones((2, 4)))
    for r in range(2):
        np.testing.assert_allclose(g[r], np.conj(_cumprod_vjp_brute(x[r], np.ones(4))),
                                   rtol=1e-14, atol=1e-14)
    check_grads(lambda a: tf.cumulative_prod(a, axis=1), [x], order=2)
    check_grads(lambda a: tf.cumulative_prod(a, axis=0), [x.T.copy()], order=3)


# ---- diff -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,axis", [((6,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1)])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7])
def test_diff_matches_numpy(dtype, shape, axis, n):
    x = _ints(shape, dtype, seed=3)
    got = tf.diff(x, axis=axis, n=n)
    want = np.diff(x, n=n, axis=axis)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_diff_prepend_append_match_numpy():
    x = _ints((3, 4), np.int16, seed=4)
    pre, app = _ints((3, 2), np.int16, seed=5), _ints((3, 1), np.int16, seed=6)
    for n in (1, 2, 5):
        np.testing.assert_array_equal(tf.diff(x, n=n, prepend=pre, append=app).numpy(),
                                      np.diff(x, n=n, prepend=pre, append=app))
    np.testing.assert_array_equal(tf.diff(x, axis=0, prepend=7).numpy(),
                                  np.diff(x, axis=0, prepend=7))
    np.testing.assert_array_equal(tf.diff(x, append=tf.tensor(1.5)).numpy(),
                                  np.diff(x, append=1.5))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape,axis,n", [((6,), -1, 1), ((6,), 0, 3), ((3, 4), 0, 2),
                                          ((3, 4), 1, 1), ((2, 3, 4), 1, 2), ((3, 2), 0, 3)])
def test_diff_check_grads(dtype, shape, axis, n):
    x = random_array(shape, dtype, rng=24)
    check_grads(lambda a: tf.diff(a, axis=axis, n=n), [x], order=2)
    pshape = list(shape)
    pshape[axis] = 2
    ashape = list(shape)
    ashape[axis] = 1
    p, q = random_array(tuple(pshape), dtype, 25), random_array(tuple(ashape), dtype, 26)
    check_grads(lambda a, b, c: tf.diff(a, axis=axis, n=n, prepend=b, append=c), [x, p, q],
                order=2)
    check_grads(lambda a, b: tf.diff(a, axis=axis, n=n, prepend=b),
                [x, random_array((), dtype, 27)], order=2)


def test_diff_low_precision_and_empty_result():
    check_low_precision(lambda a: tf.diff(a, n=2), [random_array((3, 5), rng=28)])
    check_low_precision(lambda a: tf.diff(a, axis=0), [random_array((3, 5), np.complex128, 29)])
    x = tf.tensor(np.arange(3.0), requires_grad=True)
    y = tf.diff(x, n=5)
    assert y.shape == (0,)
    g, = tf.grad([y], [x], [np.zeros(0)])
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))
    assert tf.diff(x, n=0) is x


def test_diff_errors():
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="dimension >= 1"):
        tf.diff(tf.tensor(1.0))
    with pytest.raises(tf.ShapeError, match="n must be >= 0"):
        tf.diff(x, n=-1)
    with pytest.raises(TypeError, match="n must be an integer"):
        tf.diff(x, n=1.5)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        tf.diff(x, axis=2)
    with pytest.raises(tf.ShapeError, match="except along axis 1"):
        tf.diff(x, prepend=np.ones((3, 1)))
    assert x.grad is None


# ---- all / any --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_all_any_match_numpy(dtype, axis, keepdims):
    x = _ints((2, 3, 2), dtype, seed=7)
    x.flat[0] = 1
    for name in ("all", "any"):
        got = getattr(tf, name)(x, axis=axis, keepdims=keepdims)
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        assert isinstance(got, tf.Tensor) and got.dtype == np.bool_ and not got.requires_grad
        assert got.shape == np.shape(want)
        np.testing.assert_array_equal(got.numpy(), want)


def test_all_any_special_values_and_methods():
    assert tf.all(np.array([np.nan, np.inf, -np.inf])).item() is True
    assert tf.any(np.array([0.0, -0.0])).item() is False
    assert tf.all(np.array([1j, 0j])).item() is False and tf.any(np.array([1j])).item()
    assert tf.all(np.zeros(0)).item() is True and tf.any(np.zeros(0)).item() is False
    np.testing.assert_array_equal(tf.all(np.zeros((0, 2)), axis=0).numpy(), [True, True])
    x = tf.tensor([[1.0, 0.0], [2.0, 3.0]], requires_grad=True)
    np.testing.assert_array_equal(x.all(1).numpy(), [False, True])
    np.testing.assert_array_equal(x.any(axis=0, keepdims=True).numpy(), [[True, True]])
    got = np.all(x, axis=1)                  # NumPy's function: NumPy's result
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, [False, True])
    got = np.any(x)
    assert not isinstance(got, tf.Tensor) and bool(got) is True
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        tf.all(x, axis=3)
    with pytest.raises(TypeError, match="out="):
        x.any(0, np.empty(2, bool))


# ---- NumPy spellings on tensors -----------------------------------------------------------

def test_numpy_scan_and_diff_dispatch():
    m = np.arange(1.0, 7.0).reshape(2, 3)
    t = tf.tensor(m, requires_grad=True)
    for np_fn, method in ((np.cumsum, "cumsum"), (np.cumprod, "cumprod")):
        for kw in ({}, {"axis": 1}, {"axis": 0, "dtype": np.complex128}):
            y = np_fn(t, **kw)
            assert isinstance(y, tf.Tensor) and y.requires_grad
            np.testing.assert_array_equal(y.numpy(), np_fn(m, **kw))
            np.testing.assert_array_equal(getattr(t, method)(**kw).numpy(), np_fn(m, **kw))
        with pytest.raises(TypeError, match="out="):
            np_fn(t, axis=0, out=np.empty((2, 3)))
    for np_fn in (np.cumulative_sum, np.cumulative_prod):
        y = np_fn(t, axis=1, include_initial=True)
        assert isinstance(y, tf.Tensor) and y.requires_grad
        np.testing.assert_array_equal(y.numpy(), np_fn(m, axis=1, include_initial=True))
    y = np.diff(t, 2, 1)                     # NumPy's order: n, then axis
    np.testing.assert_array_equal(y.numpy(), np.diff(m, 2, 1))
    y = np.diff(t, axis=0, prepend=0.0)
    assert y.requires_grad
    np.testing.assert_array_equal(y.numpy(), np.diff(m, axis=0, prepend=0.0))
    check_grads(lambda a: np.cumsum(a), [m], order=2)


def test_numpy_reduction_signatures():
    m = random_array((3, 4), rng=30)
    t = tf.tensor(m, requires_grad=True)
    np.testing.assert_array_equal(np.sum(t, 1, np.float32).numpy(), np.sum(m, 1, np.float32))
    np.testing.assert_array_equal(t.sum(0, None, None, True).numpy(), m.sum(0, keepdims=True))
    np.testing.assert_allclose(np.var(t, 0, None, None, 1).numpy(), np.var(m, 0, ddof=1))
    np.testing.assert_allclose(t.std(axis=1, correction=1).numpy(), m.std(axis=1, ddof=1))
    np.testing.assert_allclose(np.mean(t, axis=0, dtype=np.complex128).numpy(),
                               np.mean(m, axis=0, dtype=np.complex128))
    np.testing.assert_array_equal(np.max(t, 1, None, True).numpy(), np.max(m, 1, None, True))
    np.testing.assert_array_equal(t.prod(1, keepdims=True).numpy(), m.prod(1, keepdims=True))
    mask = random_array((3, 4), rng=31) > 0
    for fn in (np.sum, np.prod, np.max, np.min, np.mean, np.var, np.std):
        with pytest.raises(TypeError, match="out="):
            fn(t, axis=0, out=np.empty(4))
        # where= (and initial= for the empty max/min) follow NumPy, differentiably
        kw = dict(initial=-10.0) if fn is np.max else dict(initial=10.0) if fn is np.min else {}
        np.testing.assert_allclose(fn(t, axis=0, where=mask, **kw).numpy(),
                                   fn(m, axis=0, where=mask, **kw))
    for fn in (np.sum, np.prod, np.max, np.min):
        np.testing.assert_allclose(fn(t, initial=1.0).numpy(), fn(m, initial=1.0))
    with pytest.raises(TypeError, match="mean="):
        np.var(t, mean=np.zeros((1, 4)))
    with pytest.raises(TypeError, match="not both"):
        np.std(t, ddof=1, correction=1)
    assert t.grad is None


def test_scan_errors_record_nothing(monkeypatch):
    from tenferro.testing import record_calls
    calls = record_calls(monkeypatch, R, "apply1")
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    for f in (tf.cumulative_sum, tf.cumulative_prod):
        with pytest.raises(tf.ShapeError, match="needs axis="):
            f(x)
        with pytest.raises(tf.ShapeError, match="0-d"):
            f(tf.tensor(2.0, requires_grad=True))
        with pytest.raises(tf.ShapeError, match="out of bounds"):
            f(x, axis=-3)
        with pytest.raises(tf.ShapeError, match="must be an int"):
            f(x, axis=(0, 1))
    assert calls == [] and x.grad is None
