"""The array API (2024.12) linalg extension's products and small matrix functions:
cross, outer, vecdot, matrix_power, matrix_rank, and the array-API spellings diagonal,
trace, matmul, matrix_transpose and tensordot of the structure ops.

Rules (docs/design.md#complex-numbers: a VJP is the adjoint of the linearization for the real inner
product Re⟨ȳ, ẏ⟩ = Re Σ conj(ȳ)·ẏ; cotangents are summed over broadcast dimensions):

cross      c = a × b (bilinear). The triple product c·(a × b) = a·(b × c) is algebraic
           (no conjugation), so Re⟨c̄, ȧ × b⟩ = Re⟨conj(b) × c̄, ȧ⟩:
               ā = conj(b) × c̄,   b̄ = c̄ × conj(a);     ċ = ȧ × b + a × ḃ.
outer      y = a bᵀ (1-D a, b):   ā = ȳ conj(b),  b̄ = ȳᵀ conj(a);     ẏ = ȧ bᵀ + a ḃᵀ.
vecdot     y = Σ_k conj(a_k) b_k over ``axis`` (linear in b, antilinear in a):
               ā = conj(ȳ)·b,  b̄ = ȳ·a;     ẏ = vecdot(ȧ, b) + vecdot(a, ḃ).
matrix_power
           A^n for n ≥ 2 by repeated squaring: a straight-line program of ⌊log₂ n⌋
           squarings and popcount(n) − 1 further products Z = X Y of earlier values.
           The op keeps those values and its rules run the program's product rule:
               JVP  Ż = Ẋ Y + X Ẏ (forward through the program),
               VJP  X̄ += Z̄ Yᴴ, Ȳ += Xᴴ Z̄ (backward through it),
           which sums to Ā = Σ_{k=0}^{n−1} (Aᴴ)^k P̄ (Aᴴ)^{n−1−k} for P = A^n, with
           O(log n) products instead of the 2(n − 1) of that sum. n = 0 gives the
           identity (recorded, with gradient 0), n = 1 returns ``x`` itself (as NumPy),
           and n < 0 is the power −n of tf.linalg.inv(x) (two recorded ops).

Why one op with this rule: ``python asv_bench/benchmarks/bench_linalg_ext.py
--strategies`` times forward + backward against (a) the same program recorded as tf.matmul
nodes (the same products plus each node's dispatch and pullback call: 0.9-1.1x the op at
n = 2, 1.1-1.5x slower for n >= 3 at 4x4 and 16x16, 1.05-1.15x at 64x64) and (b) an op
whose pullback is the Σ_k sum by Horner's scheme (0.8-1.0x the op for n <= 3, where it
saves a few Python steps, 1.0-1.3x slower at n = 5, 1.7-3.5x slower for n = 8..16, as
O(n) against O(log n) products). With create_graph (rule values are Tensors) the rules
recompute the program's values with tf.matmul, so every order is differentiable.

matrix_rank counts singular values s > rtol·s_max (rtol default max(M, N)·eps); the
result is an int64 tensor with no derivative (a piecewise-constant function).
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

import functools
import operator

import numpy as np

from .._engine import apply1, note_escape
from .._errors import DTypeError, ShapeError
from .._ops import structure as _structure
from .._ops._util import (bilinear_jvp, broadcast_shape, conj, operands, to_tensor,
                          unbroadcast)
from .._ops.registry import defop, register, register_nondiff
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from ._common import matrix_input, mH
from .lstsq import _rtol_array
from .solve import inv
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["cross", "outer", "vecdot", "matrix_power", "matrix_rank", "diagonal", "trace",
           "matmul", "matrix_transpose", "tensordot",
           "cross_ad", "outer_ad", "vecdot_ad", "matrix_power_ad", "matrix_rank_ad"]


def _vector_axis(axis: Any, s1: Any, s2: Any, name: Any) -> Any:
    """The vector axis of two operands (shapes s1, s2) as a negative int.

    The array API counts it from the last dimension of each operand: -N..-1 with
    N = min(ndims). A non-negative axis is accepted when both operands have the same
    ndim (then it names the same dimension of both).
    """
    n = min(len(s1), len(s2))
    if n == 0:
        raise ShapeError(f"{name} needs operands of dimension >= 1, got shapes {s1} and "
                         f"{s2}; multiply by a scalar with *")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise ShapeError(f"{name}: axis must be an int, got {axis!r}") from None
    if -n <= axis < 0:
        return axis
    if len(s1) == len(s2) and 0 <= axis < n:
        return axis - n
    raise ShapeError(f"{name}: axis {axis} is out of range for shapes {s1} and {s2}; give "
                     f"a negative axis in [-{n}, -1] (counted from the last dimension)")


def _check_vector_shapes(s1: Any, s2: Any, axis: Any, name: Any, size: Any = None) -> Any:
    """The broadcast shape of two vector stacks; the vector axis itself must not broadcast
    (equal lengths before broadcasting, and ``size`` when given)."""
    n1, n2 = s1[axis], s2[axis]
    if size is not None and not n1 == n2 == size:
        raise ShapeError(f"{name} needs vectors of length {size} along axis {axis}, got "
                         f"shapes {s1} and {s2} (lengths {n1} and {n2})")
    if n1 != n2:
        raise ShapeError(f"{name}: the vectors along axis {axis} have different lengths, "
                         f"{n1} and {n2} (shapes {s1} and {s2}); that axis is not "
                         "broadcast")
    # np.broadcast_shapes costs ~3 µs, as much as the rest of the validation
    return s1 if s1 == s2 else broadcast_shape(name, s1, s2)


# ==== cross ===============================================================================

def _cross_np(a: Any, b: Any, axis: Any) -> Any:
    """a × b of ndarrays along the (negative, validated) ``axis``; other dims broadcast."""
    if axis != -1:
        a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    shape = a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape)
    dt = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    out = np.empty(shape, dt)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    # three products of components (np.cross computes the same, with more wrapping)
    np.subtract(a1 * b2, a2 * b1, out=out[..., 0])
    np.subtract(a2 * b0, a0 * b2, out=out[..., 1])
    np.subtract(a0 * b1, a1 * b0, out=out[..., 2])
    return out if axis == -1 else np.moveaxis(out, -1, axis)


def _cross(a: Any, b: Any, axis: Any) -> Any:
    """a × b in a rule: the recorded op on Tensors, plain NumPy on ndarrays."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return cross(a, b, axis=axis)
    return _cross_np(a, b, axis)


