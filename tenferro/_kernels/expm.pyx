# cython: language_level=3, boundscheck=False, wraparound=False
# cython: initializedcheck=False, cdivision=True
"""The matrix exponential and its Fréchet derivative, each one batched call.

``expm_pade(a)`` computes exp(A) by scaling and squaring with the [m/m] Padé approximant
and keeps what the Fréchet derivative reuses; ``expm_frechet(data, e, adjoint)`` then
evaluates L(A, E) (or L(Aᴴ, E) = L(A, Eᴴ)ᴴ) on that data. The algorithm and its
formulas are in the docstring of tenferro/linalg/matfuncs.py: Al-Mohy & Higham (2009),
"Computing the Fréchet derivative of the matrix exponential", Algorithm 6.4, with (m, s)
picked from ‖A‖₁ (Higham 2005, θ_m). Per matrix, with Aₛ = 2⁻ˢA and its powers A₂ₖ:

  m <= 9:  W = Σ b₂ₖ₊₁ A₂ₖ,  V = Σ b₂ₖ A₂ₖ          (A₀ = I)
  m = 13:  W = A₆W₁ + W₂,    V = A₆Z₁ + Z₂           (W₁ = b₁₃A₆ + b₁₁A₄ + b₉A₂, ...)
  U = AₛW,  Q = V − U,  X₀ = r = Q⁻¹(V + U),  Xₖ = Xₖ₋₁²,  exp(A) = Xₛ
and for E (Eₛ = 2⁻ˢE):
  M₂ = AₛEₛ + EₛAₛ,  M₂ₖ = A₂ₖ₋₂M₂ + M₂ₖ₋₂A₂                 (= L(A₂ₖ, Eₛ))
  L_W, L_V: the same combinations of the M₂ₖ (m = 13: L_W = A₆L_W₁ + M₆W₁ + L_W₂, ...)
  L_U = AₛL_W + EₛW,  L₀ = Q⁻¹(L_U + L_V + (L_U − L_V) r),  Lₖ = Xₖ₋₁Lₖ₋₁ + Lₖ₋₁Xₖ₋₁
  L(A, E) = Lₛ.
Q⁻¹ is formed (?getrf + ?getri) because L applies it again: a gemm instead of a solve
with n right-hand sides (?getrs runs at a third of gemm's speed in OpenBLAS, and getri
costs less than getrs(I)). Every matrix product is a ?gemm; the sums are loops over the
entries (with real coefficients, a complex matrix is summed as 2n² doubles).

The kernels run in double precision (double or double complex: the θ_m are for double);
float32/complex64 inputs are converted, and the caller rounds the results back. A matrix
with a non-finite 1-norm gives NaN throughout. Each matrix of the stack has its own
(m, s), and the GIL is released over the whole stack.

Layout. A C-ordered matrix is the Fortran matrix of its transpose, and C = AB is
Cᵀ = BᵀAᵀ, so every product is one gemm('N', 'N') with the operands swapped. Q is
factored and inverted Fortran-ordered (one transposing copy; see _pade for why) and used
by gemm('N', 'T').

The NumPy twins are ``expm_pade``/``expm_frechet`` in ``expm_twin.py``;
``tests/_kernels/test_expm.py`` checks that both agree.
"""
cimport scipy.linalg.cython_blas as bl
cimport scipy.linalg.cython_lapack as lp
from libc.math cimport ceil, hypot, isfinite, ldexp, log2, fabs, NAN
from libc.stdlib cimport malloc, free

from tenferro._kernels._blas cimport blas_int, cdouble

import numpy as np

from tenferro._kernels import expm_twin as _ref

__all__ = ["expm_pade", "expm_frechet"]

ctypedef fused wide_t:
    double
    cdouble

# Padé coefficients b_j of r_m(x) = p_m(x)/p_m(−x), p_m(x) = Σ b_j x^j (Higham 2005)
cdef double B3[4]
cdef double B5[6]
cdef double B7[8]
cdef double B9[10]
cdef double B13[14]
B3[:] = [120., 60., 12., 1.]
B5[:] = [30240., 15120., 3360., 420., 30., 1.]
B7[:] = [17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.]
B9[:] = [17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160.,
         110880., 3960., 90., 1.]
B13[:] = [64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
          129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
          40840800., 960960., 16380., 182., 1.]
# ‖A‖₁ bounds θ_m for degree m without scaling (double precision, Higham 2005 Table 2.3)
cdef double THETA[4]
THETA[:] = [1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
            2.097847961257068e0]
