"""tf.linalg.solve and tf.linalg.inv: values against NumPy, derivatives of every order
against finite differences, NumPy 2 right-hand-side rules, errors, and the shared
reference derivatives (../shared/oracles)."""
import importlib

import numpy as np
import pytest

import tenferro as tf
from tenferro._kernels import lapack_lu_chol_twin
from tenferro.testing import (assert_oracle_cases_cover, check_grads, check_low_precision,
                              load_oracle_cases, oracle_case_id, oracle_dir, random_array,
                              random_well_conditioned, replay_oracle_case)

# the module (tf.linalg.solve is the function of the same name)
solve_mod = importlib.import_module("tenferro.linalg.solve")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]

# (a shape, b shape): vector and matrix right-hand sides, batches that broadcast
SHAPES = [
    ((4, 4), (4,)),
    ((4, 4), (4, 3)),
    ((3, 3), (3, 1)),
    ((2, 4, 4), (4,)),          # one vector for a stack of matrices
    ((2, 4, 4), (2, 4, 2)),
    ((4, 4), (3, 4, 2)),        # one matrix for a stack of right-hand sides
    ((2, 1, 3, 3), (4, 3, 1)),  # both batches broadcast
    ((1, 3, 3), (2, 3, 2)),
]


def _args(sa, sb, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return random_well_conditioned(sa, dtype, rng), random_array(sb, dtype, rng)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_solve_value(sa, sb, dtype):
    a, b = _args(sa, sb, dtype)
    x = tf.linalg.solve(a, b)
    ref = np.linalg.solve(a, b)
    assert x.shape == ref.shape and x.dtype == dtype
    rtol = 1e-4 if np.dtype(dtype).itemsize <= 8 and dtype != np.complex128 else 1e-10
    np.testing.assert_allclose(x.numpy(), ref, rtol=rtol, atol=rtol)


def test_solve_mixed_dtypes_promote():
    a, b = _args((3, 3), (3, 2))
    bc = b + 1j * b
    x = tf.linalg.solve(a.astype(np.float32), bc)
    assert x.dtype == np.complex128
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a.astype(np.float32), bc),
                               rtol=1e-5)
    # integers become float64, like numpy
    x = tf.linalg.solve(np.array([[2, 0], [0, 4]]), np.array([2, 2]))
    assert x.dtype == np.float64 and np.allclose(x.numpy(), [1.0, 0.5])


def test_solve_is_numpy_solve_on_tensors():
    a, b = _args((3, 3), (3,))
    x = np.linalg.solve(tf.tensor(a), tf.tensor(b))
    assert isinstance(x, tf.Tensor)
    assert np.allclose(x.numpy(), np.linalg.solve(a, b))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_solve_grads(sa, sb, dtype):
    check_grads(tf.linalg.solve, _args(sa, sb, dtype, seed=1),
                modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("which", [0, 1])
def test_solve_grads_one_input(which):
    # a constant a (or b): only the other input is differentiated, both modes, order 2
    a, b = _args((2, 3, 3), (3, 2), np.complex128, seed=2)
    if which == 0:
        check_grads(lambda x: tf.linalg.solve(x, b), [a])
    else:
        check_grads(lambda x: tf.linalg.solve(a, x), [b])


def test_solve_mixed_dtype_grads():
    # real a, complex b: the cotangent of a is the real part (real dtype)
    a, b = _args((3, 3), (3, 2), seed=3)
    bc = b + 0.5j * b[::-1]
    check_grads(tf.linalg.solve, [a, bc])
    at = tf.tensor(a, requires_grad=True)
    ga, = tf.grad(tf.abs(tf.linalg.solve(at, bc)).sum(), [at])
    assert ga.dtype == np.float64


def test_solve_backward_reuses_the_factorization(monkeypatch):
    a, b = _args((2, 4, 4), (4, 3), seed=4)
    at, bt = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    x = tf.linalg.solve(at, bt)
    calls = []
    getrf = solve_mod._lapack.getrf
    monkeypatch.setattr(solve_mod._lapack, "getrf", lambda *a: calls.append(1) or getrf(*a))
    g = random_array(x.shape, rng=5)
    ga, gb = tf.grad(x, [at, bt], [g])
    assert calls == []   # the pullback ran getrs on the saved factors, no new getrf
    # B̄ = A⁻ᴴX̄ (summed over the broadcast batch), Ā = −B̄Xᴴ
    bbar = np.linalg.solve(np.swapaxes(a, -1, -2), g)
    np.testing.assert_allclose(gb.numpy(), bbar.sum(0), rtol=1e-10)
    np.testing.assert_allclose(ga.numpy(), -bbar @ np.swapaxes(x.numpy(), -1, -2),
                               rtol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", [((40, 40), (40, 40)), ((2, 48, 48), (2, 48, 30)),
                                   ((40, 40), (40, 19)), ((2, 1, 36, 36), (2, 1, 36, 36))])
