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


# ---- nested dual levels: jvp of jvp (forward-over-forward) --------------------------------

def _jvp2(f, x, u, v):
    """uᵀ∇²f v (the second directional derivative) by a jvp nested in a jvp."""
    return tf.jvp(lambda y: tf.jvp(f, (y,), (tf.tensor(v),))[1], (x,), (u,))[1]


def _fd_of_jvp(f, x, u, v, eps=1e-6):
    """The same by central finite differences of the first-order jvp along u."""
    plus = tf.jvp(f, (x + eps * u,), (v,))[1].numpy()
    minus = tf.jvp(f, (x - eps * u,), (v,))[1].numpy()
    return (plus - minus) / (2 * eps)


def _herm(m):
    return m @ m.conj().mT


def _elementwise(x):
    return (tf.tanh(x) * tf.exp(x) / (1.0 + x * x)).sum() + (tf.sin(x) ** 3).sum()


def _matmul(x):
    a, b = x[:6].reshape(2, 3), x[6:12].reshape(3, 2)
    p = a @ b
    return (p * p.conj()).real.sum() + tf.sin(p).sum()


def _solve(x):
    a = x[:9].reshape(3, 3) + 4.0 * tf.eye(3)
    return (tf.linalg.solve(a, x[9:12]) ** 2).sum()


def _cholesky(x):
    s = _herm(x[:9].reshape(3, 3)) + 3.0 * tf.eye(3)
    ell = tf.linalg.cholesky(s)
    w = tf.tensor(np.arange(1.0, 10.0).reshape(3, 3))
    return (ell * w).sum() + (ell * ell.conj()).real.sum()


def _eigh(x):
    m = x[:9].reshape(3, 3)
    s = 0.3 * (m + m.conj().mT) + tf.tensor(np.diag([0.0, 3.0, 6.0]))   # well-separated
    w, v = tf.linalg.eigh(s)
    c = tf.tensor([1.0, -2.0, 0.5])
    # |v|² is gauge invariant
    return (w * c).sum() + (w * w).sum() + ((v * v.conj()).real * tf.tensor(
        np.arange(9.0).reshape(3, 3))).sum()


