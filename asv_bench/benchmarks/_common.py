"""What the benchmark files share: one thread for BLAS/OpenMP, random inputs, the usual
asv parameters, and the timing helpers of the ``python asv_bench/benchmarks/bench_x.py``
table printers (:func:`cpu_timer`, :func:`setup_bench`, :func:`medians_us`,
:func:`print_forward_backward_table`).

Importing this module sets the thread variables, so a benchmark file imports it BEFORE
NumPy (in asv's benchmark process NumPy usually is not imported yet; a stray thread pool
would add noise, and for small matrices cost more than it gains). If NumPy was imported
first anyway, :func:`limit_threads` (called after the file's imports) limits the pools
already loaded, when threadpoolctl is installed.

A benchmark file imports it as ``from ._common import ...`` (or ``from . import _common``)
when asv imports the ``benchmarks`` package, and as a plain module next to it when the
file is run or loaded by path (``python asv_bench/benchmarks/bench_x.py``,
scripts/bench_engine.py).
"""
import os
import sys

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


# ---- the usual parameters ----------------------------------------------------------------

SIZES = [4, 16, 64, 256]     # per-call overhead (4, 16) to LAPACK/BLAS-bound (64, 256)
DTYPES = ["float64", "complex128"]


class SizeDtype:
    """Base of the benchmark classes timed at every n of :data:`SIZES` and dtype of
    :data:`DTYPES` (asv passes ``n, dtype`` to setup and to each ``time_*`` method). It
    has no ``time_*`` method of its own, so asv finds no benchmark in it."""
    params = [SIZES, DTYPES]
    param_names = ["n", "dtype"]


# ---- the table printers of ``python bench_x.py`` -------------------------------------------

# the methods of a forward + backward benchmark class: the primal floor (SciPy/NumPy),
# tenferro's forward alone, and forward + tf.grad
FORWARD_BACKWARD = ("time_scipy_primal", "time_tf_forward", "time_tf_forward_backward")


def cpu_timer(argv=None):
    """The clock a table printer times with: :func:`time.process_time` when ``--cpu`` is
    among ``argv`` (default: the command line), steadier on a machine shared with other
    jobs; else None (:func:`medians`' default, the wall clock)."""
    import time
    return time.process_time if "--cpu" in (sys.argv[1:] if argv is None else argv) else None


def setup_bench(cls, *params):
    """An instance of the benchmark class ``cls`` after ``setup(*params)``, as asv runs it."""
    bench = cls()
    bench.setup(*params)
    return bench


def medians_us(fns, params, repeat=15, timer=None):
    """Median microseconds per call of each ``fn(*params)`` (asv's signature of a ``time_*``
    method), timed alternately by :func:`medians`."""
    return [t * 1e6 for t in medians([lambda f=f: f(*params) for f in fns], repeat, timer)]


def print_forward_backward_table(classes, params=None, extra=(), timer=None, floor="scipy"):
    """Print, for each class of ``classes``, dtype and n (``params``: ``[sizes, dtypes]``,
    default :class:`SizeDtype`'s), the median µs of the :data:`FORWARD_BACKWARD` methods
    and forward + backward ÷ primal. All of one row's functions are timed alternately.

    ``extra``: more columns, each ``(header, method names, format)``: ``format`` maps the
    µs of those methods to the column's text; a class without them leaves it blank.
    ``floor`` names the primal column (``"<floor> us"``, ``"f+b/<floor>"``).
    """
    sizes, dtypes = SizeDtype.params if params is None else params
    width = max([5] + [len(cls.__name__) for cls in classes])
    print(f"{'bench':{width}} {'n':>4} {'dtype':10} {floor + ' us':>9} {'tf fwd us':>9} "
          f"{'tf f+b us':>9} {'f+b/' + floor:>9}"
          + "".join(f" {header:>10}" for header, _, _ in extra))
    for cls in classes:
        # the extra columns' methods; None where the class has not got them
        cols = [names if all(hasattr(cls, name) for name in names) else None
                for _, names, _ in extra]
        names = list(FORWARD_BACKWARD) + [name for c in cols if c for name in c]
        for dtype in dtypes:
            for n in sizes:
                b = setup_bench(cls, n, dtype)
                ts = medians_us([getattr(b, name) for name in names], (n, dtype), timer=timer)
                row = (f"{cls.__name__:{width}} {n:4d} {dtype:10} {ts[0]:9.1f} {ts[1]:9.1f} "
                       f"{ts[2]:9.1f} {ts[2] / ts[0]:9.2f}")
                k = len(FORWARD_BACKWARD)
                for c, (_, _, fmt) in zip(cols, extra):
                    row += f" {fmt(ts[k:k + len(c)]) if c else '':>10}"
                    k += len(c) if c else 0
                print(row, flush=True)
