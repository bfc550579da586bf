# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""The backprops of the triangular factorizations and solves: the fused backprops of
``solve_triangular``, ``qr``, ``cholesky`` and ``lu`` (one batched call each, GIL
released), and the recursive batched ?trsm they are built on, which is also the forward
solve of ``solve_triangular`` and of ``solve`` with many right-hand sides.

  trsm                       op(a)⁻¹b or b op(a)⁻¹ by recursive halving: the flops go to
                             ?gemm, several times faster per flop than OpenBLAS's ?trsm
                             (docs/guide/kernels.md, "Kernel constants")
  qr_backprop                Ā of A = QR (m >= n), see its section below
  cholesky_backprop          Ā of A = LLᴴ, by the blocked reverse-mode algorithm below
  lu_backprop                Ā of A = PLU (square), blocked reverse mode as well
  solve_triangular_backprop  G and Ā = P(−op⁻¹(M̄)), described next

docs/rules.md#solve_triangular, M = op(A) (op = identity, ᵀ, ᴴ for trans 0, 1, 2), P the
projection on the triangle the solve reads (diagonal zeroed for unit_diagonal):

    left  X = M⁻¹B:  G = M⁻ᴴX̄,  B̄ = G,  Ā = P(op⁻¹(−GXᴴ))
    right X = BM⁻¹:  G = X̄M⁻ᴴ,  B̄ = G,  Ā = P(op⁻¹(−XᴴG))

One (recursive) solve per matrix gives G, and ?gemm computes only (a block-column cover
of) the kept triangle of Ā, with the GIL released over the whole batch. All four LAPACK
dtypes.

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
       Ā lower (kept entries j <= i) is F's upper triangle: halving F's diagonal blocks
       recursively (F₁₁, F₁₂, F₂₂ for the upper one) computes it with ~n²k/2 + NB·nk/2
       multiply-adds, mostly in large gemms; the rest of Ā is then zeroed.

