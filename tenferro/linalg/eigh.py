"""tf.linalg.eigh / eigen and eigvalsh: Hermitian eigendecomposition and its derivatives.

``a = V diag(λ) Vᴴ`` with real eigenvalues λ in ascending order. Like numpy, only the
``UPLO`` triangle of ``a`` is read (the other one is assumed to mirror it).

Rules (docs/rules.md#eigh; Giles 2008, Seeger et al. 2017), X = VᴴV̄:

    Ā = V [diag(λ̄) + ½(F∘X + (F∘X)ᴴ)] Vᴴ,   F_ij = d/(d² + ε²), d = λ_j − λ_i, F_ii = 0
    only λ̄ (eigvalsh, or an unused V): Ā = V diag(λ̄) Vᴴ (exact, no F)
    JVP: C = VᴴȦₕV, λ̇ = Re diag(C), V̇ = V(F∘C), Ȧₕ = ½(Ȧ + Ȧᴴ)

**Which derivative.** The gradient is the Hermitian full matrix (docs/rules.md#eigh;
PyTorch does the
same), i.e. both rules are those of a ↦ eigh(½(a + aᴴ)): the derivative with respect to
Hermitian perturbations, the only ones that keep the input in the domain of the
decomposition. For Hermitian ``a`` this is the derivative of the primal along every
Hermitian direction; for a non-Hermitian ``a`` it is not the derivative of the
triangle-reading primal (which would put the whole gradient in one triangle and depend on
UPLO), so pass Hermitian matrices, e.g. ``eigh(a + a.mH)``, as the oracle cases do.

Degenerate eigenvalues, ε and the gauge check follow svd.py (see :func:`eigh`).
The plain backward is one fused kernel, ``_kernels/spectral.pyx``'s ``eigh_backward``.
"""
import math
from collections import namedtuple
from typing import Any, Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import EPS
from .._engine import apply
from .._errors import ShapeError
from .._ops.registry import defop, register
from .._rule_api import record_pullback, wants_derivative, watching_degenerate
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from ._common import factorization_replay, field_aliases, mH, matrix_input
from .svd import (_check_eps, _check_phase, _data, _eps2, _eps_params, _gap_inverse,
                  _input_tangent, _kernel, _same_block, _values_only_jvp,
                  adapt_degenerate_basis)
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["EighResult", "eigh", "eigen", "eigvalsh", "eigh_ad", "eigen_ad", "eigvalsh_ad"]

EighResult = namedtuple("EighResult", ["values", "vectors"])
EighResult.__doc__ = """Result of tf.linalg.eigh: a = vectors @ diag(values) @ vectorsᴴ.

Also ``eigenvalues`` and ``eigenvectors`` (aliases of the fields). The result of :func:`eigh` (a named tuple).

Attributes
----------
values : Tensor
    Eigenvalues (..., n), real, ascending.
vectors : Tensor
    Orthonormal eigenvectors in the columns (..., n, n).
"""
field_aliases(EighResult, eigenvalues="values", eigenvectors="vectors")

# which triangle is read (either case, like numpy)
_UPLO: TypeAlias = Literal["L", "U", "l", "u"]


def _eigh_eps2(w: Any, n: Any, derivative_eps: Any) -> Any:
    """ε² per matrix, shape w.shape[:-1]; the gap d = λ_j − λ_i has the units of λ, so the
    scale is max|λ| (the rule on Tensors and the JVP; the kernel computes the same)."""
    eps, rel = _eps_params(derivative_eps, n, w.dtype)
    if w.shape[-1] == 0:
        return np.zeros(w.shape[:-1])
    return _eps2(np.maximum(np.abs(w[..., 0]), np.abs(w[..., -1])), eps, rel)  # ascending


def _eigh_drel(n: Any, dtype: Any) -> float:
    """drel of the kernels for eigh: n·eps(dtype) (relative to max|λ|)."""
    return float(n * EPS[np.dtype(dtype)])


