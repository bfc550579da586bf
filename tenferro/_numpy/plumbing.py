"""How a NumPy function gets its tenferro version (the ``_numpy_version`` decorator and
the registration bookkeeping), the shared helpers of the compositions, and the error of
a tracked tensor reaching ``np.asarray``."""
import functools
import math
import sys
import warnings
from typing import Any, Callable, NoReturn, TypeAlias, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from .._errors import UnsupportedADError
from .._ops import creation, registry, structure
from .._ops.registry import register
from .._ops._util import floating
from .._tensor import Tensor, _find_tracked, _on_payloads, _payloads, as_tensor

__all__: list[str] = []

CLAIMED: list[Any] = []     # NumPy functions whose tenferro version is defined here
ELSEWHERE: list[Any] = []   # ... that another module had registered already (theirs is kept)
INPLACE: list[Any] = []     # NumPy functions that write into their first argument
_R = np.linalg._linalg   # NumPy's result types: SVDResult(U, S, Vh), EighResult, ...

_F = TypeVar("_F", bound=Callable[..., Any])
_NpFn: TypeAlias = Callable[..., Any]          # a NumPy function or ufunc
_Axis: TypeAlias = "int | tuple[int, ...] | None"


# ---- plumbing ------------------------------------------------------------------------------

def _qualname(f: Any) -> str:
    mod = getattr(f, "__module__", None) or "numpy"
    return f"{mod}.{f.__name__}".replace("numpy._core.", "numpy.").replace(
        "numpy.linalg._linalg", "numpy.linalg")


def _taken(f: object) -> bool:
    return f in registry.UFUNCS or f in registry.FUNCTIONS or f in registry.NONDIFF


def _claim(np_fn: _NpFn, fn: Callable[..., Any]) -> None:
    """Register ``fn`` as ``np_fn``'s tenferro version unless another module did."""
    if _taken(np_fn):
        ELSEWHERE.append(np_fn)
        return
    if isinstance(np_fn, np.ufunc):
        register(fn, ufuncs=(np_fn,))
    else:
        register(fn, functions=(np_fn,))
    CLAIMED.append(np_fn)


def _tensors(r: Any) -> Any:
    """NumPy's result with every ndarray/NumPy scalar made a (constant) Tensor."""
    if isinstance(r, (np.ndarray, np.generic)):
        return as_tensor(r)
    if isinstance(r, list):
        return [_tensors(x) for x in r]
    if isinstance(r, tuple):
        vals = [_tensors(x) for x in r]
        return type(r)(*vals) if hasattr(r, "_fields") else tuple(vals)
    return r


def _numpy_version(np_fn: _NpFn, *, plain: bool = True) -> Callable[[_F], _F]:
    """Decorator: the function is ``np_fn``'s tenferro version, registered for it.

    ``plain=True``: when no input carries a derivative, NumPy's own result on the payloads
    is returned as Tensors (bit-identical to NumPy); the composition runs only when one
    does. ``plain=False`` always runs the composition (linalg: the same LAPACK path with
    and without grad; functions calling the user's code on tensors)."""
    name = _qualname(np_fn)

    def deco(fn: _F) -> _F:
        if not plain:
            _claim(np_fn, fn)
            return fn

        @functools.wraps(fn)
        def dispatch(*args: Any, **kwargs: Any) -> Any:
            if _find_tracked((args, kwargs)) is None:
                return _tensors(np_fn(*_payloads(args, name), **_payloads(kwargs, name)))
            return fn(*args, **kwargs)

        _claim(np_fn, dispatch)
        return cast(_F, dispatch)    # at import only; functools.wraps keeps fn's signature

    return deco


# ---- a tensor that requires grad reaching np.asarray -------------------------------------
#
# NumPy dispatches a call to __array_function__ only for arguments that are arrays
# themselves: a list or tuple holding tensors (np.mean([x, y]), np.array([x, y])) and the
# items of np.r_[x, y] / np.c_[x, y] are converted with np.asarray, which calls
# Tensor.__array__ and cannot return a tensor. np.stack, np.concatenate, np.vstack, np.block
# and the other functions whose dispatcher lists the sequence's items do dispatch. For a
# tensor that requires grad the conversion raises; this error names the NumPy call from
# the stack (it runs on the error path only) and the tf spelling that keeps the gradient.

