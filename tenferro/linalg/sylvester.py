"""tf.linalg.solve_sylvester (AX + XB = Q) and tf.linalg.solve_continuous_lyapunov
(AX + XAᴴ = Q), with reverse and forward rules (docs/rules.md#solve_sylvester).

Write S_{A,B}(Q) for the solution X of AX + XB = Q (Bartels–Stewart: Schur forms
A = U T Uᴴ, B = V R Vᴴ, then the (quasi-)triangular equation T Y + Y R = Uᴴ Q V by
LAPACK's ?trsyl and X = U Y Vᴴ). Differentiating AX + XB = Q gives
A Ẋ + Ẋ B = Q̇ − Ȧ X − X Ḃ, so

    JVP  Ẋ = S_{A,B}(Q̇ − ȦX − XḂ)
    VJP  Y = S_{Aᴴ,Bᴴ}(X̄)  (the adjoint of S_{A,B}),  Q̄ = Y,  Ā = −Y Xᴴ,  B̄ = −Xᴴ Y

(Kressner & Tobler; as in the adjoint of any linear solve, cf. Giles 2008). The adjoint
equation Tᴴ Y' + Y' Rᴴ = Uᴴ X̄ V reuses the forward Schur factors (?trsyl with
trans = 'C'/'T'), so a plain pullback costs two trsyl-sized solves and no new Schur
decomposition. With create_graph (rule values are Tensors) the rules call the
differentiable solve_sylvester, so every order is differentiable by recursion.

The solution is unique iff A and −B share no eigenvalue; ?trsyl reports when they are
equal or close in working precision (its info = 1), and that raises LinAlgError rather
than returning a perturbed answer. The Lyapunov equation is solve_sylvester(A, Aᴴ, Q):
its derivatives follow from the composition.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as _sla
from numpy.typing import ArrayLike

from .._engine import apply1
from .._errors import LinAlgError, ShapeError
from .._ops._util import broadcast_shape, float_tensor, unbroadcast
from .._ops.registry import defop
from .._tensor import Tensor
from ..builders import builder
from ._common import batch_index, check_finite_or_raise, mH
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["solve_sylvester", "solve_continuous_lyapunov", "solve_sylvester_ad",
           "solve_continuous_lyapunov_ad"]

_NAME = "tf.linalg.solve_sylvester"


# ---- Bartels–Stewart on ndarrays ---------------------------------------------------------

def schur_stack(a: Any) -> list[tuple[Any, Any]]:
    """[(T, U)] with a[k] = U T Uᴴ for each matrix of the stack ``a`` (flattened batch
    order): the real (quasi-triangular) Schur form of a real matrix, the complex
    (triangular) one of a complex matrix: the forms ?trsyl takes."""
    flat = a.reshape((-1,) + a.shape[-2:])
    out = "complex" if a.dtype.kind == "c" else "real"
    return [_sla.schur(m, output=out) for m in flat]


def _index_map(own: tuple[int, ...], batch: tuple[int, ...]) -> Any:
    """For each entry of ``batch`` (flattened), the flat index into a stack of batch shape
    ``own`` that broadcasts to it."""
    idx = np.arange(int(np.prod(own, dtype=np.int64))).reshape(own)
    return np.broadcast_to(idx, batch).reshape(-1)


def sylvester_schur(sa: list[tuple[Any, Any]], ab: tuple[int, ...],
                    sb: list[tuple[Any, Any]], bb: tuple[int, ...], q: Any,
                    batch: tuple[int, ...], adjoint: bool, name: str) -> Any:
    """S_{A,B}(Q) (``adjoint``: S_{Aᴴ,Bᴴ}(Q)) on ndarrays, from the Schur factors of A
    and B (:func:`schur_stack`; their batch shapes ``ab``, ``bb``). ``q`` (..., n, m);
    every batch shape broadcasts to ``batch``. The factors of A and B are both real or
    both complex; a complex q with real factors is solved as its real and imaginary parts
    (the operator is real on real matrices). LinAlgError when the operator is singular."""
    real = sa[0][0].dtype.kind != "c"
    if q.dtype.kind == "c" and real:
        re = sylvester_schur(sa, ab, sb, bb, np.ascontiguousarray(q.real), batch, adjoint,
                             name)
        im = sylvester_schur(sa, ab, sb, bb, np.ascontiguousarray(q.imag), batch, adjoint,
                             name)
        return re + 1j * im
    dt = np.result_type(sa[0][0].dtype, q.dtype)
    n, m = q.shape[-2:]
    out = np.empty(batch + (n, m), dt)
    if out.size == 0:
        return out
    qb = np.broadcast_to(q, batch + (n, m)).reshape(-1, n, m)
    ob = out.reshape(-1, n, m)
    ia, ib = _index_map(ab, batch), _index_map(bb, batch)
    trsyl, = _sla.get_lapack_funcs(("trsyl",), dtype=dt)
    trans = "N" if not adjoint else ("C" if dt.kind == "c" else "T")
    for k in range(qb.shape[0]):
        t, u = sa[ia[k]]
        r, v = sb[ib[k]]
        f = mH(u) @ qb[k] @ v
        if f.dtype != dt:
            f = f.astype(dt)
        # op(T) Y + Y op(R) = scale·F (scale <= 1 guards against overflow)
        y, scale, info = trsyl(t, r, f, trana=trans, tranb=trans)
        if info != 0:
            where = f"matrix {batch_index(k, batch)} of the stack" if batch else "the equation"
            raise LinAlgError(
                f"{name}: {where} has no unique solution: A and −B have a common (or, in "
                "working precision, nearly common) eigenvalue, so the Sylvester operator "
                "X ↦ AX + XB is singular")
        ob[k] = u @ (y / scale if scale != 1 else y) @ mH(v)
    return out


# ---- the op ------------------------------------------------------------------------------

def _sylvester_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Y = S_{Aᴴ,Bᴴ}(X̄);  Q̄ = Y, Ā = −Y Xᴴ, B̄ = −Xᴴ Y (each summed over broadcast dims)
    a, b, q = xs
    x, g = ys[0], gs[0]
    if isinstance(g, Tensor) or isinstance(a, Tensor):
        y: Any = solve_sylvester(mH(a), mH(b), g)
    else:
        sa, sb = ctx
        y = sylvester_schur(sa, a.shape[:-2], sb, b.shape[:-2], g, x.shape[:-2], True,
                            _NAME + " backward")
    ga = unbroadcast(-(y @ mH(x)), a.shape) if needs[0] else None
    gb = unbroadcast(-(mH(x) @ y), b.shape) if needs[1] else None
    gq = unbroadcast(y, q.shape) if needs[2] else None
    return ga, gb, gq


def _sylvester_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẋ = S_{A,B}(Q̇ − ȦX − XḂ)
    a, b, _ = xs
    ta, tb, tq = ts
    x = ys[0]
    rhs = tq
    if ta is not None:
        rhs = -(ta @ x) if rhs is None else rhs - ta @ x
    if tb is not None:
        rhs = -(x @ tb) if rhs is None else rhs - x @ tb
    if isinstance(rhs, Tensor) or isinstance(a, Tensor):
        return (solve_sylvester(a, b, rhs),)
    sa, sb = ctx
    return (sylvester_schur(sa, a.shape[:-2], sb, b.shape[:-2], rhs, x.shape[:-2], False,
                            _NAME + " derivative"),)


_sylvester_op = defop("solve_sylvester", _sylvester_vjp, _sylvester_jvp,
                      doc="X with AX + XB = Q (Bartels–Stewart: Schur forms and ?trsyl)")


def _square(t: Tensor, what: str, name: str) -> None:
    d = t._data
    if d.ndim < 2 or d.shape[-1] != d.shape[-2]:
        raise ShapeError(f"{name}: {what} must be a square matrix or a stack of square "
                         f"matrices, got shape {d.shape}")


@_docs.shared(PARAMS, RAISES)
def solve_sylvester(a: ArrayLike, b: ArrayLike, q: ArrayLike, *,
                    check_finite: bool = True) -> Tensor:
    r"""The solution X of ``A X + X B = Q``, like ``scipy.linalg.solve_sylvester``.

    Parameters
    ----------
    a : array_like
        (*batch, n, n).
    b : array_like
        (*batch, m, m).
    q : array_like
        (*batch, n, m); the batch dimensions broadcast.
    check_finite

    Returns
    -------
    Tensor
        X, the promoted dtype of the three.

    Raises
    ------
    LinAlgError
        When A and -B have a common eigenvalue (no unique solution; ?trsyl's test, in
        working precision), or for non-finite input.
    ShapeError
        For mismatched shapes.

    Notes
    -----
    Derivative: :math:`\dot X = S_{A,B}(\dot Q - \dot A X - X\dot B)`; reverse
    :math:`Y = S_{A^H,B^H}(\bar X)`, :math:`\bar Q = Y`, :math:`\bar A = -YX^H`,
    :math:`\bar B = -X^HY` [Bartels & Stewart 1972] (docs/rules.md#solve_sylvester);
    differentiable to every order.

    Examples
    --------
    >>> tf.linalg.solve_sylvester(tf.eye(2), tf.eye(2), tf.tensor([[2.0, 4.0], [6.0, 8.0]]))
    tensor([[1., 2.],
            [3., 4.]])
    """
    a, b, q = float_tensor(a), float_tensor(b), float_tensor(q)
    _square(a, "a", _NAME)
    _square(b, "b", _NAME)
    ad, bd, qd = a._data, b._data, q._data
    n, m = ad.shape[-1], bd.shape[-1]
    if qd.ndim < 2 or qd.shape[-2:] != (n, m):
        raise ShapeError(f"{_NAME}: q must have shape (..., {n}, {m}) for a of shape "
                         f"{ad.shape} and b of shape {bd.shape}, got {qd.shape}")
    batch = broadcast_shape(_NAME, broadcast_shape(_NAME, ad.shape[:-2], bd.shape[:-2]),
                            qd.shape[:-2])
    if check_finite:
        for d in (ad, bd, qd):
            check_finite_or_raise(d, _NAME)
    dt = np.result_type(ad.dtype, bd.dtype, qd.dtype)
    if 0 in batch or n == 0 or m == 0:
        return apply1(_sylvester_op, (a, b, q), np.zeros(batch + (n, m), dt), ctx=None)
    x, ctx = _primal(ad, bd, qd, batch, dt)
    return apply1(_sylvester_op, (a, b, q), x, ctx=ctx)


def _primal(ad: Any, bd: Any, qd: Any, batch: tuple[int, ...], dt: Any) -> tuple[Any, Any]:
    """X and the op's ctx (the Schur forms of A and B) for a non-empty problem."""
    # both Schur forms real or both complex (?trsyl takes one kind)
    sa = schur_stack(ad.astype(dt, copy=False))
    sb = schur_stack(bd.astype(dt, copy=False))
    x = sylvester_schur(sa, ad.shape[:-2], sb, bd.shape[:-2], qd.astype(dt, copy=False),
                        batch, False, _NAME)
    return x, (sa, sb)


def _replay(ad: Any, bd: Any, qd: Any) -> tuple[Any, Any]:
    """tf.compile's replay (replay_ctx: the new Schur forms are the ctx); a non-finite or
    empty input, or a singular operator, raises, and the call runs eagerly."""
    batch = np.broadcast_shapes(ad.shape[:-2], bd.shape[:-2], qd.shape[:-2])
    if 0 in batch or 0 in qd.shape[-2:] or not all(np.isfinite(d).all()
                                                   for d in (ad, bd, qd)):
        raise FloatingPointError("empty or non-finite input: solve_sylvester runs eagerly")
    return _primal(ad, bd, qd, batch, np.result_type(ad.dtype, bd.dtype, qd.dtype))


_sylvester_op.replay = lambda ctx: _replay
_sylvester_op.replay_ctx = True


_LYAP = "tf.linalg.solve_continuous_lyapunov"


@_docs.shared(PARAMS, RAISES)
def solve_continuous_lyapunov(a: ArrayLike, q: ArrayLike, *,
                              check_finite: bool = True) -> Tensor:
    """The solution X of ``A X + X Aᴴ = Q``, like ``scipy.linalg.solve_continuous_lyapunov``.

    Parameters
    ----------
    a : array_like
        (*batch, n, n).
    q : array_like
        (*batch, n, n).
    check_finite

    Returns
    -------
    Tensor
        X; it is ``solve_sylvester(a, a^H, q)``.

    Raises
    ------
    LinAlgError
        When A and -A^H share an eigenvalue (e.g. an eigenvalue on the imaginary axis).
    ShapeError
        For mismatched shapes.

    Notes
    -----
    Derivative: that of :func:`solve_sylvester` (in a and q, every order).

    Examples
    --------
    >>> tf.linalg.solve_continuous_lyapunov(-tf.eye(2), tf.tensor([[-2.0, 0.0], [0.0, -4.0]]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    a, q = float_tensor(a), float_tensor(q)
    _square(a, "a", _LYAP)
    _square(q, "q", _LYAP)
    if a.shape[-1] != q.shape[-1]:
        raise ShapeError(f"{_LYAP}: a of shape {a.shape} and q of shape {q.shape} do not "
                         "match; q must be (..., n, n) for a (..., n, n)")
    return solve_sylvester(a, mH(a), q, check_finite=check_finite)


solve_sylvester_ad = builder(solve_sylvester)
solve_continuous_lyapunov_ad = builder(solve_continuous_lyapunov)
