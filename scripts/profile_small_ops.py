"""Where the time of a loop of small ops goes (issue 27), on one thread.

For each call shape of the programs in asv_bench/benchmarks/bench_programs.py (the Kalman
filter, CTMRG) it measures, per op application:

* fwd: recording the op on tensors that require grad (K = 64 applications, CPU time);
* bwd: its share of a backward pass: K calls of ``tf.grad`` of ``op(*leaves).sum()`` minus
  K calls of ``tf.grad`` of ``z.sum()`` for a leaf z of the op's output shape, divided by
  K, so that grad's fixed cost and the sum drop out;
* dual: the op on dual tensors (forward mode, the inner half of tf.hessian);
* the NumPy/SciPy spelling of the same primal (the floor a user compares with);
* Python function calls per op, forward and backward (cProfile's count: deterministic),
  and the functions with the most own time under cProfile.

    python scripts/profile_small_ops.py                 # the table (about a minute)
    python scripts/profile_small_ops.py --only chol solve   # rows whose label has a word
    python scripts/profile_small_ops.py --program kalman    # cProfile of one program:
    python scripts/profile_small_ops.py --program ctmrg     #   forward and backward apart
    python scripts/profile_small_ops.py --program hessian   # tf.hessian's passes

Instruction counts (callgrind: independent of the load on a shared machine): run

    valgrind --tool=callgrind --dump-before=sys_getswitchinterval \\
        --callgrind-out-file=/tmp/cg/out python scripts/profile_small_ops.py --callgrind /tmp/cg
    python scripts/profile_small_ops.py --annotate /tmp/cg

The ``--callgrind`` run calls ``sys.getswitchinterval`` (C function
``sys_getswitchinterval``, which nothing else calls) as a marker before and after each
measured segment, so every other dump callgrind writes is one segment (K
forward ops; K backward passes with the op; K without); ``--annotate`` prints instructions per
op, forward and backward, and the C functions with the most instructions in each
(CPython's interpreter, NumPy's dispatch, the Cython engine, LAPACK), from
``callgrind_annotate``.

Targets of issue 27: about 1 µs forward and 1.5 µs backward per small op.
"""
import argparse
import cProfile
import gc
import glob
import json
import os
import pstats
import re
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro import forward as fw  # noqa: E402

K = 64                 # op applications per sample
REPEAT = 9             # samples; the median is reported
FWD_TARGET, BWD_TARGET = 1.0, 1.5   # µs, issue 27
SEGMENTS_FILE = "segments.json"


def _inputs():
    rng = np.random.default_rng(0)
    a4 = rng.standard_normal((4, 4))
    s2 = np.array([[2.0, 0.3], [0.3, 1.5]])
    m32 = rng.standard_normal((32, 32))
    c16, t16 = rng.standard_normal((16, 16)), rng.standard_normal((16, 2, 16))
    a2222 = rng.standard_normal((2, 2, 2, 2))
    return dict(
        A4=a4, P4=a4 @ a4.T + np.eye(4), v4=rng.standard_normal(4), H=rng.standard_normal((2, 4)),
        HT=rng.standard_normal((4, 2)), v2=rng.standard_normal(2), S2=s2,
        L2=np.linalg.cholesky(s2), B24=rng.standard_normal((2, 4)),
        K42=rng.standard_normal((4, 2)), th=rng.standard_normal(10), col=rng.standard_normal((4, 1)),
        s0=np.float64(0.7), pos2=np.array([1.3, 0.8]), M32=m32, C16=c16, T16=t16, a=a2222, U32=np.linalg.svd(m32)[0],
        Ta=rng.standard_normal((32, 2, 32)), E=rng.standard_normal((16, 2, 16, 2)),
        P1632=rng.standard_normal((16, 32)))


D = _inputs()


