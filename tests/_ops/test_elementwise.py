"""Elementwise ops (docs/design.md#ops): values against NumPy, derivatives against finite
differences (first and second order, reverse and forward), the low-precision dtypes,
broadcasting and promotion, the edge cases docs/rules.md#elementwise fixes, and the error paths."""
import numpy as np
import pytest

import tenferro as tf
import tenferro._engine as engine
from tenferro.testing import check_grads, check_low_precision, random_array

REAL = (np.float64, np.float32)
ALL = (np.float32, np.float64, np.complex64, np.complex128)


def sample(domain, shape, dtype, seed=0):
    """Random values inside a function's domain, away from poles and branch cuts."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    cplx = dtype.kind == "c"

    def u(lo, hi):
        return rng.uniform(lo, hi, shape)

    def jitter(scale=0.5):
        return 1j * scale * rng.standard_normal(shape) if cplx else 0.0

    if domain == "any":
        a = random_array(shape, dtype, rng)
    elif domain == "pos":          # real part > 0: log, sqrt, pow base (cut on (-inf, 0])
        a = u(0.5, 2.0) + jitter()
    elif domain == "nonzero":      # divisors, reciprocal
        a = np.where(rng.random(shape) < 0.5, -1, 1) * u(0.5, 2.0) + jitter()
    elif domain == "unit":         # asin, acos, atanh: |x| < 1 (cuts on |Re x| > 1)
        a = u(-0.8, 0.8) + jitter(0.3)
    elif domain == "gt1":          # acosh: x > 1 (cut on (-inf, 1])
        a = u(1.3, 3.0) + jitter()
    elif domain == "small":        # tan: away from its poles at ±π/2
        a = u(-1.0, 1.0) + jitter(0.3)
    else:
        raise ValueError(domain)
    return np.asarray(a).astype(dtype)


# name -> (tf function, NumPy reference, domain, ufunc dispatched to it, method names)
UNARY = {
    "negative": (tf.negative, np.negative, "any", np.negative, ("negative", "__neg__")),
    "abs": (tf.abs, np.abs, "nonzero", np.absolute, ("abs", "__abs__")),
    "conj": (tf.conj, np.conj, "any", np.conjugate, ("conj", "conjugate")),
    "exp": (tf.exp, np.exp, "any", np.exp, ("exp",)),
    "expm1": (tf.expm1, np.expm1, "any", np.expm1, ("expm1",)),
    "log": (tf.log, np.log, "pos", np.log, ("log",)),
    "log1p": (tf.log1p, np.log1p, "pos", np.log1p, ("log1p",)),
    "sqrt": (tf.sqrt, np.sqrt, "pos", np.sqrt, ("sqrt",)),
    "sin": (tf.sin, np.sin, "any", np.sin, ("sin",)),
    "cos": (tf.cos, np.cos, "any", np.cos, ("cos",)),
    "tan": (tf.tan, np.tan, "small", np.tan, ("tan",)),
    "tanh": (tf.tanh, np.tanh, "any", np.tanh, ("tanh",)),
    "asin": (tf.asin, np.arcsin, "unit", np.arcsin, ("asin", "arcsin")),
    "acos": (tf.acos, np.arccos, "unit", np.arccos, ("acos", "arccos")),
    "atan": (tf.atan, np.arctan, "small", np.arctan, ("atan", "arctan")),
    "sinh": (tf.sinh, np.sinh, "any", np.sinh, ("sinh",)),
    "cosh": (tf.cosh, np.cosh, "any", np.cosh, ("cosh",)),
    "asinh": (tf.asinh, np.arcsinh, "small", np.arcsinh, ("asinh", "arcsinh")),
    "acosh": (tf.acosh, np.arccosh, "gt1", np.arccosh, ("acosh", "arccosh")),
    "atanh": (tf.atanh, np.arctanh, "unit", np.arctanh, ("atanh", "arctanh")),
    "square": (tf.square, np.square, "any", np.square, ("square",)),
    "reciprocal": (tf.reciprocal, np.reciprocal, "nonzero", np.reciprocal, ("reciprocal",)),
    "log2": (tf.log2, np.log2, "pos", np.log2, ("log2",)),
    "log10": (tf.log10, np.log10, "pos", np.log10, ("log10",)),
    "positive": (tf.positive, np.positive, "any", np.positive, ("positive", "__pos__")),
    "real": (tf.real, np.real, "any", None, ()),
    "imag": (tf.imag, np.imag, "any", None, ()),
}
# the NumPy-style long names are the same functions
assert tf.arcsin is tf.asin and tf.arccosh is tf.acosh and tf.arctan2 is tf.atan2

# name -> (tf function, NumPy reference, domain of a, domain of b, complex?, operator, methods)
BINARY = {
    "add": (tf.add, np.add, "any", "any", True, "__add__", ("add",)),
    "subtract": (tf.subtract, np.subtract, "any", "any", True, "__sub__", ("subtract",)),
    "multiply": (tf.multiply, np.multiply, "any", "any", True, "__mul__", ("multiply",)),
    "divide": (tf.divide, np.divide, "any", "nonzero", True, "__truediv__", ("divide",)),
    "power": (tf.pow, np.power, "pos", "any", True, "__pow__", ("pow", "power")),
    "atan2": (tf.atan2, np.arctan2, "any", "any", False, None, ("atan2", "arctan2")),
    "hypot": (tf.hypot, np.hypot, "any", "any", False, None, ("hypot",)),
    "maximum": (tf.maximum, np.maximum, "any", "any", False, None, ("maximum",)),
    "minimum": (tf.minimum, np.minimum, "any", "any", False, None, ("minimum",)),
    "logaddexp": (tf.logaddexp, np.logaddexp, "any", "any", False, None, ("logaddexp",)),
    # b away from 0: copysign jumps with the sign of b (its b-derivative is 0 elsewhere)
    "copysign": (tf.copysign, np.copysign, "any", "nonzero", False, None, ("copysign",)),
    "remainder": (tf.remainder, np.remainder, "any", "nonzero", False, "__mod__",
                  ("remainder",)),
}
BINARY_OPS = {"__add__": "__radd__", "__sub__": "__rsub__", "__mul__": "__rmul__",
              "__truediv__": "__rtruediv__", "__pow__": "__rpow__", "__mod__": "__rmod__"}


def _tol(dtype):
    return 1e-6 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-13


def _assert_value(t, expected):
    assert isinstance(t, tf.Tensor)
    assert type(t.numpy()) is np.ndarray, "payload must be an ndarray (not a NumPy scalar)"
    expected = np.asarray(expected)
    assert t.dtype == expected.dtype and t.shape == expected.shape
    np.testing.assert_allclose(t.numpy(), expected, rtol=_tol(expected.dtype), atol=0)


def _unary_dtypes(name):
    return ALL if name != "imag" else (np.complex64, np.complex128)


def _unary_grad_dtypes(name):
    return (np.float64, np.complex128) if name != "imag" else (np.complex128,)


@pytest.fixture
def node_counter(monkeypatch):
    """Counts graph nodes created by ops (create input leaves before using it)."""
    made = []
    real_node = engine.Node

    def counting(*args):
        made.append(args[0])
        return real_node(*args)

    engine._tape.set_node_type(counting)      # what apply1/apply record nodes with
    yield made
    engine._tape.set_node_type(None)


# ---- unary ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_value(name, dtype):
    if name == "imag" and np.dtype(dtype).kind != "c":
        # imag of a real tensor is a constant zero of its dtype
        _assert_value(tf.imag(tf.tensor(np.ones(3, dtype))), np.zeros(3, dtype))
        return
    fn, ref, domain, ufunc, methods = UNARY[name]
    x = sample(domain, (2, 3), dtype)
    t = tf.tensor(x)
    expected = ref(x)
    _assert_value(fn(t), expected)
    _assert_value(fn(x), expected)   # arrays are accepted too
    if ufunc is not None:
        _assert_value(ufunc(t), expected)   # NumPy dispatch returns a Tensor
    for m in methods:
        _assert_value(getattr(t, m)(), expected)
    if name in ("real", "imag"):
        _assert_value(getattr(t, name), expected)   # properties
        _assert_value(ref(t), expected)             # np.real / np.imag dispatch


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_grads(name):
    fn, _, domain, _, _ = UNARY[name]
    for dtype in _unary_grad_dtypes(name):
        check_grads(fn, [sample(domain, (2, 3), dtype, seed=1)], modes=("rev", "fwd"),
                    order=2)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_low_precision(name):
    fn, _, domain, _, _ = UNARY[name]
    for dtype in _unary_grad_dtypes(name):
        check_low_precision(fn, [sample(domain, (5,), dtype, seed=2)])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_rank0(name):
    fn, ref, domain, _, _ = UNARY[name]
    for dtype in _unary_grad_dtypes(name):
        x = sample(domain, (), dtype, seed=3)
        _assert_value(fn(tf.tensor(x)), ref(x))
        check_grads(fn, [x], modes=("rev", "fwd"), order=2)


def test_unary_gradient_is_a_tensor_for_rank0():
    x = tf.tensor(0.3, requires_grad=True)
    (g,) = tf.grad(tf.sin(x), [x])
    assert isinstance(g, tf.Tensor) and g.shape == ()
    assert type(g.numpy()) is np.ndarray
    assert g.item() == pytest.approx(np.cos(0.3))


def test_holomorphic_convention():
    """JVP multiplies by f'(z), VJP by conj(f'(z)) (docs/design.md#complex-numbers)."""
    z = np.array([0.3 + 0.7j, -1.1 + 0.2j])
    v = np.array([0.5 - 0.1j, 0.2 + 0.4j])
    gbar = np.array([1.0 - 2.0j, 0.3 + 0.3j])
    _, tangent = tf.jvp(tf.exp, [tf.tensor(z)], [tf.tensor(v)])
    np.testing.assert_allclose(tangent.numpy(), np.exp(z) * v, rtol=1e-14)
    x = tf.tensor(z, requires_grad=True)
    (g,) = tf.grad(tf.exp(x), [x], [tf.tensor(gbar)])
    np.testing.assert_allclose(g.numpy(), gbar * np.conj(np.exp(z)), rtol=1e-14)


@pytest.mark.parametrize("loss", [
    lambda z: tf.sum(tf.abs(z) ** 2),
    lambda z: tf.sum(tf.real(z * tf.conj(z))),
    lambda z: tf.sum(tf.square(tf.real(z)) + tf.square(tf.imag(z))),
])
def test_complex_convention_grad_of_abs2_is_2z(loss):
    z = random_array((3, 2), np.complex128, rng=4)
    x = tf.tensor(z, requires_grad=True)
    (g,) = tf.grad(loss(x), [x])
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g.numpy(), 2 * z, rtol=1e-13)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * z, rtol=1e-13)


