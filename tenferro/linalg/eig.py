"""tf.linalg.eig and tf.linalg.eigvals: eigendecomposition of general square matrices.

``eig(a)`` gives ``AV = V diag(λ)`` with complex λ and unit-norm columns of V (as
``numpy.linalg.eig``, but complex also for real input). Its rules (docs/rules.md#eig;
Giles 2008 §3.1, Boeddeker et al. arXiv:1701.00392, PyTorch's linalg_eig_backward), with
E_ij = λ_j − λ_i:

    VJP  V̄′ = V̄ − V diag(Re diag(VᴴV̄));  G = VᴴV̄′;  G_ij ← G_ij / conj(E_ij) (i ≠ j);
         G_ii = λ̄_i;  Ā = V⁻ᴴ G Vᴴ   (a solve with Vᴴ, never an inverse)
    JVP  P = V⁻¹ȦV;  λ̇ = diag(P);  Q_ij = P_ij / E_ij, Q_ii = 0;
         V̇ = VQ − V diag(Re diag(VᴴVQ))

The V diag(Re diag(·)) terms come from the unit-norm constraint on the columns. For a
real A the cotangent Ā is complex and the engine keeps its real part, so eig of a real
matrix is differentiable in reverse mode (the Rust tenferro rejects it).

Gauge: each column of V is defined up to a phase e^{iφ} (also for real A, since V is
complex). A loss that depends on that phase has no gradient; it shows as
Im diag(VᴴV̄) ≠ 0, which raises GaugeError. With ``check_gauge=False`` the rule returns
the adjoint of the JVP above, i.e. the gradient under the phase convention of V̇ (the
diagonal of G is replaced by λ̄, so Im diag(VᴴV̄) itself is dropped).

Repeated eigenvalues (policy): the eigenvectors of a repeated eigenvalue are not
differentiable (E_ij = 0 divides). The reverse rule raises UnsupportedADError only when
the vector cotangent actually couples two equal eigenvalues (|G_ij| above √eps(dtype)
times the largest column norm of V̄′ for such a pair: the loss depends on the choice of
basis in the eigenspace); the forward rule raises when the tangent does (|P_ij| above
√eps times max|P|: the tangent splits the eigenspace). Below that the coupling is
rounding, and the pair's term is its exact limit 0 for a loss that does not depend on the
basis of the eigenspace, along directions that keep the eigenvalue repeated (a
symmetry): a constant 0, whose derivative (second order) is 0 too
(docs/degenerate_derivatives.md). Losses of the eigenvalues alone take the exact
values-only path Ā = V⁻ᴴ diag(λ̄) Vᴴ (``eigvals``, or ``eig`` with no cotangent on the
vectors), which never builds E and stays finite. "Equal" means |λ_i − λ_j| ≤
n·eps·max|λ|: eigenvalues closer than that cannot be told apart in the working
precision.
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

import collections

import numpy as np

from .._dtypes import EPS
from .._engine import apply, apply1
from .._errors import GaugeError, UnsupportedADError
from .._ops.registry import defop, register
from .._rule_api import note_degenerate_limit, wants_derivative
from .._tensor import Tensor
from ..builders import builder
from . import _lapack
from ._common import batch_index, field_aliases, matrix_input, mH
from .solve import solve_in_rule
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["EigResult", "eig", "eigvals", "eig_ad", "eigvals_ad"]

EigResult = collections.namedtuple("EigResult", ["values", "vectors"])
EigResult.__doc__ = """Result of tf.linalg.eig: a @ vectors = vectors * values (complex; vectors of unit norm).

Also ``eigenvalues`` and ``eigenvectors`` (aliases of the fields). The result of :func:`eig` (a named tuple).

Attributes
----------
values : Tensor
    Complex eigenvalues (*batch, n).
vectors : Tensor
    Complex unit-norm right eigenvectors in the columns (*batch, n, n).
