# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The F-matrix of the SVD and eigh pullbacks, fused with the products it feeds.

The reverse rules of ``tf.linalg.svd``/``eigh`` (docs/rules.md) need, per matrix of a stack,
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

which is docs/rules.md's (P_ij s_j + s_i Q_ij)/(s_j² − s_i²) split into its two poles,
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

Degenerate blocks: values closer than δ_b = drel·scale_b (scale_b = s_max for svd,
max|λ| for eigh) in a run of consecutive sorted values form one block; for a pair (i, j)
in one block the pole that is singular there (σF of svd, F of eigh) is 0, its exact limit
for a loss that is invariant under rotations of the block's vectors (for such a loss
P_ij + Q_ij, resp. X_ij − conj(X_ji), is 0 up to rounding, and the broadened F would
multiply that rounding by up to 1/(2ε); docs/degenerate_derivatives.md). drel = 0 makes
blocks of exactly equal values only, where F is already 0: the former results.

ε is per matrix: ε_b = eps + rel·scale_b with scale_b = s_max² (svd: the units of d) or
max|λ| (eigh), so both an absolute ε (rel = 0) and the dtype-aware default (eps = 0,
rel = size·machine eps) are computed here, without an ε array per call. The arithmetic is
in double (s⁴ and d² overflow float32 above s ~ 1e9). A zero denominator (d = 0 and
ε = 0, or s = 0 and ε = 0) gives 0, never NaN.
"""

cimport cython
cimport numpy as cnp
from libc.math cimport fabs, sqrt
from libc.stdlib cimport free, malloc

from tenferro._kernels._small cimport rm_gemm

import numpy as np

from tenferro import _threads
from tenferro._kernels._blas cimport blas_int
from tenferro._kernels._workers cimport run_chunks, work_give, work_take


cnp.import_array()

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




cdef inline Py_ssize_t _run_end(const real_t* x, Py_ssize_t i, Py_ssize_t k,
                                double delta) noexcept nogil:
    """The end (exclusive) of the block of sorted x that holds i: consecutive values
    within delta of each other (either order)."""
    cdef Py_ssize_t e = i + 1
    while e < k and fabs(<double>x[e] - <double>x[e - 1]) <= delta:
        e += 1
    return e


cdef void _svd_one(const scalar_t* X, const scalar_t* Y, const real_t* s, const real_t* sbar,
                   double e2, double delta, Py_ssize_t k, int mode, scalar_t* out,
                   real_t* sinv) noexcept nogil:
    """One matrix (see the module docstring for the formula): X, Y, out row-major k x k,
    s, sbar, sinv of length k; X, Y or sbar NULL when absent; delta the block tolerance."""
    cdef Py_ssize_t i, j, ib, jb, iend, jend, blk
    # double intermediates: s⁴ and d² overflow float32 for s above ~1e9
    cdef double si, sj, d, f, s2, sig, sig2, g
    cdef scalar_t xij = 0, xji = 0, yij = 0, yji = 0, acc_ij, acc_ji, v
    cdef scalar_t pij, pji, qij, qji
    for i in range(k):
        si = s[i]
        s2 = si * si
        sinv[i] = _ratio(s2 * si, s2 * s2 + e2)
        # diagonal: s̄_i + i·Im(X_ii)·sinv_i, then the tall/wide corrections
        v = sbar[i] if sbar != NULL else 0
        if X != NULL:
            xij = X[i * k + i]
            v = v + _i_imag(xij) * sinv[i]
            if mode == 1:
                v = v - xij * sinv[i]
        if Y != NULL and mode == 2:
            v = v - _conj(Y[i * k + i]) * sinv[i]
        out[i * k + i] = v
    # off-diagonal pairs in 32 x 32 blocks, so that X_ji and Y_ji stay in cache
    for ib in range(0, k, 32):
        iend = min(ib + 32, k)
        for jb in range(ib, k, 32):
            jend = min(jb + 32, k)
            for i in range(ib, iend):
                si = s[i]
                blk = _run_end(s, i, k, delta)
                for j in range(max(jb, i + 1), jend):
                    sj = s[j]
                    d = sj * sj - si * si
                    sig = si + sj
                    sig2 = sig * sig
                    # σF ≈ 1/(s_j − s_i); 0 within a degenerate block
                    f = 0 if j < blk else sig * _ratio(d, d * d + e2)
                    g = _ratio(sig2 * sig, sig2 * sig2 + e2)  # G ≈ 1/(s_j + s_i)
                    pij = 0
                    pji = 0
                    qij = 0
                    qji = 0
                    if X != NULL:
                        xij = X[i * k + j]
                        xji = X[j * k + i]
                        pij = xij - _conj(xji)
                        pji = xji - _conj(xij)
                    if Y != NULL:
                        yij = Y[i * k + j]
                        yji = Y[j * k + i]
                        qij = yij - _conj(yji)
                        qji = yji - _conj(yij)
                    # σF is antisymmetric in (i, j), G symmetric
                    acc_ij = 0.5 * (f * (pij + qij) + g * (pij - qij))
                    acc_ji = 0.5 * (g * (pji - qji) - f * (pji + qji))
                    if mode == 1 and X != NULL:
                        acc_ij = acc_ij - xij * sinv[j]
                        acc_ji = acc_ji - xji * sinv[i]
                    elif mode == 2 and Y != NULL:
                        acc_ij = acc_ij - _conj(yji) * sinv[i]
                        acc_ji = acc_ji - _conj(yij) * sinv[j]
                    out[i * k + j] = acc_ij
                    out[j * k + i] = acc_ji


cdef inline double _svd_e2(const real_t* s, Py_ssize_t k, double eps,
                           double rel) noexcept nogil:
    """ε² of one matrix: ε = eps + rel·s_max² (s descending)."""
    cdef double smax = s[0] if k else 0.0
    cdef double e = eps + rel * smax * smax
    return e * e


cdef void _eigh_one(const scalar_t* X, const real_t* w, const real_t* wbar, double e2,
                    double delta, Py_ssize_t k, scalar_t* out) noexcept nogil:
    """One matrix: out_ij = ½F_ij (X_ij − conj(X_ji)), out_ii = λ̄_i (row-major k x k;
    wbar NULL when absent; F_ij = 0 within a block of values closer than delta)."""
    cdef Py_ssize_t i, j, ib, jb, iend, jend, blk
    cdef double d, f
    cdef scalar_t t
    for i in range(k):
        out[i * k + i] = wbar[i] if wbar != NULL else 0
    for ib in range(0, k, 32):
        iend = min(ib + 32, k)
        for jb in range(ib, k, 32):
            jend = min(jb + 32, k)
            for i in range(ib, iend):
                blk = _run_end(w, i, k, delta)
                for j in range(max(jb, i + 1), jend):
                    d = w[j] - w[i]
                    f = 0 if j < blk else _ratio(d, d * d + e2)
                    t = (0.5 * f) * (X[i * k + j] - _conj(X[j * k + i]))
                    out[i * k + j] = t
                    out[j * k + i] = _conj(t)


cdef inline double _eigh_e2(const real_t* w, Py_ssize_t k, double eps,
                            double rel) noexcept nogil:
    """ε² of one matrix: ε = eps + rel·max|λ| (w ascending: max |λ| is at an end)."""
    cdef double e = eps + (rel * max(fabs(w[0]), fabs(w[k - 1])) if k else 0.0)
    return e * e


cdef inline double _svd_delta(const real_t* s, Py_ssize_t k, double drel) noexcept nogil:
    """The block tolerance of one matrix: δ = drel·s_max (s descending)."""
    return drel * s[0] if k else 0.0


cdef inline double _eigh_delta(const real_t* w, Py_ssize_t k, double drel) noexcept nogil:
    """The block tolerance of one matrix: δ = drel·max|λ| (w ascending)."""
    return drel * max(fabs(w[0]), fabs(w[k - 1])) if k else 0.0


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


cdef object _contig(object a):
    """``a`` (an ndarray or None) C-contiguous: itself when it is, else a copy."""
    if a is None or (type(a) is np.ndarray and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)):
        return a
    return np.ascontiguousarray(a)


# ---- the fused pullbacks: Ā of one matrix from its cotangents --------------------------
# X = UᴴŪ and Y = VᴴV̄ (two products), the core above, then the two products to Ā: for
# small matrices the four NumPy matmuls around the core cost more than their arithmetic
# (~10k instructions each at n = 16, mostly NumPy's call overhead). Here every product is a
# row-major rm_gemm (the plain loops of _small.pxd up to _LOOPS, else BLAS), on one
# workspace per chunk of the stack. The twins (spectral_twin.py) compose the cores'
# twins with NumPy's matmul; tests/_kernels/test_spectral.py compares them.

cdef enum:
    # Products whose every side is at most _LOOPS take the plain loops of _small.pxd,
    # larger ones BLAS (a fixed choice by size, so the bits never depend on the thread
    # count). Measured (callgrind, the svd pullback alone): at n = 8 the loops and BLAS
    # cost the same (73k / 69k instructions), at n = 16 the loops 143k and BLAS 95k. The
    # loops take no OpenBLAS lock, so stacks of matrices up to 8 x 8 split over threads
    # (tenferro/_threads.py); larger ones run serially.
    _LOOPS = 8


cdef void _svd_backward_one(const scalar_t* U, const real_t* s, const scalar_t* VT,
                            const scalar_t* GU, const real_t* sbar, const scalar_t* GVT,
                            double e2, double delta, Py_ssize_t m, Py_ssize_t n,
                            Py_ssize_t k, scalar_t* out, scalar_t* work,
                            real_t* sinv) noexcept nogil:
    """Ā (m x n) of one thin SVD (k = min(m, n)); GU, sbar or GVT NULL when absent.
    work: 3k² + max(m, n)·k entries; sinv: k."""
    cdef scalar_t* X = work
    cdef scalar_t* Y = work + k * k
    cdef scalar_t* core = work + 2 * k * k
    cdef scalar_t* T = work + 3 * k * k
    cdef int mode = 0 if m == n else (1 if m > n else 2)
    cdef Py_ssize_t i, j
    cdef scalar_t one = 1, zero = 0, beta = 0
    if GU != NULL:
        rm_gemm(c'C', c'N', k, k, m, one, U, k, GU, k, zero, X, k, _LOOPS)      # UᴴŪ
    if GVT != NULL:
        rm_gemm(c'N', c'C', k, k, n, one, VT, n, GVT, n, zero, Y, k, _LOOPS)    # VᴴV̄
    _svd_one(X if GU != NULL else NULL, Y if GVT != NULL else NULL, s, sbar, e2, delta, k,
             mode, core, sinv)
    if mode == 2 and GVT != NULL:
        # wide: Ā = U[core·Vᴴ + S⁻¹V̄ᴴ]
        for i in range(k):
            for j in range(n):
                T[i * n + j] = GVT[i * n + j] * sinv[i]
        rm_gemm(c'N', c'N', k, n, k, one, core, k, VT, n, one, T, n, _LOOPS)
        rm_gemm(c'N', c'N', m, n, k, one, U, k, T, n, zero, out, n, _LOOPS)
        return
    if mode == 1 and GU != NULL:
        # tall: Ā = [U·core + ŪS⁻¹]Vᴴ
        for i in range(m):
            for j in range(k):
                T[i * k + j] = GU[i * k + j] * sinv[j]
        beta = 1
    rm_gemm(c'N', c'N', m, k, k, one, U, k, core, k, beta, T, k, _LOOPS)
    rm_gemm(c'N', c'N', m, n, k, one, T, k, VT, n, zero, out, n, _LOOPS)


# ---- the stacks on the native workers (tenferro/_kernels/_workers.pyx) ---------------

cdef enum:
    OK = -1                 # run_chunks' "no failure"
    NO_MEMORY = -4
    SVD_CORE = 0            # the kinds of _SpecJob
    EIGH_CORE = 1
    SVD_BACKWARD = 2
    EIGH_BACKWARD = 3


cdef struct _SpecJob:      # one call of a kernel of this module, for run_chunks
    int kind                  # SVD_CORE ... EIGH_BACKWARD
    int code                  # 0..3: float, double, float complex, double complex
    const char* p[6]          # the operands, C-ordered, in the kernel's argument order
    char* out                 # (nb, rows, cols)
    char* sinv                # svd_core's second output (nb, k)
    Py_ssize_t m, n, k
    int mode                  # svd_core's 0 square, 1 tall, 2 wide
    double eps, rel
    double drel               # the block tolerance relative to the spectrum's scale


cdef inline int _typenum(str c) noexcept:
    """The NumPy type number of the dtype char c (one of "fdFD"), else -1."""
    if c == "d":
        return cnp.NPY_DOUBLE
    if c == "D":
        return cnp.NPY_CDOUBLE
    if c == "f":
        return cnp.NPY_FLOAT
    if c == "F":
        return cnp.NPY_CFLOAT
    return -1


cdef inline bint _fits(object a, int typ, tuple shape) noexcept:
    """``a`` is a C-contiguous, aligned, native ndarray of type ``typ`` and ``shape``
    (read from the array struct: ~1 µs less over a kernel's operands than through the
    dtype and shape attributes)."""
    cdef cnp.ndarray arr
    cdef int i, nd
    if type(a) is not np.ndarray:
        return False
    arr = <cnp.ndarray>a
    nd = len(shape)
    if (cnp.PyArray_TYPE(arr) != typ or cnp.PyArray_NDIM(arr) != nd
            or not cnp.PyArray_ISCARRAY_RO(arr) or not cnp.PyArray_ISNOTSWAPPED(arr)):
        return False
    for i in range(nd):
        if cnp.PyArray_DIMS(arr)[i] != <cnp.npy_intp>(<Py_ssize_t>shape[i]):
            return False
    return True


cdef const char* _cptr(object a, str c, tuple shape) except? NULL:
    """Data pointer of ``a``, a C-contiguous ndarray of dtype char ``c`` and the given
    shape (what the typed memoryviews of these kernels checked); NULL for None."""
    if a is None:
        return NULL
    if not _fits(a, _typenum(c), shape):
        raise ValueError(f"expected a C-contiguous {np.dtype(c)} array of shape {shape}, "
                         f"got {getattr(a, 'dtype', type(a))} {getattr(a, 'shape', '')}")
    return <const char*>cnp.PyArray_DATA(<cnp.ndarray>a)


cdef tuple _prepare(_SpecJob* job, int kind, str name, object out, tuple out_shape,
                    tuple arrays, str kinds, tuple shapes):
    """The one set-up of the entry points: out's dtype char c must be one of "fdFD"
    (TypeError naming the entry point ``name`` otherwise); None for an empty stack (a 0
    in ``out_shape``); else sets job's kind, dtype code, operands (_operands: arrays of
    dtype char c for kinds[i] "c", of its real counterpart for "r") and out (checked
    against out_shape), and returns the operands, which the caller holds while the job
    runs."""
    c = out.dtype.char
    if c not in "dDfF":
        raise TypeError(f"{name}: unsupported dtype {out.dtype}")
    if 0 in out_shape:
        return None
    job.kind, job.code = kind, "fdFD".index(c)
    ops = _operands(job, c, arrays, kinds, shapes)
    job.out = <char*>_cptr(out, c, out_shape)
    return ops


cdef tuple _operands(_SpecJob* job, str c, tuple arrays, str kinds, tuple shapes):
    """job.p[i] := the checked data pointer of arrays[i] made C-contiguous (_contig), of
    dtype char ``c`` (kinds[i] "c") or its real counterpart (kinds[i] "r"); returns those
    arrays, which the caller holds while the job runs."""
    ops = tuple([_contig(a) for a in arrays])
    cdef str r = c.lower()
    for i in range(len(ops)):
        job.p[i] = _cptr(ops[i], c if kinds[i] == "c" else r, shapes[i])
    return ops


cdef Py_ssize_t _run_spec(_SpecJob* job, Py_ssize_t nb, Py_ssize_t side,
                          Py_ssize_t work, bint blas3) except? -2:
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef int t = 1 if nb < 2 else _threads._threads_for(nb, side, work, blas3)
    with nogil:
        bad = run_chunks(_spec_chunk, job, nb, t, &info)
    if bad == NO_MEMORY:
        raise MemoryError()
    return bad


cdef Py_ssize_t _spec_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                            blas_int* info) noexcept nogil:
    cdef _SpecJob* j = <_SpecJob*>ctx
    if j.code == 0:
        return _spec_rows(j, b0, b1, <float*>NULL, <float*>NULL)
    if j.code == 1:
        return _spec_rows(j, b0, b1, <double*>NULL, <double*>NULL)
    if j.code == 2:
        return _spec_rows(j, b0, b1, <float complex*>NULL, <float*>NULL)
    return _spec_rows(j, b0, b1, <double complex*>NULL, <double*>NULL)


cdef Py_ssize_t _spec_rows(_SpecJob* j, Py_ssize_t b0, Py_ssize_t b1, scalar_t* tag,
                           real_t* rtag) noexcept nogil:
    """Matrices [b0, b1) of the job (scalar_t, real_t: the dtype and its real type)."""
    cdef Py_ssize_t m = j.m, n = j.n, k = j.k, b
    cdef const scalar_t* X
    cdef const scalar_t* Y
    cdef const scalar_t* V
    cdef const scalar_t* VT
    cdef const scalar_t* G1
    cdef const scalar_t* G2
    cdef const real_t* ev
    cdef const real_t* bar
    cdef scalar_t* out = <scalar_t*>j.out
    cdef scalar_t* work = NULL
    cdef real_t* sinv = NULL
    cdef size_t wbytes = 0
    cdef scalar_t one = 1, zero = 0
    if j.kind == SVD_CORE:           # p: X, Y, s, sbar
        X, Y = <const scalar_t*>j.p[0], <const scalar_t*>j.p[1]
        ev, bar = <const real_t*>j.p[2], <const real_t*>j.p[3]
        for b in range(b0, b1):
            _svd_one(X + b * k * k if X != NULL else NULL,
                     Y + b * k * k if Y != NULL else NULL, ev + b * k,
                     bar + b * k if bar != NULL else NULL,
                     _svd_e2(ev + b * k, k, j.eps, j.rel), _svd_delta(ev + b * k, k, j.drel),
                     k, j.mode, out + b * k * k,
                     <real_t*>j.sinv + b * k)
    elif j.kind == EIGH_CORE:        # p: X, w, wbar
        X = <const scalar_t*>j.p[0]
        ev, bar = <const real_t*>j.p[1], <const real_t*>j.p[2]
        for b in range(b0, b1):
            _eigh_one(X + b * k * k, ev + b * k, bar + b * k if bar != NULL else NULL,
                      _eigh_e2(ev + b * k, k, j.eps, j.rel),
                      _eigh_delta(ev + b * k, k, j.drel), k, out + b * k * k)
    elif j.kind == SVD_BACKWARD:     # p: U, s, VT, GU, sbar, GVT
        V, ev, VT = <const scalar_t*>j.p[0], <const real_t*>j.p[1], <const scalar_t*>j.p[2]
        G1, bar, G2 = (<const scalar_t*>j.p[3], <const real_t*>j.p[4],
                       <const scalar_t*>j.p[5])
        wbytes = sizeof(scalar_t) * (3 * k * k + max(m, n) * k)
        work = <scalar_t*>work_take(wbytes)
        sinv = <real_t*>malloc(sizeof(real_t) * k)
        if work == NULL or sinv == NULL:
            work_give(work, wbytes)
            free(sinv)
            return NO_MEMORY
        for b in range(b0, b1):
            _svd_backward_one(V + b * m * k, ev + b * k, VT + b * k * n,
                              G1 + b * m * k if G1 != NULL else NULL,
                              bar + b * k if bar != NULL else NULL,
                              G2 + b * k * n if G2 != NULL else NULL,
                              _svd_e2(ev + b * k, k, j.eps, j.rel),
                              _svd_delta(ev + b * k, k, j.drel), m, n, k,
                              out + b * m * n, work, sinv)
        work_give(work, wbytes)
        free(sinv)
    else:                            # EIGH_BACKWARD, p: V, w, GV, wbar
        V, ev = <const scalar_t*>j.p[0], <const real_t*>j.p[1]
        G1, bar = <const scalar_t*>j.p[2], <const real_t*>j.p[3]
        wbytes = sizeof(scalar_t) * 3 * k * k
        work = <scalar_t*>work_take(wbytes)
        if work == NULL:
            return NO_MEMORY
        for b in range(b0, b1):
            rm_gemm(c'C', c'N', k, k, k, one, V + b * k * k, k, G1 + b * k * k, k, zero,
                    work, k, _LOOPS)                                       # X = VᴴV̄
            _eigh_one(work, ev + b * k, bar + b * k if bar != NULL else NULL,
                      _eigh_e2(ev + b * k, k, j.eps, j.rel),
                      _eigh_delta(ev + b * k, k, j.drel), k, work + k * k)
            rm_gemm(c'N', c'N', k, k, k, one, V + b * k * k, k, work + k * k, k, zero,
                    work + 2 * k * k, k, _LOOPS)                           # V·core
            rm_gemm(c'N', c'C', k, k, k, one, work + 2 * k * k, k, V + b * k * k, k, zero,
                    out + b * k * k, k, _LOOPS)                            # ·Vᴴ
        work_give(work, wbytes)
    return OK


def svd_backward(u, s, vt, gu, sbar, gvt, double eps, double rel, out, double drel=0.0):
    """Fill ``out`` (B, m, n) with Ā of the thin SVD a = u·diag(s)·vt: u (B, m, k),
    s (B, k) real, vt (B, k, n) with k = min(m, n); the cotangents gu (like u), sbar
    (like s) and gvt (like vt), each None when absent (not all three: the caller takes
    the exact path Ā = U diag(s̄) Vᴴ then); ε_b = eps + rel·s_max² and the block
    tolerance δ_b = drel·s_max as in svd_core."""
    cdef Py_ssize_t nb = u.shape[0], m = u.shape[1], k = u.shape[2], n = vt.shape[2]
    cdef _SpecJob job
    ops = _prepare(&job, SVD_BACKWARD, "svd_backward", out, (nb, m, n),
                   (u, s, vt, gu, sbar, gvt), "crccrc",
                   ((nb, m, k), (nb, k), (nb, k, n), (nb, m, k), (nb, k), (nb, k, n)))
    if ops is None:
        return
    job.m, job.n, job.k, job.eps, job.rel, job.drel = m, n, k, eps, rel, drel
    _run_spec(&job, nb, max(m, n), nb * (3 * k * k + 4 * m * n * k), max(m, n) > _LOOPS)


def eigh_backward(v, w, gv, wbar, double eps, double rel, out, double drel=0.0):
    """Fill ``out`` (B, k, k) with Ā = V·core·Vᴴ of the Hermitian eigendecomposition
    (w (B, k) ascending, v (B, k, k)) from the cotangents gv (like v) and wbar (like w,
    or None); the core is eigh_core's of X = VᴴV̄, ε_b = eps + rel·max|λ|, the block
    tolerance δ_b = drel·max|λ|."""
    cdef Py_ssize_t nb = v.shape[0], k = v.shape[1]
    cdef _SpecJob job
    ops = _prepare(&job, EIGH_BACKWARD, "eigh_backward", out, (nb, k, k), (v, w, gv, wbar),
                   "crcr", ((nb, k, k), (nb, k), (nb, k, k), (nb, k)))
    if ops is None:
        return
    job.k, job.eps, job.rel, job.drel = k, eps, rel, drel
    _run_spec(&job, nb, k, nb * (k * k + 6 * k * k * k), k > _LOOPS)


def svd_core(X, Y, s, sbar, double eps, double rel, int mode, out, sinv, double drel=0.0):
    """Fill ``out`` (B, k, k) and ``sinv`` (B, k) with the SVD pullback core (see the
    module docstring). X, Y: (B, k, k) of out's dtype, or None; s and sbar (or None):
    (B, k) of the matching real dtype; ε_b = eps + rel·s_max², the block tolerance
    δ_b = drel·s_max. mode: 0 square, 1 tall (m > n), 2 wide (m < n)."""
    cdef Py_ssize_t nb = out.shape[0], k = out.shape[1]
    cdef _SpecJob job
    ops = _prepare(&job, SVD_CORE, "svd_core", out, (nb, k, k), (X, Y, s, sbar), "ccrr",
                   ((nb, k, k), (nb, k, k), (nb, k), (nb, k)))
    if ops is None:
        return
    job.sinv = <char*>_cptr(sinv, out.dtype.char.lower(), (nb, k))
    job.k, job.mode, job.eps, job.rel, job.drel = k, mode, eps, rel, drel
    # split over the native workers (bit-identical: each b is independent)
    _run_spec(&job, nb, k, 3 * nb * k * k, False)


def eigh_core(X, w, wbar, double eps, double rel, out, double drel=0.0):
    """Fill ``out`` (B, k, k) with the eigh pullback core (see the module docstring).
    X: (B, k, k) of out's dtype; w and wbar (or None): (B, k) real; ε_b = eps + rel·max|λ|,
    the block tolerance δ_b = drel·max|λ|."""
    cdef Py_ssize_t nb = out.shape[0], k = out.shape[1]
    cdef _SpecJob job
    ops = _prepare(&job, EIGH_CORE, "eigh_core", out, (nb, k, k), (X, w, wbar), "crr",
                   ((nb, k, k), (nb, k), (nb, k)))
    if ops is None:
        return
    job.k, job.eps, job.rel, job.drel = k, eps, rel, drel
    _run_spec(&job, nb, k, nb * k * k, False)
