"""Gradients of sums over independent pieces, computed on an executor's workers.

Two kinds of work outgrow one machine without needing a distributed tape: a loss that is
a sum over independent pieces (shards of a likelihood, terms of a Hamiltonian, points of
a parameter scan), and a contraction too large for one machine, split by slicing indices.
In both, each worker differentiates its piece with an ordinary local tape and the driver
adds the pieces' gradients.

* :func:`map_value_and_grad` — value and gradient of ``Σ_shards fn(params, shard)``.
* :class:`Shards` — shards hashed once (read-only copies), for repeated calls.
* :func:`contract` — a sliced ``einsum`` whose slices run on workers, differentiable.
* :func:`contraction_plan` — which indices :func:`contract` slices, and the largest
  intermediate of the sliced path.

The work goes through Python's executor interface (:class:`concurrent.futures.Executor`):
a Dask ``Client(...).get_executor()``, a :class:`~concurrent.futures.ProcessPoolExecutor`,
``mpi4py.futures.MPIPoolExecutor``, or none (``executor=None``: serial, in this process).
Workers import tenferro; what a task carries is pickled (``fn`` by value with cloudpickle
when it is installed, as Dask does, so lambdas and closures work; otherwise by reference).

**Bitwise reproducibility.** The driver waits for every piece and adds the results in
piece order (``((r0 + r1) + r2) + ...``), whatever the number of workers and the order
in which they finish, so the sum is bit for bit the serial sum in shard order (given
that a piece computes the same bits on every worker: same library builds, one BLAS
thread per worker as set by the executor's environment).

**Shards are sent once.** Each shard is identified by a hash of its contents (SHA-256
over an array's bytes, or over its pickle), so a changed shard is a new shard, never a
stale copy. Given a list, the driver hashes every shard on every call (one pass over
its bytes); a :class:`Shards` handle copies the shards once, read-only, and hashes them
once, for loops that call with the same shards (an optimizer). On a Dask executor a new
shard is scattered to every worker once (``client.scatter(..., broadcast=True)``, kept
while the client lives, at most :data:`CACHE_BYTES`), tasks carry a reference to it, and
parameters of 256 KiB or more are scattered once per call rather than carried by every
task. On other executors (process pool, MPI) a worker process keeps the shards it has
received in a cache keyed by the token (bounded: :data:`CACHE_BYTES`); such an executor
cannot send a task to a chosen worker, so a shard's payload goes with its tasks until a
worker has reported holding it (each result names the worker process that computed
it); after that a task that lands on a worker without it (one that has not received it
yet, a restarted worker, an evicted shard) answers "missing" and is sent again with the
payload as soon as that answer arrives, while the other tasks run. A worker
keeps an aligned copy of a shard whose arrays arrive misaligned (a Dask message can hold
an array at any byte offset, and NumPy rounds differently on misaligned arrays). Per call
a task carries the parameters, ``fn`` and a 16-byte token.

**Failures.** A worker that dies mid-run (Dask's ``KilledWorker``, a broken process
pool), or any other failure of the executor, raises :class:`DistributedError` naming the
piece; the other pieces are cancelled and no partial sum is returned. An error raised by
``fn`` on a worker comes back as the same TenferroError (shape, dtype) or as a
DistributedError naming the shard and the original exception.

**In an outer graph.** When a parameter leaf is a Tensor tracked by an outer
computation, the returned value is a Tensor recorded as one op (a
:class:`tenferro.custom_vjp`) whose pullback is the summed gradient, so ``tf.grad`` and
forward mode (``tf.jvp``: the tangent is ⟨gradient, t⟩) work through it. Second order
(``create_graph=True``, ``tf.hvp``) would need the workers' Hessians and raises
:class:`UnsupportedADError`. :func:`contract` supports reverse mode (first order) only.
"""
from __future__ import annotations

import collections
import collections.abc
import concurrent.futures
import hashlib
import itertools
import math
import os
import pickle
import threading
import uuid
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, cast

import numpy as np
import opt_einsum  # type: ignore[import-untyped]
from numpy.typing import NDArray

from ._errors import DistributedError, DTypeError, ShapeError, TenferroError, UnsupportedADError
from ._rule_api import is_tracked
from ._tensor import Tensor
from .autograd import enable_grad, grad as _grad, no_grad
from .custom import custom_vjp
from ._ops.einsum import einsum

try:     # optional (a dependency of Dask): sends lambdas and closures to a process pool
    import cloudpickle as _cloudpickle  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - then fn must pickle by reference
    _cloudpickle = None

# (DistributedError is documented with the other errors, at top level: tf.DistributedError)
__all__ = ["map_value_and_grad", "Shards", "contract", "contraction_plan", "ContractionPlan",
           "CACHE_BYTES"]

#: Bytes of shards a worker process keeps, and a Dask client keeps scattered (least
#: recently used dropped first; the shards of the current call are always kept).
CACHE_BYTES = 4 << 30

_MISSING = "tenferro.distributed:missing-shard"

# parameters at least this large are scattered to a Dask cluster's workers once per call
_SCATTER_PARAMS_BYTES = 256 << 10


# ---- parameters: a pytree of arrays -------------------------------------------------------

def _flatten(tree: Any) -> tuple[list[Any], Any]:
    """Leaves (arrays, Tensors, numbers) and a structure to rebuild ``tree`` from them."""
    if isinstance(tree, (tuple, list)):
        leaves: list[Any] = []
        subs = []
        for t in tree:
            ls, s = _flatten(t)
            leaves.extend(ls)
            subs.append((len(ls), s))
        return leaves, (type(tree).__name__, subs)
    if isinstance(tree, dict):
        leaves = []
        dsubs: list[tuple[Any, int, Any]] = []
        for k, t in tree.items():
            ls, s = _flatten(t)
            leaves.extend(ls)
            dsubs.append((k, len(ls), s))
        return leaves, ("dict", dsubs)
    return [tree], None


def _unflatten(spec: Any, leaves: Sequence[Any]) -> Any:
    if spec is None:
        return leaves[0]
    kind, subs = spec
    if kind == "dict":
        out, pos = {}, 0
        for k, n, s in subs:
            out[k] = _unflatten(s, leaves[pos:pos + n])
            pos += n
        return out
    items, pos = [], 0
    for n, s in subs:
        items.append(_unflatten(s, leaves[pos:pos + n]))
        pos += n
    return tuple(items) if kind == "tuple" else items


