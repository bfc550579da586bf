"""tf.linalg.svd and svdvals: the singular value decomposition and its derivatives.

``a = u @ diag(s) @ vt`` with k = min(m, n) singular values in descending order, u (m, k)
and vt (k, n) (or (m, m) and (n, n) with ``full_matrices=True``). The rules are docs/rules.md
"svd" (Giles 2008; Townsend 2016; Wan & Zhang 2019 for the complex term), in the symbols
used there: V = vtᴴ, X = UᴴŪ, Y = VᴴV̄, S = diag(s).

Three policies make the derivatives usable on real data (docs/design.md#spectral-gaps):

* **Exact path.** When neither u nor vt receives a cotangent (a loss of the singular values
  only, ``svdvals``), Ā = U diag(s̄) Vᴴ: no F matrix, finite for repeated singular values.
* **Broadened gaps.** Otherwise the gap inverse 1/(s_j² − s_i²) is split into its poles,
  ½[1/(s_j − s_i) + 1/(s_j + s_i)] acting on the parts of the cotangent that change the
  degenerate subspace and that rotate u against v. Only the first pole is singular at a
  repeated singular value; it becomes σ·F_ij with F_ij = d/(d² + ε²), d = s_j² − s_i²,
  σ = s_i + s_j (the broadening of docs/rules.md#svd), while 1/(s_j + s_i) stays exact
  (σ³/(σ⁴ + ε²),
  broadened only when both values are ~0). A loss that is invariant under rotations of
  the degenerate vectors puts no weight on the first pole there, so its derivative along a
  family that keeps the degeneracy (a symmetry) is exact; broadening all of 1/d would drop
  the finite second pole (tests/linalg/test_svd_degenerate.py). Every 1/s_i (the S⁻¹
  terms of non-square matrices and the complex phase term) becomes s_i³/(s_i⁴ + ε²),
  which is F between s_i and a zero singular value of the missing columns. See
  :func:`svd` for the default ε.
* **Gauge check.** Complex singular vectors have a free phase per pair (u_i, v_i); a loss
  that depends on it has no gradient, and the rule raises GaugeError (as PyTorch does).

Truncation (``max_rank``, ``rtol``, ``atol``) and its exact derivative, coupled to the
discarded triplets, live in ``svd_truncated.py`` (docs/truncated_svd.md).

The plain backward is one fused kernel, ``_kernels/spectral.pyx``'s ``svd_backward``
(X = UᴴŪ, Y = VᴴV̄, the k x k core and the products to Ā). With create_graph=True the
pullback is recorded as one ``lazy_rule`` node whose value is that kernel's
(``_rule_api.record_pullback``); the same formula on Tensors (``_core_tensor``) runs only
when a higher derivative differentiates that node, or directly under forward tangents
(hvp). eigh.py and qr.py record their pullbacks the same way.
"""
import math
from collections import namedtuple
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._kernels import load as load_kernel
from .._dtypes import EPS
from .._engine import apply
from .._errors import GaugeError, ShapeError, UnsupportedADError
from .._ops.registry import defop, register
from .._rule_api import (nested_level_active, note_degenerate_limit, record_pullback, tangent_of,
                         tracked_in_reverse, wants_derivative, watching_degenerate)
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from ._common import batch_index, factorization_replay, field_aliases, mH, matrix_input
from .._ops import _docs
from ._glossary import PARAMS, RAISES

_kernel = load_kernel("spectral")

__all__ = ["SVDResult", "svd", "svdvals", "svd_ad", "svdvals_ad"]

SVDResult = namedtuple("SVDResult", ["u", "s", "vt"])
SVDResult.__doc__ = """Result of tf.linalg.svd: a = u @ diag(s) @ vt.

Also ``U``, ``S`` and ``Vh`` (aliases of the fields). The result of :func:`svd` (a named tuple).

Attributes
----------
u : Tensor
    Left singular vectors (..., m, k) (m x m with ``full_matrices=True``).
s : Tensor
    Singular values (..., k), real, descending.
vt : Tensor
    Right singular vectors, conjugate-transposed (..., k, n).
"""
field_aliases(SVDResult, U="u", S="s", Vh="vt")


# ---- helpers shared with eigh.py ---------------------------------------------------------

def _data(x: Any) -> Any:
    """The ndarray behind a rule value (for checks that must not be differentiated)."""
    return x._data if isinstance(x, Tensor) else x


def _check_eps(derivative_eps: Any, name: str) -> float | None:
    if derivative_eps is None:
        return None
    try:
        e = float(derivative_eps)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: derivative_eps must be a real number or None, got "
                        f"{derivative_eps!r}") from None
    if not (e >= 0 and math.isfinite(e)):
        raise ShapeError(f"{name}: derivative_eps must be finite and >= 0, got {e}; "
                         "pass None for the dtype-aware default")
    return e




def _eps_params(derivative_eps: Any, size: Any, dtype: Any) -> Any:
    """(eps, rel) with ε = eps + rel·scale per matrix (the kernels' convention): the given
    derivative_eps, or by default size · machine eps(dtype) times the spectrum's scale
    (in the units of the gaps)."""
    if derivative_eps is not None:
        return derivative_eps, 0.0
    return 0.0, size * EPS[dtype]


def _eps2(scale: Any, eps: Any, rel: Any) -> Any:
    """ε² = (eps + rel·scale)² per matrix, float64, shape of ``scale``."""
    e = scale.astype(np.float64)
    e *= rel
    e += eps
    return e * e