The NumPy twins (same names) are in ``triangular_backprop_twin.py``;
``tests/_kernels/test_triangular_backprop_solve.py`` (solve_triangular_backprop) and
``tests/_kernels/test_triangular_backprop.py`` (the others) check that both agree.
"""
cimport cython
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_STRIDES


from tenferro._kernels._single cimport matrix2_code
from tenferro._kernels._small cimport SMALL_MAX, SMALL_N, rm_gemm, s_hemm, s_trmm, s_trsm
from tenferro._kernels._workers cimport chunk_fn, run_chunks, work_give, work_take
from tenferro._kernels._xlapack cimport xtrtri
from tenferro._kernels.lapack_base cimport _unflat, _where

from tenferro._kernels._blas cimport (blas_int, cfloat, cdouble, lapack_t, xgemm, xgemm_ab,
                                     xhemm, xtrmm, xtrsm, xtrsv)

import numpy as np
cimport numpy as cnp

from tenferro._errors import LinAlgError
from tenferro._kernels import triangular_backprop_twin as _ref
from tenferro import _threads

cnp.import_array()

__all__ = ["solve_triangular_backprop", "trsm", "qr_backprop", "cholesky_backprop",
           "lu_backprop"]

# ---------------------------------------------------------------------------------------
# Recursive triangular solve
# ---------------------------------------------------------------------------------------
# OpenBLAS's ?trsm runs at about a third of ?gemm's speed per flop. Splitting the
# triangle in halves, op(A) = [[O₁₁, 0], [O₂₁, O₂₂]] (or its upper mirror), turns one
# solve into two half-size solves and one ?gemm update, e.g. for side 'L', op(A) lower:
#     O₁₁X₁ = B₁,  B₂ −= O₂₁X₁,  O₂₂X₂ = B₂
# so that recursing down to small blocks puts all but ~LEAF_NB/n of the flops into
# ?gemm. The off-diagonal block O₂₁ (or O₁₂) is the stored off-diagonal block of A
# (A₂₁ for uplo 'L', A₁₂ for 'U') under the same op as the whole solve.

# Up to this triangle size ?trsm itself is called; larger ones recurse down to leaves of
# at most LEAF_NB, each solved by _leaf. Measured (f64/c128, one thread, n = 16...256):
# recursing pays from n ~ 24 (right-hand solves) / 48 (left); 16 keeps n <= 16 as before.
cdef blas_int SOLVE_NB = 16


# Largest leaf that is solved through its explicit inverse (the inverse lives on the
# stack: 16 KB for complex128).
cdef enum:
    LEAF_MAX = 32
    OK = -1             # run_chunks' "no failure" (lapack_base.pxd's codes)
    NO_MEMORY = -4


# The batch loops of the qr, lu and cholesky pullbacks for run_chunks: each is one fused
# function ``_X_rows_w(w, job, b0, b1)`` over [b0, b1) with its n x n workspace ``w``, its
# four specializations listed once in a _BpRows table, and _rows_in_work the one chunk_fn
# body (the workspace, then the dispatch on the dtype code).
ctypedef void (*_bp_s)(float* w, void* job, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil
ctypedef void (*_bp_d)(double* w, void* job, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil
ctypedef void (*_bp_c)(cfloat* w, void* job, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil
ctypedef void (*_bp_z)(cdouble* w, void* job, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil


cdef struct _BpRows:
    _bp_s s
    _bp_d d
    _bp_c c
    _bp_z z


cdef Py_ssize_t _rows_in_work(const _BpRows* rows, int code, char* work, size_t size,
                              void* job, Py_ssize_t b0, Py_ssize_t b1,
                              bint on_caller) noexcept nogil:
    """The rows [b0, b1) of ``job`` by the loop of dtype code ``code`` (0..3: float,
    double, cfloat, cdouble), in the calling thread's ``work`` (``on_caller``) or, on a
    worker, in a buffer of ``size`` bytes of its own: OK or NO_MEMORY."""
    cdef char* w = work if on_caller else <char*>malloc(size)
    if w == NULL:
        return NO_MEMORY
    if code == 0:
        rows.s(<float*>w, job, b0, b1)
    elif code == 1:
        rows.d(<double*>w, job, b0, b1)
    elif code == 2:
        rows.c(<cfloat*>w, job, b0, b1)
    else:
        rows.z(<cdouble*>w, job, b0, b1)
    if not on_caller:
        free(w)
    return OK


cdef char* _data(object x) except NULL:
    """Data pointer of a non-empty ndarray (any strides); valid while x is held."""
    cdef Py_buffer view
    PyObject_GetBuffer(x, &view, PyBUF_STRIDES)
    cdef char* p = <char*>view.buf
    PyBuffer_Release(&view)
    return p


# Leaf size of the recursion (once it recurses), solved by _leaf: 8-24 measured alike
# at n = 64 and 256, 32 slower (docs/guide/kernels.md, "Kernel constants").
cdef blas_int LEAF_NB = 16


def _set_leaf_block(Py_ssize_t nb):
    """Set the leaf size of the recursive solve (benchmarks and tests only; at most
    32); returns the previous one."""
    global LEAF_NB
    old = LEAF_NB
    LEAF_NB = <blas_int>(min(max(nb, 1), LEAF_MAX))
    return old


def _set_solve_block(Py_ssize_t nb):
    """Set the base-case size of the recursive solve (benchmarks and tests only); returns
    the previous one."""
    global SOLVE_NB
    old = SOLVE_NB
    SOLVE_NB = <blas_int>(nb if nb > 0 else 1)
    return old


cdef void _leaf(char side, char uplo, char trans, char diag, blas_int m, blas_int n,
                lapack_t* a, blas_int lda, lapack_t* b, blas_int ldb) noexcept nogil:
    # A leaf of the recursion: ?trmm with the explicitly inverted k x k triangle (?trtri,
    # k³/3 flops), faster than a ?trsm of the same shape in OpenBLAS (which is slowest
    # for the short, wide right-hand sides that side 'L' leaves have). Inverting
    # a small diagonal block is what blocked GPU trsm implementations do; its error is
    # bounded by that block's condition number. A zero diagonal entry keeps ?trsm (inf/nan
    # like the reference).
    cdef lapack_t inv[LEAF_MAX * LEAF_MAX]
    cdef blas_int k = m if side == b'L' else n, j, info = 0
    cdef lapack_t one = 1
    if k > LEAF_MAX:
        xtrsm(&side, &uplo, &trans, &diag, &m, &n, a, &lda, b, &ldb)
        return
    for j in range(k):
        memcpy(&inv[j * k], &a[<Py_ssize_t>j * lda], k * sizeof(lapack_t))
    xtrtri(&uplo, &diag, &k, inv, &k, &info)
    if info != 0:
        xtrsm(&side, &uplo, &trans, &diag, &m, &n, a, &lda, b, &ldb)
        return
    xtrmm(&side, &uplo, &trans, &diag, m, n, one, inv, k, b, ldb)


cdef void rtrsm(char side, char uplo, char trans, char diag, blas_int m, blas_int n,
                lapack_t* a, blas_int lda, lapack_t* b, blas_int ldb) noexcept nogil:
    """?trsm with alpha = 1 (same arguments, Fortran layout), by recursive halving; a
    triangle of at most SOLVE_NB is one ?trsm call."""
    cdef blas_int k = m if side == b'L' else n
    if k <= SOLVE_NB or (m if side == b'R' else n) == 0:
        xtrsm(&side, &uplo, &trans, &diag, &m, &n, a, &lda, b, &ldb)
    else:
        _rtrsm(side, uplo, trans, diag, m, n, a, lda, b, ldb)


cdef void _rtrsm(char side, char uplo, char trans, char diag, blas_int m, blas_int n,
                 lapack_t* a, blas_int lda, lapack_t* b, blas_int ldb) noexcept nogil:
    cdef blas_int k = m if side == b'L' else n
    cdef blas_int k1, k2, kf, ko
    cdef lapack_t *a22, *aoff, *af, *ao, *b2, *bf, *bo
    cdef lapack_t one = 1, mone = -1
    cdef char nn = b'N'
    cdef bint op_lower = (uplo == b'L') == (trans == b'N'), first1
    if k <= LEAF_NB:
        _leaf(side, uplo, trans, diag, m, n, a, lda, b, ldb)
        return
    k1 = k // 2
    if k1 >= 32:
        k1 = (k1 + 8) // 16 * 16   # block edges on multiples of 16 keep gemm aligned
    k2 = k - k1
    a22 = a + k1 + <Py_ssize_t>k1 * lda
    aoff = a + k1 if uplo == b'L' else a + <Py_ssize_t>k1 * lda
    # X_f, the half solved first, then X_o (O = op(a), O_off its nonzero off-diagonal):
    #   left,  O lower: O₁₁X₁ = B₁, B₂ −= O₂₁X₁, O₂₂X₂ = B₂    (f = 1)
    #   left,  O upper: O₂₂X₂ = B₂, B₁ −= O₁₂X₂, O₁₁X₁ = B₁    (f = 2)
    #   right, O lower: X₂O₂₂ = B₂, B₁ −= X₂O₂₁, X₁O₁₁ = B₁    (f = 2)
    #   right, O upper: X₁O₁₁ = B₁, B₂ −= X₁O₁₂, X₂O₂₂ = B₂    (f = 1)
    first1 = (side == b'L') == op_lower
    b2 = b + k1 if side == b'L' else b + <Py_ssize_t>k1 * ldb
    bf = b if first1 else b2
    bo = b2 if first1 else b
    af = a if first1 else a22
    ao = a22 if first1 else a
    kf = k1 if first1 else k2
    ko = k2 if first1 else k1
    if side == b'L':
        _rtrsm(side, uplo, trans, diag, kf, n, af, lda, bf, ldb)
        xgemm_ab(&trans, &nn, ko, n, kf, mone, aoff, lda, bf, ldb, one, bo, ldb)
        _rtrsm(side, uplo, trans, diag, ko, n, ao, lda, bo, ldb)
    else:
        _rtrsm(side, uplo, trans, diag, m, kf, af, lda, bf, ldb)
        xgemm_ab(&nn, &trans, m, ko, kf, mone, bf, ldb, aoff, lda, one, bo, ldb)
        _rtrsm(side, uplo, trans, diag, m, ko, ao, lda, bo, ldb)


cdef struct _Op3:          # a (nb, rows, cols) operand: its data and element strides
    char* p
    Py_ssize_t s[3]


cdef int _op3(object arr, _Op3* op) except -1:
    """op := arr's data and element strides (arr: an ndarray with 3 dimensions whose
    strides are multiples of its item size, as _flat3 and np.empty give)."""
    cdef cnp.ndarray m = <cnp.ndarray>arr
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(m), i
    op.p = <char*>cnp.PyArray_DATA(m)
    for i in range(3):
        op.s[i] = cnp.PyArray_STRIDES(m)[i] // isz
    return 0


cdef int _one_matrix(object x, object like=None) noexcept:
    """matrix2_code (_single.pxd) for a square x (and, ``like`` given, of ``like``'s
    dtype and shape)."""
    cdef int code = matrix2_code(x)
    if code < 0 or cnp.PyArray_DIMS(<cnp.ndarray>x)[0] != cnp.PyArray_DIMS(<cnp.ndarray>x)[1]:
        return -1
    if like is not None and (
            cnp.PyArray_TYPE(<cnp.ndarray>like) != cnp.PyArray_TYPE(<cnp.ndarray>x) or
            cnp.PyArray_DIMS(<cnp.ndarray>like)[0] != cnp.PyArray_DIMS(<cnp.ndarray>x)[0]):
        return -1
    return code


cdef inline void _op2(cnp.ndarray m, _Op3* op) noexcept:
    """op := the 2-D m as a stack of one (batch stride 0)."""
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(m)
    op.p = <char*>cnp.PyArray_DATA(m)
    op.s[0] = 0
    op.s[1] = cnp.PyArray_STRIDES(m)[0] // isz
    op.s[2] = cnp.PyArray_STRIDES(m)[1] // isz


cdef inline void _gather(const lapack_t* src, Py_ssize_t s0, Py_ssize_t s1, lapack_t* dst,
                         Py_ssize_t rows, Py_ssize_t cols) noexcept nogil:
    """dst (rows x cols, C-ordered) := the matrix at src (element strides s0, s1): a
    memcpy when it is C-ordered already."""
    cdef Py_ssize_t i, j
    if s1 == 1 and s0 == cols:
        memcpy(dst, src, rows * cols * sizeof(lapack_t))
        return
    for i in range(rows):
        for j in range(cols):
            dst[i * cols + j] = src[i * s0 + j * s1]


cdef Py_ssize_t _trsm(const lapack_t* a0, _Op3* A, _Op3* R, lapack_t* x0, Py_ssize_t nb,
                      Py_ssize_t r, Py_ssize_t c, Py_ssize_t n, bint lower, int trans,
                      bint unit, bint left, bint check) noexcept nogil:
    # a (A: element strides, the first may be 0): each matrix C- or Fortran-ordered (the
    # wrapper made sure; a Fortran one not with complex trans 2). rhs (R): any strides.
    # x: the C-ordered (nb, r, c) output.
    # The C-ordered r x c output is the Fortran c x r matrix xᵀ: left op(a)x = b is
    # xᵀop(a)ᵀ = bᵀ (side 'R'), right x op(a) = b is op(a)ᵀxᵀ = bᵀ (side 'L'). A
    # C-ordered a is the Fortran T = aᵀ (triangle flipped): op(a)ᵀ = T, Tᵀ, Tᴴ for trans
    # 0, 1, 2; a Fortran one is a: op(a)ᵀ = aᵀ, a. One right-hand side (a contiguous
    # vector) goes to ?trsv. Returns -1, or the batch position of the first matrix with
    # an exactly zero diagonal entry when ``check`` (before solving it).
    cdef Py_ssize_t b, i, j, k = c if left else r
    cdef Py_ssize_t a1 = A.s[1], a2 = A.s[2]
    cdef Py_ssize_t s0 = R.s[1], s1 = R.s[2]
    cdef const lapack_t* rhs0 = <const lapack_t*>R.p
    cdef bint corder = (a2 == 1 and a1 == n) or n == 1
    cdef char side = b'R' if left else b'L'
    cdef char dg = b'U' if unit else b'N'
    cdef char uplo, tr, trv = 0
    cdef blas_int N = <blas_int>n, K = <blas_int>k
    cdef lapack_t* ap
    cdef lapack_t* xp
    cdef Py_ssize_t bad = -1
    if corder:
        uplo = b'U' if lower else b'L'
        tr = b'N' if trans == 0 else (b'T' if trans == 1 else b'C')
    else:
        uplo = b'L' if lower else b'U'
        tr = b'T' if trans == 0 else b'N'
    if k == 1:
        # trsv solves op'(F) v = w for the Fortran matrix F: left op(a)x = b needs
        # op(a) itself (F = aᵀ for C order: Tᵀ, T, -; F = a: a, aᵀ, aᴴ), right needs
        # op(a)ᵀ, the trsm op above
        if not left:
            trv = tr
        elif corder:   # conj(T) is no BLAS op: complex trans 2 takes ?trsm
            if trans == 0:
                trv = b'T'
            elif trans == 1 or not (lapack_t is cfloat or lapack_t is cdouble):
                trv = b'N'
        else:
            trv = b'N' if trans == 0 else (b'T' if trans == 1 else b'C')
    for b in range(nb):
        ap = <lapack_t*>(a0 + b * A.s[0])
        if check and not unit:
            for i in range(n):
                if ap[i * (a1 + a2)] == 0:
                    bad = b
                    break
            if bad >= 0:
                break
        xp = x0 + b * r * c
        _gather(rhs0 + b * R.s[0], s0, s1, xp, r, c)
        if trv:
            xtrsv(&uplo, &trv, &dg, &N, ap, &N, xp)
        elif left:
            rtrsm(side, uplo, tr, dg, K, N, ap, N, xp, K)
        else:
            rtrsm(side, uplo, tr, dg, N, K, ap, N, xp, N)
    return bad


cdef Py_ssize_t _swap(Py_ssize_t* knob, Py_ssize_t value) noexcept:
    """knob := value (the _set_* hooks of the tests and benchmarks); returns the old."""
    cdef Py_ssize_t old = knob[0]
    knob[0] = value
    return old


# Leaf size of the recursive triangle-restricted gemm of the backprops (measured at
# n = 64, 256: 16-64 within noise).
cdef Py_ssize_t NB = 48


def _set_block(Py_ssize_t nb):
    """Set the leaf block of the triangle-restricted gemm (benchmarks and tests only);
    returns the previous one."""
    return _swap(&NB, nb if nb > 0 else 1)


# Leaf size of the recursion over M's lower triangle in the QR backprop: 16 measured a
# little faster than 32-48 in float64 (the whole backprop, one thread, n = 64...512),
# complex alike (docs/guide/kernels.md, "Kernel constants").
cdef Py_ssize_t QR_NB = 16


def _set_qr_block(Py_ssize_t nb):
    """Set the leaf block of the QR backprop's M (benchmarks and tests only); returns
    the previous one."""
    return _swap(&QR_NB, nb if nb > 0 else 1)


cdef str _CHARS = "fdFD"


cdef inline void _conj(lapack_t* x, Py_ssize_t count) noexcept nogil:
    cdef Py_ssize_t i
    if lapack_t is cfloat or lapack_t is cdouble:
        for i in range(count):
            x[i] = x[i].conjugate()


cdef inline void _bp_block(bint left, lapack_t* pp, lapack_t* qp, lapack_t* fp,
                           Py_ssize_t n, Py_ssize_t k, Py_ssize_t r0, Py_ssize_t r1,
                           Py_ssize_t c0, Py_ssize_t c1) noexcept nogil:
    # F[r0:r1, c0:c1] = −op(P)[r0:r1, :] op(Q)[:, c0:c1]
    cdef char cc = b'C', nn = b'N'
    if left:
        xgemm(&cc, &nn, <blas_int>(r1 - r0), <blas_int>(c1 - c0), <blas_int>k,
              pp + r0 * k, <blas_int>k, qp + c0 * k, <blas_int>k, fp + c0 * n + r0,
              <blas_int>n)
    else:
        xgemm(&nn, &cc, <blas_int>(r1 - r0), <blas_int>(c1 - c0), <blas_int>k,
              pp + r0, <blas_int>n, qp + c0, <blas_int>n, fp + c0 * n + r0, <blas_int>n)


cdef void _bp_tri(bint lower, bint left, lapack_t* pp, lapack_t* qp, lapack_t* fp,
                  Py_ssize_t n, Py_ssize_t k, Py_ssize_t r0, Py_ssize_t s) noexcept nogil:
    # The kept triangle of F's diagonal block [r0, r0 + s)² (F's upper one for lower Ā)
    # by recursive halving, so that most of it is a few large gemms: the diagonal
    # blocks of at most NB are computed whole.
    cdef Py_ssize_t h
    if s <= NB:
        _bp_block(left, pp, qp, fp, n, k, r0, r0 + s, r0, r0 + s)
        return
    h = s // 2
    _bp_tri(lower, left, pp, qp, fp, n, k, r0, h)
    if lower:    # F upper: rows of the first half, columns of the second
        _bp_block(left, pp, qp, fp, n, k, r0, r0 + h, r0 + h, r0 + s)
    else:
        _bp_block(left, pp, qp, fp, n, k, r0 + h, r0 + s, r0, r0 + h)
    _bp_tri(lower, left, pp, qp, fp, n, k, r0 + h, s - h)


cdef void _backprop(const lapack_t* a0, _Op3* A, const lapack_t* x0, _Op3* X, _Op3* GX,
                    lapack_t* g0, lapack_t* ga0, Py_ssize_t nb, Py_ssize_t rows,
                    Py_ssize_t cols, Py_ssize_t n, bint lower, int trans, bint unit,
                    bint left, bint need_a) noexcept nogil:
    # a, x (A, X: element strides; batch strides may be 0): each matrix C-ordered (the
    # wrapper made sure). gx (GX): any element strides. g: the C-ordered (nb, rows, cols)
    # output like x; ga: the (nb, n, n) one, or unused.
    cdef Py_ssize_t k = cols if left else rows
    cdef Py_ssize_t isz = sizeof(lapack_t)
    cdef Py_ssize_t s0 = GX.s[1], s1 = GX.s[2]
    cdef const lapack_t* gx0 = <const lapack_t*>GX.p
    cdef Py_ssize_t b, i, j
    cdef blas_int N = <blas_int>n, K = <blas_int>k
    cdef char side = b'R' if left else b'L'
    cdef char uplo = b'U' if lower else b'L'       # the triangle of T = Aᵀ
    cdef char dg = b'U' if unit else b'N'
    cdef char tr
    cdef bint cplx = lapack_t is cfloat or lapack_t is cdouble
    cdef bint conj_g = cplx and trans == 1
    cdef bint swap = (trans != 0) == left          # (P, Q) = (G, X) instead of (X, G)
    cdef lapack_t* ap
    cdef lapack_t* xp
    cdef lapack_t* gp
    cdef lapack_t* fp
    cdef lapack_t* pp
    cdef lapack_t* qp
    tr = b'C' if trans == 0 else b'N'
    for b in range(nb):
        ap = <lapack_t*>(a0 + b * A.s[0])
        xp = <lapack_t*>(x0 + b * X.s[0])
        gp = g0 + b * rows * cols
        _gather(gx0 + b * GX.s[0], s0, s1, gp, rows, cols)
        if conj_g:
            _conj(gp, rows * cols)
        if left:     # Gᵀ M'ᵀ = X̄ᵀ, Gᵀ Fortran k x n
            rtrsm(side, uplo, tr, dg, K, N, ap, N, gp, K)
        else:        # M'ᵀ Gᵀ = X̄ᵀ, Gᵀ Fortran n x k
            rtrsm(side, uplo, tr, dg, N, K, ap, N, gp, N)
        if conj_g:
            _conj(gp, rows * cols)
        if not need_a:
            continue
        fp = ga0 + b * n * n
        if swap:
            pp, qp = gp, xp
        else:
            pp, qp = xp, gp
        _bp_tri(lower, left, pp, qp, fp, n, k, 0, n)
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


cdef void _backprop_code(int code, _Op3* A, _Op3* X, _Op3* GX, char* g, char* ga,
                         Py_ssize_t nb, Py_ssize_t rows, Py_ssize_t cols, Py_ssize_t n,
                         bint lower, int trans, bint unit, bint left,
                         bint need_a) noexcept nogil:
    """_backprop compiled for dtype code ``code`` (0..3: float, double, cfloat, cdouble),
    the operands' data behind A.p, X.p, g and ga: the one dispatch of the single-matrix
    and the stack paths."""
    if code == 0:
        _backprop(<const float*>A.p, A, <const float*>X.p, X, GX, <float*>g, <float*>ga, nb,
                  rows, cols, n, lower, trans, unit, left, need_a)
    elif code == 1:
        _backprop(<const double*>A.p, A, <const double*>X.p, X, GX, <double*>g,
                  <double*>ga, nb, rows, cols, n, lower, trans, unit, left, need_a)
    elif code == 2:
        _backprop(<const cfloat*>A.p, A, <const cfloat*>X.p, X, GX, <cfloat*>g,
                  <cfloat*>ga, nb, rows, cols, n, lower, trans, unit, left, need_a)
    else:
        _backprop(<const cdouble*>A.p, A, <const cdouble*>X.p, X, GX, <cdouble*>g,
                  <cdouble*>ga, nb, rows, cols, n, lower, trans, unit, left, need_a)


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


cdef tuple _backprop_one(cnp.ndarray a, cnp.ndarray x, cnp.ndarray gx, int code, bint lo,
                        int t, bint un, bint le, bint need_a, bint need_b):
    """solve_triangular_backprop of one matrix: a, x C-ordered, gx any strides, one
    LAPACK dtype (see _single.pxd's matrix2_code)."""
    cdef cnp.ndarray g = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(x), cnp.PyArray_TYPE(x))
    cdef cnp.ndarray ga = None
    cdef Py_ssize_t n = cnp.PyArray_DIMS(a)[0]
    cdef Py_ssize_t rows = cnp.PyArray_DIMS(x)[0], cols = cnp.PyArray_DIMS(x)[1]
    cdef char* gp = <char*>cnp.PyArray_DATA(g)
    cdef char* gap = NULL
    cdef _Op3 A, X, GX
    if need_a:
        ga = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(a), cnp.PyArray_TYPE(a))
        gap = <char*>cnp.PyArray_DATA(ga)
    _op2(a, &A)
    _op2(x, &X)
    _op2(gx, &GX)
    with nogil:
        _backprop_code(code, &A, &X, &GX, gp, gap, 1, rows, cols, n, lo, t, un, le, need_a)
    return (ga if need_a else None), (g if need_b else None)


