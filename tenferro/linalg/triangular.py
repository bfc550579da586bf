"""tf.linalg.solve_triangular, and the tril/triu helpers that linalg rules use.

``solve_triangular(a, b)`` solves op(A) X = B (``left=True``) or X op(A) = B
(``left=False``), op(A) = A, Aᵀ or Aᴴ for ``trans`` = 0, 1, 2, reading only the triangle
of A that ``lower`` names (without its diagonal when ``unit_diagonal``), like
``scipy.linalg.solve_triangular``. The other triangle is not read, so its cotangent is 0.

Rules (docs/rules.md#solve_triangular), with P the projection on the used
triangle (diagonal zeroed for ``unit_diagonal``), op⁻ᴴ = (op(A)ᴴ)⁻¹:

    left  X = op(A)⁻¹B:  G = op(A)⁻ᴴX̄,  B̄ = G,  M̄ = −GXᴴ   (M = op(A))
    right X = B op(A)⁻¹: G = X̄ op(A)⁻ᴴ, B̄ = G,  M̄ = −XᴴG
    Ā = P(op⁻¹(M̄)):  M̄ itself, M̄ᵀ or M̄ᴴ for trans 0, 1, 2
    JVP: Ẋ = op(A)⁻¹(Ḃ − op(P(Ȧ))X)  (left),  Ẋ = (Ḃ − X op(P(Ȧ)))op(A)⁻¹  (right)

The solves inside the rules are this op again (:func:`trsolve`), so the rules are
differentiable to any order. The decomposition rules (qr, lu, cholesky, eig) use
:func:`trsolve` and :func:`check_nonsingular` from here.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

import functools

import numpy as np

from .._kernels import load as load_kernel
from .._engine import apply1
from .._errors import LinAlgError, ShapeError
from .._tensor import Tensor
from .._ops._util import broadcast_shape, float_tensor, unbroadcast
from .._ops.manipulation import tril as _tril, triu as _triu
from .._ops.registry import Op, defop, register
from ..builders import builder
from ._common import _all_finite, check_finite_or_raise, mH, matrix_input
from .._ops import _docs
from ._glossary import PARAMS, RAISES

_backprop_kernel = load_kernel("triangular_backprop").solve_triangular_backprop
_trsm = load_kernel("triangular_backprop").trsm

__all__ = ["solve_triangular", "solve_triangular_ad"]

_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}

# ---- helpers for the linalg rules (ndarrays and Tensors alike) ---------------------------

_REAL = {np.dtype(t): np.dtype(r) for t, r in (
    (np.float32, np.float32), (np.float64, np.float64), (np.complex64, np.float32),
    (np.complex128, np.float64))}


@functools.lru_cache(maxsize=512)
def _weights(rows: int, cols: int, k: int, lower: bool, diag: Any, scale: Any,
             dtype: Any) -> Any:
    """scale · (0/1 mask of tril(·, k) or triu(·, k)), main diagonal scaled by ``diag``.
    Read-only and cached: the rules multiply by it (one ufunc; np.tril builds its mask
    and calls where on every call)."""
    w = np.tri(rows, cols, k, dtype) if lower else 1 - np.tri(rows, cols, k - 1, dtype)
    if diag != 1:
        i = np.arange(min(rows, cols))
        w[i, i] *= diag
    w *= scale
    w.flags.writeable = False
    return w


def _masked(x: Any, k: Any, lower: Any, diag: Any = 1.0, scale: Any = 1.0) -> Any:
    return x * _weights(x.shape[-2], x.shape[-1], k, lower, diag, scale, _REAL[x.dtype])


def tri_part(x: Any, k: Any = 0, lower: Any = True) -> Any:
    """tril(x, k) (``lower``) or triu(x, k) of a rule value: a multiply by a cached mask on
    ndarrays, the recorded tril/triu op (tenferro/_ops/manipulation.py) on Tensors."""
    if isinstance(x, Tensor):
        return _tril(x, k=k) if lower else _triu(x, k=k)
    return _masked(x, k, lower)


def tril(x: ArrayLike, k: int = 0) -> Tensor:
    """``tf.tril`` with ``k`` also positional (the spelling linalg code uses)."""
    return _tril(x, k=k)


def triu(x: ArrayLike, k: int = 0) -> Tensor:
    """``tf.triu`` with ``k`` also positional (the spelling linalg code uses)."""
    return _triu(x, k=k)


def halved(x: Any, lower: Any = True) -> Any:
    """tril(x) (``lower``) or triu(x) with the diagonal halved: Φ of docs/rules.md#cholesky,
    and the building block of copyltu in "qr" (Φ(M) + Φ(M)ᴴ). A multiply by a constant
    mask, so it is differentiable on Tensors."""
    return _masked(x, 0, lower, 0.5)


def project(x: Any, lower: Any, unit_diagonal: Any = False, scale: Any = 1.0) -> Any:
    """scale · P(x): the triangle a triangular solve reads (strict when ``unit_diagonal``)."""
    k = (-1 if lower else 1) if unit_diagonal else 0
    if isinstance(x, Tensor):
        p = tri_part(x, k, lower)
        return p if scale == 1 else p * scale
    return _masked(x, k, lower, 1.0, scale)


# ---- validation helpers -----------------------------------------------------------------

def check_nonsingular(d: Any, name: Any, what: Any, rtol: Any = 0.0) -> Any:
    """Raise LinAlgError naming the batch index if a triangular matrix (or stack) ``d`` has
    a diagonal entry with |d_jj| <= rtol·max_j |d_jj| (exactly zero for rtol = 0).
    ``what`` completes "<name>: matrix (i,) of the stack ...".

    Cheap (reads n entries per matrix); call it before a solve whose matrix may be
    singular, since the solve would otherwise return inf/nan without context.
    Decomposition rules pass rtol ~ n·eps: a factor that singular gives a derivative made
    of rounding errors.
    """
    diag = d.diagonal(0, -2, -1)
    if rtol:
        mag = np.abs(diag)
        if mag.ndim == 1:   # one matrix: two scalar reductions, no temporaries
            if mag.size == 0 or mag.min() > rtol * mag.max():
                return
            bad = mag <= rtol * mag.max()
            if not bad.any():   # a NaN on the diagonal: not singular, NaN propagates
                return
        else:
            bad = mag <= rtol * mag.max(axis=-1, keepdims=True, initial=0.0)
            if not bad.any():
                return
    else:
        if diag.all():
            return
        bad = diag == 0
    pos = np.argwhere(bad)[0]
    batch, j = tuple(int(i) for i in pos[:-1]), int(pos[-1])
    where = f"matrix {batch} of the stack" if batch else "the matrix"
    zero = "is zero" if diag[tuple(pos)] == 0 else "is zero to working precision"
    raise LinAlgError(f"{name}: {where} {what} (diagonal entry {j} {zero})")


# ---- the primal on ndarrays -------------------------------------------------------------

def _primal(a: Any, b: Any, lower: Any, trans: Any, unit: Any, left: Any,
            check: Any = False) -> Any:
    """op(a)⁻¹b (left) or b op(a)⁻¹ for ndarrays; b a matrix (stack), batch dims of a and
    b broadcast, dtypes promote. No validation: callers have done it. One call of the
    recursive batched solve (_kernels/triangular_backprop.pyx: its flops run in ?gemm,
    ~3x faster than one ?trsm for f64 at n = 256, ~1.3x for c128); ``check`` raises LinAlgError on an exactly zero
    diagonal entry instead of returning inf/nan."""
    return _trsm(a, b, lower, trans, unit, left, check)


_solve_op: Op = None  # type: ignore[assignment]  # defined below (the rules refer to trsolve, which refers to the op)


def trsolve(a: Any, b: Any, lower: Any = False, trans: Any = 0, unit_diagonal: Any = False,
            left: Any = True) -> Any:
    """op(a)⁻¹b or b op(a)⁻¹ inside a rule: the compiled solve on ndarrays (normal
    backward), the recorded op on Tensors (create_graph / forward-over-reverse). b is a
    matrix (stack); nothing is validated."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        a, b = float_tensor(a), float_tensor(b)
        out = _primal(a._data, b._data, lower, trans, unit_diagonal, left)
        return apply1(_solve_op, (a, b), out,
                      ctx=(bool(lower), trans, bool(unit_diagonal), bool(left), False))
    return _primal(a, b, lower, trans, unit_diagonal, left)


