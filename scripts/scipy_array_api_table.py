"""Which SciPy array-API functions work with tenferro tensors (and PyTorch, JAX)?

    SCIPY_ARRAY_API=1 python scripts/scipy_array_api_table.py \
        [--backends numpy,torch,jax,tenferro] [--out docs/scipy_array_api.md] [--only REGEX]

For every public SciPy function that SciPy's own documentation lists as supporting
PyTorch on CPU (``scipy._lib._array_api.xp_capabilities_table`` read with the logic of
``scipy/_lib/_array_api_docs_tables.py``), the script

1. finds a valid call: the candidate argument lists of ``BUILDERS`` (or the module's
   defaults) are tried with NumPy inputs and the first that runs is kept;
2. runs the same call with torch tensors, JAX arrays (x64) and tenferro tensors (float64),
   and compares each result with NumPy's (same structure and shapes, allclose, the output
   is the backend's array type);
3. checks reverse-mode gradients (torch.autograd, jax.grad, tf.grad): loss = sum of the
   real parts of all floating outputs (those finite in NumPy's result), gradient w.r.t.
   every floating input against central finite differences of the same SciPy call with
   NumPy inputs, taken along three random directions per input.

Each (function, backend) runs in a worker process under an alarm; a worker that hangs is
killed and restarted, so one hang does not stop the table.  Cells: ``ok`` (values, and
the gradient where there is one), ``ok°`` (values; nothing to differentiate: no floating
input or output), ``value only: <why>`` (values right, gradient missing or wrong),
``fails: <why>``, ``n/a`` (SciPy does not document the backend).  PyTorch runs with
float64 as its default dtype (like NumPy for Python floats).  The "Gaps" section groups every tenferro cell that is not ``ok`` by cause
(``CAUSES`` below).  This is a reference script: torch and JAX are never tenferro
dependencies.
"""
import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # SciPy reads it once, at import

import argparse
import dataclasses
import importlib
import json
import multiprocessing as mp
import re
import signal
import sys
import time
import traceback
import types
import warnings
import zlib

import numpy as np

# --------------------------------------------------------------------------- which functions


def documented_functions():
    """[(qualified name, function, documented for jax)] for SciPy's torch-CPU functions.

    Same walk as SciPy's docs tables (PUBLIC_MODULES, ``__all__``, named function-like
    objects, aliases skipped); an object exported by two modules is listed once, under
    the first.
    """
    from scipy._lib._array_api import xp_capabilities_table
    from scipy._lib._array_api_docs_tables import (
        ALIASES, BackendSupportStatus, _process_capabilities_table_entry,
        is_named_function_like_object)
    try:
        from scipy._lib._public_api import PUBLIC_MODULES
    except ImportError:  # older SciPy
        from scipy._lib.tests.test_public_api import PUBLIC_MODULES
    yes = BackendSupportStatus.YES
    out, seen = [], set()
    for modname in PUBLIC_MODULES:
        try:
            mod = importlib.import_module(modname)
        except Exception:
            continue
        for name in getattr(mod, "__all__", ()):
            if name in ALIASES.get(modname, ()):
                continue
            fn = getattr(mod, name, None)
            if fn is None or not is_named_function_like_object(fn) or id(fn) in seen:
                continue
            entry = xp_capabilities_table.get(fn)
            if entry is None:
                continue
            cpu = _process_capabilities_table_entry(entry)["cpu"]
            if cpu["torch"] != yes:
                continue
            seen.add(id(fn))
            out.append((f"{modname}.{name}", fn, cpu["jax"] == yes))
    return out


# --------------------------------------------------------------------------- argument markers

class Const:
    """An array converted to the backend but never differentiated (labels, knots, Z...)."""
    def __init__(self, a):
        self.a = np.asarray(a)


class Part:
    """A differentiable array of which only the ``mask`` entries may move (the others are
    pinned by SciPy's input checks, e.g. the a0 = 1 column of ``sos``)."""
    def __init__(self, a, mask):
        self.a, self.mask = np.asarray(a, dtype=float), np.asarray(mask, dtype=bool)


class Fresh:
    """A stateful argument (a Generator, a QMC engine) rebuilt for every call."""
    def __init__(self, make):
        self.make = make


class _XP:
    """Stands for the backend's namespace (for ``xp=`` keywords)."""
    def __repr__(self):
        return "XP"


XP = _XP()


class XPFn:
    """An argument made from the backend's namespace: ``make(xp)`` (e.g. an ``rvs``)."""
    def __init__(self, make):
        self.make = make


def C(*args, **kwargs):
    return args, kwargs


def ns(x):
    """The array namespace of ``x`` (for the callables handed to SciPy)."""
    from scipy._lib._array_api import array_namespace
    return array_namespace(x)


class Rand:
    """Input factory for one function: deterministic per qualified name."""
    def __init__(self, key):
        self.rng = np.random.default_rng(zlib.crc32(key.encode()))

    def x(self, *shape):                       # normal
        return self.rng.standard_normal(shape)

    def u(self, *shape, lo=0.15, hi=0.85):     # inside (0, 1)
        return self.rng.uniform(lo, hi, shape)

    def pos(self, *shape, lo=0.5, hi=2.5):
        return self.rng.uniform(lo, hi, shape)

    def c(self, *shape):                       # complex normal
        return self.rng.standard_normal(shape) + 1j * self.rng.standard_normal(shape)

    def i(self, lo, hi, *shape):               # integers in [lo, hi)
        return self.rng.integers(lo, hi, shape)

    def sorted(self, n, lo=0.0, hi=1.0):       # well separated increasing points
        return np.sort(lo + (hi - lo) * (np.arange(n) + self.rng.uniform(0.2, 0.8, n)) / n)


# --------------------------------------------------------------------------- callables for SciPy

def _mean_stat(x, axis=-1):
    return ns(x).mean(x, axis=axis)


def _diff_means(x, y, axis=-1):
    xp = ns(x)
    return xp.mean(x, axis=axis) - xp.mean(y, axis=axis)


def _norm_cdf(x):
    import scipy.special
    return scipy.special.ndtr(x)


def _f_exp(x, c):            # smooth scalar function of x with a parameter
    return ns(x).exp(-c * x * x)


def _f_root(x, c):           # root at x = c ** (1/3)
    return x ** 3 - c


def _f_min(x, c):            # minimum at x = c
    return (x - c) ** 2 + 1.0


def _f_vec(x):               # R^2 -> R^2, shape (2, ...) -> (2, ...)
    xp = ns(x)
    return xp.stack([x[0] * x[1], xp.sin(x[0]) + x[1] ** 2])


def _f_scalar2(x):           # R^2 -> R
    return ns(x).sin(x[0]) * x[1] ** 2 + x[0] * x[1]


def _f_cub(x):               # cubature integrand: x shape (n, ndim) -> (n,)
    xp = ns(x)
    return xp.exp(-xp.sum(x * x, axis=-1))


def _f_qmc(x):               # qmc_quad integrand: x shape (d, n) -> (n,)
    xp = ns(x)
    return xp.exp(-xp.sum(x * x, axis=0))


def _rvs(xp):
    """An ``rvs`` returning the backend's arrays (the same numbers for every backend)."""
    def rvs(size):
        return xp.asarray(np.random.default_rng(1).standard_normal(size))
    return rvs


def _ttest_pvalue(x, axis=-1):
    import scipy.stats
    return scipy.stats.ttest_1samp(x, 0.0, axis=axis).pvalue


def _ndi_mean(x):
    return ns(x).mean(x)


def _ndi_shift_map(coords):
    return tuple(c - 0.3 for c in coords)


def _ndi_sum1d(iline, oline):
    oline[...] = iline[:-2] + 2 * iline[1:-1] + iline[2:]


def _ndi_deriv(input, axis, output, mode, cval):
    import scipy.ndimage
    return scipy.ndimage.sobel(input, axis, output, mode, cval)


def _ndi_deriv2(input, axis, output, mode, cval):
    import scipy.ndimage
    return scipy.ndimage.correlate1d(input, [1.0, -2.0, 1.0], axis, output, mode, cval)


# --------------------------------------------------------------------------- argument builders
# Each entry: list of candidate builders r -> (args, kwargs); the first that runs with
# NumPy inputs is used.  Plain float/complex ndarrays are differentiated; Const arrays,
# integer/bool arrays and Python scalars are not.

