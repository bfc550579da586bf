"""tf.linalg.svds: k singular triplets of a matrix or operator (ARPACK), differentiable.

``u, s, vh = svds(a, k)`` for a dense Tensor ``a`` (m x n), or
``svds((matvec, rmatvec), k, shape=(m, n), params=(θ...))`` for an operator given by
functions of Tensors (A·x and Aᴴ·y). The primal is scipy.sparse.linalg.svds; s comes
ascending (scipy's order), u (m, k) and vh (k, n) hold the matching singular vectors.

Rules (docs/rules.md#eigsh-and-svds): the k triplets are the truncated SVD's
(docs/truncated_svd.md; Francuz, Schuch & Vanhecke 2025), with the coupling to the
uncomputed singular subspace solved by MINRES with products by A and Aᴴ only. With
D = Ȧ V, E = Ȧᴴ U, C = UᴴD, P = I − UUᴴ, Q = I − VVᴴ, A⊥ = PAQ:

    ṡ = Re diag(C);   u̇_j = U(thin rule)_j + x_j,   v̇_j = V(thin rule)_j + y_j,
    (s_j² − A⊥A⊥ᴴ) x_j = s_j P d_j + A⊥ Q e_j,   y_j = (Q e_j + A⊥ᴴ x_j)/s_j
    reverse: the same system with (P ū_j, Q v̄_j) on the right gives (p_j, q_j), and
    Ā = U core Vᴴ + Pm Vᴴ + U Qmᴴ  (core: tf.linalg.svd's thin core among the k),
    i.e. θ̄ = vjp of matvec at the columns of V with seeds U·core + Pm, plus at the
    columns of Qm with seeds U.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable, Literal, Sequence, cast

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import EPS
from .._engine import apply
from .._errors import ShapeError, UnsupportedADError
from .._ops._util import to_tensor
from .._ops.registry import defop
from .._tensor import Tensor
from ._common import check_finite_or_raise, mH, matrix_input
from ._iterative import (LinearMap, arpack_call, check_k, fn_jvp, fn_jvp_graph, fn_vjp,
                         fn_vjp_graph, function_dtype, guarded_tangent, params_input,
                         projected_solve, start_vector)
from .svd import _check_phase, _core_tensor, _gap_inverse, _poles, _same_block
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["SvdsResult", "svds"]

SvdsResult = namedtuple("SvdsResult", ["u", "s", "vh"])
SvdsResult.__doc__ = """Result of tf.linalg.svds: u (m, k), s (k,) ascending, vh (k, n) with
A @ vh[i].conj() = s[i] * u[:, i].

The result of :func:`svds` (a named tuple).

Attributes
----------
u : Tensor
    Left singular vectors (m, k).