def _adjoint_solve(a: Any, g: Any, lower: Any, trans: Any, unit: Any, left: Any) -> Any:
    """op(A)⁻ᴴ g (left) or g op(A)⁻ᴴ (right)."""
    if trans == 1 and a.dtype.kind == "c":
        # op(A)ᴴ = conj(A) is no BLAS op: conj(A)⁻¹g = conj(A⁻¹ conj(g))
        return np.conj(trsolve(a, np.conj(g), lower, 0, unit, left))
    # op(A)ᴴ is Aᴴ for trans 0, A for trans 2, and A for trans 1 with real A
    return trsolve(a, g, lower, 2 if trans == 0 else 0, unit, left)


def _solve_triangular_backprop(a: Any, x: Any, gx: Any, lower: Any, trans: Any, unit: Any,
                               left: Any, need_a: Any, need_b: Any) -> Any:
    """(Ā, B̄) of X = op(A)⁻¹B (or B op(A)⁻¹) in matrix form, over the broadcast batch.

    On ndarrays (a plain backward) one call of the fused Cython kernel
    (_kernels/triangular_backprop.pyx: ?trsm for G, ?gemm on the kept triangle only);
    on Tensors (create_graph) the same formulas with recorded ops.
    """
    if not (isinstance(a, Tensor) or isinstance(x, Tensor) or isinstance(gx, Tensor)):
        return _backprop_kernel(a, x, gx, lower, trans, unit, left, need_a, need_b)
    g = _adjoint_solve(a, gx, lower, trans, unit, left)
    ga = None
    if need_a:
        mbar = g @ mH(x) if left else mH(x) @ g        # −M̄
        if trans == 1:
            mbar = np.swapaxes(mbar, -1, -2)
        elif trans == 2:
            mbar = mH(mbar)
        ga = project(mbar, lower, unit, -1.0)
    return ga, (g if need_b else None)


