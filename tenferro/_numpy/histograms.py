"""NumPy's counts with weights on tensors: bincount and the histograms."""
import builtins
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._engine import note_escape
from .._ops import creation, reductions, structure
from .._ops._util import payload
from .._tensor import Tensor, _find_tracked, as_tensor
from .plumbing import _atleast, _cast, _farr, _numpy_version, _payload_of
from .calculus import _linspace

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
    r: Tensor = creation.zeros(counts.shape).at[xp].add(w)
    return r


def _hist_edges(col: Tensor, np_edges: NDArray[Any], spec: Any, rng: Any) -> Tensor:
    """One dimension's edges: tracked explicit edges, linspace(min, max) of tracked data
    when the bins are a count or a rule and no range is given, else NumPy's constants."""
    if isinstance(spec, Tensor) and spec.ndim == 1:
        return _cast(_farr(spec), np_edges.dtype)
    if rng is None and np.ndim(payload(spec)) == 0 and _find_tracked(col) is not None \
            and col.size:
        lo, hi = reductions.min(col), reductions.max(col)
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
    note_escape("histogram", cols)       # the bins and counts depend on the values
    edges = [_hist_edges(c, e, s, r) for c, e, s, r in zip(cols, edges_np, specs, ranges)]
    if weights is not None and _find_tracked(weights) is not None:
        idx = [_bin_index(c._data, e) for c, e in zip(cols, edges_np)]
        keep = np.logical_and.reduce([i >= 0 for i in idx])
        flat = np.ravel_multi_index([i[keep] for i in idx], hist_np.shape)
        w = structure.ravel(_farr(weights))[keep]
        hist = structure.reshape(creation.zeros((hist_np.size,), dtype=hist_np.dtype).at[flat].add(
            _cast(w, hist_np.dtype)), hist_np.shape)
    else:
        hist = as_tensor(hist_np)
    if density:
        hist = _cast(hist, np.result_type(hist.dtype, float)) / reductions.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[i] = -1
            hist = hist / structure.reshape(reductions.diff(e), tuple(shape))
    return hist, edges


@_numpy_version(np.histogram)
def _histogram(a: ArrayLike, bins: Any = 10, range: Any = None, density: bool | None = None,
               weights: ArrayLike | None = None) -> tuple[Tensor, Tensor]:
    a = structure.ravel(_farr(a))
    bp = _payload_of(bins) if not isinstance(bins, str) else bins
    wp = None if weights is None else _payload_of(weights)
    hist_np, edges_np = np.histogram(a._data, bp, range, weights=wp)
    hist, (edges,) = _histogram_nd([a], hist_np, [edges_np], [bins], [range], density,
                                   weights)
    return hist, edges


@_numpy_version(np.histogram_bin_edges)
def _histogram_bin_edges(a: ArrayLike, bins: Any = 10, range: Any = None,
                         weights: ArrayLike | None = None) -> Tensor:
    a = structure.ravel(_farr(a))
    bp = _payload_of(bins) if not isinstance(bins, str) else bins
    wp = None if weights is None else _payload_of(weights)
    note_escape("histogram_bin_edges", a)
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
