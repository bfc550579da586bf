"""Differentiable solutions of initial value problems: :func:`solve_ivp` and :func:`odeint`.

The primal is ``scipy.integrate.solve_ivp`` on plain values, with the right-hand side
``fun(t, y, *args)`` written in tenferro ops (called on plain Tensors, grad off). The
solution y(t_i) at the output times is ONE graph node (op ``solve_ivp``) whose inputs are
y0, the end points t0 and t1 of ``t_span``, ``t_eval`` and the Tensor ``args`` θ.

**Reverse mode: the continuous adjoint** (Chen, Rubanova, Bettencourt, Duvenaud, "Neural
Ordinary Differential Equations", NeurIPS 2018, Alg. 1). For L = Σᵢ Re⟨gᵢ, y(tᵢ)⟩ the
adjoint a(t) = ∂L/∂y(t) and the parameter adjoint a_θ solve, backwards in time,

    a' = −(∂f/∂y)ᴴ a,    a_θ' = −(∂f/∂θ)ᴴ a,

with a jump a += gᵢ at each output time tᵢ, from the last output time down to t0. Then
ȳ0 = a(t0), θ̄ = a_θ(t0), and the end points: ∂L/∂tᵢ = Re⟨gᵢ, f(tᵢ, y(tᵢ))⟩ for the time
of column i (t_eval[i]; without t_eval, column 0 is t0 itself and the last column t1), and
∂L/∂t0 −= Re⟨a(t0), f(t0, y0)⟩ (moving the start moves the whole trajectory). Each
right-hand side evaluation of the backward system is one vector-Jacobian product of
``fun`` (a nested reverse pass of tenferro's). The forward trajectory y(t) that the
Jacobians are taken at is NOT re-integrated backwards (unstable for dissipative systems:
the backward flow of y' = −ky grows like e^{kt} and loses y in rounding); it is read from
the forward solve's dense output (``dense_output=True``, the method's own interpolant), so
it is exactly the trajectory the primal followed, at no extra right-hand side
evaluations, accurate to the solver's tolerance.

**Forward mode: the variational equations.** [y, ẏ] is integrated forward with
ẏ' = ∂f/∂y ẏ + ∂f/∂θ θ̇ (one jvp of ``fun`` per evaluation, in a dual level),
ẏ(t0) = ẏ0 − f(t0, y0) ṫ0; the output tangent of column i is ẏ(tᵢ) + f(tᵢ, y(tᵢ)) ṫᵢ.

**Accuracy and cost.** The derivative is as accurate as the ODE solutions: both derivative
solves use the caller's ``method``, ``rtol`` and ``atol`` (an array ``atol`` contributes
its minimum for the adjoint and tangent components). A backward pass costs one solve
of a system of the size of y plus θ, each evaluation a forward and a reverse pass through
``fun`` (asv_bench/benchmarks/bench_integrate.py: 5 to 7 times the forward solve).
Second order (``create_graph=True``, forward over reverse) is not
implemented: it raises UnsupportedADError.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np
import scipy.integrate
from numpy.typing import ArrayLike, NDArray

from .._engine import apply1
from .._errors import DTypeError, IntegrationError, ShapeError, UnsupportedADError
from .._ops._util import floating, to_tensor
from .._ops.registry import defop
from .._rule_api import detached, nested_vjp, outside_dual_level, tracked_in_reverse
from .._tensor import Tensor
from ..autograd import no_grad
from ..forward import dual_level, make_dual, unpack_dual

__all__ = ["solve_ivp", "odeint", "OdeResult"]


class OdeResult(dict):  # type: ignore[type-arg]
    """The result of :func:`solve_ivp`, like SciPy's: a dict whose keys are attributes.

    ``t`` (Tensor, shape (m,)): the output times (``t_eval`` itself when given);
    ``y`` (Tensor, shape (n, m)): the solution there, differentiable; ``sol``: SciPy's
    dense ``OdeSolution`` on plain values when ``dense_output=True`` (not differentiable),
    else None; ``t_events``/``y_events``: None (events are not supported); ``nfev``,
    ``njev``, ``nlu``: the forward solve's counts; ``status``, ``message``, ``success``.

    Attributes
    ----------
    t : Tensor
        The output times, shape (m,).
    y : Tensor
        The solution at ``t``, shape (n, m), differentiable.
    sol : OdeSolution or None
        SciPy's dense interpolant on plain values (``dense_output=True``), else None.
    t_events, y_events : None
        Events are not supported.
    nfev, njev, nlu : int
        The forward solve's counts.
    status : int
        SciPy's status code.
    message : str
        SciPy's message.
    success : bool
        Whether the solve succeeded (a failure raises IntegrationError first).
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> list[str]:
        return list(self.keys())

    def __repr__(self) -> str:
        return "\n".join(f"{k:>9}: {v!r}" for k, v in self.items())


