"""The compiled LAPACK drivers (lapack_eig.pyx, lapack_qr.pyx, lapack_lu_chol.pyx) agree
with numpy.linalg / scipy.linalg and with their NumPy twins (lapack_*_twin.py), for the
four dtypes, every layout and 0-size stacks."""
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import tenferro as tf
from tenferro import _kernels as kernels
from tenferro._kernels import (lapack_eig, lapack_eig_twin, lapack_lu_chol,
                               lapack_lu_chol_twin, lapack_qr, lapack_qr_twin)

# The three driver modules, and their three twins, each as one namespace: the tests below
# check every driver alike (and some check all of them at once).
lp = SimpleNamespace(**{n: getattr(m, n) for m in (lapack_eig, lapack_qr, lapack_lu_chol)
                        for n in m.__all__},
                     _testing_force_gesvd=lapack_eig._testing_force_gesvd)
ref = SimpleNamespace(**{n: getattr(m, n) for m in (lapack_eig_twin, lapack_qr_twin,
                                                   lapack_lu_chol_twin) for n in m.__all__})

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 4, 4), (2, 3, 5, 2)]
SQUARE = [(1, 1), (4, 4), (2, 3, 4, 4)]
LAYOUTS = ["c", "fortran", "strided", "reversed", "readonly"]


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def mH(x):
    return np.swapaxes(x, -1, -2).conj()


def layout(a, kind):
    """The same values as ``a`` with another memory layout."""
    if kind == "fortran":      # each matrix column-major
        return np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)
    if kind == "strided":      # every other row and column of a larger array
        big = np.zeros(a.shape[:-2] + (2 * a.shape[-2], 2 * a.shape[-1]), a.dtype)
        big[..., ::2, ::2] = a
        return big[..., ::2, ::2]
    if kind == "reversed":     # negative strides
        return a[..., ::-1, ::-1].copy()[..., ::-1, ::-1]
    if kind == "readonly":
        a = a.copy()
        a.setflags(write=False)
        return a
    return a


def assert_close(x, y, dtype, scale=1.0):
    y = np.broadcast_to(y, np.shape(x))     # e.g. an identity for a whole stack
    np.testing.assert_allclose(x, y, rtol=tol(dtype) * scale, atol=tol(dtype) * scale)


def check_layouts(fn, arrays, expected, dtype, scale=10.0):
    """fn gives the same result (to rounding) for every other memory layout of its inputs:
    Fortran-ordered, strided, negative strides, read-only."""
    expected = expected if isinstance(expected, tuple) else (expected,)
    for kind in LAYOUTS[1:]:
        out = fn(*[layout(x, kind) for x in arrays])
        out = out if isinstance(out, tuple) else (out,)
        assert len(out) == len(expected)
        for x, y in zip(out, expected):
            assert x.dtype == y.dtype
            assert_close(x, y, dtype, scale)


def hermitian_from(tri, lower):
    """The Hermitian matrix defined by the lower (or upper) triangle of ``tri``."""
    t = np.tril(tri) if lower else np.triu(tri)
    d = np.real(np.diagonal(t, axis1=-2, axis2=-1))
    h = t + mH(t)
    n = tri.shape[-1]
    h[..., np.arange(n), np.arange(n)] = d
    return h


# --- svd ------------------------------------------------------------------------------------