def test_sign_of_real_has_zero_derivative():
    """sign is piecewise constant: for real x its derivative is an exact 0 (a gradient of
    zeros, not None and not an error), also at 0 and in forward mode."""
    x = tf.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    for s in (tf.sign(x), x.sign(), np.sign(x)):
        assert isinstance(s, tf.Tensor)
        np.testing.assert_array_equal(s.numpy(), [-1.0, 0.0, 1.0])
        (g,) = tf.grad(tf.sum(s * 3.0), [x])
        assert isinstance(g, tf.Tensor) and g.dtype == np.float64
        np.testing.assert_array_equal(g.numpy(), np.zeros(3))
    _, t = tf.jvp(tf.sign, [np.array([-2.0, 0.0, 3.0])], [np.ones(3)])
    np.testing.assert_array_equal(t.numpy(), np.zeros(3))
    z = np.array([3 + 4j, 0j])
    np.testing.assert_allclose(tf.sign(tf.tensor(z)).numpy(), np.sign(z))


def test_positive_and_builtin_operators():
    x = sample("any", (4,), np.float64)
    t = tf.tensor(x)
    _assert_value(+t, x)
    _assert_value(np.positive(t), x)
    _assert_value(-t, -x)
    _assert_value(abs(t), np.abs(x))


def test_real_of_real_and_conj_of_real_are_the_tensor_itself():
    t = tf.tensor([1.0, 2.0], requires_grad=True)
    assert tf.real(t) is t and tf.conj(t) is t and t.real is t
    assert not tf.imag(t).requires_grad


def test_real_imag_cotangents():
    """real: z̄ = ȳ + 0i; imag: z̄ = i·ȳ (docs/rules.md)."""
    z = tf.tensor(np.array([1 + 2j, -3 + 0.5j]), requires_grad=True)
    gbar = np.array([0.7, -1.5])
    (gr,) = tf.grad(tf.real(z), [z], [gbar])
    (gi,) = tf.grad(tf.imag(z), [z], [gbar])
    assert gr.dtype == gi.dtype == np.complex128
    np.testing.assert_array_equal(gr.numpy(), gbar + 0j)
    np.testing.assert_array_equal(gi.numpy(), 1j * gbar)


# ---- abs at 0 ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_abs_at_zero_has_zero_gradient_and_finite_second_derivative(dtype):
    x0 = np.array([0.0, 1.5, -2.0], dtype=dtype)
    x = tf.tensor(x0, requires_grad=True)
    (g,) = tf.grad(tf.sum(tf.abs(x)), [x])
    np.testing.assert_array_equal(g.numpy(), np.sign(x0))
    v = np.array([1.0, -0.5, 2.0], dtype=dtype) * (1 + 0.5j if dtype == np.complex128 else 1)
    _, grads, hv = tf.hvp(lambda t: tf.sum(tf.abs(t)), [x0], [v])
    np.testing.assert_array_equal(grads[0].numpy(), np.sign(x0))
    hv = hv[0].numpy()
    assert np.all(np.isfinite(hv))
    assert hv[0] == 0   # the subgradient 0 is locally constant: no curvature at 0
    if dtype == np.float64:
        np.testing.assert_array_equal(hv, 0.0)   # |x| is piecewise linear
    else:
        # |z| is curved across the phase away from 0: that part is checked against FD
        check_grads(tf.abs, [x0[1:] + 0.5j], modes=("rev", "fwd"), order=2)


# ---- binary -----------------------------------------------------------------------------

def _binary_dtypes(name, all_dtypes=False):
    cplx = BINARY[name][4]
    if all_dtypes:
        return ALL if cplx else REAL
    return (np.float64, np.complex128) if cplx else (np.float64,)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_value(name):
    fn, ref, da, db, _, op, methods = BINARY[name]
    for dtype in _binary_dtypes(name, all_dtypes=True):
        a, b = sample(da, (2, 3), dtype, 5), sample(db, (2, 3), dtype, 6)
        ta, tb = tf.tensor(a), tf.tensor(b)
        expected = ref(a, b)
        _assert_value(fn(ta, tb), expected)
        _assert_value(fn(a, tb), expected)
        _assert_value(fn(ta, b), expected)
        _assert_value(ref(ta, tb), expected)    # NumPy ufunc dispatch
        _assert_value(ref(a, tb), expected)     # ndarray first: still a Tensor
        for m in methods:
            _assert_value(getattr(ta, m)(tb), expected)
        if op is not None:
            _assert_value(getattr(ta, op)(tb), expected)
            _assert_value(getattr(tb, BINARY_OPS[op])(ta), expected)   # reflected


def test_operators_spelled():
    a, b = sample("pos", (3,), np.float64, 1), sample("nonzero", (3,), np.float64, 2)
    ta, tb = tf.tensor(a), tf.tensor(b)
    _assert_value(ta + tb, a + b)
    _assert_value(ta - tb, a - b)
    _assert_value(ta * tb, a * b)
    _assert_value(ta / tb, a / b)
    _assert_value(ta ** tb, a ** b)
    _assert_value(2.0 + ta, 2.0 + a)
    _assert_value(2.0 - ta, 2.0 - a)
    _assert_value(2.0 * ta, 2.0 * a)
    _assert_value(2.0 / ta, 2.0 / a)
    _assert_value(2.0 ** ta, 2.0 ** a)
    _assert_value(ta ** 2, a ** 2)
    _assert_value(a + tb, a + b)   # ndarray on the left dispatches to the Tensor


BINARY_SHAPES = [((2, 3), (2, 3)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ())]


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=lambda s: f"{s[0]}-{s[1]}")
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_grads(name, shapes):
    fn, _, da, db, _, _, _ = BINARY[name]
    for dtype in _binary_dtypes(name):
        a, b = sample(da, shapes[0], dtype, 7), sample(db, shapes[1], dtype, 8)
        check_grads(fn, [a, b], modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_low_precision(name):
    fn, _, da, db, _, _, _ = BINARY[name]
    for dtype in _binary_dtypes(name):
        a, b = sample(da, (3, 1), dtype, 9), sample(db, (4,), dtype, 10)
        check_low_precision(fn, [a, b])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rank0(name):
    fn, ref, da, db, _, _, _ = BINARY[name]
    for dtype in _binary_dtypes(name):
        a, b = sample(da, (), dtype, 11), sample(db, (), dtype, 12)
        _assert_value(fn(tf.tensor(a), tf.tensor(b)), ref(a, b))
        check_grads(fn, [a, b], modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("name", ["atan2", "hypot", "maximum", "minimum", "logaddexp",
                                  "copysign", "remainder"])
def test_real_only_binary_rejects_complex(name, node_counter):
    fn = BINARY[name][0]
    x = tf.tensor(np.ones(3), requires_grad=True)
    z = tf.tensor(np.ones(3) + 1j, requires_grad=True)
    del node_counter[:]
    for a, b in ((x, z), (z, x), (z, z), (x, 1j)):
        with pytest.raises(tf.DTypeError, match="real"):
            fn(a, b)
    assert node_counter == []


def test_clip_rejects_complex():
    with pytest.raises(tf.DTypeError, match="real"):
        tf.clip(tf.tensor(np.ones(3) + 1j), 0.0, 1.0)


# ---- broadcasting, Python scalars, promotion --------------------------------------------

def test_broadcast_cotangents_are_summed_back():
    a = tf.tensor(sample("any", (3, 1), np.float64), requires_grad=True)
    b = tf.tensor(sample("any", (4,), np.float64), requires_grad=True)
    y = a * b
    assert y.shape == (3, 4)
    ga, gb = tf.grad(y, [a, b], [np.ones((3, 4))])
    assert ga.shape == (3, 1) and gb.shape == (4,)
    np.testing.assert_allclose(ga.numpy(), np.broadcast_to(b.numpy().sum(), (3, 1)))
    np.testing.assert_allclose(gb.numpy(), np.full(4, a.numpy().sum()))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_python_scalars_keep_precision(dtype):
    """Python scalars are weak (NumPy 2): they never raise a tensor's precision."""
    t = tf.tensor(np.full(3, 0.5, dtype))
    r = tf.real(t)
    for y in (t * 2.0, 2.0 * t, t + 1, 1 - t, t / 3.0, t ** 2.0, 2.0 ** t, t ** 2,
              tf.where(np.array([True, False, True]), t, 0.0), tf.pow(t, 0.5)):
        assert y.dtype == dtype
    for y in (tf.maximum(r, 0.25), tf.minimum(0.25, r), tf.atan2(r, 1.0), tf.hypot(2, r),
              tf.clip(r, 0.0, 1.0)):
        assert y.dtype == np.float32
    np.testing.assert_array_equal((t * 2.0).numpy(), np.ones(3, dtype))


_SCALAR_VALUES = [1.01, -2.5, 3, -7, 2 ** 53, 1e-310, 5e-324, 1e30, 1e39, -1e300, 0.0, -0.0,
                  0, float("inf"), float("-inf"), float("nan"), 1 / 3]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", ["mul", "rmul", "add", "radd", "sub", "rsub", "div", "rdiv"])
def test_python_scalar_ops_have_numpys_bits(op, dtype):
    """x ∘ s with a Python scalar s computes NumPy's ``x ∘ s`` bit for bit, forward and
    backward (float64/float32 tensors hold s as a cached read-only 0-d array of their
    dtype; zeros of either sign, NaN, ints, values that overflow float32 included), and
    the same value twice in a row (the cached constant) gives the same bits again."""
    fns = {"mul": lambda x, s: x * s, "rmul": lambda x, s: s * x,
           "add": lambda x, s: x + s, "radd": lambda x, s: s + x,
           "sub": lambda x, s: x - s, "rsub": lambda x, s: s - x,
           "div": lambda x, s: x / s, "rdiv": lambda x, s: s / x}
    grads = {"mul": lambda g, s, x: g * s, "rmul": lambda g, s, x: g * s,
             "add": lambda g, s, x: g, "radd": lambda g, s, x: g,
             "sub": lambda g, s, x: g, "rsub": lambda g, s, x: -g,
             "div": lambda g, s, x: g / s, "rdiv": lambda g, s, x: -g * ((s / x) / x)}
    f = fns[op]
    a = np.array([0.3, -1.7, 2.0e-3, 4.5, -0.0, 1e-40], dtype)
    g = np.array([1.5, -0.25, 3.0, 1e-3, -2.0, 7.0], dtype)
    for s in _SCALAR_VALUES:
        with np.errstate(all="ignore"):
            want = f(a, s)
            want_g = grads[op](g, s, a)
        for _ in range(2):
            x = tf.tensor(a, requires_grad=True)
            with np.errstate(all="ignore"):
                y = f(x, s)
                (gx,) = tf.grad([y], [x], [g])
            assert y.dtype == dtype and gx.dtype == dtype
            np.testing.assert_array_equal(y.numpy().view(np.uint8), want.view(np.uint8),
                                          err_msg=f"{op} {s!r}")
            np.testing.assert_array_equal(gx.numpy().view(np.uint8), want_g.view(np.uint8),
                                          err_msg=f"{op} {s!r}")


def test_scalar_constants_are_read_only_and_bounded():
    from tenferro._ops import elementwise as E
    x = tf.tensor(np.ones(3), requires_grad=True)
    c = (x * 1.25)._node.ctx
    assert type(c) is np.ndarray and c.shape == () and not c.flags.writeable
    assert c.dtype == np.float64 and c == 1.25
    assert type((x * -0.0)._node.ctx) is float      # zeros are never shared
    for k in range(3 * E._CONSTANTS_MAX):
        x * (1.0 + k)
    assert len(E._CONSTANTS[np.dtype(np.float64)]) <= E._CONSTANTS_MAX


def test_python_complex_promotes_to_matching_precision():
    t32 = tf.tensor(np.ones(3, np.float32))
    t64 = tf.tensor(np.ones(3, np.float64))
    assert (t32 * 1j).dtype == np.complex64
    assert (t32 + (1 + 2j)).dtype == np.complex64
    assert ((1 - 1j) * t32).dtype == np.complex64
    assert (t64 * 1j).dtype == np.complex128
    x = tf.tensor(np.ones(3, np.float32), requires_grad=True)
    (g,) = tf.grad(tf.sum(tf.real(x * (2 + 3j))), [x])
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), np.full(3, 2, np.float32))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "atan2",
                                  "hypot", "maximum", "minimum", "logaddexp", "copysign",
                                  "remainder", "nextafter"])
