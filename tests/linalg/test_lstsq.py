"""tf.linalg.pinv and tf.linalg.lstsq: values against NumPy, derivatives of every order
against finite differences (full rank and rank-deficient at constant rank), the backward's
reuse of factorizations, errors, and the shared reference derivatives (../shared/oracles).

Rank-deficient inputs are differentiated through a rank-preserving parametrisation
a = u @ v (u m×r, v r×n): a finite-difference step on a itself would raise the rank, where
the pseudo-inverse is discontinuous, while pinv/lstsq derivatives hold at constant rank.
"""
import importlib

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import UnsupportedOracleCase as UnsupportedCase
from tenferro.testing import (assert_oracle_cases_cover, check_grads, check_low_precision,
                              load_oracle_cases, oracle_case_id, oracle_dir, random_array,
                              record_calls, replay_oracle_case)
from tenferro.testing import oracle_kwargs as _take

# the module (tf.linalg.lstsq is the function of the same name)
lstsq_mod = importlib.import_module("tenferro.linalg.lstsq")
lapack = importlib.import_module("tenferro.linalg._lapack")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
GRAD_DTYPES = [np.float64, np.complex128]


def _rtol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


def _well(shape, dtype, rng):
    """Singular values bounded away from 0 (a random matrix plus 3 on its diagonal)."""
    a = random_array(shape, dtype, rng)
    k = min(shape[-2:])
    a[..., np.arange(k), np.arange(k)] += 3
    return a


def _outs(*idx):
    """lstsq restricted to the given outputs (rank is an int, not differentiable)."""
    return lambda a, b: tuple(tf.linalg.lstsq(a, b)[i] for i in idx)


# ---- pinv: values ------------------------------------------------------------------------

PINV_SHAPES = [(4, 3), (3, 3), (3, 5), (2, 4, 3), (2, 1, 3, 4)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", PINV_SHAPES)
def test_pinv_value(shape, dtype):
    a = random_array(shape, dtype, np.random.default_rng(0))
    x = tf.linalg.pinv(a)
    ref = np.linalg.pinv(a, rtol=None)
    assert x.shape == ref.shape and x.dtype == dtype
    np.testing.assert_allclose(x.numpy(), ref, rtol=_rtol(dtype), atol=_rtol(dtype))


def test_pinv_cutoff_like_numpy():
    rng = np.random.default_rng(1)
    u, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    a = u @ np.diag([4.0, 2.0, 1.0, 1e-3, 1e-17]) @ u.T
    # default: max(m, n)·eps·s_max cuts only 1e-17; rtol=1e-2 also cuts 1e-3;
    # s ≤ rtol·s_max is cut, so rtol = 1 keeps nothing
    for rtol, rank in ((None, 4), (1e-2, 3), (0.5, 1), (1.0, 0)):
        x = tf.linalg.pinv(a, rtol=rtol)
        np.testing.assert_allclose(x.numpy(), np.linalg.pinv(a, rtol=rtol), atol=1e-9)
        assert np.linalg.matrix_rank(x.numpy(), tol=1e-6) == rank
    # one rtol per matrix of a stack
    stack = np.stack([a, a])
    x = tf.linalg.pinv(stack, rtol=np.array([1e-2, 0.5]))
    np.testing.assert_allclose(x.numpy()[0], np.linalg.pinv(a, rtol=1e-2), atol=1e-9)
    np.testing.assert_allclose(x.numpy()[1], np.linalg.pinv(a, rtol=0.5), atol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_hermitian_value(dtype):
    rng = np.random.default_rng(2)
    p = random_array((2, 4, 4), dtype, rng)
    h = p + np.swapaxes(p, -1, -2).conj()          # indefinite Hermitian
    x = tf.linalg.pinv(h, hermitian=True)
    np.testing.assert_allclose(x.numpy(), np.linalg.pinv(h, rtol=None, hermitian=True),
                               rtol=_rtol(dtype), atol=_rtol(dtype))
    # only the lower triangle is read, as numpy's (eigh, UPLO="L")
    junk = np.triu(random_array((4, 4), dtype, rng), 1)
    np.testing.assert_allclose(tf.linalg.pinv(h[0] + junk, hermitian=True).numpy(),
                               x.numpy()[0], rtol=_rtol(dtype), atol=_rtol(dtype))
    # a singular Hermitian matrix: the zero eigenvalue is cut
    v, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    s = v @ np.diag([3.0, -2.0, 1.0, 0.0]) @ v.T
    np.testing.assert_allclose(tf.linalg.pinv(s, hermitian=True).numpy(),
                               np.linalg.pinv(s, rtol=None), atol=1e-9)


def test_pinv_method_numpy_dispatch_builder():
    a = random_array((4, 3), np.float64, np.random.default_rng(3))
    ref = np.linalg.pinv(a, rtol=None)
    t = tf.tensor(a)
    for x in (t.pinv(), np.linalg.pinv(t), tf.pinv_ad(t).run(),
              tf.pinv_ad(t).with_options(rtol=None).run()):
        assert isinstance(x, tf.Tensor)
        np.testing.assert_allclose(x.numpy(), ref, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 4), (0, 3, 3), (2, 0, 3)])