def _eigh_F(w: Any, derivative_eps: Any) -> Any:
    """F = d/(d² + ε²), d_ij = λ_j − λ_i, on Tensors (the create_graph formula, the JVP):
    the constant 0 (derivative 0) on the pairs of a degenerate block — values within
    δ = n·eps(dtype)·max|λ| in a run — as in the kernel (svd._poles says why)."""
    wd = _data(w)
    n = wd.shape[-1]
    eps2 = _eigh_eps2(wd, n, derivative_eps).astype(w.dtype)
    F = _gap_inverse(w[..., None, :] - w[..., :, None], eps2[..., None, None])
    if n:
        scale = np.maximum(np.abs(wd[..., 0]), np.abs(wd[..., -1])).astype(np.float64)
        block = _same_block(wd, _eigh_drel(n, wd.dtype) * scale)
        if block.any():
            F = F * (~block).astype(wd.dtype)
    return F


def _eigh_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    if type(ys[0]) is not np.ndarray:
        # create_graph: one recorded node (_rule_api.record_pullback)
        return record_pullback(lambda *v: _eigh_pullback(ctx, v[:2], v[2:]),
                               lambda *v: _eigh_pullback(ctx, v[:2], v[2:]),
                               tuple(gs) + tuple(ys))
    return _eigh_pullback(ctx, gs, ys)


def _eigh_pullback(ctx: Any, gs: Any, ys: Any) -> Any:
    """Ā (a 1-tuple) from (λ̄, V̄) and (λ, V): the compiled kernel on ndarrays, the formula
    in recorded ops on Tensors."""
    gw, gv = gs
    w, v = ys
    if gv is None:
        # exact path (no F): Ā = V diag(λ̄) Vᴴ
        return (None if gw is None else (v * gw[..., None, :]) @ mH(v),)
    derivative_eps, check_gauge = ctx[0], ctx[1]
    n = w.shape[-1]
    X = None
    if check_gauge and v.dtype.kind == "c":
        # phase of v_i: dL/dθ_i = Im X_ii must vanish
        X = mH(v) @ gv                               # VᴴV̄
        _check_phase(_data(X), None, _data(gv), None, w.shape[:-1], "tf.linalg.eigh",
                     "eigenvectors")
    if type(w) is np.ndarray:
        # plain backward: one fused kernel (X = VᴴV̄, the core, V·core·Vᴴ)
        if gw is not None and gw.dtype != w.dtype:
            gw = gw.real.astype(w.dtype)
        if gv.dtype != v.dtype:
            gv = gv.astype(v.dtype)
        nb = math.prod(w.shape[:-1])
        out = np.empty(v.shape, dtype=v.dtype)
        eps, rel = _eps_params(derivative_eps, n, w.dtype)
        if watching_degenerate() and n:
            # the kernel's blocks, noted if any (as _eigh_F finds them)
            scale = np.maximum(np.abs(w[..., 0]), np.abs(w[..., -1])).astype(np.float64)
            _same_block(w, _eigh_drel(n, w.dtype) * scale)
        _kernel.eigh_backward(v.reshape(nb, n, n), w.reshape(nb, n), gv.reshape(nb, n, n),
                              None if gw is None else gw.reshape(nb, n), eps, rel,
                              out.reshape(nb, n, n), _eigh_drel(n, w.dtype))
        return (out,)
    # create_graph / forward-over-reverse: the same formula on Tensors
    if X is None:
        X = mH(v) @ gv
    FX = _eigh_F(w, derivative_eps) * X
    core = 0.5 * (FX + mH(FX))
    if gw is not None:
        core = core + np.eye(n, dtype=w.dtype) * gw[..., None, :]
    return (v @ core @ mH(v),)


def _eigh_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    derivative_eps, values_only = ctx[0], ctx[2]
    w, v = ys
    C0 = mH(v) @ ts[0] @ v
    C = 0.5 * (C0 + mH(C0))                           # VᴴȦₕV, Ȧₕ the Hermitian part
    dw = np.real(np.diagonal(C, 0, -2, -1))           # λ̇ = Re diag(C)
    if values_only:
        return (dw, None)
    return (dw, v @ (_eigh_F(w, derivative_eps) * C))                          # V̇ = V(F∘C)


