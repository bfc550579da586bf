"""Compare tenferro's tracked benchmarks between two commits with asv; fail on a slowdown.

    # both commits installed, each in its own Python environment (asv installed in the one
    # running this script, at least asv_runner in the other):
    python scripts/asv_compare.py run --base-python BASE_VENV/bin/python --base-commit SHA1 \\
                                      --head-python HEAD_VENV/bin/python --head-commit SHA2
    python scripts/asv_compare.py compare SHA1 SHA2      # again, from the stored results
    python scripts/asv_compare.py self-test              # the decision rule on made-up data
    python scripts/asv_compare.py fail-check             # a real slowdown fails (~30 s)

``run`` runs asv_bench/tracked/bench_tracked.py (the tracked subset, with its own asv
configuration asv_bench/tracked.conf.json: engine overhead and one small and one large
case per linalg family) against both interpreters in
alternating rounds (base, head, then head, base, ...: one asv run per round and commit,
its samples appended), so that a drift in machine load hits both commits alike, and
stores the results under each commit's hash (``asv run --set-commit-hash``) in
asv_bench/tracked-results, where ``asv compare`` and ``asv publish`` (``--config
tracked.conf.json``) find them. Both interpreters
run through one wrapper script (.asv/tracked-python beside the asv configuration), so
asv sees one environment and puts both commits on one line. A benchmark over the factor
is run for :data:`CONFIRM_ROUNDS` more rounds at both commits before it counts.

``compare`` (which ``run`` ends with) prints, for every tracked benchmark, the least
disturbed sample (minimum) at both commits and head ÷ base, and exits 1 naming each
benchmark whose ratio exceeds the factor (default :data:`FACTOR`; asv_bench/README.md
has the noise measurement it is chosen from). A benchmark that did not run at base (it
times something the base commit lacks) is reported and not compared; one that failed
or is missing at head fails the check.
"""
import argparse
import itertools
import math
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ASV_DIR = REPO / "asv_bench"

# The tracked subset: every benchmark of tracked/bench_tracked.py.
TRACKED = r"^bench_tracked\."

# head ÷ base above which a tracked benchmark fails. Same-commit (A/A) comparisons on the
# 2-core machine, loaded by other jobs and with the other core kept busy on top, gave
# minimum-sample ratios from 0.85 to 1.16, i.e. either commit up to 1.18x slower
# (asv_bench/README.md, "Noise"); 1.3 is that worst ratio plus a margin, and still
# catches a 30% slowdown of any tracked benchmark (fail-check's pure-Python engine is
# 2-5x slower).
FACTOR = 1.3

# Rounds per commit: each an asv run taking asv's default number of samples of every
# benchmark (5 per round with asv 0.6; a sample is a batch of calls filling asv's
# sample_time, 10 ms, or one call of a slower benchmark).
ROUNDS = 3
CONFIRM_ROUNDS = 2


def asv(args, config, quiet=False):
    cmd = [sys.executable, "-m", "asv", *args, "--config", str(config)]
    print("$", shlex.join(cmd[2:]), flush=True)
    return subprocess.run(cmd, cwd=ASV_DIR,
                          stdout=subprocess.DEVNULL if quiet else None).returncode


# One BLAS/OpenMP thread, set before the interpreter starts: asv's runner imports NumPy
# (through pympler) before any benchmark file, so benchmarks/_common.py sets these too
# late, and OpenBLAS would start one thread per core (on a loaded 2-core machine a
# 256x256 matmul then took 20-40x longer, whole processes at a time). asv.conf.json sets
# them for --python=same runs; asv ignores its matrix for `-E existing:...`.
ONE_THREAD = ("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")


def wrapper_path(config):
    return config.parent / ".asv" / "tracked-python"


