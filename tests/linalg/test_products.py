"""tf.linalg's array API extension products (tenferro/linalg/products.py): cross, outer,
vecdot, matrix_power, matrix_rank and the array-API spellings diagonal, trace, matmul,
matrix_transpose, tensordot. Values against NumPy, derivatives of every order against
finite differences (float64, complex128, batched and broadcast), single precision, the
array API's signatures and result field names, and every error (nothing recorded)."""
import importlib
import inspect

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import (check_grads, check_low_precision, random_array,
                              random_well_conditioned, record_calls)

prod = importlib.import_module("tenferro.linalg.products")
L = tf.linalg

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
GRAD_DTYPES = [np.float64, np.complex128]


def _rtol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def _close(t, ref, dtype=None):
    assert isinstance(t, tf.Tensor)
    ref = np.asarray(ref)
    assert t.shape == ref.shape and t.dtype == ref.dtype, (t.shape, t.dtype, ref.shape,
                                                           ref.dtype)
    r = _rtol(ref.dtype if dtype is None else dtype) if ref.dtype.kind in "fc" else 0
    np.testing.assert_allclose(t.numpy(), ref, rtol=r, atol=r)


# ==== cross ===============================================================================

CROSS_SHAPES = [((3,), (3,), -1), ((5, 3), (5, 3), -1), ((4, 3), (2, 1, 3), -1),
                ((3,), (2, 3), -1), ((3, 4), (2, 3, 4), -2), ((2, 3, 1), (3, 5), -2),
                ((3, 2), (3, 2), 0), ((2, 3, 2), (2, 3, 2), 1), ((0, 3), (1, 3), -1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2,axis", CROSS_SHAPES)
def test_cross_values(s1, s2, axis, dtype):
    rng = np.random.default_rng(0)
    a, b = random_array(s1, dtype, rng), random_array(s2, dtype, rng)
    _close(L.cross(a, b, axis=axis), np.linalg.cross(a, b, axis=axis))


def test_cross_exact_and_promotion():
    # integer tensors stay integers (the array API's numeric dtypes), exactly
    a, b = np.array([[1, 2, 3], [4, 5, 6]]), np.array([7, -8, 9])
    _close(L.cross(a, b), np.cross(a, b))
    e = np.eye(3)
    _close(L.cross(e[0], e[1]), e[2])                   # x × y = z
    _close(L.cross(e[1], e[0]), -e[2])
    # float32 with complex128 promotes as NumPy does
    x = random_array((3,), np.float32, 1)
    z = random_array((3,), np.complex128, 2)
    _close(L.cross(x, z), np.cross(x, z))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("s1,s2,axis", [((3,), (3,), -1), ((4, 3), (2, 1, 3), -1),
                                        ((3, 4), (2, 3, 4), -2), ((3, 2), (3, 2), 0)])
def test_cross_grads(s1, s2, axis, dtype):
    rng = np.random.default_rng(3)
    a, b = random_array(s1, dtype, rng), random_array(s2, dtype, rng)
    check_grads(lambda x, y: L.cross(x, y, axis=axis), [a, b])


def test_cross_grads_mixed_and_low_precision():
    rng = np.random.default_rng(4)
    a, b = random_array((2, 3), np.float64, rng), random_array((3,), np.complex128, rng)
    check_grads(L.cross, [a, b])                        # real x1: the real part of ā
    check_low_precision(L.cross, [a, random_array((2, 3), np.float64, rng)])
    check_low_precision(L.cross, [random_array((2, 3), np.complex128, rng),
                                  random_array((3,), np.complex128, rng)])


def test_cross_vjp_formula():
    # ā = conj(b) × c̄, b̄ = c̄ × conj(a), against the formula itself
    rng = np.random.default_rng(5)
    a, b, g = (random_array((4, 3), np.complex128, rng) for _ in range(3))
    x, y = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    ga, gb = tf.grad(L.cross(x, y), [x, y], g)
    np.testing.assert_allclose(ga.numpy(), np.cross(b.conj(), g), rtol=1e-13)
    np.testing.assert_allclose(gb.numpy(), np.cross(g, a.conj()), rtol=1e-13)


def test_cross_errors(monkeypatch):
    recorded = record_calls(monkeypatch, prod, "apply1")
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="length 3 along axis -1"):
        L.cross(np.ones(2), np.ones(2))
    with pytest.raises(tf.ShapeError, match="length 3"):      # the axis is not broadcast
        L.cross(x, np.ones((2, 1)))
    with pytest.raises(tf.ShapeError, match="do not broadcast"):
        L.cross(x, np.ones((4, 3)))
    with pytest.raises(tf.ShapeError, match="dimension >= 1"):
        L.cross(x, 2.0)
    with pytest.raises(tf.ShapeError, match="out of range"):
        L.cross(x, np.ones(3), axis=-2)
    with pytest.raises(tf.ShapeError, match="negative axis"):  # ambiguous for two ndims
        L.cross(x, np.ones(3), axis=0)
    with pytest.raises(tf.ShapeError, match="axis must be an int"):
        L.cross(x, x, axis=1.0)
    with pytest.raises(tf.DTypeError, match="numeric"):
        L.cross(np.ones(3, bool), np.ones(3, bool))
    assert recorded == [] and x.grad is None


# ==== outer ===============================================================================

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,m", [(3, 4), (1, 5), (0, 3), (2, 0)])
def test_outer_values(n, m, dtype):
    rng = np.random.default_rng(6)
    a, b = random_array((n,), dtype, rng), random_array((m,), dtype, rng)
    _close(L.outer(a, b), np.linalg.outer(a, b))


def test_outer_integers():
    a, b = np.arange(3), np.arange(-2, 2)
    _close(L.outer(a, b), np.outer(a, b))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_outer_grads(dtype):
    rng = np.random.default_rng(7)
    a, b = random_array((3,), dtype, rng), random_array((4,), dtype, rng)
    check_grads(L.outer, [a, b])
    check_grads(L.outer, [a.real.copy(), b])                 # mixed real / complex
    check_low_precision(L.outer, [a, b])


def test_outer_errors(monkeypatch):
    recorded = record_calls(monkeypatch, prod, "apply1")
    x = tf.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="two 1-D tensors"):
        L.outer(x, np.ones((2, 3)))
    with pytest.raises(tf.ShapeError, match="two 1-D tensors"):
        L.outer(2.0, x)
    assert recorded == [] and x.grad is None


