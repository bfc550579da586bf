"""examples/ipeps_heisenberg.py's variational iPEPS in PyTorch, for timing comparisons only
(never imported by tenferro or its tests; not run in CI).

The same algorithm, step for step: the C4v basis, the Hamiltonian, the warm start and the
sign gauge are the example's (NumPy); the CTMRG step, the double layer and the bond energy
are written in torch ops; the environment is iterated on plain values to the same
stopping test (‖x_k+1 - x_k‖ <= rtol ‖x_k+1‖, rtol = 1e-10, from the previous
environment), and the gradient is the implicit one of the fixed point, written by hand:
with G(x, θ) = gauge(step(x, θ)) (the signs fixed at x*),

    (I - ∂G/∂x)ᵀ λ = ∂E/∂x,   dE/dθ = ∂E/∂θ + (∂G/∂θ)ᵀ λ,

the adjoint system solved by scipy's gmres (relative tolerance 1e-12, restart 50) on
torch.autograd.grad vector-Jacobian products, as tf.fixed_point does for n > 200
unknowns. torch.linalg.eigh's own backward is used (no broadening: the kept eigenvalues
of this problem are not degenerate, and the result is checked for finiteness).

    OMP_NUM_THREADS=1 python scripts/ipeps_torch.py            # prints E and the time
"""
import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize
from scipy.sparse.linalg import LinearOperator, gmres

