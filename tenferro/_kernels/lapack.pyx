# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""Batched LAPACK drivers, called straight through ``scipy.linalg.cython_lapack``.

Every driver takes a stack of matrices ``(*batch, m, n)`` and runs ONE loop over the
batch with the GIL released. The LAPACK workspace is queried once per call (``lwork=-1``
on the first matrix: every matrix of a stack has the same shape) and the buffers are
reused for every matrix, so a stack of 1000 4x4 matrices costs 1000 LAPACK calls and no
Python per matrix. Each LAPACK info is collected inside the loop; the first failing
matrix is reported after the loop, with the GIL, as a LinAlgError naming its batch index.

Row-major vs column-major. NumPy stacks are C-ordered and LAPACK is Fortran-ordered: the
memory of a C-ordered m x n matrix A is the Fortran n x m matrix Aᵀ. The drivers use that
to avoid copies where the algebra allows it:

  svd     SVD of Aᵀ = U' S V'ᴴ gives A = conj(V') S U'ᵀ: LAPACK writes U' straight into
          the memory of vt and V'ᴴ into the memory of u (no transposition at all).
  eigh    A's memory is Aᵀ = conj(A) (Hermitian), with A's lower triangle in Aᵀ's upper
          one: the eigenvectors come out conjugated and Fortran-ordered, and one
          conjugating transposed copy writes them out.
  potrf   likewise, potrf of Aᵀ = conj(A) = conj(L) Lᵀ on the flipped triangle gives
          the Fortran factor Lᵀ, which read C-ordered is L itself: computed in place
          in the output.
  trtrs   solved as the right-side ?trsm xᵀ op(a)ᵀ = bᵀ in the output's memory (a
          C-ordered x is the Fortran xᵀ), with a C-ordered a used in place as Aᵀ
          (uplo flipped): no transposing copies at all.
  lstsq_qr  a wide A is copied conjugated into its work buffer as the Fortran Aᴴ: its
          LQ factorization A = RᴴQᴴ is then geqrf of a tall matrix, like a tall A's QR.
  qr      each matrix is copied once into a Fortran work buffer and factored; for
          larger matrices (geqrt) Q is accumulated straight in q's memory as the Fortran
          Qᵀ (no copy out), for small ones (geqrf + orgqr) copied out of the buffer.
  others  (getrf, getrs' right-hand sides, geev, gelsd) copy each matrix
          once into a Fortran work buffer. getrf factors in the output's memory and returns
          a per-matrix Fortran view, which getrs then uses without a copy.

Non-finite input (only possible with check_finite=False upstream): svd, eigh, eig,
gelsd and lstsq_qr reject a matrix with a NaN or Inf entry (in eigh's referenced
triangle) before LAPACK sees it, raising LinAlgError naming it, since LAPACK's iterations
would fail, return garbage or print "illegal value" messages; the direct factorizations
and solves propagate NaN.

The pure NumPy/SciPy twins of these functions (same names and signatures) are in
``lapack_twin.py``; ``tests/_kernels/test_lapack.py`` checks that both agree.
"""
cimport cython
from libc.stdlib cimport malloc, free
from libc.math cimport isfinite
from libc.string cimport memcpy, memset
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS,
                            PyBUF_WRITABLE)

cimport scipy.linalg.cython_lapack as lp

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t, xtrsm, xtrsv
from tenferro._kernels._single cimport matrix2_code
from tenferro._kernels._small cimport SMALL_MAX, SMALL_N, s_getrf, s_getrs, s_potrf
from tenferro._kernels._workers cimport SPARE_MIN, run_chunks, spare_keep, spare_take

import numpy as np
cimport numpy as cnp

from tenferro._errors import DTypeError, LinAlgError
from tenferro._kernels import lapack_twin as _ref
from tenferro import _threads


__all__ = ["svd", "eigh", "qr", "getrf", "lu", "potrf", "eig", "getrs", "trtrs",
           "gelsd", "lstsq_qr", "pinv_qr", "all_finite"]

cnp.import_array()


# ---------------------------------------------------------------------------------------
# The finiteness check of every linalg input (check_finite=True)
# ---------------------------------------------------------------------------------------
# numpy.isfinite(a).all() makes a boolean array and reduces it: two ufunc calls, ~1.5-2.5
# µs at n = 16, 5-10% of a small factorization's forward + backward. For a contiguous,
# aligned, native-order float32/float64/complex64/complex128 array this loop over its
# real numbers answers the same question; anything else goes to NumPy.

ctypedef fused _real_scalar:
    float
    double


cdef bint _finite_run(const _real_scalar* p, Py_ssize_t n) noexcept nogil:
    # An entry is NaN or ±Inf iff its exponent field is all ones, i.e. iff adding one
    # unit of the exponent field to the masked exponent carries into the sign bit. OR-ing
    # those sums over a block of 2048 entries is integer arithmetic the compiler
    # vectorizes with plain SSE2 (pand, paddq, por): f64 64 x 64 1.26 -> 0.4 µs,
    # 256 x 256 18 -> 7 µs, against the earlier OR of the bits of x·0 (a scalar loop),
    # and 2.4 / 39 µs for isfinite() per entry with an early exit.
    cdef Py_ssize_t i = 0, j, e
    cdef const uint64_t* p64 = <const uint64_t*>p
    cdef const uint32_t* p32 = <const uint32_t*>p
    cdef uint64_t acc64
    cdef uint32_t acc32
    while i < n:
        e = i + 2048 if i + 2048 < n else n
        if _real_scalar is double:
            acc64 = 0
            for j in range(i, e):
                acc64 = acc64 | ((p64[j] & 0x7FF0000000000000ULL) + 0x0010000000000000ULL)
            if acc64 & 0x8000000000000000ULL:
                return False
        else:
            acc32 = 0
            for j in range(i, e):
                acc32 = acc32 | ((p32[j] & 0x7F800000U) + 0x00800000U)
            if acc32 & 0x80000000U:
                return False
        i = e
    return True


def all_finite(a):
    """``bool(numpy.isfinite(a).all())`` for an ndarray ``a`` (True when empty)."""
    cdef cnp.ndarray arr
    cdef int t
    cdef Py_ssize_t n
    cdef bint ok
    if type(a) is np.ndarray:
        arr = <cnp.ndarray>a
        if ((cnp.PyArray_ISCARRAY_RO(arr) or cnp.PyArray_ISFARRAY_RO(arr))
                and cnp.PyArray_ISNOTSWAPPED(arr)):
            t = cnp.PyArray_TYPE(arr)
            n = cnp.PyArray_SIZE(arr)
            if t == cnp.NPY_CDOUBLE or t == cnp.NPY_CFLOAT:
                n *= 2
            if t == cnp.NPY_DOUBLE or t == cnp.NPY_CDOUBLE:
                with nogil:
                    ok = _finite_run(<const double*>cnp.PyArray_DATA(arr), n)
                return ok
            if t == cnp.NPY_FLOAT or t == cnp.NPY_CFLOAT:
                with nogil:
                    ok = _finite_run(<const float*>cnp.PyArray_DATA(arr), n)
                return ok
    return bool(np.isfinite(a).all())

# dtype.char of the four LAPACK types, in the order of the dispatch codes below
cdef str _CHARS = "fdFD"
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64),
           np.dtype(np.complex64), np.dtype(np.complex128))
_REAL = (_DTYPES[0], _DTYPES[1], _DTYPES[0], _DTYPES[1])
_COMPLEX = (_DTYPES[2], _DTYPES[3], _DTYPES[2], _DTYPES[3])

# Return codes of the kernels besides a batch position (>= 0) of a failing matrix, and
# two info values of our own (LAPACK's are > 0 for failures, < 0 for bad arguments).
cdef enum:
    OK = -1
    BAD_STRIDES = -3    # a stride that is not a multiple of the item size: the entry
                        # point retries on a C-ordered copy
    NO_MEMORY = -4
    # info of a matrix with a NaN or Inf entry, which the iterative drivers (svd, eigh,
    # eig) reject before LAPACK sees it: LAPACK would return garbage, not converge, or
    # print "illegal value" messages (?gebal, ?lascl) on stderr.
    NOT_FINITE = -1000
    # info of a getrs pivot outside 0..n-1 (LAPACK would read or write out of bounds)
    BAD_PIVOT = -1001


# Testing hook: treat every gesdd call as failed, so the gesvd fallback can be tested
# (gesdd's non-convergence is too rare to trigger from a test input).
cdef bint _force_gesvd = False


def _testing_force_gesvd(bint on):
    """Make svd skip gesdd and use its gesvd fallback for every matrix (tests only)."""
    global _force_gesvd
    _force_gesvd = on


# potrf, getrf and getrs of matrices with every side at most SMALL run the plain loops
# of _small.pxd instead of LAPACK: no OpenBLAS lock, so those stacks are split over
# threads (tenferro._threads), and for such sizes the loops are as fast as the calls.
cdef Py_ssize_t SMALL = SMALL_N


def _set_small(Py_ssize_t n):
    """Set the largest side that takes the plain loops instead of LAPACK (tests and
    benchmarks only; 0: always LAPACK); returns the previous one."""
    global SMALL
    old = SMALL
    SMALL = min(max(n, 0), SMALL_MAX)    # the loops' stack buffers hold SMALL_MAX
    return old


# ---------------------------------------------------------------------------------------
# Tiny per-prefix wrappers: one fused name per LAPACK routine. Arguments that are real
# for the complex routines (s, w, rwork) travel as void*.
# ---------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------

cdef inline blas_int _lwork(lapack_t q) noexcept nogil:
    """The workspace size a ``lwork=-1`` query returned in ``q``. Single precision returns
    it rounded to a float (24-bit mantissa): pad so the buffer is never short."""
    cdef double x
    if lapack_t is cfloat or lapack_t is cdouble:
        x = q.real
    else:
        x = q
    return <blas_int>(x * (1.0 + 1e-6)) + 1


cdef inline blas_int _lreal(void* q, bint single) noexcept nogil:
    """A real workspace size (rwork[0] after a query), float or double."""
    cdef double x = (<float*>q)[0] if single else (<double*>q)[0]
    return <blas_int>(x * (1.0 + 1e-6)) + 1


cdef enum:
    # the tile edge of _copy's transposing copy: at a power-of-two row stride the
    # strided side's lines fall into few L1 sets (f64 256 x 256: 2 KB apart, 2 of 64
    # sets), so a tile of 32 lines evicts itself; 16 fits (f64 256 x 256 lu 1.42 ->
    # 1.30 ms, qr 2.37 -> 2.26 ms; 8 alike; n <= 64 unchanged)
    COPY_TILE = 16


cdef inline void _copy(const lapack_t* src, Py_ssize_t s0, Py_ssize_t s1,
                       lapack_t* dst, Py_ssize_t d0, Py_ssize_t d1,
                       Py_ssize_t m, Py_ssize_t n, bint conj) noexcept nogil:
    """dst[i*d0 + j*d1] = src[i*s0 + j*s1] (conjugated if ``conj``), i < m, j < n.
    Strides in elements; a plain memcpy when both sides have the same contiguous layout."""
    cdef Py_ssize_t i, j
    if lapack_t is float or lapack_t is double:
        conj = False
    if not conj and ((s1 == 1 and d1 == 1 and s0 == n and d0 == n) or
                     (s0 == 1 and d0 == 1 and s1 == m and d1 == m)):
        memcpy(dst, src, m * n * sizeof(lapack_t))
        return
    if d1 > d0:   # write along dst's faster axis: walk the transposed problem
        m, n, s0, s1, d0, d1 = n, m, s1, s0, d1, d0
    # a transposing copy (src strided along j) goes in tile x tile blocks so that the
    # lines of both sides stay in cache (see COPY_TILE): the copy that qr/lu/cholesky/
    # eigh make of a C-ordered A
    cdef Py_ssize_t tile = COPY_TILE if s1 != 1 else n, ib = 0, jb, ie, je
    while ib < m:
        ie = ib + tile if ib + tile < m else m
        jb = 0
        while jb < n:
            je = jb + tile if jb + tile < n else n
            for i in range(ib, ie):
                for j in range(jb, je):
                    if lapack_t is cfloat or lapack_t is cdouble:
                        if conj:
                            dst[i * d0 + j * d1] = src[i * s0 + j * s1].conjugate()
                            continue
                    dst[i * d0 + j * d1] = src[i * s0 + j * s1]
            jb = je
        ib = ie


cdef inline bint _elem_strides(Py_ssize_t* strides, Py_ssize_t itemsize, Py_ssize_t ndim,
                               Py_ssize_t* out) noexcept:
    """Byte strides -> element strides; False if one is not a multiple of the item size."""
    cdef Py_ssize_t i
    for i in range(ndim):
        if strides[i] % itemsize:
            return False
        out[i] = strides[i] // itemsize
    return True


cdef inline size_t _real_size(lapack_t* tag) noexcept nogil:
    """Size of the real type of lapack_t (the type of s, w and rwork)."""
    if lapack_t is cfloat or lapack_t is cdouble:
        return sizeof(lapack_t) // 2
    return sizeof(lapack_t)


cdef inline int _type_code(lapack_t* tag) noexcept nogil:
    """0..3 for float, double, cfloat, cdouble (the order of _CHARS)."""
    if lapack_t is float:
        return 0
    if lapack_t is double:
        return 1
    if lapack_t is cfloat:
        return 2
    return 3


cdef inline bint _finite(const lapack_t* x, Py_ssize_t n, Py_ssize_t m, int tri) noexcept nogil:
    """Whether the C-ordered n x m matrix x is finite: all of it (tri = 0), its lower
    (tri = 1) or its upper (tri = 2) triangle."""
    cdef Py_ssize_t i, j, lo, hi
    for i in range(n):
        lo = i if tri == 2 else 0
        hi = i + 1 if tri == 1 else m
        for j in range(lo, hi):
            if lapack_t is cfloat or lapack_t is cdouble:
                if not (isfinite(x[i * m + j].real) and isfinite(x[i * m + j].imag)):
                    return False
            else:
                if not isfinite(x[i * m + j]):
                    return False
    return True


# The buffers of one kernel call: _alloc records each in the pool, _release frees them
# all on every return path; ``failed``: an allocation failed (out of memory).
cdef enum:
    POOL_SIZE = 12      # the most buffers a kernel allocates (lstsq_qr: 10)

cdef struct Pool:
    void* ptr[POOL_SIZE]
    int count
    int spare           # bit i: ptr[i] came from spare_take (_workers.pyx)
    bint failed


cdef inline Pool _pool() noexcept nogil:
    cdef Pool pool
    memset(&pool, 0, sizeof(Pool))
    return pool


cdef inline void* _alloc(Pool* pool, size_t count, size_t size) noexcept nogil:
    """A buffer of count (at least 1) items of the given size, recorded in the pool;
    NULL, with pool.failed set, when out of memory."""
    cdef void* p = NULL
    cdef size_t nbytes = (count if count > 0 else 1) * size
    cdef bint spare = nbytes >= SPARE_MIN
    if pool.count < POOL_SIZE:
        p = spare_take(nbytes) if spare else malloc(nbytes)
    if p == NULL:
        pool.failed = True
    else:
        if spare:
            pool.spare |= 1 << pool.count
        pool.ptr[pool.count] = p
        pool.count += 1
    return p


cdef inline Py_ssize_t _release(Pool* pool, Py_ssize_t result) noexcept nogil:
    """Free the pool's buffers; returns ``result`` (the kernel's return code)."""
    cdef int i
    for i in range(pool.count):
        if pool.spare & (1 << i):
            spare_keep(pool.ptr[i])
        else:
            free(pool.ptr[i])
    pool.count = 0
    pool.spare = 0
    return result


cdef inline void _upper(const lapack_t* src, Py_ssize_t ld, lapack_t* dst, Py_ssize_t rows,
                        Py_ssize_t cols) noexcept nogil:
    """The upper trapezoid of the Fortran matrix src (leading dimension ld) into the
    C-ordered rows x cols dst, zeros below the diagonal (R of a geqrf, U of a getrf)."""
    cdef Py_ssize_t i, j
    # a tiled transposing copy, then zeros: the element-wise loop read src along its
    # strided axis (f64 256 x 256: ~0.2 ms of cache misses against ~20 µs)
    _copy(src, 1, ld, dst, cols, 1, rows, cols, False)
    for i in range(1, rows):
        for j in range(i if i < cols else cols):
            dst[i * cols + j] = 0


cdef inline void _load_f(const lapack_t* a, const Py_ssize_t* sa, lapack_t* f, Py_ssize_t m,
                         Py_ssize_t n, bint tall) noexcept nogil:
    """The m x n matrix a (element strides sa[1], sa[2]) into the Fortran buffer f of
    lstsq_qr and pinv_qr: as A (m x n, tall) or as Aᴴ (n x m, a conjugating copy)."""
    if tall:
        _copy(a, sa[1], sa[2], f, 1, m, m, n, False)
    else:
        _copy(a, sa[1], sa[2], f, n, 1, m, n, True)


cdef inline double _sv(const void* s, Py_ssize_t i, bint single) noexcept nogil:
    """Singular value s[i] of a float (single) or double array."""
    return (<const float*>s)[i] if single else (<const double*>s)[i]


cdef inline Py_ssize_t _n_above(const void* s, Py_ssize_t p, double tol,
                                bint single) noexcept nogil:
    """How many of the p singular values s (float or double) are > tol (NaN is not)."""
    cdef Py_ssize_t i, count = 0
    for i in range(p):
        if _sv(s, i, single) > tol:
            count += 1
    return count


cdef inline blas_int _max_lwork(blas_int lwork, lapack_t q) noexcept nogil:
    """The larger of lwork and the workspace size a query returned in q."""
    cdef blas_int lw = _lwork(q)
    return lw if lw > lwork else lwork


cdef blas_int _qr_svd_lwork(blas_int* FM, blas_int* P, lapack_t* f, lapack_t* tau,
                            lapack_t* r, void* s, void* rwork, blas_int* iwork) noexcept nogil:
    """The larger workspace of geqrf on the Fortran FM x P buffer f and of gesdd 'N' on
    the P x P buffer r (the singular values of R): lstsq_qr's and pinv_qr's."""
    cdef blas_int lwork = -1, lw2 = -1, inf = 0
    cdef char jz = b'N'
    cdef lapack_t q
    xgeqrf(FM, P, f, FM, tau, &q, &lwork, &inf)
    lwork = _lwork(q)
    xgesdd(&jz, P, P, r, P, s, r, P, r, P, &q, &lw2, rwork, iwork, &inf)
    return _max_lwork(lwork, q)


cdef blas_int _gelsd_alloc(blas_int* M, blas_int* N, blas_int* K, lapack_t* a, blas_int* lda,
                           lapack_t* b, blas_int* ldb, void* s, void* rc, lapack_t** work,
                           void** rwork, blas_int** iwork, Pool* pool) noexcept nogil:
    """gelsd's workspace query (work[0], rwork[0] for complex and iwork[0] hold the sizes)
    and its three buffers, for matrices of the given shape; returns lwork. The buffers
    come from (and go back with) the caller's pool."""
    cdef blas_int lwork = -1, lrwork = 1, liwork = 1, inf = 0, rk = 0, iq = 0
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef lapack_t q
    cdef double rq[2]
    rq[0] = 0
    rq[1] = 0
    xgelsd(M, N, K, a, lda, b, ldb, s, rc, &rk, &q, &lwork, rq, &iq, &inf)
    lwork = _lwork(q)
    liwork = iq if iq > 1 else 1
    if lapack_t is cfloat or lapack_t is cdouble:
        lrwork = _lreal(rq, rsize == sizeof(float))
    work[0] = <lapack_t*>_alloc(pool, lwork, sizeof(lapack_t))
    rwork[0] = _alloc(pool, lrwork, rsize)
    iwork[0] = <blas_int*>_alloc(pool, liwork, sizeof(blas_int))
    return lwork