def _leaf_array(leaf: Any, k: int) -> NDArray[Any]:
    a = leaf._data if isinstance(leaf, Tensor) else np.asarray(leaf)
    if a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
        raise DTypeError(f"map_value_and_grad: parameter leaf {k} has dtype {a.dtype}; "
                         f"parameters must be float32/float64/complex64/complex128 arrays "
                         f"(pass constants inside the shards instead)")
    return a


# ---- shards: tokens and the worker-side cache ---------------------------------------------

def _shard_token(shard: Any, i: int) -> tuple[str, int]:
    """A content hash of ``shard`` and its size in bytes; DistributedError if it cannot
    be pickled (it could not be sent to a worker)."""
    h = hashlib.sha256()     # (OpenSSL's SHA-256 hashes ~2x faster than BLAKE2b here)
    if isinstance(shard, np.ndarray) and shard.dtype.kind in "biufc":
        h.update(f"ndarray:{shard.dtype.str}:{shard.shape}".encode())
        h.update(np.ascontiguousarray(shard).data)
        return h.hexdigest()[:32], int(shard.nbytes)
    try:
        data = pickle.dumps(shard, protocol=5)
    except Exception as e:  # noqa: BLE001 - any pickling failure means the same to the user
        raise DistributedError(
            f"map_value_and_grad: shard {i} ({type(shard).__name__}) cannot be pickled, so "
            f"it cannot be sent to a worker: {type(e).__name__}: {e}. Make shards arrays, "
            f"tuples/dicts of arrays or other picklable objects") from None
    h.update(b"pickle:")
    h.update(data)
    return h.hexdigest()[:32], len(data)


def _map_arrays(piece: Any, array: Callable[[NDArray[Any]], Any],
                other: Callable[[Any], Any]) -> Any:
    """``piece`` rebuilt with ``array(a)`` for each ndarray it holds (inside tuples,
    namedtuples, lists and dicts) and ``other(x)`` for anything else."""
    if isinstance(piece, np.ndarray):
        return array(piece)
    if isinstance(piece, (tuple, list)):
        items = [_map_arrays(x, array, other) for x in piece]
        if isinstance(piece, tuple) and type(piece) is not tuple:
            return type(piece)(*items)            # a namedtuple
        return type(piece)(items)
    if isinstance(piece, dict):
        return type(piece)((k, _map_arrays(x, array, other)) for k, x in piece.items())
    return other(piece)


def _read_only_copy(a: NDArray[Any]) -> NDArray[Any]:
    out = np.array(a, copy=True)
    out.setflags(write=False)
    return out


def _frozen_copy(piece: Any, i: int) -> Any:
    """A copy of ``piece`` whose arrays are read-only (containers copied, arrays copied
    and frozen, other objects copied by a pickle round trip)."""
    def other(x: Any) -> Any:
        if isinstance(x, (int, float, complex, str, bytes, type(None))):
            return x
        _shard_token(x, i)         # DistributedError when it cannot be pickled
        return pickle.loads(pickle.dumps(x, protocol=5))
    return _map_arrays(piece, _read_only_copy, other)


class Shards(collections.abc.Sequence):  # type: ignore[type-arg]
    """Shards hashed once: read-only copies for repeated :func:`map_value_and_grad` calls.

    :func:`map_value_and_grad` identifies each shard by a hash of its contents so that a
    shard changed in place is never used stale on a worker; given a plain list it hashes
    every shard on every call (about 0.5 ms per MB on the driver). ``Shards(pieces)``
    copies the pieces once, makes their arrays read-only and hashes them once, so a call
    (an optimizer's step) only sends 16-byte tokens. It is a sequence: ``len``, indexing
    and iteration give the read-only copies.

    Parameters
    ----------
    pieces : iterable
        The shards: arrays, tuples/lists/dicts of arrays, or other picklable objects.
        Arrays are copied and made read-only (containers are copied; other objects are
        copied by a pickle round trip).

    Raises
    ------
    DistributedError
        A piece cannot be pickled (naming it), or there are no pieces.

    Examples
    --------
    >>> import numpy as np
    >>> import tenferro as tf
    >>> from tenferro.distributed import Shards, map_value_and_grad
    >>> data = Shards([np.arange(3.0), np.arange(3.0, 6.0)])
    >>> len(data), data[1].flags.writeable
    (2, False)
    >>> value, g = map_value_and_grad(lambda w, x: (w * x).sum(), data, np.array(2.0))
    >>> float(value), float(g)
    (30.0, 15.0)
    """
    __slots__ = ("_pieces", "_tokens")
    _pieces: tuple[Any, ...]
    _tokens: tuple[tuple[str, int], ...]

    def __init__(self, pieces: Iterable[Any]) -> None:
        if isinstance(pieces, (str, bytes)) or not isinstance(pieces, collections.abc.Iterable):
            raise DistributedError(f"Shards: pieces must be an iterable of shards, got "
                                   f"{type(pieces).__name__}")
        if isinstance(pieces, Shards):
            self._pieces, self._tokens = pieces._pieces, pieces._tokens
            return
        frozen = tuple(_frozen_copy(x, i) for i, x in enumerate(pieces))
        if not frozen:
            raise DistributedError("Shards: no pieces (pass at least one shard)")
        self._pieces = frozen
        self._tokens = tuple(_shard_token(x, i) for i, x in enumerate(frozen))

    def __len__(self) -> int:
        return len(self._pieces)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            out = Shards.__new__(Shards)
            out._pieces, out._tokens = self._pieces[k], self._tokens[k]
            return out
        return self._pieces[k]

    def __repr__(self) -> str:
        mb = sum(n for _, n in self._tokens) / 1e6
        return f"Shards({len(self)} pieces, {mb:.3g} MB, hashed)"


_CACHE: collections.OrderedDict[str, tuple[Any, int]] = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()


