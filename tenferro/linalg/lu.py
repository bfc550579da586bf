"""tf.linalg.lu: A = P L U with partial pivoting, with reverse and forward rules
(docs/rules.md#lu).

Shapes follow ``scipy.linalg.lu``: for A m×n and k = min(m, n), P is m×m, L is m×k unit
lower triangular, U is k×n upper triangular. P is a permutation matrix in A's dtype; it
is piecewise constant and has no derivative (a non-differentiable output). The rules hold
while the pivot order does not change and U's leading k×k block is nonsingular.

With Pᵀ applied to the tangent/cotangent rows (a gather, not a product), the rules are
those of A′ = PᵀA = LU:
  square:  F̄ = tril₋(LᴴL̄) + triu(ŪUᴴ),  Ā′ = L⁻ᴴ F̄ U⁻ᴴ
  wide  (U = [U₁|U₂]):  H₁ = (tril₋(LᴴL̄ − Ū₂U₂ᴴ) + triu(Ū₁U₁ᴴ)) U₁⁻ᴴ,  Ā′ = L⁻ᴴ [H₁ | Ū₂]
  tall  (L = [L₁; L₂]): H₁ = L₁⁻ᴴ (tril₋(L₁ᴴL̄₁) + triu(ŪUᴴ − L₂ᴴL̄₂)),  Ā′ = [H₁; L̄₂] U⁻ᴴ
  JVP (square): Ḟ = L⁻¹Ȧ′U⁻¹, L̇ = L tril₋(Ḟ), U̇ = triu(Ḟ)U; wide and tall by the same
  partition (written below with one solve over the whole of Ȧ′).
The VJP peels the wide/tall part off first (U₂ = L⁻¹A′₂, resp. L₂ = A′₂U⁻¹) and applies
the square rule to the k×k core; in a plain backward the core (with P, for a square A)
is one call of the compiled kernel (triangular_backprop.pyx lu_backprop: reverse mode of
the blocked LU, mostly gemm), on Tensors the formula.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

import functools
from collections import namedtuple

import numpy as np

from .._engine import apply
from .._kernels import load as load_kernel
from .._tensor import Tensor
from .._ops.registry import defop, register
from ..builders import builder
from . import _lapack
from ._common import matrix_input
from .._dtypes import eps_of
from ._common import mH
from .triangular import check_nonsingular, tri_part, trsolve
from .._ops import _docs
from ._glossary import PARAMS, RAISES

# Ā from L, U and their cotangents in one compiled call (square; P applied when given)
_backprop_kernel = load_kernel("triangular_backprop").lu_backprop

__all__ = ["lu", "LUResult", "lu_ad"]

LUResult = namedtuple("LUResult", ["p", "l", "u"])
LUResult.__doc__ = """Result of tf.linalg.lu: a = p @ l @ u (p a permutation, l unit lower, u upper triangular).

The result of :func:`lu` (a named tuple).

Attributes
----------
p : Tensor
    Permutation matrices (m x m), not differentiable.
l : Tensor
    Unit lower triangular factors (m x k).
u : Tensor
    Upper triangular factors (k x n).
