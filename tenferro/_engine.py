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
           "tangent_of", "CAPTURE", "note_read", "note_escape", "set_recorder"]

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
    """Whether ``t`` carries a forward-mode tangent of the active dual level (False when
    no level is active; a tangent of a finished level does not count)."""
    fw = t._fw
    return fw is not None and STATE.fw_level != 0 and fw[0] == STATE.fw_level


def is_tracked(t: "Tensor") -> bool:
    """Whether ``t`` carries a derivative that an op applied to it now must propagate:
    :func:`tracked_in_reverse` or :func:`has_tangent`. An op may take a cheaper path
    (no vectors, no permutation, ...) when no input is tracked."""
    if t._node is not None and STATE.grad_enabled:
        return True
    fw = t._fw
    return fw is not None and STATE.fw_level != 0 and fw[0] == STATE.fw_level


def tangent_of(t: "Tensor") -> "Tensor | None":
    """``t``'s forward-mode tangent at the active dual level (a Tensor), or None."""
    fw = t._fw
    if fw is not None and STATE.fw_level != 0 and fw[0] == STATE.fw_level:
        tangent: "Tensor" = fw[1]
        return tangent
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


def _cast_like(t: Any, ref_dtype: np.dtype[Any]) -> Any:
    """Give a tangent/cotangent the dtype of its primal (real part for a real primal)."""
    if t.dtype != ref_dtype:
        if t.dtype.kind == "c" and ref_dtype.kind != "c":
            t = t.real
        t = t.astype(ref_dtype)
    return t


class _TangentNodes(threading.local):
    """The nodes of this thread's active dual level that keep their outputs' tangents.

    A node keeps them (``out_tangents``) so that a create_graph backward inside the level
    carries tangents (forward-over-reverse). With grad mode on, each tangent is itself
    recorded by jvp ops whose inputs include the node's outputs, so node -> tangent ->
    the tangent's node -> an output of the node -> node is a reference cycle: only the
    garbage collector's full collections would free such a graph, and in tf.hessian they
    took 82% of the time. The tangents mean nothing once their level closes, so
    ``release_tangents`` (dual_level's exit) drops them and reference counting frees each
    pass's graph at once. The list holds weak references, so that a graph dropped while
    the level is still open (a long loop inside one level) stays collectable as before."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []      # weakref.ref of each node


_TANGENT_NODES = _TangentNodes()


def release_tangents() -> None:
    """Drop the tangents that the nodes of the closing dual level keep (see _TangentNodes)."""
    nodes = _TANGENT_NODES.nodes
    for ref in nodes:
        node = ref()
        if node is not None:
            node.out_tangents = None
    nodes.clear()


def _forward(op: "Op", ctx: Any, inputs: "tuple[Tensor, ...]",
             outs: tuple[NDArray[Any], ...], results: "tuple[Tensor, ...]",
             node: Any) -> None:
    """Forward mode: output tangents from the input tangents of the active level."""
    level = STATE.fw_level
    ts: "list[Tensor | None] | None" = None
    graph = False
    i = 0
    for x in inputs:
        fw = x._fw
        if fw is not None and fw[0] == level:
            if ts is None:
                ts = [None] * len(inputs)
            t_in = fw[1]
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
        if graph:
            # Tensors without tangents: the rule's own ops record reverse-mode graph
            # (reverse-over-forward) but do not recurse into forward mode.
            xs = tuple([_Tensor._wrap(x._data, x._node, x._index) for x in inputs])
            ys = tuple([_Tensor._wrap(r._data, r._node, r._index) for r in results])
            out_ts = op.jvp(ctx, tuple(ts), xs, ys)
        else:
            # (list comprehensions, not generators: this path is forward mode's per-op
            # cost, e.g. tf.hvp's and tf.jvp's)
            out_ts = op.jvp(ctx, tuple([None if t is None else t._data for t in ts]),
                            tuple([x._data for x in inputs]), outs)
    finally:
        STATE.fw_level = level
    tangents: "list[Tensor | None]" = []
    nondiff = op.nondiff
    for i, (r, t) in enumerate(zip(results, out_ts)):
        if t is None or (nondiff and i in nondiff):
            tangents.append(None)
            continue
        if not isinstance(t, _Tensor):
            t = _Tensor._wrap(t if type(t) is np.ndarray else np.asarray(t))
        if t._data.dtype != r._data.dtype:
            t = _cast_like(t, r._data.dtype)
        r._fw = (level, t)
        tangents.append(t)
    if node is not None:
        node.out_tangents = tuple(tangents)
        _TANGENT_NODES.nodes.append(weakref.ref(node))