def _spec():
    """(label, names of the differentiable inputs, tenferro op, NumPy/SciPy floor, consts).
    The op takes the tensors in the order of the names."""
    H, HT, m4 = D["H"], D["HT"], D["v4"]
    return [
        # the Kalman filter's step
        ("ndarray(2x4) @ T(4)", ["v4"], lambda m: H @ m, lambda m: H @ m),
        ("T(4x4) @ ndarray(4)", ["A4"], lambda F: F @ m4, lambda F: F @ m4),
        ("T(4x4) @ T(4)", ["A4", "v4"], lambda F, m: F @ m, None),
        ("T(4x4) @ T(4x4)", ["A4", "P4"], lambda F, P: F @ P, None),
        ("ndarray(2x4) @ T(4x4)", ["P4"], lambda P: H @ P, lambda P: H @ P),
        ("T(2x4) @ ndarray(4x2)", ["B24"], lambda B: B @ HT, lambda B: B @ HT),
        ("T(4x2) @ T(2x4)", ["K42", "B24"], lambda K_, B: K_ @ B, None),
        ("T(4x2) @ T(2)", ["K42", "v2"], lambda K_, v: K_ @ v, None),
        ("T(2) @ T(2) (dot)", ["v2"], lambda w: w @ w, None),
        ("T(4x4).T", ["A4"], lambda F: F.T, lambda F: F.T),
        ("T(4x4) + T(4x4)", ["A4", "P4"], lambda a, b: a + b, None),
        ("T(4x4) - T(4x4)", ["A4", "P4"], lambda a, b: a - b, None),
        ("ndarray(2) - T(2)", ["v2"], lambda v: D["S2"][0] - v, lambda v: D["S2"][0] - v),
        ("T(4,1) * ndarray(4x4)", ["col"], lambda c: c * D["A4"], lambda c: c * D["A4"]),
        ("0.5 * T()", ["s0"], lambda s: 0.5 * s, lambda s: 0.5 * s),
        ("T() + T()", ["s0", "s0"], lambda a, b: a + b, None),
        ("cholesky T(2x2)", ["S2"], tf.linalg.cholesky, np.linalg.cholesky),
        ("solve_triangular T(2x2), T(2)", ["L2", "v2"],
         lambda L, v: tf.linalg.solve_triangular(L, v, lower=True),
         lambda L, v: sla.solve_triangular(L, v, lower=True)),
        ("solve_triangular T(2x2), T(2x4)", ["L2", "B24"],
         lambda L, B: tf.linalg.solve_triangular(L, B, lower=True),
         lambda L, B: sla.solve_triangular(L, B, lower=True)),
        ("solve T(2x2), T(2x4)", ["S2", "B24"], tf.linalg.solve, np.linalg.solve),
        ("solve T(2x2), T(2)", ["S2", "v2"], tf.linalg.solve, np.linalg.solve),
        ("diagonal T(2x2)", ["L2"], tf.diagonal, np.diagonal),
        ("log T(2)", ["pos2"], tf.log, np.log),
        ("T(2).sum()", ["v2"], lambda v: v.sum(), lambda v: v.sum()),
        ("T(4x4).sum()", ["A4"], lambda v: v.sum(), lambda v: v.sum()),
        # the parameters' setup (once per call of the Kalman NLL)
        ("T(10)[:4]", ["th"], lambda t: t[:4], lambda t: t[:4]),
        ("T(4)[:, None]", ["v4"], lambda t: t[:, None], lambda t: t[:, None]),
        ("tanh T(4)", ["v4"], tf.tanh, np.tanh),
        ("exp T(4)", ["v4"], tf.exp, np.exp),
        ("diag T(4)", ["v4"], tf.diag, np.diag),
        # CTMRG's step (chi 16)
        ("einsum C T T a (chi 16)", ["C16", "T16", "T16", "a"],
         lambda C, T1, T2, a: tf.einsum("xy,yub,xla,uldr->adbr", C, T1, T2, a),
         lambda C, T1, T2, a: np.einsum("xy,yub,xla,uldr->adbr", C, T1, T2, a,
                                        optimize=True)),
        ("T(16,2,16,2).reshape(32,32)", ["E"], lambda t: t.reshape(32, 32),
         lambda t: t.reshape(32, 32)),
        ("svd T(32x32)", ["M32"], tf.linalg.svd, np.linalg.svd),
        ("T(32x32)[:, :16]", ["U32"], lambda u: u[:, :16], lambda u: u[:, :16]),
        ("T(16x32) @ T(32x32)", ["P1632", "M32"], lambda p, m: p @ m, None),
        ("einsum P Ta P (chi 16)", ["U32", "Ta"],
         lambda p, t: tf.einsum("ia,ikj,jb->akb", p, t, p),
         lambda p, t: np.einsum("ia,ikj,jb->akb", p, t, p, optimize=True)),
        ("norm T(16x16)", ["C16"], tf.linalg.norm, np.linalg.norm),
        ("T(16x16) / T()", ["C16", "s0"], lambda c, s: c / s, None),
    ]


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _leaves(names):
    return [tf.tensor(D[n], requires_grad=True) for n in names]


