"""NumPy's own functions called on tensors (docs/design.md#numpy-on-tensors).

Every NumPy ufunc or function called with a tensor argument reaches
``Tensor.__array_ufunc__`` / ``__array_function__``, which picks one of three answers:

1. a tenferro version registered for it (``registry.UFUNCS`` / ``FUNCTIONS``): the op
   modules register ``np.exp``, ``np.sum``, ``np.linalg.det``, ``np.fft.fft``, ...; this
   module registers NumPy functions that are compositions of tenferro ops (below), so
   their derivatives — reverse, forward and second order — come from the ops' rules.
   Returns Tensors, differentiable;
2. NumPy on the payloads, for the functions in ``registry.NONDIFF`` (listed here and by
   the op modules): their result does not depend differentiably on the inputs, so NumPy's
   own result is returned exactly (an ndarray, a NumPy scalar, a bool, a tuple, a str),
   also for tensors that require grad;
3. anything else: NumPy on the payloads when no input carries a derivative (NumPy's plain
   result for plain values), and :class:`UnsupportedADError` naming the function when one
   does, instead of a result whose gradient would silently be missing.

A function registered elsewhere is never registered again here (this module is imported
after the op modules, linalg and fft, and only claims what is still free), so the op
modules' own registrations win. ``python scripts/numpy_coverage.py --list`` prints which
NumPy function is in which group.

**Compositions (group 1).** Each is a few tenferro ops mirroring NumPy's own algorithm.
When no input carries a derivative, most of them (``_numpy_version(..., plain=True)``)
return NumPy's own result on the payloads as Tensors, bit for bit; with a tracked input
the composition runs and agrees with NumPy to rounding. The families:

* products: dot, vdot, inner, outer, kron, cross, linalg.multi_dot, matvec, vecmat;
* linalg with NumPy's signatures and result types (``SVDResult(U, S, Vh)`` with
  ``full_matrices=True`` by default, ``EighResult``, ``EigResult``, ``QRResult``; eig and
  eigvals give real arrays when every eigenvalue is real, as NumPy does): svd (also
  ``hermitian=True``, through eigh as NumPy), svdvals, eigh, eigvalsh, eig, eigvals, qr,
  cholesky (``upper``), cond, tensorinv, tensorsolve;
* statistics: average, cov, corrcoef, ptp, median, percentile, quantile (methods linear,
  lower, higher, nearest, midpoint, hazen, weibull, median_unbiased, normal_unbiased,
  interpolated_inverted_cdf, averaged_inverted_cdf: the order statistics are a differentiable sort, the
  interpolation weight is differentiable in q), the nan-functions (nansum, nanprod,
  nanmean, nanvar, nanstd, nanmax, nanmin, nancumsum, nancumprod, nanmedian,
  nanpercentile, nanquantile: the NaNs are masked with tf.where, so their entries get a
  zero gradient), and ``where=``/``initial=`` of np.sum/prod/mean/var/std/max/min;
* rearrangements, i.e. gathers: atleast_1d/2d/3d, hstack, vstack, dstack, column_stack,
  block, split, array_split, hsplit, vsplit, dsplit, append, insert, delete, pad (modes
  constant, edge, reflect, symmetric, wrap), resize, rot90, rollaxis, diagflat, compress,
  extract, choose, select, partition, sort_complex, trim_zeros, copy, astype. Most run
  NumPy's own function on an array of positions ("codes") and gather the tensor's entries
  at the positions it returns, which gives NumPy's exact semantics (argument checks,
  broadcasting, negative indices) with a gather's derivative;
* calculus and signals: trapezoid, gradient (a coordinate array that requires grad always
  takes the non-uniform formula: it equals the uniform one in value on a uniform grid but
  also carries the derivative with respect to each coordinate), interp (differentiable in
  x — the slope —, xp and fp; the segment index is piecewise constant), convolve,
  correlate, diff-like ediff1d, unwrap (the added multiples of the period are piecewise
  constant), angle, real_if_close, nan_to_num, sinc, vander, linspace, logspace, geomspace;
* polynomials: polyval, polyadd, polysub, polymul, polyder, polyint, polydiv, polyfit
  (not ``cov=``), roots (eigvals of the companion matrix), poly;
* higher order: apply_along_axis, apply_over_axes, piecewise call the user's function on
  tensors (so it must be written with NumPy functions or tensor operators);
* NumPy's ufuncs outside the array API: deg2rad/radians, rad2deg/degrees, fabs, exp2, cbrt,
  logaddexp2, float_power, fmax, fmin (a NaN input gives the other value), and the
  piecewise-linear fmod, divmod, modf, frexp, ldexp: NumPy's exact value plus the
  linearisation (the quotient, integral part, exponent are piecewise constant);
* values that are entries of the inputs: union1d, setdiff1d, setxor1d (gathers);
* counts with weights: bincount, histogram, histogram_bin_edges, histogram2d, histogramdd.
  Counts are piecewise constant (NumPy's own, constant tensors), but weighted counts are
  linear in the weights (a scatter-add into NumPy's bins), density histograms divide by
  bin widths, and the edges of bins given as a count are linspace(min, max) of the data:
  so a histogram of tracked data is differentiable in all of these;
* heaviside(x1, x2): piecewise constant in x1, but x2 where x1 = 0.

Options outside these (a quantile ``weights=``, ``np.linalg.qr(mode="raw")``, pad's
statistics modes, ...) behave like group 3: NumPy's result for plain values,
UnsupportedADError naming the function and option for tracked ones. np.i0 (its derivative
needs the Bessel function I1, a scipy.special op) and np.intersect1d (its values are
entries equal in both inputs; any change that separates them removes them, so it has no
derivative) are group 3 by decision.

**Payload functions (group 2)** — NumPy's result is exact and has no derivative:

* inspection: shapes, dtypes, memory (``np.shape``, ``np.result_type``, ``np.common_type``);
* predicates and comparisons: booleans (``np.isclose``, ``np.isin``, ``np.isnat``...);
* indices and counts: integer results (``np.argmax``, ``np.unravel_index``,
  ``np.tril_indices_from``, ``np.digitize``, ``np.einsum_path``...);
* piecewise constant functions: rounding (``np.round``, ``np.around``, ``np.rint``,
  ``np.floor``, ``np.ceil``, ``np.trunc``, ``np.fix``), ``np.floor_divide``,
  ``np.spacing``: their derivative is zero wherever it exists, so the payload result loses
  nothing (the tf spellings tf.round, tf.floor... return tensors with a zero derivative).
  The elementwise ops module registers most of these itself;
* integer arithmetic (``np.gcd``, ``np.lcm``, bit shifts and counts), dates, and output
  (``np.array2string``, ``np.save``...: writing values out is not computing with them).

**Refused with a Tensor destination**: np.copyto, np.put, np.place, np.putmask,
np.fill_diagonal and np.put_along_axis write into their first argument; a tensor cannot
be written into (its payload may be saved for a backward pass), so they raise TypeError
pointing at ``t.at[idx].set(v)`` / tf.where. With an ndarray destination they run on the
payloads (group 3: a tracked value raises). ``out=`` given a Tensor raises TypeError.

**like=**: NumPy's creation functions called with ``like=tensor`` return tensors (NEP 35),
made from NumPy's result; a tracked tensor among their data raises as in group 3.
"""
import builtins
import functools
import inspect
import math
import operator
import sys
import warnings
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, Literal, NoReturn, Sequence, SupportsIndex, \
    TypeAlias, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import fft as _fft, linalg as _linalg  # noqa: F401  (their NumPy spellings first)
from ._errors import LinAlgError, ShapeError, UnsupportedADError
from ._ops import (creation, einsum, elementwise, manipulation, reductions, registry,
                   searching, sets, sorting, structure)
from ._ops.registry import register, register_nondiff
from ._ops._util import floating, payload
from ._tensor import Tensor, _find_tracked, _on_payloads, _payloads, as_tensor

if TYPE_CHECKING:
    import tenferro as tf
else:
    # tf.<name>: the functions this module composes, spelled as in user code. The package
    # imports this module, so it holds them from the modules that define them, merged in
    # the package's order (tenferro/__init__.py's star imports).
    tf = SimpleNamespace(linalg=_linalg, LinAlgError=LinAlgError, **{
        name: getattr(module, name)
        for module in (elementwise, reductions, structure, einsum, creation, manipulation,
                       searching, sorting, sets)
        for name in module.__all__})

__all__: list[str] = []

CLAIMED: list[Any] = []     # NumPy functions whose tenferro version is defined here
ELSEWHERE: list[Any] = []   # ... that another module had registered already (theirs is kept)
INPLACE: list[Any] = []     # NumPy functions that write into their first argument
_R = np.linalg._linalg   # NumPy's result types: SVDResult(U, S, Vh), EighResult, ...

_F = TypeVar("_F", bound=Callable[..., Any])
_NpFn: TypeAlias = Callable[..., Any]          # a NumPy function or ufunc
_Axis: TypeAlias = "int | tuple[int, ...] | None"


# ---- plumbing ------------------------------------------------------------------------------

def _qualname(f: Any) -> str:
    mod = getattr(f, "__module__", None) or "numpy"
    return f"{mod}.{f.__name__}".replace("numpy._core.", "numpy.").replace(
        "numpy.linalg._linalg", "numpy.linalg")


def _taken(f: object) -> bool:
    return f in registry.UFUNCS or f in registry.FUNCTIONS or f in registry.NONDIFF


def _claim(np_fn: _NpFn, fn: Callable[..., Any]) -> None:
    """Register ``fn`` as ``np_fn``'s tenferro version unless another module did."""
    if _taken(np_fn):
        ELSEWHERE.append(np_fn)
        return
    if isinstance(np_fn, np.ufunc):
        register(fn, ufuncs=(np_fn,))
    else:
        register(fn, functions=(np_fn,))
    CLAIMED.append(np_fn)


