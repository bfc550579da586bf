"""Reductions over axes: sum, mean, var, std, prod, max/min (amax/amin), logsumexp.

Each takes ``axis`` (None = all axes, an int or a tuple; ``()`` reduces nothing) and
``keepdims`` like NumPy, and is a ``tf.<name>`` function, a Tensor method and the override
of the NumPy function of the same name (so rules elsewhere may call ``np.mean(t)``...).
A VJP re-inserts the reduced axes (:func:`expand`) and broadcasts back to the input shape;
a JVP reduces the tangent the same way the primal reduces the input.

Deliberate differences from NumPy (each raises before anything is recorded):

* ``var``/``std`` with ``ddof >= N`` (N = number of reduced elements, including N = 0)
  raise ShapeError, where NumPy warns and returns inf/nan.
* ``max``/``min`` of complex tensors raise DTypeError (complex numbers are not ordered;
  NumPy's lexicographic order has no derivative). Over a zero-length axis they raise
  ShapeError where NumPy raises ValueError (ShapeError is a ValueError).

``prod`` never divides: its derivative is a product of exclusive cumulative products
(see ``_prod_partials``), and those are themselves differentiable ops whose rules are
linear recurrences (``_linscan``), so every order is exact with zeros in the input.
"""
import numpy as np

from .._engine import apply1
from .._errors import ShapeError
from .._tensor import Tensor
from .registry import defop, register
from ._util import broadcast_to_shape, conj, require_real, to_tensor

__all__ = ["sum", "mean", "var", "std", "prod", "max", "min", "amax", "amin", "logsumexp"]


def normalize_axis(axis, ndim, name="axis"):
    """``axis`` as a sorted tuple of non-negative ints (None -> all axes)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = axis
    else:
        raise ShapeError(f"{name} must be None, an int or a tuple of ints, got {axis!r}")
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)):
            raise ShapeError(f"{name} must be None, an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < ndim:
            raise ShapeError(f"{name} {a} is out of bounds for a tensor of dimension {ndim}")
        out.append(int(a) % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"repeated axis in {name}={axis!r}")
    return tuple(sorted(out))


def _keep(y, axes, keepdims, shape):
    """A reduced value with its reduced axes back as length-1 axes (keepdims form)."""
    if keepdims or not axes or y.ndim == 0:   # a 0-d value broadcasts as it is
        return y
    return y.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))


def expand(g, axes, keepdims, shape):
    """A reduced cotangent broadcast back to the input ``shape``."""
    return broadcast_to_shape(_keep(g, axes, keepdims, shape), shape)


def _count(shape, axes):
    """Number of elements reduced into each output entry."""
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _raw(v):
    """The ndarray under a rule value: for masks and weights, which are not differentiated."""
    return v._data if isinstance(v, Tensor) else v


def _sl(axis, s):
    """Index applying slice ``s`` along ``axis`` (leading axes whole)."""
    return (slice(None),) * axis + (s,)


# ---- sum --------------------------------------------------------------------------------

# ctx is (axes, keepdims), or None for the common full reduction (sum of every entry).

def _sum_vjp(ctx, needs, gs, xs, ys):
    if ctx is None:
        return (broadcast_to_shape(gs[0], xs[0].shape),)
    axes, keepdims = ctx
    return (expand(gs[0], axes, keepdims, xs[0].shape),)


def _sum_jvp(ctx, ts, xs, ys):
    if ctx is None:
        return (ts[0].sum(),)
    axes, keepdims = ctx
    return (ts[0].sum(axis=axes, keepdims=keepdims),)


_sum_op = defop("sum", _sum_vjp, _sum_jvp)


def sum(x, axis=None, keepdims=False):
    """Sum over ``axis`` (all axes by default)."""
    x = to_tensor(x)
    d = x._data
    if axis is None and not keepdims:        # the common case, kept lean
        return apply1(_sum_op, (x,), d.sum(), ctx=None)
    axes = normalize_axis(axis, d.ndim)
    return apply1(_sum_op, (x,), d.sum(axis=axes, keepdims=keepdims), ctx=(axes, keepdims))


# ---- mean -------------------------------------------------------------------------------
# x̄ = ȳ/N broadcast; ẏ = mean(ẋ). An empty reduction (N = 0) gives NaN like NumPy.

def _inv(n):
    return 1.0 / n if n else np.nan


def _mean_vjp(ctx, needs, gs, xs, ys):
    axes, keepdims, n = ctx
    return (expand(gs[0] * _inv(n), axes, keepdims, xs[0].shape),)


def _mean_jvp(ctx, ts, xs, ys):
    axes, keepdims, n = ctx
    return (ts[0].sum(axis=axes, keepdims=keepdims) * _inv(n),)


_mean_op = defop("mean", _mean_vjp, _mean_jvp)


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean over ``axis`` (all axes by default); NaN over zero elements."""
    x = to_tensor(x)
    axes = normalize_axis(axis, x.ndim)
    d = x._data
    n = _count(d.shape, axes)
    # sum / N is what numpy.mean computes for float dtypes, without its Python overhead
    out = d.sum(axis=axes, keepdims=keepdims)
    if n:
        out = out / n
    else:
        out = np.full_like(out, np.nan)  # numpy warns "Mean of empty slice" and gives NaN
    return apply1(_mean_op, (x,), np.asarray(out), ctx=(axes, keepdims, n))


