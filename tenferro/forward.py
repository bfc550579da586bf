"""Forward mode: dual levels, jvp, and Hessian-vector products (forward-over-reverse).

Inside ``dual_level()``, a tensor made by ``make_dual(p, t)`` carries the tangent ``t``;
every op applied to it computes its output tangents with its JVP rule as it runs. The
rules are written in differentiable ops, so a tangent can itself be differentiated in
reverse mode, and a reverse pass run with ``create_graph=True`` inside a dual level
carries tangents too: that is how :func:`hvp` gets H·v.

Nested levels (jvp of jvp, forward-over-forward) follow JAX's model. At level L a tensor
is a dual number whose primal and tangent are dual numbers of the levels enclosing L:

* **Levels are tags.** Every ``dual_level()`` gets a fresh id (never reused). One opened
  while another is active is nested: it gets a negative id and its enclosing level is
  recorded (``_engine.nest_level``), so the thread's active level names the whole stack, and
  an op sees from the sign alone whether it runs inside one level (the path as fast as
  before nesting: the rule on ndarrays) or inside nested ones.
* **One tangent per level.** A tensor's tangents form a chain ``(level, tangent, rest)``,
  innermost level first; a tangent of level L is a Tensor whose own chain holds only
  levels enclosing L (its tangents there are the mixed derivatives).
* **An op inside nested levels** computes its primal once, then the levels from the
  outermost in: the output's tangent of level L is the op's JVP rule run on Tensors with
  only the levels enclosing L active, on the inputs and outputs carrying their tangents
  of those levels (the outputs' were computed first) and L's input tangents carrying
  theirs. The rule's own ops give the new tangent its tangents of the enclosing levels.
  The outermost level's rule runs with no level active, as in a single level. k levels
  cost about 2^k rule evaluations per op, as in JAX.
* **No perturbation confusion.** An op reads a tangent only by its level's id; a rule
  for level L runs with L and the levels inside it inactive, so what it computes carries
  no tangent of those; a tangent keeps only its tangents of the enclosing levels
  (``make_dual`` drops one of its own level). So d/dx [x · d/dy (x + y)] is 1, not 2.
* **Leaving a level.** ``jvp``, ``hvp`` and ``unpack_dual`` hand back primals and
  tangents that are still dual numbers of the enclosing levels. The graph nodes that keep
  their outputs' tangents for forward-over-reverse keep those of the enclosing levels
  and are released when the enclosing level closes; a closed level's tangents are never
  read again (its id does not come back).
* **Rules that cannot nest.** An op whose rule is not written in differentiable ops
  (``Op.second_order`` False) raises UnsupportedADError naming it when a tangent of an
  enclosing level reaches it; a rule that skips some outputs' tangents (svdvals' vectors)
  does not skip them while a nested level is active (``_rule_api.nested_level_active``).

docs/design.md#forward-mode says the same for the whole engine.
"""
from __future__ import annotations

import contextlib
import itertools
from typing import Any, Callable, Iterator, NamedTuple, Sequence, overload

import numpy as np
from numpy.typing import ArrayLike

from ._engine import (CAPTURE, active_levels, enter_level, find_tangent, make_chain,
                      nest_level, release_tangents, restrict_chain, unnest_level, with_chain)
