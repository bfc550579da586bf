"""tf.integrate's quadrature of sampled data with scipy.integrate's names, differentiable.

``trapezoid``, ``simpson``, ``cumulative_trapezoid`` and ``cumulative_simpson`` take the
arguments of their scipy.integrate namesakes (``y``, ``x=None``, ``dx=1.0``, ``axis=-1``;
``initial`` for the cumulative ones) and compute the same formulas, term by term, with
tenferro's ops (slices, products, sums, ``cumulative_sum``, ``take``, ``where``). There is
no derivative rule of their own: reverse, forward and second-order derivatives in ``y``,
in the sample points ``x`` and in ``dx`` (and ``initial``), whichever are tensors, come by
composition. ``y`` may be complex; ``x`` and ``dx`` are real.

Each rule is a weighted sum of the samples whose weights are rational functions of the
spacings ``h_i = x_{i+1} - x_i``:

* trapezoid: ``Σ h_i (y_i + y_{i+1}) / 2``; cumulative_trapezoid its partial sums;
* simpson (SciPy >= 1.11): composite Simpson over pairs of intervals with the
  non-uniform weights ``(h0+h1)/6 · [(2 - h1/h0) y_0 + (h0+h1)²/(h0 h1) y_1 +
  (2 - h0/h1) y_2]``; for an even number of points the last interval gets Cartwright's
  correction ``α y_{N-1} + β y_{N-2} - η y_{N-3}``. Where SciPy guards a zero spacing
  (a zero denominator gives a zero term) so does this module, with the denominator
  replaced before the division so that no NaN reaches a derivative;
* cumulative_simpson: SciPy's per-interval Simpson integrals (Cartwright 2017, eqs. 8 and
  10), the odd intervals from the sample triple on the left, the even ones (and the last)
  from the triple on the right, summed cumulatively.

Results keep y's precision (float32 in, float32 out), where SciPy sometimes promotes.
"""
from __future__ import annotations

from typing import Any, Callable

from numpy.typing import ArrayLike

import numpy as np

from .._errors import ShapeError
from .._tensor import Tensor
from .._ops import _docs
from .._ops._util import axis_index, floating, to_tensor
from .._ops.elementwise import where
from .._ops.manipulation import flip, take
from .._ops.reductions import cumulative_sum, sum as _sum
from .._ops.structure import broadcast_to, concatenate, reshape


# ---- the quadrature rules' arguments and errors, described once for all of them
# (``_docs.shared`` fills a bare name in a docstring from here)
_DOCS = {
    "axis": ("int, optional", "The axis to integrate along. Default -1."),
    "dx": ("float or array_like, optional",
           "The spacing when x is None (differentiable). Default 1.0."),
    "x": ("array_like, optional", "The sample points, real: 1-D of y's length along ``axis``, "
                                  "or broadcasting to y (differentiable). Default None: spacing "
                                  "``dx``."),
    "y": ("array_like", "The samples, real or complex, dimension >= 1 (differentiable)."),
}
_RAISES = {
    "AxisError": "If ``axis`` is out of bounds.",
    "ShapeError": "If y is 0-d, x or dx is complex, or x does not match y along ``axis``.",
}

__all__ = ["trapezoid", "simpson", "cumulative_trapezoid", "cumulative_simpson"]


# ---- arguments ------------------------------------------------------------------------------

def _y(y_in: ArrayLike, axis_in: int, name: str) -> tuple[Tensor, int]:
    y: Tensor = floating(to_tensor(y_in))
    return y, axis_index(axis_in, y._data.ndim, name, "y")


def _real(v_in: Any, what: str, name: str) -> Tensor:
    v: Tensor = floating(to_tensor(v_in))
    if v._data.dtype.kind == "c":
        raise ShapeError(f"{name}: {what} must be real, got {v._data.dtype}")
    return v


