"""NumPy's higher-order functions on tensors: apply_along_axis, apply_over_axes, piecewise."""
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from numpy.lib.array_utils import normalize_axis_index

from .._errors import ShapeError
from .._ops import creation, structure
from .._tensor import Tensor
from .plumbing import _arr, _cast, _numpy_version, _payload_of

@_numpy_version(np.apply_along_axis, plain=False)
def _apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any,
                      **kwargs: Any) -> Tensor:
    arr = _arr(arr)
    axis = normalize_axis_index(axis, arr.ndim)
    moved = structure.moveaxis(arr, axis, -1)
    batch = moved.shape[:-1]
    if any(s == 0 for s in batch):
        raise ShapeError("Cannot apply_along_axis when any iteration dimensions are 0")
    outs = [_arr(func1d(moved[idx], *args, **kwargs)) for idx in np.ndindex(*batch)]
    res = structure.reshape(structure.stack(outs), batch + outs[0].shape)
    k = outs[0].ndim            # the function's output axes go where ``axis`` was
    perm = list(range(axis)) + list(range(len(batch), len(batch) + k)) + \
        list(range(axis, len(batch)))
    return structure.transpose(res, tuple(perm))


@_numpy_version(np.apply_over_axes, plain=False)
def _apply_over_axes(func: Callable[..., Any], a: ArrayLike, axes: int | Sequence[int]
                     ) -> Tensor:
    val = _arr(a)
    n = val.ndim
    for axis in np.atleast_1d(axes):
        axis = int(axis) + n if axis < 0 else int(axis)
        res = _arr(func(val, axis))
        if res.ndim != val.ndim:
            res = structure.expand_dims(res, axis=axis)
            if res.ndim != val.ndim:
                raise ShapeError("function is not returning an array of the correct shape")
        val = res
    return val


@_numpy_version(np.piecewise, plain=False)
def _piecewise(x: ArrayLike, condlist: Any, funclist: Sequence[Any], *args: Any,
               **kw: Any) -> Tensor:
    """y = 0, then on each condition's entries y = f(x[cond]) (later conditions win), as
    functional index updates: differentiable in x through each f."""
    x = _arr(x)
    if isinstance(condlist, (bool, np.bool_, Tensor)) or np.isscalar(condlist) or (
            not isinstance(condlist[0], (list, np.ndarray, Tensor)) and x.ndim != 0):
        condlist = [condlist]
    conds = [np.broadcast_to(np.asarray(_payload_of(c), dtype=bool), x.shape)
             for c in condlist]
    if len(conds) == len(funclist) - 1:
        conds.append(~np.any(conds, axis=0))
    elif len(conds) != len(funclist):
        raise ShapeError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    y = creation.zeros_like(x)
    for cond, func in zip(conds, funclist):
        if not callable(func):
            y = y.at[cond].set(_cast(_arr(func), x.dtype))
        elif cond.any():
            y = y.at[cond].set(_cast(_arr(func(x[cond], *args, **kw)), x.dtype))
    return y
