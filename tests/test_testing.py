"""The gradient checker checks: it passes correct rules and fails on slightly wrong ones.

Each test builds its own op with ``tenferro._ops.registry.Op`` (not ``defop``, which would
register it globally) and runs it through the engine like any op: a VJP scaled by 1.001,
a JVP or VJP that forgets a conjugate, or a rule whose values are right but whose own
derivative is wrong (only the second-order checks can see that). Each mode of
``check_grads`` must catch the error that is visible to it, and only that one, so we know
which derivative each mode really exercises.
"""
import numpy as np
import pytest

import tenferro as tf
from tenferro._engine import apply, apply1
from tenferro._ops.registry import OPS, Op
from tenferro.testing import (check_grads, check_low_precision, random_array,
                              random_spd, random_well_conditioned)

X_REAL = np.array([[0.7, -1.2, 0.4], [1.5, -0.3, 0.9]])
X_COMPLEX = X_REAL + 1j * np.array([[0.2, 0.5, -0.8], [-0.4, 1.1, 0.3]])


def _conj(a):
    return a.conj() if a.dtype.kind == "c" else a


def _detached(x):
    """The value of x with no derivative (breaks a rule's own derivative, not its value)."""
    return tf.Tensor._wrap(x.numpy()) if isinstance(x, tf.Tensor) else x


def _unary(vjp_coef, jvp_coef, primal=lambda d: d ** 3):
    """y = x³ (by default) as a fresh unregistered op; the rules multiply by the given
    coefficients: VJP x̄ = ȳ·vjp_coef(x), JVP ẏ = jvp_coef(x)·ẋ."""
    op = Op("test_cube", lambda ctx, needs, gs, xs, ys: (gs[0] * vjp_coef(xs[0]),),
            lambda ctx, ts, xs, ys: (ts[0] * jvp_coef(xs[0]),))

    def f(x):
        x = tf.as_tensor(x)
        return apply1(op, (x,), np.asarray(primal(x.numpy())))
    return f


def _d(x):
    return 3 * x * x        # f'(x) of x³, written with differentiable ops


cube = _unary(lambda x: _conj(_d(x)), _d)
assert "test_cube" not in OPS  # Op(...) did not register anything


# what check_grads says first when each derivative is wrong
REV = r"^VJP \(reverse mode\)"
FWD = r"^JVP \(forward mode\)"
REV_OVER_REV = r"^derivative of the VJP map [^:]*: VJP \(reverse mode\)"
FWD_OVER_REV = r"^derivative of the VJP map [^:]*: JVP \(forward mode\)"
REV_OVER_FWD = r"^derivative of the JVP map [^:]*: VJP \(reverse mode\)"
FWD_OVER_FWD = r"^derivative of the JVP map [^:]*: JVP \(forward mode\)"


def _raises(f, x, match, **kw):
    with pytest.raises(AssertionError, match=match):
        check_grads(f, [x], **kw)


# ---- correct rules pass -----------------------------------------------------------------

@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_correct_rule_passes_every_mode(x):
    check_grads(cube, [x], modes=("rev", "fwd"), order=2)
    check_grads(cube, [x], modes=("rev",), order=2)
    check_grads(cube, [x], modes=("fwd",), order=2)
    check_low_precision(cube, [x])


def test_builtin_ops_pass():
    check_grads(lambda a, b: tf.sin(a) * tf.exp(b), [X_COMPLEX, X_COMPLEX[0]], order=2)


# ---- first-order errors -----------------------------------------------------------------

@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_vjp_off_by_0_1_percent_is_caught_by_reverse_mode_only(x):
    f = _unary(lambda x: 1.001 * _conj(_d(x)), _d)
    _raises(f, x, REV, modes=("rev",), order=1)
    check_grads(f, [x], modes=("fwd",), order=1)     # the JVP is right
    # a tolerance loose enough hides it: the checker really uses `tol`
    check_grads(f, [x], modes=("rev",), order=1, tol=(1e-6, 1e-2, 1e-2))