from ._errors import DTypeError, ShapeError, TenferroError, UnsupportedADError
from ._state import STATE
from ._tensor import Tensor, as_tensor, _to_array
from .autograd import enable_grad, grad

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "jvp", "hvp"]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and its tangent (or None).

    Attributes
    ----------
    primal : Tensor
        The value (a dual tensor of the enclosing levels, inside nested levels).
    tangent : Tensor or None
        Its tangent at the active level, or None when it carries none.
    """
    primal: Tensor
    tangent: Tensor | None


_levels = itertools.count(1)


@contextlib.contextmanager
def dual_level() -> Iterator[None]:
    """Scope in which ``make_dual`` tangents exist.

    Levels nest: inside another level this opens an inner one (jvp of jvp,
    forward-over-forward; see the module docstring). Tangents of the level are dropped on
    exit.

    Yields
    ------
    None

    Examples
    --------
    >>> from tenferro.forward import dual_level, make_dual, unpack_dual
    >>> with dual_level():
    ...     d = make_dual(tf.tensor([1.0, 2.0]), tf.tensor([1.0, 0.0]))
    ...     print(unpack_dual(d * d).tangent)
    tensor([2., 0.])
    """
    if CAPTURE.recorder is not None:
        # inside a tf.compile recording: tangents are not replayed (the function then
        # runs eagerly, where forward mode is exact)
        CAPTURE.recorder.escapes.append("forward mode (tf.jvp, dual_level) inside f")
    outer = STATE.fw_level
    level = next(_levels)
    if outer:
        level = -level          # a nested level: a negative id, linked to its enclosing one
        nest_level(level, outer)
    pushed = enter_level(bool(outer))
    STATE.fw_level = level
    try:
        yield
    finally:
        STATE.fw_level = outer
        # breaks the node -> tangent cycles of the level's graphs; a nested level's nodes
        # keep their tangents of the enclosing levels
        release_tangents(active_levels(outer), pushed)
        if outer:
            unnest_level(level)


def make_dual(primal: ArrayLike, tangent: ArrayLike) -> Tensor:
    """A tensor with the value of ``primal`` carrying ``tangent`` at the active level.

    It shares ``primal``'s place in the reverse-mode graph, so gradients still flow to it, and
    inside nested levels its tangents of the enclosing levels (the tangent keeps its own: a
    tangent may itself be a dual tensor of an enclosing level).

    Parameters
    ----------
    primal : array_like
        The value.
    tangent : array_like
        The tangent, ``primal``'s shape; real for a real primal.

    Returns
    -------
    Tensor
        The dual tensor; ops on it propagate the tangent (JVP rules, docs/rules.md).

    Raises
    ------
    TenferroError
        If no :func:`dual_level` is active.
    ShapeError
        If the shapes differ.
    DTypeError
        If the tangent is complex and the primal real.

    Examples
    --------
    >>> from tenferro.forward import dual_level, make_dual, unpack_dual
    >>> with dual_level():
    ...     y = tf.sin(make_dual(tf.tensor(0.0), tf.tensor(1.0)))
    ...     unpack_dual(y).tangent
    tensor(1.)
    """
    level = STATE.fw_level
    if not level:
        raise TenferroError("make_dual needs an active level: use it inside "
                            "`with tf.forward_ad.dual_level():`")
    p = primal if isinstance(primal, Tensor) else as_tensor(primal)
    t = tangent if isinstance(tangent, Tensor) else Tensor._wrap(_to_array(tangent))
    if t.shape != p.shape:
        raise ShapeError(f"tangent has shape {t.shape} but its primal has shape {p.shape}; "
                         "a tangent must have its primal's shape")
    if t.dtype.kind == "c" and p.dtype.kind != "c":
        raise DTypeError(f"tangent is complex ({t.dtype}) but its primal is real "
                         f"({p.dtype}); pass a real tangent")
    if t.dtype != p.dtype:
        t = t.astype(p.dtype)
    # (_rule_api.primal_of and set_tangent, inline: tf.jvp's per-call cost)
    d = Tensor._wrap(p._data, p._node, p._index)
    if level > 0:
        d._fw = (level, t)
        return d
    # nested: p's tangents of the enclosing levels stay; the tangent carries only those
    # of the levels enclosing this one (never one of its own level: no confusion)
    enclosing = active_levels(level)[1:]
    if t._fw is not None:
        t = with_chain(t, restrict_chain(t._fw, enclosing))
    rest = restrict_chain(p._fw, enclosing)
    d._fw = (level, t) if rest is None else (level, t, rest)
    return d


def unpack_dual(tensor: Tensor) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a tensor at the active level.

    The tangent is None when the tensor carries none at the active level. Inside nested
    levels the primal keeps its tangents of the enclosing levels (it is a dual tensor of
    those) and the tangent its own.

    Parameters
    ----------
    tensor : Tensor
        A tensor (dual or not).

    Returns
    -------
    UnpackedDualTensor
        Named tuple ``(primal, tangent)``.

    Examples
    --------
    >>> from tenferro.forward import dual_level, make_dual, unpack_dual
    >>> with dual_level():
    ...     unpack_dual(make_dual(tf.tensor(1.0), tf.tensor(2.0)))
    UnpackedDualTensor(primal=tensor(1.), tangent=tensor(2.))
    """
    # (_rule_api.primal_of and tangent_of, inline: tf.jvp's per-call cost)
    fw = tensor._fw
    level = STATE.fw_level
    primal = Tensor._wrap(tensor._data, tensor._node, tensor._index)
    if level < 0:
        if fw is not None:
            primal._fw = restrict_chain(fw, active_levels(level)[1:])
        return UnpackedDualTensor(primal, find_tangent(fw, level))
    if fw is not None and level:
        if fw[0] == level:
            return UnpackedDualTensor(primal, fw[1])
        return UnpackedDualTensor(primal, find_tangent(fw, level))
    return UnpackedDualTensor(primal, None)