def _tensors(r: Any) -> Any:
    """NumPy's result with every ndarray/NumPy scalar made a (constant) Tensor."""
    if isinstance(r, (np.ndarray, np.generic)):
        return as_tensor(r)
    if isinstance(r, list):
        return [_tensors(x) for x in r]
    if isinstance(r, tuple):
        vals = [_tensors(x) for x in r]
        return type(r)(*vals) if hasattr(r, "_fields") else tuple(vals)
    return r


def _numpy_version(np_fn: _NpFn, *, plain: bool = True) -> Callable[[_F], _F]:
    """Decorator: the function is ``np_fn``'s tenferro version, registered for it.

    ``plain=True``: when no input carries a derivative, NumPy's own result on the payloads
    is returned as Tensors (bit-identical to NumPy); the composition runs only when one
    does. ``plain=False`` always runs the composition (linalg: the same LAPACK path with
    and without grad; functions calling the user's code on tensors)."""
    name = _qualname(np_fn)

    def deco(fn: _F) -> _F:
        if not plain:
            _claim(np_fn, fn)
            return fn

        @functools.wraps(fn)
        def dispatch(*args: Any, **kwargs: Any) -> Any:
            if _find_tracked((args, kwargs)) is None:
                return _tensors(np_fn(*_payloads(args, name), **_payloads(kwargs, name)))
            return fn(*args, **kwargs)

        _claim(np_fn, dispatch)
        return cast(_F, dispatch)    # at import only; functools.wraps keeps fn's signature

    return deco


# ---- a tensor that requires grad reaching np.asarray -------------------------------------
#
# NumPy dispatches a call to __array_function__ only for arguments that are arrays
# themselves: a list or tuple holding tensors (np.mean([x, y]), np.array([x, y])) and the
# items of np.r_[x, y] / np.c_[x, y] are converted with np.asarray, which calls
# Tensor.__array__ and cannot return a tensor. np.stack, np.concatenate, np.vstack, np.block
# and the other functions whose dispatcher lists the sequence's items do dispatch. For a
# tensor that requires grad the conversion raises; this error names the NumPy call from
# the stack (it runs on the error path only) and the tf spelling that keeps the gradient.

def _numpy_caller(frame: Any) -> str | None:
    """The public name of the NumPy function whose Python code converted the tensor
    (walking out from ``frame`` over NumPy's frames: the outermost is the one the user
    called), 'np.r_' / 'np.c_' for the index tricks, None when no NumPy frame is there
    (np.array, np.asarray and the ufuncs are C functions called from the user's code)."""
    outer = None
    while frame is not None and \
            str(frame.f_globals.get("__name__", "")).split(".")[0] == "numpy":
        outer, frame = frame, frame.f_back
    if outer is None:
        return None
    name = outer.f_code.co_name
    if name == "__getitem__":
        self = outer.f_locals.get("self")
        for obj, spelling in ((np.c_, "np.c_"), (np.r_, "np.r_")):
            if type(self) is type(obj):
                return spelling
    module = str(outer.f_globals.get("__name__", ""))
    for sub in ("linalg", "fft"):
        if module.startswith(f"numpy.{sub}"):
            return f"np.{sub}.{name}"
    return f"np.{name}"


def conversion_error(depth: int = 2) -> UnsupportedADError:
    """The error of ``np.asarray(t)`` for a tensor ``t`` that requires grad (called from
    Tensor.__array__; ``depth``: frames from here to the code that asked for the array)."""
    caller = _numpy_caller(sys._getframe(depth))
    if caller == "np.r_":
        return UnsupportedADError(
            "np.r_[...] holds a tensor that requires grad: np.r_ converts each item with "
            "np.array, which NumPy does not dispatch to tenferro: that would drop its "
            "gradient. Use tf.concatenate([x, y]) (tf.reshape(t, (-1,)) for a tensor of "
            "another ndim, tf.asarray([...]) for numbers, tf.arange for a slice), or "
            "t.detach() to say that no gradient should flow")
    if caller == "np.c_":
        return UnsupportedADError(
            "np.c_[...] holds a tensor that requires grad: np.c_ converts each item with "
            "np.array, which NumPy does not dispatch to tenferro: that would drop its "
            "gradient. Use tf.stack([x, y], axis=-1) for 1-d tensors (np.column_stack([x, "
            "y]) dispatches to the same) or tf.concatenate([a, b], axis=-1) for 2-d ones, "
            "or t.detach() to say that no gradient should flow")
    if caller is not None:
        # the tf function of the same name, when there is one, in the whole package
        # (which imports this module: cycle, at call time)
        import tenferro
        fn: Any = tenferro
        for part in caller.split(".")[1:]:
            fn = getattr(fn, part, None)
        tf_hint = f" or tf.{caller[3:]}(tf.stack([x, y]))" if callable(fn) else ""
        return UnsupportedADError(
            f"{caller} got a tensor that requires grad inside a list or tuple: NumPy "
            f"converts such an argument with np.asarray without dispatching to tenferro, "
            f"which would drop its gradient. Make one tensor of the pieces first: "
            f"{caller}(tf.stack([x, y])){tf_hint} (or tf.concatenate; np.stack and "
            f"np.concatenate of a list dispatch too), or pass t.detach() to say that no "
            f"gradient should flow")
    return UnsupportedADError(
        "converting a tensor that requires grad to a NumPy array would drop its gradient: "
        "keep computing with tf.* ops (NumPy functions and ufuncs called on the tensor "
        "itself dispatch to them), or convert t.detach() / t.numpy() to say that no "
        "gradient should flow. A list or tuple of tensors given to np.array, np.asarray "
        "or a ufunc (np.array([x, y]), np.exp([x, y])) is converted without dispatching: "
        "use tf.stack([x, y]) (or tf.concatenate) to make one tensor of them")


