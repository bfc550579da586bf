"""User-defined rules: tf.custom_vjp / tf.custom_jvp (tenferro/custom.py).

Each custom function gets an Op in the registry; the autouse fixture removes the ops a
test made, so that the rules table of this process keeps matching a fresh interpreter's
(tests/test_rules.py compares the two).
"""
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.special

import tenferro as tf
from tenferro import rules
from tenferro._ops.registry import OPS
from tenferro.testing import check_grads, check_low_precision

DOC = Path(__file__).resolve().parents[1] / "docs" / "custom_rules.md"


@pytest.fixture(autouse=True)
def _forget_test_ops():
    before = set(OPS)
    yield
    for name in set(OPS) - before:
        del OPS[name]


def expit(x):
    return 1 / (1 + np.exp(-x))


def make_softplus_vjp():
    @tf.custom_vjp
    def softplus(x):
        return np.logaddexp(0.0, x.numpy())

    def fwd(x):
        return np.logaddexp(0.0, x.numpy()), x

    def bwd(x, g):
        return (g / (1 + np.exp(-x)),)
    softplus.defvjp(fwd, bwd)
    return softplus


def make_softplus_jvp():
    @tf.custom_jvp
    def softplus(x):
        return np.logaddexp(0.0, x.numpy())

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return softplus(x), t / (1 + np.exp(-x))
    return softplus


def make_polar_vjp():
    """Two inputs (broadcasting against each other), two outputs: (r cos φ, r sin φ)."""
    @tf.custom_vjp
    def polar(r, phi):
        return r.numpy() * np.cos(phi.numpy()), r.numpy() * np.sin(phi.numpy())

    def fwd(r, phi):
        return polar(r, phi), (r, phi)

    def bwd(res, gs):
        r, phi = res
        gx, gy = gs
        c, s = np.cos(phi), np.sin(phi)
        gr = gx * c + gy * s
        gphi = r * (gy * c - gx * s)
        # cotangents are summed back to each input's shape (the inputs broadcast)
        return (tf.sum(gr, axis=1, keepdims=True), tf.sum(gphi, axis=0))
    polar.defvjp(fwd, bwd)
    return polar


def make_polar_jvp():
    @tf.custom_jvp
    def polar(r, phi):
        return r.numpy() * np.cos(phi.numpy()), r.numpy() * np.sin(phi.numpy())

    @polar.defjvp
    def polar_jvp(primals, tangents):
        r, phi = primals
        tr, tphi = tangents
        c, s = np.cos(phi), np.sin(phi)
        return polar(r, phi), (tr * c - r * s * tphi, tr * s + r * c * tphi)
    return polar


def make_zexp_vjp():
    """A holomorphic function z·eᶻ: cotangent conj(f'(z))·g (docs/design.md#complex-numbers)."""
    @tf.custom_vjp
    def zexp(z):
        return z.numpy() * np.exp(z.numpy())

    def fwd(z):
        return zexp(z), z

    def bwd(z, g):
        return (g * np.conj((1 + z) * np.exp(z)),)
    zexp.defvjp(fwd, bwd)
    return zexp


def make_zexp_jvp():
    @tf.custom_jvp
    def zexp(z):
        return z.numpy() * np.exp(z.numpy())

    @zexp.defjvp
    def zexp_jvp(primals, tangents):
        z, = primals
        t, = tangents
        return zexp(z), (1 + z) * np.exp(z) * t
    return zexp


X = np.array([[-1.5, -0.2, 0.3, 2.0], [0.7, -3.0, 1.1, 0.05]])
R = np.array([[0.5], [1.5], [2.0]])
PHI = np.array([0.1, -0.7, 2.0, 3.0])
Z = np.array([0.3 - 0.2j, -0.5 + 1.1j, 0.8 + 0.4j])


# ---- values and first derivatives -----------------------------------------------------------

@pytest.mark.parametrize("make", [make_softplus_vjp, make_softplus_jvp])
def test_softplus_value_grad_and_backward(make):
    softplus = make()
    x = tf.tensor(X, requires_grad=True)
    y = softplus(x)
    np.testing.assert_allclose(y.numpy(), np.logaddexp(0, X), rtol=1e-15)
    assert y.requires_grad and y.grad_fn.op.name.endswith("softplus")
    g, = tf.grad(tf.sum(y), [x])
    np.testing.assert_allclose(g.numpy(), scipy.special.expit(X), rtol=1e-14)
    tf.sum(softplus(x)).backward()
    tf.sum(softplus(x)).backward()   # .grad accumulates
    np.testing.assert_allclose(x.grad.numpy(), 2 * scipy.special.expit(X), rtol=1e-14)


