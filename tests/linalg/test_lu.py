"""tf.linalg.lu: values against SciPy, derivatives (rev, fwd, second order) for square,
tall, wide and batched inputs, the non-differentiable P, 0-size, errors."""
import sys

import numpy as np
import pytest
import scipy.linalg as sla

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.complex128]
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 5), (1, 2, 3, 3)]


def pivot_stable(shape, dtype, rng):
    """A matrix whose partial pivoting is a fixed row permutation that a finite-difference
    step cannot change: a row permutation of D, where D has a dominant leading diagonal
    (|D_jj| ~ 4 against entries ~ 0.3), so every elimination step picks D's row j by a
    wide margin. P and the rules' branch stay the same for x ± εv."""
    m, n = shape[-2:]
    k = min(m, n)
    d = 0.3 * random_array(shape, dtype, rng)
    d[..., np.arange(k), np.arange(k)] += 4.0
    return d[..., rng.permutation(m), :]


@pytest.mark.parametrize("dtype", DTYPES + [np.float32, np.complex64])
@pytest.mark.parametrize("shape", SHAPES)
def test_values(dtype, shape):
    a = random_array(shape, dtype, np.random.default_rng(0))
    p, l, u = tf.linalg.lu(a)
    sp, sl, su = sla.lu(a)
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    for t, s in ((p, sp), (l, sl), (u, su)):
        assert t.shape == s.shape and t.dtype == np.dtype(dtype)
        np.testing.assert_allclose(t.numpy(), s, rtol=tol, atol=tol)
    np.testing.assert_allclose(p.numpy() @ l.numpy() @ u.numpy(), a, rtol=tol, atol=tol)


def test_p_is_not_differentiable_method_builder():
    a = pivot_stable((3, 3), np.float64, np.random.default_rng(1))
    at = tf.tensor(a, requires_grad=True)
    res = at.lu()
    assert isinstance(res, tf.linalg.LUResult) and res._fields == ("p", "l", "u")
    assert not res.p.requires_grad and res.l.requires_grad and res.u.requires_grad
    p2, l2, u2 = tf.lu_ad(a).run()
    np.testing.assert_array_equal(l2.numpy(), res.l.numpy())
    _, (dp, dl, du) = tf.jvp(lambda a: tuple(tf.linalg.lu(a)), [a], [np.ones((3, 3))])
    assert not dp.numpy().any() and dl.shape == (3, 3) and du.shape == (3, 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_gradients(dtype, shape):
    a = pivot_stable(shape, dtype, np.random.default_rng(2))
    _, l, u = tf.linalg.lu(a)
    np.testing.assert_allclose(tf.linalg.lu(a).p.numpy(), sla.lu(a)[0])
    check_grads(lambda a: tuple(tf.linalg.lu(a))[1:], [a])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_gradients_single_output(dtype, shape):
    # L alone and U alone: the rules with the other cotangent a structural zero
    a = pivot_stable(shape, dtype, np.random.default_rng(3))
    check_grads(lambda a: tf.linalg.lu(a).l, [a])
    check_grads(lambda a: tf.linalg.lu(a).u, [a])


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5)])
def test_low_precision(shape):
    rng = np.random.default_rng(4)
    for dtype in DTYPES:
        a = pivot_stable(shape, dtype, rng)
        check_low_precision(lambda a: tuple(tf.linalg.lu(a))[1:], [a])


@pytest.mark.parametrize("shape,pshape,lshape,ushape", [
    ((0, 0), (0, 0), (0, 0), (0, 0)),
    ((3, 0), (3, 3), (3, 0), (0, 0)),
    ((0, 3), (0, 0), (0, 0), (0, 3)),
    ((0, 3, 3), (0, 3, 3), (0, 3, 3), (0, 3, 3)),
    ((2, 0, 3), (2, 0, 0), (2, 0, 0), (2, 0, 3)),
])
def test_zero_size(shape, pshape, lshape, ushape):
    a = tf.tensor(np.zeros(shape), requires_grad=True)
    p, l, u = tf.linalg.lu(a)
    assert (p.shape, l.shape, u.shape) == (pshape, lshape, ushape)
    np.testing.assert_array_equal(p.numpy() @ l.numpy() @ u.numpy(), np.zeros(shape))
    (g,) = tf.grad([l, u], [a], [np.ones(lshape), np.ones(ushape)])
    assert g.shape == shape
    _, (_, dl, du) = tf.jvp(lambda a: tuple(tf.linalg.lu(a)), [np.zeros(shape)],
                            [np.ones(shape)])
    assert dl.shape == lshape and du.shape == ushape


def test_errors():
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.lu(np.ones(3))
    with pytest.raises(tf.DTypeError):
        tf.linalg.lu(np.eye(3, dtype=object))
    bad = np.eye(3)
    bad[2, 0] = np.inf
    a = tf.tensor(bad, requires_grad=True)
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.lu(a)
    assert a.grad is None
    assert tf.linalg.lu(np.eye(2, dtype=int)).u.dtype == np.float64


