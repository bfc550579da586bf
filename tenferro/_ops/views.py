"""Views and writes through them: ``v = x[1:]; v += 1`` changes ``x``, as in NumPy and
PyTorch.

A view is a tensor made of its *base* by a chain of *steps* (basic indexing, a reshape
that NumPy does without a copy, an axis permutation, a diagonal, the real or imaginary
part of a complex tensor, a broadcast); its value is the steps applied to the base's
value, before and after a write to any member of the family. ``tape.as_view`` records the
chain on the new tensor (its ``_view`` slot) and the view in its base's ``ViewGroup``.

Values stay immutable: nothing is ever written into an array that a graph node may have
saved. A write to a member ``t`` of a group (``t[idx] = v``, ``t += u``) computes

    t' = update(t)                            (index_set, or t + u, ...)
    base' = view_set(base, steps of t, t')    (base with the entries t shows replaced)

as recorded, differentiable ops, rebinds the base tensor object to ``base'`` and gives every
live view its new value and graph place: the steps replayed on ``base'`` (recorded ops,
their payloads NumPy views of base's new array). ``view_set`` is linear in (base, t'), so
its rules are made of itself and the steps (docs/rules.md#in-place-updates-and-views):

    base̅ = view_set(ȳ, steps, 0)        t̅' = steps(ȳ)        ẏ = view_set(ḃase, steps, ṫ')

Graph nodes that saved a member before the write: those in the written value's graph are
pointed at the member's old value (``t[1:] = t[:-1] * 2`` differentiates through the old
``t``); any other raises InPlaceError in backward, because every member's version moves
(PyTorch's rule: versions are per storage).

Refused, before anything changes (InPlaceError): a write through a view of a leaf that
requires grad while grad mode is on (as in PyTorch; under ``tf.no_grad()`` it is allowed),
and a write through a broadcast view, whose entries share values (NumPy makes
``broadcast_to`` read-only, PyTorch refuses writes to expanded tensors).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from .. import _engine
from .._engine import apply1
from .._errors import InPlaceError
from .._state import STATE
from .._tensor import Tensor
from .elementwise import _imag_op, _real_op
from .registry import defop
from ._util import write_tangents
from .structure import (_broadcast_op, _broadcast_payload, _diagonal_op, _getitem_op,
                        _reshape_op, _transpose_op)

__all__ = ["INDEX", "RESHAPE", "TRANSPOSE", "DIAGONAL", "REAL", "IMAG", "BROADCAST",
           "write", "group_of", "check_write", "is_view_at"]

# ---- steps -------------------------------------------------------------------------------
# A step is (kind, arg); ``arg`` is what the op that made the view was given, normalized.
# (The ops that make views, in structure.py, elementwise.py and manipulation.py, spell the
# kinds as these string literals: this module imports them, not the reverse.)
INDEX = "index"            # arg: a basic key (ints, slices, None, Ellipsis), as _index_key
RESHAPE = "reshape"        # arg: the new shape
TRANSPOSE = "transpose"    # arg: the permutation
DIAGONAL = "diagonal"      # arg: (offset, axis1, axis2)
REAL = "real"              # arg: None (the real part of a complex tensor)
IMAG = "imag"              # arg: None
BROADCAST = "broadcast"    # arg: the broadcast shape (read-only: writes raise)


def step_np(a: NDArray[Any], step: tuple[str, Any]) -> NDArray[Any]:
    """The step applied to an ndarray: a NumPy view of ``a`` where NumPy makes one."""
    kind, arg = step
    if kind == INDEX:
        out: NDArray[Any] = a[arg]
    elif kind == RESHAPE:
        out = a.reshape(arg)
    elif kind == TRANSPOSE:
        out = a.transpose(arg)
    elif kind == DIAGONAL:
        out = np.diagonal(a, *arg)
    elif kind == REAL:
        out = a.real
    elif kind == IMAG:
        out = a.imag
    else:
        out = _broadcast_payload(a, arg)
    return out


def step_tensor(t: Tensor, step: tuple[str, Any]) -> Tensor:
    """The step applied to a Tensor as the recorded op that makes it (differentiable; the
    result is not registered as a view)."""
    kind, arg = step
    d = step_np(t._data, step)
    if kind == INDEX:
        return apply1(_getitem_op, (t,), d, ctx=(arg, True))
    if kind == RESHAPE:
        return apply1(_reshape_op, (t,), d, ctx=d.shape)
    if kind == TRANSPOSE:
        return apply1(_transpose_op, (t,), d, ctx=arg)
    if kind == DIAGONAL:
        return apply1(_diagonal_op, (t,), d, ctx=arg)
    if kind == REAL:
        return apply1(_real_op, (t,), d)
    if kind == IMAG:
        return apply1(_imag_op, (t,), d)
    return apply1(_broadcast_op, (t,), d)


def _replay(a: Any, steps: tuple[tuple[str, Any], ...]) -> Any:
    """The steps applied to an ndarray or (recorded) to a Tensor."""
    if isinstance(a, Tensor):
        for s in steps:
            a = step_tensor(a, s)
        return a
    for s in steps:
        a = step_np(a, s)
    return a


def _target(y: NDArray[Any], steps: tuple[tuple[str, Any], ...]) -> NDArray[Any] | None:
    """The writable NumPy view of ``y`` that the steps select, or None where NumPy cannot
    give one (a reshape of y's layout that would copy)."""
    for kind, arg in steps:
        if kind == RESHAPE:
            try:
                y = np.reshape(y, arg, copy=False)
            except ValueError:
                return None
        else:
            y = step_np(y, (kind, arg))
            if kind == DIAGONAL:
                y.flags.writeable = True      # NumPy's diagonal views are read-only
    return y


def _positions(shape: tuple[int, ...],
               steps: tuple[tuple[str, Any], ...]) -> tuple[NDArray[np.intp], str | None]:
    """Where the entries of the view ``steps`` sit in a base of ``shape``: their flat
    (C-order) positions, in the view's C order, and the complex part they show (REAL,
    IMAG, or None for the whole entry)."""
    pos: NDArray[Any] = np.arange(math.prod(shape), dtype=np.intp).reshape(shape)
    part = None
    for s in steps:
        if s[0] == REAL or s[0] == IMAG:
            part = s[0]           # the real/imaginary part commutes with the other steps
        else:
            pos = step_np(pos, s)
    return pos.ravel(), part


# ---- view_set: the base with the entries of one view replaced ----------------------------
# ctx = the view's steps; v has the view's shape (and the base's dtype, or its real dtype
# for a view of the real or imaginary part).

def _view_set_np(x: NDArray[Any], steps: Any, v: Any) -> NDArray[Any]:
    y: NDArray[Any] = x.copy()
    target = _target(y, steps)
    if target is not None:
        target[...] = v
        return y
    pos, part = _positions(x.shape, steps)     # flat C-order positions, any layout
    np.put(y if part is None else (y.real if part == REAL else y.imag), pos, v)
    return y


def view_set(x: Any, ctx: Any, v: Any) -> Any:
    """``x`` with the entries of the view ``ctx`` replaced by ``v``: on ndarrays, or as the
    recorded op when either is a Tensor."""
    if isinstance(x, Tensor) or isinstance(v, Tensor):
        x = x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x))
        v = v if isinstance(v, Tensor) else Tensor._wrap(np.asarray(v))
        return apply1(_view_set_op, (x, v), _view_set_np(x._data, ctx, v._data), ctx=ctx)
    return _view_set_np(x, ctx, v)


