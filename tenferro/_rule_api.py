"""The API for rule authors: what an op's rule, or a transform, may ask of the engine.

The ops (``_ops/``, ``linalg/``, ``special``, ``stats``, ``fft``) and the transforms
(``custom``, ``functional``) ask about a tensor's place in the graph and run nested passes
through these names only; a Tensor's graph slots (``_node``, ``_index``, ``_fw``) and the
thread state (``_state.STATE``) are read by the core and the AD API alone
(tests/test_layers.py checks it). Each name has one meaning, and where two call sites
mean different things they use two names:

Is this tensor tracked?

* :func:`is_tracked` — an op applied to it now must propagate a derivative: it is in the
  reverse graph while grad mode is on, or it carries a tangent of the active dual level.
* :func:`tracked_in_reverse` — only the first half: an op on it now records a node.
* :func:`has_tangent` — only the second half.
* :func:`nested_level_active` — the active dual level is nested in another (jvp of jvp):
  a forward rule must then give every output a tangent (none may be skipped).
* :func:`wants_derivative` — :func:`is_tracked`, except that while a dual level is active
  a tangent of *any* level counts (the conservative test of svdvals/eigvalsh/eigvals,
  which then compute the vectors a derivative needs).
* :func:`has_node_or_tangent` — it has a graph node (requires grad, or computed from a
  tensor that does) or a tangent of any level, whatever the grad mode and the level:
  "does this value belong to some derivative computation", e.g. the test for taking a
  differentiable copy instead of an alias.

Tangents and copies: :func:`tangent_of`, :func:`primal_of`, :func:`set_tangent`,
:func:`share_tangent`, :func:`detached`.

Nested passes inside a rule:

* :func:`nested_vjp` — the pullback of a function at given values by a nested reverse
  pass on fresh leaves.
* :func:`record_one_node` / :func:`record_pullback` — a pullback on Tensors
  (create_graph) recorded as ONE node, whose derivatives are those of the formula it
  stands for, computed only when asked for.
* :class:`Cut` — proxies of a rule's inputs for a nested reverse pass that must not walk
  into the caller's graph, linked back to it afterwards (two ways, see ``graft`` and
  ``graft_relay``).
* :func:`reverse_pass` — the engine's walk with raw cotangents (no copies), for loops
  that run many passes over one graph.
* :func:`outside_dual_level` — plain values for a solver run inside a forward-mode rule.

Degenerate spectra: :func:`note_degenerate_limit` (a spectral rule met a degenerate
block), :func:`watch_degenerate` / :func:`watching_degenerate` (did one, in a block of
code).

This module sits in the AD API layer (it runs reverse passes through
``autograd.grad``); the tracking tests themselves live in the core (``_engine``), where
the Tensor uses them too, and are re-exported here.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Container, Iterator, Sequence

import numpy as np

from ._engine import (active_levels, apply, has_tangent, is_tracked, nested_level_active,
                      restrict_chain, tangent_of, tracked_in_reverse)
from ._ops.registry import Op, defop
from ._state import STATE
from ._tensor import Tensor
from .autograd import _run, enable_grad, grad

__all__ = ["is_tracked", "tracked_in_reverse", "has_tangent", "nested_level_active",
           "wants_derivative",
           "has_node_or_tangent", "tangent_of", "primal_of", "set_tangent", "share_tangent",
           "detached", "nested_vjp", "record_one_node", "record_pullback", "Cut",
           "reverse_pass", "outside_dual_level", "RECORD_ONE_NODE", "note_degenerate_limit",
           "watch_degenerate", "watching_degenerate"]


# ---- is this tensor tracked? (is_tracked, tracked_in_reverse, has_tangent: _engine) -------

def wants_derivative(t: Tensor) -> bool:
    """:func:`is_tracked`, but while a dual level is active a tangent of any level counts
    (so it is True for every tensor that is_tracked is True for). Used where computing
    more than needed is harmless and computing less would be wrong."""
    return bool((STATE.grad_enabled and t._node is not None)
                or (STATE.fw_level and t._fw is not None))


def has_node_or_tangent(t: Tensor) -> bool:
    """Whether ``t`` has a graph node or a forward tangent (of any level), whatever the
    grad mode and the active level."""
    return t._node is not None or t._fw is not None


# ---- tangents and copies ----------------------------------------------------------------

def primal_of(t: Tensor) -> Tensor:
    """A new Tensor with ``t``'s value and place in the reverse graph, without a tangent."""
    return Tensor._wrap(t._data, t._node, t._index)


