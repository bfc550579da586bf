"""Elementwise ops (DESIGN.md §3): values against NumPy, derivatives against finite
differences (first and second order, reverse and forward), the low-precision dtypes,
broadcasting and promotion, the edge cases RULES.md fixes, and the error paths."""
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
}
BINARY_OPS = {"__add__": "__radd__", "__sub__": "__rsub__", "__mul__": "__rmul__",
              "__truediv__": "__rtruediv__", "__pow__": "__rpow__"}


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

    monkeypatch.setattr(engine, "Node", counting)
    return made


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
    """JVP multiplies by f'(z), VJP by conj(f'(z)) (DESIGN.md §2)."""
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


def test_sign_is_not_differentiated():
    x = tf.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    for s in (tf.sign(x), x.sign(), np.sign(x)):
        assert isinstance(s, tf.Tensor) and not s.requires_grad
        np.testing.assert_array_equal(s.numpy(), [-1.0, 0.0, 1.0])
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
    """real: z̄ = ȳ + 0i; imag: z̄ = i·ȳ (RULES.md)."""
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


@pytest.mark.parametrize("name", ["atan2", "hypot", "maximum", "minimum"])
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


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power",
                                  "atan2", "hypot", "maximum", "minimum"])
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
    """0**0 and 0**b (b > 0): ∂/∂x is b·x^(b−1) (0 where b = 0), ∂/∂b is 0 (RULES.md)."""
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
                                lambda a, b: a * b, lambda a, b: tf.where(True, a, b)])
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
