"""How many threads the batched linear-algebra kernels use.

A stack of many small matrices (svd, eigh, qr, cholesky, LU/solve and their pullback
kernels) is split into ``T`` contiguous chunks of the batch, one per thread; each chunk
runs the same GIL-free kernel loop with its own LAPACK workspace. Every matrix goes
through exactly the same LAPACK calls as in the serial loop (same routine, same
workspace size), so the results are bit-identical for every thread count. A failing
matrix is reported as in the serial loop: the smallest failing batch index, with its
LAPACK info (chunks are scanned in batch order).

Threads are used only where they pay:

- the stack is split only when its estimated serial time (``nb * m * n * min(m, n)``
  times a per-kernel cost in ns, measured on 8 x 8 stacks: svd 22, eigh 12, qr 6,
  getrf/getrs 1, potrf 0.5; ``nb * k * k`` times 3 for the svd pullback core, 1 for
  eigh's) is at least ``MIN_WORK`` ns: handing chunks to a pool thread and back costs
  ~0.1 ms, more when another process holds a core (measured: 1000 8 x 8 potrf take
  0.26 ms serially and are slower on 2 threads; 1000 svd take 11.6 ms and run 1.9x
  faster);
- kernels whose per-matrix work is level-3 BLAS calls (potrf, getrf, getrs, the
  LU inverse, the QR and Cholesky pullbacks: trsm/trmm/gemm/hemm on tiny blocks) stay
  serial while ``BLAS3_LOCKED``: measured with scipy-openblas 0.3 on 2 cores, 1000
  8 x 8 cholesky_backprop / qr_backprop on 2 threads kept both cores busy (1.8 cores)
  yet ran 0.96x / 0.70x as fast as on one (cholesky forward + backward 0.5x): OpenBLAS
  serializes the concurrent level-3 calls (its buffer allocation takes a lock; threads
  spin on it). LAPACK's unblocked level-2 paths (gesdd, syevd, geqrf/orgqr of small
  matrices) scale: 1.7-1.9x. For matrices with every side <= 16, potrf, getrf, getrs and
  the Cholesky pullback run plain C loops instead (tenferro/_kernels/_small.pxd: no BLAS
  call, no lock) and pass ``blas3=False``: measured on 10000 8 x 8, 1.5-1.8x on 2 threads
  (the same kernels through BLAS: 1.0-1.1x with 1.75 cores busy);
- matrices with a side larger than ``MAX_SIDE`` (64) are never split: there a single
  LAPACK call is long enough for OpenBLAS's own threads, and splitting would
  oversubscribe the cores (T chunks x OpenBLAS threads). For matrices up to 64 x 64
  OpenBLAS runs each call on one thread anyway.

The default is ``OMP_NUM_THREADS`` when set (the usual knob of threadpoolctl-aware
tools), else ``os.cpu_count()``; 1 means serial.
"""
from __future__ import annotations

import contextlib
import itertools
import operator
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ._errors import TenferroError

__all__ = ["set_num_threads", "get_num_threads", "num_threads", "ThreadCountError"]

MIN_WORK = 500_000        # estimated serial ns below which run_split runs serially
NATIVE_MIN_WORK = 50_000  # the same for the kernels on the native workers
MAX_SIDE = 64             # larger matrices: serial over the batch (OpenBLAS threads)
CHUNKS_PER_THREAD = 4     # chunks of a split stack per thread (dynamic scheduling)
BLAS3_LOCKED = True       # level-3 BLAS calls do not run concurrently (see the docstring)
_OK = -1                  # the kernels' "no failure" code (lapack.pyx OK)


class ThreadCountError(TenferroError, ValueError):
    """A thread count that is not a positive integer."""


def _check(n: Any, where: str) -> int:
    """``n`` as an int >= 1 (ints and NumPy integers; not bools, floats or strings)."""
    try:
        if isinstance(n, bool):
            raise TypeError
        count = operator.index(n)
    except TypeError:
        raise ThreadCountError(f"{where}: the number of threads must be a positive "
                               f"integer, got {n!r}") from None
    if count < 1:
        raise ThreadCountError(f"{where}: the number of threads must be >= 1 (1 = serial), "
                               f"got {count}")
    return int(count)


def _default() -> int:
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n >= 1:
            return n
    return os.cpu_count() or 1