@cython.wraparound(True)
def solve_triangular_backprop(a, x, gx, lower, trans, unit_diagonal, left, need_a=True,
                              need_b=True):
    """(Ā, B̄) of X = op(a)⁻¹B (``left``) or B op(a)⁻¹, given X and its cotangent X̄ (gx),
    ndarrays: a (*batch, n, n), x and gx (*batch, n, k) (left) or (*batch, k, n) (right),
    batches broadcasting. Ā has the full broadcast batch (the caller unbroadcasts) and
    is None unless ``need_a``; B̄ is None unless ``need_b``. trans 0, 1, 2; the result
    dtype is the common one. Empty operands go to the NumPy twin, and so do
    other dtypes than the four LAPACK ones (which it rejects with DTypeError)."""
    cdef int one = _one_matrix(a)
    if (one >= 0 and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>a) and matrix2_code(x) == one
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>x) and matrix2_code(gx) == one
            and cnp.PyArray_DIMS(<cnp.ndarray>gx)[0] == cnp.PyArray_DIMS(<cnp.ndarray>x)[0]
            and cnp.PyArray_DIMS(<cnp.ndarray>gx)[1] == cnp.PyArray_DIMS(<cnp.ndarray>x)[1]
            and cnp.PyArray_DIMS(<cnp.ndarray>x)[0 if left else 1]
            == cnp.PyArray_DIMS(<cnp.ndarray>a)[0]):
        return _backprop_one(<cnp.ndarray>a, <cnp.ndarray>x, <cnp.ndarray>gx, one, lower,
                             trans, unit_diagonal, left, need_a, need_b)
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
    cdef _Op3 A, X, GX
    _op3(a3, &A)
    _op3(x3, &X)
    _op3(gx3, &GX)
    cdef Py_ssize_t rows = g.shape[1], cols = g.shape[2], side = n
    cdef char* gp = <char*>cnp.PyArray_DATA(<cnp.ndarray>g)
    cdef char* gap = <char*>cnp.PyArray_DATA(<cnp.ndarray>ga)
    with nogil:
        _backprop_code(code, &A, &X, &GX, gp, gap, nb, rows, cols, side, lo, t, un, le, na)
    return (_unflat(ga, batch) if need_a else None), (_unflat(g, batch) if need_b else None)


