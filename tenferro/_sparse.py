"""Sparse cotangents: the adjoint of a gather kept as (values, where) until it is needed.

The pullback of a gather ``y = x[key]`` (indexing, ``take``, ``take_along_axis``,
``diagonal``, ``trace``) is the scatter of ``ȳ`` into zeros of ``x``'s shape. Written
densely, a tensor indexed k times gets k dense zero tensors added up: O(k · x.size) time
and memory traffic (the TRG example's ``sum of T[x, y, x, y]`` over 576 scalars spent
~0.3 s there for a 24⁴ tensor). Instead such a pullback returns a
:class:`SparseCotangent`: the target's shape and dtype and a list of parts
``(kind, ctx, values)``, each meaning "``kind.add_into`` these values at ``ctx``".

The tape (``_kernels/tape.pyx`` and its twin) adds cotangents with :meth:`add`, which
only appends parts (O(1) each), and calls :meth:`densify` where a cotangent leaves the
tape's accumulator: before a pullback receives it, for a returned gradient, for a leaf's
``.grad``. So nothing outside the tape ever sees this object. Densifying allocates one
dense buffer and scatters every part into it in place: O(x.size + touched entries) for
any number of uses. With ``create_graph=True`` the values are Tensors and densify
records one ``sparse_sum`` op, ``out = base + Σ_j scatter_j(values_j)`` (defined with the
gathers in ``_ops/structure.py``, which hands it to :func:`set_graph_densify`: this
container, a part of the core, knows no op), so a second-order pass costs O(uses) small
gathers instead of O(uses) dense additions.
"""
import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import DTypeLike, NDArray

if TYPE_CHECKING:
    from ._tensor import Tensor

__all__ = ["SparseCotangent", "ScatterKind", "set_graph_densify"]


class ScatterKind:
    """How one gather's adjoint adds its values into a dense buffer.

    ``add_into(buf, values, ctx)``: ``buf += scatter(values)`` in place (``buf`` a
    C-contiguous ndarray owned by the caller, ``values`` an ndarray of ``buf``'s dtype).
    ``gather(g, ctx)``: the adjoint, ``g`` read at the positions (an ndarray, or a Tensor
    on which it records the differentiable gather op).
    """
    __slots__ = ("name", "add_into", "gather")

    def __init__(self, name: str, add_into: Callable[[NDArray[Any], Any, Any], None],
                 gather: Callable[[Any, Any], Any]) -> None:
        self.name = name
        self.add_into = add_into
        self.gather = gather

    def __repr__(self) -> str:
        return f"<ScatterKind {self.name}>"


_PLAIN = (np.ndarray, np.generic, int, float, complex)   # values of a plain (ndarray) pass


def _cast_np(v: Any, dtype: np.dtype[Any]) -> Any:
    """Values as an ndarray of the target dtype (real part for a real target,
    docs/design.md#dtypes)."""
    if type(v) is not np.ndarray:
        v = np.asarray(v)
    if v.dtype != dtype:
        if v.dtype.kind == "c" and dtype.kind != "c":
            v = v.real
        v = v.astype(dtype)
    return v


