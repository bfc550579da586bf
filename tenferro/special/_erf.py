"""The error functions and the normal distribution: erf, erfc, erfcx, erfinv, erfcinv,
ndtr, ndtri, log_ndtr."""
from __future__ import annotations

from typing import Any

import math

import numpy as np
from scipy.special import _ufuncs as _u

from ._support import (_INV_SQRT2, _SQRT_2PI, _SQRT_2_OVER_PI, _SQRT_PI, _TWO_OVER_SQRT_PI,
                       _ap, _horner, _mask, _unary, _where)


# ---- error function and normal distribution ---------------------------------------------

def _gauss(x: Any) -> Any:
    return np.exp(-(x * x))


erf = _unary("erf", _u.erf, lambda x, y: _TWO_OVER_SQRT_PI * _gauss(x), complex_ok=True,
             doc="d/dx = 2/√π·exp(−x²)")
erfc = _unary("erfc", _u.erfc, lambda x, y: -_TWO_OVER_SQRT_PI * _gauss(x),
              complex_ok=True, doc="d/dx = −2/√π·exp(−x²)")
# For large x, 2x·erfcx(x) − 2/√π cancels (both ≈ 2/√π): there the asymptotic series
# erfcx'(x) = 2/√π·Σ_{n≥1} (−1)ⁿ(2n−1)!!/(2x²)ⁿ (DLMF 7.12.1), 7 terms exact for x >= 50
_ERFCX_LARGE = 50.0
_ERFCX_SERIES = tuple((-1) ** n * math.prod(range(1, 2 * n, 2)) for n in range(1, 8))


def _erfcx_deriv(x: Any, y: Any) -> Any:
    big = np.real(_mask(x)) >= _ERFCX_LARGE
    if x.dtype.kind == "c" or not big.any():
        return 2 * (x * y) - _TWO_OVER_SQRT_PI
    xs = _where(big, x, _ERFCX_LARGE)
    t = 1 / (2 * (xs * xs))
    poly = _horner(_ERFCX_SERIES, t)
    return _where(big, _TWO_OVER_SQRT_PI * (poly * t), 2 * (x * y) - _TWO_OVER_SQRT_PI)


erfcx = _unary("erfcx", _u.erfcx, _erfcx_deriv, complex_ok=True,
               doc="d/dx = 2x·erfcx(x) − 2/√π (its asymptotic series for x >= 50)")
erfinv = _unary("erfinv", _u.erfinv, lambda x, y: (_SQRT_PI / 2) * np.exp(y * y),
                quiet=True, doc="d/dx = √π/2·exp(erfinv(x)²) (inf at ±1)")
erfcinv = _unary("erfcinv", _u.erfcinv, lambda x, y: -(_SQRT_PI / 2) * np.exp(y * y),
                 quiet=True, doc="d/dx = −√π/2·exp(erfcinv(x)²)")
ndtr = _unary("ndtr", _u.ndtr, lambda x, y: np.exp(-0.5 * (x * x)) * (1 / _SQRT_2PI),
              complex_ok=True, doc="d/dx = φ(x) = exp(−x²/2)/√(2π)")
ndtri = _unary("ndtri", _u.ndtri, lambda x, y: _SQRT_2PI * np.exp(0.5 * (y * y)),
               quiet=True, doc="d/dp = 1/φ(ndtri(p)) = √(2π)·exp(y²/2)")
def _log_ndtr_deriv(x: Any, y: Any) -> Any:
    """φ(x)/Φ(x). √(2/π)/erfcx(−x/√2) keeps every digit in the left tail (where
    exp(−x²/2 − log Φ(x)) would cancel ~x²/2 against itself); in the right tail erfcx
    overflows (x > 37.5, and its own derivative inf/inf before that), where
    exp(−x²/2 − log Φ(x))/√(2π) has no cancellation (log Φ(x) → 0) and tends to 0."""
    if type(x) is np.ndarray:
        # first order only: in the right tail erfcx overflows to inf and the quotient is
        # the exact limit 0; the where below is for the derivative of this rule
        return _SQRT_2_OVER_PI / _u.erfcx(-_INV_SQRT2 * x)
    right = np.real(_mask(x)) > 5
    if x.dtype.kind == "c" or not right.any():
        return _SQRT_2_OVER_PI / _ap(erfcx, -_INV_SQRT2 * x)
    xl = _where(right, 0, x)
    left = _SQRT_2_OVER_PI / _ap(erfcx, -_INV_SQRT2 * xl)
    far = np.exp(-0.5 * (x * x) - y) * (1 / _SQRT_2PI)
    return _where(right, far, left)


log_ndtr = _unary("log_ndtr", _u.log_ndtr, _log_ndtr_deriv, complex_ok=True,
                  doc="d/dx = φ(x)/Φ(x) = √(2/π)/erfcx(−x/√2), stable in both tails")
