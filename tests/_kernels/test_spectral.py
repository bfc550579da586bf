"""The fused F-matrix kernels of _kernels/spectral.pyx agree with their NumPy twins in
_kernels/spectral_twin.py ("spectral twins"), for all four dtypes, every mode, missing
cotangents, stacks, k = 0, and degenerate spectra with ε = 0 (0, never NaN)."""
import itertools

import numpy as np
import pytest

from tenferro._kernels import spectral_twin as twin
from tenferro._kernels import spectral as kernel
from tenferro.testing import random_array

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def _spectrum(b, k, rng, degenerate):
    s = np.sort(np.abs(rng.standard_normal((b, k))) + 0.1, axis=-1)[:, ::-1]
    if degenerate and k >= 3:
        s[:, 1] = s[:, 2]           # an exactly repeated value
        s[:, -1] = 0.0              # and an exact zero
    return np.ascontiguousarray(s)


def _run_svd(fn, X, Y, s, sbar, eps, rel, mode, dtype):
    out = np.full(s.shape + (s.shape[-1],), np.nan, dtype)
    sinv = np.full(s.shape, np.nan, s.dtype)
    fn(X, Y, s, sbar, eps, rel, mode, out, sinv)
    return out, sinv


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("b,k", [(1, 1), (1, 5), (3, 4), (2, 0), (0, 3)])
def test_svd_core_agrees(dtype, mode, b, k):
    rng = np.random.default_rng(k + 10 * b + 100 * mode)
    real = np.finfo(dtype).dtype
    for (has_x, has_y, has_s), degenerate in itertools.product(
            [(1, 1, 1), (1, 0, 0), (0, 1, 1), (1, 1, 0)], [False, True]):
        s = _spectrum(b, k, rng, degenerate).astype(real)
        X = random_array((b, k, k), dtype, rng) if has_x else None
        Y = random_array((b, k, k), dtype, rng) if has_y else None
        sbar = random_array((b, k), real, rng) if has_s else None
        # ε absolute, relative to s_max² (the default's form), mixed, and 0
        for eps, rel in ((0.03, 0.0), (0.0, 0.05), (0.01, 0.01), (0.0, 0.0)):
            got = _run_svd(kernel.svd_core, X, Y, s, sbar, eps, rel, mode, dtype)
            ref = _run_svd(twin.svd_core, X, Y, s, sbar, eps, rel, mode, dtype)
            for g, r in zip(got, ref):
                assert np.isfinite(g).all()
                np.testing.assert_allclose(g, r, rtol=_tol(dtype), atol=_tol(dtype))


def _orthonormal(b, m, k, dtype, rng):
    q = np.linalg.qr(random_array((b, m, k), dtype, rng))[0]
    return np.ascontiguousarray(q)


def _up(a, dtype):
    """An ndarray argument in ``dtype`` (its real counterpart for real arrays)."""
    if not isinstance(a, np.ndarray):
        return a
    return a.astype(dtype if a.dtype.kind == "c" else np.finfo(dtype).dtype)


def _run_backward(fn, *args, shape, dtype):
    out = np.full(shape, np.nan, dtype)
    fn(*args, out)
    return out


# (m, n): square, tall, wide; products with sides up to 8 take the plain loops, larger
# ones BLAS ((12, 6): both kinds in one pullback)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n", [(4, 4), (6, 3), (3, 5), (1, 1), (8, 8), (12, 6), (5, 11),
                                 (16, 16), (24, 18), (17, 21)])
@pytest.mark.parametrize("b", [1, 3, 0])
def test_svd_backward_agrees(dtype, m, n, b):
    """The fused pullback (X, Y, the core, the products to Ā) against its twin, for
    every combination of missing cotangents and degenerate spectra with ε = 0."""
    rng = np.random.default_rng(m + 10 * n + 100 * b)
    real = np.finfo(dtype).dtype
    k = min(m, n)
    for (has_u, has_v, has_s), degenerate in itertools.product(
            [(1, 1, 1), (1, 0, 0), (0, 1, 1), (1, 1, 0), (0, 0, 1)], [False, True]):
        u, vt = _orthonormal(b, m, k, dtype, rng), _orthonormal(b, n, k, dtype, rng)
        vt = np.ascontiguousarray(vt.conj().transpose(0, 2, 1))
        s = _spectrum(b, k, rng, degenerate).astype(real)
        gu = random_array((b, m, k), dtype, rng) if has_u else None
        gvt = random_array((b, k, n), dtype, rng) if has_v else None
        sbar = random_array((b, k), real, rng) if has_s else None
        for eps, rel in ((0.03, 0.0), (0.0, 0.05), (0.0, 0.0)):
            args = (u, s, vt, gu, sbar, gvt, eps, rel)
            got = _run_backward(kernel.svd_backward, *args, shape=(b, m, n), dtype=dtype)
            # float32/complex64: against the twin in double precision (the kernel computes
            # the gaps s_j² − s_i² in double, the twin in the input's precision, which
            # loses digits at close singular values)
            wide = np.promote_types(dtype, np.float64)
            ref = _run_backward(twin.svd_backward, *[_up(a, wide) for a in args],
                                shape=(b, m, n), dtype=wide)
            assert np.isfinite(got).all()
            # (the core's entries grow like 1/gap: the rounding of the products scales
            # with the largest entry)
            scale = max(1.0, np.abs(ref).max()) if ref.size else 1.0
            np.testing.assert_allclose(got, ref, rtol=_tol(dtype),
                                       atol=_tol(dtype) * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 5, 8, 9, 16, 20])
