"""SciPy's special functions (``scipy.special``) with reverse, forward and second-order
derivatives.

``tf.special.<name>`` computes what ``scipy.special.<name>`` computes (SciPy evaluates the
values) and records an op whose derivative rules are written with tenferro's ops, so
every rule is differentiable again. SciPy's special functions are NumPy ufuncs: on a
Tensor, ``scipy.special.gammaln(t)`` dispatches here through ``Tensor.__array_ufunc__``
(and under ``SCIPY_ARRAY_API=1`` SciPy finds ``tenferro.special`` as the tensor
namespace's ``special`` module itself). ``polygamma``, ``multigammaln``, ``logsumexp``,
``softmax`` and ``log_softmax`` are Python functions in SciPy that call ``np.asarray``:
call ``tf.special.<name>`` (or use SciPy's array-API mode) for a derivative.

Derivatives (x̄ = ȳ·conj(f'(x)) for the holomorphic complex functions, as everywhere in
tenferro; DLMF chapter numbers in brackets):

* gammaln, loggamma: ψ(x); gamma: Γ(x)ψ(x); digamma (psi): ψ₁(x); polygamma(n, x):
  ψ⁽ⁿ⁺¹⁾(x) [5.15]; betaln(a, b): ψ(a) − ψ(a+b), ψ(b) − ψ(a+b); beta: B·(same);
  multigammaln(a, d) = d(d−1)/4·log π + Σⱼ gammaln(a − (j−1)/2) [35.3.4].
* erf: 2/√π·e^(−x²); erfc: −2/√π·e^(−x²); erfcx: 2x·erfcx(x) − 2/√π; erfinv:
  √π/2·e^(y²); erfcinv: −√π/2·e^(y²) [7.10]; ndtr: φ(x); ndtri: 1/φ(y);
  log_ndtr: φ(x)/Φ(x) = √(2/π)/erfcx(−x/√2) (no overflow or cancellation for x → −∞).
* expit: expit(x)·expit(−x); logit: 1/(p(1−p)); log_expit: expit(−x);
  softplus: expit(x).
* xlogy(x, y): log y, x/y; xlog1py: log1p y, x/(1+y); entr: −log x − 1; rel_entr:
  log(x/y) + 1, −x/y; kl_div: log(x/y), 1 − x/y; huber(δ, r): clip(r, −δ, δ) and
  |r| − δ outside [−δ, δ]; pseudo_huber(δ, r) with h = hypot(δ, r): rδ/h and r⁴/((h+δ)²h).
* i0: i1; i1: i0 − i1/x (½ at 0); i0e: i1e − sign(x)·i0e; i1e: i0e − i1e/x − sign(x)·i1e
  [10.29]; sinc: (cos πx − sinc x)/x (a Taylor polynomial near 0); spence: log z/(1 − z)
  (a Taylor polynomial near 1) [25.12].
* zeta(x, q): ∂q = −x·zeta(x+1, q) [25.11.17]; gammainc(a, x): ∂x = e^(−x)x^(a−1)/Γ(a),
  gammaincc: its negative [8.8.13]; betainc(a, b, x): ∂x = x^(a−1)(1−x)^(b−1)/B(a, b),
  betaincc its negative; stdtr(df, t): ∂t = Student's t density.
* logsumexp: softmax weights (with ``b``: b·e^(a−lse)); softmax, log_softmax: their
  compositions with logsumexp.

Not differentiated (an input carrying a derivative raises :class:`UnsupportedADError`
naming the argument, at the call; the same call without the derivative works): the order
``n`` of polygamma (an integer), zeta's ``x`` (no closed form), the shape ``a`` of
gammainc/gammaincc, ``a`` and ``b`` of betainc/betaincc and ``df`` of stdtr (they need
series in the shape parameter).

Boundaries: a finite one-sided limit is the derivative where the function stops there
(i1'(0) = ½, d xlogy/dy = 0 at x = 0, d entr/dx = +inf at 0, d rel_entr/dy = 0 at x = 0,
d log_ndtr/dx ≈ −x at x = −40, d erfinv/dx = inf at ±1); constant values outside a domain
(entr(x < 0) = −inf, rel_entr/kl_div = inf, huber(δ < 0) = inf) have derivative 0; NaN
values (outside the domain, as SciPy) have NaN derivatives.

Complex inputs: where SciPy has a complex version (gamma, loggamma, digamma, erf, erfc,
erfcx, ndtr, log_ndtr, xlogy, xlog1py, spence, sinc, logsumexp, softmax, log_softmax,
zeta(x) without q, values only), and polygamma(n, z), SciPy's real function continued to
complex z by the recurrence ψ⁽ⁿ⁾(z) = ψ⁽ⁿ⁾(z+1) + (−1)ⁿ⁺¹n!/zⁿ⁺¹ with the asymptotic series
[5.15.8], and the reflection formula [5.15.6] far left (it is the derivative of the complex
digamma). Other functions raise
:class:`DTypeError` for complex input. Integer and bool inputs become float64.
"""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike

