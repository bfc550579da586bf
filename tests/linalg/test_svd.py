"""tf.linalg.svd / svdvals: values, derivatives (rev, fwd, second order), degenerate and
rank-deficient spectra, the gauge check, full_matrices, 0-size stacks and errors.

Singular vectors are unique only up to a phase per pair (u_i, v_i) (a sign for real
input), so a finite-difference check of u or vt themselves compares against whatever
phase LAPACK picks at the shifted input. Every derivative check therefore composes the
decomposition with gauge-invariant maps: |u|, |vt| (the phase cancels in the modulus),
u @ vt and u diag(s) vt (the phases of u_i and v_i cancel), and s itself.
"""
import importlib

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import (check_grads, check_kernel_backward, check_low_precision,
                              random_array)

DTYPES = [np.float64, np.complex128]
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 4)]


def gauge_free(a, **kw):
    u, s, vt = tf.linalg.svd(a, **kw)
    return s, tf.abs(u), tf.abs(vt), u @ vt, (u * s[..., None, :]) @ vt


def with_singular_values(s, m, n, dtype=np.float64, rng=0):
    """A random m x n matrix with the given singular values (exactly repeated allowed)."""
    rng = np.random.default_rng(rng)
    q1 = np.linalg.qr(random_array((m, m), dtype, rng))[0]
    q2 = np.linalg.qr(random_array((n, n), dtype, rng))[0]
    k = min(m, n)
    return (q1[:, :k] * np.asarray(s, float)) @ q2[:k, :]


def grad_of(loss, a, **kw):
    x = tf.tensor(a, requires_grad=True)
    g, = tf.grad([loss(x, **kw)], [x])
    return g.numpy()


# ---- values -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES + [(1, 1), (2, 1, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_values(dtype, shape, full):
    a = random_array(shape, dtype, 1)
    u, s, vt = tf.linalg.svd(a, full_matrices=full)
    nu, ns, nvt = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vt.shape) == (nu.shape, ns.shape, nvt.shape)
    assert u.dtype == dtype and vt.dtype == dtype and s.dtype == ns.dtype
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(s.numpy(), ns, rtol=tol, atol=tol)
    k = s.shape[-1]
    rec = (u.numpy()[..., :, :k] * s.numpy()[..., None, :]) @ vt.numpy()[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=10 * tol, atol=10 * tol)
    m, n = shape[-2:]
    for q, size in ((u.numpy(), u.shape[-1]), (vt.numpy().swapaxes(-1, -2), vt.shape[-2])):
        np.testing.assert_allclose(q.conj().swapaxes(-1, -2) @ q,
                                   np.broadcast_to(np.eye(size), q.shape[:-2] + (size, size)),
                                   atol=10 * tol)
    np.testing.assert_allclose(tf.linalg.svdvals(a).numpy(), ns, rtol=tol, atol=tol)


def test_api_spellings():
    a = random_array((4, 3), np.float64, 2)
    r = tf.linalg.svd(a)
    assert isinstance(r, tf.linalg.SVDResult) and r._fields == ("u", "s", "vt")
    for other in (tf.svd_ad(a).run(), tf.linalg.svd_ad(a).run(), tf.tensor(a).svd()):
        for x, y in zip(r, other):
            np.testing.assert_array_equal(x.numpy(), y.numpy())
    rf = tf.svd_ad(a).with_options(full_matrices=True).run()
    assert rf.u.shape == (4, 4)
    # values-only LAPACK may differ from the full driver in the last bit
    np.testing.assert_allclose(tf.svdvals_ad(a).run().numpy(), r.s.numpy(), rtol=1e-14)
    np.testing.assert_allclose(tf.tensor(a).svdvals().numpy(), r.s.numpy(), rtol=1e-14)
    # ints become float64, like numpy
    np.testing.assert_allclose(tf.linalg.svdvals(np.array([[3, 0], [0, 4]])).numpy(), [4, 3])