@pytest.mark.parametrize("make", [make_softplus_vjp, make_softplus_jvp])
def test_plain_call_records_nothing(make):
    softplus = make()
    y = softplus(X)
    assert isinstance(y, tf.Tensor) and not y.requires_grad
    np.testing.assert_allclose(y.numpy(), np.logaddexp(0, X))
    with tf.no_grad():
        assert not softplus(tf.tensor(X, requires_grad=True)).requires_grad


@pytest.mark.parametrize("make", [make_polar_vjp, make_polar_jvp])
def test_tuple_outputs_and_broadcasting(make):
    polar = make()
    r = tf.tensor(R, requires_grad=True)
    phi = tf.tensor(PHI, requires_grad=True)
    x, y = polar(r, phi)
    np.testing.assert_allclose(x.numpy(), R * np.cos(PHI))
    np.testing.assert_allclose(y.numpy(), R * np.sin(PHI))
    gr, gphi = tf.grad([tf.sum(x)], [r, phi])     # only one output seeded: g_y = 0
    np.testing.assert_allclose(gr.numpy(), np.cos(PHI).sum() * np.ones((3, 1)))
    np.testing.assert_allclose(gphi.numpy(), -np.sin(PHI) * R.sum())


def test_vjp_and_value_and_grad():
    softplus = make_softplus_vjp()
    out, pullback = tf.vjp(softplus, X)
    np.testing.assert_allclose(out.numpy(), np.logaddexp(0, X))
    g, = pullback(tf.tensor(np.ones_like(X)))
    np.testing.assert_allclose(g.numpy(), expit(X))
    value, grad = tf.value_and_grad(lambda t: tf.sum(softplus(t)))(X)
    assert isinstance(value, float) and isinstance(grad, np.ndarray)
    np.testing.assert_allclose(grad, expit(X))


# ---- second order, forward mode, gradient checks --------------------------------------------

@pytest.mark.parametrize("make", [make_softplus_vjp, make_softplus_jvp])
def test_create_graph_second_order(make):
    softplus = make()
    x = tf.tensor(X, requires_grad=True)
    g, = tf.grad(tf.sum(softplus(x)), [x], create_graph=True)
    assert g.requires_grad
    h, = tf.grad(tf.sum(g), [x])
    s = expit(X)
    np.testing.assert_allclose(h.numpy(), s * (1 - s), rtol=1e-13)


@pytest.mark.parametrize("make", [make_softplus_vjp, make_softplus_jvp])
def test_jvp_and_hvp(make):
    softplus = make()
    v = np.linspace(-1, 1, X.size).reshape(X.shape)
    y, t = tf.jvp(softplus, [X], [v])
    np.testing.assert_allclose(y.numpy(), np.logaddexp(0, X))
    np.testing.assert_allclose(t.numpy(), expit(X) * v, rtol=1e-14)
    _, g, hv = tf.hvp(lambda a: tf.sum(softplus(a) ** 2), [X], [v])
    s = expit(X)
    sp = np.logaddexp(0, X)
    np.testing.assert_allclose(g[0].numpy(), 2 * sp * s)
    np.testing.assert_allclose(hv[0].numpy(), (2 * s * s + 2 * sp * s * (1 - s)) * v,
                               rtol=1e-13)


