# cython: language_level=3
cimport numpy as cnp

cpdef object matmul(object a, object b)
cpdef object add(object a, object b)
cpdef object subtract(object a, object b)
cdef bint same_small(object a, object b)
cdef object negative_small(object g)
cdef object scaled_small(object g, object c, bint negate)
cdef void elementwise_into(cnp.ndarray out, cnp.ndarray a, cnp.ndarray b, bint minus)