def test_mixed_integer_float_promotion_is_numpy2(name):
    """Issue 24: an integer or bool tensor with a floating one gives NumPy 2's dtype, in
    either order (int64 with float32: float64; int8/int16/uint8/bool with float32:
    float32), with NumPy's values; the functions with a floating-point result share
    _dtypes.float_result_type with tf.special and tf.stats (all-integer input: float64
    where NumPy would pick float16/float32)."""
    fn = getattr(tf, name)
    ref_fn = {"pow": np.power, "atan2": np.arctan2}.get(name) or getattr(np, name)
    ints = np.array([1, 2, 3])
    flts = np.array([0.5, 1.5, 2.5])
    complex_ok = name in ("add", "subtract", "multiply", "divide", "pow")
    for idt in (np.bool_, np.int8, np.int16, np.uint8, np.int32, np.int64, np.uint64):
        for fdt in (np.float32, np.float64) + ((np.complex64,) if complex_ok else ()):
            i, f = ints.astype(idt), flts.astype(fdt)
            for a, b in ((i, f), (f, i)):
                want = np.result_type(a.dtype, b.dtype)
                got = fn(tf.tensor(a), tf.tensor(b))
                assert got.dtype == want, (name, a.dtype, b.dtype, got.dtype)
                with np.errstate(all="ignore"):
                    np.testing.assert_allclose(got.numpy(), ref_fn(a, b),
                                               rtol=1e-6 if want in (np.float32, np.complex64) else 1e-15)
    # Python numbers stay weak: a float32 tensor keeps float32 on either side
    f32 = tf.tensor(flts.astype(np.float32))
    assert fn(f32, 2).dtype == fn(2, f32).dtype == fn(f32, 0.5).dtype == np.float32


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power",
                                  "atan2", "hypot", "maximum", "minimum", "logaddexp",
                                  "copysign", "remainder"])
def test_promotion_f32_f64_cotangents_keep_input_dtypes(name):
    fn, ref, da, db, _, _, _ = BINARY[name]
    a64, b64 = sample(da, (3, 1), np.float64, 13), sample(db, (4,), np.float64, 14)
    a = tf.tensor(a64.astype(np.float32), requires_grad=True)
    b = tf.tensor(b64, requires_grad=True)
    y = fn(a, b)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), ref(a64.astype(np.float32).astype(np.float64), b64),
                               rtol=1e-13)
    ybar = np.ones((3, 4))
    ga, gb = tf.grad(y, [a, b], [ybar])
    assert ga.dtype == np.float32 and ga.shape == (3, 1)
    assert gb.dtype == np.float64 and gb.shape == (4,)
    # the same gradients as an all-float64 computation at the same point
    a_ = tf.tensor(a.numpy().astype(np.float64), requires_grad=True)
    b_ = tf.tensor(b64, requires_grad=True)
    ga_, gb_ = tf.grad(fn(a_, b_), [a_, b_], [ybar])
    np.testing.assert_allclose(ga.numpy(), ga_.numpy().astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), gb_.numpy(), rtol=1e-13)


# (tensor shape, constant shape); None: a NumPy scalar (np.float64(...) and friends)
_ARRAY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((2, 1, 4), (3, 1)),
                 ((), (3,)), ((3,), ()), ((3, 4), None), ((), None)]


@pytest.mark.parametrize("shapes", _ARRAY_SHAPES, ids=str)
@pytest.mark.parametrize("side", ["tensor_left", "tensor_right"])
@pytest.mark.parametrize("name,dtype", [
    (n, dt) for n in BINARY for dt in (np.float64, np.complex128, np.float32)
    if BINARY[n][4] or dt != np.complex128])
def test_ndarray_operand_matches_a_constant_tensor(name, side, dtype, shapes):
    """Tensor ∘ ndarray and ndarray ∘ Tensor of one dtype (or a NumPy scalar of the
    tensor's dtype) are one-input ops holding the constant: value, gradient and tangent
    have the bits of the same op with the ndarray wrapped as a constant Tensor
    (broadcasting on either side included), and finite differences confirm first and
    second order (float64/complex128)."""
    fn, _, da, db, _, _, _ = BINARY[name]
    left = side == "tensor_left"
    xs, cs = shapes
    a = sample(da if left else db, xs, dtype, 21)
    c = sample(db if left else da, () if cs is None else cs, dtype, 22)
    if cs is None:
        c = c[()]
        assert type(c) is np.dtype(dtype).type

    def f(x, const):
        return fn(x, const) if left else fn(const, x)

    x = tf.tensor(a, requires_grad=True)
    y = f(x, c)
    op = y._node.op.name
    assert op == (name + "_array" if left else "array_" + name), op
    ref_x = tf.tensor(a, requires_grad=True)
    ref = f(ref_x, tf.tensor(c))
    assert y.dtype == ref.dtype == dtype and y.shape == ref.shape
    np.testing.assert_array_equal(y.numpy(), ref.numpy())
    ybar = sample("any", y.shape, dtype, 23)
    (gx,) = tf.grad([y], [x], [ybar])
    (gr,) = tf.grad([ref], [ref_x], [ybar])
    assert gx.dtype == dtype and gx.shape == a.shape
    np.testing.assert_array_equal(gx.numpy(), gr.numpy())
    t = sample("any", a.shape, dtype, 24)
    _, ty = tf.jvp(lambda x: f(x, c), [a], [t])
    _, tr = tf.jvp(lambda x: f(x, tf.tensor(c)), [a], [t])
    np.testing.assert_array_equal(ty.numpy(), tr.numpy())
    if dtype != np.float32:
        check_grads(lambda x: f(x, c), [a], order=2)


@pytest.mark.parametrize("name", [n for n in BINARY if BINARY[n][5]])
def test_ndarray_operators_on_either_side_take_the_array_op(name):
    """``x ∘ c`` and NumPy's ``c ∘ x`` (the ndarray's operator, through __array_ufunc__)
    record the one-input op; the gradient matches NumPy's derivative by the constant's
    finite differences."""
    fn, _, da, db, _, dunder, _ = BINARY[name]
    a, c = sample(da, (3, 4), np.float64, 25), sample(db, (4,), np.float64, 26)
    x = tf.tensor(a, requires_grad=True)
    right = getattr(x, dunder)(c)
    assert right._node.op.name == name + "_array"
    a2, c2 = sample(db, (3, 4), np.float64, 27), sample(da, (4,), np.float64, 28)
    x2 = tf.tensor(a2, requires_grad=True)
    left = getattr(c2, dunder)(x2)          # ndarray.__mul__ and friends
    assert isinstance(left, tf.Tensor) and left._node.op.name == "array_" + name
    check_grads(lambda x: getattr(c2, dunder)(x), [a2], order=2)
    check_grads(lambda x: getattr(x, dunder)(c), [a], order=2)


def test_ndarray_operand_of_another_dtype_promotes_through_the_general_op():
    x32 = tf.tensor(np.array([0.5, -1.0, 2.0], np.float32), requires_grad=True)
    c64 = np.array([1.5, 0.25, -0.75])
    y = x32 * c64
    assert y.dtype == np.float64 and y._node.op.name == "multiply"
    (g,) = tf.grad([y.sum()], [x32])
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), c64.astype(np.float32))
    z = tf.tensor(np.array([1 + 1j, 2j]), requires_grad=True)
    with pytest.raises(tf.DTypeError, match="real"):  # real-only ops still say so
        tf.maximum(z, np.array([1j, 1]))
    with pytest.raises(tf.DTypeError, match="real"):
        tf.atan2(np.array([1j, 1]), z)
    xi = tf.tensor(np.array([1, 2, 3]))              # an integer tensor: general path
    assert (xi * np.array([1.0, 2.0, 3.0])).dtype == np.float64
    with pytest.raises(tf.ShapeError, match="do not broadcast"):
        x32.astype(np.float64) * np.ones((2,))
    with pytest.raises(tf.ShapeError, match="do not broadcast"):
        np.ones((2,)) * x32.astype(np.float64)
    # NumPy's phrase as well, which code written for NumPy (SciPy's checks) looks for
    with pytest.raises(tf.ShapeError, match="cannot be broadcast to a single shape"):
        tf.broadcast_arrays(tf.ones(2), tf.ones(3))


def test_promotion_second_order_keeps_input_dtypes():
    a0, b0 = np.array([0.5, -1.0, 2.0], np.float32), np.array([1.5, 0.25, -0.75])
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    y = a * b
    ga, gb = tf.grad(tf.sum(y * y), [a, b], create_graph=True)   # 2ab², 2a²b
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    a64 = a0.astype(np.float64)
    np.testing.assert_allclose(ga.numpy(), 2 * a64 * b0 ** 2, rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), 2 * a64 ** 2 * b0, rtol=1e-13)
    haa, hab = tf.grad(tf.sum(ga), [a, b])                       # 2b², 4ab
    assert haa.dtype == np.float32 and hab.dtype == np.float64
    np.testing.assert_allclose(haa.numpy(), 2 * b0 ** 2, rtol=1e-6)
    np.testing.assert_allclose(hab.numpy(), 4 * a64 * b0, rtol=1e-13)


