"""NumPy's rearrangements (gathers) on tensors: joins, splits, pads and index-driven
selections."""
import math
from typing import Any, Callable, Literal, Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .._errors import ShapeError
from .._ops import creation, elementwise, manipulation, structure
from .._ops._util import payload
from .._tensor import Tensor, _find_tracked, _payloads
from .plumbing import (_Axis, _NpFn, _arr, _atleast, _cast, _codes, _fallback, _gather, _no_out,
                       _numpy_version, _payload_of, _rearranged)

def _atleast_version(np_fn: _NpFn, n: int) -> Callable[..., Any]:
    def f(*arys: ArrayLike) -> Tensor | tuple[Tensor, ...]:
        res = tuple(_atleast(a, n) for a in arys)
        return res[0] if len(res) == 1 else res

    f.__name__ = f.__qualname__ = f"_atleast_{n}d"
    return _numpy_version(np_fn)(f)


for _n, _fn in enumerate((np.atleast_1d, np.atleast_2d, np.atleast_3d), 1):
    _atleast_version(_fn, _n)


def _joined(parts: Sequence[Tensor], axis: int, dtype: DTypeLike | None = None) -> Tensor:
    if not parts:
        raise ShapeError("need at least one array to concatenate")
    return _cast(structure.concatenate(parts, axis=axis), dtype)


@_numpy_version(np.hstack)
def _hstack(tup: Sequence[ArrayLike], *, dtype: DTypeLike | None = None, casting: str = "same_kind"
            ) -> Tensor:
    parts = [_atleast(a, 1) for a in tup]
    return _joined(parts, 0 if parts and parts[0].ndim == 1 else 1, dtype)


@_numpy_version(np.vstack)
def _vstack(tup: Sequence[ArrayLike], *, dtype: DTypeLike | None = None, casting: str = "same_kind"
            ) -> Tensor:
    return _joined([_atleast(a, 2) for a in tup], 0, dtype)


@_numpy_version(np.dstack)
def _dstack(tup: Sequence[ArrayLike]) -> Tensor:
    return _joined([_atleast(a, 3) for a in tup], 2)


@_numpy_version(np.column_stack)
def _column_stack(tup: Sequence[ArrayLike]) -> Tensor:
    parts: list[Tensor] = []
    for a in tup:
        a = _arr(a)
        parts.append(structure.reshape(a, (-1, 1)) if a.ndim < 2 else a)
    return _joined(parts, 1)


def _via_codes(np_fn: _NpFn, struct: Any, *args: Any, **kwargs: Any) -> Tensor | list[Tensor]:
    """``np_fn(struct, ...)`` for a function that only rearranges the entries of the arrays
    in ``struct`` (one array, or nested lists of them): NumPy applied to their positions
    in the concatenation of all of them, then gathers. Returns the same structure of
    tensors (a tensor, or a list of them)."""
    leaves: list[Tensor] = []

    def codes(s: Any) -> Any:
        if isinstance(s, list):
            return [codes(e) for e in s]
        t = _arr(s)
        start = sum(x.size for x in leaves)
        leaves.append(t)
        return start + _codes(t.shape)

    c = np_fn(codes(struct), *args, **kwargs)
    dt = np.result_type(*[t.dtype for t in leaves])
    src = structure.concatenate([structure.ravel(_cast(t, dt)) for t in leaves]) \
        if len(leaves) > 1 else _cast(leaves[0], dt)
    if isinstance(c, (list, tuple)):
        return [_gather(src, e) for e in c]
    return _gather(src, c)


@_numpy_version(np.block)
def _block(arrays: Any) -> Tensor | list[Tensor]:
    if isinstance(arrays, tuple):
        raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                        "np.block does not allow implicit conversion from tuple to ndarray.")
    return _via_codes(np.block, arrays)