def _special_builders():
    """Candidates for the elementwise scipy.special functions from SciPy's own inventory."""
    try:
        from scipy.special._support_alternative_backends import _special_funcs
    except Exception:
        return {}
    ranges = [(0.2, 0.8), (1.2, 3.5), (0.6, 2.5), (-0.9, 0.9), (4.0, 9.0)]
    out = {}
    for info in _special_funcs:
        n, ints = info.n_args, info.int_only or (False,) * info.n_args
        pyint = info.python_int_only
        if isinstance(pyint, dict):
            pyint = pyint.get("torch")
        pyint = pyint or (False,) * n

        def cands(n=n, ints=ints, pyint=pyint):
            res = []
            for lo, hi in ranges:
                def b(r, lo=lo, hi=hi):
                    args = []
                    for j in range(n):
                        if pyint[j]:
                            args.append(3)
                        elif ints[j]:
                            args.append(np.arange(2 + 4 * j, 6 + 4 * j))
                        else:
                            args.append(r.u(4, lo=lo, hi=hi))
                    return tuple(args), {}
                res.append(b)
            return res
        out[f"scipy.special.{info.name}"] = cands()
    return out


B = {}   # qualified name -> [candidate builders]


def reg(names, *cands, module=""):
    for name in names.split():
        B[module + name] = list(cands)


# -- special (non-elementwise and special domains)
S = "scipy.special."
reg("logsumexp", lambda r: C(r.x(3, 4), axis=1, b=r.pos(3, 4)),
    lambda r: C(r.x(5)), module=S)
reg("softmax log_softmax", lambda r: C(r.x(3, 4), axis=1), module=S)
reg("multigammaln", lambda r: C(r.pos(4, lo=2.0, hi=4.0), 3), module=S)
reg("lpmv", lambda r: C(Const([0.0, 1.0, 2.0, 1.0]), r.pos(4, lo=1.5, hi=3.0), r.u(4, lo=-0.8, hi=0.8)),
    module=S)
reg("bdtr bdtrc bdtri", lambda r: C(np.array([1.5, 2.5, 0.5, 3.5]), np.arange(5, 9), r.u(4)), module=S)
reg("nbdtr nbdtrc nbdtri", lambda r: C(np.arange(1, 5), np.arange(3, 7), r.u(4)), module=S)
reg("polygamma", lambda r: C(2, r.pos(4)), lambda r: C(np.arange(0, 4), r.pos(4)), module=S)
reg("zeta", lambda r: C(r.pos(4, lo=1.5, hi=4.0), r.pos(4)), module=S)
reg("sinc", lambda r: C(r.x(5)), module=S)

# -- fft
F = "scipy.fft."
reg("fft ifft", lambda r: C(r.c(8)), module=F)
reg("fft2 ifft2 fftn ifftn", lambda r: C(r.c(4, 6)), module=F)
reg("rfft ihfft", lambda r: C(r.x(8)), module=F)
reg("irfft hfft", lambda r: C(r.c(5)), module=F)
reg("rfft2 rfftn ihfft2 ihfftn", lambda r: C(r.x(4, 6)), module=F)
reg("irfft2 irfftn hfft2 hfftn", lambda r: C(r.c(4, 4)), module=F)
reg("fftfreq rfftfreq", lambda r: C(8, 0.1, xp=XP), module=F)
reg("fftshift ifftshift", lambda r: C(r.x(3, 5)), module=F)
reg("dct idct dst idst", lambda r: C(r.x(8)), module=F)
reg("dctn idctn dstn idstn", lambda r: C(r.x(4, 5)), module=F)
reg("fht ifht", lambda r: C(r.pos(8), 0.1, 0.5), module=F)

# -- stats
T = "scipy.stats."
# odd sample sizes: a median of an even sample ties two distances |x - median| (fligner,
# levene), which finite differences would straddle
reg("alexandergovern bartlett f_oneway fligner kruskal levene",
    lambda r: C(r.x(7), r.x(9) + 0.3, r.x(11) * 1.5), module=T)
reg("friedmanchisquare", lambda r: C(r.x(9), r.x(9) + 0.3, r.x(9) * 1.5), module=T)
reg("ansari brunnermunzel chatterjeexi cramervonmises_2samp epps_singleton_2samp "
    "mannwhitneyu mood ttest_ind pearsonr spearmanrho ttest_rel zmap",
    lambda r: C(r.x(12), r.x(12) * 1.3 + 0.2), module=T)
reg("wilcoxon", lambda r: C(r.x(12), r.x(12) * 1.3 + 0.2), lambda r: C(r.x(12)), module=T)
reg("bootstrap", lambda r: C((r.x(10),), _mean_stat, n_resamples=99, vectorized=True,
                             rng=Fresh(lambda: np.random.default_rng(0))), module=T)
reg("permutation_test", lambda r: C((r.x(8), r.x(8) + 0.5), _diff_means, n_resamples=99,
                                    vectorized=True, rng=Fresh(lambda: np.random.default_rng(0))),
    module=T)
reg("monte_carlo_test", lambda r: C(r.x(10), XPFn(_rvs), _mean_stat, n_resamples=99,
                                    vectorized=True), module=T)
reg("power", lambda r: C(_ttest_pvalue, XPFn(_rvs), Const([10, 20]), n_resamples=50,
                         vectorized=True), module=T)
reg("boxcox_llf yeojohnson_llf", lambda r: C(0.7, r.pos(12)), lambda r: C(r.pos(3), r.pos(12)),
    module=T)
reg("chisquare power_divergence", lambda r: C(r.pos(6, lo=5.0, hi=15.0)), module=T)
reg("circmean circstd circvar describe differential_entropy iqr jarque_bera kurtosis kstat "
    "kstatvar lmoment median_abs_deviation normaltest rankdata sem sigmaclip skew skewtest "
    "kurtosistest tmax tmin tsem tstd tvar zscore", lambda r: C(r.x(24)), module=T)
reg("tmean", lambda r: C(r.x(24), limits=(-1.0, 1.0)), lambda r: C(r.x(24)), module=T)
reg("moment", lambda r: C(r.x(12), order=3), module=T)
reg("trim_mean", lambda r: C(r.x(20), 0.1), module=T)
reg("gmean hmean gstd gzscore variation", lambda r: C(r.pos(12)), module=T)
reg("pmean", lambda r: C(r.pos(12), 2.5), module=T)
reg("entropy", lambda r: C(r.pos(6), r.pos(6)), lambda r: C(r.pos(6)), module=T)
reg("combine_pvalues false_discovery_control", lambda r: C(r.u(6)), module=T)
reg("cramervonmises ks_1samp", lambda r: C(r.x(12), _norm_cdf), lambda r: C(r.x(12), "norm"),
    module=T)
reg("directional_stats", lambda r: C(r.x(10, 3) + np.array([2.0, 0.0, 0.0])), module=T)
reg("mode", lambda r: C(np.array([1, 3, 2, 3, 3, 1, 2, 5])), module=T)
reg("quantile", lambda r: C(r.x(15), r.u(3)), module=T)
reg("ttest_1samp", lambda r: C(r.x(12), 0.3), module=T)
reg("ttest_ind_from_stats", lambda r: C(r.x(3), r.pos(3), np.array([10, 12, 15]), r.x(3),
                                        r.pos(3), np.array([9, 11, 20])), module=T)

# -- signal and windows
G = "scipy.signal."
W = "scipy.signal.windows."
reg("boxcar triang parzen bohman blackman nuttall blackmanharris flattop bartlett barthann "
    "hamming cosine hann lanczos", lambda r: C(9, xp=XP), module=W)
reg("kaiser kaiser_bessel_derived", lambda r: C(8, 4.0, xp=XP), module=W)
reg("gaussian", lambda r: C(9, 2.5, xp=XP), module=W)
reg("general_gaussian", lambda r: C(9, 1.5, 2.0, xp=XP), module=W)
reg("general_cosine", lambda r: C(9, r.pos(3)), module=W)
reg("general_hamming", lambda r: C(9, 0.6, xp=XP), module=W)
reg("chebwin", lambda r: C(9, 60.0, xp=XP), module=W)
reg("exponential", lambda r: C(9, tau=3.0, xp=XP), module=W)
reg("tukey", lambda r: C(9, 0.4, xp=XP), module=W)
reg("taylor", lambda r: C(9, xp=XP), module=W)
reg("get_window", lambda r: C("hann", 9, xp=XP), module=W)