@dataclasses.dataclass(slots=True)
class _OdeCall:
    """What the rules of one solve need (the node's ctx)."""
    name: str
    fun: Callable[..., Any]
    slots: tuple[Any, ...]       # args as passed; a Tensor slot is replaced by the input
    tensor_pos: tuple[int, ...]  # positions in ``slots`` of the Tensor args (op inputs 4..)
    n: int
    dtype: np.dtype[Any]         # y's dtype (float64 or complex128)
    times: NDArray[Any]          # the output times (float64, shape (m,))
    t0: float
    t1: float
    has_t_eval: bool
    method: Any
    rtol: float
    atol: float                  # a scalar: the derivative solves' absolute tolerance
    options: dict[str, Any]
    dense: Any                   # the forward OdeSolution


def _full_args(call: _OdeCall, targs: Sequence[Any]) -> list[Any]:
    args = list(call.slots)
    for p, v in zip(call.tensor_pos, targs):
        args[p] = v
    return args


def _eval(call: _OdeCall, t: float, y: Tensor, targs: Sequence[Any], check: bool) -> Tensor:
    """fun(t, y, *args) as a Tensor of y's shape; ShapeError/DTypeError naming ``fun``
    otherwise, and with ``check`` IntegrationError for a value that is not finite."""
    out = call.fun(Tensor._wrap(np.asarray(t, np.float64)), y, *_full_args(call, targs))
    r = out if isinstance(out, Tensor) else Tensor._wrap(np.asarray(out))
    if r.shape != (call.n,):
        raise ShapeError(f"{call.name}: fun(t, y, *args) returned shape {r.shape} for y of "
                         f"shape ({call.n},); it must return dy/dt with y's shape")
    if r.dtype.kind not in "fc" and r.dtype.kind not in "iub":
        raise DTypeError(f"{call.name}: fun(t, y, *args) returned dtype {r.dtype}; it "
                         f"must return numbers")
    if r.dtype.kind == "c" and call.dtype.kind != "c":
        raise DTypeError(f"{call.name}: fun(t, y, *args) returned complex values for a "
                         f"real y; pass a complex y0 for a complex system")
    if check and not np.all(np.isfinite(r._data)):
        raise IntegrationError(
            f"{call.name}: fun(t, y, *args) is not finite at t = {t:.6g} (y = "
            f"{np.array2string(y._data, threshold=6)}); the solution may blow up before "
            f"the end of t_span, or fun leaves its domain: shorten t_span, tighten rtol/"
            f"atol, or try method='LSODA' or 'Radau' for a stiff problem")
    if r.dtype != call.dtype:
        r = r.astype(call.dtype)
    return r


def _rhs_plain(call: _OdeCall, targs: Sequence[Tensor]) -> Callable[..., NDArray[Any]]:
    """The NumPy right-hand side SciPy calls: fun on plain Tensors, checked."""
    def rhs(t: float, y: NDArray[Any]) -> NDArray[Any]:
        return _eval(call, float(t), Tensor._wrap(np.asarray(y, call.dtype)), targs,
                     True)._data
    return rhs