# ---------------------------------------------------------------------------------------
# The batched kernels. Each returns OK (-1), BAD_STRIDES, NO_MEMORY, or the position of
# the first matrix whose LAPACK info is not 0 (stored in info[0]). Inputs are non-empty.
# ---------------------------------------------------------------------------------------

cdef struct _SvdJob:       # one svd call, for run_chunks
    const char* a             # the input stack (nb, m, n), element strides st
    char* u                   # (nb, m, ku) C-ordered, or NULL (jobz 0)
    char* vt                  # (nb, kv, n) C-ordered, or NULL
    char* s                   # (nb, min(m, n)) of the real type
    Py_ssize_t st[3]
    Py_ssize_t m, n
    int jobz                  # 0: values only, 1: reduced, 2: full
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _svd(const lapack_t[:, :, :] a, lapack_t[:, :, ::1] u,
                     lapack_t[:, :, ::1] vt, char* s, int jobz, int nthreads,
                     blas_int* info) noexcept:
    cdef _SvdJob job
    if not _elem_strides(a.strides, sizeof(lapack_t), 3, job.st):
        return BAD_STRIDES
    job.a = <const char*>&a[0, 0, 0]
    job.u = <char*>&u[0, 0, 0] if jobz != 0 else NULL
    job.vt = <char*>&vt[0, 0, 0] if jobz != 0 else NULL
    job.s = s
    job.m = a.shape[1]
    job.n = a.shape[2]
    job.jobz = jobz
    job.code = _type_code(<lapack_t*>NULL)
    with nogil:
        return run_chunks(_svd_chunk, &job, a.shape[0], nthreads, info)


cdef Py_ssize_t _svd_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                           blas_int* info) noexcept nogil:
    cdef _SvdJob* j = <_SvdJob*>ctx
    if j.code == 0:
        return _svd_rows(<const float*>j.a, <float*>j.u, <float*>j.vt, j, b0, b1, info)
    if j.code == 1:
        return _svd_rows(<const double*>j.a, <double*>j.u, <double*>j.vt, j, b0, b1, info)
    if j.code == 2:
        return _svd_rows(<const cfloat*>j.a, <cfloat*>j.u, <cfloat*>j.vt, j, b0, b1, info)
    return _svd_rows(<const cdouble*>j.a, <cdouble*>j.u, <cdouble*>j.vt, j, b0, b1, info)


cdef Py_ssize_t _svd_rows(const lapack_t* a, lapack_t* u, lapack_t* vt, _SvdJob* j,
                          Py_ssize_t b0, Py_ssize_t b1, blas_int* info) noexcept nogil:
    # A (m x n, C-ordered) is the Fortran n x m matrix A' = Aᵀ. gesdd on A' = U' S V'ᴴ:
    # A = conj(V') S U'ᵀ, so u = (V'ᴴ)ᵀ and vt = U'ᵀ. LAPACK's Fortran U' (n x ku) is the
    # C-ordered vt, and its Fortran V'ᴴ (ku x m) is the C-ordered u: written in place.
    cdef Py_ssize_t m = j.m, n = j.n, b, jobz = j.jobz
    cdef Py_ssize_t* st = j.st
    cdef Py_ssize_t mn = m if m < n else n, mx = m if m > n else n
    cdef Py_ssize_t usize = m * (m if jobz == 2 else mn), vsize = n * (n if jobz == 2 else mn)
    cdef blas_int M = <blas_int>n, N = <blas_int>m, lda = M, k = <blas_int>mn
    cdef blas_int ldu = M, ldvt = 1, lwork = -1, lwork2 = -1, inf = 0
    cdef Py_ssize_t lrwork
    cdef char jz = b'N'
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef char* s = j.s
    cdef lapack_t q
    cdef lapack_t* abuf = NULL
    cdef lapack_t* work = NULL
    cdef lapack_t* work2 = NULL
    cdef lapack_t* ub
    cdef lapack_t* vtb
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    if jobz == 1:
        jz = b'S'
        ldvt = k
    elif jobz == 2:
        jz = b'A'
        ldvt = N
    if lapack_t is cfloat or lapack_t is cdouble:
        if jobz == 0:
            lrwork = 7 * mn
        else:
            lrwork = max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn)
    else:
        lrwork = 1
    abuf = <lapack_t*>_alloc(&pool, m * n, sizeof(lapack_t))
    iwork = <blas_int*>_alloc(&pool, 8 * mn, sizeof(blas_int))
    rwork = _alloc(&pool, lrwork, rsize)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    # dummies for jobz = 'N' (u, vt not referenced, but LAPACK wants valid pointers)
    ub = abuf
    vtb = abuf
    if jobz != 0:
        ub = vt + b0 * vsize
        vtb = u + b0 * usize
    xgesdd(&jz, &M, &N, abuf, &lda, s, ub, &ldu, vtb, &ldvt, &q, &lwork, rwork, iwork, &inf)
    lwork = _lwork(q)
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    for b in range(b0, b1):
        _copy(a + b * st[0], st[1], st[2], abuf, n, 1, m, n, False)
        if not _finite(abuf, m, n, 0):
            info[0] = NOT_FINITE
            result = b
            break
        if jobz != 0:
            ub = vt + b * vsize
            vtb = u + b * usize
        xgesdd(&jz, &M, &N, abuf, &lda, s + b * mn * rsize, ub, &ldu, vtb, &ldvt,
               work, &lwork, rwork, iwork, &inf)
        if inf != 0 or _force_gesvd:
            # gesdd did not converge (info > 0) or saw a NaN (info = -4 in LAPACK
            # >= 3.7): retry with the slower, more robust QR-iteration gesvd.
            if work2 == NULL:
                lwork2 = -1
                xgesvd(&jz, &jz, &M, &N, abuf, &lda, s, ub, &ldu, vtb, &ldvt,
                       &q, &lwork2, rwork, &inf)
                lwork2 = _lwork(q)
                work2 = <lapack_t*>_alloc(&pool, lwork2, sizeof(lapack_t))
                if pool.failed:
                    result = NO_MEMORY
                    break
            _copy(a + b * st[0], st[1], st[2], abuf, n, 1, m, n, False)
            xgesvd(&jz, &jz, &M, &N, abuf, &lda, s + b * mn * rsize, ub, &ldu, vtb,
                   &ldvt, work2, &lwork2, rwork, &inf)
            if inf != 0:
                info[0] = inf
                result = b
                break
    return _release(&pool, result)


cdef struct _EighJob:      # one eigh call, for run_chunks
    const char* a             # the input stack (nb, n, n), element strides st
    char* v                   # (nb, n, n) C-ordered, or NULL (values only)
    char* w                   # (nb, n) of the real type
    Py_ssize_t st[3]
    Py_ssize_t n
    bint lower
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _eigh(const lapack_t[:, :, :] a, lapack_t[:, :, ::1] v, char* w,
                      bint lower, bint jobv, int nthreads, blas_int* info) noexcept:
    cdef _EighJob job
    if not _elem_strides(a.strides, sizeof(lapack_t), 3, job.st):
        return BAD_STRIDES
    job.a = <const char*>&a[0, 0, 0]
    job.v = <char*>&v[0, 0, 0] if jobv else NULL
    job.w = w
    job.n = a.shape[1]
    job.lower = lower
    job.code = _type_code(<lapack_t*>NULL)
    with nogil:
        return run_chunks(_eigh_chunk, &job, a.shape[0], nthreads, info)


cdef Py_ssize_t _eigh_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                            blas_int* info) noexcept nogil:
    cdef _EighJob* j = <_EighJob*>ctx
    if j.code == 0:
        return _eigh_rows(<const float*>j.a, <float*>j.v, j, b0, b1, info)
    if j.code == 1:
        return _eigh_rows(<const double*>j.a, <double*>j.v, j, b0, b1, info)
    if j.code == 2:
        return _eigh_rows(<const cfloat*>j.a, <cfloat*>j.v, j, b0, b1, info)
    return _eigh_rows(<const cdouble*>j.a, <cdouble*>j.v, j, b0, b1, info)