@pytest.mark.parametrize("make, args", [
    (make_softplus_vjp, [X]), (make_softplus_jvp, [X]),
    (make_polar_vjp, [R, PHI]), (make_polar_jvp, [R, PHI]),
    (make_zexp_vjp, [Z]), (make_zexp_jvp, [Z]),
])
def test_check_grads_second_order(make, args):
    check_grads(make(), args, modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("make, args", [(make_softplus_vjp, [X]), (make_polar_jvp, [R, PHI]),
                                        (make_zexp_vjp, [Z])])
def test_low_precision(make, args):
    check_low_precision(make(), args)


def test_check_grads_catches_a_wrong_rule():
    @tf.custom_vjp
    def softplus(x):
        return np.logaddexp(0.0, x.numpy())
    softplus.defvjp(lambda x: (softplus(x), x), lambda x, g: (1.001 * g / (1 + np.exp(-x)),))
    with pytest.raises(AssertionError, match="VJP"):
        check_grads(softplus, [X], modes=("rev",), order=1)


# ---- nondiff_argnums, keyword arguments, naming -------------------------------------------

def test_nondiff_argnums_and_keywords():
    @tf.custom_vjp(nondiff_argnums=(1,))
    def power(x, n, scale=2.0):
        return scale.numpy() * x.numpy() ** n

    def fwd(x, n, scale):
        return power(x, n, scale), (x, scale)

    def bwd(n, res, g):
        assert n == 3                     # static arguments come first, unconverted
        x, scale = res
        return g * scale * n * x ** (n - 1), tf.sum(g * x ** n)
    power.defvjp(fwd, bwd)
    x = tf.tensor([0.5, -1.0, 2.0], requires_grad=True)
    c = tf.tensor(1.5, requires_grad=True)
    y = power(x, n=3, scale=c)
    gx, gc = tf.grad(tf.sum(y), [x, c])
    np.testing.assert_allclose(gx.numpy(), 1.5 * 3 * x.numpy() ** 2)
    np.testing.assert_allclose(gc.numpy(), np.sum(x.numpy() ** 3))
    g2, = tf.grad(tf.sum(power(x, 3)), [x])      # the default scale is an argument too
    np.testing.assert_allclose(g2.numpy(), 2.0 * 3 * x.numpy() ** 2)
    check_grads(lambda a, s: power(a, 3, s), [x.numpy(), np.array(1.5)], order=2)


def test_custom_jvp_nondiff_argnums():
    from functools import partial

    @partial(tf.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x.numpy())

    @apply.defjvp
    def apply_jvp(fn, primals, tangents):
        x, = primals
        t, = tangents
        return apply(fn, x), np.cos(x) * t      # fn is np.sin here
    check_grads(lambda a: apply(np.sin, a), [X], order=2)


def test_rules_table_lists_the_op_with_unique_names():
    def make():
        @tf.custom_vjp
        def my_special_fn(x):
            return x.numpy()
        return my_special_fn
    first, second = make(), make()
    assert first.name != second.name
    names = [row[0] for row in rules.table()]
    assert first.name in names and second.name in names
    assert first.name.endswith("my_special_fn") and second.name.endswith("my_special_fn#2")
    row = [r for r in rules.table() if r[0] == first.name][0]
    assert row[1:3] == ("yes", "yes")
    assert OPS[first.name] is first.op


# ---- errors -------------------------------------------------------------------------------

def _identity_with_bwd(bwd, n_inputs=1):
    @tf.custom_vjp
    def ident(*xs):
        return xs[0].numpy().copy()
    ident.defvjp(lambda *xs: (xs[0].numpy().copy(), None), bwd)
    return ident


@pytest.mark.parametrize("bwd, err, match", [
    (lambda res, g: (g, g), tf.ShapeError, "2 entries, expected 1"),
    (lambda res, g: (np.ones(5),), tf.ShapeError, r"shape \(5,\), expected \(3,\)"),
    (lambda res, g: (g[:, None] * np.ones((1, 2)),), tf.ShapeError, "shape"),
    (lambda res, g: (g * 1j,), tf.DTypeError, "complex"),
    (lambda res, g: (np.array(["a", "b", "c"]),), tf.DTypeError, "numeric"),
    (lambda res, g: (np.ones(3, bool),), tf.DTypeError, "bool"),
])
def test_bad_cotangents_raise_naming_the_function(bwd, err, match):
    f = _identity_with_bwd(bwd)
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(err, match=match) as info:
        tf.sum(f(x)).backward()
    assert "ident" in str(info.value) and "custom_vjp" in str(info.value)
    assert x.grad is None


def test_cotangent_precision_is_cast():
    f = _identity_with_bwd(lambda res, g: (np.asarray(g, np.float64) * 2,))
    x = tf.tensor(np.ones(3, np.float32), requires_grad=True)
    g, = tf.grad(tf.sum(f(x)), [x])
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), 2)


def test_a_rule_that_raises_leaves_grad_untouched():
    calls = []

    def bwd(res, g):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("user rule failed")
        return (2 * g,)
    f = _identity_with_bwd(bwd)
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = tf.tensor([1.0, 1.0, 1.0], requires_grad=True)
    tf.sum(f(x) * w).backward()
    before_x, before_w = x.grad.numpy().copy(), w.grad.numpy().copy()
    with pytest.raises(RuntimeError, match="user rule failed"):
        tf.sum(f(x) * w).backward()
    np.testing.assert_array_equal(x.grad.numpy(), before_x)
    np.testing.assert_array_equal(w.grad.numpy(), before_w)
    with pytest.raises(RuntimeError, match="user rule failed"):
        tf.sum(f(x) * w).backward(create_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), before_x)


