# cython: language_level=3
"""Plain C loops for the matrix operations of small matrices (no BLAS or LAPACK call).

Why: on a stack of many small matrices the batched kernels run one matrix per call, and
OpenBLAS's level-3 routines (?gemm, ?trsm, ?trmm, ?symm, and ?potrf/?getrf, which call
them) take a process-wide lock for their buffer on every call: two threads running
them on 8 x 8 matrices were slower than one (tenferro/_threads.py). These loops take no
lock, so the stacks of small matrices can be split over threads; at these sizes they
are also as fast as the BLAS calls, whose per-call overhead dominates (measured in
scripts/bench_threads.py). The kernels use them for matrices with every side at most
``SMALL_N`` (lapack_lu_chol.pyx, triangular_backprop.pyx), and the same matrix always
goes through the same loop, so results do not depend on the thread count.

Each loop computes what the LAPACK/BLAS routine it stands for computes, in the same
order of operations where that is natural (left-looking Cholesky as ?potf2, right-looking
LU with the first largest pivot as ?getf2), so results agree with the LAPACK path to
rounding, not bit for bit. The NumPy twins of the kernels that use them
(lapack_lu_chol_twin.py, triangular_backprop_twin.py) are the reference;
tests/_kernels/test_small.py checks both paths against them.

Row-major helpers (s_gemm, s_hemm, s_trsm, s_trmm) take C-ordered operands with row
lengths ld* and the op letters of c_gemm & co. in triangular_backprop.pyx; the LAPACK
stand-ins (s_potrf, s_getrf, s_getrs) work in the layout of the LAPACK call they replace.
"""
cimport cython
from libc.math cimport sqrt, fabs

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t, xgemm_ab


cdef enum:
    SMALL_N = 16        # default largest side that takes the plain loops