"""
field_aliases(EigResult, eigenvalues="values", eigenvectors="vectors")

_EIG = "tf.linalg.eig"
_EIGVALS = "tf.linalg.eigvals"
# heads the error of a singular eigenvector matrix in a rule (A is not diagonalizable)
_EIG_V = "eig/eigvals derivative, eigenvector matrix V (A is defective)"




def _raw(x: Any) -> Any:
    """The ndarray behind a rule value (for checks that are not differentiated)."""
    return x._data if isinstance(x, Tensor) else x


def _locate(mask: Any, batch_shape: Any) -> Any:
    """The first True entry of ``mask`` (shape batch + (n,)): a 'matrix (i, j) of the
    stack, ' prefix for messages ('' when unbatched), its flat batch index and column."""
    flat = mask.reshape(-1, mask.shape[-1])
    k = int(np.argmax(flat.any(axis=-1)))
    col = int(np.argmax(flat[k]))
    where = f"matrix {batch_index(k, batch_shape)} of the stack, " if batch_shape else ""
    return where, k, col


def _equal_pairs(e: Any, w: Any) -> Any:
    """Mask (…, n, n) of the pairs i ≠ j whose eigenvalues are equal to working precision
    (E_ij = λ_j − λ_i given), and the identity mask."""
    d = _raw(w)
    n = d.shape[-1]
    eye = np.eye(n, dtype=bool)
    scale = np.abs(d).max(axis=-1, initial=0.0)[..., None, None]
    mask = (np.abs(_raw(e)) <= n * EPS[d.dtype] * scale) & ~eye
    if mask.any():
        note_degenerate_limit()     # tf.hessian's reverse-over-reverse then steps aside
    return mask, eye


def _raise_repeated(mask: Any, coupled: Any, w: Any, mode: Any) -> Any:
    bad = (mask & coupled).any(axis=-1)
    where, k, i = _locate(bad, w.shape[:-1])
    j = int(np.argmax((mask & coupled).reshape((-1,) + mask.shape[-2:])[k, i]))
    lam = w.reshape(-1, w.shape[-1])[k, i]
    raise UnsupportedADError(
        f"{_EIG} {mode}: {where}eigenvalues {i} and {j} are equal ({lam:.6g}) and the "
        f"{'cotangent of' if mode == 'backward' else 'tangent of'} the eigenvectors couples "
        "them; eigenvectors of a repeated eigenvalue are not differentiable (any basis of "
        "the eigenspace is valid). Differentiate the eigenvalues alone (tf.linalg.eigvals, "
        "or a loss of eig(a).values only), or a quantity that does not depend on the basis")


def _check_gauge(vhgv: Any, gv: Any) -> Any:
    """GaugeError when the loss depends on the phase of an eigenvector: Im (VᴴV̄)_ii ≠ 0.

    |(VᴴV̄)_ii| ≤ ‖V̄[:, i]‖ for unit columns, so the test is relative to that norm; the
    tolerance sqrt(eps) is far above rounding (~n·eps) and far below a real phase term.
    """
    im = np.diagonal(_raw(vhgv), axis1=-2, axis2=-1).imag
    g = _raw(gv)
    # |Im|² > eps·‖V̄[:, i]‖², i.e. |Im| > sqrt(eps)·‖V̄[:, i]‖
    bad = im * im > EPS[g.dtype] * (g.real * g.real + g.imag * g.imag).sum(axis=-2)
    if bad.any():
        where, k, i = _locate(bad, g.shape[:-2])
        val = abs(im.reshape(-1, im.shape[-1])[k, i])
        raise GaugeError(
            f"{_EIG} backward: {where}the loss depends on the phase of eigenvector {i} "
            f"(|Im (VᴴV̄)_ii| = {val:.3g}, expected 0). Each eigenvector is defined only up "
            "to a factor e^(iφ), so this gradient does not exist. Make the loss "
            "phase-invariant (e.g. use |V|, V diag(w) V⁻¹, or the eigenvalues), or pass "
            "check_gauge=False to get the gradient under the phase convention of eig's "
            "forward-mode rule")


def _values_pullback(gw: Any, v: Any) -> Any:
    vh = mH(v)
    return solve_in_rule(vh, gw[..., :, None] * vh, _EIG_V)