cdef Py_ssize_t _trsm_code(int code, _Op3* A, _Op3* R, char* x, Py_ssize_t nb, Py_ssize_t r,
                           Py_ssize_t c, Py_ssize_t n, bint lower, int trans, bint unit,
                           bint left, bint check) noexcept nogil:
    """_trsm compiled for dtype code ``code`` (as _backprop_code): the one dispatch of the
    single-matrix and the stack paths."""
    if code == 0:
        return _trsm(<const float*>A.p, A, R, <float*>x, nb, r, c, n, lower, trans, unit,
                     left, check)
    if code == 1:
        return _trsm(<const double*>A.p, A, R, <double*>x, nb, r, c, n, lower, trans, unit,
                     left, check)
    if code == 2:
        return _trsm(<const cfloat*>A.p, A, R, <cfloat*>x, nb, r, c, n, lower, trans, unit,
                     left, check)
    return _trsm(<const cdouble*>A.p, A, R, <cdouble*>x, nb, r, c, n, lower, trans, unit,
                 left, check)


cdef object _trsm_one(cnp.ndarray a, cnp.ndarray b, int code, bint lo, int t, bint un,
                     bint le, bint ch):
    """trsm of one C-ordered matrix a and one right-hand side matrix b (any strides),
    of one LAPACK dtype (see _single.pxd's matrix2_code)."""
    cdef cnp.ndarray x = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(b), cnp.PyArray_TYPE(b))
    cdef Py_ssize_t n = cnp.PyArray_DIMS(a)[0], bad
    cdef Py_ssize_t r = cnp.PyArray_DIMS(b)[0], c = cnp.PyArray_DIMS(b)[1]
    cdef char* xp = <char*>cnp.PyArray_DATA(x)
    cdef _Op3 A, R
    _op2(a, &A)
    _op2(b, &R)
    with nogil:
        bad = _trsm_code(code, &A, &R, xp, 1, r, c, n, lo, t, un, le, ch)
    if bad >= 0:
        raise LinAlgError("the matrix is singular: a diagonal entry of the triangular "
                          "matrix is exactly zero")
    return x


@cython.wraparound(True)
def trsm(a, b, lower=False, trans=0, unit_diagonal=False, left=True, check=False):
    """op(a)⁻¹b (``left``) or b op(a)⁻¹, op = identity, ᵀ, ᴴ for trans 0, 1, 2, for
    triangular a (*batch, n, n) (only its ``lower`` or upper triangle is read, without
    the diagonal, taken as ones, when ``unit_diagonal``) and b (*batch, n, k) (left) or
    (*batch, k, n); the batches broadcast, the result has the common dtype and is a
    fresh C-ordered array. Like ?trsm, an exactly zero diagonal entry gives inf/nan,
    unless ``check``: then LinAlgError naming the first such matrix (nothing is solved).
    Empty operands and other dtypes than the four LAPACK ones go to the NumPy twin."""
    cdef int one = _one_matrix(a)
    if (one >= 0 and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>a) and matrix2_code(b) == one
            and cnp.PyArray_DIMS(<cnp.ndarray>b)[0 if left else 1]
            == cnp.PyArray_DIMS(<cnp.ndarray>a)[0]):
        return _trsm_one(<cnp.ndarray>a, <cnp.ndarray>b, one, lower, trans, unit_diagonal,
                         left, check)
    dt = b.dtype
    if a.dtype is not dt:
        if a.dtype != dt:
            dt = np.result_type(a.dtype, dt)
            a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    cdef Py_ssize_t code = _CHARS.find(dt.char)
    cdef Py_ssize_t nb = 1, bad
    cdef tuple sa = a.shape, sb = b.shape
    cdef Py_ssize_t nda = len(sa), ndb = len(sb)
    if code < 0 or a.size == 0 or b.size == 0 or not dt.isnative:
        return _ref.trsm(a, b, lower, trans, unit_diagonal, left, check)
    cdef tuple batch = sb[:ndb - 2]
    if nda != ndb or sa[:nda - 2] != batch:
        batch = np.broadcast_shapes(sa[:nda - 2], batch)
    for d in batch:
        nb *= <Py_ssize_t>d
    cdef int t = trans
    cdef bint lo = lower, un = unit_diagonal, le = left, ch = check
    cdef tuple st = a.strides
    cdef Py_ssize_t isz = a.itemsize, n = sa[nda - 1]
    # each matrix of a C- or Fortran-ordered (not Fortran for complex trans 2: conj(a)
    # is no BLAS op); anything else is copied once
    if n > 1 and not (st[nda - 1] == isz and st[nda - 2] == isz * n) and not (
            st[nda - 2] == isz and st[nda - 1] == isz * n and not (t == 2 and code >= 2)):
        a = np.ascontiguousarray(a)
    a3 = _flat3(a, batch, nb)
    b3 = _flat3(b, batch, nb)
    x = np.empty((nb,) + sb[ndb - 2:], dt)
    cdef _Op3 A, R
    _op3(a3, &A)
    _op3(b3, &R)
    cdef Py_ssize_t r = x.shape[1], c = x.shape[2]
    cdef char* xp = <char*>cnp.PyArray_DATA(<cnp.ndarray>x)
    with nogil:
        bad = _trsm_code(code, &A, &R, xp, nb, r, c, n, lo, t, un, le, ch)
    if bad >= 0:
        raise LinAlgError(f"{_where(bad, batch)} is singular: a diagonal entry of the "
                          "triangular matrix is exactly zero")
    return _unflat(x, batch)


# ---------------------------------------------------------------------------------------
# Row-major (C-order) BLAS: a C-ordered matrix is the Fortran matrix of its transpose,
# so C = op(A) op(B) is Cᵀ = op(B)ᵀ op(A)ᵀ: the Fortran call with the operands swapped
# and the same op letters ((Aᴴ)ᵀ = conj(A) = (Aᵀ)ᴴ); a triangular op(A) B is
# Bᵀ op(A)ᵀ: side and uplo flipped. ld* are row lengths (elements between rows).
# Operands with every side at most SMALL go through the plain loops of _small.pxd
# instead (no BLAS call: no OpenBLAS lock, so the small-matrix stacks run threaded).
# ---------------------------------------------------------------------------------------

cdef Py_ssize_t SMALL = SMALL_N


def _set_small(Py_ssize_t n):
    """Set the largest side of the operands that take the plain loops of _small.pxd
    instead of BLAS (tests and benchmarks only; 0: always BLAS); returns the previous."""
    # the loops' stack buffers hold SMALL_MAX
    return _swap(&SMALL, min(max(n, 0), SMALL_MAX))


cdef inline void c_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                        lapack_t alpha, const lapack_t* a, Py_ssize_t lda,
                        const lapack_t* b, Py_ssize_t ldb, lapack_t beta, lapack_t* c,
                        Py_ssize_t ldc, bint loops=True) noexcept nogil:
    """c (m x n) := alpha op(a) op(b) + beta c, all row-major (``loops``: the plain loops
    for operands up to SMALL)."""
    rm_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, SMALL if loops else 0)


