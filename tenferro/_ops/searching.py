"""Array API searching functions (2024.12): argmax, argmin, count_nonzero, nonzero,
searchsorted (``where`` is the differentiable selection in elementwise.py).

Every result here is an index or a count: an int64 tensor without a gradient (these are
piecewise constant functions of the input). NumPy's own functions of the same meaning
(``np.argmax``, ``np.nonzero``, ``np.searchsorted``, ``np.argwhere``...) called on tensors
run on the payloads and return NumPy's result, also for tensors that require grad
(registry.NONDIFF).

Ordering follows ``sort``: NaN counts as larger than every number (``argmax`` finds the
first NaN, ``searchsorted`` places NaN after every number); complex tensors raise
DTypeError in the functions that compare (argmax, argmin, searchsorted), as in ``max``.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Protocol

from numpy.typing import ArrayLike

import numpy as np

from .._engine import index_result, note_escape
from .._errors import DTypeError, IndexingError, ShapeError
from .._tensor import Tensor
from .reductions import normalize_axis
from .registry import index_op, register, register_nondiff
from ._util import to_tensor
from .structure import _axis

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted"]


class _ArgReduction(Protocol):
    """The signature of argmax/argmin (made by a factory)."""
    __name__: str

    def __call__(self, x: ArrayLike, /, *, axis: int | None = None,
                 keepdims: bool = False) -> Tensor: ...


def _int64(a: Any) -> Tensor:
    return Tensor._wrap(np.asarray(a).astype(np.int64, copy=False))


def _real(name: str, x: Tensor) -> None:
    if x._data.dtype.kind == "c":
        raise DTypeError(f"{name}: complex numbers are not ordered, got a tensor of dtype "
                         f"{x.dtype}; apply it to a real key such as tf.real(x) or tf.abs(x)")


def _arg_extremum(name: str, method: Callable[..., Any]) -> _ArgReduction:
    word = "maximum" if name == "argmax" else "minimum"

    def f(x: ArrayLike, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
        t: Tensor = to_tensor(x)
        _real(name, t)
        d = t._data
        if axis is not None:
            axis = _axis(axis, d.ndim)
        if (d.size == 0 if axis is None else d.shape[axis] == 0):
            raise ShapeError(f"{name} of an empty tensor (shape {d.shape}, axis={axis!r}): "
                             f"there is no {word} to point at; search non-empty axes only")
        # (inside tf.compile a node, recomputed at each replay: _engine.index_result)
        return index_result(op, (t,), np.asarray(method(d, axis=axis, keepdims=keepdims))
                            .astype(np.int64, copy=False), (axis, keepdims))

    op = index_op(name, lambda ctx: lambda d: np.asarray(
        method(d, axis=ctx[0], keepdims=ctx[1])).astype(np.int64, copy=False))

    f.__name__ = f.__qualname__ = name
    example = "tensor(1)" if name == "argmax" else "tensor(0)"
    f.__doc__ = f"""The index of the first {word} along ``axis``, as an int64 tensor.

    NaN counts as the {word} (the first NaN wins).

    Parameters
    ----------
    x : array_like
        A real, non-empty tensor.
    axis : int, optional
        The axis to search. Default None: the flattened tensor.
    keepdims : bool, optional
        Keep the searched axis with length 1. Default False.

    Returns
    -------
    Tensor
        int64 indices (no gradient: they are piecewise constant).

    Raises
    ------
    DTypeError
        If ``x`` is complex (apply it to ``tf.real(x)`` or ``tf.abs(x)``).
    ShapeError
        If the searched axis (or ``x``) is empty.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> tf.{name}(tf.tensor([1.0, 3.0, 2.0]))
    {example}
    """
    return f


argmax = _arg_extremum("argmax", np.argmax)
argmin = _arg_extremum("argmin", np.argmin)


def _arg_method(f: _ArgReduction) -> Callable[..., Tensor]:
    def method(self: Any, axis: Any = None, out: Any = None, *,
               keepdims: bool = False) -> Tensor:
        if out is not None:
            raise TypeError(f"t.{f.__name__}: out= is not supported on tensors; use the "
                            f"returned value")
        return f(self, axis=axis, keepdims=keepdims)

    method.__name__ = method.__qualname__ = f.__name__
    method.__doc__ = f"NumPy's method spelling of :func:`{f.__name__}` (axis positional)."
    return method


def count_nonzero(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: bool = False) -> Tensor:
    """The number of non-zero entries over ``axis``, as an int64 tensor.

    A complex entry counts when either part is non-zero; NaN counts.

    Parameters
    ----------
    x : array_like
        The input.
    axis : int or tuple of int, optional
        The axes to count over. Default None: all.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.

    Returns
    -------
    Tensor
        int64 counts (no gradient).

    Examples
    --------
    >>> tf.count_nonzero(tf.tensor([[0, 1], [2, 3]]), axis=1)
    tensor([1, 2])
    """
    t: Tensor = to_tensor(x)
    d = t._data
    axes = normalize_axis(axis, d.ndim)
    note_escape("count_nonzero", t)
    return _int64(np.count_nonzero(d, axis=axes, keepdims=keepdims))


def nonzero(x: ArrayLike, /) -> tuple[Tensor, ...]:
    """The indices of the non-zero entries, one int64 tensor per axis (row-major order), like
    ``numpy.nonzero``.

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 1.

    Returns
    -------
    tuple of Tensor
        ``x.ndim`` int64 tensors (no gradient).

    Raises
    ------
    ShapeError
        If ``x`` is 0-d.

    Examples
    --------
    >>> tf.nonzero(tf.tensor([0, 3, 0, 4]))
    (tensor([1, 3]),)
    """
    t: Tensor = to_tensor(x)
    d = t._data
    if d.ndim == 0:
        raise ShapeError("nonzero of a 0-d tensor is not defined (it has no axes to index); "
                         "use tf.reshape(x, (1,)) or test the value with bool(x)")
    note_escape("nonzero", t)
    return tuple(_int64(i) for i in np.nonzero(d))


def _nonzero_method(self: Any) -> tuple[Tensor, ...]:
    return nonzero(self)


def searchsorted(x1: ArrayLike, x2: ArrayLike, /, *, side: Literal["left", "right"] = "left",
                 sorter: ArrayLike | None = None) -> Tensor:
    """Indices where the entries of ``x2`` would be inserted into the sorted 1-D ``x1`` to keep
    it sorted, like ``numpy.searchsorted``.

    NaN sorts last, as in ``sort``.

    Parameters
    ----------
    x1 : array_like
        A 1-D tensor, sorted ascending (or with ``sorter``).
    x2 : array_like
        The values to insert; a Python scalar gives a 0-d result.
    side : {'left', 'right'}, optional
        'left': ``x1[i-1] < v <= x1[i]``; 'right': ``x1[i-1] <= v < x1[i]``. Default 'left'.
    sorter : array_like of int, optional
        Indices that sort ``x1`` when it is not sorted itself.

    Returns
    -------
    Tensor
        int64 indices, the shape of ``x2`` (no gradient).

    Raises
    ------
    DTypeError
        If an input is complex or not numeric, or ``sorter`` is not integer.
    ShapeError
        If ``x1`` is not 1-D, ``side`` is invalid, or ``sorter``'s shape differs from ``x1``'s.
    IndexingError
        If ``sorter`` holds an index out of range.

    Examples
    --------
    >>> tf.searchsorted(tf.tensor([1.0, 2.0, 3.0]), tf.tensor([2.0, 2.5]))
    tensor([1, 2])
    """
    t1: Tensor = to_tensor(x1)
    x2 = x2._data if isinstance(x2, Tensor) else np.asarray(x2)
    _real("searchsorted", t1)
    if x2.dtype.kind == "c":
        raise DTypeError(f"searchsorted: complex search values (dtype {x2.dtype}) are not "
                         "ordered; search with a real key")
    if x2.dtype.kind not in "biuf":
        raise DTypeError(f"searchsorted: search values must be numbers, got dtype {x2.dtype}")
    d = t1._data
    if d.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be 1-D (a sorted sequence), got shape "
                         f"{d.shape}; search each row separately or flatten it with "
                         "tf.reshape(x1, (-1,)) after sorting")
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        s = sorter._data if isinstance(sorter, Tensor) else np.asarray(sorter)
        if s.dtype.kind not in "iu":
            raise DTypeError(f"searchsorted: sorter must hold integer indices, got dtype "
                             f"{s.dtype}; use tf.argsort(x1)")
        if s.shape != d.shape:
            raise ShapeError(f"searchsorted: sorter has shape {s.shape}, x1 has shape "
                             f"{d.shape}; pass tf.argsort(x1)")
        if s.size and (int(s.min()) < -d.size or int(s.max()) >= d.size):
            raise IndexingError(f"searchsorted: sorter holds an index out of range for x1 of "
                             f"length {d.size}")
        sorter = s
    note_escape("searchsorted", t1, x2)
    return _int64(np.searchsorted(d, x2, side=side, sorter=sorter))


def _np_method_searchsorted(self: Any, v: Any, side: Any = "left",
                            sorter: Any = None) -> Tensor:
    return searchsorted(self, v, side=side, sorter=sorter)


register(_arg_method(argmax), methods=("argmax",))
register(_arg_method(argmin), methods=("argmin",))
register(_nonzero_method, methods=("nonzero",))
register(_np_method_searchsorted, methods=("searchsorted",))
register_nondiff(np.argmax, np.argmin, np.nonzero, np.count_nonzero, np.searchsorted,
                 np.argwhere, np.flatnonzero)
