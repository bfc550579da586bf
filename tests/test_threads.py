"""tenferro._threads: the thread-count API, and the batched kernels split over threads
give bit-identical results and the same first failing matrix as the serial loop, for
every threaded kernel and dtype, odd chunkings (nb = 1, 7) included."""
import os
import sys
import numpy as np
import pytest

import tenferro as tf
from tenferro import _kernels, _threads
from tenferro._errors import LinAlgError, TenferroError
from tenferro._kernels import (_workers, inverse, lapack_eig, lapack_lu_chol, lapack_qr,
                               spectral, triangular_backprop)
from tenferro.testing import random_array

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture
def split_always(monkeypatch):
    """Split every stack (no work threshold, level-3 kernels too) and count the jobs the
    native workers ran, so a test sees that the threaded path really ran."""
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    monkeypatch.setattr(_threads, "BLAS3_LOCKED", False)   # split the level-3 kernels too
    old = _threads.get_num_threads()
    yield Splits()
    _threads.set_num_threads(old)


class Splits:
    """True when a stack was split (a job run on the native workers,
    tenferro/_kernels/_workers.pyx) since the last clear()."""

    def __init__(self):
        self.native = _workers.split_count()

    def clear(self):
        self.native = _workers.split_count()

    def __bool__(self):
        return _workers.split_count() > self.native


def _runs(fn, threads=(1, 2, 3)):
    """fn() under each thread count: a list of results (tuples of arrays)."""
    out = []
    for t in threads:
        with tf.num_threads(t):
            r = fn()
        out.append(r if isinstance(r, tuple) else (r,))
    return out


def _assert_bitwise(results):
    ref = results[0]
    for other in results[1:]:
        assert len(other) == len(ref)
        for x, y in zip(ref, other):
            x, y = np.asarray(x), np.asarray(y)
            assert x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes()     # bit for bit, NaN payloads included


# --- the API -------------------------------------------------------------------------

def test_set_get_and_context_manager():
    old = tf.get_num_threads()
    try:
        tf.set_num_threads(1)
        assert tf.get_num_threads() == 1
        tf.set_num_threads(np.int64(3))
        assert tf.get_num_threads() == 3 and type(tf.get_num_threads()) is int
        with tf.num_threads(2) as n:
            assert n == 2 and tf.get_num_threads() == 2
        assert tf.get_num_threads() == 3
        with pytest.raises(RuntimeError):
            with tf.num_threads(1):
                raise RuntimeError("boom")
        assert tf.get_num_threads() == 3       # restored on an exception too
    finally:
        tf.set_num_threads(old)


@pytest.mark.parametrize("bad", [0, -1, -8, 2.5, 2.0, "2", None, True])
def test_bad_thread_count_raises(bad):
    old = tf.get_num_threads()
    with pytest.raises(tf.ThreadCountError, match="number of threads") as e:
        tf.set_num_threads(bad)
    assert isinstance(e.value, ValueError) and isinstance(e.value, TenferroError)
    with pytest.raises(tf.ThreadCountError):
        with tf.num_threads(bad):
            pass
    assert tf.get_num_threads() == old         # nothing changed


def test_default_from_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert _threads._default() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert _threads._default() == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert _threads._default() == (__import__("os").cpu_count() or 1)


def test_when_a_stack_is_split(monkeypatch):
    threads_for = _threads._threads_for
    monkeypatch.setattr(_threads, "_num_threads", 2)
    least = _threads.MIN_WORK
    assert threads_for(1000, 8, 10**9) == 2
    assert threads_for(1000, 8, least) == 2
    assert threads_for(1, 8, 10**9) == 1                  # nothing to split
    assert threads_for(1000, 8, least - 1) == 1           # too little work
    assert threads_for(1000, 65, 10**9) == 1              # large: OpenBLAS's threads
    assert threads_for(1000, 8, 10**9, blas3=True) == 1   # level-3 BLAS: serial
    monkeypatch.setattr(_threads, "BLAS3_LOCKED", False)
    assert threads_for(1000, 8, 10**9, blas3=True) == 2
    monkeypatch.setattr(_threads, "_num_threads", 3)
    assert threads_for(2, 8, 10**9) == 2                  # no more threads than matrices
    monkeypatch.setattr(_threads, "_num_threads", 1)
    assert threads_for(1000, 8, 10**9) == 1               # serial