# -- ndimage
N = "scipy.ndimage."
_img = lambda r: r.x(7, 8)                                        # noqa: E731
_lab = lambda: np.array([[1, 1, 0, 2, 2, 2, 0, 3]] * 3 + [[0] * 8] + [[4, 4, 4, 0, 5, 5, 5, 5]] * 3)  # noqa: E731
_bin = lambda: np.array([[0, 1, 1, 0, 0, 1, 1, 0], [1, 1, 1, 0, 1, 1, 1, 1], [0, 1, 0, 0, 0, 1, 0, 1],  # noqa: E731
                         [0, 0, 0, 1, 1, 0, 0, 0], [1, 1, 0, 1, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1, 1, 1],
                         [1, 1, 0, 0, 0, 1, 0, 0]], dtype=bool)
reg("gaussian_filter gaussian_filter1d gaussian_gradient_magnitude gaussian_laplace",
    lambda r: C(_img(r), 1.2), module=N)
reg("laplace prewitt sobel spline_filter spline_filter1d", lambda r: C(_img(r)), module=N)
reg("uniform_filter maximum_filter minimum_filter median_filter grey_closing grey_dilation "
    "grey_erosion grey_opening black_tophat white_tophat morphological_gradient "
    "morphological_laplace", lambda r: C(_img(r), size=3), module=N)
reg("uniform_filter1d maximum_filter1d minimum_filter1d", lambda r: C(_img(r), 3), module=N)
reg("percentile_filter", lambda r: C(_img(r), 30, size=3), module=N)
reg("rank_filter", lambda r: C(_img(r), 2, size=3), module=N)
reg("convolve correlate", lambda r: C(_img(r), r.x(3, 3)), module=N)
reg("convolve1d correlate1d", lambda r: C(_img(r), r.x(3)), module=N)
reg("affine_transform", lambda r: C(_img(r), np.array([[0.9, 0.1], [-0.1, 1.1]]), order=1), module=N)
reg("map_coordinates", lambda r: C(_img(r), np.array([[1.2, 3.5, 4.4], [2.3, 0.7, 5.1]]), order=1),
    module=N)
reg("geometric_transform", lambda r: C(_img(r), _ndi_shift_map, order=1), module=N)
reg("rotate", lambda r: C(_img(r), 17.0, order=1, reshape=False), module=N)
reg("shift", lambda r: C(_img(r), np.array([0.3, -0.6]), order=1), lambda r: C(_img(r), 0.4), module=N)
reg("zoom", lambda r: C(_img(r), 1.5, order=1), module=N)
reg("fourier_ellipsoid fourier_uniform", lambda r: C(r.c(6, 8), 2.0), module=N)
reg("fourier_gaussian", lambda r: C(r.c(6, 8), 1.5), module=N)
reg("fourier_shift", lambda r: C(r.c(6, 8), np.array([0.4, 1.3])), lambda r: C(r.c(6, 8), 0.4),
    module=N)
reg("center_of_mass extrema maximum maximum_position mean median minimum minimum_position "
    "standard_deviation sum_labels variance", lambda r: C(r.pos(7, 8), _lab(), np.arange(1, 6)),
    module=N)
reg("histogram", lambda r: C(_img(r), -2.0, 2.0, 5), module=N)
reg("labeled_comprehension", lambda r: C(_img(r), _lab(), np.arange(1, 6), _ndi_mean, np.float64, 0.0),
    module=N)
reg("binary_closing binary_dilation binary_erosion binary_fill_holes binary_opening "
    "binary_propagation distance_transform_bf distance_transform_cdt distance_transform_edt label",
    lambda r: C(_bin()), module=N)
reg("binary_hit_or_miss", lambda r: C(_bin(), np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)), module=N)
reg("find_objects value_indices", lambda r: C(_lab()), module=N)
reg("iterate_structure", lambda r: C(np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool), 2), module=N)
reg("generic_filter", lambda r: C(_img(r), _ndi_mean, size=3), module=N)
reg("vectorized_filter", lambda r: C(_img(r), _mean_stat, size=3), module=N)
reg("generic_filter1d", lambda r: C(_img(r), _ndi_sum1d, 3), module=N)
reg("generic_gradient_magnitude", lambda r: C(_img(r), _ndi_deriv), module=N)
reg("generic_laplace", lambda r: C(_img(r), _ndi_deriv2), module=N)
reg("watershed_ift", lambda r: C(np.array(r.i(0, 200, 7, 8), dtype=np.uint8),
                                 np.array([[1] + [0] * 7] + [[0] * 8] * 5 + [[0] * 7 + [2]])), module=N)


# -- cluster
def _pts(r):
    return np.array([[0.0, 0.1], [0.4, 0.2], [2.0, 2.1], [2.3, 1.8], [5.0, 0.2], [5.4, 0.9]]) \
        + 0.05 * r.x(6, 2)


def _pdist(r):
    import scipy.spatial.distance
    return scipy.spatial.distance.pdist(_pts(r))


def _Z(r):
    import scipy.cluster.hierarchy as h
    return h.linkage(_pdist(r), "average")


def _R(r):
    import scipy.cluster.hierarchy as h
    return h.inconsistent(_Z(r))


H = "scipy.cluster.hierarchy."
reg("average centroid complete median single ward weighted", lambda r: C(_pdist(r)), module=H)
reg("linkage", lambda r: C(_pdist(r), "average"), module=H)
reg("cophenet", lambda r: C(Const(_Z(r)), _pdist(r)), module=H)
reg("correspond", lambda r: C(Const(_Z(r)), Const(_pdist(r))), module=H)
reg("dendrogram", lambda r: C(Const(_Z(r)), no_plot=True), module=H)
reg("fcluster", lambda r: C(Const(_Z(r)), 3, criterion="maxclust"), module=H)
reg("fclusterdata", lambda r: C(_pts(r), 3, criterion="maxclust"), module=H)
reg("from_mlab_linkage", lambda r: C(Const(__import__("scipy.cluster.hierarchy").cluster.hierarchy
                                           .to_mlab_linkage(_Z(r)))), module=H)
reg("inconsistent is_monotonic is_valid_linkage leaves_list maxdists num_obs_linkage "
    "to_mlab_linkage to_tree", lambda r: C(Const(_Z(r))), module=H)
reg("is_isomorphic", lambda r: C(np.array([1, 1, 2, 2, 3, 3]), np.array([2, 2, 1, 1, 3, 3])), module=H)
reg("is_valid_im", lambda r: C(Const(_R(r))), module=H)
reg("leaders", lambda r: C(Const(_Z(r)), np.array([1, 1, 2, 2, 3, 3], dtype=np.int32)), module=H)
reg("maxRstat", lambda r: C(Const(_Z(r)), Const(_R(r)), 3), module=H)
reg("maxinconsts", lambda r: C(Const(_Z(r)), Const(_R(r))), module=H)
reg("optimal_leaf_ordering", lambda r: C(Const(_Z(r)), Const(_pdist(r))), module=H)
V = "scipy.cluster.vq."
reg("whiten", lambda r: C(_pts(r)), module=V)
reg("vq", lambda r: C(_pts(r), np.array([[0.2, 0.1], [2.1, 2.0], [5.2, 0.5]])), module=V)
reg("kmeans", lambda r: C(_pts(r), np.array([[0.2, 0.1], [2.1, 2.0], [5.2, 0.5]])), module=V)
reg("kmeans2", lambda r: C(_pts(r), np.array([[0.2, 0.1], [2.1, 2.0], [5.2, 0.5]]), minit="matrix"),
    module=V)

# -- constants, linalg, optimize
reg("scipy.constants.convert_temperature", lambda r: C(r.x(4) * 20, "Celsius", "Kelvin"))
reg("scipy.constants.lambda2nu scipy.constants.nu2lambda", lambda r: C(r.pos(4)))
L = "scipy.linalg."
reg("block_diag", lambda r: C(r.x(2, 2), r.x(1, 3), r.x(2, 1)), module=L)
reg("fiedler", lambda r: C(r.x(4)), module=L)
reg("orthogonal_procrustes", lambda r: C(r.x(5, 3), r.x(5, 3)), module=L)
O = "scipy.optimize."
reg("rosen rosen_der rosen_hess", lambda r: C(r.x(4)), module=O)
reg("rosen_hess_prod", lambda r: C(r.x(4), r.x(4)), module=O)
E = "scipy.optimize.elementwise."
reg("find_root", lambda r: C(_f_root, (np.zeros(3), np.full(3, 3.0)), args=(r.pos(3),)), module=E)
reg("find_minimum", lambda r: C(_f_min, (np.full(3, -1.0), np.full(3, 0.2), np.full(3, 4.0)),
                                args=(r.u(3),)), module=E)
