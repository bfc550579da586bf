# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The F-matrix of the SVD and eigh pullbacks, fused with the products it feeds.

The reverse rules of ``tf.linalg.svd``/``eigh`` (RULES.md) need, per matrix of a stack,
a k x k core built elementwise from X = UᴴŪ, Y = VᴴV̄, the spectrum and the broadened
gap inverse F_ij = d/(d² + ε²). In NumPy that is a dozen k x k temporaries (d, d², F,
Xᴴ, X − Xᴴ, products with s, ...); here it is one pass over the (i, j) pairs of the
output, reading X_ij, X_ji, Y_ij, Y_ji once and writing out_ij and out_ji (F_ji = −F_ij,
so one division serves both). The loop over the stack runs without the GIL.

Every function has a NumPy twin of the same name and signature in ``spectral_twin.py``
("spectral twins"); ``tests/_kernels/test_spectral.py`` checks that both agree.

SVD core (k = len(s), mode 0 square, 1 tall m > n, 2 wide m < n), for i != j, with
P_ij = X_ij − conj(X_ji), Q_ij = Y_ij − conj(Y_ji), σ = s_i + s_j, d = s_j² − s_i²::

    out_ij = ½(P_ij + Q_ij)·σ·F_ij + ½(P_ij − Q_ij)·G_ij,   G_ij = σ³/(σ⁴ + ε²)

which is RULES.md's (P_ij s_j + s_i Q_ij)/(s_j² − s_i²) split into its two poles,
½(P + Q)/(s_j − s_i) + ½(P − Q)/(s_j + s_i): only the first is singular at a repeated
singular value (and vanishes there for a loss that is invariant under rotations of the
degenerate vectors), so only it is broadened by F; the second stays exact unless s_i and
s_j are both ~0. Broadening the whole 1/(s_j² − s_i²) would drop the finite ½(P − Q)/(2s)
at a degeneracy: d/dA of sum(C * (U S Vᴴ)) would not be C there.
    out_ii = s̄_i + i·Im(X_ii)·sinv_i                 (the imaginary part: complex only)
    tall: out_ij −= X_ij·sinv_j        wide: out_ij −= conj(Y_ji)·sinv_i
    sinv_i = s_i³/(s_i⁴ + ε²)          (1/s_i broadened like F with a zero singular value)

so that Ā = U·out·Vᴴ (square), (U·out + Ū·diag(sinv))·Vᴴ (tall), U·(out·Vᴴ + diag(sinv)·V̄ᴴ)
(wide). Missing cotangents (X, Y or s̄ = None) are structural zeros.

eigh core, for i != j: out_ij = ½F_ij (X_ij − conj(X_ji)) with d = λ_j − λ_i; out_ii = λ̄_i;
so that Ā = V·out·Vᴴ (Hermitian).

