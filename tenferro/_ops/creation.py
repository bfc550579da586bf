"""Creation functions of the array API standard: arange, asarray, empty(_like), eye,
from_dlpack, full(_like), linspace, ones(_like), zeros(_like); and logspace (NumPy's and
PyTorch's, not the standard's).

Default dtypes are the standard's (and NumPy's): float64 for real floating values, int64
for Python ints, bool for Python bools, complex128 for Python complex numbers. ``device``
may be None or ``"cpu"``; anything else raises ValueError.

New tensors are constants, except where a value comes from a tensor that carries a
derivative: ``asarray(t)``/``asarray(t, copy=True)``, ``asarray([t1, t2])``,
``full(shape, t)``, ``full_like(x, t)``, ``linspace(t0, t1, n)`` and
``logspace(t0, t1, n)`` are differentiable in that tensor (a copy, a stack, a broadcast,
an affine map, its power), so a gradient never disappears into a new tensor.
"""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike, DTypeLike, NDArray

import builtins
import operator

import numpy as np

from .. import _dtypes
from .._engine import apply1
from .._errors import DTypeError, ShapeError
from .._tensor import Tensor, _check_device, _find_tracked, _payloads, _to_array
from . import _docs
from .elementwise import pow as _pow
from .registry import defop, register
from ._util import operands, to_tensor
from .structure import astype, broadcast_to, stack


# ---- what the creation functions say alike of an argument or error, written once
# (``_docs.shared`` fills a bare name in a docstring from here)
_DOCS = {
    "device": ("{None, 'cpu'}, optional", "Only the CPU exists; anything else raises ValueError."),
    "dtype": ("dtype, optional", "Default float64."),
    "shape": ("int or tuple of int", "The shape."),
}
_RAISES = {
    "ShapeError": "If ``shape`` is not an int or a sequence of ints, or has a negative entry.",
}
# the *_like functions: dtype and shape default to x's
_LIKE = dict(_DOCS,
             x=("array_like", "The tensor or array whose shape and dtype are used."),
             dtype=("dtype, optional", "Overrides ``x``'s dtype."),
             shape=("int or tuple of int, optional", "Overrides ``x``'s shape."))

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full",
           "full_like", "linspace", "logspace", "ones", "ones_like", "zeros", "zeros_like"]


def _dtype(dtype: DTypeLike | None) -> np.dtype[Any] | None:
    return None if dtype is None else _dtypes.as_dtype(dtype)


