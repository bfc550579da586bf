"""Bessel functions: the modified ones (i0, i0e, i1, i1e, k0, k1, k0e, k1e), those of
the first and second kind of integer order (j0, j1, y0, y1), of real order (jv = jn, yv,
yn, iv, ive, kv, kn, kve: differentiated in x, not in the order), the spherical ones
(spherical_jn, spherical_yn) and gammasgn (the sign of Γ, derivative 0). jv, yv, iv, ive,
kv and kve take complex x (a real order), as SciPy's: holomorphic in x but for ive, whose
scaling e^(−|Re x|) is not (its rules below)."""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike, NDArray

import numpy as np
from scipy.special import _ufuncs as _u

import scipy.special as _sc

from .._engine import apply1
from .._errors import DTypeError
from .._ops._util import broadcast_shape, conj, floating, to_tensor, unbroadcast
from .._ops.pointwise import arr as _arr, bcast as _bcast, cast as _cast, quiet as _quiet
from .._ops.registry import defop, register
from .._tensor import Tensor
from ._support import (_ap, _binary, _check_complex, _mask, _no_derivative, _unary,
                       _where)


# ---- modified Bessel functions ----------------------------------------------------------

def _over_x(x: Any, y: Any) -> Any:
    """y/x with the limit ½ of i1(x)/x (and of i1e(x)/x) at x = 0."""
    zero = _mask(x) == 0
    if not zero.any():
        return y / x
    return _where(zero, 0.5, y / _where(zero, 1, x))


def _i1_deriv(x: Any, y: Any) -> Any:
    zero = _mask(x) == 0
    d = _ap(i0, x) - _over_x(x, y)
    return _where(zero, 0.5, d) if zero.any() else d


def _i1e_deriv(x: Any, y: Any) -> Any:
    zero = _mask(x) == 0
    d = _ap(i0e, x) - _over_x(x, y) - np.sign(_mask(x)) * y
    return _where(zero, 0.5, d) if zero.any() else d


# declared for the type checker: derivative rules below use them before they are defined
i1: Callable[[ArrayLike], Tensor]
i1e: Callable[[ArrayLike], Tensor]
i0 = _unary("i0", _u.i0, lambda x, y: _ap(i1, x), doc="d/dx = i1(x)")
i0e = _unary("i0e", _u.i0e, lambda x, y: _ap(i1e, x) - np.sign(_mask(x)) * y,
             doc="d/dx = i1e(x) − sign(x)·i0e(x)")
i1 = _unary("i1", _u.i1, _i1_deriv, doc="d/dx = i0(x) − i1(x)/x (½ at 0)")
i1e = _unary("i1e", _u.i1e, _i1e_deriv,
             doc="d/dx = i0e(x) − i1e(x)/x − sign(x)·i1e(x) (½ at 0)")


# ---- Bessel functions of integer order --------------------------------------------------------

def _j1_deriv(x: Any, y: Any) -> Any:
    zero = _mask(x) == 0
    d = _ap(j0, x) - _over_x(x, y)
    return _where(zero, 0.5, d) if zero.any() else d


# declared for the type checker: derivative rules below use them before they are defined
j1: Callable[[ArrayLike], Tensor]
y1: Callable[[ArrayLike], Tensor]
k1: Callable[[ArrayLike], Tensor]
k1e: Callable[[ArrayLike], Tensor]
j0 = _unary("j0", _u.j0, lambda x, y: -_ap(j1, x), doc="d/dx = −j1(x) [10.6.3]")
j1 = _unary("j1", _u.j1, _j1_deriv, doc="d/dx = j0(x) − j1(x)/x (½ at 0) [10.6.2]")
y0 = _unary("y0", _u.y0, lambda x, y: -_ap(y1, x), doc="d/dx = −y1(x)")
y1 = _unary("y1", _u.y1, lambda x, y: _ap(y0, x) - y / x, quiet=True,
            doc="d/dx = y0(x) − y1(x)/x")
