"""User-defined derivative rules and implicit differentiation of roots and fixed points.

* :class:`custom_vjp` / :class:`custom_jvp`: give a function its own reverse-mode or
  forward-mode rule, in the spirit of ``jax.custom_vjp`` / ``jax.custom_jvp``. Each
  decorated function gets its own :class:`~tenferro._ops.registry.Op` (named after the
  function's ``__qualname__``), so it records graph nodes like a built-in op, shows in
  ``python -m tenferro.rules`` and works with grad/backward/vjp/jvp/hvp/create_graph.
* :func:`custom_root` / :func:`fixed_point`: the solution of ``f(x, *params) = 0`` (or of
  ``x = g(x, *params)``) found by any solver on plain values, differentiable in ``params``
  by the implicit function theorem (one adjoint or tangent linear solve, no unrolling).

docs/custom_rules.md is the user guide; the conventions are summarised here.

**What the user's functions receive.** ``fwd``, ``bwd``, the tangent rule and the primal
all receive tenferro Tensors. Where a first derivative is computed they are *plain*: cut
from the graph, with grad mode off, so ``x.numpy()`` hands the payload to SciPy. Where a
derivative of the derivative is needed (``create_graph=True``, forward-over-reverse,
reverse-over-forward) the rules run again on Tensors that are in the graph, and every
tenferro op (or NumPy function/ufunc dispatching on Tensors) they call is recorded:
second order works when the rules are written that way. ``np.asarray`` on such a Tensor
raises (it would drop the derivative); ``x.numpy()`` is the explicit way out.

**Second order of a custom_vjp.** Reverse-over-reverse differentiates ``bwd`` through
its residuals, so ``fwd`` runs a second time, on the tracked inputs, to get residuals that
depend on them. A residual returned as a floating-point ndarray (computed from payloads)
has an unknown dependence on the inputs: a second-order pass then raises
UnsupportedADError instead of treating it as a constant. Return the inputs themselves (or
Tensors computed from them by tenferro ops) as residuals; wrap a true constant with
``tf.as_tensor``.

**Forward mode of a custom_vjp** is derived, not refused: ``bwd`` is linear in the
cotangent ``g``, so J·t is the gradient of Re⟨bwd(res, g), t⟩ with respect to ``g``
(the real inner product identity Re⟨Jᴴg, t⟩ = Re⟨g, Jt⟩ of
docs/design.md#complex-numbers). That needs
``bwd`` to compute the cotangents from ``g`` with tenferro operations; a cotangent
computed from ``g``'s payload raises UnsupportedADError naming the function (define a
custom_jvp for forward mode then).

**Reverse mode of a custom_jvp** is obtained the same way in the other direction: the
tangent output is linear in the input tangents, so the cotangent of input i is the
gradient of Re⟨ḡ, jvp(x; t)⟩ with respect to tᵢ, computed by a reverse pass over the
tangent rule evaluated on fresh tangent leaves.

**Nested passes.** Those two transpositions and the implicit rules run reverse passes
inside a rule. A reverse pass must not walk into the graph of the pass that called the
rule (its nodes are mid-traversal), so the nested pass runs on *proxies*: fresh leaves
holding the same payloads (and forward tangents); when the nested pass is done, the
proxies are re-pointed at the caller's graph nodes (``_rule_api.Cut``), so the recorded
derivative depends on the real inputs. A user's rule must therefore not close over
Tensors that require grad: pass them as arguments.
"""
from __future__ import annotations

from typing import (TYPE_CHECKING, Any, Callable, Container, Generic, Iterable, Iterator,
                    ParamSpec, Sequence, TypeVar, cast)

from numpy.typing import ArrayLike, NDArray

import dataclasses
import functools
import inspect
import weakref

import numpy as np

from ._engine import apply, apply1
from ._errors import DTypeError, LinAlgError, ShapeError, UnsupportedADError
from ._ops._util import floating, to_tensor
from ._ops.registry import OPS, defop
from ._ops.structure import stack
from ._rule_api import Cut, detached, is_tracked, outside_dual_level
from ._tensor import Tensor
from .autograd import enable_grad as _enable_grad, grad as _grad, no_grad as _no_grad
from .compile import Compiled, compile as _compile
from .forward import dual_level, make_dual, unpack_dual
from .linalg.solve import solve

if TYPE_CHECKING:
    from typing import TypeAlias

    from ._ops.registry import Op

    # A value a rule receives or returns: the ndarray payload in a plain pass, a Tensor
    # in the graph when the rule is itself differentiated (create_graph, forward over
    # reverse). The rules are written to work on both, so the checker sees it as Any.
    _Value: TypeAlias = Any

__all__ = ["custom_vjp", "custom_jvp", "custom_root", "fixed_point"]

_F = TypeVar("_F", bound=Callable[..., Any])
_P = ParamSpec("_P")     # the decorated function's parameters ...
_R = TypeVar("_R")       # ... and result: a custom_vjp/custom_jvp is called like it
_T = TypeVar("_T")


# ---- helpers --------------------------------------------------------------------------------

def _differentiating(xs: Sequence[Tensor]) -> bool:
    """Whether any of the Tensors ``xs`` carries a derivative now (_rule_api.is_tracked)."""
    return any(map(is_tracked, xs))


def _unique_name(fun: Callable[..., Any]) -> str:
    """The op name of a user's function: its qualname, made unique in the registry."""
    base: str = (getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None)
                 or "custom")
    name, k = base, 2
    while name in OPS:
        name = f"{base}#{k}"
        k += 1
    return name


