"""tf.fft: values against numpy.fft, derivatives (rev, fwd, second order), dtypes, NumPy
dispatch, errors."""
import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads, check_low_precision, random_array

NORMS = ["backward", "ortho", "forward"]

# (id, input shape, keyword arguments) of the 1-D transforms: odd and even lengths, n
# equal, larger (zero-padding) and smaller (truncation) than the input, other axes, batches.
# For irfft/hfft n is the output length (the input is cut/padded to n//2 + 1).
ONE_D = [
    ("odd", (5,), {}),
    ("even", (6,), {}),
    ("n-pad-odd", (4,), {"n": 7}),
    ("n-pad-even", (5,), {"n": 8}),
    ("n-pad-big", (3,), {"n": 10}),
    ("n-cut-odd", (6,), {"n": 3}),
    ("n-cut-even", (7,), {"n": 4}),
    ("2d-axis0", (5, 3), {"axis": 0}),
    ("batch3d", (2, 3, 4), {"n": 5}),
    ("batch3d-axis1", (2, 5, 3), {"axis": 1, "n": 6}),
]
# the same for the n-D transforms (the last of axes is the half-spectrum axis of rfftn/irfftn)
N_D = [
    ("all-2d", (3, 4), {}),
    ("all-3d", (2, 3, 4), {}),
    ("axes-last2", (2, 3, 4), {"axes": (1, 2)}),
    ("axes-reversed", (3, 2, 5), {"axes": (2, 0)}),
    ("one-axis", (3, 4), {"axes": (0,)}),
    ("s-pad-cut", (3, 4), {"s": (5, 3), "axes": (0, 1)}),
    ("s-batched", (2, 3, 5), {"s": (4, 7), "axes": (-2, -1)}),
    ("s-minus1", (3, 4), {"s": (-1, 7), "axes": (0, 1)}),
]
COMPLEX_1D = ["fft", "ifft", "irfft", "hfft"]
REAL_1D = ["rfft", "ihfft"]
COMPLEX_ND = ["fftn", "ifftn", "irfftn"]
REAL_ND = ["rfftn"]


def _cases(names, table, real):
    return [pytest.param(name, shape, kw, real, id=f"{name}-{cid}{'-real' * real}")
            for name in names for cid, shape, kw in table]


CASES = (_cases(COMPLEX_1D, ONE_D, False) + _cases(REAL_1D, ONE_D, True)
         + _cases(COMPLEX_ND, N_D, False) + _cases(REAL_ND, N_D, True)
         # a real input to a complex transform: promoted, its gradient the real part
         + _cases(["fft", "ifft", "irfft", "hfft"], ONE_D[:4], True)
         + _cases(["fftn", "irfftn"], N_D[-3:], True))


def _input(shape, real, seed=0):
    return random_array(shape, np.float64 if real else np.complex128,
                        np.random.default_rng(seed))


def _call(name, kw, norm):
    return lambda a: getattr(tf.fft, name)(a, **kw, norm=norm)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,shape,kw,real", CASES)
def test_values(name, shape, kw, real, norm):
    x = _input(shape, real)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # NumPy is called the standard's way: no warning
        expected = getattr(np.fft, name)(x, **kw, norm=norm)
    y = getattr(tf.fft, name)(tf.as_tensor(x), **kw, norm=norm)   # shares x's memory
    assert isinstance(y, tf.Tensor)
    assert y.dtype == expected.dtype and y.shape == expected.shape
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-12)
    assert np.array_equal(x, _input(shape, real)), "the input was modified"


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,shape,kw,real", [c for c in CASES if "batch" in c.id])
def test_public_scipy_fallback(monkeypatch, name, shape, kw, real, norm):
    """Without SciPy's private pocketfft binding the public scipy.fft does the same."""
    monkeypatch.setattr(tf.fft, "_pocket", tf.fft._PublicPocket())
    x = _input(shape, real)
    expected = getattr(np.fft, name)(x, **kw, norm=norm)
    y = getattr(tf.fft, name)(tf.tensor(x), **kw, norm=norm)
    assert y.dtype == expected.dtype
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-12)
    check_grads(_call(name, kw, norm), [x], order=2)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,shape,kw,real", CASES)
def test_grads(name, shape, kw, real, norm):
    check_grads(_call(name, kw, norm), [_input(shape, real)], order=2)


