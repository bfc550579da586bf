"""The truncated SVD of tf.linalg.svd(a, max_rank=..., rtol=..., atol=...) and its exact
derivative (the derivative of "full SVD, then keep the first k triplets").

Keeping k of the K = min(m, n) singular triplets, A = U S Vᴴ + A⊥ with U (m, k), V (n, k)
the kept vectors and A⊥ = P A Q the discarded part, P = I − UUᴴ, Q = I − VVᴴ. The kept
vectors still move when the discarded ones do not appear in the loss: differentiating
A v_j = s_j u_j and Aᴴ u_j = s_j v_j and projecting with P and Q gives, for each kept j,
the components x_j = P u̇_j, y_j = Q v̇_j as the solution of

    [ s_j I    −A⊥  ] [x_j]   [P Ȧ v_j ]
    [ −A⊥ᴴ    s_j I ] [y_j] = [Q Ȧᴴ u_j],                                           (1)

i.e. x_j = (s_j² I − A⊥A⊥ᴴ)⁻¹ (s_j P Ȧ v_j + A⊥ Q Ȧᴴ u_j), y_j = (QȦᴴu_j + A⊥ᴴ x_j)/s_j,
which is the full SVD rule's coupling to every discarded triplet i,
Σ_i u_i (s_j u_iᴴȦv_j + s_i v_iᴴȦᴴu_j)/(s_j² − s_i²), plus the null-space terms, summed in
closed form (Francuz, Schuch, Vanhecke, "Stable and efficient differentiation of tensor
network algorithms", Phys. Rev. Research 7, 013237 (2025), arXiv:2311.11894, who show
that the thin rule on the kept triplets is only approximate; MatrixAlgebraKit.jl and
KrylovKit.jl solve the same coupling as a Sylvester equation). The thin-SVD rule applied
to the kept triplets alone sets A⊥ = 0 in (1): x_j = P Ȧ v_j / s_j, exact only when every
discarded singular value is zero.

The operator of (1) is Hermitian, so the reverse rule solves the same system with the
projected cotangents as right-hand side: with Ū, V̄ the cotangents of U, V,

    L_j [p_j; q_j] = [P ū_j; Q v̄_j],   Ā = U core Vᴴ + Pmat Vᴴ + U Qmatᴴ,          (2)

where core is the thin rule's k x k core among the kept triplets (broadened F, s̄, the
complex phase term; docs/rules.md#svd) and Pmat = [p_j], Qmat = [q_j].

How (1)/(2) are solved: on ndarrays (plain backward, forward mode) by conjugate gradients
on s_j² I − A⊥A⊥ᴴ (positive definite: its eigenvalues are s_j² − s_i² > 0 and s_j²), all
k columns at once, products with A and Aᴴ only, preconditioned by the exact inverse on the
span of the extra Ritz vectors the primal computed (so the iteration count depends on
s_j²/(s_j² − s_{k+p+1}²), not on the gap at the cut), run as mixed-precision iterative
refinement (single-precision CG corrections, double-precision residuals, to a relative
residual of 1e-12), with a double-precision finish and, if CG exceeds its budget, the
eigendecomposition of A⊥A⊥ᴴ as the last resort. On Tensors (create_graph,
forward-over-reverse) by a dense solve with tf.linalg.solve of the k shifted m x m
systems, which records differentiable ops: second order is exact, at O(k m³) cost.

The primal of this op (used when max_rank is small against min(m, n), see
``_use_partial``) is scipy.sparse.linalg.svds(solver="propack", tol=0) for k + p triplets
with a fixed seed (deterministic), followed by one Rayleigh–Ritz step on A V. When the
cut is degenerate (s_k² − s_{k+1}² within ~1e5 ε of the broadening ε) or a kept singular
value is ~0, the full path is taken instead, so the broadening of tf.linalg.svd applies.
"""
from typing import Any

import numpy as np

from .._engine import apply
from .._errors import ShapeError
from .._ops.registry import defop
from .._tensor import Tensor
from .svd import (_check_phase, _core_tensor, _data, _gap_inverse, _input_tangent, _poles,
                  _same_block, _svd, _svd_delta, _svd_eps2, adapt_degenerate_basis)
