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


# what a tape provides; tenferro's modules bind some of these at import (the ops bind
# apply1/apply, autograd run_backward/grad_plain/backward_plain/graph_rule, _engine all)
_TAPE_NAMES = ("Node", "run_backward", "grad_plain", "grad_graph", "backward_plain", "owned",
               "new_version", "apply1", "apply", "graph_rule", "sum_small", "leaf_tensor",
               "set_recorder", "replay_forward", "replay_pullbacks")


@pytest.fixture
def use_tape(monkeypatch):
    """``use_tape(module)`` makes every loaded tenferro module use the tape ``module`` (the
    compiled ``tenferro._kernels.tape`` or ``tape_twin``) until the test ends: each module
    attribute bound to the other tape's function or class is patched to ``module``'s."""
    import sys

    from tenferro import _engine
    from tenferro._errors import InPlaceError
    from tenferro._kernels import tape, tape_twin
    from tenferro._sparse import SparseCotangent

    def switch(to):
        other = tape_twin if to is tape else tape
        swap = {id(getattr(other, n)): getattr(to, n) for n in _TAPE_NAMES
                if hasattr(other, n)}
        for name, mod in list(sys.modules.items()):
            if name.split(".")[0] != "tenferro" or name.startswith("tenferro._kernels.tape"):
                continue
            for attr, value in list(vars(mod).items()):
                new = swap.get(id(value))
                if new is not None and new is not value:
                    monkeypatch.setattr(mod, attr, new)
        to.bind_engine(tf.Tensor, STATE, _engine._forward)
        to.set_inplace_error(InPlaceError)
        to.set_sparse_type(SparseCotangent)

    return switch


@pytest.fixture
def reference_tape(use_tape):
    """The twin tape (tape_twin), also when the compiled one is the default."""
    from tenferro._kernels import tape_twin
    use_tape(tape_twin)


@pytest.fixture
def compiled_tape(use_tape):
    """The compiled tape, also when TENFERRO_PURE_PYTHON=1 made the twin the default."""
    from tenferro._kernels import tape
    use_tape(tape)
