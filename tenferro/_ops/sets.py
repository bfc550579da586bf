"""Array API set functions (2024.12): unique_all, unique_counts, unique_inverse,
unique_values, and ``numpy.unique`` on tensors.

Uniqueness is value equality (``==``), as the standard asks: every NaN (and every complex
value with a NaN part) is its own unique value with count 1, and -0.0 equals +0.0 (the
first occurrence is the one kept). Values come out sorted (NaN last); ``indices`` are the
first occurrences in the flattened input, ``inverse_indices`` have the input's shape.

Derivative. ``values`` is the gather ``x.flat[indices]`` with ``indices`` (the first
occurrences) held constant: the cotangent of a unique value goes to the first input entry
that equals it, and the tangent of a unique value is that entry's tangent. Where a value
occurs once this is the exact derivative; where it repeats, ``unique`` is not
differentiable (a perturbation splits the class) and this is a consistent choice, the one
JAX's sort-based ``jnp.unique`` makes in effect. (PyTorch has no derivative for
``torch.unique``; a symmetric alternative would spread the cotangent over the class.)
The index and count outputs are int64 tensors without a gradient.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from collections import namedtuple

import numpy as np

from .._engine import apply1, note_escape
from .._tensor import Tensor
from .registry import register
from ._util import to_tensor
from .structure import _axis, _getitem_op, ravel

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values",
           "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]

UniqueAllResult = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = namedtuple("UniqueInverseResult", "values inverse_indices")
UniqueAllResult.__doc__ = """The result of :func:`unique_all` (a named tuple).

Attributes
----------
values : Tensor
    The sorted unique values (differentiable).
indices : Tensor
    int64: the first occurrence of each value in the flattened input.
inverse_indices : Tensor
    int64, the input's shape: the position in ``values`` of every entry.
counts : Tensor
    int64: how often each value occurs.
"""
UniqueCountsResult.__doc__ = """The result of :func:`unique_counts` (a named tuple).

Attributes
----------
values : Tensor
    The sorted unique values.
counts : Tensor
    int64: how often each value occurs.
"""
UniqueInverseResult.__doc__ = """The result of :func:`unique_inverse` (a named tuple).

Attributes
----------
values : Tensor
    The sorted unique values.
inverse_indices : Tensor
    int64, the input's shape: the position in ``values`` of every entry.
