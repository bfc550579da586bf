"""How many threads the batched linear-algebra kernels use.

A stack of many small matrices (svd, eigh, qr, cholesky, LU, solve, the LU inverse and
their pullback kernels) is split into contiguous chunks of the batch that the calling
thread and ``T - 1`` native worker threads take in turn (tenferro/_kernels/_workers.pyx:
POSIX threads that never touch Python, spin ~200 µs after a job, then sleep; a split
call costs ~1-2 µs more than the serial loop). Each chunk runs the same GIL-free kernel
loop with its own LAPACK workspace. Every matrix goes through exactly the same LAPACK
calls as in the serial loop (same routine, same workspace size), so the results are
bit-identical for every thread count. A failing matrix is reported as in the serial
loop: the smallest failing batch index, with its LAPACK info.

Threads are used only where they pay:

- the stack is split only when its estimated serial time (``nb * m * n * min(m, n)``
  times a per-kernel cost in ns, measured on 8 x 8 stacks: svd 22, eigh 12, qr 6,
  getrf/getrs 1, potrf 0.5; ``nb * k * k`` times 3 for the svd pullback core, 1 for
  eigh's) is at least ``MIN_WORK`` ns (50 µs; measured: 100 8 x 8 potrf, ~14 µs
  of work, ran 1.2-1.8x faster on 2 threads, 30 of them, ~5 µs, slower);
- kernels whose per-matrix work is level-3 BLAS calls (potrf, getrf, getrs, the
  LU inverse, the QR and Cholesky pullbacks: trsm/trmm/gemm/hemm on tiny blocks) stay
  serial while ``BLAS3_LOCKED``: measured with scipy-openblas 0.3 on 2 cores, 1000
  8 x 8 QR pullbacks through BLAS ran 0.45x as fast on 2 threads as on one: OpenBLAS
  serializes the concurrent level-3 calls (its buffer allocation takes a lock; threads
  spin on it). LAPACK's unblocked level-2 paths (gesdd, syevd, geqrf/orgqr of small
  matrices) scale: 1.8-1.9x. For matrices with every side <= 16, potrf, getrf, getrs,
  the Cholesky and LU pullbacks (and up to 8 the QR pullback) run plain C loops instead
  (tenferro/_kernels/_small.pxd: no BLAS call, no lock) and pass ``blas3=False``:
  measured on 1000 8 x 8, 1.75-1.95x on 2 threads;
- matrices with a side larger than ``MAX_SIDE`` (64) are never split: there a single
  LAPACK call is long enough for OpenBLAS's own threads, and splitting would
  oversubscribe the cores (T chunks x OpenBLAS threads). For matrices up to 64 x 64
  OpenBLAS runs each call on one thread anyway.

The default is ``OMP_NUM_THREADS`` when set (the usual knob of threadpoolctl-aware
tools), else ``os.cpu_count()``; 1 means serial.

**Two OpenBLAS thread pools.** The pip wheels of NumPy and SciPy each bundle their own
OpenBLAS (NumPy's with 64-bit integers; SciPy's, which tenferro's LAPACK drivers call
through ``scipy.linalg.cython_lapack``), each with its own pool of threads. After a call,
OpenBLAS's idle threads spin for 2^28 cycles (~0.1 s) before they sleep, so in a program
that alternates NumPy's BLAS (matmul, einsum) and SciPy's LAPACK (svd, eigh, qr,
cholesky) — every tensor-network or Gaussian-process loop — one pool's spinning threads
take the cores from the other's. Measured on 2 idle cores (scripts/bench_blas_pools.py):
an einsum + svd loop of 200 x 200 ran 4-5x slower on 2 threads than on one, and
examples/trg_ising.py 1.9x slower. At import tenferro therefore shortens the spin of every
OpenBLAS loaded in the process to 2^20 cycles (~0.4 ms: still longer than the gaps
between the BLAS calls inside one LAPACK routine): it sets ``OPENBLAS_THREAD_TIMEOUT=20``,
has each library re-read its environment (``openblas_read_env``) and restarts its idle
pool (``blas_thread_shutdown_``; the next threaded call starts it again), then restores
the environment. The thread counts and the results are unchanged (no arithmetic moves).
Then the same loop ran at 1.0-1.4x the one-thread time at 200 x 200 and 0.8x at
600 x 600, and trg_ising as fast as on one thread. It is skipped when
``OPENBLAS_THREAD_TIMEOUT`` is already set (the user's choice: set it to 28 to keep
OpenBLAS's default), where ``/proc/self/maps`` is missing (not Linux), and for BLAS
libraries that are not OpenBLAS.
"""
from __future__ import annotations

import contextlib
import operator
import os
from collections.abc import Iterator
from typing import Any