# ---- var / std --------------------------------------------------------------------------
# RULES.md: c = x − mean(x), var = Σ|c|²/(N−d) (real, also for complex x).
#   var: x̄ = ȳ·2c/(N−d);  ẏ = 2·Re Σ conj(c)·ẋ/(N−d)
#   std: x̄ = ȳ·c/((N−d)·y); ẏ = Re Σ conj(c)·ẋ/((N−d)·y); both 0 where y = 0.
# The mean's own derivative drops out because Σ conj(c) = 0 for every x, so these are
# the exact derivatives as functions of x (which second order needs), not only at a point.


def _centered(x, axes):
    return x - x.mean(axis=axes, keepdims=True)


def _re_inner(c, t, axes, keepdims):
    """Re Σ conj(c)·t over ``axes``."""
    s = (conj(c) * t).sum(axis=axes, keepdims=keepdims)
    return s.real if s.dtype.kind == "c" else s


def _dof(name, shape, axes, ddof):
    n = _count(shape, axes)
    dof = n - ddof
    if dof <= 0:
        raise ShapeError(
            f"{name} with ddof={ddof} over {n} element(s) per output entry divides by "
            f"N - ddof = {dof}; pass ddof < {n} or reduce over more elements "
            "(numpy would return inf/nan here)")
    return dof


def _var_np(d, axes, keepdims, dof):
    """numpy.var's algorithm (two passes: mean, then Σ|c|²) without its Python overhead."""
    c = d - d.sum(axis=axes, keepdims=True) / _count(d.shape, axes)
    if c.dtype.kind == "c":
        re, im = c.real, c.imag
        sq = np.multiply(re, re)
        sq += im * im
    else:
        sq = np.multiply(c, c, out=c) if isinstance(c, np.ndarray) else c * c
    out = sq.sum(axis=axes, keepdims=keepdims)
    out /= dof
    return out


def _var_vjp(ctx, needs, gs, xs, ys):
    axes, keepdims, dof = ctx
    x = xs[0]
    return (expand(gs[0] * (2.0 / dof), axes, keepdims, x.shape) * _centered(x, axes),)


def _var_jvp(ctx, ts, xs, ys):
    axes, keepdims, dof = ctx
    return (_re_inner(_centered(xs[0], axes), ts[0], axes, keepdims) * (2.0 / dof),)


_var_op = defop("var", _var_vjp, _var_jvp)


def var(x, axis=None, ddof=0, keepdims=False):
    """Variance Σ|x − mean|²/(N − ddof) over ``axis``; real also for complex ``x``.

    Raises ShapeError when ``ddof >= N`` (NumPy returns inf/nan there).
    """
    x = to_tensor(x)
    axes = normalize_axis(axis, x.ndim)
    d = x._data
    dof = _dof("var", d.shape, axes, ddof)
    out = _var_np(d, axes, keepdims, dof)
    return apply1(_var_op, (x,), np.asarray(out), ctx=(axes, keepdims, dof))


