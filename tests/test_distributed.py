"""tenferro.distributed on a real Dask LocalCluster (2 worker processes), a process pool
and serially: values and gradients against one-process tenferro, bitwise reproducibility
of the sums, shards sent once, a worker dying mid-run, bad input, and the sliced
contraction (values, gradients, the plan's largest intermediate)."""
from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import os
import sys
import threading
import time

import cloudpickle
import numpy as np
import pytest

import tenferro as tf
from tenferro import distributed as td
from tenferro.testing import check_grads

# the workers cannot import this file (pytest imports it by path): send its functions by
# value, as a script's would be
cloudpickle.register_pickle_by_value(sys.modules[__name__])

RNG = np.random.default_rng(30)
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def dask_client():
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    # a task whose worker dies is not retried: the failure test sees it at once
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, env=ONE_THREAD)
        client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _pool(n=2):
    # forkserver: one server process imports tenferro, the workers fork from it (a new
    # pool starts in a fraction of the time spawn takes; no fork of this threaded process)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tenferro", "tenferro.distributed", "numpy"])
    return concurrent.futures.ProcessPoolExecutor(n, mp_context=ctx)


@pytest.fixture(scope="module")
def pool():
    with _pool() as ex:
        yield ex


@pytest.fixture(params=["serial", "pool", "dask"])
def executor(request):
    if request.param == "serial":
        return None
    if request.param == "pool":
        return request.getfixturevalue("pool")
    return request.getfixturevalue("dask_client").get_executor()


# ---- map_value_and_grad -------------------------------------------------------------------

def least_squares(params, shard):
    w, b = params
    x, y = shard
    r = x @ w + b - y
    return (r ** 2).sum() + 0.1 * tf.sin(w).sum()


def _shards(n=5, m=7, d=3):
    return [(RNG.standard_normal((m, d)), RNG.standard_normal(m)) for _ in range(n)]


def _local(params, shards):
    """Value and gradient by one tenferro graph over every shard."""
    w = tf.tensor(params[0], requires_grad=True)
    b = tf.tensor(params[1], requires_grad=True)
    total = sum(least_squares((w, b), s) for s in shards)
    gw, gb = tf.grad([total], [w, b])
    return total.item(), gw.numpy(), gb.numpy()


SHARDS = _shards()
PARAMS = (RNG.standard_normal(3), np.array(0.3))


def test_value_and_gradient_match_one_graph(executor):
    value, (gw, gb) = td.map_value_and_grad(least_squares, SHARDS, PARAMS, executor=executor)
    v0, gw0, gb0 = _local(PARAMS, SHARDS)
    assert isinstance(value, np.floating)
    np.testing.assert_allclose(value, v0, rtol=1e-13)
    np.testing.assert_allclose(gw, gw0, rtol=1e-12)
    np.testing.assert_allclose(gb, gb0, rtol=1e-12)
    assert gb.shape == () and gw.dtype == np.float64


def rounding_sensitive(w, shard):
    """A loss whose shard sums depend on the order of addition; slow for early shards so
    that later shards finish first on a pool."""
    scale, delay = shard
    time.sleep(delay)
    return (scale * tf.exp(w)).sum()


def test_sum_is_bitwise_the_serial_sum_in_shard_order(executor):
    scales = [1.0, 1e16, 1.0, 3.0, -1e16, 0.5]
    shards = [(s, 0.15 if k < 2 else 0.0) for k, s in enumerate(scales)]
    w = np.array([0.1, 0.2])
    v, g = td.map_value_and_grad(rounding_sensitive, shards, w, executor=executor)
    # the serial sum in shard order, written out
    per = [td.map_value_and_grad(rounding_sensitive, [s], w) for s in shards]
    v0, g0 = per[0]
    for vk, gk in per[1:]:
        v0, g0 = v0 + vk, g0 + gk
    assert v == v0 and np.array_equal(g, g0)
    # (the test can fail: another order gives other bits)
    v_rev = per[-1][0]
    for vk, _ in per[-2::-1]:
        v_rev = v_rev + vk
    assert v_rev != v0


def pytree_loss(p, shard):
    return (p["a"] * shard).sum() + (p["bc"][0] ** 2).sum() * p["bc"][1][0]


