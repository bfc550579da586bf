"""NumPy's own functions called on tensors (tenferro/_numpy/, docs/design.md#interoperability).

Three answers, each tested here:
(a) a differentiable composition: NumPy's values (type, shape, dtype) and check_grads
    (reverse, forward, second order) in float64 and, where NumPy takes it, complex128;
(b) a payload function: exactly NumPy's result on the payload, also for a tensor that
    requires grad — tested for every function scripts/numpy_coverage.py lists as "payload";
(c) no rule: NumPy's result for plain tensors, UnsupportedADError naming the function for
    tracked ones.
"""
import importlib.util
import io
import pathlib
import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro import _numpy
from tenferro._ops import registry
from tenferro.testing import check_grads, check_low_precision

_SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "numpy_coverage.py"
_spec = importlib.util.spec_from_file_location("numpy_coverage", _SCRIPT)
coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coverage)

R = np.random.default_rng(20240611)


def rnd(*shape):
    return R.normal(size=shape)


def spd(n):
    a = rnd(n, n)
    return a @ a.T + n * np.eye(n)


def sym(a):           # a Hermitian matrix from any square one (inside f: differentiable)
    return a + np.conj(np.swapaxes(a, -1, -2))


A34, A45, A52, V4, V6 = rnd(3, 4), rnd(4, 5), rnd(5, 2), rnd(4), rnd(6)
A33, B33, A23 = rnd(3, 3), rnd(3, 3), rnd(2, 3)
WITH_NAN = rnd(3, 5)
WITH_NAN[0, 1] = WITH_NAN[2, 4] = np.nan
MASK = R.random((3, 4)) > 0.3
MASK[:, 0] = True
XP = np.sort(rnd(6))
XQ = rnd(9) * 1.5
POS = np.abs(rnd(3, 4)) + 0.5

