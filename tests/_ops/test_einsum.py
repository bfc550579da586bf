"""tf.einsum: values against numpy.einsum, derivatives to second order, path reuse, errors."""
import math
import re

import numpy as np
import opt_einsum
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
    plan = einsum_mod._plan("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5)), "auto")
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
    with pytest.raises(tf.ShapeError, match="has 1 step.*leaves 2 operands uncontracted"):
        tf.einsum("ij,jk,kl->il", *args, optimize=["einsum_path", (0, 1)])
    # one or two operands: no search, but the same check
    for subscripts, ops in (("ij,jk->ik", args[:2]), ("ij->i", args[:1])):
        for bad in ("nope", 3, 1.5, 0, 1, np.int64(0)):
            with pytest.raises(tf.ShapeError,
                               match=re.escape(f"optimize={bad!r} was not understood")):
                tf.einsum(subscripts, *ops, optimize=bad)
    with pytest.raises(tf.ShapeError, match="optimize=3 was not understood"):
        tf.einsum("ij,jk,kl->il", *args, optimize=3)


def test_bad_sublist():
    with pytest.raises(tf.ShapeError, match="sublist"):
        tf.einsum(np.ones(3), [99])


def test_bad_dtype():
    with pytest.raises(tf.DTypeError):
        tf.einsum("i->i", np.array(["a", "b"]))


# ---- contraction order: opt_einsum paths, tensor networks, the path cache ---------------

def lattice(rows, cols, bond, dtype=np.float64, seed=0):
    """A closed rows x cols square-lattice tensor network (open boundary): one tensor per
    site with one index per bond to its neighbours (corner rank 2, edge 3, bulk 4), all
    bonds of dimension ``bond``; the subscripts contract it to a scalar."""
    names, terms = {}, []
    for r in range(rows):
        for c in range(cols):
            term = ""
            for rr, cc in ((r - 1, c), (r, c - 1), (r, c + 1), (r + 1, c)):
                if 0 <= rr < rows and 0 <= cc < cols:
                    bond_key = frozenset({(r, c), (rr, cc)})
                    term += names.setdefault(bond_key, opt_einsum.get_symbol(len(names)))
            terms.append(term)
    arrays = [random_array((bond,) * len(t), dtype, rng=seed + k) / bond
              for k, t in enumerate(terms)]
    return ",".join(terms) + "->", arrays


def test_lattice_20_operands_value():
    subscripts, arrays = lattice(4, 5, 3, np.complex128)
    assert len(arrays) == 20
    want = opt_einsum.contract(subscripts, *arrays, optimize="greedy")
    path, _ = opt_einsum.contract_path(subscripts, *arrays, optimize="greedy")
    np.testing.assert_allclose(np.einsum(subscripts, *arrays, optimize=["einsum_path", *path]),
                               want, rtol=1e-12)
    got = tf.einsum(subscripts, *arrays)
    assert got.shape == () and got.dtype == np.complex128
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lattice_20_operands_grads(dtype):
    # bond 2 keeps the 20 finite-difference evaluations per direction cheap
    subscripts, arrays = lattice(4, 5, 2, dtype, seed=10)
    check_grads(lambda *xs: tf.einsum(subscripts, *xs), arrays, modes=("rev", "fwd"),
                order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lattice_low_precision(dtype):
    subscripts, arrays = lattice(3, 4, 3, dtype, seed=70)
    check_low_precision(lambda *xs: tf.einsum(subscripts, *xs), arrays)


def test_lattice_gradient_matches_leave_one_out_contraction():
    # ∂ scalar / ∂ T_k is the network with T_k removed (its bonds left open): an exact
    # check of the reverse pass along the opt_einsum path against opt_einsum itself
    subscripts, arrays = lattice(4, 4, 3)
    terms = subscripts[:-2].split(",")
    xs = [tf.tensor(a, requires_grad=True) for a in arrays]
    grads = tf.grad([tf.einsum(subscripts, *xs)], xs)
    for k in (0, 1, 5, 15):
        rest = terms[:k] + terms[k + 1:]
        want = opt_einsum.contract(",".join(rest) + "->" + terms[k],
                                   *(arrays[:k] + arrays[k + 1:]))
        np.testing.assert_allclose(grads[k].numpy(), want, rtol=1e-11, atol=1e-14)


def test_default_path_is_opt_einsums_auto_and_far_better_than_numpys_greedy():
    subscripts, arrays = lattice(4, 4, 6)
    path, info = tf.einsum_path(subscripts, *arrays)
    want_path, want_info = opt_einsum.contract_path(subscripts, *arrays, optimize="auto")
    assert path == list(want_path) and info.opt_cost == want_info.opt_cost
    # NumPy's greedy path under its memory cap (what tf.einsum took before) costs ~1000x
    numpy_report = np.einsum_path(subscripts, *arrays, optimize="greedy")[1]
    numpy_flops = float(numpy_report.split("Optimized FLOP count:")[1].split()[0])
    assert numpy_flops > 100 * info.opt_cost
    # tf.einsum runs that path: its plan records the same steps
    plan = einsum_mod._plan(subscripts, tuple(a.shape for a in arrays), "auto")
    assert list(plan.path) == path and len(plan.steps) == 15


ALL_OPTIMIZE = ["auto", "auto-hq", "greedy", "optimal", "dp", "dynamic-programming",
                "branch-all", "branch-2", "branch-1", "random-greedy", "random-greedy-128",
                "eager", "opportunistic", True, False, None]


@pytest.mark.parametrize("optimize", ALL_OPTIMIZE)
def test_every_optimize_option(optimize):
    subscripts = "ab,bcd,de,ecf,fa->"                 # a 5-operand ring with a shared c
    args = _args([(2, 3), (3, 2, 4), (4, 3), (3, 2, 2), (2, 2)], np.complex128, seed=20)
    want = np.einsum(subscripts, *args)
    np.testing.assert_allclose(tf.einsum(subscripts, *args, optimize=optimize).numpy(), want,
                               rtol=1e-12)
    path, info = tf.einsum_path(subscripts, *args, optimize=optimize)
    assert sum(len(step) - 1 for step in path) == 4 and info.opt_cost > 0
    if optimize is False or optimize is None:
        assert path == [(0, 1)] * 4                     # documented: left to right
    check_grads(lambda *xs: tf.einsum(subscripts, *xs, optimize=optimize), args, order=1)


@pytest.mark.parametrize("strategy", ["greedy", "optimal"])
@pytest.mark.parametrize("limit", [0, 1, 8, 24, 10**6, 1e6, np.int64(12), np.float32(30.0)])
def test_numpy_memory_limit_tuple(strategy, limit):
    """NumPy's optimize=(path type, memory limit) (issue 24), as a tuple or a list: the
    value NumPy gives, no pairwise intermediate above the limit (a limit no pair fits
    gives one step over all operands, folded left to right), gradients."""
    subscripts = "ab,bcd,de,ecf,fa->"
    args = _args([(2, 3), (3, 2, 4), (4, 3), (3, 2, 2), (2, 2)], np.complex128, seed=21)
    # (NumPy takes Python numbers only; tenferro NumPy's scalars too)
    np_limit = limit.item() if isinstance(limit, np.generic) else limit
    for opt in ((strategy, limit), [strategy, limit]):
        want = np.einsum(subscripts, *args, optimize=(strategy, np_limit))
        got = tf.einsum(subscripts, *args, optimize=opt)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
        path, info = tf.einsum_path(subscripts, *args, optimize=opt)
        assert sum(len(step) - 1 for step in path) == 4
        if all(len(step) == 2 for step in path):
            assert info.largest_intermediate <= max(int(limit), 1)
        else:                                  # nothing fits: the remaining ones at once
            assert len(path[-1]) > 2
        if int(limit) < 1:
            assert path == [(0, 1, 2, 3, 4)]
        if int(limit) >= 24:                   # every intermediate fits: pairs only
            assert all(len(step) == 2 for step in path)
    # numpy.einsum on tensors dispatches here with the tuple, keeping the gradient
    xs = [tf.tensor(a, requires_grad=True) for a in args]
    out = np.einsum(subscripts, *xs, optimize=(strategy, limit))
    assert isinstance(out, tf.Tensor) and out.requires_grad
    check_grads(lambda *ts: tf.einsum(subscripts, *ts, optimize=(strategy, limit)), args,
                order=2 if limit == 8 else 1)


def test_memory_limit_tuple_cache_and_errors():
    subscripts = "ij,jk,kl->il"
    args = _args([(2, 3), (3, 4), (4, 5)])
    key = einsum_mod._normalize_optimize(("greedy", 1e6))
    assert key == einsum_mod._normalize_optimize(["greedy", 1000000]) and hash(key)
    assert einsum_mod._normalize_optimize(("greedy", math.inf)) == "greedy"   # no limit
    with pytest.raises(tf.ShapeError, match=re.escape("optimize=('nope', 10) was not "
                                                      "understood")):
        tf.einsum(subscripts, *args, optimize=("nope", 10))
    with pytest.raises(tf.ShapeError, match=re.escape("optimize=('nope', 10)")):
        tf.einsum("ij,jk->ik", *args[:2], optimize=("nope", 10))   # no search: still checked
    with pytest.raises(tf.ShapeError, match="memory_limit nan"):
        tf.einsum(subscripts, *args, optimize=("greedy", math.nan))
    with pytest.raises(tf.ShapeError, match="step 0 is 'greedy'"):     # not NumPy's form
        tf.einsum(subscripts, *args, optimize=("greedy",))


def test_optimize_true_is_auto_and_shares_its_plan():
    args = _args([(2, 3), (3, 4), (4, 6), (6, 2)])
    p_true = einsum_mod._plan("ij,jk,kl,lm->im", tuple(a.shape for a in args),
                              einsum_mod._normalize_optimize(True))
    p_auto = einsum_mod._plan("ij,jk,kl,lm->im", tuple(a.shape for a in args), "auto")
    assert p_true is p_auto
    assert tf.einsum_path("ij,jk,kl,lm->im", *args, optimize=True)[0] == \
        tf.einsum_path("ij,jk,kl,lm->im", *args)[0]


def test_path_optimizer_object():
    subscripts, arrays = lattice(3, 3, 2)
    opt = opt_einsum.RandomGreedy(max_repeats=4)
    np.testing.assert_allclose(tf.einsum(subscripts, *arrays, optimize=opt).numpy(),
                               opt_einsum.contract(subscripts, *arrays), rtol=1e-12)


def test_path_search_runs_once_per_key(monkeypatch):
    calls = []
    search = einsum_mod._search_path

    def counting(*a):
        calls.append(a)
        return search(*a)

    monkeypatch.setattr(einsum_mod, "_search_path", counting)
    einsum_mod._plan.cache_clear()
    subscripts, arrays = lattice(4, 5, 2, seed=30)
    xs = [tf.tensor(a, requires_grad=True) for a in arrays]
    for _ in range(3):
        y = tf.einsum(subscripts, *xs)
        tf.grad([y], xs)
    tf.einsum(" " + subscripts, *[a + 1 for a in arrays])    # spaces: same key
    tf.einsum_path(subscripts, *arrays)
    assert len(calls) == 1
    tf.einsum(subscripts, *arrays, optimize="greedy")          # another optimize: new search
    assert len(calls) == 2
    tf.einsum(subscripts, *arrays, optimize=False)             # left to right: no search
    assert len(calls) == 2
    assert einsum_mod._plan.cache_info().maxsize == 1024


def test_explicit_paths_accepted():
    subscripts, arrays = lattice(3, 3, 2, np.complex128, seed=40)
    want = opt_einsum.contract(subscripts, *arrays)
    path, _ = opt_einsum.contract_path(subscripts, *arrays, optimize="dp")
    for optimize in (list(path), tuple(path), [list(s) for s in path],
                     ["einsum_path", *path], np.einsum_path(subscripts, *arrays)[0],
                     [tuple(range(9))],                   # one step with all nine
                     [(0, 1, 2)] + [(0, 1)] * 6,          # a group of three, then pairs
                     [(np.int64(0), np.int64(1))] * 8,   # NumPy ints
                     np.array([(0, 1)] * 8)):             # an int array, one row a step
        got = tf.einsum(subscripts, *arrays, optimize=optimize)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
        assert tf.einsum_path(subscripts, *arrays, optimize=optimize)[1].opt_cost > 0
    check_grads(lambda *xs: tf.einsum(subscripts, *xs, optimize=list(path)), arrays, order=2)


BAD_PATHS = [
    ([(0, 1)] * 7, "has 7 step.*leaves 2 operands uncontracted.*for 9 operands"),
    ([(0, 1)] * 9, "step 8 \\(0, 1\\) names operand 1 but only 1 operand"),
    ([(0, 9)] + [(0, 1)] * 7, "step 0 \\(0, 9\\) names operand 9 but only 9 operand"),
    ([(0, -1)] + [(0, 1)] * 7, "names operand -1"),
    ([(0, 0)] + [(0, 1)] * 7, "names an operand twice"),
    ([()] + [(0, 1)] * 8, "step 0 is \\(\\)"),
    ([(0, 1.0)] + [(0, 1)] * 7, "non-empty tuple of operand positions"),
    ([(True, False)] + [(0, 1)] * 7, "non-empty tuple of operand positions"),
    ([], "has 0 step.*leaves 9 operands"),
    (["einsum_path"], "has 0 step.*leaves 9 operands"),
    ([0, 1], "step 0 is 0"),
]


@pytest.mark.parametrize("path,match", BAD_PATHS)
def test_bad_explicit_path(path, match, monkeypatch):
    subscripts, arrays = lattice(3, 3, 2, seed=50)
    recorded = []
    apply1 = einsum_mod.apply1
    monkeypatch.setattr(einsum_mod, "apply1",
                        lambda *a, **k: recorded.append(a) or apply1(*a, **k))
    xs = [tf.tensor(a, requires_grad=True) for a in arrays]
    with pytest.raises(tf.ShapeError, match=match):
        tf.einsum(subscripts, *xs, optimize=path)
    with pytest.raises(ValueError, match=match):              # ShapeError is a ValueError
        tf.einsum_path(subscripts, *arrays, optimize=path)
    assert recorded == []


def test_einsum_path_report():
    a, b, c = _args([(20, 30), (30, 40), (40, 2)])
    path, info = tf.einsum_path("ij,jk,kl->il", a, b, c)
    # (b c) first: 30*40*2 + 20*30*2 = 3600 multiply-adds, (a b) first 25600
    assert path == [(1, 2), (0, 1)]
    assert info.opt_cost == 2 * 3600
    assert info.opt_cost == opt_einsum.contract_path("ij,jk,kl->il", a, b, c)[1].opt_cost
    assert info.largest_intermediate == 30 * 2
    report = str(info)
    assert "Optimized FLOP count" in report and "Largest intermediate" in report
    assert "ij,jk,kl->il" in report
    # tensors, repeated labels, '...' and broadcast size-1 dims: shapes only, and the path
    # is over the reduced operands tf.einsum contracts
    x = tf.tensor(random_array((3, 3, 4), rng=1), requires_grad=True)
    path, info = tf.einsum_path("iij,...jk,kl->...l", x, np.ones((2, 1, 4, 5)), np.ones((5, 6)))
    assert sum(len(s) - 1 for s in path) == 2 and info.opt_cost > 0
    y = tf.einsum("iij,...jk,kl->...l", x, np.ones((2, 1, 4, 5)), np.ones((5, 6)),
                  optimize=path)
    np.testing.assert_allclose(y.numpy(), np.einsum("iij,...jk,kl->...l", x.numpy(),
                               np.ones((2, 1, 4, 5)), np.ones((5, 6))), rtol=1e-12)
    assert tf.einsum_path("ij->j", a)[0] == [(0,)]
    assert tf.einsum_path(a, [0, 1], b, [1, 2], [0, 2])[0] == [(0, 1)]   # sublist form


@pytest.mark.parametrize("subscripts,shapes", [
    ("...ij,...jk,...kl->...il", [(2, 3, 4), (1, 4, 5), (2, 5, 2)]),   # batched chain
    ("ii,ij,jk,kk->", [(3, 3), (3, 4), (4, 2), (2, 2)]),              # traces in a chain
    ("ab,bc,ca,ad->d", [(2, 3), (3, 4), (4, 2), (2, 5)]),              # a triangle
])
@pytest.mark.parametrize("optimize", ["auto", "optimal", False])
def test_multi_operand_features_along_any_path(subscripts, shapes, optimize):
    args = _args(shapes, np.complex128, seed=60)
    np.testing.assert_allclose(tf.einsum(subscripts, *args, optimize=optimize).numpy(),
                               np.einsum(subscripts, *args), rtol=1e-12)
    check_grads(lambda *xs: tf.einsum(subscripts, *xs, optimize=optimize), args, order=2)