cdef double THETA13 = 5.371920351148152

# Saved slots per matrix (each n x n, C-ordered but Q⁻¹ Fortran-ordered): the scaled A,
# its even powers A₂..A₈, W, W₁, Z₁, Q⁻¹, X₀ = r, then X₁..Xₛ₋₁.
cdef enum:
    S_A = 0
    S_POW = 1
    S_W = 5
    S_W1 = 6
    S_Z1 = 7
    S_QI = 8
    S_X = 9


cdef inline double* _coefs(int m) noexcept nogil:
    if m == 3:
        return B3
    if m == 5:
        return B5
    if m == 7:
        return B7
    if m == 9:
        return B9
    return B13


cdef inline void _degree(double norm1, int* m, int* s) noexcept nogil:
    """(m, s) from ‖A‖₁ (see expm_twin._expm_degree: the 1-norm, not SciPy's η, bounds
    the derivative's truncation terms)."""
    cdef int k
    cdef int ms[4]
    ms[0] = 3; ms[1] = 5; ms[2] = 7; ms[3] = 9
    s[0] = 0
    for k in range(4):
        if norm1 <= THETA[k]:
            m[0] = ms[k]
            return
    m[0] = 13
    if norm1 > THETA13:
        s[0] = <int>ceil(log2(norm1 / THETA13))


cdef inline void mm(wide_t* c, wide_t* a, wide_t* b, blas_int n, bint acc) noexcept nogil:
    """C = AB (acc: C += AB) for C-ordered n x n matrices: Fortran Cᵀ = Bᵀ Aᵀ."""
    cdef char nn = b'N'
    cdef wide_t one = 1
    cdef wide_t beta = 1 if acc else 0
    if wide_t is double:
        bl.dgemm(&nn, &nn, &n, &n, &n, &one, b, &n, a, &n, &beta, c, &n)
    else:
        bl.zgemm(&nn, &nn, &n, &n, &n, &one, b, &n, a, &n, &beta, c, &n)


cdef inline void mm_f(wide_t* c, wide_t* f, wide_t* b, blas_int n) noexcept nogil:
    """C = FB for C-ordered C, B and a Fortran-ordered F: Fortran Cᵀ = Bᵀ Fᵀ."""
    cdef char nn = b'N', tt = b'T'
    cdef wide_t one = 1
    cdef wide_t zero = 0
    if wide_t is double:
        bl.dgemm(&nn, &tt, &n, &n, &n, &one, b, &n, f, &n, &zero, c, &n)
    else:
        bl.zgemm(&nn, &tt, &n, &n, &n, &one, b, &n, f, &n, &zero, c, &n)


cdef inline void comb(double* o1, const double* c1, double* o2, const double* c2,
                      double** x, Py_ssize_t cnt, Py_ssize_t size) noexcept nogil:
    """o1 = Σ c1[k] x[k], o2 = Σ c2[k] x[k] (k < cnt <= 4) over ``size`` doubles: one pass
    over the x[k], a loop the C compiler vectorizes (complex entries are pairs of doubles
    and the coefficients are real)."""
    cdef Py_ssize_t i
    cdef double* x0 = x[0]
    cdef double* x1 = x[1] if cnt > 1 else x0
    cdef double* x2 = x[2] if cnt > 2 else x0
    cdef double* x3 = x[3] if cnt > 3 else x0
    cdef double a0 = c1[0], b0 = c2[0]
    cdef double a1 = c1[1] if cnt > 1 else 0.0, b1 = c2[1] if cnt > 1 else 0.0
    cdef double a2 = c1[2] if cnt > 2 else 0.0, b2 = c2[2] if cnt > 2 else 0.0
    cdef double a3 = c1[3] if cnt > 3 else 0.0, b3 = c2[3] if cnt > 3 else 0.0
    if cnt == 1:
        for i in range(size):
            o1[i] = a0 * x0[i]
            o2[i] = b0 * x0[i]
    elif cnt == 2:
        for i in range(size):
            o1[i] = a0 * x0[i] + a1 * x1[i]
            o2[i] = b0 * x0[i] + b1 * x1[i]
    elif cnt == 3:
        for i in range(size):
            o1[i] = a0 * x0[i] + a1 * x1[i] + a2 * x2[i]
            o2[i] = b0 * x0[i] + b1 * x1[i] + b2 * x2[i]
    else:
        for i in range(size):
            o1[i] = a0 * x0[i] + a1 * x1[i] + a2 * x2[i] + a3 * x3[i]
            o2[i] = b0 * x0[i] + b1 * x1[i] + b2 * x2[i] + b3 * x3[i]


