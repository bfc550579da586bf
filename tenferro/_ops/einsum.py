"""tf.einsum: NumPy's Einstein summation, differentiable along its contraction path.

An einsum call is planned once per (subscripts, shapes, optimize) and then runs as a
sequence of three primitive ops, each an einsum of at most two operands whose labels are
distinct within each operand:

* ``einsum_reduce`` (unary, per operand before any contraction): extracts the diagonal
  of repeated labels (``ii->i``), sums the labels no other operand and not the output
  carries (``ij->i`` when j appears nowhere else), drops size-1 dimensions that
  broadcast against a larger size elsewhere, and permutes;
* ``einsum_embed``: its adjoint (broadcast the summed labels back, put the diagonal back
  into zeros);
* ``einsum_pair`` (binary, one per step of the contraction path): a contraction in which
  every summed label occurs in both operands.

The path comes from opt_einsum (default ``optimize="auto"``; Smith & Gray, JOSS 2018),
searched once per plan: ``_plan`` is an LRU cache of 1024 entries. ``einsum_path`` returns
the path and opt_einsum's PathInfo report.

The backward pass walks these recorded primitives in reverse, so the pullback follows the
forward path exactly. docs/rules.md#einsum per primitive: the VJP of a pair
``y[lo] = Σ a[la] b[lb]`` is ``ā[la] = Σ ȳ[lo] conj(b)[lb]`` and
``b̄[lb] = Σ conj(a)[la] ȳ[lo]``, again pairs with every summed label in both operands
(the property is closed under taking VJPs), so reverse-over-reverse runs the same two
kernels. Labels an operand alone carries are restored by ``einsum_embed`` (broadcast),
repeated labels by diagonal embedding, broadcast size-1 dims by summing them back (the
VJP of dropping them). JVP: ``ẏ = pair(ȧ, b) + pair(a, ḃ)``; reduce and embed are linear.

Size-1 dimensions broadcast against any size for every label, as in ``numpy.einsum``.
"""
from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Sequence, TypeAlias

from numpy.typing import ArrayLike, NDArray

import functools
import math

import numpy as np
import opt_einsum  # type: ignore[import-untyped]  # (no stubs, no py.typed marker)

from .._engine import apply1
from .._errors import ShapeError
from .._tensor import Tensor, as_tensor
from ..builders import builder
from .registry import defop, register
from ._util import bilinear_jvp, conj, to_tensor

__all__ = ["einsum", "einsum_ad", "einsum_path"]

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LETTER_SET = frozenset(_LETTERS)
# Internal labels are ints: ord(letter) for letters (so sorting them sorts like NumPy's
# implicit output), _ELL + r for the r-th ellipsis dimension counted from the right, and
# _FRESH + k for a size-1 dimension that broadcasts (a label of its own, summed at once).
_ELL = 256
_FRESH = 1024


def _err(subscripts: Any, msg: str) -> ShapeError:
    return ShapeError(f"einsum({subscripts!r}): {msg}")


# ---- parsing ----------------------------------------------------------------------------

def _term(subscripts: Any, term: str, where: str) -> tuple[str, str | None]:
    """Letters of one subscript term, split at its ellipsis: (before, after) or (all, None)."""
    bad = set(term) - _LETTER_SET - {"."}
    if bad:
        raise _err(subscripts, f"invalid character {sorted(bad)[0]!r} in {where}; subscripts "
                   "use the letters a-z, A-Z, ',' between operands, '->' before the output "
                   "and '...' for broadcast dimensions")
    if "." not in term:
        return term, None
    before, ell, after = term.partition("...")
    if not ell or "." in before or "." in after:
        raise _err(subscripts, f"malformed ellipsis in {where} {term!r}: write exactly three "
                   "dots '...', at most once per term")
    return before, after