def _eig_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    gw, gv = gs
    w, v = ys
    if gv is None:
        return (_values_pullback(gw, v),)
    vh = mH(v)
    vhgv = vh @ gv
    if ctx:
        _check_gauge(vhgv, gv)
    # G = VᴴV̄′ = VᴴV̄ − (VᴴV) diag(Re diag(VᴴV̄))
    g = vhgv - (vh @ v) * np.real(np.diagonal(vhgv, axis1=-2, axis2=-1))[..., None, :]
    e = w[..., None, :] - w[..., :, None]   # E_ij = λ_j − λ_i
    mask, eye = _equal_pairs(e, w)
    if mask.any():
        # coupled: beyond rounding, relative to the largest column of V̄′ (|G_ij| ≤ ‖v̄′_j‖)
        vp = _raw(gv) - _raw(v) * np.real(np.diagonal(_raw(vhgv), axis1=-2, axis2=-1))[..., None, :]
        col = np.sqrt((np.abs(vp) ** 2).sum(axis=-2)).max(axis=-1)[..., None, None]
        coupled = np.abs(_raw(g)) > np.sqrt(EPS[_raw(g).dtype]) * col
        if (mask & coupled).any():
            _raise_repeated(mask, coupled, _raw(w), "backward")
    # G_ij / conj(E_ij) off the diagonal; an uncoupled equal pair takes its exact limit 0
    # (a constant: no derivative of the rounding left in G_ij)
    g = np.where(mask | eye, 0, g / np.conj(np.where(mask | eye, 1, e)))
    if gw is not None:  # G_ii = λ̄_i
        g = g + eye * gw[..., None, :]
    # Ā = V⁻ᴴ G Vᴴ
    return (solve_in_rule(vh, g @ vh, _EIG_V),)


def _eig_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    ta = ts[0]
    w, v = ys
    # P = V⁻¹ȦV; λ̇ = diag(P)
    p = solve_in_rule(v, ta @ v, _EIG_V)
    dw = np.diagonal(p, axis1=-2, axis2=-1)
    e = w[..., None, :] - w[..., :, None]   # E_ij = λ_j − λ_i
    mask, eye = _equal_pairs(e, w)
    if mask.any():
        pd = np.abs(_raw(p))
        coupled = pd > np.sqrt(EPS[pd.dtype]) * pd.max(axis=(-2, -1), keepdims=True)
        if (mask & coupled).any():
            _raise_repeated(mask, coupled, _raw(w), "forward mode")
    # Q_ij = P_ij / E_ij, Q_ii = 0 (and 0, the exact limit, for an uncoupled equal pair);
    # V̇ = VQ − V diag(Re diag(Vᴴ(VQ)))
    q = np.where(mask | eye, 0, p / np.where(mask | eye, 1, e))
    vq = v @ q
    dv = vq - v * np.real(np.diagonal(mH(v) @ vq, axis1=-2, axis2=-1))[..., None, :]
    return dw, dv


_eig_op = defop("eig", _eig_vjp, _eig_jvp,
                doc="AV = V diag(λ), general square A, complex output, unit-norm columns")


def _empty(d: Any, vectors: Any) -> Any:
    """eig's results for an empty stack or 0x0 matrices (no LAPACK call)."""
    cdt = np.result_type(d.dtype, np.complex64)
    w = np.zeros(d.shape[:-1], cdt)
    return (w, np.zeros(d.shape, cdt)) if vectors else w


