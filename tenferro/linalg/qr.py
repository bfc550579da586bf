"""tf.linalg.qr: A = QR, with reverse and forward rules (docs/rules.md#qr).

LAPACK's geqrf leaves R with a real diagonal (of either sign) also for complex A; the
rules differentiate that choice of Q and R (the diagonal of R stays real), so they hold
wherever the leading min(m, n) columns of A are linearly independent (R's leading
square block nonsingular). At a rank-deficient A the backward raises LinAlgError.

Notation: copyltu(M) = tril(M) + tril₋(M)ᴴ with real diagonal = Φ(M) + Φ(M)ᴴ, Φ = tril
with the diagonal halved. References: Walter & Lehmann 2018, Liao et al. 2019
(arXiv:1903.09650), Roberts & Roberts (arXiv:2009.10071) for the wide case.

mode="complete" with m > n: the last m − n columns of Q span the orthogonal complement of
A's range and are not unique (any unitary mix of them is as good). Reverse mode through
them raises UnsupportedADError unless their cotangent is zero (the same policy as svd's
full_matrices=True); forward mode gives them the tangent that rotates them least,
Q̇₂ = −Q₁(Q̇₁ᴴQ₂) (the one keeping Q unitary with Q₂ᴴQ̇₂ = 0), which is a tangent of a
smooth choice but not necessarily of the one LAPACK makes.
"""
import math
from collections import namedtuple
from typing import Any, Literal, TypeAlias, overload

import numpy as np
from numpy.typing import ArrayLike

from .._kernels import load as load_kernel
from .._engine import apply
from .._errors import LinAlgError, ShapeError, UnsupportedADError
from .._tensor import Tensor
from .._ops.registry import defop, register
from .._rule_api import is_tracked, record_pullback
from ..builders import builder
from . import _lapack
from ._common import field_aliases, matrix_input
from .._dtypes import eps_of
from ._common import mH
from .triangular import check_nonsingular, halved, trsolve
from .._ops import _docs
from ._glossary import PARAMS, RAISES

_backprop_kernel = load_kernel("triangular_backprop").qr_backprop

__all__ = ["qr", "QRResult", "qr_ad"]

QRResult = namedtuple("QRResult", ["q", "r"])
QRResult.__doc__ = """Result of tf.linalg.qr: a = q @ r (q with orthonormal columns, r upper triangular).

Also ``Q`` and ``R`` (aliases of the fields). The result of :func:`qr` (a named tuple).

Attributes
----------
q : Tensor
    The factor with orthonormal columns.
r : Tensor
    The upper triangular factor (real diagonal).
"""
field_aliases(QRResult, Q="q", R="r")

_NAME = "tf.linalg.qr"
_Mode: TypeAlias = Literal["reduced", "complete", "r"]


def _payload(v: Any) -> Any:
    return v._data if isinstance(v, Tensor) else v


def _check_rank(r: Any, m: Any) -> None:
    d = _payload(r)
    check_nonsingular(d, _NAME, "is rank deficient (R has a zero on its diagonal), so Q "
                      "and R are not differentiable there", rtol=m * eps_of(d.dtype))


def _copyltu(m: Any) -> Any:
    p = halved(m)
    return p + mH(p)


