"""Recording op applications on the graph and propagating forward tangents.

``apply``/``apply1`` are the one entry every op goes through after computing its primal
with NumPy: they attach a graph node when grad mode is on and an input requires grad,
and compute output tangents when a forward-AD dual level is active.
"""
import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._errors import GraphFreedError, InPlaceError, UnsupportedADError
from ._kernels import load as _load_kernel, tape_twin
from ._sparse import SparseCotangent
from ._state import STATE

if TYPE_CHECKING:
    # the checker reads the signatures of tape.pyi (the compiled module and its twin
    # share them); at run time load() picks one of the two
    from ._kernels import tape as _tape
    from ._ops.registry import Op
    from ._tensor import Tensor
else:
    _tape = _load_kernel("tape")     # compiled, or tape_twin under TENFERRO_PURE_PYTHON=1
(Node, backward_plain, new_version, grad_plain, grad_graph, owned, run_backward,
 set_inplace_error, set_sparse_type, leaf_tensor, as_view, set_recorder) = (
    _tape.Node, _tape.backward_plain, _tape.new_version, _tape.grad_plain, _tape.grad_graph,
    _tape.owned, _tape.run_backward, _tape.set_inplace_error, _tape.set_sparse_type,
    _tape.leaf_tensor, _tape.as_view, _tape.set_recorder)

__all__ = ["Node", "apply", "apply1", "run_backward", "grad_plain", "grad_graph",
           "backward_plain", "owned", "graph_rule", "sum_small", "new_version", "leaf_tensor",
           "as_view", "GraphFreedError", "is_tracked", "tracked_in_reverse", "has_tangent",
           "tangent_of", "CAPTURE", "note_read", "note_escape", "set_recorder", "index_result",
           "traced_index",
           "nested_level_active", "active_levels", "find_tangent", "make_chain",
           "restrict_chain", "with_chain", "nest_level", "unnest_level", "enter_level",
           "release_tangents"]

set_inplace_error(InPlaceError)
set_sparse_type(SparseCotangent)
tape_twin.set_sparse_type(SparseCotangent)    # the twin too (tests swap it in per test)

# set by _tensor.py (avoids an import cycle) before any op runs
_Tensor: "type[Tensor]" = None  # type: ignore[assignment]


def _bind(tensor_cls: "type[Tensor]") -> None:
    global _Tensor
    _Tensor = tensor_cls
    _tape.bind_engine(tensor_cls, STATE, _forward)
    tape_twin.bind_engine(tensor_cls, STATE, _forward)    # (tests swap the twin in)


# apply1(op, inputs, out, ctx) / apply(op, inputs, outs, ctx): wrap the output array(s)
# of op(*inputs) as Tensors, with a graph Node when grad mode is on and an input requires
# grad, and their tangents when a forward-AD dual level is active (compiled: tape.pyx)
apply1 = _tape.apply1
apply = _tape.apply
# graph_rule(node, gs, needs): a pullback run on Tensors, recording its own ops (the
# create_graph=True step of run_backward)
graph_rule = _tape.graph_rule
# sum_small(op, t): t.sum() of a small float64/float32 tensor with the sum done in C
# (NumPy's bits), or None when t's payload is not such an array
sum_small = _tape.sum_small


# ---- is this tensor tracked? ---------------------------------------------------------------
# The Tensor (``__array__``) and every rule ask this; tenferro/_rule_api.py re-exports these
# with the rest of the API for rule authors. Each has one meaning; they differ on purpose.

def tracked_in_reverse(t: "Tensor") -> bool:
    """Whether an op applied to ``t`` now records a reverse-mode node: ``t`` is in the
    graph (requires grad, or was computed from a tensor that does) and grad mode is on."""
    return t._node is not None and STATE.grad_enabled


def has_tangent(t: "Tensor") -> bool:
    """Whether ``t`` carries a forward-mode tangent of an active dual level: the innermost
    one or, inside nested levels, an enclosing one (False when no level is active; a
    tangent of a finished level does not count)."""
    fw = t._fw
    level = STATE.fw_level
    if fw is None or level == 0:
        return False
    return fw[0] == level or _has_active(fw, level)


