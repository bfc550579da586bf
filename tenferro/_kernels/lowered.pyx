# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A tf.compile trace lowered to C instructions over two flat float64 arenas.

Why: the replay of tenferro/_capture.py calls one Python function per recorded op and
keeps one ndarray per value. For a loop of small ops (the Kalman filter of
docs/guide/loops.md: ~7500 ops of 2x2 to 4x4 matrices per call) that costs ~1 µs per op
forward and more backward, most of it object traffic: allocating, reference counting and
cache misses on thousands of small arrays. Here the common small ops run as C
instructions whose values live in one arena (forward) and whose cotangents live in
another (backward), as offsets; only the ops without an instruction still run their
Python replay function and rule, on ndarrays copied out of the arena when they need one.

Instructions (``OPCODES``; tenferro/_lower.py decides which recorded op becomes which):
matmul (by the BLAS call NumPy's matmul makes for the same layouts, so the forward is
NumPy's, bit for bit; a matmul operand that is the transpose of a value reads that value
with the transpose flag, as NumPy reads the view ``x.T``), the elementwise sum and
difference of two arrays of one shape, with a constant array or a scalar, the product
with a scalar, the 2-D transpose and diagonal. Backward only (their forward is the op's
Python function): the sum of all entries, log and exp. The pullbacks are the rules of
docs/rules.md written as C loops (matmul: ḡ Bᵀ and Aᵀ ḡ by plain loops, which for these
sizes beat a BLAS call's overhead); the gradient equals the op-by-op replay's to
rounding, as tf.compile promises.

A value that an instruction reads may be an arena value (C-ordered) or an ndarray of the
Python ops (any strides); a value that a Python op reads is copied out of the arena once
and kept. Nothing is shared between calls: each forward allocates its arena and each
backward its cotangent arena, so two calls in flight never see each other's values.

The twin (lowered_twin.py) runs the same instructions with NumPy;
tests/_kernels/test_lowered.py checks that they agree and that a lowered trace gives the
forward of the op-by-op replay bit for bit and its gradient to rounding.
"""
cimport numpy as cnp
from libc.string cimport memcpy, memset
cimport scipy.linalg.cython_blas as bl

from tenferro._kernels._blas cimport blas_int, xgemm_ab
from tenferro._kernels._small cimport SMALL_N, s_getrf, s_getrs, s_potrf
from libc.math cimport isfinite

import numpy as np
from numpy import ndarray

cnp.import_array()

cdef enum:
    PY = 0
    MATMUL = 1
    ADD = 2
    SUB = 3
    ADD_CONST = 4       # x + c (c an array of x's shape)
    SUB_CONST = 5       # x − c
    RSUB_CONST = 6      # c − x
    ADD_SCALAR = 7      # x + s
    SUB_SCALAR = 8      # x − s
    RSUB_SCALAR = 9     # s − x
    SCALE = 10          # x · s
    TRANSPOSE = 11      # xᵀ of a matrix
    DIAGONAL = 12       # the main diagonal of a matrix
    SUM_BWD = 13        # backward of the sum of every entry
    LOG_BWD = 14        # backward of log: ḡ / x
    EXP_BWD = 15        # backward of exp: ḡ · y
    CHOLESKY = 16       # the lower Cholesky factor (lapack_lu_chol's plain loops)
    SOLVE = 17          # A⁻¹B by LU (lapack_lu_chol's plain loops; the factors in AUX)
    TRSV_BWD = 18       # backward of solve_triangular (left, no transpose; param: lower)

cdef enum:
    SMALL_MAX_SIDE = 32     # the stack buffers of the linalg instructions (≥ SMALL_N)

# the fields of an instruction (a row of ``code``)
cdef enum:
    F_FWD = 0           # forward opcode (PY: the op's replay function)
    F_BWD = 1           # backward opcode (PY: the op's rule)
    F_OUT = 2           # the output's slot
    F_A = 3             # the first input's slot (−1: none)
    F_B = 4             # the second input's slot (−1: none)
    F_ASRC = 5          # the slot whose values the first input reads (itself or, for
    F_ATR = 6           #   a transposed value, the value it is the transpose of: ATR 1)
    F_BSRC = 7
    F_BTR = 8
    F_CONST = 9         # the index of the constant array (−1: none)
    F_NEEDA = 10        # whether the inputs need cotangents
    F_NEEDB = 11
    F_AUX = 12          # arena offset of an instruction's own data (SOLVE: LU, pivots)
    NFIELDS = 13

OPCODES = {"PY": PY, "MATMUL": MATMUL, "ADD": ADD, "SUB": SUB, "ADD_CONST": ADD_CONST,
           "SUB_CONST": SUB_CONST, "RSUB_CONST": RSUB_CONST, "ADD_SCALAR": ADD_SCALAR,
           "SUB_SCALAR": SUB_SCALAR, "RSUB_SCALAR": RSUB_SCALAR, "SCALE": SCALE,
           "TRANSPOSE": TRANSPOSE, "DIAGONAL": DIAGONAL, "SUM_BWD": SUM_BWD,
           "LOG_BWD": LOG_BWD, "EXP_BWD": EXP_BWD, "CHOLESKY": CHOLESKY, "SOLVE": SOLVE,
           "TRSV_BWD": TRSV_BWD}
# the largest matrix side of CHOLESKY and SOLVE: the side up to which lapack_lu_chol
# takes the same plain loops (so the forward is the eager one, bit for bit)
SMALL_SIDE = SMALL_N
SMALL_BUFFER = SMALL_MAX_SIDE * SMALL_MAX_SIDE   # the entries of B (SOLVE) at most
FIELDS = {"FWD": F_FWD, "BWD": F_BWD, "OUT": F_OUT, "A": F_A, "B": F_B, "ASRC": F_ASRC,
          "ATR": F_ATR, "BSRC": F_BSRC, "BTR": F_BTR, "CONST": F_CONST,
          "NEEDA": F_NEEDA, "NEEDB": F_NEEDB, "AUX": F_AUX}
N_FIELDS = NFIELDS


cdef struct Opnd:
    double* p
    Py_ssize_t r, c       # logical rows and columns (a vector: n x 1; a scalar: 1 x 1)
    Py_ssize_t s0, s1     # their element strides
    int nd


cdef inline bint _layout(Opnd* o, int* trans, int* ld):
    """A matrix as BLAS sees it (small_ops._layout on element strides): C-ordered (trans
    0, ld = columns) or F-ordered (trans 1, ld = rows); False for other strides."""
    if o.s1 == 1 and o.s0 == o.c:
        trans[0] = 0
        ld[0] = <int>o.c
        return True
    if o.s0 == 1 and o.s1 == o.r:
        trans[0] = 1
        ld[0] = <int>o.r
        return True
    return False


cdef inline void _gemv(char* trans, int m, int n, double* a, int lda, double* x, int incx,
                       double* y) noexcept nogil:
    cdef double one = 1, zero = 0
    cdef int incy = 1
    bl.dgemv(trans, &m, &n, &one, a, &lda, x, &incx, &zero, y, &incy)


cdef bint _matmul_blas(Opnd* A, Opnd* B, double* C):
    """C = A @ B by the BLAS call np.matmul makes for these layouts (small_ops.matmul);
    False where NumPy would do something else (other strides, a product of one memory
    with itself, where it may take ?syrk)."""
    cdef int ta = 0, tb = 0, lda = 0, ldb = 0, m, n, k, inca, incb
    cdef char* tr = b"NT"
    if A.nd == 2 and B.nd == 2:
        if A.p == B.p or not _layout(A, &ta, &lda) or not _layout(B, &tb, &ldb):
            return False
        m = <int>A.r
        k = <int>A.c
        n = <int>B.c
        xgemm_ab(&tr[tb], &tr[ta], n, m, k, <double>1, B.p, ldb, A.p, lda, <double>0, C, n)
        return True
    if A.nd == 2:                       # (m, k) @ (k,)
        if not _layout(A, &ta, &lda) or B.s0 <= 0:
            return False
        incb = <int>B.s0
        if ta == 0:
            _gemv(&tr[1], <int>A.c, <int>A.r, A.p, lda, B.p, incb, C)
        else:
            _gemv(&tr[0], <int>A.r, <int>A.c, A.p, lda, B.p, incb, C)
        return True
    if B.nd == 2:                       # (k,) @ (k, n)
        if not _layout(B, &tb, &ldb) or A.s0 <= 0:
            return False
        inca = <int>A.s0
        if tb == 0:
            _gemv(&tr[0], <int>B.c, <int>B.r, B.p, ldb, A.p, inca, C)
        else:
            _gemv(&tr[1], <int>B.r, <int>B.c, B.p, ldb, A.p, inca, C)
        return True
    if A.s0 <= 0 or B.s0 <= 0:
        return False
    k = <int>A.r
    inca = <int>A.s0
    incb = <int>B.s0
    C[0] = bl.ddot(&k, A.p, &inca, B.p, &incb)
    return True


cdef inline void _acc(double* dst, double* g, Py_ssize_t n, double s, bint first) noexcept nogil:
    """dst = s·g (first) or dst += s·g."""
    cdef Py_ssize_t i
    if first:
        for i in range(n):
            dst[i] = s * g[i]
    else:
        for i in range(n):
            dst[i] += s * g[i]


cdef class Lowered:
    """The lowered program of one trace (built by tenferro/_lower.py)."""
    cdef cnp.ndarray _code, _param, _loc, _ctloc, _size, _nd, _d0, _d1
    cdef Py_ssize_t* code
    cdef double* param
    cdef Py_ssize_t* loc
    cdef Py_ssize_t* ctloc
    cdef Py_ssize_t* size
    cdef Py_ssize_t* nd
    cdef Py_ssize_t* d0
    cdef Py_ssize_t* d1
    cdef Py_ssize_t n_entries, n_slots, arena_size, ct_size, n_args
    cdef list shapes, consts, plan, ops, ctxs, ins, needs, template, guards, outs
    cdef object check
    cdef readonly Py_ssize_t n_lowered

    def __init__(self, code, param, loc, ctloc, size, nd, d0, d1, list shapes,
                 list consts, list plan, list ops, list ctxs, list ins, list needs,
                 list template, list guards, list outs, Py_ssize_t n_args, object check,
                 Py_ssize_t arena_size):
        self._code = np.ascontiguousarray(code, dtype=np.intp)
        self._param = np.ascontiguousarray(param, dtype=np.float64)
        self._loc = np.ascontiguousarray(loc, dtype=np.intp)
        self._ctloc = np.ascontiguousarray(ctloc, dtype=np.intp)
        self._size = np.ascontiguousarray(size, dtype=np.intp)
        self._nd = np.ascontiguousarray(nd, dtype=np.intp)
        self._d0 = np.ascontiguousarray(d0, dtype=np.intp)
        self._d1 = np.ascontiguousarray(d1, dtype=np.intp)
        self.code = <Py_ssize_t*>cnp.PyArray_DATA(self._code)
        self.param = <double*>cnp.PyArray_DATA(self._param)
        self.loc = <Py_ssize_t*>cnp.PyArray_DATA(self._loc)
        self.ctloc = <Py_ssize_t*>cnp.PyArray_DATA(self._ctloc)
        self.size = <Py_ssize_t*>cnp.PyArray_DATA(self._size)
        self.nd = <Py_ssize_t*>cnp.PyArray_DATA(self._nd)
        self.d0 = <Py_ssize_t*>cnp.PyArray_DATA(self._d0)
        self.d1 = <Py_ssize_t*>cnp.PyArray_DATA(self._d1)
        self.n_entries = cnp.PyArray_DIM(self._code, 0)
        self.n_slots = cnp.PyArray_DIM(self._loc, 0)
        self.arena_size = arena_size       # the values and the instructions' own data
        self.ct_size = 0
        cdef Py_ssize_t r
        for r in range(self.n_slots):
            if self.loc[r] >= 0 and self.loc[r] + self.size[r] > arena_size:
                raise ValueError("lowered: a value lies outside the arena")
            if self.ctloc[r] >= 0:
                self.ct_size = max(self.ct_size, self.ctloc[r] + self.size[r])
        self.n_lowered = 0
        for r in range(self.n_entries):
            if self.code[r * NFIELDS + F_FWD] != PY or self.code[r * NFIELDS + F_BWD] != PY:
                self.n_lowered += 1
        self.shapes = shapes
        self.consts = [np.ascontiguousarray(c, dtype=np.float64) for c in consts]
        self.plan = plan
        self.ops = ops
        self.ctxs = ctxs
        self.ins = ins
        self.needs = needs
        self.template = template
        self.guards = guards
        self.outs = outs
        self.n_args = n_args
        self.check = check

    @property
    def table(self):
        """The instructions, one row per recorded op (fields: FIELDS)."""
        return self._code

    # ---- values ------------------------------------------------------------------------
    cdef object _value(self, Py_ssize_t r, list slots, double* base):
        """Slot r's value as an ndarray (an arena value is copied out once, and kept)."""
        v = slots[r]
        if v is None and self.loc[r] >= 0:
            v = np.empty(self.shapes[r])
            memcpy(cnp.PyArray_DATA(<cnp.ndarray>v), base + self.loc[r],
                   self.size[r] * sizeof(double))
            slots[r] = v
        return v

    cdef int _opnd(self, Py_ssize_t r, bint tr, list slots, double* base, Opnd* o) except -1:
        """Slot r's values as a 2-D operand (transposed with ``tr``)."""
        cdef cnp.ndarray a
        cdef Py_ssize_t t
        if self.loc[r] >= 0:
            o.p = base + self.loc[r]
            o.nd = <int>self.nd[r]
            if o.nd == 2:
                o.r = self.d0[r]
                o.c = self.d1[r]
                o.s0 = o.c
                o.s1 = 1
            elif o.nd == 1:
                o.r = self.d0[r]
                o.c = 1
                o.s0 = 1
                o.s1 = 0
            else:
                o.r = o.c = 1
                o.s0 = o.s1 = 0
        else:
            v = slots[r]
            if type(v) is not ndarray:
                raise RuntimeError(f"lowered replay: slot {r} holds {type(v).__name__}")
            a = <cnp.ndarray>v
            if (cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or not cnp.PyArray_ISALIGNED(a)
                    or not cnp.PyArray_ISNOTSWAPPED(a) or cnp.PyArray_NDIM(a) > 2):
                raise RuntimeError(f"lowered replay: slot {r} is not an aligned float64 "
                                   "array of at most 2 dimensions")
            o.p = <double*>cnp.PyArray_DATA(a)
            o.nd = cnp.PyArray_NDIM(a)
            if o.nd == 2:
                o.r = cnp.PyArray_DIM(a, 0)
                o.c = cnp.PyArray_DIM(a, 1)
                o.s0 = cnp.PyArray_STRIDE(a, 0) // <Py_ssize_t>sizeof(double)
                o.s1 = cnp.PyArray_STRIDE(a, 1) // <Py_ssize_t>sizeof(double)
            elif o.nd == 1:
                o.r = cnp.PyArray_DIM(a, 0)
                o.c = 1
                o.s0 = cnp.PyArray_STRIDE(a, 0) // <Py_ssize_t>sizeof(double)
                o.s1 = 0
            else:
                o.r = o.c = 1
                o.s0 = o.s1 = 0
        if tr:
            t = o.r
            o.r = o.c
            o.c = t
            t = o.s0
            o.s0 = o.s1
            o.s1 = t
        return 0

    def value(self, run, Py_ssize_t r):
        """Slot r's value in a run of ``forward`` (an ndarray)."""
        return self._value(r, run[0], <double*>cnp.PyArray_DATA(<cnp.ndarray>run[2]))

    cdef object _np_operand(self, Py_ssize_t r, bint tr, list slots, double* base):
        v = self._value(r, slots, base)
        return v.T if tr else v

    # ---- forward -----------------------------------------------------------------------
    def forward(self, list arrays):
        """The outputs for the traced inputs ``arrays`` and the run for ``backward``
        (as _capture.Trace.forward; the guards raise through ``check``)."""
        cdef list slots = self.template.copy()
        cdef Py_ssize_t k, gi = 0, ng = len(self.guards)
        cdef Py_ssize_t* row
        cdef cnp.ndarray arena = np.empty(max(self.arena_size, 1))
        cdef double* base = <double*>cnp.PyArray_DATA(arena)
        cdef dict dyn_ctx = {}
        slots[:self.n_args] = arrays
        for k in range(self.n_entries):
            while gi < ng and (<tuple>self.guards[gi])[0] == k:
                self._guard(gi, slots, base)
                gi += 1
            row = self.code + k * NFIELDS
            if row[F_FWD] == PY:
                self._py_forward(k, slots, base, dyn_ctx)
            else:
                self._c_forward(k, row, slots, base)
        while gi < ng:
            self._guard(gi, slots, base)
            gi += 1
        outs = [self._value(<Py_ssize_t>r, slots, base) for r in self.outs]
        return outs, (slots, dyn_ctx, arena)

    cdef void _guard(self, Py_ssize_t gi, list slots, double* base) except *:
        guard = self.guards[gi]
        self._value(<Py_ssize_t>guard[1], slots, base)
        self.check(guard, slots)

    cdef int _py_forward(self, Py_ssize_t k, list slots, double* base, dict dyn_ctx) except -1:
        cdef tuple entry = <tuple>self.plan[k]
        cdef tuple refs = <tuple>entry[1]
        cdef Py_ssize_t first = entry[3], n_out = entry[4], i
        args = tuple([self._value(<Py_ssize_t>r, slots, base) for r in refs])
        out = entry[0](*args)
        if entry[5]:
            out, dyn_ctx[k] = out
        if n_out == 1:
            if type(out) is not ndarray:      # NumPy returns scalars for 0-d results
                out = np.asarray(out)
            slots[first] = out
        else:
            for i in range(n_out):
                slots[first + i] = out[i]
        return 0

    cdef int _c_forward(self, Py_ssize_t k, Py_ssize_t* row, list slots,
                        double* base) except -1:
        cdef Opnd A, B
        cdef Py_ssize_t out = row[F_OUT], i, j, n
        cdef double* y = base + self.loc[out]
        cdef double* c
        cdef double s = self.param[k]
        cdef int op = <int>row[F_FWD]
        self._opnd(row[F_ASRC], row[F_ATR], slots, base, &A)
        if op == MATMUL:
            self._opnd(row[F_BSRC], row[F_BTR], slots, base, &B)
            if not _matmul_blas(&A, &B, y):
                res = np.ascontiguousarray(np.matmul(
                    self._np_operand(row[F_ASRC], row[F_ATR], slots, base),
                    self._np_operand(row[F_BSRC], row[F_BTR], slots, base)))
                memcpy(y, cnp.PyArray_DATA(<cnp.ndarray>res), self.size[out] * sizeof(double))
            return 0
        if op == CHOLESKY:
            _cholesky(&A, y)
            return 0
        if op == SOLVE:
            self._opnd(row[F_BSRC], row[F_BTR], slots, base, &B)
            _lu_solve(&A, &B, y, base + row[F_AUX])
            return 0
        if op == TRANSPOSE:
            for i in range(A.r):
                for j in range(A.c):
                    y[j * A.r + i] = A.p[i * A.s0 + j * A.s1]
            return 0
        if op == DIAGONAL:
            n = min(A.r, A.c)
            for i in range(n):
                y[i] = A.p[i * A.s0 + i * A.s1]
            return 0
        if op == ADD or op == SUB:
            self._opnd(row[F_BSRC], row[F_BTR], slots, base, &B)
            if op == ADD:
                for i in range(A.r):
                    for j in range(A.c):
                        y[i * A.c + j] = A.p[i * A.s0 + j * A.s1] + B.p[i * B.s0 + j * B.s1]
            else:
                for i in range(A.r):
                    for j in range(A.c):
                        y[i * A.c + j] = A.p[i * A.s0 + j * A.s1] - B.p[i * B.s0 + j * B.s1]
            return 0
        if op == ADD_CONST or op == SUB_CONST or op == RSUB_CONST:
            c = <double*>cnp.PyArray_DATA(<cnp.ndarray>self.consts[row[F_CONST]])
            for i in range(A.r):
                for j in range(A.c):
                    if op == ADD_CONST:
                        y[i * A.c + j] = A.p[i * A.s0 + j * A.s1] + c[i * A.c + j]
                    elif op == SUB_CONST:
                        y[i * A.c + j] = A.p[i * A.s0 + j * A.s1] - c[i * A.c + j]
                    else:
                        y[i * A.c + j] = c[i * A.c + j] - A.p[i * A.s0 + j * A.s1]
            return 0
        for i in range(A.r):
            for j in range(A.c):
                if op == ADD_SCALAR:
                    y[i * A.c + j] = A.p[i * A.s0 + j * A.s1] + s
                elif op == SUB_SCALAR:
                    y[i * A.c + j] = A.p[i * A.s0 + j * A.s1] - s
                elif op == RSUB_SCALAR:
                    y[i * A.c + j] = s - A.p[i * A.s0 + j * A.s1]
                else:
                    y[i * A.c + j] = A.p[i * A.s0 + j * A.s1] * s
        return 0

    # ---- backward ----------------------------------------------------------------------
    def needs_table(self, list op_needs):
        """Per instruction, whether its two inputs get cotangents (``op_needs``: per op,
        a tuple per input, as _capture.Trace._prune gives), for ``backward``."""
        table = np.zeros((self.n_entries, 2), dtype=np.intp)
        for k, need in enumerate(op_needs):
            for i in range(min(len(need), 2)):
                table[k, i] = bool(need[i])
        return table

    def backward(self, run, tuple gs, tuple needs, list op_needs=None, table=None):
        """The cotangents of the traced inputs (as _capture.Trace.backward); with
        ``op_needs`` and its ``needs_table``, only on the paths from the inputs that
        ``needs`` marks."""
        cdef list slots = run[0]
        cdef dict dyn_ctx = run[1]
        cdef cnp.ndarray arena = run[2]
        cdef double* base = <double*>cnp.PyArray_DATA(arena)
        cdef Py_ssize_t* need2 = NULL
        cdef cnp.ndarray tab
        if op_needs is not None:
            tab = np.ascontiguousarray(table, dtype=np.intp)
            need2 = <Py_ssize_t*>cnp.PyArray_DATA(tab)
        else:
            op_needs = self.needs
        return self._backward(slots, dyn_ctx, base, gs, needs, op_needs, need2)

    cdef tuple _backward(self, list slots, dict dyn_ctx, double* base, tuple gs, tuple needs,
                         list op_needs, Py_ssize_t* need2):
        cdef cnp.ndarray cts = np.empty(max(self.ct_size, 1))
        cdef double* cb = <double*>cnp.PyArray_DATA(cts)
        cdef cnp.ndarray has_arr = np.zeros(self.n_slots, dtype=np.uint8)
        cdef unsigned char* has = <unsigned char*>cnp.PyArray_DATA(has_arr)
        cdef Py_ssize_t k, r, i
        cdef Py_ssize_t* row
        cdef bint need_a, need_b
        for i in range(len(self.outs)):
            r = self.outs[i]
            g = gs[i]
            if g is not None and self.ctloc[r] >= 0:
                self._acc_array(r, g, cb, has)
        for k in range(self.n_entries - 1, -1, -1):
            row = self.code + k * NFIELDS
            if row[F_BWD] == PY:
                self._py_backward(k, slots, base, cb, has, dyn_ctx, <tuple>op_needs[k])
            else:
                r = row[F_OUT]
                if not has[r]:
                    continue
                has[r] = 0
                need_a = row[F_NEEDA] != 0
                need_b = row[F_NEEDB] != 0
                if need2 != NULL:        # pruned to the paths from the wanted inputs
                    need_a = need_a and need2[2 * k] != 0
                    need_b = need_b and need2[2 * k + 1] != 0
                if need_a or need_b:
                    self._c_backward(k, row, cb + self.ctloc[r], slots, base, cb, has,
                                     need_a, need_b)
        result = []
        for i in range(self.n_args):
            if needs[i] and has[i]:
                g = np.empty(self.shapes[i])
                memcpy(cnp.PyArray_DATA(<cnp.ndarray>g), cb + self.ctloc[i],
                       self.size[i] * sizeof(double))
                result.append(g)
            else:
                result.append(None)
        return tuple(result)

    cdef int _acc_array(self, Py_ssize_t r, object v, double* cb,
                        unsigned char* has) except -1:
        """Add the cotangent ``v`` (a rule's result: ndarray, scalar or sparse) to slot r's."""
        cdef cnp.ndarray dense
        if hasattr(v, "densify"):
            v = v.densify()
        a = np.asarray(v)
        if a.dtype.kind == "c":
            a = a.real      # a real value's cotangent is the real part (docs/design.md)
        if a.size != self.size[r]:
            if a.size != 1:
                raise RuntimeError(f"lowered replay: a cotangent of shape {a.shape} for a "
                                   f"value of shape {self.shapes[r]}")
            a = np.broadcast_to(a.reshape(()), self.shapes[r])
        dense = np.ascontiguousarray(a, dtype=np.float64)
        _acc(cb + self.ctloc[r], <double*>cnp.PyArray_DATA(dense), self.size[r], 1.0,
             not has[r])
        has[r] = 1
        return 0

    cdef int _py_backward(self, Py_ssize_t k, list slots, double* base, double* cb,
                          unsigned char* has, dict dyn_ctx, tuple need) except -1:
        cdef tuple entry = <tuple>self.plan[k]
        cdef Py_ssize_t first = entry[3], n_out = entry[4], i, r
        cdef bint any_g = False
        cdef tuple refs
        gk = []
        for i in range(n_out):
            r = first + i
            if has[r]:
                g = np.empty(self.shapes[r])
                memcpy(cnp.PyArray_DATA(<cnp.ndarray>g), cb + self.ctloc[r],
                       self.size[r] * sizeof(double))
                has[r] = 0
                gk.append(g)
                any_g = True
            else:
                gk.append(None)
        if not any_g:
            return 0
        refs = <tuple>entry[1]
        xs = tuple([self._value(<Py_ssize_t>x, slots, base) for x in refs])
        ys = tuple([self._value(first + i, slots, base) for i in range(n_out)])
        if not any(need):
            return 0
        c = dyn_ctx[k] if entry[5] else self.ctxs[k]
        cots = self.ops[k].vjp(c, need, tuple(gk), xs, ys)
        for i in range(len(refs)):
            if need[i] and cots[i] is not None:
                self._acc_array(<Py_ssize_t>refs[i], cots[i], cb, has)
        return 0

    cdef int _c_backward(self, Py_ssize_t k, Py_ssize_t* row, double* g, list slots,
                         double* base, double* cb, unsigned char* has, bint need_a,
                         bint need_b) except -1:
        cdef Opnd A, B
        cdef Py_ssize_t a = row[F_A], b = row[F_B], i, j, l, m, n, kk
        cdef double* d
        cdef double acc
        cdef bint first
        cdef int op = <int>row[F_BWD]
        if op == MATMUL:
            self._opnd(row[F_ASRC], row[F_ATR], slots, base, &A)
            self._opnd(row[F_BSRC], row[F_BTR], slots, base, &B)
            if A.nd == 1:                    # a vector on the left is a 1 x k row
                A.c = A.r
                A.r = 1
                A.s1 = A.s0
                A.s0 = 0
            m = A.r
            kk = A.c
            n = B.c
            if need_a:                 # Ā = ḡ Bᵀ
                d = cb + self.ctloc[a]
                first = not has[a]
                for i in range(m):
                    for l in range(kk):
                        acc = 0
                        for j in range(n):
                            acc += g[i * n + j] * B.p[l * B.s0 + j * B.s1]
                        if first:
                            d[i * kk + l] = acc
                        else:
                            d[i * kk + l] += acc
                has[a] = 1
            if need_b:                 # B̄ = Aᵀ ḡ
                d = cb + self.ctloc[b]
                first = not has[b]
                for l in range(kk):
                    for j in range(n):
                        acc = 0
                        for i in range(m):
                            acc += A.p[i * A.s0 + l * A.s1] * g[i * n + j]
                        if first:
                            d[l * n + j] = acc
                        else:
                            d[l * n + j] += acc
                has[b] = 1
            return 0
        if op == ADD or op == SUB:
            if need_a:
                _acc(cb + self.ctloc[a], g, self.size[a], 1.0, not has[a])
                has[a] = 1
            if need_b:
                _acc(cb + self.ctloc[b], g, self.size[b], 1.0 if op == ADD else -1.0,
                     not has[b])
                has[b] = 1
            return 0
        if op == SOLVE or op == TRSV_BWD:
            self._solve_backward(k, row, g, slots, base, cb, has, need_a, need_b)
            return 0
        if not need_a:
            return 0
        d = cb + self.ctloc[a]
        first = not has[a]
        has[a] = 1
        if op == ADD_CONST or op == SUB_CONST or op == ADD_SCALAR or op == SUB_SCALAR:
            _acc(d, g, self.size[a], 1.0, first)
        elif op == RSUB_CONST or op == RSUB_SCALAR:
            _acc(d, g, self.size[a], -1.0, first)
        elif op == SCALE:
            _acc(d, g, self.size[a], self.param[k], first)
        elif op == TRANSPOSE:                # x is r x c, ḡ is c x r
            m = self.d0[a]
            n = self.d1[a]
            for i in range(m):
                for j in range(n):
                    if first:
                        d[i * n + j] = g[j * m + i]
                    else:
                        d[i * n + j] += g[j * m + i]
        elif op == DIAGONAL:
            m = self.d0[a]
            n = self.d1[a]
            if first:
                memset(d, 0, self.size[a] * sizeof(double))
            for i in range(min(m, n)):
                d[i * n + i] += g[i]
        elif op == CHOLESKY:
            _cholesky_backward(base + self.loc[row[F_OUT]], g, d, self.d0[a], first)
        elif op == SUM_BWD:
            for i in range(self.size[a]):
                if first:
                    d[i] = g[0]
                else:
                    d[i] += g[0]
        elif op == LOG_BWD or op == EXP_BWD:
            # ḡ/x reads the input, ḡ·y the output, each as the forward left it
            self._opnd(a if op == LOG_BWD else row[F_OUT], False, slots, base, &A)
            for i in range(A.r):
                for j in range(A.c):
                    if op == LOG_BWD:
                        acc = g[i * A.c + j] / A.p[i * A.s0 + j * A.s1]
                    else:
                        acc = g[i * A.c + j] * A.p[i * A.s0 + j * A.s1]
                    if first:
                        d[i * A.c + j] = acc
                    else:
                        d[i * A.c + j] += acc
        else:
            raise RuntimeError(f"lowered replay: no backward instruction {op}")
        return 0

    cdef int _solve_backward(self, Py_ssize_t k, Py_ssize_t* row, double* g, list slots,
                             double* base, double* cb, unsigned char* has, bint need_a,
                             bint need_b) except -1:
        """B̄ = A⁻ᵀ ḡ and Ā = −B̄ Xᵀ (SOLVE: by the forward's LU), restricted to A's
        triangle for a triangular A (TRSV_BWD: by substitution), docs/rules.md."""
        cdef Opnd A, X
        cdef Py_ssize_t a = row[F_A], b = row[F_B], i, j, c, n, nrhs, p
        cdef double gb[SMALL_MAX_SIDE * SMALL_MAX_SIDE]
        cdef blas_int ipiv[SMALL_MAX_SIDE]
        cdef double* aux
        cdef double* d
        cdef double acc
        cdef bint first, lower = self.param[k] != 0
        self._opnd(row[F_OUT], False, slots, base, &X)      # x: n x nrhs (a vector: n x 1)
        n = X.r
        nrhs = X.c
        if n > SMALL_MAX_SIDE or n * nrhs > SMALL_MAX_SIDE * SMALL_MAX_SIDE:
            raise RuntimeError("lowered replay: a solve too large for its buffers")
        for i in range(n):                                   # ḡ into Fortran order
            for c in range(nrhs):
                gb[i + c * n] = g[i * nrhs + c]
        if row[F_BWD] == SOLVE:
            aux = base + row[F_AUX]
            for i in range(n):
                ipiv[i] = <blas_int>aux[n * n + i]
            s_getrs(c'T', n, nrhs, aux, ipiv, gb)
        else:
            self._opnd(row[F_ASRC], False, slots, base, &A)
            for c in range(nrhs):                            # Aᵀ G = ḡ, column by column
                if lower:                                    # Aᵀ upper: back substitution
                    for i in range(n - 1, -1, -1):
                        acc = gb[i + c * n]
                        for p in range(i + 1, n):
                            acc -= A.p[p * A.s0 + i * A.s1] * gb[p + c * n]
                        gb[i + c * n] = acc / A.p[i * A.s0 + i * A.s1]
                else:
                    for i in range(n):
                        acc = gb[i + c * n]
                        for p in range(i):
                            acc -= A.p[p * A.s0 + i * A.s1] * gb[p + c * n]
                        gb[i + c * n] = acc / A.p[i * A.s0 + i * A.s1]
        if need_a:
            d = cb + self.ctloc[a]
            first = not has[a]
            for i in range(n):
                for j in range(n):
                    acc = 0
                    if row[F_BWD] == SOLVE or (j <= i if lower else j >= i):
                        for c in range(nrhs):
                            acc -= gb[i + c * n] * X.p[j * X.s0 + c * X.s1]
                    if first:
                        d[i * n + j] = acc
                    else:
                        d[i * n + j] += acc
            has[a] = 1
        if need_b:
            d = cb + self.ctloc[b]
            first = not has[b]
            for i in range(n):
                for c in range(nrhs):
                    if first:
                        d[i * nrhs + c] = gb[i + c * n]
                    else:
                        d[i * nrhs + c] += gb[i + c * n]
            has[b] = 1
        return 0



cdef int _cholesky(Opnd* A, double* y) except -1:
    """y = L (C-ordered, zeros above the diagonal) of A = L Lᵀ, by the loop
    lapack_lu_chol.potrf runs for a small matrix: copy, s_potrf, zero the upper triangle.
    Non-finite or not positive definite input raises (the call then runs eagerly, where
    cholesky reports it)."""
    cdef Py_ssize_t n = A.r, i, j
    cdef double v
    if n > SMALL_MAX_SIDE:
        raise RuntimeError("lowered replay: a cholesky too large for its buffers")
    for i in range(n):
        for j in range(n):
            v = A.p[i * A.s0 + j * A.s1]
            if not isfinite(v):
                raise FloatingPointError("non-finite input: cholesky runs eagerly")
            y[i * n + j] = v
    if s_potrf(y, n, True) != 0:
        raise FloatingPointError("not positive definite: cholesky runs eagerly")
    for i in range(n):
        for j in range(i + 1, n):
            y[i * n + j] = 0
    return 0


cdef int _lu_solve(Opnd* A, Opnd* B, double* y, double* aux) except -1:
    """y = A⁻¹B by the loops lapack_lu_chol's getrf and getrs run for a small matrix (A
    copied to Fortran order and factored in ``aux``, its pivots after it; B through a
    Fortran buffer). Non-finite A or an exactly singular one raises (the call then runs
    eagerly, where solve reports it)."""
    cdef Py_ssize_t n = A.r, nrhs = B.c, i, j
    cdef double buf[SMALL_MAX_SIDE * SMALL_MAX_SIDE]
    cdef blas_int ipiv[SMALL_MAX_SIDE]
    cdef double v
    if n > SMALL_MAX_SIDE or n * nrhs > SMALL_MAX_SIDE * SMALL_MAX_SIDE:
        raise RuntimeError("lowered replay: a solve too large for its buffers")
    for i in range(n):
        for j in range(n):
            v = A.p[i * A.s0 + j * A.s1]
            if not isfinite(v):
                raise FloatingPointError("non-finite input: solve runs eagerly")
            aux[i + j * n] = v
    if s_getrf(aux, n, n, ipiv) != 0:
        raise FloatingPointError("singular matrix: solve runs eagerly")
    for i in range(n):
        aux[n * n + i] = ipiv[i]
    for i in range(n):
        for j in range(nrhs):
            buf[i + j * n] = B.p[i * B.s0 + j * B.s1]
    s_getrs(c'N', n, nrhs, aux, ipiv, buf)
    for i in range(n):
        for j in range(nrhs):
            y[i * nrhs + j] = buf[i + j * n]
    return 0


cdef void _cholesky_backward(double* l, double* g, double* d, Py_ssize_t n,
                             bint first) noexcept:
    """Ā = ½(S + Sᵀ), S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ (Murray 2016; docs/rules.md#cholesky)."""
    cdef double m[SMALL_MAX_SIDE * SMALL_MAX_SIDE]
    cdef Py_ssize_t i, j, p
    cdef double acc
    for i in range(n):                    # Φ(Lᵀ L̄): its lower triangle, diagonal halved
        for j in range(n):
            if j > i:
                m[i * n + j] = 0
                continue
            acc = 0
            for p in range(i, n):
                acc += l[p * n + i] * g[p * n + j]
            m[i * n + j] = 0.5 * acc if i == j else acc
    for j in range(n):                    # L⁻ᵀ Φ: Lᵀ upper, back substitution per column
        for i in range(n - 1, -1, -1):
            acc = m[i * n + j]
            for p in range(i + 1, n):
                acc -= l[p * n + i] * m[p * n + j]
            m[i * n + j] = acc / l[i * n + i]
    for i in range(n):                    # ... L⁻¹: each row r solves r L = row
        for j in range(n - 1, -1, -1):
            acc = m[i * n + j]
            for p in range(j + 1, n):
                acc -= m[i * n + p] * l[p * n + j]
            m[i * n + j] = acc / l[j * n + j]
    for i in range(n):
        for j in range(n):
            acc = 0.5 * (m[i * n + j] + m[j * n + i])
            if first:
                d[i * n + j] = acc
            else:
                d[i * n + j] += acc
