"""tf.linalg.matrix_exp and the norms (norm, vector_norm, matrix_norm): values against
SciPy/NumPy, derivatives of every order against finite differences, the Fréchet
derivative against scipy.linalg.expm_frechet, NumPy's ord/axis rules and errors,
subgradients at zero and at ties, and the shared reference derivatives
(../shared/oracles)."""
import importlib
import math

import numpy as np
import pytest
import scipy.linalg as sla

import tenferro as tf
from tenferro.testing import UnsupportedOracleCase as UnsupportedCase
from tenferro.testing import (assert_oracle_cases_cover, check_grads, check_low_precision,
                              load_oracle_cases, oracle_axis, oracle_case_id, oracle_dir,
                              random_array, replay_oracle_case)
from tenferro.testing import oracle_kwargs as _take

mf = importlib.import_module("tenferro.linalg.matfuncs")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
inf = math.inf


def _rtol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


# ==== matrix_exp =========================================================================

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (3, 3), (2, 4, 4), (0, 3, 3), (2, 0, 0)])
@pytest.mark.parametrize("grad", [False, True])
def test_expm_values(shape, dtype, grad):
    # grad=True takes tenferro's own Padé code (it keeps the data of the derivative),
    # grad=False scipy.linalg.expm: both agree with SciPy
    a = random_array(shape, dtype, np.random.default_rng(0))
    y = tf.linalg.matrix_exp(tf.tensor(a, requires_grad=grad))
    ref = sla.expm(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    assert y.shape == shape and y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), ref, rtol=_rtol(dtype), atol=_rtol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("scale,degree", [(1e-3, (3, 0)), (0.1, (5, 0)), (0.5, (7, 0)),
                                          (1.5, (9, 0)), (4.0, (13, 0)), (20.0, (13, 2))])
def test_expm_pade_degrees(scale, degree, dtype):
    """Each Padé degree and the squaring phase: value, and L(A, E) against SciPy."""
    rng = np.random.default_rng(1)
    a = random_array((4, 4), dtype, rng)
    a *= scale / np.abs(a).sum(axis=0).max()           # ‖A‖₁ = scale
    value, data = mf.expm_pade(a)                       # the kernel the rules use
    assert data[1].tolist() == [list(degree)]
    ref = sla.expm(a)
    np.testing.assert_allclose(value, ref, rtol=1e-12, atol=1e-15 * np.abs(ref).max())
    e = random_array((4, 4), dtype, rng)
    ref = sla.expm_frechet(a, e)[1]
    np.testing.assert_allclose(mf.expm_frechet(data, e), ref, rtol=1e-12,
                               atol=1e-15 * np.abs(ref).max())
    ref = sla.expm_frechet(a.conj().T, e)[1]            # adjoint: L(Aᴴ, E)
    np.testing.assert_allclose(mf.expm_frechet(data, e, True), ref, rtol=1e-12,
                               atol=1e-15 * np.abs(ref).max())
    check_grads(tf.linalg.matrix_exp, [a], order=1)