def is_tracked(t: "Tensor") -> bool:
    """Whether ``t`` carries a derivative that an op applied to it now must propagate:
    :func:`tracked_in_reverse` or :func:`has_tangent`. An op may take a cheaper path
    (no vectors, no permutation, ...) when no input is tracked."""
    if t._node is not None and STATE.grad_enabled:
        return True
    fw = t._fw
    level = STATE.fw_level
    if fw is None or level == 0:
        return False
    return fw[0] == level or _has_active(fw, level)


def nested_level_active() -> bool:
    """Whether the active dual level is nested in another one (jvp of jvp). An op's forward
    rule then also runs for the enclosing levels, on Tensors, and reads every output's
    tangents of those: a rule may skip an output's tangent (svdvals' vectors) only when
    this is False."""
    return STATE.fw_level < 0


def tangent_of(t: "Tensor") -> "Tensor | None":
    """``t``'s forward-mode tangent at the active (innermost) dual level (a Tensor), or
    None."""
    fw = t._fw
    level = STATE.fw_level
    if fw is None or level == 0:
        return None
    if fw[0] == level:
        tangent: "Tensor" = fw[1]
        return tangent
    return find_tangent(fw, level)


# ---- nested dual levels ----------------------------------------------------------------------
# (the design: tenferro/forward.py's docstring and docs/design.md#forward-mode)
# A Tensor's ``_fw`` is None or a chain ``(level, tangent)`` / ``(level, tangent, rest)``
# with ``rest`` a chain again: one tangent per dual level, the innermost level first. A
# tangent of level L is a Tensor whose own chain holds only levels enclosing L. A level
# opened while another is active gets a negative id and its enclosing level is recorded
# in _OUTER; a level opened with none active has a positive id. So ``STATE.fw_level``
# names the whole stack of active levels (its id, then _OUTER's links), and an op sees at
# once (the sign) whether it runs inside one level (the path as fast as before nesting)
# or inside nested ones (_forward_nested).

_OUTER: dict[int, int] = {}     # a nested level's id -> the id of the level enclosing it


def nest_level(level: int, outer: int) -> None:
    """Record that the (negative) id ``level`` is a level opened inside ``outer``."""
    _OUTER[level] = outer


def unnest_level(level: int) -> None:
    """Forget a closed nested level's link (its id is never used again)."""
    _OUTER.pop(level, None)


def active_levels(level: int) -> tuple[int, ...]:
    """The stack of active dual levels named by ``level`` (STATE.fw_level), innermost
    first; () for 0."""
    out = []
    while level:
        out.append(level)
        level = _OUTER.get(level, 0) if level < 0 else 0
    return tuple(out)


def find_tangent(fw: Any, level: int) -> "Tensor | None":
    """The tangent of ``level`` in the chain ``fw`` (None: none)."""
    while fw is not None:
        if fw[0] == level:
            tangent: "Tensor" = fw[1]
            return tangent
        fw = fw[2] if len(fw) > 2 else None
    return None


# ---- values read while tf.compile records (tenferro/compile.py) -----------------------------
# A recording replays only what the graph holds. A traced tensor's value that leaves the
# graph (float(t), t.item(), bool(t), a comparison, np.argmax(t), t.detach(), t.numpy())
# could steer the function or become a constant of the replay, so the Tensor and the ops
# that read values report it here: a Python scalar is a guard the replay checks, anything
# else makes the recording decline (the function then runs eagerly).

class _Capture(threading.local):
    recorder: Any = None     # compile._Recorder of this thread's recording, or None


CAPTURE = _Capture()


def note_read(t: "Tensor", kind: str, value: Any) -> None:
    """``t``'s value was read as the Python scalar ``value`` by ``kind`` (``"float"``,
    ``"bool"``, ``"item"``, ...): a guard of the recording, if one is active and t is in
    its graph."""
    rec = CAPTURE.recorder
    if rec is not None and t._node is not None:
        rec.guard(t, kind, value)


def note_escape(name: str, *values: Any) -> None:
    """``name`` computed something from the given values outside the graph (a nondiff op,
    a detach): if one of them is in an active recording's graph, the recording declines."""
    rec = CAPTURE.recorder
    if rec is not None:
        for v in values:
            if isinstance(v, (list, tuple)):
                note_escape(name, *v)
            elif isinstance(v, _Tensor) and v._node is not None:
                rec.escapes.append(name)
                return