def test_pytree_params_keep_structure_and_dtype(executor):
    params = {"a": np.float32([1.0, 2.0]),
              "bc": (np.array([[1.0, 2.0]]), [np.array(3.0)])}
    shards = [np.array([1.0, 1.0]), np.array([2.0, -1.0])]
    v, g = td.map_value_and_grad(pytree_loss, shards, params, executor=executor)
    assert set(g) == {"a", "bc"} and isinstance(g["bc"], tuple) and isinstance(g["bc"][1], list)
    assert g["a"].dtype == np.float32
    np.testing.assert_allclose(g["a"], [3.0, 0.0])
    np.testing.assert_allclose(g["bc"][0], 2 * 2 * 3.0 * np.array([[1.0, 2.0]]))
    np.testing.assert_allclose(g["bc"][1][0], 2 * 5.0)
    np.testing.assert_allclose(v, 3.0 + 0.0 + 2 * 15.0, rtol=1e-6)


@pytest.mark.parametrize("where", ["serial", "dask"])
def test_in_an_outer_graph_is_one_op_with_the_summed_pullback(where, request):
    ex = None if where == "serial" else request.getfixturevalue("dask_client").get_executor()
    shards = _shards(3, 4, 2)

    def f(w, b):
        value, _ = td.map_value_and_grad(least_squares, shards, (w, b), executor=ex)
        return value * tf.cos(w).sum()        # the outer graph goes on after the op

    check_grads(f, [RNG.standard_normal(2), np.array(0.2)], modes=("rev", "fwd"), order=1)
    w = tf.tensor(RNG.standard_normal(2), requires_grad=True)
    value, (gw, _) = td.map_value_and_grad(least_squares, shards, (w, 0.2), executor=ex)
    assert isinstance(value, tf.Tensor) and value.requires_grad
    (hw,) = tf.grad([value], [w], create_graph=False, retain_graph=True)
    np.testing.assert_array_equal(hw.numpy(), gw)
    # second order would need the workers' Hessians: refused, not a wrong zero
    with pytest.raises(tf.UnsupportedADError, match="second-order"):
        tf.grad([value], [w], create_graph=True)
    with pytest.raises(tf.UnsupportedADError, match="second-order"):
        tf.hvp(lambda w: td.map_value_and_grad(least_squares, shards, (w, 0.2),
                                               executor=ex)[0],
               (w.detach(),), (np.ones(2),))


def test_composes_with_scipy_optimize(executor):
    from scipy.optimize import minimize
    x = RNG.standard_normal((40, 3))
    w_true = np.array([0.5, -1.0, 2.0])
    y = x @ w_true
    shards = [(x[k::4], y[k::4]) for k in range(4)]
    res = minimize(lambda w: td.map_value_and_grad(linear_loss, shards, w, executor=executor),
                   np.zeros(3), jac=True, method="L-BFGS-B", options={"gtol": 1e-10})
    np.testing.assert_allclose(res.x, w_true, atol=1e-6)


def linear_loss(w, shard):
    x, y = shard
    return ((x @ w - y) ** 2).sum()


class Spy(concurrent.futures.Executor):
    """Counts the tasks that carry a shard's payload (an ndarray, not a token or a Dask
    reference)."""
    def __init__(self, inner):
        self.inner = inner
        self.payloads = 0
        self.tasks = 0

    def __getattr__(self, name):        # (Dask's executor: its client)
        return getattr(self.inner, name)

    def submit(self, fn, /, *args, **kwargs):
        self.tasks += 1
        self.payloads += isinstance(args[3], np.ndarray)
        return self.inner.submit(fn, *args, **kwargs)


def test_shards_are_scattered_once_on_dask(dask_client, monkeypatch):
    spy = Spy(dask_client.get_executor())
    scatters = []
    orig = dask_client.scatter
    monkeypatch.setattr(dask_client, "scatter",
                        lambda data, **kw: scatters.append(len(data)) or orig(data, **kw))
    shards = [RNG.standard_normal(20_000) for _ in range(4)]
    w = np.array([0.5])
    first = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
    for _ in range(3):
        again = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
        assert again[0] == first[0] and np.array_equal(again[1], first[1])
    assert scatters == [4] and spy.tasks == 16 and spy.payloads == 0
    shards[0] = shards[0] + 1.0       # a changed shard is a new shard, never a stale copy
    changed = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
    assert scatters == [4, 1]
    np.testing.assert_allclose(changed[0] - first[0], 0.5 * 20_000, rtol=1e-9)
    # the client keeps at most CACHE_BYTES of scattered shards (the current call's always)
    monkeypatch.setattr(td, "CACHE_BYTES", 4 * shards[0].nbytes)
    other = [RNG.standard_normal(20_000) for _ in range(4)]
    td.map_value_and_grad(scaled_sum, other, w, executor=spy)
    held = td._SCATTERED[dask_client]
    assert len(held) == 4 and list(held) == [td._shard_token(x, 0)[0] for x in other]