def _dx(dx: Any, y: Tensor, name: str) -> Tensor:
    """dx as a real tensor; a Python number takes y's precision (weak, as in NumPy 2)."""
    if isinstance(dx, (int, float)) and not isinstance(dx, bool):
        return Tensor._wrap(np.asarray(dx, dtype=y._data.real.dtype))
    return _real(dx, "dx", name)


def _along(nd: int, axis: int, s: slice | int) -> tuple[Any, ...]:
    return (slice(None),) * axis + (s,)


def _x(x_in: ArrayLike, y: Tensor, axis: int, name: str, broadcast: bool) -> Tensor:
    """The sample points as a tensor that lines up with y along ``axis``: a 1-D x of y's
    length is reshaped to run along ``axis``; an n-D x must have y's dimension (and, with
    ``broadcast``, broadcast to y's shape, as for trapezoid)."""
    x = _real(x_in, "x", name)
    nd, n = y._data.ndim, y._data.shape[axis]
    if x._data.ndim == 1:
        if x._data.shape[0] != n:
            raise ShapeError(f"{name}: x has {x._data.shape[0]} points and y has {n} along "
                             f"axis {axis}; give one sample point per value")
        return reshape(x, tuple(n if k == axis else 1 for k in range(nd)))
    if broadcast:
        try:
            np.broadcast_shapes(x._data.shape, y._data.shape)
        except ValueError:
            raise ShapeError(f"{name}: x of shape {x._data.shape} does not broadcast to y's "
                             f"shape {y._data.shape}") from None
        return broadcast_to(x, y._data.shape)
    if x._data.ndim != nd or x._data.shape[axis] != n:
        raise ShapeError(f"{name}: x must be 1-D of length {n} or have y's shape "
                         f"{y._data.shape}, got shape {x._data.shape}")
    try:
        return broadcast_to(x, np.broadcast_shapes(x._data.shape, y._data.shape))
    except ValueError:
        raise ShapeError(f"{name}: x of shape {x._data.shape} does not broadcast to y's "
                         f"shape {y._data.shape}") from None


def _guarded(num: Any, den: Any) -> Any:
    """``num / den`` where den != 0 and 0 elsewhere (SciPy's ``where=den != 0``), the
    denominator replaced before dividing so that the masked entries send no NaN back."""
    mask = np.asarray(den._data if isinstance(den, Tensor) else den) != 0
    if mask.all():
        return num / den
    return where(mask, num / where(mask, den, 1.0), 0.0)


def _spacing(y: Tensor, x: ArrayLike | None, dx: Any, axis: int, name: str,
             broadcast: bool) -> Any:
    """The interval widths h along ``axis`` (N-1 entries there), or the scalar dx."""
    nd = y._data.ndim
    if x is None:
        return _dx(dx, y, name)
    xs = _x(x, y, axis, name, broadcast)
    return xs[_along(nd, axis, slice(1, None))] - xs[_along(nd, axis, slice(None, -1))]


# ---- trapezoid ------------------------------------------------------------------------------

@_docs.shared(_DOCS, _RAISES)
def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float | ArrayLike = 1.0,
              axis: int = -1) -> Tensor:
    r"""Integral of ``y`` along ``axis`` by the trapezoidal rule,
    ``Σ h_i (y_i + y_{i+1}) / 2`` with ``h = diff(x)`` (x 1-D along axis, or broadcasting
    to y) or ``h = dx`` (scipy.integrate.trapezoid, jax.scipy.integrate.trapezoid).
    Differentiable in y, x and dx by composition.

    Parameters
    ----------
    y, x, dx, axis

    Returns
    -------
    Tensor
        The integral, y's shape without ``axis``.

    Raises
    ------
    ShapeError, AxisError

    Notes
    -----
    Derivative: a composition of tenferro's ops (linear in y, :math:`\partial/\partial y_i = (h_{i-1} + h_i)/2`).

    Examples
    --------
    >>> y = tf.tensor([0.0, 1.0, 4.0, 9.0], requires_grad=True)
    >>> tf.integrate.trapezoid(y)
    tensor(9.5, grad_fn=sum)
    >>> tf.grad([tf.integrate.trapezoid(y)], [y])[0]
    tensor([0.5, 1. , 1. , 0.5])
    """
    yt, ax = _y(y, axis, "trapezoid")
    nd = yt._data.ndim
    d = _spacing(yt, x, dx, ax, "trapezoid", True)
    pairs = yt[_along(nd, ax, slice(1, None))] + yt[_along(nd, ax, slice(None, -1))]
    out: Tensor = _sum(d * pairs / 2.0, axis=ax)
    return out