@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_jvp_off_by_0_1_percent_is_caught_by_forward_mode_only(x):
    f = _unary(lambda x: _conj(_d(x)), lambda x: 1.001 * _d(x))
    _raises(f, x, FWD, modes=("fwd",), order=1)
    check_grads(f, [x], modes=("rev",), order=1)


def test_vjp_that_forgets_the_conjugate_is_caught_on_complex_input():
    f = _unary(_d, _d)                      # VJP must multiply by conj(f'), not f'
    _raises(f, X_COMPLEX, REV, modes=("rev",), order=1)
    check_grads(f, [X_COMPLEX], modes=("fwd",), order=1)
    check_grads(f, [X_REAL], modes=("rev", "fwd"), order=2)   # invisible on real input


def test_jvp_that_conjugates_is_caught_on_complex_input():
    f = _unary(lambda x: _conj(_d(x)), lambda x: _conj(_d(x)))   # JVP must use f' itself
    _raises(f, X_COMPLEX, FWD, modes=("fwd",), order=1)
    check_grads(f, [X_COMPLEX], modes=("rev",), order=1)
    check_grads(f, [X_REAL], modes=("rev", "fwd"), order=2)


def test_non_holomorphic_jvp_that_forgets_a_conjugate_is_caught():
    """y = conj(z)·z²: ẏ = conj(ż)·z² + 2·conj(z)·z·ż; forgetting the conj on ż."""
    def prim(d):
        return np.conj(d) * d * d

    def vjp(ctx, needs, gs, xs, ys):
        z, g = xs[0], gs[0]
        # z̄ = ȳ·conj(∂y/∂z) + conj(ȳ)·∂y/∂z̄ with ∂y/∂z = 2·conj(z)·z, ∂y/∂z̄ = z²
        return (g * _conj(2 * _conj(z) * z) + _conj(g) * z * z,)

    good = Op("test_nh", vjp, lambda ctx, ts, xs, ys: (
        _conj(ts[0]) * xs[0] * xs[0] + 2 * _conj(xs[0]) * xs[0] * ts[0],))
    bad = Op("test_nh_bad", vjp, lambda ctx, ts, xs, ys: (
        ts[0] * xs[0] * xs[0] + 2 * _conj(xs[0]) * xs[0] * ts[0],))

    def use(op):
        def f(x):
            x = tf.as_tensor(x)
            return apply1(op, (x,), prim(x.numpy()))
        return f

    check_grads(use(good), [X_COMPLEX], modes=("rev", "fwd"), order=2)
    _raises(use(bad), X_COMPLEX, FWD, modes=("fwd",), order=1)
    check_grads(use(bad), [X_COMPLEX], modes=("rev",), order=1)


def test_wrong_cotangent_of_one_output_of_a_multi_output_op_is_caught():
    """(a·b, a + b) with the second output's pullback scaled: only that path is wrong."""
    def vjp(scale):
        def rule(ctx, needs, gs, xs, ys):
            a, b = xs
            g1, g2 = gs
            ga = gb = None
            if g1 is not None:
                ga, gb = g1 * _conj(b), g1 * _conj(a)
            if g2 is not None:
                ga = scale * g2 if ga is None else ga + scale * g2
                gb = g2 if gb is None else gb + g2
            return ga, gb
        return rule

    def jvp(ctx, ts, xs, ys):
        (ta, tb), (a, b) = ts, xs
        ta = 0 * a if ta is None else ta    # None is a structural zero
        tb = 0 * b if tb is None else tb
        return ta * b + a * tb, ta + tb

    def use(scale):
        op = Op("test_pair", vjp(scale), jvp)

        def f(a, b):
            a, b = tf.as_tensor(a), tf.as_tensor(b)
            return apply(op, (a, b), (a.numpy() * b.numpy(), a.numpy() + b.numpy()))
        return f

    args = [X_COMPLEX, X_COMPLEX[::-1]]
    check_grads(use(1.0), args, modes=("rev", "fwd"), order=2)
    with pytest.raises(AssertionError, match=REV):
        check_grads(use(1.001), args, modes=("rev",), order=1)
    with pytest.raises(AssertionError, match=REV):   # only the second output is observed
        check_grads(lambda a, b: use(1.001)(a, b)[1], args, modes=("rev",), order=1)
    check_grads(lambda a, b: use(1.001)(a, b)[0], args, modes=("rev",), order=1)


