"""The gamma family: gammaln, loggamma, gamma, digamma (psi), polygamma, multigammaln,
betaln, beta, rgamma, poch, and the Hurwitz/Riemann zeta function."""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike, NDArray

import math

import numpy as np
import scipy.special as _sc
from scipy.special import _ufuncs as _u

from .._engine import apply1
from .._errors import ShapeError
from .._tensor import Tensor
from .._ops.registry import defop, register
from .._dtypes import float_result_type
from .._ops._util import broadcast_shape, conj, floating, payload, to_tensor, unbroadcast
from .._ops.pointwise import arr as _arr, bcast as _bcast, cast as _cast, quiet as _quiet
from ._support import (_LOG_PI, _ap, _binary, _check_complex, _mask, _no_derivative,
                       _result_dtype, _unary, _weak_floats, _where)


# ---- gamma family ----------------------------------------------------------------------

# Bernoulli numbers B_2, B_4, ..., B_20 of the asymptotic series of ψ⁽ⁿ⁾ (DLMF 5.15.8)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)


_REFLECT_BELOW = -100.0


def _polygamma_complex_n(n: int, z: ArrayLike) -> NDArray[np.complex128]:
    """ψ⁽ⁿ⁾(z) for one integer n >= 1 and complex z. Re z >= −100: the shifted asymptotic
    series below (accurate to rounding). Re z < −100: the reflection ψ⁽ⁿ⁾(z) =
    (−1)ⁿψ⁽ⁿ⁾(1 − z) − π dⁿ/dzⁿ cot(πz) (DLMF 5.15.6), so the cost does not grow with
    −Re z (the reflection cancels digits for moderate Re z, hence not used there)."""
    with np.errstate(all="ignore"):     # poles at z = 0, −1, ...: inf/NaN are the values
        z = np.array(z, dtype=np.complex128)
        left = z.real < _REFLECT_BELOW
        if not left.any():
            return _polygamma_complex_shifted(n, z)
        out = np.empty_like(z)
        out[~left] = _polygamma_complex_shifted(n, z[~left])
        zl = z[left]
        reflected = _polygamma_complex_shifted(n, 1 - zl)
        out[left] = (-1) ** n * reflected - math.pi ** (n + 1) * _cot_derivative(n, zl)
        return out


def _cot_derivative(n: int, z: NDArray[np.complex128]) -> NDArray[np.complex128]:
    """dⁿ/dwⁿ cot(w) at w = πz: Pₙ(cot w) with P₀(c) = c, Pₖ₊₁(c) = −(1 + c²)Pₖ′(c).
    cot w from exp(±2iw) on the side where it does not overflow, after removing the
    nearest integer from z (exact in floating point; cot(πz) has period 1), so that π·z
    does not round away the digits of a large Re z. Exact poles give NaN, as SciPy's
    complex digamma."""
    w = math.pi * (z - np.round(z.real))
    upper = w.imag >= 0
    e = np.exp(np.where(upper, 2j * w, -2j * w))      # |e| <= 1
    c = np.where(upper, 1j, -1j) * (e + 1) / (e - 1)
    p = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        p = -np.polynomial.Polynomial([1.0, 0.0, 1.0]) * p.deriv()
    out: NDArray[np.complex128] = p(c)
    return out


def _polygamma_complex_shifted(n: int, z: ArrayLike) -> NDArray[np.complex128]:
    """ψ⁽ⁿ⁾(z) for one integer n >= 1 and complex z: shift z up to Re z >= 20 + n with
    ψ⁽ⁿ⁾(z) = ψ⁽ⁿ⁾(z+1) + (−1)ⁿ⁺¹ n!/zⁿ⁺¹, then the asymptotic series
    (−1)ⁿ⁺¹[(n−1)!/zⁿ + n!/(2zⁿ⁺¹) + Σₖ B₂ₖ (2k+n−1)!/((2k)! z²ᵏ⁺ⁿ)] (DLMF 5.15.8)."""
    z = np.array(z, dtype=np.complex128)
    w = z.copy()
    shift = np.maximum(0, np.ceil(20 + n - z.real)).astype(np.int64)
    acc = np.zeros_like(z)
    steps = int(shift.max(initial=0))
    for j in range(steps):
        act = shift > j
        if act.all():
            acc += w ** -(n + 1)
            w += 1
        else:
            acc[act] += w[act] ** -(n + 1)
            w[act] += 1
    fact = math.factorial
    inv = 1 / w
    series = fact(n - 1) * inv ** n + fact(n) / 2 * inv ** (n + 1)
    inv2 = inv * inv
    p = inv ** n
    for k, b in enumerate(_BERNOULLI, start=1):
        p = p * inv2
        series = series + b * fact(2 * k + n - 1) / fact(2 * k) * p
    sign = -1.0 if n % 2 == 0 else 1.0
    out: NDArray[np.complex128] = sign * (series + fact(n) * acc)
    return out


