"""Gradient checking against central finite differences (public API).

:func:`check_grads` compares, along random directions, tenferro's JVP (``"fwd"``) and
VJP (``"rev"``) of ``f`` with central differences, then (``order=2``) does the same for
the derivative maps themselves: the VJP map is checked in both modes (reverse-over-
reverse and forward-over-reverse), the JVP map in reverse mode (reverse-over-forward).
Complex inputs get complex directions; the reverse check uses the real inner product
Re⟨ȳ, J v⟩ = Re⟨Jᴴ ȳ, v⟩ that fixes the complex convention of docs/design.md#complex-numbers.

Instrumentation for op tests (through pytest's ``monkeypatch``): :func:`record_calls`
(e.g. nothing reaches the engine before an input error) and :func:`check_kernel_backward`
(a compiled backward kernel and the create_graph rule on Tensors agree).

Replay of the shared reference derivatives (``../shared/oracles``, one case a line of
``cases/<op>/<family>.jsonl``; see that folder's README.md), used by the oracle tests:

* :func:`oracle_dir` — where the data is (it may be absent: the caller decides to skip);
* :func:`load_oracle_cases` — the case dicts of some op folders, in file order;
* :func:`decode_oracle_tensor` — a case tensor ``{"data", "dtype", "shape", "order"}``
  (complex entries as ``[re, im]`` pairs) as an ndarray;
* :func:`assert_close_to_oracle` — ``assert_allclose`` under a case's ``{"rtol", "atol"}``,
  optionally with rtol capped at :data:`ORACLE_RTOL_CAP`;
* :func:`oracle_phi` — φ(x) = Re⟨ȳ, f(x)⟩, the scalar whose Hessian the HVP probes test;
* :func:`replay_oracle_case` — every probe of a case through a test's adapter function:
  JVP and VJP against ``pytorch_ref``/``fd_ref``, and the HVP of φ by forward-over-reverse;

and, for the adapters that map PyTorch's spelling to tenferro's:
:class:`UnsupportedOracleCase`, :func:`oracle_kwargs` (reject unknown ``op_kwargs``),
:func:`oracle_axis` (PyTorch ``dim`` -> NumPy ``axis``), :func:`oracle_output_keys` (the
probes' output names), :func:`oracle_case_id` (a case's test id) and
:func:`assert_oracle_cases_cover` (the replay really has cases for every op/family).
"""
from __future__ import annotations

from typing import (TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping, Sequence,
                    TypeAlias, cast)

from numpy.typing import ArrayLike, DTypeLike, NDArray

import json
import os
import unittest
from pathlib import Path

import numpy as np

from ._ops.elementwise import multiply as _multiply, real as _real
from ._ops.reductions import sum as _sum
from ._rule_api import detached, share_tangent
from ._tensor import Tensor, as_tensor, tensor
from .autograd import grad
from .forward import dual_level, hvp, jvp, make_dual

if TYPE_CHECKING:
    import pytest

#: ``(finite-difference step, rtol, atol)``: the ``tol`` of :func:`check_grads`.
Tolerance: TypeAlias = "tuple[float, float, float]"
#: An oracle case: one parsed jsonl line (:func:`load_oracle_cases`).
OracleCase: TypeAlias = "dict[str, Any]"

__all__ = ["check_grads", "check_low_precision", "random_array", "random_tensor",
           "random_spd", "random_well_conditioned", "DEFAULT_TOL",
           "oracle_dir", "load_oracle_cases", "decode_oracle_tensor", "assert_close_to_oracle",
           "oracle_phi", "ORACLE_RTOL_CAP", "UnsupportedOracleCase", "oracle_kwargs",
           "oracle_axis", "oracle_output_keys", "oracle_case_id", "assert_oracle_cases_cover",
           "replay_oracle_case", "record_calls", "check_kernel_backward"]

_REAL = {np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}
# (finite-difference step, rtol, atol) per dtype
DEFAULT_TOL: dict[np.dtype[Any], Tolerance] = {np.dtype(np.float64): (1e-6, 1e-5, 1e-6),
               np.dtype(np.complex128): (1e-6, 1e-5, 1e-6),
               np.dtype(np.float32): (1e-2, 5e-2, 5e-2),
               np.dtype(np.complex64): (1e-2, 5e-2, 5e-2)}