# ---- second-order errors: right values, wrong derivative of the rule -------------------

@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_vjp_rule_with_wrong_derivative_is_caught_at_order_2(x):
    # the coefficient's value is right, but it is a constant to the second-order pass
    f = _unary(lambda x: _conj(_d(_detached(x))), _d)
    check_grads(f, [x], modes=("rev", "fwd"), order=1)
    _raises(f, x, REV_OVER_REV, modes=("rev",), order=2)   # reverse-over-reverse sees it
    check_grads(f, [x], modes=("fwd",), order=2)       # the JVP rule is fine


@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_jvp_rule_with_wrong_derivative_is_caught_at_order_2(x):
    f = _unary(lambda x: _conj(_d(x)), lambda x: _d(_detached(x)))
    check_grads(f, [x], modes=("rev", "fwd"), order=1)
    # forward-over-forward sees it (checked first), and so does reverse-over-forward
    _raises(f, x, FWD_OVER_FWD, modes=("fwd",), order=2)
    d = tf.tensor(np.ones_like(x))
    with pytest.raises(AssertionError, match=r"^VJP \(reverse mode\)"):
        check_grads(lambda t: tf.jvp(f, [t], [d])[1], [x], modes=("rev",), order=1)
    check_grads(f, [x], modes=("rev",), order=2)


def _square_helper(vjp_scale=1.0, jvp_scale=1.0):
    """x ↦ x², used INSIDE another op's rule; its own rules may be slightly wrong.

    Like a NumPy function dispatched to tenferro: plain ndarrays (a first-order pass) get
    plain NumPy, Tensors (a second-order pass) get the op with its rules.
    """
    op = Op("test_square_helper",
            lambda ctx, needs, gs, xs, ys: (vjp_scale * gs[0] * _conj(2 * xs[0]),),
            lambda ctx, ts, xs, ys: (jvp_scale * 2 * xs[0] * ts[0],))

    def sq(x):
        if isinstance(x, tf.Tensor):
            return apply1(op, (x,), x.numpy() * x.numpy())
        return x * x
    return sq


@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_forward_over_reverse_is_checked_on_its_own(x):
    """The VJP rule calls a helper whose JVP is 0.1 % off: only forward-over-reverse runs
    that JVP, so order=2 with modes ("rev",) passes and ("rev", "fwd") fails."""
    sq = _square_helper(jvp_scale=1.001)
    f = _unary(lambda x: _conj(3 * sq(x)), _d)
    check_grads(f, [x], modes=("rev", "fwd"), order=1)
    check_grads(f, [x], modes=("rev",), order=2)       # reverse-over-reverse: helper VJP
    check_grads(f, [x], modes=("fwd",), order=2)
    _raises(f, x, FWD_OVER_REV, modes=("rev", "fwd"), order=2)   # helper JVP


@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_reverse_over_forward_is_checked_on_its_own(x):
    """The JVP rule calls a helper whose VJP is 0.1 % off: only reverse-over-forward runs
    that VJP."""
    sq = _square_helper(vjp_scale=1.001)
    f = _unary(lambda x: _conj(_d(x)), lambda x: 3 * sq(x))
    check_grads(f, [x], modes=("rev", "fwd"), order=1)
    check_grads(f, [x], modes=("rev",), order=2)
    _raises(f, x, REV_OVER_FWD, modes=("fwd",), order=2)


def test_helper_sanity_the_wrong_helpers_are_wrong():
    for kw, mode, match in (({"jvp_scale": 1.001}, "fwd", FWD),
                            ({"vjp_scale": 1.001}, "rev", REV)):
        sq = _square_helper(**kw)
        _raises(lambda t: sq(tf.as_tensor(t)), X_COMPLEX, match, modes=(mode,), order=1)


# ---- check_low_precision ----------------------------------------------------------------

def _cube_variant(primal=None, vjp_scale=None):
    def prim(d):
        out = d ** 3
        if primal is not None:
            out = primal(d, out)
        return out

    def vjp_coef(x):
        c = _conj(_d(x))
        return c * 1.01 if vjp_scale and x.dtype in (np.float32, np.complex64) else c
    return _unary(vjp_coef, _d, primal=prim)


