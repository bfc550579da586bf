"""The compiled pullbacks of common ops (tape.pyx's vjp_kernel) against their rules.

Each op that declares a kernel (``defop(..., kernel=VJP_EXP)`` where its rule is written)
must get from it exactly what its Python rule computes (same NumPy calls in the same
order: bit-identical results), and the kernel must decline (None) every case it does not
cover, which then runs the rule.
"""
import numpy as np
import pytest

import tenferro as tf
from tenferro._kernels import tape, tape_twin
from tenferro._ops.registry import OPS

# op name -> the code of its compiled pullback, as the ops declare them (the tape itself
# knows no op name)
KERNELS = {name: op.kernel for name, op in OPS.items() if op.kernel}
CODES = {name: getattr(tape, name) for name in dir(tape) if name.startswith("VJP_")}

UNARY = ["exp", "sin", "cos", "tanh", "log", "negative", "sum"]
SCALAR = ["add_scalar", "subtract_scalar", "scalar_subtract", "multiply_scalar",
          "divide_scalar", "scalar_divide"]
BINARY = ["add", "subtract", "multiply", "divide"]
# one-input ops of a Tensor and an ndarray constant (ctx): x ∘ c and c ∘ x
ARRAY = ["add_array", "array_add", "subtract_array", "array_subtract", "multiply_array",
         "array_multiply", "divide_array", "array_divide"]
SHAPES = [(), (3,), (2, 5), (32, 32), (4, 300)]   # the last two: sums of >= 1024 entries


