"""tf.linalg.det and tf.linalg.slogdet: values against NumPy, derivatives of every order
against finite differences, the exact adjugate gradient at singular matrices of every
rank (against a brute-force cofactor expansion), errors, and the shared reference
derivatives (../shared/oracles)."""
import importlib
import itertools

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import UnsupportedOracleCase as UnsupportedCase
from tenferro.testing import (assert_oracle_cases_cover, check_grads, check_low_precision,
                              load_oracle_cases, oracle_case_id, oracle_dir, random_array,
                              random_well_conditioned, record_calls, replay_oracle_case)

det_mod = importlib.import_module("tenferro.linalg.det")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(0, 0), (1, 1), (3, 3), (5, 5), (2, 3, 3), (2, 1, 4, 4), (0, 3, 3), (4, 0, 0)]


def _rtol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def _slogdet_parts(x):
    """Both outputs as a tuple (real sign: not differentiable, its FD derivative is 0)."""
    return tuple(tf.linalg.slogdet(x))


def adjugate(a):
    """adj(a) of one matrix by cofactors (brute force, for small n)."""
    n = a.shape[-1]
    if n == 1:
        return np.ones((1, 1), a.dtype)
    cof = np.empty_like(a)
    for i, j in itertools.product(range(n), range(n)):
        minor = np.delete(np.delete(a, i, 0), j, 1)
        cof[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return cof.T


def rank_r(n, r, dtype, rng):
    """A random n×n matrix of rank r (0 <= r <= n)."""
    if r == 0:
        return np.zeros((n, n), dtype)
    return random_array((n, r), dtype, rng) @ random_array((r, n), dtype, rng)


# ---- values -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_values(shape, dtype):
    a = random_array(shape, dtype, np.random.default_rng(0))
    d = tf.linalg.det(a)
    assert d.shape == shape[:-2] and d.dtype == dtype
    np.testing.assert_allclose(d.numpy(), np.linalg.det(a), rtol=_rtol(dtype), atol=0)
    s, l = tf.linalg.slogdet(a)
    rs, rl = np.linalg.slogdet(a)
    assert s.dtype == dtype and l.dtype == np.finfo(dtype).dtype
    assert s.shape == l.shape == shape[:-2]
    np.testing.assert_allclose(s.numpy(), rs, rtol=_rtol(dtype), atol=_rtol(dtype))
    np.testing.assert_allclose(l.numpy(), rl, rtol=_rtol(dtype), atol=_rtol(dtype))


def test_singular_values_and_methods():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert tf.linalg.det(a).item() == 0.0
    s, l = tf.linalg.slogdet(a)
    assert s.item() == 0.0 and l.item() == -np.inf
    s, l = tf.linalg.slogdet(a.astype(np.complex128))
    assert s.item() == 0 and l.item() == -np.inf
    # methods, NumPy dispatch, builders, named tuple fields, ints become float64
    t = tf.tensor([[2, 1], [1, 3]])
    assert t.det().item() == pytest.approx(5.0)
    assert np.linalg.det(t).item() == pytest.approx(5.0)
    r = t.slogdet()
    assert isinstance(r, tf.linalg.SlogdetResult)
    assert r.sign.item() == 1.0 and r.logabsdet.item() == pytest.approx(np.log(5.0))
    assert np.linalg.slogdet(t).logabsdet.item() == pytest.approx(np.log(5.0))
    assert tf.det_ad(t).run().item() == pytest.approx(5.0)
    assert tf.linalg.slogdet_ad(t).run().logabsdet.item() == pytest.approx(np.log(5.0))


# ---- derivatives at nonsingular matrices --------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3), (2, 1, 2, 2)])
def test_grads(shape, dtype):
    a = random_well_conditioned(shape, dtype, np.random.default_rng(1))
    check_grads(tf.linalg.det, [a])
    check_grads(_slogdet_parts, [a])
    check_grads(lambda x: tf.linalg.slogdet(x).logabsdet, [a])
    if dtype == np.complex128:
        # the sign alone: the i·Im(conj(s̄)·s) term of the complex rule
        check_grads(lambda x: tf.linalg.slogdet(x).sign, [a])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_grads_negative_det_and_pivoting(dtype):
    # row swaps in the LU (odd permutation) and a negative determinant
    a = np.array([[0.0, -2.0, -1.0], [3.0, 0.5, 0.0], [1.0, 1.0, -4.0]], dtype)
    assert tf.linalg.det(a).numpy().real < 0
    check_grads(tf.linalg.det, [a])
    check_grads(_slogdet_parts, [a])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_empty_grads(dtype):
    for shape in [(0, 0), (3, 0, 0), (0, 2, 2)]:
        x = tf.tensor(np.zeros(shape, dtype), requires_grad=True)
        (g,) = tf.grad([tf.linalg.det(x)], [x], [np.ones(shape[:-2], dtype)])
        assert g.shape == shape and not g.numpy().any()
        s, l = tf.linalg.slogdet(x)
        (g,) = tf.grad([l], [x], [np.ones(shape[:-2])])
        assert g.shape == shape
        _, t = tf.jvp(tf.linalg.det, [np.zeros(shape, dtype)], [np.zeros(shape, dtype)])
        assert t.shape == shape[:-2]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_low_precision(dtype):
    a = random_well_conditioned((2, 3, 3), dtype, np.random.default_rng(2))
    check_low_precision(tf.linalg.det, [a])
    check_low_precision(lambda x: tf.linalg.slogdet(x).logabsdet, [a])


# ---- singular matrices: the adjugate ------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_adjugate_gradient_every_rank(n, dtype):
    """At rank r the gradient is adj(A)ᴴ (0 for corank >= 2), finite, in both modes."""
    rng = np.random.default_rng(n)
    for r in range(n + 1):
        a = rank_r(n, r, dtype, rng)
        ref = adjugate(a)
        scale = max(1.0, np.abs(ref).max())
        x = tf.tensor(a, requires_grad=True)
        dbar = np.asarray(0.7 - 0.2j if dtype == np.complex128 else 0.7, dtype)
        (g,) = tf.grad([tf.linalg.det(x)], [x], [dbar])
        assert np.isfinite(g.numpy()).all()
        np.testing.assert_allclose(g.numpy(), dbar * ref.conj().T, rtol=0,
                                   atol=1e-12 * scale, err_msg=f"rank {r}")
        v = random_array((n, n), dtype, rng)
        _, t = tf.jvp(tf.linalg.det, [a], [v])
        np.testing.assert_allclose(t.numpy(), np.trace(ref @ v), rtol=0,
                                   atol=1e-12 * scale * n, err_msg=f"rank {r}")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_adjugate_lu_pitfalls(dtype):
    # rank n-1 with two zero pivots in the LU: the adjugate is not zero
    a = np.array([[0.0, 1.0], [0.0, 0.0]], dtype)
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([tf.linalg.det(x)], [x], [np.ones((), dtype)])
    np.testing.assert_allclose(g.numpy(), adjugate(a).conj().T, atol=1e-15)
    # zero first column: getrf meets the zero pivot first
    a = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, 1.0, 5.0]], dtype)
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([tf.linalg.det(x)], [x], [np.ones((), dtype)])
    np.testing.assert_allclose(g.numpy(), adjugate(a).conj().T, atol=1e-13)


