"""Index updates: ``t.at[idx].set(v)`` / ``.add(v)`` / ``.multiply(v)`` (functional, as JAX
spells them), ``t[idx] = v`` and the in-place operators ``t += u``, ``t *= u``, ...

Functional updates return a new tensor, differentiable in both ``t`` and ``v``. The one
primitive is ``index_set``, y = x with y[key] = v for a key that hits every position at
most once; it is linear in (x, v) jointly, so its rules are made of itself and gathers:

    x̄ = index_set(ȳ, key, 0)          v̄ = unbroadcast(ȳ[key])
    ẏ = index_set(ẋ, key, v̇)                     (docs/rules.md#in-place-updates-and-views)

A key that hits a position several times (integer arrays with repeats) is reduced to one
that does not, on the flattened tensor: ``set`` keeps the value NumPy's assignment keeps
(the last), ``add`` is the scatter-add op (repeats accumulate), and ``multiply``
multiplies x by a product of unique-key ``index_set``s, one per occurrence rank, so its
derivative is exact where some factors are zero.

In place (PyTorch's semantics): ``t[idx] = v`` rebinds the Tensor object ``t`` to the
update of its old value — a new graph node differentiable in both — and bumps its
``_version``. The ops that computed ``v`` from ``t`` (``t[m] = f(t[m])``, ``t += g(t)``)
are pointed at t's old value; any other recorded op that used ``t`` before the change
refuses to run its backward (:class:`InPlaceError` naming the op) instead of silently
reading the new value.
A leaf that requires grad cannot be changed in place while grad mode is on (under
``tf.no_grad()`` it can: the optimizer-step pattern ``w -= lr * w.grad``). A write to a
view (``x[1:]``, ``x.T``, ...) or to a tensor that has views changes them all, as in NumPy
and PyTorch; ``views.py`` has those rules. Payload arrays are never written in place.
"""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike, NDArray

import operator

import numpy as np

from .._engine import apply1
from .._errors import DTypeError, IndexingError, ShapeError
from .._tensor import Tensor
from . import views
from .registry import defop, register
from ._util import to_tensor, unbroadcast, write_tangents
from .structure import (_broadcast, _gather, _index_key, _scatter, astype, getitem,
                        reshape)

__all__: list[str] = []


def _payload(v: Any) -> Any:
    return v._data if isinstance(v, Tensor) else v


# ---- the primitive -----------------------------------------------------------------------

def _index_set(x: Any, key: Any, v: Any) -> Any:
    """``x`` with ``x[key] = v`` (key unique, v of x[key]'s shape and x's dtype), on
    ndarrays (a new array) or Tensors (the recorded op)."""
    if isinstance(x, Tensor) or isinstance(v, Tensor):
        x, v = to_tensor(x), to_tensor(v)
        return apply1(_index_set_op, (x, v), _index_set_np(x._data, key, v._data), ctx=key)
    return _index_set_np(x, key, v)


def _index_set_np(x: Any, key: Any, v: Any) -> Any:
    y = x.copy()
    y[key] = v
    return y


def _index_set_vjp(key: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    g = gs[0]
    gx = _index_set(g, key, np.zeros((), dtype=g.dtype)) if needs[0] else None
    gv = unbroadcast(_gather(g, key), xs[1].shape) if needs[1] else None
    return gx, gv


def _index_set_jvp(key: Any, ts: Any, xs: Any, ys: Any) -> Any:
    tx, tv = write_tangents(ts, xs[0].shape, ys[0].dtype, ys[0].dtype)
    return (_index_set(tx, key, tv),)


_index_set_op = defop("index_set", _index_set_vjp, _index_set_jvp)


# ---- keys --------------------------------------------------------------------------------

def _key(x: Tensor, idx: Any) -> tuple[tuple[Any, ...], bool, tuple[int, ...]]:
    """(normalized key, whether it hits every position at most once, x[key].shape)."""
    key, unique, _ = _index_key(idx)
    try:
        shape = x._data[key].shape
    except IndexError as e:
        raise IndexingError(f"{e} (indexing a tensor of shape {x.shape})") from None
    return key, unique, shape


def _flat_positions(shape: tuple[int, ...], key: tuple[Any, ...]) -> Any:
    """The flat position in ``shape`` of every entry of ``x[key]`` (key already checked)."""
    if len(shape) == 1 and len(key) == 2 and isinstance(key[0], np.ndarray) \
            and key[0].dtype.kind in "iu":
        return (key[0] % shape[0]).ravel()          # one integer array on a vector
    return np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)[key].ravel()


