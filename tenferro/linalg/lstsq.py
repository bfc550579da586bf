"""tf.linalg.pinv and tf.linalg.lstsq: the Moore–Penrose pseudo-inverse and least squares.

pinv
    X = A⁺ from the SVD (eigh for ``hermitian=True``), singular values at or below
    rtol·s_max cut; when nothing is cut (full rank, the common case) from a QR instead,
    A⁺ = R⁻¹Qᴴ (QR⁻ᴴ with Aᴴ = QR when wide), about twice as fast. Rules (docs/rules.md
    "pinv", Golub & Pereyra 1973), valid while the rank is locally constant, are products
    of X and A only — no SVD derivative, no gap:

        Ā = −XᴴX̄Xᴴ + XᴴX X̄ᴴ(I − XA) + (I − AX)X̄ᴴXXᴴ
        Ẋ = −XȦX + XXᴴȦᴴ(I − AX) + (I − XA)ȦᴴXᴴX

    The projectors are applied as products (Y − (YX)A), never built. When every matrix
    has full column rank, I − XA is identically 0 near A (rank n is locally constant),
    so its terms are skipped exactly, to every order; likewise I − AX at full row rank.

lstsq
    X = A⁺B, the minimum-norm least-squares solution: X = R⁻¹QᴴB from a QR of A (X =
    QR⁻ᴴB from Aᴴ = QR when wide), the singular values of R (A's) giving the rank by
    gelsd's rule and the singular_values output; a rank-deficient matrix is solved by
    gelsd. About 2.5x faster than gelsd, and backward stable too. With the residual
    Res = B − AX and the Gram inverse K = A⁺A⁺ᴴ = (AᴴA)⁺, the pinv rule applied to the
    cotangent X̄Bᴴ (docs/rules.md#pinv-and-lstsq) simplifies, using (I − AA⁺)B = Res, to

        B̄ = A⁺ᴴX̄
        Ā = −B̄Xᴴ + Res (KX̄)ᴴ + (A⁺ᴴX)((I − A⁺A)X̄)ᴴ
        Ẋ = A⁺(Ḃ − ȦX) + K ȦᴴRes + (I − A⁺A)Ȧᴴ(A⁺ᴴX)

    The Res terms vanish at full row rank, the (I − A⁺A) terms at full column rank. The
    plain backward never re-solves the least-squares problem nor factors again: at full
    column rank AᴴA = RᴴR with the primal's R (K = R⁻¹R⁻ᴴ: two triangular solves), at
    full row rank AAᴴ = RᴴR with R of Aᴴ, and only a rank-deficient stack forms A⁺ from an
    SVD.
    With create_graph=True (rule values are Tensors) A⁺ is the differentiable
    :func:`pinv` at the primal's rank, so second derivatives go through pinv's rules.

    The residuals output is one small op of (A, B, X) on the recorded X — Σᵢ |R|²ᵢⱼ with
    R = B − AX; B̄ = 2R diag(ḡ), X̄ = −AᴴB̄, Ā = −B̄Xᴴ — so its cotangent flows through X
    and directly into A and B (one node instead of a chain of elementwise ops; R is
    shared with the rules of X). The singular values are a
    differentiable output (Ā = U diag(s̄) Vᴴ, ṡ = Re diag(UᴴȦV)); the SVD's vectors are
    computed only when a derivative of the singular values is asked for.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from collections import namedtuple

import numpy as np

from .._engine import apply, apply1, note_escape
from .._errors import DTypeError, LinAlgError, ShapeError
from .._ops._util import conj, float_tensor, unbroadcast
from .._ops.registry import defop, register
from .._rule_api import has_node_or_tangent
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from .._dtypes import EPS, eps_of
from ._common import matrix_input, mH, right_hand_side
from .svd import svd as _svd
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["pinv", "lstsq", "LstsqResult", "pinv_ad", "lstsq_ad"]

LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "singular_values"])
LstsqResult.__doc__ = """Result of tf.linalg.lstsq: solution x, residuals (squared column norms of b - a x, or
empty), rank (int), singular_values of a.

The result of :func:`lstsq` (a named tuple).

Attributes
----------
x : Tensor
    The minimum-norm least-squares solution.
residuals : Tensor
    Squared 2-norms of the columns of b - a x when m > n and the rank is full; otherwise empty.
rank : int or numpy.ndarray
    The effective rank (an int64 array over a batch).
