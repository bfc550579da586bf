# Type stub of tape.pyx (the reverse-mode graph: nodes and the backward pass).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any, Callable

from numpy.typing import NDArray

class Node:
    """One recorded op application, or a leaf (``op is None``)."""
    op: Any
    ctx: Any
    inputs: tuple[Any, ...]
    out_data: tuple[Any, ...]
    out_tangents: Any
    leaf: Any
    n_out: int
    freed: bool
    seq: int
    def __init__(self, op: Any, ctx: Any, inputs: tuple[Any, ...],
                 out_data: tuple[Any, ...] | None, leaf: Any = ...) -> None: ...
    @property
    def is_leaf(self) -> bool: ...

def new_version() -> int: ...
def set_inplace_error(cls: type[BaseException]) -> None: ...
def set_sparse_type(cls: type | None) -> None: ...
def run_backward(roots: list[tuple[Node, int]], seeds: list[Any],
                 targets: list[tuple[Node, int]] | None, create_graph: bool,
                 retain_graph: bool, graph_rule: Callable[..., Any] | None,
                 freed_error: type[BaseException]) -> list[Any]: ...
def owned(g: Any) -> NDArray[Any]: ...
def grad_plain(outputs: Any, inputs: Any, grad_outputs: Any, tensor_type: type,
               state: Any, ones: dict[Any, Any],
               freed_error: type[BaseException]) -> list[Any] | None: ...
def backward_plain(outputs: Any, grad_outputs: Any, tensor_type: type, state: Any,
                   ones: dict[Any, Any], freed_error: type[BaseException]) -> bool: ...