def test_missing_rule_and_bad_fwd():
    @tf.custom_vjp
    def f(x):
        return x.numpy() * 2
    assert f(np.ones(2)).shape == (2,)           # the primal needs no rule
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="defvjp"):
        f(x)
    f.defvjp(lambda x: x.numpy() * 2, lambda res, g: (g,))   # fwd forgets the residuals
    with pytest.raises(tf.ShapeError, match="pair"):
        f(x)

    @tf.custom_jvp
    def h(x):
        return x.numpy() * 2
    with pytest.raises(TypeError, match="defjvp"):
        h(x)


def test_integer_output_is_refused():
    @tf.custom_vjp
    def count(x):
        return np.argmax(x.numpy())
    with pytest.raises(tf.DTypeError, match="count"):
        count(tf.tensor([1.0, 3.0]))


def test_second_order_through_a_payload_residual_raises():
    @tf.custom_vjp
    def softplus(x):
        return np.logaddexp(0.0, x.numpy())
    softplus.defvjp(lambda x: (np.logaddexp(0.0, x.numpy()), expit(x.numpy())),
                    lambda s, g: (g * s,))
    x = tf.tensor(X, requires_grad=True)
    g, = tf.grad(tf.sum(softplus(x)), [x])          # first order is fine
    np.testing.assert_allclose(g.numpy(), expit(X))
    with pytest.raises(tf.UnsupportedADError, match="residual 0 is a floating-point ndarray"):
        tf.grad(tf.sum(softplus(x)), [x], create_graph=True)


def test_second_order_through_numpy_in_bwd_raises():
    @tf.custom_vjp
    def softplus(x):
        return np.logaddexp(0.0, x.numpy())
    softplus.defvjp(lambda x: (np.logaddexp(0.0, x.numpy()), x),
                    lambda x, g: (g * expit(np.asarray(x)),))
    x = tf.tensor(X, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="softplus.*bwd"):
        tf.grad(tf.sum(softplus(x)), [x], create_graph=True)


def test_forward_mode_needs_bwd_in_tenferro_ops():
    @tf.custom_vjp
    def softplus(x):
        return np.logaddexp(0.0, x.numpy())
    softplus.defvjp(lambda x: (np.logaddexp(0.0, x.numpy()), x),
                    lambda x, g: (g.numpy() * expit(x.numpy()),))
    tf.grad(tf.sum(softplus(tf.tensor(X, requires_grad=True))), [])  # reverse: fine
    with pytest.raises(tf.UnsupportedADError, match="custom_jvp"):
        tf.jvp(softplus, [X], [np.ones_like(X)])


def test_reverse_mode_of_custom_jvp_needs_tangent_in_tenferro_ops():
    @tf.custom_jvp
    def softplus(x):
        return np.logaddexp(0.0, x.numpy())

    @softplus.defjvp
    def jvp(primals, tangents):
        x, = primals
        t, = tangents
        return softplus(x), expit(x.numpy()) * t.numpy()
    _, t = tf.jvp(softplus, [X], [np.ones_like(X)])   # forward: fine
    np.testing.assert_allclose(t.numpy(), expit(X))
    x = tf.tensor(X, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="softplus"):
        tf.grad(tf.sum(softplus(x)), [x])


def test_bad_tangent_shape_raises():
    @tf.custom_jvp
    def f(x):
        return x.numpy() * 2
    f.defjvp(lambda p, t: (None, np.ones(7)))
    with pytest.raises(tf.ShapeError, match=r"custom_jvp function .*f.*tangent of output 0"):
        tf.jvp(f, [np.ones(3)], [np.ones(3)])


# ---- the worked examples of docs/custom_rules.md -------------------------------------------

def test_doc_examples():
    """Runs every ```python block of docs/custom_rules.md in order, in one namespace (the
    blocks hold their own assertions)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 5
    namespace = {}
    for k, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name}[block {k}]", "exec"), namespace)
    # the gammaln example is first order only: a second-order pass refuses loudly
    x = tf.tensor([0.5, 2.0], requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="gammaln"):
        tf.grad(tf.sum(namespace["gammaln"](x)), [x], create_graph=True)
