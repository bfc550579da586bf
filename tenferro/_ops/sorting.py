"""Array API sorting functions (2024.12): ``sort`` (differentiable) and ``argsort``.

``sort`` returns a gather of ``x`` by the sorting permutation p along ``axis``:
y = x[..., p, ...]. For a fixed p this is linear, and p is piecewise constant in x, so
(away from ties, where sort is continuous but not differentiable)

    ẏ = ẋ gathered by p,        x̄ = ȳ scattered back by p (x̄[p_j] = ȳ_j).

Both rules call the ops of one adjoint pair (``sort_gather`` <-> ``sort_scatter``): the
gather's VJP is the scatter and vice versa, each op's JVP is itself, so every order is
exact (the second derivative of sort is 0). At ties any consistent permutation is a valid
choice; tenferro uses the stable one (equal entries keep their order), so the cotangent
of the k-th equal entry of the output goes to the k-th equal entry of the input.

Order: NaN sorts as larger than every number (NumPy's and PyTorch's order): last when
ascending, first when descending. ``descending=True`` keeps equal entries in their
original order (stable), which a reversed ascending sort would not: it sorts the flipped
input and maps the indices back. Complex tensors raise DTypeError: complex numbers are not
ordered (the standard leaves it unspecified; NumPy's lexicographic order is a convention
tenferro does not guess at) — sort by an explicit real key instead.
Integer and bool tensors sort too (no gradient).
"""
from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike, NDArray

import numpy as np

from .._engine import apply1, index_result
from .._errors import DTypeError
from .._tensor import Tensor
from .._rule_api import has_node_or_tangent
from .registry import defop, index_op, register, register_nondiff
from ._util import recorded, to_tensor
from .structure import _axis, _flat_if_no_axis, ravel

__all__ = ["sort", "argsort"]


def _check_sortable(name: str, x: Tensor) -> None:
    if x._data.dtype.kind == "c":
        raise DTypeError(
            f"{name}: complex numbers are not ordered, so a complex tensor of dtype "
            f"{x.dtype} cannot be sorted; sort by a real key instead, e.g. "
            f"tf.take_along_axis(x, tf.argsort(tf.real(x), axis=-1), axis=-1) "
            f"(or tf.abs(x) as the key)")


def _argsort_np(d: NDArray[Any], axis: int, descending: bool) -> NDArray[Any]:
    """The stable sorting permutation of ``d`` along ``axis`` (int64)."""
    if not descending:
        return np.argsort(d, axis=axis, kind="stable")
    # Sort the reversed input ascending: equal entries then come out in reversed
    # original order, which reading the result backwards turns into original order.
    n = d.shape[axis]
    rev = (slice(None),) * axis + (slice(None, None, -1),)   # np.flip's view, without
    p: NDArray[Any] = d[rev].argsort(axis=axis, kind="stable")   # its Python (tf.compile's
    out: NDArray[Any] = (n - 1 - p)[rev]                 # replay runs this per call)
    return out


# ---- the adjoint pair: gather by a permutation <-> scatter back ---------------------------
# ctx = (p, axis): gather y = take_along_axis(x, p); scatter z with z[p_j] = g_j, i.e.
# put_along_axis(empty, p, g). p is a permutation, so every entry of z is written once.

def _gather_np(a: Any, ctx: Any) -> Any:
    return np.take_along_axis(a, ctx[0], ctx[1])


def _scatter_np(g: Any, ctx: Any) -> Any:
    out = np.empty(g.shape, dtype=g.dtype)
    np.put_along_axis(out, ctx[0], g, ctx[1])
    return out


def _gather(a: Any, ctx: Any) -> Any:
    return recorded(_gather_op, _gather_np, a, ctx)


def _scatter(g: Any, ctx: Any) -> Any:
    return recorded(_scatter_op, _scatter_np, g, ctx)


# complex=False: sort takes real tensors only (the ops themselves would permute anything)
_gather_op = defop("sort_gather", lambda ctx, needs, gs, xs, ys: (_scatter(gs[0], ctx),),
                   lambda ctx, ts, xs, ys: (_gather(ts[0], ctx),), complex=False)