def _is_inexact(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in "fc"


def _outputs(out: Any, fname: str, what: str) -> tuple[tuple[NDArray[Any], ...], bool]:
    """A rule's/primal's output (one array-like or a tuple/list) as (arrays, multi)."""
    multi = isinstance(out, (tuple, list))
    items = tuple(out) if multi else (out,)
    arrays = []
    for k, o in enumerate(items):
        a: NDArray[Any]
        if isinstance(o, Tensor):
            a = o._data
        else:
            try:
                a = np.asarray(o)
            except Exception as e:  # noqa: BLE001 - report any conversion failure the same way
                raise DTypeError(f"{fname}: {what} {k} cannot be converted to an array "
                                 f"({type(o).__name__}): {e}") from None
        if not _is_inexact(a.dtype) or a.dtype.itemsize < 4:
            raise DTypeError(
                f"{fname}: {what} {k} has dtype {a.dtype}; a custom function's outputs must "
                f"be float32/float64/complex64/complex128 (return integer results from a "
                f"separate function)")
        arrays.append(a)
    return tuple(arrays), multi


def _conform(value: Any, shape: Sequence[int], dtype: np.dtype[Any], fname: str, what: str,
             graph: bool) -> _Value:
    """A rule's result ``value`` given ``shape`` and ``dtype`` (None stays None): a Tensor
    when ``graph`` (kept in the graph), else an ndarray. Wrong shape -> ShapeError, a
    complex value for a real slot or a non-numeric value -> DTypeError; precision is cast."""
    if value is None:
        return None
    if isinstance(value, Tensor):
        t = value
    else:
        try:
            arr = np.asarray(value)
        except Exception as e:  # noqa: BLE001
            raise DTypeError(f"{fname}: {what} cannot be converted to an array "
                             f"({type(value).__name__}): {e}") from None
        if arr.dtype.kind not in "iufc":
            raise DTypeError(f"{fname}: {what} has dtype {arr.dtype}; it must be numeric")
        t = Tensor._wrap(arr)
    if t.dtype.kind == "b":
        raise DTypeError(f"{fname}: {what} has dtype bool; it must be numeric")
    if t.dtype.kind == "c" and dtype.kind != "c":
        raise DTypeError(
            f"{fname}: {what} is complex ({t.dtype}) but belongs to a real ({dtype}) value; "
            f"return a real array (take .real only if that is the derivative you mean)")
    if t.shape != tuple(shape):
        raise ShapeError(f"{fname}: {what} has shape {t.shape}, expected {tuple(shape)} "
                         f"(the shape of the value it belongs to; no broadcasting)")
    if t.dtype != dtype:
        t = t.astype(dtype)
    return t if graph else t._data


def _structure(items: Sequence[_T], multi: bool) -> _T | tuple[_T, ...]:
    return tuple(items) if multi else items[0]


def _rule_tuple(value: Any, n: int, fname: str, what: str) -> tuple[Any, ...]:
    """A rule's per-input/per-output results as a tuple of length ``n``."""
    if n == 1 and not isinstance(value, (tuple, list)):
        return (value,)
    if not isinstance(value, (tuple, list)):
        raise ShapeError(f"{fname}: {what} must be a tuple of {n} entries (one per value, "
                         f"None for zero), got {type(value).__name__}")
    if len(value) != n:
        raise ShapeError(f"{fname}: {what} has {len(value)} entries, expected {n} (one "
                         f"per value, None for zero)")
    return tuple(value)


def _iter_leaves(obj: Any) -> Iterator[Any]:
    if isinstance(obj, (tuple, list)):
        for o in obj:
            yield from _iter_leaves(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_leaves(o)
    else:
        yield obj


def _leaves_like(arrays: Iterable[NDArray[Any]]) -> list[Tensor]:
    """Fresh leaves requiring grad, one per (shape, dtype) of ``arrays``: the variables of
    a linear map to transpose. Their values do not change the result (the map is linear),
    so they are fixed pseudo-random numbers rather than zeros: a rule that escapes the graph
    through their payloads then returns a non-zero constant, which is caught, instead of a
    zero that would pass for a structural zero."""
    rng = np.random.default_rng(0x7E4F)
    out = []
    for a in arrays:
        v: NDArray[Any] = rng.uniform(0.5, 1.5, a.shape)
        if a.dtype.kind == "c":
            v = v + 1j * rng.uniform(0.5, 1.5, a.shape)
        out.append(Tensor._wrap(np.asarray(v, a.dtype)).set_requires_grad(True))
    return out


def _linear_pairs(values: Sequence[Tensor | None], seeds: Sequence[Any],
                  not_linear: Callable[[int], str]) -> tuple[list[Tensor], list[Tensor]]:
    """The (value, seed) pairs that transposing a user's linear rule (bwd in g, jvp in the
    tangents) runs ``grad`` on: both present, and the value computed from its inputs with
    tenferro ops. A constant zero value contributes nothing; any other constant means the
    rule used payloads: UnsupportedADError(not_linear(k)) for position k."""
    outs: list[Tensor] = []
    ins: list[Tensor] = []
    for k, (v, s) in enumerate(zip(values, seeds)):
        if v is None or s is None:
            continue
        if not v.requires_grad:
            if not np.any(v._data):
                continue
            raise UnsupportedADError(not_linear(k))
        outs.append(v)
        ins.append(s if isinstance(s, Tensor) else Tensor._wrap(s))
    return outs, ins


def _cut_leaves(leaves: Iterable[Tensor]) -> None:
    for t in leaves:     # dummy variables of a nested pass: keep them out of later passes
        t.requires_grad = False


# ---- custom_vjp ---------------------------------------------------------------------------

class _Call:
    """What one application of a custom function keeps for its rules (the node's ctx)."""
    __slots__ = ("args", "diff_idx", "nondiff", "residuals", "multi", "outs")

    def __init__(self, args: tuple[Any, ...], diff_idx: tuple[int, ...],
                 nondiff: tuple[Any, ...], residuals: Any, multi: bool,
                 outs: tuple[NDArray[Any], ...]) -> None:
        self.args = args              # every positional argument as the user passed it
        self.diff_idx = diff_idx      # positions of the differentiable ones
        self.nondiff = nondiff        # the nondiff_argnums values, in order
        self.residuals = residuals
        self.multi = multi            # the function returns a tuple
        self.outs = outs              # output arrays (shape/dtype reference)

    def full_args(self, xs: Iterable[_Value]) -> list[Any]:
        args = list(self.args)
        for i, x in zip(self.diff_idx, xs):
            args[i] = x
        return args


class _Custom:
    """What custom_vjp and custom_jvp share: argument binding, the op, the call."""
    kind = ""
    __name__: str      # (and __doc__, __wrapped__, ...: the function's, by update_wrapper)

    if TYPE_CHECKING:  # each subclass defines the two rules of its op
        def _vjp_rule(self, call: _Call, needs: Sequence[bool], gs: Sequence[_Value],
                      xs: Sequence[_Value], ys: Sequence[_Value]) -> tuple[_Value, ...]: ...

        def _jvp_rule(self, call: _Call, ts: Sequence[_Value], xs: Sequence[_Value],
                      ys: Sequence[_Value]) -> tuple[_Value, ...]: ...

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Iterable[int] = ()) -> None:
        if not callable(fun):
            raise TypeError(f"{self.kind} decorates a function, got {type(fun).__name__}")
        # (the subclasses are callable; _Custom itself is never instantiated)
        functools.update_wrapper(cast(Callable[..., Any], self), fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted({int(i) for i in nondiff_argnums}))
        self._sig: inspect.Signature | None
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self._sig = None
        # a call with every parameter given positionally skips Signature.bind (~10 µs)
        self._n_plain = -1
        if self._sig is not None and all(
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                for p in self._sig.parameters.values()):
            self._n_plain = len(self._sig.parameters)
        self.op = defop(_unique_name(fun), self._vjp_rule, self._jvp_rule, batched=False,
                        doc=f"{self.kind} rule of {getattr(fun, '__module__', '?')}."
                            f"{getattr(fun, '__qualname__', '?')}")

    @property
    def name(self) -> str:
        """The op name: the function's qualname, made unique (``python -m tenferro.rules``)."""
        return self.op.name

    def _where(self) -> str:
        return f"{self.kind} function {self.op.name!r}"

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[
            tuple[Any, ...], tuple[int, ...], tuple[Any, ...], tuple[Tensor, ...]]:
        if not kwargs and len(args) == self._n_plain:
            pass
        elif self._sig is not None:
            try:
                bound = self._sig.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{self._where()}: {e}") from None
            bound.apply_defaults()
            if bound.kwargs:
                raise TypeError(f"{self._where()}: keyword-only parameters "
                                f"{sorted(bound.kwargs)} are not supported; make them "
                                f"positional (and list them in nondiff_argnums if static)")
            args = bound.args
        elif kwargs:
            raise TypeError(f"{self._where()}: keyword arguments need an inspectable "
                            f"signature")
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise TypeError(f"{self._where()}: nondiff_argnums has {i} but the call "
                                f"has {len(args)} positional arguments")
        diff_idx = tuple(i for i in range(len(args)) if i not in self.nondiff_argnums)
        nondiff = tuple(args[i] for i in self.nondiff_argnums)
        xs: list[Tensor] = []
        for i in diff_idx:
            a = args[i]
            if isinstance(a, Tensor):
                xs.append(a)
                continue
            try:
                xs.append(to_tensor(a))
            except Exception as e:  # noqa: BLE001
                raise DTypeError(
                    f"{self._where()}: argument {i} ({type(a).__name__}) is not an array; "
                    f"list static arguments in nondiff_argnums ({e})") from None
        return tuple(args), diff_idx, nondiff, tuple(xs)

    def _check_cotangents(self, cots: Any, call: _Call, xs: Sequence[_Value],
                          graph: bool) -> tuple[_Value, ...]:
        """bwd's result: one cotangent per differentiable input, shape and dtype checked."""
        cots = _rule_tuple(cots, len(call.diff_idx), self._where(),
                           "the cotangents (bwd's result)")
        out: list[_Value] = []
        for k, (c, x) in enumerate(zip(cots, xs)):
            xd = x._data if isinstance(x, Tensor) else x
            if c is None or not _is_inexact(xd.dtype):
                out.append(None)       # integer inputs have no cotangent
                continue
            out.append(_conform(c, xd.shape, xd.dtype, self._where(),
                                f"the cotangent of argument {call.diff_idx[k]}", graph))
        return tuple(out)

    def _check_tangents(self, touts: Any, call: _Call, graph: bool) -> tuple[_Value, ...]:
        touts = _rule_tuple(touts if call.multi else (touts,), len(call.outs), self._where(),
                            "the output tangents")
        return tuple(_conform(t, o.shape, o.dtype, self._where(), f"the tangent of output {k}",
                              graph) for k, (t, o) in enumerate(zip(touts, call.outs)))

    @staticmethod
    def _differentiating(xs: Sequence[Tensor]) -> bool:
        return _differentiating(xs)

    def _record(self, xs: tuple[Tensor, ...], call: _Call,
                outs: tuple[NDArray[Any], ...]) -> Any:
        """The recorded outputs: a Tensor, or a tuple of them for a function returning a
        tuple (``Any``: the decorated function's result type, see ``__call__``)."""
        res: tuple[Tensor, ...] = apply(self.op, xs, outs, call)
        return res if call.multi else res[0]


class custom_vjp(_Custom, Generic[_P, _R]):
    """A function with a user-defined reverse-mode rule (like ``jax.custom_vjp``).

    Usage::

        @tf.custom_vjp
        def f(x, y): ...                  # the primal: Tensors in, Tensor(s) out

        def f_fwd(x, y):                  # -> (output, residuals)
            return f(x, y), (x, y)

        def f_bwd(res, g):                # -> one cotangent per argument (None = zero)
            x, y = res
            return g * ..., g * ...

        f.defvjp(f_fwd, f_bwd)

    ``nondiff_argnums`` (tuple of ints) marks static arguments, which are not converted to
    Tensors; as in JAX they are passed first to ``bwd``: ``bwd(*nondiff_args, res, g)``.
    Keyword arguments are bound to positions by ``f``'s signature.

    The primal call (no input requires grad or carries a tangent) runs ``f``; a call to
    differentiate runs ``fwd`` on plain Tensors (cut from the graph, grad mode off; use
    ``x.numpy()`` to hand the payload to SciPy). Outputs: one array or a tuple of arrays
    of float32/64 or complex64/128. ``g`` mirrors that structure (zeros for an output that
    received no cotangent). ``bwd`` must return a tuple with one entry per differentiable
    argument, each None or of that argument's shape (ShapeError otherwise) and of a real
    dtype for a real argument (DTypeError otherwise); precision is cast. Cotangents follow
    docs/design.md#complex-numbers (multiply by conj(f'(z)) for a holomorphic f).

    Second order and forward mode: see the module docstring (fwd runs again on tracked
    inputs; forward mode transposes ``bwd`` in ``g``).

    Parameters
    ----------
    fun : callable
        The primal function (Tensors in, a Tensor or a tuple of Tensors out).
    nondiff_argnums : iterable of int, optional
        Positions of static arguments (not converted, not differentiated). Default ().

    Raises
    ------
    TypeError
        If ``fun`` is not callable; (when called) if no rule was set.
    ShapeError
        (when differentiated) If ``fwd`` does not return a pair, or a cotangent from
        ``bwd`` has the wrong shape or count.
    DTypeError
        (when differentiated) If ``bwd`` returns a complex cotangent for a real argument.

    Examples
    --------
    >>> @tf.custom_vjp
    ... def f(x):
    ...     return tf.sin(x)
    >>> f.defvjp(lambda x: (f(x), x), lambda x, g: (g * tf.cos(x),))
    >>> x = tf.tensor([0.0, 1.0], requires_grad=True)
    >>> tf.grad([f(x).sum()], [x])[0]
    tensor([1.        , 0.54030231])
    """
    kind = "custom_vjp"

    # (type checkers see the constructor as __init__: the decorator-factory call without
    # ``fun`` is untyped for them; ``tf.custom_vjp(fun, nondiff_argnums=...)`` is typed)
    def __new__(cls, fun: Callable[..., Any] | None = None,
                nondiff_argnums: Sequence[int] = ()) -> Any:
        if fun is None:   # @tf.custom_vjp(nondiff_argnums=(0,))
            return functools.partial(cls, nondiff_argnums=nondiff_argnums)
        return super().__new__(cls)

    def __init__(self, fun: Callable[_P, _R], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., tuple[Any, Any]], bwd: Callable[..., Any]) -> None:
        """Set the rule: ``fwd(*args) -> (out, residuals)``, ``bwd(*nondiff, res, g)``."""
        if not callable(fwd) or not callable(bwd):
            raise TypeError(f"{self._where()}: defvjp(fwd, bwd) needs two functions")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """``f(*args, **kwargs)``, recorded with the rule when differentiated (an array
        result comes back as a Tensor)."""
        bargs, diff_idx, nondiff, xs = self._bind(args, kwargs)
        plain = [detached(x) for x in xs]
        full = list(bargs)
        for i, p in zip(diff_idx, plain):
            full[i] = p
        if not self._differentiating(xs):
            with _no_grad():
                outs, multi = _outputs(self.fun(*full), self._where(), "output")
            res = tuple(Tensor._wrap(o) for o in outs)
            return cast(_R, res if multi else res[0])
        if self.fwd is None:
            raise TypeError(f"{self._where()} has no rule: call {self.__name__}.defvjp(fwd, "
                            f"bwd) before differentiating it")
        with _no_grad():
            pair = self.fwd(*full)
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ShapeError(f"{self._where()}: fwd must return a pair (output, residuals), "
                             f"got {type(pair).__name__}")
        outs, multi = _outputs(pair[0], self._where(), "output of fwd")
        call = _Call(bargs, diff_idx, nondiff, pair[1], multi, outs)
        return cast(_R, self._record(xs, call, outs))

    def _residuals_on(self, call: _Call, xs: Sequence[_Value]) -> Any:
        """Run fwd again on ``xs`` (in the graph) for residuals that depend on them."""
        fwd = self.fwd
        assert fwd is not None      # a call was recorded, so defvjp had been called
        try:
            with _enable_grad():
                pair = fwd(*call.full_args(xs))
        except UnsupportedADError as e:
            raise UnsupportedADError(
                f"{self._where()}: a second-order derivative runs fwd on Tensors in the "
                f"graph, and fwd dropped their derivative: {e} (use x.numpy() for the "
                f"primal's payload, and return residuals computed with tenferro ops)") from None
        res = pair[1]
        for k, leaf in enumerate(_iter_leaves(res)):
            if isinstance(leaf, (np.ndarray, np.generic)) and _is_inexact(np.asarray(leaf).dtype):
                raise UnsupportedADError(
                    f"{self._where()}: a second-order derivative (create_graph=True, hvp, "
                    f"forward mode over reverse) differentiates bwd through the residuals, "
                    f"but residual {k} is a floating-point ndarray computed from payloads, "
                    f"whose dependence on the inputs is unknown. Compute it in fwd with "
                    f"tenferro ops on the Tensor arguments (or return the arguments "
                    f"themselves); wrap a true constant with tf.as_tensor")
        return res

    def _run_bwd(self, call: _Call, res: Any, g: Any, graph: bool) -> Any:
        bwd = self.bwd
        assert bwd is not None      # a call was recorded, so defvjp had been called
        if not graph:
            return bwd(*call.nondiff, res, g)
        try:
            return bwd(*call.nondiff, res, g)
        except UnsupportedADError as e:
            raise UnsupportedADError(
                f"{self._where()}: a second-order derivative differentiates bwd, which "
                f"converted a Tensor in the graph to NumPy: {e}. Write bwd with tenferro "
                f"ops (or NumPy functions on Tensors) for second order") from None

    def _gs(self, gs: Sequence[_Value], call: _Call) -> list[Tensor]:
        return [Tensor._wrap(np.zeros(o.shape, o.dtype)) if g is None
                else (g if isinstance(g, Tensor) else Tensor._wrap(g))
                for g, o in zip(gs, call.outs)]

    def _vjp_rule(self, call: _Call, needs: Sequence[bool], gs: Sequence[_Value],
                  xs: Sequence[_Value], ys: Sequence[_Value]) -> tuple[_Value, ...]:
        graph = any(isinstance(x, Tensor) for x in xs)
        res = self._residuals_on(call, xs) if graph else call.residuals
        g = self._gs(gs, call)
        cots = self._run_bwd(call, res, _structure(g, call.multi), graph)
        cots = self._check_cotangents(cots, call, xs, graph)
        return tuple(c if needs[i] else None for i, c in enumerate(cots))

    def _jvp_rule(self, call: _Call, ts: Sequence[_Value], xs: Sequence[_Value],
                  ys: Sequence[_Value]) -> tuple[_Value, ...]:
        # J t = ∇_g Re⟨bwd(res, g), t⟩ (bwd is linear in g), by a nested reverse pass
        graph = any(isinstance(x, Tensor) for x in xs)
        cut = Cut(xs, graph)
        res = self._residuals_on(call, cut.proxies) if graph else call.residuals
        g_leaves = _leaves_like(call.outs)
        with _enable_grad():
            cots = self._run_bwd(call, res, _structure(g_leaves, call.multi), graph)
            cots = self._check_cotangents(cots, call, cut.proxies, True)
        seeds_for, seeds = _linear_pairs(cots, ts, lambda k: (
            f"{self._where()}: forward mode (jvp, hvp) transposes bwd in the "
            f"cotangent g, but the cotangent of argument {call.diff_idx[k]} is not "
            f"computed from g with tenferro operations (it used g's payload, or "
            f"returned a non-zero constant). Write bwd with tenferro "
            f"ops / NumPy functions on g, or define the function with tf.custom_jvp"))
        touts: list[Tensor | None]
        if not seeds_for:
            touts = [None] * len(call.outs)
        else:
            touts = _grad(seeds_for, g_leaves, seeds, create_graph=graph)
        _cut_leaves(g_leaves)
        if graph:
            cut.graft()
            return tuple(touts)
        return tuple(None if t is None else t._data for t in touts)