def set_tangent(t: Tensor, tangent: Tensor) -> None:
    """Give ``t`` the forward tangent ``tangent`` at the active dual level (in place: call
    it on a Tensor the rule made itself). Inside nested levels ``t`` keeps its tangents of
    the enclosing levels."""
    level = STATE.fw_level
    fw = t._fw
    if fw is None or level > 0:
        t._fw = (level, tangent)
    else:
        rest = restrict_chain(fw, active_levels(level)[1:])
        t._fw = (level, tangent) if rest is None else (level, tangent, rest)


def share_tangent(dst: Tensor, src: Tensor) -> None:
    """Give ``dst`` (a Tensor the caller made) ``src``'s forward tangent as it is (its
    level and value; none if ``src`` has none)."""
    dst._fw = src._fw


def detached(x: Any) -> Tensor:
    """``x`` (a Tensor or array-like) as a new Tensor with its payload, cut from the
    reverse graph and from forward mode."""
    return Tensor._wrap(x._data if isinstance(x, Tensor) else np.asarray(x))


@contextlib.contextmanager
def outside_dual_level() -> Iterator[None]:
    """No dual level is active inside the block (restored on exit): ops record no
    tangents, and the block may open a dual level of its own."""
    saved = STATE.fw_level
    STATE.fw_level = 0
    try:
        yield
    finally:
        STATE.fw_level = saved


# ---- nested passes -------------------------------------------------------------------------

def reverse_pass(outputs: Sequence[Tensor], seeds: Sequence[Any], inputs: Sequence[Tensor],
                 *, retain_graph: bool, create_graph: bool) -> list[Any] | None:
    """The engine's walk from ``outputs`` (seeded with ``seeds``, checked like grad's
    grad_outputs) to ``inputs``, without grad()'s argument handling and copies: one raw
    cotangent per input that has a graph node (ndarrays that may be views of a seed or of
    each other: copy one before changing a seed; Tensors with ``create_graph``), None
    where one is unreachable; None when no output has a node."""
    return _run(list(outputs), list(seeds), [(x._node, x._index) for x in inputs
                                             if x._node is not None],
                retain_graph, create_graph)


def nested_vjp(formula: Callable[..., Any], xs: Sequence[Any], gs: Sequence[Any],
               wanted: Sequence[int], create_graph: bool) -> tuple[Any, ...]:
    """The pullback of ``formula`` (Tensors in, a tuple of Tensors out) at ``xs`` for the
    output cotangents ``gs`` (None: zero), for the inputs listed in ``wanted``, by a
    nested reverse pass with grad mode on: ndarrays (``create_graph=False``: ``xs`` are
    ndarrays, run on fresh leaves) or Tensors whose graph holds only what ``formula``
    records (``create_graph=True``: ``xs`` are the caller's Tensors). A cotangent that
    does not reach an input is returned as zeros."""
    with enable_grad():
        if create_graph:
            leaves = tuple(xs)
        else:
            leaves = tuple(Tensor._wrap(x).set_requires_grad() for x in xs)
        outs = formula(*leaves)
        roots, seeds = [], []
        for o, g in zip(outs, gs):
            if g is not None and isinstance(o, Tensor) and o.requires_grad:
                roots.append(o)
                seeds.append(g)
        targets = [leaves[i] for i in wanted]
        res = grad(roots, targets, seeds, create_graph=create_graph) if roots else \
            [None] * len(targets)
    cots = []
    for t, r in zip(targets, res):
        if r is None:
            r = Tensor._wrap(np.zeros(t.shape, t.dtype))
        cots.append(r if create_graph else r._data)
    return tuple(cots)


# A pullback written in Tensor ops records every small op of its formula under
# create_graph=True (46 for svd's): the pass then costs 3-5x the plain one, which runs one
# compiled kernel. record_one_node records such a pullback as ONE node of the op
# "lazy_rule" instead: its primal is the fast ndarray pullback, and only when a higher
# derivative is asked for does its own pullback run the formula on Tensors — on fresh
# leaves, a graph disjoint from the caller's — and differentiate it
# (torch.autograd.Function's double-backward pattern). Asked on Tensors (a third order)
# that pullback is itself recorded as one lazy_rule node, so every order is exact and
# records one node per rule. svd, eigh and qr use it (through record_pullback).

