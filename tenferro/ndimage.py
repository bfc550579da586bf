"""tf.ndimage: linear filters and linear interpolation with scipy.ndimage's names,
differentiable (reverse, forward, second order; real and complex where SciPy takes complex).

A filter is "extend the input past its edges by the boundary mode, then correlate with the
weights". Both steps are tenferro ops, so the derivatives come by composition:

* The extension along an axis is a gather ``x_pad = P x (+ cval on the constant pad)``:
  output position p reads input index ``s(p)``, with (n the length, SciPy's mode names)

  - reflect (``d c b a | a b c d | d c b a``):  p mod 2n, folded: ``2n - 1 - i`` past n;
  - mirror (``d c b | a b c d | c b a``):  p mod (2n - 2), folded: ``2n - 2 - i`` past n;
  - nearest (``a a a | a b c d | d d d``):  p clipped to [0, n - 1];
  - wrap (``a b c d | a b c d | a b c d``):  p mod n;
  - constant (``k k k | a b c d | k k k``, k = cval):  no source; the constant's
    derivative in x is 0.

  The adjoint of a gather is the scatter-add ``Pᵀ``: each padded cotangent entry is added
  back onto the input entry it was read from, i.e. the cotangent of the pad is *folded*
  back by the same reflection (reflect, mirror), piled onto the edge (nearest), wrapped
  (wrap) or dropped (constant). Reflect, mirror and nearest read some entries twice, so the
  extension, and the filter, is not self-adjoint (``Pᵀ P ≠ I``). ``tf.take``'s VJP is that
  scatter-add, and tests/test_ndimage.py checks ``⟨F x, w⟩ = ⟨x, F* w⟩`` against the
  dense matrix of SciPy's filter for every mode.
* The correlation ``out[i] = Σ_j conj(w[j]) x_pad[i + j]`` (SciPy conjugates complex
  weights in correlate, not in convolve) is the valid-mode convolution of x_pad with the
  flipped weights, ``tf.signal``'s bilinear op: derivatives in the input and the weights.

Filters with constant real 1-D weights (``uniform_filter``, ``gaussian_filter``, and
``correlate1d``/``convolve1d`` given weights that are not a Tensor) take a faster road with
the same derivatives: one op, ``ndimage.separable``, whose primal is SciPy's compiled
``correlate1d`` per axis and whose VJP, op ``ndimage.separable_adjoint``, is the full
convolution of the cotangent with the weights, folded back by the extension's sources as
above (the comment at the op). Weights that are Tensors (differentiable) go through the
gather and ``signal.conv``.

``uniform_filter`` and ``gaussian_filter`` are separable: one 1-D correlation per axis with
the box ``1/size`` or the sampled Gaussian (normalized to sum 1, radius
``int(truncate·sigma + 0.5)``; ``order = k`` multiplies it by the polynomial ``q_k`` of
``dᵏ/dxᵏ exp(-x²/2σ²) = q_k(x) exp(-x²/2σ²)``, ``q_{k+1} = q_k' - x q_k/σ²``). sigma, size,
truncate and the mode are parameters (no derivative).

``map_coordinates(input, coordinates, order=1)`` interpolates linearly between the
``2^d`` grid neighbours of each point: piecewise linear in the coordinates, with
derivative the difference of neighbours (the one-sided slope of the cell the point is in;
at a grid point the cell above it, as ``floor`` picks), and linear in the input.
"""
from __future__ import annotations

from typing import Any, Sequence, TypeAlias

from numpy.typing import ArrayLike, NDArray

import functools
import math
import operator

import numpy as np
import scipy.ndimage as _nd

from ._engine import apply1
from ._errors import ShapeError, UnsupportedADError
from ._tensor import Tensor
from ._ops import _docs
from ._ops._util import floating, to_tensor
from ._ops.elementwise import floor, where
from ._ops.manipulation import flip, take
from ._ops.registry import defop
from ._ops.structure import reshape
from .signal import convolve as _sig_convolve


# ---- the filters' shared arguments and errors, described once (``_docs.shared`` fills
# a bare name in a docstring's Parameters or Raises from here)
_DOCS = {
    "axes": ("int or sequence of int, optional", "The axes to filter along. Default None: all."),
    "axis": ("int, optional", "The axis to filter along. Default -1."),
    "cval": ("float, optional", "The value past the edges in 'constant' mode. Default 0.0."),
    "input": ("array_like", "The input, real or complex, dimension >= 1, non-empty "
                            "(differentiable)."),
    "mode": ("{'reflect', 'constant', 'nearest', 'mirror', 'wrap'}, optional",
             "How the input is extended past its edges (SciPy's modes and their 'grid-' "
             "aliases). Default 'reflect'."),
    "modes": ("str or sequence of str, optional",
              "How the input is extended past its edges, per axis or one for all (SciPy's "
              "modes). Default 'reflect'."),
    "origin": ("int or sequence of int, optional",
               "The filter's shift, per axis or one for all. Default 0."),
    "output": ("None, optional", "Only None (the result is returned); an array raises "
                                 "UnsupportedADError. Default None."),
    "truncate": ("float, optional", "The kernel is cut at truncate standard deviations. Default "
                                    "4.0."),
    "weights": ("array_like", "The filter, of the input's dimension (or of len(axes)) "
                              "(differentiable)."),
}
_RAISES = {
    "ShapeError": "If the input is 0-d or empty, an axis, mode, size or origin is invalid.",
    "UnsupportedADError": "If ``output`` is given.",
}
# the Gaussian filters also check their kernel's parameters
_RAISES_GAUSS = dict(_RAISES, ShapeError="If the input is 0-d or empty, an axis, mode, size "
                                         "or origin is invalid, or sigma, order, truncate or "
                                         "radius is negative.")