def _parse(subscripts: str, shapes: tuple[tuple[int, ...], ...]
           ) -> tuple[list[tuple[int, ...]], tuple[int, ...], dict[int, int]]:
    """Validate ``subscripts`` against the operand shapes.

    Returns (labels per operand, output labels, size per label) with internal int labels;
    size-1 dimensions that broadcast against a larger size already carry fresh labels.
    """
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    if "-" in lhs or ">" in lhs or "-" in rhs or ">" in rhs:
        raise _err(subscripts, "malformed '->': write it once, between the inputs and the "
                   "output (e.g. 'ij,jk->ik')")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise _err(subscripts, f"the subscripts name {len(terms)} operand(s) but "
                   f"{len(shapes)} were given; pass one operand per comma-separated term")
    labels: list[list[int]] = []
    sizes: dict[int, int] = {}
    origin: dict[int, int] = {}
    ell_rank = 0
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        before, after = _term(subscripts, term, f"operand {k}")
        n_named = len(before) + (len(after) if after is not None else 0)
        if after is None:
            if len(shape) != n_named:
                raise _err(subscripts, f"operand {k} has {len(shape)} dimension(s) (shape "
                           f"{shape}) but its subscript {term!r} names {n_named}; give one "
                           "letter per dimension, or '...' for the leading ones")
            labs = [ord(c) for c in before]
        else:
            e = len(shape) - n_named
            if e < 0:
                raise _err(subscripts, f"operand {k} has {len(shape)} dimension(s) (shape "
                           f"{shape}) but its subscript {term!r} names {n_named} besides "
                           "'...'; remove letters or reshape the operand")
            ell_rank = max(ell_rank, e)
            labs = ([ord(c) for c in before] + [_ELL + r for r in range(e - 1, -1, -1)]
                    + [ord(c) for c in after])
        seen: dict[int, int] = {}
        for lab, n in zip(labs, shape):
            if seen.setdefault(lab, n) != n:
                raise _err(subscripts, f"label {_name(lab)} is repeated in operand {k} over "
                           f"dimensions of different sizes {seen[lab]} and {n} (shape "
                           f"{shape}); a repeated label takes a diagonal and needs equal sizes")
            m = sizes.get(lab, 1)
            if n != m and n != 1:
                if m != 1:
                    raise _err(subscripts, f"label {_name(lab)} has size {m} in operand "
                               f"{origin[lab]} and {n} in operand {k}; sizes of a label must "
                               "agree (or be 1, which broadcasts)")
                sizes[lab] = n
                origin[lab] = k
            elif lab not in sizes:
                sizes[lab] = n
                origin[lab] = k
        labels.append(labs)
    letters = [lab for labs in labels for lab in labs if lab < _ELL]
    ell_out = [_ELL + r for r in range(ell_rank - 1, -1, -1)]
    if arrow:
        before, after = _term(subscripts, rhs, "the output")
        if after is None:
            if ell_rank:
                raise _err(subscripts, f"the inputs' '...' covers {ell_rank} dimension(s) but "
                           "the output has no '...'; add '...' to the output (sum over those "
                           "axes afterwards if that is what you want)")
            out = [ord(c) for c in before]
        else:
            out = [ord(c) for c in before] + ell_out + [ord(c) for c in after]
        for c in set(before + (after or "")):
            if (before + (after or "")).count(c) > 1:
                raise _err(subscripts, f"output label {c!r} is repeated; each output label "
                           "must appear once (use a diagonal in an input instead)")
            if ord(c) not in sizes:
                raise _err(subscripts, f"output label {c!r} appears in no input; every "
                           "output label must label a dimension of some operand")
    else:
        # implicit mode (NumPy): broadcast dims, then the labels used exactly once, sorted
        out = ell_out + sorted(lab for lab in set(letters) if letters.count(lab) == 1)
    # size-1 dims against a larger size broadcast: a fresh label, summed (squeezed) at once
    fresh = _FRESH
    for labs, shape in zip(labels, shapes):
        for i, (lab, n) in enumerate(zip(labs, shape)):
            if n != sizes[lab]:
                labs[i] = fresh
                sizes[fresh] = 1
                fresh += 1
    return [tuple(labs) for labs in labels], tuple(out), sizes


def _name(lab: int) -> str:
    return repr(chr(lab)) if lab < _ELL else "'...'"


# ---- primitive specs (plan-time data, ctx of the ops) ------------------------------------

class _ReduceSpec:
    """y[out] from x[inp] (out: distinct labels of inp): diagonals, sums, permutation."""
    __slots__ = ("inp", "out", "shape", "sub_in", "sub_out", "sub_uniq", "uniq_shape",
                 "repeats", "axes", "squeeze", "perm", "embed_perm", "embed_shape")

    def __init__(self, inp: tuple[int, ...], out: tuple[int, ...],
                 shape: tuple[int, ...]) -> None:
        self.inp, self.out, self.shape = inp, out, shape
        uniq = tuple(dict.fromkeys(inp))
        self.repeats = len(uniq) != len(inp)
        local = {lab: i for i, lab in enumerate(uniq)}   # np.einsum sublists need 0..51
        self.sub_in = [local[lab] for lab in inp]
        self.sub_out = [local[lab] for lab in out]
        self.sub_uniq = list(range(len(uniq)))
        self.uniq_shape = tuple(shape[inp.index(lab)] for lab in uniq)
        kept = [lab for lab in uniq if lab in out]
        self.axes = tuple(i for i, lab in enumerate(uniq) if lab not in out)
        # summing only size-1 axes is a reshape, not a reduction
        self.squeeze = all(self.uniq_shape[i] == 1 for i in self.axes)
        perm = tuple(kept.index(lab) for lab in out)
        self.perm = None if perm == tuple(range(len(perm))) else perm
        # embedding: ȳ permuted to uniq order, size 1 where the label was summed
        eperm = tuple(out.index(lab) for lab in kept)
        self.embed_perm = None if eperm == tuple(range(len(eperm))) else eperm
        self.embed_shape = tuple(1 if i in self.axes else n
                                 for i, n in enumerate(self.uniq_shape))


