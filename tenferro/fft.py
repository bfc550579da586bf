"""tf.fft: the array API standard's fft extension (2024.12), differentiable.

The primal is SciPy's pocketfft (the C++ library behind ``numpy.fft`` too), called through
its binding ``scipy.fft._pocketfft.pypocketfft`` (public ``scipy.fft`` as the fallback):
a small transform costs a fraction of the public wrappers' Python
(docs/guide/kernels.md#choices-in-the-python-layer), and n-D transforms run all
axes in one C++ call where NumPy loops over them in Python. Output precision follows the
input: complex64 -> complex64, float32 -> complex64 for rfft, complex64 -> float32 for
irfft; integer and bool inputs become float64 (like NumPy); a real input to fft/ifft/
fftn/ifftn/irfft/irfftn/hfft is treated as complex with zero imaginary part (its
gradient is the real part, as for every real input, docs/design.md#dtypes).

Every transform is a linear map (over R for the real ones), so its VJP is the adjoint
and its JVP the transform itself applied to the tangent. Three primitive ops cover the
ten transforms; each family is closed under taking adjoints, so the rules call the ops
themselves and every derivative is differentiable again (second order, create_graph).
Notation: along the transformed axes, ``P_n`` cuts or zero-pads to sizes ``n`` (keeping
the leading entries), ``W_∓`` is the unnormalized DFT with kernel ``exp(∓2πi jk/N)``,
``c`` the norm's scale and ``N = prod(s)`` the logical transform size::

    fft.c2c  y = P_out(c W_∓ P_s x)                        fft ifft fftn ifftn
    fft.r2c  y = P_out(conj^κ(v ⊙ c H P_s x))              rfft rfftn ihfft
    fft.c2r  y = P_out(c H⁺(w ⊙ conj^κ(P_h z)))            irfft irfftn hfft

``H`` keeps the ``h = s[-1]//2 + 1`` non-negative frequencies of a real transform along
the last transformed axis; ``H⁺`` is pocketfft's c2r: it completes a half spectrum
Hermitian-symmetrically (ignoring the imaginary parts of the DC bin and, for even
``s[-1]``, the Nyquist bin) and inverts. ``v``, ``w`` are 1 in the public transforms and
appear only in adjoints. The derivation uses three facts:

1. ``P_{m→n}ᵀ = P_{n→m}``: zero-padding and truncation are each other's transposes, so
   a cotangent is cut back where the input was padded and zero-padded where it was cut.
2. ``W_∓ᴴ = W_±`` (the DFT matrix is symmetric). The scale of a forward transform with
   norm backward/ortho/forward is 1, 1/√N, 1/N; of an inverse one 1/N, 1/√N, 1. So
   ``(c W_-)ᴴ = c W_+`` is the inverse transform with the *swapped* norm
   (backward <-> forward, ortho <-> ortho), and vice versa.
3. The half spectrum. For real x of length n, ``(c H x)_k = c Σ_j x_j e^{-iθ_k j}``
   (θ_k = 2πk/n, k < h). With PyTorch's convention (a real input's cotangent is the real
   part of Jᴴȳ), ``x̄_j = c Re Σ_{k<h} ȳ_k e^{iθ_k j}``. The c2r map is
   ``(c H⁺ z)_j = c [Re z_0 + Σ_{0<k<n/2} 2 Re(z_k e^{iθ_k j}) + [n even] Re z_{n/2}·(-1)^j]``,
   so ``x̄ = c H⁺(w ⊙ ȳ)`` with ``w = 1`` at DC (and Nyquist for even n) and ``1/2`` on
   the mirrored bins. Conversely ``y = c H⁺ z`` has ``z̄_k = c w'_k Σ_j ȳ_j e^{-iθ_k j}``,
   i.e. ``z̄ = w' ⊙ c H ȳ`` with ``w' = 1/w`` (2 on the mirrored bins); at DC and Nyquist
   that is real, the imaginary parts the c2r ignores getting zero gradient. With the
   weight inside the op, ``(H⁺ w ⊙)ᴴ = H`` and ``(w' ⊙ H)ᴴ = H⁺``, since w·w' = 1.
   Along the other transformed axes the real transforms are complex ones (rfftn = fft
   over the other axes after rfft over the last; irfftn the reverse), so the weights,
   applied along the last axis, commute with them and the n-D adjoints have the same form.
   ``conj`` is R-linear and its own adjoint, so κ (hfft, ihfft) carries over unchanged.

Hence, with ``m`` the input's sizes along the axes and norm' the swapped norm:

* ``c2c(s, out, inverse, norm)ᴴ = c2c(s, m, not inverse, norm')``
* ``r2c(s, out, norm, v)ᴴ = c2r(s, m, norm', w)`` (v = 1 gives w = 1/2 on mirrored bins,
  v = 2 there gives w = 1)
* ``c2r(s, out, norm, w)ᴴ = r2c(s, m, norm', v)`` (w = 1 gives v = 2, w = 1/2 gives v = 1)

hfft(x, n, norm) = irfft(conj(x), n, norm') and ihfft(x, n, norm) = conj(rfft(x, n, norm'))
(NumPy's definitions), i.e. c2r/r2c with κ = 1. fftshift/ifftshift are cyclic shifts by
n//2 and -(n//2): permutations, each the other's adjoint (op ``fft.shift``). fftfreq/rfftfreq are
constants.

``numpy.fft.<name>(t)`` on a Tensor reaches the same ops (NumPy's signatures: positional
n/axis, ``norm=None`` meaning "backward"; ``out=`` is refused), as do fft2/ifft2/rfft2/
irfft2.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Sequence, TypeAlias, TypeVar

from numpy.typing import ArrayLike, DTypeLike, NDArray

import operator
import warnings

import numpy as np
import scipy.fft as _sp

from ._engine import apply1
from ._errors import DTypeError, ShapeError, UnsupportedADError
from ._ops import _docs
from ._ops._util import floating, to_tensor
from ._ops.registry import defop, register
from ._tensor import Tensor

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "dct", "idct", "dst", "idst",
           "dctn", "idctn", "dstn", "idstn"]

#: The ``norm`` of a transform: which direction carries the 1/n (``"ortho"``: 1/√n both).
Norm: TypeAlias = Literal["backward", "ortho", "forward"]
# the (axes, s, out, inverse, norm) of a complex transform (op fft.c2c): sizes along axes
# before the transform (None: the input's), after it (None: s)
_C2C: TypeAlias = ("tuple[tuple[int, ...], tuple[int, ...] | None, tuple[int, ...] | None, "
                   "bool, str]")
# the (axes, s, out, norm, weighted, conj) of a real one (ops fft.r2c and fft.c2r)
_Real: TypeAlias = ("tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | None, str, "
                    "bool, bool]")
# what a rule holds: ndarrays in a plain backward, Tensors when it is recorded itself
_V = TypeVar("_V", Tensor, NDArray[Any])

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# ---- docstrings (numpydoc): the arguments the transforms share, described once -------------

_NORM_DOC = ('{"backward", "ortho", "forward"}, optional',
             'The scaling: the forward transform is multiplied by 1, 1/√n or 1/n and the '
             'inverse by the rest. Default "backward".')
_DOCS = {
    "x": ("array_like", "The input, dimension >= 1, real or complex (integer and bool "
                        "inputs become float64); differentiable."),
    "n": ("int, optional", "The number of points: the input is cut or zero-padded to n along "
                           "``axis``. Default None: its length."),
    "axis": ("int, optional", "The axis to transform. Default -1."),
    "norm": _NORM_DOC,
    "s": ("sequence of int, optional", "The sizes along ``axes`` (-1: the input's); needs "
                                       "``axes``. Default None: the input's."),
    "axes": ("sequence of int, optional", "The axes to transform. Default None: all."),
    "type": ("{1, 2, 3, 4}, optional", "The transform type. Default 2."),
    "overwrite_x": ("bool, optional", "Accepted for SciPy's signature; changes nothing. "
                                      "Default False."),
    "workers": ("int, optional", "Accepted for SciPy's signature; changes nothing. Default "
                                 "None."),
    "orthogonalize": ("bool, optional", "Scale the edge entries so that the ortho transform "
                                        "is orthogonal. Default None: ``norm == 'ortho'``."),
}
_REAL_X = {"x": ("array_like", "The input, real, dimension >= 1 (integer and bool inputs "
                               "become float64); differentiable.")}
_R2R_NORM = {"norm": ('{None, "backward", "ortho", "forward"}, optional',
                      'The scaling, as in :func:`fft`. Default None: "backward".')}
_R2RN = dict(_R2R_NORM, s=("int or sequence of int, optional",
                           "The sizes along ``axes`` (cut or zero-padded). Default None: the "
                           "input's."),
             axes=("int or sequence of int, optional",
                   "The axes to transform. Default None: all, or the last len(s)."))
_FREQ = {"n": ("int", "The transform length, >= 1."),
         "d": ("float, optional", "The sample spacing, nonzero. Default 1.0."),
         "dtype": ("dtype, optional", "float32 or float64. Default None: float64."),
         "device": ("str, optional", "None or 'cpu'. Default None.")}
_SHAPE_ERR = ("ShapeError", "If x is 0-d or empty along a transformed axis, an axis is out "
                            "of bounds or repeated, n or an entry of s is < 1, or norm is "
                            "not one of the three.")
_REAL_ERR = ("DTypeError", "If x is complex.")
_LINEAR = "Derivative: linear (over the reals), the JVP is the transform of the tangent and " \
          "the VJP its adjoint, {adj} (docs/rules.md, fft)."
_R2R_LINEAR = "Derivative: linear, the JVP is the transform of the tangent and the VJP its " \
              "transpose, a scaled transform of the transposed type (docs/rules.md, dct " \
              "and dst; Britanak, Yip and Rao 2007)."
_DOC_ONE, _DOC_MANY = ("x", "n", "axis", "norm"), ("x", "s", "axes", "norm")
_HALF_N = {"n": ("int, optional", "The output length. Default None: 2(m - 1) for m input "
                                  "points.")}
_SHIFT = "Derivative: a permutation, the VJP is :func:`{inv}` of the cotangent " \
         "(docs/rules.md, fft)."
_SHIFT_AXES = {"axes": ("int or sequence of int, optional",
                        "The axes to shift. Default None: all.")}
_FREQ_RAISES = [("ShapeError", "If n < 1, d = 0 or device is not the CPU."),
                ("DTypeError", "If dtype is not float32 or float64.")]
_R2R_RET = "{what} along ``axis``, x's dtype (complex: the real and imaginary parts " \
           "separately)."
_R2R_RAISES = [("ShapeError", "If type is not 1-4, an axis or n is invalid, norm is not one "
                              "of the four, or a type-1 DCT gets fewer than 2 points.")]
_R2RN_RAISES = [("ShapeError", "If type is not 1-4, an axis or s is invalid, or norm is not "
                               "one of the four.")]
_R2R_ONE = ("x", "type", "n", "axis", "norm", "overwrite_x", "workers", "orthogonalize")
_R2R_MANY = ("x", "type", "s", "axes", "norm", "overwrite_x", "workers", "orthogonalize")


# ---- argument checks --------------------------------------------------------------------

def _norm(norm: object, name: str) -> str:
    if not (isinstance(norm, str) and norm in _NORMS):
        raise ShapeError(f'{name}: norm must be "backward", "ortho" or "forward", got {norm!r}')
    return norm


def _index(v: Any, name: str, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise ShapeError(f"{name}: {what} must be an int, got {v!r}") from None


def _length(n_in: Any, name: str, what: str = "n") -> int:
    n = _index(n_in, name, what)
    if n < 1:
        raise ShapeError(f"{name}: {what} = {n} is not a valid number of points; a transform "
                         "needs at least 1")
    return n


def _axis(a_in: Any, ndim: int, name: str, what: str = "axis") -> int:
    a = _index(a_in, name, what)
    if not -ndim <= a < ndim:
        raise ShapeError(f"{name}: {what} {a} is out of bounds for a tensor of dimension "
                         f"{ndim} (valid: {-ndim} to {ndim - 1})")
    return a % ndim


def _seq(v: Any, name: str, what: str) -> tuple[Any, ...]:
    if isinstance(v, (int, np.integer)):
        return (v,)
    try:
        return tuple(v)
    except TypeError:
        raise ShapeError(f"{name}: {what} must be a sequence of ints, got {v!r}") from None


def _axes(axes_in: int | Sequence[int] | None, ndim: int, name: str) -> tuple[int, ...]:
    """``axes`` (None: all) as distinct non-negative ints, at least one."""
    if axes_in is None:
        return tuple(range(ndim))
    axes = tuple(_axis(a, ndim, name, "axes entry") for a in _seq(axes_in, name, "axes"))
    if not axes:
        raise ShapeError(f"{name}: axes is empty; name at least one axis to transform")
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: repeated axis in axes={axes!r}; give each axis once")
    return axes


def _input(x_in: ArrayLike, name: str, real: bool = False) -> Tensor:
    """``x`` as a floating Tensor of dimension >= 1 (integers and bools become float64)."""
    x: Tensor = floating(to_tensor(x_in))
    if x._data.ndim == 0:
        raise ShapeError(f"{name} needs a tensor of dimension >= 1, got a 0-d tensor; "
                         "reshape it to (1,) first")
    if real and x._data.dtype.kind == "c":
        raise DTypeError(f"{name} takes a real tensor, got {x._data.dtype}; use fft/fftn "
                         "for complex input, or pass .real if that is what you mean")
    return x


def _empty(name: str, axis: int, what: str) -> ShapeError:
    return ShapeError(f"{name}: the input has length 0 along axis {axis}, and a transform "
                      f"needs at least 1 point; pass {what} to zero-pad it")


def _one(x_in: ArrayLike, n: int | None, axis_in: int, norm: str, name: str,
         real: bool = False) -> tuple[Tensor, tuple[int], int | None]:
    """Checked (x, axes, n) of a 1-D transform; n None stays None."""
    x = _input(x_in, name, real)
    _norm(norm, name)
    axis = _axis(axis_in, x._data.ndim, name)
    if n is None:
        if x._data.shape[axis] == 0:
            raise _empty(name, axis, "n")
        return x, (axis,), None
    return x, (axis,), _length(n, name)


def _many(x_in: ArrayLike, s: Sequence[int] | None, axes_in: Sequence[int] | None, norm: str,
          name: str, real: bool = False
          ) -> tuple[Tensor, tuple[int, ...], tuple[int, ...] | None]:
    """Checked (x, axes, s) of an n-D transform; -1 in s means the input's size."""
    x = _input(x_in, name, real)
    _norm(norm, name)
    shape = x._data.shape
    if s is not None and axes_in is None:
        raise ShapeError(f"{name}: s was given without axes; the array API standard needs "
                         f"both, e.g. axes={tuple(range(-len(_seq(s, name, 's')), 0))} for "
                         "the last len(s) axes")
    axes = _axes(axes_in, len(shape), name)
    given = (-1,) * len(axes) if s is None else _seq(s, name, "s")
    if len(given) != len(axes):
        raise ShapeError(f"{name}: s={s!r} and axes={axes!r} have different lengths; give "
                         "one size per transformed axis")
    for k, a in zip(given, axes):
        if _index(k, name, "s entry") == -1 and shape[a] == 0:
            raise _empty(name, a, "s")
    if s is None:
        return x, axes, None
    return x, axes, tuple(shape[a] if k == -1 else _length(k, name, "s entry")
                          for k, a in zip(given, axes))


