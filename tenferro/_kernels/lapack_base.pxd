# cython: language_level=3
"""What the batched LAPACK driver modules share (lapack_eig.pyx, lapack_qr.pyx,
lapack_lu_chol.pyx, with the wrappers of _xlapack.pxd): their return codes, the one
dispatch from a stack's dtype to the loop compiled for its scalar type, the buffer pool
of a call, the copies between NumPy's and LAPACK's layouts, and (defined in
lapack_base.pyx) the Python-side helpers of their entry points.

How a driver is written. Its loop over a range [b0, b1) of the stack is one fused
function ``_X_rows(lapack_t* tag, void* job, b0, b1, info)``; ``tag`` is always NULL and
only selects the specialization, the operands are in the driver's job struct behind
``job``. The struct starts with a ``JobHead`` naming the driver's ``Rows`` table (its four
specializations, listed once) and the dtype code, and ``dtype_rows`` picks the
specialization: it is the chunk_fn that run_chunks (_workers.pxd) splits over threads, or
is called directly for a serial loop. The entry point (``def X``) converts the operands,
fills the job from the ndarrays (data pointers and element strides) and runs it:
_begin (the stack) or _begin1 (one matrix) starts it, _launch runs the job and raises for
a failing matrix.

Every driver has that same shape on purpose: a job struct, a loop whose first lines read
the struct into typed locals, a Rows table and an entry point. ``duplicates`` lists the
drivers' struct-and-prologue lines as alike (lapack_eig/qr/lu_chol.pyx); they are the
protocol, each reading its own job, not one logic written twice.
"""
from libc.math cimport isfinite
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cimport numpy as cnp

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t
from tenferro._kernels._workers cimport SPARE_MIN, run_chunks, spare_keep, spare_take


# Return codes of the kernels besides a batch position (>= 0) of a failing matrix, and
# two info values of our own (LAPACK's are > 0 for failures, < 0 for bad arguments).
cdef enum:
    OK = -1
    NO_MEMORY = -4
    # info of a matrix with a NaN or Inf entry, which the iterative drivers (svd, eigh,
    # eig, gelsd, lstsq_qr) reject before LAPACK sees it: LAPACK would return garbage,
    # not converge, or print "illegal value" messages (?gebal, ?lascl) on stderr.
    NOT_FINITE = -1000
    # info of a getrs pivot outside 0..n-1 (LAPACK would read or write out of bounds)
    BAD_PIVOT = -1001


# ---------------------------------------------------------------------------------------
# The dtype dispatch (see the module docstring)
# ---------------------------------------------------------------------------------------

ctypedef Py_ssize_t (*rows_s)(float* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                              blas_int* info) noexcept nogil
ctypedef Py_ssize_t (*rows_d)(double* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                              blas_int* info) noexcept nogil
ctypedef Py_ssize_t (*rows_c)(cfloat* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                              blas_int* info) noexcept nogil
ctypedef Py_ssize_t (*rows_z)(cdouble* tag, void* job, Py_ssize_t b0, Py_ssize_t b1,
                              blas_int* info) noexcept nogil


cdef struct Rows:           # a driver's loop, one specialization per scalar type:
    rows_s s                # Rows(_X_rows[float], _X_rows[double], _X_rows[cfloat],
    rows_d d                #      _X_rows[cdouble])
    rows_c c
    rows_z z


cdef struct JobHead:        # the first member of every driver's job struct
    const Rows* rows
    int code                # 0..3: float32, float64, complex64, complex128 (_code_of)


cdef inline Py_ssize_t dtype_rows(void* job, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                                  blas_int* info) noexcept nogil:
    """The batch positions [b0, b1) of ``job`` (a struct starting with a JobHead) by the
    loop compiled for its dtype: OK (-1), a failure code < -1, or the failing position
    with LAPACK's info in *info. A chunk_fn for run_chunks."""
    cdef JobHead* h = <JobHead*>job
    if h.code == 0:
        return h.rows.s(NULL, job, b0, b1, info)
    if h.code == 1:
        return h.rows.d(NULL, job, b0, b1, info)
    if h.code == 2:
        return h.rows.c(NULL, job, b0, b1, info)
    return h.rows.z(NULL, job, b0, b1, info)