import math

import numpy as np
import scipy.special as _sc
from scipy.special import _ufuncs as _u

from ._engine import apply1
from ._errors import DTypeError, UnsupportedADError
from ._tensor import Tensor, _tracked
from ._ops.registry import FUNCTIONS, defop, register
from ._ops._util import broadcast_shape, conj, floating, operands, payload, to_tensor, \
    unbroadcast
from ._ops.elementwise import logaddexp as _logaddexp
from ._ops.reductions import logsumexp as _lse

__all__ = [
    "gammaln", "gamma", "loggamma", "digamma", "psi", "polygamma", "multigammaln",
    "betaln", "beta", "erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtr", "ndtri",
    "log_ndtr", "expit", "logit", "log_expit", "xlogy", "xlog1py", "entr", "rel_entr",
    "kl_div", "huber", "pseudo_huber", "i0", "i0e", "i1", "i1e", "sinc", "zeta",
    "gammainc", "gammaincc", "betainc", "betaincc", "stdtr", "spence", "softplus",
    "logsumexp", "softmax", "log_softmax",
]

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT2 = 1 / math.sqrt(2)
_TWO_OVER_SQRT_PI = 2 / _SQRT_PI
_LOG_PI = math.log(math.pi)


# ---- helpers ---------------------------------------------------------------------------

def _arr(out):
    return out if type(out) is np.ndarray else np.asarray(out)


def _ap(f, *args):
    """``f`` applied inside a rule: the recorded tenferro op when an argument is a Tensor
    (create_graph: the rule is differentiated again), NumPy/SciPy on ndarrays."""
    for a in args:
        if isinstance(a, Tensor):
            return f(*args)
    return f._np(*args)


def _mask(x):
    return payload(x)


def _where(cond, a, b):
    """np.where, also when a or b is a Tensor (then tf.where: differentiable branches)."""
    return np.where(cond, a, b)


def _quiet(rule):
    """Run a rule with NumPy's floating-point warnings off: log 0, 0/0 in a discarded
    branch of a where are expected."""
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return rule(*args)
    return wrapped


def _check_complex(name, ok, *tensors):
    if ok:
        return
    for t in tensors:
        if t._data.dtype.kind == "c":
            hint = " (use tf.special.loggamma for complex log-gamma)" if name == "gammaln" \
                else ""
            raise DTypeError(f"tf.special.{name} is defined for real tensors only, as in "
                             f"scipy.special, got {t._data.dtype}{hint}")


def _no_derivative(name, argname, t, why):
    if isinstance(t, Tensor) and _tracked(t):
        raise UnsupportedADError(
            f"tf.special.{name}: no derivative in {argname!r} ({why}); pass it without "
            f"requires_grad (e.g. .detach()) to differentiate in the other arguments")


def _cast(out, dtype):
    out = _arr(out)
    return out if out.dtype == dtype else out.astype(dtype)


def _result_dtype(*tensors):
    return np.result_type(*(t._data.dtype for t in tensors))


def _weak_floats(args):
    """The arguments as floating Tensors; Python numbers take the arrays' precision
    (NumPy 2's weak scalars: betainc(1.5, 2.5, float32 x) stays float32)."""
    arrays = [floating(to_tensor(v)) for v in args if type(v) not in (bool, int, float)]
    dt = np.result_type(*(t._data.dtype for t in arrays)) if arrays else np.float64
    return [Tensor._wrap(np.asarray(v, dtype=dt)) if type(v) in (bool, int, float)
            else floating(to_tensor(v)) for v in args]


