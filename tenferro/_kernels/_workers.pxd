# cython: language_level=3
"""Native worker threads for the batched kernels (tenferro/_kernels/_workers.pyx).

A kernel that splits a stack describes one call of its GIL-free loop as a ``chunk_fn``
over a range [b0, b1) of the batch, with its operands in a struct of its own behind
``ctx``; ``run_chunks`` runs it over the whole batch on ``nthreads`` threads (the
calling one and nthreads - 1 workers) and returns what the serial loop would.
"""
from libc.stdlib cimport free, malloc

from tenferro._kernels._blas cimport blas_int

# Run the batch positions [b0, b1) (in order; stop at the first failure) and return OK
# (-1), a failure code < -1, or the failing position (>= 0, in the whole batch) with
# LAPACK's info in *info. ``on_caller`` is 1 on the thread that called run_chunks (which
# may use a workspace the kernel set up for it) and 0 on a worker thread.
ctypedef Py_ssize_t (*chunk_fn)(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                                blas_int* info) noexcept nogil

cdef Py_ssize_t run_chunks(chunk_fn fn, void* ctx, Py_ssize_t nb, int nthreads,
                           blas_int* info) noexcept nogil

# Large work buffers (at least SPARE_MIN bytes) kept between calls: spare_take gives a
# buffer (NULL when out of memory), spare_keep takes it back (never free() it). Fresh
# large mallocs page-fault on every call once glibc has trimmed the heap.
cdef enum:
    SPARE_MIN = 65536

cdef void* spare_take(size_t nbytes) noexcept nogil
cdef void spare_keep(void* buf) noexcept nogil


cdef inline void* work_take(size_t nbytes) noexcept nogil:
    """A work buffer: a spare block when large, else malloc'ed (NULL: out of memory)."""
    return spare_take(nbytes) if nbytes >= SPARE_MIN else malloc(nbytes if nbytes else 1)


cdef inline void work_give(void* buf, size_t nbytes) noexcept nogil:
    """Give back a buffer of work_take(nbytes) (NULL is ignored)."""
    if buf == NULL:
        return
    if nbytes >= SPARE_MIN:
        spare_keep(buf)
    else:
        free(buf)
