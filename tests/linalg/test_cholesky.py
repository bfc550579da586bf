"""tf.linalg.cholesky: values against NumPy, derivatives (rev, fwd, second order), the
Hermitian gradient convention, which triangle is read, 0-size, errors."""
import sys

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array, random_spd

DTYPES = [np.float64, np.complex128]


def mH(x):
    return np.swapaxes(x, -1, -2).conj()


def hermitian_pd(a):
    """The PD Hermitian matrix the gradchecks feed to cholesky: (a + aᴴ)/2 + 2n·I.

    Finite differences perturb the raw `a` by ±εv with v random (not Hermitian): fed to
    cholesky directly, that would leave the Hermitian matrices, where only the read
    triangle matters and the Hermitian-gradient convention differs from the true
    one-triangle derivative. Through this wrapper every perturbation is Hermitian and
    stays inside the positive-definite cone (the shift bounds the eigenvalues from below).
    """
    n = a.shape[-1]
    return (a + a.mH) / 2 + np.eye(n, dtype=a.dtype) * (2 * n)


@pytest.mark.parametrize("dtype", DTYPES + [np.float32, np.complex64])
@pytest.mark.parametrize("batch", [(), (2,), (2, 1)])
@pytest.mark.parametrize("upper", [False, True])
def test_values(dtype, batch, upper):
    a = random_spd(4, dtype, batch, np.random.default_rng(0))
    c = tf.linalg.cholesky(a, upper=upper)
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    assert c.dtype == np.dtype(dtype) and c.shape == a.shape
    np.testing.assert_allclose(c.numpy(), np.linalg.cholesky(a, upper=upper), rtol=tol,
                               atol=tol)
    c = c.numpy()
    np.testing.assert_allclose(mH(c) @ c if upper else c @ mH(c), a, rtol=tol, atol=tol)


@pytest.mark.parametrize("upper", [False, True])
def test_reads_one_triangle(upper):
    a = random_spd(4, np.complex128, (), np.random.default_rng(1))
    junk = np.tril(np.full((4, 4), 7 + 3j), -1) if upper else np.triu(np.full((4, 4), 7 - 3j), 1)
    np.testing.assert_allclose(tf.linalg.cholesky(a + junk, upper=upper).numpy(),
                               np.linalg.cholesky(a, upper=upper), rtol=1e-12)


def test_method_and_builder():
    a = random_spd(3, np.float64, (), np.random.default_rng(2))
    l1 = tf.tensor(a).cholesky()
    l2 = tf.cholesky_ad(a).with_options(upper=True).run()
    np.testing.assert_allclose(l1.numpy(), l2.numpy().T, rtol=1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3), (2, 1, 2, 2)])
@pytest.mark.parametrize("upper", [False, True])
def test_gradients(dtype, shape, upper):
    a = random_array(shape, dtype, np.random.default_rng(3))
    check_grads(lambda a: tf.linalg.cholesky(hermitian_pd(a), upper=upper), [a])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradient_is_hermitian(dtype):
    # Applied to a Hermitian matrix directly, the gradient is the Hermitian matrix
    # ½(Ā + Āᴴ) (not a triangle), whichever triangle was read; its inner product with a
    # Hermitian direction is the directional derivative.
    rng = np.random.default_rng(4)
    a = random_spd(4, dtype, (), rng)
    g = random_array((4, 4), dtype, rng)
    grads = []
    for upper in (False, True):
        at = tf.tensor(a, requires_grad=True)
        c = tf.linalg.cholesky(at, upper=upper)
        (ga,) = tf.grad(c, [at], mH(g) if upper else g)
        np.testing.assert_allclose(ga.numpy(), mH(ga.numpy()), atol=1e-13)
        grads.append(ga.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)
    v = random_array((4, 4), dtype, rng)
    v = v + mH(v)
    eps = 1e-6
    fd = (np.linalg.cholesky(a + eps * v) - np.linalg.cholesky(a - eps * v)) / (2 * eps)
    np.testing.assert_allclose(np.sum((grads[0].conj() * v).real),
                               np.sum((g.conj() * fd).real), rtol=1e-6)
    # the JVP with a Hermitian tangent is the directional derivative too
    _, dl = tf.jvp(tf.linalg.cholesky, [a], [v])
    np.testing.assert_allclose(dl.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_low_precision():
    rng = np.random.default_rng(5)
    for dtype in DTYPES:
        a = random_array((2, 4, 4), dtype, rng)
        check_low_precision(lambda a: tf.linalg.cholesky(hermitian_pd(a)), [a])
        check_low_precision(lambda a: tf.linalg.cholesky(hermitian_pd(a), upper=True), [a])


@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)])
def test_zero_size(shape):
    a = tf.tensor(np.zeros(shape), requires_grad=True)
    c = tf.linalg.cholesky(a)
    assert c.shape == shape
    (g,) = tf.grad(c, [a], np.ones(shape))
    assert g.shape == shape
    _, t = tf.jvp(tf.linalg.cholesky, [np.zeros(shape)], [np.ones(shape)])
    assert t.shape == shape


