"""tape.sum_small: t.sum() of a small float tensor with the sum computed in C.

It must give numpy.add.reduce's bits (NumPy's pairwise summation from the identity 0) for
every size up to 65536 entries (every size to 130, then sizes at and around the cuts of
NumPy's recursion above 128), float64 and float32, 1-d and C-contiguous n-d payloads;
decline (None) everything else; and record the same graph as the NumPy path (reverse,
forward, no_grad). Its twin (tape_twin.sum_small) declines and sums the same way."""
import numpy as np
import pytest

import tenferro as tf
from tenferro._kernels import tape, tape_twin
from tenferro._ops.reductions import _sum_op

SIZES = (list(range(0, 131)) + [255, 256, 257, 263, 264, 271, 272, 1000, 1023, 1024, 1025,
                                 4095, 4096, 4097, 8191, 8192, 8193, 30001, 65535, 65536])


def _payloads(n, dtype, rng):
    """Entries of mixed signs and magnitudes (so the order of the additions shows in the
    last bits), plus signed zeros and non-finite values."""
    mags = 10.0 ** rng.uniform(-4, 4, n)
    yield (rng.standard_normal(n) * mags).astype(dtype)
    yield np.full(n, -0.0, dtype=dtype)
    if n:
        a = rng.standard_normal(n).astype(dtype)
        a[rng.integers(n)] = np.inf
        yield a
        a = rng.standard_normal(n).astype(dtype)
        a[rng.integers(n)] = np.nan
        yield a


@pytest.mark.parametrize("module", [tape, tape_twin], ids=["compiled", "twin"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_bits_as_numpy(module, dtype):
    rng = np.random.default_rng(7)
    for n in SIZES:
        for trial in range(5 if n <= 1024 else 1):
            for a in _payloads(n, dtype, rng):
                y = module.sum_small(_sum_op, tf.tensor(a))
                want = np.add.reduce(a, None)
                assert y is not None, (n, dtype)
                got = y._data
                assert got.shape == () and got.dtype == a.dtype
                assert got.tobytes() == want.tobytes(), (n, a, got, want)


@pytest.mark.parametrize("module", [tape, tape_twin], ids=["compiled", "twin"])
def test_nd_contiguous_payload(module):
    rng = np.random.default_rng(1)
    for shape in ((4, 8, 4), (16, 16), (3, 50, 7)):
        a = rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 4, shape)
        y = module.sum_small(_sum_op, tf.tensor(a))
        assert y._data.tobytes() == np.add.reduce(a, None).tobytes()


@pytest.mark.parametrize("module", [tape, tape_twin], ids=["compiled", "twin"])
def test_declines_other_payloads(module):
    rng = np.random.default_rng(2)
    declined = [
        tf.tensor(rng.standard_normal(65537)),                      # large: NumPy's path
        tf.Tensor._wrap(rng.standard_normal((3, 4)).T),              # not C-contiguous
        tf.tensor(rng.standard_normal(5) + 1j),                      # complex
        tf.tensor(np.arange(5)),                                     # integer
        # byte-swapped (tf.tensor refuses it; the guard does not rely on that)
        tf.Tensor._wrap(np.arange(5.0).astype(">f8")),
        rng.standard_normal(5),                                      # not a Tensor
    ]
    for t in declined:
        assert module.sum_small(_sum_op, t) is None


def test_strided_view_declined():
    t = tf.tensor(np.arange(10.0))[::2]
    assert tape.sum_small(_sum_op, t) is None
    assert t.sum().item() == 20.0       # the NumPy path then


def test_records_the_sum_like_numpys_path():
    a = np.random.default_rng(3).standard_normal(6)
    x = tf.tensor(a, requires_grad=True)
    y = x.sum()
    assert y.grad_fn is not None and y.grad_fn.op.name == "sum"
    (g,) = tf.grad([y], [x])
    np.testing.assert_array_equal(g.numpy(), np.ones(6))
    with tf.no_grad():
        assert x.sum().grad_fn is None
    # forward mode goes through the same recording step
    _, t = tf.jvp(lambda v: v.sum(), (x,), (tf.tensor(np.arange(6.0)),))
    assert t.item() == 15.0
    # second order: the sum's pullback recorded under create_graph
    (g,) = tf.grad([(x * x).sum()], [x], create_graph=True)
    (h,) = tf.grad([g.sum()], [x])
    np.testing.assert_array_equal(h.numpy(), np.full(6, 2.0))


def test_every_spelling_of_a_full_sum_takes_it():
    # tf.sum, t.sum and np.sum of a small float tensor give numpy.add.reduce's bits;
    # tf.sum(dtype=) casts first, then sums in the new dtype
    rng = np.random.default_rng(4)
    for dtype in (np.float64, np.float32):
        a = (rng.standard_normal(13) * 10.0 ** rng.uniform(-4, 4, 13)).astype(dtype)
        t = tf.tensor(a)
        want = np.add.reduce(a, None).tobytes()
        for y in (tf.sum(t), t.sum(), np.sum(t)):
            assert y._data.dtype == dtype and y._data.tobytes() == want
    a = rng.standard_normal(13) * 10.0 ** rng.uniform(-4, 4, 13)
    y = tf.sum(tf.tensor(a), dtype=tf.float32)
    assert y._data.tobytes() == np.add.reduce(a.astype(np.float32), None).tobytes()