class custom_jvp(_Custom, Generic[_P, _R]):
    """A function with a user-defined forward-mode rule (like ``jax.custom_jvp``).

    Usage::

        @tf.custom_jvp
        def f(x): ...

        @f.defjvp
        def f_jvp(primals, tangents):     # -> (output, output tangent)
            x, = primals
            t, = tangents
            y = f(x)
            return y, ... * t

    ``primals``/``tangents`` are tuples of Tensors, one per differentiable argument (a
    missing tangent is passed as zeros); with ``nondiff_argnums`` the static arguments come
    first: ``jvp(*nondiff_args, primals, tangents)``. The tangent output mirrors the
    function's output (one array or a tuple; None for a zero) and must have its shape.

    Reverse mode transposes the tangent rule: the output tangent is linear in the input
    tangents, so the rule is evaluated on fresh tangent leaves and a reverse pass over it
    gives the cotangents. That needs the tangent output computed from the tangents with
    tenferro operations (UnsupportedADError naming the function otherwise). Second order
    works when the tangent rule is written in tenferro ops on ``primals``.

    Parameters
    ----------
    fun : callable
        The primal function (Tensors in, a Tensor or a tuple of Tensors out).
    nondiff_argnums : iterable of int, optional
        Positions of static arguments (not converted, not differentiated). Default ().

    Raises
    ------
    TypeError
        If ``fun`` is not callable; (when called) if no rule was set.
    UnsupportedADError
        (in reverse mode) If the tangent output is not computed from the tangents with
        tenferro ops.
    ShapeError
        If the rule does not return a pair, or a tangent has the wrong shape.

    Examples
    --------
    >>> @tf.custom_jvp
    ... def cube(x):
    ...     return x ** 3
    >>> @cube.defjvp
    ... def cube_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return cube(x), 3 * x ** 2 * t
    >>> x = tf.tensor([1.0, 2.0], requires_grad=True)
    >>> tf.jvp(cube, x, tf.ones(2))[1]
    tensor([ 3., 12.], grad_fn=multiply)
    >>> tf.grad([cube(x).sum()], [x])[0]
    tensor([ 3., 12.])
    """
    kind = "custom_jvp"

    # (type checkers see the constructor as __init__: the decorator-factory call without
    # ``fun`` is untyped for them; ``tf.custom_jvp(fun, nondiff_argnums=...)`` is typed)
    def __new__(cls, fun: Callable[..., Any] | None = None,
                nondiff_argnums: Sequence[int] = ()) -> Any:
        if fun is None:
            return functools.partial(cls, nondiff_argnums=nondiff_argnums)
        return super().__new__(cls)

    def __init__(self, fun: Callable[_P, _R], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: _F) -> _F:
        """Set the rule ``jvp(*nondiff, primals, tangents) -> (out, tangent_out)``."""
        if not callable(jvp):
            raise TypeError(f"{self._where()}: defjvp needs a function")
        self.jvp = jvp
        return jvp

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """``f(*args, **kwargs)``, recorded with the rule when differentiated (an array
        result comes back as a Tensor)."""
        bargs, diff_idx, nondiff, xs = self._bind(args, kwargs)
        full = list(bargs)
        for i, x in zip(diff_idx, xs):
            full[i] = detached(x)
        with _no_grad():
            outs, multi = _outputs(self.fun(*full), self._where(), "output")
        if self._differentiating(xs) and self.jvp is None:
            raise TypeError(f"{self._where()} has no rule: call {self.__name__}.defjvp(jvp) "
                            f"before differentiating it")
        return cast(_R, self._record(xs, _Call(bargs, diff_idx, nondiff, None, multi, outs),
                                     outs))

    def _run_jvp(self, call: _Call, primals: Sequence[Tensor],
                 tangents: Sequence[Tensor]) -> Any:
        jvp = self.jvp
        assert jvp is not None      # a call was recorded, so defjvp had been called
        try:
            pair = jvp(*call.nondiff, tuple(primals), tuple(tangents))
        except UnsupportedADError as e:
            raise UnsupportedADError(
                f"{self._where()}: the jvp rule converted a Tensor in the graph to NumPy "
                f"({e}). Reverse mode runs the rule on tangents in the graph, and second "
                f"order on primals in the graph: write the tangent with tenferro ops (or "
                f"NumPy functions on Tensors)") from None
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ShapeError(f"{self._where()}: the jvp rule must return a pair (output, "
                             f"output tangent), got {type(pair).__name__}")
        return pair[1]

    def _jvp_rule(self, call: _Call, ts: Sequence[_Value], xs: Sequence[_Value],
                  ys: Sequence[_Value]) -> tuple[_Value, ...]:
        graph = any(isinstance(x, Tensor) for x in xs)
        primals = [x if isinstance(x, Tensor) else Tensor._wrap(x) for x in xs]
        tangents = [Tensor._wrap(np.zeros(p.shape, p.dtype)) if t is None
                    else (t if isinstance(t, Tensor) else Tensor._wrap(t))
                    for p, t in zip(primals, ts)]
        touts = self._check_tangents(self._run_jvp(call, primals, tangents), call, graph)
        return touts

    def _vjp_rule(self, call: _Call, needs: Sequence[bool], gs: Sequence[_Value],
                  xs: Sequence[_Value], ys: Sequence[_Value]) -> tuple[_Value, ...]:
        # x̄ᵢ = ∇_{tᵢ} Re⟨ḡ, jvp(x; t)⟩ (the tangent is linear in t), by a nested reverse pass
        graph = any(isinstance(x, Tensor) for x in xs)
        cut = Cut(xs, graph)
        wanted = [k for k, p in enumerate(cut.proxies) if needs[k] and _is_inexact(p.dtype)]
        leaves = _leaves_like([cut.proxies[k]._data for k in wanted])
        tangents = [Tensor._wrap(np.zeros(p.shape, p.dtype)) for p in cut.proxies]
        for k, leaf in zip(wanted, leaves):
            tangents[k] = leaf
        with _enable_grad():
            touts = self._check_tangents(self._run_jvp(call, cut.proxies, tangents), call, True)
        outs, seeds = _linear_pairs(touts, gs, lambda j: (
            f"{self._where()}: reverse mode transposes the jvp rule, but tangent "
            f"output {j} is not computed from the tangents with tenferro operations "
            f"(it used their payloads). Write the tangent with tenferro ops / NumPy "
            f"functions on the tangents, or define the function with tf.custom_vjp"))
        cots: list[_Value] = [None] * len(xs)
        if outs and leaves:
            gl = _grad(outs, leaves, seeds, create_graph=graph)
            for k, c in zip(wanted, gl):
                cots[k] = c if graph or c is None else c._data
        _cut_leaves(leaves)
        if graph:
            cut.graft()
        return tuple(cots)


