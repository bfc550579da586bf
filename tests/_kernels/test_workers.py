"""tenferro/_kernels/_workers.pyx: the native worker threads run every batch position
exactly once, report the serial loop's first failure, and survive sleeping, concurrent
callers and fork. (The kernels on top of them: tests/test_threads.py.)"""
import os
import threading
import time

import numpy as np
import pytest

from tenferro._kernels import _workers


def _probe(nb, nthreads, fail_at=(), spin=0):
    runs = np.zeros(nb, np.int64)
    by_caller = np.zeros(nb, np.int64)
    fail = np.zeros(nb, np.int64)
    for b in fail_at:
        fail[b] = 100 + b                      # the info of a failure at b
    bad, info = _workers._probe(runs, by_caller, fail, nthreads, spin)
    return bad, info, runs, by_caller


@pytest.mark.parametrize("nthreads", [1, 2, 3, 8, 1000])
@pytest.mark.parametrize("nb", [1, 2, 7, 1000])
def test_every_position_runs_once(nb, nthreads):
    before = _workers.split_count()
    bad, info, runs, _ = _probe(nb, nthreads)
    assert (bad, info) == (-1, 0)
    assert (runs == 1).all()
    split = nthreads > 1 and nb > 1
    assert _workers.split_count() == before + split
    assert _workers.worker_count() >= (1 if split else 0)


def test_workers_take_chunks():
    """With enough work per position (~8 ms in all), the calling thread and a worker
    both run part of the stack. In one of five tries: the OS may leave a just-woken
    thread waiting for a core for milliseconds (seen on this 2-vCPU VM), so one try can
    be run by a single thread."""
    shares = []
    for _ in range(5):
        bad, _, runs, by_caller = _probe(400, 2, spin=20000)
        assert bad == -1 and (runs == 1).all()
        shares.append(int(by_caller.sum()))
        if 0 < shares[-1] < 400:
            break
    assert 0 < shares[-1] < 400, shares


@pytest.mark.parametrize("nthreads", [2, 3])
@pytest.mark.parametrize("fail_at", [[0], [5], [999], [3, 500], [998, 999], [0, 999]])
def test_first_failure_is_the_serial_loops(nthreads, fail_at):
    bad, info, runs, _ = _probe(1000, nthreads, fail_at, spin=200)
    assert (bad, info) == (fail_at[0], 100 + fail_at[0])
    assert (runs[:fail_at[0] + 1] == 1).all()          # everything before it ran
    assert runs.max() == 1


def test_sleeping_workers_wake_up():
    old = _workers.set_spin_us(0)             # idle workers sleep at once
    try:
        for _ in range(5):
            _, _, runs, _ = _probe(100, 2, spin=1000)
            assert (runs == 1).all()
            time.sleep(0.005)
    finally:
        assert _workers.set_spin_us(old) == 0


def test_concurrent_callers():
    """Callers on several Python threads: the pool takes one job at a time, the others
    run serially; every position of every call runs exactly once."""
    results = []

    def user(i):
        for _ in range(20):
            bad, _, runs, _ = _probe(50 + i, 2 + i % 2, spin=500)
            results.append(bad == -1 and (runs == 1).all())

    users = [threading.Thread(target=user, args=(i,)) for i in range(4)]
    for u in users:
        u.start()
    for u in users:
        u.join()
    assert len(results) == 80 and all(results)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_starts_its_own_workers():
    _probe(100, 2, spin=1000)                 # the parent has workers
    assert _workers.worker_count() >= 1
    pid = os.fork()
    if pid == 0:                              # child: no workers until it splits
        ok = False
        try:
            ok = _workers.worker_count() == 0
            bad, _, runs, _ = _probe(100, 2, spin=1000)
            ok = ok and bad == -1 and (runs == 1).all() and _workers.worker_count() >= 1
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_probe_checks_its_arrays():
    with pytest.raises(ValueError, match="one non-zero length"):
        _workers._probe(np.zeros(3, np.int64), np.zeros(2, np.int64),
                        np.zeros(3, np.int64), 2)


def test_spare_buffers_reused_across_sizes_and_threads():
    # large work buffers go back to spare slots and serve later calls of any size up to
    # theirs (a smaller one is kept aside, a larger call takes a new block): the results
    # are those of fresh buffers, also with Python threads and native workers taking and
    # returning blocks at once
    from concurrent.futures import ThreadPoolExecutor

    import tenferro as tf
    from tenferro._kernels import lapack_eig, lapack_lu_chol, lapack_qr
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal((n, n)) + n * np.eye(n) for n in (100, 300, 120, 256, 90)]
    _workers._drop_spare_buffers()
    fresh = []
    for a in mats:
        fresh.append((lapack_lu_chol.lu(a), lapack_qr.qr(a), lapack_eig.svd(a)))
        _workers._drop_spare_buffers()       # every call on new blocks
    for _ in range(2):                       # now on kept ones, in another order
        for a, want in reversed(list(zip(mats, fresh))):
            for got, w in zip((lapack_lu_chol.lu(a), lapack_qr.qr(a), lapack_eig.svd(a)), want):
                assert all(np.array_equal(x, y) for x, y in zip(got, w))

    def run(k):
        a = mats[k % len(mats)]
        return k, lapack_qr.qr(a), lapack_eig.svd(np.stack([a, a]))

    with tf.num_threads(2), ThreadPoolExecutor(4) as pool:
        for k, q, s in pool.map(run, range(20)):
            want = fresh[k % len(mats)]
            assert all(np.array_equal(x, y) for x, y in zip(q, want[1]))
            assert all(np.array_equal(x[0], y) and np.array_equal(x[1], y)
                       for x, y in zip(s, want[2]))
    _workers._drop_spare_buffers()