def _rev_tall(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """Ā for A = QR with m ≥ n (Q m×n, R n×n); gq or gr may be None (zero).

    M = R R̄ᴴ − Q̄ᴴ Q;  Ā = (Q̄ + Q copyltu(M)) R⁻ᴴ.

    On ndarrays (a plain backward) one call of the compiled kernel
    (_kernels/triangular_backprop.pyx qr_backprop: only M's lower triangle, using R's
    triangle; ?hemm for Q copyltu(M); the recursive solve for R⁻ᴴ); on Tensors
    (create_graph) the formula in recorded ops (:func:`_rev_tall_formula`).
    """
    if gq is None and gr is None:
        _check_rank(r, q.shape[-2])
        return np.zeros(q.shape, q.dtype)
    if (isinstance(q, Tensor) or isinstance(r, Tensor) or isinstance(gq, Tensor) or
            isinstance(gr, Tensor)):
        _check_rank(r, q.shape[-2])
        return _rev_tall_formula(q, r, gq, gr)
    try:   # the kernel checks the rank (for free) before computing anything
        return _backprop_kernel(q, r, gq, gr, q.shape[-2] * eps_of(r.dtype))
    except LinAlgError:
        _check_rank(r, q.shape[-2])   # the error message naming the diagonal entry
        raise


def _rev_tall_formula(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """_rev_tall's formula, in NumPy calls that record on Tensors (and run on ndarrays)."""
    mm = None if gr is None else r @ mH(gr)
    if gq is not None:
        t = mH(gq) @ q
        mm = -t if mm is None else mm - t
    b = q @ _copyltu(mm)
    if gq is not None:
        b = b + gq
    return trsolve(r, b, lower=False, trans=2, left=False)   # b R⁻ᴴ


def _qr_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    if isinstance(ys[0], Tensor):
        # create_graph: one recorded node (_rule_api.record_pullback)
        m, n = xs[0].shape[-2:]
        shape = _Shape(xs[0].shape, xs[0].dtype)

        def pullback(*v: Any) -> Any:
            return _qr_pullback(ctx, v[:2], v[2:4], shape if v[4] is None else v[4])
        return record_pullback(pullback, pullback,
                               # A itself is read only by the wide case
                               tuple(gs) + tuple(ys) + (xs[0] if m < n else None,))
    return _qr_pullback(ctx, gs, ys, xs[0])


class _Shape:
    """Stands for A where the pullback reads only its shape, dtype and size."""
    def __init__(self, shape: Any, dtype: Any) -> None:
        self.shape, self.dtype, self.size = shape, dtype, math.prod(shape)


def _qr_pullback(ctx: Any, gs: Any, ys: Any, a: Any) -> Any:
    """Ā (a 1-tuple) from (Q̄, R̄), (Q, R) and A (read only when m < n; else anything with
    A's shape and dtype): the compiled kernel on ndarrays, the formula in recorded ops on
    Tensors."""
    q, r = ys
    gq, gr = gs
    m, n = a.shape[-2], a.shape[-1]
    if a.size == 0:
        return (np.zeros(a.shape, a.dtype),)
    if m >= n:
        if ctx and m > n:   # complete: Q is m×m, R is m×n with zero rows below n
            if gq is not None:
                extra = _payload(gq)[..., n:]
                if np.any(extra != 0):
                    raise UnsupportedADError(
                        f"{_NAME}(mode='complete'): the last {m - n} columns of Q (m={m} > "
                        f"n={n}) are not unique, so a loss that depends on them has no "
                        "derivative; use mode='reduced', or use only q[..., :n]")
                gq = gq[..., :n]
            q, r = q[..., :n], r[..., :n, :]
            gr = None if gr is None else gr[..., :n, :]
        return (_rev_tall(q, r, gq, gr),)
    # m < n: A = [X | Y], R = [U | D]:  Ȳ = Q D̄,  X̄ = (m ≥ n rule)(Q, U, Q̄ + Y D̄ᴴ, Ū)
    u = r[..., :, :m]
    gu = gd = None
    if gr is not None:
        gu, gd = gr[..., :, :m], gr[..., :, m:]
        extra = a[..., :, m:] @ mH(gd)
        gq = extra if gq is None else gq + extra
    gx = _rev_tall(q, u, gq, gu)
    gy = np.zeros(a.shape[:-1] + (n - m,), gx.dtype) if gd is None else q @ gd
    return (np.concatenate([gx, gy], -1),)


def _jvp_tall(q: Any, r: Any, ta: Any) -> Any:
    """(Q̇, Ṙ) for m ≥ n: X = ȦR⁻¹, B = QᴴX, W = triu(B + Bᴴ) with halved diagonal,
    Q̇ = X − QW, Ṙ = WR (W = ṘR⁻¹: upper triangular with real diagonal)."""
    _check_rank(r, q.shape[-2])
    x = trsolve(r, ta, lower=False, left=False)
    b = mH(q) @ x
    w = halved(b + mH(b), lower=False)
    return x - q @ w, w @ r


def _qr_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    ta = ts[0]
    q, r = ys
    m, n = ta.shape[-2], ta.shape[-1]
    if ta.size == 0:
        return np.zeros(q.shape, q.dtype), np.zeros(r.shape, r.dtype)
    if m >= n:
        if not (ctx and m > n):
            return _jvp_tall(q, r, ta)
        q1, q2 = q[..., :n], q[..., n:]
        dq1, dr1 = _jvp_tall(q1, r[..., :n, :], ta)
        dq2 = -(q1 @ (mH(dq1) @ q2))
        dr2 = np.zeros(r.shape[:-2] + (m - n, n), dr1.dtype)
        return np.concatenate([dq1, dq2], -1), np.concatenate([dr1, dr2], -2)
    # m < n: B = QᴴȦ, C = B₁R₁⁻¹ (R₁ = U, the leading m×m block), W = triu(C + Cᴴ) with
    # halved diagonal, Ω = C − W = QᴴQ̇ (skew-Hermitian), Q̇ = QΩ, Ṙ = B − ΩR.
    u = r[..., :, :m]
    _check_rank(u, q.shape[-2])
    b = mH(q) @ ta
    c = trsolve(u, b[..., :, :m], lower=False, left=False)
    om = c - halved(c + mH(c), lower=False)
    return q @ om, b - om @ r


_qr_op = defop("qr", _qr_vjp, _qr_jvp)


def _empty_qr(d: Any, mode: Any) -> Any:
    m, n = d.shape[-2:]
    batch = d.shape[:-2]
    k = m if mode == "complete" else min(m, n)
    q = np.zeros(batch + (m, k), d.dtype)
    if mode == "complete" or n == 0:
        q[..., np.arange(k), np.arange(k)] = 1   # Q = I is a valid factor of an empty A
    return q, np.zeros(batch + (k, n), d.dtype)


@overload
def qr(a: ArrayLike, mode: Literal["reduced", "complete"] = "reduced", *,
       check_finite: bool = True) -> QRResult: ...
@overload
def qr(a: ArrayLike, mode: Literal["r"], *, check_finite: bool = True) -> Tensor: ...


@_docs.shared(PARAMS, RAISES)
def qr(a: ArrayLike, mode: _Mode = "reduced", *,
       check_finite: bool = True) -> QRResult | Tensor:
    r"""QR decomposition A = Q R of a (stack of) m×n matrix, like ``numpy.linalg.qr``.

    Parameters
    ----------
    a : array_like
        An m x n matrix or a stack of them.
    mode : {'reduced', 'complete', 'r'}, optional
        'reduced': q (m x k), r (k x n), k = min(m, n); 'complete': q (m x m), r (m x n);
        'r': r alone (k x n), as a Tensor. Default 'reduced'.
    check_finite

    Returns
    -------
    QRResult or Tensor
        Named tuple ``(q, r)``, or r alone for ``mode='r'``. R has a real diagonal
        (LAPACK's convention, not made positive).

    Raises
    ------
    ShapeError
        If ``a.ndim < 2``, or ``mode`` is unknown.
    LinAlgError
        On non-finite input; (in the rules) for a rank-deficient A.
    UnsupportedADError
        (backward, 'complete' with m > n) For a nonzero cotangent on Q's extra columns.

    Notes
    -----
    Derivative: for :math:`m \ge n`, :math:`M = R\bar R^H - \bar Q^H Q`,
    :math:`\bar A = (\bar Q + Q\,\mathrm{copyltu}(M)) R^{-H}` [Walter & Lehmann 2018;
    Liao et al. 2019; Roberts & Roberts 2020 for wide A] (docs/rules.md#qr, also for wide A).

    mode: "reduced" -> (q (m×k), r (k×n)), k = min(m, n); "complete" -> (q (m×m),
    r (m×n)); "r" -> r alone (k×n), as a Tensor. Returns ``QRResult(q, r)`` otherwise.
    R has a real diagonal (LAPACK's convention, not made positive). Differentiable in
    reverse and forward mode where A's leading k columns are independent; in "complete"
    mode with m > n the extra columns of Q are not differentiable (see the module doc).

    Examples
    --------
    >>> a = tf.tensor([[3.0, 1.0], [1.0, 2.0]])
    >>> q, r = tf.linalg.qr(a)
    >>> np.allclose(q @ r, a), np.allclose(q.mT @ q, np.eye(2))
    (True, True)
    """
    if mode not in ("reduced", "complete", "r"):
        raise ShapeError(f"{_NAME}: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a = matrix_input(a, _NAME, check_finite=check_finite)
    d = a._data
    if mode == "r" and not is_tracked(a):
        return Tensor._wrap(_empty_qr(d, "r")[1] if d.size == 0 else _lapack.qr(d, mode="r"))
    full = "complete" if mode == "complete" else "reduced"
    q, r = _empty_qr(d, full) if d.size == 0 else _lapack.qr(d, mode=full)
    q, r = apply(_qr_op, (a,), (q, r), ctx=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


register(qr, methods=("qr",))
qr_ad = builder(qr)