__all__ = ["correlate", "convolve", "correlate1d", "convolve1d", "uniform_filter",
           "uniform_filter1d", "gaussian_filter", "gaussian_filter1d", "map_coordinates"]

# SciPy's filter modes, and the aliases that mean the same for filters
_MODES = {"reflect": "reflect", "grid-mirror": "reflect", "mirror": "mirror",
          "nearest": "nearest", "wrap": "wrap", "grid-wrap": "wrap", "constant": "constant",
          "grid-constant": "constant"}


# ---- arguments --------------------------------------------------------------------------------

def _input(x_in: ArrayLike, name: str, output: object = None) -> Tensor:
    """The input as a floating tensor, dimension >= 1 and non-empty; ``output`` (SciPy's
    array to write into) must be None (checked after the input, as the filters did)."""
    x: Tensor = floating(to_tensor(x_in))
    if x._data.ndim == 0:
        raise ShapeError(f"{name}: the input is 0-d; reshape it to (1,)")
    if x._data.size == 0:
        raise ShapeError(f"{name}: the input is empty (shape {x._data.shape})")
    if output is not None:
        raise UnsupportedADError(f"{name}: output= (writing into an array) is not supported; "
                                 "use the returned tensor")
    return x


def _mode(mode: object, name: str) -> str:
    if not (isinstance(mode, str) and mode in _MODES):
        raise ShapeError(f"{name}: mode must be one of 'reflect', 'constant', 'nearest', "
                         f"'mirror', 'wrap' (or their 'grid-' aliases), got {mode!r}")
    return _MODES[mode]


def _int(v: Any, name: str, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise ShapeError(f"{name}: {what} must be an int, got {v!r}") from None


def _axes(axes: int | Sequence[int] | None, nd: int, name: str) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(nd))
    seq = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    out = []
    for v in seq:
        k = _int(v, name, "axes entry")
        if not -nd <= k < nd:
            raise ShapeError(f"{name}: axis {k} is out of bounds for an input of dimension "
                             f"{nd}")
        out.append(k % nd)
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: repeated axis in axes={axes!r}")
    return tuple(out)


def _per_axis(v: Any, n: int, name: str, what: str) -> list[Any]:
    """A scalar for every axis, or one value per axis."""
    if np.ndim(v) == 0:
        return [v] * n
    seq = list(v)
    if len(seq) != n:
        raise ShapeError(f"{name}: {what} has {len(seq)} entries for {n} axes; give one "
                         "per filtered axis or a scalar")
    return seq


def _origin(origin: Any, size: int, name: str) -> int:
    o = _int(origin, name, "origin")
    if not 0 <= size // 2 + o < size:
        raise ShapeError(f"{name}: origin {o} is invalid for a filter of size {size}; it must "
                         f"satisfy -(size // 2) <= origin <= (size - 1) // 2")
    return o


# ---- the boundary extension (a gather) ----------------------------------------------------------

def _sources(n: int, lo: int, hi: int, mode: str) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """For the padded positions p = -lo .. n + hi - 1: the input index each reads (0 where
    it reads none) and whether it reads one (False only on a constant pad)."""
    p = np.arange(-lo, n + hi)
    inside = (p >= 0) & (p < n)
    if mode == "reflect":
        i = np.mod(p, 2 * n)
        i = np.where(i >= n, 2 * n - 1 - i, i)
    elif mode == "mirror":
        if n == 1:
            i = np.zeros_like(p)
        else:
            i = np.mod(p, 2 * n - 2)
            i = np.where(i >= n, 2 * n - 2 - i, i)
    elif mode == "nearest":
        i = np.clip(p, 0, n - 1)
    elif mode == "wrap":
        i = np.mod(p, n)
    else:   # constant
        i = np.where(inside, p, 0)
        return i.astype(np.intp), inside
    return i.astype(np.intp), np.ones(p.shape, dtype=bool)


def _pad(x: Tensor, axis: int, lo: int, hi: int, mode: str, cval: float) -> Tensor:
    """``x`` extended by lo entries before and hi after along ``axis`` (module docstring)."""
    if lo == 0 and hi == 0:
        return x
    n = x._data.shape[axis]
    idx, reads = _sources(n, lo, hi, mode)
    out: Tensor = take(x, idx, axis=axis)
    if not reads.all():
        shape = [1] * x._data.ndim
        shape[axis] = idx.shape[0]
        out = where(reads.reshape(shape), out,
                    np.asarray(cval, dtype=x._data.dtype))
    return out