@pytest.mark.parametrize("a", [
    np.array([[1.0, 2.0], [2.0, 4.0]]),                                # exactly singular
    np.stack([np.eye(3), np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]])]),   # rounding-level
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0]]),                      # wide, singular U₁
])
def test_singular_factor_derivatives_raise(a):
    # singular A still factors (like SciPy); its L and U are not differentiable
    at = tf.tensor(a, requires_grad=True)
    p, l, u = tf.linalg.lu(at)
    np.testing.assert_allclose(p.numpy() @ l.numpy() @ u.numpy(), a, atol=1e-12)
    where = r"matrix \(1,\) of the stack" if a.ndim == 3 else "the matrix"
    with pytest.raises(tf.LinAlgError, match=where + " is singular"):
        tf.grad([l, u], [at], [np.ones(l.shape), np.ones(u.shape)])
    with pytest.raises(tf.LinAlgError, match="is singular"):
        tf.jvp(lambda a: tf.linalg.lu(a).u, [a], [np.ones(a.shape)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(70, 70), (2, 131, 131), (150, 70), (70, 150)])
@pytest.mark.parametrize("which", ["lu", "l", "u"])
def test_blocked_backward_matches_formula(dtype, shape, which):
    # A plain backward runs the compiled kernel (blocked above 16x16) on ndarrays; with
    # create_graph=True the rule runs on Tensors through the closed formula.
    rng = np.random.default_rng(6)
    a = pivot_stable(shape, dtype, rng)
    m, n = shape[-2:]
    k = min(m, n)
    cots = {"l": random_array(shape[:-1] + (k,), dtype, rng),
            "u": random_array(shape[:-2] + (k, n), dtype, rng)}
    grads = []
    for create_graph in (False, True):
        at = tf.tensor(a, requires_grad=True)
        res = tf.linalg.lu(at)
        outs = [getattr(res, w) for w in which]
        (ga,) = tf.grad(outs, [at], [cots[w] for w in which], create_graph=create_graph)
        grads.append(ga.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
    if shape == (70, 70) and which == "lu":
        check_grads(lambda x: tuple(tf.linalg.lu(x))[1:], [a], modes=("rev",), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,nb", [(11, 1), (11, 2), (9, 4), (5, 3), (40, 16)])
def test_blocked_recursion_deep(dtype, n, nb):
    # the compiled square rule (tenferro/_kernels/triangular_backprop.pyx lu_backprop) with tiny
    # blocks (many levels, odd splits) against the formula in recorded ops
    from tenferro._kernels import triangular_backprop as kern
    mod = sys.modules["tenferro.linalg.lu"]
    rng = np.random.default_rng(7)
    _, l, u = sla.lu(pivot_stable((2, n, n), dtype, rng))
    gl, gu = random_array((2, n, n), dtype, rng), random_array((2, n, n), dtype, rng)
    want = mod._core_formula(tf.tensor(l), tf.tensor(u), tf.tensor(gl), tf.tensor(gu))
    old = kern._set_lu_block(nb)
    try:
        got = kern.lu_backprop(None, l, u, gl, gu)
    finally:
        kern._set_lu_block(old)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES + [np.complex64])
@pytest.mark.parametrize("shape", [(6, 6), (2, 6, 4), (4, 6)])
def test_row_permutation_paths_agree(dtype, shape, monkeypatch):
    # The rules apply P (Pᵀ in the JVP) to rows as a matmul with the real P when m is
    # small (complex rows as (re, im) pairs) and as a row gather otherwise: the same
    # numbers either way (a permutation matmul adds only exact zeros).
    mod = sys.modules["tenferro.linalg.lu"]
    rng = np.random.default_rng(8)
    a = pivot_stable(shape, dtype, rng)
    m, n = shape[-2:]
    k = min(m, n)
    cl = random_array(shape[:-1] + (k,), dtype, rng)
    cu = random_array(shape[:-2] + (k, n), dtype, rng)

    def run():
        at = tf.tensor(a, requires_grad=True)
        _, l, u = tf.linalg.lu(at)
        (g,) = tf.grad([l, u], [at], [cl, cu])
        _, (_, dl, du) = tf.jvp(lambda x: tuple(tf.linalg.lu(x)), [a], [a[..., ::-1, :]])
        return g.numpy(), dl.numpy(), du.numpy()

    assert m < mod._GATHER_MIN
    matmul = run()
    monkeypatch.setattr(mod, "_GATHER_MIN", 0)
    gather = run()
    for x, y in zip(matmul, gather):
        assert x.dtype == y.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(x, y)


def test_real_p_matmul_layouts():
    # the (re, im) view needs C-ordered rows of P's precision; anything else is a plain
    # product (same values)
    mod = sys.modules["tenferro.linalg.lu"]
    rng = np.random.default_rng(9)
    pr = sla.lu(random_array((5, 5), np.float64, rng))[0]
    for dtype in (np.complex128, np.complex64, np.float64):
        x = random_array((5, 8), dtype, rng)
        for xx in (x, x[:, ::2], np.asfortranarray(x), np.stack([x, 2 * x])):
            got = mod._real_p_matmul(pr, xx)
            assert got.shape == xx.shape
            np.testing.assert_allclose(got, pr @ xx, rtol=1e-6, atol=0)


def test_nan_pivot_with_check_finite_off():
    # check_finite=False lets a NaN through: the factors and the derivatives are NaN (no
    # error from the singularity check, whose fast pass lets a NaN pivot through)
    a = np.array([[1.0, 2.0], [3.0, np.nan]])
    for x in (a, np.stack([np.eye(2), a])):
        at = tf.tensor(x, requires_grad=True)
        _, l, u = tf.linalg.lu(at, check_finite=False)
        (g,) = tf.grad([l, u], [at], [np.ones(l.shape), np.ones(u.shape)])
        assert np.isnan(g.numpy()[..., -2:, :]).any()
