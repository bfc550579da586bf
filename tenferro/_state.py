"""Thread-local autograd state: grad mode (reverse) and the active dual level (forward)."""
from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.grad_enabled: bool = True   # ops record graph nodes
        self.fw_level: int = 0          # id of the active forward-AD dual level, 0 = none


STATE = _State()
