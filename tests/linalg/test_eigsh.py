"""tf.linalg.eigsh: values and vectors against numpy, derivatives against the dense
tf.linalg.eigh and central finite differences (reverse, forward, second order of the
values; second order of the vectors raises), a matvec with parameters (the transverse-field
Ising chain), degenerate blocks, the gauge check, float32, and the errors.

Eigenvectors are unique up to a phase per column, so vector losses are gauge-invariant:
|v_iᴴ b|² and projectors. Tensor inputs are wrapped as (a + aᴴ)/2 so that every
finite-difference step stays Hermitian (eigsh checks that a is Hermitian).
"""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.complex128]
WHICH = ["SA", "LA", "LM", "SM"]


def herm_matrix(n, dtype, rng=0):
    a = random_array((n, n), dtype, rng)
    return (a + a.conj().T) / 2


def select(w, which, k):
    """The indices (ascending by value) of the k eigenvalues ``which`` picks from all of w."""
    if which == "SA":
        idx = np.argsort(w)[:k]
    elif which == "LA":
        idx = np.argsort(w)[-k:]
    elif which == "LM":
        idx = np.argsort(np.abs(w))[-k:]
    else:
        idx = np.argsort(np.abs(w))[:k]
    return idx[np.argsort(w[idx])]


def vec_loss(w, v, b):
    """A loss of the values and (gauge-invariant) of the vectors."""
    return (1.3 * w.sum() + 0.7 * w[0] + abs(v[:, 0].conj() @ b) ** 2
            + 0.3 * abs(v[:, -1].conj() @ b) ** 2)


def dense_pairs(a, which, k):
    """The same k pairs from the dense tf.linalg.eigh, differentiable."""
    w, v = tf.linalg.eigh(a)
    idx = select(w.numpy(), which, k)
    return w[idx], v[:, idx]


# ---- values --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("which", WHICH)
def test_values_and_vectors(dtype, which):
    n, k = 30, 4
    a = herm_matrix(n, dtype, 1)
    w, v = tf.linalg.eigsh(a, k, which)
    assert w.shape == (k,) and v.shape == (n, k)
    assert w.dtype == np.finfo(dtype).dtype and v.dtype == dtype
    ref = np.linalg.eigvalsh(a.astype(np.complex128 if dtype in (np.complex64, np.complex128)
                                      else np.float64))
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-11
    np.testing.assert_allclose(w.numpy(), ref[select(ref, which, k)], rtol=tol, atol=tol)
    assert np.all(np.diff(w.numpy()) >= 0)                      # ascending
    vv = v.numpy()
    np.testing.assert_allclose(a @ vv, vv * w.numpy(), atol=50 * tol)
    np.testing.assert_allclose(vv.conj().T @ vv, np.eye(k), atol=50 * tol)


def test_deterministic_and_result_fields():
    a = herm_matrix(20, np.float64)
    r1 = tf.linalg.eigsh(a, 3)
    r2 = tf.linalg.eigsh(a, 3)
    np.testing.assert_array_equal(r1.vectors.numpy(), r2.vectors.numpy())
    assert r1.eigenvalues is r1.values and r1.eigenvectors is r1.vectors


# ---- first derivatives against the dense eigh and finite differences ------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", WHICH)
def test_grad_matches_dense_eigh(dtype, which):
    n, k = 24, 4
    a = herm_matrix(n, dtype, 2)
    b = random_array(n, dtype, 3)

    def sparse(x):
        return vec_loss(*tf.linalg.eigsh(x, k, which), b)

    def dense(x):
        return vec_loss(*dense_pairs(x, which, k), b)
    grads = []
    for f in (sparse, dense):
        x = tf.tensor(a, requires_grad=True)
        out = f(x)
        grads.append((out.item(), tf.grad([out], [x])[0].numpy()))
    assert abs(grads[0][0] - grads[1][0]) < 1e-10
    np.testing.assert_allclose(grads[0][1], grads[1][1], atol=1e-10)
    t = herm_matrix(n, dtype, 4)
    jv = [tf.jvp(f, [tf.tensor(a)], [tf.tensor(t)])[1].item() for f in (sparse, dense)]
    assert abs(jv[0] - jv[1]) < 1e-10