def _numpy_caller(frame: Any) -> str | None:
    """The public name of the NumPy function whose Python code converted the tensor
    (walking out from ``frame`` over NumPy's frames: the outermost is the one the user
    called), 'np.r_' / 'np.c_' for the index tricks, None when no NumPy frame is there
    (np.array, np.asarray and the ufuncs are C functions called from the user's code)."""
    outer = None
    while frame is not None and \
            str(frame.f_globals.get("__name__", "")).split(".")[0] == "numpy":
        outer, frame = frame, frame.f_back
    if outer is None:
        return None
    name = outer.f_code.co_name
    if name == "__getitem__":
        self = outer.f_locals.get("self")
        for obj, spelling in ((np.c_, "np.c_"), (np.r_, "np.r_")):
            if type(self) is type(obj):
                return spelling
    module = str(outer.f_globals.get("__name__", ""))
    for sub in ("linalg", "fft"):
        if module.startswith(f"numpy.{sub}"):
            return f"np.{sub}.{name}"
    return f"np.{name}"


def conversion_error(depth: int = 2) -> UnsupportedADError:
    """The error of ``np.asarray(t)`` for a tensor ``t`` that requires grad (called from
    Tensor.__array__; ``depth``: frames from here to the code that asked for the array)."""
    caller = _numpy_caller(sys._getframe(depth))
    if caller == "np.r_":
        return UnsupportedADError(
            "np.r_[...] holds a tensor that requires grad: np.r_ converts each item with "
            "np.array, which NumPy does not dispatch to tenferro: that would drop its "
            "gradient. Use tf.concatenate([x, y]) (tf.reshape(t, (-1,)) for a tensor of "
            "another ndim, tf.asarray([...]) for numbers, tf.arange for a slice), or "
            "t.detach() to say that no gradient should flow")
    if caller == "np.c_":
        return UnsupportedADError(
            "np.c_[...] holds a tensor that requires grad: np.c_ converts each item with "
            "np.array, which NumPy does not dispatch to tenferro: that would drop its "
            "gradient. Use tf.stack([x, y], axis=-1) for 1-d tensors (np.column_stack([x, "
            "y]) dispatches to the same) or tf.concatenate([a, b], axis=-1) for 2-d ones, "
            "or t.detach() to say that no gradient should flow")
    if caller is not None:
        # the tf function of the same name, when there is one, in the whole package
        # (which imports this module: cycle, at call time)
        import tenferro
        fn: Any = tenferro
        for part in caller.split(".")[1:]:
            fn = getattr(fn, part, None)
        tf_hint = f" or tf.{caller[3:]}(tf.stack([x, y]))" if callable(fn) else ""
        return UnsupportedADError(
            f"{caller} got a tensor that requires grad inside a list or tuple: NumPy "
            f"converts such an argument with np.asarray without dispatching to tenferro, "
            f"which would drop its gradient. Make one tensor of the pieces first: "
            f"{caller}(tf.stack([x, y])){tf_hint} (or tf.concatenate; np.stack and "
            f"np.concatenate of a list dispatch too), or pass t.detach() to say that no "
            f"gradient should flow")
    return UnsupportedADError(
        "converting a tensor that requires grad to a NumPy array would drop its gradient: "
        "keep computing with tf.* ops (NumPy functions and ufuncs called on the tensor "
        "itself dispatch to them), or convert t.detach() / t.numpy() to say that no "
        "gradient should flow. A list or tuple of tensors given to np.array, np.asarray "
        "or a ufunc (np.array([x, y]), np.exp([x, y])) is converted without dispatching: "
        "use tf.stack([x, y]) (or tf.concatenate) to make one tensor of them")