cdef inline void add_diag(double* o, double c, Py_ssize_t n, Py_ssize_t w) noexcept nogil:
    """o += c·I (w = 2 for complex entries)."""
    cdef Py_ssize_t i
    for i in range(n):
        o[(i * n + i) * w] += c


cdef inline void addsub(double* p, double* q, Py_ssize_t size) noexcept nogil:
    """(p, q) = (p + q, p − q)."""
    cdef Py_ssize_t i
    cdef double x, y
    for i in range(size):
        x = p[i]
        y = q[i]
        p[i] = x + y
        q[i] = x - y


cdef inline double _norm1(const wide_t[:, :, :] a, Py_ssize_t b, double* cs) noexcept nogil:
    """‖A_b‖₁: largest column sum of |A_b| (rows summed in order, as NumPy does)."""
    cdef Py_ssize_t n = a.shape[1], i, j
    cdef double r = 0.0
    for j in range(n):
        cs[j] = 0.0
    for i in range(n):
        for j in range(n):
            if wide_t is double:
                cs[j] += fabs(a[b, i, j])
            else:
                cs[j] += hypot(a[b, i, j].real, a[b, i, j].imag)
    for j in range(n):
        if cs[j] > r:
            r = cs[j]
        elif cs[j] != cs[j]:        # NaN
            return cs[j]
    return r


cdef inline void _every_other(double* c, const double* bc, int first,
                              int count) noexcept nogil:
    """c[k] = bc[first + 2k] for k < count: the odd- or the even-degree coefficients of
    the Padé table row bc, from degree ``first`` on."""
    cdef int k
    for k in range(count):
        c[k] = bc[first + 2 * k]


cdef inline void _every_slot(double** xs, wide_t* p, int count,
                             Py_ssize_t nn) noexcept nogil:
    """xs[k] = the k-th n x n slot of p (nn entries each, as doubles), k < count."""
    cdef int k
    for k in range(count):
        xs[k] = <double*>(p + k * nn)


cdef inline void _fill_nan(wide_t* x, Py_ssize_t count) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(count):
        x[i] = NAN


