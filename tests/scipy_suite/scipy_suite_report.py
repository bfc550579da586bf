"""pytest plugin: one JSON line per test of the SciPy suite, written as the run goes.

Used by ``scripts/scipy_suite.py`` (``-p scipy_suite_report --scipy-suite-log=FILE``).
Each finished test appends ``{"id", "xp", "outcome", "msg", "tb", "dur"}``:
``xp`` is the id of the backend the ``xp`` fixture ran (``numpy``, ``torch``,
``tenferro``; ``null`` when the test has none), ``outcome`` one of passed / failed /
error / skipped / xfailed / xpassed, ``msg`` the first lines of the failure or the skip
reason, ``tb`` the traceback's frames as ``path:line`` (innermost last). A ``{"start":
id}`` line precedes each test, so a run killed by a crash or a hang still says which
test it was in; a final ``{"end": exitstatus}`` line says the run finished.

Lines are flushed one by one: an interrupted run keeps everything before it. This file
is not a test module and registers no backend (``tenferro_xp_plugin`` does that).
"""

from __future__ import annotations

import json
from typing import IO, Any

import pytest

_MSG_CHARS = 400
_TB_FRAMES = 12


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--scipy-suite-log", default=None,
                     help="append one JSON line per test to this file")
    parser.addoption("--scipy-suite-select", default=None,
                     help="run only the test ids listed in this file (one a line, "
                          "'#' comments); ids that SciPy no longer has are ignored")
    parser.addoption("--scipy-suite-exclude", default=None,
                     help="do not run the test ids listed in this file (the tests a "
                          "crashed run had finished, when it is restarted)")


def _rel(nodeid: str) -> str:
    """A node id from ``scipy/`` on, whatever the rootdir."""
    i = nodeid.find("scipy/")
    return nodeid[i:] if i >= 0 else nodeid


def read_ids(path: str) -> set[str]:
    """The ids of an id file: one a line, blank lines and ``#`` comments ignored."""
    ids = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                ids.add(line)
    return ids


class _Log:
    def write(self, record: dict[str, Any]) -> None:
        self.stream.write(json.dumps(record) + "\n")
        self.stream.flush()

    # -- hooks ---------------------------------------------------------------------
    def __init__(self, stream: IO[str], select: set[str] | None,
                 exclude: set[str]) -> None:
        self.stream = stream
        self.select = select
        self.exclude = exclude
        self.backend: dict[str, str | None] = {}
        self.pending: dict[str, dict[str, Any]] = {}

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if self.select is not None or self.exclude:
            def wanted(item: pytest.Item) -> bool:
                nodeid = _rel(item.nodeid)
                return ((self.select is None or nodeid in self.select)
                        and nodeid not in self.exclude)
            keep = [item for item in items if wanted(item)]
            drop = [item for item in items if not wanted(item)]
            if drop:
                config.hook.pytest_deselected(items=drop)
            items[:] = keep
        for item in items:
            callspec = getattr(item, "callspec", None)
            module = callspec.params.get("xp") if callspec is not None else None
            name = getattr(module, "__name__", None)
            self.backend[item.nodeid] = name

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Any:
        report = yield
        if call.excinfo is not None:
            report.scipy_suite_tb = [f"{entry.path}:{entry.lineno + 1}"
                                     for entry in call.excinfo.traceback][-_TB_FRAMES:]
        return report

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.write({"start": _rel(nodeid)})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = self.pending.setdefault(report.nodeid, {
            "id": _rel(report.nodeid), "xp": self.backend.get(report.nodeid),
            "outcome": None, "msg": "", "tb": [], "dur": 0.0})
        rec["dur"] += report.duration
        wasxfail = hasattr(report, "wasxfail")
        outcome = None
        if report.when == "call":
            if wasxfail:
                outcome = "xfailed" if report.skipped else "xpassed"
            else:
                outcome = report.outcome
        elif report.failed:                      # setup or teardown raised
            outcome = "error"
        elif report.skipped and report.when == "setup":
            outcome = "xfailed" if wasxfail else "skipped"
        if outcome is not None and rec["outcome"] not in ("failed", "error"):
            rec["outcome"] = outcome
            rec["msg"], rec["tb"] = _describe(report)
        if report.when == "teardown":
            self.write(self.pending.pop(report.nodeid))

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        self.write({"end": int(exitstatus)})


def _describe(report: pytest.TestReport) -> tuple[str, list[str]]:
    """The message and the traceback frames of a report (empty when it passed)."""
    if report.passed and not hasattr(report, "wasxfail"):
        return "", []
    if hasattr(report, "wasxfail") and report.skipped:
        return str(report.wasxfail)[:_MSG_CHARS], []
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):              # skipped: (path, line, reason)
        return str(longrepr[2])[:_MSG_CHARS], []
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        msg = crash.message
    else:
        lines = str(longrepr).strip().splitlines()
        msg = lines[-1] if lines else ""
    return str(msg)[:_MSG_CHARS], list(getattr(report, "scipy_suite_tb", []))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--scipy-suite-log")
    if path:
        stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed at unconfigure)
        config._scipy_suite_log = stream  # type: ignore[attr-defined]
        select = config.getoption("--scipy-suite-select")
        exclude = config.getoption("--scipy-suite-exclude")
        config.pluginmanager.register(
            _Log(stream, read_ids(select) if select else None,
                 read_ids(exclude) if exclude else set()), "scipy_suite_log")


def pytest_unconfigure(config: pytest.Config) -> None:
    stream = getattr(config, "_scipy_suite_log", None)
    if stream is not None:
        stream.close()