"""


def _take_distinct(x: Tensor, idx: Any, axis: int) -> Tensor:
    """``x[..., idx, ...]`` (``idx`` at ``axis``), differentiable, for distinct indices:
    structure.py's getitem op with its "each position hit once" flag, so the pullback
    assigns instead of accumulating."""
    key = (slice(None),) * axis + (idx, Ellipsis)
    y: Tensor = apply1(_getitem_op, (x,), x._data[key], ctx=(key, True))
    return y


def _int64(a: Any) -> Tensor:
    return Tensor._wrap(np.asarray(a).astype(np.int64, copy=False))


def _unique(x: ArrayLike, inverse: bool, counts: bool) -> list[Tensor]:
    t: Tensor = to_tensor(x)
    note_escape("unique", t)     # which entries are distinct depends on the values
    flat = ravel(t)
    # numpy's stubs overload unique only on Literal flags (no plain-bool variant)
    res = np.unique(flat._data, return_index=True,  # type: ignore[call-overload]
                    return_inverse=inverse, return_counts=counts, equal_nan=False)
    values = _take_distinct(flat, res[1], 0)
    out = [values, _int64(res[1])]
    k = 2
    if inverse:
        out.append(_int64(res[k].reshape(t.shape)))
        k += 1
    if counts:
        out.append(_int64(res[k]))
    return out


def unique_all(x: ArrayLike, /) -> UniqueAllResult:
    """``(values, indices, inverse_indices, counts)`` of the flattened ``x``.

    The sorted unique values (differentiable: a gather at ``indices``), the first occurrence
    of each, the position in ``values`` of every entry of x (x's shape), and the counts. NaNs
    are distinct.

    Parameters
    ----------
    x : array_like
        The input (flattened).

    Returns
    -------
    UniqueAllResult
        Named tuple ``(values, indices, inverse_indices, counts)``; the last three int64.

    Notes
    -----
    Derivative: ``values`` is a gather at the first occurrences; the other entries of ``x``
    get zero gradient.

    Examples
    --------
    >>> tf.unique_all(tf.tensor([3.0, 1.0, 3.0]))
    UniqueAllResult(values=tensor([1., 3.]), indices=tensor([1, 0]), inverse_indices=tensor([1, 0, 1]), counts=tensor([1, 2]))
    """
    return UniqueAllResult(*_unique(x, True, True))


def unique_counts(x: ArrayLike, /) -> UniqueCountsResult:
    """``(values, counts)``: the sorted unique values of the flattened ``x`` and how often each
    occurs (NaNs are distinct, each with count 1).

    Parameters
    ----------
    x : array_like
        The input (flattened).

    Returns
    -------
    UniqueCountsResult
        Named tuple ``(values, counts)``; counts int64.

    Examples
    --------
    >>> tf.unique_counts(tf.tensor([2, 2, 5]))
    UniqueCountsResult(values=tensor([2, 5]), counts=tensor([2, 1]))
    """
    values, _, counts = _unique(x, False, True)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: ArrayLike, /) -> UniqueInverseResult:
    """``(values, inverse_indices)``: the sorted unique values of the flattened ``x`` and, for
    every entry of x (in x's shape), its position in ``values``.

    Parameters
    ----------
    x : array_like
        The input.

    Returns
    -------
    UniqueInverseResult
        Named tuple ``(values, inverse_indices)``; indices int64 in ``x``'s shape.

    Examples
    --------
    >>> tf.unique_inverse(tf.tensor([2, 2, 5]))
    UniqueInverseResult(values=tensor([2, 5]), inverse_indices=tensor([0, 0, 1]))
    """
    values, _, inverse = _unique(x, True, False)
    return UniqueInverseResult(values, inverse)


def unique_values(x: ArrayLike, /) -> Tensor:
    """The sorted unique values of the flattened ``x`` (NaNs distinct).

    Differentiable as a gather at the first occurrences (see the module docstring).

    Parameters
    ----------
    x : array_like
        The input.

    Returns
    -------
    Tensor
        1-D sorted unique values.

    Examples
    --------
    >>> tf.unique_values(tf.tensor([3, 1, 3]))
    tensor([1, 3])
    """
    return _unique(x, False, False)[0]


def _np_unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
               return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
               sorted: bool = True) -> Tensor | tuple[Tensor, ...]:   # noqa: A002  (NumPy's name)
    """``numpy.unique`` on tensors, NumPy's semantics (NaNs merged unless
    ``equal_nan=False``; ``axis`` gives unique slices). The values are differentiable
    (a gather at the first occurrences); the other outputs are int64 tensors."""
    x = to_tensor(ar)
    shape = x.shape
    if axis is None:
        x, ax = ravel(x), 0
    else:
        ax = _axis(axis, x.ndim)
    # numpy's stubs overload unique only on Literal flags (no plain-bool variant)
    res = list(np.unique(x._data, return_index=True,  # type: ignore[call-overload]
                         return_inverse=return_inverse, return_counts=return_counts,
                         axis=axis, equal_nan=equal_nan))
    values = _take_distinct(x, res[1], ax)
    if return_inverse and axis is None:
        res[2] = res[2].reshape(shape)   # NumPy 2: the inverse has the input's shape
    extra = [_int64(r) for r, want in zip(res[1:], (return_index, True, True)) if want]
    if not (return_index or return_inverse or return_counts):
        return values
    return (values, *extra)


def _np_unique_all(x: Any) -> UniqueAllResult:
    return unique_all(x)


def _np_unique_counts(x: Any) -> UniqueCountsResult:
    return unique_counts(x)


def _np_unique_inverse(x: Any) -> UniqueInverseResult:
    return unique_inverse(x)


def _np_unique_values(x: Any) -> Tensor:
    return unique_values(x)


register(_np_unique, functions=(np.unique,))
register(_np_unique_all, functions=(np.unique_all,))
register(_np_unique_counts, functions=(np.unique_counts,))
register(_np_unique_inverse, functions=(np.unique_inverse,))
register(_np_unique_values, functions=(np.unique_values,))