# --- bit-identical kernels -----------------------------------------------------------

def _square(nb, n, dtype, rng):
    return random_array((nb, n, n), dtype, rng)


def _spd(nb, n, dtype, rng):
    a = random_array((nb, n, n), dtype, rng)
    return a @ np.conj(a.transpose(0, 2, 1)) + n * np.eye(n, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nb", [1, 7, 40])
def test_lapack_kernels_bitwise(split_always, dtype, nb):
    rng = np.random.default_rng(nb)
    a = _square(nb, 5, dtype, rng)
    tall = random_array((nb, 6, 4), dtype, rng)
    wide = random_array((nb, 3, 5), dtype, rng)
    tall40 = random_array((nb, 40, 33), dtype, rng)
    h = _spd(nb, 5, dtype, rng)
    rhs = random_array((nb, 5, 2), dtype, rng)
    lu, piv = lapack_lu_chol.getrf(a)
    cases = [
        lambda: lapack_eig.svd(a),
        lambda: lapack_eig.svd(tall, full_matrices=True),
        lambda: lapack_eig.svd(wide, compute_uv=False),
        lambda: lapack_eig.svd(a.transpose(0, 2, 1)),          # strided input
        lambda: lapack_eig.eigh(h),
        lambda: lapack_eig.eigh(h, lower=False, compute_v=False),
        lambda: lapack_qr.qr(tall),
        lambda: lapack_qr.qr(wide, mode="complete"),
        lambda: lapack_qr.qr(a, mode="r"),
        lambda: lapack_qr.qr(tall40, mode="complete"),          # the geqrt path
        lambda: lapack_lu_chol.getrf(a, return_info=True),
        lambda: lapack_lu_chol.potrf(h),
        lambda: lapack_lu_chol.potrf(h, lower=False),
        lambda: lapack_lu_chol.getrs(lu, piv, rhs),
        lambda: lapack_lu_chol.getrs(lu, piv, rhs, trans=2),
        lambda: lapack_lu_chol.getrs(lu[:1], piv[:1], rhs),         # broadcast factor
        lambda: inverse.lu_inverse(lu, piv),
        lambda: inverse.lu_inverse(lu, piv, trans=2),
        lambda: inverse.lu_inverse(lu, piv, scale=np.arange(1.0, nb + 1), trans=1),
        lambda: inverse.lu_inverse(*lapack_lu_chol.getrf(a), trans=1, overwrite_lu=True),
    ]
    for case in cases:
        split_always.clear()
        _assert_bitwise(_runs(case))
        assert nb == 1 or split_always            # the threaded path ran


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nb", [1, 7, 40])
def test_pullback_kernels_bitwise(split_always, dtype, nb):
    rng = np.random.default_rng(100 + nb)
    real = np.finfo(dtype).dtype
    k = 5
    s = np.ascontiguousarray(np.sort(np.abs(rng.standard_normal((nb, k))) + 0.1,
                                     axis=-1)[:, ::-1]).astype(real)
    X = random_array((nb, k, k), dtype, rng)
    Y = random_array((nb, k, k), dtype, rng)
    sbar = random_array((nb, k), real, rng)
    w = np.sort(rng.standard_normal((nb, k)), axis=-1).astype(real)

    def svd_core(mode):
        out = np.full((nb, k, k), np.nan, dtype)
        sinv = np.full((nb, k), np.nan, real)
        spectral.svd_core(X, Y, s, sbar, 0.0, 1e-3, mode, out, sinv)
        return out, sinv

    def eigh_core():
        out = np.full((nb, k, k), np.nan, dtype)
        spectral.eigh_core(X, w, sbar, 0.0, 1e-3, out)
        return out

    q, r = lapack_qr.qr(random_array((nb, 7, k), dtype, rng))
    gq = random_array(q.shape, dtype, rng)
    gr = np.triu(random_array(r.shape, dtype, rng))
    l = lapack_lu_chol.potrf(_spd(nb, 9, dtype, rng))
    gl = random_array(l.shape, dtype, rng)
    a = random_array((nb, 9, 9), dtype, rng) + 6 * np.eye(9, dtype=dtype)
    _, lf, uf, perm = lapack_lu_chol.lu(a, True)
    cases = [lambda: svd_core(0), lambda: svd_core(1), lambda: svd_core(2), eigh_core,
             lambda: triangular_backprop.qr_backprop(q, r, gq, gr),
             lambda: triangular_backprop.qr_backprop(q, r, None, gr),
             lambda: triangular_backprop.cholesky_backprop(l, gl),
             lambda: triangular_backprop.cholesky_backprop(l, gl.transpose(0, 2, 1)),
             lambda: triangular_backprop.lu_backprop(perm, lf, uf, gl, gl),
             lambda: triangular_backprop.lu_backprop(None, lf, uf, None, gl.transpose(0, 2, 1))]
    for case in cases:
        split_always.clear()
        _assert_bitwise(_runs(case))
        assert nb == 1 or split_always


# --- the first failing matrix is the serial loop's -----------------------------------

def _error(fn, t):
    with tf.num_threads(t):
        with pytest.raises(LinAlgError) as e:
            fn()
    return str(e.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", [[0], [6], [3, 5], [5, 6], [0, 6]])
def test_first_failure_is_serial(split_always, dtype, bad):
    """nb = 7 on 2 and 3 threads: failures in the first, a middle and the last chunk;
    the message (batch index, info) is the serial loop's."""
    rng = np.random.default_rng(7)
    nb, n = 7, 4
    a = _square(nb, n, dtype, rng)
    h = _spd(nb, n, dtype, rng)
    r = np.triu(random_array((nb, n, n), dtype, rng)) + 3 * np.eye(n, dtype=dtype)
    q = lapack_qr.qr(random_array((nb, n, n), dtype, rng))[0]
    nan_a, nan_h, indef, sing_r = a.copy(), h.copy(), h.copy(), r.copy()
    for i, b in enumerate(bad):
        nan_a[b, 1, 2] = np.nan
        nan_h[b, 2, 1] = np.inf
        indef[b, 2, 2] = -(i + 1)          # minor of order 3 not positive
        sing_r[b, 1, 1] = 0
    cases = [lambda: lapack_eig.svd(nan_a), lambda: lapack_eig.eigh(nan_h),
             lambda: lapack_lu_chol.potrf(indef),
             lambda: triangular_backprop.qr_backprop(q, sing_r, q, None)]
    for case in cases:
        msgs = [_error(case, t) for t in (1, 2, 3)]
        assert f"matrix ({bad[0]},)" in msgs[0] or f"matrix {bad[0]} " in msgs[0], msgs[0]
        assert msgs[1] == msgs[0] and msgs[2] == msgs[0]
    # lu_inverse: pivots that are not row indices (ValueError naming the matrix)
    lu, piv = lapack_lu_chol.getrf(a)
    for b in bad:
        piv[b, 1] = n + 3
    msgs = []
    for t in (1, 2, 3):
        with tf.num_threads(t), pytest.raises(ValueError) as e:
            inverse.lu_inverse(lu, piv)
        msgs.append(str(e.value))
    assert f"matrix {bad[0]} " in msgs[0] and msgs[1] == msgs[0] == msgs[2]
    # getrf reports exactly singular matrices per matrix (info), not as a failure
    sing = a.copy()
    for b in bad:
        sing[b, :, 0] = 0
    infos = _runs(lambda: lapack_lu_chol.getrf(sing, return_info=True)[2])
    _assert_bitwise(infos)
    assert sorted(np.flatnonzero(infos[0][0])) == sorted(bad)


@pytest.mark.skipif(_kernels.PURE_PYTHON, reason="the NumPy twins run serially: no split")
def test_linalg_functions_thread_count_independent(split_always):
    """The public linear algebra, forward and backward, on a stack: same bits."""
    rng = np.random.default_rng(3)
    a0 = rng.standard_normal((30, 6, 6))
    spd0 = a0 @ a0.transpose(0, 2, 1) + 6 * np.eye(6)
    rhs0 = rng.standard_normal((30, 6, 2))

    def run():
        a = tf.tensor(a0, requires_grad=True)
        spd = tf.tensor(spd0, requires_grad=True)
        rhs = tf.tensor(rhs0, requires_grad=True)
        u, s, vt = tf.linalg.svd(a, full_matrices=False)
        w, v = tf.linalg.eigh(spd)
        q, r = tf.linalg.qr(a)
        loss = (tf.sum(s ** 2) + tf.sum(u[..., 0] ** 2 * s[..., :1]) + tf.sum(w * w)
                + tf.sum(v[..., 0] ** 4) + tf.sum(q * q[..., ::-1]) + tf.sum(r)
                + tf.sum(tf.linalg.cholesky(spd)) + tf.sum(tf.linalg.solve(a, rhs) ** 2)
                + tf.sum(tf.linalg.inv(a)[..., 0] ** 2))
        loss.backward()
        return tuple(np.asarray(x.grad) for x in (a, spd, rhs)) + (loss.detach().numpy(),)

    _assert_bitwise(_runs(run))
    assert split_always


def _svd_in_child(queue):
    from tenferro._kernels import _workers as wk, lapack_eig as lp
    a = np.random.default_rng(5).standard_normal((50, 4, 4))
    workers, splits = wk.worker_count(), wk.split_count()
    s = lp.svd(a, compute_uv=False).tobytes()
    # fork copied no worker thread; the split started one
    queue.put((s, workers, wk.worker_count(), wk.split_count() - splits))


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_forked_child_gets_its_own_pool(split_always):
    """After the parent used its workers, a forked child splits a stack too (it must not
    wait for the parent's threads, which fork does not copy): it starts its own."""
    import multiprocessing as mp
    a = np.random.default_rng(5).standard_normal((50, 4, 4))
    with tf.num_threads(2):
        expected = lapack_eig.svd(a, compute_uv=False).tobytes()
        assert split_always
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=_svd_in_child, args=(queue,))
        child.start()
        got, workers_before, workers_after, splits = queue.get(timeout=60)
        child.join(60)
    assert child.exitcode == 0 and got == expected
    assert workers_before == 0 and workers_after >= 1 and splits == 1


def test_concurrent_callers_and_changing_thread_counts(split_always):
    """Several user threads calling the kernels while the thread count changes: every
    result is the serial one (no chunk lost to a replaced pool, no shared workspace)."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(11)
    a = rng.standard_normal((33, 5, 5))
    with tf.num_threads(1):
        ref = lapack_eig.svd(a, compute_uv=False).tobytes()

    def work(i):
        tf.set_num_threads(2 + i % 3)
        return lapack_eig.svd(a, compute_uv=False).tobytes()

    with ThreadPoolExecutor(4) as users:
        results = list(users.map(work, range(24)))
    assert all(r == ref for r in results)
    assert split_always


# ---- the two OpenBLAS pools: idle threads sleep sooner ---------------------------------

_SPIN_PROBE = r"""
import ctypes, os, sys
import numpy as np, scipy.linalg        # loaded (with their spin) before tenferro
import tenferro as tf
from tenferro import _threads
libs = _threads._openblas_libraries()
print(len(libs), len(_threads.BLAS_SPIN_SHORTENED),
      ",".join(str(ctypes.CDLL(p).openblas_thread_timeout()) for p in libs),
      os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
a = np.random.default_rng(0).standard_normal((300, 300))
x = tf.tensor(a)
u, s, vt = tf.linalg.svd(tf.einsum("ij,jk->ik", x, x))   # both pools run after the restart
np.testing.assert_allclose(s.numpy(), np.linalg.svd(a @ a, compute_uv=False), rtol=1e-10)
"""


def _probe(env):
    import subprocess
    base = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT")}
    out = subprocess.run([sys.executable, "-c", _SPIN_PROBE], env={**base, **env},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_import_shortens_the_spin_of_numpys_and_scipys_openblas():
    n_libs, n_changed, spins, env_after = _probe({"OPENBLAS_NUM_THREADS": "2"})
    # the pip wheels: NumPy's and SciPy's own OpenBLAS (a build against one system BLAS
    # would list one; a non-OpenBLAS build none, and nothing is changed)
    assert n_libs == n_changed and int(n_libs) >= 1
    assert spins == ",".join([str(_threads.BLAS_SPIN)] * int(n_libs))
    assert env_after == "None"                     # the environment is restored


def test_a_spin_the_user_set_is_kept():
    n_libs, n_changed, spins, env_after = _probe({"OPENBLAS_NUM_THREADS": "2",
                                                  "OPENBLAS_THREAD_TIMEOUT": "25"})
    assert n_changed == "0" and spins == ",".join(["25"] * int(n_libs)) and env_after == "25"
