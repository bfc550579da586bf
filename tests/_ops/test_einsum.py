"""tf.einsum: values against numpy.einsum, derivatives to second order, path reuse, errors."""
import numpy as np
import pytest

import tenferro as tf
from tenferro._ops import einsum as einsum_mod
from tenferro.testing import check_grads, check_low_precision, random_array

# (subscripts, operand shapes): every feature of the NumPy syntax
VALUE_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),                     # matmul
    ("ij,jk", [(3, 4), (4, 5)]),                         # implicit output
    ("ji,jk", [(4, 3), (4, 5)]),                         # transposed operand
    ("ba", [(2, 3)]),                                    # implicit transpose
    ("bA", [(2, 3)]),                                    # implicit order: 'A' < 'b' (ASCII)
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(3, 3)]),                                 # diagonal
    ("ii", [(3, 3)]),                                    # trace (implicit)
    ("ii->", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("ij->", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("i,i->", [(4,), (4,)]),                             # inner product
    ("i,j->ij", [(3,), (4,)]),                           # outer product
    ("ij,ij->ij", [(3, 4), (3, 4)]),                     # Hadamard
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),            # batched matmul
    ("ij,kl->", [(2, 3), (4, 5)]),                       # labels summed in one operand only
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),          # chain
    ("abc,cd,de,ea->b", [(2, 3, 4), (4, 5), (5, 6), (6, 2)]),
    (",ij->ij", [(), (2, 3)]),                           # 0-d operand
    (",->", [(), ()]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),   # ellipsis broadcasting
    ("i...", [(2, 3, 4)]),                               # implicit mode with ellipsis
    ("...,...->...", [(2, 3), (3,)]),
    ("ij,jk->ik", [(3, 1), (4, 5)]),                     # size-1 dim broadcasts (NumPy)
    ("ii,i->i", [(3, 3), (3,)]),
    (" ij , jk -> ik ", [(3, 4), (4, 5)]),               # spaces are ignored
]