# ==== vecdot ==============================================================================

VECDOT_SHAPES = [((5,), (5,), -1), ((4, 5), (4, 5), -1), ((4, 5), (2, 1, 5), -1),
                 ((5,), (3, 5), -1), ((3, 4), (2, 3, 4), -2), ((2, 3, 1), (3, 5), -2),
                 ((3, 2), (3, 2), 0), ((2, 0), (3, 1, 0), -1), ((0, 3), (1, 3), -1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2,axis", VECDOT_SHAPES)
def test_vecdot_values(s1, s2, axis, dtype):
    rng = np.random.default_rng(8)
    a, b = random_array(s1, dtype, rng), random_array(s2, dtype, rng)
    ref = np.linalg.vecdot(a, b, axis=axis)
    _close(L.vecdot(a, b, axis=axis), ref)
    # the formula of the array API: Σ conj(x1)·x2 along the axis
    ref2 = np.sum(np.conj(np.moveaxis(a, axis, -1)) * np.moveaxis(b, axis, -1), axis=-1)
    np.testing.assert_allclose(ref, ref2, rtol=_rtol(dtype), atol=_rtol(dtype))


def test_vecdot_conjugates_x1():
    # the array API test suite's example: x1 is conjugated
    y = L.vecdot(np.array([1j, 2j, 3j]), np.array([1, 2j, 3]))
    assert complex(y) == 4 - 10j
    assert complex(L.vecdot(np.array([1, 2j, 3]), np.array([1j, 2j, 3j]))) == 4 + 10j
    _close(L.vecdot(np.arange(4), np.arange(4)), np.asarray(14))   # integers stay integers


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("s1,s2,axis", [((5,), (5,), -1), ((4, 5), (2, 1, 5), -1),
                                        ((3, 4), (2, 3, 4), -2), ((3, 2), (3, 2), 0)])
def test_vecdot_grads(s1, s2, axis, dtype):
    rng = np.random.default_rng(9)
    a, b = random_array(s1, dtype, rng), random_array(s2, dtype, rng)
    check_grads(lambda x, y: L.vecdot(x, y, axis=axis), [a, b])


def test_vecdot_grads_mixed_and_low_precision():
    rng = np.random.default_rng(10)
    a, b = random_array((2, 4), np.float64, rng), random_array((4,), np.complex128, rng)
    check_grads(L.vecdot, [a, b])
    check_grads(L.vecdot, [b, a])
    check_low_precision(L.vecdot, [random_array((2, 4), np.complex128, rng),
                                   random_array((4,), np.complex128, rng)])
    check_low_precision(L.vecdot, [a, random_array((3, 1, 4), np.float64, rng)])


def test_vecdot_vjp_formula():
    # ā = conj(ȳ)·b, b̄ = ȳ·a
    rng = np.random.default_rng(11)
    a, b = (random_array((3, 4), np.complex128, rng) for _ in range(2))
    g = random_array((3,), np.complex128, rng)
    x, y = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    ga, gb = tf.grad(L.vecdot(x, y), [x, y], g)
    np.testing.assert_allclose(ga.numpy(), g.conj()[:, None] * b, rtol=1e-14)
    np.testing.assert_allclose(gb.numpy(), g[:, None] * a, rtol=1e-14)


def test_vecdot_nonfinite_propagates():
    """NaN/Inf give NumPy's value (no LinAlgError: no factorization), and the gradient is
    the formula's: ā = conj(ȳ)·b, b̄ = ȳ·a, so the bad entries reach only the other
    operand's gradient; forward mode Σ ȧ·b + a·ḃ likewise."""
    a = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0]])
    b = np.array([[2.0, 1.0, -1.0], [1.0, 3.0, 1.0]])
    with np.errstate(invalid="ignore"):
        _close(L.vecdot(a, b), np.vecdot(a, b))
        _close(tf.vecdot(b, a), np.vecdot(b, a))
    x, y = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    ga, gb = tf.grad(L.vecdot(x, y), [x, y], np.ones(2))
    np.testing.assert_array_equal(ga.numpy(), b)                 # finite: b
    np.testing.assert_array_equal(gb.numpy(), a)                 # a, NaN and inf kept
    _, t = tf.jvp(lambda u: L.vecdot(u, b), [a], [np.zeros_like(a)])
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])        # ȧ = 0: Σ 0·b = 0
    _, t = tf.jvp(lambda v: L.vecdot(a, v), [b], [np.ones_like(b)])
    assert np.isnan(t.numpy()[0]) and t.numpy()[1] == np.inf