def _shape(shape: Any, name: str) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple of non-negative ints."""
    try:
        dims = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
            tuple(operator.index(n) for n in shape)
    except TypeError:
        raise ShapeError(f"{name}: shape must be an int or a sequence of ints, got "
                         f"{shape!r}") from None
    if any(n < 0 for n in dims):
        raise ShapeError(f"{name}: negative dimensions are not allowed, got {dims}")
    return dims


def _new(arr: Any) -> Tensor:
    return Tensor._wrap(arr if type(arr) is np.ndarray else np.asarray(arr))


# ---- copy: the differentiable identity that asarray(t, copy=True) records ------------------
_copy_op = defop("copy", lambda ctx, needs, gs, xs, ys: (gs[0],),
                 lambda ctx, ts, xs, ys: (ts[0],))


def _copy(x: Tensor) -> Tensor:
    return apply1(_copy_op, (x,), x._data.copy())


@_docs.shared(_DOCS, _RAISES)
def asarray(obj: ArrayLike, /, *, dtype: DTypeLike | None = None, device: str | None = None,
            copy: bool | None = None) -> Tensor:
    """``obj`` as a tensor (array API ``asarray``).

    A tensor is returned as it is unless ``dtype`` differs (a differentiable cast) or
    ``copy=True`` (a differentiable copy with its own payload). Nested sequences holding
    tensors that require grad are stacked differentiably. Everything else goes through
    ``numpy.asarray`` with NumPy's dtype inference (Python float -> float64, int -> int64,
    bool -> bool).

    Parameters
    ----------
    obj : array_like
        A Tensor, NumPy array, nested sequence (possibly of tensors), Python scalar, or an
        object with ``__array__``/``__dlpack__``.
    dtype : dtype, optional
        The dtype of the result. Default: that of ``obj`` (NumPy's inference).
    device
    copy : bool, optional
        True: always copy. False: never copy (raise if a copy is needed). Default None:
        copy only when needed.

    Returns
    -------
    Tensor
        ``obj`` itself, a differentiable cast/copy/stack of it, or a new constant tensor.

    Raises
    ------
    ShapeError
        If ``copy=False`` and a copy cannot be avoided (a cast, a sequence of tensors, a
        non-array object).
    DTypeError
        If the dtype is not supported (float16, object, ...).

    Notes
    -----
    Derivative: the identity for a tensor (a cast's VJP casts the cotangent back; a stack's
    VJP unstacks it).

    Examples
    --------
    >>> tf.asarray([1.0, 2.0])
    tensor([1., 2.])
    >>> tf.asarray(np.arange(3), dtype=tf.float32)
    tensor([0., 1., 2.], dtype=float32)
    """
    _check_device(device)
    dt = _dtype(dtype)
    if isinstance(obj, Tensor):
        if dt is not None and dt != obj._data.dtype:
            if copy is False:
                raise ShapeError(f"asarray: casting {obj.dtype} to {dt} needs a copy, but "
                                 "copy=False was passed")
            return astype(obj, dt)
        return _copy(obj) if copy else obj
    if isinstance(obj, (list, tuple)) and _find_tracked(obj) is not None:
        if copy is False:
            raise ShapeError("asarray: a sequence of tensors needs a copy, but copy=False "
                             "was passed")
        out = stack([asarray(o) for o in obj])
        return out if dt is None else asarray(out, dtype=dt)
    data: Any = _payloads(obj, "asarray")
    if copy is False:
        if not isinstance(data, np.ndarray) and not hasattr(data, "__array__") \
                and not hasattr(data, "__buffer__"):
            try:
                memoryview(data)
            except TypeError:
                raise ShapeError(f"asarray: a {type(data).__name__} cannot be turned into "
                                 "a tensor without a copy, but copy=False was "
                                 "passed") from None
        arr = np.asarray(data, dtype=dt)
        if dt is not None and isinstance(data, np.ndarray) and data.dtype != dt:
            raise ShapeError(f"asarray: casting {data.dtype} to {dt} needs a copy, but "
                             "copy=False was passed")
        return Tensor._wrap(_to_array(arr, copy=False))
    return Tensor._wrap(_to_array(data, dt, copy=builtins.bool(copy)))


@_docs.shared(_DOCS, _RAISES)
def arange(start: float, /, stop: float | None = None, step: float = 1, *,
           dtype: DTypeLike | None = None, device: str | None = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``, like ``numpy.arange``.

    Parameters
    ----------
    start : int or float
        The first value; the stop (with start 0) when ``stop`` is None.
    stop : int or float, optional
        The end, excluded.
    step : int or float, optional
        The spacing. Default 1.
    dtype : dtype, optional
        Default int64 when start, stop and step are ints, float64 otherwise.
    device

    Returns
    -------
    Tensor
        1-D constant tensor of ``ceil((stop - start) / step)`` values.

    Raises
    ------
    ShapeError
        If ``step`` is zero.

    Examples
    --------
    >>> tf.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> tf.arange(0.0, 1.0, 0.25)
    tensor([0.  , 0.25, 0.5 , 0.75])
    """
    _check_device(device)
    if stop is None:
        start, stop = 0, start
    dt = _dtype(dtype)
    if dt is None:
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, builtins.bool)
                   for v in (start, stop, step))
        dt = _dtypes.int64 if ints else _dtypes.float64
    if step == 0:
        raise ShapeError("arange: step must not be zero")
    return _new(np.arange(start, stop, step, dtype=dt))


