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
"""
import math
import os
import sys
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


def main():
    args = sys.argv[1:]
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