@pytest.mark.parametrize("b", [1, 3, 0])
def test_eigh_backward_agrees(dtype, k, b):
    rng = np.random.default_rng(k + 10 * b)
    real = np.finfo(dtype).dtype
    for has_w, degenerate in itertools.product([True, False], [False, True]):
        v = _orthonormal(b, k, k, dtype, rng)
        w = _spectrum(b, k, rng, degenerate)[:, ::-1].astype(real)   # ascending
        w = np.ascontiguousarray(w)
        gv = random_array((b, k, k), dtype, rng)
        wbar = random_array((b, k), real, rng) if has_w else None
        for eps, rel in ((0.03, 0.0), (0.0, 0.05), (0.0, 0.0)):
            args = (v, w, gv, wbar, eps, rel)
            got = _run_backward(kernel.eigh_backward, *args, shape=(b, k, k), dtype=dtype)
            ref = _run_backward(twin.eigh_backward, *args, shape=(b, k, k), dtype=dtype)
            assert np.isfinite(got).all()
            np.testing.assert_allclose(got, ref, rtol=_tol(dtype), atol=_tol(dtype))


def test_backward_kernels_take_strided_cotangents():
    rng = np.random.default_rng(4)
    u = _orthonormal(2, 5, 5, np.float64, rng)
    vt = _orthonormal(2, 5, 5, np.float64, rng)
    s = _spectrum(2, 5, rng, False)
    g = random_array((2, 5, 5), np.float64, rng).transpose(0, 2, 1)     # not C-contiguous
    for fn in (kernel.svd_backward, twin.svd_backward):
        got = _run_backward(fn, u, s, vt, g, None, g, 0.0, 0.0, shape=(2, 5, 5),
                            dtype=np.float64)
        ref = _run_backward(twin.svd_backward, u, s, vt, g.copy(), None, g.copy(), 0.0,
                            0.0, shape=(2, 5, 5), dtype=np.float64)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    w = np.ascontiguousarray(s[:, ::-1])
    got = _run_backward(kernel.eigh_backward, u, w, g, None, 0.0, 0.0, shape=(2, 5, 5),
                        dtype=np.float64)
    ref = _run_backward(twin.eigh_backward, u, w, g.copy(), None, 0.0, 0.0,
                        shape=(2, 5, 5), dtype=np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_svd_core_strided_inputs():
    """Inputs need not be contiguous (a cotangent may be a transposed or broadcast view)."""
    rng = np.random.default_rng(0)
    X = random_array((2, 4, 4), np.complex128, rng).transpose(0, 2, 1)
    Y = random_array((2, 4, 4), np.complex128, rng)[:, ::-1]
    s = _spectrum(2, 4, rng, False)
    sbar = np.broadcast_to(np.arange(4.0), (2, 4))
    got = _run_svd(kernel.svd_core, X, Y, s, sbar, 0.0, 0.1, 0, np.complex128)
    ref = _run_svd(twin.svd_core, X, Y, s, sbar, 0.0, 0.1, 0, np.complex128)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-13, atol=1e-13)


def test_svd_core_formula():
    """One explicit entry check: out_ij = F_ij[(X_ij − conj X_ji)s_j + s_i(Y_ij − conj Y_ji)]."""
    X = np.array([[[1 + 2j, 3 - 1j], [0.5j, 2.0]]])
    Y = np.array([[[0.0, 1j], [2.0, 1 - 1j]]])
    s = np.array([[2.0, 1.0]])
    out, sinv = _run_svd(kernel.svd_core, X, Y, s, None, 0.0, 0.0, 0, np.complex128)
    F01 = 1 / (1.0 - 4.0)
    np.testing.assert_allclose(out[0, 0, 1], F01 * ((3 - 1j - (-0.5j)) * 1 + 2 * (1j - 2)))
    np.testing.assert_allclose(out[0, 0, 0], 2j * 0.5)      # i·Im(X_00)/s_0
    np.testing.assert_allclose(sinv, [[0.5, 1.0]])