@pytest.mark.parametrize("name,shape,kw,real", [
    pytest.param(n, (2, 3, 6), {"n": 5}, n in REAL_1D, id=n) for n in COMPLEX_1D + REAL_1D
] + [pytest.param(n, (2, 3, 6), {"s": (4, 5), "axes": (0, 2)}, n in REAL_ND, id=n)
     for n in COMPLEX_ND + REAL_ND])
def test_low_precision(name, shape, kw, real):
    check_low_precision(_call(name, kw, "ortho"), [_input(shape, real)])


# ---- dtypes -----------------------------------------------------------------------------

DTYPE_CASES = [pytest.param(name, dt, id=f"{name}-{np.dtype(dt).name}")
               for name in COMPLEX_1D + REAL_1D + COMPLEX_ND + REAL_ND
               for dt in (np.float32, np.float64, np.complex64, np.complex128, np.int64,
                          np.int8, np.bool_)
               # complex input to a real transform is an error (test_dtype_errors)
               if not (name in REAL_1D + REAL_ND and np.dtype(dt).kind == "c")]


@pytest.mark.parametrize("name,dtype", DTYPE_CASES)
def test_dtypes_follow_numpy(name, dtype):
    """The result dtype is NumPy 2's: precision kept, integers and bools as float64."""
    x = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    expected = getattr(np.fft, name)(x)
    y = getattr(tf.fft, name)(tf.tensor(x))
    assert y.dtype == expected.dtype
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6, atol=1e-5)


# ---- the rules, spelled out ---------------------------------------------------------------

@pytest.mark.parametrize("norm,dual", [("backward", "forward"), ("ortho", "ortho"),
                                       ("forward", "backward")])
def test_fft_adjoint_is_ifft_with_swapped_norm(norm, dual):
    x = tf.tensor(_input((6,), False), requires_grad=True)
    g = _input((9,), False, seed=1)
    (gx,) = tf.grad(tf.fft.fft(x, n=9, norm=norm), x, g)
    # the cotangent of a zero-padded input is the transform cut back to the input length
    np.testing.assert_allclose(gx.numpy(), np.fft.ifft(g, norm=dual)[:6], rtol=1e-12)


