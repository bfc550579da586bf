"""Elementwise ops: arithmetic, transcendental functions, comparisons-based selections.

Unary holomorphic functions are one line each: the derivative ``c = f'(x)`` written with
NumPy (``x`` the input, ``y`` the output), from which VJP ``x̄ = ȳ·conj(c)`` and JVP
``ẏ = c·ẋ`` follow (RULES.md, "Elementwise"). Binary ops broadcast like NumPy and sum
their cotangents back to each input's shape.
"""
import numpy as np

from .._engine import apply1
from .._tensor import Tensor
from .registry import defop, register, register_nondiff
from ._util import (broadcast_shape, conj, floating, operands, payload, require_real,
                    to_tensor, unbroadcast)

__all__ = [
    "add", "subtract", "multiply", "divide", "power", "negative", "abs", "conj", "real",
    "imag", "exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan", "tanh", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "atan2", "hypot",
    "maximum", "minimum", "where", "clip", "sign", "square", "reciprocal",
    # PyTorch/Python-style spellings (DESIGN.md §3 names them)
    "pow", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arctan2",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_invert",
]

_conj = conj


def _bcast(t, shape):
    return t if t.shape == shape else np.broadcast_to(t, shape)


def _arr(out):
    """A ufunc result as an ndarray: on 0-d inputs NumPy returns a scalar instead."""
    return out if type(out) is np.ndarray else np.asarray(out)


# ---- unary holomorphic functions -------------------------------------------------------