# ---- implicit differentiation --------------------------------------------------------------

@dataclasses.dataclass(slots=True)
class _RootCall:
    """What one custom_root call's rules need: the residual function, the root's shape and
    dtype, the dense-solve size limit, the name for messages, GMRES's tolerance."""
    f: Callable[..., Any]
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    dense_max: int
    name: str
    gmres_rtol: float
    # fixed_point(compile=True): (y, params) -> u ↦ (∂G/∂x)ᵀu by the recorded step's
    # replayed pullbacks, or None (then the eager reverse pass)
    g_vjp_x: Callable[..., Any] | None = None


def _residual(call: _RootCall, x: Tensor, params: Sequence[Tensor]) -> Tensor:
    """f(x, *params) as a Tensor of x's shape (ShapeError naming the function otherwise)."""
    res = call.f(x, *params)
    r = res if isinstance(res, Tensor) else Tensor._wrap(np.asarray(res))
    if r.shape != x.shape:
        raise ShapeError(f"{call.name}: f(x, *params) has shape {r.shape} but x has shape "
                         f"{x.shape}; f must return one equation per unknown")
    return r


def _flat(t: Tensor, n: int) -> Tensor:
    return t.reshape((n,))


def _jacobian_x(call: _RootCall, y: _Value, params: Sequence[_Value], graph: bool) -> _Value:
    """A = ∂f/∂x at (y, params) as an (n, n) matrix, row i = e_iᵀA by a nested reverse
    pass (differentiable in y and params when ``graph``)."""
    n = int(np.prod(call.shape))
    cut = Cut((y,) + tuple(params), graph, track=(0,))
    xp = cut.proxies[0]
    with _enable_grad():
        r = _residual(call, xp, cut.proxies[1:])
        rows = []
        eye = np.eye(n, dtype=r.dtype)
        for i in range(n):
            seed = Tensor._wrap(eye[i].reshape(call.shape))
            g, = _grad([r], [xp], [seed], retain_graph=True, create_graph=graph)
            rows.append(Tensor._wrap(np.zeros(n, r.dtype)) if g is None else _flat(g, n))
    if graph:
        cut.graft()
        return stack(rows) if n else Tensor._wrap(np.zeros((0, 0), r.dtype))
    return np.stack([row._data for row in rows]) if n else np.zeros((0, 0), r.dtype)


def _dense_solve(a: _Value, b: _Value, call: _RootCall, graph: bool) -> _Value:
    try:
        if graph:
            return solve(a, b)
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"{call.name}: ∂f/∂x is singular at the solution ({e}); the "
                          f"implicit derivative does not exist there") from None


def _gmres(matvec: Callable[[NDArray[Any]], NDArray[Any]], b: NDArray[Any], call: _RootCall,
           what: str) -> NDArray[Any]:
    from scipy.sparse.linalg import LinearOperator, gmres
    n = b.size
    op = LinearOperator((n, n), matvec=matvec, dtype=b.dtype)
    bnorm = np.linalg.norm(b)
    if bnorm == 0:
        return np.zeros_like(b)
    sol: NDArray[Any]
    sol, info = gmres(op, b, rtol=call.gmres_rtol, atol=0.0, restart=min(n, 50),
                      maxiter=max(10, n))
    res = np.linalg.norm(matvec(sol) - b)
    if info != 0 or not np.isfinite(res) or res > 10 * call.gmres_rtol * bnorm:
        raise LinAlgError(f"{call.name}: gmres did not solve the {what} system (residual "
                          f"norm {res:.3g} for a right-hand side of norm {bnorm:.3g}); lower "
                          f"dense_max below n = {n} to use a dense solve")
    return sol