def _aligned(piece: Any) -> Any:
    """``piece`` with every array it holds aligned for its dtype (misaligned ones copied).
    A Dask worker can hand over a scattered array at any byte offset of the message it
    came in; NumPy's matmul does not call BLAS on a misaligned array and rounds
    differently, so the worker's bits would differ from the driver's (found by a test: a
    gradient differed in the last bit from the serial one)."""
    def align(a: NDArray[Any]) -> NDArray[Any]:
        if a.flags.aligned:
            return a
        out = np.array(a, copy=True)
        out.setflags(write=a.flags.writeable)
        return out
    return _map_arrays(piece, align, lambda x: x)


def _cached_shard(token: str, payload: Any, nbytes: int, has_payload: bool) -> Any:
    """On a worker: the shard ``token``: the copy cached in this process, else ``payload``
    (aligned, and cached) when the task brought it, else the _MISSING marker."""
    with _CACHE_LOCK:
        hit = _CACHE.get(token)
        if hit is not None:
            _CACHE.move_to_end(token)
            return hit[0]
        if not has_payload:
            return _MISSING
        shard = _aligned(payload)
        _CACHE[token] = (shard, nbytes)
        total = sum(n for _, n in _CACHE.values())
        while total > CACHE_BYTES and len(_CACHE) > 1:
            _, (_, n) = _CACHE.popitem(last=False)
            total -= n
        return shard


# executor -> {token: ids of the worker processes known to hold that shard}
_HOLDERS: weakref.WeakKeyDictionary[Any, dict[str, set[str]]] = weakref.WeakKeyDictionary()

# executor -> calls made on it (rotates the order in which a call submits its tasks)
_ROUNDS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

_WORKER: list[Any] = [None, ""]      # [pid, id] of this process


def _worker_id() -> str:
    """An id of this process, new in every process (a forked worker inherits its parent's
    module state, so the pid is checked): the driver learns which worker ran a task."""
    pid = os.getpid()
    if _WORKER[0] != pid:
        _WORKER[:] = [pid, f"{pid}:{uuid.uuid4().hex}"]
    return cast(str, _WORKER[1])


# client -> {token: (Dask future of the scattered shard, bytes)}, least recently used
# first; dropping a future lets the cluster free the shard (bounded by CACHE_BYTES)
_SCATTERED: weakref.WeakKeyDictionary[Any, collections.OrderedDict[str, tuple[Any, int]]] = \
    weakref.WeakKeyDictionary()


def _dask_client(executor: Any) -> Any:
    """The Dask Client behind ``client.get_executor()`` (None for other executors)."""
    client = getattr(executor, "_client", None)
    return client if client is not None and hasattr(client, "scatter") else None


def _scattered(client: Any, tokens: Sequence[tuple[str, int]],
               shards: Sequence[Any]) -> list[Any]:
    held = _SCATTERED.setdefault(client, collections.OrderedDict())
    new = [k for k, (t, _) in enumerate(tokens) if t not in held]
    if new:
        futures = client.scatter([shards[k] for k in new], broadcast=True, hash=False)
        for k, f in zip(new, futures):
            held[tokens[k][0]] = (f, tokens[k][1])
    refs = []
    for t, _ in tokens:
        held.move_to_end(t)
        refs.append(held[t][0])
    total = sum(n for _, n in held.values())
    in_use = {t for t, _ in tokens}
    while total > CACHE_BYTES and next(iter(held)) not in in_use:
        _, (_, n) = held.popitem(last=False)
        total -= n
    return refs


# ---- running tasks ------------------------------------------------------------------------

def _check_executor(executor: Any) -> None:
    if executor is not None and not isinstance(executor, concurrent.futures.Executor):
        raise DistributedError(
            f"executor must be a concurrent.futures.Executor (a Dask client's "
            f"client.get_executor(), a ProcessPoolExecutor, an MPIPoolExecutor) or None "
            f"for serial, got {type(executor).__name__}")


_LOADED: dict[str, Callable[..., Any]] = {}


class _ByValue:
    """A function pickled by value (cloudpickle), unpickled once per worker process: a
    process pool pickles functions by reference, which a lambda, a closure or a function
    of a module the workers cannot import (a test file) does not survive."""
    __slots__ = ("data", "key")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.key = hashlib.blake2b(data, digest_size=16).hexdigest()

    def __call__(self, *args: Any) -> Any:
        f = _LOADED.get(self.key)
        if f is None:
            if len(_LOADED) > 64:
                _LOADED.clear()
            f = _LOADED[self.key] = pickle.loads(self.data)
        return f(*args)

    def __getstate__(self) -> bytes:
        return self.data

    def __setstate__(self, data: bytes) -> None:
        self.__init__(data)  # type: ignore[misc]


def _portable(fn: Callable[..., Any], what: str, executor: Any) -> Callable[..., Any]:
    """``fn`` as a task will carry it: itself (serial), or pickled by value when
    cloudpickle is installed (Dask, too, pickles a task's arguments by reference when
    plain pickle can); DistributedError if it cannot be pickled at all."""
    if executor is None:
        return fn
    try:
        if _cloudpickle is not None:
            return _ByValue(_cloudpickle.dumps(fn))
        pickle.dumps(fn)
        return fn
    except Exception as e:  # noqa: BLE001
        raise DistributedError(
            f"{what} ({fn!r}) cannot be pickled, so a {type(executor).__name__} cannot "
            f"send it to its workers ({type(e).__name__}: {e}); define it at module level "
            f"(install cloudpickle to send lambdas and closures)") from None


def _failure(e: BaseException, label: str) -> TenferroError:
    """The error to raise on the driver for a task that failed with ``e``."""
    if isinstance(e, TenferroError):
        return e
    name = type(e).__name__
    if name in ("KilledWorker", "BrokenProcessPool", "BrokenExecutor", "CancelledError"):
        return DistributedError(
            f"{label}: a worker died or the executor broke while computing it ({name}: "
            f"{e}); no partial result is returned. A process pool is unusable after this: "
            f"create a new one (a Dask cluster restarts the worker)")
    return DistributedError(f"{label}: the executor failed ({name}: {e})")


def _unique_task(f: Callable[..., Any], task_id: int, *args: Any) -> Any:
    """``f(*args)``; ``task_id`` only makes the task's Dask key unique. A Dask client names
    a task by a hash of its function and arguments and hands back the stored outcome for
    a name it holds: without the id, repeating a call after a failure returned the old
    failure (found by the worker-death test)."""
    return f(*args)