def test_expm_nonnormal_nilpotent():
    """A nilpotent, very nonnormal A: ‖A^k‖^(1/k) says nothing about the words A^j E A^l
    of the derivative, so (m, s) come from ‖A‖₁ and L stays exact."""
    a = np.diag(np.full(3, 1e3), 1)                               # A⁴ = 0, A³ ≠ 0
    e = random_array((4, 4), np.float64, np.random.default_rng(14))
    _, t = tf.jvp(tf.linalg.matrix_exp, [a], [e])
    ref = sla.expm_frechet(a, e)[1]
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-12, atol=1e-14 * np.abs(ref).max())


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3)])
def test_expm_grads(shape, dtype):
    a = random_array(shape, dtype, np.random.default_rng(2))
    check_grads(tf.linalg.matrix_exp, [a], order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_expm_rules_are_frechet(dtype):
    # JVP Ė = L(A, Ȧ), VJP Ā = L(Aᴴ, Ē), both against scipy.linalg.expm_frechet
    rng = np.random.default_rng(3)
    a, v, g = (random_array((2, 5, 5), dtype, rng) for _ in range(3))
    _, t = tf.jvp(tf.linalg.matrix_exp, [a], [v])
    x = tf.tensor(a, requires_grad=True)
    (ga,) = tf.grad([tf.linalg.matrix_exp(x)], [x], [g])
    for k in range(2):
        np.testing.assert_allclose(t.numpy()[k], sla.expm_frechet(a[k], v[k])[1], rtol=1e-12)
        ref = sla.expm_frechet(a[k].conj().T, g[k])[1]
        np.testing.assert_allclose(ga.numpy()[k], ref, rtol=1e-12)


def test_expm_stack_mixing_degrees():
    """A stack whose matrices need different (m, s): each gets its own."""
    rng = np.random.default_rng(4)
    a = np.stack([1e-3 * random_array((3, 3), rng=rng), 10 * random_array((3, 3), rng=rng),
                  0.3 * random_array((3, 3), rng=rng), 1e-3 * random_array((3, 3), rng=rng)])
    _, data = mf.expm_pade(a)
    assert data[1].tolist() == [[3, 0], [13, 3], [7, 0], [3, 0]]
    y = tf.linalg.matrix_exp(tf.tensor(a, requires_grad=True))
    np.testing.assert_allclose(y.numpy(), sla.expm(a), rtol=1e-10)   # cond(exp) ~ 1e4
    check_grads(tf.linalg.matrix_exp, [a], order=1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_expm_low_precision_and_empty(dtype):
    check_low_precision(tf.linalg.matrix_exp, [random_array((2, 3, 3), dtype,
                                                            np.random.default_rng(5))])
    for shape in [(0, 0), (3, 0, 0), (0, 2, 2)]:
        x = tf.tensor(np.zeros(shape, dtype), requires_grad=True)
        (g,) = tf.grad([tf.linalg.matrix_exp(x)], [x], [np.ones(shape, dtype)])
        assert g.shape == shape
        _, t = tf.jvp(tf.linalg.matrix_exp, [np.zeros(shape, dtype)], [np.zeros(shape, dtype)])
        assert t.shape == shape


def test_expm_spellings():
    a = np.array([[0.0, 1.0], [-1.0, 0.0]])
    ref = sla.expm(a)
    t = tf.tensor(a)
    for y in (t.matrix_exp(), tf.linalg.expm(a), tf.matrix_exp_ad(a).run(),
              tf.expm_ad(a).run(), tf.linalg.matrix_exp(np.array([[0, 1], [-1, 0]]))):
        np.testing.assert_allclose(y.numpy(), ref, rtol=1e-14, atol=1e-15)


def test_expm_errors(monkeypatch):
    recorded = []
    orig = mf.apply1
    monkeypatch.setattr(mf, "apply1", lambda *a, **k: recorded.append(a) or orig(*a, **k))
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="square"):
        tf.linalg.matrix_exp(x)
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.matrix_exp(np.ones(3))
    bad = np.eye(2)
    bad[0, 1] = np.inf
    with pytest.raises(tf.LinAlgError, match="non-finite"):       # opt-in check
        tf.linalg.matrix_exp(tf.tensor(bad, requires_grad=True), check_finite=True)
    with pytest.raises(tf.DTypeError):
        tf.linalg.matrix_exp(np.eye(2).astype(object))
    assert recorded == [] and x.grad is None


# ==== norms: values and NumPy's rules ====================================================

VECTOR_ORDS = [None, 2, 1, 0, inf, -inf, 3.5, 0.5, -0.5, -1, -2]
MATRIX_ORDS = [None, "fro", "f", "nuc", 1, -1, 2, -2, inf, -inf]


def _same(fn_tf, fn_np):
    """fn_tf gives NumPy's value (shape and dtype), or raises a ShapeError (a ValueError)
    wherever NumPy raises ValueError."""
    try:
        with np.errstate(divide="ignore"):      # NumPy warns at 0**(1/p), p < 0
            ref = fn_np()
    except ValueError:
        with pytest.raises(tf.ShapeError):
            fn_tf()
        return
    got = fn_tf()
    ref = np.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    tol = 1e-5 if ref.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5,), (0,), (4, 3), (0, 3), (3, 0), (2, 3, 4), ()])
