"""Regenerate tenferro/_ops/_doc_examples.py: the ``>>>`` examples of the generated
docstrings (the elementwise functions, tf.special, tf.stats' distributions, tf.fft).

    python scripts/gen_doc_examples.py            # rewrite the file
    python scripts/gen_doc_examples.py --check    # exit 1 if the file is not up to date

Each example is a list of source lines below (``SPEC``); the script runs them in a fresh
namespace with ``np`` and ``tf`` and records what the interpreter prints, as a doctest
shows it. The grad_fn of a composite's result (the name of its last op, an implementation
detail) is elided to ``grad_fn=...``. scripts/check_docstrings.py then runs every example
as a doctest: a change in a value shows up there. To add an example, add its lines here
and rerun.
"""
import argparse
import re
import sys
from pathlib import Path

import numpy as np

import tenferro as tf

OUT = Path(__file__).resolve().parent.parent / "tenferro" / "_ops" / "_doc_examples.py"

# qualified name -> the lines of its example (None: an alias, documented by its target)
U = {  # elementwise unary: inputs
 "exp": "[0.0, 1.0]", "expm1": "[0.0, 1.0]", "log": "[1.0, 2.0]", "log1p": "[0.0, 1.0]",
 "log2": "[1.0, 4.0]", "log10": "[1.0, 100.0]", "sqrt": "[1.0, 4.0]", "sin": "[0.0, 1.0]",
 "cos": "[0.0, 1.0]", "tan": "[0.0, 0.5]", "tanh": "[0.0, 1.0]", "sinh": "[0.0, 1.0]",
 "cosh": "[0.0, 1.0]", "arcsin": "[0.0, 0.5]", "arccos": "[0.0, 0.5]", "arctan": "[0.0, 1.0]",
 "arcsinh": "[0.0, 1.0]", "arccosh": "[2.0, 3.0]", "arctanh": "[0.0, 0.5]",
 "square": "[1.0, 3.0]", "reciprocal": "[1.0, 2.0]", "abs": "[-2.0, 3.0]",
 "negative": "[1.0, -2.0]", "positive": "[1.0, -2.0]",
}
B = {  # elementwise binary: (a, b)
 "add": ("[1.0, 2.0]", "[3.0, 0.5]"), "subtract": ("[1.0, 2.0]", "[3.0, 0.5]"),
 "multiply": ("[1.0, 2.0]", "[3.0, 0.5]"), "divide": ("[1.0, 2.0]", "[4.0, 0.5]"),
 "power": ("[2.0, 3.0]", "[3.0, 0.5]"), "atan2": ("[1.0, 0.0]", "[1.0, 2.0]"),
 "hypot": ("[3.0, 5.0]", "[4.0, 12.0]"), "logaddexp": ("[0.0, 1.0]", "[0.0, -1.0]"),
 "copysign": ("[1.0, 2.0]", "[-1.0, 1.0]"), "remainder": ("[5.0, -5.0]", "[3.0, 3.0]"),
 "maximum": ("[1.0, 5.0, 2.0]", "[3.0, 0.5, 2.0]"), "minimum": ("[1.0, 5.0, 2.0]", "[3.0, 0.5, 2.0]"),
}
ND = {  # not differentiable: one line
 "equal": "tf.equal(tf.tensor([1, 2, 3]), 2)",
 "not_equal": "tf.not_equal(tf.tensor([1, 2, 3]), 2)",
 "less": "tf.less(tf.tensor([1, 2, 3]), 2)",
 "less_equal": "tf.less_equal(tf.tensor([1, 2, 3]), 2)",
 "greater": "tf.greater(tf.tensor([1, 2, 3]), 2)",
 "greater_equal": "tf.greater_equal(tf.tensor([1, 2, 3]), 2)",
 "logical_and": "tf.logical_and(tf.tensor([True, False]), True)",
 "logical_or": "tf.logical_or(tf.tensor([True, False]), False)",
 "logical_xor": "tf.logical_xor(tf.tensor([True, False]), True)",
 "logical_not": "tf.logical_not(tf.tensor([True, False]))",
 "bitwise_and": "tf.bitwise_and(tf.tensor([12, 10]), 6)",
 "bitwise_or": "tf.bitwise_or(tf.tensor([12, 10]), 6)",
 "bitwise_xor": "tf.bitwise_xor(tf.tensor([12, 10]), 6)",
 "bitwise_invert": "tf.bitwise_invert(tf.tensor([0, 5]))",
 "bitwise_left_shift": "tf.bitwise_left_shift(tf.tensor([1, 3]), 2)",
 "bitwise_right_shift": "tf.bitwise_right_shift(tf.tensor([8, -8]), 2)",
 "isnan": "tf.isnan(tf.tensor([1.0, np.nan, np.inf]))",
 "isinf": "tf.isinf(tf.tensor([1.0, np.nan, np.inf]))",
 "isfinite": "tf.isfinite(tf.tensor([1.0, np.nan, np.inf]))",
 "signbit": "tf.signbit(tf.tensor([-1.0, 0.0, -0.0]))",
 "nextafter": "tf.nextafter(tf.tensor([1.0]), 2.0) - 1.0",
}
SPEC = {}
for n, v in U.items():
    SPEC[f"tenferro.{n}"] = [f"x = tf.tensor({v}, requires_grad=True)", f"tf.{n}(x)",
                             f"tf.grad([tf.{n}(x).sum()], [x])[0]"]
