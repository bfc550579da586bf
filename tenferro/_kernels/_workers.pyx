# cython: language_level=3
"""Native worker threads that run the GIL-free batch loops of the kernels.

Why not a ``concurrent.futures`` pool: handing a chunk to a Python thread and back
costs about as much per split call (a sleeping thread's wake-up, and every chunk's
Python prologue waiting for the GIL) as the whole forward + backward of a stack of
small matrices, so the split stacks gained little (measured with
scripts/bench_threads.py; the figures are in docs/guide/kernels.md, "Kernel
constants"). Here the workers are POSIX threads that never touch Python: after a job
they spin for ``spin_us`` (200 µs) before sleeping on a condition variable, so the calls
of one forward + backward find them awake, and a chunk is a plain C function call (a
split call costs little more than the serial loop). Spinning threads (the idle workers, and
the caller waiting for a worker's last chunk) call sched_yield: when the OS has put two
of the threads on one core, the one with work runs instead of waiting for the spinner's
time slice to end (OpenBLAS's own thread server spins the same way). Only as many workers spin as there are
cores besides the caller's; the others (a thread count above the core count) sleep at
once, so that they never take the core of the thread that runs Python.

Protocol (one job at a time; a caller that finds the pool busy, e.g. another Python
thread's split, runs its stack serially on its own thread, with the same bits):

- the caller fills the job (function, context, chunk bounds), opens it, bumps the
  generation counter ``_gen`` and wakes sleeping workers;
- a worker that sees a new generation enters (``_users`` += 1) and, if the job is
  still open and has room (``_users <= _max_users``), takes chunks from the shared
  counter ``_next`` until none are left; then it leaves (``_users`` -= 1);
- the caller takes chunks too; when none are left it closes the job and waits until no
  worker is inside. Closing and entering are sequentially consistent atomics (a worker
  that entered after the close sees it and leaves), so the caller never returns while a
  worker still reads the job, and a worker that wakes late finds fewer chunks or none:
  a split stack is never much slower than the serial loop.

Chunks are ``CHUNKS_PER_THREAD`` per thread, in batch order; a chunk after one that
failed is not started, and the first failing chunk's result is the serial loop's (every
chunk before it ran to its end). Which thread runs a chunk does not change its bits.

A forked child starts with no workers (fork copies only the calling thread); the pool's
locks are re-initialised in the child (pthread_atfork). The workers block every signal,
so signals (Ctrl-C) reach Python's main thread as before.

The module also keeps the kernels' large work buffers between calls (``spare_take`` /
``spare_keep``, at the end of this file): a buffer malloc'ed afresh on every call
page-faults on every call.
"""
import os

from libc.stdlib cimport free, malloc

from tenferro._kernels._blas cimport blas_int

cdef extern from *:
    """
    #include <pthread.h>
    #include <sched.h>
    #include <signal.h>
    #include <time.h>
    #if defined(__x86_64__) || defined(__i386__)
    #define TF_PAUSE() __builtin_ia32_pause()
    #elif defined(__aarch64__)
    #define TF_PAUSE() __asm__ __volatile__("yield")
    #else
    #define TF_PAUSE() ((void)0)
    #endif
    /* GCC/Clang atomics, sequentially consistent (the protocol above relies on it) */
    #define TF_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
    #define TF_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
    #define TF_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
    #define TF_CAS(p, e, v) __atomic_compare_exchange_n((p), (e), (v), 0, \
                                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
    static double tf_now_ns(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
    }
    static int tf_start_detached(void *(*fn)(void *), void *arg) {
        pthread_t th;
        pthread_attr_t attr;
        sigset_t all, old;
        int rc;
        if (pthread_attr_init(&attr) != 0) return -1;
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);   /* inherited by the new thread */
        rc = pthread_create(&th, &attr, fn, arg);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        return rc;
    }
    """
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    void TF_PAUSE() nogil
    int sched_yield() nogil
    long TF_LOAD(long* p) nogil
    void TF_STORE(long* p, long v) nogil
    long TF_ADD(long* p, long v) nogil
    bint TF_CAS(long* p, long* expected, long v) nogil
    double tf_now_ns() nogil
    int tf_start_detached(void* (*fn)(void*) noexcept nogil, void* arg) nogil
    int pthread_mutex_init(pthread_mutex_t* m, void* attr) nogil
    int pthread_mutex_lock(pthread_mutex_t* m) nogil
    int pthread_mutex_trylock(pthread_mutex_t* m) nogil
    int pthread_mutex_unlock(pthread_mutex_t* m) nogil
    int pthread_cond_init(pthread_cond_t* c, void* attr) nogil
    int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) nogil
    int pthread_cond_signal(pthread_cond_t* c) nogil
    int pthread_atfork(void (*prepare)() noexcept nogil, void (*parent)() noexcept nogil,
                       void (*child)() noexcept nogil) nogil

