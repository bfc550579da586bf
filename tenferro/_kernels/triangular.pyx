# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""The fused backprop of ``solve_triangular``: G and Ā = P(−op⁻¹(M̄)) in one batched call.

RULES.md "solve_triangular", M = op(A) (op = identity, ᵀ, ᴴ for trans 0, 1, 2), P the
projection on the triangle the solve reads (diagonal zeroed for unit_diagonal):

    left  X = M⁻¹B:  G = M⁻ᴴX̄,  B̄ = G,  Ā = P(op⁻¹(−GXᴴ))
    right X = BM⁻¹:  G = X̄M⁻ᴴ,  B̄ = G,  Ā = P(op⁻¹(−XᴴG))

One ?trsm per matrix gives G, and ?gemm computes only (a block-column cover of) the kept
triangle of Ā, with the GIL released over the whole batch. All four LAPACK dtypes.

Layout. A C-ordered r x c matrix is the Fortran c x r matrix of its transpose, so every
operand is used in place (no transposing copies):
  a    Fortran T = Aᵀ, its triangle flipped.
  G    G's memory is the Fortran Gᵀ. With M' = Mᴴ, left M'G = X̄ is Gᵀ M'ᵀ = X̄ᵀ, a
       right-side ?trsm; right GM' = X̄ is M'ᵀGᵀ = X̄ᵀ, a left-side one. M'ᵀ is
       conj(A) = Tᴴ ('C') for trans 0, A = T ('N') for trans 2, and for trans 1 conj(T),
       no BLAS op: conj(T)⁻¹y = conj(T⁻¹ conj(y)), so G is conjugated before and after.
  Ā    written as its Fortran transpose F = Āᵀ. With (P, Q) = (X, G) or (G, X):
       left  F = −Pᴴ Q    (P, Q the Fortran k x n matrices Xᵀ, Gᵀ): gemm('C', 'N')
       right F = −P Qᴴ    (P, Q the Fortran n x k matrices Xᵀ, Gᵀ): gemm('N', 'C')
       left: (X, G) for trans 0 (Āᵀ = −conj(X)Gᵀ), (G, X) for trans 2 (Āᵀ = −conj(G)Xᵀ);
       right: (G, X) for trans 0 (Āᵀ = −Gᵀconj(X)), (X, G) for trans 2 (Āᵀ = −Xᵀconj(G)).
       trans 1 is trans 2 conjugated (the same for real types).
       Ā lower (kept entries j <= i) is F's upper triangle: for each block of NB columns
       [c0, c1) of F, one gemm over rows [0, c1) (lower) or [c0, n) (upper) computes it
       with about n²k/2 + NB·nk/2 multiply-adds; the rest of Ā is then zeroed.