def _view_set_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    g = gs[0]
    gx = view_set(g, ctx, np.zeros((), dtype=xs[1].dtype)) if needs[0] else None
    gv = _replay(g, ctx) if needs[1] else None
    return gx, gv


def _view_set_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    tx, tv = write_tangents(ts, xs[0].shape, ys[0].dtype, xs[1].dtype)
    return (view_set(tx, ctx, tv),)


_view_set_op = defop("view_set", _view_set_vjp, _view_set_jvp)


# ---- writes ------------------------------------------------------------------------------

def group_of(t: Tensor) -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """(t's live ViewGroup or None, the steps from the group's base to t)."""
    link = t._view
    if link is None:
        return None, ()
    if type(link) is tuple:
        return link[0], link[1]
    return link(), ()


def _snapshot(t: Tensor) -> Tensor:
    """A new Tensor object for t's current value and graph place (what a node keeps)."""
    s = Tensor._wrap(t._data, t._node, t._index)
    s._fw = t._fw
    return s


def _is_leaf_requiring_grad(t: Tensor) -> bool:
    return t._node is not None and t._node.op is None


def _check_writable(t: Tensor, base: Tensor | None, steps: Any, what: str) -> None:
    """Raise InPlaceError, before anything changes, for the writes PyTorch refuses."""
    if STATE.grad_enabled:
        if _is_leaf_requiring_grad(t):
            raise InPlaceError(
                f"{what} would change a leaf tensor that requires grad in place, which would "
                "lose the value its gradient is taken at; change a copy (u = tf.asarray(t, "
                "copy=True)), use t.at[...].set(v), or do it under tf.no_grad() (e.g. an "
                "optimizer step)")
        if base is not None and base is not t and _is_leaf_requiring_grad(base):
            raise InPlaceError(
                f"{what}: t is a view of a leaf tensor that requires grad (t = x[...], x.T, "
                "x.reshape(...), ...), and writing through it would change that leaf in "
                "place, losing the value its gradient is taken at; write into a copy "
                "(tf.asarray(x, copy=True)), use x.at[...].set(v), or do it under "
                "tf.no_grad()")
    for kind, _ in steps:
        if kind == BROADCAST:
            raise InPlaceError(
                f"{what}: t is a broadcast view (tf.broadcast_to), whose entries share "
                "values, so a write would change several of them at once (NumPy makes "
                "broadcast_to read-only, PyTorch refuses writes to expanded tensors); "
                "write into a copy: tf.asarray(t, copy=True)")