def _primal(name, x, s=None, b=None):
    """The op's output for inputs x (and scalar s, or second input b)."""
    f = {"exp": np.exp, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "log": np.log,
         "negative": np.negative, "sum": lambda v: np.add.reduce(v, None)}
    if name in f:
        return np.asarray(f[name](x))
    if name in SCALAR:
        return np.asarray({"add_scalar": x + s, "subtract_scalar": x - s,
                           "scalar_subtract": s - x, "multiply_scalar": x * s,
                           "divide_scalar": x / s, "scalar_divide": s / x}[name])
    return np.asarray({"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                       "divide": np.divide}[name](x, b))


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
            continue
        # (0-d NumPy arithmetic gives scalars, in the rules too; the tape converts them)
        assert isinstance(g, (np.ndarray, np.generic))
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_ops_declare_the_codes_the_tape_exports():
    # every declared code is one of the tape's, and every one of the tape's is declared
    assert set(KERNELS.values()) == set(CODES.values())
    assert len(set(CODES.values())) == len(CODES)
    # the ops of the tests below (and nothing else) declare a kernel
    assert set(KERNELS) == set(UNARY + SCALAR + BINARY + ARRAY
                               + ["vector_norm", "matmul", "transpose", "diagonal"])
    # the twin exports the same codes (an op declares one whichever tape load() picks;
    # the twin has no kernels: under TENFERRO_PURE_PYTHON=1 the ops run their rules)
    assert {n: getattr(tape_twin, n) for n in dir(tape_twin) if n.startswith("VJP_")} == CODES
    assert tape_twin.vjp_kernel(CODES["VJP_EXP"], None, (True,), np.ones(2), (np.ones(2),),
                                (np.ones(2),)) is None
    # no table of op names in either
    assert not hasattr(tape, "VJP_KERNELS") and not hasattr(tape_twin, "VJP_KERNELS")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", UNARY + SCALAR)
def test_one_input_kernels_equal_their_rules(name, shape, dtype):
    rng = np.random.default_rng(0)
    x = (rng.uniform(0.5, 2.0, shape)).astype(dtype)
    s = 1.7 if name in SCALAR else None
    y = _primal(name, x, s)
    g = np.asarray(rng.standard_normal(y.shape)).astype(dtype)
    op = OPS[name]
    got = tape.vjp_kernel(KERNELS[name], s, (True,), g, (x,), (y,))
    _same(got, op.vjp(s, (True,), (g,), (x,), (y,)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("name", BINARY)
def test_binary_kernels_equal_their_rules(name, needs, shape, dtype):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2.0, shape).astype(dtype)
    b = rng.uniform(0.5, 2.0, shape).astype(dtype)
    y = _primal(name, a, b=b)
    g = np.asarray(rng.standard_normal(shape)).astype(dtype)
    op = OPS[name]
    got = tape.vjp_kernel(KERNELS[name], None, needs, g, (a, b), (y,))
    _same(got, op.vjp(None, needs, (g,), (a, b), (y,)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((), ()), ((3,), (3,)), ((2, 5), (5,)), ((2, 5), ())])
@pytest.mark.parametrize("name", ARRAY)
def test_array_kernels_equal_their_rules(name, shapes, dtype):
    """x ∘ c and c ∘ x with the ndarray c in ctx, c broadcast onto x's shape or not."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2.0, shapes[0]).astype(dtype)
    c = np.asarray(rng.uniform(0.5, 2.0, shapes[1])).astype(dtype)
    ufunc = getattr(np, name.replace("array", "").strip("_"))
    y = np.asarray(ufunc(x, c) if name.endswith("_array") else ufunc(c, x))
    g = np.asarray(rng.standard_normal(y.shape)).astype(dtype)
    op = OPS[name]
    got = tape.vjp_kernel(KERNELS[name], c, (True,), g, (x,), (y,))
    assert got is not None
    _same(got, op.vjp(c, (True,), (g,), (x,), (y,)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((3, 4), (4,)), ((4,), (4, 2)),
                                    ((4,), (4,)), ((1, 1), (1, 5))])
def test_matmul_kernel_equals_its_rule(shapes, needs, dtype):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    y = np.asarray(a @ b)
    g = np.asarray(rng.standard_normal(y.shape)).astype(dtype)
    got = tape.vjp_kernel(KERNELS["matmul"], None, needs, g, (a, b), (y,))
    assert got is not None
    _same(got, OPS["matmul"].vjp(None, needs, (g,), (a, b), (y,)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 5), (5, 3), (32, 32)])
def test_diagonal_kernel_is_the_densified_rule(shape, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(dtype)
    y = np.diagonal(x)
    g = rng.standard_normal(y.shape).astype(dtype)
    (got,) = tape.vjp_kernel(KERNELS["diagonal"], (0, 0, 1), (True,), g, (x,), (y,))
    (want,) = OPS["diagonal"].vjp((0, 0, 1), (True,), (g,), (x,), (y,))
    _same((got,), (want.densify(),))
    # strided ḡ (a view), and what it declines: another diagonal, a large or non-contiguous
    # x, a stack
    g2 = np.repeat(g, 2)[::2]
    (got,) = tape.vjp_kernel(KERNELS["diagonal"], (0, 0, 1), (True,), g2, (x,), (y,))
    _same((got,), (OPS["diagonal"].vjp((0, 0, 1), (True,), (g,), (x,), (y,))[0].densify(),))
    code = KERNELS["diagonal"]
    for ctx, xx in [((1, 0, 1), x), ((0, 0, 1), np.asfortranarray(rng.standard_normal((3, 4)))),
                    ((0, 0, 1), rng.standard_normal((40, 40))),
                    ((0, 1, 2), rng.standard_normal((2, 3, 3)))]:
        yy = np.diagonal(xx, *ctx)
        gg = np.ones(yy.shape, xx.dtype)
        assert tape.vjp_kernel(code, ctx, (True,), gg, (xx,), (yy,)) is None


def test_matmul_and_transpose_kernels_decline_what_they_do_not_cover():
    rng = np.random.default_rng(5)
    code = KERNELS["matmul"]
    for a, b in [(rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2))),   # batched
                 (rng.standard_normal((3, 4)).astype(np.float32),                # mixed
                  rng.standard_normal((4, 2))),
                 (rng.standard_normal((3, 4)) + 1j, rng.standard_normal((4, 2)))]:  # complex
        y = np.asarray(a @ b)
        g = np.ones(y.shape, y.dtype)
        assert tape.vjp_kernel(code, None, (True, True), g, (a, b), (y,)) is None
    x = rng.standard_normal((3, 4))
    (got,) = tape.vjp_kernel(KERNELS["transpose"], (1, 0), (True,), x.T.copy(), (x,), (x.T,))
    _same((got,), OPS["transpose"].vjp((1, 0), (True,), (x.T.copy(),), (x,), (x.T,)))
    x3 = rng.standard_normal((2, 3, 4))
    y3 = x3.transpose((2, 0, 1))
    assert tape.vjp_kernel(KERNELS["transpose"], (2, 0, 1), (True,), y3.copy(), (x3,),
                           (y3,)) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_sum_cotangent_is_a_read_only_view(dtype):
    # a full sum of >= 1024 entries passes on a zero-stride read-only view of ḡ (the rule
    # fills an array with it: same values); smaller sums the filled array
    rng = np.random.default_rng(1)
    code = KERNELS["sum"]
    for shape, view in [((32, 32), True), ((4, 300), True), ((2, 511), False), ((7,), False)]:
        x = rng.standard_normal(shape).astype(dtype)
        g = np.asarray(1.5, dtype)
        (got,) = tape.vjp_kernel(code, None, (True,), g, (x,), (np.asarray(x.sum()),))
        assert got.shape == shape and got.dtype == np.dtype(dtype)
        assert (got.strides == (0,) * len(shape) and not got.flags.writeable) == view
        np.testing.assert_array_equal(got, np.full(shape, 1.5, dtype))


def test_large_sum_cotangent_view_downstream():
    # the view flows into the user's gradient (a writeable copy), into accumulation with
    # another cotangent (out of place), into a linalg pullback and into create_graph
    rng = np.random.default_rng(2)
    a = rng.standard_normal((40, 40))
    spd = a @ a.T / 40 + np.eye(40)
    x = tf.tensor(a, requires_grad=True)
    (g,) = tf.grad([x.sum()], [x])
    assert g.numpy().flags.writeable and np.array_equal(g.numpy(), np.ones((40, 40)))
    g.numpy()[0, 0] = 5.0                                 # the user may write to it
    (g,) = tf.grad([x.sum() + (x * 2.0).sum()], [x])
    assert np.array_equal(g.numpy(), np.full((40, 40), 3.0))
    s = tf.tensor(spd, requires_grad=True)
    (g,) = tf.grad([tf.linalg.cholesky(s).sum()], [s])
    (g2,) = tf.grad([tf.linalg.cholesky(s).sum()], [s], [np.float64(1.0)])
    want = tf.grad([(tf.linalg.cholesky(s) * np.ones((40, 40))).sum()], [s])[0]
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(g.numpy(), g2.numpy())
    (h,) = tf.grad([x.exp().sum()], [x], create_graph=True)
    np.testing.assert_allclose(h.numpy(), np.exp(a), rtol=1e-15)


def test_kernels_decline_what_they_do_not_cover():
    x = np.ones(3)
    code = KERNELS["exp"]
    z = np.ones(3, complex)
    assert tape.vjp_kernel(code, None, (True,), z, (z,), (np.exp(z),)) is None   # complex
    x32 = x.astype(np.float32)                                                    # promotion
    assert tape.vjp_kernel(code, None, (True,), x, (x32,), (np.exp(x),)) is None
    assert tape.vjp_kernel(code, None, (True,), 1.0, (x,), (np.exp(x),)) is None  # not ndarray
    s = KERNELS["sum"]                                                   # axis sums
    assert tape.vjp_kernel(s, ((0,), False), (True,), np.ones(()), (x,), (np.ones(()),)) is None
    mul = KERNELS["multiply"]                                         # broadcasting
    col = np.ones((3, 1))
    assert tape.vjp_kernel(mul, None, (True, True), np.ones((3, 3)), (col, np.ones((3, 3))),
                           (np.ones((3, 3)),)) is None
    arr = KERNELS["multiply_array"]       # x broadcast onto the constant's shape
    assert tape.vjp_kernel(arr, np.ones((3, 3)), (True,), np.ones((3, 3)), (col,),
                           (np.ones((3, 3)),)) is None
    assert tape.vjp_kernel(arr, np.ones(3, np.float32), (True,), x, (x,), (x,)) is None


def _gradients():
    rng = np.random.default_rng(2)
    x = tf.tensor(rng.uniform(0.5, 2.0, (4, 3)), requires_grad=True)
    w = tf.tensor(rng.uniform(0.5, 2.0, (4, 3)), requires_grad=True)
    c = rng.uniform(0.5, 2.0, 3)
    y = ((x * 1.5 + 0.25).sin() * w - x / 3.0).tanh() + (2.0 - w.cos()) / x.exp()
    y = (c * y - c) / c + (y + c) * (c / x) - c / (w - c)
    loss = ((y * y + 1.0).log() * -1.0 + (1.0 / w)).sum() - x.sum()
    gx, gw = tf.grad(loss, [x, w])
    return gx.numpy(), gw.numpy()


def test_backward_with_kernels_equals_backward_with_rules(compiled_tape):
    saved = {name: OPS[name].kernel for name in KERNELS}
    try:
        for name, code in KERNELS.items():    # (also under TENFERRO_PURE_PYTHON=1)
            OPS[name].kernel = code
        with_kernels = _gradients()
        for name in saved:
            OPS[name].kernel = 0
        with_rules = _gradients()
    finally:
        for name, code in saved.items():
            OPS[name].kernel = code
    for a, b in zip(with_kernels, with_rules):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3,), (2, 5), (32, 32), (2, 3, 4)])
def test_vector_norm_kernel_equals_its_rule(shape, dtype):
    # tf.linalg.norm(x) (2-norm of every entry, ctx None): x̄ = x·(n̄/n), bit for bit the
    # rule; n = 0 gives zeros; a norm with ctx (axes, ord) and complex x take the rule
    rng = np.random.default_rng(4)
    code = KERNELS["vector_norm"]
    op = OPS["vector_norm"]
    for x in (rng.standard_normal(shape).astype(dtype), np.zeros(shape, dtype)):
        y = np.asarray(np.sqrt(np.dot(x.ravel(), x.ravel()))).astype(dtype)
        g = np.asarray(rng.standard_normal()).astype(dtype)
        got = tape.vjp_kernel(code, None, (True,), g, (x,), (y,))
        assert got is not None
        _same(got, op.vjp(None, (True,), (g,), (x,), (y,)))
    ctx = (2.0, tuple(range(len(shape))), False)
    assert tape.vjp_kernel(code, ctx, (True,), g, (x,), (y,)) is None
    z = x.astype(np.complex128)
    assert tape.vjp_kernel(code, None, (True,), g.astype(np.float64), (z,),
                           (y.astype(np.float64),)) is None
    # and through the tape: the gradient of the norm itself
    t = tf.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    (gt,) = tf.grad([tf.linalg.norm(t)], [t])
    np.testing.assert_array_equal(gt.numpy(), t.numpy() * (1.0 / float(np.sqrt(
        np.dot(t.numpy().ravel(), t.numpy().ravel())))))
