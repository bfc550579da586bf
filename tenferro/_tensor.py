"""The eager Tensor: a NumPy payload plus its place in the autograd graph.

A Tensor is immutable. ``_node``/``_index`` name the graph node that produced it
(``None`` for a constant); a leaf with ``requires_grad=True`` owns a leaf node.
``_fw`` holds ``(dual level, tangent)`` while a forward-AD level is active.
Operators, NumPy ufuncs (``np.exp(t)``) and NumPy functions (``np.sum(t)``) dispatch to
tenferro's differentiable ops; the ops modules register them in ``_ops.registry``.
"""
import weakref

import numpy as np

from . import _engine
from ._errors import DTypeError
from ._ops import registry

__all__ = ["Tensor", "tensor", "as_tensor", "SUPPORTED_DTYPES"]

SUPPORTED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64),
                    np.dtype(np.complex64), np.dtype(np.complex128))


_SUPPORTED_SET = frozenset(SUPPORTED_DTYPES)


def _checked_dtype(dtype):
    dt = np.dtype(dtype)
    if dt in SUPPORTED_DTYPES:
        return dt
    if dt.kind in "biu":
        return np.dtype(np.float64)
    raise DTypeError(
        f"tenferro tensors hold float32, float64, complex64 or complex128, not {dt}; "
        f"convert the data first, e.g. with .astype(numpy.float64)")


def _to_array(data, dtype=None, copy=True):
    """The float/complex ndarray for ``data`` (ints and bools become float64)."""
    if type(data) is np.ndarray and dtype is None and data.dtype in _SUPPORTED_SET:
        return data.copy() if copy else data          # the common case, kept lean
    if isinstance(data, Tensor):
        data = data._data
    try:
        arr = np.array(data, copy=copy) if copy else np.asarray(data)
    except (ValueError, TypeError) as e:
        raise DTypeError(f"cannot make a tensor from {type(data).__name__}: {e}") from None
    if dtype is not None:
        dt = np.dtype(dtype)
        if dt not in SUPPORTED_DTYPES:
            raise DTypeError(
                f"dtype={dt} is not supported: use float32, float64, complex64 or complex128")
        if arr.dtype.kind not in "biufc":
            raise DTypeError(f"cannot make a {dt} tensor from data of dtype {arr.dtype}")
        if arr.dtype.kind == "c" and dt.kind != "c":
            raise DTypeError(f"cannot make a real {dt} tensor from complex data; "
                             "take .real explicitly if that is what you mean")
        return arr.astype(dt, copy=False)
    dt = _checked_dtype(arr.dtype)
    return arr if arr.dtype == dt else arr.astype(dt)


class Tensor:
    """An n-dimensional array that records the ops applied to it for differentiation."""
    __slots__ = ("_data", "_node", "_index", "_fw", "grad", "__weakref__")

    def __init__(self, data, dtype=None, requires_grad=False):
        self._data = _to_array(data, dtype, copy=True)
        self._node = None
        self._index = 0
        self._fw = None
        self.grad = None
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _wrap(cls, data, node=None, index=0):
        t = object.__new__(cls)
        t._data = data
        t._node = node
        t._index = index
        t._fw = None
        t.grad = None
        return t

    # ---- array protocol -------------------------------------------------------------
    @property
    def shape(self):
        return self._data.shape

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def size(self):
        return self._data.size

    @property
    def dtype(self):
        return self._data.dtype

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def numpy(self):
        """The payload as a NumPy array (shared, not copied: do not modify it)."""
        return self._data

    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._data, dtype=dtype)
        return self._data if dtype is None else self._data.astype(dtype, copy=False)

    def item(self):
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __float__(self):
        return float(self._data)

    def __complex__(self):
        return complex(self._data)

    def __int__(self):
        return int(self._data)

    def __bool__(self):
        return bool(self._data)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __repr__(self):
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = []
        if self._data.dtype != np.float64:
            extra.append(f"dtype={self._data.dtype}")
        if self._node is not None:
            extra.append("requires_grad=True" if self._node.op is None
                         else f"grad_fn={self._node.op.name}")
        return "tensor(" + ", ".join([body] + extra) + ")"

    __hash__ = object.__hash__

    # ---- autograd state -------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag):
        if flag:
            if self._node is None:
                self._node = _engine.Node(None, None, (), None, weakref.ref(self))
                self._index = 0
        else:
            self._node = None
            self._index = 0

    def set_requires_grad(self, flag=True):
        """Mark the tensor as a leaf to differentiate (``False`` detaches it). Returns self."""
        self.requires_grad = flag
        return self

    def requires_grad_(self, flag=True):
        return self.set_requires_grad(flag)

    @property
    def is_leaf(self):
        return self._node is None or self._node.op is None

    @property
    def grad_fn(self):
        node = self._node
        return None if node is None or node.op is None else node

    def detach(self):
        """The same values, cut from the graph (shares memory)."""
        return Tensor._wrap(self._data)

    def zero_grad(self):
        """Forget the accumulated ``.grad``."""
        self.grad = None

    def backward(self, grad_output=None, inputs=None, options=None, *, retain_graph=None,
                 create_graph=False):
        """Accumulate d(self)/d(leaf) into ``.grad`` of the leaves (or of ``inputs``)."""
        _autograd.backward(self, None if grad_output is None else [grad_output], inputs,
                           options, retain_graph=retain_graph, create_graph=create_graph)

    # ---- NumPy dispatch -------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        fn = registry.UFUNCS.get(ufunc) if method == "__call__" else None
        if fn is None or "out" in kwargs:
            raise TypeError(
                f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} has no "
                "differentiable tenferro version; use a tf.* op, or call it on t.numpy()")
        return fn(*args, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        fn = registry.FUNCTIONS.get(func)
        if fn is None:
            raise TypeError(
                f"numpy.{func.__name__} has no differentiable tenferro version; use a tf.* op, "
                "or call it on t.numpy()")
        return fn(*args, **kwargs)


def tensor(data, dtype=None, requires_grad=False):
    """A new Tensor holding a copy of ``data`` (ints and bools become float64)."""
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def as_tensor(data, dtype=None):
    """``data`` as a Tensor, sharing memory with an ndarray where possible."""
    if isinstance(data, Tensor) and dtype is None:
        return data
    return Tensor._wrap(_to_array(data, dtype, copy=False))


def install_methods():
    """Attach the registered methods (and operators) to Tensor."""
    for name, fn in registry.METHODS.items():
        setattr(Tensor, name, fn)


_engine._bind(Tensor)
_autograd = None  # tenferro.autograd, bound by tenferro/__init__.py (import cycle)