def test_vecdot_errors(monkeypatch):
    recorded = record_calls(monkeypatch, prod, "apply1")
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="different lengths, 3 and 4"):
        L.vecdot(x, np.ones(4))
    with pytest.raises(tf.ShapeError, match="not broadcast"):      # 1 against 3
        L.vecdot(x, np.ones((2, 1)))
    with pytest.raises(tf.ShapeError, match="do not broadcast"):
        L.vecdot(x, np.ones((4, 3)))
    with pytest.raises(tf.ShapeError, match="dimension >= 1"):
        L.vecdot(x, 1.0)
    with pytest.raises(tf.ShapeError, match="out of range"):
        L.vecdot(x, np.ones((1, 2, 3)), axis=-3)
    with pytest.raises(tf.ShapeError, match="axis must be an int"):
        L.vecdot(x, x, axis=None)
    assert recorded == [] and x.grad is None


# ==== matrix_power ========================================================================

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4), (0, 0), (2, 0, 0), (0, 3, 3)])
def test_matrix_power_values(shape, dtype):
    rng = np.random.default_rng(12)
    a = random_well_conditioned(shape, dtype, rng) * 0.4
    for n in (-3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 8, 13, 16):
        _close(L.matrix_power(a, n), np.linalg.matrix_power(a, n), dtype)


