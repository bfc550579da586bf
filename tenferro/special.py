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
* The shape parameters: ∂a of gammainc/gammaincc, ∂a and ∂b of betainc/betaincc, ∂df of
  stdtr, first and second order (∂², and mixed with x, b, t), summed in float64 from the
  series and continued fractions of the functions differentiated term by term [8.7.1,
  8.9.2, 8.17.8, 8.17.22] (Moore 1982, AS 187; Boik & Robison-Cox 1998), each for the
  smaller of the function and its complement so that nothing cancels; stdtr's ∂df from
  the series of I_(t²/(df+t²))(½, df/2) differentiated in df as a whole (no cancellation
  as df grows). Relative accuracy ~1e-12 against mpmath for shapes up to ~1e3 (errors
  grow like 1e-16·a from the prefactor's log Γ(a); stdtr's far tails at df >= 1e4:
  ~1e-17·df²/t²). The derivative of the second derivative in the shape parameter (the
  third order) raises UnsupportedADError; any order in x works. An entry whose series
  does not converge within _SHAPE_MAX_TERMS terms (shapes beyond ~1e6) gets NaN.
* rgamma: −ψ(x)/Γ(x), left of ½ Γ(1−x)(cos πx − ψ(1−x)sin(πx)/π) (reflection [5.5.3]:
  smooth through the poles of Γ); poch(z, m): (z)ₘ(ψ(z+m) − ψ(z)), (z)ₘψ(z+m).
* cbrt: 1/(3y²); exp2, exp10: y·log 2, y·log 10; cosm1: −sin x; exprel:
  y(1 − 1/x) + 1/x (a Taylor polynomial near 0); sindg, cosdg: ±π/180·cosdg, sindg;
  tandg, cotdg: ±π/180·(1 + y²); radian(d, m, s): π/180·(1, 1/60, 1/3600).
* exp1: −e^(−z)/z; expi: e^z/z [6.2]; expn(n, x): −Eₙ₋₁(x) [8.19.13] (E₋₁ in closed
  form; n not differentiated).
* j0: −j1; j1: j0 − j1/x (½ at 0) [10.6]; y0: −y1; y1: y0 − y1/x; k0: −k1; k1:
  −k0 − k1/x [10.29]; k0e: k0e − k1e; k1e: k1e − k0e − k1e/x.
* boxcox(x, λ): x^(λ−1), (x^λ log x − y)/λ; boxcox1p with 1 + x; inv_boxcox(y, λ):
  x/(1 + λy), x(y/(λ(1 + λy)) − log1p(λy)/λ²); inv_boxcox1p likewise (series in λ near
  λ = 0, where these cancel).
* logsumexp: softmax weights (with ``b``: b·e^(a−lse)); softmax, log_softmax: their
  compositions with logsumexp.

Not differentiated (an input carrying a derivative raises :class:`UnsupportedADError`
naming the argument, at the call; the same call without the derivative works): the order
``n`` of polygamma (an integer) and zeta's ``x`` (no closed form).

Boundaries: a finite one-sided limit is the derivative where the function stops there
(i1'(0) = ½, d xlogy/dy = 0 at x = 0, d entr/dx = +inf at 0, d rel_entr/dy = 0 at x = 0,
d log_ndtr/dx ≈ −x at x = −40, d erfinv/dx = inf at ±1); constant values outside a domain
(entr(x < 0) = −inf, rel_entr/kl_div = inf, huber(δ < 0) = inf) have derivative 0; NaN
values (outside the domain, as SciPy) have NaN derivatives.

Complex inputs: where SciPy has a complex version (gamma, loggamma, digamma, rgamma, erf,
erfc, erfcx, ndtr, log_ndtr, xlogy, xlog1py, spence, sinc, exp1, expi, logsumexp, softmax,
log_softmax, zeta(x) without q, values only), and polygamma(n, z), SciPy's real function
continued to
complex z by the recurrence ψ⁽ⁿ⁾(z) = ψ⁽ⁿ⁾(z+1) + (−1)ⁿ⁺¹n!/zⁿ⁺¹ with the asymptotic series
[5.15.8], and the reflection formula [5.15.6] far left (it is the derivative of the complex
digamma). Other functions raise
:class:`DTypeError` for complex input.

Promotion: NumPy 2's, by ``_dtypes.float_result_type`` (shared with tf.stats and the
elementwise ops): integer and bool inputs alone become float64; mixed with floating
tensors they take NumPy 2's dtype (an int64 tensor with a float32 one: float64, computed
in float64; int16 with float32: float32); Python numbers are weak.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Sequence, TypeAlias, overload

from numpy.typing import ArrayLike, DTypeLike, NDArray

import math

import numpy as np
import scipy.special as _sc
from scipy.special import _ufuncs as _u

from ._engine import apply1
from ._errors import DTypeError, ShapeError, UnsupportedADError
from ._rule_api import is_tracked
from ._tensor import Tensor
from ._ops.registry import FUNCTIONS, Op, defop, register
from ._dtypes import float_result_type
from ._ops._util import broadcast_shape, conj, floating, floating_args, operands, payload, \
    to_tensor, unbroadcast
from ._ops.elementwise import (abs as _tf_abs, exp as _tf_exp, imag as _tf_imag,
                                log as _tf_log, logaddexp as _logaddexp, real as _tf_real,
                                sign as _tf_sign, where as _tf_where)
from ._ops.reductions import logsumexp as _lse, sum as _tf_sum
from ._ops.pointwise import (arr as _arr, bcast as _bcast, binary, cast as _cast,
                             partial_rules, promote as _promote_to, quiet as _quiet, unary)