def _bcast(t, shape):
    return t if t.shape == shape else np.broadcast_to(t, shape)


def _unary(name, ufunc, deriv, *, complex_ok=False, primal=None, quiet=False, doc=""
           ) -> Callable[[ArrayLike], Tensor]:
    """y = ufunc(x) with f'(x) = deriv(x, y); holomorphic for complex x. ``quiet``: the
    rule runs with NumPy's warnings off (boundary values: 1/0, exp overflow), which costs
    ~2 µs per call, so functions whose rules are warning-free go without."""
    compute = ufunc if primal is None else primal

    def vjp(ctx, needs, gs, xs, ys):
        return (gs[0] * conj(deriv(xs[0], ys[0])),)

    def jvp(ctx, ts, xs, ys):
        return (ts[0] * deriv(xs[0], ys[0]),)

    if quiet:
        vjp, jvp = _quiet(vjp), _quiet(jvp)

    op = defop("special." + name, vjp, jvp, complex=complex_ok, doc=doc)

    def f(x, /):
        x = floating(to_tensor(x))
        _check_complex(name, complex_ok, x)
        d = x._data
        return apply1(op, (x,), _cast(compute(d), d.dtype))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``scipy.special.{name}``, differentiable: {doc}"
    f._np = lambda x: _arr(compute(x))
    ufuncs = [ufunc] if isinstance(ufunc, np.ufunc) else []
    pub = getattr(_sc, name, None)
    if isinstance(pub, np.ufunc) and pub not in ufuncs:
        ufuncs.append(pub)
    register(f, ufuncs=tuple(ufuncs))
    return f


def _promote(a, b, dt):
    if a.dtype != dt:
        a = a.astype(dt)
    if b.dtype != dt:
        b = b.astype(dt)
    return a, b


def _binary(name, ufunc, derivs, *, complex_ok=False, nondiff=None, primal=None, doc="",
            argnames=("x", "y")) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    """y = ufunc(a, b) broadcasting; derivs(a, b, y, needs) -> (∂y/∂a, ∂y/∂b) (None where
    not needed). ``nondiff``: {index: reason} of arguments without a derivative."""
    compute = ufunc if primal is None else primal

    @_quiet
    def vjp(ctx, needs, gs, xs, ys):
        g, y = gs[0], ys[0]
        a, b = _promote(xs[0], xs[1], y.dtype)
        da, db = derivs(a, b, y, needs)
        return (unbroadcast(g * conj(da), xs[0].shape) if needs[0] else None,
                unbroadcast(g * conj(db), xs[1].shape) if needs[1] else None)

    @_quiet
    def jvp(ctx, ts, xs, ys):
        y = ys[0]
        a, b = _promote(xs[0], xs[1], y.dtype)
        need = (ts[0] is not None, ts[1] is not None)
        da, db = derivs(a, b, y, need)
        out = None if ts[0] is None else ts[0] * da
        if ts[1] is not None:
            out = ts[1] * db if out is None else out + ts[1] * db
        return (_bcast(out, y.shape),)

    op = defop("special." + name, vjp, jvp, complex=complex_ok, doc=doc)

    def f(x1, x2, /):
        a, b = operands(x1, x2)
        a, b = floating(a), floating(b)
        _check_complex(name, complex_ok, a, b)
        for i, why in (nondiff or {}).items():
            _no_derivative(name, argnames[i], (a, b)[i], why)
        broadcast_shape(name, a.shape, b.shape)
        dt = _result_dtype(a, b)
        return apply1(op, (a, b), _cast(compute(a._data, b._data), dt))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``scipy.special.{name}({', '.join(argnames)})``, differentiable: {doc}"
    f._np = lambda a, b: _arr(compute(a, b))
    ufuncs = [ufunc] if isinstance(ufunc, np.ufunc) else []
    pub = getattr(_sc, name, None)
    if isinstance(pub, np.ufunc) and pub not in ufuncs:
        ufuncs.append(pub)
    register(f, ufuncs=tuple(ufuncs))
    return f


# ---- gamma family ----------------------------------------------------------------------

# Bernoulli numbers B_2, B_4, ..., B_20 of the asymptotic series of ψ⁽ⁿ⁾ (DLMF 5.15.8)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)


