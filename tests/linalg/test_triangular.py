"""tf.linalg.solve_triangular (and the tril/triu ops its rules use): values against SciPy,
derivatives (rev, fwd, second order), broadcasting, 0-size inputs, errors."""
import itertools

import numpy as np
import pytest
import scipy.linalg as sla

import tenferro as tf
from tenferro.linalg.triangular import tril, triu
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.complex128]


def tri_matrix(shape, dtype, rng, lower=True):
    """A well-conditioned triangular-ish matrix: random entries, a large diagonal, and
    garbage in the other triangle (which the solve must not read)."""
    a = random_array(shape, dtype, rng)
    n = shape[-1]
    a[..., np.arange(n), np.arange(n)] += 4.0
    return a


def reference(a, b, lower, trans, unit, left):
    """op(A)⁻¹B or B op(A)⁻¹ through a dense solve of the explicit triangle."""
    A = np.tril(a) if lower else np.triu(a)
    if unit:
        n = a.shape[-1]
        A = A.copy()
        A[..., np.arange(n), np.arange(n)] = 1
    opA = [A, np.swapaxes(A, -1, -2), np.swapaxes(A, -1, -2).conj()][trans]
    if left:
        if b.ndim == 1:
            return np.linalg.solve(opA, b[..., None])[..., 0]
        return np.linalg.solve(opA, b)
    if b.ndim == 1:
        return np.linalg.solve(np.swapaxes(opA, -1, -2), b[..., None])[..., 0]
    return np.swapaxes(np.linalg.solve(np.swapaxes(opA, -1, -2), np.swapaxes(b, -1, -2)),
                       -1, -2)