# (id, f written with NumPy functions, args, complex): ``complex`` True makes every
# argument complex128 for a second check_grads run; a tuple names the arguments to make
# complex (the others stay real); False: NumPy takes no complex input (or it makes no sense).
CASES = [
    # products
    ("dot", np.dot, [rnd(2, 3, 4), rnd(5, 4, 2)], True),
    ("dot-1d", np.dot, [V4, V4], True),
    ("dot-scalar", np.dot, [np.array(1.5), A34], True),
    ("vdot", np.vdot, [A34, A34[::-1]], True),
    ("inner", np.inner, [rnd(2, 4), A34], True),
    ("outer", np.outer, [A23, V4], True),
    ("kron", np.kron, [A23, rnd(3, 2, 2)], True),
    ("cross", np.cross, [rnd(4, 3), rnd(3)], True),
    ("cross-axis", lambda a, b: np.cross(a, b, axisa=0, axisb=0, axisc=0), [rnd(3, 2), rnd(3, 2)],
     False),
    ("multi_dot", lambda *m: np.linalg.multi_dot(m), [V4[:3], A34, A45, A52], True),
    ("matvec", np.matvec, [rnd(2, 3, 4), V4], True),
    ("vecmat", np.vecmat, [rnd(3), rnd(2, 3, 4)], True),
    # linalg, NumPy's signatures (gauge-invariant maps of vectors: |U|², |V|²)
    ("svd", lambda a: (lambda r: (r.S, np.abs(r.U) ** 2, np.abs(r.Vh) ** 2))(np.linalg.svd(a)),
     [A33], True),
    ("svd-hermitian", lambda a: (lambda r: (r.S, np.abs(r.U) ** 2))(
        np.linalg.svd(sym(a), hermitian=True)), [A33], True),
    ("svd-no-uv", lambda a: np.linalg.svd(a, compute_uv=False), [A34], True),
    ("svdvals", np.linalg.svdvals, [A34], True),
    ("eigh", lambda a: (lambda r: (r.eigenvalues, np.abs(r.eigenvectors) ** 2))(
        np.linalg.eigh(sym(a))), [A33], True),
    ("eigvalsh", lambda a: np.linalg.eigvalsh(sym(a), UPLO="U"), [A33], True),
    ("eigvals", np.linalg.eigvals, [A33], True),
    ("eig-values", lambda a: np.linalg.eig(sym(a) + np.diag([0.0, 3.0, 6.0])).eigenvalues,
     [A33], False),
    ("qr", np.linalg.qr, [A34.T], True),
    ("qr-r", lambda a: np.linalg.qr(a, mode="r"), [A34.T], True),
    ("cholesky-upper", lambda a: np.linalg.cholesky(a @ np.conj(a.T) + 3 * np.eye(3),
                                                    upper=True), [A33], True),
    ("cond", np.linalg.cond, [A33], True),
    ("cond-fro", lambda a: np.linalg.cond(a, "fro"), [A33], True),
    ("tensorinv", lambda a: np.linalg.tensorinv(a, ind=1),
     [rnd(4, 2, 2) + np.eye(4).reshape(4, 2, 2)], True),
    ("tensorsolve", np.linalg.tensorsolve, [rnd(2, 3, 6) + np.eye(6).reshape(2, 3, 6), rnd(2, 3)],
     True),
    # statistics
    ("average", lambda a, w: np.average(a, axis=1, weights=w, returned=True),
     [A34, np.abs(rnd(4)) + 0.5], (0,)),
    ("average-plain", lambda a: np.average(a, axis=(0, 1)), [A34], True),
    ("cov", np.cov, [A34], True),
    ("cov-weights", lambda m, aw: np.cov(m, rowvar=False, aweights=aw, ddof=1),
     [A34, np.abs(rnd(3)) + 0.5], (0,)),
    ("cov-y", np.cov, [V6, V6[::-1] ** 2], True),
    ("corrcoef", np.corrcoef, [A34], True),
    ("ptp", lambda a: np.ptp(a, axis=0), [A34], False),
    ("trapezoid", np.trapezoid, [A34, np.sort(rnd(4))], (0,)),
    ("trapezoid-dx", lambda y: np.trapezoid(y, dx=0.3, axis=0), [A34], True),
    ("nansum", lambda a: np.nansum(a, axis=1), [WITH_NAN], False),
    ("nanprod", np.nanprod, [WITH_NAN], False),
    ("nanmean", lambda a: np.nanmean(a, axis=0, keepdims=True), [WITH_NAN], False),
    ("nanvar", lambda a: np.nanvar(a, axis=1, ddof=1), [WITH_NAN], False),
    ("nanstd", np.nanstd, [WITH_NAN], False),
    ("nanmax", lambda a: np.nanmax(a, axis=1), [WITH_NAN], False),
    ("nanmin", np.nanmin, [WITH_NAN], False),
    ("nancumsum", lambda a: np.nancumsum(a, axis=1), [WITH_NAN], False),
    ("nancumprod", np.nancumprod, [WITH_NAN], False),
    ("median", lambda a: np.median(a, axis=1), [A34], False),
    ("median-odd", lambda a: np.median(a, axis=0, keepdims=True), [A34], False),
    ("nanmedian", lambda a: np.nanmedian(a, axis=1), [WITH_NAN], False),
    ("quantile", lambda a, q: np.quantile(a, q, axis=1), [A45, np.array([0.1, 0.55])], False),
    ("quantile-hazen", lambda a: np.quantile(a, 0.3, method="hazen"), [A45], False),
    ("quantile-lower", lambda a: np.quantile(a, [0.2, 0.8], axis=0, method="lower"), [A45],
     False),
    ("percentile", lambda a: np.percentile(a, [25, 60], axis=0), [A45], False),
    ("nanquantile", lambda a: np.nanquantile(a, 0.4, axis=1), [WITH_NAN], False),
    ("nanpercentile", lambda a: np.nanpercentile(a, 80), [WITH_NAN], False),
    ("sum-where", lambda a: np.sum(a, axis=1, where=MASK, initial=0.5), [A34], True),
    ("mean-where", lambda a: np.mean(a, axis=0, where=MASK), [A34], True),
    ("var-where", lambda a: np.var(a, axis=1, where=MASK, ddof=1), [A34], True),
    ("max-where", lambda a: np.max(a, axis=1, where=MASK, initial=-10.0), [A34], False),
    ("prod-initial", lambda a: np.prod(a, axis=0, initial=2.0), [A34], True),
    # rearrangements
    ("atleast_3d", lambda a, b: np.atleast_3d(a, b), [V4, A34], True),
    ("hstack", lambda a, b: np.hstack([a, b]), [A34, A34[:, :2]], True),
    ("vstack", lambda a, b: np.vstack([a, b]), [V4, A34], True),
    ("dstack", lambda a, b: np.dstack([a, b]), [A34, A34], True),
    ("column_stack", lambda a, b: np.column_stack([a, b]), [V4[:3], A34], True),
    ("block", lambda a, b: np.block([[a, b], [b, a]]), [A23, A23[:, :2]], True),
    ("split", lambda a: tuple(np.split(a, 2, axis=1)), [A34], True),
    ("array_split", lambda a: tuple(np.array_split(a, 3)), [V4], True),
    ("append", np.append, [A34, V4], True),
    ("insert", lambda a, v: np.insert(a, [1, 3], v, axis=1), [A34, rnd(3, 1)], True),
    ("delete", lambda a: np.delete(a, [0, 2], axis=1), [A34], True),
    ("pad-constant", lambda a: np.pad(a, ((1, 0), (2, 1)), constant_values=1.5), [A34], True),
    ("pad-reflect", lambda a: np.pad(a, 2, mode="reflect"), [A34], True),
    ("resize", lambda a: np.resize(a, (5, 3)), [A34], True),
    ("rot90", lambda a: np.rot90(a, 3), [A34], True),
    ("rollaxis", lambda a: np.rollaxis(a, 2), [rnd(2, 3, 4)], True),
    ("diagflat", lambda v: np.diagflat(v, -1), [V4], True),
    ("compress", lambda a: np.compress([True, False, True, True], a, axis=1), [A34], True),
    ("extract", lambda a: np.extract(MASK, a), [A34], True),
    ("choose", lambda a, b: np.choose([[0, 1, 0, 1]], [a, b]), [A34, V4], True),
    ("select", lambda a, b: np.select([MASK, ~MASK], [a, b], 0.5), [A34, V4], True),
    ("partition", lambda a: np.partition(a, 2, axis=1), [A34], False),
    ("sort_complex", np.sort_complex, [V6], True),
    # (the zeros are made inside f, so finite differences keep them zero)
    ("trim_zeros", lambda a: np.trim_zeros(a * np.array([0.0, 0.0, 1.0, 1.0, 0.0])), [rnd(5)],
     False),
    ("copy", np.copy, [A34], True),
    ("astype", lambda a: np.astype(a, np.complex128), [A34], False),
    # calculus and signals
    ("gradient", lambda f, x: np.gradient(f, x, axis=1, edge_order=2), [A34, np.sort(rnd(4))],
     (0,)),
    ("gradient-uniform", lambda f: np.gradient(f, 0.5), [A34], True),
    ("interp", np.interp, [XQ, XP, rnd(6)], (2,)),
    ("interp-period", lambda x, fp: np.interp(x, XP, fp, period=2.0), [XQ, rnd(6)], (1,)),
    ("convolve", np.convolve, [V6, V4[:3]], True),
    ("correlate-same", lambda a, v: np.correlate(a, v, "same"), [V4[:3], V6], True),
    ("ediff1d", lambda a: np.ediff1d(a, to_begin=[1.0]), [A34], True),
    ("unwrap", np.unwrap, [np.cumsum(rnd(2, 8) * 2, axis=1)], False),
    ("angle", np.angle, [A34 + 0.1j * A34[::-1]], False),
    ("nan_to_num", lambda a: np.nan_to_num(a, nan=3.0), [WITH_NAN], False),
    ("sinc", np.sinc, [np.concatenate([V4, [0.0]])], False),
    ("vander", lambda x: np.vander(x, 4), [V4], True),
    ("linspace", lambda a, b: np.linspace(a, b, 5), [rnd(2), rnd(2)], True),
    ("logspace", lambda a, b: np.logspace(a, b, 4, axis=1), [rnd(2), rnd(2)], False),
    ("geomspace", lambda a, b: np.geomspace(a, b, 4), [POS[0], POS[1]], False),
    # polynomials
    ("polyval", np.polyval, [V4, A34], True),
    ("polyadd", np.polyadd, [V4, V6[:2]], True),
    ("polymul", np.polymul, [V4, V6[:2]], True),
    ("polyder", lambda p: np.polyder(p, 2), [V6], True),
    ("polyint", lambda p, k: np.polyint(p, 2, k), [V4, rnd(2)], True),
    ("polydiv", np.polydiv, [V6, V4[:3]], True),
    ("polyfit", lambda x, y: np.polyfit(x, y, 2), [np.linspace(0, 1, 6), V6], False),
    ("roots", np.roots, [np.array([1.0, -6.0, 11.0, -6.0]) + 0.01 * rnd(4)], True),
    ("poly", np.poly, [V4], True),
    # the user's function, called on tensors
    ("apply_along_axis", lambda a: np.apply_along_axis(lambda r: np.outer(r, r[::-1]), 1, a),
     [A34], True),
    ("apply_over_axes", lambda a: np.apply_over_axes(np.sum, a, [0, 2]), [rnd(2, 3, 4)], True),
    ("piecewise", lambda a: np.piecewise(a, [a < 0, a >= 0], [lambda v: v ** 2, np.sin]), [A34],
     False),
    # NumPy's ufuncs outside the array API
    ("deg2rad", np.deg2rad, [A34], False),
    ("degrees", np.degrees, [A34], False),
    ("fabs", np.fabs, [A34], False),
    ("exp2", np.exp2, [A34], True),
    ("cbrt", np.cbrt, [A34], False),
    ("logaddexp2", np.logaddexp2, [A34, V4], False),
    ("float_power", np.float_power, [POS, V4], True),
    ("fmax", np.fmax, [WITH_NAN[:, :4], A34], False),
    ("fmin", np.fmin, [A34, V4], False),
    ("fmod", np.fmod, [A34 * 5, POS], False),
    ("divmod", lambda a, b: np.divmod(a, b)[1], [A34 * 5, POS], False),
    ("modf", lambda a: np.modf(a * 3)[0], [A34], False),
    ("frexp", lambda a: np.frexp(a)[0], [A34], False),
    ("ldexp", lambda a: np.ldexp(a, np.array([1, -2, 0, 3])), [A34], False),
    # values from inputs: sets and weighted counts
    ("union1d", np.union1d, [V4, V6], False),
    # (generic inputs: a common entry stops being common under finite differences)
    ("setdiff1d", lambda a: np.setdiff1d(a, np.concatenate([V6, a.numpy()[:1]])
                                          if isinstance(a, tf.Tensor) else np.concatenate(
                                              [V6, a[:1]])), [V4], False),
    ("setxor1d", np.setxor1d, [V4, V6], False),
    ("bincount", lambda w: np.bincount([0, 2, 2, 3], weights=w, minlength=6), [V4], False),
    ("histogram", lambda a, w: np.histogram(a, 4, weights=w, density=True),
     [rnd(20), np.abs(rnd(20))], False),
    ("histogram-edges", lambda a: np.histogram(a, 5)[1], [rnd(20)], False),
    ("histogram_bin_edges", lambda a: np.histogram_bin_edges(a, "auto"), [rnd(20)], False),
    ("histogram2d", lambda x, y, w: np.histogram2d(x, y, (3, 2), weights=w, density=True),
     [rnd(15), rnd(15), np.abs(rnd(15))], False),
    ("histogramdd", lambda s: np.histogramdd(s, 3)[1][1], [rnd(10, 2)], False),
    ("heaviside", lambda h: np.heaviside(np.array([-1.0, 0.0, 2.0, 0.0]), h), [V4], False),
]

