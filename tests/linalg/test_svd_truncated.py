"""tf.linalg.svd(a, max_rank=..., rtol=..., atol=...): the truncated SVD.

Its derivative is the derivative of "full SVD, then keep the first k triplets", which
couples the kept vectors to the discarded ones (tenferro/linalg/svd_truncated.py). Two
paths compute it: the full path (LAPACK svd + slicing) and the partial path (svds +
Rayleigh–Ritz, rules that solve the coupling by conjugate gradients or, on Tensors, a dense
solve). Every derivative test runs on both; the partial path is forced on small matrices
by lowering its size thresholds, and a spy checks that it really ran.

Singular vectors have a free phase (sign) per pair, so the losses are gauge invariant:
s, u diag(s) vt, u vt, |u|, |uᴴB|², |vt D|².
"""
import sys

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg.svd_truncated as st
from tenferro._errors import GaugeError, ShapeError
from tenferro.testing import check_grads, check_low_precision, random_array


@pytest.fixture(params=["full", "partial"])
def path(request, monkeypatch):
    """Which primal/rules the truncated svd uses; "partial" forces the svds path on small
    matrices and yields a counter of the partial op's uses (to assert it ran)."""
    used = {"partial": 0}
    if request.param == "partial":
        monkeypatch.setattr(st, "_PARTIAL_MIN_DIM", 1)
        monkeypatch.setattr(st, "_PARTIAL_MAX_FRACTION", 1.0)
        monkeypatch.setattr(st, "_EXTRA", 2)
    orig = st._partial

    def spy(*args, **kw):
        res = orig(*args, **kw)
        used["partial"] += res is not None
        return res
    monkeypatch.setattr(st, "_partial", spy)
    yield request.param, used
    if request.param == "partial":
        assert used["partial"] > 0, "the partial path did not run"
    else:
        assert used["partial"] == 0


def spectrum_matrix(s, m, n, dtype=np.float64, rng=0):
    """An m x n matrix with singular values s (descending), random singular vectors."""
    rng = np.random.default_rng(rng)
    k = min(m, n)
    q1 = np.linalg.qr(random_array((m, m), dtype, rng))[0][:, :k]
    q2 = np.linalg.qr(random_array((n, n), dtype, rng))[0][:, :k]
    return (q1 * np.asarray(s, float)) @ q2.conj().T


# shapes (m, n) with k: tall, wide, square, batched; the partial path needs k + 2 < min(m, n)
CASES = [((9, 7), 3, np.float64), ((7, 9), 3, np.float64), ((8, 8), 4, np.float64),
         ((9, 7), 3, np.complex128), ((6, 8), 2, np.complex128), ((2, 8, 6), 3, np.float64),
         ((2, 6, 7), 2, np.complex128)]


def _loss_parts(u, s, vt, consts):
    Cs, C, B, D = (tf.tensor(c) for c in consts)
    recon = (u * s[..., None, :].astype(u.dtype)) @ vt
    return (tf.sum(Cs * s) + tf.sum(tf.real(C * recon))
            + tf.sum(tf.abs(u.mH @ B) ** 2) + tf.sum(tf.abs(vt @ D) ** 2))


def _consts(shape, k, dtype, rng):
    m, n = shape[-2:]
    batch = shape[:-2]
    return (rng.standard_normal(batch + (k,)), random_array(shape, dtype, rng),
            random_array(batch + (m, 2), dtype, rng), random_array(batch + (n, 2), dtype, rng))


def truncated_loss(a, k, consts):
    u, s, vt = tf.linalg.svd(a, max_rank=k)
    return _loss_parts(u, s, vt, consts)


def sliced_loss(a, k, consts):
    """The reference: tf.linalg.svd (full spectrum), then the first k triplets."""
    u, s, vt = tf.linalg.svd(a)
    return _loss_parts(u[..., :, :k], s[..., :k], vt[..., :k, :], consts)


def rel_err(x, ref):
    return np.max(np.abs(np.asarray(x) - ref)) / np.max(np.abs(ref))


