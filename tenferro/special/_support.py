"""Shared helpers of tenferro.special: the constants, the factories of one, two and
three arguments (on top of tenferro._ops.pointwise) and the argument checks."""
from __future__ import annotations

from typing import Any, Callable, Sequence, TypeAlias

from numpy.typing import ArrayLike, NDArray

import math

import numpy as np
import scipy.special as _sc

from .._engine import apply1
from .._errors import DTypeError, UnsupportedADError
from .._rule_api import is_tracked
from .._tensor import Tensor
from .._ops.registry import defop, register
from .._ops._util import broadcast_shape, floating_args, payload
from .._ops.pointwise import arr as _arr, binary, cast as _cast, partial_rules, unary
from ._docs import generated as _generated_doc


# The public functions' module, as they were before special.py became a package (the API
# pages and NumPy's dispatch messages name it)
_MODULE = "tenferro.special"

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT2 = 1 / math.sqrt(2)
_TWO_OVER_SQRT_PI = 2 / _SQRT_PI
_LOG_PI = math.log(math.pi)

# A rule (vjp or jvp): it runs on ndarrays and on Tensors (create_graph), hence Any.
_Rule: TypeAlias = Callable[..., Any]
# derivs(a, b, y, needs) of a two-argument function: (∂y/∂a, ∂y/∂b), None where not needed.
_Derivs: TypeAlias = Callable[[Any, Any, Any, Any], "tuple[Any, Any]"]
# The float64 arrays of the shape-parameter series, their index sets and masks.
_F64: TypeAlias = "NDArray[np.float64]"
_Idx: TypeAlias = "NDArray[np.intp]"
_Mask: TypeAlias = "NDArray[np.bool_]"


# ---- helpers ---------------------------------------------------------------------------

def _horner(coeffs: Sequence[float], v: Any) -> Any:
    """Σ coeffs[k]·vᵏ by Horner's rule (differentiable: plain arithmetic on v)."""
    poly = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        poly = poly * v + c
    return poly


def _ap(f: Any, *args: Any) -> Any:
    """``f`` applied inside a rule: the recorded tenferro op when an argument is a Tensor
    (create_graph: the rule is differentiated again), NumPy/SciPy on ndarrays."""
    for a in args:
        if isinstance(a, Tensor):
            return f(*args)
    return f._np(*args)


def _mask(x: Any) -> NDArray[Any]:
    return payload(x)


def _where(cond: Any, a: Any, b: Any) -> Any:
    """np.where, also when a or b is a Tensor (then tf.where: differentiable branches)."""
    return np.where(cond, a, b)


def _check_complex(name: str, ok: bool, *tensors: Tensor) -> None:
    if ok:
        return
    for t in tensors:
        if t._data.dtype.kind == "c":
            hint = " (use tf.special.loggamma for complex log-gamma)" if name == "gammaln" \
                else ""
            raise DTypeError(f"tf.special.{name} is defined for real tensors only, as in "
                             f"scipy.special, got {t._data.dtype}{hint}")


def _no_derivative(name: str, argname: str, t: object, why: str) -> None:
    if isinstance(t, Tensor) and is_tracked(t):
        raise UnsupportedADError(
            f"tf.special.{name}: no derivative in {argname!r} ({why}); pass it without "
            f"requires_grad (e.g. .detach()) to differentiate in the other arguments")


def _result_dtype(*tensors: Tensor) -> np.dtype[Any]:
    return np.result_type(*(t._data.dtype for t in tensors))


def _weak_floats(args: Sequence[ArrayLike]) -> list[Tensor]:
    """The arguments as floating Tensors, promoted as everywhere (``float_result_type``,
    NumPy 2): Python numbers take the arrays' precision (betainc(1.5, 2.5, float32 x)
    stays float32), an int64 tensor with a float32 one gives float64."""
    return floating_args(*args)


def _ufuncs_of(name: str, ufunc: Callable[..., Any]) -> tuple[Any, ...]:
    """The NumPy ufuncs a special function overrides: its own and SciPy's public one."""
    ufuncs = [ufunc] if isinstance(ufunc, np.ufunc) else []
    pub = getattr(_sc, name, None)
    if isinstance(pub, np.ufunc) and pub not in ufuncs:
        ufuncs.append(pub)
    return tuple(ufuncs)


