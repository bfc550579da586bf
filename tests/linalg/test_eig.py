"""tf.linalg.eig and tf.linalg.eigvals: values against NumPy, derivatives of every order
against finite differences, the gauge check, the repeated-eigenvalue policy, errors, and
the shared reference derivatives (../shared/oracles)."""
import importlib

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import (assert_oracle_cases_cover, check_grads, check_low_precision,
                              load_oracle_cases, oracle_case_id, oracle_dir, random_array,
                              record_calls, replay_oracle_case)

# the module (tf.linalg.eig is the function of the same name)
eig_mod = importlib.import_module("tenferro.linalg.eig")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
              np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}


def _separated(shape, dtype=np.float64, seed=0):
    """A random matrix (stack) with well separated eigenvalues and a well-conditioned
    eigenvector matrix: X diag(d) X⁻¹ with X near the identity. Real input keeps a
    complex-conjugate pair (a rotation block), so its eigenvalues are complex too."""
    rng = np.random.default_rng(seed)
    n = shape[-1]
    x = np.eye(n) + 0.3 * random_array(shape, dtype, rng)
    d = np.zeros(shape, dtype)
    idx = np.arange(n)
    d[..., idx, idx] = np.arange(1, n + 1) * 1.5 + 0.2 * random_array(shape[:-1], dtype, rng)
    if n >= 2:  # a rotation-like block [[c, s], [-s, c]]: eigenvalues c ± i s
        d[..., 0, 1], d[..., 1, 0] = 1.0, -1.0
    return (x @ d @ np.linalg.inv(x)).astype(dtype)


def _sorted(w):
    return np.sort_complex(w.reshape(-1, w.shape[-1])).reshape(w.shape)


# ---- values ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 5, 5)])
def test_eig_value(shape, dtype):
    a = _separated(shape, dtype)
    w, v = tf.linalg.eig(a)
    cdt = COMPLEX_OF[np.dtype(dtype)]
    assert w.dtype == cdt and v.dtype == cdt
    assert w.shape == shape[:-1] and v.shape == shape
    tol = 1e-10 if cdt == np.complex128 else 1e-3
    np.testing.assert_allclose(_sorted(w.numpy()), _sorted(np.linalg.eig(a)[0]),
                               rtol=tol, atol=tol)
    # A V = V diag(λ) with unit-norm columns
    vn, wn = v.numpy(), w.numpy()
    np.testing.assert_allclose(a @ vn, vn * wn[..., None, :], rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1, rtol=tol)
    wv = tf.linalg.eigvals(a)
    assert wv.dtype == cdt
    np.testing.assert_allclose(_sorted(wv.numpy()), _sorted(wn), rtol=tol, atol=tol)


def test_real_input_with_complex_eigenvalues():
    # a rotation: eigenvalues cos t ± i sin t, eigenvectors complex
    t = 0.7
    a = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    w, v = tf.linalg.eig(a)
    np.testing.assert_allclose(_sorted(w.numpy()), np.sort_complex(np.exp([1j * t, -1j * t])))
    assert np.abs(v.numpy().imag).max() > 0.1


def test_methods_builders_and_result_names():
    a = _separated((3, 3))
    r = tf.tensor(a).eig()
    assert r._fields == ("values", "vectors")
    assert np.allclose(r.values.numpy(), tf.linalg.eig(a).values.numpy())
    assert np.allclose(tf.tensor(a).eigvals().numpy(), r.values.numpy())
    assert np.allclose(tf.eig_ad(a).run().vectors.numpy(), r.vectors.numpy())
    assert np.allclose(tf.linalg.eigvals_ad(a).run().numpy(), r.values.numpy())


# ---- derivatives -------------------------------------------------------------------------
# The eigenvectors are gauge dependent (a free phase per column), so their derivatives are
# checked through gauge-invariant maps: |V| (elementwise modulus), the reconstruction
# V diag(f(λ)) V⁻¹ (a matrix function of A, independent of the phases) and the values.

def _values_abs_vectors(x):
    w, v = tf.linalg.eig(x)
    return w, tf.abs(v)


def _reconstruct(x):
    # V diag(exp(λ/4)) V⁻¹ = expm(A/4): the eigenvector and eigenvalue paths both matter
    w, v = tf.linalg.eig(x)
    return tf.linalg.solve(v.mT, (v * tf.exp(w / 4)[..., None, :]).mT).mT


