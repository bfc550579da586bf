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
from ._errors import ShapeError
from ._tensor import Tensor
from ._ops import _docs
from ._ops._util import axis_index, conj, floating, to_tensor, unbroadcast
from ._ops.manipulation import flip, take
from ._ops.structure import broadcast_to, concatenate, moveaxis
from .linalg.solve import solve as _solve
from ._ops.registry import defop


# ---- the convolutions' and lfilter's shared arguments and errors, described once
# (``_docs.shared`` fills a bare name in a docstring from here)
_DOCS = {
    "a": ("array_like", "The denominator coefficients, 1-D, non-empty, ``a[0] != 0`` "
                        "(differentiable)."),
    "axes": ("int or sequence of int, optional",
             "The axes to convolve along (the others broadcast). Default None: all."),
    "b": ("array_like", "The numerator coefficients, 1-D, non-empty (differentiable)."),
    "in1": ("array_like", "The first input, real or complex, of dimension >= 1 (differentiable)."),
    "in2": ("array_like", "The second input, of in1's dimension (differentiable)."),
    "mode": ("{'full', 'same', 'valid'}, optional",
             "The output: the full convolution, the centred part of in1's size, or the part "
             "without zero padding. Default 'full'."),
}
_RAISES = {
    "ShapeError": "If the inputs differ in dimension, are 0-d or empty, an argument is not one "
                  "of its choices, or (valid mode) neither input is at least as large as the "
                  "other.",
}
# fftconvolve and oaconvolve also check the axes
_RAISES_AXES = dict(_RAISES, ShapeError="If the inputs differ in dimension, are 0-d or empty, "
                                        "an axis is invalid, the sizes along a non-convolved "
                                        "axis do not broadcast, an argument is not one of its "
                                        "choices, or (valid mode) neither input is at least "
                                        "as large as the other.")

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "lfilter", "lfilter_zi"]

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

@_docs.shared(_DOCS, _RAISES)
def convolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
             method: str = "auto") -> Tensor:
    r"""n-D convolution of two inputs of the same dimension (scipy.signal.convolve,
    jax.scipy.signal.convolve): mode 'full', 'same' (in1's size, centered) or 'valid';
    method 'auto', 'direct' or 'fft' (the primal's algorithm). Bilinear: the VJP in each
    input is the correlation of the cotangent with the other (module docstring), the JVP
    ``ȧ ⋆ b + a ⋆ ḃ``.

    Parameters
    ----------
    in1, in2, mode
    method : {'auto', 'direct', 'fft'}, optional
        The primal's algorithm (the derivative is the same). Default 'auto'.

    Returns
    -------
    Tensor
        The convolution, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError

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


@_docs.shared(_DOCS, _RAISES)
def correlate(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
              method: str = "auto") -> Tensor:
    """n-D cross-correlation ``z[k] = Σ_l in1[l + k] conj(in2[l])`` (scipy.signal.correlate):
    the convolution of in1 with the flipped conjugate of in2, same modes and methods;
    derivatives through :func:`convolve`, flip and conj.

    Parameters
    ----------
    in1, in2, mode
    method : {'auto', 'direct', 'fft'}, optional
        The primal's algorithm. Default 'auto'.

    Returns
    -------
    Tensor
        The correlation, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError

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


@_docs.shared(_DOCS, _RAISES_AXES)
def fftconvolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
                axes: int | Sequence[int] | None = None) -> Tensor:
    """Convolution by FFT along ``axes`` (default all; along the others the inputs
    broadcast) (scipy.signal.fftconvolve, jax.scipy.signal.fftconvolve). Derivatives as
    for :func:`convolve`, broadcast axes summed back.

    Parameters
    ----------
    in1, in2, mode, axes

    Returns
    -------
    Tensor
        The convolution, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError

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


@_docs.shared(_DOCS, _RAISES_AXES)
def oaconvolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
               axes: int | Sequence[int] | None = None) -> Tensor:
    """Convolution by the overlap-add method (scipy.signal.oaconvolve): the value of
    :func:`fftconvolve` computed blockwise, efficient when one input is much longer.

    Parameters
    ----------
    in1, in2, mode, axes

    Returns
    -------
    Tensor
        The convolution, NumPy's result dtype of the inputs.

    Raises
    ------
    ShapeError

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


def _coefficients(b: ArrayLike, a: ArrayLike, name: str) -> tuple[Tensor, Tensor]:
    """A filter's b and a as floating Tensors: 1-D, non-empty, a[0] != 0 (ShapeError)."""
    tb: Tensor = floating(to_tensor(b))
    ta: Tensor = floating(to_tensor(a))
    if tb._data.ndim != 1 or ta._data.ndim != 1 or tb._data.size == 0 or ta._data.size == 0:
        raise ShapeError(f"{name}: b and a must be non-empty 1-D coefficient arrays, got "
                         f"shapes {tb._data.shape} and {ta._data.shape}")
    if ta._data[0] == 0:
        raise ShapeError(f"{name}: a[0] must be nonzero (it normalizes the filter)")
    return tb, ta