def _fallback(np_fn: _NpFn, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Group 3 for an option without a composition: NumPy's result for plain values,
    UnsupportedADError naming the function when an input carries a derivative."""
    return _on_payloads(np_fn, _qualname(np_fn), False, args, kwargs)


def _numpy_check(np_fn: _NpFn, what: str, *args: Any, **kwargs: Any) -> NoReturn:
    """For arguments a composition does not handle: NumPy's own error if NumPy rejects
    them (run on the payloads), else UnsupportedADError (a tracked input is present)."""
    name = _qualname(np_fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np_fn(*_payloads(args, name), **_payloads(kwargs, name))
    _unsupported(np_fn, what)


def _unsupported(np_fn: _NpFn, what: str) -> NoReturn:
    raise UnsupportedADError(
        f"{_qualname(np_fn)} with {what} has no differentiable tenferro version, and an "
        f"input requires grad, so its gradient would be lost: pass t.detach() to say that "
        f"no gradient should flow, or write it with tf.* ops")


def _no_out(np_fn: _NpFn, out: object) -> None:
    if out is not None:
        raise TypeError(f"{_qualname(np_fn)} on tensors: out= is not supported (tensors are "
                        "not written in place); use the returned value")


def _arr(x: ArrayLike) -> Tensor:
    """``x`` as a Tensor; sequences holding tracked tensors are stacked differentiably."""
    return x if isinstance(x, Tensor) else tf.asarray(x)


def _farr(x: ArrayLike) -> Tensor:
    """``_arr(x)`` with integer/bool payloads as float64."""
    r: Tensor = floating(_arr(x))
    return r


def _codes(shape: tuple[int, ...]) -> NDArray[np.intp]:
    """The positions 0..n-1 of a tensor of ``shape``, laid out in that shape."""
    return np.arange(math.prod(shape), dtype=np.intp).reshape(shape)


def _gather(x: Tensor, codes: ArrayLike) -> Tensor:
    """The entries of ``x`` at flat positions ``codes`` (an int ndarray of any shape)."""
    return tf.ravel(x)[np.asarray(codes, dtype=np.intp)]


def _rearranged(np_fn: _NpFn, x: ArrayLike, *args: Any, **kwargs: Any) -> Tensor:
    """``np_fn(x, ...)`` for a function that only moves entries around: NumPy applied to
    the positions of ``x``, then a gather (exact semantics, a gather's derivative)."""
    x = _arr(x)
    return _gather(x, np_fn(_codes(x.shape), *args, **kwargs))


def _cast(x: Tensor, dtype: DTypeLike | None) -> Tensor:
    return x if dtype is None or x.dtype == np.dtype(dtype) else tf.astype(x, np.dtype(dtype))


def _payload_of(x: Any) -> NDArray[Any]:
    """The ndarray of ``x`` (tensors, nested sequences of tensors, array-likes)."""
    return np.asarray(_payloads(x, "")) if not isinstance(x, Tensor) else x._data


# ---- products ------------------------------------------------------------------------------

@_numpy_version(np.dot)
def _dot(a: ArrayLike, b: ArrayLike, out: object = None) -> Tensor:
    _no_out(np.dot, out)
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tf.tensordot(a, b, axes=([a.ndim - 1], [max(b.ndim - 2, 0)]))


@_numpy_version(np.vdot)
def _vdot(a: ArrayLike, b: ArrayLike, /) -> Tensor:
    a, b = tf.ravel(_arr(a)), tf.ravel(_arr(b))
    if a.shape != b.shape:
        raise ShapeError(f"numpy.vdot: the inputs have {a.shape[0]} and {b.shape[0]} entries; "
                         "vdot needs the same number")
    return tf.tensordot(tf.conj(a), b, axes=1)


@_numpy_version(np.inner)
def _inner(a: ArrayLike, b: ArrayLike, /) -> Tensor:
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tf.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


@_numpy_version(np.outer)
def _outer(a: ArrayLike, b: ArrayLike, out: object = None) -> Tensor:
    _no_out(np.outer, out)
    return tf.linalg.outer(tf.ravel(_arr(a)), tf.ravel(_arr(b)))


@_numpy_version(np.kron)
def _kron(a: ArrayLike, b: ArrayLike) -> Tensor:
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    # a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...] -> (a0*b0, a1*b1, ...)
    a2 = tf.reshape(a, tuple(d for s in sa for d in (s, 1)))
    b2 = tf.reshape(b, tuple(d for s in sb for d in (1, s)))
    return tf.reshape(a2 * b2, tuple(p * q for p, q in zip(sa, sb)))


@_numpy_version(np.cross)
def _cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
           axis: int | None = None) -> Tensor:
    if axis is not None:
        axisa = axisb = axisc = axis
    a = tf.moveaxis(_arr(a), axisa, -1)
    b = tf.moveaxis(_arr(b), axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=3)
    if na == 2 and nb == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a, b = _pad3(a), _pad3(b)
    c = tf.linalg.cross(*tf.broadcast_arrays(a, b), axis=-1)
    return tf.moveaxis(c, -1, normalize_axis_index(axisc, c.ndim))


def _pad3(v: Tensor) -> Tensor:
    if v.shape[-1] == 3:
        return v
    return tf.concatenate([v, tf.zeros(v.shape[:-1] + (1,), dtype=v.dtype)], axis=-1)


@_numpy_version(np.matvec)
def _matvec(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.matvec, kwargs)
    x1, x2 = _arr(x1), _arr(x2)
    return tf.matmul(x1, x2[..., None])[..., 0]


@_numpy_version(np.vecmat)
def _vecmat(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.vecmat, kwargs)
    x1, x2 = _arr(x1), _arr(x2)
    return tf.matmul(tf.conj(x1)[..., None, :], x2)[..., 0, :]


def _ufunc_kwargs(ufunc: np.ufunc, kwargs: dict[str, Any]) -> None:
    """The ufunc keywords a composition does not take (``dtype=``, ``where=``, ...)."""
    extra = {k: v for k, v in kwargs.items()
             if not (k in ("casting", "order") or (k == "where" and v is True)
                     or (k in ("axes", "axis") and v is None) or (k == "subok" and v))}
    if extra:
        raise TypeError(f"numpy.{ufunc.__name__} on tensors: the keyword(s) "
                        f"{', '.join(sorted(extra))} are not supported by its differentiable "
                        "version; apply them to the result (e.g. tf.astype)")


@_numpy_version(np.linalg.multi_dot)
def _multi_dot(arrays: Any, *, out: object = None) -> Tensor:
    _no_out(np.linalg.multi_dot, out)
    arrays = [_arr(a) for a in arrays]
    if len(arrays) < 2:
        raise ShapeError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return _dot(*arrays)
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = arrays[0][None, :]
    if last == 1:
        arrays[-1] = arrays[-1][:, None]
    for a in arrays:
        if a.ndim != 2:
            raise tf.LinAlgError(f"{a.ndim}-dimensional array given. Array must be "
                                 "two-dimensional")
    r = _chain(arrays, _chain_order([a.shape for a in arrays]), 0, len(arrays) - 1)
    if first == 1 and last == 1:
        return r[0, 0]
    if first == 1 or last == 1:
        return tf.ravel(r)
    return r


def _chain_order(shapes: Sequence[tuple[int, ...]]) -> list[list[int]]:
    """The cheapest parenthesisation of a matrix chain (Cormen et al., 15.2): split[i][j]."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost: list[list[float]] = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays: Sequence[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return arrays[i]
    k = split[i][j]
    return tf.matmul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


# ---- linalg with NumPy's signatures and result types ------------------------------------------
# tf.linalg's own functions follow the array API (svd's full_matrices=False, lower-case
# result fields); NumPy's spellings get NumPy's defaults and result types. These always
# run tenferro's LAPACK path (plain=False), so plain and tracked calls agree exactly.

@_numpy_version(np.linalg.svd, plain=False)
def _svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
         hermitian: bool = False) -> Any:
    if hermitian:
        return _svd_hermitian(_arr(a), compute_uv)
    if not compute_uv:
        return tf.linalg.svdvals(a)
    return _R.SVDResult(*tf.linalg.svd(a, full_matrices=full_matrices))


def _svd_hermitian(a: Tensor, compute_uv: bool) -> Any:
    """NumPy's svd(hermitian=True): eigh, then |λ| sorted descending; U's columns are the
    eigenvectors and Vh = (U·sign(λ))ᴴ (NumPy's choice; sign(0) = 0 included)."""
    if not compute_uv:
        return tf.sort(tf.abs(tf.linalg.eigvalsh(a)), axis=-1, descending=True)
    w, v = tf.linalg.eigh(a)
    sgn = np.sign(w._data)
    order = np.argsort(np.abs(w._data), axis=-1)[..., ::-1]
    s = tf.take_along_axis(tf.abs(w), order, axis=-1)
    u = tf.take_along_axis(v, order[..., None, :], axis=-1)
    sgn = np.take_along_axis(sgn, order, axis=-1)
    vh = tf.conj(tf.matrix_transpose(u * sgn[..., None, :]))
    return _R.SVDResult(u, s, vh)  # type: ignore[arg-type]  # tensors in NumPy's result type


@_numpy_version(np.linalg.svdvals, plain=False)
def _svdvals(x: ArrayLike, /) -> Tensor:
    return tf.linalg.svdvals(x)


@_numpy_version(np.linalg.eigh, plain=False)
def _eigh(a: ArrayLike, UPLO: Literal["L", "U", "l", "u"] = "L") -> Any:
    return _R.EighResult(*tf.linalg.eigh(a, UPLO))


@_numpy_version(np.linalg.eigvalsh, plain=False)
def _eigvalsh(a: ArrayLike, UPLO: Literal["L", "U", "l", "u"] = "L") -> Tensor:
    return tf.linalg.eigvalsh(a, UPLO)


def _real_if_real(a: Tensor, w: Tensor, *more: Tensor) -> tuple[Tensor, ...]:
    """NumPy's eig/eigvals return real arrays for a real matrix whose eigenvalues are all
    real; tenferro's are complex: take the real parts then (differentiably)."""
    if a.dtype.kind != "c" and np.all(w._data.imag == 0):
        return (tf.real(w),) + tuple(tf.real(m) for m in more)
    return (w,) + more


@_numpy_version(np.linalg.eig, plain=False)
def _eig(a: ArrayLike) -> Any:
    a = _farr(a)
    return _R.EigResult(*_real_if_real(a, *tf.linalg.eig(a)))  # type: ignore[arg-type]  # tensors


@_numpy_version(np.linalg.eigvals, plain=False)
def _eigvals(a: ArrayLike) -> Tensor:
    a = _farr(a)
    return _real_if_real(a, tf.linalg.eigvals(a))[0]


@_numpy_version(np.linalg.qr, plain=False)
def _qr(a: ArrayLike, mode: Literal["reduced", "complete", "r", "raw"] = "reduced") -> Any:
    if mode == "reduced" or mode == "complete":      # (narrows mode for the checker)
        return _R.QRResult(*tf.linalg.qr(a, mode=mode))
    if mode == "r":
        return tf.linalg.qr(a, mode="r")
    return _fallback(np.linalg.qr, (a,), {"mode": mode})


@_numpy_version(np.linalg.cholesky, plain=False)
def _cholesky(a: ArrayLike, /, *, upper: bool = False) -> Tensor:
    return tf.linalg.cholesky(a, upper=upper)


@_numpy_version(np.linalg.cond, plain=False)
def _cond(x: ArrayLike, p: float | Literal["fro", "nuc"] | None = None) -> Tensor:
    """NumPy's cond: s_max/s_min (p None/2), s_min/s_max (p = -2), else
    norm(x, p)·norm(inv(x), p); a singular matrix raises LinAlgError from inv for those p."""
    x = _farr(x)
    if x.ndim < 2 or x.shape[-1] == 0 or x.shape[-2] == 0:
        _numpy_check(np.linalg.cond, "an empty or 1-d input", x, p)
    if p is None or p == 2 or p == -2:
        s = tf.linalg.svdvals(x)
        with np.errstate(all="ignore"):
            return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    return (tf.linalg.norm(x, p, axis=(-2, -1))
            * tf.linalg.norm(tf.linalg.inv(x), p, axis=(-2, -1)))


@_numpy_version(np.linalg.tensorinv, plain=False)
def _tensorinv(a: ArrayLike, ind: int = 2) -> Tensor:
    a = _arr(a)
    if ind <= 0:
        raise ShapeError("Invalid ind argument.")
    inv_shape = a.shape[ind:] + a.shape[:ind]
    n = math.prod(a.shape[ind:])
    return tf.reshape(tf.linalg.inv(tf.reshape(a, (n, -1))), inv_shape)


@_numpy_version(np.linalg.tensorsolve, plain=False)
def _tensorsolve(a: ArrayLike, b: ArrayLike, axes: Sequence[int] | None = None) -> Tensor:
    a, b = _arr(a), _arr(b)
    if axes is not None:
        rest = [k for k in range(a.ndim) if k not in [normalize_axis_index(x, a.ndim)
                                                      for x in axes]]
        a = tf.transpose(a, rest + [normalize_axis_index(x, a.ndim) for x in axes])
    old = a.shape[-(a.ndim - b.ndim):]
    n = math.prod(old)
    if a.size != n * n:
        raise tf.LinAlgError("Input arrays must satisfy the requirement "
                             "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return tf.reshape(tf.linalg.solve(tf.reshape(a, (n, n)), tf.ravel(b)), old)


# ---- statistics ---------------------------------------------------------------------------------

@_numpy_version(np.average)
def _average(a: ArrayLike, axis: _Axis = None, weights: ArrayLike | None = None,
             returned: bool = False, *, keepdims: bool = False) -> Any:
    a = _arr(a)
    axes = None if axis is None else normalize_axis_tuple(axis, a.ndim)
    if weights is None:
        avg = tf.mean(floating(a), axes, keepdims=keepdims)
        scl = Tensor._wrap(np.asarray(a.size / max(avg.size, 1), dtype=avg.dtype))
    else:
        w = _arr(weights)
        if w.shape != a.shape:
            if axes is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if w.shape != tuple(a.shape[ax] for ax in axes):
                raise ShapeError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = tf.transpose(w, tuple(np.argsort(axes)))
            w = tf.reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(a.shape)))
        dt = np.result_type(a.dtype, w.dtype, *(("f8",) if a.dtype.kind in "biu" else ()))
        scl = tf.sum(_cast(w, dt), axes, keepdims=keepdims)
        if np.any(scl._data == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = tf.sum(_cast(a, dt) * _cast(w, dt), axes, keepdims=keepdims) / scl
    if returned:
        if scl.shape != avg.shape:
            scl = tf.broadcast_to(scl, avg.shape)
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
        x = tf.concatenate([x, y], axis=0)
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
        fact = w_sum - ddof * tf.sum(w * aw) / w_sum
    if not isinstance(fact, Tensor) and fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        fact = 0.0
    x = x - avg[:, None]
    xw = x if w is None else x * w
    c = tf.matmul(x, tf.conj(xw.T))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c * (1.0 / fact)
    return tf.squeeze(c)


@_numpy_version(np.corrcoef)
def _corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, *,
              dtype: DTypeLike | None = None) -> Tensor:
    c = _cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c      # NumPy: nan for 0, 1 otherwise
    d = tf.diagonal(c)
    std = tf.sqrt(tf.real(d))
    c = c / std[:, None] / std[None, :]
    # clip to [-1, 1] (real and imaginary parts), as NumPy does against rounding
    if c.dtype.kind == "c":
        return tf.clip(tf.real(c), -1, 1) + 1j * tf.clip(tf.imag(c), -1, 1)
    return tf.clip(c, -1, 1)


@_numpy_version(np.ptp)
def _ptp(a: ArrayLike, axis: _Axis = None, out: object = None, keepdims: bool = False
         ) -> Tensor:
    _no_out(np.ptp, out)
    a = _arr(a)
    return tf.max(a, axis, keepdims=keepdims) - tf.min(a, axis, keepdims=keepdims)


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
            d = tf.diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = tf.reshape(d, tuple(shape))
        else:
            d = tf.diff(x, axis=axis)
    lo = (slice(None),) * axis + (slice(None, -1),)
    hi = (slice(None),) * axis + (slice(1, None),)
    return tf.sum(d * (y[hi] + y[lo]) / 2.0, axis)


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
        r: Tensor = getattr(tf, kind)(tf.where(mask, a, 0 if kind == "sum" else 1), axes,
                              dtype=dtype, keepdims=keepdims)
        if initial is not None:
            r = r + initial if kind == "sum" else r * initial
        return r
    if kind in ("max", "min"):
        if strict and initial is None and not mask.all():
            raise ShapeError(f"reduction operation '{kind}imum' does not have an identity, "
                             f"so to use a where mask one has to specify 'initial'")
        fill = -np.inf if kind == "max" else np.inf
        r = getattr(tf, kind)(tf.where(mask, a, fill), axes, keepdims=keepdims)
        if initial is not None:
            r = (tf.maximum if kind == "max" else tf.minimum)(r, initial)
        return r
    a = _cast(floating(a), dtype)
    cnt = np.sum(mask, axis=axes, keepdims=True)
    real = np.finfo(a.dtype).dtype
    s = tf.sum(tf.where(mask, a, 0), axes, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s / cnt.astype(real)
        if kind == "mean":
            return mean if keepdims else _drop(mean, axes)
        c = tf.where(mask, a - mean, 0)
        sq = tf.real(c * tf.conj(c)) if c.dtype.kind == "c" else c * c
        dof = np.maximum(cnt - ddof, 0).astype(real)
        var = tf.sum(sq, axes, keepdims=True) / dof
    if np.any(dof <= 0):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=4)
        var = tf.where(dof <= 0, np.nan, var)
    r = var if kind == "var" else tf.sqrt(var)
    return r if keepdims else _drop(r, axes)


def _drop(r: Tensor, axes: tuple[int, ...] | None) -> Tensor:
    return tf.squeeze(r, axes) if axes is not None else tf.reshape(r, ())


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
            r = tf.where(empty, np.nan, r)
        elif kind == "mean" and np.any(empty):
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
        return r

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    _numpy_version(np_fn)(f)


for _fn, _kind in ((np.nansum, "sum"), (np.nanprod, "prod"), (np.nanmean, "mean"),
                   (np.nanvar, "var"), (np.nanstd, "std"), (np.nanmax, "max"),
                   (np.nanmin, "min")):
    _nan_reduction(_fn, _kind)


@_numpy_version(np.nancumsum)
def _nancumsum(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None,
               out: object = None) -> Tensor:
    _no_out(np.nancumsum, out)
    a = _arr(a)
    # np.cumsum of a tensor dispatches to tenferro's (a Tensor; the stubs say ndarray)
    return np.cumsum(  # type: ignore[return-value]
        tf.where(_notnan(a), a, 0), axis=axis, dtype=dtype)


@_numpy_version(np.nancumprod)
def _nancumprod(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None,
                out: object = None) -> Tensor:
    _no_out(np.nancumprod, out)
    a = _arr(a)
    # np.cumprod of a tensor dispatches to tenferro's (a Tensor; the stubs say ndarray)
    return np.cumprod(  # type: ignore[return-value]
        tf.where(_notnan(a), a, 1), axis=axis, dtype=dtype)


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
    x = tf.transpose(a, keep + list(axes)) if keep + list(axes) != list(range(a.ndim)) else a
    kept = tuple(a.shape[i] for i in keep)
    return tf.reshape(x, kept + (math.prod(a.shape[i] for i in axes),)), axes


def _restore(r: Tensor, a: Tensor, axes: tuple[int, ...], keepdims: bool,
             lead: tuple[int, ...] = ()) -> Tensor:
    """(lead..., kept...) results with the reduced axes back as 1s if ``keepdims``."""
    if not keepdims:
        return r
    return tf.reshape(r, lead + tuple(1 if i in axes else n for i, n in enumerate(a.shape)))


def _order_stats(a: ArrayLike, axis: _Axis, ignore_nan: bool
                 ) -> tuple[Tensor, Tensor, tuple[int, ...], NDArray[Any], NDArray[np.bool_]]:
    """Sorted slices (kept..., n), the reduced axes, and per slice the number of values
    used (n, or the non-NaN count) and whether the slice has a NaN."""
    a = _farr(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    x, axes = _reduce_last(a, axis)
    s = tf.sort(x, axis=-1)                        # NaNs sort last, as in NumPy
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
            return tf.where(empty, np.nan, r)
        return r
    return tf.where(s_has_nan, np.nan, r) if s_has_nan.any() else r


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
        r = tf.take_along_axis(s, lo, axis=-1)
    else:
        h = _virtual_index(method, cnt, qf)
        lo = np.floor(h)
        gamma = h - lo
        if method == "midpoint":
            gamma = np.where(h % 1 == 0, 0.0, 0.5)
        elif method == "averaged_inverted_cdf":
            gamma = np.where(gamma == 0, 0.5, 1.0)
        elif isinstance(q, Tensor) and _find_tracked(q) is not None:
            gamma = _virtual_index(method, cnt, tf.reshape(floating(q), (-1,))) - lo
        lo = np.clip(lo, 0, last).astype(np.intp)
        hi = np.clip(np.floor(h) + 1, 0, last).astype(np.intp)
        hi = np.where(h >= cnt - 1, last, hi)
        lo = np.where(h >= cnt - 1, last, lo)
        r = _lerp(tf.take_along_axis(s, lo, axis=-1), tf.take_along_axis(s, hi, axis=-1),
                  gamma)
    r = _nan_slices(r, has_nan, cnt, ignore_nan)
    r = tf.moveaxis(r, -1, 0)                                   # (Q, kept...)
    r = tf.reshape(r, qp.shape + r.shape[1:])
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
    return tf.where(payload(t) >= 0.5, hi - d * (1 - t), lo + d * t)


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
        mid = tf.take_along_axis(s, lo, axis=-1)
        if not np.array_equal(lo, hi):
            mid = (mid + tf.take_along_axis(s, np.minimum(hi, s.shape[-1] - 1), axis=-1)) / 2
        r = _nan_slices(mid, has_nan, cnt, ignore_nan)[..., 0]
        return _restore(r, a, axes, keepdims)

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    return _numpy_version(np_fn)(f)


_median_version(np.median, False)
_median_version(np.nanmedian, True)


# ---- rearrangements: joins, splits, pads, index-driven selections -------------------------------

def _atleast(x: ArrayLike, n: int) -> Tensor:
    """NumPy's atleast_{1,2,3}d of one tensor."""
    x = _arr(x)
    if x.ndim >= n:
        return x
    if n == 3 and x.ndim == 1:
        return tf.reshape(x, (1,) + x.shape + (1,))
    if n == 3 and x.ndim == 2:
        return tf.reshape(x, x.shape + (1,))
    return tf.reshape(x, (1,) * (n - x.ndim) + x.shape)


def _atleast_version(np_fn: _NpFn, n: int) -> Callable[..., Any]:
    def f(*arys: ArrayLike) -> Tensor | tuple[Tensor, ...]:
        res = tuple(_atleast(a, n) for a in arys)
        return res[0] if len(res) == 1 else res

    f.__name__ = f.__qualname__ = f"_atleast_{n}d"
    return _numpy_version(np_fn)(f)


for _n, _fn in enumerate((np.atleast_1d, np.atleast_2d, np.atleast_3d), 1):
    _atleast_version(_fn, _n)


def _joined(parts: Sequence[Tensor], axis: int, dtype: DTypeLike | None = None) -> Tensor:
    if not parts:
        raise ShapeError("need at least one array to concatenate")
    return _cast(tf.concatenate(parts, axis=axis), dtype)


@_numpy_version(np.hstack)
def _hstack(tup: Sequence[ArrayLike], *, dtype: DTypeLike | None = None, casting: str = "same_kind"
            ) -> Tensor:
    parts = [_atleast(a, 1) for a in tup]
    return _joined(parts, 0 if parts and parts[0].ndim == 1 else 1, dtype)


@_numpy_version(np.vstack)
def _vstack(tup: Sequence[ArrayLike], *, dtype: DTypeLike | None = None, casting: str = "same_kind"
            ) -> Tensor:
    return _joined([_atleast(a, 2) for a in tup], 0, dtype)


@_numpy_version(np.dstack)
def _dstack(tup: Sequence[ArrayLike]) -> Tensor:
    return _joined([_atleast(a, 3) for a in tup], 2)


@_numpy_version(np.column_stack)
def _column_stack(tup: Sequence[ArrayLike]) -> Tensor:
    parts: list[Tensor] = []
    for a in tup:
        a = _arr(a)
        parts.append(tf.reshape(a, (-1, 1)) if a.ndim < 2 else a)
    return _joined(parts, 1)


def _via_codes(np_fn: _NpFn, struct: Any, *args: Any, **kwargs: Any) -> Tensor | list[Tensor]:
    """``np_fn(struct, ...)`` for a function that only rearranges the entries of the arrays
    in ``struct`` (one array, or nested lists of them): NumPy applied to their positions
    in the concatenation of all of them, then gathers. Returns the same structure of
    tensors (a tensor, or a list of them)."""
    leaves: list[Tensor] = []

    def codes(s: Any) -> Any:
        if isinstance(s, list):
            return [codes(e) for e in s]
        t = _arr(s)
        start = sum(x.size for x in leaves)
        leaves.append(t)
        return start + _codes(t.shape)

    c = np_fn(codes(struct), *args, **kwargs)
    dt = np.result_type(*[t.dtype for t in leaves])
    src = tf.concatenate([tf.ravel(_cast(t, dt)) for t in leaves]) if len(leaves) > 1 \
        else _cast(leaves[0], dt)
    if isinstance(c, (list, tuple)):
        return [_gather(src, e) for e in c]
    return _gather(src, c)


@_numpy_version(np.block)
def _block(arrays: Any) -> Tensor | list[Tensor]:
    if isinstance(arrays, tuple):
        raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                        "np.block does not allow implicit conversion from tuple to ndarray.")
    return _via_codes(np.block, arrays)


def _split_version(np_fn: _NpFn) -> Callable[..., Any]:
    def f(ary: ArrayLike, indices_or_sections: Any, *args: Any, **kwargs: Any
          ) -> Tensor | list[Tensor]:
        ios = payload(indices_or_sections) if isinstance(indices_or_sections, Tensor) \
            else indices_or_sections
        return _via_codes(np_fn, ary, ios, *args, **kwargs)

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    return _numpy_version(np_fn)(f)


for _fn in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit):
    _split_version(_fn)