cdef inline Py_ssize_t _run(void* job, Py_ssize_t nb, int nthreads, bint release_gil,
                            blas_int* info) noexcept:
    """``job`` over the batch [0, nb): split over ``nthreads`` threads (run_chunks) when
    more than one, else on the calling thread, without the GIL when ``release_gil``
    (releasing it costs a good part of a small matrix's work)."""
    if nthreads > 1:
        with nogil:
            return run_chunks(dtype_rows, job, nb, nthreads, info)
    if release_gil:
        with nogil:
            return dtype_rows(job, 0, nb, True, info)
    return dtype_rows(job, 0, nb, True, info)


cdef inline int _launch(void* job, Py_ssize_t nb, int nthreads, bint release_gil,
                        tuple batch, str routine, str what) except -1:
    """_run, then the exception of a failing matrix (_fail's, naming ``routine`` and
    ``what`` failed) when one did: the end of every entry point."""
    cdef blas_int info = 0
    cdef Py_ssize_t bad = _run(job, nb, nthreads, release_gil, &info)
    if bad != OK:
        raise _fail(bad, info, batch, routine, what)
    return 0


cdef inline bint _failed(blas_int inf, blas_int* info, Py_ssize_t b,
                         Py_ssize_t* result) noexcept nogil:
    """Whether LAPACK's info ``inf`` of batch position ``b`` reports a failure (not 0):
    then info[0] = inf and result[0] = b, what a driver's loop returns."""
    if inf == 0:
        return False
    info[0] = inf
    result[0] = b
    return True


cdef struct Stack:          # an entry point's operand (*batch, m, n), as a flat stack
    Py_ssize_t m, n, k, nb  # k = min(m, n), nb = prod(batch)
    int code                # its dtype code (_code_of)


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


cdef inline blas_int _max_lwork(blas_int lwork, lapack_t q) noexcept nogil:
    """The larger of lwork and the workspace size a query returned in q."""
    cdef blas_int lw = _lwork(q)
    return lw if lw > lwork else lwork


cdef inline blas_int _lreal(void* q, bint single) noexcept nogil:
    """A real workspace size (rwork[0] after a query), float or double."""
    cdef double x = (<float*>q)[0] if single else (<double*>q)[0]
    return <blas_int>(x * (1.0 + 1e-6)) + 1


cdef enum:
    # the tile edge of _copy's transposing copy: at a power-of-two row stride the
    # strided side's lines fall into few L1 sets (f64 256 x 256: 2 KB apart, 2 of 64
    # sets), so a tile of 32 lines evicts itself; 16 fits, 8 does as well
    # (docs/guide/kernels.md, "Kernel constants")
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


cdef inline void _upper(const lapack_t* src, Py_ssize_t ld, lapack_t* dst, Py_ssize_t rows,
                        Py_ssize_t cols) noexcept nogil:
    """The upper trapezoid of the Fortran matrix src (leading dimension ld) into the
    C-ordered rows x cols dst, zeros below the diagonal (R of a geqrf, U of a getrf)."""
    cdef Py_ssize_t i, j
    # a tiled transposing copy, then zeros: an element-wise loop would read src along
    # its strided axis, all cache misses at large n
    _copy(src, 1, ld, dst, cols, 1, rows, cols, False)
    for i in range(1, rows):
        for j in range(i if i < cols else cols):
            dst[i * cols + j] = 0


cdef inline bint _elem_strides(Py_ssize_t* strides, Py_ssize_t itemsize, Py_ssize_t ndim,
                               Py_ssize_t* out) noexcept:
    """Byte strides -> element strides; False if one is not a multiple of the item size."""
    cdef Py_ssize_t i
    for i in range(ndim):
        if strides[i] % itemsize:
            return False
        out[i] = strides[i] // itemsize
    return True


