# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""Matrix inverse from getrf's LU factors, with the flops on gemm/trmm-rich recursive
blocks: ``lu_inverse(lu, piv, scale, trans)`` = scale·A⁻¹, scale·A⁻ᵀ or scale·A⁻ᴴ.

With A = P L U (getrf), A⁻¹ = U⁻¹ L⁻¹ Pᵀ. Per matrix, in a Fortran n x n buffer W that
starts as a copy of the packed factors (U on and above the diagonal, L's multipliers
below it, L's unit diagonal implied):

1. both triangles inverted in place, recursively on halves
       [[A, B], [0, C]]⁻¹ = [[A⁻¹, −A⁻¹BC⁻¹], [0, C⁻¹]]        (U, then B by two trmm)
       [[A, 0], [B, C]]⁻¹ = [[A⁻¹, 0], [−C⁻¹BA⁻¹, C⁻¹]]        (unit L, likewise)
   n³/3 flops each, all in trmm below the base size;
2. X = U⁻¹·L⁻¹ (upper times unit lower, both packed in W) in place, recursively:
       X₁₁ = U₁₁L₁₁ + U₁₂L₂₁  (recursion, then one gemm),  X₁₂ = U₁₂L₂₂ (trmm),
       X₂₁ = U₂₂L₂₁ (trmm),     X₂₂ = U₂₂L₂₂ (recursion)
   2n³/3 flops;
3. A⁻¹ = X Pᵀ: LAPACK's interchanges applied to X's columns in reverse order (as getri).

4n³/3 flops in all (getrs on an identity takes 2n³, getri 4n³/3 but with half of it in
trsm, which runs at a third of gemm's speed on OpenBLAS). Below NB the triangles and the
product are plain loops (the trmv/"method 2" column sweeps of LAPACK's ?trti2).

Stability. This is the classical "invert both factors, then multiply" method analysed
by Du Croz & Higham (Stability of methods for matrix inversion, IMA J. Numer. Anal. 12,
1992): every step is a triangular inversion or a product of computed triangular inverses,
so the forward error is bounded by terms like c_n·u·|U⁻¹||U||U⁻¹||L⁻¹|, of the same kind
as for getri (which inverts U the same way and then solves XL = U⁻¹); with partial
pivoting |L| <= 1, so the error grows with cond(A) as for a getrs-based inverse.
Measured (n = 120, cond(A) = 1e4..1e16, float64 and complex128): normwise residuals
‖XA − I‖/(‖A‖‖X‖) 1e-16..2e-15 and ‖AX − I‖/(‖A‖‖X‖) 4e-16..1e-15, against
8e-16..1.5e-15 and 4e-17..2e-16 for getrs(I) and numpy's getri;
tests/_kernels/test_inverse.py checks it.

Layout. getrf returns per-matrix Fortran views (copied into W by one memcpy). The
memory of a C-ordered Y is the Fortran Yᵀ, and (s·A⁻ᴴ)ᵀ = s·conj(A⁻¹), (s·A⁻ᵀ)ᵀ = s·A⁻¹:
for trans = 2 or 1 W is the output itself, scaled (and conjugated) in place, with no
transposing copy. For trans = 0 W is a work buffer copied out transposed.

The NumPy twin is ``lu_inverse`` in ``inverse_twin.py``; ``tests/_kernels/test_inverse.py``
checks that both agree.
"""
cimport cython
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from cpython.buffer cimport (PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_STRIDES,
                            PyBUF_WRITABLE,
                            PyBuffer_Release,
                            PyObject_GetBuffer)
from libc.math cimport INFINITY, fabs, hypot, log, logf

cimport scipy.linalg.cython_blas as bl

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t
from tenferro._kernels._small cimport SMALL_MAX, SMALL_N, s_getrf
from tenferro._kernels._xlapack cimport xgetrf
from tenferro._kernels._workers cimport run_chunks, work_give, work_take

import numpy as np

from tenferro._kernels import inverse_twin as _ref
from tenferro import _threads

__all__ = ["lu_inverse", "pivot_parity", "pivot_perm", "tiny_pivots", "lu_det"]

# Base size of the recursions: blocks of at most NB columns are done by plain loops.
# Measured (f64, one thread, NB = 6/8/12/24): 8 or 12 is best at every n = 16...256
# (docs/guide/kernels.md, "Kernel constants").
cdef Py_ssize_t NB = 8


# Largest triangle _trmm_r hands to BLAS trmm whole (measured like NB).
cdef blas_int TB = 48


def _set_block(Py_ssize_t nb, Py_ssize_t tb=64):
    """Set the base sizes of the recursions (benchmarks and tests only)."""
    global NB, TB
    NB = nb if nb > 1 else 2
    TB = <blas_int>(tb if tb > 1 else 2)


cdef str _CHARS = "fdFD"

# np.newaxis as an opaque object (Cython would compile ``m[None]`` with an integer fast
# path that the C compiler warns about)
cdef object _NEWAXIS = None

cdef enum:
    OK = -1
    NON_FINITE = -2
    NO_MEMORY = -4


# ---- BLAS (declared here: _blas.pxd's xgemm has fixed alpha/beta and no trmm) ----------

cdef inline void _trmm(char side, char uplo, char diag, blas_int m, blas_int n,
                       lapack_t alpha, lapack_t* a, blas_int lda, lapack_t* b,
                       blas_int ldb) noexcept nogil:
    """B := alpha·T·B (side 'L') or alpha·B·T (side 'R'), T triangular, not transposed."""
    cdef char tr = b'N'
    if lapack_t is float:
        bl.strmm(&side, &uplo, &tr, &diag, &m, &n, &alpha, a, &lda, b, &ldb)
    elif lapack_t is double:
        bl.dtrmm(&side, &uplo, &tr, &diag, &m, &n, &alpha, a, &lda, b, &ldb)
    elif lapack_t is cfloat:
        bl.ctrmm(&side, &uplo, &tr, &diag, &m, &n, &alpha, a, &lda, b, &ldb)
    else:
        bl.ztrmm(&side, &uplo, &tr, &diag, &m, &n, &alpha, a, &lda, b, &ldb)


cdef inline void _gemm_acc(blas_int m, blas_int n, blas_int k, lapack_t alpha, lapack_t* a,
                           blas_int lda, lapack_t* b, blas_int ldb, lapack_t* c,
                           blas_int ldc) noexcept nogil:
    """C += alpha·A·B."""
    cdef char nn = b'N'
    cdef lapack_t one = 1
    if lapack_t is float:
        bl.sgemm(&nn, &nn, &m, &n, &k, &alpha, a, &lda, b, &ldb, &one, c, &ldc)
    elif lapack_t is double:
        bl.dgemm(&nn, &nn, &m, &n, &k, &alpha, a, &lda, b, &ldb, &one, c, &ldc)
    elif lapack_t is cfloat:
        bl.cgemm(&nn, &nn, &m, &n, &k, &alpha, a, &lda, b, &ldb, &one, c, &ldc)
    else:
        bl.zgemm(&nn, &nn, &m, &n, &k, &alpha, a, &lda, b, &ldb, &one, c, &ldc)


cdef void _trmm_r(char side, char uplo, char diag, blas_int m, blas_int n, lapack_t alpha,
                  lapack_t* a, blas_int lda, lapack_t* b, blas_int ldb) noexcept nogil:
    """_trmm with the triangle T split in halves down to TB, the off-diagonal block of T
    applied by gemm: OpenBLAS's trmm runs at half of gemm's flop rate for complex types
    (and below it for real ones at these sizes), so the recursion moves half of each
    level's flops into gemm. With T = [[T₁₁, T₁₂], [T₂₁, T₂₂]] (one of T₁₂, T₂₁ zero):
        left,  upper:  B₁ = T₁₁B₁ + T₁₂B₂, B₂ = T₂₂B₂   (B split by rows)
        left,  lower:  B₂ = T₂₁B₁ + T₂₂B₂, B₁ = T₁₁B₁
        right, upper:  B₂ = B₁T₁₂ + B₂T₂₂, B₁ = B₁T₁₁   (B split by columns)
        right, lower:  B₁ = B₁T₁₁ + B₂T₂₁, B₂ = B₂T₂₂
    each block updated before the block it reads is overwritten."""
    cdef blas_int k = m if side == c'L' else n
    if k <= TB:
        _trmm(side, uplo, diag, m, n, alpha, a, lda, b, ldb)
        return
    cdef blas_int k1 = k // 2, k2 = k - k1
    cdef lapack_t* t12 = a + <Py_ssize_t>k1 * lda
    cdef lapack_t* t21 = a + k1
    cdef lapack_t* t22 = a + <Py_ssize_t>k1 * lda + k1
    # B_f, the half of B updated first (B₁ for left-upper and right-lower), then B_o
    cdef bint first1 = (side == c'L') == (uplo == c'U')
    cdef lapack_t* b2 = b + k1 if side == c'L' else b + <Py_ssize_t>k1 * ldb
    cdef lapack_t* bf = b if first1 else b2
    cdef lapack_t* bo = b2 if first1 else b
    cdef lapack_t* tf = a if first1 else t22        # T_ff, T_oo: the diagonal blocks
    cdef lapack_t* to = t22 if first1 else a
    cdef lapack_t* toff = t12 if uplo == c'U' else t21
    cdef blas_int kf = k1 if first1 else k2, ko = k2 if first1 else k1
    if side == c'L':     # B_f = T_ff B_f + T_fo B_o, B_o = T_oo B_o
        _trmm_r(side, uplo, diag, kf, n, alpha, tf, lda, bf, ldb)
        _gemm_acc(kf, n, ko, alpha, toff, lda, bo, ldb, bf, ldb)
        _trmm_r(side, uplo, diag, ko, n, alpha, to, lda, bo, ldb)
    else:                # B_f = B_f T_ff + B_o T_of, B_o = B_o T_oo
        _trmm_r(side, uplo, diag, m, kf, alpha, tf, lda, bf, ldb)
        _gemm_acc(m, kf, ko, alpha, bo, ldb, toff, lda, bf, ldb)
        _trmm_r(side, uplo, diag, m, ko, alpha, to, lda, bo, ldb)


# ---- base cases (n <= NB): column sweeps on the Fortran block w, leading dimension ld ---

cdef inline void _inv_tri_base(lapack_t* w, Py_ssize_t n, Py_ssize_t ld) noexcept nogil:
    """U⁻¹ (upper, non-unit) and L⁻¹ (strictly lower, unit) of the packed block, in place."""
    cdef Py_ssize_t i, j, k
    cdef lapack_t t, ajj
    cdef lapack_t* cj
    cdef lapack_t* ck
    # upper, columns left to right: U⁻¹[:j, j] = −U⁻¹[:j, :j]·U[:j, j]/u_jj
    for j in range(n):
        cj = w + j * ld
        cj[j] = 1 / cj[j]
        ajj = -cj[j]
        for k in range(j):             # in-place upper trmv with the inverted U[:j, :j]
            ck = w + k * ld
            t = cj[k]
            for i in range(k):
                cj[i] = cj[i] + ck[i] * t
            cj[k] = ck[k] * t
        for i in range(j):
            cj[i] = cj[i] * ajj
    # unit lower, columns right to left: L⁻¹[j+1:, j] = −L⁻¹[j+1:, j+1:]·L[j+1:, j]
    for j in range(n - 2, -1, -1):
        cj = w + j * ld
        for k in range(n - 1, j, -1):  # in-place unit lower trmv with the inverted block
            ck = w + k * ld
            t = cj[k]
            for i in range(k + 1, n):
                cj[i] = cj[i] + ck[i] * t
        for i in range(j + 1, n):
            cj[i] = -cj[i]


cdef inline void _mul_base(lapack_t* w, Py_ssize_t n, Py_ssize_t ld) noexcept nogil:
    """X = U·L in place (U upper with diagonal, L unit lower packed below it).

    Column j: X[:, j] = U[:, j] + Σ_{k>j} U[:, k]·l_kj. Slot (k, j), k > j, holds l_kj
    until step k reads it and writes u_kk·l_kj, the first term of x_kj; the rows i < k
    accumulate. Columns k > j are still U's when column j is formed."""
    cdef Py_ssize_t i, j, k
    cdef lapack_t t
    cdef lapack_t* cj
    cdef lapack_t* ck
    for j in range(n - 1):
        cj = w + j * ld
        for k in range(j + 1, n):
            ck = w + k * ld
            t = cj[k]
            for i in range(k):
                cj[i] = cj[i] + ck[i] * t
            cj[k] = ck[k] * t


# ---- recursions ---------------------------------------------------------------------

cdef void _halves(lapack_t* w, Py_ssize_t n, Py_ssize_t ld, bint mul) noexcept nogil:
    """The two recursions on the packed n x n block w (U upper, L unit lower), split in
    2 x 2 blocks down to NB: ``mul`` False inverts both triangles in place; ``mul`` True
    forms X = U·L in place."""
    if n <= NB:
        if mul:
            _mul_base(w, n, ld)
        else:
            _inv_tri_base(w, n, ld)
        return
    cdef Py_ssize_t n1 = n // 2, n2 = n - n1
    cdef lapack_t* w11 = w
    cdef lapack_t* w12 = w + n1 * ld
    cdef lapack_t* w21 = w + n1
    cdef lapack_t* w22 = w + n1 * ld + n1
    cdef blas_int m1 = <blas_int>n1, m2 = <blas_int>n2, l = <blas_int>ld
    cdef lapack_t one = 1, mone = -1
    if mul:
        _halves(w11, n1, ld, True)                               # U₁₁L₁₁
        _gemm_acc(m1, m1, m2, one, w12, l, w21, l, w11, l)       # + U₁₂L₂₁
        _trmm_r(c'R', c'L', c'U', m1, m2, one, w22, l, w12, l)   # X₁₂ = U₁₂L₂₂
        _trmm_r(c'L', c'U', c'N', m2, m1, one, w22, l, w21, l)   # X₂₁ = U₂₂L₂₁
        _halves(w22, n2, ld, True)                               # X₂₂ = U₂₂L₂₂
        return
    _halves(w11, n1, ld, False)
    _halves(w22, n2, ld, False)
    # U: B := −A⁻¹·B·C⁻¹
    _trmm_r(c'L', c'U', c'N', m1, m2, mone, w11, l, w12, l)
    _trmm_r(c'R', c'U', c'N', m1, m2, one, w22, l, w12, l)
    # unit L: B := −C⁻¹·B·A⁻¹
    _trmm_r(c'L', c'L', c'U', m2, m1, mone, w22, l, w21, l)
    _trmm_r(c'R', c'L', c'U', m2, m1, one, w11, l, w21, l)


cdef inline void _tiles8(const lapack_t* src, Py_ssize_t su, Py_ssize_t sv, lapack_t* dst,
                         Py_ssize_t n, lapack_t s, bint scaled) noexcept nogil:
    """dst[u·n + v] = src[u·su + v·sv] (times s when ``scaled``) for u, v < n: a
    transposing copy in 8 x 8 tiles, written along dst's rows (a tile small enough that
    its strided side stays in L1 for n = 2^k)."""
    cdef Py_ssize_t u0, v0, u1, v1, u, v
    for u0 in range(0, n, 8):
        u1 = u0 + 8 if u0 + 8 < n else n
        for v0 in range(0, n, 8):
            v1 = v0 + 8 if v0 + 8 < n else n
            if scaled:      # the test outside the tile's loops: they stay plain
                for u in range(u0, u1):
                    for v in range(v0, v1):
                        dst[u * n + v] = s * src[u * su + v * sv]
            else:
                for u in range(u0, u1):
                    for v in range(v0, v1):
                        dst[u * n + v] = src[u * su + v * sv]


# ---- the batched kernel --------------------------------------------------------------

cdef struct _InvJob:       # one lu_inverse call, for run_chunks
    const char* lu            # factors (nb, n, n), element strides sl
    const int* piv            # (nb, n) 0-based, element strides sp
    const char* scale         # nb values, or NULL (1)
    char* out                 # (nb, n, n) C-ordered
    Py_ssize_t sl[3]
    Py_ssize_t sp[2]
    Py_ssize_t n
    int trans
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _inverse_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                               blas_int* info) noexcept nogil:
    cdef _InvJob* j = <_InvJob*>ctx
    if j.code == 0:
        return _inverse_rows(<const float*>j.lu, <const float*>j.scale, <float*>j.out, j,
                             b0, b1)
    if j.code == 1:
        return _inverse_rows(<const double*>j.lu, <const double*>j.scale, <double*>j.out,
                             j, b0, b1)
    if j.code == 2:
        return _inverse_rows(<const cfloat*>j.lu, <const cfloat*>j.scale, <cfloat*>j.out,
                             j, b0, b1)
    return _inverse_rows(<const cdouble*>j.lu, <const cdouble*>j.scale, <cdouble*>j.out,
                         j, b0, b1)


cdef Py_ssize_t _inverse_rows(const lapack_t* lu, const lapack_t* scale, lapack_t* out,
                              _InvJob* j, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    # lu: views of the factors (any element strides; getrf's per-matrix Fortran ones are
    # copied by memcpy), piv 0-based, checked here. scale: nb values or NULL (1).
    # Returns OK, NO_MEMORY, or the batch position of a matrix whose pivots are not row
    # indices 0..n-1 (LAPACK would go out of bounds).
    cdef Py_ssize_t n = j.n, b, i, k
    cdef Py_ssize_t s1 = j.sl[1], s2 = j.sl[2]
    cdef Py_ssize_t isz = sizeof(lapack_t)
    cdef lapack_t* w
    cdef lapack_t* o
    cdef const lapack_t* src
    cdef const int* pv
    cdef lapack_t* work = NULL
    cdef Py_ssize_t result = OK
    if j.trans == 0:
        work = <lapack_t*>work_take(n * n * isz)
        if work == NULL:
            return NO_MEMORY
    for b in range(b0, b1):
        pv = j.piv + b * j.sp[0]
        for k in range(n):
            if pv[k * j.sp[1]] < 0 or pv[k * j.sp[1]] >= n:
                result = b
        if result != OK:
            break
        o = out + b * n * n
        w = work if j.trans == 0 else o
        src = lu + b * j.sl[0]
        if src == w:
            pass                            # overwrite_lu: factors already in W
        elif s1 == 1 and s2 == n:
            memcpy(w, src, n * n * isz)
        else:
            for k in range(n):
                for i in range(n):
                    w[i + k * n] = src[i * s1 + k * s2]
        _inverse_one(w, o, pv, j.sp[1], n, scale + b if scale != NULL else NULL, j.trans)
    if work != NULL:
        work_give(work, n * n * isz)
    return result


cdef void _inverse_one(lapack_t* w, lapack_t* o, const int* piv, Py_ssize_t ps,
                       Py_ssize_t n, const lapack_t* scale, int trans) noexcept nogil:
    # One matrix: W (Fortran, holding the packed factors) becomes the inverse; out
    # (C-ordered) gets scale·op(A)⁻¹, W itself for trans 1 and 2 (w == o). piv: the
    # pivots at element stride ps, checked by the caller; scale NULL means 1.
    cdef Py_ssize_t i, j, p
    cdef lapack_t s, t
    cdef bint cplx = lapack_t is cfloat or lapack_t is cdouble
    _halves(w, n, n, False)      # both triangles inverted
    _halves(w, n, n, True)       # X = U⁻¹·L⁻¹ = (LU)⁻¹
    for j in range(n - 2, -1, -1):      # X Pᵀ: LAPACK's interchanges, reversed
        p = piv[j * ps]
        if p != j:
            for i in range(n):
                t = w[i + j * n]
                w[i + j * n] = w[i + p * n]
                w[i + p * n] = t
    s = 1 if scale == NULL else scale[0]
    if trans == 2 and cplx:
        # C-ordered out = Fortran (s·A⁻ᴴ)ᵀ = s·conj(A⁻¹) = s·conj(W): in place
        for i in range(n * n):
            w[i] = s * w[i].conjugate()
    elif trans != 0:
        # C-ordered out = Fortran (s·A⁻ᵀ)ᵀ = s·W: in place
        if scale != NULL:
            for i in range(n * n):
                w[i] = s * w[i]
    else:
        # C-ordered out[r, c] = s·W[r + c·n]
        _tiles8(w, 1, n, o, n, s, True)


cdef object _INT32 = np.dtype(np.int32)


cdef const char* _ro_data(object x, int flags) except? NULL:
    """Data pointer of x if its buffer has the contiguity ``flags`` asks for (PyBUF_C_ or
    PyBUF_F_CONTIGUOUS), else NULL; valid while the caller holds x."""
    cdef Py_buffer view
    try:
        PyObject_GetBuffer(x, &view, flags)
    except BufferError:
        return NULL
    cdef const char* p = <const char*>view.buf
    PyBuffer_Release(&view)
    return p


cdef void _inv1(const lapack_t* lu, const int* piv, const lapack_t* scale, lapack_t* out,
                Py_ssize_t n, int trans, bint* bad) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        if piv[j] < 0 or piv[j] >= n:
            bad[0] = True
            return
    memcpy(out, lu, n * n * sizeof(lapack_t))
    _inverse_one(out, out, piv, 1, n, scale, trans)


cdef int _put_scalar(void* p, Py_ssize_t code, object x) except -1:
    """*p := x as the scalar type of dtype code ``code`` (0..3: float, double, cfloat,
    cdouble)."""
    if code == 0:
        (<float*>p)[0] = x
    elif code == 1:
        (<double*>p)[0] = x
    elif code == 2:
        (<cfloat*>p)[0] = x
    else:
        (<cdouble*>p)[0] = x
    return 0


cdef void _inv1_code(Py_ssize_t code, const char* lu, const int* piv, const void* scale,
                     char* out, Py_ssize_t n, int trans, bint* bad) noexcept nogil:
    """_inv1 compiled for dtype code ``code`` (as _put_scalar); scale NULL means 1."""
    if code == 0:
        _inv1[float](<const float*>lu, piv, <const float*>scale, <float*>out, n, trans, bad)
    elif code == 1:
        _inv1[double](<const double*>lu, piv, <const double*>scale, <double*>out, n, trans,
                      bad)
    elif code == 2:
        _inv1[cfloat](<const cfloat*>lu, piv, <const cfloat*>scale, <cfloat*>out, n, trans,
                      bad)
    else:
        _inv1[cdouble](<const cdouble*>lu, piv, <const cdouble*>scale, <cdouble*>out, n,
                       trans, bad)


cdef object _inverse1(lu, piv, scale, dt, int tr):
    """lu_inverse for one Fortran-contiguous matrix (getrf's) with contiguous pivots, a
    scalar scale of lu's dtype (or None) and trans 1 or 2, on raw pointers: the backward
    of det/slogdet without lu_inverse's general argument handling. None
    when the arguments need that handling."""
    cdef Py_ssize_t n = lu.shape[1], code
    if (type(piv) is not np.ndarray or piv.dtype is not _INT32 or piv.ndim != 1
            or piv.shape[0] != n or lu.shape[0] != n or n == 0):
        return None
    if scale is not None and not ((type(scale) is np.ndarray or isinstance(scale, np.generic))
                                  and scale.dtype is dt and scale.ndim == 0):
        return None
    code = _CHARS.find(dt.char)
    if code < 0:
        return None
    cdef const char* lp_ = _ro_data(lu, PyBUF_F_CONTIGUOUS)
    cdef const int* pp = <const int*>_ro_data(piv, PyBUF_C_CONTIGUOUS)
    if lp_ == NULL or pp == NULL:
        return None
    # the result owns its memory (base None): autograd hands such a gradient to the user
    # without a defensive copy (a 512 KB copy and its page faults at n = 256)
    out = np.empty((n, n), dt)
    cdef char* op = _data(out)
    cdef cdouble sbuf         # the scale as lu's scalar type (16 bytes hold each)
    cdef void* sp = NULL
    cdef bint bad = False
    if scale is not None:
        sp = &sbuf
        _put_scalar(sp, code, scale)
    with nogil:
        _inv1_code(code, lp_, pp, sp, op, n, tr, &bad)
    if bad:
        return None             # the general path reports the bad pivots
    return out


def lu_inverse(lu, piv, scale=None, trans=0, overwrite_lu=False):
    """scale·op(A)⁻¹ of each matrix A from its getrf factors, op = (identity, ᵀ, ᴴ)
    for trans = 0, 1, 2.

    lu (*batch, n, n) and piv (*batch, n) (0-based int32) as getrf returns them; scale
    None (1) or an array broadcasting to ``batch``. The result is C-ordered
    (*batch, n, n) of dtype result_type(lu, scale). trans 1 and 2 write the result in
    place of the work (no transposing copy): A⁻¹ itself is cheapest as the trans = 1
    inverse of Aᵀ, whose getrf factors a C-ordered A's memory without a transposing
    copy. ``overwrite_lu`` (trans 1, 2) lets it work in getrf's own buffer when lu is
    getrf's fresh output (no copy, no new allocation); lu is then destroyed. A zero
    pivot gives inf/NaN entries (callers pass nonsingular factors); pivots outside
    0..n-1 raise ValueError.
    """
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_inverse: trans must be 0, 1 or 2, got {trans!r}")
    cdef tuple shape = lu.shape
    cdef Py_ssize_t nd = len(shape), n, nb = 1, code
    cdef int tr = trans
    dt = lu.dtype
    if nd == 2 and tr != 0 and not overwrite_lu:
        out = _inverse1(lu, piv, scale, dt, tr)
        if out is not None:
            return out
    if scale is not None:
        if type(scale) is not np.ndarray:
            scale = np.asarray(scale)
        if scale.dtype is not dt:
            dt = np.result_type(dt, scale.dtype)
            if dt != lu.dtype:
                lu = lu.astype(dt)
    code = _CHARS.find(dt.char)
    if code < 0 or nd < 2 or lu.size == 0:
        return _ref.lu_inverse(lu, piv, scale, trans)
    n = shape[nd - 1]
    batch = shape[:nd - 2]
    for d in batch:
        nb *= <Py_ssize_t>d
    if nd == 2:
        lu3 = lu[_NEWAXIS]
    elif nd == 3:
        lu3 = lu
    else:
        lu3 = lu.reshape((nb, n, n))
    if type(piv) is not np.ndarray or piv.dtype != np.int32:
        piv = np.asarray(piv).astype(np.int32)
    piv2 = piv[_NEWAXIS] if nd == 2 else piv.reshape((nb, n))
    if lu3.strides[1] % lu3.itemsize or lu3.strides[2] % lu3.itemsize:
        lu3 = lu3.copy()
    sc = None
    if scale is not None:
        sc = scale
        if sc.dtype is not dt:
            sc = sc.astype(dt)
        if sc.shape != batch:
            sc = np.broadcast_to(sc, batch)
        sc = sc.reshape(nb)         # a view unless a broadcast scale must be copied
    out = None
    if overwrite_lu and tr != 0 and lu3.dtype == dt:
        out = lu3.swapaxes(1, 2)        # getrf's (nb, n, n) C-ordered buffer
        if not (out.flags.c_contiguous and out.flags.writeable):
            out = None
    full = None
    if out is None:
        # allocated in the result's shape, so that the result owns its memory
        full = np.empty(shape, dt)
        out = full[_NEWAXIS] if nd == 2 else full.reshape((nb, n, n))
    cdef Py_ssize_t res, i
    cdef _InvJob job
    cdef blas_int info = 0
    cdef int t
    if sc is not None and sc.strides[0] != sc.itemsize and nb > 1:
        sc = sc.copy()
    job.lu, job.out = _ro_data(lu3, PyBUF_STRIDES), _data(out)
    job.piv = <const int*>_ro_data(piv2, PyBUF_STRIDES)
    job.scale = _ro_data(sc, PyBUF_STRIDES) if sc is not None else NULL
    for i in range(3):
        job.sl[i] = lu3.strides[i] // lu3.itemsize
    for i in range(2):
        job.sp[i] = piv2.strides[i] // 4
    job.n, job.trans, job.code = n, tr, <int>code
    # split over the native workers (contiguous chunks; bit-identical) while level-3
    # BLAS calls can run concurrently (tenferro._threads.BLAS3_LOCKED)
    t = _threads._threads_for(nb, n, 2 * nb * n * n * n, True)
    with nogil:
        res = run_chunks(_inverse_chunk, &job, nb, t, &info)
    if res == NO_MEMORY:
        raise MemoryError("tenferro: out of memory for the lu_inverse workspace")
    if res != OK:
        where = "the matrix" if nd == 2 else f"matrix {res} of the flattened stack"
        raise ValueError(f"lu_inverse: the pivots of {where} are not row indices "
                         f"0..{n - 1} (piv must come from getrf)")
    if full is not None:
        return full
    if nd == 2:
        return out[0]
    if nd == 3:
        return out
    return out.reshape(shape)


# ---- small per-matrix summaries of getrf's output (det/slogdet's fixed costs) -----------

@cython.wraparound(True)
def pivot_parity(piv):
    """Parity of LAPACK's row interchanges: 1 where an odd number of piv[..., i] != i,
    else 0 (int64 of piv's batch shape; a Python int for a single matrix). One pass
    instead of NumPy's compare + sum + and."""
    if type(piv) is not np.ndarray or piv.dtype != np.int32:
        piv = np.asarray(piv).astype(np.int32)
    cdef tuple shape = piv.shape
    cdef Py_ssize_t nd = len(shape), n = shape[nd - 1], nb = 1, b, i, c
    for d in shape[:nd - 1]:
        nb *= <Py_ssize_t>d
    cdef const int[:] p1
    if nd == 1:                     # one matrix: no arrays
        p1 = piv
        c = 0
        for i in range(n):
            c += p1[i] != i
        return c & 1
    cdef const int[:, :] p = piv.reshape((nb, n))
    out = np.empty(nb, np.int64)
    cdef long long[::1] o = out
    for b in range(nb):
        c = 0
        for i in range(n):
            c += p[b, i] != i
        o[b] = c & 1
    return out.reshape(shape[:nd - 1])


@cython.wraparound(True)
def pivot_perm(piv):
    """The row order of LAPACK's row interchanges: perm (*batch, n) intp with row i of
    L U = row perm[i] of A (A = P L U, P[perm[i], i] = 1), i.e. the interchanges
    piv[..., 0], piv[..., 1], ... applied in turn to 0, 1, ..., n-1. piv: 0-based, as
    getrf returns it for an m x n matrix with m <= n (n = m pivots); every entry must lie
    in [0, m) (ValueError otherwise)."""
    if type(piv) is not np.ndarray or piv.dtype != np.int32:
        piv = np.asarray(piv).astype(np.int32)
    cdef tuple shape = piv.shape
    cdef Py_ssize_t nd = len(shape), n = shape[nd - 1], nb = 1, b, i, j, t
    for d in shape[:nd - 1]:
        nb *= <Py_ssize_t>d
    cdef const int[:, :] p = piv.reshape((nb, n))
    out = np.empty((nb, n), np.intp)
    cdef Py_ssize_t[:, ::1] o = out
    for b in range(nb):
        for i in range(n):
            o[b, i] = i
        for i in range(n):
            j = p[b, i]
            if j < 0 or j >= n:
                raise ValueError(f"pivot_perm: pivot {j} out of range for {n} rows")
            t = o[b, i]
            o[b, i] = o[b, j]
            o[b, j] = t
    return out.reshape(shape)


cdef void _tiny(const lapack_t[:, :, :] lu, double rtol, char* out) noexcept:
    cdef Py_ssize_t nb = lu.shape[0], n = lu.shape[1], b, i
    cdef double v, lo, hi
    for b in range(nb):
        lo = INFINITY
        hi = 0
        for i in range(n):
            if lapack_t is cfloat or lapack_t is cdouble:
                v = hypot(lu[b, i, i].real, lu[b, i, i].imag)
            else:
                v = fabs(lu[b, i, i])
            # NaN compares false both ways; keep NumPy's min/max, which propagate it
            if v < lo or v != v:
                lo = v
            if v > hi or v != v:
                hi = v
        out[b] = lo <= rtol * hi


@cython.wraparound(True)
def tiny_pivots(lu, double rtol):
    """Whether min |u_ii| <= rtol·max |u_ii| for each matrix of getrf's factors (bool of
    the batch shape; a Python bool for a single matrix), as NumPy's
    ``abs(diag).min(-1) <= rtol * abs(diag).max(-1)`` in one pass."""
    cdef tuple shape = lu.shape
    cdef Py_ssize_t nd = len(shape), n = shape[nd - 1], nb = 1
    for d in shape[:nd - 2]:
        nb *= <Py_ssize_t>d
    code = _CHARS.find(lu.dtype.char)
    if code < 0 or n == 0 or nb == 0:
        return _ref.tiny_pivots(lu, rtol)
    cdef char one = 0
    cdef char* op = &one
    lu3 = lu[_NEWAXIS] if nd == 2 else lu.reshape((nb, n, n))
    out = None
    cdef char[::1] o
    if nd > 2:
        out = np.empty(nb, np.bool_)
        o = out.view(np.int8)
        op = &o[0]
    if code == 0:
        _tiny[float](lu3, rtol, op)
    elif code == 1:
        _tiny[double](lu3, rtol, op)
    elif code == 2:
        _tiny[cfloat](lu3, rtol, op)
    else:
        _tiny[cdouble](lu3, rtol, op)
    if nd == 2:
        return one != 0
    return out.reshape(shape[:nd - 2])


# ---- getrf fused with the determinant (det/slogdet's forward in one call) ---------------


# getrf of matrices up to SMALL takes the plain loop of _small.pxd, as
# lapack_lu_chol.getrf does
# (the same factors from both: det's forward and its pullback's getrf agree)
cdef Py_ssize_t SMALL = SMALL_N


def _set_small(Py_ssize_t n):
    """Set the largest side whose getrf takes the plain loop instead of LAPACK (tests
    and benchmarks only, with lapack_lu_chol._set_small; 0: always LAPACK); returns the
    previous."""
    global SMALL
    old = SMALL
    SMALL = min(max(n, 0), SMALL_MAX)
    return old


cdef inline void _getrf_sq(blas_int* n, lapack_t* a, blas_int* ipiv,
                           blas_int* info) noexcept nogil:
    if n[0] <= SMALL:
        info[0] = s_getrf(a, n[0], n[0], ipiv)
    else:
        xgetrf(n, n, a, n, ipiv, info)


cdef Py_ssize_t _lu_det(const lapack_t* a, Py_ssize_t nb, Py_ssize_t n, Py_ssize_t sb,
                        Py_ssize_t s1, Py_ssize_t s2, lapack_t* lu, int* piv, lapack_t* det,
                        lapack_t* absd, double rtol, char* tiny, Py_ssize_t* zeros,
                        bint check) noexcept:
    # lu: nb C-ordered n x n buffers, each matrix's memory its Fortran factor (as getrf);
    # piv (nb, n). absd NULL: det[b] = (−1)^interchanges·Π u_ii, the product in index
    # order from u_00 (NumPy's prod). Otherwise (slogdet) absd is (nb, n): real types get
    # |u_ii| there (its real part storage, see _slog_finish) and det[b] the sign, 0 at a
    # zero pivot; complex types get the pivots u_ii there and det[b] = ±1, the parity,
    # for _slog_finish. tiny[b]: min |u_ii| <= rtol·max |u_ii| (as _tiny). zeros: the
    # number of matrices with a zero pivot. check: first test that every entry is finite
    # (NON_FINITE if not, before any getrf). Returns OK, NON_FINITE, or the position of a
    # matrix getrf rejected (info < 0: never for valid arguments).
    # a: nb matrices n x n, entry (b, i, j) at a[b·sb + i·s1 + j·s2] (element strides)
    cdef Py_ssize_t b, i, j, odd, neg, zero
    cdef Py_ssize_t isz = sizeof(lapack_t)
    cdef blas_int N = <blas_int>n, info = 0
    cdef lapack_t* w
    cdef const lapack_t* src
    cdef lapack_t p = 0, u
    cdef double v, lo, hi
    cdef int* ip
    cdef Py_ssize_t result = OK
    cdef lapack_t x
    with nogil:
        if check:
            for b in range(nb):
                for i in range(n):
                    for j in range(n):
                        x = a[b * sb + i * s1 + j * s2]
                        # x − x is 0 for a finite x, NaN for ±Inf and NaN
                        if lapack_t is cfloat or lapack_t is cdouble:
                            if x.real - x.real != 0 or x.imag - x.imag != 0:
                                return NON_FINITE
                        elif x - x != 0:
                            return NON_FINITE
        for b in range(nb):
            w = lu + b * n * n
            src = a + b * sb
            if s1 == 1 and s2 == n:
                memcpy(w, src, n * n * isz)
            else:
                # w[i + j·n] = a[i, j]
                _tiles8(src, s2, s1, w, n, 1, False)
            ip = piv + b * n
            _getrf_sq(&N, w, ip, &info)
            if info < 0:
                result = b
                break
            odd = 0
            for i in range(n):
                ip[i] -= 1            # LAPACK's 1-based row interchanges -> 0-based
                odd += ip[i] != i
            lo = INFINITY
            hi = 0
            neg = 0
            zero = 0
            for i in range(n):
                u = w[i + i * n]
                if lapack_t is cfloat or lapack_t is cdouble:
                    v = hypot(u.real, u.imag)
                else:
                    v = fabs(u)
                if v < lo or v != v:
                    lo = v
                if v > hi or v != v:
                    hi = v
                zero += v == 0
                if absd == NULL:
                    p = u if i == 0 else p * u
                elif lapack_t is cfloat or lapack_t is cdouble:
                    # the pivot itself: the caller takes NumPy's |u_ii| (its SIMD hypot
                    # differs from libm's in the last bit), then _slog_finish
                    absd[b * n + i] = u
                else:
                    # log|u_ii| by libm (log 0 = -inf): NumPy's SIMD np.log differs
                    # from it in the last bit for ~1 value in 2000, so logabsdet may
                    # differ from the twin's by an ulp or so
                    if lapack_t is float:
                        absd[b * n + i] = logf(<float>v)
                    else:
                        absd[b * n + i] = log(v)
                    neg += u < 0
            tiny[b] = lo <= rtol * hi
            if absd == NULL:
                if odd & 1:
                    p = -p
            elif lapack_t is cfloat or lapack_t is cdouble:
                p = -1 if odd & 1 else 1       # the parity, for _slog_finish
            else:
                p = 0 if zero else (-1 if (odd + neg) & 1 else 1)
            det[b] = p
            if zero:
                zeros[0] += 1
    return result


ctypedef fused real_t:
    float
    double

ctypedef fused cplx_t:
    cfloat
    cdouble


cdef real_t _pairwise_sum(const real_t* x, Py_ssize_t n) noexcept nogil:
    """Σ x, as NumPy's add.reduce of a contiguous array sums it (pairwise: blocks of at
    most 128 summed with 8 accumulators, halves at multiples of 8 above that), so that
    logabsdet is bit-identical to np.log(|u_ii|).sum()."""
    cdef Py_ssize_t i, n2
    cdef real_t res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = 0
        for i in range(n):
            res = res + x[i]
        return res
    if n <= 128:
        r0 = x[0]; r1 = x[1]; r2 = x[2]; r3 = x[3]
        r4 = x[4]; r5 = x[5]; r6 = x[6]; r7 = x[7]
        i = 8
        while i < n - n % 8:
            r0 = r0 + x[i]; r1 = r1 + x[i + 1]; r2 = r2 + x[i + 2]; r3 = r3 + x[i + 3]
            r4 = r4 + x[i + 4]; r5 = r5 + x[i + 5]; r6 = r6 + x[i + 6]; r7 = r7 + x[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res = res + x[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum(x, n2) + _pairwise_sum(x + n2, n - n2)


cdef void _slog_sum(const real_t* x, real_t* out, Py_ssize_t nb,
                    Py_ssize_t n) noexcept nogil:
    """out[b] = Σ x[b, :] for the (nb, n) C-ordered x, each as NumPy's sum."""
    cdef Py_ssize_t b
    for b in range(nb):
        out[b] = _pairwise_sum(x + b * n, n)


cdef void _csign(const cplx_t* diag, const real_t* absd, cplx_t* sign, Py_ssize_t nb,
                 Py_ssize_t n) noexcept nogil:
    # sign[b] (the parity, ±1) times Π u_ii/r_ii, r_ii = NumPy's |u_ii| (:= 1 at a zero
    # pivot), each quotient as NumPy's u/(r + 0j) computes it (Smith's division with a zero
    # imaginary part: rat = 0, scl = 1/(r + 0·0), ((ur + ui·0)·scl, (ui − ur·0)·scl)),
    # multiplied in index order (NumPy's prod).
    cdef Py_ssize_t b, i
    cdef cplx_t p = 0, u, q
    cdef real_t r, scl
    cdef real_t zr = 0
    for b in range(nb):
        for i in range(n):
            u = diag[b * n + i]
            r = absd[b * n + i]
            if r == 0:
                r = 1
            scl = <real_t>1 / (r + zr * zr)
            q.real = (u.real + u.imag * zr) * scl
            q.imag = (u.imag - u.real * zr) * scl
            p = q if i == 0 else p * q
        sign[b] = -p if sign[b].real < 0 else p


cdef char* _data(object x) except NULL:
    """Data pointer of a freshly allocated (C-contiguous, non-empty) array; valid while
    the caller holds x."""
    cdef Py_buffer view
    PyObject_GetBuffer(x, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE)
    cdef char* p = <char*>view.buf
    PyBuffer_Release(&view)
    return p


cdef char* _fdata(object x) except NULL:
    """_data of a freshly allocated Fortran-ordered array."""
    cdef Py_buffer view
    PyObject_GetBuffer(x, &view, PyBUF_F_CONTIGUOUS | PyBUF_WRITABLE)
    cdef char* p = <char*>view.buf
    PyBuffer_Release(&view)
    return p


cdef object _F32 = np.dtype(np.float32)
cdef object _F64 = np.dtype(np.float64)
cdef object _np_log = np.log
cdef object _np_abs = np.abs


# Inputs up to this many entries are checked for NaN/Inf inside lu_det's loop (a scalar
# scan, cheaper than np.isfinite(a).all()'s two calls for small inputs); larger ones by
# np.isfinite (SIMD).
cdef Py_ssize_t CHECK_IN_LOOP = 2048


cdef const char* _strided(object x, Py_ssize_t* st) except? NULL:
    """Data pointer of x's buffer with its byte strides in st[:x.ndim] (any layout, read
    only); valid while the caller holds x. Cheaper than a typed memoryview."""
    cdef Py_buffer view
    cdef int k
    PyObject_GetBuffer(x, &view, PyBUF_STRIDES)
    for k in range(view.ndim):
        st[k] = view.strides[k]
    cdef const char* p = <const char*>view.buf
    PyBuffer_Release(&view)
    return p


@cython.wraparound(True)
def lu_det(a, double rtol, bint log=False, bint check_finite=False):
    """getrf of each square matrix of ``a`` (*batch, n, n) with its determinant, in one
    call: (lu, piv, det, tiny), or with ``log`` (lu, piv, sign, logabsdet, tiny).

    lu, piv as ``lapack_lu_chol.getrf`` returns them (per-matrix Fortran views, 0-based
    int32 interchanges); det and sign bit-identical to NumPy's formulas on those factors (the
    twin in inverse_twin.py: prod of the pivots; sign 0 at a zero pivot), logabsdet the
    pairwise sum of log|u_ii| as NumPy sums it, bit-identical for complex types (np.log
    of NumPy's |u_ii|) and with libm's log for real ones (computed in the factorization
    loop, cheaper than an array and an np.log call; NumPy's SIMD log differs from
    libm's in the last bit for ~1 value in 2000, so the twin may differ by an ulp or so,
    as numpy.linalg.slogdet, which uses libm's log, does from the twin); tiny: min |u_ii| <= rtol·max |u_ii|
    (as tiny_pivots). A single matrix gives 0-d det/sign/logabsdet arrays and a Python
    bool tiny; a stack gives arrays of the batch shape. With ``check_finite`` the result
    is None (and nothing is factored) when an entry of ``a`` is NaN or Inf: the caller
    raises its error. An empty
    input or another dtype goes to the twin.
    """
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    dt = a.dtype
    cdef int code = _CHARS.find(dt.char)
    cdef tuple shape = a.shape
    cdef Py_ssize_t nd = len(shape), n, nb = 1, isz, sb, s1, s2
    cdef Py_ssize_t st[3]
    if code < 0 or nd < 2 or shape[nd - 1] != shape[nd - 2]:
        return _ref.lu_det(a, rtol, log, check_finite)
    n = shape[nd - 1]
    batch = shape[:nd - 2]
    for d in batch:
        nb *= <Py_ssize_t>d
    if n == 0 or nb == 0:
        return _ref.lu_det(a, rtol, log, check_finite)
    isz = dt.itemsize
    # the matrices as raw (pointer, element strides): no typed memoryview, no a[None]
    a3 = a if nd <= 3 else a.reshape((nb, n, n))
    cdef const char* ap0 = _strided(a3, st)
    if nd == 2:
        sb, s1, s2 = 0, st[0], st[1]
    else:
        sb, s1, s2 = st[0], st[1], st[2]
    if sb % isz or s1 % isz or s2 % isz:
        a3 = np.ascontiguousarray(a3)
        ap0 = _strided(a3, st)
        sb, s1, s2 = n * n * isz, n * isz, isz
    sb //= isz
    s1 //= isz
    s2 //= isz
    cdef bint check = check_finite
    if check and nb * n * n > CHECK_IN_LOOP:
        if not np.isfinite(a).all():
            return None
        check = False
    # a single matrix's factor allocated in Fortran order (what the swapaxes of a C
    # buffer gives a stack) and no tiny array
    lu = np.empty(shape, dt, order="F") if nd == 2 else np.empty(shape, dt)
    piv = np.empty(batch + (n,), _INT32)
    det = np.empty(batch, dt)
    rdt = _F32 if code == 0 or code == 2 else _F64
    # log: |u_ii| (real types) or the pivots themselves (complex), then log|u_ii|
    absd = np.empty((nb, n), dt) if log and code >= 2 else None
    cdef char one = 0
    cdef char* tp = &one
    cdef char[::1] tmv
    tiny = None
    if nd > 2:
        tiny = np.empty(nb, np.bool_)
        tmv = tiny.view(np.int8)
        tp = &tmv[0]
    cdef char* lp_ = _fdata(lu) if nd == 2 else _data(lu)
    cdef int* pp = <int*>_data(piv)
    cdef char* dp = _data(det)
    cdef char* ap = NULL if absd is None else _data(absd)
    logabs = np.empty(batch, rdt) if log else None
    cdef char* lgp = NULL if logabs is None else _data(logabs)
    cdef void* tmp = NULL
    if log and code < 2:
        # real types: log|u_ii| straight from _lu_det's loop into a scratch buffer
        tmp = malloc(nb * n * isz)
        if tmp == NULL:
            raise MemoryError("tenferro: out of memory for the lu_det workspace")
        ap = <char*>tmp
    cdef Py_ssize_t res, zeros = 0
    if code == 0:
        res = _lu_det[float](<const float*>ap0, nb, n, sb, s1, s2, <float*>lp_, pp,
                             <float*>dp, <float*>ap, rtol, tp, &zeros, check)
    elif code == 1:
        res = _lu_det[double](<const double*>ap0, nb, n, sb, s1, s2, <double*>lp_, pp,
                              <double*>dp, <double*>ap, rtol, tp, &zeros, check)
    elif code == 2:
        res = _lu_det[cfloat](<const cfloat*>ap0, nb, n, sb, s1, s2, <cfloat*>lp_, pp,
                              <cfloat*>dp, <cfloat*>ap, rtol, tp, &zeros, check)
    else:
        res = _lu_det[cdouble](<const cdouble*>ap0, nb, n, sb, s1, s2, <cdouble*>lp_, pp,
                               <cdouble*>dp, <cdouble*>ap, rtol, tp, &zeros, check)
    if tmp != NULL:
        if res == OK:
            if code == 0:
                _slog_sum[float](<float*>tmp, <float*>lgp, nb, n)
            else:
                _slog_sum[double](<double*>tmp, <double*>lgp, nb, n)
        free(tmp)
    if res == NON_FINITE:
        return None
    if res != OK:
        raise RuntimeError("internal error: LAPACK getrf rejected its arguments; please "
                           "report this")
    if nd > 2:
        lu = lu.swapaxes(-1, -2)
        tiny = tiny.reshape(batch)
    else:
        tiny = one != 0
    if not log:
        return lu, piv, det, tiny
    if code < 2:
        return lu, piv, det, logabs, tiny
    diag = absd
    absd = _np_abs(diag)               # NumPy's |u_ii|, for the sign's quotients
    cdef char* rp = _data(absd)
    if code == 2:
        _csign[cfloat, float](<cfloat*>ap, <float*>rp, <cfloat*>dp, nb, n)
    else:
        _csign[cdouble, double](<cdouble*>ap, <double*>rp, <cdouble*>dp, nb, n)
    if zeros:
        with np.errstate(divide="ignore"):      # log 0 = -inf is the answer
            _np_log(absd, absd)
    else:
        _np_log(absd, absd)
    if code == 2:
        _slog_sum[float](<float*>rp, <float*>lgp, nb, n)
    else:
        _slog_sum[double](<double*>rp, <double*>lgp, nb, n)
    return lu, piv, det, logabs, tiny
