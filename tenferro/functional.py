"""Function transforms: Jacobians, Hessians, Hessian-vector products, SciPy linear
operators, and gradient checkpointing.

* :func:`jacobian` — the full Jacobian, like ``jax.jacobian``: reverse mode builds it by
  rows (one vector-Jacobian product per output element, all on one recorded graph),
  forward mode by columns (one Jacobian-vector product per input element).
* :func:`hessian` — forward-over-reverse: one JVP of the gradient map per input element.
* :func:`hessp` — ``(x, p) -> H·p`` by one JVP of the gradient (Pearlmutter, "Fast exact
  multiplication by the Hessian", Neural Computation 6, 1994); with
  ``tf.value_and_grad(f, hessp=True)`` it plugs into ``scipy.optimize.minimize``.
* :func:`linear_operator` — ``J·v``, ``Jᴴ·u`` or ``H·v`` as a
  ``scipy.sparse.linalg.LinearOperator`` (matrix-free Krylov solvers, eigsh, ...).
* :func:`checkpoint` — run a function without keeping its intermediates and recompute
  them in the backward pass (Griewank & Walther, "Algorithm 799: revolve", ACM TOMS 26,
  2000; Chen et al., "Training deep nets with sublinear memory cost", arXiv:1604.06174).

docs/functional.md is the user guide.

**Shapes and pytrees.** Inputs and outputs may be Tensors, ndarrays, Python scalars, or
tuples/lists/dicts of them (nested). The Jacobian of an output leaf of shape ``S_out``
with respect to an input leaf of shape ``S_in`` has shape ``S_out + S_in``; the result
nests the output structure outside and the input structure inside, as JAX does. When no
differentiated argument holds a Tensor the results are ndarrays, otherwise Tensors
(detached: the transforms are not themselves recorded on the graph, and an argument that
carries a forward-mode tangent raises UnsupportedADError rather than lose it).

**Complex numbers** (docs/design.md#complex-numbers: JVPs use f'(z); VJPs multiply by
conj(f'(z))). A real
input with a complex output has the complex Jacobian ``∂f/∂x`` in both modes (reverse mode
then needs two VJPs per output element, for the real and imaginary seed). A complex input
is refused unless ``holomorphic=True`` is passed: a non-holomorphic function has no
complex Jacobian (its derivative is not C-linear), so, as in JAX, the caller has to state
holomorphy — or differentiate with respect to ``z.real`` and ``z.imag`` separately. With
``holomorphic=True`` inputs and outputs must be complex and the result is ``f'(z)`` (the
VJP rows are conjugated back); holomorphy itself is not checked: for a non-holomorphic f
forward and reverse mode then disagree.
"""
from __future__ import annotations

import functools
from typing import (TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal,
                    Sequence, TypeAlias, TypeVar, overload)

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import forward as fw
from ._engine import apply
from ._errors import DTypeError, ShapeError, TenferroError, UnsupportedADError
from ._ops.registry import OPS, Op, defop
from ._rule_api import Cut, has_node_or_tangent, has_tangent, reverse_pass, watch_degenerate
from ._tensor import Tensor, as_tensor
from .autograd import enable_grad as _enable_grad, grad as _grad, no_grad as _no_grad
from .custom import _differentiating

if TYPE_CHECKING:
    from scipy.sparse.linalg import LinearOperator

    from .custom import _Value

    # a tree's structure: None for a leaf, (kind, type, keys, children) for a node (keys:
    # a dict's list of keys, None for a sequence)
    _Spec: TypeAlias = "tuple[str, type, Any, list[_Spec]] | None"
    # one recorded evaluation of f (_record): (inputs, output spec, output leaves, aux)
    _Recorded: TypeAlias = "tuple[list[Tensor], _Spec, list[Tensor], PyTree]"
    # a Jacobian by blocks: (output spec, output leaves, one (m_k, n) block per leaf, aux)
    _Blocks: TypeAlias = "tuple[_Spec, list[Tensor], list[NDArray[Any]], PyTree]"

__all__ = ["jacobian", "hessian", "hessp", "linear_operator", "checkpoint"]

#: A pytree: a leaf (Tensor, ndarray, Python scalar) or a tuple, list or dict of pytrees,
#: nested. The transforms take and return pytrees whose leaf types follow the arguments
#: (ndarrays for NumPy arguments, else Tensors), so a type checker sees them as Any.
PyTree: TypeAlias = Any

_F = TypeVar("_F", bound=Callable[..., Any])


# ---- pytrees ------------------------------------------------------------------------------
# A spec is None for a leaf, or (kind, type, keys, children) for a tuple/list/dict node.

def _flatten(tree: PyTree, leaves: list[Any]) -> _Spec:
    """Append the leaves of ``tree`` (depth first) to ``leaves``; return its spec."""
    if isinstance(tree, dict):
        keys = list(tree)
        return ("dict", type(tree), keys, [_flatten(tree[k], leaves) for k in keys])
    if isinstance(tree, (tuple, list)):
        return ("seq", type(tree), None, [_flatten(t, leaves) for t in tree])
    leaves.append(tree)
    return None


def _unflatten(spec: _Spec, it: Iterator[Any]) -> PyTree:
    """The tree of ``spec`` with its leaves taken from the iterator ``it``."""
    if spec is None:
        return next(it)
    kind, typ, keys, children = spec
    vals = [_unflatten(c, it) for c in children]
    if kind == "dict":
        return typ(zip(keys, vals))
    if typ is tuple or typ is list:
        return typ(vals)
    if hasattr(typ, "_fields"):      # a namedtuple
        return typ(*vals)
    return typ(vals)


def _num_leaves(spec: _Spec) -> int:
    return 1 if spec is None else sum(_num_leaves(c) for c in spec[3])


def _map_tree(fn: Callable[[Any], Any], tree: PyTree) -> PyTree:
    leaves: list[Any] = []
    spec = _flatten(tree, leaves)
    return _unflatten(spec, iter([fn(leaf) for leaf in leaves]))


# ---- the differentiated arguments ---------------------------------------------------------

