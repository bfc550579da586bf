# cython: language_level=3
cpdef object matmul(object a, object b)
cpdef object add(object a, object b)
cpdef object subtract(object a, object b)