def test_relative_eps_scale():
    """ε = eps + rel·scale: the scale is s_max² for svd_core and max|λ| for eigh_core."""
    rng = np.random.default_rng(1)
    X = random_array((1, 3, 3), np.complex128, rng)
    s = np.array([[3.0, 2.0, 2.0 - 1e-3]])
    a = _run_svd(kernel.svd_core, X, X, s, None, 0.0, 0.01, 0, np.complex128)
    b = _run_svd(kernel.svd_core, X, X, s, None, 0.09, 0.0, 0, np.complex128)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-14)
    w = np.array([[-4.0, 1.0, 1.0 + 1e-3]])
    outs = [np.empty((1, 3, 3), complex) for _ in range(2)]
    kernel.eigh_core(X, w, None, 0.0, 0.01, outs[0])
    kernel.eigh_core(X, w, None, 0.04, 0.0, outs[1])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("b,k", [(1, 1), (1, 6), (4, 3), (3, 0), (0, 2)])
def test_eigh_core_agrees(dtype, b, k):
    rng = np.random.default_rng(k + 10 * b)
    real = np.finfo(dtype).dtype
    for has_w, degenerate in itertools.product([True, False], [False, True]):
        w = np.sort(rng.standard_normal((b, k)), axis=-1).astype(real)
        if degenerate and k >= 2:
            w[:, 0] = w[:, 1]
        X = random_array((b, k, k), dtype, rng)
        wbar = random_array((b, k), real, rng) if has_w else None
        for eps, rel in ((0.03, 0.0), (0.0, 0.05), (0.01, 0.01), (0.0, 0.0)):
            outs = []
            for fn in (kernel.eigh_core, twin.eigh_core):
                out = np.full((b, k, k), np.nan, dtype)
                fn(X, w, wbar, eps, rel, out)
                outs.append(out)
            assert np.isfinite(outs[0]).all()
            np.testing.assert_allclose(outs[0], outs[1], rtol=_tol(dtype), atol=_tol(dtype))
            # the core is Hermitian
            np.testing.assert_allclose(outs[0], np.conj(outs[0].transpose(0, 2, 1)),
                                       atol=_tol(dtype))


def test_float32_large_spectrum_no_overflow():
    """The kernel works in double internally: s⁴ of float32 s ~ 1e12 does not overflow."""
    s = np.array([[3e12, 1e12]], np.float32)
    X = np.ones((1, 2, 2), np.float32)
    X[0, 0, 1] = 2.0
    out, sinv = _run_svd(kernel.svd_core, X, None, s, None, 0.0, 0.0, 0, np.float32)
    assert np.isfinite(out).all() and np.isfinite(sinv).all()
    np.testing.assert_allclose(sinv, 1 / s, rtol=1e-6)


def test_bad_dtype():
    with pytest.raises(TypeError, match="unsupported dtype"):
        kernel.svd_core(None, None, np.ones((1, 1)), None, 0.0, 0.0, 0,
                        np.zeros((1, 1, 1), np.int64), np.zeros((1, 1)))
    with pytest.raises(TypeError, match="unsupported dtype"):
        kernel.eigh_core(np.zeros((1, 1, 1), np.int64), np.ones((1, 1)), None, 0.0, 0.0,
                         np.zeros((1, 1, 1), np.int64))


