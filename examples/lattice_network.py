"""The 2D Ising model on a finite open L x L lattice as one einsum, differentiated.

    H = -J sum_<ij> s_i s_j - h sum_i s_i,   Z(beta, h) = sum_{s in {+-1}^N} exp(-beta H),

N = L^2 spins, nearest-neighbour bonds <ij> without periodic wrap (2 L (L - 1) bonds).
Z is written as a tensor network and contracted by a single ``tf.einsum`` over all its
tensors; einsum chooses the pairwise contraction order (``--optimize`` is passed to it).
The thermodynamics are derivatives of ln Z taken by tenferro's reverse mode through
that contraction (``tf.grad``; the second derivative with ``create_graph=True``):

    u = -(1/N) d ln Z / d beta               internal energy per site
    c = (beta^2/N) d^2 ln Z / d beta^2       specific heat per site
    m = (1/(N beta)) d ln Z / d h            magnetisation per site

Two networks give the same Z (``--network``):

* ``bonds``: the tensor network of Levin and Nave's TRG (Phys. Rev. Lett. 99, 120601
  (2007)) and of Liao et al., Phys. Rev. X 9, 031041 (2019), on a finite open lattice.
  The bond weight W[s, s'] = exp(beta J s s') is split as W = M M^T and each half is
  given to a site: T_i[legs] = sum_s exp(beta h s) prod_{legs} M[s, leg], one leg per
  neighbour (2 at corners, 3 on edges, 4 inside), one einsum label per bond. Labels
  number 2 L (L - 1), so L <= 5 (einsum has 52 letters).
* ``spins``: the factor graph: one label per spin, shared by the 2x2 matrices W of its
  bonds and its field vector exp(beta h s); a label on more than two operands is a
  copy tensor (hyperedge), which einsum sums once. L^2 labels, so L <= 7.

References: every configuration enumerated (L <= 4, 2^16 states) gives ln Z and the
exact moments u = <H>/N, c = beta^2 var(H)/N, m = <M>/N (M = sum_i s_i); for larger L
the row-to-row transfer matrix (2^L states per row, L <= 10) gives ln Z and, carrying
the derivatives of its row vector along, u, c and m exactly. The AD derivative is also
compared with the central difference of the network's own ln Z.

The script checks itself: it exits with status 1 when any of ln Z/N, u, c, m is more
than ERR_TOL = 1e-9 from the exact value, or the AD u more than FD_TOL = 1e-6 from the
difference quotient (measured: 1e-12 and 1e-10 at most). Every row prints the elapsed
time. ``--quick`` (L = 3 and 4, two betas) is what the tests run.

Run time of the default, measured 2026-12-06 with /usr/bin/time on a 2-core machine
shared with other jobs (load average ~12): 2.3 s of CPU time with one thread (2.5 s with
the default threads), 14 s (25 s) of wall time at that load.

    python examples/lattice_network.py                       # L = 4, 5, both networks
    python examples/lattice_network.py --L 6 7 --network spins --betas 0.3 0.44 0.6
    python examples/lattice_network.py --field 0.1 --plot ising2d.png
"""
import argparse
import math
import string
import sys
import time

import numpy as np
from scipy import special

import tenferro as tf

LETTERS = string.ascii_letters   # einsum's 52 labels

# the self-check (module docstring)
ERR_TOL = 1e-9    # |ln Z/N, u, c or m - exact| (each is O(1); measured <= 1e-12)
FD_TOL = 1e-6     # |AD u - difference quotient of the network's ln Z| (measured ~1e-10)


# ---- the lattice ------------------------------------------------------------------------

def lattice_bonds(L):
    """Nearest-neighbour bonds (i, j) of the open L x L lattice, site i = row * L + col."""
    bonds = []
    for r in range(L):
        for c in range(L):
            i = r * L + c
            if c + 1 < L:
                bonds.append((i, i + 1))
            if r + 1 < L:
                bonds.append((i, i + L))
    return bonds


# ---- exact references (NumPy) -----------------------------------------------------------

def brute_force(L, beta, field=0.0, J=1.0):
    """(ln Z, u, c, m) per site from all 2^N configurations (N = L^2 <= 16 or so)."""
    n = L * L
    states = np.arange(2 ** n)
    spins = 1 - 2 * ((states[:, None] >> np.arange(n)) & 1)   # (2^N, N) of +-1
    i, j = np.array(lattice_bonds(L)).T
    magnetisation = spins.sum(axis=1).astype(float)
    energy = -J * np.sum(spins[:, i] * spins[:, j], axis=1) - field * magnetisation
    ln_z = special.logsumexp(-beta * energy)
    p = np.exp(-beta * energy - ln_z)    # Boltzmann probabilities
    mean_e = p @ energy
    var_e = p @ (energy - mean_e) ** 2
    return ln_z / n, mean_e / n, beta ** 2 * var_e / n, (p @ magnetisation) / n