@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd(dtype, shape, full):
    a = rand(shape, dtype)
    u, s, vt = lp.svd(a, full)
    u0, s0, vt0 = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vt.shape) == (u0.shape, s0.shape, vt0.shape)
    assert (u.dtype, s.dtype, vt.dtype) == (u0.dtype, s0.dtype, vt0.dtype)
    assert_close(s, s0, dtype, 10)
    k = s.shape[-1]
    # the vectors are defined up to a phase per singular triplet: check the factorization
    assert_close((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, dtype, 10)
    assert_close(mH(u) @ u, np.eye(u.shape[-1]), dtype, 10)
    assert_close(vt @ mH(vt), np.eye(vt.shape[-2]), dtype, 10)
    assert_close(lp.svd(a, full, compute_uv=False), s0, dtype, 10)
    assert_close(ref.svd(a, full)[1], s, dtype, 10)
    check_layouts(lambda x: lp.svd(x, full), [a], (u, s, vt), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_gesvd_fallback(dtype):
    """The gesvd path (taken when gesdd does not converge) gives a valid SVD too."""
    a = rand((2, 5, 3), dtype, seed=1)
    lp._testing_force_gesvd(True)
    try:
        outs = [lp.svd(a, full) for full in (False, True)]
        s_only = lp.svd(a, compute_uv=False)
    finally:
        lp._testing_force_gesvd(False)
    s0 = np.linalg.svd(a, compute_uv=False)
    assert_close(s_only, s0, dtype, 10)
    for u, s, vt in outs:
        assert_close(s, s0, dtype, 10)
        assert_close((u[..., :3] * s[..., None, :]) @ vt[..., :3, :], a, dtype, 10)
        assert_close(mH(u) @ u, np.eye(u.shape[-1]), dtype, 10)


# --- eigh -----------------------------------------------------------------------------------

@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(dtype, shape, lower):
    # the other triangle holds unrelated values (and NaN): only one triangle is read
    a = rand(shape, dtype)
    junk = np.full(shape, np.nan, dtype)
    tri = np.where(np.tril(np.ones(shape[-2:], bool)) if lower
                   else np.triu(np.ones(shape[-2:], bool)), a, junk)
    h = hermitian_from(a, lower)
    w, v = lp.eigh(tri, lower)
    w0 = np.linalg.eigvalsh(h)
    assert w.dtype == w0.dtype and v.dtype == h.dtype and v.shape == h.shape
    assert_close(w, w0, dtype, 100)
    assert np.all(np.diff(w, axis=-1) >= 0)                 # ascending
    assert_close((v * w[..., None, :]) @ mH(v), h, dtype, 100)
    assert_close(mH(v) @ v, np.eye(shape[-1]), dtype, 100)
    assert_close(lp.eigh(tri, lower, compute_v=False), w0, dtype, 100)
    assert_close(ref.eigh(tri, lower)[0], w, dtype, 100)
    check_layouts(lambda x: lp.eigh(x, lower), [tri], (w, v), dtype)


# --- qr -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr(dtype, shape, mode):
    # geqrf + orgqr on the same matrix as numpy.linalg.qr: the same q and r, signs too
    a = rand(shape, dtype)
    out = lp.qr(a, mode)
    check_layouts(lambda x: lp.qr(x, mode), [a], out, dtype)
    expect = np.linalg.qr(a, mode=mode)
    twin = ref.qr(a, mode)
    if mode == "r":
        out, expect, twin = (out,), (expect,), (twin,)
    for x, x0, xt in zip(out, expect, twin):
        assert x.shape == x0.shape and x.dtype == x0.dtype
        assert_close(x, x0, dtype, 10)
        assert_close(x, xt, dtype, 10)
    if mode != "r":
        q, r = out
        assert_close(q @ r, a, dtype, 10)


# shapes taking lapack_qr.pyx's geqrt path (_qr_block: k >= 64; a complete Q of a tall matrix
# from k = 32; mode "r" from k = 96, or 64 when wide), with block sizes 8, 16 and 32 and
# a last block narrower than the others
QR_BLOCKED = [((70, 64), "reduced"), ((2, 64, 66), "complete"), ((40, 33), "complete"),
              ((64, 100), "r"), ((97, 97), "r"), ((2, 99, 97), "reduced"),
              ((130, 120), "reduced"), ((197, 260), "complete")]


@pytest.mark.parametrize("shape, mode", QR_BLOCKED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_blocked(dtype, shape, mode):
    # geqrt + Q accumulated block by block: still numpy.linalg.qr's q and r (same
    # Householder vectors), a unitary q and a real diagonal of r
    a = rand(shape, dtype)
    out = lp.qr(a, mode)
    expect = np.linalg.qr(a, mode=mode)
    if mode == "r":
        out, expect = (out,), (expect,)
    for x, x0 in zip(out, expect):
        assert x.shape == x0.shape and x.dtype == x0.dtype
        assert_close(x, x0, dtype, 100)
    r = out[-1]
    assert np.all(np.imag(np.diagonal(r, 0, -2, -1)) == 0)
    if mode != "r":
        q = out[0]
        assert_close(q @ r, a, dtype, 100)
        assert_close(mH(q) @ q, np.eye(q.shape[-1]), dtype, 100)
    check_layouts(lambda x: lp.qr(x, mode), [a], out if mode != "r" else out[0], dtype,
                  100)


def test_qr_bad_mode():
    with pytest.raises(ValueError, match="mode"):
        lp.qr(np.eye(2), "raw")
    with pytest.raises(ValueError, match="mode"):
        ref.qr(np.eye(2), "raw")


# --- getrf / lu -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_getrf(dtype, shape):
    a = rand(shape, dtype)
    lu, piv, info = lp.getrf(a, return_info=True)
    check_layouts(lambda x: lp.getrf(x, return_info=True), [a], (lu, piv, info), dtype)
    lu_t, piv_t, info_t = ref.getrf(a, return_info=True)
    assert lu.shape == a.shape and lu.dtype == a.dtype and piv.dtype == np.int32
    assert piv.shape == a.shape[:-2] + (min(shape[-2:]),) and info.shape == a.shape[:-2]
    assert_close(lu, lu_t, dtype, 10)
    np.testing.assert_array_equal(piv, piv_t)
    np.testing.assert_array_equal(info, 0)
    np.testing.assert_array_equal(info_t, 0)
    lu2, piv2 = lp.getrf(a)
    np.testing.assert_array_equal(lu2, lu)
    np.testing.assert_array_equal(piv2, piv)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (45, 45)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_getrf_one_matrix_equals_stack(dtype, shape):
    # a single matrix (any strides) takes its own entry path: bit for bit a stack's
    # matrix, lu's Fortran-ordered view and info (0-d) included
    a = rand((3,) + shape, dtype)
    a[2, :, 0] = 0                      # singular: a zero first pivot
    lu, piv, info = lp.getrf(a, return_info=True)
    for k in range(3):
        for x in (a[k].copy(), np.asfortranarray(a[k]), a[k][::-1][::-1], a[k].T.T):
            l1, p1, i1 = lp.getrf(x, return_info=True)
            assert l1.shape == shape and l1.flags.f_contiguous and p1.dtype == np.int32
            assert np.array_equal(l1, lu[k]) and np.array_equal(p1, piv[k])
            assert i1.shape == () and i1.dtype == np.int32 and i1 == info[k]
            l2, p2 = lp.getrf(x)
            assert np.array_equal(l2, lu[k]) and np.array_equal(p2, piv[k])
    assert info[2] == 1


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (45, 45), (70, 40)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_one_matrix_equals_stack(dtype, shape):
    # a single matrix (any strides) takes its own entry path: bit for bit a stack's
    # matrix, for every mode
    a = rand((2,) + shape, dtype)
    for mode in ("reduced", "complete", "r"):
        want = lp.qr(a, mode)
        want = want if isinstance(want, tuple) else (want,)
        for k in range(2):
            for x in (a[k].copy(), np.asfortranarray(a[k]), a[k][::-1][::-1]):
                got = lp.qr(x, mode)
                got = got if isinstance(got, tuple) else (got,)
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    assert g.dtype == w.dtype and np.array_equal(g, w[k])
    with pytest.raises(ValueError, match="qr mode"):
        lp.qr(a[0], "full")


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (30, 30)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_and_eigh_one_matrix_equal_stack(dtype, shape):
    # a single matrix (any strides) takes its own entry path: bit for bit a stack's
    # matrix, every mode; a NaN names "the matrix"
    a = rand((2,) + shape, dtype)
    h = a + mH(a) if shape[0] == shape[1] else None
    for args in ((False, True), (True, True), (False, False)):
        want = lp.svd(a, *args)
        want = want if isinstance(want, tuple) else (want,)
        for k in range(2):
            for x in (a[k].copy(), np.asfortranarray(a[k]), a[k][::-1][::-1]):
                got = lp.svd(x, *args)
                got = got if isinstance(got, tuple) else (got,)
                for g, w in zip(got, want):
                    assert g.dtype == w.dtype and np.array_equal(g, w[k])
    if h is not None:
        for args in ((True, True), (False, True), (True, False)):
            want = lp.eigh(h, *args)
            want = want if isinstance(want, tuple) else (want,)
            for k in range(2):
                for x in (h[k].copy(), np.asfortranarray(h[k])):
                    got = lp.eigh(x, *args)
                    got = got if isinstance(got, tuple) else (got,)
                    for g, w in zip(got, want):
                        assert g.dtype == w.dtype and np.array_equal(g, w[k])
        bad = h[0].copy()
        bad[0, 0] = np.nan
        with pytest.raises(tf.LinAlgError, match="the matrix"):
            lp.eigh(bad)
    bad = a[0].copy()
    bad[0, 0] = np.nan
    with pytest.raises(tf.LinAlgError, match="the matrix"):
        lp.svd(bad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_getrf_singular_is_reported_not_raised(dtype):
    a = rand((3, 4, 4), dtype)
    a[1, :, 2] = 0                      # column 2 of matrix 1 is zero: u[2, 2] == 0
    a[2] = 0                            # all zero: first zero pivot at 1
    lu, piv, info = lp.getrf(a, return_info=True)
    np.testing.assert_array_equal(info, [0, 3, 1])
    np.testing.assert_array_equal(ref.getrf(a, return_info=True)[2], info)
    assert lu[1, 2, 2] == 0


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu(dtype, shape):
    a = rand(shape, dtype)
    p, l_, u = lp.lu(a)
    check_layouts(lp.lu, [a], (p, l_, u), dtype)
    p0, l0, u0 = ref.lu(a)
    for x, x0 in zip((p, l_, u), (p0, l0, u0)):
        assert x.shape == x0.shape and x.dtype == x0.dtype
    np.testing.assert_array_equal(p, p0)
    assert_close(l_, l0, dtype, 10)
    assert_close(u, u0, dtype, 10)
    assert_close(p @ l_ @ u, a, dtype, 10)
    assert p.dtype == np.finfo(dtype).dtype


def test_lu_singular():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    p, l_, u = lp.lu(a)
    np.testing.assert_allclose(p @ l_ @ u, a)
    assert u[1, 1] == 0


# --- potrf ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lower", [True, False])
# from side 40 on the lower factor comes from potrf('L') on a transposed copy (tiles of 8:
# 45 and 70 end in partial tiles)
@pytest.mark.parametrize("shape", SQUARE + [(39, 39), (40, 40), (2, 45, 45), (70, 70)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_potrf(dtype, shape, lower):
    g = rand(shape, dtype)
    spd = g @ mH(g) + shape[-1] * np.eye(shape[-1])
    junk = rand(shape, dtype, seed=5)
    # the unread triangle holds unrelated values
    tri = (np.tril(spd) + np.triu(junk, 1)) if lower else (np.triu(spd) + np.tril(junk, -1))
    c = lp.potrf(tri, lower)
    check_layouts(lambda x: lp.potrf(x, lower), [tri], c, dtype)
    c0 = np.linalg.cholesky(spd)
    assert c.dtype == spd.dtype and c.shape == spd.shape
    assert_close(c, c0 if lower else mH(c0), dtype, 100)
    assert_close(ref.potrf(tri, lower), c, dtype, 100)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 4, 20, 45])
@pytest.mark.parametrize("dtype", DTYPES)
def test_potrf_one_matrix_equals_stack(dtype, n, lower):
    # a single C-ordered matrix takes its own entry path: bit for bit a stack's matrix
    g = rand((2, n, n), dtype)
    spd = g @ mH(g) + n * np.eye(n)
    stack = lp.potrf(spd, lower)
    for k in range(2):
        assert np.array_equal(lp.potrf(spd[k].copy(), lower), stack[k])


@pytest.mark.parametrize("dtype", DTYPES)
def test_potrf_not_positive_definite_names_batch_index(dtype):
    a = np.broadcast_to(np.eye(3, dtype=dtype), (2, 3, 3, 3)).copy()
    a[1, 2, 1, 1] = -1
    for fn in (lp.potrf, ref.potrf):
        with pytest.raises(tf.LinAlgError, match=r"matrix \(1, 2\) of the stack is not "
                                                 r"positive definite"):
            fn(a)
    with pytest.raises(tf.LinAlgError, match="the matrix is not positive definite"):
        lp.potrf(a[1, 2])


# --- eig --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SQUARE + [(2, 6, 6)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig(dtype, shape):
    a = rand(shape, dtype)
    w, v = lp.eig(a)
    check_layouts(lp.eig, [a], (w, v), dtype)
    cdt = np.result_type(dtype, np.complex64)
    assert w.dtype == cdt and v.dtype == cdt and v.shape == a.shape
    w0 = np.linalg.eigvals(a)
    assert_close(w, w0, dtype, 100)           # same algorithm, same order
    assert_close(a @ v, v * w[..., None, :], dtype, 100)
    assert_close(np.linalg.norm(v, axis=-2), np.ones(w.shape), dtype, 10)
    assert_close(lp.eig(a, compute_v=False), w0, dtype, 100)
    wt, vt = ref.eig(a)
    assert_close(w, wt, dtype, 100)
    # numpy normalizes each vector's largest component to be real, and so does geev here
    assert_close(np.abs(v), np.abs(vt), dtype, 100)


def test_eig_real_matrix_with_complex_pairs():
    a = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])   # ±i and 2
    w, v = lp.eig(a)
    np.testing.assert_allclose(np.sort_complex(w), [-1j, 1j, 2], atol=1e-14)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-14)


# --- getrs / trtrs ----------------------------------------------------------------------------

@pytest.mark.parametrize("lu_layout", ["getrf", "c"])
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_getrs(dtype, trans, lu_layout):
    a = rand((2, 3, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    b = rand((2, 3, 4, 2), dtype, seed=1)
    lu, piv = lp.getrf(a)
    if lu_layout == "c":
        lu = np.ascontiguousarray(lu)
    x = lp.getrs(lu, piv, b, trans)
    check_layouts(lambda f, y: lp.getrs(f, piv, y, trans), [lu, b], x, dtype, 100)
    op = (a, np.swapaxes(a, -1, -2), mH(a))[trans]
    assert x.dtype == np.dtype(dtype) and x.shape == b.shape
    assert_close(op @ x, b, dtype, 100)
    assert_close(ref.getrs(lu, piv, b, trans), x, dtype, 100)


@pytest.mark.parametrize("dtype", DTYPES)
def test_getrs_broadcasts_and_promotes(dtype):
    a = rand((4, 4), np.float64) + 4 * np.eye(4)
    b = rand((3, 4, 1), dtype, seed=2)
    lu, piv = lp.getrf(a)
    x = lp.getrs(lu, piv, b)
    assert x.dtype == np.result_type(dtype, np.float64)
    assert_close(a @ x, b, dtype, 100)
    assert_close(ref.getrs(lu, piv, b), x, dtype, 100)


@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_trtrs(dtype, lower, trans, unit):
    a = rand((2, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t[..., np.arange(4), np.arange(4)] = 1
    junk = np.tril(a, -1) if not lower else np.triu(a, 1)
    b = rand((2, 4, 3), dtype, seed=1)
    x = lp.trtrs(a if not unit else t + junk, b, lower, trans, unit)
    check_layouts(lambda f, y: lp.trtrs(f, y, lower, trans, unit),
                  [a if not unit else t + junk, b], x, dtype, 100)
    op = (t, np.swapaxes(t, -1, -2), mH(t))[trans]
    assert x.dtype == np.dtype(dtype) and x.shape == b.shape
    assert_close(op @ x, b, dtype, 100)
    assert_close(ref.trtrs(a if not unit else t + junk, b, lower, trans, unit), x, dtype,
                 100)


def test_trtrs_broadcast_batches():
    a = np.triu(rand((3, 1, 4, 4), np.float64)) + 4 * np.eye(4)
    b = rand((2, 4, 2), np.float64, seed=3)
    x = lp.trtrs(a, b)
    assert x.shape == (3, 2, 4, 2)
    np.testing.assert_allclose(a @ x, np.broadcast_to(b, x.shape), atol=1e-12)
    np.testing.assert_allclose(ref.trtrs(a, b), x, atol=1e-12)


def test_trtrs_singular_names_batch_index():
    a = np.broadcast_to(np.eye(3), (2, 3, 3)).copy()
    a[1, 2, 2] = 0
    for fn in (lp.trtrs, ref.trtrs):
        with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack is singular"):
            fn(a, np.ones((2, 3, 1)))


def test_bad_trans_raises():
    a = np.eye(2)
    lu, piv = lp.getrf(a)
    for fn, args in ((lp.getrs, (lu, piv)), (ref.getrs, (lu, piv)), (lp.trtrs, (a,)),
                     (ref.trtrs, (a,))):
        with pytest.raises(ValueError, match="trans must be 0, 1 or 2"):
            fn(*args, np.ones((2, 1)), trans=3)


@pytest.mark.parametrize("n,k", [(1, 1), (4, 2), (16, 3), (40, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_getrs_one_matrix_equals_stack(dtype, n, k):
    # a single matrix and right-hand side (any strides, int32 pivots) take their own
    # entry path: bit for bit a stack's matrix, with the outer product −X Yᴴ (n <= 16)
    a = rand((2, n, n), dtype) + n * np.eye(n, dtype=dtype)
    b, y = rand((2, n, k), dtype, seed=1), rand((2, n, k), dtype, seed=2)
    lu, piv = lp.getrf(a)
    for trans in (0, 1, 2):
        x = lp.getrs(lu, piv, b, trans)
        xo, o = (lp.getrs(lu, piv, b, trans, outer=y) if n <= 16 else (x, None))
        for j in range(2):
            for lay in ((lambda v: v), np.ascontiguousarray, np.asfortranarray):
                got = lp.getrs(lay(lu[j]), piv[j], lay(b[j]), trans)
                assert got.shape == (n, k) and np.array_equal(got, x[j])
                if o is not None:
                    g1, g2 = lp.getrs(lay(lu[j]), piv[j], lay(b[j]), trans, outer=y[j])
                    assert np.array_equal(g1, xo[j]) and np.array_equal(g2, o[j])
    bad = piv[0].copy()
    bad[0] = n             # a 1-based pivot: LAPACK would index past the matrix
    with pytest.raises(ValueError, match="pivots of the matrix"):
        lp.getrs(lu[0], bad, b[0])


def test_getrs_rejects_pivots_out_of_range():
    lu, piv = lp.getrf(np.stack([np.eye(3) + 1] * 2))
    bad = piv.copy()
    bad[1, 0] = 3          # a 1-based pivot: LAPACK would index past the matrix
    with pytest.raises(ValueError, match=r"pivots of matrix \(1,\) of the stack"):
        lp.getrs(lu, bad, np.ones((2, 3, 1)))


# --- 0-size -----------------------------------------------------------------------------------

EMPTY = [(0, 3, 3), (2, 0, 0), (0, 3), (3, 0), (2, 0, 3)]


@pytest.mark.parametrize("shape", EMPTY)
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_empty(dtype, shape):
    a = np.zeros(shape, dtype)
    for full in (False, True):
        for x, x0 in zip(lp.svd(a, full), np.linalg.svd(a, full_matrices=full)):
            assert x.shape == x0.shape and x.dtype == x0.dtype
            np.testing.assert_array_equal(x, x0)     # identities for full_matrices
    for mode in ("reduced", "complete"):
        for x, x0 in zip(lp.qr(a, mode), np.linalg.qr(a, mode=mode)):
            assert x.shape == x0.shape and x.dtype == x0.dtype
            np.testing.assert_array_equal(x, x0)
    m, n = shape[-2:]
    k = min(m, n)
    p, l_, u = lp.lu(a)
    assert (p.shape, l_.shape, u.shape) == (shape[:-2] + (m, m), shape[:-2] + (m, k),
                                            shape[:-2] + (k, n))
    np.testing.assert_array_equal(p, np.broadcast_to(np.eye(m), p.shape))
    lu, piv, info = lp.getrf(a, return_info=True)
    assert lu.shape == shape and piv.shape == shape[:-2] + (k,) and info.shape == shape[:-2]
    if m == n:
        w, v = lp.eigh(a)
        assert w.shape == shape[:-1] and v.shape == shape and w.dtype == np.finfo(dtype).dtype
        w, v = lp.eig(a)
        assert w.shape == shape[:-1] and v.dtype == np.result_type(dtype, np.complex64)
        assert lp.potrf(a).shape == shape
        b = np.zeros(shape[:-1] + (2,), dtype)
        assert lp.getrs(lu, piv, b).shape == b.shape
        assert lp.trtrs(a, b).shape == b.shape
        assert ref.getrs(lu, piv, b).shape == b.shape
        assert ref.trtrs(a, b).shape == b.shape


def test_empty_right_hand_side():
    a = np.eye(3)
    lu, piv = lp.getrf(a)
    assert lp.getrs(lu, piv, np.zeros((3, 0))).shape == (3, 0)
    assert lp.trtrs(a, np.zeros((0, 3, 2))).shape == (0, 3, 2)


# --- non-finite input, dtypes, odd strides ----------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_input(dtype):
    """LAPACK sees NaN only with check_finite=False: the iterative drivers raise naming
    the matrix, the direct ones propagate NaN. Nothing crashes or hangs."""
    a = rand((2, 3, 3), dtype) + 3 * np.eye(3, dtype=dtype)
    a[1, 1, 1] = np.nan
    calls = [lambda x: lp.svd(x), lambda x: lp.svd(x, compute_uv=False),
             lambda x: lp.svd(x, True), lambda x: lp.eigh(x), lambda x: lp.eig(x),
             lambda x: lp.eig(x, compute_v=False)]
    for call in calls:
        with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack has a "
                                                 r"non-finite entry"):
            call(a)
    for twin in (ref.svd, ref.eigh, ref.eig):
        with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\) of the stack"):
            twin(a)
    a[1, 1, 1] = np.inf
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        lp.svd(a[1])
    a[1, 1, 1] = np.nan
    q, r = lp.qr(a)
    assert np.isfinite(r[0]).all() and np.isnan(r[1]).any()
    lu, piv = lp.getrf(a)
    assert np.isnan(lu[1]).any()
    x = lp.getrs(lu, piv, np.ones((2, 3, 1), dtype))
    assert np.isfinite(x[0]).all() and np.isnan(x[1]).any()
    assert np.isnan(lp.trtrs(a, np.ones((2, 3, 1), dtype))[1]).any()
    assert np.isnan(lp.lu(a)[2][1]).any()
    try:    # potrf may stop at the NaN pivot or carry it through (OpenBLAS does)
        c = lp.potrf(a)
    except tf.LinAlgError as e:
        assert "matrix (1,) of the stack" in str(e)
    else:
        assert np.isfinite(c[0]).all() and np.isnan(c[1]).any()


def test_integer_input_is_float64_and_unsupported_dtypes_raise():
    a = np.array([[2, 1], [1, 3]])
    assert lp.svd(a)[1].dtype == np.float64
    np.testing.assert_allclose(lp.potrf(a), np.linalg.cholesky(a.astype(float)))
    assert ref.svd(a)[1].dtype == np.float64
    for dt in (np.float16, np.longdouble, object):
        for fn in (lp.svd, ref.svd, lp.eigh, lp.qr, lp.getrf, lp.potrf, lp.eig):
            with pytest.raises(tf.DTypeError, match="float32, float64"):
                fn(a.astype(dt))


def test_non_native_byte_order():
    a = rand((3, 3), np.float64).astype(">f8")
    np.testing.assert_allclose(lp.svd(a)[1], np.linalg.svd(a.astype("<f8"))[1])


def test_strides_not_a_multiple_of_the_item_size():
    """complex128 entries 8 bytes apart (a valid but odd view): copied, then solved."""
    base = np.random.default_rng(0).standard_normal(64)
    c = np.lib.stride_tricks.as_strided(base.view(np.complex128), shape=(2, 3, 3),
                                        strides=(200, 40, 8))
    dense = np.array(c)
    np.testing.assert_allclose(lp.svd(c)[1], np.linalg.svd(dense)[1])
    np.testing.assert_allclose(lp.qr(c)[1], np.linalg.qr(dense)[1])
    np.testing.assert_allclose(lp.eig(c, compute_v=False), np.linalg.eigvals(dense))
    b = np.lib.stride_tricks.as_strided(base.view(np.complex128), shape=(2, 3, 1),
                                        strides=(200, 40, 8))
    t = np.triu(dense) + 30 * np.eye(3)
    np.testing.assert_allclose(t @ lp.trtrs(t, b), np.array(b), atol=1e-10)
    lu, piv = lp.getrf(c)
    np.testing.assert_allclose(dense @ lp.getrs(lu, piv, b), np.array(b), atol=1e-8)


@pytest.mark.parametrize("fn", ["svd", "eigh", "qr", "getrf", "lu", "potrf", "eig"])
def test_input_not_modified_and_batch_equals_loop(fn):
    a = rand((3, 4, 4), np.complex128)
    a = a @ mH(a) + 4 * np.eye(4)         # Hermitian positive definite: fits every driver
    keep = a.copy()
    out = getattr(lp, fn)(a)
    np.testing.assert_array_equal(a, keep)
    out = out if isinstance(out, tuple) else (out,)
    for i in range(3):
        one = getattr(lp, fn)(a[i])
        one = one if isinstance(one, tuple) else (one,)
        for x, y in zip(out, one):
            np.testing.assert_array_equal(x[i], y)


def test_getrs_trtrs_do_not_modify_operands():
    a = rand((2, 3, 3), np.float64) + 3 * np.eye(3)
    b = rand((2, 3, 2), np.float64, seed=1)
    lu, piv = lp.getrf(a)
    keep = [x.copy() for x in (a, b, lu, piv)]
    lp.getrs(lu, piv, b, 1)
    lp.trtrs(a, b, lower=True, trans=2)
    for x, y in zip((a, b, lu, piv), keep):
        np.testing.assert_array_equal(x, y)


def test_linalg_api_is_the_compiled_kernel():
    from tenferro.linalg import _lapack
    expected = ref if kernels.PURE_PYTHON else lp
    for name in _lapack.__all__:
        assert getattr(_lapack, name) is getattr(expected, name)
        assert getattr(ref, name).__name__ == name


def test_pure_python_mode_uses_the_twins(tmp_path):
    code = ("from tenferro.linalg import _lapack as l; from tenferro._kernels import "
            "lapack_eig_twin as e, lapack_qr_twin as q, lapack_lu_chol_twin as u; "
            "assert all(getattr(l, n) is getattr(r, n, None) for r in (e, q, u) "
            "for n in r.__all__); assert sorted(l.__all__) == sorted(e.__all__ + q.__all__ "
            "+ u.__all__); import numpy as np; print(l.svd(np.eye(2))[1].sum())")
    env = dict(os.environ, TENFERRO_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=tmp_path)   # not the source tree
    assert out.stdout.strip() == "2.0"


# --- gelsd ----------------------------------------------------------------------------------

GELSD_SHAPES = [((6, 3), 2), ((4, 4), 1), ((3, 5), 2), ((2, 3, 5, 3), 1), ((2, 3, 5), 4)]


def _np_lstsq_loop(a, b, rcond):
    """numpy.linalg.lstsq per matrix: (x, rank, s)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, n = a.shape[-2:]
    k = b.shape[-1]
    fa = np.broadcast_to(a, batch + (m, n)).reshape((-1, m, n))
    fb = np.broadcast_to(b, batch + (m, k)).reshape((-1, m, k))
    out = [np.linalg.lstsq(x, y, rcond=rcond) for x, y in zip(fa, fb)]
    return (np.stack([o[0] for o in out]).reshape(batch + (n, k)),
            np.array([o[2] for o in out]).reshape(batch),
            np.stack([o[3] for o in out]).reshape(batch + (min(m, n),)))


@pytest.mark.parametrize("shape,k", GELSD_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_gelsd(dtype, shape, k):
    a = rand(shape, dtype)
    b = rand(shape[:-1] + (k,), dtype, seed=1)
    x, rank, s = lp.gelsd(a, b, -1.0)
    m, n = shape[-2:]
    batch = shape[:-2]
    assert x.shape == batch + (n, k) and x.dtype == dtype
    assert rank.shape == batch and rank.dtype == np.int64
    assert s.shape == batch + (min(m, n),) and s.dtype == np.finfo(dtype).dtype
    np.testing.assert_array_equal(rank, min(m, n))
    # numpy computes in the same precision for these dtypes
    x0, r0, s0 = _np_lstsq_loop(a, b, None)
    assert_close(x, x0, dtype, 10)
    assert_close(s, s0, dtype, 10)
    # the twin is scipy's gelsd: the same LAPACK routine on the same data
    xr, rr, sr = ref.gelsd(a, b, -1.0)
    assert_close(x, xr, dtype)
    np.testing.assert_array_equal(rank, rr)
    assert_close(s, sr, dtype)
    # normal equations: aᴴ(b − a x) = 0
    assert_close(mH(a) @ (b - a @ x), 0, dtype, 100)
    check_layouts(lambda u, v: lp.gelsd(u, v, -1.0), [a, b], (x, rank, s), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gelsd_rank_deficient_and_rcond(dtype):
    # a = u diag(3, 1, 1e-3, 0) vᴴ (6 x 4), a stack of two
    u = np.linalg.qr(rand((2, 6, 4), dtype))[0]
    v = np.linalg.qr(rand((2, 4, 4), dtype, seed=2))[0]
    a = (u * np.array([3.0, 1.0, 1e-3, 0.0], dtype)) @ mH(v)
    b = rand((2, 6, 3), dtype, seed=3)
    for rcond, expected in ((-1.0, 3), (1e-2, 2), (0.5, 1)):
        x, rank, s = lp.gelsd(a, b, rcond)
        np.testing.assert_array_equal(rank, expected)
        assert_close(s, np.array([3.0, 1.0, 1e-3, 0.0]), dtype, 10)
        xr, rr, _ = ref.gelsd(a, b, rcond)
        np.testing.assert_array_equal(rank, rr)
        # the minimum-norm solution: A⁺b with the kept singular values only
        keep = np.arange(4) < expected
        sinv = np.where(keep, 1 / np.where(keep, [3.0, 1.0, 1e-3, 1.0], 1), 0)
        xp = (v * sinv.astype(dtype)) @ (mH(u) @ b)
        assert_close(x, xp, dtype, 1e4 if expected == 3 else 10)
        assert_close(xr, xp, dtype, 1e4 if expected == 3 else 10)


def test_gelsd_broadcasts_promotes_and_vector_column():
    a = rand((3, 5, 2), np.float32)
    b = rand((5, 1), np.complex128, seed=1)
    x, rank, s = lp.gelsd(a, b, -1.0)
    assert x.shape == (3, 2, 1) and x.dtype == np.complex128 and s.dtype == np.float64
    x0 = np.stack([np.linalg.lstsq(m.astype(np.complex128), b, rcond=None)[0] for m in a])
    assert_close(x, x0, np.complex128)
    x1, r1, s1 = lp.gelsd(np.arange(6).reshape(3, 2), np.ones((3, 1), int), -1.0)
    assert x1.dtype == np.float64 and r1.shape == () and int(r1) == 2


# empty least-squares problems (a of this shape, k right-hand sides) for gelsd and lstsq_qr
LSTSQ_EMPTY = [((0, 3, 2), 1), ((4, 0), 2), ((0, 4), 2), ((2, 0, 3), 1), ((4, 3), 0),
               ((2, 4, 3), 0)]


def lstsq_empty_operands(shape, k):
    """complex64 (a, b) of an LSTSQ_EMPTY case, with m, n and the batch shape."""
    a = rand(shape, np.complex64)
    b = rand(shape[:-1] + (k,), np.complex64, seed=1)
    return a, b, shape[-2], shape[-1], shape[:-2]


@pytest.mark.parametrize("shape,k", LSTSQ_EMPTY)
@pytest.mark.parametrize("mod", [lp, ref])
def test_gelsd_empty(mod, shape, k):
    a, b, m, n, batch = lstsq_empty_operands(shape, k)
    x, rank, s = mod.gelsd(a, b, -1.0)
    assert x.shape == batch + (n, k) and x.dtype == np.complex64
    assert rank.shape == batch and rank.dtype == np.int64
    assert s.shape == batch + (min(m, n),) and s.dtype == np.float32
    if a.size:   # k = 0: rank and singular values are still those of a
        np.testing.assert_array_equal(rank, min(m, n))
        assert_close(s, np.linalg.svd(a, compute_uv=False), np.complex64)


@pytest.mark.parametrize("name", ["gelsd", "lstsq_qr"])
@pytest.mark.parametrize("mod", [lp, ref])
def test_lstsq_non_finite_names_batch_index_and_leaves_operands(mod, name):
    fn = getattr(mod, name)
    a = np.ones((2, 3, 4, 2))
    a[1, 2, 3, 0] = np.inf
    with pytest.raises(tf.LinAlgError, match=r"converge.*matrix \(1, 2\) of the stack"):
        fn(a, np.ones((4, 1)), -1.0)
    with pytest.raises(ValueError, match=f"{name}: shapes .* do not fit"):
        fn(np.ones((4, 2)), np.ones((3, 1)), -1.0)
    for m, n in ((5, 3), (3, 5)):
        a, b = rand((2, m, n), np.complex128), rand((2, m, 2), np.complex128, seed=1)
        keep = a.copy(), b.copy()
        fn(a, b, -1.0)
        np.testing.assert_array_equal(a, keep[0])
        np.testing.assert_array_equal(b, keep[1])


# --- lstsq_qr: QR least squares, gelsd for the rank-deficient --------------------------------

LSTSQ_QR_SHAPES = GELSD_SHAPES + [((1, 1), 1), ((7, 1), 2), ((1, 6), 1), ((9, 2, 6), 3)]


@pytest.mark.parametrize("shape,k", LSTSQ_QR_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq_qr(dtype, shape, k):
    a = rand(shape, dtype)
    b = rand(shape[:-1] + (k,), dtype, seed=1)
    m, n = shape[-2:]
    p = min(m, n)
    batch = shape[:-2]
    x, rank, s, res, r = out = lp.lstsq_qr(a, b, -1.0)
    assert x.shape == batch + (n, k) and x.dtype == dtype and r.dtype == dtype
    assert rank.shape == batch and rank.dtype == np.int64
    rdt = np.finfo(dtype).dtype
    assert s.shape == batch + (p,) and s.dtype == rdt and res.dtype == rdt
    assert res.shape == batch + (k,) and r.shape == batch + (p, p)
    # gelsd's results (the same minimum-norm x, rank and singular values)
    x0, r0, s0 = lp.gelsd(a, b, -1.0)
    np.testing.assert_array_equal(rank, r0)
    assert_close(x, x0, dtype, 10)
    assert_close(s, s0, dtype, 10)
    # residuals: |b − a x|² per column where m > n, else 0
    res0 = np.sum(np.abs(b - a @ x) ** 2, axis=-2) if m > n else 0
    assert_close(res, res0, dtype, 10)
    # r: upper triangular, the factor of a = QR (of aᴴ = QR when wide): rᴴr = aᴴa (aaᴴ)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    gram = mH(a) @ a if m >= n else a @ mH(a)
    assert_close(mH(r) @ r, gram, dtype, 100)
    for got, want in zip(out, ref.lstsq_qr(a, b, -1.0)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_close(got, want, dtype, 10)
    check_layouts(lambda u, v: lp.lstsq_qr(u, v, -1.0), [a, b], out, dtype, 100)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq_qr_rank_deficient_and_rcond_like_gelsd(dtype):
    # a = u diag(3, 1, 1e-3, 0) vᴴ: the rank (gelsd's rule, including rcond <= 0 and
    # rcond >= 1 meaning machine precision) and, below full rank, gelsd's solution; in a
    # stack with a full-rank matrix (s = 3, 2.5, 2, 1.6), tall and wide
    u = np.linalg.qr(rand((2, 6, 4), dtype))[0]
    v = np.linalg.qr(rand((2, 4, 4), dtype, seed=2))[0]
    a = (u * np.array([[3.0, 1.0, 1e-3, 0.0], [3.0, 2.5, 2.0, 1.6]], dtype)[:, None]) @ mH(v)
    b = rand((2, 6, 3), dtype, seed=3)
    for aa, bb in ((a, b), (mH(a), b[..., :4, :])):
        for rcond in (-1.0, 0.0, 1e-2, 0.5, 1.0, 2.0):
            x, rank, s, res, _ = lp.lstsq_qr(aa, bb, rcond)
            x0, r0, s0 = lp.gelsd(aa, bb, rcond)
            np.testing.assert_array_equal(rank, r0)
            assert rank[1] == 4 and rank[0] < 4
            assert_close(x, x0, dtype, 10)
            assert_close(s, s0, dtype, 10)
            assert not res[0].any()           # no residuals below full column rank
            xr, rr, sr, resr, _ = ref.lstsq_qr(aa, bb, rcond)
            np.testing.assert_array_equal(rr, r0)
            assert_close(xr, x0, dtype, 10)


@pytest.mark.parametrize("shape,k", LSTSQ_EMPTY)
@pytest.mark.parametrize("mod", [lp, ref])
def test_lstsq_qr_empty(mod, shape, k):
    a, b, m, n, batch = lstsq_empty_operands(shape, k)
    p = min(m, n)
    x, rank, s, res, r = mod.lstsq_qr(a, b, -1.0)
    assert x.shape == batch + (n, k) and x.dtype == np.complex64 and not x.any()
    assert rank.shape == batch and rank.dtype == np.int64
    assert s.shape == batch + (p,) and s.dtype == np.float32
    assert res.shape == batch + (k,) and r.shape == batch + (p, p)
    if a.size:   # k = 0: rank, singular values and r are still those of a
        np.testing.assert_array_equal(rank, p)
        assert_close(s, np.linalg.svd(a, compute_uv=False), np.complex64)
        assert_close(mH(r) @ r, mH(a) @ a, np.complex64)


def test_lstsq_qr_ill_conditioned_full_rank_like_gelsd():
    # cond(a) = 1e10, full rank: QR least squares is backward stable, like gelsd's SVD,
    # so both solutions have forward errors of the order cond·eps (and agree to that),
    # and both leave residuals orthogonal to range(a)
    rng = np.random.default_rng(7)
    u = np.linalg.qr(rng.standard_normal((40, 12)))[0]
    v = np.linalg.qr(rng.standard_normal((12, 12)))[0]
    a = (u * np.logspace(0, -10, 12)) @ v.T
    xt = rng.standard_normal((12, 2))
    b = a @ xt + 1e-3 * rng.standard_normal((40, 2))
    x, rank, s, res, _ = lp.lstsq_qr(a, b, -1.0)
    x0, r0, s0 = lp.gelsd(a, b, -1.0)
    assert rank == r0 == 12
    rel = np.linalg.norm(x - x0) / np.linalg.norm(x0)
    assert rel < 1e10 * 1e-16 * 100
    np.testing.assert_allclose(s, s0, rtol=1e-12, atol=1e-14)
    # the residuals, and the normal equations aᵀ(b − a x) = 0 to the backward-stable
    # bound eps·|a|·|x| (x ~ 1e7 here), as gelsd's solution satisfies them
    r = b - a @ x
    np.testing.assert_allclose(res, np.sum(r * r, axis=0), rtol=1e-6)
    for sol in (x, x0):
        assert np.abs(a.T @ (b - a @ sol)).max() < 100 * 2.2e-16 * np.linalg.norm(sol)


# --- pinv_qr: pseudo-inverse of full-rank matrices through QR --------------------------------

@pytest.mark.parametrize("shape", SHAPES + [(1, 1), (1, 4), (6, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_qr(dtype, shape):
    a = rand(shape, dtype)
    x, full = lp.pinv_qr(a, 1e-6)
    assert x.shape == shape[:-2] + shape[::-1][:2] and x.dtype == dtype
    assert full.shape == shape[:-2] and full.dtype == bool and full.all()
    assert_close(x, np.linalg.pinv(a), dtype, 10)
    xr, fr = ref.pinv_qr(a, 1e-6)
    np.testing.assert_array_equal(fr, full)
    assert_close(x, xr, dtype, 10)
    check_layouts(lambda u: lp.pinv_qr(u, 1e-6), [a], (x, full), dtype)


@pytest.mark.parametrize("mod", [lp, ref])
def test_pinv_qr_cut_per_matrix_non_finite_and_empty(mod):
    # s = (3, 1, 1e-3, 1e-5): full for rtol below 1e-5/3 only; rtol per matrix
    u = np.linalg.qr(rand((2, 6, 4), np.float64))[0]
    v = np.linalg.qr(rand((2, 4, 4), np.float64, seed=2))[0]
    a = (u * np.array([3.0, 1.0, 1e-3, 1e-5])) @ mH(v)
    for rtol, expected in ((1e-6, [True, True]), (1e-5, [False, False]),
                           (np.array([1e-6, 1e-5]), [True, False]), (1.0, [False, False])):
        x, full = mod.pinv_qr(a, rtol)
        np.testing.assert_array_equal(full, expected)
        assert_close(x[full], np.linalg.pinv(a)[full], np.float64, 1e7)
    a[1, 0, 0] = np.nan                       # reported not full, for the SVD to reject
    np.testing.assert_array_equal(mod.pinv_qr(a, 1e-8)[1], [True, False])
    for shape in ((0, 3, 2), (4, 0), (2, 0, 3)):
        x, full = mod.pinv_qr(np.zeros(shape, np.complex64), 1e-6)
        assert x.shape == shape[:-2] + shape[::-1][:2] and x.dtype == np.complex64
        assert full.shape == shape[:-2]


# The copy of an input into LAPACK's Fortran buffer is done in 32 x 32 tiles when it
# transposes (a C-ordered or strided A): shapes with several tiles and partial last tiles.
# The same values reach LAPACK whatever the layout, so the results are bit-identical.
TILED = [(70, 45), (45, 70), (2, 37, 37), (33, 33)]


@pytest.mark.parametrize("shape", TILED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tiled_copies_are_exact_for_every_layout(dtype, shape):
    a = rand(shape, dtype, seed=3)
    square = a[..., :min(shape[-2:]), :min(shape[-2:])]
    herm = square + mH(square)
    calls = [(lambda x: lp.qr(x, "reduced"), a), (lambda x: lp.getrf(x), a),
             (lambda x: lp.eigh(x, True), herm), (lambda x: lp.eigh(x, False), herm)]
    for fn, x in calls:
        expect = fn(np.ascontiguousarray(x))
        expect = expect if isinstance(expect, tuple) else (expect,)
        for kind in LAYOUTS[1:]:
            got = fn(layout(x, kind))
            got = got if isinstance(got, tuple) else (got,)
            for g, e in zip(got, expect):
                np.testing.assert_array_equal(g, e)