@pytest.mark.parametrize("dtype", DTYPES)
def test_grads_finite_differences_vectors(dtype):
    n, k = 16, 3
    a = herm_matrix(n, dtype, 5)
    b = random_array(n, dtype, 6)

    def f(x):
        w, v = tf.linalg.eigsh((x + x.mH) / 2, k, "SA")
        return w, abs(v.conj().T @ b) ** 2, v @ v.mH          # values, overlaps, projector
    check_grads(f, [a], order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order_values(dtype):
    a = herm_matrix(12, dtype, 7)
    # (order 2 in reverse mode: the forward rule does not nest, see the next test)
    check_grads(lambda x: tf.linalg.eigsh((x + x.mH) / 2, 3, "LA")[0], [a], order=1)
    check_grads(lambda x: tf.linalg.eigsh((x + x.mH) / 2, 3, "LA")[0], [a], order=2,
                modes=("rev",))


def test_jvp_of_jvp_raises():
    a = herm_matrix(8, np.float64, 3)
    d = tf.tensor(herm_matrix(8, np.float64, 4))

    def inner(x):
        return tf.jvp(lambda y: tf.linalg.eigsh((y + y.mH) / 2, 2, "LA")[0].sum(), [x],
                      [d])[1]
    with pytest.raises(tf.UnsupportedADError, match="nested dual levels"):
        tf.jvp(inner, [tf.tensor(a)], [d])


def test_second_order_vectors_raises():
    a = herm_matrix(12, np.float64, 8)
    b = np.ones(12)

    def f(x):
        return abs(tf.linalg.eigsh((x + x.mH) / 2, 3, "SA")[1][:, 0] @ b) ** 2
    x = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="second derivatives"):
        tf.grad([f(x)], [x], create_graph=True)
    with pytest.raises(tf.UnsupportedADError, match="second derivatives"):
        tf.hvp(f, [tf.tensor(a)], [tf.tensor(herm_matrix(12, np.float64, 9))])
    # reverse-over-forward through the vector tangent
    x = tf.tensor(a, requires_grad=True)
    _, t = tf.jvp(f, [x], [tf.tensor(herm_matrix(12, np.float64, 9))])
    with pytest.raises(tf.UnsupportedADError, match="vector tangent"):
        tf.grad([t], [x])


def test_hessian_of_eigenvalue_sum_matches_dense():
    a = herm_matrix(10, np.float64, 10)
    d = herm_matrix(10, np.float64, 11)

    def f_sparse(x):
        return tf.linalg.eigsh((x + x.mH) / 2, 3, "SA")[0].sum()

    def f_dense(x):
        return tf.linalg.eigh((x + x.mH) / 2)[0][:3].sum()
    h = [tf.hvp(f, [tf.tensor(a)], [tf.tensor(d)])[2][0].numpy() for f in (f_sparse, f_dense)]
    np.testing.assert_allclose(h[0], h[1], atol=1e-9)


# ---- a matvec with parameters ------------------------------------------------------------------

def _param_matvec(n, rng=0, complex_=False):
    g = np.random.default_rng(rng)
    m0 = g.standard_normal((n, n))
    m1 = g.standard_normal((n, n)) + (1j * g.standard_normal((n, n)) if complex_ else 0)
    m0, m1 = m0 + m0.T, m1 + m1.conj().T
    diag = np.arange(n, dtype=float)

    def matvec(v, p):
        return tf.tensor(m0) @ v + p[0] * (tf.tensor(m1) @ v) + p[1] ** 2 * (v * diag)

    def dense(p):
        return tf.tensor(m0) + p[0] * tf.tensor(m1) + p[1] ** 2 * tf.tensor(np.diag(diag))
    return matvec, dense


@pytest.mark.parametrize("complex_", [False, True])
def test_matvec_params_against_dense_and_fd(complex_):
    n, k = 20, 3
    matvec, dense = _param_matvec(n, 12, complex_)
    p0 = np.array([0.3, 0.8])
    b = random_array(n, np.complex128 if complex_ else np.float64, 13)

    def sparse_loss(p):
        return vec_loss(*tf.linalg.eigsh(matvec, k, "SA", n=n, params=(p,)), b)

    def dense_loss(p):
        return vec_loss(*dense_pairs(dense(p), "SA", k), b)
    gs = []
    for f in (sparse_loss, dense_loss):
        p = tf.tensor(p0, requires_grad=True)
        gs.append(tf.grad([f(p)], [p])[0].numpy())
    np.testing.assert_allclose(gs[0], gs[1], atol=1e-10)
    check_grads(sparse_loss, [p0], order=1)
    check_grads(lambda p: tf.linalg.eigsh(matvec, k, "SA", n=n, params=(p,))[0], [p0],
                order=2, modes=("rev",))
    w, v = tf.linalg.eigsh(matvec, k, "SA", n=n, params=(p0,))
    assert v.dtype == (np.complex128 if complex_ else np.float64)


L_ISING = 10


