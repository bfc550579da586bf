"""The lowered replay of tf.compile (_kernels/lowered.pyx, built by tenferro/_lower.py):
every instruction's forward equals the eager op bit for bit and its pullback the eager
gradient to rounding; the compiled kernel and its NumPy twin agree; programs that do not
fit stay op by op."""
import numpy as np
import pytest

import tenferro as tf
import tenferro._lower as lower_mod
from tenferro._kernels import lowered_twin

RNG = np.random.default_rng(7)
C22 = RNG.standard_normal((2, 2))
C3 = RNG.standard_normal(3)
H = RNG.standard_normal((2, 4))


def kalman_like(theta, ys):
    """A small Kalman filter in the spelling of asv_bench's (NumPy constants mixed in)."""
    F = tf.tanh(theta[:4])[:, None] * np.eye(4)
    Q = tf.diag(tf.exp(theta[4:8]))
    R = tf.diag(tf.exp(theta[8:10]))
    m, P = np.zeros(4), np.eye(4)
    nll = 0.0
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


def every_instruction(x, y):
    """Each instruction at least once, with operands from the arena and from Python ops
    (exp, solve), transposed operands read through the transpose flag, and vectors."""
    a = x @ y                          # matmul 2x2 @ 2x2
    b = a.T @ x                        # transposed arena operand
    e = tf.exp(x)                      # a Python op (its output is an ndarray slot)
    c = e.T @ b + a - x                # transposed ndarray operand; add, subtract
    d = C22 - c                        # constant - x
    d = d + C22                        # x + constant
    d = d - C22                        # x - constant
    d = 3.0 - d                        # scalar - x
    d = (d - 1.5) * 0.25 + 2.0         # x - s, x * s, x + s
    v = tf.diagonal(d)                 # diagonal
    w = d @ v                          # matrix @ vector
    u = v @ d                          # vector @ matrix
    z = tf.linalg.solve(d @ d.T + 4 * np.eye(2), x)   # x @ xᵀ (NumPy may take ?syrk)
    s = (w @ u) + tf.log(tf.exp(v) + 1.0).sum() + (z.T @ w).sum()
    return s


def linalg_instructions(a, b):
    """cholesky, solve (vector and matrix right-hand sides) and both triangles of
    solve_triangular, each on a value computed in the arena."""
    s = a @ a.T + 3 * np.eye(3)
    l = tf.linalg.cholesky(s)
    x = tf.linalg.solve(s + b @ b.T, C3)
    y = tf.linalg.solve(s, b)
    u = tf.linalg.solve_triangular(l.T + np.eye(3), y, lower=False)
    w = tf.linalg.solve_triangular(l, x, lower=True)
    return (u.sum() + w @ x + tf.log(tf.diagonal(l)).sum()) * 1.0


def _opcodes(trace):
    names = {v: k for k, v in lowered_twin.OPCODES.items()}
    return {names[int(c)] for c in np.asarray(trace.lowered.table)[:, :2].ravel()}


def _compiled_trace(f, *args):
    fc = tf.compile(f)
    fc(*args)                          # records, verifies, lowers
    (trace,) = fc._cache.values()
    return fc, trace


def _eager_and_compiled(f, args, argnums):
    vg = tf.value_and_grad(f, argnums=argnums)
    fc = tf.compile(f)
    vgc = tf.value_and_grad(fc, argnums=argnums)
    v0, g0 = vg(*args)
    vgc(*args)                         # recording
    v1, g1 = vgc(*args)                # replay
    (trace,) = fc._cache.values()
    return (v0, g0), (v1, g1), trace