def _raw_correlate(x: Tensor, v: Any, axes: Sequence[int], origins: Sequence[int], mode: str,
                   cval: float) -> Tensor:
    """``out[i] = Σ_j v[j] x_pad[i + j - (K//2 + origin)]`` along ``axes`` (v has x's
    dimension, size 1 along the other axes): pad, then the valid convolution with flip(v)."""
    vt = to_tensor(v)
    padded = x
    for ax, o in zip(axes, origins):
        k = vt._data.shape[ax]
        lo = k // 2 + o
        padded = _pad(padded, ax, lo, k - 1 - lo, mode, cval)
    out: Tensor = _sig_convolve(padded, flip(vt, axis=tuple(range(vt._data.ndim))), "valid")
    return out


# ---- the separable filter op (constant real 1-D weights) ---------------------------------------
#
# uniform_filter, gaussian_filter and correlate1d/convolve1d with constant real weights run
# as ONE op, ``ndimage.separable``, whose primal is SciPy's own compiled correlate1d per axis
# (the same values as scipy.ndimage, at its speed: the gather + conv composition above costs
# 5-10x more). A stage is (axis, weights, origin, mode); the op's ctx is (stages, cval).
# The filter is affine, ``F x = L x + F(0)`` (F(0) ≠ 0 only for mode constant with cval ≠ 0),
# so the tangent is ``L ẋ`` (the op with cval 0) and the cotangent ``Lᵀ ȳ``, op
# ``ndimage.separable_adjoint``: the stages in reverse order, each the full convolution of
# the cotangent with the weights (the cotangent of the extended input, computed by
# correlate1d in mode constant on the cotangent padded with K - 1 zeros) folded back onto
# the input by the extension's sources (:func:`_sources`: the reflection for reflect and
# mirror, the edge for nearest, the period for wrap, nothing for constant). The two ops are
# each other's transposes, so every order of derivative is one of them again.

_Stage: TypeAlias = "tuple[int, NDArray[np.float64], int, str]"
_Sep: TypeAlias = "tuple[tuple[_Stage, ...], float]"


def _sep_np(x: NDArray[Any], ctx: _Sep) -> NDArray[Any]:
    stages, cval = ctx
    out = x
    for ax, w, o, mode in stages:
        out = _nd.correlate1d(out, w, axis=ax, mode=mode, cval=cval, origin=o)
    return out


@functools.lru_cache(maxsize=512)
def _fold_plan(n: int, lo: int, hi: int, mode: str
               ) -> tuple[tuple[NDArray[np.intp], NDArray[np.intp]], ...]:
    """The fold of the extension's cotangent: groups of (padded positions, input indices
    they read), the indices distinct within a group, so that each group is one fancy-index
    add ``out[dst] += pbar[pos]`` (positions counted from the padded start). Reflect and
    mirror pads longer than the input read an index more than once: more groups."""
    if mode == "constant":
        return ()
    src, _ = _sources(n, lo, hi, mode)
    groups: list[tuple[list[int], list[int]]] = []
    for q in [*range(lo), *range(lo + n, lo + n + hi)]:
        for pos, dst in groups:
            if src[q] not in dst:
                pos.append(q)
                dst.append(int(src[q]))
                break
        else:
            groups.append(([q], [int(src[q])]))
    return tuple((np.array(p, dtype=np.intp), np.array(d, dtype=np.intp)) for p, d in groups)


