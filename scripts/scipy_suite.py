"""SciPy's own array-API tests with tenferro as a backend, next to NumPy and PyTorch.

    python scripts/scipy_suite.py run [--subpackages special,stats,...]
        [--backends numpy,torch,tenferro] [--out scipy-suite-results] [--update-docs]
    python scripts/scipy_suite.py report [--out scipy-suite-results] [--update-docs]
    python scripts/scipy_suite.py ci [--out DIR] [--strict] [--sample FILE] [--known FILE]
    python scripts/scipy_suite.py make-sample [--out scipy-suite-results]
        [--budget 400] [--per-function 5] [--per-reason 3]

``run`` runs the installed SciPy's tests that iterate over array-API backends
(``pytest --pyargs scipy.<subpackage> -m array_api_backends`` with ``SCIPY_ARRAY_API=1``),
one subpackage at a time, with ``tests/scipy_suite/tenferro_xp_plugin.py`` adding
tenferro to SciPy's ``xp`` backends, so every backend runs the same test ids. Each test
is one JSON line in ``OUT/<subpackage>.jsonl`` (``tests/scipy_suite/scipy_suite_report.py``);
a pytest process killed by a crash is restarted past the test it died in (that test is
recorded as an error), and pytest-timeout (``--timeout``, seconds per test) turns a hang
into a failure. ``report`` (also run at the end of ``run``) writes

* ``OUT/table.md``: per subpackage and backend, passed / failed (with errors) / skipped /
  xfailed (with xpassed), and how many tests fail for tenferro while torch passes them;
* ``OUT/triage.md``: every tenferro failure, grouped by the cause that
  ``tests/scipy_suite/known_failures.txt`` gives it (unlisted ones by their error);

and ``--update-docs`` copies both into the README (between the ``scipy-suite`` markers)
and ``docs/scipy_suite.md``. So after a change in tenferro the whole baseline and its
tables are one command: ``python scripts/scipy_suite.py run --update-docs``.

``ci`` runs the fixed sample ``tests/scipy_suite/ci_sample.txt`` (tenferro only) and
exits non-zero on any failure that ``known_failures.txt`` does not list, printing the
listed tests that pass now (``--strict``: those fail too). ``make-sample`` rebuilds that
sample from a baseline in OUT. PyTorch is a reference only: never a tenferro dependency,
and ``ci`` does not use it.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "tests" / "scipy_suite"
KNOWN = SUITE / "known_failures.txt"
SAMPLE = SUITE / "ci_sample.txt"
INI = SUITE / "scipy_suite.ini"
README = REPO / "README.md"
DOC = REPO / "docs" / "scipy_suite.md"
SUBPACKAGES = ["special", "stats", "fft", "signal", "ndimage", "integrate", "optimize",
               "interpolate", "linalg", "cluster", "spatial", "differentiate", "_lib"]
BACKENDS = ["numpy", "torch", "tenferro"]
FAILED = ("failed", "error")
MAX_RESTARTS = 20
TABLE_START, TABLE_END = "<!-- scipy-suite-table:start -->", "<!-- scipy-suite-table:end -->"
CATEGORIES = {
    "tenferro": "tenferro defects, not fixed yet",
    "scipy": "cause on SciPy's side (permanent)",
}


# --------------------------------------------------------------------------- running

def _available_backends(wanted):
    """The backends of ``wanted`` that import here (torch is optional)."""
    out = []
    for name in wanted:
        try:
            __import__(name)
        except ImportError:
            print(f"backend {name} is not importable: left out", file=sys.stderr)
            continue
        out.append(name)
    return out


def _env(backends):
    env = dict(os.environ)
    env.update({
        "SCIPY_ARRAY_API": "1",
        "TENFERRO_SCIPY_BACKENDS": ",".join(backends),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SUITE), env.get("PYTHONPATH")])),
        # one thread everywhere: the machine is shared and results must not depend on it
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        # child interpreters import the installed tenferro, never a source tree in cwd
        "PYTHONSAFEPATH": "1",
    })
    return env


def _read_log(path):
    """(records by id, started ids in order, finished?) of a JSON-lines log."""
    records, started, ended = {}, [], False
    if not path.exists():
        return records, started, ended
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:      # a line cut by a crash
                continue
            if "start" in rec:
                started.append(rec["start"])
            elif "end" in rec:
                ended = True
            else:
                records[rec["id"]] = rec
    return records, started, ended


def _backend_of(test_id, backends):
    params = test_id.partition("[")[2].rstrip("]").split("-")
    for name in backends:
        if name in params:
            return name
    return None


def run_pytest(name, targets, backends, out, timeout, marker, select=None,
               total_timeout=4 * 3600):
    """Run pytest on ``targets`` (module names) into ``out/<name>.jsonl``; restart past
    crashes. Returns the wall time in seconds."""
    if timeout:
        try:
            import pytest_timeout  # noqa: F401
        except ImportError:
            sys.exit("scipy_suite: pytest-timeout is needed for --timeout (pip install "
                     "pytest-timeout; --timeout 0 runs without it)")
    log, stdout = out / f"{name}.jsonl", out / f"{name}.out"
    exclude = out / f"{name}.exclude"
    for p in (log, stdout, exclude):
        p.unlink(missing_ok=True)
    site = Path(__import__("scipy").__file__).resolve().parent.parent
    t0 = time.perf_counter()
    for attempt in range(MAX_RESTARTS + 1):
        records, started, _ = _read_log(log)
        exclude.write_text("".join(i + "\n" for i in sorted(records)), encoding="utf-8")
        cmd = [sys.executable, "-m", "pytest", "-c", str(INI), "--rootdir", str(site),
               "-p", "tenferro_xp_plugin", "-p", "scipy_suite_report",
               "-p", "no:cacheprovider", "-q", "--tb=short", "-o", "console_output_style=classic",
               *([f"--timeout={timeout}"] if timeout else []), f"--scipy-suite-log={log}",
               f"--scipy-suite-exclude={exclude}", "-m", marker]
        if select is not None:
            cmd.append(f"--scipy-suite-select={select}")
        cmd += ["--pyargs", *targets]
        with open(stdout, "a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)}\n")
            f.flush()
            try:
                proc = subprocess.run(cmd, cwd=out, env=_env(backends), stdout=f,
                                      stderr=subprocess.STDOUT, timeout=total_timeout)
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        records, started, ended = _read_log(log)
        if ended:
            if rc not in (0, 1):       # 0 all passed, 1 some failed; else a usage error
                raise SystemExit(f"scipy_suite: pytest exited {rc} for {name}; see {stdout}")
            break
        crashed = next((i for i in reversed(started) if i not in records), None)
        if crashed is None:
            raise SystemExit(f"scipy_suite: pytest died ({rc}) before its first test "
                             f"for {name}; see {stdout}")
        print(f"  {name}: the pytest process died ({rc}) in {crashed}; restarting past it",
              flush=True)
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({
                "id": crashed, "xp": _backend_of(crashed, BACKENDS), "outcome": "error",
                "msg": f"the pytest process died in this test (exit {rc})", "tb": [],
                "dur": 0.0}) + "\n")
    else:
        raise SystemExit(f"scipy_suite: {name} crashed more than {MAX_RESTARTS} times")
    exclude.unlink(missing_ok=True)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- results

def test_key(test_id, backend):
    """The id of a test with its backend's parameter replaced by ``xp``: the same key
    for the same test on every backend."""
    head, sep, params = test_id.partition("[")
    if not sep or backend is None:
        return test_id
    tokens = params[:-1].split("-")
    for i, token in enumerate(tokens):
        if token == backend:
            tokens[i] = "xp"
            break
    return f"{head}[{'-'.join(tokens)}]"


def load(out, subpackages):
    """{subpackage: {key: {backend: record}}} of the logs in ``out``."""
    results = {}
    for sub in subpackages:
        records, _, _ = _read_log(out / f"{sub}.jsonl")
        by_key = collections.defaultdict(dict)
        for rec in records.values():
            by_key[test_key(rec["id"], rec["xp"])][rec["xp"]] = rec
        results[sub] = dict(by_key)
    return results


def _glob_regex(pattern):
    """A known-failures pattern: a test id where ``*`` matches anything (and nothing
    else is special, so ``[`` of a parametrized id is literal)."""
    return re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("*")) + "$")


def read_known(path=KNOWN):
    """[(pattern, regex, category, reason)] of known_failures.txt."""
    known = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pattern, sep, comment = line.partition(" #")
        category, sep2, reason = comment.strip().partition(":")
        category = category.strip()
        if not sep or not sep2 or category not in CATEGORIES or not reason.strip():
            raise SystemExit(f"{path}:{n}: expected 'TEST-ID-OR-PATTERN  # CATEGORY: "
                             f"reason' with CATEGORY in {sorted(CATEGORIES)}: {line!r}")
        known.append((pattern.strip(), _glob_regex(pattern.strip()), category,
                      reason.strip()))
    return known


def classify(test_id, known):
    for entry in known:
        if entry[1].match(test_id):
            return entry
    return None


def _signature(rec):
    """A cause for an unlisted failure: the error with numbers and quotes blanked, and
    the innermost frame outside the tests."""
    msg = rec["msg"].splitlines()[0] if rec["msg"] else "(no message)"
    msg = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", msg)[:160]
    frames = [f for f in rec.get("tb", [])
              if "/_pytest/" not in f and "/pluggy/" not in f]
    where = re.sub(r"^.*site-packages/", "", frames[-1]) if frames else ""
    return f"{msg} [{where}]" if where else msg


def _base(test_id):
    return test_id.partition("[")[0]


def counts(results, backends):
    """{subpackage: {backend: Counter(outcome)}} and the tenferro-fails-torch-passes
    counts."""
    table, regress = {}, {}
    for sub, tests in results.items():
        table[sub] = {b: collections.Counter() for b in backends}
        regress[sub] = 0
        for per in tests.values():
            for b in backends:
                if b in per:
                    table[sub][b][_column(per[b]["outcome"])] += 1
            if ("tenferro" in per and per["tenferro"]["outcome"] in FAILED
                    and "torch" in per and per["torch"]["outcome"] == "passed"):
                regress[sub] += 1
    return table, regress


def _column(outcome):
    return {"error": "failed", "xpassed": "xfailed"}.get(outcome, outcome)


def table_markdown(results, backends):
    table, regress = counts(results, backends)
    head = "| subpackage | " + " | ".join(backends) + " |"
    if "torch" in backends and "tenferro" in backends:
        head += " tenferro fails, torch passes |"
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    total = {b: collections.Counter() for b in backends}
    for sub in results:
        cells = []
        for b in backends:
            c = table[sub][b]
            total[b].update(c)
            cells.append(_cell(c))
        row = f"| {sub} | " + " | ".join(cells) + " |"
        if "torch" in backends and "tenferro" in backends:
            row += f" {regress[sub]} |"
        lines.append(row)
    row = "| **all** | " + " | ".join(f"**{_cell(total[b])}**" for b in backends) + " |"
    if "torch" in backends and "tenferro" in backends:
        row += f" **{sum(regress.values())}** |"
    lines.append(row)
    return "\n".join(lines)


def _cell(c):
    return f"{c['passed']} / {c['failed']} / {c['skipped']} / {c['xfailed']}"


def triage_summary(results, known):
    """One sentence: the tenferro failures by category, those torch passes first."""
    counts = {True: collections.Counter(), False: collections.Counter()}
    for tests in results.values():
        for per in tests.values():
            rec = per.get("tenferro")
            if rec is None or rec["outcome"] not in FAILED:
                continue
            entry = classify(rec["id"], known)
            counts[per.get("torch", {}).get("outcome") == "passed"][
                entry[2] if entry else "unlisted"] += 1
    order = [*CATEGORIES, "unlisted"]

    def part(c):
        return ", ".join(f"{c[k]} {k}" for k in order if c[k]) or "none"
    return (f"tenferro fails {sum(counts[True].values())} tests that torch passes "
            f"({part(counts[True])}) and {sum(counts[False].values())} that torch fails "
            f"or skips ({part(counts[False])}); categories as in "
            "`tests/scipy_suite/known_failures.txt`.")


def triage_markdown(results, known):
    """Every tenferro failure grouped by cause: first those torch passes, then the rest."""
    groups = {True: collections.defaultdict(list), False: collections.defaultdict(list)}
    for sub, tests in results.items():
        for key, per in tests.items():
            rec = per.get("tenferro")
            if rec is None or rec["outcome"] not in FAILED:
                continue
            torch_passes = per.get("torch", {}).get("outcome") == "passed"
            entry = classify(rec["id"], known)
            cause = (entry[2], entry[3]) if entry else ("unlisted", _signature(rec))
            groups[torch_passes][cause].append(rec["id"])
    lines = []
    for torch_passes, title in ((True, "tenferro fails, torch passes"),
                                (False, "tenferro fails, torch fails or skips too")):
        by_cat = collections.Counter()
        for (cat, _), ids in groups[torch_passes].items():
            by_cat[cat] += len(ids)
        total = sum(by_cat.values())
        lines += [f"### {title}: {total}", ""]
        if not total:
            lines += ["None.", ""]
            continue
        lines += ["| category | tests |", "|---|---|"]
        for cat in [*CATEGORIES, "unlisted"]:
            if by_cat[cat]:
                what = CATEGORIES.get(cat, "not in known_failures.txt")
                lines.append(f"| {cat} ({what}) | {by_cat[cat]} |")
        lines.append("")
        order = {c: i for i, c in enumerate([*CATEGORIES, "unlisted"])}
        for (cat, reason), ids in sorted(groups[torch_passes].items(),
                                         key=lambda kv: (order[kv[0][0]], -len(kv[1]))):
            funcs = collections.Counter(_base(i) for i in ids)
            lines.append(f"- **{cat}** ({len(ids)}): {reason}")
            for func, n in sorted(funcs.items()):
                lines.append(f"  - `{func}` ×{n}")
        lines.append("")
    return "\n".join(lines)


def _versions():
    import numpy
    import scipy
    parts = [f"SciPy {scipy.__version__}", f"NumPy {numpy.__version__}"]
    try:
        import torch
        parts.append(f"torch {torch.__version__}")
    except ImportError:
        pass
    return ", ".join(parts)


def report(out, subpackages, backends, update_docs, meta=None):
    results = load(out, subpackages)
    results = {s: t for s, t in results.items() if t}
    if not results:
        raise SystemExit(f"scipy_suite: no results in {out}")
    known = read_known()
    meta = meta or {}
    table = table_markdown(results, backends)
    triage = triage_markdown(results, known)
    (out / "table.md").write_text(table + "\n", encoding="utf-8")
    (out / "triage.md").write_text(triage + "\n", encoding="utf-8")
    print(table)
    print()
    print(triage)
    if update_docs:
        _update_docs(table, triage, meta, triage_summary(results, known))
    return results


def _update_docs(table, triage, meta, summary):
    when = meta.get("date", datetime.date.today().isoformat())
    minutes = meta.get("minutes")
    header = (f"Passed / failed (with errors) / skipped / xfailed, one column per backend "
              f"on the same test ids; {meta.get('versions', _versions())}, {when}"
              + (f", {minutes:.0f} min" if minutes else "") + ". Regenerate with "
              "`python scripts/scipy_suite.py run --update-docs`.")
    block = f"{TABLE_START}\n{header}\n\n{table}\n\n{summary}\n{TABLE_END}"
    text = README.read_text(encoding="utf-8")
    if TABLE_START not in text:
        raise SystemExit(f"README.md has no {TABLE_START} ... {TABLE_END} block")
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    README.write_text(text[:start] + block + text[end:], encoding="utf-8")
    DOC.write_text(DOC_TEMPLATE.format(header=header, table=table, triage=triage,
                                       summary=summary),
                   encoding="utf-8")
    print(f"updated {README.relative_to(REPO)} and {DOC.relative_to(REPO)}")


DOC_TEMPLATE = """\
# SciPy's own test suite with tenferro as a backend

<!-- generated by scripts/scipy_suite.py (run --update-docs / report --update-docs) -->

SciPy's tests that iterate over array-API backends (`-m array_api_backends`,
`SCIPY_ARRAY_API=1`), run on the installed SciPy with tenferro added to SciPy's `xp`
backends by `tests/scipy_suite/tenferro_xp_plugin.py`, next to NumPy and PyTorch. The
README's section "SciPy's own tests with tenferro as a backend" says how to run it;
`tests/scipy_suite/known_failures.txt` lists each known tenferro failure with its cause.

