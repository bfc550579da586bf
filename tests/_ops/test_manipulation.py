"""Manipulation and indexing functions: values against NumPy (float, complex, int, bool),
derivatives (rev, fwd, second order), accumulation at repeated indices, NumPy spellings,
errors."""
import numpy as np
import pytest

import tenferro as tf
from tenferro._ops import manipulation, structure
from tenferro.testing import check_grads, check_low_precision, random_array, record_calls

IDX = np.array([2, 0, 2, -1, 2])                         # repeats and a negative index
IDX2 = np.array([[0, 3], [3, 3], [-4, 1]])               # 2-D indices (NumPy's take)
ALONG = np.array([[[1, 1, 0, -1]], [[2, 2, 2, 0]]])      # (2, 1, 4): broadcast on axis 1
ALONG_X = np.array([[[0, 2], [1, 1], [-1, 0]]])          # (1, 3, 2) for x of shape (3, 1, 2)
REPS = np.array([2, 0, 3])

# (id, function of tensors, input shapes). Each case: value against NumPy (the same
# function on ndarrays unless _NP_REF has another spelling) for four dtypes, check_grads
# of f and of f squared (so the rules themselves are differentiated), single precision.
CASES = [
    ("flip", lambda a: tf.flip(a), [(2, 3, 4)]),
    ("flip-axis", lambda a: tf.flip(a, axis=1), [(2, 3, 4)]),
    ("flip-axes", lambda a: tf.flip(a, axis=(-1, 0)), [(2, 3, 4)]),
    ("np.flip", lambda a: np.flip(a, 0), [(3, 4)]),
    ("np.fliplr", lambda a: np.fliplr(a), [(3, 4)]),
    ("np.flipud", lambda a: np.flipud(a), [(3, 4)]),
    ("roll-flat", lambda a: tf.roll(a, 5), [(3, 4)]),
    ("roll-axis", lambda a: tf.roll(a, -1, axis=1), [(2, 3, 4)]),
    ("roll-axes", lambda a: tf.roll(a, (1, 7), axis=(0, -1)), [(2, 3, 4)]),
    ("roll-int-axes", lambda a: tf.roll(a, 2, axis=(1, 2)), [(2, 3, 4)]),
    ("np.roll", lambda a: np.roll(a, (2, 1), axis=(1, 1)), [(3, 4)]),
    ("repeat", lambda a: tf.repeat(a, 2), [(3, 2)]),
    ("repeat-axis", lambda a: tf.repeat(a, 3, axis=-1), [(2, 3, 2)]),
    ("repeat-counts", lambda a: tf.repeat(a, tf.tensor(REPS), axis=1), [(2, 3, 2)]),
    ("repeat-count1", lambda a: tf.repeat(a, np.array([2]), axis=0), [(3, 2)]),
    ("np.repeat", lambda a: np.repeat(a, REPS, 0), [(3, 2)]),
    ("tile", lambda a: tf.tile(a, (2, 3)), [(3, 2)]),
    ("tile-more-reps", lambda a: tf.tile(a, (2, 1, 3)), [(3, 2)]),
    ("tile-fewer-reps", lambda a: tf.tile(a, (2,)), [(2, 3, 2)]),
    ("np.tile", lambda a: np.tile(a, 3), [(3, 2)]),
    ("unstack", lambda a: tf.unstack(a), [(3, 2)]),
    ("unstack-axis", lambda a: tf.unstack(a, axis=-1), [(2, 3, 2)]),
    ("broadcast_arrays", lambda a, b: tf.broadcast_arrays(a, b), [(3, 1), (2, 1, 4)]),
    ("np.broadcast_arrays", lambda a, b: np.broadcast_arrays(a, b), [(3, 1), (4,)]),
    ("permute_dims", lambda a: tf.permute_dims(a, (2, 0, 1)), [(2, 3, 4)]),
    ("expand_dims", lambda a: tf.expand_dims(a, axis=-1), [(2, 3)]),
    ("expand_dims-tuple", lambda a: tf.expand_dims(a, axis=(0, -1)), [(2, 3)]),
    ("take", lambda a: tf.take(a, IDX), [(3,)]),
    ("take-axis", lambda a: tf.take(a, tf.tensor(IDX), axis=1), [(2, 3, 4)]),
    ("take-2d-indices", lambda a: np.take(a, IDX2, axis=-1), [(3, 4)]),
    ("np.take-flat", lambda a: np.take(a, [5, 0, 5]), [(2, 3)]),
    ("np.take-wrap", lambda a: np.take(a, [7, -9, 1], 0, mode="wrap"), [(4, 2)]),
    ("np.take-clip", lambda a: np.take(a, [7, -9, 1], 0, mode="clip"), [(4, 2)]),
    ("take_along_axis", lambda a: tf.take_along_axis(a, ALONG, axis=2), [(2, 3, 3)]),
    ("take_along_axis-bcast-idx", lambda a: tf.take_along_axis(a, ALONG[:, :, :2], axis=0),
     [(3, 4, 2)]),
    ("take_along_axis-bcast-x", lambda a: tf.take_along_axis(a, ALONG_X, axis=0),
     [(3, 1, 2)]),
    ("np.take_along_axis", lambda a: np.take_along_axis(a, IDX2, 1), [(3, 4)]),
    ("np.take_along_axis-flat", lambda a: np.take_along_axis(a, IDX, None), [(3, 1)]),
    ("tril", lambda a: tf.tril(a), [(3, 4)]),
    ("tril-k-batch", lambda a: tf.tril(a, k=1), [(2, 4, 3)]),
    ("triu", lambda a: tf.triu(a), [(4, 3)]),
    ("triu-k-batch", lambda a: tf.triu(a, k=-1), [(2, 3, 4)]),
    ("np.tril-vector", lambda a: np.tril(a, -1), [(3,)]),
    ("np.triu", lambda a: np.triu(a, 2), [(3, 4)]),
    ("meshgrid", lambda a, b, c: tf.meshgrid(a, b, c), [(2,), (3,), (4,)]),
    ("meshgrid-ij", lambda a, b: tf.meshgrid(a, b, indexing="ij"), [(2,), (3,)]),
    ("np.meshgrid-sparse", lambda a, b: np.meshgrid(a, b, sparse=True), [(2,), (3,)]),
]
if hasattr(np, "unstack"):   # NumPy >= 2.1
    CASES.append(("np.unstack", lambda a: np.unstack(a, axis=1), [(2, 3)]))

