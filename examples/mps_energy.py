"""Variational matrix product state for the transverse-field Ising chain, by L-BFGS.

The open chain of L spins

    H = -J sum_{i=1}^{L-1} Z_i Z_{i+1} - h sum_{i=1}^{L} X_i

is ferromagnetic for h < J, paramagnetic for h > J and critical at h = J. Its ground
state is approximated by a matrix product state (MPS) of bond dimension D,

    |psi> = sum_s A_1[s_1] A_2[s_2] ... A_L[s_L] |s_1 ... s_L>,

A_i[s] a (D_{i-1}, D_i) matrix with D_i = min(D, 2^i, 2^(L-i)) (larger bonds than that
add nothing). All the tensors, flattened into one NumPy vector, are the parameters of
the Rayleigh quotient E = <psi|H|psi> / <psi|psi>, which ``scipy.optimize.minimize``
(L-BFGS-B) minimises with the value and gradient from ``tf.value_and_grad`` (reverse
mode through every einsum). This is the variational MPS method (Verstraete, Porras and
Cirac, Phys. Rev. Lett. 93, 227205 (2004); review: Schollwöck, Ann. Phys. 326, 96
(2011)) with all tensors optimised at once by a quasi-Newton method, as in
differentiable programming of tensor networks (Liao, Liu, Wang and Xiang, Phys. Rev. X 9,
031041 (2019)); DMRG would instead optimise one tensor at a time by an eigensolver.

<psi|H|psi> is contracted left to right with H written as a matrix product operator of
bond dimension 3 (Schollwöck 2011, the MPO of the Ising chain): the cost is O(L D^3), and
the same sweep yields <psi|psi> (see ``rayleigh_quotient``).

The reference is exact: by the Jordan-Wigner transformation the chain is a quadratic
form in 2L Majorana operators, and its ground-state energy is minus the sum of the L
single-particle energies (Lieb, Schultz and Mattis, Ann. Phys. 16, 407 (1961); Pfeuty,
Ann. Phys. 57, 79 (1970)), here from ``scipy.linalg.eigh`` of a 2L x 2L matrix (see
``free_fermion_energy``). ``exact_diagonalization_energy`` checks it for small L.

In the ferromagnetic phase h < J the finite chain's ground state is the symmetric
superposition of the two magnetised states, split from the antisymmetric one by a gap
Lambda_1 ~ (h/J)^L (1.4e-6 at L = 20, h = 0.5). L-BFGS from a state without that symmetry
ends in one magnetised state instead (it needs about half the cat state's bond
dimension, and its energy is higher only by ~Lambda_1/2, so the gradient towards the
cat state is that small); the table prints Lambda_1 so that this floor of the error is
visible.

The last digits come slowly (``--plot`` shows the convergence): the gauge freedom
A_i -> A_i G, A_{i+1} -> G^{-1} A_{i+1} leaves E unchanged, so E is flat along D^2
directions per bond and ill-conditioned near them, which a quasi-Newton method over all
tensors at once does not remedy; DMRG's canonical forms fix the gauge instead.

The script checks itself: every run's relative error (E - E_exact) / |E_exact| must be
at least -1e-10 (the energy is variational: never below E_exact, up to rounding) and at
most RTOL = 1e-6 (``--rtol``; the docs' run at D = 4 takes 1e-5), plus the floor
Lambda_1 / (2 |E_exact|) where h < J. It prints a progress line every ``--progress``
(500) L-BFGS iterations with the elapsed time, says when a run stops at the iteration
cap (``--maxiter``) and whether its error is within the check then (stopping at the cap
is not itself a failure: the error is what is checked), and exits with status 1 when any
run is off. ``--quick`` (L = 8, D = 4, h = 1, 400 iterations, about 3 s) is what the
tests run.

Run time, measured 2026-12-06 with /usr/bin/time on a 2-core machine shared with other
jobs (load average ~12): the default (L = 20, D = 8, three h, 5000 iterations each, all
three stopping at the cap with relative errors 3e-9 .. 4e-8) 32.5 s of CPU time with one
thread, 3 min 20 s of wall time at that load (about the CPU time on an idle core); with
the default threads 123 s of CPU time and 9 min 35 s of wall time at that load, so run
it with OMP_NUM_THREADS=1 (its contractions are too small for threads to pay off); the
docs' run (L = 12, D = 4, two h, 800 iterations) 11 s of CPU time.

    python examples/mps_energy.py                     # L = 20, D = 8, h = 0.5, 1, 1.5
    python examples/mps_energy.py --L 10 20 40 --D 4 8 --h 1
    python examples/mps_energy.py --plot mps.png      # convergence of every run
"""
import argparse
import math
import sys
import time