def _graphs(names, op, k, with_op=True):
    """k single-root graphs for tf.grad: ``op(*leaves).sum()`` (with_op) or, as the
    baseline, ``z.sum()`` for a leaf z of the op's output shape, the same list of inputs
    (z in place of the first leaf; the others are then unreachable). Returns a list of
    (root, inputs)."""
    graphs = []
    for _ in range(k):
        xs = _leaves(names)
        y = _first(op(*xs))
        if not with_op:
            xs[0] = tf.tensor(np.ones(y.shape), requires_grad=True)
            y = xs[0]
        graphs.append((y.sum(), xs))
    return graphs


def _grads(graphs):
    for root, xs in graphs:
        tf.grad([root], xs)


def _cpu_median(fn, prepare=None, repeat=REPEAT):
    """Median CPU seconds of fn(prepare()) (prepare untimed)."""
    ts = []
    for _ in range(repeat):
        arg = prepare() if prepare else None
        t0 = time.process_time()
        fn(arg)
        ts.append(time.process_time() - t0)
    return float(np.median(ts))


def _fwd_us(names, op):
    xs = _leaves(names)
    return _cpu_median(lambda _: [op(*xs) for _ in range(K)]) / K * 1e6


def _bwd_us(names, op):
    """The op's share of a backward pass: grad of op(x).sum() minus grad of z.sum()."""
    t1 = _cpu_median(_grads, lambda: _graphs(names, op, K))
    t0 = _cpu_median(_grads, lambda: _graphs(names, op, K, with_op=False))
    return (t1 - t0) / K * 1e6


def _dual_us(names, op):
    with fw.dual_level():
        xs = [fw.make_dual(tf.tensor(D[n]), np.ones_like(D[n])) for n in names]
        return _cpu_median(lambda _: [op(*xs) for _ in range(K)]) / K * 1e6


def _np_us(names, np_op):
    if np_op is None:
        return None
    arrs = [D[n] for n in names]
    return _cpu_median(lambda _: [np_op(*arrs) for _ in range(K)]) / K * 1e6


def _profile(fn):
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    return pstats.Stats(pr)


def _calls_and_top(stats, per, n=3,
                   skip=("<lambda>", "<listcomp>", "_grads", "grad", "_run", "sum", "_np_sum")):
    """(Python function calls per op, the n functions with most own time)."""
    rows = []
    for (file, line, name), (cc, nc, tt, ct, callers) in stats.stats.items():
        if name in skip or "disable" in name:
            continue
        short = os.path.basename(file).replace(".py", "") + "." + name if file != "~" else name
        rows.append((tt, short))
    rows.sort(reverse=True)
    return stats.total_calls / per, [r[1] for r in rows[:n]]


def _calls(names, op):
    xs = _leaves(names)
    fstats = _profile(lambda: [op(*xs) for _ in range(K)])
    fcalls, ftop = _calls_and_top(fstats, K)
    g1, g0 = _graphs(names, op, K), _graphs(names, op, K, with_op=False)
    bstats = _profile(lambda: _grads(g1))
    b0 = _profile(lambda: _grads(g0))
    bcalls = (bstats.total_calls - b0.total_calls) / K
    _, btop = _calls_and_top(bstats, K)
    return fcalls, ftop, bcalls, btop


def table(only):
    print(f"per op, µs of CPU time (median of {REPEAT} samples of {K} applications); calls: "
          "Python function calls per op (cProfile); * misses the target (fwd > 1 µs, "
          "bwd > 1.5 µs)")
    print("| call shape | numpy µs | fwd µs | bwd µs | dual fwd µs | calls fwd/bwd | "
          "most own time, forward | most own time, backward |\n|---|---|---|---|---|---|---|---|")
    for label, names, op, np_op in _spec():
        if only and not any(o.lower() in label.lower() for o in only):
            continue
        npu, f, b, d = _np_us(names, np_op), _fwd_us(names, op), _bwd_us(names, op), \
            _dual_us(names, op)
        fc, ftop, bc, btop = _calls(names, op)
        star = lambda v, t: f"{v:.2f}{'*' if v > t else ''}"  # noqa: E731
        print(f"| {label} | {'-' if npu is None else f'{npu:.2f}'} | {star(f, FWD_TARGET)} | "
              f"{star(b, BWD_TARGET)} | {d:.2f} | {fc:.0f} / {bc:.0f} | {', '.join(ftop)} | "
              f"{', '.join(btop)} |", flush=True)