_REFLECT_BELOW = -100.0


def _polygamma_complex_n(n, z):
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


def _cot_derivative(n, z):
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
    return p(c)


def _polygamma_complex_shifted(n, z):
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
    return sign * (series + fact(n) * acc)


def _polygamma_np(n, x):
    n = np.asarray(n)
    x = np.asarray(x)
    if x.dtype.kind != "c":
        with np.errstate(all="ignore"):
            out = _arr(_sc.polygamma(n, x))
        return out.astype(np.result_type(x.dtype, np.float32), copy=False)
    nb, zb = np.broadcast_arrays(n, x)
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
    return out.astype(x.dtype, copy=False)


gammaln = _unary("gammaln", _u.gammaln, lambda x, y: _ap(digamma, x),
                 doc="d/dx = digamma(x)")


def _loggamma_deriv(x, y):
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
    nt = to_tensor(n)
    _no_derivative("polygamma", "n", nt, "n is an integer order")
    x = floating(to_tensor(x))
    nd = nt._data
    broadcast_shape("polygamma", nd.shape, x.shape)
    out = _polygamma_np(nd, x._data)
    return apply1(_polygamma_op, (Tensor._wrap(nd), x), _cast(out, x._data.dtype))


polygamma._np = _polygamma_np


def multigammaln(a: ArrayLike, d: int) -> Tensor:
    """``scipy.special.multigammaln(a, d)``: log of the multivariate gamma function
    Γ_d(a) = π^(d(d−1)/4) Πⱼ Γ(a − (j−1)/2) (DLMF 35.3.4), a composition of gammaln, so
    differentiable in ``a`` at every order; ``d`` a positive integer. As SciPy, raises
    ValueError unless a > (d − 1)/2 everywhere."""
    dd = np.asarray(payload(d) if isinstance(d, Tensor) else d)[()]
    if not np.isscalar(dd) or np.floor(dd) != dd or dd < 1:
        raise ValueError("d should be a positive integer (dimension)")
    dd = int(dd)
    a = floating(to_tensor(a))
    _check_complex("multigammaln", False, a)
    if np.any(a._data <= 0.5 * (dd - 1)):
        raise ValueError(f"condition a ({a._data}) > 0.5 * (d-1) ({0.5 * (dd - 1)}) not met")
    res = gammaln(a)
    for j in range(2, dd + 1):
        res = res + gammaln(a - 0.5 * (j - 1))
    return res + dd * (dd - 1) * 0.25 * _LOG_PI


def _betaln_derivs(a, b, y, needs):
    s = _ap(digamma, a + b)
    return (_ap(digamma, a) - s if needs[0] else None,
            _ap(digamma, b) - s if needs[1] else None)


def _beta_derivs(a, b, y, needs):
    da, db = _betaln_derivs(a, b, y, needs)
    return (None if da is None else y * da, None if db is None else y * db)


betaln = _binary("betaln", _u.betaln, _betaln_derivs, argnames=("a", "b"),
                 doc="∂a = ψ(a) − ψ(a+b), ∂b = ψ(b) − ψ(a+b)")
beta = _binary("beta", _u.beta, _beta_derivs, argnames=("a", "b"),
               doc="∂a = B(a, b)(ψ(a) − ψ(a+b)), ∂b likewise")


# ---- error function and normal distribution ---------------------------------------------

def _gauss(x):
    return np.exp(-(x * x))


erf = _unary("erf", _u.erf, lambda x, y: _TWO_OVER_SQRT_PI * _gauss(x), complex_ok=True,
             doc="d/dx = 2/√π·exp(−x²)")
erfc = _unary("erfc", _u.erfc, lambda x, y: -_TWO_OVER_SQRT_PI * _gauss(x),
              complex_ok=True, doc="d/dx = −2/√π·exp(−x²)")
# For large x, 2x·erfcx(x) − 2/√π cancels (both ≈ 2/√π): there the asymptotic series
# erfcx'(x) = 2/√π·Σ_{n≥1} (−1)ⁿ(2n−1)!!/(2x²)ⁿ (DLMF 7.12.1), 7 terms exact for x >= 50
_ERFCX_LARGE = 50.0
_ERFCX_SERIES = tuple((-1) ** n * math.prod(range(1, 2 * n, 2)) for n in range(1, 8))


