"""NumPy's calculus and signal functions on tensors: trapezoid, gradient, interp,
convolve, correlate, ediff1d, unwrap, angle, real_if_close, nan_to_num, sinc, vander,
linspace, logspace, geomspace."""
import operator
from typing import Any, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, DTypeLike
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .._errors import ShapeError
from .._ops import creation, elementwise, manipulation, reductions, structure
from .._ops._util import payload
from .._tensor import Tensor, _find_tracked
from .plumbing import _Axis, _NpFn, _arr, _cast, _fallback, _farr, _numpy_version, _tensors

@_numpy_version(np.trapezoid)
def _trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: Any = 1.0, axis: int = -1
               ) -> Tensor:
    y = _arr(y)
    axis = normalize_axis_index(axis, y.ndim)
    if x is None:
        d = dx
    else:
        x = _arr(x)
        if x.ndim == 1:
            d = reductions.diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = structure.reshape(d, tuple(shape))
        else:
            d = reductions.diff(x, axis=axis)
    lo = (slice(None),) * axis + (slice(None, -1),)
    hi = (slice(None),) * axis + (slice(1, None),)
    return reductions.sum(d * (y[hi] + y[lo]) / 2.0, axis)


@_numpy_version(np.gradient)
def _gradient(f: ArrayLike, *varargs: ArrayLike, axis: _Axis = None, edge_order: int = 1
              ) -> Tensor | tuple[Tensor, ...]:
    """NumPy's finite differences (second order inside; first or second order at the
    edges; uniform or per-axis coordinates), written with slices of tensors. Coordinates
    that require grad always take the non-uniform formula (equal in value on a uniform
    grid, and it has the derivative with respect to each coordinate)."""
    f = _farr(f)
    n = f.ndim
    axes = tuple(range(n)) if axis is None else normalize_axis_tuple(axis, n)
    if not varargs:
        dx: list[Any] = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(payload(varargs[0])) == 0:
        dx = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        dx = []
        for i, d in enumerate(varargs):
            if np.ndim(payload(d)) == 0:
                dx.append(d)
                continue
            d = _farr(d)
            if d.ndim != 1:
                raise ShapeError("distances must be either scalars or 1d")
            if d.shape[0] != f.shape[axes[i]]:
                raise ShapeError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            diff = reductions.diff(d)
            uniform = _find_tracked(d) is None and np.all(diff._data == diff._data[0])
            dx.append(diff[0] if uniform else diff)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ShapeError("'edge_order' greater than 2 not supported")
    out = [_gradient_axis(f, ax, d, edge_order) for ax, d in zip(axes, dx)]
    return out[0] if len(axes) == 1 else tuple(out)


def _gradient_axis(f: Tensor, axis: int, dx: Any, edge_order: int) -> Tensor:
    if f.shape[axis] < edge_order + 1:
        raise ShapeError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    def at(s: slice) -> Tensor:
        return f[(slice(None),) * axis + (s,)]

    def along(v: Any) -> Any:      # a 1-d coefficient vector broadcast along ``axis``
        return structure.reshape(v, (-1,) + (1,) * (f.ndim - axis - 1)) if isinstance(v, Tensor) \
            and v.ndim == 1 else v

    uniform = not (isinstance(dx, Tensor) and dx.ndim == 1)
    if uniform:
        inner = (at(slice(2, None)) - at(slice(None, -2))) / (2.0 * dx)
    else:
        d1, d2 = dx[:-1], dx[1:]
        a = along(-d2 / (d1 * (d1 + d2)))
        b = along((d2 - d1) / (d1 * d2))
        c = along(d1 / (d2 * (d1 + d2)))
        inner = a * at(slice(None, -2)) + b * at(slice(1, -1)) + c * at(slice(2, None))
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / (dx if uniform else dx[0])
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / (dx if uniform else dx[-1])
    else:
        if uniform:
            a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
        else:
            d1, d2 = dx[0], dx[1]
            a = -(2.0 * d1 + d2) / (d1 * (d1 + d2))
            b = (d1 + d2) / (d1 * d2)
            c = -d1 / (d2 * (d1 + d2))
        first = a * at(slice(0, 1)) + b * at(slice(1, 2)) + c * at(slice(2, 3))
        if uniform:
            a, b, c = 0.5 / dx, -2.0 / dx, 1.5 / dx
        else:
            d1, d2 = dx[-2], dx[-1]
            a = d2 / (d1 * (d1 + d2))
            b = -(d2 + d1) / (d1 * d2)
            c = (2.0 * d2 + d1) / (d2 * (d1 + d2))
        last = a * at(slice(-3, -2)) + b * at(slice(-2, -1)) + c * at(slice(-1, None))
    out = structure.concatenate([first, inner, last], axis=axis)
    return _cast(out, f.dtype)