# ---- values ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,k,dtype", CASES)
def test_values(shape, k, dtype, path):
    a = random_array(shape, dtype, 1)
    u, s, vt = tf.linalg.svd(a, max_rank=k)
    nu, ns, nvt = np.linalg.svd(a, full_matrices=False)
    assert u.shape == shape[:-1] + (k,) and s.shape == shape[:-2] + (k,)
    assert vt.shape == shape[:-2] + (k, shape[-1])
    assert u.dtype == dtype and vt.dtype == dtype and s.dtype == ns.dtype
    np.testing.assert_allclose(s.numpy(), ns[..., :k], rtol=1e-13, atol=1e-13)
    best = (nu[..., :, :k] * ns[..., None, :k]) @ nvt[..., :k, :]    # Eckart–Young
    rec = (u.numpy() * s.numpy()[..., None, :]) @ vt.numpy()
    np.testing.assert_allclose(rec, best, atol=1e-12)
    eye = np.broadcast_to(np.eye(k), shape[:-2] + (k, k))
    np.testing.assert_allclose(u.numpy().conj().swapaxes(-1, -2) @ u.numpy(), eye, atol=1e-13)
    np.testing.assert_allclose(vt.numpy() @ vt.numpy().conj().swapaxes(-1, -2), eye,
                               atol=1e-13)


def test_partial_path_is_automatic_and_accurate():
    """A 300 x 300 matrix with max_rank=10 takes the partial path by default; its values and
    vectors agree with LAPACK's to rounding, and it is deterministic."""
    a = random_array((300, 300), np.float64, 3)
    assert st._use_partial(a, 10)
    x = tf.tensor(a, requires_grad=True)
    u, s, vt = tf.linalg.svd(x, max_rank=10)
    assert u._node.op.name == "svd_truncated"
    nu, ns, nvt = np.linalg.svd(a)
    np.testing.assert_allclose(s.numpy(), ns[:10], rtol=1e-13)
    # the projectors onto the kept singular subspaces (phase free)
    np.testing.assert_allclose(u.numpy() @ u.numpy().T, nu[:, :10] @ nu[:, :10].T,
                               atol=1e-11)
    np.testing.assert_allclose(vt.numpy().T @ vt.numpy(), nvt[:10].T @ nvt[:10], atol=1e-11)
    again = tf.linalg.svd(a, max_rank=10)
    for p, q in zip((u, s, vt), again):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_rank_from_tolerances():
    s = [5.0, 3.0, 1.0, 0.5, 1e-3, 0.0]
    a = spectrum_matrix(s, 8, 6)
    assert tf.linalg.svd(a, max_rank=2).s.shape == (2,)
    assert tf.linalg.svd(a, max_rank=20).s.shape == (6,)       # capped at min(m, n)
    assert tf.linalg.svd(a, atol=0.5).s.shape == (3,)          # strictly above atol
    assert tf.linalg.svd(a, atol=0.49).s.shape == (4,)
    assert tf.linalg.svd(a, rtol=0.11).s.shape == (3,)         # above rtol * s_max = 0.55
    assert tf.linalg.svd(a, rtol=0.09).s.shape == (4,)         # above 0.45: 0.5 is kept
    assert tf.linalg.svd(a, rtol=0.1, atol=2.0).s.shape == (2,)   # the larger threshold
    assert tf.linalg.svd(a, rtol=1e-6, max_rank=2).s.shape == (2,)
    # a zero tolerance drops exact zeros; max_rank alone keeps them
    z = np.diag([3.0, 2.0, 0.0])
    assert tf.linalg.svd(z, atol=0.0).s.shape == (2,)
    assert tf.linalg.svd(z, rtol=0.0).s.shape == (2,)
    assert tf.linalg.svd(z, max_rank=3).s.shape == (3,)
    # everything below the threshold: k = 0, empty factors of the right shapes
    u, s0, vt = tf.linalg.svd(a, atol=10.0)
    assert (u.shape, s0.shape, vt.shape) == ((8, 0), (0,), (0, 6))


def test_rank_of_a_stack_is_the_largest():
    """Batched input with tolerances: k is the largest rank over the stack; a matrix of lower
    rank keeps its next singular values too (documented), and every matrix is exact."""
    a = np.stack([spectrum_matrix([4.0, 2.0, 1.0, 0.1, 0.01], 6, 5, rng=1),
                  spectrum_matrix([4.0, 0.2, 0.1, 0.05, 0.01], 6, 5, rng=2)])
    u, s, vt = tf.linalg.svd(a, rtol=0.2)
    assert s.shape == (2, 3)
    np.testing.assert_allclose(s.numpy(), [[4.0, 2.0, 1.0], [4.0, 0.2, 0.1]], rtol=1e-13)