# ---- derivatives --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_grads(dtype, shape):
    a = random_array(shape, dtype, 3)
    check_grads(gauge_free, [a], modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_svdvals_grads(dtype, shape):
    a = random_array(shape, dtype, 4)
    check_grads(tf.linalg.svdvals, [a], modes=("rev", "fwd"), order=2)
    # the exact path: the gradient of Σ c_i s_i is U diag(c) Vᴴ
    c = np.arange(1.0, min(shape[-2:]) + 1)
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    x = tf.tensor(a, requires_grad=True)
    g, = tf.grad([tf.linalg.svdvals(x)], [x], [np.broadcast_to(c, s.shape).copy()])
    np.testing.assert_allclose(g.numpy(), (u * c) @ vt, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_vjp_matches_rules_formula(shape):
    """docs/rules.md#svd: Ā = U[(F∘(UᴴŪ − ŪᴴU))S + S(F∘(VᴴV̄ − V̄ᴴV)) + diag(s̄)]Vᴴ with
    F_ij = 1/(s_j² − s_i²), plus (Ū − UUᴴŪ)S⁻¹Vᴴ (m > k) and US⁻¹(V̄ − VVᴴV̄)ᴴ (n > k);
    real input (no gauge condition), arbitrary cotangents."""
    rng = np.random.default_rng(5)
    a = random_array(shape, np.float64, rng)
    m, n = shape
    u, s, vt = (t.numpy() for t in tf.linalg.svd(a))     # the factors tenferro uses
    v = vt.T
    gu, gs, gvt = (rng.standard_normal(x.shape) for x in (u, s, vt))
    gv = gvt.T
    d = s[None, :] ** 2 - s[:, None] ** 2
    F = np.where(d == 0, 0, 1 / np.where(d == 0, 1, d))
    S = np.diag(s)
    ref = u @ ((F * (u.T @ gu - gu.T @ u)) @ S + S @ (F * (v.T @ gv - gv.T @ v))
               + np.diag(gs)) @ vt
    if m > n:
        ref += (gu - u @ (u.T @ gu)) / s @ vt
    if n > m:
        ref += (u / s) @ (gv - v @ (v.T @ gv)).T
    x = tf.tensor(a, requires_grad=True)
    got, = tf.grad(list(tf.linalg.svd(x)), [x], [gu, gs, gvt])
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-10)
    # and that formula is the derivative: <Ā, Ȧ> = d/dt <ȳ, svd(a + tȦ)> on gauge-free
    # outputs is covered by test_grads; here the same cotangent through finite differences
    # of the sign-fixed factors
    da = rng.standard_normal(shape)
    h = 1e-6

    def fixed(b):
        uu, ss, vvt = np.linalg.svd(b, full_matrices=False)
        sg = np.sign(np.sum(uu * u, axis=0))       # follow the sign of the base point
        return uu * sg, ss, vvt * sg[:, None]

    plus, minus = fixed(a + h * da), fixed(a - h * da)
    fd = sum(np.sum(c * (p - q)) for c, p, q in zip((gu, gs, gvt), plus, minus)) / (2 * h)
    np.testing.assert_allclose(np.sum(ref * da), fd, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("eps", [None, 0.3])
def test_kernel_and_tensor_rule_agree(dtype, shape, eps, monkeypatch):
    """The plain backward (fused Cython kernel) and the create_graph backward (the rule on
    Tensors) give the same first-order gradient (also with a large ε, where both must
    broaden F and S⁻¹ the same way)."""
    rng = np.random.default_rng(6)
    a = random_array(shape, dtype, rng)
    outs = np.linalg.svd(a, full_matrices=False)
    # gauge-invariant cotangents: those of Re<G, U diag(s) Vᴴ> and of |U|
    G = random_array(shape, dtype, rng)

    def loss(x):
        u, s, vt = tf.linalg.svd(x, derivative_eps=eps)
        loss = tf.sum(tf.real(np.conj(G) * ((u * s[..., None, :]) @ vt)))
        return loss + tf.sum(tf.abs(u) * np.abs(outs[0])) + tf.sum(s * s)

    # the plain backward goes through the kernel, the create_graph one does not
    mod = importlib.import_module("tenferro.linalg.svd")   # tf.linalg.svd is the function
    check_kernel_backward(monkeypatch, mod._kernel, "svd_backward", loss, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_low_precision(dtype):
    a = random_array((4, 3), dtype, 7)
    check_low_precision(gauge_free, [a])
    check_low_precision(tf.linalg.svdvals, [a])


# ---- degenerate, near-degenerate and rank-deficient spectra --------------------------------

def _vector_loss(x, **kw):
    # gauge-invariant but uses u and vt (so it goes through F): Σ |U diag(s) Vᴴ|² + Σ (UVᴴ)
    u, s, vt = tf.linalg.svd(x, **kw)
    return tf.sum(tf.abs((u * s[..., None, :]) @ vt) ** 2) + tf.sum(tf.real(u @ vt))


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeated_singular_values_exact_path(dtype):
    # exactly repeated singular values: a loss of s alone is exact and finite
    a = with_singular_values([2.0, 1.0, 1.0], 4, 3).astype(dtype)
    g = grad_of(lambda x: tf.sum(tf.linalg.svdvals(x) ** 2), a)
    np.testing.assert_allclose(g, 2 * a, atol=1e-12)        # d‖A‖²_F = 2A
    g = grad_of(lambda x: tf.sum(tf.linalg.svd(x).s ** 2), a)
    np.testing.assert_allclose(g, 2 * a, atol=1e-12)
    # the nuclear norm Σ s_i has the gradient U Vᴴ (the polar factor, unique at full rank)
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    g = grad_of(lambda x: tf.sum(tf.linalg.svdvals(x)), a)
    np.testing.assert_allclose(g, u @ vt, atol=1e-12)
    # identity: every singular value equal, every gap exactly 0
    eye = np.eye(3, dtype=dtype)
    np.testing.assert_allclose(grad_of(lambda x: tf.sum(tf.linalg.svdvals(x)), eye),
                               np.eye(3), atol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["repeated", "identity", "near", "zero-tall", "zero-wide",
                                  "all-zero", "rank1-square"])
def test_vector_gradient_finite(dtype, case):
    """Vector gradients at (near-)degenerate or zero singular values are finite (broadened
    F and S⁻¹), also with derivative_eps=0 where the 0/0 entries are defined as 0."""
    a = {"repeated": lambda: with_singular_values([3.0, 1.0, 1.0], 3, 3),
         "identity": lambda: np.eye(3),
         "near": lambda: with_singular_values([2.0, 1.0 + 1e-12, 1.0], 4, 3),
         "zero-tall": lambda: with_singular_values([2.0, 1.0, 0.0], 5, 3),
         "zero-wide": lambda: with_singular_values([2.0, 0.0], 2, 4),
         "all-zero": lambda: np.zeros((3, 2)),
         "rank1-square": lambda: with_singular_values([1.0, 0.0, 0.0], 3, 3)}[case]()
    a = a.astype(dtype)
    for eps in (None, 0.0):
        g = grad_of(_vector_loss, a, derivative_eps=eps)
        assert np.isfinite(g).all(), (case, eps, g)
    # forward mode too
    _, t = tf.jvp(_vector_loss, [tf.tensor(a)], [tf.tensor(np.ones_like(a))])
    assert np.isfinite(t.numpy()).all()


def test_degenerate_gauge_invariant_loss_is_accurate_when_resolvable():
    """The default ε broadens only gaps at the rounding level: a gap of 1e-6 relative is
    still differentiated exactly (compare with derivative_eps=0)."""
    a = with_singular_values([2.0, 1.0 + 1e-6, 1.0], 4, 3)
    g_def = grad_of(_vector_loss, a)
    g_exact = grad_of(_vector_loss, a, derivative_eps=0.0)
    np.testing.assert_allclose(g_def, g_exact, rtol=1e-7, atol=1e-7)
    # the loss is a smooth function of A (‖A‖²_F + Re tr(polar factor)): check it by FD
    da = random_array(a.shape, np.float64, 8)
    h = 1e-6
    f = lambda b: float(_vector_loss(tf.tensor(b)).numpy())
    fd = (f(a + h * da) - f(a - h * da)) / (2 * h)
    np.testing.assert_allclose(np.sum(g_def * da), fd, rtol=1e-5)


def test_derivative_eps_is_used():
    a = with_singular_values([2.0, 1.5, 1.0], 3, 3)
    g0 = grad_of(lambda x, **kw: tf.sum(tf.abs(tf.linalg.svd(x, **kw).u)), a)
    g1 = grad_of(lambda x, **kw: tf.sum(tf.abs(tf.linalg.svd(x, **kw).u)), a,
                 derivative_eps=10.0)
    assert np.max(np.abs(g0 - g1)) > 1e-3
    with pytest.raises(ValueError, match="derivative_eps"):
        tf.linalg.svd(a, derivative_eps=-1.0)
    with pytest.raises(TypeError, match="derivative_eps"):
        tf.linalg.svd(a, derivative_eps="big")


# ---- gauge ----------------------------------------------------------------------------------

def _phase_loss(x, **kw):
    # PyTorch's test_invariance_error_spectral_decompositions: |Σ U + Σ Vh|
    u, _, vt = tf.linalg.svd(x, **kw)
    return tf.abs(tf.sum(u) + tf.sum(vt))


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3, 4)])
def test_gauge_error(shape):
    a = random_array(shape, np.complex128, 9)
    with pytest.raises(tf.GaugeError, match="check_gauge=False"):
        grad_of(_phase_loss, a)
    # only through u, or only through vt
    for loss in (lambda x: tf.abs(tf.sum(tf.linalg.svd(x).u)),
                 lambda x: tf.abs(tf.sum(tf.linalg.svd(x).vt))):
        with pytest.raises(tf.GaugeError, match="phase"):
            grad_of(loss, a)
    assert np.isfinite(grad_of(_phase_loss, a, check_gauge=False)).all()
    # create_graph path checks too
    x = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.GaugeError):
        tf.grad([_phase_loss(x)], [x], create_graph=True)