for n, (a, b) in B.items():
    SPEC[f"tenferro.{n}"] = [f"a = tf.tensor({a}, requires_grad=True)",
                             f"b = tf.tensor({b}, requires_grad=True)", f"tf.{n}(a, b)",
                             f"tf.grad([tf.{n}(a, b).sum()], [a, b])"]
for n, line in ND.items():
    SPEC[f"tenferro.{n}"] = [line]
SPEC["tenferro.floor"] = ["tf.floor(tf.tensor([-1.5, 0.5, 2.0]))"]
SPEC["tenferro.ceil"] = ["tf.ceil(tf.tensor([-1.5, 0.5, 2.0]))"]
SPEC["tenferro.trunc"] = ["tf.trunc(tf.tensor([-1.5, 0.5, 2.0]))"]
SPEC["tenferro.round"] = ["x = tf.tensor([0.5, 1.5, 2.567], requires_grad=True)", "tf.round(x)",
                          "tf.round(x, decimals=1)", "tf.grad([tf.round(x).sum()], [x])[0]"]
SPEC["tenferro.floor_divide"] = ["tf.floor_divide(tf.tensor([7.0, -7.0]), 2.0)"]
SPEC["tenferro.sign"] = ["tf.sign(tf.tensor([-2.0, 0.0, 3.0]))", "tf.sign(tf.tensor([3 + 4j]))"]
SPEC["tenferro.conj"] = ["tf.conj(tf.tensor([1 + 2j]))"]
SPEC["tenferro.real"] = ["tf.real(tf.tensor([1 + 2j]))"]
SPEC["tenferro.imag"] = ["tf.imag(tf.tensor([1 + 2j]))"]
SPEC["tenferro.where"] = ["x = tf.tensor([1.0, -2.0, 3.0], requires_grad=True)",
                          "y = tf.where(x > 0, x, 0.0)", "y",
                          "tf.grad([y.sum()], [x])[0]"]
SPEC["tenferro.clip"] = ["x = tf.tensor([-2.0, 0.5, 3.0], requires_grad=True)",
                         "tf.clip(x, -1.0, 1.0)", "tf.grad([tf.clip(x, -1.0, 1.0).sum()], [x])[0]"]