def write_wrapper(wrapper, python, extra_env):
    """Point the wrapper at ``python`` (with ``extra_env`` set): asv names an existing
    environment after the interpreter's path, so one path for both commits makes their
    results one environment, comparable and plotted on one line."""
    python = os.path.abspath(python)
    exports = "".join(f"export {shlex.quote(kv)}\n" for kv in (*ONE_THREAD, *extra_env))
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(f"#!/bin/sh\n{exports}exec {shlex.quote(python)} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def run_rounds(args, rounds, regexes, replace):
    """``rounds`` alternating asv runs per commit of the benchmarks matching any of
    ``regexes``; ``replace``: the first round replaces what is stored for the commits
    (else every round appends its samples). The set of sides ("base", "head") where asv
    reported a failure."""
    sides = {"base": (args.base_python, args.base_commit, args.base_env),
             "head": (args.head_python, args.head_commit, args.head_env)}
    wrapper = wrapper_path(args.config)
    failed = set()
    for r in range(rounds):
        # base, head, then head, base: neither commit always runs first in a pair
        for side in ("base", "head") if r % 2 == 0 else ("head", "base"):
            python, commit, extra_env = sides[side]
            print(f"== round {r + 1}/{rounds}: {side} ({commit[:8]})", flush=True)
            write_wrapper(wrapper, python, extra_env)
            cmd = ["run", "-E", f"existing:{wrapper}", "--set-commit-hash", commit,
                   "-a", "rounds=1", "--show-stderr"]
            cmd += [arg for regex in regexes for arg in ("-b", regex)]
            cmd += ["--record-samples"] if replace and r == 0 else ["--append-samples"]
            if asv(cmd, args.config) != 0:
                failed.add(side)
    return failed


def run(args):
    if asv(["machine", "--yes"], args.config, quiet=True) != 0:
        return 2
    failed = run_rounds(args, args.rounds, [args.bench], replace=True)
    if args.confirm_rounds:
        # A benchmark over the factor is run again (its samples appended) before it
        # fails CI: a burst of load on the machine rarely hits the same benchmark of the
        # same commit twice, a real slowdown does.
        base = load_times(args.config, args.base_commit, args.bench)
        head = load_times(args.config, args.head_commit, args.bench)
        rows, _ = find_regressions(base, head, args.factor)
        slower = [row[0] for row in rows if row[4].startswith("SLOWER")]
        if slower:
            print(f"== {len(slower)} benchmark(s) over the factor: {args.confirm_rounds} "
                  f"more round(s) of {', '.join(slower)}", flush=True)
            failed |= run_rounds(args, args.confirm_rounds,
                                 [f"^{re.escape(name)}$" for name in slower], replace=False)
    if "head" in failed:
        print("asv_compare: a tracked benchmark failed at head (see above)", file=sys.stderr)
    if "base" in failed:
        print("asv_compare: note: a tracked benchmark failed at base (see above); it is "
              "not compared", flush=True)
    status = compare(args.config, args.base_commit, args.head_commit, args.factor,
                     args.bench)
    return 1 if "head" in failed else status


def _per_combo(values, params):
    """asv's per-benchmark list (one entry per parameter combination) as
    ``[(suffix, entry)]``; an unparameterized benchmark has one entry and no suffix."""
    if not params:
        return [("", values[0] if isinstance(values, list) else values)]
    return [(f"({', '.join(combo)})", v)
            for combo, v in zip(itertools.product(*params), values)]


def load_times(config, commit, regex):
    """{'name(params)': seconds or None (failed/skipped)} of the benchmarks matching
    ``regex`` stored for ``commit`` on this machine: the MINIMUM of the recorded samples
    (each sample the mean of a batch of calls). A slowdown moves every sample, the
    minimum too; load on the machine only adds time, and the least disturbed sample of
    a few rounds is the steadiest estimate of the code's own cost (asv_bench/README.md,
    "Noise", compares it with the median). asv's median where no samples were recorded."""
    from asv.benchmarks import Benchmarks
    from asv.config import Config
    from asv.machine import Machine
    from asv.results import iter_results_for_machine_and_hash

    conf = Config.load(str(config))
    # asv runs in the configuration's folder: its relative paths are relative to that
    conf.results_dir = os.path.join(os.path.dirname(config), conf.results_dir)
    machine = Machine.get_unique_machine_name()
    benchmarks = Benchmarks.load(conf, regex=regex)
    out = {}
    for result in iter_results_for_machine_and_hash(conf.results_dir, machine, commit):
        for key in result.get_result_keys(benchmarks):
            params = benchmarks[key]["params"]
            values = _per_combo(result.get_result_value(key, params), params)
            samples = result.get_result_samples(key, params)
            samples = _per_combo(samples, params) if samples else [(s, None) for s, _ in values]
            for (suffix, value), (_, sample) in zip(values, samples):
                good = [x for x in sample or () if x is not None and not math.isnan(x)]
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    out[key + suffix] = None     # failed or skipped: no usable time
                else:
                    out[key + suffix] = min(good) if good else value
    return {name: v for name, v in out.items() if re.search(regex, name)}


def find_regressions(base, head, factor):
    """Compare two ``{name: seconds or None}``: (rows, problems). ``rows``: (name, base,
    head, ratio or None, verdict) per benchmark; ``problems``: one message per benchmark
    slower than ``factor`` at head, failed at head, or missing at head."""
    rows, problems = [], []
    for name in sorted(set(base) | set(head)):
        b, h = base.get(name), head.get(name)
        if name not in head or h is None:
            verdict = "FAILED at head" if name in head else "MISSING at head"
            problems.append(f"{name}: {verdict.split(' ')[0].lower()} at head "
                            f"(base {fmt(b)})")
            rows.append((name, b, h, None, verdict))
        elif b is None:
            rows.append((name, b, h, None, "new or failed at base: not compared"))
        else:
            ratio = h / b
            slower = ratio > factor
            rows.append((name, b, h, ratio, f"SLOWER than {factor}x" if slower else "ok"))
            if slower:
                problems.append(f"{name}: {ratio:.2f}x slower (base {fmt(b)}, head "
                                f"{fmt(h)}; the factor is {factor})")
    rows.sort(key=lambda row: -(row[3] or 0))
    return rows, problems


def fmt(seconds):
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def compare(config, base_commit, head_commit, factor, regex=TRACKED):
    base = load_times(config, base_commit, regex)
    head = load_times(config, head_commit, regex)
    if not head:
        print(f"asv_compare: no results for head {head_commit[:8]}", file=sys.stderr)
        return 1
    if not any(v is not None for v in base.values()):
        print(f"asv_compare: no results for base {base_commit[:8]}", file=sys.stderr)
        return 1
    rows, problems = find_regressions(base, head, factor)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'benchmark':{width}} {'base':>10} {'head':>10} {'head/base':>9}  verdict")
    for name, b, h, ratio, verdict in rows:
        print(f"{name:{width}} {fmt(b):>10} {fmt(h):>10} "
              f"{'-' if ratio is None else f'{ratio:.3f}':>9}  {verdict}")
    compared = sum(r[3] is not None for r in rows)
    if problems:
        print(f"\nasv_compare: {len(problems)} tracked benchmark(s) regressed from "
              f"{base_commit[:8]} to {head_commit[:8]}:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"\nasv_compare: ok: {compared} benchmarks compared, none slower than "
          f"{factor}x ({base_commit[:8]} -> {head_commit[:8]})")
    return 0