def test_large_parameters_are_scattered_once_per_call_on_dask(dask_client, monkeypatch):
    spy = Spy(dask_client.get_executor())
    scattered = []
    orig = dask_client.scatter
    monkeypatch.setattr(dask_client, "scatter",
                        lambda data, **kw: scattered.append(data) or orig(data, **kw))
    shards = td.Shards([RNG.standard_normal(40_000) for _ in range(3)])
    w = RNG.standard_normal(40_000)                      # 320 kB: scattered
    v, g = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
    want = td.map_value_and_grad(scaled_sum, shards, w)
    assert v == want[0] and np.array_equal(g, want[1])
    params = [d for d in scattered if len(d) == 1 and isinstance(d[0], list)]
    assert len(params) == 1 and np.array_equal(params[0][0][0], w)
    assert spy.tasks == 3
    scattered.clear()
    small = [RNG.standard_normal(1000) for _ in range(3)]
    td.map_value_and_grad(scaled_sum, small, w[:1000], executor=spy)   # small: in the tasks
    assert not [d for d in scattered if len(d) == 1 and isinstance(d[0], list)]


def test_shards_are_cached_on_pool_workers(pool):
    spy = Spy(pool)
    shards = [RNG.standard_normal(20_000) for _ in range(4)]
    w = np.array([0.5])
    first = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
    assert spy.payloads == 4
    # a task carries its shard until both workers have reported holding it (a pool
    # cannot direct a task to a worker): a few calls, then none
    for _ in range(30):
        again = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
        assert again[0] == first[0] and np.array_equal(again[1], first[1])
        if all(len(td._HOLDERS[spy][td._shard_token(x, 0)[0]]) == 2 for x in shards):
            break
    else:
        pytest.fail(f"after 31 calls the workers hold {td._HOLDERS[spy]}")
    spy.payloads = spy.tasks = 0
    for _ in range(5):
        again = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
        assert again[0] == first[0] and np.array_equal(again[1], first[1])
    assert (spy.tasks, spy.payloads) == (20, 0)
    shards[0] = shards[0] + 1.0       # a changed shard is a new shard, never a stale copy
    changed = td.map_value_and_grad(scaled_sum, shards, w, executor=spy)
    np.testing.assert_allclose(changed[0] - first[0], 0.5 * 20_000, rtol=1e-9)


def test_a_shard_missing_on_its_worker_is_resent_at_once(pool):
    # the driver believes two (made-up) workers hold new shards, so the tasks go without
    # them; each worker answers "missing" and the task is sent again with the shard
    spy = Spy(pool)
    shards = [RNG.standard_normal(1000) for _ in range(3)]
    for x in shards:
        td._HOLDERS.setdefault(spy, {})[td._shard_token(x, 0)[0]] = {"gone:1", "gone:2"}
    v, g = td.map_value_and_grad(scaled_sum, shards, np.array([2.0]), executor=spy)
    np.testing.assert_allclose(v, 2.0 * sum(x.sum() for x in shards), rtol=1e-12)
    assert (spy.tasks, spy.payloads) == (6, 3)
    for x in shards:     # the worker that answered is now known to hold it
        assert len(td._HOLDERS[spy][td._shard_token(x, 0)[0]] - {"gone:1", "gone:2"}) == 1


def test_worker_ids_differ_between_forked_processes():
    # a forked worker inherits its parent's module state: the id must not come with it
    ctx = multiprocessing.get_context("fork")
    here = td._worker_id()
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as ex:
        there = ex.submit(td._worker_id).result()
    assert there != here and there.split(":")[0] != here.split(":")[0]
    assert td._worker_id() == here


def _misaligned(a):
    buf = bytearray(a.nbytes + 3)
    out = np.frombuffer(buf, dtype=a.dtype, offset=3, count=a.size).reshape(a.shape)
    out[...] = a
    return out


