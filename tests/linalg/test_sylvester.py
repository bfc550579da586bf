"""tf.linalg.solve_sylvester and solve_continuous_lyapunov: values against SciPy,
derivatives (rev, fwd, second order) in a, b, q, broadcasting, errors."""
import numpy as np
import pytest
import scipy.linalg as sl

import tenferro as tf
import tenferro.linalg.sylvester as sylmod
from tenferro.testing import check_grads, check_low_precision, record_calls

DTYPES = [np.float64, np.complex128]


def rand(shape, dtype, rng, shift=0.0):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if shift:
        x = x + shift * np.eye(shape[-1])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES + [np.float32, np.complex64])
@pytest.mark.parametrize("n,m", [(4, 4), (5, 3), (2, 6)])
def test_values(dtype, n, m):
    rng = np.random.default_rng(0)
    a, b = rand((2, n, n), dtype, rng, 3.0), rand((2, m, m), dtype, rng, 2.0)
    q = rand((2, n, m), dtype, rng)
    x = tf.linalg.solve_sylvester(a, b, q)
    assert x.dtype == np.dtype(dtype) and x.shape == (2, n, m)
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    for k in range(2):
        np.testing.assert_allclose(x.numpy()[k], sl.solve_sylvester(a[k], b[k], q[k]),
                                   rtol=tol, atol=tol)


def test_mixed_dtypes_and_broadcasting():
    """(SciPy 1.17's solve_sylvester is wrong for a real a with a complex b: it pairs a
    real Schur form with a complex one; the reference casts a to complex, and the
    residual is checked too.)"""
    rng = np.random.default_rng(1)
    a = rand((4, 4), np.float64, rng, 3.0)
    b = rand((3, 1, 2, 2), np.complex128, rng, 2.0)
    q = rand((2, 4, 2), np.float64, rng)
    x = tf.linalg.solve_sylvester(a, b, q).numpy()
    assert x.shape == (3, 2, 4, 2) and x.dtype == np.complex128
    for i in range(3):
        for j in range(2):
            ref = sl.solve_sylvester(a.astype(complex), b[i, 0], q[j])
            np.testing.assert_allclose(x[i, j], ref, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(a @ x[i, j] + x[i, j] @ b[i, 0], q[j], atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [((3, 3), (3, 3), (3, 3)), ((4, 4), (2, 2), (4, 2)),
                                   ((2, 2), (4, 4), (2, 4)),
                                   ((2, 3, 3), (2, 2, 2), (2, 3, 2)),
                                   ((3, 3), (2, 2, 2), (3, 2))])
def test_grads(dtype, shape):
    """Non-normal a and b (random, shifted so that A and −B are well separated); the last
    shape broadcasts a and q against a batch of b (their gradients are summed back)."""
    rng = np.random.default_rng(2)
    sa, sb, sq = shape
    check_grads(tf.linalg.solve_sylvester,
                [rand(sa, dtype, rng, 3.0), rand(sb, dtype, rng, 2.0), rand(sq, dtype, rng)])


def test_grads_mixed_real_complex():
    rng = np.random.default_rng(3)
    check_grads(tf.linalg.solve_sylvester,
                [rand((3, 3), np.float64, rng, 3.0), rand((2, 2), np.complex128, rng, 2.0),
                 rand((3, 2), np.float64, rng)])


def test_low_precision():
    rng = np.random.default_rng(4)
    check_low_precision(tf.linalg.solve_sylvester,
                        [rand((3, 3), np.float64, rng, 3.0), rand((2, 2), np.float64, rng, 2.0),
                         rand((3, 2), np.float64, rng)])


def test_plain_pullback_matches_the_graph_formula():
    """The plain backward (?trsyl on the kept Schur factors) and the create_graph rule
    (the differentiable solve_sylvester on Aᴴ, Bᴴ) give the same gradients."""
    rng = np.random.default_rng(5)
    args = [rand((3, 3), np.complex128, rng, 3.0), rand((2, 2), np.complex128, rng, 2.0),
            rand((3, 2), np.complex128, rng)]
    g = rand((3, 2), np.complex128, rng)
    res = []
    for create_graph in (False, True):
        xs = [tf.tensor(x, requires_grad=True) for x in args]
        out = tf.linalg.solve_sylvester(*xs)
        gs = tf.grad([out], xs, [g], create_graph=create_graph)
        res.append([t.numpy() for t in gs])
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lyapunov(dtype):
    rng = np.random.default_rng(6)
    a, q = rand((2, 4, 4), dtype, rng, -3.0), rand((2, 4, 4), dtype, rng)
    x = tf.linalg.solve_continuous_lyapunov(a, q).numpy()
    for k in range(2):
        np.testing.assert_allclose(x[k], sl.solve_continuous_lyapunov(a[k], q[k]),
                                   rtol=1e-12, atol=1e-12)
    check_grads(tf.linalg.solve_continuous_lyapunov, [a[0], q[0]])
    check_grads(tf.linalg.solve_continuous_lyapunov, [a, q], order=1)


def test_empty():
    x = tf.linalg.solve_sylvester(np.zeros((0, 0)), np.eye(2), np.zeros((0, 2)))
    assert x.shape == (0, 2)


def test_singular_operator_raises(monkeypatch):
    a = np.diag([1.0, 2.0])
    b = np.diag([-2.0, 5.0])                     # A and −B share the eigenvalue 2
    with pytest.raises(tf.LinAlgError, match="no unique solution"):
        tf.linalg.solve_sylvester(a, b, np.ones((2, 2)))
    stack = np.stack([np.diag([1.0, 3.0]), a])
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack"):
        tf.linalg.solve_sylvester(stack, b, np.ones((2, 2)))
    with pytest.raises(tf.LinAlgError, match="no unique solution"):  # eigenvalue on iR
        tf.linalg.solve_continuous_lyapunov(np.array([[0.0, 1.0], [-1.0, 0.0]]), np.eye(2))


def test_bad_input_records_nothing(monkeypatch):
    calls = record_calls(monkeypatch, sylmod, "apply1")
    a = tf.tensor(np.eye(3), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="square"):
        tf.linalg.solve_sylvester(np.ones((3, 2)), np.eye(2), np.ones((3, 2)))
    with pytest.raises(tf.ShapeError, match=r"q must have shape \(\.\.\., 3, 2\)"):
        tf.linalg.solve_sylvester(a, np.eye(2), np.ones((2, 3)))
    with pytest.raises(tf.ShapeError, match="broadcast"):
        tf.linalg.solve_sylvester(np.ones((2, 3, 3)), np.ones((3, 2, 2)), np.ones((3, 2)))
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.solve_sylvester(a, np.eye(2), np.full((3, 2), np.nan))
    with pytest.raises(tf.ShapeError, match="do not match"):
        tf.linalg.solve_continuous_lyapunov(a, np.eye(2))
    assert calls == []


def test_builder():
    rng = np.random.default_rng(7)
    a, b, q = rand((3, 3), np.float64, rng, 3.0), rand((2, 2), np.float64, rng, 2.0), \
        rand((3, 2), np.float64, rng)
    np.testing.assert_allclose(tf.linalg.solve_sylvester_ad(a, b, q).run().numpy(),
                               sl.solve_sylvester(a, b, q), rtol=1e-12)
