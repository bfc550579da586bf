"""Reverse mode: grad, backward, vjp, value_and_grad, and grad mode switches.

``grad`` returns gradients and never touches ``.grad``; ``backward`` accumulates into
``.grad``. Both hand the graph walk to the tape core (``_kernels/tape.pyx``). Without
``create_graph`` the pullbacks run on plain ndarrays with grad mode off; with it they run
on Tensors so that the returned gradients are differentiable again.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Sequence, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike

from ._engine import CAPTURE, graph_rule, note_escape
if TYPE_CHECKING:   # (_engine is not typed yet; it re-exports these from the tape)
    from ._kernels.tape import backward_plain, grad_graph, grad_plain, owned, run_backward
else:
    from ._engine import backward_plain, grad_graph, grad_plain, owned, run_backward
from ._errors import DTypeError, GraphFreedError, ShapeError, TenferroError
from ._state import STATE
from ._tensor import Tensor, as_tensor

__all__ = ["grad", "backward", "GradOptions", "BackwardOptions", "no_grad", "enable_grad",
           "is_grad_enabled", "set_grad_enabled", "vjp", "value_and_grad"]

_F = TypeVar("_F", bound=Callable[..., Any])
if TYPE_CHECKING:
    from typing import TypeAlias
    # one tensor or several (the outputs and inputs of grad/backward)
    _Tensors: TypeAlias = Tensor | Sequence[Tensor]


@dataclass(frozen=True)
class GradOptions:
    """Options of :func:`grad` in one object (frozen dataclass).

    Parameters
    ----------
    retain_graph : bool, optional
        Keep the saved values for another pass. Default None: ``create_graph``.
    create_graph : bool, optional
        Record the backward pass so the gradients are differentiable again. Default False.

    Attributes
    ----------
    retain_graph : bool or None
        As given.
    create_graph : bool
        As given.

    Examples
    --------
    >>> x = tf.tensor(2.0, requires_grad=True)
    >>> tf.grad([x ** 3], [x], options=tf.GradOptions(create_graph=True))[0]
    tensor(12., grad_fn=multiply)
    """
    retain_graph: Optional[bool] = None
    create_graph: bool = False


@dataclass(frozen=True)
class BackwardOptions:
    """Options of :func:`backward` in one object (frozen dataclass).

    Parameters
    ----------
    retain_graph : bool, optional
        Keep the saved values for another pass. Default None: ``create_graph``.
    create_graph : bool, optional
        Record the backward pass so ``.grad`` is differentiable again. Default False.

    Attributes
    ----------
    retain_graph : bool or None
        As given.
    create_graph : bool
        As given.
    """
    retain_graph: Optional[bool] = None
    create_graph: bool = False


class _GradMode:
    """Context manager and decorator that sets grad mode for the current thread."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._saved: list[bool] = []

    def __enter__(self) -> _GradMode:
        self._saved.append(STATE.grad_enabled)
        STATE.grad_enabled = self.enabled
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        STATE.grad_enabled = self._saved.pop()
        return False

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _GradMode(self.enabled):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]  # (functools.wraps keeps fn's signature)


def no_grad() -> _GradMode:
    """Ops in this block record nothing (thread-local). Also a decorator.

    Returns
    -------
    context manager
        Usable as ``with tf.no_grad():`` or ``@tf.no_grad()``; the mode of before returns
        on exit.

    Examples
    --------
    >>> x = tf.tensor([1.0], requires_grad=True)
    >>> with tf.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """
    return _GradMode(False)


def enable_grad() -> _GradMode:
    """Ops in this block record the graph again (thread-local). Also a decorator.

    Returns
    -------
    context manager
        Usable as ``with tf.enable_grad():`` or ``@tf.enable_grad()``; the mode of before
        returns on exit.

    Examples
    --------
    >>> x = tf.tensor([1.0], requires_grad=True)
    >>> with tf.no_grad():
    ...     with tf.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """
    return _GradMode(True)


