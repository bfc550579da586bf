"""svd's derivative at exactly repeated singular values (docs/rules.md#svd; _kernels/spectral.pyx).

At a repeated singular value the derivative of the vectors is not defined, but a loss that
is a smooth function of a family A(θ) whose singular values stay repeated (a symmetry, as
in tensor networks of symmetric tensors) and that does not depend on the free rotation of
the degenerate vectors has an exact derivative. The rules broaden only the pole
1/(s_j − s_i) (which carries no weight there) and keep 1/(s_j + s_i) exact, so these
derivatives are exact; broadening all of 1/(s_j² − s_i²) lost the second pole (the TRG of
examples/trg_ising.py was off by 0.6% in the internal energy).
"""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, random_array

RNG = np.random.default_rng(7)


def _family(shape, spectrum, dtype):
    """θ -> A(θ) = Q1(θ) diag(spectrum(θ)) Q2(θ)ᴴ with unitary Q1 = expm(θ K1) Q1₀ etc.,
    so the singular values keep their multiplicities for every θ."""
    m, n = shape
    k = min(m, n)
    cplx = np.dtype(dtype).kind == "c"

    def rand(*s):
        x = RNG.standard_normal(s)
        return x + 1j * RNG.standard_normal(s) if cplx else x

    def skew(p):
        x = rand(p, p)
        return x - x.conj().T

    q1 = np.linalg.qr(rand(m, m))[0][:, :k]
    q2 = np.linalg.qr(rand(n, n))[0][:, :k]
    k1, k2 = skew(m), skew(n)
    base = np.asarray(spectrum, dtype=float)

    def a_of(theta):
        r1 = tf.linalg.matrix_exp(theta * tf.tensor(k1.astype(dtype)))
        r2 = tf.linalg.matrix_exp(theta * tf.tensor(k2.astype(dtype)))
        sv = tf.tensor(base) * (1 + 0.3 * tf.sin(theta))   # multiplicities kept
        left = r1 @ tf.tensor(q1.astype(dtype))
        right = r2 @ tf.tensor(q2.astype(dtype))
        return (left * sv.astype(dtype)) @ right.mH
    return a_of


def _loss_of_vectors(a, c):
    # depends on u*s and vt separately (not through a alone) but is invariant under
    # u -> u Q, vt -> Qᴴ vt for Q unitary in a degenerate block
    u, s, vt = tf.linalg.svd(a)
    recon = (u * s.astype(a.dtype)) @ vt
    return tf.sum(tf.real(tf.tensor(c) * tf.sin(recon)))