def test_a_misaligned_shard_is_aligned_on_the_worker():
    # Dask hands a scattered array over at any byte offset; NumPy's matmul skips BLAS on
    # a misaligned array and rounds differently, so the worker's bits would not be the
    # serial ones. The worker's cache keeps an aligned copy.
    x = RNG.standard_normal((70, 30))
    r = RNG.standard_normal(70)
    bad = _misaligned(x)
    assert not bad.flags.aligned
    assert not np.array_equal(bad.T @ r, x.T @ r)       # (what the copy prevents)
    token = "test-misaligned-" + td._shard_token(x, 0)[0]
    shard = td._cached_shard(token, (bad, {"x": [bad]}, 2.0), x.nbytes, True)
    assert shard[0].flags.aligned and shard[1]["x"][0].flags.aligned and shard[2] == 2.0
    assert np.array_equal(shard[0].T @ r, x.T @ r)
    assert td._cached_shard(token, None, 0, False) is shard     # cached once
    td._CACHE.pop(token)


# ---- Shards: hashed once ------------------------------------------------------------------

Pair = collections.namedtuple("Pair", "x y")


def test_shards_handle_is_a_read_only_copy_hashed_once(monkeypatch):
    x = RNG.standard_normal(50)
    pieces = [x, (x[:10], {"y": np.arange(3.0), "n": 3}), 2.5, "label"]
    handle = td.Shards(pieces)
    assert len(handle) == 4 and list(handle)[2:] == [2.5, "label"]
    assert handle[0] is not x and np.array_equal(handle[0], x)
    assert not handle[0].flags.writeable and not handle[1][0].flags.writeable
    assert not handle[1][1]["y"].flags.writeable and handle[1][1]["n"] == 3
    with pytest.raises(ValueError, match="read-only"):
        handle[0][0] = 1.0
    before = x[0]
    x[0] += 1.0                          # the caller's array is not the handle's
    assert handle[0][0] == before
    named = td.Shards([Pair(x, 1.0)])[0]
    assert type(named) is Pair and not named.x.flags.writeable and named.y == 1.0
    sub = handle[1:3]
    assert isinstance(sub, td.Shards) and len(sub) == 2 and sub[1] == 2.5
    assert td.Shards(handle)._tokens == handle._tokens
    assert "4 pieces" in repr(handle)
    # a call hashes nothing: the tokens were made once
    calls = []
    orig = td._shard_token
    monkeypatch.setattr(td, "_shard_token", lambda *a: calls.append(1) or orig(*a))
    data = td.Shards([RNG.standard_normal(100) for _ in range(3)])
    assert len(calls) == 3
    td.map_value_and_grad(scaled_sum, data, np.array([1.0]), executor=None)
    assert len(calls) == 3


@pytest.mark.parametrize("where", ["serial", "pool", "dask"])
def test_shards_handle_gives_the_list_result_bitwise(where, request):
    ex = {"serial": lambda: None, "pool": lambda: request.getfixturevalue("pool"),
          "dask": lambda: request.getfixturevalue("dask_client").get_executor()}[where]()
    spy = ex if ex is None else Spy(ex)
    handle = td.Shards(SHARDS)
    for _ in range(3):
        got = td.map_value_and_grad(least_squares, handle, PARAMS, executor=spy)
        want = td.map_value_and_grad(least_squares, SHARDS, PARAMS, executor=None)
        assert got[0] == want[0]
        assert all(np.array_equal(a, b) for a, b in zip(got[1], want[1]))


def test_shards_handle_bad_input():
    with pytest.raises(tf.DistributedError, match="iterable"):
        td.Shards(3)
    with pytest.raises(tf.DistributedError, match="iterable"):
        td.Shards("abc")
    with pytest.raises(tf.DistributedError, match="no pieces"):
        td.Shards([])
    with pytest.raises(tf.DistributedError, match="shard 1 .*cannot be pickled"):
        td.Shards([1.0, threading.Lock()])


def scaled_sum(w, shard):
    return (w * tf.as_tensor(shard)).sum()


# ---- failures and bad input ---------------------------------------------------------------

def dies_on_marked(w, shard):
    if shard == "die":
        os._exit(3)
    time.sleep(0.05)
    return (w * shard).sum()


def _scheduler_workers(client):
    return client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.workers))


