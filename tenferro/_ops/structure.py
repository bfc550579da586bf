"""Structure ops: reshape, broadcasting, transposes, indexing, joins, diagonals, products.

Most ops here are linear, so their rules are the op's adjoint (VJP) and the op itself
applied to the tangent (JVP). Ops that select entries come in adjoint pairs whose rules
call each other, which makes every derivative differentiable again:

* ``getitem`` (gather ``x[key]``)        <->  ``index_add`` (scatter-add into zeros)
* ``diagonal`` (copy of a diagonal)       <->  ``diag_embed`` (diagonal into zeros)

The helpers ``_gather``/``_scatter``/``_diagonal``/``_embed`` run the member of a pair on
whatever a rule holds: plain NumPy on ndarrays (normal backward), the recorded op on
Tensors (``create_graph=True``, forward-over-reverse).

The pullbacks of the gathers (``getitem``, ``diagonal``, ``trace``) return a
:class:`~tenferro._sparse.SparseCotangent` instead of a dense scatter: the tape adds the
cotangents of many indexings of one tensor into one buffer (``_sparse.py``); under
create_graph=True that sum is the op ``sparse_sum``, defined here.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from numpy.typing import ArrayLike, DTypeLike, NDArray

import operator

import numpy as np

from .._engine import (CAPTURE as _CAPTURE, _cast_like, apply1, as_view, note_escape,
                       traced_index)
from .._kernels import load as _load_kernel
from .._sparse import ScatterKind, SparseCotangent, set_graph_densify
from .._errors import AxisError, DTypeError, IndexingError, ShapeError
from .. import _dtypes
from .._tensor import Tensor, as_tensor
from .._rule_api import has_node_or_tangent
from . import _docs
from .registry import defop, register
from ._util import conj, operands, to_tensor, unbroadcast


# ---- docstring glossary of the structure ops (``_docs.shared`` fills bare names)
_DOCS = {
    "x": ("array_like", "The input."),
}
_RAISES = {
    "AxisError": "If an axis is out of range.",
    "ShapeError": "If ``axes`` is not a permutation of ``x``'s axes.",
}

__all__ = [
    "reshape", "broadcast_to", "ravel", "flatten", "transpose", "permute", "swapaxes",
    "moveaxis", "expand_dims", "unsqueeze", "squeeze", "matrix_transpose", "stack",
    "concatenate", "concat", "diagonal", "diag", "trace", "matmul", "tensordot", "astype",
]


def _axis(a: Any, ndim: int, name: str = "axis") -> int:
    """One axis as a non-negative int (AxisError when out of range)."""
    try:
        i = operator.index(a)
    except TypeError:
        raise AxisError(f"{name} must be an int, got {a!r}") from None
    if not -ndim <= i < ndim:
        # NumPy's wording (SciPy's input checks match it): "source: axis 10 is out of
        # bounds for array of dimension 1"
        prefix = "" if name == "axis" else f"{name}: "
        raise AxisError(f"{prefix}axis {i} is out of bounds for array of dimension {ndim}")
    return i % ndim


def _axes(axes: Any, ndim: int, name: str = "axis") -> tuple[int, ...]:
    """An int or a sequence of ints (or None: all axes) as a tuple of distinct
    non-negative axes, in the order given."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (tuple, list)):
        out = tuple(_axis(a, ndim, name) for a in axes)
    else:
        out = (_axis(axes, ndim, name),)
    if len(set(out)) != len(out):
        raise AxisError(f"repeated axis in {name}={axes!r}")
    return out


# ---- reshape family ---------------------------------------------------------------------

# the tape's compiled pullbacks (tape.pyx vjp_kernel) that ops here declare
_tape = _load_kernel("tape")
_small_ops = _load_kernel("small_ops").matmul

# (ctx: the output's shape, for tf.compile's replay)
_reshape_op = defop("reshape", lambda ctx, needs, gs, xs, ys: (gs[0].reshape(xs[0].shape),),
                    lambda ctx, ts, xs, ys: (ts[0].reshape(ys[0].shape),))
_reshape_op.replay = lambda shape: operator.methodcaller("reshape", shape)


@_docs.shared(_DOCS, _RAISES)
def reshape(x: ArrayLike, /, shape: int | Sequence[int], *more: int,
            copy: bool | None = None) -> Tensor:
    """``x`` with a new shape (one entry may be -1), like ``numpy.reshape``.

    Also ``reshape(x, 4, 3)``. C order only.

    Parameters
    ----------
    x
    shape : int or sequence of int
        The new shape; one entry may be -1 (inferred). More ints may follow as ``*more``.
    *more : int
        Further dimensions, for the ``reshape(x, 4, 3)`` spelling.
    copy : bool, optional
        True: a payload of its own. False: raise where NumPy would have to copy. Default
        None: a view when possible.

    Returns
    -------
    Tensor
        ``x``'s values in the new shape.

    Raises
    ------
    ShapeError
        If the sizes differ, or ``copy=False`` and a copy is needed.

    Notes
    -----
    Derivative: linear; the VJP reshapes the cotangent back to ``x.shape``.

    Examples
    --------
    >>> tf.reshape(tf.arange(6), (2, 3))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    >>> tf.reshape(tf.arange(6), -1, 2).shape
    (3, 2)
    """
    # the shape as given (an int, a tuple, or the ints of reshape(x, 4, 3)); NumPy checks it
    dims: Any = shape
    if more:
        dims = (shape,) + more
    elif isinstance(shape, list):
        dims = tuple(shape)
    t: Tensor = to_tensor(x)
    try:
        out = np.reshape(t._data, dims, copy=copy) if copy is not None else \
            t._data.reshape(dims)
    except ValueError as e:
        if copy is False and "copy" in str(e):
            raise ShapeError(f"reshape: {t.shape} -> {dims} needs a copy, but copy=False "
                             "was passed") from None
        raise ShapeError(f"cannot reshape a tensor of shape {t.shape} to {dims}: {e}") \
            from None
    except TypeError as e:
        raise ShapeError(f"cannot reshape a tensor of shape {t.shape} to {dims}: {e}") \
            from None
    y: Tensor = apply1(_reshape_op, (t,), out, ctx=out.shape)
    if copy is not True and _shares(out, t._data):
        as_view(y, t, ("reshape", out.shape))
    return y


def _shares(out: NDArray[Any], d: NDArray[Any]) -> bool:
    """Whether ``out`` (what reshape made of ``d``) is a NumPy view of d's memory rather
    than a copy: NumPy gives a view the array that owns the memory as its base."""
    base = out.base
    return base is not None and (base is d or base is d.base)


def _reshape_method(self: Tensor, *shape: Any, copy: bool | None = None) -> Tensor:
    # ndarray.reshape's spellings: t.reshape(4, 3), t.reshape((4, 3))
    if len(shape) == 1:
        return reshape(self, shape[0], copy=copy)
    return reshape(self, shape, copy=copy)


