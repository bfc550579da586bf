"""Array API manipulation and indexing functions (2024.12), with tril/triu and meshgrid.

All of them rearrange, select or repeat entries, so each is linear: its VJP is the
adjoint map and its JVP the op itself applied to the tangent. The rules call ops that are
differentiable again, in adjoint pairs (read structure.py's docstring):

* ``flip``                 <->  ``flip``           (a permutation that is its own inverse)
* ``roll`` by s            <->  ``roll`` by -s
* ``tril``/``triu``        <->  the same mask      (self-adjoint)
* ``unstack``              <->  ``stack``
* ``take``/``take_along_axis`` (gather)  <->  ``take_add`` (scatter-add into zeros, so
  repeated indices accumulate; ``numpy.bincount`` on linear indices)

``tile`` and ``repeat`` (by an int) are one op, ``tile``, a broadcast copy whose adjoint
sums the copies (``unbroadcast``: reshape + sum, differentiable ops); ``repeat`` by an
array of counts is a ``take``. ``meshgrid`` and ``broadcast_arrays`` are ``reshape`` +
``broadcast_to``, ``permute_dims`` is ``transpose``.

Integer and bool inputs work everywhere and carry no gradient. Indices are constants:
a float/bool index array or an out-of-range index raises IndexingError (an IndexError; naming
x's shape), and both before anything is recorded.
"""
from __future__ import annotations

from typing import Any, Literal, Sequence

from numpy.typing import ArrayLike, NDArray

import functools
import math
import operator

import numpy as np

from .._engine import apply, apply1, as_view
from .._errors import DTypeError, IndexingError, ShapeError
from .._sparse import ScatterKind, SparseCotangent
from .._tensor import Tensor
from . import _docs
from .registry import defop, register
from ._util import broadcast_shape, recorded, to_tensor, unbroadcast
from .structure import (_axes, _axis, _flat_if_no_axis, broadcast_to, ravel, reshape,
                        transpose)


# ---- docstring glossary of the manipulation ops (``_docs.shared`` fills bare names)
_DOCS = {
    "k": ("int, optional", "The diagonal: 0 the main one, positive above, negative below. "
                           "Default 0."),
    "x": ("array_like", "The input."),
}
_RAISES = {
    "IndexingError": "If an index is out of range.",
    "ShapeError": "If ``x`` has fewer than 2 dimensions.",
}

__all__ = ["flip", "roll", "repeat", "tile", "unstack", "broadcast_arrays", "permute_dims",
           "take", "take_along_axis", "tril", "triu", "meshgrid"]


def _int(v: Any, name: str) -> int:
    """A Python int from an int-like (DTypeError otherwise)."""
    try:
        return operator.index(v)
    except TypeError:
        raise DTypeError(f"{name} must be an integer, got {v!r}") from None


def _int_array(v: Any, fname: str, what: str = "indices",
               error: type[Exception] = IndexingError) -> NDArray[Any]:
    """``v`` (Tensor, ndarray, list, int) as an ndarray of integers (else ``error``)."""
    a: NDArray[Any] = v._data if isinstance(v, Tensor) else np.asarray(v)
    if a.dtype.kind == "f" and a.size == 0 and not isinstance(v, (Tensor, np.ndarray)):
        a = a.astype(np.intp)   # [] selects nothing, as in NumPy
    if a.dtype.kind not in "iu":
        raise error(f"{fname}: {what} must be integers, got dtype {a.dtype}; convert "
                    f"them with .astype(tf.int64)")
    return a


# ---- flip -------------------------------------------------------------------------------
# y = x reversed along the axes in ctx: a permutation that is its own inverse, so
# x̄ = flip(ȳ) and ẏ = flip(ẋ) (np.flip on a Tensor is this op again).

_flip_op = defop("flip", lambda ctx, needs, gs, xs, ys: (np.flip(gs[0], ctx),),
                 lambda ctx, ts, xs, ys: (np.flip(ts[0], ctx),))
_flip_op.replay = lambda axes: lambda x: np.flip(x, axes)     # (tf.compile)


