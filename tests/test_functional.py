"""Function transforms (tenferro/functional.py): jacobian, hessian, hessp,
value_and_grad(hessp=True), linear_operator and checkpoint.

Expected values come from central finite differences or closed forms written out here
(JAX's shape conventions are restated by hand, JAX is not imported).
"""
import contextlib
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse.linalg

import tenferro as tf
from tenferro import functional
from tenferro.testing import check_grads, check_low_precision, random_array

DOC = Path(__file__).resolve().parents[1] / "docs" / "functional.md"
RNG = np.random.default_rng(1234)


def fd_jacobian(f, x, eps=1e-6):
    """Central differences of the NumPy function f at the real array x: out.shape + x.shape."""
    x = np.asarray(x, float)
    y0 = np.asarray(f(x))
    jac = np.zeros(y0.shape + x.shape, np.result_type(y0, float))
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        jac[(Ellipsis,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return jac


def fd_complex_derivative(f, z, eps=1e-6):
    """For holomorphic f: ∂f/∂z_j = ∂f/∂Re z_j, by central differences along real steps."""
    z = np.asarray(z, complex)
    y0 = np.asarray(f(z))
    jac = np.zeros(y0.shape + z.shape, complex)
    for idx in np.ndindex(z.shape):
        e = np.zeros_like(z)
        e[idx] = eps
        jac[(Ellipsis,) + idx] = (np.asarray(f(z + e)) - np.asarray(f(z - e))) / (2 * eps)
    return jac


def as_np(f):
    """Evaluate a tenferro function on ndarrays and return an ndarray."""
    return lambda x: f(tf.as_tensor(x)).numpy()


A34 = RNG.standard_normal((3, 4))


def f_mat(x):      # R^(4,) -> R^(3, 2), nonlinear in every entry
    y = tf.tanh(tf.as_tensor(A34) @ x)
    return tf.stack([y * x[0], tf.sin(y)], axis=-1)


# ---- jacobian: values and modes ------------------------------------------------------------

@pytest.mark.parametrize("mode", ["rev", "fwd", "auto"])
def test_jacobian_matches_finite_differences(mode):
    x = RNG.standard_normal(4)
    jac = tf.jacobian(f_mat, mode=mode)(x)
    assert isinstance(jac, np.ndarray) and jac.shape == (3, 2, 4)
    np.testing.assert_allclose(jac, fd_jacobian(as_np(f_mat), x), rtol=1e-7, atol=1e-8)


def test_jacobian_modes_agree_to_rounding():
    x = RNG.standard_normal(4)
    jr = tf.jacobian(f_mat, mode="rev")(x)
    jf = tf.jacobian(f_mat, mode="fwd")(x)
    np.testing.assert_allclose(jr, jf, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_of_the_identity_and_of_a_reshape(mode):
    # reverse mode reuses one seed buffer: a gradient that is the seed itself must be
    # copied out before the next row
    np.testing.assert_array_equal(tf.jacobian(lambda x: x, mode=mode)(np.ones(3)), np.eye(3))
    j = tf.jacobian(lambda x: x.reshape(2, 2).T, mode=mode)(np.arange(4.0))
    np.testing.assert_array_equal(j.reshape(4, 4), np.eye(4)[[0, 2, 1, 3]])


def test_jacobian_auto_picks_the_cheaper_mode(monkeypatch):
    from tenferro import functional
    calls = []
    for name in ("_jac_rev", "_jac_fwd"):
        orig = getattr(functional, name)
        monkeypatch.setattr(functional, name,
                            lambda *a, _n=name, _o=orig: calls.append(_n) or _o(*a))
    wide = tf.jacobian(lambda x: tf.concatenate([x, x, x]))   # n = 2 < m = 6: forward
    wide(np.ones(2))
    narrow = tf.jacobian(lambda x: tf.sum(x ** 2))              # n = 5 > m = 1: reverse
    narrow(np.ones(5))
    assert calls == ["_jac_fwd", "_jac_rev"]


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_shapes_follow_jax(mode):
    # out.shape + in.shape, for every combination of scalar / array input and output
    m = RNG.standard_normal((2, 3))
    assert tf.jacobian(lambda x: tf.sum(x ** 2), mode=mode)(m).shape == (2, 3)
    assert tf.jacobian(lambda s: s * tf.as_tensor(m), mode=mode)(0.5).shape == (2, 3)
    j = tf.jacobian(lambda s: s ** 3, mode=mode)(2.0)
    assert j.shape == () and j == pytest.approx(12.0)
    j = tf.jacobian(lambda x: x.T @ x, mode=mode)(m)
    assert j.shape == (3, 3, 2, 3)
    np.testing.assert_allclose(j, fd_jacobian(lambda a: a.T @ a, m), atol=1e-8)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_pytrees_outputs_outside_inputs_inside(mode):
    def f(params, s):
        u, v = params["u"], params["v"]
        return {"a": u * s, "b": (tf.sum(v ** 2) * u[0], tf.exp(v))}

    params = {"u": RNG.standard_normal(2), "v": RNG.standard_normal(3)}
    s = 1.7
    jac = tf.jacobian(f, argnums=(0, 1), mode=mode)(params, s)
    # jac[out path][argnum][in path]
    assert set(jac) == {"a", "b"} and isinstance(jac["b"], tuple)
    assert jac["a"][0]["u"].shape == (2, 2) and jac["a"][0]["v"].shape == (2, 3)
    assert jac["a"][1].shape == (2,)
    assert jac["b"][0][0]["v"].shape == () + (3,) and jac["b"][1][0]["v"].shape == (3, 3)
    np.testing.assert_allclose(jac["a"][0]["u"], s * np.eye(2))
    np.testing.assert_allclose(jac["a"][0]["v"], np.zeros((2, 3)))
    np.testing.assert_allclose(jac["a"][1], params["u"])
    np.testing.assert_allclose(jac["b"][0][0]["v"], 2 * params["v"] * params["u"][0])
    np.testing.assert_allclose(jac["b"][0][0]["u"], [np.sum(params["v"] ** 2), 0.0])
    np.testing.assert_allclose(jac["b"][1][0]["v"], np.diag(np.exp(params["v"])))
    np.testing.assert_allclose(jac["b"][1][1], np.zeros(3))


def test_jacobian_list_input_and_single_argnum_tuple():
    f = lambda xs: xs[0] * xs[1]                                 # noqa: E731
    jac = tf.jacobian(f)([np.array([2.0, 3.0]), np.array([5.0, 7.0])])
    assert isinstance(jac, list) and len(jac) == 2
    np.testing.assert_allclose(jac[0], np.diag([5.0, 7.0]))
    np.testing.assert_allclose(jac[1], np.diag([2.0, 3.0]))
    jt = tf.jacobian(lambda x, y: x * y, argnums=(1,))(np.ones(2), np.array([4.0, 6.0]))
    assert isinstance(jt, tuple) and len(jt) == 1
    np.testing.assert_allclose(jt[0], np.eye(2))


def test_jacobian_types_of_results():
    x = RNG.standard_normal(3)
    f = lambda x: tf.sin(x)                                      # noqa: E731
    assert isinstance(tf.jacobian(f)(x), np.ndarray)             # NumPy in, NumPy out
    jt = tf.jacobian(f)(tf.tensor(x, requires_grad=True))
    assert isinstance(jt, tf.Tensor) and not jt.requires_grad   # Tensor in, detached Tensor out
    np.testing.assert_allclose(jt.numpy(), np.diag(np.cos(x)))
    j = tf.jacobian(lambda x: x ** 2)(3.0)                       # a Python float
    assert isinstance(j, np.ndarray) and j.shape == () and float(j) == 6.0


def test_jacobian_negative_argnums_kwargs_and_static_args():
    def f(scale, x, *, power):
        return scale * x ** power

    j = tf.jacobian(f, argnums=-1)(2.0, np.array([1.0, 3.0]), power=3)
    np.testing.assert_allclose(j, np.diag(2.0 * 3 * np.array([1.0, 9.0])))


def test_jacobian_of_an_output_that_does_not_depend_on_the_input():
    const = tf.as_tensor(np.arange(3.0))
    for mode in ("rev", "fwd"):
        j = tf.jacobian(lambda x: const * 1.0, mode=mode)(np.ones(2))
        assert j.shape == (3, 2) and not np.any(j)


def test_jacobian_has_aux():
    def f(x):
        y = tf.exp(x)
        return y, {"sum": tf.sum(y), "n": 3}

    for mode in ("rev", "fwd"):
        jac, aux = tf.jacobian(f, mode=mode, has_aux=True)(np.array([0.0, 1.0]))
        np.testing.assert_allclose(jac, np.diag(np.exp([0.0, 1.0])))
        assert aux["n"] == 3 and not aux["sum"].requires_grad
        assert aux["sum"].item() == pytest.approx(1 + np.e)


def test_jacobian_float32_keeps_the_precision():
    x = RNG.standard_normal(4).astype(np.float32)
    f = lambda x: tf.tanh(x * x[0]) + tf.sum(x ** 2)             # noqa: E731
    for mode in ("rev", "fwd"):
        j = tf.jacobian(f, mode=mode)(x)
        assert j.dtype == np.float32
        np.testing.assert_allclose(j, tf.jacobian(f, mode=mode)(x.astype(np.float64)),
                                   rtol=1e-5, atol=1e-6)


def test_jacobian_does_not_touch_grad_of_a_tensor_argument():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    tf.jacobian(lambda x: x ** 2)(x)
    assert x.grad is None


# ---- jacobian: complex ------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_real_input_complex_output(mode):
    # J = ∂f/∂x, complex; reverse mode assembles it from a real and an imaginary seed
    x = RNG.standard_normal(3)
    f = lambda x: tf.exp(1j * x) * x[0] + tf.sum(x ** 2)        # noqa: E731
    j = tf.jacobian(f, mode=mode)(x)
    assert j.dtype == np.complex128 and j.shape == (3, 3)
    np.testing.assert_allclose(j, fd_jacobian(as_np(f), x), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_holomorphic_is_f_prime(mode):
    z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    f = lambda z: z ** 2 * tf.sin(z) + z[0] * z                  # noqa: E731
    j = tf.jacobian(f, mode=mode, holomorphic=True)(z)
    expected = np.diag(2 * z * np.sin(z) + z ** 2 * np.cos(z)) + z[0] * np.eye(3)
    expected[:, 0] += z
    np.testing.assert_allclose(j, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(j, fd_complex_derivative(as_np(f), z), rtol=1e-7, atol=1e-7)


def test_jacobian_complex_errors():
    z = np.array([1 + 1j, 2.0])
    with pytest.raises(tf.DTypeError, match="holomorphic=True"):
        tf.jacobian(lambda z: z * 2)(z)
    with pytest.raises(tf.DTypeError, match="needs complex inputs"):
        tf.jacobian(lambda x: x * 1j, holomorphic=True)(np.ones(2))
    with pytest.raises(tf.DTypeError, match="needs complex outputs"):
        tf.jacobian(lambda z: tf.abs(z), holomorphic=True)(z)


# ---- jacobian: errors ---------------------------------------------------------------------

def test_jacobian_argument_errors():
    f = lambda x, y: x * y                                       # noqa: E731
    with pytest.raises(TypeError, match="argnums must be an int"):
        tf.jacobian(f, argnums="0")
    with pytest.raises(TypeError, match="argnums must hold ints"):
        tf.jacobian(f, argnums=(0, 1.0))
    with pytest.raises(ValueError, match="duplicates"):
        tf.jacobian(f, argnums=(0, 0))
    with pytest.raises(ValueError, match="empty"):
        tf.jacobian(f, argnums=())
    with pytest.raises(ValueError, match="mode must be"):
        tf.jacobian(f, mode="reverse")
    with pytest.raises(ValueError, match="argnums has 2 but the function was called with 2"):
        tf.jacobian(f, argnums=2)(np.ones(2), np.ones(2))
    with pytest.raises(tf.DTypeError, match="int64.*pass 1.0 rather than 1"):
        tf.jacobian(lambda x: x * 1.0)(np.arange(3))
    with pytest.raises(tf.DTypeError, match="dtype object"):
        tf.jacobian(lambda x: x)({"a": object()})


def test_jacobian_output_errors():
    x = np.ones(2)
    with pytest.raises(TypeError, match="output leaf 0 is ndarray"):
        tf.jacobian(lambda x: np.ones(2))(x)
    with pytest.raises(TypeError, match="output leaf 1 is float"):
        tf.jacobian(lambda x: (x, 1.0))(x)
    with pytest.raises(tf.DTypeError, match="output leaf 0 has dtype bool"):
        tf.jacobian(lambda x: x > 0)(x)
    with pytest.raises(TypeError, match="has_aux=True needs f to return a pair"):
        tf.jacobian(lambda x: x, has_aux=True)(x)


# ---- hessian ------------------------------------------------------------------------------------

def rosen_tf(x):
    return tf.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_hessian_of_rosenbrock_is_scipys():
    x = RNG.standard_normal(6)
    h = tf.hessian(rosen_tf)(x)
    np.testing.assert_allclose(h, scipy.optimize.rosen_hess(x), rtol=1e-13, atol=1e-11)


def test_hessian_matrix_input_shape_and_values():
    m = RNG.standard_normal((2, 3))

    def f(a):
        return tf.sum(tf.sin(a) * a[0, 0]) + tf.sum(a ** 4)

    h = tf.hessian(f)(m)
    assert h.shape == (2, 3, 2, 3)
    grad_np = lambda a: tf.value_and_grad(f)(a)[1]               # noqa: E731
    np.testing.assert_allclose(h, fd_jacobian(grad_np, m), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h.reshape(6, 6), h.reshape(6, 6).T, atol=1e-12)


def test_hessian_pytree_blocks():
    def f(x, y):
        return tf.sum(x ** 2 * y[0]) + tf.sum(tf.exp(y))

    x, y = RNG.standard_normal(2), RNG.standard_normal(3)
    h = tf.hessian(f, argnums=(0, 1))(x, y)
    assert isinstance(h, tuple) and len(h) == 2 and isinstance(h[0], tuple)
    assert [b.shape for b in h[0]] == [(2, 2), (2, 3)]
    assert [b.shape for b in h[1]] == [(3, 2), (3, 3)]
    np.testing.assert_allclose(h[0][0], 2 * y[0] * np.eye(2), atol=1e-14)
    h01 = np.zeros((2, 3))
    h01[:, 0] = 2 * x
    np.testing.assert_allclose(h[0][1], h01, atol=1e-14)
    np.testing.assert_allclose(h[1][0], h01.T, atol=1e-14)
    np.testing.assert_allclose(h[1][1], np.diag(np.exp(y)), atol=1e-14)


def test_hessian_tensor_in_tensor_out_and_has_aux():
    x = tf.tensor([1.0, 2.0])
    h, aux = tf.hessian(lambda x: (tf.sum(x ** 3), "aux"), has_aux=True)(x)
    assert isinstance(h, tf.Tensor) and aux == "aux"
    np.testing.assert_allclose(h.numpy(), np.diag([6.0, 12.0]))


def test_hessian_and_hessp_of_a_linear_function_are_zero():
    h = tf.hessian(lambda x, y: tf.sum(x * 2.0) + y, argnums=(0, 1))(np.ones(3), 1.0)
    assert h[0][0].shape == (3, 3) and h[1][1].shape == () and h[0][1].shape == (3,)
    assert not any(np.any(b) for row in h for b in row)
    assert not np.any(tf.hessp(lambda x: tf.sum(x * 2.0))(np.ones(3), np.ones(3)))


def test_hessian_is_reverse_over_reverse_one_evaluation_of_f():
    # one recorded evaluation and one create_graph gradient, then one reverse pass per row
    # (no dual levels): the same matrix as forward-over-reverse's columns
    calls = []

    def f(x, y):
        calls.append(1)
        return tf.sum(tf.sin(x) * y[0]) + tf.sum(tf.exp(y) * x[:3] ** 2)

    x, y = RNG.standard_normal(4), RNG.standard_normal(3)
    h = tf.hessian(f, argnums=(0, 1))(x, y)
    assert len(calls) == 1
    inp = functional._Inputs("hessian", (x, y), (0, 1), holomorphic=False)
    cols, _ = functional._hessian_columns(f, inp, {}, False)
    full = np.block([[h[0][0], h[0][1]], [h[1][0], h[1][1]]])
    np.testing.assert_allclose(full, cols, rtol=1e-13, atol=1e-13)
    grad_np = lambda a: tf.value_and_grad(lambda v: f(v[:4], v[4:]))(a)[1]   # noqa: E731
    np.testing.assert_allclose(full, fd_jacobian(grad_np, np.concatenate([x, y])),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("spectral", ["svdvals", "eigvalsh"])
def test_hessian_exact_at_repeated_values(spectral, monkeypatch):
    # f(A) = Σ g(σ_i) at a matrix with a repeated value: its Hessian in a direction that
    # splits the value has the limit g''(σ) of a divided difference, which only
    # forward-over-reverse gets (docs/degenerate_derivatives.md): tf.hessian notices the
    # block during its reverse-over-reverse pass and recomputes by columns
    rng = np.random.default_rng(11)
    q1, q2 = (np.linalg.qr(rng.standard_normal((4, 4)))[0] for _ in range(2))
    if spectral == "svdvals":
        a = (q1 * [2.0, 1.0, 1.0, 0.7]) @ q2.T
        values = tf.linalg.svdvals
    else:
        a = (q1 * [2.0, 1.0, 1.0, -0.7]) @ q1.T

        def values(x):      # a function of every entry (eigvalsh reads one triangle)
            return tf.linalg.eigvalsh(0.5 * (x + x.T))

    def f(x):
        w = values(x)
        return tf.sum(tf.exp(w) + w ** 3)

    grad_np = lambda m: tf.value_and_grad(f)(m)[1]              # noqa: E731
    fd = fd_jacobian(grad_np, a).reshape(16, 16)
    h = tf.hessian(f)(a).reshape(16, 16)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())
    # reverse-over-reverse alone is off there (the within-block terms are 0, not g''):
    # what the check guards against
    inp = functional._Inputs("hessian", (a,), 0, holomorphic=False)
    assert functional._hessian_rows(f, inp, {}, False)[0] is None
    monkeypatch.setattr(functional, "watch_degenerate",
                        lambda: contextlib.nullcontext(lambda: False))
    rows, _ = functional._hessian_rows(f, inp, {}, False)
    assert np.abs(rows - fd).max() > 1e-2 * np.abs(fd).max()


def test_hessian_errors():
    with pytest.raises(tf.ShapeError, match="one element"):
        tf.hessian(lambda x: x ** 2)(np.ones(2))
    with pytest.raises(tf.DTypeError, match="real floating-point scalar"):
        tf.hessian(lambda x: tf.sum(x) * 1j)(np.ones(2))
    with pytest.raises(tf.DTypeError, match="use tf.hessp"):
        tf.hessian(lambda z: tf.sum(tf.abs(z) ** 2))(np.ones(2) * 1j)
    with pytest.raises(TypeError, match="must return a Tensor"):
        tf.hessian(lambda x: 1.0)(np.ones(2))


# ---- hessp and scipy.optimize ---------------------------------------------------------------

def test_hessp_is_hessian_times_p():
    x, p = RNG.standard_normal(5), RNG.standard_normal(5)
    hp = tf.hessp(rosen_tf)(x, p)
    assert isinstance(hp, np.ndarray)
    np.testing.assert_allclose(hp, scipy.optimize.rosen_hess_prod(x, p), rtol=1e-13,
                               atol=1e-11)


def test_hessp_pytrees_and_argnums():
    def f(a, x, y):
        return a * tf.sum(x ** 2 * y[0]) + tf.sum(tf.exp(y))

    x, y = RNG.standard_normal(2), RNG.standard_normal(3)
    px, py = RNG.standard_normal(2), RNG.standard_normal(3)
    h = tf.hessian(f, argnums=(1, 2))(1.5, x, y)
    hx, hy = tf.hessp(f, argnums=(1, 2))(1.5, x, y, (px, py))
    np.testing.assert_allclose(hx, h[0][0] @ px + h[0][1] @ py, atol=1e-13)
    np.testing.assert_allclose(hy, h[1][0] @ px + h[1][1] @ py, atol=1e-13)
    # an int argnum: p comes right after it
    hy1 = tf.hessp(f, argnums=2)(1.5, x, y, py)
    np.testing.assert_allclose(hy1, h[1][1] @ py, atol=1e-13)


def test_hessp_complex_follows_hvp():
    z, p = random_array(3, np.complex128, 1), random_array(3, np.complex128, 2)
    f = lambda z: tf.sum(tf.abs(z * z[0]) ** 2)                  # noqa: E731
    _, _, expected = tf.hvp(f, z, p)
    np.testing.assert_allclose(tf.hessp(f)(z, p), expected.numpy(), atol=1e-13)


def test_hessp_errors():
    with pytest.raises(TypeError, match="direction p at position 1"):
        tf.hessp(rosen_tf)(np.ones(3))
    with pytest.raises(tf.ShapeError, match=r"p \(leaf 0\) has shape \(2,\)"):
        tf.hessp(rosen_tf)(np.ones(3), np.ones(2))
    with pytest.raises(tf.ShapeError, match="tuple of 2 entries"):
        tf.hessp(lambda x, y: tf.sum(x * y), argnums=(0, 1))(np.ones(2), np.ones(2), np.ones(2))


@pytest.mark.parametrize("method", ["Newton-CG", "trust-krylov", "trust-ncg"])
def test_value_and_grad_hessp_plugs_into_scipy_minimize(method):
    vg = tf.value_and_grad(rosen_tf, hessp=True)
    x0 = np.array([-1.2, 1.0, -0.5, 0.8])
    value, grad = vg(x0)
    assert isinstance(value, float) and isinstance(grad, np.ndarray)
    p = RNG.standard_normal(4)
    np.testing.assert_allclose(vg.hessp(x0, p), scipy.optimize.rosen_hess_prod(x0, p),
                               rtol=1e-13, atol=1e-11)
    res = scipy.optimize.minimize(vg, x0, jac=True, hessp=vg.hessp, method=method,
                                  options={"maxiter": 500})
    assert res.success, res.message
    np.testing.assert_allclose(res.x, np.ones(4), atol=1e-4)
    # the same run as with SciPy's own derivatives of the Rosenbrock function
    ref = scipy.optimize.minimize(scipy.optimize.rosen, x0, jac=scipy.optimize.rosen_der,
                                  hessp=scipy.optimize.rosen_hess_prod, method=method,
                                  options={"maxiter": 500})
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-8)
    assert res.nit == ref.nit


def test_hessp_passes_scipy_args():
    def f(x, a, b):
        return tf.sum(b * (x - a) ** 4 + (x - a) ** 2)

    vg = tf.value_and_grad(f, hessp=True)
    a = np.array([1.0, -2.0, 3.0])
    res = scipy.optimize.minimize(vg, np.zeros(3), args=(a, 10.0), jac=True,
                                  hessp=vg.hessp, method="Newton-CG")
    assert res.success
    np.testing.assert_allclose(res.x, a, rtol=1e-4)
    p = np.array([1.0, 0.5, -1.0])
    np.testing.assert_allclose(vg.hessp(np.zeros(3), p, a, 10.0), (120 * a ** 2 + 2) * p)


def test_value_and_grad_without_hessp_has_no_attribute():
    assert not hasattr(tf.value_and_grad(rosen_tf), "hessp")


# ---- linear_operator ----------------------------------------------------------------------------

B = RNG.standard_normal((4, 4)) / 2 + 3 * np.eye(4)


def f_square(x):
    return tf.as_tensor(B) @ x + 0.1 * tf.tanh(x) * x[0]


def test_linear_operator_jvp_and_vjp_against_the_dense_jacobian():
    x = RNG.standard_normal(4)
    dense = tf.jacobian(f_mat)(x).reshape(6, 4)
    op = tf.linear_operator(f_mat, x)                  # kind="jvp"
    assert op.shape == (6, 4) and op.dtype == np.float64
    v, u = RNG.standard_normal(4), RNG.standard_normal(6)
    np.testing.assert_allclose(op.matvec(v), dense @ v, atol=1e-13)
    np.testing.assert_allclose(op.rmatvec(u), dense.T @ u, atol=1e-13)
    np.testing.assert_allclose(op.matvec(v[:, None]), (dense @ v)[:, None], atol=1e-13)
    np.testing.assert_allclose(op @ np.eye(4), dense, atol=1e-13)
    opt = tf.linear_operator(f_mat, x, kind="vjp")
    assert opt.shape == (4, 6)
    np.testing.assert_allclose(opt.matvec(u), dense.T @ u, atol=1e-13)
    np.testing.assert_allclose(opt.rmatvec(v), dense @ v, atol=1e-13)
    # a complex vector on a real operator: applied to the real and imaginary parts
    w = v + 1j * RNG.standard_normal(4)
    np.testing.assert_allclose(op.matvec(w), dense @ w, atol=1e-13)


def test_linear_operator_gmres_solves_the_newton_step():
    x, b = RNG.standard_normal(4), RNG.standard_normal(4)
    dense = tf.jacobian(f_square)(x)
    sol, info = scipy.sparse.linalg.gmres(tf.linear_operator(f_square, x), b, rtol=1e-12,
                                          atol=0)
    assert info == 0
    np.testing.assert_allclose(sol, np.linalg.solve(dense, b), rtol=1e-9)


def test_linear_operator_hvp_eigsh():
    x = RNG.standard_normal(8)
    op = tf.linear_operator(rosen_tf, x, kind="hvp")
    assert op.shape == (8, 8)
    dense = scipy.optimize.rosen_hess(x)
    w = scipy.sparse.linalg.eigsh(op, k=2, which="LA", return_eigenvectors=False)
    np.testing.assert_allclose(np.sort(w), np.linalg.eigvalsh(dense)[-2:], rtol=1e-9)
    v = RNG.standard_normal(8)
    np.testing.assert_allclose(op.rmatvec(v), dense @ v, rtol=1e-12)


def test_linear_operator_complex():
    z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    f = lambda z: z ** 2 * z[1]                                  # noqa: E731
    dense = tf.jacobian(f, holomorphic=True)(z)
    op = tf.linear_operator(f, z, holomorphic=True)
    assert op.dtype == np.complex128
    v = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    np.testing.assert_allclose(op.matvec(v), dense @ v, atol=1e-13)
    np.testing.assert_allclose(op.rmatvec(v), dense.conj().T @ v, atol=1e-13)
    # real input, complex output: Jᴴu needs the real and the imaginary seed
    x = RNG.standard_normal(3)
    g = lambda x: tf.exp(1j * x) * x[0]                          # noqa: E731
    dense = tf.jacobian(g)(x)
    op = tf.linear_operator(g, x)
    assert op.dtype == np.complex128
    np.testing.assert_allclose(op.rmatvec(v), dense.conj().T @ v, atol=1e-13)
    np.testing.assert_allclose(op.matvec(v), dense @ v, atol=1e-13)


def test_linear_operator_errors():
    with pytest.raises(ValueError, match="kind must be"):
        tf.linear_operator(f_mat, np.ones(4), kind="hessian")
    with pytest.raises(tf.DTypeError, match="holomorphic=True"):
        tf.linear_operator(lambda z: z, np.ones(2) * 1j)
    with pytest.raises(tf.ShapeError, match="one element"):
        tf.linear_operator(lambda x: x, np.ones(2), kind="hvp").matvec(np.ones(2))
    with pytest.raises(tf.DTypeError, match="kind='hvp' needs a real x"):
        tf.linear_operator(lambda z: tf.sum(tf.abs(z) ** 2), np.ones(2) * 1j, kind="hvp")
    with pytest.raises(TypeError, match="x must be one array"):
        tf.linear_operator(lambda x: x, (np.ones(2), np.ones(2)))
    with pytest.raises(TypeError, match="one Tensor"):
        tf.linear_operator(lambda x: (x, x), np.ones(2))


# ---- checkpoint ---------------------------------------------------------------------------------

def layer(x, w, scale=1.0):
    return tf.tanh(w @ x) * scale


def chain_loss(x, ws, checkpointed, per=4):
    seg = (lambda x, *ws: _segment(x, ws)) if not checkpointed else \
        tf.checkpoint(lambda x, *ws: _segment(x, ws))
    for s in range(0, len(ws), per):
        x = seg(x, *ws[s:s + per])
    return tf.sum(x ** 2)


def _segment(x, ws):
    for w in ws:
        x = layer(x, w, scale=1.1)
    return x


def chain_inputs(dtype=np.float64, layers=16):
    x = random_array((5, 3), dtype, 7)
    ws = [random_array((5, 5), dtype, 100 + i) / 2 for i in range(layers)]
    return x, ws


def test_checkpoint_deep_chain_gradients_equal():
    x0, w0 = chain_inputs()
    grads = []
    for checkpointed in (False, True):
        x = tf.tensor(x0, requires_grad=True)
        ws = [tf.tensor(w, requires_grad=True) for w in w0]
        grads.append(tf.grad(chain_loss(x, ws, checkpointed), [x] + ws))
    for a, b in zip(*grads):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-14, atol=1e-14)


def test_checkpoint_records_one_node_holding_only_the_arguments():
    x = tf.tensor(np.ones((3, 2)), requires_grad=True)
    w = tf.tensor(np.eye(3) / 2, requires_grad=True)
    y = tf.checkpoint(_segment)(x, [w, w, w])
    node = y.grad_fn
    assert node.op.name == "checkpoint"
    assert len(node.inputs) == 4 and all(t._data is x._data or t._data is w._data
                                         for t in node.inputs)


def test_checkpoint_backward_accumulates_grad():
    x0, w0 = chain_inputs(layers=4)
    res = []
    for checkpointed in (False, True):
        x = tf.tensor(x0, requires_grad=True)
        ws = [tf.tensor(w, requires_grad=True) for w in w0]
        chain_loss(x, ws, checkpointed, per=2).backward()
        res.append([x.grad.numpy()] + [w.grad.numpy() for w in ws])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_checkpoint_against_finite_differences(dtype):
    seg = tf.checkpoint(lambda x, w: tf.sin(w @ x) * x)
    x, w = random_array((3, 3), dtype, 1), random_array((3, 3), dtype, 2)
    check_grads(seg, [x, w], modes=("rev", "fwd"), order=2)


def test_checkpoint_low_precision():
    seg = tf.checkpoint(lambda x, w: tf.tanh(w @ x))
    check_low_precision(seg, [random_array((3, 3), np.float64, 1),
                              random_array((3, 3), np.complex128, 2)])


def test_checkpoint_second_order_equals_plain():
    x0, w0 = chain_inputs(layers=6)
    res = []
    for checkpointed in (False, True):
        x = tf.tensor(x0, requires_grad=True)
        ws = [tf.tensor(w, requires_grad=True) for w in w0]
        gs = tf.grad(chain_loss(x, ws, checkpointed, per=3), [x] + ws, create_graph=True)
        second = tf.grad(sum(tf.sum(g * g) for g in gs), [x] + ws)
        res.append([g.numpy() for g in second])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-13)


def test_checkpoint_nested_second_and_third_order_equal_plain():
    # the inner checkpoints' pullbacks record references to the outer one's proxies:
    # they must reach the real inputs too
    inner = tf.checkpoint(lambda x, w: tf.tanh(w @ x))
    outer = tf.checkpoint(lambda x, w: inner(inner(x, w), w) * 2.0)

    def plain(x, w):
        return tf.tanh(w @ tf.tanh(w @ x)) * 2.0

    x0, w0 = random_array((3, 2), np.float64, 5), random_array((3, 3), np.float64, 6)
    res = []
    for fn in (plain, outer):
        x, w = tf.tensor(x0, requires_grad=True), tf.tensor(w0, requires_grad=True)
        gx, gw = tf.grad(tf.sum(fn(x, w) ** 2), [x, w], create_graph=True)
        hx, hw = tf.grad(tf.sum(gw ** 2) + tf.sum(gx * gw[:, :2]), [x, w], create_graph=True)
        (t,) = tf.grad(tf.sum(hx * hw[:, :2]), [w])
        res.append([g.numpy() for g in (gx, gw, hx, hw, t)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-13)


@pytest.fixture
def forget_test_ops():
    """Remove the ops a test registers (a custom rule), so that the rules table of this
    process keeps matching a fresh interpreter's (tests/test_rules.py)."""
    from tenferro._ops.registry import OPS
    before = set(OPS)
    yield
    for name in set(OPS) - before:
        del OPS[name]


def test_checkpoint_around_a_custom_rule_second_order(forget_test_ops):
    @tf.custom_jvp
    def cube(x):
        return x ** 3

    @cube.defjvp
    def cube_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return x ** 3, 3 * x ** 2 * t

    seg = tf.checkpoint(lambda x, w: cube(w @ x))
    x0, w0 = random_array((3,), np.float64, 8), random_array((3, 3), np.float64, 9)
    res = []
    for fn in (lambda x, w: (w @ x) ** 3, seg):
        x, w = tf.tensor(x0, requires_grad=True), tf.tensor(w0, requires_grad=True)
        gx, gw = tf.grad(tf.sum(fn(x, w)), [x, w], create_graph=True)
        res.append([g.numpy() for g in tf.grad(tf.sum(gx ** 2) + tf.sum(gw ** 2), [x, w])])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-13)


def test_checkpoint_forward_mode_and_hvp_equal_plain():
    x0, w0 = chain_inputs(layers=4)
    tx = random_array(x0.shape, np.float64, 3)
    tw = [random_array(w.shape, np.float64, 4 + i) for i, w in enumerate(w0)]

    def loss(checkpointed):
        return lambda x, *ws: chain_loss(x, list(ws), checkpointed, per=2)

    outs = [tf.jvp(loss(c), [x0] + w0, [tx] + tw)[1].item() for c in (False, True)]
    assert outs[1] == pytest.approx(outs[0], rel=1e-14)
    hv = [tf.hvp(loss(c), [x0] + w0, [tx] + tw)[2] for c in (False, True)]
    for a, b in zip(*hv):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-13, atol=1e-13)
    h = [tf.hessian(lambda x, c=c: loss(c)(x, *w0))(x0) for c in (False, True)]
    np.testing.assert_allclose(h[1], h[0], rtol=1e-13, atol=1e-13)


def test_checkpoint_multiple_outputs_pytrees_and_static_arguments():
    def fn(pair, w, *, mode, scale):
        a, b = pair
        assert mode == "keep" and isinstance(scale, float)
        return {"y": tf.sin(w @ a) * scale, "z": (a * b, 7)}

    a0, b0, w0 = (random_array((3,), np.float64, k) for k in (1, 2, 3))
    w0 = np.outer(w0, w0)
    res = []
    for wrapped in (fn, tf.checkpoint(fn)):
        a, b, w = (tf.tensor(v, requires_grad=True) for v in (a0, b0, w0))
        out = wrapped((a, b), w, mode="keep", scale=2.0)
        assert out["z"][1] == 7
        loss = tf.sum(out["y"] ** 2) + tf.sum(out["z"][0] * a)
        res.append([g.numpy() for g in tf.grad(loss, [a, b, w])])
    for p, q in zip(*res):
        np.testing.assert_allclose(q, p, rtol=1e-14, atol=1e-14)


def test_checkpoint_only_one_output_used():
    fn = tf.checkpoint(lambda x: (tf.exp(x), tf.sin(x)))
    x = tf.tensor([0.3, 0.7], requires_grad=True)
    _, s = fn(x)
    (g,) = tf.grad(tf.sum(s), [x])
    np.testing.assert_allclose(g.numpy(), np.cos([0.3, 0.7]), rtol=1e-15)


def test_checkpoint_without_grad_is_a_plain_call():
    calls = []

    def fn(x):
        calls.append(1)
        return x * 2

    y = tf.checkpoint(fn)(tf.tensor([1.0]))
    assert y.grad_fn is None and calls == [1]
    with tf.no_grad():
        y = tf.checkpoint(fn)(tf.tensor([1.0], requires_grad=True))
    assert y.grad_fn is None and calls == [1, 1]


def test_checkpoint_recomputes_once_in_the_backward_pass():
    calls = []

    @tf.checkpoint
    def fn(x):
        calls.append(1)
        return tf.exp(x)

    x = tf.tensor([1.0], requires_grad=True)
    y = fn(x)
    assert len(calls) == 1
    tf.grad(y, [x])
    assert len(calls) == 2


def test_checkpoint_closure_over_a_tracked_tensor_raises():
    w = tf.tensor(np.eye(2), requires_grad=True)
    x = tf.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="pass that Tensor as an argument"):
        tf.checkpoint(lambda x: w @ x)(x)


