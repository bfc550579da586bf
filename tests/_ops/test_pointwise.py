"""The pointwise factory (tenferro/_ops/pointwise.py): both rules, and their create_graph
path, derived from the partial derivatives alone.

The ops of tf.* and tf.special built with it are tested at their own paths; these tests
build ops of their own (removed from the registry afterwards) to check the factory's
contract: x̄ = ȳ·conj(∂f) and ẏ = Σ ∂f·ẋ against finite differences (real and complex,
broadcasting, second order), exact zeros for a partial declared identically zero, the
promotion and dtype parameters."""
import numpy as np
import pytest

import tenferro as tf
from tenferro._ops import pointwise, registry
from tenferro.testing import check_grads, random_array


@pytest.fixture
def own_ops():
    """The ops a test registers are removed again (op names are global and unique)."""
    before = set(registry.OPS)
    yield
    for name in set(registry.OPS) - before:
        del registry.OPS[name]


def _cubic(d):
    return d ** 3 + np.sin(d)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_unary_rules_from_the_derivative(own_ops, dtype):
    # f(z) = z³ + sin z is holomorphic: f'(z) = 3z² + cos z, written with NumPy functions
    # so that the rules run on Tensors under create_graph (the second order below)
    f = pointwise.unary("pointwise_test_cubic", _cubic, lambda x, y: 3 * (x * x) + np.cos(x))
    x = random_array((3, 4), dtype, rng=1)
    np.testing.assert_allclose(f(tf.tensor(x)).numpy(), _cubic(x), rtol=1e-15)
    check_grads(f, (x,), order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_binary_rules_from_the_partials_broadcast(own_ops, dtype):
    # f(a, b) = a²·b + exp(b): ∂a = 2ab, ∂b = a² + exp(b); b broadcasts along rows
    def derivs(a, b, y, needs):
        return (2 * (a * b) if needs[0] else None, a * a + np.exp(b) if needs[1] else None)

    f = pointwise.binary("pointwise_test_poly", lambda a, b: a * a * b + np.exp(b), derivs)
    a = random_array((3, 4), dtype, rng=2)
    b = random_array((4,), dtype, rng=3)
    np.testing.assert_allclose(f(tf.tensor(a), tf.tensor(b)).numpy(),
                               a * a * b + np.exp(b), rtol=1e-14)
    check_grads(f, (a, b), order=2)


def test_ternary_rules_from_the_partials(own_ops):
    # f(p, q, x) = p·x + q·x² (real): the n-input form of partial_rules
    def derivs(p, q, x, needs):
        return (x if needs[0] else None, x * x if needs[1] else None,
                p + 2 * (q * x) if needs[2] else None)

    vjp, jvp = pointwise.partial_rules(derivs, 3, complex=False)
    op = registry.defop("pointwise_test_ternary", vjp, jvp, complex=False)

    def f(p, q, x):
        from tenferro._engine import apply1
        return apply1(op, (p, q, x), p._data * x._data + q._data * x._data ** 2)

    p, q, x = (random_array((2, 3), np.float64, rng=k) for k in (4, 5, 6))
    check_grads(f, (p, q, x), order=2)


def test_zero_partial_gives_exact_zeros(own_ops):
    # ∂/∂b declared identically zero (None): its cotangent and its share of the tangent
    # are exact zeros, also where ȳ or ḃ is infinite (ȳ·0 would be NaN)
    def derivs(a, b, y, needs):
        return (2 * a if needs[0] else None), None

    f = pointwise.binary("pointwise_test_zero", lambda a, b: a * a + 0 * b, derivs)
    a = tf.tensor(np.array([1.0, -2.0]), requires_grad=True)
    b = tf.tensor(np.array([3.0, 4.0]), requires_grad=True)
    ga, gb = tf.grad([f(a, b)], [a, b], [tf.tensor(np.array([np.inf, 1.0]))])
    np.testing.assert_array_equal(gb.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(ga.numpy(), [np.inf, -4.0])
    _, t = tf.jvp(lambda u: f(a.detach(), u), (b.detach(),),
                  (tf.tensor(np.array([np.inf, 1.0])),))
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])


def test_real_only_check_and_promotion(own_ops):
    f = pointwise.unary("pointwise_test_real", np.exp, lambda x, y: y, complex=False)
    with pytest.raises(tf.DTypeError, match="pointwise_test_real is defined for real"):
        f(tf.tensor(np.ones(2, np.complex128)))
    # integers become float64; with keeps_int they keep their dtype
    assert f(tf.tensor(np.arange(3))).dtype == np.float64
    g = pointwise.unary("pointwise_test_square", np.square, lambda x, y: 2 * x,
                        keeps_int=True)
    assert g(tf.tensor(np.arange(3))).dtype == np.int64


def test_same_dtype_casts_back(own_ops):
    # a primal that computes in float64 (as SciPy's ufuncs without a float32 loop): the
    # result is cast back to the input's dtype
    f = pointwise.unary("pointwise_test_cast", lambda d: np.exp(d.astype(np.float64)),
                        lambda x, y: y, same_dtype=True)
    y = f(tf.tensor(np.ones(3, np.float32)))
    assert y.dtype == np.float32
    b = pointwise.binary("pointwise_test_cast2", lambda u, v: (u * v).astype(np.float64),
                         lambda a, b, y, needs: (b, a), same_dtype=True, floats=True)
    assert b(tf.tensor(np.ones(3, np.float32)), tf.tensor(np.ones(3, np.float32))).dtype \
        == np.float32


def test_binary_needs_derivs_or_rules():
    with pytest.raises(TypeError, match="give derivs, or the rules"):
        pointwise.binary("pointwise_test_none", np.add)