@_numpy_version(np.interp)
def _interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | None = None,
            right: ArrayLike | None = None, period: float | None = None) -> Tensor:
    """Piecewise-linear interpolation y = fp[j] + (x − xp[j])·(fp[j+1] − fp[j])/(xp[j+1] −
    xp[j]) on the segment xp[j] ≤ x < xp[j+1] (j piecewise constant); exactly fp[j] at a
    knot (NumPy's rule), so the derivative in x there is the slope of the segment to the
    right. Outside [xp[0], xp[-1]]: left/right (default fp[0]/fp[-1])."""
    x, xp, fp = _farr(x), _farr(xp), _farr(fp)
    cdt = np.complex128 if fp.dtype.kind == "c" else np.float64
    x, xp, fp = _cast(x, np.float64), _cast(xp, np.float64), _cast(fp, cdt)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ShapeError("object too deep for desired array")
    if xp.shape[0] != fp.shape[0]:
        raise ShapeError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ShapeError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ShapeError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        x = x - period * np.floor(x._data / period)        # x mod period
        xp = xp - period * np.floor(xp._data / period)
        order = np.argsort(xp._data, kind="stable")
        xp, fp = xp[order], fp[order]
        xp = structure.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = structure.concatenate([fp[-1:], fp, fp[:1]])
    left = fp[0] if left is None else _cast(_farr(left), cdt)
    right = fp[-1] if right is None else _cast(_farr(right), cdt)
    px, pxp = x._data, xp._data
    n = pxp.shape[0]
    below, above = px < pxp[0], px > pxp[-1]
    if n == 1:
        return elementwise.where(below, left, elementwise.where(above, right, fp[0]))
    nan = np.isnan(px)
    if nan.any():       # NaN entries give NaN; keep them out of the segment arithmetic
        x = elementwise.where(nan, pxp[0], x)
        px = x._data
    j = np.clip(np.searchsorted(pxp, px, side="right") - 1, 0, n - 2)
    knot = np.where(px == pxp[-1], n - 1, j)
    at_knot = pxp[knot] == px
    x0, x1, f0, f1 = xp[j], xp[j + 1], fp[j], fp[j + 1]
    with np.errstate(all="ignore"):
        inside = (f1 - f0) / (x1 - x0) * (x - x0) + f0
        # at a knot NumPy returns fp there exactly: keep the segment's derivative (the
        # one to the right; the last one at xp[-1]) and correct the value by a constant
        fix = np.where(at_knot, fp._data[knot] - inside._data, 0)
    bad = at_knot & ~np.isfinite(fix)
    y = elementwise.where(bad, fp[knot], inside + np.where(bad, 0, fix))
    y = elementwise.where(below, left, elementwise.where(above, right, y))
    return elementwise.where(nan, np.nan, y) if nan.any() else y


def _full_convolution(a: Tensor, v: Tensor) -> Tensor:
    """c[k] = Σ_i a[i]·v[k−i] (1-d), as a matrix-vector product with the Toeplitz matrix
    of ``v`` gathered from v padded with one zero (so its derivative is a gather's)."""
    if a.shape[0] < v.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    k = np.arange(n + m - 1)[:, None] - np.arange(m)[None, :]
    idx = np.where((k >= 0) & (k < n), k, n)
    az = structure.concatenate([a, creation.zeros((1,), dtype=a.dtype)])
    return structure.matmul(az[idx], v)


