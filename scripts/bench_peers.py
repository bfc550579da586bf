"""tenferro beside PyTorch and JAX (jit and eager): forward+backward, one thread, one run.

    python scripts/bench_peers.py                 # every workload, n = 16 64 256
    python scripts/bench_peers.py 16 svd eigh     # sizes and op names to keep

Not part of CI: the peers are not dependencies. A peer that is not installed is skipped
(its column reads "-"). Workloads:

* engine: ``x.exp().sum()`` on 4 float64 elements and a chain of 100 small elementwise ops
  (x*1.0001, +0.1, sin, tanh repeated) on 4 elements, forward + backward, with the same
  gradient written by hand in NumPy as the baseline;
* the gauge-invariant svd loss ``sum(c_s*s) + sum(C * ((u*d) @ vt))`` at n = 16;
* every linalg op: ``sum(C * op(A))`` (or ``c * op(A)`` for a scalar result; gauge-free
  combinations of the outputs for svd, eigh), float64, n = 16, 64, 256, with SciPy's
  primal as the baseline.

Each cell is the median time of ``value and gradient w.r.t. A`` per call; the frameworks
are timed round-robin (tenferro, SciPy, PyTorch, JAX-jit, JAX eager, then again), five
rounds, so that the drift of this VM hits every column alike. The ratio columns divide
by the baseline (SciPy primal or hand-written NumPy) of the same round; the last rows
are geometric means of the ratios over the linalg ops for each n.

    python scripts/bench_peers.py matfuncs [16 64 256]   # expm, sqrtm, logm (issue 29)

``matfuncs`` times ``sum(C * f(A))`` for f = expm, sqrtm, logm (A = I + E, ‖E‖ ~ 1/2):
SciPy's primal, tenferro's forward and forward + backward, the cost of a central
finite-difference gradient (2n² SciPy primals: one primal's median times 2n²), and
PyTorch/JAX where they have the op with a derivative (matrix_exp/expm; JAX's sqrtm is
forward only, its Schur decomposition has no derivative; neither has logm). At n = 16 the
tenferro gradient is checked against that finite difference first.

    python scripts/bench_peers.py programs        # the loop-of-small-ops programs (issue 27)
    python scripts/bench_peers.py programs --rounds 3 --small

``programs`` times whole programs instead, each written the natural way in each framework
(the tenferro versions are the functions of asv_bench/benchmarks/bench_programs.py):

* the Kalman filter's negative log-likelihood (state 4, observations 2, T = 300), value and
  gradient in its 10 parameters; its 10x10 Hessian (tf.hessian,
  torch.autograd.functional.hessian, jax.hessian under jit); the L-BFGS-B fit
  (scipy.optimize.minimize with jac=True; JAX's time includes its compilation);
* the CTMRG of the 2D Ising model (chi 16, 400 unrolled steps), ln Z/N and its derivative
  in beta.

PyTorch runs eagerly with a Python loop; JAX loops with ``lax.scan`` under ``jax.jit``
(the CTMRG's first steps, where chi still grows, unrolled), the spelling a JAX user
picks: a Python loop under jit compiles for minutes at these lengths. PyTorch's and JAX's
SVD derivatives are NaN when two singular values are exactly equal (CTMRG's enlarged
corner is rank deficient while chi grows), so their CTMRG uses the usual custom SVD
backward with a Lorentzian-broadened F (Liao et al., PRX 9, 031041 (2019)), with
tenferro's default width. Before timing, the three must agree on every value and gradient
(float64); the frameworks then run round-robin, ``--rounds`` rounds (default 5; at most 3
for the Hessian), medians of the process's CPU time (``--wall``: wall-clock time).
JAX's compile time (first call after ``jax.clear_caches()`` minus a compiled call) is its
own column. ``--small``: T = 30, CTMRG chi 8 x 40 steps.
"""
import math
import os
import sys
import time
import timeit

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "XLA_FLAGS"):
    if _var == "XLA_FLAGS":
        os.environ.setdefault(_var, "--xla_cpu_multi_thread_eigen=false "
                              "intra_op_parallelism_threads=1")
    else:
        os.environ[_var] = "1"

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

import tenferro as tf  # noqa: E402

ROUNDS = 5


def _per_call_us(fn, budget):
    """Median µs of one call of fn, from repeats filling about ``budget`` seconds."""
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t > 0.01 or number >= 1 << 16:
            break
        number *= 4
    reps = max(3, min(25, int(budget / max(t, 1e-9))))
    return float(np.median(timeit.repeat(fn, number=number, repeat=reps))) / number * 1e6


def round_robin(fns, budget=0.25):
    """{name: (median µs, median ratio to fns['base'])}, measured in alternating rounds."""
    times = {k: [] for k in fns}
    for _ in range(ROUNDS):
        for k, fn in fns.items():
            times[k].append(_per_call_us(fn, budget / ROUNDS))
    base = np.array(times["base"])
    return {k: (float(np.median(v)), float(np.median(np.array(v) / base)))
            for k, v in times.items()}


# ---- peers ------------------------------------------------------------------------------

def _torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def _jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax


TORCH, JAX = _torch(), _jax()
if JAX is not None:
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla


# ---- the linalg losses, one per framework -------------------------------------------------
# Each entry: name -> (tenferro loss, torch loss, jax loss, scipy primal, input kind).
# Losses take the matrix and the fixed data dict D (numpy arrays; converted once per peer).

def _svd_tf(a, D):
    u, s, vt = tf.linalg.svd(a)
    return tf.sum(D["c"] * s) + tf.sum(D["C"] * ((u * D["d"]) @ vt))