def _std_scale(g, y, dof):
    """g/((N−d)·y), and 0 where y = 0: std is not differentiable at constant input and
    the zero subgradient keeps the rule, and its own derivative, free of NaN."""
    zero = _raw(y) == 0
    if zero.any():
        return np.where(zero, 0, g / (dof * np.where(zero, 1, y)))
    return g / (dof * y)


def _std_vjp(ctx, needs, gs, xs, ys):
    axes, keepdims, dof = ctx
    x = xs[0]
    scale = _std_scale(gs[0], ys[0], dof)
    return (expand(scale, axes, keepdims, x.shape) * _centered(x, axes),)


def _std_jvp(ctx, ts, xs, ys):
    axes, keepdims, dof = ctx
    s = _re_inner(_centered(xs[0], axes), ts[0], axes, keepdims)
    return (_std_scale(s, ys[0], dof),)


_std_op = defop("std", _std_vjp, _std_jvp)


def std(x, axis=None, ddof=0, keepdims=False):
    """Standard deviation sqrt(var(x, axis, ddof)); real also for complex ``x``.

    The gradient at a constant slice (std = 0) is 0, not NaN. Raises ShapeError when
    ``ddof >= N``.
    """
    x = to_tensor(x)
    axes = normalize_axis(axis, x.ndim)
    d = x._data
    dof = _dof("std", d.shape, axes, ddof)
    out = np.sqrt(_var_np(d, axes, keepdims, dof))
    return apply1(_std_op, (x,), np.asarray(out), ctx=(axes, keepdims, dof))


# ---- exclusive cumulative products and linear recurrences (the machinery of prod) -------
# prod's derivative ∂y/∂x_i = Π_{j≠i} x_j = E_i·F_i, with E_i = Π_{j<i} x_j and
# F_i = Π_{j>i} x_j the exclusive cumulative products from the left and the right: no
# division, so one zero, two zeros, ... are exact. E (``_excl``) is a differentiable op
# with a fast np.cumprod primal. Its rules are linear recurrences h_i = a_i·h_{i−1} + b_i
# (``_linscan``), and the rules of a linear recurrence are again linear recurrences and
# shifts (``_shift``), so the tower closes and every order is division-free.
# In a plain backward only np.cumprod runs; the recurrences appear from second order on.


def _shift_np(x, axis, reverse):
    """y_i = x_{i−1} (y_0 = 0); with ``reverse``, y_i = x_{i+1} (y_{n−1} = 0)."""
    out = np.zeros_like(x)
    n = x.shape[axis]
    if n > 1:
        if reverse:
            out[_sl(axis, slice(0, n - 1))] = x[_sl(axis, slice(1, n))]
        else:
            out[_sl(axis, slice(1, n))] = x[_sl(axis, slice(0, n - 1))]
    return out


_shift_op = defop(
    "shift",
    # the transpose of a shift is the shift the other way
    lambda ctx, needs, gs, xs, ys: (_shift(gs[0], ctx[0], not ctx[1]),),
    lambda ctx, ts, xs, ys: (_shift(ts[0], *ctx),))


def _shift(x, axis, reverse):
    if isinstance(x, Tensor):
        return apply1(_shift_op, (x,), _shift_np(x._data, axis, reverse), ctx=(axis, reverse))
    return _shift_np(x, axis, reverse)


