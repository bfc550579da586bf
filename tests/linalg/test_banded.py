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
    with pytest.raises(tf.ShapeError, match=r"ab must have shape \(l \+ u \+ 1, n\)"):
        tf.linalg.solve_banded((1, 2), ab, np.ones(4))
    with pytest.raises(tf.ShapeError, match=r"b must have shape \(4,\) or \(4, k\)"):
        tf.linalg.solve_banded((1, 1), ab, np.ones(3))
    with pytest.raises(tf.ShapeError, match="non-negative"):
        tf.linalg.solve_banded((-1, 1), ab, np.ones(4))
    with pytest.raises(tf.ShapeError, match="pair"):
        tf.linalg.solve_banded(1, ab, np.ones(4))
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.solve_banded((1, 1), ab, np.array([1.0, np.nan, 0, 0]))
    with pytest.raises(tf.LinAlgError, match="singular"):
        tf.linalg.solve_banded((1, 1), np.zeros((3, 4)), np.ones(4))
    assert calls == []