FLAGS = list(itertools.product([True, False], [0, 1, 2], [False, True], [True, False]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower,trans,unit,left", FLAGS)
def test_values_against_scipy(dtype, lower, trans, unit, left):
    rng = np.random.default_rng(0)
    a = tri_matrix((4, 4), dtype, rng)
    for bshape in [(4,), (4, 3) if left else (3, 4)]:
        b = random_array(bshape, dtype, rng)
        x = tf.linalg.solve_triangular(a, b, lower=lower, trans=trans, unit_diagonal=unit,
                                       left=left)
        assert x.shape == b.shape and x.dtype == np.dtype(dtype)
        np.testing.assert_allclose(x.numpy(), reference(a, b, lower, trans, unit, left),
                                   rtol=1e-12, atol=1e-12)
        if left:
            np.testing.assert_allclose(
                x.numpy(), sla.solve_triangular(a, b, lower=lower, trans=trans,
                                                unit_diagonal=unit), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("trans", [0, "N", 1, "T", 2, "C"])
def test_trans_spellings(trans):
    rng = np.random.default_rng(1)
    a = tri_matrix((3, 3), np.complex128, rng)
    b = random_array((3, 2), np.complex128, rng)
    x = tf.linalg.solve_triangular(a, b, trans=trans)
    np.testing.assert_allclose(x.numpy(), sla.solve_triangular(a, b, trans=trans), rtol=1e-12)


# Gradchecks: every flag combination in float64 and complex128 with a matrix right-hand
# side (rev, fwd and all second-order maps); the vector and broadcasting cases below.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower,trans,unit,left", FLAGS)
def test_gradients(dtype, lower, trans, unit, left):
    rng = np.random.default_rng(2)
    a = tri_matrix((3, 3), dtype, rng)
    b = random_array((3, 2) if left else (2, 3), dtype, rng)
    check_grads(lambda a, b: tf.linalg.solve_triangular(
        a, b, lower=lower, trans=trans, unit_diagonal=unit, left=left), [a, b])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("ashape,bshape", [
    ((3, 3), (3,)),             # vector right-hand side
    ((2, 3, 3), (3,)),          # batched a, one vector for every matrix
    ((2, 3, 3), (3, 2)),        # batched a, one matrix b
    ((3, 3), (2, 1, 3, 2)),     # batched b, one a
    ((2, 1, 3, 3), (4, 3, 2)),  # both batched, broadcast to (2, 4)
])
def test_gradients_batched_and_vectors(dtype, left, ashape, bshape):
    rng = np.random.default_rng(3)
    a = tri_matrix(ashape, dtype, rng)
    if not left and len(bshape) > 1:
        bshape = bshape[:-2] + bshape[:-3:-1]
    b = random_array(bshape, dtype, rng)
    x = tf.linalg.solve_triangular(a, b, lower=True, left=left)
    np.testing.assert_allclose(x.numpy(), reference(a, b, True, 0, False, left), rtol=1e-12)
    check_grads(lambda a, b: tf.linalg.solve_triangular(a, b, lower=True, trans=2,
                                                        left=left), [a, b])


def test_mixed_dtypes_real_a_complex_b():
    rng = np.random.default_rng(4)
    a = tri_matrix((3, 3), np.float64, rng)
    b = random_array((3, 2), np.complex128, rng)
    x = tf.linalg.solve_triangular(a, b, trans=1)
    assert x.dtype == np.complex128
    np.testing.assert_allclose(x.numpy(), sla.solve_triangular(a, b, trans=1), rtol=1e-12)
    check_grads(lambda a, b: tf.linalg.solve_triangular(a, b, trans=2, left=False),
                [a, b.T.copy()])


@pytest.mark.parametrize("lower,unit", [(True, False), (False, True)])
def test_only_the_used_triangle_is_read_and_differentiated(lower, unit):
    rng = np.random.default_rng(5)
    a = tri_matrix((4, 4), np.float64, rng)
    b = random_array((4, 2), np.float64, rng)
    other = np.triu(np.ones((4, 4)), 1) if lower else np.tril(np.ones((4, 4)), -1)
    if unit:
        other = other + np.eye(4)
    x1 = tf.linalg.solve_triangular(a, b, lower=lower, unit_diagonal=unit)
    x2 = tf.linalg.solve_triangular(a + 100 * other, b, lower=lower, unit_diagonal=unit)
    np.testing.assert_allclose(x1.numpy(), x2.numpy(), rtol=1e-13)
    at = tf.tensor(a, requires_grad=True)
    tf.linalg.solve_triangular(at, b, lower=lower, unit_diagonal=unit).sum().backward()
    assert np.all(at.grad.numpy()[other == 1] == 0)
    assert np.all(at.grad.numpy()[other == 0] != 0)


def test_low_precision():
    rng = np.random.default_rng(6)
    for dtype in DTYPES:
        a = tri_matrix((2, 4, 4), dtype, rng)
        b = random_array((4, 3), dtype, rng)
        check_low_precision(lambda a, b: tf.linalg.solve_triangular(a, b, lower=True), [a, b])
        check_low_precision(
            lambda a, b: tf.linalg.solve_triangular(a, b, trans=2, left=False), [a, b.T.copy()])


@pytest.mark.parametrize("ashape,bshape,xshape", [
    ((0, 0), (0,), (0,)),
    ((0, 0), (0, 3), (0, 3)),
    ((3, 3), (3, 0), (3, 0)),
    ((0, 3, 3), (3, 2), (0, 3, 2)),
    ((2, 3, 3), (0, 1, 3, 2), (0, 2, 3, 2)),
])
def test_zero_size(ashape, bshape, xshape):
    rng = np.random.default_rng(7)
    a = tf.tensor(tri_matrix(ashape, np.float64, rng), requires_grad=True)
    b = tf.tensor(random_array(bshape, np.float64, rng), requires_grad=True)
    x = tf.linalg.solve_triangular(a, b)
    assert x.shape == xshape
    ga, gb = tf.grad(x, [a, b], np.ones(xshape))
    assert ga.shape == ashape and gb.shape == bshape
    assert not ga.numpy().any()
    _, t = tf.jvp(lambda b: tf.linalg.solve_triangular(a.detach(), b), [b.detach()],
                  [np.ones(bshape)])
    assert t.shape == xshape


def test_builder():
    rng = np.random.default_rng(8)
    a = tri_matrix((3, 3), np.float64, rng)
    b = random_array((3,), np.float64, rng)
    x = tf.solve_triangular_ad(a, b).with_options(lower=True).run()
    np.testing.assert_allclose(x.numpy(), sla.solve_triangular(a, b, lower=True), rtol=1e-13)


# ---- errors -----------------------------------------------------------------------------

def test_errors_shapes_and_dtypes():
    st = tf.linalg.solve_triangular
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        st(np.ones(3), np.ones(3))
    with pytest.raises(tf.ShapeError, match="square"):
        st(np.ones((3, 4)), np.ones(3))
    with pytest.raises(tf.ShapeError, match="needs 3 rows"):
        st(np.eye(3), np.ones((4, 2)))
    with pytest.raises(tf.ShapeError, match="needs 3 columns"):
        st(np.eye(3), np.ones((3, 2)), left=False)
    with pytest.raises(tf.ShapeError, match="needs 3 rows"):
        st(np.eye(3), np.ones(2))
    with pytest.raises(tf.ShapeError, match="0-d"):
        st(np.eye(3), 1.0)
    with pytest.raises(tf.ShapeError, match="broadcast"):
        st(np.ones((2, 3, 3)) + np.eye(3), np.ones((4, 3, 1)))
    with pytest.raises(ValueError, match="trans must be"):
        st(np.eye(3), np.ones(3), trans="X")
    with pytest.raises(tf.DTypeError):
        st(np.eye(3, dtype=object), np.ones(3))
    # integers become float64, like NumPy
    x = st(np.eye(3, dtype=int) * 2, np.arange(3))
    assert x.dtype == np.float64
    np.testing.assert_allclose(x.numpy(), [0, 0.5, 1])


def test_errors_singular_names_batch_index():
    a = np.stack([np.eye(3), np.eye(3)])
    a[1, 2, 2] = 0
    at = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack is singular"):
        tf.linalg.solve_triangular(at, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="diagonal entry 2"):
        tf.linalg.solve_triangular(a[1], np.ones(3))
    # a unit diagonal is never read: no error
    x = tf.linalg.solve_triangular(a[1], np.ones(3), unit_diagonal=True)
    np.testing.assert_allclose(x.numpy(), np.ones(3))
    assert at.grad is None and at.is_leaf


def test_errors_non_finite():
    a = np.eye(3)
    b = np.ones(3)
    b[1] = np.nan
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.solve_triangular(a, b)
    a2 = a.copy()
    a2[0, 2] = np.inf
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.solve_triangular(a2, np.ones(3))
    x = tf.linalg.solve_triangular(a, b, check_finite=False)
    assert np.isnan(x.numpy()[1])


def test_nothing_recorded_on_failure():
    a = tf.tensor(np.eye(3), requires_grad=True)
    with pytest.raises(tf.ShapeError):
        tf.linalg.solve_triangular(a, np.ones((4, 1)))
    y = (a * 2).sum()
    (g,) = tf.grad(y, [a])
    np.testing.assert_allclose(g.numpy(), 2 * np.ones((3, 3)))


# ---- tril / triu ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,npfn", [(tril, np.tril), (triu, np.triu)])
@pytest.mark.parametrize("k", [0, -1, 1])
def test_tril_triu(dtype, fn, npfn, k):
    a = random_array((2, 3, 4), dtype, np.random.default_rng(9))
    np.testing.assert_array_equal(fn(a, k).numpy(), npfn(a, k))
    np.testing.assert_array_equal(npfn(tf.tensor(a), k).numpy(), npfn(a, k))  # dispatch
    check_grads(lambda x: npfn(x, k) * x, [a])
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        fn(np.ones(3))


def test_check_nonsingular_with_nan_diagonal_does_not_crash():
    # a NaN pivot is not "singular": no error, the NaN propagates (check_finite=False)
    from tenferro.linalg.triangular import check_nonsingular
    d = np.diag([1.0, np.nan, 2.0])
    check_nonsingular(d, "f", "is singular", rtol=1e-12)
    check_nonsingular(np.stack([d, d]), "f", "is singular", rtol=1e-12)
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack is singular"):
        check_nonsingular(np.stack([d, np.diag([1.0, 0.0, 1.0])]), "f", "is singular",
                          rtol=1e-12)