@_numpy_version(np.append)
def _append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Tensor:
    arr, values = _arr(arr), _arr(values)
    if axis is None:
        return tf.concatenate([tf.ravel(arr), tf.ravel(values)])
    return tf.concatenate([arr, values], axis=axis)


@_numpy_version(np.insert)
def _insert(arr: ArrayLike, obj: Any, values: ArrayLike, axis: int | None = None) -> Tensor:
    """NumPy's insert on positions: arr's entries are 0..n−1, values' n..n+m−1 (cast to
    arr's dtype first, as NumPy does); NumPy places them, a gather reads them."""
    arr = _arr(arr)
    values = _cast(_arr(values), arr.dtype)
    obj = payload(obj) if isinstance(obj, Tensor) else obj
    c = np.insert(_codes(arr.shape), obj, arr.size + _codes(values.shape), axis=axis)
    return _gather(tf.concatenate([tf.ravel(arr), tf.ravel(values)]), c)


@_numpy_version(np.delete)
def _delete(arr: ArrayLike, obj: Any, axis: int | None = None) -> Tensor:
    obj = payload(obj) if isinstance(obj, Tensor) else obj
    return _rearranged(np.delete, arr, obj, axis=axis)


_PAD_GATHER = ("edge", "reflect", "symmetric", "wrap")