_TASK_IDS = itertools.count()


def _run(executor: Any, tasks: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]],
         labels: Sequence[str],
         retry: Callable[[int, Any], tuple[Callable[..., Any], tuple[Any, ...]] | None]
         | None = None, order: Sequence[int] | None = None,
         in_flight: int | None = None) -> list[Any]:
    """Results of ``f(*args)`` for each task, in task order.

    ``retry(k, result)`` may return a task to run instead of accepting ``result`` (a
    shard that was missing on its worker): it is submitted as soon as that result
    arrives. Tasks are submitted in ``order`` (default: task order), at most
    ``in_flight`` at a time (default: all at once), so a resubmitted task waits behind
    at most that many others instead of behind every task of the call. The first
    failure cancels the rest and raises, naming the tasks that failed with it."""
    if executor is None:
        return [f(*a) for f, a in tasks]
    dask = _dask_client(executor) is not None
    futures: list[concurrent.futures.Future[Any] | None] = [None] * len(tasks)

    def submit(k: int, f: Callable[..., Any], a: tuple[Any, ...]) -> concurrent.futures.Future[Any]:
        if dask:
            f, a = _unique_task, (f, next(_TASK_IDS)) + tuple(a)
        try:
            fu: concurrent.futures.Future[Any] = executor.submit(f, *a)
            futures[k] = fu
            return fu
        except TenferroError:
            _cancel(futures)
            raise
        except Exception as e:  # noqa: BLE001 - a broken pool raises on submit
            _cancel(futures)
            raise _failure(e, labels[k]) from e

    waiting = collections.deque(range(len(tasks)) if order is None else order)
    pending: dict[concurrent.futures.Future[Any], int] = {}

    def top_up() -> None:
        while waiting and (in_flight is None or len(pending) < in_flight):
            k = waiting.popleft()
            pending[submit(k, *tasks[k])] = k

    results: list[Any] = [None] * len(tasks)
    top_up()
    while pending:
        done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
        for fu in sorted(done, key=pending.__getitem__):       # in task order
            k = pending.pop(fu)
            try:
                r = fu.result()
            except BaseException as e:  # noqa: BLE001 - CancelledError is a BaseException
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    _cancel(futures)
                    raise
                first, label = _failed_labels(futures, k, labels)
                first_future = futures[first]
                if first_future is not None:       # (the first failure in task order)
                    e = first_future.exception(timeout=0) or e
                raise _failure(e, label) from e
            again = retry(k, r) if retry is not None else None
            if again is None:
                results[k] = r
            else:
                pending[submit(k, *again)] = k
        top_up()
    return results


def _cancel(futures: Sequence[concurrent.futures.Future[Any] | None]) -> None:
    for fu in futures:
        if fu is not None:
            fu.cancel()


def _failed_labels(futures: Sequence[concurrent.futures.Future[Any] | None], k: int,
                   labels: Sequence[str]) -> tuple[int, str]:
    """The first (in task order) of the pieces that failed with task k's failure, and a
    label naming them all; the rest are cancelled. A dead worker
    fails every task it held at once (the first to be seen may be an innocent one queued
    there): those that fail within a few seconds are named together, in task order (a
    loaded machine delivers one worker's failures over more than a second: measured in
    CI)."""
    rest = [fu for j, fu in enumerate(futures) if j != k and fu is not None]
    concurrent.futures.wait(rest, timeout=5.0)
    failed = [j for j, fu in enumerate(futures) if j == k or (
        fu is not None and fu.done() and not fu.cancelled()
        and fu.exception(timeout=0) is not None)]
    _cancel(rest)
    first, others = labels[failed[0]], failed[1:]
    if not others:
        return failed[0], first
    return failed[0], first + " (and " + ", ".join(labels[j].rsplit(": ", 1)[-1]
                                                   for j in others) + ")"


# ---- map_value_and_grad -------------------------------------------------------------------

def _shard_value_and_grad(fn: Callable[[Any, Any], Any], i: int, token: str, payload: Any,
                          nbytes: int, has_payload: bool, arrays: Sequence[NDArray[Any]],
                          spec: Any) -> Any:
    """The task: fn(params, shard) and its gradient in params, on a worker (or inline);
    with the id of the worker process (or _MISSING, when the shard is not cached here)."""
    shard = payload if token == "" else _cached_shard(token, payload, nbytes, has_payload)
    if isinstance(shard, str) and shard == _MISSING:
        return _worker_id(), _MISSING
    with enable_grad():
        leaves = [Tensor._wrap(np.array(a)).set_requires_grad(True) for a in arrays]
        try:
            out = fn(_unflatten(spec, leaves), shard)
        except TenferroError as e:
            raise type(e)(f"shard {i}: {e}") from None
        except Exception as e:  # noqa: BLE001 - named and passed on
            raise DistributedError(f"shard {i}: fn raised {type(e).__name__}: {e}") from None
        if not isinstance(out, Tensor):
            out = Tensor._wrap(np.asarray(out))
        if out.shape != ():
            raise ShapeError(f"map_value_and_grad: fn returned shape {out.shape} for shard "
                             f"{i}; it must return a scalar (sum or reduce inside fn)")
        if out.dtype.kind != "f":
            raise DTypeError(f"map_value_and_grad: fn returned dtype {out.dtype} for shard "
                             f"{i}; it must return a real floating-point scalar")
        gs = _grad([out], leaves) if out.requires_grad else [None] * len(leaves)
    value = np.array(out._data)
    return _worker_id(), (value, [np.zeros_like(a) if g is None else np.asarray(g._data, a.dtype)
                                  for g, a in zip(gs, arrays)])


@dataclass(eq=False)
class _MapCall:
    fn: Callable[[Any, Any], Any]
    shards: tuple[Any, ...]
    tokens: tuple[tuple[str, int], ...] | None      # given by a Shards handle
    spec: Any
    executor: Any
    grads: tuple[NDArray[Any], ...] = ()     # set by the recorded op's fwd