def test_not_positive_definite_names_batch_index():
    a = np.stack([np.eye(3)] * 3)
    a[2, 1, 1] = -1.0
    at = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.LinAlgError, match=r"matrix \(2,\) of the stack is not .*positive"):
        tf.linalg.cholesky(at)
    assert at.grad is None
    with pytest.raises(np.linalg.LinAlgError, match=r"matrix \(0, 1\) of the stack"):
        tf.linalg.cholesky(a[1:].reshape(1, 2, 3, 3))
    with pytest.raises(tf.LinAlgError, match="the matrix is not .*positive definite"):
        tf.linalg.cholesky(a[2], upper=True)


def test_errors():
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.cholesky(np.ones(3))
    with pytest.raises(tf.ShapeError, match="square"):
        tf.linalg.cholesky(np.ones((2, 3)))
    with pytest.raises(tf.DTypeError):
        tf.linalg.cholesky(np.eye(3, dtype=object))
    bad = np.eye(3)
    bad[0, 0] = np.nan
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.cholesky(bad)
    assert tf.linalg.cholesky(np.eye(2, dtype=int) * 4).dtype == np.float64
    np.testing.assert_array_equal(tf.linalg.cholesky(np.eye(2, dtype=int) * 4).numpy(),
                                  2 * np.eye(2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(70, 70), (2, 131, 131)])