def ising_matvec(v, h):
    """H = −Σ Z_i Z_{i+1} − h Σ X_i (open chain) on a (2,)*L reshaped vector."""
    x = v.reshape((2,) * L_ISING)
    z = np.array([1.0, -1.0])
    zz = np.zeros((2,) * L_ISING)
    for i in range(L_ISING - 1):
        shape_i = [1] * L_ISING
        shape_i[i] = 2
        shape_j = [1] * L_ISING
        shape_j[i + 1] = 2
        zz = zz + z.reshape(shape_i) * z.reshape(shape_j)
    out = -x * zz
    for i in range(L_ISING):
        out = out - h * tf.flip(x, axis=i)
    return out.reshape((2 ** L_ISING,))


def ising_dense():
    """(H_zz, H_x) with H = H_zz + h H_x, by Kronecker products (independent of the matvec)."""
    eye, z, x = np.eye(2), np.diag([1.0, -1.0]), np.array([[0.0, 1.0], [1.0, 0.0]])

    def site_op(ops):
        out = np.ones((1, 1))
        for o in ops:
            out = np.kron(out, o)
        return out
    hzz = sum(-site_op([z if j in (i, i + 1) else eye for j in range(L_ISING)])
              for i in range(L_ISING - 1))
    hx = sum(-site_op([x if j == i else eye for j in range(L_ISING)]) for i in range(L_ISING))
    return hzz, hx


def test_ising_ground_energy_derivative():
    n = 2 ** L_ISING
    h0 = 0.9
    hzz, hx = ising_dense()

    def e0(h):
        return tf.linalg.eigsh(ising_matvec, 1, "SA", n=n, params=(h,))[0][0]
    h = tf.tensor(h0, requires_grad=True)
    e = e0(h)
    g, = tf.grad([e], [h])
    wd, vd = np.linalg.eigh(hzz + h0 * hx)
    assert abs(e.item() - wd[0]) < 1e-10
    hf = vd[:, 0] @ hx @ vd[:, 0]                               # Hellmann–Feynman, dense
    step = 1e-5
    fd = (e0(h0 + step).item() - e0(h0 - step).item()) / (2 * step)
    assert abs(g.item() - hf) < 1e-10
    assert abs(g.item() - fd) < 1e-7
    # dense tf.linalg.eigh of the 1024 x 1024 matrix, the same derivative
    hd = tf.tensor(h0, requires_grad=True)
    gd, = tf.grad([tf.linalg.eigh(tf.tensor(hzz) + hd * tf.tensor(hx))[0][0]], [hd])
    assert abs(g.item() - gd.item()) < 1e-10
    _, t = tf.jvp(e0, [tf.tensor(h0)], [tf.tensor(1.0)])
    assert abs(t.item() - hf) < 1e-10


def test_ising_vector_observable_derivative():
    """d⟨ψ0|Z_0 Z_1|ψ0⟩/dh through the eigenvector (the projected solve on 1024 unknowns)."""
    n = 2 ** L_ISING
    h0 = 0.9
    hzz, hx = ising_dense()
    zz01 = np.kron(np.diag([1.0, -1.0]), np.kron(np.diag([1.0, -1.0]),
                                                  np.eye(2 ** (L_ISING - 2))))
    zd = np.diag(zz01)

    def corr(h):
        v = tf.linalg.eigsh(ising_matvec, 2, "SA", n=n, params=(h,))[1][:, 0]
        return (v * zd * v).sum()
    h = tf.tensor(h0, requires_grad=True)
    g, = tf.grad([corr(h)], [h])
    hd = tf.tensor(h0, requires_grad=True)
    vd = tf.linalg.eigh(tf.tensor(hzz) + hd * tf.tensor(hx))[1][:, 0]
    gd, = tf.grad([(vd * zd * vd).sum()], [hd])
    step = 1e-5
    fd = (corr(h0 + step).item() - corr(h0 - step).item()) / (2 * step)
    assert abs(g.item() - gd.item()) < 1e-8
    assert abs(g.item() - fd) < 1e-7
    _, t = tf.jvp(corr, [tf.tensor(h0)], [tf.tensor(1.0)])
    assert abs(t.item() - gd.item()) < 1e-8


# ---- precision, degeneracy, gauge ------------------------------------------------------------

def test_float32_against_float64():
    a = herm_matrix(20, np.float64, 14)
    check_low_precision(lambda x: tf.linalg.eigsh((x + x.mH) / 2, 3, "LA")[0], [a])
    check_low_precision(lambda x: abs(tf.linalg.eigsh((x + x.mH) / 2, 3, "LA")[1][:, -1].sum())
                        ** 2, [a])


def with_eigenvalues(w, rng=0):
    q = np.linalg.qr(random_array((len(w), len(w)), np.float64, rng))[0]
    return (q * np.asarray(w, float)) @ q.T


