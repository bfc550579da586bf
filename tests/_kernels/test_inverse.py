"""The LU inverse kernel (tenferro/_kernels/inverse.pyx) against its NumPy twin
(inverse_twin.lu_inverse) and numpy.linalg.inv, and its accuracy on ill-conditioned
matrices against the getrs-on-identity inverse it replaces."""
import numpy as np
import pytest

from tenferro._kernels import inverse_twin as ref
from tenferro._kernels import inverse as kern
from tenferro._kernels import lapack_lu_chol
from tenferro.testing import random_array

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def factors(batch, n, dtype, rng):
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    a = random_array(batch + (n, n), wide, rng) + 2.0 * np.eye(n)
    lu, piv = lapack_lu_chol.getrf(a.astype(dtype))
    return a, lu, piv


def expected(a, scale, trans):
    y = np.linalg.inv(a)
    if trans:
        y = y.swapaxes(-1, -2)
    if trans == 2:
        y = y.conj()
    return y if scale is None else y * np.asarray(scale)[..., None, None]


def assert_close(got, want, dtype):
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=tol(dtype) * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_kernel_equals_twin_and_numpy(dtype, trans):
    rng = np.random.default_rng(0)
    for batch, n in [((), 1), ((), 5), ((2,), 7), ((2, 3), 4), ((), 33), ((2,), 70)]:
        a, lu, piv = factors(batch, n, dtype, rng)
        for scale in (None, random_array(batch, dtype, rng)):   # complex scale too
            got = kern.lu_inverse(lu, piv, scale, trans)
            assert got.dtype == np.dtype(dtype) and got.shape == a.shape
            assert got.flags.c_contiguous
            assert_close(got, ref.lu_inverse(lu, piv, scale, trans), dtype)
            assert_close(got, expected(a, scale, trans), dtype)