__all__ = [
    "gammaln", "gamma", "loggamma", "digamma", "psi", "polygamma", "multigammaln",
    "betaln", "beta", "erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtr", "ndtri",
    "log_ndtr", "expit", "logit", "log_expit", "xlogy", "xlog1py", "entr", "rel_entr",
    "kl_div", "huber", "pseudo_huber", "i0", "i0e", "i1", "i1e", "sinc", "zeta",
    "gammainc", "gammaincc", "betainc", "betaincc", "stdtr", "spence", "softplus",
    "logsumexp", "softmax", "log_softmax", "rgamma", "cbrt", "exp2", "exp10", "cosm1", "exprel",
    "sindg", "cosdg", "tandg", "cotdg", "radian", "exp1", "expi", "expn", "j0", "j1", "y0",
    "y1", "k0", "k1", "k0e", "k1e", "boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p",
    "poch",
]

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
              op_doc=doc, doc=f"``scipy.special.{name}``, differentiable: {doc}",
              module=__name__, ufuncs=_ufuncs_of(name, ufunc))
    # the NumPy version _ap calls inside a rule on ndarrays (a function attribute)
    f._np = lambda x: _arr(compute(x))  # type: ignore[attr-defined]
    return f


def _binary(name: str, ufunc: Callable[..., Any], derivs: _Derivs, *, complex_ok: bool = False,
            nondiff: dict[int, str] | None = None, primal: Callable[..., Any] | None = None,
            doc: str = "", argnames: tuple[str, str] = ("x", "y")
            ) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    """y = ufunc(a, b) broadcasting; derivs(a, b, y, needs) -> (∂y/∂a, ∂y/∂b) (None where
    not needed), from which pointwise.binary derives the rules. ``nondiff``:
    {index: reason} of arguments without a derivative."""
    compute = ufunc if primal is None else primal

    def check(a: Tensor, b: Tensor) -> None:
        _check_complex(name, False, a, b)

    def before(a: Tensor, b: Tensor) -> None:
        for i, why in (nondiff or {}).items():
            _no_derivative(name, argnames[i], (a, b)[i], why)
        broadcast_shape(name, a.shape, b.shape)

    f = binary(name, compute, derivs, op_name="special." + name, complex=complex_ok,
               check=check, before=before, floats=True, same_dtype=True, quiet_rules=True,
               array_ops=False, op_doc=doc,
               doc=f"``scipy.special.{name}({', '.join(argnames)})``, differentiable: {doc}",
               module=__name__, ufuncs=_ufuncs_of(name, ufunc))
    f._np = lambda a, b: _arr(compute(a, b))  # type: ignore[attr-defined]  # as _unary's
    return f


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


# ---- logistic ---------------------------------------------------------------------------

# declared for the type checker: expit's own rule calls it
expit: Callable[[ArrayLike], Tensor]
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
    t: Tensor = floating(to_tensor(x))
    _check_complex("softplus", False, t)
    return _logaddexp(np.zeros((), t._data.dtype), t)


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


# ---- sinc, spence --------------------------------------------------------------------------

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


# ---- Pochhammer symbol ---------------------------------------------------------------------------

def _poch_derivs(z: Any, m: Any, y: Any, needs: Any) -> tuple[Any, Any]:
    s = _ap(digamma, z + m)
    return (y * (s - _ap(digamma, z)) if needs[0] else None, y * s if needs[1] else None)


poch = _binary("poch", _u.poch, _poch_derivs, argnames=("z", "m"),
               doc="(z)ₘ = Γ(z+m)/Γ(z): ∂z = (z)ₘ(ψ(z+m) − ψ(z)), ∂m = (z)ₘψ(z+m) [5.2.5]")


# ---- zeta and incomplete gamma/beta -------------------------------------------------------

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


def _gammainc_dx(a: Any, x: Any) -> Any:
    """e^(−x) x^(a−1)/Γ(a), the gamma density (DLMF 8.8.13), in logs: finite for large a."""
    return np.exp(_ap(xlogy, a - 1, x) - x - _ap(gammaln, a))


# ---- derivatives in the shape parameters -------------------------------------------------
#
# ∂/∂a of P(a, x) and of I_x(a, b) have no closed form: they are summed from the series and
# continued fractions of the functions, differentiated term by term in float64 (Moore,
# "Algorithm AS 187", Appl. Statist. 31 (1982); the recurrences of a continued fraction's
# convergents carry their derivatives as in Boik & Robison-Cox, J. Stat. Software 3
# (1998)). Each entry is iterated until the terms (bounded by a geometric tail) stop
# changing the sums at rounding level; an entry that has not converged after
# _SHAPE_MAX_TERMS terms gets NaN. Every such derivative is an op (first and second order)
# whose derivative in x is a closed form (the density differentiated in the shape), so
# mixed second derivatives and any order in x work; the third derivative in a shape
# parameter raises UnsupportedADError.

_EPS = float(np.finfo(np.float64).eps)
_SHAPE_MAX_TERMS = 20000


def _iterate(n: int, step: Callable[[_Idx, int], _Mask]) -> _Idx:
    """Call ``step(idx, k)`` for k = 1, 2, ... on the indices ``idx`` (of 0..n−1) not yet
    converged (step returns the converged mask of idx); the indices left after
    _SHAPE_MAX_TERMS steps."""
    idx = np.arange(n)
    k = 0
    while idx.size and k < _SHAPE_MAX_TERMS:
        k += 1
        done = step(idx, k)
        if done.any():
            idx = idx[~done]
    return idx