_scatter_op = defop("sort_scatter", lambda ctx, needs, gs, xs, ys: (_gather(gs[0], ctx),),
                    lambda ctx, ts, xs, ys: (_scatter(ts[0], ctx),), complex=False)


def sort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False,
         stable: bool = True) -> Tensor:
    r"""A sorted copy of ``x`` along ``axis`` (array API ``sort``), differentiable.

    The values are x gathered by the (stable) sorting permutation, so the gradient of each
    output entry goes to the input entry it came from. NaN sorts last (first when
    ``descending``). The sort is always stable (``stable=False`` is allowed and gives the same
    result).

    Parameters
    ----------
    x : array_like
        A real tensor.
    axis : int, optional
        The axis to sort along. Default -1.
    descending : bool, optional
        Sort in descending order. Default False.
    stable : bool, optional
        Accepted for the standard; the sort is always stable. Default True.

    Returns
    -------
    Tensor
        The sorted values, ``x``'s shape.

    Raises
    ------
    DTypeError
        If ``x`` is complex.

    Notes
    -----
    Derivative: a gather by the sorting permutation :math:`\pi`;
    :math:`\bar x_{\pi(i)} = \bar y_i`.

    Examples
    --------
    >>> x = tf.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> tf.sort(x)
    tensor([1., 2., 3.], grad_fn=sort_gather)
    >>> tf.grad([(tf.sort(x) * tf.tensor([1.0, 2.0, 3.0])).sum()], [x])[0]
    tensor([3., 1., 2.])
    """
    t: Tensor = to_tensor(x)
    _check_sortable("sort", t)
    d = t._data
    axis = _axis(axis, d.ndim)
    if not has_node_or_tangent(t):
        # nothing to differentiate: no permutation needed for an ascending sort
        if not descending:
            return Tensor._wrap(np.sort(d, axis=axis, kind="stable"))
        return Tensor._wrap(_gather_np(d, (_argsort_np(d, axis, True), axis)))
    ctx = (_argsort_np(d, axis, descending), axis)
    y: Tensor = apply1(_gather_op, (t,), _gather_np(d, ctx), ctx=ctx)
    return y


def argsort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False,
            stable: bool = True) -> Tensor:
    """The indices that sort ``x`` along ``axis`` (int64, no gradient).

    Stable: equal entries keep their order, also with ``descending=True``. NaN sorts last
    (first when descending).

    Parameters
    ----------
    x : array_like
        A real tensor.
    axis : int, optional
        The axis. Default -1.
    descending : bool, optional
        Descending order. Default False.
    stable : bool, optional
        Accepted for the standard; always stable. Default True.

    Returns
    -------
    Tensor
        int64 indices, ``x``'s shape.

    Raises
    ------
    DTypeError
        If ``x`` is complex.

    Examples
    --------
    >>> tf.argsort(tf.tensor([3.0, 1.0, 2.0]))
    tensor([1, 2, 0])
    """
    t: Tensor = to_tensor(x)
    _check_sortable("argsort", t)
    d = t._data
    axis = _axis(axis, d.ndim)
    # (inside tf.compile a node, recomputed at each replay: _engine.index_result)
    return index_result(_argsort_op, (t,),
                        _argsort_np(d, axis, descending).astype(np.int64, copy=False),
                        (axis, descending))


_argsort_op = index_op("argsort", lambda ctx: lambda d: _argsort_np(d, *ctx).astype(
    np.int64, copy=False))


def _np_sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
             stable: Any = None) -> Tensor:
    """``numpy.sort`` on tensors: tf.sort (stable for every ``kind``); axis=None sorts
    the flattened tensor."""
    if order is not None:
        raise TypeError("numpy.sort on tensors: order= (structured fields) is not "
                        "supported; tensors have no fields")
    a, axis = _flat_if_no_axis(a, axis)
    return sort(a, axis=axis)


def _argsort_method(self: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
                    descending: bool = False, stable: Any = None) -> Tensor:
    """``t.argsort(axis)`` (NumPy's method; also takes ``descending=``): int64 tensor."""
    if axis is None:
        return argsort(ravel(self), axis=0, descending=descending)
    return argsort(self, axis=axis, descending=descending)


register(_np_sort, functions=(np.sort,))
register(_argsort_method, methods=("argsort",))
register_nondiff(np.argsort)