from ._common import mH
from .solve import solve_in_rule

__all__: list[str] = []

# measured crossover of primal + gradient, partial / full (one thread; docs/truncated_svd.md):
# Gaussian matrices (flat spectrum, the worst case) gain for max_rank <= 5% of min(m, n)
# from min(m, n) ~ 300 on (0.84 at 300 x 300, k = 9; 0.76 at 1000, k = 50; 1.15 at 1000,
# k = 100), decaying spectra up to ~10% (0.53 at 300, k = 9; 0.51 at 1000, k = 100)
_PARTIAL_MIN_DIM = 300
_PARTIAL_MAX_FRACTION = 0.05
_EXTRA = 16           # extra Ritz triplets p: the preconditioner's subspace
_SEED = 20231118      # svds start vector: the partial primal is deterministic
_SAFE = 1e5           # gap (in units of ε) below which the full path's broadening matters


# ---- argument checks ----------------------------------------------------------------------

def check_truncation(max_rank: Any, rtol: Any, atol: Any, full_matrices: Any,
                     name: str = "tf.linalg.svd"
                     ) -> tuple[int | None, float | None, float | None] | None:
    """(max_rank, rtol, atol) validated (each a number or None), or None when no truncation
    is asked."""
    if max_rank is None and rtol is None and atol is None:
        return None
    if max_rank is not None:
        if isinstance(max_rank, (bool, np.bool_)) or not isinstance(max_rank,
                                                                    (int, np.integer)):
            raise ShapeError(f"{name}: max_rank must be a positive int or None, got "
                             f"{max_rank!r}")
        if max_rank < 1:
            raise ShapeError(f"{name}: max_rank must be >= 1, got {max_rank}; pass None to "
                             "keep every singular value above the tolerances")
        max_rank = int(max_rank)
    tols: list[float | None] = []
    for what, v in (("rtol", rtol), ("atol", atol)):
        if v is None:
            tols.append(None)
            continue
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name}: {what} must be a real number or None, got {v!r}")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise TypeError(f"{name}: {what} must be a real number or None, got {v!r}") \
                from None
        if not (f >= 0 and np.isfinite(f)):
            raise ShapeError(f"{name}: {what} must be finite and >= 0, got {v!r}")
        tols.append(f)
    if full_matrices:
        raise ShapeError(f"{name}: full_matrices=True cannot be combined with max_rank/rtol/"
                         "atol (a truncated SVD has k columns of u, not m); use "
                         "full_matrices=False")
    return max_rank, tols[0], tols[1]


def _kept(s: Any, kmax: Any, rtol: Any, atol: Any) -> Any:
    """k: how many leading singular values (descending, (..., K) ndarray) are kept — those
    with index < kmax and s_i > max(atol, rtol·s_max); the maximum over a stack."""
    s = s[..., :kmax]
    if (rtol is None and atol is None) or s.size == 0:
        return s.shape[-1]
    thr = np.maximum(atol or 0.0, (rtol or 0.0) * s[..., :1])
    return int(np.max(np.sum(s > thr, axis=-1)))


# ---- entry point ---------------------------------------------------------------------------

def svd_truncated(a: Any, max_rank: Any, rtol: Any, atol: Any, derivative_eps: Any,
                  check_gauge: Any) -> Any:
    """The SVDResult fields (u, s, vt) of the k kept triplets (see svd's docstring)."""
    d = a._data
    m, n = d.shape[-2:]
    K = min(m, n)
    kmax = K if max_rank is None else min(max_rank, K)
    if _use_partial(d, kmax):
        res = _partial(a, kmax, rtol, atol, derivative_eps, check_gauge)
        if res is not None:
            return res
    # full path: exactly "full SVD, then keep k" — every derivative order is tf.linalg.svd's
    u, s, vt = _svd(a, False, derivative_eps, check_gauge, False)
    k = _kept(s._data, kmax, rtol, atol)
    if k == K:
        return u, s, vt
    return u[..., :, :k], s[..., :k], vt[..., :k, :]