cdef void _pade(const wide_t[:, :, :] a, wide_t* sv, Py_ssize_t slots, int* par,
                wide_t* val, wide_t* ws, blas_int* ipiv, blas_int lwork) noexcept nogil:
    """exp(A_b) into val and the saved slots of each matrix b, whose (m, s) are
    par[2b], par[2b + 1]."""
    cdef Py_ssize_t nb = a.shape[0], n = a.shape[1], nn = n * n
    cdef Py_ssize_t w = 2 if wide_t is cdouble else 1, size = nn * w
    cdef Py_ssize_t b, i, j, k, q
    cdef int m, s, t
    cdef blas_int N = <blas_int>n, info
    cdef double sc
    cdef double* bc
    cdef double c1[4], c2[4]
    cdef double* xs[4]
    cdef wide_t *S, *A, *P, *X, *QI
    cdef wide_t* V = ws
    cdef wide_t* U = ws + nn
    cdef wide_t* work = ws + 2 * nn
    for b in range(nb):
        m = par[2 * b]
        s = par[2 * b + 1]
        if m == 0:                                # a non-finite matrix
            _fill_nan(val + b * nn, nn)
            continue
        bc = _coefs(m)
        S = sv + b * slots * nn
        A = S + S_A * nn
        sc = ldexp(1.0, -s)
        for i in range(n):
            for j in range(n):
                A[i * n + j] = a[b, i, j] * sc
        q = 3 if m == 13 else (m - 1) // 2
        P = S + S_POW * nn
        mm(P, A, A, N, False)                     # A₂
        for k in range(1, q):                     # A₂ₖ = A₂ₖ₋₂A₂
            mm(P + k * nn, P + (k - 1) * nn, P, N, False)
        _every_slot(xs, P, q, nn)
        if m == 13:
            # W₁, Z₁ (saved); W₂ into W, Z₂ into V; then W = A₆W₁ + W₂, V = A₆Z₁ + Z₂
            _every_other(c1, bc, 9, 3)
            _every_other(c2, bc, 8, 3)
            comb(<double*>(S + S_W1 * nn), c1, <double*>(S + S_Z1 * nn), c2, xs, 3, size)
            _every_other(c1, bc, 3, 3)
            _every_other(c2, bc, 2, 3)
            comb(<double*>(S + S_W * nn), c1, <double*>V, c2, xs, 3, size)
            add_diag(<double*>(S + S_W * nn), bc[1], n, w)
            add_diag(<double*>V, bc[0], n, w)
            mm(S + S_W * nn, P + 2 * nn, S + S_W1 * nn, N, True)
            mm(V, P + 2 * nn, S + S_Z1 * nn, N, True)
        else:
            _every_other(c1, bc, 3, q)
            _every_other(c2, bc, 2, q)
            comb(<double*>(S + S_W * nn), c1, <double*>V, c2, xs, q, size)
            add_diag(<double*>(S + S_W * nn), bc[1], n, w)
            add_diag(<double*>V, bc[0], n, w)
        mm(U, A, S + S_W * nn, N, False)          # U = AW
        addsub(<double*>V, <double*>U, size)      # V ← V + U, U ← Q = V − U
        # Q⁻¹ of Q itself, Fortran-ordered (QI[j n + i] = Q[i, j]): factoring Qᵀ, the
        # free C-ordered view, would pivot differently, and for a triangular Q lose its
        # exact zeros, to which a nonnormal A's squarings are sensitive
        QI = S + S_QI * nn
        for i in range(n):
            for j in range(n):
                QI[j * n + i] = U[i * n + j]
        if wide_t is double:
            lp.dgetrf(&N, &N, QI, &N, ipiv, &info)
        else:
            lp.zgetrf(&N, &N, QI, &N, ipiv, &info)
        if info == 0:
            if wide_t is double:
                lp.dgetri(&N, QI, &N, ipiv, work, &lwork, &info)
            else:
                lp.zgetri(&N, QI, &N, ipiv, work, &lwork, &info)
        if info != 0:      # Q singular: not for a finite A (κ(Q) is bounded), but be safe
            _fill_nan(val + b * nn, nn)
            par[2 * b] = 0
            continue
        X = S + S_X * nn
        mm_f(X, QI, V, N)                         # X₀ = r = Q⁻¹(V + U)
        if s == 0:
            for i in range(nn):
                val[b * nn + i] = X[i]
        for t in range(1, s + 1):                 # Xₜ = Xₜ₋₁², Xₛ = exp(A)
            if t < s:
                mm(X + nn, X, X, N, False)
                X = X + nn
            else:
                mm(val + b * nn, X, X, N, False)


