"""Forward mode: dual levels, jvp, hvp, and mixing with reverse mode."""
import numpy as np
import pytest

import tenferro as tf
from tenferro._state import STATE
from tenferro.testing import random_array

fwd = tf.forward_ad


def test_jvp_matches_analytic():
    x0, v = np.array([0.3, 1.1]), np.array([1.0, -2.0])
    out, tan = tf.jvp(lambda x: (x.sin() * x).sum(), [x0], [v])
    assert out.item() == pytest.approx(np.sum(np.sin(x0) * x0))
    assert tan.item() == pytest.approx(np.sum((np.cos(x0) * x0 + np.sin(x0)) * v))
    assert not out.requires_grad


def test_jvp_multiple_inputs_and_outputs_and_zero_tangent():
    outs, tans = tf.jvp(lambda x, y: (x * y, y * 2.0, tf.tensor(1.0)),
                        [np.array([2.0]), np.array([3.0])],
                        [np.array([1.0]), np.array([0.0])])
    assert len(outs) == 3 and len(tans) == 3
    assert tans[0].item() == 3.0 and tans[1].item() == 0.0 and tans[2].item() == 0.0


def test_jvp_complex_is_not_conjugated():
    z0, v = np.array([1 + 1j]), np.array([0.5 - 0.25j])
    _, tan = tf.jvp(lambda z: z * z, [z0], [v])
    np.testing.assert_allclose(tan.numpy(), 2 * z0 * v)


@pytest.mark.parametrize("tangent,err", [(np.ones(3), tf.ShapeError),
                                         (np.ones(2, complex), tf.DTypeError)])
def test_jvp_bad_tangent(tangent, err):
    with pytest.raises(err, match="tangent"):
        tf.jvp(lambda x: x * 2.0, [np.ones(2)], [tangent])
    assert STATE.fw_level == 0


def test_jvp_count_mismatch():
    with pytest.raises(tf.ShapeError):
        tf.jvp(lambda x: x, [np.ones(2)], [np.ones(2), np.ones(2)])


def test_dual_level_api():
    x = tf.tensor([1.0, 2.0])
    with fwd.dual_level():
        d = fwd.make_dual(x, tf.tensor([1.0, 0.0]))
        y = d.exp()
        p, t = fwd.unpack_dual(y)
        np.testing.assert_allclose(p.numpy(), np.exp([1.0, 2.0]))
        np.testing.assert_allclose(t.numpy(), [np.e, 0.0])
        assert fwd.unpack_dual(x).tangent is None
    assert fwd.unpack_dual(y).tangent is None          # level closed
    with pytest.raises(tf.TenferroError, match="dual_level"):
        fwd.make_dual(x, x)


def test_dual_levels_nest_and_reset_on_error():
    from tenferro import _engine
    with fwd.dual_level():
        outer = STATE.fw_level
        with pytest.raises(ValueError):
            with fwd.dual_level():
                assert STATE.fw_level not in (0, outer)
                raise ValueError
        assert STATE.fw_level == outer and outer not in _engine._OUTER
    with pytest.raises(ValueError):
        with fwd.dual_level():
            raise ValueError
    assert STATE.fw_level == 0 and _engine._OUTER == {}
    assert _engine._TANGENT_NODES.outer == [] and _engine._TANGENT_NODES.nodes == []


def test_dual_tensor_keeps_its_place_in_reverse_graph():
    x = tf.tensor([0.5, 1.5], requires_grad=True)
    with fwd.dual_level():
        d = fwd.make_dual(x, tf.tensor([1.0, 1.0]))
        y = (d * d).sum()
        (g,) = tf.grad(y, x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy())


def test_reverse_over_forward():
    x = tf.tensor([0.5, 1.5], requires_grad=True)
    v = np.array([1.0, 2.0])
    _, tan = tf.jvp(lambda t: (t.sin() * t).sum(), [x], [v])
    # d/dx of sum((cos x * x + sin x) v) = (2 cos x - x sin x) v
    (g,) = tf.grad(tan, x)
    x0 = x.numpy()
    np.testing.assert_allclose(g.numpy(), (2 * np.cos(x0) - x0 * np.sin(x0)) * v)