singular_values : Tensor
    Singular values of a, descending.
"""
_REAL = {np.dtype(t): np.dtype(r) for t, r in (
    (np.float32, np.float32), (np.float64, np.float64),
    (np.complex64, np.float32), (np.complex128, np.float64))}




def _mm3(a: Any, b: Any, c: Any) -> Any:
    """``a @ b @ c`` in the cheaper association (a p×q, b q×r, c r×s matrices)."""
    p, q = a.shape[-2:]
    r, s = c.shape[-2:]
    # (ab)c costs p·q·r + p·r·s multiply-adds, a(bc) costs q·r·s + p·q·s
    if p * r * (q + s) <= q * s * (p + r):
        return (a @ b) @ c
    return a @ (b @ c)


def _outer_sum(*pairs: Any) -> Any:
    """Σᵢ PᵢQᵢᴴ of thin factors (… × k), one product per pair. (Concatenating the factors
    into one product [P₁ P₂ …][Q₁ Q₂ …]ᴴ was measured slower: the copies cost more than
    the one GEMM call saves; docs/guide/kernels.md#choices-in-the-python-layer.)"""
    p, q = pairs[0]
    out = p @ mH(q)
    for p, q in pairs[1:]:
        out = out + p @ mH(q)
    return out


def _cut_inverse(s: Any, keep: Any) -> Any:
    """1/s where ``keep``, 0 elsewhere (no division by the cut values)."""
    out = np.zeros_like(s)
    np.divide(1, s, out=out, where=keep)
    return out


# ---- pinv --------------------------------------------------------------------------------

def _pinv_data(d: Any, rtol: Any, hermitian: Any, rank: Any = None) -> Any:
    """(A⁺, rank) of the stack ``d`` (ndarrays); rank is an int when every matrix has
    full rank min(m, n). ``rtol`` is an array broadcasting to the batch; ``rank`` (SVD
    path only), when given, fixes the number of singular values kept instead of the
    cutoff."""
    m, n = d.shape[-2:]
    batch = d.shape[:-2]
    if d.size == 0:
        return np.zeros(batch + (n, m), d.dtype), np.zeros(batch, np.int64)
    if hermitian:
        # A = V diag(w) Vᴴ, A⁺ = V diag(1/w) Vᴴ over |w| > rtol·max|w| (numpy's rule)
        w, v = _lapack.eigh(d)
        mag = np.abs(w)
        keep = mag > rtol[..., None] * mag.max(axis=-1, keepdims=True)
        x = (v * _cut_inverse(w, keep)[..., None, :]) @ mH(v)
    else:
        if rank is None:
            # every matrix of full rank p = min(m, n) (nothing cut): A⁺ = R⁻¹Qᴴ from a QR
            # (QR⁻ᴴ from Aᴴ = QR when wide), about twice as fast as the SVD; the singular
            # values of R (A's) decide it, by the same cut
            x, full = _lapack.pinv_qr(d, rtol)
            if full.all():
                return x, min(m, n)
        # A = U diag(s) Vᴴ, A⁺ = V diag(1/s) Uᴴ over s > rtol·s_max (s descending)
        u, s, vt = _lapack.svd(d)
        if rank is None:
            keep = s > rtol[..., None] * s[..., :1]
        else:
            keep = np.arange(s.shape[-1]) < rank[..., None]
        # as (U diag(1/s) Vᴴ)ᴴ: one conjugate copy (of the result) instead of two
        x = mH((u * _cut_inverse(s, keep)[..., None, :]) @ vt)
    return x, keep.sum(axis=-1)


# _pinv_vjp and _pinv_jvp have the same shape on purpose: each is the other's formula
# transposed (docs/rules.md), term for term
def _pinv_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Ā = −XᴴX̄Xᴴ + XᴴX X̄ᴴ(I − XA) + (I − AX)X̄ᴴXXᴴ   (Golub & Pereyra 1973)
    full_col, full_row = ctx
    a, x, g = xs[0], ys[0], gs[0]
    if g is None:
        return (None,)
    xh, gh = mH(x), mH(g)
    ga = -_mm3(xh, g, xh)
    if not full_col:                      # I − XA ≡ 0 at full column rank
        c = gh - _mm3(gh, x, a)           # X̄ᴴ(I − XA)
        ga = ga + _mm3(xh, x, c)
    if not full_row:                      # I − AX ≡ 0 at full row rank
        d = _mm3(gh, x, xh)               # X̄ᴴXXᴴ
        ga = ga + (d - _mm3(a, x, d))     # (I − AX)X̄ᴴXXᴴ
    return (ga,)


def _pinv_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẋ = −XȦX + XXᴴȦᴴ(I − AX) + (I − XA)ȦᴴXᴴX
    full_col, full_row = ctx
    a, x, t = xs[0], ys[0], ts[0]
    if t is None:
        return (None,)
    xh, th = mH(x), mH(t)
    dx = -_mm3(x, t, x)
    if not full_row:
        e = th - _mm3(th, a, x)           # Ȧᴴ(I − AX)
        dx = dx + _mm3(x, xh, e)
    if not full_col:
        f = _mm3(th, xh, x)               # ȦᴴXᴴX
        dx = dx + (f - _mm3(x, a, f))     # (I − XA)ȦᴴXᴴX
    return (dx,)


_pinv_op = defop("pinv", _pinv_vjp, _pinv_jvp,
                 doc="X = A⁺ from the SVD (or eigh); Golub–Pereyra rules, constant rank")


def _record_pinv(a: Any, x: Any, rank: Any) -> Tensor:
    m, n = a.shape[-2:]
    if type(rank) is int:
        ctx = (rank == n, rank == m)
    else:
        ctx = (bool((rank == n).all()), bool((rank == m).all()))
    return apply1(_pinv_op, (a,), x, ctx)


def _rtol_array(rtol: Any, d: Any, name: str) -> Any:
    """numpy 2's rtol: None -> max(m, n)·eps(dtype); scalars or arrays over the batch."""
    if rtol is None:
        return np.asarray(max(d.shape[-2:]) * eps_of(d.dtype))
    r = np.asarray(rtol._data if isinstance(rtol, Tensor) else rtol)
    if r.dtype.kind not in "biuf":
        raise DTypeError(f"{name}: rtol must be a real number or an array of them, "
                         f"got {r.dtype}")
    try:
        ok = np.broadcast_shapes(r.shape, d.shape[:-2]) == d.shape[:-2]
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"{name}: rtol of shape {r.shape} does not broadcast to the batch "
                         f"shape {d.shape[:-2]} of a (shape {d.shape}); pass a scalar or "
                         "one value per matrix")
    return r