def check_write(t: Tensor, what: str) -> None:
    """Raise InPlaceError if a write to ``t`` would be refused (before anything changes)."""
    group, steps = group_of(t)
    _check_writable(t, None if group is None else group.base, steps, what)


def is_view_at(v: Any, t: Tensor, key: tuple[Any, ...]) -> bool:
    """Whether ``v`` is the live view ``t[key]`` (``key`` basic, normalized): then
    ``t[key] = v`` changes nothing. Python runs ``t[key] += u`` as ``s = t[key];
    s += u; t[key] = s``, and the in-place step already wrote s through to t."""
    if not isinstance(v, Tensor) or type(v._view) is not tuple:
        return False
    group, steps = group_of(t)
    return (group is not None and v._view[0] is group
            and v._view[1] == steps + ((INDEX, key),))


_REDIRECT_BUDGET = 10_000   # nodes one write looks at (beyond: the version check raises)


def _redirect(starts: list[Any], snaps: dict[int, Tensor], bound: int) -> None:
    """Point the nodes of the written value's graph that read a member of the written
    family (``snaps``: id of the member -> its snapshot) at the member's old value.

    Only nodes made after the family got its current values (seq > ``bound``) can read
    them. Any other node that read a member keeps the member, and a backward through it
    raises InPlaceError (never a silently wrong gradient)."""
    seen: set[int] = set()
    stack, budget = [n for n in starts if n is not None], _REDIRECT_BUDGET
    while stack and budget:
        n = stack.pop()
        if n.op is None or n.seq <= bound or id(n) in seen:
            continue
        seen.add(id(n))
        budget -= 1
        ins = n.inputs
        for x in ins:
            if id(x) in snaps:
                n.inputs = ins = tuple(snaps.get(id(y), y) for y in ins)
                break
        stack.extend(x._node for x in ins if x._node is not None)


def _value_time(t: Tensor) -> int:
    """The counter value when t got its current value (its last write or its node)."""
    node = t._node
    return max(t._version, node.seq if node is not None else 0)


def _refresh(view: Tensor, base: Tensor, steps: Any, version: int) -> None:
    """Give a live view its value and graph place after its base changed: the steps
    replayed on the base, recorded even under no_grad (a view follows its base's graph
    place as the base keeps its own); a view made a leaf (requires_grad set) keeps its
    own node."""
    saved = STATE.grad_enabled
    STATE.grad_enabled = True
    try:
        r = _replay(base, steps)
    finally:
        STATE.grad_enabled = saved
    view._data = r._data
    if not _is_leaf_requiring_grad(view):
        view._node, view._index = r._node, r._index
    view._fw = r._fw
    view._version = version


def write(t: Tensor, update: Callable[[Tensor], Any], value: Any, what: str) -> Any:
    """Rebind the Tensor object ``t`` to ``update(old t)`` (a Tensor of t's shape and
    dtype) and write the change through to t's base and every live view of it; returns
    ``t``, or NotImplemented (changing nothing) when ``update`` returns it. ``value`` is
    the user's operand (its graph may read t). Under no_grad the base keeps its place in
    the graph (a leaf stays a leaf that requires grad)."""
    group, steps = group_of(t)
    base = None if group is None else group.base
    _check_writable(t, base, steps, what)
    members = [t] if base is None else [base] + group.members()
    snaps = {id(m): _snapshot(m) for m in members}
    new_t = update(snaps[id(t)])
    if new_t is NotImplemented:
        return new_t
    if base is None or base is t:
        base, new_base = t, new_t
    else:
        new_base = view_set(snaps[id(base)], steps, new_t)
    starts = [new_base._node]
    if isinstance(value, Tensor):
        starts.append(value._node)
    _redirect(starts, snaps, _value_time(base))
    version = _engine.new_version()
    base._data = new_base._data
    if STATE.grad_enabled:
        base._node, base._index = new_base._node, new_base._index
    base._fw = new_base._fw
    base._version = version
    for m in members:
        if m is not base:
            _refresh(m, base, m._view[1], version)
    return t
