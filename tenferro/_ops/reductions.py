"""Reductions, scans and differences: sum, mean, var, std, prod, max/min (amax/amin),
logsumexp; cumulative_sum, cumulative_prod; diff; all, any (array API 2024.12 statistical
and utility functions, with NumPy's spellings).

Each reduction takes ``axis`` (None = all axes, an int or a tuple; ``()`` reduces nothing)
and ``keepdims`` like NumPy, and is a ``tf.<name>`` function, a Tensor method and the
override of the NumPy function of the same name (so rules elsewhere may call ``np.mean(t)``
...). ``axis`` may be passed by position (NumPy and PyTorch style), everything after it by
keyword (the standard's signatures). A VJP re-inserts the reduced axes (:func:`expand`) and
broadcasts back to the input shape; a JVP reduces the tangent the same way the primal
reduces the input.

dtypes (the standard's rules, which are NumPy's): ``sum``/``prod``/``cumulative_*`` keep a
floating dtype, give int64 (uint64) for smaller signed (unsigned) integers and int64 for
bool; ``dtype=`` casts the input first (a differentiable cast; complex to real raises).
``mean``/``var``/``std`` of integer or bool tensors are float64 (the standard's default
floating dtype, as in NumPy). ``all``/``any`` give bool tensors, without a gradient.

Deliberate differences from NumPy (each raises before anything is recorded):

* ``var``/``std`` with the NumPy spelling ``ddof`` raise ShapeError when ``ddof >= N``
  (N = number of reduced elements, including N = 0), where NumPy warns and returns inf/nan.
  The standard's spelling ``correction`` follows the standard instead: NaN when
  ``N - correction <= 0`` (and then a NaN gradient).
* ``max``/``min`` of complex tensors raise DTypeError (complex numbers are not ordered;
  NumPy's lexicographic order has no derivative). Over a zero-length axis they raise
  ShapeError where NumPy raises ValueError (ShapeError is a ValueError).
* ``cumulative_sum``/``cumulative_prod`` of a 0-d tensor raise ShapeError (the standard
  leaves it unspecified; ``numpy.cumsum`` flattens it first, and so does ``np.cumsum`` on
  a tensor).

``prod`` and ``cumulative_prod`` never divide: their derivatives are built from exclusive
cumulative products and linear recurrences (``_prod_partials``, ``_cumprod_vjp``), which
are themselves differentiable ops whose rules are again recurrences (``_excl``,
``_linscan``, ``_shift``), so every order is exact with zeros in the input.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol, Sequence

from numpy.typing import ArrayLike, DTypeLike

import builtins
import operator

import numpy as np

from .. import _dtypes
from .._engine import apply1, note_escape, sum_small
from .._errors import DTypeError, ShapeError
from .._kernels import load as _load_kernel
from .._tensor import Tensor
from . import _docs
from .registry import Op, defop, register, register_nondiff
from ._util import broadcast_to_shape, conj, floating, require_real, to_tensor
from .structure import _axis, _flat_if_no_axis, astype, broadcast_to, concatenate


# ---- numpydoc: the reductions' common arguments and errors (bare names in docstrings
# are filled in from here by ``_docs.shared``)
_DOCS = {
    "axis": ("int or tuple of int, optional", "The axes to reduce. Default None: all."),
    "keepdims": ("bool, optional", "Keep the reduced axes with length 1. Default False."),
    "x": ("array_like", "The input."),
}
_RAISES = {"ShapeError": "If an axis is out of range or repeated."}
# the cumulative reductions take one axis
_RAISES_CUMULATIVE = dict(_RAISES, ShapeError="If ``x`` is 0-d, or ``axis`` is omitted for "
                                              "``x`` of dimension > 1.")

__all__ = ["sum", "mean", "var", "std", "prod", "max", "min", "amax", "amin", "logsumexp",
           "cumulative_sum", "cumulative_prod", "diff", "all", "any"]


class _Reduction(Protocol):
    """The signature of the reductions made by a factory (max/min, all/any)."""
    __name__: str

    def __call__(self, x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *,
                 keepdims: bool = False) -> Tensor: ...


def normalize_axis(axis: object, ndim: int, name: str = "axis") -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative ints (None -> all axes)."""
    if axis is None:
        return tuple(range(ndim))
    axes: Sequence[Any]
    if isinstance(axis, (int, np.integer)):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = axis
    else:
        raise ShapeError(f"{name} must be None, an int or a tuple of ints, got {axis!r}")
    out: list[int] = []
    for a in axes:
        if not isinstance(a, (int, np.integer)):
            raise ShapeError(f"{name} must be None, an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < ndim:
            raise ShapeError(f"{name} {a} is out of bounds for a tensor of dimension {ndim}")
        out.append(int(a) % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"repeated axis in {name}={axis!r}")
    return tuple(sorted(out))


def _keep(y: Any, axes: tuple[int, ...], keepdims: bool, shape: tuple[int, ...]) -> Any:
    """A reduced value with its reduced axes back as length-1 axes (keepdims form)."""
    if keepdims or not axes or y.ndim == 0:   # a 0-d value broadcasts as it is
        return y
    return y.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))


def expand(g: Any, axes: tuple[int, ...], keepdims: bool, shape: tuple[int, ...]) -> Any:
    """A reduced cotangent broadcast back to the input ``shape``."""
    return broadcast_to_shape(_keep(g, axes, keepdims, shape), shape)


def _count(shape: tuple[int, ...], axes: Iterable[int]) -> int:
    """Number of elements reduced into each output entry."""
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _raw(v: Any) -> Any:
    """The ndarray under a rule value: for masks and weights, which are not differentiated."""
    return v._data if isinstance(v, Tensor) else v


def _sl(axis: int, s: slice) -> tuple[slice, ...]:
    """Index applying slice ``s`` along ``axis`` (leading axes whole)."""
    return (slice(None),) * axis + (s,)


def _cast(name: str, x: Tensor, dtype: DTypeLike | None) -> Tensor:
    """``x`` cast to ``dtype`` (None: unchanged) before accumulating: a differentiable
    cast for float/complex results; complex to real raises."""
    if dtype is None:
        return x
    dt = _dtypes.as_dtype(dtype)
    if x._data.dtype.kind == "c" and dt.kind != "c":
        raise DTypeError(f"{name}: dtype={dt} cannot hold the complex values of a {x.dtype} "
                         "tensor; pass a complex dtype, or reduce tf.real(x) / tf.abs(x)")
    return astype(x, dt, copy=False)


def _numpy_extras(name: str, out: object = None, initial: object = None,
                  where: object = None) -> None:
    """NumPy keywords that tensors do not take: ``out=``, ``initial=``, ``where=``."""
    if out is not None:
        raise TypeError(f"numpy.{name} on tensors: out= is not supported (tensors are not "
                        "written in place); use the returned value")
    if initial is not None:
        raise TypeError(f"numpy.{name} on tensors: initial= is not supported; combine the "
                        "result with the initial value explicitly")
    if where is not None and where is not True:
        raise TypeError(f"numpy.{name} on tensors: where= is not supported; mask first, "
                        f"e.g. tf.{name}(tf.where(mask, x, neutral_value))")


