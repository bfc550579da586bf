"""The recursive triangular solve and the qr / cholesky / lu backprop kernels of
tenferro/_kernels/triangular_backprop.pyx against their NumPy twins in
triangular_backprop_twin.py (and, for the backprops, against the recorded-op formulas of
the linalg modules)."""
import itertools
import sys

import numpy as np
import pytest

import tenferro as tf
from tenferro._errors import LinAlgError
from tenferro._kernels import triangular_backprop_twin as ref
from tenferro._kernels import triangular_backprop as kern
from tenferro.testing import random_array, random_spd

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
FLAGS = list(itertools.product([True, False], [0, 1, 2], [False, True], [True, False]))


def tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def assert_close(got, want, dtype):
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=tol(dtype) * scale)


def tri_operands(batch_a, batch_b, n, k, dtype, left, rng):
    """a (*batch_a, n, n) well conditioned also with a unit diagonal (small off-diagonal
    entries; garbage in the unread triangle), b (*batch_b, n, k) (left) or
    (*batch_b, k, n)."""
    a = random_array(batch_a + (n, n), dtype, rng, scale=1 / np.sqrt(max(n, 1)))
    a[..., np.arange(n), np.arange(n)] += 3
    b = random_array(batch_b + ((n, k) if left else (k, n)), dtype, rng)
    return a, b


def strided(x):
    """x as a view with non-unit element strides in its last two axes."""
    wide = np.zeros(x.shape[:-2] + (2 * x.shape[-2], 2 * x.shape[-1]), x.dtype)
    wide[..., ::2, ::2] = x
    return wide[..., ::2, ::2]


SETTERS = (kern._set_solve_block, kern._set_leaf_block, kern._set_chol_block,
           kern._set_block, kern._set_qr_block)


class blocks:
    """Temporarily set the kernels' block sizes (small ones: many recursion levels)."""

    def __init__(self, solve=None, leaf=None, chol=None, tri=None, qr=None):
        self.new = (solve, leaf, chol, tri, qr)

    def __enter__(self):
        self.old = [None if v is None else s(v) for s, v in zip(SETTERS, self.new)]

    def __exit__(self, *exc):
        for s, v in zip(SETTERS, self.old):
            if v is not None:
                s(v)


# ---- trsm ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower,trans,unit,left", FLAGS)
def test_trsm_equals_twin(dtype, lower, trans, unit, left):
    rng = np.random.default_rng(0)
    # n above the base block (recursion, odd splits, leaves of 1 and 3 through their
    # inverses), k = 1 (the ?trsv path), batches
    for leaf in (1, 3):
        with blocks(solve=4, leaf=leaf):
            trsm_cases(dtype, lower, trans, unit, left, rng)