def _use_partial(d: Any, kmax: Any) -> Any:
    m, n = d.shape[-2:]
    K = min(m, n)
    return (d.size > 0 and K >= _PARTIAL_MIN_DIM and kmax <= _PARTIAL_MAX_FRACTION * K
            and kmax + 2 < K)


def _top_triplets(A: Any, l: Any) -> Any:
    """The l largest singular triplets of the matrix A (float64/complex128), descending:
    svds (PROPACK Lanczos bidiagonalization, tol=0, fixed seed), then a Rayleigh–Ritz step
    on the span of A V (the small SVD of QᴴA, Q = orth(A V)), which makes s and the vectors
    agree with LAPACK's to rounding."""
    from scipy.sparse.linalg import svds
    try:
        _, _, vt = svds(A, k=l, solver="propack", tol=0, random_state=_SEED)
    except np.linalg.LinAlgError:
        # PROPACK stops on an exactly low-rank matrix (an invariant Krylov subspace) or
        # without convergence: LAPACK's full SVD of this matrix, its l leading triplets
        u, s, vt = np.linalg.svd(A, full_matrices=False)
        return u[:, :l], s[:l], vt[:l]
    Q = np.linalg.qr(A @ mH(vt))[0]
    ub, s, vt = np.linalg.svd(mH(Q) @ A, full_matrices=False)
    return Q @ ub, s, vt


def _partial(a: Any, kmax: Any, rtol: Any, atol: Any, derivative_eps: Any,
             check_gauge: Any) -> Any:
    d = a._data
    batch, (m, n) = d.shape[:-2], d.shape[-2:]
    K = min(m, n)
    work = np.complex128 if d.dtype.kind == "c" else np.float64
    l = min(kmax + max(_EXTRA, 1), K - 1)      # >= k + 1: s_{k+1} tells a degenerate cut
    flat = d.reshape((-1, m, n)).astype(work, copy=False)
    trip = [_top_triplets(A, l) for A in flat]
    U = np.stack([t[0] for t in trip]).reshape(batch + (m, l))
    S = np.stack([t[1] for t in trip]).reshape(batch + (l,))
    Vt = np.stack([t[2] for t in trip]).reshape(batch + (l, n))
    k = _kept(S, kmax, rtol, atol)
    if k == 0:
        return None
    real = np.finfo(d.dtype).dtype
    eps2 = _svd_eps2(S.astype(real), m, n, derivative_eps)   # ε² per matrix
    eps = np.sqrt(eps2)
    sk2 = S[..., k - 1] ** 2
    if np.any(sk2 - S[..., k] ** 2 <= _SAFE * eps) or np.any(sk2 <= _SAFE * eps):
        # degenerate cut or a kept ~0 value: the full path (its broadening) applies
        return None
    outs = (U[..., :, :k].astype(d.dtype), S[..., :k].astype(real),
            Vt[..., :k, :].astype(d.dtype))
    t = _input_tangent(a)
    if t is not None:
        # forward mode: the basis in which each degenerate block of the kept values splits
        u, sk, vt = outs
        v = np.ascontiguousarray(mH(vt))
        adapt_degenerate_basis(u, sk, v, t, _svd_delta(S, m, n), True)
        outs = (u, sk, np.ascontiguousarray(mH(v)))
    extras = (U[..., :, k:], mH(Vt[..., k:, :]), S[..., k:])
    ctx = (derivative_eps, bool(check_gauge), extras)
    return apply(_trunc_op, (a,), outs, ctx)


# ---- the coupling to the discarded subspace: system (1) ----------------------------------

