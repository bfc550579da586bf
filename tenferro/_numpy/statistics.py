"""NumPy's statistics on tensors: average, cov, corrcoef, ptp, the
``where=``/``initial=`` reductions, the nan-functions, median, percentile, quantile."""
import functools
import inspect
import math
import warnings
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray
from numpy.lib.array_utils import normalize_axis_tuple

from .._errors import ShapeError
from .._ops import elementwise, manipulation, reductions, registry, sorting, structure
from .._ops.registry import register
from .._ops._util import floating, payload
from .._tensor import Tensor, _find_tracked, _payloads
from .plumbing import (_Axis, _NpFn, _arr, _atleast, _cast, _fallback, _farr, _no_out,
                       _numpy_check, _numpy_version, _payload_of, _qualname, _tensors,
                       _unsupported)

@_numpy_version(np.average)
def _average(a: ArrayLike, axis: _Axis = None, weights: ArrayLike | None = None,
             returned: bool = False, *, keepdims: bool = False) -> Any:
    a = _arr(a)
    axes = None if axis is None else normalize_axis_tuple(axis, a.ndim)
    if weights is None:
        avg = reductions.mean(floating(a), axes, keepdims=keepdims)
        scl = Tensor._wrap(np.asarray(a.size / max(avg.size, 1), dtype=avg.dtype))
    else:
        w = _arr(weights)
        if w.shape != a.shape:
            if axes is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if w.shape != tuple(a.shape[ax] for ax in axes):
                raise ShapeError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = structure.transpose(w, tuple(np.argsort(axes)))
            w = structure.reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(a.shape)))
        dt = np.result_type(a.dtype, w.dtype, *(("f8",) if a.dtype.kind in "biu" else ()))
        scl = reductions.sum(_cast(w, dt), axes, keepdims=keepdims)
        if np.any(scl._data == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = reductions.sum(_cast(a, dt) * _cast(w, dt), axes, keepdims=keepdims) / scl
    if returned:
        if scl.shape != avg.shape:
            scl = structure.broadcast_to(scl, avg.shape)
        return avg, scl
    return avg


@_numpy_version(np.cov)
def _cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
         ddof: int | None = None, fweights: ArrayLike | None = None,
         aweights: ArrayLike | None = None, *, dtype: DTypeLike | None = None) -> Tensor:
    if ddof is not None and ddof != int(ddof):
        raise ShapeError("ddof must be integer")
    m = _arr(m)
    if m.ndim > 2:
        raise ShapeError("m has more than 2 dimensions")
    dt = np.result_type(m.dtype, np.float64) if dtype is None else np.dtype(dtype)
    if y is not None:
        y = _arr(y)
        if y.ndim > 2:
            raise ShapeError("y has more than 2 dimensions")
        if dtype is None:
            dt = np.result_type(dt, y.dtype)
    x = _cast(_atleast(m, 2), dt)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        _numpy_check(np.cov, "no variables", m, y, rowvar=rowvar, bias=bias, ddof=ddof)
    if y is not None:
        y = _cast(_atleast(y, 2), dt)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = structure.concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    fact: Tensor | float
    if fweights is not None:
        fw = _payload_of(fweights)
        if not np.all(fw == np.around(fw)):
            raise TypeError("fweights must be integer")
        if fw.ndim > 1 or fw.shape[0] != x.shape[1] or np.any(fw < 0):
            _numpy_check(np.cov, "these fweights", m, y, rowvar=rowvar, fweights=fweights)
        w = Tensor._wrap(fw.astype(np.float64))
    if aweights is not None:
        aw = _farr(aweights)
        if aw.ndim > 1 or aw.shape[0] != x.shape[1] or np.any(aw._data < 0):
            _numpy_check(np.cov, "these aweights", m, y, rowvar=rowvar, aweights=aweights)
        w = aw if w is None else w * aw
    avg, w_sum = _average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = x.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * reductions.sum(w * aw) / w_sum
    if not isinstance(fact, Tensor) and fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        fact = 0.0
    x = x - avg[:, None]
    xw = x if w is None else x * w
    c = structure.matmul(x, elementwise.conj(xw.T))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c * (1.0 / fact)
    return structure.squeeze(c)