def test_norm_values_default_axis(shape, dtype):
    x = random_array(shape, dtype, np.random.default_rng(6))
    for o in VECTOR_ORDS + MATRIX_ORDS:
        for kd in (False, True):
            _same(lambda: tf.linalg.norm(x, o, keepdims=kd),
                  lambda: np.linalg.norm(x, o, keepdims=kd))


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
@pytest.mark.parametrize("shape,axes", [((3, 4, 2), [0, 1, -1, (0, 2), (2, 0), (-1, 1)]),
                                        ((3, 0, 2), [1, 2, (1, 2), (0, 1)])])
def test_norm_values_axis(shape, axes, dtype):
    x = random_array(shape, dtype, np.random.default_rng(7))
    for axis in axes:
        ords = VECTOR_ORDS if isinstance(axis, int) else MATRIX_ORDS
        for o in ords:
            for kd in (False, True):
                _same(lambda: tf.linalg.norm(x, o, axis, kd),
                      lambda: np.linalg.norm(x, o, axis, kd))


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_vector_and_matrix_norm_values(dtype):
    rng = np.random.default_rng(8)
    cases = {(): [None, ()], (4,): [None, (), 0, -1, (0,)],
             (3, 4): [None, 0, -1, (0, 1), (1, 0)],
             (2, 3, 4): [None, 1, (0, 2), (2, 0), (0, 1, 2)], (2, 0, 3): [None, 1, (0, 2)]}
    for shape, axes in cases.items():
        x = random_array(shape, dtype, rng)
        for axis in axes:
            for o in VECTOR_ORDS[1:]:
                for kd in (False, True):
                    _same(lambda: tf.linalg.vector_norm(x, axis=axis, keepdims=kd, ord=o),
                          lambda: np.linalg.vector_norm(x, axis=axis, keepdims=kd, ord=o))
        if len(shape) >= 2:
            for o in MATRIX_ORDS[1:]:
                for kd in (False, True):
                    _same(lambda: tf.linalg.matrix_norm(x, keepdims=kd, ord=o),
                          lambda: np.linalg.matrix_norm(x, keepdims=kd, ord=o))


def test_norm_errors():
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="Invalid norm order 'fro' for vectors"):
        tf.linalg.norm(np.ones(3), "fro")
    with pytest.raises(tf.ShapeError, match="Invalid norm order 'nuc' for vectors"):
        tf.linalg.norm(x, "nuc", axis=1)
    with pytest.raises(tf.ShapeError, match="Invalid norm order 3 for matrices"):
        tf.linalg.norm(x, 3)
    with pytest.raises(tf.ShapeError, match="Invalid norm order 'abc' for matrices"):
        tf.linalg.norm(x, "abc")
    with pytest.raises(tf.ShapeError, match="improper number of dimensions"):
        tf.linalg.norm(np.ones((2, 2, 2)), 1)
    with pytest.raises(tf.ShapeError, match="improper number of dimensions"):
        tf.linalg.norm(np.ones(()), 1)
    with pytest.raises(tf.ShapeError, match="duplicate axes"):
        tf.linalg.norm(x, axis=(1, -1))
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        tf.linalg.norm(x, axis=2)
    with pytest.raises(tf.ShapeError, match="axis must be"):
        tf.linalg.norm(x, axis=1.5)
    with pytest.raises(tf.ShapeError, match="nan"):
        tf.linalg.vector_norm(x, ord=math.nan)
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.matrix_norm(np.ones(3))
    with pytest.raises(tf.ShapeError, match="-inf norm of an empty"):
        tf.linalg.norm(np.ones(0), -inf)
    with pytest.raises(tf.ShapeError, match="empty"):
        tf.linalg.norm(np.ones((0, 3)), -2)
    with pytest.raises(tf.DTypeError):
        tf.linalg.norm(np.ones(2, dtype=object))
    # the opt-in finiteness check (check_finite=True) raises for every order, also where
    # the value hides the bad entry (p <= 0, ±inf); the SVD orders check by default
    bad = np.array([1.0, np.nan])
    for fn in (tf.linalg.norm, tf.linalg.vector_norm):
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            fn(tf.tensor(bad, requires_grad=True), check_finite=True)
    for o in (-1, -inf, 0, 1, 3.5):
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            tf.linalg.vector_norm(np.array([1.0, np.inf]), ord=o, check_finite=True)
    for o in (None, "nuc", 1, -inf, 2):
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            tf.linalg.norm(np.array([[1.0, np.nan], [0.0, 1.0]]), o, keepdims=True,
                           check_finite=True)
    for o in ("nuc", 2, -2):
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            tf.linalg.norm(np.array([[1.0, np.nan], [0.0, 1.0]]), o)
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            tf.linalg.matrix_norm(np.array([[1.0, np.inf], [0.0, 1.0]]), ord=o)
    # a finite input whose norm overflows is not an error: inf, as in NumPy
    big = np.array([1e200, 1e200])
    with np.errstate(over="ignore"):    # NumPy warns about the overflow, and so do we
        assert tf.linalg.norm(big, check_finite=True).item() == np.linalg.norm(big) == inf
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.matrix_norm(np.array([[1.0, np.inf]]), check_finite=True)
    assert tf.linalg.matrix_norm(np.array([[1.0, np.inf]])).item() == inf
    assert x.grad is None


