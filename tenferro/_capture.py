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

import threading
from typing import Any

import numpy as np

from ._engine import CAPTURE, leaf_tensor, set_recorder
from ._kernels import load as _load_kernel
from ._lower import lower
from ._sparse import SparseCotangent
from ._state import STATE
from ._tensor import Tensor

__all__ = ["Decline", "GuardFailed", "RecordingBusy", "Recorder", "Trace", "build", "verify",
           "signature", "recording", "forward_mode_active", "wants_grad", "traced_leaves"]

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


class RecordingBusy(Exception):
    """Another thread is recording: this call runs eagerly (nothing is cached)."""


# The tape has one recorder slot (tape.set_recorder: the recorder and its thread), so one
# thread records at a time; a recording never waits for another (that could deadlock a
# function that waits for another thread's compiled call): it runs eagerly instead.
_RECORDING_LOCK = threading.RLock()


class recording:
    """``with recording() as rec:``: record the calling thread's ops into ``rec``; raises
    RecordingBusy when another thread is recording."""

    def __enter__(self) -> Recorder:
        if not _RECORDING_LOCK.acquire(blocking=False):
            raise RecordingBusy
        self.rec = Recorder()
        self.previous = set_recorder(self.rec)
        self.previous_capture = CAPTURE.recorder
        CAPTURE.recorder = self.rec
        return self.rec

    def __exit__(self, *exc: Any) -> None:
        set_recorder(self.previous)
        CAPTURE.recorder = self.previous_capture
        _RECORDING_LOCK.release()


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
# (bound by name, as the ops bind apply1: tests swap in the twin's)
replay_forward, replay_pullbacks = _tape.replay_forward, _tape.replay_pullbacks


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
    """The ops of one recording, as slots: the traced arguments, the constants and each
    op's outputs, numbered in the order the recording met them. Op k runs
    ``plan[k] = (fn, refs, single, first, n_out, dyn)``: ``fn`` (from ``op.replay(ctx)``)
    on the slots numbered ``refs`` (one: ``single``), writing slots
    first .. first + n_out - 1; ``dyn``: fn also returns the op's new ctx (``replay_ctx``
    ops, whose ctx holds values: a factorization). ``ops``, ``ctxs``, ``ins`` and
    ``needs`` hold what the pullbacks need."""

    def __init__(self, n_args: int) -> None:
        self.n_args = n_args
        self.template: list[Any] = [None] * n_args    # the slots, constants filled in
        self.plan: list[tuple[Any, Any, bool, int, int, bool]] = []
        self.ops: list[Any] = []
        self.ctxs: list[Any] = []
        self.ins: list[tuple[int, ...]] = []           # the input slots of each op
        self.needs: list[tuple[bool, ...]] = []        # which of them are traced
        self.traced: list[bool] = [True] * n_args      # per slot: computed from the args
        self.guards: list[tuple[int, int, str, Any]] = []     # (position, slot, kind, value)
        self.outs: list[int] = []        # the slot of each output
        self.out_kind = "tensor"         # "tensor", "tuple" or "list"
        self.keep: list[Any] = []        # static arguments kept alive (their ids are keys)
        self.const_of: dict[int, int] = {}   # id of a constant's array -> its slot (build)
        self.guard_failures = 0          # recordings in a row that a guard made
        self.lowered: Any = None         # its C instructions (tenferro/_lower.py), if any
        self._needs_for: dict[tuple[bool, ...], list[tuple[bool, ...]]] = {}
        self._lowered_needs: dict[tuple[bool, ...], Any] = {}

    def new_slot(self, value: Any, traced: bool) -> int:
        self.template.append(value)
        self.traced.append(traced)
        return len(self.template) - 1

    # ---- replay ----------------------------------------------------------------------
    def forward(self, arrays: list[Any]) -> tuple[list[Any], Any]:
        """The outputs for the traced inputs ``arrays``, and the run the pullbacks need
        (every slot's value, and the new ctx of the ``dyn`` ops). Raises GuardFailed when
        a guard reads another value; any other exception is an op's failure."""
        if self.lowered is not None:
            return self.lowered.forward(arrays)     # type: ignore[no-any-return]
        slots = self.template.copy()
        slots[:self.n_args] = arrays
        dyn_ctx: dict[int, Any] = {}
        replay_forward(self.plan, slots, self.guards, self._check, dyn_ctx)
        return [slots[r] for r in self.outs], (slots, dyn_ctx)

    @staticmethod
    def _check(guard: tuple[int, int, str, Any], slots: list[Any]) -> None:
        _, slot, kind, value = guard
        now = _read(slots[slot], kind)
        if not (now == value and type(now) is type(value)):
            raise GuardFailed

    def backward(self, run: Any, gs: tuple[Any, ...],
                 needs: tuple[bool, ...]) -> tuple[Any, ...]:
        """The cotangents of the traced inputs for the output cotangents ``gs`` (plain
        ndarrays), by each op's pullback in reverse order (as the tape runs them)."""
        op_needs = self._needs_for.get(needs)
        if op_needs is None:
            op_needs = self._needs_for[needs] = self._prune(needs)
        if self.lowered is not None:
            table = self._lowered_needs.get(needs)
            if table is None:
                table = self._lowered_needs[needs] = self.lowered.needs_table(op_needs)
            return self.lowered.backward(  # type: ignore[no-any-return]
                run, gs, needs, op_needs, table)
        slots, dyn_ctx = run
        cts: list[Any] = [None] * len(slots)
        for r, g in zip(self.outs, gs):
            if g is not None and self.traced[r]:
                # (an output listed twice gets both seeds)
                cts[r] = g if cts[r] is None else cts[r] + g
        replay_pullbacks(self.plan, self.ops, self.ctxs, self.ins, op_needs, slots,
                         dyn_ctx, cts)
        out = []
        for i in range(self.n_args):
            g = cts[i] if needs[i] else None
            out.append(g.densify() if type(g) is SparseCotangent else g)
        return tuple(out)

    def loop_body(self, arrays: list[Any], vary: int) -> Any:
        """The forward for calls that change only argument ``vary`` (a loop's state; the
        other arguments are ``arrays``' and fixed): the ops that read only fixed
        arguments and constants run once, here, and become constants of the returned
        ``body(x) -> outputs``. None when the trace has guards (they would be checked
        once only). Forward only: no pullbacks."""
        if self.guards:
            return None
        slots = self.template.copy()
        slots[:self.n_args] = arrays
        dep = [False] * len(slots)
        dep[vary] = True
        plan = []
        for entry, refs in zip(self.plan, self.ins):
            fn, _, single, first, n_out, dyn = entry
            if any(dep[r] for r in refs):
                for k in range(n_out):
                    dep[first + k] = True
                plan.append((fn, refs, single, first, n_out, False) if not dyn else
                            (_drop_ctx(fn), refs, single, first, n_out, False))
                continue
            replay_forward([entry], slots, [], self._check, {})   # once: a constant now
        template: list[Any] = [v if not dep[i] else None for i, v in enumerate(slots)]
        outs = self.outs
        # (an output that is not computed per call, a constant or x itself, is copied)
        fresh = [dep[r] and r != vary for r in outs]

        def body(x: Any) -> list[Any]:
            run = template.copy()
            run[vary] = x
            replay_forward(plan, run, [], None, {})
            return [run[r] if f else run[r].copy() for r, f in zip(outs, fresh)]
        return body

    def _prune(self, needs: tuple[bool, ...]) -> list[tuple[bool, ...]]:
        """Per op, which inputs get a cotangent when only the arguments marked in
        ``needs`` do: the slots computed from one of them (a part of f that reads only
        the other arguments runs no pullback)."""
        dep = [bool(n) for n in needs] + [False] * (len(self.template) - self.n_args)
        for (_, _, _, first, n_out, _), refs in zip(self.plan, self.ins):
            if any(dep[r] for r in refs):
                for k in range(n_out):
                    dep[first + k] = True
        return [tuple([dep[r] and n for r, n in zip(refs, need)])
                for refs, need in zip(self.ins, self.needs)]