cdef Py_ssize_t _eigh_rows(const lapack_t* a, lapack_t* v, _EighJob* j, Py_ssize_t b0,
                           Py_ssize_t b1, blas_int* info) noexcept nogil:
    # A's C-ordered memory is the Fortran Aᵀ = conj(A) for Hermitian A, and A's lower
    # triangle is Aᵀ's upper one. heevd of conj(A) gives the same eigenvalues and the
    # eigenvectors conj(V), Fortran-ordered: one conjugating transposed copy writes V.
    cdef Py_ssize_t n = j.n, b
    cdef Py_ssize_t* st = j.st
    cdef bint jobv = v != NULL
    cdef blas_int N = <blas_int>n, lwork = -1, lrwork = -1, liwork = -1, inf = 0
    cdef char jz = b'V' if jobv else b'N'
    cdef char uplo = b'U' if j.lower else b'L'
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef char* w = j.w
    cdef lapack_t q
    cdef double rq[2]
    cdef blas_int iq = 0
    cdef lapack_t* abuf = NULL
    cdef lapack_t* work = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    abuf = <lapack_t*>_alloc(&pool, n * n, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    rq[0] = 0
    xsyevd(&jz, &uplo, &N, abuf, &N, w, &q, &lwork, rq, &lrwork, &iq, &liwork, &inf)
    lwork = _lwork(q)
    liwork = iq if iq > 1 else 1
    if lapack_t is cfloat or lapack_t is cdouble:
        lrwork = _lreal(rq, rsize == sizeof(float))
    else:
        lrwork = 1
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    rwork = _alloc(&pool, lrwork, rsize)
    iwork = <blas_int*>_alloc(&pool, liwork, sizeof(blas_int))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    for b in range(b0, b1):
        _copy(a + b * st[0], st[1], st[2], abuf, n, 1, n, n, False)
        if not _finite(abuf, n, n, 1 if j.lower else 2):
            info[0] = NOT_FINITE
            result = b
            break
        xsyevd(&jz, &uplo, &N, abuf, &N, w + b * n * rsize, work, &lwork, rwork,
               &lrwork, iwork, &liwork, &inf)
        if inf != 0:
            info[0] = inf
            result = b
            break
        if jobv:
            _copy(abuf, 1, n, v + b * n * n, n, 1, n, n, True)
    return _release(&pool, result)


cdef inline blas_int _qr_block(Py_ssize_t m, Py_ssize_t n, int mode) noexcept nogil:
    """The block size of _qr's geqrt path for m x n matrices, or 0 for geqrf + orgqr.

    Measured (one thread, OpenBLAS, f64 and c128, forward time): geqrf + orgqr is faster
    up to k = min(m, n) ~ 48 (geqrt's recursive panels make more BLAS calls: 1.6x slower
    at n = 4-16), geqrt from k ~ 64 (0.9x at 64x64, 0.5x at 128x128, 0.75x at 256x256 f64,
    0.9x c128: geqrf and orgqr run k <= 128 columns unblocked). A complete Q of a tall
    matrix gains from k = 32 (m x m Q: 0.8x at 64x32), mode "r" from k = 96 (64 when
    wide). Best block: 8 for k < 96, 16 below 192, then 32 (within ~10% of each other)."""
    cdef Py_ssize_t k = m if m < n else n
    if mode == 0:
        if k < 96 and (m >= n or k < 64):
            return 0
    elif mode == 2 and m > n:
        if k < 32:
            return 0
    elif k < 64:
        return 0
    return 8 if k < 96 else (16 if k < 192 else 32)


cdef inline void _q_of_blocks(lapack_t* v, blas_int m, blas_int k, lapack_t* t,
                              blas_int blk, lapack_t* qt, blas_int qcols,
                              lapack_t* work) noexcept nogil:
    """Q[:, :qcols] of a geqrt factorization (V below the diagonal of the Fortran buffer v,
    leading dimension m; the blk x blk T of each block side by side in t), written as the
    Fortran qcols x m matrix Qᵀ at qt: the memory of a C-ordered m x qcols q, so no copy.

    Q = H₁ ⋯ H_B with H_j = I − V_j T_j V_jᴴ. Starting from C = [I 0] (qcols x m),
    C := C H_jᴴ for the blocks from last to first (larfb, side R) gives [I 0] Qᴴ =
    Q[:, :qcols]ᴴ, conjugated in place for the complex types. Block j (first column i)
    only changes C(i:, i:): the rows above are still those of [I 0], zero in columns
    ≥ i (the saving of orgqr's backward accumulation). ``work``: qcols * blk items."""
    cdef char side = b'R', trans = b'T', direct = b'F', storev = b'C'
    cdef blas_int ib, rows, cols
    cdef Py_ssize_t i, qc = qcols
    for i in range(m):
        memset(qt + i * qc, 0, qc * sizeof(lapack_t))
        if i < qc:
            qt[i + i * qc] = 1
    i = ((k - 1) // blk) * blk
    while i >= 0:
        ib = <blas_int>(k - i) if k - i < blk else blk
        rows = <blas_int>(qc - i)
        cols = <blas_int>(m - i)
        xlarfb(&side, &trans, &direct, &storev, &rows, &cols, &ib, v + i + i * m, &m,
               t + i * blk, &blk, qt + i + i * qc, &qcols, work, &rows)
        i -= blk
    if lapack_t is cfloat or lapack_t is cdouble:
        for i in range(m * qc):
            qt[i] = qt[i].conjugate()


cdef struct _QrJob:        # one qr call, for run_chunks
    const char* a             # the input stack (nb, m, n), element strides st
    char* q                   # (nb, m, qcols) C-ordered, or NULL (mode 0)
    char* r                   # (nb, rrows, n) C-ordered
    Py_ssize_t st[3]
    Py_ssize_t m, n, rrows
    int mode                  # 0: r only (k x n); 1: reduced; 2: complete
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _qr(const lapack_t[:, :, :] a, lapack_t[:, :, ::1] q,
                    lapack_t[:, :, ::1] r, int mode, int nthreads, blas_int* info) noexcept:
    cdef _QrJob job
    if not _elem_strides(a.strides, sizeof(lapack_t), 3, job.st):
        return BAD_STRIDES
    job.a = <const char*>&a[0, 0, 0]
    job.q = <char*>&q[0, 0, 0] if mode != 0 else NULL
    job.r = <char*>&r[0, 0, 0]
    job.m = a.shape[1]
    job.n = a.shape[2]
    job.rrows = r.shape[1]
    job.mode = mode
    job.code = _type_code(<lapack_t*>NULL)
    with nogil:
        return run_chunks(_qr_chunk, &job, a.shape[0], nthreads, info)


cdef Py_ssize_t _qr_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                          blas_int* info) noexcept nogil:
    cdef _QrJob* j = <_QrJob*>ctx
    if j.code == 0:
        return _qr_rows(<const float*>j.a, <float*>j.q, <float*>j.r, j, b0, b1, info)
    if j.code == 1:
        return _qr_rows(<const double*>j.a, <double*>j.q, <double*>j.r, j, b0, b1, info)
    if j.code == 2:
        return _qr_rows(<const cfloat*>j.a, <cfloat*>j.q, <cfloat*>j.r, j, b0, b1, info)
    return _qr_rows(<const cdouble*>j.a, <cdouble*>j.q, <cdouble*>j.r, j, b0, b1, info)


cdef Py_ssize_t _qr_rows(const lapack_t* a, lapack_t* q, lapack_t* r, _QrJob* j,
                         Py_ssize_t b0, Py_ssize_t b1, blas_int* info) noexcept nogil:
    # Each matrix is copied once, transposed, into a Fortran buffer and factored; R is
    # read off its upper triangle. Small matrices (_qr_block 0): geqrf, then
    # orgqr/ungqr in place (buffer m x max(n, qcols)) and Q copied out. Larger ones:
    # geqrt keeps the T of each block, and _q_of_blocks accumulates Q straight into q.
    # Same Householder vectors (larfg) either way: the same R and Q as numpy.linalg.qr
    # (geqrf + orgqr) to rounding, with a real diagonal of R.
    cdef Py_ssize_t m = j.m, n = j.n, b, mode = j.mode
    cdef Py_ssize_t* st = j.st
    cdef Py_ssize_t k = m if m < n else n
    cdef Py_ssize_t qcols = (m if mode == 2 else k)
    cdef Py_ssize_t rrows = j.rrows
    cdef blas_int blk = _qr_block(m, n, mode)
    cdef Py_ssize_t width = n if n > qcols or blk else qcols
    cdef blas_int M = <blas_int>m, N = <blas_int>n, K = <blas_int>k, QC = <blas_int>qcols
    cdef blas_int lwork = -1, lw2 = -1, inf = 0
    cdef lapack_t wq
    cdef lapack_t* abuf = NULL
    cdef lapack_t* tau = NULL
    cdef lapack_t* work = NULL
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    abuf = <lapack_t*>_alloc(&pool, m * width, sizeof(lapack_t))
    # geqrf's tau, or geqrt's blk x k T
    tau = <lapack_t*>_alloc(&pool, k * blk if blk else k, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    if blk:
        # geqrt: blk x n; _q_of_blocks: qcols x blk
        lwork = blk * (n if n > qcols else qcols)
    else:
        xgeqrf(&M, &N, abuf, &M, tau, &wq, &lwork, &inf)
        lwork = _lwork(wq)
        if mode != 0:
            xorgqr(&M, &QC, &K, abuf, &M, tau, &wq, &lw2, &inf)
            lwork = _max_lwork(lwork, wq)
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    for b in range(b0, b1):
        _copy(a + b * st[0], st[1], st[2], abuf, 1, m, m, n, False)
        if blk:
            xgeqrt(&M, &N, &blk, abuf, &M, tau, &blk, work, &inf)
        else:
            xgeqrf(&M, &N, abuf, &M, tau, work, &lwork, &inf)
        if inf != 0:
            info[0] = inf
            result = b
            break
        _upper(abuf, m, r + b * rrows * n, rrows, n)
        if mode == 0:
            continue
        if blk:
            _q_of_blocks(abuf, M, K, tau, blk, q + b * m * qcols, QC, work)
            continue
        xorgqr(&M, &QC, &K, abuf, &M, tau, work, &lwork, &inf)
        if inf != 0:
            info[0] = inf
            result = b
            break
        _copy(abuf, 1, m, q + b * m * qcols, qcols, 1, m, qcols, False)
    return _release(&pool, result)


cdef struct _GetrfJob:     # one getrf call, for run_chunks
    const char* a             # the input stack (nb, m, n), element strides st
    char* lu                  # (nb, n, m) C-ordered: each matrix's Fortran m x n factor
    blas_int* piv             # (nb, k)
    blas_int* infos           # (nb,) or NULL
    Py_ssize_t st[3]
    Py_ssize_t m, n
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _getrf(const lapack_t[:, :, :] a, lapack_t[:, :, ::1] lu, int[:, ::1] piv,
                       blas_int* infos, int nthreads, blas_int* info) noexcept:
    # The caller returns lu's transposed view. Zero pivots (info > 0) are recorded in
    # ``infos`` (when given), not reported as failures: det and solve decide.
    cdef _GetrfJob job
    if not _elem_strides(a.strides, sizeof(lapack_t), 3, job.st):
        return BAD_STRIDES
    job.a = <const char*>&a[0, 0, 0]
    job.lu = <char*>&lu[0, 0, 0]
    job.piv = &piv[0, 0]
    job.infos = infos
    job.m = a.shape[1]
    job.n = a.shape[2]
    job.code = _type_code(<lapack_t*>NULL)
    with nogil:
        return run_chunks(_getrf_chunk, &job, a.shape[0], nthreads, info)


cdef Py_ssize_t _getrf_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                             blas_int* info) noexcept nogil:
    cdef _GetrfJob* j = <_GetrfJob*>ctx
    if j.code == 0:
        return _getrf_rows(<const float*>j.a, <float*>j.lu, j, b0, b1, info)
    if j.code == 1:
        return _getrf_rows(<const double*>j.a, <double*>j.lu, j, b0, b1, info)
    if j.code == 2:
        return _getrf_rows(<const cfloat*>j.a, <cfloat*>j.lu, j, b0, b1, info)
    return _getrf_rows(<const cdouble*>j.a, <cdouble*>j.lu, j, b0, b1, info)


cdef Py_ssize_t _getrf_rows(const lapack_t* a, lapack_t* lu, _GetrfJob* j, Py_ssize_t b0,
                            Py_ssize_t b1, blas_int* info) noexcept nogil:
    cdef Py_ssize_t m = j.m, n = j.n, b, i
    cdef Py_ssize_t k = m if m < n else n
    cdef blas_int M = <blas_int>m, N = <blas_int>n, inf = 0
    cdef blas_int* ipiv
    cdef lapack_t* lb
    cdef bint small = m <= SMALL and n <= SMALL
    for b in range(b0, b1):
        lb = lu + b * m * n
        _copy(a + b * j.st[0], j.st[1], j.st[2], lb, 1, m, m, n, False)
        ipiv = j.piv + b * k
        if small:
            inf = s_getrf(lb, m, n, ipiv)
        else:
            xgetrf(&M, &N, lb, &M, ipiv, &inf)
        if inf < 0:
            info[0] = inf
            return b
        if j.infos != NULL:
            j.infos[b] = inf
        for i in range(k):
            ipiv[i] -= 1      # LAPACK's 1-based row interchanges -> 0-based
    return OK


cdef Py_ssize_t _plu(const lapack_t* a, const Py_ssize_t* st, Py_ssize_t nb, Py_ssize_t m,
                     Py_ssize_t n, char* p, lapack_t* l, lapack_t* u, Py_ssize_t* perm_out,
                     blas_int* info) noexcept:
    # a = p @ l @ u with p (m x m) a permutation matrix of a's real type, l (m x k) unit
    # lower trapezoidal, u (k x n) upper trapezoidal (both C-ordered stacks); exactly
    # singular input is fine. a: (nb, m, n), element strides st.
    # perm_out (nb x m, or NULL): row i of l @ u is row perm_out[i] of a.
    cdef Py_ssize_t b, i, j, t
    cdef Py_ssize_t k = m if m < n else n
    cdef blas_int M = <blas_int>m, N = <blas_int>n, inf = 0
    cdef lapack_t* buf = NULL
    cdef blas_int* ipiv = NULL
    cdef Py_ssize_t* perm = NULL
    cdef lapack_t* lb
    cdef float* pf
    cdef double* pd
    cdef bint single = _real_size(<lapack_t*>NULL) == sizeof(float)
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    buf = <lapack_t*>_alloc(&pool, m * n, sizeof(lapack_t))
    ipiv = <blas_int*>_alloc(&pool, k, sizeof(blas_int))
    perm = <Py_ssize_t*>_alloc(&pool, m, sizeof(Py_ssize_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    with nogil:
        for b in range(nb):
            _copy(a + b * st[0], st[1], st[2], buf, 1, m, m, n, False)
            xgetrf(&M, &N, buf, &M, ipiv, &inf)
            if inf < 0:
                info[0] = inf
                result = b
                break
            lb = l + b * m * k
            _copy(buf, 1, m, lb, k, 1, m, k, False)       # tiled, then the unit upper part
            for i in range(k):
                lb[i * k + i] = 1
                for j in range(i + 1, k):
                    lb[i * k + j] = 0
            _upper(buf, m, u + b * k * n, k, n)
            # Row i of (row-swapped a) is a[perm[i]]: a = p (l u) with p[perm[i], i] = 1.
            for i in range(m):
                perm[i] = i
            for i in range(k):
                j = ipiv[i] - 1
                t = perm[i]
                perm[i] = perm[j]
                perm[j] = t
            if perm_out != NULL:
                memcpy(perm_out + b * m, perm, m * sizeof(Py_ssize_t))
            if single:
                pf = (<float*>p) + b * m * m
                for i in range(m * m):
                    pf[i] = 0
                for i in range(m):
                    pf[perm[i] * m + i] = 1
            else:
                pd = (<double*>p) + b * m * m
                for i in range(m * m):
                    pd[i] = 0
                for i in range(m):
                    pd[perm[i] * m + i] = 1
    return _release(&pool, result)


cdef struct _PotrfJob:     # one potrf call, for run_chunks
    const char* a             # the input stack (nb, n, n), element strides st
    char* c                   # the output (nb, n, n), C-ordered
    Py_ssize_t st[3]
    Py_ssize_t n
    bint lower
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _potrf(const lapack_t[:, :, :] a, lapack_t[:, :, ::1] c, bint lower,
                       int nthreads, blas_int* info) noexcept:
    cdef _PotrfJob job
    if not _elem_strides(a.strides, sizeof(lapack_t), 3, job.st):
        return BAD_STRIDES
    job.a = <const char*>&a[0, 0, 0]
    job.c = <char*>&c[0, 0, 0]
    job.n = c.shape[1]
    job.lower = lower
    job.code = _type_code(<lapack_t*>NULL)
    with nogil:
        return run_chunks(_potrf_chunk, &job, c.shape[0], nthreads, info)


cdef Py_ssize_t _potrf_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                             blas_int* info) noexcept nogil:
    cdef _PotrfJob* j = <_PotrfJob*>ctx
    if j.code == 0:
        return _potrf_rows(<const float*>j.a, <float*>j.c, j, b0, b1, info)
    if j.code == 1:
        return _potrf_rows(<const double*>j.a, <double*>j.c, j, b0, b1, info)
    if j.code == 2:
        return _potrf_rows(<const cfloat*>j.a, <cfloat*>j.c, j, b0, b1, info)
    return _potrf_rows(<const cdouble*>j.a, <cdouble*>j.c, j, b0, b1, info)


cdef enum:
    TRI_TILE = 8    # the tile edge of the triangle transposes below
    # From this side on, the lower Cholesky factor is computed by potrf('L') on a
    # transposed copy: OpenBLAS's potrf('L') is ~25% faster than potrf('U') from n = 48
    # (f64, one thread: 9.7 against 13.0 µs at 64, 41 against 53 at 128, 221 against
    # 283 at 256), more than the two transposing passes cost; below ~40 'U' is as fast
    # or faster and the plain copy wins.
    POTRF_TRANSPOSE_MIN = 40

cdef void _lower_to_fortran(const lapack_t* a, Py_ssize_t s0, Py_ssize_t s1, lapack_t* c,
                            Py_ssize_t n) noexcept nogil:
    """c[k*n + i] = a[i*s0 + k*s1] for k <= i: the lower triangle of ``a`` (strides in
    elements) into the Fortran-ordered n x n ``c``, in TRI_TILE blocks."""
    cdef Py_ssize_t ib, kb, ie, ke, i, k
    ib = 0
    while ib < n:
        ie = ib + TRI_TILE if ib + TRI_TILE < n else n
        kb = 0
        while kb < ie:
            ke = kb + TRI_TILE if kb + TRI_TILE < ie else ie
            for k in range(kb, ke):
                for i in range(ib if ib > k else k, ie):
                    c[k * n + i] = a[i * s0 + k * s1]
            kb += TRI_TILE
        ib += TRI_TILE


cdef void _fortran_lower_to_c(lapack_t* c, Py_ssize_t n) noexcept nogil:
    """The lower triangle of the Fortran-ordered n x n ``c`` to C order in place, zeros
    above the diagonal, in TRI_TILE blocks (a column walk at a power-of-two stride evicts
    its own cache lines: untiled, or in tiles of 32, 256 x 256 f64 took 70 µs)."""
    cdef Py_ssize_t ib, kb, ie, ke, i, k
    ib = 0
    while ib < n:
        ie = ib + TRI_TILE if ib + TRI_TILE < n else n
        kb = 0
        while kb < ie:
            ke = kb + TRI_TILE if kb + TRI_TILE < ie else ie
            for i in range(ib, ie):
                for k in range(kb, ke if ke < i else i):
                    c[i * n + k] = c[k * n + i]
                    c[k * n + i] = 0
            kb += TRI_TILE
        ib += TRI_TILE


cdef Py_ssize_t _potrf_rows(const lapack_t* a, lapack_t* c, _PotrfJob* j, Py_ssize_t b0,
                            Py_ssize_t b1, blas_int* info) noexcept nogil:
    # A's memory is the Fortran Aᵀ = conj(A), with A's lower triangle as its upper one.
    # upper: potrf('L') of conj(A) = L'L'ᴴ gives L' = Uᵀ (A = UᴴU), whose Fortran memory
    # read C-ordered is U: factor a plain copy in place, then zero the other triangle.
    # lower, n < POTRF_TRANSPOSE_MIN: likewise potrf('U') of conj(A) = U'ᴴU' gives
    # U' = Lᵀ, read C-ordered as L. lower, larger n: A's lower triangle is copied
    # transposed (the Fortran lower triangle of A itself), potrf('L') gives L in Fortran
    # order, and one pass moves it to C order and zeroes the upper triangle.
    cdef Py_ssize_t n = j.n, b, i, k
    cdef blas_int N = <blas_int>n, inf = 0
    cdef char uplo = b'U' if j.lower and n < POTRF_TRANSPOSE_MIN else b'L'
    cdef lapack_t* cb
    cdef const lapack_t* ab
    cdef bint small = n <= SMALL, lower = j.lower
    cdef bint transpose = lower and n >= POTRF_TRANSPOSE_MIN
    for b in range(b0, b1):
        cb = c + b * n * n
        ab = a + b * j.st[0]
        if not transpose:
            _copy(ab, j.st[1], j.st[2], cb, n, 1, n, n, False)
        else:
            _lower_to_fortran(ab, j.st[1], j.st[2], cb, n)
        if small:
            inf = s_potrf(cb, n, lower)
        else:
            xpotrf(&uplo, &N, cb, &N, &inf)
        if inf != 0:
            info[0] = inf
            return b
        if transpose:
            _fortran_lower_to_c(cb, n)
        else:
            for i in range(n):
                if lower:
                    for k in range(i + 1, n):
                        cb[i * n + k] = 0
                else:
                    for k in range(i):
                        cb[i * n + k] = 0
    return OK


cdef Py_ssize_t _geev(const lapack_t[:, :, :] a, char* w, char* v, bint jobv,
                      blas_int* info) noexcept:
    # w: (nb, n) complex, v: (nb, n, n) complex C-ordered, both of lapack_t's complex
    # type, addressed as interleaved (re, im) reals for real lapack_t. Each matrix is
    # copied transposed into a Fortran buffer (geev destroys it; the transpose keeps the
    # eigenvalue order identical to numpy.linalg.eig).
    cdef Py_ssize_t nb = a.shape[0], n = a.shape[1], b, i, j
    cdef Py_ssize_t st[3]
    cdef blas_int N = <blas_int>n, lwork = -1, inf = 0, ldvr = N
    cdef char jl = b'N'
    cdef char jr = b'V' if jobv else b'N'
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef lapack_t q
    cdef lapack_t* abuf = NULL
    cdef lapack_t* vr = NULL
    cdef lapack_t* work = NULL
    cdef void* wr = NULL     # real: wr then wi (2n); complex: rwork (2n)
    cdef lapack_t dummy
    cdef float* fo
    cdef double* do_
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    if not _elem_strides(a.strides, sizeof(lapack_t), 3, st):
        return BAD_STRIDES
    abuf = <lapack_t*>_alloc(&pool, n * n, sizeof(lapack_t))
    vr = <lapack_t*>_alloc(&pool, n * n if jobv else 1, sizeof(lapack_t))
    wr = _alloc(&pool, 2 * n, rsize)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    if not jobv:
        ldvr = 1
    if lapack_t is cfloat or lapack_t is cdouble:
        xgeev(&jl, &jr, &N, abuf, &N, w, NULL, &dummy, &N, vr, &ldvr, &q, &lwork, wr, &inf)
    else:
        xgeev(&jl, &jr, &N, abuf, &N, wr, <char*>wr + n * rsize, &dummy, &N, vr, &ldvr,
              &q, &lwork, NULL, &inf)
    lwork = _lwork(q)
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    with nogil:
        for b in range(nb):
            _copy(&a[b, 0, 0], st[1], st[2], abuf, 1, n, n, n, False)
            if not _finite(abuf, n, n, 0):
                info[0] = NOT_FINITE
                result = b
                break
            if lapack_t is cfloat or lapack_t is cdouble:
                xgeev(&jl, &jr, &N, abuf, &N, w + b * n * sizeof(lapack_t), NULL, &dummy,
                      &N, vr, &ldvr, work, &lwork, wr, &inf)
            else:
                xgeev(&jl, &jr, &N, abuf, &N, wr, <char*>wr + n * rsize, &dummy, &N, vr,
                      &ldvr, work, &lwork, NULL, &inf)
            if inf != 0:
                info[0] = inf
                result = b
                break
            if lapack_t is cfloat or lapack_t is cdouble:
                if jobv:
                    _copy(vr, 1, n, <lapack_t*>(v + b * n * n * sizeof(lapack_t)), n, 1,
                          n, n, False)
            elif lapack_t is float:
                _real_eig_out((<float*>wr), (<float*>wr) + n, <float*>vr,
                              (<float*>w) + 2 * b * n,
                              (<float*>v) + 2 * b * n * n if jobv else NULL, n)
            else:
                _real_eig_out((<double*>wr), (<double*>wr) + n, <double*>vr,
                              (<double*>w) + 2 * b * n,
                              (<double*>v) + 2 * b * n * n if jobv else NULL, n)
    return _release(&pool, result)


ctypedef fused real_t:
    float
    double


cdef inline void _real_eig_out(real_t* wr, real_t* wi, real_t* vr, real_t* w, real_t* v,
                               Py_ssize_t n) noexcept nogil:
    """Real geev's output -> complex (interleaved re, im) w and C-ordered v. A complex
    pair (wi[j] > 0, then its conjugate) stores its vector as vr[:, j] ± i vr[:, j+1]."""
    cdef Py_ssize_t i, j = 0
    for i in range(n):
        w[2 * i] = wr[i]
        w[2 * i + 1] = wi[i]
    if v == NULL:
        return
    while j < n:
        if wi[j] == 0 or j + 1 == n:
            for i in range(n):
                v[2 * (i * n + j)] = vr[i + j * n]
                v[2 * (i * n + j) + 1] = 0
            j += 1
        else:
            for i in range(n):
                v[2 * (i * n + j)] = vr[i + j * n]
                v[2 * (i * n + j) + 1] = vr[i + (j + 1) * n]
                v[2 * (i * n + j + 1)] = vr[i + j * n]
                v[2 * (i * n + j + 1) + 1] = -vr[i + (j + 1) * n]
            j += 2


cdef struct _GetrsJob:     # one getrs call, for run_chunks
    const char* lu            # factors (nb, n, n), element strides sa (0 = broadcast)
    const int* piv            # (nb, n), element strides sp
    const char* rhs           # (nb, n, nrhs), element strides sb
    char* x                   # (nb, n, nrhs) C-ordered
    const char* o             # NULL, or Y (nb, n, nrhs), element strides so, for ...
    char* outer               # ... −X Yᴴ (nb, n, n) C-ordered
    Py_ssize_t sa[3]
    Py_ssize_t sb[3]
    Py_ssize_t so[3]
    Py_ssize_t sp[2]
    Py_ssize_t n, nrhs
    int trans
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _getrs(const lapack_t[:, :, :] lu, const int[:, :] piv,
                       const lapack_t[:, :, :] rhs, lapack_t[:, :, ::1] x, int trans,
                       const lapack_t[:, :, :] o, lapack_t[:, :, ::1] outer,
                       int nthreads, blas_int* info) noexcept:
    # lu and piv are broadcast to rhs's batch (stride 0 allowed). A factor that is
    # per-matrix Fortran-contiguous (what getrf returns) is used in place; otherwise it
    # is copied, once per distinct matrix. The right-hand sides go through a Fortran
    # buffer (copy in, solve, copy out).
    cdef _GetrsJob job
    if not (_elem_strides(lu.strides, sizeof(lapack_t), 3, job.sa) and
            _elem_strides(rhs.strides, sizeof(lapack_t), 3, job.sb)):
        return BAD_STRIDES
    job.sp[0] = piv.strides[0] // sizeof(int)
    job.sp[1] = piv.strides[1] // sizeof(int)
    job.lu = <const char*>&lu[0, 0, 0]
    job.piv = &piv[0, 0]
    job.rhs = <const char*>&rhs[0, 0, 0]
    job.x = <char*>&x[0, 0, 0]
    job.o = NULL
    job.outer = NULL
    if outer is not None:
        if not _elem_strides(o.strides, sizeof(lapack_t), 3, job.so):
            return BAD_STRIDES
        job.o = <const char*>&o[0, 0, 0]
        job.outer = <char*>&outer[0, 0, 0]
    job.n = rhs.shape[1]
    job.nrhs = rhs.shape[2]
    job.trans = trans
    job.code = _type_code(<lapack_t*>NULL)
    with nogil:
        return run_chunks(_getrs_chunk, &job, rhs.shape[0], nthreads, info)


cdef Py_ssize_t _getrs_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                             blas_int* info) noexcept nogil:
    cdef _GetrsJob* j = <_GetrsJob*>ctx
    if j.code == 0:
        return _getrs_rows(<const float*>j.lu, <const float*>j.rhs, <float*>j.x, j, b0, b1,
                           info)
    if j.code == 1:
        return _getrs_rows(<const double*>j.lu, <const double*>j.rhs, <double*>j.x, j, b0,
                           b1, info)
    if j.code == 2:
        return _getrs_rows(<const cfloat*>j.lu, <const cfloat*>j.rhs, <cfloat*>j.x, j, b0,
                           b1, info)
    return _getrs_rows(<const cdouble*>j.lu, <const cdouble*>j.rhs, <cdouble*>j.x, j, b0,
                       b1, info)


cdef Py_ssize_t _getrs_rows(const lapack_t* lu, const lapack_t* rhs, lapack_t* x,
                            _GetrsJob* j, Py_ssize_t b0, Py_ssize_t b1,
                            blas_int* info) noexcept nogil:
    cdef Py_ssize_t n = j.n, nrhs = j.nrhs, b, i
    cdef Py_ssize_t* sa = j.sa
    cdef blas_int N = <blas_int>n, NR = <blas_int>nrhs, inf = 0
    cdef char tr = b'N' if j.trans == 0 else (b'T' if j.trans == 1 else b'C')
    cdef lapack_t* abuf = NULL
    cdef lapack_t* bbuf = NULL
    cdef blas_int* ipiv = NULL
    cdef const lapack_t* src
    cdef const lapack_t* last = NULL
    cdef const int* pv
    cdef lapack_t* ap
    cdef bint fortran = sa[1] == 1 and sa[2] == n
    cdef Pool pool = _pool()
    abuf = <lapack_t*>_alloc(&pool, 1 if fortran else n * n, sizeof(lapack_t))
    bbuf = <lapack_t*>_alloc(&pool, n * nrhs, sizeof(lapack_t))
    ipiv = <blas_int*>_alloc(&pool, n, sizeof(blas_int))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    for b in range(b0, b1):
        src = lu + b * sa[0]
        if fortran:
            ap = <lapack_t*>src     # getrs only reads it
        else:
            ap = abuf
            if src != last:
                _copy(src, sa[1], sa[2], abuf, 1, n, n, n, False)
                last = src
        pv = j.piv + b * j.sp[0]
        for i in range(n):
            ipiv[i] = pv[i * j.sp[1]] + 1
            if ipiv[i] < 1 or ipiv[i] > N:
                inf = BAD_PIVOT
        if inf == BAD_PIVOT:
            info[0] = inf
            return _release(&pool, b)
        _copy(rhs + b * j.sb[0], j.sb[1], j.sb[2], bbuf, 1, n, n, nrhs, False)
        if n <= SMALL:
            s_getrs(tr, n, nrhs, ap, ipiv, bbuf)
        else:
            xgetrs(&tr, &N, &NR, ap, &N, ipiv, bbuf, &N, &inf)
        if inf != 0:
            info[0] = inf
            return _release(&pool, b)
        _copy(bbuf, 1, n, x + b * n * nrhs, nrhs, 1, n, nrhs, False)
        if j.outer != NULL:
            _minus_outer(x + b * n * nrhs, <const lapack_t*>j.o + b * j.so[0], j.so,
                         <lapack_t*>j.outer + b * n * n, n, nrhs)
    return _release(&pool, OK)


cdef inline void _minus_outer(const lapack_t* x, const lapack_t* y, Py_ssize_t* sy,
                              lapack_t* out, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """out (n x n) = −x yᴴ for x (n x k, C-ordered) and y (n x k, element strides sy)."""
    cdef Py_ssize_t i, c, r
    cdef lapack_t acc, yv
    for i in range(n):
        for c in range(n):
            acc = 0
            for r in range(k):
                yv = y[c * sy[1] + r * sy[2]]
                if lapack_t is cfloat or lapack_t is cdouble:
                    yv = yv.conjugate()
                acc = acc + x[i * k + r] * yv
            out[i * n + c] = -acc


cdef Py_ssize_t _trtrs(const lapack_t[:, :, :] a, const lapack_t[:, :, :] rhs,
                       lapack_t[:, :, ::1] x, bint lower, int trans, bint unit,
                       blas_int* info) noexcept:
    # No transposing copies: the C-ordered n x k output x is the Fortran k x n matrix
    # xᵀ, and op(a) x = b is xᵀ op(a)ᵀ = bᵀ, a right-side ?trsm done in place in x's
    # memory (b is copied in, a memcpy when it is C-ordered). A C-ordered a is the
    # Fortran T = aᵀ (triangle flipped), and op(a)ᵀ is T, Tᵀ, Tᴴ for trans 0, 1, 2; a
    # Fortran-ordered a is a itself, op(a)ᵀ = aᵀ ('T') or a ('N'), and for complex
    # trans 2 (conj(a), no BLAS op) it is copied C-ordered, as is any other layout (once
    # per distinct a). One right-hand side (x a contiguous vector) is the left-side
    # ?trsv op(a) x = b instead, whose op of T is Tᵀ, T for trans 0, 1 (complex trans 2
    # would be conj(T): ?trsm then), and that of a Fortran a is a, aᵀ, aᴴ. ?trsm/?trsv
    # do not check singularity: an exactly zero diagonal entry is reported like ?trtrs
    # does (info = its 1-based index), before solving.
    cdef Py_ssize_t nb = rhs.shape[0], n = rhs.shape[1], nrhs = rhs.shape[2], b, i
    cdef Py_ssize_t sa[3]
    cdef Py_ssize_t sb[3]
    cdef blas_int N = <blas_int>n, NR = <blas_int>nrhs
    cdef char side = b'R', uplo, tr, trv = 0
    cdef char dg = b'U' if unit else b'N'
    cdef bint c_order, f_order, copy_a
    cdef lapack_t* abuf = NULL
    cdef const lapack_t* src
    cdef const lapack_t* last = NULL
    cdef lapack_t* ap
    cdef lapack_t* xp
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    if not (_elem_strides(a.strides, sizeof(lapack_t), 3, sa) and
            _elem_strides(rhs.strides, sizeof(lapack_t), 3, sb)):
        return BAD_STRIDES
    c_order = sa[2] == 1 and sa[1] == n
    f_order = sa[1] == 1 and sa[2] == n
    if lapack_t is cfloat or lapack_t is cdouble:
        if trans == 2 and f_order and not c_order:
            f_order = False
    copy_a = not (c_order or f_order)
    if c_order or copy_a:
        uplo = b'U' if lower else b'L'
        tr = b'N' if trans == 0 else (b'T' if trans == 1 else b'C')
        if nrhs == 1 and (trans != 2 or not (lapack_t is cfloat or lapack_t is cdouble)):
            trv = b'T' if trans == 0 else b'N'
    else:
        uplo = b'L' if lower else b'U'
        tr = b'T' if trans == 0 else b'N'
        if nrhs == 1:
            trv = b'N' if trans == 0 else (b'T' if trans == 1 else b'C')
    if copy_a:
        abuf = <lapack_t*>_alloc(&pool, n * n, sizeof(lapack_t))
        if pool.failed:
            return _release(&pool, NO_MEMORY)
    with nogil:
        for b in range(nb):
            src = &a[b, 0, 0]
            if copy_a:
                ap = abuf
                if src != last:
                    _copy(src, sa[1], sa[2], abuf, n, 1, n, n, False)
                    last = src
            else:
                ap = <lapack_t*>src     # trsm only reads it
            if not unit:
                # the diagonal is at the same place in any square layout
                for i in range(n):
                    if ap[i * (n + 1)] == 0:
                        info[0] = <blas_int>(i + 1)
                        result = b
                        break
                if result != OK:
                    break
            xp = &x[b, 0, 0]
            _copy(&rhs[b, 0, 0], sb[1], sb[2], xp, nrhs, 1, n, nrhs, False)
            if trv:
                xtrsv(&uplo, &trv, &dg, &N, ap, &N, xp)
            else:
                xtrsm(&side, &uplo, &tr, &dg, &NR, &N, ap, &N, xp, &NR)
    return _release(&pool, result)


cdef Py_ssize_t _gelsd(const lapack_t[:, :, :] a, const lapack_t[:, :, :] rhs,
                       lapack_t[:, :, ::1] x, char* s, int64_t[::1] rank, double rcond,
                       blas_int* info) noexcept:
    # Each matrix is copied into a Fortran m x n buffer and its right-hand sides into a
    # Fortran max(m, n) x k buffer (gelsd writes the n x k solution over b, so b needs
    # max(m, n) rows); the solution's first n rows are copied out C-ordered.
    cdef Py_ssize_t nb = a.shape[0], m = a.shape[1], n = a.shape[2], k = rhs.shape[2], b
    cdef Py_ssize_t sa[3]
    cdef Py_ssize_t sb[3]
    cdef Py_ssize_t mn = m if m < n else n, ldb = m if m > n else n
    cdef blas_int M = <blas_int>m, N = <blas_int>n, K = <blas_int>k, LDB = <blas_int>ldb
    cdef blas_int lwork, inf = 0, rk = 0
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef bint single = rsize == sizeof(float)
    cdef float rc_f = <float>rcond
    cdef double rc_d = rcond
    cdef void* rc = <void*>&rc_f if single else <void*>&rc_d
    cdef lapack_t* abuf = NULL
    cdef lapack_t* bbuf = NULL
    cdef lapack_t* work = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    if not (_elem_strides(a.strides, sizeof(lapack_t), 3, sa) and
            _elem_strides(rhs.strides, sizeof(lapack_t), 3, sb)):
        return BAD_STRIDES
    abuf = <lapack_t*>_alloc(&pool, m * n, sizeof(lapack_t))
    bbuf = <lapack_t*>_alloc(&pool, ldb * k, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    lwork = _gelsd_alloc(&M, &N, &K, abuf, &M, bbuf, &LDB, s, rc, &work, &rwork, &iwork,
                         &pool)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    with nogil:
        for b in range(nb):
            _copy(&a[b, 0, 0], sa[1], sa[2], abuf, 1, m, m, n, False)
            if not _finite(abuf, n, m, 0):
                info[0] = NOT_FINITE
                result = b
                break
            _copy(&rhs[b, 0, 0], sb[1], sb[2], bbuf, 1, ldb, m, k, False)
            xgelsd(&M, &N, &K, abuf, &M, bbuf, &LDB, s + b * mn * rsize, rc, &rk, work,
                   &lwork, rwork, iwork, &inf)
            if inf != 0:
                info[0] = inf
                result = b
                break
            rank[b] = rk
            _copy(bbuf, 1, ldb, &x[b, 0, 0], k, 1, n, k, False)
    return _release(&pool, result)


cdef inline double _abs2(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return <double>z.real * z.real + <double>z.imag * z.imag
    else:
        return <double>z * z


cdef Py_ssize_t _lstsq_qr(const lapack_t[:, :, :] a, const lapack_t[:, :, :] rhs,
                          lapack_t[:, :, ::1] x, char* s, char* res,
                          lapack_t[:, :, ::1] r, int64_t[::1] rank, double rcond,
                          blas_int* info) noexcept:
    # Least squares through a QR factorization, rank-revealing by the singular values of
    # its triangular factor (they are A's), with gelsd for the rank-deficient matrices.
    # Per matrix, with p = min(m, n) and F a Fortran max(m, n) x p work buffer:
    #   m >= n  F = A (m x n), geqrf: A = QR. s = svd(R) (gesdd 'N' on a copy of R: R is
    #           also an output, for the backward). Full rank: C = Qᴴb (ormqr), x = R⁻¹C[:n]
    #           (trsm), res = Σ|C[n:]|² per column (the squared residual norms).
    #   m < n   F = Aᴴ (n x m, a conjugating copy), geqrf: Aᴴ = QR, A = RᴴQᴴ. The
    #           minimum-norm solution is x = Q R⁻ᴴ b: trsm on b, zero-padded to n rows,
    #           then ormqr.
    # Rank: the number of s > rc·s_max with rc = rcond, or LAPACK's eps when rcond <= 0
    # or rcond >= 1 -- gelsd's own rule (?lalsd), so the rank is gelsd's. A matrix below
    # full rank (or whose gesdd fails) is solved again from scratch by gelsd, which then
    # sets its x, s and rank: the minimum-norm solution exactly as before.
    cdef Py_ssize_t nb = a.shape[0], m = a.shape[1], n = a.shape[2], k = rhs.shape[2]
    cdef Py_ssize_t b, i, j, full
    cdef Py_ssize_t sa[3]
    cdef Py_ssize_t sb[3]
    cdef bint tall = m >= n
    cdef Py_ssize_t p = n if tall else m, ldf = m if tall else n
    cdef blas_int M = <blas_int>m, N = <blas_int>n, K = <blas_int>k
    cdef blas_int FM = <blas_int>ldf, P = <blas_int>p, LD = <blas_int>ldf
    cdef blas_int lwork, lw2 = -1, glwork = 0, inf = 0, rk = 0
    cdef char jz = b'N', side = b'L', up = b'U', nt = b'N', ct = b'C', tt = b'T'
    cdef char* qtrans = &tt   # ormqr's 'T' (xormqr makes it 'C' for complex)
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef bint single = rsize == sizeof(float)
    cdef double eps = 5.960464477539063e-08 if single else 1.1102230246251565e-16
    cdef double rc = rcond if 0 < rcond < 1 else eps, tol, acc, smax
    cdef float rc_f = <float>rcond
    cdef double rc_d = rcond
    cdef void* grc = <void*>&rc_f if single else <void*>&rc_d
    cdef lapack_t q
    cdef lapack_t* fbuf = NULL
    cdef lapack_t* tau = NULL
    cdef lapack_t* rbuf = NULL
    cdef lapack_t* bbuf = NULL
    cdef lapack_t* work = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef lapack_t* gwork = NULL     # gelsd's, allocated at the first rank-deficient matrix
    cdef void* grwork = NULL
    cdef blas_int* giwork = NULL
    cdef lapack_t* rb
    cdef lapack_t* bcol
    cdef char* sbp
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    if not (_elem_strides(a.strides, sizeof(lapack_t), 3, sa) and
            _elem_strides(rhs.strides, sizeof(lapack_t), 3, sb)):
        return BAD_STRIDES
    fbuf = <lapack_t*>_alloc(&pool, m * n, sizeof(lapack_t))
    tau = <lapack_t*>_alloc(&pool, p, sizeof(lapack_t))
    rbuf = <lapack_t*>_alloc(&pool, p * p, sizeof(lapack_t))
    bbuf = <lapack_t*>_alloc(&pool, ldf * k, sizeof(lapack_t))
    iwork = <blas_int*>_alloc(&pool, 8 * p, sizeof(blas_int))
    rwork = _alloc(&pool, 7 * p if (lapack_t is cfloat or lapack_t is cdouble) else 1,
                   rsize)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    # one workspace for geqrf, gesdd and ormqr: the largest of their queries
    lwork = _qr_svd_lwork(&FM, &P, fbuf, tau, rbuf, s, rwork, iwork)
    xormqr(&side, &nt, &FM, &K, &P, fbuf, &FM, tau, bbuf, &LD, &q, &lw2, &inf)
    lwork = _max_lwork(lwork, q)
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    with nogil:
        for b in range(nb):
            sbp = s + b * p * rsize
            _load_f(&a[b, 0, 0], sa, fbuf, m, n, tall)
            if not _finite(fbuf, m, n, 0):
                info[0] = NOT_FINITE
                result = b
                break
            xgeqrf(&FM, &P, fbuf, &FM, tau, work, &lwork, &inf)
            if inf != 0:
                info[0] = inf
                result = b
                break
            # R, C-ordered with zeros below the diagonal, to the output; its memory is the
            # Fortran Rᵀ, whose singular values gesdd computes in rbuf
            rb = &r[b, 0, 0]
            _upper(fbuf, ldf, rb, p, p)
            memcpy(rbuf, rb, p * p * sizeof(lapack_t))
            xgesdd(&jz, &P, &P, rbuf, &P, sbp, rbuf, &P, rbuf, &P, work, &lwork, rwork,
                   iwork, &inf)
            full = 0
            if inf == 0:
                smax = _sv(sbp, 0, single)   # tol in gelsd's precision: its rank
                tol = <float>(<float>rc * <float>smax) if single else rc * smax
                full = _n_above(sbp, p, tol, single)
            if full == p:
                rk = P
                if tall:
                    _copy(&rhs[b, 0, 0], sb[1], sb[2], bbuf, 1, ldf, m, k, False)
                    xormqr(&side, qtrans, &FM, &K, &P, fbuf, &FM, tau, bbuf, &LD, work,
                           &lwork, &inf)
                    xtrsm(&side, &up, &nt, &nt, &P, &K, fbuf, &FM, bbuf, &LD)
                else:
                    _copy(&rhs[b, 0, 0], sb[1], sb[2], bbuf, 1, ldf, m, k, False)
                    xtrsm(&side, &up, &ct, &nt, &P, &K, fbuf, &FM, bbuf, &LD)
                    for j in range(k):
                        bcol = bbuf + j * ldf
                        for i in range(m, n):
                            bcol[i] = 0
                    xormqr(&side, &nt, &FM, &K, &P, fbuf, &FM, tau, bbuf, &LD, work,
                           &lwork, &inf)
            else:
                # below full rank (or gesdd failed): gelsd on the original matrix
                if gwork == NULL:
                    glwork = _gelsd_alloc(&M, &N, &K, fbuf, &M, bbuf, &LD, sbp, grc, &gwork,
                                          &grwork, &giwork, &pool)
                    if pool.failed:
                        result = NO_MEMORY
                        break
                _copy(&a[b, 0, 0], sa[1], sa[2], fbuf, 1, m, m, n, False)
                _copy(&rhs[b, 0, 0], sb[1], sb[2], bbuf, 1, ldf, m, k, False)
                xgelsd(&M, &N, &K, fbuf, &M, bbuf, &LD, sbp, grc, &rk, gwork, &glwork,
                       grwork, giwork, &inf)
                if inf != 0:
                    info[0] = inf
                    result = b
                    break
            rank[b] = rk
            # squared residual norms: the rows n..m-1 of Qᴴb (gelsd leaves them there
            # too), when the matrix has full column rank; 0 otherwise
            for j in range(k):
                acc = 0
                if rk == n:
                    bcol = bbuf + j * ldf
                    for i in range(n, m):
                        acc += _abs2(bcol[i])
                if single:
                    (<float*>res)[b * k + j] = <float>acc
                else:
                    (<double*>res)[b * k + j] = acc
            _copy(bbuf, 1, ldf, &x[b, 0, 0], k, 1, n, k, False)
    return _release(&pool, result)


cdef Py_ssize_t _pinv_qr(const lapack_t[:, :, :] a, lapack_t[:, :, ::1] x,
                         const double[::1] rtol, uint8_t[::1] full,
                         blas_int* info) noexcept:
    # The pseudo-inverse of a matrix of full rank p = min(m, n) through QR: with F = A
    # (m >= n) or F = Aᴴ (m < n) in a Fortran buffer, geqrf gives F = QR and F⁺ = R⁻¹Qᴴ.
    # Y = QR⁻ᴴ = (F⁺)ᴴ is orgqr and one trsm in place; then A⁺ = Yᴴ (tall; the C-ordered
    # x's memory is the Fortran xᵀ = conj(Y): a conjugating memcpy) or A⁺ = Y (wide: a
    # transposing copy). full[b] = 1 when every singular value of R (they are A's)
    # exceeds rtol[b]·s_max; otherwise x[b] is left unset (and a non-finite matrix is
    # just reported not full): the caller takes the SVD path for such a stack.
    cdef Py_ssize_t nb = a.shape[0], m = a.shape[1], n = a.shape[2], b, i, j
    cdef Py_ssize_t sa[3]
    cdef bint tall = m >= n
    cdef Py_ssize_t p = n if tall else m, ldf = m if tall else n
    cdef blas_int FM = <blas_int>ldf, P = <blas_int>p
    cdef blas_int lwork, lw2 = -1, inf = 0
    cdef char jz = b'N', side = b'R', up = b'U', nt = b'N', ct = b'C'
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef bint single = rsize == sizeof(float)
    cdef lapack_t q
    cdef lapack_t* fbuf = NULL
    cdef lapack_t* tau = NULL
    cdef lapack_t* rbuf = NULL
    cdef lapack_t* rtri = NULL
    cdef lapack_t* work = NULL
    cdef void* s = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    if not _elem_strides(a.strides, sizeof(lapack_t), 3, sa):
        return BAD_STRIDES
    fbuf = <lapack_t*>_alloc(&pool, m * n, sizeof(lapack_t))
    tau = <lapack_t*>_alloc(&pool, p, sizeof(lapack_t))
    rbuf = <lapack_t*>_alloc(&pool, p * p, sizeof(lapack_t))
    rtri = <lapack_t*>_alloc(&pool, p * p, sizeof(lapack_t))
    s = _alloc(&pool, p, rsize)
    iwork = <blas_int*>_alloc(&pool, 8 * p, sizeof(blas_int))
    rwork = _alloc(&pool, 7 * p if (lapack_t is cfloat or lapack_t is cdouble) else 1,
                   rsize)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    # one workspace for geqrf, gesdd and orgqr: the largest of their queries
    lwork = _qr_svd_lwork(&FM, &P, fbuf, tau, rbuf, s, rwork, iwork)
    xorgqr(&FM, &P, &P, fbuf, &FM, tau, &q, &lw2, &inf)
    lwork = _max_lwork(lwork, q)
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    with nogil:
        for b in range(nb):
            full[b] = 0
            _load_f(&a[b, 0, 0], sa, fbuf, m, n, tall)
            if not _finite(fbuf, m, n, 0):
                continue
            xgeqrf(&FM, &P, fbuf, &FM, tau, work, &lwork, &inf)
            if inf != 0:
                info[0] = inf
                result = b
                break
            # R (Fortran p x p, upper) for the trsm, and a copy for gesdd to destroy
            for j in range(p):
                for i in range(p):
                    rtri[i + j * p] = fbuf[i + j * ldf] if i <= j else 0
            memcpy(rbuf, rtri, p * p * sizeof(lapack_t))
            xgesdd(&jz, &P, &P, rbuf, &P, s, rbuf, &P, rbuf, &P, work, &lwork, rwork,
                   iwork, &inf)
            if inf != 0 or _n_above(s, p, rtol[b] * _sv(s, 0, single), single) < p:
                continue
            xorgqr(&FM, &P, &P, fbuf, &FM, tau, work, &lwork, &inf)
            if inf != 0:
                info[0] = inf
                result = b
                break
            xtrsm(&side, &up, &ct, &nt, &FM, &P, rtri, &P, fbuf, &FM)
            if tall:
                _copy(fbuf, m, 1, &x[b, 0, 0], m, 1, n, m, True)
            else:
                _copy(fbuf, 1, n, &x[b, 0, 0], m, 1, n, m, False)
            full[b] = 1
    return _release(&pool, result)


# ---------------------------------------------------------------------------------------
# Python entry points (same names, signatures and results as the twins in lapack_twin.py)
# ---------------------------------------------------------------------------------------

cdef inline int _code_of(object dtype) except -1:
    cdef str ch = dtype.char
    cdef Py_ssize_t c = _CHARS.find(ch)
    if c < 0:
        raise DTypeError(f"LAPACK needs float32, float64, complex64 or complex128 input, "
                         f"got {dtype}; convert with .astype(np.float64) first")
    return <int>c


cdef object _lapack_array(object a):
    """``a`` as an ndarray of one of the four LAPACK dtypes (ints and bools -> float64)."""
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    dt = a.dtype
    if dt.kind in "biu":
        a = a.astype(np.float64)
    elif not dt.isnative:
        a = a.astype(dt.newbyteorder("="))
    return a


cdef Py_ssize_t _prod(tuple shape):
    cdef Py_ssize_t p = 1
    for d in shape:
        p *= <Py_ssize_t>d
    return p


# np.newaxis, as an opaque object: Cython would otherwise compile ``a[None]`` with an
# integer fast path that the C compiler warns about.
cdef object _NEWAXIS = None


@cython.wraparound(True)
cdef inline object _flat3(object a, tuple batch, Py_ssize_t nb):
    """The stack ``a`` (*batch, m, n) as (nb, m, n): a view when it can be (a[None] and a
    itself are cheaper than reshape for the common 2-D and 3-D cases)."""
    cdef Py_ssize_t nd = len(batch)
    if nd == 0:
        return a[_NEWAXIS]
    if nd == 1:
        return a
    return a.reshape((nb,) + a.shape[nd:])


cdef inline object _unflat(object x, tuple batch):
    """An output (nb, ...) back to (*batch, ...)."""
    cdef Py_ssize_t nd = len(batch)
    if nd == 0:
        return x[0]
    if nd == 1:
        return x
    return x.reshape(batch + x.shape[1:])


cdef str _where(Py_ssize_t bad, tuple batch):
    if not batch:
        return "the matrix"
    from tenferro._kernels._batch import batch_index
    return f"matrix {batch_index(bad, batch)} of the stack"


cdef object _fail(Py_ssize_t bad, blas_int info, tuple batch, str routine, str what):
    """The exception for a kernel's return code ``bad`` (a batch position, or < -1)."""
    if bad == NO_MEMORY:
        return MemoryError(f"tenferro: out of memory for the {routine} workspace")
    if info == BAD_PIVOT:
        return ValueError(f"getrs: the pivots of {_where(bad, batch)} are not row indices "
                          "0..n-1 (piv must come from getrf)")
    if info == NOT_FINITE:
        return LinAlgError(f"{what}: {_where(bad, batch)} has a non-finite entry (NaN or "
                           "Inf); LAPACK cannot decompose it")
    if info < 0:
        return RuntimeError(f"internal error: LAPACK {routine} rejected its argument "
                            f"{-info}; please report this")
    return LinAlgError(f"{what}: {_where(bad, batch)} ({routine} info={info})")


cdef char* _ptr(object x) except NULL:
    """Data pointer of a freshly allocated (C-contiguous, non-empty) output array; it
    stays valid while the caller holds x."""
    cdef Py_buffer view
    PyObject_GetBuffer(x, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE)
    cdef char* p = <char*>view.buf
    PyBuffer_Release(&view)
    return p


@cython.wraparound(True)   # negative indices of Python tuples below
def svd(a, full_matrices=False, compute_uv=True):
    """(u, s, vt) like numpy.linalg.svd, or s alone when ``compute_uv`` is False.

    gesdd on each matrix, falling back to gesvd for a matrix where it does not converge;
    LinAlgError naming the batch index when both fail (e.g. a NaN entry)."""
    cdef int jobz = (2 if full_matrices else 1) if compute_uv else 0
    cdef int single = matrix2_code(a)
    if single >= 0:
        return _svd_single(<cnp.ndarray>a, single, jobz)
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t m = shape[-2], n = shape[-1], k = min(m, n), nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    if nb == 0 or k == 0:
        return _ref.svd(a, full_matrices, compute_uv)
    a3 = _flat3(a, batch, nb)
    s = np.empty((nb, k), _REAL[code])
    u = vt = None
    if jobz:
        u = np.empty((nb, m, m if jobz == 2 else k), a.dtype)
        vt = np.empty((nb, n if jobz == 2 else k, n), a.dtype)
    cdef char* sp = _ptr(s)
    cdef int t = _threads._threads_for(nb, max(m, n), 22 * nb * m * n * k, False)
    if code == 0:
        bad = _svd[float](a3, u, vt, sp, jobz, t, &info)
    elif code == 1:
        bad = _svd[double](a3, u, vt, sp, jobz, t, &info)
    elif code == 2:
        bad = _svd[cfloat](a3, u, vt, sp, jobz, t, &info)
    else:
        bad = _svd[cdouble](a3, u, vt, sp, jobz, t, &info)
    if bad == BAD_STRIDES:
        return svd(a.copy(), full_matrices, compute_uv)
    if bad != OK:
        raise _fail(bad, info, batch, "gesdd/gesvd", "SVD did not converge")
    s = _unflat(s, batch)
    if not jobz:
        return s
    return _unflat(u, batch), s, _unflat(vt, batch)


@cython.wraparound(True)   # negative indices of Python tuples below
def eigh(a, lower=True, compute_v=True):
    """(w, v): ascending eigenvalues and unit eigenvectors (columns of v) of Hermitian
    matrices, reading their lower (or upper) triangle; w alone if ``compute_v`` is False.
    syevd/heevd; LinAlgError naming the batch index when it does not converge."""
    cdef int single = matrix2_code(a)
    if single >= 0 and cnp.PyArray_DIMS(<cnp.ndarray>a)[0] == cnp.PyArray_DIMS(<cnp.ndarray>a)[1]:
        return _eigh_single(<cnp.ndarray>a, single, lower, compute_v)
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t n = shape[-1], nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef bint jobv = compute_v
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    if nb == 0 or n == 0:
        return _ref.eigh(a, lower, compute_v)
    a3 = _flat3(a, batch, nb)
    w = np.empty((nb, n), _REAL[code])
    v = np.empty((nb, n, n), a.dtype) if jobv else None
    cdef char* wp = _ptr(w)
    cdef int t = _threads._threads_for(nb, n, 12 * nb * n * n * n, False)
    if code == 0:
        bad = _eigh[float](a3, v, wp, lower, jobv, t, &info)
    elif code == 1:
        bad = _eigh[double](a3, v, wp, lower, jobv, t, &info)
    elif code == 2:
        bad = _eigh[cfloat](a3, v, wp, lower, jobv, t, &info)
    else:
        bad = _eigh[cdouble](a3, v, wp, lower, jobv, t, &info)
    if bad == BAD_STRIDES:
        return eigh(a.copy(), lower, compute_v)
    if bad != OK:
        raise _fail(bad, info, batch, "heevd" if code >= 2 else "syevd",
                    "eigh did not converge")
    w = _unflat(w, batch)
    if not jobv:
        return w
    return w, _unflat(v, batch)


cdef inline int _real_type(int code) noexcept:
    return cnp.NPY_FLOAT if code == 0 or code == 2 else cnp.NPY_DOUBLE


cdef object _svd_single(cnp.ndarray a, int code, int jobz):
    """svd of one matrix (see _single.pxd's matrix2_code; any strides), serially on the calling
    thread: the stack path's results without its views and thread plan."""
    cdef Py_ssize_t m = cnp.PyArray_DIMS(a)[0], n = cnp.PyArray_DIMS(a)[1], bad
    cdef cnp.npy_intp k = m if m < n else n
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(a)
    cdef cnp.npy_intp dims[2]
    cdef _SvdJob job
    cdef blas_int info = 0
    cdef cnp.ndarray s = cnp.PyArray_SimpleNew(1, &k, _real_type(code))
    cdef cnp.ndarray u = None, vt = None
    job.u = job.vt = NULL
    if jobz:
        dims[0], dims[1] = m, (m if jobz == 2 else k)
        u = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
        dims[0], dims[1] = (n if jobz == 2 else k), n
        vt = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
        job.u = <char*>cnp.PyArray_DATA(u)
        job.vt = <char*>cnp.PyArray_DATA(vt)
    job.a = <const char*>cnp.PyArray_DATA(a)
    job.st[0] = 0
    job.st[1] = cnp.PyArray_STRIDES(a)[0] // isz
    job.st[2] = cnp.PyArray_STRIDES(a)[1] // isz
    job.s = <char*>cnp.PyArray_DATA(s)
    job.m, job.n, job.jobz, job.code = m, n, jobz, code
    with nogil:
        bad = _svd_chunk(&job, 0, 1, True, &info)
    if bad != OK:
        raise _fail(bad, info, (), "gesdd/gesvd", "SVD did not converge")
    return (u, s, vt) if jobz else s


cdef object _eigh_single(cnp.ndarray a, int code, bint lower, bint jobv):
    """eigh of one square matrix (see _single.pxd's matrix2_code; any strides), serially on the
    calling thread: the stack path's results without its views and thread plan."""
    cdef cnp.npy_intp n = cnp.PyArray_DIMS(a)[0]
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(a), bad
    cdef _EighJob job
    cdef blas_int info = 0
    cdef cnp.ndarray w = cnp.PyArray_SimpleNew(1, &n, _real_type(code))
    cdef cnp.ndarray v = None
    job.v = NULL
    if jobv:
        v = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(a), cnp.PyArray_TYPE(a))
        job.v = <char*>cnp.PyArray_DATA(v)
    job.a = <const char*>cnp.PyArray_DATA(a)
    job.st[0] = 0
    job.st[1] = cnp.PyArray_STRIDES(a)[0] // isz
    job.st[2] = cnp.PyArray_STRIDES(a)[1] // isz
    job.w = <char*>cnp.PyArray_DATA(w)
    job.n, job.lower, job.code = n, lower, code
    with nogil:
        bad = _eigh_chunk(&job, 0, 1, True, &info)
    if bad != OK:
        raise _fail(bad, info, (), "heevd" if code >= 2 else "syevd",
                    "eigh did not converge")
    return (w, v) if jobv else w


cdef object _qr_single(cnp.ndarray a, int code, int imode):
    """qr of one matrix (see _single.pxd's matrix2_code; any strides), serially on the calling
    thread: the stack path's q, r without its views and thread plan."""
    cdef Py_ssize_t m = cnp.PyArray_DIMS(a)[0], n = cnp.PyArray_DIMS(a)[1], bad
    cdef Py_ssize_t k = m if m < n else n, isz = cnp.PyArray_ITEMSIZE(a)
    cdef cnp.npy_intp dims[2]
    cdef _QrJob job
    cdef blas_int info = 0
    dims[0], dims[1] = (m if imode == 2 else k), n
    cdef cnp.ndarray r = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
    cdef cnp.ndarray q = None
    job.q = NULL
    if imode:
        dims[0], dims[1] = m, (m if imode == 2 else k)
        q = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
        job.q = <char*>cnp.PyArray_DATA(q)
    job.a = <const char*>cnp.PyArray_DATA(a)
    job.st[0] = 0
    job.st[1] = cnp.PyArray_STRIDES(a)[0] // isz
    job.st[2] = cnp.PyArray_STRIDES(a)[1] // isz
    job.r = <char*>cnp.PyArray_DATA(r)
    job.m, job.n, job.rrows = m, n, cnp.PyArray_DIMS(r)[0]
    job.mode, job.code = imode, code
    if m > SMALL or n > SMALL:
        with nogil:
            bad = _qr_chunk(&job, 0, 1, True, &info)
    else:
        bad = _qr_chunk(&job, 0, 1, True, &info)
    if bad != OK:
        raise _fail(bad, info, (), "geqrf/geqrt/orgqr", "QR failed")
    return r if not imode else (q, r)


@cython.wraparound(True)   # negative indices of Python tuples below
def qr(a, mode="reduced"):
    """(q, r) like numpy.linalg.qr for mode "reduced" (q m x k, r k x n) or "complete"
    (q m x m, r m x n); r alone (k x n) for mode "r". geqrf + orgqr/ungqr for small
    matrices, geqrt + block accumulation of Q for larger ones (see _qr_block)."""
    cdef int imode
    if mode == "reduced":
        imode = 1
    elif mode == "complete":
        imode = 2
    elif mode == "r":
        imode = 0
    else:
        raise ValueError(f"qr mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    cdef int single = matrix2_code(a)
    if single >= 0:
        return _qr_single(<cnp.ndarray>a, single, imode)
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t m = shape[-2], n = shape[-1], k = min(m, n), nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    if nb == 0 or k == 0:
        return _ref.qr(a, mode)
    a3 = _flat3(a, batch, nb)
    r = np.empty((nb, m if imode == 2 else k, n), a.dtype)
    q = np.empty((nb, m, m if imode == 2 else k), a.dtype) if imode else None
    # the geqrt path (larger k) is made of level-3 calls (see tenferro._threads)
    cdef int t = _threads._threads_for(nb, max(m, n), 6 * nb * m * n * k,
                                       _qr_block(m, n, imode) != 0)
    if code == 0:
        bad = _qr[float](a3, q, r, imode, t, &info)
    elif code == 1:
        bad = _qr[double](a3, q, r, imode, t, &info)
    elif code == 2:
        bad = _qr[cfloat](a3, q, r, imode, t, &info)
    else:
        bad = _qr[cdouble](a3, q, r, imode, t, &info)
    if bad == BAD_STRIDES:
        return qr(a.copy(), mode)
    if bad != OK:
        raise _fail(bad, info, batch, "geqrf/geqrt/orgqr", "QR failed")
    r = _unflat(r, batch)
    if not imode:
        return r
    return _unflat(q, batch), r


@cython.wraparound(True)   # negative indices of Python tuples below
def getrf(a, return_info=False):
    """LU factors of each matrix: (lu, piv) with 0-based row interchanges, like
    scipy.linalg.lu_factor (piv has min(m, n) entries, int32). Exactly singular matrices
    are factored (zero pivot), not rejected: with ``return_info=True`` the result is
    (lu, piv, info), info (*batch) int32 holding LAPACK's info per matrix (k > 0: u[k-1,
    k-1] is exactly zero), for det and solve to use. lu is a per-matrix Fortran-ordered
    view (a transposed C array), which getrs uses without a copy."""
    cdef int single = matrix2_code(a)
    if single >= 0:
        return _getrf_single(<cnp.ndarray>a, single, return_info)
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t m = shape[-2], n = shape[-1], k = min(m, n), nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    if nb == 0 or k == 0:
        return _ref.getrf(a, return_info)
    a3 = _flat3(a, batch, nb)
    lu = np.empty((nb, n, m), a.dtype)
    piv = np.empty((nb, k), np.int32)
    infos_arr = None
    if return_info:
        infos_arr = np.empty(nb, np.int32)
    cdef int[::1] infos_mv
    cdef blas_int* infos = NULL
    if infos_arr is not None:
        infos_mv = infos_arr
        infos = &infos_mv[0]
    cdef int t = _threads._threads_for(nb, max(m, n), nb * m * n * k,
                              max(m, n) > SMALL)     # plain loops up to SMALL
    if code == 0:
        bad = _getrf[float](a3, lu, piv, infos, t, &info)
    elif code == 1:
        bad = _getrf[double](a3, lu, piv, infos, t, &info)
    elif code == 2:
        bad = _getrf[cfloat](a3, lu, piv, infos, t, &info)
    else:
        bad = _getrf[cdouble](a3, lu, piv, infos, t, &info)
    if bad == BAD_STRIDES:
        return getrf(a.copy(), return_info)
    if bad != OK:
        raise _fail(bad, info, batch, "getrf", "LU failed")
    lu = _unflat(lu, batch).swapaxes(-1, -2)
    piv = _unflat(piv, batch)
    if return_info:
        return lu, piv, infos_arr.reshape(batch)
    return lu, piv


@cython.wraparound(True)   # negative indices of Python tuples below
def lu(a, return_perm=False):
    """(p, l, u) with a = p @ l @ u for any m x n: p (m x m) a permutation matrix of a's
    real dtype, l (m x k) unit lower, u (k x n) upper, k = min(m, n), like scipy.linalg.lu.
    Exactly singular matrices are fine. With ``return_perm``, (p, l, u, perm): perm
    (*batch, m) intp with p[perm[i], i] = 1 (row i of l @ u is row perm[i] of a)."""
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t m = shape[-2], n = shape[-1], k = min(m, n), nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef char* pp
    cdef Py_ssize_t* qp = NULL
    if nb == 0 or k == 0:
        return _ref.lu(a, return_perm)
    cdef Py_ssize_t st[3]
    cdef cnp.npy_intp dims[4]
    cdef int nd = len(batch) + 2, i
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if nd == 2:
        st[0] = 0
        st[1] = cnp.PyArray_STRIDES(arr)[0]
        st[2] = cnp.PyArray_STRIDES(arr)[1]
    else:
        a3 = _flat3(a, batch, nb)
        arr = <cnp.ndarray>a3
        for i in range(3):
            st[i] = cnp.PyArray_STRIDES(arr)[i]
    for i in range(3):
        if st[i] % cnp.PyArray_ITEMSIZE(arr):
            return lu(a.copy(), return_perm)
        st[i] //= cnp.PyArray_ITEMSIZE(arr)
    # the outputs are made with the final shapes (a C-ordered stack is its flat stack)
    p = np.empty(batch + (m, m), _REAL[code])
    l = np.empty(batch + (m, k), a.dtype)
    u = np.empty(batch + (k, n), a.dtype)
    perm = None
    if return_perm:
        perm = np.empty(batch + (m,), np.intp)
        qp = <Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>perm)
    pp = <char*>cnp.PyArray_DATA(<cnp.ndarray>p)
    cdef char* ap = <char*>cnp.PyArray_DATA(arr)
    cdef char* lp_ = <char*>cnp.PyArray_DATA(<cnp.ndarray>l)
    cdef char* up = <char*>cnp.PyArray_DATA(<cnp.ndarray>u)
    if code == 0:
        bad = _plu(<const float*>ap, st, nb, m, n, pp, <float*>lp_, <float*>up, qp, &info)
    elif code == 1:
        bad = _plu(<const double*>ap, st, nb, m, n, pp, <double*>lp_, <double*>up, qp, &info)
    elif code == 2:
        bad = _plu(<const cfloat*>ap, st, nb, m, n, pp, <cfloat*>lp_, <cfloat*>up, qp, &info)
    else:
        bad = _plu(<const cdouble*>ap, st, nb, m, n, pp, <cdouble*>lp_, <cdouble*>up, qp,
                   &info)
    if bad != OK:
        raise _fail(bad, info, batch, "getrf", "LU failed")
    if return_perm:
        return p, l, u, perm
    return p, l, u


cdef inline int _single_matrix_code(object a) noexcept:
    """matrix2_code (_single.pxd) for a square C-ordered matrix."""
    cdef int code = matrix2_code(a)
    if (code < 0 or not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>a)
            or cnp.PyArray_DIMS(<cnp.ndarray>a)[0] != cnp.PyArray_DIMS(<cnp.ndarray>a)[1]):
        return -1
    return code


cdef object _getrf_single(cnp.ndarray a, int code, bint return_info):
    """getrf of one matrix (see _single.pxd's matrix2_code; any strides), serially on the calling
    thread: the same (lu, piv[, info]) as the stack path."""
    cdef Py_ssize_t m = cnp.PyArray_DIMS(a)[0], n = cnp.PyArray_DIMS(a)[1], bad
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(a)
    cdef cnp.npy_intp dims[2]
    cdef cnp.npy_intp k = m if m < n else n
    cdef _GetrfJob job
    cdef blas_int info = 0, inf = 0
    dims[0], dims[1] = n, m
    cdef cnp.ndarray lu = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
    cdef cnp.ndarray piv = cnp.PyArray_SimpleNew(1, &k, cnp.NPY_INT32)
    job.a = <const char*>cnp.PyArray_DATA(a)
    job.lu = <char*>cnp.PyArray_DATA(lu)
    job.piv = <blas_int*>cnp.PyArray_DATA(piv)
    job.infos = &inf
    job.st[0] = 0
    job.st[1] = cnp.PyArray_STRIDES(a)[0] // isz
    job.st[2] = cnp.PyArray_STRIDES(a)[1] // isz
    job.m, job.n, job.code = m, n, code
    if m > SMALL or n > SMALL:
        with nogil:
            bad = _getrf_chunk(&job, 0, 1, True, &info)
    else:
        bad = _getrf_chunk(&job, 0, 1, True, &info)
    if bad != OK:
        raise _fail(bad, info, (), "getrf", "LU failed")
    lut = cnp.PyArray_Transpose(lu, NULL)
    if not return_info:
        return lut, piv
    infos = cnp.PyArray_SimpleNew(0, NULL, cnp.NPY_INT32)
    (<int*>cnp.PyArray_DATA(<cnp.ndarray>infos))[0] = inf
    return lut, piv, infos


cdef object _potrf_single(cnp.ndarray a, int code, bint lower):
    """potrf of one matrix (see _single_matrix_code), serially on the calling thread."""
    cdef Py_ssize_t n = cnp.PyArray_DIMS(a)[0], bad
    cdef cnp.ndarray c = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(a), cnp.PyArray_TYPE(a))
    cdef _PotrfJob job
    cdef blas_int info = 0
    job.a = <const char*>cnp.PyArray_DATA(a)
    job.c = <char*>cnp.PyArray_DATA(c)
    job.st[0], job.st[1], job.st[2] = n * n, n, 1
    job.n = n
    job.lower = lower
    job.code = code
    if n > SMALL:
        with nogil:
            bad = _potrf_chunk(&job, 0, 1, True, &info)
    else:
        bad = _potrf_chunk(&job, 0, 1, True, &info)
    if bad >= 0 and info > 0:
        raise LinAlgError(f"the matrix is not positive definite (its leading minor of "
                          f"order {info} is not positive)")
    if bad != OK:
        raise _fail(bad, info, (), "potrf", "Cholesky failed")
    return c


@cython.wraparound(True)   # negative indices of Python tuples below
def potrf(a, lower=True):
    """Cholesky factor (lower: a = l lᴴ; upper: a = uᴴ u), zeros in the other triangle,
    reading only that triangle of a. Raises LinAlgError naming the batch index when a
    matrix is not positive definite."""
    cdef int single = _single_matrix_code(a)
    if single >= 0:
        return _potrf_single(<cnp.ndarray>a, single, lower)
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t n = shape[-1], nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef int t
    if nb == 0 or n == 0:
        return _ref.potrf(a, lower)
    a3 = _flat3(a, batch, nb)
    c = np.empty((nb, n, n), a.dtype)
    t = _threads._threads_for(nb, n, nb * n * n * n // 2, n > SMALL)   # plain loops up to SMALL
    if code == 0:
        bad = _potrf[float](a3, c, lower, t, &info)
    elif code == 1:
        bad = _potrf[double](a3, c, lower, t, &info)
    elif code == 2:
        bad = _potrf[cfloat](a3, c, lower, t, &info)
    else:
        bad = _potrf[cdouble](a3, c, lower, t, &info)
    if bad == BAD_STRIDES:
        return potrf(a.copy(), lower)
    if bad >= 0 and info > 0:
        raise LinAlgError(f"{_where(bad, batch)} is not positive definite (its leading "
                          f"minor of order {info} is not positive)")
    if bad != OK:
        raise _fail(bad, info, batch, "potrf", "Cholesky failed")
    return _unflat(c, batch)


@cython.wraparound(True)   # negative indices of Python tuples below
def eig(a, compute_v=True):
    """(w, v) of general square matrices, always complex (complex64 for float32 and
    complex64 input), v with unit-norm columns; w alone if ``compute_v`` is False.
    geev; LinAlgError naming the batch index when it does not converge."""
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t n = shape[-1], nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef bint jobv = compute_v
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef char* vp = NULL
    cdef char* wp
    if nb == 0 or n == 0:
        return _ref.eig(a, compute_v)
    a3 = _flat3(a, batch, nb)
    cdt = _COMPLEX[code]
    w = np.empty((nb, n), cdt)
    wp = _ptr(w)
    v = None
    if jobv:
        v = np.empty((nb, n, n), cdt)
        vp = _ptr(v)
    if code == 0:
        bad = _geev[float](a3, wp, vp, jobv, &info)
    elif code == 1:
        bad = _geev[double](a3, wp, vp, jobv, &info)
    elif code == 2:
        bad = _geev[cfloat](a3, wp, vp, jobv, &info)
    else:
        bad = _geev[cdouble](a3, wp, vp, jobv, &info)
    if bad == BAD_STRIDES:
        return eig(a.copy(), compute_v)
    if bad != OK:
        raise _fail(bad, info, batch, "geev", "eig did not converge")
    w = _unflat(w, batch)
    if not jobv:
        return w
    return w, _unflat(v, batch)


@cython.wraparound(True)   # negative indices of Python tuples below
cdef tuple _solve_operands(a, b, str name):
    """Common LAPACK dtype and broadcast 3-D stacks for getrs/trtrs."""
    a = _lapack_array(a)
    b = _lapack_array(b)
    dt = a.dtype
    if b.dtype != dt:
        dt = np.result_type(dt, b.dtype)
        a = a.astype(dt, copy=False)
        b = b.astype(dt, copy=False)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != a.shape[-2] or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape} do not fit "
                         "(*batch, n, n) and (*batch, n, k)")
    batch = a.shape[:-2]
    if b.shape[:-2] != batch:
        batch = np.broadcast_shapes(batch, b.shape[:-2])
    return a, b, dt, batch