def _hits_once(pos: NDArray[np.intp], size: int) -> bool:
    """Whether the flat positions ``pos`` (in range(size)) are distinct."""
    seen = np.zeros(size, dtype=np.bool_)
    seen[pos] = True
    hit: bool = np.count_nonzero(seen) == pos.size
    return hit


def _starts(s: NDArray[Any]) -> NDArray[np.bool_]:
    """Where a new value starts in the sorted integer array ``s`` (a bool mask)."""
    first = np.empty(s.size, dtype=np.bool_)
    first[:1] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return first


def _unique_sorted(pos: NDArray[np.intp]) -> NDArray[np.intp]:
    """The distinct values of the integer array ``pos``, sorted (np.unique's hash-based
    path costs ~5x a sort here)."""
    s = np.sort(pos)
    return s[_starts(s)]


def _value(v: ArrayLike, x: Tensor, where: str) -> Tensor:
    """``v`` as a tensor of x's dtype (complex into a real tensor raises)."""
    v = to_tensor(v)
    dt = x._data.dtype
    if v._data.dtype.kind == "c" and dt.kind != "c":
        raise DTypeError(f"{where}: cannot store complex values in a {dt} tensor; take "
                         ".real (or abs()) of the value, or make the tensor complex first")
    return v if v._data.dtype == dt else astype(v, dt)


def _broadcast_value(v: Tensor, shape: tuple[int, ...], where: str) -> Tensor:
    try:
        return _broadcast(v, shape)
    except ShapeError:
        raise ShapeError(f"{where}: a value of shape {v.shape} cannot be broadcast to the "
                         f"indexed shape {shape}") from None


# ---- functional updates ------------------------------------------------------------------

def index_set(x: ArrayLike, idx: Any, v: ArrayLike) -> Tensor:
    """``x`` with ``x[idx] = v`` as a new tensor (the value NumPy's assignment keeps at a
    repeated index: the last)."""
    x = to_tensor(x)
    key, unique, shape = _key(x, idx)
    v = _broadcast_value(_value(v, x, "set"), shape, "set")
    out: Tensor
    if unique:
        out = _index_set(x, key, v)
        return out
    pos = _flat_positions(x.shape, key)
    if _hits_once(pos, x.size):
        out = _index_set(x, key, v)
        return out
    upos = _unique_sorted(pos)
    # the winner at each position: the entry NumPy's own assignment keeps there
    owner = np.empty(x.size, dtype=np.intp)
    owner[pos] = np.arange(pos.size)
    flat = _index_set(reshape(x, -1), upos, getitem(reshape(v, -1), owner[upos]))
    return reshape(flat, x.shape)


def index_add(x: ArrayLike, idx: Any, v: ArrayLike) -> Tensor:
    """``x`` with ``v`` added at ``idx`` as a new tensor (repeated indices accumulate)."""
    x = to_tensor(x)
    key, unique, shape = _key(x, idx)
    v = _broadcast_value(_value(v, x, "add"), shape, "add")
    out: Tensor = x + _scatter(v, key, x.shape, unique)
    return out


def index_multiply(x: ArrayLike, idx: Any, v: ArrayLike) -> Tensor:
    """``x`` with the entries at ``idx`` multiplied by ``v`` as a new tensor (repeated
    indices multiply every factor in; the derivative is exact also at zero factors)."""
    x = to_tensor(x)
    key, unique, shape = _key(x, idx)
    v = _broadcast_value(_value(v, x, "multiply"), shape, "multiply")
    out: Tensor
    if unique:
        out = _index_set(x, key, _gather(x, key) * v)
        return out
    pos = _flat_positions(x.shape, key)
    # group the entries by position: group[k] = which distinct position entry k hits,
    # rank[k] = how many entries before k (in index order) hit the same position
    order = np.argsort(pos, kind="stable")
    sorted_pos = pos[order]
    first = _starts(sorted_pos)
    upos = sorted_pos[first]
    group, rank = np.empty_like(pos), np.empty_like(pos)
    group[order] = np.cumsum(first) - 1
    rank[order] = np.arange(pos.size) - np.flatnonzero(first)[group[order]]
    if upos.size == pos.size:
        out = _index_set(x, key, _gather(x, key) * v)
        return out
    # the product of the factors at each distinct position: one unique-key index_set of
    # ones per occurrence rank, multiplied (no division, so exact at zero factors)
    vflat, xflat = reshape(v, -1), reshape(x, -1)
    factor: Any = None
    for r in range(int(rank.max()) + 1):
        sel = np.flatnonzero(rank == r)
        f = _index_set(np.ones(upos.size, dtype=x.dtype), group[sel], getitem(vflat, sel))
        factor = f if factor is None else factor * f
    return reshape(_index_set(xflat, upos, getitem(xflat, upos) * factor), x.shape)