class _SetGradMode(_GradMode):
    """set_grad_enabled's result: the mode is set when it is made (a plain call takes
    effect at once); as a context manager it restores the mode of before on exit."""

    def __init__(self, enabled: bool) -> None:
        super().__init__(enabled)
        self._before = STATE.grad_enabled
        STATE.grad_enabled = enabled

    def __enter__(self) -> _SetGradMode:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        STATE.grad_enabled = self._before
        return False

    def __call__(self, fn: _F) -> _F:        # as a decorator: only calls of fn see the mode
        STATE.grad_enabled = self._before
        return super().__call__(fn)


def set_grad_enabled(mode: bool) -> _GradMode:
    """Turn recording on (``mode`` true) or off, at once, like ``torch.set_grad_enabled``.

    ``tf.set_grad_enabled(False)`` alone switches it off until switched back; used as
    ``with tf.set_grad_enabled(False): ...`` the mode of before returns on exit; as a
    decorator only calls of the function see the mode.

    Parameters
    ----------
    mode : bool
        Record (True) or not (False).

    Returns
    -------
    context manager
        Also a decorator.

    Examples
    --------
    >>> with tf.set_grad_enabled(False):
    ...     print(tf.is_grad_enabled())
    False
    >>> tf.is_grad_enabled()
    True
    """
    return _SetGradMode(bool(mode))


def is_grad_enabled() -> bool:
    """Whether ops record the graph now (False inside ``no_grad()``).

    Returns
    -------
    bool
        The grad mode of the current thread.

    Examples
    --------
    >>> tf.is_grad_enabled()
    True
    """
    return STATE.grad_enabled


@overload
def _as_list(x: None, what: str) -> None: ...
@overload
def _as_list(x: _Tensors, what: str) -> list[Tensor]: ...
def _as_list(x: Any, what: str) -> list[Tensor] | None:
    if type(x) is Tensor:
        return [x]
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        for i, t in enumerate(x):
            if not isinstance(t, Tensor):
                raise TypeError(f"{what}[{i}] must be a tenferro Tensor, got {type(t).__name__}")
        return list(x)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got {type(x).__name__}")


# dtype -> read-only 0-d one: the implicit seed of a scalar output, never copied
_ONES: dict[Any, Any] = {}


def _implicit_seed(out: Tensor, k: int, create_graph: bool) -> Any:
    if out._data.size != 1:
        raise ShapeError(
            f"grad can be implicitly created only for outputs with one element, but output "
            f"{k} has shape {out.shape}; pass grad_outputs (a seed of that shape) or reduce "
            f"the output first (e.g. out.sum())")
    dt = out._data.dtype
    if dt.kind == "c":
        raise DTypeError(
            f"grad can be implicitly created only for real outputs, but output {k} is "
            f"{dt}; pass grad_outputs or differentiate a real function of it "
            "(e.g. abs(out)**2)")
    if out._data.ndim == 0:
        one = _ONES.get(dt)
        if one is None:
            one = _ONES[dt] = np.ones((), dtype=dt)
            one.flags.writeable = False   # shared: _own() copies it before it reaches a user
    else:
        one = np.ones(out.shape, dtype=dt)
    return Tensor._wrap(one) if create_graph else one


def _seed(out: Tensor, g: Any, k: int, create_graph: bool) -> Any:
    """The cotangent that starts the pass at output k (checked, never aliased)."""
    if g is None:
        return _implicit_seed(out, k, create_graph)
    if isinstance(g, Tensor):
        t = g
    else:
        try:
            arr = np.asarray(g)       # the one private copy is made below
        except Exception as e:  # noqa: BLE001 - report any conversion failure the same way
            raise DTypeError(f"grad_outputs[{k}] cannot be converted to an array: {e}") from None
        if arr.dtype.kind not in "biufc":
            raise DTypeError(f"grad_outputs[{k}] has dtype {arr.dtype}; it must be numeric")
        t = Tensor._wrap(arr)
    # the same two checks as functional.py's _Inputs.leaves_of (shape, complex on real), on
    # purpose: each message names its own call (grad_outputs[k] here, fname's leaf there)
    if t.shape != out.shape:
        raise ShapeError(f"grad_outputs[{k}] has shape {t.shape} but output {k} has shape "
                         f"{out.shape}; the seed must have the output's shape")
    if t.dtype.kind == "c" and out.dtype.kind != "c":
        raise DTypeError(f"grad_outputs[{k}] is complex ({t.dtype}) but output {k} is real "
                         f"({out.dtype}); pass a real seed")
    if create_graph:
        return t if t.dtype == out.dtype else t.astype(out.dtype)
    d = t._data
    if d.dtype != out._data.dtype:
        return d.astype(out._data.dtype)
    # No copy (a matrix seed at n = 256 costs 0.1-0.3 ms to copy): a read-only view, so a
    # pullback that wrote into its cotangent would fail loudly, and _own() copies any
    # gradient that is (a view of) it before it reaches the user.
    v = d.view()
    v.flags.writeable = False
    return v


