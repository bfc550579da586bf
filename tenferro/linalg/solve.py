"""tf.linalg.solve and tf.linalg.inv: square linear systems through one LU factorization.

``solve(a, b)`` factors ``a`` once (getrf) and keeps the factors for the pullback, which
then costs a single triangular solve pair (getrs with ``trans=2``, or for many
right-hand sides two recursive gemm-rich solves, see _trsm_route) and a matmul:

    X = A⁻¹B:   B̄ = A⁻ᴴX̄,  Ā = −B̄Xᴴ;     Ẋ = A⁻¹(Ḃ − ȦX)
    Y = A⁻¹:    Ā = −YᴴȲYᴴ;               Ẏ = −YȦY        (docs/rules.md#solve-and-inv, Giles 2008)

With ``create_graph=True`` (rule values are Tensors) the saved factors cannot carry a
graph, so the rule calls the differentiable ``solve`` on ``aᴴ`` instead: a second
factorization, paid only when a differentiable gradient is asked for.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike


import numpy as np

from .._kernels import load as load_kernel
from .._engine import apply1
from .._errors import LinAlgError, ShapeError
from .._ops._util import float_tensor, unbroadcast
from .._ops.registry import defop, register
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from ._common import _all_finite, batch_index, matrix_input, mH, right_hand_side
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["solve", "inv", "solve_ad", "inv_ad"]

# scale·op(A)⁻¹ from getrf's factors (inv here, the det/slogdet pullbacks in det.py)
_lu_inverse = load_kernel("inverse").lu_inverse
# the row order of getrf's interchanges, and the recursive (gemm-rich) triangular solve
_pivot_perm = load_kernel("inverse").pivot_perm
_trsm = load_kernel("triangular_backprop").trsm


# ---- LU helpers (ndarrays) ---------------------------------------------------------------

def _factor(a: Any, name: Any, remedy: Any) -> Any:
    """getrf of each matrix of the stack ``a``; LinAlgError naming the first singular one.

    getrf factors exactly singular matrices too and reports the first zero pivot in
    ``info``; that is the test numpy.linalg.solve/inv apply as well (no condition
    estimate).
    """
    lu, piv, info = _lapack.getrf(a, return_info=True)
    if np.count_nonzero(info):
        k = int(np.argmax(info.reshape(-1) > 0))
        i = int(info.reshape(-1)[k]) - 1
        which = (f"matrix {batch_index(k, a.shape[:-2])} of the stack" if a.ndim > 2
                 else "the matrix")
        raise LinAlgError(f"{name}: {which} is singular (pivot U[{i},{i}] = 0 in its LU "
                          f"factorization); {remedy}")
    return lu, piv


def _trsm_route(lu: Any, rhs: Any, trans: Any) -> bool:
    """Whether op(A)⁻¹·rhs goes through two recursive solves instead of getrs: many
    right-hand sides (k >= n/2) of a matrix with n > 32, the factors' batch that of rhs.
    getrs's solves are OpenBLAS's ?trsm, at about a third of gemm's speed per flop;
    triangular.trsm puts the flops in gemm: about half the time from n = 40 with k = n,
    while for fewer columns or smaller n getrs (or its plain loops up to 16) wins
    (docs/guide/kernels.md#choices-in-the-python-layer). complex Aᴴ stays on getrs
    (the recursive solve would copy the conjugated factors: slower)."""
    n, k = rhs.shape[-2:]
    return bool(n > 32 and 2 * k >= n and lu.shape[:-2] == rhs.shape[:-2]
                and (trans == 0 or lu.dtype.kind != "c"))


def _lu_solve(lu: Any, piv: Any, rhs: Any, trans: Any = 0) -> Any:
    """op(A)⁻¹·rhs from getrf factors (trans 0: A, 2: Aᴴ). ``rhs`` is (*batch, n, k); the
    batch dimensions of the factors and of rhs broadcast (getrs does that).

    With A = P L U (row i of LU is row perm[i] of A): A⁻¹b = U⁻¹L⁻¹(b[perm]), and
    A⁻ᴴb = x with x[perm] = L⁻ᴴU⁻ᴴb; many right-hand sides take these two recursive
    solves (see _trsm_route), the others getrs."""
    if _trsm_route(lu, rhs, trans):
        perm = _pivot_perm(piv)
        # row gathers/scatters as fancy indexing on (matrix, row) pairs (take_along_axis
        # costs ~15 µs at n = 64, 7x more)
        rows: Any = perm if perm.ndim == 1 else (
            np.arange(perm.size // perm.shape[-1])[:, None], perm.reshape(-1, perm.shape[-1]))
        if trans == 0:
            y = rhs[rows] if perm.ndim == 1 else rhs.reshape((-1,) + rhs.shape[-2:])[rows]
            y = _trsm(lu, y.reshape(rhs.shape), True, 0, True, True)    # L⁻¹ b[perm]
            return _trsm(lu, y, False, 0, False, True)                  # U⁻¹ ...
        y = _trsm(lu, rhs, False, trans, False, True)                   # U⁻ᴴ b
        y = _trsm(lu, y, True, trans, True, True)                       # L⁻ᴴ ...
        x = np.empty_like(y)
        (x if perm.ndim == 1 else x.reshape((-1,) + x.shape[-2:]))[rows] = \
            y if perm.ndim == 1 else y.reshape((-1,) + y.shape[-2:])    # x[perm] = ...
        return x
    rb = rhs.shape[:-2]
    if lu.ndim == 2 and rb:
        # one matrix, a stack of right-hand sides: a single getrs with the stack as columns
        # rather than one LAPACK call per right-hand side
        n, k = rhs.shape[-2:]
        cols = np.moveaxis(rhs, -2, 0).reshape(n, -1)
        x = _lapack.getrs(lu, piv, cols, trans).reshape((n,) + rb + (k,))
        return np.ascontiguousarray(np.moveaxis(x, 0, -2))
    return _lapack.getrs(lu, piv, rhs, trans)


def solve_in_rule(a: Any, b: Any, name: str = "a derivative rule") -> Any:
    """A⁻¹B inside a derivative rule (a, b matrices or stacks, batch dims broadcast);
    ``name`` (e.g. "tf.linalg.eig backward") heads the error for a singular ``a``.

    On ndarrays (a plain backward) this is a bare getrf + getrs; on Tensors
    (create_graph / forward-over-reverse) it is the differentiable :func:`solve`, so the
    rule that calls it stays differentiable. Other linalg rules (eig, ...) use it to apply
    an inverse without forming it.
    """
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return solve(a, b, check_finite=False)
    dt = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    ab, bb = a.shape[:-2], b.shape[:-2]
    shape = (ab if ab == bb else np.broadcast_shapes(ab, bb)) + b.shape[-2:]
    if 0 in shape or a.shape[-1] == 0:
        return np.zeros(shape, dt)
    lu, piv = _factor(a if a.dtype == dt else a.astype(dt), name,
                      "the derivative does not exist at this point")
    return _lu_solve(lu, piv, b)


# ---- solve -------------------------------------------------------------------------------

def _solve_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # B̄ = A⁻ᴴX̄ (reusing the forward LU), Ā = −B̄Xᴴ; each summed over broadcast batch dims
    lu, piv, vector = ctx
    a, b = xs
    g, x = gs[0], ys[0]
    if vector:  # b was a vector (n,): work with the (…, n, 1) column the primal solved
        g, x = g[..., None], x[..., None]
    if isinstance(g, Tensor):
        gb: Any = solve(mH(a), g, check_finite=False)
    elif lu is None:  # empty system: nothing was factored
        gb = np.zeros(g.shape, g.dtype)
    elif (needs[0] and g.shape[-2] <= 32
          and g.shape == x.shape == lu.shape[:-1] + x.shape[-1:]):
        # n <= 32: getrs (never _trsm_route). One compiled pass makes B̄ and Ā = −B̄Xᴴ
        # together (plain loops up to side 16: NumPy's matmul of a stack of small
        # matrices costs about what the solve does, 1000 8 x 8 with 2 rhs: ~90 µs)
        gb, ga = _lapack.getrs(lu, piv, g, 2, outer=x)
        return unbroadcast(ga, a.shape), (_b_grad(gb, b, vector) if needs[1] else None)
    else:
        gb = _lu_solve(lu, piv, g, trans=2)
    ga = unbroadcast(-(gb @ mH(x)), a.shape) if needs[0] else None
    return ga, (_b_grad(gb, b, vector) if needs[1] else None)


def _b_grad(gb: Any, b: Any, vector: bool) -> Any:
    """B̄ summed over b's broadcast batch dimensions (a vector b: back to (n,))."""
    gbb = unbroadcast(gb, b.shape + (1,) if vector else b.shape)
    return gbb.reshape(b.shape) if vector else gbb


def _solve_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẋ = A⁻¹(Ḃ − ȦX)
    lu, piv, vector = ctx
    ta, tb = ts
    x = ys[0]
    if vector:
        x = x[..., None]
        if tb is not None:
            tb = tb[..., None]
    rhs = tb
    if ta is not None:
        rhs = -(ta @ x) if rhs is None else rhs - ta @ x
    if isinstance(rhs, Tensor):
        dx: Any = solve(xs[0], rhs, check_finite=False)
    elif lu is None:
        dx = np.zeros(x.shape, x.dtype)
    else:
        dx = _lu_solve(lu, piv, rhs)
    return (dx[..., 0] if vector else dx,)


_solve_op = defop("solve", _solve_vjp, _solve_jvp,
                  doc="X = A⁻¹B through one LU factorization (numpy.linalg.solve)")

_SOLVE = "tf.linalg.solve"


@_docs.shared(PARAMS, RAISES)
def solve(a: ArrayLike, b: ArrayLike, *, check_finite: bool = True) -> Tensor:
    r"""Solve ``a @ x = b`` for square ``a``, like ``numpy.linalg.solve`` (NumPy 2 rules).

    Parameters
    ----------
    a
    b : array_like
        A vector (n,) when ``b.ndim == 1`` (x is then (*batch, n)), otherwise a stack of
        matrices (*batch, n, k); the batch dimensions broadcast.
    check_finite

    Returns
    -------
    Tensor
        x, with the promoted dtype of a and b.

    Raises
    ------
    LinAlgError
        For an exactly singular matrix (naming its batch index), or non-finite input.
    ShapeError
        If the shapes do not match.

    Notes
    -----
    Derivative: :math:`\bar B = A^{-H}\bar X`, :math:`\bar A = -\bar B X^H`; forward
    :math:`\dot X = A^{-1}(\dot B - \dot A X)` (with the primal's LU factors) [Giles 2008].

    a: (*batch, n, n). b: a vector (n,) when ``b.ndim == 1`` (x is then (*batch, n)),
    otherwise a stack of matrices (*batch, n, k); the batch dimensions broadcast. The
    result dtype is the promotion of both. An exactly singular matrix (a zero pivot in
    its LU factorization) raises LinAlgError naming its batch index; non-finite input
    raises LinAlgError unless ``check_finite=False``.

    Examples
    --------
    >>> a = tf.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> x = tf.linalg.solve(a, tf.tensor([1.0, 2.0]))
    >>> x
    tensor([0., 1.], grad_fn=solve)
    >>> tf.grad([x.sum()], [a])[0]
    tensor([[-0. , -0.2],
            [-0. , -0.4]])
    """
    a, b = float_tensor(a), float_tensor(b)
    ad, bd = a._data, b._data
    if ad.ndim >= 2 and ad.shape[-1] != ad.shape[-2]:
        raise ShapeError(
            f"{_SOLVE} needs a square coefficient matrix, got shape {ad.shape} "
            f"({ad.shape[-2]}x{ad.shape[-1]}); for a tall (overdetermined) or wide "
            "(underdetermined) system use tf.linalg.lstsq")
    matrix_input(a, _SOLVE, check_finite=check_finite)
    n = ad.shape[-1]
    vector, bm, batch, dt = right_hand_side(_SOLVE, ad, bd, "n", "{}", " (NumPy 2 rule)",
                                            check_finite)
    out_shape = batch + bm.shape[-2:]
    if n == 0 or 0 in out_shape:
        lu = piv = None
        x = np.zeros(out_shape, dt)
    else:
        lu, piv = _factor(ad if ad.dtype == dt else ad.astype(dt), _SOLVE,
                          "use tf.linalg.lstsq or tf.linalg.pinv for a least-squares "
                          "solution")
        x = _lu_solve(lu, piv, bm)
    if vector:
        x = x[..., 0]
    return apply1(_solve_op, (a, b), x, ctx=(lu, piv, vector))


def _replay(ctx: Any) -> Any:
    """tf.compile's replay of solve: factor and solve the new values, returning their
    factors as the new ctx (replay_ctx); singular or non-finite input raises, as solve
    does."""
    return _replay_solve


def _replay_solve(ad: Any, bd: Any) -> Any:
    vector, bm, batch, dt = right_hand_side(_SOLVE, ad, bd, "n", "{}", "", True)
    if ad.shape[-1] == 0 or 0 in batch + bm.shape[-2:] or not _all_finite(ad):
        raise FloatingPointError("empty or non-finite input: solve runs eagerly")
    lu, piv = _factor(ad if ad.dtype == dt else ad.astype(dt), _SOLVE, "")
    x = _lu_solve(lu, piv, bm)
    if vector:
        x = x[..., 0]
    return x, (lu, piv, vector)


_solve_op.replay = _replay
_solve_op.replay_ctx = True


# ---- inv ---------------------------------------------------------------------------------

def _inv_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Ā = −YᴴȲYᴴ
    yh = mH(ys[0])
    return (-(yh @ gs[0] @ yh),)


def _inv_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẏ = −YȦY
    y = ys[0]
    return (-(y @ ts[0] @ y),)


_inv_op = defop("inv", _inv_vjp, _inv_jvp, doc="Y = A⁻¹ from getrf's factors (U⁻¹L⁻¹Pᵀ)")

_INV = "tf.linalg.inv"


@_docs.shared(PARAMS, RAISES)
def inv(a: ArrayLike, *, check_finite: bool = True) -> Tensor:
    r"""Inverse of each square matrix of ``a`` (*batch, n, n), like ``numpy.linalg.inv``.

    Parameters
    ----------
    a, check_finite

    Returns
    -------
    Tensor
        The inverses.

    Raises
    ------
    LinAlgError
        For an exactly singular matrix (naming its batch index), or non-finite input.
    ShapeError

    Notes
    -----
    Derivative: :math:`\bar A = -Y^H \bar Y Y^H`, :math:`\dot Y = -Y \dot A Y` with
    :math:`Y = A^{-1}` [Giles 2008].

    Prefer :func:`solve` to multiplying by an inverse. An exactly singular matrix raises
    LinAlgError naming its batch index.

    Examples
    --------
    >>> tf.linalg.inv(tf.tensor([[3.0, 1.0], [1.0, 2.0]]))
    tensor([[ 0.4, -0.2],
            [-0.2,  0.6]])
    """
    a = matrix_input(a, _INV, square=True, check_finite=check_finite)
    d = a._data
    if d.size == 0:
        y = np.zeros(d.shape, d.dtype)
    else:
        # A⁻¹ = (Aᵀ)⁻ᵀ: getrf of Aᵀ reads a C-ordered A's memory as is (Fortran Aᵀ), and
        # the trans = 1 inverse of its factors is written in place of them, C-ordered,
        # with no transposing copy (U⁻¹L⁻¹Pᵀ on gemm-rich blocks: 4n³/3 flops, against
        # 2n³ of triangular solves for getrs on an identity)
        lu, piv = _factor(d.swapaxes(-1, -2), _INV,
                          "use tf.linalg.pinv for a pseudo-inverse, or tf.linalg.solve "
                          "for a system with a particular b")
        y = _lu_inverse(lu, piv, None, 1, True)
    return apply1(_inv_op, (a,), y)


solve_ad = builder(solve)
inv_ad = builder(inv)
register(solve, functions=(np.linalg.solve,))
register(inv, methods=("inv",), functions=(np.linalg.inv,))
