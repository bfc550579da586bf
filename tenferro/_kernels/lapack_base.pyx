# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""The finiteness check of every linalg input (``all_finite``), and the Python-side
helpers that the entry points of the LAPACK driver modules share (lapack_eig.pyx,
lapack_qr.pyx, lapack_lu_chol.pyx): operand conversion, the stack's flat view, and the
exception for a failing matrix. Declared, with the drivers' shared nogil pieces, in
lapack_base.pxd.

Every driver takes a stack of matrices ``(*batch, m, n)`` and runs ONE loop over the
batch with the GIL released. The LAPACK workspace is queried once per call (``lwork=-1``
on the first matrix: every matrix of a stack has the same shape) and the buffers are
reused for every matrix, so a stack of 1000 4x4 matrices costs 1000 LAPACK calls and no
Python per matrix. Each LAPACK info is collected inside the loop; the first failing
matrix is reported after the loop, with the GIL, as a LinAlgError naming its batch index.

NumPy stacks are C-ordered and LAPACK is Fortran-ordered: the memory of a C-ordered
m x n matrix A is the Fortran n x m matrix Aᵀ. Each driver module's docstring says how
its drivers use that to avoid copies.

The twin is ``lapack_base_twin.py``; ``tests/_kernels/test_all_finite.py`` checks that
both agree.
"""
cimport cython
from libc.stdint cimport uint32_t, uint64_t

import numpy as np
cimport numpy as cnp

from tenferro._errors import DTypeError, LinAlgError
from tenferro._kernels._batch import batch_index

__all__ = ["all_finite"]

cnp.import_array()


# ---------------------------------------------------------------------------------------
# The finiteness check of every linalg input (check_finite=True)
# ---------------------------------------------------------------------------------------
# numpy.isfinite(a).all() makes a boolean array and reduces it: two ufunc calls, a few
# percent of a small factorization's forward + backward. For a contiguous, aligned,
# native-order float32/float64/complex64/complex128 array this loop over its real
# numbers answers the same question; anything else goes to NumPy.

ctypedef fused _real_scalar:
    float
    double


cdef bint _finite_run(const _real_scalar* p, Py_ssize_t n) noexcept nogil:
    # An entry is NaN or ±Inf iff its exponent field is all ones, i.e. iff adding one
    # unit of the exponent field to the masked exponent carries into the sign bit. OR-ing
    # those sums over a block of 2048 entries is integer arithmetic the compiler
    # vectorizes with plain SSE2 (pand, paddq, por), several times faster than the
    # earlier OR of the bits of x·0 (a scalar loop) or isfinite() per entry with an early
    # exit (docs/guide/kernels.md, "Kernel constants").
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


# ---------------------------------------------------------------------------------------
# The entry points' helpers (declared in lapack_base.pxd)
# ---------------------------------------------------------------------------------------

# dtype.char of the four LAPACK types, in the order of the dtype codes
cdef str _CHARS = "fdFD"
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64),
           np.dtype(np.complex64), np.dtype(np.complex128))


_REAL = (_DTYPES[0], _DTYPES[1], _DTYPES[0], _DTYPES[1])
_COMPLEX = (_DTYPES[2], _DTYPES[3], _DTYPES[2], _DTYPES[3])


cdef int _code_of(object dtype) except -1:
    cdef str ch = dtype.char
    cdef Py_ssize_t c = _CHARS.find(ch)
    if c < 0:
        raise DTypeError(f"LAPACK needs float32, float64, complex64 or complex128 input, "
                         f"got {dtype}; convert with .astype(np.float64) first")
    return <int>c


cdef int _lapack_code(object dtype) except -2:
    return <int>_CHARS.find(dtype.char)


cdef object _real_dtype(int code):
    return _REAL[code]


cdef object _complex_dtype(int code):
    return _COMPLEX[code]


cdef object _lapack_array(object a):
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    dt = a.dtype
    if dt.kind in "biu":
        a = a.astype(np.float64)
    elif not dt.isnative:
        a = a.astype(dt.newbyteorder("="))
    return a


cdef tuple _common_lapack(object a, object b):
    a = _lapack_array(a)
    b = _lapack_array(b)
    dt = a.dtype
    if b.dtype != dt:
        dt = np.result_type(dt, b.dtype)
        a = a.astype(dt, copy=False)
        b = b.astype(dt, copy=False)
    return a, b, dt


cdef Py_ssize_t _prod(tuple shape):
    cdef Py_ssize_t p = 1
    for d in shape:
        p *= <Py_ssize_t>d
    return p


# np.newaxis, as an opaque object: Cython would otherwise compile ``a[None]`` with an
# integer fast path that the C compiler warns about.
cdef object _NEWAXIS = None


@cython.wraparound(True)
cdef object _flat3(object a, tuple batch, Py_ssize_t nb):
    # a view when it can be: a[None] and a itself are cheaper than reshape for the
    # common 2-D and 3-D cases
    cdef Py_ssize_t nd = len(batch)
    if nd == 0:
        return a[_NEWAXIS]
    if nd == 1:
        return a
    return a.reshape((nb,) + a.shape[nd:])


cdef object _unflat(object x, tuple batch):
    cdef Py_ssize_t nd = len(batch)
    if nd == 0:
        return x[0]
    if nd == 1:
        return x
    return x.reshape(batch + x.shape[1:])


@cython.wraparound(True)
cdef tuple _begin(object a, JobHead* head, const Rows* rows, Stack* d, Py_ssize_t* st):
    a = _lapack_array(a)
    cdef tuple shape = a.shape
    cdef tuple batch = shape[:-2]
    d.m = shape[-2]
    d.n = shape[-1]
    d.k = d.m if d.m < d.n else d.n
    d.nb = _prod(batch)
    d.code = _code_of(a.dtype)
    head.rows = rows
    head.code = d.code
    a3 = _flat3(a, batch, d.nb)
    if not _strides3(a3, st):
        a = a.copy()
        a3 = _flat3(a, batch, d.nb)
        _strides3(a3, st)
    return a, batch, a3


cdef str _where(Py_ssize_t bad, tuple batch):
    if not batch:
        return "the matrix"
    return f"matrix {batch_index(bad, batch)} of the stack"


cdef object _fail(Py_ssize_t bad, blas_int info, tuple batch, str routine, str what):
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