def _resolve(options: GradOptions | BackwardOptions | None, retain_graph: bool | None,
             create_graph: bool) -> tuple[bool, bool]:
    if options is not None:
        if retain_graph is None:
            retain_graph = options.retain_graph
        create_graph = create_graph or options.create_graph
    if retain_graph is None:
        retain_graph = create_graph
    return bool(retain_graph), bool(create_graph)


def _run(outs: list[Tensor], grad_outputs: Any, targets: list[tuple[Any, int]] | None,
         retain_graph: bool, create_graph: bool) -> list[Any] | None:
    """Validate every seed, then walk the graph; None when no output requires grad."""
    if grad_outputs is None:
        gos = None
    else:
        gos = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else [grad_outputs]
        if len(gos) != len(outs):
            raise ShapeError(f"got {len(gos)} grad_outputs for {len(outs)} outputs")
    roots, seeds = [], []
    for k, o in enumerate(outs):
        seed = _seed(o, None if gos is None else gos[k], k, create_graph)
        if o._node is not None:
            roots.append((o._node, o._index))
            seeds.append(seed)
    if not roots:
        return None
    saved = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    try:
        return run_backward(roots, seeds, targets, create_graph, retain_graph, graph_rule,
                            GraphFreedError)
    finally:
        STATE.grad_enabled = saved


def _own(g: Any) -> Tensor:
    """A gradient handed to the user shares memory with nothing else (the engine's
    ``owned``: read-only arrays and views of still-referenced arrays are copied)."""
    if type(g) is not np.ndarray:
        if not isinstance(g, np.generic):
            t: Tensor = g                 # a Tensor (create_graph=True)
            return t
    return Tensor._wrap(owned(g))       # the cached implicit seeds are read-only: copied


def grad(outputs: _Tensors, inputs: _Tensors, grad_outputs: ArrayLike | None = None,
         options: GradOptions | None = None, *, retain_graph: bool | None = None,
         create_graph: bool = False) -> list[Tensor | None]:
    r"""Gradients of ``outputs`` with respect to ``inputs``; ``.grad`` is left untouched.

    Reverse mode: one backward pass computes :math:`\bar x = \sum_k J_k^H \bar y_k` (the
    vector-Jacobian product with the seeds; the conjugate-Wirtinger convention for complex
    inputs, docs/rules.md).

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        The outputs to differentiate.
    inputs : Tensor or sequence of Tensor
        The tensors to differentiate with respect to.
    grad_outputs : array_like or sequence, optional
        One seed (cotangent) per output; may be omitted only for outputs with one element
        (seed 1).
    options : GradOptions, optional
        ``retain_graph`` and ``create_graph`` in one object.
    retain_graph : bool, optional
        Keep the saved values for another pass. Default: ``create_graph``.
    create_graph : bool, optional
        Record the backward pass so the gradients can be differentiated again (second
        order). Default False.

    Returns
    -------
    list of Tensor or None
        One entry per input: a Tensor, or None where the input is not reachable from the
        outputs.

    Raises
    ------
    ShapeError
        If a seed is missing for an output of more than one element, has the wrong shape,
        or the number of seeds differs from the number of outputs.
    DTypeError
        If a seed is not numeric, or complex for a real output.
    GraphFreedError
        If the graph was freed by an earlier pass (pass ``retain_graph=True`` there).
    TypeError
        If ``outputs``/``inputs`` are not tensors.

    Examples
    --------
    >>> x = tf.tensor([1.0, 2.0], requires_grad=True)
    >>> tf.grad([(x ** 2).sum()], [x])
    [tensor([2., 4.])]
    >>> g, = tf.grad([(x ** 3).sum()], [x], create_graph=True)
    >>> tf.grad([g.sum()], [x])[0]
    tensor([ 6., 12.])
    """
    if CAPTURE.recorder is not None and not create_graph:
        # inside a tf.compile recording: plain gradients are values outside the graph
        note_escape("tf.grad without create_graph", outputs)
    if options is not None or retain_graph is not None or create_graph:
        if (create_graph and options is None and retain_graph is None
                and grad_outputs is None):
            # create_graph's common call (implicit seeds) compiled too (tape.pyx)
            res = grad_graph(outputs, inputs, Tensor, STATE, _ONES, GraphFreedError,
                             graph_rule)
            if res is not None:
                return res
        retain_graph, create_graph = _resolve(options, retain_graph, create_graph)
    else:
        # the common call in one compiled function (tape.pyx), None if it is not that
        out = grad_plain(outputs, inputs, grad_outputs, Tensor, STATE, _ONES, GraphFreedError)
        if out is not None:
            return out
        retain_graph = False
    ins = _as_list(inputs, "inputs")
    targets = [(x._node, x._index) for x in ins if x._node is not None]
    res = _run(_as_list(outputs, "outputs"), grad_outputs, targets, retain_graph, create_graph)
    out, j = [], 0
    for x in ins:
        if x._node is None:
            out.append(None)
            continue
        g = None if res is None else res[j]
        j += 1
        out.append(None if g is None else _own(g))
    return out