def _check_derivative(call: _OdeCall, t: float, v: NDArray[Any], what: str) -> None:
    """IntegrationError when a derivative system's right-hand side is not finite: fun is
    not differentiable where the solution goes (sqrt at 0, a kink), and SciPy would
    otherwise carry the NaN into the gradient."""
    if not np.all(np.isfinite(v)):
        raise IntegrationError(
            f"{call.name}: the {what} of fun is not finite at t = {t:.6g}: fun is not "
            f"differentiable where the solution passes (e.g. sqrt or log at 0, abs at a "
            f"kink); no derivative of the solution exists there, change fun or y0")


def _failed(call: _OdeCall, res: Any, what: str) -> IntegrationError:
    return IntegrationError(
        f"{call.name}: the {what} failed (status {res.status}): {res.message} Try "
        f"method='LSODA' or 'Radau' (for a stiff problem), loosen rtol/atol, or shorten "
        f"t_span if the solution blows up")


def _integrate(call: _OdeCall, rhs: Callable[..., NDArray[Any]], span: tuple[float, float],
               s0: NDArray[Any], what: str, t_eval: NDArray[Any] | None = None,
               sparsity: Any = None) -> Any:
    """scipy.integrate.solve_ivp with the call's method, tolerances and options (and, for
    the implicit methods that take one, a Jacobian ``sparsity`` pattern); IntegrationError
    on failure."""
    options = dict(call.options)
    # (not for a complex state: SciPy's grouped finite-difference Jacobian casts it to real)
    if sparsity is not None and call.method in ("Radau", "BDF") and s0.dtype.kind != "c":
        options["jac_sparsity"] = sparsity
    # (a non-finite value raises IntegrationError with where it happened: no warning too)
    with np.errstate(all="ignore"):
        res = scipy.integrate.solve_ivp(rhs, span, s0, method=call.method, t_eval=t_eval,
                                        rtol=call.rtol, atol=call.atol, **options)
    if not res.success:
        raise _failed(call, res, what)
    return res


def _as_dtype(v: NDArray[Any], dtype: np.dtype[Any]) -> NDArray[Any]:
    """A derivative state's y part in y's dtype. The state is complex when a complex
    parameter meets a real y (fun = real(λ·y)); y's part of it is then real up to
    rounding, and only its real part belongs to a real y."""
    if dtype.kind == "f" and v.dtype.kind == "c":
        v = v.real
    return v.astype(dtype, copy=False)


def _refuse_graph(call: _OdeCall) -> UnsupportedADError:
    return UnsupportedADError(
        f"{call.name}: second-order derivatives (create_graph=True, hvp, forward over "
        f"reverse, a jvp of a jvp) through an ODE solution are not implemented; take "
        f"first derivatives only, or finite differences of tf.grad")


def _col_time_seeds(call: _OdeCall, m: int) -> list[tuple[int, int]]:
    """(input slot, index) of the time each output column depends on: t_eval[i] (slot 3),
    or without t_eval column 0 -> t0 (slot 1) and the last column -> t1 (slot 2)."""
    if call.has_t_eval:
        return [(3, i) for i in range(m)]
    out = []
    if m:
        out.append((1, 0))
    if m > 1:
        out.append((2, m - 1))
    return out