def _linscan_np(a, b, axis, reverse):
    """h_i = a_i·h_{i−1} + b_i with h_{−1} = 0 (``reverse``: h_i = a_i·h_{i+1} + b_i).

    Hillis–Steele scan over the pairs (a, b) composed as affine maps: log2(n) vectorised
    steps, O(n log n) work, no division.
    """
    dt = np.result_type(a, b)
    if reverse:
        a, b = np.flip(a, axis), np.flip(b, axis)
    A = np.array(a, dtype=dt)
    B = np.array(b, dtype=dt)
    n = B.shape[axis]
    s = 1
    while s < n:
        hi, lo = _sl(axis, slice(s, None)), _sl(axis, slice(0, n - s))
        # (A_i, B_i) <- (A_i·A_{i−s}, A_i·B_{i−s} + B_i), right-hand sides built first
        B[hi] = A[hi] * B[lo] + B[hi]
        if 2 * s < n:
            A[hi] = A[hi] * A[lo]
        s *= 2
    return np.ascontiguousarray(np.flip(B, axis)) if reverse else B


def _linscan_vjp(ctx, needs, gs, xs, ys):
    axis, reverse = ctx
    a, h = xs[0], ys[0]
    # adjoint recurrence, run the other way: λ_i = h̄_i + conj(a_{i+1})·λ_{i+1} (forward
    # case); b̄ = λ, ā_i = λ_i·conj(h_{i−1}).
    lam = _linscan(_shift(conj(a), axis, not reverse), gs[0], axis, not reverse)
    ga = lam * conj(_shift(h, axis, reverse)) if needs[0] else None
    return ga, (lam if needs[1] else None)


def _linscan_jvp(ctx, ts, xs, ys):
    axis, reverse = ctx
    ta, tb = ts
    # ḣ_i = a_i·ḣ_{i−1} + (ȧ_i·h_{i−1} + ḃ_i)
    src = tb
    if ta is not None:
        src = ta * _shift(ys[0], axis, reverse)
        if tb is not None:
            src = src + tb
    return (_linscan(xs[0], src, axis, reverse),)


_linscan_op = defop("linscan", _linscan_vjp, _linscan_jvp)


def _linscan(a, b, axis, reverse):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        a, b = to_tensor(a), to_tensor(b)
        return apply1(_linscan_op, (a, b), _linscan_np(a._data, b._data, axis, reverse),
                      ctx=(axis, reverse))
    return _linscan_np(a, b, axis, reverse)


def _excl_np(x, axis, reverse):
    """E_i = Π_{j<i} x_j (``reverse``: Π_{j>i} x_j) along ``axis``; 1 at the boundary."""
    out = np.empty(x.shape, dtype=x.dtype)
    n = x.shape[axis]
    if n == 0:
        return out
    if reverse:
        out[_sl(axis, slice(n - 1, n))] = 1
        np.cumprod(np.flip(x[_sl(axis, slice(1, n))], axis), axis=axis,
                   out=np.flip(out[_sl(axis, slice(0, n - 1))], axis))
    else:
        out[_sl(axis, slice(0, 1))] = 1
        np.cumprod(x[_sl(axis, slice(0, n - 1))], axis=axis, out=out[_sl(axis, slice(1, n))])
    return out


def _excl_vjp(ctx, needs, gs, xs, ys):
    axis, reverse = ctx
    # x̄_k = Σ_{i>k} Ē_i·conj(Π_{j<i, j≠k} x_j) = conj(E_k)·μ_k, where
    # μ_k = Ē_{k+1} + conj(x_{k+1})·μ_{k+1} is a recurrence run the other way.
    back = not reverse
    mu = _linscan(_shift(conj(xs[0]), axis, back), _shift(gs[0], axis, back), axis, back)
    return (conj(ys[0]) * mu,)


def _excl_jvp(ctx, ts, xs, ys):
    axis, reverse = ctx
    # E_i = x_{i−1}·E_{i−1}  =>  Ė_i = x_{i−1}·Ė_{i−1} + ẋ_{i−1}·E_{i−1}
    return (_linscan(_shift(xs[0], axis, reverse), _shift(ts[0] * ys[0], axis, reverse),
                     axis, reverse),)


_excl_op = defop("exclusive_cumprod", _excl_vjp, _excl_jvp)


def _excl(x, axis, reverse):
    if isinstance(x, Tensor):
        return apply1(_excl_op, (x,), _excl_np(x._data, axis, reverse), ctx=(axis, reverse))
    return _excl_np(x, axis, reverse)


# ---- prod -------------------------------------------------------------------------------

