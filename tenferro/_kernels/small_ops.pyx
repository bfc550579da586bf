# cython: language_level=3
"""Small real arrays without NumPy's per-call dispatch: the matrix product by the BLAS
call NumPy makes, and the sum and difference of two arrays of one shape by a C loop.

The matrix product:

Why: ``np.matmul`` of two 4x4 float64 matrices costs ~1.3 µs on the development machine,
almost all of it NumPy's dispatch (the ufunc machinery, the operand checks) around one
?gemm call of ~0.1 µs. A loop of small ops (the Kalman filter of docs/guide/loops.md: 9
products forward and 18 backward per step) pays it every time. This kernel makes the
BLAS call NumPy's matmul loop makes for the same operands (?gemm for two matrices, ?gemv
for a matrix and a vector, ?dot for two vectors; C- or F-ordered operands through the
transpose flags, as NumPy's row-major cblas call does), so the result is the same, bit
for bit, with the same OpenBLAS (tests/_kernels/test_small_ops.py checks every layout
against np.matmul). Anything else — other dtypes, batches, strided matrices, empty
operands, the product of a matrix with its own transpose (NumPy calls ?syrk there) —
returns None and the caller uses np.matmul. The twin (small_ops_twin.py) is
np.matmul itself.

Callers: tape.pyx's compiled pullback of matmul (VJP_MATMUL) and tf.compile's replay of
matmul (tenferro/_ops/structure.py).

``add``/``subtract``: a + b and a − b for C-contiguous, aligned, native float64/float32
arrays of one shape and dtype with at most 1024 entries, one IEEE operation per entry
as NumPy's loop does (the same bits); None otherwise. tf.compile's replay of the
elementwise add and subtract takes them (tenferro/_ops/pointwise.py).
"""
cimport numpy as cnp
cimport scipy.linalg.cython_blas as bl

from tenferro._kernels._blas cimport xgemm_ab

cnp.import_array()

from numpy import ndarray

ctypedef fused real_t:
    float
    double


cdef inline bint _layout(cnp.ndarray x, int* trans, int* ld):
    """A 2-D ``x`` as BLAS sees it: C-ordered (trans 0, ld = columns) or F-ordered (trans
    1, ld = rows); False for any other strides."""
    cdef cnp.npy_intp r = cnp.PyArray_DIM(x, 0), c = cnp.PyArray_DIM(x, 1)
    cdef cnp.npy_intp s0 = cnp.PyArray_STRIDE(x, 0), s1 = cnp.PyArray_STRIDE(x, 1)
    cdef cnp.npy_intp sz = cnp.PyArray_ITEMSIZE(x)
    if s1 == sz and s0 == c * sz:
        trans[0] = 0
        ld[0] = <int>c
        return True
    if s0 == sz and s1 == r * sz:
        trans[0] = 1
        ld[0] = <int>r
        return True
    return False