def test_a_worker_that_dies_raises_and_returns_no_partial_sum(dask_client):
    ex = dask_client.get_executor()
    shards = [1.0, 2.0, "die", 4.0]
    before = set(_scheduler_workers(dask_client))
    # the error names the shards that failed with the worker: shard 2, and the ones queued
    # on the same worker (an innocent shard 0 can come first)
    with pytest.raises(tf.DistributedError, match=r"shard \d.*worker died") as info:
        td.map_value_and_grad(dies_on_marked, shards, np.array([1.0]), executor=ex)
    assert "no partial result" in str(info.value)
    # the cluster restarts the worker (a new process, a new address): the next call works
    # once the scheduler has seen the death; before that, a task can still be sent to the
    # dying worker (seen in CI: wait_for_workers(2) returned while it was still listed)
    deadline = time.monotonic() + 60
    while True:
        now = set(_scheduler_workers(dask_client))
        if len(now) == 2 and now != before:
            break
        assert time.monotonic() < deadline, f"the dead worker was not replaced: {now}"
        time.sleep(0.2)
    v, g = td.map_value_and_grad(dies_on_marked, [1.0, 2.0], np.array([1.0]), executor=ex)
    assert v == 3.0 and g[0] == 3.0


def test_a_pool_worker_that_dies_raises():
    with _pool() as ex:
        with pytest.raises(tf.DistributedError, match="died"):
            td.map_value_and_grad(dies_on_marked, [1.0, "die", 3.0], np.array([1.0]),
                                  executor=ex)


def vector_loss(w, shard):
    return w * shard


def dtype_by_shard(w, shard):
    out = (w * shard).sum()
    return out.astype(np.float32) if shard == 2.0 else out


def raises_on_shard(w, shard):
    if shard == 2.0:
        raise KeyError("no such column")
    return (w * shard).sum()


@pytest.mark.parametrize("where", ["serial", "pool"])
def test_bad_results_name_the_shard(where, request):
    ex = None if where == "serial" else request.getfixturevalue("pool")
    w = np.array([1.0, 2.0])
    with pytest.raises(tf.ShapeError, match="shard 0.*scalar"):
        td.map_value_and_grad(vector_loss, [1.0, 2.0], w, executor=ex)
    with pytest.raises(tf.DTypeError, match="float32 for shard 1"):
        td.map_value_and_grad(dtype_by_shard, [1.0, 2.0], w, executor=ex)
    with pytest.raises(tf.DistributedError, match="shard 1: fn raised KeyError"):
        td.map_value_and_grad(raises_on_shard, [1.0, 2.0], w, executor=ex)


def test_bad_input_raises_before_anything_is_recorded(monkeypatch, pool):
    from tenferro import custom
    from tenferro.testing import record_calls
    calls = record_calls(monkeypatch, custom, "apply")
    w = tf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(tf.DistributedError, match="concurrent.futures.Executor"):
        td.map_value_and_grad(scaled_sum, [1.0], w, executor="dask")
    with pytest.raises(tf.DistributedError, match="shard 1 .*cannot be pickled"):
        td.map_value_and_grad(scaled_sum, [1.0, threading.Lock()], w, executor=pool)
    with pytest.raises(tf.DistributedError, match="empty"):
        td.map_value_and_grad(scaled_sum, [], w)
    with pytest.raises(tf.DTypeError, match="leaf 0 has dtype int64"):
        td.map_value_and_grad(scaled_sum, [1.0], np.array([1, 2]))
    with pytest.raises(tf.ShapeError, match="shard 0"):
        td.map_value_and_grad(vector_loss, [1.0], w, executor=pool)
    assert calls == []
    assert w.grad is None


# ---- contract -----------------------------------------------------------------------------

CASES = [
    ("ij,jk->ik", [(6, 40), (40, 5)], 12),                 # contracted index sliced
    ("ij,jk,kl->il", [(8, 9), (9, 10), (10, 7)], 20),      # output indices too
    ("abc,cd,bd->a", [(4, 5, 6), (6, 7), (5, 7)], 4),
    ("ii,ij->j", [(6, 6), (6, 5)], 3),                    # a repeated index
    ("...ij,jk", [(2, 3, 8), (8, 4)], 6),                  # ellipsis, implicit output
]