_eigh_op = defop("eigh", _eigh_vjp, _eigh_jvp,
                 doc="a = V diag(λ) Vᴴ; docs/rules.md#eigh (broadened F, gauge check)")


def _uplo(UPLO: object, name: str) -> bool:
    u = UPLO.upper() if isinstance(UPLO, str) else None
    if u not in ("L", "U"):
        raise ShapeError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return u == "L"


def _eigh(a: Any, lower: Any, derivative_eps: Any, check_gauge: Any,
          values_only: Any) -> Any:
    d = a._data
    if d.size == 0:
        outs = (np.zeros(d.shape[:-1], np.finfo(d.dtype).dtype), np.zeros(d.shape, d.dtype))
    else:
        outs = _lapack.eigh(d, lower=lower)
        t = _input_tangent(a)
        if t is not None:
            # forward mode: the basis of each degenerate block in which it splits along t
            w, v = outs
            n = w.shape[-1]
            scale = np.maximum(np.abs(w[..., 0]), np.abs(w[..., -1])).astype(np.float64)
            adapt_degenerate_basis(v, w, v, 0.5 * (t + mH(t)), _eigh_drel(n, w.dtype) * scale,
                                   False)
    # (the triangle read: for tf.compile's replay)
    ctx = (derivative_eps, bool(check_gauge), values_only and _values_only_jvp(a), lower)
    return apply(_eigh_op, (a,), outs, ctx)


_eigh_op.replay = lambda ctx: factorization_replay(
    "eigh", lambda d: tuple(_lapack.eigh(d, lower=ctx[3])))


@_docs.shared(PARAMS, RAISES)
def eigh(a: ArrayLike | Tensor, UPLO: _UPLO = "L", *, derivative_eps: float | None = None,
         check_gauge: bool = True, check_finite: bool = True) -> EighResult:
    r"""Eigenvalues (ascending, real) and eigenvectors of a Hermitian (stack of) matrix.

    Only the ``UPLO`` triangle of ``a`` is read, like ``numpy.linalg.eigh``.

    Parameters
    ----------
    a : array_like
        A Hermitian (real symmetric) matrix (..., n, n) or a stack of them.
    UPLO : {'L', 'U'}, optional
        The triangle read. Default 'L'.
    derivative_eps : float, optional
        The broadening ε of the vector derivatives (units of λ). Default
        ``n * eps(dtype) * max|λ|`` per matrix.
    check_gauge : bool, optional
        Raise GaugeError when a complex loss depends on eigenvector phases. Default True.
    check_finite

    Returns
    -------
    EighResult
        Named tuple ``(values, vectors)``: values (..., n) real ascending, vectors
        (..., n, n) unitary, with ``a = vectors @ diag(values) @ vectors^H``.

    Raises
    ------
    ShapeError
        If ``a.ndim < 2`` or the matrices are not square.
    ValueError
        For a bad ``UPLO``.
    DTypeError
    LinAlgError
        On non-finite input (unless ``check_finite=False``) or no convergence.
    GaugeError
        (backward, complex input) If the loss depends on an eigenvector's phase.

    Notes
    -----
    Derivative:
    :math:`\bar A = V[\operatorname{diag}(\bar\lambda) + \tfrac12(F\circ X + (F\circ X)^H)]V^H`,
    :math:`X = V^H \bar V`, :math:`F_{ij} \approx 1/(\lambda_j - \lambda_i)` [Giles 2008;
    Seeger et al. 2017] (docs/rules.md#eigh).

    Derivatives (docs/rules.md#eigh): the gradient is the Hermitian full matrix — both modes
    differentiate a ↦ eigh(½(a + aᴴ)), i.e. along Hermitian directions (module docstring).

    * A loss that uses only the values takes the exact path Ā = V diag(λ̄) Vᴴ, finite for
      repeated eigenvalues.
    * Losses of the vectors use F_ij = d/(d² + ε²), d = λ_j − λ_i, instead of 1/d: finite
      for repeated eigenvalues, exact (relative change (ε/d)²) for gaps well above ε.
      ``derivative_eps`` is ε (units of λ); the default, per matrix, is
      ε = n · eps(dtype) · max|λ|, the rounding level of the computed eigenvalues (the
      same as numpy's rank tolerance): smaller gaps carry no information, larger ones keep
      F = 1/d to working precision. ε is a constant of the derivative.
    * Degenerate blocks: eigenvalues within n · eps(dtype) · max|λ| of each other (a run)
      are equal to working precision; for their pairs F takes its exact limit 0, a
      constant, so losses invariant under rotations of a block's eigenvectors have exact
      derivatives of every order along directions that keep the degeneracy; under a
      forward tangent the eigenvectors of each block are those in which it splits along
      the tangent (exact ``tf.jvp``/``tf.hvp`` in every direction;
      docs/degenerate_derivatives.md).
    * Complex input: a cotangent that makes the loss depend on the free phase of an
      eigenvector (Im(VᴴV̄)_ii ≠ 0 beyond √eps(dtype) times the cotangent's column norm)
      raises GaugeError; ``check_gauge=False`` skips the check. Real input never raises.

    Examples
    --------
    >>> a = tf.tensor([[3.0, 1.0], [1.0, 2.0]])
    >>> w, v = tf.linalg.eigh(a)
    >>> w
    tensor([1.38196601, 3.61803399])
    >>> np.allclose((v * w) @ v.mT, a)
    True
    """
    a = matrix_input(a, "tf.linalg.eigh", square=True, check_finite=check_finite)
    lower = _uplo(UPLO, "tf.linalg.eigh")
    eps = _check_eps(derivative_eps, "tf.linalg.eigh")
    return EighResult(*_eigh(a, lower, eps, check_gauge, False))


