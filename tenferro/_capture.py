"""The core of tf.compile (tenferro/compile.py): recording one call's ops and replaying them.

A recording runs the function on fresh leaves with the tape's recorder on
(tape.set_recorder): every node made on the recording thread is kept in order, every op
applied to graph values with grad mode off is named, and the Tensor reports Python
scalars read from graph values (guards) and values that leave the graph (escapes,
_engine.note_read / note_escape). ``build`` turns that into a :class:`Trace` (slots for
the arguments and each op's outputs), or raises :class:`Decline` with the reason it
cannot be replayed; ``Trace.forward`` and ``Trace.backward`` replay the primal (each
op's ``Op.replay``) and the pullbacks (each op's ``vjp``, or the tape's compiled kernel
for it) on plain arrays. This module reads the graph's internals, so it sits in the core.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import CAPTURE, leaf_tensor, set_recorder
from ._errors import TenferroError
from ._kernels import load as _load_kernel
from ._sparse import SparseCotangent
from ._state import STATE
from ._tensor import Tensor

__all__ = ["Decline", "GuardFailed", "Recorder", "Trace", "build", "verify", "signature",
           "recording", "forward_mode_active", "wants_grad", "traced_leaves"]

_FLOAT_KINDS = "fc"


class Decline(Exception):
    """This recording cannot be replayed; the message says why."""


class GuardFailed(Exception):
    """A guard of the trace read another value: record anew."""


class Recorder:
    """What one recording collects: the nodes in the order the ops ran (from the tape),
    the names of ops that computed from traced values outside the graph, and guards."""
    __slots__ = ("nodes", "escapes", "guards")

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.escapes: list[str] = []
        self.guards: list[tuple[int, Any, str, Any]] = []

    def guard(self, t: Tensor, kind: str, value: Any) -> None:
        # (the number of ops recorded so far: where in the replay the check goes)
        self.guards.append((len(self.nodes), t, kind, value))


class recording:
    """``with recording() as rec:``: record the calling thread's ops into ``rec``."""

    def __enter__(self) -> Recorder:
        self.rec = Recorder()
        self.previous = set_recorder(self.rec)
        self.previous_capture = CAPTURE.recorder
        CAPTURE.recorder = self.rec
        return self.rec

    def __exit__(self, *exc: Any) -> None:
        set_recorder(self.previous)
        CAPTURE.recorder = self.previous_capture


def forward_mode_active() -> bool:
    """Whether a dual level is active (a compiled call then runs eagerly)."""
    return bool(STATE.fw_level)


def wants_grad(ins: list[Any]) -> bool:
    """Whether a call on these traced inputs records a node: grad mode is on and one of
    them is in the graph."""
    return bool(STATE.grad_enabled) and any(isinstance(x, Tensor) and x._node is not None
                                            for x in ins)


def traced_leaves(ins: list[Any]) -> list[Tensor]:
    """Fresh leaves that require grad, holding copies of the traced inputs' values."""
    return [leaf_tensor((x._data if isinstance(x, Tensor) else x).copy(), True) for x in ins]


_tape = _load_kernel("tape")


def _read(a: np.ndarray, kind: str) -> Any:
    """The Python scalar a guard read (as Tensor.item, float(), ... compute it)."""
    if kind == "item":
        return a.item()
    if kind == "tolist":
        return a.tolist()
    if kind == "float":
        return float(a)
    if kind == "int":
        return int(a)
    if kind == "bool":
        return bool(a)
    if kind == "complex":
        return complex(a)
    return a.__index__()