"""

_NAME = "tf.linalg.lu"


def _check_u(u1: Any, m: Any) -> Any:
    d = u1._data if isinstance(u1, Tensor) else u1
    rtol = m * eps_of(d.dtype)
    # Fast pass: one sort gives each matrix's min and max |U_jj| (a third of the cost of
    # check_nonsingular's separate reductions at n = 16); the full check, for its
    # message, only when it fails. A NaN pivot (check_finite=False) sorts last and
    # passes: the derivative is NaN, as the factors are.
    mag = np.abs(d.diagonal(0, -2, -1))
    mag.sort(axis=-1)
    if mag.ndim == 1:
        if not mag[0] <= rtol * mag[-1]:
            return
    elif not (mag[..., 0] <= rtol * mag[..., -1]).any():
        return
    check_nonsingular(d, _NAME, "is singular (U has a zero pivot), so L and U are not "
                      "differentiable there", rtol=rtol)


def _gather_rows(x: Any, idx: Any) -> Any:
    """x[..., idx[..., i], :] for each i (a batched row gather)."""
    if x.ndim == 2 and idx.ndim == 1:
        return x[idx]
    idx = idx[..., None]
    return np.take_along_axis(x, np.broadcast_to(idx, idx.shape[:-1] + x.shape[-1:]), -2)


# Below this many rows P x is a matmul with the real P (one BLAS call); from it on a row
# gather (argmax + take: O(m²) instead of O(m²n)). Measured at m = 16, 32, 64 (f64/c128).
_GATHER_MIN = 33


def _real_p_matmul(pr: Any, x: Any) -> Any:
    """pr @ x for a real matrix (stack) pr; a complex x (C-ordered, of pr's precision) is
    taken as real rows of (re, im) pairs, so the product is one real matmul instead of a
    complex one with a complex copy of pr."""
    if x.dtype.kind == "c" and x.itemsize == 2 * pr.itemsize and x.flags.c_contiguous:
        return (pr @ x.view(pr.dtype)).view(x.dtype)
    return pr @ x


def _p_rows(p: Any, pr: Any, x: Any) -> Any:
    """P x. On ndarrays (``pr``: P in a's real dtype, the op's ctx) a permutation of rows:
    a small real matmul or a row gather; on Tensors the product with the constant P,
    which is differentiable in x."""
    if isinstance(x, Tensor):
        return p @ x
    if x.shape[-2] < _GATHER_MIN:
        return _real_p_matmul(pr, x)
    return _gather_rows(x, np.argmax(pr, axis=-1))    # P[i, idx[i]] = 1


def _pt_rows(p: Any, pr: Any, x: Any) -> Any:
    """Pᵀ x (see _p_rows)."""
    if isinstance(x, Tensor):
        return mH(p) @ x
    if x.shape[-2] < _GATHER_MIN:
        return _real_p_matmul(pr.swapaxes(-1, -2), x)
    return _gather_rows(x, np.argmax(pr, axis=-2))    # P[idx[j], j] = 1


@functools.lru_cache(maxsize=64)
def _strict_lower(k: int) -> Any:
    m = np.tri(k, k, -1, dtype=bool)
    m.flags.writeable = False
    return m


def _join(lo: Any, up: Any) -> Any:
    """tril₋(lo) + triu(up), either possibly None (zero): one where() when both exist."""
    if up is None:
        return tri_part(lo, -1)
    if lo is None:
        return tri_part(up, 0, False)
    return np.where(_strict_lower(lo.shape[-1]), lo, up)


def _core_formula(l: Any, u: Any, gl: Any, gu: Any) -> Any:
    """Ā′ = L⁻ᴴ F̄ U⁻ᴴ, F̄ = tril₋(LᴴL̄) + triu(ŪUᴴ), for square L, U (gl/gu may be None)."""
    f = _join(None if gl is None else mH(l) @ gl, None if gu is None else gu @ mH(u))
    f = trsolve(u, f, lower=False, trans=2, left=False)
    return trsolve(l, f, lower=True, trans=2, unit_diagonal=True)


def _plain(*xs: Any) -> bool:
    """True when every operand present is an ndarray (a plain backward, no Tensors)."""
    return all(x is None or type(x) is np.ndarray for x in xs)


def _core(l: Any, u: Any, gl: Any, gu: Any) -> Any:
    """The square rule: on ndarrays the compiled kernel (_kernels/triangular_backprop.pyx
    lu_backprop: reverse mode of the blocked LU, mostly gemm, one call for the stack),
    on Tensors (create_graph) the formula in differentiable ops."""
    if _plain(l, u, gl, gu):
        return _backprop_kernel(None, l, u, gl, gu)
    return _core_formula(l, u, gl, gu)


def _lu_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    a = xs[0]
    p, l, u = ys
    _, gl, gu = gs
    m, n = a.shape[-2:]
    k = min(m, n)
    if gl is None and gu is None:
        return (None,)
    if m == n and k and _plain(l, gl, gu):
        # square, a plain backward: Ā = P L⁻ᴴ F̄ U⁻ᴴ, P included, in one compiled call
        _check_u(u, m)
        return (_backprop_kernel(ctx[1], l, u, gl, gu),)
    pr = ctx[0]
    if a.size == 0:
        return (np.zeros(a.shape, a.dtype),)
    if m <= n:
        # wide: U₂ = L⁻¹A′₂ gives Ā′₂ = L⁻ᴴŪ₂ and L̄ −= Ā′₂U₂ᴴ; then the square rule
        # (together: H₁ = (tril₋(LᴴL̄ − Ū₂U₂ᴴ) + triu(Ū₁U₁ᴴ)) U₁⁻ᴴ, Ā′ = L⁻ᴴ[H₁ | Ū₂])
        u1 = u[..., :, :k]
        _check_u(u1, m)
        if n == k:
            return (_p_rows(p, pr, _core(l, u1, gl, gu)),)
        if gu is not None:
            a2 = trsolve(l, gu[..., :, k:], lower=True, trans=2, unit_diagonal=True)
            t = a2 @ mH(u[..., :, k:])
            gl = -t if gl is None else gl - t
            gu = gu[..., :, :k]
        else:
            a2 = np.zeros(a.shape[:-1] + (n - k,), a.dtype)
        return (_p_rows(p, pr, np.concatenate([_core(l, u1, gl, gu), a2], -1)),)
    # tall: L₂ = A′₂U⁻¹ gives Ā′₂ = L̄₂U⁻ᴴ and Ū −= L₂ᴴĀ′₂; then the square rule
    # (together: H₁ = L₁⁻ᴴ(tril₋(L₁ᴴL̄₁) + triu(ŪUᴴ − L₂ᴴL̄₂)), Ā′ = [H₁; L̄₂]U⁻ᴴ)
    _check_u(u, m)
    if gl is not None:
        a2 = trsolve(u, gl[..., k:, :], lower=False, trans=2, left=False)
        t = mH(l[..., k:, :]) @ a2
        gu = -t if gu is None else gu - t
        gl = gl[..., :k, :]
    else:
        a2 = np.zeros(a.shape[:-2] + (m - k, n), a.dtype)
    return (_p_rows(p, pr, np.concatenate([_core(l[..., :k, :], u, gl, gu), a2], -2)),)


def _lu_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    ta = ts[0]
    p, l, u = ys
    m, n = ta.shape[-2:]
    k = min(m, n)
    if ta.size == 0:
        return None, np.zeros(l.shape, l.dtype), np.zeros(u.shape, u.dtype)
    ta = _pt_rows(p, ctx[0], ta)                                  # Ȧ′ = PᵀȦ
    if m <= n:
        # Y = L⁻¹Ȧ′, Ḟ = Y₁U₁⁻¹, L̇ = L tril₋(Ḟ), U̇ = Y − tril₋(Ḟ)U  (= L⁻¹(Ȧ′ − L̇U))
        y = trsolve(l, ta, lower=True, unit_diagonal=True)
        u1 = u[..., :, :k]
        _check_u(u1, m)
        lt = tri_part(trsolve(u1, y[..., :, :k], lower=False, left=False), -1)
        return None, l @ lt, y - lt @ u
    # tall: Z = Ȧ′U⁻¹, Ḟ = L₁⁻¹Z₁, U̇ = triu(Ḟ)U, L̇ = Z − L triu(Ḟ)  (= (Ȧ′ − LU̇)U⁻¹)
    _check_u(u, m)
    z = trsolve(u, ta, lower=False, left=False)
    ut = tri_part(trsolve(l[..., :k, :], z[..., :k, :], lower=True, unit_diagonal=True),
                  0, False)
    return None, z - l @ ut, ut @ u


_lu_op = defop("lu", _lu_vjp, _lu_jvp, nondiff=(0,))


def _empty_lu(d: Any) -> Any:
    m, n = d.shape[-2:]
    k = min(m, n)
    batch = d.shape[:-2]
    p = np.zeros(batch + (m, m), d.dtype)
    p[..., np.arange(m), np.arange(m)] = 1
    l = np.zeros(batch + (m, k), d.dtype)
    l[..., np.arange(k), np.arange(k)] = 1
    return p, l, np.zeros(batch + (k, n), d.dtype)


@_docs.shared(PARAMS, RAISES)
def lu(a: ArrayLike, *, check_finite: bool = True) -> LUResult:
    r"""LU decomposition with partial pivoting A = P L U, like ``scipy.linalg.lu``.

    Parameters
    ----------
    a : array_like
        Matrices (*batch, m, n).
    check_finite

    Returns
    -------
    LUResult
        Named tuple ``(p, l, u)``: p (m x m) a permutation matrix of a's dtype (not
        differentiable), l (m x k) unit lower triangular, u (k x n) upper triangular,
        k = min(m, n).

    Raises
    ------
    LinAlgError
        On non-finite input; (backward) when U's leading k x k block is exactly singular.
    ShapeError
        If ``a.ndim < 2``.

    Notes
    -----
    Derivative (square): :math:`\bar F = \operatorname{tril}_-(L^H\bar L) +
    \operatorname{triu}(\bar U U^H)`, :math:`\bar A' = L^{-H}\bar F U^{-H}` with
    :math:`A' = P^T A`; exact while the pivot order is locally constant and U's leading
    block is nonsingular (docs/rules.md#lu for the wide and tall cases).

    Examples
    --------
    >>> a = tf.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> p, l, u = tf.linalg.lu(a)
    >>> np.allclose(p @ l @ u, a)
    True
    """
    a = matrix_input(a, _NAME, check_finite=check_finite)
    d = a._data
    if d.size == 0:
        p, l, u = _empty_lu(d)
        pr, perm = p.real, None
    else:
        # P in the real dtype and the row order perm (P[perm[i], i] = 1): the rules'
        # row permutations use them
        p, l, u, perm = _lapack.lu(d, True)
        pr = p
        if p.dtype != d.dtype:
            p = p.astype(d.dtype)
    return LUResult(*apply(_lu_op, (a,), (p, l, u), (pr, perm)))


register(lu, methods=("lu",))
lu_ad = builder(lu)
