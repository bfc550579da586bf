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
from .._ops._util import float_tensor
from .._ops.registry import defop
from .._tensor import Tensor
from ..builders import builder
from ._common import check_finite_or_raise

__all__ = ["solve_banded", "solve_banded_ad"]

_NAME = "tf.linalg.solve_banded"


def _cat(parts: list[Any], axis: int) -> Any:
    parts = [p for p in parts if p.shape[axis] != 0]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=axis)


def _zeros(shape: tuple[int, ...], like: Any) -> Any:
    return np.zeros(shape, like.dtype)


def _conj(x: Any) -> Any:
    return x.conj() if x.dtype.kind == "c" else x


def _band_matmul(ab: Any, x: Any, l: int, u: int) -> Any:
    """A X for the band ``ab`` of A (n x n) and X (n, k)."""
    n, k = x.shape
    out = None
    for d in range(-u, l + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        if j1 <= j0:
            continue
        term = ab[u + d, j0:j1][:, None] * x[j0:j1]               # rows j0 + d .. j1 + d
        term = _cat([_zeros((j0 + d, k), term), term, _zeros((n - j1 - d, k), term)], 0)
        out = term if out is None else out + term
    return out if out is not None else np.zeros((n, k), np.result_type(ab, x))


def _band_outer(y: Any, x: Any, l: int, u: int) -> Any:
    """P_band(Y Xᴴ): row u + d, column j holds Σ_k Y[j + d, k]·conj X[j, k]."""
    n = y.shape[0]
    xc = _conj(x)
    rows = []
    for d in range(-u, l + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        if j1 <= j0:
            rows.append(np.zeros((1, n), np.result_type(y.dtype, x.dtype)))
            continue
        r = (y[j0 + d:j1 + d] * xc[j0:j1]).sum(axis=-1)
        r = _cat([_zeros((j0,), r), r, _zeros((n - j1,), r)], 0)
        rows.append(r[None, :])
    return _cat(rows, 0)


def _band_adjoint(ab: Any, l: int, u: int) -> Any:
    """The band (bandwidths (u, l)) of Aᴴ: row l + d' holds conj ab[u − d', j + d']."""
    n = ab.shape[1]
    rows = []
    for d in range(-l, u + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        if j1 <= j0:
            rows.append(np.zeros((1, n), ab.dtype))
            continue
        r = _conj(ab[u - d, j0 + d:j1 + d])
        r = _cat([_zeros((j0,), r), r, _zeros((n - j1,), r)], 0)
        rows.append(r[None, :])
    return _cat(rows, 0)


def _used(ab: Any, l: int, u: int) -> Any:
    """ab with the corner entries that are not part of A zeroed (never read)."""
    m = np.zeros(ab.shape, bool)
    n = ab.shape[1]
    for d in range(-u, l + 1):
        j0, j1 = max(0, -d), min(n, n - d)
        m[u + d, j0:j1] = True
    return m


def _solve_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Y = A⁻ᴴX̄ (the band of Aᴴ, bandwidths (u, l)); B̄ = Y, āb = P_band(−Y Xᴴ)
    l, u, vector = ctx
    ab, _ = xs
    g, x = gs[0], ys[0]
    if vector:
        g, x = g[:, None], x[:, None]
    abh = _band_adjoint(ab, l, u)
    if isinstance(g, Tensor) or isinstance(ab, Tensor):
        y: Any = solve_banded((u, l), abh, g, check_finite=False)
    else:
        y = _primal(u, l, abh, g)
    gab = -_band_outer(y, x, l, u) if needs[0] else None
    gb = (y[:, 0] if vector else y) if needs[1] else None
    return gab, gb


def _solve_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẋ = A⁻¹(Ḃ − Ȧ X)
    l, u, vector = ctx
    ab, _ = xs
    tab, tb = ts
    x = ys[0][:, None] if vector else ys[0]
    rhs: Any = None if tb is None else (tb[:, None] if vector else tb)
    if tab is not None:
        ax = _band_matmul(tab, x, l, u)
        rhs = -ax if rhs is None else rhs - ax
    if isinstance(rhs, Tensor) or isinstance(ab, Tensor):
        dx: Any = solve_banded((l, u), ab, rhs, check_finite=False)
    else:
        dx = _primal(l, u, ab, rhs)
    return (dx[:, 0] if vector else dx,)


_banded_op = defop("solve_banded", _solve_vjp, _solve_jvp, batched=False,
                   doc="X = A⁻¹B for a banded A in LAPACK band storage (?gbsv)")


def _primal(l: int, u: int, ab: Any, b: Any) -> Any:
    if b.size == 0:
        return np.zeros(b.shape, np.result_type(ab.dtype, b.dtype))
    try:
        out = _sla.solve_banded((l, u), ab, b, check_finite=False)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"{_NAME}: the banded matrix is singular (a zero pivot in its LU "
                          "factorization), so a x = b has no unique solution") from None
    return out


def solve_banded(l_and_u: tuple[int, int], ab: ArrayLike, b: ArrayLike, *,
                 check_finite: bool = True) -> Tensor:
    r"""Solve ``a x = b`` for a banded ``a`` with ``l`` sub- and ``u`` superdiagonals, given
    in band storage ``ab`` (l + u + 1, n) (a[i, j] = ab[u + i − j, j]), like
    ``scipy.linalg.solve_banded``.

    Parameters
    ----------
    l_and_u : tuple of int
        ``(l, u)``: the numbers of sub- and superdiagonals.
    ab : array_like
        Band storage (l + u + 1, n): ``a[i, j] = ab[u + i - j, j]``.
    b : array_like
        (n,) or (n, k). One system (no batch dimensions: loop, or use tf.linalg.solve on the
        dense matrices).
    check_finite : bool, optional
        Raise LinAlgError on non-finite input. Default True.

    Returns
    -------
    Tensor
        x, b's shape.

    Raises
    ------
    LinAlgError
        For a singular a, or non-finite input.
    ShapeError
        For mismatched shapes.

    Notes
    -----
    Derivative: as :func:`solve` on the band (:math:`\bar b = A^{-H}\bar x`,
    :math:`\bar A = -\bar b x^H` on the band entries; the unused corners of ``ab`` get a zero
    cotangent), both modes, every order (docs/rules.md#solve_banded).

    Examples
    --------
    >>> ab = tf.tensor([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]])
    >>> tf.linalg.solve_banded((1, 1), ab, tf.tensor([3.0, 4.0, 3.0]))
    tensor([1., 1., 1.])
    """
    try:
        l, u = (operator.index(v) for v in l_and_u)
    except (TypeError, ValueError):
        raise ShapeError(f"{_NAME}: l_and_u must be a pair of non-negative ints (l, u), got "
                         f"{l_and_u!r}") from None
    if l < 0 or u < 0:
        raise ShapeError(f"{_NAME}: l and u must be non-negative, got ({l}, {u})")
    ab_t, b_t = float_tensor(ab), float_tensor(b)
    abd, bd = ab_t._data, b_t._data
    if abd.ndim != 2 or abd.shape[0] != l + u + 1:
        raise ShapeError(f"{_NAME}: ab must have shape (l + u + 1, n) = ({l + u + 1}, n) for "
                         f"(l, u) = ({l}, {u}), got {abd.shape} (no batch dimensions)")
    n = abd.shape[1]
    if bd.ndim not in (1, 2) or bd.shape[0] != n:
        raise ShapeError(f"{_NAME}: b must have shape ({n},) or ({n}, k) for ab of shape "
                         f"{abd.shape}, got {bd.shape}")
    if check_finite:
        # the corners of ab are not part of a: SciPy checks them too, but only finiteness
        # of the entries read matters
        check_finite_or_raise(np.where(_used(abd, l, u), abd, 0), _NAME)
        check_finite_or_raise(bd, _NAME)
    vector = bd.ndim == 1
    abd = np.where(_used(abd, l, u), abd, 0)
    x = _primal(l, u, abd, bd)
    dt = np.result_type(abd.dtype, bd.dtype)
    return apply1(_banded_op, (ab_t, b_t), x.astype(dt, copy=False), ctx=(l, u, vector))


solve_banded_ad = builder(solve_banded)