def _sep_adjoint_np(g: NDArray[Any], ctx: _Sep) -> NDArray[Any]:
    stages = ctx[0]
    for ax, w, o, mode in reversed(stages):
        k = w.shape[0]
        gm = np.moveaxis(g, ax, 0)
        n = gm.shape[0]
        lo = k // 2 + o
        padded = np.zeros((n + k - 1,) + gm.shape[1:], dtype=g.dtype)
        padded[:n] = gm
        # pbar[q] = Σ_i g[i] w[q - i], q < n + k - 1: the cotangent of the extended input
        pbar = _nd.correlate1d(padded, w[::-1], axis=0, mode="constant", cval=0.0,
                               origin=k - 1 - k // 2)
        out = pbar[lo:lo + n]
        for pos, dst in _fold_plan(n, lo, k - 1 - lo, mode):
            out[dst] += pbar[pos]
        g = np.moveaxis(out, 0, ax)
    return g


def _linear(ctx: _Sep) -> _Sep:
    return (ctx[0], 0.0)


def _sep(x: Any, ctx: _Sep) -> Any:
    if isinstance(x, Tensor):
        t: Tensor = apply1(_sep_op, (x,), _sep_np(x._data, ctx), ctx)
        return t
    return _sep_np(x, ctx)


def _sep_adjoint(g: Any, ctx: _Sep) -> Any:
    if isinstance(g, Tensor):
        t: Tensor = apply1(_sep_adjoint_op, (g,), _sep_adjoint_np(g._data, ctx), ctx)
        return t
    return _sep_adjoint_np(g, ctx)


_sep_op = defop("ndimage.separable",
                lambda ctx, needs, gs, xs, ys: (_sep_adjoint(gs[0], ctx),),
                lambda ctx, ts, xs, ys: (_sep(ts[0], _linear(ctx)),),
                doc="y = L x + F(0), L the 1-D correlations along the axes (SciPy's "
                    "correlate1d); VJP Lᵀ ȳ (ndimage.separable_adjoint), JVP L ẋ")
_sep_adjoint_op = defop("ndimage.separable_adjoint",
                        lambda ctx, needs, gs, xs, ys: (_sep(gs[0], _linear(ctx)),),
                        lambda ctx, ts, xs, ys: (_sep_adjoint(ts[0], ctx),),
                        doc="Lᵀ g of ndimage.separable (full convolution per axis, the "
                            "extension's cotangent folded back); VJP L ḡ, JVP Lᵀ ġ")
_sep_op.replay = lambda ctx: lambda x: _sep_np(x, ctx)   # (tf.compile)
_sep_adjoint_op.replay = lambda ctx: lambda g: _sep_adjoint_np(g, ctx)


def _separable_filter(x: Tensor, stages: Sequence[_Stage], cval: float) -> Tensor:
    """The stages' correlations on x as one op (x unchanged when there are none)."""
    if not stages:
        return x
    out: Tensor = _sep(x, (tuple(stages), float(cval)))
    return out


def _nd_weights(x: Tensor, weights: ArrayLike, axes: tuple[int, ...], name: str) -> Tensor:
    w: Tensor = floating(to_tensor(weights))
    nd = x._data.ndim
    if w._data.ndim != len(axes):
        raise ShapeError(f"{name}: weights of dimension {w._data.ndim} for an input filtered "
                         f"along {len(axes)} axes; they must match")
    if w._data.size == 0:
        raise ShapeError(f"{name}: the weights are empty")
    if len(axes) != nd:   # size 1 along the axes that are not filtered; the weights'
        shape = [1] * nd   # dimensions go with the axes in increasing order, as in SciPy
        for k, a in enumerate(sorted(axes)):
            shape[a] = w._data.shape[k]
        w = reshape(w, tuple(shape))
    return w


def _nd_args(input: ArrayLike, weights: ArrayLike, output: None, mode: object,
             axes: int | Sequence[int] | None, name: str
             ) -> tuple[Tensor, tuple[int, ...], Tensor, str]:
    """correlate's and convolve's arguments checked: the input, the axes in increasing
    order (SciPy's order for the weights), the weights shaped for them, the mode."""
    x = _input(input, name, output)
    ax = tuple(sorted(_axes(axes, x._data.ndim, name)))
    return x, ax, _nd_weights(x, weights, ax, name), _mode(mode, name)


@_docs.shared(_DOCS, _RAISES)
def correlate(input: ArrayLike, weights: ArrayLike, output: None = None, mode: str = "reflect",
              cval: float = 0.0, origin: int | Sequence[int] = 0, *,
              axes: int | Sequence[int] | None = None) -> Tensor:
    """n-D correlation ``out[i] = Σ_j conj(w[j]) x[i + j - (K//2 + origin)]`` with the input
    extended by ``mode`` (scipy.ndimage.correlate). Differentiable in the input and the
    weights; the VJP in the input folds the cotangent of the extension back (module
    docstring).

    Parameters
    ----------
    input, weights, output, mode, cval, origin, axes

    Returns
    -------
    Tensor
        The correlation, the input's shape.

    Raises
    ------
    ShapeError
        If the input is 0-d or empty, an axis, mode, size or origin is invalid, or the
        weights do not match.
    UnsupportedADError

    Notes
    -----
    Derivative: bilinear in the input and the weights (docs/rules.md, convolution and
    lfilter: a gather for the boundary extension, whose adjoint folds the cotangent
    back, then ``signal.conv``).

    Examples
    --------
    >>> x = tf.tensor([0.0, 0.0, 4.0, 0.0, 0.0])
    >>> tf.ndimage.correlate(x, [1.0, 2.0, 3.0])
    tensor([ 0., 12.,  8.,  4.,  0.])
    """
    name = "correlate"
    x, ax, w, m = _nd_args(input, weights, output, mode, axes, name)
    origins = [_origin(o, w._data.shape[a], name)
               for o, a in zip(_per_axis(origin, len(ax), name, "origin"), ax)]
    wc = w.conj() if w._data.dtype.kind == "c" else w
    return _raw_correlate(x, wc, ax, origins, m, cval)


@_docs.shared(_DOCS, _RAISES)
def convolve(input: ArrayLike, weights: ArrayLike, output: None = None, mode: str = "reflect",
             cval: float = 0.0, origin: int | Sequence[int] = 0, *,
             axes: int | Sequence[int] | None = None) -> Tensor:
    """n-D convolution (scipy.ndimage.convolve): :func:`correlate` with the flipped,
    unconjugated weights and the origin ``-origin - 1`` along even-sized axes (``-origin``
    along odd ones), as SciPy defines it.

    Parameters
    ----------
    input, weights, output, mode, cval, origin, axes

    Returns
    -------
    Tensor
        The convolution, the input's shape.

    Raises
    ------
    ShapeError
        If the input is 0-d or empty, an axis, mode, size or origin is invalid, or the
        weights do not match.
    UnsupportedADError

    Notes
    -----
    Derivative: bilinear in the input and the weights (docs/rules.md, convolution and
    lfilter: a gather for the boundary extension, whose adjoint folds the cotangent
    back, then ``signal.conv``).

    Examples
    --------
    >>> tf.ndimage.convolve([0.0, 0.0, 4.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    tensor([ 0.,  4.,  8., 12.,  0.])
    """
    name = "convolve"
    x, ax, w, m = _nd_args(input, weights, output, mode, axes, name)
    origins = []
    for o, a in zip(_per_axis(origin, len(ax), name, "origin"), ax):
        k = w._data.shape[a]
        o2 = -_int(o, name, "origin") - (0 if k % 2 else 1)
        origins.append(_origin(o2, k, name))
    return _raw_correlate(x, flip(w, axis=ax), ax, origins, m, cval)


@_docs.shared(_DOCS, _RAISES)
def correlate1d(input: ArrayLike, weights: ArrayLike, axis: int = -1, output: None = None,
                mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Tensor:
    """1-D :func:`correlate` along ``axis`` (scipy.ndimage.correlate1d).

    Parameters
    ----------
    input
    weights : array_like
        The 1-D filter (differentiable).
    axis, output, mode, cval
    origin : int, optional
        The filter's shift. Default 0.

    Returns
    -------
    Tensor
        The correlation, the input's shape.

    Raises
    ------
    ShapeError, UnsupportedADError

    Notes
    -----
    Derivative: bilinear in the input and the weights (docs/rules.md, convolution and
    lfilter: a gather for the boundary extension, whose adjoint folds the cotangent
    back, then ``signal.conv``).

    Examples
    --------
    >>> tf.ndimage.correlate1d([0.0, 0.0, 4.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    tensor([ 0., 12.,  8.,  4.,  0.])
    """
    x = _input(input, "correlate1d")
    (ax,) = _axes(axis, x._data.ndim, "correlate1d")
    w = _constant_real_1d(weights)
    if w is None or output is not None:   # differentiable or complex weights, or errors
        return correlate(x, weights, output, mode, cval, origin, axes=ax)
    o = _origin(origin, w.shape[0], "correlate1d")
    return _separable_filter(x, [(ax, w, o, _mode(mode, "correlate1d"))], cval)


@_docs.shared(_DOCS, _RAISES)
def convolve1d(input: ArrayLike, weights: ArrayLike, axis: int = -1, output: None = None,
               mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Tensor:
    """1-D :func:`convolve` along ``axis`` (scipy.ndimage.convolve1d).

    Parameters
    ----------
    input
    weights : array_like
        The 1-D filter (differentiable).
    axis, output, mode, cval
    origin : int, optional
        The filter's shift. Default 0.

    Returns
    -------
    Tensor
        The convolution, the input's shape.

    Raises
    ------
    ShapeError, UnsupportedADError

    Notes
    -----
    Derivative: bilinear in the input and the weights (docs/rules.md, convolution and
    lfilter: a gather for the boundary extension, whose adjoint folds the cotangent
    back, then ``signal.conv``).

    Examples
    --------
    >>> tf.ndimage.convolve1d([0.0, 0.0, 4.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    tensor([ 0.,  4.,  8., 12.,  0.])
    """
    x = _input(input, "convolve1d")
    (ax,) = _axes(axis, x._data.ndim, "convolve1d")
    w = _constant_real_1d(weights)
    if w is None or output is not None:   # differentiable or complex weights, or errors
        return convolve(x, weights, output, mode, cval, origin, axes=ax)
    k = w.shape[0]   # correlate with the flipped weights, SciPy's origin shift
    o = _origin(-_int(origin, "convolve1d", "origin") - (0 if k % 2 else 1), k, "convolve1d")
    return _separable_filter(x, [(ax, w[::-1].copy(), o, _mode(mode, "convolve1d"))], cval)


def _constant_real_1d(weights: ArrayLike) -> NDArray[np.float64] | None:
    """The weights as a float64 array when they are constant (not a Tensor: a Tensor may
    require grad, or be traced by tf.compile), real and a non-empty 1-D list; else None
    (the general path, which also raises the errors)."""
    if isinstance(weights, Tensor):
        return None
    try:
        w = np.asarray(weights)
    except (TypeError, ValueError):
        return None
    if w.ndim != 1 or w.size == 0 or w.dtype.kind not in "biuf":
        return None
    return w.astype(np.float64)


# ---- uniform and Gaussian filters -------------------------------------------------------------

@_docs.shared(_DOCS, _RAISES)
def uniform_filter1d(input: ArrayLike, size: int, axis: int = -1, output: None = None,
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Tensor:
    """The mean over a window of ``size`` along ``axis`` (scipy.ndimage.uniform_filter1d).

    Parameters
    ----------
    input
    size : int
        The window length, >= 1.
    axis, output, mode, cval
    origin : int, optional
        The filter's shift. Default 0.

    Returns
    -------
    Tensor
        The filtered input, its shape.

    Raises
    ------
    ShapeError, UnsupportedADError

    Notes
    -----
    Derivative: linear in the input; the VJP is the transposed filter (docs/rules.md,
    convolution and lfilter: a gather for the boundary extension, whose adjoint folds
    the cotangent back, then ``signal.conv``).

    Examples
    --------
    >>> tf.ndimage.uniform_filter1d([0.0, 0.0, 3.0, 0.0, 0.0], 3)
    tensor([0., 1., 1., 1., 0.])
    """
    x = _input(input, "uniform_filter1d")
    (ax,) = _axes(axis, x._data.ndim, "uniform_filter1d")
    return uniform_filter(x, size, output, mode, cval, origin, axes=ax)


@_docs.shared(_DOCS, _RAISES)
def uniform_filter(input: ArrayLike, size: int | Sequence[int] = 3, output: None = None,
                   mode: str | Sequence[str] = "reflect", cval: float = 0.0,
                   origin: int | Sequence[int] = 0, *,
                   axes: int | Sequence[int] | None = None) -> Tensor:
    """The mean over a box of ``size`` (per axis or one for all) with the input extended
    by ``mode`` (scipy.ndimage.uniform_filter): one 1-D box correlation per axis.
    Differentiable in the input (linear; the VJP is the transposed filter: the box
    correlation of the cotangent, folded back by the mode).

    Parameters
    ----------
    input
    size : int or sequence of int, optional
        The box size, per axis or one for all, >= 1. Default 3.
    output, modes, cval, origin, axes

    Returns
    -------
    Tensor
        The filtered input, its shape.

    Raises
    ------
    ShapeError, UnsupportedADError

    Notes
    -----
    Derivative: linear in the input; the VJP is the transposed filter (docs/rules.md,
    convolution and lfilter: a gather for the boundary extension, whose adjoint folds
    the cotangent back, then ``signal.conv``).

    Examples
    --------
    >>> tf.ndimage.uniform_filter([[0.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 0.0]], 3)
    tensor([[1., 1., 1.],
            [1., 1., 1.],
            [1., 1., 1.]])
    """
    name = "uniform_filter"
    x = _input(input, name, output)
    ax = _axes(axes, x._data.ndim, name)
    sizes = [_int(s, name, "size") for s in _per_axis(size, len(ax), name, "size")]
    modes = [_mode(m, name) for m in _per_axis(mode, len(ax), name, "mode")] \
        if not isinstance(mode, str) else [_mode(mode, name)] * len(ax)
    origins = _per_axis(origin, len(ax), name, "origin")
    stages: list[_Stage] = []
    for a, s, m, o in zip(ax, sizes, modes, origins):
        if s < 1:
            raise ShapeError(f"{name}: size must be >= 1, got {s}")
        if s == 1:
            continue   # the identity, as in SciPy
        stages.append((a, np.full(s, 1.0 / s), _origin(o, s, name), m))
    return _separable_filter(x, stages, cval)


def _gaussian_kernel(sigma: float, order: int, radius: int) -> NDArray[np.float64]:
    """The sampled, normalized Gaussian on [-radius, radius] times the polynomial of its
    order-th derivative (module docstring)."""
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    s2 = sigma * sigma
    phi = np.exp(-0.5 / s2 * x ** 2)   # (SciPy's order of operations: the same bits)
    phi /= phi.sum()
    if order == 0:
        return phi
    q = np.zeros(order + 1)   # coefficients of q_k in powers of x
    q[0] = 1.0
    for _ in range(order):   # q_{k+1} = q_k' - x q_k / σ²
        dq = np.zeros_like(q)
        dq[:-1] = q[1:] * np.arange(1, order + 1)
        xq = np.zeros_like(q)
        xq[1:] = q[:-1]
        q = dq - xq / s2
    poly = (x[:, None] ** np.arange(order + 1)) @ q
    return poly * phi


@_docs.shared(_DOCS, _RAISES_GAUSS)
def gaussian_filter1d(input: ArrayLike, sigma: float, axis: int = -1, order: int = 0,
                      output: None = None, mode: str = "reflect", cval: float = 0.0,
                      truncate: float = 4.0, *, radius: int | None = None) -> Tensor:
    """1-D Gaussian filter (scipy.ndimage.gaussian_filter1d); see :func:`gaussian_filter`.

    Parameters
    ----------
    input
    sigma : float
        The standard deviation, >= 0.
    axis
    order : int, optional
        The derivative order of the Gaussian, >= 0. Default 0.
    output, mode, cval, truncate
    radius : int, optional
        The kernel's radius; overrides truncate. Default None.

    Returns
    -------
    Tensor
        The filtered input, its shape.

    Raises
    ------
    ShapeError
    UnsupportedADError

    Notes
    -----
    Derivative: linear in the input; the VJP is the transposed filter (docs/rules.md,
    convolution and lfilter: a gather for the boundary extension, whose adjoint folds
    the cotangent back, then ``signal.conv``).

    Examples
    --------
    >>> tf.ndimage.gaussian_filter1d([0.0, 0.0, 4.0, 0.0, 0.0], 1.0)
    tensor([0.2336..., 0.9684..., 1.5957..., 0.9684..., 0.2336...])
    """
    x = _input(input, "gaussian_filter1d")
    (ax,) = _axes(axis, x._data.ndim, "gaussian_filter1d")
    return gaussian_filter(x, sigma, order, output, mode, cval, truncate, radius=radius,
                           axes=ax)


@_docs.shared(_DOCS, _RAISES_GAUSS)
def gaussian_filter(input: ArrayLike, sigma: float | Sequence[float], order: int | Sequence[int] = 0,
                    output: None = None, mode: str | Sequence[str] = "reflect",
                    cval: float = 0.0, truncate: float = 4.0, *,
                    radius: int | Sequence[int] | None = None,
                    axes: int | Sequence[int] | None = None) -> Tensor:
    """Gaussian filter of standard deviation ``sigma`` (per axis or one for all), or its
    ``order``-th derivative, the kernel cut at ``radius = int(truncate·sigma + 0.5)``
    (scipy.ndimage.gaussian_filter): one 1-D correlation per axis; sigma 0 leaves an axis
    alone, as in SciPy. Differentiable in the input (the VJP is the transposed filter with
    the mode's folding). sigma, order, truncate, radius are parameters; a negative sigma
    or order raises ShapeError.

    Parameters
    ----------
    input
    sigma : float or sequence of float
        The standard deviation, per axis or one for all, >= 0 (0: the axis is left
        alone).
    order : int or sequence of int, optional
        The derivative order of the Gaussian, per axis or one for all, >= 0. Default 0.
    output, modes, cval, truncate
    radius : int or sequence of int, optional
        The kernel's radius; overrides truncate. Default None.
    axes

    Returns
    -------
    Tensor
        The filtered input, its shape.

    Raises
    ------
    ShapeError
    UnsupportedADError

    Notes
    -----
    Derivative: linear in the input; the VJP is the transposed filter (docs/rules.md,
    convolution and lfilter: a gather for the boundary extension, whose adjoint folds
    the cotangent back, then ``signal.conv``).

    Examples
    --------
    >>> x = tf.tensor([0.0, 0.0, 4.0, 0.0, 0.0], requires_grad=True)
    >>> y = tf.ndimage.gaussian_filter(x, 1.0)
    >>> y.detach()
    tensor([0.2336..., 0.9684..., 1.5957..., 0.9684..., 0.2336...])
    >>> tf.grad([y.sum()], [x])[0]
    tensor([1., 1., 1., 1., 1.])
    """
    name = "gaussian_filter"
    x = _input(input, name, output)
    ax = _axes(axes, x._data.ndim, name)
    sigmas = [float(s) for s in _per_axis(sigma, len(ax), name, "sigma")]
    orders = [_int(o, name, "order") for o in _per_axis(order, len(ax), name, "order")]
    modes = [_mode(mode, name)] * len(ax) if isinstance(mode, str) else \
        [_mode(m, name) for m in _per_axis(mode, len(ax), name, "mode")]
    radii = _per_axis(radius, len(ax), name, "radius")
    if not (math.isfinite(truncate) and truncate >= 0):
        raise ShapeError(f"{name}: truncate must be a finite number >= 0, got {truncate!r}")
    stages: list[_Stage] = []
    for a, s, o, m, r in zip(ax, sigmas, orders, modes, radii):
        if not (math.isfinite(s) and s >= 0):
            raise ShapeError(f"{name}: sigma must be a finite number >= 0, got {s!r}")
        if o < 0:
            raise ShapeError(f"{name}: order must be >= 0, got {o}")
        if s <= 1e-15:
            continue   # SciPy skips (near-)zero sigmas: the identity
        rad = int(truncate * s + 0.5) if r is None else _int(r, name, "radius")
        if rad < 0:
            raise ShapeError(f"{name}: radius must be >= 0, got {rad}")
        w = _gaussian_kernel(s, o, rad)[::-1].copy()   # SciPy correlates with it reversed
        stages.append((a, w, 0, m))
    return _separable_filter(x, stages, cval)


# the interpolation modes: SciPy's 'constant' gives cval outside [0, n-1] (grid-constant
# interpolates towards cval there); its legacy 'wrap' (which maps coordinates with period
# n - 1) is not implemented: 'grid-wrap' is the periodic extension
_INTERP_MODES = {"constant": "constant", "grid-constant": "constant", "nearest": "nearest",
                 "grid-wrap": "wrap", "reflect": "reflect",
                 "grid-mirror": "reflect", "mirror": "mirror"}


# ---- map_coordinates --------------------------------------------------------------------------

def map_coordinates(input: ArrayLike, coordinates: ArrayLike, output: None = None,
                    order: int = 1, mode: str = "constant", cval: float = 0.0,
                    prefilter: bool = True) -> Tensor:
    """Values of ``input`` at the points ``coordinates`` (shape ``(input.ndim, ...)``) by
    linear interpolation (scipy.ndimage.map_coordinates with ``order=1``; jax.scipy.ndimage
    has orders 0 and 1). Modes: 'constant' (SciPy's: cval at a point outside ``[0, n-1]``
    along some axis), 'grid-constant' (interpolates towards cval past the edge), 'nearest',
    'reflect'/'grid-mirror', 'mirror', 'grid-wrap'; SciPy's legacy 'wrap' raises
    ShapeError. Differentiable in the input (linear) and in the coordinates (piecewise
    linear: the slope of the cell the point is in, the cell above at a grid point);
    ``prefilter`` has no effect at order 1.

    Parameters
    ----------
    input : array_like
        The grid values, real or complex, dimension >= 1 (differentiable).
    coordinates : array_like
        The points, real, shape ``(input.ndim, ...)`` (differentiable).
    output : None, optional
        Only None (the result is returned). Default None.
    order : int, optional
        The spline order; only 1 (linear). Default 1.
    mode : str, optional
        The extension past the edges (above). Default 'constant'.
    cval : float, optional
        The value past the edges in the constant modes. Default 0.0.
    prefilter : bool, optional
        No effect at order 1. Default True.

    Returns
    -------
    Tensor
        The interpolated values, of shape ``coordinates.shape[1:]``.

    Raises
    ------
    ShapeError
        If the coordinates' shape or dtype or the mode is invalid (also 'wrap').
    UnsupportedADError
        If ``output`` is given or ``order != 1``.

    Notes
    -----
    Derivative: linear in the input (the VJP scatters the cotangent with the interpolation
    weights); in the coordinates the slope of the cell the point is in.

    Examples
    --------
    >>> img = tf.tensor([[0.0, 1.0], [2.0, 3.0]])
    >>> c = tf.tensor([[0.5], [0.5]], requires_grad=True)
    >>> tf.ndimage.map_coordinates(img, c).detach()
    tensor([1.5])
    >>> tf.grad([tf.ndimage.map_coordinates(img, c).sum()], [c])[0]
    tensor([[2.],
            [1.]])
    """
    name = "map_coordinates"
    x = _input(input, name, output)
    if _int(order, name, "order") != 1:
        raise UnsupportedADError(f"{name}: only order=1 (linear) is implemented, got "
                                 f"order={order}; splines of higher order are not")
    if mode == "wrap":
        raise ShapeError(f"{name}: mode='wrap' (SciPy's legacy interpolation wrap, period "
                         "n - 1) is not implemented; mode='grid-wrap' is the periodic one")
    if not (isinstance(mode, str) and mode in _INTERP_MODES):
        raise ShapeError(f"{name}: mode must be one of {sorted(_INTERP_MODES)}, got {mode!r}")
    m = _INTERP_MODES[mode]
    c: Tensor = floating(to_tensor(coordinates))
    nd = x._data.ndim
    if c._data.ndim < 1 or c._data.shape[0] != nd:
        raise ShapeError(f"{name}: coordinates must have shape (input.ndim, ...) = ({nd}, ...),"
                         f" got {c._data.shape}")
    if c._data.dtype.kind == "c":
        raise ShapeError(f"{name}: coordinates must be real, got {c._data.dtype}")
    pts = c._data.shape[1:]
    flat = reshape(c, (nd, -1))
    base = floor(flat).detach()
    frac = flat - base                       # in [0, 1): the derivative in the coordinates
    ib = base._data.astype(np.intp)
    result: Any = None
    for corner in range(2 ** nd):
        weight: Any = None
        valid = np.ones(ib.shape[1], dtype=bool)
        lin = np.zeros(ib.shape[1], dtype=np.intp)
        for d in range(nd):
            up = (corner >> d) & 1
            f = frac[d]
            wd = f if up else 1.0 - f
            weight = wd if weight is None else weight * wd
            idx = ib[d] + up
            n = x._data.shape[d]
            src, ok = _point_sources(idx, n, m)
            valid &= ok
            lin = lin * n + src
        vals = take(reshape(x, (-1,)), lin)
        if not valid.all():
            vals = where(valid, vals, np.asarray(cval, dtype=x._data.dtype))
        term = weight * vals
        result = term if result is None else result + term
    if mode == "constant":
        # SciPy's 'constant' for interpolation: a point beyond the edges by more than
        # rounding gets cval; within [-1, n] it interpolates with cval past the edge
        n_arr = np.array(x._data.shape, dtype=np.float64)[:, None]
        outside = ((flat._data < 0) | (flat._data > n_arr - 1)).any(axis=0)
        if outside.any():
            result = where(~outside, result, np.asarray(cval, dtype=x._data.dtype))
    out: Tensor = reshape(result, pts)
    return out


def _point_sources(idx: NDArray[np.intp], n: int, mode: str
                   ) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """Input index of grid index ``idx`` under the extension ``mode`` (as in _sources)."""
    inside = (idx >= 0) & (idx < n)
    if mode == "constant":
        return np.where(inside, idx, 0).astype(np.intp), inside
    if mode == "nearest":
        i = np.clip(idx, 0, n - 1)
    elif mode == "wrap":
        i = np.mod(idx, n)
    elif mode == "reflect":
        i = np.mod(idx, 2 * n)
        i = np.where(i >= n, 2 * n - 1 - i, i)
    else:   # mirror
        if n == 1:
            i = np.zeros_like(idx)
        else:
            i = np.mod(idx, 2 * n - 2)
            i = np.where(i >= n, 2 * n - 2 - i, i)
    return i.astype(np.intp), np.ones(idx.shape, dtype=bool)