@_docs.shared(PARAMS, RAISES)
def pinv(a: ArrayLike, rtol: ArrayLike | None = None, hermitian: bool = False, *,
         check_finite: bool = True) -> Tensor:
    r"""Moore–Penrose pseudo-inverse of each matrix of ``a`` (..., m, n) -> (..., n, m).

    Parameters
    ----------
    a : array_like
        Matrices (..., m, n).
    rtol : float or array_like, optional
        Singular values s <= rtol * s_max count as zero; a scalar or one value per matrix.
        Default ``max(m, n) * eps(dtype)``.
    hermitian : bool, optional
        Square a, only its lower triangle read; uses eigh, cutting |λ| <= rtol * max|λ|.
        Default False.
    check_finite

    Returns
    -------
    Tensor
        The pseudo-inverses (..., n, m).

    Raises
    ------
    ShapeError
        If ``a.ndim < 2``, a is not square with ``hermitian=True``, or ``rtol`` does not
        match the batch.
    DTypeError
    LinAlgError
        On non-finite input (unless ``check_finite=False``) or no convergence.

    Notes
    -----
    Derivative: :math:`\bar A = -X^H\bar X X^H + X^H X\bar X^H(I - XA) + (I - AX)\bar X^H X X^H`,
    :math:`X = A^+` [Golub & Pereyra 1973], exact while the rank is locally constant.

    Like ``numpy.linalg.pinv(a, rtol=rtol, hermitian=hermitian)`` (NumPy 2): singular
    values s ≤ rtol·s_max are treated as zero; ``rtol=None`` means max(m, n)·eps(dtype); a
    scalar or one value per matrix of the batch. ``hermitian=True`` (square a, only its
    lower triangle read) uses eigh, cutting eigenvalues with |λ| ≤ rtol·max|λ|.

    Derivatives: Golub & Pereyra's formula, exact while the rank is locally constant (the
    pseudo-inverse is discontinuous where the rank changes; a singular value near the
    cutoff makes the derivative large). With ``hermitian=True`` the derivative is that of
    the general pinv (as PyTorch's), i.e. the Hermitian-restricted one for Hermitian
    tangents: differentiate through a Hermitian parametrisation such as ``p + p.mH``.

    Examples
    --------
    >>> p = tf.linalg.pinv(tf.tensor([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]))
    >>> np.round(p.numpy(), 6) + 0.0
    array([[1. , 0. , 0. ],
           [0. , 0.5, 0. ]])
    """
    name = "tf.linalg.pinv"
    a = matrix_input(a, name, square=bool(hermitian), check_finite=check_finite)
    d = a._data
    x, rank = _pinv_data(d, _rtol_array(rtol, d, name), bool(hermitian))
    return _record_pinv(a, x, rank)