@pytest.mark.parametrize("shape", [(4, 4), (6, 4), (4, 6)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gauge_invariant_loss_through_repeated_singular_values(shape, dtype):
    spectrum = [3.0, 1.0, 1.0, 0.5]
    a_of = _family(shape, spectrum, dtype)
    c = RNG.standard_normal(shape)

    def through_svd(theta):
        return _loss_of_vectors(a_of(theta), c)

    def direct(theta):   # the same function without the svd
        return tf.sum(tf.real(tf.tensor(c) * tf.sin(a_of(theta))))

    theta0 = 0.3
    th = tf.tensor(theta0, requires_grad=True)
    (g_svd,) = tf.grad([through_svd(th)], [th])
    th = tf.tensor(theta0, requires_grad=True)
    (g_direct,) = tf.grad([direct(th)], [th])
    np.testing.assert_allclose(float(g_svd), float(g_direct), rtol=1e-10, atol=1e-12)
    # forward mode, and the derivative check against finite differences (first order:
    # the second derivative at an exact degeneracy goes through the broadened pole)
    _, t_svd = tf.jvp(through_svd, [tf.tensor(theta0)], [tf.tensor(1.0)])
    np.testing.assert_allclose(float(t_svd), float(g_direct), rtol=1e-10, atol=1e-12)
    check_grads(through_svd, [np.array(theta0)], order=1)


def test_repeated_values_are_exactly_repeated_in_the_family():
    # the test above is about exact degeneracy: the family really keeps it
    s = tf.linalg.svdvals(_family((4, 4), [3.0, 1.0, 1.0, 0.5], np.float64)(tf.tensor(0.7)))
    assert abs(float(s[1]) - float(s[2])) < 1e-13 * float(s[0])


# ---- second order at exactly repeated singular values ------------------------------------
#
# The within-block terms of the rules take their exact limit 0 (a constant, with derivative
# 0) on the pairs of a degenerate block (values within max(m, n)·eps·s_max); before, the
# second pass differentiated the broadening d/(d² + ε²), whose derivative 1/ε² at d = 0
# multiplied rounding by ~1e30 (issue 25). Along a family that keeps the degeneracy, the
# second derivative of a loss invariant under rotations of the degenerate vectors is then
# exact: here against the same function written without the svd (no rule involved) and
# against central differences of the first derivative.

def _second(fn, theta0):
    """d²fn/dθ² at θ0 by reverse-over-reverse, forward-over-reverse (tf.hvp) and
    reverse-over-forward, and the first derivative."""
    th = tf.tensor(theta0, requires_grad=True)
    (g,) = tf.grad([fn(th)], [th], create_graph=True)
    (rr,) = tf.grad([g], [th])
    _, _, fr = tf.hvp(fn, [np.array(theta0)], [np.array(1.0)])
    th = tf.tensor(theta0, requires_grad=True)
    _, t = tf.jvp(fn, [th], [tf.tensor(1.0)])
    (rf,) = tf.grad([t], [th])
    return float(g), [float(rr), float(fr[0]), float(rf)]


def _first(fn, theta):
    th = tf.tensor(theta, requires_grad=True)
    (g,) = tf.grad([fn(th)], [th])
    return float(g)


def _projector_loss(a, k, c):
    # ‖P_k C‖² with P_k = U_k U_kᴴ the projector on the k leading left singular vectors, k
    # at a block boundary: invariant under rotations in every block, and its derivatives
    # go through the singular pole between blocks (no values-only shortcut)
    u, s, vt = tf.linalg.svd(a)
    uk = u[..., :, :k]
    p = uk @ (uk.mH @ tf.tensor(c))
    return tf.sum(tf.real(p * tf.conj(p)))


@pytest.mark.parametrize("shape", [(4, 4), (6, 4), (4, 6)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_second_derivative_through_repeated_singular_values(shape, dtype):
    spectrum = [3.0, 1.0, 1.0, 0.5]
    a_of = _family(shape, spectrum, dtype)
    c = RNG.standard_normal(shape)
    cm = RNG.standard_normal((shape[0], 3)).astype(dtype)

    def through_svd(theta):
        return _loss_of_vectors(a_of(theta), c)

    def direct(theta):
        return tf.sum(tf.real(tf.tensor(c) * tf.sin(a_of(theta))))

    def projector(theta):
        return _projector_loss(a_of(theta), 3, cm)

    theta0, h = 0.3, 1e-5
    _, ref = _second(direct, theta0)
    g, got = _second(through_svd, theta0)
    assert g == pytest.approx(_first(direct, theta0), rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-10)
    for fn in (through_svd, projector):
        _, got = _second(fn, theta0)
        fd = (_first(fn, theta0 + h) - _first(fn, theta0 - h)) / (2 * h)
        np.testing.assert_allclose(got, [fd] * 3, rtol=1e-6, atol=1e-7)
        check_grads(fn, [np.array(theta0)], order=2)


def test_second_derivative_was_noise_with_the_broadening_differentiated(monkeypatch):
    # without the exact limit the test above fails: drel = 0 makes blocks of exactly equal
    # values only, as before; where the computed repeated values differ by rounding, the
    # second pass differentiates the broadening again and returns noise
    import importlib
    svd_mod = importlib.import_module("tenferro.linalg.svd")
    a_of = _family((4, 4), [3.0, 1.0, 1.0, 0.5], np.float64)
    c = np.random.default_rng(11).standard_normal((4, 4))   # its own: independent of order

    def through_svd(theta):
        return _loss_of_vectors(a_of(theta), c)

    def direct(theta):
        return tf.sum(tf.real(tf.tensor(c) * tf.sin(a_of(theta))))

    # the points where LAPACK's two equal values differ in the last bits (most do); how
    # much noise each gives depends on the vectors the driver returns (the compiled
    # kernels and their NumPy twins differ), so the test asks for it at one of them
    thetas = [float(t) for t in np.linspace(0.1, 1.0, 10)
              if len(set(np.linalg.svd(a_of(tf.tensor(t)).numpy(), compute_uv=False)[1:3]))
              == 2]
    assert thetas
    worst = 0.0
    for theta0 in thetas:
        _, ref = _second(direct, theta0)
        _, good = _second(through_svd, theta0)
        np.testing.assert_allclose(good, ref, rtol=1e-8, atol=1e-10)
        with monkeypatch.context() as patch:
            patch.setattr(svd_mod, "_svd_drel", lambda m, n, dtype: 0.0)
            _, bad = _second(through_svd, theta0)
        worst = max(worst, abs(bad[0] - ref[0]) / abs(ref[0]))
    assert worst > 1e-4


def test_kron_family_symmetric_tensor():
    # a tensor with a U(2) symmetry on one leg, T[(a, i), (b, j)] = B(θ)_ab δ_ij: every
    # singular value exactly twice for every θ, the vectors free within each pair
    rng = np.random.default_rng(3)
    b0, b1 = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    c = rng.standard_normal((6, 6))
    eye2 = tf.tensor(np.eye(2))

    def a_of(theta):
        b = tf.tensor(b0) + tf.sin(theta) * tf.tensor(b1)
        return tf.einsum("ab,ij->aibj", b, eye2).reshape(6, 6)

    def through_svd(theta):
        # the TRG's split: u·s and vt contracted again, then a nonlinearity
        u, s, vt = tf.linalg.svd(a_of(theta))
        return tf.sum(tf.tensor(c) * tf.tanh((u * s) @ vt))

    def direct(theta):
        return tf.sum(tf.tensor(c) * tf.tanh(a_of(theta)))

    s = tf.linalg.svdvals(a_of(tf.tensor(0.4))).numpy()
    assert np.all(np.abs(s[0::2] - s[1::2]) < 1e-14 * s[0])
    _, ref = _second(direct, 0.4)
    _, got = _second(through_svd, 0.4)
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-10)


# ---- values-only losses: the Hessian in every direction ---------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(5, 5), (6, 4)])
def test_hvp_of_singular_values_at_repeated_values_in_any_direction(dtype, shape):
    # f(A) = Σ g(s_i) is smooth where s > 0 (Lewis & Sendov); its Hessian has the divided
    # differences (g'(s_i) − g'(s_j))/(s_i − s_j), whose limit at s_i = s_j is g''(s). tf.hvp
    # knows the direction v in the forward pass and takes the singular vectors of each
    # repeated value in the basis in which it splits along v (degenerate perturbation
    # theory): the within-block terms are then exactly 0 and the result is exact, also in
    # directions that split the degeneracy
    rng = np.random.default_rng(11)
    m, n = shape
    q1 = np.linalg.qr(random_array((m, m), dtype, rng))[0]
    q2 = np.linalg.qr(random_array((n, n), dtype, rng))[0]
    k = min(m, n)
    s = np.array([2.0, 1.0, 1.0, 1.0, 0.7][:k])
    a = (q1[:, :k] * s) @ q2[:, :k].conj().T
    v = random_array(shape, dtype, rng)

    def f(x):
        sv = tf.linalg.svdvals(x)
        return tf.sum(tf.exp(sv) + sv ** 3)

    def grad_at(x):
        t = tf.tensor(x, requires_grad=True)
        (g,) = tf.grad([f(t)], [t])
        return g.numpy()

    _, g, hv = tf.hvp(f, [a], [v])
    h = 1e-5
    fd = (grad_at(a + h * v) - grad_at(a - h * v)) / (2 * h)
    np.testing.assert_allclose(g[0].numpy(), grad_at(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hv[0].numpy(), fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def test_forward_mode_takes_the_splitting_basis():
    # the primal under a forward tangent: still a valid svd, and within the repeated value
    # the Hermitian part of Uᴴ·Ȧ·V is diagonal, descending like s
    rng = np.random.default_rng(5)
    q1, q2 = (np.linalg.qr(rng.standard_normal((4, 4)))[0] for _ in range(2))
    a = (q1 * [2.0, 1.0, 1.0, 0.5]) @ q2.T
    t = rng.standard_normal((4, 4))
    with tf.forward_ad.dual_level():
        u, s, vt = tf.linalg.svd(tf.forward_ad.make_dual(tf.tensor(a), tf.tensor(t)))
        ds = tf.forward_ad.unpack_dual(s).tangent.numpy()
    u, s, vt = u.numpy(), s.numpy(), vt.numpy()
    np.testing.assert_allclose((u * s) @ vt, a, atol=1e-14)
    c = u.T @ t @ vt.T
    h = 0.5 * (c + c.T)
    assert abs(h[1, 2]) < 1e-13
    assert h[1, 1] >= h[2, 2]
    np.testing.assert_allclose(ds, np.diag(h), atol=1e-13)
    # and ṡ are the one-sided derivatives of the sorted values along t
    eps = 1e-7
    fd = (np.linalg.svd(a + eps * t, compute_uv=False) - s) / eps
    np.testing.assert_allclose(ds, fd, atol=1e-6)


# ---- nothing changes for non-degenerate spectra -----------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(5, 5), (7, 4), (3, 6), (2, 9, 9)])
def test_first_derivative_bit_identical_for_distinct_values(dtype, shape):
    # drel = 0 is the kernel's arithmetic before blocks existed (d/(d² + ε²) on every pair
    # i ≠ j); the default block tolerance changes nothing where no two values are within it
    from tenferro._kernels import load
    from tenferro.linalg.svd import _svd_drel
    kernel = load("spectral")
    rng = np.random.default_rng(sum(shape))
    a = random_array(shape, dtype, rng)
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    assert np.all(-np.diff(s, axis=-1) > 1e-3 * s[..., :1])
    gu, gvt = random_array(u.shape, dtype, rng), random_array(vt.shape, dtype, rng)
    sbar = random_array(s.shape, s.dtype, rng)
    m, n = shape[-2:]
    k = min(m, n)
    nb = int(np.prod(shape[:-2]))
    args = (u.reshape(nb, m, k), s.reshape(nb, k), vt.reshape(nb, k, n),
            gu.reshape(nb, m, k), sbar.reshape(nb, k), gvt.reshape(nb, k, n))
    eps = max(m, n) * np.finfo(s.dtype).eps
    outs = []
    for drel in (0.0, _svd_drel(m, n, s.dtype)):
        out = np.empty((nb, m, n), dtype)
        kernel.svd_backward(*args, 0.0, eps, out, drel)
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])
    # the public path is that kernel call (its u, s, vt: LAPACK's gesdd may differ from
    # numpy's in signs)
    x = tf.tensor(a, requires_grad=True)
    uu, ss, vv = tf.linalg.svd(x, check_gauge=False)     # random, phase-dependent cotangents
    args = (uu.numpy().reshape(nb, m, k), ss.numpy().reshape(nb, k),
            vv.numpy().reshape(nb, k, n)) + args[3:]
    out = np.empty((nb, m, n), dtype)
    kernel.svd_backward(*args, 0.0, eps, out, 0.0)
    (g,) = tf.grad([uu, ss, vv], [x], [gu, sbar, gvt])
    assert np.array_equal(g.numpy(), out.reshape(shape))


def test_block_mask_runs():
    from tenferro.linalg.svd import _same_block
    x = np.array([[3.0, 2.0, 2.0 - 1e-15, 2.0 - 2e-15, 1.0, 0.5, 0.5]])
    mask = _same_block(x, np.array([1.5e-15]))
    blocks = {(i, j) for i, j in zip(*np.nonzero(mask[0]))}
    assert blocks == {(1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2), (5, 6), (6, 5)}
    assert not _same_block(np.array([1.0, 0.5]), np.array(0.0)).any()
    assert _same_block(np.zeros((2, 0)), np.zeros(2)).shape == (2, 0, 0)


# ---- the truncated SVD: repeated values among the kept ones ------------------------------

@pytest.mark.parametrize("n", [8, 300])      # the full path, and the partial one (svds)
def test_truncated_svd_second_order_with_repeated_kept_values(n):
    # A(θ) = (1 + 0.3 sin θ) R(θ) A0, R a rotation of the first two rows: the singular
    # values 3, 2, 2 (kept: max_rank = 3) stay repeated; the loss ‖U₃U₃ᵀC‖² is invariant
    # under rotations of the pair and couples to the discarded subspace
    rng = np.random.default_rng(n)
    q1 = np.linalg.qr(rng.standard_normal((n, n)))[0]
    q2 = np.linalg.qr(rng.standard_normal((n, n)))[0]
    s = np.concatenate([[3.0, 2.0, 2.0], np.linspace(1.0, 0.1, n - 3)])
    a0 = tf.tensor((q1 * s) @ q2.T)
    d = np.zeros((n, n))
    d[0, 0] = d[1, 1] = 1.0
    k = np.zeros((n, n))
    k[1, 0], k[0, 1] = 1.0, -1.0
    c = tf.tensor(rng.standard_normal((n, 2)))

    def loss(theta):
        r = tf.tensor(np.eye(n)) + (tf.cos(theta) - 1) * tf.tensor(d) \
            + tf.sin(theta) * tf.tensor(k)
        a = (1 + 0.3 * tf.sin(theta)) * (r @ a0)
        u, sv, vt = tf.linalg.svd(a, max_rank=3)
        p = u @ (u.mT @ c)
        return tf.sum(p * p) + tf.sum(sv ** 3)

    theta0, h = 0.3, 1e-5
    fd = (_first(loss, theta0 + h) - _first(loss, theta0 - h)) / (2 * h)
    if n > 8:
        # the partial path is slow on Tensors (dense shifted solves): reverse-over-reverse
        th = tf.tensor(theta0, requires_grad=True)
        (g,) = tf.grad([loss(th)], [th], create_graph=True)
        (gg,) = tf.grad([g], [th])
        assert float(gg) == pytest.approx(fd, rel=1e-6)
        return
    g, got = _second(loss, theta0)
    np.testing.assert_allclose(got, [fd] * 3, rtol=1e-6, atol=1e-7)
    fd1 = (float(loss(tf.tensor(theta0 + h))) - float(loss(tf.tensor(theta0 - h)))) / (2 * h)
    assert g == pytest.approx(fd1, rel=1e-7)


def test_phase_dependent_loss_at_repeated_values_still_raises():
    # the degenerate blocks change nothing about the gauge check: a loss that depends on
    # the free phase of a complex singular pair has no derivative, repeated values or not
    a_of = _family((4, 4), [3.0, 1.0, 1.0, 0.5], np.complex128)
    x = tf.tensor(a_of(tf.tensor(0.3)).numpy(), requires_grad=True)
    u, s, vt = tf.linalg.svd(x)
    with pytest.raises(tf.GaugeError, match="phase"):
        tf.grad([tf.imag(u[0, 1]) + tf.real(u[1, 1])], [x])
    w, v = tf.linalg.eigh(x @ x.mH)
    # two entries of the column: their phase derivatives cancel only by coincidence, whichever
    # vectors the driver (compiled or twin) returns in the block
    with pytest.raises(tf.GaugeError, match="phase"):
        tf.grad([tf.imag(v[0, 1]) + tf.real(v[1, 1])], [x])


def test_forward_mode_full_matrices_stays_unitary():
    rng = np.random.default_rng(6)
    q1, q2 = np.linalg.qr(rng.standard_normal((5, 5)))[0], np.linalg.qr(
        rng.standard_normal((3, 3)))[0]
    a = (q1[:, :3] * [2.0, 2.0, 1.0]) @ q2.T
    t = rng.standard_normal((5, 3))
    with tf.forward_ad.dual_level():
        u, s, vt = tf.linalg.svd(tf.forward_ad.make_dual(tf.tensor(a), tf.tensor(t)),
                                 full_matrices=True)
        du = tf.forward_ad.unpack_dual(u).tangent.numpy()
    u, s, vt = u.numpy(), s.numpy(), vt.numpy()
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-14)
    np.testing.assert_allclose((u[:, :3] * s) @ vt, a, atol=1e-14)
    # the tangent keeps u unitary to first order
    np.testing.assert_allclose(du.T @ u + u.T @ du, 0, atol=1e-12)