@pytest.mark.parametrize("real_dtype,cplx_dtype,out", [
    (np.float64, np.complex128, np.complex128),
    (np.float32, np.complex64, np.complex64),
    (np.float64, np.complex64, np.complex128),
])
def test_real_with_complex_promotes_and_real_input_gets_real_part(real_dtype, cplx_dtype, out):
    a0 = np.array([0.5, -1.0, 2.0], real_dtype)
    b0 = np.array([1 + 1j, 2 - 0.5j, -0.3j], cplx_dtype)
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    y = a * b
    assert y.dtype == out
    ybar = np.array([1 - 1j, 0.5 + 2j, -1j], out)
    ga, gb = tf.grad(y, [a, b], [ybar])
    assert ga.dtype == real_dtype and gb.dtype == cplx_dtype
    rtol = 1e-6 if out == np.complex64 or real_dtype == np.float32 else 1e-14
    # L = Re⟨ȳ, a·b⟩: ā = Re(ȳ·conj(b)), b̄ = ȳ·conj(a)
    np.testing.assert_allclose(ga.numpy(), (ybar * np.conj(b0)).real, rtol=rtol)
    np.testing.assert_allclose(gb.numpy(), ybar * a0, rtol=rtol)


def test_real_with_complex_grads_check():
    a = sample("any", (3,), np.float64, 15)
    b = sample("any", (3,), np.complex128, 16)
    check_grads(lambda x, y: tf.multiply(x, y), [a, b], modes=("rev", "fwd"), order=2)
    check_grads(lambda x, y: tf.divide(y, x + 3.0), [a, b], modes=("rev", "fwd"), order=2)
    # a negative real base of a complex power: the rules must use the complex logarithm
    check_grads(tf.pow, [np.array([-2.0, 3.0]), np.array([0.5 + 0.1j, 1.5 + 0.2j])],
                modes=("rev", "fwd"), order=2)


# ---- maximum / minimum ties -------------------------------------------------------------

@pytest.mark.parametrize("fn", [tf.maximum, tf.minimum])
def test_ties_split_evenly(fn):
    a0 = np.array([1.0, 2.0, 3.0, -1.0])
    b0 = np.array([1.0, 0.0, 3.0, 5.0])
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    ga, gb = tf.grad(tf.sum(fn(a, b)), [a, b])
    wins = (a0 > b0) if fn is tf.maximum else (a0 < b0)
    expect_a = np.where(a0 == b0, 0.5, np.where(wins, 1.0, 0.0))
    np.testing.assert_array_equal(ga.numpy(), expect_a)
    np.testing.assert_array_equal(gb.numpy(), 1.0 - expect_a)
    # forward mode: the tangent is the average of both on a tie
    ta, tb = np.array([2.0, 4.0, 6.0, 8.0]), np.array([10.0, 20.0, 30.0, 40.0])
    _, t = tf.jvp(fn, [a0, b0], [ta, tb])
    np.testing.assert_array_equal(t.numpy(), expect_a * ta + (1 - expect_a) * tb)
    # a tie with itself: the full cotangent comes back
    (g,) = tf.grad(tf.sum(fn(a, a)), [a])
    np.testing.assert_array_equal(g.numpy(), np.ones(4))


# ---- pow and hypot edge cases ----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pow_at_zero_base_has_finite_derivatives(dtype):
    """0**0 and 0**b (b > 0): ∂/∂x is b·x^(b−1) (0 where b = 0), ∂/∂b is 0 (docs/rules.md)."""
    a0 = np.array([0.0, 0.0, 0.0, 0.0], dtype)
    b0 = np.array([0.0, 1.0, 2.0, 3.5], dtype)
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    y = tf.pow(a, b)
    np.testing.assert_array_equal(y.numpy(), [1.0, 0.0, 0.0, 0.0])
    ga, gb = tf.grad(tf.sum(tf.real(y)), [a, b], create_graph=True)
    np.testing.assert_array_equal(ga.numpy(), [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(gb.numpy(), [0.0, 0.0, 0.0, 0.0])
    # second derivatives exist and are finite
    ha, hb = tf.grad(tf.sum(tf.real(ga)) + tf.sum(tf.real(gb)), [a, b])
    for h in (ha, hb):
        assert h is None or np.all(np.isfinite(h.numpy()))
    assert ha.numpy()[2] == 2.0   # d²(x²)/dx² at 0
    # forward mode agrees
    _, t = tf.jvp(tf.pow, [a0, b0], [np.ones(4, dtype), np.ones(4, dtype)])
    np.testing.assert_array_equal(t.numpy(), [0.0, 1.0, 0.0, 0.0])


def test_pow_scalar_exponent_and_base():
    x0 = sample("pos", (3,), np.float64)
    x = tf.tensor(x0, requires_grad=True)
    (g,) = tf.grad(tf.sum(x ** 3), [x])
    np.testing.assert_allclose(g.numpy(), 3 * x0 ** 2, rtol=1e-14)
    (g,) = tf.grad(tf.sum(2.0 ** x), [x])
    np.testing.assert_allclose(g.numpy(), np.log(2.0) * 2.0 ** x0, rtol=1e-14)
    check_grads(lambda t: t ** 2, [sample("any", (3,), np.complex128)], order=2)


def test_hypot_at_origin_has_zero_gradient():
    a = tf.tensor([0.0, 3.0], requires_grad=True)
    b = tf.tensor([0.0, 4.0], requires_grad=True)
    ga, gb = tf.grad(tf.sum(tf.hypot(a, b)), [a, b])
    np.testing.assert_array_equal(ga.numpy(), [0.0, 0.6])
    np.testing.assert_array_equal(gb.numpy(), [0.0, 0.8])
    _, t = tf.jvp(tf.hypot, [np.zeros(2), np.zeros(2)], [np.ones(2), np.ones(2)])
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])


# ---- where and clip ---------------------------------------------------------------------

def test_where_value_and_dispatch():
    cond = np.array([[True], [False], [True]])
    a, b = sample("any", (3, 1), np.float64), sample("any", (4,), np.float64, 1)
    expected = np.where(cond, a, b)
    _assert_value(tf.where(cond, tf.tensor(a), tf.tensor(b)), expected)
    _assert_value(np.where(cond, tf.tensor(a), b), expected)
    _assert_value(tf.where(tf.tensor(cond.astype(float)), a, tf.tensor(b)), expected)
    _assert_value(tf.where(cond, tf.tensor(a), 0.0), np.where(cond, a, 0.0))
    x32 = tf.tensor(np.ones(3, np.float32))
    assert tf.where(np.array([True, False, True]), x32, 2.0).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((3, 1), (3, 1), (4,)),
                                    ((4,), (), (3, 1))], ids=str)
def test_where_grads(dtype, shapes):
    cshape, ashape, bshape = shapes
    cond = np.random.default_rng(0).random(cshape) < 0.5
    a, b = sample("any", ashape, dtype, 1), sample("any", bshape, dtype, 2)
    check_grads(lambda x, y: tf.where(cond, x, y), [a, b], modes=("rev", "fwd"), order=2)
    check_low_precision(lambda x, y: tf.where(cond, x, y), [a, b])


def test_where_cotangents_are_masked():
    cond = np.array([True, False, True])
    a = tf.tensor(np.ones(3), requires_grad=True)
    b = tf.tensor(np.ones(3), requires_grad=True)
    ga, gb = tf.grad(tf.where(cond, a, b), [a, b], [np.array([1.0, 2.0, 3.0])])
    np.testing.assert_array_equal(ga.numpy(), [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(gb.numpy(), [0.0, 2.0, 0.0])


def test_clip_value_methods_and_dispatch():
    x0 = sample("any", (2, 5), np.float64) * 2
    t = tf.tensor(x0)
    expected = np.clip(x0, -0.5, 0.5)
    _assert_value(tf.clip(t, -0.5, 0.5), expected)
    _assert_value(t.clip(-0.5, 0.5), expected)
    _assert_value(t.clamp(-0.5, 0.5), expected)
    _assert_value(np.clip(t, -0.5, 0.5), expected)
    _assert_value(tf.clip(t, tf.tensor(-0.5), tf.tensor(0.5)), expected)
    _assert_value(tf.clip(t, min=0.0), np.maximum(x0, 0.0))
    _assert_value(tf.clip(t, max=0.0), np.minimum(x0, 0.0))
    _assert_value(tf.clip(t.numpy().astype(np.float32), -0.5, 0.5),
                  expected.astype(np.float32))


def test_clip_gradient_passes_inside_and_at_the_bounds():
    x0 = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    x = tf.tensor(x0, requires_grad=True)
    (g,) = tf.grad(tf.sum(tf.clip(x, -0.5, 0.5)), [x])
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0, 1.0, 1.0, 0.0])
    _, t = tf.jvp(lambda y: tf.clip(y, -0.5, 0.5), [x0], [np.full(5, 2.0)])
    np.testing.assert_array_equal(t.numpy(), [0.0, 2.0, 2.0, 2.0, 0.0])


def test_clip_grads():
    x0 = np.array([[-1.3, -0.2, 0.1], [0.7, 2.0, -0.45]])
    for lo, hi in ((-0.5, 0.5), (None, 0.5), (-0.5, None)):
        check_grads(lambda t: tf.clip(t, lo, hi), [x0], modes=("rev", "fwd"), order=2)
        check_low_precision(lambda t: tf.clip(t, lo, hi), [x0])


# ---- errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [tf.add, tf.subtract, tf.multiply, tf.divide, tf.pow, tf.atan2,
                                tf.hypot, tf.maximum, tf.minimum, lambda a, b: a + b,
                                lambda a, b: a * b, lambda a, b: tf.where(True, a, b),
                                tf.logaddexp, tf.copysign, tf.remainder, tf.floor_divide,
                                lambda a, b: a % b, lambda a, b: a // b,
                                lambda a, b: tf.clip(a, b), lambda a, b: tf.clip(a, 0.0, b)])
def test_shapes_that_do_not_broadcast_raise_and_leave_no_graph(fn, node_counter):
    a = tf.tensor(np.ones((2, 3)), requires_grad=True)
    b = tf.tensor(np.ones((4,)), requires_grad=True)
    del node_counter[:]
    with pytest.raises(tf.ShapeError, match=r"\(2, 3\).*\(4,\)"):
        fn(a, b)
    assert node_counter == []
    assert a.grad is None and b.grad is None
    tf.exp(a)
    assert len(node_counter) == 1   # the counter does see the nodes ops make
    # the inputs are still usable
    tf.sum(a).backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))


