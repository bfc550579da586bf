"""Matrix functions: tf.linalg.matrix_exp (alias expm) and the norms (norm, vector_norm,
matrix_norm), with reverse and forward rules (docs/rules.md#matrix_exp, #norms).

matrix_exp
----------
Rules through the Fréchet derivative L(A, E) = ∫₀¹ e^{tA} E e^{(1−t)A} dt:

    JVP  Ė = L(A, Ȧ);    VJP  Ā = L(Aᴴ, Ē) = L(A, Ēᴴ)ᴴ

L is evaluated by Al-Mohy & Higham (2009), "Computing the Fréchet derivative of the matrix
exponential", Algorithm 6.4: the [m/m] Padé approximant of degree m ∈ {3, 5, 7, 9, 13}
with s squarings, picked from ‖A‖₁ (Higham 2005, θ_m; not SciPy's sharper η, which does
not bound the derivative's terms: _kernels/expm_twin.py _expm_degree), differentiated
alongside. The Padé data of A (its even powers, the W/Z pieces, (V − U)⁻¹ and the
squaring sequence) does not depend on E, so when a derivative is needed the primal
computes exp(A) with this same algorithm and keeps that data; the pullback then costs
only the derivative part (about two matrix products per product of the primal; no
product of the primal is recomputed). Both halves are one compiled
call each over the whole stack (tenferro/_kernels/expm.pyx, expm_pade / expm_frechet:
?gemm, ?getrf + ?getri, the GIL released; the NumPy twins are in _kernels/expm_twin.py),
each matrix with its own (m, s). Without a derivative the primal is scipy.linalg.expm (a
Python wrapper around SciPy's compiled Padé code; LAPACK has no expm driver).
float32/complex64 run in double precision, since the θ_m are for double.

The benchmark FrechetAlgorithms (asv_bench/benchmarks/bench_matfuncs.py) chose this over
scipy.linalg.expm_frechet, which recomputes the Padé data for every E (1.6–4.5x slower
for n = 4..256), and over the block exponential exp([[Aᴴ, Ē], [0, Aᴴ]]) (8x the flops;
2–7x slower for n >= 16, on par at n = 4). With create_graph (rule values are Tensors)
the rules use that block form, through matrix_exp itself, so every order is
differentiable by recursion.

norms
-----
NumPy's semantics exactly (numpy.linalg.norm / vector_norm / matrix_norm of NumPy 2),
with these subgradients (docs/rules.md#norms), never NaN for finite input:

* vector p-norm: x̄ = n̄·sgn(x)|x|^(p−1)/‖x‖^(p−1), sgn z = z/|z|; the 2-norm (and 'fro')
  has x̄ = n̄·x/‖x‖ and 0 at x = 0; entries x = 0 get 0 for p < 1, and the whole
  gradient is 0 where ‖x‖ = 0 (PyTorch's choices); ord=0 (a count) has gradient 0.
* ±inf (vector) and ±1, ±inf (matrix): max/min with the cotangent split evenly over ties.
* 'nuc': n̄·U Vᴴ; ±2: n̄·u₁v₁ᴴ of the largest (smallest) singular value, ties split.

Non-finite input: NaN and Inf propagate as in NumPy through every norm that needs no
factorization (vector norms, 'fro', ±1, ±inf), and the gradient is what the formulas
give there: x/‖x‖ is NaN where ‖x‖ is NaN or x is ±inf; sgn(NaN) is NaN, so a NaN entry
of a ±inf- or 1-norm gets a NaN gradient and the others their usual one. (scipy.stats'
pearsonr/spearmanr call vector_norm on data that may hold NaN and expect NaN back.) The
SVD orders ('nuc', ±2) check the input first (``check_finite``, default None: check
there only), since LAPACK cannot decompose a non-finite matrix; ``check_finite=True``
checks every order, False none. matrix_exp propagates too (NaN, as scipy.linalg.expm
and torch.linalg.matrix_exp do).

Deliberate differences from NumPy: an invalid ``axis`` or ``ord`` raises ShapeError (a
ValueError; NumPy raises AxisError/TypeError for a bad axis), and only real numbers, None
and the strings NumPy accepts are valid ``ord`` values.
"""
from __future__ import annotations

from typing import Any, Literal, TypeAlias

from numpy.typing import ArrayLike

import math
import operator

import numpy as np
import scipy.linalg as _sla

