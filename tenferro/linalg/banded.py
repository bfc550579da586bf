"""tf.linalg.solve_banded: A X = B for a banded A given in LAPACK's band storage, like
``scipy.linalg.solve_banded``, with reverse and forward rules (docs/rules.md#solve_banded).

``ab`` (l + u + 1, n) holds A[i, j] at ab[u + i − j, j] (the entries of ab outside the
band's triangle corners are not read). The rules are those of solve (Giles 2008)
restricted to the band, P_band the gather of a dense matrix's band into that layout:

    VJP  Y = A⁻ᴴ X̄ (a banded solve with Aᴴ, bandwidths (u, l)),  B̄ = Y,
         āb = P_band(−Y Xᴴ): āb[u + d, j] = −Σ_k Y[j + d, k]·conj X[j, k]
    JVP  Ẋ = A⁻¹(Ḃ − Ȧ X), Ȧ X the banded product of the tangent's band

Every piece is O(n·(l + u)·k), never a dense n × n matrix. The band products are written
with slices, products and sums, and the adjoint solve is solve_banded itself, so on
Tensors (create_graph) the rules are differentiable to every order.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np
import scipy.linalg as _sla
from numpy.typing import ArrayLike

from .._engine import apply1
from .._errors import LinAlgError, ShapeError
from .._ops._util import float_tensor, unbroadcast
from .._ops.registry import defop
from .._tensor import Tensor
from ..builders import builder
from ._common import batch_index, check_finite_or_raise
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["solve_banded", "solve_banded_ad"]

_NAME = "tf.linalg.solve_banded"


def _cat(parts: list[Any], axis: int) -> Any:
    parts = [p for p in parts if p.shape[axis] != 0]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=axis)


def _zeros(shape: tuple[int, ...], like: Any) -> Any:
    return np.zeros(shape, like.dtype)


def _conj(x: Any) -> Any:
    return x.conj() if x.dtype.kind == "c" else x


# The band helpers work on stacks (leading batch dimensions) of ndarrays or Tensors alike:
# only slices, products, sums and concatenation, so on Tensors they are differentiable.

def _band_matmul(ab: Any, x: Any, l: int, u: int) -> Any:
    """A X for the bands ``ab`` (..., l + u + 1, n) and X (..., n, k); batches broadcast."""
    n, k = x.shape[-2:]
    out = None
    for d in range(-u, l + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        if j1 <= j0:
            continue
        term = ab[..., u + d, j0:j1][..., None] * x[..., j0:j1, :]   # rows j0 + d .. j1 + d
        lead = term.shape[:-2]
        term = _cat([_zeros(lead + (j0 + d, k), term), term,
                     _zeros(lead + (n - j1 - d, k), term)], -2)
        out = term if out is None else out + term
    if out is None:
        lead = np.broadcast_shapes(ab.shape[:-2], x.shape[:-2])
        return np.zeros(lead + (n, k), np.result_type(ab.dtype, x.dtype))
    return out


def _band_outer(y: Any, x: Any, l: int, u: int) -> Any:
    """P_band(Y Xᴴ) of stacks: row u + d, column j holds Σ_k Y[j + d, k]·conj X[j, k]."""
    n = y.shape[-2]
    lead = np.broadcast_shapes(y.shape[:-2], x.shape[:-2])
    xc = _conj(x)
    rows = []
    for d in range(-u, l + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        if j1 <= j0:
            rows.append(np.zeros(lead + (1, n), np.result_type(y.dtype, x.dtype)))
            continue
        r = (y[..., j0 + d:j1 + d, :] * xc[..., j0:j1, :]).sum(axis=-1)
        r = _cat([_zeros(r.shape[:-1] + (j0,), r), r, _zeros(r.shape[:-1] + (n - j1,), r)],
                 -1)
        rows.append(r[..., None, :])
    return _cat(rows, -2)


def _band_adjoint(ab: Any, l: int, u: int) -> Any:
    """The bands (bandwidths (u, l)) of Aᴴ: row l + d' holds conj ab[u − d', j + d']."""
    n = ab.shape[-1]
    lead = ab.shape[:-2]
    rows = []
    for d in range(-l, u + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        if j1 <= j0:
            rows.append(np.zeros(lead + (1, n), ab.dtype))
            continue
        r = _conj(ab[..., u - d, j0 + d:j1 + d])
        r = _cat([_zeros(lead + (j0,), r), r, _zeros(lead + (n - j1,), r)], -1)
        rows.append(r[..., None, :])
    return _cat(rows, -2)


def _used(shape: tuple[int, ...], l: int, u: int) -> Any:
    """The mask (l + u + 1, n) of the band storage's entries that are part of A (the
    corners outside it are never read)."""
    n = shape[-1]
    m = np.zeros((l + u + 1, n), bool)
    for d in range(-u, l + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        m[u + d, j0:j1] = True
    return m


def _solve_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Y = A⁻ᴴX̄ (the band of Aᴴ, bandwidths (u, l)); B̄ = Y, āb = P_band(−Y Xᴴ), each
    # summed over the batch dimensions it was broadcast along
    l, u, vector = ctx
    ab, b = xs
    g, x = gs[0], ys[0]
    if vector:
        g, x = g[..., None], x[..., None]
    abh = _band_adjoint(ab, l, u)
    if isinstance(g, Tensor) or isinstance(ab, Tensor):
        y: Any = solve_banded((u, l), abh, g, check_finite=False)
    else:
        y = _primal(u, l, abh, g)
    gab = unbroadcast(-_band_outer(y, x, l, u), ab.shape) if needs[0] else None
    gb = unbroadcast(y[..., 0] if vector else y, b.shape) if needs[1] else None
    return gab, gb


def _solve_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẋ = A⁻¹(Ḃ − Ȧ X)
    l, u, vector = ctx
    ab, _ = xs
    tab, tb = ts
    x = ys[0][..., None] if vector else ys[0]
    rhs: Any = None if tb is None else (tb[..., None] if vector else tb)
    if tab is not None:
        ax = _band_matmul(tab, x, l, u)
        rhs = -ax if rhs is None else rhs - ax
    if rhs.shape != x.shape:            # (a tangent of b alone, broadcast along a batch)
        rhs = rhs + np.zeros(x.shape, rhs.dtype)
    if isinstance(rhs, Tensor) or isinstance(ab, Tensor):
        dx: Any = solve_banded((l, u), ab, rhs, check_finite=False)
    else:
        dx = _primal(l, u, ab, rhs)
    return (dx[..., 0] if vector else dx,)


_banded_op = defop("solve_banded", _solve_vjp, _solve_jvp,
                   doc="X = A⁻¹B for a banded A in LAPACK band storage (?gbsv), per matrix "
                       "of a stack")


def _primal(l: int, u: int, ab: Any, b: Any) -> Any:
    """A⁻¹B for bands ab (..., l + u + 1, n) and b (..., n, k) (batches broadcast), one
    ?gbsv per matrix of the stack; LinAlgError naming a singular one."""
    lead = np.broadcast_shapes(ab.shape[:-2], b.shape[:-2])
    dt = np.result_type(ab.dtype, b.dtype)
    out = np.empty(lead + b.shape[-2:], dt)
    if out.size == 0:
        return out
    abf = np.broadcast_to(ab, lead + ab.shape[-2:]).reshape((-1,) + ab.shape[-2:])
    bf = np.broadcast_to(b, lead + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    of = out.reshape((-1,) + b.shape[-2:])
    for k in range(of.shape[0]):
        try:
            of[k] = _sla.solve_banded((l, u), abf[k], bf[k], check_finite=False)
        except np.linalg.LinAlgError:
            where = f"matrix {batch_index(k, lead)} of the stack" if lead else "the banded matrix"
            raise LinAlgError(f"{_NAME}: {where} is singular (a zero pivot in its LU "
                              "factorization), so a x = b has no unique solution") from None
    return out


def _check(l_and_u: Any, abd: Any, bd: Any) -> tuple[int, int, bool]:
    """(l, u, b is one vector) after the shape checks."""
    try:
        l, u = (operator.index(v) for v in l_and_u)
    except (TypeError, ValueError):
        raise ShapeError(f"{_NAME}: l_and_u must be a pair of non-negative ints (l, u), got "
                         f"{l_and_u!r}") from None
    if l < 0 or u < 0:
        raise ShapeError(f"{_NAME}: l and u must be non-negative, got ({l}, {u})")
    if abd.ndim < 2 or abd.shape[-2] != l + u + 1:
        raise ShapeError(f"{_NAME}: ab must have shape (..., l + u + 1, n) = "
                         f"(..., {l + u + 1}, n) for (l, u) = ({l}, {u}), got {abd.shape}")
    n = abd.shape[-1]
    if bd.ndim < 1 or bd.shape[-1 if bd.ndim == 1 else -2] != n:
        raise ShapeError(f"{_NAME}: b must have shape ({n},) or (..., {n}, k) for ab of "
                         f"shape {abd.shape}, got {bd.shape} (a stack of vectors is "
                         "b[..., None], as in SciPy)")
    if bd.ndim > 1:
        try:
            np.broadcast_shapes(abd.shape[:-2], bd.shape[:-2])
        except ValueError:
            raise ShapeError(f"{_NAME}: the batch dimensions of ab {abd.shape[:-2]} and b "
                             f"{bd.shape[:-2]} do not broadcast") from None
    return l, u, bd.ndim == 1


@_docs.shared(PARAMS, RAISES)
def solve_banded(l_and_u: tuple[int, int], ab: ArrayLike, b: ArrayLike, *,
                 check_finite: bool = True) -> Tensor:
    r"""Solve ``a x = b`` for a banded ``a`` with ``l`` sub- and ``u`` superdiagonals, given
    in band storage ``ab`` (..., l + u + 1, n) (a[i, j] = ab[..., u + i − j, j]), like
    ``scipy.linalg.solve_banded``, for one matrix or a stack.

    Parameters
    ----------
    l_and_u : tuple of int
        ``(l, u)``: the numbers of sub- and superdiagonals.
    ab : array_like
        Band storage (..., l + u + 1, n): ``a[i, j] = ab[..., u + i - j, j]``; leading
        dimensions are a stack of matrices.
    b : array_like
        (n,) (one vector for every matrix) or (..., n, k); the batch dimensions of ab and b
        broadcast (SciPy's rule: a stack of vectors is ``b[..., None]``).
    check_finite

    Returns
    -------
    Tensor
        x, of shape batch + b's last one or two dimensions.

    Raises
    ------
    LinAlgError
        For a singular a (naming its batch index), or non-finite input.
    ShapeError
        For mismatched shapes or batch dimensions that do not broadcast.

    Notes
    -----
    Derivative: as :func:`solve` on the band (:math:`\bar b = A^{-H}\bar x`,
    :math:`\bar A = -\bar b x^H` on the band entries; the unused corners of ``ab`` get a zero
    cotangent; per matrix of a stack, summed over broadcast dimensions), both modes, every
    order (docs/rules.md#solve_banded).

    Examples
    --------
    >>> ab = tf.tensor([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]])
    >>> tf.linalg.solve_banded((1, 1), ab, tf.tensor([3.0, 4.0, 3.0]))
    tensor([1., 1., 1.])
    >>> tf.linalg.solve_banded((1, 1), tf.stack([ab, 2 * ab]), tf.tensor([3.0, 4.0, 3.0]))
    tensor([[1. , 1. , 1. ],
            [0.5, 0.5, 0.5]])
    """
    ab_t, b_t = float_tensor(ab), float_tensor(b)
    abd, bd = ab_t._data, b_t._data
    l, u, vector = _check(l_and_u, abd, bd)
    used = _used(abd.shape, l, u)
    if check_finite:
        # the corners of ab are not part of a: SciPy checks them too, but only finiteness
        # of the entries read matters
        check_finite_or_raise(np.where(used, abd, 0), _NAME)
        check_finite_or_raise(bd, _NAME)
    x = _primal(l, u, np.where(used, abd, 0), bd[:, None] if vector else bd)
    return apply1(_banded_op, (ab_t, b_t), x[..., 0] if vector else x, ctx=(l, u, vector))


def _replay(ctx: Any) -> Any:
    """tf.compile's replay (ctx: l, u, vector); a non-finite or empty input raises (the
    call then runs eagerly), as does a singular matrix."""
    l, u, vector = ctx

    def fn(abd: Any, bd: Any) -> Any:
        abd = np.where(_used(abd.shape, l, u), abd, 0)
        if abd.size == 0 or bd.size == 0 or not (np.isfinite(abd).all()
                                                 and np.isfinite(bd).all()):
            raise FloatingPointError("empty or non-finite input: solve_banded runs eagerly")
        x = _primal(l, u, abd, bd[:, None] if vector else bd)
        return x[..., 0] if vector else x
    return fn


_banded_op.replay = _replay


solve_banded_ad = builder(solve_banded)