# ---- sum --------------------------------------------------------------------------------

# ctx is (axes, keepdims), or None for the common full reduction (sum of every entry).

def _sum_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    if ctx is None:
        return (broadcast_to_shape(gs[0], xs[0].shape),)
    axes, keepdims = ctx
    return (expand(gs[0], axes, keepdims, xs[0].shape),)


def _sum_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    if ctx is None:
        return (ts[0].sum(),)
    axes, keepdims = ctx
    return (ts[0].sum(axis=axes, keepdims=keepdims),)


# kernel: a full sum's plain backward runs the tape's compiled copy of _sum_vjp (tape.pyx
# vjp_kernel, VJP_SUM: the cotangent broadcast to x's shape; other sums run the rule)
_sum_op = defop("sum", _sum_vjp, _sum_jvp, kernel=_load_kernel("tape").VJP_SUM)
# (tf.compile's replay: ctx None is the sum of all entries, NumPy's pairwise sum that
# sum_small computes too; else (axes, keepdims))
_sum_op.replay = lambda ctx: (
    _sum_all if ctx is None else operator.methodcaller("sum", axis=ctx[0], keepdims=ctx[1]))


def _sum_all(x: Any) -> Any:
    return np.add.reduce(x, None)


@_docs.shared(_DOCS, _RAISES)
def sum(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *,
        dtype: DTypeLike | None = None,
        keepdims: bool = False) -> Tensor:
    """Sum over ``axis`` (all axes by default); 0 over zero elements.

    Parameters
    ----------
    x, axis
    dtype : dtype, optional
        Casts the input first. Default: the input's dtype, except that small integers
        accumulate in int64 (uint64) and bool in int64.
    keepdims

    Returns
    -------
    Tensor
        The sums.

    Raises
    ------
    ShapeError
    DTypeError
        If ``dtype`` cannot hold the (complex) values.

    Notes
    -----
    Derivative: linear; the VJP broadcasts the cotangent back over the reduced axes.

    Examples
    --------
    >>> x = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> tf.sum(x, axis=0)
    tensor([4., 6.], grad_fn=sum)
    >>> tf.grad([x.sum()], [x])[0]
    tensor([[1., 1.],
            [1., 1.]])
    """
    t: Tensor = to_tensor(x)
    if dtype is not None:
        t = _cast("sum", t, dtype)
        dtype = t._data.dtype           # NumPy would widen small integers again
    d = t._data
    y: Tensor
    if axis is None and not keepdims:        # the common case, kept lean
        small = sum_small(_sum_op, t)     # <= 65536 float entries: summed in C, NumPy's bits
        if small is not None:
            return small
        y = apply1(_sum_op, (t,), d.sum(dtype=dtype), ctx=None)
        return y
    axes = normalize_axis(axis, d.ndim)
    y = apply1(_sum_op, (t,), d.sum(axis=axes, dtype=dtype, keepdims=keepdims),
               ctx=(axes, keepdims))
    return y


def _np_sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Tensor:
    """``numpy.sum`` / ``t.sum`` on tensors."""
    if (axis is None and dtype is None and out is None and not keepdims and initial is None
            and where is None and type(a) is Tensor and a._data.dtype.kind in "fc"):
        # t.sum() of a float tensor, the loss of most programs: add.reduce skips
        # ndarray.sum's Python wrapper, this skips sum()'s argument handling
        small = sum_small(_sum_op, a)        # <= 65536 entries: summed in C, NumPy's bits
        if small is not None:
            return small
        y: Tensor = apply1(_sum_op, (a,), np.add.reduce(a._data, None), None)
        return y
    _numpy_extras("sum", out, initial, where)
    return sum(a, axis, dtype=dtype, keepdims=keepdims)


# ---- mean -------------------------------------------------------------------------------
# x̄ = ȳ/N broadcast; ẏ = mean(ẋ). An empty reduction (N = 0) gives NaN like NumPy.

def _inv(n: int) -> float:
    return 1.0 / n if n else np.nan


def _mean_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims, n = ctx
    return (expand(gs[0] * _inv(n), axes, keepdims, xs[0].shape),)


def _mean_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims, n = ctx
    return (ts[0].sum(axis=axes, keepdims=keepdims) * _inv(n),)


_mean_op = defop("mean", _mean_vjp, _mean_jvp)


def _replay_mean(ctx: Any) -> Any:
    """tf.compile's replay of mean (ctx: axes, keepdims, the count n), as mean computes it."""
    axes, keepdims, n = ctx

    def fn(d: Any) -> Any:
        out = d.sum(axis=axes, keepdims=keepdims)
        if not n:
            raise FloatingPointError("mean of nothing: runs eagerly")
        return np.asarray(out / n)
    return fn


_mean_op.replay = _replay_mean


@_docs.shared(_DOCS, _RAISES)
def mean(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *,
         keepdims: bool = False) -> Tensor:
    r"""Arithmetic mean over ``axis`` (all axes by default).

    NaN over zero elements (NaN + NaN·j for complex). Integer and bool tensors give float64.

    Parameters
    ----------
    x, axis, keepdims

    Returns
    -------
    Tensor
        The means.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: linear; :math:`\bar x = \bar y / N` broadcast over the reduced axes.

    Examples
    --------
    >>> x = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> tf.mean(x)
    tensor(2.5, grad_fn=mean)
    >>> tf.grad([tf.mean(x)], [x])[0]
    tensor([[0.25, 0.25],
            [0.25, 0.25]])
    """
    t: Tensor = floating(to_tensor(x))
    axes = normalize_axis(axis, t.ndim)
    d = t._data
    n = _count(d.shape, axes)
    # sum / N is what numpy.mean computes for float dtypes, without its Python overhead
    out = d.sum(axis=axes, keepdims=keepdims)
    if n:
        out = out / n
    else:  # numpy warns "Mean of empty slice" and gives NaN
        out = np.full_like(out, complex(np.nan, np.nan) if d.dtype.kind == "c" else np.nan)
    y: Tensor = apply1(_mean_op, (t,), np.asarray(out), ctx=(axes, keepdims, n))
    return y


def _np_mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, *, where: Any = None) -> Tensor:
    """``numpy.mean`` / ``t.mean`` on tensors (``dtype`` casts the input first)."""
    _numpy_extras("mean", out, None, where)
    return mean(_cast("mean", floating(to_tensor(a)), dtype), axis, keepdims=keepdims)


