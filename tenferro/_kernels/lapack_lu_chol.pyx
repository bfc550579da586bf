# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""Batched LAPACK drivers of the LU and Cholesky factorizations and of the solves with
triangular factors, called straight through ``scipy.linalg.cython_lapack``: getrf and lu
(getrf), potrf, getrs, and trtrs (trsm/trsv).

Every driver runs one loop over the stack with the GIL released, its workspace queried
once per call (lapack_base.pyx says more). potrf, getrf and getrs of matrices with every
side at most SMALL run the plain loops of _small.pxd instead of LAPACK: they take no
OpenBLAS lock, so those stacks are split over threads (tenferro._threads), and at these
sizes they are as fast as the LAPACK calls.

Row-major vs column-major: the memory of a C-ordered m x n matrix A is the Fortran n x m
matrix Aᵀ, which the drivers use to avoid copies where the algebra allows it:

  potrf   A's memory is the Fortran Aᵀ = conj(A), with A's lower triangle as its upper
          one: potrf of Aᵀ = conj(A) = conj(L) Lᵀ on the flipped triangle gives the
          Fortran factor Lᵀ, which read C-ordered is L itself: computed in place in the
          output (larger lower factors: see _potrf_rows).
  trtrs   solved as the right-side ?trsm xᵀ op(a)ᵀ = bᵀ in the output's memory (a
          C-ordered x is the Fortran xᵀ), with a C-ordered a used in place as Aᵀ
          (uplo flipped): no transposing copies at all.
  getrf   factors in the output's memory, each matrix copied there once, and returns a
          per-matrix Fortran view, which getrs then uses without a copy; getrs copies
          the right-hand sides into a Fortran work buffer.

