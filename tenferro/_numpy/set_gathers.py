"""NumPy's set functions whose values are a gather of the inputs: union1d, setdiff1d,
setxor1d."""
import numpy as np
from numpy.typing import ArrayLike

from .._ops import manipulation, structure
from .._tensor import Tensor
from .plumbing import _arr, _numpy_version, _payload_of

# union1d, setdiff1d and setxor1d keep each value an entry of an input, and a small change
# of the inputs keeps the same entries (generically), so their derivative is a gather.
# intersect1d is left without one: its values are entries equal in both inputs, and any
# change that separates them removes them — there is no derivative to give.

@_numpy_version(np.union1d)
def _union1d(ar1: ArrayLike, ar2: ArrayLike) -> Tensor:
    # np.unique of a tensor dispatches to tenferro's (a Tensor; the stubs say ndarray)
    return np.unique(  # type: ignore[return-value]
        structure.concatenate([structure.ravel(_arr(ar1)), structure.ravel(_arr(ar2))]))


@_numpy_version(np.setdiff1d)
def _setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Tensor:
    # np.unique of a tensor dispatches to tenferro's (a Tensor; the stubs say ndarray)
    u: Tensor = (structure.ravel(_arr(ar1)) if assume_unique  # type: ignore[assignment]
                 else np.unique(_arr(ar1)))
    return u[~np.isin(u._data, _payload_of(ar2))]


@_numpy_version(np.setxor1d)
def _setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Tensor:
    a, b = _arr(ar1), _arr(ar2)
    if not assume_unique:
        a, b = np.unique(a), np.unique(b)  # type: ignore[assignment]  # tensors (dispatch)
    aux = structure.concatenate([structure.ravel(a), structure.ravel(b)])
    aux = manipulation.take(aux, np.argsort(aux._data, kind="stable"))
    if aux.size == 0:
        return aux
    flag = np.concatenate(([True], aux._data[1:] != aux._data[:-1], [True]))
    return aux[flag[1:] & flag[:-1]]
