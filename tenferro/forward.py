"""Forward mode: dual levels, jvp, and Hessian-vector products (forward-over-reverse).

Inside ``dual_level()``, a tensor made by ``make_dual(p, t)`` carries the tangent ``t``;
every op applied to it computes its output tangents with its JVP rule as it runs. The
rules are written in differentiable ops, so a tangent can itself be differentiated in
reverse mode, and a reverse pass run with ``create_graph=True`` inside a dual level
carries tangents too: that is how :func:`hvp` gets H·v.
"""
from __future__ import annotations

import contextlib
import itertools
from typing import Any, Callable, Iterator, NamedTuple, Sequence, overload

import numpy as np
from numpy.typing import ArrayLike

from ._engine import release_tangents
from ._errors import DTypeError, ShapeError, TenferroError, UnsupportedADError
from ._state import STATE
from ._tensor import Tensor, as_tensor, _to_array
from .autograd import enable_grad, grad

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "jvp", "hvp"]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and its tangent (or None)."""
    primal: Tensor
    tangent: Tensor | None


_levels = itertools.count(1)


@contextlib.contextmanager
def dual_level() -> Iterator[None]:
    """Scope in which ``make_dual`` tangents exist. Levels do not nest."""
    if STATE.fw_level:
        raise UnsupportedADError(
            "dual levels do not nest: leave the active tf.forward_ad.dual_level() first "
            "(tf.jvp and tf.hvp open their own)")
    STATE.fw_level = next(_levels)
    try:
        yield
    finally:
        STATE.fw_level = 0
        release_tangents()      # breaks the node -> tangent cycles of the level's graphs


def make_dual(primal: ArrayLike, tangent: ArrayLike) -> Tensor:
    """A tensor with the value of ``primal`` carrying ``tangent`` at the active level.

    It shares ``primal``'s place in the reverse-mode graph, so gradients still flow to it.
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
    d._fw = (level, t)
    return d


def unpack_dual(tensor: Tensor) -> UnpackedDualTensor:
    """``(primal, tangent)``; the tangent is None when the tensor carries none."""
    # (_rule_api.primal_of and tangent_of, inline: tf.jvp's per-call cost)
    fw = tensor._fw
    primal = Tensor._wrap(tensor._data, tensor._node, tensor._index)
    if fw is not None and fw[0] == STATE.fw_level and STATE.fw_level:
        return UnpackedDualTensor(primal, fw[1])
    return UnpackedDualTensor(primal, None)


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


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

    ``primals``/``tangents`` are matching sequences (or single values). The outputs keep
    ``f``'s structure (one Tensor or a tuple); a zero tangent comes back as zeros.
    """
    ps, ts = _as_tuple(primals), _as_tuple(tangents)
    if len(ps) != len(ts):
        raise ShapeError(f"jvp got {len(ps)} primals but {len(ts)} tangents")
    with dual_level():
        duals = [make_dual(as_tensor(p), t) for p, t in zip(ps, ts)]
        out = f(*duals)
        outs = _as_tuple(out)
        pairs = [unpack_dual(o) for o in outs]
    prim = [p.detach() for p, _ in pairs]
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
    """``(value, gradients, hvps)`` of a scalar ``f``: forward-over-reverse H·v.

    For real f this is the Hessian applied to v; gradients follow the complex convention
    of docs/design.md#complex-numbers, and so do the hvps (the JVP of the gradient map).
    """
    ps, ts = _as_tuple(primals), _as_tuple(tangents)
    if len(ps) != len(ts):
        raise ShapeError(f"hvp got {len(ps)} primals but {len(ts)} tangents")
    with dual_level(), enable_grad():
        xs = [as_tensor(p).detach().set_requires_grad(True) for p in ps]
        duals = [make_dual(x, t) for x, t in zip(xs, ts)]
        val = f(*duals)
        gs: list[Any] = grad([val], duals, create_graph=True)
        gs = [_zeros_like(x) if g is None else g for x, g in zip(xs, gs)]
        hv = [unpack_dual(g).tangent for g in gs]
    hv = [_zeros_like(x) if h is None else h.detach() for x, h in zip(xs, hv)]
    gs = [g.detach() for g in gs]
    value = unpack_dual(val).primal.detach() if isinstance(val, Tensor) else val
    if isinstance(primals, (tuple, list)):
        return value, tuple(gs), tuple(hv)
    return value, gs[0], hv[0]