def _polygamma_np(n: ArrayLike, x: ArrayLike) -> NDArray[Any]:
    na = np.asarray(n)
    xa = np.asarray(x)
    if xa.dtype.kind != "c":
        with np.errstate(all="ignore"):
            out = _arr(_sc.polygamma(na, xa))
        return out.astype(np.result_type(xa.dtype, np.float32), copy=False)
    nb, zb = np.broadcast_arrays(na, xa)
    out = np.empty(zb.shape, dtype=np.complex128)
    zero = nb == 0
    if zero.any():
        out[zero] = _u.psi(zb[zero].astype(np.complex128))
    for nv in np.unique(nb[~zero]):
        m = nb == nv
        if nv != math.floor(nv) or nv < 0:
            out[m] = np.nan
        else:
            out[m] = _polygamma_complex_n(int(nv), zb[m])
    return out.astype(xa.dtype, copy=False)


# declared for the type checker: derivative rules below use them before they are defined
digamma: Callable[[ArrayLike], Tensor]
gammaln = _unary("gammaln", _u.gammaln, lambda x, y: _ap(digamma, x),
                 doc="d/dx = digamma(x)")


def _loggamma_deriv(x: Any, y: Any) -> Any:
    d = _ap(digamma, x)
    if x.dtype.kind != "c":
        bad = np.isnan(_mask(y)) & ~np.isnan(_mask(x))
        if bad.any():   # loggamma(x < 0) is NaN for real x (SciPy): so is its derivative
            d = _where(bad, np.nan, d)
    return d


loggamma = _unary("loggamma", _u.loggamma, _loggamma_deriv, complex_ok=True,
                  doc="d/dz = digamma(z) (principal branch; NaN for real x < 0 as SciPy)")
gamma = _unary("gamma", _u.gamma, lambda x, y: y * _ap(digamma, x), complex_ok=True,
               quiet=True, doc="d/dx = gamma(x)·digamma(x)")
digamma = _unary("digamma", _u.psi, lambda x, y: _ap(polygamma, 1, x), complex_ok=True,
                 doc="d/dx = polygamma(1, x)")
psi = digamma


_polygamma_op = defop(
    "special.polygamma",
    _quiet(lambda ctx, needs, gs, xs, ys: (
        None, unbroadcast(gs[0] * conj(_ap(polygamma, xs[0] + 1, xs[1])), xs[1].shape))),
    _quiet(lambda ctx, ts, xs, ys: (
        _bcast(ts[1] * _ap(polygamma, xs[0] + 1, xs[1]), ys[0].shape),)),
    doc="d/dx = polygamma(n+1, x); n (integer) is not differentiated")


def polygamma(n: ArrayLike, x: ArrayLike) -> Tensor:
    """``scipy.special.polygamma(n, x)``: ψ⁽ⁿ⁾(x), the n-th derivative of digamma; n a
    non-negative integer (array), not differentiated. d/dx = ψ⁽ⁿ⁺¹⁾(x). Complex x is
    supported (SciPy has real x only): recurrence, asymptotic series and reflection
    (DLMF 5.15)."""
    nt: Tensor = to_tensor(n)
    _no_derivative("polygamma", "n", nt, "n is an integer order")
    xt: Tensor = to_tensor(x)
    # NumPy 2's promotion of (n, x), as scipy.special.polygamma gives: an int64 n array
    # with a float32 x is float64 (computed in it), a Python int n keeps x's precision
    dt = float_result_type(*(v if type(v) in (bool, int, float) else t
                             for v, t in ((n, nt), (x, xt))))
    xt = floating(xt)
    nd = nt._data
    broadcast_shape("polygamma", nd.shape, xt.shape)
    out = _polygamma_np(nd, xt._data.astype(dt, copy=False))
    return apply1(_polygamma_op, (Tensor._wrap(nd), xt), _cast(out, dt))


polygamma._np = _polygamma_np  # type: ignore[attr-defined]  # as _unary's


def multigammaln(a: ArrayLike, d: int) -> Tensor:
    """``scipy.special.multigammaln(a, d)``: log of the multivariate gamma function
    Γ_d(a) = π^(d(d−1)/4) Πⱼ Γ(a − (j−1)/2) (DLMF 35.3.4), a composition of gammaln, so
    differentiable in ``a`` at every order; ``d`` a positive integer. As SciPy, raises
    ValueError unless a > (d − 1)/2 everywhere."""
    dv: Any = np.asarray(payload(d) if isinstance(d, Tensor) else d)[()]
    scalar = np.isscalar(dv)    # (a bool of its own: np.isscalar's TypeGuard would narrow dv)
    if not scalar or np.floor(dv) != dv or dv < 1:
        raise ShapeError("d should be a positive integer (dimension)")
    dd = int(dv)
    at: Tensor = floating(to_tensor(a))
    _check_complex("multigammaln", False, at)
    if np.any(at._data <= 0.5 * (dd - 1)):
        raise ShapeError(f"condition a ({at._data}) > 0.5 * (d-1) ({0.5 * (dd - 1)}) not met")
    res = gammaln(at)
    for j in range(2, dd + 1):
        res = res + gammaln(at - 0.5 * (j - 1))
    return res + dd * (dd - 1) * 0.25 * _LOG_PI


def _betaln_derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    s = _ap(digamma, a + b)
    return (_ap(digamma, a) - s if needs[0] else None,
            _ap(digamma, b) - s if needs[1] else None)