_num_threads = _default()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_pid = 0
_lock = threading.Lock()


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (n >= 1; 1 = serial) for batched linear algebra on stacks of
    small matrices. Raises ThreadCountError (a ValueError) for 0, negative or non-integer
    ``n``. Results do not depend on ``n`` (bit-identical)."""
    global _num_threads
    _num_threads = _check(n, "set_num_threads")


def get_num_threads() -> int:
    """The number of threads of the batched linear-algebra kernels (see set_num_threads)."""
    return _num_threads


@contextlib.contextmanager
def num_threads(n: int) -> Iterator[int]:
    """``with tenferro.num_threads(n):`` run the block with ``n`` kernel threads."""
    global _num_threads
    n = _check(n, "num_threads")
    old = _num_threads
    _num_threads = n
    try:
        yield n
    finally:
        _num_threads = old


def _executor(workers: int) -> ThreadPoolExecutor:
    """A pool with at least ``workers`` threads (kept for the process). A forked child
    does not inherit the parent's threads: it makes a pool of its own (a pool object
    copied by fork would wait forever for threads that do not exist)."""
    global _pool, _pool_size, _pool_pid
    with _lock:
        if _pool is None or _pool_size < workers or _pool_pid != os.getpid():
            # a smaller pool is dropped, not shut down: another thread may be submitting
            # to it right now; its idle threads exit when it is garbage collected
            _pool_pid = os.getpid()
            _pool = ThreadPoolExecutor(max_workers=workers,
                                       thread_name_prefix="tenferro-linalg")
            _pool_size = workers
        return _pool


def _after_fork_in_child() -> None:
    global _pool, _pool_size, _lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _threads_for(nb: int, side: int, work: int, blas3: bool = False) -> int:
    """How many threads a stack of ``nb`` matrices (largest side ``side``, estimated
    serial time ``work`` in ns; ``blas3``: made of level-3 BLAS calls) is split over by
    a kernel that runs on the native workers (tenferro/_kernels/_workers.pyx)."""
    t = _num_threads
    if (t <= 1 or nb < 2 or side > MAX_SIDE or work < NATIVE_MIN_WORK
            or (blas3 and BLAS3_LOCKED)):
        return 1
    return t if t < nb else nb


def _pool_threads_for(nb: int, side: int, work: int, blas3: bool) -> int:
    """_threads_for for a kernel split by run_split (Python pool threads)."""
    t = _num_threads
    if t <= 1 or nb < 2 or side > MAX_SIDE or work < MIN_WORK or (blas3 and BLAS3_LOCKED):
        return 1
    return t if t < nb else nb


def run_split(part: Callable[..., tuple[int, int]], nb: int, side: int, work: int,
              arrays: Sequence[Any], extra: Sequence[Any] = (),
              blas3: bool = False) -> tuple[int, int]:
    """Run ``part(*chunk_arrays, *extra) -> (bad, info)`` over contiguous chunks of the
    batch axis (axis 0 of each array in ``arrays``; None entries are passed as None) and
    combine the results as the serial loop would: ``(OK, 0)``, or the first failure in
    batch order, its batch position shifted to the whole stack.

    The stack is cut into ``CHUNKS_PER_THREAD * T`` chunks that the calling thread and
    T - 1 pool threads take in turn from a shared counter (dynamic scheduling): on a
    machine where another process keeps a core busy, a pool thread that starts late
    finds fewer chunks left (its task is cancelled if it has not started when the
    calling thread runs out), so a split stack is never much slower than the serial
    loop. Which thread runs a chunk does not change its bits."""
    t = _pool_threads_for(nb, side, work, blas3)
    if t == 1:
        return part(*arrays, *extra)
    nchunks = min(nb, CHUNKS_PER_THREAD * t)
    bounds = [nb * i // nchunks for i in range(nchunks + 1)]
    results: list[tuple[int, int] | None] = [None] * nchunks
    counter = itertools.count()          # next() is atomic under the GIL
    failed = [nchunks]                   # the first failing chunk seen so far

    def drain() -> None:
        while True:
            i = next(counter)
            if i >= failed[0]:           # nb: chunks after a failure need not run
                return
            b0, b1 = bounds[i], bounds[i + 1]
            r = part(*[None if x is None else x[b0:b1] for x in arrays], *extra)
            results[i] = r
            if r[0] != _OK and i < failed[0]:
                failed[0] = i

    pool = _executor(t - 1)
    futures = [pool.submit(drain) for _ in range(t - 1)]
    try:
        drain()
    finally:
        for f in futures:
            if not f.cancel():
                f.result()
    for i in range(nchunks):
        r = results[i]
        if r is None:                    # only after a failing chunk (see drain)
            break
        bad, info = r
        if bad != _OK:
            return (bad + bounds[i] if bad >= 0 else bad), info
    return _OK, 0