def _root_vjp(call: _RootCall, needs: Sequence[bool], gs: Sequence[_Value],
              xs: Sequence[_Value], ys: Sequence[_Value]) -> tuple[_Value, ...]:
    # x* solves f(x*, θ) = 0, so A dx* = -B dθ with A = ∂f/∂x, B = ∂f/∂θ (implicit function
    # theorem). Reverse: solve Aᵀλ = ḡ, then θ̄ = -Bᵀλ (one vjp of f in θ with seed -λ).
    params = xs
    graph = isinstance(gs[0], Tensor) or any(isinstance(p, Tensor) for p in params)
    g = gs[0]
    y = ys[0]
    n = int(np.prod(call.shape))
    if graph or n <= call.dense_max:
        a = _jacobian_x(call, y, params, graph)
        gf = _flat(g if isinstance(g, Tensor) else Tensor._wrap(g), n) if graph \
            else np.reshape(g, n)
        lam = _dense_solve(a.mT if graph else a.T, gf, call, graph)
    else:
        rmatvec = _replayed_rmatvec(call, y, params, n)
        if rmatvec is None:
            cut = Cut((y,) + tuple(params), False, track=(0,))
            xp = cut.proxies[0]
            with _enable_grad():
                r = _residual(call, xp, cut.proxies[1:])

            # u ↦ Aᵀu, a reverse pass over the recorded f
            def rmatvec(u: NDArray[Any]) -> NDArray[Any]:
                gx, = _grad([r], [xp], [Tensor._wrap(u.reshape(call.shape).astype(r.dtype))],
                            retain_graph=True)
                return np.zeros(n, r.dtype) if gx is None else gx._data.reshape(n)
        lam = _gmres(rmatvec, np.reshape(g, n).astype(call.dtype), call, "adjoint (Aᵀλ = ḡ)")
    lam = lam.reshape(call.shape)
    wanted = [k for k, p in enumerate(params) if needs[k]]
    cut = Cut((y,) + tuple(params), graph, track=[1 + k for k in wanted])
    with _enable_grad():
        r = _residual(call, cut.proxies[0], cut.proxies[1:])
        # np.asarray: negating a 0-d array gives a NumPy scalar, and a tensor holds an ndarray
        seed = -lam if graph else Tensor._wrap(np.asarray(-lam))
        gl = _grad([r], [cut.proxies[1 + k] for k in wanted], [seed], create_graph=graph)
    if graph:
        cut.graft()
    cots: list[_Value] = [None] * len(params)
    for k, c in zip(wanted, gl):
        cots[k] = c if graph or c is None else c._data
    return tuple(cots)


def _payload(v: _Value) -> NDArray[Any]:
    return v._data if isinstance(v, Tensor) else np.asarray(v)


def _replayed_rmatvec(call: _RootCall, y: _Value, params: Sequence[_Value], n: int
                      ) -> Callable[[NDArray[Any]], NDArray[Any]] | None:
    """u ↦ Aᵀu = u - (∂G/∂x)ᵀu for f = x - G(x) by G's recorded pullbacks (fixed_point
    with compile=True; the same values as the eager reverse pass, without the engine), or
    None."""
    if call.g_vjp_x is None:
        return None
    vjp = call.g_vjp_x(y, params)
    if vjp is None:
        return None
    dtype = call.dtype

    def rmatvec(u: NDArray[Any]) -> NDArray[Any]:
        u = u.astype(dtype, copy=False)
        gx = vjp(u.reshape(call.shape))
        out: NDArray[Any] = u.copy() if gx is None else u - np.reshape(gx, n)
        return out
    return rmatvec


def _root_jvp(call: _RootCall, ts: Sequence[_Value], xs: Sequence[_Value],
              ys: Sequence[_Value]) -> tuple[_Value, ...]:
    # forward: dx* = -A⁻¹ (B t), B t by one jvp of f in θ at fixed x* (nested dual level:
    # the engine runs a jvp rule with no level active)
    params = xs
    graph = any(isinstance(p, Tensor) for p in params)
    y = ys[0] if isinstance(ys[0], Tensor) else Tensor._wrap(ys[0])
    ps = [p if isinstance(p, Tensor) else Tensor._wrap(p) for p in params]
    n = int(np.prod(call.shape))
    with dual_level():
        duals = [p if t is None else make_dual(p, t if isinstance(t, Tensor) else Tensor._wrap(t))
                 for p, t in zip(ps, ts)]
        bt = unpack_dual(_residual(call, y, duals)).tangent
    if bt is None:
        return (None,)
    if graph or n <= call.dense_max:
        a = _jacobian_x(call, y, params, graph)
        rhs = _flat(-bt, n) if graph else -bt._data.reshape(n)
        dx = _dense_solve(a, rhs, call, graph)
        return (dx.reshape(call.shape),)

    def matvec(v: NDArray[Any]) -> NDArray[Any]:   # v ↦ A v, a nested jvp of f in x
        with dual_level():
            d = make_dual(y, Tensor._wrap(v.reshape(call.shape).astype(call.dtype)))
            t = unpack_dual(_residual(call, d, ps)).tangent
        return np.zeros(n, call.dtype) if t is None else t._data.reshape(n)
    dx = _gmres(matvec, -bt._data.reshape(n), call, "tangent (A dx = -B t)")
    return (dx.reshape(call.shape),)


_ROOT_OP = defop("custom_root", _root_vjp, _root_jvp, complex=False, batched=False,
                 doc="implicit derivative of a root of f(x, *params) = 0")
_FIXED_POINT_OP = defop("fixed_point", _root_vjp, _root_jvp, complex=False, batched=False,
                        doc="implicit derivative of a fixed point x = g(x, *params)")


def _root_params(params: Iterable[ArrayLike], name: str) -> tuple[Tensor, ...]:
    out: list[Tensor] = []
    for k, p in enumerate(params):
        try:
            t = floating(to_tensor(p))
        except Exception as e:  # noqa: BLE001
            raise DTypeError(f"{name}: parameter {k} ({type(p).__name__}) is not an array; "
                             f"close over static values in f instead ({e})") from None
        if t.dtype.kind == "c":
            raise DTypeError(f"{name}: parameter {k} is complex ({t.dtype}); implicit "
                             f"differentiation is defined for real unknowns and parameters "
                             f"(split a complex problem into real and imaginary parts)")
        out.append(t)
    return tuple(out)


# ---- the convergence criterion -----------------------------------------------------------------
#
# One form for both functions: converged when a residual norm is at most atol + rtol·scale.
# * fixed_point: the residual is the step ‖x_{k+1} - x_k‖₂, which IS ‖f(x_k)‖₂ for
#   f(x) = x - G(x) (G = gauge ∘ g), and scale = ‖x_{k+1}‖₂. The iteration stops on that
#   test and the point it accepts is returned: no second test on a recomputed residual,
#   which could fail by rounding alone (issue 28: a CTMRG stopped on ‖Δx‖ ≤ 1.8e-12, then
#   was refused for ‖x - g(x)‖ = 8.4e-12, g's rounding floor).
# * custom_root: the residual is ‖f(x*)‖₂ and scale = ‖∂f/∂x · x*‖₂, the change of f along
#   x* itself (a central difference): the root is accepted when f is no larger than what a
#   relative change rtol of x* would make it. It does not depend on x0 (a residual relative
#   to ‖f(x0)‖ would accept a poor root after a far start) and has f's units, so rtol is a
#   pure number whatever the scaling of f.

# fixed_point's default rtol by dtype. The rounding floor of an iteration through
# eigendecompositions/SVDs is far above eps: a C4v CTMRG of the 2D Ising model (chi 8,
# tests/test_implicit.py) stalls at steps of 1e-14..1.3e-11·‖x‖ in float64 (β = 0.40..0.30)
# and 1e-5..5e-5·‖x‖ in float32 (β = 0.40); the defaults sit above those floors, and 1e-10
# keeps the implicit derivative accurate to ~1e-10 relative in float64.
_FIXED_POINT_RTOL = {4: 3e-4, 8: 1e-10}


def _root_dtype(x0: NDArray[Any], params: Sequence[Tensor]) -> np.dtype[Any]:
    """The unknowns' dtype: x0's (integers count as float64) promoted with the params'."""
    base = x0.dtype if x0.dtype.kind == "f" else np.dtype(np.float64)
    return np.result_type(base, *[p.dtype for p in params])


