"""lapack_base.all_finite (the check_finite of every linalg input) against numpy.isfinite."""
import numpy as np
import pytest

import tenferro as tf
from tenferro._errors import LinAlgError
from tenferro._kernels import lapack_base, lapack_base_twin



BAD = [np.nan, np.inf, -np.inf]


def _layouts(a):
    """a in C order, Fortran order, transposed, strided, byte-swapped, 3-d."""
    yield a
    yield np.asfortranarray(a)
    yield a.T
    yield a[:, ::2]
    yield a.astype(a.dtype.newbyteorder(">"))
    yield np.stack([a, a])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64,
                                   np.float16, np.longdouble, np.int64, np.bool_])
def test_all_finite_agrees_with_numpy(dtype):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((5, 7)).astype(dtype)
    cases = [base, base[:0], np.zeros((0, 3), dtype), np.ones((1, 1), dtype)]
    if np.dtype(dtype).kind in "fc":
        for i in (0, 17, 34):                    # first, middle, last entry
            for v in BAD:
                b = base.copy()
                b.flat[i] = v
                cases.append(b)
                if np.dtype(dtype).kind == "c":  # a bad imaginary part alone
                    c = base.copy()
                    c.flat[i] = complex(1.0, v)
                    cases.append(c)
    for case in cases:
        for a in _layouts(case):
            want = bool(np.isfinite(a).all())
            assert lapack_base.all_finite(a) is want, (a.dtype, a.shape, a.strides)
            assert lapack_base_twin.all_finite(a) is want


def test_linalg_input_check_names_the_entry():
    a = np.eye(4)
    a[2, 1] = np.nan
    for f in (tf.linalg.svd, tf.linalg.cholesky, tf.linalg.inv):
        with pytest.raises(LinAlgError, match=r"non-finite entry .* at index \(2, 1\)"):
            f(a)
    b = np.eye(3, dtype=np.complex64)
    b[0, 2] = complex(0, np.inf)
    with pytest.raises(LinAlgError, match=r"index \(0, 2\)"):
        tf.linalg.svd(b)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_all_finite_block_edges_and_extreme_values(dtype):
    # the check ORs (exponent field + one unit) over blocks of 2048 reals, looking for a
    # carry into the sign bit: a bad entry on either side of a block edge, at the ends,
    # NaNs with other payloads and signs, and finite extremes (largest, subnormal, ±0)
    # that must pass
    finite = [np.finfo(dtype).max, -np.finfo(dtype).max, np.finfo(dtype).smallest_subnormal,
              0.0, -0.0, -3.0]
    for n in (1, 7, 1023, 1024, 1025, 2047, 2048, 2049, 5000):
        for pos in sorted({0, n // 2, n - 1, min(n - 1, 1023), min(n - 1, 1024)}):
            for v in BAD + finite + ["-nan", "payload"]:
                a = np.ones(n, dtype)
                if v == "-nan":
                    a[pos] = -np.nan
                elif v == "payload":         # a NaN with the lowest mantissa bit only
                    r = a.view(np.uint64 if a.real.itemsize == 8 else np.uint32)
                    top = np.finfo(dtype).nexp + np.finfo(dtype).nmant   # sign bit index
                    r[0 if pos == 0 else -1] = ((1 << np.finfo(dtype).nexp) - 1 << top -
                                                np.finfo(dtype).nexp) | 1
                else:
                    a[pos] = v
                assert lapack_base.all_finite(a) is bool(np.isfinite(a).all()), (n, pos, v)