def _reduce_kernel(x: Any, s: _ReduceSpec) -> Any:
    if s.repeats:
        return np.asarray(np.einsum(x, s.sub_in, s.sub_out))
    if s.axes:
        if s.squeeze:
            x = x.reshape(tuple(n for i, n in enumerate(x.shape) if i not in s.axes))
        else:
            x = np.asarray(x.sum(axis=s.axes))
    return x if s.perm is None else x.transpose(s.perm)


def _embed_kernel(g: Any, s: _ReduceSpec) -> Any:
    if s.embed_perm is not None:
        g = g.transpose(s.embed_perm)
    g = g.reshape(s.embed_shape)
    if not s.repeats:
        return np.broadcast_to(g, s.shape)
    z = np.zeros(s.shape, dtype=g.dtype)
    # np.einsum returns a writable view for a pure diagonal extraction (NumPy >= 1.10)
    np.einsum(z, s.sub_in, s.sub_uniq)[...] = g
    return z


class _PairSpec:
    """y[lo] = Σ a[la] b[lb]; every label summed (in la ∪ lb, not in lo) is in both."""
    __slots__ = ("la", "lb", "lo", "sizes", "perm_a", "perm_b", "shape_a", "shape_b",
                 "shape_y", "perm_y", "matmul", "_vjp_a", "_vjp_b")
    _vjp_a: _PairSpec | None
    _vjp_b: _PairSpec | None

    def __init__(self, la: tuple[int, ...], lb: tuple[int, ...], lo: tuple[int, ...],
                 sizes: dict[int, int]) -> None:
        self.la, self.lb, self.lo, self.sizes = la, lb, lo, sizes
        sa, sb, so = set(la), set(lb), set(lo)
        batch = [lab for lab in la if lab in sb and lab in so]
        con = [lab for lab in la if lab in sb and lab not in so]
        afree = [lab for lab in la if lab not in sb]
        bfree = [lab for lab in lb if lab not in sa]
        if not (set(afree) | set(bfree)) <= so or len(so) != len(lo):
            raise AssertionError(f"internal error: bad einsum pair {la}, {lb} -> {lo}")
        size = sizes.__getitem__
        self.perm_a = _perm(la, batch + afree + con)
        self.perm_b = _perm(lb, batch + con + bfree)
        self.matmul = bool(con)
        nb = [size(lab) for lab in batch]
        na = [size(lab) for lab in afree]
        nn = [size(lab) for lab in bfree]
        shape_a: tuple[int, ...]
        shape_b: tuple[int, ...]
        shape_r: tuple[int, ...]
        if self.matmul:
            k = math.prod(size(lab) for lab in con)
            lead = (math.prod(nb),) if batch else ()
            shape_a = lead + (math.prod(na), k)
            shape_b = lead + (k, math.prod(nn))
            shape_r = shape_a[:-1] + shape_b[-1:]       # of the matmul result
        else:
            # no summed label: an outer/Hadamard product by broadcasting
            shape_a = tuple(nb + na + [1] * len(nn))
            shape_b = tuple(nb + [1] * len(na) + nn)
            shape_r = tuple(nb + na + nn)
        # reshapes that change nothing are skipped (a result that is a view of another
        # array would be copied once more when handed to the user as a gradient)
        self.shape_a = None if shape_a == tuple(size(lab) for lab in batch + afree + con) \
            else shape_a
        self.shape_b = None if shape_b == tuple(size(lab) for lab in batch + con + bfree) \
            else shape_b
        shape_y = tuple(nb + na + nn)
        self.shape_y = None if shape_y == shape_r else shape_y
        self.perm_y = _perm(batch + afree + bfree, list(lo))
        self._vjp_a = self._vjp_b = None

    def vjp_a(self) -> _PairSpec:
        """ā[la] = Σ ȳ[lo] conj(b)[lb]"""
        if self._vjp_a is None:
            self._vjp_a = _PairSpec(self.lo, self.lb, self.la, self.sizes)
        return self._vjp_a

    def vjp_b(self) -> _PairSpec:
        """b̄[lb] = Σ conj(a)[la] ȳ[lo]"""
        if self._vjp_b is None:
            self._vjp_b = _PairSpec(self.la, self.lo, self.lb, self.sizes)
        return self._vjp_b


