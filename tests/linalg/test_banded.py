"""tf.linalg.solve_banded: values against SciPy, derivatives (rev, fwd, second order) in
ab and b for several bandwidths, the unread corners of ab, errors."""
import numpy as np
import pytest
import scipy.linalg as sl

import tenferro as tf
import tenferro.linalg.banded as bmod
from tenferro.testing import check_grads, check_low_precision, record_calls

DTYPES = [np.float64, np.complex128]
BANDS = [(0, 0), (1, 1), (2, 0), (0, 2), (1, 2), (3, 1)]


def band(l, u, n, dtype, rng):
    ab = rng.standard_normal((l + u + 1, n))
    if np.dtype(dtype).kind == "c":
        ab = ab + 1j * rng.standard_normal(ab.shape)
    ab[u] += 2.0 * (l + u + 1)                   # diagonally dominant: well conditioned
    return ab.astype(dtype)


def dense(ab, l, u):
    n = ab.shape[1]
    a = np.zeros((n, n), ab.dtype)
    for i in range(n):
        for j in range(max(0, i - l), min(n, i + u + 1)):
            a[i, j] = ab[u + i - j, j]
    return a


@pytest.mark.parametrize("dtype", DTYPES + [np.float32, np.complex64])
@pytest.mark.parametrize("lu", BANDS)
@pytest.mark.parametrize("bshape", [(6,), (6, 3)])
def test_values(dtype, lu, bshape):
    rng = np.random.default_rng(0)
    l, u = lu
    ab = band(l, u, 6, dtype, rng)
    b = rng.standard_normal(bshape).astype(dtype)
    x = tf.linalg.solve_banded(lu, ab, b)
    assert x.dtype == np.dtype(dtype) and x.shape == bshape
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(x.numpy(), sl.solve_banded(lu, ab, b), rtol=tol, atol=tol)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(dense(ab, l, u), b), rtol=tol * 10,
                               atol=tol * 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lu", BANDS)
def test_grads(dtype, lu):
    rng = np.random.default_rng(1)
    ab = band(*lu, 5, dtype, rng)
    check_grads(lambda ab, b: tf.linalg.solve_banded(lu, ab, b),
                [ab, rng.standard_normal((5, 2)).astype(dtype)])
    check_grads(lambda ab, b: tf.linalg.solve_banded(lu, ab, b),
                [ab, rng.standard_normal(5).astype(dtype)], order=1)