def _unary(name, ufunc, deriv, aliases=(), real_only=False, keeps_int=False):
    """Register y = ufunc(x) with f'(x) = deriv(x, y). Integer and bool inputs become
    float64 first, unless ``keeps_int`` (square: NumPy keeps the integer dtype)."""

    def vjp(ctx, needs, gs, xs, ys):
        return (gs[0] * _conj(deriv(xs[0], ys[0])),)

    def jvp(ctx, ts, xs, ys):
        return (ts[0] * deriv(xs[0], ys[0]),)

    op = defop(name, vjp, jvp, complex=not real_only)

    def f(x):
        x = to_tensor(x) if keeps_int else floating(to_tensor(x))
        if real_only:
            require_real(name, x)
        return apply1(op, (x,), _arr(ufunc(x._data)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``numpy.{ufunc.__name__}``, differentiable."
    register(f, methods=(name,) + aliases, ufuncs=(ufunc,))
    return f


exp = _unary("exp", np.exp, lambda x, y: y)
expm1 = _unary("expm1", np.expm1, lambda x, y: y + 1)
log = _unary("log", np.log, lambda x, y: 1 / x)
log1p = _unary("log1p", np.log1p, lambda x, y: 1 / (1 + x))
sqrt = _unary("sqrt", np.sqrt, lambda x, y: 0.5 / y)
sin = _unary("sin", np.sin, lambda x, y: np.cos(x))
cos = _unary("cos", np.cos, lambda x, y: -np.sin(x))
tan = _unary("tan", np.tan, lambda x, y: 1 + y * y)
tanh = _unary("tanh", np.tanh, lambda x, y: 1 - y * y)
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
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh

# ---- non-holomorphic and structural unary ops -------------------------------------------

_neg_op = defop("negative", lambda ctx, needs, gs, xs, ys: (-gs[0],),
                lambda ctx, ts, xs, ys: (-ts[0],))


def negative(x):
    """``-x``."""
    x = to_tensor(x)
    return apply1(_neg_op, (x,), _arr(np.negative(x._data)))


def _abs_sgn(x, y):
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


def abs(x):
    """``|x|`` (complex modulus for complex x); subgradient 0 at 0."""
    x = to_tensor(x)
    return apply1(_abs_op, (x,), _arr(np.abs(x._data)))


_conj_op = defop("conj", lambda ctx, needs, gs, xs, ys: (_conj(gs[0]),),
                 lambda ctx, ts, xs, ys: (_conj(ts[0]),))


def conj(x):
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


def real(x):
    """Real part (the tensor itself when real)."""
    x = to_tensor(x)
    if x.dtype.kind != "c":
        return x
    # .copy(): a contiguous array that does not alias x (np.ascontiguousarray would turn a
    # 0-d result into shape (1,))
    return apply1(_real_op, (x,), x._data.real.copy())


def imag(x):
    """Imaginary part (a constant zero tensor when x is real)."""
    x = to_tensor(x)
    if x.dtype.kind != "c":
        return Tensor._wrap(np.zeros_like(x._data))
    return apply1(_imag_op, (x,), x._data.imag.copy())


def sign(x):
    """``numpy.sign`` (x/|x| for complex); piecewise constant, so not differentiated."""
    x = to_tensor(x)
    return Tensor._wrap(_arr(np.sign(x._data)))


register(negative, methods=("negative", "__neg__"), ufuncs=(np.negative,))
register(abs, methods=("abs", "__abs__"), ufuncs=(np.absolute,))
register(conj, methods=("conj", "conjugate"), ufuncs=(np.conjugate,))
register(real, ufuncs=(), functions=(np.real,))
register(imag, functions=(np.imag,))
register(sign, methods=("sign",), ufuncs=(np.sign,))
register(lambda x: x, methods=("__pos__",), ufuncs=(np.positive,))
Tensor.real = property(real, doc="Real part (differentiable).")
Tensor.imag = property(imag, doc="Imaginary part (differentiable).")

# ---- binary arithmetic ------------------------------------------------------------------


def _promote(a, b, y):
    """Both inputs in the output's dtype, as the primal computed them. Otherwise a rule
    mixing float32 and float64 loses precision (log(a) of a float32 base in power), and a
    real input of a complex op leaves the complex branch (log of a negative real base of
    a complex power is NaN in real arithmetic)."""
    dt = y.dtype
    if a.dtype != dt:
        a = a.astype(dt)
    if b.dtype != dt:
        b = b.astype(dt)
    return a, b


def _binary(name, ufunc, vjp_a, vjp_b, jvp, real_only=False, methods=(), rmethod=None,
            floats=False):
    """Register y = ufunc(a, b) with broadcasting.

    vjp_a(g, a, b, y) / vjp_b(...) give the cotangents before un-broadcasting;
    jvp(ta, tb, a, b, y) gets None for a zero tangent. ``floats``: integer and bool
    operands become float64 first (functions with a floating-point result).
    """

    def vjp(ctx, needs, gs, xs, ys):
        g, y = gs[0], ys[0]
        a, b = _promote(xs[0], xs[1], y)
        ga = unbroadcast(vjp_a(g, a, b, y), xs[0].shape) if needs[0] else None
        gb = unbroadcast(vjp_b(g, a, b, y), xs[1].shape) if needs[1] else None
        return ga, gb

    def jvp_rule(ctx, ts, xs, ys):
        y = ys[0]
        a, b = _promote(xs[0], xs[1], y)
        return (_bcast(jvp(ts[0], ts[1], a, b, y), y.shape),)

    op = defop(name, vjp, jvp_rule, complex=not real_only)

    def f(a, b):
        a, b = operands(a, b)
        if floats:
            a, b = floating(a), floating(b)
        if real_only:
            require_real(name, a, b)
        try:
            out = ufunc(a._data, b._data)
        except ValueError:
            broadcast_shape(name, a.shape, b.shape)  # raises ShapeError if that is the cause
            raise
        return apply1(op, (a, b), _arr(out))

    def rf(b, a):
        return f(a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``numpy.{ufunc.__name__}`` with broadcasting, differentiable."
    register(f, methods=methods, ufuncs=(ufunc,))
    if rmethod:
        register(rf, methods=(rmethod,))
    return f


def _lin(ca, cb):
    """JVP of ca·a + cb·b for constant coefficients ±1."""
    def jvp(ta, tb, a, b, y):
        if ta is None:
            return tb if cb == 1 else -tb
        if tb is None:
            return ta if ca == 1 else -ta
        return ta + tb if cb == 1 else ta - tb
    return jvp


add = _binary("add", np.add, lambda g, a, b, y: g, lambda g, a, b, y: g, _lin(1, 1),
              methods=("add", "__add__"), rmethod="__radd__")
subtract = _binary("subtract", np.subtract, lambda g, a, b, y: g, lambda g, a, b, y: -g,
                   _lin(1, -1), methods=("subtract", "__sub__"), rmethod="__rsub__")


def _mul_jvp(ta, tb, a, b, y):
    if ta is None:
        return a * tb
    if tb is None:
        return ta * b
    return ta * b + a * tb


multiply = _binary("multiply", np.multiply,
                   lambda g, a, b, y: g * _conj(b), lambda g, a, b, y: g * _conj(a), _mul_jvp,
                   methods=("multiply", "__mul__"), rmethod="__rmul__")


def _div_jvp(ta, tb, a, b, y):
    # ẏ = (ȧ − y·ḃ)/b
    if tb is None:
        return ta / b
    if ta is None:
        return -(y * tb) / b
    return (ta - y * tb) / b


divide = _binary("divide", np.divide,
                 lambda g, a, b, y: g / _conj(b),
                 lambda g, a, b, y: -g * _conj(y / b), _div_jvp,
                 methods=("divide", "__truediv__"), rmethod="__rtruediv__")


def _pow_da(a, b, y):
    # ∂y/∂a = b·a^(b−1), 0 where b = 0 (so 0**0 has a finite derivative)
    return np.where(b == 0, 0, b * a ** np.where(b == 0, 1, b - 1))


def _pow_db(a, b, y):
    # ∂y/∂b = y·log a, 0 where a = 0 and b is real and >= 0: 0**b is 0 for b > 0 (y = 0)
    # and also 0**0 = 1 gets a finite derivative (PyTorch's convention) instead of -inf.
    if b.dtype.kind == "c":
        zero = (a == 0) & (np.real(b) >= 0) & (np.imag(b) == 0)
    else:
        zero = (a == 0) & (b >= 0)
    return np.where(zero, 0, y * np.log(np.where(zero, 1, a)))


def _pow_jvp(ta, tb, a, b, y):
    out = None if ta is None else ta * _pow_da(a, b, y)
    if tb is not None:
        d = tb * _pow_db(a, b, y)
        out = d if out is None else out + d
    return out


power = _binary("power", np.power,
                lambda g, a, b, y: g * _conj(_pow_da(a, b, y)),
                lambda g, a, b, y: g * _conj(_pow_db(a, b, y)), _pow_jvp,
                methods=("pow", "power", "__pow__"), rmethod="__rpow__")
pow = power


def _atan2_vjp(which):
    def rule(g, a, b, y):
        r = a * a + b * b
        r = np.where(r == 0, 1, r)
        return g * (b / r if which == 0 else -a / r)
    return rule


def _atan2_jvp(ta, tb, a, b, y):
    r = a * a + b * b
    r = np.where(r == 0, 1, r)
    out = None if ta is None else ta * (b / r)
    if tb is not None:
        d = tb * (-a / r)
        out = d if out is None else out + d
    return out


atan2 = _binary("atan2", np.arctan2, _atan2_vjp(0), _atan2_vjp(1), _atan2_jvp,
                real_only=True, methods=("atan2", "arctan2"), floats=True)
arctan2 = atan2


def _hypot_coef(x, h):
    # ∂h/∂x = x/h, 0 at h = 0
    return x / np.where(h == 0, 1, h)


def _hypot_jvp(ta, tb, a, b, y):
    out = None if ta is None else ta * _hypot_coef(a, y)
    if tb is not None:
        d = tb * _hypot_coef(b, y)
        out = d if out is None else out + d
    return out


hypot = _binary("hypot", np.hypot, lambda g, a, b, y: g * _hypot_coef(a, y),
                lambda g, a, b, y: g * _hypot_coef(b, y), _hypot_jvp, real_only=True,
                methods=("hypot",), floats=True)


def _select_weight(a, b, pick_a):
    """1 where a wins, 0 where b wins, ½ on ties (the cotangent splits evenly)."""
    wins = (a > b) if pick_a else (a < b)
    return np.where(a == b, 0.5, np.where(wins, 1.0, 0.0)).astype(np.result_type(a, b))


def _extremum(name, ufunc, pick_a):
    def weights(a, b):
        return _select_weight(payload(a), payload(b), pick_a)

    def jvp(ta, tb, a, b, y):
        w = weights(a, b)
        out = None if ta is None else ta * w
        if tb is not None:
            d = tb * (1 - w)
            out = d if out is None else out + d
        return out

    return _binary(name, ufunc, lambda g, a, b, y: g * weights(a, b),
                   lambda g, a, b, y: g * (1 - weights(a, b)), jvp, real_only=True,
                   methods=(name,))


maximum = _extremum("maximum", np.maximum, True)
minimum = _extremum("minimum", np.minimum, False)

# ---- selections -------------------------------------------------------------------------


def _where_vjp(ctx, needs, gs, xs, ys):
    cond, g = ctx, gs[0]
    zero = np.zeros((), dtype=g.dtype)
    ga = unbroadcast(np.where(cond, g, zero), xs[0].shape) if needs[0] else None
    gb = unbroadcast(np.where(cond, zero, g), xs[1].shape) if needs[1] else None
    return ga, gb


def _where_jvp(ctx, ts, xs, ys):
    ta, tb = ts
    zero = np.zeros((), dtype=ys[0].dtype)
    t = np.where(ctx, zero if ta is None else ta, zero if tb is None else tb)
    return (_bcast(t, ys[0].shape),)


_where_op = defop("where", _where_vjp, _where_jvp)


def where(condition, x, y):
    """``numpy.where(condition, x, y)``; the condition is not differentiated."""
    cond = np.asarray(condition.numpy() if isinstance(condition, Tensor) else condition)
    if cond.dtype != bool:
        cond = cond.astype(bool)
    a, b = operands(x, y)
    broadcast_shape("where", cond.shape, a.shape, b.shape)   # raises ShapeError
    return apply1(_where_op, (a, b), np.where(cond, a._data, b._data), ctx=cond)


register(where, functions=(np.where,))


def _clip_vjp(ctx, needs, gs, xs, ys):
    return (gs[0] * ctx,)


def _clip_jvp(ctx, ts, xs, ys):
    return (ts[0] * ctx,)


_clip_op = defop("clip", _clip_vjp, _clip_jvp, complex=False)


def clip(x, min=None, max=None):
    """Clamp to [min, max] (constants; None = unbounded). The derivative passes where
    min <= x <= max (bounds included, as in PyTorch) and is 0 outside."""
    x = to_tensor(x)
    require_real("clip", x)
    lo = None if min is None else np.asarray(min.numpy() if isinstance(min, Tensor) else min)
    hi = None if max is None else np.asarray(max.numpy() if isinstance(max, Tensor) else max)
    d = x._data
    inside = np.ones(d.shape, dtype=bool)
    if lo is not None:
        inside &= d >= lo
    if hi is not None:
        inside &= d <= hi
    out = _arr(np.clip(d, lo, hi)).astype(d.dtype, copy=False)
    return apply1(_clip_op, (x,), out, ctx=inside.astype(d.dtype))


register(clip, methods=("clip", "clamp"), functions=(np.clip,))

# ---- comparisons, logical and bitwise ops -------------------------------------------------
# Piecewise constant or integer-valued: tensors without a gradient. ``t < u`` and
# ``tf.less(t, u)`` give tensors; NumPy's own ``np.less(t, u)`` gives NumPy's array
# (registry.NONDIFF: the result does not depend differentiably on the inputs).

_OPERAND_TYPES = (Tensor, np.ndarray, np.generic, bool, int, float, complex, list, tuple)


def _nondiff_binary(name, ufunc, method=None, rmethod=None):
    """Register a non-differentiable elementwise x1 ∘ x2 (broadcasting, NumPy promotion)."""
    def f(x1, x2, /):
        a, b = operands(x1, x2)
        try:
            out = ufunc(a._data, b._data)
        except ValueError:
            broadcast_shape(name, a.shape, b.shape)  # raises ShapeError if that is the cause
            raise
        return Tensor._wrap(_arr(out))

    def dunder(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return f(self, other)

    def rdunder(self, other):
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


def _nondiff_unary(name, ufunc, method=None):
    """Register a non-differentiable elementwise function of one tensor."""
    def f(x, /):
        x = to_tensor(x)
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
less = _nondiff_binary("less", np.less, "__lt__")
less_equal = _nondiff_binary("less_equal", np.less_equal, "__le__")
greater = _nondiff_binary("greater", np.greater, "__gt__")
greater_equal = _nondiff_binary("greater_equal", np.greater_equal, "__ge__")
logical_and = _nondiff_binary("logical_and", np.logical_and)
logical_or = _nondiff_binary("logical_or", np.logical_or)
logical_xor = _nondiff_binary("logical_xor", np.logical_xor)
logical_not = _nondiff_unary("logical_not", np.logical_not)
bitwise_and = _nondiff_binary("bitwise_and", np.bitwise_and, "__and__", "__rand__")
bitwise_or = _nondiff_binary("bitwise_or", np.bitwise_or, "__or__", "__ror__")
bitwise_xor = _nondiff_binary("bitwise_xor", np.bitwise_xor, "__xor__", "__rxor__")
bitwise_invert = _nondiff_unary("bitwise_invert", np.invert, "__invert__")
