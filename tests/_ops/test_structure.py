"""Structure ops: values against NumPy, derivatives (rev, fwd, second order), errors."""
import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

DTYPES = [np.float64, np.complex128]
MASK34 = np.array([[True, False, True, True], [False, False, True, False],
                   [True, True, False, False]])

# (id, function of tensors, input shapes). Every case is checked for its value against
# NumPy on the payload (the function applied to ndarrays where NumPy spells it the same),
# then with check_grads in float64 and complex128, and in single precision.
CASES = [
    ("reshape", lambda a: tf.reshape(a, (4, 3)), [(3, 4)]),
    ("reshape-method", lambda a: a.reshape(2, -1, 3), [(3, 4)]),
    ("np.reshape", lambda a: np.reshape(a, (12,)), [(3, 4)]),
    ("broadcast_to", lambda a: tf.broadcast_to(a, (2, 3, 4)), [(3, 1)]),
    ("ravel", lambda a: tf.ravel(a), [(2, 3, 2)]),
    ("np.ravel", lambda a: np.ravel(a), [(2, 3)]),
    ("flatten", lambda a: a.flatten(), [(2, 3, 2)]),
    ("flatten-dims", lambda a: tf.flatten(a, 1), [(2, 3, 2)]),
    ("transpose", lambda a: tf.transpose(a), [(2, 3, 4)]),
    ("transpose-axes", lambda a: tf.transpose(a, (1, 2, 0)), [(2, 3, 4)]),
    ("np.transpose", lambda a: np.transpose(a, (2, 0, 1)), [(2, 3, 4)]),
    ("transpose-method", lambda a: a.transpose(1, 0, 2), [(2, 3, 4)]),
    ("permute", lambda a: tf.permute(a, 2, 0, 1), [(2, 3, 4)]),
    ("permute-method", lambda a: a.permute((0, 2, 1)), [(2, 3, 4)]),
    ("swapaxes", lambda a: tf.swapaxes(a, 0, -1), [(2, 3, 4)]),
    ("np.swapaxes", lambda a: np.swapaxes(a, 1, 2), [(2, 3, 4)]),
    ("moveaxis", lambda a: tf.moveaxis(a, 0, -1), [(2, 3, 4)]),
    ("np.moveaxis", lambda a: np.moveaxis(a, (0, 1), (2, 0)), [(2, 3, 4)]),
    ("expand_dims", lambda a: tf.expand_dims(a, (0, 2)), [(3, 4)]),
    ("np.expand_dims", lambda a: np.expand_dims(a, -1), [(3, 4)]),
    ("unsqueeze", lambda a: a.unsqueeze(1), [(3, 4)]),
    ("squeeze", lambda a: tf.squeeze(a), [(1, 3, 1, 4)]),
    ("np.squeeze", lambda a: np.squeeze(a, axis=2), [(1, 3, 1, 4)]),
    (".T", lambda a: a.T, [(2, 3, 4)]),
    (".mT", lambda a: a.mT, [(2, 3, 4)]),
    (".mH", lambda a: a.mH, [(2, 3, 4)]),
    # indexing: basic
    ("index-int", lambda a: a[1], [(3, 4)]),
    ("index-scalar", lambda a: a[-1, 2], [(3, 4)]),
    ("index-slices", lambda a: a[-1:0:-1, 1::2], [(3, 4)]),
    ("index-neg-step", lambda a: a[::-2, ::-1], [(5, 4)]),
    ("index-none-ellipsis", lambda a: a[None, ..., 0], [(2, 3, 4)]),
    ("index-ellipsis-none", lambda a: a[..., None, 1:], [(2, 3, 4)]),
    # indexing: advanced (integer arrays with repeats, masks, mixed with basic)
    ("index-intarr-dup", lambda a: a[np.array([0, 2, 0, 0])], [(3, 4)]),
    ("index-list-dup", lambda a: a[[1, 1, 2], [3, 3, 0]], [(3, 4)]),
    ("index-2d-intarr", lambda a: a[:, np.array([[3, 3], [0, 3]])], [(3, 4)]),
    ("index-mixed", lambda a: a[1:, [0, 0, 3], None, ::-1], [(3, 4, 5)]),
    ("index-arr-ellipsis", lambda a: a[[2, 0, 2], ..., 1], [(3, 4, 5)]),
    ("index-mask", lambda a: a[MASK34], [(3, 4)]),
    ("index-mask-row", lambda a: a[np.array([True, False, True])], [(3, 4)]),
    ("index-tensor", lambda a: a[tf.tensor([2, 0, 2])], [(3, 4)]),
    ("index-bool-tensor", lambda a: a[tf.tensor([True, False, True])], [(3, 4)]),
    ("index-bool-scalar", lambda a: a[True], [(3,)]),
    ("index-iter", lambda a: tf.stack(list(a)[::-1]), [(3, 2)]),
    # joins
    ("stack", lambda a, b: tf.stack([a, b]), [(3, 4), (3, 4)]),
    ("stack-axis", lambda a, b, c: tf.stack((a, b, c), axis=-1), [(3, 2), (3, 2), (3, 2)]),
    ("np.stack", lambda a, b: np.stack([a, b], 1), [(3,), (3,)]),
    ("concatenate", lambda a, b: tf.concatenate([a, b]), [(2, 3), (4, 3)]),
    ("concatenate-axis", lambda a, b, c: tf.concat([a, b, c], axis=1),
     [(2, 1), (2, 3), (2, 2)]),
    ("concatenate-none", lambda a, b: tf.concatenate([a, b], axis=None), [(2, 3), (4,)]),
    ("np.concatenate", lambda a, b: np.concatenate([a, b], -1), [(2, 3), (2, 1)]),
    # diagonals
    ("diagonal", lambda a: tf.diagonal(a), [(3, 4)]),
    ("diagonal-offset", lambda a: a.diagonal(1), [(4, 3)]),
    ("diagonal-neg", lambda a: tf.diagonal(a, -2), [(4, 3)]),
    ("diagonal-batch", lambda a: tf.diagonal(a, 0, 1, 2), [(2, 3, 3)]),
    ("diagonal-axes", lambda a: np.diagonal(a, 1, 2, 0), [(3, 2, 4)]),
    ("diag-vec", lambda a: tf.diag(a), [(3,)]),
    ("diag-vec-k", lambda a: np.diag(a, -2), [(3,)]),
    ("diag-mat", lambda a: a.diag(1), [(3, 4)]),
    ("trace", lambda a: tf.trace(a), [(3, 3)]),
    ("trace-offset", lambda a: a.trace(-1), [(3, 4)]),
    ("trace-batch", lambda a: np.trace(a, 0, 1, 2), [(2, 3, 4)]),
    # matmul in all NumPy shape cases
    ("matmul-1d-1d", lambda a, b: tf.matmul(a, b), [(3,), (3,)]),
    ("matmul-1d-2d", lambda a, b: a @ b, [(3,), (3, 4)]),
    ("matmul-2d-1d", lambda a, b: a @ b, [(4, 3), (3,)]),
    ("matmul-square", lambda a, b: a.matmul(b), [(3, 3), (3, 3)]),
    ("matmul-tall", lambda a, b: a @ b, [(5, 2), (2, 3)]),
    ("matmul-wide", lambda a, b: a @ b, [(2, 5), (5, 3)]),
    ("matmul-batch-bcast", lambda a, b: a @ b, [(2, 1, 3, 4), (5, 4, 2)]),
    ("matmul-batch-bcast-b", lambda a, b: a @ b, [(3, 4), (2, 4, 2)]),
    ("matmul-1d-batch", lambda a, b: a @ b, [(3,), (2, 3, 4)]),
    ("matmul-batch-1d", lambda a, b: np.matmul(a, b), [(2, 4, 3), (3,)]),
    ("matmul-self", lambda a: a @ a.mH, [(3, 4)]),
    # tensordot
    ("tensordot-2", lambda a, b: tf.tensordot(a, b), [(2, 3, 4), (3, 4, 2)]),
    ("tensordot-1", lambda a, b: tf.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    ("tensordot-0", lambda a, b: tf.tensordot(a, b, 0), [(2,), (3, 2)]),
    ("tensordot-pairs", lambda a, b: np.tensordot(a, b, ([1, 0], [0, 2])),
     [(3, 2, 4), (2, 5, 3)]),
    ("tensordot-neg", lambda a, b: tf.tensordot(a, b, ([-1, 0], [1, -1])),
     [(2, 3, 4), (5, 4, 2)]),
    ("tensordot-full", lambda a, b: tf.tensordot(a, b, ([0, 1], [1, 0])), [(2, 3), (3, 2)]),
    # dtype
    ("astype", lambda a: tf.astype(a.real, a.dtype if a.dtype.kind == "c" else
                                   np.result_type(a.dtype, np.complex64)) * a, [(3,)]),
]
if hasattr(np, "matrix_transpose"):  # NumPy >= 2
    CASES.append(("np.matrix_transpose", lambda a: np.matrix_transpose(a), [(3, 4)]))

# NumPy reference for the value test: the same lambda on ndarrays, where it differs.
_NP_REF = {
    "reshape": lambda a: a.reshape(4, 3),
    "broadcast_to": lambda a: np.broadcast_to(a, (2, 3, 4)),
    "ravel": np.ravel,
    "flatten-dims": lambda a: a.reshape(2, 6),
    "transpose": np.transpose,
    "transpose-axes": lambda a: np.transpose(a, (1, 2, 0)),
    "permute": lambda a: np.transpose(a, (2, 0, 1)),
    "permute-method": lambda a: np.transpose(a, (0, 2, 1)),
    "swapaxes": lambda a: np.swapaxes(a, 0, -1),
    "moveaxis": lambda a: np.moveaxis(a, 0, -1),
    "expand_dims": lambda a: np.expand_dims(a, (0, 2)),
    "unsqueeze": lambda a: a[:, None],
    "squeeze": np.squeeze,
    ".mT": lambda a: np.swapaxes(a, -1, -2),
    ".mH": lambda a: np.conj(np.swapaxes(a, -1, -2)),
    "index-tensor": lambda a: a[[2, 0, 2]],
    "index-iter": lambda a: a[::-1],
    "stack": lambda a, b: np.stack([a, b]),
    "stack-axis": lambda a, b, c: np.stack((a, b, c), axis=-1),
    "concatenate": lambda a, b: np.concatenate([a, b]),
    "concatenate-axis": lambda a, b, c: np.concatenate([a, b, c], axis=1),
    "concatenate-none": lambda a, b: np.concatenate([a, b], axis=None),
    "diagonal": np.diagonal,
    "diagonal-neg": lambda a: np.diagonal(a, -2),
    "diagonal-batch": lambda a: np.diagonal(a, 0, 1, 2),
    "diag-vec": np.diag,
    "diag-mat": lambda a: np.diag(a, 1),
    "trace": np.trace,
    "matmul-square": np.matmul,
    "matmul-self": lambda a: a @ a.conj().T,
    "matmul-1d-1d": np.matmul,
    "tensordot-2": np.tensordot,
    "tensordot-1": lambda a, b: np.tensordot(a, b, 1),
    "tensordot-0": lambda a, b: np.tensordot(a, b, 0),
    "tensordot-neg": lambda a, b: np.tensordot(a, b, ([-1, 0], [1, -1])),
    "tensordot-full": lambda a, b: np.tensordot(a, b, ([0, 1], [1, 0])),
    "astype": lambda a: a.real.astype(np.result_type(a.dtype, np.complex64)) * a,
}

IDS = [c[0] for c in CASES]


def _args(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [random_array(s, dtype, rng) for s in shapes]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,f,shapes", CASES, ids=IDS)
def test_value_matches_numpy(name, f, shapes, dtype):
    args = _args(shapes, dtype)
    out = f(*[tf.tensor(a) for a in args])
    ref = _NP_REF.get(name, f)(*args)
    assert isinstance(out, tf.Tensor)
    assert out.shape == np.shape(ref)
    assert out.dtype == np.result_type(ref)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,f,shapes", CASES, ids=IDS)
def test_grads(name, f, shapes, dtype):
    args = _args(shapes, dtype, seed=1)
    check_grads(f, args, modes=("rev", "fwd"), order=2)
    # For a linear op the derivative maps do not depend on the input, so the check above
    # never differentiates the rules themselves. Squaring the output feeds an
    # input-dependent cotangent/tangent into them: the second-order check then covers the
    # rules of the adjoint ops (scatter for indexing, diag_embed for diagonal, ...).
    check_grads(lambda *xs: _square(f(*xs)), args, modes=("rev", "fwd"), order=2)


def _square(y):
    return y * y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,f,shapes", CASES, ids=IDS)
def test_low_precision(name, f, shapes, dtype):
    check_low_precision(f, _args(shapes, dtype, seed=2))


# ---- mixed dtypes: promotion, and cotangents cast back to each input's dtype -----------

@pytest.mark.parametrize("f", [
    lambda a, b: tf.stack([a, b]),
    lambda a, b: tf.concatenate([a, b]),
    lambda a, b: a @ b,
    lambda a, b: tf.tensordot(a, b, 1),
], ids=["stack", "concatenate", "matmul", "tensordot"])
def test_mixed_real_complex(f):
    a = random_array((3, 3), np.float64, 3)
    b = random_array((3, 3), np.complex128, 4)
    out = f(tf.tensor(a), tf.tensor(b))
    assert out.dtype == np.complex128
    check_grads(f, [a, b], modes=("rev", "fwd"), order=2)
    x, y = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    ga, gb = tf.grad(f(x, y).real.sum(), [x, y])
    assert ga.dtype == np.float64 and gb.dtype == np.complex128


def test_stack_promotes_precision():
    a = tf.tensor(np.ones(2), dtype=np.float32, requires_grad=True)
    b = tf.tensor(np.ones(2), requires_grad=True)
    out = tf.stack([a, b])
    assert out.dtype == np.float64
    ga, gb = tf.grad(out, [a, b], [np.arange(4.0).reshape(2, 2)])
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    np.testing.assert_array_equal(ga.numpy(), [0, 1])
    np.testing.assert_array_equal(gb.numpy(), [2, 3])


def test_matmul_ndarray_operand():
    a = random_array((2, 3), np.float64, 5)
    b = random_array((3, 4), np.float64, 6)
    out = a @ tf.tensor(b)   # ndarray.__matmul__ defers to the Tensor
    assert isinstance(out, tf.Tensor)
    np.testing.assert_allclose(out.numpy(), a @ b)
    check_grads(lambda y: a @ y, [b])
    out = [1.0, 2.0, 3.0] @ tf.tensor(b)   # a list has no __matmul__: Tensor.__rmatmul__
    np.testing.assert_allclose(out.numpy(), np.array([1.0, 2.0, 3.0]) @ b)
    check_grads(lambda x: x @ b, [a])


# ---- indexing specifics -----------------------------------------------------------------

def test_index_duplicates_accumulate():
    x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = tf.grad(x[[0, 0, 2, 0]].sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [3.0, 0.0, 1.0])
    # the gradient of the gradient goes back through the scatter (gather is its adjoint)
    w = tf.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    (g,) = tf.grad((x[[0, 0, 2, 0]] * w).sum(), [x], create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [7.0, 0.0, 3.0])
    (gw,) = tf.grad((g * g).sum(), [w])
    np.testing.assert_array_equal(gw.numpy(), [14.0, 14.0, 6.0, 14.0])


def test_index_with_comparison_mask():
    x = np.array([[1.0, -2.0], [-3.0, 4.0]])
    t = tf.tensor(x, requires_grad=True)
    mask = t > 0
    assert isinstance(mask, tf.Tensor) and mask.dtype == bool and not mask.requires_grad
    assert isinstance(np.greater(t, 0), np.ndarray)     # NumPy's spelling: NumPy's result
    y = t[t > 0]
    np.testing.assert_array_equal(y.numpy(), [1.0, 4.0])
    (g,) = tf.grad(y.sum(), [t])
    np.testing.assert_array_equal(g.numpy(), [[1.0, 0.0], [0.0, 1.0]])
    check_grads(lambda a: a[a > 0], [x])


def test_index_result_is_tensor_and_shares_nothing_writable():
    t = tf.tensor(np.arange(6.0).reshape(2, 3))
    s = t[1, 2]
    assert isinstance(s, tf.Tensor) and s.shape == () and s.item() == 5.0
    assert [r.shape for r in t] == [(3,), (3,)]


# ---- transposes and properties ----------------------------------------------------------

def test_mH_is_conjugate_transpose():
    a = random_array((2, 3, 4), np.complex128, 7)
    t = tf.tensor(a)
    np.testing.assert_array_equal(t.mH.numpy(), np.conj(np.swapaxes(a, -1, -2)))
    r = tf.tensor(a.real)
    np.testing.assert_array_equal(r.mH.numpy(), r.mT.numpy())


def test_identity_permutation_returns_input():
    t = tf.tensor(np.ones((2, 3)))
    assert tf.transpose(t, (0, 1)) is t
    assert tf.squeeze(t) is t


# ---- astype -----------------------------------------------------------------------------

@pytest.mark.parametrize("src,dst", [(np.float64, np.float32), (np.float32, np.float64),
                                     (np.float64, np.complex64), (np.complex64, np.complex128),
                                     (np.complex128, np.complex64)])
def test_astype(src, dst):
    a = random_array((3,), src, 8)
    x = tf.tensor(a, requires_grad=True)
    y = x.astype(dst)
    assert y.dtype == dst
    np.testing.assert_array_equal(y.numpy(), a.astype(dst))
    cot = random_array((3,), dst, 9)
    (g,) = tf.grad(y, [x], [cot])
    assert g.dtype == src
    ref = cot.real if np.dtype(src).kind == "f" else cot
    np.testing.assert_allclose(g.numpy(), ref.astype(src), rtol=1e-6)
    _, t = tf.jvp(lambda u: u.astype(dst), [a], [np.ones(3, src)])
    assert t.dtype == dst
    np.testing.assert_array_equal(t.numpy(), np.ones(3, dst))


def test_astype_same_dtype_copies_unless_copy_false():
    t = tf.tensor([1.0])
    assert tf.astype(t, "float64", copy=False) is t
    u = tf.astype(t, "float64")              # array API: copy=True by default
    assert u is not t and u.dtype == t.dtype
    u[0] = 5.0                               # a new object: changing it leaves t alone
    assert t.tolist() == [1.0]
    x = tf.tensor([2.0], requires_grad=True)
    y = x.astype(np.float64)                 # a differentiable copy, not the leaf itself
    assert not y.is_leaf
    y[0] = 3.0
    (g,) = tf.grad((y * x).sum(), [x])
    assert g.tolist() == [3.0]


@pytest.mark.parametrize("copy", [True, False])
def test_astype_same_dtype_keeps_the_forward_tangent(copy):
    # a dual tensor has no reverse node; the copy must still carry its tangent
    _, t = tf.jvp(lambda u: (u.astype(np.float64, copy=copy) * 2.0).sum(),
                  [tf.tensor([1.0, 2.0])], [tf.tensor([1.0, 1.0])])
    assert float(t) == 4.0


@pytest.mark.parametrize("src,dst", [(np.float64, np.int64), (np.float32, np.bool_),
                                     (np.int64, np.float32), (np.bool_, np.complex128)])
def test_astype_between_kinds(src, dst):
    a = np.array([0.0, 1.0, 2.7]).astype(src)
    t = tf.tensor(a)
    out = tf.astype(t, dst)
    assert out.dtype == dst
    np.testing.assert_array_equal(out.numpy(), a.astype(dst))
    if np.dtype(src).kind == "f":
        x = tf.tensor(a, requires_grad=True)
        assert tf.astype(x, dst).requires_grad == (np.dtype(dst).kind in "fc")


# ---- constants for rules ----------------------------------------------------------------

def test_zeros_ones_like():
    t = tf.tensor(random_array((2, 3), np.complex128, 10), requires_grad=True)
    z, o = np.zeros_like(t), np.ones_like(t)
    assert isinstance(z, tf.Tensor) and isinstance(o, tf.Tensor)
    assert not z.requires_grad and not o.requires_grad
    assert z.dtype == o.dtype == np.complex128 and z.shape == o.shape == (2, 3)
    np.testing.assert_array_equal(o.numpy(), 1)
    assert np.zeros_like(t, dtype=np.float32).dtype == np.float32


# ---- errors -----------------------------------------------------------------------------

T234 = tf.tensor(np.ones((2, 3, 4)))
M34 = tf.tensor(np.ones((3, 4)))


@pytest.mark.parametrize("f,match", [
    (lambda: tf.transpose(T234, (0, 0, 1)), "repeated axis"),
    (lambda: tf.transpose(T234, (0, 1)), "do not match a tensor of dimension 3"),
    (lambda: tf.transpose(T234, (0, 1, 3)), "out of bounds"),
    (lambda: T234.permute(2, 1, "x"), "must be an int"),
    (lambda: tf.swapaxes(T234, 0, 3), "axis2: axis 3 is out of bounds"),
    (lambda: tf.moveaxis(T234, (0, 1), 2), "same number of axes"),
    (lambda: tf.expand_dims(M34, 3), "out of bounds"),
    (lambda: tf.squeeze(M34, 0), "length 3, not 1"),
    (lambda: tf.flatten(T234, 2, 1), "after end_dim"),
    (lambda: tf.reshape(M34, (5, 2)), r"shape \(3, 4\) to \(5, 2\)"),
    (lambda: tf.tensor(np.ones(3)).mT, "dimension >= 2"),
    (lambda: M34 @ M34, r"shapes \(3, 4\) and \(3, 4\) do not match"),
    (lambda: tf.matmul(tf.tensor(np.ones(4)), M34), r"shapes \(4,\) and \(3, 4\)"),
    (lambda: tf.matmul(M34, tf.tensor(np.ones(3))), "only axis of the second \\(3\\)"),
    (lambda: tf.matmul(M34, 2.0), "0-d"),
    (lambda: tf.matmul(tf.tensor(np.ones((2, 3, 4))), tf.tensor(np.ones((3, 4, 2)))),
     "batch dimensions"),
    (lambda: tf.tensordot(T234, M34, ([1], [1])), r"shapes \(2, 3, 4\) and \(3, 4\)"),
    (lambda: tf.tensordot(T234, M34, 3), "between 0 and 2"),
    (lambda: tf.tensordot(T234, M34, ([1, 2], [0])), "name 2 axes"),
    (lambda: tf.stack([M34, T234]), r"one shape, got shapes \(3, 4\), \(2, 3, 4\)"),
    (lambda: tf.stack([]), "at least one"),
    (lambda: tf.stack(M34), "sequence of tensors"),
    (lambda: tf.stack([M34, M34], axis=3), "out of bounds"),
    (lambda: tf.concatenate([M34, T234]), r"\(3, 4\), \(2, 3, 4\)"),
    (lambda: tf.concatenate([M34, M34.T], axis=1), "agree except on that axis"),
    (lambda: tf.concatenate([tf.tensor(1.0)]), "0-d"),
    (lambda: tf.diagonal(tf.tensor(np.ones(3))), "dimension >= 2"),
    (lambda: tf.diagonal(T234, 0, 1, -2), "must differ"),
    (lambda: tf.trace(M34, 0, 0, 2), "out of bounds"),
    (lambda: tf.diag(T234), "1-D or 2-D"),
])
def test_shape_errors(f, match):
    with pytest.raises(tf.ShapeError, match=match):
        f()


@pytest.mark.parametrize("key,match", [
    ((3,), "out of bounds"),
    ((0, 4), "out of bounds"),
    ((np.array([0, 5]),), "out of bounds"),
    ((np.array([True, False]),), "boolean index"),
    ((tf.tensor([0.5]),), "integer or bool tensor"),
    ((tf.tensor([1.0]),), "integer or bool tensor"),
    ((0, 0, 0), "too many indices"),
])
def test_index_errors(key, match):
    x = tf.tensor(np.ones((3, 4)), requires_grad=True)
    with pytest.raises(tf.IndexingError, match=match) as info:
        x[key]
    assert isinstance(info.value, IndexError) and isinstance(info.value, tf.TenferroError)


@pytest.mark.parametrize("dtype,match", [(np.object_, "not object"), (np.float16, "not float16"),
                                         ("nonsense", "not a dtype")])
def test_astype_bad_dtype(dtype, match):
    with pytest.raises(tf.DTypeError, match=match):
        tf.astype(M34, dtype)


def test_astype_complex_to_real():
    z = tf.tensor(np.ones(2, np.complex128))
    with pytest.raises(tf.DTypeError, match=r"take \.real"):
        z.astype(np.float64)


def test_reshape_signatures_and_copy():
    x = tf.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert tf.reshape(x, 3, 2).shape == tf.reshape(x, (3, 2)).shape == (3, 2)
    assert tf.reshape(x, shape=[6]).shape == (6,) and x.reshape(3, -1).shape == (3, 2)
    c = tf.reshape(x, (6,), copy=True)
    assert not np.shares_memory(c.numpy(), x.numpy()) and c.requires_grad
    assert np.shares_memory(tf.reshape(x, (6,), copy=False).numpy(), x.numpy())
    with pytest.raises(ValueError, match="copy=False"):
        tf.reshape(x.T, (6,), copy=False)          # a transposed layout needs a copy
    with pytest.raises(tf.AxisError):
        tf.expand_dims(x, 5)
    with pytest.raises(IndexError):                # AxisError is an IndexError too
        tf.squeeze(x, -3)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (1, 1), (0, 3)])
@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 7])
def test_diagonal_write_fast_path_matches_numpy(shape, offset):
    # the strided flat slice that serves C-contiguous matrices (diagonal's pullback,
    # diag of a vector) against NumPy's own diagonal, for set and add; a transposed
    # (non-contiguous) buffer takes the general path and must agree too
    from tenferro._ops.structure import _diagonal_view_op
    rng = np.random.default_rng(sum(shape) + offset + 10)
    for buf in (rng.standard_normal(shape), rng.standard_normal(shape[::-1]).T):
        n = np.diagonal(buf, offset).shape[-1]
        v = rng.standard_normal(n)
        for add in (False, True):
            got, ref = buf.copy(order="K"), buf.copy()
            _diagonal_view_op(got, (offset, 0, 1), v, add)
            idx = np.arange(n)
            rows, cols = idx + max(-offset, 0), idx + max(offset, 0)
            ref[rows, cols] = ref[rows, cols] + v if add else v
            np.testing.assert_array_equal(got, ref)