def _sizes(x: Tensor | NDArray[Any], axes: Sequence[int]) -> tuple[int, ...]:
    shape = x.shape
    return tuple(shape[a] for a in axes)


def _half(s: tuple[int, ...]) -> tuple[int, ...]:
    return s[:-1] + (s[-1] // 2 + 1,)


# ---- the NumPy side of the primitives -----------------------------------------------------
# pocketfft's three calls: c2c(a, axes, forward, inorm, out, nthreads), r2c(...), c2r(a, axes,
# lastsize, ...), with inorm 0/1/2 = scale 1, 1/√N, 1/N. SciPy's C++ binding is called
# directly: its public wrappers add ~6 µs of Python per call (a 64-point fft costs ~2 µs).
# Padding/truncation (_resize) is done here, as the wrappers would.

class _PublicPocket:
    """The same three calls through scipy.fft's public functions: the fallback for a SciPy
    without ``scipy.fft._pocketfft.pypocketfft`` (tests run both)."""
    _NAMES = {True: ("backward", "ortho", "forward"), False: ("forward", "ortho", "backward")}

    def c2c(self, a: NDArray[Any], axes: Sequence[int], forward: bool, inorm: int, out: None,
            nthreads: int) -> NDArray[Any]:
        y: NDArray[Any] = (_sp.fftn if forward else _sp.ifftn)(
            a, axes=axes, norm=self._NAMES[forward][inorm])
        return y

    def r2c(self, a: NDArray[Any], axes: Sequence[int], forward: bool, inorm: int, out: None,
            nthreads: int) -> NDArray[Any]:
        y: NDArray[Any] = _sp.rfftn(a, axes=axes, norm=self._NAMES[True][inorm])
        return y

    def c2r(self, a: NDArray[Any], axes: Sequence[int], lastsize: int, forward: bool,
            inorm: int, out: None, nthreads: int) -> NDArray[Any]:
        s = [a.shape[ax] for ax in axes[:-1]] + [lastsize]
        y: NDArray[Any] = _sp.irfftn(a, s, axes=axes, norm=self._NAMES[False][inorm])
        return y


try:
    from scipy.fft._pocketfft import pypocketfft as _pocket
except ImportError:  # pragma: no cover - SciPy moved its private binding
    _pocket = _PublicPocket()

_INORM = {"backward": 0, "ortho": 1, "forward": 2}   # of the transforms with exponent -2πi


def _resize(a: NDArray[Any], axes: Sequence[int], sizes: Sequence[int]) -> NDArray[Any]:
    """``a`` cut or zero-padded along ``axes`` to ``sizes`` (the leading entries kept)."""
    shape = a.shape
    for ax, n in zip(axes, sizes):
        if shape[ax] != n:
            break
    else:
        return a   # the common case: nothing to do
    new_shape = list(shape)
    cuts = [slice(None)] * a.ndim
    pad = False
    for ax, n in zip(axes, sizes):
        if n != new_shape[ax]:
            pad = pad or n > new_shape[ax]
            cuts[ax] = slice(0, min(n, new_shape[ax]))
            new_shape[ax] = n
    common = tuple(cuts)
    if not pad:
        return a[common]
    out = np.zeros(new_shape, a.dtype)
    out[common] = a[common]
    return out


def _scale_mirrored(y: NDArray[Any], axis: int, n: int, factor: float) -> None:
    """Multiply in place the mirrored bins ``1 <= k <= (n-1)//2`` (all but DC and, for
    even n, Nyquist) along ``axis`` of the half spectrum ``y`` of a length-n real signal."""
    y[(slice(None),) * axis + (slice(1, (n + 1) // 2),)] *= factor


def _c2c_np(x: NDArray[Any], ctx: _C2C) -> NDArray[Any]:
    axes, s, out, inverse, norm = ctx
    if s is not None:
        x = _resize(x, axes, s)
    k = _INORM[norm]
    y: NDArray[Any] = _pocket.c2c(x, axes, not inverse, 2 - k if inverse else k, None, 1)
    return y if out is None else _resize(y, axes, out)


def _r2c_np(x: NDArray[Any], ctx: _Real) -> NDArray[Any]:
    axes, s, out, norm, weighted, conj = ctx
    y: NDArray[Any] = _pocket.r2c(_resize(x, axes, s), axes, True, _INORM[norm], None, 1)
    if weighted:
        _scale_mirrored(y, axes[-1], s[-1], 2)
    if conj:
        np.conjugate(y, out=y)
    return y if out is None else _resize(y, axes, out)


def _c2r_np(z: NDArray[Any], ctx: _Real) -> NDArray[Any]:
    axes, s, out, norm, weighted, conj = ctx
    if z.dtype.kind != "c":   # a real input: the spectrum with zero imaginary part
        z = z.astype(np.result_type(z.dtype, np.complex64))
    z = _resize(z, axes, _half(s))
    if conj:
        z = np.conjugate(z)
    elif weighted:
        z = z.copy()
    if weighted:
        _scale_mirrored(z, axes[-1], s[-1], 0.5)
    y: NDArray[Any] = _pocket.c2r(z, axes, s[-1], False, 2 - _INORM[norm], None, 1)
    return y if out is None else _resize(y, axes, out)


# ---- the primitives: one op per family, rules calling the family --------------------------
# Each helper runs its op on what a rule holds: NumPy on ndarrays (plain backward), the
# recorded op on Tensors (create_graph=True, forward-over-reverse, reverse-over-forward).

def _c2c(x: _V, ctx: _C2C) -> _V:
    if isinstance(x, Tensor):
        t: Tensor = apply1(_c2c_op, (x,), _c2c_np(x._data, ctx), ctx)
        return t
    return _c2c_np(x, ctx)


def _r2c(x: _V, ctx: _Real) -> _V:
    if isinstance(x, Tensor):
        t: Tensor = apply1(_r2c_op, (x,), _r2c_np(x._data, ctx), ctx)
        return t
    return _r2c_np(x, ctx)


def _c2r(z: _V, ctx: _Real) -> _V:
    if isinstance(z, Tensor):
        t: Tensor = apply1(_c2r_op, (z,), _c2r_np(z._data, ctx), ctx)
        return t
    return _c2r_np(z, ctx)


def _c2c_vjp(ctx: _C2C, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
             ys: Sequence[Any]) -> tuple[Any]:
    # (P_out c W_∓ P_s)ᴴ = P_m c W_± P_s: the inverse transform with the swapped norm
    axes, s, out, inverse, norm = ctx
    m = _sizes(xs[0], axes)
    s = m if s is None else s
    return (_c2c(gs[0], (axes, s, None if m == s else m, not inverse, _SWAP[norm])),)


def _r2c_vjp(ctx: _Real, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
             ys: Sequence[Any]) -> tuple[Any]:
    # (P_out conj^κ(v ⊙ c H P_s))ᴴ = P_m c H⁺(w ⊙ conj^κ(P_h ·)), w = 1/v on the mirrored bins
    axes, s, out, norm, weighted, conj = ctx
    m = _sizes(xs[0], axes)
    return (_c2r(gs[0], (axes, s, None if m == s else m, _SWAP[norm], not weighted, conj)),)


def _c2r_vjp(ctx: _Real, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
             ys: Sequence[Any]) -> tuple[Any]:
    # (P_out c H⁺(w ⊙ conj^κ(P_h ·)))ᴴ = P_m conj^κ(v ⊙ c H P_s ·), v = 1/w on mirrored bins
    axes, s, out, norm, weighted, conj = ctx
    m = _sizes(xs[0], axes)
    h = _half(s)
    return (_r2c(gs[0], (axes, s, None if m == h else m, _SWAP[norm], not weighted, conj)),)


_c2c_op = defop("fft.c2c", _c2c_vjp, lambda ctx, ts, xs, ys: (_c2c(ts[0], ctx),))
_r2c_op = defop("fft.r2c", _r2c_vjp, lambda ctx, ts, xs, ys: (_r2c(ts[0], ctx),),
                complex=False)
_c2r_op = defop("fft.c2r", _c2r_vjp, lambda ctx, ts, xs, ys: (_c2r(ts[0], ctx),))


# ---- complex transforms -------------------------------------------------------------------

@_docs.sections(_DOCS, _DOC_ONE, [("complex Tensor", "The transform along ``axis`` (length n).")],
                raises=[_SHAPE_ERR],
                notes=_LINEAR.format(adj="ifft of the cotangent with the swapped norm, cut or "
                                      "zero-padded to the input length"))
def fft(x: ArrayLike, /, *, n: int | None = None, axis: int = -1,
        norm: Norm = "backward") -> Tensor:
    """1-D discrete Fourier transform ``y_k = c Σ_j x_j e^{-2πi jk/n}`` along ``axis``,
    the input cut or zero-padded to ``n`` points (default: its length); c = 1, 1/√n, 1/n
    for norm backward, ortho, forward.

    VJP ``x̄ = P_m(ifft(ȳ, norm=norm'))`` with norm' the swapped norm (backward <->
    forward): the adjoint of ``c W_-`` is ``c W_+``; ``P_m`` cuts the cotangent back to the
    input length m (padded input) or zero-pads it (truncated input). JVP ``ẏ = fft(ẋ)``.
    """
    x, axes, n = _one(x, n, axis, norm, "fft")
    ctx: _C2C = (axes, None if n is None else (n,), None, False, norm)
    y: Tensor = apply1(_c2c_op, (x,), _c2c_np(x._data, ctx), ctx)
    return y


@_docs.sections(_DOCS, _DOC_ONE,
                [("complex Tensor", "The inverse transform along ``axis`` (length n).")],
                raises=[_SHAPE_ERR],
                notes=_LINEAR.format(adj="fft of the cotangent with the swapped norm"))
def ifft(x: ArrayLike, /, *, n: int | None = None, axis: int = -1,
         norm: Norm = "backward") -> Tensor:
    """1-D inverse transform ``y_j = c Σ_k x_k e^{2πi jk/n}``; c = 1/n, 1/√n, 1 for norm
    backward, ortho, forward. VJP ``x̄ = P_m(fft(ȳ, norm=norm'))`` (swapped norm, see
    :func:`fft`); JVP ``ẏ = ifft(ẋ)``."""
    x, axes, n = _one(x, n, axis, norm, "ifft")
    ctx: _C2C = (axes, None if n is None else (n,), None, True, norm)
    y: Tensor = apply1(_c2c_op, (x,), _c2c_np(x._data, ctx), ctx)
    return y


@_docs.sections(_DOCS, _DOC_MANY, [("complex Tensor", "The transform over ``axes``.")],
                raises=[_SHAPE_ERR], notes=_LINEAR.format(adj="ifftn with the swapped norm"))
def fftn(x: ArrayLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: Norm = "backward") -> Tensor:
    """n-D transform over ``axes`` (default all; s needs axes) with sizes ``s`` (-1: the
    input's); the scale uses N = prod(s). VJP ``x̄ = P_m(ifftn(ȳ, axes, norm=norm'))``,
    JVP ``ẏ = fftn(ẋ)`` (the 1-D rules of :func:`fft` per axis)."""
    x, axes, s = _many(x, s, axes, norm, "fftn")
    ctx: _C2C = (axes, s, None, False, norm)
    y: Tensor = apply1(_c2c_op, (x,), _c2c_np(x._data, ctx), ctx)
    return y


@_docs.sections(_DOCS, _DOC_MANY, [("complex Tensor", "The inverse transform over ``axes``.")],
                raises=[_SHAPE_ERR], notes=_LINEAR.format(adj="fftn with the swapped norm"))
def ifftn(x: ArrayLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Tensor:
    """n-D inverse transform over ``axes`` with sizes ``s``. VJP
    ``x̄ = P_m(fftn(ȳ, axes, norm=norm'))``, JVP ``ẏ = ifftn(ẋ)``."""
    x, axes, s = _many(x, s, axes, norm, "ifftn")
    ctx: _C2C = (axes, s, None, True, norm)
    y: Tensor = apply1(_c2c_op, (x,), _c2c_np(x._data, ctx), ctx)
    return y


# ---- real transforms ----------------------------------------------------------------------

def _real_fwd(x: Tensor, axes: tuple[int, ...], s: tuple[int, ...] | None, norm: str,
              conj: bool) -> Tensor:
    """rfft/rfftn/ihfft of the checked real ``x``."""
    if s is None:
        s = _sizes(x._data, axes)
    ctx = (axes, s, None, norm, False, conj)
    y: Tensor = apply1(_r2c_op, (x,), _r2c_np(x._data, ctx), ctx)
    return y


def _real_inv(z: Tensor, axes: tuple[int, ...], s: tuple[int, ...] | None, norm: str,
              conj: bool, name: str) -> Tensor:
    """irfft/irfftn/hfft of the checked ``z``; s None: 2(m-1) along the last axis."""
    if s is None:
        s = _sizes(z._data, axes)
        s = s[:-1] + (2 * (s[-1] - 1),)
        if s[-1] < 1:
            raise ShapeError(f"{name}: the default output length 2*(m-1) is 0 for an input "
                             f"of length m = 1 along axis {axes[-1]}; pass the output length "
                             f"({'n' if len(axes) == 1 else 's and axes'}) explicitly")
    ctx = (axes, s, None, norm, False, conj)
    y: Tensor = apply1(_c2r_op, (z,), _c2r_np(z._data, ctx), ctx)
    return y


@_docs.sections(_DOCS, _DOC_ONE,
                [("complex Tensor", "The n//2 + 1 non-negative frequencies along ``axis``.")],
                raises=[_SHAPE_ERR, _REAL_ERR],
                notes=_LINEAR.format(adj="irfft of the weighted cotangent"), overrides=_REAL_X)
def rfft(x: ArrayLike, /, *, n: int | None = None, axis: int = -1,
         norm: Norm = "backward") -> Tensor:
    """Transform of a real signal: the ``n//2 + 1`` non-negative frequencies of
    :func:`fft` (x cut or zero-padded to n points; complex of x's precision).

    VJP ``x̄ = P_m(irfft(w ⊙ ȳ, n, norm=norm'))`` with ``w = 1`` at DC (and Nyquist, n
    even) and ``1/2`` on the other bins: ``Re Σ_{k<n/2+1} ȳ_k e^{iθ_k j}`` written with
    irfft, which counts every bin but DC/Nyquist twice (module docstring, fact 3).
    JVP ``ẏ = rfft(ẋ)``.
    """
    x, axes, n = _one(x, n, axis, norm, "rfft", real=True)
    return _real_fwd(x, axes, None if n is None else (n,), norm, False)


@_docs.sections(_DOCS, _DOC_ONE, [("Tensor", "The real signal of length n along ``axis``.")],
                raises=[_SHAPE_ERR], notes=_LINEAR.format(adj="rfft of the cotangent, weighted"),
                overrides=_HALF_N)
def irfft(x: ArrayLike, /, *, n: int | None = None, axis: int = -1,
          norm: Norm = "backward") -> Tensor:
    """Inverse of :func:`rfft`: a real signal of length ``n`` (default ``2(m-1)``) from a
    half spectrum cut or zero-padded to ``n//2 + 1`` bins; the imaginary parts of the DC
    bin and (n even) the Nyquist bin are ignored.

    VJP ``x̄ = P_m(w' ⊙ rfft(ȳ, n, norm=norm'))`` with ``w' = 1`` at DC/Nyquist and 2 on
    the mirrored bins (each stands for itself and its conjugate mirror); the cotangent of
    the ignored imaginary parts is 0 (rfft of a real ȳ is real there). JVP
    ``ẏ = irfft(ẋ)``.
    """
    x, axes, n = _one(x, n, axis, norm, "irfft")
    return _real_inv(x, axes, None if n is None else (n,), norm, False, "irfft")


@_docs.sections(_DOCS, _DOC_MANY,
                [("complex Tensor", "The half spectrum (the last of ``axes`` halved).")],
                raises=[_SHAPE_ERR, _REAL_ERR],
                notes=_LINEAR.format(adj="irfftn of the weighted cotangent"), overrides=_REAL_X)
def rfftn(x: ArrayLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Tensor:
    """n-D transform of a real signal: rfft over the last of ``axes``, then fft over the
    others. VJP ``x̄ = P_m(irfftn(w ⊙ ȳ, s, axes, norm=norm'))`` (w as in :func:`rfft`,
    along the last axis), JVP ``ẏ = rfftn(ẋ)``."""
    x, axes, s = _many(x, s, axes, norm, "rfftn", real=True)
    return _real_fwd(x, axes, s, norm, False)


@_docs.sections(_DOCS, _DOC_MANY, [("Tensor", "The real signal of sizes ``s``.")],
                raises=[_SHAPE_ERR], notes=_LINEAR.format(adj="rfftn of the cotangent, weighted"))
def irfftn(x: ArrayLike, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: Norm = "backward") -> Tensor:
    """Inverse of :func:`rfftn`: output sizes ``s`` (default: the input's, ``2(m-1)`` along
    the last axis; -1: the input's size). VJP ``x̄ = P_m(w' ⊙ rfftn(ȳ, s, axes,
    norm=norm'))`` (w' as in :func:`irfft`), JVP ``ẏ = irfftn(ẋ)``."""
    x, axes, s = _many(x, s, axes, norm, "irfftn")
    return _real_inv(x, axes, s, norm, False, "irfftn")


@_docs.sections(_DOCS, _DOC_ONE, [("Tensor", "The real transform of length n along ``axis``.")],
                raises=[_SHAPE_ERR],
                notes=_LINEAR.format(adj="an r2c transform of the cotangent, weighted"),
                overrides=_HALF_N)
def hfft(x: ArrayLike, /, *, n: int | None = None, axis: int = -1,
         norm: Norm = "backward") -> Tensor:
    """Transform of a Hermitian-symmetric signal given by its first half:
    ``hfft(x, n, norm) = irfft(conj(x), n, norm')`` (real output of length n, default
    ``2(m-1)``; c = 1, 1/√n, 1/n for backward, ortho, forward).

    VJP ``x̄ = P_m(conj(w' ⊙ rfft(ȳ, n, norm)))``: the :func:`irfft` rule (w' = 2 on the
    mirrored bins) through the conjugation, which is its own adjoint; JVP ``ẏ = hfft(ẋ)``.
    """
    x, axes, n = _one(x, n, axis, norm, "hfft")
    return _real_inv(x, axes, None if n is None else (n,), _SWAP[norm], True, "hfft")


@_docs.sections(_DOCS, _DOC_ONE, [("complex Tensor", "The n//2 + 1 non-negative frequencies.")],
                raises=[_SHAPE_ERR, _REAL_ERR],
                notes=_LINEAR.format(adj="a c2r transform of the cotangent, weighted"),
                overrides=_REAL_X)
def ihfft(x: ArrayLike, /, *, n: int | None = None, axis: int = -1,
          norm: Norm = "backward") -> Tensor:
    """Inverse of :func:`hfft` for a real signal: ``ihfft(x, n, norm) = conj(rfft(x, n,
    norm'))`` (n//2 + 1 bins; c = 1/n, 1/√n, 1 for backward, ortho, forward).

    VJP ``x̄ = P_m(irfft(w ⊙ conj(ȳ), n, norm))`` (the :func:`rfft` rule through the
    conjugation), JVP ``ẏ = ihfft(ẋ)``.
    """
    x, axes, n = _one(x, n, axis, norm, "ihfft", real=True)
    return _real_fwd(x, axes, None if n is None else (n,), _SWAP[norm], True)


# ---- shifts and frequencies -----------------------------------------------------------------

def _roll(x: _V, ctx: tuple[tuple[int, ...], tuple[int, ...]]) -> _V:
    if isinstance(x, Tensor):
        t: Tensor = apply1(_shift_op, (x,), np.roll(x._data, ctx[1], ctx[0]), ctx)
        return t
    return np.roll(x, ctx[1], ctx[0])


# a cyclic shift by k is a permutation: its adjoint (and inverse) is the shift by -k
_shift_op = defop(
    "fft.shift",
    lambda ctx, needs, gs, xs, ys: (_roll(gs[0], (ctx[0], tuple(-k for k in ctx[1]))),),
    lambda ctx, ts, xs, ys: (_roll(ts[0], ctx),))


def _shift(x_in: ArrayLike, axes_in: int | Sequence[int] | None, sign: int,
           name: str) -> Tensor:
    x: Tensor = to_tensor(x_in)
    shape = x._data.shape
    axes = tuple(range(len(shape))) if axes_in is None else _axes(axes_in, len(shape), name)
    if not axes:   # a 0-d tensor has nothing to shift
        return x
    ctx = (axes, tuple(sign * (shape[a] // 2) for a in axes))
    y: Tensor = apply1(_shift_op, (x,), np.roll(x._data, ctx[1], axes), ctx)
    return y


@_docs.sections(_DOCS, ("x", "axes"), [("Tensor", "x shifted cyclically, same shape and dtype.")],
                raises=[("ShapeError", "If an axis is out of bounds.")],
                notes=_SHIFT.format(inv="ifftshift"),
                overrides=_SHIFT_AXES)
def fftshift(x: ArrayLike, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """Move the zero frequency to the center: a cyclic shift by ``n//2`` along each of
    ``axes`` (default all). A permutation: VJP ``x̄ = ifftshift(ȳ)``, JVP
    ``ẏ = fftshift(ẋ)``."""
    return _shift(x, axes, 1, "fftshift")


@_docs.sections(_DOCS, ("x", "axes"), [("Tensor", "x shifted cyclically, same shape and dtype.")],
                raises=[("ShapeError", "If an axis is out of bounds.")],
                notes=_SHIFT.format(inv="fftshift"),
                overrides=_SHIFT_AXES)
def ifftshift(x: ArrayLike, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """Inverse of :func:`fftshift`: a cyclic shift by ``-(n//2)`` (they differ for odd n).
    VJP ``x̄ = fftshift(ȳ)``, JVP ``ẏ = ifftshift(ẋ)``."""
    return _shift(x, axes, -1, "ifftshift")


def _freq_args(n_in: int, d: float, dtype: DTypeLike | None, device: str | None,
               name: str) -> tuple[int, np.dtype[Any]]:
    n = _length(n_in, name)
    if device is not None and device != "cpu":
        raise ShapeError(f"{name}: tenferro tensors live on the CPU: device must be None or "
                         f"'cpu', got {device!r}")
    try:
        dt = np.dtype(np.float64 if dtype is None else dtype)
    except TypeError:
        dt = np.dtype(object)   # rejected below
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise DTypeError(f"{name}: dtype must be a real floating dtype (float32 or float64), "
                         f"got {dtype!r}")
    if d == 0:
        raise ShapeError(f"{name}: the sample spacing d must be nonzero")
    return n, dt


@_docs.sections(_FREQ, ("n", "d", "dtype", "device"),
                [("Tensor", "The n frequencies, a constant (no derivative).")],
                raises=_FREQ_RAISES)
def fftfreq(n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None,
            device: str | None = None) -> Tensor:
    """Sample frequencies of a length-n transform, ``[0, 1, ..., -1] / (d n)``: a constant
    (no derivative) float64 tensor, or ``dtype`` (float32/float64)."""
    size, dt = _freq_args(n, d, dtype, device, "fftfreq")
    return Tensor._wrap(np.fft.fftfreq(size, d).astype(dt, copy=False))


@_docs.sections(_FREQ, ("n", "d", "dtype", "device"),
                [("Tensor", "The n//2 + 1 frequencies, a constant (no derivative).")],
                raises=_FREQ_RAISES)
def rfftfreq(n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None,
             device: str | None = None) -> Tensor:
    """Sample frequencies of :func:`rfft`, ``[0, 1, ..., n//2] / (d n)``: a constant."""
    size, dt = _freq_args(n, d, dtype, device, "rfftfreq")
    return Tensor._wrap(np.fft.rfftfreq(size, d).astype(dt, copy=False))


# ---- real-to-real transforms: dct, dst and their inverses ------------------------------------
# One op, fft.r2r: y = P_out(post ⊙ B(pre ⊙ P_s x)) along one axis, with B SciPy's
# unnormalized transform of a kind (dct/dst) and type (1-4) and pre/post diagonal scalings
# held as (c, first, last): c everywhere, times `first` at index 0 and `last` at N-1. Every
# public transform is of that form (scipy.fft's definitions, docs/rules.md#dct-and-dst):
#
# * dct/dst(type t, norm): pre = E_in, post = c E_out, where c = 1, 1/√M, 1/M for backward,
#   ortho, forward, M = 2(N-1) (DCT-I), 2(N+1) (DST-I), 2N (the others), and E_in/E_out are
#   orthogonalize's edge factors (1 without it): DCT-I in (√2, √2) out (1/√2, 1/√2),
#   DCT-II out first 1/√2, DCT-III in first √2, DST-II out last 1/√2, DST-III in last √2.
# * idct/idst(type t) is the inverse, and B_t⁻¹ = B_t'/M with t' = 3, 2 for t = 2, 3 (1, 4:
#   themselves), so it is pre = E_out⁻¹, B_t', post = E_in⁻¹/(cM).
#
# The adjoint (B is real, so ᴴ = ᵀ for complex input too) follows from the transposes of
# the unnormalized matrices, read off their definitions (B[k, n] = 2cos(πk(2n+1)/2N) for
# DCT-II, x_0 + 2Σ_{n≥1} x_n cos(πn(2k+1)/2N) for DCT-III, ...):
#
#   DCT-IV, DST-I, DST-IV symmetric:  Bᵀ = B
#   DCT-I  = C diag(a), C symmetric, a = (1, 2, ..., 2, 1):  Bᵀ = diag(a) B diag(1/a)
#   DCT-IIᵀ = DCT-III diag(b), b = (2, 1, ..., 1);   DCT-IIIᵀ = diag(1/b) DCT-II
#   DST-IIᵀ = DST-III diag(e), e = (1, ..., 1, 2);   DST-IIIᵀ = diag(1/e) DST-II
#
# so (post B pre)ᵀ = pre Bᵀ post is again an r2r op, and the rules call the op itself: every
# order is differentiable. tests/test_fft.py checks ⟨Tx, y⟩ = ⟨x, T*y⟩ for every kind, type,
# norm and orthogonalize.

_Scale: TypeAlias = "tuple[float, float, float]"
# the (kind, type, axis, s, out, pre, post) of an r2r op
_R2R: TypeAlias = ("tuple[str, int, int, int | None, int | None, tuple[float, float, float], "
                   "tuple[float, float, float]]")
_ONE: _Scale = (1.0, 1.0, 1.0)
_R2 = float(np.sqrt(2.0))
_INVERSE_TYPE = {1: 1, 2: 3, 3: 2, 4: 4}
# orthogonalize's edge factors (input, output) of each (kind, type), as (first, last)
_EDGES: dict[tuple[str, int], tuple[tuple[float, float], tuple[float, float]]] = {
    ("dct", 1): ((_R2, _R2), (1 / _R2, 1 / _R2)), ("dct", 2): ((1, 1), (1 / _R2, 1)),
    ("dct", 3): ((_R2, 1), (1, 1)), ("dct", 4): ((1, 1), (1, 1)),
    ("dst", 1): ((1, 1), (1, 1)), ("dst", 2): ((1, 1), (1, 1 / _R2)),
    ("dst", 3): ((1, _R2), (1, 1)), ("dst", 4): ((1, 1), (1, 1))}


def _times(a: _Scale, b: _Scale) -> _Scale:
    return (a[0] * b[0], a[1] * b[1], a[2] * b[2])


def _transpose(kind: str, t: int, pre: _Scale, post: _Scale) -> tuple[int, _Scale, _Scale]:
    """(type, pre, post) of ``(post ⊙ B_t (pre ⊙ ·))ᵀ`` by the table above."""
    if t == 4 or (kind == "dst" and t == 1):
        return t, post, pre
    if t == 1:   # DCT-I: pre ⊙ a ⊙ B((1/a) ⊙ post ⊙ ·), a ∝ (1, 1/2 at the ends)
        return 1, _times(post, (1.0, 2.0, 2.0)), _times(pre, (1.0, 0.5, 0.5))
    edge = (1.0, 2.0, 1.0) if kind == "dct" else (1.0, 1.0, 2.0)   # b or e
    if t == 2:
        return 3, _times(post, edge), pre
    return 2, post, _times(pre, (1.0, 1 / edge[1], 1 / edge[2]))


def _scale_along(x: NDArray[Any], axis: int, sc: _Scale) -> NDArray[Any]:
    if sc == _ONE:
        return x
    n = x.shape[axis]
    v = np.full(n, sc[0], dtype=x.real.dtype)
    v[0] *= sc[1]
    v[-1] *= sc[2]   # (n = 1: both factors on the one entry, as the matrices have it)
    y: NDArray[Any] = x * v.reshape((n,) + (1,) * (x.ndim - 1 - axis))
    return y


def _r2r_np(x: NDArray[Any], ctx: _R2R) -> NDArray[Any]:
    kind, t, axis, s, out, pre, post = ctx
    if s is not None:
        x = _resize(x, (axis,), (s,))
    x = _scale_along(x, axis, pre)
    y: NDArray[Any] = (_sp.dct if kind == "dct" else _sp.dst)(x, t, axis=axis)
    y = _scale_along(y, axis, post)
    return y if out is None else _resize(y, (axis,), (out,))


def _r2r(x: _V, ctx: _R2R) -> _V:
    if isinstance(x, Tensor):
        t: Tensor = apply1(_r2r_op, (x,), _r2r_np(x._data, ctx), ctx)
        return t
    return _r2r_np(x, ctx)


def _r2r_vjp(ctx: _R2R, needs: Sequence[bool], gs: Sequence[Any], xs: Sequence[Any],
             ys: Sequence[Any]) -> tuple[Any]:
    # (P_out post B pre P_s)ᵀ = P_{N→m} pre' B' post' P_{out→N}, N the transform length
    kind, t, axis, s, out, pre, post = ctx
    m = xs[0].shape[axis]
    n = m if s is None else s
    t2, pre2, post2 = _transpose(kind, t, pre, post)
    return (_r2r(gs[0], (kind, t2, axis, None if out is None else n,
                         None if m == n else m, pre2, post2)),)


_r2r_op = defop("fft.r2r", _r2r_vjp, lambda ctx, ts, xs, ys: (_r2r(ts[0], ctx),))
_r2r_op.replay = lambda ctx: lambda x: _r2r_np(x, ctx)   # (tf.compile)


def _r2r_plan(kind: str, t: int, n: int, norm: str, orthogonalize: bool,
              inverse: bool) -> tuple[int, _Scale, _Scale]:
    """(type, pre, post) of scipy.fft's dct/dst/idct/idst of length n (comment above)."""
    m = 2 * (n - 1) if (kind, t) == ("dct", 1) else 2 * (n + 1) if t == 1 else 2 * n
    c = {"backward": 1.0, "ortho": 1 / float(np.sqrt(m)), "forward": 1.0 / m}[norm]
    e_in, e_out = _EDGES[kind, t] if orthogonalize else ((1.0, 1.0), (1.0, 1.0))
    if not inverse:
        return t, (1.0, *e_in), (c, *e_out)
    return (_INVERSE_TYPE[t], (1.0, 1 / e_out[0], 1 / e_out[1]),
            (1 / (c * m), 1 / e_in[0], 1 / e_in[1]))


def _r2r_args(x_in: ArrayLike, type: int, norm: str | None, orthogonalize: bool | None,
              name: str) -> tuple[Tensor, int, str, bool]:
    x = _input(x_in, name)
    if isinstance(type, bool) or not isinstance(type, (int, np.integer)) \
            or type not in (1, 2, 3, 4):
        raise ShapeError(f"{name}: type must be 1, 2, 3 or 4, got {type!r}")
    nm = _norm("backward" if norm is None else norm, name)
    orth = nm == "ortho" if orthogonalize is None else bool(orthogonalize)
    return x, int(type), nm, orth


def _r2r_axis(x: Tensor, kind: str, t: int, n_in: int | None, axis: int, norm: str,
              orth: bool, inverse: bool, name: str) -> Tensor:
    """One checked 1-D transform of ``x`` along the non-negative ``axis``."""
    m = x._data.shape[axis]
    n = m if n_in is None else _length(n_in, name)
    if n == 0:
        raise _empty(name, axis, "n")
    if (kind, t) == ("dct", 1) and n < 2:
        raise ShapeError(f"{name}: the type-1 DCT needs at least 2 points along axis {axis}, "
                         f"got {n}; pad the input (n=2) or use another type")
    t2, pre, post = _r2r_plan(kind, t, n, norm, orth, inverse)
    ctx: _R2R = (kind, t2, axis, None if n == m else n, None, pre, post)
    y: Tensor = apply1(_r2r_op, (x,), _r2r_np(x._data, ctx), ctx)
    return y


def _r2r_1d(x_in: ArrayLike, type: int, n: int | None, axis: int, norm: str | None,
            orthogonalize: bool | None, kind: str, inverse: bool, name: str) -> Tensor:
    x, t, nm, orth = _r2r_args(x_in, type, norm, orthogonalize, name)
    return _r2r_axis(x, kind, t, n, _axis(axis, x._data.ndim, name), nm, orth, inverse, name)


def _r2r_nd(x_in: ArrayLike, type: int, s: int | Sequence[int] | None,
            axes: int | Sequence[int] | None, norm: str | None, orthogonalize: bool | None,
            kind: str, inverse: bool, name: str) -> Tensor:
    """scipy.fft's n-D transforms: the 1-D transform along each axis in turn (the product
    of separable maps). axes None: all, or the last len(s) when s is given."""
    x, t, nm, orth = _r2r_args(x_in, type, norm, orthogonalize, name)
    ndim = x._data.ndim
    sizes = None if s is None else _seq(s, name, "s")
    if axes is None:
        ax = tuple(range(ndim)) if sizes is None else tuple(range(ndim - len(sizes), ndim))
        if sizes is not None and len(sizes) > ndim:
            raise ShapeError(f"{name}: s={s!r} names more axes than the input's {ndim}")
    else:
        ax = _axes(axes, ndim, name)
    if sizes is not None and len(sizes) != len(ax):
        raise ShapeError(f"{name}: s={s!r} and axes={ax!r} have different lengths; give "
                         "one size per transformed axis")
    y = x
    for k, a in enumerate(ax):
        y = _r2r_axis(y, kind, t, None if sizes is None else sizes[k], a, nm, orth, inverse,
                      name)
    return y


@_docs.sections(_DOCS, _R2R_ONE,
                [("Tensor", _R2R_RET.format(what="The transform"))],
                raises=_R2R_RAISES,
                notes=_R2R_LINEAR, overrides=_R2R_NORM)
def dct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
        norm: Norm | None = None, overwrite_x: bool = False, workers: int | None = None,
        orthogonalize: bool | None = None) -> Tensor:
    """Discrete cosine transform of type 1-4 along ``axis``, scipy.fft.dct's definition
    and arguments (the input cut or zero-padded to ``n``; norm None = "backward";
    ``orthogonalize`` defaults to ``norm == "ortho"``; overwrite_x and workers are accepted
    and change nothing). Real or complex input: the transform of the real and imaginary
    parts (also with orthogonalize=True and norm other than "ortho", which SciPy 1.17
    ignores for complex input).

    Linear: JVP ``ẏ = dct(ẋ)``; VJP the transpose, which is a scaled transform of the
    transposed type (DCT-IIᵀ = DCT-III diag(2, 1, ..., 1), DCT-Iᵀ = diag(a) DCT-I diag(1/a),
    DCT-IV symmetric; with norm="ortho" and orthogonalize the matrix is orthogonal and the
    VJP is :func:`idct`), cut back or zero-padded to the input length.
    """
    return _r2r_1d(x, type, n, axis, norm, orthogonalize, "dct", False, "dct")


@_docs.sections(_DOCS, _R2R_ONE,
                [("Tensor", _R2R_RET.format(what="The inverse transform"))],
                raises=_R2R_RAISES,
                notes=_R2R_LINEAR, overrides=_R2R_NORM)
def idct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
         norm: Norm | None = None, overwrite_x: bool = False, workers: int | None = None,
         orthogonalize: bool | None = None) -> Tensor:
    """Inverse of :func:`dct` of the same type, norm and orthogonalize (scipy.fft.idct):
    a scaled DCT of the inverse type (2 <-> 3; 1 and 4 their own). VJP its transpose,
    JVP ``ẏ = idct(ẋ)``."""
    return _r2r_1d(x, type, n, axis, norm, orthogonalize, "dct", True, "idct")


@_docs.sections(_DOCS, _R2R_ONE,
                [("Tensor", _R2R_RET.format(what="The transform"))],
                raises=_R2R_RAISES,
                notes=_R2R_LINEAR, overrides=_R2R_NORM)
def dst(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
        norm: Norm | None = None, overwrite_x: bool = False, workers: int | None = None,
        orthogonalize: bool | None = None) -> Tensor:
    """Discrete sine transform of type 1-4 along ``axis`` (scipy.fft.dst). VJP the
    transpose (DST-IIᵀ = DST-III diag(1, ..., 1, 2); DST-I and DST-IV symmetric), JVP
    ``ẏ = dst(ẋ)``."""
    return _r2r_1d(x, type, n, axis, norm, orthogonalize, "dst", False, "dst")


@_docs.sections(_DOCS, _R2R_ONE,
                [("Tensor", _R2R_RET.format(what="The inverse transform"))],
                raises=_R2R_RAISES,
                notes=_R2R_LINEAR, overrides=_R2R_NORM)
def idst(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
         norm: Norm | None = None, overwrite_x: bool = False, workers: int | None = None,
         orthogonalize: bool | None = None) -> Tensor:
    """Inverse of :func:`dst` (scipy.fft.idst). VJP its transpose, JVP ``ẏ = idst(ẋ)``."""
    return _r2r_1d(x, type, n, axis, norm, orthogonalize, "dst", True, "idst")


@_docs.sections(_DOCS, _R2R_MANY, [("Tensor", "The transform along each of ``axes``.")],
                raises=_R2RN_RAISES,
                notes=_R2R_LINEAR, overrides=_R2RN)
def dctn(x: ArrayLike, type: int = 2, s: int | Sequence[int] | None = None,
         axes: int | Sequence[int] | None = None, norm: Norm | None = None,
         overwrite_x: bool = False, workers: int | None = None,
         orthogonalize: bool | None = None) -> Tensor:
    """n-D DCT (scipy.fft.dctn): :func:`dct` along each of ``axes`` (default all; the last
    len(s) when only s is given) with sizes ``s``. Derivatives those of the 1-D ones."""
    return _r2r_nd(x, type, s, axes, norm, orthogonalize, "dct", False, "dctn")


@_docs.sections(_DOCS, _R2R_MANY, [("Tensor", "The inverse transform along each of ``axes``.")],
                raises=_R2RN_RAISES,
                notes=_R2R_LINEAR, overrides=_R2RN)
def idctn(x: ArrayLike, type: int = 2, s: int | Sequence[int] | None = None,
          axes: int | Sequence[int] | None = None, norm: Norm | None = None,
          overwrite_x: bool = False, workers: int | None = None,
          orthogonalize: bool | None = None) -> Tensor:
    """n-D inverse DCT (scipy.fft.idctn): :func:`idct` along each of ``axes``."""
    return _r2r_nd(x, type, s, axes, norm, orthogonalize, "dct", True, "idctn")


@_docs.sections(_DOCS, _R2R_MANY, [("Tensor", "The transform along each of ``axes``.")],
                raises=_R2RN_RAISES,
                notes=_R2R_LINEAR, overrides=_R2RN)
def dstn(x: ArrayLike, type: int = 2, s: int | Sequence[int] | None = None,
         axes: int | Sequence[int] | None = None, norm: Norm | None = None,
         overwrite_x: bool = False, workers: int | None = None,
         orthogonalize: bool | None = None) -> Tensor:
    """n-D DST (scipy.fft.dstn): :func:`dst` along each of ``axes``."""
    return _r2r_nd(x, type, s, axes, norm, orthogonalize, "dst", False, "dstn")


@_docs.sections(_DOCS, _R2R_MANY, [("Tensor", "The inverse transform along each of ``axes``.")],
                raises=_R2RN_RAISES,
                notes=_R2R_LINEAR, overrides=_R2RN)
def idstn(x: ArrayLike, type: int = 2, s: int | Sequence[int] | None = None,
          axes: int | Sequence[int] | None = None, norm: Norm | None = None,
          overwrite_x: bool = False, workers: int | None = None,
          orthogonalize: bool | None = None) -> Tensor:
    """n-D inverse DST (scipy.fft.idstn): :func:`idst` along each of ``axes``."""
    return _r2r_nd(x, type, s, axes, norm, orthogonalize, "dst", True, "idstn")


# ---- numpy.fft on Tensors ---------------------------------------------------------------------

def _no_out(out: object, name: str) -> None:
    if out is not None:
        raise UnsupportedADError(f"numpy.fft.{name}(..., out=...) on a tensor: a differentiable "
                                 "op cannot write into an existing array; use the returned "
                                 "tensor instead")


def _numpy_1d(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def wrapper(a: ArrayLike, n: int | None = None, axis: int = -1, norm: Norm | None = None,
                out: object = None) -> Tensor:
        _no_out(out, fn.__name__)
        return fn(a, n=n, axis=axis, norm="backward" if norm is None else norm)

    wrapper.__name__ = wrapper.__qualname__ = f"numpy_{fn.__name__}"
    wrapper.__doc__ = f"``numpy.fft.{fn.__name__}`` on tensors: :func:`{fn.__name__}`."
    return wrapper


def _numpy_nd(fn: Callable[..., Tensor], name: str,
              default_axes: tuple[int, ...] | None = None) -> Callable[..., Tensor]:
    def wrapper(a: ArrayLike, s: Sequence[int] | None = None,
                axes: Sequence[int] | None = default_axes, norm: Norm | None = None,
                out: object = None) -> Tensor:
        _no_out(out, name)
        if s is not None and axes is None:   # NumPy's (deprecated) default: the last axes
            warnings.warn(f"numpy.fft.{name}: axes should not be None if s is not None "
                          "(deprecated in NumPy 2.0); the last len(s) axes are used",
                          DeprecationWarning, stacklevel=3)
            axes = tuple(range(-len(_seq(s, name, "s")), 0))
        return fn(a, s=s, axes=axes, norm="backward" if norm is None else norm)

    wrapper.__name__ = wrapper.__qualname__ = f"numpy_{name}"
    wrapper.__doc__ = f"``numpy.fft.{name}`` on tensors: :func:`{fn.__name__}`."
    return wrapper


_fn: Callable[..., Tensor]
for _fn in (fft, ifft, rfft, irfft, hfft, ihfft):
    register(_numpy_1d(_fn), functions=(getattr(np.fft, _fn.__name__),))
for _fn, _name, _default in ((fftn, "fftn", None), (ifftn, "ifftn", None),
                             (rfftn, "rfftn", None), (irfftn, "irfftn", None),
                             (fftn, "fft2", (-2, -1)), (ifftn, "ifft2", (-2, -1)),
                             (rfftn, "rfft2", (-2, -1)), (irfftn, "irfft2", (-2, -1))):
    register(_numpy_nd(_fn, _name, _default), functions=(getattr(np.fft, _name),))
register(lambda x, axes=None: fftshift(x, axes=axes), functions=(np.fft.fftshift,))
register(lambda x, axes=None: ifftshift(x, axes=axes), functions=(np.fft.ifftshift,))
del _fn, _name, _default