_NP_REF = {
    "flip": np.flip,
    "flip-axis": lambda a: np.flip(a, 1),
    "flip-axes": lambda a: np.flip(a, (-1, 0)),
    "roll-flat": lambda a: np.roll(a, 5),
    "roll-axis": lambda a: np.roll(a, -1, 1),
    "roll-axes": lambda a: np.roll(a, (1, 7), (0, -1)),
    "roll-int-axes": lambda a: np.roll(a, 2, (1, 2)),
    "repeat": lambda a: np.repeat(a, 2),
    "repeat-axis": lambda a: np.repeat(a, 3, -1),
    "repeat-counts": lambda a: np.repeat(a, REPS, 1),
    "repeat-count1": lambda a: np.repeat(a, 2, 0),
    "tile": lambda a: np.tile(a, (2, 3)),
    "tile-more-reps": lambda a: np.tile(a, (2, 1, 3)),
    "tile-fewer-reps": lambda a: np.tile(a, (2,)),
    "unstack": lambda a: tuple(a),
    "unstack-axis": lambda a: tuple(np.moveaxis(a, -1, 0)),
    "broadcast_arrays": np.broadcast_arrays,
    "permute_dims": lambda a: np.transpose(a, (2, 0, 1)),
    "expand_dims": lambda a: a[..., None],
    "expand_dims-tuple": lambda a: a[None, ..., None],
    "take": lambda a: a[IDX],
    "take-axis": lambda a: a[:, IDX],
    "take_along_axis": lambda a: np.take_along_axis(a, ALONG, 2),
    "take_along_axis-bcast-idx": lambda a: np.take_along_axis(a, ALONG[:, :, :2], 0),
    "take_along_axis-bcast-x": lambda a: np.take_along_axis(a, ALONG_X, 0),
    "tril": np.tril,
    "tril-k-batch": lambda a: np.tril(a, 1),
    "triu": np.triu,
    "triu-k-batch": lambda a: np.triu(a, -1),
    "meshgrid": np.meshgrid,
    "meshgrid-ij": lambda a, b: np.meshgrid(a, b, indexing="ij"),
}

IDS = [c[0] for c in CASES]


