"""Information theory and robust losses: xlogy, xlog1py, entr, rel_entr, kl_div, huber,
pseudo_huber."""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import _ufuncs as _u

from ._support import _Derivs, _binary, _mask, _unary, _where


# ---- information theory -------------------------------------------------------------------

def _xlogy_derivs(x: Any, y: Any, out: Any, needs: Any) -> tuple[Any, Any]:
    dx = np.log(y) if needs[0] else None
    dy = None
    if needs[1]:
        # x·log y is 0 for every y at x = 0: ∂y = x/y = 0 there, also at y = 0 (not 0/0;
        # the safe denominator keeps x/y's own derivative 1/y in x wherever y != 0)
        both = (_mask(x) == 0) & (_mask(y) == 0)
        dy = x / _where(both, 1, y) if both.any() else x / y
    return dx, dy


def _xlog1py_derivs(x: Any, y: Any, out: Any, needs: Any) -> tuple[Any, Any]:
    dx = np.log1p(y) if needs[0] else None
    dy = None
    if needs[1]:
        both = (_mask(x) == 0) & (_mask(y) == -1)
        dy = x / _where(both, 1, 1 + y) if both.any() else x / (1 + y)
    return dx, dy


xlogy = _binary("xlogy", _u.xlogy, _xlogy_derivs, complex_ok=True,
                doc="∂x = log y, ∂y = x/y (0 where x = 0)")
xlog1py = _binary("xlog1py", _u.xlog1py, _xlog1py_derivs, complex_ok=True,
                  doc="∂x = log1p y, ∂y = x/(1 + y) (0 where x = 0)")


def _entr_deriv(x: Any, y: Any) -> Any:
    xp = _mask(x)
    pos = xp > 0
    if pos.all():
        return -np.log(x) - 1
    inner = -np.log(_where(pos, x, 1)) - 1
    # +inf at 0 (the one-sided limit of −log x − 1); 0 for x < 0 (entr = −inf there)
    edge = np.where(xp == 0, np.inf, np.where(np.isnan(xp), np.nan, 0.0)).astype(xp.dtype)
    return _where(pos, inner, edge)


entr = _unary("entr", _u.entr, _entr_deriv,
              quiet=True, doc="d/dx = −log x − 1 (+inf at 0, 0 for x < 0 where entr = −inf)")


def _kl_parts(x: Any, y: Any) -> tuple[Any, ...]:
    xp, yp = _mask(x), _mask(y)
    inside = (xp > 0) & (yp > 0)
    xzero = (xp == 0) & (yp >= 0)
    nan = np.isnan(xp) | np.isnan(yp)
    xs, ys = _where(inside, x, 1), _where(inside, y, 1)
    return xp, yp, inside, xzero, nan, xs, ys


def _rel_entr_like(kl: bool) -> _Derivs:
    def derivs(x: Any, y: Any, out: Any, needs: Any) -> tuple[Any, Any]:
        xp, yp, inside, xzero, nan, xs, ys = _kl_parts(x, y)
        dt = xp.dtype
        dx = dy = None
        if needs[0]:
            inner = np.log(xs / ys) if kl else np.log(xs / ys) + 1
            # x = 0 < y: the one-sided limit −inf; x = y = 0: no derivative (NaN);
            # outside the domain (value +inf): 0
            edge = np.where(xzero & (yp > 0), -np.inf,
                            np.where((xzero & (yp == 0)) | nan, np.nan, 0.0)).astype(dt)
            dx = inner if inside.all() else _where(inside, inner, edge)
        if needs[1]:
            inner = (1 - xs / ys) if kl else -(xs / ys)
            edge = np.where(nan, np.nan, np.where(xzero, 1.0 if kl else 0.0, 0.0)).astype(dt)
            dy = inner if inside.all() else _where(inside, inner, edge)
        return dx, dy
    return derivs


rel_entr = _binary("rel_entr", _u.rel_entr, _rel_entr_like(False),
                   doc="∂x = log(x/y) + 1, ∂y = −x/y; at x = 0 < y: −inf and 0")
kl_div = _binary("kl_div", _u.kl_div, _rel_entr_like(True),
                 doc="∂x = log(x/y), ∂y = 1 − x/y; at x = 0 <= y: −inf and 1")


def _huber_derivs(delta: Any, r: Any, out: Any, needs: Any) -> tuple[Any, Any]:
    dp, rp = _mask(delta), _mask(r)
    bad = dp < 0
    inside = np.abs(rp) <= dp
    nan = np.isnan(dp) | np.isnan(rp)
    dd = dr = None
    if needs[0]:
        # δ(|r| − δ/2) outside [−δ, δ]: ∂δ = |r| − δ; inside r²/2: 0; δ < 0 (inf): 0
        dd = _where(inside | bad, 0, np.abs(r) - delta)
        if nan.any():
            dd = _where(nan, np.nan, dd)
    if needs[1]:
        dr = _where(bad, 0, _where(inside, r, delta * np.sign(rp)))
        if nan.any():
            dr = _where(nan, np.nan, dr)
    return dd, dr


huber = _binary("huber", _u.huber, _huber_derivs, argnames=("delta", "r"),
                doc="∂r = clip(r, −δ, δ), ∂δ = |r| − δ for |r| > δ (else 0)")


def _pseudo_huber_derivs(delta: Any, r: Any, out: Any, needs: Any) -> tuple[Any, Any]:
    dp, rp = _mask(delta), _mask(r)
    ok = (dp >= 0) & ((dp != 0) | (rp != 0))
    nan = np.isnan(dp) | np.isnan(rp)
    allok = ok.all()
    ds = delta if allok else _where(ok, delta, 1)
    rs = r if allok else _where(ok, r, 0)
    h = np.hypot(ds, rs)
    dd = dr = None
    if needs[0]:
        # δ²(√(1 + (r/δ)²) − 1) = δ(h − δ): ∂δ = (h − δ)²/h = r⁴/((h + δ)²h), → |r| at δ = 0
        r2 = rs * rs
        dd = (r2 * r2) / ((h + ds) * (h + ds) * h)
        if not allok:
            dd = _where(ok, dd, 0)
        if nan.any():
            dd = _where(nan, np.nan, dd)
    if needs[1]:
        dr = rs * ds / h
        if not allok:
            dr = _where(ok, dr, 0)
        if nan.any():
            dr = _where(nan, np.nan, dr)
    return dd, dr


pseudo_huber = _binary("pseudo_huber", _u.pseudo_huber, _pseudo_huber_derivs,
                       argnames=("delta", "r"),
                       doc="h = hypot(δ, r): ∂r = rδ/h, ∂δ = r⁴/((h+δ)²h) (|r| at δ = 0)")