def random_array(shape: int | tuple[int, ...], dtype: DTypeLike = np.float64, rng: Any = None,
                 scale: float = 1.0) -> NDArray[Any]:
    """Standard-normal entries (complex: independent real and imaginary parts).

    Parameters
    ----------
    shape : int or tuple of int
        The shape.
    dtype : dtype, optional
        Default float64.
    rng : numpy.random.Generator or int, optional
        A generator or seed (``numpy.random.default_rng(rng)``).
    scale : float, optional
        Multiplies the entries. Default 1.0.

    Returns
    -------
    numpy.ndarray
        The random array.

    Examples
    --------
    >>> tf.testing.random_array((2, 3), rng=0).shape
    (2, 3)
    """
    rng = np.random.default_rng(rng)
    dtype = np.dtype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    # np.asarray: for shape () NumPy hands back a scalar, not a 0-d array
    out: NDArray[Any] = np.asarray((scale * a).astype(dtype))
    return out


def random_tensor(shape: int | tuple[int, ...], dtype: DTypeLike = np.float64, rng: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """A Tensor of ``random_array(shape, dtype, rng)``, optionally ``requires_grad``.

    Standard normal entries, complex ones with independent real and imaginary parts.

    Parameters
    ----------
    shape : int or tuple of int
        The shape.
    dtype : dtype, optional
        Default float64.
    rng : numpy.random.Generator or int, optional
        A generator or seed.
    requires_grad : bool, optional
        Default False.

    Returns
    -------
    Tensor
        A new leaf.

    Examples
    --------
    >>> tf.testing.random_tensor((2,), tf.complex128, rng=0).dtype
    dtype('complex128')
    """
    return Tensor(random_array(shape, dtype, rng), requires_grad=requires_grad)


def random_spd(n: int, dtype: DTypeLike = np.float64, batch: tuple[int, ...] = (),
               rng: Any = None) -> NDArray[Any]:
    """A Hermitian positive-definite matrix (or stack) with eigenvalues in [1, n + 1].

    Parameters
    ----------
    n : int
        The size.
    dtype : dtype, optional
        Default float64 (complex dtypes give Hermitian matrices).
    batch : tuple of int, optional
        Batch shape. Default ().
    rng : numpy.random.Generator or int, optional
        A generator or seed.

    Returns
    -------
    numpy.ndarray
        Shape ``batch + (n, n)``.

    Examples
    --------
    >>> w = np.linalg.eigvalsh(tf.testing.random_spd(3, rng=0))
    >>> bool(np.all((w >= 1) & (w <= 4)))
    True
    """
    a = random_array(tuple(batch) + (n, n), dtype, rng)
    spd: NDArray[Any] = (a @ np.swapaxes(a, -1, -2).conj() / n
                         + np.eye(n, dtype=dtype)).astype(dtype)
    return spd


def random_well_conditioned(shape: tuple[int, ...], dtype: DTypeLike = np.float64,
                            rng: Any = None) -> NDArray[Any]:
    """A random (stack of) matrix with singular values bounded away from zero.

    Parameters
    ----------
    shape : tuple of int
        ``batch + (m, n)``.
    dtype : dtype, optional
        Default float64.
    rng : numpy.random.Generator or int, optional
        A generator or seed.

    Returns
    -------
    numpy.ndarray
        The matrices.

    Examples
    --------
    >>> a = tf.testing.random_well_conditioned((3, 3), rng=0)
    >>> bool(np.linalg.cond(a) < 100)
    True
    """
    a = random_array(shape, dtype, rng)
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    a[..., np.arange(k), np.arange(k)] += 3.0
    return a


def _tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _values(out: Any) -> list[NDArray[Any]]:
    return [np.asarray(o.numpy() if isinstance(o, Tensor) else o) for o in _tuple(out)]


def _real_inner(a: ArrayLike, b: ArrayLike) -> float:
    """Re Σ conj(a)·b over all entries."""
    return float(np.sum((np.conj(a) * b).real))


def _fd_jvp(f: Callable[..., Any], args: Sequence[NDArray[Any]],
            dirs: Sequence[NDArray[Any]], eps: float) -> list[NDArray[Any]]:
    plus = _values(f(*[as_tensor(a + eps * v) for a, v in zip(args, dirs)]))
    minus = _values(f(*[as_tensor(a - eps * v) for a, v in zip(args, dirs)]))
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _assert_close(actual: Iterable[ArrayLike], expected: Iterable[ArrayLike], rtol: float,
                  atol: float, what: str) -> None:
    for k, (a_in, e_in) in enumerate(zip(actual, expected)):
        a = np.asarray(a_in)
        e = np.asarray(e_in)
        scale = max(1.0, float(np.max(np.abs(e)))) if e.size else 1.0
        if a.shape != e.shape:
            raise AssertionError(f"{what}: output {k} has shape {a.shape}, expected {e.shape}")
        if not np.allclose(a, e, rtol=rtol, atol=atol * scale, equal_nan=False):
            err = float(np.max(np.abs(a - e))) if a.size else 0.0
            raise AssertionError(
                f"{what}: output {k} differs from finite differences (max abs error {err:.3g}, "
                f"rtol={rtol}, atol={atol * scale:.3g})\n got      {a!r}\n expected {e!r}")


def _check_once(f: Callable[..., Any], args: Sequence[NDArray[Any]], modes: Sequence[str],
                rng: np.random.Generator, tol: Tolerance | None) -> list[NDArray[Any]]:
    dtype = np.result_type(*[a.dtype for a in args])
    eps, rtol, atol = tol or DEFAULT_TOL[np.dtype(dtype)]
    dirs = [random_array(a.shape, a.dtype, rng) for a in args]
    fd = _fd_jvp(f, args, dirs, eps)
    if "fwd" in modes:
        _, tangents = jvp(f, [as_tensor(a) for a in args], [as_tensor(v) for v in dirs])
        _assert_close(_values(tangents), fd, rtol, atol, "JVP (forward mode)")
    if "rev" in modes:
        xs = [Tensor(a, requires_grad=True) for a in args]
        outs = _tuple(f(*xs))
        cots = [random_array(o.shape, o.dtype, rng) for o in outs]
        gs = grad(list(outs), xs, cots)
        lhs = sum(_real_inner(g.numpy(), v) for g, v in zip(gs, dirs) if g is not None)
        rhs = sum(_real_inner(c, d) for c, d in zip(cots, fd))
        _assert_close([lhs], [rhs], rtol, atol, "VJP (reverse mode), <ȳ, J v> = <Jᴴ ȳ, v>")
    return dirs


def _tracked(x: Tensor) -> Tensor:
    """``x`` itself if it requires grad, else a fresh leaf keeping its forward tangent."""
    if x.requires_grad:
        return x
    t = detached(x).set_requires_grad(True)
    share_tangent(t, x)
    return t


def check_grads(f: Callable[..., Tensor | Sequence[Tensor]], args: Sequence[ArrayLike],
                modes: Sequence[Literal["rev", "fwd"]] = ("rev", "fwd"), order: int = 2, *,
                rng: Any = 0, tol: Tolerance | None = None) -> None:
    r"""Check the derivatives of ``f`` at ``args`` against central finite differences.

    ``order=2`` also checks the VJP map x -> Jᴴȳ in ``modes`` (reverse-over-reverse,
    forward-over-reverse) and, with "fwd", the JVP map x -> J v in both modes
    (reverse-over-forward, and forward-over-forward: a jvp nested in a jvp). Random
    directions and cotangents; reverse mode is checked through
    :math:`\langle \bar y, J v\rangle = \langle J^H \bar y, v\rangle`.

    Parameters
    ----------
    f : callable
        A function of Tensors returning a Tensor or a tuple of Tensors.
    args : sequence of array_like
        Arrays (or Tensors) of float or complex dtype; every one is differentiated.
    modes : sequence of {'rev', 'fwd'}, optional
        Default ('rev', 'fwd').
    order : {1, 2}, optional
        Default 2.
    rng : numpy.random.Generator or int, optional
        The directions' generator or seed. Default 0.
    tol : tuple of float, optional
        ``(eps, rtol, atol)`` overriding :data:`DEFAULT_TOL` (per dtype).

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        Whose message says which map failed (``f``, its VJP map or its JVP map) in which
        mode, with the values.

    Examples
    --------
    >>> tf.testing.check_grads(lambda x: tf.sin(x).sum(), [np.array([0.1, 0.2])])
    >>> @tf.custom_vjp
    ... def f(x):
    ...     return tf.sin(x)
    >>> f.defvjp(lambda x: (f(x), x), lambda x, g: (g * tf.sin(x),))   # wrong: cos
    >>> tf.testing.check_grads(f, [np.array([0.5])], modes=("rev",), order=1)
    Traceback (most recent call last):
        ...
    AssertionError: VJP (reverse mode), ... differs from finite differences ...
    """
    gen = np.random.default_rng(rng)
    arrays = [np.array(a.numpy() if isinstance(a, Tensor) else a) for a in args]
    for a in arrays:
        if a.dtype.kind not in "fc":
            raise TypeError(f"check_grads differentiates float/complex arrays, got {a.dtype}")
    _check_grads(f, arrays, tuple(modes), order, gen, tol, "")


def _check_grads(f: Callable[..., Any], args: Sequence[NDArray[Any]], modes: Sequence[str],
                 order: int, rng: np.random.Generator, tol: Tolerance | None,
                 where: str) -> None:
    try:
        _check_once(f, args, modes, rng, tol)
    except AssertionError as e:
        raise AssertionError(f"{where}{e}") from None
    if order < 2:
        return
    if "rev" in modes:
        probe = [Tensor(a) for a in args]
        cots = [random_array(o.shape, o.dtype, rng) for o in _tuple(f(*probe))]

        def vjp_map(*xs_in: Tensor) -> tuple[Tensor, ...]:
            xs = [_tracked(x) for x in xs_in]
            outs = _tuple(f(*xs))
            gs = grad(list(outs), list(xs), [as_tensor(c) for c in cots], create_graph=True)
            return tuple(Tensor._wrap(np.zeros_like(x.numpy())) if g is None else g
                         for x, g in zip(xs, gs))

        # its "rev" check is reverse-over-reverse, its "fwd" check forward-over-reverse
        _check_grads(vjp_map, args, modes, order - 1, rng, tol,
                     f"{where}derivative of the VJP map x -> Jᴴȳ (create_graph=True): ")
    if "fwd" in modes:
        dirs = [random_array(a.shape, a.dtype, rng) for a in args]

        def jvp_map(*xs: Tensor) -> tuple[Tensor, ...]:
            return _tuple(jvp(f, list(xs), [as_tensor(d) for d in dirs])[1])

        # its "rev" check is reverse-over-forward, its "fwd" check forward-over-forward
        # (a jvp nested in a jvp: nested dual levels)
        _check_grads(jvp_map, args, ("rev", "fwd"), order - 1, rng, tol,
                     f"{where}derivative of the JVP map x -> J v: ")


def check_low_precision(f: Callable[..., Tensor | Sequence[Tensor]], args: Sequence[ArrayLike],
                        rtol: float | None = None, rng: Any = 0) -> None:
    """Value and VJP of ``f`` in float32/complex64 agree with the float64 result.

    ``args`` are float64/complex128 arrays; they are cast down, and the single-precision value
    and gradient are compared with the double-precision ones.

    Parameters
    ----------
    f : callable
        A function of Tensors returning a Tensor or a tuple of Tensors.
    args : sequence of array_like
        float64/complex128 arrays.
    rtol : float, optional
        The tolerance (rtol and atol). Default 2e-3.
    rng : numpy.random.Generator or int, optional
        The cotangents' generator or seed. Default 0.

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        If the single-precision value or gradient is off.

    Examples
    --------
    >>> tf.testing.check_low_precision(lambda x: tf.exp(x).sum(), [np.array([0.1, 0.2])])
    """
    gen = np.random.default_rng(rng)
    down: dict[np.dtype[Any], type[np.inexact[Any]]] = {
        np.dtype(np.float64): np.float32, np.dtype(np.complex128): np.complex64}
    hi = [np.asarray(a) for a in args]
    lo = [a.astype(down[a.dtype]) for a in hi]
    results: list[tuple[tuple[Any, ...], list[Tensor]]] = []
    for group in (hi, lo):
        xs = [Tensor(a, requires_grad=True) for a in group]
        outs = _tuple(f(*xs))
        results.append((outs, xs))
    outs_hi, xs_hi = results[0]
    outs_lo, xs_lo = results[1]
    cots = [random_array(o.shape, o.dtype, gen) for o in outs_hi]
    g_hi = grad(list(outs_hi), xs_hi, cots)
    g_lo = grad(list(outs_lo), xs_lo, [c.astype(down[c.dtype]) for c in cots])
    rtol = 2e-3 if rtol is None else rtol
    for o_lo, o_hi in zip(outs_lo, outs_hi):
        assert o_lo.dtype in (np.float32, np.complex64), f"output dtype {o_lo.dtype}"
        _assert_close(_values(o_lo), _values(o_hi), rtol, rtol, "single-precision value")
    for a, b in zip(g_lo, g_hi):
        if a is None or b is None:
            assert a is None and b is None
            continue
        assert a.dtype in (np.float32, np.complex64), f"gradient dtype {a.dtype}"
        _assert_close(_values(a), _values(b), rtol, rtol, "single-precision gradient")


# ---- instrumentation (with pytest's monkeypatch fixture) ----------------------------------

def record_calls(monkeypatch: pytest.MonkeyPatch, owner: object,
                 *names: str) -> list[tuple[Any, ...]]:
    """Wrap ``owner.<name>`` for each of ``names``, recording the calls.

    Through pytest's ``monkeypatch``, so the wrapping ends with the test: every call appends
    its positional arguments to the returned list, then runs the original.
    ``record_calls(monkeypatch, op_module, "apply1", "apply")`` watches an op module's entries
    into the engine: bad input must raise before anything is recorded
    (docs/design.md#errors), so the list stays empty.

    Parameters
    ----------
    monkeypatch : pytest.MonkeyPatch
        The test's fixture.
    owner : object
        A module or object.
    *names : str
        Attribute names of ``owner`` to wrap.

    Returns
    -------
    list of tuple
        The positional arguments of every call, in order.
    """
    calls: list[tuple[Any, ...]] = []
    for name in names:
        def wrapper(*args: Any, _orig: Callable[..., Any] = getattr(owner, name),
                    **kwargs: Any) -> Any:
            calls.append(args)
            return _orig(*args, **kwargs)
        monkeypatch.setattr(owner, name, wrapper)
    return calls


def check_kernel_backward(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
                          loss: Callable[[Tensor], Tensor], a: NDArray[Any],
                          rtol: float = 1e-12, atol: float = 1e-12) -> None:
    """The two backward paths of an op with a compiled backward kernel agree.

    ``loss`` maps a Tensor to a real scalar through the op; its gradient at the array ``a`` is
    computed twice with :func:`tenferro.grad`. The plain backward (``create_graph=False``)
    must call the kernel ``owner.<name>`` exactly once, the create_graph backward (the rule on
    Tensors) never, and the two gradients must be allclose under ``rtol``/``atol``.

    Parameters
    ----------
    monkeypatch : pytest.MonkeyPatch
        The test's fixture.
    owner : object
        The module holding the kernel.
    name : str
        The kernel's attribute name.
    loss : callable
        Tensor -> real one-element Tensor, through the op.
    a : numpy.ndarray
        The point.
    rtol, atol : float, optional
        Default 1e-12 each.

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        If the kernel call counts or the gradients differ.
    """

    def run(create_graph: bool) -> NDArray[Any]:
        x = Tensor(a, requires_grad=True)
        if not create_graph:
            g, = grad([loss(x)], [x])
            if g is None:
                raise AssertionError("the loss does not depend on its input")
            return g.numpy()
        # a forward tangent makes a create_graph pullback run its own ops (without one,
        # the spectral rules record one node around the kernel: linalg/svd.py lazy_rule)
        with dual_level():
            xd = make_dual(x, np.zeros_like(a))
            g, = grad([loss(xd)], [x], create_graph=True)
        if g is None:
            raise AssertionError("the loss does not depend on its input")
        return g.numpy()

    calls = record_calls(monkeypatch, owner, name)
    g_graph = run(True)
    if calls:
        raise AssertionError(f"the create_graph backward called {name} {len(calls)} time(s); "
                             "it must run the rule on Tensors")
    g_plain = run(False)
    if len(calls) != 1:
        raise AssertionError(f"the plain backward called {name} {len(calls)} time(s), "
                             "expected once")
    np.testing.assert_allclose(g_graph, g_plain, rtol=rtol, atol=atol,
                               err_msg=f"create_graph backward vs the {name} kernel")


# ---- replay of the shared reference derivatives (../shared/oracles) ----------------------

# rtol >= 1 accepts any answer, zero included (np.allclose(0, d, rtol=1) holds): the data
# gives rtol 10..1000 to some single-precision and second-order cases (qr's first order,
# lu's second order, pinv/lstsq in float32). Cap it at the loosest other tolerance of the
# linalg cases (tenferro's worst error on this data is below 1e-3).
ORACLE_RTOL_CAP = 1e-2


def oracle_dir(near: str | os.PathLike[str] | None = None) -> Path:
    """The folder of the shared oracle data.

    ``$TENFERRO_ORACLES`` if set, else ``<project>/../shared/oracles`` where ``<project>`` is
    the nearest folder holding a ``pyproject.toml`` above ``near``. Tests pass their own
    ``__file__``: the installed package's location says nothing about where the repository
    is. The folder need not exist (the data lives outside the repository); check
    ``(oracle_dir(...) / "cases").is_dir()`` before relying on it.

    Parameters
    ----------
    near : str or path-like, optional
        A file or folder; default the working directory.

    Returns
    -------
    pathlib.Path
        The folder (possibly missing).
    """
    env = os.environ.get("TENFERRO_ORACLES")
    if env:
        return Path(env)
    start = Path(near).resolve() if near is not None else Path.cwd().resolve()
    for folder in [start] + list(start.parents):
        if (folder / "pyproject.toml").is_file():
            return folder / ".." / "shared" / "oracles"
    return start / ".." / "shared" / "oracles"


def load_oracle_cases(ops: Iterable[str], root: str | os.PathLike[str] | None = None
                      ) -> list[OracleCase]:
    """Every case of the op folders ``ops`` as a list of dicts, one a non-blank jsonl line.

    In the order of ``ops``; files sorted by name. Each dict also gets ``"_family"``: the stem
    of its file.

    Parameters
    ----------
    ops : iterable of str
        Op folder names.
    root : str or path-like, optional
        Default :func:`oracle_dir`.

    Returns
    -------
    list of dict
        The cases; [] when the ``cases`` folder is missing.
    """
    cases_dir = Path(oracle_dir() if root is None else root) / "cases"
    out: list[OracleCase] = []
    if not cases_dir.is_dir():
        return out
    for op in ops:
        for path in sorted((cases_dir / op).glob("*.jsonl")):
            with open(path) as fh:
                for line in fh:
                    if line.strip():
                        case = json.loads(line)
                        case["_family"] = path.stem
                        out.append(case)
    return out


def decode_oracle_tensor(t: Mapping[str, Any]) -> NDArray[Any]:
    """A case tensor ``{"data", "dtype", "shape", "order"}`` as an ndarray.

    Complex data is a flat list of ``[re, im]`` pairs.

    Parameters
    ----------
    t : mapping
        The case tensor; ``order`` must be 'row_major'.

    Returns
    -------
    numpy.ndarray
        The array.

    Raises
    ------
    AssertionError
        For another order.

    Examples
    --------
    >>> tf.testing.decode_oracle_tensor({"data": [[1, 2]], "dtype": "complex128",
    ...                                  "shape": [1], "order": "row_major"})
    array([1.+2.j])
    """
    if t["order"] != "row_major":
        raise AssertionError(f"oracle tensor order {t['order']!r}, expected 'row_major'")
    dtype = np.dtype(t["dtype"])
    a = np.asarray(t["data"], dtype=np.float64)
    if dtype.kind == "c":
        a = a.reshape(-1, 2) @ np.array([1, 1j])
    out: NDArray[Any] = a.reshape(t["shape"]).astype(dtype)
    return out


def assert_close_to_oracle(actual: ArrayLike, expected: NDArray[Any], tol: Mapping[str, float],
                           what: str, rtol_cap: float | None = None) -> None:
    """``actual`` has ``expected``'s shape and is allclose to it under ``tol``.

    Parameters
    ----------
    actual : array_like
        The computed value.
    expected : numpy.ndarray
        The reference.
    tol : mapping
        A case's ``{"rtol", "atol"}``.
    what : str
        Names the check in the message.
    rtol_cap : float, optional
        Caps rtol.

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        On a shape or value mismatch.
    """
    got = np.asarray(actual)
    if got.shape != expected.shape:
        raise AssertionError(f"{what}: shape {got.shape} != {expected.shape}")
    rtol = tol["rtol"] if rtol_cap is None else min(tol["rtol"], rtol_cap)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=tol["atol"], err_msg=what)


