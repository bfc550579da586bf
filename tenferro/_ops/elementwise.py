"""Elementwise ops: arithmetic, transcendental functions, rounding, comparisons, bitwise.

Unary holomorphic functions are one line each: the derivative ``c = f'(x)`` written with
NumPy (``x`` the input, ``y`` the output), from which VJP ``x̄ = ȳ·conj(c)`` and JVP
``ẏ = c·ẋ`` follow (docs/rules.md#elementwise). Binary ops broadcast like NumPy and sum
their cotangents back to each input's shape.

Three kinds of results (the array API standard 2024.12 names every function here):

* differentiable (float/complex results): exp, log2, logaddexp, copysign, remainder, clip...
  A function with a floating-point result promotes as NumPy 2 (``float_result_type``
  in _dtypes.py, shared with tf.special and tf.stats): integer and bool inputs alone
  become float64; with a floating tensor they take NumPy 2's common dtype (int64 with
  float32: float64; int16 with float32: float32).
* piecewise constant with a floating-point result (round, floor, ceil, trunc, sign of a
  real tensor, floor_divide): a tensor whose derivative is exactly zero (not missing), as in
  PyTorch and JAX; integer inputs give integer tensors (rounding an integer is the identity).
  NumPy's own np.round/np.around/np.rint/np.floor/np.ceil/np.trunc/np.fix/np.floor_divide
  on a tensor return NumPy's ndarray of the payload (registry.NONDIFF), so ``np.round(t, 1)``
  works as in NumPy. ``sign`` of a complex tensor is z/|z|, which is differentiable.
* bool or integer results (comparisons, isnan, signbit, logical and bitwise ops, shifts)
  and nextafter: tensors without a gradient; NumPy's ufunc on a tensor returns NumPy's
  ndarray.
"""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike

import math
import operator

import numpy as np

from .._engine import apply1, as_view, note_escape
from .._errors import DTypeError
from .._kernels import load as _load_kernel
from .._tensor import Tensor
from .registry import Op, defop, register, register_nondiff
from ._util import (broadcast_shape, conj as _conj, floating_args, operands, payload,
                    require_real, to_tensor, unbroadcast)
from . import _docs
from .pointwise import (CONSTANTS, CONSTANTS_MAX, Derivs, arr, bcast, binary, unary)

__all__ = [
    "add", "subtract", "multiply", "divide", "power", "negative", "positive", "abs", "conj",
    "real", "imag", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos",
    "tan", "tanh", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh",
    "arctanh", "atan2", "hypot", "logaddexp", "copysign", "remainder", "maximum", "minimum",
    "where", "clip", "sign", "square", "reciprocal",
    "round", "floor", "ceil", "trunc", "floor_divide",
    # PyTorch/Python-style spellings (docs/design.md#ops names them)
    "pow", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arctan2",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "isnan", "isinf", "isfinite", "signbit", "nextafter",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift",
]

# A rule's value: an ndarray in a plain backward, a Tensor under create_graph=True.
_Rule = Callable[..., Any]

# The commonest ops declare a compiled copy of their VJP rule (``kernel=_tape.VJP_...``):
# tape.pyx's vjp_kernel makes the rule's NumPy calls in the same order for real payloads
# of one dtype and shape, and declines (runs the rule) otherwise; a plain backward takes
# it, create_graph runs the rule. A change to such a rule changes that copy too
# (tests/_kernels/test_vjp_kernels.py compares them).
_tape = _load_kernel("tape")


_bcast, _arr = bcast, arr


# ---- unary holomorphic functions -------------------------------------------------------

def _unary(name: str, ufunc: np.ufunc, deriv: Callable[[Any, Any], Any],
           aliases: tuple[str, ...] = (), real_only: bool = False, keeps_int: bool = False,
           primal: Callable[[Any], Any] | None = None,
           kernel: int = 0) -> Callable[[ArrayLike], Tensor]:
    """Register y = ufunc(x) with f'(x) = deriv(x, y) (pointwise.unary: the rules from the
    derivative). Integer and bool inputs become float64 first, unless ``keeps_int``
    (square: NumPy keeps the integer dtype). ``primal``: computes y on the payload instead
    of ``ufunc`` (special cases). ``kernel``: the tape's compiled copy of the VJP rule (see
    ``_tape`` above)."""
    return unary(name, ufunc, deriv, primal=primal, complex=not real_only,
                 keeps_int=keeps_int, kernel=kernel, module=__name__,
                 doc=f"Elementwise ``numpy.{ufunc.__name__}``, differentiable.",
                 methods=(name,) + aliases, ufuncs=(ufunc,))



def _expm1(d: Any) -> Any:
    """numpy.expm1, except for complex infinities and NaNs, where NumPy gives NaN + NaN j,
    and complex zeros, where it keeps the sign of a −0 real part: there exp(z) − 1 has the
    values the array API asks for (−1 + 0j at −inf, 0 + 0j at ±0 + 0j)."""
    out = np.expm1(d)
    if d.dtype.kind == "c":
        bad = ~np.isfinite(d) | (d == 0)
        if bad.any():
            with np.errstate(invalid="ignore"):
                out = np.where(bad, np.exp(d) - 1, out)
    return out


exp = _unary("exp", np.exp, lambda x, y: y, kernel=_tape.VJP_EXP)
expm1 = _unary("expm1", np.expm1, lambda x, y: y + 1, primal=_expm1)
log = _unary("log", np.log, lambda x, y: 1 / x, kernel=_tape.VJP_LOG)
log1p = _unary("log1p", np.log1p, lambda x, y: 1 / (1 + x))
sqrt = _unary("sqrt", np.sqrt, lambda x, y: 0.5 / y)
sin = _unary("sin", np.sin, lambda x, y: np.cos(x), kernel=_tape.VJP_SIN)
cos = _unary("cos", np.cos, lambda x, y: -np.sin(x), kernel=_tape.VJP_COS)
tan = _unary("tan", np.tan, lambda x, y: 1 + y * y)


def _tanh(d: Any) -> Any:
    """numpy.tanh, except that tanh(±inf + bj) for finite b is ±1 + 0j with the sign of b
    on the zero, as the array API asks (C99 and NumPy give the sign of sin(2b))."""
    out = _arr(np.tanh(d))
    if d.dtype.kind == "c":
        inf = np.isinf(d.real) & np.isfinite(d.imag)
        if inf.any():
            out.real[inf] = np.sign(d.real[inf])
            out.imag[inf] = np.copysign(0, d.imag[inf])
    return out


tanh = _unary("tanh", np.tanh, lambda x, y: 1 - y * y, primal=_tanh, kernel=_tape.VJP_TANH)
sinh = _unary("sinh", np.sinh, lambda x, y: np.cosh(x))
cosh = _unary("cosh", np.cosh, lambda x, y: np.sinh(x))
arcsin = _unary("arcsin", np.arcsin, lambda x, y: 1 / np.sqrt(1 - x * x), aliases=("asin",))
arccos = _unary("arccos", np.arccos, lambda x, y: -1 / np.sqrt(1 - x * x), aliases=("acos",))
arctan = _unary("arctan", np.arctan, lambda x, y: 1 / (1 + x * x), aliases=("atan",))
arcsinh = _unary("arcsinh", np.arcsinh, lambda x, y: 1 / np.sqrt(1 + x * x),
                 aliases=("asinh",))
# sqrt(x-1)·sqrt(x+1) rather than sqrt(x²-1): the same for real x > 1, and it keeps the
# principal branch for complex x (as PyTorch does).
arccosh = _unary("arccosh", np.arccosh, lambda x, y: 1 / (np.sqrt(x - 1) * np.sqrt(x + 1)),
                 aliases=("acosh",))
