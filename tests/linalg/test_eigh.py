"""tf.linalg.eigh / eigen / eigvalsh: values, derivatives (rev, fwd, second order),
the Hermitian-gradient convention, degenerate spectra, the gauge check, 0-size, errors.

Eigenvectors are unique only up to a phase (a sign for real input) per column, so the
derivative checks compose eigh with gauge-invariant maps: |V| and V diag(w) Vᴴ (the
phases cancel), and the values. The input is the Hermitian wrapper a + aᴴ of a random a
(the oracle cases do the same): eigh reads one triangle, and its derivative is the one
along Hermitian directions (see tenferro/linalg/eigh.py), which is what a + aᴴ feeds it.
"""
import importlib

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import (check_grads, check_kernel_backward, check_low_precision,
                              random_array)

DTYPES = [np.float64, np.complex128]
SHAPES = [(1, 1), (4, 4), (5, 5), (2, 3, 3)]


def herm(a):
    return a + np.swapaxes(a, -1, -2).conj()


def gauge_free(a, UPLO="L"):
    w, v = tf.linalg.eigh(a + a.mH, UPLO=UPLO)
    return w, tf.abs(v), (v * w[..., None, :]) @ v.mH


def with_eigenvalues(w, dtype=np.float64, rng=0):
    q = np.linalg.qr(random_array((len(w), len(w)), dtype, rng))[0]
    return (q * np.asarray(w, float)) @ q.conj().T


def grad_of(loss, a, **kw):
    x = tf.tensor(a, requires_grad=True)
    g, = tf.grad([loss(x, **kw)], [x])
    return g.numpy()


# ---- values -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_values(dtype, shape, uplo):
    a = random_array(shape, dtype, 1)     # not Hermitian: only the UPLO triangle is read
    w, v = tf.linalg.eigh(a, UPLO=uplo)
    nw, nv = np.linalg.eigh(a, UPLO=uplo)
    assert w.shape == nw.shape and v.shape == nv.shape
    assert w.dtype == nw.dtype and v.dtype == dtype
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(w.numpy(), nw, rtol=tol, atol=tol)
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    full = tri + np.swapaxes(tri, -1, -2).conj()
    full[..., np.arange(shape[-1]), np.arange(shape[-1])] = np.diagonal(a, 0, -2, -1).real
    vv = v.numpy()
    np.testing.assert_allclose((vv * w.numpy()[..., None, :]) @ np.swapaxes(vv, -1, -2).conj(),
                               full, atol=10 * tol)
    np.testing.assert_allclose(tf.linalg.eigvalsh(a, UPLO=uplo).numpy(), nw, rtol=tol,
                               atol=tol)