@_docs.shared(_DOCS, _RAISES)
def empty(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None,
          device: str | None = None) -> Tensor:
    """An uninitialized tensor (float64 by default).

    Parameters
    ----------
    shape, dtype, device

    Returns
    -------
    Tensor
        A constant tensor whose values are arbitrary.

    Raises
    ------
    ShapeError

    Examples
    --------
    >>> tf.empty((2, 3)).shape
    (2, 3)
    """
    _check_device(device)
    return _new(np.empty(_shape(shape, "empty"), dtype=_dtype(dtype) or _dtypes.float64))


@_docs.shared(_DOCS, _RAISES)
def zeros(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None,
          device: str | None = None) -> Tensor:
    """A tensor of zeros (float64 by default).

    Parameters
    ----------
    shape, dtype, device

    Returns
    -------
    Tensor
        A constant tensor of zeros.

    Raises
    ------
    ShapeError

    Examples
    --------
    >>> tf.zeros((2, 3))
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    >>> tf.zeros(2, dtype=tf.int64)
    tensor([0, 0])
    """
    _check_device(device)
    return _new(np.zeros(_shape(shape, "zeros"), dtype=_dtype(dtype) or _dtypes.float64))


@_docs.shared(_DOCS, _RAISES)
def ones(shape: int | tuple[int, ...], *, dtype: DTypeLike | None = None,
         device: str | None = None) -> Tensor:
    """A tensor of ones (float64 by default).

    Parameters
    ----------
    shape, dtype, device

    Returns
    -------
    Tensor
        A constant tensor of ones.

    Raises
    ------
    ShapeError

    Examples
    --------
    >>> tf.ones(3)
    tensor([1., 1., 1.])
    """
    _check_device(device)
    return _new(np.ones(_shape(shape, "ones"), dtype=_dtype(dtype) or _dtypes.float64))


def _like(x: ArrayLike, dtype: DTypeLike | None, shape: Any, name: str
          ) -> tuple[tuple[int, ...], np.dtype[Any]]:
    x = to_tensor(x)
    return (x.shape if shape is None else _shape(shape, name),
            x._data.dtype if dtype is None else _dtypes.as_dtype(dtype))


@_docs.shared(_LIKE)
def empty_like(x: ArrayLike, /, *, dtype: DTypeLike | None = None, device: str | None = None,
               shape: int | tuple[int, ...] | None = None) -> Tensor:
    """An uninitialized tensor with x's shape and dtype (constant).

    Parameters
    ----------
    x, dtype, device, shape

    Returns
    -------
    Tensor
        A constant tensor whose values are arbitrary (no derivative flows to ``x``).

    Examples
    --------
    >>> tf.empty_like(tf.ones((2, 2))).shape
    (2, 2)
    """
    _check_device(device)
    return _new(np.empty(*_like(x, dtype, shape, "empty_like")))


@_docs.shared(_LIKE)
def zeros_like(x: ArrayLike, /, *, dtype: DTypeLike | None = None, device: str | None = None,
               shape: int | tuple[int, ...] | None = None) -> Tensor:
    """A constant tensor of zeros with x's shape and dtype.

    Parameters
    ----------
    x, dtype, device, shape

    Returns
    -------
    Tensor
        A constant tensor of zeros (no derivative flows to ``x``).

    Examples
    --------
    >>> tf.zeros_like(tf.tensor([1, 2, 3]))
    tensor([0, 0, 0])
    """
    _check_device(device)
    return _new(np.zeros(*_like(x, dtype, shape, "zeros_like")))