# tf.special
SU = {
 "gammaln": "[0.5, 3.0]", "gamma": "[0.5, 3.0]", "loggamma": "[0.5, 3.0]", "digamma": "[1.0, 2.0]",
 "rgamma": "[0.5, 3.0]", "erf": "[0.0, 0.5]", "erfc": "[0.0, 0.5]", "erfcx": "[0.0, 1.0]",
 "erfinv": "[0.0, 0.5]", "erfcinv": "[1.0, 0.5]", "ndtr": "[0.0, 1.0]", "ndtri": "[0.5, 0.975]",
 "log_ndtr": "[0.0, -3.0]", "expit": "[0.0, 2.0]", "logit": "[0.5, 0.9]", "log_expit": "[0.0, -2.0]",
 "entr": "[0.5, 1.0]", "i0": "[0.0, 1.0]", "i0e": "[0.0, 1.0]", "i1": "[0.0, 1.0]", "i1e": "[0.0, 1.0]",
 "j0": "[0.0, 1.0]", "j1": "[0.0, 1.0]", "y0": "[1.0, 2.0]", "y1": "[1.0, 2.0]", "k0": "[1.0, 2.0]",
 "k1": "[1.0, 2.0]", "k0e": "[1.0, 2.0]", "k1e": "[1.0, 2.0]", "gammasgn": "[-0.5, 2.0]",
 "sinc": "[0.0, 0.5]", "cbrt": "[8.0, 27.0]", "exp2": "[0.0, 3.0]", "exp10": "[0.0, 2.0]",
 "cosm1": "[0.0, 1.0]", "exprel": "[0.0, 1.0]", "sindg": "[0.0, 90.0]", "cosdg": "[0.0, 90.0]",
 "tandg": "[0.0, 45.0]", "cotdg": "[45.0, 90.0]", "spence": "[1.0, 2.0]", "exp1": "[1.0, 2.0]",
 "expi": "[1.0, 2.0]", "softplus": "[0.0, 1.0]",
}
SB = {
 "betaln": ("[1.0, 2.0]", "[2.0, 3.0]"), "beta": ("[1.0, 2.0]", "[2.0, 3.0]"),
 "poch": ("[1.0, 2.0]", "[2.0, 3.0]"),
 "xlogy": ("[0.0, 2.0]", "[1.0, 3.0]"), "xlog1py": ("[0.0, 2.0]", "[1.0, 3.0]"),
 "rel_entr": ("[0.5, 1.0]", "[1.0, 0.5]"), "kl_div": ("[0.5, 1.0]", "[1.0, 0.5]"),
 "huber": ("[1.0, 1.0]", "[0.5, 3.0]"), "pseudo_huber": ("[1.0, 1.0]", "[0.5, 3.0]"),
 "gammainc": ("[1.0, 2.0]", "[1.0, 1.0]"), "gammaincc": ("[1.0, 2.0]", "[1.0, 1.0]"),
 "stdtr": ("[1.0, 10.0]", "[0.0, 1.0]"), "boxcox": ("[1.0, 4.0]", "[0.5, 0.5]"),
 "boxcox1p": ("[0.0, 3.0]", "[0.5, 0.5]"), "inv_boxcox": ("[0.0, 2.0]", "[0.5, 0.5]"),
 "inv_boxcox1p": ("[0.0, 2.0]", "[0.5, 0.5]"),
}
SO = {  # order first: only x differentiated
 "jv": ("[0.0, 1.5]", "[1.0, 2.0]"), "yv": ("[0.0, 1.5]", "[1.0, 2.0]"),
 "yn": ("[0, 1]", "[1.0, 2.0]"), "iv": ("[0.0, 1.5]", "[1.0, 2.0]"),
 "ive": ("[0.0, 1.5]", "[1.0, 2.0]"), "kv": ("[0.0, 1.5]", "[1.0, 2.0]"),
 "kn": ("[0, 1]", "[1.0, 2.0]"), "kve": ("[0.0, 1.5]", "[1.0, 2.0]"),
 "polygamma": ("[0, 1]", "[1.0, 2.0]"), "expn": ("[1, 2]", "[1.0, 2.0]"),
 "spherical_jn": ("[0, 1]", "[1.0, 2.0]"), "spherical_yn": ("[0, 1]", "[1.0, 2.0]"),
}
for n, v in SU.items():
    SPEC[f"tenferro.special.{n}"] = [f"x = tf.tensor({v}, requires_grad=True)", f"tf.special.{n}(x)",
                                     f"tf.grad([tf.special.{n}(x).sum()], [x])[0]"]