cdef inline void c_hemm(char side, char uplo, Py_ssize_t m, Py_ssize_t n, lapack_t alpha,
                        const lapack_t* a, Py_ssize_t lda, const lapack_t* b,
                        Py_ssize_t ldb, lapack_t beta, lapack_t* c,
                        Py_ssize_t ldc, bint loops=True) noexcept nogil:
    """c (m x n) := alpha a b + beta c (side 'L') or alpha b a + beta c (side 'R'), a
    Hermitian given by its ``uplo`` triangle, row-major. (a's memory is the Fortran aᵀ,
    Hermitian with the other triangle.)"""
    cdef char s = b'L', u = b'L'
    if side == b'L':
        s = b'R'
    if uplo == b'L':
        u = b'U'
    if m == 0 or n == 0:
        return
    if loops and m <= SMALL and n <= SMALL:
        s_hemm(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
        return
    xhemm(&s, &u, <blas_int>n, <blas_int>m, alpha, a, <blas_int>lda, b, <blas_int>ldb,
          beta, c, <blas_int>ldc)


cdef inline void c_trsm(char side, char uplo, char ta, char diag, Py_ssize_t m,
                        Py_ssize_t n, lapack_t* a, Py_ssize_t lda, lapack_t* b,
                        Py_ssize_t ldb, bint loops=True) noexcept nogil:
    """b (m x n) := op(a)⁻¹b (side 'L') or b op(a)⁻¹ (side 'R'), row-major, recursive."""
    cdef char s = b'L', u = b'L'
    if loops and m <= SMALL and n <= SMALL:
        s_trsm(side, uplo, ta, diag, m, n, a, lda, b, ldb)
        return
    if side == b'L':
        s = b'R'
    if uplo == b'L':
        u = b'U'
    rtrsm(s, u, ta, diag, <blas_int>n, <blas_int>m, a, <blas_int>lda, b, <blas_int>ldb)


cdef inline void c_trmm(char side, char uplo, char ta, char diag, Py_ssize_t m,
                        Py_ssize_t n, lapack_t alpha, const lapack_t* a, Py_ssize_t lda,
                        lapack_t* b, Py_ssize_t ldb) noexcept nogil:
    """b (m x n) := alpha op(a) b (side 'L') or alpha b op(a) (side 'R'), row-major."""
    cdef char s = b'L', u = b'L'
    if m <= SMALL and n <= SMALL:
        s_trmm(side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb)
        return
    if side == b'L':
        s = b'R'
    if uplo == b'L':
        u = b'U'
    xtrmm(&s, &u, &ta, &diag, <blas_int>n, <blas_int>m, alpha, a, <blas_int>lda, b,
          <blas_int>ldb)


cdef inline lapack_t _re(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return z.real
    else:
        return z


cdef inline lapack_t _cj(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return z.conjugate()
    else:
        return z


# ---------------------------------------------------------------------------------------
# QR backprop (docs/rules.md#qr, m >= n): M = R R̄ᴴ − Q̄ᴴQ,  Ā = (Q̄ + Q copyltu(M)) R⁻ᴴ
# ---------------------------------------------------------------------------------------
# copyltu(M) = tril(M) + tril₋(M)ᴴ with a real diagonal reads only M's lower triangle, so
# only that is computed, in blocks of NB columns: for columns [c0, c1) and rows [c0, n),
#     M[c0:, c0:c1] = R[c0:, c0:] R̄ᴴ[c0:, c0:c1] − Q̄ᴴ[c0:, :] Q[:, c0:c1]
# (R is upper triangular, so its rows c0.. start at column c0): 2n³/3 + mn² flops for
# M instead of 2n³ + 2mn². Then B = Q̄ + Q copyltu(M) (one gemm) and Ā = B R⁻ᴴ (the
# recursive solve), in the output's memory.

# Largest side (max(m, n)) for which the QR backprop's products and solve take the plain
# loops of _small.pxd instead of BLAS: up to 8 the loops cost about what BLAS does on one
# thread, and the stack can be split over threads (BLAS's level-3 calls do not run
# concurrently, tenferro/_threads.py); at 16 BLAS is clearly faster on one thread
# (docs/guide/kernels.md, "Kernel constants").
cdef Py_ssize_t QR_SMALL = 8


def _set_qr_small(Py_ssize_t n):
    """QR_SMALL := n (benchmarks and tests only; 0 = always BLAS, at most SMALL_MAX);
    returns the previous value."""
    return _swap(&QR_SMALL, min(max(n, 0), SMALL_MAX))


cdef void _qr_lower_m(const lapack_t* qp, const lapack_t* rp, const lapack_t* gqp,
                      const lapack_t* grp, lapack_t* w, Py_ssize_t m, Py_ssize_t n,
                      Py_ssize_t r0, Py_ssize_t s, bint loops) noexcept nogil:
    # The lower triangle of the diagonal block M[r0:r0+s, r0:r0+s] (and some of its
    # upper triangle), by recursive halving so that most flops are in large gemms.
    cdef lapack_t one = 1, zero = 0, mone = -1
    cdef Py_ssize_t h, r1, c0, c1
    if s <= QR_NB:
        r1, c0, c1 = r0 + s, r0, r0 + s
    else:
        h = s // 2
        _qr_lower_m(qp, rp, gqp, grp, w, m, n, r0, h, loops)
        _qr_lower_m(qp, rp, gqp, grp, w, m, n, r0 + h, s - h, loops)
        r0, r1, c0, c1 = r0 + h, r0 + s, r0, r0 + h
    # M[r0:r1, c0:c1] = R[r0:r1, r0:] R̄[c0:c1, r0:]ᴴ − Q̄[:, r0:r1]ᴴ Q[:, c0:c1]
    if grp != NULL:
        c_gemm(c'N', c'C', r1 - r0, c1 - c0, n - r0, one, rp + r0 * n + r0, n,
               grp + c0 * n + r0, n, zero, w + r0 * n + c0, n, loops)
    if gqp != NULL:
        c_gemm(c'C', c'N', r1 - r0, c1 - c0, m, mone, gqp + r0, n, qp + c0, n,
               one if grp != NULL else zero, w + r0 * n + c0, n, loops)


cdef inline double _abs2(lapack_t z) noexcept nogil:
    if lapack_t is cfloat or lapack_t is cdouble:
        return <double>z.real * z.real + <double>z.imag * z.imag
    else:
        return <double>z * z


cdef struct _QRJob:         # one qr_backprop call, for run_chunks
    const char* q             # Q (nb, m, n), R (nb, n, n), Q̄, R̄ (NULL: zero), all
    const char* r             # C-ordered
    const char* gq
    const char* gr
    char* out                 # Ā (nb, m, n) C-ordered
    char* work                # the calling thread's n² workspace (workers allocate theirs)
    Py_ssize_t m, n, item     # sides, bytes per entry
    double rtol
    int code                  # 0..3: float, double, cfloat, cdouble


cdef Py_ssize_t _qr_singular(const lapack_t* r, _QRJob* j, Py_ssize_t b0,
                             Py_ssize_t b1) noexcept nogil:
    """OK, or the first position in [b0, b1) whose R has |r_jj| <= rtol·max_j |r_jj|."""
    cdef Py_ssize_t n = j.n, b, k
    cdef const lapack_t* rp
    cdef double big, small, d, rtol2 = j.rtol * j.rtol
    for b in range(b0, b1):
        rp = r + b * n * n
        big = 0
        small = _abs2(rp[0])
        for k in range(n):
            d = _abs2(rp[k * (n + 1)])
            big = d if d > big else big
            small = d if d < small else small
        if not small > rtol2 * big:
            return b
    return OK


cdef void _qr_backprop_rows(const lapack_t* q, const lapack_t* r, const lapack_t* gq,
                            const lapack_t* gr, lapack_t* out, lapack_t* w, _QRJob* j,
                            Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef Py_ssize_t m = j.m, n = j.n, b
    cdef bint loops = (m if m > n else n) <= QR_SMALL
    cdef lapack_t one = 1, zero = 0
    cdef const lapack_t* qp
    cdef const lapack_t* rp
    cdef lapack_t* op
    for b in range(b0, b1):
        qp = q + b * m * n
        rp = r + b * n * n
        op = out + b * m * n
        _qr_lower_m(qp, rp, gq + b * m * n if gq != NULL else NULL,
                    gr + b * n * n if gr != NULL else NULL, w, m, n, 0, n, loops)
        # B = Q̄ + Q copyltu(M): copyltu(M) is the Hermitian matrix of M's lower
        # triangle with its diagonal's real part, exactly what ?hemm (?symm) reads
        if gq != NULL:
            memcpy(op, gq + b * m * n, m * n * sizeof(lapack_t))
        c_hemm(c'R', c'L', m, n, one, w, n, qp, n, one if gq != NULL else zero, op, n,
               loops)
        c_trsm(c'R', c'U', c'C', c'N', m, n, <lapack_t*>rp, n, op, n, loops)  # B R⁻ᴴ


# Reused n² workspaces by dtype: a fresh large buffer per call costs page faults with
# glibc's allocator (docs/guide/kernels.md, "Kernel constants"). A caller takes the buffer out of the dict
# while it runs (so concurrent threads never share one) and puts it back after.
cdef Py_ssize_t _qr_backprop_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1,
                                   bint on_caller, blas_int* info) noexcept nogil:
    cdef _QRJob* j = <_QRJob*>ctx
    cdef Py_ssize_t bad
    if j.code == 0:
        bad = _qr_singular(<const float*>j.r, j, b0, b1)
    elif j.code == 1:
        bad = _qr_singular(<const double*>j.r, j, b0, b1)
    elif j.code == 2:
        bad = _qr_singular(<const cfloat*>j.r, j, b0, b1)
    else:
        bad = _qr_singular(<const cdouble*>j.r, j, b0, b1)
    if bad != OK:
        return bad       # nothing of the chunk computed
    return _rows_in_work(&_QR_BP, j.code, j.work, j.n * j.n * j.item, ctx, b0, b1,
                         on_caller)


cdef dict _WORK = {}


# The largest workspace (bytes) the one-matrix paths malloc per call instead of taking
# the cached one (malloc's bins serve these sizes without page faults)
cdef Py_ssize_t WORK_MALLOC_MAX = 65536


cdef Py_ssize_t _chunks(chunk_fn fn, void* job, Py_ssize_t nb, int t, object w,
                        str name) except -2:
    """``fn`` over the stack of ``job`` split over ``t`` threads (run_chunks), then the
    calling thread's workspace ``w`` back to the cache; MemoryError naming the entry
    point ``name`` when a worker's buffer could not be had, else run_chunks' result."""
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    with nogil:
        bad = run_chunks(fn, job, nb, t, &info)
    _WORK[w.dtype.char] = w
    if bad == NO_MEMORY:
        raise MemoryError(f"{name}: no memory for a worker thread's workspace")
    return bad


cdef int _chunk_one(chunk_fn fn, void* job, bint release_gil, bint cached, object w,
                    str name) except -1:
    """``fn`` over the one matrix of ``job`` on the calling thread, without the GIL when
    ``release_gil``; then the workspace ``w`` back to the cache when ``cached``, and
    MemoryError naming the entry point ``name`` when a buffer could not be had."""
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    if release_gil:
        with nogil:
            bad = fn(job, 0, 1, cached, &info)
    else:
        bad = fn(job, 0, 1, cached, &info)
    if cached:
        _WORK[w.dtype.char] = w
    if bad == NO_MEMORY:
        raise MemoryError(f"{name}: no memory for the workspace")
    return 0


cdef object _take_work(object dt, Py_ssize_t size):
    w = _WORK.pop(dt.char, None)
    if w is None or w.shape[0] < size:
        w = np.empty(max(size, 1), dt)
    return w


@cython.wraparound(True)
def qr_backprop(q, r, gq, gr, rtol=0.0):
    """Ā of A = QR (m >= n) from Q (*batch, m, n), R (*batch, n, n) (upper triangular,
    zeros below the diagonal as qr returns it) and the cotangents Q̄, R̄ (same shapes, or
    None for zero; not both), ndarrays of one dtype. A fresh (*batch, m, n) array.
    LinAlgError naming the first matrix whose R has a diagonal entry with
    |r_jj| <= rtol·max_j |r_jj| (zero for rtol = 0; a chunk of the stack checks its
    matrices before it computes any of them, and nothing is returned on the error).
    Empty operands and mixed or other dtypes go to the NumPy twin."""
    dt = q.dtype
    cdef Py_ssize_t code = _CHARS.find(dt.char)
    cdef tuple batch = q.shape[:-2]
    cdef Py_ssize_t nb = 1, m = q.shape[-2], n = q.shape[-1], bad
    cdef bint hq = gq is not None, hr = gr is not None
    cdef double rt = rtol
    cdef _QRJob job
    cdef int t
    if (code < 0 or q.size == 0 or not dt.isnative or r.dtype != dt or
            (hq and gq.dtype != dt) or (hr and gr.dtype != dt) or not (hq or hr)):
        return _ref.qr_backprop(q, r, gq, gr, rtol)
    for d in batch:
        nb *= <Py_ssize_t>d
    q3 = _flat3(np.ascontiguousarray(q), batch, nb)
    r3 = _flat3(np.ascontiguousarray(r), batch, nb)
    gq3 = _flat3(np.ascontiguousarray(gq), batch, nb) if hq else q3
    gr3 = _flat3(np.ascontiguousarray(gr), batch, nb) if hr else r3
    out = np.empty((nb, m, n), dt)
    w = _take_work(dt, n * n)
    # split over the native workers (the first failing position is the serial loop's)
    # when it is BLAS-free: plain loops up to QR_SMALL
    t = _threads._threads_for(nb, m, 4 * nb * m * n * n, max(m, n) > QR_SMALL)
    job.q, job.r, job.out, job.work = _data(q3), _data(r3), _data(out), _data(w)
    job.gq = _data(gq3) if hq else NULL
    job.gr = _data(gr3) if hr else NULL
    job.m, job.n, job.item, job.rtol, job.code = m, n, dt.itemsize, rt, <int>code
    bad = _chunks(_qr_backprop_chunk, &job, nb, t, w, "qr_backprop")
    if bad >= 0:
        raise LinAlgError(f"{_where(bad, batch)}: R is singular to working precision")
    return _unflat(out, batch)


# ---------------------------------------------------------------------------------------
# Cholesky backprop (docs/rules.md#cholesky, Murray 2016, arXiv:1602.07527): A = L Lᴴ,
#     Ā = ½(S + Sᴴ),  S = L⁻ᴴ Φ(LᴴL̄) L⁻¹,  Φ = tril with the diagonal halved.
# ---------------------------------------------------------------------------------------
# A block of at most CHOL_NB rows uses the formula (a trmm and two solves). A larger one
# is reverse mode of the 2x2 block Cholesky, L = [[L₁₁, 0], [L₂₁, L₂₂]]:
#     Ā₂₂ = backprop(L₂₂, W₂₂);   W₂₁ −= 2Ā₂₂L₂₁;   C = W₂₁L₁₁⁻¹;   W₁₁ −= CᴴL₂₁
#     Ā₁₁ = backprop(L₁₁, W₁₁);   Ā₂₁ = ½C,  Ā₁₂ = ½Cᴴ
# with W the running L̄ (lower triangle, overwritten): ~5n³/6 flops, mostly gemm,
# against ~3n³ for the formula on the whole matrix (two full triangular solves).

# Leaf size of the blocked Cholesky backprop: 4 measured fastest against 8 and 16-48
# (one thread, n = 16...256; the leaves' trmm/trsm are slow per flop; below SMALL every
# call is a plain loop; docs/guide/kernels.md, "Kernel constants").
cdef Py_ssize_t CHOL_NB = 4

# Largest block whose gemm and trsm (on its halves, sides <= 8) take the plain loops;
# larger blocks call BLAS even for halves up to SMALL. Loops on halves of up to 8 and
# BLAS above measured faster than loops up to 16 (one thread, n = 20...128; the loops
# are compiled for baseline x86-64, OpenBLAS's gemm for the CPU).
# Up to SMALL = 2 * 8 the kernel is still BLAS-free, as the thread split assumes.
cdef Py_ssize_t CHOL_LOOPS = 16


def _set_chol_loops(Py_ssize_t n):
    """CHOL_LOOPS := max(n, 0) (benchmarks and tests only); returns the previous one."""
    return _swap(&CHOL_LOOPS, max(n, 0))


def _set_chol_block(Py_ssize_t nb):
    """Set the leaf size of the blocked Cholesky backprop (benchmarks and tests only);
    returns the previous one."""
    return _swap(&CHOL_NB, nb if nb > 0 else 1)


cdef void _chol_leaf(lapack_t* l, lapack_t* w, lapack_t* o, Py_ssize_t n,
                     Py_ssize_t ld) noexcept nogil:
    # o := ½(S + Sᴴ), S = L⁻ᴴ Φ(Lᴴ tril(W)) L⁻¹, all n x n blocks with row length ld
    cdef Py_ssize_t i, j
    cdef lapack_t one = 1, half = 0.5, v
    for i in range(n):
        for j in range(n):
            o[i * ld + j] = w[i * ld + j] if j <= i else 0
    c_trmm(c'L', c'L', c'C', c'N', n, n, one, l, ld, o, ld)       # Lᴴ tril(W)
    for i in range(n):                                               # Φ
        o[i * ld + i] = o[i * ld + i] * half
        for j in range(i + 1, n):
            o[i * ld + j] = 0
    c_trsm(c'L', c'L', c'C', c'N', n, n, l, ld, o, ld)              # L⁻ᴴ Φ
    c_trsm(c'R', c'L', c'N', c'N', n, n, l, ld, o, ld)              # ... L⁻¹
    for i in range(n):                                               # ½(S + Sᴴ)
        o[i * ld + i] = _re(o[i * ld + i])
        for j in range(i):
            v = (o[i * ld + j] + _cj(o[j * ld + i])) * half
            o[i * ld + j] = v
            o[j * ld + i] = _cj(v)


cdef void _chol_blocked(lapack_t* l, lapack_t* w, lapack_t* o, Py_ssize_t n,
                        Py_ssize_t ld) noexcept nogil:
    cdef Py_ssize_t h, i, j
    cdef bint loops
    cdef lapack_t one = 1, mone = -1, mtwo = -2, half = 0.5
    cdef lapack_t* c
    if n <= CHOL_NB:
        _chol_leaf(l, w, o, n, ld)
        return
    h = n // 2
    if h >= 32:
        h = (h + 8) // 16 * 16
    loops = n <= CHOL_LOOPS
    _chol_blocked(l + h * ld + h, w + h * ld + h, o + h * ld + h, n - h, ld)
    c = w + h * ld      # W₂₁, becomes C
    c_gemm(c'N', c'N', n - h, h, n - h, mtwo, o + h * ld + h, ld, l + h * ld, ld, one, c,
           ld, loops)
    c_trsm(c'R', c'L', c'N', c'N', n - h, h, l, ld, c, ld, loops)
    c_gemm(c'C', c'N', h, h, n - h, mone, c, ld, l + h * ld, ld, one, w, ld, loops)
    _chol_blocked(l, w, o, h, ld)
    for i in range(h, n):
        for j in range(h):
            o[i * ld + j] = c[(i - h) * ld + j] * half
            o[j * ld + i] = _cj(o[i * ld + j])


cdef struct _CholJob:       # one cholesky_backprop call, for run_chunks
    const char* l             # L (nb, n, n) C-ordered
    const char* gl            # L̄ (nb, n, n), element strides sg
    char* out                 # Ā (nb, n, n) C-ordered
    char* work                # the calling thread's n² workspace (workers allocate theirs)
    Py_ssize_t sg[3]
    Py_ssize_t n, item        # side, bytes per entry
    int code                  # 0..3: float, double, cfloat, cdouble


cdef void _cholesky_backprop_rows(const lapack_t* l, const lapack_t* gl, lapack_t* out,
                                  lapack_t* w, _CholJob* j, Py_ssize_t b0,
                                  Py_ssize_t b1) noexcept nogil:
    cdef Py_ssize_t n = j.n, s1 = j.sg[1], s2 = j.sg[2], b, i, k
    cdef const lapack_t* src
    for b in range(b0, b1):
        src = gl + b * j.sg[0]
        for i in range(n):          # the lower triangle of L̄ is all that is read
            for k in range(i + 1):
                w[i * n + k] = src[i * s1 + k * s2]
        _chol_blocked(<lapack_t*>(l + b * n * n), w, out + b * n * n, n, n)


cdef Py_ssize_t _cholesky_backprop_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1,
                                         bint on_caller, blas_int* info) noexcept nogil:
    cdef _CholJob* j = <_CholJob*>ctx
    return _rows_in_work(&_CHOL_BP, j.code, j.work, j.n * j.n * j.item, ctx, b0, b1,
                         on_caller)


@cython.wraparound(True)
def cholesky_backprop(l, gl):
    """Hermitian Ā of A = L Lᴴ from L (*batch, n, n) (lower, zeros above the diagonal)
    and L̄ (same shape, any strides; only its lower triangle is read), ndarrays of one
    dtype. A fresh array. Empty operands and other dtypes go to the NumPy twin."""
    cdef int one = _one_matrix(l)
    if (one >= 0 and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>l)
            and _one_matrix(gl, l) == one):
        return _cholesky_backprop_one(<cnp.ndarray>l, <cnp.ndarray>gl, one)
    dt = l.dtype
    cdef Py_ssize_t code = _CHARS.find(dt.char)
    cdef tuple batch = l.shape[:-2]
    cdef Py_ssize_t nb = 1, n = l.shape[-1], bad, i
    cdef _CholJob job
    cdef int t
    if (code < 0 or l.size == 0 or not dt.isnative or gl.dtype != dt or
            gl.shape != l.shape):
        return _ref.cholesky_backprop(l, gl)
    for d in batch:
        nb *= <Py_ssize_t>d
    l3 = _flat3(_c_inner(l), batch, nb)
    gl3 = _flat3(gl, batch, nb)
    out = np.empty((nb, n, n), dt)
    w = _take_work(dt, n * n)
    t = _threads._threads_for(nb, n, 2 * nb * n * n * n,
                     n > SMALL)     # BLAS-free (plain loops) up to SMALL: threads pay
    job.l, job.gl, job.out, job.work = _data(l3), _data(gl3), _data(out), _data(w)
    for i in range(3):
        job.sg[i] = gl3.strides[i] // dt.itemsize
    job.n = n
    job.item = dt.itemsize
    job.code = <int>code
    bad = _chunks(_cholesky_backprop_chunk, &job, nb, t, w, "cholesky_backprop")
    return _unflat(out, batch)


cdef object _cholesky_backprop_one(cnp.ndarray l, cnp.ndarray gl, int code):
    """cholesky_backprop of one matrix (see _one_matrix), serially on the calling thread."""
    cdef Py_ssize_t n = cnp.PyArray_DIMS(l)[0], isz = cnp.PyArray_ITEMSIZE(l)
    cdef cnp.ndarray out = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(l), cnp.PyArray_TYPE(l))
    cdef _CholJob job
    # A large workspace is the module's cached one: a fresh malloc per call costs page
    # faults; a small one (<= WORK_MALLOC_MAX bytes) is malloc'ed by the chunk, cheaper
    # than the cache's dict (docs/guide/kernels.md, "Kernel constants")
    cdef bint cached = n * n * isz > WORK_MALLOC_MAX
    w = _take_work(l.dtype, n * n) if cached else None
    job.l = <const char*>cnp.PyArray_DATA(l)
    job.gl = <const char*>cnp.PyArray_DATA(gl)
    job.out = <char*>cnp.PyArray_DATA(out)
    job.work = <char*>cnp.PyArray_DATA(<cnp.ndarray>w) if cached else NULL
    job.sg[0] = 0
    job.sg[1] = cnp.PyArray_STRIDES(gl)[0] // isz
    job.sg[2] = cnp.PyArray_STRIDES(gl)[1] // isz
    job.n = n
    job.item = isz
    job.code = code
    _chunk_one(_cholesky_backprop_chunk, &job, n > SMALL, cached, w, "cholesky_backprop")
    return out


