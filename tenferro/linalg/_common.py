"""Validation and small helpers shared by the linalg modules.

Every linalg op validates its input here before any LAPACK call, so a bad input raises a
specific error and records nothing (docs/design.md#errors).
"""
import operator
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._errors import LinAlgError, ShapeError
from .._kernels import load as _load_kernel
from .._kernels._batch import batch_index  # re-exported: the linalg ops name stacks with it
from .._ops._util import broadcast_shape, float_tensor
from .._tensor import Tensor

__all__ = ["matrix_input", "check_finite_or_raise", "batch_index", "mH", "field_aliases"]


def matrix_input(a: ArrayLike | Tensor, name: str, *, square: bool = False,
                 check_finite: bool = True) -> Tensor:
    """``a`` as a Tensor holding a (stack of) matrix, validated for ``name``."""
    t: Tensor = float_tensor(a)
    d = t._data
    if d.ndim < 2:
        raise ShapeError(f"{name} needs a matrix or a stack of matrices (ndim >= 2), got "
                         f"shape {d.shape}; use t.reshape(1, -1) or t[None] for a single row")
    if square and d.shape[-1] != d.shape[-2]:
        raise ShapeError(f"{name} needs square matrices, got shape {d.shape} "
                         f"({d.shape[-2]}x{d.shape[-1]})")
    if check_finite:
        check_finite_or_raise(d, name)
    return t


# numpy.isfinite(d).all(), in C for the usual payloads (lapack_base.pyx)
_all_finite = _load_kernel("lapack_base").all_finite


def right_hand_side(name: str, ad: NDArray[Any], bd: NDArray[Any], rows: str, count: str,
                    rule: str, check_finite: bool
                    ) -> tuple[bool, NDArray[Any], tuple[int, ...], np.dtype[Any]]:
    """The right-hand side ``bd`` of a system with the matrices ``ad`` (..., r, ·), as
    (whether it is a vector, bd as (..., r, k), the broadcast batch shape, the result dtype).
    The error messages name r as ``rows`` ("m", "n") and its value by ``count`` ("m = {}"),
    with the 1-D rule's note ``rule``. ShapeError for a 0-d b or mismatched rows or
    batches, LinAlgError for a non-finite b when ``check_finite``."""
    r = ad.shape[-2]
    vector = bd.ndim == 1
    if bd.ndim == 0:
        raise ShapeError(f"{name}: b must be a vector ({rows},) or a stack of matrices "
                         f"(..., {rows}, k), got a 0-d tensor")
    if bd.shape[-1 if vector else -2] != r:
        c = count.format(r)
        raise ShapeError(
            f"{name}: a of shape {ad.shape} and b of shape {bd.shape} do not match: "
            + (f"the vector b must have length {c}" if vector else
               f"b must have {c} rows (b.shape[-2]); a vector right-hand side is 1-D{rule}, "
               "use b[..., None] for a stack of vectors"))
    if check_finite:
        check_finite_or_raise(bd, name)
    bm = bd[:, None] if vector else bd
    ab, bb = ad.shape[:-2], bm.shape[:-2]
    batch = ab if ab == bb or not bb else bb if not ab else broadcast_shape(name, ab, bb)
    dt = ad.dtype if ad.dtype == bd.dtype else np.result_type(ad.dtype, bd.dtype)
    return vector, bm, batch, dt


def factorization_replay(name: str, compute: Any) -> Any:
    """tf.compile's replay of a factorization (Op.replay's function): ``compute(d)`` on a
    non-empty, finite input; anything else raises, and the call then runs eagerly, where
    the op itself decides (its error, or its empty result). Reverse mode only: with a dual
    level active a compiled call runs eagerly, where svd/eigh adapt degenerate blocks to
    the tangent."""
    def fn(d: Any) -> Any:
        if d.size == 0 or not _all_finite(d):
            raise FloatingPointError(f"empty or non-finite input: {name} runs eagerly")
        return compute(d)
    return fn


def check_finite_or_raise(d: NDArray[Any], name: str) -> None:
    if not _all_finite(d):
        bad = np.argwhere(~np.isfinite(d))[0]
        raise LinAlgError(f"{name}: the input has a non-finite entry (NaN or Inf) at index "
                          f"{tuple(int(i) for i in bad)}; clean the input, or pass "
                          "check_finite=False to let LAPACK see it")


def mH(x: Any) -> Any:
    """Conjugate transpose of the last two axes, of an ndarray or a Tensor (the linalg
    rules' helper, for ndarrays and Tensors alike). The method spellings (swapaxes, conj)
    skip NumPy's function wrappers: rules call this a lot. (``Tensor.mH``, the array API's
    property, is _ops/structure.py's: always a new tensor through the conj op.)"""
    x = x.swapaxes(-1, -2)
    return x.conj() if x.dtype.kind == "c" else x


_C = TypeVar("_C", bound=type)


def field_aliases(cls: _C, **aliases: str) -> _C:
    """Give the namedtuple class ``cls`` read-only properties ``alias -> field`` (the array
    API's field names beside tenferro's: ``res.eigenvalues is res.values``)."""
    fields: tuple[str, ...] = getattr(cls, "_fields")  # a namedtuple class's field names
    for alias, field in aliases.items():
        setattr(cls, alias, property(operator.itemgetter(fields.index(field)),
                                     doc=f"The field ``{field}`` (the array API's name)."))
    return cls
