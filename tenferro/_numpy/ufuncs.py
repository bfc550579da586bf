"""NumPy's ufuncs outside the array API on tensors, and heaviside."""
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._engine import note_escape
from .._ops import elementwise, structure
from .._tensor import Tensor, as_tensor
from .plumbing import _arr, _cast, _farr, _numpy_version, _payload_of, _ufunc_kwargs

# (tf.* has the standard's elementwise functions; these are NumPy's extra ones.)

def _linearized(value: ArrayLike, *terms: tuple[Any, Tensor]) -> Tensor:
    """NumPy's exact ``value`` carrying the derivative Σ cᵢ·dxᵢ: value + Σ cᵢ·(xᵢ − xᵢ₀),
    where xᵢ₀ is xᵢ's value as a constant, so each term is exactly zero. Exact to every
    order for the piecewise-linear functions below (cᵢ is piecewise constant)."""
    y = as_tensor(np.asarray(value))
    for c, x in terms:
        y = y + c * (x - Tensor._wrap(x._data))
    return y


def _real_ufunc_input(ufunc: np.ufunc, *xs: ArrayLike) -> tuple[Tensor, ...]:
    ts = tuple(_farr(x) for x in xs)
    for t in ts:
        if t.dtype.kind == "c":
            raise TypeError(f"ufunc '{ufunc.__name__}' not supported for complex input")
    return ts


@_numpy_version(np.deg2rad)
def _deg2rad(x: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.deg2rad, kwargs)
    return _real_ufunc_input(np.deg2rad, x)[0] * (np.pi / 180.0)


@_numpy_version(np.rad2deg)
def _rad2deg(x: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.rad2deg, kwargs)
    return _real_ufunc_input(np.rad2deg, x)[0] * (180.0 / np.pi)


_numpy_version(np.radians)(_deg2rad)
_numpy_version(np.degrees)(_rad2deg)


@_numpy_version(np.fabs)
def _fabs(x: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.fabs, kwargs)
    return elementwise.abs(_real_ufunc_input(np.fabs, x)[0])


@_numpy_version(np.exp2)
def _exp2(x: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.exp2, kwargs)
    return elementwise.exp(_farr(x) * math.log(2.0))


@_numpy_version(np.cbrt)
def _cbrt(x: ArrayLike, /, **kwargs: Any) -> Tensor:
    """sign(x)·|x|^(1/3) (sign piecewise constant); the derivative is infinite at 0."""
    _ufunc_kwargs(np.cbrt, kwargs)
    x, = _real_ufunc_input(np.cbrt, x)
    sgn: NDArray[Any] = np.sign(x._data)
    return elementwise.pow(x * sgn, 1.0 / 3.0) * sgn


@_numpy_version(np.logaddexp2)
def _logaddexp2(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.logaddexp2, kwargs)
    x1, x2 = _real_ufunc_input(np.logaddexp2, x1, x2)
    ln2 = math.log(2.0)
    return elementwise.logaddexp(x1 * ln2, x2 * ln2) / ln2


@_numpy_version(np.float_power)
def _float_power(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.float_power, kwargs)
    x1, x2 = _arr(x1), _arr(x2)
    dt = np.result_type(x1.dtype, x2.dtype, np.float64)
    return elementwise.pow(_cast(x1, dt), _cast(x2, dt))


def _fmax_fmin(ufunc: np.ufunc, pick: str) -> None:
    def f(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
        """maximum/minimum that ignores a NaN in either input (the other value wins)."""
        _ufunc_kwargs(ufunc, kwargs)
        x1, x2 = _arr(x1), _arr(x2)
        r: Tensor = getattr(elementwise, pick)(x1, x2)
        n1, n2 = np.isnan(x1._data), np.isnan(x2._data)
        if n1.any() or n2.any():
            r = elementwise.where(n2 & ~n1, x1, elementwise.where(n1, x2, r))
        return r

    f.__name__ = f.__qualname__ = f"_{ufunc.__name__}"
    _numpy_version(ufunc)(f)


_fmax_fmin(np.fmax, "maximum")
_fmax_fmin(np.fmin, "minimum")


@_numpy_version(np.fmod)
def _fmod(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    """x1 − trunc(x1/x2)·x2 (C's fmod, exact): derivative 1 in x1, −trunc(x1/x2) in x2."""
    _ufunc_kwargs(np.fmod, kwargs)
    x1, x2 = _real_ufunc_input(np.fmod, x1, x2)
    r = np.fmod(x1._data, x2._data)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.round((x1._data - r) / x2._data)
    return _linearized(r, (1, x1), (-q, x2))


@_numpy_version(np.divmod)
def _divmod(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """(floor(x1/x2), x1 − floor(x1/x2)·x2): the quotient is piecewise constant."""
    _ufunc_kwargs(np.divmod, kwargs)
    x1, x2 = _real_ufunc_input(np.divmod, x1, x2)
    q, r = np.divmod(x1._data, x2._data)
    note_escape("divmod", x1, x2)      # (the quotient: a value outside the graph)
    return as_tensor(q), _linearized(r, (1, x1), (-q, x2))


@_numpy_version(np.modf)
def _modf(x: ArrayLike, /, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """(x − trunc(x), trunc(x)): the integral part is piecewise constant."""
    _ufunc_kwargs(np.modf, kwargs)
    x, = _real_ufunc_input(np.modf, x)
    frac, whole = np.modf(x._data)
    note_escape("modf", x)
    return _linearized(frac, (1, x)), as_tensor(whole)


@_numpy_version(np.frexp)
def _frexp(x: ArrayLike, /, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """(m, e) with x = m·2^e: m = x·2^(−e) (e piecewise constant, an int32 tensor)."""
    _ufunc_kwargs(np.frexp, kwargs)
    x, = _real_ufunc_input(np.frexp, x)
    m, e = np.frexp(x._data)
    note_escape("frexp", x)
    return _linearized(m, (np.ldexp(np.ones((), x.dtype), -e), x)), as_tensor(e)


@_numpy_version(np.ldexp)
def _ldexp(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    """x1·2^x2 for integer x2: linear in x1."""
    _ufunc_kwargs(np.ldexp, kwargs)
    x1, = _real_ufunc_input(np.ldexp, x1)
    n = _payload_of(x2)
    return _linearized(np.ldexp(x1._data, n), (np.ldexp(np.ones((), x1.dtype), n), x1))


@_numpy_version(np.heaviside)
def _heaviside(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    """0 for x1 < 0, 1 for x1 > 0, x2 where x1 = 0 (differentiable in x2 there), NaN for NaN."""
    _ufunc_kwargs(np.heaviside, kwargs)
    x1, x2 = _real_ufunc_input(np.heaviside, x1, x2)
    dt = np.result_type(x1.dtype, x2.dtype)
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    p = np.broadcast_to(x1._data, shape)
    step = np.where(np.isnan(p), np.nan, (p > 0).astype(dt))
    return elementwise.where(p == 0, structure.broadcast_to(_cast(x2, dt), shape), step)