def _beta_derivs(a: Any, b: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    da, db = _betaln_derivs(a, b, y, needs)
    return (None if da is None else y * da, None if db is None else y * db)


betaln = _binary("betaln", _u.betaln, _betaln_derivs, argnames=("a", "b"),
                 doc="∂a = ψ(a) − ψ(a+b), ∂b = ψ(b) − ψ(a+b)")
beta = _binary("beta", _u.beta, _beta_derivs, argnames=("a", "b"),
               doc="∂a = B(a, b)(ψ(a) − ψ(a+b)), ∂b likewise")


def _rgamma_deriv(x: Any, y: Any) -> Any:
    """d/dx 1/Γ(x) = −ψ(x)/Γ(x) for x >= ½; left of ½ from the reflection formula
    1/Γ(x) = Γ(1−x)·sin(πx)/π (DLMF 5.5.3): Γ(1−x)(cos πx − ψ(1−x)·sin(πx)/π), smooth
    through the poles of Γ (where it is (−1)ⁿn! at x = −n) and differentiable again to
    every order. sin(πx), cos(πx) after removing the nearest integer k from x (exact):
    ±sin(π(x − k)) keeps the digits of a large |x|."""
    if x.dtype.kind == "c":
        return -y * _ap(digamma, x)
    left = _mask(x) < 0.5
    if not left.any():
        return -y * _ap(digamma, x)
    xl = _where(left, x, 0) if not left.all() else x
    k = np.round(_mask(xl))
    sign = np.where(k % 2 == 0, 1.0, -1.0).astype(_mask(x).dtype)
    r = math.pi * (xl - k)
    refl = sign * _ap(gamma, 1 - xl) * (np.cos(r) - _ap(digamma, 1 - xl) * np.sin(r)
                                        * (1 / math.pi))
    if left.all():
        return refl
    xr = _where(left, 1, x)
    return _where(left, refl, -_where(left, 0, y) * _ap(digamma, xr))


rgamma = _unary("rgamma", _u.rgamma, _rgamma_deriv, complex_ok=True, quiet=True,
                doc="1/Γ(z); d/dz = −ψ(z)/Γ(z), by the reflection formula left of ½ "
                    "((−1)ⁿn! at the poles z = −n of Γ)")


# ---- Pochhammer symbol ---------------------------------------------------------------------------

def _poch_derivs(z: Any, m: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    s = _ap(digamma, z + m)
    return (y * (s - _ap(digamma, z)) if needs[0] else None, y * s if needs[1] else None)


poch = _binary("poch", _u.poch, _poch_derivs, argnames=("z", "m"),
               doc="(z)ₘ = Γ(z+m)/Γ(z): ∂z = (z)ₘ(ψ(z+m) − ψ(z)), ∂m = (z)ₘψ(z+m) [5.2.5]")


# ---- Hurwitz and Riemann zeta -------------------------------------------------------------

_zeta_op = defop(
    "special.zeta",
    _quiet(lambda ctx, needs, gs, xs, ys: (
        None, unbroadcast(gs[0] * (-xs[0] * _ap(zeta, xs[0] + 1, xs[1])), xs[1].shape))),
    _quiet(lambda ctx, ts, xs, ys: (
        _bcast(ts[1] * (-xs[0] * _ap(zeta, xs[0] + 1, xs[1])), ys[0].shape),)),
    complex=False, doc="Hurwitz zeta(x, q): ∂q = −x·zeta(x+1, q); no derivative in x")


def _zeta_np(x: ArrayLike, q: ArrayLike | None = None) -> NDArray[Any]:
    if q is None:
        return _arr(_u._riemann_zeta(x))
    return _arr(_u._zeta(x, q))


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Tensor:
    """``scipy.special.zeta(x, q=None)``: the Hurwitz zeta function Σₖ (k + q)⁻ˣ (DLMF
    25.11.1), Riemann's zeta without q. ∂q = −x·zeta(x+1, q) (25.11.17); the derivative in
    x has no closed form: UnsupportedADError when x carries one. Complex x (values only)
    without q, as SciPy."""
    xt: Tensor
    qt: Tensor | None = None
    if q is None:
        xt = floating(to_tensor(x))
    else:
        xt, qt = _weak_floats((x, q))
    _no_derivative("zeta", "x", xt, "the derivative in the exponent has no closed form")
    if qt is None:
        return Tensor._wrap(_cast(_u._riemann_zeta(xt._data), xt._data.dtype))
    _check_complex("zeta", False, xt, qt)
    broadcast_shape("zeta", xt.shape, qt.shape)
    dt = _result_dtype(xt, qt)
    return apply1(_zeta_op, (xt, qt), _cast(_u._zeta(xt._data, qt._data), dt))


zeta._np = _zeta_np  # type: ignore[attr-defined]  # as _unary's
register(zeta, ufuncs=(_u._zeta,))


def _riemann_ufunc(x: ArrayLike, **kwargs: Any) -> Tensor:
    return zeta(x)


register(_riemann_ufunc, ufuncs=(_u._riemann_zeta,))