def _erfcx_deriv(x, y):
    big = np.real(_mask(x)) >= _ERFCX_LARGE
    if x.dtype.kind == "c" or not big.any():
        return 2 * (x * y) - _TWO_OVER_SQRT_PI
    xs = _where(big, x, _ERFCX_LARGE)
    t = 1 / (2 * (xs * xs))
    poly = _ERFCX_SERIES[-1]
    for c in reversed(_ERFCX_SERIES[:-1]):
        poly = poly * t + c
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
def _log_ndtr_deriv(x, y):
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


# ---- logistic ---------------------------------------------------------------------------

expit = _unary("expit", _u.expit, lambda x, y: y * _ap(expit, -x),
               doc="d/dx = expit(x)·expit(−x) (exact in both tails)")
logit = _unary("logit", _u.logit, lambda x, y: 1 / (x * (1 - x)),
               quiet=True, doc="d/dp = 1/(p(1 − p))")
log_expit = _unary("log_expit", _u.log_expit, lambda x, y: _ap(expit, -x),
                   doc="d/dx = expit(−x)")


def softplus(x: ArrayLike, **kwargs: Any) -> Tensor:
    """``scipy.special.softplus(x)`` = log(1 + eˣ) = logaddexp(0, x); d/dx = expit(x).
    (``scipy.special.softplus`` itself calls ``np.logaddexp``, which dispatches to
    tenferro on tensors.)"""
    if kwargs:
        raise TypeError("tf.special.softplus takes no ufunc keywords (out=, where=, ...)")
    x = floating(to_tensor(x))
    _check_complex("softplus", False, x)
    return _logaddexp(np.zeros((), x._data.dtype), x)


# ---- information theory -------------------------------------------------------------------

def _xlogy_derivs(x, y, out, needs):
    dx = np.log(y) if needs[0] else None
    dy = None
    if needs[1]:
        # x·log y is 0 for every y at x = 0: ∂y = x/y = 0 there, also at y = 0 (not 0/0;
        # the safe denominator keeps x/y's own derivative 1/y in x wherever y != 0)
        both = (_mask(x) == 0) & (_mask(y) == 0)
        dy = x / _where(both, 1, y) if both.any() else x / y
    return dx, dy


def _xlog1py_derivs(x, y, out, needs):
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


def _entr_deriv(x, y):
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


def _kl_parts(x, y):
    xp, yp = _mask(x), _mask(y)
    inside = (xp > 0) & (yp > 0)
    xzero = (xp == 0) & (yp >= 0)
    nan = np.isnan(xp) | np.isnan(yp)
    xs, ys = _where(inside, x, 1), _where(inside, y, 1)
    return xp, yp, inside, xzero, nan, xs, ys


def _rel_entr_like(kl):
    def derivs(x, y, out, needs):
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


def _huber_derivs(delta, r, out, needs):
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


def _pseudo_huber_derivs(delta, r, out, needs):
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


# ---- modified Bessel functions ----------------------------------------------------------

def _over_x(x, y):
    """y/x with the limit ½ of i1(x)/x (and of i1e(x)/x) at x = 0."""
    zero = _mask(x) == 0
    if not zero.any():
        return y / x
    return _where(zero, 0.5, y / _where(zero, 1, x))


def _i1_deriv(x, y):
    zero = _mask(x) == 0
    d = _ap(i0, x) - _over_x(x, y)
    return _where(zero, 0.5, d) if zero.any() else d


def _i1e_deriv(x, y):
    zero = _mask(x) == 0
    d = _ap(i0e, x) - _over_x(x, y) - np.sign(_mask(x)) * y
    return _where(zero, 0.5, d) if zero.any() else d


i0 = _unary("i0", _u.i0, lambda x, y: _ap(i1, x), doc="d/dx = i1(x)")
i0e = _unary("i0e", _u.i0e, lambda x, y: _ap(i1e, x) - np.sign(_mask(x)) * y,
             doc="d/dx = i1e(x) − sign(x)·i0e(x)")
