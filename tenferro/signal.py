"""tf.signal: convolution, correlation and IIR filtering with scipy.signal's names,
differentiable (reverse, forward, second order; real and complex).

One op, ``signal.conv``, is the full n-D convolution ``z = a ⋆ b`` along ``axes`` (all
axes, or the ones given to fftconvolve/oaconvolve, the others broadcasting like NumPy):
``z[k] = Σ_i a[i] b[k - i]``. Every mode is a crop of it (``full``: all of it; ``same``:
a's size, centered as SciPy centers it; ``valid``: the ``|n_a - n_b| + 1`` points where
the inputs overlap fully), taken by tenferro's indexing, and correlation is the
convolution with the flipped conjugate: ``correlate(a, b) = convolve(a, flip(conj(b)))``.

The convolution is bilinear. With ``∂z_k/∂a_i = b[k-i]``, the cotangent of a is the
correlation of the (full, zero-padded where the mode cropped) cotangent with b,

    ā[i] = Σ_k z̄[k] conj(b[k - i]) = (z̄ ⋆ flip(conj(b)))[i + n_b - 1],

i.e. a crop of the same op, and symmetrically ``b̄ = crop(z̄ ⋆ flip(conj(a)))``; broadcast
axes are summed back. The JVP is ``ȧ ⋆ b + a ⋆ ḃ``. The rules call the op itself, so
every order is differentiable. ``method`` (direct, fft, auto; oaconvolve's overlap-add)
picks the primal's algorithm only: the values agree to rounding.

``lfilter(b, a, x)`` (op ``signal.lfilter``) runs ``a_0 y[n] = Σ_k b_k x[n-k] -
Σ_{k≥1} a_k y[n-k]`` along ``axis``. It is linear in x (y = H x with H causal), and
differentiating ``A y = B x`` (A, B the convolutions with a and b) gives

* JVP: ``ẏ = lfilter(b, a, ẋ) + lfilter(ḃ, a, x) - lfilter(ȧ, a, y)``;
* VJP: with ``v = Aᴴ⁻¹ ȳ = flip(lfilter([1], conj(a), flip(ȳ)))`` (the adjoint of a causal
  filter is the filter run backwards in time), ``x̄ = flip(lfilter(conj(b), conj(a),
  flip(ȳ)))``, ``b̄_k = Σ_n v[n] conj(x[n-k])`` and ``ā_k = -Σ_n v[n] conj(y[n-k])``
  (lagged correlations, summed over the other axes; computed with the conv op).

Both rules are written with lfilter and conv themselves, so they differentiate again.
"""
from __future__ import annotations

from typing import Any, Sequence, TypeAlias, TypeVar

from numpy.typing import ArrayLike, NDArray

import operator

import numpy as np
import scipy.signal as _ss

from ._engine import apply1
from ._errors import ShapeError, UnsupportedADError
from ._tensor import Tensor
from ._ops._util import conj, floating, to_tensor, unbroadcast
from ._ops.manipulation import flip
from ._ops.reductions import sum as _sum
from ._ops.registry import defop

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "lfilter"]

# (axes, method) of a full convolution
_Conv: TypeAlias = "tuple[tuple[int, ...], str]"
_V = TypeVar("_V", Tensor, NDArray[Any])
_MODES = ("full", "same", "valid")


# ---- the conv op ------------------------------------------------------------------------------

def _conv_np(a: NDArray[Any], b: NDArray[Any], ctx: _Conv) -> NDArray[Any]:
    axes, method = ctx
    dt = np.result_type(a.dtype, b.dtype)
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    if method == "oa":
        out: NDArray[Any] = _ss.oaconvolve(a, b, "full", axes=axes)
    elif method == "fft" or len(axes) < a.ndim:
        out = _ss.fftconvolve(a, b, "full", axes=axes)
    else:
        out = _ss.convolve(a, b, "full", method=method)
    return out.astype(dt, copy=False)


def _conv(a: _V, b: _V, ctx: _Conv) -> _V:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        ta, tb = to_tensor(a), to_tensor(b)
        t: Tensor = apply1(_conv_op, (ta, tb), _conv_np(ta._data, tb._data, ctx), ctx)
        return t
    return _conv_np(a, b, ctx)