# ---------------------------------------------------------------------------------------
# LU backprop (docs/rules.md#lu), square: A = P L U, L unit lower, U upper, A′ = PᵀA = LU,
#     Ā′ = L⁻ᴴ F̄ U⁻ᴴ,  F̄ = tril₋(LᴴL̄) + triu(ŪUᴴ),  Ā = P Ā′.
# ---------------------------------------------------------------------------------------
# A block of at most LU_NB rows uses the formula (two trmm, two solves). A larger one is
# reverse mode of the 2x2 block LU, L = [[L₁₁, 0], [L₂₁, L₂₂]], U = [[U₁₁, U₁₂], [0, U₂₂]]
# (forward: L₁₁U₁₁ = A₁₁, U₁₂ = L₁₁⁻¹A₁₂, L₂₁ = A₂₁U₁₁⁻¹, L₂₂U₂₂ = A₂₂ − L₂₁U₁₂):
#     S̄ = Ā₂₂ = backprop(L₂₂, U₂₂, L̄₂₂, Ū₂₂)
#     Ā₂₁ = (L̄₂₁ − S̄U₁₂ᴴ)U₁₁⁻ᴴ;   Ā₁₂ = L₁₁⁻ᴴ(Ū₁₂ − L₂₁ᴴS̄)
#     Ā₁₁ = backprop(L₁₁, U₁₁, L̄₁₁ − Ā₁₂U₁₂ᴴ, Ū₁₁ − L₂₁ᴴĀ₂₁)
# with the running L̄, Ū in workspaces (overwritten): ~5n³/3 flops, mostly gemm, against
# 4n³ for the formula on the whole matrix (two full trmm and two full solves). The twin
# and linalg/lu.py's rule on Tensors are the formula; the tests compare the kernel with
# both, down to blocks of 1.