cdef void _frechet(const wide_t* sv, Py_ssize_t slots, const int* par,
                   const wide_t[:, :, :] e, wide_t* out, wide_t* ws,
                   bint adjoint) noexcept nogil:
    cdef Py_ssize_t nb = e.shape[0], n = e.shape[1], nn = n * n
    cdef Py_ssize_t w = 2 if wide_t is cdouble else 1, size = nn * w
    cdef Py_ssize_t b, i, j, k, q
    cdef int m, s, t
    cdef blas_int N = <blas_int>n
    cdef double sc
    cdef double* bc
    cdef double c1[4], c2[4]
    cdef double* xs[4]
    cdef wide_t *S, *A, *P, *X, *O, *tmp
    cdef wide_t* E = ws
    cdef wide_t* M = ws + nn             # M₂, M₄, M₆, M₈
    cdef wide_t* LW = ws + 5 * nn
    cdef wide_t* LV = ws + 6 * nn
    cdef wide_t* T1 = ws + 7 * nn
    cdef wide_t* T2 = ws + 8 * nn
    for b in range(nb):
        m = par[2 * b]
        s = par[2 * b + 1]
        O = out + b * nn
        if m == 0:
            _fill_nan(O, nn)
            continue
        bc = _coefs(m)
        S = <wide_t*>sv + b * slots * nn
        A = S + S_A * nn
        P = S + S_POW * nn
        sc = ldexp(1.0, -s)
        if adjoint:                       # Eₛ = 2⁻ˢ Eᴴ
            for i in range(n):
                for j in range(n):
                    if wide_t is double:
                        E[i * n + j] = e[b, j, i] * sc
                    else:
                        E[i * n + j] = e[b, j, i].conjugate() * sc
        else:
            for i in range(n):
                for j in range(n):
                    E[i * n + j] = e[b, i, j] * sc
        q = 3 if m == 13 else (m - 1) // 2
        mm(M, A, E, N, False)                                  # M₂ = AE + EA
        mm(M, E, A, N, True)
        for k in range(1, q):                                  # M₂ₖ = A₂ₖ₋₂M₂ + M₂ₖ₋₂A₂
            mm(M + k * nn, P + (k - 1) * nn, M, N, False)
            mm(M + k * nn, M + (k - 1) * nn, P, N, True)
        _every_slot(xs, M, q, nn)
        if m == 13:
            # L_W = A₆L_W₁ + M₆W₁ + L_W₂,  L_V = A₆L_Z₁ + M₆Z₁ + L_Z₂
            _every_other(c1, bc, 3, 3)
            _every_other(c2, bc, 9, 3)
            comb(<double*>LW, c1, <double*>T1, c2, xs, 3, size)
            _every_other(c1, bc, 2, 3)
            _every_other(c2, bc, 8, 3)
            comb(<double*>LV, c1, <double*>T2, c2, xs, 3, size)
            mm(LW, P + 2 * nn, T1, N, True)
            mm(LW, M + 2 * nn, S + S_W1 * nn, N, True)
            mm(LV, P + 2 * nn, T2, N, True)
            mm(LV, M + 2 * nn, S + S_Z1 * nn, N, True)
        else:
            _every_other(c1, bc, 3, q)
            _every_other(c2, bc, 2, q)
            comb(<double*>LW, c1, <double*>LV, c2, xs, q, size)
        mm(T1, A, LW, N, False)                                # L_U = AL_W + EW
        mm(T1, E, S + S_W * nn, N, True)
        addsub(<double*>T1, <double*>LV, size)                 # T1 ← L_U + L_V, LV ← L_U − L_V
        X = S + S_X * nn
        mm(T1, LV, X, N, True)                                 # + (L_U − L_V) r
        mm_f(T2, S + S_QI * nn, T1, N)                         # L₀ = Q⁻¹(...)
        for t in range(s):                                     # Lₜ₊₁ = XₜLₜ + LₜXₜ
            mm(T1, X, T2, N, False)
            mm(T1, T2, X, N, True)
            tmp = T1
            T1 = T2
            T2 = tmp
            X = X + nn
        if adjoint:                                            # out = Lᴴ
            for i in range(n):
                for j in range(n):
                    if wide_t is double:
                        O[i * n + j] = T2[j * n + i]
                    else:
                        O[i * n + j] = T2[j * n + i].conjugate()
        else:
            for i in range(nn):
                O[i] = T2[i]


cdef blas_int _getri_lwork(blas_int n, bint cplx) noexcept nogil:
    """The optimal ?getri workspace (blocked inverse; a small one runs unblocked at a
    fraction of the speed)."""
    cdef blas_int info, lwork = -1
    cdef double dw
    cdef cdouble zw
    if cplx:
        lp.zgetri(&n, &zw, &n, NULL, &zw, &lwork, &info)
        lwork = <blas_int>zw.real
    else:
        lp.dgetri(&n, &dw, &n, NULL, &dw, &lwork, &info)
        lwork = <blas_int>dw
    return lwork if lwork > n else n


# Reused workspaces by (kernel, dtype): fresh ones cost page faults (glibc returns the
# freed megabytes of each forward + backward to the system: ~2000 faults, ~1 ms, per
# call at n = 256, 15% of the f64 total). A caller takes its buffer out of the dict
# while it runs (so concurrent threads never share one) and puts it back after;
# buffers over _KEEP bytes are not kept.
cdef dict _WORK = {}
cdef Py_ssize_t _KEEP = 1 << 26


cdef object _take_work(object key, object dt, Py_ssize_t size):
    w = _WORK.pop(key, None)
    if w is None or w.shape[0] < size:
        w = np.empty(max(size, 1), dt)
    return w


cdef inline void _put_work(object key, object w):
    if w.nbytes <= _KEEP:
        _WORK[key] = w