class _At:
    """``t.at``: ``t.at[idx]`` names the entries an update acts on."""
    __slots__ = ("_x",)

    def __init__(self, x: Tensor) -> None:
        self._x = x

    def __getitem__(self, idx: Any) -> _AtIndex:
        return _AtIndex(self._x, idx)


class _AtIndex:
    """``t.at[idx]``: functional updates of ``t`` at ``idx`` (new tensors, like JAX)."""
    __slots__ = ("_x", "_idx")

    def __init__(self, x: Tensor, idx: Any) -> None:
        self._x, self._idx = x, idx

    def get(self) -> Tensor:
        """``t[idx]``."""
        return self._x[self._idx]

    def set(self, v: ArrayLike, *, copy: bool | None = None) -> Tensor:
        """``t`` with ``t[idx] = v``."""
        return index_set(self._x, self._idx, v)

    def add(self, v: ArrayLike, *, copy: bool | None = None) -> Tensor:
        """``t`` with ``v`` added at ``idx`` (repeats accumulate)."""
        return index_add(self._x, self._idx, v)

    def multiply(self, v: ArrayLike, *, copy: bool | None = None) -> Tensor:
        """``t`` with the entries at ``idx`` multiplied by ``v`` (repeats accumulate)."""
        return index_multiply(self._x, self._idx, v)

    def divide(self, v: ArrayLike, *, copy: bool | None = None) -> Tensor:
        """``t`` with the entries at ``idx`` divided by ``v``."""
        return index_multiply(self._x, self._idx, 1 / to_tensor(v))


# setattr: Tensor declares this property for type checkers only (_tensor.py)
setattr(Tensor, "at", property(_At, doc="Functional index updates: ``t.at[idx].set(v)``, "
                                        "``.add(v)``, ``.multiply(v)``, ``.divide(v)``, "
                                        "``.get()``."))


# ---- in place ----------------------------------------------------------------------------
# t[idx] = v and t op= u rebind t to a new node and write the change through to t's base
# and every view of it (views.write; the module docstring there has the rules).

def _setitem(self: Tensor, idx: Any, v: ArrayLike) -> None:
    if isinstance(v, Tensor) and type(v._view) is tuple:
        key, _, basic = _index_key(idx)
        if basic and views.is_view_at(v, self, key):     # the last step of t[idx] += u
            views.check_write(self, "t[...] = v")
            return
    views.write(self, lambda old: index_set(old, idx, v), v, "t[...] = v")


def _inplace(spelling: str, fn: Callable[[Any, Any], Any]) -> Callable[[Tensor, Any], Any]:
    """``t op= u``: t rebound to ``fn(t, u)`` with t's shape and (same-kind cast) dtype."""
    # -> Any: the result is t or NotImplemented (which mypy types as Any)
    def method(self: Tensor, other: Any) -> Any:
        def update(old: Tensor) -> Any:
            new = fn(old, other)
            if new is NotImplemented:
                return NotImplemented
            if new.shape != old.shape:
                raise ShapeError(f"t {spelling} u: the result has shape {new.shape}, but t "
                                 f"has shape {old.shape}; an in-place update cannot change "
                                 f"the shape (broadcast u to t's shape, or write t = t "
                                 f"{spelling[:-1]} u)")
            dt = old._data.dtype
            if new.dtype != dt:
                if not np.can_cast(new.dtype, dt, casting="same_kind"):
                    raise DTypeError(f"t {spelling} u: the result is {new.dtype}, which a "
                                     f"{dt} tensor cannot hold; convert t first (t = "
                                     f"t.astype(tf.{new.dtype}))")
                new = astype(new, dt)
            return new
        return views.write(self, update, other, f"t {spelling} u")
    return method


register(_setitem, methods=("__setitem__",))
for _name, _spelling, _fn in (
        ("add", "+=", operator.add), ("sub", "-=", operator.sub),
        ("mul", "*=", operator.mul), ("truediv", "/=", operator.truediv),
        ("floordiv", "//=", operator.floordiv), ("mod", "%=", operator.mod),
        ("pow", "**=", operator.pow), ("matmul", "@=", operator.matmul),
        ("and", "&=", operator.and_), ("or", "|=", operator.or_),
        ("xor", "^=", operator.xor), ("lshift", "<<=", operator.lshift),
        ("rshift", ">>=", operator.rshift)):
    register(_inplace(_spelling, _fn), methods=(f"__i{_name}__",))
