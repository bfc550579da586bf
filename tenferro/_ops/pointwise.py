"""The pointwise factory: differentiable elementwise functions from their partial derivatives.

One place builds the elementwise ops of ``tenferro._ops.elementwise`` and of
``tenferro.special``: ``unary(name, f, deriv)`` records ``y = f(x)`` from ``c = f'(x)``
(``deriv(x, y)``), ``binary(name, f, derivs)`` records ``y = f(a, b)`` from the partial
derivatives (``derivs(a, b, y, needs) -> (∂y/∂a, ∂y/∂b)``), and both derive the rules
(docs/rules.md#elementwise, the convention of docs/design.md#complex-numbers):

* reverse: x̄ = ȳ·conj(∂f/∂x), summed back to each input's shape (broadcasting);
* forward: ẏ = Σ ∂f/∂x·ẋ over the inputs with a tangent;
* create_graph: the same two rules run on Tensors (a partial derivative written with
  NumPy functions and operators is then recorded, so it is differentiable again).

What differs between the callers is a parameter, not another factory: the op's name
(``special.erf``), the promotion (integers to NumPy 2's floats, or kept as ``square``
keeps them), the check of complex inputs (and its message), the result's dtype (SciPy's
ufuncs without float32 loops return float64: ``same_dtype`` casts back), warnings off in
the rules (``quiet``), and the fast paths of arithmetic. An op whose rule has a cheaper
form than ``ȳ·conj(∂f)`` (add's x̄ = ȳ, no multiply) or a compiled copy on the tape
(``kernel=VJP_EXP``, tape.pyx's vjp_kernel, which a plain backward runs instead) passes its
rules themselves (``vjp_a``/``vjp_b``/``vjp_both``/``jvp``) and keeps them.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from .._engine import apply1
from .._kernels import load as _load_kernel
from .._tensor import Tensor
from .registry import Op, defop, register
from ._util import (broadcast_shape, conj, floating, floating_args, operands, require_real,
                    to_tensor, unbroadcast)

# A rule's value: an ndarray in a plain backward, a Tensor under create_graph=True.
Rule = Callable[..., Any]
# derivs(a, b, y, needs) of a function of two (or more) arguments: the partial derivatives,
# None where not needed (needs[i] false) or where identically zero.
Derivs = Callable[..., Sequence[Any]]


def arr(out: Any) -> NDArray[Any]:
    """A ufunc result as an ndarray: on 0-d inputs NumPy returns a scalar instead."""
    return out if type(out) is np.ndarray else np.asarray(out)


def cast(out: Any, dtype: DTypeLike) -> NDArray[Any]:
    """A ufunc result as an ndarray of ``dtype``."""
    a = arr(out)
    return a if a.dtype == dtype else a.astype(dtype)


def bcast(t: Any, shape: tuple[int, ...]) -> Any:
    return t if t.shape == shape else np.broadcast_to(t, shape)


def promote(a: Any, b: Any, dt: Any) -> tuple[Any, Any]:
    """Both inputs in the output's dtype ``dt``, as the primal computed them. Otherwise a
    rule mixing float32 and float64 loses precision (log(a) of a float32 base in power), and
    a real input of a complex op leaves the complex branch (log of a negative real base of
    a complex power is NaN in real arithmetic)."""
    if a.dtype != dt:
        a = a.astype(dt)
    if b.dtype != dt:
        b = b.astype(dt)
    return a, b


def quiet(rule: Rule) -> Rule:
    """Run a rule with NumPy's floating-point warnings off: log 0, 0/0 in a discarded
    branch of a where are expected. It costs ~2 µs per call, so rules that are
    warning-free go without."""
    def wrapped(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return rule(*args)
    return wrapped


def _named(f: Any, name: str, module: str | None, doc: str) -> None:
    """The public function's name and docstring; its module is the caller's (the API
    pages group names by module, as NumPy's dispatch names them in messages)."""
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    if module is not None:
        f.__module__ = module


# ---- one input -----------------------------------------------------------------------------

def unary_rules(deriv: Callable[[Any, Any], Any], quiet_rules: bool = False
                ) -> tuple[Rule, Rule]:
    """The rules of y = f(x) from f'(x) = deriv(x, y): x̄ = ȳ·conj(f'(x)), ẏ = f'(x)·ẋ."""
    def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
        return (gs[0] * conj(deriv(xs[0], ys[0])),)

    def jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
        return (ts[0] * deriv(xs[0], ys[0]),)

    return (quiet(vjp), quiet(jvp)) if quiet_rules else (vjp, jvp)


def unary(name: str, ufunc: Callable[..., Any], deriv: Callable[[Any, Any], Any], *,
          op_name: str | None = None, primal: Callable[[Any], Any] | None = None,
          complex: bool = True, check: Callable[[Tensor], None] | None = None,
          keeps_int: bool = False, same_dtype: bool = False, quiet_rules: bool = False,
          kernel: int = 0, op_doc: str = "", doc: str = "", module: str | None = None,
          methods: Sequence[str] = (), ufuncs: Sequence[Any] = ()
          ) -> Callable[[ArrayLike], Tensor]:
    """Register y = ufunc(x) with f'(x) = deriv(x, y), holomorphic for complex x.

    ``op_name``: the op's name (default ``name``). ``primal``: computes y on the payload
    instead of ``ufunc`` (special cases). ``complex``: complex inputs allowed; otherwise
    ``check(x)`` raises for them (default: ``require_real``'s DTypeError). Integer and bool
    inputs become float64 first, unless ``keeps_int`` (square: NumPy keeps the integer
    dtype). ``same_dtype``: the result is cast to the input's dtype (SciPy's ufuncs
    without a float32 loop). ``quiet_rules``: the rules run with NumPy's warnings off.
    ``kernel``: the tape's compiled copy of the reverse rule. The function is registered as
    the Tensor ``methods`` and as the override of the NumPy ``ufuncs``."""
    compute: Callable[[Any], Any] = ufunc if primal is None else primal
    vjp, jvp = unary_rules(deriv, quiet_rules)
    op = defop(op_name or name, vjp, jvp, complex=complex, kernel=kernel, doc=op_doc)
    if same_dtype:
        op.replay = lambda ctx: lambda x: cast(compute(x), x.dtype)
    else:
        op.replay = lambda ctx: compute
    fast_kinds = "fc" if complex else "f"
    if not complex and check is None:
        def check(x: Tensor) -> None:
            require_real(name, x)

    if same_dtype:
        def f(x: ArrayLike, /) -> Tensor:
            if type(x) is not Tensor or x._data.dtype.kind not in fast_kinds:
                x = floating(to_tensor(x))
                if not complex:
                    check(x)  # type: ignore[misc]  # (set above when not complex)
            d = x._data
            return apply1(op, (x,), cast(compute(d), d.dtype))
    else:
        def f(x: ArrayLike, /) -> Tensor:
            if type(x) is Tensor and x._data.dtype.kind in fast_kinds:   # the common case
                return apply1(op, (x,), compute(x._data))
            x = to_tensor(x) if keeps_int else floating(to_tensor(x))
            if not complex:
                check(x)  # type: ignore[misc]  # (set above when not complex)
            return apply1(op, (x,), arr(compute(x._data)))

    _named(f, name, module, doc)
    register(f, methods=methods, ufuncs=ufuncs)
    return f


# ---- two or more inputs ----------------------------------------------------------------------

def partial_rules(derivs: Derivs, n: int, complex: bool = True, quiet_rules: bool = False
                  ) -> tuple[Rule, Rule]:
    """The rules of y = f(x₁, ..., xₙ) (broadcasting) from its partial derivatives
    ``derivs(x₁, ..., xₙ, y, needs)`` (binary functions) or ``derivs(x₁, ..., xₙ, needs)``
    (n >= 3; None for a partial not needed, or identically zero): x̄ᵢ = ȳ·conj(∂y/∂xᵢ)
    summed to xᵢ's shape, ẏ = Σᵢ ∂y/∂xᵢ·ẋᵢ. The inputs are cast to the output's dtype
    first (as the primal computed them)."""
    def cotangent(g: Any, d: Any, x: Any) -> Any:
        if d is None:      # identically zero: a zero cotangent, not ȳ·0 (inf·0 = NaN)
            return np.zeros(x.shape, g.dtype)
        return unbroadcast(g * (conj(d) if complex else d), x.shape)

    if n == 2:   # the common case, without the loops (it runs on every backward)
        def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
            g, y = gs[0], ys[0]
            a, b = promote(xs[0], xs[1], y.dtype)
            da, db = derivs(a, b, y, needs)
            return (cotangent(g, da, xs[0]) if needs[0] else None,
                    cotangent(g, db, xs[1]) if needs[1] else None)

        def jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
            y = ys[0]
            a, b = promote(xs[0], xs[1], y.dtype)
            ta, tb = ts
            da, db = derivs(a, b, y, (ta is not None, tb is not None))
            out = None if ta is None or da is None else ta * da
            if tb is not None and db is not None:
                out = tb * db if out is None else out + tb * db
            if out is None:      # every tangent meets a zero partial
                return (np.zeros(y.shape, y.dtype),)
            return (bcast(out, y.shape),)

        return (quiet(vjp), quiet(jvp)) if quiet_rules else (vjp, jvp)

    def vjp_n(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
        g, y = gs[0], ys[0]
        dt = y.dtype
        args = [v if v.dtype == dt else v.astype(dt) for v in xs]
        ds = derivs(*args, needs)
        return tuple(cotangent(g, d, x) if need else None
                     for x, d, need in zip(xs, ds, needs))

    def jvp_n(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
        y = ys[0]
        dt = y.dtype
        args = [v if v.dtype == dt else v.astype(dt) for v in xs]
        ds = derivs(*args, tuple(t is not None for t in ts))
        out = None
        for t, d in zip(ts, ds):
            if t is not None and d is not None:
                out = t * d if out is None else out + t * d
        if out is None:
            return (np.zeros(y.shape, y.dtype),)
        return (bcast(out, y.shape),)

    return (quiet(vjp_n), quiet(jvp_n)) if quiet_rules else (vjp_n, jvp_n)


# Python float or int scalars combined with a float or complex tensor (x * 1.01, x + 0.1,
# 1 - x) skip wrapping the scalar as a constant Tensor, broadcasting it and un-broadcasting
# its (unused) cotangent: ops of their own, one input, the scalar in ctx. NumPy 2 treats
# the scalar as weak (float32 tensor * 2.0 stays float32), as _weak_scalar does. Ints as
# large as 2**53 convert to floats exactly; larger ones take the general path, which
# reports an integer that does not fit.
SCALAR_INT_LIMIT = 2 ** 53


def scalar_operand(s: object, x: object) -> bool:
    """Whether ``x ∘ s`` (or ``s ∘ x``) can take the scalar fast path."""
    return (type(x) is Tensor and x._data.dtype.kind in "fc"
            and (type(s) is float or (type(s) is int and -SCALAR_INT_LIMIT <= s
                                      <= SCALAR_INT_LIMIT)))


# The scalar as a read-only 0-d array of the tensor's dtype. NumPy spends ~1.7k
# instructions (~30% of a 4-element multiply) converting a Python float operand on every
# call, ~2.8k for float32; with the 0-d array of the same value and dtype it computes the
# same bits (the weak scalar is converted to that dtype too) without that, in the forward
# and in the pullback (g * s). Float64 and float32 tensors only; per dtype a dict from the
# value (bounded: cleared when full). Zeros and NaN are not cached (0.0 and -0.0 are one
# dict key), nor a finite value that overflows float32 (NumPy warns on each such call).
F64, F32 = np.dtype(np.float64), np.dtype(np.float32)
CONSTANTS: dict[np.dtype[Any], dict[float, NDArray[Any]]] = {F64: {}, F32: {}}
CONSTANTS_MAX = 512


def constant(s: Any, dt: np.dtype[Any]) -> Any:
    """A Python float or int ``s`` as a cached read-only 0-d array of dtype ``dt``
    (float64 or float32), or ``s`` itself when it is not cached (zero, NaN, overflow to
    float32's infinity)."""
    cache = CONSTANTS[dt]
    c = cache.get(s)
    if c is not None:
        return c
    if s == 0 or s != s:
        return s
    with np.errstate(over="ignore"):
        c = np.array(s, dtype=dt)
    if math.isinf(c) and not math.isinf(s):
        return s
    c.flags.writeable = False
    if len(cache) >= CONSTANTS_MAX:
        cache.clear()
    cache[s] = c
    return c


# a + b and a − b of small real arrays of one shape without NumPy's dispatch (the same
# bits: _kernels/small_ops.pyx), for tf.compile's replay of the commonest ops of a loop
_small = _load_kernel("small_ops")
_SMALL_KERNELS: dict[Any, Callable[..., Any]] = {np.add: _small.add, np.subtract: _small.subtract}


def _replay_fn(ufunc: Callable[..., Any]) -> Callable[..., Any]:
    """``ufunc(a, b)`` for the replay: by the small kernel where it has one and covers the
    operands, else the ufunc itself."""
    kernel = _SMALL_KERNELS.get(ufunc)
    if kernel is None:
        return ufunc

    def fn(a: Any, b: Any) -> Any:
        out = kernel(a, b)
        return ufunc(a, b) if out is None else out
    return fn


def _replay_right(ufunc: Callable[..., Any]) -> Rule:
    """Op.replay of ``x ∘ c`` with the constant c in ctx (tenferro/compile.py)."""
    def replay(c: Any) -> Callable[..., Any]:
        fn = _replay_fn(ufunc)
        return lambda x: fn(x, c)
    return replay


def _replay_left(ufunc: Callable[..., Any]) -> Rule:
    """Op.replay of ``c ∘ x`` with the constant c in ctx."""
    return lambda c: functools.partial(_replay_fn(ufunc), c)


# ndarrays and NumPy scalars (c0 * t for an np.float64 c0: NumPy's scalars are not weak,
# so only one of the tensor's own dtype takes the one-input op, see binary's array_op)
_ARRAY_TYPES = (np.ndarray, np.float64, np.float32, np.complex128, np.complex64)


def binary(name: str, ufunc: Callable[..., Any], derivs: Derivs | None = None, *,
           vjp_a: Rule | None = None, vjp_b: Rule | None = None,
           vjp_both: Rule | None = None, jvp: Rule | None = None,
           op_name: str | None = None, complex: bool = True,
           check: Callable[[Tensor, Tensor], None] | None = None,
           before: Callable[[Tensor, Tensor], None] | None = None,
           floats: bool = False, same_dtype: bool = False, quiet_rules: bool = False,
           scalar_right: Op | None = None, scalar_left: Op | None = None,
           array_ops: bool = True, kernels: tuple[int, int, int] = (0, 0, 0),
           op_doc: str = "", doc: str = "", module: str | None = None,
           methods: Sequence[str] = (), rmethod: str | None = None,
           ufuncs: Sequence[Any] = ()) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    """Register y = ufunc(a, b) with broadcasting.

    The rules: from the partial derivatives ``derivs(a, b, y, needs)`` (``partial_rules``),
    or given, where a cheaper form exists: ``vjp_a(g, a, b, y)`` / ``vjp_b(...)`` the
    cotangents before un-broadcasting (or ``vjp_both(g, a, b, y)`` both, when they share
    work) and ``jvp(ta, tb, a, b, y)`` (None for a zero tangent).

    ``complex``: complex inputs allowed; otherwise ``check(a, b)`` raises for them (default
    ``require_real``'s DTypeError). ``before(a, b)``: further checks of the operands before
    anything is computed. ``floats``: integer and bool operands are converted first to the
    dtype of ``float_result_type`` (functions with a floating-point result);
    ``same_dtype``: the result is cast to NumPy's result dtype of the operands (SciPy's
    ufuncs without a float32 loop). ``scalar_right``/``scalar_left``: the op of
    ``ufunc(x, s)`` / ``ufunc(s, x)`` for a real Python scalar s (both or neither).
    ``array_ops``: ``x ∘ c`` for a constant ndarray c of x's dtype as a one-input op.
    ``kernels``: the tape's compiled copies of the rules of the op, of ``x ∘ c`` and of
    ``c ∘ x``, 0 for none. ``methods``/``rmethod``/``ufuncs``: the Tensor methods (the
    reflected one) and NumPy ufuncs it is registered as."""
    real_only = not complex
    if derivs is not None:
        vjp, jvp_rule = partial_rules(derivs, 2, complex, quiet_rules)
        # x ∘ c and c ∘ x call the partial of the tensor's argument alone
        need_a, need_b = (True, False), (False, True)

        def cot_a(g: Any, a: Any, b: Any, y: Any) -> Any:
            d = derivs(a, b, y, need_a)[0]
            return np.zeros(g.shape, g.dtype) if d is None else g * conj(d)

        def cot_b(g: Any, a: Any, b: Any, y: Any) -> Any:
            d = derivs(a, b, y, need_b)[1]
            return np.zeros(g.shape, g.dtype) if d is None else g * conj(d)

        def tangent(ta: Any, tb: Any, a: Any, b: Any, y: Any) -> Any:
            ds = derivs(a, b, y, (ta is not None, tb is not None))
            out = None
            for t, d in zip((ta, tb), ds):
                if t is not None and d is not None:
                    out = t * d if out is None else out + t * d
            return np.zeros(y.shape, y.dtype) if out is None else out

        vjp_a, vjp_b, vjp_both, jvp = cot_a, cot_b, None, tangent
    else:
        if jvp is None:
            raise TypeError(f"binary {name!r}: give derivs, or the rules (jvp and vjp_*)")
        if vjp_both is None:
            # vjp_a and vjp_b are given when vjp_both is not (the ignores: mypy cannot tie
            # them)
            def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
                g, y = gs[0], ys[0]
                a, b = promote(xs[0], xs[1], y.dtype)
                ga = (unbroadcast(vjp_a(g, a, b, y), xs[0].shape)  # type: ignore[misc]
                      if needs[0] else None)
                gb = (unbroadcast(vjp_b(g, a, b, y), xs[1].shape)  # type: ignore[misc]
                      if needs[1] else None)
                return ga, gb
        else:
            def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
                y = ys[0]
                a, b = promote(xs[0], xs[1], y.dtype)
                ga, gb = vjp_both(gs[0], a, b, y)
                return (unbroadcast(ga, xs[0].shape) if needs[0] else None,
                        unbroadcast(gb, xs[1].shape) if needs[1] else None)

        def jvp_rule(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
            y = ys[0]
            a, b = promote(xs[0], xs[1], y.dtype)
            return (bcast(jvp(ts[0], ts[1], a, b, y), y.shape),)

        if quiet_rules:
            vjp, jvp_rule = quiet(vjp), quiet(jvp_rule)

    op = defop(op_name or name, vjp, jvp_rule, complex=complex, kernel=kernels[0],
               doc=op_doc)
    if same_dtype:
        op.replay = lambda ctx: lambda a, b: cast(ufunc(a, b), np.result_type(a.dtype,
                                                                                b.dtype))
    else:
        op.replay = lambda ctx: _replay_fn(ufunc)
    if real_only and check is None:
        def check(a: Tensor, b: Tensor) -> None:
            require_real(name, a, b)

    # Tensor ∘ ndarray and ndarray ∘ Tensor of one float/complex dtype (C * P, u * d):
    # one-input ops with the ndarray in ctx, so neither the constant's Tensor nor its
    # (unused) cotangent is made. The rules are the op's own, called with the array in
    # the constant's place; promote keeps them right if NumPy's result dtype differs.
    def array_op_of(right: bool) -> Op:
        """The op of ``x ∘ c`` (right) or ``c ∘ x``: the rules with c in ctx."""
        k = 0 if right else 1                       # the tensor's position in (a, b)

        def vjp_const(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
            x, y = xs[0], ys[0]
            a, b = promote(x, ctx, y.dtype) if right else promote(ctx, x, y.dtype)
            if vjp_both is not None:
                g = vjp_both(gs[0], a, b, y)[k]
            else:   # (vjp_a and vjp_b are given when vjp_both is not, as above)
                g = (vjp_a if right else vjp_b)(gs[0], a, b, y)  # type: ignore[misc]
            return (unbroadcast(g, x.shape),)

        def jvp_const(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
            y = ys[0]
            if right:
                a, b = promote(xs[0], ctx, y.dtype)
                return (bcast(jvp(ts[0], None, a, b, y), y.shape),)
            a, b = promote(ctx, xs[0], y.dtype)
            return (bcast(jvp(None, ts[0], a, b, y), y.shape),)

        if quiet_rules:
            vjp_const, jvp_const = quiet(vjp_const), quiet(jvp_const)
        base = op_name or name
        aop = defop(base + "_array" if right else "array_" + base, vjp_const, jvp_const,
                    complex=complex, kernel=kernels[1] if right else kernels[2],
                    doc=op_doc)
        aop.replay = _replay_right(ufunc) if right else _replay_left(ufunc)
        return aop

    # x ∘ s and s ∘ x for a Python scalar s (in ctx); add and multiply use one op for
    # both sides (they commute, bit for bit)
    if scalar_left is not None and scalar_left is not scalar_right:
        scalar_left.replay = _replay_left(ufunc)
    if scalar_right is not None:
        scalar_right.replay = _replay_right(ufunc)
    array_right = array_left = None
    if array_ops:
        array_right, array_left = array_op_of(True), array_op_of(False)
    array_kinds = "f" if real_only else "fc"

    def array_op(x: Tensor, c: Any, right: bool) -> Tensor | None:
        """``x ∘ c`` (right) or ``c ∘ x`` for an ndarray or NumPy scalar ``c`` as a
        one-input op, or None when the general path must take it (another dtype, an
        integer tensor)."""
        d = x._data
        dt = d.dtype
        if c.dtype != dt or dt.kind not in array_kinds:
            return None
        if type(c) is not np.ndarray:
            # a NumPy scalar as the 0-d array a constant Tensor would hold (the rules'
            # scalar arithmetic then matches the general op's bit for bit); float64 and
            # float32 ones from the cache of the Python scalars' constants
            if dt is F64 or dt is F32:
                c = constant(c, dt)
            if type(c) is not np.ndarray:
                c = np.asarray(c)
        try:
            out = ufunc(d, c) if right else ufunc(c, d)
        except ValueError:
            broadcast_shape(name, d.shape, c.shape)
            raise
        return apply1(array_right if right else array_left,  # type: ignore[arg-type]
                      (x,), arr(out), c)

    def scalar_op(x: Tensor, s: Any, right: bool) -> Tensor:
        """``x ∘ s`` (right) or ``s ∘ x`` for a real Python scalar ``s``."""
        d = x._data
        dt = d.dtype
        c = constant(s, dt) if dt is F64 or dt is F32 else s
        if right:
            return apply1(scalar_right, (x,), ufunc(d, c), c)   # type: ignore[arg-type]
        return apply1(scalar_left, (x,), ufunc(c, d), c)        # type: ignore[arg-type]

    def f(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
        if scalar_right is not None:   # (_scalar_operand inlined for the common x * 2.0)
            t2 = type(x2)
            if t2 is float and type(x1) is Tensor:
                d = x1._data
                dt = d.dtype
                if dt is F64 or dt is F32:
                    c = constant(x2, dt)
                    return apply1(scalar_right, (x1,), ufunc(d, c), c)
                if dt.kind in "fc":
                    return apply1(scalar_right, (x1,), ufunc(d, x2), x2)
            # the ignores: scalar_operand(s, x) checked that x is a Tensor
            if t2 is not Tensor:
                if scalar_operand(x2, x1):
                    return scalar_op(x1, x2, True)     # type: ignore[arg-type]
            elif scalar_operand(x1, x2):
                return scalar_op(x2, x1, False)        # type: ignore[arg-type]
        if array_ops:
            t1, t2 = type(x1), type(x2)
            if t1 is Tensor and t2 in _ARRAY_TYPES:
                r = array_op(x1, x2, True)     # type: ignore[arg-type]
                if r is not None:
                    return r
            elif t2 is Tensor and t1 in _ARRAY_TYPES:
                r = array_op(x2, x1, False)    # type: ignore[arg-type]
                if r is not None:
                    return r
        if type(x1) is Tensor and type(x2) is Tensor and not (floats or real_only):
            a, b = x1, x2          # the common case: what operands() would return
        else:
            a, b = operands(x1, x2)
            # integer/bool operands: NumPy 2's promotion (float_result_type)
            if floats and (a._data.dtype.kind not in "fc" or b._data.dtype.kind not in "fc"):
                a, b = floating_args(a, b)
            if real_only:
                check(a, b)  # type: ignore[misc]  # (set above when real_only)
        if before is not None:
            before(a, b)
        try:
            out = ufunc(a._data, b._data)
        except ValueError:
            broadcast_shape(name, a.shape, b.shape)  # raises ShapeError if that is the cause
            raise
        if same_dtype:
            return apply1(op, (a, b), cast(out, np.result_type(a._data.dtype, b._data.dtype)))
        return apply1(op, (a, b), arr(out))

    def rf(b: ArrayLike, a: ArrayLike) -> Tensor:
        return f(a, b)

    _named(f, name, module, doc)
    register(f, methods=methods, ufuncs=ufuncs)
    if rmethod:
        register(rf, methods=(rmethod,))
    return f