def _outer_value(t: Tensor, deep: bool = False) -> Tensor:
    """``t`` cut from the reverse graph, keeping its tangents of the active levels (those
    that enclose a level just closed): what jvp and hvp hand back. ``deep``: the tangents
    are cut from the reverse graph too (hvp's, whose graph is its own leaves')."""
    d = Tensor._wrap(t._data)
    if t._fw is not None and STATE.fw_level:
        fw = restrict_chain(t._fw, active_levels(STATE.fw_level))
        if deep:
            pairs = []
            while fw is not None:
                pairs.append((fw[0], _outer_value(fw[1], True)))
                fw = fw[2] if len(fw) > 2 else None
            fw = make_chain(pairs)
        d._fw = fw
    return d


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _leaf_of(p: Tensor) -> Tensor:
    """A fresh leaf requiring grad with ``p``'s value and its tangents of the levels that
    enclose the active one (hvp's variables: nested in a jvp, they stay dual tensors of
    the enclosing levels)."""
    x = p.detach().set_requires_grad(True)
    level = STATE.fw_level
    if level < 0 and p._fw is not None:
        x._fw = restrict_chain(p._fw, active_levels(level)[1:])
    return x


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._wrap(np.zeros_like(t._data))


@overload
def jvp(f: Callable[..., Tensor], primals: ArrayLike | Sequence[ArrayLike],
        tangents: ArrayLike | Sequence[ArrayLike]) -> tuple[Tensor, Tensor]: ...
@overload
def jvp(f: Callable[..., Sequence[Tensor]], primals: ArrayLike | Sequence[ArrayLike],
        tangents: ArrayLike | Sequence[ArrayLike]
        ) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]: ...