The direct factorizations and solves propagate NaN (no finiteness check). The pure
NumPy/SciPy twins of these functions (same names and signatures) are in
``lapack_lu_chol_twin.py``; ``tests/_kernels/test_lapack.py`` and
``tests/_kernels/test_small.py`` check that both agree.
"""
cimport cython
from libc.string cimport memcpy

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t, xtrsm, xtrsv
from tenferro._kernels._single cimport matrix2_code
from tenferro._kernels._small cimport SMALL_MAX, SMALL_N, s_getrf, s_getrs, s_potrf
from tenferro._kernels._xlapack cimport xgetrf, xgetrs, xpotrf
from tenferro._kernels.lapack_base cimport (
    BAD_PIVOT, NO_MEMORY, OK, JobHead, Pool, Rows, Stack, _alloc, _begin, _begin1,
    _code_of, _common_lapack, _copy, _data, _fail, _failed, _flat3, _lapack_array,
    _lapack_code, _launch, _pool, _prod, _real_dtype, _real_size, _release, _run,
    _strides2, _strides3, _unflat, _upper, _where)

import numpy as np
cimport numpy as cnp

from tenferro._errors import LinAlgError
from tenferro._kernels import lapack_lu_chol_twin as _ref
from tenferro import _threads


__all__ = ["getrf", "lu", "potrf", "getrs", "trtrs"]

cnp.import_array()


# potrf, getrf and getrs of matrices with every side at most SMALL run the plain loops
# of _small.pxd instead of LAPACK (the module docstring says why).
cdef Py_ssize_t SMALL = SMALL_N


def _set_small(Py_ssize_t n):
    """Set the largest side that takes the plain loops instead of LAPACK (tests and
    benchmarks only; 0: always LAPACK); returns the previous one."""
    global SMALL
    old = SMALL
    SMALL = min(max(n, 0), SMALL_MAX)    # the loops' stack buffers hold SMALL_MAX
    return old


# ---------------------------------------------------------------------------------------
# getrf and lu
# ---------------------------------------------------------------------------------------

cdef struct _GetrfJob:     # one getrf call, for run_chunks
    JobHead head
    const char* a             # the input stack (nb, m, n), element strides st
    char* lu                  # (nb, n, m) C-ordered: each matrix's Fortran m x n factor
    blas_int* piv             # (nb, k)
    blas_int* infos           # (nb,) or NULL
    Py_ssize_t st[3]
    Py_ssize_t m, n


cdef Py_ssize_t _getrf_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                            blas_int* info) noexcept nogil:
    # Zero pivots (info > 0) are recorded in ``infos`` (when given), not reported as
    # failures: det and solve decide.
    cdef _GetrfJob* j = <_GetrfJob*>job
    cdef const lapack_t* a = <const lapack_t*>j.a
    cdef lapack_t* lu = <lapack_t*>j.lu
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


cdef Rows _GETRF = Rows(_getrf_rows[float], _getrf_rows[double], _getrf_rows[cfloat],
                        _getrf_rows[cdouble])


cdef object _getrf_single(cnp.ndarray a, int code, bint return_info):
    """getrf of one matrix (see _single.pxd's matrix2_code; any strides), serially on the calling
    thread: the same (lu, piv[, info]) as the stack path."""
    cdef Py_ssize_t m = cnp.PyArray_DIMS(a)[0], n = cnp.PyArray_DIMS(a)[1]
    cdef cnp.npy_intp dims[2]
    cdef cnp.npy_intp k = m if m < n else n
    cdef _GetrfJob job
    cdef blas_int inf = 0
    dims[0], dims[1] = n, m
    cdef cnp.ndarray lu = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
    cdef cnp.ndarray piv = cnp.PyArray_SimpleNew(1, &k, cnp.NPY_INT32)
    _begin1(a, &job.head, &_GETRF, code, &job.a, job.st)
    job.lu = <char*>cnp.PyArray_DATA(lu)
    job.piv = <blas_int*>cnp.PyArray_DATA(piv)
    job.infos = &inf
    job.m, job.n = m, n
    _launch(&job, 1, 1, m > SMALL or n > SMALL, (), "getrf", "LU failed")
    lut = cnp.PyArray_Transpose(lu, NULL)
    if not return_info:
        return lut, piv
    infos = cnp.PyArray_SimpleNew(0, NULL, cnp.NPY_INT32)
    (<int*>cnp.PyArray_DATA(<cnp.ndarray>infos))[0] = inf
    return lut, piv, infos


@cython.wraparound(True)   # negative indices of Python tuples below
def getrf(a, return_info=False):
    """LU factors of each matrix: (lu, piv) with 0-based row interchanges, like
    scipy.linalg.lu_factor (piv has min(m, n) entries, int32). Exactly singular matrices
    are factored (zero pivot), not rejected: with ``return_info=True`` the result is
    (lu, piv, info), info (*batch) int32 holding LAPACK's info per matrix (k > 0: u[k-1,
    k-1] is exactly zero), for det and solve to use. lu is a per-matrix Fortran-ordered
    view (a transposed C array), which getrs uses without a copy."""
    cdef _GetrfJob job
    cdef Stack d
    cdef int single = matrix2_code(a)
    if single >= 0:
        return _getrf_single(<cnp.ndarray>a, single, return_info)
    a, batch, a3 = _begin(a, &job.head, &_GETRF, &d, job.st)
    if d.nb == 0 or d.k == 0:
        return _ref.getrf(a, return_info)
    lu = np.empty((d.nb, d.n, d.m), a.dtype)
    piv = np.empty((d.nb, d.k), np.int32)
    infos_arr = None
    if return_info:
        infos_arr = np.empty(d.nb, np.int32)
    job.a = _data(a3)
    job.lu = _data(lu)
    job.piv = <blas_int*>_data(piv)
    job.infos = <blas_int*>_data(infos_arr)
    job.m, job.n = d.m, d.n
    cdef int t = _threads._threads_for(d.nb, max(d.m, d.n), d.nb * d.m * d.n * d.k,
                                       max(d.m, d.n) > SMALL)     # plain loops up to SMALL
    _launch(&job, d.nb, t, True, batch, "getrf", "LU failed")
    lu = _unflat(lu, batch).swapaxes(-1, -2)
    piv = _unflat(piv, batch)
    if return_info:
        return lu, piv, infos_arr.reshape(batch)
    return lu, piv


cdef struct _PluJob:       # one lu call (a serial loop)
    JobHead head
    const char* a             # the input stack (nb, m, n), element strides st
    char* p                   # (nb, m, m) C-ordered, of the real type
    char* l                   # (nb, m, k) C-ordered
    char* u                   # (nb, k, n) C-ordered
    Py_ssize_t* perm          # (nb, m), or NULL
    Py_ssize_t st[3]
    Py_ssize_t m, n


cdef Py_ssize_t _plu_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                          blas_int* info) noexcept nogil:
    # a = p @ l @ u with p (m x m) a permutation matrix of a's real type, l (m x k) unit
    # lower trapezoidal, u (k x n) upper trapezoidal (both C-ordered stacks); exactly
    # singular input is fine. a: (nb, m, n), element strides st.
    # perm_out (nb x m, or NULL): row i of l @ u is row perm_out[i] of a.
    cdef _PluJob* jb = <_PluJob*>job
    cdef const lapack_t* a = <const lapack_t*>jb.a
    cdef lapack_t *l = <lapack_t*>jb.l, *u = <lapack_t*>jb.u
    cdef char* p = jb.p
    cdef Py_ssize_t* perm_out = jb.perm
    cdef Py_ssize_t* st = jb.st
    cdef Py_ssize_t m = jb.m, n = jb.n
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
    for b in range(b0, b1):
        _copy(a + b * st[0], st[1], st[2], buf, 1, m, m, n, False)
        xgetrf(&M, &N, buf, &M, ipiv, &inf)
        if inf < 0 and _failed(inf, info, b, &result):
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


cdef Rows _PLU = Rows(_plu_rows[float], _plu_rows[double], _plu_rows[cfloat],
                      _plu_rows[cdouble])


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
    cdef _PluJob job
    if nb == 0 or k == 0:
        return _ref.lu(a, return_perm)
    cdef Py_ssize_t* st = job.st
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
    p = np.empty(batch + (m, m), _real_dtype(code))
    l = np.empty(batch + (m, k), a.dtype)
    u = np.empty(batch + (k, n), a.dtype)
    perm = np.empty(batch + (m,), np.intp) if return_perm else None
    job.head.rows = &_PLU
    job.head.code = code
    job.a = _data(arr)
    job.p = _data(p)
    job.l = _data(l)
    job.u = _data(u)
    job.perm = <Py_ssize_t*>_data(perm)
    job.m, job.n = m, n
    _launch(&job, nb, 1, True, batch, "getrf", "LU failed")
    if return_perm:
        return p, l, u, perm
    return p, l, u


# ---------------------------------------------------------------------------------------
# potrf
# ---------------------------------------------------------------------------------------

cdef struct _PotrfJob:     # one potrf call, for run_chunks
    JobHead head
    const char* a             # the input stack (nb, n, n), element strides st
    char* c                   # the output (nb, n, n), C-ordered
    Py_ssize_t st[3]
    Py_ssize_t n
    bint lower


cdef enum:
    TRI_TILE = 8    # the tile edge of the triangle transposes below
    # From this side on, the lower Cholesky factor is computed by potrf('L') on a
    # transposed copy: OpenBLAS's potrf('L') is faster than potrf('U') from n ~ 48 by
    # more than the two transposing passes cost; below ~40 'U' is as fast or faster and
    # the plain copy wins (docs/guide/kernels.md, "Kernel constants").
    POTRF_TRANSPOSE_MIN = 40


# _lower_to_fortran and _fortran_lower_to_c walk the same tiles on purpose: one function
# for both (a flag choosing the inner loops) measured lu 64 x 64 (the _plu_rows loop,
# not even a caller) 4.5% slower, through the C compiler's inlining of this module.
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
    its own cache lines, untiled or in tiles of 32)."""
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


