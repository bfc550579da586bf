"""The 2D Ising model by the Tensor Renormalization Group, differentiated to second order.

The free energy per site ln Z / N of the infinite square-lattice Ising model (J = 1, no
field) is computed by Levin and Nave's TRG (Phys. Rev. Lett. 99, 120601 (2007)) with bond
dimension ``chi``; the internal energy and the specific heat are its first and second
derivatives in the inverse temperature beta, taken by tenferro's reverse mode through
every SVD of the coarse-graining, as in Liao, Liu, Wang and Xiang, "Differentiable
Programming Tensor Networks", Phys. Rev. X 9, 031041 (2019):

    u = -d(ln Z/N)/d beta          (tf.grad with create_graph=True)
    c = beta^2 d^2(ln Z/N)/d beta^2 (a second tf.grad)

Both are compared with Onsager's exact solution, evaluated here with scipy.integrate and
scipy.special (complete elliptic integrals). At the critical point beta_c = ln(1 + sqrt 2)/2
the exact internal energy is -sqrt 2 and the specific heat diverges logarithmically, so
TRG's error is largest there.

The script checks itself: it prints the error of u and the relative error of c against
Onsager for every beta as it finishes, and exits with status 1 when, at a beta at least
NEAR_BETA_C = 0.015 away from beta_c, |u - u_exact| > U_TOL = 5e-3 or
|c - c_exact| > C_RTOL = 6% of c_exact. These bound TRG's truncation error at chi >= 8
and >= 12 steps, measured: u within 2.6e-3 (chi 8, 12 steps) and 6e-4 (chi 16 and 24,
20 steps); c within 0.5% at chi 16 and mostly at chi 24, but 4.7% at chi 24, beta 0.38,
where several steps cut through a near-degenerate multiplet (the central difference of
the AD internal energy gives the same c, 0.6967, so it is TRG's error, not the
derivative's). Closer to beta_c the error grows and c diverges: those points are printed,
not checked.

From about 15 coarse-graining steps on, the tensor of the ordered phase (beta > beta_c)
has exactly repeated singular values (the lattice symmetry); the second derivative then
goes through svd's exact limit for degenerate blocks (docs/degenerate_derivatives.md).

Run time, measured 2026-12-06 on a 2-core machine shared with other jobs (load average
~12), /usr/bin/time: the default (chi 16 and 24, 7 betas, 20 steps) 48 s of CPU time
with one thread (OMP_NUM_THREADS=1), 3 min 25 s of wall time at that load (about the CPU
time on an idle core); with the default threads 452 s of CPU time and 10 min 5 s of wall
time at that load (threads waiting for a busy core burn CPU): run it with
OMP_NUM_THREADS=1; a chi = 24 point takes 16-39 s of wall time there, and each of its
passes (ln Z, u, c) prints a progress line once a point has run PROGRESS_AFTER = 2 s.
The docs' run (chi 8, 12 steps, 5 betas) 4 s of CPU time with Python start-up.

    python examples/trg_ising.py                  # chi = 16 and 24, beta in [0.38, 0.50]
    python examples/trg_ising.py --chi 8 --betas 0.40 0.48 --iterations 12
    python examples/trg_ising.py --trace loop     # the final trace as 576 scalar indexings
    python examples/trg_ising.py --plot trg.png   # u and c against the exact curves

``--trace loop`` writes the final trace as the paper's code does (a Python sum of
``T[x, y, x, y]``); the default writes it as one einsum. Both give the same numbers.
"""
import argparse
import math
import sys
import time

import numpy as np
from scipy import integrate, special

import tenferro as tf

BETA_C = math.log(1.0 + math.sqrt(2.0)) / 2.0

# the self-check (module docstring): TRG's error against Onsager away from beta_c
U_TOL = 5e-3          # |u - u_exact|
C_RTOL = 0.06         # |c - c_exact| / c_exact
NEAR_BETA_C = 0.015   # |beta - beta_c| below which nothing is checked
PROGRESS_AFTER = 2.0  # seconds into a point after which each pass prints a line


# ---- Onsager's exact solution ----------------------------------------------------------

def exact_ln_z(beta):
    """ln Z / N of the infinite lattice (Onsager 1944), by quadrature:
    ln(2 cosh 2b) + (1/pi) int_0^{pi/2} ln[(1 + sqrt(1 - k^2 sin^2 t)) / 2] dt,
    k = 2 sinh 2b / cosh^2 2b."""
    k = 2.0 * math.sinh(2 * beta) / math.cosh(2 * beta) ** 2
    integrand = lambda t: math.log((1.0 + math.sqrt(max(0.0, 1.0 - (k * math.sin(t)) ** 2)))
                                   / 2.0)
    val, _ = integrate.quad(integrand, 0.0, math.pi / 2, limit=200)
    return math.log(2.0 * math.cosh(2 * beta)) + val / math.pi