from .._kernels import load as load_kernel
from .._engine import apply1
from .._errors import ShapeError
from .._ops import elementwise, reductions
from .._ops.reductions import _keep, normalize_axis
from .._ops.registry import defop, register
from .._ops._util import float_tensor
from .._rule_api import is_tracked
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from ._common import _all_finite, check_finite_or_raise, matrix_input, mH
from .svd import svd, svdvals
from .._ops import _docs
from ._glossary import PARAMS, RAISES

expm_frechet = load_kernel("expm").expm_frechet
expm_pade = load_kernel("expm").expm_pade

__all__ = ["matrix_exp", "expm", "norm", "vector_norm", "matrix_norm",
           "matrix_exp_ad", "expm_ad", "norm_ad", "vector_norm_ad", "matrix_norm_ad"]


# ==== matrix_exp ==========================================================================

def wide_dtype(dtype: Any) -> Any:
    """The double-precision dtype the Padé code runs in."""
    return np.dtype(np.complex128) if dtype.kind == "c" else np.dtype(np.float64)


def norm1(x: Any) -> Any:
    """max ‖X‖₁ over a stack (an ndarray float)."""
    x = x._data if isinstance(x, Tensor) else x
    return float(np.abs(x).sum(axis=-2).max()) if x.size else 0.0


def _frechet_block(a: Any, e: Any) -> Any:
    """L(A, E) on Tensors: the upper-right block of exp([[A, cE], [0, A]]), divided by c.

    L is linear in E, so the constant c (scaling ‖cE‖₁ to about max(‖A‖₁, 1), which keeps
    the block's norm, hence its squarings, near those of A) changes nothing but rounding.
    matrix_exp of the block is itself differentiable, which makes this rule so.
    """
    return block_frechet(matrix_exp, a, e)


def block_frechet(f: Any, a: Any, e: Any) -> Any:
    """L_f(A, E) as the upper-right block of f([[A, cE], [0, A]]), divided by c (Higham
    2008, Thm 3.6), for a matrix function ``f`` of Tensors (matrix_exp, logm: the rule is
    then differentiable by recursion). c scales ‖cE‖₁ to about max(‖A‖₁, 1)."""
    n = a.shape[-1]
    ne = norm1(e)
    c = max(norm1(a), 1.0) / ne if ne else 1.0
    dt = np.result_type(a.dtype, e.dtype)
    zero = np.zeros(a.shape, dt)
    top = np.concatenate([a, e * c], axis=-1)
    bottom = np.concatenate([zero, a], axis=-1)
    y = f(np.concatenate([top, bottom], axis=-2))
    return y[..., :n, n:] * (1.0 / c)


def _frechet_np(ctx: Any, a: Any, e: Any, adjoint: Any) -> Any:
    """L(A, E) (``adjoint``: L(Aᴴ, E)) on ndarrays by the compiled kernel, reusing the
    Padé data ``ctx`` that the primal kept (computed here when there is none)."""
    if ctx is None:
        ctx = expm_pade(a)[1]
    if e.dtype.kind == "c" and a.dtype.kind != "c":
        # a complex E for a real A: L is real-linear and real on real matrices, and so
        # is E ↦ L(A, Eᴴ)ᴴ (both parts keep their sign under ᴴ for a real A)
        return expm_frechet(ctx, e.real, adjoint) + 1j * expm_frechet(ctx, e.imag, adjoint)
    return expm_frechet(ctx, e, adjoint)


def _expm_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Ā = L(Aᴴ, Ē) = L(A, Ēᴴ)ᴴ
    a, g = xs[0], gs[0]
    if a.size == 0:
        return (np.zeros(a.shape, a.dtype),)
    if isinstance(a, Tensor) or isinstance(g, Tensor):
        return (_frechet_block(mH(a), g),)
    return (_frechet_np(ctx, a, g, True),)


def _expm_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ė = L(A, Ȧ)
    a, t = xs[0], ts[0]
    if a.size == 0:
        return (np.zeros(ys[0].shape, ys[0].dtype),)
    if isinstance(a, Tensor) or isinstance(t, Tensor):
        return (_frechet_block(a, t),)
    return (_frechet_np(ctx, a, t, False),)


_expm_op = defop("matrix_exp", _expm_vjp, _expm_jvp,
                 doc="exp(A) by scaling and squaring; rules by the Fréchet derivative")


