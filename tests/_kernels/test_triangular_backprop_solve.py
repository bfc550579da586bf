"""The fused solve_triangular backprop kernel (tenferro/_kernels/triangular_backprop.pyx)
against its NumPy twin (triangular_backprop_twin.solve_triangular_backprop) and the
recorded-op formulas, and the full solve_triangular gradients that now run on it."""
import itertools

import numpy as np
import pytest

import tenferro as tf
from tenferro._kernels import triangular_backprop_twin as ref
from tenferro._kernels import triangular_backprop as kern
from tenferro.linalg import triangular as tl
from tenferro.testing import check_grads, random_array

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
FLAGS = list(itertools.product([True, False], [0, 1, 2], [False, True], [True, False]))


def tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


def operands(batch_a, batch_x, n, k, dtype, left, rng):
    """a (*batch_a, n, n) with a large diagonal (garbage in the unread triangle), x and
    x̄ (*batch_x, n, k) (left) or (*batch_x, k, n)."""
    a = random_array(batch_a + (n, n), np.complex128 if np.dtype(dtype).kind == "c"
                     else np.float64, rng)
    a[..., np.arange(n), np.arange(n)] += 2.0 * np.sqrt(n) + 2.0
    shape = batch_x + ((n, k) if left else (k, n))
    x = random_array(shape, a.dtype, rng)
    gx = random_array(shape, a.dtype, rng)
    return a.astype(dtype), x.astype(dtype), gx.astype(dtype)


def assert_same(got, want, dtype):
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        if w is None:
            assert g is None
            continue
        assert g.dtype == np.dtype(dtype) and g.shape == w.shape
        scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=0, atol=tol(dtype) * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower,trans,unit,left", FLAGS)
def test_kernel_equals_twin(dtype, lower, trans, unit, left):
    rng = np.random.default_rng(0)
    for n, k in [(1, 1), (5, 3), (7, 9)]:
        a, x, gx = operands((2,), (2,), n, k, dtype, left, rng)
        args = (a, x, gx, lower, trans, unit, left)
        got = kern.solve_triangular_backprop(*args)
        assert_same(got, ref.solve_triangular_backprop(*args), dtype)
        # the other triangle of Ā is exactly zero (and the diagonal, for unit_diagonal)
        kdiag = (-1 if lower else 1) if unit else 0
        keep = np.tril(np.ones((n, n)), kdiag) if lower else np.triu(np.ones((n, n)), kdiag)
        assert not np.any(got[0][..., keep == 0])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower,trans,unit,left", FLAGS)