cdef Py_ssize_t _potrf_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                            blas_int* info) noexcept nogil:
    # A's memory is the Fortran Aᵀ = conj(A), with A's lower triangle as its upper one.
    # upper: potrf('L') of conj(A) = L'L'ᴴ gives L' = Uᵀ (A = UᴴU), whose Fortran memory
    # read C-ordered is U: factor a plain copy in place, then zero the other triangle.
    # lower, n < POTRF_TRANSPOSE_MIN: likewise potrf('U') of conj(A) = U'ᴴU' gives
    # U' = Lᵀ, read C-ordered as L. lower, larger n: A's lower triangle is copied
    # transposed (the Fortran lower triangle of A itself), potrf('L') gives L in Fortran
    # order, and one pass moves it to C order and zeroes the upper triangle.
    cdef _PotrfJob* j = <_PotrfJob*>job
    cdef const lapack_t* a = <const lapack_t*>j.a
    cdef lapack_t* c = <lapack_t*>j.c
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


cdef Rows _POTRF = Rows(_potrf_rows[float], _potrf_rows[double], _potrf_rows[cfloat],
                        _potrf_rows[cdouble])


cdef inline int _single_matrix_code(object a) noexcept:
    """matrix2_code (_single.pxd) for a square C-ordered matrix."""
    cdef int code = matrix2_code(a)
    if (code < 0 or not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>a)
            or cnp.PyArray_DIMS(<cnp.ndarray>a)[0] != cnp.PyArray_DIMS(<cnp.ndarray>a)[1]):
        return -1
    return code