def _tolerances(name: str, rtol: float | None, atol: float | None, tol: float | None,
                default_rtol: float) -> tuple[float, float]:
    """(rtol, atol) from the keywords: ``tol`` is the older spelling of an absolute
    tolerance (atol=tol, rtol=0); unset rtol/atol take ``default_rtol`` and 0."""
    if tol is not None:
        if rtol is not None or atol is not None:
            raise ShapeError(f"{name}: pass either tol (an absolute tolerance, the older "
                             f"spelling of atol=tol, rtol=0) or rtol/atol, not both")
        rtol, atol = 0.0, tol
    out = []
    for what, v, default in (("rtol", rtol, default_rtol), ("atol", atol, 0.0)):
        try:
            value = default if v is None else float(v)
        except (TypeError, ValueError):
            raise ShapeError(f"{name}: {what} must be a number, got {type(v).__name__}") \
                from None
        if not np.isfinite(value) or value < 0:
            raise ShapeError(f"{name}: {what} = {value} must be finite and >= 0")
        out.append(value)
    return out[0], out[1]


def _x0_array(x0_in: ArrayLike, name: str) -> NDArray[Any]:
    x0: NDArray[Any] = np.array(x0_in.numpy() if isinstance(x0_in, Tensor) else x0_in)
    if x0.dtype.kind == "c":
        raise DTypeError(f"{name}: x0 is complex; the unknowns must be real")
    if x0.dtype.kind not in "iufb" or (x0.dtype.kind == "f"
                                             and x0.dtype.itemsize not in (4, 8)):
        raise DTypeError(f"{name}: x0 has dtype {x0.dtype}; it must be a real array of "
                         f"float32/float64 (or integers, counted as float64)")
    return x0


@dataclasses.dataclass(slots=True)
class _Accept:
    """custom_root's acceptance test of a solver's result (fixed_point's iteration applies
    its own test and passes None)."""
    rtol: float
    atol: float
    result: Any      # what the solver returned (its .message/.success go in the error)


def _norm(v: NDArray[Any]) -> float:
    """‖v‖₂ without overflow or underflow in the squares (v finite)."""
    flat = v.reshape(-1)
    sq = float(flat @ flat)      # (the common case: one dot, no scaling)
    if 1e-280 < sq < 1e280:
        return float(np.sqrt(sq))
    m = float(np.max(np.abs(v))) if v.size else 0.0
    return m * float(np.linalg.norm(v / m)) if m > 0 and np.isfinite(m) else m


def _along_x(fun: Callable[[NDArray[Any]], NDArray[Any]], x: NDArray[Any],
             fx: NDArray[Any]) -> float:
    """‖∂f/∂x · x‖₂ by a central difference along x: the change of f under a relative
    change of x (an order of magnitude is all the acceptance test needs). Where f is not
    finite on one side (x at the edge of f's domain) a one-sided difference; 0 (only atol
    can accept) where neither is finite."""
    h = float(np.finfo(x.dtype).eps) ** (1 / 3)
    with np.errstate(all="ignore"):
        up, down = fun(x * (1 + h)), fun(x * (1 - h))
        for d in ((up - down) / (2 * h), (up - fx) / h, (fx - down) / h):
            if np.all(np.isfinite(d)):
                return _norm(d)
    return 0.0


def _check_root(name: str, fun: Callable[[NDArray[Any]], NDArray[Any]], x: NDArray[Any],
                accept: _Accept) -> None:
    """LinAlgError unless ‖f(x)‖₂ ≤ atol + rtol·‖∂f/∂x · x‖₂ (see the criterion above)."""
    r = fun(x)
    res = _norm(r) if np.all(np.isfinite(r)) else float("inf")
    scale = _along_x(fun, x, r) if accept.rtol and np.isfinite(res) else 0.0
    limit = accept.atol + accept.rtol * scale
    if res <= limit and np.isfinite(limit):
        return
    parts = (f"atol = {accept.atol:.3g}, rtol = {accept.rtol:.3g}, scale = ‖∂f/∂x · x‖₂ = "
             f"{scale:.3g} (the change of f along x itself)")
    msg = (f"{name}: no convergence: the solver's x has residual ‖f(x, *params)‖₂ "
           + (f"= {res:.3g} > {limit:.3g} = atol + rtol·scale with {parts}. "
              if np.isfinite(res) else f"that is not finite ({parts}). "))
    extra = getattr(accept.result, "message", None)
    if extra is not None and getattr(accept.result, "success", True) is False:
        msg += f"The solver reported failure: {extra!s}. "
    if np.isfinite(res) and scale == 0 and accept.atol == 0:
        msg += ("The scale is 0 (x = 0, f flat along x, or f not finite on either side "
                "of x), so only atol can accept a root here: if x is the root, give atol "
                "(in f's units). ")
    msg += ("Tighten the solver's tolerance (the implicit derivative is only as accurate as "
            "the root); if the residual is f's rounding floor, pass a larger rtol or atol.")
    raise LinAlgError(msg)


def _solve_root(op: Op, name: str, f: Callable[..., Any], x0: NDArray[Any],
                solver: Callable[..., Any], params: tuple[Tensor, ...],
                accept: _Accept | None, dense_max: int, gmres_rtol: float,
                g_vjp_x: Callable[..., Any] | None = None) -> Tensor:
    """Run ``solver`` on plain values, check its result (``accept``; None: the solver
    checked it), and record the root as one node of ``op`` with the implicit rules."""
    dtype = _root_dtype(x0, params)
    x0 = x0.astype(dtype)
    shape = x0.shape
    call = _RootCall(f, shape, dtype, int(dense_max), name, gmres_rtol, g_vjp_x)
    plain = [detached(p) for p in params]

    def fun(x: ArrayLike) -> NDArray[Any]:     # (the solver may pass x by keyword)
        x = np.asarray(x)
        with _no_grad():
            r = _residual(call, Tensor._wrap(x.reshape(shape).astype(dtype)), plain)
        return r._data.reshape(x.shape)
    with outside_dual_level():   # the solver works on plain values
        result = solver(fun, x0.copy())
        sol = result
        if hasattr(sol, "x") and not isinstance(sol, (Tensor, np.ndarray)):
            sol = sol.x     # a scipy.optimize OptimizeResult
        sol = np.asarray(sol.numpy() if isinstance(sol, Tensor) else sol)
        if sol.size != x0.size:
            raise ShapeError(f"{name}: the solver returned {sol.size} values for "
                             f"{x0.size} unknowns (x0 has shape {shape})")
        sol = sol.reshape(shape).astype(dtype)
        if accept is not None:
            accept.result = result
            _check_root(name, fun, sol, accept)
    out: Tensor = apply1(op, params, sol, call)
    return out


