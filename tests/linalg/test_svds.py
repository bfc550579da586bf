"""tf.linalg.svds: values and vectors against numpy, derivatives against the dense
tf.linalg.svd and central finite differences for square, tall and wide matrices (reverse,
forward, second order of the values; second order of the vectors raises), an operator
given by (matvec, rmatvec) with parameters, the gauge check, float32, and the errors.

Singular vectors are unique up to a phase per triplet, so vector losses are
gauge-invariant: |u_iᴴ b|², |v_iᴴ c|², u_i v_iᴴ.
"""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.complex128]
SHAPES = [(20, 20), (26, 14), (14, 26)]


def loss(u, s, vh, b, c):
    """A loss of the values and (gauge-invariant) of the vectors; s ascending."""
    return (0.4 * s.sum() + 1.3 * s[-1] + abs(u[:, -1].conj() @ b) ** 2
            + 0.5 * abs(vh[-2] @ c) ** 2 + abs((u[:, -2].conj() @ b) * (vh[-2] @ c)) ** 2)


def dense_triplets(a, k, which="LM"):
    """The same k triplets from the dense tf.linalg.svd (ascending, like svds)."""
    u, s, vh = tf.linalg.svd(a, full_matrices=False)
    K = s.shape[0]
    idx = np.arange(k)[::-1] if which == "LM" else np.arange(K - k, K)[::-1]
    return u[:, idx], s[idx], vh[idx]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("which", ["LM", "SM"])