@_numpy_version(np.pad)
def _pad(array: ArrayLike, pad_width: Any, mode: str | Callable[..., Any] = "constant",
         **kwargs: Any) -> Any:
    """Modes that copy entries (edge, reflect, symmetric, wrap; reflect_type="even") are
    NumPy's pad of positions, then a gather; "constant" pads positions with −1 and fills
    those with the constants (which are not differentiated: a tracked constant raises)."""
    x = _arr(array)
    pw = payload(pad_width) if isinstance(pad_width, Tensor) else pad_width
    if mode in _PAD_GATHER and kwargs.get("reflect_type", "even") == "even":
        # mode is one of _PAD_GATHER here (the stubs want a Literal)
        return _gather(x, np.pad(  # type: ignore[call-overload]
            _codes(x.shape), pw, mode=mode, **kwargs))
    if mode == "constant" and _find_tracked(kwargs) is None:
        c = np.pad(_codes(x.shape), pw, mode="constant", constant_values=-1)
        fill = np.pad(np.zeros(x.shape, x.dtype), pw, mode="constant",
                      **_payloads(kwargs, "numpy.pad"))
        return tf.where(c >= 0, _gather(x, np.maximum(c, 0)), fill)
    return _fallback(np.pad, (array, pad_width, mode), kwargs)


@_numpy_version(np.resize)
def _resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Tensor:
    a = _arr(a)
    if a.size == 0:
        return tf.zeros(np.resize(np.zeros(0), new_shape).shape, dtype=a.dtype)
    return _rearranged(np.resize, a, new_shape)


@_numpy_version(np.rot90)
def _rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Tensor:
    return _rearranged(np.rot90, m, k, axes)


@_numpy_version(np.rollaxis)
def _rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Tensor:
    a = _arr(a)
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return tf.transpose(a, tuple(perm))


@_numpy_version(np.diagflat)
def _diagflat(v: ArrayLike, k: int = 0) -> Tensor:
    return tf.diag(tf.ravel(_arr(v)), k)


@_numpy_version(np.compress)
def _compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, out: object = None
              ) -> Tensor:
    _no_out(np.compress, out)
    a = _arr(a)
    return _gather(a, np.compress(_payload_of(condition), _codes(a.shape), axis=axis))


@_numpy_version(np.extract)
def _extract(condition: ArrayLike, arr: ArrayLike) -> Tensor:
    arr = _arr(arr)
    return _gather(arr, np.extract(_payload_of(condition), _codes(arr.shape)))


@_numpy_version(np.choose)
def _choose(a: ArrayLike, choices: Any, out: object = None,
            mode: Literal["raise", "wrap", "clip"] = "raise") -> Tensor:
    """Positions: choice k's entries (broadcast) are k·size + 0..size−1; NumPy chooses."""
    _no_out(np.choose, out)
    idx = _payload_of(a)
    choices = [_arr(c) for c in choices]
    shape = np.broadcast_shapes(idx.shape, *[c.shape for c in choices])
    dt = np.result_type(*[c.dtype for c in choices])
    size = math.prod(shape)
    src = tf.concatenate([tf.ravel(tf.broadcast_to(_cast(c, dt), shape)) for c in choices])
    codes = [k * size + _codes(shape) for k in range(len(choices))]
    return _gather(src, np.choose(np.broadcast_to(idx, shape), codes, mode=mode))