cdef object _potrf_single(cnp.ndarray a, int code, bint lower):
    """potrf of one matrix (see _single_matrix_code), serially on the calling thread."""
    cdef Py_ssize_t n = cnp.PyArray_DIMS(a)[0], bad
    cdef cnp.ndarray c = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(a), cnp.PyArray_TYPE(a))
    cdef _PotrfJob job
    cdef blas_int info = 0
    job.head.rows = &_POTRF
    job.head.code = code
    job.a = <const char*>cnp.PyArray_DATA(a)
    job.c = <char*>cnp.PyArray_DATA(c)
    job.st[0], job.st[1], job.st[2] = n * n, n, 1
    job.n = n
    job.lower = lower
    bad = _run(&job, 1, 1, n > SMALL, &info)
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
    cdef _PotrfJob job
    cdef Stack d
    cdef int single = _single_matrix_code(a)
    if single >= 0:
        return _potrf_single(<cnp.ndarray>a, single, lower)
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef int t
    a, batch, a3 = _begin(a, &job.head, &_POTRF, &d, job.st)
    if d.nb == 0 or d.n == 0:
        return _ref.potrf(a, lower)
    c = np.empty((d.nb, d.n, d.n), a.dtype)
    job.a = _data(a3)
    job.c = _data(c)
    job.n = d.n
    job.lower = lower
    # plain loops up to SMALL
    t = _threads._threads_for(d.nb, d.n, d.nb * d.n * d.n * d.n // 2, d.n > SMALL)
    bad = _run(&job, d.nb, t, True, &info)
    if bad >= 0 and info > 0:
        raise LinAlgError(f"{_where(bad, batch)} is not positive definite (its leading "
                          f"minor of order {info} is not positive)")
    if bad != OK:
        raise _fail(bad, info, batch, "potrf", "Cholesky failed")
    return _unflat(c, batch)


# ---------------------------------------------------------------------------------------
# getrs and trtrs
# ---------------------------------------------------------------------------------------

cdef struct _GetrsJob:     # one getrs call, for run_chunks
    JobHead head
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


cdef Py_ssize_t _getrs_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                            blas_int* info) noexcept nogil:
    # lu and piv are broadcast to rhs's batch (stride 0 allowed). A factor that is
    # per-matrix Fortran-contiguous (what getrf returns) is used in place; otherwise it
    # is copied, once per distinct matrix. The right-hand sides go through a Fortran
    # buffer (copy in, solve, copy out).
    cdef _GetrsJob* j = <_GetrsJob*>job
    cdef const lapack_t *lu = <const lapack_t*>j.lu, *rhs = <const lapack_t*>j.rhs
    cdef lapack_t* x = <lapack_t*>j.x
    cdef Py_ssize_t n = j.n, nrhs = j.nrhs, b, i
    cdef Py_ssize_t* sa = j.sa
    cdef blas_int N = <blas_int>n, NR = <blas_int>nrhs, inf = 0
    cdef char tr = b'N' if j.trans == 0 else (b'T' if j.trans == 1 else b'C')
    cdef lapack_t *abuf = NULL, *bbuf = NULL
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