def _crop(z: Any, axes: Sequence[int], starts: Sequence[int], lengths: Sequence[int]) -> Any:
    key = [slice(None)] * z.ndim
    for ax, s, n in zip(axes, starts, lengths):
        key[ax] = slice(s, s + n)
    return z[tuple(key)]


def _adjoint(g: Any, other: Any, mine: Any, ctx: _Conv) -> Any:
    """The cotangent of one factor: crop(g ⋆ flip(conj(other))) summed to its shape."""
    axes = ctx[0]
    corr = _conv(g, _flip(conj(other), axes), ctx)
    part = _crop(corr, axes, [other.shape[ax] - 1 for ax in axes],
                 [mine.shape[ax] for ax in axes])
    return unbroadcast(part, mine.shape)


def _flip(x: Any, axes: tuple[int, ...]) -> Any:
    return flip(x, axis=axes) if isinstance(x, Tensor) else np.flip(x, axes)


def _conv_vjp(ctx: _Conv, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
              ys: Sequence[Any]) -> tuple[Any, Any]:
    g = gs[0]
    a, b = xs
    return (_adjoint(g, b, a, ctx) if needs[0] else None,
            _adjoint(g, a, b, ctx) if needs[1] else None)


def _conv_jvp(ctx: _Conv, ts: Sequence[Any], xs: Sequence[Any],
              ys: Sequence[Any]) -> tuple[Any]:
    (ta, tb), (a, b) = ts, xs
    out = None if ta is None else _conv(ta, b, ctx)
    if tb is not None:
        d = _conv(a, tb, ctx)
        out = d if out is None else out + d
    return (out,)


_conv_op = defop("signal.conv", _conv_vjp, _conv_jvp)
_conv_op.replay = lambda ctx: lambda a, b: _conv_np(a, b, ctx)   # (tf.compile)


# ---- arguments --------------------------------------------------------------------------------

def _pair(in1: ArrayLike, in2: ArrayLike, name: str) -> tuple[Tensor, Tensor]:
    a: Tensor = floating(to_tensor(in1))
    b: Tensor = floating(to_tensor(in2))
    if a._data.ndim != b._data.ndim:
        raise ShapeError(f"{name}: in1 and in2 must have the same number of dimensions, got "
                         f"{a._data.ndim} and {b._data.ndim}; add axes of length 1")
    if a._data.ndim == 0:
        raise ShapeError(f"{name}: the inputs are 0-d; reshape them to (1,)")
    if a._data.size == 0 or b._data.size == 0:
        raise ShapeError(f"{name}: an input is empty (shapes {a._data.shape} and "
                         f"{b._data.shape}); convolution needs at least one point per axis")
    return a, b


def _mode(mode: object, name: str) -> str:
    if not (isinstance(mode, str) and mode in _MODES):
        raise ShapeError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    return mode


def _conv_axes(a: Tensor, b: Tensor, axes_in: int | Sequence[int] | None,
               name: str) -> tuple[int, ...]:
    """fftconvolve's axes: the convolved ones; along the others the shapes broadcast."""
    nd = a._data.ndim
    if axes_in is None:
        axes = tuple(range(nd))
    else:
        seq = (axes_in,) if isinstance(axes_in, (int, np.integer)) else tuple(axes_in)
        axes_l = []
        for v in seq:
            try:
                k = operator.index(v)
            except TypeError:
                raise ShapeError(f"{name}: axes must be ints, got {axes_in!r}") from None
            if not -nd <= k < nd:
                raise ShapeError(f"{name}: axis {k} is out of bounds for inputs of dimension "
                                 f"{nd}")
            axes_l.append(k % nd)
        axes = tuple(sorted(set(axes_l)))
        if len(axes) != len(axes_l):
            raise ShapeError(f"{name}: repeated axis in axes={axes_in!r}")
    for k in range(nd):
        n1, n2 = a._data.shape[k], b._data.shape[k]
        if k not in axes and n1 != n2 and 1 not in (n1, n2):
            raise ShapeError(f"{name}: the inputs' sizes {n1} and {n2} along axis {k}, which "
                             "is not convolved, neither match nor are 1")
    return axes