for n, (a, b) in SB.items():
    SPEC[f"tenferro.special.{n}"] = [f"a = tf.tensor({a}, requires_grad=True)",
                                     f"b = tf.tensor({b}, requires_grad=True)",
                                     f"tf.special.{n}(a, b)",
                                     f"tf.grad([tf.special.{n}(a, b).sum()], [a, b])"]
for n, (a, b) in SO.items():
    SPEC[f"tenferro.special.{n}"] = [f"x = tf.tensor({b}, requires_grad=True)",
                                     f"tf.special.{n}({a}, x)",
                                     f"tf.grad([tf.special.{n}({a}, x).sum()], [x])[0]"]
SPEC["tenferro.special.jn"] = None  # alias of jv: same object
SPEC["tenferro.special.psi"] = None
SPEC["tenferro.special.zeta"] = ["q = tf.tensor([1.0, 2.0], requires_grad=True)",
                                 "tf.special.zeta(2.0, q)", "tf.grad([tf.special.zeta(2.0, q).sum()], [q])[0]"]
SPEC["tenferro.special.multigammaln"] = ["a = tf.tensor([2.0, 3.0], requires_grad=True)",
                                         "tf.special.multigammaln(a, 2)",
                                         "tf.grad([tf.special.multigammaln(a, 2).sum()], [a])[0]"]
SPEC["tenferro.special.betainc"] = ["x = tf.tensor([0.25, 0.5], requires_grad=True)",
                                    "tf.special.betainc(2.0, 3.0, x)",
                                    "tf.grad([tf.special.betainc(2.0, 3.0, x).sum()], [x])[0]"]
SPEC["tenferro.special.betaincc"] = ["x = tf.tensor([0.25, 0.5], requires_grad=True)",
                                     "tf.special.betaincc(2.0, 3.0, x)",
                                     "tf.grad([tf.special.betaincc(2.0, 3.0, x).sum()], [x])[0]"]
SPEC["tenferro.special.radian"] = ["tf.special.radian(180.0, 0.0, 0.0)"]
SPEC["tenferro.special.logsumexp"] = ["a = tf.tensor([0.0, 1.0, 2.0], requires_grad=True)",
                                      "tf.special.logsumexp(a)",
                                      "tf.grad([tf.special.logsumexp(a)], [a])[0]  # softmax(a)"]
SPEC["tenferro.special.softmax"] = ["x = tf.tensor([0.0, 1.0, 2.0], requires_grad=True)",
                                    "tf.special.softmax(x)",
                                    "tf.grad([tf.special.softmax(x)[2]], [x])[0]"]
SPEC["tenferro.special.log_softmax"] = ["x = tf.tensor([0.0, 1.0, 2.0], requires_grad=True)",
                                        "tf.special.log_softmax(x)",
                                        "tf.grad([tf.special.log_softmax(x)[2]], [x])[0]"]