@_docs.shared(_DOCS, _RAISES)
def lfilter(b: ArrayLike, a: ArrayLike, x: ArrayLike, axis: int = -1,
            zi: ArrayLike | None = None) -> Any:
    r"""IIR/FIR filter along ``axis`` (scipy.signal.lfilter): ``a_0 y[n] = Σ_k b_k x[n-k]
    - Σ_{k≥1} a_k y[n-k]``, b and a 1-D, ``a[0] != 0``. Differentiable in x, b, a and zi
    (module docstring: the VJP runs the filter backwards in time).

    Parameters
    ----------
    b, a
    x : array_like
        The signal, dimension >= 1 (differentiable).
    axis : int, optional
        The axis to filter along. Default -1.
    zi : array_like, optional
        The initial state of the filter's delays (SciPy's transposed direct form II): x's
        shape with ``axis`` of length K = max(len(a), len(b)) - 1, the other axes may be 1
        and broadcast (differentiable; :func:`lfilter_zi` gives the steady state of a
        step). Default None: the filter starts at rest.

    Returns
    -------
    Tensor or tuple of Tensor
        The filtered signal y, x's shape; with ``zi``, ``(y, zf)``, zf the final state
        (zi's shape). With zi, y is lfilter(b, a, x) plus the filter's response to the
        state, so it equals SciPy's to rounding, not bit for bit.

    Raises
    ------
    ShapeError
        If b or a is not a non-empty 1-D array, ``a[0] == 0``, x is 0-d or empty along
        ``axis``, ``axis`` is invalid (AxisError), or zi has the wrong shape.

    Notes
    -----
    Derivative: :math:`\dot y = \operatorname{lfilter}(b, a, \dot x) +
    \operatorname{lfilter}(\dot b, a, x) - \operatorname{lfilter}(\dot a, a, y)`; the VJP
    runs the adjoint filter backwards in time; zi's part and zf are compositions of
    lfilter and a small Toeplitz product (docs/rules.md, convolution and lfilter).

    Examples
    --------
    >>> x = tf.tensor([1.0, 0.0, 0.0, 0.0], requires_grad=True)
    >>> y = tf.signal.lfilter([1.0], [1.0, -0.5], x)
    >>> y
    tensor([1.   , 0.5  , 0.25 , 0.125], grad_fn=signal.lfilter)
    >>> tf.grad([y.sum()], [x])[0]
    tensor([1.875, 1.75 , 1.5  , 1.   ])
    >>> y, zf = tf.signal.lfilter([1.0], [1.0, -0.5], x, zi=[2.0])
    >>> zf
    tensor([0.1875], grad_fn=subtract)
    """
    name = "lfilter"
    tb, ta = _coefficients(b, a, name)
    tx: Tensor = floating(to_tensor(x))
    ax = axis_index(axis, tx._data.ndim, name, "x")
    if tx._data.shape[ax] == 0:
        raise ShapeError(f"{name}: x is empty along axis {ax}")
    tz = None if zi is None else _zi_input(zi, tb, ta, tx, ax, name)
    y: Tensor = apply1(_lfilter_op, (tb, ta, tx),
                       _lfilter_np(tb._data, ta._data, tx._data, ax), ax)
    if tz is None:
        return y
    return _with_state(tb, ta, tx, y, tz, ax)


def _zi_input(zi: ArrayLike, tb: Tensor, ta: Tensor, tx: Tensor, ax: int,
              name: str) -> Tensor:
    """zi as a Tensor broadcast to x's shape with ``ax`` of length K (ShapeError else)."""
    tz: Tensor = floating(to_tensor(zi))
    k = max(ta.shape[0], tb.shape[0]) - 1
    want = tx.shape[:ax] + (k,) + tx.shape[ax + 1:]
    zs = tz.shape
    if len(zs) != len(want) or zs[ax] != k or any(
            zd not in (wd, 1) for i, (zd, wd) in enumerate(zip(zs, want)) if i != ax):
        raise ShapeError(f"{name}: zi must have shape {want} (x's shape with axis {ax} of "
                         f"length max(len(a), len(b)) - 1 = {k}; other axes may be 1), got "
                         f"{zs}")
    return tz if zs == want else broadcast_to(tz, want)