@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_low_precision_catches_a_wrong_single_precision_value(x):
    low = (np.float32, np.complex64)
    f = _cube_variant(primal=lambda d, y: y * np.float32(1.01) if d.dtype in low else y)
    with pytest.raises(AssertionError, match="single-precision value"):
        check_low_precision(f, [x])


@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_low_precision_catches_a_wrong_single_precision_gradient(x):
    f = _cube_variant(vjp_scale=True)
    with pytest.raises(AssertionError, match="single-precision gradient"):
        check_low_precision(f, [x])
    check_grads(f, [x], modes=("rev", "fwd"), order=1)   # float64 is right


def test_low_precision_catches_an_upcast_output():
    f = _cube_variant(primal=lambda d, y: y.astype(np.result_type(y.dtype, np.float64)))
    with pytest.raises(AssertionError, match="dtype"):
        check_low_precision(f, [X_REAL])


# ---- input builders ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_random_builders(dtype):
    a = random_array((2, 3), dtype, rng=0)
    assert a.dtype == dtype and a.shape == (2, 3)
    np.testing.assert_array_equal(a, random_array((2, 3), dtype, rng=0))   # reproducible
    s = random_array((), dtype, rng=0)
    assert type(s) is np.ndarray and s.shape == () and s.dtype == dtype
    spd = random_spd(4, dtype, batch=(2,), rng=1)
    assert spd.shape == (2, 4, 4) and spd.dtype == dtype
    np.testing.assert_allclose(spd, np.swapaxes(spd, -1, -2).conj(), atol=1e-6)
    assert np.all(np.linalg.eigvalsh(spd) >= 0.99)
    w = random_well_conditioned((5, 3), dtype, rng=2)
    assert w.dtype == dtype and np.linalg.cond(w.astype(np.complex128)) < 1e3


def test_check_grads_rejects_integer_arguments():
    with pytest.raises(TypeError, match="float/complex"):
        check_grads(cube, [np.arange(3)])


def test_oracle_dir_is_found_from_the_test_file_not_the_installed_package(monkeypatch):
    """The installed tenferro lives in site-packages; the data sits beside the repository."""
    from pathlib import Path
    from tenferro.testing import oracle_dir
    monkeypatch.delenv("TENFERRO_ORACLES", raising=False)
    repo = Path(__file__).resolve().parents[1]
    assert oracle_dir(__file__).resolve() == (repo / ".." / "shared" / "oracles").resolve()
    monkeypatch.setenv("TENFERRO_ORACLES", "/some/where")
    assert str(oracle_dir(__file__)) == "/some/where"


# ---- oracle replay helpers ----------------------------------------------------------------

def _enc(a):
    """An oracle case tensor (the inverse of decode_oracle_tensor)."""
    a = np.asarray(a)
    data = np.stack([a.real, a.imag], -1) if a.dtype.kind == "c" else a
    return {"data": data.ravel().tolist(), "dtype": str(a.dtype), "shape": list(a.shape),
            "order": "row_major"}


def _cube_case(x, rtol=1e-10):
    """A replay case of y = x³ (input "a", output "value") with exact references:
    jvp 3x²·v, vjp conj(3x²)·ȳ, and the hvp of φ = Re⟨ȳ, x³⟩, the JVP of the gradient map
    x ↦ conj(3x²)·ȳ: conj(6x·v)·ȳ (the complex convention of docs/design.md#complex-numbers)."""
    rng = np.random.default_rng(5)
    v, ybar = random_array(x.shape, x.dtype, rng), random_array(x.shape, x.dtype, rng)
    refs = {"jvp": {"value": _enc(3 * x * x * v)},
            "hvp": {"a": _enc(np.conj(6 * x * v) * ybar)}}
    tol = {"rtol": rtol, "atol": 1e-12}
    return {"case_id": "cube/0", "op": "cube", "_family": "identity",
            "expected_behavior": "success", "observable": {"kind": "identity"},
            "inputs": {"a": _enc(x)}, "comparison": {"first_order": tol, "second_order": tol},
            "probes": [{"probe_id": "p0", "direction": {"a": _enc(v)},
                        "cotangent": {"value": _enc(ybar)},
                        "pytorch_ref": dict(refs, vjp={"a": _enc(np.conj(3 * x * x) * ybar)}),
                        "fd_ref": refs}]}


