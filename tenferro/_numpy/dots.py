"""NumPy's products on tensors: dot, vdot, inner, outer, kron, cross, linalg.multi_dot,
matvec, vecmat."""
import math
import warnings
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike
from numpy.lib.array_utils import normalize_axis_index

from .. import linalg
from .._errors import LinAlgError, ShapeError
from .._ops import creation, elementwise, manipulation, structure
from .._tensor import Tensor
from .plumbing import _arr, _no_out, _numpy_version, _ufunc_kwargs

@_numpy_version(np.dot)
def _dot(a: ArrayLike, b: ArrayLike, out: object = None) -> Tensor:
    _no_out(np.dot, out)
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return structure.tensordot(a, b, axes=([a.ndim - 1], [max(b.ndim - 2, 0)]))


@_numpy_version(np.vdot)
def _vdot(a: ArrayLike, b: ArrayLike, /) -> Tensor:
    a, b = structure.ravel(_arr(a)), structure.ravel(_arr(b))
    if a.shape != b.shape:
        raise ShapeError(f"numpy.vdot: the inputs have {a.shape[0]} and {b.shape[0]} entries; "
                         "vdot needs the same number")
    return structure.tensordot(elementwise.conj(a), b, axes=1)


@_numpy_version(np.inner)
def _inner(a: ArrayLike, b: ArrayLike, /) -> Tensor:
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return structure.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


@_numpy_version(np.outer)
def _outer(a: ArrayLike, b: ArrayLike, out: object = None) -> Tensor:
    _no_out(np.outer, out)
    return linalg.outer(structure.ravel(_arr(a)), structure.ravel(_arr(b)))


@_numpy_version(np.kron)
def _kron(a: ArrayLike, b: ArrayLike) -> Tensor:
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    # a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...] -> (a0*b0, a1*b1, ...)
    a2 = structure.reshape(a, tuple(d for s in sa for d in (s, 1)))
    b2 = structure.reshape(b, tuple(d for s in sb for d in (1, s)))
    return structure.reshape(a2 * b2, tuple(p * q for p, q in zip(sa, sb)))


@_numpy_version(np.cross)
def _cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
           axis: int | None = None) -> Tensor:
    if axis is not None:
        axisa = axisb = axisc = axis
    a = structure.moveaxis(_arr(a), axisa, -1)
    b = structure.moveaxis(_arr(b), axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=3)
    if na == 2 and nb == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a, b = _pad3(a), _pad3(b)
    c = linalg.cross(*manipulation.broadcast_arrays(a, b), axis=-1)
    return structure.moveaxis(c, -1, normalize_axis_index(axisc, c.ndim))


def _pad3(v: Tensor) -> Tensor:
    if v.shape[-1] == 3:
        return v
    return structure.concatenate([v, creation.zeros(v.shape[:-1] + (1,), dtype=v.dtype)], axis=-1)


@_numpy_version(np.matvec)
def _matvec(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.matvec, kwargs)
    x1, x2 = _arr(x1), _arr(x2)
    return structure.matmul(x1, x2[..., None])[..., 0]


@_numpy_version(np.vecmat)
def _vecmat(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.vecmat, kwargs)
    x1, x2 = _arr(x1), _arr(x2)
    return structure.matmul(elementwise.conj(x1)[..., None, :], x2)[..., 0, :]


@_numpy_version(np.linalg.multi_dot)
def _multi_dot(arrays: Any, *, out: object = None) -> Tensor:
    _no_out(np.linalg.multi_dot, out)
    arrays = [_arr(a) for a in arrays]
    if len(arrays) < 2:
        raise ShapeError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return _dot(*arrays)
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = arrays[0][None, :]
    if last == 1:
        arrays[-1] = arrays[-1][:, None]
    for a in arrays:
        if a.ndim != 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    r = _chain(arrays, _chain_order([a.shape for a in arrays]), 0, len(arrays) - 1)
    if first == 1 and last == 1:
        return r[0, 0]
    if first == 1 or last == 1:
        return structure.ravel(r)
    return r


def _chain_order(shapes: Sequence[tuple[int, ...]]) -> list[list[int]]:
    """The cheapest parenthesisation of a matrix chain (Cormen et al., 15.2): split[i][j]."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost: list[list[float]] = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays: Sequence[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return arrays[i]
    k = split[i][j]
    return structure.matmul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))
