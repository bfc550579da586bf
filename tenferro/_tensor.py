"""The eager Tensor: a NumPy payload plus its place in the autograd graph.

A Tensor is immutable. ``_node``/``_index`` name the graph node that produced it
(``None`` for a constant); a leaf with ``requires_grad=True`` owns a leaf node.
``_fw`` holds ``(dual level, tangent)`` while a forward-AD level is active.
Operators, NumPy ufuncs (``np.exp(t)``) and NumPy functions (``np.sum(t)``) dispatch to
tenferro's differentiable ops; the ops modules register them in ``_ops.registry``.
"""
import sys
import weakref

import numpy as np

from . import _dtypes, _engine
from ._errors import DTypeError, UnsupportedADError
from ._ops import registry
from ._state import STATE

__all__ = ["Tensor", "tensor", "as_tensor", "SUPPORTED_DTYPES"]

# the differentiable payload dtypes (bool and integer tensors exist too: _dtypes.SUPPORTED)
SUPPORTED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64),
                    np.dtype(np.complex64), np.dtype(np.complex128))
_SUPPORTED_SET = _dtypes.SUPPORTED


def _to_array(data, dtype=None, copy=True):
    """The ndarray payload for ``data``: any supported dtype, inferred like NumPy
    (Python ints become int64, floats float64, bools bool) unless ``dtype`` is given."""
    if type(data) is np.ndarray and dtype is None and data.dtype in _SUPPORTED_SET:
        return data.copy() if copy else data          # the common case, kept lean
    if isinstance(data, Tensor):
        data = data._data
    try:
        arr = np.array(data, copy=copy) if copy else np.asarray(data)
    except (ValueError, TypeError) as e:
        raise DTypeError(f"cannot make a tensor from {type(data).__name__}: {e}") from None
    if dtype is not None:
        dt = _dtypes.as_dtype(dtype)
        if arr.dtype.kind not in "biufc":
            raise DTypeError(f"cannot make a {dt} tensor from data of dtype {arr.dtype}")
        if arr.dtype.kind == "c" and dt.kind != "c":
            raise DTypeError(f"cannot make a real {dt} tensor from complex data; "
                             "take .real explicitly if that is what you mean")
        return arr.astype(dt, copy=False)
    if arr.dtype not in _SUPPORTED_SET:
        raise _dtypes._unsupported(arr.dtype)
    return arr