# ---- var / std --------------------------------------------------------------------------
# docs/rules.md: c = x − mean(x), var = Σ|c|²/(N−d) (real, also for complex x).
#   var: x̄ = ȳ·2c/(N−d);  ẏ = 2·Re Σ conj(c)·ẋ/(N−d)
#   std: x̄ = ȳ·c/((N−d)·y); ẏ = Re Σ conj(c)·ẋ/((N−d)·y); both 0 where y = 0.
# The mean's own derivative drops out because Σ conj(c) = 0 for every x, so these are
# the exact derivatives as functions of x (which second order needs), not only at a point.


def _centered(x: Any, axes: Any) -> Any:
    return x - x.mean(axis=axes, keepdims=True)


def _re_inner(c: Any, t: Any, axes: Any, keepdims: bool) -> Any:
    """Re Σ conj(c)·t over ``axes``."""
    s = (conj(c) * t).sum(axis=axes, keepdims=keepdims)
    return s.real if s.dtype.kind == "c" else s


def _dof(name: str, shape: tuple[int, ...], axes: tuple[int, ...], correction: float,
         ddof: float | None) -> float:
    """N − correction, the divisor of var/std. The standard's ``correction``: NaN (a NaN
    result and gradient) when it is <= 0. NumPy's spelling ``ddof``: ShapeError then."""
    n = _count(shape, axes)
    if ddof is None:
        if isinstance(correction, bool) or not isinstance(
                correction, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name}: correction must be a real number, got {correction!r}")
        dof = n - correction
        return dof if dof > 0 else np.nan
    if correction != 0:
        raise TypeError(f"{name}: pass either ddof= (NumPy's name) or correction= (the "
                        "array API's name), not both")
    dof = n - ddof
    if dof <= 0:
        raise ShapeError(
            f"{name} with ddof={ddof} over {n} element(s) per output entry divides by "
            f"N - ddof = {dof}; pass ddof < {n} or reduce over more elements "
            "(numpy would return inf/nan here; correction= gives NaN as the array API "
            "standard says)")
    return dof


def _var_value(d: Any, axes: tuple[int, ...], keepdims: bool, dof: float) -> Any:
    """Σ|x − mean|²/dof; NaN, without NumPy's warning, over zero elements."""
    if _count(d.shape, axes) == 0:
        shape = d.sum(axis=axes, keepdims=keepdims).shape
        return np.full(shape, np.nan, dtype=d.real.dtype)
    return _var_np(d, axes, keepdims, dof)


def _var_np(d: Any, axes: tuple[int, ...], keepdims: bool, dof: float) -> Any:
    """numpy.var's algorithm (two passes: mean, then Σ|c|²) without its Python overhead."""
    c = d - d.sum(axis=axes, keepdims=True) / _count(d.shape, axes)
    if c.dtype.kind == "c":
        re, im = c.real, c.imag
        sq = np.multiply(re, re)
        sq += im * im
    else:
        sq = np.multiply(c, c, out=c) if isinstance(c, np.ndarray) else c * c
    out = sq.sum(axis=axes, keepdims=keepdims)
    out /= dof
    return out


def _var_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims, dof = ctx
    x = xs[0]
    return (expand(gs[0] * (2.0 / dof), axes, keepdims, x.shape) * _centered(x, axes),)


def _var_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims, dof = ctx
    return (_re_inner(_centered(xs[0], axes), ts[0], axes, keepdims) * (2.0 / dof),)


_var_op = defop("var", _var_vjp, _var_jvp)


@_docs.shared(_DOCS, _RAISES)
def var(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *, correction: float = 0.0,
        keepdims: bool = False,
        ddof: float | None = None) -> Tensor:
    r"""Variance :math:`\sum |x - \bar x|^2 / (N - \mathrm{correction})` over ``axis``.

    Real also for complex ``x``; float64 for integer/bool ``x``. ``N - correction <= 0``
    gives NaN (the standard).

    Parameters
    ----------
    x, axis
    correction : float, optional
        Subtracted from N (1 for the unbiased estimate). Default 0.
    keepdims
    ddof : float, optional
        NumPy's name for ``correction``; with it ``ddof >= N`` raises (NumPy returns inf/nan).

    Returns
    -------
    Tensor
        The variances (real).

    Raises
    ------
    ShapeError
        If ``ddof >= N``, or an axis is out of range.
    TypeError
        If both ``ddof`` and ``correction`` are given, or ``correction`` is not a real number.

    Notes
    -----
    Derivative: :math:`\bar x = 2\bar y\,(x - \bar x)/(N - \mathrm{correction})`.

    Examples
    --------
    >>> tf.var(tf.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.25)
    >>> tf.var(tf.tensor([1.0, 2.0, 3.0, 4.0]), correction=1)
    tensor(1.66666667)
    """
    t: Tensor = floating(to_tensor(x))
    axes = normalize_axis(axis, t.ndim)
    d = t._data
    dof = _dof("var", d.shape, axes, correction, ddof)
    out = _var_value(d, axes, keepdims, dof)
    y: Tensor = apply1(_var_op, (t,), np.asarray(out), ctx=(axes, keepdims, dof))
    return y


def _std_scale(g: Any, y: Any, dof: float) -> Any:
    """g/((N−d)·y), and 0 where y = 0: std is not differentiable at constant input and
    the zero subgradient keeps the rule, and its own derivative, free of NaN."""
    zero = _raw(y) == 0
    if zero.any():
        return np.where(zero, 0, g / (dof * np.where(zero, 1, y)))
    return g / (dof * y)


def _std_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims, dof = ctx
    x = xs[0]
    scale = _std_scale(gs[0], ys[0], dof)
    return (expand(scale, axes, keepdims, x.shape) * _centered(x, axes),)


def _std_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims, dof = ctx
    s = _re_inner(_centered(xs[0], axes), ts[0], axes, keepdims)
    return (_std_scale(s, ys[0], dof),)


_std_op = defop("std", _std_vjp, _std_jvp)


@_docs.shared(_DOCS, _RAISES)
def std(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *, correction: float = 0.0,
        keepdims: bool = False,
        ddof: float | None = None) -> Tensor:
    r"""Standard deviation ``sqrt(var(x, axis, correction))``; real also for complex ``x``.

    ``N - correction <= 0`` gives NaN; with NumPy's spelling ``ddof``, ``ddof >= N`` raises
    ShapeError.

    Parameters
    ----------
    x, axis
    correction : float, optional
        Subtracted from N. Default 0.
    keepdims
    ddof : float, optional
        NumPy's name for ``correction``.

    Returns
    -------
    Tensor
        The standard deviations (real).

    Raises
    ------
    ShapeError
        If ``ddof >= N``, or an axis is out of range.
    TypeError
        If both ``ddof`` and ``correction`` are given.

    Notes
    -----
    Derivative: :math:`\bar x = \bar y\,(x - \bar x)/((N - \mathrm{correction})\,s)`; at a
    constant slice (:math:`s = 0`) the gradient is 0, not NaN.

    Examples
    --------
    >>> tf.std(tf.tensor([1.0, 3.0]))
    tensor(1.)
    """
    t: Tensor = floating(to_tensor(x))
    axes = normalize_axis(axis, t.ndim)
    d = t._data
    dof = _dof("std", d.shape, axes, correction, ddof)
    out = np.sqrt(_var_value(d, axes, keepdims, dof))
    y: Tensor = apply1(_std_op, (t,), np.asarray(out), ctx=(axes, keepdims, dof))
    return y