@_numpy_version(np.corrcoef)
def _corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, *,
              dtype: DTypeLike | None = None) -> Tensor:
    c = _cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c      # NumPy: nan for 0, 1 otherwise
    d = structure.diagonal(c)
    std = elementwise.sqrt(elementwise.real(d))
    c = c / std[:, None] / std[None, :]
    # clip to [-1, 1] (real and imaginary parts), as NumPy does against rounding
    if c.dtype.kind == "c":
        return elementwise.clip(elementwise.real(c), -1, 1) \
            + 1j * elementwise.clip(elementwise.imag(c), -1, 1)
    return elementwise.clip(c, -1, 1)


@_numpy_version(np.ptp)
def _ptp(a: ArrayLike, axis: _Axis = None, out: object = None, keepdims: bool = False
         ) -> Tensor:
    _no_out(np.ptp, out)
    a = _arr(a)
    return reductions.max(a, axis, keepdims=keepdims) - reductions.min(a, axis, keepdims=keepdims)


# -- masked reductions: the nan-functions and where=/initial= ------------------------------------
# The entries outside ``mask`` are replaced by the reduction's neutral value with tf.where,
# so they get a zero gradient; counts are constants.

def _masked(kind: str, a: ArrayLike, mask: ArrayLike, axis: _Axis = None,
            dtype: DTypeLike | None = None, keepdims: bool = False, initial: Any = None,
            ddof: float = 0, strict: bool = True) -> Tensor:
    """The reduction ``kind`` of ``a`` over the entries where ``mask`` holds. ``strict``:
    max/min without ``initial`` need every entry (NumPy's where= rule)."""
    a = _arr(a)
    mask = np.broadcast_to(mask, a.shape)
    axes = None if axis is None else normalize_axis_tuple(axis, a.ndim)
    if kind in ("sum", "prod"):
        r: Tensor = getattr(reductions, kind)(
            elementwise.where(mask, a, 0 if kind == "sum" else 1), axes, dtype=dtype,
            keepdims=keepdims)
        if initial is not None:
            r = r + initial if kind == "sum" else r * initial
        return r
    if kind in ("max", "min"):
        if strict and initial is None and not mask.all():
            raise ShapeError(f"reduction operation '{kind}imum' does not have an identity, "
                             f"so to use a where mask one has to specify 'initial'")
        fill = -np.inf if kind == "max" else np.inf
        r = getattr(reductions, kind)(elementwise.where(mask, a, fill), axes, keepdims=keepdims)
        if initial is not None:
            r = (elementwise.maximum if kind == "max" else elementwise.minimum)(r, initial)
        return r
    a = _cast(floating(a), dtype)
    cnt = np.sum(mask, axis=axes, keepdims=True)
    real = np.finfo(a.dtype).dtype
    s = reductions.sum(elementwise.where(mask, a, 0), axes, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s / cnt.astype(real)
        if kind == "mean":
            return mean if keepdims else _drop(mean, axes)
        c = elementwise.where(mask, a - mean, 0)
        sq = elementwise.real(c * elementwise.conj(c)) if c.dtype.kind == "c" else c * c
        dof = np.maximum(cnt - ddof, 0).astype(real)
        var = reductions.sum(sq, axes, keepdims=True) / dof
    if np.any(dof <= 0):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=4)
        var = elementwise.where(dof <= 0, np.nan, var)
    r = var if kind == "var" else elementwise.sqrt(var)
    return r if keepdims else _drop(r, axes)


def _drop(r: Tensor, axes: tuple[int, ...] | None) -> Tensor:
    return structure.squeeze(r, axes) if axes is not None else structure.reshape(r, ())