def oracle_phi(fn: Callable[..., Sequence[Tensor]], cotangents: Sequence[ArrayLike]
               ) -> Callable[..., Tensor]:
    """φ(x) = Re⟨ȳ, f(x)⟩ = Σ Re(conj(ȳ)·y), the scalar whose Hessian the oracle probes.

    The terms are summed left to right.

    Parameters
    ----------
    fn : callable
        Maps the input Tensors to a tuple of outputs.
    cotangents : sequence of array_like
        One per output.

    Returns
    -------
    callable
        φ, a function of the input Tensors returning a real one-element Tensor.

    Examples
    --------
    >>> phi = tf.testing.oracle_phi(lambda x: (2 * x,), [np.array([1.0, 1.0])])
    >>> phi(tf.tensor([1.0, 2.0]))
    tensor(6.)
    """
    def phi(*xs: Tensor) -> Tensor:
        terms = [_sum(_real(_multiply(np.conj(c), y)))
                 for y, c in zip(fn(*xs), cotangents)]
        return sum(terms[1:], terms[0])
    return phi


class UnsupportedOracleCase(Exception):
    """A case uses a PyTorch argument the test's adapter cannot express in tenferro.

    Raised, never turned into a skip: new oracle data must not silently test less."""


def oracle_kwargs(kw: dict[str, Any], allowed: Iterable[str], case_id: str) -> dict[str, Any]:
    """``kw`` (a case's ``op_kwargs``) itself, after checking that it names only keywords of
    ``allowed``.

    Parameters
    ----------
    kw : dict
        The case's keyword arguments.
    allowed : iterable of str
        The keywords the adapter understands.
    case_id : str
        For the message.

    Returns
    -------
    dict
        ``kw``.

    Raises
    ------
    UnsupportedOracleCase
        For any other keyword.
    """
    unknown = set(kw) - set(allowed)
    if unknown:
        raise UnsupportedOracleCase(f"{case_id}: op_kwargs {sorted(unknown)} have no tenferro "
                                    f"equivalent in this adapter")
    return kw


