"""The price of create_graph=True: backward passes that record their own ops.

For small losses through svd, eigh, qr, einsum and indexing (n = 16 and 64) prints the
median time of
  plain   tf.grad(loss, [a], retain_graph=True)          (rules on ndarrays)
  graph   tf.grad(loss, [a], create_graph=True)          (rules on Tensors, recorded)
  rules   the same pullbacks called on ndarrays, node by node, without the tape (the
          arithmetic of the ops the graph pass records; for svd/eigh/qr the plain rule is
          a compiled kernel, so this undercounts what their Tensor rules compute; a
          sparse cotangent is densified per node, which overcounts indexing)
and graph / plain, graph / (plain + rules) and the recording overhead per recorded op
((graph - plain) / ops, the ops counted on the recorded graph).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python scripts/bench_create_graph.py
    python scripts/bench_create_graph.py --profile svd --n 16   # cProfile of the graph pass
    python scripts/bench_create_graph.py --compare               # + the former graph pass
    python scripts/bench_create_graph.py --trg 24 --iterations 20  # TRG example, A/B

--compare also times the create_graph pass with tenferro._rule_api.RECORD_ONE_NODE = False
("graph0": svd, eigh and qr record every op of their formula instead of one lazy_rule node,
the behaviour before), in the same run. --trg CHI times examples/trg_ising.py at one beta
point (forward, create_graph reverse pass, second reverse pass) both ways.
"""
import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import importlib  # noqa: E402
import importlib.util  # noqa: E402
import pathlib  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro._engine import Node  # noqa: E402

from tenferro import _rule_api as RULE_API  # noqa: E402  (RECORD_ONE_NODE)
ROOT = pathlib.Path(__file__).resolve().parents[1]


class one_node:
    """Context: RECORD_ONE_NODE set to ``flag`` (restored on exit)."""
    def __init__(self, flag):
        self.flag = flag

    def __enter__(self):
        self.saved, RULE_API.RECORD_ONE_NODE = RULE_API.RECORD_ONE_NODE, self.flag

    def __exit__(self, *exc):
        RULE_API.RECORD_ONE_NODE = self.saved


def _median(fn, min_time=0.2, repeat=7):
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        t = time.perf_counter() - t0
        if t > min_time / repeat or number > 10000:
            break
        number *= 2
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def losses(n, rng):
    a0 = rng.standard_normal((n, n))
    sym = a0 + a0.T
    w1 = rng.standard_normal((n, n))
    w2 = rng.standard_normal(n)
    b0 = rng.standard_normal((n, n))
    c0 = rng.standard_normal((n, n))

    def svd(a):
        u, s, vt = tf.linalg.svd(a)
        return (u * u * w1).sum() + (s * w2).sum() + (vt * vt * w1).sum()

    def eigh(a):
        w, v = tf.linalg.eigh(a)
        return (w * w2).sum() + (v * v * w1).sum()

    def qr(a):
        q, r = tf.linalg.qr(a)
        return (q * w1).sum() + (r * w1).sum()

    def einsum(a):
        return (tf.einsum("ij,jk,kl->il", a, b0, c0) ** 2 * w1).sum()

    def indexing(a):
        total = a[0, 0] * 0.0
        for i in range(n):
            total = total + a[i, i] * a[i, (i + 1) % n] + a[[i, i], 0].sum()
        return total

    return {"svd": (svd, a0), "eigh": (eigh, sym), "qr": (qr, a0),
            "einsum": (einsum, a0), "indexing": (indexing, a0)}


def _graph_nodes(outs):
    seen, stack = set(), [t._node for t in outs if t._node is not None]
    nodes = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(x._node for x in node.inputs if x._node is not None)
    return nodes