def _pinv_at_rank(a: Any, rank: Any) -> Tensor:
    """Differentiable A⁺ of the Tensor ``a`` keeping exactly ``rank`` singular values."""
    x, rank = _pinv_data(a._data, None, False, rank)
    return _record_pinv(a, x, rank)


# ---- lstsq: primal -----------------------------------------------------------------------

def _lstsq_primal(a: Any, b: Any, rcond: Any) -> Any:
    """Minimum-norm least squares per matrix: (x, rank, s, res, r) for a (*batch, m, n)
    and b (*batch, m, k) of one dtype and one batch shape, none of m, n, k, batch empty.

    x (*batch, n, k), rank (*batch) int64, s (*batch, min(m, n)) the singular values of a,
    res (*batch, k) the squared column norms of b − a x when m > n and every rank is n,
    else None; r the triangular factor of a = QR (m >= n) or aᴴ = QR (m < n), which the
    backward reuses at full rank.
    """
    # QR with the singular values of R deciding the rank (gelsd for a rank-deficient
    # matrix); rcond is gelsd's (scipy.linalg.lstsq's cond): s <= rcond·s_max cut
    try:
        x, rank, s, res, r = _lapack.lstsq_qr(a, b, rcond)
    except LinAlgError as e:
        raise LinAlgError(f"tf.linalg.lstsq: {e}") from None
    m, n = a.shape[-2:]
    if not (m > n and (rank == n).all()):
        res = None
    return x, rank, s, res, r


# ---- lstsq: how the rules apply A⁺ -------------------------------------------------------

def _tri_inverse_gram(r: Any) -> Any:
    """Y -> R⁻¹R⁻ᴴY, i.e. (RᴴR)⁻¹Y by two triangular solves with upper R."""
    return lambda y: _lapack.trtrs(r, _lapack.trtrs(r, y, lower=False, trans=2), lower=False)


class _TallFullRank:
    """Every matrix has rank n: A⁺ = KAᴴ, K = (AᴴA)⁻¹ = R⁻¹R⁻ᴴ with A = QR; I − A⁺A = 0."""

    def __init__(self, ctx: Any, a: Any) -> None:
        self.ctx = ctx
        r = ctx.cache.get("r")
        if r is None:
            r = ctx.cache["r"] = _lapack.qr(a, mode="r")
        self.k = _tri_inverse_gram(r)

    def vjp(self, a: Any, b: Any, x: Any, g: Any, has_res: Any, need_b: Any = True) -> Any:
        # B̄ = A⁺ᴴX̄ = AY with Y = KX̄;  Ā = −B̄Xᴴ + Res Yᴴ, which with Res = B − AX is
        #   Ā = BYᴴ − A(YXᴴ + XYᴴ)
        # (no Res needed: 2.5 m·n·k-sized products instead of 4 when B̄ is not asked for,
        # 3.5 when it is; 0.7x the time at n = 256)
        y = self.k(g)
        gb = a @ y if need_b or not has_res else None
        if has_res:
            yx = y @ mH(x)
            return b @ mH(y) - a @ (yx + mH(yx)), gb
        return -(gb @ mH(x)), gb

    def jvp(self, a: Any, b: Any, x: Any, ta: Any, tb: Any, has_res: Any) -> Any:
        # Ẋ = K(Aᴴ(Ḃ − ȦX) + ȦᴴRes)
        rhs = _rhs(x, ta, tb)
        rhs = mH(a) @ rhs
        if has_res and ta is not None:
            rhs = rhs + mH(ta) @ _residual_of(self.ctx, a, b, x)
        return self.k(rhs)