from ._errors import TenferroError

__all__ = ["set_num_threads", "get_num_threads", "num_threads", "ThreadCountError"]

MIN_WORK = 50_000         # estimated serial ns below which a stack runs serially
MAX_SIDE = 64             # larger matrices: serial over the batch (OpenBLAS threads)
BLAS3_LOCKED = True       # level-3 BLAS calls do not run concurrently (see the docstring)


class ThreadCountError(TenferroError, ValueError):
    """A thread count that is not a positive integer.

    Raised by :func:`set_num_threads` and :func:`num_threads` (a ValueError); pass an
    int >= 1 (1 = serial).
    """


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

BLAS_SPIN = 20           # log2 of the cycles an idle OpenBLAS thread spins (OpenBLAS: 28)


def _openblas_libraries() -> list[str]:
    """Paths of the OpenBLAS shared libraries loaded in this process (Linux)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.readlines()
    except OSError:
        return []
    paths: list[str] = []
    for line in lines:
        path = line.rsplit(" ", 1)[-1].strip()
        name = os.path.basename(path).lower()
        if "openblas" in name and ".so" in name and path not in paths:
            paths.append(path)
    return paths


def _shorten_blas_spin(spin: int = BLAS_SPIN) -> list[str]:
    """Make the idle threads of every loaded OpenBLAS sleep after 2^spin cycles instead
    of 2^28 (see the module docstring); the libraries changed. Not when the user has set
    OPENBLAS_THREAD_TIMEOUT."""
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ or "GOTO_THREAD_TIMEOUT" in os.environ:
        return []
    import ctypes
    changed = []
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(spin)
    try:
        for path in _openblas_libraries():
            try:
                lib = ctypes.CDLL(path)
                read_env, shutdown = lib.openblas_read_env, lib.blas_thread_shutdown_
            except (OSError, AttributeError):
                continue                       # not an OpenBLAS with these entry points
            read_env()
            shutdown()
            changed.append(path)
    finally:
        del os.environ["OPENBLAS_THREAD_TIMEOUT"]
    BLAS_SPIN_SHORTENED[:] = changed
    return changed


# the OpenBLAS libraries whose spin tenferro shortened (set at the end of tenferro's import,
# once NumPy's and SciPy's are loaded)
BLAS_SPIN_SHORTENED: list[str] = []


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for batched linear algebra on stacks of small matrices.

    The calling thread and up to ``n - 1`` native worker threads (at most 63 are started; a
    larger ``n`` uses those). Results do not depend on ``n`` (bit-identical). The default is
    ``OMP_NUM_THREADS``, else the CPU count.

    Parameters
    ----------
    n : int
        The thread count, >= 1 (1 = serial).

    Returns
    -------
    None

    Raises
    ------
    ThreadCountError
        (a ValueError) for 0, negative or non-integer ``n``.

    Examples
    --------
    >>> old = tf.get_num_threads()
    >>> tf.set_num_threads(1)
    >>> tf.get_num_threads()
    1
    >>> tf.set_num_threads(old)
    """
    global _num_threads
    _num_threads = _check(n, "set_num_threads")


def get_num_threads() -> int:
    """The number of threads of the batched linear-algebra kernels (see :func:`set_num_threads`).

    Returns
    -------
    int
        The current thread count (>= 1).

    Examples
    --------
    >>> tf.get_num_threads() >= 1
    True
    """
    return _num_threads


@contextlib.contextmanager
def num_threads(n: int) -> Iterator[int]:
    """``with tenferro.num_threads(n):`` run the block with ``n`` kernel threads.

    The previous count is restored on exit (also on an exception).

    Parameters
    ----------
    n : int
        The thread count, >= 1.

    Yields
    ------
    int
        ``n``.

    Raises
    ------
    ThreadCountError
        For 0, negative or non-integer ``n``.

    Examples
    --------
    >>> with tf.num_threads(1) as n:
    ...     print(n, tf.get_num_threads())
    1 1
    """
    global _num_threads
    n = _check(n, "num_threads")
    old = _num_threads
    _num_threads = n
    try:
        yield n
    finally:
        _num_threads = old


def _threads_for(nb: int, side: int, work: int, blas3: bool = False) -> int:
    """How many threads a stack of ``nb`` matrices (largest side ``side``, estimated
    serial time ``work`` in ns; ``blas3``: made of level-3 BLAS calls) is split over by
    a kernel that runs on the native workers (tenferro/_kernels/_workers.pyx)."""
    t = _num_threads
    if (t <= 1 or nb < 2 or side > MAX_SIDE or work < MIN_WORK
            or (blas3 and BLAS3_LOCKED)):
        return 1
    return t if t < nb else nb

