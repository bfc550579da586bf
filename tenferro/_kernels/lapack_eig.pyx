# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""Batched LAPACK drivers of the eigenvalue and singular value problems, called straight
through ``scipy.linalg.cython_lapack``: svd (gesdd, gesvd as fallback), eigh
(syevd/heevd) and eig (geev).

Every driver runs one loop over the stack with the GIL released, its workspace queried
once per call (lapack_base.pyx says more). Row-major vs column-major: the memory of a
C-ordered m x n matrix A is the Fortran n x m matrix Aᵀ, which the drivers use to avoid
copies where the algebra allows it:

  svd     SVD of Aᵀ = U' S V'ᴴ gives A = conj(V') S U'ᵀ: LAPACK writes U' straight into
          the memory of vt and V'ᴴ into the memory of u (no transposition at all).
  eigh    A's memory is Aᵀ = conj(A) (Hermitian), with A's lower triangle in Aᵀ's upper
          one: the eigenvectors come out conjugated and Fortran-ordered, and one
          conjugating transposed copy writes them out.
  eig     each matrix is copied once into a Fortran work buffer (geev destroys it).

Non-finite input (only possible with check_finite=False upstream): all three reject a
matrix with a NaN or Inf entry (in eigh's referenced triangle) before LAPACK sees it,
raising LinAlgError naming it, since LAPACK's iterations would fail, return garbage or
print "illegal value" messages.

The pure NumPy twins of these functions (same names and signatures) are in
``lapack_eig_twin.py``; ``tests/_kernels/test_lapack.py`` checks that both agree.
"""
cimport cython

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t
from tenferro._kernels._single cimport matrix2_code
from tenferro._kernels._xlapack cimport xgeev, xgesdd, xgesvd, xsyevd
from tenferro._kernels.lapack_base cimport (
    NO_MEMORY, NOT_FINITE, OK, JobHead, Pool, Rows, Stack, _alloc, _begin, _begin1,
    _complex_dtype, _copy, _data, _failed, _finite, _launch, _lreal, _lwork, _pool,
    _real_dtype, _real_size, _real_type, _release, _unflat)

import numpy as np
cimport numpy as cnp

from tenferro._kernels import lapack_eig_twin as _ref
from tenferro import _threads


__all__ = ["svd", "eigh", "eig"]

cnp.import_array()


# Testing hook: treat every gesdd call as failed, so the gesvd fallback can be tested
# (gesdd's non-convergence is too rare to trigger from a test input).
cdef bint _force_gesvd = False


def _testing_force_gesvd(bint on):
    """Make svd skip gesdd and use its gesvd fallback for every matrix (tests only)."""
    global _force_gesvd
    _force_gesvd = on


# ---------------------------------------------------------------------------------------
# svd
# ---------------------------------------------------------------------------------------

cdef struct _SvdJob:       # one svd call, for run_chunks
    JobHead head
    const char* a             # the input stack (nb, m, n), element strides st
    char* u                   # (nb, m, ku) C-ordered, or NULL (jobz 0)
    char* vt                  # (nb, kv, n) C-ordered, or NULL
    char* s                   # (nb, min(m, n)) of the real type
    Py_ssize_t st[3]
    Py_ssize_t m, n
    int jobz                  # 0: values only, 1: reduced, 2: full


cdef Py_ssize_t _svd_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                          blas_int* info) noexcept nogil:
    # A (m x n, C-ordered) is the Fortran n x m matrix A' = Aᵀ. gesdd on A' = U' S V'ᴴ:
    # A = conj(V') S U'ᵀ, so u = (V'ᴴ)ᵀ and vt = U'ᵀ. LAPACK's Fortran U' (n x ku) is the
    # C-ordered vt, and its Fortran V'ᴴ (ku x m) is the C-ordered u: written in place.
    cdef _SvdJob* j = <_SvdJob*>job
    cdef const lapack_t* a = <const lapack_t*>j.a
    cdef lapack_t *u = <lapack_t*>j.u, *vt = <lapack_t*>j.vt
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
    cdef lapack_t *abuf = NULL, *work = NULL, *work2 = NULL
    cdef lapack_t *ub, *vtb
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
            _failed(NOT_FINITE, info, b, &result)
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
            if _failed(inf, info, b, &result):
                break
    return _release(&pool, result)


cdef Rows _SVD = Rows(_svd_rows[float], _svd_rows[double], _svd_rows[cfloat],
                      _svd_rows[cdouble])


@cython.wraparound(True)   # negative indices of Python tuples below
def svd(a, full_matrices=False, compute_uv=True):
    """(u, s, vt) like numpy.linalg.svd, or s alone when ``compute_uv`` is False.

    gesdd on each matrix, falling back to gesvd for a matrix where it does not converge;
    LinAlgError naming the batch index when both fail (e.g. a NaN entry)."""
    cdef _SvdJob job
    cdef Stack d
    cdef int jobz = (2 if full_matrices else 1) if compute_uv else 0
    cdef int single = matrix2_code(a)
    if single >= 0:
        return _svd_single(<cnp.ndarray>a, single, jobz)
    a, batch, a3 = _begin(a, &job.head, &_SVD, &d, job.st)
    if d.nb == 0 or d.k == 0:
        return _ref.svd(a, full_matrices, compute_uv)
    s = np.empty((d.nb, d.k), _real_dtype(d.code))
    u = vt = None
    if jobz:
        u = np.empty((d.nb, d.m, d.m if jobz == 2 else d.k), a.dtype)
        vt = np.empty((d.nb, d.n if jobz == 2 else d.k, d.n), a.dtype)
    job.a = _data(a3)
    job.u = _data(u)
    job.vt = _data(vt)
    job.s = _data(s)
    job.m, job.n, job.jobz = d.m, d.n, jobz
    cdef int t = _threads._threads_for(d.nb, max(d.m, d.n), 22 * d.nb * d.m * d.n * d.k,
                                       False)
    _launch(&job, d.nb, t, True, batch, "gesdd/gesvd", "SVD did not converge")
    s = _unflat(s, batch)
    if not jobz:
        return s
    return _unflat(u, batch), s, _unflat(vt, batch)


cdef object _svd_single(cnp.ndarray a, int code, int jobz):
    """svd of one matrix (see _single.pxd's matrix2_code; any strides), serially on the calling
    thread: the stack path's results without its views and thread plan."""
    cdef Py_ssize_t m = cnp.PyArray_DIMS(a)[0], n = cnp.PyArray_DIMS(a)[1]
    cdef cnp.npy_intp k = m if m < n else n
    cdef cnp.npy_intp dims[2]
    cdef _SvdJob job
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
    _begin1(a, &job.head, &_SVD, code, &job.a, job.st)
    job.s = <char*>cnp.PyArray_DATA(s)
    job.m, job.n, job.jobz = m, n, jobz
    _launch(&job, 1, 1, True, (), "gesdd/gesvd", "SVD did not converge")
    return (u, s, vt) if jobz else s


# ---------------------------------------------------------------------------------------
# eigh
# ---------------------------------------------------------------------------------------

cdef struct _EighJob:      # one eigh call, for run_chunks
    JobHead head
    const char* a             # the input stack (nb, n, n), element strides st
    char* v                   # (nb, n, n) C-ordered, or NULL (values only)
    char* w                   # (nb, n) of the real type
    Py_ssize_t st[3]
    Py_ssize_t n
    bint lower


cdef Py_ssize_t _eigh_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                           blas_int* info) noexcept nogil:
    # A's C-ordered memory is the Fortran Aᵀ = conj(A) for Hermitian A, and A's lower
    # triangle is Aᵀ's upper one. heevd of conj(A) gives the same eigenvalues and the
    # eigenvectors conj(V), Fortran-ordered: one conjugating transposed copy writes V.
    cdef _EighJob* j = <_EighJob*>job
    cdef const lapack_t* a = <const lapack_t*>j.a
    cdef lapack_t* v = <lapack_t*>j.v
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
    cdef lapack_t *abuf = NULL, *work = NULL
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
            _failed(NOT_FINITE, info, b, &result)
            break
        xsyevd(&jz, &uplo, &N, abuf, &N, w + b * n * rsize, work, &lwork, rwork,
               &lrwork, iwork, &liwork, &inf)
        if _failed(inf, info, b, &result):
            break
        if jobv:
            _copy(abuf, 1, n, v + b * n * n, n, 1, n, n, True)
    return _release(&pool, result)


cdef Rows _EIGH = Rows(_eigh_rows[float], _eigh_rows[double], _eigh_rows[cfloat],
                       _eigh_rows[cdouble])


@cython.wraparound(True)   # negative indices of Python tuples below
def eigh(a, lower=True, compute_v=True):
    """(w, v): ascending eigenvalues and unit eigenvectors (columns of v) of Hermitian
    matrices, reading their lower (or upper) triangle; w alone if ``compute_v`` is False.
    syevd/heevd; LinAlgError naming the batch index when it does not converge."""
    cdef _EighJob job
    cdef Stack d
    cdef int single = matrix2_code(a)
    if single >= 0 and cnp.PyArray_DIMS(<cnp.ndarray>a)[0] == cnp.PyArray_DIMS(<cnp.ndarray>a)[1]:
        return _eigh_single(<cnp.ndarray>a, single, lower, compute_v)
    cdef bint jobv = compute_v
    a, batch, a3 = _begin(a, &job.head, &_EIGH, &d, job.st)
    if d.nb == 0 or d.n == 0:
        return _ref.eigh(a, lower, compute_v)
    w = np.empty((d.nb, d.n), _real_dtype(d.code))
    v = np.empty((d.nb, d.n, d.n), a.dtype) if jobv else None
    job.a = _data(a3)
    job.v = _data(v)
    job.w = _data(w)
    job.n = d.n
    job.lower = lower
    cdef int t = _threads._threads_for(d.nb, d.n, 12 * d.nb * d.n * d.n * d.n, False)
    _launch(&job, d.nb, t, True, batch, "heevd" if d.code >= 2 else "syevd",
            "eigh did not converge")
    w = _unflat(w, batch)
    if not jobv:
        return w
    return w, _unflat(v, batch)


cdef object _eigh_single(cnp.ndarray a, int code, bint lower, bint jobv):
    """eigh of one square matrix (see _single.pxd's matrix2_code; any strides), serially on the
    calling thread: the stack path's results without its views and thread plan."""
    cdef cnp.npy_intp n = cnp.PyArray_DIMS(a)[0]
    cdef _EighJob job
    cdef cnp.ndarray w = cnp.PyArray_SimpleNew(1, &n, _real_type(code))
    cdef cnp.ndarray v = None
    job.v = NULL
    if jobv:
        v = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(a), cnp.PyArray_TYPE(a))
        job.v = <char*>cnp.PyArray_DATA(v)
    _begin1(a, &job.head, &_EIGH, code, &job.a, job.st)
    job.w = <char*>cnp.PyArray_DATA(w)
    job.n, job.lower = n, lower
    _launch(&job, 1, 1, True, (), "heevd" if code >= 2 else "syevd",
            "eigh did not converge")
    return (w, v) if jobv else w


# ---------------------------------------------------------------------------------------
# eig
# ---------------------------------------------------------------------------------------

cdef struct _GeevJob:      # one eig call (a serial loop)
    JobHead head
    const char* a             # the input stack (nb, n, n), element strides st
    char* w                   # (nb, n) complex of lapack_t's precision
    char* v                   # (nb, n, n) likewise, C-ordered, or NULL (values only)
    Py_ssize_t st[3]
    Py_ssize_t n


cdef Py_ssize_t _geev_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                           blas_int* info) noexcept nogil:
    # w: (nb, n) complex, v: (nb, n, n) complex C-ordered, both of lapack_t's complex
    # type, addressed as interleaved (re, im) reals for real lapack_t. Each matrix is
    # copied transposed into a Fortran buffer (geev destroys it; the transpose keeps the
    # eigenvalue order identical to numpy.linalg.eig).
    cdef _GeevJob* j = <_GeevJob*>job
    cdef const lapack_t* a = <const lapack_t*>j.a
    cdef char* w = j.w
    cdef char* v = j.v
    cdef bint jobv = v != NULL
    cdef Py_ssize_t n = j.n, b
    cdef Py_ssize_t* st = j.st
    cdef blas_int N = <blas_int>n, lwork = -1, inf = 0, ldvr = N
    cdef char jl = b'N'
    cdef char jr = b'V' if jobv else b'N'
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef lapack_t q
    cdef lapack_t *abuf = NULL, *vr = NULL, *work = NULL
    cdef void* wr = NULL     # real: wr then wi (2n); complex: rwork (2n)
    cdef lapack_t dummy
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
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
    for b in range(b0, b1):
        _copy(a + b * st[0], st[1], st[2], abuf, 1, n, n, n, False)
        if not _finite(abuf, n, n, 0):
            _failed(NOT_FINITE, info, b, &result)
            break
        if lapack_t is cfloat or lapack_t is cdouble:
            xgeev(&jl, &jr, &N, abuf, &N, w + b * n * sizeof(lapack_t), NULL, &dummy,
                  &N, vr, &ldvr, work, &lwork, wr, &inf)
        else:
            xgeev(&jl, &jr, &N, abuf, &N, wr, <char*>wr + n * rsize, &dummy, &N, vr,
                  &ldvr, work, &lwork, NULL, &inf)
        if _failed(inf, info, b, &result):
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


cdef Rows _GEEV = Rows(_geev_rows[float], _geev_rows[double], _geev_rows[cfloat],
                       _geev_rows[cdouble])


@cython.wraparound(True)   # negative indices of Python tuples below
def eig(a, compute_v=True):
    """(w, v) of general square matrices, always complex (complex64 for float32 and
    complex64 input), v with unit-norm columns; w alone if ``compute_v`` is False.
    geev; LinAlgError naming the batch index when it does not converge."""
    cdef _GeevJob job
    cdef Stack d
    cdef bint jobv = compute_v
    a, batch, a3 = _begin(a, &job.head, &_GEEV, &d, job.st)
    if d.nb == 0 or d.n == 0:
        return _ref.eig(a, compute_v)
    cdt = _complex_dtype(d.code)
    w = np.empty((d.nb, d.n), cdt)
    v = np.empty((d.nb, d.n, d.n), cdt) if jobv else None
    job.a = _data(a3)
    job.w = _data(w)
    job.v = _data(v)
    job.n = d.n
    _launch(&job, d.nb, 1, True, batch, "geev", "eig did not converge")
    w = _unflat(w, batch)
    if not jobv:
        return w
    return w, _unflat(v, batch)