def test_matrix_power_program():
    # ⌊log₂ n⌋ squarings and popcount(n) − 1 products, and the program computes A^n
    for n in range(2, 130):
        steps = prod._power_program(n)
        assert len(steps) == n.bit_length() - 1 + bin(n).count("1") - 1
        exps = [1]
        for i, j in steps:
            assert i < len(exps) and j < len(exps)
            exps.append(exps[i] + exps[j])
        assert exps[-1] == n


def test_matrix_power_special_exponents():
    a = random_array((2, 3, 3), np.float64, 13)
    x = tf.tensor(a, requires_grad=True)
    assert L.matrix_power(x, 1) is x                        # A¹ = A itself, like NumPy
    y = L.matrix_power(x, np.int8(0))                       # NumPy integers are ints
    _close(y, np.broadcast_to(np.eye(3), (2, 3, 3)))
    (g,) = tf.grad(y, x, np.ones((2, 3, 3)))                # the identity: gradient 0
    assert g is not None and not g.numpy().any()
    _close(L.matrix_power(a, tf.asarray(3)), np.linalg.matrix_power(a, 3))
    # integer input is computed in float64 (a floating-point result, as the spec asks)
    _close(L.matrix_power(np.arange(4).reshape(2, 2), 3),
           np.linalg.matrix_power(np.arange(4.0).reshape(2, 2), 3))
    # positive powers are products: NaN/Inf propagate as in NumPy, no finiteness check
    bad = np.eye(2)
    bad[0, 1] = np.nan
    assert np.isnan(L.matrix_power(bad, 3).numpy()).any()


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 6, -1, -2])
def test_matrix_power_grads(n, dtype):
    a = random_well_conditioned((2, 3, 3), dtype, 14) * 0.4
    check_grads(lambda x: L.matrix_power(x, n), [a])


def test_matrix_power_vjp_formula_and_low_precision():
    # the program's backward equals Ā = Σ_k (Aᴴ)^k Ḡ (Aᴴ)^(n−1−k)
    rng = np.random.default_rng(15)
    a = random_array((4, 4), np.complex128, rng) * 0.5
    g = random_array((4, 4), np.complex128, rng)
    n = 11
    x = tf.tensor(a, requires_grad=True)
    (ga,) = tf.grad(L.matrix_power(x, n), x, g)
    ah = a.conj().T
    ref = sum(np.linalg.matrix_power(ah, k) @ g @ np.linalg.matrix_power(ah, n - 1 - k)
              for k in range(n))
    np.testing.assert_allclose(ga.numpy(), ref, rtol=1e-12)
    check_low_precision(lambda x: L.matrix_power(x, 5), [a])
    check_low_precision(lambda x: L.matrix_power(x, -2),
                        [random_well_conditioned((2, 3, 3), np.float64, 16)])