def test_blocked_backward_matches_formula(dtype, shape):
    # A plain backward on ndarrays runs the compiled blocked algorithm (recursing at these
    # sizes); with create_graph=True the rule runs on Tensors through the closed formula.
    # Same matrix.
    rng = np.random.default_rng(6)
    a = random_spd(shape[-1], dtype, shape[:-2], rng)
    g = random_array(shape, dtype, rng)
    grads = []
    for create_graph in (False, True):
        at = tf.tensor(a, requires_grad=True)
        (ga,) = tf.grad(tf.linalg.cholesky(at), [at], g, create_graph=create_graph)
        grads.append(ga.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads[0], mH(grads[0]), atol=1e-12)
    # and a reverse-mode gradcheck at that size (through the Hermitian wrapper)
    if len(shape) == 2:
        check_grads(lambda x: tf.linalg.cholesky(hermitian_pd(x)),
                    [random_array(shape, dtype, rng)], modes=("rev",), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loops", [0, 16, 64])
@pytest.mark.parametrize("n", [16, 20, 40])
def test_blocked_loops_or_blas(dtype, loops, n):
    # CHOL_LOOPS picks the plain loops or BLAS for the off-diagonal products of each
    # block (0: BLAS everywhere above the leaves; 64: loops for every half up to SMALL):
    # every choice is the formula
    from tenferro._kernels import triangular_backprop as kernel
    mod = sys.modules["tenferro.linalg.cholesky"]
    rng = np.random.default_rng(11)
    l = np.linalg.cholesky(random_spd(n, dtype, (2,), rng))
    g = random_array((2, n, n), dtype, rng)
    old = kernel._set_chol_loops(loops)
    try:
        out = kernel.cholesky_backprop(l, g)
    finally:
        kernel._set_chol_loops(old)
    np.testing.assert_allclose(out, mod._backprop_formula(l, g), rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,nb", [(11, 1), (11, 2), (9, 4), (5, 3)])
def test_blocked_recursion_deep(dtype, n, nb):
    # the compiled blocked backward with tiny leaves (many levels, odd splits) against
    # the formula
    from tenferro._kernels import triangular_backprop as kernel
    mod = sys.modules["tenferro.linalg.cholesky"]
    rng = np.random.default_rng(7)
    l = np.linalg.cholesky(random_spd(n, dtype, (2,), rng))
    g = random_array((2, n, n), dtype, rng)
    old = kernel._set_chol_block(nb)
    try:
        out = kernel.cholesky_backprop(l, g)
    finally:
        kernel._set_chol_block(old)
    np.testing.assert_allclose(out, mod._backprop_formula(l, g), rtol=1e-11, atol=1e-12)


# ---- cho_factor / cho_solve -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES + [np.float32, np.complex64])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("bshape", [(4,), (4, 3), (2, 4, 3)])
def test_cho_factor_solve_values(dtype, lower, bshape):
    """Values against SciPy; c holds zeros off its triangle (SciPy: a's entries)."""
    import scipy.linalg as sl
    rng = np.random.default_rng(10)
    a = random_spd(4, dtype, (), rng)
    b = random_array(bshape, dtype, rng)
    c, lw = tf.linalg.cho_factor(a, lower=lower)
    assert lw is lower and c.dtype == np.dtype(dtype)
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    cs, _ = sl.cho_factor(a, lower=lower)
    tri = np.tril if lower else np.triu
    np.testing.assert_allclose(c.numpy(), tri(cs), rtol=tol, atol=tol)
    assert not np.any((np.triu if lower else np.tril)(c.numpy(), 1 if lower else -1))
    x = tf.linalg.cho_solve((c, lw), b)
    if len(bshape) == 3:
        ref = np.stack([sl.cho_solve((cs, lower), bk) for bk in b])
    else:
        ref = sl.cho_solve((cs, lower), b)
    np.testing.assert_allclose(x.numpy(), ref, rtol=tol * 10, atol=tol * 10)
    # cho_solve reads only its triangle: SciPy's c (garbage in the other one) gives the same
    np.testing.assert_allclose(tf.linalg.cho_solve((cs, lower), b).numpy(), x.numpy(),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve_grads(dtype, lower):
    rng = np.random.default_rng(11)
    a = random_array((2, 3, 3), dtype, rng)
    b = random_array((2, 3, 2), dtype, rng)
    check_grads(lambda a, b: tf.linalg.cho_solve(
        tf.linalg.cho_factor(hermitian_pd(a), lower=lower), b), [a, b])
    # the factor alone: its triangle only (the rule's cotangent lives there)
    c = np.linalg.cholesky(random_spd(3, dtype, (), rng))
    c = c if lower else c.conj().T
    check_grads(lambda c, b: tf.linalg.cho_solve((c, lower), b), [c, b[0]])


def test_cho_solve_matches_solve_gradient():
    """d/da of cho_solve(cho_factor(a), b) equals that of solve(a, b) for Hermitian
    perturbations (the Hermitian part of solve's gradient)."""
    rng = np.random.default_rng(12)
    a, b = random_spd(4, np.float64, (), rng), random_array((4, 2), np.float64, rng)
    g = random_array((4, 2), np.float64, rng)
    res = []
    for f in (lambda a: tf.linalg.cho_solve(tf.linalg.cho_factor(a), b),
              lambda a: tf.linalg.solve(a, b)):
        x = tf.tensor(a, requires_grad=True)
        (ga,) = tf.grad([f(x)], [x], [g])
        res.append(ga.numpy())
    np.testing.assert_allclose(res[0], (res[1] + res[1].T) / 2, rtol=1e-12, atol=1e-12)


def test_cho_errors():
    with pytest.raises(tf.ShapeError, match="pair"):
        tf.linalg.cho_solve(np.eye(2), np.ones(2))
    with pytest.raises(tf.ShapeError, match="square"):
        tf.linalg.cho_solve((np.ones((2, 3)), True), np.ones(2))
    with pytest.raises(tf.LinAlgError, match="positive definite"):
        tf.linalg.cho_factor(-np.eye(2))
    with pytest.raises(tf.LinAlgError, match="singular"):
        tf.linalg.cho_solve((np.zeros((2, 2)), True), np.ones(2))