def _conv_crop(full: Tensor, n: int, m: int, mode: str, swapped_end: bool = False) -> Tensor:
    lo, hi = min(n, m), max(n, m)
    if mode == "full":
        return full
    if mode == "same":
        start = (lo - 1) // 2
        if swapped_end:
            start = n + m - 1 - hi - start
        return full[start:start + hi]
    if mode == "valid":
        return full[lo - 1:hi]
    raise ShapeError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def _conv_inputs(np_fn: _NpFn, a: ArrayLike, v: ArrayLike) -> tuple[Tensor, Tensor]:
    a, v = _arr(a), _arr(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ShapeError("object too deep for desired array")
    if a.shape[0] == 0:
        raise ShapeError("a cannot be empty")
    if v.shape[0] == 0:
        raise ShapeError("v cannot be empty")
    dt = np.result_type(a.dtype, v.dtype)
    return _cast(a, dt), _cast(v, dt)


@_numpy_version(np.convolve)
def _convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Tensor:
    a, v = _conv_inputs(np.convolve, a, v)
    return _conv_crop(_full_convolution(a, v), a.shape[0], v.shape[0], mode)


@_numpy_version(np.correlate)
def _correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Tensor:
    """c[k] = Σ_n a[n+k]·conj(v[n]) = (a ∗ conj(v reversed))[k]; NumPy centres "same"
    differently when v is the longer input."""
    a, v = _conv_inputs(np.correlate, a, v)
    n, m = a.shape[0], v.shape[0]
    full = _full_convolution(a, elementwise.conj(manipulation.flip(v)))
    return _conv_crop(full, n, m, mode, swapped_end=n < m)


@_numpy_version(np.ediff1d)
def _ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
             to_begin: ArrayLike | None = None) -> Tensor:
    ary = structure.ravel(_arr(ary))

    def extra(e: ArrayLike) -> list[Tensor]:
        e = _arr(e)
        if not np.can_cast(e.dtype, ary.dtype, casting="same_kind"):
            raise TypeError("dtype of `to_begin` or `to_end` must be compatible with input "
                            "`ary` under the `same_kind` rule.")
        return [structure.ravel(_cast(e, ary.dtype))]

    parts = ((extra(to_begin) if to_begin is not None else []) + [ary[1:] - ary[:-1]]
             + (extra(to_end) if to_end is not None else []))
    return structure.concatenate(parts) if len(parts) > 1 else parts[0]


@_numpy_version(np.unwrap)
def _unwrap(p: ArrayLike, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi
            ) -> Any:
    """p plus the multiples of the period NumPy adds (piecewise constant)."""
    p = _farr(p)
    if isinstance(period, Tensor) or isinstance(discont, Tensor):
        return _fallback(np.unwrap, (p,), dict(discont=discont, axis=axis, period=period))
    shift = np.unwrap(p._data, discont, axis, period=period) - p._data
    return p + shift


@_numpy_version(np.angle)
def _angle(z: ArrayLike, deg: bool = False) -> Tensor:
    z = _farr(z)
    a = elementwise.atan2(elementwise.imag(z), elementwise.real(z)) if z.dtype.kind == "c" \
        else elementwise.atan2(creation.zeros_like(z), z)
    return a * (180 / np.pi) if deg else a