def test_matrix_power_errors(monkeypatch):
    recorded = record_calls(monkeypatch, prod, "apply1")
    x = tf.tensor(np.ones((2, 3)), requires_grad=True)
    for n in (2.0, 2.5, "2", None, True, np.float64(2), tf.asarray(2.0)):
        with pytest.raises(tf.DTypeError, match="exponent must be an int"):
            L.matrix_power(np.eye(2), n)
    with pytest.raises(tf.ShapeError, match="square"):
        L.matrix_power(x, 2)
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        L.matrix_power(np.ones(3), 2)
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        L.matrix_power(np.float64(2.0), 2)
    sq = tf.tensor(np.ones((2, 2)), requires_grad=True)
    with pytest.raises(tf.LinAlgError, match="singular"):     # n < 0 inverts
        L.matrix_power(sq, -2)
    bad = np.eye(2)
    bad[1, 0] = np.inf
    with pytest.raises(tf.LinAlgError, match="non-finite"):    # inv: LAPACK, checked
        L.matrix_power(bad, -1)
    assert recorded == [] and x.grad is None and sq.grad is None


def test_matrix_power_nonfinite_propagates():
    # n >= 0 multiplies (no factorization): NumPy's NaN/Inf, and the gradient of the
    # products (Σ_k (Aᴴ)^k Ḡ (Aᴴ)^(n−1−k), here with the NaN spread by the products)
    bad = np.array([[1.0, np.nan], [0.5, 2.0]])
    for n in (0, 1, 2, 3):
        with np.errstate(invalid="ignore"):
            _close(L.matrix_power(bad, n), np.linalg.matrix_power(bad, n))
    x = tf.tensor(bad, requires_grad=True)
    (g,) = tf.grad([L.matrix_power(x, 2).sum()], [x])
    ref = np.ones((2, 2)) @ bad.T + bad.T @ np.ones((2, 2))
    np.testing.assert_array_equal(g.numpy(), ref)
    (g,) = tf.grad([L.matrix_power(x, 1).sum()], [x])
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 2)))


# ==== matrix_rank =========================================================================

def _low_rank(batch_ranks, m, n, dtype, rng):
    """A stack of m x n matrices with the given ranks."""
    mats = [random_array((m, r), dtype, rng) @ random_array((r, n), dtype, rng)
            for r in batch_ranks]
    return np.stack(mats).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n", [(5, 4), (3, 6), (4, 4)])
def test_matrix_rank_values(m, n, dtype):
    rng = np.random.default_rng(17)
    a = _low_rank(range(min(m, n) + 1), m, n, dtype, rng)
    r = L.matrix_rank(a)
    assert r.dtype == np.int64 and r.shape == a.shape[:-2]
    np.testing.assert_array_equal(r.numpy(), np.arange(min(m, n) + 1))
    np.testing.assert_array_equal(r.numpy(), np.linalg.matrix_rank(a))
    # rtol: a scalar, an array over the batch (ndarray or Tensor), as numpy's rtol
    s = np.linalg.svd(a, compute_uv=False)
    rtol = np.linspace(0.0, 0.9, a.shape[0])
    for rt in (0.5, rtol, tf.asarray(rtol)):
        np.testing.assert_array_equal(L.matrix_rank(a, rtol=rt).numpy(),
                                      np.linalg.matrix_rank(a, rtol=np.asarray(rt)))
    # the cut is s > rtol·s_max: rtol just below/above a singular-value ratio
    k = s[-1, 1] / s[-1, 0]
    assert int(L.matrix_rank(a[-1], rtol=k * (1 - 1e-6))) >= 2
    assert int(L.matrix_rank(a[-1], rtol=k * (1 + 1e-6))) == 1


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0), (0, 2, 2), (4, 1, 1)])
def test_matrix_rank_edges(shape):
    a = np.ones(shape)
    np.testing.assert_array_equal(L.matrix_rank(a).numpy(), np.linalg.matrix_rank(a))
    np.testing.assert_array_equal(L.matrix_rank(np.zeros((2, 3, 3))).numpy(), [0, 0])


def test_matrix_rank_has_no_gradient():
    x = tf.tensor(_low_rank([2], 3, 3, np.float64, np.random.default_rng(18))[0],
                  requires_grad=True)
    r = L.matrix_rank(x)
    assert int(r) == 2 and r._node is None and not r.requires_grad
    # NumPy's function on a tensor runs on the payload (a non-differentiable function)
    assert np.linalg.matrix_rank(x) == 2
    assert int(L.matrix_rank(np.arange(6).reshape(2, 3))) == 2        # integer input