def trsm_cases(dtype, lower, trans, unit, left, rng):
    for n, k, ba, bb in [(1, 1, (), ()), (5, 1, (2,), (2,)), (13, 6, (2,), (2,)),
                         (9, 3, (), (3,)), (6, 2, (2, 1), (1, 3))]:
        a, b = tri_operands(ba, bb, n, k, dtype, left, rng)
        args = (lower, trans, unit, left)
        want = ref.trsm(a, b, *args)
        assert_close(kern.trsm(a, b, *args), want, dtype)
        # Fortran-ordered and non-contiguous a, non-contiguous b: same result
        af = np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)
        assert_close(kern.trsm(af, b, *args), want, dtype)
        assert_close(kern.trsm(strided(a), strided(b), *args), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower,trans,unit,left", FLAGS)
def test_trsm_and_backprop_one_matrix_equal_stack(dtype, lower, trans, unit, left):
    # a single C-ordered a with one right-hand side matrix takes its own entry path (no
    # stack views): bit for bit the matrix of a stack, b and X̄ in any layout
    rng = np.random.default_rng(3)
    args = (lower, trans, unit, left)
    for n, k in [(1, 1), (5, 1), (5, 3), (45, 7)]:
        a, b = tri_operands((2,), (2,), n, k, dtype, left, rng)
        x = kern.trsm(a, b, *args)
        gx = random_array(x.shape, dtype, rng)
        ga, gb = kern.solve_triangular_backprop(a, x, gx, *args)
        for j in range(2):
            for lay in ((lambda v: v), strided, np.asfortranarray):
                assert np.array_equal(kern.trsm(a[j].copy(), lay(b[j]), *args), x[j])
                for need_a in (True, False):
                    oa, ob = kern.solve_triangular_backprop(
                        a[j].copy(), x[j].copy(), lay(gx[j]), *args, need_a=need_a)
                    assert np.array_equal(ob, gb[j])
                    assert (oa is None) if not need_a else np.array_equal(oa, ga[j])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("nb", [1, 3, 16, 48])
def test_trsm_large_against_numpy(dtype, nb):
    """Big enough for several recursion levels at the default block; the solution
    reproduces b."""
    rng = np.random.default_rng(1)
    for lower, trans, left in [(True, 0, True), (False, 2, False), (False, 1, True),
                               (True, 2, False)]:
        a, b = tri_operands((), (), 101, 37, dtype, left, rng)
        with blocks(solve=nb):
            x = kern.trsm(a, b, lower, trans, False, left)
        t = np.tril(a) if lower else np.triu(a)
        t = t if trans == 0 else (t.T if trans == 1 else t.conj().T)
        np.testing.assert_allclose(t @ x if left else x @ t, b, atol=1e-11)


def test_trsm_dtypes_empty_and_singular():
    rng = np.random.default_rng(2)
    a, b = tri_operands((2,), (2,), 4, 3, np.float32, True, rng)
    x = kern.trsm(a, b.astype(np.complex128), True)        # promotes like NumPy
    assert x.dtype == np.complex128
    assert_close(x, ref.trsm(a.astype(np.complex128), b.astype(np.complex128), True),
                 np.complex128)
    assert kern.trsm(a[:0], b[:0]).shape == (0, 4, 3)
    assert kern.trsm(a, b[..., :0]).shape == (2, 4, 0)
    assert kern.trsm(a[..., :0, :0], b[..., :0, :], left=True).shape == (2, 0, 3)
    a[1, 2, 2] = 0
    # without the check: inf/nan like ?trsm (also through the recursion's leaves)
    with blocks(solve=1, leaf=2):
        assert not np.isfinite(kern.trsm(a, b, True)[1]).all()
    assert np.isfinite(kern.trsm(a, b, True)[0]).all()
    for f in (kern.trsm, ref.trsm):
        with pytest.raises(LinAlgError, match=r"matrix \(1,\) of the stack is singular"):
            f(a, b, True, check=True)
        with pytest.raises(LinAlgError, match="the matrix is singular"):
            f(a[1], b[1], True, check=True)
        f(a, b, True, unit_diagonal=True, check=True)    # the diagonal is not read


# ---- qr backprop -----------------------------------------------------------------------

def qr_operands(batch, m, n, dtype, rng):
    a = random_array(batch + (m, n), dtype, rng)
    a[..., np.arange(n), np.arange(n)] += 3
    q, r = np.linalg.qr(a)
    return q, r, random_array(q.shape, dtype, rng), random_array(r.shape, dtype, rng)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nb", [1, 4, 48])
def test_qr_backprop_equals_twin(dtype, nb):
    rng = np.random.default_rng(3)
    with blocks(solve=nb, tri=nb, qr=nb):
        for batch, m, n in [((), 1, 1), ((2,), 5, 3), ((), 9, 9), ((2, 1), 13, 11)]:
            q, r, gq, gr = qr_operands(batch, m, n, dtype, rng)
            for g in [(gq, gr), (None, gr), (gq, None)]:
                assert_close(kern.qr_backprop(q, r, *g), ref.qr_backprop(q, r, *g), dtype)
            # non-contiguous operands
            assert_close(kern.qr_backprop(strided(q), strided(r), strided(gq), strided(gr)),
                         ref.qr_backprop(q, r, gq, gr), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("m,n", [(7, 7), (9, 4), (70, 60)])
def test_qr_backprop_equals_recorded_formula(dtype, m, n):
    """The Tensor path (create_graph) of qr's rule is the spec of the kernel."""
    mod = sys.modules["tenferro.linalg.qr"]
    rng = np.random.default_rng(4)
    q, r, gq, gr = qr_operands((2,), m, n, dtype, rng)
    for g in [(gq, gr), (None, gr), (gq, None)]:
        want = mod._rev_tall_formula(*(None if v is None else tf.tensor(v)
                                       for v in (q, r) + g))
        assert_close(kern.qr_backprop(q, r, *g), want.numpy(), dtype)


def test_qr_backprop_rank_check():
    rng = np.random.default_rng(7)
    for dtype in (np.float64, np.complex64):
        q, r, gq, gr = qr_operands((2, 2), 5, 4, dtype, rng)
        r[1, 0, 2, 2] = 1e-9 * r[1, 0, 1, 1]
        for f in (kern.qr_backprop, ref.qr_backprop):
            f(q, r, gq, gr)                       # rtol = 0: only exact zeros fail
            with pytest.raises(LinAlgError, match=r"matrix \(1, 0\) of the stack"):
                f(q, r, gq, gr, 1e-6)
            r0 = r[1, 0].copy()
            r0[3, 3] = 0
            with pytest.raises(LinAlgError, match="the matrix: R is singular"):
                f(q[1, 0], r0, None, gr[1, 0])


def test_qr_backprop_empty():
    q = np.zeros((0, 3, 2))
    assert kern.qr_backprop(q, np.zeros((0, 2, 2)), q, None).shape == (0, 3, 2)
    assert ref.qr_backprop(q, np.zeros((0, 2, 2)), q, None).shape == (0, 3, 2)


# ---- cholesky backprop -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nb", [1, 3, 16])
def test_cholesky_backprop_equals_twin(dtype, nb):
    rng = np.random.default_rng(5)
    with blocks(chol=nb, solve=nb):
        for batch, n in [((), 1), ((2,), 5), ((), 17), ((2, 1), 40)]:
            hp = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
            l = np.linalg.cholesky(random_spd(n, hp, batch, rng)).astype(dtype)
            g = random_array(l.shape, dtype, rng)
            want = ref.cholesky_backprop(l, g)
            got = kern.cholesky_backprop(l, g)
            assert_close(got, want, dtype)
            assert np.array_equal(got, np.swapaxes(got, -1, -2).conj())   # Hermitian
            # strided L and L̄ (e.g. the views of upper=True): same result
            assert_close(kern.cholesky_backprop(np.swapaxes(np.swapaxes(l, -1, -2).copy(),
                                                            -1, -2), strided(g)),
                         want, dtype)
            gt = np.swapaxes(np.swapaxes(g, -1, -2).copy(), -1, -2)
            assert_close(kern.cholesky_backprop(l, gt), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 20, 45])
def test_cholesky_backprop_one_matrix_equals_stack(dtype, n):
    # a single C-ordered matrix takes its own entry path (no stack views or thread
    # plan): bit for bit the matrix of a stack, with L̄ in any layout
    rng = np.random.default_rng(8)
    hp = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    l = np.linalg.cholesky(random_spd(n, hp, (2,), rng)).astype(dtype)
    g = random_array(l.shape, dtype, rng)
    stack = kern.cholesky_backprop(l, g)
    for k in range(2):
        for gk in (g[k], strided(g[k]), np.asfortranarray(g[k]), g[k][::-1, ::-1][::-1, ::-1]):
            got = kern.cholesky_backprop(l[k].copy(), gk)
            assert got.shape == (n, n) and got.dtype == np.dtype(dtype)
            assert np.array_equal(got, stack[k])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 20, 45])