def _any_tangent(values: Sequence[Any]) -> bool:
    """Whether one of ``values`` is a Tensor with a tangent of the active dual level."""
    if not STATE.fw_level:
        return False
    for v in values:
        if isinstance(v, Tensor) and has_tangent(v):
            return True
    return False


def _lazy_rule_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    formula = ctx
    wanted = [i for i, nd in enumerate(needs) if nd]
    tensors = type(xs[0]) is not np.ndarray or any(isinstance(g, Tensor) for g in gs)
    if not tensors:
        cots = nested_vjp(formula, xs, gs, wanted, False)
    else:
        gs = tuple(g if g is None or isinstance(g, Tensor) else Tensor._wrap(g) for g in gs)
        if _any_tangent(xs):
            # record_pullback records a lazy_rule only where no input has a tangent
            raise RuntimeError("internal error: a lazy_rule node with forward tangents on "
                               "its inputs; please report")
        n = len(xs)
        present = [i for i, g in enumerate(gs) if g is not None]

        def split(vals: Any) -> Any:
            g = [None] * len(gs)
            for j, i in enumerate(present):
                g[i] = vals[n + j]
            return vals[:n], g

        def fast(*arrays: Any) -> Any:
            x, g = split(arrays)
            return nested_vjp(formula, x, g, wanted, False)

        def formula_of_vjp(*tensors_: Any) -> Any:
            x, g = split(tensors_)
            return nested_vjp(formula, x, g, wanted, True)

        dots = None
        if _any_tangent(gs):
            # cotangents with forward tangents (forward-over-reverse through a graph
            # recorded before the dual level): the pullback is linear in them and xs carry
            # none, so the tangent of the result is the pullback of the tangents
            dots = [None if g is None else tangent_of(g) for g in gs]
            gs = tuple(None if g is None else primal_of(g) for g in gs)
        cots = record_one_node(fast, formula_of_vjp, tuple(xs) + tuple(gs[i] for i in present))
        if dots is not None:
            live = [i for i in present if dots[i] is not None]
            if live:
                tangent = _lazy_rule_vjp(formula, needs, tuple(dots), xs, ys)
                for j, i in enumerate(wanted):
                    if tangent[i] is not None:
                        set_tangent(cots[j], tangent[i])
    out = [None] * len(needs)
    for j, i in enumerate(wanted):
        out[i] = cots[j]
    return tuple(out)


def _lazy_rule_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # lazy_rule records only where no input carries a tangent (record_pullback), so
    # forward mode never reaches it
    raise RuntimeError("internal error: forward mode reached a lazy_rule node; please report")


_lazy_rule_op = defop("lazy_rule", _lazy_rule_vjp, _lazy_rule_jvp,
                      doc="a pullback recorded as one node: fast primal, formula derivatives")


def record_one_node(fast: Callable[..., Any], formula: Callable[..., Any],
                    inputs: Sequence[Tensor]) -> Any:
    """Record ``formula(*inputs)`` (Tensors) as one node whose value is ``fast`` on their
    ndarrays (both return a tuple; ``fast`` ndarrays, the same values): the derivatives are
    those of ``formula``, computed only when asked for."""
    outs = fast(*[x._data for x in inputs])
    return apply(_lazy_rule_op, inputs, tuple(outs), formula)


# False: every create_graph pullback records its formula's ops (the former behaviour; for
# A/B benchmarks, scripts/bench_create_graph.py --compare)
RECORD_ONE_NODE = True


def record_pullback(fast: Callable[..., Any], formula: Callable[..., Any],
                    values: Sequence[Any]) -> Any:
    """A pullback's result on Tensors (create_graph): one lazy_rule node of the present
    ``values`` (None: a zero cotangent or absent input), or ``formula(*values)`` directly
    when forward tangents are active on them (forward-over-reverse needs its ops).
    ``fast`` and ``formula`` take the full tuple (None included) and return a tuple."""
    if not RECORD_ONE_NODE or _any_tangent(values):
        return formula(*values)
    present = [i for i, v in enumerate(values) if v is not None]
    n = len(values)

    def full(vals: Any) -> Any:
        out = [None] * n
        for j, i in enumerate(present):
            out[i] = vals[j]
        return out

    ins = tuple(values[i] if isinstance(values[i], Tensor) else Tensor._wrap(values[i])
                for i in present)
    return record_one_node(lambda *a: fast(*full(a)), lambda *t: formula(*full(t)), ins)


