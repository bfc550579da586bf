"""The numpydoc docstrings of tf.special (issue 31): the factories of ``_support`` render
theirs with ``generated`` from the name, the argument names and the derivative note each
family module passes; ``document`` adds the sections of the functions written by hand.
The examples are in ``tenferro._ops._doc_examples``."""
from __future__ import annotations

from typing import Any, Sequence

from .._ops._docs import describe, example, numpydoc

# what each function computes (the summary line)
SUMMARY = {
    "gammaln": "Logarithm of the absolute value of the gamma function, log|Γ(x)|",
    "gamma": "The gamma function Γ(x)",
    "loggamma": "The principal branch of the logarithm of the gamma function",
    "digamma": "The digamma function ψ(x) = Γ'(x)/Γ(x) (also ``psi``)",
    "betaln": "Logarithm of the absolute value of the beta function, log|B(a, b)|",
    "beta": "The beta function B(a, b) = Γ(a)Γ(b)/Γ(a+b)",
    "rgamma": "The reciprocal gamma function 1/Γ(z)",
    "poch": "The Pochhammer symbol (z)ₘ = Γ(z+m)/Γ(z)",
    "erf": "The error function erf(x) = 2/√π ∫₀ˣ e^(−t²) dt",
    "erfc": "The complementary error function 1 − erf(x)",
    "erfcx": "The scaled complementary error function e^(x²)·erfc(x)",
    "erfinv": "The inverse of the error function",
    "erfcinv": "The inverse of the complementary error function",
    "ndtr": "The standard normal cumulative distribution function Φ(x)",
    "ndtri": "The inverse of ndtr: the standard normal quantile Φ⁻¹(p)",
    "log_ndtr": "The logarithm of the standard normal cdf, log Φ(x)",
    "expit": "The logistic sigmoid 1/(1 + e^(−x))",
    "logit": "The log-odds log(p/(1 − p)), the inverse of expit",
    "log_expit": "The logarithm of the logistic sigmoid, −log(1 + e^(−x))",
    "xlogy": "x·log(y), 0 where x = 0",
    "xlog1py": "x·log(1 + y), 0 where x = 0",
    "entr": "The elementwise entropy −x·log(x) (0 at 0, −inf for x < 0)",
    "rel_entr": "The relative entropy x·log(x/y) (elementwise)",
    "kl_div": "The Kullback-Leibler term x·log(x/y) − x + y (elementwise)",
    "huber": "The Huber loss: r²/2 for |r| <= δ, δ(|r| − δ/2) beyond",
    "pseudo_huber": "The pseudo-Huber loss δ²(√(1 + (r/δ)²) − 1)",
    "i0": "The modified Bessel function of the first kind of order 0, I₀(x)",
    "i0e": "The exponentially scaled modified Bessel function I₀(x)·e^(−|x|)",
    "i1": "The modified Bessel function of the first kind of order 1, I₁(x)",
    "i1e": "The exponentially scaled modified Bessel function I₁(x)·e^(−|x|)",
    "j0": "The Bessel function of the first kind of order 0, J₀(x)",
    "j1": "The Bessel function of the first kind of order 1, J₁(x)",
    "y0": "The Bessel function of the second kind of order 0, Y₀(x)",
    "y1": "The Bessel function of the second kind of order 1, Y₁(x)",
    "k0": "The modified Bessel function of the second kind of order 0, K₀(x)",
    "k1": "The modified Bessel function of the second kind of order 1, K₁(x)",
    "k0e": "The exponentially scaled modified Bessel function K₀(x)·e^x",
    "k1e": "The exponentially scaled modified Bessel function K₁(x)·e^x",
    "jv": "The Bessel function of the first kind of real order, J_v(x) (also ``jn``)",
    "yv": "The Bessel function of the second kind of real order, Y_v(x)",
    "yn": "The Bessel function of the second kind of integer order, Y_n(x)",
    "iv": "The modified Bessel function of the first kind of real order, I_v(x)",
    "ive": "The exponentially scaled modified Bessel function I_v(x)·e^(−|x|)",
    "kv": "The modified Bessel function of the second kind of real order, K_v(x)",
    "kn": "The modified Bessel function of the second kind of integer order, K_n(x)",
    "kve": "The exponentially scaled modified Bessel function K_v(x)·e^x",
    "gammasgn": "The sign of the gamma function, sign Γ(x)",
    "sinc": "The normalized sinc function sin(πx)/(πx) (1 at 0)",
    "cbrt": "The real cube root",
    "exp2": "2 to the power x",
    "exp10": "10 to the power x",
    "cosm1": "cos(x) − 1, accurate near 0",
    "exprel": "The relative error exponential (eˣ − 1)/x (1 at 0)",
    "sindg": "The sine of an angle in degrees",
    "cosdg": "The cosine of an angle in degrees",
    "tandg": "The tangent of an angle in degrees",
    "cotdg": "The cotangent of an angle in degrees",
    "radian": "An angle in degrees, minutes and seconds, in radians",
    "boxcox": "The Box-Cox transformation (x^λ − 1)/λ (log x at λ = 0)",
    "boxcox1p": "The Box-Cox transformation of 1 + x",
    "inv_boxcox": "The inverse of the Box-Cox transformation",
    "inv_boxcox1p": "The inverse of boxcox1p",
    "spence": "Spence's function (the dilogarithm Li₂(1 − z))",
    "exp1": "The exponential integral E₁(z)",
    "expi": "The exponential integral Ei(z)",
    "gammainc": "The regularized lower incomplete gamma function P(a, x)",
    "gammaincc": "The regularized upper incomplete gamma function Q(a, x) = 1 − P(a, x)",
    "betainc": "The regularized incomplete beta function I_x(a, b)",
    "betaincc": "The complement of the regularized incomplete beta function, 1 − I_x(a, b)",
    "stdtr": "The cumulative distribution function of Student's t distribution",
}