def test_matrix_rank_errors():
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        L.matrix_rank(np.ones(3))
    with pytest.raises(tf.ShapeError, match="does not broadcast to the batch"):
        L.matrix_rank(np.ones((2, 3, 3)), rtol=np.ones(3))
    with pytest.raises(tf.DTypeError, match="rtol must be a real number"):
        L.matrix_rank(np.ones((3, 3)), rtol=1j)
    bad = np.eye(3)
    bad[0, 0] = np.nan
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        L.matrix_rank(bad)


# ==== diagonal, trace, matmul, matrix_transpose, tensordot ================================

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (2, 1, 3, 3), (0, 2, 2), (2, 0)])
def test_diagonal_trace_values(shape, dtype):
    a = random_array(shape, dtype, 19)
    for k in (-5, -2, -1, 0, 1, 2, 5, 100, -100):
        _close(L.diagonal(a, offset=k), np.linalg.diagonal(a, offset=k))
        _close(L.trace(a, offset=k), np.linalg.trace(a, offset=k))
    # the LAST two axes, unlike numpy.diagonal's default (the first two)
    if len(shape) == 3:
        assert L.diagonal(a).shape == shape[:1] + (min(shape[1:]),)


def test_trace_dtype():
    a = random_array((2, 3, 3), np.float32, 20)
    _close(L.trace(a, dtype=np.float64), np.linalg.trace(a, dtype=np.float64))
    _close(L.trace(a, dtype=np.complex64), np.linalg.trace(a, dtype=np.complex64))
    i8 = np.full((3, 60, 60), 3, np.int8)                   # wraps around in int8
    for dt in (None, np.int8, np.int32, np.uint16, np.float64):
        _close(L.trace(i8, dtype=dt), np.linalg.trace(i8, dtype=dt))
    # a float cast is differentiable: the real input gets the real part of the cotangent
    x = tf.tensor(a.astype(np.float64), requires_grad=True)
    (g,) = tf.grad(L.trace(x, offset=1, dtype=np.complex128), x, np.full(2, 2 + 3j))
    _close(g, np.broadcast_to(np.eye(3, k=1) * 2, (2, 3, 3)))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_diagonal_trace_grads(dtype):
    a = random_array((2, 3, 4), dtype, 21)
    check_grads(lambda x: L.diagonal(x, offset=1), [a])
    check_grads(lambda x: L.trace(x, offset=-1), [a])


def test_structure_spellings():
    rng = np.random.default_rng(22)
    a = random_array((2, 3, 4), np.complex128, rng)
    b = random_array((4, 5), np.float64, rng)
    _close(L.matmul(a, b), np.linalg.matmul(a, b))
    _close(L.matrix_transpose(a), np.linalg.matrix_transpose(a))
    _close(L.tensordot(a, b, axes=1), np.linalg.tensordot(a, b, axes=1))
    _close(L.tensordot(a, a, axes=([0, -1], [0, 2])),
           np.linalg.tensordot(a, a, axes=([0, -1], [0, 2])))
    # the structure ops themselves: the same graph node, no second set of rules
    x = tf.tensor(a, requires_grad=True)
    assert L.matmul(x, b).grad_fn.op.name == "matmul"
    assert L.matrix_transpose(x).grad_fn.op.name == "transpose"
    assert L.tensordot(x, b, axes=1).grad_fn.op.name == "tensordot"
    assert L.diagonal(x).grad_fn.op.name == "diagonal"
    assert L.trace(x).grad_fn.op.name == "trace"
    check_grads(lambda x, y: L.tensordot(x, y, axes=1), [a, b], order=1)


