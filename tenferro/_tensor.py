"""The eager Tensor: a NumPy payload plus its place in the autograd graph.

A Tensor's payload array is never written in place. ``_node``/``_index`` name the graph
node that produced it (``None`` for a constant); a leaf with ``requires_grad=True`` owns a
leaf node. ``_fw`` holds ``(dual level, tangent)`` while a forward-AD level is active
(inside nested levels a chain ``(level, tangent, rest)``, one tangent per level:
tenferro/forward.py).
``_view`` links views and their base (``_ops/views.py``): an in-place write (``t[i] = v``,
``t += u``) rebinds the written tensor object, its base and every live view of the base to
their new values.
Operators, NumPy ufuncs (``np.exp(t)``) and NumPy functions (``np.sum(t)``) dispatch to
tenferro's differentiable ops; the ops modules register them in ``_ops.registry``.
"""
from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _dtypes, _engine
from ._errors import DTypeError, GraphFreedError, ShapeError, UnsupportedADError
from ._ops import registry
from ._state import STATE

if TYPE_CHECKING:
    from types import ModuleType

    from ._ops.inplace import _At
    from .autograd import BackwardOptions
    from .linalg.det import SlogdetResult
    from .linalg.eig import EigResult
    from .linalg.eigh import EighResult
    from .linalg.lu import LUResult
    from .linalg.qr import QRResult
    from .linalg.svd import SVDResult

    # an axis argument of the reductions: one axis, several, or all (None)
    _Axis: TypeAlias = int | tuple[int, ...] | None

__all__ = ["Tensor", "tensor", "as_tensor", "SUPPORTED_DTYPES"]

# the differentiable payload dtypes (bool and integer tensors exist too: _dtypes.SUPPORTED)
SUPPORTED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64),
                    np.dtype(np.complex64), np.dtype(np.complex128))
_SUPPORTED_SET = _dtypes.SUPPORTED