cdef Rows _GETRS = Rows(_getrs_rows[float], _getrs_rows[double], _getrs_rows[cfloat],
                        _getrs_rows[cdouble])


@cython.wraparound(True)   # negative indices of Python tuples below
cdef tuple _solve_operands(a, b, str name):
    """Common LAPACK dtype and broadcast 3-D stacks for getrs/trtrs."""
    a, b, dt = _common_lapack(a, b)
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
    cdef Py_ssize_t n = cnp.PyArray_DIMS(lu)[0]
    cdef cnp.ndarray x = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(b), cnp.PyArray_TYPE(b))
    cdef cnp.ndarray o, out = None
    cdef _GetrsJob job
    job.head.rows = &_GETRS
    job.head.code = code
    job.lu = <const char*>cnp.PyArray_DATA(lu)
    _strides2(lu, job.sa)
    job.piv = <const int*>cnp.PyArray_DATA(piv)
    job.sp[0] = 0
    job.sp[1] = cnp.PyArray_STRIDES(piv)[0] // sizeof(int)
    job.rhs = <const char*>cnp.PyArray_DATA(b)
    _strides2(b, job.sb)
    job.x = <char*>cnp.PyArray_DATA(x)
    job.o = NULL
    job.outer = NULL
    if outer is not None:
        o = <cnp.ndarray>outer
        out = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(lu), cnp.PyArray_TYPE(lu))
        job.o = <const char*>cnp.PyArray_DATA(o)
        _strides2(o, job.so)
        job.outer = <char*>cnp.PyArray_DATA(out)
    job.n = n
    job.nrhs = cnp.PyArray_DIMS(b)[1]
    job.trans = trans
    _launch(&job, 1, 1, n > SMALL, (), "getrs", "solve failed")
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
    cdef _GetrsJob job
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
    piv2 = _flat3(piv, batch, nb)       # (nb, n), like the stacks
    b3 = _flat3(b, batch, nb)
    o3 = _flat3(outer, batch, nb) if outer is not None else None
    if not (_strides3(lu3, job.sa) and _strides3(b3, job.sb)
            and (o3 is None or _strides3(o3, job.so))):
        return getrs(lu.copy(), piv, b.copy(), trans,
                     None if outer is None else outer.copy())
    x = np.empty((nb, n, nrhs), dt)
    out3 = np.empty((nb, n, n), dt) if outer is not None else None
    job.head.rows = &_GETRS
    job.head.code = code
    job.lu = _data(lu3)
    job.piv = <const int*>_data(piv2)
    job.sp[0] = cnp.PyArray_STRIDES(<cnp.ndarray>piv2)[0] // sizeof(int)
    job.sp[1] = cnp.PyArray_STRIDES(<cnp.ndarray>piv2)[1] // sizeof(int)
    job.rhs = _data(b3)
    job.x = _data(x)
    job.o = _data(o3)
    job.outer = _data(out3)
    job.n, job.nrhs, job.trans = n, nrhs, trans
    cdef int t = _threads._threads_for(nb, n, nb * n * n * nrhs, n > SMALL)   # loops up to SMALL
    _launch(&job, nb, t, True, batch, "getrs", "solve failed")
    if outer is None:
        return _unflat(x, batch)
    return _unflat(x, batch), _unflat(out3, batch)