def oracle_axis(dim: int | list[int] | tuple[int, ...] | None, ndim: int, case_id: str
                ) -> int | tuple[int, ...] | None:
    """PyTorch ``dim`` -> NumPy ``axis`` for an input of ``ndim`` dimensions.

    PyTorch reduces over everything for ``dim=None`` and for an empty list, and accepts dim 0
    or -1 on a 0-d tensor (treating it as one element); NumPy spells all of these
    ``axis=None``.

    Parameters
    ----------
    dim : int, list or tuple of int, or None
        PyTorch's dim.
    ndim : int
        The input's dimension.
    case_id : str
        For the message.

    Returns
    -------
    int, tuple of int, or None
        NumPy's axis (a list becomes a tuple).

    Raises
    ------
    UnsupportedOracleCase
        For any other dim of a 0-d input.

    Examples
    --------
    >>> tf.testing.oracle_axis([0, 1], 2, "case"), tf.testing.oracle_axis([], 2, "case")
    ((0, 1), None)
    """
    if dim is None:
        return None
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if not dims:
        return None
    if ndim == 0:
        if all(d in (0, -1) for d in dims):
            return None
        raise UnsupportedOracleCase(f"{case_id}: dim={dim!r} on a 0-d input")
    return dims if isinstance(dim, (list, tuple)) else dim