def _map_compute(call: _MapCall, arrays: Sequence[NDArray[Any]]) -> tuple[
        NDArray[Any], list[NDArray[Any]]]:
    n = len(call.shards)
    ex = call.executor
    arrays = [np.asarray(a) for a in arrays]
    labels = [f"map_value_and_grad: shard {i}" for i in range(n)]
    if ex is None:
        return _sum_in_order([_shard_value_and_grad(call.fn, i, "", call.shards[i], 0, True,
                                                    arrays, call.spec)[1]
                              for i in range(n)])
    tokens = call.tokens if call.tokens is not None else [
        _shard_token(s, i) for i, s in enumerate(call.shards)]
    client = _dask_client(ex)
    if client is not None:
        # Dask: each shard is scattered once to every worker (broadcast), and a task
        # carries a reference that the worker resolves to its local copy
        try:
            refs = _scattered(client, tokens, call.shards)
            # large parameters go to each worker once (not inside each of n tasks, which
            # the scheduler would relay one by one)
            params: Any = arrays
            if n > 1 and sum(a.nbytes for a in arrays) >= _SCATTER_PARAMS_BYTES:
                [params] = client.scatter([arrays], broadcast=True, hash=False)
        except Exception as e:  # noqa: BLE001 - a cluster that lost its workers
            _SCATTERED.pop(client, None)
            raise _failure(e, "map_value_and_grad: sending the shards and parameters") from e
        try:
            results = _run(ex, [
                (_shard_value_and_grad, (call.fn, i, tokens[i][0], refs[i], tokens[i][1], True,
                                         params, call.spec))
                for i in range(n)], labels)
        except DistributedError:
            # a dead worker can take scattered shards with it: scatter afresh next time
            _SCATTERED.pop(client, None)
            raise
        return _sum_in_order([r for _, r in results])
    # a pool cannot send a task to a chosen worker: a shard's payload goes with its tasks
    # until some worker has reported holding it (each result names its worker process);
    # after that a task goes without it, and one that lands on a worker without the shard
    # (one that has not received it, a restarted worker, an evicted shard) answers
    # "missing" and is sent again with the payload as soon as that answer arrives.
    # (Sending the payload until every worker holds it was measured slower: the pool
    # hands tasks out in turn, so shard i kept landing on the same worker and the 8
    # payloads of 14 MB travelled for ~10 calls.)
    holders = _HOLDERS.setdefault(ex, {})
    if len(holders) > 4 * n + 1024:           # forget shards of long-past calls
        current = {t for t, _ in tokens}
        for t in [t for t in holders if t not in current]:
            del holders[t]

    def task(i: int, with_payload: bool) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        token, nbytes = tokens[i]
        return (_shard_value_and_grad, (call.fn, i, token, call.shards[i] if with_payload
                                        else None, nbytes, with_payload, arrays, call.spec))

    def retry(i: int, result: Any) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        worker, r = result
        held = holders.setdefault(tokens[i][0], set())
        if isinstance(r, str) and r == _MISSING:
            held.discard(worker)
            return task(i, True)
        held.add(worker)
        return None

    # Tasks are submitted in an order rotated by one each call (a pool hands tasks out in
    # turn: in a fixed order shard i kept landing on the same worker, and the other worker
    # never received it), one more than the workers at a time (so a resent task waits
    # behind at most one other, not behind the whole call); while some shard is not yet
    # known to be on every worker, only as many as the workers: then the worker that
    # answered "missing" is the one idle when the resent task arrives, and receives it.
    rounds = _ROUNDS[ex] = _ROUNDS.get(ex, -1) + 1
    n_workers = getattr(ex, "_max_workers", None) or getattr(ex, "num_workers", None)
    in_flight = None
    if isinstance(n_workers, int) and n_workers > 0:
        everywhere = all(len(holders.get(t, ())) >= n_workers for t, _ in tokens)
        in_flight = n_workers + 1 if everywhere else n_workers
    results = _run(ex, [task(i, not holders.get(tokens[i][0])) for i in range(n)], labels,
                   retry, order=[(rounds + j) % n for j in range(n)], in_flight=in_flight)
    return _sum_in_order([r for _, r in results])


def _sum_in_order(results: Sequence[Any]) -> tuple[NDArray[Any], list[NDArray[Any]]]:
    dtype = results[0][0].dtype
    for i, (v, _) in enumerate(results):
        if v.dtype != dtype:
            raise DTypeError(f"map_value_and_grad: fn returned dtype {v.dtype} for shard "
                             f"{i} but {dtype} for shard 0; return one dtype for every shard")
    # the sum in shard order, whatever order the workers finished in
    value = results[0][0]
    grads = list(results[0][1])
    for v, gs in results[1:]:
        value = value + v
        grads = [a + b for a, b in zip(grads, gs)]
    return np.asarray(value), grads


def _sharded_sum_primal(call: _MapCall, *leaves: Tensor) -> NDArray[Any]:
    """Σ_shards fn(params, shard), recorded as one op in an outer graph."""
    return _map_compute(call, [x.numpy() for x in leaves])[0]


_sharded_sum = custom_vjp(_sharded_sum_primal, nondiff_argnums=(0,))


def _sharded_sum_fwd(call: _MapCall, *leaves: Tensor) -> tuple[NDArray[Any], Any]:
    if any(is_tracked(x) for x in leaves):
        raise UnsupportedADError(
            "map_value_and_grad: a second-order derivative (create_graph=True, hvp) of a "
            "sharded sum needs the workers' Hessians, which are not computed; take the "
            "second derivative inside fn on one shard, or use first-order methods")
    value, grads = _map_compute(call, [x.numpy() for x in leaves])
    call.grads = tuple(grads)
    return value, call.grads


def _sharded_sum_bwd(call: _MapCall, grads: tuple[NDArray[Any], ...], g: Tensor) -> tuple[
        Tensor, ...]:
    # linear in g with tenferro ops, so forward mode (its transpose) works too
    return tuple(g * Tensor._wrap(gr) for gr in grads)


_sharded_sum.defvjp(_sharded_sum_fwd, _sharded_sum_bwd)


