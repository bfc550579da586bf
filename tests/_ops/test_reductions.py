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


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 13])
def test_linscan_matches_sequential_loop(reverse, n):
    a = random_array((n, 2), np.complex128, rng=10)
    b = random_array((n, 2), np.float64, rng=11)
    a[n // 2:n // 2 + 1] = 0
    np.testing.assert_allclose(R._linscan_np(a, b, 0, reverse), _linscan_loop(a, b, reverse),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(R._linscan_np(a.T, b.T, 1, reverse).T,
                               _linscan_loop(a, b, reverse), rtol=1e-13, atol=1e-13)


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