def test_many_right_hand_sides_take_the_recursive_solves(sa, sb, dtype, monkeypatch):
    # n > 32 with k >= n/2 (batches equal): A⁻¹B and A⁻ᴴB by two recursive solves
    # around the row order of the pivots (complex Aᴴ stays on getrs); the same values
    # as getrs, and the gradients of solve against finite differences
    rng = np.random.default_rng(12)
    n = sa[-1]
    a = random_array(sa, dtype, rng) + 2 * np.sqrt(n) * np.eye(n, dtype=dtype)
    b = random_array(sb, dtype, rng)
    lu, piv = solve_mod._lapack.getrf(a)
    tol = 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11
    real = np.dtype(dtype).kind == "f"
    routes = []
    for trans in (0, 2):
        routes.append(solve_mod._trsm_route(lu, b, trans))
        assert routes[-1] == (2 * sb[-1] >= n and (trans == 0 or real))
        want = solve_mod._lapack.getrs(lu, piv, b, trans)
        got = solve_mod._lu_solve(lu, piv, b, trans)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
    if np.dtype(dtype) in (np.float64, np.complex128) and sa == (40, 40):
        check_grads(tf.linalg.solve, [a, b], modes=("rev", "fwd"), order=1)
    # the route is what a plain solve forward and backward use
    calls = []
    route = solve_mod._trsm_route
    monkeypatch.setattr(solve_mod, "_trsm_route", lambda *x: calls.append(route(*x)) or
                        calls[-1])
    at = tf.tensor(a, requires_grad=True)
    tf.grad([tf.linalg.solve(at, b)], [at], [random_array(b.shape, dtype, rng)])
    assert calls == routes                  # forward A⁻¹B, backward A⁻ᴴX̄


def test_many_right_hand_sides_stay_on_getrs_when_batches_differ():
    rng = np.random.default_rng(13)
    a = random_array((40, 40), np.float64, rng) + 13 * np.eye(40)
    b = random_array((3, 40, 40), np.float64, rng)
    lu, piv = solve_mod._lapack.getrf(a)
    assert not solve_mod._trsm_route(lu, b, 0)
    np.testing.assert_allclose(tf.linalg.solve(a, b).numpy(), np.linalg.solve(a, b),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("sa,sb", [((4, 4), (4,)), ((2, 3, 3), (2, 3, 2))])
def test_solve_low_precision(sa, sb, dtype):
    check_low_precision(tf.linalg.solve, _args(sa, sb, dtype, seed=6))


@pytest.mark.parametrize("sa,sb", [
    ((0, 0), (0,)), ((0, 0), (0, 3)), ((2, 0, 0), (2, 0, 3)), ((0, 3, 3), (0, 3, 2)),
    ((0, 3, 3), (3,)), ((3, 3), (3, 0)), ((2, 3, 3), (0, 1, 3, 1)),
])
def test_solve_empty(sa, sb):
    a, b = _args(sa, sb)
    at, bt = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    x = tf.linalg.solve(at, bt)
    assert x.shape == np.linalg.solve(a, b).shape
    ga, gb = tf.grad(x, [at, bt], [np.ones(x.shape)])
    assert ga.shape == a.shape and gb.shape == b.shape
    assert not ga.numpy().any() and not gb.numpy().any()
    _, t = tf.jvp(tf.linalg.solve, [a, b], [np.ones(sa), np.ones(sb)])
    assert t.shape == x.shape


def _singular_stack():
    a = random_well_conditioned((2, 3, 4, 4), rng=7)
    a[1, 2, :, 1] = a[1, 2, :, 0]       # matrix (1, 2) has two equal columns
    a[1, 2, :, 3] = 0.0                 # and a zero column: an exact zero pivot
    return a


def test_solve_singular_names_the_batch_index():
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1, 2\) of the stack is singular"):
        tf.linalg.solve(_singular_stack(), np.ones(4))
    with pytest.raises(np.linalg.LinAlgError, match="the matrix is singular"):
        tf.linalg.solve(np.zeros((3, 3)), np.ones(3))