def _svd_torch(a, D):
    u, s, vt = TORCH.linalg.svd(a, full_matrices=False)
    return (D["c"] * s).sum() + (D["C"] * ((u * D["d"]) @ vt)).sum()


def _svd_jax(a, D):
    u, s, vt = jnp.linalg.svd(a, full_matrices=False)
    return jnp.sum(D["c"] * s) + jnp.sum(D["C"] * ((u * D["d"]) @ vt))


def _eigh_tf(a, D):
    w, v = tf.linalg.eigh(a)
    return tf.sum(D["c"] * w) + tf.sum(D["C"] * ((v * D["d"]) @ v.mT))


def _eigh_torch(a, D):
    w, v = TORCH.linalg.eigh(a)
    return (D["c"] * w).sum() + (D["C"] * ((v * D["d"]) @ v.mT)).sum()


def _eigh_jax(a, D):
    w, v = jnp.linalg.eigh(a)
    return jnp.sum(D["c"] * w) + jnp.sum(D["C"] * ((v * D["d"]) @ v.T))


def _two(f):
    """sum(C*x) + sum(B*y) of a two-output factorization (qr; lu's l and u)."""
    def loss(a, D, f=f, mod=None):
        x, y = f(a)
        return (D["C"] * x).sum() + (D["B"] * y).sum()
    return loss


def _sum_c(f, key="C"):
    def loss(a, D):
        return (D[key] * f(a, D)).sum()
    return loss


def _ops():
    """The linalg ops: (name, input kind, tenferro, torch, jax, scipy primal)."""
    T, J = TORCH, JAX
    ops = [
        ("svd", "gen", _svd_tf, _svd_torch, _svd_jax,
         lambda a, D: sla.svd(a, full_matrices=False)),
        ("eigh", "spd", _eigh_tf, _eigh_torch, _eigh_jax, lambda a, D: sla.eigh(a)),
        ("qr", "gen", _two(tf.linalg.qr),
         _two(lambda a: T.linalg.qr(a)) if T else None,
         _two(lambda a: jnp.linalg.qr(a)) if J else None,
         lambda a, D: sla.qr(a, mode="economic")),
        ("cholesky", "spd", _sum_c(lambda a, D: tf.linalg.cholesky(a)),
         _sum_c(lambda a, D: T.linalg.cholesky(a)) if T else None,
         _sum_c(lambda a, D: jnp.linalg.cholesky(a)) if J else None,
         lambda a, D: sla.cholesky(a, lower=True)),
        ("lu", "gen", _two(lambda a: tf.linalg.lu(a)[1:]),
         _two(lambda a: T.linalg.lu(a)[1:]) if T else None,
         _two(lambda a: jsla.lu(a)[1:]) if J else None,
         lambda a, D: sla.lu(a)),
        ("solve", "gen", _sum_c(lambda a, D: tf.linalg.solve(a, D["b"])),
         _sum_c(lambda a, D: T.linalg.solve(a, D["b"])) if T else None,
         _sum_c(lambda a, D: jnp.linalg.solve(a, D["b"])) if J else None,
         lambda a, D: sla.solve(a, D["b"])),
        ("inv", "gen", _sum_c(lambda a, D: tf.linalg.inv(a)),
         _sum_c(lambda a, D: T.linalg.inv(a)) if T else None,
         _sum_c(lambda a, D: jnp.linalg.inv(a)) if J else None,
         lambda a, D: sla.inv(a)),
        ("det", "gen", _sum_c(lambda a, D: tf.linalg.det(a), "c0"),
         _sum_c(lambda a, D: T.linalg.det(a), "c0") if T else None,
         _sum_c(lambda a, D: jnp.linalg.det(a), "c0") if J else None,
         lambda a, D: sla.det(a)),
        ("slogdet", "gen", _sum_c(lambda a, D: tf.linalg.slogdet(a)[1], "c0"),
         _sum_c(lambda a, D: T.linalg.slogdet(a)[1], "c0") if T else None,
         _sum_c(lambda a, D: jnp.linalg.slogdet(a)[1], "c0") if J else None,
         lambda a, D: np.linalg.slogdet(a)),
        ("solve_triangular", "upper",
         _sum_c(lambda a, D: tf.linalg.solve_triangular(a, D["b"])),
         _sum_c(lambda a, D: T.linalg.solve_triangular(a, D["b"], upper=True)) if T else None,
         _sum_c(lambda a, D: jsla.solve_triangular(a, D["b"])) if J else None,
         lambda a, D: sla.solve_triangular(a, D["b"])),
        ("pinv (2n x n)", "tall", _sum_c(lambda a, D: tf.linalg.pinv(a), "Ct"),
         _sum_c(lambda a, D: T.linalg.pinv(a), "Ct") if T else None,
         _sum_c(lambda a, D: jnp.linalg.pinv(a), "Ct") if J else None,
         lambda a, D: np.linalg.pinv(a)),
        ("matrix_exp", "small", _sum_c(lambda a, D: tf.linalg.matrix_exp(a)),
         _sum_c(lambda a, D: T.linalg.matrix_exp(a)) if T else None,
         _sum_c(lambda a, D: jsla.expm(a)) if J else None,
         lambda a, D: sla.expm(a)),
        ("norm fro", "gen", _sum_c(lambda a, D: tf.linalg.norm(a), "c0"),
         _sum_c(lambda a, D: T.linalg.matrix_norm(a), "c0") if T else None,
         _sum_c(lambda a, D: jnp.linalg.norm(a), "c0") if J else None,
         lambda a, D: sla.norm(a)),
        ("norm nuc", "gen", _sum_c(lambda a, D: tf.linalg.norm(a, "nuc"), "c0"),
         _sum_c(lambda a, D: T.linalg.matrix_norm(a, "nuc"), "c0") if T else None,
         _sum_c(lambda a, D: jnp.linalg.norm(a, "nuc"), "c0") if J else None,
         lambda a, D: np.linalg.norm(a, "nuc")),
    ]
    return ops