def index_result(op: "Op", inputs: tuple[Any, ...], out: NDArray[Any], ctx: Any = None
                 ) -> "Tensor":
    """The integer or boolean result ``out`` of a value-dependent choice (argsort, argmax)
    on ``inputs``, as a Tensor without a derivative. While tf.compile records and an input
    is traced, it is a node of ``op`` (whose ``replay`` recomputes it from the replay's
    values, and whose pullback gives nothing), so the choice stays inside the trace and
    consumers that take it as an input (indexing by it, arithmetic) see the new choice at
    replay, as jnp.argsort inside jax.jit. Anywhere else a plain tensor, as before; with
    grad mode off inside a recording, the node is not made and the tape names the op as
    a value that left the graph."""
    if CAPTURE.recorder is not None and any(isinstance(x, _Tensor) and x._node is not None
                                            for x in inputs):
        return apply1(op, inputs, out, ctx)
    return _Tensor._wrap(out)


def traced_index(k: Any) -> bool:
    """Whether ``k`` is an index Tensor computed from traced values inside this thread's
    tf.compile recording (index_result's nodes): an indexing op takes it as an input."""
    return (CAPTURE.recorder is not None and isinstance(k, _Tensor)
            and k._node is not None)


def _has_active(fw: Any, level: int) -> bool:
    """Whether the chain ``fw`` holds a tangent of one of the levels active at ``level``
    (its head was already compared with ``level``)."""
    if level > 0:
        return len(fw) > 2 and find_tangent(fw[2], level) is not None
    for lv in active_levels(level):
        if find_tangent(fw, lv) is not None:
            return True
    return False


def make_chain(pairs: "list[tuple[int, Tensor]]") -> Any:
    """The chain of ``(level, tangent)`` pairs, given innermost first (None: no pair)."""
    fw: Any = None
    for level, tangent in reversed(pairs):
        fw = (level, tangent) if fw is None else (level, tangent, fw)
    return fw


def restrict_chain(fw: Any, levels: "tuple[int, ...]") -> Any:
    """The chain of the tangents ``fw`` holds of ``levels`` (innermost first): the others
    (an inner level's, a finished level's) are left out."""
    if fw is None:
        return None
    if len(fw) == 2 and levels and fw[0] == levels[0]:
        return fw
    pairs = []
    for level in levels:
        t = find_tangent(fw, level)
        if t is not None:
            pairs.append((level, t))
    return make_chain(pairs)


def with_chain(x: "Tensor", fw: Any) -> "Tensor":
    """A new Tensor with ``x``'s value and reverse-graph place and the chain ``fw``."""
    t = _Tensor._wrap(x._data, x._node, x._index)
    t._fw = fw
    return t


def _cast_like(t: Any, ref_dtype: np.dtype[Any]) -> Any:
    """Give a tangent/cotangent the dtype of its primal (real part for a real primal)."""
    if t.dtype != ref_dtype:
        if t.dtype.kind == "c" and ref_dtype.kind != "c":
            t = t.real
        t = t.astype(ref_dtype)
    return t


class _TangentNodes(threading.local):
    """The nodes of this thread's active dual levels that keep their outputs' tangents.

    A node keeps them (``out_tangents``: the chain of each output, see active_levels) so
    that a create_graph backward inside the level carries tangents (forward-over-reverse).
    With grad mode on, each tangent is itself recorded by jvp ops whose inputs include the
    node's outputs, so node -> tangent -> the tangent's node -> an output of the node ->
    node is a reference cycle: only the garbage collector's full collections would free
    such a graph, and in tf.hessian they took 82% of the time. The tangents mean nothing
    once their level closes, so ``release_tangents`` (dual_level's exit) drops them and
    reference counting frees each pass's graph at once. The lists hold weak references, so
    that a graph dropped while the level is still open (a long loop inside one level)
    stays collectable as before. ``nodes`` is the innermost level's list; ``outer`` the
    lists of the levels enclosing it (nested levels), outermost first."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []      # weakref.ref of each node
        self.outer: list[list[Any]] = []


_TANGENT_NODES = _TangentNodes()


def enter_level(nested: bool) -> bool:
    """A dual level opens (``nested``: inside an active one). Its nodes get a list of
    their own when the current list may hold an enclosing level's nodes (a nested level,
    or a level opened by outside_dual_level's block inside one); returns whether it did."""
    tn = _TANGENT_NODES
    if not (nested or tn.nodes):
        return False
    tn.outer.append(tn.nodes)
    tn.nodes = []
    return True