def _solve_ivp_vjp(call: _OdeCall, needs: Sequence[bool], gs: Sequence[Any],
                   xs: Sequence[Any], ys: Sequence[Any]) -> tuple[Any, ...]:
    if any(isinstance(v, Tensor) for v in list(gs) + list(xs)):
        raise _refuse_graph(call)
    g = gs[0]
    cots: list[Any] = [None] * len(xs)
    if g is None:
        return tuple(cots)
    if not np.all(np.isfinite(g)):
        # SciPy refuses a non-finite initial state, so the adjoint cannot carry a NaN or
        # Inf of g to exactly the cotangents it reaches: every cotangent is NaN then (a
        # NaN loss has no gradient; conservative where a component did not depend on it)
        return tuple(np.full(np.shape(x), np.nan, np.result_type(np.asarray(x).dtype,
                                                                 np.float64))
                     if nd else None for x, nd in zip(xs, needs))
    n, dtype, T = call.n, call.dtype, call.times
    m = T.size
    targs_np = list(xs[4:])
    targs = [Tensor._wrap(a) for a in targs_np]
    y_out = ys[0]

    def f_at(t: float, y: NDArray[Any]) -> NDArray[Any]:
        with no_grad():
            return _eval(call, t, Tensor._wrap(y), targs, False)._data

    # the times of the output columns
    for slot, i in _col_time_seeds(call, m):
        if needs[slot]:
            c = float(np.real(np.vdot(g[:, i], f_at(float(T[i]), y_out[:, i]))))
            if cots[slot] is None:
                cots[slot] = np.zeros(np.shape(xs[slot]), np.float64)
            cots[slot][(i,) if slot == 3 else ()] += c

    # the adjoint system, backwards over [t0, last output time] with jumps at the outputs
    want_args = [k for k in range(len(targs)) if needs[4 + k]]
    sizes = [targs_np[k].size for k in want_args]
    p = int(sum(sizes))
    sdtype = np.result_type(dtype, *[targs_np[k].dtype for k in want_args])
    wanted = [0] + [1 + k for k in want_args]

    def aug(t: float, s: NDArray[Any]) -> NDArray[Any]:
        y = np.asarray(call.dense(t), dtype)
        a = _as_dtype(s[:n], dtype)
        vs = nested_vjp(lambda yv, *pv: (_eval(call, float(t), yv, pv, False),),
                        [y] + targs_np, [a], wanted, False)
        out = -np.concatenate([np.ravel(v) for v in vs]).astype(sdtype, copy=False)
        _check_derivative(call, t, out, "adjoint (a vector-Jacobian product)")
        return out

    # The adjoint system is linear in a and does not depend on a_θ: its Jacobian's a_θ
    # columns are zero. Telling Radau/BDF so spares them one vjp per parameter in each
    # finite-difference Jacobian (they would otherwise difference all n + p columns).
    sparsity = np.zeros((n + p, n + p), np.int8)
    sparsity[:, :n] = 1
    state = np.zeros(n + p, sdtype)
    t_cur = float(T[-1]) if m else call.t0
    for i in range(m - 1, -1, -1):
        ti = float(T[i])
        if ti != t_cur and np.any(state[:n]):
            state = _integrate(call, aug, (t_cur, ti), state, "adjoint (backward) solve",
                               sparsity=sparsity).y[:, -1]
        t_cur = ti
        state[:n] += g[:, i]
    if t_cur != call.t0 and np.any(state[:n]):
        state = _integrate(call, aug, (t_cur, call.t0), state, "adjoint (backward) solve",
                           sparsity=sparsity).y[:, -1]
    a0 = _as_dtype(state[:n], dtype)
    if needs[0]:
        cots[0] = a0.copy()
    if needs[1]:
        c = -float(np.real(np.vdot(a0, f_at(call.t0, np.asarray(xs[0], dtype)))))
        cots[1] = (cots[1] if cots[1] is not None else 0.0) + np.asarray(c)
    off = n
    for k, size in zip(want_args, sizes):
        cots[4 + k] = state[off:off + size].reshape(targs_np[k].shape)
        off += size
    return tuple(cots)


