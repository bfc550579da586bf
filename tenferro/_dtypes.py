"""Data types: the dtype objects of the array API namespace and the data-type functions.

A Tensor's payload has one of fourteen dtypes: ``bool``, ``int8/16/32/64``,
``uint8/16/32/64`` (these carry no gradient) and ``float32/64``, ``complex64/128`` (the
differentiable ones). The dtype objects are NumPy's (``tf.float64 is
numpy.dtype("float64")``), so ``t.dtype == tf.float64``, ``t.dtype == numpy.float64`` and
``dtype=numpy.float32`` all work. float16, longdouble, object, strings and datetimes are
not supported and raise :class:`DTypeError`.

Promotion (:func:`result_type`) is NumPy 2's, which is the array API standard's table
within a kind; across kinds (integer with floating, signed with unsigned 64-bit), where
the standard is silent, NumPy 2's answer is kept. Python scalars are "weak": they take the
dtype of the tensor they meet (``int8 tensor + 1`` stays int8, ``float32 tensor + 0.5``
stays float32).
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Union

import numpy as np
from numpy.typing import DTypeLike

from ._errors import DTypeError, ShapeError

__all__ = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
    "can_cast", "finfo", "iinfo", "isdtype", "result_type",
]

int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32,
                                                       np.uint64))
float32, float64 = np.dtype(np.float32), np.dtype(np.float64)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
bool = np.dtype(np.bool_)   # noqa: A001  (the array API's name shadows the builtin here)

if TYPE_CHECKING:
    from typing import TypeAlias
    _DType: TypeAlias = np.dtype[Any]
# (`bool` is the dtype in this module: annotations say builtins.bool for Python's)
DIFFERENTIABLE: frozenset[_DType] = frozenset((float32, float64, complex64, complex128))
INTEGER: frozenset[_DType] = frozenset((int8, int16, int32, int64, uint8, uint16, uint32,
                                        uint64))
SUPPORTED: frozenset[_DType] = DIFFERENTIABLE | INTEGER | {bool}

# machine epsilon of each differentiable dtype's real type, for the rules' tolerances
# (np.finfo costs about a microsecond a call on a rule's path)
EPS: dict[_DType, float] = {np.dtype(t): float(np.finfo(t).eps)
                            for t in (np.float32, np.float64, np.complex64, np.complex128)}


def eps_of(dtype: DTypeLike) -> float:
    """Machine epsilon of ``dtype``'s real type (a dict lookup for the differentiable
    dtypes, np.finfo for others)."""
    eps = EPS.get(dtype)  # type: ignore[arg-type]  # (a dtype, usually: no conversion)
    if eps is None:
        dt = np.dtype(dtype)
        eps = EPS.get(dt)
        if eps is None:
            eps = float(np.finfo(dt).eps)
    return eps

_KINDS: dict[str, frozenset[_DType]] = {
    "bool": frozenset({bool}),
    "signed integer": frozenset({int8, int16, int32, int64}),
    "unsigned integer": frozenset({uint8, uint16, uint32, uint64}),
    "integral": INTEGER,
    "real floating": frozenset({float32, float64}),
    "complex floating": frozenset({complex64, complex128}),
}
_KINDS["numeric"] = INTEGER | DIFFERENTIABLE
_NAMES = {np.dtype(d).name: d for d in SUPPORTED}
_NAMES["bool"] = bool


def _unsupported(dt: Any, what: str = "tenferro tensors") -> DTypeError:
    return DTypeError(
        f"{what} hold bool, (u)int8..64, float32, float64, complex64 or complex128, not "
        f"{dt}; convert the data first, e.g. with .astype(numpy.float64)")


def as_dtype(dtype: DTypeLike) -> np.dtype[Any]:
    """``dtype`` (a NumPy dtype, scalar type or name) as one of the supported dtypes."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{dtype!r} is not a dtype; use one of tenferro's dtypes "
                         "(tf.float64, tf.int64, tf.bool, ...)") from None
    if dt not in SUPPORTED:
        raise _unsupported(dt)
    return dt


def is_differentiable(dtype: Any) -> builtins.bool:
    """Whether tensors of ``dtype`` can carry a gradient (float32/64, complex64/128)."""
    return dtype in DIFFERENTIABLE


def _dtype_of(x: Any) -> _DType:
    """The dtype of a Tensor, an ndarray, or a dtype-like."""
    d = getattr(x, "dtype", None)
    if d is not None and not isinstance(x, (type, np.dtype)):
        return as_dtype(d)
    return as_dtype(x)