@_numpy_version(np.real_if_close)
def _real_if_close(a: ArrayLike, tol: float = 100) -> Tensor:
    a = _arr(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    return elementwise.real(a) if np.all(np.abs(a._data.imag) < tol) else a


@_numpy_version(np.nan_to_num)
def _nan_to_num(x: ArrayLike, copy: bool = True, nan: ArrayLike = 0.0,
                posinf: ArrayLike | None = None, neginf: ArrayLike | None = None) -> Tensor:
    """The entries that are finite stay (derivative 1); NaN/±inf become NumPy's constants."""
    x = _arr(x)
    if x.dtype.kind not in "fc":
        return x
    # NumPy takes these fill values as arrays at run time; its stubs want floats
    nan_fill: Any = payload(nan)
    posinf_fill: Any = payload(posinf) if posinf is not None else None
    neginf_fill: Any = payload(neginf) if neginf is not None else None
    fixed = np.nan_to_num(x._data, nan=nan_fill, posinf=posinf_fill, neginf=neginf_fill)
    if x.dtype.kind == "c":
        re = elementwise.where(np.isfinite(x._data.real), elementwise.real(x), fixed.real)
        im = elementwise.where(np.isfinite(x._data.imag), elementwise.imag(x), fixed.imag)
        return re + 1j * im
    return elementwise.where(np.isfinite(x._data), x, fixed)


@_numpy_version(np.sinc)
def _sinc(x: ArrayLike) -> Tensor:
    """sin(πx)/(πx); for |πx| < 0.01 its Taylor polynomial 1 − u²/6 + u⁴/120 − u⁶/5040
    (u = πx, truncation < 1e-21): the quotient's autodiff derivatives cancel badly near 0
    (error ~ eps/u²), the polynomial's are accurate, and exact at 0 itself."""
    x = _farr(x)
    small = np.abs(np.pi * x._data) < 0.01
    u = np.pi * x
    u2 = u * u
    taylor = 1 - u2 / 6 * (1 - u2 / 20 * (1 - u2 / 42))
    safe = elementwise.where(small, 1.0, u)
    return elementwise.where(small, taylor, elementwise.sin(safe) / safe)


@_numpy_version(np.vander)
def _vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Tensor:
    """Columns 1, x, x·x, ... as a cumulative product (as NumPy computes them)."""
    x = _arr(x)
    if x.ndim != 1:
        raise ShapeError("x must be a one-dimensional array or sequence.")
    x = _cast(x, np.promote_types(x.dtype, int))
    n = x.shape[0] if N is None else N
    cols = [creation.ones((x.shape[0], min(n, 1)), dtype=x.dtype)]
    if n > 1:
        cols.append(reductions.cumulative_prod(
            structure.broadcast_to(x[:, None], (x.shape[0], n - 1)), axis=1))
    v = structure.concatenate(cols, axis=1)
    return v if increasing else manipulation.flip(v, axis=1)


@_numpy_version(np.linspace)
def _linspace(start: ArrayLike, stop: ArrayLike, num: SupportsIndex = 50, endpoint: bool = True,
              retstep: bool = False, dtype: DTypeLike | None = None, axis: int = 0, *,
              device: str | None = None) -> Any:
    num = operator.index(num)
    if num < 0:
        raise ShapeError(f"Number of samples, {num}, must be non-negative.")
    start, stop = _farr(start), _farr(stop)
    dt = np.result_type(start.dtype, stop.dtype, 1.0)       # inexact, weak like NumPy
    if dtype is not None and np.dtype(dtype).kind in "iub":
        # an integer sequence is piecewise constant in start/stop: NumPy's, constant
        # retstep is a bool here, not a Literal (the stubs' overloads want one)
        return _tensors(np.linspace(  # type: ignore[call-overload]
            start._data, stop._data, num, endpoint=endpoint, retstep=retstep, dtype=dtype,
            axis=axis))
    start, stop = _cast(start, dt), _cast(stop, dt)
    div = num - 1 if endpoint else num
    delta = stop - start
    steps = Tensor._wrap(np.arange(num, dtype=dt).reshape((-1,) + (1,) * delta.ndim))
    step: Tensor | float
    if div > 0:
        step = delta / div
        y = steps / div * delta if np.any(step._data == 0) else steps * step
    else:
        step = np.nan
        y = steps * delta
    y = y + start
    if endpoint and num > 1:
        y = structure.concatenate([y[:-1], structure.broadcast_to(stop, y.shape[1:])[None]])
    if axis != 0:
        y = structure.moveaxis(y, 0, axis)
    y = _cast(y, dtype)
    return (y, step) if retstep else y


@_numpy_version(np.logspace)
def _logspace(start: ArrayLike, stop: ArrayLike, num: SupportsIndex = 50, endpoint: bool = True,
              base: ArrayLike = 10.0, dtype: DTypeLike | None = None, axis: int = 0) -> Tensor:
    start, stop = _farr(start), _farr(stop)
    if not isinstance(base, (float, int)) and np.ndim(payload(base)):
        base = _farr(base)
        nd = max(start.ndim, stop.ndim, base.ndim)
        start, stop, base = (structure.reshape(t, (1,) * (nd - t.ndim) + t.shape)
                             for t in (start, stop, base))
        base = structure.expand_dims(base, axis=axis)
    y = _linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    return _cast(elementwise.pow(base, y), dtype)


@_numpy_version(np.geomspace)
def _geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
               dtype: DTypeLike | None = None, axis: int = 0) -> Any:
    start, stop = _farr(start), _farr(stop)
    if np.any(start._data == 0) or np.any(stop._data == 0):
        raise ShapeError("Geometric sequence cannot include zero")
    dt = np.result_type(start.dtype, stop.dtype, float(num))
    if np.dtype(dt).kind == "c":
        return _fallback(np.geomspace, (start, stop, num),
                         dict(endpoint=endpoint, dtype=dtype, axis=axis))
    start, stop = _cast(start, dt), _cast(stop, dt)
    sign = np.sign(start._data)                      # constant: the sequence keeps it
    start, stop = start * sign, stop * sign
    res = _logspace(elementwise.log(start) / np.log(10), elementwise.log(stop) / np.log(10),
                    num=num, endpoint=endpoint, base=10.0)
    shape = res.shape[1:]
    if num > 0:                                     # NumPy sets the endpoints exactly
        parts = [structure.broadcast_to(start, shape)[None], res[1:]]
        if num > 1 and endpoint:
            parts = [parts[0], res[1:-1], structure.broadcast_to(stop, shape)[None]]
        res = structure.concatenate(parts)
    res = res * sign
    if axis != 0:
        res = structure.moveaxis(res, 0, axis)
    return _cast(res, dtype)
