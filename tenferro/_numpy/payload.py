"""NumPy functions that get no composition: those that write into their first argument
(refused for a Tensor destination), the creation functions called with ``like=tensor``,
and the payload functions (group 2 of the package docstring)."""
from typing import Any

import numpy as np

from .._ops import registry
from .._ops.registry import register, register_nondiff
from .._tensor import Tensor, _on_payloads
from .plumbing import INPLACE, _NpFn, _qualname, _taken, _tensors

# ---- functions that write into their first argument 

def _writes_into(np_fn: _NpFn, hint: str) -> None:
    name = _qualname(np_fn)

    def f(dst: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(dst, Tensor):
            raise TypeError(f"{name} writes into its first argument, and tensors are not "
                            f"written in place (their values may be saved for a backward "
                            f"pass): {hint}")
        return _on_payloads(np_fn, name, False, (dst,) + args, kwargs)

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}"
    if not _taken(np_fn):
        register(f, functions=(np_fn,))
        INPLACE.append(np_fn)


_writes_into(np.copyto, "use tf.where(mask, src, dst) and the returned tensor")
_writes_into(np.put, "use t.at[idx].set(v) on the flattened tensor (tf.ravel(t))")
_writes_into(np.place, "use t.at[mask].set(v)")
_writes_into(np.putmask, "use tf.where(mask, values, t)")
_writes_into(np.fill_diagonal, "use t.at[i, i].set(v) with i = np.arange(n)")
_writes_into(np.put_along_axis, "use t.at[...].set(v) with the index arrays")


# ---- creation functions called with like=tensor (NEP 35) 

def _like(np_fn: _NpFn) -> None:
    name = _qualname(np_fn)

    def f(*args: Any, **kwargs: Any) -> Any:
        return _tensors(_on_payloads(np_fn, name, False, args, kwargs))

    f.__name__ = f.__qualname__ = f"_{np_fn.__name__}_like"
    if not _taken(np_fn):
        register(f, functions=(np_fn,))
        LIKE.append(np_fn)


LIKE: list[Any] = []
for _name in ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
              "require", "arange", "empty", "zeros", "ones", "full", "eye", "identity", "tri",
              "fromfunction", "fromiter", "frombuffer", "fromstring", "fromfile", "loadtxt",
              "genfromtxt"):
    _like(getattr(np, _name))


# ---- payload functions (group 2 of the module docstring) 

# shapes, dtypes and other properties of the inputs
_INSPECTION = ("shape", "ndim", "size", "iscomplexobj", "isrealobj", "iscomplex", "isreal",
               "isscalar", "result_type", "can_cast", "min_scalar_type", "may_share_memory",
               "shares_memory", "isfortran", "common_type")
# predicates and comparisons of values
_PREDICATES = ("allclose", "isclose", "array_equal", "array_equiv", "isneginf", "isposinf",
               "isnan", "isinf", "isfinite", "signbit", "isin", "isnat")
# integer-valued results: indices, counts, bins
_INDICES = ("argmax", "argmin", "nanargmax", "nanargmin", "argsort", "argwhere", "nonzero",
            "flatnonzero", "count_nonzero", "searchsorted", "digitize", "lexsort",
            "argpartition", "packbits", "unpackbits", "ravel_multi_index", "unravel_index",
            "diag_indices_from", "tril_indices_from", "triu_indices_from", "ix_",
            "einsum_path")
# piecewise constant: the derivative is zero wherever it exists
_PIECEWISE_CONSTANT = ("round", "around", "rint", "floor", "ceil", "trunc", "fix",
                       "floor_divide", "spacing")
# integer arithmetic and bits, dates and times
_INTEGER = ("gcd", "lcm", "bitwise_count", "left_shift", "right_shift", "is_busday",
            "busday_count", "busday_offset", "datetime_as_string")
# text and files: writing values out is not computing with them
_OUTPUT = ("array2string", "array_repr", "array_str", "save", "savetxt", "savez",
           "savez_compressed")

PAYLOAD = [getattr(np, n) for n in _INSPECTION + _PREDICATES + _INDICES + _PIECEWISE_CONSTANT
           + _INTEGER + _OUTPUT if hasattr(np, n)] + [np.linalg.matrix_rank]
register_nondiff(*(f for f in PAYLOAD if f not in registry.UFUNCS
                   and f not in registry.FUNCTIONS))