# stats
ST = {
 "norm": ["x = tf.tensor([0.0, 1.0], requires_grad=True)", "tf.stats.norm.logpdf(x)",
          "tf.grad([tf.stats.norm.logpdf(x).sum()], [x])[0]  # -x",
          "tf.stats.norm(1.0, 2.0).cdf(1.0)"],
 "t": ["tf.stats.t.cdf(0.0, 3.0)", "tf.stats.t.logpdf(tf.tensor([0.0, 1.0]), 3.0)"],
 "gamma": ["a = tf.tensor(2.0, requires_grad=True)", "tf.stats.gamma.logpdf(1.0, a)",
           "tf.grad([tf.stats.gamma.logpdf(1.0, a)], [a])[0]  # -digamma(2)"],
 "beta": ["a = tf.tensor(2.0, requires_grad=True)", "tf.stats.beta.pdf(0.5, a, 2.0)",
          "tf.grad([tf.stats.beta.cdf(0.5, a, 2.0)], [a])[0]"],
 "poisson": ["mu = tf.tensor(2.0, requires_grad=True)", "tf.stats.poisson.logpmf(3, mu)",
             "tf.grad([tf.stats.poisson.logpmf(3, mu)], [mu])[0]  # 3/mu - 1"],
 "expon": ["tf.stats.expon.logpdf(tf.tensor([0.0, 1.0]), scale=2.0)"],
 "laplace": ["tf.stats.laplace.logpdf(tf.tensor([0.0, 1.0]))"],
 "cauchy": ["tf.stats.cauchy.cdf(tf.tensor([0.0, 1.0]))"],
 "logistic": ["tf.stats.logistic.cdf(tf.tensor([0.0, 1.0]))"],
 "lognorm": ["tf.stats.lognorm.pdf(1.0, 0.5)"],
 "uniform": ["tf.stats.uniform.cdf(tf.tensor([0.25, 2.0]), 0.0, 1.0)"],
 "chi2": ["tf.stats.chi2.cdf(2.0, 2.0)"],
 "chi": ["tf.stats.chi.pdf(1.0, 3.0)"],
 "f": ["tf.stats.f.cdf(1.0, 5.0, 10.0)"],
 "rayleigh": ["tf.stats.rayleigh.cdf(1.0)"],
 "weibull_min": ["tf.stats.weibull_min.cdf(1.0, 2.0)"],
 "pareto": ["tf.stats.pareto.cdf(2.0, 3.0)"],
 "vonmises": ["tf.stats.vonmises.logpdf(0.0, 2.0)"],
 "binom": ["tf.stats.binom.pmf(tf.tensor([0, 1, 2]), 2, 0.5)"],
 "bernoulli": ["p = tf.tensor(0.3, requires_grad=True)", "tf.stats.bernoulli.entropy(p)",
               "tf.grad([tf.stats.bernoulli.logpmf(1, p)], [p])[0]  # 1/p"],
 "geom": ["tf.stats.geom.pmf(tf.tensor([1, 2, 3]), 0.5)"],
 "nbinom": ["tf.stats.nbinom.pmf(0, 2.0, 0.5)"],
 "multivariate_normal": ["x = tf.tensor([1.0, 0.0], requires_grad=True)",
                         "cov = tf.tensor([[2.0, 0.0], [0.0, 1.0]])",
                         "tf.stats.multivariate_normal.logpdf(x, [0.0, 0.0], cov)",
                         "tf.grad([tf.stats.multivariate_normal.logpdf(x, [0.0, 0.0], cov)], [x])[0]"],
 "dirichlet": ["tf.stats.dirichlet.logpdf(tf.tensor([0.2, 0.3, 0.5]), tf.tensor([1.0, 2.0, 3.0]))"],
}
for n, v in ST.items():
    SPEC[f"tenferro.stats.{n}"] = v
# fft
SPEC["tenferro.fft.fft"] = ["x = tf.tensor([1.0, 2.0, 0.0, -1.0], requires_grad=True)", "tf.fft.fft(x)",
                            "tf.grad([tf.fft.fft(x).real.sum()], [x])[0]"]
SPEC["tenferro.fft.ifft"] = ["tf.fft.ifft(tf.fft.fft(tf.tensor([1.0, 2.0, 0.0, -1.0]))).real"]
SPEC["tenferro.fft.fftn"] = ["tf.fft.fftn(tf.tensor([[1.0, 2.0], [3.0, 4.0]]))"]
SPEC["tenferro.fft.ifftn"] = ["tf.fft.ifftn(tf.tensor([[10.0, -2.0], [-4.0, 0.0]])).real"]
SPEC["tenferro.fft.rfft"] = ["x = tf.tensor([1.0, 2.0, 0.0, -1.0], requires_grad=True)", "tf.fft.rfft(x)",
                             "tf.grad([tf.fft.rfft(x).real.sum()], [x])[0]"]