def _convolve(a: Tensor, b: Tensor, mode: str, axes: tuple[int, ...], method: str,
              name: str) -> Tensor:
    na = [a._data.shape[k] for k in axes]
    nb = [b._data.shape[k] for k in axes]
    if mode == "valid" and not (all(p >= q for p, q in zip(na, nb))
                                or all(q >= p for p, q in zip(na, nb))):
        raise ShapeError(f"{name}: in valid mode one input must be at least as large as the "
                         f"other along every convolved axis, got sizes {na} and {nb}")
    ctx: _Conv = (axes, method)
    z: Tensor = apply1(_conv_op, (a, b), _conv_np(a._data, b._data, ctx), ctx)
    if mode == "full":
        return z
    if mode == "same":   # a's size, centered (SciPy's _centered)
        return _crop(z, axes, [(q - 1) // 2 for q in nb], na)   # type: ignore[no-any-return]
    return _crop(z, axes, [min(p, q) - 1 for p, q in zip(na, nb)],   # type: ignore[no-any-return]
                 [abs(p - q) + 1 for p, q in zip(na, nb)])


def _method(method: object, name: str) -> str:
    if not (isinstance(method, str) and method in ("auto", "direct", "fft")):
        raise ShapeError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")
    return method


# ---- the public functions ---------------------------------------------------------------------

def convolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
             method: str = "auto") -> Tensor:
    r"""n-D convolution of two inputs of the same dimension (scipy.signal.convolve,
    jax.scipy.signal.convolve): mode 'full', 'same' (in1's size, centered) or 'valid';
    method 'auto', 'direct' or 'fft' (the primal's algorithm). Bilinear: the VJP in each
    input is the correlation of the cotangent with the other (module docstring), the JVP
    ``ȧ ⋆ b + a ⋆ ḃ``.

    Parameters
    ----------
    in1 : array_like
        The first input, real or complex, of dimension >= 1 (differentiable).
    in2 : array_like
        The second input, of in1's dimension (differentiable).
    mode : {'full', 'same', 'valid'}, optional
        The output: the full convolution, the centred part of in1's size, or the part
        without zero padding. Default 'full'.
    method : {'auto', 'direct', 'fft'}, optional
        The primal's algorithm (the derivative is the same). Default 'auto'.

    Returns
    -------
    Tensor
        The convolution, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError
        If the inputs differ in dimension, are 0-d or empty, an argument is not one of
        its choices, or (valid mode) neither input is at least as large as the other.

    Notes
    -----
    Derivative: bilinear, :math:`\bar a = \operatorname{crop}(\bar z \star
    \operatorname{flip}(\bar b))` and symmetrically for b (docs/rules.md, convolution and
    lfilter).

    Examples
    --------
    >>> a = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> tf.signal.convolve(a, [0.0, 1.0, 0.5])
    tensor([0. , 1. , 2.5, 4. , 1.5], grad_fn=signal.conv)
    >>> tf.grad([tf.signal.convolve(a, [0.0, 1.0, 0.5]).sum()], [a])[0]
    tensor([1.5, 1.5, 1.5])
    """
    a, b = _pair(in1, in2, "convolve")
    return _convolve(a, b, _mode(mode, "convolve"), tuple(range(a._data.ndim)),
                     _method(method, "convolve"), "convolve")


def correlate(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
              method: str = "auto") -> Tensor:
    """n-D cross-correlation ``z[k] = Σ_l in1[l + k] conj(in2[l])`` (scipy.signal.correlate):
    the convolution of in1 with the flipped conjugate of in2, same modes and methods;
    derivatives through :func:`convolve`, flip and conj.

    Parameters
    ----------
    in1 : array_like
        The first input, real or complex, of dimension >= 1 (differentiable).
    in2 : array_like
        The second input, of in1's dimension (differentiable).
    mode : {'full', 'same', 'valid'}, optional
        The output: the full convolution, the centred part of in1's size, or the part
        without zero padding. Default 'full'.
    method : {'auto', 'direct', 'fft'}, optional
        The primal's algorithm. Default 'auto'.

    Returns
    -------
    Tensor
        The correlation, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError
        If the inputs differ in dimension, are 0-d or empty, an argument is not one of
        its choices, or (valid mode) neither input is at least as large as the other.

    Notes
    -----
    Derivative: bilinear, that of :func:`convolve` composed with flip and conj (linear)
    (docs/rules.md, convolution and lfilter).

    Examples
    --------
    >>> tf.signal.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    tensor([0.5, 2. , 3.5, 3. , 0. ])
    """
    a, b = _pair(in1, in2, "correlate")
    mode = _mode(mode, "correlate")
    method = _method(method, "correlate")
    axes = tuple(range(a._data.ndim))
    rb = flip(b.conj() if b._data.dtype.kind == "c" else b, axis=axes)
    na, nb = a._data.shape, b._data.shape
    if mode == "valid" and all(q >= p for p, q in zip(na, nb)) and na != nb:
        # SciPy swaps the inputs here (in2 is the larger): correlate(a, b) is then
        # flip(conj(correlate(b, a))), i.e. the valid convolution of b with flip(conj(a))
        # read backwards and conjugated
        ra = flip(a.conj() if a._data.dtype.kind == "c" else a, axis=axes)
        z = _convolve(b, ra, mode, axes, method, "correlate")
        z = flip(z, axis=axes)
        return z.conj() if z._data.dtype.kind == "c" else z
    return _convolve(a, rb, mode, axes, method, "correlate")


def fftconvolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
                axes: int | Sequence[int] | None = None) -> Tensor:
    """Convolution by FFT along ``axes`` (default all; along the others the inputs
    broadcast) (scipy.signal.fftconvolve, jax.scipy.signal.fftconvolve). Derivatives as
    for :func:`convolve`, broadcast axes summed back.

    Parameters
    ----------
    in1 : array_like
        The first input, real or complex, of dimension >= 1 (differentiable).
    in2 : array_like
        The second input, of in1's dimension (differentiable).
    mode : {'full', 'same', 'valid'}, optional
        The output: the full convolution, the centred part of in1's size, or the part
        without zero padding. Default 'full'.
    axes : int or sequence of int, optional
        The axes to convolve along (the others broadcast). Default None: all.

    Returns
    -------
    Tensor
        The convolution, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError
        If the inputs differ in dimension, are 0-d or empty, an axis is invalid, the sizes along
        a non-convolved axis do not broadcast, an argument is not one of
        its choices, or (valid mode) neither input is at least as large as the other.

    Notes
    -----
    Derivative: bilinear, as :func:`convolve`'s (docs/rules.md, convolution and lfilter).

    Examples
    --------
    >>> z = tf.signal.fftconvolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    >>> np.allclose(z, [0.0, 1.0, 2.5, 4.0, 1.5])
    True
    """
    a, b = _pair(in1, in2, "fftconvolve")
    return _convolve(a, b, _mode(mode, "fftconvolve"), _conv_axes(a, b, axes, "fftconvolve"),
                     "fft", "fftconvolve")


def oaconvolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
               axes: int | Sequence[int] | None = None) -> Tensor:
    """Convolution by the overlap-add method (scipy.signal.oaconvolve): the value of
    :func:`fftconvolve` computed blockwise, efficient when one input is much longer.

    Parameters
    ----------
    in1 : array_like
        The first input, real or complex, of dimension >= 1 (differentiable).
    in2 : array_like
        The second input, of in1's dimension (differentiable).
    mode : {'full', 'same', 'valid'}, optional
        The output: the full convolution, the centred part of in1's size, or the part
        without zero padding. Default 'full'.
    axes : int or sequence of int, optional
        The axes to convolve along (the others broadcast). Default None: all.

    Returns
    -------
    Tensor
        The convolution, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError
        If the inputs differ in dimension, are 0-d or empty, an axis is invalid, the sizes along
        a non-convolved axis do not broadcast, an argument is not one of
        its choices, or (valid mode) neither input is at least as large as the other.

    Notes
    -----
    Derivative: bilinear, as :func:`convolve`'s (docs/rules.md, convolution and lfilter).

    Examples
    --------
    >>> z = tf.signal.oaconvolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    >>> np.allclose(z, [0.0, 1.0, 2.5, 4.0, 1.5])
    True
    """
    a, b = _pair(in1, in2, "oaconvolve")
    return _convolve(a, b, _mode(mode, "oaconvolve"), _conv_axes(a, b, axes, "oaconvolve"),
                     "oa", "oaconvolve")