def transfer_matrix(L, beta, field=0.0, J=1.0):
    """(ln Z, u, c, m) per site by the row-to-row transfer matrix (2^L states per row):

        Z = sum r(s_1) V(s_1, s_2) r(s_2) ... V(s_{L-1}, s_L) r(s_L),

    r(s) = exp(beta R(s)), R(s) = J sum_c s_c s_{c+1} + h sum_c s_c the weight of a row,
    V(s, s') = exp(beta J S(s, s')), S = sum_c s_c s'_c the coupling of neighbouring rows.
    The row vector v_k (the partial sum over the first k rows) is carried together with
    its exact derivatives dv/d beta, d^2v/d beta^2 and dv/dh (the product rule applied
    to v_{k+1} = (v_k V) r), so the moments need no finite differences. All four are
    divided by the same number after every row (its logarithm collected): the ratios
    (sum dv)/(sum v) = d ln Z/d beta etc. do not change and nothing overflows."""
    n = L * L
    states = np.arange(2 ** L)
    rows = 1 - 2 * ((states[:, None] >> np.arange(L)) & 1)
    row_spin = rows.sum(axis=1).astype(float)
    row_energy = J * np.sum(rows[:, :-1] * rows[:, 1:], axis=1) + field * row_spin   # R
    r = np.exp(beta * row_energy)
    r_b, r_bb, r_h = row_energy * r, row_energy ** 2 * r, beta * row_spin * r
    overlap = J * (rows @ rows.T).astype(float)                                      # J S
    v_mat = np.exp(beta * overlap)
    v_mat_b, v_mat_bb = overlap * v_mat, overlap ** 2 * v_mat
    v, v_b, v_bb, v_h = r, r_b, r_bb, r_h
    ln_scale = 0.0
    for _ in range(L - 1):
        w, w_b = v @ v_mat, v_b @ v_mat + v @ v_mat_b
        w_bb = v_bb @ v_mat + 2 * v_b @ v_mat_b + v @ v_mat_bb
        w_h = v_h @ v_mat
        v, v_b, v_bb, v_h = (w * r, w_b * r + w * r_b, w_bb * r + 2 * w_b * r_b + w * r_bb,
                             w_h * r + w * r_h)
        top = v.max()
        v, v_b, v_bb, v_h = v / top, v_b / top, v_bb / top, v_h / top
        ln_scale += math.log(top)
    z = v.sum()
    d_beta = v_b.sum() / z
    d2_beta = v_bb.sum() / z - d_beta ** 2
    return ((ln_scale + math.log(z)) / n, -d_beta / n, beta ** 2 * d2_beta / n,
            v_h.sum() / z / (n * beta))


def exact(L, beta, field=0.0, J=1.0):
    """The reference the table uses: enumeration when it is cheap, else transfer matrix."""
    return brute_force(L, beta, field, J) if L <= 4 else transfer_matrix(L, beta, field, J)


# ---- the tensor networks (tenferro) -----------------------------------------------------

def bond_half(beta, J=1.0):
    """M with M M^T = exp(beta J (s s' - 1)): the bond weight divided by its largest
    entry exp(beta J), so Z stays of order one however cold the lattice; ln Z gets
    beta J per bond back. The eigenvectors (1, 1)/sqrt 2 and (1, -1)/sqrt 2 of that
    2x2 matrix have eigenvalues 1 +- exp(-2 beta J), so M = [[a, b], [a, -b]] with
    a = sqrt((1 + e^{-2 beta J})/2), b = sqrt((1 - e^{-2 beta J})/2) (real for
    beta J > 0; b's derivative is infinite at beta J = 0)."""
    q = tf.exp(-2.0 * J * beta)
    a, b = tf.sqrt((1.0 + q) / 2.0), tf.sqrt((1.0 - q) / 2.0)
    return tf.stack([tf.stack([a, b]), tf.stack([a, -b])])


def bond_weight(beta, J=1.0):
    """W[s, s'] = exp(beta J (s s' - 1)) for s, s' in (+1, -1), scaled as in bond_half."""
    one, q = tf.ones((), dtype=tf.float64), tf.exp(-2.0 * J * beta)
    return tf.stack([tf.stack([one, q]), tf.stack([q, one])])