cdef tuple _pade_run(const wide_t[:, :, :] a, int[:, ::1] par, object dt):
    cdef Py_ssize_t nb = a.shape[0], n = a.shape[1], b, smax = 0, slots
    cdef int m, s
    cdef double norm1
    cdef bint cplx = wide_t is cdouble
    cdef blas_int lwork = _getri_lwork(<blas_int>n, cplx)
    cdef double* cs = <double*>malloc(n * sizeof(double))
    cdef blas_int* ipiv = <blas_int*>malloc(n * sizeof(blas_int))
    if cs == NULL or ipiv == NULL:
        free(cs)
        free(ipiv)
        raise MemoryError()
    key = ("pade", dt.char)
    w = _take_work(key, dt, 2 * n * n + lwork)
    cdef wide_t[::1] wv = w
    with nogil:                 # (m, s) first, to size the saved squarings
        for b in range(nb):
            norm1 = _norm1(a, b, cs)
            if isfinite(norm1):
                _degree(norm1, &m, &s)
            else:
                m = 0
                s = 0
            par[b, 0] = m
            par[b, 1] = s
            if s > smax:
                smax = s
    free(cs)
    slots = S_X + (smax if smax > 1 else 1)
    saved = np.empty((nb, slots, n, n), dt)
    val = np.empty((nb, n, n), dt)
    cdef wide_t[:, :, :, ::1] sv = saved
    cdef wide_t[:, :, ::1] vv = val
    with nogil:
        _pade(a, &sv[0, 0, 0, 0], slots, &par[0, 0], &vv[0, 0, 0], &wv[0], ipiv, lwork)
    free(ipiv)
    _put_work(key, w)
    return val, saved


cdef object _frechet_run(const wide_t[:, :, :, ::1] sv, const int[:, ::1] par,
                         const wide_t[:, :, :] e, object dt, bint adjoint):
    cdef Py_ssize_t nb = e.shape[0], n = e.shape[1]
    out = np.empty((nb, n, n), dt)
    cdef wide_t[:, :, ::1] ov = out
    key = ("frechet", dt.char)
    w = _take_work(key, dt, 9 * n * n)
    cdef wide_t[::1] wv = w
    with nogil:
        _frechet(&sv[0, 0, 0, 0], sv.shape[1], &par[0, 0], e, &ov[0, 0, 0], &wv[0],
                 adjoint)
    _put_work(key, w)
    return out


cdef inline object _flat(object x):
    """x (*batch, n, n) viewed (nb, n, n) (a copy only when the batch axes do not merge)."""
    if x.ndim == 3:
        return x
    cdef Py_ssize_t n = x.shape[x.ndim - 1]
    return x.reshape((-1, n, n))


cdef inline object _wide(object a):
    """a as float64 or complex128 (a copy only for another dtype)."""
    cdef str c = a.dtype.char
    if c == "d" or c == "D":
        return a
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def expm_pade(a):
    """(exp(a), data) for ``a`` (*batch, n, n) a real or complex floating ndarray (any
    strides), computed in double precision: the result is float64 or complex128.
    ``data`` = (saved, par) is what ``expm_frechet`` reuses: par (nb, 2) int32 holds the
    (m, s) of each matrix, (0, 0) for a matrix with a non-finite entry (whose results
    are NaN). Empty stacks go to the NumPy twin."""
    a = _wide(a)
    if a.size == 0:
        return _ref.expm_pade(a)
    a3 = _flat(a)
    dt = a.dtype
    par = np.empty((a3.shape[0], 2), np.int32)
    if dt.kind == "c":
        val, saved = _pade_run[cdouble](a3, par, dt)
    else:
        val, saved = _pade_run[double](a3, par, dt)
    return (val if a.ndim == 3 else val.reshape(a.shape)), (saved, par)


def expm_frechet(data, e, adjoint=False):
    """L(A, E), or with ``adjoint`` L(Aᴴ, E) = L(A, Eᴴ)ᴴ, for the A of ``data`` (from
    ``expm_pade``) and ``e`` of A's shape (any strides), converted to A's computing
    dtype (float64 or complex128, which the result has: for a real A, a complex E must
    be split by the caller)."""
    saved, par = data
    if e.size == 0 or type(saved) is list:      # an empty stack: data of the twin
        return _ref.expm_frechet(data, e, adjoint)
    dt = saved.dtype
    if e.dtype != dt:
        e = e.astype(dt)
    e3 = _flat(e)
    if e3.shape[0] != saved.shape[0] or e3.shape[2] != saved.shape[2]:
        raise ValueError(f"expm_frechet: E of shape {e.shape} does not fit the data of "
                         f"{saved.shape[0]} matrices {saved.shape[2]} x {saved.shape[2]}")
    if dt.kind == "c":
        out = _frechet_run[cdouble](saved, par, e3, dt, adjoint)
    else:
        out = _frechet_run[double](saved, par, e3, dt, adjoint)
    return out if e.ndim == 3 else out.reshape(e.shape)