def _as_mat(v: Any, vec: Any, left: Any) -> Any:
    """A vector right-hand side (or its cotangent/tangent) as a one-column/one-row matrix."""
    if not vec:
        return v
    # indexing, not np.expand_dims/np.squeeze (NumPy's Python axis handling, ~1.5 µs
    # each: most of a 2x2 solve's cost); the same on ndarrays and on Tensors
    return v[..., None] if left else v[..., None, :]


def _from_mat(v: Any, vec: Any, left: Any) -> Any:
    if not vec:
        return v
    return v[..., 0] if left else v[..., 0, :]


def _solve_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    lower, trans, unit, left, vec = ctx
    a, b = xs
    ga, gb = _solve_triangular_backprop(a, _as_mat(ys[0], vec, left), _as_mat(gs[0], vec, left),
                                        lower, trans, unit, left, needs[0], needs[1])
    if ga is not None:
        ga = unbroadcast(ga, a.shape)
    if gb is not None:
        gb = unbroadcast(_from_mat(gb, vec, left), b.shape)
    return ga, gb


def _solve_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    lower, trans, unit, left, vec = ctx
    ta, tb = ts
    rhs = None if tb is None else _as_mat(tb, vec, left)
    if ta is not None:
        d = project(ta, lower, unit)
        if trans == 1:
            d = np.swapaxes(d, -1, -2)
        elif trans == 2:
            d = mH(d)
        x = _as_mat(ys[0], vec, left)
        dx = d @ x if left else x @ d
        rhs = -dx if rhs is None else rhs - dx
    return (_from_mat(trsolve(xs[0], rhs, lower, trans, unit, left), vec, left),)


_solve_op = defop("solve_triangular", _solve_vjp, _solve_jvp)


def _replay(ctx: Any) -> Any:
    """tf.compile's replay (ctx: lower, trans, unit, left, vector); an exactly zero
    diagonal entry or a non-finite input raises, as solve_triangular does."""
    lower, t, unit, left, vec = ctx

    def fn(a: Any, b: Any) -> Any:
        if not (_all_finite(a) and _all_finite(b)):
            raise FloatingPointError("non-finite input: solve_triangular runs eagerly")
        out = _primal(a, _as_mat(b, vec, left), lower, t, unit, left, check=not unit)
        return _from_mat(out, vec, left)
    return fn