def _merge_axes(shape, axes):
    """Merge each run of adjacent reduced axes into one axis (a reshape, no transpose)."""
    new_shape, new_axes = [], []
    for i, n in enumerate(shape):
        if i in axes and i - 1 in axes:
            new_shape[-1] *= n
        else:
            if i in axes:
                new_axes.append(len(new_shape))
            new_shape.append(n)
    return tuple(new_shape), tuple(new_axes)


def _prod_partials(x, axes):
    """∂y/∂x for y = prod(x, axes), on ``x`` reshaped so that reduced runs are one axis.

    Over several separate axes the product is taken one axis at a time,
    y = P_k(…P_1(x)), so by the chain rule ∂y/∂x = Π_m loo_m(p_{m−1}) (broadcast), where
    p_m = P_m(p_{m−1}) (keepdims) and loo(p)_i = Π_{j≠i} p_j = E_i·F_i along that axis.
    Returns (partials, merged shape, merged axes).
    """
    shape2, axes2 = _merge_axes(x.shape, axes)
    p = x.reshape(shape2) if shape2 != x.shape else x
    d = None
    for k, a in enumerate(axes2):
        loo = _excl(p, a, False) * _excl(p, a, True)
        d = loo if d is None else d * loo
        if k + 1 < len(axes2):
            p = p.prod(axis=a, keepdims=True)
    return d, shape2, axes2


def _prod_vjp(ctx, needs, gs, xs, ys):
    axes, keepdims = ctx
    x = xs[0]
    if not axes:
        return (gs[0],)
    # complex: x̄ = ȳ·conj(∂y/∂x)
    d, shape2, axes2 = _prod_partials(x, axes)
    g = gs[0].reshape(tuple(1 if i in axes2 else n for i, n in enumerate(shape2)))
    return ((g * conj(d)).reshape(x.shape),)


def _prod_jvp(ctx, ts, xs, ys):
    axes, keepdims = ctx
    if not axes:
        return (ts[0],)
    d, shape2, axes2 = _prod_partials(xs[0], axes)
    return ((ts[0].reshape(shape2) * d).sum(axis=axes2).reshape(ys[0].shape),)


_prod_op = defop("prod", _prod_vjp, _prod_jvp)


def prod(x, axis=None, keepdims=False):
    """Product over ``axis`` (all axes by default); 1 over zero elements.

    The derivative uses exclusive cumulative products (no division), so it is exact when
    entries are zero, at every order.
    """
    x = to_tensor(x)
    axes = normalize_axis(axis, x.ndim)
    d = x._data
    return apply1(_prod_op, (x,), np.asarray(d.prod(axis=axes, keepdims=keepdims)),
                  ctx=(axes, keepdims))


# ---- max / min --------------------------------------------------------------------------
# Ties split the cotangent evenly (PyTorch's amax convention): with w = [x = y]/#ties,
# x̄ = ȳ·w and ẏ = Σ w·ẋ (the mean of the tied tangents). w is piecewise constant, so it is
# computed on the raw arrays and the rules are linear in ȳ/ẋ: second order is exact.


def _tie_weights(x, y, axes, keepdims):
    xd = _raw(x)
    yd = _keep(_raw(y), axes, keepdims, xd.shape)
    mask = xd == yd
    if np.isnan(yd).any():
        mask |= np.isnan(xd)  # a NaN extremum propagates, so NaN entries take the cotangent
    w = mask.astype(xd.dtype)
    w /= w.sum(axis=axes, keepdims=True)
    return w