def custom_root(f: Callable[..., ArrayLike], x0: ArrayLike,
                solver: Callable[[Callable[[NDArray[Any]], NDArray[Any]], NDArray[Any]], Any],
                *params: ArrayLike, rtol: float | None = None, atol: float | None = None,
                tol: float | None = None, dense_max: int = 200,
                gmres_rtol: float = 1e-12) -> Tensor:
    r"""The solution x* of ``f(x, *params) = 0``, differentiable in ``params``.

    Parameters
    ----------
    f : callable
        ``f(x, *params) -> residual`` of x's shape, in tenferro ops (see Notes).
    x0 : array_like
        The initial guess (any shape; real). The derivative in x0 is zero.
    solver : callable
        ``solver(fun, x0) -> x*`` with ``fun`` the plain NumPy function
        ``x -> f(x, *params)``; it may return an ndarray, a Tensor or a
        scipy.optimize result (its ``.x``).
    *params : array_like
        Real arrays/Tensors; the root is differentiable in them.
    rtol, atol : float, optional
        The acceptance test of the root (see Notes). Defaults: √eps of the dtype, 0.
    tol : float, optional
        Older spelling of an absolute tolerance: ``tol=t`` means ``atol=t, rtol=0``.
    dense_max : int, optional
        Largest ``x0.size`` for which ∂f/∂x is built densely. Default 200.
    gmres_rtol : float, optional
        Relative tolerance of gmres for larger systems. Default 1e-12.

    Returns
    -------
    Tensor
        x*, with the dtype of x0 promoted with the params' (integers count as float64).

    Raises
    ------
    LinAlgError
        If the root fails the acceptance test, ∂f/∂x is singular, or gmres fails.
    DTypeError
        If x0 or a parameter is complex or not numeric.
    ShapeError
        If f's residual does not have x's shape, both ``tol`` and ``rtol``/``atol`` are
        given, or a tolerance is negative or not finite.

    Notes
    -----
    Derivative: the implicit function theorem,
    :math:`dx^* = -A^{-1} B\, d\theta` with :math:`A = \partial f/\partial x`,
    :math:`B = \partial f/\partial\theta` (docs/rules.md, custom_root).

    f is a function of Tensors ``(x, *params) -> residual`` of x's shape, written in tenferro
    ops (or NumPy functions on Tensors) so that it can be differentiated; x0: the initial
    guess (any shape; real); solver: ``solver(fun, x0) -> x*`` with ``fun`` the plain NumPy
    function ``x ↦ f(x, *params)`` (any shape with x0's size in, the same shape out); it
    may return an ndarray, a Tensor, or a scipy.optimize result (its ``.x``) and may use
    any method: ``lambda fun, x0: scipy.optimize.root(fun, x0)``, a user's loop,
    or the minimiser of an objective whose gradient is f (close over the parameters'
    values, ``p.numpy()``). params: real arrays/Tensors (complex raises DTypeError).
    x* has the dtype of x0 promoted with the params' (integers count as float64).

    The solver's x* is accepted when ‖f(x*, *params)‖₂ ≤ atol + rtol·scale with
    scale = ‖∂f/∂x · x*‖₂, the change of f along x* itself (a central difference, two
    evaluations of f): f is no larger than a relative change rtol of x* would make it.
    Defaults: ``rtol`` = √eps of the dtype (1.5e-8 in float64, 3.5e-4 in float32; the
    tolerance scipy.optimize.root's default method converges to), ``atol`` = 0 (give one,
    in f's units, for a root at x = 0 or a residual at f's rounding floor). ``tol`` is the
    older spelling of an absolute tolerance: ``tol=t`` means ``atol=t, rtol=0``. A root
    that fails the test raises LinAlgError with the residual, the threshold and its parts
    (and the solver's message if a scipy.optimize result reports failure): the derivative
    is only as accurate as the root.

    The derivative follows the implicit function theorem
    (dx* = -A⁻¹ B dθ, A = ∂f/∂x, B = ∂f/∂θ) without unrolling the solver: reverse mode
    solves Aᵀλ = ḡ, then θ̄ = -Bᵀλ (one vjp of f); forward mode solves A dx = -B t. A is
    built densely (n reverse passes over f) when n = x0.size ≤ ``dense_max``; larger
    systems use gmres on the vjp/jvp operator (relative tolerance ``gmres_rtol``;
    LinAlgError if it fails). The derivative in x0 is zero. A singular A raises
    LinAlgError. Second order (create_graph, hvp) works when f is written in tenferro ops;
    it always uses the dense A (a differentiable solve), whatever n.

    Examples
    --------
    >>> import scipy.optimize
    >>> a = tf.tensor([2.0], requires_grad=True)
    >>> r = tf.custom_root(lambda x, a: x * x - a, np.array([1.0]),
    ...                    lambda fun, x0: scipy.optimize.root(fun, x0), a)
    >>> r
    tensor([1.41421356], grad_fn=custom_root)
    >>> tf.grad([r.sum()], [a])[0]         # d sqrt(a)/da = 1 / (2 sqrt(a))
    tensor([0.35355339])
    """
    params_t = _root_params(params, "custom_root")
    x0_a = _x0_array(x0, "custom_root")
    dtype = _root_dtype(x0_a, params_t)
    rtol_, atol_ = _tolerances("custom_root", rtol, atol, tol,
                               float(np.sqrt(np.finfo(dtype).eps)))
    return _solve_root(_ROOT_OP, "custom_root", f, x0_a, solver, params_t,
                       _Accept(rtol_, atol_, None), dense_max, gmres_rtol)