def _svd(x):
    m = x[:6].reshape(3, 2) + tf.tensor([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    u, s, vt = tf.linalg.svd(m, full_matrices=False)
    # u₁v₁ᴴ (and |u|²) are gauge invariant
    w = tf.tensor(np.arange(6.0).reshape(3, 2))
    return (s * tf.tensor([1.0, 2.0])).sum() + s.prod() + (
        (u[:, :1] @ vt[:1, :]) * w).sum().real + ((u * u.conj()).real * w).sum()


def _einsum(x):
    a, b = x[:6].reshape(2, 3), x[6:12].reshape(3, 2)
    c = x[2:6].reshape(2, 2)
    return tf.einsum("ij,jk,ki->", a, b, c) + (tf.einsum("ij,ij->i", a, a) ** 2).sum()


NESTED_CASES = {"elementwise": (_elementwise, 5), "matmul": (_matmul, 12),
                "solve": (_solve, 12), "cholesky": (_cholesky, 9), "eigh": (_eigh, 9),
                "svd": (_svd, 6), "einsum": (_einsum, 12)}


@pytest.mark.parametrize("name", list(NESTED_CASES))
def test_jvp_of_jvp_is_the_second_directional_derivative(name):
    f, n = NESTED_CASES[name]
    rng = np.random.default_rng(7)
    x0, u, v = (0.5 * rng.standard_normal(n) for _ in range(3))
    got = _jvp2(f, x0, u, v).numpy()
    hess = tf.hessian(f)(x0)
    np.testing.assert_allclose(got, u @ np.asarray(hess) @ v, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, _fd_of_jvp(f, x0, u, v), rtol=1e-6, atol=1e-7)
    # symmetric in the two directions (the two levels are alike)
    np.testing.assert_allclose(got, _jvp2(f, x0, v, u).numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", [k for k in NESTED_CASES if k != "elementwise"])
def test_jvp_of_jvp_complex_matches_finite_differences(name):
    f, n = NESTED_CASES[name]
    x0, u, v = (0.5 * random_array(n, np.complex128, k) for k in (1, 2, 3))
    got = _jvp2(f, x0, u, v).numpy()
    np.testing.assert_allclose(got, _fd_of_jvp(f, x0, u, v), rtol=1e-6, atol=1e-7)


def test_jvp_of_jvp_of_a_matrix_valued_function():
    # non-scalar output, both levels' tangents through matmul, solve and exp
    rng = np.random.default_rng(3)
    x0, u, v = (rng.standard_normal((3, 3)) for _ in range(3))

    def f(a):
        return tf.linalg.solve(a + 4.0 * tf.eye(3), tf.exp(a) @ a)

    np.testing.assert_allclose(_jvp2(f, x0, u, v).numpy(), _fd_of_jvp(f, x0, u, v),
                               rtol=1e-6, atol=1e-7)


def test_three_levels_deep_polynomial_is_exact():
    def p(x):
        return 3.0 * x ** 5 - 2.0 * x ** 3 + x

    def d(g, dirn):
        return lambda y: tf.jvp(g, (y,), (tf.tensor(dirn),))[1]

    x = 1.5
    third = tf.jvp(d(d(p, 1.0), 1.0), (tf.tensor(x),), (tf.tensor(1.0),))[1].item()
    assert third == pytest.approx(180.0 * x ** 2 - 12.0, rel=1e-15)

    # D³f[u, v, w] of f = x₀² x₁³, three different directions
    def f(x):
        return x[0] ** 2 * x[1] ** 3

    x0 = np.array([0.7, -1.3])
    u, v, w = np.array([1.0, 2.0]), np.array([-0.5, 1.0]), np.array([2.0, 0.25])
    got = tf.jvp(d(d(f, w), v), (tf.tensor(x0),), (tf.tensor(u),))[1].item()
    a, b = x0
    f001, f011, f111 = 6 * b ** 2, 12 * a * b, 6 * a ** 2
    want = (f001 * (u[0] * v[0] * w[1] + u[0] * v[1] * w[0] + u[1] * v[0] * w[0])
            + f011 * (u[0] * v[1] * w[1] + u[1] * v[0] * w[1] + u[1] * v[1] * w[0])
            + f111 * u[1] * v[1] * w[1])
    assert got == pytest.approx(want, rel=1e-14)


def test_no_perturbation_confusion():
    # d/dx [x · d/dy (x + y)] at y = 1 is 1; confusing the levels' tangents gives 2
    def outer(x):
        dy = tf.jvp(lambda y: x + y, (tf.tensor(1.0),), (tf.tensor(1.0),))[1]
        return x * dy

    _, t = tf.jvp(outer, (tf.tensor(3.0),), (tf.tensor(1.0),))
    assert t.item() == 1.0

    # d/dx [x · d/dy (x · y)] = d/dx x² = 2x (here the inner derivative depends on x)
    def outer2(x):
        return x * tf.jvp(lambda y: x * y, (tf.tensor(1.0),), (tf.tensor(1.0),))[1]

    assert tf.jvp(outer2, (tf.tensor(3.0),), (tf.tensor(1.0),))[1].item() == 6.0

    # the same with the dual-level API: the inner tangent never reaches the outer level
    with fwd.dual_level():
        x = fwd.make_dual(tf.tensor(3.0), tf.tensor(1.0))
        with fwd.dual_level():
            y = fwd.make_dual(tf.tensor(1.0), tf.tensor(1.0))
            s = x + y
            assert fwd.unpack_dual(s).tangent.item() == 1.0          # from y only
            assert fwd.unpack_dual(fwd.unpack_dual(s).tangent).tangent is None
            dy = fwd.unpack_dual(s).tangent
        z = x * dy
        assert fwd.unpack_dual(z).tangent.item() == 1.0
        assert fwd.unpack_dual(s).tangent.item() == 1.0              # x's, at the outer level


def test_nested_dual_level_api():
    x0, u, v = np.array([0.4, 1.2]), np.array([1.0, -1.0]), np.array([0.5, 2.0])
    with fwd.dual_level():
        x = fwd.make_dual(tf.tensor(x0), tf.tensor(u))
        with fwd.dual_level():
            y = fwd.make_dual(x, tf.tensor(v))              # x keeps its outer tangent
            z = tf.exp(y) * y
            p, t = fwd.unpack_dual(z)
            e = np.exp(x0)
            np.testing.assert_allclose(t.numpy(), (e * x0 + e) * v)
            # the primal and the inner tangent are dual tensors of the outer level
            with fwd.dual_level():                          # (a third level: no tangents)
                assert fwd.unpack_dual(z).tangent is None
            pp, pt = None, None
            inner_t = t
        # back at the outer level: the inner level's tangents are gone, the outer's stay
        p_out, t_out = fwd.unpack_dual(z)
        np.testing.assert_allclose(t_out.numpy(), (e * x0 + e) * u)
        np.testing.assert_allclose(fwd.unpack_dual(p).tangent.numpy(), (e * x0 + e) * u)
        # d/du of the inner tangent: (e x + 2e) u v
        np.testing.assert_allclose(fwd.unpack_dual(inner_t).tangent.numpy(),
                                   (e * x0 + 2 * e) * u * v)
        assert pp is None and pt is None
        # an op at the outer level on a tensor made inside the inner one
        w = z * 2.0
        np.testing.assert_allclose(fwd.unpack_dual(w).tangent.numpy(), 2 * (e * x0 + e) * u)
    assert fwd.unpack_dual(w).tangent is None


def test_a_tangent_of_the_inner_level_carries_no_inner_tangent():
    # make_dual's tangent: only its tangents of the enclosing levels are kept
    with fwd.dual_level():
        with fwd.dual_level():
            a = fwd.make_dual(tf.tensor(2.0), tf.tensor(1.0))
            b = fwd.make_dual(tf.tensor(5.0), a)         # a tangent that is itself a dual
            assert fwd.unpack_dual(fwd.unpack_dual(b).tangent).tangent is None
            assert fwd.unpack_dual(b * b).tangent.item() == 2 * 5.0 * 2.0


def test_grad_of_jvp_of_jvp_and_jvp_of_hvp():
    def f(x):
        return (x[0] ** 3 * tf.sin(x[1]) + tf.exp(x[0] * x[1])).sum()

    x0 = np.array([0.6, -0.4])
    u, v = np.array([1.0, 0.5]), np.array([-0.3, 2.0])

    def third(x, w):       # D³f[u, v, w] by finite differences of uᵀ∇²f v (tf.hessian)
        eps = 1e-5
        h = [np.asarray(tf.hessian(f)(x + s * eps * w)) for s in (1, -1)]
        return u @ ((h[0] - h[1]) / (2 * eps)) @ v

    # reverse over forward over forward
    x = tf.tensor(x0, requires_grad=True)
    t = _jvp2(f, x, tf.tensor(u), v)
    (g,) = tf.grad(t, x)
    for w in np.eye(2):
        assert g.numpy() @ w == pytest.approx(third(x0, w), rel=1e-7, abs=1e-8)

    # forward over (forward over reverse): jvp of hvp
    def hv(x):
        return tf.hvp(f, x, tf.tensor(v))[2]

    _, t3 = tf.jvp(hv, (tf.tensor(x0),), (tf.tensor(u),))
    for i, w in enumerate(np.eye(2)):
        # (d/du H v)·w = D³f[u, v, w]
        assert t3.numpy()[i] == pytest.approx(third(x0, w), rel=1e-7, abs=1e-8)

    # jvp of grad still works (forward over reverse, one level)
    def gradf(d):
        return tf.grad(f(d), d, create_graph=True)[0]

    _, hv1 = tf.jvp(gradf, (tf.tensor(x0, requires_grad=True),), (tf.tensor(u),))
    np.testing.assert_allclose(hv1.numpy(), np.asarray(tf.hessian(f)(x0)) @ u, rtol=1e-12)


def test_forward_over_reverse_inside_the_outer_level_after_an_inner_one_closed():
    # a node recorded inside the inner level keeps its outer-level tangents when the inner
    # level closes (a create_graph backward at the outer level reads them), and drops them
    # when the outer level closes
    from tenferro import _engine
    x0, u, v = np.array([0.3, 0.8]), np.array([1.0, 2.0]), np.array([-1.0, 0.5])

    def f(x):
        return (tf.exp(x) * tf.sin(x)).sum()

    with fwd.dual_level():
        outer = STATE.fw_level
        x = tf.tensor(x0, requires_grad=True)
        d = fwd.make_dual(x, tf.tensor(u))
        with fwd.dual_level():
            inner = STATE.fw_level
            y = f(fwd.make_dual(d, tf.tensor(v)))
            node = y._node
            assert _engine.find_tangent(node.out_tangents[0], inner) is not None
        assert node.out_tangents is not None
        assert _engine.find_tangent(node.out_tangents[0], inner) is None
        assert _engine.find_tangent(node.out_tangents[0], outer) is not None
        (g,) = tf.grad(y, d, create_graph=True)
        hu = fwd.unpack_dual(g).tangent.numpy()
    assert node.out_tangents is None
    assert _engine._TANGENT_NODES.nodes == [] and _engine._TANGENT_NODES.outer == []
    np.testing.assert_allclose(hu, np.asarray(tf.hessian(f)(x0)) @ u, rtol=1e-12)


def test_nested_levels_leave_no_cyclic_garbage():
    import gc
    from tenferro import _engine
    x0 = np.linspace(0.1, 1.0, 4)

    def f(x):
        return (tf.tanh(x) * 2.0).sum() + (x @ tf.exp(x)) ** 2

    gc.collect()
    gc.disable()
    try:
        for _ in range(2):
            _jvp2(f, x0, np.ones(4), np.arange(4.0))
            tf.jvp(lambda x: tf.hvp(f, x, tf.tensor(np.ones(4)))[2], (tf.tensor(x0),),
                   (tf.tensor(np.arange(4.0)),))
            x = tf.tensor(x0, requires_grad=True)
            t = _jvp2(f, x, tf.tensor(np.ones(4)), np.arange(4.0))
            tf.grad(t, x)
        del x, t
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert _engine._OUTER == {} and STATE.fw_level == 0
    assert _engine._TANGENT_NODES.nodes == [] and _engine._TANGENT_NODES.outer == []


def test_an_op_whose_rule_cannot_nest_raises():
    from tenferro._engine import apply1
    from tenferro._ops.registry import Op

    def vjp(ctx, needs, gs, xs, ys):
        return (gs[0] * 2.0,)

    def jvp(ctx, ts, xs, ys):
        return (ts[0] * 2.0,)

    op = Op("plain_twice", vjp, jvp, second_order=False)

    def twice(x):
        return apply1(op, (x,), x.numpy() * 2.0)

    # one level: fine
    assert tf.jvp(twice, (tf.tensor([1.0]),), (tf.tensor([3.0]),))[1].item() == 6.0
    # nested, with the outer level's tangent reaching the op: a clear error naming it
    with pytest.raises(tf.UnsupportedADError, match="plain_twice.*nested"):
        _jvp2(twice, np.array([1.0]), np.array([1.0]), np.array([1.0]))
    assert STATE.fw_level == 0
    # nested, but only the inner level's tangent reaches it: nothing to nest, fine
    with fwd.dual_level():
        with fwd.dual_level():
            y = twice(fwd.make_dual(tf.tensor([1.0]), tf.tensor([3.0])))
            assert fwd.unpack_dual(y).tangent.item() == 6.0


def test_nested_levels_are_per_thread():
    import threading
    out = {}

    def work():
        out["t"] = _jvp2(lambda x: (x ** 3).sum(), np.array([2.0]), np.array([1.0]),
                         np.array([1.0])).item()
        out["level"] = STATE.fw_level

    with fwd.dual_level():
        level = STATE.fw_level
        th = threading.Thread(target=work)
        th.start()
        th.join()
        assert STATE.fw_level == level
    assert out == {"t": 12.0, "level": 0}


def test_jvp_of_hvp_results_hold_no_graph_of_hvps_own_leaves():
    # hvp's results are detached (its variables are its own leaves); nested in a jvp their
    # outer tangents are too, and are right where indexing gives sparse cotangents
    def f(x):
        return (tf.exp(x) * tf.sin(x)).sum() + (x[0] * x[1]) ** 3

    x0, u, v = np.array([0.3, -0.6]), np.array([1.0, 2.0]), np.array([1.0, 0.0])

    def hv(x):
        return tf.hvp(f, x, tf.tensor(v))[2]

    _, t = tf.jvp(hv, (tf.tensor(x0),), (tf.tensor(u),))
    assert not t.requires_grad
    eps = 1e-6
    fd = (hv(tf.tensor(x0 + eps * u)).numpy() - hv(tf.tensor(x0 - eps * u)).numpy()) / (2 * eps)
    np.testing.assert_allclose(t.numpy(), fd, rtol=1e-7, atol=1e-8)


def test_a_level_opened_outside_an_active_one_keeps_its_tangent_nodes():
    # a solver run under outside_dual_level (custom_root) may open a level of its own: its
    # exit must not release the suspended level's nodes (forward-over-reverse reads them)
    from tenferro._rule_api import outside_dual_level
    x0, u = np.array([0.3, 0.8]), np.array([1.0, 2.0])

    def f(x):
        return (tf.exp(x) * tf.sin(x)).sum()

    with fwd.dual_level():
        d = fwd.make_dual(tf.tensor(x0, requires_grad=True), tf.tensor(u))
        y = f(d)
        with outside_dual_level():
            assert tf.jvp(f, (x0,), (u,))[1].item() != 0.0
        (g,) = tf.grad(y, d, create_graph=True)
        hu = fwd.unpack_dual(g).tangent
    np.testing.assert_allclose(hu.numpy(), np.asarray(tf.hessian(f)(x0)) @ u, rtol=1e-12)