import torch

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def _example():
    path = Path(__file__).resolve().parent.parent / "examples" / "ipeps_heisenberg.py"
    spec = importlib.util.spec_from_file_location("_ipeps_heisenberg", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ex = _example()
D, PHYS = ex.D, ex.PHYS
BASIS = torch.from_numpy(ex.BASIS)
H_BOND = torch.from_numpy(ex.H_BOND)


def site_tensor(theta):
    return (BASIS @ theta).reshape(PHYS, D, D, D, D)


def double_layer(a_site):
    return torch.einsum("suldr,sULDR->uUlLdDrR", a_site, a_site).reshape((D * D,) * 4)


def unpack(x, chi):
    return x[:chi], x[chi:].reshape(chi, D * D, chi)


def pack(c, t):
    return torch.cat([c, t.reshape(-1)])


def ctm_step(x, theta, chi):
    c, t = unpack(x, chi)
    a = double_layer(site_tensor(theta))
    m = torch.einsum("a,api,aqj,pquv->iujv", c, t, t, a).reshape(chi * D * D, chi * D * D)
    w, u = torch.linalg.eigh(0.5 * (m + m.mT))
    wv = w.detach().numpy()
    keep = torch.from_numpy(np.lexsort((-wv, -np.abs(wv)))[:chi].copy())
    p = u[:, keep].reshape(chi, D * D, chi)
    c_new = w[keep]
    t_new = torch.einsum("api,aqb,uqvp,bvj->iuj", p, t, a, p)
    t_new = 0.5 * (t_new + t_new.permute(2, 1, 0))
    return pack(c_new / torch.linalg.norm(c_new), t_new / torch.linalg.norm(t_new))


def gauge_signs(x, chi):
    """The example's sign_gauge's signs (computed on NumPy values)."""
    t = x.detach().numpy()[chi:].reshape(chi, D * D, chi)
    v = ex._pivot(t, axis=1)
    nonzero = np.abs(v) > 1e-8 * np.abs(v).max()
    s = np.zeros(chi)
    s[0] = 1.0
    while not s.all():
        progress = False
        for i in np.flatnonzero(s == 0):
            fixed = np.flatnonzero((s != 0) & nonzero[i])
            if fixed.size:
                s[i] = np.sign(v[i, fixed[0]]) * s[fixed[0]]
                progress = True
        if not progress:
            s[s == 0] = 1.0
    return torch.from_numpy(s)


def apply_gauge(x, s, chi):
    c, t = unpack(x, chi)
    return pack(c, t * s[:, None, None] * s[None, None, :])


def bond_energy(x, theta, chi):
    c, t = unpack(x, chi)
    a_site = site_tensor(theta)
    t4 = t.reshape(chi, D, D, chi)
    half = torch.einsum("a,f,aUVb,aLMf,fPQe,sULPr,tVMQq->bsterq",
                        c, c, t4, t4, t4, a_site, a_site)
    rho = torch.einsum("bsterq,bSTerq->sStT", half, half)
    norm = torch.einsum("sSsS->", rho)
    return 2 * torch.sum(rho * H_BOND) / norm


class Energy:
    """Value and implicit gradient of E(theta), warm-started from the last environment."""

    def __init__(self, chi, rtol=1e-10, max_iter=2000):
        self.chi, self.rtol, self.max_iter = chi, rtol, max_iter
        self.x = None
        self.calls = 0

    def fixed_point(self, theta):
        chi = self.chi
        x = torch.from_numpy(self.x if self.x is not None
                             else ex.start_environment(theta.numpy(), chi))
        with torch.no_grad():
            for _ in range(self.max_iter):
                y = ctm_step(x, theta, chi)
                y = apply_gauge(y, gauge_signs(y, chi), chi)
                if not torch.isfinite(y).all():
                    raise FloatingPointError("non-finite CTMRG iterate")
                done = torch.linalg.norm(y - x) <= self.rtol * torch.linalg.norm(y)
                x = y
                if done:
                    return x
        raise RuntimeError(f"no CTMRG fixed point in {self.max_iter} iterations")

    def __call__(self, theta_np):
        self.calls += 1
        chi = self.chi
        theta = torch.tensor(theta_np, requires_grad=True)
        x_star = self.fixed_point(theta.detach())
        self.x = x_star.numpy().copy()
        xs = x_star.clone().requires_grad_(True)
        e = bond_energy(xs, theta, chi)
        de_dx, de_dth = torch.autograd.grad(e, (xs, theta))
        y = ctm_step(xs, theta, chi)
        g = apply_gauge(y, gauge_signs(y, chi), chi)
        n = xs.numel()

        def rmatvec(lam):       # (I - ∂G/∂x)ᵀ λ
            (jt,) = torch.autograd.grad(g, xs, torch.from_numpy(lam), retain_graph=True)
            return lam - jt.numpy()

        op = LinearOperator((n, n), matvec=rmatvec, dtype=np.float64)
        b = de_dx.numpy()
        lam, info = gmres(op, b, rtol=1e-12, atol=0.0, restart=min(n, 50), maxiter=n)
        if info != 0:
            raise RuntimeError(f"gmres: info {info}")
        (gth,) = torch.autograd.grad(g, theta, torch.from_numpy(lam))
        grad = (de_dth + gth).numpy()
        if not np.isfinite(grad).all():
            raise FloatingPointError("non-finite gradient")
        return float(e.detach()), grad


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chi", type=int, default=16)
    p.add_argument("--maxiter", type=int, default=200)
    args = p.parse_args(argv)
    energy = Energy(args.chi)
    t0 = time.perf_counter()
    nit = [0]

    def report(theta):
        nit[0] += 1

    res = optimize.minimize(energy, ex.pair_flip_state(), jac=True, method="L-BFGS-B",
                            callback=report,
                            options=dict(maxiter=args.maxiter, ftol=ex.FTOL, gtol=ex.GTOL))
    dt = time.perf_counter() - t0
    err = abs(res.fun - ex.E_PUBLISHED)
    print(f"torch {torch.__version__}: E = {res.fun:.15f} ({err:.1e} from the published "
          f"value), {nit[0]} iterations, {energy.calls} energy evaluations, {dt:.2f} s "
          f"({res.message})")
    return 0 if err <= ex.E_TOL else 1


if __name__ == "__main__":
    sys.exit(main())