def _perm(labels: Sequence[int], order: Sequence[int]) -> tuple[int, ...] | None:
    p = tuple(labels.index(lab) for lab in order)
    return None if p == tuple(range(len(p))) else p


# Summed labels go through matmul (BLAS) and label-free products through broadcasting:
# np.einsum's own loops are 2-100x slower on every pair measured (the figures are in
# docs/guide/kernels.md#choices-in-the-python-layer).
def _pair_kernel(a: Any, b: Any, s: _PairSpec) -> Any:
    if s.perm_a is not None:
        a = a.transpose(s.perm_a)
    if s.perm_b is not None:
        b = b.transpose(s.perm_b)
    if s.shape_a is not None:
        a = a.reshape(s.shape_a)
    if s.shape_b is not None:
        b = b.reshape(s.shape_b)
    y = np.matmul(a, b) if s.matmul else np.asarray(np.multiply(a, b))
    if s.shape_y is not None:
        y = y.reshape(s.shape_y)
    return y if s.perm_y is None else y.transpose(s.perm_y)


# ---- the three ops and their rules -------------------------------------------------------

def _reduce(x: Any, s: _ReduceSpec) -> Any:
    if isinstance(x, Tensor):
        return apply1(_reduce_op, (x,), _reduce_kernel(x._data, s), s)
    return _reduce_kernel(x, s)


def _embed(g: Any, s: _ReduceSpec) -> Any:
    if isinstance(g, Tensor):
        return apply1(_embed_op, (g,), _embed_kernel(g._data, s), s)
    return _embed_kernel(g, s)


def _pair(a: Any, b: Any, s: _PairSpec) -> Any:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        a, b = to_tensor(a), to_tensor(b)
        return apply1(_pair_op, (a, b), _pair_kernel(a._data, b._data, s), s)
    return _pair_kernel(a, b, s)


# reduce and embed are adjoint linear maps with real coefficients: each one's VJP is the
# other, and each one's JVP is itself.
_reduce_op = defop("einsum_reduce",
                   lambda s, needs, gs, xs, ys: (_embed(gs[0], s),),
                   lambda s, ts, xs, ys: (_reduce(ts[0], s),),
                   doc="einsum of one operand: diagonals of repeated labels, sums, permutation")
_embed_op = defop("einsum_embed",
                  lambda s, needs, gs, xs, ys: (_reduce(gs[0], s),),
                  lambda s, ts, xs, ys: (_embed(ts[0], s),),
                  doc="adjoint of einsum_reduce: broadcast summed labels, fill diagonals")


def _pair_vjp(s: _PairSpec, needs: Any, gs: Any, xs: Any, ys: Any) -> Any:
    g, (a, b) = gs[0], xs
    ga = _pair(g, conj(b), s.vjp_a()) if needs[0] else None
    gb = _pair(conj(a), g, s.vjp_b()) if needs[1] else None
    return ga, gb


_pair_op = defop("einsum_pair", _pair_vjp, bilinear_jvp(_pair),
                 doc="einsum of two operands along one step of the contraction path")
# (tf.compile's replay)
_pair_op.replay = lambda s: lambda a, b: _pair_kernel(a, b, s)
_reduce_op.replay = lambda s: lambda x: _reduce_kernel(x, s)
_embed_op.replay = lambda s: lambda g: _embed_kernel(g, s)


# ---- planning ---------------------------------------------------------------------------

# one contraction step of a plan: (ia, ib, spec), or (ia, None, None) for a move
_Step: TypeAlias = tuple[int, Any, "_PairSpec | None"]


class _Plan:
    __slots__ = ("preps", "steps", "path", "labels", "out", "shapes")

    def __init__(self, preps: tuple[_ReduceSpec | None, ...], steps: tuple[_Step, ...],
                 path: tuple[tuple[int, ...], ...], labels: tuple[tuple[int, ...], ...],
                 out: tuple[int, ...], shapes: tuple[tuple[int, ...], ...]) -> None:
        self.preps = preps    # per operand: a _ReduceSpec or None (used as is)
        # (ia, ib, spec): operands ia and ib (positions in the current list) leave the list
        # and pair(a, b, spec) joins its end; spec None moves operand ia to the end
        self.steps = steps
        # the path (opt_einsum's format) over the reduced operands: their labels and
        # shapes, and the output labels (for einsum_path's report)
        self.path, self.labels, self.out, self.shapes = path, labels, out, shapes