def _unary(name: str, ufunc: Callable[..., Any], deriv: Callable[[Any, Any], Any], *,
           complex_ok: bool = False, primal: Callable[..., Any] | None = None,
           quiet: bool = False, doc: str = "") -> Callable[[ArrayLike], Tensor]:
    """y = ufunc(x) with f'(x) = deriv(x, y); holomorphic for complex x (pointwise.unary:
    the rules from the derivative). ``quiet``: the rule runs with NumPy's warnings off
    (boundary values: 1/0, exp overflow), which costs ~2 µs per call, so functions whose
    rules are warning-free go without."""
    compute = ufunc if primal is None else primal

    def check(t: Tensor) -> None:
        _check_complex(name, False, t)

    f = unary(name, ufunc, deriv, op_name="special." + name, primal=primal,
              complex=complex_ok, check=check, same_dtype=True, quiet_rules=quiet,
              op_doc=doc, doc=_generated_doc(name, ("x",), doc, complex_ok),
              module=_MODULE, ufuncs=_ufuncs_of(name, ufunc))
    # the NumPy version _ap calls inside a rule on ndarrays (a function attribute)
    f._np = lambda x: _arr(compute(x))  # type: ignore[attr-defined]
    return f


def _binary(name: str, ufunc: Callable[..., Any], derivs: _Derivs | None, *,
            complex_ok: bool = False, real_args: tuple[int, ...] = (),
            nondiff: dict[int, str] | None = None, primal: Callable[..., Any] | None = None,
            doc: str = "", argnames: tuple[str, str] = ("x", "y"), **rules: Any
            ) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    """y = ufunc(a, b) broadcasting; derivs(a, b, y, needs) -> (∂y/∂a, ∂y/∂b) (None where
    not needed), from which pointwise.binary derives the rules (holomorphic in a complex
    argument), or ``rules`` given (pointwise.binary's vjp_a, vjp_b, jvp: for a function
    that is not holomorphic). ``nondiff``: {index: reason} of arguments without a
    derivative. ``complex_ok`` with ``real_args``: those arguments must still be real
    (a Bessel function's order: SciPy's loops take complex x, real v)."""
    compute = ufunc if primal is None else primal

    def check(a: Tensor, b: Tensor) -> None:
        _check_complex(name, False, a, b)

    def before(a: Tensor, b: Tensor) -> None:
        for i in real_args:
            t = (a, b)[i]
            # a real order can arrive complex with a zero imaginary part: a Python
            # scalar takes a complex tensor x's dtype (weak promotion); only a truly
            # complex order is refused (the rules and primal take v.real)
            if t._data.dtype.kind == "c" and np.any(t._data.imag != 0):
                raise DTypeError(f"tf.special.{name}: {argnames[i]} must be real (SciPy "
                                 f"takes complex {argnames[1 - i]} only), got {t.dtype}")
        for i, why in (nondiff or {}).items():
            _no_derivative(name, argnames[i], (a, b)[i], why)
        broadcast_shape(name, a.shape, b.shape)

    f = binary(name, compute, derivs, op_name="special." + name, complex=complex_ok,
               check=check, before=before, floats=True, same_dtype=True, quiet_rules=True,
               array_ops=False, op_doc=doc, **rules,
               doc=_generated_doc(name, argnames, doc, complex_ok,
                                  [argnames[i] for i in (nondiff or {})]),
               module=_MODULE, ufuncs=_ufuncs_of(name, ufunc))
    f._np = lambda a, b: _arr(compute(a, b))  # type: ignore[attr-defined]  # as _unary's
    return f


def _ternary(name: str, ufunc: Callable[..., Any], derivs: Callable[..., tuple[Any, Any, Any]],
             argnames: tuple[str, str, str], doc: str
             ) -> Callable[[ArrayLike, ArrayLike, ArrayLike], Tensor]:
    """y = ufunc(p1, p2, x) broadcasting; derivs(p1, p2, x, needs) -> the three partial
    derivatives (None where not needed), from which pointwise.partial_rules derives the
    rules."""
    vjp, jvp = partial_rules(derivs, 3, complex=False, quiet_rules=True)
    op = defop("special." + name, vjp, jvp, complex=False, doc=doc)

    def f(*args: ArrayLike) -> Tensor:
        if len(args) != len(argnames):
            raise TypeError(f"tf.special.{name} takes {len(argnames)} arguments "
                            f"({', '.join(argnames)}), got {len(args)}")
        ts = _weak_floats(args)
        _check_complex(name, False, *ts)
        broadcast_shape(name, *(t.shape for t in ts))
        dt = _result_dtype(*ts)
        return apply1(op, tuple(ts), _cast(ufunc(*(t._data for t in ts)), dt))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = _generated_doc(name, argnames, doc, False)
    register(f, ufuncs=tuple(u for u in {ufunc, getattr(_sc, name, None)}
                             if isinstance(u, np.ufunc)))
    return f