@_docs.shared(PARAMS, RAISES)
def matrix_exp(a: ArrayLike, *, check_finite: bool = False) -> Tensor:
    r"""Matrix exponential of each square matrix of ``a`` (*batch, n, n) (alias ``expm``),
    like ``scipy.linalg.expm``.

    Parameters
    ----------
    a
    check_finite : bool, optional
        Raise LinAlgError for NaN/Inf entries instead of returning NaN. Default False.

    Returns
    -------
    Tensor
        :math:`e^A`, a's shape.

    Raises
    ------
    LinAlgError
        With ``check_finite=True``, for non-finite input.
    ShapeError

    Notes
    -----
    Derivative: :math:`\bar A = L(A^H, \bar E)`, :math:`\dot E = L(A, \dot A)` with the
    Fréchet derivative :math:`L(A, E) = \int_0^1 e^{tA}Ee^{(1-t)A}\,dt` [Al-Mohy & Higham
    2009, Alg. 6.4] (docs/rules.md#matrix_exp).

    Differentiable in both modes and to every order through its Fréchet derivative
    (Al-Mohy & Higham 2009). float32/complex64 inputs are computed in double precision
    and rounded back. A matrix with a NaN or Inf entry gives NaN (value and derivative),
    as scipy.linalg.expm does; ``check_finite=True`` raises LinAlgError for it instead.

    Examples
    --------
    >>> a = tf.tensor([[0.0, 1.0], [0.0, 0.0]], requires_grad=True)
    >>> tf.linalg.expm(a)
    tensor([[1., 1.],
            [0., 1.]], grad_fn=matrix_exp)
    >>> g, = tf.grad([tf.linalg.expm(a).sum()], [a])
    >>> np.round(g.numpy(), 6)
    array([[1.5     , 1.      ],
           [2.166667, 1.5     ]])
    """
    a = matrix_input(a, "tf.linalg.matrix_exp", square=True, check_finite=check_finite)
    d = a._data
    if d.size == 0:
        return apply1(_expm_op, (a,), np.zeros(d.shape, d.dtype), ctx=None)
    if is_tracked(a):
        out, ctx = expm_pade(d)                  # in double precision
    else:
        ctx = None
        out = _sla.expm(d.astype(wide_dtype(d.dtype), copy=False))
    if out.dtype != d.dtype:
        out = out.astype(d.dtype)
    return apply1(_expm_op, (a,), out, ctx=ctx)


expm = matrix_exp


# ==== vector norms ========================================================================

def _sgn(x: Any) -> Any:
    """x/|x| with 0 at 0 (real: sign(x), a constant). Works on ndarrays and Tensors."""
    if x.dtype.kind != "c":
        return np.sign(x._data if isinstance(x, Tensor) else x)
    ax = np.abs(x)
    zero = (ax._data if isinstance(ax, Tensor) else ax) == 0
    if not zero.any():
        return x / ax
    return np.where(zero, 0, x / np.where(zero, 1, ax))


def _raw(v: Any) -> Any:
    return v._data if isinstance(v, Tensor) else v


def _tie_weights(x: Any, nk: Any, axes: Any) -> Any:
    """1/#ties where |x| attains the max (min) nk over ``axes``, else 0 (a constant: the
    rule is linear in the cotangent, so second order is exact). A NaN extremum matches no
    entry, and the gradient's NaN comes from sgn(NaN)·0 at the NaN entries."""
    ax = np.abs(_raw(x))
    w = (ax == _raw(nk)).astype(ax.dtype)
    cnt = w.sum(axis=axes, keepdims=True)
    w /= np.where(cnt == 0, 1, cnt)
    return w


def _weights(x: Any, n: Any, p: Any, axes: Any, keepdims: Any) -> Any:
    """W with ṅ = Re Σ conj(W)·ẋ and x̄ = n̄·W (docs/rules.md#norms), W of x's shape; None for
    a gradient that is identically 0 (ord 0)."""
    nk = _keep(n, axes, keepdims, x.shape)       # n with the reduced axes as length 1
    if p == 0:
        return None
    if p == 1:
        return _sgn(x)
    if p == math.inf or p == -math.inf:
        return _sgn(x) * _tie_weights(x, nk, axes)
    nz = _raw(nk) == 0
    if p == 2:
        # x/‖x‖, 0 where ‖x‖ = 0
        if not nz.any():
            return x / nk
        return np.where(nz, 0, x / np.where(nz, 1, nk))
    # sgn(x)|x|^(p−1)·‖x‖^(1−p) = x|x|^(p−2)·‖x‖^(1−p): 0 at entries x = 0 and where ‖x‖ = 0
    ax = np.abs(x)
    xz = _raw(ax) == 0
    g = x * np.where(xz, 1, ax) ** (p - 2)
    if xz.any():
        g = np.where(xz, 0, g)
    scale = np.where(nz, 1, nk) ** (1 - p)
    if nz.any():
        scale = np.where(nz, 0, scale)
    return g * scale


