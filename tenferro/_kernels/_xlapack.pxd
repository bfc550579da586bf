# cython: language_level=3
"""Inline nogil LAPACK wrappers dispatching on the scalar type: one fused name per
routine (xgesdd for ?gesdd, ...), as _blas.pxd has for BLAS.

cimported by the driver modules lapack_eig.pyx, lapack_qr.pyx and lapack_lu_chol.pyx (one
copy of each wrapper). Arguments that are real for the complex routines (s, w, rwork)
travel as void*.
"""
cimport scipy.linalg.cython_lapack as lp

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t

cdef inline void xgesdd(char* jobz, blas_int* m, blas_int* n, lapack_t* a, blas_int* lda,
                        void* s, lapack_t* u, blas_int* ldu, lapack_t* vt, blas_int* ldvt,
                        lapack_t* work, blas_int* lwork, void* rwork, blas_int* iwork,
                        blas_int* info) noexcept nogil:
    if lapack_t is float:
        lp.sgesdd(jobz, m, n, a, lda, <float*>s, u, ldu, vt, ldvt, work, lwork, iwork, info)
    elif lapack_t is double:
        lp.dgesdd(jobz, m, n, a, lda, <double*>s, u, ldu, vt, ldvt, work, lwork, iwork, info)
    elif lapack_t is cfloat:
        lp.cgesdd(jobz, m, n, a, lda, <float*>s, u, ldu, vt, ldvt, work, lwork,
                  <float*>rwork, iwork, info)
    else:
        lp.zgesdd(jobz, m, n, a, lda, <double*>s, u, ldu, vt, ldvt, work, lwork,
                  <double*>rwork, iwork, info)


cdef inline void xgesvd(char* jobu, char* jobvt, blas_int* m, blas_int* n, lapack_t* a,
                        blas_int* lda, void* s, lapack_t* u, blas_int* ldu, lapack_t* vt,
                        blas_int* ldvt, lapack_t* work, blas_int* lwork, void* rwork,
                        blas_int* info) noexcept nogil:
    if lapack_t is float:
        lp.sgesvd(jobu, jobvt, m, n, a, lda, <float*>s, u, ldu, vt, ldvt, work, lwork, info)
    elif lapack_t is double:
        lp.dgesvd(jobu, jobvt, m, n, a, lda, <double*>s, u, ldu, vt, ldvt, work, lwork, info)
    elif lapack_t is cfloat:
        lp.cgesvd(jobu, jobvt, m, n, a, lda, <float*>s, u, ldu, vt, ldvt, work, lwork,
                  <float*>rwork, info)
    else:
        lp.zgesvd(jobu, jobvt, m, n, a, lda, <double*>s, u, ldu, vt, ldvt, work, lwork,
                  <double*>rwork, info)


cdef inline void xsyevd(char* jobz, char* uplo, blas_int* n, lapack_t* a, blas_int* lda,
                        void* w, lapack_t* work, blas_int* lwork, void* rwork,
                        blas_int* lrwork, blas_int* iwork, blas_int* liwork,
                        blas_int* info) noexcept nogil:
    """?syevd for real types, ?heevd for complex ones (rwork/lrwork unused when real)."""
    if lapack_t is float:
        lp.ssyevd(jobz, uplo, n, a, lda, <float*>w, work, lwork, iwork, liwork, info)
    elif lapack_t is double:
        lp.dsyevd(jobz, uplo, n, a, lda, <double*>w, work, lwork, iwork, liwork, info)
    elif lapack_t is cfloat:
        lp.cheevd(jobz, uplo, n, a, lda, <float*>w, work, lwork, <float*>rwork, lrwork,
                  iwork, liwork, info)
    else:
        lp.zheevd(jobz, uplo, n, a, lda, <double*>w, work, lwork, <double*>rwork, lrwork,
                  iwork, liwork, info)


cdef inline void xgeqrf(blas_int* m, blas_int* n, lapack_t* a, blas_int* lda, lapack_t* tau,
                        lapack_t* work, blas_int* lwork, blas_int* info) noexcept nogil:
    if lapack_t is float:
        lp.sgeqrf(m, n, a, lda, tau, work, lwork, info)
    elif lapack_t is double:
        lp.dgeqrf(m, n, a, lda, tau, work, lwork, info)
    elif lapack_t is cfloat:
        lp.cgeqrf(m, n, a, lda, tau, work, lwork, info)
    else:
        lp.zgeqrf(m, n, a, lda, tau, work, lwork, info)