def exact_energy(beta):
    """u = -coth(2b) [1 + (2/pi)(2 tanh^2 2b - 1) K(k)], with K the complete elliptic
    integral of the first kind (scipy.special.ellipk takes m = k^2)."""
    k = 2.0 * math.sinh(2 * beta) / math.cosh(2 * beta) ** 2
    t2 = math.tanh(2 * beta) ** 2
    if abs(2 * t2 - 1) < 1e-14:   # beta_c: (2 tanh^2 - 1) K -> 0 (K diverges like a log)
        return -1.0 / math.tanh(2 * beta)
    # K(m) with m = k^2 through ellipkm1(1 - m), 1 - k^2 = (sinh 2b - 1)^2 (cosh^2 2b +
    # 2 sinh 2b) / cosh^4 2b, accurate next to beta_c where m rounds to 1
    sh, ch = math.sinh(2 * beta), math.cosh(2 * beta)
    k_elliptic = special.ellipkm1((sh - 1) ** 2 * (ch * ch + 2 * sh) / ch ** 4)
    return -(1.0 / math.tanh(2 * beta)) * (1.0 + 2.0 / math.pi * (2 * t2 - 1) * k_elliptic)


def exact_specific_heat(beta):
    """c = beta^2 d^2 ln Z/d beta^2 = -beta^2 du/d beta; the derivative of the closed form
    of u is taken by a 5-point central difference (u is smooth away from beta_c; the
    step is relative so the error is ~1e-10)."""
    h = 1e-4 * beta
    if abs(beta - BETA_C) < 3 * h:
        return math.inf   # the logarithmic divergence at beta_c
    du = (-exact_energy(beta + 2 * h) + 8 * exact_energy(beta + h)
          - 8 * exact_energy(beta - h) + exact_energy(beta - 2 * h)) / (12 * h)
    return -beta * beta * du


# ---- TRG --------------------------------------------------------------------------------

def ising_tensor(beta):
    """The site tensor T[u, l, d, r] = sum_s M[s, u] M[s, l] M[s, d] M[s, r] with
    M M^T = W, W_ab = exp(beta s_a s_b) the bond weight: M = [[sqrt cosh b, sqrt sinh b],
    [sqrt cosh b, -sqrt sinh b]]. Each tensor carries one spin and half of its four bonds."""
    c, s = tf.sqrt(tf.cosh(beta)), tf.sqrt(tf.sinh(beta))
    m = tf.stack([tf.stack([c, s]), tf.stack([c, -s])])
    return tf.einsum("su,sl,sd,sr->uldr", m, m, m, m)


def _split_pair(m_a, m_b, d, chi):
    """Each of the two (d*d, d*d) matrices ~ a @ b with its k largest singular triplets:
    a = U_k diag(s_k) as (d, d, k), b = V_k^H as (k, d, d), with one k for both: at most
    chi, and no singular value below 1e-12 of the largest. The first Ising tensors give
    exactly rank-deficient matrices; keeping the vectors of their rounding-level singular
    values feeds noise into the later steps (ln Z then jumps by ~1e-5 between betas 1e-6
    apart, and no derivative means anything). Sharing sqrt(s) between the halves, as is
    customary, would put 1/(2 sqrt s) into the derivative. The lattice symmetry makes many
    kept singular values exactly repeated; the loss does not depend on the rotation of
    their vectors, which is the case svd's derivative handles exactly."""
    svds = [tf.linalg.svd(m) for m in (m_a, m_b)]
    k = chi
    for _, s, _ in svds:
        sv = s.numpy()
        k = min(k, int(np.count_nonzero(sv > 1e-12 * sv[0])))
    return [((u[:, :k] * s[:k]).reshape(d, d, k), vt[:k].reshape(k, d, d))
            for u, s, vt in svds]


def trg_ln_z(beta, chi, iterations, trace="einsum"):
    """ln Z / N by TRG: ``iterations`` coarse-graining steps, each halving the number of
    tensors, then the trace of the last tensor on a 1x1 torus. The tensor is divided by
    its largest entry before every step and the logarithms collected, so nothing
    overflows: ln Z / N = sum_n ln(max_n) / 2^n + ln(trace) / 2^iterations."""
    t = ising_tensor(beta)
    ln_z = tf.zeros((), dtype=tf.float64)
    for n in range(iterations):
        scale = tf.max(tf.abs(t))
        t = t / scale
        ln_z = ln_z + tf.log(scale) / 2.0 ** n
        d = t.shape[0]
        # split every tensor along one diagonal on sublattice A and the other on B:
        # A: T[u,l,d,r] = S1[u,l,k] S3[k,d,r];  B: T[u,l,d,r] = S2[l,d,k] S4[k,r,u]
        (s1, s3), (s2, s4) = _split_pair(
            t.reshape(d * d, d * d), tf.permute_dims(t, (1, 2, 3, 0)).reshape(d * d, d * d),
            d, chi)
        # the four pieces around a plaquette form the new tensor (lattice rotated by
        # 45 degrees); new legs (u, l, d, r) = (a, d, b, c) point to the old tensors at
        # the top-left, bottom-left, bottom-right and top-right of the plaquette
        t = tf.einsum("aqp,pwc,wzb,dzq->adbc", s3, s2, s1, s4)
    d = t.shape[0]
    if trace == "loop":   # the paper's spelling: d^2 scalar index operations
        total = tf.zeros((), dtype=tf.float64)
        for x in range(d):
            for y in range(d):
                total = total + t[x, y, x, y]
    else:
        total = tf.einsum("xyxy->", t)
    return ln_z + tf.log(total) / 2.0 ** iterations


