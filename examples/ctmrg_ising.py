"""The 2D Ising model by the corner transfer matrix renormalization group, differentiated
through its fixed point.

The corner transfer matrix renormalization group (CTMRG; Nishino and Okunishi, J. Phys.
Soc. Jpn. 65, 891 (1996)) of the infinite square-lattice Ising model (J = 1, no field)
with C4v symmetry has a diagonal corner C (chi values) and an edge T (chi x 2 x chi). One
step grows the corner by two edges and a site into M (2chi x 2chi), keeps the chi
eigenvectors P of M with the largest |eigenvalue| (C <- those eigenvalues,
T <- P^T (T a) P) and normalises both. The environment is the fixed point of that step,
found by ``tf.fixed_point`` with a sign ``gauge`` (the eigenvectors' signs are free), and
ln Z / N = ln kappa with kappa = Z(C^4 T^4 a) Z(C^4) / Z(C^4 T^2)^2. The internal energy
and the specific heat are its derivatives in the inverse temperature beta, taken through
the fixed point by the implicit function theorem (no unrolling of the iteration):

    u = -d(ln Z/N)/d beta           (tf.grad with create_graph=True)
    c = beta^2 d^2(ln Z/N)/d beta^2 (a second tf.grad)

The choices of the step (which eigenpairs to keep: tf.argsort; the signs: tf.argmax and
tf.sign) are tenferro ops, so ``fixed_point(..., compile=True)`` records the step once and
replays it at every iteration with the new choices (docs/guide/compile.md): the same
iterates as the eager step, bit for bit, in about 0.6x its time (chi 16: the iteration
19 ms instead of 32 ms). ``maps(chi)`` keeps the step and the gauge as the same
function objects, with which fixed_point keeps the recording for the next call.

The iteration starts from boundary spins all up, so in the ordered phase (beta > beta_c)
it converges to the magnetised environment; a symmetric start would leave pairs of equal
eigenvalues at the truncation and no convergence.

The implicit derivative against unrolling: at one beta (``--unrolled-beta``, default 0.40,
at the first chi) the script also back-propagates through as many recorded steps as the
iteration took, and prints u, the time and the peak memory (tracemalloc) of both; the two
u must agree to UNROLLED_RTOL = 1e-8. Measured at chi 8, beta 0.40 (130 steps): u equal to
2e-16, 0.20 s vs 0.24 s, 0.6 MiB vs 7.0 MiB: unrolling keeps every step's graph, the
implicit derivative one step's.

The script checks itself: at each beta it compares ln Z/N, u and c with Onsager's exact
solution (examples/trg_ising.py's quadrature and closed forms), and u with a 5-point
central difference of the computed ln Z/N (the derivative of what was computed, exact up
to the iteration's tolerance), and exits with status 1 when, at a beta at least
NEAR_BETA_C = 0.008 from beta_c = ln(1 + sqrt 2)/2, |ln Z/N err| > LNZ_TOL = 1e-6,
|u err| > U_TOL = 1e-4, c's relative error > C_RTOL = 2e-3, or the relative difference of
u and its difference quotient > FD_RTOL = 1e-7. Measured at chi 8 (the worst case):
ln Z/N within 4e-8, u within 1e-5, c within 3.5e-4 at beta = 0.43; within 1.5e-9, 5e-7,
3e-5 at 0.40 and 0.45, and the difference quotient within 2e-11 everywhere; at chi 12
within 6e-10, 2e-7, 1e-5. Next to beta_c the iteration slows down (a correlation length
that chi cannot hold): at chi 12 and 16 the default tolerance is not reached in 5000
iterations at beta_c, and fixed_point's LinAlgError says so (the steps shrink by 0.998
per iteration, about 3000 more needed): such points are printed, not checked.

A chi larger than the phase needs does not converge either: deep in a phase (chi 16 at
beta >= 0.50, chi 12 at 0.55) the smallest kept corner eigenvalues are 1e-20 of the
largest, their eigenvectors are rounding noise, and the steps stall at 1e-8..1e-6
(fixed_point's error reports the stall and the rtol it would take). Those states do not
change ln Z/N; a smaller chi (or dropping such states) is the cure.

Run time (one thread, a shared machine): chi 8 about 0.5 s a beta (the iteration 0.1 s,
u 0.15 s, c 0.3 s), chi 12 about 1 s, plus the difference quotients (4 more fixed points).
The default run, measured 2026-12-06 with /usr/bin/time on the 2-core machine shared with
other jobs (load average ~12): 10.2 s of CPU time with one thread (10.5 s with the
default threads), 64 s (83 s) of wall time at that load; every beta prints its row with
its time as it finishes.

    python examples/ctmrg_ising.py                         # chi 8 and 12, 6 betas
    python examples/ctmrg_ising.py --chi 8 --betas 0.40 0.48
    python examples/ctmrg_ising.py --chi 16 --betas 0.45 --rtol 1e-12   # a tighter test
"""
import argparse
import functools
import importlib.util
import math
import sys
import time
from pathlib import Path