# Leaf size of the blocked LU backprop: leaves of 17..32 through BLAS and of at most 8
# through the loops measured faster than 16 or 8 alone (one thread, n = 8...256;
# docs/guide/kernels.md, "Kernel constants").
cdef Py_ssize_t LU_NB = 32


def _set_lu_block(Py_ssize_t nb):
    """LU_NB := max(nb, 1) (benchmarks and tests only); returns the previous one."""
    return _swap(&LU_NB, max(nb, 1))


cdef void _lu_leaf(lapack_t* l, lapack_t* u, lapack_t* wl, lapack_t* wu, lapack_t* o,
                   Py_ssize_t n, Py_ssize_t ld) noexcept nogil:
    # o := L⁻ᴴ (tril₋(Lᴴ tril₋(WL)) + triu(triu(WU) Uᴴ)) U⁻ᴴ; WL, WU are overwritten
    cdef Py_ssize_t i, j
    cdef lapack_t one = 1
    for i in range(n):
        for j in range(n):
            o[i * ld + j] = wu[i * ld + j] if j >= i else 0
            if j >= i:
                wl[i * ld + j] = 0
    c_trmm(c'R', c'U', c'C', c'N', n, n, one, u, ld, o, ld)         # triu(Ū) Uᴴ
    c_trmm(c'L', c'L', c'C', c'U', n, n, one, l, ld, wl, ld)        # Lᴴ tril₋(L̄)
    for i in range(1, n):
        for j in range(i):
            o[i * ld + j] = wl[i * ld + j]
    c_trsm(c'R', c'U', c'C', c'N', n, n, u, ld, o, ld)              # F̄ U⁻ᴴ
    c_trsm(c'L', c'L', c'C', c'U', n, n, l, ld, o, ld)              # L⁻ᴴ ...


cdef void _lu_blocked(lapack_t* l, lapack_t* u, lapack_t* wl, lapack_t* wu, lapack_t* o,
                      Py_ssize_t n, Py_ssize_t ld) noexcept nogil:
    cdef Py_ssize_t h, k, d
    cdef lapack_t one = 1, mone = -1
    cdef lapack_t* o21
    cdef lapack_t* o12
    cdef lapack_t* l21
    cdef lapack_t* u12
    # a leaf when small: the solves and products of a leaf with sides 9..16 are plain
    # loops (SMALL), slower than splitting it once; 17..LU_NB are BLAS calls
    if n <= LU_NB and (n <= 8 or n > SMALL):
        _lu_leaf(l, u, wl, wu, o, n, ld)
        return
    h = n // 2
    if h >= 32:
        h = (h + 8) // 16 * 16
    k = n - h
    d = h * ld + h       # offset of the (2, 2) blocks
    _lu_blocked(l + d, u + d, wl + d, wu + d, o + d, k, ld)
    o21, o12, l21, u12 = o + h * ld, o + h, l + h * ld, u + h
    _copy_block(wl + h * ld, o21, k, h, ld)
    _copy_block(wu + h, o12, h, k, ld)
    c_gemm(c'N', c'C', k, h, k, mone, o + d, ld, u12, ld, one, o21, ld)   # L̄₂₁ − S̄U₁₂ᴴ
    c_gemm(c'C', c'N', h, k, k, mone, l21, ld, o + d, ld, one, o12, ld)   # Ū₁₂ − L₂₁ᴴS̄
    c_trsm(c'R', c'U', c'C', c'N', k, h, u, ld, o21, ld)                  # Ā₂₁
    c_trsm(c'L', c'L', c'C', c'U', h, k, l, ld, o12, ld)                  # Ā₁₂
    c_gemm(c'C', c'N', h, h, k, mone, l21, ld, o21, ld, one, wu, ld)      # Ū₁₁ − L₂₁ᴴĀ₂₁
    c_gemm(c'N', c'C', h, h, k, mone, o12, ld, u12, ld, one, wl, ld)      # L̄₁₁ − Ā₁₂U₁₂ᴴ
    _lu_blocked(l, u, wl, wu, o, h, ld)


cdef inline void _copy_block(const lapack_t* src, lapack_t* dst, Py_ssize_t rows,
                             Py_ssize_t cols, Py_ssize_t ld) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(rows):
        memcpy(dst + i * ld, src + i * ld, cols * sizeof(lapack_t))


cdef inline void _load(const lapack_t* src, Py_ssize_t s0, Py_ssize_t s1, lapack_t* dst,
                       Py_ssize_t n, bint present) noexcept nogil:
    # dst (n x n, C-ordered) := the matrix at src (element strides s0, s1), or zeros
    if present:
        _gather(src, s0, s1, dst, n, n)
    else:
        memset(dst, 0, n * n * sizeof(lapack_t))


cdef struct _LUJob:         # one lu_backprop call, for run_chunks
    const char* l             # L, U (nb, n, n) C-ordered
    const char* u
    const char* gl            # L̄, Ū (nb, n, n), element strides sl, su (NULL: zero)
    const char* gu
    const Py_ssize_t* perm    # (nb, n) row order, or NULL (P = I)
    char* out                 # Ā (nb, n, n) C-ordered
    char* work                # the calling thread's workspace (workers allocate theirs)
    Py_ssize_t sl[3]
    Py_ssize_t su[3]
    Py_ssize_t n, item        # side, bytes per entry
    int code                  # 0..3: float, double, cfloat, cdouble