def test_norm_spellings():
    x = np.array([[3.0, 0.0], [0.0, -4.0]])
    t = tf.tensor(x)
    assert np.linalg.norm(t).item() == pytest.approx(5.0)            # NumPy dispatch
    assert np.linalg.vector_norm(t, ord=1).item() == pytest.approx(7.0)
    assert np.linalg.matrix_norm(t, ord=1).item() == pytest.approx(4.0)
    assert tf.norm_ad(x, 2).run().item() == pytest.approx(4.0)
    assert tf.linalg.vector_norm_ad(x, ord=inf).run().item() == pytest.approx(4.0)
    assert tf.linalg.matrix_norm_ad(x, ord="nuc").run().item() == pytest.approx(7.0)
    assert tf.linalg.norm([[1, 2], [2, 4]]).dtype == np.float64      # ints -> float64


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_short_paths_match_general(dtype):
    # norm(x) and norm(x, 'nuc') of one matrix take short paths (one dot with a scalar
    # rule; the SVD directly): the same value, dtype and gradient as the general
    # matrix-norm path (axis=(0, 1)), and the finiteness check still comes first
    rng = np.random.default_rng(13)
    a = random_array((4, 3), dtype, rng)
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-13
    for o in (None, "nuc"):
        x, y = tf.tensor(a, requires_grad=True), tf.tensor(a, requires_grad=True)
        short, general = tf.linalg.norm(x, o), tf.linalg.norm(y, o, axis=(0, 1))
        assert short.shape == () and short.dtype == general.dtype == a.real.dtype
        np.testing.assert_allclose(short.numpy(), general.numpy(), rtol=tol)
        (gs,) = tf.grad([short], [x], [np.array(0.5)])
        (gg,) = tf.grad([general], [y], [np.array(0.5)])
        assert gs.dtype == np.dtype(dtype)
        np.testing.assert_allclose(gs.numpy(), gg.numpy(), rtol=tol, atol=tol)
        bad = np.where(np.eye(4, 3) > 0, np.nan, a)
        if o == "nuc":                           # an SVD: checked first
            with pytest.raises(tf.LinAlgError, match="non-finite"):
                tf.linalg.norm(bad, o)
        else:                                    # NumPy's NaN
            assert np.isnan(tf.linalg.norm(bad, o).item())
    z = tf.tensor(np.zeros((4, 3), dtype), requires_grad=True)
    (g,) = tf.grad([tf.linalg.norm(z)], [z])
    assert g.dtype == np.dtype(dtype) and not g.numpy().any()     # no 0/0 at x = 0