def test_hvp_quadratic_form():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    x0, v = rng.standard_normal(3), rng.standard_normal(3)

    def f(x):
        return (x * (tf.tensor(a) * x.reshape(1, 3)).sum(axis=1)).sum()   # xᵀ A x

    val, g, hv = tf.hvp(f, [x0], [v])
    assert val.item() == pytest.approx(x0 @ a @ x0)
    np.testing.assert_allclose(g[0].numpy(), (a + a.T) @ x0)
    np.testing.assert_allclose(hv[0].numpy(), (a + a.T) @ v)


def test_hvp_single_argument_form_and_nonlinear():
    x0, v = np.array([0.3, -0.8]), np.array([1.0, 0.5])
    val, g, hv = tf.hvp(lambda x: x.exp().sum() * x.sin().sum(), x0, v)
    e, s = np.exp(x0), np.sin(x0)
    # f = E S with E = Σ e^x, S = Σ sin x; H = diag(e) S + e cᵀ + c eᵀ - diag(s) E
    c = np.cos(x0)
    H = np.diag(e) * s.sum() + np.outer(e, c) + np.outer(c, e) - np.diag(s) * e.sum()
    np.testing.assert_allclose(hv.numpy(), H @ v)
    np.testing.assert_allclose(g.numpy(), e * s.sum() + c * e.sum())


def test_hvp_complex_input_matches_finite_differences():
    z0 = random_array(3, np.complex128, 1)
    v = random_array(3, np.complex128, 2)

    def f(z):
        return (z.abs() ** 3).sum() + (z * z).real.sum()

    def grad_at(z):
        x = tf.tensor(z, requires_grad=True)
        return tf.grad(f(x), x)[0].numpy()

    _, _, hv = tf.hvp(f, [z0], [v])
    eps = 1e-6
    fd = (grad_at(z0 + eps * v) - grad_at(z0 - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv[0].numpy(), fd, rtol=1e-6, atol=1e-7)


def test_a_closed_dual_level_leaves_no_cyclic_garbage():
    # a node keeps its outputs' tangents, which with grad mode on are recorded by jvp ops
    # on the node's outputs: a reference cycle per node, which only the garbage
    # collector's full collections freed (82% of tf.hessian's time). Closing the level
    # drops the tangents, so reference counting frees the graphs at once.
    import gc
    x0 = np.linspace(0.1, 1.0, 6)

    def f(x):
        return (tf.tanh(x) * 2.0).sum() + (x @ tf.exp(x)) ** 2

    gc.collect()
    gc.disable()
    try:
        for _ in range(2):
            value, grads, hv = tf.hvp(f, x0, np.ones(6))
        with tf.forward_ad.dual_level():
            x = tf.tensor(x0, requires_grad=True)
            y = f(tf.forward_ad.make_dual(x, np.ones(6)))
            (g,) = tf.grad([y], [x], create_graph=True)
            assert tf.forward_ad.unpack_dual(g).tangent is not None
        del value, grads, hv, x, y, g
        tf.hessian(f)(x0)
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_graph_dropped_inside_an_open_dual_level_stays_collectable():
    # the level's list of nodes with tangents holds them weakly: a long loop inside one
    # level does not keep every iteration's graph alive until the level closes
    import gc
    from tenferro import _engine
    with tf.forward_ad.dual_level():
        x = tf.tensor(np.linspace(0.1, 1.0, 5), requires_grad=True)
        for _ in range(3):
            y = tf.sum(tf.exp(tf.forward_ad.make_dual(x, np.ones(5))) * 2.0)
            assert tf.forward_ad.unpack_dual(y).tangent is not None
            del y
        gc.collect()
        alive = [r for r in _engine._TANGENT_NODES.nodes if r() is not None]
        assert alive == []
