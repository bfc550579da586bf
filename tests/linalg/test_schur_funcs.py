"""tf.linalg.sqrtm, logm, funm: values against scipy.linalg, derivatives (rev, fwd, second
order) for general (non-normal) and Hermitian positive-definite matrices, stacks, the
complex result of a real matrix with a negative eigenvalue, single precision, errors, and
SciPy's spelling on a tensor that requires grad."""
import warnings

import numpy as np
import pytest
import scipy.linalg as sl

import tenferro as tf
import tenferro.linalg.schur_funcs as sfmod
from tenferro.testing import check_grads, check_low_precision, record_calls

DTYPES = [np.float64, np.complex128]
FUNCS = {"sqrtm": (tf.linalg.sqrtm, sl.sqrtm), "logm": (tf.linalg.logm, sl.logm)}


def general(shape, dtype, rng):
    """A non-normal matrix (stack) with eigenvalues well inside the right half-plane."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return (x + 2.5 * shape[-1] ** 0.5 * np.eye(shape[-1])).astype(dtype)


def hpd(shape, dtype, rng):
    x = general(shape, dtype, rng)
    return (x @ np.swapaxes(x, -1, -2).conj() / shape[-1] + np.eye(shape[-1])).astype(dtype)


def hermitian_pd(a):
    """Every finite-difference perturbation of `a` mapped to a Hermitian PD matrix."""
    n = a.shape[-1]
    return (a + a.mH) / 2 + np.eye(n, dtype=a.dtype) * (2 * n)


def reference(fn, a):
    flat = a.reshape((-1,) + a.shape[-2:])
    return np.stack([fn(m) for m in flat]).reshape(a.shape)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 1)])
@pytest.mark.parametrize("make", [general, hpd])
def test_values(name, dtype, batch, make):
    rng = np.random.default_rng(0)
    a = make(batch + (5, 5), dtype, rng)
    ours, theirs = FUNCS[name]
    out = ours(a)
    assert out.dtype == np.dtype(dtype) and out.shape == a.shape
    np.testing.assert_allclose(out.numpy(), reference(theirs, a), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
def test_grads_general(name, dtype, shape):
    check_grads(FUNCS[name][0], [general(shape, dtype, np.random.default_rng(1))])


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_grads_hermitian_pd(name, dtype):
    f = FUNCS[name][0]
    a = hpd((2, 3, 3), dtype, np.random.default_rng(2))
    check_grads(lambda a: f(hermitian_pd(a)), [a])


@pytest.mark.parametrize("name", FUNCS)
def test_real_input_with_negative_eigenvalue_is_complex_like_scipy(name):
    """A real matrix with a negative real eigenvalue has a complex principal sqrt/log:
    the value is SciPy's (complex), the stack complex as a whole, and the derivative of
    the real input is that of the complex result (finite differences of real input)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 3)) * 0.3 + np.diag([-2.0, 1.0, 3.0])
    a[1] = general((3, 3), np.float64, rng)          # this one has a real result
    f, ref = FUNCS[name]
    out = f(a)
    assert out.dtype == np.complex128
    np.testing.assert_allclose(out.numpy(), reference(ref, a), rtol=1e-12, atol=1e-12)
    assert f(a[1]).dtype == np.float64
    check_grads(f, [a])


def test_real_result_for_complex_conjugate_eigenvalues():
    rot = np.array([[1.0, -2.0], [2.0, 1.0]])        # eigenvalues 1 ± 2i: real log and sqrt
    for name, (f, ref) in FUNCS.items():
        out = f(rot)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.numpy(), ref(rot), rtol=1e-13, atol=1e-13)
        check_grads(f, [rot])


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_low_precision(name, dtype):
    check_low_precision(FUNCS[name][0], [general((2, 3, 3), dtype, np.random.default_rng(4))])


@pytest.mark.parametrize("name", FUNCS)
def test_plain_pullback_matches_the_graph_formula(name):
    """The plain backward (sqrtm: ?trsyl on X's kept Schur form; logm: SciPy's logm of
    the block matrix) and the create_graph rule (solve_sylvester / logm on Tensors)
    agree."""
    rng = np.random.default_rng(5)
    a = general((2, 4, 4), np.complex128, rng)
    g = general((2, 4, 4), np.complex128, rng)
    res = []
    for create_graph in (False, True):
        x = tf.tensor(a, requires_grad=True)
        (ga,) = tf.grad([FUNCS[name][0](x)], [x], [g], create_graph=create_graph)
        res.append(ga.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-11, atol=1e-12)


def test_identities():
    """expm(logm(A)) = A, sqrtm(A)² = A, and logm's derivative at I is the identity map."""
    rng = np.random.default_rng(6)
    a = general((4, 4), np.float64, rng)
    np.testing.assert_allclose(tf.linalg.matrix_exp(tf.linalg.logm(a)).numpy(), a,
                               rtol=1e-12, atol=1e-12)
    x = tf.linalg.sqrtm(a).numpy()
    np.testing.assert_allclose(x @ x, a, rtol=1e-12, atol=1e-12)
    e = rng.standard_normal((4, 4))
    _, t = tf.jvp(tf.linalg.logm, [np.eye(4)], [e])
    np.testing.assert_allclose(t.numpy(), e, rtol=1e-13, atol=1e-13)