def rules_on_ndarrays(loss):
    """Each recorded node's pullback on ndarrays with a ones cotangent per output."""
    calls = []
    for node in _graph_nodes([loss]):
        if node.op is None:
            continue
        xs = tuple(x._data for x in node.inputs)
        gs = tuple(np.ones_like(d) for d in node.out_data)
        needs = tuple(x._node is not None for x in node.inputs)
        calls.append((node.op.vjp, node.ctx, needs, gs, xs, node.out_data))

    def run():
        for vjp, ctx, needs, gs, xs, ys in calls:
            cots = vjp(ctx, needs, gs, xs, ys)
            for c in cots:
                if c is not None and hasattr(c, "densify"):
                    c.densify()
    return run


def measure(name, fn, a0, compare=False):
    a = tf.tensor(a0, requires_grad=True)
    loss = fn(a)
    t_plain = _median(lambda: tf.grad(loss, [a], retain_graph=True))
    t_graph = _median(lambda: tf.grad(loss, [a], create_graph=True))
    t_graph0 = None
    if compare:
        with one_node(False):
            t_graph0 = _median(lambda: tf.grad(loss, [a], create_graph=True))
    t_rules = _median(rules_on_ndarrays(loss))
    # ops recorded by one create_graph pass: nodes numbered in between (Node.seq)
    before = Node(None, None, (), None).seq
    tf.grad(loss, [a], create_graph=True)
    n_ops = Node(None, None, (), None).seq - before - 1
    return t_plain, t_graph, t_rules, n_ops, t_graph0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[16, 64])
    p.add_argument("--ops", nargs="+", default=["svd", "eigh", "qr", "einsum", "indexing"])
    p.add_argument("--profile", metavar="OP", help="cProfile the create_graph pass of OP")
    p.add_argument("--compare", action="store_true",
                   help="also time the former create_graph pass (graph0)")
    p.add_argument("--trg", type=int, metavar="CHI",
                   help="time examples/trg_ising.py at bond dimension CHI, both ways")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    if args.trg:
        return trg(args.trg, args.iterations, args.repeat)
    if args.profile:
        fn, a0 = losses(args.n[0], rng)[args.profile]
        a = tf.tensor(a0, requires_grad=True)
        loss = fn(a)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(200):
            tf.grad(loss, [a], create_graph=True)
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(30)
        return 0
    print(f"{'op':>9} {'n':>4} {'plain µs':>10} {'graph µs':>10} {'rules µs':>10} "
          f"{'graph/plain':>11} {'graph/(plain+rules)':>19} {'ops':>5} {'µs/op':>6}"
          + (f" {'graph0 µs':>10} {'graph0/(plain+rules)':>20}" if args.compare else ""))
    for n in args.n:
        for name in args.ops:
            fn, a0 = losses(n, rng)[name]
            tp, tg, tr, k, tg0 = measure(name, fn, a0, args.compare)
            print(f"{name:>9} {n:>4} {tp * 1e6:>10.1f} {tg * 1e6:>10.1f} {tr * 1e6:>10.1f} "
                  f"{tg / tp:>11.2f} {tg / (tp + tr):>19.2f} {k:>5} "
                  f"{(tg - tp) / max(k, 1) * 1e6:>6.1f}"
                  + (f" {tg0 * 1e6:>10.1f} {tg0 / (tp + tr):>20.2f}" if args.compare else ""))
    return 0


def trg(chi, iterations, repeat, beta=0.44):
    """examples/trg_ising.py at one point, seconds (median of ``repeat`` after a warm-up),
    with one node per spectral pullback and with the former recording."""
    spec = importlib.util.spec_from_file_location("_trg_ising", ROOT / "examples" / "trg_ising.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for trace in ("loop", "einsum"):
        for flag in (False, True):
            with one_node(flag):
                res = mod.thermodynamics(beta, chi, iterations, trace)
                times = []
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    mod.thermodynamics(beta, chi, iterations, trace)
                    times.append(time.perf_counter() - t0)
            print(f"TRG chi={chi} {iterations} it --trace {trace:6s} "
                  f"{'one node' if flag else 'former  '}: {statistics.median(times):7.3f} s  "
                  f"(lnZ, u, c) = {res}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