def _args(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "fc":
        return [random_array(s, dtype, rng) for s in shapes]
    if dtype == np.bool_:
        return [rng.random(s) < 0.5 for s in shapes]
    return [rng.integers(-100, 100, s) for s in shapes]


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64, np.bool_])
@pytest.mark.parametrize("name,f,shapes", CASES, ids=IDS)
def test_value_matches_numpy(name, f, shapes, dtype):
    args = _args(shapes, dtype)
    out = f(*[tf.tensor(a) for a in args])
    ref = _NP_REF.get(name, f)(*args)
    outs, refs = _outputs(out), _outputs(ref)
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert isinstance(o, tf.Tensor)
        assert o.shape == np.shape(r) and o.dtype == np.asarray(r).dtype == dtype
        np.testing.assert_array_equal(o.numpy(), r)


def _square(out):
    if isinstance(out, (tuple, list)):
        return tuple(o * o for o in out)
    return out * out


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("name,f,shapes", CASES, ids=IDS)
def test_grads(name, f, shapes, dtype):
    args = _args(shapes, dtype, seed=1)
    check_grads(f, args, modes=("rev", "fwd"), order=2)
    # linear ops: squaring feeds input-dependent cotangents/tangents into the rules, so the
    # second-order check differentiates the adjoint ops (scatter-add, roll back, stack...)
    check_grads(lambda *xs: _square(f(*xs)), args, modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("name,f,shapes", CASES, ids=IDS)
def test_low_precision(name, f, shapes, dtype):
    check_low_precision(f, _args(shapes, dtype, seed=2))


def test_int_results_carry_no_gradient():
    t = tf.tensor([[1, 2], [3, 4]])
    for out in (tf.flip(t), tf.roll(t, 1), tf.take(t, [1], axis=0), tf.tril(t),
                tf.repeat(t, 2), tf.tile(t, (2,)), *tf.unstack(t), *tf.meshgrid(t[0], t[1])):
        assert out.dtype == np.int64 and not out.requires_grad


def test_non_finite_values_pass_through():
    x = np.array([[np.nan, np.inf], [-np.inf, 1.0]])
    t = tf.tensor(x, requires_grad=True)
    np.testing.assert_array_equal(tf.flip(t).numpy(), np.flip(x))
    np.testing.assert_array_equal(tf.take(t, [1, 1], axis=1).numpy(), x[:, [1, 1]])
    np.testing.assert_array_equal(tf.tril(t).numpy(), np.tril(x))
    (g,) = tf.grad(tf.roll(t, 1).sum(), [t])
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 2)))


# ---- repeated indices and copies accumulate in the gradient ------------------------------

@pytest.mark.parametrize("f,expected", [
    (lambda x: tf.take(x, [0, 0, 2, 0]), [3.0, 0.0, 1.0]),
    (lambda x: np.take(x, [[0, -3], [2, 0]]), [3.0, 0.0, 1.0]),
    (lambda x: tf.take_along_axis(x, np.array([0, 2, 0, 0]), axis=0), [3.0, 0.0, 1.0]),
    (lambda x: tf.repeat(x, [3, 0, 1]), [3.0, 0.0, 1.0]),
    (lambda x: tf.repeat(x, 2), [2.0, 2.0, 2.0]),
    (lambda x: tf.tile(x, (2, 2)), [4.0, 4.0, 4.0]),
    (lambda x: tf.meshgrid(x, x[:2])[0], [2.0, 2.0, 2.0]),
    (lambda x: tf.broadcast_arrays(x, tf.tensor(np.ones((4, 1))))[0], [4.0, 4.0, 4.0]),
], ids=["take", "np.take-2d", "take_along_axis", "repeat-counts", "repeat", "tile",
        "meshgrid", "broadcast_arrays"])
def test_copies_accumulate(f, expected):
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = tf.grad(f(x).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), expected)


def test_take_second_order_through_scatter():
    # the VJP of take is a sparse cotangent, recorded as the scatter-add op sparse_sum
    # (tenferro/_sparse.py); its own VJP is take again
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = tf.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    (g,) = tf.grad((tf.take(x, [0, 0, 2, 0]) * w).sum(), [x], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [7.0, 0.0, 3.0])
    assert g.grad_fn.op.name == "sparse_sum"
    (gw,) = tf.grad((g * g).sum(), [w])
    np.testing.assert_array_equal(gw.numpy(), [14.0, 14.0, 6.0, 14.0])