@_docs.shared(_DOCS, _RAISES)
def cumulative_trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float | ArrayLike = 1.0,
                         axis: int = -1, initial: float | None = None) -> Tensor:
    """Partial sums of :func:`trapezoid` along ``axis`` (N-1 values; with ``initial=0`` a
    leading 0, N values; SciPy accepts no other initial value)
    (scipy.integrate.cumulative_trapezoid).

    Parameters
    ----------
    y, x, dx, axis
    initial : {None, 0}, optional
        0 puts a leading 0 (N values); SciPy accepts no other value. Default None.

    Returns
    -------
    Tensor
        The partial integrals, N - 1 (or N) along ``axis``.

    Raises
    ------
    ShapeError
        If y is 0-d, x or dx is complex, or x does not match y along ``axis``, or
        initial is not None or 0.
    AxisError

    Notes
    -----
    Derivative: a composition of tenferro's ops (linear in y).

    Examples
    --------
    >>> tf.integrate.cumulative_trapezoid([0.0, 1.0, 4.0, 9.0], initial=0)
    tensor([0. , 0.5, 3. , 9.5])
    """
    name = "cumulative_trapezoid"
    yt, ax = _y(y, axis, name)
    nd = yt._data.ndim
    if yt._data.shape[ax] == 0:
        raise ShapeError(f"{name}: at least one point is required along axis {ax}")
    if initial is not None and (not np.isscalar(initial) or initial != 0):
        raise ShapeError(f"{name}: initial must be None or 0 (as in SciPy), got {initial!r}; "
                         "add a constant to the result instead")
    d = _spacing(yt, x, dx, ax, name, False)
    pairs = yt[_along(nd, ax, slice(1, None))] + yt[_along(nd, ax, slice(None, -1))]
    res: Tensor = cumulative_sum(d * pairs / 2.0, axis=ax, include_initial=initial is not None)
    return res


# ---- simpson --------------------------------------------------------------------------------

def _basic_simpson(y: Tensor, stop: int, h: Any, dx: Any, axis: int) -> Tensor:
    """Composite Simpson over the sample triples (0,1,2), (2,3,4), ... below ``stop``."""
    nd = y._data.ndim
    y0 = y[_along(nd, axis, slice(0, stop, 2))]
    y1 = y[_along(nd, axis, slice(1, stop + 1, 2))]
    y2 = y[_along(nd, axis, slice(2, stop + 2, 2))]
    if h is None:
        out: Tensor = _sum(y0 + 4.0 * y1 + y2, axis=axis) * (dx / 3.0)
        return out
    h0 = h[_along(nd, axis, slice(0, stop, 2))]
    h1 = h[_along(nd, axis, slice(1, stop + 1, 2))]
    hsum, hprod = h0 + h1, h0 * h1
    h0_h1 = _guarded(h0, h1)
    tmp = hsum / 6.0 * (y0 * (2.0 - _guarded(1.0, h0_h1)) + y1 * (hsum * _guarded(hsum, hprod))
                        + y2 * (2.0 - h0_h1))
    res: Tensor = _sum(tmp, axis=axis)
    return res


