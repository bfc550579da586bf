"""Reductions over axes: sum, mean, var, std, prod, max, min, logsumexp.

Each takes ``axis`` (None, an int or a tuple) and ``keepdims`` like NumPy. The VJP
re-inserts the reduced axes (``expand``) and broadcasts back to the input's shape.
"""
import numpy as np

from .._engine import apply1
from .._errors import ShapeError
from .registry import defop, register
from ._util import to_tensor

__all__ = ["sum"]


def normalize_axis(axis, ndim, name="axis"):
    """``axis`` as a sorted tuple of non-negative ints (None -> all axes)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)):
            raise ShapeError(f"{name} must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < ndim:
            raise ShapeError(f"{name} {a} is out of bounds for a tensor of dimension {ndim}")
        out.append(int(a) % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"repeated axis in {name}={axis!r}")
    return tuple(sorted(out))


def expand(g, axes, keepdims, shape):
    """A reduced cotangent broadcast back to the input ``shape``."""
    if not keepdims and axes:
        g = g.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return np.broadcast_to(g, shape)


def _sum_vjp(ctx, needs, gs, xs, ys):
    axes, keepdims = ctx
    return (expand(gs[0], axes, keepdims, xs[0].shape),)


def _sum_jvp(ctx, ts, xs, ys):
    axes, keepdims = ctx
    return (ts[0].sum(axis=axes, keepdims=keepdims),)


_sum_op = defop("sum", _sum_vjp, _sum_jvp)


def sum(x, axis=None, keepdims=False):
    """Sum over ``axis`` (all axes by default)."""
    x = to_tensor(x)
    axes = normalize_axis(axis, x.ndim)
    d = x._data
    return apply1(_sum_op, (x,), np.asarray(d.sum(axis=axes, keepdims=keepdims)),
                  ctx=(axes, keepdims))


register(sum, methods=("sum",), functions=(np.sum,))