class Tensor:
    """An n-dimensional array that records the ops applied to it for differentiation."""
    __slots__ = ("_data", "_node", "_index", "_fw", "grad", "_version", "__weakref__")

    def __init__(self, data, dtype=None, requires_grad=False):
        self._data = _to_array(data, dtype, copy=True)
        self._node = None
        self._index = 0
        self._fw = None
        self.grad = None
        self._version = 0
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
        t._version = 0
        return t

    # ---- array protocol -------------------------------------------------------------
    @property
    def shape(self):
        """The shape, a tuple of ints (the payload's ``ndarray.shape``)."""
        return self._data.shape

    @property
    def ndim(self):
        """The number of dimensions (0 for a scalar)."""
        return self._data.ndim

    @property
    def size(self):
        """The number of elements."""
        return self._data.size

    @property
    def dtype(self):
        """The payload's NumPy dtype (``tf.float64 == np.float64``)."""
        return self._data.dtype

    @property
    def device(self):
        """Where the payload lives: always ``"cpu"`` (NumPy's device name)."""
        return "cpu"

    def to_device(self, device, /, *, stream=None):
        """The tensor itself on ``"cpu"`` (the only device); other devices raise."""
        _check_device(device)
        return self

    def __array_namespace__(self, /, *, api_version=None):
        """The array API namespace of tensors: the ``tenferro`` module itself."""
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(f"tenferro implements the array API standard "
                             f"{_API_VERSIONS[-1]} (and the versions it contains: "
                             f"{', '.join(_API_VERSIONS[:-1])}), not {api_version!r}")
        import tenferro
        return tenferro

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def numpy(self):
        """The payload as a NumPy array (shared, not copied: do not modify it). This is
        the explicit way out of the graph: no gradient flows through what you do with it."""
        return self._data

    def __array__(self, dtype=None, copy=None):
        if _tracked(self):
            raise UnsupportedADError(
                "converting a tensor that requires grad to a NumPy array would drop its "
                "gradient: keep computing with tf.* ops (NumPy functions and ufuncs called "
                "on the tensor itself dispatch to them), or convert t.detach() / t.numpy() "
                "to say that no gradient should flow")
        d = self._data
        if copy:
            return np.array(d, dtype=dtype, copy=True)
        if dtype is None or np.dtype(dtype) == d.dtype:
            return d
        if copy is False:
            raise ValueError(f"converting a {d.dtype} tensor to {np.dtype(dtype)} needs a "
                             "copy, but copy=False was passed")
        return d.astype(dtype)

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        if _tracked(self):
            raise UnsupportedADError(
                "exporting a tensor that requires grad through DLPack would drop its "
                "gradient: export t.detach() to say that no gradient should flow")
        kw = {}
        if max_version is not None:
            kw["max_version"] = max_version
        if dl_device is not None:
            kw["dl_device"] = dl_device
        if copy is not None:
            kw["copy"] = copy
        d = self._data
        if not d.flags.writeable and copy is None and (max_version is None
                                                       or max_version < (1, 0)):
            d = d.copy()     # DLPack < 1.0 has no read-only flag: export a private copy
        return d.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def item(self):
        """The value of a one-element tensor as a Python scalar (no gradient)."""
        return self._data.item()

    def tolist(self):
        """The payload as nested Python lists (no gradient), like ``ndarray.tolist``."""
        return self._data.tolist()

    def __float__(self):
        return float(self._data)

    def __complex__(self):
        return complex(self._data)

    def __int__(self):
        return int(self._data)

    def __index__(self):
        d = self._data
        if d.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index (operator.index), "
                            f"not {d.dtype}")
        return d.__index__()

    def __bool__(self):
        return bool(self._data)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __repr__(self):
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = []
        if self._data.dtype not in _DEFAULT_REPR_DTYPES:
            extra.append(f"dtype={self._data.dtype}")
        if self._node is not None:
            extra.append("requires_grad=True" if self._node.op is None
                         else f"grad_fn={self._node.op.name}")
        return "tensor(" + ", ".join([body] + extra) + ")"

    def __format__(self, spec):
        """``format(t, ".3f")``: a 0-d tensor formats its value; a larger tensor applies the
        spec to every entry (``[1.000, 2.500]``); an empty spec gives ``str(t)``."""
        if not spec:
            return str(self)
        d = self._data
        if d.ndim == 0:
            return format(d.item(), spec)
        return np.array2string(d, separator=", ",
                               formatter={"all": lambda v: format(v.item(), spec)})

    __hash__ = object.__hash__

    # ---- pickling and copying -------------------------------------------------------
    # A copy is a new leaf: same values, dtype and requires_grad (and .grad), cut from any
    # graph the original belongs to (the graph itself is not copied or pickled).
    def __reduce__(self):
        return (_rebuild, (self._data, self.requires_grad, self.grad))

    def __copy__(self):
        t = Tensor._wrap(self._data)
        if self._node is not None:
            t.requires_grad = True
        t.grad = self.grad
        return t

    def __deepcopy__(self, memo):
        t = Tensor._wrap(self._data.copy())
        if self._node is not None:
            t.requires_grad = True
        if self.grad is not None:
            t.grad = Tensor._wrap(self.grad._data.copy())
        memo[id(self)] = t
        return t

    # ---- autograd state -------------------------------------------------------------
    @property
    def requires_grad(self):
        """Whether ops on this tensor are recorded; settable on float/complex tensors."""
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag):
        if flag:
            if self._node is None:
                if self._data.dtype not in _dtypes.DIFFERENTIABLE:
                    raise DTypeError(
                        f"only float32/float64/complex64/complex128 tensors can require "
                        f"grad, this one is {self._data.dtype}; make it a float tensor "
                        f"first, e.g. tf.tensor(data, dtype=tf.float64, requires_grad=True) "
                        f"or t.astype(tf.float64)")
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
        """PyTorch's spelling of :meth:`set_requires_grad`."""
        return self.set_requires_grad(flag)

    @property
    def is_leaf(self):
        """True unless the tensor is the output of a recorded op (its ``.grad`` is kept)."""
        return self._node is None or self._node.op is None

    @property
    def grad_fn(self):
        """The graph node of the op that made this tensor, or None for a leaf."""
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
    # A NumPy ufunc or function called on tensors (DESIGN.md §5):
    # * with a tenferro version (registry.UFUNCS / FUNCTIONS): that op, differentiable;
    # * whose result is not a differentiable function of its inputs (registry.NONDIFF:
    #   np.isnan, np.shape, np.argmax, comparisons, ...): NumPy on the payloads, returning
    #   exactly what NumPy returns;
    # * anything else: NumPy on the payloads when no input carries a derivative, and a
    #   clear error when one does (never a silently dropped gradient).
    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        if method == "__call__" and "out" not in kwargs:
            fn = registry.UFUNCS.get(ufunc)
            if fn is not None:
                return fn(*args, **kwargs)
        name = _ufunc_name(ufunc) + ("" if method == "__call__" else "." + method)
        return _on_payloads(getattr(ufunc, method), name, ufunc in registry.NONDIFF,
                            args, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        fn = registry.FUNCTIONS.get(func)
        if fn is not None:
            return fn(*args, **kwargs)
        name = f"{func.__module__}.{func.__name__}".replace("numpy._core.", "numpy.")
        return _on_payloads(func, name, func in registry.NONDIFF, args, kwargs)


_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_DEFAULT_REPR_DTYPES = frozenset((np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool)))