cdef struct _TrtrsJob:     # one trtrs call (a serial loop)
    JobHead head
    const char* a             # (nb, n, n), element strides sa (0 = broadcast)
    const char* rhs           # (nb, n, nrhs), element strides sb
    char* x                   # (nb, n, nrhs) C-ordered
    Py_ssize_t sa[3]
    Py_ssize_t sb[3]
    Py_ssize_t n, nrhs
    int trans
    bint lower, unit


cdef Py_ssize_t _trtrs_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                            blas_int* info) noexcept nogil:
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
    cdef _TrtrsJob* j = <_TrtrsJob*>job
    cdef const lapack_t *a = <const lapack_t*>j.a, *rhs = <const lapack_t*>j.rhs
    cdef lapack_t* x = <lapack_t*>j.x
    cdef bint lower = j.lower, unit = j.unit
    cdef int trans = j.trans
    cdef Py_ssize_t n = j.n, nrhs = j.nrhs, b, i
    cdef Py_ssize_t* sa = j.sa
    cdef Py_ssize_t* sb = j.sb
    cdef blas_int N = <blas_int>n, NR = <blas_int>nrhs
    cdef char side = b'R', uplo, tr, trv = 0
    cdef char dg = b'U' if unit else b'N'
    cdef bint c_order, f_order, copy_a
    cdef lapack_t* abuf = NULL
    cdef const lapack_t* src
    cdef const lapack_t* last = NULL
    cdef lapack_t *ap, *xp
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
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
    for b in range(b0, b1):
        src = a + b * sa[0]
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
        xp = x + b * n * nrhs
        _copy(rhs + b * sb[0], sb[1], sb[2], xp, nrhs, 1, n, nrhs, False)
        if trv:
            xtrsv(&uplo, &trv, &dg, &N, ap, &N, xp)
        else:
            xtrsm(&side, &uplo, &tr, &dg, &NR, &N, ap, &N, xp, &NR)
    return _release(&pool, result)


cdef Rows _TRTRS = Rows(_trtrs_rows[float], _trtrs_rows[double], _trtrs_rows[cfloat],
                        _trtrs_rows[cdouble])


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
    cdef _TrtrsJob job
    # Fast path (most calls: two ndarrays of one native LAPACK dtype, same batch):
    # skips _solve_operands' conversions and broadcasting, a good part of the per-call
    # cost at small n.
    if type(a) is np.ndarray and type(b) is np.ndarray:
        dt = a.dtype
        if dt is b.dtype and dt.isnative:
            code = _lapack_code(dt)
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
    if not (_strides3(a3, job.sa) and _strides3(b3, job.sb)):
        return trtrs(a.copy(), b.copy(), lower, trans, unit_diagonal)
    x = np.empty((nb, n, nrhs), dt)
    job.head.rows = &_TRTRS
    job.head.code = code
    job.a = _data(a3)
    job.rhs = _data(b3)
    job.x = _data(x)
    job.n, job.nrhs, job.trans = n, nrhs, trans
    job.lower, job.unit = lower, unit_diagonal
    bad = _run(&job, nb, 1, True, &info)
    if bad >= 0 and info > 0:
        raise LinAlgError(f"{_where(bad, batch)} is singular: diagonal entry {info - 1} "
                          "of the triangular matrix is exactly zero")
    if bad != OK:
        raise _fail(bad, info, batch, "trtrs", "triangular solve failed")
    return _unflat(x, batch)