def _symbol(lab: int) -> str:
    """opt_einsum's name of an internal label: letters stay letters; '...' dims and fresh
    broadcast labels get opt_einsum symbols past the 52 letters (unicode), so the path
    search has no 52-label limit."""
    return chr(lab) if lab < _ELL else opt_einsum.get_symbol(52 + lab - _ELL)


def _equation(labels: Iterable[Iterable[int]], out: Iterable[int]) -> str:
    return ",".join("".join(map(_symbol, labs)) for labs in labels) + "->" + \
        "".join(map(_symbol, out))


def _dummies(shapes: Iterable[tuple[int, ...]]) -> list[NDArray[Any]]:
    # opt_einsum reads only .shape: zero-stride views of one scalar allocate nothing
    return [np.broadcast_to(np.empty(()), shape) for shape in shapes]


class _MemoryLimited(NamedTuple):
    """NumPy's ``optimize=(strategy, memory_limit)``: the strategy's search with no
    intermediate larger than ``limit`` elements (a cache key of its own; a NamedTuple
    subclass, which ``_path`` tells from an explicit path's plain tuple)."""
    strategy: str
    limit: int

    def __repr__(self) -> str:
        return repr((self.strategy, self.limit))


def _search_path(equation: str, shapes: Iterable[tuple[int, ...]],
                 optimize: Any) -> list[tuple[int, ...]]:
    """opt_einsum's path search (one call per plan: ``_plan`` is cached)."""
    limit = None
    if isinstance(optimize, _MemoryLimited):
        optimize, limit = optimize
    return [tuple(int(i) for i in step) for step in
            opt_einsum.contract_path(equation, *_dummies(shapes), optimize=optimize,
                                     memory_limit=limit)[0]]


def _int_steps(subscripts: Any, path: Any) -> tuple[tuple[int, ...], ...]:
    """An explicit path's steps as tuples of Python ints, or ShapeError.

    Runs before the plan cache: 1.0 == 1 and True == 1 hash alike, so a float or bool
    step must not reach the cache key where it would hit a valid int path's entry.
    """
    steps: list[tuple[int, ...]] = []
    for k, step in enumerate(path):
        if not isinstance(step, tuple) or not step or not all(
                isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))
                for i in step):
            raise _err(subscripts, f"optimize path step {k} is {step!r}; each step must be a "
                       "non-empty tuple of operand positions (ints), e.g. (0, 1)")
        steps.append(tuple(int(i) for i in step))
    return tuple(steps)


def _check_path(subscripts: Any, path: Sequence[tuple[int, ...]], n: int) -> None:
    """Validate an explicit path (int steps) for ``n`` operands; ShapeError names the
    problem."""
    left = n
    for k, step in enumerate(path):
        if len(set(step)) != len(step):
            raise _err(subscripts, f"optimize path step {k} {step!r} names an operand twice; "
                       "list each operand position once per step")
        bad = [i for i in step if not 0 <= i < left]
        if bad:
            raise _err(subscripts, f"optimize path step {k} {step!r} names operand {bad[0]} "
                       f"but only {left} operand(s) are left at that step (positions 0.."
                       f"{left - 1}; each step removes its operands and appends the result)")
        left -= len(step) - 1
    if left != 1:
        raise _err(subscripts, f"the optimize path has {len(path)} step(s) and leaves {left} "
                   f"operands uncontracted; a path for {n} operands must end with one "
                   "(e.g. [(0, 1)] * (n - 1) contracts left to right)")