# the arguments, by their SciPy names
ARGS = {
    "x": "The argument: a Tensor, NumPy array or Python scalar.",
    "z": "The argument: a Tensor, NumPy array or Python scalar.",
    "y": "The second argument; broadcasts against the first.",
    "a": "A shape parameter (differentiable).",
    "b": "A shape parameter (differentiable).",
    "m": "The second argument (differentiable).",
    "v": "The order, real; not differentiated (UnsupportedADError if it carries a "
         "derivative).",
    "n": "The order, an integer; not differentiated (UnsupportedADError if it carries a "
         "derivative).",
    "df": "The degrees of freedom, > 0 (differentiable; inf is the normal distribution).",
    "t": "The point at which the cdf is evaluated.",
    "delta": "The threshold δ (differentiable).",
    "r": "The residual (differentiable).",
    "lmbda": "The transformation parameter λ (differentiable).",
    "d": "Degrees.",
    "s": "Seconds.",
}
_PARAM_OVERRIDES = {("radian", "m"): "Minutes.", ("inv_boxcox", "y"): "The transformed value.",
                    ("inv_boxcox1p", "y"): "The transformed value.",
                    ("xlogy", "x"): "The factor x.", ("xlog1py", "x"): "The factor x.",
                    ("rel_entr", "x"): "The first argument.",
                    ("kl_div", "x"): "The first argument.",
                    ("betainc", "x"): "The upper limit, in [0, 1].",
                    ("betaincc", "x"): "The upper limit, in [0, 1].",
                    ("gammainc", "x"): "The upper limit, >= 0.",
                    ("gammaincc", "x"): "The upper limit, >= 0."}

_CITE = "(DLMF; docs/rules.md, special functions)"


def generated(name: str, argnames: Sequence[str], rule: str, complex_ok: bool,
              nondiff: Sequence[str] = ()) -> str:
    """The docstring of a function the ``_support`` factories build: ``rule`` is the
    derivative note the family module passes (DLMF equation numbers in brackets)."""
    summary = SUMMARY.get(name, f"``scipy.special.{name}``")
    kind = "real or complex" if complex_ok else "real"
    params = [(a, "array_like", _PARAM_OVERRIDES.get((name, a), ARGS.get(a, "")) +
               (f" {kind.capitalize()}." if a in ("x", "z") and len(argnames) == 1 else ""))
              for a in argnames]
    several = len(argnames) > 1
    ret = ("Tensor", f"``scipy.special.{name}({', '.join(argnames)})``"
           + (", of the broadcast shape" if several else ", x's shape")
           + "; NumPy 2's promotion (integer inputs become float64).")
    raises = []
    if not complex_ok:
        raises.append(("DTypeError", "If an input is complex."))
    if several:
        raises.append(("ShapeError", "If the arguments do not broadcast."))
    if nondiff:
        raises.append(("UnsupportedADError",
                       f"If ``{'``, ``'.join(nondiff)}`` carries a derivative."))
    return numpydoc(f"{summary} (``scipy.special.{name}``), differentiable.", params, [ret],
                    raises, f"Derivative: {rule} {_CITE}.",
                    example(f"tenferro.special.{name}"))


def _order_doc(what: str) -> list[tuple[str, str, str]]:
    return [("n", "array_like", "The order, a non-negative integer (array); not "
                                "differentiated."),
            ("x", "array_like", what)]


