"""The SciPy-suite harness: the backend plugin, the runner's bookkeeping and its CI check.

The plugin (tenferro_xp_plugin.py) and the reporter (scipy_suite_report.py) beside this
file are pytest plugins for runs of SciPy's own tests, not test modules; here they are
imported by path and exercised. One test runs ``scripts/scipy_suite.py ci`` for real on
three of SciPy's tests, so the plugin is checked against the installed pytest and SciPy.
"""
import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

# the plugin marks its param as SciPy's conftest does; only SciPy's runs declare the mark
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


plugin = _load("tenferro_xp_plugin_under_test", HERE / "tenferro_xp_plugin.py")
suite = _load("scipy_suite_script_under_test", REPO / "scripts" / "scipy_suite.py")


def _fake_conftest(array_api=True):
    """A module shaped like scipy/conftest.py where it matters to the plugin."""
    mod = types.ModuleType("scipy.conftest")
    mod.SCIPY_ARRAY_API = array_api
    mod.xp_known_backends = {"numpy", "torch"}
    mod.xp_available_backends = [
        pytest.param(np, id="numpy", marks=pytest.mark.array_api_backends)]

    def xp(request):
        yield request.param
    mod.xp_function = xp
    mod.xp = pytest.fixture(params=mod.xp_available_backends)(xp)
    return mod


def test_plugin_adds_tenferro_to_the_backends_and_rebuilds_the_fixture(monkeypatch):
    monkeypatch.delenv(plugin.SELECT_ENV, raising=False)
    mod = _fake_conftest()
    old = mod.xp
    assert plugin.register(mod) == ["numpy", "tenferro"]
    # np_only / named skips apply to tenferro only if SciPy knows the id
    assert "tenferro" in mod.xp_known_backends
    assert [p.id for p in mod.xp_available_backends] == ["numpy", "tenferro"]
    import tenferro
    assert mod.xp_available_backends[1].values == (tenferro,)
    assert mod.xp is not old and mod.xp.__wrapped__ is mod.xp_function
    # registering twice (a second session in one process) does not duplicate it
    assert plugin.register(mod) == ["numpy", "tenferro"]


def test_plugin_selects_backends_and_refuses_bad_setups(monkeypatch):
    monkeypatch.setenv(plugin.SELECT_ENV, "tenferro")
    mod = _fake_conftest()
    assert plugin.register(mod) == ["tenferro"]
    monkeypatch.setenv(plugin.SELECT_ENV, "numpy,jax.numpy")
    with pytest.raises(pytest.UsageError, match="jax.numpy"):
        plugin.register(_fake_conftest())
    with pytest.raises(pytest.UsageError, match="SCIPY_ARRAY_API=1"):
        plugin.register(_fake_conftest(array_api=False))


def test_same_key_for_a_test_on_every_backend():
    ids = ["scipy/a/tests/test_x.py::T::test_f[numpy-float32-3]",
           "scipy/a/tests/test_x.py::T::test_f[torch-float32-3]",
           "scipy/a/tests/test_x.py::T::test_f[tenferro-float32-3]"]
    keys = {suite.test_key(i, b) for i, b in zip(ids, ["numpy", "torch", "tenferro"])}
    assert keys == {"scipy/a/tests/test_x.py::T::test_f[xp-float32-3]"}
    assert suite.test_key("scipy/a/tests/test_x.py::test_g", None) == \
        "scipy/a/tests/test_x.py::test_g"


def test_known_failures_file_parses_and_patterns_are_literal_but_star(tmp_path):
    known = suite.read_known()          # the committed list: every line well-formed
    assert known and {k[2] for k in known} <= set(suite.CATEGORIES)
    entry = suite.classify(
        "scipy/interpolate/tests/test_rbfinterp.py::TestRBFInterpolatorNeighborsNone::"
        "test_chunking[tenferro]", known)
    assert entry is not None and entry[2] == "scipy"
    rx = suite._glob_regex("scipy/x.py::test[tenferro-a*]")
    assert rx.match("scipy/x.py::test[tenferro-ab-c]")
    assert not rx.match("scipy/x.py::testt[tenferro-ab]")   # '[' is not a character class
    bad = tmp_path / "known.txt"
    bad.write_text("scipy/x.py::test[tenferro]  # nonsense: why\n")
    with pytest.raises(SystemExit, match="CATEGORY"):
        suite.read_known(bad)
    bad.write_text("scipy/x.py::test[tenferro]\n")
    with pytest.raises(SystemExit, match="CATEGORY"):
        suite.read_known(bad)


def test_evaluate_flags_unlisted_failures_and_stale_entries(tmp_path):
    path = tmp_path / "known.txt"
    path.write_text("s/t.py::a[*  # scipy: a reason\ns/t.py::b[*  # tenferro: another\n")
    known = suite.read_known(path)

    def rec(tid, outcome):
        return {"id": tid, "xp": "tenferro", "outcome": outcome, "msg": "E: x", "tb": []}
    records = {r["id"]: r for r in [
        rec("s/t.py::a[tenferro-1]", "failed"), rec("s/t.py::a[tenferro-2]", "passed"),
        rec("s/t.py::b[tenferro]", "passed"), rec("s/t.py::c[tenferro]", "error"),
        rec("s/t.py::d[tenferro]", "passed")]}
    v = suite.evaluate(records, known, [*records, "s/t.py::gone[tenferro]"])
    assert [r["id"] for r in v["unlisted"]] == ["s/t.py::c[tenferro]"]
    assert [e[0] for e in v["stale"]] == ["s/t.py::b[*"]   # a[* still has a failure
    assert v["listed_failing"] == 1 and v["missing"] == ["s/t.py::gone[tenferro]"]
    assert v["outcomes"]["failed"] == 2 and v["outcomes"]["passed"] == 3


def test_ci_command_runs_scipy_tests_with_tenferro_and_fails_on_unlisted(tmp_path):
    lazy = "scipy/_lib/tests/test__util.py::TestContainsNaN::test_array_api_lazy[tenferro]"
    ok = "scipy/_lib/tests/test__util.py::TestContainsNaN::test_array_api[tenferro-raise]"
    sample = tmp_path / "sample.txt"
    sample.write_text(f"# two tests\n{lazy}\n{ok}\n")
    known = tmp_path / "known.txt"
    known.write_text(f"{lazy}  # scipy: eager backends skipped by name\n"
                     f"{ok}  # scipy: listed, but it passes\n")
    env = {k: v for k, v in os.environ.items() if k != "TENFERRO_SCIPY_BACKENDS"}

    def ci(*extra):
        return subprocess.run(
            [sys.executable, str(REPO / "scripts" / "scipy_suite.py"), "ci", "--timeout",
             "0", "--sample", str(sample), "--out", str(tmp_path / "out"), *extra],
            capture_output=True, text=True, env=env, timeout=600)

    listed = ci("--known", str(known))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "1 passed, 0 failed, 1 known failures" in listed.stdout
    assert "match only passing tests now" in listed.stdout and ok in listed.stdout
    known.write_text("")
    unlisted = ci("--known", str(known))
    assert unlisted.returncode == 1
    assert "1 failures NOT in known.txt" in unlisted.stdout and lazy in unlisted.stdout