def field_weight(beta, field):
    """exp(beta h s) for s = +1, -1."""
    return tf.exp(beta * field * tf.tensor([1.0, -1.0]))


def network_bonds(L, beta, field, J=1.0):
    """(subscripts, operands) of the TRG-style network: one tensor per site, one label per
    bond. The site tensors of equal degree are the same tensor, built once."""
    bonds = lattice_bonds(L)
    if len(bonds) > len(LETTERS):
        raise ValueError(f"the bond network of L = {L} needs {len(bonds)} labels; einsum "
                         "has 52: use L <= 5 or --network spins")
    m, f = bond_half(beta, J), field_weight(beta, field)
    legs = [[] for _ in range(L * L)]
    for k, (i, j) in enumerate(bonds):
        legs[i].append(LETTERS[k])
        legs[j].append(LETTERS[k])
    by_degree = {}
    for degree in {len(x) for x in legs}:
        # T[l_1 .. l_d] = sum_s f[s] M[s, l_1] ... M[s, l_d]  ("s" is not a bond label
        # here: this is a separate einsum)
        out = LETTERS[:degree]
        by_degree[degree] = tf.einsum("s," + ",".join("s" + x for x in out) + "->" + out,
                                      f, *([m] * degree))
    return ",".join("".join(x) for x in legs) + "->", [by_degree[len(x)] for x in legs]


def network_spins(L, beta, field, J=1.0):
    """(subscripts, operands) of the factor graph: one label per spin, a 2x2 W per bond
    and a field vector per site."""
    n = L * L
    if n > len(LETTERS):
        raise ValueError(f"the spin network of L = {L} needs {n} labels; einsum has 52: "
                         "use L <= 7")
    w, f = bond_weight(beta, J), field_weight(beta, field)
    bonds = lattice_bonds(L)
    terms = [LETTERS[i] + LETTERS[j] for i, j in bonds] + [LETTERS[i] for i in range(n)]
    return ",".join(terms) + "->", [w] * len(bonds) + [f] * n


NETWORKS = {"bonds": network_bonds, "spins": network_spins}


def ln_z(L, beta, field=0.0, J=1.0, network="bonds", optimize=None):
    """ln Z of the open L x L lattice by one einsum over the whole network (beta, field:
    tensors or numbers). ``optimize`` goes to tf.einsum (None: its default)."""
    # not tf.as_tensor(x, dtype=...): on a Tensor that requires grad it returns a detached copy
    beta, field = (x if isinstance(x, tf.Tensor) else tf.tensor(float(x))
                   for x in (beta, field))
    subscripts, operands = NETWORKS[network](L, beta, field, J)
    kwargs = {} if optimize is None else {"optimize": optimize}
    z = tf.einsum(subscripts, *operands, **kwargs)
    return tf.log(z) + beta * J * len(lattice_bonds(L))   # undo bond_half's scaling


