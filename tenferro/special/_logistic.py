"""The logistic family and its multivariate forms: expit, logit, log_expit, softplus,
logsumexp, softmax, log_softmax."""
from __future__ import annotations

from typing import Any, Callable, Literal, overload

from numpy.typing import ArrayLike

import numpy as np
from scipy.special import _ufuncs as _u

from .._tensor import Tensor
from .._ops._util import broadcast_shape, floating, floating_args, to_tensor
from .._ops.elementwise import (abs as _tf_abs, exp as _tf_exp, imag as _tf_imag,
                                log as _tf_log, logaddexp as _logaddexp, real as _tf_real,
                                sign as _tf_sign, where as _tf_where)
from .._ops.reductions import logsumexp as _lse, sum as _tf_sum
from ._support import _ap, _check_complex, _result_dtype, _unary


# ---- logistic ---------------------------------------------------------------------------

# declared for the type checker: expit's own rule calls it
expit: Callable[[ArrayLike], Tensor]
expit = _unary("expit", _u.expit, lambda x, y: y * _ap(expit, -x),
               doc="d/dx = expit(x)·expit(−x) (exact in both tails)")
logit = _unary("logit", _u.logit, lambda x, y: 1 / (x * (1 - x)),
               quiet=True, doc="d/dp = 1/(p(1 − p))")
log_expit = _unary("log_expit", _u.log_expit, lambda x, y: _ap(expit, -x),
                   doc="d/dx = expit(−x)")


def softplus(x: ArrayLike, **kwargs: Any) -> Tensor:
    """``scipy.special.softplus(x)`` = log(1 + eˣ) = logaddexp(0, x); d/dx = expit(x).
    (``scipy.special.softplus`` itself calls ``np.logaddexp``, which dispatches to
    tenferro on tensors.)"""
    if kwargs:
        raise TypeError("tf.special.softplus takes no ufunc keywords (out=, where=, ...)")
    t: Tensor = floating(to_tensor(x))
    _check_complex("softplus", False, t)
    return _logaddexp(np.zeros((), t._data.dtype), t)


# ---- logsumexp, softmax, log_softmax ------------------------------------------------------

def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = ...,
              b: ArrayLike | None = ..., keepdims: bool = ...,
              return_sign: Literal[False] = ...) -> Tensor: ...
@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None, b: ArrayLike | None,
              keepdims: bool, return_sign: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = ...,
              b: ArrayLike | None = ..., keepdims: bool = ..., *,
              return_sign: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = ...,
              b: ArrayLike | None = ..., keepdims: bool = ...,
              return_sign: bool = ...) -> Tensor | tuple[Tensor, Tensor]: ...
def logsumexp(a: ArrayLike, axis: int | tuple[int, ...] | None = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False
              ) -> Tensor | tuple[Tensor, Tensor]:
    """``scipy.special.logsumexp``: log Σ b·exp(a) over ``axis`` (all axes for None),
    computed stably. Without ``b`` it is tenferro's logsumexp op (gradient: the softmax
    weights); with ``b`` a composition log|Σ b·e^(a−m)| + m (m = the largest a with
    b != 0, not differentiated: a shift the result does not depend on), differentiable in
    a and b. ``return_sign=True`` returns (log|s|, sign(s)) (for complex input the sign is
    the unit phase); otherwise a negative sum gives NaN, as SciPy."""
    at: Tensor = floating(to_tensor(a))
    if b is None:
        out = _lse(at, axis=axis, keepdims=keepdims)
        if not return_sign:
            return out
        if out.dtype.kind == "c":
            return _tf_real(out), _tf_exp(1j * _tf_imag(out))
        return out, Tensor._wrap(np.where(np.isnan(out._data), np.nan,
                                          np.ones_like(out._data)))
    at, bt = floating_args(a, b)   # as SciPy: a float32 a with a float64 b sums in float64
    dt = _result_dtype(at, bt)
    at, bt = ((at if at.dtype == dt else at.astype(dt)),
              (bt if bt.dtype == dt else bt.astype(dt)))
    shape: tuple[int, ...] = broadcast_shape("logsumexp", at.shape, bt.shape)
    if at.shape != shape:
        at = at + np.zeros(shape, at._data.dtype)
    if bt.shape != shape:
        bt = bt + np.zeros(shape, bt._data.dtype)
    axes = _axes(axis, len(shape))
    bp = bt._data
    keep = bp != 0
    ap = at._data.real if at._data.dtype.kind == "c" else at._data
    with np.errstate(all="ignore"):
        m = np.max(np.where(keep, ap, -np.inf), axis=axes, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0)
    a_safe = _tf_where(keep, at, -np.inf) if not keep.all() else at
    with np.errstate(all="ignore"):
        s = _tf_sum(bt * _tf_exp(a_safe - m), axis=axes, keepdims=True)
        mag = _tf_abs(s)
        out = _tf_log(mag) + m
    if return_sign:
        if s.dtype.kind == "c":
            sgn = s / _tf_where(mag._data == 0, 1, mag)
        else:
            sgn = _tf_sign(s)
    else:
        if s.dtype.kind == "c":
            out = _tf_log(s) + m
        else:
            neg = s._data < 0
            if neg.any():
                out = _tf_where(neg, np.nan, out)
    if not keepdims:
        out = out.reshape(tuple(n for i, n in enumerate(shape) if i not in axes))
        if return_sign:
            sgn = sgn.reshape(out.shape)
    if return_sign:
        if out.dtype.kind == "c":
            out = _tf_real(out)
        return out, sgn
    return out


def _shifted(x: Tensor, axis: int | tuple[int, ...] | None) -> tuple[Tensor, tuple[int, ...]]:
    """x − max(x) over ``axis`` (the max is a constant shift, as in SciPy: NumPy's max,
    lexicographic for complex x; 0 where it is not finite)."""
    d = x._data
    axes = _axes(axis, d.ndim)
    if d.size == 0:
        return x, axes
    m = np.max(d, axis=axes, keepdims=True)
    fin = np.isfinite(m)
    if not fin.all():
        m = np.where(fin, m, 0)
    return x - m, axes


def softmax(x: ArrayLike, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``scipy.special.softmax(x, axis=None)``: exp(x − m)/Σ exp(x − m) with m = max x
    (all entries for axis None), SciPy's formula as a composition of differentiable ops:
    the Jacobian diag(p) − p pᵀ at every order."""
    t, axes = _shifted(floating(to_tensor(x)), axis)
    e = _tf_exp(t)
    return e / _tf_sum(e, axis=axes, keepdims=True)


def log_softmax(x: ArrayLike, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """``scipy.special.log_softmax(x, axis=None)``: (x − m) − log Σ exp(x − m) with
    m = max x, SciPy's formula (for complex x the same branch of the log as SciPy)."""
    t, axes = _shifted(floating(to_tensor(x)), axis)
    with np.errstate(divide="ignore"):
        return t - _tf_log(_tf_sum(_tf_exp(t), axis=axes, keepdims=True))