def _args(shapes, dtype=np.float64, seed=0):
    return [random_array(s, dtype, rng=seed + i) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("subscripts,shapes", VALUE_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_value_matches_numpy(subscripts, shapes, dtype):
    args = _args(shapes, dtype)
    got = tf.einsum(subscripts, *args)
    want = np.einsum(subscripts, *args)
    assert isinstance(got, tf.Tensor) and isinstance(got.numpy(), np.ndarray)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("da,db,want", [
    (np.float32, np.float64, np.float64),
    (np.float64, np.complex64, np.complex128),
    (np.float32, np.complex64, np.complex64),
    (np.float32, np.float32, np.float32),
])
def test_mixed_dtypes_promote(da, db, want):
    a, b = random_array((3, 4), da, rng=1), random_array((4, 2), db, rng=2)
    y = tf.einsum("ij,jk->ik", a, b)
    assert y.dtype == want
    np.testing.assert_allclose(y.numpy(), np.einsum("ij,jk->ik", a, b), rtol=1e-5)
    # gradients keep each operand's dtype (real part for a real operand)
    xa, xb = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    ga, gb = tf.grad([tf.einsum("ij,jk->ik", xa, xb)], [xa, xb],
                     [np.ones((3, 2), dtype=want)])
    assert ga.dtype == a.dtype and gb.dtype == b.dtype
    want_ga = np.ones((3, 2)) @ b.conj().T
    np.testing.assert_allclose(ga.numpy(), want_ga.real if a.dtype.kind == "f" else want_ga,
                               rtol=1e-5)


@pytest.mark.parametrize("optimize", ["greedy", "optimal", True, False,
                                      ["einsum_path", (0, 1, 2, 3)],
                                      ["einsum_path", (2, 3), (0, 1), (0, 1)],
                                      ("einsum_path", (1,), (0, 3), (0, 1, 2))])
def test_optimize_paths(optimize):
    args = _args([(2, 3), (3, 4), (4, 5), (5, 2)])
    y = tf.einsum("ij,jk,kl,lm->im", *args, optimize=optimize)
    np.testing.assert_allclose(y.numpy(), np.einsum("ij,jk,kl,lm->im", *args), rtol=1e-12)
    check_grads(lambda *xs: tf.einsum("ij,jk,kl,lm->im", *xs, optimize=optimize), args,
                order=1)


# a representative subset for derivatives: repeated labels, ellipsis broadcasting,
# implicit mode, chains, 0-d operands, size-1 broadcasting, summed one-operand labels
GRAD_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]),
    (",ij->ij", [(), (2, 3)]),
    ("ij,jk->ik", [(3, 1), (4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
]


@pytest.mark.parametrize("subscripts,shapes", GRAD_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_grads(subscripts, shapes, dtype):
    check_grads(lambda *xs: tf.einsum(subscripts, *xs), _args(shapes, dtype),
                modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("iij->j", [(2, 2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_low_precision(subscripts, shapes, dtype):
    check_low_precision(lambda *xs: tf.einsum(subscripts, *xs), _args(shapes, dtype))


def test_real_and_complex_operands_grads():
    a = random_array((3, 4), np.float64, rng=3)
    b = random_array((4, 2), np.complex128, rng=4)
    check_grads(lambda x, y: tf.einsum("ij,jk->ik", x, y), [a, b], order=2)


def test_hessian_of_quadratic_form():
    # f(x) = xᵀ A x, H = A + Aᵀ: forward-over-reverse through einsum_pair and einsum_reduce
    a = random_array((4, 4), rng=5)
    x, v = random_array((4,), rng=6), random_array((4,), rng=7)
    _, g, hv = tf.hvp(lambda x: tf.einsum("i,ij,j->", x, tf.as_tensor(a), x), [x], [v])
    np.testing.assert_allclose(g[0].numpy(), (a + a.T) @ x, rtol=1e-12)
    np.testing.assert_allclose(hv[0].numpy(), (a + a.T) @ v, rtol=1e-12)


def test_trace_gradient_is_identity():
    x = tf.tensor(random_array((3, 3), rng=8), requires_grad=True)
    (g,) = tf.grad([tf.einsum("ii", x)], [x])
    np.testing.assert_array_equal(g.numpy(), np.eye(3))


# ---- the plan: cached, and the backward pass runs the recorded path in reverse ------------

def test_plan_is_cached():
    args = _args([(2, 3), (3, 4), (4, 6)])
    tf.einsum("ij,jk,kl->il", *args)
    before = einsum_mod._plan.cache_info()
    tf.einsum("ij,jk,kl->il", *[a + 1 for a in args])
    after = einsum_mod._plan.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses
    tf.einsum("ij,jk,kl->il", *_args([(2, 3), (3, 4), (4, 7)]))   # new shapes: new plan
    assert einsum_mod._plan.cache_info().misses == after.misses + 1


def test_backward_follows_the_recorded_path(monkeypatch):
    args = _args([(2, 3), (3, 4), (4, 5)])
    plan = einsum_mod._plan("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5)), "greedy")
    fwd_specs = [step[2] for step in plan.steps]
    assert len(fwd_specs) == 2
    xs = [tf.tensor(a, requires_grad=True) for a in args]
    y = tf.einsum("ij,jk,kl->il", *xs)
    # the graph is two pair contractions, the recorded path
    assert y.grad_fn.op.name == "einsum_pair" and y.grad_fn.ctx is fwd_specs[1]
    inner = [x._node for x in y.grad_fn.inputs if x._node.op is not None]
    assert len(inner) == 1 and inner[0].ctx is fwd_specs[0]

    used = []
    kernel = einsum_mod._pair_kernel

    def spy(a, b, s):
        used.append(s)
        return kernel(a, b, s)

    monkeypatch.setattr(einsum_mod, "_pair_kernel", spy)
    gs = tf.grad([y], xs, [np.ones((2, 5))])
    # the pullback contracts with the VJP specs of the forward steps, last step first,
    # and plans nothing new
    assert used == [fwd_specs[1].vjp_a(), fwd_specs[1].vjp_b(),
                    fwd_specs[0].vjp_a(), fwd_specs[0].vjp_b()]
    a, b, c = args
    g = np.ones((2, 5))
    np.testing.assert_allclose(gs[0].numpy(), g @ (b @ c).T, rtol=1e-12)
    np.testing.assert_allclose(gs[1].numpy(), a.T @ g @ c.T, rtol=1e-12)
    np.testing.assert_allclose(gs[2].numpy(), (a @ b).T @ g, rtol=1e-12)


def test_single_operand_uses_one_reduce():
    x = tf.tensor(random_array((2, 2, 3), rng=9), requires_grad=True)
    y = tf.einsum("iij->j", x)
    assert y.grad_fn.op.name == "einsum_reduce" and y.grad_fn.inputs[0] is x
    # nothing to do: no op at all
    z = tf.tensor(random_array((2, 3), rng=10))
    assert tf.einsum("ij->ij", z) is z


# ---- other spellings ----------------------------------------------------------------------

def test_builder_spelling():
    args = _args([(3, 4), (4, 5)])
    b = tf.einsum_ad("ij,jk->ik", *args)
    np.testing.assert_array_equal(b.run().numpy(), tf.einsum("ij,jk->ik", *args).numpy())
    assert {"einsum", "einsum_ad"} <= set(einsum_mod.__all__)
    assert tf.einsum_ad.__name__ == "einsum_ad"


def test_numpy_einsum_dispatches_to_tenferro():
    a, b = _args([(3, 4), (4, 5)])
    x = tf.tensor(a, requires_grad=True)
    y = np.einsum("ij,jk->ik", x, b)
    assert isinstance(y, tf.Tensor) and y.grad_fn.op.name == "einsum_pair"
    (g,) = tf.grad([y], [x], [np.ones((3, 5))])
    np.testing.assert_allclose(g.numpy(), np.ones((3, 5)) @ b.T, rtol=1e-12)
    y2 = np.einsum("ij,jk->ik", x, b, optimize=True)
    np.testing.assert_allclose(y2.numpy(), a @ b, rtol=1e-12)


def test_sublist_form():
    a, b = _args([(3, 4), (4, 5)])
    y = tf.einsum(a, [0, 1], b, [1, 2], [0, 2])
    np.testing.assert_allclose(y.numpy(), a @ b, rtol=1e-12)
    y = tf.einsum(a, [Ellipsis, 1], b, [1, 2])
    np.testing.assert_allclose(y.numpy(), np.einsum(a, [Ellipsis, 1], b, [1, 2]), rtol=1e-12)


def test_python_scalars_and_lists():
    y = tf.einsum("i,->i", [1.0, 2.0], 3.0)
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])


# ---- errors -----------------------------------------------------------------------------

_A, _B = np.ones((2, 3)), np.ones((4, 5))
ERROR_CASES = [
    ("ij,jk->ik", [_A], "name 2 operand.*but 1 were given"),
    ("ij", [_A, _A], "name 1 operand.*but 2 were given"),
    ("ijk->i", [_A], "operand 0 has 2 dimension.*names 3"),
    ("...ijk->...", [_A], "names 3 besides '...'"),
    ("ij,jk->ik", [_A, _B], "label 'j' has size 3 in operand 0 and 4 in operand 1"),
    ("ii->i", [_A], "repeated in operand 0 over dimensions of different sizes"),
    ("ij->k", [_A], "output label 'k' appears in no input"),
    ("ij->ii", [_A], "output label 'i' is repeated"),
    ("i$->i", [_A[0]], "invalid character '\\$'"),
    ("ij,jk->i,k", [_A, _A.T], "invalid character ','"),
    ("ij->i->j", [_A], "malformed '->'"),
    ("ij-i", [_A], "malformed '->'"),
    ("ij>i", [_A], "malformed '->'"),
    ("..ij->ij", [_A], "malformed ellipsis"),
    ("...i...->i", [_A], "malformed ellipsis"),
    ("ij->i....", [_A], "malformed ellipsis"),
    ("...j->j", [_A], "has no '...'"),
]


@pytest.mark.parametrize("subscripts,ops,match", ERROR_CASES)
def test_errors(subscripts, ops, match, monkeypatch):
    recorded = []
    apply1 = einsum_mod.apply1
    monkeypatch.setattr(einsum_mod, "apply1",
                        lambda *a, **k: recorded.append(a) or apply1(*a, **k))
    xs = [tf.tensor(o, requires_grad=True) for o in ops]
    with pytest.raises(tf.ShapeError, match=match):
        tf.einsum(subscripts, *xs)
    assert recorded == []          # nothing was recorded before the error


def test_bad_optimize():
    args = _args([(2, 3), (3, 4), (4, 5)])
    with pytest.raises(tf.ShapeError, match="optimize='nope' was not understood"):
        tf.einsum("ij,jk,kl->il", *args, optimize="nope")
    with pytest.raises(tf.ShapeError, match="not understood"):
        tf.einsum("ij,jk,kl->il", *args, optimize=["einsum_path", (0, 1)])


def test_bad_sublist():
    with pytest.raises(tf.ShapeError, match="sublist"):
        tf.einsum(np.ones(3), [99])


def test_bad_dtype():
    with pytest.raises(tf.DTypeError):
        tf.einsum("i->i", np.array(["a", "b"]))