def _split_version(np_fn: _NpFn) -> Callable[..., Any]:
    def f(ary: ArrayLike, indices_or_sections: Any, *args: Any, **kwargs: Any
          ) -> Tensor | list[Tensor]:
        ios = payload(indices_or_sections) if isinstance(indices_or_sections, Tensor) \
            else indices_or_sections
        return _via_codes(np_fn, ary, ios, *args, **kwargs)

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    return _numpy_version(np_fn)(f)


for _split in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit):
    _split_version(_split)


@_numpy_version(np.append)
def _append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Tensor:
    arr, values = _arr(arr), _arr(values)
    if axis is None:
        return structure.concatenate([structure.ravel(arr), structure.ravel(values)])
    return structure.concatenate([arr, values], axis=axis)


@_numpy_version(np.insert)
def _insert(arr: ArrayLike, obj: Any, values: ArrayLike, axis: int | None = None) -> Tensor:
    """NumPy's insert on positions: arr's entries are 0..n−1, values' n..n+m−1 (cast to
    arr's dtype first, as NumPy does); NumPy places them, a gather reads them."""
    arr = _arr(arr)
    values = _cast(_arr(values), arr.dtype)
    obj = payload(obj) if isinstance(obj, Tensor) else obj
    c = np.insert(_codes(arr.shape), obj, arr.size + _codes(values.shape), axis=axis)
    return _gather(structure.concatenate([structure.ravel(arr), structure.ravel(values)]), c)


@_numpy_version(np.delete)
def _delete(arr: ArrayLike, obj: Any, axis: int | None = None) -> Tensor:
    obj = payload(obj) if isinstance(obj, Tensor) else obj
    return _rearranged(np.delete, arr, obj, axis=axis)


_PAD_GATHER = ("edge", "reflect", "symmetric", "wrap")


@_numpy_version(np.pad)
def _pad(array: ArrayLike, pad_width: Any, mode: str | Callable[..., Any] = "constant",
         **kwargs: Any) -> Any:
    """Modes that copy entries (edge, reflect, symmetric, wrap; reflect_type="even") are
    NumPy's pad of positions, then a gather; "constant" pads positions with −1 and fills
    those with the constants (which are not differentiated: a tracked constant raises)."""
    x = _arr(array)
    pw = payload(pad_width) if isinstance(pad_width, Tensor) else pad_width
    if mode in _PAD_GATHER and kwargs.get("reflect_type", "even") == "even":
        # mode is one of _PAD_GATHER here (the stubs want a Literal)
        return _gather(x, np.pad(  # type: ignore[call-overload]
            _codes(x.shape), pw, mode=mode, **kwargs))
    if mode == "constant" and _find_tracked(kwargs) is None:
        c = np.pad(_codes(x.shape), pw, mode="constant", constant_values=-1)
        fill = np.pad(np.zeros(x.shape, x.dtype), pw, mode="constant",
                      **_payloads(kwargs, "numpy.pad"))
        return elementwise.where(c >= 0, _gather(x, np.maximum(c, 0)), fill)
    return _fallback(np.pad, (array, pad_width, mode), kwargs)


@_numpy_version(np.resize)
def _resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Tensor:
    a = _arr(a)
    if a.size == 0:
        return creation.zeros(np.resize(np.zeros(0), new_shape).shape, dtype=a.dtype)
    return _rearranged(np.resize, a, new_shape)


@_numpy_version(np.rot90)
def _rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Tensor:
    return _rearranged(np.rot90, m, k, axes)


@_numpy_version(np.rollaxis)
def _rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Tensor:
    a = _arr(a)
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return structure.transpose(a, tuple(perm))


@_numpy_version(np.diagflat)
def _diagflat(v: ArrayLike, k: int = 0) -> Tensor:
    return structure.diag(structure.ravel(_arr(v)), k)


@_numpy_version(np.compress)
def _compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, out: object = None
              ) -> Tensor:
    _no_out(np.compress, out)
    a = _arr(a)
    return _gather(a, np.compress(_payload_of(condition), _codes(a.shape), axis=axis))


@_numpy_version(np.extract)
def _extract(condition: ArrayLike, arr: ArrayLike) -> Tensor:
    arr = _arr(arr)
    return _gather(arr, np.extract(_payload_of(condition), _codes(arr.shape)))


