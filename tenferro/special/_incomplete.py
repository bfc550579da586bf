"""The incomplete gamma and beta functions and Student's t cdf: gammainc, gammaincc,
betainc, betaincc, stdtr (their shape-parameter derivatives from _shape_series)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from scipy.special import _ufuncs as _u

from .._engine import apply1
from .._errors import UnsupportedADError
from .._tensor import Tensor
from .._ops.registry import Op, defop
from .._ops._util import unbroadcast
from .._ops.pointwise import (bcast as _bcast, cast as _cast, promote as _promote_to,
                              quiet as _quiet)
from ._support import (_Derivs, _F64, _LOG_PI, _SQRT_2PI, _ap, _binary, _mask,
                       _result_dtype, _ternary, _where)
from ._gamma import betaln, digamma, gammaln, polygamma
from ._information import xlog1py, xlogy
from ._shape_series import (_BETA_ORDER, _betainc_dab_np, _gammainc_da_np, _stdtr_ddf_np,
                            _stdtr_log_density_dnu)


def _gammainc_dx(a: Any, x: Any) -> Any:
    """e^(−x) x^(a−1)/Γ(a), the gamma density (DLMF 8.8.13), in logs: finite for large a."""
    return np.exp(_ap(xlogy, a - 1, x) - x - _ap(gammaln, a))


def _shape_call(op: Op, compute: Callable[..., Any], args: Sequence[Any]) -> Any:
    """``compute(*arrays)`` (float64) in the arguments' precision: the output of ``op``
    recorded on the arguments when one is a Tensor (inside a create_graph rule), the
    plain array otherwise."""
    if any(isinstance(v, Tensor) for v in args):
        ts = tuple(v if isinstance(v, Tensor) else Tensor._wrap(np.asarray(v)) for v in args)
        return apply1(op, ts, _cast(compute(*(t._data for t in ts)), _result_dtype(*ts)))
    dt = np.result_type(*(np.asarray(v).dtype for v in args))
    return _cast(compute(*args), dt)


def _third_order(name: str, argname: str) -> UnsupportedADError:
    return UnsupportedADError(
        f"tf.special.{name}: no third derivative in {argname!r} (the series gives first "
        f"and second derivatives in the shape parameter; mixed ones with x, and any order "
        f"in x, are supported)")


def _binary_shape_ops(name: str, fname: str, first_np: Callable[[Any, Any], Any],
                      second_np: Callable[[Any, Any], Any],
                      dx_da: Callable[[int, Any, Any], Any], shape_arg: str
                      ) -> Callable[[int, Any, Any], Any]:
    """The ops ∂ᵏf/∂pᵏ(p, x) (k = 1, 2) of a two-argument function f in its shape
    argument p: first_np / second_np compute them (float64); dx_da(k, p, x) is the
    closed form ∂/∂x of the k-th one (tenferro ops: differentiable again)."""
    ops: dict[int, Op] = {}

    def make(k: int) -> Op:
        def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
            p, x = _promote_to(xs[0], xs[1], ys[0].dtype)
            g = gs[0]
            dp = dx = None
            if needs[0]:
                if k == 2:
                    raise _third_order(fname, shape_arg)
                dp = unbroadcast(g * call(2, p, x), xs[0].shape)
            if needs[1]:
                dx = unbroadcast(g * dx_da(k, p, x), xs[1].shape)
            return dp, dx

        def jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
            p, x = _promote_to(xs[0], xs[1], ys[0].dtype)
            out = None
            if ts[0] is not None:
                if k == 2:
                    raise _third_order(fname, shape_arg)
                out = ts[0] * call(2, p, x)
            if ts[1] is not None:
                d = ts[1] * dx_da(k, p, x)
                out = d if out is None else out + d
            return (_bcast(out, ys[0].shape),)

        return defop(f"special.{name}_d{shape_arg}{k}", _quiet(vjp), _quiet(jvp),
                     complex=False, doc=f"∂^{k}/∂{shape_arg}^{k} of {fname} (internal)")

    def call(k: int, p: Any, x: Any) -> Any:
        return _shape_call(ops[k], first_np if k == 1 else second_np, (p, x))

    ops[1], ops[2] = make(1), make(2)
    return call


def _gamma_density_da(k: int, a: Any, x: Any) -> Any:
    """∂ᵏ/∂aᵏ of the gamma density e^(−x)x^(a−1)/Γ(a): the density times
    log x − ψ(a) (k = 1) or (log x − ψ(a))² − ψ₁(a) (k = 2); 0 at x = 0 for a > 1."""
    zero = (_mask(x) == 0) & (_mask(a) > 1)
    xs = _where(zero, 1, x) if zero.any() else x
    L = np.log(xs) - _ap(digamma, a)
    poly = L if k == 1 else L * L - _ap(polygamma, 1, a)
    d = _gammainc_dx(a, xs) * poly
    return _where(zero, 0, d) if zero.any() else d


_gammainc_da = _binary_shape_ops(
    "gammainc", "gammainc", lambda a, x: _gammainc_da_np(a, x, 1)[0],
    lambda a, x: _gammainc_da_np(a, x, 2)[1], _gamma_density_da, "a")


def _gammainc_derivs(sign: int) -> _Derivs:
    def derivs(a: Any, x: Any, y: Any, needs: Any) -> tuple[Any, Any]:
        return (sign * _gammainc_da(1, a, x) if needs[0] else None,
                sign * _gammainc_dx(a, x) if needs[1] else None)
    return derivs


gammainc = _binary("gammainc", _u.gammainc, _gammainc_derivs(1), argnames=("a", "x"),
                   doc="regularized lower P(a, x): ∂x = e^(−x)x^(a−1)/Γ(a); ∂a from the "
                       "series of P (x < a + 1) or the continued fraction of Q")
gammaincc = _binary("gammaincc", _u.gammaincc, _gammainc_derivs(-1), argnames=("a", "x"),
                    doc="regularized upper Q(a, x) = 1 − P(a, x): ∂x = −e^(−x)x^(a−1)/Γ(a);"
                        " ∂a = −∂P/∂a")


def _beta_density(a: Any, b: Any, x: Any) -> Any:
    return np.exp(_ap(xlogy, a - 1, x) + _ap(xlog1py, b - 1, -x) - _ap(betaln, a, b))


def _beta_density_dab(i: int, j: int, a: Any, b: Any, x: Any) -> Any:
    """∂^(i+j)/∂aⁱ∂bʲ of the beta density x^(a−1)(1−x)^(b−1)/B(a, b) (i + j = 1, 2): the
    density times a polynomial in La = log x − ψ(a) + ψ(a+b), Lb = log(1−x) − ψ(b) +
    ψ(a+b) and the trigammas; 0 where the density vanishes at x = 0 (a > 1) or 1 (b > 1)."""
    xp, ap, bp = _mask(x), _mask(a), _mask(b)
    zero = ((xp == 0) & (ap > 1)) | ((xp == 1) & (bp > 1))
    xs = _where(zero, 0.5, x) if zero.any() else x
    sab = _ap(digamma, a + b)
    La: Any = np.log(xs) - _ap(digamma, a) + sab if i else None
    Lb: Any = np.log1p(-xs) - _ap(digamma, b) + sab if j else None
    if i + j == 1:
        poly = La if i else Lb
    else:
        t1 = _ap(polygamma, 1, a + b)
        if i == 2:
            poly = La * La - _ap(polygamma, 1, a) + t1
        elif j == 2:
            poly = Lb * Lb - _ap(polygamma, 1, b) + t1
        else:
            poly = La * Lb + t1
    d = _beta_density(a, b, xs) * poly
    return _where(zero, 0, d) if zero.any() else d


def _betainc_d_np(ij: tuple[int, int]) -> Callable[[Any, Any, Any], _F64]:
    k = _BETA_ORDER.index(ij)
    return lambda a, b, x: _betainc_dab_np(a, b, x, 1 - np.asarray(x, np.float64),
                                           sum(ij))[k]


def _make_betainc_d_op(i: int, j: int) -> Op:
    def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
        y = ys[0]
        a, b, x = (v if v.dtype == y.dtype else v.astype(y.dtype) for v in xs)
        g = gs[0]
        out: list[Any] = []
        for n, (di, dj), argname in ((0, (1, 0), "a"), (1, (0, 1), "b")):
            if not needs[n]:
                out.append(None)
                continue
            if i + j == 2:
                raise _third_order("betainc", argname)
            out.append(unbroadcast(g * _betainc_d([(i + di, j + dj)], a, b, x)[0],
                                   xs[n].shape))
        out.append(unbroadcast(g * _beta_density_dab(i, j, a, b, x), xs[2].shape)
                   if needs[2] else None)
        return tuple(out)

    def jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
        y = ys[0]
        a, b, x = (v if v.dtype == y.dtype else v.astype(y.dtype) for v in xs)
        out = None
        for n, (di, dj), argname in ((0, (1, 0), "a"), (1, (0, 1), "b")):
            if ts[n] is None:
                continue
            if i + j == 2:
                raise _third_order("betainc", argname)
            d = ts[n] * _betainc_d([(i + di, j + dj)], a, b, x)[0]
            out = d if out is None else out + d
        if ts[2] is not None:
            d = ts[2] * _beta_density_dab(i, j, a, b, x)
            out = d if out is None else out + d
        return (_bcast(out, y.shape),)

    return defop(f"special.betainc_da{i}b{j}", _quiet(vjp), _quiet(jvp), complex=False,
                 doc=f"∂^{i + j}/∂a^{i}∂b^{j} of betainc (internal)")


_BETAINC_D_OPS = {ij: _make_betainc_d_op(*ij) for ij in _BETA_ORDER}


def _betainc_d(ijs: Sequence[tuple[int, int]], a: Any, b: Any, x: Any) -> list[Any]:
    """The derivatives ∂^(i+j)I_x(a, b)/∂aⁱ∂bʲ for (i, j) in ``ijs``: ops on Tensors (in a
    create_graph rule), one evaluation of the series for all on arrays."""
    if any(isinstance(v, Tensor) for v in (a, b, x)):
        return [_shape_call(_BETAINC_D_OPS[ij], _betainc_d_np(ij), (a, b, x)) for ij in ijs]
    order = max(sum(ij) for ij in ijs)
    r = _betainc_dab_np(a, b, x, 1 - x, order)
    dt = np.result_type(a.dtype, b.dtype, x.dtype)
    return [_cast(r[_BETA_ORDER.index(ij)], dt) for ij in ijs]


def _betainc_derivs(sign: int) -> Callable[..., tuple[Any, Any, Any]]:
    def derivs(a: Any, b: Any, x: Any, needs: Any) -> tuple[Any, Any, Any]:
        ijs = [ij for ij, n in zip(((1, 0), (0, 1)), needs[:2]) if n]
        ds = dict(zip(ijs, _betainc_d(ijs, a, b, x))) if ijs else {}
        return (sign * ds[(1, 0)] if needs[0] else None,
                sign * ds[(0, 1)] if needs[1] else None,
                sign * _beta_density(a, b, x) if needs[2] else None)
    return derivs


betainc = _ternary("betainc", _u.betainc, _betainc_derivs(1), ("a", "b", "x"),
                   "regularized I_x(a, b): ∂x = x^(a−1)(1−x)^(b−1)/B(a, b); ∂a, ∂b from "
                   "the series of I_x(a, b) or of 1 − I_x(a, b) = I_(1−x)(b, a)")
betaincc = _ternary("betaincc", _u.betaincc, _betainc_derivs(-1), ("a", "b", "x"),
                    "1 − I_x(a, b): ∂x = −x^(a−1)(1−x)^(b−1)/B(a, b); ∂a, ∂b: the "
                    "negatives of betainc's")


def _stdtr_log_density(nu: Any, t: Any) -> Any:
    return (_ap(gammaln, 0.5 * (nu + 1)) - _ap(gammaln, 0.5 * nu)
            - 0.5 * (np.log(nu) + _LOG_PI) - 0.5 * (nu + 1) * np.log1p(t * t / nu))


def _stdtr_density_ddf(k: int, nu: Any, t: Any) -> Any:
    """∂ᵏ/∂νᵏ (k = 1, 2) of Student's t density f: f·g and f·(g² + g′), g = ∂ log f/∂ν
    (_stdtr_log_density_dnu: no cancellation for large ν); 0 for ν = inf (the limit)."""
    big = np.isinf(_mask(nu))
    nus = _where(big, 1, nu) if big.any() else nu
    g, g1 = _stdtr_log_density_dnu(nus, t, k == 2)
    if k == 2:
        g = g * g + g1
    d = np.exp(_stdtr_log_density(nus, t)) * g
    return _where(big, 0, d) if big.any() else d


_stdtr_ddf = _binary_shape_ops(
    "stdtr", "stdtr", lambda nu, t: _stdtr_ddf_np(nu, t, 1)[0],
    lambda nu, t: _stdtr_ddf_np(nu, t, 2)[1], _stdtr_density_ddf, "df")


def _stdtr_derivs(df: Any, t: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    dt = None
    if needs[1]:
        # Student's t density; ν = inf: φ(t)
        big = np.isinf(_mask(df))
        nu = _where(big, 1, df) if big.any() else df
        dt = np.exp(_stdtr_log_density(nu, t))
        if big.any():
            dt = _where(big, np.exp(-0.5 * (t * t)) * (1 / _SQRT_2PI), dt)
    return (_stdtr_ddf(1, df, t) if needs[0] else None), dt


stdtr = _binary("stdtr", _u.stdtr, _stdtr_derivs, argnames=("df", "t"),
                doc="Student's t cdf: ∂t = the t density (φ(t) for df = inf); ∂df from "
                    "the series of the incomplete beta function")