cdef enum:
    OK = -1                 # the kernels' "no failure" code (lapack_base.pxd's OK)
    MAX_WORKERS = 63        # worker threads at most (a larger thread count is capped)
    CHUNKS_PER_THREAD = 8   # chunks of a split stack per thread (dynamic scheduling)
    MAX_CHUNKS = CHUNKS_PER_THREAD * (MAX_WORKERS + 1)

cdef double _spin_ns = 200e3          # how long an idle worker spins before sleeping

cdef pthread_mutex_t _job_lock        # held by the caller of a split job
cdef pthread_mutex_t _sleep_lock      # guards the sleep / wake of idle workers
cdef pthread_cond_t _wake
cdef long _gen = 0                    # bumped for each job (atomic)
cdef long _open = 0                   # 1 while the current job takes workers (atomic)
cdef long _users = 0                  # workers inside the current job (atomic)
cdef long _max_users = 0              # workers the current job takes
cdef long _sleepers = 0               # workers waiting on _wake (atomic)
cdef long _nworkers = 0               # worker threads started (under _job_lock)
cdef long _splits = 0                 # jobs run on more than one thread (tests)
# idle workers that spin: one fewer than the cores this process may run on
cdef long _spinners = max(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                          else (os.cpu_count() or 1), 2) - 1

# the current job
cdef chunk_fn _fn = NULL
cdef void* _ctx = NULL
cdef Py_ssize_t _nb = 0
cdef long _nchunks = 0
cdef long _next = 0                   # next chunk to take (atomic)
cdef long _failed = 0                 # smallest failing chunk so far (atomic)
cdef Py_ssize_t _bad[MAX_CHUNKS]
cdef blas_int _info[MAX_CHUNKS]


cdef void _drain(bint on_caller) noexcept nogil:
    """Take chunks of the current job until none are left."""
    cdef long i, seen
    cdef Py_ssize_t b0, b1, bad
    cdef blas_int info
    while True:
        i = TF_ADD(&_next, 1) - 1
        if i >= _nchunks or i >= TF_LOAD(&_failed):   # nothing after a failure runs
            return
        b0 = _nb * i // _nchunks
        b1 = _nb * (i + 1) // _nchunks
        info = 0
        bad = _fn(_ctx, b0, b1, on_caller, &info)
        _bad[i] = bad
        _info[i] = info
        if bad != OK:
            seen = TF_LOAD(&_failed)
            while i < seen and not TF_CAS(&_failed, &seen, i):
                pass


cdef long _next_job(long seen, bint spin) noexcept nogil:
    """Wait until the generation moves past ``seen``: spin (if ``spin``), then sleep."""
    cdef double t0 = tf_now_ns()
    cdef long k = 0
    while TF_LOAD(&_gen) == seen:
        TF_PAUSE()
        k += 1
        if (k & 15) == 0:
            sched_yield()    # a thread waiting for this core (the caller?) runs first
        if not spin or ((k & 255) == 0 and tf_now_ns() - t0 > _spin_ns):
            pthread_mutex_lock(&_sleep_lock)
            TF_ADD(&_sleepers, 1)
            while TF_LOAD(&_gen) == seen:
                pthread_cond_wait(&_wake, &_sleep_lock)
            TF_ADD(&_sleepers, -1)
            pthread_mutex_unlock(&_sleep_lock)
    return TF_LOAD(&_gen)