def _solve_ivp_jvp(call: _OdeCall, ts: Sequence[Any], xs: Sequence[Any],
                   ys: Sequence[Any]) -> tuple[Any, ...]:
    if any(isinstance(v, Tensor) for v in xs):
        raise _refuse_graph(call)
    if all(t is None for t in ts):
        return (None,)
    n, dtype, T = call.n, call.dtype, call.times
    m = T.size
    plain = [np.asarray(t._data if isinstance(t, Tensor) else t) if t is not None else None
             for t in ts]
    targs_np = list(xs[4:])
    targs = [Tensor._wrap(a) for a in targs_np]
    tan_args = plain[4:]
    sdtype = dtype      # [y, ẏ]: a tangent of y has y's dtype (the engine casts it)

    def f_at(t: float, y: NDArray[Any]) -> NDArray[Any]:
        with no_grad():
            return _eval(call, t, Tensor._wrap(np.asarray(y, dtype)), targs, False)._data

    y0 = np.asarray(xs[0], dtype)
    yd0 = np.zeros(n, sdtype)
    if plain[0] is not None:
        yd0 = yd0 + _as_dtype(plain[0], dtype)
    if plain[1] is not None:
        yd0 = yd0 - f_at(call.t0, y0) * plain[1]

    def aug(t: float, s: NDArray[Any]) -> NDArray[Any]:
        y = np.asarray(s[:n], dtype)
        with no_grad(), dual_level():
            yv = make_dual(Tensor._wrap(y), Tensor._wrap(np.asarray(s[n:], dtype)))
            pv = [a if tt is None else make_dual(a, Tensor._wrap(np.asarray(tt, a.dtype)))
                  for a, tt in zip(targs, tan_args)]
            out = _eval(call, float(t), yv, pv, True)
            primal, tangent = unpack_dual(out)
        td = np.zeros(n, sdtype) if tangent is None else _as_dtype(tangent._data, dtype)
        _check_derivative(call, t, td, "tangent (a Jacobian-vector product)")
        return np.concatenate([primal._data, td]).astype(sdtype, copy=False)

    s0 = np.concatenate([y0, yd0]).astype(sdtype)
    if m:
        res = _integrate(call, aug, (call.t0, call.t1), s0, "tangent (forward-mode) solve",
                         t_eval=T)
        yd = _as_dtype(res.y[n:], dtype).copy()
    else:
        yd = np.zeros((n, 0), dtype)
    for slot, i in _col_time_seeds(call, m):
        tt = plain[slot]
        if tt is not None:
            dt = float(np.real(tt[(i,) if slot == 3 else ()]))
            if dt:
                yd[:, i] += f_at(float(T[i]), ys[0][:, i]) * dt
    return (yd,)


_SOLVE_IVP_OP = defop("solve_ivp", _solve_ivp_vjp, _solve_ivp_jvp, batched=False,
                      second_order=False,
                      doc="ODE solution y(t_i): continuous adjoint (reverse), variational "
                          "equations (forward)")


def _real_scalar(v: Any, what: str, name: str) -> Tensor:
    t = floating(to_tensor(v))
    if t.shape != () or t.dtype.kind != "f":
        raise ShapeError(f"{name}: {what} must be a real number, got shape {t.shape} and "
                         f"dtype {t.dtype}")
    return t


_UNSUPPORTED = ("events", "vectorized", "jac", "jac_sparsity", "lband", "uband")