# ---- callgrind ------------------------------------------------------------------------------

def callgrind(only, outdir):
    marker = sys.getswitchinterval   # CPython's C function sys_getswitchinterval
    labels = []   # one per dump: None (between segments) or (shape, kind)

    def segment(label, fn):
        marker()     # dumps what ran since the last marker: not a segment
        labels.append(None)
        fn()
        marker()     # dumps the segment
        labels.append(label)

    for label, names, op, _ in _spec():
        if only and not any(o.lower() in label.lower() for o in only):
            continue
        xs = _leaves(names)
        [op(*xs) for _ in range(4)]     # warm caches (einsum paths, imports)
        segment((label, "fwd"), lambda: [op(*xs) for _ in range(K)])
        g = _graphs(names, op, K)
        segment((label, "bwd"), lambda: _grads(g))
        g = _graphs(names, op, K, with_op=False)
        segment((label, "bwd0"), lambda: _grads(g))
    marker()
    labels.append(None)
    with open(os.path.join(outdir, SEGMENTS_FILE), "w") as f:
        json.dump(labels, f)


_CATEGORIES = [          # (name, substring of the object file in callgrind's [...] or,
    ("BLAS/LAPACK", "openblas"),                        # for inlined code, of the source;
    ("interp", "libpython"), ("interp", "bin/python"),  # the first that matches)
    ("interp", "/Python-3."), ("interp", "/Include/"), ("numpy", "numpy"),
    ("tenferro C", "tenferro"), ("BLAS/LAPACK", "scipy"),
    ("libc", "libc.so"), ("libc", "libm.so")]
CATEGORY_NAMES = ["interp", "numpy", "tenferro C", "BLAS/LAPACK", "libc", "other"]


def _category(obj):
    for name, key in _CATEGORIES:
        if key in obj:
            return name
    return "other"


def _short(fn):
    """__pyx_f_8tenferro_8_kernels_4tape__apply1 -> tape._apply1 (Cython's mangling)."""
    m = re.search(r"__pyx_(?:pw|pf|f)_8tenferro_8_kernels_\d+(\w+?)_\d*(\w+)", fn)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    return fn