import numpy as np
from scipy import linalg, optimize

import tenferro as tf

PAULI_X = np.array([[0.0, 1.0], [1.0, 0.0]])
PAULI_Z = np.array([[1.0, 0.0], [0.0, -1.0]])

# the self-check (module docstring): (E - E_exact) / |E_exact| within these, plus the
# floor Lambda_1 / (2 |E_exact|) of the broken symmetry (h < J)
RTOL = 1e-6           # the default run (L 20, D 8, 5000 iterations) reaches 3e-9..4e-8
RTOL_QUICK = 1e-5      # --quick (L 8, D 4, 400 iterations) reaches 6.6e-7


# ---- exact references -------------------------------------------------------------------

def single_particle_energies(L, h, J=1.0):
    """Pfeuty's single-particle energies Lambda_1 <= ... <= Lambda_L of the open chain.

    With a_j = (prod_{k<j} X_k) Z_j and b_j = (prod_{k<j} X_k) Y_j (Majorana operators,
    a^2 = b^2 = 1), X_j = i a_j b_j and Z_j Z_{j+1} = i b_j a_{j+1}, so
    H = i sum_{jk} a_j M_{jk} b_k with M_jj = -h and M_{j+1,j} = J (bidiagonal, L x L).
    A real orthogonal change of the a's and of the b's (the SVD of M) decouples it into
    L two-level systems i sigma_k a'_k b'_k of energies +-sigma_k: Lambda_k = 2 sigma_k.
    The singular values are the non-negative eigenvalues of the symmetric 2L x 2L matrix
    [[0, M], [M^T, 0]], whose spectrum is +-sigma_k; eigh of it is backward stable and
    needs no square root of M^T M's (possibly rounding-negative) eigenvalues.
    """
    m = np.diag(np.full(L, -float(h))) + np.diag(np.full(L - 1, float(J)), -1)
    zero = np.zeros((L, L))
    eigenvalues = linalg.eigh(np.block([[zero, m], [m.T, zero]]), eigvals_only=True)
    return 2.0 * np.abs(eigenvalues[L:])   # ascending; the upper half of +-sigma


def free_fermion_energy(L, h, J=1.0):
    """Exact ground-state energy E_0 = -(1/2) sum_k Lambda_k (Pfeuty 1970; every mode
    empty)."""
    return -0.5 * float(np.sum(single_particle_energies(L, h, J)))


def free_fermion_gap(L, h, J=1.0):
    """E_1 - E_0 = Lambda_1, the lowest mode filled. For h < J it is the splitting of the
    two nearly degenerate ferromagnetic states, ~ (h/J)^L: exponentially small."""
    return float(single_particle_energies(L, h, J)[0])


def dense_hamiltonian(L, h, J=1.0):
    """H as a dense 2^L x 2^L matrix in the Z basis (site 1 = most significant bit)."""
    states = np.arange(2 ** L)
    bits = (states[:, None] >> (L - 1 - np.arange(L))) & 1   # (2^L, L), 1 means Z = -1
    z = 1.0 - 2.0 * bits
    ham = np.diag(-J * np.sum(z[:, :-1] * z[:, 1:], axis=1))
    for i in range(L):   # X_i flips bit i
        ham[states, states ^ (1 << (L - 1 - i))] -= h
    return ham


def exact_diagonalization_energy(L, h, J=1.0):
    """Lowest eigenvalue of the dense Hamiltonian (feasible for L <= ~12)."""
    return linalg.eigh(dense_hamiltonian(L, h, J), eigvals_only=True,
                       subset_by_index=(0, 0))[0]


# ---- the MPS and its energy -------------------------------------------------------------

def bond_dimensions(L, D):
    """D_0 ... D_L: 1 at both ends, at most D, and at most the dimension of the smaller
    half of the chain (a larger bond would only carry redundant parameters)."""
    return [min(D, 2 ** i, 2 ** (L - i)) for i in range(L + 1)]


def site_shapes(L, D):
    dims = bond_dimensions(L, D)
    return [(dims[i], 2, dims[i + 1]) for i in range(L)]


