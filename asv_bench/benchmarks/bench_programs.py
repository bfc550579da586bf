"""Programs that are Python loops of many small ops (issue 27), tenferro only, one thread.

  kalman     the exact negative log-likelihood of a linear-Gaussian state-space model by
             the Kalman filter (state 4, observations 2, T steps of ~26 small ops each:
             matmuls with NumPy constants on either side, cholesky of the 2x2 innovation
             covariance, solve_triangular with a vector, solve with a 2x4 right-hand
             side, diagonal, log, sum), written the way a NumPy user writes it; its value
             and gradient in the 10 model parameters (tf.value_and_grad), its 10x10
             Hessian (tf.hessian), and the maximum-likelihood fit by
             scipy.optimize.minimize(..., method="L-BFGS-B", jac=True)
  ctmrg      the free energy per site ln Z / N of the 2D Ising model by a C4v-symmetric
             corner transfer matrix renormalization group (Nishino and Okunishi 1996;
             Orús and Vidal 2009), bond dimension chi, a fixed number of unrolled steps
             (no fixed-point differentiation), and its derivative in beta (minus the
             internal energy), as in Liao et al., Phys. Rev. X 9, 031041 (2019)

The asv classes run a small size (about a second or less each, for CI's one-shot run)
and, where it stays under a second, the size of issue 27 (Kalman T = 300; CTMRG chi 16,
400 steps). scripts/bench_peers.py ``programs`` times the same functions (loaded from
this file) at the full sizes beside PyTorch and JAX and checks that all three agree.

    python asv_bench/benchmarks/bench_programs.py          # check + median times, full size
"""
import math
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402
from scipy import optimize, special  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


# ---- the Kalman filter ------------------------------------------------------------------
# x_t = F x_{t-1} + N(0, Q),  y_t = H x_t + N(0, R),  x_0 ~ N(0, I).
# theta (10): F = diag(tanh(theta[:4])) @ F0 with F0 a fixed rotation (so |F| < 1 and the
# filter stays stable wherever the optimizer steps), Q = diag(exp(theta[4:8])),
# R = diag(exp(theta[8:10])). H, F0, the data and the initial state are NumPy constants.

NX, NY = 4, 2
F0 = sla.expm(np.array([[0.0, 0.1, 0.0, 0.05], [-0.1, 0.0, 0.02, 0.0],
                        [0.0, -0.02, 0.0, 0.3], [-0.05, 0.0, -0.3, 0.0]]))
H = np.array([[1.0, 0.0, 0.5, 0.0], [0.0, 1.0, 0.0, 0.3]])
THETA_TRUE = np.array([*np.arctanh([0.8, 0.7, 0.9, 0.6]), -1.0, -1.5, -0.5, -2.0, -1.0, -1.5])
THETA0 = np.array([0.5, 0.5, 0.5, 0.5, -1.0, -1.0, -1.0, -1.0, -0.5, -0.5])  # start of the fit


def kalman_data(steps, seed=0):
    """Observations (steps, 2) simulated from the model at THETA_TRUE."""
    rng = np.random.default_rng(seed)
    F = np.tanh(THETA_TRUE[:4])[:, None] * F0
    q, r = np.exp(THETA_TRUE[4:8]), np.exp(THETA_TRUE[8:])
    x, ys = np.zeros(NX), np.empty((steps, NY))
    for t in range(steps):
        x = F @ x + np.sqrt(q) * rng.standard_normal(NX)
        ys[t] = H @ x + np.sqrt(r) * rng.standard_normal(NY)
    return ys


def kalman_nll(theta, ys):
    """-log p(y_1..y_T | theta) by the Kalman filter; theta a Tensor (10,), ys an ndarray."""
    F = tf.tanh(theta[:4])[:, None] * F0
    Q = tf.diag(tf.exp(theta[4:8]))
    R = tf.diag(tf.exp(theta[8:10]))
    m, P = np.zeros(NX), np.eye(NX)
    nll = 0.5 * ys.size * math.log(2 * math.pi)
    for y in ys:
        m = F @ m                                        # predict
        P = F @ P @ F.T + Q
        v = y - H @ m                                    # innovation and its covariance
        HP = H @ P
        S = HP @ H.T + R
        L = tf.linalg.cholesky(S)
        w = tf.linalg.solve_triangular(L, v, lower=True)
        nll = nll + 0.5 * (w @ w) + tf.log(tf.diagonal(L)).sum()
        K = tf.linalg.solve(S, HP).T                     # gain P Hᵀ S⁻¹ (S symmetric)
        m = m + K @ v                                    # update
        P = P - K @ HP
    return nll