def _reshape_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``x`` (a Tensor) with the already-validated ``shape`` (x itself when unchanged)."""
    if x._data.shape == shape:
        return x
    out = x._data.reshape(shape)
    y: Tensor = apply1(_reshape_op, (x,), out, ctx=shape)
    if _shares(out, x._data):
        as_view(y, x, ("reshape", shape))
    return y


def _np_reshape(a: ArrayLike, shape: Any = None, order: str = "C", *, newshape: Any = None,
                copy: bool | None = None) -> Tensor:
    """``numpy.reshape`` on Tensors (C order only)."""
    if order != "C":
        raise ShapeError(f"reshape supports order='C' only, got order={order!r}")
    return reshape(a, newshape if shape is None else shape)


@_docs.shared(_DOCS, _RAISES)
def ravel(x: ArrayLike, order: str = "C") -> Tensor:
    """``x`` as a 1-D tensor (C order), like ``numpy.ravel``.

    Parameters
    ----------
    x
    order : {'C'}, optional
        Only C order is supported. Default 'C'.

    Returns
    -------
    Tensor
        1-D tensor of ``x.size`` values.

    Raises
    ------
    ShapeError
        If ``order`` is not 'C'.

    Notes
    -----
    Derivative: linear; the VJP reshapes the cotangent back.

    Examples
    --------
    >>> tf.ravel(tf.eye(2))
    tensor([1., 0., 0., 1.])
    """
    if order != "C":
        raise ShapeError(f"ravel supports order='C' only, got order={order!r}")
    t: Tensor = to_tensor(x)
    return _reshape_to(t, (t._data.size,))


def _flat_if_no_axis(x: Any, axis: Any) -> tuple[Tensor, Any]:
    """NumPy's ``axis=None`` for functions that then work on the flattened array (np.take,
    np.sort, np.cumsum...): (the flattened tensor, 0), else (x as a tensor, axis)."""
    t: Tensor = to_tensor(x)
    return (ravel(t), 0) if axis is None else (t, axis)


@_docs.shared(_DOCS, _RAISES)
def flatten(x: ArrayLike, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge axes ``start_dim..end_dim`` (all by default) into one, like ``torch.flatten``.

    Parameters
    ----------
    x
    start_dim : int, optional
        First axis to merge. Default 0.
    end_dim : int, optional
        Last axis to merge (inclusive). Default -1.

    Returns
    -------
    Tensor
        ``x`` reshaped.

    Raises
    ------
    ShapeError
        If ``start_dim`` comes after ``end_dim``.
    AxisError

    Notes
    -----
    Derivative: linear; the VJP reshapes the cotangent back.

    Examples
    --------
    >>> tf.flatten(tf.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    t: Tensor = to_tensor(x)
    shape = t._data.shape
    if not shape:
        return _reshape_to(t, (1,))
    s = _axis(start_dim, len(shape), "start_dim")
    e = _axis(end_dim, len(shape), "end_dim")
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"for a tensor of dimension {len(shape)}")
    return _reshape_to(t, shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


@_docs.shared(_DOCS, _RAISES)
def expand_dims(x: ArrayLike, /, axis: int | tuple[int, ...] = 0) -> Tensor:
    """``x`` with length-1 axes inserted at ``axis``.

    Parameters
    ----------
    x
    axis : int or tuple of int, optional
        Positions of the new axes in the result. Default 0.

    Returns
    -------
    Tensor
        A view of ``x`` with ``x.ndim + len(axis)`` dimensions.

    Raises
    ------
    AxisError
        If an axis is out of range (also an IndexError) or repeated.

    Notes
    -----
    Derivative: linear; the VJP squeezes the inserted axes.

    Examples
    --------
    >>> tf.expand_dims(tf.ones(3), axis=0).shape
    (1, 3)
    """
    t: Tensor = to_tensor(x)
    shape = t._data.shape
    ndim = len(shape) + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    axes = _axes(axis, ndim)
    it = iter(shape)
    return _reshape_to(t, tuple(1 if i in axes else next(it) for i in range(ndim)))


@_docs.shared(_DOCS, _RAISES)
def unsqueeze(x: ArrayLike, dim: int) -> Tensor:
    """``x`` with a length-1 axis inserted at ``dim`` (PyTorch spelling of expand_dims).

    Parameters
    ----------
    x
    dim : int
        Position of the new axis in the result.

    Returns
    -------
    Tensor
        A view of ``x`` with one more dimension.

    Raises
    ------
    AxisError
        If ``dim`` is out of range.

    Notes
    -----
    Derivative: linear; the VJP squeezes the axis.

    Examples
    --------
    >>> tf.unsqueeze(tf.ones(3), 1).shape
    (3, 1)
    """
    return expand_dims(x, dim)


@_docs.shared(_DOCS, _RAISES)
def squeeze(x: ArrayLike, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``x`` without its length-1 axes (only those in ``axis`` when given).

    Parameters
    ----------
    x
    axis : int or tuple of int, optional
        The axes to remove; each must have length 1. Default: all length-1 axes.

    Returns
    -------
    Tensor
        A view of ``x`` with fewer dimensions.

    Raises
    ------
    ShapeError
        If an axis in ``axis`` does not have length 1.
    AxisError

    Notes
    -----
    Derivative: linear; the VJP reshapes the cotangent back.

    Examples
    --------
    >>> tf.squeeze(tf.zeros((1, 3, 1))).shape
    (3,)
    """
    t: Tensor = to_tensor(x)
    shape = t._data.shape
    if axis is None:
        return _reshape_to(t, tuple(n for n in shape if n != 1))
    axes = _axes(axis, len(shape))
    for a in axes:
        if shape[a] != 1:
            raise ShapeError(f"cannot squeeze axis {a} of a tensor of shape {shape}: "
                             f"it has length {shape[a]}, not 1")
    return _reshape_to(t, tuple(n for i, n in enumerate(shape) if i not in axes))


# Below this many elements broadcast_to copies: np.empty + assignment costs ~0.5 µs where
# NumPy's broadcast_to view costs ~2.3 µs of Python checks (and it runs in every
# create_graph pass through a sum). Larger results stay views, which take no memory.
_BROADCAST_COPY_MAX = 4096


def _broadcast_payload(d: NDArray[Any], shape: tuple[int, ...]) -> NDArray[Any]:
    """``numpy.broadcast_to(d, shape)`` as a read-only array: a copy when small, NumPy's
    view otherwise. Raises ValueError when ``d`` does not broadcast to ``shape``."""
    size = 1
    for n in shape:
        size *= n
    if d.ndim > len(shape) or size > _BROADCAST_COPY_MAX or size < 0:
        return np.broadcast_to(d, shape)
    out = np.empty(shape, d.dtype)
    out[...] = d            # (raises ValueError for shapes that do not broadcast)
    out.flags.writeable = False
    return out


_broadcast_op = defop("broadcast_to",
                      lambda ctx, needs, gs, xs, ys: (unbroadcast(gs[0], xs[0].shape),),
                      lambda ctx, ts, xs, ys: (np.broadcast_to(ts[0], ys[0].shape),))


@_docs.shared(_DOCS, _RAISES)
def broadcast_to(x: ArrayLike, shape: Sequence[int]) -> Tensor:
    """``x`` broadcast to ``shape``, like ``numpy.broadcast_to``.

    A view of ``x`` that follows writes to x and refuses writes of its own (its entries share
    values; its payload is NumPy's read-only view when it has more than 4096 elements, a copy
    otherwise).

    Parameters
    ----------
    x
    shape : sequence of int
        The target shape; ``x.shape`` must broadcast to it.

    Returns
    -------
    Tensor
        ``x`` broadcast to ``shape``.

    Raises
    ------
    ShapeError
        If ``x.shape`` does not broadcast to ``shape``.

    Notes
    -----
    Derivative: linear; the VJP sums the cotangent over the broadcast axes.

    Examples
    --------
    >>> tf.broadcast_to(tf.tensor([1.0, 2.0]), (2, 2))
    tensor([[1., 2.],
            [1., 2.]])
    """
    t: Tensor = to_tensor(x)
    shape = tuple(shape)
    y = _broadcast(t, shape)
    return y if y is t else as_view(y, t, ("broadcast", shape))


