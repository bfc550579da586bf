"""Conformance replay of the shared reference derivatives (../shared/oracles).

Each line of ``cases/<op>/*.jsonl`` is one case built from PyTorch's OpInfo samples, with
reference JVPs, VJPs and HVPs from PyTorch and from central finite differences (see the
folder's README.md). One pytest case per case id replays every probe through tenferro:

* jvp: ``tf.jvp(f, inputs, direction)``;
* vjp: ``tf.grad(outputs, inputs, cotangent)``;
* hvp: H·v of φ(x) = Re⟨ȳ, f(x)⟩ by forward-over-reverse (``tf.hvp``),

each compared with ``pytorch_ref`` and ``fd_ref`` under the case's ``comparison``
tolerances. This file covers the elementwise ops and the reductions; cases of other ops
(linalg) are left to their own replay files and are not collected here.

The adapter below maps PyTorch's spelling to tenferro's. A keyword it does not know is an
error (raised, never skipped), so new oracle data cannot silently test less.
"""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import assert_close_to_oracle, load_oracle_cases, oracle_dir, oracle_phi
from tenferro.testing import decode_oracle_tensor as decode

ORACLES = oracle_dir(__file__)
if not (ORACLES / "cases").is_dir():
    pytest.skip(f"no oracle data at {ORACLES}", allow_module_level=True)


class UnsupportedCase(Exception):
    """The case uses a PyTorch argument this adapter cannot express in tenferro."""


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


def _take(kwargs, allowed, case_id):
    unknown = set(kwargs) - set(allowed)
    if unknown:
        raise UnsupportedCase(f"{case_id}: op_kwargs {sorted(unknown)} have no tenferro "
                              f"equivalent in this adapter")
    return kwargs


def _axis(dim, ndim, case_id):
    """PyTorch ``dim`` -> NumPy ``axis``.

    PyTorch reduces over everything for dim=None and for an empty list, and accepts dim 0
    or -1 on a 0-d tensor (treating it as one element); NumPy spells all of these
    ``axis=None``.
    """
    if dim is None:
        return None
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if not dims:
        return None
    if ndim == 0:
        if all(d in (0, -1) for d in dims):
            return None
        raise UnsupportedCase(f"{case_id}: dim={dim!r} on a 0-d input")
    return dims if isinstance(dim, (list, tuple)) else dim


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
        axis = _axis(kw.get("dim"), ndim, cid)
        keepdims = bool(kw.get("keepdim", False))
        name = _REDUCE[op]
        if op in ("var", "std"):
            ddof = _ddof(kw, cid)
            return lambda x: (getattr(tf, name)(x, axis=axis, ddof=ddof, keepdims=keepdims),)
        return lambda x: (getattr(tf, name)(x, axis=axis, keepdims=keepdims),)
    raise UnsupportedCase(f"{cid}: op {op!r} is not covered by this adapter")


# ---- reading cases ----------------------------------------------------------------------

# sorted: the order of the case files on disk
CASES = [pytest.param(c, id=c["case_id"]) for c in load_oracle_cases(sorted(OPS), ORACLES)]


def _output_keys(n):
    return ["value"] if n == 1 else [f"output_{i}" for i in range(n)]


def test_cases_found():
    """The replay really runs: every op family of this file has cases on disk."""
    ops = {p.values[0]["op"] for p in CASES}
    assert ops == OPS, f"ops without oracle cases: {sorted(OPS - ops)}"


@pytest.mark.parametrize("case", CASES)
def test_oracle(case):
    assert case["expected_behavior"] == "success"   # error cases are linalg-only
    fn = make_fn(case)
    names = list(case["inputs"])
    primals = [decode(case["inputs"][k]) for k in names]
    first = case["comparison"]["first_order"]
    second = case["comparison"].get("second_order", first)
    for probe in case["probes"]:
        pid = f"{case['case_id']}/{probe['probe_id']}"
        refs = [("pytorch", probe["pytorch_ref"]), ("fd", probe["fd_ref"])]
        dirs = [decode(probe["direction"][k]) for k in names]
        n_out = len(probe["cotangent"])
        keys = _output_keys(n_out)
        cots = [decode(probe["cotangent"][k]) for k in keys]

        # forward mode
        _, tangents = tf.jvp(lambda *xs: fn(*xs), [tf.tensor(p) for p in primals],
                             [tf.tensor(d) for d in dirs])
        for key, t in zip(keys, tangents):
            for src, ref in refs:
                assert_close_to_oracle(t.numpy(), decode(ref["jvp"][key]), first,
                                       f"{pid}: jvp[{key}] vs {src}_ref")

        # reverse mode
        xs = [tf.tensor(p, requires_grad=True) for p in primals]
        outs = fn(*xs)
        grads = tf.grad(list(outs), xs, [tf.tensor(c) for c in cots])
        for name, x, g in zip(names, xs, grads):
            g = np.zeros_like(x.numpy()) if g is None else g.numpy()
            assert_close_to_oracle(g, decode(probe["pytorch_ref"]["vjp"][name]), first,
                                   f"{pid}: vjp[{name}] vs pytorch_ref")

        # second order: H·v of φ(x) = Re⟨ȳ, f(x)⟩, forward-over-reverse
        if "hvp" in probe["pytorch_ref"]:
            _, _, hvps = tf.hvp(oracle_phi(fn, cots), [tf.tensor(p) for p in primals],
                                [tf.tensor(d) for d in dirs])
            for name, h in zip(names, hvps):
                for src, ref in refs:
                    if "hvp" in ref:
                        assert_close_to_oracle(h.numpy(), decode(ref["hvp"][name]), second,
                                               f"{pid}: hvp[{name}] vs {src}_ref")