def _to_array(data: Any, dtype: DTypeLike | None = None, copy: bool = True) -> NDArray[Any]:
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
    """An n-dimensional array that records the ops applied to it for differentiation.

    Made by :func:`tensor`, :func:`asarray`, :func:`as_tensor` and the creation functions;
    its payload is a NumPy array. Ops on a tensor that requires grad are recorded, so
    :func:`grad`, :meth:`backward` and the forward mode can differentiate them. Methods mirror
    the functions (``t.sum()``, ``t.exp()``, ``t @ u``, ``t.T``, ``t.mT``, ``t[i]``).
    The properties ``shape``, ``ndim``, ``size``, ``dtype``, ``device`` (always ``'cpu'``),
    ``requires_grad`` (settable on float/complex tensors), ``is_leaf`` and ``grad_fn`` are
    documented below.

    Parameters
    ----------
    data : array_like
        The values (copied).
    dtype : dtype, optional
        The dtype; inferred like NumPy by default.
    requires_grad : bool, optional
        Record ops for differentiation (float and complex dtypes only). Default False.

    Attributes
    ----------
    grad : Tensor or None
        The gradient accumulated by :meth:`backward` (leaves and ``inputs`` only).
    T, mT, mH : Tensor
        Transposes: all axes reversed, the last two swapped, and swapped and conjugated.
    real, imag : Tensor
        The real and imaginary parts.

    Raises
    ------
    DTypeError
        If ``requires_grad`` is set on a tensor that is not float or complex.

    Examples
    --------
    >>> x = tf.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    >>> x.is_leaf, y.is_leaf
    (True, False)
    """
    __slots__ = ("_data", "_node", "_index", "_fw", "grad", "_version", "_view",
                 "__weakref__")

    _data: NDArray[Any]
    _node: Any
    _index: int
    _fw: tuple[Any, ...] | None
    grad: Tensor | None
    _version: int
    _view: Any

    def __init__(self, data: ArrayLike, dtype: DTypeLike | None = None,
                 requires_grad: bool = False) -> None:
        self._data = _to_array(data, dtype, copy=True)
        self._node = None
        self._index = 0
        self._fw = None
        self.grad = None
        self._version = 0
        self._view = None
        if requires_grad:
            if self._data.dtype in _dtypes.DIFFERENTIABLE:   # the requires_grad setter's
                self._node = _engine.Node(None, None, (), None, weakref.ref(self))
            else:
                self.requires_grad = True      # (which raises DTypeError for this dtype)

    @classmethod
    def _wrap(cls, data: NDArray[Any], node: Any = None, index: int = 0) -> Tensor:
        t = object.__new__(cls)
        t._data = data
        t._node = node
        t._index = index
        t._fw = None
        t.grad = None
        t._version = 0
        t._view = None
        return t

    # ---- array protocol -------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints (the payload's ``ndarray.shape``)."""
        return self._data.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar)."""
        return self._data.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return self._data.size

    @property
    def dtype(self) -> np.dtype[Any]:
        """The payload's NumPy dtype (``tf.float64 == np.float64``)."""
        return self._data.dtype

    @property
    def device(self) -> str:
        """Where the payload lives: always ``"cpu"`` (NumPy's device name)."""
        return "cpu"

    def to_device(self, device: str | None, /, *, stream: Any = None) -> Tensor:
        """The tensor itself on ``"cpu"`` (the only device); other devices raise.

        Parameters
        ----------
        device : {None, 'cpu'}
            The device.
        stream : object, optional
            Ignored (the standard's parameter).

        Returns
        -------
        Tensor
            ``self``.

        Raises
        ------
        ShapeError
            For any device other than None or ``'cpu'``.
        """
        _check_device(device)
        return self

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        """The array API namespace of tensors: the ``tenferro`` module itself."""
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ShapeError(f"tenferro implements the array API standard "
                             f"{_API_VERSIONS[-1]} (and the versions it contains: "
                             f"{', '.join(_API_VERSIONS[:-1])}), not {api_version!r}")
        # the namespace is the package, which imports this module (cycle: at call time)
        import tenferro
        return tenferro

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        n: int = self._data.shape[0]
        return n

    def numpy(self) -> NDArray[Any]:
        """The payload as a NumPy array (shared, not copied: do not modify it).

        This is the explicit way out of the graph: no gradient flows through what you do with
        it.

        Returns
        -------
        numpy.ndarray
            The payload itself.

        Examples
        --------
        >>> tf.tensor([1.0, 2.0]).numpy()
        array([1., 2.])
        """
        _engine.note_escape("Tensor.numpy", self)
        return self._data

    def __array__(self, dtype: DTypeLike | None = None,
                  copy: bool | None = None) -> NDArray[Any]:
        if _engine.is_tracked(self):
            # the message names the NumPy call (np.mean([x, y]), np.r_[x, y]) and the tf
            # spelling that keeps the gradient: tenferro/_numpy/, which imports this
            # module (cycle: at call time)
            from ._numpy import conversion_error
            raise conversion_error()
        d = self._data
        if copy:
            return np.array(d, dtype=dtype, copy=True)
        if dtype is None or np.dtype(dtype) == d.dtype:
            return d
        if copy is False:
            raise ShapeError(f"converting a {d.dtype} tensor to {np.dtype(dtype)} needs a "
                             "copy, but copy=False was passed")
        return d.astype(dtype)

    def __dlpack__(self, /, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        if _engine.is_tracked(self):
            raise UnsupportedADError(
                "exporting a tensor that requires grad through DLPack would drop its "
                "gradient: export t.detach() to say that no gradient should flow")
        kw: dict[str, Any] = {}
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

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    def item(self) -> Any:
        """The value of a one-element tensor as a Python scalar (no gradient).

        Returns
        -------
        int, float, complex or bool
            The value.

        Raises
        ------
        ValueError
            If the tensor has more than one element (NumPy's error).

        Examples
        --------
        >>> tf.tensor(3.5).item()
        3.5
        """
        v = self._data.item()
        _engine.note_read(self, "item", v)
        return v

    def tolist(self) -> Any:
        """The payload as nested Python lists (no gradient), like ``ndarray.tolist``.

        Returns
        -------
        list or scalar
            Nested lists of Python scalars (a scalar for a 0-d tensor).

        Examples
        --------
        >>> tf.tensor([[1, 2]]).tolist()
        [[1, 2]]
        """
        v = self._data.tolist()
        _engine.note_read(self, "tolist", v)
        return v

    def __float__(self) -> float:
        v = float(self._data)
        _engine.note_read(self, "float", v)
        return v

    def __complex__(self) -> complex:
        v = complex(self._data)
        _engine.note_read(self, "complex", v)
        return v

    def __int__(self) -> int:
        v = int(self._data)
        _engine.note_read(self, "int", v)
        return v

    def __index__(self) -> int:
        d = self._data
        if d.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index (operator.index), "
                            f"not {d.dtype}")
        v: int = d.__index__()
        _engine.note_read(self, "index", v)
        return v

    def __bool__(self) -> bool:
        v = bool(self._data)
        _engine.note_read(self, "bool", v)
        return v

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = []
        if self._data.dtype not in _DEFAULT_REPR_DTYPES:
            extra.append(f"dtype={self._data.dtype}")
        if self._node is not None:
            extra.append("requires_grad=True" if self._node.op is None
                         else f"grad_fn={self._node.op.name}")
        return "tensor(" + ", ".join([body] + extra) + ")"

    def __format__(self, spec: str) -> str:
        """``format(t, ".3f")``: a 0-d tensor formats its value; a larger tensor applies the
        spec to every entry (``[1.000, 2.500]``); an empty spec gives ``str(t)``."""
        if not spec:
            return str(self)
        d = self._data
        if d.ndim == 0:
            return format(d.item(), spec)

        def entry(v: Any) -> str:
            return format(v.item(), spec)

        return np.array2string(d, separator=", ", formatter={"all": entry})

    __hash__ = object.__hash__

    # ---- pickling and copying -------------------------------------------------------
    # A copy is a new leaf: same values, dtype and requires_grad (and .grad), cut from any
    # graph the original belongs to (the graph itself is not copied or pickled).
    def __reduce__(self) -> tuple[Callable[..., Tensor], tuple[Any, ...]]:
        return (_rebuild, (self._data, self.requires_grad, self.grad))

    def __copy__(self) -> Tensor:
        t = Tensor._wrap(self._data)
        if self._node is not None:
            t.requires_grad = True
        t.grad = self.grad
        return t

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        t = Tensor._wrap(self._data.copy())
        if self._node is not None:
            t.requires_grad = True
        if self.grad is not None:
            t.grad = Tensor._wrap(self.grad._data.copy())
        memo[id(self)] = t
        return t

    # ---- autograd state -------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor are recorded; settable on float/complex tensors."""
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
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

    def set_requires_grad(self, flag: bool = True) -> Tensor:
        """Mark the tensor as a leaf to differentiate (``False`` detaches it). Returns self.

        Parameters
        ----------
        flag : bool, optional
            Default True.

        Returns
        -------
        Tensor
            ``self``.

        Raises
        ------
        DTypeError
            If ``flag`` is True and the dtype is not float or complex.
        """
        self.requires_grad = flag
        return self

    def requires_grad_(self, flag: bool = True) -> Tensor:
        """PyTorch's spelling of :meth:`set_requires_grad`.

        Parameters
        ----------
        flag : bool, optional
            Default True.

        Returns
        -------
        Tensor
            ``self``.
        """
        return self.set_requires_grad(flag)

    @property
    def is_leaf(self) -> bool:
        """True unless the tensor is the output of a recorded op (its ``.grad`` is kept)."""
        return self._node is None or self._node.op is None

    @property
    def grad_fn(self) -> Any:
        """The graph node of the op that made this tensor, or None for a leaf."""
        node = self._node
        return None if node is None or node.op is None else node

    def detach(self) -> Tensor:
        """The same values, cut from the graph (sharing the payload).

        Unlike PyTorch's, it is not a view: a later write to either tensor does not show in the
        other.

        Returns
        -------
        Tensor
            A constant tensor.

        Examples
        --------
        >>> tf.tensor([1.0, 2.0], requires_grad=True).detach()
        tensor([1., 2.])
        """
        _engine.note_escape("Tensor.detach", self)
        return Tensor._wrap(self._data)

    def zero_grad(self) -> None:
        """Forget the accumulated ``.grad`` (set it to None).

        Returns
        -------
        None
        """
        self.grad = None

    def backward(self, grad_output: ArrayLike | None = None,
                 inputs: Tensor | list[Tensor] | tuple[Tensor, ...] | None = None,
                 options: BackwardOptions | None = None, *, retain_graph: bool | None = None,
                 create_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``.grad`` of the leaves (or of ``inputs``).

        The method spelling of :func:`backward`.

        Parameters
        ----------
        grad_output : array_like, optional
            The cotangent of ``self``; default 1 for a one-element tensor (required otherwise).
        inputs : Tensor or sequence of Tensor, optional
            Accumulate only into these. Default: every leaf that requires grad.
        options : BackwardOptions, optional
            Retain-graph and create-graph settings in one object.
        retain_graph : bool, optional
            Keep the saved values for another backward pass. Default: ``create_graph``.
        create_graph : bool, optional
            Record the backward pass, for higher derivatives. Default False.

        Returns
        -------
        None

        Raises
        ------
        GraphFreedError
            If the graph was freed by an earlier backward pass (pass ``retain_graph=True``).
        ShapeError
            If ``grad_output`` is missing for a tensor of more than one element, or has the
            wrong shape.

        Examples
        --------
        >>> x = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> (x ** 2).sum().backward()
        >>> x.grad
        tensor([2., 4., 6.])
        """
        if (grad_output is None and inputs is None and options is None
                and retain_graph is None and not create_graph
                and _engine.CAPTURE.recorder is None
                and _engine.backward_plain(self, None, Tensor, STATE, _autograd._ONES,
                                           GraphFreedError)):
            return    # the common call, straight into the compiled pass (autograd.backward)
        _autograd.backward(self, None if grad_output is None else [grad_output], inputs,
                           options, retain_graph=retain_graph, create_graph=create_graph)

    # ---- NumPy dispatch -------------------------------------------------------------
    # A NumPy ufunc or function called on tensors (docs/design.md#numpy-on-tensors):
    # * with a tenferro version (registry.UFUNCS / FUNCTIONS): that op, differentiable;
    # * whose result is not a differentiable function of its inputs (registry.NONDIFF:
    #   np.isnan, np.shape, np.argmax, comparisons, ...): NumPy on the payloads, returning
    #   exactly what NumPy returns;
    # * anything else: NumPy on the payloads when no input carries a derivative, and a
    #   clear error when one does (never a silently dropped gradient).
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *args: Any, **kwargs: Any) -> Any:
        if method == "__call__" and "out" not in kwargs:
            fn = registry.UFUNCS.get(ufunc)
            if fn is not None:
                return fn(*args, **kwargs)
        name = _ufunc_name(ufunc) + ("" if method == "__call__" else "." + method)
        return _on_payloads(getattr(ufunc, method), name, ufunc in registry.NONDIFF,
                            args, kwargs)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any,
                           kwargs: dict[str, Any]) -> Any:
        fn = registry.FUNCTIONS.get(func)
        if fn is not None:
            return fn(*args, **kwargs)
        name = f"{func.__module__}.{func.__name__}".replace("numpy._core.", "numpy.")
        return _on_payloads(func, name, func in registry.NONDIFF, args, kwargs)

    if TYPE_CHECKING:
        # The operators, properties and methods below are attached at import, from the op
        # modules (install_methods: registry.METHODS; T/mT/mH/real/imag/at are properties
        # set by _ops.structure, _ops.elementwise and _ops.inplace). They are declared
        # here for type checkers only: this block never runs (one stub per property, like
        # the methods below: the repetition is the declaration).
        @property
        def T(self) -> Tensor: ...
        @property
        def mT(self) -> Tensor: ...
        @property
        def mH(self) -> Tensor: ...
        @property
        def real(self) -> Tensor: ...
        @property
        def imag(self) -> Tensor: ...
        @property
        def at(self) -> _At: ...

        def __getitem__(self, key: Any, /) -> Tensor: ...
        def __setitem__(self, key: Any, value: ArrayLike, /) -> None: ...
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __add__(self, other: ArrayLike, /) -> Tensor: ...
        def __radd__(self, other: ArrayLike, /) -> Tensor: ...
        def __sub__(self, other: ArrayLike, /) -> Tensor: ...
        def __rsub__(self, other: ArrayLike, /) -> Tensor: ...
        def __mul__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __truediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __rtruediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __floordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __rfloordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __mod__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmod__(self, other: ArrayLike, /) -> Tensor: ...
        def __pow__(self, other: ArrayLike, /) -> Tensor: ...
        def __rpow__(self, other: ArrayLike, /) -> Tensor: ...
        def __matmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmatmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __and__(self, other: ArrayLike, /) -> Tensor: ...
        def __rand__(self, other: ArrayLike, /) -> Tensor: ...
        def __or__(self, other: ArrayLike, /) -> Tensor: ...
        def __ror__(self, other: ArrayLike, /) -> Tensor: ...
        def __xor__(self, other: ArrayLike, /) -> Tensor: ...
        def __rxor__(self, other: ArrayLike, /) -> Tensor: ...
        def __lshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __rlshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __rshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __rrshift__(self, other: ArrayLike, /) -> Tensor: ...
        # comparisons give bool tensors, not bool (as ndarray's)
        def __eq__(self, other: object, /) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: object, /) -> Tensor: ...  # type: ignore[override]
        def __lt__(self, other: ArrayLike, /) -> Tensor: ...
        def __le__(self, other: ArrayLike, /) -> Tensor: ...
        def __gt__(self, other: ArrayLike, /) -> Tensor: ...
        def __ge__(self, other: ArrayLike, /) -> Tensor: ...
        # in place: t += u rebinds t to the updated tensor (see _ops.inplace)
        def __iadd__(self, other: ArrayLike, /) -> Tensor: ...
        def __isub__(self, other: ArrayLike, /) -> Tensor: ...
        def __imul__(self, other: ArrayLike, /) -> Tensor: ...
        def __itruediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __ifloordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __imod__(self, other: ArrayLike, /) -> Tensor: ...
        def __ipow__(self, other: ArrayLike, /) -> Tensor: ...
        def __imatmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __iand__(self, other: ArrayLike, /) -> Tensor: ...
        def __ior__(self, other: ArrayLike, /) -> Tensor: ...
        def __ixor__(self, other: ArrayLike, /) -> Tensor: ...
        def __ilshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __irshift__(self, other: ArrayLike, /) -> Tensor: ...

        # elementwise methods (tenferro.<name>(self))
        def abs(self) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def expm1(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def log1p(self) -> Tensor: ...
        def log2(self) -> Tensor: ...
        def log10(self) -> Tensor: ...
        def sqrt(self) -> Tensor: ...
        def square(self) -> Tensor: ...
        def reciprocal(self) -> Tensor: ...
        def sin(self) -> Tensor: ...
        def cos(self) -> Tensor: ...
        def tan(self) -> Tensor: ...
        def sinh(self) -> Tensor: ...
        def cosh(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def arcsin(self) -> Tensor: ...
        def arccos(self) -> Tensor: ...
        def arctan(self) -> Tensor: ...
        def arcsinh(self) -> Tensor: ...
        def arccosh(self) -> Tensor: ...
        def arctanh(self) -> Tensor: ...
        def asin(self) -> Tensor: ...
        def acos(self) -> Tensor: ...
        def atan(self) -> Tensor: ...
        def asinh(self) -> Tensor: ...
        def acosh(self) -> Tensor: ...
        def atanh(self) -> Tensor: ...
        def conj(self) -> Tensor: ...
        def conjugate(self) -> Tensor: ...
        def negative(self) -> Tensor: ...
        def positive(self) -> Tensor: ...
        def sign(self) -> Tensor: ...
        def floor(self) -> Tensor: ...
        def ceil(self) -> Tensor: ...
        def trunc(self) -> Tensor: ...
        def round(self, decimals: int = 0) -> Tensor: ...
        def add(self, other: ArrayLike, /) -> Tensor: ...
        def subtract(self, other: ArrayLike, /) -> Tensor: ...
        def multiply(self, other: ArrayLike, /) -> Tensor: ...
        def divide(self, other: ArrayLike, /) -> Tensor: ...
        def floor_divide(self, other: ArrayLike, /) -> Tensor: ...
        def remainder(self, other: ArrayLike, /) -> Tensor: ...
        def power(self, other: ArrayLike, /) -> Tensor: ...
        def pow(self, other: ArrayLike, /) -> Tensor: ...
        def maximum(self, other: ArrayLike, /) -> Tensor: ...
        def minimum(self, other: ArrayLike, /) -> Tensor: ...
        def hypot(self, other: ArrayLike, /) -> Tensor: ...
        def copysign(self, other: ArrayLike, /) -> Tensor: ...
        def logaddexp(self, other: ArrayLike, /) -> Tensor: ...
        def atan2(self, other: ArrayLike, /) -> Tensor: ...
        def arctan2(self, other: ArrayLike, /) -> Tensor: ...
        def clip(self, /, min: ArrayLike | None = None,
                 max: ArrayLike | None = None) -> Tensor: ...
        def clamp(self, /, min: ArrayLike | None = None,
                  max: ArrayLike | None = None) -> Tensor: ...

        # reductions (NumPy's method signatures; out= must be None)
        def sum(self, axis: _Axis = None, dtype: DTypeLike | None = None, out: None = None,
                keepdims: bool = False, initial: Any = None, where: Any = None) -> Tensor: ...
        def prod(self, axis: _Axis = None, dtype: DTypeLike | None = None, out: None = None,
                 keepdims: bool = False, initial: Any = None, where: Any = None) -> Tensor: ...
        def mean(self, axis: _Axis = None, dtype: DTypeLike | None = None, out: None = None,
                 keepdims: bool = False, *, where: Any = None) -> Tensor: ...
        def var(self, axis: _Axis = None, dtype: DTypeLike | None = None, out: None = None,
                ddof: float = 0, keepdims: bool = False, *, where: Any = None,
                mean: Any = None, correction: float | None = None) -> Tensor: ...
        def std(self, axis: _Axis = None, dtype: DTypeLike | None = None, out: None = None,
                ddof: float = 0, keepdims: bool = False, *, where: Any = None,
                mean: Any = None, correction: float | None = None) -> Tensor: ...
        def max(self, axis: _Axis = None, out: None = None, keepdims: bool = False,
                initial: Any = None, where: Any = None) -> Tensor: ...
        def min(self, axis: _Axis = None, out: None = None, keepdims: bool = False,
                initial: Any = None, where: Any = None) -> Tensor: ...
        def amax(self, axis: _Axis = None, out: None = None, keepdims: bool = False,
                 initial: Any = None, where: Any = None) -> Tensor: ...
        def amin(self, axis: _Axis = None, out: None = None, keepdims: bool = False,
                 initial: Any = None, where: Any = None) -> Tensor: ...
        def all(self, axis: _Axis = None, out: None = None, keepdims: bool = False, *,
                where: Any = None) -> Tensor: ...
        def any(self, axis: _Axis = None, out: None = None, keepdims: bool = False, *,
                where: Any = None) -> Tensor: ...
        def cumsum(self, axis: int | None = None, dtype: DTypeLike | None = None,
                   out: None = None) -> Tensor: ...
        def cumprod(self, axis: int | None = None, dtype: DTypeLike | None = None,
                    out: None = None) -> Tensor: ...
        def logsumexp(self, axis: _Axis = None, keepdims: bool = False) -> Tensor: ...
        def argmax(self, axis: int | None = None, out: None = None, *,
                   keepdims: bool = False) -> Tensor: ...
        def argmin(self, axis: int | None = None, out: None = None, *,
                   keepdims: bool = False) -> Tensor: ...
        def argsort(self, axis: int = -1, kind: str | None = None, order: None = None, *,
                    descending: bool = False, stable: bool | None = None) -> Tensor: ...
        def searchsorted(self, v: ArrayLike, side: str = "left",
                         sorter: ArrayLike | None = None) -> Tensor: ...
        def nonzero(self) -> tuple[Tensor, ...]: ...

        # structure
        def astype(self, dtype: DTypeLike, order: str = "K", casting: str = "unsafe",
                   subok: bool = True, copy: bool = True) -> Tensor: ...
        def reshape(self, *shape: int | tuple[int, ...], copy: bool | None = None) -> Tensor: ...
        def transpose(self, *axes: int | tuple[int, ...]) -> Tensor: ...
        def permute(self, *axes: int | tuple[int, ...]) -> Tensor: ...
        def swapaxes(self, axis1: int, axis2: int) -> Tensor: ...
        def moveaxis(self, source: int | tuple[int, ...],
                     destination: int | tuple[int, ...]) -> Tensor: ...
        def squeeze(self, axis: _Axis = None) -> Tensor: ...
        def unsqueeze(self, dim: int) -> Tensor: ...
        def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor: ...
        def ravel(self, order: str = "C") -> Tensor: ...
        def broadcast_to(self, shape: tuple[int, ...]) -> Tensor: ...
        def diag(self, k: int = 0) -> Tensor: ...
        def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor: ...
        def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor: ...
        def matmul(self, other: ArrayLike, /) -> Tensor: ...

        # linear algebra (tenferro.linalg.<name>(self, ...))
        def det(self, *, check_finite: bool = True) -> Tensor: ...
        def slogdet(self, *, check_finite: bool = True) -> SlogdetResult: ...
        def inv(self, *, check_finite: bool = True) -> Tensor: ...
        def pinv(self, rtol: ArrayLike | None = None, hermitian: bool = False, *,
                 check_finite: bool = True) -> Tensor: ...
        def cholesky(self, upper: bool = False, *, check_finite: bool = True) -> Tensor: ...
        def lu(self, *, check_finite: bool = True) -> LUResult: ...
        def matrix_exp(self, *, check_finite: bool = False) -> Tensor: ...
        def eig(self, *, check_finite: bool = True, check_gauge: bool = True) -> EigResult: ...
        def eigvals(self, *, check_finite: bool = True) -> Tensor: ...
        def eigh(self, UPLO: str = "L", *, derivative_eps: float | None = None,
                 check_gauge: bool = True, check_finite: bool = True) -> EighResult: ...
        def eigen(self, UPLO: str = "L", *, derivative_eps: float | None = None,
                  check_gauge: bool = True, check_finite: bool = True) -> EighResult: ...
        def eigvalsh(self, UPLO: str = "L", check_finite: bool = True) -> Tensor: ...
        def svd(self, full_matrices: bool = False, *, max_rank: int | None = None,
                rtol: float | None = None, atol: float | None = None,
                derivative_eps: float | None = None, check_gauge: bool = True,
                check_finite: bool = True) -> SVDResult: ...
        def svdvals(self, check_finite: bool = True) -> Tensor: ...
        # (q, r), or r alone for mode="r"
        def qr(self, mode: str = "reduced", *,
               check_finite: bool = True) -> QRResult | Tensor: ...


_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_DEFAULT_REPR_DTYPES = frozenset((np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool)))


def _check_device(device: str | None) -> None:
    if device is not None and device != "cpu":
        raise ShapeError(f"tenferro tensors live on the CPU: device must be None or 'cpu', "
                         f"got {device!r}")


def _find_tracked(obj: Any) -> Tensor | None:
    """The first tensor in ``obj`` (nested lists/tuples/dicts) that carries a derivative."""
    if isinstance(obj, Tensor):
        return obj if _engine.is_tracked(obj) else None
    if isinstance(obj, (list, tuple)):
        for o in obj:
            t = _find_tracked(o)
            if t is not None:
                return t
    elif isinstance(obj, dict):
        return _find_tracked(list(obj.values()))
    return None


def _ufunc_name(ufunc: Any) -> str:
    """``numpy.add``, ``scipy.special.gammaln``, ...: the name a user called the ufunc by."""
    name = ufunc.__name__
    if getattr(np, name, None) is ufunc:
        return f"numpy.{name}"
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, name, None) is ufunc:
        return f"scipy.special.{name}"
    return f"the ufunc {name}"


def _check_out(kwargs: dict[str, Any], name: str) -> None:
    out = kwargs.get("out")
    if isinstance(out, Tensor) or (isinstance(out, tuple)
                                   and any(isinstance(o, Tensor) for o in out)):
        raise TypeError(f"{name}: out= cannot be a tenferro Tensor (NumPy does not "
                        "write into tensors); use the returned value")


def _payloads(obj: Any, name: str) -> Any:
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


def _on_payloads(func: Callable[..., Any], name: str, nondiff: bool, args: Any,
                 kwargs: dict[str, Any]) -> Any:
    """Run a NumPy ufunc/function without a tenferro version on the payloads."""
    _check_out(kwargs, name)
    if nondiff:
        _engine.note_escape(name, args, list(kwargs.values()))
    else:
        t = _find_tracked((args, kwargs))
        if t is not None:
            raise UnsupportedADError(
                f"{name} has no differentiable tenferro version, and an input requires "
                f"grad, so its gradient would be lost: use the tf.* op of the same name if "
                f"there is one, or pass t.detach() to say that no gradient should flow")
    return func(*_payloads(args, name), **_payloads(kwargs, name))


def _rebuild(data: NDArray[Any], requires_grad: bool, grad: Tensor | None) -> Tensor:
    t = Tensor._wrap(data)
    if requires_grad:
        t.requires_grad = True
    t.grad = grad
    return t


def tensor(data: ArrayLike, dtype: DTypeLike | None = None,
           requires_grad: bool = False) -> Tensor:
    """A new Tensor holding a copy of ``data``.

    The dtype is inferred like NumPy (Python ints give int64, floats float64, bools bool)
    unless given. Only float and complex tensors can require grad.

    Parameters
    ----------
    data : array_like
        Nested sequences, a NumPy array or a scalar (copied).
    dtype : dtype, optional
        The dtype. Default: inferred.
    requires_grad : bool, optional
        Make it a leaf to differentiate. Default False.

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    DTypeError
        If ``requires_grad`` is True and the dtype is not float or complex, or the dtype is
        not supported.

    Examples
    --------
    >>> tf.tensor([1, 2])
    tensor([1, 2])
    >>> tf.tensor([[1, 2]], dtype=tf.float32)
    tensor([[1., 2.]], dtype=float32)
    >>> x = tf.tensor([1.0, 2.0], requires_grad=True)
    >>> tf.grad([(x * x).sum()], [x])[0]
    tensor([2., 4.])
    """
    if type(data) is np.ndarray and dtype is None:
        dt = data.dtype
        if dt in _SUPPORTED_SET and (not requires_grad or dt in _dtypes.DIFFERENTIABLE):
            # the common case of Tensor.__init__, without its Python calls
            return _engine.leaf_tensor(data.copy(), bool(requires_grad))
    return Tensor(data, dtype, requires_grad)


def as_tensor(data: ArrayLike, dtype: DTypeLike | None = None) -> Tensor:
    """``data`` as a Tensor, sharing memory with an ndarray where possible.

    A Tensor stays itself when ``dtype`` is None or its own dtype; another dtype is
    ``data.astype(dtype)``, which keeps the graph (a conversion never drops a gradient).

    Parameters
    ----------
    data : array_like
        A Tensor, NumPy array, nested sequence or scalar.
    dtype : dtype, optional
        The dtype. Default: ``data``'s.

    Returns
    -------
    Tensor
        ``data`` itself, a differentiable cast of it, or a tensor viewing the array.

    Raises
    ------
    DTypeError
        If the dtype is not supported.

    Examples
    --------
    >>> a = np.zeros(2)
    >>> t = tf.as_tensor(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 0.])
    """
    if isinstance(data, Tensor):
        if dtype is None or np.dtype(dtype) == data.dtype:
            return data
        return data.astype(dtype)
    return Tensor._wrap(_to_array(data, dtype, copy=False))


def install_methods() -> None:
    """Attach the registered methods (and operators) to Tensor."""
    for name, fn in registry.METHODS.items():
        setattr(Tensor, name, fn)


_engine._bind(Tensor)
_autograd: Any = None  # tenferro.autograd, bound by tenferro/__init__.py (import cycle)