cdef inline void xorgqr(blas_int* m, blas_int* n, blas_int* k, lapack_t* a, blas_int* lda,
                        lapack_t* tau, lapack_t* work, blas_int* lwork,
                        blas_int* info) noexcept nogil:
    """?orgqr for real types, ?ungqr for complex ones."""
    if lapack_t is float:
        lp.sorgqr(m, n, k, a, lda, tau, work, lwork, info)
    elif lapack_t is double:
        lp.dorgqr(m, n, k, a, lda, tau, work, lwork, info)
    elif lapack_t is cfloat:
        lp.cungqr(m, n, k, a, lda, tau, work, lwork, info)
    else:
        lp.zungqr(m, n, k, a, lda, tau, work, lwork, info)


cdef inline void xgeqrt(blas_int* m, blas_int* n, blas_int* nb, lapack_t* a, blas_int* lda,
                        lapack_t* t, blas_int* ldt, lapack_t* work,
                        blas_int* info) noexcept nogil:
    """QR in compact-WY blocks of nb columns: R and V in a, each block's T in t."""
    if lapack_t is float:
        lp.sgeqrt(m, n, nb, a, lda, t, ldt, work, info)
    elif lapack_t is double:
        lp.dgeqrt(m, n, nb, a, lda, t, ldt, work, info)
    elif lapack_t is cfloat:
        lp.cgeqrt(m, n, nb, a, lda, t, ldt, work, info)
    else:
        lp.zgeqrt(m, n, nb, a, lda, t, ldt, work, info)


cdef inline void xlarfb(char* side, char* trans, char* direct, char* storev, blas_int* m,
                        blas_int* n, blas_int* k, lapack_t* v, blas_int* ldv, lapack_t* t,
                        blas_int* ldt, lapack_t* c, blas_int* ldc, lapack_t* work,
                        blas_int* ldwork) noexcept nogil:
    """C := H C, Hᴴ C, C H or C Hᴴ for the block reflector H = I − V T Vᴴ (trans 'T'
    means 'C' for the complex types)."""
    cdef char tc = b'C'
    if lapack_t is float:
        lp.slarfb(side, trans, direct, storev, m, n, k, v, ldv, t, ldt, c, ldc, work, ldwork)
    elif lapack_t is double:
        lp.dlarfb(side, trans, direct, storev, m, n, k, v, ldv, t, ldt, c, ldc, work, ldwork)
    elif lapack_t is cfloat:
        lp.clarfb(side, &tc if trans[0] == b'T' else trans, direct, storev, m, n, k, v,
                  ldv, t, ldt, c, ldc, work, ldwork)
    else:
        lp.zlarfb(side, &tc if trans[0] == b'T' else trans, direct, storev, m, n, k, v,
                  ldv, t, ldt, c, ldc, work, ldwork)


cdef inline void xgetrf(blas_int* m, blas_int* n, lapack_t* a, blas_int* lda, blas_int* ipiv,
                        blas_int* info) noexcept nogil:
    if lapack_t is float:
        lp.sgetrf(m, n, a, lda, ipiv, info)
    elif lapack_t is double:
        lp.dgetrf(m, n, a, lda, ipiv, info)
    elif lapack_t is cfloat:
        lp.cgetrf(m, n, a, lda, ipiv, info)
    else:
        lp.zgetrf(m, n, a, lda, ipiv, info)


cdef inline void xgetrs(char* trans, blas_int* n, blas_int* nrhs, lapack_t* a, blas_int* lda,
                        blas_int* ipiv, lapack_t* b, blas_int* ldb,
                        blas_int* info) noexcept nogil:
    if lapack_t is float:
        lp.sgetrs(trans, n, nrhs, a, lda, ipiv, b, ldb, info)
    elif lapack_t is double:
        lp.dgetrs(trans, n, nrhs, a, lda, ipiv, b, ldb, info)
    elif lapack_t is cfloat:
        lp.cgetrs(trans, n, nrhs, a, lda, ipiv, b, ldb, info)
    else:
        lp.zgetrs(trans, n, nrhs, a, lda, ipiv, b, ldb, info)


