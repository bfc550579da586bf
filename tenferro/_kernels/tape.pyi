# Type stub of tape.pyx (the reverse-mode graph: nodes and the backward pass).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from tenferro._ops.registry import Op
from tenferro._tensor import Tensor

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

class AutogradState:
    """Grad mode and the active forward-AD dual level of the calling thread."""
    grad_enabled: bool
    fw_level: int

def new_version() -> int: ...
def set_inplace_error(cls: type[BaseException]) -> None: ...
def set_sparse_type(cls: type | None) -> None: ...
def run_backward(roots: list[tuple[Node, int]], seeds: list[Any],
                 targets: list[tuple[Node, int]] | None, create_graph: bool,
                 retain_graph: bool, graph_rule: Callable[..., Any] | None,
                 freed_error: type[BaseException]) -> list[Any]: ...
def owned(g: Any) -> NDArray[Any]: ...
def grad_plain(outputs: Any, inputs: Any, grad_outputs: Any,
               tensor_type: type[Tensor],
               state: Any, ones: dict[Any, Any],
               freed_error: type[BaseException]) -> list[Any] | None: ...
def grad_graph(outputs: Any, inputs: Any, tensor_type: type[Tensor], state: Any,
               ones: dict[Any, Any], freed_error: type[BaseException],
               rule: Callable[..., Any]) -> list[Any] | None: ...
def backward_plain(outputs: Any, grad_outputs: Any, tensor_type: type[Tensor], state: Any,
                   ones: dict[Any, Any], freed_error: type[BaseException]) -> bool: ...
def bind_engine(tensor_type: type[Tensor], state: Any,
                forward: Callable[..., None]) -> None: ...
# a Tensor of the ndarray data as it is, a leaf of the graph when requires_grad
def leaf_tensor(data: NDArray[Any], requires_grad: bool) -> Tensor: ...
# out(s): what NumPy computed (0-d results may be NumPy scalars; apply wraps them)
def apply1(op: Op, inputs: Sequence[Tensor], out: NDArray[Any] | np.generic,
           ctx: Any = ...) -> Tensor: ...
def apply(op: Op, inputs: Sequence[Tensor], outs: Sequence[NDArray[Any] | np.generic],
          ctx: Any = ...) -> tuple[Tensor, ...]: ...
def sum_small(op: Op, t: Any) -> Tensor | None: ...
class ViewGroup:
    """A base tensor and the views made of it (weak references)."""
    base: Tensor
    views: list[Any]
    def __init__(self, base: Tensor) -> None: ...
    def members(self) -> list[Tensor]: ...
def as_view(out: Tensor, src: Tensor, step: Any) -> Tensor: ...
def set_node_type(cls: type | Callable[..., Any] | None) -> None: ...
def set_recorder(recorder: Any) -> Any: ...
def replay_forward(plan: list[Any], slots: list[Any], guards: list[Any], check: Any,
                   dyn_ctx: dict[int, Any]) -> None: ...
def replay_pullbacks(plan: list[Any], ops: list[Any], ctxs: list[Any], ins: list[Any],
                     needs: list[Any], slots: list[Any], dyn_ctx: dict[int, Any],
                     cts: list[Any]) -> None: ...
def graph_rule(node: Any, gs: tuple[Any, ...], needs: tuple[bool, ...]) -> tuple[Any, ...]: ...
def vjp_kernel(kernel: int, ctx: Any, needs: tuple[bool, ...], g: Any,
               xs: tuple[Any, ...], ys: tuple[Any, ...]) -> tuple[Any, ...] | None: ...
# the codes of vjp_kernel's compiled pullbacks (an op declares one: defop(kernel=...))
VJP_EXP: int
VJP_SIN: int
VJP_COS: int
VJP_TANH: int
VJP_LOG: int
VJP_NEGATIVE: int
VJP_SUM: int
VJP_SCALAR_SAME: int
VJP_SCALAR_NEGATED: int
VJP_SCALAR_TIMES: int
VJP_SCALAR_OVER: int
VJP_OVER_X: int
VJP_ADD: int
VJP_SUBTRACT: int
VJP_MULTIPLY: int
VJP_DIVIDE: int
VJP_ARRAY_TIMES: int
VJP_ARRAY_SAME: int
VJP_ARRAY_NEGATED: int
VJP_ARRAY_OVER: int
VJP_ARRAY_OVER_X: int
VJP_NORM2_ALL: int
VJP_MATMUL: int
VJP_TRANSPOSE2: int
VJP_DIAGONAL2: int
# the Tensor slots the tape reads by offset, in the order of Tensor.__slots__
TENSOR_SLOTS: tuple[str, ...]
def in_place_adds() -> int: ...