class _WideFullRank:
    """Every matrix has rank m < n: A⁺ = AᴴK, K = (AAᴴ)⁻¹ = R⁻¹R⁻ᴴ with Aᴴ = QR; Res = 0."""

    def __init__(self, ctx: Any, a: Any) -> None:
        r = ctx.cache.get("r")
        if r is None:
            r = ctx.cache["r"] = _lapack.qr(mH(a), mode="r")
        self.k = _tri_inverse_gram(r)

    def vjp(self, a: Any, b: Any, x: Any, g: Any, has_res: Any, need_b: Any = True) -> Any:
        # B̄ = A⁺ᴴX̄ = K(AX̄);  A⁺ᴴX = KAX = KB;  Ā = −B̄Xᴴ + (KB)(X̄ − AᴴB̄)ᴴ
        # (both K-solves in one call: [B̄, KB] = K[AX̄, B])
        ag = a @ g
        bb = np.broadcast_to(b, ag.shape[:-1] + b.shape[-1:])
        both = self.k(np.concatenate([ag, bb.astype(ag.dtype, copy=False)], axis=-1))
        kk = g.shape[-1]
        gb, z = both[..., :kk], both[..., kk:]
        return _outer_sum((-gb, x), (z, g - mH(a) @ gb)), gb

    def jvp(self, a: Any, b: Any, x: Any, ta: Any, tb: Any, has_res: Any) -> Any:
        # Ẋ = AᴴK(Ḃ − ȦX − AȦᴴZ) + ȦᴴZ, Z = KB
        rhs = _rhs(x, ta, tb)
        if ta is None:
            return mH(a) @ self.k(rhs)
        z = self.k(np.broadcast_to(b, rhs.shape).astype(rhs.dtype, copy=False))
        tz = mH(ta) @ z
        return mH(a) @ self.k(rhs - a @ tz) + tz


class _Explicit:
    """A⁺ as a matrix P (rank-deficient stacks; and, as a differentiable Tensor, every
    create_graph rule), at the primal's rank. K = PPᴴ, I − A⁺A applied as Y − P(AY)."""

    def __init__(self, ctx: Any, a: Any, batch: Any) -> None:
        self.ctx = ctx
        ab = np.broadcast_to(a, batch + a.shape[-2:])
        if isinstance(a, Tensor):
            self.p = _pinv_at_rank(ab, ctx.rank)
        else:
            p = ctx.cache.get("p")
            if p is None:
                p = ctx.cache["p"] = _pinv_data(np.asarray(ab), None, False, ctx.rank)[0]
            self.p = p

    def vjp(self, a: Any, b: Any, x: Any, g: Any, has_res: Any, has_null: Any,
            need_b: Any = True) -> Any:
        p = self.p
        ph = mH(p)
        gb = ph @ g                                       # B̄ = A⁺ᴴX̄
        terms = [(-gb, x)]                                # −B̄Xᴴ
        if has_res:                                       # Res (A⁺B̄)ᴴ, A⁺B̄ = KX̄
            terms.append((_residual_of(self.ctx, a, b, x), p @ gb))
        if has_null:                                      # (A⁺ᴴX)((I − A⁺A)X̄)ᴴ
            terms.append((ph @ x, g - _mm3(p, a, g)))
        return _outer_sum(*terms), gb

    def jvp(self, a: Any, b: Any, x: Any, ta: Any, tb: Any, has_res: Any, has_null: Any) -> Any:
        p = self.p
        ph = mH(p)
        dx = p @ _rhs(x, ta, tb)                          # A⁺(Ḃ − ȦX)
        if ta is not None:
            tah = mH(ta)
            if has_res:                                   # K ȦᴴRes
                dx = dx + p @ (ph @ (tah @ _residual_of(self.ctx, a, b, x)))
            if has_null:                                  # (I − A⁺A)Ȧᴴ(A⁺ᴴX)
                w = tah @ (ph @ x)
                dx = dx + (w - _mm3(p, a, w))
        return dx


def _residual_of(ctx: Any, a: Any, b: Any, x: Any) -> Any:
    """Res = B − AX (column form): computed once for plain rules (shared with the
    residuals' rules through ctx.cache), rebuilt from the differentiable values in a
    create_graph rule."""
    if isinstance(a, Tensor):
        return b - a @ x
    r = ctx.cache.get("res")
    if r is None:
        r = ctx.cache["res"] = b - a @ x
    return r


def _rhs(x: Any, ta: Any, tb: Any) -> Any:
    """Ḃ − ȦX with None as a structural zero (at least one is given)."""
    if ta is None:
        return tb
    tax = ta @ x
    return -tax if tb is None else tb - tax