def backward(outputs: _Tensors, grad_outputs: ArrayLike | None = None,
             inputs: _Tensors | None = None, options: BackwardOptions | None = None, *,
             retain_graph: bool | None = None, create_graph: bool = False) -> None:
    """Accumulate gradients into ``.grad`` of every reachable leaf (or only ``inputs``).

    ``.grad`` is updated only after the whole pass succeeded (no half-updated state on an
    error).

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        The outputs to differentiate.
    grad_outputs : array_like or sequence, optional
        One seed per output; may be omitted only for outputs with one element.
    inputs : Tensor or sequence of Tensor, optional
        Accumulate only into these. Default: every reachable leaf.
    options : BackwardOptions, optional
        ``retain_graph`` and ``create_graph`` in one object.
    retain_graph : bool, optional
        Keep the saved values for another pass. Default: ``create_graph``.
    create_graph : bool, optional
        Record the backward pass (``.grad`` differentiable again). Default False.

    Returns
    -------
    None

    Raises
    ------
    TenferroError
        If no output requires grad.
    ShapeError
        If a seed is missing for an output of more than one element or has the wrong shape.
    GraphFreedError
        If the graph was freed by an earlier pass.

    Examples
    --------
    >>> x = tf.tensor([1.0, 2.0], requires_grad=True)
    >>> tf.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if CAPTURE.recorder is not None:
        note_escape("backward()", outputs)      # (.grad: values outside the graph)
    if options is not None or retain_graph is not None or create_graph:
        retain_graph, create_graph = _resolve(options, retain_graph, create_graph)
    else:
        # the common call in one compiled function (tape.pyx), False if it is not that
        if inputs is None and backward_plain(outputs, grad_outputs, Tensor, STATE, _ONES,
                                             GraphFreedError):
            return
        retain_graph = False
    outs = _as_list(outputs, "outputs")
    for o in outs:
        if o._node is not None:
            break
    else:
        raise TenferroError(
            "backward() called on outputs that do not require grad: no input of the "
            "computation had requires_grad=True (or it ran under tf.no_grad())")
    pairs: Any       # (leaf Node or Tensor, cotangent) pairs; some root exists, so not None
    if inputs is None:
        pairs = _run(outs, grad_outputs, None, retain_graph, create_graph)
    else:
        ins = _as_list(inputs, "inputs")
        targets = [(x._node, x._index) for x in ins if x._node is not None]
        res = _run(outs, grad_outputs, targets, retain_graph, create_graph)
        it = iter(res or [])
        pairs = [(x, next(it)) for x in ins if x._node is not None]
    # only now, after the whole pass succeeded: no half-updated .grad on failure
    saved = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    try:
        for t, g in pairs:
            if type(t) is not Tensor:   # a leaf Node from the all-leaves pass
                t = t.leaf()
            if t is None or g is None:
                continue
            g = _own(g)
            t.grad = g if t.grad is None else t.grad + g
    finally:
        STATE.grad_enabled = saved


def vjp(f: Callable[..., Any], *primals: ArrayLike
        ) -> tuple[Any, Callable[[Any], tuple[Tensor, ...]]]:
    r"""``(outputs, pullback)``: ``pullback(cotangents)`` returns one gradient per primal.

    Primals may be arrays or Tensors; they are detached and differentiated afresh. The
    pullback can be called repeatedly; an input the output does not depend on gets zeros.

    Parameters
    ----------
    f : callable
        A function of tensors returning a Tensor or a sequence of them.
    *primals : array_like
        The point at which to differentiate.

    Returns
    -------
    outputs : Tensor or tuple of Tensor
        ``f(*primals)``.
    pullback : callable
        ``pullback(cotangents) -> tuple of Tensor``: :math:`J^H \bar y` for each primal.

    Examples
    --------
    >>> out, pullback = tf.vjp(lambda x: x * x, tf.tensor([1.0, 2.0]))
    >>> out
    tensor([1., 4.])
    >>> pullback(tf.ones(2))
    (tensor([2., 4.]),)
    """
    xs = [as_tensor(p).detach().set_requires_grad(True) for p in primals]
    with enable_grad():
        out = f(*xs)
    outs = [out] if isinstance(out, Tensor) else list(out)

    def pullback(cotangents: Any) -> tuple[Tensor, ...]:
        cots = [cotangents] if isinstance(out, Tensor) else list(cotangents)
        gs = grad(outs, xs, cots, retain_graph=True)
        return tuple(Tensor._wrap(np.zeros_like(x._data)) if g is None else g
                     for x, g in zip(xs, gs))

    detached = out.detach() if isinstance(out, Tensor) else type(out)(o.detach() for o in outs)
    return detached, pullback


def value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0, *,
                   hessp: bool = False) -> Callable[..., tuple[Any, Any]]:
    """``f`` -> a function returning ``(f(*args), gradient)``.

    With NumPy arrays in, NumPy comes out (the value as a Python float when it has one
    element), so ``scipy.optimize.minimize(tf.value_and_grad(f), x0, jac=True)`` works.

    Parameters
    ----------
    f : callable
        A function of tensors returning a one-element Tensor.
    argnums : int or sequence of int, optional
        The positional arguments to differentiate; a tuple gives a tuple of gradients.
        Default 0.
    hessp : bool, optional
        Also attach ``.hessp = tf.hessp(f, argnums)``, the Hessian-vector product
        ``(x, p, *args) -> H p``, for ``minimize(vg, x0, jac=True, hessp=vg.hessp,
        method="Newton-CG")``. Default False.

    Returns
    -------
    callable
        ``g(*args, **kwargs) -> (value, gradient)``.

    Raises
    ------
    TypeError
        (when called) If ``f`` does not return a Tensor.

    Examples
    --------
    >>> vg = tf.value_and_grad(lambda x: (x ** 2).sum())
    >>> vg(np.array([1.0, 2.0]))
    (5.0, array([2., 4.]))
    """
    many = not isinstance(argnums, int)
    nums: tuple[int, ...] = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        numpy_in = not any(isinstance(args[i], Tensor) for i in nums)
        argv = list(args)
        xs = []
        for i in nums:
            x = as_tensor(argv[i]).detach().set_requires_grad(True)
            argv[i] = x
            xs.append(x)
        with enable_grad():
            val = f(*argv, **kwargs)
        if not isinstance(val, Tensor):
            raise TypeError(f"value_and_grad needs f to return a Tensor, got {type(val).__name__}")
        gs: list[Any] = grad([val], xs)
        gs = [Tensor._wrap(np.zeros_like(x._data)) if g is None else g for x, g in zip(xs, gs)]
        value: Any
        if numpy_in:
            v = val.detach()
            value = v.item() if v.size == 1 else v.numpy()
            gs = [g.numpy() for g in gs]
        else:
            value = val.detach()
        return value, (tuple(gs) if many else gs[0])

    if hessp:
        # tf.hessp is a transform built on this module (cycle: at call time)
        from .functional import hessp as _hessp
        # (an attribute set on a function, which type checkers do not model)
        wrapped.hessp = _hessp(f, argnums)  # type: ignore[attr-defined]
    return wrapped