def test_kernel_equals_recorded_formulas(dtype, lower, trans, unit, left):
    """The Tensor path of _solve_triangular_backprop (create_graph) is the spec."""
    rng = np.random.default_rng(1)
    a, x, gx = operands((3,), (3,), 6, 4, dtype, left, rng)
    got = kern.solve_triangular_backprop(a, x, gx, lower, trans, unit, left)
    want = tl._solve_triangular_backprop(tf.tensor(a), tf.tensor(x), tf.tensor(gx), lower,
                                         trans, unit, left, True, True)
    assert_same(got, tuple(w.numpy() for w in want), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("lower,trans,left", [(True, 0, True), (False, 2, False),
                                              (True, 1, False), (False, 1, True)])
@pytest.mark.parametrize("nb", [1, 3, 64])
def test_column_blocks(dtype, lower, trans, left, nb):
    """Several gemm column blocks, including a ragged last one and blocks of 1."""
    rng = np.random.default_rng(2)
    a, x, gx = operands((), (), 11, 5, dtype, left, rng)
    args = (a, x, gx, lower, trans, False, left)
    try:
        kern._set_block(nb)
        got = kern.solve_triangular_backprop(*args)
    finally:
        kern._set_block(48)
    assert_same(got, ref.solve_triangular_backprop(*args), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
def test_batched_broadcast_and_layouts(dtype, left):
    rng = np.random.default_rng(3)
    # a broadcast over a 2-D batch
    a, x, gx = operands((), (2, 3), 5, 2, dtype, left, rng)
    args = (a, x, gx, True, 2, False, left)
    got = kern.solve_triangular_backprop(*args)
    assert got[0].shape == (2, 3, 5, 5)
    assert_same(got, ref.solve_triangular_backprop(*args), dtype)
    # a batch (3, 1) against x (3, 4); x̄ broadcast with stride 0; x transposed
    # (Fortran-ordered, as the right-side primal returns it); a Fortran-ordered or
    # with negative strides
    a, x, gx = operands((3, 1), (3, 4), 4, 3, dtype, left, rng)
    gxb = np.broadcast_to(gx[:1, :1], gx.shape)
    xt = np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2)
    at = np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    for args in [(a, x, gxb), (at, xt, gx), (a[..., ::-1, ::-1], x, gx.swapaxes(-1, -2)
                                             .copy().swapaxes(-1, -2))]:
        full = args + (False, 1, True, left)
        assert_same(kern.solve_triangular_backprop(*full),
                    ref.solve_triangular_backprop(*full), dtype)


@pytest.mark.parametrize("need_a,need_b", [(True, False), (False, True), (False, False)])
def test_needs(need_a, need_b):
    rng = np.random.default_rng(4)
    a, x, gx = operands((2,), (2,), 4, 3, np.complex128, True, rng)
    args = (a, x, gx, False, 0, False, True, need_a, need_b)
    got = kern.solve_triangular_backprop(*args)
    assert (got[0] is None) != need_a and (got[1] is None) != need_b
    assert_same(got, ref.solve_triangular_backprop(*args), np.complex128)


def test_mixed_dtypes_empty_and_fallback():
    rng = np.random.default_rng(5)
    a, x, gx = operands((), (), 4, 2, np.float64, True, rng)
    xc = x + 1j * gx
    got = kern.solve_triangular_backprop(a, xc, gx, True, 0, False, True)
    assert_same(got, ref.solve_triangular_backprop(a.astype(complex), xc, gx.astype(complex),
                                                   True, 0, False, True), np.complex128)
    # float16 (no LAPACK type) goes to the twin, which rejects it like trtrs does
    h = [v.astype(np.float16) for v in (a, x, gx)]
    with pytest.raises(tf.DTypeError, match="LAPACK needs"):
        kern.solve_triangular_backprop(*h, True, 0, False, True)
    # empty: zero-size results of the right shapes
    for shapes in [((0, 3, 3), (0, 3, 2)), ((3, 3), (3, 0)), ((0, 0), (0, 2))]:
        ea, ex = np.zeros(shapes[0]), np.zeros(shapes[1])
        ga, gb = kern.solve_triangular_backprop(ea, ex, ex, True, 0, False, True)
        assert ga.shape == shapes[0] and gb.shape == shapes[1]
        assert not ga.any()


# ---- the full solve_triangular gradients, now on the kernel ------------------------------

CONFIGS = [(True, 0, False, True, (4, 3)), (False, 2, True, False, (2, 4)),
           (True, 1, False, False, (4,)), (False, 1, False, True, (2, 4, 2))]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower,trans,unit,left,bshape", CONFIGS)
def test_solve_triangular_gradients(dtype, lower, trans, unit, left, bshape):
    rng = np.random.default_rng(6)
    a = random_array((4, 4), dtype, rng)
    a[np.arange(4), np.arange(4)] += 4.0

    def f(a, b):
        return tf.linalg.solve_triangular(a, b, lower=lower, trans=trans,
                                          unit_diagonal=unit, left=left)

    check_grads(f, [a, random_array(bshape, dtype, rng)], modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower,trans,unit,left,bshape", CONFIGS)
def test_plain_backward_equals_create_graph(dtype, lower, trans, unit, left, bshape):
    """The plain backward (kernel) and create_graph (recorded ops) give equal gradients."""
    rng = np.random.default_rng(7)
    a0 = random_array((2, 4, 4), dtype, rng)
    a0[..., np.arange(4), np.arange(4)] += 4.0
    b0 = random_array(bshape, dtype, rng)
    out = []
    for create_graph in (False, True):
        a, b = tf.tensor(a0, requires_grad=True), tf.tensor(b0, requires_grad=True)
        x = tf.linalg.solve_triangular(a, b, lower=lower, trans=trans, unit_diagonal=unit,
                                       left=left)
        g = random_array(x.shape, dtype, np.random.default_rng(8))
        out.append([v.numpy() for v in tf.grad([x], [a, b], [g], create_graph=create_graph)])
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-12)
