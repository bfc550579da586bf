"""Differentiable probability distributions with scipy.stats' names and arguments.

``tf.stats.<name>.<method>(x, *shapes, loc=0, scale=1)`` evaluates what
``scipy.stats.<name>.<method>`` evaluates, on Tensors, arrays or Python numbers that
broadcast together like NumPy, and the result is a Tensor differentiable (reverse, forward,
second order) in the data and in every parameter. Each method is a composition of
tenferro's differentiable ops (``tf.log``, ``tf.log1p``, ``tf.where``, ``tf.special.*``,
``tf.linalg.cholesky``, ...): there is no derivative rule of its own.

Continuous (logpdf, pdf, logcdf, cdf, sf, logsf, entropy): ``norm``, ``t(df)``,
``gamma(a)``, ``beta(a, b)``, ``expon``, ``laplace``, ``cauchy``, ``logistic``,
``lognorm(s)``, ``uniform``, ``chi2(df)``, ``chi(df)``, ``f(dfn, dfd)``, ``rayleigh``,
``weibull_min(c)``, ``pareto(b)``, ``vonmises(kappa)``; ``multivariate_normal(mean, cov)``
and ``dirichlet(alpha)`` (logpdf, pdf, entropy). Discrete (logpmf, pmf, logcdf, cdf, sf,
logsf, with ``loc``): ``poisson(mu)``, ``binom(n, p)``, ``bernoulli(p)``, ``geom(p)``,
``nbinom(n, p)``; entropy for bernoulli and geom (the others have no closed form:
NoClosedFormError). Calling a distribution freezes its parameters:
``tf.stats.norm(loc, scale).logpdf(x)``, ``tf.stats.gamma(2.0).entropy()``.

scipy.stats' own distributions convert their arguments with ``np.asarray``: on a Tensor
that requires grad they raise UnsupportedADError (the gradient would be dropped); the
differentiable spelling of ``scipy.stats.chi2.logpdf(x, df)`` is
``tf.stats.chi2.logpdf(x, df)``.

Domain (the same places as scipy.stats):

* a parameter outside its domain (scale <= 0, p outside [0, 1], df <= 0, ...) or a NaN
  argument gives NaN, and NaN derivatives in every differentiable argument of that entry
  (never a finite derivative of an undefined value);
* x outside the support gives logpdf -inf, pdf 0 (cdf 0 or 1, ...), with derivative 0 in
  the data and the parameters: the value is constant on a neighbourhood of such a point.
  Infinite x gets the limit values (logpdf -inf, cdf 0 or 1) with derivative 0;
* the masked entries are computed from safe substitute values ("double where"), so they
  cannot send NaN into the derivatives of the other entries.

Discrete ``k`` is data: its derivative is 0 (as for ``tf.floor``). ``binom``'s ``n`` is an
integer (non-integer n gives NaN, as in SciPy), but logpmf/pmf are differentiable in it
through ``gammaln``'s continuation (digamma). The cdf family of gamma, beta, t, binom and
nbinom (and chi2, chi, f) needs the incomplete gamma/beta functions, which ``tf.special`` differentiates in
their shape arguments too (series and continued fractions differentiated term by term):
these methods are differentiable in every parameter, to second order.

Results keep the inputs' precision (float32 in, float32 out; Python numbers do not
promote), where SciPy always returns float64; a result is a Tensor, also when 0-d.

Example: maximum-likelihood fit of a gamma distribution's shape and scale with
``scipy.optimize.minimize`` and tenferro's gradient (log-parameters keep them positive)::

    import numpy as np, scipy.optimize, scipy.stats
    import tenferro as tf

    data = scipy.stats.gamma.rvs(2.5, scale=1.5, size=500, random_state=0)

    def nll(log_params):
        a, scale = tf.exp(log_params[0]), tf.exp(log_params[1])
        return -tf.sum(tf.stats.gamma.logpdf(data, a, scale=scale))

    fit = scipy.optimize.minimize(tf.value_and_grad(nll), np.zeros(2), jac=True,
                                  method="BFGS")
    a_hat, scale_hat = np.exp(fit.x)     # matches scipy.stats.gamma.fit(data, floc=0)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence, TypeAlias

from numpy.typing import ArrayLike, NDArray

import math

import numpy as np
import scipy.special

from ._dtypes import float_result_type
from ._engine import apply1
from ._errors import LinAlgError, ShapeError, TenferroError, UnsupportedADError
from ._rule_api import is_tracked
from ._tensor import Tensor, as_tensor
from ._ops._docs import example, numpydoc
from ._ops._util import broadcast_shape, require_real, unbroadcast
from ._ops.elementwise import (arctan2, cos, exp, expm1, floor, log, log1p, logaddexp,
                               power, sin, sqrt, where)
from ._ops.reductions import sum as _sum
from ._ops.registry import defop
from ._ops.structure import broadcast_to, concatenate, diagonal, reshape, squeeze
from . import special as _tf_special
from .linalg import cholesky, solve_triangular

__all__ = ["norm", "t", "gamma", "beta", "expon", "laplace", "cauchy", "logistic",
           "lognorm", "uniform", "multivariate_normal", "dirichlet", "poisson", "binom",
           "bernoulli", "geom", "nbinom", "chi2", "chi", "f", "rayleigh", "weibull_min",
           "pareto", "vonmises", "DomainError", "NoClosedFormError"]

_LOG_2PI = math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)
_LOG_2 = math.log(2.0)
_EULER = 0.577215664901532860606512090082402431     # Euler-Mascheroni, as SciPy's _EULER
_CDF_METHODS = ("cdf", "logcdf", "sf", "logsf")
_NUMBERS = (bool, int, float)
# a mask on payloads: the result of a comparison of arrays (or of np.bool_(True) & ...)
_Mask: TypeAlias = "NDArray[np.bool_]"


class DomainError(TenferroError, ValueError):
    """An argument outside the domain where SciPy raises rather than returning NaN
    (dirichlet's alpha <= 0, x outside the simplex); also a ValueError, like SciPy's."""


class NoClosedFormError(TenferroError, NotImplementedError):
    """A method that SciPy computes by a numerical sum or integral and tenferro does not
    provide (the entropy of poisson, binom, nbinom); also a NotImplementedError."""


class _Special:
    """``_sp.gammaln(t)``: ``tenferro.special.gammaln`` when tenferro has it, else SciPy's
    ufunc itself, which a Tensor sends through tenferro's NumPy dispatch: the value for
    inputs without derivatives, UnsupportedADError for inputs with one (so a special
    function that tenferro.special does not differentiate yet is never silently
    differentiated wrongly, and needs no change here once it does)."""

    def __getattr__(self, name: str) -> Callable[..., Tensor]:
        f: Callable[..., Tensor] | None = getattr(_tf_special, name, None)
        if f is None:
            ufunc = getattr(scipy.special, name)

            def f(*args: Any) -> Tensor:
                out = ufunc(*args)
                return out if isinstance(out, Tensor) else Tensor._wrap(np.asarray(out))
        return f


_sp = _Special()


# ---- argument handling --------------------------------------------------------------------

def _floats(name: str, values: Sequence[Any], counts: int = 0
            ) -> tuple[list[Tensor], np.dtype[Any]]:
    """Each value as a real floating Tensor, in the dtype of NumPy 2's promotion
    (``float_result_type``, as tf.special and the elementwise ops): Python numbers take
    the precision of the array arguments (float64 when there are none), so
    ``norm.logpdf(x32, 0, 1)`` stays float32 like NumPy 2's weak scalars; an int64 array
    with a float32 one gives float64, integer arrays alone float64. The first ``counts``
    values (a discrete k and its loc: integers) take the parameters' precision and decide
    it only when no parameter is an array."""
    out: list[Any] = []
    dtypes: list[np.dtype[Any]] = []
    count_dtypes: list[np.dtype[Any]] = []
    for i, v in enumerate(values):
        if type(v) in _NUMBERS:     # Python numbers are weak; NumPy scalars are not
            out.append(v)
            continue
        v = v if isinstance(v, Tensor) else as_tensor(np.asarray(v))
        require_real(name, v)
        (count_dtypes if i < counts else dtypes).append(v._data.dtype)
        out.append(v)
    dtypes = dtypes or count_dtypes
    dtype = float_result_type(*dtypes)      # float64 for none, or for integers alone
    # every value in the common dtype (a differentiable astype for a float32 parameter
    # of a float64 result): a term computed from one parameter alone, such as log(scale),
    # would otherwise keep float32 rounding in a float64 result
    return [(v if v.dtype == dtype else v.astype(dtype))
            if isinstance(v, Tensor) else Tensor._wrap(np.asarray(v, dtype=dtype))
            for v in out], dtype


def _bind(name: str, params: Sequence[str], defaults: dict[str, Any], args: Sequence[Any],
          kwds: dict[str, Any]) -> list[Any]:
    """scipy.stats' calling convention: parameters by position after x, or by name."""
    if len(args) > len(params):
        raise TypeError(f"{name}() takes at most {len(params)} parameters after the data "
                        f"({', '.join(params)}), got {len(args)}")
    bound = dict(zip(params, args))
    for k, v in kwds.items():
        if k not in params:
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r}; its "
                            f"parameters are {', '.join(params)}")
        if k in bound:
            raise TypeError(f"{name}() got multiple values for argument {k!r}")
        bound[k] = v
    for k in params:
        if k not in bound:
            if k not in defaults:
                raise TypeError(f"{name}() missing required parameter {k!r}")
            bound[k] = defaults[k]
    return [bound[k] for k in params]


def _sanitize(inside: _Mask, t: Tensor, safe: float) -> Tensor:
    """``t`` where ``inside``, ``safe`` elsewhere: the first half of the double where, so
    the formula never sees the values whose result is discarded."""
    return where(inside, t, safe)


def _finish(inside: _Mask, value: Tensor, fill: float | NDArray[Any], bad: _Mask,
            inputs: Sequence[Tensor]) -> Tensor:
    """Assemble the result: the formula where ``inside``, the constant ``fill`` elsewhere,
    NaN where ``bad``. NaN entries get NaN derivatives in each tracked input: the NaN comes
    from ``c * where(bad, input, 0)`` with ``c`` NaN on ``bad`` and 0 elsewhere, so the
    cotangent that the outer where sends to the other entries stays exactly 0."""
    dtype = value.dtype
    if not inside.all():
        value = where(inside, value, np.asarray(fill, dtype=dtype))
    if bad.any():
        tracked = [u for u in inputs if isinstance(u, Tensor) and is_tracked(u)]
        if tracked:
            poison = np.where(bad, np.nan, 0.0).astype(dtype)
            total = where(bad, tracked[0], 0)
            for u in tracked[1:]:
                total = total + where(bad, u, 0)
            value = where(bad, total * poison, value)
        else:
            value = where(bad, np.asarray(np.nan, dtype=dtype), value)
    return value