cdef object _getrs_single(cnp.ndarray lu, cnp.ndarray piv, cnp.ndarray b, int code,
                          int trans, object outer):
    """getrs of one matrix and one right-hand side matrix (see _single.pxd's matrix2_code; any
    strides; piv an int32 vector), serially on the calling thread."""
    cdef Py_ssize_t n = cnp.PyArray_DIMS(lu)[0], isz = cnp.PyArray_ITEMSIZE(lu), bad
    cdef cnp.ndarray x = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(b), cnp.PyArray_TYPE(b))
    cdef cnp.ndarray o, out = None
    cdef _GetrsJob job
    cdef blas_int info = 0
    job.lu = <const char*>cnp.PyArray_DATA(lu)
    job.sa[0] = 0
    job.sa[1] = cnp.PyArray_STRIDES(lu)[0] // isz
    job.sa[2] = cnp.PyArray_STRIDES(lu)[1] // isz
    job.piv = <const int*>cnp.PyArray_DATA(piv)
    job.sp[0] = 0
    job.sp[1] = cnp.PyArray_STRIDES(piv)[0] // sizeof(int)
    job.rhs = <const char*>cnp.PyArray_DATA(b)
    job.sb[0] = 0
    job.sb[1] = cnp.PyArray_STRIDES(b)[0] // isz
    job.sb[2] = cnp.PyArray_STRIDES(b)[1] // isz
    job.x = <char*>cnp.PyArray_DATA(x)
    job.o = NULL
    job.outer = NULL
    if outer is not None:
        o = <cnp.ndarray>outer
        out = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(lu), cnp.PyArray_TYPE(lu))
        job.o = <const char*>cnp.PyArray_DATA(o)
        job.so[0] = 0
        job.so[1] = cnp.PyArray_STRIDES(o)[0] // isz
        job.so[2] = cnp.PyArray_STRIDES(o)[1] // isz
        job.outer = <char*>cnp.PyArray_DATA(out)
    job.n = n
    job.nrhs = cnp.PyArray_DIMS(b)[1]
    job.trans = trans
    job.code = code
    if n > SMALL:
        with nogil:
            bad = _getrs_chunk(&job, 0, 1, True, &info)
    else:
        bad = _getrs_chunk(&job, 0, 1, True, &info)
    if bad != OK:
        raise _fail(bad, info, (), "getrs", "solve failed")
    return x if outer is None else (x, out)


