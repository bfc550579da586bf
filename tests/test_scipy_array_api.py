"""SciPy's array API mode (``SCIPY_ARRAY_API=1``) with tenferro tensors.

SciPy reads the variable once, at import, so the checks run in a child interpreter (this
file run as a script): for every case below it checks that the result is a tenferro
Tensor, that its value equals SciPy's result for NumPy inputs, and that ``tf.grad`` of
loss = sum of the real parts of the floating outputs equals central finite differences
of the NumPy call (float64, every input entry).  The child prints one JSON object
{case: "ok" | failure}; each case is then its own test here, so a failure names the
function.  The cases are the scipy.special / stats / fft / signal functions that
docs/scipy_array_api.md (scripts/scipy_array_api_table.py) marks ``ok`` for tenferro and
that have a floating input to differentiate.  Rank-based statistics are included: their
statistic and p-value are piecewise constant in the data, so the gradient must be zero
(an unreachable input's ``None`` counts as zero).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

# --------------------------------------------------------------------------- the cases
# name -> (fn, inputs, differentiated input positions or None for all float inputs);
# fn(sp, *arrays) receives the scipy package and NumPy arrays or tenferro tensors and
# returns one array or a tuple of arrays.

_rng = np.random.default_rng(20240617)


def _x(*shape):
    return _rng.standard_normal(shape)


def _pos(*shape, lo=0.5, hi=2.5):
    return _rng.uniform(lo, hi, shape)


def _u(*shape):
    return _rng.uniform(0.15, 0.85, shape)


def _c(*shape):
    return _rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)


def _ns(x):
    from scipy._lib._array_api import array_namespace
    return array_namespace(x)


def _mean_stat(x, axis=-1):
    return _ns(x).mean(x, axis=axis)


def _diff_means(x, y, axis=-1):
    xp = _ns(x)
    return xp.mean(x, axis=axis) - xp.mean(y, axis=axis)


def _rvs_for(xp):
    def rvs(size):
        return xp.asarray(np.random.default_rng(1).standard_normal(size))
    return rvs


def _res(r, *fields):
    """The named fields of a SciPy result object as a tuple."""
    return tuple(getattr(r, f) for f in fields)


CASES = {}


def case(name, inputs, diff=None):
    def deco(fn):
        CASES[name] = (fn, inputs, diff)
        return fn
    return deco


# ---- scipy.special: logsumexp in its variants, softmax, log_softmax, generic-impl ufuncs
A34, B34 = _x(3, 4), _pos(3, 4)
case("special.logsumexp", [A34])(lambda sp, a: sp.special.logsumexp(a))
case("special.logsumexp[axis=1]", [A34])(lambda sp, a: sp.special.logsumexp(a, axis=1))
case("special.logsumexp[axis=0,keepdims]", [A34])(
    lambda sp, a: sp.special.logsumexp(a, axis=0, keepdims=True))
case("special.logsumexp[axis=(0,1)]", [_x(2, 3, 2)])(
    lambda sp, a: sp.special.logsumexp(a, axis=(0, 1)))
case("special.logsumexp[return_sign]", [A34])(
    lambda sp, a: sp.special.logsumexp(a, axis=1, return_sign=True))
case("special.logsumexp[b,grad b]", [A34, B34], diff=[1])(
    lambda sp, a, b: sp.special.logsumexp(a, axis=1, b=b))
case("special.logsumexp[signed b,return_sign,grad b]", [A34, _x(3, 4)], diff=[1])(
    lambda sp, a, b: sp.special.logsumexp(a, axis=1, b=b, return_sign=True))
case("special.logsumexp[complex]", [_c(5)])(lambda sp, a: sp.special.logsumexp(a))
case("special.softmax", [A34])(lambda sp, a: sp.special.softmax(a))
case("special.softmax[axis=1]", [A34])(lambda sp, a: sp.special.softmax(a, axis=1))
case("special.log_softmax[axis=1]", [A34])(lambda sp, a: sp.special.log_softmax(a, axis=1))
case("special.log_softmax", [_x(5)])(lambda sp, a: sp.special.log_softmax(a))
case("special.xlogy", [_pos(4), _pos(4)])(lambda sp, x, y: sp.special.xlogy(x, y))
case("special.rel_entr", [_pos(4), _pos(4)])(lambda sp, x, y: sp.special.rel_entr(x, y))

# ---- scipy.stats
X24, X12, Y12 = _x(24), _x(12), _x(12) * 1.3 + 0.2
for _name in ("circmean circstd circvar differential_entropy iqr kstat kstatvar kurtosis "
              "lmoment median_abs_deviation sem skew tmax tmin tsem tstd tvar zscore "
              "rankdata").split():
    case(f"stats.{_name}", [X24])(lambda sp, a, _n=_name: getattr(sp.stats, _n)(a))
for _name in "gmean gstd gzscore hmean variation".split():
    case(f"stats.{_name}", [_pos(12)])(lambda sp, a, _n=_name: getattr(sp.stats, _n)(a))
case("stats.describe", [X24])(
    lambda sp, a: _res(sp.stats.describe(a), "minmax", "mean", "variance", "skewness",
                       "kurtosis"))
case("stats.sigmaclip", [X24])(lambda sp, a: tuple(sp.stats.sigmaclip(a)))
case("stats.tmean", [X24])(lambda sp, a: sp.stats.tmean(a, limits=(-1.0, 1.0)))
case("stats.moment", [X12])(lambda sp, a: sp.stats.moment(a, order=3))
case("stats.trim_mean", [_x(20)])(lambda sp, a: sp.stats.trim_mean(a, 0.1))
case("stats.pmean", [_pos(12)])(lambda sp, a: sp.stats.pmean(a, 2.5))
case("stats.entropy", [_pos(6), _pos(6)])(lambda sp, p, q: sp.stats.entropy(p, q))
case("stats.false_discovery_control", [_u(6)])(
    lambda sp, p: sp.stats.false_discovery_control(p))
case("stats.directional_stats", [_x(10, 3) + np.array([2.0, 0.0, 0.0])])(
    lambda sp, a: _res(sp.stats.directional_stats(a), "mean_direction", "mean_resultant_length"))
case("stats.quantile", [_x(15), _u(3)])(lambda sp, x, p: sp.stats.quantile(x, p))
case("stats.zmap", [X12, Y12])(lambda sp, a, b: sp.stats.zmap(a, b))
case("stats.yeojohnson_llf", [_x(12)])(lambda sp, a: sp.stats.yeojohnson_llf(0.7, a))
# rank statistics: piecewise constant in the data (zero gradient)
for _name in ("ansari brunnermunzel chatterjeexi cramervonmises_2samp mannwhitneyu mood "
              "spearmanrho wilcoxon").split():
    case(f"stats.{_name}", [X12, Y12])(
        lambda sp, a, b, _n=_name: _res(getattr(sp.stats, _n)(a, b), "statistic", "pvalue"))
case("stats.kruskal", [_x(7), _x(9) + 0.3, _x(11) * 1.5])(
    lambda sp, a, b, c: _res(sp.stats.kruskal(a, b, c), "statistic", "pvalue"))
case("stats.friedmanchisquare", [_x(9), _x(9) + 0.3, _x(9) * 1.5])(
    lambda sp, a, b, c: _res(sp.stats.friedmanchisquare(a, b, c), "statistic", "pvalue"))
case("stats.fligner", [_x(7), _x(9) + 0.3, _x(11) * 1.5])(
    lambda sp, a, b, c: _res(sp.stats.fligner(a, b, c), "statistic", "pvalue"))
case("stats.permutation_test", [_x(8), _x(8) + 0.5])(
    lambda sp, a, b: _res(sp.stats.permutation_test(
        (a, b), _diff_means, n_resamples=99, vectorized=True,
        rng=np.random.default_rng(0)), "statistic", "pvalue"))
case("stats.monte_carlo_test", [_x(10)])(
    lambda sp, a: _res(sp.stats.monte_carlo_test(
        a, _rvs_for(_ns(a)), _mean_stat, n_resamples=99, vectorized=True),
        "statistic", "pvalue"))

# ---- scipy.fft (complex inputs: the gradient is dL/dRe z + i dL/dIm z)
for _name, _make in [("fft", lambda: _c(8)), ("ifft", lambda: _c(8)),
                     ("fft2", lambda: _c(3, 4)), ("ifft2", lambda: _c(3, 4)),
                     ("fftn", lambda: _c(3, 4)), ("ifftn", lambda: _c(3, 4)),
                     ("rfft", lambda: _x(8)), ("irfft", lambda: _c(5)),
                     ("rfft2", lambda: _x(3, 4)), ("irfft2", lambda: _c(3, 3)),
                     ("rfftn", lambda: _x(3, 4)), ("irfftn", lambda: _c(3, 3)),
                     ("hfft", lambda: _c(5)), ("ihfft", lambda: _x(8)),
                     ("hfft2", lambda: _c(3, 3)), ("ihfft2", lambda: _x(3, 4)),
                     ("hfftn", lambda: _c(3, 3)), ("ihfftn", lambda: _x(3, 4)),
                     ("fftshift", lambda: _x(3, 5)), ("ifftshift", lambda: _x(3, 5))]:
    case(f"fft.{_name}", [_make()])(lambda sp, a, _n=_name: getattr(sp.fft, _n)(a))
case("fft.fft[norm=ortho,n=6]", [_c(8)])(lambda sp, a: sp.fft.fft(a, n=6, norm="ortho"))
case("fft.fht", [_pos(8)])(lambda sp, a: sp.fft.fht(a, 0.1, 0.5))
case("fft.ifht", [_pos(8)])(lambda sp, a: sp.fft.ifht(a, 0.1, 0.5))

# ---- scipy.signal
_B, _A = np.array([0.2, 0.3, 0.15]) + 0.02 * _x(3), np.array([1.0, -0.5, 0.2]) + 0.02 * _x(3)
# (lp2bs_zpk has a branch point sqrt(0) at bw / (2 z) = ±wo, e.g. z = -0.5 for bw = wo = 1)
_Z, _P = np.array([-1.3, -0.6]), np.array([-0.4 + 0.6j, -0.4 - 0.6j, -0.8])
_SOS = np.array([[0.2, 0.3, 0.1, 1.0, -0.5, 0.2], [1.0, 0.4, 0.1, 1.0, 0.3, 0.4]])
case("signal.abcd_normalize", [_x(2, 2), _x(2, 1), _x(1, 2), _x(1, 1)])(
    lambda sp, a, b, c, d: sp.signal.abcd_normalize(a, b, c, d))
for _name in "lp2bp lp2bs lp2hp lp2lp normalize tf2zpk".split():
    case(f"signal.{_name}", [_B, _A])(lambda sp, b, a, _n=_name: getattr(sp.signal, _n)(b, a))
for _name in "lp2bp_zpk lp2bs_zpk lp2hp_zpk lp2lp_zpk".split():
    case(f"signal.{_name}", [_Z, _P])(
        lambda sp, z, p, _n=_name: getattr(sp.signal, _n)(z, p, 1.5))
case("signal.bilinear_zpk", [_Z, _P])(lambda sp, z, p: sp.signal.bilinear_zpk(z, p, 1.5, 10.0))
case("signal.freqs", [_B, _A, np.linspace(0.1, 3.0, 6)])(
    lambda sp, b, a, w: sp.signal.freqs(b, a, w))
case("signal.freqs_zpk", [_Z, _P, np.linspace(0.1, 3.0, 6)])(
    lambda sp, z, p, w: sp.signal.freqs_zpk(z, p, 1.5, w))
case("signal.freqz", [_B, _A])(lambda sp, b, a: sp.signal.freqz(b, a, 6))
case("signal.freqz_zpk", [np.array([-0.5 + 0.3j, -0.5 - 0.3j]), np.array([0.4 + 0.4j, 0.6])])(
    lambda sp, z, p: sp.signal.freqz_zpk(z, p, 1.5, 6))
case("signal.freqz_sos[grad b]", [_SOS[:, :3], _SOS[:, 3:]], diff=[0])(
    lambda sp, b, a: sp.signal.freqz_sos(_ns(b).concat([b, a], axis=1), 6))
case("signal.sosfreqz[grad b]", [_SOS[:, :3], _SOS[:, 3:]], diff=[0])(
    lambda sp, b, a: sp.signal.sosfreqz(_ns(b).concat([b, a], axis=1), 6))
case("signal.bode", [_B, _A])(lambda sp, b, a: sp.signal.bode((b, a), n=6))
case("signal.group_delay", [_B, _A])(lambda sp, b, a: sp.signal.group_delay((b, a), 6))
case("signal.sos2zpk[grad b]", [_SOS[:, :3], _SOS[:, 3:]], diff=[0])(
    lambda sp, b, a: sp.signal.sos2zpk(_ns(b).concat([b, a], axis=1)))
case("signal.buttord", [np.asarray(0.2), np.asarray(0.3)])(
    lambda sp, wp, ws: sp.signal.buttord(wp, ws, 3.0, 40.0))
case("signal.cheb1ord", [np.asarray(0.2), np.asarray(0.3)])(
    lambda sp, wp, ws: sp.signal.cheb1ord(wp, ws, 3.0, 40.0))
case("signal.cheb2ord", [np.asarray(0.2), np.asarray(0.3)])(
    lambda sp, wp, ws: sp.signal.cheb2ord(wp, ws, 3.0, 40.0))
case("signal.fftconvolve", [_x(10), _x(4)])(lambda sp, a, b: sp.signal.fftconvolve(a, b))
case("signal.oaconvolve", [_x(10), _x(4)])(lambda sp, a, b: sp.signal.oaconvolve(a, b))
case("signal.firwin", [np.asarray(0.3)])(lambda sp, c: sp.signal.firwin(9, c))
case("signal.gauss_spline", [_x(5)])(lambda sp, x: sp.signal.gauss_spline(x, 3))
case("signal.hilbert", [_x(12)])(lambda sp, x: sp.signal.hilbert(x))
case("signal.hilbert2", [_x(4, 6)])(lambda sp, x: sp.signal.hilbert2(x))
case("signal.lfiltic", [_B, _A, _x(2), _x(2)])(
    lambda sp, b, a, y, x: sp.signal.lfiltic(b, a, y, x))
case("signal.minimum_phase", [np.array([0.1, 0.3, 1.0, 0.3, 0.1]) + 0.01 * _x(5)])(
    lambda sp, h: sp.signal.minimum_phase(h))
case("signal.resample", [_x(12)])(lambda sp, x: sp.signal.resample(x, 8))
case("signal.vectorstrength", [_pos(10) * 3])(lambda sp, e: sp.signal.vectorstrength(e, 0.9))
case("signal.windows.general_cosine", [_pos(3)])(
    lambda sp, a: sp.signal.windows.general_cosine(9, a))

# ---- known limits, checked by their own tests below (not expected to be "ok")
KNOWN = {
    # SciPy overwrites the input of xp.max in place (InPlaceError, as in PyTorch)
    "special.logsumexp[b,grad a]": (lambda sp, a, b: sp.special.logsumexp(a, axis=1, b=b),
                                    [A34, B34], [0]),
}


# --------------------------------------------------------------------------- the child

def _outputs(res):
    """The arrays of a result: nested tuples flattened."""
    if isinstance(res, (tuple, list)):
        return [o for r in res for o in _outputs(r)]
    return [res]


def _match_order(g, r):
    """``g`` reordered to pair each element with its nearest in ``r``."""
    left, out = list(range(len(g))), []
    for x in r:
        k = min(left, key=lambda i: abs(g[i] - x))
        left.remove(k)
        out.append(g[k])
    return np.array(out)


def _check(sp, tf, fn, inputs, diff):
    raw = _outputs(fn(sp, *inputs))
    ref = [np.asarray(o) for o in raw]
    got = _outputs(fn(sp, *[tf.tensor(a) for a in inputs]))
    assert len(got) == len(ref), f"{len(got)} outputs, NumPy's call gives {len(ref)}"
    for k, (g, r) in enumerate(zip(got, ref)):
        if isinstance(raw[k], (np.ndarray, np.generic)):   # NumPy gives an array: a Tensor
            assert isinstance(g, tf.Tensor), f"output {k} is {type(g).__name__}, not a Tensor"
        g = g.numpy() if isinstance(g, tf.Tensor) else np.asarray(g)
        assert g.shape == r.shape, f"output {k}: shape {g.shape}, NumPy's {r.shape}"
        scale = max(1.0, float(np.max(np.abs(r), initial=0.0)))
        if r.ndim == 1 and r.dtype.kind == "c":     # roots: the order is not specified
            g = _match_order(g, r)
        assert np.allclose(g, r, rtol=1e-9, atol=1e-12 * scale, equal_nan=True), \
            f"output {k} differs from NumPy's result: {g} vs {r}"
    floats = [k for k, r in enumerate(ref) if r.dtype.kind in "fc" and np.all(np.isfinite(r))]
    if diff is None:
        diff = [i for i, a in enumerate(inputs) if np.asarray(a).dtype.kind in "fc"]
    assert floats and diff, "nothing to differentiate"

    def np_loss(args):
        outs = _outputs(fn(sp, *args))
        return float(sum(np.real(np.asarray(outs[k])).sum() for k in floats))

    tracked = [tf.tensor(a, requires_grad=i in diff) for i, a in enumerate(inputs)]
    outs = _outputs(fn(sp, *tracked))
    loss = sum(tf.sum(tf.real(outs[k])) for k in floats)
    grads = tf.grad(loss, [tracked[i] for i in diff]) if isinstance(loss, tf.Tensor) \
        and loss.requires_grad else [None] * len(diff)
    for i, g in zip(diff, grads):
        a = np.asarray(inputs[i])
        g = np.zeros(a.shape, a.dtype) if g is None else g.numpy()
        assert g.shape == a.shape and g.dtype == a.dtype, \
            f"gradient of input {i}: {g.dtype}{g.shape}, input {a.dtype}{a.shape}"
        fd = np.zeros(a.shape, a.dtype)
        h = 1e-6 * max(1.0, float(np.max(np.abs(a))))
        for j in np.ndindex(a.shape):
            for step in ((1.0, 1j) if a.dtype.kind == "c" else (1.0,)):
                plus, minus = a.copy(), a.copy()
                plus[j] += h * step
                minus[j] -= h * step
                lo = [minus if m == i else b for m, b in enumerate(inputs)]
                hi = [plus if m == i else b for m, b in enumerate(inputs)]
                fd[j] += step * (np_loss(hi) - np_loss(lo)) / (2 * h)
        tol = 1e-6 * max(1.0, float(np.max(np.abs(fd))))
        assert np.allclose(g, fd, rtol=1e-5, atol=tol), \
            f"gradient of input {i} differs from finite differences: {g} vs {fd}"


def _child():
    import warnings
    import scipy
    import scipy.fft
    import scipy.signal
    import scipy.special
    import scipy.stats
    import tenferro as tf
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    assert scipy._lib._array_api.SCIPY_ARRAY_API, "SciPy did not see SCIPY_ARRAY_API=1"
    results = {}
    for name, (fn, inputs, diff) in {**CASES, **KNOWN}.items():
        try:
            _check(scipy, tf, fn, inputs, diff)
            results[name] = "ok"
        except Exception as e:
            results[name] = f"{type(e).__name__}: {e}"[:2000]
    print(json.dumps(results))


def _child_default_mode():
    """Without the variable SciPy converts with np.asarray: a tracked tensor must raise."""
    import scipy
    import scipy.special
    import tenferro as tf
    assert not scipy._lib._array_api.SCIPY_ARRAY_API
    x = tf.tensor(np.array([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]]), requires_grad=True)
    out = {}
    try:
        res = scipy.special.logsumexp(x)
        out["tracked"] = f"returned {type(res).__name__}"
    except tf.UnsupportedADError as e:
        out["tracked"] = "UnsupportedADError"
        out["message"] = str(e)
    except Exception as e:
        out["tracked"] = f"{type(e).__name__}: {e}"
    res = scipy.special.logsumexp(x.detach())
    out["detached_type"] = type(res).__name__
    out["detached_value"] = float(res)
    out["grad"] = None if x.grad is None else x.grad.numpy().tolist()
    print(json.dumps(out))


def _run(mode, array_api):
    env = dict(os.environ)
    if array_api:
        env["SCIPY_ARRAY_API"] = "1"
    else:
        env.pop("SCIPY_ARRAY_API", None)
    proc = subprocess.run([sys.executable, __file__, mode], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, f"child failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- the tests

@pytest.fixture(scope="module")
def results():
    return _run("--array-api", True)


@pytest.mark.parametrize("name", list(CASES))
def test_scipy_function_with_tensors(results, name):
    assert results.get(name) == "ok", f"{name}: {results.get(name)}"


def test_logsumexp_weights_gradient_wrt_a(results):
    """SciPy's logsumexp(a, b=...) overwrites the input of ``xp.max`` in place
    (``xpx.at(a, i_max).set(-inf, copy=None)`` after ``a`` was copied once), which
    tenferro, like PyTorch, refuses to differentiate through: InPlaceError, never a
    wrong gradient."""
    res = results["special.logsumexp[b,grad a]"]
    assert res == "ok" or res.startswith("InPlaceError"), res


def test_default_mode_does_not_drop_the_gradient():
    """Without SCIPY_ARRAY_API, SciPy converts with np.asarray: a tensor that requires
    grad raises tenferro's UnsupportedADError; a detached one gives NumPy's result."""
    out = _run("--default-mode", False)
    assert out["tracked"] == "UnsupportedADError", out
    assert "drop its gradient" in out["message"]
    x = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]])
    assert out["detached_type"] == "float64"
    assert np.isclose(out["detached_value"], np.log(np.exp(x).sum()))
    assert out["grad"] is None


if __name__ == "__main__":
    if sys.argv[1:] == ["--array-api"]:
        _child()
    elif sys.argv[1:] == ["--default-mode"]:
        _child_default_mode()