reg("bracket_root", lambda r: C(_f_root, np.full(3, 0.5), args=(r.pos(3),)), module=E)

# -- differentiate, integrate, interpolate
D = "scipy.differentiate."
reg("derivative", lambda r: C(_f_exp, r.x(3), args=(r.pos(3),)), module=D)
reg("jacobian", lambda r: C(_f_vec, r.x(2)), module=D)
reg("hessian", lambda r: C(_f_scalar2, r.x(2)), module=D)
I = "scipy.integrate."
reg("cubature", lambda r: C(_f_cub, r.x(2) * 0.3 - 1.0, r.pos(2)), module=I)
reg("cumulative_simpson", lambda r: C(r.x(9), x=r.sorted(9)), module=I)
reg("cumulative_trapezoid trapezoid", lambda r: C(r.x(9), r.sorted(9)), module=I)
reg("qmc_quad", lambda r: C(_f_qmc, r.x(2) * 0.3 - 1.0, r.pos(2), n_points=64,
                            qrng=Fresh(lambda: __import__("scipy.stats").stats.qmc.Halton(2, seed=0))),
    module=I)
reg("romb", lambda r: C(r.x(9), 0.25), module=I)
reg("tanhsinh", lambda r: C(_f_exp, r.x(3) - 1.0, r.pos(3), args=(r.pos(3),)), module=I)
P = "scipy.interpolate."
reg("generate_knots", lambda r: C(Const(r.sorted(12)), r.x(12), s=0.5), module=P)
reg("make_interp_spline", lambda r: C(r.sorted(8), r.x(8)), module=P)
reg("make_lsq_spline", lambda r: C(r.sorted(12), r.x(12),
                                   Const([0.0] * 4 + [0.35, 0.65] + [1.0] * 4)), module=P)
reg("make_smoothing_spline", lambda r: C(r.sorted(12), r.x(12)), module=P)
reg("make_splprep", lambda r: C([r.sorted(10), r.x(10)], s=0.1), module=P)
reg("make_splrep", lambda r: C(r.sorted(12), r.x(12), s=0.5), module=P)

# -- signal
_b = lambda r: np.array([0.2, 0.3, 0.15]) + 0.02 * r.x(3)        # noqa: E731
_a = lambda r: np.array([1.0, -0.5, 0.2]) + 0.02 * r.x(3)         # noqa: E731
_sos = lambda r: Part(np.array([[0.2, 0.3, 0.1, 1.0, -0.5, 0.2], [1.0, 0.4, 0.1, 1.0, 0.3, 0.4]])  # noqa: E731
                     + np.hstack([0.02 * r.x(2, 3), np.zeros((2, 1)), 0.02 * r.x(2, 2)]),
                     [[1, 1, 1, 0, 1, 1]] * 2)
_z = lambda r: np.array([-0.5 + 0.3j, -0.5 - 0.3j])               # noqa: E731
_p = lambda r: np.array([0.4 + 0.4j, 0.4 - 0.4j, 0.6])            # noqa: E731
# (not z = -0.5: lp2bs_zpk has a branch point sqrt(0) at bw / (2 z) = ±wo)
_zc = lambda r: np.array([-1.3, -0.6])                             # noqa: E731
_pc = lambda r: np.array([-0.4 + 0.6j, -0.4 - 0.6j, -0.8])       # noqa: E731
reg("abcd_normalize", lambda r: C(r.x(2, 2), r.x(2, 1), r.x(1, 2), r.x(1, 1)), module=G)
reg("bessel butter", lambda r: C(4, np.asarray(0.3)), module=G)
reg("cheby1", lambda r: C(4, 1.0, np.asarray(0.3)), module=G)
reg("cheby2", lambda r: C(4, 30.0, np.asarray(0.3)), module=G)
reg("ellip", lambda r: C(4, 1.0, 30.0, np.asarray(0.3)), module=G)
reg("iirfilter", lambda r: C(4, np.array([0.2, 0.4]), rp=1.0, rs=30.0, ftype="ellip"), module=G)
reg("iirdesign", lambda r: C(np.asarray(0.2), np.asarray(0.3), 1.0, 40.0), module=G)
reg("buttord cheb1ord cheb2ord ellipord", lambda r: C(np.asarray(0.2), np.asarray(0.3), 3.0, 40.0),
    module=G)
reg("besselap buttap", lambda r: C(4, xp=XP), module=G)
reg("cheb1ap", lambda r: C(4, 1.0, xp=XP), module=G)
reg("cheb2ap", lambda r: C(4, 30.0, xp=XP), module=G)
reg("ellipap", lambda r: C(4, 1.0, 30.0, xp=XP), module=G)
reg("iirnotch iirpeak iircomb", lambda r: C(0.2, 30.0, xp=XP), module=G)
reg("gammatone", lambda r: C(440.0, "fir", fs=16000.0, xp=XP), module=G)
reg("savgol_coeffs", lambda r: C(7, 2, xp=XP), module=G)
reg("get_window", lambda r: C("hann", 9, xp=XP), module=G)
reg("bilinear lp2bp lp2bs lp2hp lp2lp normalize tf2zpk tf2sos lfilter_zi",
    lambda r: C(_b(r), _a(r)), module=G)
reg("bilinear_zpk", lambda r: C(_zc(r), _pc(r), 1.5, 10.0), module=G)
reg("lp2bp_zpk lp2bs_zpk lp2hp_zpk lp2lp_zpk zpk2tf", lambda r: C(_zc(r), _pc(r), 1.5),
    module=G)
reg("zpk2sos", lambda r: C(np.array([-1.0, -0.5]), np.array([0.3, -0.4, 0.6]) + 0.02 * r.x(3), 1.5),
    module=G)
reg("bode", lambda r: C((_b(r), _a(r)), n=8), module=G)
reg("impulse", lambda r: C((np.array([1.0, 0.5]), np.array([1.0, 1.2, 0.8])), N=8), module=G)
reg("freqs", lambda r: C(_b(r), _a(r), np.linspace(0.1, 3.0, 8)), module=G)
reg("freqs_zpk", lambda r: C(_zc(r), _pc(r), 1.5, np.linspace(0.1, 3.0, 8)), module=G)
reg("freqz", lambda r: C(_b(r), _a(r), 8), module=G)
reg("freqz_zpk", lambda r: C(_z(r), _p(r), 1.5, 8), module=G)
reg("freqz_sos sosfreqz", lambda r: C(_sos(r), 8), module=G)
reg("group_delay", lambda r: C((_b(r), _a(r)), 8), module=G)
reg("sos2tf sos2zpk sosfilt_zi", lambda r: C(_sos(r)), module=G)
reg("sosfilt", lambda r: C(_sos(r), r.x(20)), module=G)
reg("lfilter filtfilt", lambda r: C(_b(r), _a(r), r.x(20)), module=G)
reg("lfiltic", lambda r: C(_b(r), _a(r), r.x(2), r.x(2)), module=G)
reg("convolve correlate fftconvolve oaconvolve choose_conv_method", lambda r: C(r.x(10), r.x(4)),
    module=G)
reg("convolve2d correlate2d", lambda r: C(r.x(5, 6), r.x(2, 3)), module=G)
reg("deconvolve", lambda r: C(r.x(10), np.array([1.0, 0.3]) + 0.05 * r.x(2)), module=G)
reg("cspline1d qspline1d", lambda r: C(r.x(12)), module=G)
reg("cspline1d_eval qspline1d_eval", lambda r: C(r.x(12), r.u(5) * 10), module=G)
reg("cspline2d", lambda r: C(r.x(7, 8), 0.0, 1e-3), module=G)
# (SciPy's boundary sum does not converge for small images: 16 x 16)
reg("spline_filter", lambda r: C(r.x(16, 16), 0.5), module=G)
reg("detrend", lambda r: C(r.x(12)), module=G)
reg("envelope", lambda r: C(r.x(16)), module=G)
reg("hilbert", lambda r: C(r.x(12)), module=G)
reg("hilbert2", lambda r: C(r.x(6, 8)), module=G)
reg("firls", lambda r: C(9, Part([0.0, 0.3, 0.5, 1.0], [0, 1, 1, 0]), np.array([1.0, 1.0, 0.0, 0.0])),
    module=G)
reg("remez", lambda r: C(9, Part([0.0, 0.15, 0.3, 0.5], [0, 1, 1, 0]), np.array([1.0, 0.0])),
    module=G)