@_docs.shared(_DOCS, _RAISES)
def simpson(y: ArrayLike, x: ArrayLike | None = None, *, dx: float | ArrayLike = 1.0,
            axis: int = -1) -> Tensor:
    """Integral of ``y`` along ``axis`` by the composite Simpson rule, for uniform (dx) or
    non-uniform (x: 1-D of y's length along axis, or y's shape) samples; an even number of
    points gets Cartwright's correction on the last interval, two points the trapezoid
    (scipy.integrate.simpson, SciPy >= 1.11). Differentiable in y, x and dx.

    Parameters
    ----------
    y, x, dx, axis

    Returns
    -------
    Tensor
        The integral, y's shape without ``axis``.

    Raises
    ------
    ShapeError, AxisError

    Notes
    -----
    Derivative: a composition of tenferro's ops (linear in y: the Simpson weights).

    Examples
    --------
    >>> y = tf.tensor([0.0, 1.0, 4.0], requires_grad=True)
    >>> tf.integrate.simpson(y)
    tensor(2.66666667, grad_fn=...)
    >>> tf.grad([tf.integrate.simpson(y)], [y])[0]
    tensor([0.33333333, 1.33333333, 0.33333333])
    """
    name = "simpson"
    yt, ax = _y(y, axis, name)
    nd = yt._data.ndim
    n = yt._data.shape[ax]
    if x is None:
        d = _dx(dx, yt, name)
        if d._data.ndim != 0:
            raise ShapeError(f"{name}: dx must be a scalar, got shape {d._data.shape}; "
                             "pass the sample points as x for non-uniform spacing")
        h = None
    else:
        d = None
        h = _spacing(yt, x, dx, ax, name, False)
    if n % 2:
        return _basic_simpson(yt, n - 2, h, d, ax)
    last, second, third = (yt[_along(nd, ax, k)] for k in (-1, -2, -3 if n > 2 else -1))
    h0: Any
    h1: Any
    if h is None:
        h0 = h1 = d
    else:   # the last two spacings (n = 2: one, and h0 is not used)
        h0, h1 = h[_along(nd, ax, -2 if n > 2 else -1)], h[_along(nd, ax, -1)]
    if n == 2:
        two: Tensor = 0.5 * h1 * (last + second)
        return two
    result = _basic_simpson(yt, n - 3, h, d, ax)
    alpha = _guarded(2 * h1 ** 2 + 3 * h0 * h1, 6 * (h1 + h0))
    beta = _guarded(h1 ** 2 + 3.0 * h0 * h1, 6 * h0)
    eta = _guarded(h1 ** 3, 6 * h0 * (h0 + h1))
    out: Tensor = result + (alpha * last + beta * second - eta * third)
    return out


def _simpson_equal(y: Tensor, h: Tensor, axis: int) -> Tensor:
    # Cartwright (2017) eq. 10: ∫ over [x_i, x_{i+1}] from the triple i, i+1, i+2
    nd = y._data.ndim
    d = h[_along(nd, axis, slice(None, -1))]
    f1, f2, f3 = (y[_along(nd, axis, s)] for s in (slice(None, -2), slice(1, -1),
                                                    slice(2, None)))
    out: Tensor = d / 3 * (5 * f1 / 4 + 2 * f2 - f3 / 4)
    return out


def _simpson_unequal(y: Tensor, h: Tensor, axis: int) -> Tensor:
    # Cartwright (2017) eq. 8
    nd = y._data.ndim
    x21, x32 = h[_along(nd, axis, slice(None, -1))], h[_along(nd, axis, slice(1, None))]
    f1, f2, f3 = (y[_along(nd, axis, s)] for s in (slice(None, -2), slice(1, -1),
                                                    slice(2, None)))
    x31 = x21 + x32
    x21_x31 = x21 / x31
    r = x21_x31 * (x21 / x32)
    out: Tensor = x21 / 6 * ((3 - x21_x31) * f1 + (3 + r + x21_x31) * f2 - r * f3)
    return out