def _np_var_std(name: str) -> Callable[..., Tensor]:
    f = var if name == "var" else std

    def wrapper(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
                ddof: float = 0, keepdims: bool = False, *, where: Any = None,
                mean: Any = None, correction: float | None = None) -> Tensor:
        _numpy_extras(name, out, None, where)
        if mean is not None:
            raise TypeError(f"numpy.{name} on tensors: mean= is not supported; the mean "
                            "is computed from the tensor")
        if correction is not None:
            if ddof != 0:
                raise TypeError(f"numpy.{name}: pass either ddof= or correction=, not both")
            ddof = correction
        x = _cast(name, floating(to_tensor(a)), dtype)
        return f(x, axis, keepdims=keepdims, ddof=ddof)

    wrapper.__name__ = wrapper.__qualname__ = f"_np_{name}"
    wrapper.__doc__ = f"``numpy.{name}`` / ``t.{name}`` on tensors (NumPy's ``ddof``)."
    return wrapper


# ---- exclusive cumulative products and linear recurrences (the machinery of prod) -------
# prod's derivative ∂y/∂x_i = Π_{j≠i} x_j = E_i·F_i, with E_i = Π_{j<i} x_j and
# F_i = Π_{j>i} x_j the exclusive cumulative products from the left and the right: no
# division, so one zero, two zeros, ... are exact. E (``_excl``) is a differentiable op
# with a fast np.cumprod primal. Its rules are linear recurrences h_i = a_i·h_{i−1} + b_i
# (``_linscan``), and the rules of a linear recurrence are again linear recurrences and
# shifts (``_shift``), so the tower closes and every order is division-free.
# In a plain backward only np.cumprod runs; the recurrences appear from second order on.


def _shift_np(x: Any, axis: int, reverse: bool) -> Any:
    """y_i = x_{i−1} (y_0 = 0); with ``reverse``, y_i = x_{i+1} (y_{n−1} = 0)."""
    out = np.zeros_like(x)
    n = x.shape[axis]
    if n > 1:
        if reverse:
            out[_sl(axis, slice(0, n - 1))] = x[_sl(axis, slice(1, n))]
        else:
            out[_sl(axis, slice(1, n))] = x[_sl(axis, slice(0, n - 1))]
    return out


def _along_axis(name: str, fn_np: Callable[[Any, int, bool], Any]
                ) -> tuple[Callable[[Any, int, bool], Any], Op]:
    """A linear map along an axis, forwards or reversed (shift, cumsum), whose transpose is
    the same map the other way: its caller in rules (the op, recorded, on a Tensor; plain
    NumPy on an ndarray) and its op (ctx = (axis, reverse))."""
    def call(x: Any, axis: int, reverse: bool) -> Any:
        if isinstance(x, Tensor):
            return apply1(op, (x,), fn_np(x._data, axis, reverse), ctx=(axis, reverse))
        return fn_np(x, axis, reverse)

    op = defop(name, lambda ctx, needs, gs, xs, ys: (call(gs[0], ctx[0], not ctx[1]),),
               lambda ctx, ts, xs, ys: (call(ts[0], *ctx),))
    return call, op


_shift, _shift_op = _along_axis("shift", _shift_np)


def _linscan_np(a: Any, b: Any, axis: int, reverse: bool) -> Any:
    """h_i = a_i·h_{i−1} + b_i with h_{−1} = 0 (``reverse``: h_i = a_i·h_{i+1} + b_i).

    Two exact (division-free) strategies: a loop over the axis (n steps of two ufunc
    calls on the other B entries, O(nB) work) when many recurrences run side by side, and
    a Hillis–Steele scan (log2(n) steps over everything, O(nB log n) work) for long axes
    with small batches, where n Python-level steps would cost more. The switch point,
    B·⌈log2 n⌉ >= 512, was measured on 10⁴..10⁵ entries (each ~2-8x faster on its side).
    """
    n = np.shape(b)[axis]
    batch = np.size(b) // n if n else 0
    if batch * (n - 1).bit_length() >= 512:
        return _linscan_loop_np(a, b, axis, reverse)
    return _linscan_hs_np(a, b, axis, reverse)


def _linscan_loop_np(a: Any, b: Any, axis: int, reverse: bool) -> Any:
    """The recurrence as a loop over ``axis``, vectorised over the other axes (on a copy
    with ``axis`` first, so each step reads contiguous memory)."""
    dt = np.result_type(a, b)
    a, b = np.broadcast_arrays(a, b)
    A = np.ascontiguousarray(np.moveaxis(a, axis, 0), dtype=dt)
    H = np.array(np.moveaxis(b, axis, 0), dtype=dt)    # b, overwritten by h in place
    n = H.shape[0]
    prev = 1 if reverse else -1                          # h_i needs h_{i+1} or h_{i−1}
    tmp = np.empty(H.shape[1:], dt)
    for i in (range(n - 2, -1, -1) if reverse else range(1, n)):
        np.multiply(A[i], H[i + prev], out=tmp)
        H[i] += tmp
    return np.ascontiguousarray(np.moveaxis(H, 0, axis))


def _linscan_hs_np(a: Any, b: Any, axis: int, reverse: bool) -> Any:
    """The recurrence as a Hillis–Steele scan over the pairs (a, b) composed as affine
    maps: log2(n) vectorised steps, O(n log n) work."""
    dt = np.result_type(a, b)
    if reverse:
        a, b = np.flip(a, axis), np.flip(b, axis)
    A = np.array(a, dtype=dt)
    B = np.array(b, dtype=dt)
    n = B.shape[axis]
    s = 1
    while s < n:
        hi, lo = _sl(axis, slice(s, None)), _sl(axis, slice(0, n - s))
        # (A_i, B_i) <- (A_i·A_{i−s}, A_i·B_{i−s} + B_i), right-hand sides built first
        B[hi] = A[hi] * B[lo] + B[hi]
        if 2 * s < n:
            A[hi] = A[hi] * A[lo]
        s *= 2
    return np.ascontiguousarray(np.flip(B, axis)) if reverse else B


def _linscan_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axis, reverse = ctx
    a, h = xs[0], ys[0]
    # adjoint recurrence, run the other way: λ_i = h̄_i + conj(a_{i+1})·λ_{i+1} (forward
    # case); b̄ = λ, ā_i = λ_i·conj(h_{i−1}).
    lam = _linscan(_shift(conj(a), axis, not reverse), gs[0], axis, not reverse)
    ga = lam * conj(_shift(h, axis, reverse)) if needs[0] else None
    return ga, (lam if needs[1] else None)