arctanh = _unary("arctanh", np.arctanh, lambda x, y: 1 / (1 - x * x), aliases=("atanh",))
square = _unary("square", np.square, lambda x, y: 2 * x, keeps_int=True)
reciprocal = _unary("reciprocal", np.reciprocal, lambda x, y: -(y * y))
# log_b x = log x / log b: c = 1/(x·log b) (Python floats, so float32 stays float32)
log2 = _unary("log2", np.log2, lambda x, y: 1 / (x * math.log(2.0)))
log10 = _unary("log10", np.log10, lambda x, y: 1 / (x * math.log(10.0)))
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh

# ---- non-holomorphic and structural unary ops -------------------------------------------

_neg_op = defop("negative", lambda ctx, needs, gs, xs, ys: (-gs[0],),
                lambda ctx, ts, xs, ys: (-ts[0],), kernel=_tape.VJP_NEGATIVE)
_neg_op.replay = lambda ctx: np.negative


def negative(x: ArrayLike, /) -> Tensor:
    """``-x``."""
    x = to_tensor(x)
    return apply1(_neg_op, (x,), _arr(np.negative(x._data)))


def _abs_sgn(x: Any, y: Any) -> Any:
    """x/|x|, 0 at x = 0 (the subgradient PyTorch picks)."""
    if x.dtype.kind != "c":
        # sign(x) is piecewise constant and not differentiated: the second derivative of
        # |x| is then 0 everywhere, also at 0.
        return np.sign(x)
    # Dividing by where(|z| = 0, 1, |z|) keeps the rule NaN-free at the origin; the outer
    # where makes it a constant 0 there, so its own derivative (the Hessian of |z|) is 0
    # at z = 0 rather than that of z/1.
    zero = y == 0
    return np.where(zero, 0, x / np.where(zero, 1, y))


_abs_op = defop(
    "abs",
    # z̄ = ā·z/|z| (real ā); for real x this is ā·sign(x), 0 at 0 (subgradient 0)
    lambda ctx, needs, gs, xs, ys: (gs[0] * _abs_sgn(xs[0], ys[0]),),
    # ȧ = Re(conj(z/|z|)·ż)
    lambda ctx, ts, xs, ys: (np.real(_conj(_abs_sgn(xs[0], ys[0])) * ts[0]),),
)


def abs(x: ArrayLike, /) -> Tensor:
    """``|x|`` (complex modulus for complex x); subgradient 0 at 0."""
    x = to_tensor(x)
    return apply1(_abs_op, (x,), _arr(np.abs(x._data)))


_conj_op = defop("conj", lambda ctx, needs, gs, xs, ys: (_conj(gs[0]),),
                 lambda ctx, ts, xs, ys: (_conj(ts[0]),))


def conj(x: ArrayLike, /) -> Tensor:
    """Complex conjugate (the tensor itself when real)."""
    x = to_tensor(x)
    if x.dtype.kind != "c":
        return x
    return apply1(_conj_op, (x,), _arr(np.conj(x._data)))


# real(z): z̄ = ȳ + 0i (the engine gives the cotangent z's complex dtype)
_real_op = defop("real", lambda ctx, needs, gs, xs, ys: (gs[0],),
                 lambda ctx, ts, xs, ys: (np.real(ts[0]),))
# imag(z): z̄ = i·ȳ
_imag_op = defop("imag", lambda ctx, needs, gs, xs, ys: (1j * gs[0],),
                 lambda ctx, ts, xs, ys: (np.imag(ts[0]),))
# (tf.compile's replay of abs, conj, real and imag: the primals on the arrays)
_abs_op.replay = lambda ctx: np.abs
_conj_op.replay = lambda ctx: np.conj
_real_op.replay = lambda ctx: operator.attrgetter("real")
_imag_op.replay = lambda ctx: operator.attrgetter("imag")


def real(x: ArrayLike, /) -> Tensor:
    """Real part: a view of a complex ``x`` (a write through it changes x's real parts, as
    ``z.real[...] = v`` does in NumPy and PyTorch); the tensor itself when real."""
    x = to_tensor(x)
    if x.dtype.kind != "c":
        return x
    return as_view(apply1(_real_op, (x,), x._data.real), x, ("real", None))


def imag(x: ArrayLike, /) -> Tensor:
    """Imaginary part: a view of a complex ``x`` (writes go through, as for ``real``); a
    constant zero tensor when x is real."""
    x = to_tensor(x)
    if x.dtype.kind != "c":
        return Tensor._wrap(np.zeros_like(x._data))
    return as_view(apply1(_imag_op, (x,), x._data.imag), x, ("imag", None))


_pos_op = defop("positive", lambda ctx, needs, gs, xs, ys: (gs[0],),
                lambda ctx, ts, xs, ys: (ts[0],))


def positive(x: ArrayLike, /) -> Tensor:
    """``+x``: the same values (a new tensor sharing the payload, so an in-place update of
    the result does not touch ``x``); its derivative is the identity."""
    t = to_tensor(x)
    if t._data.dtype.kind == "b":
        raise DTypeError("positive (+x) needs a numeric tensor, got bool; convert it first, "
                         "e.g. t.astype(tf.int64)")
    # a tensor's payload is never written to; a caller's ndarray might be
    return apply1(_pos_op, (t,), t._data if t is x else t._data.copy())


register(negative, methods=("negative", "__neg__"), ufuncs=(np.negative,))
register(positive, methods=("positive", "__pos__"), ufuncs=(np.positive,))
register(abs, methods=("abs", "__abs__"), ufuncs=(np.absolute,))
register(conj, methods=("conj", "conjugate"), ufuncs=(np.conjugate,))
register(real, ufuncs=(), functions=(np.real,))
register(imag, functions=(np.imag,))
# setattr: Tensor declares these properties for type checkers only (_tensor.py)
setattr(Tensor, "real", property(real, doc="Real part (differentiable)."))
setattr(Tensor, "imag", property(imag, doc="Imaginary part (differentiable)."))

# ---- piecewise-constant functions: derivative exactly zero -------------------------------
# round/floor/ceil/trunc (and sign of a real tensor, floor_divide below) are constant
# between their jumps: the derivative is 0 almost everywhere and undefined at the jumps,
# where tenferro also gives 0 (PyTorch's and JAX's choice). The result of a float input is
# a float tensor recorded with rules that return zeros, so a gradient through it is an
# exact 0 of the right shape rather than None or an error. Integer (and bool) inputs are
# integer-valued already: the function is the identity and returns an integer tensor.


def _zeros(x: Any) -> Any:
    """A zero (co)tangent of x's shape and dtype: a constant ndarray also when x is a
    Tensor (create_graph), whose own derivative is zero again."""
    return np.zeros(x.shape, x.dtype)


def _zero_derivative_op(name: str, complex: bool = False) -> Op:
    def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
        return tuple(_zeros(x) if need else None for x, need in zip(xs, needs))

    def jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
        return (_zeros(ys[0]),)

    op = defop(name, vjp, jvp, complex=complex,
               doc="piecewise constant: derivative 0 (also at the jumps)")
    op.zero_derivative = True
    return op


