"""Thread-local autograd state: grad mode (reverse) and the active dual level (forward)."""
import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True   # ops record graph nodes
        self.fw_level = 0          # id of the active forward-AD dual level, 0 = none


STATE = _State()
