"""The plain-loop path of the kernels for small matrices (tenferro/_kernels/_small.pxd:
potrf, getrf, getrs of lapack_lu_chol.pyx and the row-major products and solves of
triangular_backprop.pyx's Cholesky backprop) against the LAPACK/BLAS path
(``_set_small(0)``) and the NumPy twins, with the same errors, and split over threads
although level-3 BLAS calls are not."""
import numpy as np
import pytest

import tenferro as tf
from tenferro import _threads
from tenferro._kernels import inverse as inv
from tenferro._kernels import lapack_lu_chol as lp
from tenferro._kernels import lapack_lu_chol_twin as lapack_twin
from tenferro._kernels import lapack_qr as lq
from tenferro._kernels import triangular_backprop as tr
from tenferro._kernels import triangular_backprop_twin as triangular_twin

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SIDES = [1, 2, 3, 5, 8, 13, 16]


def rand(shape, dtype, rng):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def spd(nb, n, dtype, rng):
    a = rand((nb, n, n), dtype, rng)
    return (a @ a.conj().swapaxes(-1, -2) + n * np.eye(n)).astype(dtype)


def tol(dtype, scale=30):
    return scale * np.finfo(dtype).eps


@pytest.fixture
def lapack_path():
    """Run a block on the LAPACK/BLAS path: ``with lapack_path(): ...``."""
    class Ctx:
        def __enter__(self):
            self.old = lp._set_small(0), tr._set_small(0), inv._set_small(0)

        def __exit__(self, *exc):
            lp._set_small(self.old[0])
            tr._set_small(self.old[1])
            inv._set_small(self.old[2])
    return Ctx


def test_small_path_is_the_default_up_to_16():
    old = lp._set_small(0)
    assert old == 16
    assert lp._set_small(old) == 0
    old = tr._set_small(100)                     # capped by the loops' stack buffers
    assert tr._set_small(old) == 32


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIDES)
@pytest.mark.parametrize("lower", [True, False])
def test_potrf(dtype, n, lower, lapack_path):
    rng = np.random.default_rng(n)
    a = spd(5, n, dtype, rng)
    small = lp.potrf(a, lower)
    with lapack_path():
        ref = lp.potrf(a, lower)
    np.testing.assert_allclose(small, ref, rtol=tol(dtype), atol=tol(dtype))
    np.testing.assert_allclose(small, lapack_twin.potrf(a, lower), rtol=tol(dtype),
                               atol=tol(dtype))
    other = np.triu(small, 1) if lower else np.tril(small, -1)
    assert not other.any()                       # the other triangle is zero


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (8, 8), (16, 16), (7, 4), (4, 7),
                                   (16, 3), (2, 16)])
def test_getrf_same_pivots_as_lapack(dtype, shape, lapack_path):
    rng = np.random.default_rng(sum(shape))
    a = rand((6,) + shape, dtype, rng)
    a[1, :, 0] = 0                               # a zero first column: zero pivot
    lu, piv, info = lp.getrf(a, return_info=True)
    with lapack_path():
        lu0, piv0, info0 = lp.getrf(a, return_info=True)
    np.testing.assert_array_equal(piv, piv0)
    np.testing.assert_array_equal(info, info0)
    assert info[1] == 1
    np.testing.assert_allclose(lu, lu0, rtol=tol(dtype, 100), atol=tol(dtype, 100))
    tlu, tpiv = lapack_twin.getrf(a)
    np.testing.assert_array_equal(piv, tpiv)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("small", [True, False])
def test_lu_det_factors_are_getrf_bitwise(dtype, small, lapack_path):
    """det's fused forward (inverse.lu_det) and lapack_lu_chol.getrf give the same bits on
    both paths: det's pullback refactors with getrf and must see the same factors."""
    rng = np.random.default_rng(3)
    for n in (1, 4, 9, 16, 17):
        a = rand((3, n, n), dtype, rng)
        if n > 2:
            a[1, 2] = a[1, 0]                    # exactly singular
        if small:
            got, lu = inv.lu_det(a, 0.0), lp.getrf(a)
        else:
            with lapack_path():
                got, lu = inv.lu_det(a, 0.0), lp.getrf(a)
        assert got[0].tobytes() == lu[0].tobytes() and got[0].strides == lu[0].strides
        np.testing.assert_array_equal(got[1], lu[1])