SPEC["tenferro.fft.irfft"] = ["tf.fft.irfft(tf.fft.rfft(tf.tensor([1.0, 2.0, 0.0, -1.0])))"]
SPEC["tenferro.fft.rfftn"] = ["tf.fft.rfftn(tf.tensor([[1.0, 2.0], [3.0, 4.0]]))"]
SPEC["tenferro.fft.irfftn"] = ["tf.fft.irfftn(tf.fft.rfftn(tf.tensor([[1.0, 2.0], [3.0, 4.0]])), s=(2, 2), axes=(0, 1))"]
SPEC["tenferro.fft.hfft"] = ["tf.fft.hfft(tf.tensor([1.0, 2.0, 3.0]))"]
SPEC["tenferro.fft.ihfft"] = ["tf.fft.ihfft(tf.tensor([1.0, 2.0, 3.0, 4.0]))"]
SPEC["tenferro.fft.fftfreq"] = ["tf.fft.fftfreq(4)", "tf.fft.fftfreq(5, d=0.5)"]
SPEC["tenferro.fft.rfftfreq"] = ["tf.fft.rfftfreq(4)"]
SPEC["tenferro.fft.fftshift"] = ["tf.fft.fftshift(tf.fft.fftfreq(5))"]
SPEC["tenferro.fft.ifftshift"] = ["tf.fft.ifftshift(tf.fft.fftshift(tf.fft.fftfreq(5)))"]
for n in ("dct", "dst"):
    SPEC[f"tenferro.fft.{n}"] = ["x = tf.tensor([1.0, 0.0, 0.0], requires_grad=True)",
                                 f"tf.fft.{n}(x, norm='ortho')",
                                 f"tf.grad([tf.fft.{n}(x, norm='ortho')[0]], [x])[0]"]
    SPEC[f"tenferro.fft.i{n}"] = [f"tf.fft.i{n}(tf.fft.{n}(tf.tensor([1.0, 2.0, 3.0])))"]
    SPEC[f"tenferro.fft.{n}n"] = [f"tf.fft.{n}n(tf.tensor([[1.0, 2.0], [3.0, 4.0]]), norm='ortho')"]
    SPEC[f"tenferro.fft.i{n}n"] = [f"tf.fft.i{n}n(tf.fft.{n}n(tf.tensor([[1.0, 2.0], [3.0, 4.0]])))"]


def render():
    """(the module's text, [(qualname, error)] of the examples that raised)."""
    out, bad = {}, []
    for q, lines in SPEC.items():
        if lines is None:
            continue
        g = {"np": np, "tf": tf}
        text = []
        try:
            for line in lines:
                text.append(">>> " + line)
                code = line.split("  #")[0]
                try:
                    value = eval(compile(code, "<example>", "eval"), g)
                    if value is not None:
                        text.append(repr(value))
                except SyntaxError:
                    exec(compile(code, "<example>", "exec"), g)
        except Exception as e:      # reported, not written
            bad.append((q, repr(e)))
            continue
        short = q.rsplit(".", 1)[1]
        t = "\n".join(text)
        # a composite's last op (subtract, reshape, ...) is an implementation detail
        t = re.sub(r"grad_fn=([A-Za-z_.0-9]+)\)",
                   lambda m: m.group(0) if short in m.group(1) else "grad_fn=...)", t)
        out[q] = t
    parts = ['"""The ``>>>`` examples of the generated docstrings (tenferro._ops._docs renders '
             'them\nunder "Examples"), by qualified name. Written by scripts/gen_doc_examples.py '
             '(edit the\nexamples there); scripts/check_docstrings.py runs every one as a '
             'doctest."""\n\n', "EXAMPLES: dict[str, str] = {\n"]
    for q, t in out.items():
        parts.append(f"    {q!r}: (\n")
        for ln in t.split("\n"):
            parts.append(f"        {ln + chr(10)!r}\n")
        parts.append("    ),\n")
    parts.append("}\n")
    return "".join(parts), bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = ap.parse_args()
    text, bad = render()
    for q, e in bad:
        print(f"{q}: the example raised {e}", file=sys.stderr)
    if args.check:
        same = OUT.read_text() == text
        print(f"{OUT.name}: {'up to date' if same else 'STALE (rerun without --check)'}")
        return 0 if same and not bad else 1
    OUT.write_text(text)
    print(f"wrote {OUT} ({text.count(chr(10) + '    ' + chr(39))} examples)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