@pytest.mark.parametrize("n", [6, 7])
def test_rfft_adjoint_weights(n):
    """x̄ = irfft(w ⊙ ȳ) with w = 1 at DC (and Nyquist, n even), 1/2 elsewhere."""
    x = tf.tensor(_input((n,), True), requires_grad=True)
    g = _input((n // 2 + 1,), False, seed=1)
    (gx,) = tf.grad(tf.fft.rfft(x), x, g)
    w = np.full(n // 2 + 1, 0.5)
    w[0] = 1
    if n % 2 == 0:
        w[-1] = 1
    np.testing.assert_allclose(gx.numpy(), np.fft.irfft(w * g, n, norm="forward"), rtol=1e-12)
    # the same as Re(Jᴴȳ) with J the half DFT matrix
    J = np.exp(-2j * np.pi * np.outer(np.arange(n // 2 + 1), np.arange(n)) / n)
    np.testing.assert_allclose(gx.numpy(), (J.conj().T @ g).real, rtol=1e-12)


@pytest.mark.parametrize("n", [6, 7])
def test_irfft_ignores_imaginary_dc_and_nyquist(n):
    z = tf.tensor(_input((n // 2 + 1,), False), requires_grad=True)
    (gz,) = tf.grad(tf.sum(tf.fft.irfft(z, n=n) * _input((n,), True, seed=1)), z)
    assert gz.numpy()[0].imag == 0
    assert (gz.numpy()[-1].imag == 0) == (n % 2 == 0)
    bumped = z.numpy().copy()
    bumped[0] += 5j
    if n % 2 == 0:
        bumped[-1] -= 3j
    np.testing.assert_allclose(tf.fft.irfft(bumped, n=n).numpy(), tf.fft.irfft(z, n=n).numpy())


def test_second_order_create_graph():
    """The gradient of a gradient goes through the ops themselves (rules on Tensors)."""
    x = tf.tensor(_input((2, 5), True), requires_grad=True)
    y = tf.sum(tf.abs(tf.fft.rfft(x * x, n=8)) ** 2)
    (g,) = tf.grad(y, x, create_graph=True)
    (h,) = tf.grad(tf.sum(g * g), x)
    xn = x.numpy()
    # independent of the rules: L = Σ_k |(J u)_k|², u = v² zero-padded to 8, J the half DFT
    # matrix (5 x 8), so ∂L/∂u = 2 Re(Jᴴ J u) and ∂L/∂v = 2v ∂L/∂u (first 5 entries)
    J = np.exp(-2j * np.pi * np.outer(np.arange(5), np.arange(8)) / 8)

    def grad_np(v):
        u = np.zeros(v.shape[:-1] + (8,))
        u[..., :5] = v * v
        return 2 * v * (2 * (u @ J.T) @ J.conj()).real[..., :5]

    eps = 1e-6
    d = _input((2, 5), True, seed=3)
    fd = (np.sum(grad_np(xn + eps * d) ** 2) - np.sum(grad_np(xn - eps * d) ** 2)) / (2 * eps)
    np.testing.assert_allclose(g.numpy(), grad_np(xn), rtol=1e-10)
    np.testing.assert_allclose(np.sum(h.numpy() * d), fd, rtol=1e-6)


# ---- shifts and frequencies ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("shape,axes", [((5,), None), ((6,), None), ((3, 4), None),
                                        ((3, 4), 0), ((2, 3, 5), (2, 0)), ((2, 3, 5), [-1])])
def test_shifts(name, shape, axes):
    x = _input(shape, False)
    y = getattr(tf.fft, name)(tf.tensor(x), axes=axes)
    np.testing.assert_array_equal(y.numpy(), getattr(np.fft, name)(x, axes=axes))
    check_grads(lambda a: getattr(tf.fft, name)(a, axes=axes), [x], order=2)
    check_grads(lambda a: getattr(tf.fft, name)(a, axes=axes), [x.real.copy()], order=2)


def test_shifts_are_each_others_adjoint():
    x = tf.tensor(_input((5, 4), False), requires_grad=True)
    g = _input((5, 4), False, seed=1)
    (gx,) = tf.grad(tf.fft.fftshift(x), x, g)
    np.testing.assert_array_equal(gx.numpy(), np.fft.ifftshift(g))
    assert np.array_equal(tf.fft.ifftshift(tf.fft.fftshift(x)).numpy(), x.numpy())


def test_empty_input_zero_padded():
    """A zero-length axis is fine once n/s pads it; zero-size batch axes are fine too."""
    x = np.zeros((2, 0))
    np.testing.assert_array_equal(tf.fft.fft(x, n=3).numpy(), np.fft.fft(x, n=3))
    np.testing.assert_array_equal(tf.fft.rfftn(x, s=(2, 4), axes=(0, 1)).numpy(),
                                  np.fft.rfftn(x, s=(2, 4), axes=(0, 1)))
    assert tf.fft.ifft(np.zeros((0, 4), complex)).shape == (0, 4)
    leaf = tf.tensor(x, requires_grad=True)
    (g,) = tf.grad(tf.sum(tf.abs(tf.fft.fft(leaf, n=3))), leaf)
    assert g.shape == (2, 0)


@pytest.mark.parametrize("name", COMPLEX_1D + REAL_1D)
def test_strided_and_read_only_inputs(name):
    """Transposed, reversed and broadcast (read-only, zero-stride) payloads work as is."""
    base = _input((4, 5), name in REAL_1D)
    for x in (base.T, base[::-1, ::-2], np.broadcast_to(base[0], (3, 5))):
        expected = getattr(np.fft, name)(x, axis=0, norm="ortho")
        y = getattr(tf.fft, name)(tf.as_tensor(x), axis=0, norm="ortho")
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_shift_of_0d_is_identity():
    x = tf.tensor(np.float64(2.0))
    assert tf.fft.fftshift(x).item() == 2.0


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [1, 4, 7])
@pytest.mark.parametrize("dtype", [None, np.float32, np.float64])
def test_freqs(name, n, dtype):
    y = getattr(tf.fft, name)(n, d=0.5, dtype=dtype, device="cpu")
    expected = getattr(np.fft, name)(n, 0.5)
    assert isinstance(y, tf.Tensor) and not y.requires_grad
    assert y.dtype == (np.float64 if dtype is None else dtype)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)


# ---- numpy.fft on Tensors -------------------------------------------------------------------

@pytest.mark.parametrize("call,real", [
    pytest.param(lambda m, a: m.fft(a), False, id="fft(a)"),
    pytest.param(lambda m, a: m.fft(a, 7, 0, "ortho"), False, id="fft(a,7,0,ortho)"),
    pytest.param(lambda m, a: m.ifft(a, n=3, norm="forward"), False, id="ifft(a,n=3,norm=forward)"),
    pytest.param(lambda m, a: m.irfft(a, 7), False, id="irfft(a,7)"),
    pytest.param(lambda m, a: m.hfft(a, None, 0), False, id="hfft(a,None,0)"),
    pytest.param(lambda m, a: m.rfft(a, 5, -1, None), True, id="rfft(a,5,-1,None)"),
    pytest.param(lambda m, a: m.ihfft(a, 4, 0), True, id="ihfft(a,4,0)"),
    pytest.param(lambda m, a: m.fftn(a, (2, 5), (1, 0)), False, id="fftn(a,(2,5),(1,0))"),
    pytest.param(lambda m, a: m.ifftn(a, axes=[0], norm="ortho"), False, id="ifftn(a,axes=[0],norm=ortho)"),
    pytest.param(lambda m, a: m.rfftn(a), True, id="rfftn(a)"),
    pytest.param(lambda m, a: m.irfftn(a, (3, 5), (0, 1)), False, id="irfftn(a,(3,5),(0,1))"),
    pytest.param(lambda m, a: m.fft2(a, norm="forward"), False, id="fft2(a,norm=forward)"),
    pytest.param(lambda m, a: m.ifft2(a, (4, 3)), False, id="ifft2(a,(4,3))"),
    pytest.param(lambda m, a: m.rfft2(a), True, id="rfft2(a)"),
    pytest.param(lambda m, a: m.irfft2(a, axes=(1, 0)), False, id="irfft2(a,axes=(1,0))"),
    pytest.param(lambda m, a: m.fftshift(a), False, id="fftshift(a)"),
    pytest.param(lambda m, a: m.ifftshift(a, 1), False, id="ifftshift(a,1)"),
])
def test_numpy_dispatch(call, real):
    x = _input((3, 4), real)
    y = call(np.fft, tf.tensor(x))
    assert isinstance(y, tf.Tensor)
    np.testing.assert_allclose(y.numpy(), call(np.fft, x), rtol=1e-12, atol=1e-12)
    leaf = tf.tensor(x, requires_grad=True)
    assert call(np.fft, leaf).requires_grad
    check_grads(lambda a: call(np.fft, a), [x], order=2)


def test_numpy_dispatch_s_without_axes_uses_the_last_axes():
    x = _input((3, 4), False)
    with pytest.warns(DeprecationWarning):
        expected = np.fft.fftn(x, (5,))
    with pytest.warns(DeprecationWarning):
        y = np.fft.fftn(tf.tensor(x), (5,))
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12)


def test_numpy_dispatch_rejects_out():
    x = tf.tensor(_input((4,), False), requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="out="):
        np.fft.fft(x, out=np.empty(4, complex))
    with pytest.raises(tf.UnsupportedADError, match="out="):
        np.fft.rfftn(tf.tensor(np.ones(4)), out=np.empty(3, complex))


# ---- errors ------------------------------------------------------------------------------------

X34 = np.ones((3, 4), np.complex128)
R34 = np.ones((3, 4))


@pytest.mark.parametrize("f,match", [
    (lambda: tf.fft.fft(X34, norm="bogus"), "norm must be"),
    (lambda: tf.fft.rfftn(R34, norm=None), "norm must be"),
    (lambda: tf.fft.fft(X34, axis=2), "out of bounds"),
    (lambda: tf.fft.ihfft(R34, axis=-3), "out of bounds"),
    (lambda: tf.fft.ifft(X34, axis=1.0), "axis must be an int"),
    (lambda: tf.fft.fft(X34, n=0), "n = 0"),
    (lambda: tf.fft.rfft(R34, n=-2), "n = -2"),
    (lambda: tf.fft.hfft(X34, n=2.5), "n must be an int"),
    (lambda: tf.fft.irfft(np.ones((3, 1), complex)), "pass the output length"),
    (lambda: tf.fft.irfftn(np.ones((3, 1), complex)), "pass the output length"),
    (lambda: tf.fft.fftn(X34, s=(2, 2)), "s was given without axes"),
    (lambda: tf.fft.fftn(X34, s=(2,), axes=(0, 1)), "different lengths"),
    (lambda: tf.fft.ifftn(X34, s=(0, 2), axes=(0, 1)), "s entry = 0"),
    (lambda: tf.fft.fftn(X34, axes=(1, -1)), "repeated axis"),
    (lambda: tf.fft.rfftn(R34, axes=()), "axes is empty"),
    (lambda: tf.fft.irfftn(X34, axes=(0, 5)), "out of bounds"),
    (lambda: tf.fft.fftn(X34, axes=1.5), "sequence of ints"),
    (lambda: tf.fft.fft(np.zeros((3, 0))), "length 0 along axis 1"),
    (lambda: tf.fft.irfft(np.zeros((0, 3)), axis=0), "length 0 along axis 0"),
    (lambda: tf.fft.rfftn(np.zeros((0, 3))), "length 0 along axis 0"),
    (lambda: tf.fft.ifftn(np.zeros((2, 0)), s=(2, -1), axes=(0, 1)), "length 0 along axis 1"),
    (lambda: tf.fft.fft(np.complex128(1.0)), "0-d"),
    (lambda: tf.fft.fftn(np.float64(1.0)), "0-d"),
    (lambda: tf.fft.fftshift(R34, axes=(0, 0)), "repeated axis"),
    (lambda: tf.fft.ifftshift(R34, axes=2), "out of bounds"),
    (lambda: tf.fft.fftfreq(0), "n = 0"),
    (lambda: tf.fft.rfftfreq(4, d=0), "nonzero"),
    (lambda: tf.fft.fftfreq(4, device="gpu"), "device"),
])
def test_value_errors(f, match):
    with pytest.raises(tf.ShapeError, match=match) as info:
        f()
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("f,match", [
    (lambda: tf.fft.rfft(X34), "real tensor"),
    (lambda: tf.fft.ihfft(X34), "real tensor"),
    (lambda: tf.fft.rfftn(X34, axes=(0,)), "real tensor"),
    (lambda: tf.fft.fftfreq(4, dtype=np.complex128), "real floating"),
    (lambda: tf.fft.rfftfreq(4, dtype="nonsense"), "real floating"),
])
def test_dtype_errors(f, match):
    with pytest.raises(tf.DTypeError, match=match):
        f()


def test_failing_call_records_nothing():
    x = tf.tensor(_input((4,), False), requires_grad=True)
    y = tf.fft.fft(x)
    with pytest.raises(tf.ShapeError):
        tf.fft.fft(x, n=0)
    tf.sum(tf.abs(y)).backward()
    g = x.grad.numpy().copy()
    with pytest.raises(tf.ShapeError):
        tf.fft.ifft(x, norm="nope")
    assert np.array_equal(x.grad.numpy(), g)


# ---- dct, dst and their inverses (op fft.r2r) --------------------------------------------------

import scipy.fft as sp_fft  # noqa: E402

R2R = ["dct", "idct", "dst", "idst"]
TYPES = [1, 2, 3, 4]
R2R_SHAPES = [   # (id, shape, kwargs): odd/even lengths, padding, truncation, other axes, batch
    ("odd", (5,), {}),
    ("even", (6,), {}),
    ("n-pad", (4,), {"n": 7}),
    ("n-cut", (7,), {"n": 4}),
    ("axis0", (5, 3), {"axis": 0}),
    ("batch", (2, 3, 4), {"axis": 1, "n": 5}),
]


@pytest.mark.parametrize("orth", [None, False, True])
@pytest.mark.parametrize("norm", [None] + NORMS)
@pytest.mark.parametrize("t", TYPES)
@pytest.mark.parametrize("name", R2R)
def test_r2r_values_and_adjoint(name, t, norm, orth):
    """Values against scipy.fft to 1e-12, and the VJP is the transpose:
    ⟨T x, y⟩ = ⟨x, T* y⟩ for random x and y (T* from tf.vjp), real and complex."""
    rng = np.random.default_rng(t)
    for cid, shape, kw in R2R_SHAPES:
        for dtype in (np.float64, np.complex128):
            x = random_array(shape, dtype, rng)
            ref = lambda a: getattr(sp_fft, name)(a, t, **kw, norm=norm, orthogonalize=orth)
            # (SciPy 1.17 ignores orthogonalize=True for complex input unless norm="ortho";
            # the transform is complex-linear, so the reference is the real/imag split)
            expected = ref(x) if dtype is np.float64 else ref(x.real) + 1j * ref(x.imag)
            y, pullback = tf.vjp(lambda a: getattr(tf.fft, name)(a, t, **kw, norm=norm,
                                                                  orthogonalize=orth), x)
            assert y.dtype == expected.dtype and y.shape == expected.shape, cid
            np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12,
                                       atol=1e-12 * np.abs(expected).max(), err_msg=cid)
            w = random_array(expected.shape, dtype, rng)
            (adj,) = pullback(w)
            lhs = np.vdot(w, expected)          # ⟨y, w⟩ = ⟨T x, w⟩
            rhs = np.vdot(adj.numpy(), x)       # ⟨T* w, x⟩
            assert abs(lhs - rhs) <= 1e-12 * np.abs(expected).max() * np.abs(w).sum(), cid


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("t", TYPES)
@pytest.mark.parametrize("name", R2R)
def test_r2r_grads(name, t, norm):
    for k, (cid, shape, kw) in enumerate(R2R_SHAPES):
        dtype = np.complex128 if k % 2 else np.float64
        x = random_array(shape, dtype, np.random.default_rng(k))
        check_grads(lambda a: getattr(tf.fft, name)(a, t, **kw, norm=norm), [x])


@pytest.mark.parametrize("name", ["dctn", "idctn", "dstn", "idstn"])
@pytest.mark.parametrize("t", TYPES)
def test_r2r_nd(name, t):
    rng = np.random.default_rng(0)
    x = random_array((3, 4, 5), np.float64, rng)
    for kw in ({}, {"axes": (0, 2)}, {"s": (4, 6)}, {"s": (2, 6), "axes": (2, 0)},
               {"norm": "ortho"}, {"norm": "forward", "axes": 1}):
        expected = getattr(sp_fft, name)(x, t, **kw)
        got = getattr(tf.fft, name)(x, t, **kw).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=str(kw))
    z = random_array((3, 4), np.complex128, rng)
    check_grads(lambda a: getattr(tf.fft, name)(a, t, s=(5, 3), norm="ortho"), [z])


def test_r2r_ortho_is_orthogonal_and_low_precision():
    """dct/dst with norm="ortho" are orthogonal: the VJP is the inverse transform."""
    x = random_array((6,), np.float64, np.random.default_rng(1))
    for kind in ("dct", "dst"):
        for t in TYPES:
            _, pb = tf.vjp(lambda a: getattr(tf.fft, kind)(a, t, norm="ortho"), x)
            (g,) = pb(x)
            np.testing.assert_allclose(g.numpy(), getattr(sp_fft, "i" + kind)(x, t,
                                                                               norm="ortho"),
                                       rtol=1e-12, atol=1e-13)
            check_low_precision(lambda a: getattr(tf.fft, kind)(a, t), [x])
            assert tf.fft.dct(x.astype(np.float32), t).dtype == np.float32
    assert tf.fft.dct(np.arange(4), 2).dtype == np.float64   # integers become float64


def test_r2r_errors():
    x = tf.tensor(np.ones(4), requires_grad=True)
    with pytest.raises(tf.ShapeError, match="type must be 1, 2, 3 or 4"):
        tf.fft.dct(x, 5)
    with pytest.raises(tf.ShapeError, match='norm must be "backward"'):
        tf.fft.dst(x, norm="unitary")
    with pytest.raises(tf.ShapeError, match="type-1 DCT needs at least 2 points"):
        tf.fft.dct(np.ones(1), 1)
    with pytest.raises(tf.ShapeError, match="not a valid number of points"):
        tf.fft.idct(x, n=0)
    with pytest.raises(tf.ShapeError, match="out of bounds"):
        tf.fft.idst(x, axis=1)
    with pytest.raises(tf.ShapeError, match="different lengths"):
        tf.fft.dctn(np.ones((2, 3)), s=(2, 3), axes=(0,))
    with pytest.raises(tf.ShapeError, match="dimension >= 1"):
        tf.fft.dct(np.float64(1.0))
