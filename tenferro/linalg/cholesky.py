"""tf.linalg.cholesky: A = L Lᴴ for Hermitian positive-definite A, with reverse and forward
rules (docs/rules.md#cholesky, Murray 2016, arXiv:1602.07527).

Like ``numpy.linalg.cholesky``, ``upper=False`` reads only the lower triangle of A (and
returns L); ``upper=True`` reads only the upper triangle and returns U = Lᴴ. The
derivatives treat A as Hermitian, as PyTorch does: the gradient is the Hermitian matrix
½(Ā + Āᴴ), and the JVP uses the Hermitian part ½(Ȧ + Ȧᴴ) of the tangent. For Hermitian
perturbations (the only ones that keep A Hermitian) this is the exact derivative; it
is also what keeps the gradient independent of which triangle was read.

With Φ(X) = tril(X) with the diagonal halved:
  VJP: Ā = L⁻ᴴ Φ(LᴴL̄) L⁻¹, then Ā ← ½(Ā + Āᴴ)
  JVP: L̇ = L Φ(L⁻¹ ½(Ȧ + Ȧᴴ) L⁻ᴴ)

cho_factor / cho_solve
----------------------
SciPy's pair, differentiable. ``cho_factor(a, lower=False)`` returns ``(c, lower)`` with
c = cholesky(a, upper=not lower): the factor with **zeros** in the other triangle (SciPy
leaves whatever a held there; code that relies on that garbage is wrong anyway), and
the derivatives of cholesky. ``cho_solve((c, lower), b)`` reads only the triangle of c
that ``lower`` names (as SciPy's does) and is two triangular solves,
X = L⁻ᴴ(L⁻¹B) (L = c, or cᴴ for an upper c), through the differentiable
solve_triangular: derivatives in c (on its triangle) and b, to every order.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike


import numpy as np

from .._kernels import load as load_kernel
from .._engine import apply1
from .._errors import LinAlgError, ShapeError
from .._ops.registry import defop, register
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from ._common import batch_index, factorization_replay, matrix_input
from ._common import mH
from .triangular import halved, solve_triangular, trsolve
from .._ops import _docs
from ._glossary import PARAMS, RAISES

_backprop_kernel = load_kernel("triangular_backprop").cholesky_backprop

__all__ = ["cholesky", "cholesky_ad", "cho_factor", "cho_solve", "cho_factor_ad",
           "cho_solve_ad"]

_NAME = "tf.linalg.cholesky"


def _not_pd(d: Any, upper: Any) -> Any:
    """The error for a stack with a matrix that is not positive definite, naming the first
    such matrix (found again one by one: this is the failure path only)."""
    batch = d.shape[:-2]
    flat = d.reshape((-1,) + d.shape[-2:])
    where = "the matrix"
    for k in range(flat.shape[0]):
        try:
            _lapack.potrf(flat[k], lower=not upper)
        except LinAlgError:
            if batch:
                where = f"matrix {batch_index(k, batch)} of the stack"
            break
    return LinAlgError(
        f"{_NAME}: {where} is not (numerically) positive definite; check that it is "
        "Hermitian with positive eigenvalues (add a small multiple of the identity if it "
        "is only semi-definite)")


def _cholesky_backprop(l: Any, gl: Any) -> Any:
    """Hermitian Ā from L and L̄ (L lower; only the lower triangle of L̄ matters).

    On Tensors (create_graph / forward-over-reverse) the closed formula, written in
    differentiable ops; on ndarrays (a plain backward) one call of the compiled kernel
    (_kernels/triangular_backprop.pyx cholesky_backprop: the same matrix by reverse mode
    of the blocked Cholesky, Murray 2016 §4, whose O(n³) work is mostly gemm: ~4x faster
    than the formula at n = 256, and one call instead of ~10 NumPy calls at n = 16).
    """
    if isinstance(l, Tensor) or isinstance(gl, Tensor):
        return _backprop_formula(l, gl)
    if l.dtype != gl.dtype:
        dt = np.result_type(l.dtype, gl.dtype)
        l, gl = l.astype(dt, copy=False), gl.astype(dt, copy=False)
    return _backprop_kernel(l, gl)


def _backprop_formula(l: Any, gl: Any) -> Any:
    """½(S + Sᴴ), S = L⁻ᴴ Φ(LᴴL̄) L⁻¹ (docs/rules.md#cholesky)."""
    s = trsolve(l, halved(mH(l) @ gl), lower=True, trans=2)     # L⁻ᴴ Φ(LᴴL̄)
    s = trsolve(l, s, lower=True, left=False)                   # ... L⁻¹
    return 0.5 * (s + mH(s))


def _cholesky_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    upper = ctx
    l, gl = ys[0], gs[0]
    if upper:   # U = Lᴴ: L̄ = Ūᴴ
        l, gl = mH(l), mH(gl)
    return (_cholesky_backprop(l, gl),)


def _cholesky_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    upper = ctx
    ta = ts[0]
    l = mH(ys[0]) if upper else ys[0]
    s = 0.5 * (ta + mH(ta))
    s = trsolve(l, s, lower=True)                               # L⁻¹ Ṡ
    s = trsolve(l, s, lower=True, trans=2, left=False)          # ... L⁻ᴴ
    dl = l @ halved(s)
    return (mH(dl) if upper else dl,)


_cholesky_op = defop("cholesky", _cholesky_vjp, _cholesky_jvp)


# (tf.compile: potrf raises where cholesky does, not positive definite)
_cholesky_op.replay = lambda upper: factorization_replay(
    "cholesky", lambda d: _lapack.potrf(d, lower=not upper))


@_docs.shared(PARAMS, RAISES)
def cholesky(a: ArrayLike, upper: bool = False, *, check_finite: bool = True) -> Tensor:
    r"""Cholesky factor of a Hermitian positive-definite (stack of) matrix, like
    ``numpy.linalg.cholesky``: L lower with A = L Lᴴ, or (``upper=True``) U = Lᴴ upper
    with A = Uᴴ U.

    Parameters
    ----------
    a : array_like
        A Hermitian positive-definite matrix (..., n, n) or a stack of them.
    upper : bool, optional
        Return the upper factor U = L^H (A = U^H U). Default False.
    check_finite

    Returns
    -------
    Tensor
        The triangular factor, ``a``'s shape.

    Raises
    ------
    LinAlgError
        When a matrix is not positive definite (naming the batch index), or on non-finite
        input.
    ShapeError

    Notes
    -----
    Derivative: :math:`\bar A = \tfrac12(S + S^H)`,
    :math:`S = L^{-H}\,\Phi(L^H \bar L)\,L^{-1}`, :math:`\Phi` the lower triangle with
    halved diagonal [Murray 2016] (docs/rules.md#cholesky).

    Only the lower (``upper=False``) or upper (``upper=True``) triangle of a is read. The
    gradient is Hermitian (A is treated as a Hermitian input). Raises LinAlgError naming
    the batch index when a matrix is not positive definite.

    Examples
    --------
    >>> tf.linalg.cholesky(tf.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    >>> a = tf.tensor([[4.0, 2.0], [2.0, 5.0]], requires_grad=True)
    >>> g, = tf.grad([tf.linalg.cholesky(a).sum()], [a])
    >>> g.shape
    (2, 2)
    """
    a = matrix_input(a, _NAME, square=True, check_finite=check_finite)
    d = a._data
    upper = bool(upper)
    if d.size == 0:
        out = np.zeros(d.shape, d.dtype)
    else:
        try:
            out = _lapack.potrf(d, lower=not upper)
        except LinAlgError:
            raise _not_pd(d, upper) from None
    return apply1(_cholesky_op, (a,), out, ctx=upper)


register(cholesky, methods=("cholesky",))
cholesky_ad = builder(cholesky)


@_docs.shared(PARAMS, RAISES)
def cho_factor(a: ArrayLike, lower: bool = False, *,
               check_finite: bool = True) -> tuple[Tensor, bool]:
    """Cholesky factorization for :func:`cho_solve`, like ``scipy.linalg.cho_factor``:
    ``(c, lower)`` with c the lower factor L (A = L Lᴴ, ``lower=True``) or the upper U
    (A = Uᴴ U), read from that triangle of a (*batch, n, n).

    Parameters
    ----------
    a : array_like
        A Hermitian positive-definite matrix (*batch, n, n).
    lower : bool, optional
        Return the lower factor L (A = L L^H); default False: the upper U (A = U^H U).
    check_finite

    Returns
    -------
    c : Tensor
        The factor (zeros in the other triangle).
    lower : bool
        As given.

    Raises
    ------
    LinAlgError
        When a matrix is not positive definite, or on non-finite input.

    Notes
    -----
    Derivative: as :func:`cholesky` [Murray 2016].

    Unlike SciPy, the other triangle of c holds zeros, not a's entries (cho_solve ignores
    it either way). c is differentiable as :func:`cholesky` (Hermitian gradient).

    Examples
    --------
    >>> c, lower = tf.linalg.cho_factor(tf.tensor([[4.0, 2.0], [2.0, 5.0]]))
    >>> c
    tensor([[2., 1.],
            [0., 2.]])
    """
    lower = bool(lower)
    return cholesky(a, upper=not lower, check_finite=check_finite), lower


_CHO_SOLVE = "tf.linalg.cho_solve"


@_docs.shared(PARAMS, RAISES)
def cho_solve(c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, *,
              check_finite: bool = True) -> Tensor:
    r"""Solve A x = b given the Cholesky factor of A, like ``scipy.linalg.cho_solve``.

    Parameters
    ----------
    c_and_lower : tuple of (array_like, bool)
        ``(c, lower)`` as from :func:`cho_factor`; only the triangle of c that ``lower``
        names is read.
    b : array_like
        A vector (n,) or a matrix (*batch, n, k); batch dims broadcast.
    check_finite

    Returns
    -------
    Tensor
        x with A x = b.

    Raises
    ------
    ShapeError
        If the shapes do not match.
    LinAlgError
        On non-finite input or a zero on the factor's diagonal.

    Notes
    -----
    Derivative: :math:`\bar b = A^{-1}\bar x` (two triangular solves), :math:`\bar c` from
    the triangular-solve rules (docs/rules.md#solve_triangular) [Giles 2008].

    c_and_lower: ``(c, lower)`` as from :func:`cho_factor`; only the triangle of c that
    ``lower`` names is read. b: a vector (n,) or a matrix (*batch, n, k); batch dims
    broadcast. Differentiable in c (its cotangent lives on the triangle read) and b.

    Examples
    --------
    >>> c = tf.linalg.cho_factor(tf.tensor([[4.0, 2.0], [2.0, 5.0]]))
    >>> tf.linalg.cho_solve(c, tf.tensor([6.0, 7.0]))
    tensor([1., 1.])
    """
    pair = isinstance(c_and_lower, (tuple, list)) and len(c_and_lower) == 2
    if not pair or not isinstance(c_and_lower[1], (bool, np.bool_, int)):
        raise ShapeError(f"{_CHO_SOLVE}: c_and_lower must be a pair (c, lower) with lower a "
                         "bool, as cho_factor returns")
    c, lower = c_and_lower[0], bool(c_and_lower[1])
    c = matrix_input(c, _CHO_SOLVE, square=True, check_finite=check_finite)
    # A = L Lᴴ: x = L⁻ᴴ(L⁻¹ b);  A = Uᴴ U: x = U⁻¹(U⁻ᴴ b)
    y = solve_triangular(c, b, lower=lower, trans=0 if lower else 2,
                         check_finite=check_finite)
    return solve_triangular(c, y, lower=lower, trans=2 if lower else 0, check_finite=False)


cho_factor_ad = builder(cho_factor)
cho_solve_ad = builder(cho_solve)