@cython.wraparound(True)   # negative indices of Python tuples below
def getrs(lu, piv, b, trans=0, outer=None):
    """Solve with getrf's factors: op(a) x = b, op = (identity, transpose, conj-transpose)
    for trans = 0, 1, 2. b has shape (*batch, n, k); lu/piv's batch broadcasts with it.

    With ``outer`` = Y (x's shape) the result is (x, −x Yᴴ): the two products of the
    solve pullback (B̄ = A⁻ᴴX̄, Ā = −B̄Xᴴ) in one pass over the stack (plain loops for the
    outer product up to side SMALL; NumPy's matmul beyond)."""
    if trans not in (0, 1, 2):
        raise ValueError(f"getrs: trans must be 0, 1 or 2, got {trans!r}")
    cdef int single = matrix2_code(lu)
    if (single >= 0 and matrix2_code(b) == single
            and cnp.PyArray_DIMS(<cnp.ndarray>lu)[0] == cnp.PyArray_DIMS(<cnp.ndarray>lu)[1]
            and cnp.PyArray_DIMS(<cnp.ndarray>b)[0] == cnp.PyArray_DIMS(<cnp.ndarray>lu)[0]
            and type(piv) is np.ndarray and cnp.PyArray_NDIM(<cnp.ndarray>piv) == 1
            and cnp.PyArray_TYPE(<cnp.ndarray>piv) == cnp.NPY_INT32
            and cnp.PyArray_ISALIGNED(<cnp.ndarray>piv)
            and cnp.PyArray_DIMS(<cnp.ndarray>piv)[0] == cnp.PyArray_DIMS(<cnp.ndarray>lu)[0]
            and (outer is None or (
                matrix2_code(outer) == single
                and cnp.PyArray_DIMS(<cnp.ndarray>outer)[0] == cnp.PyArray_DIMS(<cnp.ndarray>b)[0]
                and cnp.PyArray_DIMS(<cnp.ndarray>outer)[1] == cnp.PyArray_DIMS(<cnp.ndarray>b)[1]
                and cnp.PyArray_DIMS(<cnp.ndarray>b)[0] <= SMALL))):
        return _getrs_single(<cnp.ndarray>lu, <cnp.ndarray>piv, <cnp.ndarray>b, single,
                             trans, outer)
    lu, b, dt, batch = _solve_operands(lu, b, "getrs")
    cdef Py_ssize_t n = b.shape[-2], nrhs = b.shape[-1], nb = _prod(batch)
    cdef int code = _code_of(dt)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    if nb == 0 or n == 0 or nrhs == 0:
        x = np.zeros(batch + (n, nrhs), dt)
        return x if outer is None else (x, np.zeros(batch + (n, n), dt))
    if outer is not None and (type(outer) is not np.ndarray or outer.dtype != dt or
                              outer.shape != batch + (n, nrhs) or n > SMALL):
        x = getrs(lu, piv, b, trans)
        return x, -(x @ np.conj(np.swapaxes(outer, -1, -2)))
    if type(piv) is not np.ndarray or piv.dtype != np.int32:
        piv = np.asarray(piv).astype(np.int32)
    if lu.shape[:-2] != batch:
        lu = np.broadcast_to(lu, batch + (n, n))
    if piv.shape[:-1] != batch:
        piv = np.broadcast_to(piv, batch + (n,))
    if b.shape[:-2] != batch:
        b = np.broadcast_to(b, batch + (n, nrhs))
    lu3 = _flat3(lu, batch, nb)
    piv2 = piv[_NEWAXIS] if not batch else (piv if len(batch) == 1 else piv.reshape((nb, n)))
    b3 = _flat3(b, batch, nb)
    x = np.empty((nb, n, nrhs), dt)
    o3 = out3 = None
    if outer is not None:
        o3 = _flat3(outer, batch, nb)
        out3 = np.empty((nb, n, n), dt)
    cdef int t = _threads._threads_for(nb, n, nb * n * n * nrhs, n > SMALL)   # loops up to SMALL
    if code == 0:
        bad = _getrs[float](lu3, piv2, b3, x, trans, o3, out3, t, &info)
    elif code == 1:
        bad = _getrs[double](lu3, piv2, b3, x, trans, o3, out3, t, &info)
    elif code == 2:
        bad = _getrs[cfloat](lu3, piv2, b3, x, trans, o3, out3, t, &info)
    else:
        bad = _getrs[cdouble](lu3, piv2, b3, x, trans, o3, out3, t, &info)
    if bad == BAD_STRIDES:
        return getrs(lu.copy(), piv, b.copy(), trans,
                     None if outer is None else outer.copy())
    if bad != OK:
        raise _fail(bad, info, batch, "getrs", "solve failed")
    if outer is None:
        return _unflat(x, batch)
    return _unflat(x, batch), _unflat(out3, batch)