def map_value_and_grad(fn: Callable[[Any, Any], Any], shards: Sequence[Any], params: Any, *,
                       executor: concurrent.futures.Executor | None = None) -> tuple[Any, Any]:
    """Value and gradient of ``Σ_shards fn(params, shard)``, each shard on a worker.

    Parameters
    ----------
    fn : callable
        ``fn(params, shard) -> scalar``, written with tenferro ops; it receives ``params``
        with the structure given here, its leaves as Tensors that require grad, and one
        shard. It must return a real floating-point scalar of the same dtype for every
        shard. It is pickled by value with cloudpickle (installed with Dask), so lambdas
        and closures work; without cloudpickle a process pool needs a module-level
        function.
    shards : sequence or Shards
        The pieces (arrays, tuples/dicts of arrays, any picklable object). Treated as
        constants: each is sent to a worker process once and cached there under a hash
        of its contents (module docstring). A list is hashed on every call; wrap the
        shards in :class:`Shards` once when calling repeatedly with the same shards.
    params : array_like, Tensor, or tuple/list/dict of them (nested)
        The point; leaves of dtype float32/64 or complex64/128.
    executor : concurrent.futures.Executor, optional
        Where the shards run: ``client.get_executor()`` of a Dask ``Client``, a
        ``ProcessPoolExecutor``, an ``MPIPoolExecutor``; None runs them here, in order.

    Returns
    -------
    value : numpy scalar or Tensor
        The sum over shards, added in shard order (bit for bit the serial sum whatever
        the number of workers). A Tensor when a leaf of ``params`` is a Tensor; recorded
        as one op (its pullback the gradient below) when a leaf is tracked.
    grads : ndarray or tuple/list/dict of ndarrays
        The gradient, with ``params``' structure and each leaf's dtype (complex leaves:
        the conjugate-Wirtinger convention of ``tf.grad``).

    Raises
    ------
    DistributedError
        ``executor`` is not an Executor; a shard or ``fn`` cannot be pickled for it; a
        worker died or the executor failed (naming the shard; no partial sum); ``fn``
        raised (naming the shard and the exception).
    ShapeError
        ``fn`` returned a non-scalar (naming the shard).
    DTypeError
        ``fn`` returned a complex or integer value, or different dtypes for two shards;
        a parameter is not floating-point.
    UnsupportedADError
        A second-order derivative through the returned Tensor.

    Examples
    --------
    >>> import numpy as np
    >>> import tenferro as tf
    >>> from tenferro.distributed import map_value_and_grad
    >>> def sq_loss(w, shard):
    ...     x, y = shard
    ...     return ((x @ w - y) ** 2).sum()
    >>> rng = np.random.default_rng(0)
    >>> shards = [(rng.standard_normal((5, 2)), rng.standard_normal(5)) for _ in range(3)]
    >>> value, g = map_value_and_grad(sq_loss, shards, np.zeros(2))
    >>> bool(np.isclose(value, sum(float((y ** 2).sum()) for _, y in shards)))
    True
    >>> g.shape
    (2,)
    """
    _check_executor(executor)
    if not callable(fn):
        raise DistributedError(f"map_value_and_grad: fn must be callable, got "
                               f"{type(fn).__name__}")
    if isinstance(shards, (str, bytes)) or not hasattr(shards, "__len__"):
        raise DistributedError(f"map_value_and_grad: shards must be a sequence (a list of "
                               f"pieces), got {type(shards).__name__}")
    if isinstance(shards, Shards):
        pieces, tokens = shards._pieces, shards._tokens
    else:
        pieces, tokens = tuple(shards), None
    if not pieces:
        raise DistributedError("map_value_and_grad: shards is empty; the sum of no shards "
                               "has no dtype (pass at least one shard)")
    task_fn = _portable(fn, "map_value_and_grad: fn", executor)
    leaves, spec = _flatten(params)
    arrays = [_leaf_array(x, k) for k, x in enumerate(leaves)]
    call = _MapCall(task_fn, pieces, tokens, spec, executor)
    if any(isinstance(x, Tensor) for x in leaves):
        tensors = [x if isinstance(x, Tensor) else Tensor._wrap(a)
                   for x, a in zip(leaves, arrays)]
        if any(is_tracked(x) for x in tensors):
            out = _sharded_sum(call, *tensors)      # (fwd stores the gradient in call)
            return out, _unflatten(spec, list(call.grads))
        with no_grad():
            value, grads = _map_compute(call, arrays)
        return Tensor._wrap(value), _unflatten(spec, grads)
    value, grads = _map_compute(call, arrays)
    return value[()], _unflatten(spec, grads)



# ---- contract: a sliced einsum ------------------------------------------------------------