i1 = _unary("i1", _u.i1, _i1_deriv, doc="d/dx = i0(x) − i1(x)/x (½ at 0)")
i1e = _unary("i1e", _u.i1e, _i1e_deriv,
             doc="d/dx = i0e(x) − i1e(x)/x − sign(x)·i1e(x) (½ at 0)")


# ---- sinc, spence --------------------------------------------------------------------------

# sinc'(x) = Σ_{k≥1} (−1)ᵏ 2k π²ᵏ x²ᵏ⁻¹/(2k+1)!: for |x| < 0.1 eight terms are exact to
# rounding, where (cos πx − sinc x)/x loses digits to cancellation
_SINC_TAYLOR = tuple((-1) ** k * 2 * k * math.pi ** (2 * k) / math.factorial(2 * k + 1)
                     for k in range(1, 9))
_SINC_SMALL = 0.1


def _sinc_deriv(x, y):
    small = np.abs(_mask(x)) < _SINC_SMALL
    xs = _where(small, 1, x) if small.any() else x
    px = math.pi * xs
    far = (np.cos(px) - _where(small, 1, y) if small.any() else np.cos(px) - y) / xs
    if not small.any():
        return far
    x2 = x * x
    poly = _SINC_TAYLOR[-1]
    for c in reversed(_SINC_TAYLOR[:-1]):
        poly = poly * x2 + c
    return _where(small, poly * x, far)


sinc = _unary("sinc", np.sinc, _sinc_deriv, complex_ok=True,
              doc="normalized sin(πx)/(πx) as numpy.sinc; d/dx = (cos πx − sinc x)/x")
if np.sinc not in FUNCTIONS:   # numpy.sinc(t) may have its tenferro version already (_numpy)
    register(sinc, functions=(np.sinc,))

# spence'(z) = log z/(1 − z) = −Σ_{k≥0} (−ε)ᵏ/(k+1) with ε = z − 1: the series near z = 1
_SPENCE_TERMS = 14
_SPENCE_SMALL = 0.05


def _spence_deriv(z, y):
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


# ---- zeta and incomplete gamma/beta -------------------------------------------------------

_zeta_op = defop(
    "special.zeta",
    _quiet(lambda ctx, needs, gs, xs, ys: (
        None, unbroadcast(gs[0] * (-xs[0] * _ap(zeta, xs[0] + 1, xs[1])), xs[1].shape))),
    _quiet(lambda ctx, ts, xs, ys: (
        _bcast(ts[1] * (-xs[0] * _ap(zeta, xs[0] + 1, xs[1])), ys[0].shape),)),
    complex=False, doc="Hurwitz zeta(x, q): ∂q = −x·zeta(x+1, q); no derivative in x")


def _zeta_np(x, q=None):
    if q is None:
        return _arr(_u._riemann_zeta(x))
    return _arr(_u._zeta(x, q))


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Tensor:
    """``scipy.special.zeta(x, q=None)``: the Hurwitz zeta function Σₖ (k + q)⁻ˣ (DLMF
    25.11.1), Riemann's zeta without q. ∂q = −x·zeta(x+1, q) (25.11.17); the derivative in
    x has no closed form: UnsupportedADError when x carries one. Complex x (values only)
    without q, as SciPy."""
    if q is None:
        x = floating(to_tensor(x))
    else:
        x, q = _weak_floats((x, q))
    _no_derivative("zeta", "x", x, "the derivative in the exponent has no closed form")
    if q is None:
        return Tensor._wrap(_cast(_u._riemann_zeta(x._data), x._data.dtype))
    _check_complex("zeta", False, x, q)
    broadcast_shape("zeta", x.shape, q.shape)
    dt = _result_dtype(x, q)
    return apply1(_zeta_op, (x, q), _cast(_u._zeta(x._data, q._data), dt))


zeta._np = _zeta_np
register(zeta, ufuncs=(_u._zeta,))


def _riemann_ufunc(x, **kwargs):
    return zeta(x)


register(_riemann_ufunc, ufuncs=(_u._riemann_zeta,))


def _gammainc_dx(a, x):
    """e^(−x) x^(a−1)/Γ(a), the gamma density (DLMF 8.8.13), in logs: finite for large a."""
    return np.exp(_ap(xlogy, a - 1, x) - x - _ap(gammaln, a))


_SHAPE_WHY = "the derivative in the shape parameter needs a series that is not implemented"