def test_getrf_pivot_is_the_first_largest_entry():
    # |re| + |im| as LAPACK's izamax measures it: 3 + 0j and 2 + 2j tie at... no: 3 < 4
    a = np.array([[1, 0], [3, 1], [-3, 2]], float).T.copy().T   # column 0: 1, 3, -3
    _, piv = lp.getrf(a)
    assert piv[0] == 1                           # the first of the two largest |a|
    z = np.array([[1, 0], [3 + 0j, 1], [2 + 2j, 1]])
    _, piv = lp.getrf(z)
    assert piv[0] == 2                           # |2| + |2| = 4 > 3


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIDES)
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_getrs(dtype, n, trans, lapack_path):
    rng = np.random.default_rng(10 * n + trans)
    a = rand((4, n, n), dtype, rng) + 2 * n * np.eye(n, dtype=dtype)
    b = rand((4, n, 3), dtype, rng)
    lu, piv = lp.getrf(a)
    x = lp.getrs(lu, piv, b, trans)
    with lapack_path():
        x0 = lp.getrs(lu, piv, b, trans)
    np.testing.assert_allclose(x, x0, rtol=tol(dtype), atol=tol(dtype))
    np.testing.assert_allclose(x, lapack_twin.getrs(lu, piv, b, trans), rtol=tol(dtype),
                               atol=tol(dtype))
    op = a if trans == 0 else (a.swapaxes(-1, -2) if trans == 1 else a.conj().swapaxes(-1, -2))
    np.testing.assert_allclose(op @ x, b, rtol=tol(dtype, 300), atol=tol(dtype, 300))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIDES)
def test_cholesky_backprop(dtype, n, lapack_path):
    rng = np.random.default_rng(n)
    l = lp.potrf(spd(5, n, dtype, rng))
    gl = rand((5, n, n), dtype, rng)
    g = tr.cholesky_backprop(l, gl)
    with lapack_path():
        g0 = tr.cholesky_backprop(l, gl)
    np.testing.assert_allclose(g, g0, rtol=tol(dtype, 100), atol=tol(dtype, 100))
    np.testing.assert_allclose(g, triangular_twin.cholesky_backprop(l, gl),
                               rtol=tol(dtype, 100), atol=tol(dtype, 100))


def test_qr_small_is_8():
    assert tr._set_qr_small(0) == 8
    assert tr._set_qr_small(100) == 0             # capped by the loops' stack buffers
    assert tr._set_qr_small(8) == 32


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, n", [(1, 1), (3, 3), (5, 2), (8, 8), (8, 5), (9, 4), (9, 9)])
@pytest.mark.parametrize("which", ["both", "gq", "gr"])
def test_qr_backprop_loops_agree_with_blas(dtype, m, n, which):
    """Up to QR_SMALL (max(m, n) <= 8) the QR backprop runs plain loops; beyond it, and
    with _set_qr_small(0) always, BLAS. Both agree with each other and the twin."""
    rng = np.random.default_rng(m * 10 + n)
    q, r = lq.qr(rand((6, m, n), dtype, rng))
    r = r + 2 * np.eye(n, dtype=dtype)             # well away from singular
    gq = rand(q.shape, dtype, rng) if which != "gr" else None
    gr = np.triu(rand(r.shape, dtype, rng)) if which != "gq" else None
    g = tr.qr_backprop(q, r, gq, gr)
    old = tr._set_qr_small(0)
    try:
        g0 = tr.qr_backprop(q, r, gq, gr)
    finally:
        tr._set_qr_small(old)
    twin = triangular_twin.qr_backprop(q, r, gq, gr)
    np.testing.assert_allclose(g, g0, rtol=tol(dtype, 300), atol=tol(dtype, 300))
    np.testing.assert_allclose(g, twin, rtol=tol(dtype, 300), atol=tol(dtype, 300))
    if max(m, n) > 8:
        np.testing.assert_array_equal(g, g0)       # the same BLAS path


@pytest.mark.parametrize("n", [8, 16])
def test_cholesky_backprop_block_recursion(n, lapack_path):
    """n > CHOL_NB recurses (gemm, trsm on off-diagonal blocks); leaf 1 goes through
    every product of the recursion down to 1 x 1 blocks."""
    rng = np.random.default_rng(0)
    l = lp.potrf(spd(3, n, np.complex128, rng))
    gl = rand((3, n, n), np.complex128, rng)
    old = tr._set_chol_block(1)
    try:
        g = tr.cholesky_backprop(l, gl)
        with lapack_path():
            g0 = tr.cholesky_backprop(l, gl)
    finally:
        tr._set_chol_block(old)
    np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-12)