CASE_IDS = [c[0] for c in CASES]


def _flat(r):
    if isinstance(r, (list, tuple)):
        return [u for v in r for u in _flat(v)]
    return [r]


def _same_structure(r, e):
    if isinstance(e, (list, tuple)):
        assert type(r) is type(e), f"result type {type(r).__name__}, NumPy's {type(e).__name__}"
        assert len(r) == len(e)
        for a, b in zip(r, e):
            _same_structure(a, b)
    else:
        assert isinstance(r, tf.Tensor), f"expected a Tensor, got {type(r).__name__}"


def _assert_values(r, e, exact=False):
    _same_structure(r, e)
    for a, b in zip(_flat(r), _flat(e)):
        b = np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        if exact:
            np.testing.assert_array_equal(a.numpy(), b)
        else:
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-10, atol=1e-12, equal_nan=True)


def _tracked(args):
    return [tf.tensor(a, requires_grad=True) for a in args]


def _complex_args(args, spec):
    which = range(len(args)) if spec is True else spec
    return [a + 0.5j * np.roll(a, 1) if i in which else a for i, a in enumerate(args)]


@pytest.mark.parametrize("name,f,args,cplx", CASES, ids=CASE_IDS)
def test_composition_values(name, f, args, cplx):
    """(a) NumPy's function on tensors that require grad: Tensors with NumPy's values,
    shapes, dtypes and result structure (SVDResult, tuples, lists)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = f(*args)
        _assert_values(f(*_tracked(args)), expected)
        if cplx:
            cargs = _complex_args(args, cplx)
            _assert_values(f(*_tracked(cargs)), f(*cargs))


@pytest.mark.parametrize("name,f,args,cplx", CASES, ids=CASE_IDS)
def test_composition_plain(name, f, args, cplx):
    """Plain tensors give Tensors too, with NumPy's values (bit-identical where NumPy
    itself runs on the payloads: test_plain_path_is_numpy_bit_for_bit)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _assert_values(f(*[tf.tensor(a) for a in args]), f(*args))


