"""Exponential integrals and the dilogarithm: exp1, expi, expn, spence."""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

import numpy as np
from scipy.special import _ufuncs as _u

from .._engine import apply1
from .._tensor import Tensor
from .._ops.registry import defop, register
from .._dtypes import float_result_type
from .._ops._util import broadcast_shape, floating, to_tensor, unbroadcast
from .._ops.pointwise import arr as _arr, bcast as _bcast, cast as _cast, quiet as _quiet
from ._support import _ap, _check_complex, _mask, _no_derivative, _unary, _where


# ---- spence (the dilogarithm) ---------------------------------------------------------

# spence'(z) = log z/(1 − z) = −Σ_{k≥0} (−ε)ᵏ/(k+1) with ε = z − 1: the series near z = 1
_SPENCE_TERMS = 14
_SPENCE_SMALL = 0.05


def _spence_deriv(z: Any, y: Any) -> Any:
    eps = z - 1
    near = np.abs(_mask(eps)) < _SPENCE_SMALL
    if near.any():
        es = _where(near, 1, eps)
        far = -np.log1p(es) / es
        poly = 1 / _SPENCE_TERMS
        for k in range(_SPENCE_TERMS - 2, -1, -1):
            poly = poly * (-eps) + 1 / (k + 1)
        return _where(near, -poly, far)
    return -np.log1p(eps) / eps


spence = _unary("spence", _u.spence, _spence_deriv, complex_ok=True,
                quiet=True, doc="d/dz = log z/(1 − z) (−1 at z = 1)")


# ---- exponential integrals ------------------------------------------------------------------

exp1 = _unary("exp1", _u.exp1, lambda x, y: -np.exp(-x) / x, complex_ok=True, quiet=True,
              doc="E₁(z) = ∫₁^∞ e^(−zt)/t dt; d/dz = −e^(−z)/z [6.2.1]")
expi = _unary("expi", _u.expi, lambda x, y: np.exp(x) / x, complex_ok=True, quiet=True,
              doc="Ei(z); d/dz = e^z/z [6.2.5]")


def _expn_dx(n: Any, x: Any) -> Any:
    """d/dx Eₙ(x) = −Eₙ₋₁(x) (DLMF 8.19.13); E₋₁(x) = e^(−x)(1/x + 1/x²) (SciPy's expn
    is NaN for n < 0, the closed form is differentiable again)."""
    nm = n - 1
    neg = _mask(nm) < 0
    if not neg.any():
        return -_ap(expn, nm, x)
    e = np.exp(-x) / x
    minus_one = e + e / x
    return -_where(neg, minus_one, _ap(expn, _where(neg, 0, nm), x))


_expn_op = defop(
    "special.expn",
    _quiet(lambda ctx, needs, gs, xs, ys: (
        None, unbroadcast(gs[0] * _expn_dx(xs[0], xs[1]), xs[1].shape))),
    _quiet(lambda ctx, ts, xs, ys: (_bcast(ts[1] * _expn_dx(xs[0], xs[1]), ys[0].shape),)),
    complex=False, doc="d/dx Eₙ(x) = −Eₙ₋₁(x); n (integer) is not differentiated")


def expn(n: ArrayLike, x: ArrayLike) -> Tensor:
    """``scipy.special.expn(n, x)``: the generalized exponential integral
    Eₙ(x) = ∫₁^∞ e^(−xt)/tⁿ dt for integers n >= 0 (DLMF 8.19.3); d/dx = −Eₙ₋₁(x)
    (8.19.13) with E₋₁(x) = e^(−x)(1/x + 1/x²), so every order in x. n is an integer
    order, not differentiated (UnsupportedADError when it carries a derivative)."""
    nt: Tensor = to_tensor(n)
    _no_derivative("expn", "n", nt, "n is an integer order")
    xt: Tensor = to_tensor(x)
    _check_complex("expn", False, xt)
    # NumPy 2's promotion of (n, x) (an int64 n array with a float32 x: float64)
    dt = float_result_type(*(v if type(v) in (bool, int, float) else t
                             for v, t in ((n, nt), (x, xt))))
    xt = floating(xt)
    nd = nt._data
    broadcast_shape("expn", nd.shape, xt.shape)
    return apply1(_expn_op, (Tensor._wrap(nd), xt),
                  _cast(_u.expn(nd, xt._data.astype(dt, copy=False)), dt))


expn._np = lambda n, x: _arr(_u.expn(n, x))  # type: ignore[attr-defined]  # as _unary's
register(expn, ufuncs=(_u.expn,))