cdef inline void _strides2(object a, Py_ssize_t* out) noexcept:
    """The element strides of one matrix (a 2-D ndarray whose strides are multiples of
    its item size, as matrix2_code checks) as those of a stack of one: out[0] = 0."""
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(<cnp.ndarray>a)
    out[0] = 0
    out[1] = cnp.PyArray_STRIDES(<cnp.ndarray>a)[0] // isz
    out[2] = cnp.PyArray_STRIDES(<cnp.ndarray>a)[1] // isz


cdef inline bint _strides3(object x, Py_ssize_t* out) noexcept:
    """_elem_strides of the 3-D ndarray ``x`` (a flattened stack). When a stride is not a
    multiple of the item size, the entry point retries on a C-ordered copy."""
    return _elem_strides(<Py_ssize_t*>cnp.PyArray_STRIDES(<cnp.ndarray>x),
                         cnp.PyArray_ITEMSIZE(<cnp.ndarray>x), 3, out)


cdef inline void _begin1(object a, JobHead* head, const Rows* rows, int code,
                         const char** data, Py_ssize_t* st) noexcept:
    """The start of an entry point's single-matrix path (see _single.pxd's matrix2_code)
    on the 2-D ndarray ``a`` of dtype code ``code``: head's rows and code, a's data
    pointer to data[0] and its element strides, as those of a stack of one, to st."""
    head.rows = rows
    head.code = code
    data[0] = <const char*>cnp.PyArray_DATA(<cnp.ndarray>a)
    _strides2(a, st)


cdef inline char* _data(object x) noexcept:
    """The data pointer of the ndarray ``x``, or NULL for None (an output not asked for);
    valid while the caller holds x."""
    if x is None:
        return NULL
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>x)


cdef inline size_t _real_size(lapack_t* tag) noexcept nogil:
    """Size of the real type of lapack_t (the type of s, w and rwork)."""
    if lapack_t is cfloat or lapack_t is cdouble:
        return sizeof(lapack_t) // 2
    else:
        return sizeof(lapack_t)


cdef inline int _real_type(int code) noexcept:
    """NumPy's type number of the real dtype of dtype code ``code``."""
    return cnp.NPY_FLOAT if code == 0 or code == 2 else cnp.NPY_DOUBLE


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


# ---------------------------------------------------------------------------------------
# The buffers of one kernel call: _alloc records each in the pool, _release frees them
# all on every return path; ``failed``: an allocation failed (out of memory).
# ---------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------
# The entry points' Python-side helpers (lapack_base.pyx)
# ---------------------------------------------------------------------------------------

# 0..3 for a float32, float64, complex64 or complex128 dtype, DTypeError otherwise
cdef int _code_of(object dtype) except -1
# the same, -1 for any other dtype
cdef int _lapack_code(object dtype) except -2
# the real (float32/float64) and complex (complex64/complex128) dtypes of a code
cdef object _real_dtype(int code)
cdef object _complex_dtype(int code)
# ``a`` as an ndarray of one of the four LAPACK dtypes (ints and bools -> float64)
cdef object _lapack_array(object a)
# (a, b, dt): a and b as LAPACK ndarrays (_lapack_array) of their common dtype dt
cdef tuple _common_lapack(object a, object b)
cdef Py_ssize_t _prod(tuple shape)
# the stack ``a`` (*batch, m, n) as (nb, m, n), and an output (nb, ...) back to (*batch, ...)
cdef object _flat3(object a, tuple batch, Py_ssize_t nb)
cdef object _unflat(object x, tuple batch)
# The start of an entry point on the stack ``a``: (a, batch, a3) with ``a`` as a LAPACK
# ndarray (_lapack_array) of shape (*batch, m, n) and a3 its flat view (nb, m, n) whose
# element strides go to st (those of a C-ordered copy of a when a stride is not a
# multiple of the item size); fills d, and head with ``rows`` and the dtype code.
cdef tuple _begin(object a, JobHead* head, const Rows* rows, Stack* d, Py_ssize_t* st)
# "the matrix" or "matrix (i, j) of the stack" for batch position ``bad``
cdef str _where(Py_ssize_t bad, tuple batch)
# the exception for a kernel's return code ``bad`` (a batch position, or < -1)
cdef object _fail(Py_ssize_t bad, blas_int info, tuple batch, str routine, str what)