def _same(a: Any, b: Any) -> bool:
    """Bit-for-bit equality of two arrays (NaNs equal where both are NaN)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return False
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


class Trace:
    """The ops of one recording, as slots: the traced arguments first, then each op's
    outputs. ``entries[k] = (op, ctx, refs, first, n_out)``: op k reads ``refs`` (a slot
    number, or a constant ndarray) and writes slots first .. first + n_out - 1."""

    def __init__(self, n_args: int) -> None:
        self.n_args = n_args
        self.n_slots = n_args
        self.entries: list[tuple[Any, Any, tuple[Any, ...], int, int]] = []
        self.needs: list[tuple[bool, ...]] = []
        self.guards: list[tuple[int, int, str, Any]] = []     # (position, slot, kind, value)
        self.outs: list[Any] = []        # slot number or constant ndarray, per output
        self.out_kind = "tensor"         # "tensor", "tuple" or "list"
        self.keep: list[Any] = []        # static arguments kept alive (their ids are keys)

    # ---- replay ----------------------------------------------------------------------
    def forward(self, arrays: list[Any], keep_run: bool) -> tuple[list[Any], list[Any] | None]:
        """The outputs for the traced inputs ``arrays``, and (``keep_run``) each op's
        (ctx, inputs, outputs) for the pullbacks. Raises GuardFailed when a guard reads
        another value; any other exception is an op's failure."""
        slots: list[Any] = arrays + [None] * (self.n_slots - self.n_args)
        run: list[Any] | None = [] if keep_run else None
        guards = self.guards
        gi, ng = 0, len(guards)
        for k, (op, ctx, refs, first, n_out) in enumerate(self.entries):
            while gi < ng and guards[gi][0] == k:
                self._check(guards[gi], slots)
                gi += 1
            xs = tuple([slots[r] if type(r) is int else r for r in refs])
            outs, c = op.replay(ctx, xs)
            if n_out == 1:
                slots[first] = outs[0]
            else:
                slots[first:first + n_out] = outs
            if run is not None:
                run.append((c, xs, outs))
        while gi < ng:
            self._check(guards[gi], slots)
            gi += 1
        return [slots[r] if type(r) is int else r for r in self.outs], run

    @staticmethod
    def _check(guard: tuple[int, int, str, Any], slots: list[Any]) -> None:
        _, slot, kind, value = guard
        now = _read(slots[slot], kind)
        if not (now == value and type(now) is type(value)):
            raise GuardFailed

    def backward(self, run: list[Any], gs: tuple[Any, ...],
                 needs: tuple[bool, ...]) -> tuple[Any, ...]:
        """The cotangents of the traced inputs for the output cotangents ``gs`` (plain
        ndarrays), by each op's pullback in reverse order (as the tape runs them)."""
        cts: list[Any] = [None] * self.n_slots
        for r, g in zip(self.outs, gs):
            if g is not None and type(r) is int:
                cts[r] = _acc(cts[r], g)
        vjp_kernel = _tape.vjp_kernel
        entries, op_needs = self.entries, self.needs
        for k in range(len(entries) - 1, -1, -1):
            op, _, refs, first, n_out = entries[k]
            if n_out == 1:
                g0 = cts[first]
                if g0 is None:
                    continue
                if type(g0) is SparseCotangent:
                    g0 = g0.densify()
                gk = (g0,)
            else:
                gk = tuple([g.densify() if type(g) is SparseCotangent else g
                            for g in cts[first:first + n_out]])
                if not any(g is not None for g in gk):
                    continue
            c, xs, ys = run[k]
            need = op_needs[k]
            cots = None
            if op.kernel and n_out == 1:
                cots = vjp_kernel(op.kernel, c, need, gk[0], xs, ys)
            if cots is None:
                cots = op.vjp(c, need, gk, xs, ys)
            for i, r in enumerate(refs):
                if type(r) is int:
                    ci = cots[i]
                    if ci is not None:
                        cts[r] = _acc(cts[r], _like(ci, xs[i], op.name, i))
        out = []
        for i in range(self.n_args):
            g = cts[i] if needs[i] else None
            out.append(g.densify() if type(g) is SparseCotangent else g)
        return tuple(out)


def _acc(a: Any, b: Any) -> Any:
    """The sum of two cotangents of one slot (None: zero; sparse ones append)."""
    if a is None:
        return b
    if type(a) is SparseCotangent:
        return a.add(b)
    if type(b) is SparseCotangent:
        return b.add(a)
    return a + b


def _like(c: Any, x: Any, name: str, i: int) -> Any:
    """A cotangent with its primal's dtype (the real part for a real primal), as the tape's
    pass gives it (docs/design.md#dtypes)."""
    if type(c) is SparseCotangent:
        return c
    if type(c) is not np.ndarray:
        c = np.asarray(c)
    if c.dtype != x.dtype:
        if c.dtype.kind == "c" and x.dtype.kind != "c":
            c = c.real
        c = c.astype(x.dtype)
    if c.shape != x.shape:
        raise TenferroError(f"tf.compile: the pullback of {name!r} gave input {i} a "
                            f"cotangent of shape {c.shape} for shape {x.shape} (a bug in "
                            "its rule; please report it)")
    return c