def test_where_condition_that_does_not_broadcast_raises(node_counter):
    a = tf.tensor(np.ones(3), requires_grad=True)
    del node_counter[:]
    with pytest.raises(tf.ShapeError, match="broadcast"):
        tf.where(np.array([True, False]), a, 0.0)
    assert node_counter == []


@pytest.mark.parametrize("bad", [np.ones(3, np.float16), np.array([object(), 1.0], dtype=object),
                                 np.array(["a", "b"])], ids=["float16", "object", "str"])
def test_unsupported_dtypes_raise(bad):
    t = tf.tensor(np.ones(len(bad)))
    for call in (lambda: tf.exp(bad), lambda: tf.add(t, bad), lambda: tf.maximum(bad, t),
                 lambda: t * bad, lambda: np.sin(tf.tensor(bad)),
                 lambda: tf.where(np.ones(len(bad), bool), bad, t)):
        with pytest.raises(tf.DTypeError):
            call()


def test_numpy_ufunc_dispatch_keeps_the_graph():
    x0 = sample("any", (3,), np.float64)
    x = tf.tensor(x0, requires_grad=True)
    y = np.sum(np.sin(x) * np.exp(x))
    assert isinstance(y, tf.Tensor)
    (g,) = tf.grad(y, [x])
    np.testing.assert_allclose(g.numpy(), np.cos(x0) * np.exp(x0) + np.sin(x0) * np.exp(x0),
                               rtol=1e-14)


def test_ufunc_form_without_rule():
    # a ufunc form tenferro has no rule for runs on the payload unless an input requires
    # grad; then it raises rather than drop the gradient
    t = tf.tensor(np.ones(3))
    assert np.add.reduce(t) == 3.0
    out = np.empty(3)
    assert np.exp(t, out=out) is out
    x = tf.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="no differentiable"):
        np.add.reduce(x)
    with pytest.raises(tf.UnsupportedADError):
        np.exp(x, out=np.empty(3))
    with pytest.raises(TypeError, match="out= cannot be a tenferro Tensor"):
        np.exp(t, out=tf.tensor(np.empty(3)))


# ---- the array API's full list over every dtype family ------------------------------------
# Families as the standard names them; each function is checked on every family it is
# defined for (values and dtype against NumPy), and rejected with DTypeError on the
# families it is not (where NumPy would give a silently meaningless answer or TypeError).

FAMILIES = {
    "bool": (np.bool_,),
    "int": (np.int8, np.int16, np.int32, np.int64),
    "uint": (np.uint8, np.uint16, np.uint32, np.uint64),
    "float": (np.float32, np.float64),
    "complex": (np.complex64, np.complex128),
}
NUMERIC = ("int", "uint", "float", "complex")
REAL_NUM = ("int", "uint", "float")
FLOATING = ("int", "uint", "float", "complex")   # integers become float64 in tenferro
INT_BOOL = ("bool", "int", "uint")
INTEGER = ("int", "uint")
EVERY = ("bool", "int", "uint", "float", "complex")


def family_sample(dtype, shape, seed, role="any"):
    """Values of ``dtype``: small integers (shift counts 0..3, divisors and exponents as
    the role says), bools, floats in [-3, 3], complex numbers."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" or role in ("shift", "exponent") else -9
        hi = {"shift": 4, "exponent": 4}.get(role, 10)
        a = rng.integers(lo, hi, shape)
        if role == "nonzero":
            a = np.where(a == 0, 3, a)
        return a.astype(dtype)
    a = rng.uniform(-3, 3, shape)
    if dtype.kind == "c":
        a = a + 1j * rng.uniform(-3, 3, shape)
    return a.astype(dtype)


def _float_of_ints(fn):
    """NumPy's function with integer/bool inputs converted to float64 first (tenferro's
    rule for functions with a floating-point result; NumPy would pick float16/32)."""
    def ref(*xs):
        xs = [x.astype(np.float64) if x.dtype.kind in "biu" else x for x in xs]
        return fn(*xs)
    return ref


def _round_ref(x):
    return x if x.dtype.kind in "biu" else np.round(x)


# name -> (tf function, NumPy reference, families)
API_UNARY = {
    "abs": (tf.abs, np.abs, NUMERIC), "acos": (tf.acos, _float_of_ints(np.arccos), FLOATING),
    "acosh": (tf.acosh, _float_of_ints(np.arccosh), FLOATING),
    "asin": (tf.asin, _float_of_ints(np.arcsin), FLOATING),
    "asinh": (tf.asinh, _float_of_ints(np.arcsinh), FLOATING),
    "atan": (tf.atan, _float_of_ints(np.arctan), FLOATING),
    "atanh": (tf.atanh, _float_of_ints(np.arctanh), FLOATING),
    "bitwise_invert": (tf.bitwise_invert, np.invert, INT_BOOL),
    "ceil": (tf.ceil, np.ceil, REAL_NUM), "conj": (tf.conj, np.conj, NUMERIC),
    "cos": (tf.cos, _float_of_ints(np.cos), FLOATING),
    "cosh": (tf.cosh, _float_of_ints(np.cosh), FLOATING),
    "exp": (tf.exp, _float_of_ints(np.exp), FLOATING),
    "expm1": (tf.expm1, _float_of_ints(np.expm1), FLOATING),
    "floor": (tf.floor, np.floor, REAL_NUM), "imag": (tf.imag, np.imag, NUMERIC),
    "isfinite": (tf.isfinite, np.isfinite, NUMERIC), "isinf": (tf.isinf, np.isinf, NUMERIC),
    "isnan": (tf.isnan, np.isnan, NUMERIC),
    "log": (tf.log, _float_of_ints(np.log), FLOATING),
    "log1p": (tf.log1p, _float_of_ints(np.log1p), FLOATING),
    "log2": (tf.log2, _float_of_ints(np.log2), FLOATING),
    "log10": (tf.log10, _float_of_ints(np.log10), FLOATING),
    "logical_not": (tf.logical_not, np.logical_not, ("bool",)),
    "negative": (tf.negative, np.negative, NUMERIC),
    "positive": (tf.positive, np.positive, NUMERIC), "real": (tf.real, np.real, NUMERIC),
    "reciprocal": (tf.reciprocal, _float_of_ints(np.reciprocal), FLOATING),
    "round": (tf.round, _round_ref, NUMERIC), "sign": (tf.sign, np.sign, NUMERIC),
    "signbit": (tf.signbit, np.signbit, REAL_NUM),
    "sin": (tf.sin, _float_of_ints(np.sin), FLOATING),
    "sinh": (tf.sinh, _float_of_ints(np.sinh), FLOATING),
    "square": (tf.square, np.square, NUMERIC),
    "sqrt": (tf.sqrt, _float_of_ints(np.sqrt), FLOATING),
    "tan": (tf.tan, _float_of_ints(np.tan), FLOATING),
    "tanh": (tf.tanh, _float_of_ints(np.tanh), FLOATING),
    "trunc": (tf.trunc, np.trunc, REAL_NUM),
}
# name -> (tf function, NumPy reference, families, role of x2)
API_BINARY = {
    "add": (tf.add, np.add, NUMERIC, "any"),
    "atan2": (tf.atan2, _float_of_ints(np.arctan2), REAL_NUM, "any"),
    "bitwise_and": (tf.bitwise_and, np.bitwise_and, INT_BOOL, "any"),
    "bitwise_left_shift": (tf.bitwise_left_shift, np.left_shift, INTEGER, "shift"),
    "bitwise_or": (tf.bitwise_or, np.bitwise_or, INT_BOOL, "any"),
    "bitwise_right_shift": (tf.bitwise_right_shift, np.right_shift, INTEGER, "shift"),
    "bitwise_xor": (tf.bitwise_xor, np.bitwise_xor, INT_BOOL, "any"),
    "copysign": (tf.copysign, _float_of_ints(np.copysign), REAL_NUM, "any"),
    "divide": (tf.divide, np.divide, NUMERIC, "nonzero"),
    "equal": (tf.equal, np.equal, EVERY, "any"),
    "floor_divide": (tf.floor_divide, np.floor_divide, REAL_NUM, "nonzero"),
    "greater": (tf.greater, np.greater, REAL_NUM, "any"),
    "greater_equal": (tf.greater_equal, np.greater_equal, REAL_NUM, "any"),
    "hypot": (tf.hypot, _float_of_ints(np.hypot), REAL_NUM, "any"),
    "less": (tf.less, np.less, REAL_NUM, "any"),
    "less_equal": (tf.less_equal, np.less_equal, REAL_NUM, "any"),
    "logaddexp": (tf.logaddexp, _float_of_ints(np.logaddexp), REAL_NUM, "any"),
    "logical_and": (tf.logical_and, np.logical_and, ("bool",), "any"),
    "logical_or": (tf.logical_or, np.logical_or, ("bool",), "any"),
    "logical_xor": (tf.logical_xor, np.logical_xor, ("bool",), "any"),
    "maximum": (tf.maximum, np.maximum, REAL_NUM, "any"),
    "minimum": (tf.minimum, np.minimum, REAL_NUM, "any"),
    "multiply": (tf.multiply, np.multiply, NUMERIC, "any"),
    "nextafter": (tf.nextafter, _float_of_ints(np.nextafter), REAL_NUM, "any"),
    "not_equal": (tf.not_equal, np.not_equal, EVERY, "any"),
    "pow": (tf.pow, np.power, NUMERIC, "exponent"),
    "remainder": (tf.remainder, np.remainder, REAL_NUM, "nonzero"),
    "subtract": (tf.subtract, np.subtract, NUMERIC, "any"),
}
# families a function refuses with DTypeError (the standard does not define them there)
API_REJECTS = {
    "bitwise_and": ("float", "complex"), "bitwise_or": ("float", "complex"),
    "bitwise_xor": ("float", "complex"), "bitwise_invert": ("float", "complex"),
    "bitwise_left_shift": ("float", "complex"), "bitwise_right_shift": ("float", "complex"),
    "less": ("complex",), "less_equal": ("complex",), "greater": ("complex",),
    "greater_equal": ("complex",), "floor": ("complex",), "ceil": ("complex",),
    "trunc": ("complex",), "floor_divide": ("complex",), "remainder": ("complex",),
    "signbit": ("complex",), "nextafter": ("complex",), "copysign": ("complex",),
    "logaddexp": ("complex",), "atan2": ("complex",), "hypot": ("complex",),
    "maximum": ("complex",), "minimum": ("complex",), "sign": ("bool",),
    "positive": ("bool",),
}


def test_the_tables_cover_the_standard():
    """The tables below name every elementwise function of the standard (its stub's
    __all__, when the shared suite is beside the project) and each exists in tenferro."""
    import ast
    import pathlib
    names = set(API_UNARY) | set(API_BINARY) | {"clip"}
    assert len(names) == 67
    stub = (pathlib.Path(__file__).resolve().parents[3] / "shared" / "array-api-tests" /
            "array-api" / "src" / "array_api_stubs" / "_2024_12" / "elementwise_functions.py")
    if stub.exists():
        text = stub.read_text()
        start = text.index("__all__ = [") + len("__all__ = ")
        listed = set(ast.literal_eval(text[start:text.index("]", start) + 1]))
        assert listed == names, (listed - names, names - listed)
    for name in names:
        assert callable(getattr(tf, name)), name


def test_numpy_spellings_of_the_new_functions():
    """Differentiable ones dispatch to tenferro (a Tensor in the graph); NumPy's
    non-differentiable ones return NumPy's ndarray even for a tensor that requires grad."""
    x0 = sample("pos", (4,), np.float64, 40)
    x = tf.tensor(x0, requires_grad=True)
    for call, deriv in ((lambda t: np.log2(t), 1 / (x0 * np.log(2))),
                        (lambda t: np.log10(t), 1 / (x0 * np.log(10))),
                        (lambda t: np.logaddexp(t, 0.5), np.exp(x0) / (np.exp(x0) + np.exp(0.5))),
                        (lambda t: np.copysign(t, -1.0), -np.ones(4)),
                        (lambda t: np.remainder(t, 0.3), np.ones(4)),
                        (lambda t: np.positive(t), np.ones(4)),
                        (lambda t: np.clip(t, 0.6, 1.5), (x0 >= 0.6) & (x0 <= 1.5))):
        y = call(x)
        assert isinstance(y, tf.Tensor) and y.requires_grad
        (g,) = tf.grad(tf.sum(y), [x])
        np.testing.assert_allclose(g.numpy(), deriv, rtol=1e-14)
    i = tf.tensor([1, 2, 3])
    for call in (lambda: np.isnan(x), lambda: np.isinf(x), lambda: np.isfinite(x),
                 lambda: np.signbit(x), lambda: np.nextafter(x, 0.0), lambda: np.floor(x),
                 lambda: np.left_shift(i, 1), lambda: np.right_shift(i, 1),
                 lambda: np.less(x, 1.0), lambda: np.bitwise_and(i, 1)):
        assert type(call()) is np.ndarray