k0 = _unary("k0", _u.k0, lambda x, y: -_ap(k1, x), doc="d/dx = −k1(x) [10.29.3]")
k1 = _unary("k1", _u.k1, lambda x, y: -_ap(k0, x) - y / x, quiet=True,
            doc="d/dx = −k0(x) − k1(x)/x [10.29.2]")
k0e = _unary("k0e", _u.k0e, lambda x, y: y - _ap(k1e, x), doc="d/dx = k0e(x) − k1e(x)")
k1e = _unary("k1e", _u.k1e, lambda x, y: y - _ap(k0e, x) - y / x, quiet=True,
             doc="d/dx = k1e(x) − k0e(x) − k1e(x)/x")


# ---- Bessel functions of real order v (SciPy's jv, yv, iv, ive, kv, kve, yn) -------------
#
# The derivative in x by the recurrences in the order (DLMF 10.6.1, 10.29.1), written with
# the functions themselves, so every rule is differentiable again (any order in x). The
# order is not differentiated: ∂/∂v has no closed form in SciPy's functions.

_ORDER = "the order is not differentiable"

jv: Callable[[ArrayLike, ArrayLike], Tensor]
yv: Callable[[ArrayLike, ArrayLike], Tensor]
yn: Callable[[ArrayLike, ArrayLike], Tensor]
iv: Callable[[ArrayLike, ArrayLike], Tensor]
ive: Callable[[ArrayLike, ArrayLike], Tensor]
kv: Callable[[ArrayLike, ArrayLike], Tensor]
kve: Callable[[ArrayLike, ArrayLike], Tensor]
kn: Callable[[ArrayLike, ArrayLike], Tensor]


def _real(v: Any) -> Any:
    """The order v as real: the rules get it promoted to a complex x's dtype (its
    imaginary part is 0), and SciPy's loops take a real order only."""
    return v.real if v.dtype.kind == "c" else v


def _half_difference(f: Any) -> Any:
    """∂x of J_v, Y_v (and Yₙ): (f(v−1, x) − f(v+1, x))/2 (DLMF 10.6.1)."""
    def derivs(v: Any, x: Any, y: Any, needs: Any) -> tuple[Any, Any]:
        v = _real(v)
        return None, (_ap(f(), v - 1, x) - _ap(f(), v + 1, x)) * 0.5
    return derivs