gammainc = _binary("gammainc", _u.gammainc,
                   lambda a, x, y, needs: (None, _gammainc_dx(a, x)),
                   nondiff={0: _SHAPE_WHY}, argnames=("a", "x"),
                   doc="regularized lower P(a, x): ∂x = e^(−x)x^(a−1)/Γ(a)")
gammaincc = _binary("gammaincc", _u.gammaincc,
                    lambda a, x, y, needs: (None, -_gammainc_dx(a, x)),
                    nondiff={0: _SHAPE_WHY}, argnames=("a", "x"),
                    doc="regularized upper Q(a, x): ∂x = −e^(−x)x^(a−1)/Γ(a)")


def _ternary_x(name, ufunc, dx, argnames, why, doc
               ) -> Callable[[ArrayLike, ArrayLike, ArrayLike], Tensor]:
    """y = ufunc(p1, p2, x), differentiated in the last argument only."""
    @_quiet
    def vjp(ctx, needs, gs, xs, ys):
        y = ys[0]
        a, b, x = (v if v.dtype == y.dtype else v.astype(y.dtype) for v in xs)
        return (None, None, unbroadcast(gs[0] * dx(a, b, x), xs[2].shape))

    @_quiet
    def jvp(ctx, ts, xs, ys):
        y = ys[0]
        a, b, x = (v if v.dtype == y.dtype else v.astype(y.dtype) for v in xs)
        return (_bcast(ts[2] * dx(a, b, x), y.shape),)

    op = defop("special." + name, vjp, jvp, complex=False, doc=doc)

    def f(*args):
        if len(args) != len(argnames):
            raise TypeError(f"tf.special.{name} takes {len(argnames)} arguments "
                            f"({', '.join(argnames)}), got {len(args)}")
        ts = _weak_floats(args)
        _check_complex(name, False, *ts)
        for nm, t in zip(argnames[:-1], ts[:-1]):
            _no_derivative(name, nm, t, why)
        broadcast_shape(name, *(t.shape for t in ts))
        dt = _result_dtype(*ts)
        return apply1(op, tuple(ts), _cast(ufunc(*(t._data for t in ts)), dt))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``scipy.special.{name}({', '.join(argnames)})``, differentiable: {doc}"
    register(f, ufuncs=tuple(u for u in {ufunc, getattr(_sc, name, None)}
                             if isinstance(u, np.ufunc)))
    return f


def _beta_density(a, b, x):
    return np.exp(_ap(xlogy, a - 1, x) + _ap(xlog1py, b - 1, -x) - _ap(betaln, a, b))


betainc = _ternary_x("betainc", _u.betainc, _beta_density, ("a", "b", "x"), _SHAPE_WHY,
                     "regularized I_x(a, b): ∂x = x^(a−1)(1−x)^(b−1)/B(a, b)")
betaincc = _ternary_x("betaincc", _u.betaincc, lambda a, b, x: -_beta_density(a, b, x),
                      ("a", "b", "x"), _SHAPE_WHY,
                      "1 − I_x(a, b): ∂x = −x^(a−1)(1−x)^(b−1)/B(a, b)")


def _stdtr_dt(df, t, y, needs):
    # Student's t density Γ((ν+1)/2)/(√(νπ)Γ(ν/2))·(1 + t²/ν)^(−(ν+1)/2); ν = inf: φ(t)
    big = np.isinf(_mask(df))
    nu = _where(big, 1, df) if big.any() else df
    log_c = (_ap(gammaln, 0.5 * (nu + 1)) - _ap(gammaln, 0.5 * nu)
             - 0.5 * (np.log(nu) + _LOG_PI))
    dens = np.exp(log_c - 0.5 * (nu + 1) * np.log1p(t * t / nu))
    if big.any():
        dens = _where(big, np.exp(-0.5 * (t * t)) * (1 / _SQRT_2PI), dens)
    return None, dens


stdtr = _binary("stdtr", _u.stdtr, _stdtr_dt, nondiff={0: _SHAPE_WHY}, argnames=("df", "t"),
                doc="Student's t cdf: ∂t = the t density (φ(t) for df = inf)")


# ---- logsumexp, softmax, log_softmax ------------------------------------------------------