@cython.wraparound(True)   # negative indices of Python tuples below
def trtrs(a, b, lower=False, trans=0, unit_diagonal=False):
    """Solve op(a) x = b with triangular a (trans 0, 1, 2 as in getrs); b (*batch, n, k),
    the batches broadcast. Only a's ``lower`` (or upper) triangle is read. LinAlgError
    naming the batch index when a diagonal entry is exactly zero."""
    if trans not in (0, 1, 2):
        raise ValueError(f"trtrs: trans must be 0, 1 or 2, got {trans!r}")
    cdef Py_ssize_t n, nrhs, nb
    cdef int code = -1
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef tuple sa, sb, batch
    # Fast path (most calls: two ndarrays of one native LAPACK dtype, same batch):
    # skips _solve_operands' conversions and broadcasting, a good part of the per-call
    # cost at small n.
    if type(a) is np.ndarray and type(b) is np.ndarray:
        dt = a.dtype
        if dt is b.dtype and dt.isnative:
            code = _CHARS.find(dt.char)
            sa = a.shape
            sb = b.shape
            if code >= 0 and len(sa) == len(sb) >= 2:
                n = sb[len(sb) - 2]
                if not (sa[len(sa) - 1] == sa[len(sa) - 2] == n and
                        sa[:len(sa) - 2] == sb[:len(sb) - 2]):
                    code = -1
            else:
                code = -1
    if code < 0:
        a, b, dt, batch = _solve_operands(a, b, "trtrs")
        code = _code_of(dt)
    else:
        batch = sb[:len(sb) - 2]
    n = b.shape[-2]
    nrhs = b.shape[-1]
    nb = _prod(batch)
    if nb == 0 or n == 0 or nrhs == 0:
        return np.zeros(batch + (n, nrhs), dt)
    if a.shape[:-2] != batch:
        a = np.broadcast_to(a, batch + (n, n))
    if b.shape[:-2] != batch:
        b = np.broadcast_to(b, batch + (n, nrhs))
    a3 = _flat3(a, batch, nb)
    b3 = _flat3(b, batch, nb)
    x = np.empty((nb, n, nrhs), dt)
    if code == 0:
        bad = _trtrs[float](a3, b3, x, lower, trans, unit_diagonal, &info)
    elif code == 1:
        bad = _trtrs[double](a3, b3, x, lower, trans, unit_diagonal, &info)
    elif code == 2:
        bad = _trtrs[cfloat](a3, b3, x, lower, trans, unit_diagonal, &info)
    else:
        bad = _trtrs[cdouble](a3, b3, x, lower, trans, unit_diagonal, &info)
    if bad == BAD_STRIDES:
        return trtrs(a.copy(), b.copy(), lower, trans, unit_diagonal)
    if bad >= 0 and info > 0:
        raise LinAlgError(f"{_where(bad, batch)} is singular: diagonal entry {info - 1} "
                          "of the triangular matrix is exactly zero")
    if bad != OK:
        raise _fail(bad, info, batch, "trtrs", "triangular solve failed")
    return _unflat(x, batch)