def _given(np_fn: _NpFn, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a call by parameter name, under NumPy's signature of ``np_fn``."""
    return dict(_signature(np_fn).bind(*args, **kwargs).arguments)


@functools.cache
def _signature(np_fn: _NpFn) -> inspect.Signature:
    return inspect.signature(np_fn)


def _extend_reduction(np_fn: _NpFn, kind: str) -> None:
    """``where=``/``initial=`` for a NumPy reduction whose tenferro version lacks them:
    NumPy's result for plain values, a masked reduction for tracked ones."""
    base = registry.FUNCTIONS.get(np_fn)
    if base is None:
        return
    name = _qualname(np_fn)

    def f(*args: Any, **kwargs: Any) -> Any:
        kw = _given(np_fn, args, kwargs)
        where, initial = kw.pop("where", True), kw.pop("initial", None)
        if where is True and initial is None:
            return base(*args, **kwargs)
        if _find_tracked((args, kwargs)) is None:
            return _tensors(np_fn(*_payloads(args, name), **_payloads(kwargs, name)))
        _no_out(np_fn, kw.pop("out", None))
        if kw.pop("mean", None) is not None:
            return _fallback(np_fn, args, kwargs)
        if "correction" in kw:
            kw["ddof"] = kw.pop("correction")
        return _masked(kind, kw.pop("a"), payload(where).astype(bool), initial=initial, **kw)

    functools.update_wrapper(f, base)
    register(f, functions=(np_fn,))


_fn: _NpFn
for _fn, _kind in ((np.sum, "sum"), (np.prod, "prod"), (np.mean, "mean"), (np.var, "var"),
                   (np.std, "std"), (np.max, "max"), (np.amax, "max"), (np.min, "min"),
                   (np.amin, "min")):
    _extend_reduction(_fn, _kind)


def _notnan(a: ArrayLike) -> NDArray[np.bool_] | bool:
    return ~np.isnan(payload(a)) if payload(a).dtype.kind in "fc" else True


def _nan_reduction(np_fn: _NpFn, kind: str) -> None:
    """np.nansum, ...: the reduction over the entries that are not NaN (NumPy's results:
    nanmax/nanmin of an all-NaN slice are NaN, nanmean/nanvar of one NaN, with NumPy's
    RuntimeWarning; those entries get a zero gradient)."""
    def f(*args: Any, **kwargs: Any) -> Any:
        kw = _given(np_fn, args, kwargs)
        _no_out(np_fn, kw.pop("out", None))
        a, where = _arr(kw.pop("a")), kw.pop("where", True)
        if kw.pop("mean", None) is not None:
            return _fallback(np_fn, args, kwargs)
        if "correction" in kw:
            kw["ddof"] = kw.pop("correction")
        if kind in ("var", "std") and where is True and not np.isnan(a._data).any():
            return getattr(np, kind)(a, **kw)        # NumPy too calls np.var/np.std then
        mask = np.logical_and(_notnan(a), payload(where))
        r = _masked(kind, a, mask, strict=where is not True, **kw)
        axis = kw.get("axis")
        axes = None if axis is None else normalize_axis_tuple(axis, a.ndim)
        empty = ~np.any(np.broadcast_to(mask, a.shape), axis=axes,
                        keepdims=kw.get("keepdims", False))
        if kind in ("max", "min") and kw.get("initial") is None and np.any(empty):
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
            r = elementwise.where(empty, np.nan, r)
        elif kind == "mean" and np.any(empty):
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
        return r

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    _numpy_version(np_fn)(f)


for _fn, _kind in ((np.nansum, "sum"), (np.nanprod, "prod"), (np.nanmean, "mean"),
                   (np.nanvar, "var"), (np.nanstd, "std"), (np.nanmax, "max"),
                   (np.nanmin, "min")):
    _nan_reduction(_fn, _kind)


def _nan_scan(np_fn: _NpFn, scan: Callable[..., Any], neutral: int) -> None:
    """np.nancumsum, np.nancumprod: the scan with the NaNs replaced by its neutral value."""
    def f(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None,
          out: object = None) -> Tensor:
        _no_out(np_fn, out)
        a = _arr(a)
        # np.cumsum of a tensor dispatches to tenferro's (a Tensor; the stubs say ndarray)
        r: Tensor = scan(elementwise.where(_notnan(a), a, neutral), axis=axis, dtype=dtype)
        return r

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    _numpy_version(np_fn)(f)


_nan_scan(np.nancumsum, np.cumsum, 0)
_nan_scan(np.nancumprod, np.cumprod, 1)


# -- order statistics: median, quantile, percentile (and their nan-versions) ----------------------
# The sorted values are a differentiable gather (tf.sort); NumPy's virtual index
# h(n, q) (Hyndman & Fan, "Sample quantiles in statistical packages", Am. Stat. 50, 1996)
# picks the neighbours s[⌊h⌋], s[⌊h⌋+1] and the weight γ = h − ⌊h⌋ of NumPy's two-sided
# lerp. ⌊h⌋ is piecewise constant; γ is differentiable in q (so are the results).

_ALPHA_BETA: dict[str, tuple[float, float]] = {
               "interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_INDEX_METHODS: dict[str, Callable[..., Any]] = {"lower": np.floor, "higher": np.ceil,
                                                  "nearest": np.around}
_LERP_METHODS = ("linear", "midpoint", "averaged_inverted_cdf") + tuple(_ALPHA_BETA)


def _virtual_index(method: str, n: Any, q: Any) -> Any:
    """NumPy's virtual index of quantile q among n sorted values (arrays or tensors)."""
    if method == "linear":
        return (n - 1) * q
    if method == "averaged_inverted_cdf":
        return n * q - 1
    if method == "midpoint":
        h = (n - 1) * q
        return 0.5 * (np.floor(h) + np.ceil(h))
    alpha, beta = _ALPHA_BETA[method]
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


def _reduce_last(a: Tensor, axis: _Axis) -> tuple[Tensor, tuple[int, ...]]:
    """``a`` with the axes of ``axis`` moved last and merged: (kept..., n)."""
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    keep = [i for i in range(a.ndim) if i not in axes]
    x = structure.transpose(a, keep + list(axes)) if keep + list(axes) != list(range(a.ndim)) else a
    kept = tuple(a.shape[i] for i in keep)
    return structure.reshape(x, kept + (math.prod(a.shape[i] for i in axes),)), axes


def _restore(r: Tensor, a: Tensor, axes: tuple[int, ...], keepdims: bool,
             lead: tuple[int, ...] = ()) -> Tensor:
    """(lead..., kept...) results with the reduced axes back as 1s if ``keepdims``."""
    if not keepdims:
        return r
    return structure.reshape(r, lead + tuple(1 if i in axes else n for i, n in enumerate(a.shape)))


def _order_stats(a: ArrayLike, axis: _Axis, ignore_nan: bool
                 ) -> tuple[Tensor, Tensor, tuple[int, ...], NDArray[Any], NDArray[np.bool_]]:
    """Sorted slices (kept..., n), the reduced axes, and per slice the number of values
    used (n, or the non-NaN count) and whether the slice has a NaN."""
    a = _farr(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    x, axes = _reduce_last(a, axis)
    s = sorting.sort(x, axis=-1)                        # NaNs sort last, as in NumPy
    nan = np.isnan(s._data)
    cnt = (~nan).sum(-1, keepdims=True) if ignore_nan else np.full(s.shape[:-1] + (1,),
                                                                     s.shape[-1])
    return a, s, axes, cnt, nan.any(-1, keepdims=True)


def _nan_slices(r: Tensor, s_has_nan: NDArray[np.bool_], cnt: NDArray[Any], ignore_nan: bool,
                what: str = "All-NaN slice encountered") -> Tensor:
    if ignore_nan:
        empty = cnt == 0
        if empty.any():
            warnings.warn(what, RuntimeWarning, stacklevel=4)
            return elementwise.where(empty, np.nan, r)
        return r
    return elementwise.where(s_has_nan, np.nan, r) if s_has_nan.any() else r


def _quantile(np_fn: _NpFn, a: ArrayLike, q: ArrayLike, axis: _Axis, method: str,
              keepdims: bool, ignore_nan: bool, weak: bool) -> Tensor:
    if method not in _LERP_METHODS and method not in _INDEX_METHODS:
        if method in ("inverted_cdf", "closest_observation"):
            _unsupported(np_fn, f"method={method!r}")
        raise ShapeError(f"{method!r} is not a valid method")
    qdt = np.asarray(payload(q)).dtype
    qp = np.asarray(payload(q), dtype=np.float64)
    if not (np.all(qp >= 0) and np.all(qp <= 1)):
        raise ShapeError("Quantiles must be in the range [0, 1]")
    a, s, axes, cnt, has_nan = _order_stats(a, axis, ignore_nan)
    if s.shape[-1] == 0:
        _unsupported(np_fn, "an empty reduction")
    last = np.maximum(cnt - 1, 0)
    qf = qp.ravel()
    if method in _INDEX_METHODS:
        lo = np.clip(_INDEX_METHODS[method]((cnt - 1) * qf).astype(np.intp), 0, last)
        r = manipulation.take_along_axis(s, lo, axis=-1)
    else:
        h = _virtual_index(method, cnt, qf)
        lo = np.floor(h)
        gamma = h - lo
        if method == "midpoint":
            gamma = np.where(h % 1 == 0, 0.0, 0.5)
        elif method == "averaged_inverted_cdf":
            gamma = np.where(gamma == 0, 0.5, 1.0)
        elif isinstance(q, Tensor) and _find_tracked(q) is not None:
            gamma = _virtual_index(method, cnt, structure.reshape(floating(q), (-1,))) - lo
        lo = np.clip(lo, 0, last).astype(np.intp)
        hi = np.clip(np.floor(h) + 1, 0, last).astype(np.intp)
        hi = np.where(h >= cnt - 1, last, hi)
        lo = np.where(h >= cnt - 1, last, lo)
        r = _lerp(manipulation.take_along_axis(s, lo, axis=-1),
                  manipulation.take_along_axis(s, hi, axis=-1), gamma)
    r = _nan_slices(r, has_nan, cnt, ignore_nan)
    r = structure.moveaxis(r, -1, 0)                                   # (Q, kept...)
    r = structure.reshape(r, qp.shape + r.shape[1:])
    if method in _INDEX_METHODS or (method == "linear" and qdt.kind in "iub" and not weak):
        dt = a.dtype                                  # a selection of a's values
    else:
        dt = np.result_type(a.dtype, 0.0 if weak else np.result_type(qdt, np.float64)
                            if qdt.kind not in "fc" else qdt)
    return _cast(_restore(r, a, axes, keepdims, qp.shape), dt)


def _lerp(lo: Tensor, hi: Tensor, t: Any) -> Tensor:
    """NumPy's lerp: lo + (hi − lo)·t, or hi − (hi − lo)·(1 − t) where t ≥ 0.5 (exact at
    t = 1); ``t`` an array or a tensor."""
    d = hi - lo
    return elementwise.where(payload(t) >= 0.5, hi - d * (1 - t), lo + d * t)


def _quantile_version(np_fn: _NpFn, percent: bool, ignore_nan: bool) -> Callable[..., Any]:
    def f(a: ArrayLike, q: ArrayLike, axis: _Axis = None, out: object = None,
          overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
          *, weights: ArrayLike | None = None, interpolation: str | None = None) -> Any:
        _no_out(np_fn, out)
        if weights is not None or interpolation is not None:
            return _fallback(np_fn, (a, q), dict(axis=axis, method=method, weights=weights,
                                                  interpolation=interpolation))
        weak = type(q) in (int, float)            # NumPy's weak promotion of q
        if percent:
            q = q / 100 if isinstance(q, Tensor) else np.true_divide(q, 100)
        return _quantile(np_fn, a, q, axis, method, keepdims, ignore_nan, weak)

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    return _numpy_version(np_fn)(f)


for _fn, _pct, _nan in ((np.quantile, False, False), (np.percentile, True, False),
                        (np.nanquantile, False, True), (np.nanpercentile, True, True)):
    _quantile_version(_fn, _pct, _nan)


def _median_version(np_fn: _NpFn, ignore_nan: bool) -> Callable[..., Any]:
    def f(a: ArrayLike, axis: _Axis = None, out: object = None, overwrite_input: bool = False,
          keepdims: bool = False) -> Tensor:
        """The mean of the middle one or two sorted values (as NumPy computes it)."""
        _no_out(np_fn, out)
        a, s, axes, cnt, has_nan = _order_stats(a, axis, ignore_nan)
        if s.shape[-1] == 0:
            _unsupported(np_fn, "an empty reduction")
        lo = np.maximum((cnt - 1) // 2, 0)
        hi = np.maximum(cnt // 2, 0)
        mid = manipulation.take_along_axis(s, lo, axis=-1)
        if not np.array_equal(lo, hi):
            mid = (mid + manipulation.take_along_axis(s, np.minimum(hi, s.shape[-1] - 1),
                                                      axis=-1)) / 2
        r = _nan_slices(mid, has_nan, cnt, ignore_nan)[..., 0]
        return _restore(r, a, axes, keepdims)

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    return _numpy_version(np_fn)(f)


_median_version(np.median, False)
_median_version(np.nanmedian, True)