import numpy as np

import tenferro as tf

BETA_C = math.log(1.0 + math.sqrt(2.0)) / 2.0

# the self-check (module docstring)
LNZ_TOL = 1e-6        # |ln Z/N - exact|
U_TOL = 1e-4          # |u - u_exact|
C_RTOL = 2e-3         # |c - c_exact| / c_exact
FD_RTOL = 1e-7        # |u + d(ln Z/N)/d beta by differences| / |u|
UNROLLED_RTOL = 1e-8  # |u implicit - u unrolled (as many steps as the iteration)| / |u|
NEAR_BETA_C = 0.008   # |beta - beta_c| below which nothing is checked
MAX_ITER = 5000       # fixed_point's iteration cap


def _onsager():
    """Onsager's ln Z/N, u and c: examples/trg_ising.py's (one copy of them)."""
    path = Path(__file__).resolve().parent / "trg_ising.py"
    spec = importlib.util.spec_from_file_location("_trg_ising_exact", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.exact_ln_z, mod.exact_energy, mod.exact_specific_heat


exact_ln_z, exact_energy, exact_specific_heat = _onsager()


# ---- the CTMRG step ------------------------------------------------------------------

def ising_site(beta):
    """The site tensor a[u,l,d,r] = sum_s W[s,u] W[s,l] W[s,d] W[s,r] and W, whose
    W W^T = exp(beta s s') is the bond weight (rows: spin up, spin down)."""
    c, s = tf.sqrt(tf.cosh(beta)), tf.sqrt(tf.sinh(beta))
    w = tf.stack([tf.stack([c, s]), tf.stack([c, -s])])
    return tf.einsum("su,sl,sd,sr->uldr", w, w, w, w), w


def unpack(x, chi):
    """x holds the corner's diagonal (chi) and the edge (chi, 2, chi)."""
    return x[:chi], x[chi:].reshape((chi, 2, chi))


def pack(c, t):
    return tf.concat([c, t.reshape((-1,))])


def ctm_step(x, beta, chi):
    c, t = unpack(x, chi)
    a, _ = ising_site(beta)
    m = tf.einsum("a,api,aqj,pquv->iujv", c, t, t, a).reshape((2 * chi, 2 * chi))
    w, u = tf.linalg.eigh(0.5 * (m + m.mT))
    # which eigenvectors to keep is a choice made on the values (an integer tensor: no
    # derivative, like the signs of the gauge); made with tenferro ops, tf.fixed_point's
    # compiled step makes it anew at each iteration
    keep = tf.argsort(tf.abs(w), descending=True)[:chi]
    p = u[:, keep].reshape((chi, 2, chi))
    c_new = w[keep]
    t_new = tf.einsum("api,aqb,uqvp,bvj->iuj", p, t, a, p)
    t_new = 0.5 * (t_new + tf.permute_dims(t_new, (2, 1, 0)))
    return pack(c_new / tf.linalg.norm(c_new), t_new / tf.linalg.norm(t_new))


def sign_gauge(x, beta, chi):
    """The eigenvectors' signs s act as T -> S T S (C, diagonal, does not change): s_i is
    the sign of the largest-magnitude entry of T[i, :, 0] (T[0, :, 0] is invariant, so
    the choice is canonical)."""
    c, t = unpack(x, chi)
    col = t[:, :, 0]
    s = tf.sign(col[np.arange(chi), tf.argmax(tf.abs(col), axis=1)])   # derivative 0
    s = s + (1.0 - s * s)              # 1 where the row is 0 (any sign would do)
    return pack(c, t * s[:, None, None] * s[None, None, :])


def start(beta, chi):
    """C = e_0, T[0, :, 0] = W[up, :] (a boundary of up spins), plus a little noise that
    fills the other states."""
    _, w = ising_site(tf.as_tensor(beta))
    c = np.zeros(chi)
    c[0] = 1.0
    t = np.zeros((chi, 2, chi))
    t[0, :, 0] = w.numpy()[0]
    noise = np.random.default_rng(0).standard_normal((chi, 2, chi))
    t += 1e-3 * (noise + noise.transpose(2, 1, 0))
    return np.concatenate([c, t.ravel()])


def ln_kappa(x, beta, chi):
    """ln Z/N = ln[Z(C^4 T^4 a) Z(C^4) / Z(C^4 T^2)^2]: scale and gauge invariant."""
    c, t = unpack(x, chi)
    a, _ = ising_site(beta)
    env = tf.einsum("a,apc,c,cqe,e,erg,g,gsa->pqrs", c, t, c, t, c, t, c, t)
    z_site = tf.sum(env * a)
    z_corners = tf.sum(c ** 4)
    z_edges = tf.einsum("a,apc,c,c,cpa,a->", c, t, c, c, t, c)
    return tf.log(z_site * z_corners / z_edges ** 2)


@functools.lru_cache(maxsize=None)
def maps(chi):
    """The step and the gauge at chi, the same function objects for every call (so that
    fixed_point's compiled step, kept with them, is recorded once per chi)."""
    return (lambda x, b: ctm_step(x, b, chi)), (lambda x, b: sign_gauge(x, b, chi))


def ctmrg_ln_z(beta, chi, rtol=None, max_iter=MAX_ITER, compile=True):
    """ln Z/N at beta (a float or a Tensor to differentiate in); rtol: fixed_point's
    (None: its default); compile: fixed_point's (the step recorded and replayed; the
    iterates are the eager ones bit for bit)."""
    b0 = float(beta.numpy()) if isinstance(beta, tf.Tensor) else float(beta)
    step, gauge = maps(chi)
    x = tf.fixed_point(step, start(b0, chi), beta, gauge=gauge, rtol=rtol,
                       max_iter=max_iter, compile=compile)
    return ln_kappa(x, beta, chi)


def thermodynamics(beta_value, chi, rtol=None):
    """(ln Z/N, u, c) at one beta: the fixed point, and two reverse passes through it."""
    beta = tf.tensor(beta_value, requires_grad=True)
    ln_z = ctmrg_ln_z(beta, chi, rtol)
    (dlnz,) = tf.grad([ln_z], [beta], create_graph=True)
    (d2lnz,) = tf.grad([dlnz], [beta])
    return float(ln_z), -float(dlnz), beta_value ** 2 * float(d2lnz)


def difference_energy(beta, chi, rtol=None, h=1e-4):
    """-d(ln Z/N)/d beta by a 5-point central difference of the computed ln Z/N."""
    f = {k: float(ctmrg_ln_z(beta + k * h, chi, rtol)) for k in (-2, -1, 1, 2)}
    return -(f[-2] - 8 * f[-1] + 8 * f[1] - f[2]) / (12 * h)


def iterations(beta, chi, rtol=1e-10, max_iter=5000):
    """How many steps (gauge included) the plain iteration from ``start`` takes until
    ||x_{k+1} - x_k|| <= rtol ||x_{k+1}||: fixed_point's stopping rule at its float64
    default."""
    x = start(beta, chi)
    b = tf.as_tensor(beta)
    with tf.no_grad():
        for k in range(1, max_iter + 1):
            x_new = sign_gauge(ctm_step(tf.as_tensor(x), b, chi), b, chi).numpy()
            step = np.linalg.norm(x_new - x)
            x = x_new
            if step <= rtol * np.linalg.norm(x):
                return k
    raise RuntimeError(f"no convergence in {max_iter} steps at beta {beta}")


def energy_implicit(beta_value, chi):
    """u by the fixed point's implicit derivative (what thermodynamics computes)."""
    beta = tf.tensor(beta_value, requires_grad=True)
    (g,) = tf.grad([ctmrg_ln_z(beta, chi)], [beta])
    return -float(g)


def energy_unrolled(beta_value, chi, steps):
    """u by back-propagating through ``steps`` recorded iterations from ``start``."""
    beta = tf.tensor(beta_value, requires_grad=True)
    x = tf.as_tensor(start(beta_value, chi))
    for _ in range(steps):
        x = sign_gauge(ctm_step(x, beta, chi), beta, chi)
    (g,) = tf.grad([ln_kappa(x, beta, chi)], [beta])
    return -float(g)


def measured(fn, *args):
    """(result, seconds, peak MiB of traced allocations) of one call."""
    import tracemalloc
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        out = fn(*args)
        dt = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()
    return out, dt, peak


def compare_unrolled(beta, chi):
    """The implicit derivative against unrolling the same number of steps: u, time and
    peak memory of each (the memory of unrolling grows with the steps, the implicit
    derivative's does not). Returns the relative difference of the two u."""
    steps = iterations(beta, chi)
    u_imp, t_imp, m_imp = measured(energy_implicit, beta, chi)
    u_unr, t_unr, m_unr = measured(energy_unrolled, beta, chi, steps)
    diff = abs(u_imp - u_unr) / abs(u_unr)
    print(f"implicit vs unrolled at chi {chi}, beta {beta} ({steps} steps): u "
          f"{u_imp:.12f} vs {u_unr:.12f} (rel diff {diff:.1e}); time {t_imp:.2f} s vs "
          f"{t_unr:.2f} s; peak memory {m_imp:.1f} MiB vs {m_unr:.1f} MiB", flush=True)
    return diff


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chi", type=int, nargs="+", default=[8, 12])
    p.add_argument("--betas", type=float, nargs="+",
                   default=[0.35, 0.40, 0.43, BETA_C, 0.45, 0.48])
    p.add_argument("--rtol", type=float, help="fixed_point's tolerance (default: its own)")
    p.add_argument("--unrolled-beta", type=float, default=0.40,
                   help="where to compare the implicit derivative with unrolling (a beta "
                        "away from beta_c; 0 skips it)")
    p.add_argument("--plot", metavar="PNG", help="write u and c against the exact curves")
    args = p.parse_args(argv)
    results = {}

    failed = []
    print(f"C4v CTMRG, tf.fixed_point with its default tolerance; checked where "
          f"|beta - beta_c| >= {NEAR_BETA_C}: |lnZ err| <= {LNZ_TOL:g}, |u err| <= "
          f"{U_TOL:g}, c rel err <= {C_RTOL:g}, u vs differences <= {FD_RTOL:g}")
    print(f"{'chi':>4} {'beta':>8} {'lnZ/N':>13} {'err':>8} {'u':>12} {'err':>8} "
          f"{'vs FD':>8} {'c':>9} {'rel err':>8} {'s':>5}")
    start = time.perf_counter()
    for chi in args.chi:
        for b in args.betas:
            checked = abs(b - BETA_C) >= NEAR_BETA_C
            t0 = time.perf_counter()
            try:
                ln_z, u, c = thermodynamics(b, chi, args.rtol)
                u_fd = difference_energy(b, chi, args.rtol)
            except tf.LinAlgError as e:
                note = "[FAILED]" if checked else "(near beta_c: not checked)"
                cap = (f"stopped at the iteration cap ({MAX_ITER}) before converging, "
                       + ("a failure" if checked else "not a failure near beta_c")
                       if "no convergence after" in str(e) else "no fixed point")
                print(f"{chi:>4} {b:>8.5f} {cap} {note}: {e}", flush=True)
                if checked:
                    failed.append((chi, b))
                continue
            dt = time.perf_counter() - t0
            results[chi, b] = (u, c)
            ex_c = exact_specific_heat(b)
            lnz_err = abs(ln_z - exact_ln_z(b))
            u_err = abs(u - exact_energy(b))
            fd_err = abs(u - u_fd) / abs(u)
            c_err = abs(c - ex_c) / ex_c if math.isfinite(ex_c) else math.nan
            bad = not all(math.isfinite(v) for v in (ln_z, u, c)) or (checked and not (
                lnz_err <= LNZ_TOL and u_err <= U_TOL and c_err <= C_RTOL
                and fd_err <= FD_RTOL))
            note = "[FAILED]" if bad else ("" if checked else "(near beta_c: not checked)")
            print(f"{chi:>4} {b:>8.5f} {ln_z:>13.10f} {lnz_err:>8.1e} {u:>12.8f} "
                  f"{u_err:>8.1e} {fd_err:>8.1e} {c:>9.5f} {c_err:>8.1e} {dt:>5.1f} {note}",
                  flush=True)
            if bad:
                failed.append((chi, b))
    if args.unrolled_beta:
        # unrolling converges to the same derivative as the implicit one, up to the
        # iteration's tolerance (the last step's size, amplified by the contraction)
        diff = compare_unrolled(args.unrolled_beta, args.chi[0])
        if not diff <= UNROLLED_RTOL:
            print(f"implicit and unrolled u differ by {diff:.1e} > {UNROLLED_RTOL:g}: "
                  "[FAILED]")
            failed.append(("unrolled", args.unrolled_beta))
    print(f"total {time.perf_counter() - start:.1f} s")
    if args.plot:
        _plot(args, results)
    if failed:
        print(f"CTMRG disagrees with Onsager beyond its tolerance at (chi, beta) = "
              f"{failed}: [FAILED]")
        return 1
    print("all checked points within tolerance of Onsager: [OK]")
    return 0


def _plot(args, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed; no plot (pip install matplotlib)")
        return
    grid = np.linspace(min(args.betas), max(args.betas), 200)
    grid = grid[np.abs(grid - BETA_C) > 1e-4]
    fig, (ax_u, ax_c) = plt.subplots(1, 2, figsize=(10, 4))
    ax_u.plot(grid, [exact_energy(b) for b in grid], "k-", label="Onsager")
    ax_c.plot(grid, [exact_specific_heat(b) for b in grid], "k-", label="Onsager")
    for chi in args.chi:
        pts = sorted((b, *results[chi, b]) for b in args.betas if (chi, b) in results)
        if pts:
            bs, us, cs = zip(*pts)
            ax_u.plot(bs, us, "o", label=f"CTMRG chi={chi}")
            ax_c.plot(bs, cs, "o", label=f"CTMRG chi={chi}")
    for ax, name in ((ax_u, "internal energy u"), (ax_c, "specific heat c")):
        ax.axvline(BETA_C, color="grey", lw=0.5)
        ax.set_xlabel("beta")
        ax.set_ylabel(name)
        ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"wrote {args.plot}")


if __name__ == "__main__":
    sys.exit(main())
