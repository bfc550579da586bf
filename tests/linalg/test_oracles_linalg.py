"""Conformance replay of the shared reference derivatives for the linalg decompositions.

Each line of ``../shared/oracles/cases/<op>/*.jsonl`` is one case built from PyTorch's
OpInfo samples, with reference JVPs, VJPs and HVPs from PyTorch and from central finite
differences (see the folder's README.md). One pytest case per case id replays every probe
through tenferro, as tests/test_oracles.py does for the elementwise ops:

* jvp: ``tf.jvp(f, inputs, direction)``;
* vjp: ``tf.grad(outputs, inputs, cotangent)``;
* hvp: H·v of φ(x) = Re⟨ȳ, f(x)⟩ by forward-over-reverse (``tf.hvp``),

each compared with ``pytorch_ref`` and ``fd_ref`` under the case's tolerances (by
``tenferro.testing.replay_oracle_case``). ``f`` is the
op followed by the case's observable (README "A case"): identity, s, |U|, (s, |Vh|),
(s, U Vh) with U, Vh cut to k = min(m, n) columns/rows, or (values, |vectors|) — the
gauge-free parts of the decompositions. eigh, eigvalsh and cholesky act on the Hermitian
wrapper a + aᴴ, differentiated through.

``expected_behavior: "error"`` cases (gauge_ill_defined) carry no probes: they replay the
loss of their PyTorch source test, which depends on the free phase of complex vectors, and
reverse mode must raise ``tf.GaugeError`` (forward mode has no cotangent to check).

The adapter maps PyTorch's spelling to tenferro's; an argument it cannot express raises
UnsupportedCase (never a skip), so new oracle data cannot silently test less.
"""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import UnsupportedOracleCase as UnsupportedCase
from tenferro.testing import (assert_oracle_cases_cover, load_oracle_cases, oracle_case_id,
                              oracle_dir, replay_oracle_case)
from tenferro.testing import decode_oracle_tensor as decode
from tenferro.testing import oracle_kwargs as _take

ORACLES = oracle_dir(__file__)
if not (ORACLES / "cases").is_dir():
    pytest.skip(f"no oracle data at {ORACLES}", allow_module_level=True)

# op folder -> the families (file stems) that must hold cases
FAMILIES = {
    "svd": {"s", "u_abs", "vh_abs", "uvh_product", "gauge_ill_defined"},
    "svdvals": {"identity"},
    "eigh": {"values_vectors_abs", "gauge_ill_defined"},
    "eigvalsh": {"identity"},
    "qr": {"identity"},
    "lu": {"identity"},
    "cholesky": {"identity"},
    "eig": {"values_vectors_abs"},
    "eigvals": {"identity"},
}


# ---- the adapter: PyTorch op, arguments and observable -> a function of a Tensor --------

def _linalg(name):
    fn = getattr(tf.linalg, name, None)
    if not callable(fn):
        raise AttributeError(f"tf.linalg.{name} is not implemented (found {fn!r})")
    return fn


def _herm(a):
    """The README's Hermitian wrapper a + aᴴ (the direction is a tangent of raw a)."""
    return a + a.mH


def make_fn(case):
    """``(keys, f)``: f(a) is the tuple of observed outputs, named ``keys`` as in the probes."""
    op, cid, kind = case["op"], case["case_id"], case["observable"]["kind"]
    if case.get("op_args"):
        raise UnsupportedCase(f"{cid}: op_args {case['op_args']}")
    kw = dict(case.get("op_kwargs") or {})
    wants = {"svd": "svd_", "eigh": "eigh_", "eig": "eig_"}.get(op, "identity")
    if not kind.startswith(wants) or (wants == "identity") != (kind == "identity"):
        raise UnsupportedCase(f"{cid}: observable {kind!r} for op {op!r}")

    if op == "svd":
        _take(kw, ("full_matrices",), cid)
        full = bool(kw.get("full_matrices", True))  # PyTorch's default
        svd = _linalg("svd")

        def cut(a):
            u, s, vt = svd(a, full_matrices=full)
            k = s.shape[-1]
            return u[..., :, :k], s, vt[..., :k, :]

        if kind == "svd_s":
            # s alone: the exact path that builds no F (docs/design.md#spectral-gaps)
            return ["s"], lambda a: (svd(a, full_matrices=full)[1],)
        if kind == "svd_u_abs":
            return ["u"], lambda a: (tf.abs(cut(a)[0]),)
        if kind == "svd_vh_abs":
            return ["s", "vh"], lambda a: (lambda u, s, vt: (s, tf.abs(vt)))(*cut(a))
        if kind == "svd_uvh_product":
            return ["s", "uvh"], lambda a: (lambda u, s, vt: (s, u @ vt))(*cut(a))
    elif op in ("eigh", "eigvalsh"):
        uplo = _take(kw, ("UPLO",), cid).get("UPLO", "L")
        if op == "eigvalsh":
            fn = _linalg("eigvalsh")
            return ["value"], lambda a: (fn(_herm(a), UPLO=uplo),)
        if kind == "eigh_values_vectors_abs":
            fn = _linalg("eigh")
            return ["values", "vectors"], lambda a: (lambda w, v: (w, tf.abs(v)))(
                *fn(_herm(a), UPLO=uplo))
    elif op == "cholesky":
        upper = bool(_take(kw, ("upper",), cid).get("upper", False))
        fn = _linalg("cholesky")
        return ["value"], lambda a: (fn(_herm(a), upper=upper),)
    elif op == "eig":
        if kind == "eig_values_vectors_abs":
            fn = _linalg("eig")
            _take(kw, (), cid)
            return ["values", "vectors"], lambda a: (lambda w, v: (w, tf.abs(v)))(*fn(a))
    elif op in ("svdvals", "eigvals"):
        _take(kw, (), cid)
        fn = _linalg(op)
        return ["value"], lambda a: (fn(a),)
    elif op == "qr":
        mode = _take(kw, ("mode",), cid).get("mode", "reduced")
        if mode not in ("reduced", "complete"):
            raise UnsupportedCase(f"{cid}: qr mode={mode!r} (PyTorch returns an empty Q)")
        fn = _linalg("qr")
        return ["output_0", "output_1"], lambda a: tuple(fn(a, mode=mode))
    elif op == "lu":
        if not _take(kw, ("pivot",), cid).get("pivot", True):
            raise UnsupportedCase(f"{cid}: lu pivot=False has no tenferro equivalent")
        fn = _linalg("lu")
        # PyTorch's (P, L, U): P is discrete, so the probes name only output_1/2
        return ["output_1", "output_2"], lambda a: tuple(fn(a)[1:])
    raise UnsupportedCase(f"{cid}: op {op!r} with observable {kind!r} is not covered")


