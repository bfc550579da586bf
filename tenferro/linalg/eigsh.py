"""tf.linalg.eigsh: k eigenpairs of a Hermitian matrix or operator (ARPACK), differentiable.

``w, v = eigsh(a, k)`` for a dense Hermitian Tensor ``a`` (n x n), or
``eigsh(matvec, k, n=n, params=(θ...))`` for a Hermitian operator given by a function
``matvec(x, *params)`` of Tensors. The primal is scipy.sparse.linalg.eigsh (ARPACK's
implicitly restarted Lanczos) on plain values; w comes ascending (scipy's order), the
columns of v (n, k) are the orthonormal eigenvectors.

Rules (docs/rules.md#eigsh-and-svds), with D = Ȧ V (the tangent of the operator applied
to the computed vectors: Ȧ_h V for a Tensor, a nested jvp of matvec in the parameters),
C = VᴴD, P = I − VVᴴ, and F the broadened inverse gaps of eigh among the k computed values
(F_ij = d/(d² + ε²), d = λ_j − λ_i, 0 on the diagonal and within a degenerate block):

    λ̇ = Re diag(C)                                             (Hellmann–Feynman)
    V̇ = V(F∘C) + Y,   P(A − λ_i)P y_i = −P d_i,  y_i ⊥ V       (the uncomputed spectrum)
    reverse: s_i = λ̄_i v_i − ξ_i,  ξ_i = V(Fᵀ∘X)_i + z_i,  X = VᴴV̄,
             P(A − λ_i)P z_i = P v̄_i,  z_i ⊥ V                 (Xie, Liu & Wang 2020)
    Ā = ½(S Vᴴ + V Sᴴ) (Tensor),   θ̄ = Σ_i (∂(A v_i)/∂θ)ᴴ s_i (one nested vjp of matvec)

The linear systems (one per vector with a cotangent or tangent) are solved by MINRES with
products by A only; nothing is differentiated through the Lanczos iteration.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable, Literal, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import EPS
from .._engine import apply
from .._errors import LinAlgError, ShapeError, UnsupportedADError
from .._ops.registry import defop
from .._tensor import Tensor
from .._ops._util import to_tensor
from ._common import check_finite_or_raise, field_aliases, mH, matrix_input
from ._iterative import (LinearMap, arpack_call, check_k, fn_jvp, fn_jvp_graph, fn_vjp,
                         fn_vjp_graph, function_dtype, guarded_tangent, params_input,
                         projected_solve, start_vector)
from .svd import _check_phase, _data, _gap_inverse, _same_block
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["EigshResult", "eigsh"]

EigshResult = namedtuple("EigshResult", ["values", "vectors"])
EigshResult.__doc__ = """Result of tf.linalg.eigsh: values (k,) ascending, vectors (n, k) with
A @ vectors[:, i] = values[i] * vectors[:, i].

Also ``r.eigenvalues`` and ``r.eigenvectors`` (aliases).

The result of :func:`eigsh` (a named tuple).

Attributes
----------
values : Tensor
    The k eigenvalues, ascending, real.
vectors : Tensor
    The (n, k) orthonormal eigenvectors in the matching columns.