def _vnorm_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    x, g, n = xs[0], gs[0], ys[0]
    if ctx is None:                              # 2-norm over every axis, 0-d output
        if isinstance(x, Tensor) or isinstance(g, Tensor):
            ctx = (2, tuple(range(x.ndim)), False)
        else:
            # x̄ = x·(n̄/n): Python floats for the scalar (a 0-d ndarray compare/divide
            # costs ~0.5 µs each, the whole rule is ~1 µs)
            nf = float(n)
            if nf == 0:
                return (np.zeros(x.shape, x.dtype),)
            return (x * (float(g) / nf),)
    p, axes, keepdims = ctx
    w = _weights(x, n, p, axes, keepdims)
    if w is None:
        return (np.zeros(x.shape, x.dtype),)
    return (_keep(g, axes, keepdims, x.shape) * w,)


def _vnorm_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    x, t, n = xs[0], ts[0], ys[0]
    if ctx is None:
        ctx = (2, tuple(range(x.ndim)), False)
    p, axes, keepdims = ctx
    w = _weights(x, n, p, axes, keepdims)
    if w is None:
        return (np.zeros(n.shape, n.dtype),)
    if w.dtype.kind == "c":
        w = np.conj(w)
    prod = w * t
    if prod.dtype.kind == "c":
        prod = np.real(prod)
    return (prod.sum(axis=axes, keepdims=keepdims),)


# kernel: the plain backward of the 2-norm of every entry (ctx None, _norm_all) runs the
# tape's compiled copy of _vnorm_vjp (tape.pyx vjp_kernel, VJP_NORM2_ALL: x·(n̄/n), 0 at
# n = 0, with the scalar in C doubles as here in Python floats); other norms run the rule
_vnorm_op = defop("vector_norm", _vnorm_vjp, _vnorm_jvp,
                  doc="vector p-norm over axes; subgradient 0 at 0, ties split evenly",
                  kernel=load_kernel("tape").VJP_NORM2_ALL)


def _vnorm_np(d: Any, p: Any, axes: Any, keepdims: Any, name: Any) -> Any:
    """NumPy's vector-norm values (numpy.linalg.norm with one axis, extended to several)."""
    if p == 2:
        s = d.real * d.real + d.imag * d.imag if d.dtype.kind == "c" else d * d
        return np.sqrt(s.sum(axis=axes, keepdims=keepdims))
    ad = np.abs(d)
    if p == math.inf:
        return ad.max(axis=axes, keepdims=keepdims, initial=0)
    if p == -math.inf:
        if 0 in [d.shape[i] for i in axes]:
            raise ShapeError(f"{name}: the -inf norm of an empty vector is undefined (a "
                             f"minimum over zero elements; shape {d.shape}, axes {axes})")
        return ad.min(axis=axes, keepdims=keepdims)
    if p == 0:
        return (d != 0).astype(ad.dtype).sum(axis=axes, keepdims=keepdims)
    if p == 1:
        return ad.sum(axis=axes, keepdims=keepdims)
    with np.errstate(divide="ignore"):          # 0**p = inf for p < 0: the norm is 0
        s = (ad ** p).sum(axis=axes, keepdims=keepdims)
        return s ** (1.0 / p)


def _vector_ord(ord: Any, name: Any) -> Any:
    """A vector ord as a float (None -> 2); strings and non-numbers raise ShapeError."""
    if ord is None:
        return 2.0
    if isinstance(ord, str):
        raise ShapeError(f"Invalid norm order '{ord}' for vectors ({name}); use a real "
                         "number, inf or -inf ('fro' and 'nuc' are matrix norms)")
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise ShapeError(f"Invalid norm order {ord!r} for vectors ({name}); use a real "
                         "number, inf or -inf") from None
    if math.isnan(p):
        raise ShapeError(f"Invalid norm order nan for vectors ({name})")
    return p