def test_structure_spelling_errors():
    x = tf.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="tf.linalg.diagonal needs a matrix"):
        L.diagonal(x)
    with pytest.raises(tf.ShapeError, match="tf.linalg.trace needs a matrix"):
        L.trace(x)
    with pytest.raises(tf.ShapeError, match="dimension >= 2"):
        L.matrix_transpose(x)
    with pytest.raises(tf.ShapeError, match="do not match"):
        L.matmul(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(tf.DTypeError, match="not supported"):
        L.trace(np.eye(2), dtype=np.float16)
    with pytest.raises(tf.DTypeError, match="not a dtype"):
        L.trace(np.eye(2), dtype="matrix")
    y = tf.tensor(np.eye(2), requires_grad=True)
    with pytest.raises(tf.DTypeError, match="drop the gradient"):
        L.trace(y, dtype=np.int64)
    assert x.grad is None and y.grad is None


# ==== the array API surface ===============================================================

P, K = inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.KEYWORD_ONLY
SIGNATURES = {   # the 2024.12 stubs (extra keyword-only parameters are allowed)
    "cross": [("x1", P), ("x2", P), ("axis", K)],
    "outer": [("x1", P), ("x2", P)],
    "vecdot": [("x1", P), ("x2", P), ("axis", K)],
    "matrix_power": [("x", P), ("n", P)],
    "matrix_rank": [("x", P), ("rtol", K)],
    "diagonal": [("x", P), ("offset", K)],
    "trace": [("x", P), ("offset", K), ("dtype", K)],
    "matmul": [("x1", P), ("x2", P)],
    "matrix_transpose": [("x", P)],
    "tensordot": [("x1", P), ("x2", P), ("axes", K)],
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures(name):
    params = inspect.signature(getattr(L, name)).parameters
    for pname, kind in SIGNATURES[name]:
        assert params[pname].kind == kind, (name, pname)
    assert all(p.kind == K for p in list(params.values())[len(SIGNATURES[name]):])


def test_numpy_functions_dispatch():
    rng = np.random.default_rng(23)
    a = tf.tensor(random_array((2, 3), np.float64, rng), requires_grad=True)
    m = tf.tensor(random_array((3, 3), np.float64, rng), requires_grad=True)
    for out, op in [(np.linalg.cross(a, a), "cross"), (np.vecdot(a, a), "vecdot"),
                    (np.linalg.vecdot(a, a), "vecdot"),
                    (np.linalg.outer(a[0], a[1]), "outer"),
                    (np.linalg.matrix_power(m, 3), "matrix_power"),
                    (np.linalg.diagonal(m), "diagonal"), (np.linalg.trace(m), "trace"),
                    (np.linalg.matmul(m, m), "matmul"),
                    (np.linalg.matrix_transpose(m), "transpose"),
                    (np.linalg.tensordot(m, m), "tensordot")]:
        assert isinstance(out, tf.Tensor) and out.grad_fn.op.name == op
    # the builder spelling
    _close(L.cross_ad(a, a[::-1]).run(), np.cross(a.numpy(), a.numpy()[::-1]))
    _close(tf.vecdot_ad(a, a).run(), np.vecdot(a.numpy(), a.numpy()))


def test_array_api_field_names():
    # the spec's names (eigenvalues/eigenvectors, U/S/Vh, Q/R) beside tenferro's
    a = random_array((3, 3), np.float64, 24)
    h = a + a.T
    for res, fields in [(L.eigh(h), ("eigenvalues", "eigenvectors")),
                        (L.svd(a), ("U", "S", "Vh")), (L.qr(a), ("Q", "R")),
                        (L.slogdet(a), ("sign", "logabsdet")),
                        (L.eig(a), ("eigenvalues", "eigenvectors"))]:
        assert type(res) is not tuple and len(res) == len(fields)
        for i, f in enumerate(fields):
            assert getattr(res, f) is res[i]
    r = L.svd(a)
    assert r.u is r.U and r.vt is r.Vh and L.eigh(h).values.shape == (3,)