def test_gauge_real_never_raises():
    a = random_array((3, 4), np.float64, 10)
    assert np.isfinite(grad_of(_phase_loss, a)).all()


def test_gauge_invariant_complex_losses_pass():
    a = random_array((2, 4, 3), np.complex128, 11)
    for loss in (lambda x: tf.sum(tf.abs(tf.linalg.svd(x).u)),
                 lambda x: tf.sum(tf.abs(tf.linalg.svd(x).vt)),
                 lambda x: tf.abs(tf.sum(np.matmul(*tf.linalg.svd(x)[::2]))),
                 _vector_loss):
        assert np.isfinite(grad_of(loss, a)).all()
    # a complex64 gauge-invariant loss is not flagged by rounding
    assert np.isfinite(grad_of(_vector_loss, a.astype(np.complex64))).all()


# ---- full_matrices --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3)])
def test_full_matrices_grads(dtype, shape):
    a = random_array(shape, dtype, 12)
    k = min(shape[-2:])

    def first_k(x):
        u, s, vt = tf.linalg.svd(x, full_matrices=True)
        u, vt = u[..., :, :k], vt[..., :k, :]
        return s, tf.abs(u), u @ vt

    check_grads(first_k, [a], modes=("rev", "fwd"), order=2)

    # forward mode gives the extra columns a tangent that keeps u / vt unitary: the
    # projectors onto the null spaces (unique) are differentiated correctly
    def projectors(x):
        u, _, vt = tf.linalg.svd(x, full_matrices=True)
        up, vp = u[..., :, k:], vt[..., k:, :]
        return up @ up.mH, vp.mH @ vp

    check_grads(projectors, [a], modes=("fwd",), order=1)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_full_matrices_extra_columns_raise(shape):
    a = random_array(shape, np.float64, 13)
    k = min(shape)
    loss = {(5, 3): lambda x: tf.sum(tf.linalg.svd(x, full_matrices=True).u[:, k:] ** 2),
            (3, 5): lambda x: tf.sum(tf.linalg.svd(x, full_matrices=True).vt[k:] ** 2)}[shape]
    with pytest.raises(tf.UnsupportedADError, match="full_matrices=False"):
        grad_of(loss, a)
    # a zero cotangent on them is fine (and so is the whole u of a square matrix)
    g = grad_of(lambda x: tf.sum(tf.linalg.svd(x, full_matrices=True).u * 0.0)
                + tf.sum(tf.linalg.svd(x, full_matrices=True).s), a)
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(g, u @ vt, atol=1e-12)


