"""tf.linalg.qr: values against NumPy, derivatives (rev, fwd, second order) for square,
tall, wide and batched inputs in every mode, the complete-mode policy, 0-size, errors."""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import (check_grads, check_low_precision, random_array,
                              random_well_conditioned)

DTYPES = [np.float64, np.complex128]
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 5), (1, 2, 3, 3)]


def mH(x):
    return np.swapaxes(x, -1, -2).conj()


@pytest.mark.parametrize("dtype", DTYPES + [np.float32, np.complex64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_values(dtype, shape, mode):
    a = random_array(shape, dtype, np.random.default_rng(0))
    q, r = tf.linalg.qr(a, mode=mode)
    nq, nr = np.linalg.qr(a, mode=mode)
    assert q.shape == nq.shape and r.shape == nr.shape
    assert q.dtype == r.dtype == np.dtype(dtype)
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(q.numpy(), nq, rtol=tol, atol=tol)
    np.testing.assert_allclose(r.numpy(), nr, rtol=tol, atol=tol)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, rtol=tol, atol=tol)
    k = q.shape[-1]
    eye = np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k))
    np.testing.assert_allclose(mH(q.numpy()) @ q.numpy(), eye, atol=tol)
    np.testing.assert_array_equal(np.tril(r.numpy(), -1), 0)
    assert not np.imag(np.diagonal(r.numpy(), 0, -2, -1)).any()   # real diagonal
    rr = tf.linalg.qr(a, mode="r")
    assert isinstance(rr, tf.Tensor)
    np.testing.assert_allclose(rr.numpy(), np.linalg.qr(a, mode="r"), rtol=tol, atol=tol)


def test_method_builder_and_result_type():
    a = random_array((4, 3), np.float64, np.random.default_rng(1))
    res = tf.tensor(a).qr()
    assert isinstance(res, tf.linalg.QRResult) and res._fields == ("q", "r")
    q2, r2 = tf.qr_ad(a).with_options(mode="complete").run()
    assert q2.shape == (4, 4) and r2.shape == (4, 3)
    np.testing.assert_allclose(res.q.numpy() @ res.r.numpy(), a, atol=1e-12)


# Q and R are both unique (R with LAPACK's real diagonal) where A has independent leading
# columns, so the gradchecks look at the raw outputs (no gauge-invariant wrapper needed).
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_gradients_reduced(dtype, shape):
    a = random_well_conditioned(shape, dtype, np.random.default_rng(2))
    check_grads(lambda a: tuple(tf.linalg.qr(a)), [a])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_gradients_single_output(dtype, shape):
    # Q alone and R alone: the rules with one cotangent missing (structural zero)
    a = random_well_conditioned(shape, dtype, np.random.default_rng(3))
    check_grads(lambda a: tf.linalg.qr(a).q, [a])
    check_grads(lambda a: tf.linalg.qr(a, mode="r"), [a])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 6), (9, 4), (4, 9), (2, 70, 60)])
@pytest.mark.parametrize("which", ["both", "q", "r"])
def test_plain_backward_matches_recorded_formula(dtype, shape, which):
    # A plain backward runs the compiled kernel (tenferro/_kernels/triangular_backprop.pyx
    # qr_backprop); with create_graph=True the rule runs on Tensors through the formula.
    # Same gradient, with one cotangent or both (70x60: several recursion levels).
    rng = np.random.default_rng(8)
    a = random_well_conditioned(shape, dtype, rng)
    q, r = (x.numpy() for x in tf.linalg.qr(a))
    cots = [random_array(q.shape, dtype, rng), random_array(r.shape, dtype, rng)]
    grads = []
    for create_graph in (False, True):
        at = tf.tensor(a, requires_grad=True)
        outs = list(tf.linalg.qr(at))
        if which != "both":
            i = "qr".index(which)
            outs, cs = [outs[i]], [cots[i]]
        else:
            cs = cots
        (ga,) = tf.grad(outs, [at], cs, create_graph=create_graph)
        grads.append(ga.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 3, 3)])
def test_gradients_complete(dtype, shape):
    # For m > n only the first n columns of Q are determined by A (see the next tests);
    # for m <= n complete is the same factorization as reduced.
    a = random_well_conditioned(shape, dtype, np.random.default_rng(4))
    n = shape[-1]

    def f(a):
        q, r = tf.linalg.qr(a, mode="complete")
        return q[..., :n], r

    check_grads(f, [a])