def _check_argnums(argnums: object, fname: str) -> tuple[bool, tuple[int, ...]]:
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple, list)):
        raise TypeError(f"{fname}: argnums must be an int or a tuple of ints, got "
                        f"{type(argnums).__name__}")
    if isinstance(argnums, (tuple, list)):
        if not argnums:
            raise ShapeError(f"{fname}: argnums is empty; name at least one argument")
        for a in argnums:
            if isinstance(a, bool) or not isinstance(a, int):
                raise TypeError(f"{fname}: argnums must hold ints, got {type(a).__name__}")
        if len(set(argnums)) != len(argnums):
            raise ShapeError(f"{fname}: argnums {tuple(argnums)} has duplicates")
    return (False, (argnums,)) if isinstance(argnums, int) else (True, tuple(argnums))


def _leaf_array(leaf: Any, fname: str, where: str) -> NDArray[Any]:
    if isinstance(leaf, Tensor):
        return leaf._data
    try:
        arr = np.asarray(leaf)
    except Exception as e:  # noqa: BLE001 - report any conversion failure the same way
        raise DTypeError(f"{fname}: {where} ({type(leaf).__name__}) cannot be converted to "
                         f"an array: {e}") from None
    return arr


class _Inputs:
    """The differentiated arguments of one call: their leaves as ndarrays and the way
    back to ``f``'s argument list and to result trees."""

    def __init__(self, fname: str, args: Sequence[Any], argnums: object, holomorphic: bool,
                 complex_ok: bool = False) -> None:
        many, nums = _check_argnums(argnums, fname)
        nargs = len(args)
        for i in nums:
            if not -nargs <= i < nargs:
                raise ShapeError(f"{fname}: argnums has {i} but the function was called with "
                                 f"{nargs} positional argument(s)")
        self.fname, self.many = fname, many
        self.nums = tuple(i % nargs for i in nums)
        self.args = list(args)
        self.specs: list[_Spec] = []
        self.arrays: list[NDArray[Any]] = []
        self.numpy_in = True
        for i in self.nums:
            leaves: list[Any] = []
            self.specs.append(_flatten(args[i], leaves))
            for k, leaf in enumerate(leaves):
                if isinstance(leaf, Tensor):
                    self.numpy_in = False
                    if has_tangent(leaf):
                        # the results are detached: the tangent would be dropped silently
                        raise UnsupportedADError(
                            f"{fname}: argument {i} (leaf {k}) carries a forward-mode "
                            f"tangent (inside tf.jvp or a dual level), but {fname}'s results "
                            f"are not differentiable (detached), so it would be dropped; "
                            f"nest tf.jvp / tf.hvp instead (jvp of jvp gives uᵀ∇²f v, jvp "
                            f"of hvp the third derivative)")
                a = _leaf_array(leaf, fname, f"argument {i} (leaf {k})")
                if a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
                    raise DTypeError(
                        f"{fname}: argument {i} (leaf {k}) has dtype {a.dtype}; only "
                        f"float32/float64/complex64/complex128 inputs can be "
                        f"differentiated (pass 1.0 rather than 1 for a float)")
                if a.dtype.kind == "c" and fname == "hessian":
                    raise DTypeError(
                        f"hessian: argument {i} (leaf {k}) is complex ({a.dtype}); the "
                        f"Hessian of a real function of z is not a complex matrix: use "
                        f"tf.hessp / tf.hvp (the convention of "
                        f"docs/design.md#complex-numbers), or pass z.real and "
                        f"z.imag as separate real arguments")
                if a.dtype.kind == "c" and holomorphic is False and not complex_ok:
                    raise DTypeError(
                        f"{fname}: argument {i} (leaf {k}) is complex ({a.dtype}); a complex "
                        f"Jacobian exists only for a holomorphic function: pass "
                        f"holomorphic=True if f is holomorphic, or differentiate with "
                        f"respect to z.real and z.imag as separate real arguments")
                if a.dtype.kind != "c" and holomorphic is True:
                    raise DTypeError(
                        f"{fname}: holomorphic=True needs complex inputs, but argument {i} "
                        f"(leaf {k}) is {a.dtype}; cast it with .astype(complex)")
                self.arrays.append(a)
        self.sizes = [a.size for a in self.arrays]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(int)
        self.total = int(self.offsets[-1])

    def call_args(self, leaves: Iterable[Any]) -> list[Any]:
        """``f``'s positional arguments with the differentiated leaves replaced."""
        args = list(self.args)
        it = iter(leaves)
        for i, spec in zip(self.nums, self.specs):
            args[i] = _unflatten(spec, it)
        return args

    def tree(self, values: Iterable[Any]) -> PyTree:
        """A tree shaped like the differentiated arguments holding ``values`` (one per
        leaf): the argument's tree, or a tuple of them when argnums is a tuple."""
        it = iter(values)
        trees = [_unflatten(spec, it) for spec in self.specs]
        return tuple(trees) if self.many else trees[0]

    def leaves_of(self, tree: PyTree, what: str) -> list[NDArray[Any]]:
        """The leaves of ``tree`` (shaped like the differentiated arguments) as arrays."""
        items = tree if self.many else (tree,)
        if self.many and (not isinstance(tree, (tuple, list)) or len(tree) != len(self.nums)):
            raise ShapeError(f"{self.fname}: {what} must be a tuple of {len(self.nums)} "
                             f"entries (one per argnum)")
        out: list[Any] = []
        for t in items:
            leaves: list[Any] = []
            _flatten(t, leaves)
            out.extend(leaves)
        if len(out) != len(self.arrays):
            raise ShapeError(f"{self.fname}: {what} has {len(out)} leaves but the "
                             f"differentiated arguments have {len(self.arrays)}; it must "
                             f"have their structure")
        arrays = []
        for k, (leaf, ref) in enumerate(zip(out, self.arrays)):
            a = _leaf_array(leaf, self.fname, f"{what} (leaf {k})")
            if a.shape != ref.shape:
                raise ShapeError(f"{self.fname}: {what} (leaf {k}) has shape {a.shape} but "
                                 f"its argument has shape {ref.shape}")
            if a.dtype.kind == "c" and ref.dtype.kind != "c":
                raise DTypeError(f"{self.fname}: {what} (leaf {k}) is complex but its "
                                 f"argument is real ({ref.dtype})")
            arrays.append(np.asarray(a, ref.dtype))
        return arrays

    def unit(self, c: int) -> tuple[int, NDArray[Any]]:
        """The tangent leaves of the c-th basis vector of the flattened inputs: (j, array)."""
        j = int(np.searchsorted(self.offsets, c, side="right") - 1)
        e = np.zeros(self.arrays[j].shape, self.arrays[j].dtype)
        e.reshape(-1)[c - self.offsets[j]] = 1
        return j, e

    def wrap(self, arr: NDArray[Any]) -> Tensor | NDArray[Any]:
        return arr if self.numpy_in else Tensor._wrap(arr)


