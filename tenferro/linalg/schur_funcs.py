"""Schur-based matrix functions: tf.linalg.sqrtm, tf.linalg.logm, tf.linalg.funm, with
reverse and forward rules through their Fréchet derivatives (docs/rules.md#sqrtm-and-logm).

Values are scipy.linalg's (sqrtm: the recursive blocked Schur method; logm: inverse
scaling and squaring, Al-Mohy & Higham 2012), computed in double precision and rounded
back to the input's precision. As in SciPy, the principal square root or logarithm of
a real matrix with a negative real eigenvalue is complex, and then the result is complex
(for a stack: the whole stack, if any of its matrices' is); otherwise a real input gives
a real result. (JAX's sqrtm is always complex; SciPy's choice is kept, since users call
these by SciPy's names.)

sqrtm
-----
X = A^{1/2}; differentiating X X = A gives the Sylvester equation X L + L X = E for the
Fréchet derivative L = L(A, E) (Higham 2008, "Functions of Matrices", §6.1), so

    JVP  Ẋ = S_{X,X}(Ȧ)          VJP  Ā = S_{Xᴴ,Xᴴ}(X̄)

(S as in sylvester.py). A plain pullback reuses the Schur form of X kept by the primal
(one ?trsyl per matrix); with create_graph the rules call the differentiable
solve_sylvester, so every order is differentiable by recursion. A singular A has a
square root (when it has one) that is not differentiable: X and −X then share the
eigenvalue 0 and the derivative raises LinAlgError (never inf or NaN silently).

logm
----
The Fréchet derivative is the upper-right block of the logarithm of a block matrix
(Higham 2008, Thm 3.6, eq. (3.16); Al-Mohy, Higham & Relton 2013):

    log [[A, cE], [0, A]] = [[log A, c·L(A, E)], [0, log A]],

with c scaling ‖cE‖₁ to about max(‖A‖₁, 1) (L is linear in E: c changes only rounding).

    JVP  Ẋ = L(A, Ȧ)             VJP  Ā = conj L(Aᵀ, conj X̄)

The adjoint of E ↦ L_f(A, E) is G ↦ L_{f*}(Aᴴ, G) with f*(z) = conj f(conj z) (in an
eigenbasis L is a Hadamard product with the divided differences of f; Higham 2008 §3.2),
and L_{f*}(B, G) = conj L_f(conj B, conj G). Off the branch cut f* = f and this is the
familiar L(Aᴴ, X̄); but a real matrix with a negative eigenvalue λ has it on the cut,
where f*(λ) = conj log λ is the other branch, and L(Aᴴ, X̄) would be wrong. The form
used, through Aᵀ (the eigenvalues of A), is right in both cases. With create_graph the
block logarithm is logm itself, so every order is differentiable by recursion. A singular A (an eigenvalue 0) raises
LinAlgError: its logarithm does not exist.

funm
----
``funm(a, "exp" | "log" | "sqrt" | "sin" | "cos" | "sinh" | "cosh")`` evaluates those
through matrix_exp, logm and sqrtm (sin, cos, sinh, cosh from exp(±iA) and exp(±A)), so
their derivatives are exact to every order. A callable ``func`` (a function of Tensors,
applied elementwise to eigenvalues, e.g. ``tf.exp`` or ``lambda w: w ** 3``) goes through
the eigendecomposition A = V diag(f(λ)) V⁻¹ (``hermitian=True``: tf.linalg.eigh,
V diag(f(λ)) Vᴴ), differentiable as eig/eigh are. For a non-normal A this is as
inaccurate as the condition number of V, and fails for repeated eigenvalues of a
non-Hermitian A (eig's derivative does not exist there) — like scipy.linalg.funm, whose
Schur–Parlett recurrence divides by differences of eigenvalues. Prefer the named
functions, or ``hermitian=True`` for a Hermitian A.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import scipy.linalg as _sla
from numpy.typing import ArrayLike

from .._engine import apply1
from .._errors import LinAlgError, ShapeError
from .._ops.registry import defop
from .._rule_api import is_tracked
from .._tensor import Tensor
from ..builders import builder
from ._common import batch_index, matrix_input, mH
from .eig import eig
from .eigh import eigh
from .matfuncs import block_frechet, matrix_exp, norm1, wide_dtype
from .solve import solve
from .sylvester import schur_stack, solve_sylvester, sylvester_schur
from .._ops import _docs
from ._glossary import PARAMS, RAISES

__all__ = ["sqrtm", "logm", "funm", "sqrtm_ad", "logm_ad", "funm_ad"]


def _narrow(out: Any, dtype: Any) -> Any:
    """``out`` rounded to the precision of the input dtype (complex stays complex)."""
    single = dtype in (np.float32, np.complex64)
    if out.dtype.kind == "c":
        target = np.dtype(np.complex64 if single else np.complex128)
    else:
        target = np.dtype(np.float32 if single else np.float64)
    return out if out.dtype == target else out.astype(target)


def _per_matrix(fn: Callable[[Any], Any], d: Any) -> Any:
    """fn on each matrix of the stack ``d`` (double precision), stacked; complex if any
    result is (SciPy returns a real result for a real input where it exists)."""
    flat = d.reshape((-1,) + d.shape[-2:]).astype(wide_dtype(d.dtype), copy=False)
    outs = [fn(m) for m in flat]
    dt = np.result_type(*[o.dtype for o in outs])
    return np.stack([o.astype(dt, copy=False) for o in outs]).reshape(d.shape)


def _where(k: int, batch: tuple[int, ...]) -> str:
    return f"matrix {batch_index(k, batch)} of the stack" if batch else "the matrix"


# ==== sqrtm ===============================================================================

_SQRTM = "tf.linalg.sqrtm"


def _sqrtm_solve(ctx: Any, x: Any, e: Any, adjoint: bool) -> Any:
    """S_{X,X}(E) (``adjoint``: S_{Xᴴ,Xᴴ}(E)), on ndarrays from the kept Schur form of X,
    on Tensors by the differentiable solve_sylvester."""
    if x.size == 0:
        return np.zeros(x.shape, np.result_type(x.dtype, e.dtype))
    if isinstance(x, Tensor) or isinstance(e, Tensor):
        xx = mH(x) if adjoint else x
        try:
            return solve_sylvester(xx, xx, e, check_finite=False)
        except LinAlgError:
            raise _not_differentiable(None) from None
    b = x.shape[:-2]
    try:
        return sylvester_schur(ctx, b, ctx, b, e, b, adjoint, _SQRTM)
    except LinAlgError as err:
        raise _not_differentiable(err) from None


def _not_differentiable(err: Any) -> LinAlgError:
    where = str(err).split(": ", 1)[1].split(" has no", 1)[0] if err is not None else "a matrix"
    return LinAlgError(
        f"{_SQRTM} derivative: {where} has no differentiable square root: its square root X "
        "is singular (or nearly so in working precision), so X L + L X = E has no unique "
        "solution L; a singular matrix's square root is not differentiable there")


# the op's ctx: (the result's dtype, the Schur forms of X or None when a is not tracked);
# the dtype is for tf.compile's replay, which must give the recorded dtype (real or complex)

def _sqrtm_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Ā = S_{Xᴴ,Xᴴ}(X̄)
    return (_sqrtm_solve(ctx[1], ys[0], gs[0], True),)


def _sqrtm_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẋ = S_{X,X}(Ȧ)
    return (_sqrtm_solve(ctx[1], ys[0], ts[0], False),)


_sqrtm_op = defop("sqrtm", _sqrtm_vjp, _sqrtm_jvp,
                  doc="principal square root (SciPy's Schur method); rules by X L + L X = E")


def _sqrt1(m: Any) -> Any:
    with warnings.catch_warnings():
        # a singular matrix: SciPy warns and may return inf; the caller checks finiteness
        warnings.simplefilter("ignore", _sla.LinAlgWarning)
        return _sla.sqrtm(m)


@_docs.shared(PARAMS, RAISES)
def sqrtm(a: ArrayLike, *, check_finite: bool = True) -> Tensor:
    r"""Principal square root X (X @ X = A, eigenvalues in the open right half-plane) of
    each square matrix of ``a`` (*batch, n, n), like ``scipy.linalg.sqrtm``.

    Parameters
    ----------
    a, check_finite

    Returns
    -------
    Tensor
        X, real for real input unless a matrix has a negative real eigenvalue (then
        complex, as in SciPy).

    Raises
    ------
    LinAlgError
        Where the square root does not exist (e.g. [[0, 1], [0, 0]]), from the derivative
        at a singular matrix, or for non-finite input.

    Notes
    -----
    Derivative: :math:`XL + LX = E`, i.e. :math:`\dot X = S_{X,X}(\dot A)`,
    :math:`\bar A = S_{X^H,X^H}(\bar X)` [Higham 2008 §6.1] (docs/rules.md#sqrtm-and-logm).

    Real input gives a real result unless a matrix has a negative real eigenvalue; then
    the result is complex, as in SciPy. Differentiable in both modes and to every order
    (the Fréchet derivative solves X L + L X = E). A singular matrix: the value where it
    exists (LinAlgError where it does not, e.g. [[0, 1], [0, 0]]), and LinAlgError from
    its derivative. Non-finite input raises LinAlgError (``check_finite``).

    Examples
    --------
    >>> a = tf.tensor([[4.0, 0.0], [0.0, 9.0]], requires_grad=True)
    >>> tf.linalg.sqrtm(a)
    tensor([[2., 0.],
            [0., 3.]], grad_fn=sqrtm)
    >>> np.round(tf.grad([tf.linalg.sqrtm(a).sum()], [a])[0].numpy(), 6)
    array([[0.25    , 0.2     ],
           [0.2     , 0.166667]])
    """
    return _schur_function(_sqrtm_op, _SQRTM, _sqrtm_primal, a, check_finite)


def _schur_function(op: Any, name: str, primal: Callable[[Any, bool], tuple[Any, Any]],
                    a: ArrayLike, check_finite: bool) -> Tensor:
    """sqrtm or logm of ``a``: the checks, the empty stack, then ``primal(d, tracked)``
    (the value and the op's ctx)."""
    t = matrix_input(a, name, square=True, check_finite=check_finite)
    d = t._data
    if d.size == 0:
        return apply1(op, (t,), np.zeros(d.shape, d.dtype), ctx=(d.dtype, None))
    out, ctx = primal(d, is_tracked(t))
    return apply1(op, (t,), out, ctx=ctx)


def _sqrtm_primal(d: Any, tracked: bool) -> tuple[Any, Any]:
    """sqrtm's value of the non-empty stack ``d`` and the op's ctx."""
    out = _per_matrix(_sqrt1, d)
    bad = ~np.isfinite(out).reshape(-1, d.shape[-1] ** 2).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise LinAlgError(f"{_SQRTM}: {_where(k, d.shape[:-2])} has no square root (it is "
                          "singular with a zero eigenvalue of a nontrivial Jordan block)")
    out = _narrow(out, d.dtype)
    schur = schur_stack(out.astype(wide_dtype(out.dtype), copy=False)) if tracked else None
    return out, (out.dtype, schur)


def _same_kind(name: str, dtype: Any, fn: Callable[[Any], tuple[Any, Any]]) -> Any:
    """tf.compile's replay (Op.replay with replay_ctx) of sqrtm or logm recorded with a
    result of ``dtype``: the value and the new ctx for a finite, non-empty input whose
    result has that dtype again. A real input whose result turns complex (or back) on the
    new values raises, and the call runs eagerly: the ops after it were recorded for the
    other dtype."""
    def replay(d: Any) -> Any:
        if d.size == 0 or not np.isfinite(d).all():
            raise FloatingPointError(f"empty or non-finite input: {name} runs eagerly")
        out, ctx = fn(d)
        if out.dtype != dtype:
            raise TypeError(f"{name}: the result is {out.dtype} on these values, "
                            f"{dtype} when recorded; the call runs eagerly")
        return out, ctx
    return replay


_sqrtm_op.replay = lambda ctx: _same_kind(_SQRTM, ctx[0], lambda d: _sqrtm_primal(d, True))
_sqrtm_op.replay_ctx = True


# ==== logm ================================================================================

_LOGM = "tf.linalg.logm"


def _log1(m: Any, index: int, batch: tuple[int, ...], warn: bool = True) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _sla.logm(m)
    singular = False
    for w in caught:
        # SciPy's LogmExactlySingularWarning (a private class: matched by name)
        if "ExactlySingular" in type(w.message).__name__:
            singular = True
        elif warn:
            # SciPy's own warnings (the accuracy estimate) pass on; the derivative's block
            # matrix drops them: that estimate is for the whole block, not the derivative
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if singular or not np.isfinite(out).all():
        raise LinAlgError(f"{_LOGM}: {_where(index, batch)} is singular (an eigenvalue 0): "
                          "its logarithm does not exist")
    return out


def _frechet_np(a: Any, e: Any) -> Any:
    """L(A, E) on ndarrays: the upper-right block of logm([[A, cE], [0, A]]), divided by c."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    dt = np.result_type(wide_dtype(a.dtype), e.dtype)
    af = np.broadcast_to(a, batch + (n, n)).reshape(-1, n, n).astype(dt)
    ef = np.broadcast_to(e, batch + (n, n)).reshape(-1, n, n).astype(dt)
    out = []
    for k in range(af.shape[0]):
        ne = norm1(ef[k])
        if ne == 0:
            out.append(np.zeros((n, n), dt))
            continue
        c = max(norm1(af[k]), 1.0) / ne
        blk = np.block([[af[k], c * ef[k]], [np.zeros((n, n), dt), af[k]]])
        out.append(_log1(blk, k, batch, warn=False)[:n, n:] * (1.0 / c))
    odt = np.result_type(*[o.dtype for o in out])
    return np.stack([o.astype(odt, copy=False) for o in out]).reshape(batch + (n, n))


def _frechet_block(a: Any, e: Any) -> Any:
    """L(A, E) on Tensors: the same block formula through logm, itself differentiable."""
    return block_frechet(lambda m: logm(m, check_finite=False), a, e)


def _frechet(a: Any, e: Any) -> Any:
    if a.size == 0:
        return np.zeros(np.broadcast_shapes(a.shape, e.shape), np.result_type(a, e))
    if a.dtype.kind != "c" and e.dtype.kind == "c":
        # L(A, ·) is complex-linear: a real A keeps real blocks, whose (real) Schur form
        # keeps a negative eigenvalue exactly on the branch cut; a complex block would let
        # rounding move it to either side, where the principal log jumps by 2πi
        return _frechet(a, e.real) + 1j * _frechet(a, e.imag)
    if isinstance(a, Tensor) or isinstance(e, Tensor):
        return _frechet_block(a, e)
    return _frechet_np(a, e)


def _conj(x: Any) -> Any:
    return x.conj() if x.dtype.kind == "c" else x


def _rotated(theta: Any, a: Any, e: Any) -> tuple[Any, Any, complex]:
    """(cA, cE, c) with c = e^{−iθ} when the primal kept a rotation θ, else (A, E, 1).

    A real matrix with a negative eigenvalue has it exactly on the branch cut; the block
    matrices of its derivatives (and of theirs) repeat it in Jordan blocks, whose computed
    eigenvalues split by O(ε^{1/k}) to both sides of the cut, where the principal log
    jumps by 2πi. log(cA) = log A + log(c)·I on a branch that agrees with the principal
    one at A's eigenvalues (θ is below half their angular distance to the cut, for the
    eigenvalues not on it), so L(A, E) = L(cA, cE), and cA keeps every eigenvalue at
    least θ away from the cut."""
    if not theta:
        return a, e, 1.0
    c = complex(np.exp(-1j * theta))
    return a * c, (None if e is None else e * c), c


# the op's ctx: (the result's dtype, for tf.compile's replay; the rotation θ or None)

def _logm_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    # Ā = conj L(Aᵀ, conj X̄) (= L(Aᴴ, X̄) off the branch cut; see the module docstring);
    # rotated: the adjoint of E ↦ L(cA, cE) is G ↦ conj(c)·conj L(cAᵀ, conj G)
    a, _, c = _rotated(ctx[1], xs[0], None)
    ga = _conj(_frechet(a.swapaxes(-1, -2), _conj(gs[0])))
    return (ga * c.conjugate() if ctx[1] else ga,)


def _logm_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    # Ẋ = L(A, Ȧ) = L(cA, cȦ)
    a, t, _ = _rotated(ctx[1], xs[0], ts[0])
    return (_frechet(a, t),)


def _rotation(d: Any) -> float:
    """θ for :func:`_rotated` for the real stack ``d`` whose logarithm is complex: half the
    smallest angle between the cut and an eigenvalue not on it (at most 0.5)."""
    w = np.linalg.eigvals(d).reshape(-1)
    off = w[~((w.imag == 0) & (w.real < 0))]
    gap = np.pi - np.abs(np.angle(off)) if off.size else np.array([1.0])
    return float(min(0.5, 0.5 * float(gap.min())))


_logm_op = defop("logm", _logm_vjp, _logm_jvp,
                 doc="principal logarithm (SciPy's inverse scaling and squaring); rules by "
                     "the block logarithm log [[A, E], [0, A]]")


@_docs.shared(PARAMS, RAISES)
def logm(a: ArrayLike, *, check_finite: bool = True) -> Tensor:
    r"""Principal logarithm (eigenvalues with imaginary part in (−π, π]) of each square
    matrix of ``a`` (*batch, n, n), like ``scipy.linalg.logm``.

    Parameters
    ----------
    a, check_finite

    Returns
    -------
    Tensor
        The principal logarithm; real for real input unless a matrix has a negative real
        eigenvalue (then complex, as in SciPy).

    Raises
    ------
    LinAlgError
        For a singular matrix (eigenvalue 0) or non-finite input.

    Notes
    -----
    Derivative: :math:`L(A, E) = \tfrac1c[\log\begin{bmatrix}A & cE\\0 & A\end{bmatrix}]_{12}`
    [Higham 2008 Thm 3.6, eq. (3.16)] (docs/rules.md#sqrtm-and-logm).

    Real input gives a real result unless a matrix has a negative real eigenvalue; then
    the result is complex, as in SciPy. Differentiable in both modes and to every order
    (the Fréchet derivative by the block logarithm). A singular matrix (eigenvalue 0)
    raises LinAlgError, as does non-finite input (``check_finite``).

    Examples
    --------
    >>> tf.linalg.logm(tf.eye(2))
    tensor([[0., 0.],
            [0., 0.]])
    """
    return _schur_function(_logm_op, _LOGM, _logm_primal, a, check_finite)


def _logm_primal(d: Any, tracked: bool) -> tuple[Any, Any]:
    """logm's value of the non-empty stack ``d`` and the op's ctx."""
    flat = d.reshape((-1,) + d.shape[-2:]).astype(wide_dtype(d.dtype), copy=False)
    outs = [_log1(m, k, d.shape[:-2]) for k, m in enumerate(flat)]
    dt = np.result_type(*[o.dtype for o in outs])
    out = _narrow(np.stack([o.astype(dt, copy=False) for o in outs]).reshape(d.shape),
                  d.dtype)
    theta = _rotation(d) if d.dtype.kind != "c" and dt.kind == "c" and tracked else None
    return out, (out.dtype, theta)


_logm_op.replay = lambda ctx: _same_kind(_LOGM, ctx[0], lambda d: _logm_primal(d, True))
_logm_op.replay_ctx = True


# ==== funm ================================================================================

_FUNM = "tf.linalg.funm"


def _named(name: str, a: Tensor) -> Tensor:
    if name == "exp":
        return matrix_exp(a)
    if name == "log":
        return logm(a)
    if name == "sqrt":
        return sqrtm(a)
    real = a.dtype.kind != "c"
    if name in ("cos", "sin"):
        ep = matrix_exp(1j * a)
        if real:        # e^{−iA} = conj(e^{iA}) for a real A
            return ep.real if name == "cos" else ep.imag
        em = matrix_exp(-1j * a)
        return (ep + em) * 0.5 if name == "cos" else (ep - em) * -0.5j
    ep, em = matrix_exp(a), matrix_exp(-a)
    return (ep + em) * 0.5 if name == "cosh" else (ep - em) * 0.5


_NAMES = ("exp", "log", "sqrt", "sin", "cos", "sinh", "cosh")


@_docs.shared(PARAMS, RAISES)
def funm(a: ArrayLike, func: str | Callable[[Tensor], Tensor], *,
         hermitian: bool = False) -> Tensor:
    r"""The matrix function f(A) of each square matrix of ``a`` (*batch, n, n), like
    ``scipy.linalg.funm``.

    Parameters
    ----------
    a
    func : str or callable
        One of 'exp', 'log', 'sqrt', 'sin', 'cos', 'sinh', 'cosh' (through matrix_exp, logm
        and sqrtm: accurate, derivatives exact to every order), or a callable applied
        elementwise to a Tensor of eigenvalues (e.g. ``tf.exp``, ``lambda w: w ** 3``).
    hermitian : bool, optional
        For a callable: A is Hermitian (only its lower triangle read), use eigh. Default
        False (eig; complex, the real part returned for a real A).

    Returns
    -------
    Tensor
        f(A).

    Raises
    ------
    LinAlgError
        As the underlying matrix_exp/logm/sqrtm/eig; (backward, eig path) at repeated
        eigenvalues.

    Notes
    -----
    Derivative: through matrix_exp, logm and sqrtm, or through eig/eigh,
    :math:`V f(\Lambda) V^{-1}`, with their rules (docs/rules.md#sqrtm-and-logm).

    func: one of "exp", "log", "sqrt", "sin", "cos", "sinh", "cosh" (through matrix_exp,
    logm and sqrtm: accurate, derivatives exact to every order), or a callable applied
    elementwise to a Tensor of eigenvalues (e.g. ``tf.exp``, ``lambda w: w ** 3``), then
    through the eigendecomposition: ``hermitian=True`` (a Hermitian A, only its lower
    triangle read) by tf.linalg.eigh, V f(λ) Vᴴ; otherwise by tf.linalg.eig, V f(λ) V⁻¹
    (complex; the real part is returned for a real A, which is exact when f maps
    conjugate eigenvalues to conjugate values, as real-analytic functions do). The eig
    path loses accuracy with the condition number of V and has no derivative at repeated
    eigenvalues; SciPy's funm has the same weakness.

    Examples
    --------
    >>> tf.linalg.funm(tf.tensor([[1.0, 0.0], [0.0, 2.0]]), lambda w: w ** 3, hermitian=True)
    tensor([[1., 0.],
            [0., 8.]])
    """
    a = matrix_input(a, _FUNM, square=True)
    if isinstance(func, str):
        if func not in _NAMES:
            raise ShapeError(f"{_FUNM}: unknown function name {func!r}; use one of "
                             f"{', '.join(_NAMES)}, or pass a callable")
        return _named(func, a)
    if not callable(func):
        raise ShapeError(f"{_FUNM}: func must be a function name or a callable, got "
                         f"{type(func).__name__}")
    if hermitian:
        w, v = eigh(a)
        res: Tensor = (v * func(w)[..., None, :]) @ mH(v)
        return res
    w, v = eig(a, check_gauge=False)
    # V f(Λ) V⁻¹ = (V⁻ᴴ (V f(Λ))ᴴ)ᴴ, with one solve instead of an inverse
    fv = v * func(w)[..., None, :]
    out: Tensor = mH(solve(mH(v), mH(fv)))
    return out.real if a.dtype.kind != "c" else out


sqrtm_ad = builder(sqrtm)
logm_ad = builder(logm)
funm_ad = builder(funm)