def _unsupported(dist: str, method: str, names: Sequence[str], err: Exception) -> NoReturn:
    """Re-raise a special function's UnsupportedADError in the distribution's terms:
    naming the parameter when it is a shape parameter of an incomplete gamma/beta."""
    if not names:
        raise UnsupportedADError(f"tf.stats.{dist}.{method}: {err}") from None
    raise UnsupportedADError(
        f"tf.stats.{dist}.{method}: no derivative in {' or '.join(repr(n) for n in names)} "
        f"(it enters a shape argument of an incomplete gamma/beta function: {err}); pass "
        f"it without requires_grad (e.g. .detach()) to differentiate in the other "
        f"arguments") from None


class _Frozen:
    """A distribution with its parameters fixed: ``norm(0, 2).logpdf(x)``."""

    def __init__(self, dist: _Distribution, args: tuple[Any, ...], kwds: dict[str, Any]
                 ) -> None:
        self.dist, self.args, self.kwds = dist, args, kwds

    def __getattr__(self, method: str) -> Callable[..., Tensor]:
        dist = self.__dict__.get("dist")     # absent while copy/pickle rebuild the object
        if dist is None or method not in dist._methods:
            raise AttributeError(f"a frozen tf.stats distribution has no {method!r}")
        f = getattr(dist, method)
        if method == "entropy":              # a function of the parameters alone
            return lambda: f(*self.args, **self.kwds)
        return lambda x: f(x, *self.args, **self.kwds)

    def __repr__(self) -> str:
        return f"<frozen tf.stats.{self.dist.name}{self.args!r} {self.kwds!r}>"