def _drop_ctx(fn: Any) -> Any:
    """A ``replay_ctx`` op's replay function without the ctx it also returns."""
    return lambda *xs: fn(*xs)[0]


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
    # integer/boolean results computed from traced values (argsort, argmax: index_result):
    # no cotangent flows into them, and an op may read them only as an input
    choices = [d for node in rec.nodes for d in node.out_data if d.dtype.kind in "biu"]
    nondiff: set[int] = set()
    for node in rec.nodes:
        op = node.op
        if node.freed:
            raise Decline(f"a backward pass inside f freed the graph of {op.name!r}")
        if op.replay is None:
            raise Decline(f"the op {op.name!r} has no replay rule yet")
        refs = tuple([_ref(x, trace, slot_of, slot_of_array, op.name) for x in node.inputs])
        ctx = node.ctx
        if choices and not op.index_inputs:
            _check_ctx(ctx, choices, op.name)
        if type(ctx) is np.ndarray and ctx.flags.writeable:
            ctx = ctx.copy()        # a constant operand (x ∘ c): as it was when recorded
        n_out = node.n_out
        first = len(trace.template)
        for k in range(n_out):
            slot_of[(id(node), k)] = first + k
            slot_of_array[id(node.out_data[k])] = first + k
            trace.new_slot(None, True)
            if node.out_data[k].dtype.kind in "biu" or op.zero_derivative:
                nondiff.add(first + k)      # (no cotangent: its derivative is 0)
        fn = op.replay(ctx)
        dyn = bool(op.replay_ctx)
        trace.plan.append((fn, refs, len(refs) == 1, first, n_out, dyn))
        trace.ops.append(op)
        trace.ctxs.append(ctx)
        trace.ins.append(refs)
        trace.needs.append(tuple([trace.traced[r] and r not in nondiff for r in refs]))
    for pos, t, kind, value in rec.guards:
        r = _ref(t, trace, slot_of, slot_of_array, "a guard")
        if trace.traced[r]:
            trace.guards.append((pos, r, kind, value))
    if isinstance(out, Tensor):
        outs = [out]
    elif isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        outs = list(out)
        trace.out_kind = "list" if isinstance(out, list) else "tuple"
    else:
        raise Decline(f"f returned {type(out).__name__}; a compiled function returns a "
                      "Tensor or a tuple or list of Tensors")
    trace.outs = [_ref(o, trace, slot_of, slot_of_array, "an output") for o in outs]
    trace.keep = [a for i, a in enumerate(args) if i not in traced]
    trace.const_of = {}     # (the ids of the recording's arrays mean nothing later)
    return trace


