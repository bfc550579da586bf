"""Thread-local autograd state: grad mode (reverse) and the active dual level (forward).

``STATE.grad_enabled`` / ``STATE.fw_level`` are per thread (a new thread starts with grad
mode on and no dual level). Under the compiled engine they live in C thread-local
variables that tape.pyx's apply1 reads directly; under TENFERRO_PURE_PYTHON=1 in a
threading.local (tape_twin.AutogradState).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ._kernels import load as _load_kernel

if TYPE_CHECKING:
    from ._kernels.tape import AutogradState

STATE: AutogradState = _load_kernel("tape").AutogradState()
