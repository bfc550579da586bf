# cython: language_level=3
"""The test that lets a kernel's entry point take one matrix without the stack path.

cimported by the LAPACK driver modules (lapack_eig.pyx, lapack_qr.pyx,
lapack_lu_chol.pyx) and triangular_backprop.pyx (all use NumPy's C API and call
``cnp.import_array()``): a 2-D operand skips the stack's views, thread plan and buffer
requests, most of a small matrix's call (docs/guide/kernels.md).
"""
cimport numpy as cnp


cdef inline int matrix2_code(object a) noexcept:
    """0..3 (float, double, cfloat, cdouble) for a non-empty 2-D ndarray of a LAPACK
    dtype, native-order, aligned, with strides that are multiples of its item size,
    else -1."""
    cdef cnp.ndarray arr
    cdef int typ
    cdef Py_ssize_t isz
    if type(a) is not cnp.ndarray:
        return -1
    arr = <cnp.ndarray>a
    if (cnp.PyArray_NDIM(arr) != 2 or not cnp.PyArray_ISALIGNED(arr)
            or not cnp.PyArray_ISNOTSWAPPED(arr)
            or cnp.PyArray_DIMS(arr)[0] == 0 or cnp.PyArray_DIMS(arr)[1] == 0):
        return -1
    isz = cnp.PyArray_ITEMSIZE(arr)
    if cnp.PyArray_STRIDES(arr)[0] % isz or cnp.PyArray_STRIDES(arr)[1] % isz:
        return -1
    typ = cnp.PyArray_TYPE(arr)
    if typ == cnp.NPY_DOUBLE:
        return 1
    if typ == cnp.NPY_FLOAT:
        return 0
    if typ == cnp.NPY_CDOUBLE:
        return 3
    if typ == cnp.NPY_CFLOAT:
        return 2
    return -1