def oracle_output_keys(n: int) -> list[str]:
    """How the probes name ``n`` outputs of an identity observable.

    Parameters
    ----------
    n : int
        The number of outputs.

    Returns
    -------
    list of str
        ``["value"]`` for one, else ``["output_0", ..., "output_<n-1>"]``.

    Examples
    --------
    >>> tf.testing.oracle_output_keys(2)
    ['output_0', 'output_1']
    """
    return ["value"] if n == 1 else [f"output_{i}" for i in range(n)]


def oracle_case_id(case: OracleCase) -> str:
    """A case's test id: its ``case_id`` (for ``parametrize(..., ids=oracle_case_id)``).

    Parameters
    ----------
    case : dict
        An oracle case.

    Returns
    -------
    str
        ``case["case_id"]``.
    """
    cid: str = case["case_id"]
    return cid


def assert_oracle_cases_cover(cases: Iterable[OracleCase],
                              expected: Iterable[str] | Mapping[str, Iterable[str]],
                              root: str | os.PathLike[str] | None = None) -> None:
    """The replay really runs: ``cases`` hold every op (or family) of ``expected``.

    ``cases`` are case dicts from :func:`load_oracle_cases`.

    Parameters
    ----------
    cases : iterable of dict
        The loaded cases.
    expected : iterable of str or mapping
        Op folders, or ``{op: {family, ...}}`` for every family (file stem) of every op.
    root : str or path-like, optional
        The folder the cases were read from: when it has no ``cases`` folder (the data lives
        outside the repository) the calling test is skipped (``unittest.SkipTest``, which
        pytest honours) instead of failing.

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        If an op or family is missing.
    unittest.SkipTest
        If ``root`` has no ``cases`` folder.
    """
    if root is not None and not (Path(root) / "cases").is_dir():
        raise unittest.SkipTest(f"no oracle data at {root}")
    found: dict[str, set[str]] = {}
    for case in cases:
        found.setdefault(case["op"], set()).add(case["_family"])
    if not hasattr(expected, "items"):
        missing_ops = sorted(set(expected) - set(found))
        if missing_ops:
            raise AssertionError(f"ops without oracle cases: {missing_ops}")
        return
    by_op = cast(Mapping[str, Iterable[str]], expected)   # (it has .items())
    missing = {op: sorted(set(fams) - found.get(op, set())) for op, fams in by_op.items()}
    missing = {op: fams for op, fams in missing.items() if fams}
    if missing:
        raise AssertionError(f"families without oracle cases: {missing}")