def gauge_loss(case):
    """The phase-dependent loss of PyTorch's test_invariance_error_spectral_decompositions,
    the source of the gauge_ill_defined cases (their probes are empty)."""
    op, cid = case["op"], case["case_id"]
    _take(dict(case.get("op_kwargs") or {}), (), cid)
    if op == "svd":
        def loss(a):
            u, _, vt = _linalg("svd")(a, full_matrices=False)
            return tf.abs(tf.sum(u) + tf.sum(vt))
    elif op == "eigh":
        def loss(a):
            return tf.abs(tf.sum(_linalg("eigh")(_herm(a))[1]))
    elif op == "eig":
        def loss(a):
            return tf.abs(tf.sum(_linalg("eig")(a)[1]))
    else:
        raise UnsupportedCase(f"{cid}: no gauge loss for op {op!r}")
    return loss


# ---- reading cases ----------------------------------------------------------------------

def _load_cases():
    out = {"success": [], "error": []}
    for case in load_oracle_cases(FAMILIES, ORACLES):
        out[case["expected_behavior"]].append(case)
    return out


CASES = _load_cases()     # an unknown expected_behavior is a KeyError at collection


def test_cases_found():
    """The replay really runs: every op family of this file has cases on disk."""
    assert_oracle_cases_cover(CASES["success"] + CASES["error"], FAMILIES)


@pytest.mark.parametrize("case", CASES["success"], ids=oracle_case_id)
def test_oracle(case):
    keys, fn = make_fn(case)
    assert list(case["inputs"]) == ["a"]          # every linalg case has one input, "a"
    replay_oracle_case(case, fn, keys)


def _expect_gauge_error(loss, fn, a):
    x = tf.tensor(a, requires_grad=True)
    value = loss(x)                    # the primal is fine; only its derivative is not
    with pytest.raises(tf.GaugeError):
        tf.grad([value], [x])
    # control: the gauge-invariant observable of the same matrix differentiates fine, so
    # the error above is the phase check and not a blanket refusal of complex vectors
    x = tf.tensor(a, requires_grad=True)
    outs = fn(x)
    g, = tf.grad(list(outs), [x], [tf.ones_like(y) for y in outs])
    assert np.isfinite(g.numpy()).all()


@pytest.mark.parametrize("case", CASES["error"], ids=oracle_case_id)
def test_oracle_gauge_error(case):
    assert case["comparison"] == {"kind": "expect_error", "reason_code": "gauge_ill_defined"}
    (spec,) = case["inputs"].values()
    _, fn = make_fn(case)
    _expect_gauge_error(gauge_loss(case), fn, decode(spec))


def test_eig_gauge_error():
    """The database has no eig gauge case, but the PyTorch test it comes from checks eig
    too (|Σ V| of a general complex matrix): replay that on the svd case's complex matrix."""
    case, = [c for c in CASES["error"] if c["op"] == "svd"]
    eig_case = dict(case, op="eig", observable={"kind": "eig_values_vectors_abs"})
    _, fn = make_fn(eig_case)
    _expect_gauge_error(gauge_loss(eig_case), fn, decode(case["inputs"]["a"]))