def test_values_and_vectors(dtype, shape, which):
    k = 3
    a = random_array(shape, dtype, 1)
    u, s, vh = tf.linalg.svds(a, k, which)
    m, n = shape
    assert u.shape == (m, k) and s.shape == (k,) and vh.shape == (k, n)
    assert s.dtype == np.finfo(dtype).dtype and u.dtype == dtype and vh.dtype == dtype
    ref = np.linalg.svd(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64),
                        compute_uv=False)
    want = ref[:k][::-1] if which == "LM" else ref[-k:][::-1]
    tol = 2e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(s.numpy(), want, rtol=tol, atol=tol)
    uu, ss, vv = u.numpy(), s.numpy(), vh.numpy()
    np.testing.assert_allclose(a @ vv.conj().T, uu * ss, atol=50 * tol)
    np.testing.assert_allclose(uu.conj().T @ uu, np.eye(k), atol=50 * tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("which", ["LM", "SM"])
def test_grad_matches_dense_svd(dtype, shape, which):
    k = 3
    a = random_array(shape, dtype, 2)
    b = random_array(shape[0], dtype, 3)
    c = random_array(shape[1], dtype, 4)
    results = []
    for f in (lambda x: loss(*tf.linalg.svds(x, k, which), b, c),
              lambda x: loss(*dense_triplets(x, k, which), b, c)):
        x = tf.tensor(a, requires_grad=True)
        out = f(x)
        g, = tf.grad([out], [x])
        _, t = tf.jvp(f, [tf.tensor(a)], [tf.tensor(random_array(shape, dtype, 5))])
        results.append((out.item(), g.numpy(), t.item()))
    (v1, g1, t1), (v2, g2, t2) = results
    assert abs(v1 - v2) < 1e-10
    np.testing.assert_allclose(g1, g2, atol=1e-9)
    assert abs(t1 - t2) < 1e-9


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_grads_finite_differences(dtype, shape):
    b = random_array(shape[0], dtype, 6)
    c = random_array(shape[1], dtype, 7)

    def f(x):
        u, s, vh = tf.linalg.svds(x, 3)
        return s, abs(u.conj().T @ b) ** 2, abs(vh @ c) ** 2, u @ vh
    check_grads(f, [random_array(shape, dtype, 8)], order=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_second_order_values(dtype, shape):
    # (order 2 in reverse mode: the forward rule does not nest in a jvp of a jvp)
    check_grads(lambda x: tf.linalg.svds(x, 3)[1], [random_array(shape, dtype, 9)], order=2,
                modes=("rev",))


def test_second_order_vectors_raises():
    a = random_array((12, 10), np.float64, 10)

    def f(x):
        return tf.linalg.svds(x, 2)[0][:, 0].sum() ** 2
    x = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="second derivatives"):
        tf.grad([f(x)], [x], create_graph=True)
    x = tf.tensor(a, requires_grad=True)
    _, t = tf.jvp(f, [x], [tf.tensor(random_array((12, 10), np.float64, 11))])
    with pytest.raises(tf.UnsupportedADError, match="vector tangent"):
        tf.grad([t], [x])


def _operator(m, n, dtype, rng=0):
    g = np.random.default_rng(rng)
    m0 = random_array((m, n), dtype, g)
    m1 = random_array((m, n), dtype, g)

    def dense(p):
        return tf.tensor(m0) * p[0] + tf.tensor(m1) * p[1] ** 2

    def matvec(x, p):
        return dense(p) @ x

    def rmatvec(y, p):
        return dense(p).mH @ y
    return (matvec, rmatvec), dense


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_functions_with_params(dtype, shape):
    fns, dense = _operator(*shape, dtype, 12)
    p0 = np.array([1.1, 0.7])
    b = random_array(shape[0], dtype, 13)
    c = random_array(shape[1], dtype, 14)

    def sparse_loss(p):
        return loss(*tf.linalg.svds(fns, 3, shape=shape, params=(p,)), b, c)

    def dense_loss(p):
        return loss(*dense_triplets(dense(p), 3), b, c)
    gs = []
    for f in (sparse_loss, dense_loss):
        p = tf.tensor(p0, requires_grad=True)
        gs.append(tf.grad([f(p)], [p])[0].numpy())
    np.testing.assert_allclose(gs[0], gs[1], atol=1e-9)
    check_grads(sparse_loss, [p0], order=1)
    check_grads(lambda p: tf.linalg.svds(fns, 3, shape=shape, params=(p,))[1], [p0], order=2,
                modes=("rev",))


def test_float32_against_float64():
    a = random_array((20, 16), np.float64, 15)
    check_low_precision(lambda x: tf.linalg.svds(x, 3)[1], [a])
    check_low_precision(lambda x: (lambda u, s, vh: (u @ vh).sum())(*tf.linalg.svds(x, 3)), [a])


def test_complex_phase_dependent_loss_raises():
    a = random_array((12, 10), np.complex128, 16)
    x = tf.tensor(a, requires_grad=True)
    u, s, vh = tf.linalg.svds(x, 2)
    with pytest.raises(tf.GaugeError):
        tf.grad([u[0, 0].real], [x])


def test_errors():
    a = random_array((8, 6), np.float64, 17)
    with pytest.raises(tf.ShapeError, match="stack"):
        tf.linalg.svds(np.stack([a, a]), 2)
    with pytest.raises(tf.ShapeError, match="k must satisfy"):
        tf.linalg.svds(a, 6)
    with pytest.raises(tf.ShapeError, match="which"):
        tf.linalg.svds(a, 2, "LA")
    with pytest.raises(tf.ShapeError, match="shape"):
        tf.linalg.svds((lambda x: x, lambda y: y), 2)
    with pytest.raises(tf.ShapeError, match="pair of functions"):
        tf.linalg.svds(lambda x: x, 2, shape=(8, 6))
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.svds(np.full((8, 6), np.nan), 2)
    h = tf.tensor(2.0, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="params"):
        tf.linalg.svds((lambda x: h * (tf.tensor(a) @ x), lambda y: tf.tensor(a).mT @ y), 2,
                       shape=(8, 6))


def test_no_convergence_raises():
    a = random_array((200, 150), np.float64, 18)
    with pytest.raises(tf.LinAlgError, match="maxiter"):
        tf.linalg.svds(a, 5, "SM", maxiter=2, ncv=11)


def test_registered():
    from tenferro._ops.registry import OPS
    assert "svds" in OPS and OPS["svds"].second_order is False
    assert tf.linalg.svds.__module__ == "tenferro.linalg.svds"