def test_lu_backprop_one_matrix_equals_stack(dtype, n):
    # a single C-ordered matrix takes its own entry path (no stack views or thread
    # plan): bit for bit the matrix of a stack, with and without P, L̄ or Ū, any layouts
    import scipy.linalg as sla
    rng = np.random.default_rng(9)
    a = random_array((2, n, n), dtype, rng) + 3 * np.eye(n, dtype=dtype)
    p, l, u = sla.lu(a)
    perm = np.argmax(p, axis=-2)
    gl, gu = random_array(a.shape, dtype, rng), random_array(a.shape, dtype, rng)
    for pm in (perm, None):
        for g1, g2 in ((gl, gu), (gl, None), (None, gu)):
            stack = kern.lu_backprop(pm, l, u, g1, g2)
            for k in range(2):
                lay = (lambda x: x) if k == 0 else strided
                got = kern.lu_backprop(None if pm is None else pm[k].copy(), l[k].copy(),
                                       u[k].copy(), None if g1 is None else lay(g1[k]),
                                       None if g2 is None else lay(g2[k]))
                assert got.shape == (n, n) and got.dtype == np.dtype(dtype)
                assert np.array_equal(got, stack[k])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_cholesky_backprop_equals_recorded_formula(dtype):
    mod = sys.modules["tenferro.linalg.cholesky"]
    rng = np.random.default_rng(6)
    l = np.linalg.cholesky(random_spd(70, dtype, (2,), rng))
    g = random_array(l.shape, dtype, rng)
    want = mod._backprop_formula(tf.tensor(l), tf.tensor(g)).numpy()
    assert_close(kern.cholesky_backprop(l, g), want, dtype)