def _checked(out: Any, d: Any, name: Any, check_finite: Any) -> Any:
    """``out``, after the finiteness check of the input ``d`` (``check_finite=True`` only)
    when ``out`` is not finite (a NaN or Inf entry shows in a p-norm with 0 < p < inf; a
    finite input whose norm overflowed passes, and the result is inf as in NumPy)."""
    if check_finite and not np.isfinite(out).all():
        check_finite_or_raise(d, name)
    return out


def _vector_norm(x: Any, p: Any, axes: Any, keepdims: Any, name: Any,
                 check_finite: Any) -> Tensor:
    d = x._data
    if check_finite and not 0 < p < math.inf:    # the result may hide a NaN or Inf entry
        check_finite_or_raise(d, name)
        check_finite = False
    out = _checked(_vnorm_np(d, p, axes, keepdims, name), d, name, check_finite)
    return apply1(_vnorm_op, (x,), np.asarray(out), ctx=(p, axes, keepdims))


def vector_norm(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: float = 2, check_finite: bool = False) -> Tensor:
    r"""Vector norm over ``axis`` (None: all entries; a tuple: the entries of those axes
    as one vector), like ``numpy.linalg.vector_norm``.

    Parameters
    ----------
    x : array_like
        The input.
    axis : int or tuple of int, optional
        None: all entries; a tuple: the entries of those axes as one vector. Default None.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    ord : float, optional
        Any real p (:math:`(\sum |x|^p)^{1/p}`), inf/-inf (max/min |x|), 0 (number of
        non-zeros). Default 2.
    check_finite : bool, optional
        Raise LinAlgError for NaN/Inf entries. Default False.

    Returns
    -------
    Tensor
        The norms (real).

    Raises
    ------
    LinAlgError
        With ``check_finite=True``, for non-finite input.
    ShapeError
        For an invalid ``ord`` or ``axis``, or the -inf norm of an empty vector.

    Notes
    -----
    Derivative: :math:`\bar x = \bar n\,\operatorname{sgn}(x)|x|^{p-1}/n^{p-1}`; for p = 2
    :math:`\bar x = \bar n\,x/n`, 0 where n = 0 (docs/rules.md#norms).

    ord: any real p (Σ|x|^p)^(1/p), inf/-inf (max/min |x|), 0 (number of non-zeros).
    NaN and Inf entries propagate as in NumPy (a NaN entry gives NaN for every ord but 0);
    ``check_finite=True`` raises LinAlgError for them instead.

    Examples
    --------
    >>> v = tf.tensor([3.0, 4.0], requires_grad=True)
    >>> tf.linalg.vector_norm(v)
    tensor(5., grad_fn=vector_norm)
    >>> tf.grad([tf.linalg.vector_norm(v)], [v])[0]
    tensor([0.6, 0.8])
    """
    x = float_tensor(x)
    p = _vector_ord(ord, "tf.linalg.vector_norm")
    axes = normalize_axis(axis, x.ndim)
    return _vector_norm(x, p, axes, keepdims, "tf.linalg.vector_norm", check_finite)


# ==== matrix norms ========================================================================

def _nuc_polar(ctx: Any, y: Any, other: Any) -> tuple[Any, bool]:
    """(U Vᴴ of y, whether it is a Tensor): differentiable through tf.linalg.svd when y or
    the (co)tangent ``other`` is a Tensor, else the primal's (ctx) or a fresh _polar."""
    if isinstance(y, Tensor) or isinstance(other, Tensor):
        u, _, vt = svd(y)
        return u @ vt, True
    return (ctx if ctx is not None else _polar(y)), False


def _nuc_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Ā = n̄·U Vᴴ
    g = gs[0]
    p, graph = _nuc_polar(ctx, xs[0], g)
    if not graph and g.ndim == 0:                # one matrix: a Python-float scale
        return (p * float(g),)
    return (g.reshape(g.shape + (1, 1)) * p,)


def _nuc_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # ṅ = Re tr(V Uᴴ Ȧ) = Re Σ conj(U Vᴴ)∘Ȧ
    t = ts[0]
    p, _ = _nuc_polar(ctx, xs[0], t)
    prod = (np.conj(p) if p.dtype.kind == "c" else p) * t
    if prod.dtype.kind == "c":
        prod = np.real(prod)
    return (prod.sum(axis=(-2, -1)),)


_nuc_op = defop("nuclear_norm", _nuc_vjp, _nuc_jvp,
                doc="sum of singular values over the last two axes; gradient U Vᴴ")