# ---- 0-size and batches ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (2, 0, 3), (0, 3, 3), (0, 2, 4)])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_size(shape, full, dtype):
    a = np.zeros(shape, dtype)
    u, s, vt = tf.linalg.svd(a, full_matrices=full)
    nu, ns, nvt = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vt.shape) == (nu.shape, ns.shape, nvt.shape)
    np.testing.assert_array_equal(u.numpy(), nu)
    np.testing.assert_array_equal(vt.numpy(), nvt)
    assert s.dtype == ns.dtype and tf.linalg.svdvals(a).shape == ns.shape
    x = tf.tensor(a, requires_grad=True)
    r = tf.linalg.svd(x, full_matrices=full)
    k = s.shape[-1]
    g, = tf.grad([tf.sum(r.s) + tf.sum(tf.abs(r.u[..., :, :k]))], [x])
    assert g.shape == shape
    _, t = tf.jvp(lambda y: tf.linalg.svd(y, full_matrices=full), [tf.tensor(a)],
                  [tf.tensor(a)])
    assert [x.shape for x in t] == [nu.shape, ns.shape, nvt.shape]


def test_batched_matches_loop():
    a = random_array((3, 2, 4, 3), np.complex128, 14)

    def loss(x):
        u, s, vt = tf.linalg.svd(x)
        return tf.sum(tf.abs(u) * 1.5) + tf.sum(s ** 3) + tf.sum(tf.real(u @ vt))

    g = grad_of(loss, a)
    for i in np.ndindex(a.shape[:2]):
        np.testing.assert_allclose(g[i], grad_of(loss, a[i]), rtol=1e-12, atol=1e-12)