def _coupling_solve(A: Any, U: Any, V: Any, s: Any, ru: Any, rv: Any, extras: Any) -> Any:
    """(X, Y) with columns (x_j, y_j) solving (1) for right-hand sides ru (..., m, k) in the
    range of P and rv (..., n, k) in the range of Q (None = 0). Tensors: dense solve
    (differentiable); ndarrays: _refined_solve (preconditioned CG, mixed precision)."""
    m, n = A.shape[-2:]
    if m > n:
        # solve on the smaller side: (1) for Aᴴ is (1) with the roles of U, V swapped
        Y, X = _coupling_solve(mH(A), V, U, s, rv, ru,
                               None if extras is None else (extras[1], extras[0], extras[2]))
        return X, Y
    if ru is None and rv is None:
        return None, None
    tensors = any(isinstance(x, Tensor) for x in (A, U, V, s, ru, rv))
    if not tensors:
        work = np.complex128 if A.dtype.kind == "c" else np.float64
        A, U, V = (x.astype(work, copy=False) for x in (A, U, V))
        s = s.astype(np.float64, copy=False)
        ru = None if ru is None else ru.astype(work, copy=False)
        rv = None if rv is None else rv.astype(work, copy=False)

    def proj_u(Z: Any) -> Any:  # P Z
        return Z - U @ (mH(U) @ Z)

    def proj_v(Z: Any) -> Any:  # Q Z
        return Z - V @ (mH(V) @ Z)

    # b_j = s_j ru_j + A⊥ rv_j (A⊥ rv = P A rv for rv in the range of Q)
    b = None if ru is None else ru * s[..., None, :]
    if rv is not None:
        Arv = proj_u(A @ rv)
        b = Arv if b is None else b + Arv
    s2 = s * s
    if tensors:
        X = _dense_shifted_solve(A, U, V, s2, b)
    else:
        X = _refined_solve(A, U, V, s, b, extras[0], extras[2])
    # y_j = (rv_j + A⊥ᴴ x_j)/s_j, A⊥ᴴ x = Q Aᴴ x for x in the range of P
    AhX = proj_v(mH(A) @ X)
    Y = AhX if rv is None else AhX + rv
    return X, Y / s[..., None, :]


def _dense_shifted_solve(A: Any, U: Any, V: Any, s2: Any, b: Any) -> Any:
    """x_j = (s_j² I − A⊥A⊥ᴴ)⁻¹ b_j for every column j by tf.linalg.solve, one shifted
    m x m system at a time (memory m², not k m²; differentiable: the create_graph path)."""
    m = A.shape[-2]
    PA = A - U @ (mH(U) @ A)
    Aperp = PA - (PA @ V) @ mH(V)
    M = Aperp @ mH(Aperp)
    eye = np.eye(m, dtype=A.dtype)
    cols = []
    for j in range(b.shape[-1]):
        T = eye * s2[..., j, None, None].astype(A.dtype) - M
        cols.append(solve_in_rule(T, b[..., :, j:j + 1],
                                  "tf.linalg.svd(max_rank=...) backward"))
    return np.concatenate(cols, axis=-1)


def _apply_M(A: Any, U: Any, V: Any) -> Any:
    """Z -> A⊥A⊥ᴴ Z = P A (Q Aᴴ (P Z)) with the projectors applied as products."""
    def apply_M(Z: Any) -> Any:
        Z = Z - U @ (mH(U) @ Z)
        Y = mH(A) @ Z
        Y = Y - V @ (mH(V) @ Y)
        Z = A @ Y
        return Z - U @ (mH(U) @ Z)
    return apply_M


_TOL = 1e-12          # relative residual of the solves of (1)
_INNER_TOL = 1e-5     # relative residual of the single-precision correction solves


