"""Shared test fixtures. Kept minimal: test modules parametrize on their own."""
from pathlib import Path

import pytest

import tenferro as tf
from tenferro._state import STATE

# The shared conformance data lives beside the project (../shared/oracles), not in it.
ORACLES_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "oracles"


@pytest.fixture(scope="session")
def oracles_dir():
    """The folder of shared reference derivatives; skips the test when it is absent."""
    if not (ORACLES_DIR / "cases").is_dir():
        pytest.skip(f"no oracle data at {ORACLES_DIR.resolve()}")
    return ORACLES_DIR


@pytest.fixture(autouse=True)
def _autograd_state_is_restored():
    """Every test must leave grad mode on and no forward-AD dual level open.

    A leak would silently change what later tests compute, so it fails the test that
    caused it (and the state is reset for the next one).
    """
    yield
    leaks = []
    if not tf.is_grad_enabled():
        STATE.grad_enabled = True
        leaks.append("grad mode was left disabled")
    if STATE.fw_level != 0:
        leaks.append(f"forward-AD dual level {STATE.fw_level} was left open")
        STATE.fw_level = 0
    if leaks:
        pytest.fail("; ".join(leaks), pytrace=False)