def _gamma_series(a: _F64, x: _F64, order: int) -> list[_F64]:
    """∂ᵏP/∂aᵏ (k <= order) for x < a + 1 (1-D float64 arrays): P = e^L·S with
    L = a log x − x − lgamma(a+1) and S = Σₙ tₙ, tₙ = Πₖ₌₁ⁿ x/(a+k) (DLMF 8.7.1), all terms
    positive; ∂ log tₙ/∂a = −Σₖ 1/(a+k), ∂² log tₙ/∂a² = Σₖ 1/(a+k)²."""
    n = a.size
    t, s0 = np.ones(n), np.ones(n)
    s1, s2, g, h = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)

    def step(i: _Idx, k: int) -> Any:
        ai, xi = a[i], x[i]
        r = 1 / (ai + k)
        ti = t[i] * (xi * r)
        gi = g[i] - r
        t[i], g[i] = ti, gi
        u1 = ti * gi
        s0[i] += ti
        s1[i] += u1
        # the remaining terms are below a geometric series of ratio x/(a+k+1) < 1
        tail = 1 / (1 - xi / (ai + k + 1))
        done = (ti * tail <= _EPS * s0[i]) & (np.abs(u1) * tail <= _EPS * np.abs(s1[i]))
        if order == 2:
            hi = h[i] + r * r
            h[i] = hi
            u2 = ti * (gi * gi + hi)
            s2[i] += u2
            done &= u2 * tail <= _EPS * s2[i]
        return done

    bad = _iterate(n, step)
    e = np.exp(_u.xlogy(a, x) - x - _u.gammaln(a + 1))
    L1 = np.log(x) - _u.psi(a + 1)
    out = [e * (L1 * s0 + s1)]
    if order == 2:
        L2 = -_sc.polygamma(1, a + 1)
        out.append(e * ((L2 + L1 * L1) * s0 + 2 * L1 * s1 + s2))
    for o in out:
        o[bad] = np.nan
    return out


def _gamma_cf(a: _F64, x: _F64, order: int) -> list[_F64]:
    """∂ᵏQ/∂aᵏ (k <= order) for x >= a + 1: Q = e^L·f with L = a log x − x − lgamma(a) and
    f = 1/(b₀ + a₁/(b₁ + a₂/(b₂ + ...))), bₙ = x + 2n + 1 − a, aₙ = −n(n − a) (DLMF 8.9.2,
    its even part); the convergents Aₙ/Bₙ follow Aₙ = bₙAₙ₋₁ + aₙAₙ₋₂ and their derivatives
    in a the derivative of that recurrence (∂bₙ/∂a = −1, ∂aₙ/∂a = n), all rescaled by
    1/|Aₙ| every step (f and its derivatives are ratios, unchanged by the scale)."""
    n = a.size
    st = [np.ones(n), x + 1 - a, np.zeros(n), np.ones(n),     # Aₙ₋₁, Aₙ, Bₙ₋₁, Bₙ
          np.zeros(n), -np.ones(n), np.zeros(n), np.zeros(n),  # their a-derivatives
          np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)]  # second derivatives
    f = st[3] / st[1]
    f1 = (st[7] - f * st[5]) / st[1]
    f2 = np.zeros(n)

    def step(i: _Idx, k: int) -> Any:
        Ap, A, Bp, B, dAp, dA, dBp, dB, ddAp, ddA, ddBp, ddB = (v[i] for v in st)
        ai = a[i]
        bk = x[i] + 2 * k + 1 - ai
        ak = -k * (k - ai)
        An = bk * A + ak * Ap
        Bn = bk * B + ak * Bp
        dAn = bk * dA - A + ak * dAp + k * Ap
        dBn = bk * dB - B + ak * dBp + k * Bp
        ddAn = bk * ddA - 2 * dA + ak * ddAp + 2 * k * dAp
        ddBn = bk * ddB - 2 * dB + ak * ddBp + 2 * k * dBp
        scale = 1 / np.abs(An)
        new = (A, An, B, Bn, dA, dAn, dB, dBn, ddA, ddAn, ddB, ddBn)
        for v, w in zip(st, new):
            v[i] = w * scale
        An, Bn, dAn, dBn, ddAn, ddBn = (st[j][i] for j in (1, 3, 5, 7, 9, 11))
        fn = Bn / An
        f1n = (dBn - fn * dAn) / An
        # successive convergents agree to rounding (a few ulps of noise: the
        # derivatives are differences of rescaled products)
        done = (np.abs(fn - f[i]) <= 2 * _EPS * np.abs(fn)) \
            & (np.abs(f1n - f1[i]) <= 8 * _EPS * np.abs(f1n))
        f[i], f1[i] = fn, f1n
        if order == 2:
            f2n = (ddBn - fn * ddAn - 2 * f1n * dAn) / An
            done &= np.abs(f2n - f2[i]) <= 64 * _EPS * np.abs(f2n)
            f2[i] = f2n
        return done

    bad = _iterate(n, step)
    e = np.exp(_u.xlogy(a, x) - x - _u.gammaln(a))
    L1 = np.log(x) - _u.psi(a)
    out = [e * (L1 * f + f1)]
    if order == 2:
        L2 = -_sc.polygamma(1, a)
        out.append(e * ((L2 + L1 * L1) * f + 2 * L1 * f1 + f2))
    for o in out:
        o[bad] = np.nan
    return out