def _linscan_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axis, reverse = ctx
    ta, tb = ts
    # ḣ_i = a_i·ḣ_{i−1} + (ȧ_i·h_{i−1} + ḃ_i)
    src = tb
    if ta is not None:
        src = ta * _shift(ys[0], axis, reverse)
        if tb is not None:
            src = src + tb
    return (_linscan(xs[0], src, axis, reverse),)


_linscan_op = defop("linscan", _linscan_vjp, _linscan_jvp)


def _linscan(a: Any, b: Any, axis: int, reverse: bool) -> Any:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        a, b = to_tensor(a), to_tensor(b)
        return apply1(_linscan_op, (a, b), _linscan_np(a._data, b._data, axis, reverse),
                      ctx=(axis, reverse))
    return _linscan_np(a, b, axis, reverse)


def _excl_np(x: Any, axis: int, reverse: bool) -> Any:
    """E_i = Π_{j<i} x_j (``reverse``: Π_{j>i} x_j) along ``axis``; 1 at the boundary."""
    out = np.empty(x.shape, dtype=x.dtype)
    n = x.shape[axis]
    if n == 0:
        return out
    if reverse:
        out[_sl(axis, slice(n - 1, n))] = 1
        np.cumprod(np.flip(x[_sl(axis, slice(1, n))], axis), axis=axis,
                   out=np.flip(out[_sl(axis, slice(0, n - 1))], axis))
    else:
        out[_sl(axis, slice(0, 1))] = 1
        np.cumprod(x[_sl(axis, slice(0, n - 1))], axis=axis, out=out[_sl(axis, slice(1, n))])
    return out


def _excl_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axis, reverse = ctx
    # x̄_k = Σ_{i>k} Ē_i·conj(Π_{j<i, j≠k} x_j) = conj(E_k)·μ_k, where
    # μ_k = Ē_{k+1} + conj(x_{k+1})·μ_{k+1} is a recurrence run the other way.
    back = not reverse
    mu = _linscan(_shift(conj(xs[0]), axis, back), _shift(gs[0], axis, back), axis, back)
    return (conj(ys[0]) * mu,)


def _excl_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axis, reverse = ctx
    # E_i = x_{i−1}·E_{i−1}  =>  Ė_i = x_{i−1}·Ė_{i−1} + ẋ_{i−1}·E_{i−1}
    return (_linscan(_shift(xs[0], axis, reverse), _shift(ts[0] * ys[0], axis, reverse),
                     axis, reverse),)


_excl_op = defop("exclusive_cumprod", _excl_vjp, _excl_jvp)


def _excl(x: Any, axis: int, reverse: bool) -> Any:
    if isinstance(x, Tensor):
        return apply1(_excl_op, (x,), _excl_np(x._data, axis, reverse), ctx=(axis, reverse))
    return _excl_np(x, axis, reverse)


# ---- prod -------------------------------------------------------------------------------

def _merge_axes(shape: tuple[int, ...],
                axes: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Merge each run of adjacent reduced axes into one axis (a reshape, no transpose)."""
    new_shape: list[int] = []
    new_axes: list[int] = []
    for i, n in enumerate(shape):
        if i in axes and i - 1 in axes:
            new_shape[-1] *= n
        else:
            if i in axes:
                new_axes.append(len(new_shape))
            new_shape.append(n)
    return tuple(new_shape), tuple(new_axes)


def _prod_partials(x: Any,
                   axes: tuple[int, ...]) -> tuple[Any, tuple[int, ...], tuple[int, ...]]:
    """∂y/∂x for y = prod(x, axes), on ``x`` reshaped so that reduced runs are one axis.

    Over several separate axes the product is taken one axis at a time,
    y = P_k(…P_1(x)), so by the chain rule ∂y/∂x = Π_m loo_m(p_{m−1}) (broadcast), where
    p_m = P_m(p_{m−1}) (keepdims) and loo(p)_i = Π_{j≠i} p_j = E_i·F_i along that axis.
    Returns (partials, merged shape, merged axes).
    """
    shape2, axes2 = _merge_axes(x.shape, axes)
    p = x.reshape(shape2) if shape2 != x.shape else x
    d: Any = None
    for k, a in enumerate(axes2):
        loo = _excl(p, a, False) * _excl(p, a, True)
        d = loo if d is None else d * loo
        if k + 1 < len(axes2):
            p = p.prod(axis=a, keepdims=True)
    return d, shape2, axes2


def _prod_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims = ctx
    x = xs[0]
    if not axes:
        return (gs[0],)
    # complex: x̄ = ȳ·conj(∂y/∂x)
    d, shape2, axes2 = _prod_partials(x, axes)
    g = gs[0].reshape(tuple(1 if i in axes2 else n for i, n in enumerate(shape2)))
    return ((g * conj(d)).reshape(x.shape),)


def _prod_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims = ctx
    if not axes:
        return (ts[0],)
    d, shape2, axes2 = _prod_partials(xs[0], axes)
    return ((ts[0].reshape(shape2) * d).sum(axis=axes2).reshape(ys[0].shape),)


_prod_op = defop("prod", _prod_vjp, _prod_jvp)


@_docs.shared(_DOCS, _RAISES)
def prod(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *,
         dtype: DTypeLike | None = None,
         keepdims: bool = False) -> Tensor:
    r"""Product over ``axis`` (all axes by default); 1 over zero elements.

    The derivative uses exclusive cumulative products (no division), so it is exact when
    entries are zero, at every order.

    Parameters
    ----------
    x, axis
    dtype : dtype, optional
        Casts the input first. Default: the input's dtype (small integers accumulate in
        int64/uint64).
    keepdims

    Returns
    -------
    Tensor
        The products.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: :math:`\partial y/\partial x_i = \prod_{j \ne i} x_j` (products of the
    entries before and after :math:`i`).

    Examples
    --------
    >>> x = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> tf.prod(x)
    tensor(24., grad_fn=prod)
    >>> tf.grad([tf.prod(x)], [x])[0]
    tensor([[24., 12.],
            [ 8.,  6.]])
    """
    t: Tensor = to_tensor(x)
    if dtype is not None:
        t = _cast("prod", t, dtype)
        dtype = t._data.dtype           # NumPy would widen small integers again
    axes = normalize_axis(axis, t.ndim)
    d = t._data
    y: Tensor = apply1(_prod_op, (t,), np.asarray(d.prod(axis=axes, dtype=dtype,
                                                         keepdims=keepdims)),
                       ctx=(axes, keepdims))
    return y


def _np_prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, initial: Any = None, where: Any = None) -> Tensor:
    """``numpy.prod`` / ``t.prod`` on tensors."""
    _numpy_extras("prod", out, initial, where)
    return prod(a, axis, dtype=dtype, keepdims=keepdims)


# ---- max / min --------------------------------------------------------------------------
# Ties split the cotangent evenly (PyTorch's amax convention): with w = [x = y]/#ties,
# x̄ = ȳ·w and ẏ = Σ w·ẋ (the mean of the tied tangents). w is piecewise constant, so it is
# computed on the raw arrays and the rules are linear in ȳ/ẋ: second order is exact.


def _tie_weights(x: Any, y: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    xd = _raw(x)
    yd = _keep(_raw(y), axes, keepdims, xd.shape)
    mask = xd == yd
    if np.isnan(yd).any():
        mask |= np.isnan(xd)  # a NaN extremum propagates, so NaN entries take the cotangent
    w = mask.astype(xd.dtype)
    w /= w.sum(axis=axes, keepdims=True)
    return w


def _extremum(name: str, method: Callable[..., Any]) -> _Reduction:
    def vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
        axes, keepdims = ctx
        x = xs[0]
        return (expand(gs[0], axes, keepdims, x.shape) * _tie_weights(x, ys[0], axes, keepdims),)

    def jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
        axes, keepdims = ctx
        w = _tie_weights(xs[0], ys[0], axes, keepdims)
        return ((ts[0] * w).sum(axis=axes, keepdims=keepdims),)

    op = defop(name, vjp, jvp, complex=False)
    word = "maximum" if name == "max" else "minimum"

    def f(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *,
          keepdims: bool = False) -> Tensor:
        t: Tensor = to_tensor(x)
        require_real(name, t)
        axes = normalize_axis(axis, t.ndim)
        d = t._data
        try:
            out = method(d, axis=axes, keepdims=keepdims)
        except ValueError:
            raise ShapeError(
                f"{name} over a zero-length axis of a tensor of shape {d.shape} (axis="
                f"{axis!r}): an empty reduction has no {word}; reduce over non-empty "
                "axes only") from None
        y: Tensor = apply1(op, (t,), np.asarray(out), ctx=(axes, keepdims))
        return y

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""The {word} over ``axis`` (all axes by default); real tensors only.

    Alias ``a{name}``. A NaN propagates.

    Parameters
    ----------
    x : array_like
        A real tensor.
    axis : int or tuple of int, optional
        The axes to reduce. Default None: all.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.

    Returns
    -------
    Tensor
        The {word} values.

    Raises
    ------
    DTypeError
        If ``x`` is complex (complex numbers are not ordered).
    ShapeError
        If a reduced axis has length 0, or an axis is out of range.

    Notes
    -----
    Derivative: the cotangent goes to the entries equal to the {word}; ties share it
    evenly (a NaN {word} sends it to the NaN entries).

    Examples
    --------
    >>> x = tf.tensor([1.0, 3.0, 3.0], requires_grad=True)
    >>> tf.{name}(x)
    tensor({"3" if name == "max" else "1"}., grad_fn={name})
    >>> tf.grad([tf.{name}(x)], [x])[0]
    tensor({"[0. , 0.5, 0.5]" if name == "max" else "[1., 0., 0.]"})
    """
    return f