def _polar(d: Any) -> Any:
    """U Vᴴ of the thin SVD of each matrix (zeros for an empty matrix)."""
    if d.size == 0:
        return np.zeros(d.shape, d.dtype)
    u, _, vt = _lapack.svd(d, full_matrices=False)
    return u @ vt


def _nuclear(y: Any) -> Tensor:
    """Σ singular values of each matrix of ``y`` (over its last two axes)."""
    d = y._data
    if d.size == 0:
        return apply1(_nuc_op, (y,), np.zeros(d.shape[:-2], d.real.dtype), ctx=None)
    if is_tracked(y):
        # the gradient U Vᴴ needs the singular vectors: gesdd with them costs ~2.2x the
        # values alone (n = 16...256), the floor of this op's forward
        u, s, vt = _lapack.svd(d, full_matrices=False)
        ctx = u @ vt
    else:
        s = _lapack.svd(d, full_matrices=False, compute_uv=False)
        ctx = None
    # np.add.reduce: ndarray.sum's Python wrapper costs ~0.5 µs at this size
    return apply1(_nuc_op, (y,), np.add.reduce(s, axis=-1), ctx=ctx)


def _svd_extreme(y: Any, largest: Any, name: Any) -> Any:
    """Largest (smallest) singular value of each matrix of ``y``; ties split evenly."""
    s = svdvals(y, check_finite=False)              # checked by the caller
    if s.shape[-1] == 0:
        if largest:                              # NumPy: amax(..., initial=0)
            return reductions.sum(s, axis=-1)
        raise ShapeError(f"{name}: ord=-2 of an empty matrix is undefined (a minimum over "
                         f"zero singular values; shape {y.shape})")
    return (reductions.max if largest else reductions.min)(s, axis=-1)


def _abs_sum_extreme(x: Any, sum_axis: Any, ext_axis: Any, largest: Any, name: Any) -> Any:
    """max (min) over ``ext_axis`` of Σ|x| over ``sum_axis`` (NumPy's ±1/±inf norms)."""
    s = reductions.sum(elementwise.abs(x), axis=sum_axis)
    if ext_axis > sum_axis:
        ext_axis -= 1
    if s.shape[ext_axis] == 0:
        if largest:                              # NumPy: max(..., initial=0)
            return reductions.sum(s, axis=ext_axis)
        raise ShapeError(f"{name}: the minimum over an empty axis is undefined (shape "
                         f"{x.shape})")
    red = reductions.max if largest else reductions.min
    return red(s, axis=ext_axis)


_MATRIX_ORDS = "None, 'fro', 'f', 'nuc', 1, -1, 2, -2, inf or -inf"
# the string orders of a matrix norm (the numeric ones are floats)
_MatrixOrd: TypeAlias = Literal["fro", "f", "nuc"]


def _matrix_norm(x: Any, ord: Any, row: Any, col: Any, keepdims: Any, name: Any,
                 check_finite: Any) -> Tensor:
    if ord is None or (isinstance(ord, str) and ord in ("fro", "f")):
        return _vector_norm(x, 2.0, tuple(sorted((row, col))), keepdims, name,
                            check_finite is True)
    p = ord
    if not isinstance(ord, str):
        try:
            p = float(ord)
        except (TypeError, ValueError):
            pass
    if p not in ("nuc", 2.0, -2.0, 1.0, -1.0, math.inf, -math.inf):
        raise ShapeError(f"Invalid norm order {ord!r} for matrices ({name}); use "
                         f"{_MATRIX_ORDS}")
    # None (the default) checks only where LAPACK decomposes the matrix (the SVD orders)
    if check_finite or (check_finite is None and p in ("nuc", 2.0, -2.0)):
        check_finite_or_raise(x._data, name)
    if p == "nuc":
        out = _nuclear(_move_last(x, row, col))
    elif p in (2.0, -2.0):
        out = _svd_extreme(_move_last(x, row, col), p > 0, name)
    elif p in (1.0, -1.0):                        # max/min column sum: Σ over rows first
        out = _abs_sum_extreme(x, row, col, p > 0, name)
    else:                                         # max/min row sum
        out = _abs_sum_extreme(x, col, row, p > 0, name)
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        out = out.reshape(tuple(shape))
    return out