_solve_op.replay = _replay


@_docs.shared(PARAMS, RAISES)
def solve_triangular(a: ArrayLike, b: ArrayLike, lower: bool = False, trans: int | str = 0,
                     unit_diagonal: bool = False, left: bool = True, *,
                     check_finite: bool = True) -> Tensor:
    r"""Solve ``op(a) @ x = b`` (``left=True``) or ``x @ op(a) = b`` (``left=False``) for
    triangular ``a``, like ``scipy.linalg.solve_triangular``.

    Parameters
    ----------
    a : array_like
        Triangular matrices (*batch, n, n); only the lower (``lower=True``) or upper
        triangle is read, without the diagonal when ``unit_diagonal=True``.
    b : array_like
        A vector (n,) or a matrix (*batch, n, k) (``left=False``: (*batch, k, n)); batch
        dimensions broadcast; b with ndim >= 2 is always a matrix (stack), as in NumPy 2 and
        SciPy.
    lower : bool, optional
        Read the lower triangle. Default False.
    trans : {0, 1, 2, 'N', 'T', 'C'}, optional
        op(a) = a, a^T or a^H. Default 0.
    unit_diagonal : bool, optional
        Take the diagonal as ones. Default False.
    left : bool, optional
        Solve ``op(a) @ x = b`` (True) or ``x @ op(a) = b`` (False). Default True.
    check_finite

    Returns
    -------
    Tensor
        x; differentiable in a and b (the gradient of a lives on the triangle read).

    Raises
    ------
    LinAlgError
        When a diagonal entry is exactly zero (naming the batch index), or on non-finite
        input.
    ShapeError
        If the shapes do not match.

    Notes
    -----
    Derivative (left, :math:`X = M^{-1}B`): :math:`G = M^{-H}\bar X`, :math:`\bar B = G`,
    :math:`\bar M = -GX^H` restricted to the triangle read [Giles 2008]
    (docs/rules.md#solve_triangular).

    Examples
    --------
    >>> a = tf.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> tf.linalg.solve_triangular(a, tf.tensor([2.0, 3.0]), lower=True)
    tensor([1., 2.])
    """
    name = "tf.linalg.solve_triangular"
    try:
        t = _TRANS[trans]
    except (KeyError, TypeError):
        raise ShapeError(f"{name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}"
                         ) from None
    a = matrix_input(a, name, square=True, check_finite=check_finite)
    bt: Tensor = float_tensor(b)
    ad, bd = a._data, bt._data
    n = ad.shape[-1]
    vec = bd.ndim == 1
    if bd.ndim == 0:
        raise ShapeError(f"{name}: b must be a vector (n,) or a matrix (*batch, n, k), got "
                         "a 0-d tensor")
    side = "rows" if left else "columns"
    bn = bd.shape[0] if vec else bd.shape[-2 if left else -1]
    if bn != n:
        raise ShapeError(
            f"{name}: a is {n}x{n} but b has shape {bd.shape}: b needs {n} {side} "
            f"({'op(a) @ x = b' if left else 'x @ op(a) = b'})")
    if check_finite:
        check_finite_or_raise(bd, name)
    if not vec and ad.shape[:-2] != bd.shape[:-2]:    # (np.broadcast_shapes: ~1.5 µs)
        broadcast_shape(name, ad.shape[:-2], bd.shape[:-2])
    lower, unit, left = bool(lower), bool(unit_diagonal), bool(left)
    try:   # the kernel checks the diagonal (for free); the message names the entry
        out = _primal(ad, _as_mat(bd, vec, left), lower, t, unit, left, check=not unit)
    except LinAlgError:
        check_nonsingular(ad, name, "is singular, so op(a) x = b has no unique solution; "
                          "if its diagonal is implicitly 1 pass unit_diagonal=True")
        raise
    if vec:
        out = out[..., :, 0] if left else out[..., 0, :]
    x: Tensor = apply1(_solve_op, (a, bt), out, ctx=(lower, t, unit, left, vec))
    return x


solve_triangular_ad = builder(solve_triangular)