def signature(args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[list[int], Any]:
    """The positions of the traced arguments and the cache key (None: not hashable)."""
    traced: list[int] = []
    parts: list[Any] = []
    for i, x in enumerate(args):
        if isinstance(x, Tensor) or type(x) is np.ndarray:
            d = x._data if isinstance(x, Tensor) else x
            if d.dtype.kind in _FLOAT_KINDS:
                traced.append(i)
                parts.append(("t", d.shape, d.dtype.str))
            else:     # integer/boolean arrays: static, by value
                parts.append(("a", d.shape, d.dtype.str, d.tobytes()))
        else:
            parts.append(("s", type(x), x))
    parts.append(tuple(sorted(kwargs.items())))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return traced, None
    return traced, key


def build(rec: Recorder, leaves: list[Tensor], out: Any, args: tuple[Any, ...],
           traced: list[int]) -> Trace:
    """The trace of a recording, or Decline with the reason it cannot be replayed."""
    if rec.escapes:
        names = ", ".join(sorted(set(rec.escapes)))
        raise Decline(f"a traced value left the graph through {names} (its result would "
                       "be a constant of the replay)")
    trace = Trace(len(leaves))
    slot_of: dict[tuple[int, int], int] = {}
    slot_of_array: dict[int, int] = {}
    for i, leaf in enumerate(leaves):
        slot_of[(id(leaf._node), 0)] = i
        slot_of_array[id(leaf._data)] = i
    recorded = set()
    for node in rec.nodes:
        recorded.add(id(node))
    for node in rec.nodes:
        op = node.op
        if op.replay is None:
            raise Decline(f"the op {op.name!r} has no replay rule yet")
        refs: list[Any] = []
        for x in node.inputs:
            refs.append(_ref(x, slot_of, slot_of_array, op.name))
        first = trace.n_slots
        n_out = node.n_out
        for k in range(n_out):
            slot_of[(id(node), k)] = first + k
            slot_of_array[id(node.out_data[k])] = first + k
        trace.n_slots += n_out
        ctx = node.ctx
        if type(ctx) is np.ndarray and ctx.flags.writeable:
            ctx = ctx.copy()        # a constant operand (x ∘ c): as it was when recorded
        trace.entries.append((op, ctx, tuple(refs), first, n_out))
        trace.needs.append(tuple(type(r) is int for r in refs))
    for pos, t, kind, value in rec.guards:
        r = _ref(t, slot_of, slot_of_array, "a guard")
        if type(r) is int:
            trace.guards.append((pos, r, kind, value))
    if isinstance(out, Tensor):
        outs = [out]
    elif isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        outs = list(out)
        trace.out_kind = "list" if isinstance(out, list) else "tuple"
    else:
        raise Decline(f"f returned {type(out).__name__}; a compiled function returns a "
                       "Tensor or a tuple or list of Tensors")
    trace.outs = [_ref(o, slot_of, slot_of_array, "an output") for o in outs]
    trace.keep = [a for i, a in enumerate(args) if i not in traced]
    return trace


def _ref(x: Tensor, slot_of: dict[tuple[int, int], int], slot_of_array: dict[int, int],
         user: str) -> Any:
    """The slot of tensor ``x`` in the trace, or its value as a constant."""
    node = x._node
    if node is not None:
        s = slot_of.get((id(node), x._index))
        if s is None:
            raise Decline(f"{user} reads a tensor that requires grad but is not an argument "
                           "of the compiled function (pass it as an argument)")
        return s
    if x._fw is not None:
        raise Decline(f"{user} reads a tensor that carries a forward-mode tangent")
    d = x._data
    s = slot_of_array.get(id(d))
    if s is not None:
        return s           # a traced value without its graph link (a nondiff output)
    base = d.base
    while base is not None:
        if id(base) in slot_of_array:
            raise Decline(f"{user} reads a view of a traced value outside the graph")
        base = base.base if isinstance(base, np.ndarray) else None
    return d.copy()       # a constant, as it was when recorded


def verify(trace: Trace, rec: Recorder, leaves: list[Tensor]) -> None:
    """Replay the trace on the recording's own inputs: every op must give the values it
    recorded, bit for bit (else an op's replay rule disagrees with its primal)."""
    try:
        _, run = trace.forward([leaf._data for leaf in leaves], True)
    except GuardFailed:
        raise Decline("a guard read another value on the same inputs") from None
    except Exception as e:
        raise Decline(f"replaying raised {type(e).__name__}: {e}") from None
    assert run is not None
    for node, (_, _, outs) in zip(rec.nodes, run):
        for k in range(node.n_out):
            if not _same(outs[k], node.out_data[k]):
                raise Decline(f"the replay of {node.op.name!r} differs from its eager "
                               "result (a bug in its replay rule; please report it)")