@_numpy_version(np.choose)
def _choose(a: ArrayLike, choices: Any, out: object = None,
            mode: Literal["raise", "wrap", "clip"] = "raise") -> Tensor:
    """Positions: choice k's entries (broadcast) are k·size + 0..size−1; NumPy chooses."""
    _no_out(np.choose, out)
    idx = _payload_of(a)
    choices = [_arr(c) for c in choices]
    shape = np.broadcast_shapes(idx.shape, *[c.shape for c in choices])
    dt = np.result_type(*[c.dtype for c in choices])
    size = math.prod(shape)
    src = structure.concatenate([structure.ravel(structure.broadcast_to(_cast(c, dt), shape))
                                 for c in choices])
    codes = [k * size + _codes(shape) for k in range(len(choices))]
    return _gather(src, np.choose(np.broadcast_to(idx, shape), codes, mode=mode))


@_numpy_version(np.select)
def _select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
            default: ArrayLike = 0) -> Tensor:
    if len(condlist) != len(choicelist):
        raise ShapeError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ShapeError("select with an empty condition list is not possible")
    conds = [_payload_of(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = [_arr(c) for c in choicelist] + [_arr(default)]
    weak = isinstance(default, (int, float, complex)) and not isinstance(default, bool)
    dt = np.result_type(*[c.dtype for c in choices[:-1]],
                        default if weak else choices[-1].dtype)
    shape = np.broadcast_shapes(*[c.shape for c in conds], *[c.shape for c in choices])
    r = structure.broadcast_to(_cast(choices[-1], dt), shape)
    for cond, choice in zip(conds[::-1], choices[-2::-1]):
        r = elementwise.where(cond, _cast(choice, dt), r)
    return r


@_numpy_version(np.partition)
def _partition(a: ArrayLike, kth: Any, axis: int | None = -1,
               kind: Literal["introselect"] = "introselect", order: Any = None) -> Any:
    """A gather by NumPy's argpartition of the payload (the same selection algorithm)."""
    a = _arr(a)
    if order is not None:
        return _fallback(np.partition, (a, kth), dict(axis=axis, kind=kind, order=order))
    if axis is None:
        a, axis = structure.ravel(a), 0
    kth = payload(kth) if isinstance(kth, Tensor) else kth
    return manipulation.take_along_axis(a, np.argpartition(a._data, kth, axis=axis, kind=kind),
                                        axis=axis)


@_numpy_version(np.sort_complex)
def _sort_complex(a: ArrayLike) -> Tensor:
    a = _arr(a)
    s = manipulation.take_along_axis(a, np.argsort(a._data, axis=-1, kind="stable"), axis=-1)
    return s if s.dtype.kind == "c" else structure.astype(s, np.complex128)


@_numpy_version(np.trim_zeros)
def _trim_zeros(filt: ArrayLike, trim: str = "fb", axis: _Axis = None) -> Tensor:
    filt = _arr(filt)
    trim = trim.lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ShapeError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = range(filt.ndim) if axis is None else normalize_axis_tuple(axis, filt.ndim)
    nz = filt._data != 0
    key = [slice(None)] * filt.ndim
    for ax in axes:
        hit = np.flatnonzero(nz.any(axis=tuple(i for i in range(filt.ndim) if i != ax)))
        if hit.size == 0:
            key = [slice(0, 0) if i in axes else slice(None) for i in range(filt.ndim)]
            break
        key[ax] = slice(hit[0] if "f" in trim else 0,
                        hit[-1] + 1 if "b" in trim else filt.shape[ax])
    return filt[tuple(key)]


@_numpy_version(np.copy)
def _copy(a: ArrayLike, order: str = "K", subok: bool = False) -> Tensor:
    return creation.asarray(_arr(a), copy=True)


@_numpy_version(np.astype)
def _astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True,
            device: str | None = None) -> Tensor:
    return structure.astype(_arr(x), dtype, copy=copy, device=device)