@cython.cdivision(True)   # C division: 1/0 = inf, no Python check
cdef inline lapack_t s_cj(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return z.conjugate()
    else:
        return z


@cython.cdivision(True)
cdef inline lapack_t s_re(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return z.real
    else:
        return z


@cython.cdivision(True)
cdef inline double s_abs1(lapack_t z) noexcept nogil:
    """|z| as LAPACK's i?amax compares entries: |re| + |im| for complex types."""
    if lapack_t is cfloat or lapack_t is cdouble:
        return fabs(z.real) + fabs(z.imag)
    else:
        return fabs(z)


@cython.cdivision(True)
cdef inline double s_abs2(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return <double>z.real * z.real + <double>z.imag * z.imag
    else:
        return <double>z * z


cdef enum:
    SMALL_MAX = 32      # the largest SMALL_N the stack buffers below allow


@cython.cdivision(True)
cdef inline lapack_t s_at(const lapack_t* a, Py_ssize_t ri, Py_ssize_t ci, bint cj,
                          Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    """Entry (i, j) of op(a) = a[i * ri + j * ci], conjugated if ``cj`` (s_strides)."""
    if lapack_t is cfloat or lapack_t is cdouble:
        if cj:
            return a[i * ri + j * ci].conjugate()
    return a[i * ri + j * ci]


@cython.cdivision(True)
cdef inline void s_strides(char t, Py_ssize_t ld, Py_ssize_t* ri, Py_ssize_t* ci,
                           bint* cj) noexcept nogil:
    """op(a)'s entry (i, j) is a[i * ri + j * ci] (conjugated if cj) for the row-major a
    with row length ld; op = identity, ᵀ, ᴴ for t = N, T, C."""
    if t == b'N':
        ri[0], ci[0], cj[0] = ld, 1, False
    else:
        ri[0], ci[0], cj[0] = 1, ld, t == b'C'


@cython.cdivision(True)
cdef inline const lapack_t* s_dense_op(const lapack_t* a, Py_ssize_t ri, Py_ssize_t ci,
                                       bint cj, Py_ssize_t k, lapack_t* buf) noexcept nogil:
    """op(a) (k x k, from s_strides) copied to the row-major buf, which is returned: the
    loops then read contiguous rows (op(a) = a needs no copy)."""
    cdef Py_ssize_t i, j
    for i in range(k):
        for j in range(k):
            buf[i * k + j] = s_at(a, ri, ci, cj, i, j)
    return buf


# The loops below are in "axpy" form (a multiple of one row added to another), not dot
# products: the updates of a row are independent of each other, so they pipeline.

@cython.cdivision(True)
cdef inline void s_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                        lapack_t alpha, const lapack_t* a, Py_ssize_t lda,
                        const lapack_t* b, Py_ssize_t ldb, lapack_t beta, lapack_t* c,
                        Py_ssize_t ldc) noexcept nogil:
    """c (m x n) := alpha op(a) op(b) + beta c, row-major; c is not read for beta = 0."""
    cdef lapack_t bbuf[SMALL_MAX * SMALL_MAX]
    cdef Py_ssize_t i, j, p, w, ar, ac, br, bc
    cdef bint acj, bcj
    cdef lapack_t f, s0, s1, s2, s3, s4, s5, s6, s7
    cdef lapack_t acc[8]
    cdef lapack_t* crow
    cdef const lapack_t* bp
    s_strides(ta, lda, &ar, &ac, &acj)
    s_strides(tb, ldb, &br, &bc, &bcj)
    if bc != 1 or bcj:                # op(b) to a dense k x n buffer: contiguous rows
        for p in range(k):
            for j in range(n):
                bbuf[p * n + j] = s_at(b, br, bc, bcj, p, j)
        b, br, bc, bcj = bbuf, n, 1, False
    for i in range(m):                # 8 (or 4, or 1) entries of a row of c at a time,
        crow = c + i * ldc            # in registers: independent sums that pipeline
        j = 0
        while j < n:
            w = 8 if n - j >= 8 else (4 if n - j >= 4 else 1)
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0
            # The 8- and 4-wide bodies repeat each other on purpose (the 4-wide one
            # written as one tuple assignment): one loop with a width test per term
            # would keep the sums out of registers.
            if w == 8:
                for p in range(k):
                    f = s_at(a, ar, ac, acj, i, p)
                    bp = b + p * br + j
                    s0 = s0 + f * bp[0]
                    s1 = s1 + f * bp[1]
                    s2 = s2 + f * bp[2]
                    s3 = s3 + f * bp[3]
                    s4 = s4 + f * bp[4]
                    s5 = s5 + f * bp[5]
                    s6 = s6 + f * bp[6]
                    s7 = s7 + f * bp[7]
            elif w == 4:
                for p in range(k):
                    f = s_at(a, ar, ac, acj, i, p)
                    bp = b + p * br + j
                    s0, s1, s2, s3 = (s0 + f * bp[0], s1 + f * bp[1], s2 + f * bp[2],
                                      s3 + f * bp[3])
            else:
                for p in range(k):
                    s0 = s0 + s_at(a, ar, ac, acj, i, p) * b[p * br + j]
            acc[0], acc[1], acc[2], acc[3] = s0, s1, s2, s3
            acc[4], acc[5], acc[6], acc[7] = s4, s5, s6, s7
            for p in range(w):
                if beta == 0:
                    crow[j + p] = alpha * acc[p]
                else:
                    crow[j + p] = alpha * acc[p] + beta * crow[j + p]
            j += w


@cython.cdivision(True)
cdef inline void s_hemm(char side, char uplo, Py_ssize_t m, Py_ssize_t n, lapack_t alpha,
                        const lapack_t* a, Py_ssize_t lda, const lapack_t* b,
                        Py_ssize_t ldb, lapack_t beta, lapack_t* c,
                        Py_ssize_t ldc) noexcept nogil:
    """c (m x n) := alpha a b + beta c (side 'L') or alpha b a + beta c (side 'R'), a
    Hermitian from its ``uplo`` triangle of the row-major a (its diagonal's real part,
    as ?hemm reads it), m, n <= SMALL_MAX; c is not read for beta = 0."""
    cdef lapack_t h[SMALL_MAX * SMALL_MAX]
    cdef Py_ssize_t k = m if side == b'L' else n, i, j
    for i in range(k):                # the whole Hermitian matrix, then a product
        if lapack_t is cfloat or lapack_t is cdouble:
            h[i * k + i] = a[i * lda + i].real
        else:
            h[i * k + i] = a[i * lda + i]
        for j in range(i):
            if uplo == b'L':
                h[i * k + j] = a[i * lda + j]
                h[j * k + i] = s_at(a, lda, 1, True, i, j)
            else:
                h[j * k + i] = a[j * lda + i]
                h[i * k + j] = s_at(a, lda, 1, True, j, i)
    if side == b'L':
        s_gemm(c'N', c'N', m, n, m, alpha, h, k, b, ldb, beta, c, ldc)
    else:
        s_gemm(c'N', c'N', m, n, n, alpha, b, ldb, h, k, beta, c, ldc)


@cython.cdivision(True)
cdef inline void s_trsm(char side, char uplo, char ta, char diag, Py_ssize_t m,
                        Py_ssize_t n, const lapack_t* a, Py_ssize_t lda, lapack_t* b,
                        Py_ssize_t ldb) noexcept nogil:
    """b (m x n) := op(a)⁻¹ b (side 'L') or b op(a)⁻¹ (side 'R'), a triangular
    (``uplo`` triangle of the row-major a), by substitution with the reciprocals of the
    diagonal (as OpenBLAS's ?trsm); a zero diagonal entry gives inf/nan like ?trsm.
    The triangle's side is at most SMALL_MAX."""
    cdef lapack_t dinv[SMALL_MAX]
    cdef lapack_t tbuf[SMALL_MAX * SMALL_MAX]
    cdef Py_ssize_t i, j, p, r, k = m if side == b'L' else n, ar, ac, lo, hi
    cdef bint cj, unit = diag == b'U'
    cdef bint low = (uplo == b'L') == (ta == b'N')      # op(a) lower triangular
    cdef lapack_t f
    cdef lapack_t* brow
    s_strides(ta, lda, &ar, &ac, &cj)
    if ta != b'N':
        a = s_dense_op(a, ar, ac, cj, k, tbuf)
        ar, ac, cj = k, 1, False
    for i in range(k):
        dinv[i] = 1 if unit else 1 / s_at(a, ar, ac, cj, i, i)
    if side == b'L':                  # op(a) X = B: row i of X from the rows before it
        for r in range(k):
            i = r if low else k - 1 - r
            brow = b + i * ldb
            lo = 0 if low else i + 1
            hi = i if low else k
            for p in range(lo, hi):
                f = s_at(a, ar, ac, cj, i, p)
                for j in range(n):
                    brow[j] = brow[j] - f * b[p * ldb + j]
            f = dinv[i]
            for j in range(n):
                brow[j] = brow[j] * f
    else:                             # X op(a) = B, each row x: x_j, then b_q −= x_j t(j, q)
        for i in range(m):
            brow = b + i * ldb
            for r in range(k):
                j = k - 1 - r if low else r
                f = brow[j] * dinv[j]
                brow[j] = f
                lo = 0 if low else j + 1
                hi = j if low else k
                for p in range(lo, hi):
                    brow[p] = brow[p] - f * s_at(a, ar, ac, cj, j, p)


@cython.cdivision(True)
cdef inline void s_trmm(char side, char uplo, char ta, char diag, Py_ssize_t m,
                        Py_ssize_t n, lapack_t alpha, const lapack_t* a, Py_ssize_t lda,
                        lapack_t* b, Py_ssize_t ldb) noexcept nogil:
    """b (m x n) := alpha op(a) b (side 'L') or alpha b op(a) (side 'R'), a triangular,
    row-major, in place (each entry is overwritten after the last one that reads it)."""
    cdef lapack_t tbuf[SMALL_MAX * SMALL_MAX]
    cdef Py_ssize_t i, j, p, r, k = m if side == b'L' else n, ar, ac, lo, hi
    cdef bint cj, unit = diag == b'U'
    cdef bint low = (uplo == b'L') == (ta == b'N')
    cdef lapack_t f, x
    cdef lapack_t* brow
    s_strides(ta, lda, &ar, &ac, &cj)
    if ta != b'N':
        a = s_dense_op(a, ar, ac, cj, k, tbuf)
        ar, ac, cj = k, 1, False
    if side == b'L':                  # row i of op(a) B reads rows p <= i (lower): i down
        for r in range(k):
            i = k - 1 - r if low else r
            brow = b + i * ldb
            f = alpha if unit else alpha * s_at(a, ar, ac, cj, i, i)
            for j in range(n):
                brow[j] = brow[j] * f
            lo = 0 if low else i + 1
            hi = i if low else k
            for p in range(lo, hi):
                f = alpha * s_at(a, ar, ac, cj, i, p)
                for j in range(n):
                    brow[j] = brow[j] + f * b[p * ldb + j]
    else:                             # x op(a): x_p t(p, q) goes to entries q <= p (lower)
        for i in range(m):
            brow = b + i * ldb
            for r in range(k):
                p = r if low else k - 1 - r
                x = alpha * brow[p]
                brow[p] = x if unit else x * s_at(a, ar, ac, cj, p, p)
                lo = 0 if low else p + 1
                hi = p if low else k
                for j in range(lo, hi):
                    brow[j] = brow[j] + x * s_at(a, ar, ac, cj, p, j)


@cython.cdivision(True)
cdef inline blas_int s_potrf(lapack_t* c, Py_ssize_t n, bint lower) noexcept nogil:
    """Cholesky factor of the C-ordered n x n Hermitian c in place, reading its lower
    (A = L Lᴴ) or upper (A = Uᴴ U) triangle and writing the factor there (the other
    triangle is left as it is). Left-looking like ?potf2: 0, or the order j + 1 of the
    first leading minor that is not positive, as ?potrf's info; NaN propagates into the
    factor without an error, as with OpenBLAS's ?potrf (whose test is ajj <= 0)."""
    cdef Py_ssize_t i, j, p
    cdef double d
    cdef lapack_t s, rinv
    for j in range(n):
        if lapack_t is cfloat or lapack_t is cdouble:
            d = c[j * n + j].real
        else:
            d = c[j * n + j]
        for p in range(j):
            d -= s_abs2(c[j * n + p] if lower else c[p * n + j])
        if d <= 0:                    # a NaN goes on (OpenBLAS's ?potrf: NaN propagates)
            return <blas_int>(j + 1)
        d = sqrt(d)
        c[j * n + j] = d
        rinv = 1.0 / d
        for i in range(j + 1, n):
            if lower:                 # L[i, j] = (A[i, j] − Σ L[i, p] conj(L[j, p])) / d
                s = c[i * n + j]
                for p in range(j):
                    s = s - c[i * n + p] * s_cj(c[j * n + p])
                c[i * n + j] = s * rinv
            else:                     # U[j, i] = (A[j, i] − Σ conj(U[p, j]) U[p, i]) / d
                s = c[j * n + i]
                for p in range(j):
                    s = s - s_cj(c[p * n + j]) * c[p * n + i]
                c[j * n + i] = s * rinv
    return 0


@cython.cdivision(True)
cdef inline blas_int s_getrf(lapack_t* f, Py_ssize_t m, Py_ssize_t n,
                             blas_int* ipiv) noexcept nogil:
    """LU factorization with partial pivoting of the Fortran (column-major) m x n matrix
    f in place, as ?getrf: the pivot of column j is the first entry of largest |re| +
    |im| (i?amax) on or below the diagonal; ipiv 1-based; returns 0 or the 1-based index
    of the first exactly zero pivot (the factorization goes on, like ?getrf)."""
    cdef Py_ssize_t i, j, c, p, k = m if m < n else n
    cdef blas_int info = 0
    cdef double best, v
    cdef lapack_t piv, rinv, t, g
    cdef double tiny = 1.1754943508222875e-38 if (lapack_t is float or lapack_t is cfloat) \
        else 2.2250738585072014e-308     # LAPACK's sfmin
    for j in range(k):
        p = j
        best = s_abs1(f[j * m + j])
        for i in range(j + 1, m):
            v = s_abs1(f[j * m + i])
            if v > best:
                best = v
                p = i
        ipiv[j] = <blas_int>(p + 1)
        piv = f[j * m + p]
        if piv != 0:
            if p != j:
                for c in range(n):
                    t = f[c * m + j]
                    f[c * m + j] = f[c * m + p]
                    f[c * m + p] = t
            if sqrt(s_abs2(piv)) >= tiny:
                rinv = 1 / piv
                for i in range(j + 1, m):
                    f[j * m + i] = f[j * m + i] * rinv
            else:
                for i in range(j + 1, m):
                    f[j * m + i] = f[j * m + i] / piv
        elif info == 0:
            info = <blas_int>(j + 1)
        for c in range(j + 1, n):     # rank-1 update of the trailing block
            g = f[c * m + j]
            if g != 0:
                for i in range(j + 1, m):
                    f[c * m + i] = f[c * m + i] - f[j * m + i] * g
    return info


@cython.cdivision(True)
cdef inline void s_getrs(char tr, Py_ssize_t n, Py_ssize_t nrhs, const lapack_t* lu,
                         const blas_int* ipiv, lapack_t* x) noexcept nogil:
    """op(A) X = B with ?getrf's factors (Fortran n x n lu, 1-based ipiv, n <=
    SMALL_MAX), as ?getrs: X over B in the Fortran n x nrhs x; op = identity, ᵀ, ᴴ for
    tr = N, T, C. Divides by U's diagonal through its reciprocals (as OpenBLAS)."""
    cdef lapack_t dinv[SMALL_MAX]
    cdef Py_ssize_t i, j, p, q, r
    cdef bint cj = tr == b'C'
    cdef lapack_t t
    cdef lapack_t* col
    for i in range(n):
        dinv[i] = 1 / s_at(lu, n + 1, 0, cj, i, 0)     # 1 / op(U)[i, i]
    for j in range(nrhs):
        col = x + j * n
        if tr == b'N':                # P L U x = b
            for i in range(n):
                q = ipiv[i] - 1
                if q != i:
                    t = col[i]
                    col[i] = col[q]
                    col[q] = t
            for p in range(n):        # L y = P b (unit lower), by columns of L
                t = col[p]
                for i in range(p + 1, n):
                    col[i] = col[i] - lu[p * n + i] * t
            for r in range(n):        # U x = y, by columns of U
                p = n - 1 - r
                t = col[p] * dinv[p]
                col[p] = t
                for i in range(p):
                    col[i] = col[i] - lu[p * n + i] * t
        else:                         # op(U) op(L) Pᵀ x = b, op = ᵀ or ᴴ
            for i in range(n):        # op(U) z = b: z_i, then b_q −= op(U)[q, i] z_i
                t = col[i] * dinv[i]
                col[i] = t
                for q in range(i + 1, n):
                    col[q] = col[q] - s_at(lu, n, 1, cj, q, i) * t
            for r in range(n):        # op(L) w = z (unit upper), likewise from the bottom
                i = n - 1 - r
                t = col[i]
                for q in range(i):
                    col[q] = col[q] - s_at(lu, n, 1, cj, q, i) * t
            for r in range(n):        # x = P w: the interchanges in reverse order
                i = n - 1 - r
                q = ipiv[i] - 1
                if q != i:
                    t = col[i]
                    col[i] = col[q]
                    col[q] = t


cdef inline void rm_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                         lapack_t alpha, const lapack_t* a, Py_ssize_t lda,
                         const lapack_t* b, Py_ssize_t ldb, lapack_t beta, lapack_t* c,
                         Py_ssize_t ldc, Py_ssize_t small) noexcept nogil:
    """c (m x n) := alpha op(a) op(b) + beta c, all row-major: s_gemm when every side is
    at most ``small`` (<= SMALL_MAX), else BLAS's Fortran call on the transposes
    (Cᵀ = op(B)ᵀ op(A)ᵀ: operands swapped, same op letters)."""
    if m == 0 or n == 0:
        return
    if m <= small and n <= small and k <= small:
        s_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        return
    xgemm_ab(&tb, &ta, <blas_int>n, <blas_int>m, <blas_int>k, alpha, b, <blas_int>ldb,
             a, <blas_int>lda, beta, c, <blas_int>ldc)