def release_tangents(remaining: "tuple[int, ...]" = (), pushed: bool = False) -> None:
    """Drop the tangents that the nodes of the closing dual level keep (see _TangentNodes).
    ``remaining``: the levels that stay active (innermost first) when a nested level
    closes; a node keeps its tangents of those, and joins the enclosing level's list.
    ``pushed``: what enter_level returned for this level."""
    tn = _TANGENT_NODES
    nodes = tn.nodes
    parent = tn.outer.pop() if pushed and tn.outer else None
    for ref in nodes:
        node = ref()
        if node is None or node.out_tangents is None:
            continue
        if remaining and parent is not None:
            kept = tuple([restrict_chain(fw, remaining) for fw in node.out_tangents])
            for fw in kept:
                if fw is not None:
                    node.out_tangents = kept
                    parent.append(ref)
                    break
            else:
                node.out_tangents = None
        else:
            node.out_tangents = None
    nodes.clear()
    if parent is not None:
        tn.nodes = parent


def _forward(op: "Op", ctx: Any, inputs: "tuple[Tensor, ...]",
             outs: tuple[NDArray[Any], ...], results: "tuple[Tensor, ...]",
             node: Any) -> None:
    """Forward mode: output tangents from the input tangents of the active level(s)."""
    level = STATE.fw_level
    if level < 0:
        _forward_nested(op, ctx, inputs, outs, results, node, level)
        return
    ts: "list[Tensor | None] | None" = None
    graph = False
    i = 0
    for x in inputs:
        fw = x._fw
        if fw is not None:
            if fw[0] == level:
                t_in = fw[1]
            elif len(fw) > 2:       # (a chain whose head is a finished nested level)
                t_in = find_tangent(fw[2], level)
                if t_in is None:
                    i += 1
                    continue
            else:
                i += 1
                continue
            if ts is None:
                ts = [None] * len(inputs)
            ts[i] = t_in
            if t_in._node is not None:
                graph = True
        i += 1
    if ts is None:
        return
    if op.jvp is None:
        raise UnsupportedADError(f"{op.name} has no forward-mode rule")
    graph = STATE.grad_enabled and (graph or node is not None)
    STATE.fw_level = 0
    try:
        # (_rule_outermost, inline: this path is forward mode's per-op cost, e.g. tf.hvp's
        # and tf.jvp's)
        if graph:
            xs = tuple([_Tensor._wrap(x._data, x._node, x._index) for x in inputs])
            ys = tuple([_Tensor._wrap(r._data, r._node, r._index) for r in results])
            out_ts = op.jvp(ctx, tuple(ts), xs, ys)
        else:
            out_ts = op.jvp(ctx, tuple([None if t is None else t._data for t in ts]),
                            tuple([x._data for x in inputs]), outs)
    finally:
        STATE.fw_level = level
    fws: "list[Any]" = []
    nondiff = op.nondiff
    for i, (r, t) in enumerate(zip(results, out_ts)):
        if t is None or (nondiff and i in nondiff):
            fws.append(None)
            continue
        if not isinstance(t, _Tensor):
            t = _Tensor._wrap(t if type(t) is np.ndarray else np.asarray(t))
        if t._data.dtype != r._data.dtype:
            t = _cast_like(t, r._data.dtype)
        fw = r._fw = (level, t)
        fws.append(fw)
    if node is not None:
        node.out_tangents = tuple(fws)
        _TANGENT_NODES.nodes.append(weakref.ref(node))