def test_not_positive_definite_same_error_and_index(lapack_path):
    rng = np.random.default_rng(0)
    a = spd(40, 6, np.float64, rng)
    a[17, 3, 3] = -1.0                           # minor of order 4 not positive
    a[29, 0, 0] = np.nan                         # a later NaN: not the first failure
    with pytest.raises(tf.LinAlgError) as small:
        lp.potrf(a.reshape(4, 10, 6, 6))
    with lapack_path(), pytest.raises(tf.LinAlgError) as ref:
        lp.potrf(a.reshape(4, 10, 6, 6))
    assert str(small.value) == str(ref.value)
    assert "matrix (1, 7)" in str(small.value) and "order 4" in str(small.value)


@pytest.mark.parametrize("lower", [True, False])
def test_potrf_propagates_nan_like_lapack(lower, lapack_path):
    """A NaN in the triangle read gives NaN entries, no error, as OpenBLAS's ?potrf."""
    a = spd(2, 5, np.float64, np.random.default_rng(1))
    i, j = (3, 1) if lower else (1, 3)           # in the triangle that is read
    a[1, i, j] = np.nan
    small = lp.potrf(a, lower)
    with lapack_path():
        ref = lp.potrf(a, lower)
    np.testing.assert_array_equal(np.isnan(small), np.isnan(ref))
    assert np.isfinite(small[0]).all() and np.isnan(small[1]).any()


def test_getrf_propagates_nan():
    a = np.random.default_rng(2).standard_normal((2, 5, 5))
    a[1, 2, 3] = np.nan
    lu, piv = lp.getrf(a)
    assert np.isfinite(lu[0]).all() and np.isnan(lu[1]).any()


def test_singular_solve_is_inf_or_nan_like_lapack(lapack_path):
    a = np.ones((1, 3, 3))
    lu, piv, info = lp.getrf(a, return_info=True)
    assert info[0] == 2
    x = lp.getrs(lu, piv, np.ones((1, 3, 1)))
    with lapack_path():
        x0 = lp.getrs(lu, piv, np.ones((1, 3, 1)))
    np.testing.assert_array_equal(np.isfinite(x), np.isfinite(x0))
    assert not np.isfinite(x).all()


def _count_threads(monkeypatch):
    """No work threshold, BLAS3_LOCKED as it is; the list of thread counts that the
    kernels' calls of tenferro._threads._threads_for return from now on."""
    assert _threads.BLAS3_LOCKED
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    counts = []
    real = _threads._threads_for

    def spy(*args, **kwargs):
        counts.append(real(*args, **kwargs))
        return counts[-1]
    monkeypatch.setattr(_threads, "_threads_for", spy)
    return counts


@pytest.mark.parametrize("n, split", [(8, True), (16, True), (17, False)])
def test_small_stacks_are_split_although_blas3_is_locked(monkeypatch, n, split):
    """Up to SMALL no BLAS call runs, so BLAS3_LOCKED does not keep these kernels serial;
    the results are bit-identical for 1 and 2 threads."""
    counts = _count_threads(monkeypatch)
    rng = np.random.default_rng(n)
    a = spd(64, n, np.float64, rng)
    g = rand((64, n, n), np.float64, rng)
    b = rand((64, n, 2), np.float64, rng)

    def run():
        l = lp.potrf(a)
        lu, piv = lp.getrf(a)
        return l, lu, piv, lp.getrs(lu, piv, b, 2), tr.cholesky_backprop(l, g)
    with tf.num_threads(1):
        one = run()
    counts.clear()
    with tf.num_threads(2):
        two = run()
    assert counts == [2 if split else 1] * 4
    for x, y in zip(one, two):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("n, split", [(8, True), (9, False)])
def test_small_qr_backprop_is_split(monkeypatch, n, split):
    """The QR backprop's loops (up to QR_SMALL) split over threads although BLAS3_LOCKED;
    the results are bit-identical for 1, 2 and 3 threads."""
    counts = _count_threads(monkeypatch)
    rng = np.random.default_rng(n)
    q, r = lq.qr(rand((64, n, n), np.complex128, rng))
    gq, gr = rand(q.shape, np.complex128, rng), np.triu(rand(r.shape, np.complex128, rng))
    out = []
    for t in (1, 2, 3):
        counts.clear()
        with tf.num_threads(t):
            out.append(tr.qr_backprop(q, r, gq, gr))
        assert counts == [t if split else 1]
    for other in out[1:]:
        np.testing.assert_array_equal(other, out[0])