def _path(subscripts: Any, labels: Sequence[tuple[int, ...]], out: tuple[int, ...],
          shapes: Sequence[tuple[int, ...]], optimize: Any) -> list[tuple[int, ...]]:
    """The contraction path for the (reduced) operands, in opt_einsum's format.

    ``optimize`` is already normalised by ``_normalize_optimize``: False (left to right),
    a tuple of steps (explicit path), or what opt_einsum accepts (a strategy name or a
    PathOptimizer), searched without a memory cap.
    """
    n = len(labels)
    if isinstance(optimize, tuple) and not isinstance(optimize, _MemoryLimited):
        _check_path(subscripts, optimize, n)
        return list(optimize)
    if optimize is False:
        return [(0, 1)] * (n - 1)
    try:
        if isinstance(optimize, _MemoryLimited) and optimize.limit < 1:
            # no intermediate fits (opt_einsum wants a limit >= 1): NumPy contracts all
            # operands at once, tenferro in one step folded left to right
            opt_einsum.paths.get_path_fn(optimize.strategy)
            return [tuple(range(n))] if n > 1 else [(0,)]
        if n > 2:
            return _search_path(_equation(labels, out), shapes, optimize)
        # one possible path: no search, but the strategy is still checked
        if isinstance(optimize, _MemoryLimited):
            opt_einsum.paths.get_path_fn(optimize.strategy)
        elif isinstance(optimize, str):
            opt_einsum.paths.get_path_fn(optimize)
        elif not callable(optimize):
            raise TypeError("not a strategy name, a path or a PathOptimizer")
        return [(0,)] if n == 1 else [(0, 1)]
    except (KeyError, TypeError, ValueError, NotImplementedError) as e:
        raise _err(subscripts, f"optimize={optimize!r} was not understood ({e!r}); use "
                   "'auto' (default), 'auto-hq', 'greedy', 'optimal', 'dp', 'branch-all', "
                   "'branch-2', 'branch-1', 'random-greedy', 'random-greedy-128', True "
                   "(= 'auto'), False/None (left to right), an opt_einsum PathOptimizer, "
                   "NumPy's (strategy, memory_limit) or an explicit path such as "
                   "[(0, 1), (0, 1)]") from None


@functools.lru_cache(maxsize=1024)
def _plan(subscripts: str, shapes: tuple[tuple[int, ...], ...], optimize: Any) -> _Plan:
    labels, out, sizes = _parse(subscripts, shapes)
    n = len(labels)
    out_set = set(out)
    carriers: dict[int, int] = {}
    for labs in labels:
        for lab in set(labs):
            carriers[lab] = carriers.get(lab, 0) + 1
    preps: list[_ReduceSpec | None] = []
    cur: list[tuple[int, ...]] = []
    cur_shapes: list[tuple[int, ...]] = []
    for labs, shape in zip(labels, shapes):
        if n == 1:
            keep = out
        else:
            keep = tuple(lab for lab in dict.fromkeys(labs)
                         if lab in out_set or carriers[lab] > 1)
        preps.append(None if keep == labs else _ReduceSpec(labs, keep, shape))
        cur.append(keep)
        cur_shapes.append(tuple(sizes[lab] for lab in keep))
    path = _path(subscripts, cur, out, cur_shapes, optimize)
    reduced = (tuple(cur), tuple(cur_shapes))
    steps: list[_Step] = []
    if n > 1:
        for step in path:
            inds = sorted(step)
            if len(inds) == 1:      # a path may move an operand to the end
                cur.append(cur.pop(inds[0]))
                steps.append((inds[0], None, None))
                continue
            # a group of k operands folds left to right in k - 1 binary steps; each result
            # goes to the end of the list, as in numpy.einsum
            ia, ib, rest = inds[0], inds[1], inds[2:]
            while True:
                la, lb = cur[ia], cur[ib]
                others = [labs for p, labs in enumerate(cur) if p != ia and p != ib]
                if not others:
                    lo = out
                else:
                    needed = set(out_set).union(*others)
                    sa, sb = set(la), set(lb)
                    # the matmul layout (batch, free of a, free of b): no transpose
                    lo = (tuple(lab for lab in la if lab in sb and lab in needed)
                          + tuple(lab for lab in la if lab not in sb)
                          + tuple(lab for lab in lb if lab not in sa))
                steps.append((ia, ib, _PairSpec(la, lb, lo, sizes)))
                for p in sorted((ia, ib), reverse=True):
                    del cur[p]
                cur.append(lo)
                if not rest:
                    break
                rest = [p - (p > ia) - (p > ib) for p in rest]
                ia, ib = len(cur) - 1, rest.pop(0)
        if len(cur) != 1:
            raise _err(subscripts, f"the path leaves {len(cur)} operands uncontracted; "
                       "give a path that contracts all of them")
    return _Plan(tuple(preps), tuple(steps), tuple(path), reduced[0], out, reduced[1])