def _rule_outermost(op: "Op", ctx: Any, ts: "list[Tensor | None]",
                    inputs: "tuple[Tensor, ...]", outs: tuple[NDArray[Any], ...],
                    results: "tuple[Tensor, ...]", node: Any) -> Any:
    """The jvp rule of the outermost (or only) active level, run with no level active:
    on ndarrays, or on Tensors when reverse mode records (reverse-over-forward)."""
    jvp: Any = op.jvp
    graph = False
    for t in ts:
        if t is not None and t._node is not None:
            graph = True
            break
    if STATE.grad_enabled and (graph or node is not None):
        # Tensors without tangents: the rule's own ops record reverse-mode graph
        # (reverse-over-forward) but do not recurse into forward mode.
        xs = tuple([_Tensor._wrap(x._data, x._node, x._index) for x in inputs])
        ys = tuple([_Tensor._wrap(r._data, r._node, r._index) for r in results])
        return jvp(ctx, tuple(ts), xs, ys)
    # (list comprehensions, not generators: this path is forward mode's per-op cost,
    # e.g. tf.hvp's and tf.jvp's)
    return jvp(ctx, tuple([None if t is None else t._data for t in ts]),
                  tuple([x._data for x in inputs]), outs)


def _forward_nested(op: "Op", ctx: Any, inputs: "tuple[Tensor, ...]",
                    outs: tuple[NDArray[Any], ...], results: "tuple[Tensor, ...]",
                    node: Any, level: int) -> None:
    """Forward mode inside nested dual levels (forward.py's docstring has the design).

    The levels are done from the outermost in: the tangent of level L comes from the rule
    run on Tensors with only the levels enclosing L active, its inputs, their L-tangents
    and the outputs carrying their tangents of those levels (computed first), so the rule's
    own ops give the L-tangent its tangents of the enclosing levels. The outermost level's
    rule runs with no level active, as in a single level."""
    levels = active_levels(level)
    per_level: "list[list[Tensor | None] | None]" = []
    found = False
    for lv in levels:
        ts: "list[Tensor | None] | None" = None
        for i, x in enumerate(inputs):
            t = find_tangent(x._fw, lv)
            if t is not None:
                if ts is None:
                    ts = [None] * len(inputs)
                ts[i] = t
        per_level.append(ts)
        found = found or ts is not None
    if not found:
        return
    jvp: Any = op.jvp
    if jvp is None:
        raise UnsupportedADError(f"{op.name} has no forward-mode rule")
    n_out = len(results)
    chains: "list[list[tuple[int, Tensor]]]" = [[] for _ in range(n_out)]  # outermost first
    nondiff = op.nondiff
    try:
        for j in range(len(levels) - 1, -1, -1):
            ts = per_level[j]
            if ts is None:
                continue
            enclosing = levels[j + 1:]
            STATE.fw_level = enclosing[0] if enclosing else 0
            if not enclosing:
                out_ts = _rule_outermost(op, ctx, ts, inputs, outs, results, node)
            else:
                xs = tuple([with_chain(x, restrict_chain(x._fw, enclosing))
                            for x in inputs])
                ys = tuple([with_chain(r, make_chain(chains[k][::-1]))
                            for k, r in enumerate(results)])
                tts = tuple([None if t is None else
                             with_chain(t, restrict_chain(t._fw, enclosing)) for t in ts])
                if not op.second_order and any(
                        v is not None and v._fw is not None for v in xs + ys + tts):
                    raise UnsupportedADError(
                        f"{op.name}: its forward-mode rule is not written in differentiable "
                        f"ops, so it cannot run inside nested dual levels (jvp of jvp) with "
                        f"tangents of an enclosing level; differentiate it at one level, "
                        f"or by forward-over-reverse (tf.hvp)")
                out_ts = jvp(ctx, tts, xs, ys)
            out: Any
            for k, (r, out) in enumerate(zip(results, out_ts)):
                if out is None or (nondiff and k in nondiff):
                    continue
                if not isinstance(out, _Tensor):
                    out = _Tensor._wrap(out if type(out) is np.ndarray else np.asarray(out))
                if out._data.dtype != r._data.dtype:
                    out = _cast_like(out, r._data.dtype)   # (with the enclosing levels active)
                if enclosing:
                    # only the enclosing levels' tangents belong on a tangent of this one
                    out = with_chain(out, restrict_chain(out._fw, enclosing))
                chains[k].append((levels[j], out))
    finally:
        STATE.fw_level = level
    fws: "list[Any]" = []
    for k, r in enumerate(results):
        fw = make_chain(chains[k][::-1]) if chains[k] else None
        if fw is not None:
            r._fw = fw
        fws.append(fw)
    if node is not None:
        node.out_tangents = tuple(fws)
        _TANGENT_NODES.nodes.append(weakref.ref(node))