def _inputs(n, rng):
    a = rng.standard_normal((n, n)) + 3 * np.eye(n)
    spd = a @ a.T / n + np.eye(n)
    return {"gen": a, "spd": spd, "upper": np.triu(a) + n * np.eye(n),
            "tall": rng.standard_normal((2 * n, n)), "small": a / np.linalg.norm(a, 1)}


def _data(n, rng):
    return {"C": rng.standard_normal((n, n)), "B": rng.standard_normal((n, n)),
            "b": rng.standard_normal((n, n)), "c": rng.standard_normal(n),
            "d": rng.standard_normal(n), "c0": np.float64(rng.standard_normal()),
            "Ct": rng.standard_normal((n, 2 * n))}


def _fwd_bwd_fns(a, D, f_tf, f_torch, f_jax):
    """{framework: callable computing value and gradient of the loss w.r.t. a}."""
    fns = {}

    def tenferro():
        x = tf.tensor(a, requires_grad=True)
        return tf.grad([f_tf(x, D)], [x])[0]
    fns["tenferro"] = tenferro
    if TORCH is not None and f_torch is not None:
        Dt = {k: TORCH.as_tensor(v) for k, v in D.items()}

        def torch_fb():
            x = TORCH.tensor(a, requires_grad=True)
            return TORCH.autograd.grad(f_torch(x, Dt), x)[0]
        fns["torch"] = torch_fb
    if JAX is not None and f_jax is not None:
        Dj = {k: jnp.asarray(v) for k, v in D.items()}
        aj = jnp.asarray(a)
        vg = JAX.value_and_grad(lambda x: f_jax(x, Dj))
        vg_jit = JAX.jit(vg)
        JAX.block_until_ready(vg_jit(aj))          # compile outside the timing

        fns["jax-jit"] = lambda: JAX.block_until_ready(vg_jit(aj))
        fns["jax eager"] = lambda: JAX.block_until_ready(vg(aj))
    return fns


def _check(fns, ref, name):
    """Every framework's gradient must equal tenferro's: they compute the same thing."""
    for k, fn in fns.items():
        if k == "base":
            continue
        g = fn()
        g = g.detach().numpy() if hasattr(g, "detach") else np.asarray(
            g[1] if isinstance(g, tuple) else g)
        if not np.allclose(g, ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max()):
            raise AssertionError(f"{name}: {k}'s gradient differs from tenferro's")


COLUMNS = ["tenferro", "torch", "jax-jit", "jax eager"]


def _row(label, res):
    cells = [f"{res['base'][0]:9.1f}"]
    for k in COLUMNS:
        cells.append(f"{res[k][0]:9.1f} ({res[k][1]:5.2f}x)" if k in res else f"{'-':>18}")
    return f"| {label:24} | " + " | ".join(cells) + " |"


def _header(base_name):
    return ("| workload                 | " + f"{base_name:>9} | "
            + " | ".join(f"{k + ' µs (ratio)':>18}" for k in COLUMNS) + " |\n"
            + "|" + "---|" * (2 + len(COLUMNS)))


def engine_rows():
    a = np.array([0.1, 0.2, 0.3, 0.4])
    print(_header("numpy µs"))

    def np_exp_sum():
        e = np.exp(a)
        return e.sum(), e

    fns = {"base": np_exp_sum}
    fns.update(_fwd_bwd_fns(a, {}, lambda x, D: x.exp().sum(),
                            (lambda x, D: x.exp().sum()) if TORCH else None,
                            (lambda x, D: jnp.exp(x).sum()) if JAX else None))
    print(_row("exp().sum(), 4 elements", round_robin(fns)), flush=True)

    def chain(x, mod):
        for _ in range(25):
            x = mod.tanh(mod.sin(x * 1.0001 + 0.1))
        return x.sum()

    def np_chain():
        xs, x = [], a
        for _ in range(25):
            y = x * 1.0001 + 0.1
            s = np.sin(y)
            t = np.tanh(s)
            xs.append((y, s, t))
            x = t
        g = np.ones_like(a)
        for y, s, t in reversed(xs):
            g = g * (1 - t * t) * np.cos(y) * 1.0001
        return x.sum(), g

    fns = {"base": np_chain}
    fns.update(_fwd_bwd_fns(a, {}, lambda x, D: chain(x, tf),
                            (lambda x, D: chain(x, TORCH)) if TORCH else None,
                            (lambda x, D: chain(x, jnp)) if JAX else None))
    res = round_robin(fns)
    per_op = {k: (v[0] / 101, v[1]) for k, v in res.items()}
    print(_row("100-op chain, µs per op", per_op), flush=True)


def linalg_rows(sizes, only):
    rng = np.random.default_rng(0)
    ratios = {}
    print()
    print(_header("scipy µs"))
    for n in sizes:
        X, D = _inputs(n, rng), _data(n, rng)
        for name, kind, f_tf, f_torch, f_jax, primal in _ops():
            if only and not any(name.startswith(o) for o in only):
                continue
            a = X[kind]
            fns = {"base": lambda a=a, primal=primal: primal(a, D)}
            fns.update(_fwd_bwd_fns(a, D, f_tf, f_torch, f_jax))
            _check(fns, fns["tenferro"]().numpy(), f"{name} n={n}")
            res = round_robin(fns)
            print(_row(f"{name} n={n}", res), flush=True)
            for k in COLUMNS:
                if k in res:
                    ratios.setdefault((k, n), []).append(res[k][1])
    for n in sizes:
        cells = []
        for k in COLUMNS:
            r = ratios.get((k, n))
            cells.append(f"{math.exp(np.mean(np.log(r))):17.2f}x" if r else f"{'-':>18}")
        print(f"| {'geometric mean n=' + str(n):24} | {'':9} | " + " | ".join(cells) + " |")