def _move_last(x: Any, row: Any, col: Any) -> Any:
    """``x`` with axes (row, col) moved to the end (as numpy's _multi_svd_norm does)."""
    nd = x.ndim
    if (row, col) == (nd - 2, nd - 1):
        return x
    return np.moveaxis(x, (row, col), (-2, -1))


def _axis_index(a: Any, nd: Any, name: Any) -> Any:
    try:
        a = operator.index(a)
    except TypeError:
        raise ShapeError(f"{name}: axis must be None, an int or a tuple of ints, got "
                         f"{a!r}") from None
    if not -nd <= a < nd:
        raise ShapeError(f"{name}: axis {a} is out of bounds for a tensor of dimension {nd}")
    return a % nd


def norm(x: ArrayLike, ord: float | _MatrixOrd | None = None,
         axis: int | tuple[int, int] | None = None, keepdims: bool = False, *,
         check_finite: bool | None = None) -> Tensor:
    """Matrix or vector norm, like ``numpy.linalg.norm`` (same ``ord``/``axis`` rules).

    Parameters
    ----------
    x : array_like
        The input.
    ord : float or {'fro', 'nuc'}, optional
        Vector ords: any real p, inf, -inf, 0. Matrix ords: None/'fro', 'nuc', ±1, ±2, ±inf.
    axis : int or 2-tuple of int, optional
        None: the 2-norm of all entries when ``ord`` is None (any ndim), otherwise x must be
        1-D or 2-D; an int: vector norms along it; a 2-tuple: matrix norms.
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    check_finite : bool, optional
        None (default): raise LinAlgError for NaN/Inf only for the orders that need an SVD
        ('nuc', ±2); True: for every order; False: for none ('nuc' and ±2 still raise from
        the SVD).

    Returns
    -------
    Tensor
        The norms (real).

    Raises
    ------
    LinAlgError
        For non-finite input, as ``check_finite`` says.
    ShapeError
        For an ``ord``/``axis`` combination NumPy rejects.

    Notes
    -----
    Derivative: as :func:`vector_norm` and :func:`matrix_norm` (docs/rules.md#norms).

    axis None: the 2-norm of all entries when ``ord`` is None (any ndim); otherwise x must
    be 1-D (vector norm) or 2-D (matrix norm). axis int: vector norms along it; axis a
    2-tuple: matrix norms over those axes.
    Vector ords: any real p, inf, -inf, 0. Matrix ords: None/'fro', 'nuc', ±1, ±2, ±inf.
    NaN and Inf entries propagate as in NumPy, except for the matrix orders that need an
    SVD ('nuc', ±2), which raise LinAlgError for them (``check_finite=None``, the
    default); ``check_finite=True`` raises for every order, False for none (then 'nuc'
    and ±2 still raise, from the SVD).

    Examples
    --------
    >>> tf.linalg.norm(tf.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    >>> tf.linalg.norm(tf.tensor([[3.0, 0.0], [0.0, 4.0]]), "nuc")
    tensor(7.)
    """
    x = float_tensor(x)
    if axis is None and not keepdims:
        if ord is None:                          # the common calls, kept lean
            return _norm_all(x, False, check_finite is True)
        if isinstance(ord, str) and ord == "nuc" and x.ndim == 2:
            if check_finite is not False:
                check_finite_or_raise(x._data, "tf.linalg.norm")
            return _nuclear(x)
    name = "tf.linalg.norm"
    nd = x.ndim
    if axis is None:
        if ord is None or (nd == 2 and isinstance(ord, str) and ord in ("f", "fro")) or \
                (nd == 1 and not isinstance(ord, str) and ord == 2):
            return _norm_all(x, keepdims, check_finite is True)
        axes = tuple(range(nd))
    elif isinstance(axis, tuple):
        axes = tuple(_axis_index(a, nd, name) for a in axis)
    else:
        axes = (_axis_index(axis, nd, name),)
    if len(axes) == 1:
        p = _vector_ord(ord, name)
        return _vector_norm(x, p, axes, keepdims, name, check_finite is True)
    if len(axes) == 2:
        row, col = axes
        if row == col:
            raise ShapeError(f"{name}: duplicate axes given (axis={axis!r}); a matrix norm "
                             "needs two different axes")
        return _matrix_norm(x, ord, row, col, keepdims, name, check_finite)
    raise ShapeError(f"{name}: improper number of dimensions to norm: {len(axes)} axes "
                     f"(shape {x.shape}, axis={axis!r}); give axis=int for vector norms or "
                     "a 2-tuple for matrix norms, or use tf.linalg.vector_norm")


