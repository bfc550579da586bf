"""Recording op applications on the graph and propagating forward tangents.

``apply``/``apply1`` are the one entry every op goes through after computing its primal
with NumPy: they attach a graph node when grad mode is on and an input requires grad,
and compute output tangents when a forward-AD dual level is active.
"""
import os

import numpy as np

from ._errors import GraphFreedError, InPlaceError
from ._kernels import _reference
from ._sparse import SparseCotangent
from ._state import STATE

if os.environ.get("TENFERRO_PURE_PYTHON"):
    from ._kernels._reference import (Node, backward_plain, new_version, grad_plain, owned,
                                          run_backward, set_inplace_error, set_sparse_type)
else:
    try:
        from ._kernels.tape import (Node, backward_plain, new_version, grad_plain, owned,
                                    run_backward, set_inplace_error, set_sparse_type)
    except ImportError as e:  # pragma: no cover - a source tree without a build
        raise ImportError(
            "tenferro's compiled tape is missing: install the package (pip install .) and run "
            "from outside the source tree, or set TENFERRO_PURE_PYTHON=1 for the Python twin"
        ) from e

__all__ = ["Node", "apply", "apply1", "run_backward", "grad_plain", "backward_plain", "owned",
           "graph_rule", "new_version", "GraphFreedError"]

set_inplace_error(InPlaceError)
set_sparse_type(SparseCotangent)
_reference.set_sparse_type(SparseCotangent)   # the twin too (tests swap it in per test)

_Tensor = None  # set by _tensor.py (avoids an import cycle)


def _bind(tensor_cls):
    global _Tensor
    _Tensor = tensor_cls


def apply1(op, inputs, out, ctx=None):
    """Wrap the single output array ``out`` of ``op(*inputs)`` as a Tensor."""
    if type(out) is not np.ndarray:   # NumPy returns scalars for 0-d results
        out = np.asarray(out)
    node = None
    if STATE.grad_enabled:
        for x in inputs:
            if x._node is not None:
                node = Node(op, ctx, inputs, (out,))
                break
    t = _Tensor._wrap(out, node, 0)
    if STATE.fw_level:
        _forward(op, ctx, inputs, (out,), (t,), node)
    return t


def apply(op, inputs, outs, ctx=None):
    """Wrap the output arrays ``outs`` (a tuple) of ``op(*inputs)`` as Tensors."""
    # plain loops: generator expressions cost ~1 µs here, as much as a small op's pullback
    if type(outs) is not tuple:
        outs = tuple(outs)
    for o in outs:
        if type(o) is not np.ndarray:   # NumPy returns scalars for 0-d results
            outs = tuple([o if type(o) is np.ndarray else np.asarray(o) for o in outs])
            break
    node = None
    if STATE.grad_enabled:
        for x in inputs:
            if x._node is not None:
                node = Node(op, ctx, inputs, outs)
                break
    nondiff = op.nondiff
    wrap = _Tensor._wrap
    res = []
    i = 0
    for d in outs:
        res.append(wrap(d, None if i in nondiff else node, i))
        i += 1
    res = tuple(res)
    if STATE.fw_level:
        _forward(op, ctx, inputs, outs, res, node)
    return res


def _cast_like(t, ref_dtype):
    """Give a tangent/cotangent the dtype of its primal (real part for a real primal)."""
    if t.dtype != ref_dtype:
        if t.dtype.kind == "c" and ref_dtype.kind != "c":
            t = t.real
        t = t.astype(ref_dtype)
    return t


def _forward(op, ctx, inputs, outs, results, node):
    """Forward mode: output tangents from the input tangents of the active level."""
    level = STATE.fw_level
    ts = []
    any_t = False
    graph = False
    for x in inputs:
        fw = x._fw
        if fw is not None and fw[0] == level:
            ts.append(fw[1])
            any_t = True
            graph = graph or fw[1]._node is not None
        else:
            ts.append(None)
    if not any_t:
        return
    if op.jvp is None:
        from ._errors import UnsupportedADError
        raise UnsupportedADError(f"{op.name} has no forward-mode rule")
    graph = STATE.grad_enabled and (graph or node is not None)
    STATE.fw_level = 0
    try:
        if graph:
            # Tensors without tangents: the rule's own ops record reverse-mode graph
            # (reverse-over-forward) but do not recurse into forward mode.
            xs = tuple(_Tensor._wrap(x._data, x._node, x._index) for x in inputs)
            ys = tuple(_Tensor._wrap(r._data, r._node, r._index) for r in results)
            out_ts = op.jvp(ctx, tuple(ts), xs, ys)
        else:
            out_ts = op.jvp(ctx, tuple(None if t is None else t._data for t in ts),
                            tuple(x._data for x in inputs), outs)
    finally:
        STATE.fw_level = level
    tangents = []
    for i, (r, t) in enumerate(zip(results, out_ts)):
        if t is None or i in op.nondiff:
            tangents.append(None)
            continue
        if not isinstance(t, _Tensor):
            t = _Tensor._wrap(np.asarray(t))
        t = _cast_like(t, r._data.dtype)
        r._fw = (level, t)
        tangents.append(t)
    if node is not None:
        node.out_tangents = tuple(tangents)


def graph_rule(node, gs, needs):
    """Run a pullback on Tensors so that its own ops are recorded (create_graph=True)."""
    # plain loops and one-output fast paths: this runs once per node of every
    # create_graph pass, and generator expressions cost ~1 µs each here
    T = _Tensor
    wrap = T._wrap
    op = node.op
    xs = node.inputs
    tangents = node.out_tangents
    nondiff = op.nondiff
    out_data = node.out_data
    if len(out_data) == 1 and tangents is None:
        ys = (wrap(out_data[0], None if 0 in nondiff else node, 0),)
    else:
        ys = []
        i = 0
        for d in out_data:
            y = wrap(d, None if i in nondiff else node, i)
            if tangents is not None and tangents[i] is not None:
                y._fw = (STATE.fw_level, tangents[i])
            ys.append(y)
            i += 1
        ys = tuple(ys)
    for g in gs:
        if g is not None and not isinstance(g, T):
            gs = tuple([g if (g is None or isinstance(g, T)) else wrap(g) for g in gs])
            break
    cots = op.vjp(node.ctx, needs, gs, xs, ys)
    out = []
    i = 0
    for c in cots:
        if c is None or not needs[i]:
            out.append(None)
            i += 1
            continue
        x = xs[i]._data
        if type(c) is SparseCotangent:   # densified by the tape, cast to x's dtype then
            if c.shape != x.shape:
                raise RuntimeError(
                    f"internal error: the pullback of {op.name!r} returned a sparse "
                    f"cotangent of shape {c.shape} for input {i} of shape {x.shape}; "
                    "please report this")
            out.append(c)
            i += 1
            continue
        if not isinstance(c, T):
            c = wrap(np.asarray(c))
        d = c._data
        if d.dtype != x.dtype:
            c = _cast_like(c, x.dtype)
        if d.shape != x.shape:
            raise RuntimeError(
                f"internal error: the pullback of {op.name!r} returned a cotangent of "
                f"shape {d.shape} for input {i} of shape {x.shape}; please report this")
        out.append(c)
        i += 1
    return tuple(out)
