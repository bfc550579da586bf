"""What tf.linalg.eigsh and tf.linalg.svds share (docs/rules.md#eigsh-and-svds).

* :class:`LinearMap`: the matrix A (m x n) as products on ndarrays, either a dense payload
  or the user's functions ``matvec(v, *params)`` / ``rmatvec(u, *params)`` run on plain
  values (grad mode off, no dual level), which is what ARPACK and the solves call;
* the derivative products of the user's functions in their parameters: a nested reverse
  pass (:func:`fn_vjp`, the seeds contracted with ∂(A x)/∂θ) and a nested dual level
  (:func:`fn_jvp`, Ȧ x);
* :func:`projected_solve`: MINRES on P(H − σ)P y = r, P = I − WWᴴ, the linear systems of
  the vector rules (a Hermitian H given by products);
* :func:`arpack_call`: scipy's ARPACK errors as tenferro's.

The derivatives never differentiate through Lanczos: only the converged pairs enter.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from .._engine import apply1
from .._errors import DTypeError, LinAlgError, ShapeError, UnsupportedADError
from .._ops._util import floating, to_tensor
from .._ops.registry import defop
from .._ops.structure import stack
from .._rule_api import Cut, detached, is_tracked, nested_vjp, outside_dual_level
from .._tensor import Tensor
from ..autograd import enable_grad, grad, no_grad
from ..forward import dual_level, make_dual, unpack_dual

__all__ = ["LinearMap", "params_input", "function_dtype", "fn_vjp", "fn_jvp", "fn_vjp_graph",
           "fn_jvp_graph", "guarded_tangent", "projected_solve", "arpack_call", "check_k",
           "start_vector"]

_SEED = 0x5EED       # the default ARPACK start vector: results are deterministic


def params_input(params: Any, name: str) -> tuple[Tensor, ...]:
    """``params`` (a tuple/list of arrays or Tensors) as floating-point Tensors."""
    if isinstance(params, (Tensor, np.ndarray)) or not isinstance(params, (tuple, list)):
        raise TypeError(f"{name}: params must be a tuple of arrays/Tensors (the extra "
                        f"arguments of matvec), got {type(params).__name__}; write "
                        f"params=(h,) for one parameter")
    out = []
    for k, p in enumerate(params):
        try:
            t = floating(to_tensor(p))
        except Exception as e:  # noqa: BLE001 - any conversion failure is reported the same way
            raise DTypeError(f"{name}: parameter {k} ({type(p).__name__}) is not an array; "
                             f"close over static values in matvec instead ({e})") from None
        if t.dtype.kind not in "fc":
            raise DTypeError(f"{name}: parameter {k} has dtype {t.dtype}; parameters must "
                             f"be floating-point or complex")
        out.append(t)
    return tuple(out)


def _as_array(out: Any, shape: tuple[int, ...], name: str, what: str) -> Tensor:
    t = out if isinstance(out, Tensor) else Tensor._wrap(np.asarray(out))
    if t.shape != shape:
        raise ShapeError(f"{name}: {what} returned shape {t.shape}, expected {shape}")
    if t.dtype.kind not in "fc":
        raise DTypeError(f"{name}: {what} returned dtype {t.dtype}; it must be "
                         f"floating-point or complex")
    return t


class LinearMap:
    """A (shape m x n, dtype) as products on ndarrays: ``dense`` (an ndarray) or the user's
    ``matvec``/``rmatvec`` (functions of Tensors, called with the parameters' payloads,
    grad mode off and no dual level)."""

    def __init__(self, name: str, shape: tuple[int, int], dtype: np.dtype[Any],
                 dense: NDArray[Any] | None = None, matvec: Callable[..., Any] | None = None,
                 rmatvec: Callable[..., Any] | None = None,
                 params: Sequence[Tensor] = ()) -> None:
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.dense = dense
        self.matvec = matvec
        self.rmatvec = rmatvec
        self.plain = [detached(p) for p in params]

    def _call(self, fn: Callable[..., Any], X: NDArray[Any], rows: int,
              what: str) -> NDArray[Any]:
        one = X.ndim == 1
        cols = X[:, None] if one else X
        out = np.empty((rows, cols.shape[1]), self.dtype)
        with no_grad(), outside_dual_level():
            for j in range(cols.shape[1]):
                y = _as_array(fn(Tensor._wrap(np.ascontiguousarray(cols[:, j])), *self.plain),
                              (rows,), self.name, what)._data
                if y.dtype.kind == "c" and self.dtype.kind != "c":
                    raise DTypeError(f"{self.name}: {what} returned a complex vector for a "
                                     f"real vector and real parameters; pass a complex v0 "
                                     f"(or complex parameters) for a complex operator")
                out[:, j] = y
        res: NDArray[Any] = out[:, 0] if one else out
        return res

    def mv(self, X: NDArray[Any]) -> NDArray[Any]:
        """A X for X of shape (n,) or (n, k)."""
        if self.dense is not None:
            return np.asarray(self.dense @ X)
        assert self.matvec is not None
        return self._call(self.matvec, X.astype(self.dtype, copy=False), self.shape[0],
                          "matvec")

    def rmv(self, Y: NDArray[Any]) -> NDArray[Any]:
        """Aᴴ Y for Y of shape (m,) or (m, k)."""
        if self.dense is not None:
            return np.asarray(self.dense.conj().T @ Y)
        fn = self.rmatvec if self.rmatvec is not None else self.matvec
        assert fn is not None
        return self._call(fn, Y.astype(self.dtype, copy=False), self.shape[1],
                          "rmatvec" if self.rmatvec is not None else "matvec")


def function_dtype(name: str, fns: Sequence[tuple[Callable[..., Any], int, int, str]],
                   params: Sequence[Tensor], v0: NDArray[Any] | None) -> np.dtype[Any]:
    """The dtype of the operator given by functions: the parameters' (and v0's) result
    type, complex if a function returns complex values for a real vector. Each function
    (fn, size in, size out, what) is probed once, which also checks its shapes and that it
    closes over no tensor that carries a derivative (that derivative would be lost)."""
    dts: list[Any] = [p.dtype for p in params]
    if v0 is not None:
        dts.append(v0.dtype)
    dt = np.result_type(*dts) if dts else np.dtype(np.float64)
    if dt.kind not in "fc":
        dt = np.dtype(np.float64)
    rng = np.random.default_rng(_SEED)
    plain = [detached(p) for p in params]
    for fn, n_in, n_out, what in fns:
        probe = Tensor._wrap(rng.standard_normal(n_in).astype(dt))
        out = _as_array(fn(probe, *plain), (n_out,), name, what)
        if is_tracked(out):
            raise UnsupportedADError(
                f"{name}: {what} returns a tensor that carries a derivative although its "
                f"vector and parameters do not: it closes over a tensor that requires grad "
                f"(or has a tangent), whose derivative would be lost. Pass that tensor in "
                f"params=(...) instead")
        dt = np.result_type(dt, out.dtype)
    return np.dtype(dt)


def fn_vjp(fn: Callable[..., Any], params: Sequence[Any], X: NDArray[Any],
           S: NDArray[Any], needs: Sequence[bool]) -> tuple[Any, ...]:
    """θ̄ = Σ_j (∂(fn(x_j, θ))/∂θ)ᴴ s_j for the columns x_j of X and s_j of S (ndarrays),
    by one nested reverse pass; one cotangent per parameter (None where not needed)."""
    wanted = [i for i, nd in enumerate(needs) if nd]
    if not wanted:
        return (None,) * len(params)
    k = X.shape[1]
    seeds = [np.ascontiguousarray(S[:, j]) for j in range(k)]

    def formula(*ps: Tensor) -> tuple[Tensor, ...]:
        outs = []
        for j in range(k):
            o = to_tensor(fn(Tensor._wrap(np.ascontiguousarray(X[:, j])), *ps))
            if o.dtype.kind != "c" and seeds[j].dtype.kind == "c":
                # a real output (complex parameters): Re⟨s, y⟩ = ⟨Re s, y⟩, which the
                # cast's own rule gives
                o = o.astype(seeds[j].dtype)
            outs.append(o)
        return tuple(outs)
    with outside_dual_level():
        cots = nested_vjp(formula, params, seeds, wanted, False)
    out: list[Any] = [None] * len(params)
    for i, c in zip(wanted, cots):
        out[i] = c
    return tuple(out)


def fn_jvp(fn: Callable[..., Any], params: Sequence[Any], tangents: Sequence[Any],
           X: NDArray[Any], dtype: np.dtype[Any], rows: int) -> NDArray[Any] | None:
    """Ȧ X = Σ_θ ∂(fn(x_j, θ))/∂θ · θ̇ column by column (ndarrays; ``rows`` the size of
    fn's output), by a nested dual level; None if no parameter has a tangent."""
    if all(t is None for t in tangents):
        return None
    out = np.zeros((rows, X.shape[1]), dtype)
    with dual_level():
        duals = [Tensor._wrap(p) if t is None else make_dual(Tensor._wrap(p), Tensor._wrap(t))
                 for p, t in zip(params, tangents)]
        for j in range(X.shape[1]):
            y = to_tensor(fn(Tensor._wrap(np.ascontiguousarray(X[:, j])), *duals))
            t = unpack_dual(y).tangent
            if t is not None:
                out[:, j] = t._data
    return out


def fn_vjp_graph(fn: Callable[..., Any], params: Sequence[Any], X: Tensor, S: Tensor,
                 needs: Sequence[bool]) -> tuple[Any, ...]:
    """:func:`fn_vjp` on Tensors, recorded (create_graph): differentiable in the
    parameters, X and S (a nested reverse pass on proxies, grafted back, as custom_root)."""
    wanted = [i for i, nd in enumerate(needs) if nd]
    res: list[Any] = [None] * len(params)
    if not wanted:
        return tuple(res)
    cut = Cut((X, S) + tuple(params), True, track=[2 + i for i in wanted])
    with enable_grad():
        Xp, Sp, ps = cut.proxies[0], cut.proxies[1], cut.proxies[2:]
        roots, seeds = [], []
        for j in range(X.shape[1]):
            o = to_tensor(fn(Xp[:, j], *ps))
            if o.requires_grad:
                roots.append(o)
                seeds.append(Sp[:, j] if o.dtype.kind == "c" else Sp[:, j].real)
        got = grad(roots, [ps[i] for i in wanted], seeds, create_graph=True) if roots \
            else [None] * len(wanted)
    cut.graft()
    for i, g in zip(wanted, got):
        res[i] = g
    return tuple(res)


def fn_jvp_graph(fn: Callable[..., Any], params: Sequence[Any], tangents: Sequence[Any],
                 X: Tensor, dtype: np.dtype[Any], rows: int) -> Any:
    """:func:`fn_jvp` on Tensors (reverse-over-forward): a nested dual level whose ops
    record; None if no parameter has a tangent."""
    if all(t is None for t in tangents):
        return None
    cols = []
    with dual_level():
        duals = [p if t is None else make_dual(p, t) for p, t in zip(params, tangents)]
        for j in range(X.shape[1]):
            t = unpack_dual(to_tensor(fn(X[:, j], *duals))).tangent
            cols.append(t if t is not None else
                        Tensor._wrap(np.zeros(rows, dtype)))
    return stack(cols, axis=1)


def _no_second_vjp(ctx: Any, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    raise UnsupportedADError(
        f"{ctx}: the derivative of a singular/eigen vector tangent (reverse-over-forward "
        f"through the vectors) is not implemented; second derivatives of the values are. "
        f"Use the dense tf.linalg.eigh / tf.linalg.svd for second derivatives of the vectors")


def _no_second_jvp(ctx: Any, ts: Any, xs: Any, ys: Any) -> Any:
    return _no_second_vjp(ctx, None, None, None, None)


_vector_tangent_op = defop(
    "iterative.vector_tangent", _no_second_vjp, _no_second_jvp, batched=False,
    second_order=False,
    doc="the vector tangent of eigsh/svds inside a recorded graph (reverse-over-forward): "
        "a value whose own derivative raises UnsupportedADError")


def guarded_tangent(value: NDArray[Any], inputs: Sequence[Any], name: str) -> Tensor:
    """A vector tangent computed on payloads, put in a recorded graph (reverse-over-
    forward) as one node of an op whose derivative raises: nothing takes it for a
    constant."""
    ins = tuple(x for x in inputs if isinstance(x, Tensor))
    return apply1(_vector_tangent_op, ins, value, name)


def _minres(apply: Callable[[NDArray[Any]], NDArray[Any]], b: NDArray[Any], rtol: float,
            maxiter: int) -> NDArray[Any]:
    """MINRES for the Hermitian operator ``apply`` (scipy's minres is real-only: a complex
    system H y = b is solved as the real symmetric [[Re H, −Im H], [Im H, Re H]])."""
    from scipy.sparse.linalg import LinearOperator, minres
    N = b.shape[0]
    if b.dtype.kind != "c":
        op = LinearOperator((N, N), matvec=lambda x: apply(x.reshape(N)), dtype=b.dtype)
        return np.asarray(minres(op, b, rtol=rtol, maxiter=maxiter)[0])

    def real_mv(z: NDArray[Any]) -> NDArray[Any]:
        z = z.reshape(2 * N)
        y = apply(z[:N] + 1j * z[N:])
        return np.concatenate([y.real, y.imag])
    op = LinearOperator((2 * N, 2 * N), matvec=real_mv, dtype=np.float64)
    z = np.asarray(minres(op, np.concatenate([b.real, b.imag]), rtol=rtol,
                          maxiter=maxiter)[0])
    return z[:N] + 1j * z[N:]


_RTOL = 1e-13        # MINRES's relative tolerance (its own estimate)
_ACCEPT = 1e-8       # accepted backward error of a solve: ‖res‖ ≤ this·(‖Hy‖ + |σ|‖y‖ + ‖r‖)


def projected_solve(apply_H: Callable[[NDArray[Any]], NDArray[Any]], W: NDArray[Any],
                    shifts: NDArray[Any], R: NDArray[Any], delta: float, name: str,
                    what: Callable[[int], str]) -> NDArray[Any]:
    """Y with columns y_j solving P(H − σ_j)P y_j = r_j, y_j ⊥ range(W), for r_j ⊥ range(W)
    (P = I − WWᴴ, W orthonormal; H Hermitian by ``apply_H`` on vectors): float64/complex128
    MINRES. The system is singular where σ_j is an eigenvalue of H outside range(W); a
    right-hand side with a component there has no solution: LinAlgError with ``what(j)``
    (the reason to tell the user), raised when the residual is not small against the
    terms (backward error above _ACCEPT) or when ‖y_j‖ > ‖r_j‖/delta, i.e. the gap to
    the spectrum of H outside range(W) is below ``delta`` (the rules' degenerate-block
    tolerance: within it, the rounded σ_j equals an uncomputed eigenvalue, and MINRES
    would return a huge multiple of that eigenvector)."""
    work = np.complex128 if R.dtype.kind == "c" or W.dtype.kind == "c" else np.float64
    Wd = W.astype(work, copy=False)
    N = R.shape[0]
    Y = np.zeros(R.shape, work)

    def proj(x: NDArray[Any]) -> NDArray[Any]:
        px: NDArray[Any] = x - Wd @ (Wd.conj().T @ x)
        return px
    for j in range(R.shape[1]):
        r = proj(R[:, j].astype(work))
        rnorm = float(np.linalg.norm(r))
        if rnorm == 0:
            continue
        sigma = float(shifts[j])

        def op(x: NDArray[Any], sigma: float = sigma) -> NDArray[Any]:
            px = proj(x)
            return proj(np.asarray(apply_H(px), dtype=work) - sigma * px)
        y = proj(_minres(op, r, _RTOL, max(20 * N, 1000)))
        Hy = np.asarray(apply_H(y), dtype=work)
        res = float(np.linalg.norm(proj(Hy - sigma * y) - r))
        scale = float(np.linalg.norm(Hy)) + abs(sigma) * float(np.linalg.norm(y)) + rnorm
        ynorm = float(np.linalg.norm(y))
        if not np.isfinite(res) or res > _ACCEPT * scale or ynorm * delta > rnorm:
            raise LinAlgError(
                f"{name}: the linear system of the eigenvector derivative has no accurate "
                f"solution (relative residual {res / scale:.2g}, ‖y‖/‖r‖ = "
                f"{ynorm / rnorm:.2g} against 1/δ = {1 / delta if delta else np.inf:.2g}): "
                f"{what(j)}")
        Y[:, j] = y
    return Y


def check_k(k: Any, size: int, name: str, what: str) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise ShapeError(f"{name}: k must be a positive int, got {k!r}")
    if not 1 <= k < size:
        raise ShapeError(f"{name}: k must satisfy 1 <= k < {what} = {size} (ARPACK's limit), "
                         f"got k = {k}; for all of them use the dense "
                         f"{'tf.linalg.eigh' if 'eigsh' in name else 'tf.linalg.svd'}")
    return int(k)


def start_vector(v0: Any, size: int, dtype: np.dtype[Any], name: str) -> NDArray[Any]:
    """ARPACK's start vector: ``v0`` checked, or a fixed pseudo-random one (the results do
    not depend on the run)."""
    if v0 is None:
        rng = np.random.default_rng(_SEED)
        v: NDArray[Any] = rng.standard_normal(size)
        if dtype.kind == "c":
            v = v + 1j * rng.standard_normal(size)
        return v.astype(dtype)
    d = np.asarray(v0.numpy() if isinstance(v0, Tensor) else v0)
    if d.shape != (size,):
        raise ShapeError(f"{name}: v0 must have shape ({size},), got {d.shape}")
    if not np.all(np.isfinite(d)) or not np.any(d):
        raise ShapeError(f"{name}: v0 must be finite and non-zero")
    return d.astype(dtype)


def arpack_call(fun: Callable[[], Any], name: str) -> Any:
    """``fun()`` (a scipy.sparse.linalg ARPACK call) with its errors as tenferro's."""
    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence
    try:
        return fun()
    except ArpackNoConvergence as e:
        raise LinAlgError(
            f"{name}: ARPACK did not converge ({len(e.eigenvalues)} of the requested values "
            f"converged): raise maxiter, or ncv (the Lanczos basis size, default "
            f"max(2k + 1, 20)), or loosen tol") from None
    except ArpackError as e:
        raise LinAlgError(f"{name}: ARPACK failed: {e}; try another v0, a larger ncv or "
                          f"maxiter") from None