def _split_aux(out: Any, fname: str, has_aux: bool, what: str) -> tuple[Any, PyTree]:
    """``f``'s result as (result, aux): with ``has_aux`` the pair (``what``, aux), its aux
    tensors detached; else (out, None)."""
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{fname}: has_aux=True needs f to return a pair ({what}, aux), "
                        f"got {type(out).__name__}")
    out, aux = out
    return out, _map_tree(lambda a: Tensor._wrap(a._data) if isinstance(a, Tensor) else a, aux)


def _outputs(out: Any, fname: str, has_aux: bool) -> tuple[_Spec, list[Tensor], PyTree]:
    """``f``'s result as (output tree spec, output Tensor leaves, aux)."""
    out, aux = _split_aux(out, fname, has_aux, "output")
    leaves: list[Any] = []
    spec = _flatten(out, leaves)
    for k, o in enumerate(leaves):
        if not isinstance(o, Tensor):
            raise TypeError(
                f"{fname}: f must return Tensors (or a tuple/list/dict of them), but output "
                f"leaf {k} is {type(o).__name__}; compute it with tenferro operations on the "
                f"arguments (a NumPy result carries no derivative)")
        if o.dtype.kind not in "fc":
            raise DTypeError(f"{fname}: output leaf {k} has dtype {o.dtype}, which has no "
                             f"derivative; return a float or complex result")
    return spec, leaves, aux


def _check_out_holomorphic(outs: Iterable[Tensor], holomorphic: bool, fname: str) -> None:
    if holomorphic:
        for k, o in enumerate(outs):
            if o.dtype.kind != "c":
                raise DTypeError(f"{fname}: holomorphic=True needs complex outputs, but "
                                 f"output leaf {k} is {o.dtype}")


def _assemble(inp: _Inputs, out_spec: _Spec, out_leaves: Sequence[Tensor],
              blocks: Sequence[NDArray[Any]]) -> PyTree:
    """The result tree: the output structure outside, the input structure inside; leaf
    (k, j) is ``blocks[k]`` (shape (m_k, n_total)) cut to input j, reshaped to
    ``out_k.shape + in_j.shape``."""
    per_out = []
    for o, b in zip(out_leaves, blocks):
        parts = []
        for j, a in enumerate(inp.arrays):
            blk = b[:, inp.offsets[j]:inp.offsets[j + 1]]
            parts.append(inp.wrap(np.ascontiguousarray(blk).reshape(tuple(o.shape) + a.shape)))
        per_out.append(inp.tree(parts))
    return _unflatten(out_spec, iter(per_out))


def _block_dtype(o: Tensor, inp: _Inputs) -> np.dtype[Any]:
    return np.result_type(o.dtype, *[a.dtype for a in inp.arrays]) if inp.arrays else o.dtype


# ---- jacobian -----------------------------------------------------------------------------