def _norm2_all(d: Any) -> Any:
    """The 2-norm of all entries of the ndarray ``d``: one dot (NumPy's fast path)."""
    r = d.ravel()
    if r.dtype.kind == "c":
        r = r.view(r.real.dtype)                 # (re, im) pairs: Σ re² + im² in one dot
    s = np.dot(r, r)
    # math.sqrt is the same correctly rounded sqrt, without a ufunc call (float64 only:
    # other dtypes keep theirs); apply1 wraps the scalar as a 0-d array
    return math.sqrt(s) if type(s) is np.float64 else np.sqrt(s)


def _replay_vnorm(ctx: Any) -> Any:
    """tf.compile's replay of vector_norm (ctx None: all entries, else (p, axes,
    keepdims)); a non-finite result raises, as the op's finiteness check would."""
    def fn(d: Any) -> Any:
        out = np.asarray(_norm2_all(d) if ctx is None else
                         _vnorm_np(d, ctx[0], ctx[1], ctx[2], "tf.linalg.vector_norm"))
        if not _all_finite(out):
            raise FloatingPointError("non-finite norm")
        return out
    return fn


_vnorm_op.replay = _replay_vnorm


def _norm_all(x: Any, keepdims: Any, check_finite: Any) -> Tensor:
    """The 2-norm of all entries (NumPy's fast path), kept lean: one dot."""
    d = x._data
    name = "tf.linalg.norm"
    if keepdims:
        axes = tuple(range(d.ndim))
        out = _checked(_vnorm_np(d, 2.0, axes, True, name), d, name, check_finite)
        return apply1(_vnorm_op, (x,), out, ctx=(2.0, axes, True))
    out = _norm2_all(d)
    if check_finite and not math.isfinite(out):
        check_finite_or_raise(d, name)
    return apply1(_vnorm_op, (x,), out, ctx=None)


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False,
                ord: float | _MatrixOrd = "fro", check_finite: bool | None = None) -> Tensor:
    r"""Matrix norm over the last two axes, like ``numpy.linalg.matrix_norm``.

    Parameters
    ----------
    x : array_like
        Matrices (..., m, n).
    keepdims : bool, optional
        Keep the reduced axes with length 1. Default False.
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, optional
        Default 'fro'.
    check_finite : bool, optional
        As in :func:`norm`. Default None.

    Returns
    -------
    Tensor
        The norms (...), real.

    Raises
    ------
    LinAlgError
        For non-finite input with 'nuc' and ±2 (an SVD), or any order with
        ``check_finite=True``.
    ShapeError
        For an invalid ``ord``, or ±2 / minimum norms of an empty matrix.

    Notes
    -----
    Derivative: 'fro': :math:`\bar A = \bar n\,A/n`; 'nuc': :math:`\bar A = \bar n\,UV^H`;
    ±2: :math:`\bar n\,u_1 v_1^H` of the largest (smallest) singular value; ±1, ±inf:
    compositions of abs, sum and max/min (ties split evenly) (docs/rules.md#norms).

    ord: 'fro' (default), 'nuc', 1, -1, 2, -2, inf, -inf. NaN and Inf entries propagate
    as in NumPy, except for 'nuc' and ±2 (an SVD), which raise LinAlgError for them;
    ``check_finite=True`` raises for every order, False for none (as in ``norm``).

    Examples
    --------
    >>> tf.linalg.matrix_norm(tf.eye(2))
    tensor(1.41421356)
    """
    x = float_tensor(x)
    if x.ndim < 2:
        raise ShapeError(f"tf.linalg.matrix_norm needs a matrix or a stack of matrices "
                         f"(ndim >= 2), got shape {x.shape}; use tf.linalg.vector_norm")
    return _matrix_norm(x, ord, x.ndim - 2, x.ndim - 1, keepdims, "tf.linalg.matrix_norm",
                        check_finite)


register(matrix_exp, methods=("matrix_exp",))
register(norm, functions=(np.linalg.norm,))
register(vector_norm, functions=(np.linalg.vector_norm,))
register(matrix_norm, functions=(np.linalg.matrix_norm,))
matrix_exp_ad = builder(matrix_exp)
expm_ad = matrix_exp_ad
norm_ad = builder(norm)
vector_norm_ad = builder(vector_norm)
matrix_norm_ad = builder(matrix_norm)