@_docs.shared(_DOCS, _RAISES)
def cumulative_simpson(y: ArrayLike, *, x: ArrayLike | None = None,
                       dx: float | ArrayLike = 1.0, axis: int = -1,
                       initial: ArrayLike | None = None) -> Tensor:
    """Cumulative integral of ``y`` along ``axis`` by Simpson's rule per interval
    (scipy.integrate.cumulative_simpson, SciPy >= 1.12): N-1 values, or N with
    ``initial`` (a scalar or y's shape with 1 along axis, added to every value and put
    first). Fewer than 3 points: :func:`cumulative_trapezoid`. x must be strictly
    increasing. Differentiable in y, x, dx and initial.

    Parameters
    ----------
    y, x, dx, axis
    initial : array_like, optional
        Added to every value and put first: a scalar or y's shape with 1 along ``axis``
        (differentiable). Default None.

    Returns
    -------
    Tensor
        The partial integrals, N - 1 (or N with ``initial``) along ``axis``.

    Raises
    ------
    ShapeError
        If y is 0-d, x or dx is complex, or x does not match y along ``axis``, or x is
        not strictly increasing.
    AxisError

    Notes
    -----
    Derivative: a composition of tenferro's ops (linear in y).

    Examples
    --------
    >>> tf.integrate.cumulative_simpson(tf.tensor([0.0, 1.0, 4.0, 9.0, 16.0]))
    tensor([ 0.33333333,  2.66666667,  9.        , 21.33333333])
    """
    name = "cumulative_simpson"
    yt, ax = _y(y, axis, name)
    shape = yt._data.shape
    n = shape[ax]
    edge = shape[:ax] + (1,) + shape[ax + 1:]
    if n < 3:
        res = cumulative_trapezoid(yt, x, dx=dx, axis=ax)
    else:
        integrate: Callable[[Tensor, Tensor, int], Tensor]
        if x is not None:
            xt = _real(x, "x", name)
            if not (xt._data.shape == shape or (xt._data.ndim == 1 and xt._data.shape[0] == n)):
                raise ShapeError(f"{name}: x must have y's shape {shape} or be 1-D of "
                                 f"length {n}, got shape {xt._data.shape}")
            h = _spacing(yt, xt, dx, ax, name, False)
            h = broadcast_to(h, shape[:ax] + (n - 1,) + shape[ax + 1:])
            if np.any(h._data <= 0):
                raise ShapeError(f"{name}: x must be strictly increasing")
            integrate = _simpson_unequal
        else:
            d = _dx(dx, yt, name)
            if not (d._data.ndim == 0 or d._data.shape == edge):
                raise ShapeError(f"{name}: dx must be a scalar or have y's shape with 1 "
                                 f"along axis ({edge}), got shape {d._data.shape}")
            h = broadcast_to(d, shape[:ax] + (n - 1,) + shape[ax + 1:])
            integrate = _simpson_equal
        left = integrate(yt, h, ax)                                          # N-2 values
        right = flip(integrate(flip(yt, axis=ax), flip(h, axis=ax), ax), axis=ax)
        # interval p (of N-1) from the left triple for even p, from the right one for odd p
        # and for the last: indices into concatenate([left, right])
        m = n - 2
        idx = [m + m - 1 if p == n - 2 else p if p % 2 == 0 else m + p - 1
               for p in range(n - 1)]
        sub = take(concatenate([left, right], axis=ax), np.asarray(idx), axis=ax)
        res = cumulative_sum(sub, axis=ax)
    if initial is not None:
        init = (Tensor._wrap(np.asarray(initial, dtype=res._data.dtype))
                if isinstance(initial, (int, float, complex)) and not isinstance(initial, bool)
                else floating(to_tensor(initial)))   # (a Python number is weak)
        if not (init._data.ndim == 0 or init._data.shape == edge):
            raise ShapeError(f"{name}: initial must be a scalar or have y's shape with 1 "
                             f"along axis ({edge}), got shape {init._data.shape}")
        init = broadcast_to(init, edge)
        res = concatenate([init, res + init], axis=ax)
    return res