def _api_cases(table):
    return [(name, np.dtype(dt).name) for name in sorted(table)
            for fam in table[name][2] for dt in FAMILIES[fam]]


def _same(actual, expected):
    assert isinstance(actual, tf.Tensor)
    assert type(actual.numpy()) is np.ndarray
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual.numpy(), expected, rtol=_tol(expected.dtype), atol=0)
    else:
        np.testing.assert_array_equal(actual.numpy(), expected)


@pytest.mark.parametrize("name,dtype", _api_cases(API_UNARY))
def test_api_unary_values_every_dtype(name, dtype):
    fn, ref, _ = API_UNARY[name]
    x = family_sample(dtype, (2, 5), 21)
    with np.errstate(all="ignore"):
        expected = ref(x)
        _same(fn(tf.tensor(x)), expected)
        _same(fn(x), expected)


@pytest.mark.parametrize("name,dtype", _api_cases(API_BINARY))
def test_api_binary_values_every_dtype(name, dtype):
    fn, ref, _, role = API_BINARY[name]
    a, b = family_sample(dtype, (3, 1), 22), family_sample(dtype, (4,), 23, role)
    with np.errstate(all="ignore"):
        expected = ref(a, b)
        _same(fn(tf.tensor(a), tf.tensor(b)), expected)
        _same(fn(a, tf.tensor(b)), expected)
        _same(fn(tf.tensor(a), b), expected)


def _rejects_cases():
    out = []
    for name, fams in sorted(API_REJECTS.items()):
        for fam in fams:
            out.append((name, np.dtype(FAMILIES[fam][-1]).name))
    return out


@pytest.mark.parametrize("name,dtype", _rejects_cases())
def test_api_functions_reject_undefined_dtype_families(name, dtype):
    x = tf.tensor(family_sample(dtype, (3,), 24))
    fn = API_UNARY[name][0] if name in API_UNARY else API_BINARY[name][0]
    with pytest.raises(tf.DTypeError):
        fn(x) if name in API_UNARY else fn(x, x)
    if name in API_BINARY:   # also with a Python scalar on either side
        with pytest.raises(tf.DTypeError):
            fn(x, 1)
        with pytest.raises(tf.DTypeError):
            fn(1, x)


# name -> (operator, reflected operator or None, tf function)
OPERATORS = {
    "__add__": ("__radd__", tf.add), "__sub__": ("__rsub__", tf.subtract),
    "__mul__": ("__rmul__", tf.multiply), "__truediv__": ("__rtruediv__", tf.divide),
    "__floordiv__": ("__rfloordiv__", tf.floor_divide), "__mod__": ("__rmod__", tf.remainder),
    "__pow__": ("__rpow__", tf.pow), "__and__": ("__rand__", tf.bitwise_and),
    "__or__": ("__ror__", tf.bitwise_or), "__xor__": ("__rxor__", tf.bitwise_xor),
    "__lshift__": ("__rlshift__", tf.bitwise_left_shift),
    "__rshift__": ("__rrshift__", tf.bitwise_right_shift),
    "__eq__": (None, tf.equal), "__ne__": (None, tf.not_equal), "__lt__": (None, tf.less),
    "__le__": (None, tf.less_equal), "__gt__": (None, tf.greater),
    "__ge__": (None, tf.greater_equal),
}
_OP_DTYPES = {"__and__": np.int16, "__or__": np.uint8, "__xor__": np.int64,
              "__lshift__": np.int32, "__rshift__": np.int64, "__floordiv__": np.float64,
              "__mod__": np.int8, "__pow__": np.int64}


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_binary_operators_match_the_functions_and_python(op):
    rop, fn = OPERATORS[op]
    dt = _OP_DTYPES.get(op, np.float64)
    role = {"__lshift__": "shift", "__rshift__": "shift", "__pow__": "exponent",
            "__floordiv__": "nonzero", "__mod__": "nonzero",
            "__truediv__": "nonzero"}.get(op, "any")
    a, b = family_sample(dt, (3, 1), 25, role), family_sample(dt, (4,), 26, role)
    ta, tb = tf.tensor(a), tf.tensor(b)
    expected = getattr(a, op)(b)            # NumPy's operator
    _same(getattr(ta, op)(tb), expected)
    _same(fn(ta, tb), expected)
    if rop is not None:
        _same(getattr(tb, rop)(ta), expected)
    # a Python scalar on either side (weak: the tensor's dtype is kept)
    s = 2
    _same(getattr(ta, op)(s), getattr(a, op)(dt(s)))
    if rop is not None:
        _same(getattr(ta, rop)(s), getattr(dt(s), op)(a))


@pytest.mark.parametrize("dt", [np.int8, np.uint16, np.float32, bool])
def test_unary_operators(dt):
    x = family_sample(dt, (5,), 27)
    t = tf.tensor(x)
    if np.dtype(dt).kind in "biu":
        _same(~t, ~x)
    else:
        with pytest.raises(tf.DTypeError, match="bitwise_invert needs integer or bool"):
            ~t
    if np.dtype(dt).kind != "b":
        _same(-t, -x)
        _same(+t, +x)
        _same(abs(t), abs(x))


def test_comparison_with_other_python_objects_is_python_s():
    t = tf.tensor([1.0, 2.0])
    assert (t == None) is False and (t != None) is True   # noqa: E711
    assert (t == "a") is False and (t != "a") is True
    assert t.__eq__(None) is NotImplemented and t.__lt__("a") is NotImplemented
    for bad in (lambda: t < "a", lambda: t >= None, lambda: t & object(), lambda: t << None):
        with pytest.raises(TypeError):
            bad()


def test_python_scalars_are_weak_for_the_new_functions():
    f32 = tf.tensor(np.array([0.5, -1.5, 2.5], np.float32))
    for y in (f32 % 2.0, 2.0 % f32, f32 // 2, 3 // f32, tf.logaddexp(f32, 1.0),
              tf.copysign(f32, -1), tf.copysign(1.0, f32), tf.nextafter(f32, 0.0),
              tf.clip(f32, 0, 1.0), tf.remainder(f32, 1)):
        assert y.dtype == np.float32, y
    i8 = tf.tensor(np.array([1, -2, 3], np.int8))
    for y in (i8 << 2, 1 << i8.__abs__(), i8 >> 1, i8 % 2, i8 // 2, 7 // i8, i8 & 3,
              tf.clip(i8, -1, 1)):
        assert y.dtype == np.int8, y
    assert (i8 / i8).dtype == np.float64     # true division of integers gives float64
    assert (i8 ** 2).dtype == np.int8
    assert tf.floor(i8).dtype == np.int8 and tf.round(i8).dtype == np.int8


def test_abs_of_the_smallest_integer_wraps_like_numpy():
    # the array API leaves |min int| implementation-defined; tenferro gives NumPy's answer
    x = np.array([-128, -1, 5], np.int8)
    _same(tf.abs(tf.tensor(x)), np.abs(x))
    assert tf.abs(tf.tensor(x)).numpy()[0] == -128


# ---- piecewise-constant functions: float results whose derivative is exactly 0 ----------

PIECEWISE = {
    "floor": (tf.floor, np.floor), "ceil": (tf.ceil, np.ceil), "trunc": (tf.trunc, np.trunc),
    "round": (tf.round, np.round), "sign": (tf.sign, np.sign),
}


def _away_from_jumps(shape, dtype, seed):
    """Values whose distance to the nearest half-integer and integer is > 0.05 (finite
    differences then see the constant pieces)."""
    rng = np.random.default_rng(seed)
    n = rng.integers(-4, 5, shape) + rng.choice([0.2, 0.3, 0.7, 0.8], shape)
    return n.astype(dtype)


@pytest.mark.parametrize("name", sorted(PIECEWISE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_piecewise_constant_values_and_zero_gradient(name, dtype):
    fn, ref = PIECEWISE[name]
    x0 = _away_from_jumps((2, 3), dtype, 30)
    x = tf.tensor(x0, requires_grad=True)
    y = fn(x)
    _same(y, ref(x0))
    assert y.requires_grad      # recorded, so gradients through it are 0, not missing
    (g,) = tf.grad(tf.sum(y * 2.0), [x])
    assert isinstance(g, tf.Tensor) and g.dtype == dtype and g.shape == x.shape
    np.testing.assert_array_equal(g.numpy(), 0)
    # composed with a differentiable use of x: d(x·f(x))/dx = f(x) a.e.
    (g,) = tf.grad(tf.sum(x * fn(x)), [x])
    np.testing.assert_array_equal(g.numpy(), ref(x0))
    # .backward accumulates the zero into .grad
    tf.sum(fn(x)).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0)
    # forward mode: a zero tangent
    _, t = tf.jvp(fn, [x0], [np.ones_like(x0)])
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), 0)