def _annotate_file(path):
    """(total Ir, {category: own Ir}, {function: own Ir}) of one dump. The frames that
    were active when the dump was taken (the script's loop and everything above it) show
    the whole segment as their cost and are left out."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", path], capture_output=True,
                         text=True, check=True).stdout
    total = None
    cats = dict.fromkeys(CATEGORY_NAMES, 0)
    fns = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*?)(?:\s+\[(.*)\])?$", line)
        if not m or total is None or ":" not in m.group(2):
            continue
        ir = int(m.group(1).replace(",", ""))
        if ir >= 0.99 * total:
            continue
        src, fn = m.group(2).rsplit(":", 1)
        cats[_category(m.group(3) or src)] += ir
        fns[fn] = fns.get(fn, 0) + ir
    return total, cats, fns


def annotate(outdir):
    with open(os.path.join(outdir, SEGMENTS_FILE)) as f:
        labels = json.load(f)
    dumps = [d for d in glob.glob(os.path.join(outdir, "out.*")) if d.rsplit(".", 1)[1].isdigit()]
    dumps.sort(key=lambda p: int(p.rsplit(".", 1)[1]))
    if len(dumps) < len(labels):
        raise SystemExit(f"{len(dumps)} dumps for {len(labels)} segments: was the run made "
                         f"with --dump-before=sys_getswitchinterval?")
    res = {}
    for lab, path in zip(labels, dumps):
        if lab is not None:
            res[tuple(lab)] = _annotate_file(path)
    print("instructions (Ir) per op; shares of the op's own instructions: CPython (the "
          "interpreter running tenferro's Python, object allocation) / NumPy / tenferro's "
          "compiled kernels / BLAS and LAPACK / libc (malloc, memset) / other; the tenferro "
          "C functions with most instructions")
    print("| call shape | fwd Ir | fwd shares % | bwd Ir | bwd shares % | tenferro C, fwd; bwd |"
          "\n|---|---|---|---|---|---|")
    for label in dict.fromkeys(k[0] for k in res):
        ft, fc, ff = res[(label, "fwd")]
        bt, bc, bf = res[(label, "bwd")]
        b0t, b0c, b0f = res[(label, "bwd0")]
        bc = {k: bc[k] - b0c[k] for k in bc}
        bf = {k: v - b0f.get(k, 0) for k, v in bf.items()}

        def shares(c, tot):
            return " / ".join(f"{100 * c[k] / max(tot, 1):.0f}" for k in CATEGORY_NAMES)

        def top_c(fns):
            rows = sorted(((v, k) for k, v in fns.items() if "tenferro" in k or "__pyx" in k),
                          reverse=True)[:2]
            return ", ".join(f"{_short(k)} {v / K:,.0f}" for v, k in rows if v > 0)
        print(f"| {label} | {ft / K:,.0f} | {shares(fc, ft)} | {(bt - b0t) / K:,.0f} | "
              f"{shares(bc, bt - b0t)} | {top_c(ff)}; {top_c(bf)} |")


# ---- whole programs ---------------------------------------------------------------------------

def _programs():
    # the programs as bench_peers.py loads them (scripts/ is on sys.path when a script in
    # it runs; importing bench_peers sets the same one-thread variables and imports no peer)
    from bench_peers import _load_programs
    return _load_programs()


def _graph_nodes(t):
    """The op nodes of the graph recorded behind tensor t (depth-first over inputs)."""
    seen, stack = set(), [t._node]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or node.op is None:
            continue
        seen.add(id(node))
        stack.extend(x._node for x in node.inputs)
    return len(seen)


def _print_stats(stats, title, n=18):
    print(f"\n## {title}: {stats.total_calls} Python function calls; most own time "
          "(cProfile's clock, inflated by profiling)\n")
    stats.sort_stats("tottime").print_stats(n)


def program(name):
    P = _programs()
    if name in ("kalman", "hessian"):
        ys = P.kalman_data(300)

        def fwd():
            x = tf.tensor(P.THETA0, requires_grad=True)
            return x, P.kalman_nll(x, ys)
    else:
        def fwd():
            x = tf.tensor(P.BETA, requires_grad=True)
            return x, P.ctmrg_lnz(x, 16, 400)
    x, out = fwd()
    nodes = _graph_nodes(out)
    tf_ = _cpu_median(lambda _: fwd(), repeat=5)
    tb = _cpu_median(lambda g: tf.grad([g[1]], [g[0]]), fwd, repeat=5)
    print(f"{name}: {nodes} op nodes recorded; forward {tf_ * 1e3:.1f} ms "
          f"({tf_ / nodes * 1e6:.2f} µs/node), backward {tb * 1e3:.1f} ms "
          f"({tb / nodes * 1e6:.2f} µs/node), CPU time, medians of 5")
    if name == "hessian":
        _hessian_passes(P, ys, fwd, tf_, tb)
        return

    def fwd_bwd():
        x, out = fwd()
        tf.grad([out], [x])
    t_on = _cpu_median(lambda _: fwd_bwd(), repeat=5)
    t_off = float(np.median([_gc_off(fwd_bwd) for _ in range(5)]))
    print(f"forward + backward {t_on * 1e3:.1f} ms; with the garbage collector off "
          f"{t_off * 1e3:.1f} ms")
    _print_stats(_profile(fwd), "forward")
    g = fwd()
    _print_stats(_profile(lambda: tf.grad([g[1]], [g[0]])), "backward")


class _GCLog:
    """Counts and times the garbage collector's passes per generation (gc.callbacks)."""

    def __init__(self):
        self.n, self.t, self.freed, self._t0 = [0, 0, 0], [0.0] * 3, [0, 0, 0], 0.0

    def __call__(self, phase, info):
        g = info["generation"]
        if phase == "start":
            self._t0 = time.process_time()
        else:
            self.n[g] += 1
            self.t[g] += time.process_time() - self._t0
            self.freed[g] += info["collected"]

    def __enter__(self):
        gc.collect()
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc):
        gc.callbacks.remove(self)