# ---- lfilter ----------------------------------------------------------------------------------

def _lfilter_np(b: NDArray[Any], a: NDArray[Any], x: NDArray[Any], axis: int) -> NDArray[Any]:
    dt = np.result_type(b.dtype, a.dtype, x.dtype)
    out: NDArray[Any] = _ss.lfilter(b.astype(dt, copy=False), a.astype(dt, copy=False),
                                    x.astype(dt, copy=False), axis=axis)
    return out.astype(dt, copy=False)


def _lfilter(b: Any, a: Any, x: Any, axis: int) -> Any:
    if any(isinstance(v, Tensor) for v in (b, a, x)):
        tb, ta, tx = to_tensor(b), to_tensor(a), to_tensor(x)
        t: Tensor = apply1(_lfilter_op, (tb, ta, tx),
                           _lfilter_np(tb._data, ta._data, tx._data, axis), axis)
        return t
    return _lfilter_np(b, a, x, axis)


# up to this many lags, a plain backward takes dot products rather than an FFT convolution
_DIRECT_LAGS = 32


def _lagged(v: Any, u: Any, k: int, axis: int) -> Any:
    """``c[j] = Σ_n v[n] conj(u[n - j])`` for j < k, summed over the axes other than
    ``axis``: a crop of the full convolution of v with flip(conj(u)) along ``axis``."""
    n = v.shape[axis]
    if k <= _DIRECT_LAGS and not isinstance(v, Tensor) and not isinstance(u, Tensor):
        # a plain backward with few coefficients (b, a are short): k dot products of
        # length n instead of an FFT convolution of length 2n (the Tensor path below
        # records, for derivatives of higher order)
        vm, um = np.moveaxis(v, axis, 0), np.moveaxis(u, axis, 0)
        c = np.zeros(k, dtype=np.result_type(v.dtype, u.dtype))
        for j in range(min(k, n)):
            c[j] = np.vdot(um[:n - j], vm[j:])   # Σ_n conj(u[n - j]) v[n], all other axes
        return c
    full = _conv(v, _flip(conj(u), (axis,)), ((axis,), "fft"))
    part = _crop(full, (axis,), (n - 1,), (min(k, n),))
    others = tuple(d for d in range(v.ndim) if d != axis)
    c = part.sum(axis=others) if others else part
    if k > n:   # lags beyond the signal's length: no overlap
        c = np.concatenate([c, np.zeros(k - n, dtype=c.dtype)])
    return c


def _lfilter_vjp(axis: int, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
                 ys: Sequence[Any]) -> tuple[Any, Any, Any]:
    g = gs[0]
    b, a, x = xs
    y = ys[0]
    gr = _flip(g, (axis,))
    cb, ca = conj(b), conj(a)
    db = da = dx = None
    if needs[0] or needs[1]:
        one = np.ones(1, dtype=np.result_type(a.dtype, g.dtype))
        v = _flip(_lfilter(one, ca, gr, axis), (axis,))   # v = Aᴴ⁻¹ ȳ
        if needs[0]:
            db = _lagged(v, x, b.shape[0], axis)
        if needs[1]:
            da = -_lagged(v, y, a.shape[0], axis)
    if needs[2]:
        dx = _flip(_lfilter(cb, ca, gr, axis), (axis,))
    return db, da, dx


def _lfilter_jvp(axis: int, ts: Sequence[Any], xs: Sequence[Any],
                 ys: Sequence[Any]) -> tuple[Any]:
    (tb, ta, tx), (b, a, x), y = ts, xs, ys[0]
    terms = []
    if tx is not None:
        terms.append(_lfilter(b, a, tx, axis))
    if tb is not None:
        terms.append(_lfilter(tb, a, x, axis))
    if ta is not None:
        terms.append(-_lfilter(ta, a, y, axis))
    out = None
    for t in terms:
        out = t if out is None else out + t
    return (out,)