def kalman_value_and_grad(ys, compiled=False):
    """NumPy in, NumPy out: ``theta -> (nll, gradient)`` for scipy.optimize; with
    ``compiled``, of ``tf.compile`` of the NLL (recorded on the first call, replayed)."""
    nll = lambda theta: kalman_nll(theta, ys)  # noqa: E731
    return tf.value_and_grad(tf.compile(nll) if compiled else nll)


def kalman_hessian(ys):
    return tf.hessian(lambda theta: kalman_nll(theta, ys))


def kalman_fit(ys, vg=None):
    """The maximum-likelihood fit from THETA0 (scipy's L-BFGS-B, default tolerances)."""
    return optimize.minimize(kalman_value_and_grad(ys) if vg is None else vg, THETA0,
                             jac=True, method="L-BFGS-B")


# ---- CTMRG of the 2D Ising model --------------------------------------------------------
# a[u, l, d, r] = sum_s W[s,u] W[s,l] W[s,d] W[s,r] with W Wᵀ = exp(beta [[1,-1],[-1,1]])
# (fully symmetric in its four legs). Corner C (chi, chi) and edge T (chi, 2, chi), both
# symmetric; one step: M = the corner enlarged by two edges and a, reshaped to
# (2 chi, 2 chi); P = its first chi left singular vectors; C <- Pᵀ M P,
# T <- Pᵀ (T a) P, each divided by its norm. ln Z / N = ln(z1 z4 / z2²) with z1 the full
# one-site network, z4 = Tr C⁴ and z2 the ring of four corners and two edges.

BETA = 0.4         # disordered phase, 0.04 below beta_c = ln(1 + sqrt 2) / 2


def ising_tensor(beta):
    c, s = tf.sqrt(tf.cosh(beta)), tf.sqrt(tf.sinh(beta))
    W = tf.stack([tf.stack([c, s]), tf.stack([c, -s])])
    return tf.einsum("su,sl,sd,sr->uldr", W, W, W, W)


def ctmrg_lnz(beta, chi, steps):
    """ln Z / N of the Ising model at inverse temperature ``beta`` (a rank-0 Tensor)."""
    a = ising_tensor(beta)
    C = tf.einsum("uldr->dr", a)
    T = tf.einsum("uldr->ldr", a)
    for _ in range(steps):
        k = C.shape[0]
        M = tf.einsum("xy,yub,xla,uldr->adbr", C, T, T, a).reshape(2 * k, 2 * k)
        U, _, _ = tf.linalg.svd(M)
        P = U[:, :chi]
        C = P.T @ M @ P
        Ta = tf.einsum("xlz,uldk->xukzd", T, a).reshape(2 * k, 2, 2 * k)
        T = tf.einsum("ia,ikj,jb->akb", P, Ta, P)
        C = C / tf.linalg.norm(C)
        T = T / tf.linalg.norm(T)
    z1 = tf.einsum("ab,bic,cd,dje,ef,fkg,gh,hla,ijkl->", C, T, C, T, C, T, C, T, a)
    z4 = tf.einsum("ab,bc,cd,da->", C, C, C, C)
    z2 = tf.einsum("ab,bic,cd,de,eif,fa->", C, T, C, C, T, C)
    return tf.log(z1) + tf.log(z4) - 2 * tf.log(z2)


ctmrg_lnz_compiled = tf.compile(ctmrg_lnz)    # beta traced; chi and steps static


def ctmrg_value_and_grad(beta, chi, steps, compiled=False):
    """(ln Z / N, d(ln Z / N)/d beta) as floats (``compiled``: by tf.compile's replay)."""
    b = tf.tensor(beta, requires_grad=True)
    lnz = (ctmrg_lnz_compiled if compiled else ctmrg_lnz)(b, chi, steps)
    (g,) = tf.grad([lnz], [b])
    return lnz.item(), g.item()