# ---- lstsq: rules ------------------------------------------------------------------------

class _LstsqCtx:
    __slots__ = ("vector", "rank", "batch", "full_col", "full_row", "cache")

    def __init__(self, vector: Any, rank: Any, batch: Any, m: Any, n: Any) -> None:
        self.vector = vector
        self.rank = rank
        self.batch = batch
        if batch:
            self.full_col = bool((rank == n).all())
            self.full_row = bool((rank == m).all())
        else:
            self.full_col, self.full_row = int(rank) == n, int(rank) == m
        # factorizations computed by a rule, shared by later rules
        self.cache: dict[str, Any] = {}


def _solution_rule(ctx: Any, a: Any) -> Any:
    """The A⁺-applier for this node and the flags (has_res, has_null) of its terms."""
    flags = (not ctx.full_row, not ctx.full_col)
    if isinstance(a, Tensor):
        return _Explicit(ctx, a, ctx.batch), flags
    if ctx.full_col:
        return _TallFullRank(ctx, a), flags[:1]
    if ctx.full_row:
        return _WideFullRank(ctx, a), flags[:1]
    return _Explicit(ctx, a, ctx.batch), flags


def _svd_vectors(ctx: Any, a: Any) -> Any:
    """(U, Vᴴ) of a for the singular-value rules: differentiable Tensors (tf.linalg.svd;
    U diag(s̄) Vᴴ and diag(UᴴȦV) are phase-invariant, so no gauge check) in a
    create_graph rule, a cached LAPACK SVD otherwise."""
    if isinstance(a, Tensor):
        u, _, vt = _svd(a, check_gauge=False, check_finite=False)
        return u, vt
    uv = ctx.cache.get("uv")
    if uv is None:
        u, _, vt = _lapack.svd(np.asarray(a))
        uv = ctx.cache["uv"] = (u, vt)
    return uv


def _empty(a: Any, b: Any) -> Any:
    return 0 in a.shape or 0 in b.shape


def _lstsq_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    a, b = xs
    x = ys[0]
    gx, gsv = gs
    vector = ctx.vector
    ga = gb = None
    if gx is not None:
        if vector:  # b was a vector (m,): work with the (…, m, 1) column the primal solved
            gx, x, bc = gx[..., None], x[..., None], b[..., None]
        else:
            bc = b
        if _empty(a, bc):
            ga = np.zeros_like(a)
            gb = np.zeros_like(bc)
        else:
            rule, flags = _solution_rule(ctx, a)
            ga, gb = rule.vjp(a, bc, x, gx, *flags, need_b=needs[1])
        if vector and gb is not None:
            gb = gb[..., 0]
    if gsv is not None and needs[0] and 0 not in a.shape:
        # s: Ā = U diag(s̄) Vᴴ (exact, no gap)
        u, vt = _svd_vectors(ctx, a)
        gas = (u * gsv[..., None, :]) @ vt
        ga = gas if ga is None else ga + gas
    return (unbroadcast(ga, a.shape) if needs[0] and ga is not None else None,
            unbroadcast(gb, b.shape) if needs[1] and gb is not None else None)


def _lstsq_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    ta, tb = ts
    a, b = xs
    x = ys[0]
    vector = ctx.vector
    if vector:
        x, b = x[..., None], b[..., None]
        if tb is not None:
            tb = tb[..., None]
    if _empty(a, b):
        dx = np.zeros_like(x)
    else:
        rule, flags = _solution_rule(ctx, a)
        dx = rule.jvp(a, b, x, ta, tb, *flags)
        dx = np.broadcast_to(dx, x.shape) if dx.shape != x.shape else dx
    ds = None
    if ta is not None and 0 not in a.shape:
        # ṡ = Re diag(UᴴȦV)
        u, vt = _svd_vectors(ctx, a)
        ds = np.real(np.sum(conj(u) * (ta @ mH(vt)), axis=-2))
        sshape = ys[1].shape
        ds = np.broadcast_to(ds, sshape) if ds.shape != sshape else ds
    return (dx[..., 0] if vector else dx, ds)


_lstsq_op = defop("lstsq", _lstsq_vjp, _lstsq_jvp,
                  doc="X = A⁺B (QR; gelsd below full rank) and the singular values of A; "
                      "rules reuse the primal's R")


# ---- lstsq: residuals --------------------------------------------------------------------

