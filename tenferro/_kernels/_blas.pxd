# cython: language_level=3
"""Shared declarations of the compiled kernels: the LAPACK integer type, the four
scalar types, and inline nogil BLAS wrappers dispatching on the scalar type.

cimported by the LAPACK driver modules (lapack_*.pyx) and triangular_backprop.pyx (one
copy of each wrapper); the LAPACK wrappers are in _xlapack.pxd.
"""
cimport scipy.linalg.cython_blas as bl

# The integer type of every LAPACK argument. scipy.linalg.cython_lapack declares LAPACK
# integers as plain C int (LP64) today; an ILP64 SciPy build would change this typedef
# (and the int32 pivot arrays below) and nothing else.
ctypedef int blas_int

ctypedef float complex cfloat
ctypedef double complex cdouble

ctypedef fused lapack_t:
    float
    double
    cfloat
    cdouble


cdef inline void xtrsm(char* side, char* uplo, char* transa, char* diag, blas_int* m,
                       blas_int* n, lapack_t* a, blas_int* lda, lapack_t* b,
                       blas_int* ldb) noexcept nogil:
    """B := op(A)⁻¹B (side 'L') or B op(A)⁻¹ (side 'R'), alpha = 1."""
    cdef lapack_t one = 1
    if lapack_t is float:
        bl.strsm(side, uplo, transa, diag, m, n, &one, a, lda, b, ldb)
    elif lapack_t is double:
        bl.dtrsm(side, uplo, transa, diag, m, n, &one, a, lda, b, ldb)
    elif lapack_t is cfloat:
        bl.ctrsm(side, uplo, transa, diag, m, n, &one, a, lda, b, ldb)
    else:
        bl.ztrsm(side, uplo, transa, diag, m, n, &one, a, lda, b, ldb)


cdef inline void xtrsv(char* uplo, char* trans, char* diag, blas_int* n, lapack_t* a,
                       blas_int* lda, lapack_t* x) noexcept nogil:
    """x := op(A)⁻¹x for one contiguous vector x."""
    cdef blas_int inc = 1
    if lapack_t is float:
        bl.strsv(uplo, trans, diag, n, a, lda, x, &inc)
    elif lapack_t is double:
        bl.dtrsv(uplo, trans, diag, n, a, lda, x, &inc)
    elif lapack_t is cfloat:
        bl.ctrsv(uplo, trans, diag, n, a, lda, x, &inc)
    else:
        bl.ztrsv(uplo, trans, diag, n, a, lda, x, &inc)


cdef inline void xgemm(char* ta, char* tb, blas_int m, blas_int n, blas_int k,
                       lapack_t* a, blas_int lda, lapack_t* b, blas_int ldb,
                       lapack_t* c, blas_int ldc) noexcept nogil:
    """c := −op(a) op(b)."""
    cdef lapack_t alpha = -1
    cdef lapack_t beta = 0
    if lapack_t is float:
        bl.sgemm(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
    elif lapack_t is double:
        bl.dgemm(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
    elif lapack_t is cfloat:
        bl.cgemm(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
    else:
        bl.zgemm(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)


cdef inline void xgemm_ab(char* ta, char* tb, blas_int m, blas_int n, blas_int k,
                          lapack_t alpha, const lapack_t* a, blas_int lda,
                          const lapack_t* b, blas_int ldb, lapack_t beta, lapack_t* c,
                          blas_int ldc) noexcept nogil:
    """c := alpha op(a) op(b) + beta c."""
    if lapack_t is float:
        bl.sgemm(ta, tb, &m, &n, &k, &alpha, <float*>a, &lda, <float*>b, &ldb, &beta, c,
                 &ldc)
    elif lapack_t is double:
        bl.dgemm(ta, tb, &m, &n, &k, &alpha, <double*>a, &lda, <double*>b, &ldb, &beta, c,
                 &ldc)
    elif lapack_t is cfloat:
        bl.cgemm(ta, tb, &m, &n, &k, &alpha, <cfloat*>a, &lda, <cfloat*>b, &ldb, &beta, c,
                 &ldc)
    else:
        bl.zgemm(ta, tb, &m, &n, &k, &alpha, <cdouble*>a, &lda, <cdouble*>b, &ldb, &beta,
                 c, &ldc)


cdef inline void xtrmm(char* side, char* uplo, char* transa, char* diag, blas_int m,
                       blas_int n, lapack_t alpha, const lapack_t* a, blas_int lda,
                       lapack_t* b, blas_int ldb) noexcept nogil:
    """B := alpha op(A) B (side 'L') or alpha B op(A) (side 'R'), A triangular."""
    if lapack_t is float:
        bl.strmm(side, uplo, transa, diag, &m, &n, &alpha, <float*>a, &lda, b, &ldb)
    elif lapack_t is double:
        bl.dtrmm(side, uplo, transa, diag, &m, &n, &alpha, <double*>a, &lda, b, &ldb)
    elif lapack_t is cfloat:
        bl.ctrmm(side, uplo, transa, diag, &m, &n, &alpha, <cfloat*>a, &lda, b, &ldb)
    else:
        bl.ztrmm(side, uplo, transa, diag, &m, &n, &alpha, <cdouble*>a, &lda, b, &ldb)


cdef inline void xhemm(char* side, char* uplo, blas_int m, blas_int n, lapack_t alpha,
                       const lapack_t* a, blas_int lda, const lapack_t* b, blas_int ldb,
                       lapack_t beta, lapack_t* c, blas_int ldc) noexcept nogil:
    """c := alpha A b + beta c (side 'L') or alpha b A + beta c (side 'R'), A Hermitian
    (symmetric for real types) given by its ``uplo`` triangle; for the complex types
    the imaginary part of A's diagonal is not read (taken as zero)."""
    if lapack_t is float:
        bl.ssymm(side, uplo, &m, &n, &alpha, <float*>a, &lda, <float*>b, &ldb, &beta, c,
                 &ldc)
    elif lapack_t is double:
        bl.dsymm(side, uplo, &m, &n, &alpha, <double*>a, &lda, <double*>b, &ldb, &beta, c,
                 &ldc)
    elif lapack_t is cfloat:
        bl.chemm(side, uplo, &m, &n, &alpha, <cfloat*>a, &lda, <cfloat*>b, &ldb, &beta, c,
                 &ldc)
    else:
        bl.zhemm(side, uplo, &m, &n, &alpha, <cdouble*>a, &lda, <cdouble*>b, &ldb, &beta,
                 c, &ldc)