reg("firwin", lambda r: C(9, np.asarray(0.3)), module=G)
reg("firwin2", lambda r: C(9, Part([0.0, 0.5, 1.0], [0, 1, 0]), np.array([1.0, 0.5, 0.0])),
    module=G)
reg("gauss_spline", lambda r: C(r.x(5), 3), module=G)
reg("medfilt", lambda r: C(r.x(12), 3), module=G)
reg("medfilt2d", lambda r: C(r.x(6, 7), 3), module=G)
reg("order_filter", lambda r: C(r.x(6, 7), np.ones((3, 3)), 4), module=G)
reg("wiener", lambda r: C(r.x(6, 7)), module=G)
reg("minimum_phase", lambda r: C(np.array([0.1, 0.3, 1.0, 0.3, 0.1]) + 0.01 * r.x(5)), module=G)
reg("place_poles", lambda r: C(np.array([[0.0, 1.0], [-2.0, -3.0]]) + 0.05 * r.x(2, 2),
                               np.array([[0.0], [1.0]]), np.array([-1.0, -2.5])), module=G)
reg("resample", lambda r: C(r.x(12), 8), module=G)
reg("resample_poly", lambda r: C(r.x(12), 2, 3), module=G)
reg("savgol_filter", lambda r: C(r.x(12), 5, 2), module=G)
reg("upfirdn", lambda r: C(r.x(4), r.x(10), 2, 3), module=G)
reg("vectorstrength", lambda r: C(r.pos(10) * 3, 0.9), module=G)


def default_candidates(key):
    """Fallback signatures for a function with no entry in ``B``."""
    return [lambda r: C(r.x(12)), lambda r: C(r.x(4, 5)), lambda r: C(r.x(12), r.x(12)),
            lambda r: C(r.pos(12))]


def candidates(key):
    if key not in B and key in _SPECIAL:
        return _SPECIAL[key]
    return B.get(key) or default_candidates(key)


_SPECIAL = _special_builders()


# --------------------------------------------------------------------------- backends

class Backend:
    name = ""
    grad = False        # does the table check gradients for this backend?

    def convert(self, a, track):
        raise NotImplementedError

    def to_numpy(self, x):
        raise NotImplementedError


class NumpyBackend(Backend):
    name = "numpy"

    def __init__(self):
        self.xp = np
        self.array_type = (np.ndarray, np.generic)

    def convert(self, a, track):
        return a.copy()

    def to_numpy(self, x):
        return np.asarray(x)


class TorchBackend(Backend):
    name, grad = "torch", True

    def __init__(self):
        import torch
        torch.set_default_dtype(torch.float64)   # like NumPy: float64 for Python floats
        self.torch = self.xp = torch
        self.array_type = torch.Tensor

    def convert(self, a, track):
        t = self.torch.from_numpy(np.array(a, copy=True))
        return t.requires_grad_(True) if track else t

    def to_numpy(self, x):
        return x.detach().cpu().resolve_conj().numpy()

    def gradients(self, case):
        out, tracked = case.call(self, track=True)
        loss = case.loss(self, out)
        if not getattr(loss, "requires_grad", False):
            return [None] * len(tracked)
        return [None if g is None else self.to_numpy(g)
                for g in self.torch.autograd.grad(loss, tracked, allow_unused=True)]


class JaxBackend(Backend):
    name, grad = "jax", True

    def __init__(self):
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        self.xp = jnp
        self.array_type = jax.Array

    def convert(self, a, track):
        return self.xp.asarray(a)

    def to_numpy(self, x):
        return np.asarray(x)

    def gradients(self, case):
        import jax

        def loss(*leaves):
            out, _ = case.call(self, leaves=leaves)
            return case.loss(self, out)
        n = len(case.leaves)
        gs = jax.grad(loss, argnums=tuple(range(n)))(*[self.xp.asarray(a) for a in case.leaves])
        # JAX's gradient of a real loss w.r.t. a complex input is the conjugate of
        # PyTorch's (and tenferro's) dL/dRe z + i dL/dIm z
        return [np.conj(np.asarray(g)) for g in gs]


class TenferroBackend(Backend):
    name, grad = "tenferro", True

    def __init__(self):
        import tenferro
        self.tf = self.xp = tenferro
        self.array_type = tenferro.Tensor

    def convert(self, a, track):
        return self.tf.tensor(np.array(a, copy=True), requires_grad=track)

    def to_numpy(self, x):
        return x.detach().numpy()

    def gradients(self, case):
        out, tracked = case.call(self, track=True)
        loss = case.loss(self, out)
        if not isinstance(loss, self.tf.Tensor) or not loss.requires_grad:
            return [None] * len(tracked)
        return [None if g is None else self.to_numpy(g) for g in self.tf.grad(loss, tracked)]


BACKENDS = {"numpy": NumpyBackend, "torch": TorchBackend, "jax": JaxBackend,
            "tenferro": TenferroBackend}


# --------------------------------------------------------------------------- structure helpers

def _is_diff(a):
    return isinstance(a, Part) or isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def diff_leaves(template):
    """The differentiable arrays of an argument template, in walk order, and the mask of
    the entries that may move."""
    out = []

    def add(a):
        if isinstance(a, Part):
            out.append((a.a, a.mask))
        elif _is_diff(a):
            out.append((a, np.ones(a.shape, dtype=bool)))
    _walk(template, add)
    return [a for a, _ in out], [m for _, m in out]


def _walk(obj, fn):
    if isinstance(obj, (np.ndarray, Const, Part, Fresh, XPFn)) or obj is XP:
        return fn(obj)
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_walk(o, fn) for o in obj)
    if isinstance(obj, list):
        return [_walk(o, fn) for o in obj]
    if isinstance(obj, dict):
        return {k: _walk(v, fn) for k, v in obj.items()}
    return obj


def instantiate(template, backend, leaves=None, track=False):
    """Build call arguments for ``backend``: ``leaves`` replaces the differentiable arrays
    (in walk order); returns (arguments, tracked inputs)."""
    counter, tracked = [0], []

    def fn(a):
        if a is XP:
            return backend.xp
        if isinstance(a, Fresh):
            return a.make()
        if isinstance(a, XPFn):
            return a.make(backend.xp)
        if isinstance(a, Const):
            return backend.convert(a.a, False)
        if _is_diff(a):
            i = counter[0]
            counter[0] += 1
            a = a.a if isinstance(a, Part) else a
            if leaves is not None:
                a = leaves[i]
            t = backend.convert(a, track)
            tracked.append(t)
            return t
        return backend.convert(a, False)
    return _walk(template, fn), tracked


def flatten(obj, is_array, depth=0):
    """Leaves of a result: arrays, numbers, strings..., in a canonical order."""
    if depth > 8:
        return []
    if is_array(obj) or isinstance(obj, (np.ndarray, np.generic)):
        return [obj]
    if obj is None or isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type,
                                       types.MethodType, types.ModuleType, np.dtype)):
        return []
    if isinstance(obj, (bool, int, float, complex, str, bytes, slice)):
        return [obj]
    if isinstance(obj, types.GeneratorType):
        obj = list(obj)
    if isinstance(obj, dict):
        return [leaf for k in sorted(obj, key=str) for leaf in flatten(obj[k], is_array, depth + 1)]
    if hasattr(obj, "_asdict"):        # named tuples, SciPy's tuple bunches
        obj = [v for k, v in obj._asdict().items() if not k.startswith("_")]
    if isinstance(obj, (tuple, list)):
        return [leaf for o in obj for leaf in flatten(o, is_array, depth + 1)]
    if dataclasses.is_dataclass(obj):
        return [leaf for f in dataclasses.fields(obj) if not f.name.startswith("_")
                for leaf in flatten(getattr(obj, f.name), is_array, depth + 1)]
    if hasattr(obj, "__dict__"):
        d = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
        for k in vars(obj):     # private storage behind a public property (BSpline.t, .c)
            if k.startswith("_") and isinstance(getattr(type(obj), k[1:], None), property):
                d[k[1:]] = getattr(obj, k[1:])
        return flatten(d, is_array, depth + 1)
    return [obj]


def _is_np_array(x):
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biufc"


def float_leaf_indices(ref_leaves):
    """Indices of NumPy's output leaves that enter the loss: finite float/complex arrays."""
    return [i for i, x in enumerate(ref_leaves)
            if _is_np_array(x) and x.dtype.kind in "fc" and np.all(np.isfinite(x))]


def short(e):
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    msg = re.sub(r"\s+", " ", msg)
    return f"{type(e).__name__}: {msg}"[:110]