def test_rank_of_a_stack_both_paths(path):
    """The same with max_rank (so that the partial path applies): ranks 3 and 2 -> k = 3,
    and the gradient is the full SVD's sliced to 3 for both matrices."""
    s1 = [4.0, 2.0, 1.0, 0.1, 0.05, 0.02, 0.01, 0.005]
    s2 = [4.0, 2.0, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005]
    a = np.stack([spectrum_matrix(s1, 9, 8, rng=1), spectrum_matrix(s2, 9, 8, rng=2)])
    u, s, vt = tf.linalg.svd(a, max_rank=5, rtol=0.2)
    np.testing.assert_allclose(s.numpy(), [s1[:3], s2[:3]], rtol=1e-13)
    rng = np.random.default_rng(3)
    consts = _consts(a.shape, 3, np.float64, rng)

    def loss(x):
        u, s, vt = tf.linalg.svd(x, max_rank=5, rtol=0.2)
        return _loss_parts(u, s, vt, consts)
    x = tf.tensor(a, requires_grad=True)
    g, = tf.grad([loss(x)], [x])
    x = tf.tensor(a, requires_grad=True)
    ref, = tf.grad([sliced_loss(x, 3, consts)], [x])
    assert rel_err(g.numpy(), ref.numpy()) < 1e-10


# ---- derivatives: equal to "full SVD then slice" ----------------------------------------

@pytest.mark.parametrize("shape,k,dtype", CASES)
def test_gradient_equals_full_svd_then_slice(shape, k, dtype, path):
    rng = np.random.default_rng(4)
    a = random_array(shape, dtype, rng)
    consts = _consts(shape, k, dtype, rng)
    grads = []
    for loss in (truncated_loss, sliced_loss):
        x = tf.tensor(a, requires_grad=True)
        grads.append(tf.grad([loss(x, k, consts)], [x])[0].numpy())
    assert rel_err(grads[0], grads[1]) < 1e-10
    # forward mode: the directional derivative along a random direction
    t = random_array(shape, dtype, rng)
    tans = [tf.jvp(lambda x: loss(x, k, consts), [tf.tensor(a)], [tf.tensor(t)])[1].numpy()
            for loss in (truncated_loss, sliced_loss)]
    assert rel_err(tans[0], tans[1]) < 1e-10
    # and both agree with <gradient, direction>
    np.testing.assert_allclose(tans[1], np.real(np.vdot(grads[1], t)), rtol=1e-10)


def test_gradient_with_many_solver_iterations(monkeypatch):
    """A larger matrix with a flat spectrum at the cut: the conjugate-gradient solve needs
    many iterations (few extra Ritz vectors), and is still exact to 1e-10."""
    monkeypatch.setattr(st, "_PARTIAL_MIN_DIM", 1)
    monkeypatch.setattr(st, "_PARTIAL_MAX_FRACTION", 1.0)
    monkeypatch.setattr(st, "_EXTRA", 1)
    rng = np.random.default_rng(5)
    shape, k = (120, 90), 6
    a = random_array(shape, np.float64, rng)
    consts = _consts(shape, k, np.float64, rng)
    x = tf.tensor(a, requires_grad=True)
    u, s, vt = tf.linalg.svd(x, max_rank=k)
    assert u._node.op.name == "svd_truncated"
    g, = tf.grad([_loss_parts(u, s, vt, consts)], [x])
    x = tf.tensor(a, requires_grad=True)
    ref, = tf.grad([sliced_loss(x, k, consts)], [x])
    assert rel_err(g.numpy(), ref.numpy()) < 1e-10


def gauge_free(a, k):
    u, s, vt = tf.linalg.svd(a, max_rank=k)
    return s, tf.abs(u), u @ vt, (u * s[..., None, :].astype(a.dtype)) @ vt


@pytest.mark.parametrize("shape,k,dtype", [((6, 5), 2, np.float64), ((5, 6), 2, np.complex128),
                                           ((2, 6, 5), 2, np.float64),
                                           ((2, 5, 6), 2, np.complex128)])
