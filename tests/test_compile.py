"""tf.compile: a recorded function replayed gives the eager values and derivatives, and
every way a replay could go wrong records anew, runs eagerly or raises the eager error."""
import math
import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro._capture import recording
from tenferro._ops import registry
from tenferro.autograd import enable_grad

RNG = np.random.default_rng(7)
# The programs of asv_bench/benchmarks/bench_programs.py at test sizes, written again here:
# importing that module limits BLAS to one thread for the whole test session.
F0 = np.linalg.qr(RNG.standard_normal((3, 3)))[0] * 0.9
H = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.3]])
YS = RNG.standard_normal((6, 2))


def kalman(theta, ys=YS):
    """A Kalman filter's negative log-likelihood: matmuls with NumPy constants on both
    sides, cholesky, solve_triangular with a vector, solve, diagonal, log, sum."""
    F = tf.tanh(theta[:3])[:, None] * F0
    Q = tf.diag(tf.exp(theta[3:6]))
    R = tf.diag(tf.exp(theta[6:8]))
    m, P = np.zeros(3), np.eye(3)
    nll = 0.5 * ys.size * math.log(2 * math.pi)
    for y in ys:
        m = F @ m
        P = F @ P @ F.T + Q
        v = y - H @ m
        HP = H @ P
        S = HP @ H.T + R
        L = tf.linalg.cholesky(S)
        w = tf.linalg.solve_triangular(L, v, lower=True)
        nll = nll + 0.5 * (w @ w) + tf.log(tf.diagonal(L)).sum()
        K = tf.linalg.solve(S, HP).T
        m = m + K @ v
        P = P - K @ HP
    return nll


THETA = np.array([0.5, 0.4, 0.3, -1.0, -0.8, -1.2, -0.5, -0.7])


def ctmrg(beta, chi=4, steps=4):
    """A few unrolled CTMRG steps of the 2D Ising model (einsum, svd, slicing, norm)."""
    c, s = tf.sqrt(tf.cosh(beta)), tf.sqrt(tf.sinh(beta))
    W = tf.stack([tf.stack([c, s]), tf.stack([c, -s])])
    a = tf.einsum("su,sl,sd,sr->uldr", W, W, W, W)
    C = tf.einsum("uldr->dr", a)
    T = tf.einsum("uldr->ldr", a)
    for _ in range(steps):
        k = C.shape[0]
        M = tf.einsum("xy,yub,xla,uldr->adbr", C, T, T, a).reshape(2 * k, 2 * k)
        U, _, _ = tf.linalg.svd(M)
        P = U[:, :chi]
        C = P.T @ M @ P
        Ta = tf.einsum("xlz,uldk->xukzd", T, a).reshape(2 * k, 2, 2 * k)
        T = tf.einsum("ia,ikj,jb->akb", P, Ta, P)
        C = C / tf.linalg.norm(C)
        T = T / tf.linalg.norm(T)
    z4 = tf.einsum("ab,bc,cd,da->", C, C, C, C)
    return tf.log(z4)


def _value_and_grad(f, x):
    t = tf.tensor(x, requires_grad=True)
    out = f(t)
    (g,) = tf.grad([out], [t])
    return out.numpy(), g.numpy()


@pytest.mark.parametrize("shift", [0.0, 0.1, -0.2])
def test_kalman_replay_matches_eager(shift):
    cf = tf.compile(kalman)
    first = _value_and_grad(cf, THETA)            # records
    x = THETA + shift
    v0, g0 = _value_and_grad(kalman, x)
    v1, g1 = _value_and_grad(cf, x)               # replays
    assert cf.records == 1 and cf.replays == 2 and cf.eager_calls == 0
    assert v1 == v0                                # the forward replays NumPy's bits
    np.testing.assert_allclose(g1, g0, rtol=1e-13, atol=1e-13)
    assert first[0].shape == ()


@pytest.mark.parametrize("tape", ["compiled_tape", "reference_tape"])
def test_the_twin_tape_replays_the_same(tape, request):
    request.getfixturevalue(tape)
    cf = tf.compile(kalman)
    cf(tf.tensor(THETA))
    v0, g0 = _value_and_grad(kalman, THETA + 0.1)
    v1, g1 = _value_and_grad(cf, THETA + 0.1)
    assert cf.replays == 2 and v1 == v0
    np.testing.assert_allclose(g1, g0, rtol=1e-13, atol=1e-13)


