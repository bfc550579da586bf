"""Small helpers shared by the op modules; each works on ndarrays and on Tensors."""
from typing import Any, Callable

import operator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._dtypes import DIFFERENTIABLE, float_result_of
from .._errors import AxisError, DTypeError, ShapeError
from .._engine import apply1
from .._tensor import Tensor, as_tensor

_PY_SCALARS = (bool, int, float, complex)
_COMPLEX_OF: dict[np.dtype[Any], np.dtype[Any]] = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def to_tensor(x: Tensor | ArrayLike) -> Tensor:
    """``x`` as a Tensor (no copy for an ndarray of a supported dtype)."""
    return x if isinstance(x, Tensor) else as_tensor(x)


def _weak_scalar(s: Any, like: Tensor) -> Tensor:
    """A Python scalar as a constant that keeps ``like``'s precision (NumPy 2 weak scalars:
    ``float32 tensor * 2.0`` stays float32, ``int8 tensor + 1`` int8, ``int tensor * 0.5``
    becomes float64)."""
    dt: np.dtype[Any] = like._data.dtype
    kind = dt.kind
    if kind == "f" or kind == "c":
        if type(s) is complex and kind != "c":
            dt = _COMPLEX_OF[dt]
        return Tensor._wrap(np.asarray(s, dtype=dt))
    dt = np.result_type(like._data, s)
    try:
        return Tensor._wrap(np.asarray(s, dtype=dt))
    except OverflowError:
        raise DTypeError(f"the Python integer {s} does not fit in the {dt} of the tensor "
                         f"it is combined with; convert the tensor first, e.g. "
                         f"t.astype(tf.int64)") from None


def floating(x: Tensor) -> Tensor:
    """``x`` (a Tensor) with integer and bool payloads converted to float64: the input of
    functions of one argument with a floating-point result (exp, sqrt, linalg...), the
    one-argument case of ``_dtypes.float_result_type`` (NumPy's ufuncs would give float16 for
    small integer types, which tenferro does not have)."""
    # (the payload's dtype first: on a float tensor, the common case, the set lookup is all)
    dt = x._data.dtype
    if dt not in DIFFERENTIABLE and dt.kind not in "fc" and not x.requires_grad:
        return Tensor._wrap(x._data.astype(np.float64))
    return x


def floating_args(*args: Any) -> list[Tensor]:
    """The arguments of a function with a floating-point result (atan2, the special
    functions of several arguments) as Tensors, promoted by ``_dtypes.float_result_type``
    (NumPy 2, Python numbers weak): Python numbers become 0-d arrays of the result dtype,
    integer and bool payloads are converted to it (an int64 tensor with a float32 one:
    float64), floating tensors are kept as they are (the op computes in their mixed
    precision and casts to the result; rules promote to the output's dtype)."""
    for v in args:
        if type(v) is not Tensor or v._data.dtype.kind not in "fc":
            break
    else:
        return list(args)             # the common case: floating tensors, kept
    ts = [v if type(v) in _PY_SCALARS else to_tensor(v) for v in args]
    dt = float_result_of(tuple(type(v) if type(v) in _PY_SCALARS else v._data.dtype
                               for v in ts))
    out: list[Tensor] = []
    for v in ts:
        if type(v) in _PY_SCALARS:
            v = Tensor._wrap(np.asarray(v, dtype=dt))
        elif v._data.dtype.kind not in "fc" and not v.requires_grad:
            v = Tensor._wrap(v._data.astype(dt))
        out.append(v)
    return out


def float_tensor(x: Tensor | ArrayLike) -> Tensor:
    """``x`` as a Tensor with integer/bool payloads converted to float64 (linalg inputs)."""
    return floating(x if isinstance(x, Tensor) else as_tensor(x))