def test_checkpoint_nondeterministic_function_raises():
    rng = np.random.default_rng(0)
    fn = lambda x: x * float(rng.standard_normal())              # noqa: E731
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    y = tf.checkpoint(fn)(x)
    with pytest.raises(tf.TenferroError, match="must be deterministic"):
        tf.grad(tf.sum(y), [x])
    with tf.forward_ad.dual_level():
        d = tf.forward_ad.make_dual(tf.tensor([1.0]), tf.tensor([1.0]))
        with pytest.raises(tf.TenferroError, match="must be deterministic"):
            tf.checkpoint(fn)(d)
    # check=False: the user takes responsibility (here: the derivative of the redraw)
    y = tf.checkpoint(check=False)(fn)(x)
    (g,) = tf.grad(tf.sum(y), [x])
    assert g.shape == (2,)


def test_checkpoint_wraps_only_callables():
    with pytest.raises(TypeError, match="checkpoint wraps a function"):
        tf.checkpoint(3)


# ---- docs/functional.md ---------------------------------------------------------------------

def test_doc_examples():
    """Runs every ```python block of docs/functional.md in order, in one namespace (the
    blocks hold their own assertions)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 5
    namespace = {}
    for k, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name}[block {k}]", "exec"), namespace)


@pytest.mark.parametrize("transform", ["jacobian", "hessian"])
def test_a_forward_tangent_is_not_dropped_silently(transform):
    # the transforms' results are detached: inside tf.jvp they raise instead of returning
    # a zero tangent
    def f(x):
        return (tf.exp(x) * tf.sin(x)).sum()

    t = getattr(tf, transform)(f)
    with pytest.raises(tf.UnsupportedADError, match=f"{transform}.*tangent.*nest tf.jvp"):
        tf.jvp(lambda x: t(x), (tf.tensor([0.3, 0.1]),), (tf.tensor([1.0, 2.0]),))
    t(tf.tensor([0.3, 0.1]))            # outside a dual level: fine