max = _extremum("max", np.ndarray.max)
min = _extremum("min", np.ndarray.min)
amax, amin = max, min


def _np_extremum(f: _Reduction) -> Callable[..., Tensor]:
    def wrapper(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
                initial: Any = None, where: Any = None) -> Tensor:
        _numpy_extras(f.__name__, out, initial, where)
        return f(a, axis, keepdims=keepdims)

    wrapper.__name__ = wrapper.__qualname__ = f"_np_{f.__name__}"
    wrapper.__doc__ = f"``numpy.{f.__name__}`` / ``t.{f.__name__}`` on tensors."
    return wrapper


# ---- logsumexp --------------------------------------------------------------------------
# y = m + log Σ exp(x − m) with m = max (of Re x for complex x), for stability.
# With p = exp(x − y) (the softmax): x̄ = ȳ·conj(p), ẏ = Σ p·ẋ. This holds for complex x
# too (log Σ exp is holomorphic; exp(y) = Σ exp(x) on every branch of the log).


def _softmax(x: Any, y: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    yk = _keep(y, axes, keepdims, x.shape)
    yr = _raw(yk)
    yr = yr.real if yr.dtype.kind == "c" else yr
    low = np.isneginf(yr)
    if low.any():
        # y = −inf only when every exp(x) is 0: the weights are 0, not (−inf) − (−inf)
        yk = np.where(low, 0, yk)
    return np.exp(x - yk)


def _lse_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims = ctx
    x = xs[0]
    return (expand(gs[0], axes, keepdims, x.shape) * conj(_softmax(x, ys[0], axes, keepdims)),)


def _lse_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axes, keepdims = ctx
    p = _softmax(xs[0], ys[0], axes, keepdims)
    return ((p * ts[0]).sum(axis=axes, keepdims=keepdims),)


_lse_op = defop("logsumexp", _lse_vjp, _lse_jvp)


@_docs.shared(_DOCS, _RAISES)
def logsumexp(x: ArrayLike, axis: int | tuple[int, ...] | None = None,
              keepdims: bool = False) -> Tensor:
    r""":math:`\log \sum \exp x` over ``axis``, computed stably (like ``scipy.special.logsumexp``).

    Complex input is supported (principal branch of the log). Over zero elements the result
    is -inf.

    Parameters
    ----------
    x, axis, keepdims

    Returns
    -------
    Tensor
        The reduced values.

    Notes
    -----
    Derivative: the softmax, :math:`\bar x = \bar y\, e^{x - y}`.

    Examples
    --------
    >>> tf.logsumexp(tf.tensor([0.0, 0.0]))
    tensor(0.69314718)
    """
    t: Tensor = to_tensor(x)
    axes = normalize_axis(axis, t.ndim)
    d = t._data
    re = d.real if d.dtype.kind == "c" else d
    if d.size:
        m = re.max(axis=axes, keepdims=True)
        finite = np.isfinite(m)
        if not finite.all():
            # all −inf (or an inf/nan): shift by 0, so the result is −inf/inf/nan itself
            m = np.where(finite, m, 0)
    else:
        m = np.zeros(tuple(1 if i in axes else n for i, n in enumerate(d.shape)), re.dtype)
    s = np.exp(d - m).sum(axis=axes, keepdims=True)
    if s.size and s.all():
        out = np.log(s) + m
    else:
        with np.errstate(divide="ignore"):  # log 0 = −inf is the answer, not an accident
            out = np.log(s) + m
    if not keepdims and axes:
        out = out.reshape(tuple(n for i, n in enumerate(d.shape) if i not in axes))
    y: Tensor = apply1(_lse_op, (t,), np.asarray(out), ctx=(axes, keepdims))
    return y


# ---- cumulative_sum / cumulative_prod ---------------------------------------------------
# cumsum along an axis is linear with a lower-triangular matrix of ones, whose adjoint is
# the suffix sum: x̄ = revcumsum(ȳ), ẏ = cumsum(ẋ). The op carries a direction, so the
# two are one op whose rules call it again (the tower closes at every order).
# include_initial prepends the identity (0 or 1), a constant slice joined by concatenate.


def _cumsum_np(a: Any, axis: int, reverse: bool) -> Any:
    if not reverse:
        return np.cumsum(a, axis=axis)
    if a.dtype.kind not in "fc":
        return np.flip(np.cumsum(np.flip(a, axis), axis=axis), axis)
    # the suffix sum written through a reversed view of one fresh, contiguous array
    out = np.empty(a.shape, dtype=a.dtype)
    np.cumsum(np.flip(a, axis), axis=axis, out=np.flip(out, axis))
    return out


_cumsum, _cumsum_op = _along_axis("cumsum", _cumsum_np)


# cumprod y_i = Π_{j<=i} x_j = E_i·x_i with E_i = Π_{j<i} x_j = y_{i−1} (E_0 = 1) the
# exclusive cumulative product, taken from the output y (_prev: the same products
# np.cumprod formed, and y is differentiable, so this costs no second cumprod):
#   ∂y_i/∂x_k = E_k·Π_{k<j<=i} x_j  (k <= i), no division, so zeros are exact.
#   JVP: ẏ_i = x_i·ẏ_{i−1} + ẋ_i·E_i, a linear recurrence: ẏ = linscan(x, ẋ·E).
#   VJP: x̄_k = Σ_{i>=k} ȳ_i·conj(∂y_i/∂x_k) = conj(E_k)·μ_k with
#        μ_k = ȳ_k + conj(x_{k+1})·μ_{k+1}, the recurrence run backwards.
# _linscan and _shift are differentiable ops (and y is the output of this op), so these
# rules are differentiable again: second and higher orders stay division-free.

def _prev(y: Any, axis: int) -> Any:
    """E_i = y_{i−1} along ``axis`` with E_0 = 1 (on an ndarray or a Tensor)."""
    if isinstance(y, Tensor):
        shape = [1] * y.ndim
        shape[axis] = y.shape[axis]
        first = np.zeros(shape, dtype=y.dtype)
        first[_sl(axis, slice(0, 1))] = 1
        return _shift(y, axis, False) + first
    e = _shift_np(y, axis, False)
    e[_sl(axis, slice(0, 1))] = 1
    return e


def _cumprod_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axis = ctx
    mu = _linscan(_shift(conj(xs[0]), axis, True), gs[0], axis, True)
    return (conj(_prev(ys[0], axis)) * mu,)


def _cumprod_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    axis = ctx
    return (_linscan(xs[0], ts[0] * _prev(ys[0], axis), axis, False),)


_cumprod_op = defop("cumprod", _cumprod_vjp, _cumprod_jvp)


def _scan_axis(name: str, x: Tensor, axis: int | None) -> int:
    if x.ndim == 0:
        raise ShapeError(f"{name} of a 0-d tensor is not defined (the standard leaves it "
                         "unspecified); reshape it to 1-D first, e.g. tf.reshape(x, (1,))")
    if axis is None:
        if x.ndim > 1:
            raise ShapeError(f"{name} of a tensor of shape {x.shape} needs axis= (only a "
                             "1-D tensor may omit it); flatten it first with "
                             "tf.reshape(x, (-1,)) to scan over every entry")
        return 0
    return _axis(axis, x.ndim)


def _with_initial(y: Tensor, axis: int, value: int) -> Tensor:
    """``y`` with a slice of ``value`` (the scan's identity) prepended along ``axis``."""
    shape = list(y.shape)
    shape[axis] = 1
    return concatenate([Tensor._wrap(np.full(shape, value, dtype=y.dtype)), y], axis=axis)


@_docs.shared(_DOCS, _RAISES_CUMULATIVE)
def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                   include_initial: bool = False) -> Tensor:
    """Cumulative sum along ``axis``, differentiable.

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 1.
    axis : int, optional
        The axis; may be omitted for 1-D ``x`` only.
    dtype : dtype, optional
        Casts the input first; by default small integers accumulate in int64 (uint64), bool
        in int64 (the standard's and NumPy's rule).
    include_initial : bool, optional
        Prepend 0 (the result is one longer along ``axis``). Default False.

    Returns
    -------
    Tensor
        The running sums.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: linear; the VJP is a reversed cumulative sum of the cotangent.

    Examples
    --------
    >>> tf.cumulative_sum(tf.tensor([1, 2, 3]))
    tensor([1, 3, 6])
    """
    t: Tensor = to_tensor(x)
    axis = _scan_axis("cumulative_sum", t, axis)
    t = _cast("cumulative_sum", t, dtype)
    d = t._data
    out = np.cumsum(d, axis=axis, dtype=None if dtype is None else d.dtype)
    y: Tensor = apply1(_cumsum_op, (t,), out, ctx=(axis, False))
    return _with_initial(y, axis, 0) if include_initial else y