def _fallback(np_fn: _NpFn, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Group 3 for an option without a composition: NumPy's result for plain values,
    UnsupportedADError naming the function when an input carries a derivative."""
    return _on_payloads(np_fn, _qualname(np_fn), False, args, kwargs)


def _numpy_check(np_fn: _NpFn, what: str, *args: Any, **kwargs: Any) -> NoReturn:
    """For arguments a composition does not handle: NumPy's own error if NumPy rejects
    them (run on the payloads), else UnsupportedADError (a tracked input is present)."""
    name = _qualname(np_fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np_fn(*_payloads(args, name), **_payloads(kwargs, name))
    _unsupported(np_fn, what)


def _unsupported(np_fn: _NpFn, what: str) -> NoReturn:
    raise UnsupportedADError(
        f"{_qualname(np_fn)} with {what} has no differentiable tenferro version, and an "
        f"input requires grad, so its gradient would be lost: pass t.detach() to say that "
        f"no gradient should flow, or write it with tf.* ops")


def _no_out(np_fn: _NpFn, out: object) -> None:
    if out is not None:
        raise TypeError(f"{_qualname(np_fn)} on tensors: out= is not supported (tensors are "
                        "not written in place); use the returned value")


def _arr(x: ArrayLike) -> Tensor:
    """``x`` as a Tensor; sequences holding tracked tensors are stacked differentiably."""
    return x if isinstance(x, Tensor) else creation.asarray(x)


def _farr(x: ArrayLike) -> Tensor:
    """``_arr(x)`` with integer/bool payloads as float64."""
    r: Tensor = floating(_arr(x))
    return r


def _codes(shape: tuple[int, ...]) -> NDArray[np.intp]:
    """The positions 0..n-1 of a tensor of ``shape``, laid out in that shape."""
    return np.arange(math.prod(shape), dtype=np.intp).reshape(shape)


def _gather(x: Tensor, codes: ArrayLike) -> Tensor:
    """The entries of ``x`` at flat positions ``codes`` (an int ndarray of any shape)."""
    return structure.ravel(x)[np.asarray(codes, dtype=np.intp)]


def _rearranged(np_fn: _NpFn, x: ArrayLike, *args: Any, **kwargs: Any) -> Tensor:
    """``np_fn(x, ...)`` for a function that only moves entries around: NumPy applied to
    the positions of ``x``, then a gather (exact semantics, a gather's derivative)."""
    x = _arr(x)
    return _gather(x, np_fn(_codes(x.shape), *args, **kwargs))


def _cast(x: Tensor, dtype: DTypeLike | None) -> Tensor:
    return x if dtype is None or x.dtype == np.dtype(dtype) \
        else structure.astype(x, np.dtype(dtype))


def _payload_of(x: Any) -> NDArray[Any]:
    """The ndarray of ``x`` (tensors, nested sequences of tensors, array-likes)."""
    return np.asarray(_payloads(x, "")) if not isinstance(x, Tensor) else x._data


def _ufunc_kwargs(ufunc: np.ufunc, kwargs: dict[str, Any]) -> None:
    """The ufunc keywords a composition does not take (``dtype=``, ``where=``, ...)."""
    extra = {k: v for k, v in kwargs.items()
             if not (k in ("casting", "order") or (k == "where" and v is True)
                     or (k in ("axes", "axis") and v is None) or (k == "subok" and v))}
    if extra:
        raise TypeError(f"numpy.{ufunc.__name__} on tensors: the keyword(s) "
                        f"{', '.join(sorted(extra))} are not supported by its differentiable "
                        "version; apply them to the result (e.g. tf.astype)")


def _atleast(x: ArrayLike, n: int) -> Tensor:
    """NumPy's atleast_{1,2,3}d of one tensor."""
    x = _arr(x)
    if x.ndim >= n:
        return x
    if n == 3 and x.ndim == 1:
        return structure.reshape(x, (1,) + x.shape + (1,))
    if n == 3 and x.ndim == 2:
        return structure.reshape(x, x.shape + (1,))
    return structure.reshape(x, (1,) * (n - x.ndim) + x.shape)