def test_cholesky_backprop_empty():
    for shape in [(2, 0, 0), (0, 3, 3)]:
        z = np.zeros(shape)
        assert kern.cholesky_backprop(z, z).shape == shape
        assert ref.cholesky_backprop(z, z).shape == shape


# ---- lu backprop -------------------------------------------------------------------------

def lu_operands(batch, n, dtype, rng):
    """perm, L, U of a pivot-stable A (*batch, n, n) from lapack_lu_chol.lu, and
    cotangents."""
    from tenferro._kernels import lapack_lu_chol
    a = random_array(batch + (n, n), dtype, rng)
    a[..., np.arange(n), np.arange(n)] += 2 * np.sqrt(n)
    _, l, u, perm = lapack_lu_chol.lu(a, True)
    return perm, l, u, random_array(l.shape, dtype, rng), random_array(u.shape, dtype, rng)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nb", [1, 3, 16])
def test_lu_backprop_equals_twin(dtype, nb):
    rng = np.random.default_rng(11)
    old = kern._set_lu_block(nb)
    try:
        for batch, n in [((), 1), ((2,), 5), ((), 17), ((2, 1), 40), ((), 70)]:
            perm, l, u, gl, gu = lu_operands(batch, n, dtype, rng)
            for p in (perm, None):
                for cl, cu in ((gl, gu), (gl, None), (None, gu)):
                    want = ref.lu_backprop(p, l, u, cl, cu)
                    assert_close(kern.lu_backprop(p, l, u, cl, cu), want, dtype)
            # strided cotangents, a broadcast row order, a non-contiguous stack of L
            want = ref.lu_backprop(perm, l, u, gl, gu)
            assert_close(kern.lu_backprop(perm, l, u, strided(gl), strided(gu)), want, dtype)
            if batch:
                assert_close(kern.lu_backprop(perm.astype(np.int32), l, u, gl, gu), want,
                             dtype)
                wide = np.concatenate([l, l], -1)[..., :n]
                assert_close(kern.lu_backprop(perm, wide, u, gl, gu), want, dtype)
    finally:
        kern._set_lu_block(old)


def test_lu_backprop_permutes_rows():
    # Ā = P Ā′: with P[perm[i], i] = 1, row perm[i] of the result is row i without P
    rng = np.random.default_rng(12)
    perm, l, u, gl, gu = lu_operands((3,), 9, np.float64, rng)
    plain = kern.lu_backprop(None, l, u, gl, gu)
    got = kern.lu_backprop(perm, l, u, gl, gu)
    for b in range(3):
        np.testing.assert_array_equal(got[b][perm[b]], plain[b])


def test_lu_backprop_empty_and_fallback():
    z = np.zeros((2, 0, 0))
    assert kern.lu_backprop(None, z, z, z, z).shape == (2, 0, 0)
    assert ref.lu_backprop(None, z, z, z, z).shape == (2, 0, 0)
    # mixed dtypes go to the twin (the result type of the operands)
    rng = np.random.default_rng(13)
    perm, l, u, gl, gu = lu_operands((), 6, np.float32, rng)
    got = kern.lu_backprop(perm, l, u, gl.astype(np.float64), gu)
    assert got.dtype == np.float64
    assert_close(got, ref.lu_backprop(perm, l, u, gl.astype(np.float64), gu), np.float64)


def test_threads_share_nothing():
    # the kernels release the GIL and reuse a cached workspace: concurrent calls (each
    # taking the workspace out of the cache, or a fresh one) give the serial results
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(8)
    jobs = []
    for i in range(8):
        q, r, gq, gr = qr_operands((), 40 + i, 40, np.float64, rng)
        jobs.append((kern.qr_backprop, (q, r, gq, gr)))
        l = np.linalg.cholesky(random_spd(30 + i, np.float64, (), rng))
        jobs.append((kern.cholesky_backprop, (l, random_array(l.shape, np.float64, rng))))
    serial = [f(*args) for f, args in jobs]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(5):
            got = list(pool.map(lambda job: job[0](*job[1]), jobs))
            for g, s in zip(got, serial):
                np.testing.assert_allclose(g, s, rtol=1e-12, atol=1e-12)