@pytest.mark.parametrize("dtype", DTYPES)
def test_complete_extra_columns_reverse_policy(dtype):
    rng = np.random.default_rng(5)
    a = tf.tensor(random_well_conditioned((5, 3), dtype, rng), requires_grad=True)
    q, r = tf.linalg.qr(a, mode="complete")
    with pytest.raises(tf.UnsupportedADError, match="last 2 columns of Q"):
        tf.grad(q, [a], random_array((5, 5), dtype, rng))
    # a zero cotangent on the extra columns is fine (and equals the reduced gradient)
    gq = random_array((5, 5), dtype, rng)
    gq[:, 3:] = 0
    gr = random_array((5, 3), dtype, rng)
    g1 = tf.grad([q, r], [a], [gq, gr])[0]
    q2, r2 = tf.linalg.qr(a)
    g2 = tf.grad([q2, r2], [a], [gq[:, :3], gr[:3]])[0]
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_complete_extra_columns_forward_tangent(dtype):
    # The tangent of the whole Q keeps it unitary (QᴴQ̇ skew-Hermitian), leaves the extra
    # columns' own block alone (Q₂ᴴQ̇₂ = 0), and Q̇R + QṘ = Ȧ.
    rng = np.random.default_rng(6)
    a = random_well_conditioned((5, 2), dtype, rng)
    da = random_array((5, 2), dtype, rng)
    (q, r), (dq, dr) = tf.jvp(lambda a: tuple(tf.linalg.qr(a, mode="complete")), [a], [da])
    q, r, dq, dr = q.numpy(), r.numpy(), dq.numpy(), dr.numpy()
    s = mH(q) @ dq
    np.testing.assert_allclose(s + mH(s), 0, atol=1e-12)
    np.testing.assert_allclose(s[2:, 2:], 0, atol=1e-12)
    np.testing.assert_allclose(dq @ r + q @ dr, da, atol=1e-12)
    np.testing.assert_array_equal(dr[2:], 0)


def test_mode_r_records_only_when_needed():
    a = random_well_conditioned((4, 3), np.float64, np.random.default_rng(7))
    r = tf.linalg.qr(a, mode="r")
    assert r.grad_fn is None
    at = tf.tensor(a, requires_grad=True)
    r = tf.linalg.qr(at, mode="r")
    assert r.grad_fn is not None
    with tf.no_grad():
        assert tf.linalg.qr(at, mode="r").grad_fn is None


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5)])
def test_low_precision(shape):
    rng = np.random.default_rng(8)
    for dtype in DTYPES:
        a = random_well_conditioned(shape, dtype, rng)
        check_low_precision(lambda a: tuple(tf.linalg.qr(a)), [a])


@pytest.mark.parametrize("shape,mode,qshape,rshape", [
    ((0, 0), "reduced", (0, 0), (0, 0)),
    ((3, 0), "reduced", (3, 0), (0, 0)),
    ((3, 0), "complete", (3, 3), (3, 0)),
    ((0, 3), "reduced", (0, 0), (0, 3)),
    ((0, 3, 2), "reduced", (0, 3, 2), (0, 2, 2)),
    ((2, 0, 3), "complete", (2, 0, 0), (2, 0, 3)),
])
def test_zero_size(shape, mode, qshape, rshape):
    a = tf.tensor(np.zeros(shape), requires_grad=True)
    q, r = tf.linalg.qr(a, mode=mode)
    assert q.shape == qshape and r.shape == rshape
    nq, nr = np.linalg.qr(np.zeros(shape), mode=mode)
    np.testing.assert_array_equal(q.numpy(), nq)
    (g,) = tf.grad([r], [a], [np.ones(rshape)])
    assert g.shape == shape
    _, (dq, dr) = tf.jvp(lambda a: tuple(tf.linalg.qr(a, mode=mode)), [np.zeros(shape)],
                         [np.ones(shape)])
    assert dq.shape == qshape and dr.shape == rshape
    assert tf.linalg.qr(a, mode="r").shape == np.linalg.qr(np.zeros(shape), mode="r").shape


def test_errors():
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.qr(np.ones(3))
    with pytest.raises(ValueError, match="mode must be"):
        tf.linalg.qr(np.eye(3), mode="raw")
    with pytest.raises(tf.DTypeError):
        tf.linalg.qr(np.eye(3, dtype=object))
    bad = np.eye(3)
    bad[1, 2] = np.nan
    a = tf.tensor(bad, requires_grad=True)
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.qr(a)
    assert a.grad is None
    q, r = tf.linalg.qr(bad, check_finite=False)
    assert np.isnan(r.numpy()).any()
    assert tf.linalg.qr(np.eye(2, dtype=int)).q.dtype == np.float64


@pytest.mark.parametrize("a", [
    # a zero column: R[1, 1] = 0 exactly
    np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 3.0]]),
    # the second column a multiple of the first: R[1, 1] is rounding noise
    np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 1.0], [0.0, 0.0, 3.0]]),
    # wide, batched: the leading 2x2 block of the second matrix is singular
    np.stack([np.eye(2, 3), np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])]),
])
def test_rank_deficient_derivatives_raise(a):
    at = tf.tensor(a, requires_grad=True)
    q, r = tf.linalg.qr(at)
    where = "matrix \\(1,\\) of the stack" if a.ndim == 3 else "the matrix"
    with pytest.raises(tf.LinAlgError, match=where + " is rank deficient"):
        tf.grad(q, [at], np.ones(q.shape))
    with pytest.raises(tf.LinAlgError, match="rank deficient"):
        tf.jvp(lambda a: tf.linalg.qr(a).r, [a], [np.ones(a.shape)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_third_order(dtype, shape):
    """Third derivatives through the create_graph pullback recorded as one lazy_rule node
    (svd.py); the wide case also reads A itself in the rule."""
    a = random_array(shape, dtype, 31)

    def f(x):
        q, r = tf.linalg.qr(x)
        return tf.sum(tf.abs(q * r[..., :1, :1]) ** 2) + tf.sum(tf.abs(r) ** 3)
    check_grads(f, [a], order=3)