def _cross_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    (a, b), g = xs, gs[0]
    ga = unbroadcast(_cross(conj(b), g, ctx), a.shape) if needs[0] else None
    gb = unbroadcast(_cross(g, conj(a), ctx), b.shape) if needs[1] else None
    return ga, gb


_cross_op = defop("cross", _cross_vjp, bilinear_jvp(_cross),
                  doc="cross product of 3-vectors along an axis (array API linalg.cross)")


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Tensor:
    r"""Cross product of the 3-vectors along ``axis`` of ``x1`` and ``x2`` (array API
    ``linalg.cross``, ``numpy.linalg.cross``).

    Parameters
    ----------
    x1, x2 : array_like
        Length 3 along ``axis`` (that axis is not broadcast); the other dimensions broadcast.
    axis : int, optional
        Counts from the last dimension of each operand (-N..-1, N the smaller ndim; a
        non-negative axis is accepted for operands of one ndim). Default -1.

    Returns
    -------
    Tensor
        The broadcast shape, the promoted dtype.

    Raises
    ------
    ShapeError
        If a length along ``axis`` is not 3, or the other dimensions do not broadcast.
    AxisError
        If ``axis`` is out of range.

    Notes
    -----
    Derivative: :math:`\bar x_1 = \overline{x_2}\times\bar c`,
    :math:`\bar x_2 = \bar c\times\overline{x_1}` (docs/rules.md#products).

    Examples
    --------
    >>> tf.linalg.cross(tf.tensor([1.0, 0.0, 0.0]), tf.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    a, b = operands(x1, x2)
    name = "tf.linalg.cross"
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        raise DTypeError(f"{name} takes numeric tensors, got {a.dtype} and {b.dtype}; "
                         "convert bool tensors first, e.g. t.astype(tf.int64)")
    ax = _vector_axis(axis, a.shape, b.shape, name)
    _check_vector_shapes(a.shape, b.shape, ax, name, size=3)
    res: Tensor = apply1(_cross_op, (a, b), _cross_np(a._data, b._data, ax), ctx=ax)
    return res


# ==== outer ===============================================================================

def _outer(a: Any, b: Any) -> Any:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return outer(a, b)
    return np.multiply.outer(a, b)


def _outer_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    (a, b), g = xs, gs[0]
    ga = g @ conj(b) if needs[0] else None
    gb = conj(a) @ g if needs[1] else None
    return ga, gb


_outer_op = defop("outer", _outer_vjp, bilinear_jvp(_outer, with_ctx=False), batched=False,
                  doc="outer product a bᵀ of two vectors (array API linalg.outer)")


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    r"""Outer product ``x1[:, None] * x2[None, :]`` of two 1-D tensors (array API
    ``linalg.outer``).

    Parameters
    ----------
    x1 : array_like
        1-D, length N.
    x2 : array_like
        1-D, length M.

    Returns
    -------
    Tensor
        Shape (N, M), the promoted dtype.

    Raises
    ------
    ShapeError
        If an operand is not 1-D.

    Notes
    -----
    Derivative: :math:`\bar x_1 = \bar y\,\overline{x_2}`,
    :math:`\bar x_2 = \bar y^T\overline{x_1}` (docs/rules.md#products).

    Examples
    --------
    >>> tf.linalg.outer(tf.tensor([1.0, 2.0]), tf.tensor([1.0, 0.0, 1.0]))
    tensor([[1., 0., 1.],
            [2., 0., 2.]])
    """
    a, b = operands(x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"tf.linalg.outer takes two 1-D tensors, got shapes {a.shape} and "
                         f"{b.shape}; for stacks use x1[..., :, None] * x2[..., None, :]")
    res: Tensor = apply1(_outer_op, (a, b), np.multiply.outer(a._data, b._data))
    return res


# ==== vecdot ==============================================================================

def _vecdot(a: Any, b: Any, axis: Any) -> Any:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return vecdot(a, b, axis=axis)
    # the gufunc's axis keyword costs ~2 µs; -1 is its default
    if axis == -1:
        return np.vecdot(a, b)
    # numpy's stubs omit the gufuncs' axis= keyword (a runtime keyword since NumPy 2.0)
    return np.vecdot(a, b, axis=axis)  # type: ignore[call-overload]


def _vecdot_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    (a, b), g = xs, gs[0]
    # ȳ with a length-1 axis at ``ctx``; on ndarrays by indexing (np.expand_dims ~2 µs)
    g = np.expand_dims(g, ctx) if isinstance(g, Tensor) else g[
        (Ellipsis, None) + (slice(None),) * (-ctx - 1)]
    ga = unbroadcast(conj(g) * b, a.shape) if needs[0] else None
    gb = unbroadcast(g * a, b.shape) if needs[1] else None
    return ga, gb


_vecdot_op = defop("vecdot", _vecdot_vjp, bilinear_jvp(_vecdot),
                   doc="Σ conj(x1)·x2 along an axis, others broadcast (array API vecdot)")


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Tensor:
    r"""Dot products :math:`\sum_k \overline{x_{1k}}\,x_{2k}` along ``axis`` (array API ``vecdot``,
    ``numpy.vecdot``); note that ``x1`` is conjugated.

    Parameters
    ----------
    x1, x2 : array_like
        Equal lengths along ``axis`` (that axis is not broadcast); the other dimensions
        broadcast.
    axis : int, optional
        Counts from the last dimension of each operand (-N..-1; a non-negative axis is
        accepted for operands of one ndim). Default -1.

    Returns
    -------
    Tensor
        The broadcast shape of the other dimensions.

    Raises
    ------
    ShapeError
        If the lengths along ``axis`` differ or the rest does not broadcast.
    AxisError
        If ``axis`` is out of range.

    Notes
    -----
    Derivative: :math:`\bar x_1 = \overline{\bar y}\,x_2`, :math:`\bar x_2 = \bar y\,x_1`
    (docs/rules.md#products).

    Examples
    --------
    >>> tf.vecdot(tf.tensor([1.0, 2.0]), tf.tensor([3.0, 4.0]))
    tensor(11.)
    >>> tf.vecdot(tf.tensor([1j]), tf.tensor([1j]))
    tensor(1.+0.j, dtype=complex128)
    """
    a, b = operands(x1, x2)
    name = "tf.linalg.vecdot"
    ax = _vector_axis(axis, a.shape, b.shape, name)
    _check_vector_shapes(a.shape, b.shape, ax, name)
    res: Tensor = apply1(_vecdot_op, (a, b), _vecdot(a._data, b._data, ax), ctx=ax)
    return res


# ==== matrix_power ========================================================================

@functools.lru_cache(maxsize=64)
def _power_program(n: int) -> Any:
    """The repeated-squaring program of A^n, n >= 2: steps (i, j), step k making value
    k + 1 = value i @ value j (value 0 is A); the last value is A^n."""
    steps: list[Any] = []
    acc = None          # index of the product of the powers taken so far
    sq = 0              # index of A^(2^t)
    while True:
        if n & 1:
            if acc is None:
                acc = sq
            else:
                steps.append((acc, sq))
                acc = len(steps)
        n >>= 1
        if not n:
            return tuple(steps)
        steps.append((sq, sq))
        sq = len(steps)


def _run_program(a: Any, steps: Any) -> Any:
    """All values of the program (ndarrays or recorded Tensors)."""
    vals = [a]
    for i, j in steps:
        vals.append(vals[i] @ vals[j])
    return vals


def _mpow_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    steps, vals = ctx
    a, g = xs[0], gs[0]
    if not steps:                                # n = 0: the identity, a constant
        return (np.zeros(a.shape, a.dtype),)
    if isinstance(a, Tensor) or isinstance(g, Tensor):
        vals = _run_program(a, steps)            # recorded: the rule is differentiable
    hs = [mH(v) for v in vals[:-1]]             # every value but A^n is a factor
    cots = [None] * len(vals)
    cots[-1] = g
    for k in range(len(steps) - 1, -1, -1):
        i, j = steps[k]
        z = cots[k + 1]
        ci, cj = z @ hs[j], hs[i] @ z
        cots[i] = ci if cots[i] is None else cots[i] + ci
        cots[j] = cj if cots[j] is None else cots[j] + cj
    return (cots[0],)


def _mpow_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    steps, vals = ctx
    a, t = xs[0], ts[0]
    if not steps:
        return (np.zeros(ys[0].shape, ys[0].dtype),)
    if isinstance(a, Tensor) or isinstance(t, Tensor):
        vals = _run_program(a, steps)
    tans = [t]
    for i, j in steps:
        tans.append(tans[i] @ vals[j] + vals[i] @ tans[j])
    return (tans[-1],)


_mpow_op = defop("matrix_power", _mpow_vjp, _mpow_jvp,
                 doc="A^n (n >= 2) by repeated squaring; rules through the same products")


@_docs.shared(PARAMS, RAISES)
def matrix_power(x: ArrayLike, n: int, /, *, check_finite: bool = True) -> Tensor:
    r"""``x`` (*batch, M, M) raised to the integer power ``n`` (array API
    ``linalg.matrix_power``, ``numpy.linalg.matrix_power``).

    Parameters
    ----------
    x : array_like
        Square matrices (*batch, M, M).
    n : int
        The power: 0 gives identity matrices (gradient zero), n < 0 the power -n of
        ``tf.linalg.inv(x)``.
    check_finite : bool, optional
        Applies to the inversion of n < 0 only: a positive power is products, and NaN/Inf
        propagate as in NumPy. Default True.

    Returns
    -------
    Tensor
        :math:`X^n`.

    Raises
    ------
    LinAlgError
        For n < 0 and a singular (or, with ``check_finite``, non-finite) matrix.
    ShapeError

    Notes
    -----
    Derivative: repeated squaring with the product rule, summing to
    :math:`\bar A = \sum_{k=0}^{n-1}(A^H)^k\bar P(A^H)^{n-1-k}` in :math:`O(\log n)` products
    (docs/rules.md#products); differentiable to every order.

    Examples
    --------
    >>> tf.linalg.matrix_power(tf.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    name = "tf.linalg.matrix_power"
    try:
        if isinstance(n, (bool, np.bool_)):
            raise TypeError
        n = operator.index(n)
    except TypeError:
        raise DTypeError(f"{name}: the exponent must be an int, got {n!r} "
                         f"({type(n).__name__}); for a non-integer power use an "
                         "eigendecomposition, or tf.linalg.matrix_exp") from None
    x = matrix_input(x, name, square=True, check_finite=False)
    if n < 0:
        x, n = inv(x, check_finite=check_finite), -n
    if n == 1:
        return x
    d = x._data
    if n == 0:
        out = np.zeros(d.shape, d.dtype)
        idx = np.arange(d.shape[-1])
        out[..., idx, idx] = 1
        res: Tensor = apply1(_mpow_op, (x,), out, ctx=((), None))
        return res
    steps = _power_program(n)
    vals = _run_program(d, steps)
    res = apply1(_mpow_op, (x,), vals[-1], ctx=(steps, vals))
    return res


# ==== matrix_rank =========================================================================

def matrix_rank(x: ArrayLike, /, *, rtol: ArrayLike | None = None,
                check_finite: bool = True) -> Tensor:
    """Rank of each matrix of ``x`` (*batch, M, N): the number of singular values
    s > rtol·s_max (array API ``linalg.matrix_rank``, NumPy 2's rule).

    Parameters
    ----------
    x : array_like
        Matrices (*batch, M, N).
    rtol : float or array_like, optional
        Default ``max(M, N) * eps`` of x's dtype; a real number, or an array broadcasting to
        the batch shape.
    check_finite : bool, optional
        Raise LinAlgError for NaN/Inf entries. Default True.

    Returns
    -------
    Tensor
        int64, shape (*batch), no derivative (the rank is piecewise constant).

    Raises
    ------
    LinAlgError
        For non-finite input unless ``check_finite=False``.

    Examples
    --------
    >>> tf.linalg.matrix_rank(tf.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    name = "tf.linalg.matrix_rank"
    x = matrix_input(x, name, check_finite=check_finite)
    d = x._data
    r = _rtol_array(rtol, d, name)
    if d.shape[-1] == 0 or d.shape[-2] == 0 or d.size == 0:
        rank = np.zeros(d.shape[:-2], np.int64)
    else:
        s = _lapack.svd(d, full_matrices=False, compute_uv=False)
        # s is descending: s[..., :1] is s_max of each matrix
        rank = np.count_nonzero(s > s[..., :1] * r[..., None], axis=-1)
        rank = np.asarray(rank, dtype=np.int64)
    note_escape("matrix_rank", x)
    return Tensor._wrap(rank)


# ==== array API spellings of the structure ops ============================================

def _stack_of_matrices(x: Any, name: Any) -> Any:
    x = to_tensor(x)
    if x.ndim < 2:
        raise ShapeError(f"{name} needs a matrix or a stack of matrices (ndim >= 2), got "
                         f"shape {x.shape}")
    return x


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Tensor:
    """The ``offset`` diagonal of each matrix over the LAST two axes (array API
    ``linalg.diagonal``; numpy.diagonal defaults to the first two).

    Parameters
    ----------
    x : array_like
        Matrices (*batch, M, N).
    offset : int, optional
        The diagonal: 0 the main one, positive above. Default 0.

    Returns
    -------
    Tensor
        Shape (*batch, K).

    Raises
    ------
    ShapeError
        If ``x.ndim < 2``.

    Notes
    -----
    Derivative: linear (as :func:`tenferro.diagonal`).

    Examples
    --------
    >>> tf.linalg.diagonal(tf.ones((2, 3, 3))).shape
    (2, 3)
    """
    x = _stack_of_matrices(x, "tf.linalg.diagonal")
    return _structure.diagonal(x, offset, -2, -1)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """Sum of the ``offset`` diagonal of each matrix over the last two axes (array API
    ``linalg.trace``).

    Parameters
    ----------
    x : array_like
        Matrices (*batch, M, N).
    offset : int, optional
        The diagonal. Default 0.
    dtype : dtype, optional
        Casts ``x`` first (tf.astype: float32, float64, complex64, complex128).

    Returns
    -------
    Tensor
        Shape (*batch).

    Raises
    ------
    DTypeError
        Casting complex to real.
    ShapeError
        If ``x.ndim < 2``.

    Notes
    -----
    Derivative: linear (as :func:`tenferro.trace`).

    Examples
    --------
    >>> tf.linalg.trace(tf.eye(3))
    tensor(3.)
    """
    name = "tf.linalg.trace"
    t: Tensor = _stack_of_matrices(x, name)
    if dtype is None:
        return _structure.trace(t, offset, -2, -1)
    dt = _dtype(dtype, name)
    if dt.kind in "fc":
        return _structure.trace(_structure.astype(t, dt), offset, -2, -1)  # differentiable
    if t.requires_grad:
        raise DTypeError(f"{name}: dtype={dt} would drop the gradient of a tensor that "
                         "requires grad; detach it first, or ask for a float dtype")
    # an integer/bool sum (NumPy accumulates in int64: cast after, the same modulo 2^bits)
    out = _structure.trace(Tensor._wrap(t._data.astype(dt)), offset, -2, -1)
    return out if out.dtype == dt else Tensor._wrap(out._data.astype(dt))


def _dtype(dtype: Any, name: Any) -> Any:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{name}: {dtype!r} is not a dtype") from None
    if dt.kind not in "biufc" or dt == np.float16 or dt == np.longdouble:
        raise DTypeError(f"{name}: dtype {dt} is not supported; use a bool, integer, "
                         "float32/64 or complex64/128 dtype")
    return dt


def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    r"""Matrix product (array API ``linalg.matmul``; the same op as :func:`tenferro.matmul` and
    ``@``).

    Parameters
    ----------
    x1, x2 : array_like
        Operands of dimension >= 1; batch dimensions broadcast.

    Returns
    -------
    Tensor
        ``x1 @ x2``.

    Raises
    ------
    ShapeError
        If the inner dimensions do not match.

    Notes
    -----
    Derivative: :math:`\bar A = \bar C B^H`, :math:`\bar B = A^H \bar C` [Giles 2008].

    Examples
    --------
    >>> tf.linalg.matmul(tf.eye(2), tf.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    return _structure.matmul(x1, x2)


def matrix_transpose(x: ArrayLike, /) -> Tensor:
    """Transpose of the last two axes (array API ``linalg.matrix_transpose``; tf's
    matrix_transpose, ``t.mT``).

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 2.

    Returns
    -------
    Tensor
        A view with the last two axes swapped.

    Raises
    ------
    ShapeError
        If ``x.ndim < 2``.

    Notes
    -----
    Derivative: linear; the VJP transposes the cotangent.

    Examples
    --------
    >>> tf.linalg.matrix_transpose(tf.ones((2, 3))).shape
    (3, 2)
    """
    return _structure.matrix_transpose(x)


def tensordot(x1: ArrayLike, x2: ArrayLike, /, *, axes: Any = 2) -> Tensor:
    """Tensor contraction (array API ``linalg.tensordot``; the same op as
    :func:`tenferro.tensordot`).

    Parameters
    ----------
    x1, x2 : array_like
        The operands.
    axes : int or pair of sequences of int, optional
        An int contracts the last ``axes`` axes of x1 with the first of x2; a pair of axis
        sequences contracts them pairwise. Default 2.

    Returns
    -------
    Tensor
        The contraction: x1's free axes, then x2's.

    Raises
    ------
    ShapeError
        If the contracted lengths differ or ``axes`` is malformed.

    Notes
    -----
    Derivative: bilinear; each VJP contracts the cotangent with the other operand.

    Examples
    --------
    >>> tf.linalg.tensordot(tf.ones((2, 3)), tf.ones(3), axes=1)
    tensor([3., 3.])
    """
    return _structure.tensordot(x1, x2, axes)


register(cross, functions=(np.linalg.cross,))
register(outer, functions=(np.linalg.outer,))
register(vecdot, ufuncs=(np.vecdot,), functions=(np.linalg.vecdot,))
register(matrix_power, functions=(np.linalg.matrix_power,))
register_nondiff(np.linalg.matrix_rank)          # NumPy's own function on the payload
register(diagonal, functions=(np.linalg.diagonal,))
register(trace, functions=(np.linalg.trace,))
register(matmul, functions=(np.linalg.matmul,))
register(matrix_transpose, functions=(np.linalg.matrix_transpose,))
register(tensordot, functions=(np.linalg.tensordot,))
cross_ad = builder(cross)
outer_ad = builder(outer)
vecdot_ad = builder(vecdot)
matrix_power_ad = builder(matrix_power)
matrix_rank_ad = builder(matrix_rank)
