"""The matrix exponential kernels (tenferro/_kernels/expm.pyx: expm_pade, expm_frechet)
against their NumPy twins (expm_twin.expm_pade / expm_frechet) and SciPy: every Padé
degree, scaling s > 0, stacks mixing (m, s), strided and broadcast inputs, the adjoint
flag, every input dtype, non-finite and 0-size inputs."""
import numpy as np
import pytest
import scipy.linalg as sla

from tenferro._kernels import expm_twin as ref
from tenferro._kernels import expm as kern
from tenferro.testing import random_array

# ‖A‖₁ -> (m, s) of the 1-norm selection (Higham 2005 θ_m; 5.37 is θ₁₃)
NORMS = [(1e-3, (3, 0)), (0.1, (5, 0)), (0.5, (7, 0)), (1.5, (9, 0)), (4.0, (13, 0)),
         (20.0, (13, 2)), (300.0, (13, 6))]


def scaled(shape, dtype, norm1, rng):
    """A random stack whose matrices all have ‖A‖₁ = norm1."""
    a = random_array(shape, dtype, rng)
    return a * (norm1 / np.abs(a).sum(axis=-2).max(axis=-1))[..., None, None]


def close(got, want, rtol):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=0, atol=rtol * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("norm1,degree", NORMS)
def test_kernel_equals_twin(norm1, degree, dtype):
    rng = np.random.default_rng(0)
    for n in (1, 4, 9):
        a = scaled((2, 3, n, n), dtype, norm1, rng)
        e = random_array((2, 3, n, n), dtype, rng)
        value, data = kern.expm_pade(a)
        tvalue, tdata = ref.expm_pade(a)
        assert data[1].tolist() == tdata[1].tolist() == [list(degree)] * 6
        # exp's relative condition number grows like ‖A‖₁ (e.g. 1 x 1: |a|)
        rtol = 1e-14 * max(1.0, norm1)
        close(value, tvalue, rtol)
        for adjoint in (False, True):
            close(kern.expm_frechet(data, e, adjoint), ref.expm_frechet(tdata, e, adjoint),
                  rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("norm1,degree", NORMS[::2])
def test_kernel_equals_scipy(norm1, degree, dtype):
    """exp(A) and L(A, E) (Al-Mohy & Higham 2009, SciPy's expm_frechet), and the adjoint
    L(Aᴴ, E)."""
    rng = np.random.default_rng(1)
    a = scaled((5, 5), dtype, norm1, rng)
    e = random_array((5, 5), dtype, rng)
    value, data = kern.expm_pade(a)
    rtol = 1e-13 * max(1.0, norm1)
    close(value, sla.expm(a), rtol)
    close(kern.expm_frechet(data, e), sla.expm_frechet(a, e)[1], rtol)
    close(kern.expm_frechet(data, e, True), sla.expm_frechet(a.conj().T, e)[1], rtol)


def test_stack_mixing_degrees_and_nan():
    """Each matrix has its own (m, s); a non-finite one gives (0, 0) and NaN results
    without spoiling the others."""
    rng = np.random.default_rng(2)
    a = np.stack([scaled((4, 4), np.float64, x, rng) for x in (1e-3, 30.0, 0.5, 2.0)])
    a[3, 1, 2] = np.nan
    e = random_array((4, 4, 4), np.float64, rng)
    for impl in (kern, ref):
        value, data = impl.expm_pade(a)
        assert data[1].tolist() == [[3, 0], [13, 3], [7, 0], [0, 0]]
        lx = impl.expm_frechet(data, e)
        assert np.isnan(value[3]).all() and np.isnan(lx[3]).all()
        for k in range(3):
            close(value[k], sla.expm(a[k]), 1e-13)
            close(lx[k], sla.expm_frechet(a[k], e[k])[1], 1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_dtypes_run_in_double(dtype):
    rng = np.random.default_rng(3)
    a = scaled((2, 3, 3), np.complex128 if np.dtype(dtype).kind == "c" else np.float64,
               2.0, rng).astype(dtype)
    e = random_array((2, 3, 3), dtype, rng)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    value, data = kern.expm_pade(a)
    tvalue, tdata = ref.expm_pade(a)
    assert value.dtype == tvalue.dtype == wide
    close(value, tvalue, 1e-14)
    close(value, sla.expm(a.astype(wide)), 1e-13)
    for adjoint in (False, True):
        got = kern.expm_frechet(data, e, adjoint)
        assert got.dtype == wide
        close(got, ref.expm_frechet(tdata, e, adjoint), 1e-14)


def test_strided_and_broadcast_inputs():
    rng = np.random.default_rng(4)
    big = scaled((3, 6, 6), np.complex128, 8.0, rng)
    a = big[:, ::2, 1::2]                           # non-contiguous (3, 3, 3)
    at = np.swapaxes(big[:, :3, :3], -1, -2)        # transposed view
    e = np.broadcast_to(random_array((3, 3), np.complex128, rng), (3, 3, 3))   # strides 0
    for x in (a, at):
        value, data = kern.expm_pade(x)
        xc = np.ascontiguousarray(x)
        close(value, kern.expm_pade(xc)[0], 1e-15)
        close(value, ref.expm_pade(xc)[0], 1e-14)
        tdata = ref.expm_pade(xc)[1]
        for adjoint in (False, True):
            close(kern.expm_frechet(data, e, adjoint),
                  ref.expm_frechet(tdata, np.ascontiguousarray(e), adjoint), 1e-14)
            close(kern.expm_frechet(data, e[:, ::-1].swapaxes(-1, -2), adjoint),
                  ref.expm_frechet(tdata, np.ascontiguousarray(e[:, ::-1].swapaxes(-1, -2)),
                                   adjoint), 1e-14)


def test_nonnormal_triangular_exact():
    """A nilpotent, very nonnormal A with 8 squarings: Q is factored as itself (not its
    transpose), which keeps the exact zeros that this L is sensitive to (1e-10 off
    otherwise)."""
    a = np.diag(np.full(3, 1e3), 1)
    e = random_array((4, 4), np.float64, np.random.default_rng(14))
    value, data = kern.expm_pade(a)
    assert data[1].tolist() == [[13, 8]]
    assert not np.tril(value, -1).any()
    ref_l = sla.expm_frechet(a, e)[1]
    close(kern.expm_frechet(data, e), ref_l, 1e-13)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 2, 2), (2, 0, 3, 3)])
def test_empty(shape):
    for impl in (kern, ref):
        a = np.zeros(shape)
        value, data = impl.expm_pade(a)
        assert value.shape == shape and value.dtype == np.float64
        out = impl.expm_frechet(data, np.zeros(shape, np.float32), True)
        assert out.shape == shape


def test_shape_mismatch_raises():
    _, data = kern.expm_pade(np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="does not fit"):
        kern.expm_frechet(data, np.zeros((3, 3, 3)))