"""
field_aliases(EigshResult, eigenvalues="values", eigenvectors="vectors")

_WHICH = ("LA", "SA", "LM", "SM")
_NAME = "tf.linalg.eigsh"


class _Call:
    """What the rules of one eigsh call need (the node's ctx)."""
    __slots__ = ("op", "fn", "n", "dtype", "check_gauge")

    def __init__(self, op: LinearMap, fn: Callable[..., Any] | None, n: int,
                 dtype: np.dtype[Any], check_gauge: bool) -> None:
        self.op = op            # A as plain products
        self.fn = fn            # the user's matvec (None: a dense Tensor, the input)
        self.n = n
        self.dtype = dtype
        self.check_gauge = check_gauge


def _delta(w: Any, n: int) -> float:
    """eigh's degenerate-block tolerance (and default ε): n·eps(dtype)·max|λ|."""
    return float(n * EPS[np.dtype(w.dtype)] * (float(np.max(np.abs(w))) if w.size else 0.0))


def _inverse_gaps(w: Any, n: int) -> Any:
    """F (k, k) on ndarrays: F_ij = d/(d² + ε²), d = λ_j − λ_i, ε = n·eps·max|λ| (eigh's
    default), 0 on the diagonal and on the pairs of a degenerate block (within
    n·eps·max|λ|: eigh's exact limit, docs/degenerate_derivatives.md)."""
    tol = _delta(w, n)
    w = np.asarray(w, np.float64)
    F = _gap_inverse(w[None, :] - w[:, None], np.float64(tol * tol))
    block = _same_block(w, tol)
    return np.where(block, 0.0, F)


def _unresolved(w: Any, i: int) -> str:
    return (f"λ_{i} = {float(w[i]):.6g} is (nearly) degenerate with an eigenvalue that was "
            f"not computed, so the derivative of its eigenvector is not defined by the k "
            f"computed pairs; raise k to include the whole degenerate block (or use a loss "
            f"of the eigenvalues, or of vectors outside that block)")


def _vjp(call: _Call, needs: Sequence[bool], gs: Any, xs: Any, ys: Any) -> Any:
    gw, gV = gs
    w, V = ys
    if isinstance(V, Tensor) or any(isinstance(g, Tensor) for g in gs):
        return _vjp_graph(call, needs, gs, xs, ys)
    k = w.shape[0]
    dt = call.dtype
    S = np.zeros(V.shape, dt) if gw is None else (V * gw.astype(V.real.dtype)).astype(dt)
    if gV is not None:
        gV = gV.astype(dt, copy=False)
        X = mH(V) @ gV                                      # VᴴV̄
        if call.check_gauge and dt.kind == "c":
            _check_phase(X, None, gV, None, (), _NAME, "eigenvectors")
        F = _inverse_gaps(w, call.n)
        xi_in = V @ (F.T * X)                               # Σ_j v_j X_ji/(λ_j − λ_i)
        R = gV - V @ X                                      # P V̄
        Z = projected_solve(call.op.mv, V, w, R, _delta(w, call.n), _NAME,
                            lambda i: _unresolved(w, i))
        S = S - (xi_in + Z.astype(dt))
    if call.fn is None:
        ga = S @ mH(V)
        return (0.5 * (ga + mH(ga)),)
    return fn_vjp(call.fn, xs, V, S, needs)


def _vjp_graph(call: _Call, needs: Sequence[bool], gs: Any, xs: Any, ys: Any) -> Any:
    """The pullback on Tensors (create_graph, forward-over-reverse): the eigenvalue terms
    only, written in recorded ops (their derivative reaches V through this op's first-
    order rules); a cotangent of the vectors raises."""
    gw, gV = gs
    w, V = ys
    if gV is not None:
        raise UnsupportedADError(
            f"{_NAME}: second derivatives of a loss of the eigenvectors are not implemented "
            f"(create_graph=True, tf.hvp, tf.hessian); those of the eigenvalues are. Use "
            f"the dense tf.linalg.eigh for a second derivative of the vectors")
    if gw is None:
        return (None,) * len(xs)
    V = to_tensor(V)
    S = V * to_tensor(gw).astype(V.real.dtype)
    if call.fn is None:
        return (S @ mH(V),)
    return fn_vjp_graph(call.fn, xs, V, S, needs)


def _jvp(call: _Call, ts: Any, xs: Any, ys: Any) -> Any:
    w, V = ys
    graph = isinstance(V, Tensor)
    if call.fn is None:
        ta = ts[0]
        D = 0.5 * (ta @ V + mH(ta) @ V)                    # Ȧ_h V
    elif graph:
        D = fn_jvp_graph(call.fn, xs, ts, V, call.dtype, call.n)
    else:
        D = fn_jvp(call.fn, xs, ts, V, call.dtype, call.n)
    if D is None:
        return (None, None)
    C = mH(V) @ D
    dw = np.real(np.diagonal(C))                            # Hellmann–Feynman
    if graph:
        dV = _vector_tangent(call, ts, xs, ys)
    else:
        dV = _vector_tangent_plain(call, _data(D), _data(w), _data(V))
    return (dw, dV)


def _vector_tangent_plain(call: _Call, D: Any, w: Any, V: Any) -> Any:
    D = D.astype(call.dtype, copy=False)
    C = mH(V) @ D
    F = _inverse_gaps(w, call.n)
    Y = projected_solve(call.op.mv, V, w, -(D - V @ C), _delta(w, call.n), _NAME,
                        lambda i: _unresolved(w, i))
    return V @ (F * C) + Y.astype(call.dtype)


def _vector_tangent(call: _Call, ts: Any, xs: Any, ys: Any) -> Any:
    """V̇ on Tensors (the jvp rule run in a recorded graph): its value, as one node of an op
    whose derivative raises, so that nothing treats it as a constant."""
    w, V = ys
    if call.fn is None:
        ta = _data(ts[0])
        D = 0.5 * (ta @ _data(V) + mH(ta) @ _data(V))
    else:
        D = fn_jvp(call.fn, [_data(x) for x in xs], [None if t is None else _data(t)
                                                    for t in ts], _data(V), call.dtype, call.n)
    value = _vector_tangent_plain(call, D, _data(w), _data(V))
    return guarded_tangent(value, list(ts) + list(xs) + [V], _NAME)


_eigsh_op = defop("eigsh", _vjp, _jvp, complex=True, batched=False, second_order=False,
                  doc="k eigenpairs by ARPACK; Hellmann–Feynman values, vectors by the "
                      "projected solve of Xie, Liu & Wang 2020 (second order: values only)")


def _hermitian_or_raise(d: Any) -> None:
    n = d.shape[-1]
    asym = float(np.max(np.abs(d - d.conj().T))) if d.size else 0.0
    scale = float(np.max(np.abs(d))) if d.size else 0.0
    if asym > 64 * n * EPS[np.dtype(d.dtype)] * scale:
        raise LinAlgError(
            f"{_NAME}: the matrix is not Hermitian (max |a - aᴴ| = {asym:.3g} against max "
            f"|a| = {scale:.3g}); eigsh reads the whole matrix and needs a = aᴴ. Pass "
            f"(a + a.mH) / 2, or use tf.linalg.eig for a general matrix")


@_docs.shared(PARAMS, RAISES)
def eigsh(a: ArrayLike | Tensor | Callable[..., Any], k: int = 6,
          which: Literal["LA", "SA", "LM", "SM"] = "LM", *, n: int | None = None,
          params: Sequence[ArrayLike | Tensor] = (), v0: ArrayLike | None = None,
          tol: float = 0, ncv: int | None = None, maxiter: int | None = None,
          check_gauge: bool = True, check_finite: bool = True) -> EigshResult:
    r"""k eigenvalues and eigenvectors of a Hermitian matrix or operator (ARPACK).

    Parameters
    ----------
    a : array_like or callable
        A Hermitian Tensor/array (n, n) (a stack raises ShapeError: loop over it), or a
        function ``matvec(x, *params)`` of Tensors returning A·x for a vector x (n,), written
        with tenferro ops (or NumPy functions on Tensors) so that it can be differentiated in
        ``params``. ``matvec`` must not close over tensors that require grad: pass them in
        ``params``. The operator is complex when a parameter or ``v0`` is complex, or when
        matvec returns complex values for a real x.
    k : int, optional
        The number of eigenpairs. Default 6.
    which : {'LA', 'SA', 'LM', 'SM'}, optional
        The largest/smallest algebraic, the largest/smallest magnitude (scipy's; 'SM'
        converges slowly: prefer 'SA' on a shifted operator). Default 'LM'.
    n : int, optional
        The size; required when ``a`` is a function.
    params : sequence of array_like, optional
        The parameters of ``matvec``, differentiable.
    v0 : array_like, optional
        Start vector; default a fixed pseudo-random one, so results are repeatable.
    tol : float, optional
        ARPACK's tolerance (0: machine precision). Default 0.
    ncv, maxiter : int, optional
        As in ``scipy.sparse.linalg.eigsh``.
    check_gauge : bool, optional
        Raise GaugeError for a phase-dependent loss of complex vectors. Default True.
    check_finite

    Returns
    -------
    EigshResult
        Named tuple ``(values, vectors)``: the k eigenvalues in ascending algebraic order
        (scipy's order, whatever ``which``), real, and the (n, k) orthonormal eigenvectors in
        the matching columns.

    Raises
    ------
    ShapeError
        Not square, batched, bad k, n or v0.
    LinAlgError
        Not Hermitian, non-finite input, ARPACK without convergence (raise maxiter or ncv);
        (backward) a degenerate block cut by k (raise k).
    ValueError
        A bad ``which``.
    UnsupportedADError
        ``matvec`` closes over a tensor that requires grad; second derivatives of vector
        losses.
    GaugeError
        (backward) A loss depending on complex vectors' phases.

    Notes
    -----
    Derivative: :math:`\dot\lambda_i = v_i^H \dot A v_i` (Hellmann–Feynman); vectors by the
    projected solve of [Xie, Liu & Wang 2020] (docs/rules.md#eigsh-and-svds).

    Derivatives (docs/rules.md#eigsh-and-svds), reverse and forward mode, without
    differentiating through Lanczos:

    * eigenvalues: Hellmann–Feynman, λ̇_i = v_iᴴ Ȧ v_i (one vjp/jvp of matvec at the
      computed vectors). For a Tensor the gradient is Hermitian, as in eigh. A degenerate
      block gets the derivative of its symmetric functions (sums) right; its individual
      values are not differentiable there. Second order (create_graph, tf.hvp) works.
    * eigenvectors: the projected linear solve of Xie, Liu & Wang (PRB 101, 245139, 2020)
      for the uncomputed part of the spectrum (MINRES, products with A only) plus eigh's
      broadened terms among the k computed pairs (a degenerate block among them gets
      eigh's exact limit: right for losses invariant under rotations of the block). Only
      gauge-invariant losses of the vectors are meaningful (|v_iᴴ b|², projectors): the
      component of v̄_i along v_i is dropped, and for complex vectors a loss depending on
      their phase raises GaugeError (``check_gauge=False`` skips the check). A block cut
      by k (λ_k equal to the first uncomputed value) leaves the derivative of its vectors
      undefined: LinAlgError saying to raise k. Second derivatives of vector losses raise
      UnsupportedADError.

    Examples
    --------
    >>> a = tf.tensor(np.diag([1.0, 2.0, 3.0, 4.0]))
    >>> np.round(tf.linalg.eigsh(a, k=2).values.numpy(), 6)
    array([3., 4.])
    """
    if which not in _WHICH:
        raise ShapeError(f"{_NAME}: which must be one of {_WHICH}, got {which!r}")
    from scipy.sparse.linalg import LinearOperator, eigsh as _scipy_eigsh
    if callable(a) and not isinstance(a, (Tensor, np.ndarray)):
        if n is None:
            raise ShapeError(f"{_NAME}: a matvec function needs the size n=...")
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 2:
            raise ShapeError(f"{_NAME}: n must be an int >= 2, got {n!r}")
        n = int(n)
        inputs = params_input(params, _NAME)
        v0d = None if v0 is None else np.asarray(v0.numpy() if isinstance(v0, Tensor) else v0)
        dtype = function_dtype(_NAME, [(a, n, n, "matvec")], inputs, v0d)
        op = LinearMap(_NAME, (n, n), dtype, matvec=a, params=inputs)
        fn: Callable[..., Any] | None = a
        A: Any = LinearOperator((n, n), matvec=op.mv, dtype=dtype)
    else:
        if params:
            raise ShapeError(f"{_NAME}: params are the extra arguments of a matvec "
                             f"function; a matrix a takes none")
        t = matrix_input(a, _NAME, square=True, check_finite=check_finite)
        if t.ndim != 2:
            raise ShapeError(f"{_NAME}: a stack of matrices (shape {t.shape}) is not "
                             f"supported; call eigsh on each matrix")
        if n is not None and n != t.shape[0]:
            raise ShapeError(f"{_NAME}: n = {n} does not match the matrix of shape {t.shape}")
        n = t.shape[0]
        _hermitian_or_raise(t._data)
        inputs = (t,)
        dtype = t._data.dtype
        op = LinearMap(_NAME, (n, n), dtype, dense=t._data)
        fn = None
        A = t._data
    k = check_k(k, n, _NAME, "n")
    start = start_vector(v0, n, dtype, _NAME)
    w, V = arpack_call(lambda: _scipy_eigsh(A, k=k, which=which, v0=start, tol=tol, ncv=ncv,
                                            maxiter=maxiter), _NAME)
    check_finite_or_raise(w, _NAME)
    order = np.argsort(w, kind="stable")
    w = np.ascontiguousarray(w[order]).astype(np.finfo(dtype).dtype)
    V = np.ascontiguousarray(V[:, order]).astype(dtype)
    call = _Call(op, fn, n, dtype, bool(check_gauge))
    values, vectors = apply(_eigsh_op, inputs, (w, V), call)
    return EigshResult(values, vectors)