def _check_ctx(ctx: Any, choices: list[np.ndarray], name: str, depth: int = 0) -> None:
    """Decline when an op's ctx (its constants) holds an integer/boolean result computed
    from traced values, or a view or copy of one: the replay would reuse the recorded
    choice (an op reading an index from its argument's payload instead of taking it as an
    input). A copy is recognised by its value; an equal constant index array declines too
    (eager then: correct, slower)."""
    if type(ctx) is np.ndarray:
        a: Any = ctx
        while isinstance(a, np.ndarray):
            if any(a is c for c in choices):
                break
            a = a.base
        else:
            if ctx.dtype.kind not in "biu" or not any(
                    c.shape == ctx.shape and np.array_equal(c, ctx) for c in choices):
                return
        raise Decline(f"the op {name!r} reads an index computed from traced values "
                      "(argsort, argmax, ...) as a constant; index with it "
                      "(x[idx], take) or compute with it as a tensor instead")
    if depth < 3 and isinstance(ctx, (tuple, list)):
        for c in ctx:
            _check_ctx(c, choices, name, depth + 1)
    elif depth < 3 and isinstance(ctx, dict):
        for c in ctx.values():
            _check_ctx(c, choices, name, depth + 1)


def _ref(x: Tensor, trace: Trace, slot_of: dict[tuple[int, int], int],
         slot_of_array: dict[int, int], user: str) -> int:
    """The slot of tensor ``x`` in the trace (a constant gets one, holding its value)."""
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
    s = trace.const_of.get(id(d))
    if s is not None:
        return s           # a constant met before
    base = d.base
    while base is not None:
        if id(base) in slot_of_array:
            raise Decline(f"{user} reads a view of a traced value outside the graph")
        base = base.base if isinstance(base, np.ndarray) else None
    s = trace.new_slot(d.copy(), False)     # a constant, as it was when recorded
    trace.const_of[id(d)] = s
    return s


def verify(trace: Trace, rec: Recorder, leaves: list[Tensor]) -> None:
    """Replay the trace on the recording's own inputs: every op must give the values it
    recorded, bit for bit (else an op's replay rule disagrees with its primal). Then
    lower it to C instructions where it can (tenferro/_lower.py; checked the same way)."""
    try:
        _, (slots, _) = trace.forward([leaf._data for leaf in leaves])
    except GuardFailed:
        raise Decline("a guard read another value on the same inputs") from None
    except Exception as e:
        raise Decline(f"replaying raised {type(e).__name__}: {e}") from None
    for node, (_, _, _, first, n_out, _) in zip(rec.nodes, trace.plan):
        for k in range(n_out):
            if not _same(slots[first + k], node.out_data[k]):
                raise Decline(f"the replay of {node.op.name!r} differs from its eager "
                              "result (a bug in its replay rule; please report it)")
    trace.lowered = lower(trace, slots)