# ---- errors ---------------------------------------------------------------------------------

def test_errors():
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.svd(np.ones(3))
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.svdvals(np.ones(3))
    with pytest.raises(tf.DTypeError):
        tf.linalg.svd(np.array([["a", "b"], ["c", "d"]], dtype=object))
    bad = np.ones((2, 3, 3))
    bad[1, 0, 2] = np.nan
    x = tf.tensor(bad, requires_grad=True)
    for fn in (tf.linalg.svd, tf.linalg.svdvals):
        with pytest.raises(tf.LinAlgError, match=r"non-finite.*\(1, 0, 2\).*check_finite"):
            fn(x)
    assert x.grad is None and x.is_leaf
    # check_finite=False skips tenferro's check: the LAPACK layer names the matrix instead
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1,\)") as info:
        tf.linalg.svdvals(bad, check_finite=False)
    assert "check_finite" not in str(info.value)


# ---- create_graph: the pullback recorded as one node (svd.py lazy_rule) --------------------

def _nodes_recorded(fn):
    """How many graph nodes ``fn()`` creates (Node.seq counts them)."""
    from tenferro._engine import Node
    before = Node(None, None, (), None).seq
    fn()
    return Node(None, None, (), None).seq - before - 1


def _vectors_loss(a):
    u, s, vt = tf.linalg.svd(a)
    w = np.linspace(0.5, 1.5, u.shape[-1])
    return tf.sum(tf.abs(u @ vt) ** 2 * 0.3) + tf.sum(s * w) + tf.sum(tf.abs(u * w) ** 2)


def test_create_graph_records_one_node_per_rule():
    """The create_graph pullback of svd is one lazy_rule node (its formula's ~46 ops are
    recorded only by a second derivative), and that node's value is the plain kernel's."""
    a = tf.tensor(random_array((6, 4), np.float64, 3), requires_grad=True)
    loss = _vectors_loss(a)
    plain, = tf.grad([loss], [a], retain_graph=True)
    out = []
    n_lazy = _nodes_recorded(lambda: out.extend(tf.grad([loss], [a], create_graph=True)))
    np.testing.assert_allclose(out[0].numpy(), plain.numpy(), rtol=1e-13, atol=1e-13)
    assert out[0].grad_fn is not None
    # the ops of the loss's own pullbacks plus one node for svd's rule
    assert n_lazy < 20, n_lazy


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3)])
def test_third_order(dtype, shape):
    """Third derivatives (reverse over reverse over reverse: the lazy_rule node's pullback,
    itself recorded as a lazy_rule node; and the forward-over-reverse mixes) against
    central differences of the second derivative."""
    a = random_array(shape, dtype, 11)
    check_grads(lambda x: tf.sum(tf.abs(gauge_free(x)[4]) ** 2)
                + tf.sum(tf.abs(gauge_free(x)[1]) ** 3), [a], order=3)


