"""The differentiable counterparts of SciPy's compiled paths (issue 29): forward and
forward + backward against SciPy's primal on NumPy.

  op                  the call (one array of n entries; n = 256 and 4096)
  dct                 tf.fft.dct(x) (type 2), SciPy: scipy.fft.dct
  convolve            tf.signal.convolve(x, k) with a 33-tap kernel k (auto method)
  lfilter             tf.signal.lfilter(b, a, x), a 2nd-order section, derivative in x, b, a
  gaussian_filter     tf.ndimage.gaussian_filter of the √n x √n image, sigma 2
  simpson             tf.integrate.simpson(y, x=x)
  chi2_logpdf         tf.stats.chi2.logpdf(x, df) (derivative in x and df)
  vonmises_cdf        tf.stats.vonmises.cdf(x, kappa) (derivative in x and kappa)
  jv                  tf.special.jv(2.5, x)

``ScipyWideMore`` (same methods and sizes) times the rest of issue 29's list:

  map_coordinates     tf.ndimage.map_coordinates of the √n x √n image at n points, order 1
                      (derivative in the image and the coordinates)
  cumulative_trapezoid, cumulative_simpson
                      tf.integrate's on y with sample points x (derivative in y and x)
  chi, f, weibull_min, pareto
                      tf.stats.<d>.logpdf(x, p) + tf.stats.<d>.cdf(x, p), one shape p
                      differentiated (f: dfn; dfd = 6); x > 0 (> 1 for pareto)

``time_scipy_primal`` is the SciPy call on NumPy (the floor), ``time_tf_forward`` the
tenferro call on plain Tensors, ``time_tf_forward_backward`` the call on leaves that
require grad and ``tf.grad`` of the sum of its output.

``python asv_bench/benchmarks/bench_scipy_wide.py [--cpu] [op ...]`` prints the medians and
forward + backward ÷ SciPy primal (of the ops named, default all).
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads

import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.ndimage  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()

_B, _A = np.array([0.2, 0.3, 0.1]), np.array([1.0, -0.5, 0.2])
_KERNEL = np.hanning(33)


def _image(v, n):
    side = int(round(np.sqrt(n)))
    return v[:side * side].reshape(side, side)


# op -> (SciPy primal on (x, p), tenferro on (x, p), p's value): p is the op's second,
# differentiable argument (None: x only)
OPS = {
    "dct": (lambda x, p: scipy.fft.dct(x), lambda x, p: tf.fft.dct(x), None),
    "convolve": (lambda x, p: scipy.signal.convolve(x, p),
                 lambda x, p: tf.signal.convolve(x, p), _KERNEL),
    "lfilter": (lambda x, p: scipy.signal.lfilter(p, _A, x),
                lambda x, p: tf.signal.lfilter(p, _A, x), _B),
    "gaussian_filter": (lambda x, p: scipy.ndimage.gaussian_filter(_image(x, x.size), 2.0),
                        lambda x, p: tf.ndimage.gaussian_filter(
                            tf.reshape(x[:int(round(np.sqrt(x.shape[0]))) ** 2],
                                       (int(round(np.sqrt(x.shape[0]))),) * 2), 2.0), None),
    "simpson": (lambda x, p: scipy.integrate.simpson(x, x=p),
                lambda x, p: tf.integrate.simpson(x, x=p), "grid"),
    "chi2_logpdf": (lambda x, p: scipy.stats.chi2.logpdf(np.abs(x) + 0.1, p),
                    lambda x, p: tf.stats.chi2.logpdf(tf.abs(x) + 0.1, p), 3.5),
    "vonmises_cdf": (lambda x, p: scipy.stats.vonmises.cdf(x, p),
                     lambda x, p: tf.stats.vonmises.cdf(x, p), 2.0),
    "jv": (lambda x, p: scipy.special.jv(2.5, x), lambda x, p: tf.special.jv(2.5, x), None),
}


class ScipyWide:
    params = [list(OPS), [256, 4096]]
    param_names = ["op", "n"]

    def setup(self, op, n):
        rng = np.random.default_rng(0)
        self.primal, self.tf_fn, p = OPS[op]
        self.x = rng.standard_normal(n)
        if isinstance(p, str):                      # simpson's sample points
            p = np.cumsum(rng.uniform(0.5, 1.5, n))
        self.p = p
        self.tensor = tf.tensor(self.x)
        self.leaves = [tf.tensor(self.x, requires_grad=True)]
        self.p_leaf = None
        if p is not None:
            self.p_leaf = tf.tensor(np.asarray(p, dtype=np.float64), requires_grad=True)
            self.leaves.append(self.p_leaf)

    def time_scipy_primal(self, op, n):
        self.primal(self.x, self.p)

    def time_tf_forward(self, op, n):
        self.tf_fn(self.tensor, self.p)

    def time_tf_forward_backward(self, op, n):
        out = self.tf_fn(self.leaves[0], self.p_leaf)
        tf.grad([tf.sum(out)], self.leaves)


def _grid(rng, n):
    return np.cumsum(rng.uniform(0.5, 1.5, n))


def _coords(rng, n):
    side = int(round(np.sqrt(n)))
    return rng.uniform(-0.5, side - 0.5, (2, n))


def _dist(name, shift, *extra):
    """logpdf + cdf of scipy.stats/tf.stats ``name`` at |x| + shift, shape p (then extra)."""
    d_sp, d_tf = getattr(scipy.stats, name), getattr(tf.stats, name)
    return (lambda x, p: d_sp.logpdf(np.abs(x) + shift, p, *extra)
            + d_sp.cdf(np.abs(x) + shift, p, *extra),
            lambda x, p: d_tf.logpdf(tf.abs(x) + shift, p, *extra)
            + d_tf.cdf(tf.abs(x) + shift, p, *extra))


# op -> (SciPy primal, tenferro, p's value or a function (rng, n) -> p), as OPS
MORE_OPS = {
    "map_coordinates": (
        lambda x, p: scipy.ndimage.map_coordinates(_image(x, x.size), p, order=1),
        lambda x, p: tf.ndimage.map_coordinates(
            tf.reshape(x, (int(round(np.sqrt(x.shape[0]))),) * 2), p, order=1), _coords),
    "cumulative_trapezoid": (lambda x, p: scipy.integrate.cumulative_trapezoid(x, x=p),
                             lambda x, p: tf.integrate.cumulative_trapezoid(x, x=p), _grid),
    "cumulative_simpson": (lambda x, p: scipy.integrate.cumulative_simpson(x, x=p),
                           lambda x, p: tf.integrate.cumulative_simpson(x, x=p), _grid),
    "chi": (*_dist("chi", 0.1), 3.0),
    "f": (*_dist("f", 0.1, 6.0), 4.0),
    "weibull_min": (*_dist("weibull_min", 0.1), 1.5),
    "pareto": (*_dist("pareto", 1.1), 2.5),
}


class ScipyWideMore(ScipyWide):
    """The same three timings for :data:`MORE_OPS` (kept to the two sizes: CI runs every
    benchmark once); setup is a few small arrays."""
    params = [list(MORE_OPS), [256, 4096]]

    def setup(self, op, n):
        rng = np.random.default_rng(0)
        self.primal, self.tf_fn, p = MORE_OPS[op]
        self.x = rng.standard_normal(n)
        if callable(p):
            p = p(rng, n)
        self.p = p
        self.tensor = tf.tensor(self.x)
        self.p_leaf = tf.tensor(np.asarray(p, dtype=np.float64), requires_grad=True)
        self.leaves = [tf.tensor(self.x, requires_grad=True), self.p_leaf]


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_scipy_primal", "time_tf_forward", "time_tf_forward_backward")
    print(f"{'op':20} {'n':>5} {'scipy us':>9} {'tf fwd':>9} {'tf f+b':>9} {'fwd/scipy':>9} "
          f"{'f+b/scipy':>9}")
    only = [a for a in sys.argv[1:] if not a.startswith("-")]   # ops to time (default: all)
    for cls in (ScipyWide, ScipyWideMore):
        for op in cls.params[0]:
            if only and op not in only:
                continue
            for n in cls.params[1]:
                b = setup_bench(cls, op, n)
                ts = medians_us([getattr(b, name) for name in names], (op, n),
                                timer=cpu_timer())
                print(f"{op:20} {n:5d} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} "
                      f"{ts[1] / ts[0]:9.2f} {ts[2] / ts[0]:9.2f}", flush=True)


if __name__ == "__main__":
    main()