@_docs.shared(_DOCS, _RAISES_CUMULATIVE)
def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                    include_initial: bool = False) -> Tensor:
    r"""Cumulative product along ``axis``, differentiable and exact with zeros in ``x`` at every
    order (no division; see the module docstring).

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 1.
    axis : int, optional
        The axis; may be omitted for 1-D ``x`` only.
    dtype : dtype, optional
        As in :func:`cumulative_sum`.
    include_initial : bool, optional
        Prepend 1. Default False.

    Returns
    -------
    Tensor
        The running products.

    Raises
    ------
    ShapeError

    Notes
    -----
    Derivative: :math:`\partial y_k/\partial x_i = \prod_{j \le k, j \ne i} x_j` for
    :math:`i \le k`, computed from exclusive products.

    Examples
    --------
    >>> tf.cumulative_prod(tf.tensor([1.0, 2.0, 3.0]), include_initial=True)
    tensor([1., 1., 2., 6.])
    """
    t: Tensor = to_tensor(x)
    axis = _scan_axis("cumulative_prod", t, axis)
    t = _cast("cumulative_prod", t, dtype)
    d = t._data
    out = np.cumprod(d, axis=axis, dtype=None if dtype is None else d.dtype)
    y: Tensor = apply1(_cumprod_op, (t,), out, ctx=axis)
    return _with_initial(y, axis, 1) if include_initial else y