def solve_ivp(fun: Callable[..., Any], t_span: Any, y0: ArrayLike, method: Any = "RK45",
              t_eval: ArrayLike | None = None, dense_output: bool = False,
              events: Any = None, vectorized: bool = False, args: Sequence[Any] | None = None,
              *, rtol: float = 1e-3, atol: ArrayLike = 1e-6, **options: Any) -> OdeResult:
    """Solve y' = fun(t, y, *args), y(t0) = y0, as ``scipy.integrate.solve_ivp``,
    differentiable in ``y0``, the Tensors in ``args``, ``t_eval`` and ``t_span``.

    Parameters
    ----------
    fun : callable
        ``fun(t, y, *args) -> dy/dt`` written in tenferro ops (or NumPy functions on
        Tensors); t is a 0-d float64 Tensor, y a Tensor of shape (n,).
    t_span : pair of float or 0-d Tensor
        (t0, t1).
    y0 : array_like
        Shape (n,), real or complex (computed in float64 or complex128, as SciPy does).
    method : str or OdeSolver class, optional
        As SciPy: 'RK45', 'RK23', 'DOP853', 'Radau', 'BDF', 'LSODA' or an OdeSolver class;
        LSODA and Radau are real only. Default 'RK45'.
    t_eval : array_like, optional
        Output times, sorted in the direction of integration, inside t_span. Default
        None: the solver's steps (then only the first and last output times move with
        t_span).
    dense_output : bool, optional
        Add SciPy's plain (not differentiable) interpolant ``.sol``. Default False.
    events : None, optional
        Not supported (UnsupportedADError). Default None.
    vectorized : bool, optional
        Not supported when True (UnsupportedADError). Default False.
    args : sequence, optional
        Extra arguments of fun; Tensor entries are differentiated, anything else is passed
        as it is. Default None.
    rtol, atol : float or array_like, optional
        As SciPy (defaults 1e-3, 1e-6); the derivative solves use them too, so the
        derivative is accurate to the same tolerance.
    **options
        As SciPy (first_step, max_step, min_step, ...); ``jac`` is not supported
        (UnsupportedADError).

    Returns
    -------
    OdeResult
        ``.y`` a Tensor of shape (n, len(t)) recorded as one graph node, ``.t`` the times,
        and SciPy's other fields.

    Raises
    ------
    IntegrationError
        If the solve fails (``success`` False in SciPy), ``fun`` returns a non-finite
        value, or a derivative solve fails.
    ShapeError
        If ``fun`` returns the wrong shape, or t_span, y0, t_eval or atol are malformed.
    DTypeError
        If ``fun`` returns another dtype, or a real-only method gets complex y0.
    UnsupportedADError
        For ``events``, ``vectorized``, ``jac``, and second-order derivatives through the
        solution.

    Notes
    -----
    Derivative: reverse mode by the continuous adjoint (Chen et al. 2018, Alg. 1) with the
    forward trajectory from the dense output; forward mode by the variational equations
    (docs/rules.md, integrate; docs/ode.md).

    Examples
    --------
    >>> k = tf.tensor(0.5, requires_grad=True)
    >>> sol = tf.integrate.solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), [1.0],
    ...                              t_eval=[1.0], args=(k,), rtol=1e-10, atol=1e-12)
    >>> sol.y                                   # exp(-k t) at t = 1
    tensor([[0.60653066]], grad_fn=solve_ivp)
    >>> tf.grad([sol.y.sum()], [k])[0]          # d/dk = -t exp(-k t)
    tensor(-0.6065306...)
    """
    name = "solve_ivp"
    for k in _UNSUPPORTED:
        v = {"events": events, "vectorized": vectorized}.get(k, options.get(k))
        if v is not None and v is not False:
            raise UnsupportedADError(
                f"{name}: {k}= is not supported by tenferro.integrate.solve_ivp (its "
                f"derivatives use fun's own); call scipy.integrate.solve_ivp on plain "
                f"values (x.numpy()) if you need it without derivatives")
    try:
        span = tuple(t_span)
    except TypeError:
        raise ShapeError(f"{name}: t_span must be a pair (t0, t1)") from None
    if len(span) != 2:
        raise ShapeError(f"{name}: t_span must be a pair (t0, t1), got {len(span)} entries")
    t0 = _real_scalar(span[0], "t_span[0]", name)
    t1 = _real_scalar(span[1], "t_span[1]", name)
    y0t = floating(to_tensor(y0))
    if y0t.ndim != 1:
        raise ShapeError(f"{name}: y0 must be 1-dimensional (shape (n,)), got shape "
                         f"{y0t.shape}; flatten the state and reshape inside fun")
    dtype = np.dtype(np.complex128 if y0t.dtype.kind == "c" else np.float64)
    if dtype.kind == "c" and method in ("LSODA", "Radau"):
        raise DTypeError(f"{name}: method={method!r} solves real systems only (SciPy's "
                         f"rule); use 'RK45', 'DOP853' or 'BDF' for complex y0, or split y "
                         f"into real and imaginary parts")
    if dtype != y0t.dtype:
        y0t = y0t.astype(dtype)
    if t_eval is None:
        te: Tensor | None = None
    else:
        te = floating(to_tensor(t_eval))
        if te.ndim != 1 or te.dtype.kind != "f":
            raise ShapeError(f"{name}: t_eval must be a 1-d array of real times, got shape "
                             f"{te.shape} and dtype {te.dtype}")
        if te.dtype != np.float64:
            te = te.astype(np.float64)
    if args is not None and not isinstance(args, (tuple, list)):
        args = (args,)          # (SciPy's rule: a single extra argument is wrapped)
    slots = tuple(args or ())
    tensor_pos = tuple(k for k, a in enumerate(slots) if isinstance(a, Tensor))
    targs = [slots[k] for k in tensor_pos]
    atol_arr = np.asarray(atol, np.float64)
    if atol_arr.ndim not in (0, 1) or np.any(atol_arr < 0) or not np.all(np.isfinite(atol_arr)):
        raise ShapeError(f"{name}: atol must be a non-negative number or an array of "
                         f"shape (n,)")
    call = _OdeCall(name, fun, slots, tensor_pos, y0t.shape[0], dtype, np.zeros(0),
                    float(t0._data), float(t1._data), te is not None, method, float(rtol),
                    float(np.min(atol_arr)) if atol_arr.size else 0.0, dict(options), None)
    plain_args = [detached(a) for a in targs]
    inputs = [y0t, t0, t1, *([] if te is None else [te]), *targs]
    # the adjoint reads the trajectory from the dense output: keep it when a reverse-mode
    # node is recorded (DOP853's interpolant costs 3 more evaluations a step)
    keep_dense = bool(dense_output) or any(tracked_in_reverse(x) for x in inputs)
    with no_grad(), outside_dual_level(), np.errstate(all="ignore"):
        try:
            res = scipy.integrate.solve_ivp(
                _rhs_plain(call, plain_args), (call.t0, call.t1), y0t._data.copy(),
                method=method, t_eval=None if te is None else te._data,
                dense_output=keep_dense,
                rtol=rtol, atol=atol, **options)
        except ValueError as e:
            raise ShapeError(f"{name}: scipy.integrate.solve_ivp refused the input: {e}") \
                from None
    if not res.success:
        raise _failed(call, res, "integration")
    call.times = np.asarray(res.t, np.float64)
    call.dense = res.sol
    t_in = te if te is not None else Tensor._wrap(call.times.copy())
    y: Tensor = apply1(_SOLVE_IVP_OP, [y0t, t0, t1, t_in, *targs],
                       np.asarray(res.y, dtype), call)
    return OdeResult(t=t_in, y=y, sol=res.sol if dense_output else None, t_events=None,
                     y_events=None, nfev=res.nfev, njev=res.njev, nlu=res.nlu,
                     status=res.status, message=res.message, success=res.success)