def _refined_solve(A: Any, U: Any, V: Any, s: Any, b: Any, W: Any, w: Any) -> Any:
    """x_j = (s_j² I − A⊥A⊥ᴴ)⁻¹ b_j (ndarrays, float64/complex128) to the relative
    residual _TOL, by mixed-precision iterative refinement: the correction equations are
    solved by PCG in single precision (on A / s_max, half the cost of the products with A),
    the residuals are formed in double precision; each refinement step gains ~5 digits
    while κ·eps(float32) ≪ 1. If a step gains less than a factor 10 (an ill-conditioned
    system), the rest is solved by PCG in double precision."""
    apply_M = _apply_M(A, U, V)
    s2 = s * s
    w2 = w * w
    if b.size == 0:
        return b
    m, n = A.shape[-2:]
    # iteration budget: CG is abandoned for the O(m³) eigendecomposition once it would
    # cost more (an iteration is ~4mnk flops, the eigendecomposition ~10m³)
    budget = int(max(50, min(2 * m + 50, 2.5 * m * m / (n * b.shape[-1]))))
    target = _TOL * np.sqrt(_dot(b, b))                         # (..., k)
    smax = s[..., :1]                                           # (..., 1): s is descending
    low = np.complex64 if A.dtype.kind == "c" else np.float32
    A32 = (A / smax[..., None]).astype(low)
    U32, V32, W32 = U.astype(low), V.astype(low), W.astype(low)
    s2_32 = (s2 / (smax * smax)).astype(np.float32)
    w2_32 = (w2 / (smax * smax)).astype(np.float32)
    apply_M32 = _apply_M(A32, U32, V32)
    x = np.zeros_like(b)
    r = b
    rnorm = np.sqrt(_dot(r, r))
    for _ in range(6):
        if np.all(rnorm <= target):
            return x
        scale = np.where(rnorm > 0, rnorm, 1)                   # (..., k)
        # relative accuracy asked of this correction: no more than the last step needs
        inner = np.maximum(_INNER_TOL, 0.3 * target / scale).astype(np.float32)
        d = _shifted_pcg(apply_M32, s2_32, (r / scale[..., None, :]).astype(low), W32,
                         w2_32, inner, maxiter=2 * budget)
        d = d.astype(b.dtype) * (scale / (smax * smax))[..., None, :]
        x = x + (d - U @ (mH(U) @ d))                           # keep x in range(P)
        r = b - (x * s2[..., None, :] - apply_M(x))
        new = np.sqrt(_dot(r, r))
        stalled = np.any((new > target) & (new > 0.1 * rnorm))
        rnorm = new
        if stalled:
            break
    if np.all(rnorm <= target):
        return x
    x = x + _shifted_pcg(apply_M, s2, r, W, w2, target, maxiter=budget)
    r = b - (x * s2[..., None, :] - apply_M(x))
    if np.all(np.sqrt(_dot(r, r)) <= 10 * target):
        return x
    # CG did not converge (many singular values clustered just below the cut, beyond the
    # extra Ritz vectors): the spectral decomposition of A⊥A⊥ᴴ, O(m³) like the full SVD
    return _eigh_shifted_solve(A, U, V, s2, b)


def _eigh_shifted_solve(A: Any, U: Any, V: Any, s2: Any, b: Any) -> Any:
    """x_j = (s_j² I − A⊥A⊥ᴴ)⁻¹ b_j by the eigendecomposition A⊥A⊥ᴴ = Z diag(θ) Zᴴ
    (ndarrays; the last resort of _refined_solve)."""
    PA = A - U @ (mH(U) @ A)
    Aperp = PA - (PA @ V) @ mH(V)
    theta, Z = np.linalg.eigh(Aperp @ mH(Aperp))
    c = mH(Z) @ b
    return Z @ (c / (s2[..., None, :] - theta[..., :, None]))


def _dot(x: Any, y: Any) -> Any:
    """Re Σ_rows conj(x)∘y: the column-wise inner products, (..., k)."""
    return np.real(np.sum(x.conj() * y, axis=-2))


def _shifted_pcg(apply_M: Any, s2: Any, b: Any, W: Any, w2: Any, target: Any,
                 maxiter: Any = None) -> Any:
    """Conjugate gradients for (s2_j I − M) x_j = b_j, all columns j of b at once, M
    Hermitian positive semidefinite with ‖M‖ < s2_j (``apply_M`` maps (..., m, c) to
    (..., m, c)). Preconditioner: the exact inverse on span(W) (orthonormal approximate
    top eigenvectors of M, eigenvalues w2) and 1/s2_j on its complement. A column stops
    when its residual is below target_j (..., k) (in every matrix of a stack); it goes
    on with the others only, so the products with A get narrower as columns converge
    (those far from the cut converge first)."""
    dot = _dot
    act = np.arange(b.shape[-1])
    s2c = s2[..., None, :]
    c = mH(W) @ b
    x = (b - W @ c) / s2c + W @ (c / (s2c - w2[..., :, None]))
    r = b - (x * s2c - apply_M(x))
    if maxiter is None:
        maxiter = 2 * b.shape[-2] + 50
    p: Any = None
    rz: Any = None
    for _ in range(maxiter):
        done = np.sqrt(dot(r, r)) <= target[..., act]
        if done.ndim > 1:
            done = done.reshape(-1, done.shape[-1]).all(axis=0)
        if done.all():
            break
        if done.any():
            keep = ~done
            act, r = act[keep], r[..., keep]
            if p is not None:
                p, rz = p[..., keep], rz[..., keep]
        sc = s2[..., None, act]
        cr = mH(W) @ r
        z = (r - W @ cr) / sc + W @ (cr / (sc - w2[..., :, None]))     # preconditioner
        rz_new = dot(r, z)
        if p is None:
            p = z
        else:
            beta = np.where(rz > 0, rz_new / np.where(rz > 0, rz, 1), 0)
            p = z + p * beta[..., None, :]
        rz = rz_new
        Tp = p * sc - apply_M(p)
        den = dot(p, Tp)
        alpha = np.where(den > 0, rz / np.where(den > 0, den, 1), 0)
        x[..., act] += p * alpha[..., None, :]
        r = r - Tp * alpha[..., None, :]
    return x