class _Univariate:
    """What the continuous and discrete families share: the name, the frozen form, the
    default log-cdf/log-sf formulas, and running a formula with its errors in the
    distribution's terms."""
    shapes: tuple[str, ...] = ()
    _shape_safe: tuple[float, ...] = ()
    # method -> shape parameters inside an incomplete gamma/beta
    _incomplete: dict[str, tuple[str, ...]] = {}
    _methods: tuple[str, ...] = ()

    # The formulas take the point (z or k) and the distribution's own shape parameters
    # (norm: z; t: z, df; binom: k, n, p): the base signatures are ``*point_shapes: Any,
    # **_: Any`` so that each subclass may name its parameters (no caller passes keywords).
    if TYPE_CHECKING:
        def _cdf(self, *point_shapes: Any, **_: Any) -> Tensor: ...
        def _sf(self, *point_shapes: Any, **_: Any) -> Tensor: ...
        def _argcheck(self, *shapes: Any, **_: Any) -> _Mask: ...
        # a Python float for the distributions without shape parameters
        def _entropy(self, *shapes: Any, **_: Any) -> Tensor | float: ...

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: ArrayLike, **kwds: ArrayLike) -> _Frozen:
        """The distribution with its parameters fixed (scipy.stats' frozen form)."""
        return _Frozen(self, args, kwds)

    def __repr__(self) -> str:
        return f"<tf.stats.{self.name}>"

    def _logcdf(self, *point_shapes: Any, **_: Any) -> Tensor:
        return log(self._cdf(*point_shapes))

    def _logsf(self, *point_shapes: Any, **_: Any) -> Tensor:
        return log(self._sf(*point_shapes))

    def entropy(self, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        """The differential (continuous) or Shannon (discrete) entropy in nats, as
        ``scipy.stats.<name>.entropy(*shapes, loc=0, scale=1)``: the closed form of the
        shape parameters plus log(scale); loc does not enter (derivative 0). A parameter
        outside its domain (or a NaN loc) gives NaN, with NaN derivatives."""
        qual = f"tf.stats.{self.name}.entropy"
        if not hasattr(self, "_entropy"):
            raise NoClosedFormError(
                f"{qual}: no closed form (SciPy sums the series numerically); sum "
                f"-pmf·logpmf over the support with tf.stats.{self.name}.logpmf instead")
        continuous = isinstance(self, _Continuous)
        names = self.shapes + (("loc", "scale") if continuous else ("loc",))
        defaults: dict[str, Any] = {"loc": 0, "scale": 1}
        params, _ = _floats(qual, _bind(qual, names, defaults, args, kwds))
        if continuous:
            *shapes, loc, scale = params
        else:
            *shapes, loc = params
            scale = None
        full = broadcast_shape(qual, loc.shape, *(u.shape for u in params[len(shapes):]),
                               *(u.shape for u in shapes))
        with np.errstate(invalid="ignore"):
            valid = self._argcheck(*[u._data for u in shapes]) & ~np.isnan(loc._data)
            if scale is not None:
                valid = valid & (scale._data > 0)
        inside = np.broadcast_to(valid, full)
        raw = list(params)
        if not inside.all():
            shapes = [_sanitize(inside, u, v) for u, v in zip(shapes, self._shape_safe)]
            scale = None if scale is None else _sanitize(inside, scale, 1)

        def formula() -> Tensor:
            h = self._entropy(*shapes)
            if scale is not None:
                return h + log(scale)
            return h if isinstance(h, Tensor) else Tensor._wrap(np.asarray(h, loc.dtype))

        value = self._run("entropy", shapes, formula)
        if value.shape != full:                 # a constant entropy (norm, expon, ...)
            value = value + np.zeros(full, value.dtype)
        if is_tracked(loc):                     # loc does not enter: derivative 0
            value = value + 0 * where(inside, loc, 0)
        return _finish(inside, value, np.nan, ~inside, raw)

    def _run(self, method: str, shapes: Sequence[Tensor], formula: Callable[[], Tensor]
             ) -> Tensor:
        """``formula()``, with a special function's UnsupportedADError re-raised naming
        the shape parameter it is about."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            # -inf/inf values inside the domain (log 0 at p = 1, ...) are results
            try:
                return formula()
            except UnsupportedADError as err:
                names = [n for n, s in zip(self.shapes, shapes)
                         if n in self._incomplete.get(method, ()) and is_tracked(s)]
                _unsupported(self.name, method, names, err)


# ---- continuous distributions with loc and scale --------------------------------------------

class _Continuous(_Univariate):
    """x -> z = (x - loc)/scale; logpdf = _logpdf(z) - log(scale), the cdf family of z.

    Subclasses give the formulas on Tensors (``_logpdf``, ``_cdf``, ``_logcdf``, ``_sf``,
    ``_logsf``; ``_pdf`` defaults to exp(logpdf)), ``_argcheck`` on payloads, the support
    (a, b), and a standardized point (``_z_safe``) and shape values (``_shape_safe``)
    inside the domain for the double where."""
    a, b = -np.inf, np.inf
    _z_safe = 0.0
    _open_pdf_support = False      # lognorm: its formula has no value at z = a
    _periodic = False              # vonmises: NaN density at x = ±inf, as SciPy
    _methods = ("logpdf", "pdf", "logcdf", "cdf", "sf", "logsf", "entropy")

    if TYPE_CHECKING:
        def _logpdf(self, z: Tensor, *shapes: Any, **_: Any) -> Tensor: ...

    def _argcheck(self, *shapes: Any, **_: Any) -> _Mask:
        ok: Any = np.bool_(True)
        for s in shapes:
            ok = ok & (s > 0)
        mask: _Mask = ok
        return mask

    def _pdf(self, z: Tensor, *shapes: Any, **_: Any) -> Tensor:
        return exp(self._logpdf(z, *shapes))

    # SciPy's rv_continuous defaults: log(cdf) below the median, log1p(-sf) above it (the
    # median is where the cdf crosses 1/2), and the mirror image for the sf, so that a
    # probability near 1 keeps the digits of its small complement
    def _logcdf(self, z: Tensor, *shapes: Any, **_: Any) -> Tensor:
        return self._log_tail(self._cdf, self._sf, z, shapes)

    def _logsf(self, z: Tensor, *shapes: Any, **_: Any) -> Tensor:
        return self._log_tail(self._sf, self._cdf, z, shapes)

    @staticmethod
    def _log_tail(tail: Callable[..., Tensor], other: Callable[..., Tensor], z: Tensor,
                  shapes: Sequence[Tensor]) -> Tensor:
        p = tail(z, *shapes)
        small = p._data < 0.5
        if small.all():
            return log(p)
        q = other(z, *shapes)
        if not small.any():
            return log1p(-q)
        return where(small, log(where(small, p, 0.5)), log1p(-where(small, 0.5, q)))

    def _evaluate(self, method: str, x_in: ArrayLike, args: Sequence[ArrayLike],
                  kwds: dict[str, ArrayLike]) -> Tensor:
        qual = f"tf.stats.{self.name}.{method}"
        params = _bind(qual, self.shapes + ("loc", "scale"), {"loc": 0, "scale": 1},
                       args, kwds)
        (x, *shapes, loc, scale), _ = _floats(qual, [x_in] + params)
        xp, lp, sp = x._data, loc._data, scale._data
        shp = [s._data for s in shapes]
        full = broadcast_shape(qual, xp.shape, lp.shape, sp.shape, *(s.shape for s in shp))
        fill: float | NDArray[Any]
        with np.errstate(all="ignore"):
            zp = (xp - lp) / sp
            valid = self._argcheck(*shp) & (sp > 0)
            bad = ~valid | np.isnan(zp)
            finite = np.isfinite(zp)
            if method in ("logpdf", "pdf"):
                lower = zp > self.a if self._open_pdf_support else zp >= self.a
                inside = valid & lower & (zp <= self.b) & finite
                fill = -np.inf if method == "logpdf" else 0.0
                if self._periodic:      # a periodic density has no limit at ±inf
                    bad = bad | ~finite
            else:
                inside = valid & (zp > self.a) & (zp < self.b)
                one = valid & ((zp >= self.b) if method in ("cdf", "logcdf")
                               else (zp <= self.a))
                if method in ("cdf", "sf"):
                    fill = np.where(one, 1.0, 0.0)
                else:
                    fill = np.where(one, 0.0, -np.inf)
        inside = np.broadcast_to(inside, full)
        raw = [x, loc, scale] + list(shapes)
        if not inside.all():
            x, loc, scale = (_sanitize(inside, x, self._z_safe), _sanitize(inside, loc, 0),
                             _sanitize(inside, scale, 1))
            shapes = [_sanitize(inside, s, v) for s, v in zip(shapes, self._shape_safe)]
        z = (x - loc) / scale

        def formula() -> Tensor:
            if method in ("logpdf", "pdf"):
                value = self._logpdf(z, *shapes) - log(scale)
                return exp(value) if method == "pdf" else value
            r: Tensor = getattr(self, "_" + method)(z, *shapes)
            return r

        return _finish(inside, self._run(method, shapes, formula), fill, bad, raw)

    def logpdf(self, x: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("logpdf", x, args, kwds)

    def pdf(self, x: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("pdf", x, args, kwds)

    def logcdf(self, x: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("logcdf", x, args, kwds)

    def cdf(self, x: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("cdf", x, args, kwds)

    def sf(self, x: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("sf", x, args, kwds)

    def logsf(self, x: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("logsf", x, args, kwds)


def _neg_abs(z: Tensor) -> Tensor:
    """-|z| as a where on the sign, so its derivative is ±1 on each side of 0 (not abs's
    subgradient 0 at z = 0) and its second derivative 0."""
    return where(z._data >= 0, -z, z)


def _select(cond: _Mask, u: Tensor, if_true: Callable[[Tensor], Tensor],
            if_false: Callable[[Tensor], Tensor], safe_true: float, safe_false: float
            ) -> Tensor:
    """``if_true(u)`` where ``cond``, ``if_false(u)`` elsewhere (SciPy's apply_where),
    each branch evaluated at a safe value where it is not selected (double where)."""
    if cond.all():
        return if_true(u)
    if not cond.any():
        return if_false(u)
    return where(cond, if_true(where(cond, u, safe_true)),
                 if_false(where(cond, safe_false, u)))


def _std_normal_logpdf(z: Tensor) -> Tensor:
    return -0.5 * (z * z) - 0.5 * _LOG_2PI


class _Norm(_Continuous):
    def _logpdf(self, z: Tensor) -> Tensor:
        return _std_normal_logpdf(z)

    def _cdf(self, z: Tensor) -> Tensor:
        return _sp.ndtr(z)

    def _logcdf(self, z: Tensor) -> Tensor:
        return _sp.log_ndtr(z)

    def _sf(self, z: Tensor) -> Tensor:
        return _sp.ndtr(-z)

    def _logsf(self, z: Tensor) -> Tensor:
        return _sp.log_ndtr(-z)

    def _entropy(self) -> float:
        return 0.5 * (_LOG_2PI + 1)

class _Expon(_Continuous):
    a = 0.0
    _z_safe = 1.0

    def _logpdf(self, z: Tensor) -> Tensor:
        return -z

    def _cdf(self, z: Tensor) -> Tensor:
        return -expm1(-z)

    def _logcdf(self, z: Tensor) -> Tensor:
        return log(-expm1(-z))

    def _sf(self, z: Tensor) -> Tensor:
        return exp(-z)

    def _logsf(self, z: Tensor) -> Tensor:
        return -z

    def _entropy(self) -> float:
        return 1.0

class _Laplace(_Continuous):
    def _logpdf(self, z: Tensor) -> Tensor:
        return _neg_abs(z) - _LOG_2

    # cdf = e^z/2 for z <= 0 and 1 - e^(-z)/2 above: both sides written with the negative
    # branch value m = -|z| (e^m <= 1), so no side overflows and no masked side is NaN
    def _cdf(self, z: Tensor) -> Tensor:
        half = 0.5 * exp(_neg_abs(z))
        return where(z._data <= 0, half, 1 - half)

    def _logcdf(self, z: Tensor) -> Tensor:
        m = _neg_abs(z)
        return where(z._data <= 0, m - _LOG_2, log1p(-0.5 * exp(m)))

    def _sf(self, z: Tensor) -> Tensor:
        return self._cdf(-z)

    def _logsf(self, z: Tensor) -> Tensor:
        return self._logcdf(-z)

    def _entropy(self) -> float:
        return _LOG_2 + 1

class _Cauchy(_Continuous):
    def _logpdf(self, z: Tensor) -> Tensor:
        return -_LOG_PI - log1p(z * z)

    # arctan2(1, -z)/pi = 1/2 + arctan(z)/pi without the cancellation of the left tail
    def _cdf(self, z: Tensor) -> Tensor:
        return arctan2(1.0, -z) * (1 / math.pi)

    def _sf(self, z: Tensor) -> Tensor:
        return arctan2(1.0, z) * (1 / math.pi)

    def _entropy(self) -> float:
        return math.log(4 * math.pi)

class _Logistic(_Continuous):
    def _logpdf(self, z: Tensor) -> Tensor:
        m = _neg_abs(z)
        return m - 2 * log1p(exp(m))

    def _logcdf(self, z: Tensor) -> Tensor:            # log expit(z) = -log(1 + e^-z)
        return -logaddexp(0.0, -z)

    def _cdf(self, z: Tensor) -> Tensor:
        return exp(self._logcdf(z))

    def _logsf(self, z: Tensor) -> Tensor:
        return -logaddexp(0.0, z)

    def _sf(self, z: Tensor) -> Tensor:
        return exp(self._logsf(z))

    def _entropy(self) -> float:
        return 2.0

class _Uniform(_Continuous):
    a, b = 0.0, 1.0
    _z_safe = 0.5

    def _logpdf(self, z: Tensor) -> Tensor:
        return z * 0.0

    def _cdf(self, z: Tensor) -> Tensor:
        return z + 0.0

    def _logcdf(self, z: Tensor) -> Tensor:
        return log(z)

    def _sf(self, z: Tensor) -> Tensor:
        return 1 - z

    def _logsf(self, z: Tensor) -> Tensor:
        return log1p(-z)

    def _entropy(self) -> float:
        return 0.0

class _T(_Continuous):
    shapes = ("df",)
    _shape_safe = (1.0,)
    _incomplete = {m: ("df",) for m in ("cdf", "logcdf", "sf", "logsf")}

    def _logpdf(self, z: Tensor, df: Tensor) -> Tensor:
        # df = inf is the normal distribution (SciPy's convention); elsewhere
        # log Γ((ν+1)/2) - log Γ(ν/2) - ½ log(νπ) - (ν+1)/2 log(1 + z²/ν)
        sp = _sp
        big = np.isinf(df._data)
        nu = where(big, 1.0, df) if big.any() else df
        val = (sp.gammaln(0.5 * (nu + 1)) - sp.gammaln(0.5 * nu)
               - 0.5 * (log(nu) + _LOG_PI) - 0.5 * (nu + 1) * log1p(z * z / nu))
        if big.any():
            val = where(big, _std_normal_logpdf(z), val)
        return val

    def _cdf(self, z: Tensor, df: Tensor) -> Tensor:
        return _sp.stdtr(df, z)

    def _sf(self, z: Tensor, df: Tensor) -> Tensor:
        return _sp.stdtr(df, -z)

    def _entropy(self, df: Tensor) -> Tensor:
        # SciPy's branches: the closed form below df = 100, its asymptotic series above
        # (the closed form cancels there), the normal distribution's at df = inf
        sp = _sp

        def regular(nu: Tensor) -> Tensor:
            half, half1 = 0.5 * nu, 0.5 * (nu + 1)
            return (half1 * (sp.digamma(half1) - sp.digamma(half)) + 0.5 * log(nu)
                    + sp.betaln(half, 0.5))

        def asymptotic(nu: Tensor) -> Tensor:
            r = 1 / nu
            return (0.5 * (_LOG_2PI + 1) + r + r ** 2 / 4 - r ** 3 / 6 - r ** 4 / 8
                    + 0.3 * r ** 5 + r ** 6 / 4)

        big = np.isinf(df._data)
        nu = where(big, 1.0, df) if big.any() else df
        out = _select(nu._data >= 100, nu, asymptotic, regular, 100.0, 1.0)
        return where(big, 0.5 * (_LOG_2PI + 1), out) if big.any() else out

class _Gamma(_Continuous):
    shapes = ("a",)
    a = 0.0
    _z_safe = 1.0
    _shape_safe = (1.0,)
    _incomplete = {m: ("a",) for m in ("cdf", "logcdf", "sf", "logsf")}

    def _logpdf(self, z: Tensor, a: Tensor) -> Tensor:
        sp = _sp
        return sp.xlogy(a - 1, z) - z - sp.gammaln(a)

    def _cdf(self, z: Tensor, a: Tensor) -> Tensor:
        return _sp.gammainc(a, z)

    def _sf(self, z: Tensor, a: Tensor) -> Tensor:
        return _sp.gammaincc(a, z)

    def _entropy(self, a: Tensor) -> Tensor:
        sp = _sp

        def regular(a: Tensor) -> Tensor:
            return sp.digamma(a) * (1 - a) + a + sp.gammaln(a)

        def asymptotic(a: Tensor) -> Tensor:       # SciPy's series for a >= 250
            return (0.5 * (1 + _LOG_2PI + log(a)) - 1 / (3 * a) - a ** -2.0 / 12
                    - a ** -3.0 / 90 + a ** -4.0 / 120)

        return _select(a._data < 250, a, regular, asymptotic, 1.0, 250.0)

class _Beta(_Continuous):
    shapes = ("a", "b")
    a, b = 0.0, 1.0
    _z_safe = 0.5
    _shape_safe = (1.0, 1.0)
    _incomplete = {m: ("a", "b") for m in ("cdf", "logcdf", "sf", "logsf")}

    def _logpdf(self, z: Tensor, a: Tensor, b: Tensor) -> Tensor:
        sp = _sp
        return sp.xlog1py(b - 1, -z) + sp.xlogy(a - 1, z) - sp.betaln(a, b)

    def _cdf(self, z: Tensor, a: Tensor, b: Tensor) -> Tensor:
        return _sp.betainc(a, b, z)

    def _sf(self, z: Tensor, a: Tensor, b: Tensor) -> Tensor:
        return _sp.betaincc(a, b, z)

    def _entropy(self, a: Tensor, b: Tensor) -> Tensor:
        # the closed form (SciPy's "regular" branch; SciPy switches to asymptotic series
        # for a or b beyond ~5e6, where this one loses relative accuracy)
        sp = _sp
        return (sp.betaln(a, b) - (a - 1) * sp.digamma(a) - (b - 1) * sp.digamma(b)
                + (a + b - 2) * sp.digamma(a + b))

class _Lognorm(_Continuous):
    shapes = ("s",)
    a = 0.0
    _z_safe = 1.0
    _shape_safe = (1.0,)
    _open_pdf_support = True

    def _logpdf(self, z: Tensor, s: Tensor) -> Tensor:
        lz = log(z)
        return -0.5 * (lz / s) ** 2 - log(s) - lz - 0.5 * _LOG_2PI

    def _cdf(self, z: Tensor, s: Tensor) -> Tensor:
        return _sp.ndtr(log(z) / s)

    def _logcdf(self, z: Tensor, s: Tensor) -> Tensor:
        return _sp.log_ndtr(log(z) / s)

    def _sf(self, z: Tensor, s: Tensor) -> Tensor:
        return _sp.ndtr(-log(z) / s)

    def _logsf(self, z: Tensor, s: Tensor) -> Tensor:
        return _sp.log_ndtr(-log(z) / s)

    def _entropy(self, s: Tensor) -> Tensor:
        return 0.5 * (1 + _LOG_2PI + 2 * log(s))


class _Chi2(_Continuous):
    shapes = ("df",)
    a = 0.0
    _z_safe = 1.0
    _shape_safe = (2.0,)
    _incomplete = {m: ("df",) for m in _CDF_METHODS}

    def _logpdf(self, z: Tensor, df: Tensor) -> Tensor:
        sp = _sp
        return sp.xlogy(df / 2 - 1, z) - z / 2 - sp.gammaln(df / 2) - _LOG_2 * df / 2

    # SciPy's chdtr/chdtrc: the regularized incomplete gamma functions at (df/2, x/2)
    def _cdf(self, z: Tensor, df: Tensor) -> Tensor:
        return _sp.gammainc(df / 2, z / 2)

    def _sf(self, z: Tensor, df: Tensor) -> Tensor:
        return _sp.gammaincc(df / 2, z / 2)

    def _entropy(self, df: Tensor) -> Tensor:
        sp = _sp

        def regular(h: Tensor) -> Tensor:
            return h + _LOG_2 + sp.gammaln(h) + (1 - h) * sp.digamma(h)

        def asymptotic(h: Tensor) -> Tensor:      # SciPy's series for df/2 >= 125
            r = 0.5 / h
            return (r * (-2 / 3 + r * (-1 / 3 + r * (-4 / 45 + r / 7.5))) + 0.5 * log(h)
                    + _LOG_2 + 0.5 * (1 + _LOG_2PI))

        return _select(df._data < 250, df / 2, regular, asymptotic, 1.0, 125.0)


class _Chi(_Continuous):
    shapes = ("df",)
    a = 0.0
    _z_safe = 1.0
    _shape_safe = (2.0,)
    _incomplete = {m: ("df",) for m in _CDF_METHODS}

    def _logpdf(self, z: Tensor, df: Tensor) -> Tensor:
        sp = _sp
        return (_LOG_2 - 0.5 * _LOG_2 * df - sp.gammaln(0.5 * df) + sp.xlogy(df - 1, z)
                - 0.5 * z * z)

    def _cdf(self, z: Tensor, df: Tensor) -> Tensor:
        return _sp.gammainc(0.5 * df, 0.5 * z * z)

    def _sf(self, z: Tensor, df: Tensor) -> Tensor:
        return _sp.gammaincc(0.5 * df, 0.5 * z * z)

    def _entropy(self, df: Tensor) -> Tensor:
        sp = _sp

        def regular(k: Tensor) -> Tensor:
            return sp.gammaln(0.5 * k) + 0.5 * (k - _LOG_2 - (k - 1) * sp.digamma(0.5 * k))

        def asymptotic(k: Tensor) -> Tensor:      # SciPy's series for df >= 300
            return (0.5 + 0.5 * _LOG_PI - k ** -1.0 / 6 - k ** -2.0 / 6 - 4 / 45 * k ** -3.0
                    + k ** -4.0 / 15)

        return _select(df._data < 300, df, regular, asymptotic, 2.0, 300.0)


class _F(_Continuous):
    shapes = ("dfn", "dfd")
    a = 0.0
    _z_safe = 1.0
    _shape_safe = (2.0, 2.0)
    _incomplete = {m: ("dfn", "dfd") for m in _CDF_METHODS}

    def _logpdf(self, z: Tensor, dfn: Tensor, dfd: Tensor) -> Tensor:
        sp = _sp
        n, m = dfn, dfd
        return (m / 2 * log(m) + n / 2 * log(n) + sp.xlogy(n / 2 - 1, z)
                - ((n + m) / 2 * log(m + n * z) + sp.betaln(n / 2, m / 2)))

    # F(x) = I_w(n/2, m/2) with w = nx/(nx + m) = 1 - m/(nx + m): for nx > m the complement
    # form I^c_{m/(m+nx)}(m/2, n/2) keeps the digits of the small 1 - w (as Boost's fdtr)
    def _cdf(self, z: Tensor, dfn: Tensor, dfd: Tensor) -> Tensor:
        return self._tail(z, dfn, dfd, lower=True)

    def _sf(self, z: Tensor, dfn: Tensor, dfd: Tensor) -> Tensor:
        return self._tail(z, dfn, dfd, lower=False)

    def _tail(self, z: Tensor, n: Tensor, m: Tensor, lower: bool) -> Tensor:
        nz = n * z
        big = np.broadcast_to(nz._data > m._data, nz.shape)
        sp = _sp

        def small_w(nz: Tensor) -> Tensor:
            w = nz / (nz + m)
            return (sp.betainc if lower else sp.betaincc)(n / 2, m / 2, w)

        def small_v(nz: Tensor) -> Tensor:
            v = m / (nz + m)
            return (sp.betaincc if lower else sp.betainc)(m / 2, n / 2, v)

        # any nz > 0 is a safe point for either branch (w and v inside (0, 1))
        return _select(big, nz, small_v, small_w, 1.0, 1.0)

    def _entropy(self, dfn: Tensor, dfd: Tensor) -> Tensor:
        sp = _sp
        hn, hd, hs = 0.5 * dfn, 0.5 * dfd, 0.5 * (dfn + dfd)
        return (log(dfd) - log(dfn) + sp.betaln(hn, hd) + (1 - hn) * sp.digamma(hn)
                - (1 + hd) * sp.digamma(hd) + hs * sp.digamma(hs))


class _Rayleigh(_Continuous):
    a = 0.0
    _z_safe = 1.0

    def _logpdf(self, z: Tensor) -> Tensor:
        return log(z) - 0.5 * z * z

    def _cdf(self, z: Tensor) -> Tensor:
        return -expm1(-0.5 * z * z)

    def _sf(self, z: Tensor) -> Tensor:
        return exp(-0.5 * z * z)

    def _logsf(self, z: Tensor) -> Tensor:
        return -0.5 * z * z

    def _entropy(self) -> float:
        return _EULER / 2 + 1 - 0.5 * _LOG_2


class _WeibullMin(_Continuous):
    shapes = ("c",)
    a = 0.0
    _z_safe = 1.0
    _shape_safe = (1.0,)

    def _logpdf(self, z: Tensor, c: Tensor) -> Tensor:
        return log(c) + _sp.xlogy(c - 1, z) - power(z, c)

    def _cdf(self, z: Tensor, c: Tensor) -> Tensor:
        return -expm1(-power(z, c))

    def _sf(self, z: Tensor, c: Tensor) -> Tensor:
        return exp(-power(z, c))

    def _logsf(self, z: Tensor, c: Tensor) -> Tensor:
        return -power(z, c)

    def _entropy(self, c: Tensor) -> Tensor:
        return -_EULER / c - log(c) + _EULER + 1


class _Pareto(_Continuous):
    shapes = ("b",)
    a = 1.0
    _z_safe = 2.0
    _shape_safe = (1.0,)

    # written with -b·log z: SciPy's 1 - z^(-b) loses the digits of a small cdf near
    # z = 1 and its log(z^(-b)) underflows to -inf for large z; the values agree elsewhere
    def _logpdf(self, z: Tensor, b: Tensor) -> Tensor:
        return log(b) - (b + 1) * log(z)

    def _cdf(self, z: Tensor, b: Tensor) -> Tensor:
        return -expm1(-b * log(z))

    def _sf(self, z: Tensor, b: Tensor) -> Tensor:
        return exp(-b * log(z))

    def _logsf(self, z: Tensor, b: Tensor) -> Tensor:
        return -b * log(z)

    def _entropy(self, b: Tensor) -> Tensor:
        return 1 + 1 / b - log(b)


class _Vonmises(_Continuous):
    """SciPy's ``vonmises``: the density is periodic on the whole line, and the "cdf" at x
    is the cdf on [-π, π] of x reduced by whole turns, plus the number of turns (so it
    runs below 0 and above 1 outside [-π, π], as SciPy's)."""
    shapes = ("kappa",)
    _shape_safe = (1.0,)
    _periodic = True

    def _argcheck(self, kappa: NDArray[Any]) -> _Mask:
        ok: _Mask = kappa >= 0
        return ok

    def _logpdf(self, z: Tensor, kappa: Tensor) -> Tensor:
        sp = _sp
        return kappa * sp.cosm1(z) - _LOG_2PI - log(sp.i0e(kappa))

    # The cdf on [-π, π] is the integral of the density's Fourier series,
    #     F(x) = 1/2 + x/2π + (1/π) Σ_{n>=1} r_n sin(nx)/n,  r_n = I_n(κ)/I_0(κ),
    # summed with r_n = ive(n, κ)/i0e(κ) until r_n < 1e-17 (r_n ~ (κ/2)^n/n! for small κ,
    # exp(-n²/2κ) for large κ: 30 + min(κ, 9√κ) terms), so that the value, its
    # derivative in x (the density's series) and in κ (through ive) are compositions of
    # tenferro ops, to any order. Absolute accuracy ~1e-16 in all of them. SciPy sums a
    # series (about 12 digits) below κ = 50 and uses a normal approximation above, whose
    # error is up to 2.6e-6 (at κ = 50; 7e-9 at κ = 1000): the values differ there.
    def _cdf(self, z: Tensor, kappa: Tensor) -> Tensor:
        turns = np.round(z._data / (2 * math.pi))
        wrapped = z - turns * (2 * math.pi) if turns.any() else z
        out = self._cdf_wrapped(wrapped, kappa)
        return out + turns if turns.any() else out

    # SciPy's sf is 1 - cdf; the density is even, so on [-π, π] that is F(-x), which
    # keeps the digits of a small sf (1 - F(x) would cancel them)
    def _sf(self, z: Tensor, kappa: Tensor) -> Tensor:
        turns = np.round(z._data / (2 * math.pi))
        wrapped = z - turns * (2 * math.pi) if turns.any() else z
        out = self._cdf_wrapped(-wrapped, kappa)
        return out - turns if turns.any() else out

    @staticmethod
    def _cdf_wrapped(wrapped: Tensor, kappa: Tensor) -> Tensor:
        if wrapped.dtype != np.float64:
            # summed in float64: 1/2 + x/2π + ... cancels to the small tail probabilities,
            # whose float32 sum would keep only the absolute accuracy 6e-8
            low = wrapped.dtype
            return _Vonmises._cdf_wrapped(wrapped.astype(np.float64),
                                          kappa.astype(np.float64)).astype(low)
        series: Tensor = _vm_series(wrapped, kappa.astype(np.float64), _VM_BASE)
        out: Tensor = 0.5 + wrapped * (1 / (2 * math.pi)) + series * (1 / math.pi)
        # the rounding of 1/2 + x/2π + ... can leave a value a few ulps below 0 near -π
        # (above 1 near π): clip the value, keep the derivative (the density's series)
        shift = np.clip(out._data, 0, 1) - out._data
        return out + shift if shift.any() else out

    def _entropy(self, kappa: Tensor) -> Tensor:
        sp = _sp
        i0e = sp.i0e(kappa)
        return -kappa * sp.i1e(kappa) / i0e + log(2 * math.pi * i0e) + kappa


# ---- vonmises' Fourier series as one op ------------------------------------------------------
#
# Op ``stats.vonmises_series`` with ctx (kind, p, k) is
#     T(x, κ) = Σ_{n>=1} n^p r_n^(k)(κ) trig(n x),   trig = sin or cos,  r_n = I_n(κ)/I_0(κ),
# r^(k) the k-th derivative in κ; the cdf's series is (sin, -1, 0). Summed as one 2-D
# array op: the powers e^{inx} by a cumulative product over n (one rounding per factor,
# a random walk of ~√n ulps in the phase, where sin(n·x) would round n·x by up to n·x/2
# ulps), times the coefficients, reduced over n (a matrix-vector product for a scalar κ).
# The Bessel ratios are computed once per distinct κ (np.unique), and the number of terms
# from the κ present: up to the last n where some |r_n| >= 1e-18, r_n ~ (κ/2)^n/n! for small
# κ, exp(-n²/2κ) for large (at most 30 + min(κ, 9√κ)). Derivatives:
#   d/dκ T = T(kind, p, k + 1), with r_n' = (r_{n-1} + r_{n+1})/2 - r_n r_1 (from
#   I_n' = (I_{n-1} + I_{n+1})/2 and I_0' = I_1), and Leibniz for higher k;
#   d/dx T = ±T(other kind, p + 1, k); for the cdf's series in closed form, the density
#   Σ r_n cos(nx) = π f - 1/2 = exp(κ cosm1 x)/(2 i0e κ) - 1/2 (no series in the x-backward).
# Every rule calls the op or tenferro's ops, so every order is differentiable.

_VmCtx: TypeAlias = "tuple[str, int, int]"
_VM_BASE: _VmCtx = ("sin", -1, 0)


def _vm_coefs(kappa: NDArray[np.float64], p: int, k: int) -> NDArray[np.float64]:
    """(terms, len(kappa)): n^p r_n^(k)(κ) for n = 1..terms."""
    fin = kappa[np.isfinite(kappa)]
    kmax = float(np.max(fin, initial=0.0))     # kappa = inf: NaN (0/0 below)
    cap = int(30 + min(kmax, 9 * math.sqrt(kmax)))
    n = np.arange(0, cap + k + 2, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = scipy.special.ive(n, kappa[None, :]) / scipy.special.i0e(kappa)[None, :]
    big = np.nonzero(np.nanmax(np.abs(r[:cap + 1]), axis=1, initial=0.0) >= 1e-18)[0]
    terms = max(1, min(cap, int(big[-1]) + 2 if big.size else 1))
    derivs = [r]          # r^(j) for n = 0 .. cap + k + 1 - j
    for j in range(1, k + 1):
        prev = derivs[j - 1]
        nxt = np.empty_like(prev[:-1])
        nxt[1:] = 0.5 * (prev[:-2] + prev[2:])
        nxt[0] = 0.0                                   # r_0 = 1: all its derivatives 0
        for i in range(j):                             # - Σ C(j-1, i) r^(i)_n r^(j-1-i)_1
            nxt[1:] -= math.comb(j - 1, i) * derivs[i][1:len(nxt)] * derivs[j - 1 - i][1]
        derivs.append(nxt)
    c: NDArray[np.float64] = derivs[k][1:terms + 1] * n[1:terms + 1] ** p
    return c


def _vm_series_np(x: NDArray[Any], kappa: NDArray[Any], ctx: _VmCtx) -> NDArray[np.float64]:
    kind, p, k = ctx
    xb, kb = np.broadcast_arrays(np.asarray(x, dtype=np.float64),
                                 np.asarray(kappa, dtype=np.float64))
    xf = xb.ravel()
    kf = np.asarray(kappa, dtype=np.float64).ravel()
    uk: NDArray[np.float64] = kf
    inv: NDArray[np.intp] = np.zeros(xf.shape, dtype=np.intp)
    if kf.size > 1:                                    # (a scalar κ, the usual: no unique)
        found = np.unique(kb.ravel(), return_inverse=True)
        uk, inv = found[0], found[1]
    coef = _vm_coefs(uk, p, k)
    terms = coef.shape[0]
    z = np.exp(1j * xf)
    out = np.empty(xf.shape)
    part = 1 if kind == "sin" else 0                   # imaginary or real parts
    step = max(1, (1 << 20) // terms)                  # the (terms, step) block: <= 16 MB
    for s0 in range(0, xf.size, step):
        zs = z[s0:s0 + step]
        pw = np.empty((terms, zs.size), dtype=np.complex128)   # pw[n-1] = z^n
        pw[0] = zs
        for i in range(1, terms):
            np.multiply(pw[i - 1], zs, out=pw[i])
        if uk.size == 1:   # one matrix-vector product on the (re, im) pairs
            out[s0:s0 + step] = (coef[:, 0] @ pw.view(np.float64))[part::2]
        else:
            trig = pw.imag if kind == "sin" else pw.real
            out[s0:s0 + step] = np.einsum("tn,tn->n", coef[:, inv[s0:s0 + step]], trig)
    return out.reshape(xb.shape)


def _vm_series(x: Any, kappa: Any, ctx: _VmCtx) -> Any:
    if isinstance(x, Tensor) or isinstance(kappa, Tensor):
        tx, tk = as_tensor(x), as_tensor(kappa)
        t: Tensor = apply1(_vm_series_op, (tx, tk), _vm_series_np(tx._data, tk._data, ctx),
                           ctx)
        return t
    return _vm_series_np(x, kappa, ctx)


def _vm_dx(x: Any, kappa: Any, ctx: _VmCtx) -> Any:
    kind, p, k = ctx
    if ctx == _VM_BASE:     # the density's series in closed form
        if isinstance(x, Tensor) or isinstance(kappa, Tensor):
            dens: Tensor = exp(kappa * _sp.cosm1(x)) / (2 * _sp.i0e(kappa)) - 0.5
            return dens
        return np.exp(kappa * scipy.special.cosm1(x)) / (2 * scipy.special.i0e(kappa)) - 0.5
    if kind == "sin":
        return _vm_series(x, kappa, ("cos", p + 1, k))
    return -_vm_series(x, kappa, ("sin", p + 1, k))


def _vm_series_vjp(ctx: _VmCtx, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
                   ys: Sequence[Any]) -> tuple[Any, Any]:
    g = gs[0]
    x, kappa = xs
    kind, p, k = ctx
    dx = unbroadcast(g * _vm_dx(x, kappa, ctx), x.shape) if needs[0] else None
    dk = unbroadcast(g * _vm_series(x, kappa, (kind, p, k + 1)), kappa.shape) \
        if needs[1] else None
    return dx, dk


def _vm_series_jvp(ctx: _VmCtx, ts: Sequence[Any], xs: Sequence[Any],
                   ys: Sequence[Any]) -> tuple[Any]:
    (tx, tk), (x, kappa) = ts, xs
    kind, p, k = ctx
    out = None if tx is None else tx * _vm_dx(x, kappa, ctx)
    if tk is not None:
        d = tk * _vm_series(x, kappa, (kind, p, k + 1))
        out = d if out is None else out + d
    return (out,)


_vm_series_op = defop("stats.vonmises_series", _vm_series_vjp, _vm_series_jvp,
                      complex=False,
                      doc="Σ n^p r_n^(k)(κ) sin|cos(nx), r_n = I_n(κ)/I_0(κ) (vonmises' cdf); "
                          "d/dκ: k + 1; d/dx: the other trig, p + 1 (the density, closed "
                          "form, for the cdf's series)")
_vm_series_op.replay = lambda ctx: lambda x, kappa: _vm_series_np(x, kappa, ctx)


# ---- the docstrings (numpydoc): one template renders every distribution's ------------------

_CONT_METHODS = (
    ("logpdf(x, *shapes, loc=0, scale=1)", "The log of the density at x."),
    ("pdf(x, *shapes, loc=0, scale=1)", "The density at x."),
    ("logcdf(x, ...), cdf(x, ...)", "The (log) cumulative distribution function."),
    ("logsf(x, ...), sf(x, ...)", "The (log) survival function 1 - cdf."),
    ("entropy(*shapes, loc=0, scale=1)", "The differential entropy in nats."),
    ("__call__(*shapes, loc=0, scale=1)", "The frozen distribution: its methods take x alone "
                                          "(``entropy()`` nothing)."),
)
_DISC_METHODS = (
    ("logpmf(k, *shapes, loc=0)", "The log of the probability mass at k."),
    ("pmf(k, *shapes, loc=0)", "The probability mass at k."),
    ("logcdf(k, ...), cdf(k, ...)", "The (log) cumulative distribution function."),
    ("logsf(k, ...), sf(k, ...)", "The (log) survival function 1 - cdf."),
    ("entropy(*shapes, loc=0)", "The Shannon entropy in nats (bernoulli and geom; the others "
                                "raise NoClosedFormError)."),
    ("__call__(*shapes, loc=0)", "The frozen distribution: its methods take k alone."),
)


def _document(dist: _Univariate, summary: str, shapes: Sequence[tuple[str, str]] = (),
              extra: str = "") -> None:
    """The numpydoc docstring of a distribution object: its parameters (the point, the
    shape parameters, loc and scale), its methods, how it is differentiated and its
    example (tenferro._ops._doc_examples)."""
    discrete = not isinstance(dist, _Continuous)
    point = (("k", "array_like", "The points (integers; not differentiated: the pmf is "
                                 "piecewise constant in k).") if discrete else
             ("x", "array_like", "The points (differentiable)."))
    params = [point] + [(n, "array_like", d + " Differentiable.") for n, d in shapes]
    if discrete:
        params.append(("loc", "array_like, optional", "The shift of k (data, as k: derivative "
                                                      "0). Default 0."))
    else:
        params.append(("loc", "array_like, optional", "The location (differentiable). "
                                                      "Default 0."))
        params.append(("scale", "array_like, optional",
                       "The scale, > 0 (differentiable). Default 1."))
    notes = ("Every method is a composition of tenferro's differentiable ops (no rule of its "
             "own; docs/rules.md, special functions): reverse, forward and second order in "
             "the point and every parameter. The arguments broadcast like NumPy; a "
             "parameter outside its domain gives NaN (with NaN derivatives), a point "
             "outside the support the limiting value (derivative 0)." + extra)
    dist.__doc__ = numpydoc(summary, params, methods=_DISC_METHODS if discrete
                            else _CONT_METHODS, notes=notes,
                            examples=example(f"tenferro.stats.{dist.name}"))


norm = _Norm("norm")
_document(norm, "Normal distribution N(loc, scale²): ``norm.logpdf(x, loc=0, scale=1)``.")
t = _T("t")
_document(t, "Student's t: ``t.logpdf(x, df, loc=0, scale=1)``; df > 0, df = inf is the "
             "normal distribution.",
          [("df", "The degrees of freedom, > 0 (inf: the normal distribution).")],
          " The cdf's derivative in df is a series (tf.special.stdtr).")
gamma = _Gamma("gamma")
_document(gamma, "Gamma distribution: ``gamma.logpdf(x, a, loc=0, scale=1)``, a > 0.",
          [("a", "The shape, > 0.")],
          " The cdf's derivative in a is a series (tf.special.gammainc).")
beta = _Beta("beta")
_document(beta, "Beta distribution: ``beta.logpdf(x, a, b, loc=0, scale=1)``, a, b > 0.",
          [("a", "The first shape, > 0."), ("b", "The second shape, > 0.")],
          " The cdf's derivatives in a and b are series (tf.special.betainc).")
expon = _Expon("expon")
_document(expon, "Exponential distribution: ``expon.logpdf(x, loc=0, scale=1)``.")
laplace = _Laplace("laplace")
_document(laplace, "Laplace distribution: ``laplace.logpdf(x, loc=0, scale=1)``.")
cauchy = _Cauchy("cauchy")
_document(cauchy, "Cauchy distribution: ``cauchy.logpdf(x, loc=0, scale=1)``.")
logistic = _Logistic("logistic")
_document(logistic, "Logistic distribution: ``logistic.logpdf(x, loc=0, scale=1)``.")
lognorm = _Lognorm("lognorm")
_document(lognorm, "Log-normal distribution: ``lognorm.logpdf(x, s, loc=0, scale=1)``, s > 0.",
          [("s", "The standard deviation of log x, > 0.")])
uniform = _Uniform("uniform")
_document(uniform, "Uniform distribution on [loc, loc + scale]: "
                   "``uniform.logpdf(x, loc, scale)``.")
chi2 = _Chi2("chi2")
_document(chi2, "Chi-squared distribution: ``chi2.logpdf(x, df, loc=0, scale=1)``, df > 0.",
          [("df", "The degrees of freedom, > 0.")])
chi = _Chi("chi")
_document(chi, "Chi distribution: ``chi.logpdf(x, df, loc=0, scale=1)``, df > 0.",
          [("df", "The degrees of freedom, > 0.")])
f = _F("f")
_document(f, "F distribution: ``f.logpdf(x, dfn, dfd, loc=0, scale=1)``, dfn, dfd > 0.",
          [("dfn", "The numerator's degrees of freedom, > 0."),
           ("dfd", "The denominator's degrees of freedom, > 0.")])
rayleigh = _Rayleigh("rayleigh")
_document(rayleigh, "Rayleigh distribution: ``rayleigh.logpdf(x, loc=0, scale=1)``.")
weibull_min = _WeibullMin("weibull_min")
_document(weibull_min, "Weibull (minimum) distribution: "
                       "``weibull_min.logpdf(x, c, loc=0, scale=1)``.",
          [("c", "The shape, > 0.")])
pareto = _Pareto("pareto")
_document(pareto, "Pareto distribution on x >= 1: ``pareto.logpdf(x, b, loc=0, scale=1)``, "
                  "b > 0.", [("b", "The shape, > 0.")])
vonmises = _Vonmises("vonmises")
_document(vonmises, "Von Mises distribution on [-pi, pi]: ``vonmises.logpdf(x, kappa, loc=0, "
                    "scale=1)``, kappa >= 0.", [("kappa", "The concentration, >= 0.")],
          " One exception: cdf and sf (so logcdf and logsf) sum the density's Fourier series "
          "with an op of their own, stats.vonmises_series (docs/rules.md, stats), whose "
          "x-derivative is the density in closed form.")


# ---- discrete distributions with loc ------------------------------------------------------

class _Discrete(_Univariate):
    """k -> k - loc; k is data (derivative 0, as for tf.floor). Subclasses give
    ``_logpmf``, ``_cdf``, ``_sf`` (and optionally ``_pmf``, ``_logcdf``, ``_logsf``) of
    the integer k on Tensors, ``_argcheck`` and ``_support`` on payloads."""
    _k_safe = 1.0
    _methods = ("logpmf", "pmf", "logcdf", "cdf", "sf", "logsf", "entropy")

    # each subclass names its own shape parameters, and gives the support (a, b) (or
    # overrides _support)
    if TYPE_CHECKING:
        a: float
        b: float

        def _argcheck(self, *shapes: Any, **_: Any) -> _Mask: ...
        def _logpmf(self, k: Tensor, *shapes: Any, **_: Any) -> Tensor: ...

    def _support(self, *shapes: Any, **_: Any) -> tuple[Any, Any]:
        return self.a, self.b

    def _pmf(self, k: Tensor, *shapes: Any, **_: Any) -> Tensor:
        return exp(self._logpmf(k, *shapes))

    def _evaluate(self, method: str, k_in: ArrayLike, args: Sequence[ArrayLike],
                  kwds: dict[str, ArrayLike]) -> Tensor:
        qual = f"tf.stats.{self.name}.{method}"
        params = _bind(qual, self.shapes + ("loc",), {"loc": 0}, args, kwds)
        (k, loc, *shapes), _ = _floats(qual, [k_in, params[-1]] + params[:-1], counts=2)
        shp = [s._data for s in shapes]
        full = broadcast_shape(qual, k.shape, loc.shape, *(s.shape for s in shp))
        fill: float | NDArray[Any]
        with np.errstate(all="ignore"):
            kp = k._data - loc._data
            valid = self._argcheck(*shp)
            a, b = self._support(*shp)
            bad = ~valid | np.isnan(kp)
            finite = np.isfinite(kp)
            if method in ("logpmf", "pmf"):
                inside = valid & (kp >= a) & (kp <= b) & (np.floor(kp) == kp) & finite
                fill = -np.inf if method == "logpmf" else 0.0
            else:
                inside = valid & (kp >= a) & (kp < b) & finite
                # SciPy puts 1 (log: 0) above the support, or below it for sf
                one = (kp >= b) if method in ("cdf", "logcdf") else (kp < a) & valid
                if method == "logcdf":     # SciPy writes 0 there after the NaNs
                    bad = bad & ~one
                fill = np.where(one, 1.0, 0.0) if method in ("cdf", "sf") else \
                    np.where(one, 0.0, -np.inf)
        inside = np.broadcast_to(inside, full)
        # the count as a constant: it enters shape arguments of incomplete gamma/beta
        kk = Tensor._wrap(np.where(inside, np.floor(kp), self._k_safe).astype(k.dtype))
        raw = [k, loc] + list(shapes)
        if not inside.all():
            shapes = [_sanitize(inside, s, v) for s, v in zip(shapes, self._shape_safe)]
        value = self._run(method, shapes, lambda: getattr(self, "_" + method)(kk, *shapes))
        if value.shape != inside.shape:     # a formula free of some shape parameter
            value = value + np.zeros(inside.shape, value.dtype)
        # k and loc are data with derivative 0 (as tf.floor): link them with a zero weight
        for u in (k, loc):
            if is_tracked(u):
                value = value + 0 * floor(where(inside, u, 0))
        return _finish(inside, value, fill, bad, raw)

    # The public methods repeat _Continuous's on purpose: SciPy names the point k here and
    # x there, and a keyword call (binom.cdf(k=3, n=5, p=0.5)) must keep binding it.
    def logpmf(self, k: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("logpmf", k, args, kwds)

    def pmf(self, k: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("pmf", k, args, kwds)

    def logcdf(self, k: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("logcdf", k, args, kwds)

    def cdf(self, k: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("cdf", k, args, kwds)

    def sf(self, k: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("sf", k, args, kwds)

    def logsf(self, k: ArrayLike, *args: ArrayLike, **kwds: ArrayLike) -> Tensor:
        return self._evaluate("logsf", k, args, kwds)


class _Poisson(_Discrete):
    shapes = ("mu",)
    a, b = 0.0, np.inf
    _shape_safe = (1.0,)

    def _argcheck(self, mu: NDArray[Any]) -> _Mask:
        return mu >= 0

    def _logpmf(self, k: Tensor, mu: Tensor) -> Tensor:
        sp = _sp
        return sp.xlogy(k, mu) - sp.gammaln(k + 1) - mu

    # P(K <= k) = Q(k + 1, mu) (the regularized upper incomplete gamma), the sf P
    def _cdf(self, k: Tensor, mu: Tensor) -> Tensor:
        return _sp.gammaincc(k + 1, mu)

    def _sf(self, k: Tensor, mu: Tensor) -> Tensor:
        return _sp.gammainc(k + 1, mu)


class _Binom(_Discrete):
    shapes = ("n", "p")
    a = 0.0
    _shape_safe = (2.0, 0.5)
    _incomplete = {m: ("n",) for m in ("cdf", "logcdf", "sf", "logsf")}

    def _argcheck(self, n: NDArray[Any], p: NDArray[Any]) -> _Mask:
        ok: _Mask = (n >= 0) & (np.floor(n) == n) & (p >= 0) & (p <= 1)
        return ok

    def _support(self, n: NDArray[Any], p: NDArray[Any]) -> tuple[Any, Any]:
        return 0.0, n

    def _logpmf(self, k: Tensor, n: Tensor, p: Tensor) -> Tensor:
        sp = _sp
        return (sp.gammaln(n + 1) - sp.gammaln(k + 1) - sp.gammaln(n - k + 1)
                + sp.xlogy(k, p) + sp.xlog1py(n - k, -p))

    # P(K <= k) = I_{1-p}(n - k, k + 1), P(K > k) = I_p(k + 1, n - k) (k < n here)
    def _cdf(self, k: Tensor, n: Tensor, p: Tensor) -> Tensor:
        return _sp.betainc(n - k, k + 1, 1 - p)

    def _sf(self, k: Tensor, n: Tensor, p: Tensor) -> Tensor:
        return _sp.betainc(k + 1, n - k, p)


class _Bernoulli(_Discrete):
    shapes = ("p",)
    a, b = 0.0, 1.0
    _k_safe = 0.0
    _shape_safe = (0.5,)

    def _argcheck(self, p: NDArray[Any]) -> _Mask:
        return (p >= 0) & (p <= 1)

    def _logpmf(self, k: Tensor, p: Tensor) -> Tensor:
        one = k._data == 1
        # each branch sees a p for which it is finite where it is not selected
        return where(one, log(where(one, p, 0.5)), log1p(-where(one, 0.5, p)))

    def _cdf(self, k: Tensor, p: Tensor) -> Tensor:        # k = 0 here (0 <= k < 1)
        return 1 - p

    def _logcdf(self, k: Tensor, p: Tensor) -> Tensor:
        return log1p(-p)

    def _sf(self, k: Tensor, p: Tensor) -> Tensor:
        return p + 0.0

    def _logsf(self, k: Tensor, p: Tensor) -> Tensor:
        return log(p)

    def _entropy(self, p: Tensor) -> Tensor:
        return _sp.entr(p) + _sp.entr(1 - p)

class _Geom(_Discrete):
    shapes = ("p",)
    a, b = 1.0, np.inf
    _shape_safe = (0.5,)

    def _argcheck(self, p: NDArray[Any]) -> _Mask:
        return (p > 0) & (p <= 1)

    def _logpmf(self, k: Tensor, p: Tensor) -> Tensor:
        # (k - 1) log(1 - p) + log p; the first term is 0 for k = 1 (also at p = 1)
        first = k._data == 1
        q = where(first, 0.5, p)
        return where(first, 0.0, (k - 1) * log1p(-q)) + log(p)

    def _logsf(self, k: Tensor, p: Tensor) -> Tensor:
        # k log(1 - p); -inf at p = 1, where its derivative is -inf too
        return k * log1p(-p)

    def _sf(self, k: Tensor, p: Tensor) -> Tensor:
        # (1 - p)^k: exp(k log1p(-p)) except at p = 1, where the power keeps the
        # derivative finite (k (1 - p)^(k - 1) = 1 for k = 1, 0 above)
        one = p._data == 1
        if not one.any():
            return exp(k * log1p(-p))
        q = where(one, 0.5, p)
        return where(one, power(1 - p, k), exp(k * log1p(-q)))

    def _cdf(self, k: Tensor, p: Tensor) -> Tensor:
        one = p._data == 1
        if not one.any():
            return -expm1(k * log1p(-p))
        q = where(one, 0.5, p)
        return where(one, 1 - power(1 - p, k), -expm1(k * log1p(-q)))

    def _entropy(self, p: Tensor) -> Tensor:
        # -log p - (1 - p) log(1 - p) / p; xlog1py makes the second term 0 at p = 1, where
        # SciPy's formula gives 0·(-inf) = NaN (the entropy of a point mass is 0)
        return -log(p) - _sp.xlog1py(1 - p, -p) / p

class _Nbinom(_Discrete):
    shapes = ("n", "p")
    a, b = 0.0, np.inf
    _shape_safe = (1.0, 0.5)
    _incomplete = {m: ("n",) for m in ("cdf", "logcdf", "sf", "logsf")}

    def _argcheck(self, n: NDArray[Any], p: NDArray[Any]) -> _Mask:
        return (n > 0) & (p > 0) & (p <= 1)

    def _logpmf(self, k: Tensor, n: Tensor, p: Tensor) -> Tensor:
        sp = _sp
        return (sp.gammaln(n + k) - sp.gammaln(k + 1) - sp.gammaln(n) + n * log(p)
                + sp.xlog1py(k, -p))

    # P(K <= k) = I_p(n, k + 1); the sf is its complement I_{1-p}(k + 1, n)
    def _cdf(self, k: Tensor, n: Tensor, p: Tensor) -> Tensor:
        return _sp.betainc(n, k + 1, p)

    def _sf(self, k: Tensor, n: Tensor, p: Tensor) -> Tensor:
        return _sp.betaincc(n, k + 1, p)

    def _logcdf(self, k: Tensor, n: Tensor, p: Tensor) -> Tensor:
        # SciPy's choice: log1p(-sf) where the cdf exceeds 1/2, keeping digits near 1
        cdf = self._cdf(k, n, p)
        upper = cdf._data > 0.5
        if not upper.any():
            return log(cdf)
        kk = where(upper, k, 0.0)
        nn, pp = where(upper, n, 1.0), where(upper, p, 0.5)
        return where(upper, log1p(-_sp.betainc(kk + 1, nn, 1 - pp)),
                     log(where(upper, 0.5, cdf)))


poisson = _Poisson("poisson")
_document(poisson, "Poisson distribution: ``poisson.logpmf(k, mu, loc=0)``, mu >= 0.",
          [("mu", "The mean, >= 0.")],
          " The cdf's derivative in mu is that of tf.special.gammaincc in x.")
binom = _Binom("binom")
_document(binom, "Binomial distribution: ``binom.logpmf(k, n, p, loc=0)``, integer n >= 0, "
                 "0 <= p <= 1.",
          [("n", "The number of trials, an integer >= 0."),
           ("p", "The success probability, in [0, 1].")])
bernoulli = _Bernoulli("bernoulli")
_document(bernoulli, "Bernoulli distribution: ``bernoulli.logpmf(k, p, loc=0)``.",
          [("p", "The success probability, in [0, 1].")])
geom = _Geom("geom")
_document(geom, "Geometric distribution on k >= 1: ``geom.logpmf(k, p, loc=0)``, 0 < p <= 1.",
          [("p", "The success probability, in (0, 1].")])
nbinom = _Nbinom("nbinom")
_document(nbinom, "Negative binomial distribution: ``nbinom.logpmf(k, n, p, loc=0)``, n > 0, "
                  "0 < p <= 1.",
          [("n", "The number of successes, > 0."),
           ("p", "The success probability, in (0, 1].")])


# ---- multivariate ---------------------------------------------------------------------------

class _MultivariateNormal:
    """``multivariate_normal.logpdf(x, mean=None, cov=1, allow_singular=False)``.

    cov is a scalar (cov·I), a 1-D diagonal, or a (..., d, d) stack of matrices (only the
    lower triangle is read, as by SciPy's eigh and tf.linalg.cholesky); mean is None (0),
    or (..., d); x is (..., d). The dimension d comes from mean, else from a 2-D cov, else
    from a 1-D cov (SciPy raises there), else d = 1 — then a 1-D x holds samples, as in
    SciPy. Batch dimensions of x, mean and cov broadcast (SciPy takes one mean and one
    cov). With one mean and one cov the result is squeezed like SciPy's; with batched
    parameters it has the broadcast batch shape.

    logpdf = -½ (|L⁻¹(x - mean)|² + 2 Σ log diag L + d log 2π) with L = cholesky(cov):
    differentiable in x, mean and cov. A covariance that is not positive definite raises
    LinAlgError, a ValueError like SciPy's error (allow_singular=True with a singular
    covariance is not supported and raises too); so does a scalar or diagonal cov with
    an entry <= 0. There are no cdf/logcdf (SciPy integrates them numerically).

    Parameters
    ----------
    x : array_like
        The points, (..., d) (differentiable).
    mean : array_like, optional
        The mean, (..., d) (differentiable). Default None: zero.
    cov : array_like, optional
        The covariance: a scalar, a 1-D diagonal or a (..., d, d) stack, positive definite
        (differentiable). Default 1.
    allow_singular : bool, optional
        Only False is supported (a singular covariance raises LinAlgError). Default False.

    Notes
    -----
    Methods:

    * ``logpdf(x, mean=None, cov=1, allow_singular=False)``: the log of the density at x.
    * ``pdf(x, mean=None, cov=1, allow_singular=False)``: the density at x.
    * ``entropy(mean=None, cov=1, allow_singular=False)``: the differential entropy in nats.
    * ``__call__(mean=None, cov=1, allow_singular=False)``: the frozen distribution, whose
      methods take x alone.

    Derivative: a composition of tenferro's ops, the cholesky rule (Murray 2016;
    docs/rules.md, cholesky) and solve_triangular.

    Examples
    --------
    >>> x = tf.tensor([1.0, 0.0], requires_grad=True)
    >>> cov = tf.tensor([[2.0, 0.0], [0.0, 1.0]])
    >>> tf.stats.multivariate_normal.logpdf(x, [0.0, 0.0], cov)
    tensor(-2.43445066, grad_fn=...)
    >>> tf.grad([tf.stats.multivariate_normal.logpdf(x, [0.0, 0.0], cov)], [x])[0]
    tensor([-0.5, -0. ])
    """
    name = "multivariate_normal"
    _methods = ("logpdf", "pdf", "entropy")

    def __call__(self, mean: ArrayLike | None = None, cov: ArrayLike = 1,
                 allow_singular: bool = False) -> _Frozen:
        """The distribution with its parameters fixed (scipy.stats' frozen form)."""
        return _Frozen(self, (), {"mean": mean, "cov": cov, "allow_singular": allow_singular})

    def __repr__(self) -> str:
        return "<tf.stats.multivariate_normal>"

    @staticmethod
    def _params(qual: str, values: Sequence[Any], mean: ArrayLike | None
                ) -> tuple[list[Tensor], Tensor | None, int]:
        """The arguments as Tensors (mean last, when given, as a (..., d) array) and the
        dimension d: from mean, else from cov, else 1."""
        vals, _ = _floats(qual, list(values) + ([] if mean is None else [mean]))
        m = vals.pop() if mean is not None else None
        if m is not None and m.ndim == 0:
            m = reshape(m, (1,))
        cov = vals[-1]
        dim = m.shape[-1] if m is not None else (cov.shape[-1] if cov.ndim >= 1 else 1)
        if cov.ndim >= 2 and cov.shape[-2:] != (dim, dim):
            raise ShapeError(f"{qual}: cov has shape {cov.shape}; it must be (..., {dim}, "
                             f"{dim}), a 1-D diagonal of length {dim} or a scalar")
        if cov.ndim == 1 and cov.shape[0] not in (dim, 1):
            raise ShapeError(f"{qual}: the diagonal cov has {cov.shape[0]} entries but the "
                             f"dimension is {dim}")
        return vals, m, dim

    @staticmethod
    def _factor(qual: str, cov: Tensor, dim: int, allow_singular: bool
                ) -> tuple[Tensor | None, Tensor]:
        """(L, log det cov) with L = cholesky(cov) for a matrix cov, (None, log det) for a
        scalar or diagonal one; LinAlgError unless positive definite."""
        if cov.ndim <= 1:
            var = cov._data
            if not np.all(var > 0):
                raise LinAlgError(f"{qual}: the covariance must be positive definite; its "
                                  f"diagonal has the entries {var.ravel()[var.ravel() <= 0]}"
                                  " <= 0 (or NaN)")
            logdet = (_sum(log(cov), axis=-1) if cov.ndim == 1 and cov.shape[0] == dim
                      else dim * log(cov if cov.ndim == 0 else reshape(cov, ())))
            return None, logdet
        try:
            chol = cholesky(cov)
        except LinAlgError as err:
            extra = (" (allow_singular=True: singular covariances are not supported)"
                     if allow_singular else "")
            raise LinAlgError(f"{qual}: the covariance is not positive definite{extra}:"
                              f" {err}") from None
        return chol, 2 * _sum(log(diagonal(chol, axis1=-2, axis2=-1)), axis=-1)

    def logpdf(self, x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1,
               allow_singular: bool = False) -> Tensor:
        qual = "tf.stats.multivariate_normal.logpdf"
        (x, cov), mean_t, dim = self._params(qual, [x, cov], mean)
        if x.ndim == 0:
            x = reshape(x, (1,))
        if x.ndim == 1:
            x = reshape(x, (-1, 1) if dim == 1 else (1, -1))
        if x.shape[-1] != dim:
            raise ShapeError(f"{qual}: x has {x.shape[-1]} components in its last axis but "
                             f"the distribution has dimension {dim} (from mean/cov)")
        diff = x if mean_t is None else x - mean_t
        chol, logdet = self._factor(qual, cov, dim, allow_singular)
        if chol is None:
            maha = _sum(diff * diff / cov, axis=-1)
        else:
            batch = np.broadcast_shapes(diff.shape[:-1], cov.shape[:-2])
            lhs = broadcast_to(chol, batch + (dim, dim))
            rhs = broadcast_to(diff, batch + (dim,))
            w = solve_triangular(lhs, reshape(rhs, batch + (dim, 1)), lower=True,
                                 check_finite=False)
            maha = _sum(w * w, axis=(-2, -1))
        out = -0.5 * (maha + logdet + dim * _LOG_2PI)
        batched = (mean_t is not None and mean_t.ndim > 1) or cov.ndim > 2
        if not batched:
            out = squeeze(out) if out.ndim else out    # SciPy's _squeeze_output
        return out

    def entropy(self, mean: ArrayLike | None = None, cov: ArrayLike = 1,
                allow_singular: bool = False) -> Tensor:
        """½ log det(2πe·cov) = ½ (d (1 + log 2π) + log det cov), by the Cholesky factor
        (or the diagonal); differentiable in cov. mean only sets d and the batch shape
        (derivative 0). A batched cov (..., d, d) gives the entropies of the batch."""
        qual = "tf.stats.multivariate_normal.entropy"
        (cov,), mean_t, dim = self._params(qual, [cov], mean)
        _, logdet = self._factor(qual, cov, dim, allow_singular)
        out = 0.5 * (dim * (_LOG_2PI + 1) + logdet)
        if mean_t is not None:
            if mean_t.ndim > 1:
                out = out + np.zeros(mean_t.shape[:-1], out.dtype)
            if is_tracked(mean_t):
                out = out + 0 * _sum(mean_t, axis=-1)
        return out

    def pdf(self, x: ArrayLike, mean: ArrayLike | None = None, cov: ArrayLike = 1,
            allow_singular: bool = False) -> Tensor:
        return exp(self.logpdf(x, mean, cov, allow_singular))


class _Dirichlet:
    """``dirichlet.logpdf(x, alpha)``: alpha (K,) > 0; x holds the K components (or the
    first K - 1, the last being 1 - their sum) along its FIRST axis, as in SciPy, with
    further axes for more points. logpdf = Σ (α_i - 1) log x_i - log B(α), differentiable
    in x and alpha (use the K - 1 form to differentiate in x on the simplex). Raises
    DomainError where SciPy raises ValueError: alpha <= 0, x outside [0, 1], x_i = 0 with
    α_i < 1, components not summing to 1 (to 1e-9).

    Parameters
    ----------
    x : array_like
        The points, (K, ...) or (K - 1, ...) (differentiable).
    alpha : array_like
        The concentrations, (K,), > 0 (differentiable).

    Notes
    -----
    Methods:

    * ``logpdf(x, alpha)``: the log of the density at x.
    * ``pdf(x, alpha)``: the density at x.
    * ``entropy(alpha)``: the differential entropy in nats.
    * ``__call__(alpha)``: the frozen distribution, whose methods take x alone.

    Derivative: a composition of tenferro's ops (gammaln, digamma, xlogy-like sums; no rule
    of its own).

    Examples
    --------
    >>> tf.stats.dirichlet.logpdf(tf.tensor([0.2, 0.3, 0.5]), tf.tensor([1.0, 2.0, 3.0]))
    tensor(1.5040774)
    """
    name = "dirichlet"
    _methods = ("logpdf", "pdf", "entropy")

    def __call__(self, alpha: ArrayLike) -> _Frozen:
        """The distribution with its parameters fixed (scipy.stats' frozen form)."""
        return _Frozen(self, (alpha,), {})

    def __repr__(self) -> str:
        return "<tf.stats.dirichlet>"

    def logpdf(self, x: ArrayLike, alpha: ArrayLike) -> Tensor:
        qual = "tf.stats.dirichlet.logpdf"
        (x, alpha), _ = _floats(qual, [x, alpha])
        ap = alpha._data
        if ap.ndim != 1:
            raise ShapeError(f"{qual}: alpha must be one-dimensional, got shape {ap.shape}")
        if not np.all(ap > 0):
            raise DomainError(f"{qual}: every alpha must be > 0, got {ap}")
        kdim = ap.shape[0]
        if x.ndim == 0 or x.shape[0] not in (kdim, kdim - 1):
            raise ShapeError(f"{qual}: x must hold {kdim} (or {kdim - 1}) components along "
                             f"its first axis, got shape {x.shape}")
        if x.shape[0] == kdim - 1:
            last = 1 - _sum(x, axis=0)
            x = concatenate([x, reshape(last, (1,) + last.shape)], axis=0)
        xp = x._data
        a_col = ap.reshape((kdim,) + (1,) * (x.ndim - 1))
        if np.min(xp) < 0 or np.max(xp) > 1:
            raise DomainError(f"{qual}: every x must lie in [0, 1]")
        if np.any((xp == 0) & (a_col < 1)):
            raise DomainError(f"{qual}: x_i must be > 0 where alpha_i < 1")
        if np.any(np.abs(np.sum(xp, axis=0) - 1) > 1e-9):
            raise DomainError(f"{qual}: the components of x must sum to 1 (the simplex)")
        sp = _sp
        alpha_col = reshape(alpha, (kdim,) + (1,) * (x.ndim - 1))
        log_b = _sum(sp.gammaln(alpha)) - sp.gammaln(_sum(alpha))
        out = _sum(sp.xlogy(alpha_col - 1, x), axis=0) - log_b
        return squeeze(out) if out.ndim else out       # SciPy's _squeeze_output

    def pdf(self, x: ArrayLike, alpha: ArrayLike) -> Tensor:
        return exp(self.logpdf(x, alpha))

    def entropy(self, alpha: ArrayLike) -> Tensor:
        """log B(α) + (α₀ − K) ψ(α₀) − Σ (α_i − 1) ψ(α_i), α₀ = Σ α_i (SciPy's formula);
        DomainError for alpha <= 0 as in logpdf."""
        qual = "tf.stats.dirichlet.entropy"
        (alpha,), _ = _floats(qual, [alpha])
        ap = alpha._data
        if ap.ndim != 1:
            raise ShapeError(f"{qual}: alpha must be one-dimensional, got shape {ap.shape}")
        if not np.all(ap > 0):
            raise DomainError(f"{qual}: every alpha must be > 0, got {ap}")
        sp = _sp
        total = _sum(alpha)
        log_b = _sum(sp.gammaln(alpha)) - sp.gammaln(total)
        out: Tensor = (log_b + (total - ap.shape[0]) * sp.digamma(total)
                       - _sum((alpha - 1) * sp.digamma(alpha)))
        return out


multivariate_normal = _MultivariateNormal()
dirichlet = _Dirichlet()

if TYPE_CHECKING:
    _Distribution: TypeAlias = _Univariate | _MultivariateNormal | _Dirichlet