def thermodynamics(beta_value, chi, iterations, trace="einsum", progress=None):
    """(ln Z/N, u, c) at one beta: one forward pass, two reverse passes. ``progress``, if
    given, is called with the name of each pass as it finishes."""
    report = progress or (lambda name: None)
    beta = tf.tensor(beta_value, requires_grad=True)
    ln_z = trg_ln_z(beta, chi, iterations, trace)
    report("ln Z (forward)")
    (dlnz,) = tf.grad([ln_z], [beta], create_graph=True)
    report("u (first reverse pass)")
    (d2lnz,) = tf.grad([dlnz], [beta])
    report("c (second reverse pass)")
    return float(ln_z), -float(dlnz), beta_value ** 2 * float(d2lnz)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chi", type=int, nargs="+", default=[16, 24])
    p.add_argument("--betas", type=float, nargs="+",
                   default=[0.38, 0.40, 0.42, BETA_C, 0.46, 0.48, 0.50])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--trace", choices=("einsum", "loop"), default="einsum")
    p.add_argument("--plot", metavar="PNG", help="write u and c against the exact curves")
    args = p.parse_args(argv)

    u_c = exact_energy(BETA_C)
    print(f"Onsager at beta_c = {BETA_C:.6f}: u = {u_c:.12f} (-sqrt 2 = {-math.sqrt(2):.12f})")
    if abs(u_c + math.sqrt(2.0)) > 1e-12:
        print("exact internal energy at beta_c is not -sqrt 2: [FAILED]")
        return 1
    results = {}
    failed = []
    print(f"TRG, {args.iterations} iterations, trace as {args.trace}; checked where "
          f"|beta - beta_c| >= {NEAR_BETA_C}: |u err| <= {U_TOL:g}, c rel err <= {C_RTOL:g}")
    print(f"{'chi':>4} {'beta':>8} {'lnZ/N':>12} {'err':>9} {'u':>12} {'err':>9} "
          f"{'c':>9} {'exact c':>9} {'rel err':>8} {'s':>6}")
    start = time.perf_counter()
    for chi in args.chi:
        for b in args.betas:
            t0 = time.perf_counter()

            def progress(name):
                # a point at chi 24 takes 10-50 s: say where it is once it is slow
                now = time.perf_counter()
                if now - t0 > PROGRESS_AFTER:
                    print(f"     chi {chi}, beta {b:.5f}: {name} done, {now - t0:.1f} s "
                          f"(total {now - start:.1f} s)", flush=True)

            ln_z, u, c = thermodynamics(b, chi, args.iterations, args.trace, progress)
            dt = time.perf_counter() - t0
            ex_f, ex_u, ex_c = exact_ln_z(b), exact_energy(b), exact_specific_heat(b)
            results[chi, b] = (ln_z, u, c)
            u_err = abs(u - ex_u)
            c_err = abs(c - ex_c) / ex_c if math.isfinite(ex_c) else math.nan
            checked = abs(b - BETA_C) >= NEAR_BETA_C
            bad = not all(math.isfinite(v) for v in (ln_z, u, c)) or (
                checked and not (u_err <= U_TOL and c_err <= C_RTOL))
            note = "[FAILED]" if bad else ("" if checked else "(near beta_c: not checked)")
            print(f"{chi:>4} {b:>8.5f} {ln_z:>12.9f} {abs(ln_z - ex_f):>9.1e} {u:>12.8f} "
                  f"{u_err:>9.1e} {c:>9.5f} {ex_c:>9.5f} {c_err:>8.1e} {dt:>6.1f} {note}",
                  flush=True)
            if bad:
                failed.append((chi, b))
    print(f"total {time.perf_counter() - start:.1f} s")
    if args.plot:
        _plot(args, results)
    if failed:
        print(f"TRG disagrees with Onsager beyond its tolerance at (chi, beta) = {failed}: "
              "[FAILED]")
        return 1
    print("all checked points within TRG's tolerance of Onsager: [OK]")
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
        bs = list(args.betas)
        ax_u.plot(bs, [results[chi, b][1] for b in bs], "o", label=f"TRG chi={chi}")
        ax_c.plot(bs, [results[chi, b][2] for b in bs], "o", label=f"TRG chi={chi}")
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
