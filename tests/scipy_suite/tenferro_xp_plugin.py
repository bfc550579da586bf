"""pytest plugin: tenferro as an array-API backend of SciPy's own test suite.

Loaded by ``scripts/scipy_suite.py`` (``-p tenferro_xp_plugin`` with this folder on
``PYTHONPATH``) next to ``pytest --pyargs scipy -m array_api_backends`` under
``SCIPY_ARRAY_API=1``. It only *registers* the backend; SciPy's behaviour and its tests
are untouched:

* SciPy's conftest (``scipy/conftest.py``) builds ``xp_available_backends``, a list of
  ``pytest.param(module, id=...)``, and parametrizes its ``xp`` fixture over it when the
  module is imported. The fixture's params are fixed at decoration time, so appending to
  the list afterwards changes nothing: this plugin rebuilds the ``xp`` fixture from the
  same function with the extended list, in ``pytest_plugin_registered``, which pytest
  calls for the conftest module before its fixtures are parsed (pytest >= 8.4 defers a
  conftest's fixtures until its directory is collected; ``tryfirst`` puts this hook ahead
  of the fixture manager's on older versions as well).
* ``tenferro`` is added to the conftest's ``xp_known_backends``, so ``np_only`` and
  similar skip/xfail markers apply to it exactly as to any non-NumPy backend (a backend
  missing from that set would silently run tests that SciPy skips for everyone else).
* ``TENFERRO_SCIPY_BACKENDS`` (comma-separated backend ids, e.g. ``numpy,tenferro``)
  keeps only those backends. SciPy's own selection, a JSON list in ``SCIPY_ARRAY_API``,
  is checked against the backends the conftest knows at import time, before this plugin
  can add tenferro, so it cannot name tenferro.

Nothing else is needed for SciPy's helpers: tenferro tensors carry
``__array_namespace__``, so ``scipy._lib._array_api.array_namespace`` returns the
``tenferro`` module and the ``is_numpy``/``is_torch``/... helpers all say no, which
makes SciPy take its generic array-API paths (as for array-api-strict);
``xp_default_dtype`` is float64 for any namespace but torch, which is tenferro's default
as well; ``xp_assert_close`` and friends fall back to ``numpy.testing`` on
``np.asarray`` of the tensors.

This file is not a test module (its name does not match ``test_*.py``) and has no
conftest beside it, so the project's own ``pytest`` never imports it.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import pytest

BACKEND_ID = "tenferro"
SELECT_ENV = "TENFERRO_SCIPY_BACKENDS"
_CONFTEST = "scipy.conftest"


def _fixture_function(fixture: Any) -> Any:
    """The plain function behind a ``@pytest.fixture`` object (pytest 8 and 9)."""
    wrapped = getattr(fixture, "__pytest_wrapped__", None)  # pytest < 8.4
    if wrapped is not None:
        return wrapped.obj
    return fixture.__wrapped__  # pytest >= 8.4: FixtureFunctionDefinition


def _selected_ids() -> set[str] | None:
    raw = os.environ.get(SELECT_ENV, "").strip()
    if not raw:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def register(conftest: ModuleType) -> list[str]:
    """Add tenferro to SciPy's conftest ``conftest``; return the backend ids kept."""
    if not conftest.SCIPY_ARRAY_API:
        raise pytest.UsageError(
            "tenferro_xp_plugin: SciPy's array-API tests run only with SCIPY_ARRAY_API=1 "
            "in the environment (set it before pytest starts)")
    import tenferro

    conftest.xp_known_backends.add(BACKEND_ID)
    params = [p for p in conftest.xp_available_backends if p.id != BACKEND_ID]
    params.append(pytest.param(tenferro, id=BACKEND_ID,
                               marks=pytest.mark.array_api_backends))
    wanted = _selected_ids()
    if wanted is not None:
        unknown = wanted - {p.id for p in params}
        if unknown:
            raise pytest.UsageError(
                f"{SELECT_ENV} names backends that are not importable here: "
                f"{sorted(unknown)}; available: {[p.id for p in params]}")
        params = [p for p in params if p.id in wanted]
    conftest.xp_available_backends[:] = params
    conftest.xp = pytest.fixture(params=params)(_fixture_function(conftest.xp))
    return [p.id for p in params]


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: object) -> None:
    if getattr(plugin, "__name__", None) == _CONFTEST:
        assert isinstance(plugin, ModuleType)
        ids = register(plugin)
        os.environ["TENFERRO_SCIPY_BACKENDS_ACTIVE"] = ",".join(ids)


def pytest_report_header(config: pytest.Config) -> str:
    active = os.environ.get("TENFERRO_SCIPY_BACKENDS_ACTIVE")
    if active is None:
        return "tenferro_xp_plugin: scipy.conftest not loaded (no SciPy tests collected?)"
    return f"tenferro_xp_plugin: SciPy xp backends {active}"