def _operands(shapes, complex_=False):
    ops = [RNG.standard_normal(s) for s in shapes]
    if complex_:
        ops = [o + 1j * RNG.standard_normal(o.shape) for o in ops]
    return ops


@pytest.mark.parametrize("subscripts,shapes,target", CASES)
def test_contract_plan_bounds_the_largest_intermediate(subscripts, shapes, target):
    import opt_einsum
    ops = _operands(shapes)
    plan = td.contraction_plan(subscripts, *ops, target_size=target)
    assert plan.unsliced_largest_intermediate > target >= plan.largest_intermediate
    assert plan.n_slices == len(plan.slices()) > 1
    # opt_einsum's own path of one slice's operand pieces agrees
    ins, out = plan.equation.split("->")
    for sl in plan.slices()[:3]:
        pieces = [o[tuple(sl.get(c, slice(None)) for c in s)]
                  for s, o in zip(ins.split(","), ops)]
        if len(pieces) > 1:
            _, info = opt_einsum.contract_path(plan.equation, *pieces)
            assert info.largest_intermediate <= target


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("subscripts,shapes,target", CASES)
def test_contract_value_and_gradient_match_einsum(subscripts, shapes, target, complex_):
    ops = _operands(shapes, complex_)
    xs = [tf.tensor(o, requires_grad=True) for o in ops]
    out = td.contract(subscripts, *xs, target_size=target)
    ref_xs = [tf.tensor(o, requires_grad=True) for o in ops]
    ref = tf.einsum(subscripts, *ref_xs)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    seed = _operands([ref.shape], complex_)[0]
    gs = tf.grad([out], xs, grad_outputs=seed)
    hs = tf.grad([ref], ref_xs, grad_outputs=seed)
    for g, h in zip(gs, hs):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-12, atol=1e-12)


def test_contract_gradient_against_finite_differences():
    check_grads(lambda a, b: td.contract("ij,jk->ik", a, b, target_size=6),
                _operands([(3, 8), (8, 4)]), modes=("rev",), order=1)
    check_grads(lambda a, b: td.contract("ij,jk->ik", a, b, target_size=6),
                _operands([(3, 8), (8, 4)], True), modes=("rev",), order=1)


@pytest.mark.parametrize("where", ["pool", "dask"])
def test_contract_on_workers_is_bitwise_the_serial_result(where, request):
    ex = (request.getfixturevalue("pool") if where == "pool"
          else request.getfixturevalue("dask_client").get_executor())
    ops = _operands([(8, 9), (9, 10), (10, 7)])
    xs = [tf.tensor(o, requires_grad=True) for o in ops]
    out = td.contract("ij,jk,kl->il", *xs, target_size=20, executor=ex)
    gs = tf.grad([(out ** 2).sum()], xs)
    ys = [tf.tensor(o, requires_grad=True) for o in ops]
    ref = td.contract("ij,jk,kl->il", *ys, target_size=20)
    hs = tf.grad([(ref ** 2).sum()], ys)
    assert np.array_equal(out.numpy(), ref.numpy())
    for g, h in zip(gs, hs):
        assert np.array_equal(g.numpy(), h.numpy())


def test_contract_errors():
    a, b = _operands([(3, 8), (8, 4)])
    with pytest.raises(tf.ShapeError, match="target_size must be a positive int"):
        td.contract("ij,jk->ik", a, b, target_size=0)
    with pytest.raises(tf.ShapeError, match="dimension"):
        td.contract("ij,jk->ik", a, a, target_size=4)
    with pytest.raises(tf.DistributedError, match="Executor"):
        td.contract("ij,jk->ik", a, b, target_size=4, executor=object())
    x = tf.tensor(a, requires_grad=True)
    with pytest.raises(tf.UnsupportedADError, match="forward mode"):
        tf.jvp(lambda x: td.contract("ij,jk->ik", x, b, target_size=6), (a,), (a,))
    out = td.contract("ij,jk->ik", x, b, target_size=6)
    with pytest.raises(tf.UnsupportedADError):
        tf.grad([out.sum()], [x], create_graph=True)


def test_the_docs_page_code_runs():
    """Every ```python block of docs/distributed.md, in order, in one namespace."""
    import re
    from pathlib import Path
    page = Path(__file__).resolve().parents[1] / "docs" / "distributed.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 4
    ns: dict = {}
    for block in blocks:
        exec(compile(block, str(page), "exec"), ns)