def mpo(h, J=1.0):
    """The bulk MPO tensor W[w, v, t, s] (left bond, right bond, bra spin, ket spin).

    As an operator-valued 3 x 3 matrix, lower triangular:

        W = [[ 1,     0,   0],
             [ Z,     0,   0],
             [-h X, -J Z,  1]]

    Bond state 2 means "no term placed yet" (identities), 1 "a Z placed on the previous
    site, its partner comes now", 0 "the term is complete" (identities to the end). The
    chain starts in state 2 and ends in state 0, so H = W[2, :] W W ... W[:, 0] sums every
    -h X_i and -J Z_i Z_{i+1} once.
    """
    w = np.zeros((3, 3, 2, 2))
    w[0, 0] = np.eye(2)
    w[1, 0] = PAULI_Z
    w[2, 0] = -h * PAULI_X
    w[2, 1] = -J * PAULI_Z
    w[2, 2] = np.eye(2)
    return tf.tensor(w)


def unflatten(params, shapes):
    """Slices of the flat parameter vector, reshaped into the site tensors (differentiable:
    indexing and reshape record their pullbacks)."""
    tensors, offset = [], 0
    for shape in shapes:
        n = math.prod(shape)
        tensors.append(params[offset:offset + n].reshape(shape))
        offset += n
    return tensors


def rayleigh_quotient(tensors, w):
    """<psi|H|psi> / <psi|psi> for a real MPS, by one left-to-right sweep.

    The left environment env[a, w, b] (ket bond a, MPO bond w, bra bond b) absorbs one site
    per step: env'[c, v, d] = sum env[a, w, b] A[a, s, c] W[w, v, t, s] A[b, t, d], which
    einsum does in three pairwise contractions of O(D^3) each. Since column 2 of W is
    (0, 0, 1), env[:, 2, :] only ever multiplies identities: it is the environment of
    <psi|psi>. So the final env (1, 3, 1) holds <psi|H|psi> at w = 0 and <psi|psi> at
    w = 2. The environment is divided by its largest entry after every site, so long
    chains neither overflow nor underflow; the scale is a detached number because the
    quotient does not depend on it (the gradient is exact, not an approximation).
    """
    env = tf.tensor(np.array([0.0, 0.0, 1.0]).reshape(1, 3, 1))   # start in MPO state 2
    for a in tensors:
        env = tf.einsum("awb,asc,wvts,btd->cvd", env, a, w, a)
        env = env / float(np.max(np.abs(env.numpy())))
    return env[0, 0, 0] / env[0, 2, 0]


def mps_state_vector(tensors):
    """The 2^L amplitudes of the MPS (for tests on short chains)."""
    psi = np.ones((1, 1))
    for a in tensors:
        a = np.asarray(a)
        psi = np.einsum("pa,asc->psc", psi, a).reshape(-1, a.shape[2])
    return psi[:, 0]


def initial_parameters(L, D, seed):
    """Random site tensors near the product state |+>^L (the h -> infinity ground state):
    A[0, s, 0] = 1/sqrt 2 plus Gaussian noise of 0.1 everywhere, which fills the bond
    space: at an exact product state the gradient in every direction that uses a second bond
    state vanishes (its environments are zero), so the optimizer would stay at D = 1."""
    rng = np.random.default_rng(seed)
    parts = []
    for shape in site_shapes(L, D):
        a = 0.1 * rng.standard_normal(shape)
        a[0, :, 0] += 1.0 / math.sqrt(2.0)
        parts.append(a.ravel())
    return np.concatenate(parts)