@_docs.shared(_LIKE)
def ones_like(x: ArrayLike, /, *, dtype: DTypeLike | None = None, device: str | None = None,
              shape: int | tuple[int, ...] | None = None) -> Tensor:
    """A constant tensor of ones with x's shape and dtype.

    Parameters
    ----------
    x, dtype, device, shape

    Returns
    -------
    Tensor
        A constant tensor of ones (no derivative flows to ``x``).

    Examples
    --------
    >>> tf.ones_like(tf.tensor([1, 2]))
    tensor([1, 1])
    """
    _check_device(device)
    return _new(np.ones(*_like(x, dtype, shape, "ones_like")))


def _fill_dtype(fill_value: object) -> np.dtype[Any]:
    """The default dtype of ``full``: bool, int64, float64 or complex128 by value kind."""
    if isinstance(fill_value, (builtins.bool, np.bool_)):
        return _dtypes.bool
    if isinstance(fill_value, (int, np.integer)):
        return _dtypes.int64
    if isinstance(fill_value, (complex, np.complexfloating)):
        return _dtypes.complex128
    return _dtypes.float64


def _full_from_tensor(shape: tuple[int, ...], value: Tensor, dt: np.dtype[Any] | None
                      ) -> Tensor:
    """``full`` with a tensor fill value: a differentiable broadcast of it."""
    if value.ndim != 0:
        raise ShapeError(f"full: fill_value must be a scalar or a 0-d tensor, got shape "
                         f"{value.shape}")
    if dt is not None and dt != value.dtype:
        value = asarray(value, dtype=dt)
    return _copy(broadcast_to(value, shape)) if shape else _copy(value)


@_docs.shared(_DOCS, _RAISES)
def full(shape: int | tuple[int, ...], fill_value: ArrayLike, *, dtype: DTypeLike | None = None,
         device: str | None = None) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype from its kind unless given).

    A 0-d tensor as fill value is broadcast differentiably.

    Parameters
    ----------
    shape
    fill_value : scalar or 0-d Tensor
        The value; a 0-d tensor that requires grad receives the sum of the cotangent.
    dtype : dtype, optional
        Default: bool, int64, float64 or complex128 by the kind of ``fill_value``.
    device

    Returns
    -------
    Tensor
        A tensor of shape ``shape``.

    Raises
    ------
    ShapeError
        If ``fill_value`` is a tensor that is not 0-d, or the shape is invalid.
    DTypeError
        If ``fill_value`` is complex and ``dtype`` is not.

    Notes
    -----
    Derivative: linear (a broadcast); the VJP for a tensor fill value is the sum of the
    cotangent.

    Examples
    --------
    >>> tf.full((2,), 3.0)
    tensor([3., 3.])
    >>> v = tf.tensor(2.0, requires_grad=True)
    >>> tf.grad([tf.full((3,), v).sum()], [v])[0]
    tensor(3.)
    """
    _check_device(device)
    shape = _shape(shape, "full")
    dt = _dtype(dtype)
    if isinstance(fill_value, Tensor):
        return _full_from_tensor(shape, fill_value, dt)
    dt = dt or _fill_dtype(fill_value)
    if dt.kind != "c" and isinstance(fill_value, complex):
        raise DTypeError(f"full: a complex fill value needs a complex dtype, not {dt}")
    return _new(np.full(shape, fill_value, dtype=dt))


@_docs.shared(_LIKE)
def full_like(x: ArrayLike, /, fill_value: ArrayLike, *, dtype: DTypeLike | None = None,
              device: str | None = None, shape: int | tuple[int, ...] | None = None) -> Tensor:
    """A tensor with x's shape and dtype filled with ``fill_value``.

    Parameters
    ----------
    x
    fill_value : scalar or 0-d Tensor
        The value; a 0-d tensor fill value is broadcast differentiably.
    dtype, device, shape

    Returns
    -------
    Tensor
        The filled tensor (no derivative flows to ``x``).

    Raises
    ------
    DTypeError
        If ``fill_value`` is complex and the dtype is not.

    Notes
    -----
    Derivative: as :func:`full`, in ``fill_value`` only.

    Examples
    --------
    >>> tf.full_like(tf.zeros(2), 7.0)
    tensor([7., 7.])
    """
    _check_device(device)
    shape, dt = _like(x, dtype, shape, "full_like")
    if isinstance(fill_value, Tensor):
        return _full_from_tensor(shape, fill_value, dt)
    if dt.kind != "c" and isinstance(fill_value, complex):
        raise DTypeError(f"full_like: a complex fill value needs a complex dtype, not {dt}")
    return _new(np.full(shape, fill_value, dtype=dt))


@_docs.shared(_DOCS, _RAISES)
def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0,
        dtype: DTypeLike | None = None, device: str | None = None) -> Tensor:
    """A 2-D tensor with ones on diagonal ``k`` (float64 by default).

    Parameters
    ----------
    n_rows : int
        Number of rows.
    n_cols : int, optional
        Number of columns. Default ``n_rows``.
    k : int, optional
        The diagonal: 0 the main one, positive above, negative below. Default 0.
    dtype, device

    Returns
    -------
    Tensor
        A constant ``(n_rows, n_cols)`` tensor.

    Examples
    --------
    >>> tf.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    >>> tf.eye(2, 3, k=1)
    tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    _check_device(device)
    return _new(np.eye(n_rows, n_cols, k=k, dtype=_dtype(dtype) or _dtypes.float64))