def _sq_col_norms(r: Any) -> Any:
    """Σᵢ |Rᵢⱼ|² over the rows of the (stack of) matrix r."""
    return np.sum((r.real * r.real + r.imag * r.imag) if r.dtype.kind == "c" else r * r,
                  axis=-2)


def _residual_matrix(ctx: Any, a: Any, b: Any, x: Any) -> Any:
    """R = B − AX (column form): rebuilt from the (differentiable) values in a
    create_graph rule, otherwise built once and kept in the cache shared with the rules
    of lstsq's x."""
    vector, cache = ctx
    if vector:
        b, x = b[..., None], x[..., None]
    if isinstance(a, Tensor):
        return b - a @ x
    r = cache.get("res")
    if r is None:
        r = cache["res"] = b - a @ x
    return r


def _residuals_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # res = Σᵢ |Rᵢⱼ|², R = B − AX:  B̄ = 2R diag(ḡ), X̄ = −AᴴB̄, Ā = −B̄Xᴴ
    vector = ctx[0]
    a, b, x = xs
    r = _residual_matrix(ctx, a, b, x)
    gb = 2 * r * gs[0][..., None, :]
    xc = x[..., None] if vector else x
    ga = unbroadcast(-(gb @ mH(xc)), a.shape) if needs[0] else None
    gx = None
    if needs[2]:
        gx = -(mH(a) @ gb)
        gx = unbroadcast(gx[..., 0] if vector else gx, x.shape)
    if needs[1]:
        gb = unbroadcast(gb[..., 0] if vector else gb, b.shape)
    return ga, (gb if needs[1] else None), gx


def _residuals_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # ṙes = 2 Re Σᵢ conj(Rᵢⱼ) Ṙᵢⱼ,  Ṙ = Ḃ − ȦX − AẊ
    vector = ctx[0]
    ta, tb, tx = ts
    a, b, x = xs
    r = _residual_matrix(ctx, a, b, x)
    if vector:
        x = x[..., None]
        tb = None if tb is None else tb[..., None]
        tx = None if tx is None else tx[..., None]
    terms = [t for t in (tb, None if ta is None else -(ta @ x),
                         None if tx is None else -(a @ tx)) if t is not None]
    dr = terms[0]
    for t in terms[1:]:
        dr = dr + t
    return (2 * np.sum(np.real(conj(r) * dr), axis=-2),)


_residuals_op = defop("lstsq_residuals", _residuals_vjp, _residuals_jvp,
                      doc="lstsq's residuals Σᵢ |B − AX|²ᵢⱼ from the recorded solution X")


def _residuals(a: Any, b: Any, x: Any, vector: Any, value: Any = None, cache: Any = None) -> Any:
    """Σᵢ |B − AX|²ᵢⱼ of Tensors a, b, x (b, x vectors when ``vector``), differentiable in
    all three. At lstsq's solution Aᴴ(B − AX) = 0, so X̄ = −AᴴB̄ vanishes there; the rule
    keeps it to be right for any X. ``value``: the residuals when already known (lstsq's
    kernel); ``cache``: where the rules find and keep R = B − AX (lstsq's ctx.cache)."""
    if cache is None:
        cache = {}
    if value is None:
        value = _sq_col_norms(_residual_matrix((vector, cache), a._data, b._data, x._data))
    return apply1(_residuals_op, (a, b, x), value, ctx=(vector, cache))


# ---- lstsq: public -----------------------------------------------------------------------

_LSTSQ = "tf.linalg.lstsq"