def jacobian(f: Callable[..., PyTree], argnums: int | Sequence[int] = 0,
             mode: Literal["auto", "rev", "fwd"] = "auto", *, has_aux: bool = False,
             holomorphic: bool = False) -> Callable[..., PyTree]:
    """``f`` -> a function returning the Jacobian of ``f`` at its arguments.

    ``J[k][j]`` (output leaf k, input leaf j) has shape ``out_k.shape + in_j.shape`` and holds
    ``∂out_k[a] / ∂in_j[b]``; the output tree is outside, the input tree inside, like
    ``jax.jacobian``.

    ``mode="rev"`` builds J by rows: ``f`` runs once with the graph recorded and every row is
    one reverse pass over that graph (``retain_graph``), the seed a unit cotangent (cost ≈ one
    forward + m backward passes). ``mode="fwd"`` builds J by columns: one forward-mode
    evaluation per input element (cost ≈ n forward passes with tangents). ``"auto"`` takes
    forward mode when the inputs have fewer elements than the outputs.

    Parameters
    ----------
    f : callable
        A function of tensors returning a Tensor or a tree (tuple/list/dict) of them.
    argnums : int or sequence of int, optional
        The arguments to differentiate; a tuple makes the inner tree a tuple with one entry
        per argnum. Default 0.
    mode : {'auto', 'rev', 'fwd'}, optional
        Reverse (by rows) or forward (by columns). Default 'auto'.
    has_aux : bool, optional
        ``f`` returns ``(output, aux)`` and the function returns ``(J, aux)``. Default False.
    holomorphic : bool, optional
        For complex inputs: J is then f'(z) (see the module docstring). Default False.

    Returns
    -------
    callable
        ``jac(*args, **kwargs)`` returning J (Tensors, or ndarrays for NumPy arguments).

    Raises
    ------
    ShapeError
        If ``mode`` is unknown or ``argnums`` is empty, repeated or out of range.
    TypeError
        If ``argnums`` is not an int or a tuple of ints.
    DTypeError
        (when called) For complex inputs without ``holomorphic=True``, or non-float outputs.

    Examples
    --------
    >>> tf.jacobian(lambda x: x ** 2)(tf.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if mode not in ("auto", "rev", "fwd"):
        raise ShapeError(f"jacobian: mode must be 'auto', 'rev' or 'fwd', got {mode!r}")
    _check_argnums(argnums, "jacobian")

    @functools.wraps(f)
    def jac_fn(*args: Any, **kwargs: Any) -> PyTree:
        inp = _Inputs("jacobian", args, argnums, holomorphic)
        recorded: _Recorded | None = None
        use = mode if inp.total > 0 else "rev"
        if use == "auto":
            # the recorded evaluation serves reverse mode; forward mode discards it
            recorded = _record(f, inp, kwargs, has_aux)
            use = "fwd" if inp.total < sum(o.size for o in recorded[2]) else "rev"
        if use == "fwd":
            recorded = None
            out_spec, outs, blocks, aux = _jac_fwd(f, inp, kwargs, has_aux, holomorphic)
        else:
            if recorded is None:
                recorded = _record(f, inp, kwargs, has_aux)
            out_spec, outs, blocks, aux = _jac_rev(inp, recorded, holomorphic)
        jac = _assemble(inp, out_spec, outs, blocks)
        return (jac, aux) if has_aux else jac

    return jac_fn


def _record(f: Callable[..., Any], inp: _Inputs, kwargs: dict[str, Any],
            has_aux: bool) -> _Recorded:
    """One evaluation of f with the graph recorded: (xs, out spec, output leaves, aux)."""
    xs = [Tensor._wrap(a).set_requires_grad(True) for a in inp.arrays]
    with _enable_grad():
        out = f(*inp.call_args(xs), **kwargs)
    out_spec, outs, aux = _outputs(out, "jacobian", has_aux)
    return xs, out_spec, outs, aux


def _jac_rev(inp: _Inputs, recorded: _Recorded, holomorphic: bool) -> _Blocks:
    xs, out_spec, outs, aux = recorded
    _check_out_holomorphic(outs, holomorphic, "jacobian")
    blocks: list[NDArray[Any]] = []
    for o in outs:
        dt = _block_dtype(o, inp)
        m = o.size
        block = np.zeros((m, inp.total), dt)
        blocks.append(block)
        if not o.requires_grad or m == 0 or not xs:
            continue                       # the output does not depend on the inputs
        # one unit seed, reused: _row copies each gradient (which may be a view of the
        # seed, e.g. for f(x) = x) into the row before the seed changes
        seed = np.zeros(o.shape, o.dtype)
        flat = seed.reshape(-1)
        # a real input under a complex output: J = A + iB, Re(Jᴴe) = Aᵀe, Re(Jᴴ(ie)) = Bᵀe
        imag_seed = o.dtype.kind == "c" and not holomorphic
        for i in range(m):
            flat[i] = 1
            block[i] = _row(o, xs, seed, inp)
            if imag_seed:
                flat[i] = 1j
                block[i] += 1j * _row(o, xs, seed, inp)
            flat[i] = 0
        if holomorphic:
            np.conjugate(block, out=block)  # the VJP gives conj(f'(z)) rows
    return out_spec, outs, blocks, aux


def _row(o: Tensor, xs: Sequence[Tensor], seed: NDArray[Any], inp: _Inputs) -> NDArray[Any]:
    # the engine's walk itself, without grad()'s argument handling and copies: each
    # gradient is copied into the row at once, before the seed is reused
    gs = reverse_pass([o], [seed], xs, retain_graph=True, create_graph=False)
    row = np.zeros(inp.total, np.result_type(*[x.dtype for x in xs]))
    for j, g in enumerate(gs or ()):
        if g is not None:
            row[inp.offsets[j]:inp.offsets[j + 1]] = np.reshape(g, -1)
    return row


def _jac_fwd(f: Callable[..., Any], inp: _Inputs, kwargs: dict[str, Any], has_aux: bool,
             holomorphic: bool) -> _Blocks:
    xs = [Tensor._wrap(a) for a in inp.arrays]
    cols: list[NDArray[Any]] | None = None
    with fw.dual_level(), _no_grad():
        for c in range(inp.total):
            j, e = inp.unit(c)
            leaves = list(xs)
            leaves[j] = fw.make_dual(xs[j], e)
            out = f(*inp.call_args(leaves), **kwargs)
            spec_c, outs_c, aux_c = _outputs(out, "jacobian", has_aux)
            if cols is None:
                out_spec, aux = spec_c, aux_c
                outs = [Tensor._wrap(o._data) for o in outs_c]
                _check_out_holomorphic(outs, holomorphic, "jacobian")
                cols = [np.zeros((inp.total, o.size), _block_dtype(o, inp)) for o in outs]
            for k, o in enumerate(outs_c):
                t = fw.unpack_dual(o).tangent
                if t is not None:
                    cols[k][c] = t._data.reshape(-1)
    assert cols is not None     # jacobian takes this path only for inp.total > 0
    return out_spec, outs, [np.ascontiguousarray(cb.T) for cb in cols], aux


# ---- hessian and hessp --------------------------------------------------------------------

def _scalar_value(val: Any, fname: str, has_aux: bool) -> tuple[Tensor, PyTree]:
    val, aux = _split_aux(val, fname, has_aux, "value")
    if not isinstance(val, Tensor):
        raise TypeError(f"{fname}: f must return a Tensor, got {type(val).__name__}; compute "
                        f"it with tenferro operations on the arguments")
    if val.dtype.kind not in "f":
        raise DTypeError(f"{fname}: f must return a real floating-point scalar, got "
                         f"{val.dtype} (differentiate a real function such as abs(z)**2)")
    if val.size != 1:
        raise ShapeError(f"{fname}: f must return a scalar (one element), got shape "
                         f"{val.shape}; reduce it first (e.g. .sum()) or use tf.jacobian")
    return val, aux


def _grad_tangents(f: Callable[..., Any], inp: _Inputs, kwargs: dict[str, Any],
                   tangent_leaves: Sequence[NDArray[Any] | None], fname: str, has_aux: bool
                   ) -> tuple[NDArray[Any], list[NDArray[Any]], list[NDArray[Any]], PyTree]:
    """Forward-over-reverse: the gradient of the scalar ``f`` and its JVP along the given
    tangents (None = zero), in one dual level. Returns (value, grads, hvps, aux) as
    ndarrays (zeros where a leaf does not reach the value)."""
    with fw.dual_level(), _enable_grad():
        xs = [Tensor._wrap(a).set_requires_grad(True) for a in inp.arrays]
        duals = [x if t is None else fw.make_dual(x, t) for x, t in zip(xs, tangent_leaves)]
        val, aux = _scalar_value(f(*inp.call_args(duals), **kwargs), fname, has_aux)
        gs = _grad([val], duals, create_graph=True)
        hv = [None if g is None else fw.unpack_dual(g).tangent for g in gs]
    grads = [np.zeros_like(a) if g is None else g._data for a, g in zip(inp.arrays, gs)]
    hvps = [np.zeros_like(a) if h is None else h._data for a, h in zip(inp.arrays, hv)]
    return val._data, grads, hvps, aux


def _hessian_rows(f: Callable[..., Any], inp: _Inputs, kwargs: dict[str, Any],
                  has_aux: bool) -> tuple[NDArray[Any] | None, PyTree]:
    """Reverse-over-reverse: H (n, n), row c = ∂(∇f)_c/∂x, or None (then the caller
    takes forward-over-reverse) when a spectral rule met a degenerate block."""
    dt = np.result_type(*[a.dtype for a in inp.arrays])
    rows = np.zeros((inp.total, inp.total), dt)
    with watch_degenerate() as met, _enable_grad():
        xs = [Tensor._wrap(a).set_requires_grad(True) for a in inp.arrays]
        val, aux = _scalar_value(f(*inp.call_args(xs), **kwargs), "hessian", has_aux)
        gs = _grad([val], xs, create_graph=True)
        for k, g in enumerate(gs):
            if g is None or not g.requires_grad:
                continue            # ∇f_k is zero or constant: those rows are zero
            seed = np.zeros(g.shape, g.dtype)
            flat = seed.reshape(-1)
            for c in range(g.size):
                flat[c] = 1
                second = reverse_pass([g], [seed], xs, retain_graph=True,
                                      create_graph=False)
                flat[c] = 0
                row = rows[inp.offsets[k] + c]
                for j, h in enumerate(second or ()):
                    if h is not None:
                        row[inp.offsets[j]:inp.offsets[j + 1]] = np.reshape(h, -1)
        if met():
            return None, None
    return rows, aux


def _hessian_columns(f: Callable[..., Any], inp: _Inputs, kwargs: dict[str, Any],
                     has_aux: bool) -> tuple[NDArray[Any], PyTree]:
    """Forward-over-reverse: H (n, n) built by columns, column c the JVP of the gradient
    map along the c-th unit vector (stored transposed back into rows)."""
    dt = np.result_type(*[a.dtype for a in inp.arrays])
    cols = np.zeros((inp.total, inp.total), dt)
    aux = None
    for c in range(inp.total):
        j, e = inp.unit(c)
        tangents: list[NDArray[Any] | None] = [None] * len(inp.arrays)
        tangents[j] = e
        _, _, hv, aux = _grad_tangents(f, inp, kwargs, tangents, "hessian", has_aux)
        for k, h in enumerate(hv):
            cols[c, inp.offsets[k]:inp.offsets[k + 1]] = h.reshape(-1)
    # cols[c] = H e_c, i.e. column c: H[r, c] = cols[c, r]
    return cols.T, aux


def hessian(f: Callable[..., Tensor | tuple[Tensor, PyTree]], argnums: int | Sequence[int] = 0,
            *, has_aux: bool = False) -> Callable[..., PyTree]:
    """``f`` -> a function returning the Hessian of the real scalar ``f``.

    Reverse-over-reverse: ``f`` runs once with the graph recorded, its gradient once with
    ``create_graph=True``, and row c of H is one reverse pass over the gradient's graph seeded
    with the c-th unit vector (the strategy of PyTorch's
    ``torch.autograd.functional.hessian``; n passes without tangents). Where that is not exact
    it falls back to forward-over-reverse, column c the JVP of the gradient map along the
    c-th unit vector (one dual-level evaluation of f and its gradient per input element):
    when a spectral rule (svd, eigh, eig, ...) met a degenerate block, whose within-block
    second derivatives only forward-over-reverse gets right in every direction
    (docs/degenerate_derivatives.md).

    Parameters
    ----------
    f : callable
        A function returning a real one-element Tensor (or ``(value, aux)``).
    argnums : int or sequence of int, optional
        The arguments to differentiate. Default 0.
    has_aux : bool, optional
        ``f`` returns ``(value, aux)`` and the function returns ``(H, aux)``. Default False.

    Returns
    -------
    callable
        ``hess(*args, **kwargs)`` returning H; ``H[i][j]`` has shape
        ``in_i.shape + in_j.shape`` (input tree outside and inside, like ``jax.hessian``).

    Raises
    ------
    DTypeError
        (when called) For complex inputs: the Hessian of a real function of z is not a
        complex matrix; use :func:`hessp` / ``tf.hvp`` (docs/design.md#complex-numbers) or
        split z into real and imaginary parts. Also when ``f`` is not a real scalar.
    ShapeError
        (when called) If ``f`` returns more than one element.

    Examples
    --------
    >>> tf.hessian(lambda x: (x ** 3).sum())(tf.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    _check_argnums(argnums, "hessian")

    @functools.wraps(f)
    def hess_fn(*args: Any, **kwargs: Any) -> PyTree:
        inp = _Inputs("hessian", args, argnums, holomorphic=False)
        rows, aux = _hessian_rows(f, inp, kwargs, has_aux)
        if rows is None:
            rows, aux = _hessian_columns(f, inp, kwargs, has_aux)
        blocks = [rows[inp.offsets[k]:inp.offsets[k + 1]] for k in range(len(inp.arrays))]
        per_row = []
        for k, a in enumerate(inp.arrays):
            parts = [inp.wrap(np.ascontiguousarray(blocks[k][:, inp.offsets[j]:inp.offsets[j + 1]])
                              .reshape(a.shape + b.shape))
                     for j, b in enumerate(inp.arrays)]
            per_row.append(inp.tree(parts))
        hess = inp.tree(per_row)
        return (hess, aux) if has_aux else hess

    return hess_fn


def _hessp_position(argnums: object) -> tuple[bool, int]:
    many, nums = _check_argnums(argnums, "hessp")
    return many, max(nums) + 1 if many else nums[0] + 1


def hessp(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0) -> Callable[..., PyTree]:
    """``f`` -> ``hp``, a function returning the Hessian-vector product :math:`H p`.

    ``hp`` takes ``f``'s arguments with the direction ``p`` inserted right after the
    differentiated argument: for ``argnums=0`` that is ``hp(x, p, *args)``, the calling
    convention of ``scipy.optimize.minimize(..., hessp=hp, args=args)``. For a tuple
    ``argnums``, ``p`` is a tuple of directions (one per argnum) inserted after the last of
    them. ``p`` has the structure of the differentiated arguments; so has :math:`H p`
    (ndarrays when the arguments are NumPy).

    One forward-over-reverse pass (Pearlmutter 1994): the JVP of the gradient map along p,
    the cost of about one forward and one backward pass with tangents. For complex arguments
    it follows ``tf.hvp`` (docs/design.md#complex-numbers: the JVP of the gradient map).

    Parameters
    ----------
    f : callable
        A function returning a real one-element Tensor.
    argnums : int or sequence of int, optional
        The arguments to differentiate. Default 0.

    Returns
    -------
    callable
        ``hp(*args_with_p)`` returning :math:`H p`.

    Raises
    ------
    TypeError
        (when called) If the direction ``p`` is missing.

    Examples
    --------
    >>> hp = tf.hessp(lambda x: (x ** 3).sum())
    >>> hp(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    array([ 6., 12.])
    """
    many, pos = _hessp_position(argnums)

    @functools.wraps(f)
    def hp(*args: Any, **kwargs: Any) -> PyTree:
        if len(args) < pos + 1:
            raise TypeError(f"hessp: the function takes f's arguments with the direction p "
                            f"at position {pos}; got {len(args)} positional argument(s)")
        p = args[pos]
        rest = args[:pos] + args[pos + 1:]
        inp = _Inputs("hessp", rest, argnums, holomorphic=False, complex_ok=True)
        tangents = inp.leaves_of(p, "p")
        _, _, hv, _ = _grad_tangents(f, inp, kwargs, tangents, "hessp", False)
        return inp.tree([inp.wrap(h) for h in hv])

    return hp


# ---- scipy.sparse.linalg.LinearOperator ------------------------------------------------------

def _real_split(apply: Callable[[NDArray[Any]], NDArray[Any]], v: NDArray[Any],
                dtype: np.dtype[Any]) -> NDArray[Any]:
    """Apply a real-linear map meant for real vectors to a complex ``v`` by parts."""
    if np.iscomplexobj(v) and dtype.kind != "c":
        return apply(np.ascontiguousarray(v.real)) + 1j * apply(np.ascontiguousarray(v.imag))
    return apply(np.asarray(v, dtype))


def linear_operator(f: Callable[[Tensor], Tensor], x: ArrayLike,
                    kind: Literal["jvp", "vjp", "hvp"] = "jvp", *,
                    holomorphic: bool = False) -> LinearOperator:
    """A ``scipy.sparse.linalg.LinearOperator`` for a derivative of ``f`` at ``x``.

    ``x`` is one array (Tensor, ndarray or scalar) of any shape; vectors are its flattened
    elements (and the flattened output's), so with ``n = x.size`` and ``m = f(x).size``:

    ============  ===========  ======================  ===========================
    ``kind``      shape        ``matvec``              ``rmatvec``
    ============  ===========  ======================  ===========================
    ``"jvp"``     (m, n)       ``J v`` (forward mode)  ``Jᴴ u`` (reverse mode)
    ``"vjp"``     (n, m)       ``Jᴴ u``                ``J v``
    ``"hvp"``     (n, n)       ``H v``                 ``H v`` (H is symmetric)
    ============  ===========  ======================  ===========================

    ``dtype`` is the result type of x and f(x). Reverse products reuse one recorded graph (f
    runs once, at construction); a forward product runs f once with tangents; ``"hvp"`` (a
    real scalar f, real x) is one forward-over-reverse pass per product. A complex vector
    given to a real operator is applied to its real and imaginary parts.

    Parameters
    ----------
    f : callable
        A function of one Tensor returning one Tensor.
    x : array_like
        The point.
    kind : {'jvp', 'vjp', 'hvp'}, optional
        Which derivative. Default 'jvp'.
    holomorphic : bool, optional
        Needed for complex ``x`` (J = f'(z), ``Jᴴ`` its conjugate transpose). Default False.

    Returns
    -------
    scipy.sparse.linalg.LinearOperator
        The operator, for ``scipy.sparse.linalg`` solvers (cg, gmres, eigsh, svds, ...).

    Raises
    ------
    ShapeError
        If ``kind`` is unknown.
    DTypeError
        For ``kind='hvp'`` with complex ``x`` or a non-real-scalar ``f``.
    TypeError
        If ``x`` is not one array or ``f`` does not return one Tensor.

    Examples
    --------
    >>> op = tf.linear_operator(lambda x: x ** 2, tf.tensor([1.0, 2.0]))
    >>> op.shape, op.matvec(np.ones(2))
    ((2, 2), array([2., 4.]))
    """
    from scipy.sparse.linalg import LinearOperator
    if kind not in ("jvp", "vjp", "hvp"):
        raise ShapeError(f"linear_operator: kind must be 'jvp', 'vjp' or 'hvp', got {kind!r}")
    fname = "linear_operator"
    if kind == "hvp" and (holomorphic or np.iscomplexobj(_leaf_array(x, fname, "x"))):
        raise DTypeError("linear_operator: kind='hvp' needs a real x and a real scalar f "
                         "(the Hessian of a real function of complex z is not complex-"
                         "linear); split z into its real and imaginary parts")
    inp = _Inputs(fname, (x,), 0, holomorphic)
    if inp.specs[0] is not None:
        raise TypeError(f"linear_operator: x must be one array (Tensor, ndarray or scalar), "
                        f"got a {type(x).__name__}; concatenate the parts into one vector")
    a = inp.arrays[0]
    n = a.size
    if kind == "hvp":

        def hv(v: NDArray[Any]) -> NDArray[Any]:
            t = v.reshape(a.shape)
            _, _, h, _ = _grad_tangents(f, inp, {}, [t], fname, False)
            return h[0].reshape(-1)

        def mv(v: ArrayLike) -> NDArray[Any]:
            return _real_split(hv, np.asarray(v).reshape(-1), a.dtype)

        return LinearOperator((n, n), matvec=mv, rmatvec=mv, dtype=a.dtype)

    # reverse mode: record f once and reuse its graph for every product
    xt = Tensor._wrap(a).set_requires_grad(True)
    with _enable_grad():
        out = f(xt)
    _, outs, _ = _outputs(out, fname, False)
    if len(outs) != 1 or not isinstance(out, Tensor):
        raise TypeError("linear_operator: f must return one Tensor")
    _check_out_holomorphic(outs, holomorphic, fname)
    o = out
    m = o.size
    odt = o.dtype
    dtype = np.result_type(odt, a.dtype)

    # Re(Jᴴ u) for real x (the engine's cotangent of a real input)
    def vjp_real(u: NDArray[Any]) -> NDArray[Any]:
        if not o.requires_grad:
            return np.zeros(n, a.dtype)
        g = _grad([o], [xt], [u.reshape(o.shape)], retain_graph=True)[0]
        return np.zeros(n, a.dtype) if g is None else g._data.reshape(-1)

    def jh(u: ArrayLike) -> NDArray[Any]:
        u = np.asarray(u).reshape(-1)
        if holomorphic:
            return vjp_real(np.asarray(u, odt))     # C-linear: exactly Jᴴ u
        if odt.kind == "c":
            u = np.asarray(u, odt)                  # J = A + iB: Jᴴu = Re(Jᴴu) - i Re(Jᴴ(iu))
            return vjp_real(u) - 1j * vjp_real(1j * u)
        return _real_split(vjp_real, u, odt)


    def jvp_plain(v: NDArray[Any]) -> NDArray[Any]:
        with fw.dual_level(), _no_grad():
            y = f(fw.make_dual(Tensor._wrap(a), v.reshape(a.shape)))
            t = fw.unpack_dual(y).tangent
        return np.zeros(m, odt) if t is None else t._data.reshape(-1)

    def jv(v: ArrayLike) -> NDArray[Any]:
        v = np.asarray(v).reshape(-1)
        if holomorphic:
            return jvp_plain(np.asarray(v, a.dtype))
        return _real_split(jvp_plain, v, a.dtype)

    if kind == "jvp":
        return LinearOperator((m, n), matvec=jv, rmatvec=jh, dtype=dtype)
    return LinearOperator((n, m), matvec=jh, rmatvec=jv, dtype=dtype)


# ---- checkpoint ----------------------------------------------------------------------------

class _CheckpointCall:
    """What one checkpointed call keeps (the node's ctx): the function, the arguments with
    their Tensor leaves taken out, and the output structure. No intermediate is kept."""
    __slots__ = ("fn", "name", "spec", "leaves", "tensor_pos", "out_spec", "out_leaves",
                 "out_pos", "check")

    def __init__(self, fn: Callable[..., Any], name: str, spec: _Spec, leaves: Sequence[Any],
                 tensor_pos: Sequence[int], check: bool) -> None:
        self.fn, self.name, self.spec, self.check = fn, name, spec, check
        self.leaves = [None if i in tensor_pos else leaf for i, leaf in enumerate(leaves)]
        self.tensor_pos = tensor_pos
        # the output structure, set by the first run
        self.out_spec: _Spec = None
        self.out_leaves: list[Any] = []
        self.out_pos: list[int] = []

    def run(self, xs: Sequence[Tensor]) -> list[Tensor]:
        """``fn`` on the argument tree with its Tensor leaves replaced by ``xs``; returns
        the output's Tensor leaves (in the order of ``out_pos``)."""
        leaves = list(self.leaves)
        for i, x in zip(self.tensor_pos, xs):
            leaves[i] = x
        args, kwargs = _unflatten(self.spec, iter(leaves))
        out = self.fn(*args, **kwargs)
        out_leaves: list[Any] = []
        spec = _flatten(out, out_leaves)
        if self.out_spec is None:
            self.out_spec, self.out_leaves = spec, out_leaves
            self.out_pos = [k for k, o in enumerate(out_leaves) if isinstance(o, Tensor)]
        elif _num_leaves(spec) != len(self.out_leaves):
            raise TenferroError(f"checkpoint({self.name}): the recomputation returned a "
                                f"different structure than the first call")
        return [out_leaves[k] for k in self.out_pos]

    def verify(self, outs: Sequence[Tensor], saved: Sequence[_Value]) -> None:
        """The recomputed outputs must be the saved ones: a function that draws random
        numbers or reads changing state would give wrong derivatives silently."""
        if not self.check:
            return
        for k, (o, s) in enumerate(zip(outs, saved)):
            s = s._data if isinstance(s, Tensor) else s
            d = o._data
            if d.shape != s.shape:
                raise TenferroError(f"checkpoint({self.name}): the recomputation gave output "
                                    f"{k} of shape {d.shape}, the first call {s.shape}")
            if d.dtype.kind in "fc":
                scale = float(np.max(np.abs(s), initial=0.0))
                tol = 1000 * np.finfo(d.dtype).eps * max(scale, 1.0)
                bad = d.size and not np.allclose(d, s, rtol=0, atol=tol, equal_nan=True)
            else:
                bad = not np.array_equal(d, s)
            if bad:
                raise TenferroError(
                    f"checkpoint({self.name}): recomputing the function in the backward "
                    f"pass gave a different output {k} than the first call. A checkpointed "
                    f"function must be deterministic (no random numbers drawn inside, no "
                    f"state that changes between calls): pass random draws in as arguments, "
                    f"or pass check=False if the difference is harmless")


def _checkpoint_vjp(call: _CheckpointCall, needs: Sequence[bool], gs: Sequence[_Value],
                    xs: Sequence[_Value], ys: Sequence[_Value]) -> tuple[_Value, ...]:
    graph = any(isinstance(x, Tensor) for x in xs)
    wanted = [k for k in range(len(xs)) if needs[k]]
    leaves: list[Tensor]
    if graph:
        # a nested reverse pass must not walk into the caller's graph (mid-traversal):
        # run it on proxies, linked to the real inputs afterwards (by relay nodes: a
        # checkpoint or custom rule inside may have recorded the proxies' nodes)
        cut = Cut(xs, True, track=wanted)
        leaves = cut.proxies
    else:
        leaves = []
        for k, x in enumerate(xs):
            t = Tensor._wrap(x)
            if k in wanted and x.dtype.kind in "fc":
                t.set_requires_grad(True)
            leaves.append(t)
    with _enable_grad():
        outs = call.run(leaves)
    call.verify(outs, ys)
    roots: list[Tensor] = []
    seeds: list[_Value] = []
    for o, g in zip(outs, gs):
        if g is None or not o.requires_grad or o.dtype.kind not in "fc":
            continue
        roots.append(o)
        seeds.append(g)
    targets = [k for k in wanted if leaves[k].requires_grad]
    cots: list[_Value] = [None] * len(xs)
    if roots and targets:
        res = _grad(roots, [leaves[k] for k in targets], seeds, create_graph=graph)
        for k, c in zip(targets, res):
            cots[k] = None if c is None else (c if graph else c._data)
    if graph:
        cut.graft_relay()
    return tuple(cots)


def _checkpoint_jvp(call: _CheckpointCall, ts: Sequence[_Value], xs: Sequence[_Value],
                    ys: Sequence[_Value]) -> tuple[_Value, ...]:
    # forward mode recomputes fn once with tangents (the engine has set the level to 0
    # while this rule runs, so a fresh dual level is free to open)
    graph = any(isinstance(x, Tensor) for x in xs)
    prim = [x if isinstance(x, Tensor) else Tensor._wrap(x) for x in xs]
    with fw.dual_level(), (_enable_grad() if graph else _no_grad()):
        duals = [p if t is None or p.dtype.kind not in "fc" else fw.make_dual(p, t)
                 for p, t in zip(prim, ts)]
        outs = call.run(duals)
        tangents = [fw.unpack_dual(o).tangent for o in outs]
        call.verify(outs, ys)
    return tuple(None if t is None else (t if graph else t._data) for t in tangents)


def _checkpoint_op() -> Op:
    op = OPS.get("checkpoint")
    if op is None:
        op = defop("checkpoint", _checkpoint_vjp, _checkpoint_jvp, batched=False,
                   doc="tf.checkpoint: recompute the wrapped function in the pullback")
    return op


_CHECKPOINT_OP = _checkpoint_op()


@overload
def checkpoint(fn: _F, *, check: bool = True) -> _F: ...
@overload
def checkpoint(fn: None = None, *, check: bool = True) -> Callable[[_F], _F]: ...
def checkpoint(fn: Callable[..., Any] | None = None, *, check: bool = True) -> Any:
    """Gradient checkpointing: ``checkpoint(fn)`` computes what ``fn`` computes but keeps none
    of its intermediates on the graph.

    The call runs ``fn`` with recording off and records a single node whose inputs are the
    Tensor leaves of the arguments (positional and keyword, nested in tuples/lists/dicts;
    other arguments are passed through unchanged). Its pullback runs ``fn`` again on the
    saved inputs with recording on and back-propagates through that fresh graph, which is
    freed when the pullback returns: peak memory holds the inputs and outputs of every
    checkpointed segment plus the intermediates of one segment (Chen et al. 2016; with √L
    segments of a chain of L layers, O(√L) activations instead of O(L)), for the price of one
    more forward evaluation of each segment.

    Works with ``grad``/``backward``, ``create_graph=True`` (the recomputation is recorded, so
    second derivatives are exact), and forward mode (``jvp``/``hvp``: the tangents are
    computed by one more run of ``fn`` with tangents).

    Parameters
    ----------
    fn : callable, optional
        The segment. Omitted: ``checkpoint(check=...)`` returns a decorator.
    check : bool, optional
        Compare the recomputed outputs with the saved ones and raise on a difference.
        Default True.

    Returns
    -------
    callable
        ``fn`` checkpointed (or a decorator, when ``fn`` is omitted).

    Raises
    ------
    TypeError
        If ``fn`` is not callable.
    TenferroError
        (in the backward pass, with ``check=True``) If the recomputation differs: ``fn``
        must be deterministic; draw random numbers outside and pass them in as arguments.
    UnsupportedADError
        (when called) If ``fn`` reads a Tensor requiring grad from a closure: every Tensor
        that should get a gradient must be passed as an argument.

    Notes
    -----
    Derivative: that of ``fn``, recomputed (T. Chen, B. Xu, C. Zhang, C. Guestrin, "Training
    deep nets with sublinear memory cost", arXiv:1604.06174, 2016).

    Examples
    --------
    >>> f = tf.checkpoint(lambda x: tf.sin(x).sum())
    >>> x = tf.tensor([0.0, 1.0], requires_grad=True)
    >>> tf.grad([f(x)], [x])[0]
    tensor([1.        , 0.54030231])
    """
    if fn is None:
        return functools.partial(checkpoint, check=check)
    if not callable(fn):
        raise TypeError(f"checkpoint wraps a function, got {type(fn).__name__}")
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "fn"

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        leaves: list[Any] = []
        spec = _flatten((list(args), dict(kwargs)), leaves)
        tensor_pos = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor)]
        xs = tuple(leaves[i] for i in tensor_pos)
        if not _differentiating(xs):
            return fn(*args, **kwargs)   # nothing to record: an ordinary call
        call = _CheckpointCall(fn, name, spec, leaves, tensor_pos, check)
        proxies = [Tensor._wrap(x._data) for x in xs]   # cut from the graph and forward mode
        # Recording stays on: the proxies have no node, so nothing is recorded unless fn
        # reads a Tensor that requires grad from elsewhere — which is then detected.
        with _enable_grad():
            outs = call.run(proxies)
        for k, o in enumerate(outs):
            if has_node_or_tangent(o):
                raise UnsupportedADError(
                    f"checkpoint({name}): output {k} depends on a Tensor that requires grad "
                    f"(or carries a tangent) which is not an argument of the function; "
                    f"checkpoint differentiates only with respect to its arguments: pass "
                    f"that Tensor as an argument")
        res: tuple[Tensor, ...] = apply(_CHECKPOINT_OP, xs, tuple(o._data for o in outs), call)
        out_leaves = list(call.out_leaves)
        for k, r in zip(call.out_pos, res):
            out_leaves[k] = r
        call.out_leaves = [None if isinstance(o, Tensor) else o for o in call.out_leaves]
        return _unflatten(call.out_spec, iter(out_leaves))

    return wrapped