def test_degenerate_block_inside_k():
    """λ = 1 twice among the k = 3 smallest: the block's sum and a rotation-invariant loss
    of its vectors (the projector) have the dense eigh's derivative."""
    w0 = np.array([-2.0, 1.0, 1.0, 3.0, 4.0, 5.5, 6.0, 7.0, 8.0, 9.5])
    a = with_eigenvalues(w0, 15)
    b = random_array(10, np.float64, 16)

    def loss(w, v):
        p = v[:, 1:3] @ v[:, 1:3].mT                             # projector on the block
        return w[1:3].sum() + b @ p @ b + abs(v[:, 0] @ b) ** 2
    gs = []
    for f in (lambda x: loss(*tf.linalg.eigsh(x, 3, "SA")),
              lambda x: loss(*dense_pairs(x, "SA", 3))):
        x = tf.tensor(a, requires_grad=True)
        gs.append(tf.grad([f(x)], [x])[0].numpy())
    np.testing.assert_allclose(gs[0], gs[1], atol=1e-9)
    # forward mode along a direction that splits the block: the block's sum
    t = herm_matrix(10, np.float64, 20)
    sums = [tf.jvp(f, [tf.tensor(a)], [tf.tensor(t)])[1].item() for f in
            (lambda x: tf.linalg.eigsh(x, 3, "SA")[0][1:3].sum(),
             lambda x: tf.linalg.eigh(x)[0][1:3].sum())]
    assert abs(sums[0] - sums[1]) < 1e-10


def test_degenerate_block_cut_by_k_raises():
    w0 = np.array([-2.0, 1.0, 1.0, 3.0, 4.0, 5.5, 6.0, 7.0, 8.0, 9.5])
    a = with_eigenvalues(w0, 17)
    x = tf.tensor(a, requires_grad=True)
    w, v = tf.linalg.eigsh(x, 2, "SA")
    g, = tf.grad([w.sum()], [x])                   # the values are fine
    np.testing.assert_allclose(g.numpy(), v.numpy() @ v.numpy().T, atol=1e-12)
    w, v = tf.linalg.eigsh(x, 2, "SA")
    with pytest.raises(tf.LinAlgError, match="raise k"):
        tf.grad([v[:, 1].sum() ** 2], [x])


def test_complex_phase_dependent_loss_raises():
    a = herm_matrix(12, np.complex128, 18)
    x = tf.tensor(a, requires_grad=True)
    w, v = tf.linalg.eigsh(x, 2, "SA")
    with pytest.raises(tf.GaugeError):
        tf.grad([v[0, 0].real], [x])
    w, v = tf.linalg.eigsh(x, 2, "SA", check_gauge=False)
    tf.grad([v[0, 0].real], [x])


# ---- errors --------------------------------------------------------------------------------------

def test_errors():
    a = herm_matrix(8, np.float64)
    with pytest.raises(tf.ShapeError, match="square"):
        tf.linalg.eigsh(np.ones((4, 5)), 2)
    with pytest.raises(tf.ShapeError, match="stack"):
        tf.linalg.eigsh(np.stack([a, a]), 2)
    with pytest.raises(tf.ShapeError, match="k must satisfy"):
        tf.linalg.eigsh(a, 8)
    with pytest.raises(tf.ShapeError, match="k must satisfy"):
        tf.linalg.eigsh(a, 0)
    with pytest.raises(tf.ShapeError, match="which"):
        tf.linalg.eigsh(a, 2, "BE")
    with pytest.raises(tf.LinAlgError, match="not Hermitian"):
        tf.linalg.eigsh(a + np.triu(np.ones((8, 8)), 1), 2)
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.eigsh(np.full((8, 8), np.nan), 2)
    with pytest.raises(tf.ShapeError, match="size n"):
        tf.linalg.eigsh(lambda v: v, 2)
    with pytest.raises(tf.ShapeError, match="shape"):
        tf.linalg.eigsh(lambda v: v[:3], 2, n=8)
    with pytest.raises(tf.ShapeError, match="v0"):
        tf.linalg.eigsh(a, 2, v0=np.ones(3))
    with pytest.raises(TypeError, match="params"):
        tf.linalg.eigsh(lambda v, h: h * v, 2, n=8, params=np.ones(2))


def test_closure_over_tracked_tensor_raises():
    h = tf.tensor(0.5, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="params"):
        tf.linalg.eigsh(lambda v: ising_matvec(v, h), 1, "SA", n=2 ** L_ISING)


def test_no_convergence_raises():
    a = herm_matrix(200, np.float64, 19)
    with pytest.raises(tf.LinAlgError, match="maxiter"):
        tf.linalg.eigsh(a, 5, "SM", maxiter=2, ncv=11)


def test_registered():
    from tenferro._ops.registry import OPS
    assert "eigsh" in OPS and OPS["eigsh"].second_order is False
    assert tf.linalg.eigsh.__module__ == "tenferro.linalg.eigsh"
    assert tf.linalg.EigshResult.__module__ == "tenferro.linalg.eigsh"