def _extremum(name, method):
    def vjp(ctx, needs, gs, xs, ys):
        axes, keepdims = ctx
        x = xs[0]
        return (expand(gs[0], axes, keepdims, x.shape) * _tie_weights(x, ys[0], axes, keepdims),)

    def jvp(ctx, ts, xs, ys):
        axes, keepdims = ctx
        w = _tie_weights(xs[0], ys[0], axes, keepdims)
        return ((ts[0] * w).sum(axis=axes, keepdims=keepdims),)

    op = defop(name, vjp, jvp, complex=False)
    word = "maximum" if name == "max" else "minimum"

    def f(x, axis=None, keepdims=False):
        x = to_tensor(x)
        require_real(name, x)
        axes = normalize_axis(axis, x.ndim)
        d = x._data
        try:
            out = method(d, axis=axes, keepdims=keepdims)
        except ValueError:
            raise ShapeError(
                f"{name} over a zero-length axis of a tensor of shape {d.shape} (axis="
                f"{axis!r}): an empty reduction has no {word}; reduce over non-empty "
                "axes only") from None
        return apply1(op, (x,), np.asarray(out), ctx=(axes, keepdims))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"The {word} over ``axis`` (all axes by default); real tensors only.\n\n"
                 f"    Ties share the cotangent evenly. Alias ``a{name}``.")
    return f


max = _extremum("max", np.ndarray.max)
min = _extremum("min", np.ndarray.min)
amax, amin = max, min


# ---- logsumexp --------------------------------------------------------------------------
# y = m + log Σ exp(x − m) with m = max (of Re x for complex x), for stability.
# With p = exp(x − y) (the softmax): x̄ = ȳ·conj(p), ẏ = Σ p·ẋ. This holds for complex x
# too (log Σ exp is holomorphic; exp(y) = Σ exp(x) on every branch of the log).


def _softmax(x, y, axes, keepdims):
    yk = _keep(y, axes, keepdims, x.shape)
    yr = _raw(yk)
    yr = yr.real if yr.dtype.kind == "c" else yr
    low = np.isneginf(yr)
    if low.any():
        # y = −inf only when every exp(x) is 0: the weights are 0, not (−inf) − (−inf)
        yk = np.where(low, 0, yk)
    return np.exp(x - yk)


def _lse_vjp(ctx, needs, gs, xs, ys):
    axes, keepdims = ctx
    x = xs[0]
    return (expand(gs[0], axes, keepdims, x.shape) * conj(_softmax(x, ys[0], axes, keepdims)),)


def _lse_jvp(ctx, ts, xs, ys):
    axes, keepdims = ctx
    p = _softmax(xs[0], ys[0], axes, keepdims)
    return ((p * ts[0]).sum(axis=axes, keepdims=keepdims),)


_lse_op = defop("logsumexp", _lse_vjp, _lse_jvp)


def logsumexp(x, axis=None, keepdims=False):
    """log Σ exp(x) over ``axis``, computed stably (like ``scipy.special.logsumexp``).

    Complex input is supported (principal branch of the log). Over zero elements the
    result is -inf.
    """
    x = to_tensor(x)
    axes = normalize_axis(axis, x.ndim)
    d = x._data
    re = d.real if d.dtype.kind == "c" else d
    if d.size:
        m = re.max(axis=axes, keepdims=True)
        finite = np.isfinite(m)
        if not finite.all():
            # all −inf (or an inf/nan): shift by 0, so the result is −inf/inf/nan itself
            m = np.where(finite, m, 0)
    else:
        m = np.zeros(tuple(1 if i in axes else n for i, n in enumerate(d.shape)), re.dtype)
    s = np.exp(d - m).sum(axis=axes, keepdims=True)
    if s.size and s.all():
        out = np.log(s) + m
    else:
        with np.errstate(divide="ignore"):  # log 0 = −inf is the answer, not an accident
            out = np.log(s) + m
    if not keepdims and axes:
        out = out.reshape(tuple(n for i, n in enumerate(d.shape) if i not in axes))
    return apply1(_lse_op, (x,), np.asarray(out), ctx=(axes, keepdims))


register(sum, methods=("sum",), functions=(np.sum,))
register(mean, methods=("mean",), functions=(np.mean,))
register(var, methods=("var",), functions=(np.var,))
register(std, methods=("std",), functions=(np.std,))
register(prod, methods=("prod",), functions=(np.prod,))
register(max, methods=("max", "amax"), functions=(np.max, np.amax))
register(min, methods=("min", "amin"), functions=(np.min, np.amin))
register(logsumexp, methods=("logsumexp",))