def test_fourth_order_reverse():
    a = random_array((3, 3), np.float64, 12)
    check_grads(lambda x: _vectors_loss(x), [a], modes=("rev",), order=4)


def test_tangents_on_cotangents_of_a_recorded_rule():
    """Forward mode over a create_graph pass through a lazy_rule node recorded before the
    dual level: the seed carries a tangent t, the pullback is linear in it, so the tangent
    of the result is the same pass seeded with t."""
    a0 = random_array((5, 3), np.float64, 13)
    a = tf.tensor(a0, requires_grad=True)
    g1, = tf.grad([_vectors_loss(a)], [a], create_graph=True)
    v, t = random_array((5, 3), np.float64, 14), random_array((5, 3), np.float64, 15)
    with tf.forward_ad.dual_level():
        seed = tf.forward_ad.make_dual(tf.tensor(v), tf.tensor(t))
        g2, = tf.grad([g1], [a], [seed], create_graph=True, retain_graph=True)
        tangent = tf.forward_ad.unpack_dual(g2).tangent
    expected, = tf.grad([g1], [a], [tf.tensor(t)], retain_graph=True)
    np.testing.assert_allclose(tangent.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    # and the value of g2 is the plain pass seeded with v
    g2v, = tf.grad([g1], [a], [tf.tensor(v)], retain_graph=True)
    np.testing.assert_allclose(tf.forward_ad.unpack_dual(g2).primal.numpy(), g2v.numpy(),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(20, 20), (24, 18), (18, 22)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_second_order_with_leading_cotangents_only(shape, dtype, monkeypatch):
    # a loss of u[:, :r], s[:r], vt[:r] (truncation after a full svd): the create_graph
    # formula works on the first r rows/columns of its core only (O((m + n) k r)); its
    # derivatives equal the full formula's and finite differences
    rng = np.random.default_rng(sum(shape))
    a = random_array(shape, dtype, rng)
    c = random_array((shape[0], shape[1]), dtype, rng)

    def loss(x):
        u, s, vt = tf.linalg.svd(x)
        r = 3
        t = (u[..., :, :r] * s[..., :r].astype(dtype)) @ vt[..., :r, :]
        return tf.sum(tf.real(tf.tensor(c) * tf.conj(t)) ** 2) + tf.sum(s[:2] ** 3)

    def hvp(x0, v):
        x = tf.tensor(x0, requires_grad=True)
        (g,) = tf.grad([loss(x)], [x], create_graph=True)
        (h,) = tf.grad([g], [x], [tf.tensor(v)])
        return h.numpy()

    v = random_array(shape, dtype, rng)
    reduced = hvp(a, v)
    svd_mod = importlib.import_module("tenferro.linalg.svd")
    monkeypatch.setattr(svd_mod, "_LEADING_MIN_K", 10 ** 9)      # the full formula
    full = hvp(a, v)
    np.testing.assert_allclose(reduced, full, rtol=1e-10, atol=1e-10 * np.abs(full).max())
    monkeypatch.undo()
    check_grads(loss, [a], order=2)


def test_leading_count():
    from tenferro.linalg.svd import _leading
    gu = np.zeros((2, 5, 4))
    gu[1, 3, 1] = 1.0
    assert _leading(gu, None, None, 4) == 2
    sbar = np.zeros((2, 4))
    sbar[0, 2] = 1.0
    assert _leading(gu, sbar, None, 4) == 3
    assert _leading(np.zeros((5, 4)), None, np.zeros((4, 6)), 4) == 0
    assert _leading(np.zeros((3, 0)), np.zeros((0,)), None, 0) == 0
    assert _leading(np.zeros((2, 0, 3, 4)), None, None, 4) == 0     # an empty stack