def test_take_matches_indexing_gradient():
    a = random_array((3, 5, 2), np.complex128, 3)
    cot = random_array((3, 7, 2), np.complex128, 4)
    idx = np.array([4, 0, 4, 4, -1, 2, 0])
    x = tf.tensor(a, requires_grad=True)
    (g1,) = tf.grad(tf.take(x, idx, axis=1), [x], [cot])
    (g2,) = tf.grad(x[:, idx], [x], [cot])
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-14)
    assert g1.dtype == np.complex128


def test_unstack_unused_slices_get_zero_gradient():
    x = tf.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    parts = tf.unstack(x, axis=1)
    (g,) = tf.grad(parts[1].sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [[0, 1], [0, 1], [0, 1]])
    parts = tf.unstack(x, axis=1)
    (g,) = tf.grad((parts[0] * parts[0]).sum(), [x], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [[0, 0], [4, 0], [8, 0]])


def test_low_precision_scatter_keeps_dtype():
    x = tf.tensor(np.ones(3, np.float32), requires_grad=True)
    (g,) = tf.grad(tf.take(x, [1, 1]).sum(), [x])
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), [0, 2, 0])


# ---- results -----------------------------------------------------------------------------

def test_result_containers():
    t = tf.tensor(np.ones((2, 3)))
    assert isinstance(tf.unstack(t), tuple) and len(tf.unstack(t, axis=1)) == 3
    assert isinstance(tf.broadcast_arrays(t, t), list)
    assert isinstance(tf.meshgrid(t[0], t[1]), list)
    assert tf.meshgrid() == [] and tf.broadcast_arrays() == []
    assert tf.unstack(tf.tensor(np.ones((0, 2)))) == ()
    assert isinstance(np.meshgrid(t[0], t[1]), tuple)
    assert [u.shape for u in tf.meshgrid(t[0])] == [(3,)]


def test_identities_return_input():
    t = tf.tensor(np.ones((2, 3)), requires_grad=True)
    s = tf.tensor(1.0, requires_grad=True)
    assert tf.flip(s) is s and tf.flip(t, axis=()) is t
    assert tf.roll(t, 6) is t and tf.roll(t, (2, 3), axis=(0, 1)) is t
    assert tf.repeat(t, 1, axis=0) is t


def test_array_api_names_are_exported():
    for name in manipulation.__all__:
        assert getattr(tf, name) is getattr(manipulation, name)


# ---- errors: the class, and nothing recorded ---------------------------------------------

M = np.ones((3, 4))