cdef void _lu_backprop_rows(const lapack_t* l, const lapack_t* u, const lapack_t* gl,
                            const lapack_t* gu, lapack_t* out, lapack_t* work, _LUJob* j,
                            Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef Py_ssize_t n = j.n, b, i
    cdef bint hp = j.perm != NULL
    cdef lapack_t* wl = work
    cdef lapack_t* wu = wl + n * n
    cdef lapack_t* o = wu + n * n
    cdef lapack_t* ob
    for b in range(b0, b1):
        _load(gl + b * j.sl[0] if gl != NULL else NULL, j.sl[1], j.sl[2], wl, n,
              gl != NULL)
        _load(gu + b * j.su[0] if gu != NULL else NULL, j.su[1], j.su[2], wu, n,
              gu != NULL)
        ob = out + b * n * n
        _lu_blocked(<lapack_t*>(l + b * n * n), <lapack_t*>(u + b * n * n), wl, wu,
                    o if hp else ob, n, n)
        if hp:
            for i in range(n):    # Ā = P Ā′: row i of Ā′ is row perm[b, i] of Ā
                memcpy(ob + j.perm[b * n + i] * n, o + i * n, n * sizeof(lapack_t))


cdef object _lu_backprop_one(object perm, cnp.ndarray l, cnp.ndarray u, object gl,
                            object gu, int code):
    """lu_backprop of one matrix (see _one_matrix; perm None or a C-ordered intp vector),
    serially on the calling thread."""
    cdef Py_ssize_t n = cnp.PyArray_DIMS(l)[0], isz = cnp.PyArray_ITEMSIZE(l), i
    cdef cnp.ndarray out = cnp.PyArray_SimpleNew(2, cnp.PyArray_DIMS(l), cnp.PyArray_TYPE(l))
    cdef cnp.ndarray g
    cdef _LUJob job
    # the workspace as in _cholesky_backprop_one: cached when large, else malloc'ed
    cdef Py_ssize_t size = (3 if perm is not None else 2) * n * n
    cdef bint cached = size * isz > WORK_MALLOC_MAX
    w = _take_work(l.dtype, size) if cached else None
    job.l = <const char*>cnp.PyArray_DATA(l)
    job.u = <const char*>cnp.PyArray_DATA(u)
    job.out = <char*>cnp.PyArray_DATA(out)
    job.work = <char*>cnp.PyArray_DATA(<cnp.ndarray>w) if cached else NULL
    job.perm = NULL if perm is None else <const Py_ssize_t*>cnp.PyArray_DATA(
        <cnp.ndarray>perm)
    job.gl = job.gu = NULL
    for i in range(3):
        job.sl[i] = job.su[i] = 0
    if gl is not None:
        g = <cnp.ndarray>gl
        job.gl = <const char*>cnp.PyArray_DATA(g)
        job.sl[1] = cnp.PyArray_STRIDES(g)[0] // isz
        job.sl[2] = cnp.PyArray_STRIDES(g)[1] // isz
    if gu is not None:
        g = <cnp.ndarray>gu
        job.gu = <const char*>cnp.PyArray_DATA(g)
        job.su[1] = cnp.PyArray_STRIDES(g)[0] // isz
        job.su[2] = cnp.PyArray_STRIDES(g)[1] // isz
    job.n, job.item, job.code = n, isz, code
    _chunk_one(_lu_backprop_chunk, &job, n > SMALL, cached, w, "lu_backprop")
    return out


cdef Py_ssize_t _lu_backprop_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1,
                                   bint on_caller, blas_int* info) noexcept nogil:
    cdef _LUJob* j = <_LUJob*>ctx
    return _rows_in_work(&_LU_BP, j.code, j.work,
                         (3 if j.perm != NULL else 2) * j.n * j.n * j.item, ctx, b0, b1,
                         on_caller)


@cython.wraparound(True)
def lu_backprop(perm, l, u, gl, gu):
    """Ā of A = P L U (square) from the row order ``perm`` (*batch, n) intp with
    P[perm[i], i] = 1 (row i of LU is row perm[i] of A; None: P = I), L (*batch, n, n)
    unit lower and U upper (zeros outside their triangles, as lu returns them) and the
    cotangents L̄, Ū (same shapes, any strides, or None for zero; not both; only the
    strictly lower part of L̄ and the upper part of Ū are read), ndarrays of one dtype.
    A fresh (*batch, n, n) array. U's diagonal must be checked nonsingular by the
    caller. Empty operands and mixed or other dtypes go to the NumPy twin."""
    cdef int one = _one_matrix(l)
    if (one >= 0 and (gl is not None or gu is not None)
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>l) and _one_matrix(u, l) == one
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>u)
            and (gl is None or _one_matrix(gl, l) == one)
            and (gu is None or _one_matrix(gu, l) == one)
            and (perm is None or (type(perm) is np.ndarray
                                  and cnp.PyArray_NDIM(<cnp.ndarray>perm) == 1
                                  and cnp.PyArray_TYPE(<cnp.ndarray>perm) == cnp.NPY_INTP
                                  and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>perm)
                                  and cnp.PyArray_DIMS(<cnp.ndarray>perm)[0]
                                  == cnp.PyArray_DIMS(<cnp.ndarray>l)[0]))):
        return _lu_backprop_one(perm, <cnp.ndarray>l, <cnp.ndarray>u, gl, gu, one)
    dt = l.dtype
    cdef Py_ssize_t code = _CHARS.find(dt.char)
    cdef tuple batch = l.shape[:-2]
    cdef Py_ssize_t nb = 1, n = l.shape[-1], bad, i
    cdef bint hl = gl is not None, hu = gu is not None, hp = perm is not None
    cdef _LUJob job
    cdef int t
    if (code < 0 or l.size == 0 or not dt.isnative or u.dtype != dt or not (hl or hu) or
            (hl and (gl.dtype != dt or gl.shape != l.shape)) or
            (hu and (gu.dtype != dt or gu.shape != l.shape)) or u.shape != l.shape):
        return _ref.lu_backprop(perm, l, u, gl, gu)
    for d in batch:
        nb *= <Py_ssize_t>d
    l3 = _flat3(np.ascontiguousarray(l), batch, nb)
    u3 = _flat3(np.ascontiguousarray(u), batch, nb)
    gl3 = _flat3(gl, batch, nb) if hl else l3
    gu3 = _flat3(gu, batch, nb) if hu else u3
    if not hp:
        r3 = None
    elif perm.dtype == np.intp and perm.shape == batch + (n,) and perm.flags.c_contiguous:
        r3 = perm[None] if not batch else perm.reshape(nb, n)
    else:
        r3 = np.ascontiguousarray(np.broadcast_to(perm, batch + (n,)), np.intp).reshape(nb, n)
    out = np.empty((nb, n, n), dt)
    w = _take_work(dt, (3 if hp else 2) * n * n)
    job.l, job.u, job.out, job.work = _data(l3), _data(u3), _data(out), _data(w)
    job.gl = _data(gl3) if hl else NULL
    job.gu = _data(gu3) if hu else NULL
    job.perm = <const Py_ssize_t*>_data(r3) if hp else NULL
    for i in range(3):
        job.sl[i] = gl3.strides[i] // dt.itemsize
        job.su[i] = gu3.strides[i] // dt.itemsize
    job.n, job.item, job.code = n, dt.itemsize, <int>code
    t = _threads._threads_for(nb, n, 2 * nb * n * n * n,
                              n > SMALL)     # BLAS-free (plain loops) up to SMALL: threads pay
    bad = _chunks(_lu_backprop_chunk, &job, nb, t, w, "lu_backprop")
    return _unflat(out, batch)


# ---------------------------------------------------------------------------------------
# The pullbacks' loops as _BpRows tables (see _rows_in_work): adapters from the job
# struct to each fused loop's operands, then the tables.
# ---------------------------------------------------------------------------------------

cdef void _qr_backprop_rows_w(lapack_t* w, void* job, Py_ssize_t b0,
                              Py_ssize_t b1) noexcept nogil:
    cdef _QRJob* j = <_QRJob*>job
    _qr_backprop_rows(<const lapack_t*>j.q, <const lapack_t*>j.r, <const lapack_t*>j.gq,
                      <const lapack_t*>j.gr, <lapack_t*>j.out, w, j, b0, b1)


cdef void _cholesky_backprop_rows_w(lapack_t* w, void* job, Py_ssize_t b0,
                                    Py_ssize_t b1) noexcept nogil:
    cdef _CholJob* j = <_CholJob*>job
    _cholesky_backprop_rows(<const lapack_t*>j.l, <const lapack_t*>j.gl, <lapack_t*>j.out,
                            w, j, b0, b1)


cdef void _lu_backprop_rows_w(lapack_t* w, void* job, Py_ssize_t b0,
                              Py_ssize_t b1) noexcept nogil:
    cdef _LUJob* j = <_LUJob*>job
    _lu_backprop_rows(<const lapack_t*>j.l, <const lapack_t*>j.u, <const lapack_t*>j.gl,
                      <const lapack_t*>j.gu, <lapack_t*>j.out, w, j, b0, b1)


cdef _BpRows _QR_BP = _BpRows(_qr_backprop_rows_w[float], _qr_backprop_rows_w[double],
                            _qr_backprop_rows_w[cfloat], _qr_backprop_rows_w[cdouble])


cdef _BpRows _CHOL_BP = _BpRows(
    _cholesky_backprop_rows_w[float], _cholesky_backprop_rows_w[double],
    _cholesky_backprop_rows_w[cfloat], _cholesky_backprop_rows_w[cdouble])


cdef _BpRows _LU_BP = _BpRows(_lu_backprop_rows_w[float], _lu_backprop_rows_w[double],
                            _lu_backprop_rows_w[cfloat], _lu_backprop_rows_w[cdouble])