def _rounding(name: str, ufunc: np.ufunc, doc: str) -> Callable[[ArrayLike], Tensor]:
    op = _zero_derivative_op(name)

    def f(x: ArrayLike, /) -> Tensor:
        t = to_tensor(x)
        if t._data.dtype.kind in "biu":   # integer-valued already: the identity
            return Tensor._wrap(t._data if t is x else t._data.copy())
        require_real(name, t)
        return apply1(op, (t,), _arr(ufunc(t._data)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (doc + " Float inputs give a float tensor whose derivative is 0 (piecewise "
                 f"constant); integer inputs are returned unchanged. ``numpy.{ufunc.__name__}``"
                 " on a tensor returns NumPy's ndarray.")
    register(f, methods=(name,))
    register_nondiff(ufunc)
    return f


floor = _rounding("floor", np.floor, "Largest integer-valued number <= x, elementwise.")
ceil = _rounding("ceil", np.ceil, "Smallest integer-valued number >= x, elementwise.")
trunc = _rounding("trunc", np.trunc, "x rounded towards zero, elementwise.")

_round_op = _zero_derivative_op("round", complex=True)


def round(x: ArrayLike, /, *, decimals: int = 0) -> Tensor:
    """x rounded to the nearest integer (``decimals`` places), halves to even; the real and
    imaginary parts of a complex x separately. The array API's ``round(x)`` plus NumPy's
    ``decimals``. Float and complex inputs give a tensor whose derivative is 0 (piecewise
    constant); integer inputs are returned unchanged (for ``decimals >= 0``).
    ``numpy.round(t, 1)`` / ``numpy.rint(t)`` on a tensor return NumPy's ndarray."""
    t = to_tensor(x)
    d = t._data
    kind = d.dtype.kind
    if kind in "biu":
        if decimals >= 0 or kind == "b":
            return Tensor._wrap(d if t is x else d.copy())
        return Tensor._wrap(_arr(np.round(d, decimals)))
    out = np.rint(d) if decimals == 0 else np.round(d, decimals)
    return apply1(_round_op, (t,), _arr(out))


# the method also takes NumPy's positional decimals: t.round(2) as ndarray.round(2)
register(lambda self, decimals=0: round(self, decimals=decimals), methods=("round",))
register_nondiff(np.rint, np.round, np.around, np.fix)


def _sgn_deriv(x: Any, y: Any, v: Any) -> Any:
    """d(z/|z|) along v, (v − y·Re(conj(y)·v))/|z| with y = z/|z|, and 0 at z = 0. The map
    v ↦ v − y·Re(conj(y)·v) is the orthogonal projection (of ℝ²) off y, symmetric, so the
    same formula is also the VJP (PyTorch's sgn backward)."""
    zero = payload(y) == 0
    if not zero.any():
        return (v - y * np.real(np.conj(y) * v)) / np.abs(x)
    r = np.abs(np.where(zero, 1, x))
    return np.where(zero, 0, (v - y * np.real(np.conj(y) * v)) / r)


_sign_op = _zero_derivative_op("sign")
_sign_op.replay = lambda ctx: lambda x: _arr(np.sign(x))     # (tf.compile)
_sgn_op = defop("sgn", lambda ctx, needs, gs, xs, ys: (_sgn_deriv(xs[0], ys[0], gs[0]),),
                lambda ctx, ts, xs, ys: (_sgn_deriv(xs[0], ys[0], ts[0]),))


def sign(x: ArrayLike, /) -> Tensor:
    """-1, 0 or +1 by the sign of x (NaN for NaN); z/|z| (0 at 0) for complex z.

    Real x: piecewise constant, a tensor whose derivative is 0. Complex z: z/|z| moves with
    the phase of z, and is differentiated (PyTorch's ``sgn``), 0 at z = 0. Integer inputs
    give integer tensors."""
    x = to_tensor(x)
    d = x._data
    kind = d.dtype.kind
    if kind == "b":
        raise DTypeError("sign needs a numeric tensor, got bool; convert it first, e.g. "
                         "t.astype(tf.int64)")
    out = _arr(np.sign(d))
    if kind in "iu":
        return Tensor._wrap(out)
    return apply1(_sgn_op if kind == "c" else _sign_op, (x,), out)


register(sign, methods=("sign",), ufuncs=(np.sign,))

# ---- binary arithmetic ------------------------------------------------------------------


# The constants of ``x * 1.01`` (pointwise.constant; tests read the cache's bound)
_CONSTANTS, _CONSTANTS_MAX = CONSTANTS, CONSTANTS_MAX


def _scalar_op(name: str, vjp: _Rule, jvp: _Rule, kernel: int = 0) -> Op:
    """The op of ``y = f(x, s)`` for a tensor x and a real scalar s (ctx: a Python float
    or int, or for a float64/float32 x the read-only 0-d array of ``_constant``):
    vjp(g, s, x, y) -> x̄, jvp(t, s, x, y) -> ẏ. The scalar is real, so no conjugate.
    ``kernel``: the tape's compiled copy of vjp (see ``_tape``)."""

    def vjp_rule(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
        g = gs[0]
        if type(ctx) is np.ndarray and type(g) is Tensor:
            ctx = ctx.item()   # a Tensor ∘ Python float records the scalar op again
        return (vjp(g, ctx, xs[0], ys[0]),)

    def jvp_rule(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
        t = ts[0]
        if type(ctx) is np.ndarray and type(t) is Tensor:
            ctx = ctx.item()
        return (jvp(t, ctx, xs[0], ys[0]),)

    return defop(name, vjp_rule, jvp_rule, kernel=kernel)


def _binary(name: str, ufunc: np.ufunc, vjp_a: _Rule | None, vjp_b: _Rule | None,
            jvp: _Rule | None, real_only: bool = False, methods: tuple[str, ...] = (),
            rmethod: str | None = None, floats: bool = False, vjp_both: _Rule | None = None,
            scalar_right: Op | None = None, scalar_left: Op | None = None,
            kernels: tuple[int, int, int] = (0, 0, 0), derivs: Derivs | None = None
            ) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    """Register y = ufunc(a, b) with broadcasting (pointwise.binary).

    ``derivs(a, b, y, needs)``: the partial derivatives, from which both rules follow;
    or, where a cheaper form exists (add: x̄ = ȳ), the rules: vjp_a(g, a, b, y) /
    vjp_b(...) give the cotangents before un-broadcasting (or vjp_both(g, a, b, y) gives
    both, when they share work); jvp(ta, tb, a, b, y) gets None for a zero tangent.
    ``floats``: integer and bool operands are converted first to the dtype of
    ``float_result_type`` (functions with a floating-point result).
    ``scalar_right``/``scalar_left``: the ``_scalar_op`` of ``ufunc(x, s)`` /
    ``ufunc(s, x)`` for a real Python scalar s (both or neither). ``kernels``: the tape's
    compiled copies (see ``_tape``) of the rules of the op, of ``x ∘ c`` and of ``c ∘ x``
    (the array ops), 0 for none."""
    return binary(name, ufunc, derivs, vjp_a=vjp_a, vjp_b=vjp_b, vjp_both=vjp_both, jvp=jvp,
                  complex=not real_only, floats=floats, scalar_right=scalar_right,
                  scalar_left=scalar_left, kernels=kernels, module=__name__,
                  doc=f"Elementwise ``numpy.{ufunc.__name__}`` with broadcasting, "
                      "differentiable.",
                  methods=methods, rmethod=rmethod, ufuncs=(ufunc,))



def _lin(ca: int, cb: int) -> _Rule:
    """JVP of ca·a + cb·b for constant coefficients ±1."""
    def jvp(ta: Any, tb: Any, a: Any, b: Any, y: Any) -> Any:
        if ta is None:
            return tb if cb == 1 else -tb
        if tb is None:
            return ta if ca == 1 else -ta
        return ta + tb if cb == 1 else ta - tb
    return jvp


def _same(g: Any, s: Any, x: Any, y: Any) -> Any:
    return g


def _negated(g: Any, s: Any, x: Any, y: Any) -> Any:
    return -g


_add_scalar = _scalar_op("add_scalar", _same, _same, kernel=_tape.VJP_SCALAR_SAME)
add = _binary("add", np.add, lambda g, a, b, y: g, lambda g, a, b, y: g, _lin(1, 1),
              methods=("add", "__add__"), rmethod="__radd__",
              scalar_right=_add_scalar, scalar_left=_add_scalar,
              kernels=(_tape.VJP_ADD, _tape.VJP_ARRAY_SAME, _tape.VJP_ARRAY_SAME))
subtract = _binary("subtract", np.subtract, lambda g, a, b, y: g, lambda g, a, b, y: -g,
                   _lin(1, -1), methods=("subtract", "__sub__"), rmethod="__rsub__",
                   scalar_right=_scalar_op("subtract_scalar", _same, _same,
                                           kernel=_tape.VJP_SCALAR_SAME),
                   scalar_left=_scalar_op("scalar_subtract", _negated, _negated,
                                          kernel=_tape.VJP_SCALAR_NEGATED),
                   kernels=(_tape.VJP_SUBTRACT, _tape.VJP_ARRAY_SAME, _tape.VJP_ARRAY_NEGATED))


def _mul_jvp(ta: Any, tb: Any, a: Any, b: Any, y: Any) -> Any:
    if ta is None:
        return a * tb
    if tb is None:
        return ta * b
    return ta * b + a * tb


def _times_scalar(g: Any, s: Any, x: Any, y: Any) -> Any:
    return g * s


_multiply_scalar = _scalar_op("multiply_scalar", _times_scalar, _times_scalar,
                              kernel=_tape.VJP_SCALAR_TIMES)
multiply = _binary("multiply", np.multiply,
                   lambda g, a, b, y: g * _conj(b), lambda g, a, b, y: g * _conj(a), _mul_jvp,
                   methods=("multiply", "__mul__"), rmethod="__rmul__",
                   scalar_right=_multiply_scalar, scalar_left=_multiply_scalar,
                   kernels=(_tape.VJP_MULTIPLY, _tape.VJP_ARRAY_TIMES, _tape.VJP_ARRAY_TIMES))


def _div_jvp(ta: Any, tb: Any, a: Any, b: Any, y: Any) -> Any:
    # ẏ = (ȧ − y·ḃ)/b
    if tb is None:
        return ta / b
    if ta is None:
        return -(y * tb) / b
    return (ta - y * tb) / b


def _over_scalar(g: Any, s: Any, x: Any, y: Any) -> Any:
    return g / s


def _scalar_over_vjp(g: Any, s: Any, x: Any, y: Any) -> Any:
    # y = s/x: x̄ = −ȳ·conj(y/x)
    return -g * _conj(y / x)


def _scalar_over_jvp(t: Any, s: Any, x: Any, y: Any) -> Any:
    return -(t * y) / x


divide = _binary("divide", np.divide,
                 lambda g, a, b, y: g / _conj(b),
                 lambda g, a, b, y: -g * _conj(y / b), _div_jvp,
                 methods=("divide", "__truediv__"), rmethod="__rtruediv__",
                 scalar_right=_scalar_op("divide_scalar", _over_scalar, _over_scalar,
                                         kernel=_tape.VJP_SCALAR_OVER),
                 scalar_left=_scalar_op("scalar_divide", _scalar_over_vjp, _scalar_over_jvp,
                                        kernel=_tape.VJP_OVER_X),
                 kernels=(_tape.VJP_DIVIDE, _tape.VJP_ARRAY_OVER, _tape.VJP_ARRAY_OVER_X))


def _pow_da(a: Any, b: Any, y: Any) -> Any:
    # ∂y/∂a = b·a^(b−1), 0 where b = 0 (so 0**0 has a finite derivative)
    return np.where(b == 0, 0, b * a ** np.where(b == 0, 1, b - 1))


def _pow_db(a: Any, b: Any, y: Any) -> Any:
    # ∂y/∂b = y·log a, 0 where a = 0 and b is real and >= 0: 0**b is 0 for b > 0 (y = 0)
    # and also 0**0 = 1 gets a finite derivative (PyTorch's convention) instead of -inf.
    if b.dtype.kind == "c":
        zero = (a == 0) & (np.real(b) >= 0) & (np.imag(b) == 0)
    else:
        zero = (a == 0) & (b >= 0)
    return np.where(zero, 0, y * np.log(np.where(zero, 1, a)))


def _pow_derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    return (_pow_da(a, b, y) if needs[0] else None, _pow_db(a, b, y) if needs[1] else None)


power = _binary("power", np.power, None, None, None, derivs=_pow_derivs,
                methods=("pow", "power", "__pow__"), rmethod="__rpow__")
pow = power


def _atan2_derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    # ∂/∂a = b/r, ∂/∂b = −a/r with r = a² + b² (1 at the origin, where both are 0)
    r = a * a + b * b
    r = np.where(r == 0, 1, r)
    return (b / r if needs[0] else None, -a / r if needs[1] else None)


atan2 = _binary("atan2", np.arctan2, None, None, None, derivs=_atan2_derivs,
                real_only=True, methods=("atan2", "arctan2"), floats=True)
arctan2 = atan2


def _hypot_coef(x: Any, h: Any) -> Any:
    # ∂h/∂x = x/h, 0 at h = 0
    return x / np.where(h == 0, 1, h)


def _hypot_derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    return (_hypot_coef(a, y) if needs[0] else None, _hypot_coef(b, y) if needs[1] else None)


hypot = _binary("hypot", np.hypot, None, None, None, derivs=_hypot_derivs, real_only=True,
                methods=("hypot",), floats=True)


_all = np.logical_and.reduce   # ndarray.all() without its Python wrapper (~1 µs less)


def _logaddexp_weights(a: Any, b: Any, y: Any) -> tuple[Any, Any]:
    """(∂y/∂a, ∂y/∂b) of y = log(eᵃ + eᵇ): the softmax weights σ(a − b), σ(b − a).

    With d = a − b and e = exp(−|d|) ≤ 1 they are (1, e)/(1 + e) for d ≥ 0 and (e, 1)/(1 + e)
    otherwise: no overflow, as accurate as d (exp(a − y) would carry the rounding of y,
    ~|y|·eps), and twice differentiable (on Tensors −|d| is written as a where on the sign
    of d, so its derivative at d = 0 is not abs's subgradient 0). Where a = b = ±inf (d is
    NaN) the weights are the limit ½, ½; NaN inputs give NaN."""
    tie: Any = None
    if _all(np.isfinite(payload(y)), axis=None):   # no ±inf/NaN anywhere in y
        d = a - b
    else:   # y = ±inf or NaN somewhere: a = b = ±inf (d = inf − inf) or a NaN input
        with np.errstate(invalid="ignore"):
            d = a - b
        tie = np.isnan(payload(d))
        if tie.any():   # NaN-free on both sides of the wheres below: their unselected
            d = np.where(tie, 0, d)   # side's derivative (times 0) must not make NaN
        else:
            tie = None
    if type(d) is np.ndarray:
        # the plain backward: the same formula in place, one exp and few temporaries
        pos = d >= 0
        e = np.abs(d)
        np.negative(e, out=e)
        np.exp(e, out=e)
        r = e + 1
        np.reciprocal(r, out=r)            # 1/(1 + e)
        e *= r                             # e/(1 + e)
        wa, wb = np.where(pos, r, e), np.where(pos, e, r)
    else:
        pos = payload(d) >= 0
        e = np.exp(np.where(pos, -d, d))
        den = 1 + e
        wa, wb = np.where(pos, 1, e) / den, np.where(pos, e, 1) / den
    if tie is not None:
        half = np.where(np.isnan(payload(a)) | np.isnan(payload(b)), np.nan, 0.5)
        half = half.astype(payload(y).dtype)
        wa, wb = np.where(tie, half, wa), np.where(tie, half, wb)
    return wa, wb


def _logaddexp_derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    return _logaddexp_weights(a, b, y)   # (both share the work: computed together)


logaddexp = _binary("logaddexp", np.logaddexp, None, None, None, derivs=_logaddexp_derivs,
                    real_only=True, methods=("logaddexp",), floats=True)
logaddexp.__doc__ = """log(exp(x1) + exp(x2)), computed without overflow (``numpy.logaddexp``).

Derivatives are the softmax weights σ(x1 − x2), σ(x2 − x1), evaluated stably; at ±inf
they are the limits (1 for the larger argument, ½ each when both are the same infinity)."""


def _copysign_da(a: Any, b: Any) -> Any:
    """∂y/∂a of y = copysign(a, b) = |a|·s(b): sign(a)·s(b), +1 where the signs agree and −1
    where they differ, and 0 at a = 0 (the subgradient |a| gets there, as in abs and
    PyTorch). s(b) = ±1 by the sign bit of b (so −0 counts as negative)."""
    return np.sign(payload(a)) * np.copysign(1, payload(b))


def _copysign_derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    # None: ∂/∂b is identically 0 (the factory gives exact zeros, not ȳ·0)
    return (_copysign_da(a, b) if needs[0] else None), None


copysign = _binary("copysign", np.copysign, None, None, None, derivs=_copysign_derivs,
                   real_only=True, methods=("copysign",), floats=True)
copysign.__doc__ = """|x1| with the sign bit of x2 (``numpy.copysign``), elementwise.

∂/∂x1 = ±1 (+1 where x1 and x2 have the same sign bit), 0 at x1 = ±0 (the kink of |x1|;
the same subgradient as abs). ∂/∂x2 = 0: the result only jumps with the sign of x2."""


def _floor_quotient(a: Any, b: Any) -> Any:
    """floor(a/b) as NumPy's divmod pairs it with remainder, a constant (no derivative)."""
    return np.floor_divide(payload(a), payload(b))


def _remainder_jvp(ta: Any, tb: Any, a: Any, b: Any, y: Any) -> Any:
    # y = a − b·floor(a/b): ẏ = ȧ − floor(a/b)·ḃ
    if tb is None:
        return ta
    d = -(tb * _floor_quotient(a, b))
    return d if ta is None else ta + d


remainder = _binary("remainder", np.remainder, lambda g, a, b, y: g,
                    lambda g, a, b, y: -(g * _floor_quotient(a, b)), _remainder_jvp,
                    real_only=True, methods=("remainder", "__mod__"), rmethod="__rmod__")
remainder.__doc__ = """Python's ``x1 % x2``, the remainder with the sign of x2 (numpy.remainder).

Integer inputs give an integer tensor (no gradient). For floats y = x1 − x2·floor(x1/x2),
so ∂/∂x1 = 1 and ∂/∂x2 = −floor(x1/x2) between the jumps (where y is discontinuous)."""

_floordiv_op = _zero_derivative_op("floor_divide")


def floor_divide(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """floor(x1/x2) elementwise (Python's ``//``, ``numpy.floor_divide``), with broadcasting.

    Integer inputs give an integer tensor. Float results are piecewise constant: a tensor
    whose derivative is exactly 0 in both arguments. ``numpy.floor_divide`` on tensors
    returns NumPy's ndarray."""
    a, b = operands(x1, x2)
    require_real("floor_divide", a, b)
    ad, bd = a._data, b._data
    try:
        if ad.dtype.kind != "f" and bd.dtype.kind != "f":
            out = np.floor_divide(ad, bd)
        else:
            # NumPy pairs // with % as Python does (inf // 1 = nan, -1 // inf = -1); the
            # array API asks for floor(x1/x2) where an operand is infinite (inf, -0, ...)
            inf = np.isinf(ad) | np.isinf(bd)
            if inf.any():
                with np.errstate(invalid="ignore", divide="ignore"):
                    out = np.where(inf, np.floor(ad / bd), np.floor_divide(ad, bd))
            else:
                out = np.floor_divide(ad, bd)
    except ValueError:
        broadcast_shape("floor_divide", a.shape, b.shape)   # ShapeError if that is the cause
        raise
    return apply1(_floordiv_op, (a, b), _arr(out))


register(floor_divide, methods=("floor_divide", "__floordiv__"))
register(lambda self, other: floor_divide(other, self), methods=("__rfloordiv__",))
register_nondiff(np.floor_divide)


def _select_weight(a: Any, b: Any, pick_a: bool) -> Any:
    """1 where a wins, 0 where b wins, ½ on ties (the cotangent splits evenly)."""
    wins = (a > b) if pick_a else (a < b)
    return np.where(a == b, 0.5, np.where(wins, 1.0, 0.0)).astype(np.result_type(a, b))


def _extremum(name: str, ufunc: np.ufunc, pick_a: bool
              ) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    def weights(a: Any, b: Any) -> Any:
        return _select_weight(payload(a), payload(b), pick_a)

    def derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
        w = weights(a, b)
        return (w if needs[0] else None), (1 - w if needs[1] else None)

    return _binary(name, ufunc, None, None, None, derivs=derivs, real_only=True,
                   methods=(name,))


maximum = _extremum("maximum", np.maximum, True)
minimum = _extremum("minimum", np.minimum, False)

# ---- selections -------------------------------------------------------------------------


def _where_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    cond, g = ctx, gs[0]
    zero = np.zeros((), dtype=g.dtype)
    ga = unbroadcast(np.where(cond, g, zero), xs[0].shape) if needs[0] else None
    gb = unbroadcast(np.where(cond, zero, g), xs[1].shape) if needs[1] else None
    return ga, gb


def _where_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    ta, tb = ts
    zero = np.zeros((), dtype=ys[0].dtype)
    t = np.where(ctx, zero if ta is None else ta, zero if tb is None else tb)
    return (_bcast(t, ys[0].shape),)


_where_op = defop("where", _where_vjp, _where_jvp)
# (tf.compile's replay: the mask is a constant of the recording, ctx)
_where_op.replay = lambda cond: lambda a, b: np.where(cond, a, b)


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Tensor:
    """``numpy.where(condition, x, y)``; the condition is not differentiated."""
    cond = np.asarray(condition.numpy() if isinstance(condition, Tensor) else condition)
    if cond.dtype != bool:
        cond = cond.astype(bool)
    a, b = operands(x, y)
    broadcast_shape("where", cond.shape, a.shape, b.shape)   # raises ShapeError
    return apply1(_where_op, (a, b), np.where(cond, a._data, b._data), ctx=cond)


register(where, functions=(np.where,))


def _clip_masks(ctx: Any, xs: Any) -> list[Any]:
    """Which input each output entry comes from, as boolean masks (one per input).

    y = min(max(x, lo), hi) (NumPy's clip). x where lo <= x <= hi (the bounds included:
    a tie goes to x, as in PyTorch's clamp); lo where x < lo; hi where x > hi, and hi
    everywhere lo > hi (then y = hi). NaN anywhere gives NaN and zero derivatives."""
    has_lo, has_hi = ctx
    x = payload(xs[0])
    lo: Any = payload(xs[1]) if has_lo else None
    hi: Any = payload(xs[1 + has_lo]) if has_hi else None
    masks: list[Any] = []
    if has_lo and has_hi:
        crossed = lo > hi
        masks.append((x >= lo) & (x <= hi))
        masks.append((x < lo) & ~crossed)
        masks.append((x > hi) | crossed)
    elif has_lo:
        masks += [x >= lo, x < lo]
    elif has_hi:
        masks += [x <= hi, x > hi]
    else:
        masks.append(np.ones(x.shape, dtype=bool))
    return masks


def _clip_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    g = gs[0]
    masks = _clip_masks(ctx, xs)
    return tuple(unbroadcast(np.where(m, g, 0), x.shape) if need else None
                 for m, x, need in zip(masks, xs, needs))


def _clip_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    out: Any = None
    for m, t in zip(_clip_masks(ctx, xs), ts):
        if t is not None:
            d = np.where(m, t, 0)
            out = d if out is None else out + d
    return (_bcast(out, ys[0].shape),)


_clip_op = defop("clip", _clip_vjp, _clip_jvp, complex=False)


def _clip_bound(x: Tensor, bound: Any) -> Tensor | None:
    """A bound of clip as a Tensor: Python scalars in x's dtype (an integer bound outside
    an integer dtype's range is clamped to it, which clips identically)."""
    if bound is None or isinstance(bound, Tensor):
        return bound
    dt = x._data.dtype
    if type(bound) in (int, float, bool):
        if dt.kind in "iu":
            if type(bound) is float:
                return Tensor._wrap(np.asarray(bound))   # float64: NumPy compares exactly
            info = np.iinfo(dt)
            bound = min(max(bound, info.min), info.max)
        return Tensor._wrap(np.asarray(bound, dtype=dt))
    return to_tensor(bound)


def clip(x: ArrayLike, /, min: ArrayLike | None = None,
         max: ArrayLike | None = None) -> Tensor:
    """Clamp x to [min, max] elementwise (None: unbounded); the result has x's dtype and the
    broadcast shape of x, min and max. min and max may be tensors and are differentiated:
    ∂y/∂x = 1 where min <= x <= max (bounds included, as in PyTorch), ∂y/∂min = 1 where
    x < min, ∂y/∂max = 1 where x > max or min > max (then y = max), 0 elsewhere."""
    x = to_tensor(x)
    lo, hi = _clip_bound(x, min), _clip_bound(x, max)
    inputs = [x] + [b for b in (lo, hi) if b is not None]
    require_real("clip", *inputs)
    try:
        out = np.clip(x._data, None if lo is None else lo._data,
                      None if hi is None else hi._data)
    except ValueError:
        broadcast_shape("clip", *(t.shape for t in inputs))   # ShapeError if that is the cause
        raise
    dt = x._data.dtype
    out = _arr(out).astype(dt, copy=False)
    if dt.kind not in "fc":
        for b in inputs[1:]:
            if b.requires_grad:
                raise DTypeError(f"clip of a {dt} tensor has a {dt} result, which cannot "
                                 "carry the gradient of a bound that requires grad; "
                                 "convert x first, e.g. x.astype(tf.float64)")
        return Tensor._wrap(out)
    return apply1(_clip_op, tuple(inputs), out, ctx=(lo is not None, hi is not None))


def _np_clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, *,
             min: Any = None, max: Any = None, **kwargs: Any) -> Tensor:
    """``numpy.clip``'s signature on tensors (out= is not supported)."""
    if out is not None or kwargs:
        raise TypeError("numpy.clip on tenferro tensors takes no out= or other keywords; "
                        "use the returned value")
    return clip(a, a_min if min is None else min, a_max if max is None else max)


register(clip, methods=("clip", "clamp"))
register(_np_clip, functions=(np.clip,))

# ---- comparisons, logical and bitwise ops -------------------------------------------------
# Piecewise constant or integer-valued: tensors without a gradient. ``t < u`` and
# ``tf.less(t, u)`` give tensors; NumPy's own ``np.less(t, u)`` gives NumPy's array
# (registry.NONDIFF: the result does not depend differentiably on the inputs).

_OPERAND_TYPES = (Tensor, np.ndarray, np.generic, bool, int, float, complex, list, tuple)
_KIND_NAMES = {"biu": "integer or bool", "iu": "integer", "biuf": "real (not complex)",
               "f": "floating-point", "fc": "floating-point"}


def _check_kinds(name: str, kinds: str, *tensors: Tensor) -> None:
    for t in tensors:
        if t._data.dtype.kind not in kinds:
            raise DTypeError(f"{name} needs {_KIND_NAMES[kinds]} tensors, got {t._data.dtype}; "
                             "convert with t.astype(...) first if that is what you mean")


def _nondiff_binary(name: str, ufunc: np.ufunc, method: str | None = None,
                    rmethod: str | None = None, kinds: str | None = None,
                    prepare: Callable[[Tensor, Tensor], list[Tensor]] | None = None
                    ) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    """Register a non-differentiable elementwise x1 ∘ x2 (broadcasting, NumPy promotion).
    ``kinds``: the dtype kinds both operands must have (DTypeError otherwise).
    ``prepare(a, b)``: the operands to compute with (floating_args: NumPy 2's floats)."""
    def f(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
        a, b = operands(x1, x2)
        if kinds is not None:
            _check_kinds(name, kinds, a, b)
        if prepare is not None:
            a, b = prepare(a, b)
        try:
            out = ufunc(a._data, b._data)
        except ValueError:
            broadcast_shape(name, a.shape, b.shape)  # raises ShapeError if that is the cause
            raise
        except TypeError as e:   # no loop for this pair of dtypes (uint64 with int64...)
            raise DTypeError(f"{name} is not defined for {a.dtype} and {b.dtype} ({e}); "
                             "convert one operand with astype(...)") from None
        note_escape(name, a, b)
        return Tensor._wrap(_arr(out))

    # -> Any: the result is a Tensor or NotImplemented (which mypy types as Any)
    def dunder(self: Tensor, other: Any) -> Any:
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return f(self, other)

    def rdunder(self: Tensor, other: Any) -> Any:
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return f(other, self)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise ``numpy.{ufunc.__name__}`` with broadcasting (not "
                 "differentiable: the result is a tensor without a gradient).")
    if method:
        register(dunder, methods=(method,))
    if rmethod:
        register(rdunder, methods=(rmethod,))
    register_nondiff(ufunc)
    return f


def _nondiff_unary(name: str, ufunc: np.ufunc, method: str | None = None,
                   kinds: str | None = None) -> Callable[[ArrayLike], Tensor]:
    """Register a non-differentiable elementwise function of one tensor."""
    def f(x: ArrayLike, /) -> Tensor:
        x = to_tensor(x)
        if kinds is not None:
            _check_kinds(name, kinds, x)
        note_escape(name, x)
        return Tensor._wrap(_arr(ufunc(x._data)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise ``numpy.{ufunc.__name__}`` (not differentiable: the result "
                 "is a tensor without a gradient).")
    if method:
        register(f, methods=(method,))
    register_nondiff(ufunc)
    return f


equal = _nondiff_binary("equal", np.equal, "__eq__")
not_equal = _nondiff_binary("not_equal", np.not_equal, "__ne__")
# The array API leaves the order of complex numbers undefined (NumPy's is lexicographic):
# tf.less & co. and the operators raise DTypeError for complex operands, as PyTorch does;
# np.less(t, u) keeps NumPy's answer.
less = _nondiff_binary("less", np.less, "__lt__", kinds="biuf")
less_equal = _nondiff_binary("less_equal", np.less_equal, "__le__", kinds="biuf")
greater = _nondiff_binary("greater", np.greater, "__gt__", kinds="biuf")
greater_equal = _nondiff_binary("greater_equal", np.greater_equal, "__ge__", kinds="biuf")
logical_and = _nondiff_binary("logical_and", np.logical_and)
logical_or = _nondiff_binary("logical_or", np.logical_or)
logical_xor = _nondiff_binary("logical_xor", np.logical_xor)
logical_not = _nondiff_unary("logical_not", np.logical_not)
bitwise_and = _nondiff_binary("bitwise_and", np.bitwise_and, "__and__", "__rand__", "biu")
bitwise_or = _nondiff_binary("bitwise_or", np.bitwise_or, "__or__", "__ror__", "biu")
bitwise_xor = _nondiff_binary("bitwise_xor", np.bitwise_xor, "__xor__", "__rxor__", "biu")
bitwise_invert = _nondiff_unary("bitwise_invert", np.invert, "__invert__", "biu")
# arithmetic shifts (x1 >> x2 rounds towards -inf); shift counts must be >= 0
bitwise_left_shift = _nondiff_binary("bitwise_left_shift", np.left_shift, "__lshift__",
                                     "__rlshift__", "iu")
bitwise_right_shift = _nondiff_binary("bitwise_right_shift", np.right_shift, "__rshift__",
                                      "__rrshift__", "iu")
isnan = _nondiff_unary("isnan", np.isnan)
isinf = _nondiff_unary("isinf", np.isinf)
isfinite = _nondiff_unary("isfinite", np.isfinite)
signbit = _nondiff_unary("signbit", np.signbit, kinds="biuf")
# The next float after x1 towards x2 differs from x1 by one ulp: treated as a discrete
# operation (a tensor without a gradient, like PyTorch's nextafter). Integer inputs are
# converted to float64 first.
nextafter = _nondiff_binary("nextafter", np.nextafter, kinds="biuf", prepare=floating_args)
nextafter.__doc__ = ("The next representable floating-point value after x1 towards x2 "
                     "(``numpy.nextafter``); not differentiable: a tensor without a gradient.")


# ---- docstrings (numpydoc, issue 31) ------------------------------------------------------
# One table renders the sections of every function above (_docs.describe): the parameters
# by arity, the derivative in one line of math (docs/rules.md#elementwise has each rule),
# the errors each kind of function raises; the examples are in _doc_examples.

_RULES = "(docs/rules.md, Elementwise)"
_X = ("x", "array_like", "A Tensor, NumPy array or Python scalar; real or complex.")
_XREAL = ("x", "array_like", "A Tensor, NumPy array or Python scalar; real.")
_X12 = (("x1", "array_like", "A Tensor, NumPy array or Python scalar; real or complex."),
        ("x2", "array_like", "The same; broadcasts against ``x1`` like NumPy."))
_X12_REAL = (("x1", "array_like", "A Tensor, NumPy array or Python scalar; real."),
             ("x2", "array_like", "The same; broadcasts against ``x1`` like NumPy."))
_SHAPE_ERR = ("ShapeError", "If ``x1`` and ``x2`` do not broadcast.")
_COMPLEX_ERR = ("DTypeError", "If an input is complex.")

# unary holomorphic: name -> (f'(x) in LaTeX, what y is)
_UNARY_DOCS = {
    "exp": (r"e^x", "e^x"), "expm1": (r"e^x", "e^x - 1 (accurate near 0)"),
    "log": (r"1/x", "the natural logarithm (principal branch for complex x)"),
    "log1p": (r"1/(1 + x)", "log(1 + x) (accurate near 0)"),
    "log2": (r"1/(x \log 2)", "the base-2 logarithm"),
    "log10": (r"1/(x \log 10)", "the base-10 logarithm"),
    "sqrt": (r"1/(2\sqrt{x})", "the principal square root (NaN for real x < 0)"),
    "sin": (r"\cos x", "sin x"), "cos": (r"-\sin x", "cos x"),
    "tan": (r"1 + \tan^2 x", "tan x"), "tanh": (r"1 - \tanh^2 x", "tanh x"),
    "sinh": (r"\cosh x", "sinh x"), "cosh": (r"\sinh x", "cosh x"),
    "arcsin": (r"1/\sqrt{1 - x^2}", "the inverse sine (also ``tf.asin``)"),
    "arccos": (r"-1/\sqrt{1 - x^2}", "the inverse cosine (also ``tf.acos``)"),
    "arctan": (r"1/(1 + x^2)", "the inverse tangent (also ``tf.atan``)"),
    "arcsinh": (r"1/\sqrt{1 + x^2}", "the inverse hyperbolic sine (also ``tf.asinh``)"),
    "arccosh": (r"1/(\sqrt{x - 1}\sqrt{x + 1})",
                "the inverse hyperbolic cosine (also ``tf.acosh``; principal branch)"),
    "arctanh": (r"1/(1 - x^2)", "the inverse hyperbolic tangent (also ``tf.atanh``)"),
    "square": (r"2x", "x²"),
    "reciprocal": (r"-1/x^2", "1/x"),
}

# binary differentiable: name -> (partials in LaTeX, y, real only)
_BINARY_DOCS = {
    "add": (r"\partial_{x_1} = 1,\ \partial_{x_2} = 1", "x1 + x2", False),
    "subtract": (r"\partial_{x_1} = 1,\ \partial_{x_2} = -1", "x1 - x2", False),
    "multiply": (r"\partial_{x_1} = x_2,\ \partial_{x_2} = x_1", "x1 * x2", False),
    "divide": (r"\partial_{x_1} = 1/x_2,\ \partial_{x_2} = -y/x_2", "x1 / x2", False),
    "power": (r"\partial_{x_1} = x_2 x_1^{x_2 - 1},\ \partial_{x_2} = y \log x_1",
              "x1 ** x2 (also ``tf.pow``); the partials are 0 where x2 = 0, resp. where "
              "x1 = 0 and x2 >= 0, so 0**0 has finite derivatives", False),
    "atan2": (r"\partial_{x_1} = x_2/(x_1^2 + x_2^2),\ \partial_{x_2} = -x_1/(x_1^2 + x_2^2)",
              "the angle of the point (x2, x1) (also ``tf.arctan2``); 0 at the origin",
              True),
    "hypot": (r"\partial_{x_1} = x_1/y,\ \partial_{x_2} = x_2/y",
              "sqrt(x1² + x2²) without overflow; 0 at y = 0", True),
    "logaddexp": (r"\partial_{x_1} = \sigma(x_1 - x_2),\ \partial_{x_2} = \sigma(x_2 - x_1)",
                  "log(exp(x1) + exp(x2))", True),
    "copysign": (r"\partial_{x_1} = \pm 1,\ \partial_{x_2} = 0", "|x1| with x2's sign bit",
                 True),
    "remainder": (r"\partial_{x_1} = 1,\ \partial_{x_2} = -\lfloor x_1/x_2 \rfloor",
                  "x1 % x2 (the sign of x2)", True),
    "maximum": (r"\partial_{x_1} = [x_1 > x_2] + \tfrac12 [x_1 = x_2]",
                "the larger of x1 and x2 (NaN propagates); ties split the cotangent", True),
    "minimum": (r"\partial_{x_1} = [x_1 < x_2] + \tfrac12 [x_1 = x_2]",
                "the smaller of x1 and x2 (NaN propagates); ties split the cotangent", True),
}

# not differentiable, binary: name -> the dtype kinds they accept (as _check_kinds)
_NONDIFF_BINARY = {
    "equal": None, "not_equal": None, "less": "biuf", "less_equal": "biuf",
    "greater": "biuf", "greater_equal": "biuf", "logical_and": None, "logical_or": None,
    "logical_xor": None, "bitwise_and": "biu", "bitwise_or": "biu", "bitwise_xor": "biu",
    "bitwise_left_shift": "iu", "bitwise_right_shift": "iu", "nextafter": "biuf",
}
_NONDIFF_UNARY = {"logical_not": None, "bitwise_invert": "biu", "isnan": None,
                  "isinf": None, "isfinite": None, "signbit": "biuf"}
_KIND_DOCS = {"biuf": "real (bool, integer or float)", "biu": "bool or integer",
              "iu": "integer"}


def _document() -> None:
    g = globals()
    for name, (tex, what) in _UNARY_DOCS.items():
        _docs.describe(
            g[name], [_X],
            [("Tensor", f"{what}, elementwise; x's shape. " + (
                "NumPy's dtype (integer inputs stay integer)." if name == "square" else
                "Integer and bool inputs become float64 first."))],
            notes=rf"Derivative: :math:`\frac{{dy}}{{dx}} = {tex}` {_RULES}; for complex x "
                  r"the function is holomorphic and the reverse rule is "
                  r":math:`\bar x = \bar y\,\overline{f'(x)}`.")
    for name, (tex, what, real_only) in _BINARY_DOCS.items():
        _docs.describe(
            g[name], _X12_REAL if real_only else _X12,
            [("Tensor", f"{what}, elementwise, of the broadcast shape; NumPy 2's dtype "
                        "promotion.")],
            raises=[_SHAPE_ERR] + ([_COMPLEX_ERR] if real_only else []),
            notes=f"Derivative: :math:`{tex}` {_RULES}; each cotangent is summed back "
                  "to its input's shape.")
    for name, kinds in _NONDIFF_BINARY.items():
        kind = _KIND_DOCS.get(kinds or "", "any dtype")
        _docs.describe(
            g[name], [("x1", "array_like", f"A Tensor, NumPy array or Python scalar; {kind}."),
                      ("x2", "array_like", "The same; broadcasts against ``x1``.")],
            [("Tensor", "Of the broadcast shape and NumPy's result dtype; without a "
                        "gradient (a piecewise-constant or discrete function).")],
            raises=[_SHAPE_ERR] + ([("DTypeError", f"If an input is not {kind}.")]
                                   if kinds else []))
    for name, kinds in _NONDIFF_UNARY.items():
        kind = _KIND_DOCS.get(kinds or "", "any dtype")
        _docs.describe(
            g[name], [("x", "array_like", f"A Tensor, NumPy array or Python scalar; {kind}.")],
            [("Tensor", "x's shape, NumPy's result dtype; without a gradient.")],
            raises=[("DTypeError", f"If x is not {kind}.")] if kinds else [])
    for name in ("floor", "ceil", "trunc"):
        _docs.describe(
            g[name], [_XREAL], [("Tensor", "x's shape and dtype.")],
            raises=[("DTypeError", "If x is complex.")],
            notes=f"Derivative: 0 (piecewise constant; also at the jumps) {_RULES}.")
    _docs.describe(
        round, [("x", "array_like", "A Tensor, NumPy array or Python scalar."),
                ("decimals", "int, optional", "Decimal places (negative: tens, hundreds, "
                                              "...). Default 0.")],
        [("Tensor", "x's shape and dtype.")],
        notes=f"Derivative: 0 (piecewise constant; also at the jumps) {_RULES}.")
    _docs.describe(
        floor_divide, list(_X12_REAL), [("Tensor", "Of the broadcast shape.")],
        raises=[_SHAPE_ERR, _COMPLEX_ERR],
        notes=f"Derivative: 0 in both arguments (piecewise constant) {_RULES}.")
    _docs.describe(
        sign, [("x", "array_like", "A Tensor, NumPy array or Python scalar; not bool.")],
        [("Tensor", "x's shape and dtype.")], raises=[("DTypeError", "If x is boolean.")],
        notes=r"Derivative: 0 for real x; for complex z, with :math:`y = z/|z|`, "
              r":math:`\dot y = (\dot z - y\,\mathrm{Re}(\bar y \dot z))/|z|` (0 at 0) "
              f"{_RULES}.")
    _docs.describe(
        negative, [_X], [("Tensor", "-x, x's shape and dtype.")],
        notes=f"Derivative: linear, the VJP is :math:`\\bar x = -\\bar y` {_RULES}.")
    _docs.describe(
        positive, [("x", "array_like", "A Tensor, NumPy array or Python scalar; not bool.")],
        [("Tensor", "A new tensor with x's values.")],
        raises=[("DTypeError", "If x is boolean.")],
        notes=f"Derivative: the identity, :math:`\\bar x = \\bar y` {_RULES}.")
    _docs.describe(
        abs, [_X], [("Tensor", "|x|, x's shape; real (the real dtype of a complex x).")],
        notes=r"Derivative: :math:`\bar z = \bar y\, z/|z|` (real :math:`\bar y`; "
              r":math:`\operatorname{sign}(x)` for real x), 0 at 0; "
              r":math:`\dot y = \mathrm{Re}(\overline{z/|z|}\,\dot z)` " + _RULES + ".")
    _docs.describe(
        conj, [_X], [("Tensor", "The conjugate, x's shape and dtype (x itself if real).")],
        notes=r"Derivative: :math:`\bar x = \overline{\bar y}`, "
              r":math:`\dot y = \overline{\dot x}` " + _RULES + ".")
    _docs.describe(
        real, [_X], [("Tensor", "The real part (a view of a complex x; x itself if real).")],
        notes=r"Derivative: linear, :math:`\bar z = \bar y + 0i` " + _RULES + ".")
    _docs.describe(
        imag, [_X], [("Tensor", "The imaginary part (a view of a complex x; zeros if real).")],
        notes=r"Derivative: linear, :math:`\bar z = i\,\bar y` " + _RULES + ".")
    _docs.describe(
        where, [("condition", "array_like", "Booleans (other dtypes are cast to bool); not "
                                            "differentiated."),
                ("x", "array_like", "Values where ``condition`` is true."),
                ("y", "array_like", "Values where it is false; the three broadcast.")],
        [("Tensor", "Of the broadcast shape, NumPy's result dtype of x and y.")],
        raises=[("ShapeError", "If the three do not broadcast.")],
        notes=r"Derivative: the cotangent goes to x where the condition holds, to y "
              r"elsewhere: :math:`\bar x = [c]\,\bar y`, :math:`\bar y' = [\lnot c]\,\bar y` "
              + _RULES + ".")
    _docs.describe(
        clip, [("x", "array_like", "A Tensor, NumPy array or Python scalar; real."),
               ("min", "array_like, optional", "The lower bound; None: unbounded. Default "
                                               "None."),
               ("max", "array_like, optional", "The upper bound; None: unbounded. Default "
                                               "None.")],
        [("Tensor", "x's dtype, the broadcast shape of x, min and max.")],
        raises=[("DTypeError", "If an input is complex, or x is an integer tensor and a "
                               "bound requires grad."),
                ("ShapeError", "If x, min and max do not broadcast.")],
        notes=r"Derivative: :math:`\partial_x = [\min \le x \le \max]`, "
              r":math:`\partial_{\min} = [x < \min]`, "
              r":math:`\partial_{\max} = [x > \max \lor \min > \max]` " + _RULES + ".")


_document()
