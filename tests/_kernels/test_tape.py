"""The compiled tape (tape.pyx) and its pure-Python twin (tape_twin.py) agree."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tenferro as tf
from tenferro import _engine, _kernels, autograd
from tenferro._kernels import tape_twin

UNARY = ["exp", "sin", "tanh", "negative", "conj"]
BINARY = ["add", "subtract", "multiply"]


def random_graph_gradients(seed, n_ops=40):
    """Build a random DAG of elementwise ops over 3 leaves and return every gradient:
    first-order (grad and backward) and second-order (create_graph)."""
    rng = np.random.default_rng(seed)
    leaves = [tf.tensor(rng.standard_normal(3) * 0.5, requires_grad=True) for _ in range(3)]
    pool = list(leaves)
    for _ in range(n_ops):
        if rng.random() < 0.5:
            x = pool[rng.integers(len(pool))]
            pool.append(getattr(tf, UNARY[rng.integers(len(UNARY))])(x))
        else:
            a, b = pool[rng.integers(len(pool))], pool[rng.integers(len(pool))]
            pool.append(getattr(tf, BINARY[rng.integers(len(BINARY))])(a, b))
    picks = rng.choice(len(pool), size=4, replace=False)
    out = sum((pool[i] * float(k + 1)).sum() for k, i in enumerate(picks))
    mid = pool[len(pool) // 2]
    first = tf.grad(out, leaves + [mid], retain_graph=True)
    out.backward(retain_graph=True)
    accumulated = [x.grad for x in leaves]
    g = tf.grad(out, leaves[0], create_graph=True)[0]
    second = tf.grad(g.sum(), leaves)
    results = first + accumulated + second
    return [None if r is None else r.numpy().tolist() for r in results]


TAPES = {"compiled": "compiled_tape", "twin": "reference_tape"}


def test_the_switch_picks_the_tape():
    if _kernels.PURE_PYTHON:
        assert _engine.Node is tape_twin.Node
        return
    assert _engine.Node is not tape_twin.Node
    assert type(_engine.run_backward).__name__ in ("builtin_function_or_method", "cython_function_or_method")


@pytest.mark.parametrize("seed", range(6))
def test_twin_agrees_in_process(seed, use_tape, request):
    request.getfixturevalue("compiled_tape")
    compiled = random_graph_gradients(seed)
    use_tape(tape_twin)
    twin = random_graph_gradients(seed)
    assert compiled == twin           # same algorithm, same order of additions: bit-identical
    assert any(r is None for r in compiled) is any(r is None for r in twin)


def test_twin_freed_graph_error(reference_tape):
    x = tf.tensor([1.0], requires_grad=True)
    out = x.exp().sum()
    assert type(out._node) is tape_twin.Node
    out.backward()
    with pytest.raises(tf.GraphFreedError, match="retain_graph"):
        out.backward()


def test_pure_python_mode_end_to_end(tmp_path):
    """TENFERRO_PURE_PYTHON=1 runs the whole engine on the twin, with the same results."""
    code = ("import json, sys; sys.path.insert(0, %r); import test_tape as t; "
            "import tenferro._engine as e; from tenferro._kernels import tape_twin as r; "
            "assert e.Node is r.Node; print(json.dumps(t.random_graph_gradients(3)))"
            % os.path.dirname(__file__))
    env = dict(os.environ, TENFERRO_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=tmp_path)   # not the source tree
    assert json.loads(out.stdout) == random_graph_gradients(3)


def test_deep_chain_does_not_recurse():
    x = tf.tensor([0.1], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    (g,) = tf.grad(y.sum(), x)
    assert g.item() == 1.0


# ---- grad_plain: tf.grad's common call in one compiled function ---------------------------

def _graph():
    x = tf.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    w = tf.tensor(np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]), requires_grad=True)
    c = tf.tensor(np.array([1.0, 2.0, 3.0]))                     # no requires_grad
    h = (w @ x).exp()
    return x, w, c, h, h.sum(), (x * c).sum()


def _plain_calls():
    """(name, builder) pairs: each builder makes a fresh graph and the grad arguments."""
    def single():
        x, w, c, h, s, t = _graph()
        return s, x, None
    def lists():
        x, w, c, h, s, t = _graph()
        return [s, t], [x, w, c], None
    def tuple_seeds():
        x, w, c, h, s, t = _graph()
        return (h, t), (w, x), (np.array([0.3, -0.7]), np.array(2.0))
    def one_array_seed():
        x, w, c, h, s, t = _graph()
        return h, [x, w], np.array([1.5, 0.25])
    def unreachable():
        x, w, c, h, s, t = _graph()
        return t, [w, x, c], None
    def output_is_input():
        x, w, c, h, s, t = _graph()
        return x, x, np.array([1.0, 2.0, 3.0])
    def view_gradient():             # reshape's pullback returns a view of the seed
        x, w, c, h, s, t = _graph()
        return x.reshape(3, 1), x, np.ones((3, 1))
    def tensor_seeds():
        x, w, c, h, s, t = _graph()
        return [h, s], [w], [tf.tensor(np.array([0.3, -0.7])), tf.tensor(np.array(2.0))]
    def scalar_seeds():              # a Python float, a NumPy scalar, a lone Tensor
        x, w, c, h, s, t = _graph()
        return [s, t], [x, w], [1.5, np.float64(-2.0)]
    def lone_tensor_seed():
        x, w, c, h, s, t = _graph()
        return h, x, tf.tensor(np.array([1.0, -1.0]))
    return [single, lists, tuple_seeds, one_array_seed, unreachable, output_is_input,
            view_gradient, tensor_seeds, scalar_seeds, lone_tensor_seed]


def _as_lists(gs):
    return [None if g is None else g.numpy().tolist() for g in gs]


@pytest.mark.parametrize("impl", ["compiled", "twin"])
@pytest.mark.parametrize("call", _plain_calls(), ids=lambda f: f.__name__)
def test_grad_plain_equals_general_path(call, impl, request):
    from tenferro._kernels import tape
    from tenferro._state import STATE
    request.getfixturevalue(TAPES[impl])               # graphs of that tape's Nodes
    plain = tape.grad_plain if impl == "compiled" else tape_twin.grad_plain
    outs, ins, seeds = call()
    got = plain(outs, ins, seeds, tf.Tensor, STATE, autograd._ONES, tf.GraphFreedError)
    assert got is not None                            # the fast path took the call
    outs, ins, seeds = call()
    want = tf.grad(outs, ins, seeds, retain_graph=False)   # an option: the general path
    assert _as_lists(got) == _as_lists(want)
    seed_list = [] if seeds is None else list(seeds) if isinstance(seeds, (list, tuple)) \
        else [seeds]
    seed_list = [np.asarray(s.numpy() if isinstance(s, tf.Tensor) else s) for s in seed_list]
    for g in got:                  # writeable memory, shared with no seed, no input
        if g is not None:
            assert g.numpy().flags.writeable
            assert not any(np.shares_memory(g.numpy(), s) for s in seed_list)
            assert not any(np.shares_memory(g.numpy(), x.numpy()) for x in
                           ([ins] if isinstance(ins, tf.Tensor) else ins))
    for s in seed_list:            # the user's seeds stay writeable
        assert s.flags.writeable
    assert STATE.grad_enabled


@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_grad_graph_equals_general_path_and_declines(impl, request):
    """tf.grad(..., create_graph=True) with implicit seeds in one compiled call: the
    general path's Tensors (requiring grad, differentiable again), grad mode restored;
    the calls it does not cover get None back with nothing changed."""
    from tenferro._engine import graph_rule
    from tenferro._kernels import tape
    from tenferro._state import STATE
    request.getfixturevalue(TAPES[impl])
    graph = tape.grad_graph if impl == "compiled" else tape_twin.grad_graph
    args = (tf.Tensor, STATE, autograd._ONES, tf.GraphFreedError, graph_rule)
    x, w, c, h, s, t = _graph()
    tf.grad(t, x, retain_graph=True)       # (the general path caches the 0-d float64 one)
    got = graph([s, t], [x, w, c], *args)
    x2, w2, c2, h2, s2, t2 = _graph()
    want = tf.grad([s2, t2], [x2, w2, c2], options=tf.GradOptions(create_graph=True))
    assert _as_lists(got) == _as_lists(want) and got[2] is None
    assert got[0].requires_grad and got[1].requires_grad
    (hx,) = tf.grad(got[0].sum(), [x], retain_graph=True)
    (hx2,) = tf.grad(want[0].sum(), [x2], retain_graph=True)
    assert hx.numpy().tolist() == hx2.numpy().tolist()
    assert STATE.grad_enabled
    z = (x * (1 + 2j)).sum()
    for outs, ins in [(h, x), (z, x), (c, x), (s.numpy(), x), (s, [x, x.numpy()])]:
        assert graph(outs, ins, *args) is None
    assert STATE.grad_enabled
    (g,) = tf.grad(s, x, create_graph=True)           # the graph is still there
    (g2,) = tf.grad(s2, x2, options=tf.GradOptions(create_graph=True))
    assert g.numpy().tolist() == g2.numpy().tolist()


@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_grad_plain_declines_without_side_effects(impl, request):
    """Calls that need the general path get None back, the graph intact: tf.grad then
    validates (and raises) or converts exactly as before."""
    from tenferro._kernels import tape
    from tenferro._state import STATE
    request.getfixturevalue(TAPES[impl])
    plain = tape.grad_plain if impl == "compiled" else tape_twin.grad_plain
    x, w, c, h, s, t = _graph()
    z = (x * (1 + 2j)).sum()                              # a complex 0-d output
    declined = [
        (s, x, 2),                                         # a Python int: cast
        (s, x, [np.array(2, dtype=np.float32)]),           # another dtype: cast
        (s, x, tf.tensor(np.array(2, dtype=np.float32))),  # a float32 Tensor: cast
        (s, x, [np.float32(2.0)]),                         # a float32 scalar: cast
        (s, x, ["2.0"]),                                   # not numeric: DTypeError
        (h, x, [np.ones(3)]),                              # wrong shape: ShapeError
        (h, x, None),                                      # implicit seed, 2 elements
        (z, x, None),                                      # implicit seed, complex
        (c, x, None),                                      # an output without a node
        ([s, t], x, [np.array(1.0)]),                      # too few seeds
        (s, [x, x.numpy()], None),                         # an ndarray input
        (s.numpy(), x, None),                              # an ndarray output
    ]
    for outs, ins, seeds in declined:
        assert plain(outs, ins, seeds, tf.Tensor, STATE, autograd._ONES,
                     tf.GraphFreedError) is None
    assert STATE.grad_enabled
    (g,) = tf.grad(s, x, [np.array(2, dtype=np.float32)])        # graph still there
    (g2,) = tf.grad(t, x)
    assert g.dtype == np.float64 and g2.numpy().tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(tf.ShapeError, match="seed must have the output's shape"):
        tf.grad(h, x, [np.ones(3)])


def test_grad_plain_restores_grad_mode_and_frees_the_graph():
    x = tf.tensor(np.array([1.0, 2.0]), requires_grad=True)
    out = (x * x).sum()
    (g,) = tf.grad(out, x)
    assert g.numpy().tolist() == [2.0, 4.0] and tf.is_grad_enabled()
    with pytest.raises(tf.GraphFreedError, match="retain_graph"):
        tf.grad(out, x)
    with tf.no_grad():
        y = tf.tensor(np.array([1.0]), requires_grad=True)
        with tf.enable_grad():
            o = (y * 3.0).sum()
        (gy,) = tf.grad(o, y)
        assert gy.item() == 3.0 and not tf.is_grad_enabled()


@pytest.mark.parametrize("impl", ["compiled", "twin"])
@pytest.mark.parametrize("call", _plain_calls(), ids=lambda f: f.__name__)
def test_backward_plain_equals_general_path(call, impl, request):
    from tenferro._kernels import tape
    from tenferro._state import STATE
    plain = tape.backward_plain if impl == "compiled" else tape_twin.backward_plain
    request.getfixturevalue(TAPES[impl])

    def leaves_after(run):
        outs, ins, seeds = call()
        ins = [ins] if isinstance(ins, tf.Tensor) else list(ins)
        ins[0].grad = tf.tensor(np.full(ins[0].shape, 0.5))     # accumulates onto it
        assert run(outs, seeds)
        return [None if x.grad is None else x.grad.numpy().tolist() for x in ins], ins

    got, ins = leaves_after(lambda o, g: plain(o, g, tf.Tensor, STATE, autograd._ONES,
                                               tf.GraphFreedError))
    want, _ = leaves_after(lambda o, g: tf.backward(o, g, retain_graph=False) or True)
    assert got == want
    for x in ins:
        if x.grad is not None:
            assert x.grad.numpy().flags.writeable
            assert not any(np.shares_memory(x.grad.numpy(), y.numpy()) for y in ins)
    assert STATE.grad_enabled


@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_backward_plain_declines_without_side_effects(impl, request):
    from tenferro._kernels import tape
    from tenferro._state import STATE
    plain = tape.backward_plain if impl == "compiled" else tape_twin.backward_plain
    request.getfixturevalue(TAPES[impl])
    x, w, c, h, s, t = _graph()
    for outs, seeds in [(s, tf.tensor(np.array(2, np.float32))), (h, None), (c, None),
                        (s, [np.ones(2)]), (s.numpy(), None)]:
        assert plain(outs, seeds, tf.Tensor, STATE, autograd._ONES,
                     tf.GraphFreedError) is False
    assert x.grad is None and w.grad is None
    s.backward()                                       # the graph was left intact
    assert x.grad is not None and w.grad is not None
    y = tf.tensor(np.array([1.0, 2.0]), requires_grad=True)
    out = (y * 2.0).sum()
    assert plain(out, None, tf.Tensor, STATE, autograd._ONES, tf.GraphFreedError) is True
    assert y.grad.numpy().tolist() == [2.0, 2.0]
    with pytest.raises(tf.GraphFreedError, match="retain_graph"):
        out.backward()
    with pytest.raises(tf.TenferroError, match="do not require grad"):
        tf.tensor(np.array(1.0)).backward()


# ---- a returned gradient shares memory with nothing else ---------------------------------

def _view_op(make):
    """An op whose pullback returns ``make(g)``, a view of some array."""
    from tenferro._engine import apply1
    from tenferro._ops.registry import Op
    op = Op("test_view_gradient", lambda ctx, needs, gs, xs, ys: (make(ctx, gs[0]),),
            lambda ctx, ts, xs, ys: (ts[0],))
    return lambda x, ctx=None: apply1(op, (x,), x.numpy() * 1.0, ctx=ctx)


@pytest.mark.parametrize("impl", ["compiled", "twin"])
@pytest.mark.parametrize("entry", ["grad", "backward", "grad_general"])
def test_gradient_views_are_copied_only_when_shared(impl, entry, request):
    import weakref
    request.getfixturevalue(TAPES[impl])
    refs = []

    def private_view(ctx, g):              # a view of a fresh array nothing else holds
        fresh = np.empty((1,) + g.shape)
        fresh[0] = g
        refs.append(weakref.ref(fresh))
        return fresh[0]

    def saved_view(ctx, g):                # a view of an array the node's ctx saved
        return ctx[0][0]

    def run(make, retain, ctx=None):
        x = tf.tensor(np.array([1.0, 2.0]), requires_grad=True)
        y = _view_op(make)(x, ctx)
        seed = np.array([3.0, 4.0])
        if entry == "grad":
            return tf.grad(y, x, seed, retain_graph=retain)[0] if retain else \
                tf.grad(y, x, seed)[0]
        if entry == "grad_general":        # an option: autograd's Python path
            return tf.grad(y, x, seed, options=tf.GradOptions(retain_graph=retain))[0]
        y.backward(seed, retain_graph=retain) if retain else y.backward(seed)
        return x.grad

    g = run(private_view, False)
    assert g.numpy().base is refs[-1]()    # handed out as it is: no copy
    saved = np.array([[5.0, 6.0]])
    g = run(saved_view, True, ctx=(saved,))   # the graph (and its ctx) is kept: copied
    assert not np.shares_memory(g.numpy(), saved)
    g.numpy()[:] = 0.0
    assert saved.tolist() == [[5.0, 6.0]]


@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_autograd_state_is_per_thread(impl):
    """tape.AutogradState (C thread-local variables) and its twin (a threading.local):
    a new thread starts with grad mode on and no dual level, and what one thread sets
    is invisible to the others."""
    import threading
    from tenferro._kernels import tape
    cls = tape.AutogradState if impl == "compiled" else tape_twin.AutogradState
    if impl == "compiled" and not _kernels.PURE_PYTHON:
        state = tf._state.STATE
        assert type(state) is cls       # the engine reads the C variables directly
    else:
        state = cls()
    before = (state.grad_enabled, state.fw_level)
    seen = []

    def other():
        seen.append((state.grad_enabled, state.fw_level))
        state.grad_enabled, state.fw_level = False, 5
        seen.append((state.grad_enabled, state.fw_level))

    state.grad_enabled, state.fw_level = False, 3
    try:
        th = threading.Thread(target=other)
        th.start()
        th.join()
        assert seen == [(True, 0), (False, 5)]
        assert (state.grad_enabled, state.fw_level) == (False, 3)
    finally:
        state.grad_enabled, state.fw_level = before
    assert (state.grad_enabled, state.fw_level) == (True, 0)


def test_compiled_state_drives_recording():
    """apply1 reads grad mode from the C variables behind tf._state.STATE."""
    x = tf.tensor(np.ones(3), requires_grad=True)
    tf._state.STATE.grad_enabled = False
    try:
        assert (x * 2.0)._node is None
    finally:
        tf._state.STATE.grad_enabled = True
    assert (x * 2.0)._node is not None


def nested_forward_results():
    """Nested dual levels through both tapes: jvp of hvp (a create_graph backward inside
    nested levels: graph_rule hands the outputs their tangent chains), grad of jvp of jvp,
    and a create_graph backward at the outer level after an inner level closed."""
    x0 = np.array([0.3, -0.7, 1.1])
    u, v = np.array([1.0, 0.5, -2.0]), np.array([0.25, 1.0, 0.5])

    def f(x):
        return (tf.exp(x) * tf.sin(x)).sum() + (x @ tf.tanh(x)) ** 2

    _, t3 = tf.jvp(lambda x: tf.hvp(f, x, tf.tensor(v))[2], (tf.tensor(x0),), (tf.tensor(u),))
    x = tf.tensor(x0, requires_grad=True)
    t = tf.jvp(lambda y: tf.jvp(f, (y,), (tf.tensor(v),))[1], (x,), (tf.tensor(u),))[1]
    (g,) = tf.grad(t, x)
    fwd = tf.forward_ad
    with fwd.dual_level():
        d = fwd.make_dual(tf.tensor(x0, requires_grad=True), tf.tensor(u))
        with fwd.dual_level():
            y = f(fwd.make_dual(d, tf.tensor(v)))
        (gy,) = tf.grad(y, d, create_graph=True)
        hu = fwd.unpack_dual(gy).tangent
    return [r.numpy().tolist() for r in (t3, g, hu)]


def test_twin_agrees_on_nested_forward_mode(use_tape, request):
    request.getfixturevalue("compiled_tape")
    compiled = nested_forward_results()
    use_tape(tape_twin)
    assert type(tf.tensor([1.0], requires_grad=True)._node) is tape_twin.Node
    twin = nested_forward_results()
    assert compiled == twin
    # and they are the derivatives: H u by forward-over-reverse, against tf.hessian
    x0 = np.array([0.3, -0.7, 1.1])

    def f(x):
        return (tf.exp(x) * tf.sin(x)).sum() + (x @ tf.tanh(x)) ** 2
    np.testing.assert_allclose(compiled[2], np.asarray(tf.hessian(f)(x0)) @ [1.0, 0.5, -2.0],
                               rtol=1e-12)