def odeint(func: Callable[..., Any], y0: ArrayLike, t: ArrayLike, args: Sequence[Any] = (),
           Dfun: Any = None, col_deriv: int = 0, full_output: bool = False,
           ml: Any = None, mu: Any = None, rtol: float | None = None,
           atol: ArrayLike | None = None, tcrit: Any = None, h0: float = 0.0,
           hmax: float = 0.0, hmin: float = 0.0, *, tfirst: bool = False,
           **unsupported: Any) -> Any:
    """Solve y' = func(y, t, *args) (``func(t, y, *args)`` with ``tfirst=True``) at the
    times ``t``, as ``scipy.integrate.odeint``: shape (len(t), n), differentiable in
    ``y0``, ``t`` and the Tensors in ``args``.

    It is :func:`solve_ivp` with ``method="LSODA"`` (the solver odeint wraps),
    ``t_span=(t[0], t[-1])``, ``t_eval=t``, and odeint's default tolerances
    (rtol = atol = 1.49012e-8); ``h0``, ``hmax``, ``hmin`` become ``first_step``,
    ``max_step``, ``min_step``. ``full_output=True`` returns ``(y, info)`` with info a
    dict holding ``nfev``, ``njev``, ``nlu``, ``message``. ``Dfun``, ``ml``/``mu``,
    ``tcrit`` and odeint's other integer options are not supported (UnsupportedADError);
    a failed solve raises IntegrationError instead of warning.

    Parameters
    ----------
    func : callable
        ``func(y, t, *args) -> dy/dt`` (``func(t, y, *args)`` with ``tfirst=True``) in
        tenferro ops.
    y0 : array_like
        The initial state, shape (n,) (differentiable).
    t : array_like
        The output times, 1-D; t[0] is the initial time (differentiable).
    args : sequence, optional
        Extra arguments of func; Tensor entries are differentiated. Default ().
    Dfun, ml, mu, tcrit : None, optional
        Not supported (UnsupportedADError).
    col_deriv : int, optional
        Only 0 (a nonzero value raises UnsupportedADError). Default 0.
    full_output : bool, optional
        Also return the info dict. Default False.
    rtol, atol : float or array_like, optional
        Default None: 1.49012e-8.
    h0, hmax, hmin : float, optional
        ``first_step``, ``max_step``, ``min_step`` of the solver (0: its default).
    tfirst : bool, optional
        func takes (t, y) instead of (y, t). Default False.
    **unsupported
        odeint's other options raise UnsupportedADError.

    Returns
    -------
    Tensor or tuple
        The solution, shape (len(t), n); with ``full_output`` the pair (y, info).

    Raises
    ------
    IntegrationError
        If the solve fails.
    UnsupportedADError
        For the options above that are not supported.
    ShapeError
        If t is not a 1-d sequence of times, or y0 is malformed (as :func:`solve_ivp`).

    Notes
    -----
    Derivative: that of :func:`solve_ivp` (the continuous adjoint, Chen et al. 2018;
    docs/rules.md, integrate).

    Examples
    --------
    >>> k = tf.tensor(0.5, requires_grad=True)
    >>> ys = tf.integrate.odeint(lambda y, t, k: -k * y, [1.0], [0.0, 1.0], args=(k,))
    >>> ys.shape
    (2, 1)
    >>> bool(abs(float(ys[-1, 0]) - np.exp(-0.5)) < 1e-6)
    True
    """
    name = "odeint"
    for k, v in (("Dfun", Dfun), ("ml", ml), ("mu", mu), ("tcrit", tcrit)):
        if v is not None:
            raise UnsupportedADError(f"{name}: {k}= is not supported (tenferro computes "
                                     f"the Jacobian products it needs from func); drop it")
    if col_deriv or unsupported:
        bad = ", ".join(sorted(unsupported)) or "col_deriv"
        raise UnsupportedADError(f"{name}: {bad} is not supported; drop it, or call "
                                 f"scipy.integrate.odeint on plain values")
    tt = floating(to_tensor(t))
    if tt.ndim != 1 or tt.shape[0] < 1:
        raise ShapeError(f"{name}: t must be a 1-d sequence of times (t[0] is the initial "
                         f"time), got shape {tt.shape}")
    opts: dict[str, Any] = {}
    for key, v in (("first_step", h0), ("max_step", hmax), ("min_step", hmin)):
        if v:
            opts[key] = float(v)
    if tfirst:
        f = func
    else:
        def f(tv: Tensor, yv: Tensor, *a: Any) -> Any:
            return func(yv, tv, *a)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    res = solve_ivp(f, (tt[0], tt[-1]), y0, method="LSODA", t_eval=tt, args=tuple(args),
                    rtol=1.49012e-8 if rtol is None else rtol,
                    atol=1.49012e-8 if atol is None else atol, **opts)
    y = res.y.mT
    if full_output:
        return y, {"nfev": res.nfev, "njev": res.njev, "nlu": res.nlu,
                   "message": res.message}
    return y