cdef inline bint _vector(cnp.ndarray v, int* inc):
    cdef cnp.npy_intp s = cnp.PyArray_STRIDE(v, 0), sz = cnp.PyArray_ITEMSIZE(v)
    if s <= 0 or s % sz:
        return False
    inc[0] = <int>(s // sz)
    return True


cdef inline void _gemv(char* trans, int m, int n, real_t* a, int lda, real_t* x, int incx,
                       real_t* y) noexcept nogil:
    """y := op(a) x (alpha 1, beta 0, incy 1)."""
    cdef real_t one = 1, zero = 0
    cdef int incy = 1
    if real_t is float:
        bl.sgemv(trans, &m, &n, &one, a, &lda, x, &incx, &zero, y, &incy)
    else:
        bl.dgemv(trans, &m, &n, &one, a, &lda, x, &incx, &zero, y, &incy)


cdef inline real_t _dot(int n, real_t* x, int incx, real_t* y, int incy) noexcept nogil:
    if real_t is float:
        return bl.sdot(&n, x, &incx, y, &incy)
    else:
        return bl.ddot(&n, x, &incx, y, &incy)


cdef object _matmul_typed(cnp.ndarray A, cnp.ndarray B, int typ, real_t* tag):
    """matmul for one real type (``tag`` only selects it); None when not covered."""
    cdef int na = cnp.PyArray_NDIM(A), nb = cnp.PyArray_NDIM(B)
    cdef int ta = 0, tb = 0, lda = 0, ldb = 0, inca = 0, incb = 0, m, n, k
    cdef char* tr = b"NT"
    cdef cnp.npy_intp dims[2]
    cdef cnp.ndarray C
    cdef real_t* pa = <real_t*>cnp.PyArray_DATA(A)
    cdef real_t* pb = <real_t*>cnp.PyArray_DATA(B)
    if na == 2 and nb == 2:
        m = <int>cnp.PyArray_DIM(A, 0)
        k = <int>cnp.PyArray_DIM(A, 1)
        n = <int>cnp.PyArray_DIM(B, 1)
        if cnp.PyArray_DIM(B, 0) != k or not _layout(A, &ta, &lda) or not _layout(B, &tb, &ldb):
            return None
        if pa == pb:
            return None      # a product with itself: NumPy may take ?syrk
        dims[0] = m
        dims[1] = n
        C = cnp.PyArray_SimpleNew(2, dims, typ)
        # row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: the operands swap
        xgemm_ab(&tr[tb], &tr[ta], n, m, k, <real_t>1, pb, ldb, pa, lda, <real_t>0,
                 <real_t*>cnp.PyArray_DATA(C), n)
        return C
    if na == 2:                                   # (m, k) @ (k,)
        m = <int>cnp.PyArray_DIM(A, 0)
        k = <int>cnp.PyArray_DIM(A, 1)
        if cnp.PyArray_DIM(B, 0) != k or not _layout(A, &ta, &lda) or not _vector(B, &incb):
            return None
        dims[0] = m
        C = cnp.PyArray_SimpleNew(1, dims, typ)
        # C-ordered A is column-major Aᵀ (k x m): y = (Aᵀ)ᵀ x; F-ordered A is A (m x k)
        if ta == 0:
            _gemv(&tr[1], k, m, pa, lda, pb, incb, <real_t*>cnp.PyArray_DATA(C))
        else:
            _gemv(&tr[0], m, k, pa, lda, pb, incb, <real_t*>cnp.PyArray_DATA(C))
        return C
    if nb == 2:                                   # (k,) @ (k, n) = Bᵀ a
        k = <int>cnp.PyArray_DIM(B, 0)
        n = <int>cnp.PyArray_DIM(B, 1)
        if cnp.PyArray_DIM(A, 0) != k or not _layout(B, &tb, &ldb) or not _vector(A, &inca):
            return None
        dims[0] = n
        C = cnp.PyArray_SimpleNew(1, dims, typ)
        # C-ordered B is column-major Bᵀ (n x k): y = Bᵀ a; F-ordered B is B (k x n)
        if tb == 0:
            _gemv(&tr[0], n, k, pb, ldb, pa, inca, <real_t*>cnp.PyArray_DATA(C))
        else:
            _gemv(&tr[1], k, n, pb, ldb, pa, inca, <real_t*>cnp.PyArray_DATA(C))
        return C
    k = <int>cnp.PyArray_DIM(A, 0)                # (k,) @ (k,): a 0-d result
    if cnp.PyArray_DIM(B, 0) != k or not _vector(A, &inca) or not _vector(B, &incb):
        return None
    C = cnp.PyArray_SimpleNew(0, dims, typ)
    (<real_t*>cnp.PyArray_DATA(C))[0] = _dot(k, pa, inca, pb, incb)
    return C


cpdef object matmul(object a, object b):
    """``np.matmul(a, b)`` for real float64/float32 operands of 1 or 2 dimensions, every
    side at most 2**31 - 1, by the BLAS call NumPy makes; None when not covered."""
    cdef cnp.ndarray A, B
    cdef int typ, i
    if type(a) is not ndarray or type(b) is not ndarray:
        return None
    A = <cnp.ndarray>a
    B = <cnp.ndarray>b
    typ = cnp.PyArray_TYPE(A)
    if (typ != cnp.NPY_DOUBLE and typ != cnp.NPY_FLOAT) or cnp.PyArray_TYPE(B) != typ:
        return None
    if not (cnp.PyArray_ISALIGNED(A) and cnp.PyArray_ISALIGNED(B)):
        return None
    if not (cnp.PyArray_ISNOTSWAPPED(A) and cnp.PyArray_ISNOTSWAPPED(B)):
        return None
    if not (1 <= cnp.PyArray_NDIM(A) <= 2 and 1 <= cnp.PyArray_NDIM(B) <= 2):
        return None
    for i in range(cnp.PyArray_NDIM(A)):
        if cnp.PyArray_DIM(A, i) == 0 or cnp.PyArray_DIM(A, i) > 2147483647:
            return None
    for i in range(cnp.PyArray_NDIM(B)):
        if cnp.PyArray_DIM(B, i) == 0 or cnp.PyArray_DIM(B, i) > 2147483647:
            return None
    if typ == cnp.NPY_DOUBLE:
        return _matmul_typed(A, B, typ, <double*>NULL)
    return _matmul_typed(A, B, typ, <float*>NULL)


# ---- a + b, a − b -------------------------------------------------------------------------

cdef Py_ssize_t _ELEMENTWISE_MAX = 1024


cdef bint same_small(object a, object b):
    """Whether a and b are C-contiguous, aligned, native float64/float32 arrays of one
    shape and dtype with at most 1024 entries (what the loops below cover)."""
    cdef cnp.ndarray A, B
    cdef int typ
    if type(a) is not ndarray or type(b) is not ndarray:
        return False
    A = <cnp.ndarray>a
    B = <cnp.ndarray>b
    typ = cnp.PyArray_TYPE(A)
    return ((typ == cnp.NPY_DOUBLE or typ == cnp.NPY_FLOAT) and cnp.PyArray_TYPE(B) == typ
            and cnp.PyArray_SIZE(A) <= _ELEMENTWISE_MAX and cnp.PyArray_SAMESHAPE(A, B)
            and cnp.PyArray_ISCARRAY_RO(A) and cnp.PyArray_ISCARRAY_RO(B)
            and cnp.PyArray_ISNOTSWAPPED(A) and cnp.PyArray_ISNOTSWAPPED(B))


cdef inline void _loop(real_t* r, real_t* p, real_t* q, Py_ssize_t n, bint minus) noexcept nogil:
    cdef Py_ssize_t i
    if minus:
        for i in range(n):
            r[i] = p[i] - q[i]
    else:
        for i in range(n):
            r[i] = p[i] + q[i]


cdef void elementwise_into(cnp.ndarray out, cnp.ndarray a, cnp.ndarray b, bint minus):
    """out = a ± b for arrays that ``same_small`` accepted (out: of their shape and dtype;
    it may be ``a``)."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    if cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE:
        _loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(a),
              <double*>cnp.PyArray_DATA(b), n, minus)
    else:
        _loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(a),
              <float*>cnp.PyArray_DATA(b), n, minus)


cdef object _elementwise(object a, object b, bint minus):
    cdef cnp.ndarray A = <cnp.ndarray>a
    C = cnp.PyArray_SimpleNew(cnp.PyArray_NDIM(A), cnp.PyArray_DIMS(A), cnp.PyArray_TYPE(A))
    elementwise_into(C, A, <cnp.ndarray>b, minus)
    return C


cdef inline bint _small_real(object a):
    """A C-contiguous, aligned, native float64/float32 array of at most 1024 entries."""
    cdef cnp.ndarray A
    cdef int typ
    if type(a) is not ndarray:
        return False
    A = <cnp.ndarray>a
    typ = cnp.PyArray_TYPE(A)
    return ((typ == cnp.NPY_DOUBLE or typ == cnp.NPY_FLOAT)
            and cnp.PyArray_SIZE(A) <= _ELEMENTWISE_MAX and cnp.PyArray_ISCARRAY_RO(A)
            and cnp.PyArray_ISNOTSWAPPED(A))


cdef inline void _scale_loop(real_t* r, real_t* p, real_t s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        r[i] = p[i] * s


cdef object negative_small(object g):
    """−g for a small real array (a sign flip: the same bits as NumPy's); None otherwise."""
    return scaled_small(g, None, True)


cdef object scaled_small(object g, object c, bint negate):
    """g·c for a small real array g and a 0-d array c of its dtype (one IEEE product per
    entry, as NumPy's loop), or −g with ``negate``; None when not covered."""
    cdef cnp.ndarray G, C, out
    cdef int typ
    cdef Py_ssize_t i, n
    cdef double* pd
    cdef double* rd
    cdef float* pf
    cdef float* rf
    if not _small_real(g):
        return None
    G = <cnp.ndarray>g
    typ = cnp.PyArray_TYPE(G)
    if not negate:
        if type(c) is not ndarray:
            return None
        C = <cnp.ndarray>c
        if cnp.PyArray_NDIM(C) != 0 or cnp.PyArray_TYPE(C) != typ or not cnp.PyArray_ISALIGNED(C):
            return None
    n = cnp.PyArray_SIZE(G)
    out = cnp.PyArray_SimpleNew(cnp.PyArray_NDIM(G), cnp.PyArray_DIMS(G), typ)
    if typ == cnp.NPY_DOUBLE:
        pd = <double*>cnp.PyArray_DATA(G)
        rd = <double*>cnp.PyArray_DATA(out)
        if negate:
            for i in range(n):
                rd[i] = -pd[i]
        else:
            _scale_loop(rd, pd, (<double*>cnp.PyArray_DATA(C))[0], n)
    else:
        pf = <float*>cnp.PyArray_DATA(G)
        rf = <float*>cnp.PyArray_DATA(out)
        if negate:
            for i in range(n):
                rf[i] = -pf[i]
        else:
            _scale_loop(rf, pf, (<float*>cnp.PyArray_DATA(C))[0], n)
    return out


def negative(g):
    """−g for a small real array (tests); None otherwise."""
    return negative_small(g)


def scaled(g, c):
    """g·c for a small real array and a 0-d array of its dtype (tests); None otherwise."""
    return scaled_small(g, c, False)


cpdef object add(object a, object b):
    """``a + b`` for small contiguous real arrays of one shape and dtype; None otherwise."""
    if not same_small(a, b):
        return None
    return _elementwise(a, b, False)


cpdef object subtract(object a, object b):
    """``a - b`` for small contiguous real arrays of one shape and dtype; None otherwise."""
    if not same_small(a, b):
        return None
    return _elementwise(a, b, True)