def _gap_inverse(d: Any, eps2: Any, matrix: Any = True) -> Any:
    """F = d/(d² + ε²) on ndarrays or Tensors; 0 (not NaN) where d = 0 and ε = 0.

    ``matrix``: d is a gap matrix d_ij = x_j − x_i whose diagonal is identically 0. There
    (and wherever the denominator is 0) F is computed as d/1: the value is 0 as it should
    be, and so is its derivative, where d/(d² + ε²) would have the derivative 1/ε² ~ 1e30
    on a zero that cancels only up to rounding (second order would be garbage)."""
    den = d * d + eps2
    mask = _data(den) == 0
    if matrix:
        mask = mask | np.eye(d.shape[-1], dtype=bool)
    if mask.any():
        den = np.where(mask, 1, den)
    return d / den


def _same_block(x: Any, delta: Any) -> Any:
    """Mask (..., k, k) of the pairs i ≠ j of one degenerate block of the sorted values
    x (..., k) (ndarray): a run of consecutive values each within delta (shape
    x.shape[:-1]) of the next. The kernels (spectral.pyx ``_run_end``) use the same
    blocks; docs/degenerate_derivatives.md says why these pairs get the exact limit 0."""
    k = x.shape[-1]
    eye = np.eye(k, dtype=bool)
    if k < 2:
        return np.zeros(x.shape + (k,), bool)
    close = np.abs(np.diff(x.astype(np.float64), axis=-1)) <= np.asarray(delta)[..., None]
    if not close.any():
        return np.zeros(x.shape + (k,), bool)
    note_degenerate_limit()         # tf.hessian's reverse-over-reverse then steps aside
    ids = np.cumsum(~close, axis=-1)
    ids = np.concatenate([np.zeros(x.shape[:-1] + (1,), ids.dtype), ids], axis=-1)
    return (ids[..., :, None] == ids[..., None, :]) & ~eye


def _svd_delta(s: Any, m: Any, n: Any) -> Any:
    """The block tolerance δ per matrix (shape s.shape[:-1]) of the svd rules:
    max(m, n)·eps(dtype)·s_max, numpy's rank tolerance — singular values closer than that
    are equal to working precision (the ``drel`` of the kernels times s_max)."""
    if s.shape[-1] == 0:
        return np.zeros(s.shape[:-1])
    return _svd_drel(m, n, s.dtype) * s[..., 0].astype(np.float64)


def _svd_drel(m: Any, n: Any, dtype: Any) -> float:
    """drel of the kernels for svd: max(m, n)·eps(dtype) (relative to s_max)."""
    return float(max(m, n) * EPS[np.dtype(dtype)])


def _input_tangent(a: Tensor) -> Any:
    """The ndarray of ``a``'s forward tangent at the active dual level, or None."""
    t = tangent_of(a)
    return None if t is None else _data(t)


def _block_runs(x: Any, delta: Any) -> Any:
    """The degenerate blocks [i0, i1) with i1 − i0 ≥ 2 of one sorted spectrum x (1-D
    ndarray), runs of consecutive values within delta of each other (_same_block)."""
    runs = []
    i0 = 0
    k = x.shape[0]
    for i in range(1, k + 1):
        if i == k or abs(float(x[i]) - float(x[i - 1])) > delta:
            if i - i0 >= 2:
                runs.append((i0, i))
            i0 = i
    return runs


def adapt_degenerate_basis(left: Any, x: Any, right: Any, t: Any, delta: Any,
                           descending: bool) -> None:
    """Degenerate perturbation theory: within every degenerate block of the spectrum x
    (..., k), rotate the columns of ``left`` (..., m, ≥k) and ``right`` (..., n, ≥k) by
    the unitary Q that diagonalizes the Hermitian part of the block of leftᴴ·t·right
    (t the input's tangent), in place, eigenvalues of that block in the order of x. Used
    by the primal of svd (left = U, right = V) and eigh (left = right = V) when the input
    carries a forward tangent: the result is as valid a decomposition as before (the
    block's values are equal), and it is the basis that the values split into along t,
    so that the within-block terms of the rules, whose exact limit is then 0, are 0
    (docs/degenerate_derivatives.md). ``descending`` (svd): singular values, whose block
    of ~0 values (≤ delta) is left as it is — a zero singular value splits by the
    singular values of the block, not by its Hermitian part."""
    k = x.shape[-1]
    if k < 2:
        return
    B = math.prod(x.shape[:-1])
    xs = x.reshape(B, k)
    ds = np.broadcast_to(delta, x.shape[:-1]).reshape(B)
    ts = t.reshape((B,) + t.shape[-2:])
    L = left.reshape((B,) + left.shape[-2:])
    R = right.reshape((B,) + right.shape[-2:])
    same = right is left
    for b in range(B):
        for i0, i1 in _block_runs(xs[b], ds[b]):
            if descending and float(xs[b, i0]) <= ds[b]:
                continue          # svd: a block of ~0 singular values (see above)
            lb = L[b, :, i0:i1]
            rb = R[b, :, i0:i1]
            c = lb.conj().T @ ts[b] @ rb
            mu, q = np.linalg.eigh(0.5 * (c + c.conj().T))
            if descending:
                q = q[:, ::-1]
            L[b, :, i0:i1] = lb @ q
            if not same:
                R[b, :, i0:i1] = rb @ q
    if not np.shares_memory(L, left):
        left[...] = L.reshape(left.shape)
    if not same and not np.shares_memory(R, right):
        right[...] = R.reshape(right.shape)