def where(e):
    """The innermost SciPy frame of an exception (the SciPy line that called the backend),
    and the innermost frame if that is not SciPy's."""
    frames = traceback.extract_tb(e.__traceback__)
    scipy_frames = [f for f in frames if "/scipy/" in f.filename
                    and "/_lib/array_api_compat/" not in f.filename]
    out = []
    for f in ([scipy_frames[-1]] if scipy_frames else []) + frames[-1:]:
        path = re.sub(r".*site-packages/", "", f.filename)
        path = re.sub(r".*/(tenferro/)", r"\1", path)
        text = f"{path}:{f.lineno} ({f.name}): {(f.line or '').strip()}"
        if text not in out:
            out.append(text)
    return " ← ".join(reversed(out))


def fallback_special(e):
    """The scipy.special function whose NumPy fallback raised, if that is where ``e`` came
    from (SciPy's dispatcher keeps the ufunc as ``_f`` in the fallback's closure)."""
    tb, name = e.__traceback__, ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.endswith("special/_support_alternative_backends.py"):
            f = tb.tb_frame.f_locals.get("_f")
            name = getattr(f, "__name__", name)
        tb = tb.tb_next
    return name


# --------------------------------------------------------------------------- one function


H_REL = 1e-6      # finite-difference step relative to the input's scale
N_DIRS = 3        # random directions per input


class Case:
    """One SciPy function with its chosen call and NumPy reference."""

    def __init__(self, key, fn):
        self.key, self.fn = key, fn
        self.np = NumpyBackend()
        self.template = self.cand = None
        self.fd = None

    def call(self, backend, leaves=None, track=False):
        args, tracked = instantiate(self.template, backend, leaves, track)
        a, k = args
        return self.fn(*a, **k), tracked

    def loss(self, backend, out):
        """Sum of the real parts of the floating outputs that NumPy's result has finite."""
        flat = flatten(out, lambda x: isinstance(x, backend.array_type))
        return sum(backend.xp.sum(backend.xp.real(flat[i])) for i in self.fidx)

    def probe(self):
        errors = []
        for i, make in enumerate(candidates(self.key)):
            try:
                self.template = make(Rand(self.key))
                out, _ = self.call(self.np)
                self.ref = flatten(out, _is_np_array)
                self.cand = i
                self.fidx = float_leaf_indices(self.ref)
                self.leaves, self.masks = diff_leaves(self.template)
                return {"status": "ok", "cand": i, "nin": len(self.leaves),
                        "nout": len(self.fidx), "call": describe_call(self.template)}
            except Exception as e:
                errors.append(short(e))
        self.template = None
        return {"status": "fails", "reason": "no valid NumPy call: " + " | ".join(errors)}

    def np_loss(self, leaves):
        out, _ = self.call(self.np, leaves)
        flat = flatten(out, _is_np_array)
        if len(flat) != len(self.ref):
            raise ValueError("output structure changed under perturbation")
        return float(sum(np.real(flat[i]).sum() for i in self.fidx))

    def finite_differences(self):
        """[(input index, direction, central difference)] and the loss value."""
        if self.fd is not None:
            return self.fd
        rng = np.random.default_rng(1)
        base = [a.copy() for a in self.leaves]
        loss0 = self.np_loss(base)
        res = []
        for i, a in enumerate(base):
            h = H_REL * max(1.0, float(np.max(np.abs(a))) if a.size else 1.0)
            for _ in range(N_DIRS):
                v = rng.standard_normal(a.shape)
                if a.dtype.kind == "c":
                    v = v + 1j * rng.standard_normal(a.shape)
                v = (v * self.masks[i]).astype(a.dtype)
                plus = [b if j != i else a + h * v for j, b in enumerate(base)]
                minus = [b if j != i else a - h * v for j, b in enumerate(base)]
                res.append((i, v, (self.np_loss(plus) - self.np_loss(minus)) / (2 * h)))
        self.fd = (res, loss0)
        return self.fd

    def run(self, backend):
        # values
        try:
            out, _ = self.call(backend)
        except Exception as e:
            return {"status": "fails", "reason": short(e), "where": where(e),
                    "special": fallback_special(e)}
        flat = flatten(out, lambda x: isinstance(x, backend.array_type))
        bad = compare(self.ref, flat, backend)
        if bad:
            return {"status": "fails", "reason": bad}
        if not backend.grad:
            return {"status": "ok"}
        if not self.leaves or not self.fidx:
            return {"status": "ok", "nothing": True}
        # gradients
        try:
            fd, loss0 = self.finite_differences()
        except Exception as e:
            return {"status": "ok", "nothing": True, "note": "finite differences: " + short(e)}
        try:
            grads = backend.gradients(self)
        except _Alarm:
            return {"status": "value only", "reason": "the gradient timed out", "restart": True}
        except Exception as e:
            return {"status": "value only", "reason": short(e), "where": where(e),
                    "special": fallback_special(e)}
        worst, none = 0.0, []
        for i, v, d in fd:
            g = grads[i]
            if g is None:
                none.append(i)
                ad = 0.0
            else:
                ad = float(np.real(np.sum(np.conj(g) * v)))
            err = abs(ad - d) / (1e-4 * max(abs(ad), abs(d)) + 1e-6 * (1.0 + abs(loss0)))
            worst = max(worst, err if np.isfinite(err) else np.inf)   # NaN gradients fail
        if worst <= 1.0:
            return {"status": "ok"}
        if all(g is None for g in grads):
            return {"status": "value only", "reason": "no gradient (result not connected "
                    "to the inputs)"}
        if none:
            return {"status": "value only", "reason": "gradient None for input(s) "
                    f"{sorted(set(none))} but finite differences are not 0"}
        return {"status": "value only", "reason": f"gradient differs from finite differences "
                f"({worst:.2g}x tolerance)"}


def compare(ref, got, backend):
    """'' if ``got`` (backend leaves) matches NumPy's ``ref`` leaves, else the reason."""
    if len(ref) != len(got):
        return f"result has {len(got)} leaves, NumPy's {len(ref)}"
    for j, (r, g) in enumerate(zip(ref, got)):
        if _is_np_array(r):
            if not isinstance(g, backend.array_type):
                return f"output {j} is {type(g).__module__}.{type(g).__name__}"
            g = backend.to_numpy(g)
            if g.shape != np.shape(r):
                return f"output {j} has shape {g.shape}, NumPy's {np.shape(r)}"
            rk, gk = r.dtype, g.dtype
            if rk.kind in "fc" and (gk.kind != rk.kind or gk.itemsize != rk.itemsize):
                return f"output {j} has dtype {gk}, NumPy's {rk}"
            if rk.kind in "biu" and gk.kind not in "biu":
                return f"output {j} has dtype {gk}, NumPy's {rk}"
            if not _close(g, r) and not (r.ndim == 1 and r.dtype.kind == "c"
                                         and _close(_match_order(g, r), r)):
                return f"output {j} differs from NumPy's (max abs err " \
                    f"{_maxerr(g, r):.2g})"
        else:
            if isinstance(g, backend.array_type):
                g = backend.to_numpy(g)
                if g.ndim == 0:
                    g = g.item()
            try:
                same = bool(np.all(_close(np.asarray(g), np.asarray(r)))) \
                    if isinstance(r, (int, float, complex)) else bool(np.all(g == r))
            except Exception:
                same = repr(g) == repr(r)
            if not same:
                return f"output {j} is {g!r:.40}, NumPy's {r!r:.40}"
    return ""


def _close(g, r):
    if r.dtype.kind in "fc" or g.dtype.kind in "fc":
        scale = float(np.max(np.abs(r[np.isfinite(r)]), initial=0.0))
        return np.allclose(g, r, rtol=1e-6, atol=1e-9 * max(scale, 1.0), equal_nan=True)
    return np.array_equal(g, r)


def _match_order(g, r):
    """``g`` reordered to pair each element with its nearest in ``r`` (roots, poles and
    zeros come in an unspecified order; only complex 1-D outputs are matched this way)."""
    g, left, out = np.asarray(g), list(range(len(g))), []
    for x in r:
        k = min(left, key=lambda i: abs(g[i] - x))
        left.remove(k)
        out.append(g[k])
    return np.array(out)


def _maxerr(g, r):
    try:
        return float(np.nanmax(np.abs(g.astype(complex) - r.astype(complex))))
    except Exception:
        return float("nan")