cdef inline void xpotrf(char* uplo, blas_int* n, lapack_t* a, blas_int* lda,
                        blas_int* info) noexcept nogil:
    if lapack_t is float:
        lp.spotrf(uplo, n, a, lda, info)
    elif lapack_t is double:
        lp.dpotrf(uplo, n, a, lda, info)
    elif lapack_t is cfloat:
        lp.cpotrf(uplo, n, a, lda, info)
    else:
        lp.zpotrf(uplo, n, a, lda, info)


cdef inline void xgeev(char* jobvl, char* jobvr, blas_int* n, lapack_t* a, blas_int* lda,
                       void* w1, void* w2, lapack_t* vl, blas_int* ldvl, lapack_t* vr,
                       blas_int* ldvr, lapack_t* work, blas_int* lwork, void* rwork,
                       blas_int* info) noexcept nogil:
    """Real types: w1, w2 = wr, wi (rwork unused). Complex: w1 = w (w2 unused)."""
    if lapack_t is float:
        lp.sgeev(jobvl, jobvr, n, a, lda, <float*>w1, <float*>w2, vl, ldvl, vr, ldvr,
                 work, lwork, info)
    elif lapack_t is double:
        lp.dgeev(jobvl, jobvr, n, a, lda, <double*>w1, <double*>w2, vl, ldvl, vr, ldvr,
                 work, lwork, info)
    elif lapack_t is cfloat:
        lp.cgeev(jobvl, jobvr, n, a, lda, <cfloat*>w1, vl, ldvl, vr, ldvr, work, lwork,
                 <float*>rwork, info)
    else:
        lp.zgeev(jobvl, jobvr, n, a, lda, <cdouble*>w1, vl, ldvl, vr, ldvr, work, lwork,
                 <double*>rwork, info)


cdef inline void xgelsd(blas_int* m, blas_int* n, blas_int* nrhs, lapack_t* a, blas_int* lda,
                        lapack_t* b, blas_int* ldb, void* s, void* rcond, blas_int* rank,
                        lapack_t* work, blas_int* lwork, void* rwork, blas_int* iwork,
                        blas_int* info) noexcept nogil:
    """s, rcond and (complex only) rwork are of the real type."""
    if lapack_t is float:
        lp.sgelsd(m, n, nrhs, a, lda, b, ldb, <float*>s, <float*>rcond, rank, work, lwork,
                  iwork, info)
    elif lapack_t is double:
        lp.dgelsd(m, n, nrhs, a, lda, b, ldb, <double*>s, <double*>rcond, rank, work, lwork,
                  iwork, info)
    elif lapack_t is cfloat:
        lp.cgelsd(m, n, nrhs, a, lda, b, ldb, <float*>s, <float*>rcond, rank, work, lwork,
                  <float*>rwork, iwork, info)
    else:
        lp.zgelsd(m, n, nrhs, a, lda, b, ldb, <double*>s, <double*>rcond, rank, work, lwork,
                  <double*>rwork, iwork, info)


cdef inline void xormqr(char* side, char* trans, blas_int* m, blas_int* n, blas_int* k,
                        lapack_t* a, blas_int* lda, lapack_t* tau, lapack_t* c,
                        blas_int* ldc, lapack_t* work, blas_int* lwork,
                        blas_int* info) noexcept nogil:
    """?ormqr for real types, ?unmqr for complex ones (trans 'T' means 'C' for those)."""
    cdef char tc = b'C'
    if lapack_t is float:
        lp.sormqr(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info)
    elif lapack_t is double:
        lp.dormqr(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info)
    elif lapack_t is cfloat:
        lp.cunmqr(side, &tc if trans[0] == b'T' else trans, m, n, k, a, lda, tau, c, ldc,
                  work, lwork, info)
    else:
        lp.zunmqr(side, &tc if trans[0] == b'T' else trans, m, n, k, a, lda, tau, c, ldc,
                  work, lwork, info)