@pytest.mark.parametrize("name", sorted(PIECEWISE))
def test_piecewise_constant_check_grads(name):
    """Between the jumps finite differences are 0: every mode and order agrees."""
    fn = PIECEWISE[name][0]
    x0 = _away_from_jumps((2, 3), np.float64, 31)
    check_grads(fn, [x0], modes=("rev", "fwd"), order=2)
    check_grads(lambda t: t * fn(t), [x0], modes=("rev", "fwd"), order=2)
    check_low_precision(lambda t: t * fn(t), [x0])


def test_piecewise_constant_zero_gradient_at_the_jumps():
    x0 = np.array([-1.0, -0.5, 0.0, 0.5, 1.5, 2.0])
    x = tf.tensor(x0, requires_grad=True)
    for fn in (tf.floor, tf.ceil, tf.trunc, tf.round, tf.sign):
        (g,) = tf.grad(tf.sum(fn(x)), [x])
        np.testing.assert_array_equal(g.numpy(), 0)
    # second order through create_graph: still zeros, and differentiable again
    (g,) = tf.grad(tf.sum(x * tf.floor(x)), [x], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), np.floor(x0))
    (h,) = tf.grad(tf.sum(g * x), [x])
    np.testing.assert_array_equal(h.numpy(), np.floor(x0))


def test_round_of_complex_rounds_both_parts_with_zero_derivative():
    z0 = np.array([1.5 + 2.5j, -0.5 - 1.7j, 3.2 + 0.49j])
    _same(tf.round(tf.tensor(z0)), np.round(z0))
    _same(tf.round(tf.tensor(z0.astype(np.complex64))), np.round(z0.astype(np.complex64)))
    z = tf.tensor(z0, requires_grad=True)
    (g,) = tf.grad(tf.sum(tf.real(tf.round(z) * 1j)), [z])
    assert g.dtype == np.complex128
    np.testing.assert_array_equal(g.numpy(), 0)


def test_round_decimals_and_numpy_spellings():
    x0 = np.array([1.234, -5.678, 2.5, 3.5])
    x = tf.tensor(x0, requires_grad=True)
    _same(tf.round(x, decimals=1), np.round(x0, 1))
    _same(x.round(decimals=2), np.round(x0, 2))
    _same(x.round(2), x0.round(2))            # NumPy's method spelling
    (g,) = tf.grad(tf.sum(tf.round(x, decimals=1)), [x])
    np.testing.assert_array_equal(g.numpy(), 0)
    i = tf.tensor([1234, -5678])
    _same(tf.round(i, decimals=-2), np.round(i.numpy(), -2))
    # NumPy's own functions on a tensor (also one that requires grad) return NumPy's
    # ndarray of the payload: np.round(t, 1) works as in NumPy
    for call, expected in ((lambda: np.round(x, 1), np.round(x0, 1)),
                           (lambda: np.around(x, 2), np.round(x0, 2)),
                           (lambda: np.rint(x), np.rint(x0)), (lambda: np.floor(x), np.floor(x0)),
                           (lambda: np.ceil(x), np.ceil(x0)), (lambda: np.trunc(x), np.trunc(x0)),
                           (lambda: np.fix(x), np.fix(x0)),
                           (lambda: np.floor_divide(x, 2.0), np.floor_divide(x0, 2.0))):
        out = call()
        assert type(out) is np.ndarray
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.int64, np.bool_])
def test_rounding_integers_is_the_identity(dtype):
    x0 = family_sample(dtype, (4,), 32)
    t = tf.tensor(x0)
    for fn in (tf.floor, tf.ceil, tf.trunc, tf.round):
        y = fn(t)
        assert y is not t                     # a new tensor (in-place updates stay apart)
        _same(y, x0)
        assert not y.requires_grad
        arr = x0.copy()
        y = fn(arr)
        assert not np.shares_memory(y.numpy(), arr)   # the caller's array may change later
        _same(y, x0)