@pytest.mark.parametrize("x", [X_REAL, X_COMPLEX], ids=["real", "complex"])
def test_replay_oracle_case_passes_correct_rules_and_catches_wrong_ones(x):
    from tenferro.testing import decode_oracle_tensor, replay_oracle_case
    case = _cube_case(x)
    assert np.array_equal(decode_oracle_tensor(case["inputs"]["a"]), x)
    assert replay_oracle_case(case, cube) == 1               # a Tensor output is fine too
    assert replay_oracle_case(case, lambda a: (cube(a),), ["value"]) == 1
    wrong_vjp = _unary(lambda t: _conj(_d(t)) * 1.001, _d)
    wrong_jvp = _unary(lambda t: _conj(_d(t)), lambda t: _d(t) * 1.001)
    # a VJP rule whose own JVP is 0.1 % off: only the hvp (forward-over-reverse) sees it
    sq = _square_helper(jvp_scale=1.001)
    wrong_hvp = _unary(lambda t: _conj(3 * sq(t)), _d)
    for f, match in ((wrong_vjp, r"vjp\[a\] vs pytorch_ref"),
                     (wrong_jvp, r"jvp\[value\] vs pytorch_ref"),
                     (wrong_hvp, r"hvp\[a\] vs pytorch_ref")):
        with pytest.raises(AssertionError, match=match):
            replay_oracle_case(case, f)


def test_replay_oracle_case_caps_rtol_and_checks_the_case():
    from tenferro.testing import ORACLE_RTOL_CAP, replay_oracle_case
    case = _cube_case(X_REAL, rtol=10.0)      # the data has such rtols: they accept anything
    off = _unary(lambda t: _conj(_d(t)) * 1.5, _d)
    replay_oracle_case(case, off, rtol_cap=None)
    with pytest.raises(AssertionError, match="vjp"):
        replay_oracle_case(case, off)
    assert ORACLE_RTOL_CAP < 1
    with pytest.raises(AssertionError, match="probe outputs"):
        replay_oracle_case(case, lambda a: (cube(a), cube(a)), ["output_0", "output_1"])
    with pytest.raises(AssertionError, match="2 outputs, the probe has 1"):
        replay_oracle_case(case, lambda a: (cube(a), cube(a)))
    with pytest.raises(AssertionError, match="expected_behavior"):
        replay_oracle_case(dict(case, expected_behavior="error"), cube)
    with pytest.raises(AssertionError, match="no probes"):
        replay_oracle_case(dict(case, probes=[]), cube)


def test_replay_oracle_case_several_inputs_and_outputs():
    """(a·b, a + b): output keys output_0/1 by default; a constant output (requires no
    grad) stays out of the seed; an input no output reaches has the gradient 0."""
    from tenferro.testing import replay_oracle_case
    rng = np.random.default_rng(6)
    a, b, c, va, vb, vc, y0, y1 = (random_array((2, 3), np.float64, rng) for _ in range(8))
    zero = np.zeros((2, 3))
    refs = {"jvp": {"output_0": _enc(va * b + a * vb), "output_1": _enc(va + vb),
                    "output_2": _enc(zero)},
            "hvp": {"a": _enc(y0 * vb), "b": _enc(y0 * va), "c": _enc(zero)}}
    tol = {"rtol": 1e-12, "atol": 1e-12}
    case = {"case_id": "mul_add/0", "expected_behavior": "success",
            "inputs": {"a": _enc(a), "b": _enc(b), "c": _enc(c)},
            "comparison": {"first_order": tol},
            "probes": [{"probe_id": "p0",
                        "direction": {"a": _enc(va), "b": _enc(vb), "c": _enc(vc)},
                        "cotangent": {"output_0": _enc(y0), "output_1": _enc(y1),
                                      "output_2": _enc(y0)},
                        "pytorch_ref": dict(refs, vjp={"a": _enc(y0 * b + y1),
                                                       "b": _enc(y0 * a + y1),
                                                       "c": _enc(zero)}),
                        "fd_ref": refs}]}

    def f(x, y, z):
        return x * y, x + y, tf.tensor(zero)
    assert replay_oracle_case(case, f) == 1
    with pytest.raises(AssertionError, match=r"jvp\[output_1\] vs pytorch_ref"):
        replay_oracle_case(case, lambda x, y, z: (x * y, x + 2 * y, tf.tensor(zero)))