# each case: a function of x (3 x 4), v (3,) and s (0-d), all leaves that require grad
ERRORS = [
    ("take-range", lambda x, v, s: tf.take(x, [0, 4], axis=1), IndexError,
     r"index 4 is out of bounds for axis 1 with size 4 \(x has shape \(3, 4\)\)"),
    ("take-range-neg", lambda x, v, s: tf.take(x, [-4], axis=0), IndexError,
     r"index -4 .* shape \(3, 4\)"),
    ("take-float", lambda x, v, s: tf.take(x, [0.0, 1.0], axis=0), IndexError,
     "must be integers, got dtype float64"),
    ("take-float-tensor", lambda x, v, s: tf.take(x, tf.tensor([1.0]), axis=0), IndexError,
     "integers"),
    ("take-bool", lambda x, v, s: tf.take(x, [True], axis=0), IndexError,
     "integers, got dtype bool"),
    ("take-no-axis", lambda x, v, s: tf.take(x, [0]), tf.ShapeError, "give axis="),
    ("take-axis", lambda x, v, s: tf.take(x, [0], axis=2), tf.AxisError,
     "axis 2 is out of bounds"),
    ("np.take-mode", lambda x, v, s: np.take(x, [0], mode="nope"), ValueError, "mode must be"),
    ("np.take-out", lambda x, v, s: np.take(x, [0], out=np.empty(1)), TypeError, "out="),
    ("along-axis", lambda x, v, s: tf.take_along_axis(x, np.zeros((3, 4), int), axis=2),
     tf.ShapeError, "out of bounds"),
    ("along-rank", lambda x, v, s: tf.take_along_axis(x, np.zeros(3, int), axis=0),
     tf.ShapeError, "rank of x"),
    ("along-shape", lambda x, v, s: tf.take_along_axis(x, np.zeros((2, 2), int), axis=0),
     tf.ShapeError, "do not broadcast"),
    ("along-range", lambda x, v, s: tf.take_along_axis(x, np.full((3, 1), 5), axis=1),
     IndexError, r"shape \(3, 4\)"),
    ("along-float", lambda x, v, s: tf.take_along_axis(x, np.zeros((3, 1)), axis=1),
     IndexError, "integers"),
    ("flip-axis", lambda x, v, s: tf.flip(x, axis=2), tf.ShapeError, "out of bounds"),
    ("flip-repeated", lambda x, v, s: tf.flip(x, axis=(0, -2)), tf.ShapeError,
     "repeated axis"),
    ("np.fliplr", lambda x, v, s: np.fliplr(v), tf.ShapeError, "dimension >= 2"),
    ("np.flipud", lambda x, v, s: np.flipud(s), tf.ShapeError, "dimension >= 1"),
    ("roll-tuple-no-axis", lambda x, v, s: tf.roll(x, (1, 2)), tf.ShapeError, "needs axis="),
    ("roll-lengths", lambda x, v, s: tf.roll(x, (1, 2, 3), axis=(0, 1)), tf.ShapeError,
     "same length"),
    ("roll-float", lambda x, v, s: tf.roll(x, 1.5), tf.DTypeError, "shift must be an integer"),
    ("roll-axis", lambda x, v, s: tf.roll(x, 1, axis=-3), tf.ShapeError, "out of bounds"),
    ("repeat-negative", lambda x, v, s: tf.repeat(x, -1), tf.ShapeError, ">= 0"),
    ("repeat-negative-count", lambda x, v, s: tf.repeat(x, [1, -1, 1], axis=0), tf.ShapeError,
     ">= 0"),
    ("repeat-counts-shape", lambda x, v, s: tf.repeat(x, [1, 2], axis=0), tf.ShapeError,
     r"\(1,\) or \(3,\)"),
    ("repeat-float-counts", lambda x, v, s: tf.repeat(x, [1.0, 2.0, 1.0], axis=0),
     tf.DTypeError, "repeats must be integers"),
    ("repeat-float", lambda x, v, s: tf.repeat(x, 2.0), tf.DTypeError, "must be an integer"),
    ("repeat-axis", lambda x, v, s: tf.repeat(x, 2, axis=2), tf.ShapeError, "out of bounds"),
    ("tile-negative", lambda x, v, s: tf.tile(x, (2, -1)), tf.ShapeError, ">= 0"),
    ("tile-float", lambda x, v, s: tf.tile(x, (2.0,)), tf.DTypeError, "must be an integer"),
    ("unstack-axis", lambda x, v, s: tf.unstack(x, axis=2), tf.ShapeError, "out of bounds"),
    ("unstack-0d", lambda x, v, s: tf.unstack(s), tf.ShapeError, "0-d"),
    ("tril-vector", lambda x, v, s: tf.tril(v), tf.ShapeError,
     r"ndim >= 2, shape \(\.\.\., M, N\)"),
    ("triu-k", lambda x, v, s: tf.triu(x, k=0.5), tf.DTypeError, "k must be an integer"),
    ("np.tril-0d", lambda x, v, s: np.tril(s), tf.ShapeError, "ndim >= 2"),
    ("meshgrid-indexing", lambda x, v, s: tf.meshgrid(v, v, indexing="xz"), ValueError,
     "'xy' or 'ij'"),
    ("broadcast_arrays", lambda x, v, s: tf.broadcast_arrays(x, v), tf.ShapeError,
     "do not broadcast"),
    ("permute_dims", lambda x, v, s: tf.permute_dims(x, (0,)), tf.ShapeError, "permutation"),
    ("expand_dims", lambda x, v, s: tf.expand_dims(x, axis=3), IndexError, "out of bounds"),
    ("expand_dims-neg", lambda x, v, s: tf.expand_dims(x, axis=-4), tf.ShapeError,
     "out of bounds"),
]


@pytest.mark.parametrize("f,exc,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors(monkeypatch, f, exc, match):
    x = tf.tensor(M, requires_grad=True)
    v = tf.tensor(np.ones(3), requires_grad=True)
    s = tf.tensor(1.0, requires_grad=True)
    calls = record_calls(monkeypatch, manipulation, "apply1", "apply")
    calls += record_calls(monkeypatch, structure, "apply1")
    with pytest.raises(exc, match=match):
        f(x, v, s)
    assert calls == []      # validation comes before the first recorded op


def test_axis_error_is_shape_and_index_error():
    assert issubclass(tf.AxisError, tf.ShapeError)
    assert issubclass(tf.AxisError, IndexError)
    assert issubclass(tf.AxisError, ValueError)