def test_pinv_empty(shape):
    a = tf.tensor(np.zeros(shape), requires_grad=True)
    x = tf.linalg.pinv(a)
    assert x.shape == shape[:-2] + (shape[-1], shape[-2])
    g, = tf.grad([x], [a], [np.ones(x.shape)])
    assert g.shape == shape and not g.numpy().any()


# ---- pinv: derivatives -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 4), (2, 3, 2)])
def test_pinv_grads(shape, dtype):
    check_grads(tf.linalg.pinv, [_well(shape, dtype, np.random.default_rng(4))],
                modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("m,n", [(5, 3), (4, 4), (3, 5)])
def test_pinv_grads_rank_deficient(m, n, dtype):
    # rank 2 (< min(m, n)) with the two singular values well apart from 0: every
    # projector term of the Golub–Pereyra formula is active
    rng = np.random.default_rng(5)
    u, v = random_array((m, 2), dtype, rng), random_array((2, n), dtype, rng)
    check_grads(lambda u, v: tf.linalg.pinv(u @ v), [u, v], modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_pinv_grads_hermitian(dtype):
    # through the Hermitian parametrisation p + pᴴ (the derivative is that of the general
    # pinv, which for Hermitian tangents is the Hermitian one); also a singular one
    rng = np.random.default_rng(6)
    p = random_array((2, 4, 4), dtype, rng)
    check_grads(lambda p: tf.linalg.pinv(p + p.mH, hermitian=True), [p], order=2)
    w = random_array((4, 2), dtype, rng)       # w diag(1, −1) wᴴ: rank 2, indefinite
    sign = np.diag([1.0, -1.0])
    check_grads(lambda w: tf.linalg.pinv(w @ sign @ w.mH, hermitian=True), [w], order=2)


def test_pinv_rank_full_skips_projectors(monkeypatch):
    # at full column rank I − XA ≡ 0: the backward of a tall matrix uses 6 matmul products
    # (two for −XᴴX̄Xᴴ, four for (I − AX)X̄ᴴXXᴴ), not 10
    a = tf.tensor(_well((5, 3), np.float64, np.random.default_rng(7)), requires_grad=True)
    x = tf.linalg.pinv(a)
    calls = []
    mm3 = lstsq_mod._mm3
    monkeypatch.setattr(lstsq_mod, "_mm3", lambda *args: calls.append(1) or mm3(*args))
    tf.grad([x], [a], [np.ones((3, 5))])
    assert len(calls) == 3


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_pinv_low_precision(dtype):
    rng = np.random.default_rng(8)
    check_low_precision(tf.linalg.pinv, [_well((2, 4, 3), dtype, rng)])
    check_low_precision(lambda p: tf.linalg.pinv(p + p.mH, hermitian=True),
                        [_well((3, 3), dtype, rng)])


# ---- lstsq: values -----------------------------------------------------------------------

# (a shape, b shape)
LSTSQ_SHAPES = [
    ((5, 3), (5,)),            # tall, vector b: residuals (1,)
    ((5, 3), (5, 2)),
    ((3, 3), (3, 2)),          # square: no residuals
    ((3, 5), (3, 2)),          # wide: minimum-norm solution, no residuals
    ((2, 5, 3), (5,)),         # one vector for a stack
    ((5, 3), (2, 5, 2)),       # one matrix for a stack of right-hand sides
    ((2, 1, 4, 3), (3, 4, 1)),
]


def _np_lstsq(a, b):
    """numpy.linalg.lstsq matrix by matrix (it takes no batch)."""
    vector = b.ndim == 1
    bm = b[:, None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    bm = np.broadcast_to(bm, batch + bm.shape[-2:]).reshape((-1,) + bm.shape[-2:])
    res = [np.linalg.lstsq(ai, bi[:, 0] if vector else bi) for ai, bi in zip(a, bm)]
    x = np.stack([r[0] for r in res]).reshape(batch + res[0][0].shape)
    resid = [r[1] for r in res]
    resid = (np.stack(resid).reshape(batch + resid[0].shape) if resid[0].size
             else resid[0])
    rank = np.array([r[2] for r in res]).reshape(batch)
    s = np.stack([r[3] for r in res]).reshape(batch + res[0][3].shape)
    return x, resid, rank, s


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", LSTSQ_SHAPES)
def test_lstsq_value(sa, sb, dtype):
    rng = np.random.default_rng(10)
    a, b = random_array(sa, dtype, rng), random_array(sb, dtype, rng)
    r = tf.linalg.lstsq(a, b)
    x, res, rank, s = _np_lstsq(a.astype(np.complex128 if np.dtype(dtype).kind == "c"
                                         else np.float64), b)
    tol = _rtol(dtype)
    assert r.x.shape == x.shape and r.x.dtype == dtype
    np.testing.assert_allclose(r.x.numpy(), x, rtol=tol, atol=tol)
    assert r.residuals.shape == res.shape and r.residuals.dtype == np.finfo(dtype).dtype
    np.testing.assert_allclose(r.residuals.numpy(), res, rtol=tol, atol=tol)
    np.testing.assert_array_equal(r.rank, rank)
    assert isinstance(r.rank, int) == (len(sa) == 2 and len(sb) <= 2)
    np.testing.assert_allclose(r.singular_values.numpy(), s, rtol=tol, atol=tol)
    assert r.singular_values.dtype == np.finfo(dtype).dtype


def test_lstsq_rank_deficient_value():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))
    b = rng.standard_normal((6, 3))
    r = tf.linalg.lstsq(a, b)
    x, res, rank, s = np.linalg.lstsq(a, b)
    assert r.rank == rank == 2 and r.residuals.shape == res.shape == (0,)
    np.testing.assert_allclose(r.x.numpy(), x, atol=1e-10)
    np.testing.assert_allclose(r.x.numpy(), np.linalg.pinv(a) @ b, atol=1e-10)
    # rcond: a cut like numpy's (s ≤ rcond·s_max count as zero)
    q, _ = np.linalg.qr(rng.standard_normal((6, 2)))
    a = q @ np.diag([1.0, 1e-4])
    for rcond, rank in ((None, 2), (1e-3, 1)):
        r = tf.linalg.lstsq(a, b, rcond=rcond)
        ref = np.linalg.lstsq(a, b, rcond=rcond)
        assert r.rank == ref[2] == rank
        np.testing.assert_allclose(r.x.numpy(), ref[0], atol=1e-9)
    # a mixed stack: residuals need every matrix at full rank
    stack = np.stack([rng.standard_normal((6, 4)),
                      rng.standard_normal((6, 1)) @ rng.standard_normal((1, 4))])
    r = tf.linalg.lstsq(stack, b)
    np.testing.assert_array_equal(r.rank, [4, 1])
    assert r.residuals.shape == (0,)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("sa", [(40, 12), (12, 40)])
def test_lstsq_ill_conditioned_full_rank_like_gelsd(sa, dtype):
    # cond(a) = 1e10 at full rank: the QR path (backward stable, like gelsd's SVD) gives
    # gelsd's rank, singular values and solution, to the accuracy cond·eps allows
    import scipy.linalg as sla
    rng = np.random.default_rng(23)
    m, n = sa
    p = min(sa)
    u = np.linalg.qr(random_array((m, p), dtype, rng))[0]
    v = np.linalg.qr(random_array((n, p), dtype, rng))[0]
    a = (u * np.logspace(0, -10, p)) @ v.conj().T
    b = random_array((m, 2), dtype, rng)
    r = tf.linalg.lstsq(a, b)
    x0, res0, rank0, s0 = sla.lstsq(a, b, cond=np.finfo(np.float64).eps * max(sa),
                                    lapack_driver="gelsd")
    assert r.rank == rank0 == p
    np.testing.assert_allclose(r.singular_values.numpy(), s0, rtol=1e-12, atol=1e-15)
    assert np.linalg.norm(r.x.numpy() - x0) <= 1e10 * 1e-15 * np.linalg.norm(x0)
    if m > n:
        np.testing.assert_allclose(r.residuals.numpy(), res0, rtol=1e-6)


@pytest.mark.parametrize("sa", [(2, 6, 4), (2, 4, 6)])
def test_pinv_mixed_rank_stack(sa):
    # full-rank matrices take the QR path, a stack with a rank-deficient one the SVD path:
    # both are numpy's pseudo-inverse
    rng = np.random.default_rng(24)
    a = random_array(sa, np.complex128, rng)
    for stack in (a, np.stack([a[0], a[1, :, :1] @ a[1, :1, :]])):
        x = tf.linalg.pinv(stack)
        np.testing.assert_allclose(x.numpy(), np.linalg.pinv(stack), atol=1e-12)


def test_lstsq_mixed_dtypes_builder_dispatch():
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    r = tf.linalg.lstsq(a.astype(np.float32), b + 1j * b)
    assert r.x.dtype == np.complex128
    np.testing.assert_allclose(r.x.numpy(), np.linalg.lstsq(a, b + 1j * b)[0], rtol=1e-5)
    # integers become float64, like numpy
    r = tf.linalg.lstsq(np.array([[1, 0], [0, 2], [0, 0]]), np.array([1, 2, 3]))
    assert r.x.dtype == np.float64 and np.allclose(r.x.numpy(), [1, 1])
    assert np.allclose(r.residuals.numpy(), [9.0])
    for r in (tf.lstsq_ad(a, b).run(), np.linalg.lstsq(tf.tensor(a), tf.tensor(b))):
        assert isinstance(r, tf.linalg.LstsqResult) and isinstance(r.x, tf.Tensor)
        np.testing.assert_allclose(r.x.numpy(), np.linalg.lstsq(a, b)[0], atol=1e-12)


@pytest.mark.parametrize("sa,sb,x_shape,res_shape", [
    ((0, 3), (0, 2), (3, 2), (0,)),       # m = 0: x = 0
    ((4, 0), (4, 2), (0, 2), (2,)),       # n = 0: x empty, the residual is all of b
    ((4, 3), (4, 0), (3, 0), (0,)),       # k = 0
    ((0, 4, 3), (0, 4, 2), (0, 3, 2), (0, 2)),
])
def test_lstsq_empty(sa, sb, x_shape, res_shape):
    rng = np.random.default_rng(13)
    a = tf.tensor(random_array(sa, np.float64, rng), requires_grad=True)
    b = tf.tensor(random_array(sb, np.float64, rng), requires_grad=True)
    x, res, rank, s = tf.linalg.lstsq(a, b)
    assert x.shape == x_shape and res.shape == res_shape
    assert s.shape == sa[:-2] + (min(sa[-2:]),)
    if sa == (4, 0):
        np.testing.assert_allclose(res.numpy(), np.sum(b.numpy() ** 2, axis=0))
    ga, gb = tf.grad([x, res], [a, b], [np.ones(x_shape), np.ones(res_shape)])
    assert ga.shape == sa and not ga.numpy().any()
    if sa == (4, 0):   # residuals = Σ b²: their gradient is 2b
        np.testing.assert_allclose(gb.numpy(), 2 * b.numpy())
    else:
        assert gb is None or not gb.numpy().any()


# ---- lstsq: derivatives ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("sa,sb", [((5, 3), (5, 2)), ((5, 3), (5,)), ((3, 3), (3, 2))])
def test_lstsq_grads_full_column_rank(sa, sb, dtype):
    # x, the residuals (tall) and the singular values, every order
    rng = np.random.default_rng(14)
    check_grads(_outs(0, 1, 3), [_well(sa, dtype, rng), random_array(sb, dtype, rng)],
                modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_lstsq_grads_wide_minimum_norm(dtype):
    rng = np.random.default_rng(15)
    check_grads(_outs(0, 3), [_well((3, 5), dtype, rng), random_array((3, 2), dtype, rng)],
                modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("m,n", [(6, 4), (4, 4), (3, 5)])
def test_lstsq_grads_rank_deficient(m, n, dtype):
    # rank 2: both the residual and the null-space terms of the rule are active
    rng = np.random.default_rng(16)
    u, v = random_array((m, 2), dtype, rng), random_array((2, n), dtype, rng)
    b = random_array((m, 2), dtype, rng)
    check_grads(lambda u, v, b: tf.linalg.lstsq(u @ v, b).x, [u, v, b],
                modes=("rev", "fwd"), order=2)


def test_lstsq_grads_batched_and_broadcast():
    rng = np.random.default_rng(17)
    c = np.complex128
    check_grads(_outs(0, 1, 3), [_well((2, 5, 3), c, rng), random_array((5,), c, rng)],
                order=2)
    check_grads(_outs(0, 1), [_well((5, 3), c, rng), random_array((2, 5, 2), c, rng)],
                order=1)
    check_grads(_outs(0,), [_well((2, 1, 3, 4), c, rng), random_array((3, 3, 1), c, rng)],
                order=1)


@pytest.mark.parametrize("vector", [False, True])
def test_residuals_rule_away_from_the_solution(vector):
    # lstsq's residual op at an arbitrary x: there Aᴴ(B − AX) ≠ 0, so its x-cotangent and
    # the AẊ tangent (zero at the least-squares solution) are checked too
    rng = np.random.default_rng(22)
    c = np.complex128
    a, b = random_array((2, 5, 3), c, rng), random_array((5,) if vector else (5, 2), c, rng)
    x = random_array((2, 3) if vector else (2, 3, 2), c, rng)
    check_grads(lambda a, b, x: lstsq_mod._residuals(a, b, x, vector), [a, b, x], order=2)


def test_lstsq_grads_mixed_rank_stack():
    # one full-rank and one rank-1 matrix: the explicit-pseudo-inverse path of the backward
    rng = np.random.default_rng(18)
    full, u, v = _well((5, 3), np.float64, rng), rng.standard_normal((5, 1)), \
        rng.standard_normal((1, 3))
    b = rng.standard_normal((2, 5, 2))
    check_grads(lambda f, u, v, b: tf.linalg.lstsq(tf.stack([f, u @ v]), b).x,
                [full, u, v, b], order=1)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_lstsq_low_precision(dtype):
    rng = np.random.default_rng(19)
    check_low_precision(_outs(0, 1, 3), [_well((2, 5, 3), dtype, rng),
                                         random_array((5, 2), dtype, rng)])
    check_low_precision(_outs(0,), [_well((3, 5), dtype, rng),
                                    random_array((3, 2), dtype, rng)])


@pytest.mark.parametrize("sa", [(6, 3), (3, 5)])
def test_lstsq_backward_reuses_one_factorization(sa, monkeypatch):
    # the backward neither re-solves nor decomposes again: the primal's QR (its R, of A or
    # of Aᴴ) serves B̄, Ā and a later forward-mode rule; the SVD is taken only for a
    # singular-value cotangent
    rng = np.random.default_rng(20)
    a = tf.tensor(_well(sa, np.float64, rng), requires_grad=True)
    b = tf.tensor(rng.standard_normal((sa[0], 2)), requires_grad=True)
    x, res, _, s = tf.linalg.lstsq(a, b)
    calls = []
    for name in ("qr", "svd", "eigh"):
        fn = getattr(lapack, name)
        monkeypatch.setattr(lapack, name, lambda *args, f=fn, n=name, **kw:
                            calls.append(n) or f(*args, **kw))
    primal = lstsq_mod._lstsq_primal
    monkeypatch.setattr(lstsq_mod, "_lstsq_primal",
                        lambda *args: calls.append("primal") or primal(*args))
    outs = [x] + ([res] if sa[0] > sa[1] else [])
    gs = tf.grad(outs, [a, b], [np.ones(o.shape) for o in outs], retain_graph=True)
    assert calls == [] and all(g is not None for g in gs)
    tf.grad(outs, [a, b], [np.ones(o.shape) for o in outs], retain_graph=True)
    assert calls == []
    tf.grad([s], [a], [np.ones(s.shape)])
    assert calls == ["svd"]


# ---- errors ------------------------------------------------------------------------------

def _watch_records(monkeypatch):
    return record_calls(monkeypatch, lstsq_mod, "apply", "apply1")


@pytest.mark.parametrize("sa,sb,match", [
    ((3,), (3,), "ndim >= 2"),
    ((4, 3), (), "0-d"),
    ((4, 3), (3,), "length m = 4"),
    ((4, 3), (3, 2), "m = 4 rows"),
    ((2, 4, 3), (3, 4, 2), "do not broadcast"),
])
def test_lstsq_shape_errors(sa, sb, match, monkeypatch):
    recorded = _watch_records(monkeypatch)
    a = tf.tensor(np.ones(sa), requires_grad=True)
    b = tf.tensor(np.ones(sb), requires_grad=True)
    with pytest.raises(tf.ShapeError, match=match):
        tf.linalg.lstsq(a, b)
    assert recorded == [] and a.grad is None


def test_pinv_errors(monkeypatch):
    recorded = _watch_records(monkeypatch)
    a = tf.tensor(np.ones((2, 3, 4)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.pinv(np.ones(3))
    with pytest.raises(tf.ShapeError, match="square"):
        tf.linalg.pinv(a, hermitian=True)
    with pytest.raises(tf.ShapeError, match="rtol of shape"):
        tf.linalg.pinv(a, rtol=np.ones(3))
    with pytest.raises(tf.DTypeError, match="rtol"):
        tf.linalg.pinv(a, rtol="big")
    assert recorded == [] and a.grad is None


def test_non_finite_and_dtypes(monkeypatch):
    recorded = _watch_records(monkeypatch)
    rng = np.random.default_rng(21)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    bad = a.copy()
    bad[1, 2] = np.nan
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.pinv(tf.tensor(bad, requires_grad=True))
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.pinv(bad[:3], hermitian=True)
    for args in ((bad, b), (a, np.array([1.0, np.inf, 0.0, 0.0]))):
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            tf.linalg.lstsq(*[tf.tensor(x, requires_grad=True) for x in args])
    with pytest.raises(tf.DTypeError):
        tf.linalg.pinv(a.astype(object))
    with pytest.raises(tf.DTypeError):
        tf.linalg.lstsq(a, b.astype(object))
    assert recorded == []
    # opting out lets LAPACK see the NaN: it does not converge, and says so
    with pytest.raises(tf.LinAlgError, match="converge"):
        tf.linalg.lstsq(bad, b, check_finite=False)
    with pytest.raises(tf.LinAlgError, match="converge"):
        tf.linalg.pinv(bad, check_finite=False)


def test_lstsq_failure_names_the_batch_index():
    # NaN reaches the driver only with check_finite=False; it must still fail cleanly,
    # naming the matrix of the stack (compiled driver and twin alike).
    stack = np.ones((2, 3, 4, 2))
    stack[0, 1, 0, 0] = np.nan
    with pytest.raises(tf.LinAlgError, match=r"matrix \(0, 1\) of the stack"):
        tf.linalg.lstsq(stack, np.ones(4), check_finite=False)


# ---- conformance: the shared reference derivatives ---------------------------------------

ORACLES = oracle_dir(__file__)
ORACLE_OPS = ("pinv", "pinv_hermitian", "lstsq_grad_oriented")


def make_fn(case):
    """A function of the case's input Tensors returning the tuple of observed outputs."""
    op, cid = case["op"], case["case_id"]
    if case.get("op_args"):
        raise UnsupportedCase(f"{cid}: op_args {case['op_args']}")
    if case["observable"]["kind"] != "identity":
        raise UnsupportedCase(f"{cid}: observable {case['observable']['kind']!r}")
    kw = dict(case.get("op_kwargs") or {})
    if op == "pinv":
        kw = _take(kw, ("rtol", "hermitian"), cid)
        return lambda a: (tf.linalg.pinv(a, rtol=kw.get("rtol"),
                                         hermitian=kw.get("hermitian", False)),)
    if op == "pinv_hermitian":
        # the README's Hermitian wrapper: the op sees a + aᴴ (the direction is a tangent
        # of the raw a, so the wrapper is differentiated through)
        kw = _take(kw, ("rtol", "hermitian"), cid)
        if kw.get("hermitian") is not True:
            raise UnsupportedCase(f"{cid}: pinv_hermitian with hermitian={kw['hermitian']}")
        return lambda a: (tf.linalg.pinv(a + a.mH, rtol=kw.get("rtol"), hermitian=True),)
    if op == "lstsq_grad_oriented":
        driver = _take(kw, ("driver",), cid).get("driver", "gelsy")
        if driver not in ("gels", "gelsy", "gelsd", "gelss"):
            raise UnsupportedCase(f"{cid}: driver {driver!r}")

        def f(a, b):
            r = tf.linalg.lstsq(a, b)
            # PyTorch's residuals (README): like tenferro's (m > n, every matrix of full
            # rank, else empty) except that gelsy never computes them
            if driver == "gelsy":
                return r.x, tf.tensor(np.zeros(0, r.residuals.dtype))
            return r.x, r.residuals
        return f
    raise UnsupportedCase(f"{cid}: op {op!r} is not covered by this adapter")


# Only the replay is skipped without the data (the rest of this file does not need it).
CASES = load_oracle_cases(ORACLE_OPS, ORACLES)


def test_oracle_cases_found():
    """The replay really runs: each op of this file has cases on disk."""
    assert_oracle_cases_cover(CASES, ORACLE_OPS, ORACLES)


@pytest.mark.parametrize("case", CASES, ids=oracle_case_id)
def test_oracle(case):
    # the probes name the outputs value (pinv) or output_0/1 (lstsq's solution, residuals)
    replay_oracle_case(case, make_fn(case))