def _check_device(device):
    if device is not None and device != "cpu":
        raise ValueError(f"tenferro tensors live on the CPU: device must be None or 'cpu', "
                         f"got {device!r}")


def _tracked(t):
    """Whether ``t`` carries a derivative that an op would have to propagate: it is in the
    reverse-mode graph while grad mode is on, or it has a tangent at the active level."""
    if t._node is not None and STATE.grad_enabled:
        return True
    fw = t._fw
    return fw is not None and STATE.fw_level != 0 and fw[0] == STATE.fw_level


def _find_tracked(obj):
    """The first tensor in ``obj`` (nested lists/tuples/dicts) that carries a derivative."""
    if isinstance(obj, Tensor):
        return obj if _tracked(obj) else None
    if isinstance(obj, (list, tuple)):
        for o in obj:
            t = _find_tracked(o)
            if t is not None:
                return t
    elif isinstance(obj, dict):
        return _find_tracked(list(obj.values()))
    return None


def _ufunc_name(ufunc):
    """``numpy.add``, ``scipy.special.gammaln``, ...: the name a user called the ufunc by."""
    name = ufunc.__name__
    if getattr(np, name, None) is ufunc:
        return f"numpy.{name}"
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, name, None) is ufunc:
        return f"scipy.special.{name}"
    return f"the ufunc {name}"


def _check_out(kwargs, name):
    out = kwargs.get("out")
    if isinstance(out, Tensor) or (isinstance(out, tuple)
                                   and any(isinstance(o, Tensor) for o in out)):
        raise TypeError(f"{name}: out= cannot be a tenferro Tensor (NumPy does not "
                        "write into tensors); use the returned value")


def _payloads(obj, name):
    """``obj`` with every tensor replaced by its payload (nested lists/tuples/dicts)."""
    if isinstance(obj, Tensor):
        return obj._data
    if isinstance(obj, list):
        return [_payloads(o, name) for o in obj]
    if isinstance(obj, tuple):
        out = [_payloads(o, name) for o in obj]
        return tuple(out) if type(obj) is tuple else type(obj)(*out)   # namedtuples
    if isinstance(obj, dict):
        _check_out(obj, name)
        return {k: _payloads(v, name) for k, v in obj.items()}
    return obj


def _on_payloads(func, name, nondiff, args, kwargs):
    """Run a NumPy ufunc/function without a tenferro version on the payloads."""
    _check_out(kwargs, name)
    if not nondiff:
        t = _find_tracked((args, kwargs))
        if t is not None:
            raise UnsupportedADError(
                f"{name} has no differentiable tenferro version, and an input requires "
                f"grad, so its gradient would be lost: use the tf.* op of the same name if "
                f"there is one, or pass t.detach() to say that no gradient should flow")
    return func(*_payloads(args, name), **_payloads(kwargs, name))


def _rebuild(data, requires_grad, grad):
    t = Tensor._wrap(data)
    if requires_grad:
        t.requires_grad = True
    t.grad = grad
    return t


def tensor(data, dtype=None, requires_grad=False):
    """A new Tensor holding a copy of ``data``; the dtype is inferred like NumPy (Python
    ints give int64, floats float64, bools bool) unless given. Only float and complex
    tensors can require grad."""
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def as_tensor(data, dtype=None):
    """``data`` as a Tensor, sharing memory with an ndarray where possible.

    A Tensor stays itself when ``dtype`` is None or its own dtype; another dtype is
    ``data.astype(dtype)``, which keeps the graph (a conversion never drops a gradient)."""
    if isinstance(data, Tensor):
        if dtype is None or np.dtype(dtype) == data.dtype:
            return data
        return data.astype(dtype)
    return Tensor._wrap(_to_array(data, dtype, copy=False))


def install_methods():
    """Attach the registered methods (and operators) to Tensor."""
    for name, fn in registry.METHODS.items():
        setattr(Tensor, name, fn)


_engine._bind(Tensor)
_autograd = None  # tenferro.autograd, bound by tenferro/__init__.py (import cycle)