@_docs.shared(_DOCS, _RAISES)
def linspace(start: complex, stop: complex, /, num: int, *, dtype: DTypeLike | None = None,
             device: str | None = None, endpoint: bool = True) -> Tensor:
    r"""``num`` evenly spaced values from start to stop, like ``numpy.linspace``.

    float64, or complex128 for complex endpoints. Differentiable in tensor endpoints.

    Parameters
    ----------
    start, stop : scalar or 0-d Tensor
        The endpoints.
    num : int
        Number of values (non-negative).
    dtype : dtype, optional
        Default float64 (complex128 for complex endpoints).
    device
    endpoint : bool, optional
        Whether ``stop`` is the last value. Default True.

    Returns
    -------
    Tensor
        1-D tensor of ``num`` values.

    Raises
    ------
    ShapeError
        If ``num`` is negative or an endpoint is a tensor that is not 0-d.
    DTypeError
        If an endpoint is complex and ``dtype`` is not.

    Notes
    -----
    Derivative: affine in the endpoints,
    :math:`x_i = \mathrm{start} + (\mathrm{stop} - \mathrm{start})\, i / d` with
    :math:`d = \mathrm{num} - 1` (or ``num`` when ``endpoint=False``).

    Examples
    --------
    >>> tf.linspace(0, 1, 5)
    tensor([0.  , 0.25, 0.5 , 0.75, 1.  ])
    >>> b = tf.tensor(2.0, requires_grad=True)
    >>> tf.grad([tf.linspace(0, b, 3).sum()], [b])[0]
    tensor(1.5)
    """
    _check_device(device)
    num = operator.index(num)
    if num < 0:
        raise ShapeError(f"linspace: num must be non-negative, got {num}")
    dt = _dtype(dtype)
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        a, b = operands(start, stop)
        if a.ndim or b.ndim:
            raise ShapeError("linspace: start and stop must be scalars or 0-d tensors")
        div = (num - 1) if endpoint else num
        w = np.arange(num, dtype=np.float64) / (div if div > 0 else 1)
        out = a + (b - a) * w
        if endpoint and num > 1:
            out = out * (w < 1) + b * (w == 1)       # exactly stop at the end, like NumPy
        return out if dt is None else asarray(out, dtype=dt)
    cplx = isinstance(start, complex) or isinstance(stop, complex)
    dt = dt or (_dtypes.complex128 if cplx else _dtypes.float64)
    if dt.kind != "c" and cplx:
        raise DTypeError(f"linspace: complex endpoints need a complex dtype, not {dt}")
    return _new(np.linspace(start, stop, num, endpoint=endpoint, dtype=dt))