def test_adjugate_batch_mixing_singular_and_regular():
    rng = np.random.default_rng(7)
    mats = [random_well_conditioned((3, 3), np.float64, rng), rank_r(3, 2, np.float64, rng),
            random_array((3, 3), np.float64, rng), rank_r(3, 1, np.float64, rng)]
    a = np.stack(mats).reshape(2, 2, 3, 3)
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([tf.linalg.det(x)], [x], [np.ones((2, 2))])
    ref = np.stack([adjugate(m).T for m in mats]).reshape(a.shape)
    np.testing.assert_allclose(g.numpy(), ref, atol=1e-12)
    check_grads(tf.linalg.det, [a], order=1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_second_order_at_singular_matrices(dtype):
    """Second order at every rank: with create_graph the adjugate comes from a nonsingular
    rank-r update (Woodbury), so reverse-over-reverse, forward-over-reverse and
    reverse-over-forward all match finite differences of the (polynomial) gradient."""
    rng = np.random.default_rng(3)
    for r in range(4):
        a = rank_r(4, r, dtype, rng)
        assert det_mod._lu_det(a, det_mod._rtol(a))[3]     # the tiny-pivot (SVD) branch
        check_grads(tf.linalg.det, [a], order=2)
    # a stack mixing singular and regular matrices
    a = np.stack([random_array((3, 3), dtype, rng), rank_r(3, 2, dtype, rng)])
    check_grads(tf.linalg.det, [a], order=2)


@pytest.mark.parametrize("smin", [1e-6, 1e-12, 1e-15, 1e-18, 0.0])
def test_ill_conditioned_continuous(smin):
    """Across the switch between the LU form and the SVD form (pivot tolerance n·eps),
    the gradient matches the adjugate of the known SVD to working precision."""
    rng = np.random.default_rng(11)
    q1, _ = np.linalg.qr(random_array((4, 4), np.float64, rng))
    q2, _ = np.linalg.qr(random_array((4, 4), np.float64, rng))
    s = np.array([2.0, 1.5, 0.5, smin])
    a = (q1 * s) @ q2.T
    pi = np.array([np.prod(np.delete(s, i)) for i in range(4)])
    ref = np.linalg.det(q1) * np.linalg.det(q2) * (q1 * pi) @ q2.T   # adj(A)ᵀ
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([tf.linalg.det(x)], [x], [np.ones(())])
    np.testing.assert_allclose(g.numpy(), ref, rtol=0, atol=1e-13)
    _, t = tf.jvp(tf.linalg.det, [a], [np.eye(4)])
    assert t.item() == pytest.approx(np.trace(ref), abs=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("smin", [1e-7, 1e-10, 1e-14])
def test_ill_conditioned_second_order(smin, dtype):
    """create_graph near singularity: d·A⁻¹ would cancel catastrophically in its
    derivatives, the Woodbury form does not (the second derivative stays accurate)."""
    rng = np.random.default_rng(13)
    q1, _ = np.linalg.qr(random_array((3, 3), dtype, rng))
    q2, _ = np.linalg.qr(random_array((3, 3), dtype, rng))
    a = (q1 * np.array([2.0, 0.7, smin])) @ q2.conj().T
    check_grads(tf.linalg.det, [a], order=2)


def test_ill_conditioned_slogdet():
    # κ ≈ 1e12: the gradient A⁻ᵀ is huge but finite and agrees with LAPACK's inverse
    a = np.array([[1.0, 1.0, 0.0], [0.0, 2.0 ** -40, 1.0], [0.0, 0.0, 1.0]])
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([tf.linalg.slogdet(x).logabsdet], [x])
    ref = np.linalg.inv(a).T
    assert np.abs(ref).max() > 1e11
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-10, atol=0)
    (g,) = tf.grad([tf.linalg.det(x)], [x])
    np.testing.assert_allclose(g.numpy(), np.linalg.det(a) * ref, rtol=1e-10, atol=1e-12)


def test_slogdet_singular_raises():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    for dtype in (np.float64, np.complex128):
        x = tf.tensor(a.astype(dtype), requires_grad=True)
        s, l = tf.linalg.slogdet(x)
        with pytest.raises(tf.LinAlgError, match="not differentiable.*tf.linalg.det"):
            tf.grad([l], [x])
        with pytest.raises(tf.LinAlgError, match="singular"):
            tf.jvp(lambda t: tf.linalg.slogdet(t).logabsdet, [a.astype(dtype)],
                   [np.ones((2, 2), dtype)])
    # a stack names the singular member
    x = tf.tensor(np.stack([np.eye(2), a]), requires_grad=True)
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\)"):
        tf.grad([tf.linalg.slogdet(x).logabsdet], [x], [np.ones(2)])
    # the real sign alone has no derivative: nothing to raise, no gradient
    x = tf.tensor(a, requires_grad=True)
    s, _ = tf.linalg.slogdet(x)
    assert s._node is None