@dataclass(frozen=True)
class ContractionPlan:
    """How :func:`contract` splits an einsum (made by :func:`contraction_plan`).

    A sliced index of dimension d in chunks of c gives ceil(d / c) pieces; a slice is one
    choice of piece for every sliced index.

    Attributes
    ----------
    equation : str
        The subscripts in explicit form (``"ab,bc->ac"``).
    shapes : tuple of tuple of int
        The operands' shapes.
    dims : dict of str to int
        Every index's dimension.
    chunks : dict of str to int
        Sliced index -> chunk size.
    path : list of tuple of int
        opt_einsum's contraction path of one full-size slice.
    largest_intermediate : int
        The largest intermediate of that path, in elements (the output piece included).
    unsliced_largest_intermediate : int
        The same without slicing.

    Examples
    --------
    >>> import numpy as np
    >>> from tenferro.distributed import contraction_plan
    >>> plan = contraction_plan("ij,jk->ik", np.ones((8, 64)), np.ones((64, 8)),
    ...                         target_size=32)
    >>> plan.chunks, plan.unsliced_largest_intermediate, plan.largest_intermediate
    ({'i': 4}, 64, 32)
    """
    equation: str
    shapes: tuple[tuple[int, ...], ...]
    dims: dict[str, int]
    chunks: dict[str, int]
    path: list[tuple[int, ...]]
    largest_intermediate: int
    unsliced_largest_intermediate: int

    @property
    def n_slices(self) -> int:
        """The number of slices (tasks)."""
        return math.prod(-(-self.dims[c] // k) for c, k in self.chunks.items())

    def slices(self) -> list[dict[str, slice]]:
        """Each slice as {index: range of that index}, in a fixed order."""
        names = sorted(self.chunks)
        ranges = [[slice(s, min(s + self.chunks[c], self.dims[c]))
                   for s in range(0, self.dims[c], self.chunks[c])] for c in names]
        return [dict(zip(names, combo)) for combo in itertools.product(*ranges)]


def _path_info(inputs: Sequence[str], output: str, dims: dict[str, int]) -> tuple[
        list[tuple[int, ...]], int]:
    shapes = [tuple(dims[c] for c in s) for s in inputs]
    eq = ",".join(inputs) + "->" + output
    if len(inputs) == 1:
        return [(0,)], max(math.prod(shapes[0]), math.prod(dims[c] for c in output))
    path, info = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize="auto")
    largest = max(int(info.largest_intermediate), math.prod(dims[c] for c in output))
    return [tuple(p) for p in path], largest


def _parse(subscripts: Any, operands: Sequence[Any]) -> tuple[list[str], str,
                                                               list[NDArray[Any]]]:
    if not isinstance(subscripts, str):
        raise ShapeError(f"contract: subscripts must be a string such as 'ij,jk->ik', got "
                         f"{type(subscripts).__name__}")
    if not operands:
        raise ShapeError("contract: no operands")
    arrays = [np.asarray(x._data if isinstance(x, Tensor) else x) for x in operands]
    try:
        ins, out, _ = opt_einsum.parser.parse_einsum_input((subscripts, *arrays))
    except Exception as e:  # noqa: BLE001 - opt_einsum's ValueError/KeyError on bad input
        raise ShapeError(f"contract: bad subscripts {subscripts!r} for operands of shapes "
                         f"{[a.shape for a in arrays]}: {e}") from None
    inputs = ins.split(",")
    if len(inputs) != len(arrays):
        raise ShapeError(f"contract: {subscripts!r} names {len(inputs)} operands, "
                         f"{len(arrays)} given")
    return inputs, out, arrays


def _dims(inputs: Sequence[str], arrays: Sequence[NDArray[Any]]) -> dict[str, int]:
    dims: dict[str, int] = {}
    for k, (s, a) in enumerate(zip(inputs, arrays)):
        if len(s) != a.ndim:
            raise ShapeError(f"contract: operand {k} has {a.ndim} dimensions but "
                             f"subscripts {s!r} name {len(s)}")
        for c, d in zip(s, a.shape):
            if dims.setdefault(c, d) != d:
                raise ShapeError(f"contract: index {c!r} has dimension {dims[c]} and {d} "
                                 f"(operand {k}); no broadcasting in a sliced contraction")
    return dims


def contraction_plan(subscripts: str, *operands: Any, target_size: int) -> ContractionPlan:
    """The indices :func:`contract` slices so the largest intermediate is ≤ target_size.

    Greedy: starting from no slicing, halve the chunk of the index that lowers the
    largest intermediate of opt_einsum's path the most (fewest slices on a tie) until it
    is at most ``target_size`` elements (the output piece counts as an intermediate).

    Parameters
    ----------
    subscripts : str
        NumPy's einsum subscripts.
    *operands : array_like or Tensor
        The operands (only their shapes are read).
    target_size : int
        The largest number of elements an intermediate (or the output piece) of one slice
        may have. As in cotengra, the operands' pieces are not counted (in a tensor
        network the operands are small and the intermediates are what outgrow a machine);
        a slice's pieces are at most the operands' sizes.

    Returns
    -------
    ContractionPlan
        The sliced indices and chunk sizes, the path of one slice and its largest
        intermediate.

    Raises
    ------
    ShapeError
        Bad subscripts or shapes, or ``target_size`` below what slicing every index to
        chunks of one reaches (the message gives that size).

    Examples
    --------
    >>> import numpy as np
    >>> from tenferro.distributed import contraction_plan
    >>> a, b = np.ones((8, 64)), np.ones((64, 8))
    >>> plan = contraction_plan("ij,jk->ik", a, b, target_size=16)
    >>> plan.largest_intermediate <= 16, plan.n_slices
    (True, 4)
    """
    inputs, out, arrays = _parse(subscripts, operands)
    if isinstance(target_size, bool) or not isinstance(target_size, (int, np.integer)) \
            or target_size < 1:
        raise ShapeError(f"contract: target_size must be a positive int (elements), got "
                         f"{target_size!r}")
    dims = _dims(inputs, arrays)
    chunks = dict(dims)
    path, largest = _path_info(inputs, out, chunks)
    unsliced = largest
    while largest > target_size:
        best: tuple[tuple[int, int, str], dict[str, int], list[tuple[int, ...]]] | None = None
        for c in sorted(dims):
            if chunks[c] == 1:
                continue
            trial = dict(chunks)
            trial[c] = -(-chunks[c] // 2)
            p, lg = _path_info(inputs, out, trial)
            n = math.prod(-(-dims[x] // trial[x]) for x in dims)
            key = (lg, n, c)
            if best is None or key < best[0]:
                best = (key, trial, p)
        if best is None:
            raise ShapeError(
                f"contract: target_size={target_size} is below {largest}, the largest "
                f"intermediate with every index sliced to chunks of 1 (the operands' "
                f"shapes {[a.shape for a in arrays]}); raise target_size")
        (largest, _, _), chunks, path = best
    sliced = {c: k for c, k in chunks.items() if k < dims[c]}
    return ContractionPlan(",".join(inputs) + "->" + out,
                           tuple(a.shape for a in arrays), dims, sliced, path,
                           largest, unsliced)


def _piece_index(subs: str, sl: dict[str, slice]) -> tuple[slice, ...]:
    return tuple(sl.get(c, slice(None)) for c in subs)


def _slice_value(eq: str, pieces: Sequence[NDArray[Any]]) -> NDArray[Any]:
    with no_grad():
        return einsum(eq, *pieces).numpy()


def _slice_vjp(eq: str, pieces: Sequence[NDArray[Any]], g: NDArray[Any],
               needs: Sequence[bool]) -> list[NDArray[Any] | None]:
    with enable_grad():
        xs = [Tensor._wrap(np.array(p)) for p in pieces]
        wrt = [x.set_requires_grad(True) for x, n in zip(xs, needs) if n]
        out = einsum(eq, *xs)
        gs = iter(_grad([out], wrt, grad_outputs=g) if wrt else [])
    res: list[NDArray[Any] | None] = []
    for p, n in zip(pieces, needs):
        if not n:
            res.append(None)
            continue
        gk = next(gs)
        res.append(np.zeros_like(p) if gk is None else gk.numpy())
    return res


@dataclass(frozen=True)
class _ContractCall:
    plan: ContractionPlan
    executor: Any


def _contract_value(call: _ContractCall, arrays: Sequence[NDArray[Any]]) -> NDArray[Any]:
    plan = call.plan
    inputs, out = plan.equation.split("->")
    subs = inputs.split(",")
    slices = plan.slices()
    tasks = [(_slice_value, (plan.equation,
                             [a[_piece_index(s, sl)] for s, a in zip(subs, arrays)]))
             for sl in slices]
    results = _run(call.executor, tasks, [f"contract: slice {k} {_describe(sl)}"
                                          for k, sl in enumerate(slices)])
    total = np.zeros(tuple(plan.dims[c] for c in out), results[0].dtype)
    for sl, r in zip(slices, results):     # in slice order: bitwise reproducible
        total[_piece_index(out, sl)] += r
    return total


def _describe(sl: dict[str, slice]) -> str:
    return "(" + ", ".join(f"{c}={s.start}:{s.stop}" for c, s in sl.items()) + ")"


def _sliced_contract_primal(call: _ContractCall, *operands: Tensor) -> NDArray[Any]:
    """A sliced einsum, recorded as one op."""
    return _contract_value(call, [x.numpy() for x in operands])


_sliced_contract = custom_vjp(_sliced_contract_primal, nondiff_argnums=(0,))


def _sliced_contract_fwd(call: _ContractCall, *operands: Tensor) -> tuple[NDArray[Any], Any]:
    if any(is_tracked(x) for x in operands):
        raise UnsupportedADError(
            "contract: a second-order derivative of a sliced contraction is not "
            "implemented (first-order reverse mode only); use tf.einsum on one machine")
    return _contract_value(call, [x.numpy() for x in operands]), operands


def _sliced_contract_bwd(call: _ContractCall, operands: tuple[Tensor, ...],
                         g: Tensor) -> tuple[NDArray[Any] | None, ...]:
    if is_tracked(g) or any(is_tracked(x) for x in operands):
        raise UnsupportedADError(
            "contract: forward mode and second-order derivatives of a sliced contraction "
            "are not implemented (first-order reverse mode only); use tf.einsum on one "
            "machine for those")
    plan = call.plan
    inputs, out = plan.equation.split("->")
    subs = inputs.split(",")
    arrays = [x.numpy() for x in operands]
    gd = g.numpy()
    needs = [a.dtype.kind in "fc" for a in arrays]
    slices = plan.slices()
    tasks = [(_slice_vjp, (plan.equation,
                           [a[_piece_index(s, sl)] for s, a in zip(subs, arrays)],
                           gd[_piece_index(out, sl)], needs)) for sl in slices]
    results = _run(call.executor, tasks, [f"contract (pullback): slice {k} {_describe(sl)}"
                                          for k, sl in enumerate(slices)])
    grads: list[NDArray[Any] | None] = [np.zeros_like(a) if n else None
                                        for a, n in zip(arrays, needs)]
    # a piece of an operand along a sliced index is its own block; an operand without
    # the index gets the sum over slices, added in slice order
    for sl, pieces in zip(slices, results):
        for k, (s, p) in enumerate(zip(subs, pieces)):
            gk = grads[k]
            if p is not None and gk is not None:
                gk[_piece_index(s, sl)] += p
    return tuple(grads)


_sliced_contract.defvjp(_sliced_contract_fwd, _sliced_contract_bwd)


def contract(subscripts: str, *operands: Any, target_size: int,
             executor: concurrent.futures.Executor | None = None) -> Tensor:
    """``tf.einsum(subscripts, *operands)`` computed in slices on an executor's workers.

    The indices chosen by :func:`contraction_plan` are cut into chunks so that no
    intermediate of one slice (nor its piece of the output) has more than
    ``target_size`` elements; each slice is contracted on a worker and the pieces are
    added on the driver in slice order (bitwise reproducible for any number of workers;
    equal to ``tf.einsum`` up to rounding). Differentiable in reverse mode: the pullback
    sends each slice's operand pieces and cotangent piece to a worker, which returns the
    pieces' gradients; an operand's gradient is assembled from its pieces along the
    sliced indices it has and summed over the others.

    Parameters
    ----------
    subscripts : str
        NumPy's einsum subscripts (``"ij,jk->ik"``, implicit output and ``...`` too).
    *operands : array_like or Tensor
        The operands (no broadcasting of size-1 dimensions against larger ones).
    target_size : int
        The largest intermediate (or output piece) of one slice, in elements: the memory
        a worker needs beyond the slice's operand pieces (see :func:`contraction_plan`).
    executor : concurrent.futures.Executor, optional
        Where the slices run (a Dask client's executor, a process pool, ...); None: here,
        one after another.

    Returns
    -------
    Tensor
        The contraction; recorded as one op when an operand is tracked.

    Raises
    ------
    ShapeError
        Bad subscripts or shapes; ``target_size`` not a positive int or too small.
    DistributedError
        ``executor`` is not an Executor, a worker died or the executor failed (naming the
        slice).
    UnsupportedADError
        Forward mode or a second-order derivative through the result.

    Examples
    --------
    >>> import numpy as np
    >>> import tenferro as tf
    >>> from tenferro.distributed import contract
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((4, 32)), rng.standard_normal((32, 4))
    >>> x = tf.tensor(a, requires_grad=True)
    >>> c = contract("ij,jk->ik", x, b, target_size=8)
    >>> bool(np.allclose(c.numpy(), a @ b))
    True
    >>> (gx,) = tf.grad([c.sum()], [x])
    >>> bool(np.allclose(gx.numpy(), np.ones((4, 4)) @ b.T))
    True
    """
    _check_executor(executor)
    plan = contraction_plan(subscripts, *operands, target_size=target_size)
    call = _ContractCall(plan, executor)
    tensors = [x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x)) for x in operands]
    if any(is_tracked(x) for x in tensors):
        # (a custom_vjp's result is typed as its primal's; recorded, it is a Tensor)
        return cast(Tensor, _sliced_contract(call, *tensors))
    return Tensor._wrap(_contract_value(call, [x.numpy() for x in tensors]))