def payload(x: Tensor | ArrayLike) -> NDArray[Any]:
    """The ndarray under ``x``: a Tensor's payload (for masks and weights of a rule, which
    are not differentiated), or ``numpy.asarray(x)``."""
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def operands(a: Tensor | ArrayLike, b: Tensor | ArrayLike) -> tuple[Tensor, Tensor]:
    """Both operands of a binary op as Tensors."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            return a, b
        return a, (_weak_scalar(b, a) if type(b) in _PY_SCALARS else as_tensor(b))
    if isinstance(b, Tensor):
        return (_weak_scalar(a, b) if type(a) in _PY_SCALARS else as_tensor(a)), b
    return as_tensor(a), as_tensor(b)


def broadcast_shape(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(
            # NumPy's wording ("cannot be broadcast to a single shape") too: code written
            # for NumPy (SciPy's input checks among it) matches on it
            f"{name}: shapes {', '.join(map(str, shapes))} do not broadcast together "
            "(shape mismatch: objects cannot be broadcast to a single shape); insert "
            "length-1 axes (t[:, None]) or reshape so that trailing dimensions agree"
            ) from None


def axis_index(axis: Any, nd: int, name: str, what: str) -> int:
    """``axis`` of an argument ``what`` of dimension ``nd`` (>= 1) as a non-negative int:
    ShapeError for a 0-d argument or an axis that is not an int, AxisError (a ShapeError)
    out of bounds. (The one-axis functions of tf.signal and tf.integrate.)"""
    if nd == 0:
        raise ShapeError(f"{name}: {what} must have at least one dimension, got a 0-d "
                         f"tensor (reshape it to (1,))")
    try:
        ax = operator.index(axis)
    except TypeError:
        raise ShapeError(f"{name}: axis must be an int, got {axis!r}") from None
    if not -nd <= ax < nd:
        raise AxisError(f"{name}: axis {ax} is out of bounds for {what} of dimension {nd}")
    return ax % nd


def conj(a: Any) -> Any:
    """Complex conjugate; the identity (no copy) on real values."""
    if a.dtype.kind != "c":
        return a
    c = a.conj()
    # ndarray.conj() of a 0-d array is a NumPy scalar; keep cotangents arrays
    return np.asarray(c) if isinstance(c, np.generic) else c


def bilinear_jvp(product: Callable[..., Any], with_ctx: bool = True
                 ) -> Callable[[Any, Any, Any, Any], tuple[Any]]:
    """The jvp rule of an op ``product(a, b, ctx)`` (``product(a, b)`` without
    ``with_ctx``) linear in a and in b (cross, vecdot, outer, einsum's pairs):
    product(ȧ, b) + product(a, ḃ), an absent tangent's term left out."""
    def jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> tuple[Any]:
        (ta, tb), (a, b) = ts, xs
        args = (ctx,) if with_ctx else ()
        out = None if ta is None else product(ta, b, *args)
        if tb is not None:
            d = product(a, tb, *args)
            out = d if out is None else out + d
        return (out,)
    return jvp


def write_tangents(ts: Any, shape: tuple[int, ...], x_dtype: np.dtype[Any],
                   v_dtype: np.dtype[Any]) -> tuple[Any, Any]:
    """The tangents (ẋ, v̇) of a write x[key] = v (index_set, view_set), an absent one as
    zeros: ẋ of ``shape``, v̇ a 0-d zero that the write broadcasts."""
    tx, tv = ts
    return (np.zeros(shape, dtype=x_dtype) if tx is None else tx,
            np.zeros((), dtype=v_dtype) if tv is None else tv)


def recorded(op: Any, fn_np: Callable[[Any, Any], Any], x: Any, ctx: Any) -> Any:
    """``fn_np(x, ctx)`` for a linear map that rules call (a gather and its scatter): the
    op ``op``, recorded, on a Tensor (so that a higher-order pass sees it); plain NumPy on
    an ndarray."""
    if isinstance(x, Tensor):
        return apply1(op, (x,), fn_np(x._data, ctx), ctx=ctx)
    return fn_np(x, ctx)


def broadcast_to_shape(g: Any, shape: tuple[int, ...]) -> Any:
    """``np.broadcast_to(g, shape)``; on ndarrays a fresh array, ~10x cheaper than the view
    (the reduction pullbacks are on the engine-overhead benchmark's path)."""
    if type(g) is np.ndarray:
        out = np.empty(shape, dtype=g.dtype)
        out[...] = g
        return out
    if type(g) is Tensor:      # the op itself: NumPy's __array_function__ dispatch costs ~1 µs
        return g.broadcast_to(shape)
    return np.broadcast_to(g, shape)


def unbroadcast(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast cotangent back to ``shape`` (NumPy broadcasting reversed)."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = g.sum(axis=axes)
    return g.reshape(shape)


def require_real(name: str, *tensors: Tensor | NDArray[Any]) -> None:
    for t in tensors:
        if t.dtype.kind == "c":
            raise DTypeError(f"{name} is defined for real tensors only, got {t.dtype}; "
                             "apply it to .real / .imag or abs() explicitly")
