"""SciPy's special functions (``scipy.special``) with reverse, forward and second-order
derivatives.

``tf.special.<name>`` computes what ``scipy.special.<name>`` computes (SciPy evaluates the
values) and records an op whose derivative rules are written with tenferro's ops, so
every rule is differentiable again. SciPy's special functions are NumPy ufuncs: on a
Tensor, ``scipy.special.gammaln(t)`` dispatches here through ``Tensor.__array_ufunc__``
(and under ``SCIPY_ARRAY_API=1`` SciPy finds ``tenferro.special`` as the tensor
namespace's ``special`` module itself). ``polygamma``, ``multigammaln``, ``logsumexp``,
``softmax``, ``log_softmax``, ``spherical_jn`` and ``spherical_yn`` are Python functions
in SciPy that call ``np.asarray``: call ``tf.special.<name>`` (or use SciPy's array-API
mode) for a derivative.

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
* jv(v, x) (jn its alias), yv, yn(n, x): (f(v−1, x) − f(v+1, x))/2 [10.6.1]; iv:
  (I_(v−1) + I_(v+1))/2, kv, kn: −(K_(v−1) + K_(v+1))/2 [10.29.1]; ive = I_v e^(−|x|):
  (ive(v−1) + ive(v+1))/2 − sign(x)·ive(v); kve = K_v e^x: kve(v) − (kve(v−1) + kve(v+1))/2;
  spherical_jn(n, x), spherical_yn: (n·fₙ₋₁ − (n+1)·fₙ₊₁)/(2n+1) [10.51.2] (also their
  ``derivative=True``); gammasgn: 0.
* boxcox(x, λ): x^(λ−1), (x^λ log x − y)/λ; boxcox1p with 1 + x; inv_boxcox(y, λ):
  x/(1 + λy), x(y/(λ(1 + λy)) − log1p(λy)/λ²); inv_boxcox1p likewise (series in λ near
  λ = 0, where these cancel).
* logsumexp: softmax weights (with ``b``: b·e^(a−lse)); softmax, log_softmax: their
  compositions with logsumexp.

Not differentiated (an input carrying a derivative raises :class:`UnsupportedADError`
naming the argument, at the call; the same call without the derivative works): the order
``n`` of polygamma (an integer), the order ``v`` (``n``) of the Bessel functions and zeta's
``x`` (no closed form).

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

Layout (one module per family; the helpers and factories in ``_support``, which builds on
``tenferro._ops.pointwise``): ``_gamma`` (gamma, beta, polygamma, rgamma, poch, zeta),
``_erf`` (error functions, the normal distribution), ``_logistic`` (expit & co.,
logsumexp, softmax), ``_information`` (xlogy, entropies, Huber losses), ``_bessel``,
``_elementary`` (sinc, cbrt, exp2, the functions in degrees, Box-Cox), ``_integrals``
(exponential integrals, spence), ``_incomplete`` (gammainc, betainc, stdtr) with the
float64 series of their shape-parameter derivatives in ``_shape_series``.
"""
from __future__ import annotations

from ._gamma import (gammaln, gamma, loggamma, digamma, psi, polygamma, multigammaln,
                     betaln, beta, rgamma, poch, zeta)
from ._erf import erf, erfc, erfcx, erfinv, erfcinv, ndtr, ndtri, log_ndtr
from ._logistic import expit, logit, log_expit, softplus, logsumexp, softmax, log_softmax
from ._information import xlogy, xlog1py, entr, rel_entr, kl_div, huber, pseudo_huber
from ._bessel import (i0, i0e, i1, i1e, j0, j1, y0, y1, k0, k1, k0e, k1e, jv, jn, yv, yn,
                      iv, ive, kv, kn, kve, spherical_jn, spherical_yn, gammasgn)
from ._elementary import (sinc, cbrt, exp2, exp10, cosm1, exprel, sindg, cosdg, tandg,
                          cotdg, radian, boxcox, boxcox1p, inv_boxcox, inv_boxcox1p)
from ._integrals import spence, exp1, expi, expn
from ._incomplete import gammainc, gammaincc, betainc, betaincc, stdtr

# The names the module held before it became a package (its imports), kept so that
# ``dir(tenferro.special)`` and code reaching e.g. ``tenferro.special.np`` stay as they were.
import math  # noqa: F401
from typing import Any, Callable, Literal, Sequence, TypeAlias, overload  # noqa: F401

import numpy as np  # noqa: F401
from numpy.typing import ArrayLike, DTypeLike, NDArray  # noqa: F401

from .._dtypes import float_result_type  # noqa: F401
from .._engine import apply1  # noqa: F401
from .._errors import DTypeError, ShapeError, UnsupportedADError  # noqa: F401
from .._ops._util import (broadcast_shape, conj, floating, floating_args,  # noqa: F401
                          operands, payload, to_tensor, unbroadcast)
from .._ops.registry import FUNCTIONS, Op, defop, register  # noqa: F401
from .._rule_api import is_tracked  # noqa: F401
from .._tensor import Tensor  # noqa: F401

__all__ = [
    "gammaln", "gamma", "loggamma", "digamma", "psi", "polygamma", "multigammaln",
    "betaln", "beta", "erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtr", "ndtri",
    "log_ndtr", "expit", "logit", "log_expit", "xlogy", "xlog1py", "entr", "rel_entr",
    "kl_div", "huber", "pseudo_huber", "i0", "i0e", "i1", "i1e", "sinc", "zeta",
    "gammainc", "gammaincc", "betainc", "betaincc", "stdtr", "spence", "softplus",
    "logsumexp", "softmax", "log_softmax", "rgamma", "cbrt", "exp2", "exp10", "cosm1", "exprel",
    "sindg", "cosdg", "tandg", "cotdg", "radian", "exp1", "expi", "expn", "j0", "j1", "y0",
    "y1", "k0", "k1", "k0e", "k1e", "boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p",
    "poch", "jv", "jn", "yv", "yn", "iv", "ive", "kv", "kn", "kve", "spherical_jn", "spherical_yn",
    "gammasgn",
]

# the public functions belong to tenferro.special (as before the split): the API pages and
# NumPy's dispatch messages name this module
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name

# the numpydoc sections of the functions written by hand (the factories render the others)
from ._docs import document as _document  # noqa: E402
_document(globals())