def replay_oracle_case(case: OracleCase, fn: Callable[..., Any],
                       keys: Iterable[str] | None = None, *,
                       rtol_cap: float | None = ORACLE_RTOL_CAP) -> int:
    """Replay every probe of the oracle ``case`` through ``fn``; returns how many ran.

    For each probe:

    * jvp: ``tf.jvp(fn, inputs, direction)`` against ``pytorch_ref`` and ``fd_ref``;
    * vjp: ``tf.grad(outputs, inputs, cotangent)`` against ``pytorch_ref`` (an input the
      outputs do not reach has the gradient 0; outputs that require no grad, e.g. the sign of
      a real slogdet, are left out of the seed);
    * hvp (where the probe has one): H·v of φ(x) = Re⟨ȳ, fn(x)⟩ (:func:`oracle_phi`) by
      forward-over-reverse, against both references;

    under the case's ``comparison`` tolerances (second order defaults to first). The case
    must expect success and carry probes.

    Parameters
    ----------
    case : dict
        An oracle case.
    fn : callable
        Maps the case's input Tensors (in the order of ``case["inputs"]``) to the observed
        outputs: a tuple, or one Tensor.
    keys : iterable of str, optional
        Names of those outputs as the probes' cotangents have them (default
        :func:`oracle_output_keys` of their count); a probe naming other outputs fails.
    rtol_cap : float, optional
        Caps rtol (``None``: as the data says; an rtol >= 1 accepts anything). Default
        ``ORACLE_RTOL_CAP``.

    Returns
    -------
    int
        The number of probes run.

    Raises
    ------
    AssertionError
        On a mismatch, a case that does not expect success, or one without probes.
    """
    cid = case["case_id"]
    if case["expected_behavior"] != "success":
        raise AssertionError(f"{cid}: expected_behavior {case['expected_behavior']!r}; "
                             "only success cases have probes to replay")
    if not case["probes"]:
        raise AssertionError(f"{cid}: no probes")

    def f(*xs: Tensor) -> tuple[Any, ...]:
        return _tuple(fn(*xs))

    names = list(case["inputs"])
    primals = [decode_oracle_tensor(case["inputs"][k]) for k in names]
    first = case["comparison"]["first_order"]
    second = case["comparison"].get("second_order", first)

    def close(actual: ArrayLike, expected: NDArray[Any], tol: Mapping[str, float],
              what: str) -> None:
        assert_close_to_oracle(actual, expected, tol, what, rtol_cap=rtol_cap)

    for probe in case["probes"]:
        pid = f"{cid}/{probe['probe_id']}"
        want = oracle_output_keys(len(probe["cotangent"])) if keys is None else list(keys)
        if list(probe["cotangent"]) != want:
            raise AssertionError(f"{pid}: probe outputs {list(probe['cotangent'])}, "
                                 f"the adapter's {want}")
        refs = [("pytorch", probe["pytorch_ref"]), ("fd", probe["fd_ref"])]
        dirs = [decode_oracle_tensor(probe["direction"][k]) for k in names]
        cots = [decode_oracle_tensor(probe["cotangent"][k]) for k in want]

        # forward mode
        _, tangents = jvp(f, [tensor(p) for p in primals], [tensor(d) for d in dirs])
        if len(tangents) != len(want):
            raise AssertionError(f"{pid}: {len(tangents)} outputs, the probe has {len(want)}")
        for key, t in zip(want, tangents):
            for src, ref in refs:
                close(t.numpy(), decode_oracle_tensor(ref["jvp"][key]), first,
                      f"{pid}: jvp[{key}] vs {src}_ref")

        # reverse mode
        xs = [tensor(p, requires_grad=True) for p in primals]
        seeded = [(o, c) for o, c in zip(f(*xs), cots) if o.requires_grad]
        grads: list[Tensor | None] = (
            grad([o for o, _ in seeded], xs, [tensor(c) for _, c in seeded])
            if seeded else [None] * len(xs))
        for name, p, g in zip(names, primals, grads):
            ga = np.zeros_like(p) if g is None else g.numpy()
            close(ga, decode_oracle_tensor(probe["pytorch_ref"]["vjp"][name]), first,
                  f"{pid}: vjp[{name}] vs pytorch_ref")

        # second order: H·v of φ(x) = Re⟨ȳ, f(x)⟩, forward-over-reverse
        if "hvp" in probe["pytorch_ref"]:
            _, _, hvps = hvp(oracle_phi(f, cots), [tensor(p) for p in primals],
                             [tensor(d) for d in dirs])
            for name, h in zip(names, hvps):
                for src, ref in refs:
                    if "hvp" in ref:
                        close(h.numpy(), decode_oracle_tensor(ref["hvp"][name]), second,
                              f"{pid}: hvp[{name}] vs {src}_ref")
    return len(case["probes"])
