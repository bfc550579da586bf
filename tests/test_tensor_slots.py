"""The Tensor's slots that the compiled tape reads and writes by offset.

tape.pyx makes and reads Tensors through the offsets of seven ``__slots__`` members, by
their position in its ``TENSOR_SLOTS``; ``Tensor.__slots__`` (tenferro/_tensor.py) starts
with the same names in the same order, so the two read alike.
"""
import numpy as np

import tenferro as tf
from tenferro._kernels import tape
from tenferro._tensor import Tensor


def test_tensor_slots_start_with_the_tapes_in_its_order():
    assert len(tape.TENSOR_SLOTS) == 7
    assert Tensor.__slots__[:7] == tape.TENSOR_SLOTS
    for name in tape.TENSOR_SLOTS:
        assert type(Tensor.__dict__[name]).__name__ == "member_descriptor"


def test_the_tape_fills_every_slot_as_the_python_constructor_does():
    # a Tensor made by the compiled apply1 and one made by Tensor._wrap: the same slots
    x = tf.tensor(np.arange(3.0), requires_grad=True)
    y = x.exp()                                     # compiled: _new_tensor
    z = Tensor._wrap(np.exp(x.numpy()))             # Python
    for name in tape.TENSOR_SLOTS:
        if name in ("_data", "_node"):
            continue
        assert getattr(y, name) == getattr(z, name), name
    np.testing.assert_array_equal(y._data, z._data)
    assert y._node is not None and y._node.op.name == "exp"