def self_test():
    """The decision rule on made-up medians: a check that could never fail is no check."""
    base = {"a": 1e-3, "b": 2e-5, "c": 1.0, "d": None, "e": 1e-3}
    same = {"a": 1.1e-3, "b": 2e-5, "c": 0.5, "d": 1.0, "e": 1e-3}
    rows, problems = find_regressions(base, same, 1.5)
    assert problems == [], problems
    assert [r[0] for r in rows if r[3] is None] == ["d"], rows   # new at head: skipped
    slow = dict(same, b=2e-5 * 1.6)
    _, problems = find_regressions(base, slow, 1.5)
    assert len(problems) == 1 and problems[0].startswith("b: 1.60x slower"), problems
    failed = dict(same, e=None)
    del failed["a"]
    _, problems = find_regressions(base, failed, 1.5)
    assert sorted(p.split(":")[0] for p in problems) == ["a", "e"], problems
    assert "missing at head" in problems[0] and "failed at head" in problems[1], problems
    _, problems = find_regressions(base, dict(same, c=1.5), 1.5)   # = factor: passes
    assert problems == [], problems
    print("asv_compare self-test: ok")
    return 0


# fail-check: the engine benchmarks, their NumPy control and one small linalg case
FAIL_CHECK_BENCH = (r"^bench_tracked\.(Engine\.time_(exp_sum_grad|chain100_backward|"
                    r"numpy_control)|Linalg\.time_forward_backward\('qr', 16\))$")
FAIL_CHECK_SLOWER = {"bench_tracked.Engine.time_exp_sum_grad",
                     "bench_tracked.Engine.time_chain100_backward",
                     "bench_tracked.Linalg.time_forward_backward('qr', 16)"}