def test_kalman_gradient_against_finite_differences():
    cf = tf.compile(kalman)
    cf(tf.tensor(THETA))
    x = THETA + 0.05
    _, g = _value_and_grad(cf, x)
    eps = 1e-6
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = eps
        fd = (cf(tf.tensor(x + e)).item() - cf(tf.tensor(x - e)).item()) / (2 * eps)
        assert abs(fd - g[i]) < 1e-6 * max(1.0, abs(fd))
    assert cf.records == 1


def test_ctmrg_replay_matches_eager():
    cf = tf.compile(ctmrg)
    _value_and_grad(cf, 0.40)
    for beta in (0.38, 0.45):
        v0, g0 = _value_and_grad(ctmrg, beta)
        v1, g1 = _value_and_grad(cf, beta)
        assert v1 == v0
        np.testing.assert_allclose(g1, g0, rtol=1e-12)
    assert cf.records == 1 and cf.replays == 3


def test_no_grad_call_returns_plain_tensors():
    cf = tf.compile(kalman)
    out = cf(tf.tensor(THETA))
    again = cf(THETA + 0.1)                     # ndarray arguments are traced too
    assert not out.requires_grad and not again.requires_grad
    assert again.item() == kalman(tf.tensor(THETA + 0.1)).item()
    assert cf.replays == 2


def test_outputs_tuple_list_and_argument():
    def f(x, y):
        return (x * y, tf.exp(x), x)

    def g(x):
        return [x.sum(), x]

    cf, cg = tf.compile(f), tf.compile(g)
    for k in range(3):
        x = tf.tensor(RNG.standard_normal(4), requires_grad=True)
        y = RNG.standard_normal(4)
        a, b, c = cf(x, y)
        assert isinstance(cf(x, y), tuple)
        np.testing.assert_array_equal(a.numpy(), x.numpy() * y)
        np.testing.assert_array_equal(c.numpy(), x.numpy())
        (gx,) = tf.grad([(a + b + c).sum()], [x])
        np.testing.assert_allclose(gx.numpy(), y + np.exp(x.numpy()) + 1)
        out = cg(x)
        assert isinstance(out, list) and len(out) == 2
    assert cf.records == 1 and cg.records == 1


def test_new_shape_or_static_value_records_anew():
    def f(x, n):
        return (x ** n).sum()

    cf = tf.compile(f)
    cf(tf.tensor(np.ones(3)), 2)
    cf(tf.tensor(np.ones(3)), 2)
    cf(tf.tensor(np.ones(4)), 2)
    r = cf(tf.tensor(np.full(4, 2.0)), 3)
    assert r.item() == 32.0
    assert cf.records == 3 and cf.replays == 4
    assert len(cf.explain()) == 3