eigen = eigh


@_docs.shared(PARAMS, RAISES)
def eigvalsh(a: ArrayLike | Tensor, UPLO: _UPLO = "L", check_finite: bool = True) -> Tensor:
    r"""Eigenvalues (ascending, real) of a Hermitian (stack of) matrix, reading its ``UPLO``
    triangle. Differentiable by the exact rule Ā = V diag(λ̄) Vᴴ (finite for repeated
    eigenvalues, no F); the vectors are computed only when a derivative is needed.

    Parameters
    ----------
    a : array_like
        A Hermitian matrix (..., n, n) or a stack of them.
    UPLO : {'L', 'U'}, optional
        The triangle read. Default 'L'.
    check_finite

    Returns
    -------
    Tensor
        Eigenvalues (..., n), real, ascending.

    Raises
    ------
    ShapeError, LinAlgError

    Notes
    -----
    Derivative: :math:`\bar A = V \operatorname{diag}(\bar\lambda) V^H` exactly (finite for
    repeated eigenvalues) [Giles 2008]; the vectors are computed only when a derivative is
    needed.

    Examples
    --------
    >>> a = tf.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> tf.linalg.eigvalsh(a)
    tensor([1.38196601, 3.61803399], grad_fn=eigh)
    >>> g, = tf.grad([tf.linalg.eigvalsh(a).sum()], [a])     # d trace / dA = I
    >>> np.allclose(g, np.eye(2))
    True
    """
    a = matrix_input(a, "tf.linalg.eigvalsh", square=True, check_finite=check_finite)
    lower = _uplo(UPLO, "tf.linalg.eigvalsh")
    if wants_derivative(a):
        values: Tensor = _eigh(a, lower, None, False, True)[0]
        return values
    d = a._data
    if d.size == 0:
        return Tensor._wrap(np.zeros(d.shape[:-1], np.finfo(d.dtype).dtype))
    return Tensor._wrap(_lapack.eigh(d, lower=lower, compute_v=False))


eigh_ad = builder(eigh)
eigen_ad = builder(eigen)
eigen_ad.__name__ = eigen_ad.__qualname__ = "eigen_ad"
eigvalsh_ad = builder(eigvalsh)

register(eigh, methods=("eigh", "eigen"))
register(eigvalsh, methods=("eigvalsh",))
