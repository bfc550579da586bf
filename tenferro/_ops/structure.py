"""Structure ops: reshape, broadcasting, transposes, indexing, joins, diagonals, products."""
import numpy as np

from .._engine import apply1
from .._errors import ShapeError
from .registry import defop, register
from ._util import to_tensor, unbroadcast

__all__ = ["reshape", "broadcast_to"]


_reshape_op = defop("reshape", lambda ctx, needs, gs, xs, ys: (gs[0].reshape(xs[0].shape),),
                    lambda ctx, ts, xs, ys: (ts[0].reshape(ys[0].shape),))


def reshape(x, *shape):
    """``x`` with a new shape (one entry may be -1), like ``numpy.reshape``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    x = to_tensor(x)
    try:
        out = x._data.reshape(shape)
    except (ValueError, TypeError) as e:
        raise ShapeError(f"cannot reshape a tensor of shape {x.shape} to {shape}: {e}") from None
    return apply1(_reshape_op, (x,), out)


_broadcast_op = defop("broadcast_to",
                      lambda ctx, needs, gs, xs, ys: (unbroadcast(gs[0], xs[0].shape),),
                      lambda ctx, ts, xs, ys: (np.broadcast_to(ts[0], ys[0].shape),))


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a read-only view), like ``numpy.broadcast_to``."""
    x = to_tensor(x)
    shape = tuple(shape)
    if x.shape == shape:
        return x
    try:
        out = np.broadcast_to(x._data, shape)
    except ValueError:
        raise ShapeError(f"cannot broadcast a tensor of shape {x.shape} to {shape}") from None
    return apply1(_broadcast_op, (x,), out)


register(reshape, methods=("reshape",), functions=(np.reshape,))
register(broadcast_to, methods=("broadcast_to",), functions=(np.broadcast_to,))