def fail_check(factor):
    """The whole check (asv runs, confirmation, comparison) must fail on a real slowdown:
    the same interpreter at both commits, with tenferro's pure-Python engine and kernels
    (TENFERRO_PURE_PYTHON=1; 1.8x-4x slower on these benchmarks) at head. It must name
    the engine benchmarks and the linalg one, and not the NumPy control (no tenferro code
    in it). Results go to a scratch directory, not asv_bench/results."""
    import json
    import tempfile

    commits = subprocess.run(["git", "rev-parse", "HEAD~1", "HEAD"], cwd=REPO,
                             capture_output=True, text=True)
    if commits.returncode != 0:
        print("asv_compare fail-check: needs a parent commit (HEAD~1)", file=sys.stderr)
        return 1
    base_commit, head_commit = commits.stdout.split()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "asv.conf.json"
        config.write_text(json.dumps({
            "version": 1, "project": "tenferro", "repo": str(REPO), "branches": ["main"],
            "environment_type": "virtualenv", "benchmark_dir": str(ASV_DIR / "tracked"),
            "env_dir": f"{tmp}/env", "results_dir": f"{tmp}/results",
            "html_dir": f"{tmp}/html"}))
        args = argparse.Namespace(
            config=config, base_python=sys.executable, base_commit=base_commit, base_env=[],
            head_python=sys.executable, head_commit=head_commit,
            # 2 rounds (base, head, head, base): one slow process (a whole asv run of
            # exp_sum_grad once measured 1.4x its usual time under load) cannot hide
            # the 2x slowdown
            head_env=["TENFERRO_PURE_PYTHON=1"], rounds=2, confirm_rounds=1,
            bench=FAIL_CHECK_BENCH, factor=factor)
        status = run(args)
        rows, _ = find_regressions(load_times(config, base_commit, FAIL_CHECK_BENCH),
                                   load_times(config, head_commit, FAIL_CHECK_BENCH), factor)
    slower = {row[0] for row in rows if row[4].startswith("SLOWER")}
    if status == 1 and slower == FAIL_CHECK_SLOWER:
        print(f"asv_compare fail-check: ok: the pure-Python engine failed the check, "
              f"naming {len(slower)} benchmarks, and not the NumPy control")
        return 0
    print(f"asv_compare fail-check: FAILED: exit {status} (expected 1), slower: "
          f"{sorted(slower)}, expected {sorted(FAIL_CHECK_SLOWER)}", file=sys.stderr)
    return 1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, default=ASV_DIR / "tracked.conf.json",
                   help="asv configuration (default: asv_bench/tracked.conf.json)")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the tracked benchmarks at both commits, compare")
    for side in ("base", "head"):
        r.add_argument(f"--{side}-python", required=True,
                       help=f"interpreter with the {side} commit's tenferro installed")
        r.add_argument(f"--{side}-commit", required=True, help="its full commit hash")
        r.add_argument(f"--{side}-env", action="append", default=[], metavar="NAME=VALUE",
                       help=f"environment variable for the {side} interpreter "
                            "(repeatable; e.g. TENFERRO_PURE_PYTHON=1 to see a failure)")
    r.add_argument("--rounds", type=int, default=ROUNDS)
    r.add_argument("--confirm-rounds", type=int, default=CONFIRM_ROUNDS,
                   help="more rounds of a benchmark over the factor before it fails "
                        "(default %(default)s)")
    r.add_argument("--bench", default=TRACKED, help="asv -b regex (default: %(default)s)")
    c = sub.add_parser("compare", help="compare the stored results of two commits")
    c.add_argument("base_commit")
    c.add_argument("head_commit")
    c.add_argument("--bench", default=TRACKED)
    for q in (r, c):
        q.add_argument("--factor", type=float, default=FACTOR,
                       help="head/base ratio above which a benchmark fails "
                            "(default %(default)s)")
    sub.add_parser("self-test", help="check the decision rule on made-up data")
    f = sub.add_parser("fail-check", help="check that a real slowdown (tenferro's "
                       "pure-Python engine at head) fails the whole check")
    f.add_argument("--factor", type=float, default=FACTOR)
    args = p.parse_args(argv)
    args.config = args.config.resolve()
    for name in ("base_commit", "head_commit"):   # HEAD~1, a branch, a short hash: full hash
        if getattr(args, name, None):
            setattr(args, name, subprocess.run(
                ["git", "rev-parse", "--verify", getattr(args, name) + "^{commit}"],
                cwd=REPO, check=True, capture_output=True, text=True).stdout.strip())
    if args.command == "self-test":
        return self_test()
    if args.command == "fail-check":
        return fail_check(args.factor)
    if args.command == "compare":
        return compare(args.config, args.base_commit, args.head_commit, args.factor,
                       args.bench)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