def test_gradient_is_the_band_of_the_dense_gradient():
    """āb is solve's Ā = −B̄Xᴴ gathered into band storage; the unread corners get 0."""
    rng = np.random.default_rng(2)
    l, u = 2, 1
    ab = band(l, u, 5, np.complex128, rng)
    ab[0, 0] = ab[-1, -1] = 123.0                # corners: not part of a
    b = rng.standard_normal((5, 2))
    g = rng.standard_normal((5, 2)) + 1j * rng.standard_normal((5, 2))
    t = tf.tensor(ab, requires_grad=True)
    (gab,) = tf.grad([tf.linalg.solve_banded((l, u), t, b)], [t], [g])
    a = tf.tensor(dense(ab, l, u), requires_grad=True)
    (ga,) = tf.grad([tf.linalg.solve(a, b)], [a], [g])
    ref = np.zeros_like(ab)
    for i in range(5):
        for j in range(max(0, i - l), min(5, i + u + 1)):
            ref[u + i - j, j] = ga.numpy()[i, j]
    np.testing.assert_allclose(gab.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert gab.numpy()[0, 0] == 0 and gab.numpy()[-1, -1] == 0


def test_low_precision():
    rng = np.random.default_rng(3)
    check_low_precision(lambda ab, b: tf.linalg.solve_banded((1, 1), ab, b),
                        [band(1, 1, 5, np.float64, rng), rng.standard_normal((5, 2))])


def test_errors(monkeypatch):
    calls = record_calls(monkeypatch, bmod, "apply1")
    ab = tf.tensor(band(1, 1, 4, np.float64, np.random.default_rng(4)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match=r"ab must have shape \(\.\.\., l \+ u \+ 1, n\)"):
        tf.linalg.solve_banded((1, 2), ab, np.ones(4))
    with pytest.raises(tf.ShapeError, match=r"b must have shape \(4,\) or \(\.\.\., 4, k\)"):
        tf.linalg.solve_banded((1, 1), ab, np.ones(3))
    with pytest.raises(tf.ShapeError, match=r"do not broadcast"):
        tf.linalg.solve_banded((1, 1), np.stack([ab.numpy()] * 2), np.ones((3, 4, 1)))
    with pytest.raises(tf.ShapeError, match=r"ab must have shape"):
        tf.linalg.solve_banded((1, 1), np.ones(4), np.ones(4))
    with pytest.raises(tf.ShapeError, match="non-negative"):
        tf.linalg.solve_banded((-1, 1), ab, np.ones(4))
    with pytest.raises(tf.ShapeError, match="pair"):
        tf.linalg.solve_banded(1, ab, np.ones(4))
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.solve_banded((1, 1), ab, np.array([1.0, np.nan, 0, 0]))
    with pytest.raises(tf.LinAlgError, match="singular"):
        tf.linalg.solve_banded((1, 1), np.zeros((3, 4)), np.ones(4))
    stack = np.stack([ab.numpy(), np.zeros((3, 4))])
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack is singular"):
        tf.linalg.solve_banded((1, 1), stack, np.ones(4))
    assert calls == []


def stack(l, u, batch, n, dtype, rng):
    return np.stack([band(l, u, n, dtype, rng)
                     for _ in range(int(np.prod(batch)))]).reshape(batch + (l + u + 1, n))


@pytest.mark.parametrize("dtype", DTYPES + [np.float32])
@pytest.mark.parametrize("lu", [(1, 1), (2, 0), (0, 2), (3, 1)])
@pytest.mark.parametrize("abatch,bshape", [((3,), (6,)), ((3,), (6, 2)), ((2, 3), (3, 6, 2)),
                                            ((3,), (2, 1, 6, 2)), ((), (4, 6, 1)),
                                            ((2, 1), (1, 3, 6, 1))])
def test_stack_values(dtype, lu, abatch, bshape):
    """A stack of bands: SciPy's solve_banded (which loops over the batch) per matrix."""
    rng = np.random.default_rng(5)
    ab = stack(*lu, abatch, 6, dtype, rng)
    b = rng.standard_normal(bshape).astype(dtype)
    x = tf.linalg.solve_banded(lu, ab, b)
    ref = sl.solve_banded(lu, ab, b)
    assert x.dtype == np.dtype(dtype) and x.shape == ref.shape
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    np.testing.assert_allclose(x.numpy(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lu", [(1, 1), (0, 2), (2, 1)])
def test_stack_grads(dtype, lu):
    rng = np.random.default_rng(6)
    f = lambda ab, b: tf.linalg.solve_banded(lu, ab, b)  # noqa: E731
    # a stack against one rhs matrix, a broadcast pair, and one vector for every matrix
    check_grads(f, [stack(*lu, (2,), 4, dtype, rng), rng.standard_normal((4, 2)).astype(dtype)])
    check_grads(f, [stack(*lu, (2, 1), 4, dtype, rng),
                    rng.standard_normal((3, 4, 1)).astype(dtype)])
    check_grads(f, [stack(*lu, (3,), 4, dtype, rng), rng.standard_normal(4).astype(dtype)],
                order=1)


def test_stack_gradient_matches_the_single_solves():
    """Each matrix's cotangent in a stack is that of its own solve (broadcast b summed)."""
    rng = np.random.default_rng(7)
    ab = stack(1, 2, (3,), 5, np.float64, rng)
    b = rng.standard_normal((5, 2))
    g = rng.standard_normal((3, 5, 2))
    t, tb = tf.tensor(ab, requires_grad=True), tf.tensor(b, requires_grad=True)
    gab, gb = tf.grad([tf.linalg.solve_banded((1, 2), t, tb)], [t, tb], [g])
    gb_ref = np.zeros_like(b)
    for k in range(3):
        t1, tb1 = tf.tensor(ab[k], requires_grad=True), tf.tensor(b, requires_grad=True)
        g1, h1 = tf.grad([tf.linalg.solve_banded((1, 2), t1, tb1)], [t1, tb1], [g[k]])
        np.testing.assert_allclose(gab.numpy()[k], g1.numpy(), rtol=1e-13, atol=1e-14)
        gb_ref += h1.numpy()
    np.testing.assert_allclose(gb.numpy(), gb_ref, rtol=1e-13, atol=1e-14)