def jvp(f: Callable[..., Any], primals: ArrayLike | Sequence[ArrayLike],
        tangents: ArrayLike | Sequence[ArrayLike]) -> tuple[Any, Any]:
    """``(outputs, output_tangents)`` of ``f`` at ``primals`` along ``tangents``.

    Forward mode: one pass computes the Jacobian-vector product :math:`J v`.
    ``primals``/``tangents`` are matching sequences (or single values). The outputs keep
    ``f``'s structure (one Tensor or a tuple); a zero tangent comes back as zeros.

    Parameters
    ----------
    f : callable
        A function of tensors returning a Tensor or a tuple of them.
    primals : array_like or sequence of array_like
        The point.
    tangents : array_like or sequence of array_like
        One tangent per primal, of its shape.

    Returns
    -------
    outputs : Tensor or tuple of Tensor
        ``f(*primals)``.
    output_tangents : Tensor or tuple of Tensor
        :math:`J v`, structured like ``outputs``.

    Raises
    ------
    ShapeError
        If the numbers of primals and tangents differ, or a tangent's shape differs from
        its primal's.

    Examples
    --------
    >>> x = tf.tensor([1.0, 2.0])
    >>> tf.jvp(lambda x: x ** 2, x, tf.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    ps, ts = _as_tuple(primals), _as_tuple(tangents)
    if len(ps) != len(ts):
        raise ShapeError(f"jvp got {len(ps)} primals but {len(ts)} tangents")
    with dual_level():
        duals = [make_dual(as_tensor(p), t) for p, t in zip(ps, ts)]
        out = f(*duals)
        outs = _as_tuple(out)
        pairs = [unpack_dual(o) for o in outs]
    prim = [_outer_value(p) for p, _ in pairs]
    tang = [_zeros_like(p) if t is None else t for p, t in pairs]
    if isinstance(out, Tensor):
        return prim[0], tang[0]
    return tuple(prim), tuple(tang)


@overload
def hvp(f: Callable[..., Tensor], primals: list[ArrayLike] | tuple[ArrayLike, ...],
        tangents: Sequence[ArrayLike]
        ) -> tuple[Tensor, tuple[Tensor, ...], tuple[Tensor, ...]]: ...
@overload
def hvp(f: Callable[..., Tensor], primals: ArrayLike,
        tangents: ArrayLike) -> tuple[Tensor, Tensor, Tensor]: ...
def hvp(f: Callable[..., Tensor], primals: Any, tangents: Any) -> tuple[Tensor, Any, Any]:
    r"""``(value, gradients, hvps)`` of a scalar ``f``: forward-over-reverse :math:`H v`.

    For real f this is the Hessian applied to v; gradients follow the complex convention of
    docs/design.md#complex-numbers, and so do the hvps (the JVP of the gradient map).

    Parameters
    ----------
    f : callable
        A function of tensors returning a one-element Tensor.
    primals : array_like or sequence of array_like
        The point; a sequence gives tuples of gradients and hvps.
    tangents : array_like or sequence of array_like
        The vectors v, one per primal.

    Returns
    -------
    value : Tensor
        ``f(*primals)``.
    gradients : Tensor or tuple of Tensor
        :math:`\nabla f`.
    hvps : Tensor or tuple of Tensor
        :math:`H v`.

    Raises
    ------
    ShapeError
        If the numbers of primals and tangents differ.

    Examples
    --------
    >>> x = tf.tensor([1.0, 2.0])
    >>> tf.hvp(lambda x: (x ** 3).sum(), x, tf.ones(2))
    (tensor(9.), tensor([ 3., 12.]), tensor([ 6., 12.]))
    """
    ps, ts = _as_tuple(primals), _as_tuple(tangents)
    if len(ps) != len(ts):
        raise ShapeError(f"hvp got {len(ps)} primals but {len(ts)} tangents")
    with dual_level(), enable_grad():
        xs = [_leaf_of(as_tensor(p)) for p in ps]
        duals = [make_dual(x, t) for x, t in zip(xs, ts)]
        val = f(*duals)
        gs: list[Any] = grad([val], duals, create_graph=True)
        gs = [_zeros_like(x) if g is None else g for x, g in zip(xs, gs)]
        hv = [unpack_dual(g).tangent for g in gs]
    # (deep: inside an enclosing level the tangents were recorded on hvp's own leaves)
    hv = [_zeros_like(x) if h is None else _outer_value(h, True) for x, h in zip(xs, hv)]
    gs = [_outer_value(g, True) for g in gs]
    value = _outer_value(val, True) if isinstance(val, Tensor) else val
    if isinstance(primals, (tuple, list)):
        return value, tuple(gs), tuple(hv)
    return value, gs[0], hv[0]
