"""Elementary functions in SciPy's forms: sinc, cbrt, exp2, exp10, cosm1, exprel, the
trigonometric functions in degrees (sindg, cosdg, tandg, cotdg, radian) and the
Box-Cox transformations."""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike

import math

import numpy as np
from scipy.special import _ufuncs as _u

from .._tensor import Tensor
from .._ops.registry import FUNCTIONS, register
from ._support import _Derivs, _ap, _binary, _horner, _mask, _ternary, _unary, _where


# ---- sinc ---------------------------------------------------------------------------------

# sinc'(x) = Σ_{k≥1} (−1)ᵏ 2k π²ᵏ x²ᵏ⁻¹/(2k+1)!: for |x| < 0.1 eight terms are exact to
# rounding, where (cos πx − sinc x)/x loses digits to cancellation
_SINC_TAYLOR = tuple((-1) ** k * 2 * k * math.pi ** (2 * k) / math.factorial(2 * k + 1)
                     for k in range(1, 9))
_SINC_SMALL = 0.1


def _sinc_deriv(x: Any, y: Any) -> Any:
    small = np.abs(_mask(x)) < _SINC_SMALL
    xs = _where(small, 1, x) if small.any() else x
    px = math.pi * xs
    far = (np.cos(px) - _where(small, 1, y) if small.any() else np.cos(px) - y) / xs
    if not small.any():
        return far
    x2 = x * x
    poly = _horner(_SINC_TAYLOR, x2)
    return _where(small, poly * x, far)


sinc = _unary("sinc", np.sinc, _sinc_deriv, complex_ok=True,
              doc="normalized sin(πx)/(πx) as numpy.sinc; d/dx = (cos πx − sinc x)/x")
if np.sinc not in FUNCTIONS:   # numpy.sinc(t) may have its tenferro version already (_numpy)
    register(sinc, functions=(np.sinc,))


# ---- exponentials, powers, trigonometry in degrees ------------------------------------------

_LN2 = math.log(2)
_LN10 = math.log(10)
_DEG = math.pi / 180

cbrt = _unary("cbrt", _u.cbrt, lambda x, y: 1 / (3 * (y * y)), quiet=True,
              doc="d/dx = 1/(3·cbrt(x)²) (inf at 0)")
exp2 = _unary("exp2", _u.exp2, lambda x, y: _LN2 * y, doc="d/dx = log(2)·2ˣ")
exp10 = _unary("exp10", _u.exp10, lambda x, y: _LN10 * y, doc="d/dx = log(10)·10ˣ")
cosm1 = _unary("cosm1", _u.cosm1, lambda x, y: -np.sin(x), doc="d/dx = −sin x")

# exprel′(x) = Σ_{k≥1} k x^(k−1)/(k+1)!: for |x| < 0.5, 18 terms are exact to rounding,
# where y(1 − 1/x) + 1/x (= (x eˣ − eˣ + 1)/x²) loses digits to cancellation
_EXPREL_TAYLOR = tuple(k / math.factorial(k + 1) for k in range(1, 19))
_EXPREL_SMALL = 0.5


def _exprel_deriv(x: Any, y: Any) -> Any:
    small = np.abs(_mask(x)) < _EXPREL_SMALL
    xs = _where(small, 1, x) if small.any() else x
    far = (_where(small, 1, y) if small.any() else y) * (1 - 1 / xs) + 1 / xs
    if not small.any():
        return far
    xn = _where(small, x, 0)
    poly = _horner(_EXPREL_TAYLOR, xn)
    return _where(small, poly, far)


exprel = _unary("exprel", _u.exprel, _exprel_deriv, quiet=True,
                doc="(eˣ − 1)/x; d/dx = exprel(x)(1 − 1/x) + 1/x (a Taylor polynomial for "
                    "|x| < 0.5; the limit ½ at 0)")

# declared for the type checker: derivative rules below use them before they are defined
cosdg: Callable[[ArrayLike], Tensor]
sindg = _unary("sindg", _u.sindg, lambda x, y: _DEG * _ap(cosdg, x),
               doc="sine of x degrees; d/dx = π/180·cosdg(x)")
cosdg = _unary("cosdg", _u.cosdg, lambda x, y: -_DEG * _ap(sindg, x),
               doc="cosine of x degrees; d/dx = −π/180·sindg(x)")
tandg = _unary("tandg", _u.tandg, lambda x, y: _DEG * (1 + y * y), quiet=True,
               doc="tangent of x degrees; d/dx = π/180·(1 + tandg(x)²)")
cotdg = _unary("cotdg", _u.cotdg, lambda x, y: -_DEG * (1 + y * y), quiet=True,
               doc="cotangent of x degrees; d/dx = −π/180·(1 + cotdg(x)²)")