def describe_call(template):
    def d(o):
        if isinstance(o, np.ndarray):
            return f"{o.dtype}{list(o.shape)}"
        if isinstance(o, Const):
            return f"const {o.a.dtype}{list(o.a.shape)}"
        if isinstance(o, Fresh):
            return "rng"
        if isinstance(o, XPFn):
            return "rvs"
        if isinstance(o, Part):
            return f"{o.a.dtype}{list(o.a.shape)}"
        if o is XP:
            return "xp=xp"
        if isinstance(o, (tuple, list)):
            inner = ", ".join(d(x) for x in o)
            return f"({inner})" if isinstance(o, tuple) else f"[{inner}]"
        if callable(o):
            return getattr(o, "__name__", "f")
        return repr(o)
    args, kwargs = template
    parts = [d(a) for a in args] + [f"{k}={d(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


# --------------------------------------------------------------------------- worker protocol

class _Alarm(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Alarm()


def worker_main(conn, backend_names, timeout):
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    signal.signal(signal.SIGALRM, _on_alarm)
    backends = {}
    for b in backend_names:
        try:
            backends[b] = BACKENDS[b]()
        except Exception as e:
            backends[b] = short(e)
    fns = {key: fn for key, fn, _ in documented_functions()}
    case = None
    while True:
        msg = conn.recv()
        if msg is None:
            return
        op, key, b = msg
        t0 = time.perf_counter()
        signal.alarm(timeout)
        try:
            if case is None or case.key != key:
                case = Case(key, fns[key])
                case.probed = case.probe()
            res = dict(case.probed)
            if op == "run":
                if case.template is None:
                    res = {"status": "fails", "reason": "no valid NumPy call"}
                elif isinstance(backends[b], str):
                    res = {"status": "fails", "reason": "backend unavailable: " + backends[b]}
                else:
                    res = case.run(backends[b])
        except _Alarm:    # the interrupted code may have left broken state: start afresh
            res = {"status": "fails", "reason": f"timeout (> {timeout} s)", "restart": True}
        except Exception as e:
            res = {"status": "fails", "reason": "harness: " + short(e), "where": where(e)}
        finally:
            signal.alarm(0)
        res["time"] = time.perf_counter() - t0
        conn.send(res)


class Worker:
    def __init__(self, backends, timeout):
        self.backends, self.timeout = backends, timeout
        self.proc = None

    def start(self):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child, self.backends, self.timeout),
                                daemon=True)
        self.proc.start()

    def ask(self, msg):
        if self.proc is None or not self.proc.is_alive():
            self.start()
        self.conn.send(msg)
        if self.conn.poll(self.timeout + 60):
            try:
                res = self.conn.recv()
                if res.pop("restart", False):
                    self.proc.kill()
                    self.proc.join()
                    self.proc = None
                return res
            except EOFError:
                pass
        reason = "worker hung" if self.proc.is_alive() else \
            f"worker crashed (exit code {self.proc.exitcode})"
        self.proc.kill()
        self.proc.join()
        self.proc = None
        return {"status": "fails", "reason": reason}

    def stop(self):
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(10)


# --------------------------------------------------------------------------- causes of tenferro gaps
# Each tenferro cell that is not ok is put under the first cause whose test matches
# (key, tenferro cell); the heading and explanation are printed once per cause.

def _reason(c):
    return c.get("reason", "") + " " + c.get("where", "")


CAUSES = [
    ("special",
     "A scipy.special function with no tenferro version (SciPy's NumPy fallback)",
     lambda key, c: bool(c.get("special")),
     "SciPy's dispatcher for the elementwise special functions "
     "(`scipy/special/_support_alternative_backends.py`) looks for a native version in "
     "`scipy_namespace_for(xp)` (torch, jax.scipy, cupyx), then in `xp.special.<name>`, "
     "then for a generic array-API implementation (only `xlogy`, `rel_entr`, `chdtr`, "
     "`chdtrc`, `betaincc`, `stdtr`, `stdtrit` have one, most of them built on `betainc`/"
     "`gammainc`); otherwise it runs `np.asarray(arg)`, the compiled ufunc and "
     "`xp.asarray(out)`. tenferro has no `tenferro.special` submodule yet, so values are "
     "right and a tensor that requires grad raises UnsupportedADError (never a silently "
     "dropped gradient). PyTorch is `ok` where `torch.special` has the function with a "
     "derivative. **Fix inside tenferro**: a `tenferro.special` submodule whose functions "
     "carry SciPy's names (docs/design.md#scipy: `tf.special.*`); SciPy picks `xp.special.<name>` "
     "up with no change on its side. The stats functions listed here reach the fallback "
     "through the special function they name (mostly for p-values)."),
    ("inplace",
     "SciPy writes in place into a tensor that an earlier op used (InPlaceError)",
     lambda key, c: "InPlaceError" in c.get("reason", ""),
     "SciPy updates arrays in place (`x[mask] = v`, `xpx.at(x, i).set(v, copy=None)`, "
     "`x += dx`) after they were used by other ops. tenferro never writes a payload in "
     "place, but it rebinds the Tensor object, and a recorded node refers to its inputs "
     "through that object; so tenferro's engine refuses a backward through *any* node "
     "whose input was changed afterwards (tenferro/_kernels/tape.pyx `_check_versions`). "
     "PyTorch only refuses when a tensor *saved for backward* changed: `subtract` and "
     "`getitem` save nothing, so PyTorch differentiates `derivative`, `jacobian`, `hessian`, "
     "`qmc_quad` and `envelope`, and raises too where a saved value changed (`max` in "
     "`logsumexp(b=...)` and `boxcox_llf`, `multiply` in `romb`, views in `tanhsinh`, "
     "`find_minimum`). **Fix inside tenferro** (engine, the lead's files): since payloads "
     "are immutable, a node could hold its inputs' (node, index, payload) as they were "
     "when it ran instead of the Tensor objects; then no in-place change can affect a "
     "recorded backward and this check (and every row here) goes away. (`logsumexp` "
     "without `b`, and with the gradient taken w.r.t. `b` only, is differentiable: "
     "tests/test_scipy_array_api.py checks both.)"),
    ("nondiff-numpy",
     "A NumPy function that tenferro does not register",
     lambda key, c: "has no differentiable tenferro version" in c.get("reason", ""),
     "SciPy calls a NumPy function directly on the tensor; tenferro has no differentiable "
     "version registered for it, so `Tensor.__array_function__` refuses to run it on a "
     "tensor that requires grad. `np.atleast_1d`/`atleast_2d`/`atleast_3d` are reshapes "
     "and could be registered (`register(..., functions=(np.atleast_1d, ...))`); PyTorch "
     "shows that SciPy converts to NumPy further down in these functions anyway "
     "(`Can't call numpy() on Tensor that requires grad`)."),
    ("numpy-impl",
     "SciPy's implementation is NumPy/compiled code",
     lambda key, c: "converting a tensor that requires grad" in c.get("reason", "")
     or "could not convert b, a, and x to a common type" in c.get("reason", ""),
     "For these functions SciPy converts its inputs with `np.asarray` (the line is given) "
     "and runs NumPy or compiled code, converting the result back with `xp.asarray`. "
     "Values are right for every backend; the gradient cannot flow through NumPy, so "
     "tenferro raises UnsupportedADError; PyTorch raises `Can't call numpy() on Tensor "
     "that requires grad` and JAX `TracerArrayConversionError` in the same place (see "
     "their columns). Differentiating these needs SciPy to implement them with array API "
     "code, or a custom rule (`tf.custom_vjp`) around the SciPy call. JAX is `ok` where "
     "SciPy delegates to `jax.scipy` by name (`scipy/signal/_support_alternative_backends.py`"
     " `JAX_SIGNAL_FUNCS`: convolve, correlate, convolve2d, correlate2d, fftconvolve, "
     "detrend — and sos2tf/zpk2tf, which call convolve; `scipy.ndimage.map_coordinates`); "
     "that delegation exists for CuPy and JAX only. (`deconvolve`: the compiled "
     "`_linear_filter` catches tenferro's UnsupportedADError and raises `ValueError: could "
     "not convert b, a, and x to a common type`.)"),
    ("disconnected",
     "The result is rebuilt from NumPy values (no graph)",
     lambda key, c: "not connected" in c.get("reason", ""),
     "SciPy leaves the array API inside the function (e.g. Python floats, NumPy "
     "polynomial code for filter design) and builds the result with `xp.asarray`: the "
     "result is a tensor without a graph, so the gradient is missing although the "
     "value is right. PyTorch and JAX behave the same way."),
    ("numpy-result",
     "SciPy returns NumPy arrays for every backend",
     lambda key, c: re.search(r"output \d+ is numpy", c.get("reason", "")) is not None,
     "SciPy documents these functions for alternative backends, but this version "
     "returns NumPy arrays for torch, JAX and tenferro alike."),
    ("scipy-bug",
     "Fails for every alternative backend (a SciPy limitation)",
     lambda key, c: c.get("status") == "fails" and c.get("others_fail", False),
     "PyTorch and JAX fail in the same way: SciPy mixes NumPy arrays with the backend's "
     "arrays inside the function."),
    ("missing",
     "A missing namespace function",
     lambda key, c: "module 'tenferro' has no attribute" in c.get("reason", ""),
     "SciPy calls an array API (or array-api-extra) function that tenferro does not "
     "define yet."),
    ("other", "Other", lambda key, c: True, "See the reason and location."),
]