## Results per subpackage

{header}

{table}

{summary}

## tenferro's failures by cause

Categories: `tenferro`, tenferro defects not fixed yet (the write-through views and the
defects that issue 24 found are fixed); `scipy`, the cause is on SciPy's side (a non-standard API, a code path or error
message written for named backends only); `unlisted`, not in known_failures.txt (grouped
by error and innermost non-test frame).

{triage}
"""


# --------------------------------------------------------------------------- the CI sample

def _module_of(test_id):
    return test_id.partition("::")[0].removesuffix(".py").replace("/", ".")


def make_sample(out, subpackages, budget, per_reason, per_function):
    """Pick the CI sample from a baseline in ``out``: for every known-failure reason up
    to ``per_reason`` of its tenferro ids, then up to ``per_function`` ids of every test
    function (in CRC32 order of their ids: a fixed choice; one of every function before
    a second of any) while the subpackage's share of ``budget`` seconds (by the
    baseline's durations) lasts, quickest first."""
    results = load(out, subpackages)
    known = read_known()
    chosen = {}
    per_sub_budget = budget / len(subpackages)
    for sub in subpackages:
        tests = {rec["id"]: rec for per in results.get(sub, {}).values()
                 for b, rec in per.items() if b == "tenferro"}
        if not tests:
            continue
        spent = 0.0
        by_reason = collections.defaultdict(list)
        for tid, rec in tests.items():
            if rec["outcome"] in FAILED:
                entry = classify(tid, known)
                by_reason[entry[3] if entry else "unlisted"].append(tid)
        for reason, ids in sorted(by_reason.items()):
            for tid in sorted(ids, key=lambda i: zlib.crc32(i.encode()))[:per_reason]:
                chosen[tid] = sub
                spent += tests[tid]["dur"]
        funcs = collections.defaultdict(list)
        for tid in tests:
            funcs[_base(tid)].append(tid)
        # rounds: the first id of every function (quickest functions first), then the
        # second of every function, ...; ids that ran (not skipped) first, CRC32 order
        ranked = {}
        for func, ids in funcs.items():
            runnable = sorted((i for i in ids if tests[i]["outcome"] != "skipped"),
                              key=lambda i: zlib.crc32(i.encode()))
            ranked[func] = [i for i in runnable if i not in chosen]
            if any(i in chosen for i in ids):
                ranked[func] = ranked[func][1:]     # the reason pick counts as its first
        for k in range(per_function):
            picks = sorted((tests[r[k]]["dur"], r[k]) for r in ranked.values() if len(r) > k)
            for dur, tid in picks:
                if spent + dur > per_sub_budget:
                    break
                chosen[tid] = sub
                spent += dur
        print(f"  {sub}: {sum(1 for s in chosen.values() if s == sub)} ids, "
              f"{spent:.0f} s in the baseline")
    import scipy
    lines = [f"# The CI sample of SciPy's array-API tests with tenferro (SciPy {scipy.__version__}):",
             "# made by `python scripts/scipy_suite.py make-sample` from a baseline run;",
             "# run by `python scripts/scipy_suite.py ci` (.ci/run). One test id a line.",
             *sorted(chosen)]
    SAMPLE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(chosen)} ids to {SAMPLE.relative_to(REPO)}")