def test_empty():
    for f in (tf.linalg.sqrtm, tf.linalg.logm):
        x = tf.tensor(np.zeros((2, 0, 0)), requires_grad=True)
        out = f(x)
        assert out.shape == (2, 0, 0)
        (g,) = tf.grad([out.sum()], [x])
        assert g is None or g.shape == (2, 0, 0)


# ---- errors ---------------------------------------------------------------------------------

def test_bad_input_records_nothing(monkeypatch):
    calls = record_calls(monkeypatch, sfmod, "apply1")
    for f in (tf.linalg.sqrtm, tf.linalg.logm, lambda a: tf.linalg.funm(a, "sin")):
        with pytest.raises(tf.ShapeError, match="square"):
            f(tf.tensor(np.ones((3, 2)), requires_grad=True))
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            f(tf.tensor(np.array([[1.0, np.inf], [0.0, 1.0]]), requires_grad=True))
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack is singular"):
        tf.linalg.logm(tf.tensor(np.stack([np.eye(2), np.diag([1.0, 0.0])]),
                                 requires_grad=True))
    with pytest.raises(tf.LinAlgError, match="has no square root"):
        tf.linalg.sqrtm(np.array([[0.0, 1.0], [0.0, 0.0]]))
    assert calls == []


def test_sqrtm_of_singular_matrix_value_but_no_derivative():
    """sqrtm of a singular matrix with a square root: SciPy's value; its derivative does
    not exist (X L + L X = E is singular) and raises LinAlgError in both modes, never a
    silent inf or NaN."""
    a = np.diag([0.0, 4.0])
    x = tf.tensor(a, requires_grad=True)
    out = tf.linalg.sqrtm(x)
    np.testing.assert_allclose(out.numpy(), np.diag([0.0, 2.0]))
    with pytest.raises(tf.LinAlgError, match="no differentiable square root"):
        tf.grad([out.sum()], [x])
    with pytest.raises(tf.LinAlgError, match="no differentiable square root"):
        tf.jvp(tf.linalg.sqrtm, [a], [np.ones((2, 2))])
    with pytest.raises(tf.LinAlgError, match="no differentiable square root"):
        tf.grad([tf.linalg.sqrtm(x).sum()], [x], create_graph=True)


@pytest.mark.parametrize("name", ["sqrtm", "logm", "funm", "solve_sylvester",
                                  "solve_continuous_lyapunov", "solve_banded"])
def test_scipy_spelling_raises_a_clear_error(name):
    """scipy.linalg has no backend dispatch for these (it calls np.asarray): on a tensor
    that requires grad that raises UnsupportedADError, never drops the gradient."""
    x = tf.tensor(np.eye(3) * 2.0, requires_grad=True)
    args = {"sqrtm": (x,), "logm": (x,), "funm": (x, np.sin), "solve_sylvester": (x, x, x),
            "solve_continuous_lyapunov": (x, x), "solve_banded": ((0, 0), x[:1], x)}[name]
    with pytest.raises(tf.UnsupportedADError, match="would drop its gradient"):
        getattr(sl, name)(*args)


# ---- funm -----------------------------------------------------------------------------------

NAMED = {"exp": sl.expm, "log": sl.logm, "sqrt": sl.sqrtm, "sin": sl.sinm, "cos": sl.cosm,
         "sinh": sl.sinhm, "cosh": sl.coshm}


@pytest.mark.parametrize("fname", NAMED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_funm_named(fname, dtype):
    a = general((3, 3), dtype, np.random.default_rng(7)) * 0.5
    out = tf.linalg.funm(a, fname)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out.numpy(), NAMED[fname](a), rtol=1e-12, atol=1e-12)
    check_grads(lambda a: tf.linalg.funm(a, fname), [a])


def test_funm_callable_hermitian():
    a = hpd((2, 3, 3), np.complex128, np.random.default_rng(8))
    out = tf.linalg.funm(a, tf.exp, hermitian=True)
    np.testing.assert_allclose(out.numpy(), reference(sl.expm, a), rtol=1e-12, atol=1e-12)
    check_grads(lambda a: tf.linalg.funm(hermitian_pd(a), lambda w: w ** 3, hermitian=True),
                [a])


@pytest.mark.parametrize("dtype", DTYPES)
def test_funm_callable_general(dtype):
    a = general((3, 3), dtype, np.random.default_rng(9)) * 0.5
    out = tf.linalg.funm(a, tf.sin)
    assert out.dtype == np.dtype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sl.funm(a, np.sin)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.numpy(), sl.sinm(a), rtol=1e-10, atol=1e-10)
    check_grads(lambda a: tf.linalg.funm(a, lambda w: w ** 2 + tf.exp(w)), [a], order=1)


def test_funm_bad_func():
    with pytest.raises(tf.ShapeError, match="unknown function name 'tan'"):
        tf.linalg.funm(np.eye(2), "tan")
    with pytest.raises(tf.ShapeError, match="func must be"):
        tf.linalg.funm(np.eye(2), 3)