def _no_convergence(max_iter: int, steps: Sequence[float], norms: Sequence[float],
                    abs_step: float, rtol: float, atol: float) -> str:
    """fixed_point's error after max_iter iterations: the numbers, and a diagnosis of why
    (sign flips, a stall at g's rounding floor, iterates going to 0, slow or no
    contraction) with what to do about it."""
    step, norm = steps[-1], norms[-1]
    limit = atol + rtol * norm
    kmin = int(np.argmin(steps))
    msg = (f"fixed_point: no convergence after {max_iter} iterations: the last step "
           f"‖x_k+1 - x_k‖₂ = {step:.3g} (the residual ‖x - g(x)‖₂ at x_k) > atol + "
           f"rtol·‖x_k+1‖₂ = {atol:.3g} + {rtol:.3g}·{norm:.3g} = {limit:.3g}; the smallest "
           f"step was {steps[kmin]:.3g} (iteration {kmin + 1}). ")
    q = max(1, len(steps) // 4)
    recent, earlier = steps[-q:], steps[:-q]
    if abs_step <= limit < step:
        return msg + ("The iterates converge in absolute value but their signs flip (a "
                      "sign or phase freedom, as of eigenvectors or singular vectors): pass "
                      "gauge=, a function fixing the gauge of each iterate.")
    if atol == 0 and norm <= 1e-6 * max(norms):
        return msg + ("The iterates shrink towards x = 0, where a relative test cannot "
                      "pass: give an absolute tolerance atol (in x's units).")
    m = min(q, len(steps) - 1)
    # a converging (or diverging) iteration changes its step monotonically; one at a
    # rounding floor or in a limit cycle goes up and down
    shrinking = float(np.mean([b < a for a, b in zip(steps[-1 - m:], steps[-m:])])) if m else 0
    rate = (steps[-1] / steps[-1 - m]) ** (1 / m) if m and steps[-1 - m] > 0 else 1.0
    if earlier and (min(recent) > max(earlier) or (shrinking <= 0.2 and rate > 1)):
        return msg + ("The steps grow: g is not a contraction near x0 (start closer, or use "
                      "custom_root with a Newton-type solver).")
    if m and 0.2 < shrinking < 0.8:
        floor = float(np.median(recent))
        hint = (f"if that is the rounding floor of g, pass rtol >= {4 * floor / norm:.1g}; "
                if norm > 0 else "")
        return msg + (f"The steps stopped decreasing (median {floor:.3g} over the last {q} "
                      f"iterations): {hint}if g is not a contraction near x0 (a limit "
                      f"cycle, an unstable fixed point), start closer or use custom_root "
                      f"with a Newton-type solver.")
    if 0 < rate < 1 and limit > 0:
        more = int(np.ceil(np.log(limit / step) / np.log(rate)))
        return msg + (f"The steps shrink slowly (by {rate:.4g} per iteration; about {more} "
                      f"more iterations at this rate): raise max_iter, or use custom_root "
                      f"with a faster solver (Newton, Anderson).")
    return msg + ("The steps do not shrink (is g a contraction near x0?): start closer, or "
                  "use custom_root with a Newton-type solver.")


# fixed_point(compile=True)'s recorded maps: g -> {gauge: Compiled of gauge ∘ g}. Weak in
# g (the map holds g weakly too, so the entry goes with g); a g that cannot be weakly
# referenced gets a fresh recording per call.
_MAPS: weakref.WeakKeyDictionary[Any, dict[Any, Compiled]] = weakref.WeakKeyDictionary()


def _compiled_map(g: Callable[..., Any], gauge: Callable[..., Any] | None) -> Compiled:
    try:
        by_gauge = _MAPS.get(g)
        ref: Callable[[], Any] = weakref.ref(g)
    except TypeError:                        # not weakly referable: not kept
        by_gauge, ref = None, (lambda: g)
    if by_gauge is not None and gauge in by_gauge:
        return by_gauge[gauge]

    def big_g(x: Tensor, *p: Tensor) -> Any:
        y = ref()(x, *p)
        if gauge is None:
            return y
        return gauge(y if isinstance(y, Tensor) else Tensor._wrap(np.asarray(y)), *p)
    big_g.__name__ = getattr(g, "__name__", "g")
    compiled = _compile(big_g)
    if isinstance(ref, weakref.ref):
        _MAPS.setdefault(g, {})[gauge] = compiled
    return compiled


def fixed_point(g: Callable[..., ArrayLike], x0: ArrayLike, *params: ArrayLike,
                gauge: Callable[..., ArrayLike] | None = None, rtol: float | None = None,
                atol: float | None = None, tol: float | None = None, max_iter: int = 1000,
                dense_max: int = 200, gmres_rtol: float = 1e-12,
                compile: bool = False) -> Tensor:
    r"""The fixed point x* = g(x*, *params) by plain iteration, differentiable in ``params``.

    Parameters
    ----------
    g : callable
        The map ``g(x, *params) -> x'`` in tenferro ops.
    x0 : array_like
        The first iterate (real; any shape).
    *params : array_like
        Real arrays/Tensors; the fixed point is differentiable in them.
    gauge : callable, optional
        ``gauge(x, *params) -> x'`` fixing the gauge of each iterate (see Notes).
    rtol, atol : float, optional
        The stopping test (see Notes). Defaults: 1e-10 (float64) or 3e-4 (float32), and 0.
    tol : float, optional
        Older spelling of an absolute tolerance: ``tol=t`` means ``atol=t, rtol=0``.
    max_iter : int, optional
        Most iterations before LinAlgError. Default 1000.
    dense_max : int, optional
        Largest ``x0.size`` for which the implicit system is built densely. Default 200.
    gmres_rtol : float, optional
        Relative tolerance of gmres for larger systems. Default 1e-12.
    compile : bool, optional
        Replay the map recorded by :func:`tenferro.compile` (see Notes). Default False.

    Returns
    -------
    Tensor
        x*, differentiable in ``params``.

    Raises
    ------
    LinAlgError
        After ``max_iter`` iterations without convergence (with a diagnosis), at once on
        non-finite values from g, or when differentiating if :math:`I - \partial G/\partial x`
        is singular.
    DTypeError
        If x0 or a parameter is complex or not numeric.
    ShapeError
        If g changes the shape of x, ``max_iter < 1``, or the tolerances are invalid.
    TypeError
        If ``gauge`` is not callable.

    Notes
    -----
    Derivative: the implicit one of :math:`x - G(x, \theta) = 0`,
    :math:`dx^* = (I - \partial G/\partial x)^{-1} \partial G/\partial\theta\, d\theta`
    (docs/rules.md, custom_root).

    Iterates ``x_k+1 = G(x_k)`` on plain values from x0, with G = g, or
    ``G(x) = gauge(g(x, *params), *params)`` when a ``gauge`` is given, and stops at the
    first k with

        ‖x_k+1 - x_k‖₂ ≤ atol + rtol·‖x_k+1‖₂

    returning x_k+1. The step is the residual ‖f(x_k)‖₂ of f(x) = x - G(x) at x_k, so the
    stopping test is the acceptance test: there is no second one. For a map contracting
    by ρ, x_k+1 is within about ρ/(1 - ρ) times the step of x*. Defaults: ``rtol`` =
    1e-10 in float64 and 3e-4 in float32 (above the rounding floor of iterations through
    SVDs/eigendecompositions, measured at 1e-14..1.3e-11 relative in float64 and ~5e-5 in
    float32 for a CTMRG), ``atol`` = 0 (give one, in x's units, for a fixed point at
    x = 0). ``tol`` is the older spelling of an absolute tolerance: ``tol=t`` means
    ``atol=t, rtol=0``. After ``max_iter`` iterations without convergence, LinAlgError
    with the last and smallest steps, the threshold and a diagnosis (signs that flip: pass
    a gauge; a stall at g's rounding floor: the rtol that would pass; iterates shrinking
    to 0: pass atol; a slow contraction: the iterations still needed; growing steps).
    Non-finite values from g raise LinAlgError at once.

    gauge: ``gauge(x, *params) -> x'`` fixes the gauge of an iterate, for maps that
    converge only up to a gauge transformation (the sign of eigenvectors or singular
    vectors, as of CTMRG environments): e.g. multiply each column by the sign of its
    largest-magnitude entry. It is part of the map: x* = gauge(g(x*, θ), θ), and the
    derivative is that of this map. A gauge chosen from the values (a sign) is piecewise
    constant: compute the choice from payloads (``x.numpy()``) and apply it with tenferro
    ops (``x * tf.as_tensor(s)``), so the derivative is that of x ↦ s ⊙ x with s fixed at
    the solution. The gauge must leave no continuous freedom (else I - ∂G/∂x is singular:
    LinAlgError when differentiating).

    g (and gauge) must be functions of Tensors in tenferro ops. The derivative is the
    implicit one of ``f(x, θ) = x - G(x, θ) = 0`` (:func:`custom_root`):
    dx* = (I - ∂G/∂x)⁻¹ ∂G/∂θ dθ, exact at the fixed point, without unrolling the
    iteration. A faster solver (Anderson, Newton): use
    ``custom_root(lambda x, *p: x - g(x, *p), x0, solver, *params)``.

    compile: iterate with the map recorded once by :func:`tenferro.compile` at the first
    iteration and replayed at the others, without the per-op Python (off by default).
    The recording is kept with g for later calls with the same g and gauge (function
    objects) and params of the same shapes and dtypes, as ``jax.jit`` keeps a function's
    traces. As under ``jax.jit``, what g reads besides x and the params is fixed when it
    is recorded: NumPy random numbers, closures or globals that change from call to call
    would be constants of the replay, so turn it on for maps that are pure functions of
    (x, *params) (pass what changes as a param). Then the iterates are those of the eager map bit for bit (the replay is
    checked against the eager step when recorded). A map that cannot be replayed (a value
    read with ``.numpy()``, a comparison: docs/guide/compile.md) runs eagerly, with the
    same result; ``tf.compile(lambda x, *p: gauge(g(x, *p), *p)).explain()`` says why.
    Index choices made with tenferro ops (``tf.argsort``, ``tf.argmax``, ``tf.sign``,
    indexing by them) are replayed with the new values. For the implicit derivative the
    GMRES products (n > dense_max) replay the map's pullbacks too (the same values as
    the eager reverse passes); the dense and second-order paths run eagerly.

    Examples
    --------
    >>> a = tf.tensor([2.0], requires_grad=True)
    >>> x = tf.fixed_point(lambda x, a: 0.5 * (x + a / x), np.array([1.0]), a)
    >>> x
    tensor([1.41421356], grad_fn=fixed_point)
    >>> tf.grad([x.sum()], [a])[0]
    tensor([0.35355339])
    """
    params_t = _root_params(params, "fixed_point")
    x0_a = _x0_array(x0, "fixed_point")
    dtype = _root_dtype(x0_a, params_t)
    rtol_, atol_ = _tolerances("fixed_point", rtol, atol, tol,
                               _FIXED_POINT_RTOL[dtype.itemsize])
    if gauge is not None and not callable(gauge):
        raise TypeError(f"fixed_point: gauge must be a function (x, *params) -> x, got "
                        f"{type(gauge).__name__}")
    n_iter = int(max_iter)
    if n_iter < 1:
        raise ShapeError(f"fixed_point: max_iter = {max_iter} must be at least 1")
    plain = [detached(p) for p in params_t]

    def big_g(x: Tensor, *p: Tensor) -> Any:
        y = g(x, *p)
        if gauge is None:
            return y
        return gauge(y if isinstance(y, Tensor) else Tensor._wrap(np.asarray(y)), *p)

    # the iteration's map, recorded at its first step and replayed after (tf.compile;
    # it runs eagerly, with the same values, where the recording declines); kept for
    # later calls with the same g and gauge, as jax.jit keeps a function's traces
    compiled = _compiled_map(g, gauge) if compile else None
    step: Callable[..., Any] = big_g if compiled is None else compiled
    body: list[Any] = [None]     # the replayed map of x alone (after the first step)

    def apply_map(x: NDArray[Any], k: int) -> NDArray[Any]:
        y: Any = None
        if body[0] is not None:
            try:
                y = body[0](x)
            except Exception:    # noqa: BLE001  (an op failed: the eager step raises)
                y = None
        if y is None:
            with _no_grad():
                y = step(Tensor._wrap(x), *plain)
            if compiled is not None and k == 1:
                # the params do not change: what reads only them runs once (loop_body)
                body[0] = compiled.loop_body((Tensor._wrap(x), *plain), 0)
        x_new = np.asarray(y._data if isinstance(y, Tensor) else y, dtype=x.dtype)
        if x_new.shape != x.shape:
            raise ShapeError(f"fixed_point: {'gauge(g(x))' if gauge else 'g(x, *params)'} "
                             f"has shape {x_new.shape} but x has shape {x.shape}")
        if not np.isfinite(x_new).all():
            raise LinAlgError(f"fixed_point: {'gauge(g(x))' if gauge else 'g(x, *params)'}"
                              f" returned non-finite values at iteration {k}; g must map "
                              f"finite iterates to finite values")
        return x_new

    def iterate(fun: Callable[[NDArray[Any]], NDArray[Any]], x: NDArray[Any]) -> NDArray[Any]:
        # the step x_k+1 - x_k from G directly: fun(x) = x - G(x) would cost an extra call
        steps: list[float] = []
        norms: list[float] = []
        x_prev = x
        for k in range(1, n_iter + 1):
            x_new = apply_map(x, k)
            step = _norm(x_new - x)
            norm = _norm(x_new)
            x_prev, x = x, x_new
            if step <= atol_ + rtol_ * norm and np.isfinite(step + norm):
                return x
            steps.append(step)
            norms.append(norm)
        abs_step = float(np.linalg.norm(np.abs(x) - np.abs(x_prev)))
        raise LinAlgError(_no_convergence(n_iter, steps, norms, abs_step, rtol_, atol_))

    def f(x: Tensor, *p: Tensor) -> Any:
        # (eager: with compile, the GMRES products use the step's replayed pullbacks
        # directly, _replayed_rmatvec; the rest of the derivative is one reverse pass)
        return x - big_g(x, *p)
    f.__name__ = getattr(g, "__name__", "g")
    g_vjp_x = None
    if compiled is not None:
        def g_vjp_x(y: Any, p: Sequence[Any]) -> Any:
            return compiled.pullback((Tensor._wrap(_payload(y)),
                                      *[Tensor._wrap(_payload(q)) for q in p]), 0)
    return _solve_root(_FIXED_POINT_OP, "fixed_point", f, x0_a, iterate, params_t, None,
                       dense_max, gmres_rtol, g_vjp_x)