@_docs.shared(_DOCS, _RAISES)
def flip(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``x`` reversed along ``axis`` (an int, a tuple, or None for every axis).

    Parameters
    ----------
    x
    axis : int or tuple of int, optional
        The axes to reverse. Default None: every axis.

    Returns
    -------
    Tensor
        A view of ``x`` with the entries reversed.

    Raises
    ------
    AxisError
        If an axis is out of range.

    Notes
    -----
    Derivative: linear; the VJP flips the cotangent back.

    Examples
    --------
    >>> tf.flip(tf.tensor([1, 2, 3]))
    tensor([3, 2, 1])
    """
    t: Tensor = to_tensor(x)
    axes = _axes(axis, t.ndim)
    if not axes:
        return t
    return apply1(_flip_op, (t,), np.flip(t._data, axes), ctx=axes)


def _np_flip(m: Any, axis: Any = None) -> Tensor:
    return flip(m, axis=axis)


def _np_fliplr(m: Any) -> Tensor:
    m = to_tensor(m)
    if m.ndim < 2:
        raise ShapeError(f"fliplr needs a tensor of dimension >= 2, got shape {m.shape}")
    return flip(m, axis=1)


def _np_flipud(m: Any) -> Tensor:
    m = to_tensor(m)
    if m.ndim < 1:
        raise ShapeError("flipud needs a tensor of dimension >= 1, got a 0-d tensor")
    return flip(m, axis=0)


# ---- roll -------------------------------------------------------------------------------
# ctx = (flat, ((axis, s), ...)) with 0 < s < n: entries move s places along each axis
# (of the flattened tensor when flat). The adjoint moves them back: roll by n - s.

def _roll_np(a: Any, ctx: Any) -> Any:
    flat, pairs = ctx
    shape = a.shape
    if flat:
        a = a.reshape(-1)
    for ax, s in pairs:
        n, lead = a.shape[ax], (slice(None),) * ax
        # two slice copies: ~2x faster than numpy.roll on small arrays
        a = np.concatenate((a[lead + (slice(n - s, None),)], a[lead + (slice(0, n - s),)]),
                           axis=ax)
    return a.reshape(shape) if flat else a


def _roll(a: Any, ctx: Any) -> Any:
    """``a`` rolled as ``ctx`` says, on an ndarray or a Tensor (recorded)."""
    if isinstance(a, Tensor):
        return apply1(_roll_op, (a,), _roll_np(a._data, ctx), ctx=ctx)
    return _roll_np(a, ctx)


def _roll_back(ctx: Any, shape: tuple[int, ...]) -> Any:
    flat, pairs = ctx
    sizes = (math.prod(shape),) if flat else shape
    return flat, tuple((ax, sizes[ax] - s) for ax, s in pairs)


_roll_op = defop(
    "roll", lambda ctx, needs, gs, xs, ys: (_roll(gs[0], _roll_back(ctx, xs[0].shape)),),
    lambda ctx, ts, xs, ys: (_roll(ts[0], ctx),))


@_docs.shared(_DOCS, _RAISES)
def roll(x: ArrayLike, /, shift: int | tuple[int, ...], *, axis: int | tuple[int,
         ...] | None = None) -> Tensor:
    """Entries shifted ``shift`` places along ``axis`` (wrapping around), like ``numpy.roll``.

    ``axis=None`` rolls the flattened tensor; a tuple ``shift`` needs a tuple ``axis`` of the
    same length; an int ``shift`` applies to every axis given (NumPy's broadcasting of the
    two; shifts of a repeated axis add up).

    Parameters
    ----------
    x
    shift : int or tuple of int
        The number of places (negative: backwards).
    axis : int or tuple of int, optional
        The axes. Default None: the flattened tensor, reshaped back.

    Returns
    -------
    Tensor
        The rolled tensor, ``x``'s shape.

    Raises
    ------
    ShapeError
        If a tuple ``shift`` comes without ``axis`` or their lengths differ.
    DTypeError
        If a shift is not an integer.

    Notes
    -----
    Derivative: linear; the VJP rolls the cotangent by ``-shift``.

    Examples
    --------
    >>> tf.roll(tf.tensor([1, 2, 3, 4]), 1)
    tensor([4, 1, 2, 3])
    """
    t: Tensor = to_tensor(x)
    shape = t.shape
    flat: bool
    axes: tuple[int, ...]
    shifts: tuple[int, ...]
    sizes: tuple[int, ...]
    if axis is None:
        if isinstance(shift, (tuple, list)):
            raise ShapeError(f"roll: a tuple shift {tuple(shift)!r} needs axis= (a tuple "
                             "of the same length); axis=None rolls the flattened tensor by "
                             "an int")
        flat, axes, shifts, sizes = True, (0,), (_int(shift, "roll: shift"),), (t.size,)
    else:
        flat, sizes = False, shape
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(_axis(a, t.ndim) for a in axes)
        shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
        shifts = tuple(_int(s, "roll: shift") for s in shifts)
        if len(shifts) == 1:
            shifts *= len(axes)
        elif len(axes) == 1:
            axes *= len(shifts)
        if len(shifts) != len(axes):
            raise ShapeError(f"roll: shift {shift!r} and axis {axis!r} must have the same "
                             "length")
    total: dict[int, int] = {}
    for ax, s in zip(axes, shifts):
        total[ax] = total.get(ax, 0) + s
    pairs = tuple((ax, s % sizes[ax]) for ax, s in sorted(total.items())
                  if sizes[ax] and s % sizes[ax])
    if not pairs:
        return t
    ctx = (flat, pairs)
    return apply1(_roll_op, (t,), _roll_np(t._data, ctx), ctx=ctx)


def _np_roll(a: Any, shift: Any, axis: Any = None) -> Tensor:
    return roll(a, shift, axis=axis)


# ---- tril / triu ------------------------------------------------------------------------
# y = M ∘ x, M the 0/1 mask of a triangle of the last two axes: x̄ = M ∘ ȳ, ẏ = M ∘ ẋ.
# numpy.where with a cached mask (not a multiply: inf·0 would be NaN) is ~2x np.tril.

@functools.lru_cache(maxsize=256)
def _tri_mask(m: int, n: int, k: int, lower: bool) -> NDArray[np.bool_]:
    mask = np.tri(m, n, k, dtype=bool) if lower else ~np.tri(m, n, k - 1, dtype=bool)
    mask.flags.writeable = False
    return mask


def _tri_np(a: Any, k: int, lower: bool) -> Any:
    return np.where(_tri_mask(*a.shape[-2:], k, lower), a, np.zeros((), a.dtype))


def _tri(a: Any, k: int, lower: bool) -> Any:
    """The triangle of ``a`` (ndarray or Tensor, recorded)."""
    if isinstance(a, Tensor):
        return apply1(_TRI_OPS[lower], (a,), _tri_np(a._data, k, lower), ctx=k)
    return _tri_np(a, k, lower)


_TRI_OPS = {lower: defop(name, lambda ctx, needs, gs, xs, ys, lower=lower:
                         (_tri(gs[0], ctx, lower),),
                         lambda ctx, ts, xs, ys, lower=lower: (_tri(ts[0], ctx, lower),))
            for lower, name in ((True, "tril"), (False, "triu"))}


def _triangle(x: Any, k: Any, lower: bool, name: str) -> Tensor:
    x = to_tensor(x)
    if x.ndim < 2:
        raise ShapeError(f"{name} needs a matrix or a stack of matrices (ndim >= 2, shape "
                         f"(..., M, N)), got shape {x.shape}")
    k = _int(k, f"{name}: k")
    return apply1(_TRI_OPS[lower], (x,), _tri_np(x._data, k, lower), ctx=k)


@_docs.shared(_DOCS, _RAISES)
def tril(x: ArrayLike, /, *, k: int = 0) -> Tensor:
    """The lower triangle (on and below diagonal ``k``) of each matrix of the last two axes; the
    other entries are zero.

    Parameters
    ----------
    x : array_like
        A matrix or a stack of matrices (ndim >= 2).
    k

    Returns
    -------
    Tensor
        ``x`` with the entries above diagonal ``k`` zeroed.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: linear; the VJP is ``tril`` of the cotangent.

    Examples
    --------
    >>> tf.tril(tf.ones((2, 2)))
    tensor([[1., 0.],
            [1., 1.]])
    """
    return _triangle(x, k, True, "tril")


@_docs.shared(_DOCS, _RAISES)
def triu(x: ArrayLike, /, *, k: int = 0) -> Tensor:
    """The upper triangle (on and above diagonal ``k``) of each matrix of the last two axes; the
    other entries are zero.

    Parameters
    ----------
    x : array_like
        A matrix or a stack of matrices (ndim >= 2).
    k

    Returns
    -------
    Tensor
        ``x`` with the entries below diagonal ``k`` zeroed.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: linear; the VJP is ``triu`` of the cotangent.

    Examples
    --------
    >>> tf.triu(tf.ones((2, 2)), k=1)
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _triangle(x, k, False, "triu")


def _np_triangle(m: Any, k: Any, lower: bool, name: str) -> Tensor:
    m = to_tensor(m)
    if m.ndim == 1:   # NumPy: a vector is the row of an n x n matrix
        m = broadcast_to(m, m.shape * 2)
    return _triangle(m, k, lower, name)


def _np_tril(m: Any, k: Any = 0) -> Tensor:
    return _np_triangle(m, k, True, "tril")


def _np_triu(m: Any, k: Any = 0) -> Tensor:
    return _np_triangle(m, k, False, "triu")


# ---- unstack <-> stack ------------------------------------------------------------------

def _unstack_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # x̄ = stack(ȳ_0, ..., ȳ_{n-1}) along the axis, zeros for structural zeros
    parts = [np.zeros(y.shape, y.dtype) if g is None else g for g, y in zip(gs, ys)]
    return (np.stack(parts, ctx),)


def _unstack_parts(a: Any, axis: int) -> Any:
    if isinstance(a, Tensor):
        return unstack(a, axis=axis)
    return tuple(np.moveaxis(a, axis, 0))


_unstack_op = defop("unstack", _unstack_vjp,
                    lambda ctx, ts, xs, ys: _unstack_parts(ts[0], ctx))


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``axis``, as a tuple of tensors (stack's inverse).

    Each is a view of ``x``, like ``x[..., i, ...]``.

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 1.
    axis : int, optional
        The axis to split along. Default 0.

    Returns
    -------
    tuple of Tensor
        ``x.shape[axis]`` tensors of ``x.ndim - 1`` dimensions.

    Raises
    ------
    ShapeError
        If ``x`` is 0-d.
    AxisError
        If ``axis`` is out of range.

    Notes
    -----
    Derivative: linear; the VJP stacks the cotangents (zeros for unused slices).

    Examples
    --------
    >>> tf.unstack(tf.tensor([[1, 2], [3, 4]]))
    (tensor([1, 2]), tensor([3, 4]))
    """
    t: Tensor = to_tensor(x)
    if t.ndim == 0:
        raise ShapeError("unstack needs a tensor of dimension >= 1, got a 0-d tensor")
    axis = _axis(axis, t.ndim)
    outs = tuple(np.moveaxis(t._data, axis, 0))
    if not outs:
        return ()
    parts = apply(_unstack_op, (t,), outs, ctx=axis)
    lead = (slice(None),) * axis
    for i, p in enumerate(parts):      # each part is a view of t, as x[..., i, ...] is
        as_view(p, t, ("index", lead + (i, Ellipsis)))
    return parts


# ---- take / take_along_axis (gather) <-> take_add (scatter-add) --------------------------
# ctx = (idx, axis, shape, along): idx the non-negative intp indices, shape x's shape;
# along=False: y = take(x, idx, axis) (shape[:axis] + idx.shape + shape[axis+1:]);
# along=True:  y = take_along_axis(x, idx, axis) (idx and x broadcast except on axis).
# Either reads y = x.flat[L] for linear indices L of y's shape; the adjoint adds ȳ at L
# into zeros of x's shape (numpy.bincount: repeats accumulate, ~5x faster than add.at).

def _gather_np(a: Any, ctx: Any) -> Any:
    idx, axis, _, along = ctx
    return np.take_along_axis(a, idx, axis) if along else a.take(idx, axis)


def _linear(ctx: Any) -> Any:
    """The linear indices L (into x.ravel()) of every entry of the gather, flat."""
    idx, axis, shape, along = ctx
    if not along:
        n = shape[axis]
        pre, post = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
        if pre == 1 and post == 1:
            return idx.reshape(-1)
        return ((np.arange(pre)[:, None, None] * n + idx.reshape(1, -1, 1)) * post
                + np.arange(post)).reshape(-1)
    ndim = len(shape)
    out = np.broadcast_shapes(shape[:axis] + (1,) + shape[axis + 1:], idx.shape)
    L = np.zeros(out, np.intp)
    stride = 1
    for d in range(ndim - 1, -1, -1):
        if d == axis:
            L += idx * stride
        elif shape[d] > 1:   # a length-1 axis of x is broadcast: always entry 0
            L += np.arange(shape[d]).reshape((-1,) + (1,) * (ndim - 1 - d)) * stride
        stride *= shape[d]
    return L.reshape(-1)


def _scatter_np(g: Any, ctx: Any) -> Any:
    shape = ctx[2]
    size = math.prod(shape)
    L = _linear(ctx)
    w = g.reshape(-1)
    if g.dtype.kind == "c":
        z = np.bincount(L, w.real, size) + 1j * np.bincount(L, w.imag, size)
    else:
        z = np.bincount(L, w, size)
    z = z.astype(g.dtype, copy=False)
    return z if len(shape) == 1 else z.reshape(shape)


def _gather(a: Any, ctx: Any) -> Any:
    return recorded(_take_op, _gather_np, a, ctx)


def _scatter(g: Any, ctx: Any) -> Any:
    return recorded(_take_add_op, _scatter_np, g, ctx)


def _add_taken(buf: NDArray[Any], v: Any, ctx: Any) -> None:
    """buf.flat[L] += v in place (repeats accumulate); buf is C-contiguous."""
    np.add.at(buf.reshape(-1), _linear(ctx), v.reshape(-1))


# the sparse form of take's pullback (the tape adds many into one buffer, _sparse.py)
_TAKE_SCATTER = ScatterKind("take", _add_taken,
                            lambda g, ctx: _gather(g, ctx))


def _take_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    x = xs[0]
    return (SparseCotangent(x.shape, x.dtype, _TAKE_SCATTER, ctx,
                            gs[0]),)


_take_op = defop("take", _take_vjp,
                 lambda ctx, ts, xs, ys: (_gather(ts[0], ctx),))

_take_add_op = defop("take_add", lambda ctx, needs, gs, xs, ys: (_gather(gs[0], ctx),),
                     lambda ctx, ts, xs, ys: (_scatter(ts[0], ctx),))


def _take_checked(fname: str, x: Tensor, indices: Any, axis: int, along: bool) -> Tensor:
    """The recorded gather of ``x`` at ``indices`` (checked by NumPy's gather itself: an
    index out of range raises IndexingError naming x's shape, before anything is recorded)."""
    idx = np.array(_int_array(indices, fname), dtype=np.intp)   # a copy the rules keep
    shape = x._data.shape
    try:
        out = _gather_np(x._data, (idx, axis, shape, along))
    except IndexError as e:
        n = shape[axis]
        raise IndexingError(f"{fname}: {e} (x has shape {shape}); indices must lie in "
                         f"[-{n}, {n})") from None
    if idx.size and idx.min() < 0:
        idx[idx < 0] += shape[axis]    # the linear indices of the scatter need idx >= 0
    return apply1(_take_op, (x,), out, ctx=(idx, axis, shape, along))


@_docs.shared(_DOCS, _RAISES)
def take(x: ArrayLike, indices: ArrayLike, /, *, axis: int | None = None) -> Tensor:
    """The entries of ``x`` at integer ``indices`` along ``axis``.

    ``x[..., indices, ...]`` with ``indices`` at position ``axis`` (negative indices count
    from the end). N-D indices work as in ``numpy.take`` (their shape replaces the axis).

    Parameters
    ----------
    x
    indices : array_like of int
        The indices (constants).
    axis : int, optional
        The axis; may be omitted for a 1-D ``x`` only.

    Returns
    -------
    Tensor
        The gathered entries.

    Raises
    ------
    ShapeError
        If ``axis`` is omitted for an ``x`` of dimension other than 1.
    IndexingError
    DTypeError
        If ``indices`` are not integers.

    Notes
    -----
    Derivative: linear (a gather); the VJP scatter-adds the cotangent, so it adds up at
    repeated indices.

    Examples
    --------
    >>> tf.take(tf.tensor([10, 20, 30]), tf.tensor([2, 0]))
    tensor([30, 10])
    >>> x = tf.tensor([1.0, 2.0], requires_grad=True)
    >>> tf.grad([tf.take(x, tf.tensor([0, 0, 1])).sum()], [x])[0]
    tensor([2., 1.])
    """
    t: Tensor = to_tensor(x)
    ax: int
    if axis is None:
        if t.ndim > 1:
            raise ShapeError(f"take: x has shape {t.shape}; give axis= (or flatten x "
                             "first with tf.reshape(x, (-1,)))")
        t, ax = ravel(t), 0
    else:
        ax = _axis(axis, t.ndim)
    return _take_checked("take", t, indices, ax, False)


def _np_take(a: Any, indices: Any, axis: Any = None, out: Any = None,
             mode: str = "raise") -> Tensor:
    if out is not None:
        raise TypeError("numpy.take on tensors: out= is not supported; use the returned "
                        "value")
    a, axis = _flat_if_no_axis(a, axis)
    if mode != "raise":
        n = a.shape[_axis(axis, a.ndim)]
        idx = _int_array(indices, "take")
        if mode == "wrap":
            indices = idx % n if n else idx
        elif mode == "clip":
            indices = np.clip(idx, 0, n - 1) if n else idx
        else:
            raise ShapeError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return take(a, indices, axis=axis)


@_docs.shared(_DOCS, _RAISES)
def take_along_axis(x: ArrayLike, indices: ArrayLike, /, *, axis: int = -1) -> Tensor:
    """``x`` gathered along ``axis`` at ``indices`` of the same rank (other axes broadcast).

    Like ``numpy.take_along_axis``: ``out[..., j, ...] = x[..., indices[..., j, ...], ...]``.

    Parameters
    ----------
    x
    indices : array_like of int
        Indices of ``x``'s rank (constants).
    axis : int, optional
        The axis. Default -1.

    Returns
    -------
    Tensor
        The gathered entries.

    Raises
    ------
    ShapeError
        If the ranks differ or the other axes do not broadcast.
    IndexingError

    Notes
    -----
    Derivative: linear (a gather); the VJP scatter-adds, adding up at repeated indices.

    Examples
    --------
    >>> x = tf.tensor([[3.0, 1.0], [2.0, 4.0]])
    >>> tf.take_along_axis(x, tf.argsort(x, axis=1), axis=1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    xt: Tensor = to_tensor(x)
    axis = _axis(axis, xt.ndim)
    idx = _int_array(indices, "take_along_axis")
    if idx.ndim != xt.ndim:
        raise ShapeError(f"take_along_axis: indices of shape {idx.shape} need the rank of x "
                         f"(shape {xt.shape}); add length-1 axes to indices")
    for d, (s, t) in enumerate(zip(xt.shape, idx.shape)):
        if d != axis and s != t and s != 1 and t != 1:
            raise ShapeError(f"take_along_axis: indices of shape {idx.shape} do not "
                             f"broadcast with x of shape {xt.shape} on axis {d}")
    return _take_checked("take_along_axis", xt, idx, axis, True)


def _np_take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Tensor:
    if axis is None:
        return take_along_axis(ravel(arr), indices, axis=0)
    return take_along_axis(arr, indices, axis=axis)


# ---- tile and repeat: copies of x ---------------------------------------------------------

def _repetitions(reps: Any, name: str) -> tuple[int, ...]:
    out = tuple(_int(r, f"{name}: repetitions") for r in
                (reps if isinstance(reps, (tuple, list)) else (reps,)))
    if any(r < 0 for r in out):
        raise ShapeError(f"{name}: repetitions must be >= 0, got {reps!r}")
    return out


# tile and repeat copy x as one op: y = broadcast(x.reshape(ishape), bshape).reshape(oshape)
# with ishape = x's shape with length-1 axes interleaved, bshape the copies along them.
# x̄ = ȳ.reshape(bshape) summed over the copies (unbroadcast), ẏ = the same copy of ẋ.

def _copies_np(a: Any, ctx: Any) -> Any:
    ishape, bshape, oshape = ctx
    out = np.empty(bshape, a.dtype)   # assigning through a broadcast: cheaper than the view
    out[...] = a.reshape(ishape)
    return out.reshape(oshape)


def _copies(a: Any, ctx: Any) -> Any:
    if isinstance(a, Tensor):
        return apply1(_tile_op, (a,), _copies_np(a._data, ctx), ctx=ctx)
    return _copies_np(a, ctx)


_tile_op = defop(
    "tile",
    lambda ctx, needs, gs, xs, ys: (
        unbroadcast(gs[0].reshape(ctx[1]), ctx[0]).reshape(xs[0].shape),),
    lambda ctx, ts, xs, ys: (_copies(ts[0], ctx),))


@_docs.shared(_DOCS, _RAISES)
def tile(x: ArrayLike, repetitions: Sequence[int], /) -> Tensor:
    """``x`` repeated ``repetitions[i]`` times along axis i, like ``numpy.tile``.

    Ones are prepended to the shorter of ``x.shape`` and ``repetitions``.

    Parameters
    ----------
    x
    repetitions : sequence of int
        Non-negative counts per axis.

    Returns
    -------
    Tensor
        The tiled tensor.

    Raises
    ------
    ShapeError
        If a count is negative.

    Notes
    -----
    Derivative: linear; the VJP sums the copies.

    Examples
    --------
    >>> tf.tile(tf.tensor([1, 2]), (2,))
    tensor([1, 2, 1, 2])
    """
    t: Tensor = to_tensor(x)
    reps = _repetitions(repetitions, "tile")
    d = max(t.ndim, len(reps))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - t.ndim) + t.shape
    if all(r == 1 for r in reps):
        return reshape(t, shape)
    ctx = (sum(((1, s) for s in shape), ()), sum(zip(reps, shape), ()),
           tuple(r * s for r, s in zip(reps, shape)))
    return apply1(_tile_op, (t,), _copies_np(t._data, ctx), ctx=ctx)


def _np_tile(A: Any, reps: Any) -> Tensor:
    return tile(A, reps)


@_docs.shared(_DOCS, _RAISES)
def repeat(x: ArrayLike, repeats: ArrayLike, /, *, axis: int | None = None) -> Tensor:
    """Each entry of ``x`` repeated ``repeats`` times along ``axis``, like ``numpy.repeat``.

    Parameters
    ----------
    x
    repeats : int or array_like of int
        An int, or 1-D non-negative integer counts of shape (1,) or (len along axis,).
    axis : int, optional
        The axis. Default None: the flattened tensor.

    Returns
    -------
    Tensor
        The repeated tensor.

    Raises
    ------
    ShapeError
        If ``repeats`` has the wrong shape or a negative count.
    DTypeError
        If ``repeats`` are not integers.

    Notes
    -----
    Derivative: linear; the VJP sums each entry's copies.

    Examples
    --------
    >>> tf.repeat(tf.tensor([1, 2]), 2)
    tensor([1, 1, 2, 2])
    """
    t: Tensor = to_tensor(x)
    ax: int
    if axis is None:
        t, ax = ravel(t), 0
    else:
        ax = _axis(axis, t.ndim)
    shape = t.shape
    n = shape[ax]
    r: int
    if isinstance(repeats, (Tensor, np.ndarray, list, tuple)):
        counts = _int_array(repeats, "repeat", "repeats", DTypeError)
        if counts.ndim > 1 or (counts.ndim == 1 and counts.shape[0] not in (1, n)):
            raise ShapeError(f"repeat: repeats of shape {counts.shape} do not match axis "
                             f"{ax} of length {n}; give an int, or counts of shape (1,) or "
                             f"({n},)")
        if counts.size and counts.min() < 0:
            raise ShapeError(f"repeat: repeats must be >= 0, got {counts.min()}")
        if counts.ndim == 1 and counts.shape[0] == n and n != 1:
            idx = np.repeat(np.arange(n, dtype=np.intp), counts)
            return apply1(_take_op, (t,), t._data.take(idx, ax),
                          ctx=(idx, ax, shape, False))
        r = int(counts.reshape(-1)[0]) if counts.size else 0
    else:
        r = _int(repeats, "repeat: repeats")
        if r < 0:
            raise ShapeError(f"repeat: repeats must be >= 0, got {r}")
    if r == 1:
        return t
    # (..., n, ...) -> (..., n, 1, ...) -> copies (..., n, r, ...) -> (..., n·r, ...)
    ctx = (shape[:ax + 1] + (1,) + shape[ax + 1:], shape[:ax + 1] + (r,) +
           shape[ax + 1:], shape[:ax] + (n * r,) + shape[ax + 1:])
    return apply1(_tile_op, (t,), _copies_np(t._data, ctx), ctx=ctx)


def _np_repeat(a: Any, repeats: Any, axis: Any = None) -> Tensor:
    return repeat(a, repeats, axis=axis)


# ---- compositions of reshape, broadcast_to and transpose ---------------------------------

def broadcast_arrays(*arrays: ArrayLike) -> list[Tensor]:
    """The tensors broadcast against each other, as a list (read-only views).

    Parameters
    ----------
    *arrays : array_like
        The inputs.

    Returns
    -------
    list of Tensor
        Each input broadcast to the common shape.

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.

    Notes
    -----
    Derivative: linear; each VJP sums the cotangent over the broadcast axes.

    Examples
    --------
    >>> [t.shape for t in tf.broadcast_arrays(tf.ones((2, 1)), tf.ones(3))]
    [(2, 3), (2, 3)]
    """
    ts = [to_tensor(a) for a in arrays]
    shape = broadcast_shape("broadcast_arrays", *(t.shape for t in ts))
    return [broadcast_to(t, shape) for t in ts]


def _np_broadcast_arrays(*args: Any, subok: bool = False) -> tuple[Tensor, ...]:
    return tuple(broadcast_arrays(*args))


@_docs.shared(_DOCS, _RAISES)
def permute_dims(x: ArrayLike, /, axes: Sequence[int]) -> Tensor:
    """``x`` with its axes permuted: axis i of the result is axis ``axes[i]`` of ``x``.

    Parameters
    ----------
    x
    axes : sequence of int
        A permutation of ``range(x.ndim)``.

    Returns
    -------
    Tensor
        A view of ``x``.

    Raises
    ------
    ShapeError
        If ``axes`` is not a permutation of ``x``'s axes.

    Notes
    -----
    Derivative: linear; the VJP applies the inverse permutation.

    Examples
    --------
    >>> tf.permute_dims(tf.zeros((2, 3, 4)), (1, 2, 0)).shape
    (3, 4, 2)
    """
    return transpose(x, axes)


def meshgrid(*arrays: ArrayLike, indexing: Literal["xy", "ij"] = "xy") -> list[Tensor]:
    """Coordinate grids from 1-D tensors (a list; N inputs give N tensors of rank N).

    Inputs of other ranks are flattened first, as in NumPy.

    Parameters
    ----------
    *arrays : array_like
        1-D tensors of lengths n1, n2, ...
    indexing : {'xy', 'ij'}, optional
        'ij': shape (n1, n2, ...); 'xy': the first two lengths swapped. Default 'xy'.

    Returns
    -------
    list of Tensor
        One grid per input.

    Raises
    ------
    ShapeError
        If ``indexing`` is neither 'xy' nor 'ij'.

    Notes
    -----
    Derivative: linear; each output broadcasts one input, so its VJP sums over the other
    axes.

    Examples
    --------
    >>> gx, gy = tf.meshgrid(tf.tensor([1, 2, 3]), tf.tensor([4, 5]))
    >>> gx
    tensor([[1, 2, 3],
            [1, 2, 3]])
    """
    if indexing not in ("xy", "ij"):
        raise ShapeError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    return _grids(arrays, indexing, sparse=False)


def _grids(arrays: Sequence[Any], indexing: str, sparse: bool) -> list[Tensor]:
    ts = [ravel(to_tensor(a)) for a in arrays]
    n = len(ts)
    pos = list(range(n))
    if indexing == "xy" and n >= 2:
        pos[0], pos[1] = 1, 0
    shape = [0] * n
    for p, t in zip(pos, ts):
        shape[p] = t.shape[0]
    out: list[Tensor] = []
    for p, t in zip(pos, ts):
        y = reshape(t, tuple(-1 if i == p else 1 for i in range(n)))
        out.append(y if sparse else broadcast_to(y, tuple(shape)))
    return out


def _np_meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
                 indexing: str = "xy") -> tuple[Tensor, ...]:

    if indexing not in ("xy", "ij"):
        raise ShapeError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    return tuple(_grids(xi, indexing, sparse))


for _fn, _np_fn in ((_np_flip, np.flip), (_np_fliplr, np.fliplr), (_np_flipud, np.flipud),
                    (_np_roll, np.roll), (_np_tril, np.tril), (_np_triu, np.triu),
                    (_np_broadcast_arrays, np.broadcast_arrays), (_np_tile, np.tile),
                    (_np_repeat, np.repeat), (_np_meshgrid, np.meshgrid), (_np_take, np.take),
                    (_np_take_along_axis, np.take_along_axis)):
    register(_fn, functions=(_np_fn,))
register(unstack, functions=(np.unstack,) if hasattr(np, "unstack") else ())
