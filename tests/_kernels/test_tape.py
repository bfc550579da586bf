"""The compiled tape (tape.pyx) and its pure-Python twin (_reference.py) agree."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tenferro as tf
from tenferro import _engine, autograd
from tenferro._kernels import _reference

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


@pytest.fixture
def reference_tape(monkeypatch):
    monkeypatch.setattr(_engine, "Node", _reference.Node)
    monkeypatch.setattr(autograd, "run_backward", _reference.run_backward)


def test_compiled_tape_is_in_use():
    assert _engine.Node is not _reference.Node
    assert type(_engine.run_backward).__name__ in ("builtin_function_or_method", "cython_function_or_method")


@pytest.mark.parametrize("seed", range(6))
def test_twin_agrees_in_process(seed, monkeypatch):
    compiled = random_graph_gradients(seed)
    monkeypatch.setattr(_engine, "Node", _reference.Node)
    monkeypatch.setattr(autograd, "run_backward", _reference.run_backward)
    twin = random_graph_gradients(seed)
    assert compiled == twin           # same algorithm, same order of additions: bit-identical
    assert any(r is None for r in compiled) is any(r is None for r in twin)


def test_twin_freed_graph_error(reference_tape):
    x = tf.tensor([1.0], requires_grad=True)
    out = x.exp().sum()
    assert type(out._node) is _reference.Node
    out.backward()
    with pytest.raises(tf.GraphFreedError, match="retain_graph"):
        out.backward()


def test_pure_python_mode_end_to_end(tmp_path):
    """TENFERRO_PURE_PYTHON=1 runs the whole engine on the twin, with the same results."""
    code = ("import json, sys; sys.path.insert(0, %r); import test_tape as t; "
            "import tenferro._engine as e; from tenferro._kernels import _reference as r; "
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