class SparseCotangent:
    """A cotangent ``dense + Σ scatter(values)`` of a tensor of ``shape``/``dtype``.

    Only the tape holds these (see the module docstring); ``add`` mutates ``self``,
    which is safe because every one is created by a pullback for one tape slot.
    """
    __slots__ = ("shape", "dtype", "parts", "dense", "owned", "touched", "graph")

    def __init__(self, shape: Sequence[int], dtype: DTypeLike, kind: ScatterKind, ctx: Any,
                 values: Any) -> None:
        # one per indexing in a backward pass: no conversions on the common types
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.parts: list[tuple[ScatterKind, Any, Any]] = [(kind, ctx, values)]
        self.dense: Any = None     # the dense part (ndarray or Tensor) or None
        self.owned = False     # dense is a C-contiguous buffer this object may write into
        if type(values) is np.ndarray:
            self.touched = values.size
            self.graph = False
        else:
            self.graph = not isinstance(values, _PLAIN)   # values are Tensors (create_graph)
            self.touched = values.size if self.graph else np.size(values)

    def __repr__(self) -> str:
        return (f"<SparseCotangent shape={self.shape} {self.dtype} parts={len(self.parts)} "
                f"dense={'no' if self.dense is None else 'yes'}>")

    def add(self, other: Any) -> "SparseCotangent":
        """``self + other`` for a SparseCotangent or a dense cotangent; returns self."""
        if type(other) is SparseCotangent:
            self.parts.extend(other.parts)
            self.touched += other.touched
            self.graph = self.graph or other.graph
            if other.dense is not None:
                self._add_dense(other.dense)
        else:
            self._add_dense(other)
        # the parts hold more entries than the dense buffer: fold them in, so memory
        # stays O(size) however often the tensor is indexed
        if self.touched > 64 and self.touched > 4 * math.prod(self.shape) + 64:
            self.dense = self.densify()
            self.owned = not self.graph
            self.parts = []
            self.touched = 0
        return self

    def _add_dense(self, d: Any) -> None:
        if self.dense is None:
            self.dense = d
            self.owned = False
        elif self.owned and type(d) is np.ndarray and d.dtype == self.dense.dtype:
            self.dense += d
        else:
            self.dense = self.dense + d
            self.owned = type(self.dense) is np.ndarray and self.dense.flags.c_contiguous
        if not isinstance(d, _PLAIN):
            self.graph = True

    def densify(self) -> Any:
        """The dense cotangent: an ndarray (a fresh buffer) or, with Tensor values, a
        Tensor recorded as one ``sparse_sum`` op."""
        if self.graph:
            return _graph_densify[0](self)
        return self._densify_np()

    def dense_sum(self, base: NDArray[Any] | None, values: Sequence[NDArray[Any]]
                  ) -> NDArray[Any]:
        """``base + Σ_j scatter_j(values_j)`` as a fresh C-contiguous buffer of the target's
        dtype: ``base`` (or None for zeros) and ``values`` (one per part) ndarrays of that
        dtype. The value of the op that records a densify on Tensors (the sparse_sum op
        of _ops/structure.py: its inputs' payloads)."""
        buf: NDArray[Any]
        if base is not None:
            buf = np.array(base, dtype=self.dtype, order="C", copy=True)
        else:
            buf = np.zeros(self.shape, self.dtype)
        for (kind, ctx, _), v in zip(self.parts, values):
            kind.add_into(buf, v, ctx)
        return buf

    def _densify_np(self) -> NDArray[Any]:
        dtype = self.dtype
        buf: NDArray[Any]
        if self.owned:
            buf = self.dense
        elif self.dense is not None:
            buf = np.array(_cast_np(self.dense, dtype), dtype=dtype, order="C", copy=True)
        else:
            buf = np.zeros(self.shape, dtype)
        for kind, ctx, v in self.parts:
            kind.add_into(buf, _cast_np(v, dtype), ctx)
        return buf


def _no_graph_densify(s: SparseCotangent) -> "Tensor":
    raise RuntimeError("internal error: a sparse cotangent of Tensors, but no sparse_sum "
                       "op is installed (tenferro._ops.structure sets it); please report")


# the recorder of densify() on Tensor values: _ops/structure.py's sparse_sum op
_graph_densify: list[Callable[[SparseCotangent], "Tensor"]] = [_no_graph_densify]


def set_graph_densify(fn: Callable[[SparseCotangent], "Tensor"]) -> None:
    """Install ``fn(s)``, the dense Tensor of a SparseCotangent of Tensor values recorded
    as one differentiable op (called by the ops module that defines that op, which also
    creates every SparseCotangent: the gathers' pullbacks)."""
    _graph_densify[0] = fn
