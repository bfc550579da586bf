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
        if spelling == "argmax":
            return x[tf.argmax(x)]
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
# tf.special and tf.fft, applied to a traced tensor must record a node, report an escape
# or a guard, or return a value that depends on the input's shape alone.

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
    for mod in (tf.linalg, tf.special, tf.fft):
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