@cython.wraparound(True)   # negative indices of Python tuples below
def gelsd(a, b, rcond):
    """Minimum-norm least squares (x, rank, s) per matrix, like scipy.linalg.lstsq(a, b,
    cond=rcond, lapack_driver="gelsd"): a (*batch, m, n), b (*batch, m, k) with one batch
    shape; x (*batch, n, k), rank (*batch) int64, s (*batch, min(m, n)) the singular
    values of a (real dtype), descending. Singular values s <= rcond * s_max count as
    zero; a negative rcond means machine precision. LinAlgError naming the batch index
    when the SVD does not converge or a matrix has a NaN or Inf entry."""
    a, b, dt, batch = _lstsq_operands(a, b, "gelsd")
    cdef Py_ssize_t m = a.shape[-2], n = a.shape[-1], k = b.shape[-1], nb = _prod(batch)
    cdef int code = _code_of(dt)
    cdef double rc = rcond
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef char* sp
    if nb == 0 or m == 0 or n == 0 or k == 0:
        return _ref.gelsd(a, b, rcond)
    a3 = _flat3(a, batch, nb)
    b3 = _flat3(b, batch, nb)
    x = np.empty((nb, n, k), dt)
    s = np.empty((nb, min(m, n)), _REAL[code])
    rank = np.empty(nb, np.int64)
    sp = _ptr(s)
    if code == 0:
        bad = _gelsd[float](a3, b3, x, sp, rank, rc, &info)
    elif code == 1:
        bad = _gelsd[double](a3, b3, x, sp, rank, rc, &info)
    elif code == 2:
        bad = _gelsd[cfloat](a3, b3, x, sp, rank, rc, &info)
    else:
        bad = _gelsd[cdouble](a3, b3, x, sp, rank, rc, &info)
    if bad == BAD_STRIDES:
        return gelsd(a.copy(), b.copy(), rcond)
    if bad != OK:
        raise _fail(bad, info, batch, "gelsd", "SVD did not converge in least squares")
    return _unflat(x, batch), rank.reshape(batch), _unflat(s, batch)