SHAPES = [(1, 1), (3, 3), (4, 4), (2, 3, 3)]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
def test_eig_grads_values_and_abs_vectors(shape, dtype):
    check_grads(_values_abs_vectors, [_separated(shape, dtype, seed=1)],
                modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_eig_grads_reconstruction(shape, dtype):
    check_grads(_reconstruct, [_separated(shape, dtype, seed=2)], modes=("rev", "fwd"),
                order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
def test_eigvals_grads(shape, dtype):
    check_grads(tf.linalg.eigvals, [_separated(shape, dtype, seed=3)],
                modes=("rev", "fwd"), order=2)
    # eig with a cotangent on the values only takes the same exact path
    check_grads(lambda x: tf.linalg.eig(x).values, [_separated(shape, dtype, seed=3)],
                modes=("rev", "fwd"), order=2)


def test_real_input_gradient_is_real():
    a = _separated((2, 4, 4), seed=4)
    x = tf.tensor(a, requires_grad=True)
    w, v = tf.linalg.eig(x)
    assert w.numpy().imag.any()   # complex eigenvalues: the pullback is complex
    g, = tf.grad([w, tf.abs(v)], [x], [random_array(w.shape, np.complex128, 5),
                                       random_array(v.shape, np.float64, 6)])
    assert g.dtype == np.float64
    # the real part of the complex pullback: compare with the complex-input gradient
    xc = tf.tensor(a.astype(np.complex128), requires_grad=True)
    wc, vc = tf.linalg.eig(xc)
    gc, = tf.grad([wc, tf.abs(vc)], [xc], [random_array(w.shape, np.complex128, 5),
                                           random_array(v.shape, np.float64, 6)])
    np.testing.assert_allclose(g.numpy(), gc.numpy().real, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_low_precision(dtype):
    a = _separated((2, 3, 3), dtype, seed=7)
    check_low_precision(_values_abs_vectors, [a])
    check_low_precision(tf.linalg.eigvals, [a])


def test_eigvals_skips_the_vectors_without_grad(monkeypatch):
    calls = []
    eig = eig_mod._lapack.eig
    monkeypatch.setattr(eig_mod._lapack, "eig",
                        lambda a, compute_v=True: calls.append(compute_v) or eig(a, compute_v))
    a = _separated((3, 3))
    tf.linalg.eigvals(a)
    tf.linalg.eigvals(tf.tensor(a, requires_grad=True))
    with tf.no_grad():
        tf.linalg.eigvals(tf.tensor(a, requires_grad=True))
    assert calls == [False, True, False]


# ---- gauge -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gauge_dependent_loss_raises(dtype):
    a = _separated((2, 3, 3), dtype, seed=8)
    x = tf.tensor(a, requires_grad=True)
    _, v = tf.linalg.eig(x)
    # a loss of the raw (complex) vectors depends on their phases
    cot = np.zeros(v.shape, np.complex128)
    cot[1, 2, 0] = 1j * v.numpy()[1, 2, 0]
    with pytest.raises(tf.GaugeError, match=r"matrix \(1,\) of the stack.*eigenvector 0"):
        tf.grad(v, [x], [cot])
    # opting out keeps the phase convention of the forward rule (V̇ of the JVP): the
    # gradient is finite and is the adjoint of that JVP, <Ā, Ȧ> = Re<V̄, V̇>
    x = tf.tensor(a, requires_grad=True)
    _, v = tf.linalg.eig(x, check_gauge=False)
    g, = tf.grad(v, [x], [cot])
    d = random_array(a.shape, dtype, rng=12)
    _, (_, tv) = tf.jvp(tf.linalg.eig, [a], [d])
    lhs = np.sum(np.conj(g.numpy()) * d).real
    np.testing.assert_allclose(lhs, np.sum(np.conj(cot) * tv.numpy()).real, rtol=1e-10)


def test_gauge_invariant_losses_pass_the_check():
    # |V|² column sums are phase invariant: no GaugeError, gradient finite
    x = tf.tensor(_separated((4, 4), np.complex128, seed=9), requires_grad=True)
    _, v = tf.linalg.eig(x)
    g, = tf.grad((tf.abs(v) ** 2 * np.arange(4.0)[:, None]).sum(), [x])
    assert np.isfinite(g.numpy()).all()


# ---- repeated eigenvalues ----------------------------------------------------------------

def _repeated():
    # eigenvalue 2 twice (diagonalizable), and 5
    x = np.array([[1.0, 0.2, 0.1], [0.3, 1.0, -0.2], [0.1, 0.4, 1.0]])
    return x @ np.diag([2.0, 2.0, 5.0]) @ np.linalg.inv(x)


def test_repeated_eigenvalues_values_only_is_finite():
    for a in (np.eye(3), _repeated()):
        x = tf.tensor(a, requires_grad=True)
        g1, = tf.grad(tf.real(tf.linalg.eigvals(x)).sum(), [x])
        g2, = tf.grad(tf.real(tf.linalg.eig(x).values).sum(), [x])
        # d(trace A) = I exactly, also at the degeneracy
        np.testing.assert_allclose(g1.numpy(), np.eye(3), atol=1e-10)
        np.testing.assert_allclose(g2.numpy(), np.eye(3), atol=1e-10)
        _, t = tf.jvp(tf.linalg.eigvals, [a], [random_array((3, 3), rng=10)])
        assert np.isfinite(t.numpy()).all()


def test_repeated_eigenvalues_vector_derivative_raises():
    a = _repeated()
    x = tf.tensor(a, requires_grad=True)
    w, v = tf.linalg.eig(x)
    with pytest.raises(tf.UnsupportedADError, match="eigenvalues . and . are equal"):
        tf.grad(tf.abs(v).sum(), [x])
    with pytest.raises(tf.UnsupportedADError, match="not differentiable"):
        tf.jvp(lambda y: tf.linalg.eig(y).vectors, [a], [random_array((3, 3), rng=11)])
    # a zero cotangent on the vectors (they are returned but unused) is fine
    x = tf.tensor(np.eye(3), requires_grad=True)
    w, v = tf.linalg.eig(x)
    g, = tf.grad([w, v], [x], [np.ones(3, complex), np.zeros((3, 3), complex)])
    np.testing.assert_allclose(g.numpy(), np.eye(3), atol=1e-12)


# ---- 0-size and errors -------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)])
def test_empty(shape):
    x = tf.tensor(np.zeros(shape), requires_grad=True)
    w, v = tf.linalg.eig(x)
    assert w.shape == shape[:-1] and v.shape == shape and v.dtype == np.complex128
    g, = tf.grad([w, v], [x], [np.ones(w.shape, complex), np.ones(v.shape, complex)])
    assert g.shape == shape and g.dtype == np.float64
    g, = tf.grad(tf.linalg.eigvals(x), [x], [np.ones(w.shape, complex)])
    assert g.shape == shape
    _, (tw, tv) = tf.jvp(tf.linalg.eig, [np.zeros(shape)], [np.zeros(shape)])
    assert tw.shape == w.shape and tv.shape == v.shape


@pytest.mark.parametrize("fn", [tf.linalg.eig, tf.linalg.eigvals])
def test_errors(fn, monkeypatch):
    recorded = record_calls(monkeypatch, eig_mod, "apply", "apply1")
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        fn(tf.tensor(np.ones(3), requires_grad=True))
    with pytest.raises(tf.ShapeError, match="square"):
        fn(tf.tensor(np.ones((2, 3, 4)), requires_grad=True))
    bad = np.eye(3)
    bad[0, 1] = np.inf
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        fn(tf.tensor(bad, requires_grad=True))
    with pytest.raises(tf.DTypeError):
        fn(np.eye(2).astype(object))
    assert recorded == []
    try:  # LAPACK sees the Inf: it may fail to converge, but no up-front check runs
        fn(bad, check_finite=False)
    except tf.LinAlgError as e:
        assert "check_finite" not in str(e)
    # integer input is float64, like numpy
    out = fn(np.array([[2, 0], [0, 3]]))
    assert (out.values if fn is tf.linalg.eig else out).dtype == np.complex128


# ---- shared reference derivatives (PyTorch 2.10 OpInfo samples) --------------------------

ORACLES = oracle_dir(__file__)
# every family of the two op folders: a gauge_ill_defined case (expected_behavior "error",
# no probes) would fail replay_oracle_case; tests/linalg/test_oracles_linalg.py replays those
EIG_CASES = load_oracle_cases(["eig"], ORACLES)
EIGVALS_CASES = load_oracle_cases(["eigvals"], ORACLES)


def test_oracle_cases_found():
    assert_oracle_cases_cover(EIG_CASES + EIGVALS_CASES,
                              {"eig": {"values_vectors_abs"}, "eigvals": {"identity"}}, ORACLES)
    assert len(EIG_CASES) >= 16 and len(EIGVALS_CASES) >= 16


@pytest.mark.parametrize("case", EIG_CASES, ids=oracle_case_id)
def test_oracle_eig(case):
    assert case["observable"]["kind"] in ("eig_values_vectors_abs", "identity")
    if case["observable"]["kind"] == "identity":
        replay_oracle_case(case, lambda x: tuple(tf.linalg.eig(x)), ["output_0", "output_1"])
    else:
        replay_oracle_case(case, _values_abs_vectors, ["values", "vectors"])


@pytest.mark.parametrize("case", EIGVALS_CASES, ids=oracle_case_id)
def test_oracle_eigvals(case):
    assert case["observable"]["kind"] == "identity"
    replay_oracle_case(case, tf.linalg.eigvals, ["value"])


# ---- repeated eigenvalues along a family that keeps them (issue 25) -----------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_invariant_loss_through_repeated_eigenvalues_to_second_order(dtype):
    # A(θ) = S(θ) diag(λ(θ)) S(θ)⁻¹ with λ = (2, 2, 5)·(1 + 0.3 sin θ): the eigenvalue 2
    # stays double. V diag(g(λ)) V⁻¹ = g(A) does not depend on the basis of the eigenspace,
    # so the vector cotangent couples the equal pair only at rounding level: the pair takes
    # the exact limit 0 (no UnsupportedADError) and first and second derivatives are exact
    rng = np.random.default_rng(41)
    s0 = np.eye(3) + 0.3 * random_array((3, 3), dtype, rng)
    k = 0.5 * random_array((3, 3), dtype, rng)
    c = random_array((3, 3), dtype, rng)
    lam = np.array([2.0, 2.0, 5.0])

    def a_of(theta):
        s = tf.linalg.matrix_exp(theta * tf.tensor(k)) @ tf.tensor(s0)
        w = (tf.tensor(lam) * (1 + 0.3 * tf.sin(theta))).astype(dtype)
        return (s * w) @ tf.linalg.inv(s)

    def through_eig(theta):
        w, v = tf.linalg.eig(a_of(theta))
        gw = w ** 3 - 0.5 * w ** 2
        return tf.real(tf.sum(((v * gw) @ tf.linalg.inv(v)) * tf.tensor(c)))

    def direct(theta):
        a = a_of(theta)
        return tf.real(tf.sum((a @ a @ a - 0.5 * a @ a) * tf.tensor(c)))

    def first(fn, theta):
        th = tf.tensor(theta, requires_grad=True)
        (g,) = tf.grad([fn(th)], [th])
        return float(g)

    def second(fn, theta):
        th = tf.tensor(theta, requires_grad=True)
        (g,) = tf.grad([fn(th)], [th], create_graph=True)
        (gg,) = tf.grad([g], [th])
        _, _, hv = tf.hvp(fn, [np.array(theta)], [np.array(1.0)])
        return [float(gg), float(hv[0])]

    theta0, h = 0.3, 1e-5
    w = np.linalg.eigvals(a_of(tf.tensor(theta0)).numpy())
    w = np.sort_complex(w)
    assert abs(w[0] - w[1]) < 1e-13 * abs(w).max()
    assert first(through_eig, theta0) == pytest.approx(first(direct, theta0), rel=1e-9)
    np.testing.assert_allclose(second(through_eig, theta0), second(direct, theta0),
                               rtol=1e-7)
    fd = (first(through_eig, theta0 + h) - first(through_eig, theta0 - h)) / (2 * h)
    np.testing.assert_allclose(second(through_eig, theta0), [fd, fd], rtol=1e-6)
    _, t = tf.jvp(through_eig, [np.array(theta0)], [np.array(1.0)])
    assert float(t) == pytest.approx(first(direct, theta0), rel=1e-9)


def test_basis_dependent_loss_at_repeated_eigenvalues_still_raises():
    # |V| depends on the basis of the eigenspace: above rounding, so the policy holds
    x = tf.tensor(_repeated(), requires_grad=True)
    w, v = tf.linalg.eig(x)
    i = int(np.argmin(np.abs(w.numpy() - 2.0)))        # a column of the double eigenvalue
    with pytest.raises(tf.UnsupportedADError, match="eigenvalues . and . are equal"):
        tf.grad(tf.abs(v[:, i]).sum(), [x])
    with pytest.raises(tf.UnsupportedADError, match="not differentiable"):
        tf.jvp(lambda y: tf.abs(tf.linalg.eig(y).vectors[:, i]).sum(), [_repeated()],
               [random_array((3, 3), rng=12)])
