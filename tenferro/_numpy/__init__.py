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

A function registered elsewhere is never registered again here (this package is imported
after the op modules, linalg and fft, and only claims what is still free), so the op
modules' own registrations win. ``python scripts/numpy_coverage.py --list`` prints which
NumPy function is in which group.

**Compositions (group 1).** Each is a few tenferro ops mirroring NumPy's own algorithm.
When no input carries a derivative, most of them (``_numpy_version(..., plain=True)``)
return NumPy's own result on the payloads as Tensors, bit for bit; with a tracked input
the composition runs and agrees with NumPy to rounding. The families, one module each:

* products (``dots``): dot, vdot, inner, outer, kron, cross, linalg.multi_dot, matvec,
  vecmat;
* linalg with NumPy's signatures and result types (``linalg_results``: ``SVDResult(U, S,
  Vh)`` with ``full_matrices=True`` by default, ``EighResult``, ``EigResult``, ``QRResult``;
  eig and eigvals give real arrays when every eigenvalue is real, as NumPy does): svd (also
  ``hermitian=True``, through eigh as NumPy), svdvals, eigh, eigvalsh, eig, eigvals, qr,
  cholesky (``upper``), cond, tensorinv, tensorsolve;
* statistics (``statistics``): average, cov, corrcoef, ptp, median, percentile, quantile
  (methods linear, lower, higher, nearest, midpoint, hazen, weibull, median_unbiased,
  normal_unbiased, interpolated_inverted_cdf, averaged_inverted_cdf: the order statistics
  are a differentiable sort, the interpolation weight is differentiable in q), the
  nan-functions (nansum, nanprod, nanmean, nanvar, nanstd, nanmax, nanmin, nancumsum,
  nancumprod, nanmedian, nanpercentile, nanquantile: the NaNs are masked with tf.where, so
  their entries get a zero gradient), and ``where=``/``initial=`` of
  np.sum/prod/mean/var/std/max/min;
* rearrangements, i.e. gathers (``rearrangements``): atleast_1d/2d/3d, hstack, vstack,
  dstack, column_stack, block, split, array_split, hsplit, vsplit, dsplit, append, insert,
  delete, pad (modes constant, edge, reflect, symmetric, wrap), resize, rot90, rollaxis,
  diagflat, compress, extract, choose, select, partition, sort_complex, trim_zeros, copy,
  astype. Most run NumPy's own function on an array of positions ("codes") and gather the
  tensor's entries at the positions it returns, which gives NumPy's exact semantics
  (argument checks, broadcasting, negative indices) with a gather's derivative;
* calculus and signals (``calculus``): trapezoid, gradient (a coordinate array that requires
  grad always takes the non-uniform formula: it equals the uniform one in value on a uniform
  grid but also carries the derivative with respect to each coordinate), interp
  (differentiable in x — the slope —, xp and fp; the segment index is piecewise constant),
  convolve, correlate, diff-like ediff1d, unwrap (the added multiples of the period are
  piecewise constant), angle, real_if_close, nan_to_num, sinc, vander, linspace, logspace,
  geomspace;
* polynomials (``polynomials``): polyval, polyadd, polysub, polymul, polyder, polyint,
  polydiv, polyfit (not ``cov=``), roots (eigvals of the companion matrix), poly;
* higher order (``user_functions``): apply_along_axis, apply_over_axes, piecewise call the
  user's function on tensors (so it must be written with NumPy functions or tensor
  operators);
* NumPy's ufuncs outside the array API (``ufuncs``, also heaviside): deg2rad/radians,
  rad2deg/degrees, fabs, exp2, cbrt, logaddexp2, float_power, fmax, fmin (a NaN input gives
  the other value), and the piecewise-linear fmod, divmod, modf, frexp, ldexp: NumPy's exact
  value plus the linearisation (the quotient, integral part, exponent are piecewise
  constant);
* values that are entries of the inputs (``set_gathers``): union1d, setdiff1d, setxor1d
  (gathers);
* counts with weights (``histograms``): bincount, histogram, histogram_bin_edges,
  histogram2d, histogramdd. Counts are piecewise constant (NumPy's own, constant tensors),
  but weighted counts are linear in the weights (a scatter-add into NumPy's bins), density
  histograms divide by bin widths, and the edges of bins given as a count are linspace(min,
  max) of the data: so a histogram of tracked data is differentiable in all of these;
* heaviside(x1, x2): piecewise constant in x1, but x2 where x1 = 0.

Options outside these (a quantile ``weights=``, ``np.linalg.qr(mode="raw")``, pad's
statistics modes, ...) behave like group 3: NumPy's result for plain values,
UnsupportedADError naming the function and option for tracked ones. np.i0 (its derivative
needs the Bessel function I1, a scipy.special op) and np.intersect1d (its values are
entries equal in both inputs; any change that separates them removes them, so it has no
derivative) are group 3 by decision.

**Payload functions (group 2, ``payload``)** — NumPy's result is exact and has no derivative:

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
# The families register their NumPy functions in this order; the op modules, linalg and
# fft registered theirs before (imported first), and a function registered elsewhere is
# never registered again here.
from .. import fft as _fft, linalg as _linalg  # noqa: F401  (their NumPy spellings first)
from . import (plumbing, dots, linalg_results, statistics, rearrangements,  # noqa: F401
               calculus, polynomials, user_functions, histograms, ufuncs, set_gathers,
               payload)
# what other modules, scripts and tests read here
from .plumbing import (CLAIMED as CLAIMED, ELSEWHERE as ELSEWHERE, INPLACE as INPLACE,
                       conversion_error as conversion_error)
from .payload import LIKE as LIKE, PAYLOAD as PAYLOAD

__all__: list[str] = []