def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False) -> Any:
    """``scipy.special.logsumexp``: log Σ b·exp(a) over ``axis`` (all axes for None),
    computed stably. Without ``b`` it is tenferro's logsumexp op (gradient: the softmax
    weights); with ``b`` a composition log|Σ b·e^(a−m)| + m (m = the largest a with
    b != 0, not differentiated: a shift the result does not depend on), differentiable in
    a and b. ``return_sign=True`` returns (log|s|, sign(s)) (for complex input the sign is
    the unit phase); otherwise a negative sum gives NaN, as SciPy."""
    a = floating(to_tensor(a))
    if b is None:
        out = _lse(a, axis=axis, keepdims=keepdims)
        if not return_sign:
            return out
        if out.dtype.kind == "c":
            from ._ops.elementwise import exp, imag, real
            return real(out), exp(1j * imag(out))
        return out, Tensor._wrap(np.where(np.isnan(out._data), np.nan,
                                          np.ones_like(out._data)))
    from ._ops.elementwise import abs as _abs, exp, log, real, sign, where
    from ._ops.reductions import sum as _sum
    b = floating(to_tensor(b))
    dt = _result_dtype(a, b)      # as SciPy: a float32 a with a float64 b sums in float64
    a, b = (a if a.dtype == dt else a.astype(dt)), (b if b.dtype == dt else b.astype(dt))
    shape = broadcast_shape("logsumexp", a.shape, b.shape)
    if a.shape != shape:
        a = a + np.zeros(shape, a._data.dtype)
    if b.shape != shape:
        b = b + np.zeros(shape, b._data.dtype)
    axes = _axes(axis, len(shape))
    bp = b._data
    keep = bp != 0
    ap = a._data.real if a._data.dtype.kind == "c" else a._data
    with np.errstate(all="ignore"):
        m = np.max(np.where(keep, ap, -np.inf), axis=axes, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0)
    a_safe = where(keep, a, -np.inf) if not keep.all() else a
    with np.errstate(all="ignore"):
        s = _sum(b * exp(a_safe - m), axis=axes, keepdims=True)
        mag = _abs(s)
        out = log(mag) + m
    if return_sign:
        if s.dtype.kind == "c":
            sgn = s / where(mag._data == 0, 1, mag)
        else:
            sgn = sign(s)
    else:
        if s.dtype.kind == "c":
            out = log(s) + m
        else:
            neg = s._data < 0
            if neg.any():
                out = where(neg, np.nan, out)
    if not keepdims:
        out = out.reshape(tuple(n for i, n in enumerate(shape) if i not in axes))
        if return_sign:
            sgn = sgn.reshape(out.shape)
    if return_sign:
        if out.dtype.kind == "c":
            out = real(out)
        return out, sgn
    return out


def _shifted(x, axis):
    """x − max(x) over ``axis`` (the max is a constant shift, as in SciPy: NumPy's max,
    lexicographic for complex x; 0 where it is not finite)."""
    d = x._data
    axes = _axes(axis, d.ndim)
    if d.size == 0:
        return x, axes
    m = np.max(d, axis=axes, keepdims=True)
    fin = np.isfinite(m)
    if not fin.all():
        m = np.where(fin, m, 0)
    return x - m, axes


def softmax(x: ArrayLike, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``scipy.special.softmax(x, axis=None)``: exp(x − m)/Σ exp(x − m) with m = max x
    (all entries for axis None), SciPy's formula as a composition of differentiable ops:
    the Jacobian diag(p) − p pᵀ at every order."""
    from ._ops.elementwise import exp
    from ._ops.reductions import sum as _sum
    t, axes = _shifted(floating(to_tensor(x)), axis)
    e = exp(t)
    return e / _sum(e, axis=axes, keepdims=True)


def log_softmax(x: ArrayLike, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``scipy.special.log_softmax(x, axis=None)``: (x − m) − log Σ exp(x − m) with
    m = max x, SciPy's formula (for complex x the same branch of the log as SciPy)."""
    from ._ops.elementwise import exp, log
    from ._ops.reductions import sum as _sum
    t, axes = _shifted(floating(to_tensor(x)), axis)
    with np.errstate(divide="ignore"):
        return t - log(_sum(exp(t), axis=axes, keepdims=True))