@_docs.shared(PARAMS, RAISES)
def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None, *,
          check_finite: bool = True) -> LstsqResult:
    r"""Least-squares solution of ``a @ x ≈ b``, like ``numpy.linalg.lstsq``.

    Parameters
    ----------
    a : array_like
        Matrices (..., m, n).
    b : array_like
        A vector (m,) when ``b.ndim == 1`` (x is then (..., n)), otherwise a stack of
        matrices (..., m, k); the batch dimensions broadcast (numpy.linalg.lstsq takes no
        batch; this is its per-matrix result).
    rcond : float, optional
        Singular values s <= rcond * s_max count as zero. Default ``eps(dtype) * max(m, n)``
        (NumPy 2's; float32 input is computed in float32, so its eps is float32's).
    check_finite

    Returns
    -------
    LstsqResult
        Named tuple ``(x, residuals, rank, singular_values)``:

        * x: the minimum-norm least-squares solution;
        * residuals: squared 2-norms of the columns of b - a x, shape (..., k) ((..., 1) for
          a vector b) when m > n and every matrix has rank n; otherwise empty, shape (0,);
        * rank: the effective rank, a Python int (an int64 array over the batch for stacks);
        * singular_values: of a, descending, shape (..., min(m, n)).

    Raises
    ------
    ShapeError
        For a wrong ndim, mismatched rows or batches.
    DTypeError
    LinAlgError
        On non-finite input (unless ``check_finite=False``) or no convergence.

    Notes
    -----
    Derivative: :math:`\bar B = A^{+H}\bar X`,
    :math:`\bar A = -\bar B X^H + R(K\bar X)^H + (A^{+H}X)((I - A^+A)\bar X)^H` with
    :math:`R = B - AX`, :math:`K = A^+A^{+H}` [Golub & Pereyra 1973] (docs/rules.md#pinv-and-lstsq).

    Derivatives (module docstring): x is differentiable in a and b at locally constant
    rank; residuals are a differentiable op of (a, b, x) on the recorded x; singular_values are
    differentiable (Ā = U diag(s̄) Vᴴ; their forward-mode tangent costs an SVD); rank is
    discrete. Raises ShapeError (ndim, mismatched rows or batches), DTypeError,
    LinAlgError (non-finite input unless ``check_finite=False``; no convergence).

    Examples
    --------
    >>> a = tf.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> res = tf.linalg.lstsq(a, tf.tensor([1.0, 2.0, 4.0]))
    >>> np.round(res.x.numpy(), 6), res.rank
    (array([0.833333, 1.5     ]), 2)
    """
    a = matrix_input(a, _LSTSQ, check_finite=check_finite)
    b = float_tensor(b)
    ad, bd = a._data, b._data
    m, n = ad.shape[-2:]
    vector, bm, batch, dt = right_hand_side(_LSTSQ, ad, bd, "m", "m = {}", "", check_finite)
    k = bm.shape[-1]
    real_dt = _REAL[dt]
    if rcond is None:
        rcond = EPS[real_dt] * max(m, n)
    res = r = None
    if 0 in (m, n) or 0 in batch:
        x = np.zeros(batch + (n, k), dt)
        rank = np.zeros(batch, np.int64)
        s = np.zeros(batch + (min(m, n),), real_dt)
    else:
        a_b, b_b = ad.astype(dt, copy=False), bm.astype(dt, copy=False)
        if a_b.shape[:-2] != batch:
            a_b = np.broadcast_to(a_b, batch + (m, n))
        if k == 0:  # LAPACK wants a right-hand side: solve for a zero column, keep none
            b_b = np.zeros(batch + (m, 1), dt)
        elif b_b.shape[:-2] != batch:
            b_b = np.broadcast_to(b_b, batch + (m, k))
        x, rank, s, res, r = _lstsq_primal(a_b, b_b, rcond)
        if k == 0:
            x, res = x[..., :0], None if res is None else res[..., :0]
    ctx = _LstsqCtx(vector, rank, batch, m, n)
    if r is not None and (ctx.full_col or ctx.full_row):
        ctx.cache["r"] = r      # the rules' K = (AᴴA)⁻¹ or (AAᴴ)⁻¹ = R⁻¹R⁻ᴴ
    xt, st = apply(_lstsq_op, (a, b), (x[..., 0] if vector else x, s), ctx)

    if m > n and ctx.full_col:
        if res is None:     # the empty cases (n = 0, k = 0)
            res = _sq_col_norms(bm - ad @ x)
        if has_node_or_tangent(xt):
            # an op on the recorded x, so the residuals' cotangent flows into x, a and b;
            # the same R = b − a x (built once, by the first rule that needs it) serves
            # the rules of x and of the residuals (ctx.cache)
            res = _residuals(a, b, xt, vector, value=res, cache=ctx.cache)
        else:
            res = Tensor._wrap(res)
    else:
        res = Tensor._wrap(np.zeros((0,), real_dt))
    note_escape("lstsq's rank", a, b)
    return LstsqResult(xt, res, int(rank) if not batch else rank, st)


pinv_ad = builder(pinv)
lstsq_ad = builder(lstsq)

register(pinv, methods=("pinv",), functions=(np.linalg.pinv,))
register(lstsq, functions=(np.linalg.lstsq,))