def thermodynamics(L, beta_value, field_value=0.0, J=1.0, network="bonds", optimize=None):
    """(ln Z, u, c, m) per site: one contraction, a reverse pass for d/d beta and d/d h
    that records itself, a second reverse pass for d^2/d beta^2."""
    n = L * L
    beta = tf.tensor(beta_value, requires_grad=True)
    field = tf.tensor(field_value, requires_grad=True)
    lz = ln_z(L, beta, field, J, network, optimize)
    d_beta, d_field = tf.grad([lz], [beta, field], create_graph=True)
    (d2_beta,) = tf.grad([d_beta], [beta])
    return (float(lz) / n, -float(d_beta) / n, beta_value ** 2 * float(d2_beta) / n,
            float(d_field) / (n * beta_value))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--L", type=int, nargs="+", default=[4, 5])
    p.add_argument("--betas", type=float, nargs="+", default=[0.2, 0.3, 0.44, 0.6, 1.0])
    p.add_argument("--field", type=float, default=0.05)
    p.add_argument("--J", type=float, default=1.0)
    p.add_argument("--network", choices=("bonds", "spins", "both"), default="both")
    p.add_argument("--optimize", default=None,
                   help="tf.einsum's optimize ('greedy', 'optimal', ...; default: its own)")
    p.add_argument("--plot", metavar="PNG", help="write u, c and m against beta")
    p.add_argument("--quick", action="store_true",
                   help="L = 3 and 4, betas 0.3 and 0.6 (well under a second)")
    args = p.parse_args(argv)
    if args.quick:
        args.L, args.betas = [3, 4], [0.3, 0.6]
    networks = ("bonds", "spins") if args.network == "both" else (args.network,)

    print(f"open L x L Ising lattice, J = {args.J}, h = {args.field}; per-site ln Z, u, c, m "
          "from one einsum and tf.grad; err = |value - exact| (enumeration for L <= 4, "
          "transfer matrix above); fd = |AD u - (-dlnZ/dbeta by central difference of the "
          "same network)|; times in ms: lnZ alone, lnZ with u, c, m; t: elapsed s")
    print(f"checked: every err <= {ERR_TOL:g}, fd <= {FD_TOL:g}")
    print(f"{'L':>2} {'net':>5} {'beta':>5} {'lnZ/N':>10} {'err':>7} {'u':>10} {'err':>7} "
          f"{'c':>8} {'err':>7} {'m':>8} {'err':>7} {'fd':>7} {'lnZ':>6} {'all':>6} "
          f"{'t':>5}")
    results = {}
    worst, worst_fd = 0.0, 0.0
    failed = []
    start = time.perf_counter()
    for L in args.L:
        for net in networks:
            if net == "bonds" and len(lattice_bonds(L)) > len(LETTERS):
                print(f"{L:>2} {net:>5}  skipped: {len(lattice_bonds(L))} bond labels > 52")
                continue
            for b in args.betas:
                # medians of 5 runs; the contraction path is planned on the first call of
                # each (L, network) and cached by tf.einsum, so the runs after it time the
                # contraction and its derivatives only
                t_ln_z = _median_seconds(lambda: ln_z(L, b, args.field, args.J, net,
                                                      args.optimize))
                t_all = _median_seconds(lambda: thermodynamics(L, b, args.field, args.J, net,
                                                               args.optimize))
                vals = thermodynamics(L, b, args.field, args.J, net, args.optimize)
                ref = exact(L, b, args.field, args.J)
                errs = [abs(v - r) for v, r in zip(vals, ref)]
                step = 1e-5 * b
                fd = -(float(ln_z(L, b + step, args.field, args.J, net, args.optimize))
                       - float(ln_z(L, b - step, args.field, args.J, net, args.optimize))
                       ) / (2 * step) / (L * L)
                lz, u, c, m = vals
                fd_err = abs(u - fd)
                # "not <=" so that a NaN fails too
                bad = not (max(errs) <= ERR_TOL and fd_err <= FD_TOL)
                print(f"{L:>2} {net:>5} {b:>5.2f} {lz:>10.6f} {errs[0]:>7.0e} {u:>10.6f} "
                      f"{errs[1]:>7.0e} {c:>8.5f} {errs[2]:>7.0e} {m:>8.5f} {errs[3]:>7.0e} "
                      f"{fd_err:>7.0e} {1e3 * t_ln_z:>6.1f} {1e3 * t_all:>6.1f} "
                      f"{time.perf_counter() - start:>5.1f}{' [FAILED]' if bad else ''}",
                      flush=True)
                results[L, net, b] = vals, ref
                if bad:
                    failed.append((L, net, b))
                worst = max(worst, *errs)
                worst_fd = max(worst_fd, fd_err)
    print(f"largest error in ln Z/N, u, c, m: {worst:.1e}; AD u vs differences: "
          f"{worst_fd:.1e}; total {time.perf_counter() - start:.1f} s")
    if args.plot:
        _plot(args, results)
    if failed:
        print(f"off the exact values beyond tolerance at (L, network, beta) = {failed}: "
              "[FAILED]")
        return 1
    print("every value within tolerance of the exact one: [OK]")
    return 0


def _median_seconds(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _plot(args, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed; no plot (pip install matplotlib)")
        return
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    grid = np.linspace(min(args.betas), max(args.betas), 41)
    for L in args.L:
        curve = np.array([exact(L, b, args.field, args.J) for b in grid])
        for k, ax in enumerate(axes, start=1):
            line, = ax.plot(grid, curve[:, k], "-", lw=0.8, label=f"L={L} exact")
            for net, marker in (("bonds", "o"), ("spins", "x")):
                pts = [(b, results[L, net, b][0][k]) for b in args.betas
                       if (L, net, b) in results]
                if pts:
                    ax.plot(*zip(*pts), marker, color=line.get_color(), label=f"L={L} {net}")
    for ax, name in zip(axes, ("internal energy u", "specific heat c", "magnetisation m")):
        ax.set_xlabel("beta")
        ax.set_ylabel(name)
        ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"wrote {args.plot}")


if __name__ == "__main__":
    sys.exit(main())