def test_check_grads(shape, k, dtype, path):
    a = random_array(shape, dtype, 6)
    check_grads(lambda x: gauge_free(x, k), [a], modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("shape,k", [((7, 6), 2), ((6, 7), 2)])
def test_low_precision(shape, k, path):
    a = spectrum_matrix([3.0, 2.0, 1.0, 0.8, 0.5, 0.3], *shape)
    check_low_precision(lambda x: gauge_free(x, k), [a])
    check_low_precision(lambda x: gauge_free(x, k), [a.astype(np.complex128)])


# ---- the thin-SVD formula on the kept triplets is not the derivative ---------------------

def naive_thin_vjp(a, k, gu, gs, gvt):
    """docs/rules.md's thin-SVD reverse rule applied to the kept triplets alone (NumPy, real),
    i.e. the coupling to the discarded triplets dropped: exact only when they are zero."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    u, s, vt = u[:, :k], s[:k], vt[:k]
    v, gv = vt.T, gvt.T
    d = s[None, :] ** 2 - s[:, None] ** 2
    F = np.where(d == 0, 0, 1 / np.where(d == 0, 1, d))
    S = np.diag(s)
    core = (F * (u.T @ gu - gu.T @ u)) @ S + S @ (F * (v.T @ gv - gv.T @ v)) + np.diag(gs)
    return (u @ core @ vt + ((gu - u @ (u.T @ gu)) / s) @ vt
            + (u / s) @ (gv - v @ (v.T @ gv)).T), (u, s, vt)


def _cotangent_gradient(a, k, cots):
    x = tf.tensor(a, requires_grad=True)
    u, s, vt = tf.linalg.svd(x, max_rank=k)
    # the same cotangent for the factors tenferro returns as for numpy's: align the signs
    nu = np.linalg.svd(a)[0][:, :k]
    sign = np.sign(np.sum(u.numpy() * nu, axis=0))
    gu, gs, gvt = cots
    g, = tf.grad([u, s, vt], [x], [gu * sign, gs, gvt * sign[:, None]])
    return g.numpy()


def test_naive_thin_formula_misses_the_discarded_coupling(path):
    rng = np.random.default_rng(7)
    m, n, k = 9, 7, 3
    cots = (rng.standard_normal((m, k)), rng.standard_normal(k), rng.standard_normal((k, n)))
    # discarded singular values not small: the naive rule is visibly wrong
    a = spectrum_matrix([5.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.5], m, n, rng=8)
    naive, _ = naive_thin_vjp(a, k, *cots)
    exact = _cotangent_gradient(a, k, cots)
    assert rel_err(naive, exact) > 1e-3
    # ... and right when they are zero (a rank-k matrix): the test's formula is the thin rule
    a0 = spectrum_matrix([5.0, 4.0, 3.0, 0, 0, 0, 0], m, n, rng=8)
    naive0, _ = naive_thin_vjp(a0, k, *cots)
    assert rel_err(naive0, _cotangent_gradient(a0, k, cots)) < 1e-10


# ---- degenerate cut, gauge, errors --------------------------------------------------------

def test_degenerate_cut_uses_the_broadened_full_rule(monkeypatch):
    """s_k == s_{k+1}: which of the two vectors is kept is arbitrary and the truncated
    function has no derivative there. Documented behaviour: the derivative of the full SVD
    then slicing with the derivative_eps broadening (finite), also when max_rank asks for
    the partial path (it falls back to the full path)."""
    monkeypatch.setattr(st, "_PARTIAL_MIN_DIM", 1)
    monkeypatch.setattr(st, "_PARTIAL_MAX_FRACTION", 1.0)
    rng = np.random.default_rng(9)
    a = spectrum_matrix([4.0, 2.0, 1.0, 1.0, 0.5, 0.2], 8, 6, rng=10)
    k = 3
    consts = _consts((8, 6), k, np.float64, rng)
    x = tf.tensor(a, requires_grad=True)
    u, s, vt = tf.linalg.svd(x, max_rank=k)
    assert u._node.op.name != "svd_truncated"          # the full path was taken
    g, = tf.grad([_loss_parts(u, s, vt, consts)], [x])
    x = tf.tensor(a, requires_grad=True)
    ref, = tf.grad([sliced_loss(x, k, consts)], [x])
    assert np.all(np.isfinite(g.numpy()))
    np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    # well separated cut: the partial path is used
    b = spectrum_matrix([4.0, 2.0, 1.0, 0.7, 0.5, 0.2], 8, 6, rng=10)
    assert tf.linalg.svd(tf.tensor(b, requires_grad=True), max_rank=k).u._node.op.name \
        == "svd_truncated"


def test_gauge_check(path):
    a = random_array((7, 6), np.complex128, 11)
    x = tf.tensor(a, requires_grad=True)
    u, s, vt = tf.linalg.svd(x, max_rank=2)
    with pytest.raises(GaugeError):
        tf.grad([tf.sum(tf.real(u))], [x])


@pytest.mark.parametrize("kw,err,match", [
    ({"max_rank": 0}, ShapeError, "max_rank must be >= 1"),
    ({"max_rank": -2}, ShapeError, "max_rank must be >= 1"),
    ({"max_rank": 2.0}, ShapeError, "positive int"),
    ({"max_rank": True}, ShapeError, "positive int"),
    ({"max_rank": "3"}, ShapeError, "positive int"),
    ({"rtol": -1e-3}, ValueError, "rtol must be finite and >= 0"),
    ({"rtol": float("nan")}, ValueError, "rtol must be finite"),
    ({"atol": float("inf")}, ValueError, "atol must be finite"),
    ({"atol": "x"}, TypeError, "atol must be a real number"),
    ({"max_rank": 2, "full_matrices": True}, ShapeError, "full_matrices=True"),
    ({"rtol": 0.1, "full_matrices": True}, ShapeError, "full_matrices=True"),
])
def test_errors(kw, err, match, monkeypatch):
    x = tf.tensor(random_array((5, 4), np.float64, 12), requires_grad=True)
    calls = []
    svd_module = sys.modules["tenferro.linalg.svd"]
    for mod, name in ((svd_module, "_svd"), (st, "_svd"), (st, "_partial"), (st, "apply")):
        monkeypatch.setattr(mod, name, lambda *a, _n=name, **k: calls.append(_n))
    with pytest.raises(err, match=match):
        tf.linalg.svd(x, **kw)
    assert calls == []          # validation comes before anything is computed or recorded


def test_numpy_semantics_for_integers():
    assert tf.linalg.svd(np.int64(2) * np.eye(4), max_rank=np.int64(2)).s.shape == (2,)


def test_nearly_degenerate_cut_is_exact(monkeypatch):
    """A small but resolvable gap at the cut (s_k/s_{k+1} = 1 + 1e-6): the partial path is
    taken, the single-precision refinement stalls (κ·eps(float32) ~ 0.1) and the solve
    finishes in double precision; the gradient is still the full SVD's (whose own
    accuracy here is ~eps·κ)."""
    monkeypatch.setattr(st, "_PARTIAL_MIN_DIM", 1)
    monkeypatch.setattr(st, "_PARTIAL_MAX_FRACTION", 1.0)
    monkeypatch.setattr(st, "_EXTRA", 2)
    dtypes = []
    orig = st._shifted_pcg

    def spy(apply_M, s2, b, *args, **kw):
        dtypes.append(b.dtype)
        return orig(apply_M, s2, b, *args, **kw)
    monkeypatch.setattr(st, "_shifted_pcg", spy)
    rng = np.random.default_rng(13)
    a = spectrum_matrix([4.0, 2.0, 1.0, 1.0 - 1e-6, 0.5, 0.2], 8, 6, rng=14)
    k = 3
    consts = _consts((8, 6), k, np.float64, rng)
    x = tf.tensor(a, requires_grad=True)
    u, s, vt = tf.linalg.svd(x, max_rank=k)
    assert u._node.op.name == "svd_truncated"
    g, = tf.grad([_loss_parts(u, s, vt, consts)], [x])
    assert np.dtype(np.float64) in dtypes           # the double-precision finish ran
    x = tf.tensor(a, requires_grad=True)
    ref, = tf.grad([sliced_loss(x, k, consts)], [x])
    assert rel_err(g.numpy(), ref.numpy()) < 1e-8


def test_solver_last_resort(monkeypatch):
    """If conjugate gradients do not converge (many singular values clustered just below
    the cut), the solve falls back to the eigendecomposition of A⊥A⊥ᴴ: simulated by a CG
    that returns nothing; the gradient is still exact."""
    monkeypatch.setattr(st, "_PARTIAL_MIN_DIM", 1)
    monkeypatch.setattr(st, "_PARTIAL_MAX_FRACTION", 1.0)
    monkeypatch.setattr(st, "_EXTRA", 2)
    monkeypatch.setattr(st, "_shifted_pcg", lambda apply_M, s2, b, *a, **kw: 0 * b)
    used = []
    orig = st._eigh_shifted_solve
    monkeypatch.setattr(st, "_eigh_shifted_solve", lambda *a: used.append(1) or orig(*a))
    rng = np.random.default_rng(15)
    for shape, dtype in (((9, 7), np.float64), ((2, 6, 8), np.complex128)):
        k = 2
        a = random_array(shape, dtype, rng)
        consts = _consts(shape, k, dtype, rng)
        x = tf.tensor(a, requires_grad=True)
        g, = tf.grad([truncated_loss(x, k, consts)], [x])
        x = tf.tensor(a, requires_grad=True)
        ref, = tf.grad([sliced_loss(x, k, consts)], [x])
        assert rel_err(g.numpy(), ref.numpy()) < 1e-10
    assert len(used) == 2


@pytest.mark.parametrize("shape,k", [((0, 5), 0), ((3, 0), 0), ((0, 4, 3), 2)])
def test_empty(shape, k):
    u, s, vt = tf.linalg.svd(np.zeros(shape), max_rank=2)
    assert (u.shape, s.shape, vt.shape) == (shape[:-1] + (k,), shape[:-2] + (k,),
                                            shape[:-2] + (k, shape[-1]))
