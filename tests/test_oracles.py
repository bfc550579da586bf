"""Conformance replay of the shared reference derivatives (../shared/oracles).

Each line of ``cases/<op>/*.jsonl`` is one case built from PyTorch's OpInfo samples, with
reference JVPs, VJPs and HVPs from PyTorch and from central finite differences (see the
folder's README.md). One pytest case per case id replays every probe through tenferro:

* jvp: ``tf.jvp(f, inputs, direction)``;
* vjp: ``tf.grad(outputs, inputs, cotangent)``;
* hvp: H·v of φ(x) = Re⟨ȳ, f(x)⟩ by forward-over-reverse (``tf.hvp``),

each compared with ``pytorch_ref`` and ``fd_ref`` under the case's ``comparison``
tolerances (rtol capped at ``ORACLE_RTOL_CAP``), by ``tenferro.testing.replay_oracle_case``.
This file covers the elementwise ops and the reductions; cases of other ops
(linalg) are left to their own replay files and are not collected here.

The adapter below maps PyTorch's spelling to tenferro's. A keyword it does not know is an
error (raised, never skipped), so new oracle data cannot silently test less.
"""
import pytest

import tenferro as tf
from tenferro.testing import UnsupportedOracleCase as UnsupportedCase
from tenferro.testing import (assert_oracle_cases_cover, load_oracle_cases, oracle_axis,
                              oracle_case_id, oracle_dir, replay_oracle_case)
from tenferro.testing import oracle_kwargs as _take

ORACLES = oracle_dir(__file__)
if not (ORACLES / "cases").is_dir():
    pytest.skip(f"no oracle data at {ORACLES}", allow_module_level=True)


# ---- the adapter: PyTorch op name and arguments -> a function of tenferro Tensors --------

_UNARY = {
    "abs": tf.abs, "acos": tf.acos, "acosh": tf.acosh, "asin": tf.asin, "asinh": tf.asinh,
    "atan": tf.atan, "atanh": tf.atanh, "conj": tf.conj, "cos": tf.cos, "cosh": tf.cosh,
    "exp": tf.exp, "expm1": tf.expm1, "imag": tf.imag, "log": tf.log, "log1p": tf.log1p,
    "neg": tf.negative, "real": tf.real, "sin": tf.sin, "sinh": tf.sinh, "sqrt": tf.sqrt,
    "tan": tf.tan, "tanh": tf.tanh,
}
_BINARY = {
    "atan2": tf.atan2, "hypot": tf.hypot, "maximum": tf.maximum, "minimum": tf.minimum,
    "mul": tf.multiply, "pow": tf.pow, "true_divide": tf.divide,
}
# add/sub take PyTorch's `alpha`: a ± alpha·b
_ALPHA = {"add": tf.add, "sub": tf.subtract}
# reductions: PyTorch name -> tenferro function name (looked up at call time)
_REDUCE = {"sum": "sum", "mean": "mean", "prod": "prod", "amax": "max", "amin": "min",
           "var": "var", "std": "std"}
OPS = frozenset(_UNARY) | frozenset(_BINARY) | frozenset(_ALPHA) | frozenset(_REDUCE)


def _ddof(kw, case_id):
    """PyTorch's ``unbiased``/``correction`` -> NumPy's ``ddof`` (PyTorch's default is 1)."""
    if "unbiased" in kw and "correction" in kw:
        raise UnsupportedCase(f"{case_id}: both unbiased and correction given")
    if "unbiased" in kw:
        return 1 if kw["unbiased"] else 0
    c = kw.get("correction")
    return 1 if c is None else c


def make_fn(case):
    """A function of the case's input Tensors returning a tuple of observed outputs."""
    op, cid = case["op"], case["case_id"]
    args = list(case.get("op_args") or [])
    kw = dict(case.get("op_kwargs") or {})
    if case["observable"]["kind"] != "identity":
        raise UnsupportedCase(f"{cid}: observable {case['observable']['kind']!r}")
    if op in _UNARY or op in _BINARY:
        if args or kw:
            raise UnsupportedCase(f"{cid}: {op} with op_args={args} op_kwargs={kw}")
        fn = _UNARY.get(op) or _BINARY[op]
        return lambda *xs: (fn(*xs),)
    if op in _ALPHA:
        _take(kw, ("alpha",), cid)
        if args:
            raise UnsupportedCase(f"{cid}: {op} with op_args={args}")
        fn, alpha = _ALPHA[op], kw.get("alpha", 1)
        if alpha == 1:
            return lambda a, b: (fn(a, b),)
        # a Python scalar keeps b's precision, as PyTorch's alpha does
        return lambda a, b: (fn(a, alpha * b),)
    if op in _REDUCE:
        ndim = len(next(iter(case["inputs"].values()))["shape"])
        if len(args) > 1:
            raise UnsupportedCase(f"{cid}: {op} with op_args={args}")
        if args:
            if "dim" in kw:
                raise UnsupportedCase(f"{cid}: dim given twice")
            kw["dim"] = args[0]
        if op in ("var", "std"):
            _take(kw, ("dim", "keepdim", "unbiased", "correction"), cid)
        elif op == "prod":
            _take(kw, ("dim", "keepdim", "dtype"), cid)
            in_dtype = next(iter(case["inputs"].values()))["dtype"]
            if kw.get("dtype", in_dtype) != in_dtype:
                raise UnsupportedCase(f"{cid}: prod with dtype={kw['dtype']} "
                                      f"on a {in_dtype} input")
        else:
            _take(kw, ("dim", "keepdim"), cid)
        axis = oracle_axis(kw.get("dim"), ndim, cid)
        keepdims = bool(kw.get("keepdim", False))
        name = _REDUCE[op]
        if op in ("var", "std"):
            ddof = _ddof(kw, cid)
            return lambda x: (getattr(tf, name)(x, axis=axis, ddof=ddof, keepdims=keepdims),)
        return lambda x: (getattr(tf, name)(x, axis=axis, keepdims=keepdims),)
    raise UnsupportedCase(f"{cid}: op {op!r} is not covered by this adapter")


# ---- reading cases ----------------------------------------------------------------------

# sorted: the order of the case files on disk
CASES = load_oracle_cases(sorted(OPS), ORACLES)


def test_cases_found():
    """The replay really runs: every op family of this file has cases on disk."""
    assert_oracle_cases_cover(CASES, OPS)


@pytest.mark.parametrize("case", CASES, ids=oracle_case_id)
def test_oracle(case):
    replay_oracle_case(case, make_fn(case))