@pytest.mark.parametrize("name,f,args,cplx", CASES, ids=CASE_IDS)
def test_composition_single_precision_dtype(name, f, args, cplx):
    """float32 inputs: NumPy's result dtypes (float32 kept where NumPy keeps it)."""
    args = [a.astype(np.float32 if a.dtype.kind == "f" else np.complex64) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = f(*args)
        got = f(*_tracked(args))
    _same_structure(got, expected)
    for a, b in zip(_flat(got), _flat(expected)):
        b = np.asarray(b)
        assert (a.shape, a.dtype) == (b.shape, b.dtype)
        np.testing.assert_allclose(a.numpy(), b, rtol=2e-4, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("f,args", [
    (np.dot, [A34, A45]), (lambda a: np.median(a, axis=1), [A34]),
    (lambda a, w: np.average(a, 0, w), [A34, np.abs(rnd(3)) + 0.5]), (np.convolve, [V6, V4]),
    (lambda y: np.trapezoid(y, dx=0.5), [A34]), (np.kron, [A23, A23]),
    (lambda a: np.pad(a, 1, mode="edge"), [A34 + 0.5j * A34]),
], ids=["dot", "median", "average", "convolve", "trapezoid", "kron", "pad-complex"])
def test_composition_low_precision(f, args):
    check_low_precision(f, args)


@pytest.mark.parametrize("name,f,args,cplx", CASES, ids=CASE_IDS)
def test_composition_grads(name, f, args, cplx):
    """(a) derivatives: reverse, forward and second order against finite differences."""
    check_grads(f, args)
    if cplx:
        check_grads(f, _complex_args(args, cplx))


def test_cases_cover_many_functions():
    assert len(CASES) >= 60 and len(set(CASE_IDS)) == len(CASE_IDS)


def test_plain_path_is_numpy_bit_for_bit():
    a, b = tf.tensor(A34), tf.tensor(A45)
    x = tf.tensor(XQ)
    for r, e in [(np.dot(a, b), np.dot(A34, A45)), (np.median(a, axis=0), np.median(A34, 0)),
                 (np.cov(a), np.cov(A34)), (np.interp(x, XP, V6), np.interp(XQ, XP, V6))]:
        assert isinstance(r, tf.Tensor)
        np.testing.assert_array_equal(r.numpy(), e)


def test_svd_numpy_defaults_and_result_types():
    a = tf.tensor(A34, requires_grad=True)
    r = np.linalg.svd(a)                           # full_matrices=True, NumPy's default
    assert type(r).__name__ == "SVDResult" and r._fields == ("U", "S", "Vh")
    assert r.U.shape == (3, 3) and r.Vh.shape == (4, 4)
    np.testing.assert_allclose((r.U * r.S[None, :]).numpy() @ r.Vh.numpy()[:3], A34, atol=1e-12)
    assert np.linalg.svd(a, full_matrices=False).Vh.shape == (3, 4)
    assert np.linalg.eigh(tf.tensor(spd(3)))._fields == ("eigenvalues", "eigenvectors")
    assert np.linalg.qr(a)._fields == ("Q", "R")
    w = np.linalg.eig(tf.tensor(np.diag([1.0, 2.0]) + np.triu(np.ones((2, 2)), 1)))
    assert w.eigenvalues.dtype == np.float64 and w.eigenvectors.dtype == np.float64
    assert np.linalg.eigvals(tf.tensor([[0.0, -1.0], [1.0, 0.0]])).dtype == np.complex128


def test_nan_functions_edge_values():
    a = tf.tensor([[np.nan, np.nan], [1.0, 2.0]], requires_grad=True)
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        r = np.nanmax(a, axis=1)
    np.testing.assert_array_equal(r.numpy(), [np.nan, 2.0])
    g, = tf.grad(r[1], a)
    np.testing.assert_array_equal(g.numpy(), [[0, 0], [0, 1]])
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        m = np.nanmedian(a, axis=1)
    np.testing.assert_array_equal(m.numpy(), [np.nan, 1.5])
    q = np.quantile(tf.tensor([[1.0, np.nan], [1.0, 3.0]], requires_grad=True), 0.5, axis=1)
    np.testing.assert_array_equal(q.numpy(), [np.nan, 2.0])


def test_quantile_gradient_in_q():
    a = tf.tensor(A45[0])
    q = tf.tensor(0.3, requires_grad=True)
    g, = tf.grad(np.quantile(a, q), q)
    s = np.sort(A45[0])
    assert np.isclose(g.item(), (s[2] - s[1]) * 4)   # h = 4q = 1.2: slope (s2 − s1)·(n − 1)


def test_interp_at_knots_and_outside():
    x = tf.tensor(np.array([XP[0] - 1, XP[2], XP[-1], XP[-1] + 1, np.nan]), requires_grad=True)
    fp = tf.tensor(V6, requires_grad=True)
    y = np.interp(x, XP, fp, left=-7.0)
    np.testing.assert_array_equal(y.numpy(), np.interp(x.numpy(), XP, V6, left=-7.0))
    gx, gfp = tf.grad(tf.sum(y[:4]), [x, fp])
    # at a knot: the slope of the segment to its right; at xp[-1]: of the last segment
    slope = (V6[3] - V6[2]) / (XP[3] - XP[2])
    last = (V6[5] - V6[4]) / (XP[5] - XP[4])
    np.testing.assert_allclose(gx.numpy()[:4], [0, slope, last, 0])
    np.testing.assert_allclose(gfp.numpy(), [0, 0, 1, 0, 0, 2], atol=1e-15)


def test_sinc_second_derivative_at_zero():
    x = tf.tensor(0.0, requires_grad=True)
    g, = tf.grad(np.sinc(x), x, create_graph=True)
    h, = tf.grad(g, x)
    assert g.item() == 0 and np.isclose(h.item(), -np.pi ** 2 / 3)


@pytest.mark.parametrize("call,exc", [
    (lambda a: np.vdot(a, a[:2]), ValueError),
    (lambda a: np.cross(a, a), ValueError),
    (lambda a: np.quantile(a, 1.5), ValueError),
    (lambda a: np.quantile(a, 0.5, method="nope"), ValueError),
    (lambda a: np.cov(a, fweights=[1, 2, 3, 4.5]), TypeError),
    (lambda a: np.cov(a, fweights=[1, 2, -3, 4]), ValueError),
    (lambda a: np.average(a, weights=a[0]), TypeError),
    (lambda a: np.average(a, axis=0, weights=np.zeros(3)), ZeroDivisionError),
    (lambda a: np.split(a, 3, axis=1), ValueError),
    (lambda a: np.interp(a[0], a[0, :2], a[0]), ValueError),
    (lambda a: np.convolve(a, a[0]), ValueError),
    (lambda a: np.gradient(a, edge_order=3), ValueError),
    (lambda a: np.linalg.multi_dot([a]), ValueError),
    (lambda a: np.polyder(a[0], -1), ValueError),
    (lambda a: np.block((a, a)), TypeError),
    (lambda a: np.max(a, where=a.numpy() > 0), ValueError),
    (lambda a: np.select([a.numpy() > 0], [a, a]), ValueError),
], ids=["vdot", "cross", "quantile-range", "quantile-method", "cov-fweights",
        "cov-negative-fweights", "average-axis", "average-zero", "split", "interp",
        "convolve-2d", "gradient-order", "multi_dot", "polyder", "block-tuple",
        "max-where", "select"])
def test_composition_errors(call, exc):
    """Bad arguments raise NumPy's exception class (as NumPy does on the payload), and
    leave no gradient behind."""
    a = tf.tensor(A34, requires_grad=True)
    with pytest.raises(exc):
        call(a)
    with pytest.raises(exc):
        call(_PayloadOnly(A34))
    assert a.grad is None


class _PayloadOnly(np.ndarray):
    """An ndarray with ``.numpy()`` (so the calls above run on NumPy itself as well)."""
    def __new__(cls, a):
        return np.asarray(a).view(cls)

    def numpy(self):
        return np.asarray(self)


# ---- (b) payload functions 
# One call per function the coverage script lists as "payload", with a tensor that requires
# grad wherever the function takes a float input. The result must be NumPy's own: same
# type, dtype and value (or the same exception).
F = A34
IDX = np.array([3, 0, 2, 2])
PAYLOAD_CALLS = {
    "all": lambda T: ((T(F),), {}),
    "allclose": lambda T: ((T(F), T(F + 1e-12)), {}),
    "any": lambda T: ((T(F),), {"axis": 0}),
    "argmax": lambda T: ((T(F),), {"axis": 1}),
    "argmin": lambda T: ((T(F),), {}),
    "argpartition": lambda T: ((T(V6), 2), {}),
    "argsort": lambda T: ((T(F),), {"axis": 0}),
    "argwhere": lambda T: ((T(F),), {}),
    "around": lambda T: ((T(F), 1), {}),
    "array2string": lambda T: ((T(F),), {"precision": 3}),
    "array_equal": lambda T: ((T(F), T(F)), {}),
    "array_equiv": lambda T: ((T(F), T(F[:1])), {}),
    "array_repr": lambda T: ((T(F),), {}),
    "array_str": lambda T: ((T(F),), {}),
    "bitwise_and": lambda T: ((T(IDX), T(IDX[::-1])), {}),
    "bitwise_count": lambda T: ((T(IDX),), {}),
    "bitwise_invert": lambda T: ((T(IDX),), {}),
    "bitwise_left_shift": lambda T: ((T(IDX), 2), {}),
    "bitwise_or": lambda T: ((T(IDX), T(IDX[::-1])), {}),
    "bitwise_right_shift": lambda T: ((T(IDX), 1), {}),
    "bitwise_xor": lambda T: ((T(IDX), 5), {}),
    "busday_count": lambda T: ((T(IDX), T(IDX)), {}),              # NumPy raises: no dates
    "busday_offset": lambda T: ((T(IDX), 1), {}),
    "can_cast": lambda T: ((T(F), np.float32), {}),
    "ceil": lambda T: ((T(F),), {}),
    "common_type": lambda T: ((T(F), T(F.astype(np.float32))), {}),
    "count_nonzero": lambda T: ((T(F),), {"axis": 1}),
    "datetime_as_string": lambda T: ((T(IDX),), {}),
    "diag_indices_from": lambda T: ((T(A33),), {}),
    "digitize": lambda T: ((T(F), T(XP)), {}),
    "einsum_path": lambda T: (("ij,jk,kl->il", T(F), T(A45), T(A52)), {"optimize": "greedy"}),
    "equal": lambda T: ((T(F), T(F.T[0])), {}),
    "fix": lambda T: ((T(F * 3),), {}),
    "flatnonzero": lambda T: ((T(F),), {}),
    "floor": lambda T: ((T(F),), {}),
    "floor_divide": lambda T: ((T(F * 5), T(POS)), {}),
    "gcd": lambda T: ((T(IDX), 6), {}),
    "greater": lambda T: ((T(F), 0.1), {}),
    "greater_equal": lambda T: ((T(F), T(F)), {}),
    "is_busday": lambda T: ((T(IDX),), {}),
    "isclose": lambda T: ((T(F), T(F + 1e-9)), {"rtol": 1e-12}),
    "iscomplex": lambda T: ((T(F),), {}),
    "iscomplexobj": lambda T: ((T(F),), {}),
    "isfinite": lambda T: ((T(WITH_NAN),), {}),
    "isin": lambda T: ((T(F), T(F[0])), {}),
    "isinf": lambda T: ((T(WITH_NAN),), {}),
    "isnan": lambda T: ((T(WITH_NAN),), {}),
    "isnat": lambda T: ((T(F),), {}),                              # NumPy raises: no dates
    "isneginf": lambda T: ((T(F),), {}),
    "isposinf": lambda T: ((T(F),), {}),
    "isreal": lambda T: ((T(F),), {}),
    "isrealobj": lambda T: ((T(F),), {}),
    "ix_": lambda T: ((T(IDX), T(IDX[:2])), {}),
    "lcm": lambda T: ((T(IDX + 1), 4), {}),
    "less": lambda T: ((T(F), T(F.T[0])), {}),
    "less_equal": lambda T: ((T(F), 0.0), {}),
    "lexsort": lambda T: ((T(F),), {}),
    "logical_and": lambda T: ((T(F), T(F)), {}),
    "logical_not": lambda T: ((T(F),), {}),
    "logical_or": lambda T: ((T(F), 0.0), {}),
    "logical_xor": lambda T: ((T(F), T(F)), {}),
    "may_share_memory": lambda T: ((T(F), T(A33)), {}),
    "min_scalar_type": lambda T: ((T(F),), {}),
    "nanargmax": lambda T: ((T(WITH_NAN),), {"axis": 1}),
    "nanargmin": lambda T: ((T(WITH_NAN),), {}),
    "ndim": lambda T: ((T(F),), {}),
    "nextafter": lambda T: ((T(F), 1.0), {}),
    "nonzero": lambda T: ((T(F),), {}),
    "not_equal": lambda T: ((T(F), T(F)), {}),
    "packbits": lambda T: ((T(IDX > 1),), {}),
    "ravel_multi_index": lambda T: (((T(IDX), T(IDX[::-1])), (4, 4)), {}),
    "result_type": lambda T: ((T(F), np.float32), {}),
    "rint": lambda T: ((T(F * 3),), {}),
    "round": lambda T: ((T(F), 2), {}),
    "save": None, "savetxt": None, "savez": None, "savez_compressed": None,   # below
    "searchsorted": lambda T: ((T(XP), T(F)), {}),
    "shape": lambda T: ((T(F),), {}),
    "shares_memory": lambda T: ((T(F), T(A33)), {}),
    "signbit": lambda T: ((T(F),), {}),
    "size": lambda T: ((T(F),), {"axis": 1}),
    "spacing": lambda T: ((T(F),), {}),
    "tril_indices_from": lambda T: ((T(A33),), {"k": -1}),
    "triu_indices_from": lambda T: ((T(A34),), {}),
    "trunc": lambda T: ((T(F * 3),), {}),
    "unpackbits": lambda T: ((T(IDX.astype(np.uint8)),), {}),
    "unravel_index": lambda T: ((T(IDX), (2, 2)), {}),
    "linalg.matrix_rank": lambda T: ((T(F),), {}),
}
SAVERS = {"save": np.save, "savetxt": np.savetxt, "savez": np.savez,
          "savez_compressed": np.savez_compressed}


def _tensor_maker(track):
    def T(a):
        a = np.asarray(a)
        return tf.tensor(a, requires_grad=track and a.dtype.kind in "fc")
    return T


def _numpy_fn(qualname):
    obj = np
    for part in qualname.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


PAYLOAD_NAMES = coverage.classify()["payload"]


def test_payload_table_matches_coverage():
    listed = {n.removeprefix("numpy.") for n in PAYLOAD_NAMES}
    assert listed == set(PAYLOAD_CALLS), (sorted(listed - set(PAYLOAD_CALLS)),
                                          sorted(set(PAYLOAD_CALLS) - listed))


def _outcome(fn, args, kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(*args, **kwargs)
    except Exception as e:   # noqa: BLE001  (the same exception as NumPy's is the contract)
        return "raised", (type(e), str(e))


def _assert_identical(r, e):
    assert type(r) is type(e), (type(r), type(e))
    if isinstance(e, (tuple, list)):
        assert len(r) == len(e)
        for a, b in zip(r, e):
            _assert_identical(a, b)
    elif isinstance(e, (np.ndarray, np.generic)):
        assert r.dtype == e.dtype and r.shape == e.shape
        np.testing.assert_array_equal(r, e)
    else:
        assert r == e


@pytest.mark.parametrize("qualname", PAYLOAD_NAMES)
def test_payload_function(qualname, tmp_path):
    """(b) exactly NumPy's result (type, dtype, value) or exception, for tracked tensors."""
    name = qualname.removeprefix("numpy.")
    fn = _numpy_fn(qualname)
    assert fn in registry.NONDIFF
    if name in SAVERS:
        t = tf.tensor(F, requires_grad=True)
        buf_t, buf_n = io.BytesIO(), io.BytesIO()
        SAVERS[name](buf_t, t)
        SAVERS[name](buf_n, F)
        assert buf_t.getvalue() == buf_n.getvalue() or name.startswith("savez")
        buf_t.seek(0)
        loaded = np.load(buf_t) if name != "savetxt" else np.loadtxt(buf_t)
        values = loaded if name in ("save", "savetxt") else loaded["arr_0"]
        np.testing.assert_array_equal(values, F)
        return
    args_t, kw_t = PAYLOAD_CALLS[name](_tensor_maker(True))
    args_n, kw_n = PAYLOAD_CALLS[name](np.asarray)
    got, expected = _outcome(fn, args_t, kw_t), _outcome(fn, args_n, kw_n)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "raised":
        assert got[1] == expected[1]
    else:
        _assert_identical(got[1], expected[1])


def test_round_returns_numpy_array_for_tracked_tensor():
    t = tf.tensor([1.234, -5.678], requires_grad=True)
    r = np.round(t, 1)
    assert type(r) is np.ndarray and r.dtype == np.float64
    np.testing.assert_array_equal(r, [1.2, -5.7])
    assert type(np.isnan(t)) is np.ndarray and np.ndim(t) == 1 and np.shape(t) == (2,)
    assert type(np.argmax(t)) is np.int64 and np.allclose(t, t) is True


# ---- (c) functions without a rule 
# Every fallback function, with the reason it has no derivative here.
KNOWN_FALLBACK = {
    "numpy.i0": "needs the Bessel function I1 for its derivative (a scipy.special op)",
    "numpy.intersect1d": "its values are entries equal in both inputs; any change that "
                         "separates them removes them, so there is no derivative",
}
FALLBACK_CALLS = {
    "numpy.i0": (np.i0, lambda T: (T(F),)),
    "numpy.intersect1d": (np.intersect1d, lambda T: (T(V6), T(V6[:3]))),
    "numpy.linalg.qr(mode='raw')": (lambda a: np.linalg.qr(a, mode="raw"), lambda T: (T(F),)),
    "numpy.quantile(method='inverted_cdf')": (
        lambda a: np.quantile(a, 0.5, method="inverted_cdf"), lambda T: (T(F),)),
    "numpy.pad(mode='mean')": (lambda a: np.pad(a, 1, mode="mean"), lambda T: (T(F),)),
    "numpy.polyfit(cov=True)": (lambda y: np.polyfit(np.arange(4.0), y, 1, cov=True),
                                lambda T: (T(V4),)),
    "numpy.add.reduce": (np.add.reduce, lambda T: (T(F),)),
}


def test_fallback_list_is_known():
    """A NumPy function nobody handles is a decision, not an accident."""
    assert set(coverage.classify()["fallback"]) == set(KNOWN_FALLBACK)


@pytest.mark.parametrize("label", list(FALLBACK_CALLS))
def test_fallback_plain_and_tracked(label):
    """(c) plain tensors: NumPy's own result (options without a composition of a
    registered function: NumPy's values as Tensors); tracked: UnsupportedADError naming it."""
    fn, make = FALLBACK_CALLS[label]
    plain, expected = fn(*make(_tensor_maker(False))), fn(*make(np.asarray))
    if "(" in label:
        for a, b in zip(_flat(plain), _flat(expected)):
            np.testing.assert_array_equal(np.asarray(a.numpy() if isinstance(a, tf.Tensor)
                                                     else a), b)
    else:
        _assert_identical(plain, expected)
    name = label.split("(")[0]
    with pytest.raises(tf.UnsupportedADError, match=name.replace(".", r"\.")):
        fn(*make(_tensor_maker(True)))


def test_fallback_under_no_grad_runs_numpy():
    t = tf.tensor(F, requires_grad=True)
    with tf.no_grad():
        r = np.i0(t)
    np.testing.assert_array_equal(r, np.i0(F))


# ---- out=, in-place writers, like= 

_OUT_CALLS = [lambda t, o: np.add(t, t, out=o)]


@pytest.mark.parametrize("call,shape", [
    (_OUT_CALLS[0], (3, 3)),
    (lambda t, o: np.sum(t, axis=0, out=o), (3,)),
    (lambda t, o: np.dot(t, t.T, out=o), (3, 3)),
    (lambda t, o: np.median(t, axis=0, out=o), (3,)),
    (lambda t, o: np.nansum(t, axis=0, out=o), (3,)),
    (lambda t, o: np.round(t, out=o), (3, 3)),
    (lambda t, o: np.isnan(t, out=o), (3, 3)),
], ids=["add", "sum", "dot", "median", "nansum", "round", "isnan"])
@pytest.mark.parametrize("track", [False, True])
def test_out_tensor_raises_type_error(call, shape, track):
    t = tf.tensor(A33, requires_grad=track)
    # the out= check comes first, also for a tracked input of a ufunc without a tenferro
    # version (which would otherwise be refused for dropping the gradient)
    with pytest.raises(TypeError, match="out="):
        call(t, tf.zeros(shape))
    assert t.grad is None


@pytest.mark.parametrize("fn,args,hint", [
    (np.put, lambda t: (t, [0, 2], [1.0, 2.0]), "at"),
    (np.copyto, lambda t: (t, A33), "where"),
    (np.place, lambda t: (t, A33 > 0, [0.0]), "at"),
    (np.putmask, lambda t: (t, A33 > 0, 0.0), "where"),
    (np.fill_diagonal, lambda t: (t, 0.0), "at"),
    (np.put_along_axis, lambda t: (t, np.zeros((3, 1), int), 0.0, 1), "at"),
])
def test_inplace_writers_refuse_tensor_destination(fn, args, hint):
    t = tf.tensor(A33)
    with pytest.raises(TypeError, match=f"writes into its first argument.*{hint}"):
        fn(*args(t))
    np.testing.assert_array_equal(t.numpy(), A33)


def test_inplace_writer_with_ndarray_destination():
    dst = np.zeros(3)
    np.copyto(dst, tf.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(dst, [1, 2, 3])
    with pytest.raises(tf.UnsupportedADError, match="copyto"):
        np.copyto(dst, tf.tensor([1.0, 2.0, 3.0], requires_grad=True))


def test_like_creates_tensors():
    t = tf.tensor([1.0])
    z = np.zeros((2, 3), like=t)
    assert isinstance(z, tf.Tensor) and z.shape == (2, 3) and z.dtype == np.float64
    a = np.asarray([1, 2], like=t)
    assert isinstance(a, tf.Tensor) and a.dtype == np.int64
    assert isinstance(np.arange(3, like=t), tf.Tensor)


# ---- where=/initial= 

def test_where_initial_plain_is_numpy():
    t = tf.tensor(A34)
    for f in (lambda a: np.sum(a, where=MASK),
              lambda a: np.max(a, axis=1, where=MASK, initial=0.0),
              lambda a: np.std(a, axis=0, where=MASK), lambda a: np.prod(a, initial=3.0)):
        r = f(t)
        assert isinstance(r, tf.Tensor)
        np.testing.assert_array_equal(r.numpy(), f(A34))


def test_where_without_initial_for_max_raises_like_numpy():
    with pytest.raises(ValueError, match="initial"):
        np.max(tf.tensor(A34, requires_grad=True), where=MASK)


def test_unsupported_option_message_names_function_and_option():
    with pytest.raises(tf.UnsupportedADError, match=r"numpy\.quantile with method='inverted_cdf'"):
        np.quantile(tf.tensor(F, requires_grad=True), 0.5, method="inverted_cdf")


def test_registration_never_overrides_other_modules():
    # the op modules' registrations are kept: np.sort, np.linalg.det are theirs
    assert not registry.FUNCTIONS[np.sort].__module__.startswith("tenferro._numpy")
    assert not registry.FUNCTIONS[np.linalg.det].__module__.startswith("tenferro._numpy")
    assert not set(_numpy.CLAIMED) & set(_numpy.ELSEWHERE)
    for f in _numpy.CLAIMED:
        assert f not in registry.NONDIFF


def test_coverage_script_runs(capsys):
    assert coverage.main(["--group", "fallback"]) == 0
    out = capsys.readouterr().out
    assert "numpy.i0" in out and "dispatching callables" in out


# ---- lists of tensors, np.r_ and np.c_ (issue 24) -------------------------------------------
#
# NumPy dispatches to __array_function__ only for arguments that are arrays: a list holding
# tensors, and np.r_/np.c_'s items, are converted with np.asarray (Tensor.__array__). For
# tracked tensors that raises, naming the call and the tf spelling; the spelling works.

def _pair():
    return (tf.tensor([1.0, -2.0, 0.5], requires_grad=True),
            tf.tensor([3.0, 4.0, -1.5], requires_grad=True))


# (call, words the error must hold, the tf spelling it names, NumPy's reference on arrays)
LIST_CASES = {
    "r_": (lambda x, y: np.r_[x, y], ["np.r_", "tf.concatenate([x, y])"],
           lambda x, y: tf.concatenate([x, y]), lambda a, b: np.r_[a, b]),
    "c_": (lambda x, y: np.c_[x, y], ["np.c_", "tf.stack([x, y], axis=-1)"],
           lambda x, y: tf.stack([x, y], axis=-1), lambda a, b: np.c_[a, b]),
    "mean": (lambda x, y: np.mean([x, y]), ["np.mean got", "tf.mean(tf.stack([x, y]))"],
             lambda x, y: tf.mean(tf.stack([x, y])), lambda a, b: np.mean([a, b])),
    "sum": (lambda x, y: np.sum((x, y), axis=0), ["np.sum got", "tf.sum(tf.stack([x, y]))"],
            lambda x, y: np.sum(tf.stack([x, y]), axis=0), lambda a, b: np.sum((a, b), axis=0)),
    "max": (lambda x, y: np.max([x, y]), ["np.max got", "tf.max(tf.stack([x, y]))"],
            lambda x, y: tf.max(tf.stack([x, y])), lambda a, b: np.max([a, b])),
    "median": (lambda x, y: np.median([x, y]), ["np.median got", "np.median(tf.stack("],
               lambda x, y: np.median(tf.stack([x, y])), lambda a, b: np.median([a, b])),
    "linalg.norm": (lambda x, y: np.linalg.norm([x, y]),
                    ["np.linalg.norm got", "tf.linalg.norm(tf.stack([x, y]))"],
                    lambda x, y: tf.linalg.norm(tf.stack([x, y])),
                    lambda a, b: np.linalg.norm([a, b])),
    "array": (lambda x, y: np.array([x, y]), ["drop its gradient", "tf.stack([x, y])"],
              lambda x, y: tf.stack([x, y]), lambda a, b: np.array([a, b])),
    "ufunc": (lambda x, y: np.exp([x, y]), ["drop its gradient", "tf.stack([x, y])"],
              lambda x, y: np.exp(tf.stack([x, y])), lambda a, b: np.exp([a, b])),
}


@pytest.mark.parametrize("case", sorted(LIST_CASES))
def test_list_of_tracked_tensors_names_the_tf_spelling(case):
    call, words, spelling, ref = LIST_CASES[case]
    x, y = _pair()
    with pytest.raises(tf.UnsupportedADError) as info:
        call(x, y)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    assert x.grad is None and y.grad is None
    # plain tensors: NumPy's own result, as for arrays
    a, b = x.detach(), y.detach()
    np.testing.assert_allclose(np.asarray(call(a, b)), ref(a.numpy(), b.numpy()))
    # the named spelling: the same value, with the gradient
    out = spelling(x, y)
    assert isinstance(out, tf.Tensor) and out.requires_grad
    np.testing.assert_allclose(out.detach().numpy(), ref(a.numpy(), b.numpy()), rtol=1e-14)
    check_grads(lambda u, v: spelling(u, v), [a.numpy(), b.numpy()])


def test_list_of_dual_tensors_raises_too():
    # forward mode carries a derivative as well: the same refusal inside a dual level
    with tf.forward_ad.dual_level():
        d = tf.forward_ad.make_dual(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
        with pytest.raises(tf.UnsupportedADError, match="np.mean got"):
            np.mean([d, d])


@pytest.mark.parametrize("fn", [np.stack, np.concatenate, np.vstack, np.hstack,
                                np.column_stack, np.block, np.dstack])
def test_sequence_functions_dispatch_on_a_list(fn):
    """The functions whose dispatcher lists the sequence's items do reach tenferro: a
    list of tracked tensors keeps its gradient (each piece gets its share)."""
    x, y = _pair()
    out = fn([x, y])
    assert isinstance(out, tf.Tensor) and out.requires_grad
    np.testing.assert_array_equal(out.detach().numpy(), fn([x.numpy(), y.numpy()]))
    gx, gy = tf.grad([tf.sum(out * out)], [x, y])
    np.testing.assert_allclose(gx.numpy(), 2 * x.numpy())
    np.testing.assert_allclose(gy.numpy(), 2 * y.numpy())