def onsager_energy(beta):
    """Onsager's internal energy per site u = -d(ln Z/N)/d beta (J = 1, no field)."""
    k = 2 * math.sinh(2 * beta) / math.cosh(2 * beta) ** 2
    t = math.tanh(2 * beta)
    return -(1 + 2 / math.pi * (2 * t * t - 1) * special.ellipk(k * k)) / t


# ---- asv --------------------------------------------------------------------------------

class Kalman:
    """Value and gradient of the Kalman NLL in its 10 parameters (T = 10 and 300)."""
    params = [[10, 300]]
    param_names = ["steps"]

    def setup(self, steps):
        self.vg = kalman_value_and_grad(kalman_data(steps))

    def time_value_and_grad(self, steps):
        self.vg(THETA0)


class KalmanCompiled:
    """Value and gradient by tf.compile's replay (T = 10 and 300; recorded in setup)."""
    params = [[10, 300]]
    param_names = ["steps"]

    def setup(self, steps):
        self.vg = kalman_value_and_grad(kalman_data(steps), compiled=True)
        self.vg(THETA0)

    def time_value_and_grad(self, steps):
        self.vg(THETA0)

    def time_fit(self, steps):
        """The L-BFGS-B fit with a fresh tf.compile (its recording included)."""
        kalman_fit(None, kalman_value_and_grad(kalman_data(steps), compiled=True))


class KalmanSecondOrder:
    """The 10x10 Hessian (tf.hessian) and the L-BFGS-B fit at T = 10; the full T = 300
    take tens of seconds: scripts/bench_peers.py programs times them."""
    params = [[10]]
    param_names = ["steps"]
    timeout = 300

    def setup(self, steps):
        self.ys = kalman_data(steps)
        self.hess = kalman_hessian(self.ys)
        self.vg = kalman_value_and_grad(self.ys)

    def time_hessian(self, steps):
        self.hess(THETA0)

    def time_fit(self, steps):
        kalman_fit(self.ys, self.vg)


class CTMRG:
    """ln Z / N of the 2D Ising model and its beta derivative (chi 8, 20 steps; chi 16,
    400 steps)."""
    params = [["8x20", "16x400"]]
    param_names = ["chi x steps"]
    timeout = 300

    def setup(self, size):
        self.chi, self.steps = map(int, size.split("x"))
        ctmrg_value_and_grad(BETA, self.chi, self.steps, compiled=True)   # records

    def time_value_and_grad(self, size):
        ctmrg_value_and_grad(BETA, self.chi, self.steps)

    def time_value_and_grad_compiled(self, size):
        """By tf.compile's replay (recorded in setup)."""
        ctmrg_value_and_grad(BETA, self.chi, self.steps, compiled=True)


def _check():
    """The programs compute what they claim (exit status 1 otherwise)."""
    ys = kalman_data(300)
    val, g = kalman_value_and_grad(ys)(THETA0)
    h = 1e-6
    fd = np.array([(kalman_nll(tf.tensor(THETA0 + h * e), ys).item()
                    - kalman_nll(tf.tensor(THETA0 - h * e), ys).item()) / (2 * h)
                   for e in np.eye(10)])
    ok = np.allclose(g, fd, rtol=1e-6, atol=1e-5)
    print(f"kalman T=300: nll {val:.10f}, gradient vs central differences: "
          f"max |diff| {np.abs(g - fd).max():.2e} {'ok' if ok else 'WRONG'}")
    lnz, dlnz = ctmrg_value_and_grad(BETA, 16, 400)
    u = onsager_energy(BETA)
    ok_u = abs(-dlnz - u) < 1e-4
    print(f"ctmrg chi 16, 400 steps, beta {BETA}: ln Z/N {lnz:.10f}, u = {-dlnz:.8f}, "
          f"Onsager {u:.8f} {'ok' if ok_u else 'WRONG'}")
    return ok and ok_u


if __name__ == "__main__":
    import time
    good = _check()
    ys = kalman_data(300)
    for label, fn in [("kalman T=300 value+grad", lambda: kalman_value_and_grad(ys)(THETA0)),
                      ("ctmrg chi 16 x 400 value+grad",
                       lambda: ctmrg_value_and_grad(BETA, 16, 400))]:
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        print(f"{label}: median {np.median(ts) * 1e3:.1f} ms of 5")
    sys.exit(0 if good else 1)