# ---- programs: loops of small ops (issue 27) ---------------------------------------------
# The tenferro programs are those of asv_bench/benchmarks/bench_programs.py (loaded by path,
# so that both time the same code); here are the PyTorch and JAX spellings of each.

def _load_programs():
    import importlib.util
    import pathlib
    path = (pathlib.Path(__file__).resolve().parents[1] / "asv_bench" / "benchmarks"
            / "bench_programs.py")
    spec = importlib.util.spec_from_file_location("_tenferro_bench_programs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _kalman_torch(P):
    """theta (torch, requires_grad) -> NLL: P.kalman_nll with the constants as tensors."""
    T = TORCH
    F0, H = T.as_tensor(P.F0), T.as_tensor(P.H)

    def nll_fn(theta, ys):
        F = T.tanh(theta[:4])[:, None] * F0
        Q = T.diag(T.exp(theta[4:8]))
        R = T.diag(T.exp(theta[8:10]))
        m, Pc = T.zeros(P.NX, dtype=T.float64), T.eye(P.NX, dtype=T.float64)
        nll = 0.5 * ys.numel() * math.log(2 * math.pi)
        for y in ys:
            m = F @ m
            Pc = F @ Pc @ F.T + Q
            v = y - H @ m
            HP = H @ Pc
            S = HP @ H.T + R
            L = T.linalg.cholesky(S)
            w = T.linalg.solve_triangular(L, v[:, None], upper=False)[:, 0]  # b: a matrix
            nll = nll + 0.5 * (w @ w) + T.log(T.diagonal(L)).sum()
            K = T.linalg.solve(S, HP).T
            m = m + K @ v
            Pc = Pc - K @ HP
        return nll
    return nll_fn


def _kalman_jax(P):
    """theta, ys -> NLL with lax.scan over the observations (jit it)."""
    F0, H = jnp.asarray(P.F0), jnp.asarray(P.H)

    def nll_fn(theta, ys):
        F = jnp.tanh(theta[:4])[:, None] * F0
        Q = jnp.diag(jnp.exp(theta[4:8]))
        R = jnp.diag(jnp.exp(theta[8:10]))

        def step(carry, y):
            m, Pc, nll = carry
            m = F @ m
            Pc = F @ Pc @ F.T + Q
            v = y - H @ m
            HP = H @ Pc
            S = HP @ H.T + R
            L = jnp.linalg.cholesky(S)
            w = jsla.solve_triangular(L, v, lower=True)
            nll = nll + 0.5 * (w @ w) + jnp.log(jnp.diagonal(L)).sum()
            K = jnp.linalg.solve(S, HP).T
            return (m + K @ v, Pc - K @ HP, nll), None

        init = (jnp.zeros(P.NX), jnp.eye(P.NX), 0.5 * ys.size * math.log(2 * math.pi))
        (_, _, nll), _ = JAX.lax.scan(step, init, ys)
        return nll
    return nll_fn


def _broadened_f(s, size, eps):
    """F_ij = d/(d² + ε²), d = s_j² − s_i², ε = size·eps·s_max² (tenferro's default)."""
    s2 = s * s
    d = s2[None, :] - s2[:, None]
    e = size * eps * s2[0]
    return d / (d * d + e * e)


def _svd_backward(U, S, Vh, gU, gS, gVh, xp, size, eps):
    """Ā = U [(F∘(UᵀŪ − ŪᵀU)) S + diag(S̄) + S (F∘(VᵀV̄ − V̄ᵀV))] Vᵀ for a square real
    matrix (Townsend, "Differentiating the singular value decomposition", 2016)."""
    F = _broadened_f(S, size, eps)
    core = xp.diag(gS)
    core = core + (F * (U.T @ gU - gU.T @ U)) * S[None, :]
    V, gV = Vh.T, gVh.T
    core = core + S[:, None] * (F * (V.T @ gV - gV.T @ V))
    return U @ core @ Vh


def _torch_svd():
    T = TORCH

    class BroadenedSVD(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            u, s, vh = T.linalg.svd(a, full_matrices=False)
            ctx.save_for_backward(u, s, vh)
            return u, s, vh

        @staticmethod
        def backward(ctx, gu, gs, gvh):
            u, s, vh = ctx.saved_tensors
            z = T.zeros_like
            return _svd_backward(u, s, vh, z(u) if gu is None else gu,
                                 z(s) if gs is None else gs, z(vh) if gvh is None else gvh,
                                 T, u.shape[0], float(np.finfo(np.float64).eps))
    return BroadenedSVD.apply


def _jax_svd():
    @JAX.custom_vjp
    def svd(a):
        return jnp.linalg.svd(a, full_matrices=False)

    def fwd(a):
        out = svd(a)
        return out, out

    def bwd(res, g):
        u, s, vh = res
        return (_svd_backward(u, s, vh, *g, jnp, u.shape[0],
                              float(np.finfo(np.float64).eps)),)
    svd.defvjp(fwd, bwd)
    return svd


def _ctmrg_step(C, T_, a, chi, xp, svd, norm):
    k = C.shape[0]
    M = xp.einsum("xy,yub,xla,uldr->adbr", C, T_, T_, a).reshape(2 * k, 2 * k)
    U = svd(M)[0]
    Pr = U[:, :chi]
    C = Pr.T @ M @ Pr
    Ta = xp.einsum("xlz,uldk->xukzd", T_, a).reshape(2 * k, 2, 2 * k)
    T_ = xp.einsum("ia,ikj,jb->akb", Pr, Ta, Pr)
    return C / norm(C), T_ / norm(T_)


def _ctmrg_lnz_peer(a, chi, steps, xp, svd, norm, scan=None):
    """P.ctmrg_lnz in torch or jax (``scan``: jax.lax.scan, for the steps at full chi)."""
    C = xp.einsum("uldr->dr", a)
    T_ = xp.einsum("uldr->ldr", a)
    done = 0
    while done < steps and (scan is None or C.shape[0] < chi):
        C, T_ = _ctmrg_step(C, T_, a, chi, xp, svd, norm)
        done += 1
    if done < steps:
        (C, T_), _ = scan(lambda ct, _: (_ctmrg_step(*ct, a, chi, xp, svd, norm), None),
                          (C, T_), None, length=steps - done)
    z1 = xp.einsum("ab,bic,cd,dje,ef,fkg,gh,hla,ijkl->", C, T_, C, T_, C, T_, C, T_, a)
    z4 = xp.einsum("ab,bc,cd,da->", C, C, C, C)
    z2 = xp.einsum("ab,bic,cd,de,eif,fa->", C, T_, C, C, T_, C)
    return xp.log(z1) + xp.log(z4) - 2 * xp.log(z2)


def _ising_tensor_peer(beta, xp):
    c, s = xp.sqrt(xp.cosh(beta)), xp.sqrt(xp.sinh(beta))
    W = xp.stack([xp.stack([c, s]), xp.stack([c, -s])])
    return xp.einsum("su,sl,sd,sr->uldr", W, W, W, W)


class _Program:
    """One program in the three frameworks: ``fns[k]()`` runs it once and returns what is
    compared (NumPy); ``jax_fresh()`` recompiles JAX's (for its compile time)."""

    def __init__(self, label, fns, rounds, jax_fresh=None, check=None):
        self.label, self.fns, self.rounds = label, fns, rounds
        self.jax_fresh, self.check = jax_fresh, check


def _programs(P, small, rounds):
    steps = 30 if small else 300
    chi, ctm_steps = (8, 40) if small else (16, 400)
    ys = P.kalman_data(steps)
    th0 = P.THETA0
    progs = []

    # --- Kalman value and gradient
    vg_tf = P.kalman_value_and_grad(ys)
    vg_tfc = P.kalman_value_and_grad(ys, compiled=True)
    fns = {"tenferro": lambda: vg_tf(th0), "tf.compile": lambda: vg_tfc(th0)}
    if TORCH is not None:
        nll_t, ys_t = _kalman_torch(P), TORCH.as_tensor(ys)

        def vg_torch(x):
            t = TORCH.tensor(x, requires_grad=True)
            val = nll_t(t, ys_t)
            (g,) = TORCH.autograd.grad(val, t)
            return val.item(), g.numpy()
        fns["torch"] = lambda: vg_torch(th0)
    if JAX is not None:
        nll_j, ys_j = _kalman_jax(P), jnp.asarray(ys)
        box = {}

        def fresh_vg():
            box["f"] = JAX.jit(JAX.value_and_grad(nll_j))

        def vg_jax(x):
            val, g = box["f"](jnp.asarray(x), ys_j)
            return float(val), np.asarray(g)
        fresh_vg()
        fns["jax-jit"] = lambda: vg_jax(th0)
    progs.append(_Program(f"Kalman T={steps} value+grad", fns, rounds,
                          fresh_vg if JAX is not None else None))

    # --- Kalman 10x10 Hessian
    h_tf = P.kalman_hessian(ys)
    fns = {"tenferro": lambda: np.asarray(h_tf(th0))}
    if TORCH is not None:
        fns["torch"] = lambda: TORCH.autograd.functional.hessian(
            lambda t: nll_t(t, ys_t), TORCH.tensor(th0)).numpy()
    if JAX is not None:
        hbox = {}

        def fresh_h():
            hbox["f"] = JAX.jit(JAX.hessian(nll_j))
        fresh_h()
        fns["jax-jit"] = lambda: np.asarray(hbox["f"](jnp.asarray(th0), ys_j))
    progs.append(_Program(f"Kalman T={steps} Hessian", fns, min(rounds, 3),
                          fresh_h if JAX is not None else None))

    # --- the L-BFGS-B fit: JAX's includes its compilation (a fresh jit per run)
    def fit(vg):
        r = minimize(vg, th0, jac=True, method="L-BFGS-B")
        return np.array([r.fun, r.nfev, *r.x])
    fns = {"tenferro": lambda: fit(vg_tf),
           # a fresh tf.compile per fit: its recording is part of the time
           "tf.compile": lambda: fit(P.kalman_value_and_grad(ys, compiled=True))}
    if TORCH is not None:
        fns["torch"] = lambda: fit(vg_torch)
    if JAX is not None:
        def fit_jax():
            JAX.clear_caches()
            fresh_vg()
            return fit(vg_jax)
        fns["jax-jit"] = fit_jax
    progs.append(_Program(f"Kalman T={steps} L-BFGS-B fit", fns, rounds, check=_check_fits))

    # --- CTMRG
    beta = P.BETA
    fns = {"tenferro": lambda: np.array(P.ctmrg_value_and_grad(beta, chi, ctm_steps)),
           "tf.compile": lambda: np.array(P.ctmrg_value_and_grad(beta, chi, ctm_steps,
                                                                 compiled=True))}
    if TORCH is not None:
        svd_t = _torch_svd()

        def ctm_torch():
            b = TORCH.tensor(beta, dtype=TORCH.float64, requires_grad=True)
            lnz = _ctmrg_lnz_peer(_ising_tensor_peer(b, TORCH), chi, ctm_steps, TORCH,
                                  svd_t, TORCH.linalg.norm)
            (g,) = TORCH.autograd.grad(lnz, b)
            return np.array([lnz.item(), g.item()])
        fns["torch"] = ctm_torch
    if JAX is not None:
        svd_j = _jax_svd()
        cbox = {}

        def fresh_c():
            cbox["f"] = JAX.jit(JAX.value_and_grad(lambda b: _ctmrg_lnz_peer(
                _ising_tensor_peer(b, jnp), chi, ctm_steps, jnp, svd_j, jnp.linalg.norm,
                JAX.lax.scan)))
        fresh_c()

        def ctm_jax():
            val, g = cbox["f"](jnp.float64(beta))
            return np.array([float(val), float(g)])
        fns["jax-jit"] = ctm_jax
    progs.append(_Program(f"CTMRG chi={chi} x {ctm_steps} value+grad", fns, rounds,
                          fresh_c if JAX is not None else None))
    return progs


# ---- CTMRG through its fixed point (issue 28 item 5) -------------------------------------
# tenferro: examples/ctmrg_ising.py (tf.fixed_point with a sign gauge; the implicit
# derivative by GMRES on the vjp operator, as custom_root takes it for 528 unknowns). JAX:
# the same step, gauge, stopping rule (step <= 1e-10 ||x||) and implicit derivative (a
# custom_vjp whose pullback solves (I - dG/dx)^T lam = xbar by GMRES to 1e-12), jitted.

def _load_example(name):
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_tenferro_example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ctmrg_fixed_point_jax(E, chi):
    """jit(value_and_grad(beta -> ln Z/N)) of E's algorithm in JAX (E: the example)."""
    jax = JAX
    from jax.scipy.sparse.linalg import gmres

    def site(beta):
        c, s = jnp.sqrt(jnp.cosh(beta)), jnp.sqrt(jnp.sinh(beta))
        w = jnp.stack([jnp.stack([c, s]), jnp.stack([c, -s])])
        return jnp.einsum("su,sl,sd,sr->uldr", w, w, w, w)

    def unpack(x):
        return x[:chi], x[chi:].reshape((chi, 2, chi))

    def pack(c, t):
        return jnp.concatenate([c, t.reshape(-1)])

    def step(x, beta):
        c, t = unpack(x)
        a = site(beta)
        m = jnp.einsum("a,api,aqj,pquv->iujv", c, t, t, a).reshape((2 * chi, 2 * chi))
        w, u = jnp.linalg.eigh(0.5 * (m + m.T))
        keep = jnp.argsort(-jnp.abs(jax.lax.stop_gradient(w)))[:chi]
        p = u[:, keep].reshape((chi, 2, chi))
        c_new = w[keep]
        t_new = jnp.einsum("api,aqb,uqvp,bvj->iuj", p, t, a, p)
        t_new = 0.5 * (t_new + jnp.transpose(t_new, (2, 1, 0)))
        return pack(c_new / jnp.linalg.norm(c_new), t_new / jnp.linalg.norm(t_new))

    def gauge(x):
        c, t = unpack(x)
        col = jax.lax.stop_gradient(t[:, :, 0])
        s = jnp.sign(col[jnp.arange(chi), jnp.argmax(jnp.abs(col), axis=1)])
        s = jnp.where(s == 0, 1.0, s)
        return pack(c, t * s[:, None, None] * s[None, None, :])

    def G(x, beta):
        return gauge(step(x, beta))

    @jax.custom_vjp
    def fixed_point(beta, x0):
        def cond(state):
            x, x_prev, k = state
            return (k < 5000) & (jnp.linalg.norm(x - x_prev) > 1e-10 * jnp.linalg.norm(x))

        def body(state):
            x, _, k = state
            return G(x, beta), x, k + 1
        x1 = G(x0, beta)
        x, _, _ = jax.lax.while_loop(cond, body, (G(x1, beta), x1, 1))
        return x

    def fp_fwd(beta, x0):
        x = fixed_point(beta, x0)
        return x, (beta, x)

    def fp_bwd(res, xbar):
        beta, x = res
        _, vjp_x = jax.vjp(lambda y: G(y, beta), x)
        lam, _ = gmres(lambda v: v - vjp_x(v)[0], xbar, tol=1e-12, atol=0.0,
                       restart=50, maxiter=100)
        _, vjp_b = jax.vjp(lambda b: G(x, b), beta)
        return vjp_b(lam)[0], jnp.zeros_like(x)

    fixed_point.defvjp(fp_fwd, fp_bwd)

    def ln_kappa(x, beta):
        c, t = unpack(x)
        a = site(beta)
        env = jnp.einsum("a,apc,c,cqe,e,erg,g,gsa->pqrs", c, t, c, t, c, t, c, t)
        z_site = jnp.sum(env * a)
        z_corners = jnp.sum(c ** 4)
        z_edges = jnp.einsum("a,apc,c,c,cpa,a->", c, t, c, c, t, c)
        return jnp.log(z_site * z_corners / z_edges ** 2)

    def lnz(beta, x0):
        return ln_kappa(fixed_point(beta, x0), beta)

    return jax.jit(jax.value_and_grad(lnz))


def _fixed_point_programs(rounds, chi=16, beta=0.40):
    E = _load_example("ctmrg_ising")
    x0 = E.start(beta, chi)

    def tf_run(compile):
        b = tf.tensor(beta, requires_grad=True)
        lnz = E.ctmrg_ln_z(b, chi, compile=compile)
        (g,) = tf.grad([lnz], [b])
        return np.array([float(lnz), float(g)])
    # tenferro: the eager step; tf.compile: fixed_point(compile=True), the step replayed
    fns = {"tenferro": lambda: tf_run(False), "tf.compile": lambda: tf_run(True)}
    recompile = None
    if JAX is not None:
        box = {}

        def _recompile():
            box["f"] = _ctmrg_fixed_point_jax(E, chi)
        recompile = _recompile
        recompile()

        def jax_run():
            val, g = box["f"](jnp.float64(beta), jnp.asarray(x0))
            return np.array([float(val), float(g)])
        fns["jax-jit"] = jax_run
    return [_Program(f"CTMRG fixed point chi={chi} beta={beta} value+grad (implicit)",
                     fns, rounds, recompile)]


def _flat(r):
    if isinstance(r, tuple):
        return np.concatenate([np.ravel(np.asarray(x, np.float64)) for x in r])
    return np.ravel(np.asarray(r, np.float64))


def _check_fits(label, results):
    """The fits must end at the same minimum: equal NLL to 1e-9 relative and equal
    parameters to 1e-4 (L-BFGS-B's default tolerances; the evaluation counts may differ)."""
    ref = results["tenferro"]
    for k, r in results.items():
        if (abs(r[0] - ref[0]) > 1e-9 * abs(ref[0])
                or not np.allclose(r[2:], ref[2:], rtol=0, atol=1e-4)):
            raise AssertionError(f"{label}: {k}'s fit ended at NLL {r[0]!r}, x {r[2:]} "
                                 f"(tenferro: {ref[0]!r}, x {ref[2:]})")


def _check_agree(label, results):
    """Values and gradients (and Hessians) of the three frameworks agree in float64."""
    ref = _flat(results["tenferro"])
    for k, r in results.items():
        r = _flat(r)
        if not np.all(np.isfinite(r)) or not np.allclose(r, ref, rtol=1e-7,
                                                         atol=1e-9 * np.abs(ref).max()):
            raise AssertionError(f"{label}: {k} computes {r}, tenferro {ref}")


# CPU time of the process (all its threads), not wall time: on a shared machine whose
# load changes by several times within a minute, the CPU time of a one-thread program
# moves far less; ``--wall`` times with the wall clock instead.
_clock = time.process_time


def _time_once(fn):
    t0 = _clock()
    fn()
    return _clock() - t0


def _time_program(prog, first, min_sample=0.2):
    """{framework: seconds per call in each of ``prog.rounds`` round-robin rounds}; in
    each round each framework runs enough calls to fill ``min_sample`` seconds, counted
    from ``first`` (the seconds of an untimed call)."""
    number = {k: max(1, int(min_sample / max(first[k], 1e-6))) for k in prog.fns}
    times = {k: [] for k in prog.fns}
    for _ in range(prog.rounds):
        for k, fn in prog.fns.items():
            t0 = _clock()
            for _ in range(number[k]):
                fn()
            times[k].append((_clock() - t0) / number[k])
    return times


def _jax_compile_s(prog, steady):
    """JAX's compile time: first call after clearing its caches minus a compiled call."""
    JAX.clear_caches()
    prog.jax_fresh()
    return _time_once(prog.fns["jax-jit"]) - steady


def _fmt_s(t):
    return f"{t * 1e3:8.1f} ms" if t < 1 else f"{t:8.2f} s "


def programs_main(argv):
    import argparse

    ap = argparse.ArgumentParser(prog="bench_peers.py programs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--wall", action="store_true", help="wall-clock time, not CPU time")
    ap.add_argument("--only-fixed-point", action="store_true",
                    help="only the fixed-point CTMRG (issue 28)")
    ap.add_argument("--only", metavar="TEXT",
                    help="only the programs whose label contains TEXT (e.g. Kalman)")
    opts = ap.parse_args(argv)
    global _clock
    if opts.wall:
        _clock = time.perf_counter
    P = _load_programs()
    import scipy
    print(f"one thread; numpy {np.__version__}, scipy {scipy.__version__}, tenferro "
          f"{tf.__version__}" + (f", torch {TORCH.__version__}" if TORCH else ", no torch")
          + (f", jax {JAX.__version__}" if JAX else ", no jax")
          + f"; {'wall' if opts.wall else 'CPU'} time, medians of round-robin rounds; "
          "ratios = the medians of the per-round ratios")
    print("| program | rounds | tenferro | tf.compile | torch | jax-jit | jax compile "
          "| tf ÷ jax-jit | tf.compile ÷ jax-jit | tf ÷ torch |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    progs = ([] if opts.only_fixed_point else _programs(P, opts.small, opts.rounds)) \
        + _fixed_point_programs(opts.rounds, chi=8 if opts.small else 16)
    if opts.only:
        progs = [p for p in progs if opts.only in p.label]
    for prog in progs:
        results, first = {}, {}
        for k, fn in prog.fns.items():
            t0 = _clock()
            results[k] = fn()
            first[k] = _clock() - t0
        (prog.check or _check_agree)(prog.label, results)
        times = _time_program(prog, first)
        med = {k: float(np.median(v)) for k, v in times.items()}

        def ratio(k, base="tenferro"):
            if k not in times or base not in times:
                return f"{'-':>8}"
            return f"{np.median(np.array(times[base]) / np.array(times[k])):7.2f}x"
        comp = (_fmt_s(_jax_compile_s(prog, med["jax-jit"]))
                if JAX is not None and prog.jax_fresh else f"{'-':>11}")
        cells = [_fmt_s(med[k]) if k in med else f"{'-':>11}"
                 for k in ("tenferro", "tf.compile", "torch", "jax-jit")]
        label = prog.label
        if prog.check is _check_fits:
            label += " (evaluations: " + ", ".join(
                f"{k} {int(r[1])}" for k, r in results.items()) + ")"
        print(f"| {label} | {prog.rounds} | " + " | ".join(cells)
              + f" | {comp} | {ratio('jax-jit')} | {ratio('jax-jit', 'tf.compile')} "
              f"| {ratio('torch')} |", flush=True)


# ---- matrix functions: expm, sqrtm, logm against SciPy and a finite-difference gradient ---

def _near_identity(n, rng):
    """I + E with ‖E‖₂ about 1/2: every eigenvalue within 1/2 of 1 (off the branch cut of
    sqrtm and logm, whose values stay real)."""
    return np.eye(n) + 0.25 * rng.standard_normal((n, n)) / math.sqrt(n)


def matfunc_rows(sizes):
    """expm, sqrtm, logm: ``sum(C * f(A))``, float64. Columns: SciPy's primal (the
    baseline); tenferro's forward and forward + backward; the cost of the gradient by
    central finite differences, 2·n² calls of SciPy's primal (computed: one primal's
    median times 2n², not run); tenferro's f+b ÷ that; PyTorch and JAX where they have
    the op (torch.linalg.matrix_exp; jax.scipy.linalg.expm, and sqrtm forward only: JAX
    has no derivative of its Schur decomposition, and no logm)."""
    rng = np.random.default_rng(0)
    print()
    print("| op | n | scipy µs | tenferro fwd µs (ratio) | tenferro f+b µs (ratio) | "
          "FD gradient µs (2n² primals) | tenferro f+b ÷ FD | torch f+b µs (ratio) | "
          "jax-jit µs (ratio) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        A = _near_identity(n, rng)
        C = rng.standard_normal((n, n))
        D = {"C": C}
        ops = [("expm", sla.expm, tf.linalg.expm,
                (lambda x: TORCH.linalg.matrix_exp(x)) if TORCH else None,
                (lambda x: jsla.expm(x)) if JAX else None, True),
               ("sqrtm", sla.sqrtm, tf.linalg.sqrtm, None,
                (lambda x: jsla.sqrtm(x).real) if JAX else None, False),
               ("logm", sla.logm, tf.linalg.logm, None, None, True)]
        for name, primal, f_tf, f_torch, f_jax, jax_grad in ops:
            fns = {"base": lambda primal=primal: primal(A)}
            tA = tf.tensor(A)
            fns["tf fwd"] = lambda f_tf=f_tf: tf.sum(C * f_tf(tA))
            fb = _fwd_bwd_fns(A, D, lambda x, D, f=f_tf: tf.sum(D["C"] * f(x)),
                              (lambda x, D, f=f_torch: (D["C"] * f(x)).sum())
                              if f_torch else None,
                              (lambda x, D, f=f_jax: (D["C"] * f(x)).sum())
                              if (f_jax and jax_grad) else None)
            fns.update({k: v for k, v in fb.items() if k in ("tenferro", "torch", "jax-jit")})
            if f_jax is not None and not jax_grad:   # forward only
                Aj = jnp.asarray(A)
                fwd = JAX.jit(lambda x, f=f_jax: (jnp.asarray(C) * f(x)).sum())
                JAX.block_until_ready(fwd(Aj))
                fns["jax-jit"] = lambda fwd=fwd: JAX.block_until_ready(fwd(Aj))
            ref = fns["tenferro"]().numpy()
            _check({k: v for k, v in fns.items() if k in ("torch",) or
                    (k == "jax-jit" and jax_grad)}, ref, f"{name} n={n}")
            if n <= 16:   # the gradient itself against central differences of SciPy's
                h = 1e-6
                fd = np.empty_like(A)
                for i in range(n):
                    for j in range(n):
                        E = np.zeros_like(A)
                        E[i, j] = h
                        fd[i, j] = (np.sum(C * primal(A + E).real)
                                    - np.sum(C * primal(A - E).real)) / (2 * h)
                if not np.allclose(fd, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max()):
                    raise AssertionError(f"{name} n={n}: tenferro's gradient is not SciPy's FD")
            res = round_robin(fns)
            base = res["base"][0]
            fd_us = 2 * n * n * base
            cell = {k: f"{res[k][0]:.1f} ({res[k][1]:.2f}x)" if k in res else "-"
                    for k in ("tf fwd", "tenferro", "torch", "jax-jit")}
            if "jax-jit" in res and not jax_grad:
                cell["jax-jit"] += " fwd only"
            print(f"| {name} | {n} | {base:.1f} | {cell['tf fwd']} | {cell['tenferro']} | "
                  f"{fd_us:.0f} | {res['tenferro'][0] / fd_us:.2g} | {cell['torch']} | "
                  f"{cell['jax-jit']} |", flush=True)


def main():
    args = sys.argv[1:]
    if args[:1] == ["programs"]:
        programs_main(args[1:])
        return
    if args[:1] == ["matfuncs"]:
        matfunc_rows([int(x) for x in args[1:] if x.isdigit()] or [16, 64, 256])
        return
    sizes = [int(x) for x in args if x.isdigit()] or [16, 64, 256]
    only = [x for x in args if not x.isdigit()]
    import scipy
    print(f"one thread; numpy {np.__version__}, scipy {scipy.__version__}, tenferro "
          f"{tf.__version__}" + (f", torch {TORCH.__version__}" if TORCH else ", no torch")
          + (f", jax {JAX.__version__}" if JAX else ", no jax")
          + f"; medians of {ROUNDS} round-robin rounds; ratio = time / baseline of the round")
    if not only:
        engine_rows()
    linalg_rows(sizes, only)


if __name__ == "__main__":
    main()