_lfilter_op = defop("signal.lfilter", _lfilter_vjp, _lfilter_jvp)
_lfilter_op.replay = lambda axis: lambda b, a, x: _lfilter_np(b, a, x, axis)   # (tf.compile)


def lfilter(b: ArrayLike, a: ArrayLike, x: ArrayLike, axis: int = -1,
            zi: ArrayLike | None = None) -> Tensor:
    r"""IIR/FIR filter along ``axis`` (scipy.signal.lfilter): ``a_0 y[n] = Σ_k b_k x[n-k]
    - Σ_{k≥1} a_k y[n-k]``, b and a 1-D, ``a[0] != 0``. Differentiable in x, b and a
    (module docstring: the VJP runs the filter backwards in time). ``zi`` (initial
    conditions) is not supported: it raises UnsupportedADError.

    Parameters
    ----------
    b : array_like
        The numerator coefficients, 1-D, non-empty (differentiable).
    a : array_like
        The denominator coefficients, 1-D, non-empty, ``a[0] != 0`` (differentiable).
    x : array_like
        The signal, dimension >= 1 (differentiable).
    axis : int, optional
        The axis to filter along. Default -1.
    zi : None, optional
        Not supported; must be None. Default None.

    Returns
    -------
    Tensor
        The filtered signal y, x's shape.

    Raises
    ------
    UnsupportedADError
        If ``zi`` is given.
    ShapeError
        If b or a is not a non-empty 1-D array, ``a[0] == 0``, x is 0-d or empty along
        ``axis``, or ``axis`` is invalid.

    Notes
    -----
    Derivative: :math:`\dot y = \operatorname{lfilter}(b, a, \dot x) +
    \operatorname{lfilter}(\dot b, a, x) - \operatorname{lfilter}(\dot a, a, y)`; the VJP
    runs the adjoint filter backwards in time (docs/rules.md, convolution and lfilter).

    Examples
    --------
    >>> x = tf.tensor([1.0, 0.0, 0.0, 0.0], requires_grad=True)
    >>> y = tf.signal.lfilter([1.0], [1.0, -0.5], x)
    >>> y
    tensor([1.   , 0.5  , 0.25 , 0.125], grad_fn=signal.lfilter)
    >>> tf.grad([y.sum()], [x])[0]
    tensor([1.875, 1.75 , 1.5  , 1.   ])
    """
    name = "lfilter"
    if zi is not None:
        raise UnsupportedADError(f"{name}: zi (initial conditions) is not supported; filter "
                                 "from rest (zi=None), or prepend samples that set the state")
    tb: Tensor = floating(to_tensor(b))
    ta: Tensor = floating(to_tensor(a))
    tx: Tensor = floating(to_tensor(x))
    if tb._data.ndim != 1 or ta._data.ndim != 1 or tb._data.size == 0 or ta._data.size == 0:
        raise ShapeError(f"{name}: b and a must be non-empty 1-D coefficient arrays, got "
                         f"shapes {tb._data.shape} and {ta._data.shape}")
    if ta._data[0] == 0:
        raise ShapeError(f"{name}: a[0] must be nonzero (it normalizes the filter)")
    nd = tx._data.ndim
    if nd == 0:
        raise ShapeError(f"{name}: x is 0-d; reshape it to (1,)")
    try:
        ax = operator.index(axis)
    except TypeError:
        raise ShapeError(f"{name}: axis must be an int, got {axis!r}") from None
    if not -nd <= ax < nd:
        raise ShapeError(f"{name}: axis {ax} is out of bounds for x of dimension {nd}")
    ax %= nd
    if tx._data.shape[ax] == 0:
        raise ShapeError(f"{name}: x is empty along axis {ax}")
    y: Tensor = apply1(_lfilter_op, (tb, ta, tx),
                       _lfilter_np(tb._data, ta._data, tx._data, ax), ax)
    return y