# ---- rules ---------------------------------------------------------------------------------

def _trunc_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    gu, sbar, gvt = gs
    u, s, vt = ys
    A = xs[0]
    m, n = A.shape[-2:]
    if gu is None and gvt is None:
        # exact path (no F, no coupling): Ā = U diag(s̄) Vᴴ
        return (None if sbar is None else (u * sbar[..., None, :]) @ vt,)
    derivative_eps, check_gauge, extras = ctx
    X = None if gu is None else mH(u) @ gu                # UᴴŪ
    Y = None if gvt is None else vt @ mH(gvt)             # VᴴV̄
    if check_gauge and u.dtype.kind == "c":
        _check_phase(None if X is None else _data(X), None if Y is None else _data(Y),
                     None if gu is None else _data(gu), None if gvt is None else _data(gvt),
                     s.shape[:-1], "tf.linalg.svd(max_rank=...)", "singular vectors")
    eps2 = _svd_eps2(_data(s), m, n, derivative_eps).astype(s.dtype)
    sd = _data(s)
    core, _ = _core_tensor(X, Y, s, sbar, eps2, _same_block(sd, _svd_delta(sd, m, n)))
    V = mH(vt)
    ru = None if gu is None else gu - u @ X               # P Ū
    rv = None if gvt is None else mH(gvt) - V @ Y         # Q V̄
    Pm, Qm = _coupling_solve(A, u, V, s, ru, rv, extras)
    ga = u @ core @ vt + Pm @ vt + u @ mH(Qm)
    return (ga,)


def _trunc_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    ta = ts[0]
    derivative_eps, _, extras = ctx
    A = xs[0]
    m, n = A.shape[-2:]
    u, s, vt = ys
    V = mH(vt)
    AV = ta @ V
    C = mH(u) @ AV                                        # UᴴȦV
    ds = np.real(np.diagonal(C, 0, -2, -1))
    eps2 = _svd_eps2(_data(s), m, n, derivative_eps).astype(s.dtype)
    sd = _data(s)
    minus, plus = _poles(s, eps2, _same_block(sd, _svd_delta(sd, m, n)))
    herm = minus * (0.5 * (C + mH(C)))
    anti = plus * (0.5 * (C - mH(C)))
    du = u @ (herm + anti)
    if C.dtype.kind == "c":
        sinv = _gap_inverse(s * s, eps2[..., None], False) * s
        du = du + u * (1j * (np.imag(np.diagonal(C, 0, -2, -1)) * sinv))[..., None, :]
    dv = V @ (herm - anti)
    # the coupling (1): right-hand sides P Ȧ V and Q Ȧᴴ U
    ru = AV - u @ C
    rv = mH(ta) @ u - V @ mH(C)
    Xc, Yc = _coupling_solve(A, u, V, s, ru, rv, extras)
    return (du + Xc, ds, mH(dv + Yc))


_trunc_op = defop("svd_truncated", _trunc_vjp, _trunc_jvp,
                  doc="the k leading triplets of the SVD; exact coupling to the discarded "
                      "subspace (Francuz et al. 2025)")