def result_type(*arrays_and_dtypes: Any) -> _DType:
    """The dtype an operation on these tensors/dtypes (and Python scalars) returns.

    Like ``numpy.result_type`` (NumPy 2 rules, Python scalars weak), restricted to the
    supported dtypes. Python scalars alone give what NumPy gives, their default dtypes
    (``result_type(1, 2.0)`` is float64; the standard leaves that case open, and SciPy relies
    on NumPy's answer or on a ValueError).

    Parameters
    ----------
    *arrays_and_dtypes : Tensor, array, dtype or Python scalar
        At least one.

    Returns
    -------
    numpy.dtype
        The promoted dtype.

    Raises
    ------
    DTypeError
        If nothing is given, a dtype is unsupported, or there is no common dtype.

    Examples
    --------
    >>> tf.result_type(tf.float32, tf.float64)
    dtype('float64')
    >>> tf.result_type(tf.tensor([1, 2]), 1.0)
    dtype('float64')
    """
    if not arrays_and_dtypes:
        raise DTypeError("result_type needs at least one tensor, dtype or scalar")
    args: list[Any] = []
    for a in arrays_and_dtypes:
        if type(a) in (builtins.bool, int, float, complex):
            args.append(a)
        else:
            args.append(_dtype_of(a))
    try:
        return as_dtype(np.result_type(*args))
    except TypeError as e:
        raise DTypeError(f"result_type: {e}") from None


_PY_NUMBERS = (builtins.bool, int, float, complex)


def float_result_type(*args: Any) -> _DType:
    """The dtype of a function with a floating-point result (exp, atan2, the special
    functions, scipy.stats' distributions) of these arguments: tensors, ndarrays, dtypes
    or Python numbers. The one promotion rule of tf.special, tf.stats and the elementwise
    ops, NumPy 2's: :func:`numpy.result_type` of the arguments with Python numbers weak
    (they take the precision of the arrays they meet: ``float32 tensor`` with ``0.5`` is
    float32), so an int64 tensor with a float32 one gives float64, an int8/int16/bool one
    with float32 float32. Where that promotion is an integer or bool dtype (integer
    inputs only) the result is float64: NumPy's ufuncs would pick float16 (int8) or
    float32 (int16), and tenferro has no float16. Only Python numbers: float64 (complex128
    with a complex). Unsupported dtypes raise DTypeError.
    """
    # the answer depends only on the dtypes and on the Python numbers' types: cached per
    # key (numpy.result_type alone costs ~1.2 µs, more than many of the ops calling this)
    key: list[Any] = []
    for a in args:
        t = type(a)
        if t in _PY_NUMBERS:
            key.append(t)
        elif t is np.dtype or isinstance(a, np.dtype):
            key.append(a)
        else:
            d = getattr(a, "dtype", None)
            key.append(d if isinstance(d, np.dtype) and t is not type else _dtype_of(a))
    return float_result_of(tuple(key))


def float_result_of(k: tuple[Any, ...]) -> _DType:
    """:func:`float_result_type` of a key: a tuple of dtypes and of the types of Python
    numbers (bool, int, float, complex), for callers that have the dtypes at hand."""
    dt = _FLOAT_RESULT.get(k)
    if dt is None:
        parts = [_WEAK_VALUE[p] if type(p) is type else as_dtype(p) for p in k]
        try:
            r = np.result_type(*parts) if parts else float64
        except TypeError as e:
            raise DTypeError(f"no common dtype: {e}") from None
        dt = float64 if r.kind not in "fc" else as_dtype(r)
        if len(_FLOAT_RESULT) >= 4096:
            _FLOAT_RESULT.clear()
        _FLOAT_RESULT[k] = dt
    return dt


# a Python number of each type (promotion looks at the type of a weak scalar only)
_WEAK_VALUE: dict[type, Any] = {builtins.bool: True, int: 1, float: 1.0, complex: 1j}
_FLOAT_RESULT: dict[tuple[Any, ...], _DType] = {}


def can_cast(from_: Any, to: DTypeLike, /) -> builtins.bool:
    """Whether ``from_`` (a dtype or tensor) casts to ``to`` under the promotion rules.

    Parameters
    ----------
    from_ : dtype or Tensor
        The source dtype (or a tensor's).
    to : dtype
        The target dtype.

    Returns
    -------
    bool
        True when the cast is safe under the promotion rules.

    Raises
    ------
    DTypeError
        If a dtype is not supported.

    Examples
    --------
    >>> tf.can_cast(tf.float32, tf.float64), tf.can_cast(tf.float64, tf.int64)
    (True, False)
    """
    return builtins.bool(np.can_cast(_dtype_of(from_), as_dtype(to), casting="safe"))


