"""NumPy's own functions called on tensors (DESIGN.md §5, "NumPy on Tensors").

Every NumPy ufunc or function called with a tensor argument reaches
``Tensor.__array_ufunc__`` / ``__array_function__``, which picks one of three answers:

1. a tenferro op registered for it (``registry.UFUNCS`` / ``FUNCTIONS``; the op modules
   register ``np.exp``, ``np.sum``, ``np.linalg.svd``, ``np.fft.fft``, ...): a Tensor,
   differentiable;
2. NumPy on the payloads, for the functions listed here and by the op modules in
   ``registry.NONDIFF``: their result does not depend differentiably on the inputs
   (shapes, predicates, comparisons, indices, counts), so NumPy's own result is returned
   exactly (an ndarray, a NumPy scalar, a bool, a tuple), also for tensors that require
   grad;
3. anything else: NumPy on the payloads when no input carries a derivative (a plain
   NumPy result for plain values), and :class:`UnsupportedADError` when one does, instead
   of a result whose gradient would silently be missing.
"""
import numpy as np

from ._ops.registry import register_nondiff

__all__ = []

# shapes, dtypes and other properties of the inputs
_INSPECTION = ("shape", "ndim", "size", "iscomplexobj", "isrealobj", "iscomplex", "isreal",
               "isscalar", "result_type", "can_cast", "min_scalar_type", "may_share_memory",
               "shares_memory", "isfortran")
# predicates and comparisons of values
_PREDICATES = ("allclose", "isclose", "array_equal", "array_equiv", "isneginf", "isposinf",
               "isnan", "isinf", "isfinite", "signbit")
# integer-valued results: indices, counts, bins
_INDICES = ("argmax", "argmin", "nanargmax", "nanargmin", "argsort", "argwhere", "nonzero",
            "flatnonzero", "count_nonzero", "searchsorted", "digitize", "lexsort",
            "argpartition", "bincount", "histogram_bin_edges", "packbits", "unpackbits")

register_nondiff(*(getattr(np, n) for n in _INSPECTION + _PREDICATES + _INDICES
                   if hasattr(np, n)))