@_numpy_version(np.select)
def _select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
            default: ArrayLike = 0) -> Tensor:
    if len(condlist) != len(choicelist):
        raise ShapeError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ShapeError("select with an empty condition list is not possible")
    conds = [_payload_of(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = [_arr(c) for c in choicelist] + [_arr(default)]
    weak = isinstance(default, (int, float, complex)) and not isinstance(default, bool)
    dt = np.result_type(*[c.dtype for c in choices[:-1]],
                        default if weak else choices[-1].dtype)
    shape = np.broadcast_shapes(*[c.shape for c in conds], *[c.shape for c in choices])
    r = tf.broadcast_to(_cast(choices[-1], dt), shape)
    for cond, choice in zip(conds[::-1], choices[-2::-1]):
        r = tf.where(cond, _cast(choice, dt), r)
    return r


@_numpy_version(np.partition)
def _partition(a: ArrayLike, kth: Any, axis: int | None = -1,
               kind: Literal["introselect"] = "introselect", order: Any = None) -> Any:
    """A gather by NumPy's argpartition of the payload (the same selection algorithm)."""
    a = _arr(a)
    if order is not None:
        return _fallback(np.partition, (a, kth), dict(axis=axis, kind=kind, order=order))
    if axis is None:
        a, axis = tf.ravel(a), 0
    kth = payload(kth) if isinstance(kth, Tensor) else kth
    return tf.take_along_axis(a, np.argpartition(a._data, kth, axis=axis, kind=kind),
                              axis=axis)


@_numpy_version(np.sort_complex)
def _sort_complex(a: ArrayLike) -> Tensor:
    a = _arr(a)
    s = tf.take_along_axis(a, np.argsort(a._data, axis=-1, kind="stable"), axis=-1)
    return s if s.dtype.kind == "c" else tf.astype(s, np.complex128)


@_numpy_version(np.trim_zeros)
def _trim_zeros(filt: ArrayLike, trim: str = "fb", axis: _Axis = None) -> Tensor:
    filt = _arr(filt)
    trim = trim.lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ShapeError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = range(filt.ndim) if axis is None else normalize_axis_tuple(axis, filt.ndim)
    nz = filt._data != 0
    key = [slice(None)] * filt.ndim
    for ax in axes:
        hit = np.flatnonzero(nz.any(axis=tuple(i for i in range(filt.ndim) if i != ax)))
        if hit.size == 0:
            key = [slice(0, 0) if i in axes else slice(None) for i in range(filt.ndim)]
            break
        key[ax] = slice(hit[0] if "f" in trim else 0,
                        hit[-1] + 1 if "b" in trim else filt.shape[ax])
    return filt[tuple(key)]


@_numpy_version(np.copy)
def _copy(a: ArrayLike, order: str = "K", subok: bool = False) -> Tensor:
    return tf.asarray(_arr(a), copy=True)


@_numpy_version(np.astype)
def _astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True,
            device: str | None = None) -> Tensor:
    return tf.astype(_arr(x), dtype, copy=copy, device=device)


# ---- calculus and signals -------------------------------------------------------------------

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
            diff = tf.diff(d)
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
        return tf.reshape(v, (-1,) + (1,) * (f.ndim - axis - 1)) if isinstance(v, Tensor) \
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
    out = tf.concatenate([first, inner, last], axis=axis)
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
        xp = tf.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = tf.concatenate([fp[-1:], fp, fp[:1]])
    left = fp[0] if left is None else _cast(_farr(left), cdt)
    right = fp[-1] if right is None else _cast(_farr(right), cdt)
    px, pxp = x._data, xp._data
    n = pxp.shape[0]
    below, above = px < pxp[0], px > pxp[-1]
    if n == 1:
        return tf.where(below, left, tf.where(above, right, fp[0]))
    nan = np.isnan(px)
    if nan.any():       # NaN entries give NaN; keep them out of the segment arithmetic
        x = tf.where(nan, pxp[0], x)
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
    y = tf.where(bad, fp[knot], inside + np.where(bad, 0, fix))
    y = tf.where(below, left, tf.where(above, right, y))
    return tf.where(nan, np.nan, y) if nan.any() else y


def _full_convolution(a: Tensor, v: Tensor) -> Tensor:
    """c[k] = Σ_i a[i]·v[k−i] (1-d), as a matrix-vector product with the Toeplitz matrix
    of ``v`` gathered from v padded with one zero (so its derivative is a gather's)."""
    if a.shape[0] < v.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    k = np.arange(n + m - 1)[:, None] - np.arange(m)[None, :]
    idx = np.where((k >= 0) & (k < n), k, n)
    az = tf.concatenate([a, tf.zeros((1,), dtype=a.dtype)])
    return tf.matmul(az[idx], v)


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
    full = _full_convolution(a, tf.conj(tf.flip(v)))
    return _conv_crop(full, n, m, mode, swapped_end=n < m)


@_numpy_version(np.ediff1d)
def _ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
             to_begin: ArrayLike | None = None) -> Tensor:
    ary = tf.ravel(_arr(ary))

    def extra(e: ArrayLike) -> list[Tensor]:
        e = _arr(e)
        if not np.can_cast(e.dtype, ary.dtype, casting="same_kind"):
            raise TypeError("dtype of `to_begin` or `to_end` must be compatible with input "
                            "`ary` under the `same_kind` rule.")
        return [tf.ravel(_cast(e, ary.dtype))]

    parts = ((extra(to_begin) if to_begin is not None else []) + [ary[1:] - ary[:-1]]
             + (extra(to_end) if to_end is not None else []))
    return tf.concatenate(parts) if len(parts) > 1 else parts[0]


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
    a = tf.atan2(tf.imag(z), tf.real(z)) if z.dtype.kind == "c" \
        else tf.atan2(tf.zeros_like(z), z)
    return a * (180 / np.pi) if deg else a