def _normalize_optimize(optimize: Any) -> Any:
    """The cache key of ``optimize``: True -> 'auto', None -> False, an explicit path (a
    list or tuple of steps, optionally headed by NumPy's 'einsum_path') -> a tuple of
    tuples; strategy names and opt_einsum PathOptimizer objects pass through."""
    if optimize is True:
        return "auto"
    if optimize is None or optimize is False:
        return False
    if isinstance(optimize, np.ndarray) and optimize.ndim == 2:    # rows of int steps
        optimize = optimize.tolist()
    if isinstance(optimize, (list, tuple)):
        steps = list(optimize)
        if steps and isinstance(steps[0], str) and steps[0] == "einsum_path":
            steps = steps[1:]
        elif len(steps) == 2 and isinstance(steps[0], str) and \
                isinstance(steps[1], (int, float, np.integer, np.floating)):
            # NumPy's (path type, memory limit): int() as numpy.einsum_path does
            limit = steps[1]
            if not math.isfinite(limit):
                if limit > 0:               # no limit at all
                    return steps[0]
                raise ShapeError(f"einsum: memory_limit {limit!r} is not a number of "
                                 "elements; give an int, e.g. optimize=('greedy', 10**6)")
            return _MemoryLimited(steps[0], int(limit))
        return tuple(tuple(s) if isinstance(s, (list, tuple)) else s for s in steps)
    return optimize


def _from_sublists(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """NumPy's interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as a string."""
    def term(sub: Any) -> str:
        try:
            return "".join("..." if i is Ellipsis else _LETTERS[i] for i in sub)
        except (TypeError, IndexError):
            raise ShapeError(f"einsum: sublist {sub!r} must hold ints in [0, 52) or "
                             "Ellipsis") from None
    ops, subs = list(args[0::2]), list(args[1::2])
    out = ""
    if len(args) % 2:
        out = "->" + term(ops.pop())
    return ",".join(term(s) for s in subs) + out, ops


# ---- public function --------------------------------------------------------------------

_OPTIMIZE_DOC = """\
    ``optimize`` picks the pairwise contraction order (the path), searched by opt_einsum
    (Smith & Gray, "opt_einsum - A Python package for optimizing contraction order for
    einsum-like expressions", JOSS 3(26), 753, 2018) without a memory cap:

    * ``"auto"`` (default, = ``True``): opt_einsum's choice by operand count: the optimal
      search up to 4 operands, branch and bound up to 14, greedy beyond;
    * any strategy name opt_einsum accepts: ``"greedy"``, ``"optimal"``, ``"dp"``
      (dynamic programming, Pfeifer, Haegeman & Verstraete, PRE 90, 033315, 2014),
      ``"branch-all"``, ``"branch-2"``, ``"branch-1"``, ``"auto-hq"``, ``"random-greedy"``,
      ``"random-greedy-128"``, or an ``opt_einsum.paths.PathOptimizer`` instance;
    * ``(strategy, memory_limit)`` (NumPy's spelling, e.g. ``("greedy", 10**6)``): that
      search with no intermediate of more than ``memory_limit`` elements where a path
      allows it. Where no pair fits, the path ends with one step over the remaining
      operands, which tenferro contracts left to right, pairwise (NumPy runs that step
      as one unsplit einsum): the limit steers the search and is not a bound there;
    * ``False`` or ``None``: no search, contract left to right (``[(0, 1)] * (n - 1)``);
    * an explicit path: a list of tuples of operand positions as returned by
      ``einsum_path``/``opt_einsum.contract_path`` (each step removes its operands from
      the list and appends their contraction), or NumPy's ``['einsum_path', (0, 1), ...]``.
      It is checked against the operands (``ShapeError`` naming the bad step).

    The plan (path and per-step kernel layouts) is cached in an LRU of 1024 entries keyed
    by (subscripts, operand shapes, optimize): the search runs once per new key, not per
    call (dtypes do not change the path)."""


def einsum(subscripts: str, *operands: ArrayLike, optimize: Any = "auto") -> Tensor:
    r"""Einstein summation like ``numpy.einsum``, differentiable to any order.

    ``subscripts`` uses NumPy's syntax: ``"ij,jk->ik"``, implicit output (``"ij,jk"``: the
    labels used once, sorted), ``"..."`` for broadcast dimensions, repeated labels for
    diagonals and traces (``"ii->i"``, ``"ii"``); NumPy's interleaved sublist form works too.
    Operands may mix dtypes (the result promotes) and be 0-d.

    Parameters
    ----------
    subscripts : str
        The equation.
    *operands : array_like
        One tensor per input term.
    optimize : str, bool, tuple or list, optional
        The contraction order (see Notes). Default 'auto'.

    Returns
    -------
    Tensor
        The contraction.

    Raises
    ------
    ShapeError
        If the subscripts do not match the operands (a label with two lengths, wrong number
        of terms or labels), or an explicit path is invalid.

    Notes
    -----
    The value is a sequence of pairwise contractions :math:`y[l_o] = \sum a[l_a]\, b[l_b]`,
    each run as transpose + reshape + matmul (BLAS); the backward pass follows the same path
    in reverse (each VJP is an einsum of the cotangent with the other operand), the forward
    pass along it (docs/rules.md, einsum).

    {optimize}

    Examples
    --------
    >>> a = tf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> tf.einsum("ij,jk->ik", a, a)
    tensor([[ 7., 10.],
            [15., 22.]], grad_fn=einsum_pair)
    >>> tf.grad([tf.einsum("ii", a)], [a])[0]
    tensor([[1., 0.],
            [0., 1.]])
    """
    plan, ops = _prepare(subscripts, operands, optimize)
    for k, prep in enumerate(plan.preps):
        if prep is not None:
            ops[k] = _reduce(ops[k], prep)
    for ia, ib, s in plan.steps:
        a = ops[ia]
        if s is None:
            del ops[ia]
            ops.append(a)
            continue
        b = ops[ib]
        if ia > ib:
            del ops[ia], ops[ib]
        else:
            del ops[ib], ops[ia]
        ops.append(_pair(a, b, s))
    return ops[0]


if einsum.__doc__ is not None:          # (None under python -OO)
    einsum.__doc__ = einsum.__doc__.format(optimize=_OPTIMIZE_DOC.strip())


def _prepare(subscripts: Any, operands: Any, optimize: Any) -> tuple[_Plan, list[Tensor]]:
    """(plan, operand tensors) for one call; the plan comes from the LRU cache."""
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + operands)
    ops: list[Tensor] = [o if isinstance(o, Tensor) else as_tensor(o) for o in operands]
    shapes = tuple([x._data.shape for x in ops])
    return _cached_plan(subscripts, shapes, optimize), ops


