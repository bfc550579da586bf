"""svd's derivative at exactly repeated singular values (RULES.md svd; _kernels/spectral.pyx).

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
from tenferro.testing import check_grads

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