def test_python_branch_on_a_traced_value_is_a_guard():
    def f(x):
        if x.sum().item() > 0:
            return x * 2.0
        return x * 3.0

    # the guard is the value read (3.0, then -2.0): the same value replays, another
    # records anew; a value that changes on every call stops the replays
    cf = tf.compile(f)
    assert cf(tf.tensor([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert cf(tf.tensor([2.0, 1.0])).numpy().tolist() == [4.0, 2.0]     # replayed
    assert cf(tf.tensor([-3.0, 1.0])).numpy().tolist() == [-9.0, 3.0]   # guard: recorded anew
    assert cf(tf.tensor([1.0, -3.0])).numpy().tolist() == [3.0, -9.0]   # replayed
    assert cf.records == 2 and cf.replays == 4
    for k in range(4):
        x = [float(k), 1.5]
        assert cf(tf.tensor(x)).numpy().tolist() == f(tf.tensor(x)).numpy().tolist()
    (reason,) = cf.explain().values()
    assert "changes between calls" in reason and cf.eager_calls >= 1


@pytest.mark.parametrize("spelling", ["compare", "detach", "numpy", "no_grad", "argmax"])
def test_values_leaving_the_graph_run_eagerly(spelling):
    def f(x):
        if spelling == "compare":
            return tf.where(x > 0, x, 0.0 * x)
        if spelling == "detach":
            return x * x.detach()
        if spelling == "numpy":
            return x * x.numpy().max()
        if spelling == "argmax":      # an index read as NumPy (a traced one replays)
            return x[int(np.argmax(x.numpy()))]
        with tf.no_grad():
            scale = x.sum()
        return x / scale

    cf = tf.compile(f)
    for k in range(3):
        x = RNG.standard_normal(5) + (5.0 if spelling == "no_grad" else 0.0)
        t = tf.tensor(x, requires_grad=True)
        out, expected = cf(t), f(tf.tensor(x, requires_grad=True))
        np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert cf.records == 1 and cf.replays == 0 and cf.eager_calls == 3
    (reason,) = cf.explain().values()
    assert "left the graph" in reason


def test_closure_that_requires_grad_runs_eagerly_with_a_reason():
    w = tf.tensor([1.0, 2.0], requires_grad=True)
    cf = tf.compile(lambda x: (x * w).sum())
    x = tf.tensor([3.0, 4.0], requires_grad=True)
    out = cf(x)
    (gw,) = tf.grad([out], [w])
    assert gw.numpy().tolist() == [3.0, 4.0]
    (reason,) = cf.explain().values()
    assert "not an argument" in reason


def test_closure_constants_are_copied_when_recorded():
    c = np.array([1.0, 2.0])
    cf = tf.compile(lambda x: x * c)
    cf(tf.tensor([1.0, 1.0]))
    c[:] = 10.0        # as in jax.jit: the constant is the value f saw when recorded
    assert cf(tf.tensor([1.0, 1.0])).numpy().tolist() == [1.0, 2.0]


def test_failure_in_a_replay_raises_the_eager_error():
    def f(a):
        return tf.linalg.cholesky(a).sum()

    cf = tf.compile(f)
    cf(tf.tensor(np.eye(2) * 2.0))
    with pytest.raises(tf.LinAlgError) as replayed:
        cf(tf.tensor(np.array([[1.0, 2.0], [2.0, 1.0]])))
    with pytest.raises(tf.LinAlgError) as eager:
        f(tf.tensor(np.array([[1.0, 2.0], [2.0, 1.0]])))
    assert str(replayed.value) == str(eager.value)
    with pytest.raises(tf.LinAlgError):
        cf(tf.tensor(np.array([[np.nan, 0.0], [0.0, 1.0]])))
    assert cf(tf.tensor(np.eye(2))).item() == 2.0       # the trace is still there
    assert cf.records == 1 and cf.eager_calls == 2


def test_error_while_recording_propagates_and_caches_nothing():
    cf = tf.compile(lambda a: tf.linalg.solve(a, np.ones(2)))
    with pytest.raises(tf.LinAlgError):
        cf(tf.tensor(np.zeros((2, 2))))
    # (a failing call is f's own error: the next call records normally)
    assert cf(tf.tensor(np.eye(2))).numpy().tolist() == [1.0, 1.0]


def test_op_without_replay_rule_runs_eagerly():
    def f(x):
        return tf.linalg.qr(x)[1].sum()

    cf = tf.compile(f)
    x = RNG.standard_normal((3, 3))
    assert cf(tf.tensor(x)).item() == f(tf.tensor(x)).item()
    (reason,) = cf.explain().values()
    assert "'qr' has no replay rule" in reason


def test_higher_order_and_forward_mode_run_eagerly_and_agree():
    cf = tf.compile(kalman)
    cf(tf.tensor(THETA))
    h0 = tf.hessian(kalman)(THETA + 0.1)
    h1 = tf.hessian(cf)(THETA + 0.1)
    np.testing.assert_allclose(h1, h0, rtol=1e-10, atol=1e-10)
    v = RNG.standard_normal(THETA.size)
    _, t0 = tf.jvp(kalman, (tf.tensor(THETA),), (tf.tensor(v),))
    _, t1 = tf.jvp(cf, (tf.tensor(THETA),), (tf.tensor(v),))
    np.testing.assert_allclose(t1.numpy(), t0.numpy(), rtol=1e-12)


def test_value_and_grad_and_backward_of_a_compiled_function():
    cf = tf.compile(kalman)
    vg = tf.value_and_grad(cf)
    v0, g0 = tf.value_and_grad(kalman)(THETA)
    for _ in range(2):
        v1, g1 = vg(THETA)
        assert v1 == v0
        np.testing.assert_allclose(g1, g0, rtol=1e-13)
    t = tf.tensor(THETA, requires_grad=True)
    cf(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), g0, rtol=1e-13)


def test_bad_input():
    with pytest.raises(TypeError, match="needs a function"):
        tf.compile(3)
    cf = tf.compile(lambda x: 2.0)
    assert cf(tf.tensor([1.0])) == 2.0
    assert "returned float" in next(iter(cf.explain().values()))


# ---- every value that leaves the graph is seen ----------------------------------------------
# A recording is only as safe as the ops that report a value leaving the graph. Every
# registered NumPy override and Tensor method, and every function of tf.linalg,
# tf.special, tf.fft, tf.signal, tf.ndimage, tf.integrate and tf.distributed, applied to a
# traced tensor
# must record a node, report an escape or a guard, or return a value that depends on the
# input's shape alone.

SHAPE_ONLY = {"zeros_like", "ones_like", "empty_like", "imag"}   # (imag of a real tensor)
# functions whose result holds a flag that is an argument passed through (cho_factor's
# ``lower``), not a value computed from the traced input; their tensors are still checked
STATIC_FLAGS = {"cho_factor"}
NOT_OPS = {"float_result_type", "is_tracked", "overload", "payload"}


def _callables():
    seen = set()
    tables = [registry.METHODS,
              {getattr(k, "__name__", str(k)): v for k, v in registry.UFUNCS.items()},
              {getattr(k, "__name__", str(k)): v for k, v in registry.FUNCTIONS.items()}]
    for table in tables:
        for name, fn in table.items():
            if (name, fn) not in seen:
                seen.add((name, fn))
                yield name, fn, "vector"
    for mod in (tf.linalg, tf.special, tf.fft, tf.signal, tf.ndimage, tf.integrate,
                tf.distributed):
        for name in dir(mod):
            fn = getattr(mod, name)
            if (name.startswith("_") or name.endswith("_ad") or name in NOT_OPS
                    or not callable(fn) or isinstance(fn, type)):
                continue
            yield name, fn, "matrix"


def _leaks(name, fn, kind):
    """None when fn is safe on a traced input (or does not apply), else a description."""
    value = (np.array([0.3, 0.5, 0.7, 0.9]) if kind == "vector"
             else np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]))
    for nargs in (1, 2):
        x = tf.tensor(value, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with recording() as rec, enable_grad():
                try:
                    out = fn(*(x,) * nargs)
                except Exception:
                    continue
        if rec.escapes or rec.guards or name in SHAPE_ONLY:
            return None
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for o in outs:
            if name in STATIC_FLAGS and isinstance(o, bool):
                continue
            if not isinstance(o, tf.Tensor):
                return f"{name} returned a {type(o).__name__} computed from a traced input"
            if o._node is None and not any(o._data is d for n in rec.nodes
                                           for d in n.out_data):
                return f"{name} returned a tensor outside the graph"
        return None
    return None


def test_every_op_reports_values_that_leave_the_graph():
    leaks = [msg for name, fn, kind in _callables()
             if (msg := _leaks(name, fn, kind)) is not None]
    assert not leaks, "\n".join(leaks)
    # (the test can fail: an op that reads a value without telling is found)
    with recording() as rec, enable_grad():
        x = tf.tensor([1.0, 2.0], requires_grad=True)
        hidden = tf.Tensor._wrap(np.argsort(x._data))
    assert not rec.escapes and hidden._node is None


def test_more_ops_replay():
    mask = np.array([True, False, True, False])

    def f(x, z):
        a = tf.where(mask, x, -x)
        b = tf.concatenate([a, tf.abs(x)])
        w, v = tf.linalg.eigh(tf.reshape(b, (2, 4)) @ tf.reshape(b, (2, 4)).T)
        c = (tf.real(z * tf.conj(z)) + tf.imag(z) ** 2).sum()
        m = tf.reshape(tf.flip(b, axis=0), (2, 4))
        return (w.sum() + (v ** 2).sum() + c + tf.mean(m, axis=1).sum()
                + tf.trace(m[:, :2]) + tf.mean(x))

    cf = tf.compile(f)
    for k in range(3):
        x = RNG.standard_normal(4)
        z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
        xt, zt = tf.tensor(x, requires_grad=True), tf.tensor(z, requires_grad=True)
        out = cf(xt, zt)
        gx, gz = tf.grad([out], [xt, zt])
        xe, ze = tf.tensor(x, requires_grad=True), tf.tensor(z, requires_grad=True)
        ref = f(xe, ze)
        hx, hz = tf.grad([ref], [xe, ze])
        assert out.item() == ref.item()
        np.testing.assert_allclose(gx.numpy(), hx.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gz.numpy(), hz.numpy(), rtol=1e-12, atol=1e-12)
    assert cf.records == 1 and cf.replays == 3, cf.explain()


@pytest.mark.parametrize("inner", ["grad", "grad_retain", "backward", "value_and_grad",
                                   "jvp", "create_graph"])
def test_gradients_inside_the_function(inner):
    """A plain gradient taken inside f is a value outside the graph (f runs eagerly); one
    taken with create_graph=True is part of the graph (f is replayed)."""
    def f(x):
        y = (x ** 3).sum()
        if inner == "grad":
            (g,) = tf.grad([y], [x])
        elif inner == "grad_retain":       # (the graph survives: only the report tells)
            (g,) = tf.grad([y], [x], retain_graph=True)
        elif inner == "backward":
            x.grad = None
            y.backward()
            g = x.grad
        elif inner == "jvp":
            g = tf.jvp(lambda z: z ** 3, [x], [tf.ones_like(x)])[1]     # 3 x²
        elif inner == "value_and_grad":
            g = tf.as_tensor(tf.value_and_grad(lambda z: (z ** 3).sum())(x.numpy())[1])
        else:
            (g,) = tf.grad([y], [x], create_graph=True)
        return (g * x).sum()

    cf = tf.compile(f)
    for k in range(3):
        x = RNG.standard_normal(3)
        got = cf(tf.tensor(x, requires_grad=True)).item()
        assert got == pytest.approx(3 * (x ** 3).sum(), rel=1e-13)
    replayed = inner == "create_graph"
    assert (cf.replays == 3) == replayed, cf.explain()


def test_writes_inside_the_function_are_correct():
    """An in-place write (through a view or not) inside f: the function's results stay
    the eager ones (the writes' ops have no replay rule: f runs eagerly)."""
    def f(x):
        y = x * 2.0
        y[0] = x[1] ** 2           # a write into a traced tensor
        v = y[1:]                  # a view of it, written through
        v *= 3.0
        return y.sum()

    cf = tf.compile(f)
    for k in range(3):
        x = RNG.standard_normal(4)
        t, e = tf.tensor(x, requires_grad=True), tf.tensor(x, requires_grad=True)
        out, ref = cf(t), f(e)
        assert out.item() == ref.item()
        (g,) = tf.grad([out], [t])
        (h,) = tf.grad([ref], [e])
        np.testing.assert_array_equal(g.numpy(), h.numpy())
    assert cf.replays == 0


def test_static_integer_arrays_and_keywords():
    def f(x, idx, scale=1.0):
        return (x[idx] * scale).sum()

    cf = tf.compile(f)
    x = tf.tensor(RNG.standard_normal(5), requires_grad=True)
    for idx, scale in [(np.array([0, 2]), 1.0), (np.array([0, 2]), 1.0),
                       (np.array([1, 3]), 1.0), (np.array([1, 3]), 2.0)]:
        assert cf(x, idx, scale=scale).item() == f(x, idx, scale=scale).item()
    assert cf.records == 3 and cf.replays == 4
    assert cf(x, [0, 1]).item() == f(x, [0, 1]).item()        # unhashable: eager
    assert cf.eager_calls == 1


def test_a_second_thread_does_not_record_while_one_records():
    """The tape records one thread at a time: a call on another thread during a recording
    runs eagerly (correct, nothing cached) instead of waiting or mixing the two."""
    import threading
    cf = tf.compile(lambda x: (x * 3.0).sum())
    results = []

    def other():
        results.append(cf(tf.tensor([1.0, 2.0])).item())

    with recording():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert results == [9.0] and cf.eager_calls == 1 and cf.records == 0
    assert cf(tf.tensor([1.0, 2.0])).item() == 9.0 and cf.records == 1


# ---- index choices made from traced values stay in the trace ---------------------------------

def _choose(x):
    """The 2 largest-|x| entries, each times the sign of the largest-|x| entry: argsort,
    argmax, sign and indexing by traced integer tensors."""
    keep = tf.argsort(tf.abs(x), descending=True)[:2]
    s = tf.sign(x[tf.argmax(tf.abs(x))])
    return x[keep] * s


def test_traced_index_choices_replay_with_the_new_choice():
    cf = tf.compile(_choose)
    # the choices change from call to call: each replay must give the eager result
    for v in ([3.0, 1.0, -2.0], [1.0, -5.0, 2.0], [0.5, 0.1, 0.9], [3.0, 1.0, -2.0]):
        t, e = tf.tensor(v, requires_grad=True), tf.tensor(v, requires_grad=True)
        out, ref = cf(t), _choose(e)
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
        (g,) = tf.grad([(out * np.array([1.0, 2.0])).sum()], [t])
        (h,) = tf.grad([(ref * np.array([1.0, 2.0])).sum()], [e])
        np.testing.assert_array_equal(g.numpy(), h.numpy())
    assert cf.records == 1 and cf.replays == 4 and cf.eager_calls == 0
    assert list(cf.explain().values()) == ["replayed"]
    # (the test can fail: the second input's choice differs from the recorded one)
    assert _choose(tf.tensor([1.0, -5.0, 2.0])).numpy().tolist() == [5.0, -2.0]


def test_traced_index_in_a_batch_and_a_repeated_choice():
    def f(x):    # the row-wise largest |entry| of a matrix, gathered with a constant arange
        return x[np.arange(3), tf.argmax(tf.abs(x), axis=1)]
    cf = tf.compile(f)
    for k in range(3):
        x = RNG.standard_normal((3, 4))
        t, e = tf.tensor(x, requires_grad=True), tf.tensor(x, requires_grad=True)
        np.testing.assert_array_equal(cf(t).numpy(), f(e).numpy())
        (g,) = tf.grad([cf(t).sum()], [t])
        (h,) = tf.grad([f(e).sum()], [e])
        np.testing.assert_array_equal(g.numpy(), h.numpy())
    # an index that repeats (argmax of a constant matrix row-wise: all 0) adds up
    cg = tf.compile(lambda x: x[tf.argmax(tf.abs(x) * 0.0, axis=0)])
    t = tf.tensor(RNG.standard_normal(3), requires_grad=True)
    (g,) = tf.grad([cg(t).sum()], [t])
    (g2,) = tf.grad([cg(t).sum()], [t])
    assert g.numpy().tolist() == g2.numpy().tolist() == [1.0, 0.0, 0.0]
    assert cf.records == 1 and cg.records == 1


def test_a_traced_index_read_as_a_constant_runs_eagerly_with_the_reason():
    def under_no_grad(x):
        with tf.no_grad():
            keep = tf.argsort(x)
        return x[keep]

    def by_numpy(x):
        return x[tf.argsort(x).numpy()]

    for f, reason in ((under_no_grad, "left the graph through argsort"),
                      (by_numpy, "left the graph through Tensor.numpy")):
        cf = tf.compile(f)
        for v in ([3.0, 1.0, 2.0], [1.0, 2.0, 3.0]):
            t = tf.tensor(v, requires_grad=True)
            np.testing.assert_array_equal(cf(t).numpy(), f(tf.tensor(v)).numpy())
        (why,) = cf.explain().values()
        assert reason in why and cf.replays == 0


def test_an_op_keeping_a_traced_index_in_its_ctx_declines():
    from tenferro._capture import Decline, _check_ctx
    idx = np.array([2, 0, 1])
    with pytest.raises(Decline, match="reads an index computed from traced values"):
        _check_ctx(((idx[:2], 0), "x"), [idx], "op")        # a view
    with pytest.raises(Decline, match="reads an index"):
        _check_ctx({"k": idx.copy()}, [idx], "op")          # a copy, by its value
    _check_ctx((np.array([0, 1, 2]), 1.5), [idx], "op")     # another constant: fine


def test_loop_body_computes_the_fixed_arguments_part_once():
    calls = []

    def f(x, p):
        calls.append(1)
        a = tf.stack([tf.cosh(p), tf.sinh(p)])            # reads p only: a loop invariant
        return x[tf.argsort(x * a[0])] * a[1] + x.sum()

    cf = tf.compile(f)
    p = tf.as_tensor(0.7)
    assert cf.loop_body((np.zeros(4), p), 0) is None      # not recorded yet
    cf(tf.tensor(np.arange(4.0)), p)
    body = cf.loop_body((np.zeros(4), p), 0)
    for k in range(3):
        x = RNG.standard_normal(4)
        np.testing.assert_array_equal(body(x), f(tf.tensor(x), p).numpy())
    assert len(calls) == 1 + 3          # the recording, then the eager references only
    # guards (a Python branch on a value) are not checked by a loop body: none is made
    cg = tf.compile(lambda x, p: x * p if float(p) > 0 else -x)
    cg(tf.tensor(np.ones(2)), p)
    assert cg.loop_body((np.ones(2), p), 0) is None
    # a declined signature has none either
    ch = tf.compile(lambda x, p: x * x.numpy().max() * p)
    ch(tf.tensor(np.ones(2)), p)
    assert ch.loop_body((np.ones(2), p), 0) is None


def test_gradient_in_some_arguments_runs_only_their_pullbacks():
    def f(x, p):
        a = tf.exp(p) * tf.sin(p)                          # p only
        return (x * a).sum() + (x ** 2).sum()

    cf = tf.compile(f)
    for k in range(3):
        x, p = RNG.standard_normal(3), RNG.standard_normal(3)
        xt, pt = tf.tensor(x, requires_grad=True), tf.as_tensor(p)
        (gx,) = tf.grad([cf(xt, pt)], [xt])
        xe = tf.tensor(x, requires_grad=True)
        (hx,) = tf.grad([f(xe, tf.as_tensor(p))], [xe])
        np.testing.assert_allclose(gx.numpy(), hx.numpy(), rtol=1e-15)
        pt2 = tf.tensor(p, requires_grad=True)
        gx2, gp = tf.grad([cf(xt, pt2)], [xt, pt2])
        pe = tf.tensor(p, requires_grad=True)
        hx2, hp = tf.grad([f(xe, pe)], [xe, pe])
        np.testing.assert_allclose(gp.numpy(), hp.numpy(), rtol=1e-14)
    trace = next(iter(cf._cache.values()))
    # (the test can fail: with only x wanted, the ops of p alone get no cotangent)
    assert len(trace._needs_for) == 2
    only_x = trace._needs_for[(True, False)]
    assert sum(any(n) for n in only_x) < sum(any(n) for n in trace._needs_for[(True, True)])


def test_a_float_index_inside_a_recording_raises_the_eager_error():
    def f(x):
        return x[x * 0.0]

    cf = tf.compile(f)
    with pytest.raises(tf.IndexingError, match="must be an integer or bool tensor") as e:
        f(tf.tensor(np.ones(3), requires_grad=True))
    with pytest.raises(tf.IndexingError) as c:
        cf(tf.tensor(np.ones(3), requires_grad=True))
    assert str(c.value) == str(e.value) and cf.explain() == {}


def test_pullback_is_the_eager_vjp_in_one_argument():
    def f(x, p):
        return tf.sin(x[tf.argsort(x)]) * tf.exp(p) + (x * p).sum()

    cf = tf.compile(f)
    p = tf.as_tensor(np.array([0.3, -0.2, 0.1]))
    x = RNG.standard_normal(3)
    assert cf.pullback((tf.as_tensor(x), p), 0) is None          # not recorded yet
    cf(tf.tensor(x, requires_grad=True), p)
    for k in range(3):
        x, u = RNG.standard_normal(3), RNG.standard_normal(3)     # new choices
        vjp = cf.pullback((tf.as_tensor(x), p), 0)
        xe = tf.tensor(x, requires_grad=True)
        (ref,) = tf.grad([f(xe, p)], [xe], [tf.as_tensor(u)])
        np.testing.assert_allclose(vjp(u), ref.numpy(), rtol=1e-14, atol=1e-15)
    # a guard that reads another value: no pullback (the caller's eager way)
    cg = tf.compile(lambda x, p: x * p if float(x[0]) > 0 else -x * p)
    cg(tf.tensor(np.ones(3), requires_grad=True), p)
    assert cg.pullback((tf.as_tensor(np.ones(3)), p), 0) is not None
    assert cg.pullback((tf.as_tensor(-np.ones(3)), p), 0) is None


def test_a_constant_index_equal_to_the_recorded_choice_still_replays():
    def f(x):      # x[argmax(|x|, axis=0), arange(3)]: the recorded choice is [0, 1, 2]
        return x[tf.argmax(tf.abs(x), axis=0), np.arange(3)]

    cf = tf.compile(f)
    first = np.diag([3.0, 4.0, 5.0]) + 0.1
    for x in (first, RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))):
        t, e = tf.tensor(x, requires_grad=True), tf.tensor(x, requires_grad=True)
        np.testing.assert_array_equal(cf(t).numpy(), f(e).numpy())
    assert cf.records == 1 and cf.replays == 3, cf.explain()