@pytest.mark.parametrize("program", ["kalman", "every", "linalg"])
def test_lowered_forward_is_eager_bits_and_gradient_to_rounding(program):
    if program == "kalman":
        theta = RNG.standard_normal(10) * 0.3
        ys = RNG.standard_normal((12, 2))
        f, args, argnums = (lambda th: kalman_like(th, ys)), (theta,), 0
        expect = {"CHOLESKY", "SOLVE", "TRSV_BWD", "MATMUL", "LOG_BWD", "SUM_BWD"}
    elif program == "every":
        f = every_instruction
        args = (RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2)))
        argnums = (0, 1)
        expect = set(lowered_twin.OPCODES) - {"CHOLESKY", "TRSV_BWD"}
    else:
        f = linalg_instructions
        args = (RNG.standard_normal((3, 3)), RNG.standard_normal((3, 2)))
        argnums = (0, 1)
        expect = {"CHOLESKY", "SOLVE", "TRSV_BWD"}
    (v0, g0), (v1, g1), trace = _eager_and_compiled(f, args, argnums)
    assert trace.lowered is not None
    assert trace.lowered.n_lowered > len(trace.plan) // 2
    assert expect <= _opcodes(trace)
    assert np.asarray(v1).tobytes() == np.asarray(v0).tobytes()
    for a, b in zip(np.atleast_1d(g0) if program == "kalman" else g0,
                    np.atleast_1d(g1) if program == "kalman" else g1):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def _lowered_with(module, trace, arrays):
    """The trace lowered by ``module`` (lowered.pyx or its twin; the twin unchecked: its
    cholesky and solve are SciPy's LAPACK, the kernel's the plain loops of the compiled
    eager ops, so they agree to rounding)."""
    check = module is lower_mod._lowered
    saved_module, saved_lowered = lower_mod._lowered, trace.lowered
    try:
        trace.lowered = None
        _, (values, _) = trace.forward(arrays)
        lower_mod._lowered = module
        program = lower_mod.lower(trace, values, check=check)
    finally:
        lower_mod._lowered, trace.lowered = saved_module, saved_lowered
    assert program is not None
    return program


def test_twin_agrees_with_kernel():
    x, y = RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2))
    _, trace = _compiled_trace(every_instruction, x, y)
    x2, y2 = RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2))
    kernel = _lowered_with(lower_mod._lowered, trace, [x, y])
    twin = _lowered_with(lowered_twin, trace, [x, y])
    assert kernel.n_lowered == twin.n_lowered > 10
    (o1,), run1 = kernel.forward([x2, y2])
    (o2,), run2 = twin.forward([x2, y2])
    np.testing.assert_allclose(o1, o2, rtol=1e-14)
    g = np.asarray(1.7)
    for a, b in zip(kernel.backward(run1, (g,), (True, True)),
                    twin.backward(run2, (g,), (True, True))):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_two_calls_in_flight_keep_their_own_values():
    x, y = RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2))
    fc = tf.compile(every_instruction)
    fc(x, y)
    xs = [tf.tensor(RNG.standard_normal((2, 2)), requires_grad=True) for _ in range(2)]
    outs = [fc(t, y) for t in xs]              # two forwards, then both backwards
    (trace,) = fc._cache.values()
    assert trace.lowered is not None
    grads = tf.grad([outs[1] + 2 * outs[0]], xs)
    for t, g, w in zip(xs, grads, (2.0, 1.0)):
        ref = tf.value_and_grad(lambda a: w * every_instruction(a, y))(t.numpy())[1]
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-12, atol=1e-14)


def test_float32_and_large_programs_replay_op_by_op():
    x32 = RNG.standard_normal((2, 2)).astype(np.float32)
    _, trace = _compiled_trace(lambda a: (a @ a.T + a).sum(), x32)
    assert trace.lowered is None
    big = RNG.standard_normal((80, 80))
    _, trace = _compiled_trace(lambda a: (a @ big).sum(), big)
    assert trace.lowered is None           # 80·80 entries: NumPy's own call pays there


def test_a_failing_instruction_runs_the_call_eagerly():
    """On a non-positive-definite (singular) input the lowered cholesky (solve) fails and
    the compiled call reruns eagerly, raising what the eager call raises."""
    def g(a):
        s = a @ a.T - 3.0 * np.eye(2)
        return tf.log(tf.diagonal(tf.linalg.cholesky(s))).sum()
    fc = tf.compile(g)
    good = np.array([[2.0, 0.1], [0.2, 2.5]])
    fc(good)
    fc(good)
    (trace,) = fc._cache.values()
    assert trace.lowered is not None
    with pytest.raises(tf.LinAlgError):
        g(np.eye(2) * 0.1)
    with pytest.raises(tf.LinAlgError):
        fc(np.eye(2) * 0.1)
    np.testing.assert_array_equal(fc(good).numpy(), g(good).numpy())

    def h(a):          # solve is lowered too: an exactly singular matrix reruns eagerly
        return tf.linalg.solve(a * 1.0, C3[:2]).sum()
    hc = tf.compile(h)
    hc(good)
    hc(good)
    with pytest.raises(tf.LinAlgError):
        hc(np.array([[1.0, 2.0], [2.0, 4.0]]))