cdef void* _worker_main(void* arg) noexcept nogil:
    # only the first _spinners workers spin when idle: with more threads than cores,
    # spinning workers would take the core of the thread that is to publish the job
    cdef bint spin = <long>arg < _spinners
    cdef long seen = TF_LOAD(&_gen)     # a stale value only means one more loop
    while True:
        seen = _next_job(seen, spin)
        if TF_ADD(&_users, 1) <= TF_LOAD(&_max_users) and TF_LOAD(&_open):
            _drain(False)
        TF_ADD(&_users, -1)
    return NULL


cdef void _reset_in_child() noexcept nogil:
    """After fork, in the child: no workers, fresh locks, no job."""
    global _nworkers, _users, _sleepers, _open
    pthread_mutex_init(&_job_lock, NULL)
    pthread_mutex_init(&_sleep_lock, NULL)
    pthread_cond_init(&_wake, NULL)
    _nworkers = 0
    _users = 0
    _sleepers = 0
    _open = 0


pthread_mutex_init(&_job_lock, NULL)
pthread_mutex_init(&_sleep_lock, NULL)
pthread_cond_init(&_wake, NULL)
pthread_atfork(NULL, NULL, _reset_in_child)


cdef Py_ssize_t run_chunks(chunk_fn fn, void* ctx, Py_ssize_t nb, int nthreads,
                           blas_int* info) noexcept nogil:
    """fn over the batch [0, nb) on nthreads threads (see the module docstring); the
    serial call fn(ctx, 0, nb, 1, info) when nthreads <= 1, nb < 2, or the pool is busy
    with another caller's job. Call it without the GIL."""
    global _fn, _ctx, _nb, _nchunks, _next, _failed, _max_users, _nworkers, _splits
    cdef long helpers = (nthreads if nthreads < nb else nb) - 1
    cdef long i
    cdef Py_ssize_t result = OK
    if helpers < 1 or pthread_mutex_trylock(&_job_lock) != 0:
        return fn(ctx, 0, nb, True, info)
    if helpers > MAX_WORKERS:
        helpers = MAX_WORKERS
    while _nworkers < helpers:
        if tf_start_detached(_worker_main, <void*>_nworkers) != 0:
            break                         # no more threads: run with those there are
        _nworkers += 1
    if helpers > _nworkers:
        helpers = _nworkers
    if helpers < 1:
        pthread_mutex_unlock(&_job_lock)
        return fn(ctx, 0, nb, True, info)
    _fn = fn
    _ctx = ctx
    _nb = nb
    _nchunks = CHUNKS_PER_THREAD * (helpers + 1)
    if _nchunks > nb:
        _nchunks = nb
    TF_STORE(&_next, 0)
    TF_STORE(&_failed, _nchunks)
    TF_STORE(&_max_users, helpers)
    TF_STORE(&_open, 1)
    TF_ADD(&_gen, 1)
    if TF_LOAD(&_sleepers) > 0:           # wake as many as the job takes, not all
        pthread_mutex_lock(&_sleep_lock)
        for i in range(helpers):
            pthread_cond_signal(&_wake)
        pthread_mutex_unlock(&_sleep_lock)
    _drain(True)
    TF_STORE(&_open, 0)
    while TF_LOAD(&_users) != 0:          # a worker may still run its last chunk:
        sched_yield()                     # let it have this core if it shares it
    i = TF_LOAD(&_failed)
    if i < _nchunks:
        result = _bad[i]
        info[0] = _info[i]
    _splits += 1
    pthread_mutex_unlock(&_job_lock)
    return result


# --- Python-visible: settings and what the tests look at ----------------------------

def set_spin_us(double us):
    """How long (µs) an idle worker spins before it sleeps; returns the previous value
    (benchmarks and tests)."""
    global _spin_ns
    old = _spin_ns / 1e3
    _spin_ns = max(us, 0.0) * 1e3
    return old


def split_count():
    """Jobs run on more than one thread since the process started (or forked)."""
    return _splits


def worker_count():
    """Worker threads started so far in this process."""
    return _nworkers


cdef struct _Probe:
    long* runs          # runs[b] += 1 for each batch position run
    long* by_caller     # by_caller[b] = 1 when the calling thread ran it
    long* fail          # fail[b] != 0: position b fails with info fail[b]
    long spin           # busy iterations per position (so that workers get chunks)


