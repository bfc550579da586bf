# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""Batched LAPACK drivers of QR and least squares, called straight through
``scipy.linalg.cython_lapack``: qr (geqrf + orgqr, or geqrt + larfb), gelsd, lstsq_qr
(geqrf + ormqr + trsm, gelsd for rank-deficient matrices) and pinv_qr (geqrf + orgqr +
trsm).

Every driver runs one loop over the stack with the GIL released, its workspace queried
once per call (lapack_base.pyx says more). Row-major vs column-major: the memory of a
C-ordered m x n matrix A is the Fortran n x m matrix Aᵀ, which the drivers use to avoid
copies where the algebra allows it:

  qr      each matrix is copied once into a Fortran work buffer and factored; for
          larger matrices (geqrt) Q is accumulated straight in q's memory as the Fortran
          Qᵀ (no copy out), for small ones (geqrf + orgqr) copied out of the buffer.
  lstsq_qr, pinv_qr  a wide A is copied conjugated into the work buffer as the Fortran
          Aᴴ: its LQ factorization A = RᴴQᴴ is then geqrf of a tall matrix, like a tall
          A's QR.
  gelsd   each matrix and its right-hand sides are copied into Fortran work buffers.

Non-finite input (only possible with check_finite=False upstream): gelsd and lstsq_qr
reject a matrix with a NaN or Inf entry before LAPACK sees it, raising LinAlgError
naming it; qr propagates NaN; pinv_qr reports such a matrix as not of full rank.