def _iv_derivs(v: Any, x: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    """I'_v = (I_{v−1} + I_{v+1})/2 (DLMF 10.29.1)."""
    v = _real(v)
    return None, (_ap(iv, v - 1, x) + _ap(iv, v + 1, x)) * 0.5


# ive(v, z) = I_v(z)·e^(−|Re z|) is not holomorphic in a complex z (|Re z| is not): with
# D = (ive(v−1, z) + ive(v+1, z))/2 = I'_v(z)·e^(−|Re z|) and s = sign(Re z),
#     JVP  ẏ = D·ż − s·y·Re ż,     VJP  z̄ = conj(D)·ȳ − s·Re(conj(y)·ȳ)
# (the second term's partial is real). For a real x both are ȳ·(D − s·y), ẋ·(D − s·y).

def _ive_parts(v: Any, x: Any) -> tuple[Any, Any]:
    v = _real(v)
    d = (_ap(ive, v - 1, x) + _ap(ive, v + 1, x)) * 0.5
    return d, np.sign(_mask(x).real)        # (0 for the kink's term at Re x = 0, as i0e)


def _ive_vjp_x(g: Any, v: Any, x: Any, y: Any) -> Any:
    d, s = _ive_parts(v, x)
    if y.dtype.kind != "c":
        return g * (d - s * y)
    return g * conj(d) - s * (conj(y) * g).real


def _ive_jvp(tv: Any, tx: Any, v: Any, x: Any, y: Any) -> Any:
    if tx is None:
        return np.zeros(y.shape, y.dtype)
    d, s = _ive_parts(v, x)
    if y.dtype.kind != "c":
        return tx * (d - s * y)
    return tx * d - s * y * tx.real


def _kv_derivs(v: Any, x: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    """K'_v = −(K_{v−1} + K_{v+1})/2 (DLMF 10.29.1)."""
    v = _real(v)
    return None, (_ap(kv, v - 1, x) + _ap(kv, v + 1, x)) * -0.5


def _kve_derivs(v: Any, x: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    """kve = K_v(x)e^x (holomorphic also for complex x): kve(v) − (kve(v−1) + kve(v+1))/2."""
    v = _real(v)
    return None, y - (_ap(kve, v - 1, x) + _ap(kve, v + 1, x)) * 0.5


_COMPLEX_X = {"jv", "yv", "iv", "ive", "kv", "kve"}   # SciPy's loops with complex x


def _order_function(name: str, derivs: Any, doc: str,
                    **rules: Any) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    cx = name in _COMPLEX_X
    if cx:
        doc += "; complex x as in SciPy (real v)"
    ufunc = getattr(_u, name)
    return _binary(name, ufunc, derivs, nondiff={0: _ORDER},
                   complex_ok=cx, real_args=(0,) if cx else (),
                   primal=(lambda v, x: ufunc(_real(v), x)) if cx else None,
                   argnames=("n", "x") if name in ("yn", "kn") else ("v", "x"), doc=doc,
                   **rules)


jv = _order_function("jv", _half_difference(lambda: jv),
                     "Bessel function of the first kind J_v(x); ∂x = (J_(v−1) − J_(v+1))/2 "
                     "[10.6.1]; v is not differentiated")
jn = jv       # scipy.special.jn is jv (one ufunc)
yv = _order_function("yv", _half_difference(lambda: yv),
                     "Bessel function of the second kind Y_v(x); ∂x = (Y_(v−1) − Y_(v+1))/2 "
                     "[10.6.1]; v is not differentiated")
yn = _order_function("yn", _half_difference(lambda: yn),
                     "Y_n(x) of integer order n (SciPy truncates n); ∂x = (Y_(n−1) − "
                     "Y_(n+1))/2 [10.6.1]; n is not differentiated")
iv = _order_function("iv", _iv_derivs,
                     "modified Bessel function I_v(x); ∂x = (I_(v−1) + I_(v+1))/2 [10.29.1]; "
                     "v is not differentiated")
ive = _order_function("ive", None,
                      "I_v(x)·e^(−|Re x|); ∂x = (ive(v−1, x) + ive(v+1, x))/2 − "
                      "sign(x)·ive(v, x) for real x (complex x: not holomorphic, rules in "
                      "docs/rules.md); v is not differentiated",
                      vjp_a=lambda g, v, x, y: np.zeros(g.shape, g.dtype), vjp_b=_ive_vjp_x,
                      jvp=_ive_jvp)
kv = _order_function("kv", _kv_derivs,
                     "modified Bessel function K_v(x); ∂x = −(K_(v−1) + K_(v+1))/2 [10.29.1]; "
                     "v is not differentiated")
kn = _order_function("kn", lambda n, x, y, needs: (
                         None, (_ap(kn, n - 1, x) + _ap(kn, n + 1, x)) * -0.5),
                     "K_n(x) of integer order n (SciPy truncates n); ∂x = −(K_(n−1) + "
                     "K_(n+1))/2 [10.29.1]; n is not differentiated")
kve = _order_function("kve", _kve_derivs,
                      "K_v(x)·e^x; ∂x = kve(v, x) − (kve(v−1, x) + kve(v+1, x))/2; "
                      "v is not differentiated")


# ---- spherical Bessel functions (scipy.special.spherical_jn, spherical_yn) ----------------

def _spherical_np(f: Any) -> Any:
    def g(n: ArrayLike, x: ArrayLike) -> NDArray[Any]:
        return _arr(f(n, x))
    return g


def _spherical_dx(f: Any, n: Any, x: Any) -> Any:
    """f_n'(x) = (n·f_(n−1)(x) − (n+1)·f_(n+1)(x))/(2n+1) (DLMF 10.51.2, its two forms
    combined: no 1/x, so j₁'(0) = ⅓ and jₙ'(0) = 0 otherwise come out of the formula); the
    n·f_(n−1) term vanishes at n = 0, where f_(−1) is not evaluated (SciPy gives NaN)."""
    nd = _mask(n)
    # the coefficients as arrays of x's dtype (an int64 n tensor would promote float32 x)
    nf = nd.astype(_mask(x).dtype)
    lo, hi = nf / (2 * nf + 1), (nf + 1) / (2 * nf + 1)
    return lo * _ap(f, np.maximum(nd - 1, 0), x) - hi * _ap(f, nd + 1, x)


def _spherical(name: str, ufunc: Any, doc: str) -> Callable[..., Tensor]:
    """f(n, x, derivative=False) of SciPy's spherical Bessel functions: integer n (not
    differentiated), real x; derivative=True gives f_n'(x) as a composition of f (so also
    differentiable to every order)."""
    op = defop(
        "special." + name,
        _quiet(lambda ctx, needs, gs, xs, ys: (
            None, unbroadcast(gs[0] * _spherical_dx(fn, xs[0], xs[1]), xs[1].shape))),
        _quiet(lambda ctx, ts, xs, ys: (
            _bcast(ts[1] * _spherical_dx(fn, xs[0], xs[1]), ys[0].shape),)),
        complex=False, doc=doc)

    def fn(n: ArrayLike, x: ArrayLike, derivative: bool = False) -> Tensor:
        nt: Tensor = to_tensor(n)
        _no_derivative(name, "n", nt, _ORDER)
        nd = nt._data
        if nd.dtype.kind not in "iub":
            # integer-valued floats are orders; others would be truncated by SciPy
            if nd.dtype.kind != "f" or not np.all(np.floor(nd) == nd):
                raise DTypeError(f"tf.special.{name}: the order n should be an integer, "
                                 f"got {nd.dtype} values {nd} (SciPy would truncate them)")
            nt = Tensor._wrap(nd.astype(np.int64))
        xt: Tensor = to_tensor(x)
        _check_complex(name, False, xt)
        # the float dtype of x (float32 stays float32); integer x becomes float64
        xt = floating(xt)
        if derivative:
            broadcast_shape(name, nt.shape, xt.shape)
            d: Tensor = _spherical_dx(fn, nt, xt)
            return d
        nd = nt._data
        dt = xt._data.dtype
        broadcast_shape(name, nd.shape, xt.shape)
        return apply1(op, (Tensor._wrap(nd), xt), _cast(ufunc(nd, xt._data), dt))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``scipy.special.{name}(n, x, derivative=False)``, differentiable: {doc}"
    fn._np = _spherical_np(ufunc)  # type: ignore[attr-defined]  # as _unary's
    register(fn)
    return fn


spherical_jn = _spherical("spherical_jn", _sc.spherical_jn,
                          "spherical Bessel function jₙ(x); d/dx = (n·jₙ₋₁ − (n+1)·jₙ₊₁)/(2n+1) "
                          "[10.51.2]; n (integer) is not differentiated")
spherical_yn = _spherical("spherical_yn", _sc.spherical_yn,
                          "spherical Bessel function yₙ(x); d/dx = (n·yₙ₋₁ − (n+1)·yₙ₊₁)/(2n+1) "
                          "[10.51.2]; n (integer) is not differentiated")


# ---- the sign of the gamma function ----------------------------------------------------------

gammasgn = _unary("gammasgn", _u.gammasgn, lambda x, y: np.zeros_like(_mask(x)),
                  doc="the sign of Γ(x), piecewise constant: d/dx = 0 (also at the jumps)")