def ground_state(L, D, h, J=1.0, maxiter=5000, seed=0, gtol=1e-10, history=None,
                 progress=0, exact=None):
    """Minimise the Rayleigh quotient; returns (energy, iterations, scipy result).

    history: a list that gets E after every iteration; progress: print a line every
    ``progress`` iterations (0: none) with E, its relative error against ``exact`` (when
    given) and the elapsed wall time."""
    shapes = site_shapes(L, D)
    w = mpo(h, J)

    def energy(params):
        return rayleigh_quotient(unflatten(params, shapes), w)

    t0 = time.perf_counter()

    # SciPy >= 1.11 passes the iteration's OptimizeResult (x and fun) to a callback whose
    # parameter is named intermediate_result: E costs no second evaluation
    def callback(intermediate_result):
        e = float(intermediate_result.fun)
        if history is not None:
            history.append(e)
        n = callback.n = callback.n + 1
        if progress and n % progress == 0:
            err = "" if exact is None else f", rel err {(e - exact) / abs(exact):.1e}"
            print(f"      iteration {n:>5}: E = {e:.12f}{err}, "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)

    callback.n = 0
    result = optimize.minimize(tf.value_and_grad(energy), initial_parameters(L, D, seed),
                               jac=True, method="L-BFGS-B", callback=callback,
                               options={"maxiter": maxiter, "maxcor": 30, "gtol": gtol,
                                        "ftol": 1e-15})
    return float(result.fun), int(result.nit), result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--L", type=int, nargs="+", default=[20])
    p.add_argument("--D", type=int, nargs="+", default=[8])
    p.add_argument("--h", type=float, nargs="+", default=[0.5, 1.0, 1.5])
    p.add_argument("--J", type=float, default=1.0)
    p.add_argument("--maxiter", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=RTOL,
                   help="the check: (E - E_exact) / |E_exact| <= this, plus (for h < J) "
                        "the floor Lambda_1 / (2 |E_exact|) of the broken symmetry")
    p.add_argument("--progress", type=int, default=500, metavar="N",
                   help="a progress line every N L-BFGS iterations (0: none)")
    p.add_argument("--quick", action="store_true",
                   help="L = 8, D = 4, h = 1, 400 iterations (about a second)")
    p.add_argument("--plot", metavar="PNG",
                   help="write (E - E_exact) / |E_exact| against the iteration")
    args = p.parse_args(argv)
    if args.quick:
        args.L, args.D, args.h, args.maxiter, args.rtol = [8], [4], [1.0], 400, RTOL_QUICK

    # the free-fermion formula against exact diagonalization on a short chain
    for h in args.h:
        ff, ed = free_fermion_energy(8, h, args.J), exact_diagonalization_energy(8, h, args.J)
        if abs(ff - ed) > 1e-10 * abs(ed):
            print(f"free fermions {ff} != exact diagonalization {ed} at L = 8: [FAILED]")
            return 1
    print("free-fermion energies agree with exact diagonalization at L = 8")
    print(f"checked: 0 <= (E - E_exact) / |E_exact| <= {args.rtol:g}, plus Lambda_1 / "
          "(2 |E_exact|) for h < J (the variational energy is never below E_exact; 'gap' "
          "is Lambda_1)")

    histories = {}
    failed = []
    start = time.perf_counter()
    print(f"{'L':>4} {'D':>3} {'h':>6} {'E_mps':>18} {'E_exact':>18} {'rel err':>9} "
          f"{'gap':>8} {'iters':>6} {'s':>7}")
    for L in args.L:
        for D in args.D:
            for h in args.h:
                exact = free_fermion_energy(L, h, args.J)
                gap = free_fermion_gap(L, h, args.J)
                hist = [] if args.plot else None
                t0 = time.perf_counter()
                e, nit, res = ground_state(L, D, h, args.J, args.maxiter, args.seed,
                                           history=hist, progress=args.progress,
                                           exact=exact)
                dt = time.perf_counter() - t0
                rel = (e - exact) / abs(exact)
                # in the ferromagnetic phase L-BFGS may end in one magnetised state,
                # Lambda_1 / 2 above the cat state (module docstring)
                bound = args.rtol + (gap / (2 * abs(exact)) if h < args.J else 0.0)
                # variational: never below E_0 (up to rounding), and within the bound
                ok = math.isfinite(e) and -1e-10 <= rel <= bound
                print(f"{L:>4} {D:>3} {h:>6.3f} {e:>18.12f} {exact:>18.12f} {rel:>9.1e} "
                      f"{gap:>8.1e} {nit:>6} {dt:>7.1f} {'' if ok else '[FAILED]'}",
                      flush=True)
                if nit >= args.maxiter:
                    print(f"      stopped at the iteration cap ({args.maxiter}) before "
                          f"converging: rel err {rel:.1e} "
                          f"{'is within' if ok else 'is NOT within'} the check's {bound:.1e}"
                          f" ({'not a failure' if ok else 'a failure'})", flush=True)
                if not ok:
                    failed.append((L, D, h))
                if hist is not None:
                    histories[L, D, h] = (np.array(hist), exact)
    print(f"total {time.perf_counter() - start:.1f} s")
    if args.plot:
        _plot(args.plot, histories)
    if failed:
        print(f"energy below the exact one, not finite or off by more than the tolerance "
              f"at (L, D, h) = {failed}: [FAILED]")
        return 1
    print("every variational energy within tolerance of the free-fermion energy: [OK]")
    return 0


def _plot(path, histories):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed; no plot (pip install matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for (L, D, h), (hist, exact) in histories.items():
        rel = np.maximum((hist - exact) / abs(exact), 1e-16)   # log scale: clip at rounding
        ax.semilogy(np.arange(1, len(hist) + 1), rel,
                    label=f"L={L} D={D} h={h:g}")
    ax.set_xlabel("L-BFGS iteration")
    ax.set_ylabel("(E - E_exact) / |E_exact|")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
