# cython: language_level=3
cpdef object matmul(object a, object b)