s : Tensor
    The k singular values, ascending (scipy's order).
vh : Tensor
    Right singular vectors, conjugate-transposed (k, n).
"""

_NAME = "tf.linalg.svds"


class _Call:
    """What the rules of one svds call need (the node's ctx)."""
    __slots__ = ("op", "fns", "shape", "dtype", "check_gauge")

    def __init__(self, op: LinearMap, fns: tuple[Callable[..., Any], Callable[..., Any]] | None,
                 shape: tuple[int, int], dtype: np.dtype[Any], check_gauge: bool) -> None:
        self.op = op
        self.fns = fns          # (matvec, rmatvec), or None for a dense Tensor (the input)
        self.shape = shape
        self.dtype = dtype
        self.check_gauge = check_gauge


def _eps2_block(s: Any, m: int, n: int) -> tuple[Any, Any]:
    """ε² and the degenerate-block mask of tf.linalg.svd's rules for the k computed values:
    ε = max(m, n)·eps·s_max² (the gaps s_j² − s_i² have the units of s²), blocks of values
    within δ = max(m, n)·eps·s_max."""
    smax = float(np.max(s)) if s.size else 0.0
    rel = max(m, n) * EPS[np.dtype(s.dtype)]
    delta = rel * smax
    sd = np.asarray(s, np.float64)
    order = np.argsort(sd)
    block_sorted = _same_block(sd[order], delta)
    block = np.zeros_like(block_sorted)
    block[np.ix_(order, order)] = block_sorted
    return np.float64((rel * smax * smax) ** 2), block


def _unresolved(s: Any, j: int) -> str:
    return (f"s_{j} = {float(s[j]):.6g} is (nearly) degenerate with a singular value that was "
            f"not computed (or is 0), so the derivative of its singular vectors is not "
            f"defined by the k computed triplets; raise k to include the whole degenerate "
            f"block (or use a loss of the singular values)")


def _coupling(call: _Call, U: Any, V: Any, s: Any, ru: Any, rv: Any) -> tuple[Any, Any]:
    """(X, Y) with columns solving [s_j I, −A⊥; −A⊥ᴴ, s_j I][x_j; y_j] = [ru_j; rv_j] for
    ru_j ⊥ U, rv_j ⊥ V, by MINRES on the smaller side (ndarrays)."""
    m, n = call.shape
    op = call.op
    dt = call.dtype

    def P(Z: Any) -> Any:
        return Z - U @ (mH(U) @ Z)

    def Q(Z: Any) -> Any:
        return Z - V @ (mH(V) @ Z)
    s2 = s.astype(np.float64) ** 2
    delta = float(np.sqrt(_eps2_block(s, m, n)[0]))      # ε, in the units of s²
    if m <= n:
        # x_j = (s_j² − A⊥A⊥ᴴ)⁻¹ (s_j ru_j + A⊥ rv_j), y_j = (rv_j + A⊥ᴴ x_j)/s_j
        b = ru * s + P(op.mv(rv))
        X = projected_solve(lambda x: P(op.mv(Q(op.rmv(x)))), U, s2, -b, delta, _NAME,
                             lambda j: _unresolved(s, j)).astype(dt)
        Y = (rv + Q(op.rmv(X))) / s
    else:
        # the same with the roles of A and Aᴴ swapped
        b = rv * s + Q(op.rmv(ru))
        Y = projected_solve(lambda y: Q(op.rmv(P(op.mv(y)))), V, s2, -b, delta, _NAME,
                             lambda j: _unresolved(s, j)).astype(dt)
        X = (ru + P(op.mv(Y))) / s
    return X, Y


def _vjp(call: _Call, needs: Sequence[bool], gs: Any, xs: Any, ys: Any) -> Any:
    gu, gsv, gvh = gs
    u, s, vh = ys
    if isinstance(u, Tensor) or any(isinstance(g, Tensor) for g in gs):
        return _vjp_graph(call, needs, gs, xs, ys)
    m, n = call.shape
    dt = call.dtype
    V = mH(vh)
    if gu is None and gvh is None:
        Sv = u * gsv.astype(s.dtype)                                  # Ā = U diag(s̄) Vᴴ
        Xs, Ss = V, Sv.astype(dt)
    else:
        gu = None if gu is None else gu.astype(dt, copy=False)
        gV = None if gvh is None else mH(gvh.astype(dt, copy=False))
        X = None if gu is None else mH(u) @ gu                        # UᴴŪ
        Y = None if gV is None else mH(V) @ gV                        # VᴴV̄
        if call.check_gauge and dt.kind == "c":
            _check_phase(X, Y, gu, None if gV is None else mH(gV), (), _NAME,
                         "singular vectors")
        eps2, block = _eps2_block(s, m, n)
        core, _ = _core_tensor(X, Y, s, gsv, np.asarray(eps2), block)
        ru = np.zeros(u.shape, dt) if gu is None else gu - u @ X      # P Ū
        rv = np.zeros(V.shape, dt) if gV is None else gV - V @ Y      # Q V̄
        Pm, Qm = _coupling(call, u, V, s, ru, rv)
        # Re⟨Pm_j, Ȧ v_j⟩ + Re⟨Qm_j, Ȧᴴ u_j⟩ = Re⟨Pm_j, Ȧ v_j⟩ + Re⟨u_j, Ȧ Qm_j⟩
        Xs = np.concatenate([V, Qm], axis=1)
        Ss = np.concatenate([(u @ core).astype(dt) + Pm, u.astype(dt)], axis=1)
    if call.fns is None:
        return (Ss @ mH(Xs),)
    return fn_vjp(call.fns[0], xs, Xs, Ss, needs)


def _vjp_graph(call: _Call, needs: Sequence[bool], gs: Any, xs: Any, ys: Any) -> Any:
    """The pullback on Tensors (create_graph): the singular-value terms only, recorded; a
    cotangent of the vectors raises."""
    gu, gsv, gvh = gs
    u, s, vh = ys
    if gu is not None or gvh is not None:
        raise UnsupportedADError(
            f"{_NAME}: second derivatives of a loss of the singular vectors are not "
            f"implemented (create_graph=True, tf.hvp, tf.hessian); those of the singular "
            f"values are. Use the dense tf.linalg.svd for a second derivative of the vectors")
    if gsv is None:
        return (None,) * len(xs)
    u, vh = to_tensor(u), to_tensor(vh)
    S = u * to_tensor(gsv).astype(u.real.dtype)
    if call.fns is None:
        return (S @ vh,)
    return fn_vjp_graph(call.fns[0], xs, mH(vh), S, needs)


def _tangents_DE(call: _Call, ts: Any, xs: Any, U: Any, V: Any, graph: bool) -> Any:
    """(Ȧ V, Ȧᴴ U), or None without a tangent."""
    if call.fns is None:
        ta = ts[0]
        return ta @ V, mH(ta) @ U
    jvp = fn_jvp_graph if graph else fn_jvp
    m, n = call.shape
    D = jvp(call.fns[0], xs, ts, V, call.dtype, m)
    if D is None:
        return None
    return D, jvp(call.fns[1], xs, ts, U, call.dtype, n)


def _jvp(call: _Call, ts: Any, xs: Any, ys: Any) -> Any:
    u, s, vh = ys
    graph = isinstance(u, Tensor)
    V = mH(vh)
    DE = _tangents_DE(call, ts, xs, u, V, graph)
    if DE is None:
        return (None, None, None)
    D, E = DE
    ds = np.real(np.diagonal(mH(u) @ D))
    if graph:
        plain = _tangents_DE(call, [None if t is None else t._data for t in ts],
                             [x._data for x in xs], u._data, V._data, False)
        du, dvh = _vector_tangents(call, plain[0], plain[1], u._data, s._data, vh._data)
        inputs = list(ts) + list(xs) + [u, vh]
        return (guarded_tangent(du, inputs, _NAME), ds, guarded_tangent(dvh, inputs, _NAME))
    du, dvh = _vector_tangents(call, D, E, u, s, vh)
    return (du, ds, dvh)


def _vector_tangents(call: _Call, D: Any, E: Any, u: Any, s: Any, vh: Any) -> Any:
    m, n = call.shape
    dt = call.dtype
    D, E = D.astype(dt, copy=False), E.astype(dt, copy=False)
    V = mH(vh)
    C = mH(u) @ D                                                     # UᴴȦV
    eps2, block = _eps2_block(s, m, n)
    minus, plus = _poles(s, np.asarray(eps2), block)
    herm = minus * (0.5 * (C + mH(C)))
    anti = plus * (0.5 * (C - mH(C)))
    du = u @ (herm + anti)
    if dt.kind == "c":
        sinv = _gap_inverse(s * s, np.asarray(eps2)[..., None], False) * s
        du = du + u * (1j * (np.imag(np.diagonal(C)) * sinv))[None, :]
    dv = V @ (herm - anti)
    Xc, Yc = _coupling(call, u, V, s, D - u @ C, E - V @ mH(C))
    return du + Xc, mH(dv + Yc)


_svds_op = defop("svds", _vjp, _jvp, complex=True, batched=False, second_order=False,
                 doc="k singular triplets by ARPACK; values u_iᴴȦv_i, vectors by the "
                     "truncated-SVD coupling solved with MINRES (second order: values only)")


@_docs.shared(PARAMS, RAISES)
def svds(a: ArrayLike | Tensor | tuple[Callable[..., Any], Callable[..., Any]], k: int = 6,
         which: Literal["LM", "SM"] = "LM", *, shape: tuple[int, int] | None = None,
         params: Sequence[ArrayLike | Tensor] = (), v0: ArrayLike | None = None,
         tol: float = 0, ncv: int | None = None, maxiter: int | None = None,
         check_gauge: bool = True, check_finite: bool = True) -> SvdsResult:
    r"""k singular values and vectors of a matrix or operator (ARPACK), differentiable.

    Parameters
    ----------
    a : array_like or tuple of callable
        A Tensor/array (m, n) (a stack raises ShapeError), or a pair of functions
        ``(matvec, rmatvec)`` of Tensors, ``matvec(x, *params)`` = A·x for x (n,) and
        ``rmatvec(y, *params)`` = Aᴴ·y for y (m,), written with tenferro ops so that they can
        be differentiated in ``params``; they must not close over tensors that require grad.
    k : int, optional
        The number of singular triplets. Default 6.
    which : {'LM', 'SM'}, optional
        The largest or smallest singular values. Default 'LM'.
    shape : tuple of int, optional
        ``(m, n)``; required for functions.
    params : sequence of array_like, optional
        The parameters of the functions, differentiable.
    v0 : array_like, optional
        Start vector of length min(m, n); default a fixed pseudo-random one.
    tol : float, optional
        ARPACK's tolerance. Default 0.
    ncv, maxiter : int, optional
        As in ``scipy.sparse.linalg.svds`` (solver 'arpack').
    check_gauge : bool, optional
        Raise GaugeError for a phase-dependent loss of complex vectors. Default True.
    check_finite

    Returns
    -------
    SvdsResult
        Named tuple ``(u, s, vh)``: s (k,) ascending (scipy's order; tf.linalg.svd's is
        descending), u (m, k), vh (k, n).

    Raises
    ------
    ShapeError
        Batched input, bad k, shape or v0.
    LinAlgError
        Non-finite input, ARPACK without convergence (raise maxiter or ncv); (backward) a
        value degenerate with an uncomputed one.
    UnsupportedADError
        A function closing over a tensor that requires grad; second derivatives of vector
        losses.
    GaugeError
        (backward) A loss depending on complex vectors' phases.

    Notes
    -----
    Derivative: :math:`\dot s_i = \operatorname{Re} u_i^H \dot A v_i`; vectors by the thin
    SVD rule plus the coupling to the uncomputed subspace [Francuz, Schuch & Vanhecke 2025]
    (docs/rules.md#eigsh-and-svds).

    Derivatives (docs/rules.md#eigsh-and-svds), reverse and forward mode: singular values
    ṡ_i = Re u_iᴴ Ȧ v_i (second order works); singular vectors by tf.linalg.svd's thin
    rule among the k computed triplets plus the exact coupling to the uncomputed singular
    subspace (the truncated SVD's, docs/truncated_svd.md), solved by MINRES with products
    by A and Aᴴ. Only gauge-invariant losses of the vectors are meaningful (for complex
    vectors a phase-dependent loss raises GaugeError unless ``check_gauge=False``); a
    value degenerate with an uncomputed one (or 0 when m ≠ n) leaves the vector derivative
    undefined: LinAlgError. Second derivatives of vector losses raise UnsupportedADError.

    Examples
    --------
    >>> a = tf.tensor(np.diag([1.0, 2.0, 3.0, 4.0]))
    >>> np.round(tf.linalg.svds(a, k=2).s.numpy(), 6)
    array([3., 4.])
    """
    if which not in ("LM", "SM"):
        raise ShapeError(f"{_NAME}: which must be 'LM' or 'SM', got {which!r}")
    from scipy.sparse.linalg import LinearOperator, svds as _scipy_svds
    fns: tuple[Callable[..., Any], Callable[..., Any]] | None
    if isinstance(a, tuple) and len(a) == 2 and all(callable(f) for f in a):
        if shape is None:
            raise ShapeError(f"{_NAME}: functions (matvec, rmatvec) need shape=(m, n)")
        try:
            m, n = (int(x) for x in shape)
        except (TypeError, ValueError):
            raise ShapeError(f"{_NAME}: shape must be a pair of ints (m, n), got "
                             f"{shape!r}") from None
        if m < 2 or n < 2:
            raise ShapeError(f"{_NAME}: shape must have m, n >= 2, got {shape!r}")
        inputs = params_input(params, _NAME)
        v0d = None if v0 is None else np.asarray(v0.numpy() if isinstance(v0, Tensor) else v0)
        dtype = function_dtype(_NAME, [(a[0], n, m, "matvec"), (a[1], m, n, "rmatvec")],
                               inputs, v0d)
        op = LinearMap(_NAME, (m, n), dtype, matvec=a[0], rmatvec=a[1], params=inputs)
        fns = (a[0], a[1])
        A: Any = LinearOperator((m, n), matvec=op.mv, rmatvec=op.rmv, dtype=dtype)
    elif callable(a) and not isinstance(a, (Tensor, np.ndarray)):
        raise ShapeError(f"{_NAME}: an operator is given by a pair of functions "
                         f"(matvec, rmatvec), not one function")
    else:
        if params:
            raise ShapeError(f"{_NAME}: params are the extra arguments of the functions "
                             f"(matvec, rmatvec); a matrix a takes none")
        t = matrix_input(cast(Any, a), _NAME, check_finite=check_finite)
        if t.ndim != 2:
            raise ShapeError(f"{_NAME}: a stack of matrices (shape {t.shape}) is not "
                             f"supported; call svds on each matrix")
        m, n = t.shape
        if shape is not None and tuple(shape) != (m, n):
            raise ShapeError(f"{_NAME}: shape={shape!r} does not match the matrix's {t.shape}")
        inputs = (t,)
        dtype = t._data.dtype
        op = LinearMap(_NAME, (m, n), dtype, dense=t._data)
        fns = None
        A = t._data
    k = check_k(k, min(m, n), _NAME, "min(m, n)")
    start = start_vector(v0, min(m, n), dtype, _NAME)
    u, s, vh = arpack_call(lambda: _scipy_svds(A, k=k, which=which, v0=start, tol=tol,
                                               ncv=ncv, maxiter=maxiter, solver="arpack"),
                           _NAME)
    check_finite_or_raise(s, _NAME)
    order = np.argsort(s, kind="stable")
    real = np.finfo(dtype).dtype
    outs = (np.ascontiguousarray(u[:, order]).astype(dtype), np.ascontiguousarray(s[order]).astype(real),
            np.ascontiguousarray(vh[order]).astype(dtype))
    call = _Call(op, fns, (m, n), np.dtype(dtype), bool(check_gauge))
    return SvdsResult(*apply(_svds_op, inputs, outs, call))