_PHASE_TOL = {np.dtype(np.complex64): math.sqrt(EPS[np.dtype(np.float32)]),
              np.dtype(np.complex128): math.sqrt(EPS[np.dtype(np.float64)])}


def _check_phase(X: Any, Y: Any, gu: Any, gv: Any, batch: Any, name: Any,
                 vectors: Any) -> Any:
    """GaugeError if the loss depends on the free phases: |Im(X_ii + Y_ii)| beyond √eps of
    the dtype times the cotangent's column norm ‖ū_i‖ + ‖v̄_i‖ (rounding in a phase-invariant
    loss stays orders of magnitude below; a phase-dependent one is O(1)). X = UᴴŪ with
    gu = Ū, Y = VᴴV̄ with gv = V̄ᴴ (either pair None); ndarrays (the data of Tensors)."""
    k = (X if X is not None else Y).shape[-1]
    B = math.prod(batch)
    if B * k == 0:
        return
    sq = (B, k, k)
    worst, flat = _kernel.phase_check(
        None if X is None else X.reshape(sq), None if Y is None else Y.reshape(sq),
        None if gu is None else gu.reshape((B,) + gu.shape[-2:]),
        None if gv is None else gv.reshape((B,) + gv.shape[-2:]))
    if worst <= _PHASE_TOL[(X if X is not None else Y).dtype]:
        return
    where = batch_index(flat // k, batch)
    at = f"matrix {where}, column {flat % k}" if where else f"column {flat % k}"
    raise GaugeError(
        f"{name}: the loss depends on the arbitrary phase of the complex {vectors} "
        f"({at}: the phase derivative is {worst:.3g} times the cotangent's norm), so its "
        "gradient is not defined. Differentiate a phase-invariant function of the vectors "
        "instead (|u|, u @ vt, u @ diag(s) @ vt, projectors v @ vᴴ, ...), or pass "
        "check_gauge=False to skip this check (the gradient is then only meaningful for a "
        "phase-invariant loss)")


# ---- the op ------------------------------------------------------------------------------

def _svd_eps2(s: Any, m: Any, n: Any, derivative_eps: Any) -> Any:
    """ε² per matrix, shape s.shape[:-1]; the gap d = s_j² − s_i² has units of s², so the
    scale is s_max² (the rules on Tensors; the kernel computes the same itself)."""
    eps, rel = _eps_params(derivative_eps, max(m, n), s.dtype)
    if s.shape[-1] == 0:
        return np.zeros(s.shape[:-1])
    smax = s[..., 0]                                     # descending
    return _eps2(smax * smax, eps, rel)


def _thin(ctx: Any, gs: Any, ys: Any, m: Any, n: Any) -> Any:
    """(gu, s̄, gvt), (u, s, vt) cut to the k = min(m, n) columns/rows the rules use; for
    full_matrices=True a nonzero cotangent of the extra columns raises."""
    gu, gs_, gvt = gs
    u, s, vt = ys
    if not ctx[0]:
        return (gu, gs_, gvt), (u, s, vt)
    k = s.shape[-1]
    for g, extra, what in ((gu, m > k, "u[..., :, k:]"), (gvt, n > k, "vt[..., k:, :]")):
        if g is not None and extra:
            tail = _data(g)[..., :, k:] if what[0] == "u" else _data(g)[..., k:, :]
            if tail.size and np.any(tail != 0):
                raise UnsupportedADError(
                    f"tf.linalg.svd(full_matrices=True): the loss depends on the extra "
                    f"singular vectors {what} (k = {k}), which span the null space and are "
                    "not unique, so they have no derivative. Use full_matrices=False or "
                    "only the first k columns of u / rows of vt (or a function of the "
                    "projector onto their span)")
    if m > k:
        u = u[..., :, :k]
        gu = None if gu is None else gu[..., :, :k]
    if n > k:
        vt = vt[..., :k, :]
        gvt = None if gvt is None else gvt[..., :k, :]
    return (gu, gs_, gvt), (u, s, vt)


def _poles(s: Any, eps2: Any, block: Any) -> Any:
    """The two poles of the SVD rules' 1/(s_j² − s_i²) (docs/rules.md#svd), as matrices
    (σF, G): σF = σ·d/(d² + ε²) ≈ 1/(s_j − s_i), broadened at a repeated singular value,
    and G = σ³/(σ⁴ + ε²) ≈ 1/(s_j + s_i), exact unless s_i + s_j ~ 0 (σ = s_i + s_j,
    d = s_j² − s_i², zero diagonals). Only the first pole is singular at a degeneracy, and
    a loss invariant under rotations of the degenerate vectors puts no weight on it there;
    broadening both (one F on the whole 1/d) would drop the finite second term — see the
    module docstring of _kernels/spectral.pyx. ``block`` (ndarray mask, _same_block, or
    None): the pairs of a degenerate block, where σF is the constant 0 — its exact limit,
    with derivative 0 (differentiating the broadening would give 1/ε² times rounding)."""
    s2 = s * s
    sig = s[..., None, :] + s[..., :, None]
    minus = sig * _gap_inverse(s2[..., None, :] - s2[..., :, None], eps2[..., None, None])
    if block is not None and block.any():
        minus = minus * (~block).astype(_data(s).dtype)
    sig2 = sig * sig
    off = 1 - np.eye(s.shape[-1], dtype=_data(s).dtype)    # G_ii = 0 (the phase term)
    plus = _gap_inverse(sig2, eps2[..., None, None], False) * sig * off
    return minus, plus


def _core_tensor(X: Any, Y: Any, s: Any, sbar: Any, eps2: Any, block: Any) -> Any:
    """The k x k core of the SVD pullback on Tensors (create_graph), the formula of
    ``spectral.svd_core`` for a square matrix:
    (F∘(X − Xᴴ))S + S(F∘(Y − Yᴴ)) + diag(s̄) + diag(i·Im diag(X)/s) = (J + Jᴴ)S + S(K + Kᴴ) + ...
    (J = F∘X and F antisymmetric; ``block`` as in _poles). Returns (core, sinv) with sinv
    the broadened 1/s."""
    minus, plus = _poles(s, eps2, block)
    sinv = _gap_inverse(s * s, eps2[..., None], False) * s      # s³/(s⁴ + ε²)
    P = None if X is None else X - mH(X)
    Q = None if Y is None else Y - mH(Y)
    if P is None:
        core = 0.5 * (minus * Q - plus * Q)
    elif Q is None:
        core = 0.5 * (minus * P + plus * P)
    else:
        core = 0.5 * (minus * (P + Q) + plus * (P - Q))
    diag = sbar
    if X is not None and X.dtype.kind == "c":
        ph = 1j * (np.imag(np.diagonal(X, 0, -2, -1)) * sinv)
        diag = ph if diag is None else diag + ph
    if diag is not None:
        k = s.shape[-1]
        core = core + np.eye(k, dtype=s.dtype) * diag[..., None, :]
    return core, sinv


def _svd_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    m, n = xs[0].shape[-2:]
    if type(ys[1]) is not np.ndarray:
        # create_graph: one recorded node (the kernel now, the formula's ops if a higher
        # derivative asks for them; see record_pullback)
        return record_pullback(
            lambda *v: _svd_pullback(ctx, m, n, v[:3], v[3:]),
            lambda *v: _svd_pullback(ctx, m, n, v[:3], v[3:]), tuple(gs) + tuple(ys))
    return _svd_pullback(ctx, m, n, gs, ys)


def _svd_pullback(ctx: Any, m: Any, n: Any, gs: Any, ys: Any) -> Any:
    """Ā (a 1-tuple) from the cotangents (Ū, s̄, V̄ᴴ) and the outputs (u, s, vt): the
    compiled kernel on ndarrays, docs/rules.md's formula in recorded ops on Tensors."""
    (gu, sbar, gvt), (u, s, vt) = _thin(ctx, gs, ys, m, n)
    if gu is None and gvt is None:
        # exact path (no F): Ā = U diag(s̄) Vᴴ
        return (None if sbar is None else (u * sbar[..., None, :]) @ vt,)
    _, derivative_eps, check_gauge, _ = ctx
    k = s.shape[-1]
    X = Y = None
    if check_gauge and u.dtype.kind == "c":
        # phase θ_i of (u_i, v_i): dL/dθ_i = Im(X_ii + Y_ii) must vanish (the plain
        # backward's kernel forms X and Y again: two products, complex inputs only)
        X = None if gu is None else mH(u) @ gu           # UᴴŪ
        Y = None if gvt is None else vt @ mH(gvt)        # VᴴV̄ (V = vtᴴ, V̄ = gvtᴴ)
        _check_phase(None if X is None else _data(X), None if Y is None else _data(Y),
                     None if gu is None else _data(gu), None if gvt is None else _data(gvt),
                     s.shape[:-1], "tf.linalg.svd", "singular vectors")
    if type(s) is np.ndarray:
        # plain backward: one fused kernel (X, Y, the core with its S⁻¹ corrections and
        # the products to Ā; _kernels/spectral.pyx svd_backward)
        if sbar is not None and sbar.dtype != s.dtype:
            sbar = sbar.real.astype(s.dtype)
        if gu is not None and gu.dtype != u.dtype:
            gu = gu.astype(u.dtype)
        if gvt is not None and gvt.dtype != vt.dtype:
            gvt = gvt.astype(vt.dtype)
        nb = math.prod(s.shape[:-1])
        out = np.empty(s.shape[:-1] + (m, n), dtype=u.dtype)
        eps, rel = _eps_params(derivative_eps, max(m, n), s.dtype)
        if watching_degenerate():
            _same_block(s, _svd_delta(s, m, n))     # the kernel's blocks, noted if any
        _kernel.svd_backward(
            u.reshape(nb, m, k), s.reshape(nb, k), vt.reshape(nb, k, n),
            None if gu is None else gu.reshape(nb, m, k),
            None if sbar is None else sbar.reshape(nb, k),
            None if gvt is None else gvt.reshape(nb, k, n), eps, rel, out.reshape(nb, m, n),
            _svd_drel(m, n, s.dtype))
        return (out,)
    # create_graph / forward-over-reverse: docs/rules.md's formula on Tensors
    r = _leading(gu, sbar, gvt, k) if k >= _LEADING_MIN_K else k
    eps2 = _svd_eps2(_data(s), m, n, derivative_eps).astype(s.dtype)
    sd = _data(s)
    block = _same_block(sd, _svd_delta(sd, m, n))
    if r < k and 2 * r <= k:
        # only the first r columns of Ū, V̄ and s̄ are nonzero (the natural truncation
        # u[:, :r] after a full svd): X, Y and the core vanish outside the first r rows and
        # columns, and Ā = U_r (core[:r, :] Vᴴ) + (U_⊥ core[r:, :r]) V_rᴴ, every product
        # with r on one side: O((m + n) k r) instead of O((m + n) k²), and the core's
        # elementwise work O(k r) — the second pass of a tensor network (TRG) is mostly
        # this formula and its derivative
        XK = None if gu is None else (X[..., :, :r] if X is not None
                                      else mH(u) @ gu[..., :, :r])
        YK = None if gvt is None else (Y[..., :, :r] if Y is not None
                                       else vt @ mH(gvt[..., :r, :]))
        top, left, sinvK = _core_strips(XK, YK, s, sbar, eps2, block, r)
        ga = u[..., :, :r] @ (top @ vt) + (u[..., :, r:] @ left) @ vt[..., :r, :]
        if m > k and XK is not None:
            ga = ga + ((gu[..., :, :r] - u @ XK) * sinvK[..., None, :]) @ vt[..., :r, :]
        if n > k and YK is not None:
            ga = ga + (u[..., :, :r] * sinvK[..., None, :]) @ (gvt[..., :r, :] - mH(YK) @ vt)
        return (ga,)
    if X is None and gu is not None:
        X = mH(u) @ gu
    if Y is None and gvt is not None:
        Y = vt @ mH(gvt)
    core, sinv = _core_tensor(X, Y, s, sbar, eps2, block)
    ga = u @ core @ vt
    if m > k and gu is not None and X is not None:
        # [m > k] (Ū − U(UᴴŪ)) S⁻¹ Vᴴ
        ga = ga + ((gu - u @ X) * sinv[..., None, :]) @ vt
    if n > k and gvt is not None and Y is not None:
        # [n > k] U S⁻¹ (V̄ − V(VᴴV̄))ᴴ = U S⁻¹ (gvt − Yᴴ vt)
        ga = ga + (u * sinv[..., None, :]) @ (gvt - mH(Y) @ vt)
    return (ga,)


def _core_strips(XK: Any, YK: Any, s: Any, sbar: Any, eps2: Any, block: Any,
                 r: int) -> Any:
    """_core_tensor's core when X = [X_K, 0] and Y = [Y_K, 0] (X_K = X[..., :, :r]) and s̄
    is 0 beyond r: its nonzero strips (core[:r, :], core[r:, :r]) and sinv[:r], at O(k r).
    With P = X − Xᴴ: P[:r, :] = [X_K[:r], 0] − X_Kᴴ, P[r:, :r] = X_K[r:]; the poles on
    the strip (i < r, any j), σF antisymmetric and G symmetric for the other strip."""
    k = s.shape[-1]
    sd = _data(s)
    sK = s[..., :r]
    sig = s[..., None, :] + sK[..., :, None]                      # (…, r, k)
    d = (s * s)[..., None, :] - (sK * sK)[..., :, None]
    diag = np.zeros((r, k), bool)
    diag[np.arange(r), np.arange(r)] = True
    e2 = eps2[..., None, None]
    den = d * d + e2
    mask = (_data(den) == 0) | diag
    if mask.any():
        den = np.where(mask, 1, den)
    minus = sig * (d / den)
    if block is not None and block[..., :r, :].any():
        minus = minus * (~block[..., :r, :]).astype(sd.dtype)
    sig2 = sig * sig
    gden = sig2 * sig2 + e2
    gmask = _data(gden) == 0
    if gmask.any():
        gden = np.where(gmask, 1, gden)
    plus = (sig2 / gden) * sig * (~diag).astype(sd.dtype)
    sinvK = _gap_inverse(sK * sK, eps2[..., None], False) * sK

    def strips(Z: Any) -> Any:
        return (None, None) if Z is None else (_pad(Z[..., :r, :], k) - mH(Z), Z[..., r:, :])

    (P, PL), (Q, QL) = strips(XK), strips(YK)
    minus_l, plus_l = -mH(minus[..., :, r:]), mH(plus[..., :, r:])

    def combine(mi: Any, pl: Any, A: Any, B: Any) -> Any:
        if A is None:
            return 0.5 * (mi * B - pl * B)
        if B is None:
            return 0.5 * (mi * A + pl * A)
        return 0.5 * (mi * (A + B) + pl * (A - B))

    top = combine(minus, plus, P, Q)
    left = combine(minus_l, plus_l, PL, QL)
    dg = None if sbar is None else sbar[..., :r]
    if XK is not None and XK.dtype.kind == "c":
        ph = 1j * (np.imag(np.diagonal(XK[..., :r, :], 0, -2, -1)) * sinvK)
        dg = ph if dg is None else dg + ph
    if dg is not None:
        top = top + _pad(np.eye(r, dtype=sd.dtype) * dg[..., None, :], k)
    return top, left, sinvK


# the reduced formula pays from this k on (below, the products are cheap and one fewer
# pass over the cotangents matters more)
_LEADING_MIN_K = 16


def _leading(gu: Any, sbar: Any, gvt: Any, k: int) -> int:
    """r: 1 + the last index j < k with a nonzero ū_j, v̄_j or s̄_j anywhere in the stack
    (the cotangents of the leading triplets a loss uses, e.g. u[:, :r] after a full
    svd); 0 when all are zero. Reads the data (a structural fact, not differentiated)."""
    r = 0
    if k == 0:
        return 0
    for g, axis in ((gu, -2), (gvt, -1), (sbar, None)):
        if g is None:
            continue
        d = _data(g)
        nz = d != 0
        if axis is not None:
            nz = nz.any(axis=axis)
        nz = nz.reshape(-1, k).any(axis=0)
        idx = np.flatnonzero(nz)
        if idx.size:
            r = max(r, int(idx[-1]) + 1)
            if r == k:
                break
    return r


def _pad(x: Any, k: int) -> Any:
    """x (..., k, r) with zero columns appended to (..., k, k)."""
    r = x.shape[-1]
    if r == k:
        return x
    zeros = np.zeros(x.shape[:-1] + (k - r,), _data(x).dtype)
    return np.concatenate([x, zeros], axis=-1)


def _svd_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    ta = ts[0]
    full, derivative_eps, _, values_only = ctx
    m, n = xs[0].shape[-2:]
    u, s, vt = ys
    k = s.shape[-1]
    U = u[..., :, :k] if full and m > k else u
    Vt = vt[..., :k, :] if full and n > k else vt
    V = mH(Vt)
    # C = UᴴȦV, associated so that the middle product is the cheaper one
    if m >= n:
        AV = ta @ V
        C = mH(U) @ AV
    else:
        UhA = mH(U) @ ta
        C = UhA @ V
    ds = np.real(np.diagonal(C, 0, -2, -1))             # ṡ = Re diag(C)
    if values_only:
        return (None, ds, None)
    eps2 = _svd_eps2(_data(s), m, n, derivative_eps).astype(s.dtype)
    sd = _data(s)
    minus, plus = _poles(s, eps2, _same_block(sd, _svd_delta(sd, m, n)))
    sinv = _gap_inverse(s * s, eps2[..., None], False) * s      # broadened 1/s
    # F∘(CS + SCᴴ) = H/(s_j − s_i) + K/(s_j + s_i) with H, K the Hermitian and
    # anti-Hermitian parts of C; F∘(SC + CᴴS) = H/(s_j − s_i) − K/(s_j + s_i) (_poles)
    herm = minus * (0.5 * (C + mH(C)))
    anti = plus * (0.5 * (C - mH(C)))
    # U̇ = U(F∘(CS + SCᴴ)) + i·U diag(Im C_ii / s_i) + (ȦV − UC)S⁻¹ [m > k]
    du = U @ (herm + anti)
    if C.dtype.kind == "c":
        du = du + U * (1j * (np.imag(np.diagonal(C, 0, -2, -1)) * sinv))[..., None, :]
    if m > k:
        du = du + (AV - U @ C) * sinv[..., None, :]
    # V̇ = V(F∘(SC + CᴴS)) + (ȦᴴU − VCᴴ)S⁻¹ [n > k]
    dv = V @ (herm - anti)
    if n > k:
        dv = dv + (mH(UhA) - V @ mH(C)) * sinv[..., None, :]
    if full and m > k:
        # extra columns U⊥: not unique; the minimal tangent that keeps [U, U⊥] unitary
        du = np.concatenate([du, -(U @ (mH(du) @ u[..., :, k:]))], axis=-1)
    dvt = mH(dv)
    if full and n > k:
        dvt = np.concatenate([dvt, -((vt[..., k:, :] @ dv) @ Vt)], axis=-2)
    return (du, ds, dvt)


_svd_op = defop("svd", _svd_vjp, _svd_jvp,
                doc="a = u diag(s) vt; docs/rules.md#svd (broadened F, gauge check)")


_svd_op.replay = lambda ctx: factorization_replay(
    "svd", lambda d: tuple(_lapack.svd(d, full_matrices=ctx[0])))


def _empty_svd(d: Any, full_matrices: Any) -> Any:
    """svd of a stack with no entries (m = 0, n = 0 or an empty batch)."""
    batch, (m, n) = d.shape[:-2], d.shape[-2:]
    k = min(m, n)
    real = np.finfo(d.dtype).dtype
    ku, kv = (m, n) if full_matrices else (k, k)
    u = np.zeros(batch + (m, ku), d.dtype)
    vt = np.zeros(batch + (kv, n), d.dtype)
    if full_matrices:
        # the orthonormal basis LAPACK returns when there is nothing to factor
        u[...] = np.eye(m, dtype=d.dtype)
        vt[...] = np.eye(n, dtype=d.dtype)
    return u, np.zeros(batch + (k,), real), vt


def _values_only_jvp(a: Tensor) -> bool:
    """Whether the forward rule of svdvals/eigvalsh may skip the vector tangents: only
    when no reverse graph is recorded, since forward-over-reverse runs the reverse rule on
    the outputs' tangents (node.out_tangents), vectors included, and outside nested dual
    levels, since an inner level's rule reads the vectors' tangents of the enclosing ones."""
    return not tracked_in_reverse(a) and not nested_level_active()


def _svd(a: Any, full_matrices: Any, derivative_eps: Any, check_gauge: Any,
         values_only: Any) -> Any:
    d = a._data
    if d.size == 0:
        outs = _empty_svd(d, full_matrices)
    else:
        outs = _lapack.svd(d, full_matrices=full_matrices)
        t = _input_tangent(a)
        if t is not None:
            # forward mode: the basis of each degenerate block in which it splits along t
            u, s, vt = outs
            m, n = d.shape[-2:]
            v = np.ascontiguousarray(mH(vt))
            adapt_degenerate_basis(u, s, v, t, _svd_delta(s, m, n), True)
            outs = (u, s, np.ascontiguousarray(mH(v)))
    ctx = (bool(full_matrices), derivative_eps, bool(check_gauge),
           values_only and _values_only_jvp(a))
    return apply(_svd_op, (a,), outs, ctx)


@_docs.shared(PARAMS, RAISES)
def svd(a: ArrayLike | Tensor, full_matrices: bool = False, *, max_rank: int | None = None,
        rtol: float | None = None, atol: float | None = None,
        derivative_eps: float | None = None, check_gauge: bool = True,
        check_finite: bool = True) -> SVDResult:
    r"""Singular value decomposition ``a = u @ diag(s) @ vt`` of a (stack of) matrix.

    Parameters
    ----------
    a : array_like
        A matrix (..., m, n) or a stack of them; real or complex.
    full_matrices : bool, optional
        Return square u (..., m, m) and vt (..., n, n). Default False.
    max_rank : int, optional
        Keep at most this many singular triplets (keyword-only; see Notes).
    rtol, atol : float, optional
        Keep the triplets with ``s_i > max(atol, rtol * s_max)``; None: not applied.
    derivative_eps : float, optional
        The broadening ε of the vector derivatives, in units of squared singular values.
        Default ``max(m, n) * eps(dtype) * s_max**2`` per matrix.
    check_gauge : bool, optional
        Raise GaugeError when a complex loss depends on the free phases. Default True.
    check_finite

    Returns
    -------
    SVDResult
        Named tuple ``(u, s, vt)``: u (..., m, k), s (..., k) real and descending, vt
        (..., k, n), k = min(m, n) (or the truncated count); with ``full_matrices=True`` u
        is (..., m, m) and vt (..., n, n), and the extra columns/rows (a basis of the null
        spaces, not unique) have no derivative: reverse mode raises UnsupportedADError
        unless their cotangent is zero, and forward mode gives them the minimal tangent that
        keeps u (vt) unitary.

    Raises
    ------
    ShapeError
        If ``a.ndim < 2``, ``max_rank`` is not a positive int, or truncation is asked with
        ``full_matrices=True``.
    ValueError, TypeError
        If ``rtol`` or ``atol`` is negative, NaN, infinite or not a number.
    DTypeError
    LinAlgError
        On non-finite input (unless ``check_finite=False``) or no convergence.
    GaugeError
        (backward, complex input) If the loss depends on the phase of a singular pair.

    Notes
    -----
    Derivative: :math:`\bar A = U K V^H + \dots` with the pole-by-pole broadened core of
    docs/rules.md#svd [Giles 2008; Townsend 2016; Wan & Zhang 2019 for the complex term;
    Francuz, Schuch & Vanhecke 2025 for truncation].

    Bad arguments raise before anything is computed or recorded.

    Derivatives (docs/rules.md#svd):

    * A loss that uses only ``s`` takes the exact path Ā = U diag(s̄) Vᴴ, finite for
      repeated singular values.
    * Losses of u or vt use F_ij = d/(d² + ε²), d = s_j² − s_i², instead of 1/d, and
      s³/(s⁴ + ε²) instead of 1/s (the S⁻¹ terms of non-square matrices and the complex
      phase term), so the gradient is finite for repeated and zero singular values. For
      gaps and singular values well above ε this is the exact derivative (relative change
      (ε/d)²); below, the gradient is bounded (|F| ≤ 1/(2ε)) instead of infinite — exact
      degeneracy makes the derivative of the vectors undefined, and a gauge-invariant loss
      then gets a finite (regularized) gradient.
    * Degenerate blocks: singular values within max(m, n) · eps(dtype) · s_max of each
      other (a run of consecutive values) are equal to working precision; for their pairs
      the pole 1/(s_j − s_i) takes its exact limit 0, a constant. A loss invariant under
      rotations of a block's vectors then has exact derivatives of every order along
      directions that keep the degeneracy (symmetric tensors), and, when ``a`` carries a
      forward tangent, the vectors of each block are those in which it splits along the
      tangent, which makes ``tf.jvp``/``tf.hvp`` exact in every direction
      (docs/degenerate_derivatives.md).
    * ``derivative_eps`` is ε, in the units of d (squared singular values). The default,
      per matrix, is ε = max(m, n) · eps(dtype) · s_max²: gaps d = (s_j − s_i)(s_j + s_i)
      with |s_j − s_i| below numpy's rank tolerance max(m, n)·eps·s_max are at the
      rounding level of the computed s and carry no information, while every resolvable
      gap keeps F = 1/d to working precision. It is a constant of the derivative (not
      differentiated itself).
    * Complex input: a cotangent that makes the loss depend on the free phase of a pair
      (u_i, v_i), i.e. Im(UᴴŪ + VᴴV̄)_ii ≠ 0 beyond √eps(dtype) times the cotangent's column
      norm, raises GaugeError; ``check_gauge=False`` skips the check. Real input never
      raises (its sign ambiguity is discrete).

    Truncation (``max_rank``, ``rtol``, ``atol``, keyword-only): keep the singular triplets
    i (0-based, descending) with i < max_rank and s_i > max(atol, rtol · s_max); a
    tolerance left None is not applied (so ``max_rank`` alone keeps zero singular values;
    ``atol=0`` drops exact zeros). u is (..., m, k), s (..., k), vt (..., k, n). For a
    stack, k is the largest count over its matrices (a matrix of lower rank keeps its next
    singular values too, so that the result is one array). Not with
    ``full_matrices=True``.

    * The derivative is the exact derivative of "full SVD, then keep the first k
      triplets" (Francuz, Schuch, Vanhecke, Phys. Rev. Research 7, 013237 (2025),
      arXiv:2311.11894), including the coupling of the kept vectors to the discarded
      ones that the thin-SVD formula on the kept triplets alone misses: with
      A⊥ = (I − UUᴴ)A(I − VVᴴ), the components x_j = (I − UUᴴ)u̇_j and
      y_j = (I − VVᴴ)v̇_j solve [s_j I, −A⊥; −A⊥ᴴ, s_j I][x_j; y_j] =
      [(I − UUᴴ)Ȧv_j; (I − VVᴴ)Ȧᴴu_j], i.e. x_j = (s_j² I − A⊥A⊥ᴴ)⁻¹(s_j(I − UUᴴ)Ȧv_j
      + A⊥Ȧᴴu_j); the reverse rule solves the same (Hermitian) system with the projected
      cotangents (I − UUᴴ)Ū, (I − VVᴴ)V̄ on the right and adds Pmat Vᴴ + U Qmatᴴ to the
      thin rule's U core Vᴴ among the kept triplets. The thin formula is right only when
      the discarded singular values are zero. Reverse, forward and second order.
    * Two paths, the same results: when max_rank ≤ min(m, n)/20 and min(m, n) ≥ 300 the
      primal is partial (scipy.sparse.linalg.svds with PROPACK, tol=0 and a fixed seed —
      deterministic — then one Rayleigh–Ritz step, accurate to rounding) and the rules
      solve the system above by conjugate gradients with products by A and Aᴴ only
      (preconditioned with 16 extra Ritz vectors); on Tensors (create_graph) by a dense
      solve of the k shifted m x m systems, O(k m³). Otherwise the full SVD is computed
      and sliced. See docs/truncated_svd.md for timings.
    * A degenerate cut (s_{k−1} = s_k in 0-based terms: the kept subspace is not unique,
      the truncated function has no derivative there) and kept singular values ~0 get
      the full SVD's broadened rule (``derivative_eps``): finite, equal to the broadened
      derivative of the full SVD then slicing; the partial path falls back to the full
      one when s_{k−1}² − s_k² or s_{k−1}² is within 1e5·ε.

    Examples
    --------
    >>> a = tf.tensor([[3.0, 1.0], [1.0, 2.0]])
    >>> u, s, vt = tf.linalg.svd(a)
    >>> s
    tensor([3.61803399, 1.38196601])
    >>> np.allclose((u * s) @ vt, a)
    True
    """
    cut = None
    if max_rank is not None or rtol is not None or atol is not None:
        # svd_truncated's op builds on this module's op and helpers; linalg/__init__.py
        # imports it with the package (cycle: imported here at call time)
        from . import svd_truncated as _trunc
        cut = _trunc.check_truncation(max_rank, rtol, atol, full_matrices)
    a = matrix_input(a, "tf.linalg.svd", check_finite=check_finite)
    eps = _check_eps(derivative_eps, "tf.linalg.svd")
    if cut is not None:
        return SVDResult(*_trunc.svd_truncated(a, *cut, eps, check_gauge))
    return SVDResult(*_svd(a, full_matrices, eps, check_gauge, False))


@_docs.shared(PARAMS, RAISES)
def svdvals(a: ArrayLike | Tensor, check_finite: bool = True) -> Tensor:
    r"""Singular values (..., k), descending, k = min(m, n), like numpy's
    ``svd(a, compute_uv=False)``. Differentiable by the exact rule Ā = U diag(s̄) Vᴴ
    (finite for repeated singular values, no F); the vectors are computed only when a
    derivative is needed.

    Parameters
    ----------
    a : array_like
        A matrix (..., m, n) or a stack of them.
    check_finite

    Returns
    -------
    Tensor
        Singular values (..., k), real, descending, k = min(m, n).

    Raises
    ------
    ShapeError
        If ``a.ndim < 2``.
    LinAlgError

    Notes
    -----
    Derivative: :math:`\bar A = U \operatorname{diag}(\bar s) V^H` exactly (finite for
    repeated singular values; docs/rules.md#svd) [Giles 2008]. The vectors are computed only
    when a derivative is needed.

    Examples
    --------
    >>> a = tf.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> tf.linalg.svdvals(a)
    tensor([3.61803399, 1.38196601], grad_fn=svd)
    >>> g, = tf.grad([tf.linalg.svdvals(a).sum()], [a])    # U V^H = I for this SPD matrix
    >>> np.allclose(g, np.eye(2))
    True
    """
    a = matrix_input(a, "tf.linalg.svdvals", check_finite=check_finite)
    if wants_derivative(a):
        values: Tensor = _svd(a, False, None, False, True)[1]
        return values
    d = a._data
    if d.size == 0:
        s = _empty_svd(d, False)[1]
    else:
        s = _lapack.svd(d, compute_uv=False)
    return Tensor._wrap(s)


svd_ad = builder(svd)
svdvals_ad = builder(svdvals)

register(svd, methods=("svd",))
register(svdvals, methods=("svdvals",))