@pytest.mark.parametrize("nb,tb", [(2, 2), (3, 5), (8, 16), (64, 64)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_every_recursion_depth(nb, tb, dtype):
    # tiny base sizes run every level of both recursions and of the trmm recursion
    rng = np.random.default_rng(1)
    try:
        kern._set_block(nb, tb)
        for n in (2, 9, 31, 64, 100):
            a, lu, piv = factors((), n, dtype, rng)
            for trans in (0, 2):
                assert_close(kern.lu_inverse(lu, piv, None, trans), expected(a, None, trans),
                             dtype)
    finally:
        kern._set_block(24, 48)


def test_strided_and_broadcast_inputs():
    rng = np.random.default_rng(2)
    a, lu, piv = factors((3,), 6, np.complex128, rng)
    # C-ordered factors (not getrf's Fortran views), and a non-contiguous stack
    c = np.ascontiguousarray(lu)
    assert_close(kern.lu_inverse(c, piv, None, 2), expected(a, None, 2), np.complex128)
    big = np.zeros((6, 6, 6), complex)
    big[::2] = lu
    assert_close(kern.lu_inverse(big[::2], piv, None, 0), expected(a, None, 0),
                 np.complex128)
    # a scalar scale broadcasts over the stack; a real scale with complex factors
    assert_close(kern.lu_inverse(lu, piv, 2.0, 1), expected(a, np.full(3, 2.0), 1),
                 np.complex128)
    # a complex scale promotes real factors
    ar, lur, pivr = factors((2,), 5, np.float64, rng)
    s = np.array([1j, 2.0])
    got = kern.lu_inverse(lur, pivr, s, 2)
    assert got.dtype == np.complex128
    assert_close(got, expected(ar, s, 2), np.complex128)
    assert_close(got, ref.lu_inverse(lur, pivr, s, 2), np.complex128)


@pytest.mark.parametrize("dtype", DTYPES)
def test_overwrite_lu(dtype):
    rng = np.random.default_rng(3)
    a, _, _ = factors((2, 2), 9, dtype, rng)
    a = a.astype(dtype)
    lu, piv = lapack_lu_chol.getrf(a.swapaxes(-1, -2))      # factors of Aᵀ: A⁻¹ = (Aᵀ)⁻ᵀ
    y = kern.lu_inverse(lu, piv, None, 1, True)
    assert np.shares_memory(y, lu) and y.flags.c_contiguous
    assert_close(y, np.linalg.inv(a.astype(np.complex128 if a.dtype.kind == "c"
                                           else np.float64)), dtype)
    # not getrf's own buffer (read-only view): falls back to a fresh output
    lu2, piv2 = lapack_lu_chol.getrf(a)
    lu2.flags.writeable = False
    y2 = kern.lu_inverse(lu2, piv2, None, 2, True)
    assert not np.shares_memory(y2, lu2)
    assert_close(y2, ref.lu_inverse(lu2, piv2, None, 2), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty(dtype):
    for shape in [(0, 0), (3, 0, 0), (0, 4, 4), (2, 0, 3, 3)]:
        lu = np.zeros(shape, dtype)
        piv = np.zeros(shape[:-1], np.int32)
        for trans in (0, 1, 2):
            got = kern.lu_inverse(lu, piv, None, trans)
            want = ref.lu_inverse(lu, piv, None, trans)
            assert got.shape == want.shape == shape and got.dtype == np.dtype(dtype)


def test_bad_arguments():
    rng = np.random.default_rng(4)
    _, lu, piv = factors((2,), 4, np.float64, rng)
    bad = piv.copy()
    bad[1, 2] = 4
    for f in (kern.lu_inverse, ref.lu_inverse):
        with pytest.raises(ValueError, match="pivots"):
            f(lu, bad)
        with pytest.raises(ValueError, match="trans"):
            f(lu, piv, None, 3)


def test_zero_pivot_gives_non_finite_not_a_crash():
    lu, piv = lapack_lu_chol.getrf(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert not np.isfinite(kern.lu_inverse(lu, piv)).all()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("log_cond", [4, 8, 13])
def test_accuracy_like_getrs(dtype, log_cond):
    # A = Q₁ diag(s) Q₂ with cond(A) = 10^log_cond. The inverse from the factors must be
    # about as accurate as getrs on an identity: its residuals ‖XA − I‖ and ‖AX − I‖
    # (relative to ‖A‖‖X‖ ~ cond) within a small factor of getrs's, and both inverses
    # agreeing to ~cond·eps.
    rng = np.random.default_rng(log_cond)
    n = 120
    q1, _ = np.linalg.qr(random_array((n, n), dtype, rng))
    q2, _ = np.linalg.qr(random_array((n, n), dtype, rng))
    a = (q1 * np.logspace(0, -log_cond, n)) @ q2
    lu, piv = lapack_lu_chol.getrf(a)
    x = kern.lu_inverse(lu, piv)
    xs = lapack_lu_chol.getrs(lu, piv, np.eye(n, dtype=dtype))
    eye = np.eye(n)
    norm = np.linalg.norm(a, 2) * np.linalg.norm(xs, 2)

    def resid(y):
        return max(np.linalg.norm(y @ a - eye, 2), np.linalg.norm(a @ y - eye, 2)) / norm

    eps = np.finfo(np.float64).eps
    assert resid(x) <= 10 * resid(xs) + 10 * n * eps
    assert np.linalg.norm(x - xs, 2) / np.linalg.norm(xs, 2) <= 10 * n * eps * 10.0 ** log_cond


@pytest.mark.parametrize("dtype", DTYPES)
def test_pivot_parity_and_tiny_pivots_equal_twins(dtype):
    rng = np.random.default_rng(5)
    for batch, n in [((), 1), ((), 6), ((3,), 5), ((2, 2), 4), ((0,), 3), ((2,), 0)]:
        a = random_array(batch + (n, n), dtype, rng)
        if n > 1 and a.size:
            a.reshape(-1, n, n)[0, 1, :] = 0     # an exactly singular member: zero pivot
        lu, piv = lapack_lu_chol.getrf(a) if a.size else (a, np.zeros(batch + (n,), np.int32))
        for f, g in ((kern.pivot_parity, ref.pivot_parity),):
            got, want = f(piv), g(piv)
            assert type(got) is type(want) and np.array_equal(got, want)
        for rtol in (0.0, 1e-6, 0.5):
            got, want = kern.tiny_pivots(lu, rtol), ref.tiny_pivots(lu, rtol)
            assert type(got) is type(want) and np.array_equal(got, want)
    # the parity is that of the permutation getrf applied (det of P = ±1)
    a = random_array((4, 7, 7), np.float64, rng)
    lu, piv = lapack_lu_chol.getrf(a)
    p, _, _ = lapack_lu_chol.lu(a)
    assert np.array_equal(1 - 2 * kern.pivot_parity(piv), np.round(np.linalg.det(p)))


def test_pivot_perm_equals_twin_and_lu():
    # the row order of getrf's interchanges: row i of L U is row perm[i] of A, the perm
    # lapack_lu_chol.lu returns beside P (P[perm[i], i] = 1)
    rng = np.random.default_rng(6)
    for shape in [(1, 1), (7, 7), (3, 9, 9), (2, 2, 5, 5), (4, 6)]:   # m <= n: m pivots
        a = random_array(shape, np.float64, rng)
        lu, piv = lapack_lu_chol.getrf(a)
        p, l_, u, perm = lapack_lu_chol.lu(a, True)
        got = kern.pivot_perm(piv)
        assert got.dtype == np.intp and got.shape == piv.shape
        if shape[-2] <= shape[-1]:
            assert np.array_equal(got, perm)
        assert np.array_equal(got, ref.pivot_perm(piv))
        np.testing.assert_allclose(np.take_along_axis(a, got[..., None], -2) if a.ndim > 2
                                   else a[got], l_ @ u, rtol=1e-12, atol=1e-12)
    for bad in ([0, 3, 2], [-1, 1, 2]):
        for f in (kern.pivot_perm, ref.pivot_perm):
            with pytest.raises(ValueError, match="pivot"):
                f(np.array(bad, np.int32))


@pytest.fixture
def lapack_getrf():
    """getrf through LAPACK also for small matrices (the twin's getrf is SciPy's)."""
    old = lapack_lu_chol._set_small(0), kern._set_small(0)
    yield
    lapack_lu_chol._set_small(old[0])
    kern._set_small(old[1])


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")   # the twin's prod
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_det_equals_twin_bitwise(dtype, lapack_getrf):
    """lu_det = getrf + det.py's NumPy formulas, to the last bit: lu/piv as getrf's, det
    as prod, sign and logabsdet as NumPy's |u_ii|, division, log and pairwise sum (n up to
    300 covers the pairwise sum's blocks of 128), the tiny-pivot test as tiny_pivots.
    On LAPACK's getrf (the twin's); the small matrices' plain-loop getrf is checked in
    test_small.py."""
    rng = np.random.default_rng(7)
    for batch, n in [((), 1), ((), 2), ((), 9), ((), 16), ((), 300), ((3,), 5), ((2, 2), 8),
                     ((2,), 130), ((0,), 3), ((2,), 0), ((), 0)]:
        a = random_array(batch + (n, n), dtype, rng) * 3.0
        views = [a, a.swapaxes(-1, -2)]                 # C order and a strided view
        if n > 2 and a.size:
            b = a.copy()
            b.reshape(-1, n, n)[0, 1, :] = 0            # an exactly singular member
            c = a.copy()
            c.reshape(-1, n, n)[-1, 2, :] = c.reshape(-1, n, n)[-1, 0, :]   # ≈ singular
            views += [b, c]
        for x in views:
            rtol = max(n, 1) * float(np.finfo(dtype).eps)
            got, want = kern.lu_det(x, rtol), ref.lu_det(x, rtol)
            if x.size:
                lu, piv = lapack_lu_chol.getrf(x)
                same_bits(got[0], lu)
                same_bits(got[1], piv)
                assert got[0].strides == lu.strides
            for g, w in zip(got, want):
                same_bits(g, w)
            assert type(got[3]) is type(want[3])
            got, want = kern.lu_det(x, 0.0, True), ref.lu_det(x, 0.0, True)
            for k, (g, w) in enumerate(zip(got, want)):
                if k == 3 and np.dtype(dtype).kind == "f":
                    # real logabsdet: the kernel takes libm's log of |u_ii| inside its loop
                    # (as numpy.linalg.slogdet does), the twin NumPy's SIMD np.log, which
                    # differs from libm's in the last bit for ~1 value in 2000; the
                    # summation order is the same, so the two agree to a few ulps (and
                    # exactly at -inf for a zero pivot): |difference| <= 4·eps·Σ|log|u_ii||
                    g, w = np.asarray(g), np.asarray(w)
                    assert g.shape == w.shape and g.dtype == w.dtype
                    np.testing.assert_array_equal(g == -np.inf, w == -np.inf)
                    fin = np.isfinite(w)
                    with np.errstate(divide="ignore"):
                        mag = np.abs(np.log(np.abs(np.diagonal(got[0], 0, -2, -1)))).sum(-1)
                    bound = 4 * float(np.finfo(dtype).eps) * mag[fin]
                    assert np.all(np.abs(g[fin] - w[fin]) <= bound), (g, w)
                else:
                    same_bits(g, w)
            assert type(got[4]) is type(want[4])
    # the values themselves
    a = random_array((3, 6, 6), dtype, rng)
    _, _, d, _ = kern.lu_det(a, 0.0)
    _, _, sign, logabs, _ = kern.lu_det(a, 0.0, True)
    np.testing.assert_allclose(d, np.linalg.det(a), rtol=tol(dtype))
    np.testing.assert_allclose(sign * np.exp(logabs), np.linalg.det(a), rtol=tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_det_check_finite(dtype):
    """check_finite: None for a NaN/Inf entry (in-loop scan up to 2048 entries, np.isfinite
    above), the factors otherwise; check_finite=False factors whatever it is given."""
    rng = np.random.default_rng(9)
    for shape in [(4, 4), (3, 4, 4), (40, 40), (2, 50, 50)]:
        a = random_array(shape, dtype, rng)
        assert kern.lu_det(a, 0.0, False, True) is not None
        bads = [np.nan, np.inf, -np.inf] + ([1j * np.inf] if np.dtype(dtype).kind == "c" else [])
        for bad in bads:
            b = a.copy()
            b.reshape(-1)[-3] = bad
            for x in (b, b.swapaxes(-1, -2)):
                for log in (False, True):
                    assert kern.lu_det(x, 0.0, log, True) is None
                    assert ref.lu_det(x, 0.0, log, True) is None
                assert kern.lu_det(x, 0.0) is not None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_lu_inverse_result_owns_its_memory(dtype, batch):
    """No view: autograd would copy a gradient that is one (a 512 KB copy at n = 256)."""
    rng = np.random.default_rng(8)
    a, lu, piv = factors(batch, 5, dtype, rng)
    for trans in (0, 1, 2):
        for scale in (None, random_array(batch, dtype, rng)):
            assert kern.lu_inverse(lu, piv, scale, trans).base is None