def _np_scan(f: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def wrapper(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tensor:
        _numpy_extras(name, out)
        a, axis = _flat_if_no_axis(a, axis)        # NumPy scans the flattened array
        return f(a, axis=axis, dtype=dtype)

    wrapper.__name__ = wrapper.__qualname__ = f"_np_{name}"
    wrapper.__doc__ = (f"``numpy.{name}`` and ``t.{name}`` on tensors (axis=None flattens, "
                       f"as in NumPy): :func:`{f.__name__}`.")
    return wrapper


def _np_cumulative(f: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def wrapper(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                include_initial: bool = False) -> Tensor:
        _numpy_extras(f.__name__, out)
        return f(x, axis=axis, dtype=dtype, include_initial=include_initial)

    wrapper.__name__ = wrapper.__qualname__ = f"_np_{f.__name__}"
    wrapper.__doc__ = f"``numpy.{f.__name__}`` (NumPy >= 2.1) on tensors."
    return wrapper


# ---- diff -------------------------------------------------------------------------------
# The n-th forward difference along an axis is linear, y = Dⁿx with (Dx)_i = x_{i+1} − x_i.
# Its adjoint: (Dᵀg)_i = g_{i−1} − g_i (g out of range = 0), i.e. Dᵀg = −D(pad₁(g)) with
# one zero on each side; so x̄ = (−1)ⁿ·Dⁿ(padₙ(ȳ)) and ẏ = Dⁿẋ. padₙ is a concatenate with
# zeros and np.diff on a tensor is this op again: every order is exact.
# prepend/append are joined to x first (concatenate), so they are differentiable too.

def _pad0(g: Any, axis: int, n: int) -> Any:
    shape = list(g.shape)
    shape[axis] = n
    z = np.zeros(shape, dtype=g.dtype)
    return np.concatenate([z, g, z], axis=axis)


def _diff_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    axis, n = ctx
    r = np.diff(_pad0(gs[0], axis, n), n=n, axis=axis)
    return (-r if n % 2 else r,)


_diff_op = defop("diff", _diff_vjp,
                 lambda ctx, ts, xs, ys: (np.diff(ts[0], n=ctx[1], axis=ctx[0]),))


def diff(x: ArrayLike, /, *, axis: int = -1, n: int = 1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Tensor:
    """The ``n``-th forward difference along ``axis`` (``numpy.diff``).

    ``out[i] = x[i+1] - x[i]``, applied n times, differentiable in ``x``, ``prepend`` and
    ``append``. The result is n shorter along ``axis`` (empty when n is at least its length).

    Parameters
    ----------
    x : array_like
        A tensor of dimension >= 1.
    axis : int, optional
        The axis. Default -1.
    n : int, optional
        The order (>= 0). Default 1.
    prepend, append : array_like, optional
        Joined to ``x`` along ``axis`` first (same shape except along ``axis``; a 0-d value is
        repeated across the other axes; dtypes promote).

    Returns
    -------
    Tensor
        The differences.

    Raises
    ------
    ShapeError
        If ``x`` is 0-d, ``n < 0``, or ``prepend``/``append`` do not fit.
    TypeError
        If ``n`` is not an integer.

    Notes
    -----
    Derivative: linear; the VJP is the adjoint difference (negated, reversed).

    Examples
    --------
    >>> tf.diff(tf.tensor([1.0, 4.0, 9.0]))
    tensor([3., 5.])
    """
    t: Tensor = to_tensor(x)
    if t.ndim == 0:
        raise ShapeError("diff needs a tensor of dimension >= 1, got a 0-d tensor; "
                         "reshape it first")
    axis = _axis(axis, t.ndim)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"diff: n must be an integer, got {n!r}") from None
    if n < 0:
        raise ShapeError(f"diff: the order n must be >= 0, got {n}")
    if prepend is not None or append is not None:
        parts: list[Tensor] = []
        for p in (prepend, t, append):
            if p is None:
                continue
            part: Tensor = to_tensor(p)
            if part.ndim == 0:
                shape = list(t.shape)
                shape[axis] = 1
                part = broadcast_to(part, tuple(shape))
            parts.append(part)
        try:
            t = concatenate(parts, axis=axis)
        except ShapeError:
            raise ShapeError(
                f"diff: prepend/append must have x's shape {t.shape} except along axis "
                f"{axis}, got shapes {', '.join(str(p.shape) for p in parts)}") from None
    if n == 0:
        return t
    n = builtins.min(n, t.shape[axis])   # n >= length: empty, the zero map
    y: Tensor = apply1(_diff_op, (t,), np.diff(t._data, n=n, axis=axis), ctx=(axis, n))
    return y


def _np_diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None,
             append: Any = None) -> Tensor:
    """``numpy.diff`` on tensors (NumPy's argument order: n before axis)."""
    return diff(a, axis=axis, n=n, prepend=prepend, append=append)


# ---- all / any --------------------------------------------------------------------------
# Logical reductions: bool tensors without a gradient. NaN and ±inf count as True, a
# complex entry when either part is non-zero; all() of nothing is True, any() False.

def _logical(name: str, np_fn: Callable[..., Any]) -> _Reduction:
    def f(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None, *,
          keepdims: bool = False) -> Tensor:
        t: Tensor = to_tensor(x)
        axes = normalize_axis(axis, t.ndim)
        note_escape(name, t)
        return Tensor._wrap(np.asarray(np_fn(t._data, axis=axes, keepdims=keepdims)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Whether {name} entries are non-zero (true) over ``axis``, like ``numpy.{name}``.

    NaN and ±inf count as True, a complex entry when either part is non-zero;
    ``all`` of nothing is True, ``any`` of nothing False.

    Parameters
    ----------
    x : array_like
        The input.
    axis : int or tuple of int, optional
        The axes to reduce. Default None: all.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.

    Returns
    -------
    Tensor
        A bool tensor (no gradient).

    Raises
    ------
    ShapeError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> tf.{name}(tf.tensor([[1, 0], [2, 3]]), axis=1)
    tensor({"[False,  True]" if name == "all" else "[ True,  True]"})
    """
    return f


all = _logical("all", np.all)   # noqa: A001  (the standard's names shadow the builtins here)
any = _logical("any", np.any)   # noqa: A001


def _logical_method(f: _Reduction) -> Callable[..., Tensor]:
    def method(self: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
               where: Any = None) -> Tensor:
        _numpy_extras(f.__name__, out, None, where)
        return f(self, axis, keepdims=keepdims)

    method.__name__ = method.__qualname__ = f.__name__
    return method


register(_np_sum, methods=("sum",), functions=(np.sum,))
register(_np_mean, methods=("mean",), functions=(np.mean,))
register(_np_var_std("var"), methods=("var",), functions=(np.var,))
register(_np_var_std("std"), methods=("std",), functions=(np.std,))
register(_np_prod, methods=("prod",), functions=(np.prod,))
register(_np_extremum(max), methods=("max", "amax"), functions=(np.max, np.amax))
register(_np_extremum(min), methods=("min", "amin"), functions=(np.min, np.amin))
register(logsumexp, methods=("logsumexp",))
register(_np_scan(cumulative_sum, "cumsum"), methods=("cumsum",), functions=(np.cumsum,))
register(_np_scan(cumulative_prod, "cumprod"), methods=("cumprod",), functions=(np.cumprod,))
register(_np_cumulative(cumulative_sum),
         functions=(np.cumulative_sum,) if hasattr(np, "cumulative_sum") else ())
register(_np_cumulative(cumulative_prod),
         functions=(np.cumulative_prod,) if hasattr(np, "cumulative_prod") else ())
register(_np_diff, functions=(np.diff,))
register(_logical_method(all), methods=("all",))
register(_logical_method(any), methods=("any",))
register_nondiff(np.all, np.any)
