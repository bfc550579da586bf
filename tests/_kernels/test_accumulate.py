"""Cotangent sums done in place when the tape owns the accumulator (tape.pyx's _add)."""
import numpy as np

import tenferro as tf
from tenferro._kernels import tape


def test_many_uses_accumulate_in_place_with_the_right_gradient(compiled_tape):
    a = np.linspace(0.1, 1.0, 1000)
    x = tf.tensor(a, requires_grad=True)
    before = tape.in_place_adds()
    y = (x * 2.0) + (x * 3.0) + x.sin() + x.exp()      # four fresh cotangents for x
    (g,) = tf.grad([y.sum()], [x])
    assert tape.in_place_adds() - before == 3
    np.testing.assert_allclose(g.numpy(), 5.0 + np.cos(a) + np.exp(a), rtol=1e-15)


def test_shared_cotangents_are_never_summed_in_place(compiled_tape):
    # add's pullback hands the same array to both inputs; the slot's accumulator is then
    # referenced twice and must not be changed in place (2 + 2, not 4 + 4)
    x = tf.tensor(np.ones(5), requires_grad=True)
    before = tape.in_place_adds()
    (g,) = tf.grad([(x + x).sum()], [x])
    assert tape.in_place_adds() == before
    np.testing.assert_array_equal(g.numpy(), np.full(5, 2.0))
    y = x + 1.0                                         # passes its cotangent on as it is
    (g,) = tf.grad([(y + y + y * 2.0).sum()], [x])
    np.testing.assert_array_equal(g.numpy(), np.full(5, 4.0))


def test_seeds_and_retained_graphs_are_left_intact():
    x = tf.tensor(np.arange(1.0, 4.0), requires_grad=True)
    y = x * 1.0
    out = y + y * 2.0
    seed = np.ones(3)
    seed_copy = seed.copy()
    first = tf.grad([out], [x], grad_outputs=[seed], retain_graph=True)[0].numpy().copy()
    second = tf.grad([out], [x], grad_outputs=[seed])[0].numpy()
    np.testing.assert_array_equal(seed, seed_copy)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, np.full(3, 3.0))