def test_api_spellings():
    a = herm(random_array((3, 3), np.complex128, 2))
    r = tf.linalg.eigh(a)
    assert isinstance(r, tf.linalg.EighResult) and r._fields == ("values", "vectors")
    for other in (tf.linalg.eigen(a), tf.eigh_ad(a).run(), tf.eigen_ad(a).run(),
                  tf.tensor(a).eigh(), tf.tensor(a).eigen()):
        for x, y in zip(r, other):
            np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert tf.eigen_ad.__name__ == "eigen_ad"
    for vals in (tf.eigvalsh_ad(a).run(), tf.tensor(a).eigvalsh(), tf.linalg.eigvalsh(a)):
        np.testing.assert_allclose(vals.numpy(), r.values.numpy(), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(tf.linalg.eigvalsh(np.array([[2, 0], [0, 1]])).numpy(), [1, 2])


# ---- derivatives --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_grads(dtype, shape, uplo):
    a = random_array(shape, dtype, 3)
    check_grads(lambda x: gauge_free(x, uplo), [a], modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_eigvalsh_grads(dtype, shape):
    a = random_array(shape, dtype, 4)
    check_grads(lambda x: tf.linalg.eigvalsh(x + x.mH), [a], modes=("rev", "fwd"), order=2)


def test_vjp_matches_rules_formula():
    """docs/rules.md#eigh: Ā = V[diag(λ̄) + ½(F∘(VᴴV̄) + (F∘(VᴴV̄))ᴴ)]Vᴴ, F_ij = 1/(λ_j − λ_i)."""
    rng = np.random.default_rng(5)
    a = herm(random_array((5, 5), np.float64, rng))
    w, v = (t.numpy() for t in tf.linalg.eigh(a))       # the factors tenferro uses
    gw, gv = rng.standard_normal(w.shape), rng.standard_normal(v.shape)
    d = w[None, :] - w[:, None]
    F = np.where(d == 0, 0, 1 / np.where(d == 0, 1, d))
    FX = F * (v.T @ gv)
    ref = v @ (np.diag(gw) + 0.5 * (FX + FX.T)) @ v.T
    x = tf.tensor(a, requires_grad=True)
    got, = tf.grad(list(tf.linalg.eigh(x)), [x], [gw, gv])
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-10)
    # sign of F: <Ā, Ȧ> is the finite difference of <(λ̄, V̄), eigh> (sign-fixed vectors)
    # along a symmetric direction
    da = herm(rng.standard_normal(a.shape))
    h = 1e-6

    def fixed(b):
        ww, vv = np.linalg.eigh(b)
        return ww, vv * np.sign(np.sum(vv * v, axis=0))

    (wp, vp), (wm, vm) = fixed(a + h * da), fixed(a - h * da)
    fd = (np.sum(gw * (wp - wm)) + np.sum(gv * (vp - vm))) / (2 * h)
    np.testing.assert_allclose(np.sum(ref * da), fd, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradient_is_hermitian_full_matrix(dtype):
    """The gradient is the Hermitian full matrix (docs/rules.md), not a triangle; for a
    non-Hermitian input it is the gradient at the Hermitian matrix eigh actually reads
    (the same for UPLO="L" reading a and for the mirrored matrix itself)."""
    a = random_array((4, 4), dtype, 6)
    loss = lambda x: tf.sum(tf.linalg.eigh(x).values ** 3) + tf.sum(tf.abs(tf.linalg.eigh(x)[1]))
    g = grad_of(loss, a)
    np.testing.assert_allclose(g, g.conj().T, atol=1e-12)
    assert np.abs(np.triu(g, 1)).max() > 1e-3              # both triangles are filled
    mirrored = np.tril(a) + np.tril(a, -1).conj().T
    mirrored[np.arange(4), np.arange(4)] = a.diagonal().real
    np.testing.assert_allclose(g, grad_of(loss, mirrored), atol=1e-12)
    # the JVP is consistent with it: along a non-Hermitian direction it sees the
    # Hermitian part, so <Ā, Ȧ> = Re jvp for every direction
    da = random_array((4, 4), dtype, 7)
    f = lambda x: tf.sum(tf.linalg.eigh(x).values ** 3)
    _, t = tf.jvp(f, [tf.tensor(a)], [tf.tensor(da)])
    gv = grad_of(f, a)
    np.testing.assert_allclose(t.numpy(), np.sum((gv.conj() * da).real), rtol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("eps", [None, 0.3])
def test_kernel_and_tensor_rule_agree(dtype, shape, eps, monkeypatch):
    """Plain backward (Cython kernel) and create_graph backward (rule on Tensors) agree,
    also with a large ε."""
    rng = np.random.default_rng(8)
    a = herm(random_array(shape, dtype, rng))
    G = herm(random_array(shape, dtype, rng))

    def loss(x):
        w, v = tf.linalg.eigh(x, derivative_eps=eps)
        loss = tf.sum(tf.real(np.conj(G) * ((v * w[..., None, :]) @ v.mH)))
        return loss + tf.sum(tf.abs(v) ** 2 * np.abs(G)) + tf.sum(w ** 3)

    # the plain backward goes through the kernel, the create_graph one does not
    mod = importlib.import_module("tenferro.linalg.eigh")   # tf.linalg.eigh is the function
    check_kernel_backward(monkeypatch, mod._kernel, "eigh_backward", loss, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_low_precision(dtype):
    a = random_array((4, 4), dtype, 9)
    check_low_precision(gauge_free, [a])
    check_low_precision(lambda x: tf.linalg.eigvalsh(x + x.mH), [a])


# ---- degenerate spectra ---------------------------------------------------------------------

def _vector_loss(x, **kw):
    # gauge-invariant but through V (so through F): Σ |V diag(w) Vᴴ|² + Σ |V|
    w, v = tf.linalg.eigh(x, **kw)
    return tf.sum(tf.abs((v * w[..., None, :]) @ v.mH) ** 2) + tf.sum(tf.abs(v))


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeated_eigenvalues_exact_path(dtype):
    a = with_eigenvalues([-1.0, 2.0, 2.0, 2.0], dtype)
    for f in (lambda x: tf.sum(tf.linalg.eigvalsh(x) ** 2),
              lambda x: tf.sum(tf.linalg.eigh(x).values ** 2)):
        np.testing.assert_allclose(grad_of(f, a), 2 * a, atol=1e-12)   # d tr(A²) = 2A
    # tr(A) = Σ λ has the gradient I, also at the identity (every gap exactly 0)
    for m in (a, np.eye(3, dtype=dtype)):
        np.testing.assert_allclose(grad_of(lambda x: tf.sum(tf.linalg.eigvalsh(x)), m),
                                   np.eye(len(m)), atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["repeated", "identity", "near", "zero"])
def test_vector_gradient_finite(dtype, case):
    a = {"repeated": lambda: with_eigenvalues([1.0, 3.0, 3.0], dtype),
         "identity": lambda: np.eye(3, dtype=dtype),
         "near": lambda: with_eigenvalues([1.0, 3.0, 3.0 + 1e-13], dtype),
         "zero": lambda: np.zeros((3, 3), dtype)}[case]()
    for eps in (None, 0.0):
        assert np.isfinite(grad_of(_vector_loss, a, derivative_eps=eps)).all()
    _, t = tf.jvp(_vector_loss, [tf.tensor(a)], [tf.tensor(herm(np.ones_like(a)))])
    assert np.isfinite(t.numpy()).all()


def test_resolvable_gap_is_exact_and_eps_is_used():
    a = with_eigenvalues([1.0, 2.0, 2.0 + 1e-6])
    g_def = grad_of(_vector_loss, a)
    np.testing.assert_allclose(g_def, grad_of(_vector_loss, a, derivative_eps=0.0),
                               rtol=1e-7, atol=1e-7)
    assert np.max(np.abs(g_def - grad_of(_vector_loss, a, derivative_eps=1.0))) > 1e-3
    with pytest.raises(ValueError, match="derivative_eps"):
        tf.linalg.eigh(a, derivative_eps=float("nan"))


# ---- gauge ----------------------------------------------------------------------------------

def _phase_loss(x, **kw):
    # PyTorch's test_invariance_error_spectral_decompositions: |Σ V| of eigh(A + Aᴴ)
    return tf.abs(tf.sum(tf.linalg.eigh(x + x.mH, **kw).vectors))


def test_gauge_error():
    a = random_array((2, 3, 3), np.complex128, 10)
    with pytest.raises(tf.GaugeError, match="eigenvectors.*check_gauge=False"):
        grad_of(_phase_loss, a)
    x = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.GaugeError):
        tf.grad([_phase_loss(x)], [x], create_graph=True)
    assert np.isfinite(grad_of(_phase_loss, a, check_gauge=False)).all()
    # real input never raises; gauge-invariant complex losses pass (also in complex64)
    assert np.isfinite(grad_of(_phase_loss, a.real.copy())).all()
    assert np.isfinite(grad_of(_vector_loss, herm(a))).all()
    assert np.isfinite(grad_of(_vector_loss, herm(a).astype(np.complex64))).all()


# ---- 0-size, batches, errors ----------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_size(shape, dtype):
    a = np.zeros(shape, dtype)
    w, v = tf.linalg.eigh(a)
    nw, nv = np.linalg.eigh(a)
    assert (w.shape, v.shape, w.dtype) == (nw.shape, nv.shape, nw.dtype)
    assert tf.linalg.eigvalsh(a).shape == nw.shape
    x = tf.tensor(a, requires_grad=True)
    r = tf.linalg.eigh(x)
    g, = tf.grad([tf.sum(r.values) + tf.sum(tf.abs(r.vectors))], [x])
    assert g.shape == shape
    _, t = tf.jvp(tf.linalg.eigh, [tf.tensor(a)], [tf.tensor(a)])
    assert [x.shape for x in t] == [nw.shape, nv.shape]


def test_batched_matches_loop():
    a = herm(random_array((2, 3, 4, 4), np.complex128, 11))
    g = grad_of(_vector_loss, a)
    for i in np.ndindex(a.shape[:2]):
        np.testing.assert_allclose(g[i], grad_of(_vector_loss, a[i]), rtol=1e-12, atol=1e-12)


def test_errors():
    for fn in (tf.linalg.eigh, tf.linalg.eigvalsh):
        with pytest.raises(tf.ShapeError, match="ndim >= 2"):
            fn(np.ones(3))
        with pytest.raises(tf.ShapeError, match="square"):
            fn(np.ones((2, 3)))
        with pytest.raises(ValueError, match="UPLO"):
            fn(np.eye(2), UPLO="X")
        with pytest.raises(tf.DTypeError):
            fn(np.array([["a"]], dtype=object))
    bad = np.eye(3)
    bad[2, 1] = np.inf
    x = tf.tensor(bad, requires_grad=True)
    for fn in (tf.linalg.eigh, tf.linalg.eigvalsh):
        with pytest.raises(tf.LinAlgError, match=r"non-finite.*\(2, 1\).*check_finite"):
            fn(x)
    assert x.grad is None and x.is_leaf
    # check_finite=False: the upper triangle is never read, so UPLO="U" is fine
    np.testing.assert_allclose(tf.linalg.eigvalsh(bad, UPLO="U", check_finite=False).numpy(),
                               [1, 1, 1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_third_order(dtype):
    """Third derivatives through the create_graph pullback recorded as one lazy_rule node
    (svd.py): reverse over reverse over reverse and the forward-over-reverse mixes."""
    a = random_array((3, 3), dtype, 21)
    check_grads(lambda x: tf.sum(tf.abs(gauge_free(x)[2]) ** 2)
                + tf.sum(gauge_free(x)[1] ** 3), [a], order=3)


def test_create_graph_value_is_the_kernels():
    a = tf.tensor(herm(random_array((5, 5), np.float64, 22)), requires_grad=True)
    w, v = tf.linalg.eigh(a)
    loss = tf.sum(tf.abs(v) ** 3) + tf.sum(w * w)
    plain, = tf.grad([loss], [a], retain_graph=True)
    graph, = tf.grad([loss], [a], create_graph=True)
    assert graph.grad_fn is not None
    np.testing.assert_allclose(graph.numpy(), plain.numpy(), rtol=1e-13, atol=1e-13)


# ---- second order at exactly repeated eigenvalues (issue 25) ------------------------------
#
# Pairs of a degenerate block (eigenvalues within n·eps·max|λ|, in a run) take the exact
# limit 0 of F with derivative 0 (docs/degenerate_derivatives.md). Along a family that
# keeps the degeneracy, a loss invariant under rotations of the degenerate eigenvectors has
# exact derivatives of every order; in forward mode the primal takes the eigenvectors of
# each block in the basis in which it splits along the tangent, which makes forward mode
# (and tf.hvp) exact in every direction for such losses.

def _eigh_family(n, values, dtype, rng):
    """θ -> A(θ) = R(θ) Q diag(values·(1 + 0.3 sin θ)) Qᴴ R(θ)ᴴ with R(θ) = expm(θK),
    K anti-Hermitian: the multiplicities of ``values`` are kept for every θ."""
    q = np.linalg.qr(random_array((n, n), dtype, rng))[0]
    k = random_array((n, n), dtype, rng)
    k = k - k.conj().T
    lam = np.asarray(values, float)

    def a_of(theta):
        r = tf.linalg.matrix_exp(theta * tf.tensor(k)) @ tf.tensor(q)
        w = tf.tensor(lam) * (1 + 0.3 * tf.sin(theta))
        return (r * w.astype(dtype)) @ r.mH
    return a_of


def _second_derivatives(fn, theta0):
    th = tf.tensor(theta0, requires_grad=True)
    (g,) = tf.grad([fn(th)], [th], create_graph=True)
    (rr,) = tf.grad([g], [th])
    _, _, fr = tf.hvp(fn, [np.array(theta0)], [np.array(1.0)])
    return [float(rr), float(fr[0])]


def _first_derivative(fn, theta):
    th = tf.tensor(theta, requires_grad=True)
    (g,) = tf.grad([fn(th)], [th])
    return float(g)


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_derivative_through_repeated_eigenvalues(dtype):
    rng = np.random.default_rng(31)
    n = 5
    a_of = _eigh_family(n, [-1.0, 0.5, 0.5, 0.5, 2.0], dtype, rng)
    c = random_array((n, n), dtype, rng)
    c = tf.tensor(c + c.conj().T)

    def through_eigh(theta):
        # tr(g(A) C) with g(λ) = λ³ − λ²/2 from the eigenvectors: invariant under rotations
        # of a block, and its derivatives go through the F of the other pairs
        w, v = tf.linalg.eigh(a_of(theta))
        gw = (w ** 3 - 0.5 * w ** 2).astype(dtype)
        return tf.real(tf.sum(((v * gw) @ v.mH) * tf.conj(c)))

    def direct(theta):
        a = a_of(theta)
        return tf.real(tf.sum((a @ a @ a - 0.5 * a @ a) * tf.conj(c)))

    def projector(theta):
        # ‖P C‖² with P the projector on the repeated eigenvalue's eigenspace
        w, v = tf.linalg.eigh(a_of(theta))
        vb = v[:, 1:4]
        p = vb @ (vb.mH @ c)
        return tf.sum(tf.real(p * tf.conj(p)))

    theta0, h = 0.4, 1e-5
    w = np.linalg.eigvalsh(a_of(tf.tensor(theta0)).numpy())
    assert np.ptp(w[1:4]) < 1e-14 * np.abs(w).max()
    assert _first_derivative(through_eigh, theta0) == pytest.approx(
        _first_derivative(direct, theta0), rel=1e-10)
    np.testing.assert_allclose(_second_derivatives(through_eigh, theta0),
                               _second_derivatives(direct, theta0), rtol=1e-8)
    for fn in (through_eigh, projector):
        fd = (_first_derivative(fn, theta0 + h) - _first_derivative(fn, theta0 - h)) / (2 * h)
        np.testing.assert_allclose(_second_derivatives(fn, theta0), [fd, fd], rtol=1e-6,
                                   atol=1e-7)
        check_grads(fn, [np.array(theta0)], order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hvp_of_spectral_function_at_repeated_eigenvalues_in_any_direction(dtype):
    # f(A) = Σ g(λ_i) (Lewis & Sendov): its Hessian holds (g'(λ_i) − g'(λ_j))/(λ_i − λ_j),
    # whose limit at λ_i = λ_j is g''(λ). tf.hvp takes each repeated eigenvalue's vectors in
    # the basis in which it splits along v, so the result is exact in every direction
    rng = np.random.default_rng(32)
    a = with_eigenvalues([0.5, 1.0, 1.0, 1.0, 2.0], dtype, rng)
    v = herm(random_array((5, 5), dtype, rng))

    def f(x):
        w = tf.linalg.eigvalsh(x)
        return tf.sum(tf.exp(w) + w ** 4)

    _, g, hv = tf.hvp(f, [a], [v])
    h = 1e-5
    fd = (grad_of(f, a + h * v) - grad_of(f, a - h * v)) / (2 * h)
    np.testing.assert_allclose(g[0].numpy(), grad_of(f, a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hv[0].numpy(), fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


@pytest.mark.parametrize("dtype", DTYPES)
def test_forward_mode_of_a_matrix_function_at_repeated_eigenvalues(dtype):
    # tr(g(A) C) through the vectors: its directional derivative at a repeated eigenvalue
    # has the limit g'(λ) of (g(λ_i) − g(λ_j))/(λ_i − λ_j) within the block; in the basis
    # that diagonalizes the block of the tangent those terms vanish, so the JVP is exact
    # in every direction
    rng = np.random.default_rng(33)
    a = with_eigenvalues([0.5, 1.0, 1.0, 2.0], dtype, rng)
    v = herm(random_array((4, 4), dtype, rng))
    c = herm(random_array((4, 4), dtype, rng))

    def f(x):
        w, vec = tf.linalg.eigh(x)
        return tf.real(tf.sum(((vec * tf.exp(w).astype(dtype)) @ vec.mH) * tf.tensor(c)))

    _, t = tf.jvp(f, [a], [v])
    h = 1e-6
    fd = (float(f(tf.tensor(a + h * v))) - float(f(tf.tensor(a - h * v)))) / (2 * h)
    assert float(t) == pytest.approx(fd, rel=1e-7)


def test_first_derivative_bit_identical_for_distinct_eigenvalues():
    # drel = 0 is the kernel's arithmetic before blocks existed
    from tenferro._kernels import load
    kernel = load("spectral")
    rng = np.random.default_rng(34)
    for dtype in (np.float32, np.float64, np.complex64, np.complex128):
        a = tf.tensor(herm(random_array((3, 6, 6), dtype, rng)), requires_grad=True)
        w, v = tf.linalg.eigh(a, check_gauge=False)
        assert np.all(np.diff(w.numpy(), axis=-1) > 1e-3)
        gv = random_array(v.shape, dtype, rng)
        gw = random_array(w.shape, w.dtype, rng)
        (g,) = tf.grad([w, v], [a], [gw, gv])
        out = np.empty(v.shape, dtype)
        kernel.eigh_backward(v.numpy(), w.numpy(), gv, gw, 0.0, 6 * np.finfo(w.dtype).eps,
                             out, 0.0)
        assert np.array_equal(g.numpy(), out)


@pytest.mark.parametrize("dtype", DTYPES)
def test_forward_mode_takes_the_splitting_basis_in_a_stack(dtype):
    # each matrix of a stack, each of its degenerate blocks: the primal under a tangent is
    # still an eigendecomposition, λ̇ are the one-sided derivatives of the sorted values
    rng = np.random.default_rng(35)
    a = np.stack([with_eigenvalues([0.5, 1.0, 1.0, 2.0, 2.0], dtype, rng),
                  with_eigenvalues([-1.0, -1.0, -1.0, 0.0, 3.0], dtype, rng)])
    t = herm(random_array(a.shape, dtype, rng))
    with tf.forward_ad.dual_level():
        w, v = tf.linalg.eigh(tf.forward_ad.make_dual(tf.tensor(a), tf.tensor(t)))
        dw = tf.forward_ad.unpack_dual(w).tangent.numpy()
    w, v = w.numpy(), v.numpy()
    np.testing.assert_allclose((v * w[..., None, :]) @ np.swapaxes(v, -1, -2).conj(), a,
                               atol=1e-13)
    c = np.swapaxes(v, -1, -2).conj() @ t @ v
    for b, blocks in ((0, [(1, 3), (3, 5)]), (1, [(0, 3)])):
        for i0, i1 in blocks:
            cb = c[b, i0:i1, i0:i1]
            assert np.abs(cb - np.diag(np.diag(cb))).max() < 1e-12
    h = 1e-7                           # one-sided: the sorted values split like |h|
    fd = (np.linalg.eigvalsh(a + h * t) - w) / h
    np.testing.assert_allclose(dw, fd, atol=1e-5)


def test_forward_mode_splits_a_repeated_zero_eigenvalue():
    # a projector: eigenvalue 0 three times; it splits along t like any other
    rng = np.random.default_rng(36)
    a = with_eigenvalues([0.0, 0.0, 0.0, 1.0], np.float64, rng)
    t = herm(random_array((4, 4), np.float64, rng))
    _, (dw, _) = tf.jvp(tf.linalg.eigh, [a], [t])
    h = 1e-7
    np.testing.assert_allclose(dw.numpy(), (np.linalg.eigvalsh(a + h * t)
                                            - np.linalg.eigvalsh(a)) / h, atol=1e-5)