def document(ns: dict[str, Any]) -> None:
    """The sections of the functions written by hand (their prose stays the summary)."""
    q = "tenferro.special."
    no_ad = ("UnsupportedADError", "If ``n`` carries a derivative.")
    describe(ns["polygamma"], _order_doc("The argument, real or complex."),
             [("Tensor", "ψ⁽ⁿ⁾(x), of the broadcast shape.")],
             raises=[no_ad, ("ShapeError", "If n and x do not broadcast.")],
             notes="Derivative: d/dx ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x) [DLMF 5.15].",
             qualname=q + "polygamma")
    describe(ns["multigammaln"],
             [("a", "array_like", "The argument (differentiable); every entry > (d − 1)/2."),
              ("d", "int", "The dimension, a positive integer.")],
             [("Tensor", "log Γ_d(a), a's shape.")],
             raises=[("ShapeError", "If d is not a positive integer or an entry of a is <= "
                                    "(d − 1)/2 (SciPy's ValueError; ShapeError is one)."),
                     ("DTypeError", "If a is complex.")],
             notes="Derivative: Σⱼ ψ(a − (j−1)/2) [DLMF 35.3.4].",
             qualname=q + "multigammaln")
    describe(ns["zeta"],
             [("x", "array_like", "The exponent; not differentiated."),
              ("q", "array_like, optional", "The shift (differentiable). Default None: "
                                            "Riemann's zeta.")],
             [("Tensor", "ζ(x, q), of the broadcast shape.")],
             raises=[("UnsupportedADError", "If ``x`` carries a derivative."),
                     ("DTypeError", "If q is given and an input is complex.")],
             notes="Derivative: ∂q ζ(x, q) = −x·ζ(x+1, q) [DLMF 25.11.17].",
             qualname=q + "zeta")
    describe(ns["expn"], _order_doc("The argument, real (differentiable)."),
             [("Tensor", "Eₙ(x), of the broadcast shape.")],
             raises=[no_ad, ("DTypeError", "If x is complex.")],
             notes="Derivative: d/dx Eₙ(x) = −Eₙ₋₁(x) [DLMF 8.19.13].",
             qualname=q + "expn")
    describe(ns["softplus"],
             [("x", "array_like", "The argument, real."),
              ("**kwargs", "", "Accepted for SciPy's signature; any keyword raises.")],
             [("Tensor", "log(1 + eˣ), x's shape.")],
             raises=[("TypeError", "If a ufunc keyword (out=, where=, ...) is given."),
                     ("DTypeError", "If x is complex.")],
             notes="Derivative: d/dx = expit(x) (docs/rules.md, Elementwise: logaddexp).",
             qualname=q + "softplus")
    axis = ("axis", "int or tuple of int, optional", "The axes to reduce; None (default): "
                                                     "all of them.")
    describe(ns["logsumexp"],
             [("a", "array_like", "The input, real or complex."), axis,
              ("b", "array_like, optional", "Weights (differentiable) broadcasting against "
                                            "``a``. Default None."),
              ("keepdims", "bool, optional", "Keep the reduced axes with length 1. Default "
                                             "False."),
              ("return_sign", "bool, optional", "Also return the sign of the sum. Default "
                                                "False.")],
             [("Tensor or tuple of Tensor", "log|Σ b·exp(a)|; with ``return_sign`` the pair "
                                            "(log|s|, sign(s)).")],
             raises=[("ShapeError", "If a and b do not broadcast.")],
             notes="Derivative: the softmax weights, ∂/∂aᵢ = bᵢ·exp(aᵢ − y) "
                   "(docs/rules.md, special functions).",
             qualname=q + "logsumexp")
    describe(ns["softmax"], [("x", "array_like", "The input."), axis],
             [("Tensor", "exp(x)/Σ exp(x), x's shape.")],
             notes="Derivative: the Jacobian diag(p) − p pᵀ along the axes "
                   "(a composition of exp, sum and divide).",
             qualname=q + "softmax")
    describe(ns["log_softmax"], [("x", "array_like", "The input."), axis],
             [("Tensor", "x − logsumexp(x), x's shape.")],
             notes="Derivative: I − 1 pᵀ along the axes, p = softmax(x) "
                   "(a composition of exp, sum and log).",
             qualname=q + "log_softmax")
    for name, f in (("spherical_jn", "jₙ"), ("spherical_yn", "yₙ")):
        describe(ns[name],
                 _order_doc("The argument, real (differentiable).")
                 + [("derivative", "bool, optional", f"Return {f}'(x) instead of {f}(x) "
                                                      "(itself differentiable). Default "
                                                      "False.")],
                 [("Tensor", f"{f}(x) (or {f}'(x)), of the broadcast shape.")],
                 raises=[no_ad, ("DTypeError", "If x is complex or n is not integer-valued.")],
                 notes=f"Derivative: {f}'(x) = (n·{f[0]}ₙ₋₁ − (n+1)·{f[0]}ₙ₊₁)/(2n+1) "
                       "[DLMF 10.51.2].",
                 qualname=q + name)
