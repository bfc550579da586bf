"""Bessel functions: the modified ones (i0, i0e, i1, i1e, k0, k1, k0e, k1e) and those of
the first and second kind of integer order (j0, j1, y0, y1)."""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike

import numpy as np
from scipy.special import _ufuncs as _u

from .._tensor import Tensor
from ._support import _ap, _mask, _unary, _where


# ---- modified Bessel functions ----------------------------------------------------------

def _over_x(x: Any, y: Any) -> Any:
    """y/x with the limit ½ of i1(x)/x (and of i1e(x)/x) at x = 0."""
    zero = _mask(x) == 0
    if not zero.any():
        return y / x
    return _where(zero, 0.5, y / _where(zero, 1, x))


def _i1_deriv(x: Any, y: Any) -> Any:
    zero = _mask(x) == 0
    d = _ap(i0, x) - _over_x(x, y)
    return _where(zero, 0.5, d) if zero.any() else d


def _i1e_deriv(x: Any, y: Any) -> Any:
    zero = _mask(x) == 0
    d = _ap(i0e, x) - _over_x(x, y) - np.sign(_mask(x)) * y
    return _where(zero, 0.5, d) if zero.any() else d


# declared for the type checker: derivative rules below use them before they are defined
i1: Callable[[ArrayLike], Tensor]
i1e: Callable[[ArrayLike], Tensor]
i0 = _unary("i0", _u.i0, lambda x, y: _ap(i1, x), doc="d/dx = i1(x)")
i0e = _unary("i0e", _u.i0e, lambda x, y: _ap(i1e, x) - np.sign(_mask(x)) * y,
             doc="d/dx = i1e(x) − sign(x)·i0e(x)")
i1 = _unary("i1", _u.i1, _i1_deriv, doc="d/dx = i0(x) − i1(x)/x (½ at 0)")
i1e = _unary("i1e", _u.i1e, _i1e_deriv,
             doc="d/dx = i0e(x) − i1e(x)/x − sign(x)·i1e(x) (½ at 0)")


# ---- Bessel functions of integer order --------------------------------------------------------

def _j1_deriv(x: Any, y: Any) -> Any:
    zero = _mask(x) == 0
    d = _ap(j0, x) - _over_x(x, y)
    return _where(zero, 0.5, d) if zero.any() else d


# declared for the type checker: derivative rules below use them before they are defined
j1: Callable[[ArrayLike], Tensor]
y1: Callable[[ArrayLike], Tensor]
k1: Callable[[ArrayLike], Tensor]
k1e: Callable[[ArrayLike], Tensor]
j0 = _unary("j0", _u.j0, lambda x, y: -_ap(j1, x), doc="d/dx = −j1(x) [10.6.3]")
j1 = _unary("j1", _u.j1, _j1_deriv, doc="d/dx = j0(x) − j1(x)/x (½ at 0) [10.6.2]")
y0 = _unary("y0", _u.y0, lambda x, y: -_ap(y1, x), doc="d/dx = −y1(x)")
y1 = _unary("y1", _u.y1, lambda x, y: _ap(y0, x) - y / x, quiet=True,
            doc="d/dx = y0(x) − y1(x)/x")
k0 = _unary("k0", _u.k0, lambda x, y: -_ap(k1, x), doc="d/dx = −k1(x) [10.29.3]")
k1 = _unary("k1", _u.k1, lambda x, y: -_ap(k0, x) - y / x, quiet=True,
            doc="d/dx = −k0(x) − k1(x)/x [10.29.2]")
k0e = _unary("k0e", _u.k0e, lambda x, y: y - _ap(k1e, x), doc="d/dx = k0e(x) − k1e(x)")
k1e = _unary("k1e", _u.k1e, lambda x, y: y - _ap(k0e, x) - y / x, quiet=True,
             doc="d/dx = k1e(x) − k0e(x) − k1e(x)/x")