@cython.wraparound(True)   # negative indices of Python tuples below
def lstsq_qr(a, b, rcond):
    """Least squares through QR, rank-revealing: (x, rank, s, res, r) per matrix, with
    gelsd's results for the rank-deficient ones. a (*batch, m, n), b (*batch, m, k) with
    one batch shape (as gelsd); x (*batch, n, k) the minimum-norm least-squares solution,
    rank (*batch) int64 and s (*batch, p) the singular values of a (p = min(m, n), real,
    descending), exactly gelsd's contract (s <= rcond * s_max count as zero; rcond <= 0
    or >= 1 means machine precision, as in LAPACK). res (*batch, k) real: the squared
    column norms of b - a x where the matrix has rank n (the tail of Qᴴb), 0 elsewhere.
    r (*batch, p, p): the triangular factor of a = QR (m >= n) or of aᴴ = QR (m < n),
    upper, zeros below, whatever the rank, so a backward can reuse it. LinAlgError naming
    the batch index when a matrix has a NaN or Inf entry or gelsd does not converge."""
    a, b, dt, batch = _lstsq_operands(a, b, "lstsq_qr")
    cdef Py_ssize_t m = a.shape[-2], n = a.shape[-1], k = b.shape[-1], nb = _prod(batch)
    cdef Py_ssize_t p = min(m, n)
    cdef int code = _code_of(dt)
    cdef double rc = rcond
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef char* sp
    cdef char* resp
    if nb == 0 or m == 0 or n == 0 or k == 0:
        return _ref.lstsq_qr(a, b, rcond)
    a3 = _flat3(a, batch, nb)
    b3 = _flat3(b, batch, nb)
    x = np.empty((nb, n, k), dt)
    rdt = _REAL[code]
    s = np.empty((nb, p), rdt)
    res = np.empty((nb, k), rdt)
    r = np.empty((nb, p, p), dt)
    rank = np.empty(nb, np.int64)
    sp = _ptr(s)
    resp = _ptr(res)
    if code == 0:
        bad = _lstsq_qr[float](a3, b3, x, sp, resp, r, rank, rc, &info)
    elif code == 1:
        bad = _lstsq_qr[double](a3, b3, x, sp, resp, r, rank, rc, &info)
    elif code == 2:
        bad = _lstsq_qr[cfloat](a3, b3, x, sp, resp, r, rank, rc, &info)
    else:
        bad = _lstsq_qr[cdouble](a3, b3, x, sp, resp, r, rank, rc, &info)
    if bad == BAD_STRIDES:
        return lstsq_qr(a.copy(), b.copy(), rcond)
    if bad != OK:
        raise _fail(bad, info, batch, "geqrf/gelsd", "SVD did not converge in least squares")
    return (_unflat(x, batch), rank.reshape(batch), _unflat(s, batch), _unflat(res, batch),
            _unflat(r, batch))


@cython.wraparound(True)   # negative indices of Python tuples below
def pinv_qr(a, rtol):
    """Pseudo-inverses of the matrices of full rank through QR: (x, full) for a
    (*batch, m, n) and rtol (float64, broadcasting to the batch); x (*batch, n, m), full
    (*batch) bool, True where every singular value s of the matrix is > rtol·s_max (as
    numpy.linalg.pinv's cut keeps them all), and there x = a⁺ = R⁻¹Qᴴ (a = QR; for
    m < n, a⁺ = QR⁻ᴴ with aᴴ = QR). Elsewhere (rank below min(m, n), or a NaN or Inf
    entry) x is not set: compute those with the SVD."""
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    cdef Py_ssize_t m = shape[-2], n = shape[-1], nb = _prod(batch)
    cdef int code = _code_of(a.dtype)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    if nb == 0 or m == 0 or n == 0:
        return _ref.pinv_qr(a, rtol)
    a3 = _flat3(a, batch, nb)
    rt = np.asarray(rtol, np.float64)
    if rt.shape != batch:
        rt = np.broadcast_to(rt, batch)
    rt = np.ascontiguousarray(rt).reshape(nb)
    x = np.empty((nb, n, m), a.dtype)
    full = np.empty(nb, np.bool_)
    if code == 0:
        bad = _pinv_qr[float](a3, x, rt, full.view(np.uint8), &info)
    elif code == 1:
        bad = _pinv_qr[double](a3, x, rt, full.view(np.uint8), &info)
    elif code == 2:
        bad = _pinv_qr[cfloat](a3, x, rt, full.view(np.uint8), &info)
    else:
        bad = _pinv_qr[cdouble](a3, x, rt, full.view(np.uint8), &info)
    if bad == BAD_STRIDES:
        return pinv_qr(a.copy(), rtol)
    if bad != OK:
        raise _fail(bad, info, batch, "geqrf/orgqr", "QR failed")
    return _unflat(x, batch), full.reshape(batch)


@cython.wraparound(True)   # negative indices of Python tuples below
cdef tuple _lstsq_operands(a, b, str name):
    """Common LAPACK dtype of a (*batch, m, n) and b (*batch, m, k), batches broadcast to
    one shape."""
    a = _lapack_array(a)
    b = _lapack_array(b)
    dt = a.dtype
    if b.dtype != dt:
        dt = np.result_type(dt, b.dtype)
        a = a.astype(dt, copy=False)
        b = b.astype(dt, copy=False)
    if a.ndim < 2 or b.ndim < 2 or b.shape[-2] != a.shape[-2]:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape} do not fit "
                         "(*batch, m, n) and (*batch, m, k)")
    batch = a.shape[:-2]
    if b.shape[:-2] != batch:
        batch = np.broadcast_shapes(batch, b.shape[:-2])
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
    return a, b, dt, batch
