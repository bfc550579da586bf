"""What the benchmark files share: one thread for BLAS/OpenMP, random inputs, and the
timing helper of the ``python asv_bench/benchmarks/bench_x.py`` table printers.

Importing this module sets the thread variables, so a benchmark file imports it BEFORE
NumPy (in asv's benchmark process NumPy usually is not imported yet; a stray thread pool
would add noise, and for small matrices cost more than it gains). If NumPy was imported
first anyway, :func:`limit_threads` (called after the file's imports) limits the pools
already loaded, when threadpoolctl is installed.

A benchmark file imports it as ``from ._common import ...`` when asv imports the
``benchmarks`` package, and as a plain module next to it when the file is run or loaded
by path (``python asv_bench/benchmarks/bench_x.py``, scripts/bench_engine.py).
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"


def limit_threads():
    """Limit the thread pools already loaded to one thread (no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(1)


def random_array(shape, dtype, rng):
    """Standard-normal entries; for ``dtype == "complex128"`` an independent imaginary part."""
    a = rng.standard_normal(shape)
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal(shape)
    return a


def medians(fns, repeat=15, timer=None):
    """Median seconds per call of each function, timed alternately (in interleaved rounds,
    so that a load change on the machine hits every function alike). ``timer``: the clock
    for :class:`timeit.Timer` (default: its wall clock)."""
    import timeit

    import numpy as np
    timers = [timeit.Timer(f) if timer is None else timeit.Timer(f, timer=timer) for f in fns]
    numbers = [max(1, t.autorange()[0] // 5) for t in timers]
    samples = [[] for _ in fns]
    for _ in range(repeat):
        for t, k, s in zip(timers, numbers, samples):
            s.append(t.timeit(k) / k)
    return [float(np.median(s)) for s in samples]