def test_oracle_adapter_helpers(tmp_path):
    import unittest
    from tenferro.testing import (UnsupportedOracleCase, assert_oracle_cases_cover,
                                  oracle_axis, oracle_case_id, oracle_kwargs,
                                  oracle_output_keys)
    assert oracle_output_keys(1) == ["value"]
    assert oracle_output_keys(3) == ["output_0", "output_1", "output_2"]
    assert oracle_case_id({"case_id": "x/1"}) == "x/1"
    kw = {"dim": 1}
    assert oracle_kwargs(kw, ("dim", "keepdim"), "c") is kw
    with pytest.raises(UnsupportedOracleCase, match=r"c: op_kwargs \['dtype'\]"):
        oracle_kwargs({"dim": 1, "dtype": "f"}, ("dim",), "c")
    for dim, ndim, axis in ((None, 2, None), ([], 2, None), ([0, 1], 2, (0, 1)), (-1, 2, -1),
                            (0, 0, None), ([-1], 0, None)):
        assert oracle_axis(dim, ndim, "c") == axis
    with pytest.raises(UnsupportedOracleCase, match="0-d"):
        oracle_axis(1, 0, "c")
    cases = [{"op": "svd", "_family": "s"}, {"op": "qr", "_family": "identity"}]
    assert_oracle_cases_cover(cases, ["svd", "qr"])
    assert_oracle_cases_cover(cases, {"svd": {"s"}})
    with pytest.raises(AssertionError, match="ops without oracle cases: .'lu'"):
        assert_oracle_cases_cover(cases, ["svd", "lu"])
    with pytest.raises(AssertionError, match="families without oracle cases"):
        assert_oracle_cases_cover(cases, {"svd": {"s", "u_abs"}})
    with pytest.raises(unittest.SkipTest, match="no oracle data"):
        assert_oracle_cases_cover([], ["svd"], tmp_path)     # no cases folder: skip
    (tmp_path / "cases").mkdir()
    with pytest.raises(AssertionError):
        assert_oracle_cases_cover([], ["svd"], tmp_path)


# ---- instrumentation ------------------------------------------------------------------------

def test_record_calls(monkeypatch):
    import types
    from tenferro.testing import record_calls
    owner = types.SimpleNamespace(f=lambda x, y=0: x + y, g=lambda: 7)
    calls = record_calls(monkeypatch, owner, "f", "g")
    assert owner.f(1, y=2) == 3 and owner.g() == 7 and owner.f(5) == 5
    assert calls == [(1,), (), (5,)]
    monkeypatch.undo()
    owner.f(1)
    assert len(calls) == 3


def test_check_kernel_backward(monkeypatch):
    import importlib
    import types
    from tenferro.testing import check_kernel_backward
    svd_mod = importlib.import_module("tenferro.linalg.svd")
    a = random_array((4, 3), np.float64, 1)

    def loss(x):
        u, s, vt = tf.linalg.svd(x)
        return tf.sum(tf.real(u @ vt)) + tf.sum(s * s)
    check_kernel_backward(monkeypatch, svd_mod._kernel, "svd_backward", loss, a)
    monkeypatch.undo()
    owner = types.SimpleNamespace(kern=lambda: None)
    with pytest.raises(AssertionError, match="create_graph backward called kern"):
        check_kernel_backward(monkeypatch, owner, "kern",
                              lambda x: owner.kern() or tf.sum(x * x), a)
    with pytest.raises(AssertionError, match="plain backward called kern 0 time"):
        check_kernel_backward(monkeypatch, owner, "kern", lambda x: tf.sum(x * x), a)
