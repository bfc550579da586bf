"""tf.compile: record a function's ops once, replay them on new inputs without the Python.

A program that is a Python loop of small ops (a Kalman filter, a CTMRG) spends most of
its time in the Python around NumPy: argument handling, Tensor and Node objects, the
graph walk, the collector. ``compile(f)`` runs f once on traced inputs and keeps the ops
it recorded (the *trace*). Later calls with inputs of the same shapes and dtypes replay
the trace: each op's primal again on plain arrays (``Op.replay``), and, when a gradient
is asked for, each op's pullback in reverse order (``Op.vjp``), with no Tensors, nodes or
graph walk in between. The whole call is one node of the caller's graph.

Semantics (docs/guide/compile.md has the user's version):

* **Traced inputs** are the positional arguments that are float or complex Tensors or
  ndarrays. Everything else (Python scalars, strings, integer and boolean arrays, other
  objects) is static: part of the cache key, so a new value records anew. Keyword
  arguments are static too.
* **Constants**: arrays and Tensors that f reads but does not get as a traced argument
  (closures, globals, NumPy constants) are copied when f is recorded and used as they
  were then, as in ``jax.jit``.
* **Python control flow** that reads a traced value (``if loss.item() < tol``,
  ``float(x)``, ``bool(t)``, ``int(n)``) is a guard: the replay computes the same scalar
  and, if it differs, f is recorded again on the new inputs. A value that leaves the
  graph any other way (comparisons, ``argmax``, ``detach``, ``.numpy()``, an op under
  ``no_grad``, NumPy on the payload) could become a silent constant, so such an f is not
  replayed: it runs eagerly on every call, and ``explain()`` says why.
* **Errors** are the eager ones: a replay that meets a failure (a matrix not positive
  definite, a singular solve, non-finite input) runs f eagerly, which raises the op's
  own error, or returns its result if the op would not have raised.
* **Derivatives**: reverse mode (tf.grad, backward, value_and_grad) replays the
  pullbacks. Higher orders (create_graph, tf.hessian) and forward mode (a dual level, tf.jvp)
  run f eagerly: they are exact, at the eager speed.

Replay checks itself when it records: the trace is replayed at once on the recording's
inputs and must give the recorded values bit for bit, or f is not replayed (an op whose
replay rule disagrees with its eager primal is a bug this catches before it matters).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ._capture import (Decline, GuardFailed, RecordingBusy, Trace, build,
                       forward_mode_active, recording, signature, traced_leaves, verify,
                       wants_grad)
from ._engine import apply
from ._errors import UnsupportedADError
from ._ops.registry import defop
from ._rule_api import nested_vjp
from ._tensor import Tensor
from .autograd import enable_grad

__all__ = ["compile", "Compiled"]

# recordings in a row that a guard made (a value read as a Python number changed) after
# which a signature runs eagerly
_MAX_GUARD_FAILURES = 3


# ---- the call as one node of the caller's graph ------------------------------------------

def _call_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    trace, run, bound = ctx
    if any(isinstance(g, Tensor) for g in gs) or any(isinstance(x, Tensor) for x in xs):
        # create_graph (a higher order): f again, eagerly, on the caller's Tensors
        wanted = [i for i, n in enumerate(needs) if n]
        res = nested_vjp(bound, xs, gs, wanted, create_graph=True)
        out: list[Any] = [None] * len(xs)
        for i, r in zip(wanted, res):
            out[i] = r
        return tuple(out)
    return trace.backward(run, tuple(gs), tuple(needs))


def _call_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    raise UnsupportedADError("a tf.compile'd call carries no forward-mode rule: with a dual "
                             "level active it runs eagerly; call it inside the level")


_CALL_OP = defop("compiled_call", _call_vjp, _call_jvp,
                 doc="one call of a tf.compile'd function: its trace replayed")


# ---- the compiled function ----------------------------------------------------------------

class Compiled:
    """A function whose ops are recorded once per input signature and replayed (see
    :func:`compile`).

    Parameters
    ----------
    f : callable
        The function.

    Notes
    -----
    Calling it is ``f(*args, **kwargs)``, replayed from the trace of the signature when
    there is one; :meth:`explain` says, per input signature, ``"replayed"`` or why its
    calls run eagerly.

    Examples
    --------
    >>> f = tf.compile(lambda a: (a * a).sum())
    >>> f
    <tf.compile of '<lambda>'>
    """

    def __init__(self, f: Callable[..., Any]) -> None:
        self.f = f
        self._cache: dict[Any, Trace | str] = {}
        self.records = 0       # recordings made (a new signature, or a guard that changed)
        self.replays = 0       # calls answered by a replay
        self.eager_calls = 0   # calls run eagerly (declined, forward mode, failures)
        functools.update_wrapper(self, f)

    def explain(self) -> dict[str, str]:
        """Per input signature: ``"replayed"``, or why its calls run eagerly.

        A signature is the traced arguments' dtypes and shapes and the static arguments'
        values.

        Returns
        -------
        dict of str to str
            Signature description -> ``"replayed"`` or the reason.
        """
        return {_describe(k): ("replayed" if isinstance(v, Trace) else v)
                for k, v in self._cache.items()}

    def __repr__(self) -> str:
        return f"<tf.compile of {getattr(self.f, '__name__', self.f)!r}>"

    # ---- a call ------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        traced, key = signature(args, kwargs)
        if key is None or forward_mode_active():
            return self._eager(args, kwargs)     # unhashable static input; forward mode
        entry = self._cache.get(key)
        if entry is None:
            return self._record(key, args, kwargs, traced)
        if isinstance(entry, str):
            return self._eager(args, kwargs)
        return self._replay(entry, key, args, kwargs, traced)

    def _eager(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.eager_calls += 1
        return self.f(*args, **kwargs)

    def _replay(self, trace: Trace, key: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any], traced: list[int], fresh: bool = False) -> Any:
        ins = [args[i] for i in traced]
        arrays = [x._data if isinstance(x, Tensor) else x for x in ins]
        grad = wants_grad(ins)
        try:
            outs, run = trace.forward(arrays)
        except GuardFailed:
            if trace.guard_failures >= _MAX_GUARD_FAILURES:
                self._cache[key] = (
                    "f reads a traced value as a Python number (t.item(), float(t), "
                    "int(t), ...) that changes between calls, so each call would record "
                    "anew; compute with tensors instead (tf.where, arithmetic)")
                return self._eager(args, kwargs)
            return self._record(key, args, kwargs, traced, trace.guard_failures + 1)
        except Exception:
            # an op failed: the eager call raises the op's own error (or, where the
            # replay's check is stricter than the op's, gives its result)
            return self._eager(args, kwargs)
        self.replays += 1
        if not fresh:
            trace.guard_failures = 0      # a replay of an older recording: guards held
        return self._wrap(trace, outs, run, args, kwargs, traced, ins, grad)

    def _wrap(self, trace: Trace, outs: list[Any], run: Any, args: tuple[Any, ...],
              kwargs: dict[str, Any], traced: list[int], ins: list[Any], grad: bool) -> Any:
        if grad:
            tensors = tuple(x if isinstance(x, Tensor) else Tensor._wrap(x) for x in ins)
            results = apply(_CALL_OP, tensors, tuple(outs),
                            (trace, run, self._bound(args, kwargs, traced)))
        else:
            results = tuple(Tensor._wrap(o) for o in outs)
        if trace.out_kind == "tensor":
            return results[0]
        return list(results) if trace.out_kind == "list" else tuple(results)

    def _bound(self, args: tuple[Any, ...], kwargs: dict[str, Any],
               traced: list[int]) -> Callable[..., tuple[Any, ...]]:
        """f of the traced inputs alone, returning a tuple (for the eager higher orders)."""
        f = self.f

        def bound(*xs: Any) -> tuple[Any, ...]:
            full = list(args)
            for i, x in zip(traced, xs):
                full[i] = x
            out = f(*full, **kwargs)
            return (out,) if isinstance(out, Tensor) else tuple(out)
        return bound

    def loop_body(self, args: tuple[Any, ...], vary: int) -> Callable[[Any], Any] | None:
        """For a loop that calls f with ``args`` changing only ``args[vary]`` (an ndarray
        or Tensor of the same shape and dtype, as tf.fixed_point's iteration): ``body(x)``,
        the payload of f's output for ``args[vary] = x`` by the replayed trace, with the
        ops that read only the other arguments computed once (loop invariants); None
        when this signature is not replayed (not recorded yet, declined, guards, a
        result that is not one Tensor). Forward only; ``body`` raises where an op fails
        (the eager call then gives the op's own error)."""
        traced, key = signature(args, {})
        entry = self._cache.get(key) if key is not None else None
        if not isinstance(entry, Trace) or entry.out_kind != "tensor" or vary not in traced:
            return None
        arrays = [a._data if isinstance(a, Tensor) else a for a in (args[i] for i in traced)]
        try:
            body = entry.loop_body(arrays, traced.index(vary))
        except Exception:      # an op failed on these values: the caller runs eagerly
            return None
        if body is None:
            return None

        def run(x: Any) -> Any:
            return body(x)[0]
        return run

    def pullback(self, args: tuple[Any, ...], wrt: int) -> Callable[[Any], Any] | None:
        """``vjp(u)``: the cotangent of ``args[wrt]`` for the output cotangent ``u`` (an
        ndarray of the output's shape), by the trace's pullbacks replayed at ``args``
        (only those on a path from ``args[wrt]``), without the engine: for a product
        applied many times (an iterative solver's). None when this signature is not
        replayed with a gradient (not recorded yet, declined, a guard that reads another
        value, a failing op, a result that is not one Tensor)."""
        traced, key = signature(args, {})
        entry = self._cache.get(key) if key is not None else None
        if not isinstance(entry, Trace) or entry.out_kind != "tensor" or wrt not in traced:
            return None
        arrays = [a._data if isinstance(a, Tensor) else a for a in (args[i] for i in traced)]
        try:
            _, run = entry.forward(arrays)
        except Exception:      # a guard or an op failed: the caller's eager way
            return None
        k = traced.index(wrt)
        needs = tuple(i == k for i in range(len(traced)))

        def vjp(u: Any) -> Any:
            return entry.backward(run, (u,), needs)[k]
        return vjp

    # ---- a recording -------------------------------------------------------------------
    def _record(self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                traced: list[int], guard_failures: int = 0) -> Any:
        leaves = traced_leaves([args[i] for i in traced])
        full = list(args)
        for i, leaf in zip(traced, leaves):
            full[i] = leaf
        try:
            with recording() as rec, enable_grad():
                self.records += 1
                out = self.f(*full, **kwargs)
        except RecordingBusy:    # another thread records: this call runs eagerly
            return self._eager(args, kwargs)
        except Exception as e:   # a failure of f itself, or of tracing it
            result = self._eager(args, kwargs)     # raises f's own error if it is one
            self._cache[key] = f"recording raised {type(e).__name__}: {e}"
            return result
        try:
            trace = build(rec, leaves, out, args, traced)
            verify(trace, rec, leaves)
        except Decline as e:
            self._cache[key] = str(e)
            plain = _detached(out) if not wants_grad([args[i] for i in traced]) else None
            if plain is None:
                return self._eager(args, kwargs)
            # no gradient asked for: the recording's own result is the eager one (f ran
            # on copies of the inputs), so f does not run a second time
            self.eager_calls += 1
            return plain
        trace.guard_failures = guard_failures
        self._cache[key] = trace
        return self._replay(trace, key, args, kwargs, traced, fresh=True)


def _detached(out: Any) -> Any:
    """A recording's result as plain Tensors (None: not a Tensor or a tuple/list of them)."""
    if isinstance(out, Tensor):
        return Tensor._wrap(out._data)
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        res = [Tensor._wrap(o._data) for o in out]
        return res if isinstance(out, list) else tuple(res)
    return None


def _describe(key: Any) -> str:
    """A signature as ``(float64[5], int64[3]=..., 2, mode='x')``."""
    parts = []
    for p in key[:-1]:
        if p[0] == "t":
            parts.append(f"{np.dtype(p[2]).name}[{','.join(map(str, p[1]))}]")
        elif p[0] == "a":
            parts.append(f"{np.dtype(p[2]).name}[{','.join(map(str, p[1]))}]=...")
        else:
            parts.append(repr(p[2]))
    parts += [f"{k}={v!r}" for k, v in key[-1]]
    return "(" + ", ".join(parts) + ")"


def compile(f: Callable[..., Any]) -> Compiled:
    """``f`` recorded once per input signature and replayed from its trace afterwards.

    f takes Tensors or ndarrays (the traced inputs: float and complex positional arguments)
    and other static arguments, and returns a Tensor or a tuple or list of Tensors. The first
    call with a new signature (shapes and dtypes of the traced inputs, values of the static
    ones) runs f eagerly and records its ops; later calls replay them on the new values, the
    forward and, when a gradient is asked for, the pullbacks, with no per-op Python. The
    result and its derivatives are those of the eager call, bit for bit in the forward. See
    the module's docstring (and docs/guide/compile.md) for when a call runs eagerly instead:
    a guard that reads another value records anew; a value leaving the graph, an op without a
    replay rule, forward mode and higher orders run f eagerly (``Compiled.explain()``).

    Parameters
    ----------
    f : callable
        The function to record.

    Returns
    -------
    Compiled
        A callable with ``f``'s signature.

    Raises
    ------
    TypeError
        If ``f`` is not callable.
    UnsupportedADError
        (when called) If a compiled call meets a dual tensor (forward mode): call ``f``
        itself there.

    Notes
    -----
    Derivative: that of ``f`` (the trace replays the same ops and pullbacks).

    Examples
    --------
    >>> f = tf.compile(lambda a: (a * a).sum())
    >>> f(tf.tensor([1.0, 2.0]))
    tensor(5.)
    >>> x = tf.tensor([3.0, 4.0], requires_grad=True)
    >>> tf.grad([f(x)], [x])[0]
    tensor([6., 8.])
    """
    if not callable(f):
        raise TypeError(f"tf.compile needs a function, got {type(f).__name__}")
    return Compiled(f)