def test_floor_divide_values_gradient_and_special_cases():
    a0, b0 = np.array([[7.5], [-7.5], [0.3]]), np.array([2.0, -2.0, 0.7])
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    y = a // b
    _same(y, a0 // b0)
    ga, gb = tf.grad(tf.sum(y), [a, b])
    assert ga.shape == (3, 1) and gb.shape == (3,)
    np.testing.assert_array_equal(ga.numpy(), 0)
    np.testing.assert_array_equal(gb.numpy(), 0)
    check_grads(tf.floor_divide, [a0, b0], modes=("rev", "fwd"), order=2)
    _same(tf.tensor([7, -7]) // 2, np.array([3, -4]))
    _same(7 // tf.tensor([2, -2]), np.array([3, -4]))
    # the array API: floor(x1/x2) where an operand is infinite (NumPy follows Python)
    inf = np.inf
    x1 = tf.tensor([inf, inf, -inf, 1.0, -1.0, 1.0, inf, np.nan])
    x2 = tf.tensor([2.0, -2.0, 2.0, -inf, inf, inf, inf, 1.0])
    out = tf.floor_divide(x1, x2).numpy()
    np.testing.assert_array_equal(out[:3], [inf, -inf, -inf])
    assert out[3] == 0 and np.signbit(out[3])          # -0 (Python: -1.0)
    assert out[4] == 0 and np.signbit(out[4])
    assert out[5] == 0 and not np.signbit(out[5])
    assert np.isnan(out[6]) and np.isnan(out[7])


def test_floor_divide_and_rounding_reject_complex(node_counter):
    z = tf.tensor(np.array([1 + 1j]), requires_grad=True)
    del node_counter[:]
    for call in (lambda: z // 2, lambda: tf.floor(z), lambda: tf.ceil(z), lambda: tf.trunc(z),
                 lambda: z % 2):
        with pytest.raises(tf.DTypeError, match="real"):
            call()
    assert node_counter == []


# ---- sign of complex (differentiable), positive ---------------------------------------

def test_complex_sign_is_differentiable():
    z0 = sample("nonzero", (2, 3), np.complex128, 33)
    _same(tf.sign(tf.tensor(z0)), z0 / np.abs(z0))
    check_grads(tf.sign, [z0], modes=("rev", "fwd"), order=2)
    check_low_precision(tf.sign, [z0])
    # real input of a complex sign through a phase: the cotangent is real
    check_grads(lambda x: tf.sign(x * (1 + 2j)), [sample("nonzero", (4,), np.float64, 34)],
                modes=("rev", "fwd"), order=2)


def test_complex_sign_at_zero_has_zero_finite_derivatives():
    z0 = np.array([0j, 3 + 4j])
    z = tf.tensor(z0, requires_grad=True)
    y = tf.sign(z)
    _same(y, np.array([0j, 0.6 + 0.8j]))
    gbar = np.array([1 + 1j, 1 + 1j])
    (g,) = tf.grad(y, [z], [gbar], create_graph=True)
    assert g.numpy()[0] == 0
    # (ḡ − y·Re(conj(y)·ḡ))/|z|
    w = 0.6 + 0.8j
    np.testing.assert_allclose(g.numpy()[1], (gbar[1] - w * (np.conj(w) * gbar[1]).real) / 5)
    (h,) = tf.grad(tf.sum(tf.real(g * np.array([1 - 1j, 2 + 1j]))), [z])
    assert np.all(np.isfinite(h.numpy())) and h.numpy()[0] == 0
    _, t = tf.jvp(tf.sign, [z0], [np.array([1j, 1j])])
    assert t.numpy()[0] == 0


def test_positive_is_a_new_tensor_with_identity_derivative():
    x = tf.tensor([1.0, -2.0], requires_grad=True)
    y = +x
    assert y is not x and y.requires_grad
    (g,) = tf.grad(tf.sum(y * y), [x])
    np.testing.assert_array_equal(g.numpy(), [2.0, -4.0])
    with pytest.raises(tf.DTypeError, match="bool"):
        +tf.tensor([True])
    with pytest.raises(tf.DTypeError, match="bool"):
        tf.sign(tf.tensor([True]))


# ---- logaddexp, copysign, remainder ---------------------------------------------------

def test_logaddexp_is_stable_and_its_weights_are_softmax():
    a0 = np.array([1000.0, -1000.0, 0.0, 1e-3, 710.0])
    b0 = np.array([1000.0, -1001.0, 50.0, -1e-3, 0.0])
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    y = tf.logaddexp(a, b)
    _same(y, np.logaddexp(a0, b0))
    assert np.all(np.isfinite(y.numpy()))
    ga, gb = tf.grad(tf.sum(y), [a, b])
    m = np.maximum(a0, b0)
    wa = np.exp(a0 - m) / (np.exp(a0 - m) + np.exp(b0 - m))
    wb = np.exp(b0 - m) / (np.exp(a0 - m) + np.exp(b0 - m))
    np.testing.assert_allclose(ga.numpy(), wa, rtol=1e-15)   # as accurate as x1 − x2
    np.testing.assert_allclose(gb.numpy(), wb, rtol=1e-15)
    assert 0 < gb.numpy()[4] < 1e-300       # σ(−710), tiny but not flushed to 0
    check_grads(tf.logaddexp, [a0[:4] / 1000 * 3, b0[:4] / 1000 * 3], modes=("rev", "fwd"),
                order=2)


def test_logaddexp_derivatives_at_infinities():
    inf = np.inf
    a0 = np.array([inf, -inf, inf, -inf, 2.0, inf, np.nan])
    b0 = np.array([1.0, -inf, inf, 3.0, -inf, -inf, 1.0])
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    with np.errstate(invalid="ignore"):      # NumPy's own warning for the NaN input
        y = tf.logaddexp(a, b)
    with np.errstate(invalid="raise"):       # no inf − inf warning leaks from the rules
        ga, gb = tf.grad(y, [a, b], [np.ones(7)])
    np.testing.assert_array_equal(y.numpy(), [inf, -inf, inf, 3.0, 2.0, inf, np.nan])
    np.testing.assert_array_equal(ga.numpy()[:6], [1.0, 0.5, 0.5, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(gb.numpy()[:6], [0.0, 0.5, 0.5, 1.0, 0.0, 0.0])
    assert np.isnan(ga.numpy()[6])            # NaN in, NaN out
    _, t = tf.jvp(tf.logaddexp, [a0[:6], b0[:6]], [np.full(6, 2.0), np.full(6, 10.0)])
    np.testing.assert_array_equal(t.numpy(), [2.0, 6.0, 6.0, 10.0, 2.0, 2.0])
    # second order stays finite at the infinities
    with np.errstate(invalid="ignore"):
        (g,) = tf.grad(tf.logaddexp(a, b), [a], [np.ones(7)], create_graph=True)
    (h,) = tf.grad(g, [a], [np.ones(7)])
    np.testing.assert_array_equal(h.numpy()[:6], 0)   # the weights are flat out there


def test_copysign_derivatives():
    a0 = np.array([2.0, -2.0, 3.0, -3.0, 0.0, -0.0, 1.5])
    b0 = np.array([1.0, 1.0, -1.0, -1.0, -1.0, 1.0, -0.0])
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    y = tf.copysign(a, b)
    _same(y, np.copysign(a0, b0))
    ga, gb = tf.grad(tf.sum(y), [a, b])
    # +1 where the sign bits agree, −1 where they differ, 0 at a = ±0 (|a|'s subgradient);
    # −0 in b counts as negative
    np.testing.assert_array_equal(ga.numpy(), [1, -1, -1, 1, 0, 0, -1])
    assert isinstance(gb, tf.Tensor)
    np.testing.assert_array_equal(gb.numpy(), 0)  # zero, not None: y only jumps with b
    _, t = tf.jvp(tf.copysign, [a0, b0], [np.ones(7), np.ones(7)])
    np.testing.assert_array_equal(t.numpy(), [1, -1, -1, 1, 0, 0, -1])
    _, t = tf.jvp(lambda v: tf.copysign(a0, v), [b0], [np.ones(7)])
    np.testing.assert_array_equal(t.numpy(), 0)


def test_remainder_values_and_derivatives():
    a0, b0 = np.array([[5.5], [-5.5], [0.25]]), np.array([2.0, -2.0, 0.75])
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    y = a % b
    _same(y, np.remainder(a0, b0))
    ga, gb = tf.grad(tf.sum(y), [a, b])
    np.testing.assert_array_equal(ga.numpy(), np.full((3, 1), 3.0))
    np.testing.assert_array_equal(gb.numpy(), -np.floor_divide(a0, b0).sum(axis=0))
    # the result has the sign of the divisor (Python's %)
    _same(tf.tensor([5, -5, 5, -5]) % tf.tensor([3, 3, -3, -3]), np.array([2, 1, -1, -2]))
    assert not (tf.tensor([5]) % 3).requires_grad
    # np.remainder / np.mod dispatch to the differentiable op
    y = np.mod(a, b)
    assert isinstance(y, tf.Tensor) and y.requires_grad


# ---- clip with tensor bounds ----------------------------------------------------------

def test_clip_tensor_bounds_values_and_broadcasting():
    x0 = sample("any", (3, 1), np.float64, 35) * 2
    lo0 = np.array([-0.5, -1.0, -2.0, 0.0])
    hi0 = np.array([[0.5], [1.0], [2.0]])
    _same(tf.clip(tf.tensor(x0), tf.tensor(lo0), tf.tensor(hi0)), np.clip(x0, lo0, hi0))
    _same(tf.clip(x0, min=lo0), np.clip(x0, lo0, None))
    _same(np.clip(tf.tensor(x0), lo0, hi0), np.clip(x0, lo0, hi0))
    _same(np.clip(tf.tensor(x0), a_min=-1.0, a_max=1.0), np.clip(x0, -1.0, 1.0))
    _same(np.clip(tf.tensor(x0), min=-1.0), np.clip(x0, -1.0, None))
    _same(tf.clip(tf.tensor(x0)), x0)               # no bounds: the values of x
    # the result keeps x's dtype (bounds do not take part in promotion)
    x32 = tf.tensor(x0.astype(np.float32))
    assert tf.clip(x32, tf.tensor(lo0), 1).dtype == np.float32


def test_clip_gradients_flow_to_the_active_bound():
    x0 = np.array([-2.0, -0.5, 0.0, 0.5, 2.0, 1.0, 0.3])
    lo0 = np.array([-0.5, -0.5, -0.5, -0.5, -0.5, 2.0, 0.3])
    hi0 = np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.0, 0.3])
    x, lo, hi = (tf.tensor(v, requires_grad=True) for v in (x0, lo0, hi0))
    y = tf.clip(x, lo, hi)
    _same(y, np.clip(x0, lo0, hi0))
    gx, glo, ghi = tf.grad(tf.sum(y), [x, lo, hi])
    # ties go to x (x == lo, x == hi, x == lo == hi); lo > hi: y = hi, all to hi
    np.testing.assert_array_equal(gx.numpy(), [0, 1, 1, 1, 0, 0, 1])
    np.testing.assert_array_equal(glo.numpy(), [1, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(ghi.numpy(), [0, 0, 0, 0, 1, 1, 0])
    _, t = tf.jvp(tf.clip, [x0, lo0, hi0], [np.ones(7), 10 * np.ones(7), 100 * np.ones(7)])
    np.testing.assert_array_equal(t.numpy(), [10, 1, 1, 1, 100, 100, 1])
    # one bound only
    gx, glo = tf.grad(tf.sum(tf.clip(x, lo)), [x, lo])
    np.testing.assert_array_equal(gx.numpy(), x0 >= lo0)
    np.testing.assert_array_equal(glo.numpy(), x0 < lo0)
    gx, ghi = tf.grad(tf.sum(tf.clip(x, max=hi)), [x, hi])
    np.testing.assert_array_equal(gx.numpy(), x0 <= hi0)
    np.testing.assert_array_equal(ghi.numpy(), x0 > hi0)


def test_clip_tensor_bounds_check_grads():
    x0 = np.array([[-1.3, -0.2, 0.1], [0.7, 2.0, -0.45]])
    lo0 = np.array([-0.5, 0.0, -1.0])
    hi0 = np.array([[0.4], [1.5]])
    check_grads(tf.clip, [x0, lo0, hi0], modes=("rev", "fwd"), order=2)
    check_grads(lambda x, lo: tf.clip(x, lo, 1.0), [x0, lo0], modes=("rev", "fwd"), order=2)
    check_grads(lambda x, hi: tf.clip(x, max=hi), [x0, hi0], modes=("rev", "fwd"), order=2)
    check_low_precision(tf.clip, [x0, lo0, hi0])


def test_clip_integer_tensor_bounds():
    x0 = np.array([-100, 0, 100], np.int8)
    t = tf.tensor(x0)
    # integer bounds outside int8's range clip like the range's ends
    _same(tf.clip(t, -1000, 1000), x0)
    _same(tf.clip(t, -5, 5), np.clip(x0, -5, 5))
    with pytest.raises(tf.DTypeError, match="int8"):
        tf.clip(t, tf.tensor([0.0], requires_grad=True))


def test_clip_errors(node_counter):
    x = tf.tensor(np.ones(3), requires_grad=True)
    del node_counter[:]
    with pytest.raises(tf.DTypeError, match="real"):
        tf.clip(x, tf.tensor(np.zeros(3) + 1j))
    with pytest.raises(tf.ShapeError, match="broadcast"):
        tf.clip(x, tf.tensor(np.zeros(2)), 1.0)
    with pytest.raises(TypeError, match="out="):
        np.clip(x, 0, 1, out=np.empty(3))
    assert node_counter == []


# ---- non-differentiable results ------------------------------------------------------

@pytest.mark.parametrize("fn,ufunc", [(tf.isnan, np.isnan), (tf.isinf, np.isinf),
                                      (tf.isfinite, np.isfinite), (tf.signbit, np.signbit)])
def test_predicates_special_values_and_numpy_spelling(fn, ufunc):
    x0 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -2.0])
    x = tf.tensor(x0, requires_grad=True)
    y = fn(x)
    _same(y, ufunc(x0))
    assert y.dtype == bool and not y.requires_grad
    out = ufunc(x)           # NumPy's own function: NumPy's ndarray, even though x needs grad
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, ufunc(x0))
    if fn is not tf.signbit:
        z0 = np.array([complex(np.nan, 0), complex(0, np.inf), 1 + 1j])
        _same(fn(tf.tensor(z0)), ufunc(z0))


def test_nextafter_is_not_differentiated():
    x0 = np.array([1.0, 0.0, -0.0, np.nan])
    x = tf.tensor(x0, requires_grad=True)
    y = tf.nextafter(x, tf.tensor([2.0, -1.0, 1.0, 0.0]))
    assert not y.requires_grad and y.dtype == np.float64
    _same(y, np.nextafter(x0, np.array([2.0, -1.0, 1.0, 0.0])))
    assert y.numpy()[0] == 1.0 + np.finfo(np.float64).eps
    f32 = tf.nextafter(tf.tensor(np.ones(2, np.float32)), 2.0)
    assert f32.dtype == np.float32
    _same(tf.nextafter(tf.tensor([1, 2]), 0), np.nextafter([1.0, 2.0], 0.0))
    out = np.nextafter(x, 0.0)
    assert type(out) is np.ndarray


def test_comparisons_of_complex_raise_but_numpy_keeps_its_order():
    z = tf.tensor(np.array([1 + 2j, 1 - 1j]))
    for call in (lambda: z < z, lambda: z >= 0, lambda: tf.less(z, 1), lambda: 1 > z,
                 lambda: tf.greater_equal(z, z)):
        with pytest.raises(tf.DTypeError, match="complex"):
            call()
    _same(z == z, np.array([True, True]))
    np.testing.assert_array_equal(np.less(z, 1 + 0j), np.less(z.numpy(), 1 + 0j))


@pytest.mark.parametrize("call", [lambda x: x & x, lambda x: x | 1, lambda x: 1 ^ x,
                                  lambda x: x << 1, lambda x: 2 >> x, lambda x: ~x,
                                  lambda x: tf.bitwise_left_shift(x, x)])
def test_bitwise_on_floats_raises(call):
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(tf.DTypeError, match="needs integer"):
        call(x)


def test_shifts_values_and_errors():
    a0 = np.array([1, -8, 5, 64], np.int64)
    _same(tf.tensor(a0) << 2, a0 << 2)
    _same(tf.tensor(a0) >> 1, a0 >> 1)      # arithmetic: -8 >> 1 = -4
    _same(3 << tf.tensor([0, 1, 2]), 3 << np.array([0, 1, 2]))
    _same(64 >> tf.tensor([0, 1, 2]), 64 >> np.array([0, 1, 2]))
    with pytest.raises(tf.DTypeError, match="integer"):
        tf.tensor([True]) << 1
    with pytest.raises(tf.DTypeError, match="uint64"):
        tf.tensor(np.array([1], np.uint64)) << tf.tensor([1])   # no common integer type
    with pytest.raises(tf.ShapeError, match=r"\(2,\).*\(3,\)"):
        tf.tensor([1, 2]) << tf.tensor([1, 2, 3])
    with pytest.raises(tf.ShapeError, match="broadcast"):
        tf.tensor([1, 2]) & tf.tensor([1, 2, 3])