# ==== norms: derivatives ==================================================================

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("o", VECTOR_ORDS)
def test_vector_grads(o, dtype):
    rng = np.random.default_rng(9)
    x = random_array((5,), dtype, rng)
    check_grads(lambda t: tf.linalg.norm(t, o), [x])
    X = random_array((2, 3, 4), dtype, rng)
    ord_ = 2 if o is None else o
    check_grads(lambda t: tf.linalg.vector_norm(t, axis=(0, 2), ord=ord_, keepdims=True), [X])
    check_grads(lambda t: tf.linalg.norm(t, o, axis=1), [X], order=1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("o", MATRIX_ORDS)
def test_matrix_grads(o, dtype):
    rng = np.random.default_rng(10)
    a = random_array((4, 3), dtype, rng)
    check_grads(lambda t: tf.linalg.norm(t, o), [a])
    b = random_array((2, 3, 4), dtype, rng)
    check_grads(lambda t: tf.linalg.norm(t, o, axis=(2, 0), keepdims=True), [b], order=1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_spectral_gradients(dtype):
    """'nuc' -> U Vᴴ, 2 -> u₁v₁ᴴ, -2 -> u_k v_kᴴ (docs/rules.md#norms)."""
    a = random_array((4, 3), dtype, np.random.default_rng(11))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    for o, ref in (("nuc", u @ vt), (2, np.outer(u[:, 0], vt[0])),
                   (-2, np.outer(u[:, -1], vt[-1]))):
        x = tf.tensor(a, requires_grad=True)
        (g,) = tf.grad([tf.linalg.norm(x, o)], [x])
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_zero_input_subgradient_is_zero(dtype):
    """At x = 0 every norm's gradient (and its second derivative) is finite: 0 for the
    p-norms and 'fro' (no 0/0), the tie-split sign(0) = 0 for ±inf and ±1."""
    for shape, ords, axis in (((4,), VECTOR_ORDS, None),
                              ((3, 2), [None, "fro", 1, inf, -1, -inf], None),
                              ((2, 3), [2, 3.5, 0.5, -1, inf], 1)):
        for o in ords:
            x = tf.tensor(np.zeros(shape, dtype), requires_grad=True)
            n = tf.linalg.norm(x, o, axis)
            (g,) = tf.grad([n], [x], [np.ones(n.shape)], create_graph=True)
            assert not np.any(g.numpy()), (o, axis)
            _, _, h = tf.hvp(lambda t: tf.sum(tf.linalg.norm(t, o, axis)),
                             [np.zeros(shape, dtype)], [np.ones(shape, dtype)])
            assert np.isfinite(h[0].numpy()).all(), (o, axis)
            _, t = tf.jvp(lambda t: tf.linalg.norm(t, o, axis), [np.zeros(shape, dtype)],
                          [np.ones(shape, dtype)])
            assert np.isfinite(t.numpy()).all() and not t.numpy().any(), (o, axis)


def test_zero_entries_small_p():
    # p < 1 with a zero entry: that entry gets 0; p < 0 with a zero entry: ‖x‖ = 0, all 0
    x = np.array([0.0, 2.0, -1.0])
    for p in (0.5, -0.5, -2):
        t = tf.tensor(x, requires_grad=True)
        n = tf.linalg.norm(t, p)
        (g,) = tf.grad([n], [t])
        assert np.isfinite(g.numpy()).all() and g.numpy()[0] == 0
        if p < 0:
            assert n.item() == 0 and not g.numpy().any()
    # and away from zero the p < 1 rule matches finite differences
    check_grads(lambda t: tf.linalg.norm(t, 0.5), [np.array([0.3, 2.0, -1.0])])


def test_ties_split_evenly():
    x = tf.tensor(np.array([3.0, -3.0, 1.0, 3.0]), requires_grad=True)
    (g,) = tf.grad([tf.linalg.norm(x, inf)], [x])
    np.testing.assert_allclose(g.numpy(), [1 / 3, -1 / 3, 0, 1 / 3])
    (g,) = tf.grad([tf.linalg.norm(x, -inf)], [x])
    np.testing.assert_allclose(g.numpy(), [0, 0, 1, 0])
    # complex ties: sgn z = z/|z| shares the cotangent
    z = tf.tensor(np.array([3.0, 3j, 1.0]), requires_grad=True)
    (g,) = tf.grad([tf.linalg.norm(z, inf)], [z])
    np.testing.assert_allclose(g.numpy(), [0.5, 0.5j, 0])
    # matrix 1-norm: columns 0 and 2 tie (sum 4); inf-norm: rows 0 and 1 tie (sum 5)
    a = np.array([[1.0, 0.5, -2.0], [-3.0, 0.0, 2.0]])
    t = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([tf.linalg.norm(t, 1)], [t])
    np.testing.assert_allclose(g.numpy(), 0.5 * np.sign(a) * [[1, 0, 1]])
    b = np.array([[1.0, -4.0], [2.5, 2.5], [0.0, 1.0]])
    t = tf.tensor(b, requires_grad=True)
    (g,) = tf.grad([tf.linalg.norm(t, inf)], [t])
    np.testing.assert_allclose(g.numpy(), 0.5 * np.sign(b) * [[1], [1], [0]])
    # 2-norm with a repeated top singular value: u₁v₁ᴴ is split over the pair
    t = tf.tensor(np.diag([2.0, -2.0, 1.0]), requires_grad=True)
    (g,) = tf.grad([tf.linalg.norm(t, 2)], [t])
    np.testing.assert_allclose(g.numpy(), np.diag([0.5, -0.5, 0.0]), atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_norm_low_precision(dtype):
    rng = np.random.default_rng(12)
    x = random_array((3, 4), dtype, rng)
    for o in (None, "nuc", 1, inf, 2):
        check_low_precision(lambda t: tf.linalg.norm(t, o), [x])
    check_low_precision(lambda t: tf.linalg.vector_norm(t, ord=3.5, axis=0), [x])


# ==== non-finite input: NumPy's NaN/Inf, the formulas' gradients ==========================

NONFINITE_VECTOR_ORDS = [None, 2, 1, 0, inf, -inf, 3.5, 0.5, -0.5, -1]
NONFINITE_MATRIX_ORDS = [None, "fro", 1, -1, inf, -inf]     # no SVD: NaN/Inf propagate


def _nonfinite_inputs(dtype):
    """(3, 4) matrices with a NaN, a +inf, a -inf, and a NaN beside an inf."""
    out = []
    for entries in ({(1, 2): np.nan}, {(0, 0): np.inf}, {(2, 3): -np.inf},
                    {(0, 1): np.nan, (2, 1): np.inf}):
        a = np.arange(1.0, 13.0).reshape(3, 4) * np.where(np.arange(12) % 3, 1, -1).reshape(3, 4)
        for ij, v in entries.items():
            a[ij] = v
        a = a.astype(dtype)
        if a.dtype.kind == "c":
            a = a + 0.5j
        out.append(a)
    return out


def _same_nan(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got, ref)
    np.testing.assert_allclose(got, ref, rtol=1e-5 if ref.dtype == np.float32 else 1e-12,
                               equal_nan=True)
    assert (np.isnan(got) == np.isnan(ref)).all() and (np.isposinf(got) == np.isposinf(ref)).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_nonfinite_values_like_numpy(dtype):
    """NaN and Inf give NumPy's value through every norm that needs no SVD (issue 24:
    scipy.stats.pearsonr calls vector_norm on data with NaN); NumPy dispatch too."""
    for a in _nonfinite_inputs(dtype):
        t = tf.tensor(a)
        with np.errstate(all="ignore"):
            for o in NONFINITE_VECTOR_ORDS:
                for axis in (None, 0, 1, (0, 1)):
                    for kd in (False, True):
                        _same_nan(tf.linalg.vector_norm(t, axis=axis, keepdims=kd,
                                                        ord=2 if o is None else o),
                                  np.linalg.vector_norm(a, axis=axis, keepdims=kd,
                                                        ord=2 if o is None else o))
                for axis in (0, -1):
                    _same_nan(tf.linalg.norm(t, o, axis), np.linalg.norm(a, o, axis))
            for o in NONFINITE_MATRIX_ORDS:
                for kd in (False, True):
                    _same_nan(tf.linalg.norm(t, o, keepdims=kd),
                              np.linalg.norm(a, o, keepdims=kd))
                    _same_nan(tf.linalg.norm(t[None], o, (1, 2), kd),
                              np.linalg.norm(a[None], o, (1, 2), kd))
                if o is not None:
                    _same_nan(tf.linalg.matrix_norm(t, ord=o), np.linalg.matrix_norm(a, ord=o))
            _same_nan(tf.linalg.norm(t.reshape(-1)), np.linalg.norm(a.reshape(-1)))
            _same_nan(np.linalg.norm(t), np.linalg.norm(a))              # NumPy dispatch
            _same_nan(np.linalg.vector_norm(t, ord=1), np.linalg.vector_norm(a, ord=1))
            for o in ("nuc", 2, -2):             # an SVD: LinAlgError before LAPACK
                with pytest.raises(tf.LinAlgError, match="non-finite"):
                    tf.linalg.norm(t, o)
                with pytest.raises(tf.LinAlgError, match="non-finite"):
                    tf.linalg.matrix_norm(t, ord=o)


def _rev_fwd(f, a):
    """The reverse gradient (plain and create_graph) and the forward derivative along
    ones of the real function f at ``a``; the three must agree entry for entry."""
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([f(x)], [x])
    x2 = tf.tensor(a, requires_grad=True)
    (g2,) = tf.grad([f(x2)], [x2], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), g2.numpy())
    _, jv = tf.jvp(f, [a], [np.ones_like(a)])
    ref = np.real(np.vdot(g.numpy(), np.ones_like(a))) if np.isfinite(g.numpy()).all() \
        else None
    if ref is not None:
        np.testing.assert_allclose(jv.numpy(), ref, rtol=1e-12)
    return g.numpy(), jv.numpy()


def test_norm_nonfinite_gradients():
    """At NaN/Inf the derivative is what the formulas give: x/‖x‖ (NaN where ‖x‖ is NaN,
    NaN at an infinite entry and 0 at the finite ones when ‖x‖ = inf); sgn x for ord 1;
    the ±inf norms and matrix ±1/±inf pass the cotangent to the extreme entries (to the
    NaN entries for a NaN extremum, as tf.max). Reverse, create_graph and forward agree."""
    nan = np.nan
    cases = [
        # (f, input, expected gradient)
        (lambda t: tf.linalg.vector_norm(t), [3.0, nan, 4.0], [nan, nan, nan]),
        (lambda t: tf.linalg.vector_norm(t), [3.0, inf, 4.0], [0.0, nan, 0.0]),
        (lambda t: tf.linalg.norm(t), [3.0, -inf, 4.0], [0.0, nan, 0.0]),
        (lambda t: tf.linalg.vector_norm(t, ord=3.5), [3.0, inf, 4.0], [0.0, nan, 0.0]),
        (lambda t: tf.linalg.vector_norm(t, ord=1), [3.0, nan, -4.0], [1.0, nan, -1.0]),
        (lambda t: tf.linalg.vector_norm(t, ord=1), [3.0, -inf, -4.0], [1.0, -1.0, -1.0]),
        (lambda t: tf.linalg.vector_norm(t, ord=inf), [3.0, nan, -4.0], [0.0, nan, 0.0]),
        (lambda t: tf.linalg.vector_norm(t, ord=inf), [3.0, -inf, 4.0], [0.0, -1.0, 0.0]),
        (lambda t: tf.linalg.vector_norm(t, ord=-inf), [3.0, inf, -2.0], [0.0, 0.0, -1.0]),
        (lambda t: tf.linalg.vector_norm(t, ord=0), [3.0, nan, 0.0], [0.0, 0.0, 0.0]),
        (lambda t: tf.linalg.norm(t, "fro"), [[3.0, nan], [1.0, 2.0]], [[nan, nan]] * 2),
        (lambda t: tf.linalg.matrix_norm(t, ord=1), [[3.0, nan], [-1.0, 2.0]],
         [[0.0, nan], [0.0, 1.0]]),                # NaN column: its entries' sgn
        (lambda t: tf.linalg.matrix_norm(t, ord=inf), [[3.0, -inf], [-1.0, 2.0]],
         [[1.0, -1.0], [0.0, 0.0]]),
        (lambda t: tf.linalg.matrix_norm(t, ord=-1), [[3.0, inf], [-1.0, 2.0]],
         [[1.0, 0.0], [-1.0, 0.0]]),
    ]
    for f, a, want in cases:
        with np.errstate(invalid="ignore"):    # inf/inf and 0·inf in the rules, as NumPy
            g, jv = _rev_fwd(f, np.array(a))
        np.testing.assert_array_equal(g, np.array(want), err_msg=str(a))
        # forward: Σ g·1 with NaN wherever a NaN entry of g meets the tangent
        assert np.isnan(jv) == np.isnan(np.sum(g)), (a, jv)
    # complex: sgn z = z/|z| at a finite extreme entry, NaN at a NaN one
    z = np.array([3.0 + 4.0j, complex(nan, 1.0), 1.0])
    with np.errstate(invalid="ignore"):
        g, _ = _rev_fwd(lambda t: tf.linalg.vector_norm(t, ord=1), z)
    np.testing.assert_allclose(g[[0, 2]], [0.6 + 0.8j, 1.0])
    assert np.isnan(g[1])
    with np.errstate(invalid="ignore"):
        g, _ = _rev_fwd(lambda t: tf.linalg.vector_norm(t, ord=inf),
                        np.array([3.0 + 4.0j, complex(inf, 1.0), 1.0]))
    assert g[0] == 0 and g[2] == 0 and np.isnan(g[1])     # inf/inf in sgn: the formula


def test_expm_nonfinite_propagates():
    """matrix_exp of a matrix with NaN/Inf is NaN (value, reverse and forward), as
    scipy.linalg.expm and torch.linalg.matrix_exp; the rest of the stack is untouched."""
    a = np.stack([np.array([[0.1, 0.2], [0.3, 0.4]]), np.array([[1.0, np.nan], [0.5, 1.0]]),
                  np.array([[1.0, np.inf], [0.5, 1.0]])])
    with np.errstate(all="ignore"):
        ref = sla.expm(a)
    assert np.isnan(ref[1:]).all()
    for grad in (False, True):
        y = tf.linalg.matrix_exp(tf.tensor(a, requires_grad=grad))
        np.testing.assert_allclose(y.numpy(), ref, rtol=1e-13, equal_nan=True)
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([tf.linalg.matrix_exp(x).sum()], [x])
    assert np.isfinite(g.numpy()[0]).all() and np.isnan(g.numpy()[1:]).all()
    _, t = tf.jvp(tf.linalg.matrix_exp, [a], [np.ones_like(a)])
    assert np.isfinite(t.numpy()[0]).all() and np.isnan(t.numpy()[1:]).all()


# ==== shared reference derivatives (../shared/oracles) ===================================

ORACLES = oracle_dir(__file__)
ORACLE_OPS = ("matrix_exp", "norm", "matrix_norm", "vector_norm")


def make_fn(case):
    """f(x) returning the one observed output ('value'). PyTorch -> tenferro:
    linalg.norm(A, ord, dim, keepdim) -> norm(A, ord, axis, keepdims) (the same NumPy
    rules); matrix_norm(A, ord, dim, keepdim) -> norm with that 2-tuple axis;
    vector_norm(x, ord, dim, keepdim) -> vector_norm."""
    op, cid = case["op"], case["case_id"]
    args = list(case.get("op_args") or [])
    kw = dict(case.get("op_kwargs") or {})
    ndim = len(next(iter(case["inputs"].values()))["shape"])
    if case["observable"]["kind"] != "identity":
        raise UnsupportedCase(f"{cid}: observable {case['observable']['kind']!r}")
    if op == "matrix_exp":
        if args or kw:
            raise UnsupportedCase(f"{cid}: matrix_exp with {args} {kw}")
        return tf.linalg.matrix_exp
    names = ("ord", "dim", "keepdim")
    if len(args) > len(names):
        raise UnsupportedCase(f"{cid}: op_args {args}")
    for name, value in zip(names, args):
        if name in kw:
            raise UnsupportedCase(f"{cid}: {name} given twice")
        kw[name] = value
    _take(kw, names, cid)
    keepdims = bool(kw.get("keepdim", False))
    axis = oracle_axis(kw.get("dim"), ndim, cid)
    if op == "norm":
        ord_ = kw.get("ord")
        return lambda x: tf.linalg.norm(x, ord_, axis, keepdims)
    if op == "matrix_norm":
        ord_ = kw.get("ord", "fro")
        axis = (-2, -1) if axis is None else axis
        return lambda x: tf.linalg.norm(x, ord_, axis, keepdims)
    if op == "vector_norm":
        ord_ = kw.get("ord", 2)
        return lambda x: tf.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord_)
    raise UnsupportedCase(f"{cid}: op {op!r}")


CASES = load_oracle_cases(ORACLE_OPS, ORACLES)


def test_oracle_cases_found():
    assert_oracle_cases_cover(CASES, ORACLE_OPS, ORACLES)   # skipped without the data


@pytest.mark.parametrize("case", CASES, ids=oracle_case_id)
def test_oracle(case):
    replay_oracle_case(case, make_fn(case), ["value"])