def _with_state(tb: Tensor, ta: Tensor, tx: Tensor, y0: Tensor, tz: Tensor,
                ax: int) -> tuple[Tensor, Tensor]:
    """(y, zf) of lfilter with the initial state zi = tz, from y0 = lfilter(b, a, x).

    In SciPy's transposed direct form II, z_i[n] = b'_{i+1} x[n] + z_{i+1}[n-1] -
    a'_{i+1} y[n] (b' = b/a_0, a' = a/a_0) and y[n] = b'_0 x[n] + z_0[n-1]: the state
    zi adds zi[n] to the right-hand side of the normalized recurrence at n < K, so
    y = y0 + lfilter([a_0], a, c) with c the samples zi[0..K-1] then zeros. The final
    state is, for N = len(x) along the axis,
    zf_i = Σ_{j=i+1}^{K} (b'_j x[N+i-j] - a'_j y[N+i-j]) (terms before the start dropped)
    + zi[i+N] when i + N < K: a K x K triangular Toeplitz product with the last K samples
    of x and y. Both are tenferro ops, so every order differentiates."""
    n, k = tx.shape[ax], tz.shape[ax]
    if k == 0:      # (no delays: y is y0, zf empty)
        return y0, to_tensor(np.zeros(tz.shape, np.result_type(y0.dtype, tz.dtype)))
    dt = np.result_type(tb.dtype, ta.dtype, tx.dtype, tz.dtype)
    lead = tz.shape[:ax] + (abs(n - k),) + tz.shape[ax + 1:]
    if n >= k:
        c = concatenate([tz, np.zeros(lead, dt)], axis=ax)
    else:
        c = take(tz, np.arange(n), axis=ax)
    y = y0 + _lfilter(ta[:1], ta, c, ax)
    # the last K samples of x and y along the axis (zeros before the start), axis last
    xt, yt = (_tail(moveaxis(v, ax, -1), k) for v in (tx, y))
    a0 = ta[0]
    mb, ma = _toeplitz(tb / a0, k), _toeplitz(ta / a0, k)
    zf = xt @ mb.mT - yt @ ma.mT
    if n < k:
        shifted = concatenate([take(tz, np.arange(n, k), axis=ax),
                               np.zeros(tz.shape[:ax] + (n,) + tz.shape[ax + 1:], dt)],
                              axis=ax)
        zf = zf + moveaxis(shifted, ax, -1)
    return y, moveaxis(zf, -1, ax)


def _tail(v: Tensor, k: int) -> Tensor:
    """The last k samples of the last axis, with zeros before the start when it is shorter."""
    n = v.shape[-1]
    if n >= k:
        return v[..., n - k:]
    return concatenate([np.zeros(v.shape[:-1] + (k - n,), v.dtype), v], axis=-1)


def _toeplitz(c: Tensor, k: int) -> Tensor:
    """M (k, k) with M[i, m] = c[k + i - m] for m >= i (0 past c's end, and below the
    diagonal): zf_i = Σ_m M[i, m] tail[m] for the coefficients c = b' or a'."""
    i, m = np.arange(k)[:, None], np.arange(k)[None, :]
    idx = k + i - m
    pad = concatenate([c, np.zeros(k + 2 - c.shape[0], c.dtype)]) \
        if c.shape[0] < k + 2 else c
    # (index k + 1 holds a zero: the entries below the diagonal read it)
    return pad[np.where(m >= i, idx, k + 1)]


@_docs.shared(_DOCS, _RAISES)
def lfilter_zi(b: ArrayLike, a: ArrayLike) -> Tensor:
    r"""The initial state for :func:`lfilter` that makes its step response steady from the
    start (scipy.signal.lfilter_zi).

    Parameters
    ----------
    b, a

    Returns
    -------
    Tensor
        zi, of length max(len(a), len(b)) - 1.

    Raises
    ------
    ShapeError
        For empty or non-1-D coefficients, or ``a[0] == 0``.
    LinAlgError
        When :math:`I - C^T` is singular (a pole at z = 1: no steady state).

    Notes
    -----
    zi solves :math:`(I - C^T)\,zi = b'_{1:} - a'_{1:} b'_0` with C the companion matrix
    of :math:`a' = a/a_0` (:math:`b' = b/a_0`, both padded to one length), by
    tf.linalg.solve: differentiable in b and a, every order.

    Examples
    --------
    >>> zi = tf.signal.lfilter_zi([0.5, 0.5], [1.0, -0.5])
    >>> zi
    tensor([1.5])
    >>> tf.signal.lfilter([0.5, 0.5], [1.0, -0.5], tf.ones(3), zi=zi)[0]
    tensor([2., 2., 2.])
    """
    tb, ta = _coefficients(b, a, "lfilter_zi")
    n = max(ta.shape[0], tb.shape[0])
    dt = np.result_type(tb.dtype, ta.dtype)
    bn = concatenate([tb, np.zeros(n - tb.shape[0], dt)]) / ta[0]
    an = concatenate([ta, np.zeros(n - ta.shape[0], dt)]) / ta[0]
    if n == 1:
        return bn[:0]
    # I - Cᵀ: first column 1 + a'_1, a'_2, ...; the superdiagonal -1 (C's subdiagonal ones)
    m = np.eye(n - 1, dtype=dt) - np.eye(n - 1, k=1, dtype=dt)
    first = np.zeros((n - 1, n - 1), dt)
    first[:, 0] = 1.0
    lhs = m + first * an[1:, None]
    rhs = bn[1:] - an[1:] * bn[0]
    return _solve(lhs, rhs)