def _radian_derivs(d: Any, m: Any, s: Any, needs: Any) -> tuple[Any, Any, Any]:
    return (_DEG if needs[0] else None, _DEG / 60 if needs[1] else None,
            _DEG / 3600 if needs[2] else None)


radian = _ternary("radian", _u.radian, _radian_derivs, ("d", "m", "s"),
                  "an angle in degrees, minutes, seconds in radians: ∂d = π/180, "
                  "∂m = π/(180·60), ∂s = π/(180·3600)")


# ---- Box-Cox transformations --------------------------------------------------------------------

# d/dλ of (e^(λL) − 1)/λ = L²·Σ_{k≥1} k u^(k−1)/(k+1)! with u = λL: exact to rounding with
# 18 terms for |u| < 0.5, where (e^u·L − y)/λ cancels
_BOXCOX_SMALL = 0.5


def _boxcox_like(log_fn: Callable[[Any], Any], shift: int) -> _Derivs:
    """Derivatives of y = (b^λ − 1)/λ (log b at λ = 0), b = x + shift, L = log b."""
    def derivs(x: Any, lmbda: Any, y: Any, needs: Any) -> tuple[Any, Any]:
        L = log_fn(x)
        dx = dl = None
        if needs[0]:
            dx = np.power(x + shift if shift else x, lmbda - 1)
        if needs[1]:
            u = lmbda * L
            small = np.abs(_mask(u)) < _BOXCOX_SMALL
            ls = _where(small, 1, lmbda) if small.any() else lmbda
            far = (np.exp(u) * L - (_where(small, 0, y) if small.any() else y)) / ls
            if small.any():
                un = _where(small, u, 0)
                poly = _horner(_EXPREL_TAYLOR, un)
                dl = _where(small, (L * L) * poly, far)
            else:
                dl = far
        return dx, dl
    return derivs


boxcox = _binary("boxcox", _u.boxcox, _boxcox_like(np.log, 0), argnames=("x", "lmbda"),
                 doc="(x^λ − 1)/λ (log x at λ = 0): ∂x = x^(λ−1), "
                     "∂λ = (x^λ log x − y)/λ ((log x)²/2 at λ = 0)")
boxcox1p = _binary("boxcox1p", _u.boxcox1p, _boxcox_like(np.log1p, 1),
                   argnames=("x", "lmbda"),
                   doc="((1+x)^λ − 1)/λ: ∂x = (1+x)^(λ−1), ∂λ = ((1+x)^λ log1p x − y)/λ")

# d/dλ of log1p(λy)/λ = y²·Σ_{k≥1} (−1)ᵏ k v^(k−1)/(k+1) with v = λy: 40 terms for |v| < 0.3
_INV_BOXCOX_TERMS = tuple((-1) ** k * k / (k + 1) for k in range(1, 41))
_INV_BOXCOX_SMALL = 0.3


def _inv_boxcox_like(offset: int) -> _Derivs:
    """Derivatives of x = exp(log1p(λy)/λ) − offset (e^y − offset at λ = 0)."""
    def derivs(y: Any, lmbda: Any, x: Any, needs: Any) -> tuple[Any, Any]:
        xp = x + offset if offset else x        # (1 + λy)^(1/λ)
        v = lmbda * y
        dy = dl = None
        if needs[0]:
            dy = xp / (1 + v)
        if needs[1]:
            small = np.abs(_mask(v)) < _INV_BOXCOX_SMALL
            ls = _where(small, 1, lmbda) if small.any() else lmbda
            vs = _where(small, 0, v) if small.any() else v
            far = y / (ls * (1 + vs)) - np.log1p(vs) / (ls * ls)
            if small.any():
                vn = _where(small, v, 0)
                poly = _horner(_INV_BOXCOX_TERMS, vn)
                far = _where(small, (y * y) * poly, far)
            dl = xp * far
        return dy, dl
    return derivs


inv_boxcox = _binary("inv_boxcox", _u.inv_boxcox, _inv_boxcox_like(0),
                     argnames=("y", "lmbda"),
                     doc="(1 + λy)^(1/λ) (e^y at λ = 0): ∂y = x/(1 + λy), "
                         "∂λ = x·(y/(λ(1 + λy)) − log1p(λy)/λ²) (−x·y²/2 at λ = 0)")
inv_boxcox1p = _binary("inv_boxcox1p", _u.inv_boxcox1p, _inv_boxcox_like(1),
                       argnames=("y", "lmbda"),
                       doc="(1 + λy)^(1/λ) − 1: derivatives as inv_boxcox's")