def _gammainc_da_np(a: ArrayLike, x: ArrayLike, order: int) -> list[_F64]:
    """[∂P/∂a] (order 1) or [∂P/∂a, ∂²P/∂a²] (order 2) as float64 arrays of the broadcast
    shape: the series of P where x < a + 1, the continued fraction of Q = 1 − P elsewhere
    (each sums the small one of P and Q: no cancellation). 0 at x = 0 and x = inf; NaN for
    a <= 0, x < 0 or NaN input."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    out = [np.full(a.shape, np.nan) for _ in range(order)]
    ok = (a > 0) & (x >= 0)
    edge = ok & ((x == 0) | np.isposinf(x) | np.isposinf(a))
    inner = ok & ~edge
    series = inner & (x < a + 1)
    cfrac = inner & ~series
    with np.errstate(all="ignore"):
        for o in out:
            o[edge] = 0
        if series.any():
            for o, v in zip(out, _gamma_series(a[series], x[series], order)):
                o[series] = v
        if cfrac.any():
            for o, v in zip(out, _gamma_cf(a[cfrac], x[cfrac], order)):
                o[cfrac] = -v
    return [o.reshape(shape) for o in out]


def _beta_series(p: _F64, q: _F64, u: _F64, v: _F64, order: int) -> list[_F64]:
    """Derivatives of J = I_u(p, q) in (p, q), v = 1 − u (1-D float64 arrays): J = e^L·S,
    L = p log u + q log v − lgamma(p+1) − lgamma(q) + lgamma(p+q), S = Σₙ tₙ with
    tₙ = Πₖ₌₀ⁿ⁻¹ u(p+q+k)/(p+1+k) (DLMF 8.17.8 after Euler's transformation of the
    hypergeometric function: positive terms). Returns [Jp, Jq] (order 1) or
    [Jp, Jq, Jpp, Jpq, Jqq] (order 2)."""
    n = p.size
    t, s = np.ones(n), np.ones(n)
    gp, gq, hpp, hqq = (np.zeros(n) for _ in range(4))
    sp, sq, spp, spq, sqq = (np.zeros(n) for _ in range(5))

    def step(i: _Idx, k: int) -> Any:
        pi, qi, ui = p[i], q[i], u[i]
        c = 1 / (pi + qi + (k - 1))
        d = 1 / (pi + k)
        ti = t[i] * (ui * (pi + qi + (k - 1)) * d)
        gpi = gp[i] + (c - d)          # ∂ log tₙ/∂p
        gqi = gq[i] + c                # ∂ log tₙ/∂q
        t[i], gp[i], gq[i] = ti, gpi, gqi
        up, uq = ti * gpi, ti * gqi
        s[i] += ti
        sp[i] += up
        sq[i] += uq
        # past the largest term the ratios decrease to u or increase to it: the tail is
        # below a geometric series of ratio max(next ratio, u)
        nxt = np.maximum(ui * (pi + qi + k) / (pi + k + 1), ui)
        tail = np.where(nxt < 1, 1 / (1 - nxt), np.inf)
        done = (ti * tail <= 2 * _EPS * s[i]) \
            & (np.abs(up) * tail <= 2 * _EPS * np.abs(sp[i])) \
            & (uq * tail <= 2 * _EPS * sq[i])
        if order == 2:
            hppi = hpp[i] + (d * d - c * c)
            hqqi = hqq[i] - c * c      # = ∂² log tₙ/∂p∂q too
            hpp[i], hqq[i] = hppi, hqqi
            upp = ti * (gpi * gpi + hppi)
            upq = ti * (gpi * gqi + hqqi)
            uqq = ti * (gqi * gqi + hqqi)
            spp[i] += upp
            spq[i] += upq
            sqq[i] += uqq
            done &= (np.abs(upp) * tail <= 2 * _EPS * np.abs(spp[i])) \
                & (np.abs(upq) * tail <= 2 * _EPS * np.abs(spq[i])) \
                & (np.abs(uqq) * tail <= 2 * _EPS * np.abs(sqq[i]))
        return done

    bad = _iterate(n, step)
    return _beta_combine(p, q, u, v, (s, sp, sq, spp, spq, sqq), order, bad)


def _beta_combine(p: _F64, q: _F64, u: _F64, v: _F64, sums: Sequence[_F64 | None],
                  order: int, bad: _Idx) -> list[_F64]:
    """The derivatives of J = e^L·S in (p, q) from the sum S and its derivatives
    ``sums`` = (S, Sp, Sq, Spp, Spq, Sqq) (of the series or the continued fraction), with
    e^L = u^p v^q/(p B(p, q)); NaN where ``bad`` (not converged)."""
    s, sp, sq, spp, spq, sqq = sums
    # log u and log v from the smaller of u, v (log of a number near 1 would lose the
    # digits of the other); lgamma(p+q) − lgamma(p+1) − lgamma(q) without the error
    # ~1e-16·q·log q of the difference where one parameter is ½ (stdtr)
    log_u = np.where(v < 0.5, np.log1p(-v), np.log(u))
    log_v = np.where(u < 0.5, np.log1p(-u), np.log(v))
    lg = _u.gammaln(p + q) - _u.gammaln(p + 1) - _u.gammaln(q)
    half_q, half_p = q == 0.5, p == 0.5
    if half_q.any():
        lg[half_q] = (_lgamma_half_gap(p[half_q]) - np.log(p[half_q])
                      - _u.gammaln(0.5))
    if half_p.any():
        lg[half_p] = _lgamma_half_gap(q[half_p]) - _u.gammaln(1.5)
    e = np.exp(p * log_u + q * log_v + lg)
    psq = _u.psi(p + q)
    dpsi = psq - _u.psi(p + 1)      # −1/p − ψ(p) = −ψ(p+1): no cancellation with 1/p
    if half_q.any():   # ψ(p+½) − ψ(p+1) = ε(p) − 1/(2p) keeps its digits for large p
        dpsi[half_q] = _psi_half_gap(p[half_q]) - 0.5 / p[half_q]
    Lp = log_u + dpsi
    Lq = log_v - _u.psi(q) + psq
    out = [e * (Lp * s + sp), e * (Lq * s + sq)]
    if order == 2:
        t1 = _sc.polygamma(1, p + q)
        Lpp = t1 - _sc.polygamma(1, p + 1)
        if half_q.any():   # ψ₁(p+½) − ψ₁(p+1) = ε′(p) + 1/(2p²)
            ph = p[half_q]
            Lpp[half_q] = _psi_half_gap(ph, deriv=True) + 0.5 / (ph * ph)
        Lqq = t1 - _sc.polygamma(1, q)
        out += [e * ((Lpp + Lp * Lp) * s + 2 * Lp * sp + spp),
                e * ((t1 + Lp * Lq) * s + Lp * sq + Lq * sp + spq),
                e * ((Lqq + Lq * Lq) * s + 2 * Lq * sq + sqq)]
    for o in out:
        o[bad] = np.nan
    return out


def _beta_cf(p: _F64, q: _F64, u: _F64, v: _F64, order: int) -> list[_F64]:
    """The derivatives of J = I_u(p, q) in (p, q) as _beta_series, from the continued
    fraction J = e^L·f, f = 1/(1 + d₁/(1 + d₂/(1 + ...))) with
    d₂ₘ₊₁ = −(p+m)(p+q+m)u/((p+2m)(p+2m+1)), d₂ₘ = m(q−m)u/((p+2m−1)(p+2m)) (DLMF
    8.17.22), for the large parameters where the series needs too many terms (it
    converges in O(√max(p, q)) steps for u < (p+1)/(p+q+2)). The convergents
    Aₙ = Aₙ₋₁ + dₙAₙ₋₂ (Bₙ likewise) carry their first and second derivatives in (p, q)
    (Boik & Robison-Cox 1998), rescaled by 1/|Aₙ| every step; dₙ is a quotient of two
    products of factors linear in p and q, differentiated by the quotient rule."""
    n = p.size
    m2 = 6 if order == 2 else 3          # tracks: value, ∂p, ∂q (, ∂pp, ∂pq, ∂qq)
    Ap, A = np.zeros((m2, n)), np.zeros((m2, n))
    Bp, B = np.zeros((m2, n)), np.zeros((m2, n))
    Ap[0], A[0], B[0] = 1, 1, 1
    f = np.ones((m2, n))
    f[1:] = 0

    def step(i: _Idx, k: int) -> Any:
        pi, qi, ui = p[i], q[i], u[i]
        one, zero = np.ones_like(pi), np.zeros_like(pi)
        if k % 2:
            mm = (k - 1) // 2
            sign = -ui
            n1, n1p, n1q = pi + mm, one, zero
            n2, n2p, n2q = pi + qi + mm, one, one
            den = (pi + 2 * mm) * (pi + 2 * mm + 1)
            den_p = 2 * pi + 4 * mm + 1
        else:
            mm = k // 2
            sign = ui
            n1, n1p, n1q = mm * one, zero, zero
            n2, n2p, n2q = qi - mm, zero, one
            den = (pi + 2 * mm - 1) * (pi + 2 * mm)
            den_p = 2 * pi + 4 * mm - 1
        d = sign * n1 * n2 / den
        dp = (sign * (n1p * n2 + n1 * n2p) - d * den_p) / den
        dq = sign * (n1q * n2 + n1 * n2q) / den
        ds = [d, dp, dq]
        if order == 2:
            dpp = (sign * 2 * n1p * n2p - 2 * dp * den_p - 2 * d) / den
            dpq = (sign * (n1p * n2q + n1q * n2p) - dq * den_p) / den
            dqq = sign * 2 * n1q * n2q / den
            ds += [dpp, dpq, dqq]
        new = []
        for X, Xp in ((A, Ap), (B, Bp)):
            x0, xp0 = X[:, i], Xp[:, i]
            y = x0 + d * xp0
            y[1] += dp * xp0[0]
            y[2] += dq * xp0[0]
            if order == 2:
                y[3] += ds[3] * xp0[0] + 2 * dp * xp0[1]
                y[4] += ds[4] * xp0[0] + dp * xp0[2] + dq * xp0[1]
                y[5] += ds[5] * xp0[0] + 2 * dq * xp0[2]
            new.append((x0, y))
        scale = 1 / np.abs(new[0][1][0])
        (a_old, a_new), (b_old, b_new) = new
        Ap[:, i], A[:, i] = a_old * scale, a_new * scale
        Bp[:, i], B[:, i] = b_old * scale, b_new * scale
        a_, b_ = A[:, i], B[:, i]
        fn = np.empty_like(a_)
        fn[0] = b_[0] / a_[0]
        fn[1] = (b_[1] - fn[0] * a_[1]) / a_[0]
        fn[2] = (b_[2] - fn[0] * a_[2]) / a_[0]
        if order == 2:
            fn[3] = (b_[3] - 2 * fn[1] * a_[1] - fn[0] * a_[3]) / a_[0]
            fn[4] = (b_[4] - fn[1] * a_[2] - fn[2] * a_[1] - fn[0] * a_[4]) / a_[0]
            fn[5] = (b_[5] - 2 * fn[2] * a_[2] - fn[0] * a_[5]) / a_[0]
        tol = np.array([2, 8, 8, 64, 64, 64][:m2])[:, None] * _EPS
        done = (np.abs(fn - f[:, i]) <= tol * np.abs(fn)).all(axis=0)
        f[:, i] = fn
        return done

    bad = _iterate(n, step)
    sums = tuple(f) + ((None,) * 3 if order == 1 else ())
    return _beta_combine(p, q, u, v, sums, order, bad)


def _beta_series_cost(p: _F64, q: _F64, u: _F64) -> _F64:
    """About how many terms the series of I_u(p, q) needs: up to its largest term, then
    until uⁿ is below rounding."""
    peak = np.maximum(0, (u * (p + q) - p - 1) / (1 - u))
    return peak + 37 / -np.log(u)


_BETA_ORDER = ((1, 0), (0, 1), (2, 0), (1, 1), (0, 2))


_SERIES_MAX_COST = 2000


def _betainc_dab_np(a: ArrayLike, b: ArrayLike, x: ArrayLike, y: ArrayLike, order: int
                    ) -> list[_F64]:
    """The derivatives of I_x(a, b) in (a, b) listed in _BETA_ORDER (the first two for
    order 1), float64 arrays of the broadcast shape; y = 1 − x (given by the caller where
    it is more accurate than 1 − x). Summed for I_x(a, b) or for 1 − I_x(a, b) =
    I_y(b, a): the one whose value is below 0.05 (the other's derivative would cancel
    against its value near 1), else the one whose series has fewer terms, or (between
    the tails) the one whose continued fraction converges fast, x < (a+1)/(a+b+2). The
    series where it needs at most _SERIES_MAX_COST terms, the continued fraction for the
    large parameters beyond. 0 at x = 0 and 1; NaN for a <= 0, b <= 0, x outside [0, 1],
    infinite a or b, NaN input."""
    a, b, x, y = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x, y)))
    shape = a.shape
    a, b, x, y = a.ravel(), b.ravel(), x.ravel(), y.ravel()
    out = [np.full(a.shape, np.nan) for _ in range(2 if order == 1 else 5)]
    ok = (a > 0) & (b > 0) & (x >= 0) & (x <= 1) & np.isfinite(a) & np.isfinite(b)
    edge = ok & ((x == 0) | (x == 1))
    inner = ok & ~edge
    with np.errstate(all="ignore"):
        for o in out:
            o[edge] = 0
        value = _u.betainc(a, b, x)
        tail = np.minimum(value, 1 - value) < 0.05
        cost_lower, cost_upper = _beta_series_cost(a, b, x), _beta_series_cost(b, a, y)
        swap = np.where(tail, value > 0.5, cost_upper < cost_lower)
        cost = np.where(swap, cost_upper, cost_lower)
        cfrac = cost > _SERIES_MAX_COST
        swap = np.where(cfrac & ~tail, x > (a + 1) / (a + b + 2), swap)
        for method, use in ((_beta_series, ~cfrac), (_beta_cf, cfrac)):
            for sel, flip in ((inner & use & ~swap, False), (inner & use & swap, True)):
                if not sel.any():
                    continue
                if flip:    # I_x(a, b) = 1 − I_y(b, a): p = b, q = a
                    r = method(b[sel], a[sel], y[sel], x[sel], order)
                    r = [-r[1], -r[0]] + ([-r[4], -r[3], -r[2]] if order == 2 else [])
                else:
                    r = method(a[sel], b[sel], x[sel], y[sel], order)
                for o, v in zip(out, r):
                    o[sel] = v
    return [o.reshape(shape) for o in out]


def _log1p_neg_plus(y: Any) -> Any:
    """log(1 − y) + y for 0 <= y < 1, without the cancellation of the two terms for small
    y: −Σₖ₌₂ yᵏ/k (28 terms, below rounding for y < 0.25). Written with NumPy functions and
    operators: on Tensors it is differentiable."""
    small = _mask(y) < 0.25
    far = np.log1p(-y) + y
    if not small.any():
        return far
    ys = _where(small, y, 0) if not small.all() else y
    p = 1 / 29
    for k in range(28, 1, -1):
        p = p * ys + 1 / k
    near = -(ys * ys) * p
    return near if small.all() else _where(small, near, far)


def _log1pmx_small(h: Any) -> Any:
    """log(1 + h) − h for 0 <= h <= 0.05 (16 terms of its series)."""
    p = -1 / 16
    for k in range(15, 1, -1):
        p = p * h + (1 / k if k % 2 else -1 / k)
    return (h * h) * p


def _psi_half_gap(a: Any, deriv: bool = False) -> Any:
    """ε(a) = ψ(a+½) − ψ(a) − 1/(2a) (deriv: ε′(a) = ψ₁(a+½) − ψ₁(a) + 1/(2a²)), which the
    plain difference gets with ~log₁₀(a) digits lost: ε(a) = Σⱼ₌₀⁹ 1/(4c(c+½)(c+1))
    (c = a + j, from ψ(x+1) = ψ(x) + 1/x) plus ε at b = a + 10 from Stirling's series
    (DLMF 5.11.2), ε(b) = log1pmx(h) + h²/(1+h) − Σₖ B₂ₖ/(2k)·b⁻²ᵏ·expm1(−2k·log1p h),
    h = 1/(2b); ε′(b) = −1/(4b(b+½)²) + Σₖ B₂ₖ·b⁻²ᵏ⁻¹·expm1(−(2k+1)·log1p h). Full float64
    accuracy for every a > 0; NumPy functions and operators (differentiable on Tensors)."""
    tot = 0
    for j in range(10):
        c = a + j
        term = 1 / (4 * c * (c + 0.5) * (c + 1))
        tot = tot + (-term * (1 / c + 1 / (c + 0.5) + 1 / (c + 1)) if deriv else term)
    b = a + 10
    h = 0.5 / b
    lh = np.log1p(h)
    inv2 = 1 / (b * b)
    if deriv:
        asym = -0.25 / (b * (b + 0.5) * (b + 0.5))
        pw = 1 / b
        for k, bern in enumerate(_BERNOULLI, start=1):
            pw = pw * inv2
            asym = asym + bern * pw * np.expm1(-(2 * k + 1) * lh)
    else:
        asym = _log1pmx_small(h) + h * h / (1 + h)
        pw = 1
        for k, bern in enumerate(_BERNOULLI, start=1):
            pw = pw * inv2
            asym = asym - bern / (2 * k) * pw * np.expm1(-2 * k * lh)
    return tot + asym


def _lgamma_half_gap(a: ArrayLike) -> _F64:
    """lgamma(a + ½) − lgamma(a) for a > 0 (float64 arrays), without the absolute error
    ~1e-16·a·log a of the difference (also in betaln): for a >= 10 Stirling's series,
    ½ log a + a·log1pmx(h) + Σₖ B₂ₖ/(2k(2k−1))·a¹⁻²ᵏ·expm1((1−2k)·log1p h), h = 1/(2a)."""
    a = np.asarray(a, np.float64)
    big = a >= 10
    out: _F64 = _u.gammaln(a + 0.5) - _u.gammaln(a)
    if big.any():
        ab = a[big]
        h = 0.5 / ab
        lh = np.log1p(h)
        r = 0.5 * np.log(ab) + ab * _log1pmx_small(h)
        inv2 = 1 / (ab * ab)
        pw = ab
        for k, bern in enumerate(_BERNOULLI, start=1):
            pw = pw * inv2
            r = r + bern / (2 * k * (2 * k - 1)) * pw * np.expm1((1 - 2 * k) * lh)
        out[big] = r
    return out


def _stdtr_log_density_dnu(nu: Any, t: Any, second: bool) -> tuple[Any, Any]:
    """∂/∂ν of log f(ν, t) for Student's t density f (second: also ∂²/∂ν²), in forms
    without cancellation as ν grows (where both are O(1/ν²), O(1/ν³)): with s = ν + t²,
    y = t²/s, g = ½[ε(ν/2) + y/ν + log(1−y) + y] and g′ = ½[½ε′(ν/2) − y/ν² + y(t²−1)/(νs)]
    (ε: _psi_half_gap). Also ∂/∂ν of L = log of the prefactor of I_y(½, ν/2)."""
    t2 = t * t
    s = nu + t2
    y = t2 / s
    g = 0.5 * (_psi_half_gap(0.5 * nu) + y / nu + _log1p_neg_plus(y))
    if not second:
        return g, None
    g1 = 0.5 * (0.5 * _psi_half_gap(0.5 * nu, deriv=True) - y / (nu * nu)
                + y * (t2 - 1) / (nu * s))
    return g, g1


def _stdtr_series(nu: _F64, t: _F64, order: int) -> list[_F64]:
    """∂ᵏF/∂νᵏ (k <= order) of Student's t cdf from J = I_y(½, ν/2), y = t²/(ν+t²)
    (F = ½(1 + sign(t)·J)): J = e^L·S, S = Σₙ tₙ, tₙ = Πₖ₌₀ⁿ⁻¹ y(ν/2+½+k)/(3/2+k), and
    every derivative in ν taken as a whole (a, y, z all move with ν), then rearranged
    without the cancellations of the chain rule through ∂I/∂a and ∂I/∂x (those lose
    ~log₁₀ ν digits): ∂L/∂ν = ∂ log f/∂ν (_stdtr_log_density_dnu), ∂ log tₙ/∂ν =
    Σₖ (t² − 1 − 2k)/((ν+1+2k)s), ∂² log tₙ/∂ν² = Σₖ (1 + 2k − t²)(c+s)/(s²c²),
    c = ν + 1 + 2k."""
    n = nu.size
    t2 = t * t
    s = nu + t2
    y = t2 / s
    a = 0.5 * nu
    L1, L2 = _stdtr_log_density_dnu(nu, t, order == 2)
    tt, S = np.ones(n), np.ones(n)
    S1, S2, g, h = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    # the truncation error is measured against the scale of the result e^L(L′S + S′)
    scale1 = np.abs(L1)
    scale2: Any = np.abs(L2 + L1 * L1) if order == 2 else None

    def step(i: _Idx, k: int) -> Any:
        c = nu[i] + (2 * k - 1)
        si, yi = s[i], y[i]
        ti = tt[i] * (yi * (a[i] + k - 0.5) / (k + 0.5))
        gi = g[i] + (t2[i] - (2 * k - 1)) / (c * si)
        tt[i], g[i] = ti, gi
        u1 = ti * gi
        S[i] += ti
        S1[i] += u1
        nxt = np.maximum(yi * (a[i] + k + 0.5) / (k + 1.5), yi)
        tail = np.where(nxt < 1, 1 / (1 - nxt), np.inf)
        done = (ti * tail <= _EPS * S[i]) \
            & (np.abs(u1) * tail <= _EPS * (scale1[i] * S[i] + np.abs(S1[i])))
        if order == 2:
            hi = h[i] + ((2 * k - 1) - t2[i]) * (c + si) / (si * si * c * c)
            h[i] = hi
            u2 = ti * (gi * gi + hi)
            S2[i] += u2
            done &= np.abs(u2) * tail <= _EPS * (scale2[i] * S[i] + 2 * scale1[i]
                                                 * np.abs(S1[i]) + np.abs(S2[i]))
        return done

    bad = _iterate(n, step)
    e = np.exp(0.5 * np.log(y) + a * np.log1p(-y) - _u.gammaln(1.5) + _lgamma_half_gap(a))
    half_sign = 0.5 * np.sign(t)
    out = [half_sign * e * (L1 * S + S1)]
    if order == 2:
        out.append(half_sign * e * ((L2 + L1 * L1) * S + 2 * L1 * S1 + S2))
    for o in out:
        o[bad] = np.nan
    return out


def _stdtr_ddf_np(df: ArrayLike, t: ArrayLike, order: int) -> list[_F64]:
    """[∂F/∂ν] or [∂F/∂ν, ∂²F/∂ν²] of Student's t cdf F(ν, t), float64 arrays of the
    broadcast shape. For ν > 2 outside the far tails: _stdtr_series (relative error
    ~1e-16/min(F, 1 − F)). In the far tails (min(F, 1 − F) < 0.001 and
    < 30t²/ν²) or for ν <= 2: with s = ν + t², z = ν/s, y = t²/s,
    F = ½ I_z(ν/2, ½) for t < 0 and 1 − F(ν, −t) for t > 0, so
    ∂F/∂ν = −sign(t)/2·(½ ∂I/∂a + z′ ∂I/∂x) and ∂²F/∂ν² = −sign(t)/2·(¼ ∂²I/∂a² +
    z′ ∂²I/∂a∂x + z″ ∂I/∂x + z′² ∂²I/∂x²), z′ = t²/s², z″ = −2t²/s³ (the terms cancel
    as ν grows: relative errors ~1e-17·ν²/t², 1e-7 at ν = 1e6). 0 at t = 0, ±inf and
    ν = inf; NaN for ν <= 0 or NaN input."""
    nu, t = np.broadcast_arrays(np.asarray(df, np.float64), np.asarray(t, np.float64))
    shape = nu.shape
    nu, t = nu.ravel(), t.ravel()
    out = [np.full(nu.shape, np.nan) for _ in range(order)]
    ok = (nu > 0) & ~np.isnan(t)
    edge = ok & (np.isposinf(nu) | (t == 0) | np.isinf(t))
    for o in out:
        o[edge] = 0
    inner = ok & ~edge
    with np.errstate(all="ignore"):
        t2 = t * t
        s = nu + t2
        z, y = nu / s, t2 / s
        # the series of J loses ~1e-16/F relative (F = (1 − J)/2, the tail probability),
        # the chain rule in the tails ~1e-17·ν²/t²: the better of the two
        tail_f = 0.5 * _u.betaincc(0.5, 0.5 * nu, y)
        series = inner & (nu > 2) & ((tail_f >= 0.001) | (tail_f * nu * nu > 30 * t2))
        if series.any():
            for o, v in zip(out, _stdtr_series(nu[series], t[series], order)):
                o[series] = v
        m = inner & ~series
        if m.any():
            v, tm, zm, ym, sm = nu[m], t[m], z[m], y[m], s[m]
            a = 0.5 * v
            r = _betainc_dab_np(a, 0.5, zm, ym, order)
            log_z = np.log1p(-ym)
            # betaln(a, ½) = lgamma(½) − (lgamma(a + ½) − lgamma(a))
            dens = np.exp((a - 1) * log_z - 0.5 * np.log(ym) - _u.gammaln(0.5)
                          + _lgamma_half_gap(a))
            z1 = ym / sm
            half_sign = -0.5 * np.sign(tm)
            out[0][m] = half_sign * (0.5 * r[0] + z1 * dens)
            if order == 2:
                La = log_z + _psi_half_gap(a) + 0.5 / a    # log z − ψ(a) + ψ(a+½)
                dxx = (a - 1) / zm + 0.5 / ym      # ∂²I/∂x² = ∂I/∂x·dxx
                out[1][m] = half_sign * (0.25 * r[2] + dens * (z1 * La - 2 * z1 / sm
                                                               + z1 * z1 * dxx))
    return [o.reshape(shape) for o in out]


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
    f.__doc__ = f"``scipy.special.{name}({', '.join(argnames)})``, differentiable: {doc}"
    register(f, ufuncs=tuple(u for u in {ufunc, getattr(_sc, name, None)}
                             if isinstance(u, np.ufunc)))
    return f


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


radian = _ternary("radian", _u.radian, _radian_derivs, ("d", "m", "s"),
                  "an angle in degrees, minutes, seconds in radians: ∂d = π/180, "
                  "∂m = π/(180·60), ∂s = π/(180·3600)")


# ---- logsumexp, softmax, log_softmax ------------------------------------------------------

def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = ...,
              b: ArrayLike | None = ..., keepdims: bool = ...,
              return_sign: Literal[False] = ...) -> Tensor: ...
@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None, b: ArrayLike | None,
              keepdims: bool, return_sign: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = ...,
              b: ArrayLike | None = ..., keepdims: bool = ..., *,
              return_sign: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = ...,
              b: ArrayLike | None = ..., keepdims: bool = ...,
              return_sign: bool = ...) -> Tensor | tuple[Tensor, Tensor]: ...
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False
              ) -> Tensor | tuple[Tensor, Tensor]:
    """``scipy.special.logsumexp``: log Σ b·exp(a) over ``axis`` (all axes for None),
    computed stably. Without ``b`` it is tenferro's logsumexp op (gradient: the softmax
    weights); with ``b`` a composition log|Σ b·e^(a−m)| + m (m = the largest a with
    b != 0, not differentiated: a shift the result does not depend on), differentiable in
    a and b. ``return_sign=True`` returns (log|s|, sign(s)) (for complex input the sign is
    the unit phase); otherwise a negative sum gives NaN, as SciPy."""
    at: Tensor = floating(to_tensor(a))
    if b is None:
        out = _lse(at, axis=axis, keepdims=keepdims)
        if not return_sign:
            return out
        if out.dtype.kind == "c":
            return _tf_real(out), _tf_exp(1j * _tf_imag(out))
        return out, Tensor._wrap(np.where(np.isnan(out._data), np.nan,
                                          np.ones_like(out._data)))
    at, bt = floating_args(a, b)   # as SciPy: a float32 a with a float64 b sums in float64
    dt = _result_dtype(at, bt)
    at, bt = ((at if at.dtype == dt else at.astype(dt)),
              (bt if bt.dtype == dt else bt.astype(dt)))
    shape: tuple[int, ...] = broadcast_shape("logsumexp", at.shape, bt.shape)
    if at.shape != shape:
        at = at + np.zeros(shape, at._data.dtype)
    if bt.shape != shape:
        bt = bt + np.zeros(shape, bt._data.dtype)
    axes = _axes(axis, len(shape))
    bp = bt._data
    keep = bp != 0
    ap = at._data.real if at._data.dtype.kind == "c" else at._data
    with np.errstate(all="ignore"):
        m = np.max(np.where(keep, ap, -np.inf), axis=axes, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0)
    a_safe = _tf_where(keep, at, -np.inf) if not keep.all() else at
    with np.errstate(all="ignore"):
        s = _tf_sum(bt * _tf_exp(a_safe - m), axis=axes, keepdims=True)
        mag = _tf_abs(s)
        out = _tf_log(mag) + m
    if return_sign:
        if s.dtype.kind == "c":
            sgn = s / _tf_where(mag._data == 0, 1, mag)
        else:
            sgn = _tf_sign(s)
    else:
        if s.dtype.kind == "c":
            out = _tf_log(s) + m
        else:
            neg = s._data < 0
            if neg.any():
                out = _tf_where(neg, np.nan, out)
    if not keepdims:
        out = out.reshape(tuple(n for i, n in enumerate(shape) if i not in axes))
        if return_sign:
            sgn = sgn.reshape(out.shape)
    if return_sign:
        if out.dtype.kind == "c":
            out = _tf_real(out)
        return out, sgn
    return out


def _shifted(x: Tensor, axis: int | tuple[int, ...] | None) -> tuple[Tensor, tuple[int, ...]]:
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
    t, axes = _shifted(floating(to_tensor(x)), axis)
    e = _tf_exp(t)
    return e / _tf_sum(e, axis=axes, keepdims=True)


def log_softmax(x: ArrayLike, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``scipy.special.log_softmax(x, axis=None)``: (x − m) − log Σ exp(x − m) with
    m = max x, SciPy's formula (for complex x the same branch of the log as SciPy)."""
    t, axes = _shifted(floating(to_tensor(x)), axis)
    with np.errstate(divide="ignore"):
        return t - _tf_log(_tf_sum(_tf_exp(t), axis=axes, keepdims=True))
