"""The op registry: every differentiable op, its rules, and how Tensor/NumPy reach it.

An :class:`Op` carries the two rules the engine calls:

* ``vjp(ctx, needs, gs, xs, ys) -> cotangents``: one cotangent (or ``None``, a
  structural zero) per input. ``gs`` holds one cotangent per output (``None`` = zero),
  ``xs``/``ys`` the input/output values, ``needs[i]`` says whether input ``i`` wants
  its cotangent (skip the work otherwise).
* ``jvp(ctx, ts, xs, ys) -> tangents``: one tangent (or ``None``) per output from one
  tangent (or ``None``) per input.

Rules are written once with NumPy functions and operators. In a plain backward the
values are ndarrays and the rule is plain NumPy; with ``create_graph=True`` (or inside
forward-over-reverse) the values are Tensors and the same code records differentiable
ops through ``Tensor.__array_ufunc__``/``__array_function__``. That is what makes every
rule twice differentiable.

``python -m tenferro.rules`` prints the table of all registered ops.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, TypeVar


__all__ = ["Op", "OPS", "UFUNCS", "FUNCTIONS", "METHODS", "NONDIFF", "defop", "register",
           "register_nondiff"]

_F = TypeVar("_F", bound=Callable[..., Any])

OPS: dict[str, Op] = {}        # op name -> Op
# numpy ufunc -> tenferro function (Tensor.__array_ufunc__)
UFUNCS: dict[Any, Callable[..., Any]] = {}
# numpy function -> tenferro function (Tensor.__array_function__)
FUNCTIONS: dict[Any, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}    # Tensor method name -> function
NONDIFF: set[Any] = set()  # numpy ufuncs/functions whose result does not depend differentiably on
#                 their inputs: called on tensors, they run on the payloads (np.isnan...)


class Op:
    """A differentiable primitive: its name, rules and what it supports."""
    __slots__ = ("name", "vjp", "jvp", "nondiff", "complex", "batched", "second_order", "doc",
                 "kernel", "replay", "replay_ctx", "zero_derivative", "index_inputs")

    def __init__(self, name: str, vjp: Callable[..., Any] | None,
                 jvp: Callable[..., Any] | None, *, nondiff: Iterable[int] = (),
                 complex: bool = True, batched: bool = True, second_order: bool = True,
                 doc: str = "", kernel: int = 0) -> None:
        self.name = name
        self.vjp = vjp
        self.jvp = jvp
        self.nondiff = frozenset(nondiff)   # output indices with no derivative (int-like)
        self.complex = complex              # accepts complex inputs
        self.batched = batched              # leading batch dims broadcast
        self.second_order = second_order    # rules are written in differentiable ops
        self.doc = doc
        # the code of the tape's compiled copy of ``vjp`` that a plain backward runs instead
        # (tape.pyx vjp_kernel: VJP_EXP, ...; 0 for none), declared where the rule is
        # written; it computes exactly what ``vjp`` computes, or declines. The compiled
        # tape reads it, the twin runs ``vjp`` always.
        self.kernel = kernel
        # tf.compile's replay (tenferro/compile.py): ``replay(ctx)`` gives ``fn`` with
        # ``fn(*xs)`` the op's output array(s) for new input arrays ``xs`` (the op's
        # static parameters read from the ``ctx`` it recorded), as apply1/apply would get
        # them; with ``replay_ctx`` true, ``(outputs, ctx)`` where ctx holds values (a
        # factorization). None: the op cannot be replayed, and a function that uses it
        # runs eagerly. fn must raise where the op would (singular, not positive
        # definite, non-finite input): the call then runs eagerly, which raises the op's
        # own error.
        self.replay: Callable[[Any], Callable[..., Any]] | None = None
        self.replay_ctx = False
        # the derivative is 0 everywhere (sign, floor, argsort, ...): a tf.compile replay
        # sends no cotangent into its outputs (the eager pullback returns zeros)
        self.zero_derivative = False
        # its index arrays computed from traced values are inputs and its ctx holds only
        # constants the caller gave (getitem_traced_index): tf.compile's build need not
        # look for such an index in the ctx (_capture._check_ctx)
        self.index_inputs = False

    def __repr__(self) -> str:
        return f"<Op {self.name}>"


def defop(name: str, vjp: Callable[..., Any] | None, jvp: Callable[..., Any] | None,
          **kw: Any) -> Op:
    """Create and register an Op under ``name`` (names are unique)."""
    if name in OPS:
        raise RuntimeError(f"op {name!r} registered twice")
    op = Op(name, vjp, jvp, **kw)
    OPS[name] = op
    return op


def index_op(name: str, replay: Callable[[Any], Callable[..., Any]]) -> Op:
    """An op for a value-dependent integer or boolean result (argsort, argmax): no
    derivative (its pullback and tangent are zero), and ``replay(ctx)`` recomputes it at a
    tf.compile replay (_engine.index_result makes its nodes, inside a recording only)."""
    op = defop(name, lambda ctx, needs, gs, xs, ys: (None,) * len(xs),
               lambda ctx, ts, xs, ys: (None,),
               doc="an integer/boolean choice made from the values: no derivative")
    op.replay = replay
    op.zero_derivative = True
    return op


def register(fn: _F, *, methods: Iterable[str] = (), ufuncs: Iterable[Any] = (),
             functions: Iterable[Any] = ()) -> _F:
    """Expose ``fn`` as Tensor methods and as the override of NumPy ufuncs/functions."""
    for m in methods:
        METHODS[m] = fn
    for u in ufuncs:
        UFUNCS[u] = fn
    for f in functions:
        FUNCTIONS[f] = fn
    return fn


def register_nondiff(*funcs: Any) -> None:
    """Mark NumPy ufuncs/functions as not differentiable: called on tensors (also ones that
    require grad) they run on the payloads and return exactly what NumPy returns."""
    for f in funcs:
        if f in UFUNCS or f in FUNCTIONS:
            raise RuntimeError(f"{f!r} has a differentiable tenferro version already")
        NONDIFF.add(f)