def test_operands_of_the_wrong_kind_raise():
    """The compiled kernels write through raw pointers: an operand of another dtype or
    shape, or an output that is not C-contiguous, is a ValueError, not a bad write."""
    X = np.ones((2, 3, 3))
    s = np.ones((2, 3))
    out, sinv = np.zeros((2, 3, 3)), np.zeros((2, 3))
    with pytest.raises(ValueError, match="C-contiguous float64 array of shape"):
        kernel.svd_core(X, None, s.astype(np.float32), None, 0.0, 0.0, 0, out, sinv)
    with pytest.raises(ValueError, match="shape"):
        kernel.svd_core(X, None, s, None, 0.0, 0.0, 0, out, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel.eigh_core(X, s, None, 0.0, 0.0, np.zeros((2, 3, 6))[:, :, ::2])
    with pytest.raises(ValueError, match="complex128"):
        kernel.eigh_backward(X.astype(complex), s, X, None, 0.0, 0.0,
                             np.zeros((2, 3, 3), complex))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("b,m,k,n", [(1, 4, 4, 4), (3, 5, 3, 3), (2, 3, 3, 6), (2, 0, 0, 0)])
def test_phase_check_agrees(dtype, b, m, k, n):
    rng = np.random.default_rng(m + 7 * k)
    GU = random_array((b, m, k), dtype, rng)
    GV = random_array((b, k, n), dtype, rng)
    X = random_array((b, k, k), dtype, rng)
    Y = random_array((b, k, k), dtype, rng)
    for args in ((X, Y, GU, GV), (X, None, GU, None), (None, Y, None, GV)):
        w1, f1 = kernel.phase_check(*args)
        w2, f2 = twin.phase_check(*args)
        assert f1 == f2
        np.testing.assert_allclose(w1, w2, rtol=_tol(dtype))
    if b * k:
        # a phase-invariant pair: Im diag(X + Y) = 0 exactly gives 0
        Xr = (X - 1j * np.imag(np.diagonal(X, 0, 1, 2))[:, :, None] * np.eye(k)).astype(dtype)
        Yr = (Y - 1j * np.imag(np.diagonal(Y, 0, 1, 2))[:, :, None] * np.eye(k)).astype(dtype)
        assert kernel.phase_check(Xr, Yr, GU, GV)[0] == 0
        # and the ratio is |Im X_ii + Im Y_ii| / (‖GU[:, i]‖ + ‖GV[i, :]‖) at the worst entry
        w, f = kernel.phase_check(X, Y, GU, GV)
        bb, i = divmod(f, k)
        ref = abs(X[bb, i, i].imag + Y[bb, i, i].imag) / (
            np.linalg.norm(GU[bb, :, i]) + np.linalg.norm(GV[bb, i, :]))
        np.testing.assert_allclose(w, ref, rtol=_tol(dtype))
    with pytest.raises(TypeError, match="complex"):
        kernel.phase_check(X.real.copy(), None, GU.real.copy(), None)


@pytest.mark.parametrize("dtype", DTYPES)
def test_degenerate_blocks_agree_and_zero_the_pole(dtype):
    """drel: runs of values within drel·scale form blocks whose singular pole is 0 (σF for
    svd, F for eigh) — kernel and twin alike; drel = 0 leaves split values alone."""
    rng = np.random.default_rng(77)
    real = np.finfo(dtype).dtype
    k = 6
    split = 1e-5 if real == np.float32 else 1e-13
    s = np.array([[3.0, 2.0, 2.0 - split, 2.0 - 2 * split, 1.0, 0.5]], real)
    X = random_array((1, k, k), dtype, rng)
    Y = random_array((1, k, k), dtype, rng)
    drel = 10 * split
    for mode in (0, 1, 2):
        got = _run_svd(kernel.svd_core, X, Y, s, None, 0.0, 0.0, mode, dtype)
        ref = _run_svd(twin.svd_core, X, Y, s, None, 0.0, 0.0, mode, dtype)
        plain = _run_svd(kernel.svd_core, X, Y, s, None, 0.0, 0.0, mode, dtype)
        kernel.svd_core(X, Y, s, None, 0.0, 0.0, mode, *got, drel)
        twin.svd_core(X, Y, s, None, 0.0, 0.0, mode, *ref, drel)
        np.testing.assert_allclose(got[0], ref[0], rtol=_tol(dtype), atol=_tol(dtype))
        # in the block (1, 2, 3) only the second pole ½(P − Q)/(s_i + s_j) remains
        P = X - X.conj().transpose(0, 2, 1)
        Q = Y - Y.conj().transpose(0, 2, 1)
        if mode == 0:
            for i, j in ((1, 2), (1, 3), (2, 3), (3, 1)):
                want = 0.5 * (P - Q)[0, i, j] / (s[0, i] + s[0, j])
                assert got[0][0, i, j] == pytest.approx(want, rel=10 * _tol(dtype))
        # outside the block nothing changes; without drel the block's pairs are 1/gap large
        outside = np.ones((k, k), bool)
        outside[1:4, 1:4] = False
        assert np.array_equal(got[0][0][outside], plain[0][0][outside])
        assert np.abs(plain[0][0, 1, 2]) > 1e3 * np.abs(got[0][0, 1, 2])
    w = np.ascontiguousarray(s[:, ::-1])
    outs = [np.empty((1, k, k), dtype) for _ in range(3)]
    kernel.eigh_core(X, w, None, 0.0, 0.0, outs[0], drel)
    twin.eigh_core(X, w, None, 0.0, 0.0, outs[1], drel)
    kernel.eigh_core(X, w, None, 0.0, 0.0, outs[2])
    np.testing.assert_allclose(outs[0], outs[1], rtol=_tol(dtype), atol=_tol(dtype))
    assert np.all(outs[0][0, 2:5, 2:5][~np.eye(3, dtype=bool)] == 0)
    assert np.all(outs[2][0, 2:5, 2:5][~np.eye(3, dtype=bool)] != 0)
