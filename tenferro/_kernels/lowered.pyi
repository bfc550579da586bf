from typing import Any

OPCODES: dict[str, int]
FIELDS: dict[str, int]
N_FIELDS: int
SMALL_SIDE: int
SMALL_BUFFER: int

class Lowered:
    n_lowered: int
    @property
    def table(self) -> Any: ...
    def __init__(self, code: Any, param: Any, loc: Any, ctloc: Any, size: Any, nd: Any,
                 d0: Any, d1: Any, shapes: list[Any], consts: list[Any], plan: list[Any],
                 ops: list[Any], ctxs: list[Any], ins: list[Any], needs: list[Any],
                 template: list[Any], guards: list[Any], outs: list[int], n_args: int,
                 check: Any, arena_size: int) -> None: ...
    def value(self, run: Any, r: int) -> Any: ...
    def forward(self, arrays: list[Any]) -> tuple[list[Any], Any]: ...
    def needs_table(self, op_needs: list[Any]) -> Any: ...
    def backward(self, run: Any, gs: tuple[Any, ...], needs: tuple[bool, ...],
                 op_needs: list[Any] | None = None, table: Any = None) -> tuple[Any, ...]: ...