def test_inv_singular_names_the_batch_index():
    with pytest.raises(tf.LinAlgError, match=r"matrix \(1, 2\) of the stack is singular.*pinv"):
        tf.linalg.inv(_singular_stack())
    with pytest.raises(tf.LinAlgError, match="the matrix is singular"):
        tf.tensor([[1.0, 2.0], [2.0, 4.0]]).inv()


def test_solve_in_rule():
    # the helper other rules use: plain LU on ndarrays, differentiable solve on Tensors
    a, b = _args((2, 3, 3), (3, 2), seed=12)
    np.testing.assert_allclose(solve_mod.solve_in_rule(a, b), np.linalg.solve(a, b),
                               rtol=1e-12)
    y = solve_mod.solve_in_rule(tf.tensor(a), b)
    assert isinstance(y, tf.Tensor) and np.allclose(y.numpy(), np.linalg.solve(a, b))
    with pytest.raises(tf.LinAlgError, match="my rule: the matrix is singular"):
        solve_mod.solve_in_rule(np.zeros((2, 2)), np.eye(2), "my rule")


SOLVE_ERRORS = [
    ((3, 4), (3,), "square coefficient matrix.*lstsq"),        # wide
    ((4, 3), (4,), "square coefficient matrix.*lstsq"),        # tall
    ((4,), (4,), "ndim >= 2"),
    ((3, 3), (4,), "the vector b must have length 3"),
    ((3, 3), (4, 2), "b must have 3 rows"),
    ((2, 3, 3), (2, 3), r"b must have 3 rows.*b\[\.\.\., None\]"),   # NumPy 2: not a vector
    ((2, 3, 3), (3, 3, 1), "do not broadcast"),
    ((3, 3), (), "0-d"),
]


@pytest.mark.parametrize("sa,sb,match", SOLVE_ERRORS)
def test_solve_shape_errors(sa, sb, match, monkeypatch):
    recorded = []
    apply1 = solve_mod.apply1
    monkeypatch.setattr(solve_mod, "apply1", lambda *a, **k: recorded.append(a) or apply1(*a))
    at = tf.tensor(np.ones(sa), requires_grad=True)
    bt = tf.tensor(np.ones(sb), requires_grad=True)
    with pytest.raises(tf.ShapeError, match=match):
        tf.linalg.solve(at, bt)
    assert recorded == [] and at.grad is None


def test_inv_shape_errors():
    with pytest.raises(tf.ShapeError, match="square"):
        tf.linalg.inv(np.ones((2, 3)))
    with pytest.raises(tf.ShapeError, match="ndim >= 2"):
        tf.linalg.inv(np.ones(3))


def test_non_finite_and_dtypes(monkeypatch):
    recorded = []
    apply1 = solve_mod.apply1
    monkeypatch.setattr(solve_mod, "apply1", lambda *a, **k: recorded.append(a) or apply1(*a))
    a, b = _args((3, 3), (3,))
    bad = a.copy()
    bad[1, 2] = np.nan
    for args in ((bad, b), (a, np.array([1.0, np.inf, 0.0]))):
        with pytest.raises(tf.LinAlgError, match="non-finite"):
            tf.linalg.solve(*[tf.tensor(x, requires_grad=True) for x in args])
    with pytest.raises(tf.LinAlgError, match="non-finite"):
        tf.linalg.inv(bad)
    with pytest.raises(tf.DTypeError):
        tf.linalg.solve(a.astype(object), b)
    with pytest.raises(tf.DTypeError):
        tf.linalg.inv(a.astype(object))
    assert recorded == []
    # opting out lets LAPACK see the NaN
    assert np.isnan(tf.linalg.solve(bad, b, check_finite=False).numpy()).any()


# ---- inv ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3)])
def test_inv_value(shape, dtype):
    a = random_well_conditioned(shape, dtype, rng=8)
    y = tf.linalg.inv(a)
    tol = 1e-10 if dtype in (np.float64, np.complex128) else 1e-4
    assert y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), np.linalg.inv(a), rtol=tol, atol=tol)
    assert np.allclose(tf.tensor(a).inv().numpy(), y.numpy())


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_inv_grads(shape, dtype):
    a = random_well_conditioned(shape, dtype, rng=9)
    check_grads(tf.linalg.inv, [a], modes=("rev", "fwd"), order=2)
    check_low_precision(tf.linalg.inv, [a])