@_docs.shared(PARAMS, RAISES)
def eig(a: ArrayLike, *, check_finite: bool = True, check_gauge: bool = True) -> EigResult:
    r"""Eigenvalues and right eigenvectors of square matrices, like ``numpy.linalg.eig``.

    Parameters
    ----------
    a : array_like
        Square matrices (*batch, n, n), real or complex.
    check_finite
    check_gauge : bool, optional
        Raise GaugeError for a loss that depends on the eigenvectors' phases. Default True.

    Returns
    -------
    EigResult
        Named tuple ``(values, vectors)``: values (*batch, n), vectors (*batch, n, n) with
        unit 2-norm columns; both complex (complex64 for float32/complex64 input), also for
        real input.

    Raises
    ------
    ShapeError, LinAlgError
    GaugeError
        (backward) If the loss depends on the eigenvectors' phases.
    UnsupportedADError
        (backward) For eigenvector derivatives at repeated eigenvalues.

    Notes
    -----
    Derivative: :math:`\bar A = V^{-H} G V^H` with :math:`G = V^H \bar V'` divided by
    :math:`\overline{\lambda_j - \lambda_i}` off the diagonal and :math:`G_{ii} = \bar\lambda_i`
    [Giles 2008 §3.1; Boeddeker et al. 2017] (docs/rules.md#eig); a real A keeps the real
    part.

    Examples
    --------
    >>> a = tf.tensor([[2.0, 1.0], [0.0, 3.0]])
    >>> w, v = tf.linalg.eig(a)
    >>> w
    tensor([2.+0.j, 3.+0.j], dtype=complex128)
    >>> np.allclose(a.numpy() @ v.numpy(), v.numpy() * w.numpy())
    True
    """
    a = matrix_input(a, _EIG, square=True, check_finite=check_finite)
    d = a._data
    w, v = _lapack.eig(d) if d.size else _empty(d, vectors=True)
    return EigResult(*apply(_eig_op, (a,), (w, v), ctx=bool(check_gauge)))


def _eigvals_vectors(a: Any, ctx: Any, graph: Any) -> Any:
    """V for the eigvals rules: the saved ndarray, or in graph mode (create_graph,
    forward-over-reverse: values are Tensors) V recomputed by the differentiable eig, so
    that the rule's own derivative exists. LAPACK is deterministic: the same λ order."""
    if graph:
        return eig(a, check_finite=False, check_gauge=False).vectors
    return ctx


def _eigvals_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    g = gs[0]
    return (_values_pullback(g, _eigvals_vectors(xs[0], ctx, isinstance(g, Tensor))),)


def _eigvals_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    t = ts[0]
    v = _eigvals_vectors(xs[0], ctx, isinstance(t, Tensor))
    return (np.diagonal(solve_in_rule(v, t @ v, _EIG_V), axis1=-2, axis2=-1),)


_eigvals_op = defop("eigvals", _eigvals_vjp, _eigvals_jvp,
                    doc="eigenvalues of a general square matrix (complex output)")


@_docs.shared(PARAMS, RAISES)
def eigvals(a: ArrayLike, *, check_finite: bool = True) -> Tensor:
    r"""Eigenvalues (*batch, n) of square matrices, complex, like ``numpy.linalg.eigvals``.

    Parameters
    ----------
    a, check_finite

    Returns
    -------
    Tensor
        Complex eigenvalues (*batch, n).

    Raises
    ------
    ShapeError, LinAlgError

    Notes
    -----
    Derivative: :math:`\bar A = V^{-H}\operatorname{diag}(\bar\lambda)V^H` [Giles 2008],
    finite also at repeated eigenvalues.

    The eigenvectors are computed too only when a derivative will be needed (``a``
    requires grad or carries a forward tangent). The derivative is finite also at
    repeated eigenvalues (it is the values-only rule of :func:`eig`).

    Examples
    --------
    >>> tf.linalg.eigvals(tf.tensor([[2.0, 1.0], [0.0, 3.0]]))
    tensor([2.+0.j, 3.+0.j], dtype=complex128)
    """
    a = matrix_input(a, _EIGVALS, square=True, check_finite=check_finite)
    d = a._data
    if wants_derivative(a):
        w, v = _lapack.eig(d) if d.size else _empty(d, vectors=True)
        values: Tensor = apply1(_eigvals_op, (a,), w, ctx=v)
        return values
    w = _lapack.eig(d, compute_v=False) if d.size else _empty(d, vectors=False)
    values = apply1(_eigvals_op, (a,), w, ctx=None)
    return values


eig_ad = builder(eig)
eigvals_ad = builder(eigvals)
register(eig, methods=("eig",))
register(eigvals, methods=("eigvals",))