# ---- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [tf.linalg.det, tf.linalg.slogdet])
def test_errors(fn, monkeypatch):
    recorded = record_calls(monkeypatch, det_mod, "apply1", "apply")
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="square"):
        fn(x)
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        fn(tf.tensor(np.ones(3), requires_grad=True))
    bad = np.eye(3)
    bad[1, 2] = np.nan
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        fn(tf.tensor(bad, requires_grad=True))
    # the check is fused into the factorization: a scan for small inputs, np.isfinite for
    # large ones (> 2048 entries); both name the first bad entry
    cbad = np.eye(3, dtype=complex)
    cbad[2, 0] = 1j * np.inf
    with pytest.raises(tf.LinAlgError, match=r"non-finite entry .* at index \(2, 0\)"):
        fn(tf.tensor(cbad, requires_grad=True))
    big = np.stack([np.eye(40)] * 3)
    big[2, 39, 0] = -np.inf
    with pytest.raises(tf.LinAlgError, match=r"non-finite entry .* at index \(2, 39, 0\)"):
        fn(tf.tensor(big, requires_grad=True))
    with pytest.raises(tf.DTypeError):
        fn(np.eye(2).astype(object))
    assert recorded == [] and x.grad is None
    # opting out lets LAPACK see the NaN
    out = fn(bad, check_finite=False)
    assert np.isnan(np.asarray(out[-1] if isinstance(out, tuple) else out)).any()


# ---- shared reference derivatives (../shared/oracles) -------------------------------------

ORACLES = oracle_dir(__file__)
ORACLE_OPS = ("det", "slogdet")


def make_fn(case):
    """``(keys, f)``: f(a) returns the op's outputs, named ``keys`` as in the probes."""
    op, cid = case["op"], case["case_id"]
    if case.get("op_args") or case.get("op_kwargs"):
        raise UnsupportedCase(f"{cid}: arguments {case.get('op_args')} "
                              f"{case.get('op_kwargs')} have no tenferro equivalent here")
    if case["observable"]["kind"] != "identity":
        raise UnsupportedCase(f"{cid}: observable {case['observable']['kind']!r}")
    if op == "det":
        return ["value"], lambda a: (tf.linalg.det(a),)
    if op == "slogdet":
        return ["output_0", "output_1"], lambda a: tuple(tf.linalg.slogdet(a))
    raise UnsupportedCase(f"{cid}: op {op!r}")


CASES = load_oracle_cases(ORACLE_OPS, ORACLES)


def test_oracle_cases_found():
    assert_oracle_cases_cover(CASES, ORACLE_OPS, ORACLES)   # skipped without the data


@pytest.mark.parametrize("case", CASES, ids=oracle_case_id)
def test_oracle(case):
    # the sign of a real slogdet requires no grad: replay_oracle_case leaves it out of the seed
    keys, fn = make_fn(case)
    replay_oracle_case(case, fn, keys)