def _cached_plan(subscripts: str, shapes: tuple[tuple[int, ...], ...], optimize: Any) -> _Plan:
    optimize = _normalize_optimize(optimize)
    if isinstance(optimize, tuple) and not isinstance(optimize, _MemoryLimited):
        optimize = _int_steps(subscripts, optimize)
    elif isinstance(optimize, (int, float, complex, np.number)) and optimize is not False:
        # 0 == False and 1 == True as cache keys: numbers must not reach the cache
        raise _err(subscripts, f"optimize={optimize!r} was not understood; use a strategy "
                   "name such as 'auto', True, False or an explicit path")
    return _plan(subscripts.replace(" ", ""), shapes, optimize)


def einsum_path(subscripts: str, *operands: ArrayLike,
                optimize: Any = "auto") -> tuple[list[tuple[int, ...]], Any]:
    """The contraction path ``tf.einsum`` takes, and opt_einsum's report on it.

    The path is over the operands after their one-operand reductions (diagonals of repeated
    labels, sums of labels no other operand carries), which is what tf.einsum contracts, so
    ``info`` counts the flops of the pairwise steps; '...' dimensions and broadcast size-1
    dimensions appear under labels of their own. Operands are only inspected for their
    shapes.

    Parameters
    ----------
    subscripts : str
        The equation, as for :func:`einsum`.
    *operands : array_like
        The operands (or anything with a shape).
    optimize : str, bool, tuple or list, optional
        The strategy (see Notes). Default 'auto'.

    Returns
    -------
    path : list of tuple of int
        Operand positions per step, like ``opt_einsum.contract_path``; pass it back as
        ``optimize=path``.
    info : opt_einsum.contract.PathInfo
        ``print(info)`` shows the per-step contractions; ``info.opt_cost`` is the flop count
        and ``info.largest_intermediate`` the element count of the largest intermediate.

    Raises
    ------
    ShapeError
        If the subscripts do not match the operands' shapes.

    Notes
    -----
    {optimize}

    Examples
    --------
    >>> path, info = tf.einsum_path("ij,jk,kl->il", tf.ones((2, 3)), tf.ones((3, 4)),
    ...                             tf.ones((4, 5)))
    >>> path
    [(0, 1), (0, 1)]
    """
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + operands)
    shapes = tuple(tuple(o.shape) if isinstance(o, (Tensor, np.ndarray)) else np.shape(o)
                   for o in operands)
    plan = _cached_plan(subscripts, shapes, optimize)
    info = opt_einsum.contract_path(_equation(plan.labels, plan.out), *_dummies(plan.shapes),
                                    optimize=list(plan.path), memory_limit=None)[1]
    return list(plan.path), info


if einsum_path.__doc__ is not None:     # (None under python -OO)
    einsum_path.__doc__ = einsum_path.__doc__.format(optimize=_OPTIMIZE_DOC.strip())


einsum_ad = builder(einsum)

register(einsum, functions=(np.einsum,))