def classify(key, cell):
    for tag, head, test, expl in CAUSES:
        if test(key, cell):
            return tag, head, expl
    return "other", "Other", ""


COMPACT = [   # long exception messages -> table cell text (the Gaps section has them all)
    (r"UnsupportedADError: converting a tensor that requires grad.*|RuntimeError: Can't call "
     r"numpy\(\) on Tensor that requires grad.*|TracerArrayConversionError.*",
     "np.asarray in SciPy"),
    (r"InPlaceError: backward through '(\w+)'.*", r"in-place change of an input of '\1'"),
    (r"RuntimeError: one of the variables needed for gradient computation has been modified "
     r"by an inplace operation.*", "in-place change of a saved tensor"),
    (r"RuntimeError: Output \d+ of \w+ is a view and.*", "in-place change of a view"),
    (r"UnsupportedADError: (numpy\.\w+) has no differentiable tenferro version.*",
     r"\1 not differentiable in tenferro"),
    (r"NotImplementedError: the derivative for '(\w+)[:']?.*", r"no derivative for \1"),
    (r"no gradient \(result not connected to the inputs\)", "no graph"),
]


def cell_text(c):
    s = c["status"]
    if s == "ok":
        return "ok°" if c.get("nothing") else "ok"
    if s in ("n/a",):
        return s
    r = c.get("reason", "")
    for pattern, repl in COMPACT:
        r = re.sub(pattern, repl, r)
    if c.get("special"):
        r += f" (special.{c['special']})"
    return f"{s}: {r}".replace("|", "\\|")


def write_markdown(rows, backends, path, elapsed, scipy_version):
    lines = ["# SciPy's array API mode with tenferro tensors", "",
             f"Generated by `SCIPY_ARRAY_API=1 python scripts/scipy_array_api_table.py` "
             f"(SciPy {scipy_version}; {elapsed:.0f} s). Rows: every public SciPy function "
             "that SciPy's documentation lists as supporting PyTorch on CPU "
             "(`xp_capabilities_table`, read like `scipy/_lib/_array_api_docs_tables.py`).",
             "",
             "Each call is found by trying candidate argument lists with NumPy inputs; the same "
             "call then runs with torch tensors, JAX arrays (x64) and tenferro tensors "
             "(float64) and must return the backend's array type with NumPy's values "
             "(allclose, rtol 1e-6). Then the reverse-mode gradient (torch.autograd, "
             "jax.grad, tf.grad) of loss = sum of the real parts of the floating outputs is "
             "compared with central finite differences of the NumPy call (three random "
             "directions per input). PyTorch runs with float64 as its default dtype. "
             "Z matrices, knots and labels are passed as constants (not differentiated).", "",
             "`ok`: values (and gradient); `ok°`: values, nothing to differentiate (no "
             "floating input or output); `value only`: the value is right, the gradient is "
             "missing or wrong; `fails`: the call raises or the value is wrong; `n/a`: SciPy "
             "does not document this backend for the function.", "", "## Summary", ""]
    cats = ["ok", "value only", "fails", "n/a"]
    lines.append("| backend | " + " | ".join(cats) + " |")
    lines.append("|---|" + "---|" * len(cats))
    for b in backends:
        counts = {c: 0 for c in cats}
        for r in rows:
            counts[r["cells"][b]["status"]] += 1
        lines.append(f"| {b} | " + " | ".join(str(counts[c]) for c in cats) + " |")
    lines.append("")
    # per module
    mods = {}
    for r in rows:
        mods.setdefault(r["module"], []).append(r)
    lines.append("## Per module")
    for m, rs in mods.items():
        lines += ["", f"### {m}", "", "| function | call | " + " | ".join(backends) + " |",
                  "|---|---|" + "---|" * len(backends)]
        for r in rs:
            lines.append(f"| {r['name']} | `{r.get('call', '').replace('|', '/')[:80]}` | "
                         + " | ".join(cell_text(r["cells"][b]) for b in backends) + " |")
    # gaps
    if "tenferro" in backends:
        lines += ["", "## Gaps (tenferro)", "",
                  "Every tenferro cell that is not `ok`, grouped by cause, with the "
                  "PyTorch and JAX cells of the same function. `where` is the SciPy line "
                  "that handed the tensor to the failing call (← the frame that raised).", ""]
        others = [b for b in backends if b not in ("numpy", "tenferro")]
        groups = {tag: (head, expl, []) for tag, head, _, expl in CAUSES}
        for r in rows:
            c = dict(r["cells"]["tenferro"])
            if c["status"] in ("ok", "n/a"):
                continue
            c["others_fail"] = bool(others) and all(
                r["cells"][b]["status"] in ("fails", "n/a") for b in others)
            tag, _, _ = classify(r["key"], c)
            groups[tag][2].append((r, c))
        for tag, (head, expl, items) in groups.items():
            if not items:
                continue
            lines += [f"### {head} ({len(items)})", "", expl, ""]
            for r, c in items:
                status = "; ".join(f"{b}: {r['cells'][b]['status']}" for b in others)
                need = f" needs `scipy.special.{c['special']}`;" \
                    if c.get("special") and not r["key"].startswith("scipy.special.") else ""
                text = cell_text({k: v for k, v in c.items() if k != "special"})
                loc = ""
                if c.get("where") and tag not in ("special", "inplace"):
                    w = c["where"] if tag == "other" else c["where"].split(" ← ")[-1]
                    loc = f" — where: `{w}`"
                lines.append(f"- `{r['key']}`:{need} {text} ({status}){loc}")
            lines.append("")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="numpy,torch,jax,tenferro")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                 "scipy_array_api.md"))
    p.add_argument("--json", default=None, help="also write the raw cells as JSON")
    p.add_argument("--only", default=None, help="regex on the qualified function name")
    p.add_argument("--timeout", type=int, default=60, help="seconds per function and backend")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    if os.environ.get("SCIPY_ARRAY_API") != "1":
        sys.exit("SCIPY_ARRAY_API must be 1 (SciPy reads it at import)")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if "numpy" not in backends:
        backends.insert(0, "numpy")
    import scipy
    t0 = time.perf_counter()
    funcs = documented_functions()
    if args.only:
        funcs = [f for f in funcs if re.search(args.only, f[0])]
    worker = Worker(backends, args.timeout)
    rows = []
    try:
        for key, fn, jax_doc in funcs:
            module, name = key.rsplit(".", 1)
            probe = worker.ask(("probe", key, "numpy"))
            row = {"key": key, "module": module, "name": name, "call": probe.get("call", ""),
                   "cells": {"numpy": probe}}
            for b in backends[1:]:
                if b == "jax" and not jax_doc:
                    row["cells"][b] = {"status": "n/a"}
                elif probe["status"] != "ok":
                    row["cells"][b] = {"status": "fails", "reason": "no valid NumPy call"}
                else:
                    row["cells"][b] = worker.ask(("run", key, b))
            rows.append(row)
            if args.verbose:
                print(f"{key:50s} " + " | ".join(f"{b}: {cell_text(row['cells'][b])[:60]}"
                                                 for b in backends), flush=True)
    finally:
        worker.stop()
    elapsed = time.perf_counter() - t0
    write_markdown(rows, backends, args.out, elapsed, scipy.__version__)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    counts = {b: {} for b in backends}
    for r in rows:
        for b in backends:
            s = r["cells"][b]["status"]
            counts[b][s] = counts[b].get(s, 0) + 1
    print(f"{len(rows)} functions in {elapsed:.0f} s -> {args.out}")
    for b in backends:
        print(f"  {b:9s} " + ", ".join(f"{k}: {v}" for k, v in sorted(counts[b].items())))


if __name__ == "__main__":
    main()