@_numpy_version(np.real_if_close)
def _real_if_close(a: ArrayLike, tol: float = 100) -> Tensor:
    a = _arr(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    return tf.real(a) if np.all(np.abs(a._data.imag) < tol) else a


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
        re = tf.where(np.isfinite(x._data.real), tf.real(x), fixed.real)
        im = tf.where(np.isfinite(x._data.imag), tf.imag(x), fixed.imag)
        return re + 1j * im
    return tf.where(np.isfinite(x._data), x, fixed)


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
    safe = tf.where(small, 1.0, u)
    return tf.where(small, taylor, tf.sin(safe) / safe)


@_numpy_version(np.vander)
def _vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Tensor:
    """Columns 1, x, x·x, ... as a cumulative product (as NumPy computes them)."""
    x = _arr(x)
    if x.ndim != 1:
        raise ShapeError("x must be a one-dimensional array or sequence.")
    x = _cast(x, np.promote_types(x.dtype, int))
    n = x.shape[0] if N is None else N
    cols = [tf.ones((x.shape[0], min(n, 1)), dtype=x.dtype)]
    if n > 1:
        cols.append(tf.cumulative_prod(tf.broadcast_to(x[:, None], (x.shape[0], n - 1)),
                                       axis=1))
    v = tf.concatenate(cols, axis=1)
    return v if increasing else tf.flip(v, axis=1)


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
        y = tf.concatenate([y[:-1], tf.broadcast_to(stop, y.shape[1:])[None]])
    if axis != 0:
        y = tf.moveaxis(y, 0, axis)
    y = _cast(y, dtype)
    return (y, step) if retstep else y


@_numpy_version(np.logspace)
def _logspace(start: ArrayLike, stop: ArrayLike, num: SupportsIndex = 50, endpoint: bool = True,
              base: ArrayLike = 10.0, dtype: DTypeLike | None = None, axis: int = 0) -> Tensor:
    start, stop = _farr(start), _farr(stop)
    if not isinstance(base, (float, int)) and np.ndim(payload(base)):
        base = _farr(base)
        nd = max(start.ndim, stop.ndim, base.ndim)
        start, stop, base = (tf.reshape(t, (1,) * (nd - t.ndim) + t.shape)
                             for t in (start, stop, base))
        base = tf.expand_dims(base, axis=axis)
    y = _linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    return _cast(tf.pow(base, y), dtype)


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
    res = _logspace(tf.log(start) / np.log(10), tf.log(stop) / np.log(10), num=num,
                    endpoint=endpoint, base=10.0)
    shape = res.shape[1:]
    if num > 0:                                     # NumPy sets the endpoints exactly
        parts = [tf.broadcast_to(start, shape)[None], res[1:]]
        if num > 1 and endpoint:
            parts = [parts[0], res[1:-1], tf.broadcast_to(stop, shape)[None]]
        res = tf.concatenate(parts)
    res = res * sign
    if axis != 0:
        res = tf.moveaxis(res, 0, axis)
    return _cast(res, dtype)


# ---- polynomials (coefficient arrays, highest power first) 

def _poly_coeffs(p: ArrayLike) -> Tensor:
    p = _arr(p)
    return tf.reshape(p, (1,)) if p.ndim == 0 else p


@_numpy_version(np.polyval)
def _polyval(p: ArrayLike, x: ArrayLike) -> Tensor:
    """Horner's rule y = (...(p0·x + p1)·x + ...) + pN, as NumPy evaluates it."""
    p, x = _arr(p), _arr(x)
    y = tf.zeros_like(x)
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


def _poly_sum(a1: ArrayLike, a2: ArrayLike, sign: int) -> Tensor:
    a1, a2 = _poly_coeffs(a1), _poly_coeffs(a2)
    d = a2.shape[0] - a1.shape[0]
    if d > 0:
        a1 = tf.concatenate([tf.zeros((d,), dtype=a1.dtype), a1])
    elif d < 0:
        a2 = tf.concatenate([tf.zeros((-d,), dtype=a2.dtype), a2])
    return a1 + a2 if sign > 0 else a1 - a2


@_numpy_version(np.polyadd)
def _polyadd(a1: ArrayLike, a2: ArrayLike) -> Tensor:
    return _poly_sum(a1, a2, 1)


@_numpy_version(np.polysub)
def _polysub(a1: ArrayLike, a2: ArrayLike) -> Tensor:
    return _poly_sum(a1, a2, -1)


@_numpy_version(np.polymul)
def _polymul(a1: ArrayLike, a2: ArrayLike) -> Tensor:
    return _convolve(_poly_coeffs(a1), _poly_coeffs(a2))


@_numpy_version(np.polyder)
def _polyder(p: ArrayLike, m: int = 1) -> Tensor:
    m = int(m)
    if m < 0:
        raise ShapeError("Order of derivative must be positive (see polyint)")
    p = _arr(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = p[:-1] * np.arange(n, 0, -1)
    return p


@_numpy_version(np.polyint)
def _polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Tensor:
    m = int(m)
    if m < 0:
        raise ShapeError("Order of integral must be positive (see polyder)")
    k = tf.zeros((m,)) if k is None else _atleast(_farr(k), 1)
    if k.shape[0] == 1 and m > 1:
        k = tf.broadcast_to(k[0], (m,))
    if k.shape[0] < m:
        raise ShapeError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _arr(p)
    for i in range(m):
        p = tf.concatenate([p / np.arange(p.shape[0], 0, -1), k[i:i + 1]])
    return p


@_numpy_version(np.polydiv)
def _polydiv(u: ArrayLike, v: ArrayLike) -> tuple[Tensor, Tensor]:
    """Long division (NumPy's loop): u = q·v + r."""
    u, v = _farr(_poly_coeffs(u)), _farr(_poly_coeffs(v))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    rs = list(u)
    qs = []
    for k in range(max(m - n + 1, 0)):
        d = scale * rs[k]
        qs.append(d)
        for i in range(n + 1):
            rs[k + i] = rs[k + i] - d * v[i]
    q = tf.stack(qs) if qs else tf.zeros((1,), dtype=np.result_type(u.dtype, v.dtype))
    r = tf.stack(rs)
    while np.allclose(r._data[0], 0, rtol=1e-14) and r.shape[0] > 1:
        r = r[1:]
    return q, r


@_numpy_version(np.polyfit)
def _polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None,
             full: bool = False, w: ArrayLike | None = None, cov: bool | str = False) -> Any:
    """Least squares on the column-scaled Vandermonde matrix (NumPy's algorithm), through
    tf.linalg.lstsq: differentiable in x, y and w while the rank is constant."""
    order = int(deg) + 1
    x, y = _cast(_farr(x), np.float64) + 0.0, _cast(_farr(y), np.float64) + 0.0
    if cov:
        return _fallback(np.polyfit, (x, y, deg), dict(rcond=rcond, full=full, w=w, cov=cov))
    if deg < 0:
        raise ShapeError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs = _vander(x, order)
    rhs = y
    if w is not None:
        w = _farr(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = tf.sqrt(tf.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = tf.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=3)
    if full:
        return c, resids, rank, s, rcond
    return c


@_numpy_version(np.roots)
def _roots(p: ArrayLike) -> Tensor:
    """The eigenvalues of the companion matrix (NumPy's algorithm), through
    tf.linalg.eigvals: differentiable where the roots are simple."""
    p = _atleast(p, 1)
    if p.ndim != 1:
        raise ShapeError("Input must be a rank-1 array.")
    nz = np.flatnonzero(p._data)
    if nz.size == 0:
        return tf.zeros((0,))
    trailing = p.shape[0] - nz[-1] - 1
    p = _farr(p[int(nz[0]):int(nz[-1]) + 1])
    n = p.shape[0]
    if n > 1:
        rest = Tensor._wrap(np.eye(n - 2, n - 1, dtype=p.dtype))
        a = tf.concatenate([(-p[1:] / p[0])[None, :], rest], axis=0)
        roots = _eigvals(a)
    else:
        roots = tf.zeros((0,), dtype=p.dtype)
    if trailing:
        roots = tf.concatenate([roots, tf.zeros((trailing,), dtype=roots.dtype)])
    return roots


@_numpy_version(np.poly)
def _poly(seq_of_zeros: ArrayLike) -> Tensor | float:
    """The monic polynomial with these roots (or of this square matrix's eigenvalues): a
    product of linear factors by convolution; real if the roots are conjugate pairs."""
    z = _atleast(seq_of_zeros, 1)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = _eigvals(z)
    elif z.ndim == 1:
        z = floating(z)
    else:
        raise ShapeError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return 1.0
    a = tf.ones((1,), dtype=z.dtype)
    for k in range(z.shape[0]):
        a = _convolve(a, tf.stack([tf.ones((), dtype=z.dtype), -z[k]]))
    if a.dtype.kind == "c":
        r = z._data.astype(complex)
        if np.all(np.sort(r) == np.sort(r.conjugate())):
            a = tf.real(a)
    return a


# ---- functions calling the user's function (always composed: the function sees tensors) 

@_numpy_version(np.apply_along_axis, plain=False)
def _apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any,
                      **kwargs: Any) -> Tensor:
    arr = _arr(arr)
    axis = normalize_axis_index(axis, arr.ndim)
    moved = tf.moveaxis(arr, axis, -1)
    batch = moved.shape[:-1]
    if any(s == 0 for s in batch):
        raise ShapeError("Cannot apply_along_axis when any iteration dimensions are 0")
    outs = [_arr(func1d(moved[idx], *args, **kwargs)) for idx in np.ndindex(*batch)]
    res = tf.reshape(tf.stack(outs), batch + outs[0].shape)
    k = outs[0].ndim            # the function's output axes go where ``axis`` was
    perm = list(range(axis)) + list(range(len(batch), len(batch) + k)) + \
        list(range(axis, len(batch)))
    return tf.transpose(res, tuple(perm))


@_numpy_version(np.apply_over_axes, plain=False)
def _apply_over_axes(func: Callable[..., Any], a: ArrayLike, axes: int | Sequence[int]
                     ) -> Tensor:
    val = _arr(a)
    n = val.ndim
    for axis in np.atleast_1d(axes):
        axis = int(axis) + n if axis < 0 else int(axis)
        res = _arr(func(val, axis))
        if res.ndim != val.ndim:
            res = tf.expand_dims(res, axis=axis)
            if res.ndim != val.ndim:
                raise ShapeError("function is not returning an array of the correct shape")
        val = res
    return val


@_numpy_version(np.piecewise, plain=False)
def _piecewise(x: ArrayLike, condlist: Any, funclist: Sequence[Any], *args: Any,
               **kw: Any) -> Tensor:
    """y = 0, then on each condition's entries y = f(x[cond]) (later conditions win), as
    functional index updates: differentiable in x through each f."""
    x = _arr(x)
    if isinstance(condlist, (bool, np.bool_, Tensor)) or np.isscalar(condlist) or (
            not isinstance(condlist[0], (list, np.ndarray, Tensor)) and x.ndim != 0):
        condlist = [condlist]
    conds = [np.broadcast_to(np.asarray(_payload_of(c), dtype=bool), x.shape)
             for c in condlist]
    if len(conds) == len(funclist) - 1:
        conds.append(~np.any(conds, axis=0))
    elif len(conds) != len(funclist):
        raise ShapeError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    y = tf.zeros_like(x)
    for cond, func in zip(conds, funclist):
        if not callable(func):
            y = y.at[cond].set(_cast(_arr(func), x.dtype))
        elif cond.any():
            y = y.at[cond].set(_cast(_arr(func(x[cond], *args, **kw)), x.dtype))
    return y


# ---- counts with weights, histograms 
# Counts are piecewise constant in the data, but weighted counts are linear in the weights,
# density histograms divide by bin widths, and the bin edges of a histogram whose bins are
# given as a count are linspace(min(a), max(a)): differentiable in the data. So these are
# compositions: NumPy's counts and edges are the values; weights enter by a scatter-add
# into the bins NumPy assigns (searchsorted on NumPy's edges, the last edge closed, as
# NumPy bins), and data-dependent edges are recomputed with tf.min/tf.max.

@_numpy_version(np.bincount)
def _bincount(x: ArrayLike, /, weights: ArrayLike | None = None, minlength: int = 0) -> Tensor:
    xp = _payload_of(x)
    counts = np.bincount(xp, minlength=minlength)
    if weights is None:
        return as_tensor(counts)
    w = _cast(_farr(weights), np.float64)
    r: Tensor = tf.zeros(counts.shape).at[xp].add(w)
    return r


def _hist_edges(col: Tensor, np_edges: NDArray[Any], spec: Any, rng: Any) -> Tensor:
    """One dimension's edges: tracked explicit edges, linspace(min, max) of tracked data
    when the bins are a count or a rule and no range is given, else NumPy's constants."""
    if isinstance(spec, Tensor) and spec.ndim == 1:
        return _cast(_farr(spec), np_edges.dtype)
    if rng is None and np.ndim(payload(spec)) == 0 and _find_tracked(col) is not None \
            and col.size:
        lo, hi = tf.min(col), tf.max(col)
        if lo._data == hi._data:
            lo, hi = lo - 0.5, hi + 0.5
        return _cast(_linspace(lo, hi, np_edges.shape[0]), np_edges.dtype)
    return Tensor._wrap(np_edges)


def _bin_index(xp: NDArray[Any], edges: NDArray[Any]) -> NDArray[np.intp]:
    """NumPy's bin of each value (−1 outside, the last edge in the last bin)."""
    n = edges.shape[0] - 1
    idx = np.searchsorted(edges, xp, side="right") - 1
    idx[xp == edges[-1]] = n - 1
    idx[(idx < 0) | (idx >= n)] = -1
    return idx


def _histogram_nd(cols: Sequence[Tensor], hist_np: NDArray[Any], edges_np: Sequence[NDArray[Any]],
                  specs: Sequence[Any], ranges: Sequence[Any], density: bool | None,
                  weights: ArrayLike | None) -> tuple[Tensor, list[Tensor]]:
    edges = [_hist_edges(c, e, s, r) for c, e, s, r in zip(cols, edges_np, specs, ranges)]
    if weights is not None and _find_tracked(weights) is not None:
        idx = [_bin_index(c._data, e) for c, e in zip(cols, edges_np)]
        keep = np.logical_and.reduce([i >= 0 for i in idx])
        flat = np.ravel_multi_index([i[keep] for i in idx], hist_np.shape)
        w = tf.ravel(_farr(weights))[keep]
        hist = tf.reshape(tf.zeros((hist_np.size,), dtype=hist_np.dtype).at[flat].add(
            _cast(w, hist_np.dtype)), hist_np.shape)
    else:
        hist = as_tensor(hist_np)
    if density:
        hist = _cast(hist, np.result_type(hist.dtype, float)) / tf.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[i] = -1
            hist = hist / tf.reshape(tf.diff(e), tuple(shape))
    return hist, edges


@_numpy_version(np.histogram)
def _histogram(a: ArrayLike, bins: Any = 10, range: Any = None, density: bool | None = None,
               weights: ArrayLike | None = None) -> tuple[Tensor, Tensor]:
    a = tf.ravel(_farr(a))
    bp = _payload_of(bins) if not isinstance(bins, str) else bins
    wp = None if weights is None else _payload_of(weights)
    hist_np, edges_np = np.histogram(a._data, bp, range, weights=wp)
    hist, (edges,) = _histogram_nd([a], hist_np, [edges_np], [bins], [range], density,
                                   weights)
    return hist, edges


@_numpy_version(np.histogram_bin_edges)
def _histogram_bin_edges(a: ArrayLike, bins: Any = 10, range: Any = None,
                         weights: ArrayLike | None = None) -> Tensor:
    a = tf.ravel(_farr(a))
    bp = _payload_of(bins) if not isinstance(bins, str) else bins
    wp = None if weights is None else _payload_of(weights)
    return _hist_edges(a, np.histogram_bin_edges(a._data, bp, range, wp), bins, range)


@_numpy_version(np.histogramdd)
def _histogramdd(sample: Any, bins: Any = 10, range: Any = None,
                 density: bool | None = None, weights: ArrayLike | None = None
                 ) -> tuple[Tensor, list[Tensor]]:
    s = _farr(sample)
    if not (isinstance(sample, (Tensor, np.ndarray)) and s.ndim == 2):
        s = _atleast(s, 2).T                      # NumPy: a sequence of 1-d arrays
    d = s.shape[1]
    cols = [s[:, i] for i in builtins.range(d)]
    specs = list(bins) if isinstance(bins, (list, tuple, np.ndarray, Tensor)) else [bins] * d
    bp: Any = [b if isinstance(b, str) else _payload_of(b) for b in specs] \
        if len(specs) == d else _payload_of(bins)
    wp = None if weights is None else _payload_of(weights)
    hist_np, edges_np = np.histogramdd(s._data, bp, range, weights=wp)
    ranges = [None] * d if range is None else list(range)
    return _histogram_nd(cols, hist_np, edges_np, specs, ranges, density, weights)


@_numpy_version(np.histogram2d)
def _histogram2d(x: ArrayLike, y: ArrayLike, bins: Any = 10, range: Any = None,
                 density: bool | None = None, weights: ArrayLike | None = None
                 ) -> tuple[Tensor, Tensor, Tensor]:
    n = 1 if np.ndim(payload(bins)) == 0 else len(bins)
    if n != 1 and n != 2:
        bins = [bins, bins]
    hist, edges = _histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


@_numpy_version(np.heaviside)
def _heaviside(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    """0 for x1 < 0, 1 for x1 > 0, x2 where x1 = 0 (differentiable in x2 there), NaN for NaN."""
    _ufunc_kwargs(np.heaviside, kwargs)
    x1, x2 = _real_ufunc_input(np.heaviside, x1, x2)
    dt = np.result_type(x1.dtype, x2.dtype)
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    p = np.broadcast_to(x1._data, shape)
    step = np.where(np.isnan(p), np.nan, (p > 0).astype(dt))
    return tf.where(p == 0, tf.broadcast_to(_cast(x2, dt), shape), step)


# ---- NumPy's ufuncs outside the array API 
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
    return tf.abs(_real_ufunc_input(np.fabs, x)[0])


@_numpy_version(np.exp2)
def _exp2(x: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.exp2, kwargs)
    return tf.exp(_farr(x) * math.log(2.0))


@_numpy_version(np.cbrt)
def _cbrt(x: ArrayLike, /, **kwargs: Any) -> Tensor:
    """sign(x)·|x|^(1/3) (sign piecewise constant); the derivative is infinite at 0."""
    _ufunc_kwargs(np.cbrt, kwargs)
    x, = _real_ufunc_input(np.cbrt, x)
    sgn: NDArray[Any] = np.sign(x._data)
    return tf.pow(x * sgn, 1.0 / 3.0) * sgn


@_numpy_version(np.logaddexp2)
def _logaddexp2(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.logaddexp2, kwargs)
    x1, x2 = _real_ufunc_input(np.logaddexp2, x1, x2)
    ln2 = math.log(2.0)
    return tf.logaddexp(x1 * ln2, x2 * ln2) / ln2


@_numpy_version(np.float_power)
def _float_power(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    _ufunc_kwargs(np.float_power, kwargs)
    x1, x2 = _arr(x1), _arr(x2)
    dt = np.result_type(x1.dtype, x2.dtype, np.float64)
    return tf.pow(_cast(x1, dt), _cast(x2, dt))


def _fmax_fmin(ufunc: np.ufunc, pick: str) -> None:
    def f(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
        """maximum/minimum that ignores a NaN in either input (the other value wins)."""
        _ufunc_kwargs(ufunc, kwargs)
        x1, x2 = _arr(x1), _arr(x2)
        r: Tensor = getattr(tf, pick)(x1, x2)
        n1, n2 = np.isnan(x1._data), np.isnan(x2._data)
        if n1.any() or n2.any():
            r = tf.where(n2 & ~n1, x1, tf.where(n1, x2, r))
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
    return as_tensor(q), _linearized(r, (1, x1), (-q, x2))


@_numpy_version(np.modf)
def _modf(x: ArrayLike, /, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """(x − trunc(x), trunc(x)): the integral part is piecewise constant."""
    _ufunc_kwargs(np.modf, kwargs)
    x, = _real_ufunc_input(np.modf, x)
    frac, whole = np.modf(x._data)
    return _linearized(frac, (1, x)), as_tensor(whole)


@_numpy_version(np.frexp)
def _frexp(x: ArrayLike, /, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """(m, e) with x = m·2^e: m = x·2^(−e) (e piecewise constant, an int32 tensor)."""
    _ufunc_kwargs(np.frexp, kwargs)
    x, = _real_ufunc_input(np.frexp, x)
    m, e = np.frexp(x._data)
    return _linearized(m, (np.ldexp(np.ones((), x.dtype), -e), x)), as_tensor(e)


@_numpy_version(np.ldexp)
def _ldexp(x1: ArrayLike, x2: ArrayLike, /, **kwargs: Any) -> Tensor:
    """x1·2^x2 for integer x2: linear in x1."""
    _ufunc_kwargs(np.ldexp, kwargs)
    x1, = _real_ufunc_input(np.ldexp, x1)
    n = _payload_of(x2)
    return _linearized(np.ldexp(x1._data, n), (np.ldexp(np.ones((), x1.dtype), n), x1))


# ---- sets whose values are a gather of the inputs 
# union1d, setdiff1d and setxor1d keep each value an entry of an input, and a small change
# of the inputs keeps the same entries (generically), so their derivative is a gather.
# intersect1d is left without one: its values are entries equal in both inputs, and any
# change that separates them removes them — there is no derivative to give.

@_numpy_version(np.union1d)
def _union1d(ar1: ArrayLike, ar2: ArrayLike) -> Tensor:
    # np.unique of a tensor dispatches to tenferro's (a Tensor; the stubs say ndarray)
    return np.unique(  # type: ignore[return-value]
        tf.concatenate([tf.ravel(_arr(ar1)), tf.ravel(_arr(ar2))]))


@_numpy_version(np.setdiff1d)
def _setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Tensor:
    # np.unique of a tensor dispatches to tenferro's (a Tensor; the stubs say ndarray)
    u: Tensor = (tf.ravel(_arr(ar1)) if assume_unique  # type: ignore[assignment]
                 else np.unique(_arr(ar1)))
    return u[~np.isin(u._data, _payload_of(ar2))]


@_numpy_version(np.setxor1d)
def _setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Tensor:
    a, b = _arr(ar1), _arr(ar2)
    if not assume_unique:
        a, b = np.unique(a), np.unique(b)  # type: ignore[assignment]  # tensors (dispatch)
    aux = tf.concatenate([tf.ravel(a), tf.ravel(b)])
    aux = tf.take(aux, np.argsort(aux._data, kind="stable"))
    if aux.size == 0:
        return aux
    flag = np.concatenate(([True], aux._data[1:] != aux._data[:-1], [True]))
    return aux[flag[1:] & flag[:-1]]


# ---- functions that write into their first argument 

def _writes_into(np_fn: _NpFn, hint: str) -> None:
    name = _qualname(np_fn)

    def f(dst: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(dst, Tensor):
            raise TypeError(f"{name} writes into its first argument, and tensors are not "
                            f"written in place (their values may be saved for a backward "
                            f"pass): {hint}")
        return _on_payloads(np_fn, name, False, (dst,) + args, kwargs)

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    if not _taken(np_fn):
        register(f, functions=(np_fn,))
        INPLACE.append(np_fn)


_writes_into(np.copyto, "use tf.where(mask, src, dst) and the returned tensor")
_writes_into(np.put, "use t.at[idx].set(v) on the flattened tensor (tf.ravel(t))")
_writes_into(np.place, "use t.at[mask].set(v)")
_writes_into(np.putmask, "use tf.where(mask, values, t)")
_writes_into(np.fill_diagonal, "use t.at[i, i].set(v) with i = np.arange(n)")
_writes_into(np.put_along_axis, "use t.at[...].set(v) with the index arrays")


# ---- creation functions called with like=tensor (NEP 35) 

def _like(np_fn: _NpFn) -> None:
    name = _qualname(np_fn)

    def f(*args: Any, **kwargs: Any) -> Any:
        return _tensors(_on_payloads(np_fn, name, False, args, kwargs))

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}_like"
    if not _taken(np_fn):
        register(f, functions=(np_fn,))
        LIKE.append(np_fn)


LIKE: list[Any] = []
for _name in ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
              "require", "arange", "empty", "zeros", "ones", "full", "eye", "identity", "tri",
              "fromfunction", "fromiter", "frombuffer", "fromstring", "fromfile", "loadtxt",
              "genfromtxt"):
    _like(getattr(np, _name))


# ---- payload functions (group 2 of the module docstring) 

# shapes, dtypes and other properties of the inputs
_INSPECTION = ("shape", "ndim", "size", "iscomplexobj", "isrealobj", "iscomplex", "isreal",
               "isscalar", "result_type", "can_cast", "min_scalar_type", "may_share_memory",
               "shares_memory", "isfortran", "common_type")
# predicates and comparisons of values
_PREDICATES = ("allclose", "isclose", "array_equal", "array_equiv", "isneginf", "isposinf",
               "isnan", "isinf", "isfinite", "signbit", "isin", "isnat")
# integer-valued results: indices, counts, bins
_INDICES = ("argmax", "argmin", "nanargmax", "nanargmin", "argsort", "argwhere", "nonzero",
            "flatnonzero", "count_nonzero", "searchsorted", "digitize", "lexsort",
            "argpartition", "packbits", "unpackbits", "ravel_multi_index", "unravel_index",
            "diag_indices_from", "tril_indices_from", "triu_indices_from", "ix_",
            "einsum_path")
# piecewise constant: the derivative is zero wherever it exists
_PIECEWISE_CONSTANT = ("round", "around", "rint", "floor", "ceil", "trunc", "fix",
                       "floor_divide", "spacing")
# integer arithmetic and bits, dates and times
_INTEGER = ("gcd", "lcm", "bitwise_count", "left_shift", "right_shift", "is_busday",
            "busday_count", "busday_offset", "datetime_as_string")
# text and files: writing values out is not computing with them
_OUTPUT = ("array2string", "array_repr", "array_str", "save", "savetxt", "savez",
           "savez_compressed")

PAYLOAD = [getattr(np, n) for n in _INSPECTION + _PREDICATES + _INDICES + _PIECEWISE_CONSTANT
           + _INTEGER + _OUTPUT if hasattr(np, n)] + [np.linalg.matrix_rank]
register_nondiff(*(f for f in PAYLOAD if f not in registry.UFUNCS
                   and f not in registry.FUNCTIONS))