ε is per matrix: ε_b = eps + rel·scale_b with scale_b = s_max² (svd: the units of d) or
max|λ| (eigh), so both an absolute ε (rel = 0) and the dtype-aware default (eps = 0,
rel = size·machine eps) are computed here, without an ε array per call. The arithmetic is
in double (s⁴ and d² overflow float32 above s ~ 1e9). A zero denominator (d = 0 and
ε = 0, or s = 0 and ε = 0) gives 0, never NaN.
"""

cimport cython
from libc.math cimport fabs, sqrt

from tenferro._threads import run_split as _run_split

ctypedef fused scalar_t:
    float
    double
    float complex
    double complex

ctypedef fused real_t:
    float
    double


ctypedef fused complex_t:
    float complex
    double complex


cdef inline scalar_t _conj(scalar_t z) noexcept nogil:
    if scalar_t is float or scalar_t is double:
        return z
    else:
        return z.conjugate()


cdef inline scalar_t _i_imag(scalar_t z) noexcept nogil:
    """i·Im(z) (0 for real types)."""
    if scalar_t is float or scalar_t is double:
        return 0
    else:
        return z - z.real


cdef inline double _ratio(double num, double den) noexcept nogil:
    return 0 if den == 0 else num / den




cdef void _svd_one(const scalar_t[:, :, :] X, const scalar_t[:, :, :] Y,
                   const real_t[:, :] s, const real_t[:, :] sbar, double e2, Py_ssize_t b,
                   int mode, bint has_x, bint has_y, bint has_sbar, scalar_t[:, :, ::1] out,
                   real_t[:, ::1] sinv) noexcept nogil:
    """Matrix b of the stack (see the module docstring for the formula)."""
    cdef Py_ssize_t k = s.shape[1]
    cdef Py_ssize_t i, j, ib, jb, iend, jend
    # double intermediates: s⁴ and d² overflow float32 for s above ~1e9
    cdef double si, sj, d, f, s2, sig, sig2, g
    cdef scalar_t xij = 0, xji = 0, yij = 0, yji = 0, acc_ij, acc_ji, v
    cdef scalar_t pij, pji, qij, qji
    for i in range(k):
        si = s[b, i]
        s2 = si * si
        sinv[b, i] = _ratio(s2 * si, s2 * s2 + e2)
        # diagonal: s̄_i + i·Im(X_ii)·sinv_i, then the tall/wide corrections
        v = sbar[b, i] if has_sbar else 0
        if has_x:
            xij = X[b, i, i]
            v = v + _i_imag(xij) * sinv[b, i]
            if mode == 1:
                v = v - xij * sinv[b, i]
        if has_y and mode == 2:
            v = v - _conj(Y[b, i, i]) * sinv[b, i]
        out[b, i, i] = v
    # off-diagonal pairs in 32 x 32 blocks, so that X_ji and Y_ji stay in cache
    for ib in range(0, k, 32):
        iend = min(ib + 32, k)
        for jb in range(ib, k, 32):
            jend = min(jb + 32, k)
            for i in range(ib, iend):
                si = s[b, i]
                for j in range(max(jb, i + 1), jend):
                    sj = s[b, j]
                    d = sj * sj - si * si
                    sig = si + sj
                    sig2 = sig * sig
                    f = sig * _ratio(d, d * d + e2)         # σF ≈ 1/(s_j − s_i)
                    g = _ratio(sig2 * sig, sig2 * sig2 + e2)  # G ≈ 1/(s_j + s_i)
                    pij = 0
                    pji = 0
                    qij = 0
                    qji = 0
                    if has_x:
                        xij = X[b, i, j]
                        xji = X[b, j, i]
                        pij = xij - _conj(xji)
                        pji = xji - _conj(xij)
                    if has_y:
                        yij = Y[b, i, j]
                        yji = Y[b, j, i]
                        qij = yij - _conj(yji)
                        qji = yji - _conj(yij)
                    # σF is antisymmetric in (i, j), G symmetric
                    acc_ij = 0.5 * (f * (pij + qij) + g * (pij - qij))
                    acc_ji = 0.5 * (g * (pji - qji) - f * (pji + qji))
                    if mode == 1 and has_x:
                        acc_ij = acc_ij - xij * sinv[b, j]
                        acc_ji = acc_ji - xji * sinv[b, i]
                    elif mode == 2 and has_y:
                        acc_ij = acc_ij - _conj(yji) * sinv[b, i]
                        acc_ji = acc_ji - _conj(yij) * sinv[b, j]
                    out[b, i, j] = acc_ij
                    out[b, j, i] = acc_ji


cdef void _svd_batch(const scalar_t[:, :, :] X, const scalar_t[:, :, :] Y,
                     const real_t[:, :] s, const real_t[:, :] sbar, double eps, double rel,
                     int mode, scalar_t[:, :, ::1] out, real_t[:, ::1] sinv):
    cdef bint has_x = X is not None, has_y = Y is not None, has_sbar = sbar is not None
    cdef Py_ssize_t b
    cdef double e, smax
    with nogil:
        for b in range(out.shape[0]):
            smax = s[b, 0] if s.shape[1] else 0.0     # descending
            e = eps + rel * smax * smax
            _svd_one(X, Y, s, sbar, e * e, b, mode, has_x, has_y, has_sbar, out, sinv)


cdef void _eigh_batch(const scalar_t[:, :, :] X, const real_t[:, :] w,
                      const real_t[:, :] wbar, double eps, double rel,
                      scalar_t[:, :, ::1] out):
    cdef bint has_wbar = wbar is not None
    cdef Py_ssize_t b, i, j, ib, jb, iend, jend
    cdef Py_ssize_t k = out.shape[1]
    cdef double d, f, e, e2
    cdef scalar_t t
    with nogil:
        for b in range(out.shape[0]):
            e = eps + (rel * max(fabs(w[b, 0]), fabs(w[b, k - 1]))
                       if k else 0.0)         # ascending: max |λ| is at an end
            e2 = e * e
            for i in range(k):
                out[b, i, i] = wbar[b, i] if has_wbar else 0
            for ib in range(0, k, 32):
                iend = min(ib + 32, k)
                for jb in range(ib, k, 32):
                    jend = min(jb + 32, k)
                    for i in range(ib, iend):
                        for j in range(max(jb, i + 1), jend):
                            d = w[b, j] - w[b, i]
                            f = _ratio(d, d * d + e2)
                            t = (0.5 * f) * (X[b, i, j] - _conj(X[b, j, i]))
                            out[b, i, j] = t
                            out[b, j, i] = _conj(t)


cdef (double, Py_ssize_t) _phase_batch(const complex_t[:, :, :] X,
                                       const complex_t[:, :, :] Y,
                                       const complex_t[:, :, :] GU,
                                       const complex_t[:, :, :] GV):
    cdef bint has_x = X is not None, has_y = Y is not None
    cdef Py_ssize_t B = X.shape[0] if has_x else Y.shape[0]
    cdef Py_ssize_t k = X.shape[1] if has_x else Y.shape[1]
    cdef Py_ssize_t b, i, r
    cdef double num, den, c, ratio, worst = 0
    cdef Py_ssize_t where = 0
    with nogil:
        for b in range(B):
            for i in range(k):
                num = 0
                den = 0
                if has_x:
                    num = X[b, i, i].imag
                    c = 0
                    for r in range(GU.shape[1]):
                        c = c + GU[b, r, i].real * GU[b, r, i].real \
                            + GU[b, r, i].imag * GU[b, r, i].imag
                    den = sqrt(c)
                if has_y:
                    num = num + Y[b, i, i].imag
                    c = 0
                    for r in range(GV.shape[2]):
                        c = c + GV[b, i, r].real * GV[b, i, r].real \
                            + GV[b, i, r].imag * GV[b, i, r].imag
                    den = den + sqrt(c)
                num = fabs(num)
                if num == 0:
                    continue
                ratio = num / den if den > 0 else 1e300
                if ratio > worst:
                    worst = ratio
                    where = b * k + i
    return worst, where


def phase_check(X, Y, GU, GV):
    """The gauge check of the complex SVD/eigh pullbacks: ``(worst, flat)``, the largest
    |Im(X_ii + Y_ii)| / (‖GU[b, :, i]‖ + ‖GV[b, i, :]‖) over the stack and its position
    b·k + i. X = UᴴŪ with GU = Ū (columns), Y = VᴴV̄ with GV = V̄ᴴ = gvt (rows); either
    pair may be None (eigh: Y = GV = None). Complex dtypes only."""
    c = (X if X is not None else Y).dtype.char
    if c == "D":
        return _phase_batch[cython.doublecomplex](X, Y, GU, GV)
    if c == "F":
        return _phase_batch[cython.floatcomplex](X, Y, GU, GV)
    raise TypeError(f"phase_check: complex input expected, got dtype char {c!r}")


def svd_core(X, Y, s, sbar, double eps, double rel, int mode, out, sinv):
    """Fill ``out`` (B, k, k) and ``sinv`` (B, k) with the SVD pullback core (see the
    module docstring). X, Y: (B, k, k) of out's dtype, or None; s and sbar (or None):
    (B, k) of the matching real dtype; ε_b = eps + rel·s_max². mode: 0 square, 1 tall
    (m > n), 2 wide (m < n)."""
    c = out.dtype.char
    if c not in "dDfF":
        raise TypeError(f"svd_core: unsupported dtype {out.dtype}")
    cdef Py_ssize_t nb = out.shape[0], k = out.shape[1]
    # split over tenferro._threads' threads (bit-identical: each b is independent)
    _run_split(_svd_core_part, nb, k, 3 * nb * k * k, (X, Y, s, sbar, out, sinv),
               (c, eps, rel, mode))


def _svd_core_part(X, Y, s, sbar, out, sinv, str c, double eps, double rel, int mode):
    """svd_core on a contiguous chunk of the stack; returns (OK, 0) for run_split."""
    if c == "d":
        _svd_batch[double, double](X, Y, s, sbar, eps, rel, mode, out, sinv)
    elif c == "D":
        _svd_batch[cython.doublecomplex, double](X, Y, s, sbar, eps, rel, mode, out, sinv)
    elif c == "f":
        _svd_batch[float, float](X, Y, s, sbar, eps, rel, mode, out, sinv)
    else:
        _svd_batch[cython.floatcomplex, float](X, Y, s, sbar, eps, rel, mode, out, sinv)
    return -1, 0


def eigh_core(X, w, wbar, double eps, double rel, out):
    """Fill ``out`` (B, k, k) with the eigh pullback core (see the module docstring).
    X: (B, k, k) of out's dtype; w and wbar (or None): (B, k) real; ε_b = eps + rel·max|λ|."""
    c = out.dtype.char
    if c not in "dDfF":
        raise TypeError(f"eigh_core: unsupported dtype {out.dtype}")
    cdef Py_ssize_t nb = out.shape[0], k = out.shape[1]
    _run_split(_eigh_core_part, nb, k, nb * k * k, (X, w, wbar, out), (c, eps, rel))


def _eigh_core_part(X, w, wbar, out, str c, double eps, double rel):
    """eigh_core on a contiguous chunk of the stack; returns (OK, 0) for run_split."""
    if c == "d":
        _eigh_batch[double, double](X, w, wbar, eps, rel, out)
    elif c == "D":
        _eigh_batch[cython.doublecomplex, double](X, w, wbar, eps, rel, out)
    elif c == "f":
        _eigh_batch[float, float](X, w, wbar, eps, rel, out)
    else:
        _eigh_batch[cython.floatcomplex, float](X, w, wbar, eps, rel, out)
    return -1, 0