def isdtype(dtype: DTypeLike, kind: Union[DTypeLike, str, tuple[Any, ...]]) -> builtins.bool:
    """Whether ``dtype`` is of ``kind`` (array API ``isdtype``).

    Parameters
    ----------
    dtype : dtype
        The dtype to test.
    kind : dtype, str or tuple
        A dtype, a kind name ('bool', 'signed integer', 'unsigned integer', 'integral',
        'real floating', 'complex floating', 'numeric') or a tuple of these.

    Returns
    -------
    bool
        Whether ``dtype`` matches ``kind`` (any of them, for a tuple).

    Raises
    ------
    ShapeError
        If a kind name is unknown.

    Examples
    --------
    >>> tf.isdtype(tf.float64, "real floating")
    True
    >>> tf.isdtype(tf.int64, ("bool", "complex floating"))
    False
    """
    dt = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        try:
            return dt in _KINDS[kind]
        except KeyError:
            raise ShapeError(f"isdtype: unknown kind {kind!r}; use one of "
                             f"{', '.join(map(repr, _KINDS))}") from None
    return dt == as_dtype(kind)


class finfo_object:   # noqa: N801  (the standard's name for finfo's result)
    """What :func:`finfo` returns: ``bits``, ``eps``, ``max``, ``min``,
    ``smallest_normal`` as Python ints/floats (the standard asks for Python scalars;
    ``numpy.finfo`` gives NumPy scalars) and ``dtype``, the real floating dtype."""

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, dtype: _DType) -> None:
        info = np.finfo(dtype)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = np.dtype(info.dtype)

    def __repr__(self) -> str:
        return (f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, "
                f"min={self.min!r}, smallest_normal={self.smallest_normal!r}, "
                f"dtype={self.dtype})")


class iinfo_object:   # noqa: N801
    """What :func:`iinfo` returns: ``bits``, ``max``, ``min`` (Python ints), ``dtype``."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, dtype: _DType) -> None:
        info = np.iinfo(dtype)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = np.dtype(info.dtype)

    def __repr__(self) -> str:
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type: Any, /) -> finfo_object:   # noqa: A002  (the standard's parameter name)
    """Machine limits of a floating dtype (of its real type for complex).

    Parameters
    ----------
    type : dtype or Tensor
        A float or complex dtype (or a tensor of one).

    Returns
    -------
    finfo_object
        ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` as Python scalars, and
        ``dtype``.

    Raises
    ------
    DTypeError
        If the dtype is not floating (use :func:`iinfo` for integers).

    Examples
    --------
    >>> tf.finfo(tf.float64).eps
    2.220446049250313e-16
    >>> tf.finfo(tf.complex64).bits
    32
    """
    dt = _dtype_of(type)
    if dt.kind not in "fc":
        raise DTypeError(f"finfo needs a floating dtype, got {dt}; use iinfo for integers")
    return finfo_object(dt)


def iinfo(type: Any, /) -> iinfo_object:   # noqa: A002
    """Machine limits of an integer dtype: ``bits``, ``max``, ``min``, ``dtype``.

    Parameters
    ----------
    type : dtype or Tensor
        An integer dtype (or a tensor of one).

    Returns
    -------
    iinfo_object
        ``bits``, ``max``, ``min`` as Python ints, and ``dtype``.

    Raises
    ------
    DTypeError
        If the dtype is not an integer dtype (use :func:`finfo` for floats).

    Examples
    --------
    >>> tf.iinfo(tf.int32).max
    2147483647
    """
    dt = _dtype_of(type)
    if dt.kind not in "iu":
        raise DTypeError(f"iinfo needs an integer dtype, got {dt}; use finfo for floats")
    return iinfo_object(dt)


class _Info:
    """The array API inspection namespace (``tf.__array_namespace_info__()``)."""

    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> str:
        return "cpu"

    def devices(self) -> list[str]:
        return ["cpu"]

    def default_dtypes(self, *, device: str | None = None) -> dict[str, _DType]:
        _check_cpu(device)
        return {"real floating": float64, "complex floating": complex128,
                "integral": int64, "indexing": int64}

    def dtypes(self, *, device: str | None = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, _DType]:
        _check_cpu(device)
        order = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                 float32, float64, complex64, complex128)
        chosen: set[_DType]
        if kind is None:
            chosen = set(order)
        else:
            chosen = set()
            for k in (kind if isinstance(kind, tuple) else (kind,)):
                if k not in _KINDS:
                    raise ShapeError(f"unknown dtype kind {k!r}; use one of "
                                     f"{', '.join(map(repr, _KINDS))}")
                chosen |= _KINDS[k]
        return {d.name: d for d in order if d in chosen}


def _check_cpu(device: str | None) -> None:
    if device is not None and device != "cpu":
        raise ShapeError(f"tenferro has one device, 'cpu', not {device!r}")


def __array_namespace_info__() -> _Info:
    """The array API inspection utilities: capabilities, devices, default dtypes, dtypes."""
    return _Info()