The NumPy twin is ``solve_triangular_backprop`` in ``_reference.py``;
``tests/_kernels/test_triangular_kernel.py`` checks that both agree.
"""
cimport cython
from libc.string cimport memcpy, memset

from tenferro._kernels._blas cimport blas_int, cfloat, cdouble, lapack_t, xgemm, xtrsm

import numpy as np

from tenferro._kernels import _reference as _ref

__all__ = ["solve_triangular_backprop"]

# Column block of the triangle-restricted gemm. Measured (asv_bench/benchmarks/
# bench_triangular.py): blocks of 32-64 columns run at full gemm speed while the wasted
# half of the diagonal blocks stays small; n <= NB is one gemm of the whole matrix.
cdef Py_ssize_t NB = 48


def _set_block(Py_ssize_t nb):
    """Set the column block of the triangle gemm (benchmarks and tests only)."""
    global NB
    NB = nb if nb > 0 else 1

cdef str _CHARS = "fdFD"


cdef inline void _conj(lapack_t* x, Py_ssize_t count) noexcept nogil:
    cdef Py_ssize_t i
    if lapack_t is cfloat or lapack_t is cdouble:
        for i in range(count):
            x[i] = x[i].conjugate()


cdef void _backprop(const lapack_t[:, :, :] a, const lapack_t[:, :, :] x,
                    const lapack_t[:, :, :] gx, lapack_t[:, :, ::1] g,
                    lapack_t[:, :, ::1] ga, bint lower, int trans, bint unit, bint left,
                    bint need_a) noexcept:
    # a, x: each matrix C-ordered (the wrapper made sure); batch strides may be 0.
    # gx: any element strides. g: (nb, rows, cols) like x; ga: (nb, n, n) or unused.
    cdef Py_ssize_t nb = g.shape[0], rows = g.shape[1], cols = g.shape[2]
    cdef Py_ssize_t n = a.shape[1], k = cols if left else rows
    cdef Py_ssize_t isz = sizeof(lapack_t)
    cdef Py_ssize_t s0 = gx.strides[1] // isz, s1 = gx.strides[2] // isz
    cdef Py_ssize_t b, i, j, c0, c1, r0, r1, nbk = NB
    cdef blas_int N = <blas_int>n, K = <blas_int>k
    cdef char side = b'R' if left else b'L'
    cdef char uplo = b'U' if lower else b'L'       # the triangle of T = Aᵀ
    cdef char dg = b'U' if unit else b'N'
    cdef char tr
    cdef char cc = b'C', nn = b'N'
    cdef bint cplx = lapack_t is cfloat or lapack_t is cdouble
    cdef bint conj_g = cplx and trans == 1
    cdef bint swap = (trans != 0) == left          # (P, Q) = (G, X) instead of (X, G)
    cdef lapack_t* ap
    cdef lapack_t* xp
    cdef lapack_t* gp
    cdef lapack_t* fp
    cdef lapack_t* pp
    cdef lapack_t* qp
    cdef const lapack_t* src
    tr = b'C' if trans == 0 else b'N'
    with nogil:
        for b in range(nb):
            ap = <lapack_t*>&a[b, 0, 0]
            xp = <lapack_t*>&x[b, 0, 0]
            gp = &g[b, 0, 0]
            src = &gx[b, 0, 0]
            if s1 == 1 and s0 == cols:
                memcpy(gp, src, rows * cols * isz)
            else:
                for i in range(rows):
                    for j in range(cols):
                        gp[i * cols + j] = src[i * s0 + j * s1]
            if conj_g:
                _conj(gp, rows * cols)
            if left:     # Gᵀ M'ᵀ = X̄ᵀ, Gᵀ Fortran k x n
                xtrsm(&side, &uplo, &tr, &dg, &K, &N, ap, &N, gp, &K)
            else:        # M'ᵀ Gᵀ = X̄ᵀ, Gᵀ Fortran n x k
                xtrsm(&side, &uplo, &tr, &dg, &N, &K, ap, &N, gp, &N)
            if conj_g:
                _conj(gp, rows * cols)
            if not need_a:
                continue
            fp = &ga[b, 0, 0]
            if swap:
                pp, qp = gp, xp
            else:
                pp, qp = xp, gp
            c0 = 0
            while c0 < n:
                c1 = c0 + nbk if c0 + nbk < n else n
                if lower:
                    r0, r1 = 0, c1
                else:
                    r0, r1 = c0, n
                # F[r0:r1, c0:c1] = −op(P)[r0:r1, :] op(Q)[:, c0:c1]
                if left:
                    xgemm(&cc, &nn, <blas_int>(r1 - r0), <blas_int>(c1 - c0), K,
                          pp + r0 * k, K, qp + c0 * k, K, fp + c0 * n + r0, N)
                else:
                    xgemm(&nn, &cc, <blas_int>(r1 - r0), <blas_int>(c1 - c0), K,
                          pp + r0, N, qp + c0, N, fp + c0 * n + r0, N)
                c0 = c1
            # zero what P drops (C-ordered row i of Ā is F's column i), conjugate the
            # kept part for trans 1
            for i in range(n):
                if lower:
                    j = i if unit else i + 1
                    memset(fp + i * n + j, 0, (n - j) * isz)
                    if conj_g:
                        _conj(fp + i * n, j)
                else:
                    j = i + 1 if unit else i
                    memset(fp + i * n, 0, j * isz)
                    if conj_g:
                        _conj(fp + i * n + j, n - j)


cdef inline object _c_inner(object m):
    """m with each matrix C-ordered (a copy only when it is not)."""
    cdef tuple st = m.strides
    cdef Py_ssize_t isz = m.itemsize
    if m.shape[m.ndim - 1] > 1 and st[m.ndim - 1] != isz:
        return np.ascontiguousarray(m)
    if m.shape[m.ndim - 2] > 1 and st[m.ndim - 2] != isz * m.shape[m.ndim - 1]:
        return np.ascontiguousarray(m)
    return m


# np.newaxis as an opaque object (Cython would compile ``m[None]`` with an integer fast
# path that the C compiler warns about)
cdef object _NEWAXIS = None


cdef inline object _flat3(object m, tuple batch, Py_ssize_t nb):
    """m broadcast to (*batch, r, c) and viewed (nb, r, c) (m[None] and m itself are
    cheaper than reshape in the common 2-D and 3-D cases)."""
    cdef tuple shape = m.shape
    cdef Py_ssize_t nd = len(shape)
    if shape[:nd - 2] != batch:
        m = np.broadcast_to(m, batch + shape[nd - 2:])
    nd = len(batch)
    if nd == 0:
        return m[_NEWAXIS]
    if nd == 1:
        return m
    return m.reshape((nb,) + shape[len(shape) - 2:])


cdef inline object _unflat(object m, tuple batch):
    cdef Py_ssize_t nd = len(batch)
    if nd == 0:
        return m[0]
    if nd == 1:
        return m
    return m.reshape(batch + m.shape[1:])


@cython.wraparound(True)
def solve_triangular_backprop(a, x, gx, lower, trans, unit_diagonal, left, need_a=True,
                              need_b=True):
    """(Ā, B̄) of X = op(a)⁻¹B (``left``) or B op(a)⁻¹, given X and its cotangent X̄ (gx),
    ndarrays: a (*batch, n, n), x and gx (*batch, n, k) (left) or (*batch, k, n) (right),
    batches broadcasting. Ā has the full broadcast batch (the caller unbroadcasts) and
    is None unless ``need_a``; B̄ is None unless ``need_b``. trans 0, 1, 2; the result
    dtype is the common one. Empty operands go to the NumPy twin, and so do
    other dtypes than the four LAPACK ones (which it rejects with DTypeError)."""
    dt = x.dtype
    if a.dtype != dt or gx.dtype != dt:
        dt = np.result_type(a.dtype, x.dtype, gx.dtype)
        a, x, gx = a.astype(dt, copy=False), x.astype(dt, copy=False), gx.astype(dt, copy=False)
    cdef Py_ssize_t code = _CHARS.find(dt.char)
    cdef Py_ssize_t nb = 1
    if code < 0 or a.size == 0 or x.size == 0:
        return _ref.solve_triangular_backprop(a, x, gx, lower, trans, unit_diagonal, left,
                                              need_a, need_b)
    cdef tuple batch = x.shape[:-2]
    if a.ndim != x.ndim or a.shape[:-2] != batch or gx.shape[:-2] != batch:
        batch = np.broadcast_shapes(a.shape[:-2], batch, gx.shape[:-2])
    for d in batch:
        nb *= <Py_ssize_t>d
    cdef bint lo = lower, un = unit_diagonal, le = left, na = need_a
    cdef int t = trans
    a3 = _flat3(_c_inner(a), batch, nb)
    x3 = _flat3(_c_inner(x), batch, nb)
    gx3 = _flat3(gx, batch, nb)
    n = a.shape[-1]
    g = np.empty((nb,) + x.shape[-2:], dt)
    ga = np.empty((nb, n, n) if need_a else (1, 1, 1), dt)
    if code == 0:
        _backprop[float](a3, x3, gx3, g, ga, lo, t, un, le, na)
    elif code == 1:
        _backprop[double](a3, x3, gx3, g, ga, lo, t, un, le, na)
    elif code == 2:
        _backprop[cfloat](a3, x3, gx3, g, ga, lo, t, un, le, na)
    else:
        _backprop[cdouble](a3, x3, gx3, g, ga, lo, t, un, le, na)
    return (_unflat(ga, batch) if need_a else None), (_unflat(g, batch) if need_b else None)