def evaluate(records, known, ids):
    """The verdict of a CI run: records (by id) against the known-failure entries and
    the sample ``ids``. Returns a dict: ``unlisted`` (failed records no entry matches),
    ``stale`` (entries whose matched tests all passed), ``matched`` (pattern ->
    outcomes), ``listed_failing``, ``missing`` (sample ids that did not run),
    ``outcomes`` (Counter of table columns)."""
    unlisted = []
    matched = collections.defaultdict(list)      # entry's pattern -> outcomes it matched
    for tid, rec in sorted(records.items()):
        entry = classify(tid, known)
        if entry is not None:
            matched[entry[0]].append(rec["outcome"])
        elif rec["outcome"] in FAILED:
            unlisted.append(rec)
    return {
        "unlisted": unlisted,
        # an entry is stale when the tests it matched in this run all pass now
        "stale": [e for e in known if matched.get(e[0])
                  and all(o == "passed" for o in matched[e[0]])],
        "matched": matched,
        "listed_failing": sum(o in FAILED for outs in matched.values() for o in outs),
        "missing": sorted(set(ids) - set(records)),
        "outcomes": collections.Counter(_column(r["outcome"]) for r in records.values()),
    }


def run_ci(out, timeout, strict, sample=SAMPLE, known_path=KNOWN):
    from scipy_suite_report import read_ids  # tests/scipy_suite on sys.path (main)
    ids = read_ids(str(sample))
    known = read_known(known_path)
    modules = sorted({_module_of(i) for i in ids})
    print(f"CI sample: {len(ids)} SciPy tests in {len(modules)} modules ({_versions()})")
    seconds = run_pytest("ci", modules, ["tenferro"], out, timeout, "array_api_backends",
                         select=sample, total_timeout=20 * 60)
    records, _, _ = _read_log(out / "ci.jsonl")
    v = evaluate(records, known, ids)
    outcomes, missing, stale, unlisted = v["outcomes"], v["missing"], v["stale"], v["unlisted"]
    print(f"ran {len(records)} in {seconds:.0f} s: " + ", ".join(
        f"{n} {k}" for k, n in sorted(outcomes.items())))
    print(f"failures listed in {known_path.name}: {v['listed_failing']}")
    if missing:
        print(f"{len(missing)} sample ids were not collected (another SciPy version?):")
        for tid in missing[:20]:
            print("   ", tid)
    if stale:
        print(f"{len(stale)} entries of {known_path.name} match only passing tests now; "
              "remove them:")
        for entry in stale:
            print(f"    {entry[0]}   ({entry[2]}, {len(v['matched'][entry[0]])} tests)")
    if unlisted:
        print(f"{len(unlisted)} failures NOT in {known_path.name}:")
        for rec in unlisted:
            print(f"    {rec['id']}\n        {_signature(rec)}")
    ok = (not unlisted and records and not (strict and stale)
          and len(missing) <= len(ids) // 10)
    if len(missing) > len(ids) // 10:
        print("more than a tenth of the sample did not run: rebuild it for this SciPy "
              "(make-sample)")
    # the closing line counts only unlisted failures as failed (listed ones are expected)
    print(f"{outcomes['passed']} passed, {len(unlisted)} failed, {v['listed_failing']} "
          f"known failures, {outcomes['xfailed']} xfailed, {outcomes['skipped']} skipped")
    return 0 if ok else 1


# --------------------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["run", "report", "ci", "make-sample"])
    ap.add_argument("--subpackages", default=",".join(SUBPACKAGES))
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--out", default=str(REPO / "scipy-suite-results"))
    ap.add_argument("--timeout", type=int, default=300,
                    help="seconds per test (pytest-timeout); 0: no limit")
    ap.add_argument("--marker", default="array_api_backends",
                    help="pytest -m expression (default: array_api_backends)")
    ap.add_argument("--update-docs", action="store_true",
                    help="write the table into README.md and the triage into "
                         "docs/scipy_suite.md")
    ap.add_argument("--sample", default=str(SAMPLE), help="ci: the id file to run")
    ap.add_argument("--known", default=str(KNOWN), help="ci: the known-failures file")
    ap.add_argument("--strict", action="store_true",
                    help="ci: listed failures that pass now fail the run too")
    ap.add_argument("--budget", type=float, default=400.0,
                    help="make-sample: seconds of baseline test time in the sample")
    ap.add_argument("--per-reason", type=int, default=3,
                    help="make-sample: ids of each known-failure reason in the sample")
    ap.add_argument("--per-function", type=int, default=5,
                    help="make-sample: at most this many ids of each test function")
    args = ap.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    subpackages = [s for s in args.subpackages.split(",") if s]
    unknown = set(subpackages) - set(SUBPACKAGES)
    if unknown:
        ap.error(f"unknown subpackages {sorted(unknown)}; choose from {SUBPACKAGES}")
    sys.path.insert(0, str(SUITE))
    if args.command == "run":
        backends = _available_backends(args.backends.split(","))
        meta = {"date": datetime.date.today().isoformat(), "versions": _versions(),
                "backends": backends, "seconds": {}}
        for sub in subpackages:
            print(f"scipy.{sub} ...", flush=True)
            seconds = run_pytest(sub, [f"scipy.{sub}"], backends, out, args.timeout,
                                 args.marker)
            meta["seconds"][sub] = round(seconds, 1)
            print(f"scipy.{sub}: {seconds:.0f} s", flush=True)
        meta["minutes"] = sum(meta["seconds"].values()) / 60
        (out / "meta.json").write_text(json.dumps(meta, indent=1))
        report(out, subpackages, backends, args.update_docs, meta)
        return 0
    if args.command == "report":
        meta = json.loads((out / "meta.json").read_text()) if (out / "meta.json").exists() else {}
        report(out, subpackages, meta.get("backends", args.backends.split(",")),
               args.update_docs, meta)
        return 0
    if args.command == "make-sample":
        make_sample(out, subpackages, args.budget, args.per_reason, args.per_function)
        return 0
    return run_ci(out, args.timeout, args.strict, Path(args.sample), Path(args.known))


if __name__ == "__main__":
    sys.exit(main())