cdef Py_ssize_t _probe_chunk(void* ctx, Py_ssize_t b0, Py_ssize_t b1, bint on_caller,
                             blas_int* info) noexcept nogil:
    cdef _Probe* p = <_Probe*>ctx
    cdef Py_ssize_t b
    cdef long k
    cdef volatile long sink = 0
    for b in range(b0, b1):
        for k in range(p.spin):
            sink += k
        TF_ADD(&p.runs[b], 1)
        p.by_caller[b] = on_caller
        if p.fail[b] != 0:
            info[0] = <blas_int>p.fail[b]
            return b
    return OK


def _probe(long[::1] runs, long[::1] by_caller, long[::1] fail, int nthreads,
           long spin=0):
    """run_chunks of a test chunk function over len(runs) positions: (bad, info)."""
    cdef _Probe p
    cdef blas_int info = 0
    cdef Py_ssize_t bad
    cdef Py_ssize_t nb = runs.shape[0]
    if by_caller.shape[0] != nb or fail.shape[0] != nb or nb == 0:
        raise ValueError("_probe: three arrays of one non-zero length")
    p.runs = &runs[0]
    p.by_caller = &by_caller[0]
    p.fail = &fail[0]
    p.spin = spin
    with nogil:
        bad = run_chunks(_probe_chunk, &p, nb, nthreads, &info)
    return bad, info


# ---------------------------------------------------------------------------------------
# Large buffers kept between kernel calls
# ---------------------------------------------------------------------------------------
# A large buffer (SPARE_MIN...SPARE_MAX bytes) goes back to one of SPARE_SLOTS slots
# when its call ends, and the next call that needs at most its size takes it. A fresh
# large malloc is memory the kernel maps page by page on first touch, and glibc returns
# the freed heap top to the system, so a call that allocates the same buffers every
# time page-faults every time (docs/guide/kernels.md, "Kernel constants"). At most
# SPARE_SLOTS * SPARE_MAX bytes stay held between calls. The slots are swapped
# atomically: kernels run on several native threads.
cdef extern from *:
    """
    static inline void* tf_xchg_ptr(void** p, void* v) {
        return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
    }
    static inline int tf_cas_ptr(void** p, void* expected, void* v) {
        return __atomic_compare_exchange_n(p, &expected, v, 0, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE);
    }
    """
    void* tf_xchg_ptr(void** p, void* v) noexcept nogil
    bint tf_cas_ptr(void** p, void* expected, void* v) noexcept nogil

cdef enum:
    SPARE_SLOTS = 4
    SPARE_MAX = 4 << 20
    SPARE_HEADER = 64           # bytes before a block's buffer: its capacity

cdef void* _spare[SPARE_SLOTS]   # blocks (header first) or NULL


cdef void* spare_take(size_t nbytes) noexcept nogil:
    """A buffer of at least nbytes from a spare block, or a new block; NULL when out of
    memory. Give it back with spare_keep (never free())."""
    cdef int i
    cdef void* blk
    for i in range(SPARE_SLOTS):
        blk = tf_xchg_ptr(&_spare[i], NULL)
        if blk == NULL:
            continue
        if (<size_t*>blk)[0] >= nbytes:
            return <char*>blk + SPARE_HEADER
        if not tf_cas_ptr(&_spare[i], NULL, blk):    # too small: back, or freed
            free(blk)
    blk = malloc(nbytes + SPARE_HEADER)
    if blk == NULL:
        return NULL
    (<size_t*>blk)[0] = nbytes
    return <char*>blk + SPARE_HEADER


cdef void spare_keep(void* buf) noexcept nogil:
    """Return a buffer of spare_take to a free slot (freed when none is free or it is
    larger than SPARE_MAX)."""
    cdef void* blk = <char*>buf - SPARE_HEADER
    cdef int i
    if (<size_t*>blk)[0] <= SPARE_MAX:
        for i in range(SPARE_SLOTS):
            if tf_cas_ptr(&_spare[i], NULL, blk):
                return
    free(blk)


def _drop_spare_buffers():
    """Free the spare blocks (tests)."""
    cdef int i
    cdef void* blk
    for i in range(SPARE_SLOTS):
        blk = tf_xchg_ptr(&_spare[i], NULL)
        if blk != NULL:
            free(blk)