def _broadcast(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``broadcast_to`` for the ops' own use: the recorded op, not registered as a view
    (a value nobody writes to)."""
    if t.shape == shape:
        return t
    try:
        out = _broadcast_payload(t._data, shape)
    except ValueError:
        raise ShapeError(f"cannot broadcast a tensor of shape {t.shape} to {shape}") from None
    y: Tensor = apply1(_broadcast_op, (t,), out)
    return y


# ---- axis permutations ------------------------------------------------------------------

def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


# y = transpose(x, p): x̄ = transpose(ȳ, p⁻¹), ẏ = transpose(ẋ, p)
_transpose_op = defop(
    "transpose",
    lambda ctx, needs, gs, xs, ys: (np.transpose(gs[0], _inverse(ctx)),),
    lambda ctx, ts, xs, ys: (np.transpose(ts[0], ctx),), kernel=_tape.VJP_TRANSPOSE2)
_transpose_op.replay = lambda perm: operator.methodcaller("transpose", perm)


def _permuted(x: Tensor, perm: tuple[int, ...]) -> Tensor:
    """Apply the validated permutation ``perm`` (x itself for the identity)."""
    if perm == tuple(range(len(perm))):
        return x
    y: Tensor = apply1(_transpose_op, (x,), x._data.transpose(perm), ctx=perm)
    return as_view(y, x, ("transpose", perm))


@_docs.shared(_DOCS, _RAISES)
def transpose(x: ArrayLike, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the axes (reverse them by default), like ``numpy.transpose``.

    Parameters
    ----------
    x
    axes : sequence of int, optional
        A permutation of ``range(x.ndim)``. Default: reversed.

    Returns
    -------
    Tensor
        A view of ``x`` with permuted axes.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: linear; the VJP applies the inverse permutation.

    Examples
    --------
    >>> tf.transpose(tf.tensor([[1, 2, 3]]))
    tensor([[1],
            [2],
            [3]])
    >>> tf.transpose(tf.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    t: Tensor = to_tensor(x)
    ndim = t._data.ndim
    if axes is None:
        return _permuted(t, tuple(range(ndim - 1, -1, -1)))
    perm = _axes(axes, ndim, "axes")
    if len(perm) != ndim:
        raise ShapeError(f"axes {tuple(axes)!r} do not match a tensor of dimension {ndim}: "
                         f"give a permutation of all {ndim} axes")
    return _permuted(t, perm)


@_docs.shared(_DOCS, _RAISES)
def permute(x: ArrayLike, *axes: int | Sequence[int]) -> Tensor:
    """Permute the axes (PyTorch spelling): ``permute(x, 2, 0, 1)`` or ``permute(x, (2, 0, 1))``.

    Parameters
    ----------
    x
    *axes : int or sequence of int
        A permutation of ``range(x.ndim)``, as separate ints or one sequence.

    Returns
    -------
    Tensor
        A view of ``x`` with permuted axes.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: linear; the VJP applies the inverse permutation.

    Examples
    --------
    >>> tf.permute(tf.zeros((2, 3, 4)), 2, 0, 1).shape
    (4, 2, 3)
    """
    perm: Sequence[Any] = axes
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        perm = tuple(axes[0])
    return transpose(x, perm)


def _transpose_method(self: Tensor, *axes: Any) -> Tensor:
    # NumPy's ndarray.transpose: t.transpose(), t.transpose(1, 0), t.transpose((1, 0))
    if not axes or (len(axes) == 1 and axes[0] is None):
        return transpose(self)
    perm: Sequence[Any] = axes
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        perm = axes[0]
    return transpose(self, perm)


@_docs.shared(_DOCS, _RAISES)
def swapaxes(x: ArrayLike, axis1: int, axis2: int) -> Tensor:
    """Exchange two axes, like ``numpy.swapaxes``.

    Parameters
    ----------
    x
    axis1, axis2 : int
        The axes to exchange.

    Returns
    -------
    Tensor
        A view of ``x``.

    Raises
    ------
    AxisError

    Notes
    -----
    Derivative: linear; the VJP swaps the axes back.

    Examples
    --------
    >>> tf.swapaxes(tf.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    t: Tensor = to_tensor(x)
    ndim = t._data.ndim
    a, b = _axis(axis1, ndim, "axis1"), _axis(axis2, ndim, "axis2")
    perm = list(range(ndim))
    perm[a], perm[b] = b, a
    return _permuted(t, tuple(perm))


@_docs.shared(_DOCS, _RAISES)
def moveaxis(x: ArrayLike, source: int | tuple[int, ...], destination: int | tuple[int,
             ...]) -> Tensor:
    """Move axes to new positions (the others keep their order), like ``numpy.moveaxis``.

    Parameters
    ----------
    x
    source : int or tuple of int
        The axes to move.
    destination : int or tuple of int
        Their positions in the result.

    Returns
    -------
    Tensor
        A view of ``x`` with permuted axes.

    Raises
    ------
    ShapeError
        If ``source`` and ``destination`` differ in length.
    AxisError
        If an axis is out of range or repeated.

    Notes
    -----
    Derivative: linear; the VJP applies the inverse permutation.

    Examples
    --------
    >>> tf.moveaxis(tf.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    t: Tensor = to_tensor(x)
    ndim = t._data.ndim
    src = _axes(source, ndim, "source")
    dst = _axes(destination, ndim, "destination")
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis: source {source!r} and destination {destination!r} "
                         "must name the same number of axes")
    perm = [a for a in range(ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _permuted(t, tuple(perm))


def matrix_transpose(x: ArrayLike) -> Tensor:
    """Swap the last two axes (``t.mT``).

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 2 (a stack of matrices).

    Returns
    -------
    Tensor
        A view of ``x`` with its last two axes swapped (no conjugation).

    Raises
    ------
    ShapeError
        If ``x`` has fewer than 2 dimensions.

    Notes
    -----
    Derivative: linear; the VJP transposes the cotangent.

    Examples
    --------
    >>> tf.matrix_transpose(tf.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    t: Tensor = to_tensor(x)
    if t._data.ndim < 2:
        raise ShapeError(f"matrix transpose needs a tensor of dimension >= 2, got shape "
                         f"{t.shape}; use .T for vectors or reshape first")
    return swapaxes(t, -1, -2)


def _mH(x: Tensor) -> Tensor:
    # conjugate transpose through the elementwise conj op (np.conj dispatches to it;
    # NumPy's stubs type np.conj of an array-like as an ndarray)
    return np.conj(matrix_transpose(x))  # type: ignore[return-value]


# setattr: Tensor declares these properties for type checkers only (_tensor.py)
setattr(Tensor, "T",
        property(transpose, doc="The tensor with its axes reversed (like ndarray.T)."))
setattr(Tensor, "mT", property(matrix_transpose, doc="Transpose of the last two axes."))
setattr(Tensor, "mH", property(_mH, doc="Conjugate transpose of the last two axes."))

# ---- indexing ---------------------------------------------------------------------------
# y = x[key] gathers; its adjoint scatters ȳ into zeros of x's shape, adding at repeated
# integer indices (numpy.add.at semantics). Keys without integer arrays (ints, slices,
# None, Ellipsis, boolean masks) hit every position at most once, so the scatter is a
# plain assignment there ("unique").

_BASIC = (int, np.integer, slice, type(None), type(Ellipsis))


def _index_array(k: Any) -> Any:
    """An index entry given as Tensor/list/ndarray, as an ndarray of ints or bools."""
    if isinstance(k, Tensor):
        k = k._data
        if k.dtype.kind not in "biu":
            raise IndexingError(f"a tensor used as an index must be an integer or bool tensor, "
                             f"got {k.dtype}; convert it with .astype(tf.int64)")
    else:
        k = np.asarray(k)
        if k.dtype.kind == "f" and k.size == 0:
            k = k.astype(np.intp)  # t[[]]: an empty list selects nothing, as in NumPy
    if k.ndim == 0 and k.dtype.kind in "iu":
        return int(k)
    return k


def _index_key(key: Any) -> tuple[tuple[Any, ...], bool, bool]:
    """``key`` as a tuple ending in Ellipsis (so results are arrays, never scalars),
    whether each position is hit at most once, and whether the key is basic indexing
    (ints, slices, None, Ellipsis: NumPy returns a view, tenferro too) rather than
    advanced (index arrays, masks, bools: a copy)."""
    if type(key) is not tuple:
        key = (key,)
    unique = True
    basic = True
    has_ellipsis = False
    out: list[Any] | None = None
    for i, k in enumerate(key):
        if isinstance(k, _BASIC) and k is not True and k is not False:
            if k is Ellipsis:
                has_ellipsis = True
            continue
        if out is None:
            out = list(key)
        if isinstance(k, (bool, np.bool_)):
            basic = False
            continue
        k = _index_array(k)
        out[i] = k
        if isinstance(k, np.ndarray):
            basic = False
            if k.dtype != bool:
                unique = False
    if out is not None:
        key = tuple(out)
    if not has_ellipsis:
        key = key + (Ellipsis,)
    return key, unique, basic


def _gather(a: Any, key: Any) -> Any:
    """``a[key]`` on an ndarray or a Tensor (key already normalized)."""
    return a[key]


def _scatter(g: Any, key: Any, shape: tuple[int, ...], unique: bool) -> Any:
    """Zeros of ``shape`` with ``g`` added at ``key``, on an ndarray or a Tensor."""
    if isinstance(g, Tensor):
        return apply1(_index_add_op, (g,), _scatter_np(g._data, key, shape, unique),
                      ctx=(key, shape, unique))
    return _scatter_np(g, key, shape, unique)


def _scatter_np(g: Any, key: Any, shape: tuple[int, ...], unique: bool) -> NDArray[Any]:
    z = np.zeros(shape, dtype=g.dtype)
    if unique:
        z[key] = g
    else:
        np.add.at(z, key, g)
    return z


def _add_at_key(buf: NDArray[Any], v: Any, ctx: Any) -> None:
    """buf[key] += v in place (np.add.at where an integer array may repeat positions)."""
    key, unique = ctx
    if unique:
        buf[key] += v
    else:
        np.add.at(buf, key, v)


# the sparse form of the scatter: ctx = (key, unique), as getitem's
_GETITEM_SCATTER = ScatterKind("getitem", _add_at_key, lambda g, ctx: _gather(g, ctx[0]))


def _getitem_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    x = xs[0]
    return (SparseCotangent(x.shape, x.dtype, _GETITEM_SCATTER, ctx, gs[0]),)


# gather and scatter-add are each other's adjoints (docs/rules.md#linear-maps: VJP = adjoint)
_getitem_op = defop(
    "getitem", _getitem_vjp,
    lambda ctx, ts, xs, ys: (_gather(ts[0], ctx[0]),))
_getitem_op.replay = lambda ctx: operator.itemgetter(ctx[0])


# ---- the sum of many gathers' adjoints ---------------------------------------------------
# The tape adds the sparse cotangents of a tensor's gathers (getitem here, diagonal and
# trace below, take in manipulation.py) without densifying (_sparse.py). Under
# create_graph=True their values are Tensors, and the sum is recorded as ONE op,
# out = base + Σ_j scatter_j(values_j), whose pullback is the identity for base and a
# gather for each values_j (the adjoint of a scatter-add is a gather: both are linear,
# docs/rules.md#linear-maps).

def _densify_graph(s: SparseCotangent) -> Tensor:
    """The dense Tensor of a sparse cotangent of Tensor values (create_graph), recorded as
    one sparse_sum op (installed as SparseCotangent's graph densify, below)."""
    inputs = []
    has_dense = s.dense is not None
    if has_dense:
        d = s.dense if isinstance(s.dense, Tensor) else Tensor._wrap(np.asarray(s.dense))
        d = _cast_like(d, s.dtype)
        inputs.append(d)
    kinds = []
    for kind, ctx, v in s.parts:
        if not isinstance(v, Tensor):
            v = Tensor._wrap(np.asarray(v))
        v = _cast_like(v, s.dtype)
        inputs.append(v)
        kinds.append((kind, ctx))
    buf = s.dense_sum(inputs[0]._data if has_dense else None,
                      [v._data for v in (inputs[1:] if has_dense else inputs)])
    return apply1(_sparse_sum_op, tuple(inputs), buf,
                  ctx=(has_dense, tuple(kinds), s.shape, s.dtype))


def _sparse_sum_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # out = base + Σ_j scatter_j(v_j): base̅ = g, v̅_j = gather_j(g)
    has_dense, kinds, _, _ = ctx
    g = gs[0]
    out = []
    if has_dense:
        out.append(g if needs[0] else None)
    off = 1 if has_dense else 0
    for j, (kind, c) in enumerate(kinds):
        out.append(kind.gather(g, c) if needs[off + j] else None)
    return tuple(out)


def _sparse_sum_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # linear: the same sum of the tangents
    has_dense, kinds, shape, dtype = ctx
    off = 1 if has_dense else 0
    acc = None
    for (kind, c), t in zip(kinds, ts[off:]):
        if t is None:
            continue
        part = SparseCotangent(shape, dtype, kind, c, t)
        acc = part if acc is None else acc.add(part)
    if has_dense and ts[0] is not None:
        if acc is None:
            return (ts[0],)
        acc.add(ts[0])
    return (None if acc is None else acc.densify(),)


_sparse_sum_op = defop(
    "sparse_sum", _sparse_sum_vjp, _sparse_sum_jvp,
    doc="base + Σ_j scatter_j(values_j): the accumulated adjoints of many gathers of one "
        "tensor (recorded by create_graph=True passes)")


set_graph_densify(_densify_graph)

_index_add_op = defop(
    "index_add",
    lambda ctx, needs, gs, xs, ys: (_gather(gs[0], ctx[0]),),
    lambda ctx, ts, xs, ys: (_scatter(ts[0], *ctx),))


def _traced_positions(key: Any) -> list[int]:
    """The positions of ``key`` (a tuple) holding an integer Tensor in the graph: only
    inside a tf.compile recording (argsort, argmax of a traced value)."""
    return [i for i, k in enumerate(key) if traced_index(k)]


def _fill_key(key: tuple[Any, ...], positions: tuple[int, ...], idx: Any) -> tuple[Any, ...]:
    out = list(key)
    for i, k in zip(positions, idx):
        out[i] = k
    return tuple(out)


def _traced_key(ctx: Any, xs: Any) -> tuple[Any, ...]:
    """The key of a getitem_traced_index op: the template with its index inputs."""
    return _fill_key(ctx[0], ctx[1], [k._data if isinstance(k, Tensor) else k
                                      for k in xs[1:]])


def _getitem_traced_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    (gx,) = _getitem_vjp((_traced_key(ctx, xs), False), needs[:1], gs, xs[:1], ys)
    return (gx,) + (None,) * (len(xs) - 1)


# x[key] where index arrays of the key were computed from traced values inside a
# tf.compile recording: they are inputs (the replay's fresh choice), not constants; the
# gradient scatters with np.add.at (a fresh choice may repeat an index)
_getitem_traced_op = defop(
    "getitem_traced_index", _getitem_traced_vjp,
    lambda ctx, ts, xs, ys: (_gather(ts[0], _traced_key(ctx, xs)),))
_getitem_traced_op.replay = lambda ctx: lambda x, *idx: x[_fill_key(ctx[0], ctx[1], idx)]
_getitem_traced_op.index_inputs = True    # (a constant index equal to a choice is fine)


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``: NumPy basic and advanced (integer-array, boolean-mask) indexing.

    Index arrays are constants; a Tensor used as an index must hold integer values.
    The gradient adds up at repeated indices. Inside tf.compile, an integer index
    computed from traced values (``x[tf.argsort(w)]``) is an input of the op, recomputed
    at each replay.
    """
    if _CAPTURE.recorder is not None:
        traced = _traced_positions(key if type(key) is tuple else (key,))
        if traced:
            return _getitem_traced(x, key if type(key) is tuple else (key,), traced)
    key, unique, basic = _index_key(key)
    d = x._data
    try:
        out = d[key]
    except IndexError as e:
        raise IndexingError(f"{e} (indexing a tensor of shape {d.shape})") from None
    y: Tensor = apply1(_getitem_op, (x,), out, ctx=(key, unique))
    if basic:
        as_view(y, x, ("index", key))       # basic indexing: a view, as in NumPy
    return y


def _getitem_traced(x: Tensor, key: tuple[Any, ...], traced: list[int]) -> Tensor:
    idx = tuple(key[i] for i in traced)
    for k in idx:
        if k._data.dtype.kind not in "iu":
            raise IndexingError(f"indexing by a tensor of dtype {k.dtype} computed from "
                                "traced values: tf.compile replays integer index tensors "
                                "only (a boolean mask changes the result's shape)")
    full, _, _ = _index_key(_fill_key(key, tuple(traced), [k._data for k in idx]))
    template = _fill_key(full, tuple(traced), [None] * len(traced))
    d = x._data
    try:
        # (the key as the replay forms it: the index arrays as they are)
        out = d[_fill_key(template, tuple(traced), [k._data for k in idx])]
    except IndexError as e:
        raise IndexingError(f"{e} (indexing a tensor of shape {d.shape})") from None
    y: Tensor = apply1(_getitem_traced_op, (x,) + idx, out, ctx=(template, tuple(traced)))
    return y


# ---- joins ------------------------------------------------------------------------------

def _zeros_for(ts: Any, xs: Any, dtype: Any) -> list[Any]:
    """Tangents with structural zeros (None) replaced by zeros of the input's shape."""
    return [np.zeros(x.shape, dtype) if t is None else t for t, x in zip(ts, xs)]


def _stack_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    g, lead = gs[0], (slice(None),) * ctx
    return tuple(g[lead + (i, Ellipsis)] if needs[i] else None for i in range(len(xs)))


_stack_op = defop("stack", _stack_vjp,
                  lambda ctx, ts, xs, ys: (np.stack(_zeros_for(ts, xs, ys[0].dtype), ctx),))
_stack_op.replay = lambda axis: lambda *xs: np.stack(xs, axis)


def _tensors(tensors: Any, name: str) -> tuple[Tensor, ...]:
    if isinstance(tensors, (Tensor, np.ndarray)):
        raise ShapeError(f"{name} takes a sequence of tensors, not a single tensor")
    ts = tuple(to_tensor(t) for t in tensors)
    if not ts:
        raise ShapeError(f"{name} needs at least one tensor")
    return ts


def stack(tensors: Sequence[ArrayLike], axis: int = 0) -> Tensor:
    """Join same-shape tensors along a new axis, like ``numpy.stack`` (dtypes promote).

    Parameters
    ----------
    tensors : sequence of array_like
        At least one tensor; all of one shape.
    axis : int, optional
        Position of the new axis in the result. Default 0.

    Returns
    -------
    Tensor
        Shape ``x.shape`` with ``len(tensors)`` inserted at ``axis``.

    Raises
    ------
    ShapeError
        If the shapes differ, the sequence is empty, or a single tensor is passed.
    AxisError
        If ``axis`` is out of range.

    Notes
    -----
    Derivative: linear; the VJP of each input is its slice of the cotangent.

    Examples
    --------
    >>> tf.stack([tf.tensor([1, 2]), tf.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    >>> tf.stack([tf.ones(2), tf.zeros(2)], axis=1).shape
    (2, 2)
    """
    ts = _tensors(tensors, "stack")
    shape = ts[0]._data.shape
    for t in ts:
        if t._data.shape != shape:
            raise ShapeError(f"stack needs tensors of one shape, got shapes "
                             f"{', '.join(str(u.shape) for u in ts)}")
    axis = _axis(axis, len(shape) + 1)
    y: Tensor = apply1(_stack_op, ts, np.stack([t._data for t in ts], axis), ctx=axis)
    return y


def _concat_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    g, lead = gs[0], (slice(None),) * ctx
    out, start = [], 0
    for x, need in zip(xs, needs):
        stop = start + x.shape[ctx]
        out.append(g[lead + (slice(start, stop), Ellipsis)] if need else None)
        start = stop
    return tuple(out)


_concat_op = defop(
    "concatenate", _concat_vjp,
    lambda ctx, ts, xs, ys: (np.concatenate(_zeros_for(ts, xs, ys[0].dtype), ctx),))
_concat_op.replay = lambda axis: lambda *xs: np.concatenate(xs, axis)


def concatenate(tensors: Sequence[ArrayLike], axis: int | None = 0) -> Tensor:
    """Join tensors along an existing axis, like ``numpy.concatenate`` (also ``tf.concat``).

    Dtypes promote; ``axis=None`` joins the flattened tensors.

    Parameters
    ----------
    tensors : sequence of array_like
        At least one tensor; shapes equal except along ``axis``.
    axis : int or None, optional
        The axis to join along. Default 0.

    Returns
    -------
    Tensor
        The joined tensor.

    Raises
    ------
    ShapeError
        If the shapes do not match, the tensors are 0-d (use :func:`stack`), or the sequence
        is empty.
    AxisError
        If ``axis`` is out of range.

    Notes
    -----
    Derivative: linear; the VJP of each input is its slice of the cotangent.

    Examples
    --------
    >>> tf.concat([tf.tensor([1, 2]), tf.tensor([3])])
    tensor([1, 2, 3])
    >>> tf.concatenate([tf.ones((1, 2)), tf.zeros((1, 2))], axis=0)
    tensor([[1., 1.],
            [0., 0.]])
    """
    ts = _tensors(tensors, "concatenate")
    if axis is None:
        ts = tuple(ravel(t) for t in ts)
        axis = 0
    ndim = ts[0]._data.ndim
    if ndim == 0:
        raise ShapeError("concatenate cannot join 0-d tensors; use stack")
    axis = _axis(axis, ndim)
    try:
        out = np.concatenate([t._data for t in ts], axis)
    except ValueError:
        raise ShapeError(
            f"concatenate along axis {axis} needs tensors whose shapes agree except on that "
            f"axis, got shapes {', '.join(str(t.shape) for t in ts)}") from None
    y: Tensor = apply1(_concat_op, ts, out, ctx=axis)
    return y


concat = concatenate

# ---- diagonals --------------------------------------------------------------------------
# diagonal (a copy) and diag_embed (a diagonal written into zeros) are adjoint.


def _diag_axes(shape: tuple[int, ...], offset: Any, axis1: Any,
               axis2: Any) -> tuple[int, int, int]:
    ndim = len(shape)
    if ndim < 2:
        raise ShapeError(f"diagonal needs a tensor of dimension >= 2, got shape {shape}")
    a1, a2 = _axis(axis1, ndim, "axis1"), _axis(axis2, ndim, "axis2")
    if a1 == a2:
        raise ShapeError(f"axis1 and axis2 must differ, both are {a1}")
    return (operator.index(offset), a1, a2)


def _diag_len(shape: tuple[int, ...], offset: int, a1: int, a2: int) -> int:
    n1, n2 = shape[a1], shape[a2]
    return max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))


def _diagonal(a: Any, diag: tuple[int, int, int]) -> Any:
    """The diagonal ``diag = (offset, axis1, axis2)`` of an ndarray (a copy) or a Tensor."""
    if isinstance(a, Tensor):
        return apply1(_diagonal_op, (a,), np.diagonal(a._data, *diag).copy(), ctx=diag)
    return np.diagonal(a, *diag).copy()


def _embed(g: Any, shape: tuple[int, ...], diag: tuple[int, int, int]) -> Any:
    """Zeros of ``shape`` with the diagonal ``diag`` set to ``g``, on ndarrays or Tensors."""
    if isinstance(g, Tensor):
        return apply1(_embed_op, (g,), _embed_np(g._data, shape, diag), ctx=(shape, diag))
    return _embed_np(g, shape, diag)


def _embed_np(g: Any, shape: tuple[int, ...], diag: tuple[int, int, int]) -> NDArray[Any]:
    z = np.zeros(shape, dtype=g.dtype)
    _diagonal_view_op(z, diag, g, False)
    return z


def _add_diagonal(buf: NDArray[Any], v: Any, diag: tuple[int, int, int]) -> None:
    """The diagonal ``diag`` of buf += v in place (distinct positions)."""
    _diagonal_view_op(buf, diag, v, True)


def _diagonal_view_op(buf: NDArray[Any], diag: tuple[int, int, int], v: Any,
                      add: bool) -> None:
    """Set (or, with ``add``, add) ``v`` into the diagonal ``diag`` of ``buf`` in place.
    A C-contiguous matrix takes a strided slice of its flat view, and two trailing axes
    need no moveaxis: the per-call cost of the small matrices of loops such as a Kalman
    filter's (NumPy's moveaxis alone is ~1 µs)."""
    offset, a1, a2 = diag
    n = v.shape[-1]
    if buf.ndim == 2 and a1 == 0 and buf.flags.c_contiguous:
        ncol = buf.shape[1]
        start = offset if offset >= 0 else -offset * ncol
        flat = buf.reshape(-1)[start:start + n * (ncol + 1):ncol + 1]
        if add:
            flat += v
        else:
            flat[...] = v
        return
    rows = np.arange(max(-offset, 0), max(-offset, 0) + n)
    cols = np.arange(max(offset, 0), max(offset, 0) + n)
    nd = buf.ndim
    # moveaxis gives a writable view of buf with the two diagonal axes last
    view = buf if (a1, a2) == (nd - 2, nd - 1) else np.moveaxis(buf, (a1, a2), (-2, -1))
    if add:
        view[..., rows, cols] += v
    else:
        view[..., rows, cols] = v


_DIAGONAL_SCATTER = ScatterKind("diagonal", _add_diagonal, lambda g, diag: _diagonal(g, diag))


def _diagonal_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    x = xs[0]
    return (SparseCotangent(x.shape, x.dtype, _DIAGONAL_SCATTER, ctx, gs[0]),)


_diagonal_op = defop("diagonal", _diagonal_vjp,
                     lambda ctx, ts, xs, ys: (_diagonal(ts[0], ctx),),
                     kernel=_tape.VJP_DIAGONAL2)

_embed_op = defop("diag_embed",
                  lambda ctx, needs, gs, xs, ys: (_diagonal(gs[0], ctx[1]),),
                  lambda ctx, ts, xs, ys: (_embed(ts[0], *ctx),))
# (tf.compile's replay; a diagonal is NumPy's read-only view, as the op's own)
_diagonal_op.replay = lambda diag: operator.methodcaller("diagonal", *diag)
_embed_op.replay = lambda ctx: lambda g: _embed_np(g, *ctx)


def diagonal(x: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The diagonal(s), like ``numpy.diagonal`` (the diagonal axis last).

    A view of ``x`` (a write through it changes x's diagonal).

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 2.
    offset : int, optional
        The diagonal: 0 the main one, positive above, negative below. Default 0.
    axis1, axis2 : int, optional
        The two axes of the matrices. Default 0 and 1.

    Returns
    -------
    Tensor
        The diagonal entries, on the last axis.

    Raises
    ------
    ShapeError
        If ``x`` has fewer than 2 dimensions or ``axis1 == axis2``.

    Notes
    -----
    Derivative: linear; the VJP scatters the cotangent onto the diagonal of zeros.

    Examples
    --------
    >>> tf.diagonal(tf.reshape(tf.arange(9), (3, 3)))
    tensor([0, 4, 8])
    """
    t: Tensor = to_tensor(x)
    diag = _diag_axes(t.shape, offset, axis1, axis2)
    y: Tensor = apply1(_diagonal_op, (t,), np.diagonal(t._data, *diag), ctx=diag)
    return as_view(y, t, ("diagonal", diag))


def diag(v: ArrayLike, k: int = 0) -> Tensor:
    """``numpy.diag``: a 1-D tensor becomes a matrix with it on diagonal ``k``; a matrix gives
    its ``k``-th diagonal.

    Parameters
    ----------
    v : array_like
        A 1-D or 2-D tensor.
    k : int, optional
        The diagonal. Default 0.

    Returns
    -------
    Tensor
        A 2-D tensor (from 1-D ``v``) or a 1-D tensor (from 2-D ``v``).

    Raises
    ------
    ShapeError
        If ``v`` is neither 1-D nor 2-D.

    Notes
    -----
    Derivative: linear; the VJP is the other direction of ``diag`` (extract or embed).

    Examples
    --------
    >>> tf.diag(tf.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    t: Tensor = to_tensor(v)
    if t.ndim == 1:
        k = operator.index(k)
        n = t.shape[0] + abs(k)
        y: Tensor = _embed(t, (n, n), (k, 0, 1))
        return y
    if t.ndim == 2:
        return diagonal(t, k)
    raise ShapeError(f"diag takes a 1-D or 2-D tensor, got shape {t.shape}; use diagonal "
                     "for stacks of matrices")


def _trace_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # x̄ = ȳ placed on every entry of the diagonal
    diag, n = ctx
    g = gs[0]
    x = xs[0]
    return (SparseCotangent(x.shape, x.dtype, _DIAGONAL_SCATTER, diag,
                            np.broadcast_to(np.expand_dims(g, -1), g.shape + (n,))),)


_trace_op = defop("trace", _trace_vjp,
                  lambda ctx, ts, xs, ys: (np.trace(ts[0], *ctx[0]),))
_trace_op.replay = lambda ctx: lambda x: np.trace(x, *ctx[0])     # (tf.compile)


def trace(x: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    r"""Sum along a diagonal, like ``numpy.trace``.

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 2.
    offset : int, optional
        The diagonal. Default 0.
    axis1, axis2 : int, optional
        The axes of the matrices. Default 0 and 1.

    Returns
    -------
    Tensor
        The sum of the diagonal (one value per matrix of a stack).

    Raises
    ------
    ShapeError
        If ``x`` has fewer than 2 dimensions or ``axis1 == axis2``.

    Notes
    -----
    Derivative: linear; :math:`\bar X = \bar t\, I` (the cotangent on the diagonal).

    Examples
    --------
    >>> x = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> tf.trace(x)
    tensor(5., grad_fn=trace)
    >>> tf.grad([tf.trace(x)], [x])[0]
    tensor([[1., 0.],
            [0., 1.]])
    """
    t: Tensor = to_tensor(x)
    diag = _diag_axes(t.shape, offset, axis1, axis2)
    out = np.asarray(np.trace(t._data, *diag))
    y: Tensor = apply1(_trace_op, (t,), out, ctx=(diag, _diag_len(t.shape, *diag)))
    return y


# ---- products ---------------------------------------------------------------------------

def _matmul_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # C = A B (batched, A: ...×m×k, B: ...×k×n):  Ā = C̄ Bᴴ,  B̄ = Aᴴ C̄, each summed over
    # the batch dims its operand was broadcast along. A 1-D operand is a 1×k row (a) or
    # k×1 column (b) whose added axis is missing from C̄; restore it first.
    g, (a, b) = gs[0], xs
    if a.ndim <= 2 and b.ndim <= 2 and type(g) is np.ndarray:
        # no batch: the products themselves, without the 1-D axes' expand/squeeze and
        # unbroadcast (the Kalman filter's small matmuls are mostly these shapes)
        return _matmul_vjp_2d(needs, g, a, b)
    a1, b1 = a.ndim == 1, b.ndim == 1
    A = np.expand_dims(a, 0) if a1 else a
    B = np.expand_dims(b, -1) if b1 else b
    if a1 and b1:
        g = g.reshape((1, 1))
    elif a1:
        g = np.expand_dims(g, -2)
    elif b1:
        g = np.expand_dims(g, -1)
    ga = gb = None
    if needs[0]:
        ga = unbroadcast(np.matmul(g, conj(np.swapaxes(B, -1, -2))), A.shape)
        ga = ga.reshape(a.shape) if a1 else ga
    if needs[1]:
        gb = unbroadcast(np.matmul(conj(np.swapaxes(A, -1, -2)), g), B.shape)
        gb = gb.reshape(b.shape) if b1 else gb
    return ga, gb


def _matmul_vjp_2d(needs: Any, g: Any, a: Any, b: Any) -> Any:
    """_matmul_vjp for 1-D and 2-D ndarray operands: the same Ā = C̄ Bᴴ, B̄ = Aᴴ C̄ with
    a 1-D a as a row and a 1-D b as a column (outer products where C̄ lost both axes)."""
    ga = gb = None
    if a.ndim == 2:
        if b.ndim == 2:                                    # (m, k) @ (k, n)
            if needs[0]:
                ga = g @ conj(b).T
            if needs[1]:
                gb = conj(a).T @ g
        else:                                              # (m, k) @ (k,) -> (m,)
            if needs[0]:
                ga = np.multiply.outer(g, conj(b))
            if needs[1]:
                gb = conj(a).T @ g
    elif b.ndim == 2:                                      # (k,) @ (k, n) -> (n,)
        if needs[0]:
            ga = conj(b) @ g
        if needs[1]:
            gb = np.multiply.outer(conj(a), g)
    else:                                                  # (k,) @ (k,) -> ()
        if needs[0]:
            ga = g * conj(b)
        if needs[1]:
            gb = conj(a) * g
    return ga, gb


def _matmul_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ċ = Ȧ B + A Ḃ
    (ta, tb), (a, b) = ts, xs
    out = None if ta is None else np.matmul(ta, b)
    if tb is not None:
        d = np.matmul(a, tb)
        out = d if out is None else out + d
    return (out,)


_matmul_op = defop("matmul", _matmul_vjp, _matmul_jvp, kernel=_tape.VJP_MATMUL)
_matmul_op.replay = lambda ctx: _matmul_np


def _matmul_np(a: Any, b: Any) -> Any:
    """np.matmul(a, b) as an ndarray; small real operands by NumPy's own BLAS call without
    its dispatch (_kernels/small_ops.pyx: the same bits, ~1 µs less per call)."""
    out = _small_ops(a, b)
    if out is None:
        out = np.matmul(a, b)
        if type(out) is not np.ndarray:
            out = np.asarray(out)
    return out


def _matmul_error(sa: tuple[int, ...], sb: tuple[int, ...]) -> ShapeError:
    if not sa or not sb:
        return ShapeError(f"matmul does not take 0-d operands (shapes {sa} and {sb}); "
                          "use * to multiply by a scalar")
    ka, kb = sa[-1], (sb[-2] if len(sb) > 1 else sb[0])
    if ka != kb:
        return ShapeError(
            f"matmul: shapes {sa} and {sb} do not match: the last axis of the first operand "
            f"({ka}) must equal the {'second-to-last' if len(sb) > 1 else 'only'} axis of "
            f"the second ({kb})")
    return ShapeError(f"matmul: the batch dimensions of shapes {sa} and {sb} do not "
                      "broadcast together")


def matmul(a: ArrayLike, b: ArrayLike) -> Tensor:
    r"""Matrix product with NumPy semantics (1-D operands, broadcast batch dimensions).

    Parameters
    ----------
    a, b : array_like
        Tensors of dimension >= 1; ``a.shape[-1] == b.shape[-2]`` (or ``b.shape[0]`` for 1-D
        ``b``); batch dimensions broadcast. Dtypes promote.

    Returns
    -------
    Tensor
        ``a @ b``.

    Raises
    ------
    ShapeError
        If the inner dimensions do not match, batch dimensions do not broadcast, or an
        operand is 0-d.

    Notes
    -----
    Derivative: bilinear; :math:`\bar A = \bar C B^H`, :math:`\bar B = A^H \bar C`
    (summed over broadcast batch axes) [Giles 2008].

    Examples
    --------
    >>> a = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> tf.matmul(a, tf.tensor([1.0, 1.0]))
    tensor([3., 7.], grad_fn=matmul)
    >>> tf.grad([(a @ a).sum()], [a])[0]
    tensor([[ 7., 11.],
            [ 9., 13.]])
    """
    ta: Tensor
    tb: Tensor
    ta, tb = operands(a, b)
    ad, bd = ta._data, tb._data
    try:
        out = _matmul_np(ad, bd)
    except ValueError:
        raise _matmul_error(ad.shape, bd.shape) from None
    y: Tensor = apply1(_matmul_op, (ta, tb), out)
    return y


def _rmatmul(b: Tensor, a: ArrayLike) -> Tensor:
    return matmul(a, b)


def _tensordot_axes(axes: Any, sa: tuple[int, ...],
                    sb: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """NumPy's ``axes`` as two tuples of non-negative axes, with the sizes checked."""
    na, nb = len(sa), len(sb)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if not 0 <= n <= min(na, nb):
            raise ShapeError(f"tensordot: axes={n} must be between 0 and {min(na, nb)} for "
                             f"shapes {sa} and {sb}")
        ax_a, ax_b = tuple(range(na - n, na)), tuple(range(n))
    else:
        try:
            xa, xb = axes
        except (TypeError, ValueError):
            raise ShapeError(f"tensordot: axes must be an int or a pair of axis lists, got "
                             f"{axes!r}") from None
        ax_a, ax_b = _axes(xa, na, "axes"), _axes(xb, nb, "axes")
        if len(ax_a) != len(ax_b):
            raise ShapeError(f"tensordot: axes {axes!r} name {len(ax_a)} axes of the first "
                             f"operand but {len(ax_b)} of the second")
    for i, j in zip(ax_a, ax_b):
        if sa[i] != sb[j]:
            raise ShapeError(f"tensordot: shapes {sa} and {sb} do not match: axis {i} of the "
                             f"first has length {sa[i]}, axis {j} of the second {sb[j]}")
    return ax_a, ax_b


def _argsort(seq: Sequence[Any]) -> tuple[int, ...]:
    return tuple(sorted(range(len(seq)), key=seq.__getitem__))


def _tensordot_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # C[fa, fb] = Σ_c A[fa, c] B[c, fb]  (fa/fb the free axes, c the contracted pairs):
    # Ā[fa, c] = Σ_fb C̄[fa, fb] conj(B)[c, fb],  B̄[c, fb] = Σ_fa conj(A)[fa, c] C̄[fa, fb].
    # tensordot leaves the contracted axes in the other operand's order; transpose back.
    ax_a, ax_b = ctx
    g, (a, b) = gs[0], xs
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    nfa = len(free_a)
    ga = gb = None
    if needs[0]:
        r = np.tensordot(g, conj(b), (tuple(range(nfa, g.ndim)), tuple(free_b)))
        src = free_a + [ax_a[k] for k in _argsort(ax_b)]
        ga = np.transpose(r, _argsort(src))
    if needs[1]:
        r = np.tensordot(conj(a), g, (tuple(free_a), tuple(range(nfa))))
        src = [ax_b[k] for k in _argsort(ax_a)] + free_b
        gb = np.transpose(r, _argsort(src))
    return ga, gb


def _tensordot_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    (ta, tb), (a, b) = ts, xs
    out = None if ta is None else np.tensordot(ta, b, ctx)
    if tb is not None:
        d = np.tensordot(a, tb, ctx)
        out = d if out is None else out + d
    return (out,)


_tensordot_op = defop("tensordot", _tensordot_vjp, _tensordot_jvp, batched=False)


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[int | Sequence[int]] = 2) -> Tensor:
    """Sum of products over the axes ``axes``, like ``numpy.tensordot``.

    An int ``n`` contracts the last n axes of ``a`` with the first n of ``b``; a pair of axis
    lists contracts them pairwise. The result has a's free axes, then b's.

    Parameters
    ----------
    a, b : array_like
        The operands.
    axes : int or pair of sequences of int, optional
        The contracted axes. Default 2.

    Returns
    -------
    Tensor
        The contraction.

    Raises
    ------
    ShapeError
        If ``axes`` is out of range, malformed, or the contracted lengths differ.

    Notes
    -----
    Derivative: bilinear; each VJP contracts the cotangent with the other operand (as for
    :func:`einsum`).

    Examples
    --------
    >>> tf.tensordot(tf.ones((2, 3)), tf.ones((3, 4)), axes=1).shape
    (2, 4)
    >>> tf.tensordot(tf.eye(2), tf.eye(2))
    tensor(2.)
    """
    ta: Tensor
    tb: Tensor
    ta, tb = operands(a, b)
    ctx = _tensordot_axes(axes, ta._data.shape, tb._data.shape)
    out = np.tensordot(ta._data, tb._data, ctx)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    y: Tensor = apply1(_tensordot_op, (ta, tb), out, ctx=ctx)
    return y


# ---- dtype ------------------------------------------------------------------------------
# A cast is the identity on values: the engine casts the cotangent back to the input's
# dtype (the real part for a real input) and the tangent to the output's.
_astype_op = defop("astype", lambda ctx, needs, gs, xs, ys: (gs[0],),
                   lambda ctx, ts, xs, ys: (ts[0],))


@_docs.shared(_DOCS, _RAISES)
def astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True,
           device: str | None = None) -> Tensor:
    """``x`` cast to ``dtype`` (array API ``astype``).

    Float and complex results are differentiable (the cast is the identity on values; the
    engine casts cotangents back). A cast to an integer or bool dtype has no gradient
    (piecewise constant, like a comparison).

    Parameters
    ----------
    x
    dtype : dtype
        The target dtype.
    copy : bool, optional
        False returns ``x`` itself when its dtype is already ``dtype``. Default True (a new
        tensor).
    device : {None, 'cpu'}, optional
        Only the CPU exists; anything else raises ShapeError.

    Returns
    -------
    Tensor
        ``x`` with dtype ``dtype``.

    Raises
    ------
    DTypeError
        Casting complex to real: take ``real``/``abs`` explicitly.
    ShapeError
        If ``device`` is not None or 'cpu'.

    Notes
    -----
    Derivative: the identity; the VJP casts the cotangent back to ``x.dtype``.

    Examples
    --------
    >>> tf.astype(tf.tensor([1, 2]), tf.float64)
    tensor([1., 2.])
    """
    t: Tensor = to_tensor(x)
    dt = _dtypes.as_dtype(dtype)
    if device is not None and device != "cpu":
        raise ShapeError(f"astype: tenferro tensors live on the CPU, got device={device!r}")
    src = t._data.dtype
    if dt == src:
        return _fresh(t) if copy else t
    if src.kind == "c" and dt.kind != "c":
        raise DTypeError(f"astype: casting complex ({src}) to real ({dt}) would drop the "
                         "imaginary part; take .real (or abs()) first if that is what you mean")
    if dt not in _dtypes.DIFFERENTIABLE:
        note_escape("astype", t)
        return Tensor._wrap(t._data.astype(dt))
    y: Tensor = apply1(_astype_op, (t,), t._data.astype(dt))
    return y


def _np_astype(self: Tensor, dtype: DTypeLike, order: str = "K", casting: str = "unsafe",
               subok: bool = True, copy: bool = True) -> Tensor:
    """``ndarray.astype``'s spelling as a Tensor method."""
    return astype(self, dtype, copy=copy)


def _fresh(x: Tensor) -> Tensor:
    """A new tensor object with x's value and place in the graph (a differentiable copy of
    a tensor that requires grad, an alias of the payload otherwise: tensors are never
    written in place, so the alias cannot be changed through x). A forward-mode tangent
    travels too (a dual tensor has no node)."""
    if has_node_or_tangent(x):
        y: Tensor = apply1(_astype_op, (x,), x._data.copy())
        return y
    return Tensor._wrap(x._data)


register(_np_reshape, functions=(np.reshape,))
register(_reshape_method, methods=("reshape",))
register(broadcast_to, methods=("broadcast_to",), functions=(np.broadcast_to,))
register(ravel, methods=("ravel",), functions=(np.ravel,))
register(flatten, methods=("flatten",))
register(expand_dims, functions=(np.expand_dims,))
register(unsqueeze, methods=("unsqueeze",))
register(squeeze, methods=("squeeze",), functions=(np.squeeze,))
# NumPy 2 names (permute_dims, matrix_transpose) are registered when present (numpy>=1.26)
_NP2 = tuple(getattr(np, n) for n in ("permute_dims",) if hasattr(np, n))
register(transpose, functions=(np.transpose,) + _NP2)
register(_transpose_method, methods=("transpose",))
register(permute, methods=("permute",))
register(swapaxes, methods=("swapaxes",), functions=(np.swapaxes,))
register(moveaxis, methods=("moveaxis",), functions=(np.moveaxis,))
register(matrix_transpose,
         functions=(np.matrix_transpose,) if hasattr(np, "matrix_transpose") else ())
register(getitem, methods=("__getitem__",))
register(stack, functions=(np.stack,))
register(concatenate, functions=(np.concatenate,))
register(diagonal, methods=("diagonal",), functions=(np.diagonal,))
register(diag, methods=("diag",), functions=(np.diag,))
register(trace, methods=("trace",), functions=(np.trace,))
register(matmul, methods=("matmul", "__matmul__"), ufuncs=(np.matmul,))
register(_rmatmul, methods=("__rmatmul__",))
register(tensordot, functions=(np.tensordot,))
register(_np_astype, methods=("astype",))