@_docs.shared(_DOCS, _RAISES)
def logspace(start: complex, stop: complex, /, num: int = 50, *, base: complex = 10.0,
             dtype: DTypeLike | None = None, device: str | None = None,
             endpoint: bool = True) -> Tensor:
    """``num`` values from ``base ** start`` to ``base ** stop``, evenly spaced on a log scale.

    ``base ** linspace(start, stop, num)``, like ``numpy.logspace`` and ``torch.logspace``
    (not in the array API standard; SciPy's tests call it). float64, or complex128 for
    complex endpoints; ``dtype`` casts the float64 result, as NumPy does.

    Parameters
    ----------
    start, stop : scalar or 0-d Tensor
        The exponents of the endpoints.
    num : int, optional
        Number of values. Default 50.
    base : scalar or 0-d Tensor, optional
        The base. Default 10.0.
    dtype : dtype, optional
        Casts the result.
    device
    endpoint : bool, optional
        Whether ``base ** stop`` is the last value. Default True.

    Returns
    -------
    Tensor
        1-D tensor of ``num`` values.

    Raises
    ------
    ShapeError
        As :func:`linspace`.

    Notes
    -----
    Derivative: that of ``base ** linspace(start, stop, num)`` (differentiable in tensor
    endpoints and a tensor ``base``).

    Examples
    --------
    >>> tf.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    _check_device(device)
    out = _pow(base, linspace(start, stop, num, endpoint=endpoint))
    dt = _dtype(dtype)
    return out if dt is None else asarray(out, dtype=dt)


@_docs.shared(_DOCS, _RAISES)
def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor from any object with ``__dlpack__``, sharing memory unless ``copy=True``.

    NumPy arrays, PyTorch/JAX CPU arrays...; a tenferro tensor is returned like
    :func:`asarray` would (differentiable).

    Parameters
    ----------
    x : object
        An object implementing ``__dlpack__`` (and ``__dlpack_device__``).
    device
    copy : bool, optional
        True: copy the data. Default None: share memory when possible.

    Returns
    -------
    Tensor
        A constant tensor viewing (or copying) ``x``'s data; ``x`` itself when it is a tensor.

    Examples
    --------
    >>> tf.from_dlpack(np.arange(3.0))
    tensor([0., 1., 2.])
    """
    _check_device(device)
    if isinstance(x, Tensor):
        return asarray(x, copy=copy)
    # dict[str, Any]: NumPy's stub types each keyword of from_dlpack (copy: bool, device:
    # Literal["cpu"]), which a dict[str, bool] does not match
    kw: dict[str, Any] = {} if copy is None else {"copy": copy}
    return Tensor._wrap(_to_array(np.from_dlpack(x, **kw), copy=False))


# ---- NumPy's spellings on tensors ---------------------------------------------------------
# np.zeros_like(t) etc. give constant tensors (what the rules building masks rely on).

def _np_like(fill: Callable[[Any, np.dtype[Any]], NDArray[Any]]) -> Callable[..., Tensor]:
    def like(a: ArrayLike, dtype: DTypeLike | None = None, order: str = "K",
             subok: bool = True, shape: Any = None, *, device: Any = None) -> Tensor:
        x = to_tensor(a)
        return _new(fill(x.shape if shape is None else shape,
                         x.dtype if dtype is None else _dtypes.as_dtype(dtype)))
    return like


def _np_full_like(a: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None,
                  order: str = "K", subok: bool = True, shape: Any = None, *,
                  device: Any = None) -> Tensor:
    return full_like(a, fill_value, dtype=dtype, shape=shape)


register(_np_like(np.zeros), functions=(np.zeros_like,))
register(_np_like(np.ones), functions=(np.ones_like,))
register(_np_like(np.empty), functions=(np.empty_like,))
register(_np_full_like, functions=(np.full_like,))