def _relay_vjp(ctx: None, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
               ys: Sequence[Any]) -> tuple[Any]:
    return (gs[0],)


def _relay_jvp(ctx: None, ts: Sequence[Any], xs: Sequence[Any],
               ys: Sequence[Any]) -> tuple[Any]:
    return (ts[0],)


# Not registered (it is not an op users apply): the rule of a proxy's leaf node once
# Cut.graft_relay has turned it into a pass-through to the value it stood for.
_RELAY_OP = Op("checkpoint.relay", _relay_vjp, _relay_jvp)


class Cut:
    """Proxies of a rule's input ``values`` (Tensors, or ndarrays in a plain pass) for a
    nested reverse pass run inside the rule.

    A nested pass must not walk into the graph of the pass that called the rule (its nodes
    are mid-traversal), so it runs on ``proxies``: new Tensors holding the payloads. With
    ``graph`` true, a value with a graph node or a tangent (:func:`has_node_or_tangent`)
    gets a proxy that is a fresh leaf requiring grad carrying the same tangent, so that
    everything computed from it is recorded; ``track`` lists further indices whose proxies
    must be leaves (the variables of the nested pass; floating-point values only). Once
    the nested pass is done, one of the two grafts links the proxies to the caller's graph,
    so that what was recorded depends on the real values:

    * :meth:`graft` re-points each proxy Tensor at its value's node and tangent (the
      nodes recorded from a proxy read the value's node from then on);
    * :meth:`graft_relay` turns each proxy's leaf *node* into a pass-through node whose
      input is the real value: also right when a nested rule (a checkpoint inside a
      checkpoint, a custom rule) recorded references to the proxy's node itself.
    """

    def __init__(self, values: Sequence[Any], graph: bool, track: Container[int] = ()) -> None:
        self.values = values
        self.proxies: list[Tensor] = []
        for k, v in enumerate(values):
            p = detached(v)
            outer = graph and isinstance(v, Tensor) and has_node_or_tangent(v)
            if (outer or k in track) and p.dtype.kind in "fc":
                p.set_requires_grad(True)
                if outer:
                    p._fw = v._fw
            self.proxies.append(p)

    def graft(self) -> None:
        """Re-point every proxy at its value's graph node and tangent (a proxy of an
        ndarray value loses its node)."""
        for v, p in zip(self.values, self.proxies):
            if isinstance(v, Tensor):
                p._node, p._index, p._fw = v._node, v._index, v._fw
            else:
                p._node, p._index, p._fw = None, 0, None

    def graft_relay(self) -> None:
        """Turn every proxy's leaf node into a pass-through node to its value (the values
        are Tensors)."""
        for v, p in zip(self.values, self.proxies):
            node = p._node
            if node is None:
                continue
            node.op, node.ctx, node.leaf = _RELAY_OP, None, None
            node.inputs, node.out_data = (Tensor._wrap(v._data, v._node, v._index),), (v._data,)


# ---- degenerate spectra -----------------------------------------------------------------

# [watchers, blocks met]: watchers > 0 while some tf.hessian runs reverse-over-reverse
_degenerate = [0, 0]


def note_degenerate_limit() -> None:
    """Called by the spectral rules (svd, eigh, eig and their relatives) each time they
    meet a block of equal values and give its within-block terms their exact limit
    (docs/degenerate_derivatives.md). That limit is exact for first derivatives and for
    forward-over-reverse second derivatives in every direction, but reverse-over-reverse
    gives 0 within a block along directions that split it: tf.hessian, which prefers
    reverse-over-reverse, runs it under :func:`watch_degenerate` and recomputes by
    forward-over-reverse when a block was met. A plain count, not per thread: another
    thread's blocks can only make that check conservative."""
    _degenerate[1] += 1


def watching_degenerate() -> bool:
    """Whether a :func:`watch_degenerate` is active: the compiled pullbacks, which find
    the blocks inside the kernel, then look for them in Python too (a cost paid only
    there)."""
    return _degenerate[0] > 0


@contextlib.contextmanager
def watch_degenerate() -> Iterator[Callable[[], bool]]:
    """``with watch_degenerate() as met:`` ... ``met()`` is True when a spectral rule met
    a degenerate block inside the block (see :func:`note_degenerate_limit`)."""
    start = _degenerate[1]
    _degenerate[0] += 1
    try:
        yield lambda: _degenerate[1] != start
    finally:
        _degenerate[0] -= 1