The pure NumPy twins of these functions (same names and signatures) are in
``lapack_qr_twin.py``; ``tests/_kernels/test_lapack.py`` checks that both agree.
"""
cimport cython
from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memcpy, memset

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t, xtrsm
from tenferro._kernels._single cimport matrix2_code
from tenferro._kernels._small cimport SMALL_N
from tenferro._kernels._xlapack cimport (xgelsd, xgeqrf, xgeqrt, xgesdd, xlarfb, xorgqr,
                                        xormqr)

from tenferro._kernels.lapack_base cimport (
    NO_MEMORY, NOT_FINITE, OK, JobHead, Pool, Rows, Stack, _alloc, _begin, _begin1,
    _code_of, _common_lapack, _copy, _data, _failed, _finite, _flat3, _launch, _lreal,
    _lwork, _max_lwork, _pool, _prod, _real_dtype, _real_size, _release, _strides3,
    _unflat, _upper)

import numpy as np
cimport numpy as cnp

from tenferro._kernels import lapack_qr_twin as _ref
from tenferro import _threads


__all__ = ["qr", "gelsd", "lstsq_qr", "pinv_qr"]

cnp.import_array()


# ---------------------------------------------------------------------------------------
# qr
# ---------------------------------------------------------------------------------------

cdef inline blas_int _qr_block(Py_ssize_t m, Py_ssize_t n, int mode) noexcept nogil:
    """The block size of _qr's geqrt path for m x n matrices, or 0 for geqrf + orgqr.

    geqrt's recursive panels make more BLAS calls than geqrf + orgqr, which costs at
    small k = min(m, n); from k ~ 64 it wins, since geqrf and orgqr run up to 128 columns
    unblocked. Measured crossovers (one thread, OpenBLAS, f64 and c128, forward time):
    geqrf + orgqr up to k ~ 48, geqrt from k ~ 64; a complete Q of a tall matrix from
    k = 32; mode "r" from k = 96 (64 when wide). Block 8 for k < 96, 16 below 192, then
    32 (block sizes measured alike; the figures are in docs/guide/kernels.md,
    "Kernel constants")."""
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
    JobHead head
    const char* a             # the input stack (nb, m, n), element strides st
    char* q                   # (nb, m, qcols) C-ordered, or NULL (mode 0)
    char* r                   # (nb, rrows, n) C-ordered
    Py_ssize_t st[3]
    Py_ssize_t m, n, rrows
    int mode                  # 0: r only (k x n); 1: reduced; 2: complete


cdef Py_ssize_t _qr_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                         blas_int* info) noexcept nogil:
    # Each matrix is copied once, transposed, into a Fortran buffer and factored; R is
    # read off its upper triangle. Small matrices (_qr_block 0): geqrf, then
    # orgqr/ungqr in place (buffer m x max(n, qcols)) and Q copied out. Larger ones:
    # geqrt keeps the T of each block, and _q_of_blocks accumulates Q straight into q.
    # Same Householder vectors (larfg) either way: the same R and Q as numpy.linalg.qr
    # (geqrf + orgqr) to rounding, with a real diagonal of R.
    cdef _QrJob* j = <_QrJob*>job
    cdef const lapack_t* a = <const lapack_t*>j.a
    cdef lapack_t *q = <lapack_t*>j.q, *r = <lapack_t*>j.r
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
    cdef lapack_t *abuf = NULL, *tau = NULL, *work = NULL
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
        if _failed(inf, info, b, &result):
            break
        _upper(abuf, m, r + b * rrows * n, rrows, n)
        if mode == 0:
            continue
        if blk:
            _q_of_blocks(abuf, M, K, tau, blk, q + b * m * qcols, QC, work)
            continue
        xorgqr(&M, &QC, &K, abuf, &M, tau, work, &lwork, &inf)
        if _failed(inf, info, b, &result):
            break
        _copy(abuf, 1, m, q + b * m * qcols, qcols, 1, m, qcols, False)
    return _release(&pool, result)


cdef Rows _QR = Rows(_qr_rows[float], _qr_rows[double], _qr_rows[cfloat], _qr_rows[cdouble])


cdef object _qr_single(cnp.ndarray a, int code, int imode):
    """qr of one matrix (see _single.pxd's matrix2_code; any strides), serially on the calling
    thread: the stack path's q, r without its views and thread plan."""
    cdef Py_ssize_t m = cnp.PyArray_DIMS(a)[0], n = cnp.PyArray_DIMS(a)[1]
    cdef Py_ssize_t k = m if m < n else n
    cdef cnp.npy_intp dims[2]
    cdef _QrJob job
    dims[0], dims[1] = (m if imode == 2 else k), n
    cdef cnp.ndarray r = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
    cdef cnp.ndarray q = None
    job.q = NULL
    if imode:
        dims[0], dims[1] = m, (m if imode == 2 else k)
        q = cnp.PyArray_SimpleNew(2, dims, cnp.PyArray_TYPE(a))
        job.q = <char*>cnp.PyArray_DATA(q)
    _begin1(a, &job.head, &_QR, code, &job.a, job.st)
    job.r = <char*>cnp.PyArray_DATA(r)
    job.m, job.n, job.rrows = m, n, cnp.PyArray_DIMS(r)[0]
    job.mode = imode
    # the GIL is released for a matrix larger than the plain-loop size of the other
    # drivers (_small.pxd): a smaller one is done before releasing it would pay off
    _launch(&job, 1, 1, m > SMALL_N or n > SMALL_N, (), "geqrf/geqrt/orgqr", "QR failed")
    return r if not imode else (q, r)


@cython.wraparound(True)   # negative indices of Python tuples below
def qr(a, mode="reduced"):
    """(q, r) like numpy.linalg.qr for mode "reduced" (q m x k, r k x n) or "complete"
    (q m x m, r m x n); r alone (k x n) for mode "r". geqrf + orgqr/ungqr for small
    matrices, geqrt + block accumulation of Q for larger ones (see _qr_block)."""
    cdef _QrJob job
    cdef Stack d
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
    a, batch, a3 = _begin(a, &job.head, &_QR, &d, job.st)
    if d.nb == 0 or d.k == 0:
        return _ref.qr(a, mode)
    r = np.empty((d.nb, d.m if imode == 2 else d.k, d.n), a.dtype)
    q = np.empty((d.nb, d.m, d.m if imode == 2 else d.k), a.dtype) if imode else None
    job.a = _data(a3)
    job.q = _data(q)
    job.r = _data(r)
    job.m, job.n, job.rrows = d.m, d.n, r.shape[1]
    job.mode = imode
    # the geqrt path (larger k) is made of level-3 calls (see tenferro._threads)
    cdef int t = _threads._threads_for(d.nb, max(d.m, d.n), 6 * d.nb * d.m * d.n * d.k,
                                       _qr_block(d.m, d.n, imode) != 0)
    _launch(&job, d.nb, t, True, batch, "geqrf/geqrt/orgqr", "QR failed")
    r = _unflat(r, batch)
    if not imode:
        return r
    return _unflat(q, batch), r


# ---------------------------------------------------------------------------------------
# Least squares and the pseudo-inverse
# ---------------------------------------------------------------------------------------

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


cdef blas_int _qr_svd_work(Pool* pool, blas_int* FM, blas_int* P, lapack_t** f,
                          lapack_t** tau, lapack_t** r, void* s, void** rwork,
                          blas_int** iwork) noexcept nogil:
    """The buffers that lstsq_qr and pinv_qr share, from ``pool``: the Fortran FM x P f
    for geqrf, its tau, the P x P r for gesdd 'N' (the singular values of R) and gesdd's
    iwork and rwork; returns the larger workspace of geqrf on f and gesdd on r (0 when an
    allocation failed: pool.failed)."""
    cdef blas_int lwork = -1, lw2 = -1, inf = 0
    cdef size_t p = <size_t>P[0]
    cdef char jz = b'N'
    cdef lapack_t q
    f[0] = <lapack_t*>_alloc(pool, <size_t>FM[0] * p, sizeof(lapack_t))
    tau[0] = <lapack_t*>_alloc(pool, p, sizeof(lapack_t))
    r[0] = <lapack_t*>_alloc(pool, p * p, sizeof(lapack_t))
    iwork[0] = <blas_int*>_alloc(pool, 8 * p, sizeof(blas_int))
    rwork[0] = _alloc(pool, 7 * p if (lapack_t is cfloat or lapack_t is cdouble) else 1,
                      _real_size(<lapack_t*>NULL))
    if pool.failed:
        return 0
    xgeqrf(FM, P, f[0], FM, tau[0], &q, &lwork, &inf)
    lwork = _lwork(q)
    xgesdd(&jz, P, P, r[0], P, s, r[0], P, r[0], P, &q, &lw2, rwork[0], iwork[0], &inf)
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


cdef struct _LstsqJob:     # one gelsd or lstsq_qr call (a serial loop)
    JobHead head
    const char* a             # (nb, m, n), element strides sa
    const char* rhs           # (nb, m, k), element strides sb
    char* x                   # (nb, n, k) C-ordered
    char* s                   # (nb, min(m, n)) of the real type
    char* res                 # (nb, k) of the real type (lstsq_qr)
    char* r                   # (nb, p, p) C-ordered, p = min(m, n) (lstsq_qr)
    int64_t* rank             # (nb,)
    Py_ssize_t sa[3]
    Py_ssize_t sb[3]
    Py_ssize_t m, n, k
    double rcond


cdef Py_ssize_t _gelsd_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                            blas_int* info) noexcept nogil:
    # Each matrix is copied into a Fortran m x n buffer and its right-hand sides into a
    # Fortran max(m, n) x k buffer (gelsd writes the n x k solution over b, so b needs
    # max(m, n) rows); the solution's first n rows are copied out C-ordered.
    cdef _LstsqJob* j = <_LstsqJob*>job
    cdef const lapack_t *a = <const lapack_t*>j.a, *rhs = <const lapack_t*>j.rhs
    cdef lapack_t* x = <lapack_t*>j.x
    cdef char* s = j.s
    cdef int64_t* rank = j.rank
    cdef double rcond = j.rcond
    cdef Py_ssize_t m = j.m, n = j.n, k = j.k, b
    cdef Py_ssize_t* sa = j.sa
    cdef Py_ssize_t* sb = j.sb
    cdef Py_ssize_t mn = m if m < n else n, ldb = m if m > n else n
    cdef blas_int M = <blas_int>m, N = <blas_int>n, K = <blas_int>k, LDB = <blas_int>ldb
    cdef blas_int lwork, inf = 0, rk = 0
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef bint single = rsize == sizeof(float)
    cdef float rc_f = <float>rcond
    cdef double rc_d = rcond
    cdef void* rc = <void*>&rc_f if single else <void*>&rc_d
    cdef lapack_t *abuf = NULL, *bbuf = NULL, *work = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    abuf = <lapack_t*>_alloc(&pool, m * n, sizeof(lapack_t))
    bbuf = <lapack_t*>_alloc(&pool, ldb * k, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    lwork = _gelsd_alloc(&M, &N, &K, abuf, &M, bbuf, &LDB, s, rc, &work, &rwork, &iwork,
                         &pool)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    for b in range(b0, b1):
        _copy(a + b * sa[0], sa[1], sa[2], abuf, 1, m, m, n, False)
        if not _finite(abuf, n, m, 0):
            _failed(NOT_FINITE, info, b, &result)
            break
        _copy(rhs + b * sb[0], sb[1], sb[2], bbuf, 1, ldb, m, k, False)
        xgelsd(&M, &N, &K, abuf, &M, bbuf, &LDB, s + b * mn * rsize, rc, &rk, work,
               &lwork, rwork, iwork, &inf)
        if _failed(inf, info, b, &result):
            break
        rank[b] = rk
        _copy(bbuf, 1, ldb, x + b * n * k, k, 1, n, k, False)
    return _release(&pool, result)


cdef Rows _GELSD = Rows(_gelsd_rows[float], _gelsd_rows[double], _gelsd_rows[cfloat],
                        _gelsd_rows[cdouble])


cdef inline double _abs2(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return <double>z.real * z.real + <double>z.imag * z.imag
    else:
        return <double>z * z


cdef Py_ssize_t _lstsq_qr_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                               blas_int* info) noexcept nogil:
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
    cdef _LstsqJob* jb = <_LstsqJob*>job
    cdef const lapack_t *a = <const lapack_t*>jb.a, *rhs = <const lapack_t*>jb.rhs
    cdef lapack_t *x = <lapack_t*>jb.x, *r = <lapack_t*>jb.r
    cdef char* s = jb.s
    cdef char* res = jb.res
    cdef int64_t* rank = jb.rank
    cdef double rcond = jb.rcond
    cdef Py_ssize_t m = jb.m, n = jb.n, k = jb.k
    cdef Py_ssize_t b, i, j, full
    cdef Py_ssize_t* sa = jb.sa
    cdef Py_ssize_t* sb = jb.sb
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
    cdef lapack_t *fbuf = NULL, *tau = NULL, *rbuf = NULL, *bbuf = NULL, *work = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef lapack_t* gwork = NULL     # gelsd's, allocated at the first rank-deficient matrix
    cdef void* grwork = NULL
    cdef blas_int* giwork = NULL
    cdef lapack_t *rb, *bcol
    cdef char* sbp
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    bbuf = <lapack_t*>_alloc(&pool, ldf * k, sizeof(lapack_t))
    # one workspace for geqrf, gesdd and ormqr: the largest of their queries
    lwork = _qr_svd_work(&pool, &FM, &P, &fbuf, &tau, &rbuf, s, &rwork, &iwork)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    xormqr(&side, &nt, &FM, &K, &P, fbuf, &FM, tau, bbuf, &LD, &q, &lw2, &inf)
    lwork = _max_lwork(lwork, q)
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    for b in range(b0, b1):
        sbp = s + b * p * rsize
        _load_f(a + b * sa[0], sa, fbuf, m, n, tall)
        if not _finite(fbuf, m, n, 0):
            _failed(NOT_FINITE, info, b, &result)
            break
        xgeqrf(&FM, &P, fbuf, &FM, tau, work, &lwork, &inf)
        if _failed(inf, info, b, &result):
            break
        # R, C-ordered with zeros below the diagonal, to the output; its memory is the
        # Fortran Rᵀ, whose singular values gesdd computes in rbuf
        rb = r + b * p * p
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
                _copy(rhs + b * sb[0], sb[1], sb[2], bbuf, 1, ldf, m, k, False)
                xormqr(&side, qtrans, &FM, &K, &P, fbuf, &FM, tau, bbuf, &LD, work,
                       &lwork, &inf)
                xtrsm(&side, &up, &nt, &nt, &P, &K, fbuf, &FM, bbuf, &LD)
            else:
                _copy(rhs + b * sb[0], sb[1], sb[2], bbuf, 1, ldf, m, k, False)
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
            _copy(a + b * sa[0], sa[1], sa[2], fbuf, 1, m, m, n, False)
            _copy(rhs + b * sb[0], sb[1], sb[2], bbuf, 1, ldf, m, k, False)
            xgelsd(&M, &N, &K, fbuf, &M, bbuf, &LD, sbp, grc, &rk, gwork, &glwork,
                   grwork, giwork, &inf)
            if _failed(inf, info, b, &result):
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
        _copy(bbuf, 1, ldf, x + b * n * k, k, 1, n, k, False)
    return _release(&pool, result)


cdef Rows _LSTSQ_QR = Rows(_lstsq_qr_rows[float], _lstsq_qr_rows[double],
                           _lstsq_qr_rows[cfloat], _lstsq_qr_rows[cdouble])


cdef struct _PinvJob:      # one pinv_qr call (a serial loop)
    JobHead head
    const char* a             # (nb, m, n), element strides sa
    char* x                   # (nb, n, m) C-ordered
    const double* rtol        # (nb,)
    uint8_t* full             # (nb,)
    Py_ssize_t sa[3]
    Py_ssize_t m, n


cdef Py_ssize_t _pinv_qr_rows(lapack_t* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                              blas_int* info) noexcept nogil:
    # The pseudo-inverse of a matrix of full rank p = min(m, n) through QR: with F = A
    # (m >= n) or F = Aᴴ (m < n) in a Fortran buffer, geqrf gives F = QR and F⁺ = R⁻¹Qᴴ.
    # Y = QR⁻ᴴ = (F⁺)ᴴ is orgqr and one trsm in place; then A⁺ = Yᴴ (tall; the C-ordered
    # x's memory is the Fortran xᵀ = conj(Y): a conjugating memcpy) or A⁺ = Y (wide: a
    # transposing copy). full[b] = 1 when every singular value of R (they are A's)
    # exceeds rtol[b]·s_max; otherwise x[b] is left unset (and a non-finite matrix is
    # just reported not full): the caller takes the SVD path for such a stack.
    cdef _PinvJob* jb = <_PinvJob*>job
    cdef const lapack_t* a = <const lapack_t*>jb.a
    cdef lapack_t* x = <lapack_t*>jb.x
    cdef const double* rtol = jb.rtol
    cdef uint8_t* full = jb.full
    cdef Py_ssize_t m = jb.m, n = jb.n, b, i, j
    cdef Py_ssize_t* sa = jb.sa
    cdef bint tall = m >= n
    cdef Py_ssize_t p = n if tall else m, ldf = m if tall else n
    cdef blas_int FM = <blas_int>ldf, P = <blas_int>p
    cdef blas_int lwork, lw2 = -1, inf = 0
    cdef char jz = b'N', side = b'R', up = b'U', nt = b'N', ct = b'C'
    cdef size_t rsize = _real_size(<lapack_t*>NULL)
    cdef bint single = rsize == sizeof(float)
    cdef lapack_t q
    cdef lapack_t *fbuf = NULL, *tau = NULL, *rbuf = NULL, *rtri = NULL, *work = NULL
    cdef void *s = NULL, *rwork = NULL
    cdef blas_int* iwork = NULL
    cdef Pool pool = _pool()
    cdef Py_ssize_t result = OK
    rtri = <lapack_t*>_alloc(&pool, p * p, sizeof(lapack_t))
    s = _alloc(&pool, p, rsize)
    # one workspace for geqrf, gesdd and orgqr: the largest of their queries
    lwork = _qr_svd_work(&pool, &FM, &P, &fbuf, &tau, &rbuf, s, &rwork, &iwork)
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    xorgqr(&FM, &P, &P, fbuf, &FM, tau, &q, &lw2, &inf)
    lwork = _max_lwork(lwork, q)
    work = <lapack_t*>_alloc(&pool, lwork, sizeof(lapack_t))
    if pool.failed:
        return _release(&pool, NO_MEMORY)
    for b in range(b0, b1):
        full[b] = 0
        _load_f(a + b * sa[0], sa, fbuf, m, n, tall)
        if not _finite(fbuf, m, n, 0):
            continue
        xgeqrf(&FM, &P, fbuf, &FM, tau, work, &lwork, &inf)
        if _failed(inf, info, b, &result):
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
        if _failed(inf, info, b, &result):
            break
        xtrsm(&side, &up, &ct, &nt, &FM, &P, rtri, &P, fbuf, &FM)
        if tall:
            _copy(fbuf, m, 1, x + b * n * m, m, 1, n, m, True)
        else:
            _copy(fbuf, 1, n, x + b * n * m, m, 1, n, m, False)
        full[b] = 1
    return _release(&pool, result)


cdef Rows _PINV_QR = Rows(_pinv_qr_rows[float], _pinv_qr_rows[double],
                          _pinv_qr_rows[cfloat], _pinv_qr_rows[cdouble])


def gelsd(a, b, rcond):
    """Minimum-norm least squares (x, rank, s) per matrix, like scipy.linalg.lstsq(a, b,
    cond=rcond, lapack_driver="gelsd"): a (*batch, m, n), b (*batch, m, k) with one batch
    shape; x (*batch, n, k), rank (*batch) int64, s (*batch, min(m, n)) the singular
    values of a (real dtype), descending. Singular values s <= rcond * s_max count as
    zero; a negative rcond means machine precision. LinAlgError naming the batch index
    when the SVD does not converge or a matrix has a NaN or Inf entry."""
    return _least_squares(a, b, rcond, False)


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
    return _least_squares(a, b, rcond, True)


@cython.wraparound(True)   # negative indices of Python tuples below
cdef tuple _least_squares(object a, object b, double rcond, bint via_qr):
    """gelsd (``via_qr`` False) or lstsq_qr: the stack handling the two share."""
    a, b, dt, batch = _lstsq_operands(a, b, "lstsq_qr" if via_qr else "gelsd")
    cdef Py_ssize_t m = a.shape[-2], n = a.shape[-1], k = b.shape[-1], nb = _prod(batch)
    cdef Py_ssize_t p = min(m, n)
    cdef int code = _code_of(dt)
    cdef _LstsqJob job
    if nb == 0 or m == 0 or n == 0 or k == 0:
        return _ref.lstsq_qr(a, b, rcond) if via_qr else _ref.gelsd(a, b, rcond)
    a3 = _flat3(a, batch, nb)
    b3 = _flat3(b, batch, nb)
    if not (_strides3(a3, job.sa) and _strides3(b3, job.sb)):
        return _least_squares(a.copy(), b.copy(), rcond, via_qr)
    rdt = _real_dtype(code)
    x = np.empty((nb, n, k), dt)
    s = np.empty((nb, p), rdt)
    rank = np.empty(nb, np.int64)
    res = np.empty((nb, k), rdt) if via_qr else None
    r = np.empty((nb, p, p), dt) if via_qr else None
    job.head.rows = &_LSTSQ_QR if via_qr else &_GELSD
    job.head.code = code
    job.a, job.rhs, job.x, job.s = _data(a3), _data(b3), _data(x), _data(s)
    job.rank = <int64_t*>_data(rank)
    job.res, job.r = _data(res), _data(r)
    job.m, job.n, job.k, job.rcond = m, n, k, rcond
    _launch(&job, nb, 1, True, batch, "geqrf/gelsd" if via_qr else "gelsd",
            "SVD did not converge in least squares")
    if not via_qr:
        return _unflat(x, batch), rank.reshape(batch), _unflat(s, batch)
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
    cdef _PinvJob job
    cdef Stack d
    a, batch, a3 = _begin(a, &job.head, &_PINV_QR, &d, job.sa)
    if d.nb == 0 or d.m == 0 or d.n == 0:
        return _ref.pinv_qr(a, rtol)
    rt = np.asarray(rtol, np.float64)
    if rt.shape != batch:
        rt = np.broadcast_to(rt, batch)
    rt = np.ascontiguousarray(rt).reshape(d.nb)
    x = np.empty((d.nb, d.n, d.m), a.dtype)
    full = np.empty(d.nb, np.bool_)
    job.a = _data(a3)
    job.x = _data(x)
    job.rtol = <const double*>_data(rt)
    job.full = <uint8_t*>_data(full)
    job.m, job.n = d.m, d.n
    _launch(&job, d.nb, 1, True, batch, "geqrf/orgqr", "QR failed")
    return _unflat(x, batch), full.reshape(batch)


@cython.wraparound(True)   # negative indices of Python tuples below
cdef tuple _lstsq_operands(a, b, str name):
    """Common LAPACK dtype of a (*batch, m, n) and b (*batch, m, k), batches broadcast to
    one shape."""
    a, b, dt = _common_lapack(a, b)
    if a.ndim < 2 or b.ndim < 2 or b.shape[-2] != a.shape[-2]:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape} do not fit "
                         "(*batch, m, n) and (*batch, m, k)")
    batch = a.shape[:-2]
    if b.shape[:-2] != batch:
        batch = np.broadcast_shapes(batch, b.shape[:-2])
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
    return a, b, dt, batch