@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)])
def test_inv_empty(shape):
    at = tf.tensor(np.zeros(shape), requires_grad=True)
    y = tf.linalg.inv(at)
    assert y.shape == shape
    g, = tf.grad(y, [at], [np.ones(shape)])
    assert g.shape == shape


def test_builders():
    a, b = _args((3, 3), (3, 2))
    assert np.allclose(tf.solve_ad(a, b).run().numpy(), np.linalg.solve(a, b))
    assert np.allclose(tf.linalg.inv_ad(a).run().numpy(), np.linalg.inv(a))


# ---- shared reference derivatives (PyTorch 2.10 OpInfo samples) --------------------------

ORACLES = oracle_dir(__file__)


def _torch_solve(a, b):
    """torch.linalg.solve's rule: b is a (batch of) vector(s) when b.ndim == a.ndim − 1
    and its shape is a's batch + (n,); NumPy 2 (tenferro) wants b[..., None] for that."""
    if b.ndim == a.ndim - 1 and b.shape == a.shape[:-1] and b.ndim > 1:
        return tf.linalg.solve(a, b[..., None])[..., 0]
    return tf.linalg.solve(a, b)


def _replay(case, fn):
    assert case["observable"]["kind"] == "identity"
    assert not case.get("op_kwargs") and not case.get("op_args")
    replay_oracle_case(case, fn, ["value"])


SOLVE_CASES = load_oracle_cases(["solve"], ORACLES)
INV_CASES = load_oracle_cases(["inv"], ORACLES)


def test_oracle_cases_found():
    assert_oracle_cases_cover(SOLVE_CASES + INV_CASES,
                              {"solve": {"identity"}, "inv": {"identity"}}, ORACLES)
    assert len(SOLVE_CASES) >= 40 and len(INV_CASES) >= 16


@pytest.mark.parametrize("case", SOLVE_CASES, ids=oracle_case_id)
def test_oracle_solve(case):
    _replay(case, _torch_solve)


@pytest.mark.parametrize("case", INV_CASES, ids=oracle_case_id)
def test_oracle_inv(case):
    _replay(case, tf.linalg.inv)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 1), (7, 4, 2), (3, 16, 16), (2, 20, 3), (33, 1)])
def test_pullback_fused_outer_product(dtype, shape):
    """The solve pullback's B̄ = A⁻ᴴX̄ and Ā = −B̄Xᴴ in one getrs call (outer=X): the same
    as getrs then a matmul, for every dtype; loops up to side 16, NumPy's matmul beyond."""
    rng = np.random.default_rng(len(shape) * 7 + shape[-2])
    n = shape[-2]
    a = random_array(shape[:-1] + (n,), dtype, rng) + 3 * np.eye(n, dtype=dtype)
    lu, piv = solve_mod._lapack.getrf(a)
    g, x = random_array(shape, dtype, rng), random_array(shape, dtype, rng)
    gb, ga = solve_mod._lapack.getrs(lu, piv, g, 2, outer=x)
    want_gb = solve_mod._lapack.getrs(lu, piv, g, 2)
    np.testing.assert_array_equal(gb, want_gb)
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-13
    np.testing.assert_allclose(ga, -(want_gb @ np.conj(np.swapaxes(x, -1, -2))),
                               rtol=tol, atol=tol)
    twin_gb, twin_ga = lapack_lu_chol_twin.getrs(lu, piv, g, 2, outer=x)
    np.testing.assert_allclose(ga, twin_ga, rtol=10 * tol, atol=10 * tol)
    # an outer of another shape or dtype: the NumPy product, same result
    gb2, ga2 = solve_mod._lapack.getrs(lu, piv, g, 2, outer=x.astype(np.complex128))
    np.testing.assert_allclose(ga2, -(want_gb @ np.conj(np.swapaxes(x, -1, -2))),
                               rtol=tol, atol=tol)
    if len(shape) == 3 and np.dtype(dtype) in (np.float64, np.complex128):
        check_grads(lambda A, B: tf.linalg.solve(A, B), [a, x], modes=("rev",), order=1)