def _gc_off(fn):
    """CPU seconds of fn() with the cyclic garbage collector disabled."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        fn()
        return time.process_time() - t0
    finally:
        gc.enable()


def _hessian_passes(P, ys, fwd, tf_, tb):
    """tf.hessian (reverse-over-reverse) with the garbage collector's share, one pass of
    its forward-over-reverse fallback (used at degenerate spectra) in halves, and
    reverse-over-reverse by the public API."""
    n = P.THETA0.size
    e = np.zeros(n)
    e[0] = 1.0

    def dual_fwd():
        lvl = fw.dual_level()
        lvl.__enter__()
        x = tf.tensor(P.THETA0, requires_grad=True)
        xd = fw.make_dual(x, e)
        return lvl, xd, P.kalman_nll(xd, ys)

    def dual_bwd(s):
        lvl, xd, val = s
        (g,) = tf.grad([val], [xd], create_graph=True)
        h = fw.unpack_dual(g).tangent
        lvl.__exit__(None, None, None)
        return g, h

    def close(s):
        s[0].__exit__(None, None, None)

    lvl, xd, val = dual_fwd()
    n_fwd = _graph_nodes(val)
    g, _ = dual_bwd((lvl, xd, val))
    n_bwd = _graph_nodes(g) - n_fwd
    del lvl, xd, val, g
    gc.collect()
    td = _gc_off(lambda: dual_bwd(dual_fwd()))
    tdf = _gc_off(lambda: close(dual_fwd()))
    hess = P.kalman_hessian(ys)
    with _GCLog() as log:
        t0 = time.process_time()
        H = hess(P.THETA0)
        th = time.process_time() - t0
    th_off = _gc_off(lambda: hess(P.THETA0))
    print(f"tf.hessian of the Kalman NLL (10 parameters): {th:.2f} s CPU, reverse-over-"
          f"reverse (with the garbage collector off: {th_off:.2f} s). Its fallback at "
          f"degenerate spectra is {n} passes of forward-over-reverse. Each: a forward on "
          f"dual numbers with the graph recorded "
          f"({n_fwd} nodes) and a backward with create_graph=True that records {n_bwd} more "
          f"nodes, each with a tangent; one pass (collector off) "
          f"{td * 1e3:.0f} ms = forward {tdf * 1e3:.0f} ms + backward "
          f"{(td - tdf) * 1e3:.0f} ms, against {(tf_ + tb) * 1e3:.0f} ms for a plain "
          f"value+grad (forward {tf_ * 1e3:.0f} + backward {tb * 1e3:.0f} ms).")
    print(f"garbage collector during tf.hessian: passes per generation {log.n}, CPU s "
          f"{[round(t, 2) for t in log.t]}, objects freed {log.freed} (a closed dual level "
          f"releases its nodes' tangents, so none should be cyclic garbage)")

    def rev_rev():
        x = tf.tensor(P.THETA0, requires_grad=True)
        (g,) = tf.grad([P.kalman_nll(x, ys)], [x], create_graph=True)
        return np.array([tf.grad([g], [x], [e_i], retain_graph=True)[0].numpy()
                         for e_i in np.eye(n)])
    t0 = time.process_time()
    H2 = rev_rev()
    tr = time.process_time() - t0
    assert np.allclose(H2, H, rtol=1e-10, atol=1e-10 * np.abs(H).max())
    print(f"reverse-over-reverse by the public API (one forward, one create_graph backward, "
          f"{n} backward passes over the gradient's graph): {tr:.2f} s, the same Hessian "
          f"(to 1e-10)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--program", choices=["kalman", "ctmrg", "hessian"])
    ap.add_argument("--callgrind", metavar="DIR",
                    help="run under valgrind --tool=callgrind writing to DIR (docstring)")
    ap.add_argument("--annotate", metavar="DIR")
    opts = ap.parse_args()
    if opts.annotate:
        annotate(opts.annotate)
    elif opts.callgrind:
        callgrind(opts.only, opts.callgrind)
    elif opts.program:
        program(opts.program)
    else:
        table(opts.only)


if __name__ == "__main__":
    main()
