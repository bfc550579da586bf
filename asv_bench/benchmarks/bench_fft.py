"""tf.fft: forward and forward + backward against the NumPy primal, on one thread.

  FFT   y = fft(x) of a complex128 vector, and y = rfft(x) of a float64 vector, length n

at n = 64 (per-call overhead) and 4096 (transform-bound). tenferro's primal is scipy.fft
(the same pocketfft as numpy.fft, with less Python per call; ``time_scipy_primal``); the
floor of the ratio is ``numpy.fft``. The backward pass is one more transform of the same
size (the adjoint: ifft with the swapped norm; irfft of the weighted cotangent for rfft),
so forward + backward is expected near 2x the primal at large n.

``python asv_bench/benchmarks/bench_fft.py`` prints the medians and ratios directly
(``--cpu``: process time instead of wall time).
"""
import os
import sys

# _common sets the BLAS/OpenMP thread variables to 1 on import: keep it before NumPy
try:  # asv imports this file from the package ``benchmarks``
    from ._common import limit_threads, random_array
except ImportError:  # run or loaded by path: _common.py stands next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import limit_threads, random_array

import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402

import tenferro as tf  # noqa: E402

limit_threads()  # NumPy may have been imported before this module: limit its pools


class FFT:
    params = [[64, 4096], ["fft", "rfft"]]
    param_names = ["n", "transform"]

    def setup(self, n, transform):
        rng = np.random.default_rng(0)
        self.x = random_array((n,), "float64" if transform == "rfft" else "complex128", rng)
        self.np_fn = getattr(np.fft, transform)
        self.sp_fn = getattr(scipy.fft, transform)
        self.tf_fn = getattr(tf.fft, transform)
        self.tensor = tf.tensor(self.x)
        self.leaf = tf.tensor(self.x, requires_grad=True)
        # the cotangent of y: the seed of the real loss Re <seed, y>
        self.seed = random_array(self.np_fn(self.x).shape, "complex128", rng)

    def time_numpy_primal(self, n, transform):
        self.np_fn(self.x)

    def time_scipy_primal(self, n, transform):
        self.sp_fn(self.x)

    def time_tf_forward(self, n, transform):
        self.tf_fn(self.tensor)

    def time_tf_forward_backward(self, n, transform):
        y = self.tf_fn(self.leaf)
        tf.grad([y], [self.leaf], [self.seed])


def main():
    from _common import cpu_timer, medians_us, setup_bench
    names = ("time_numpy_primal", "time_scipy_primal", "time_tf_forward",
             "time_tf_forward_backward")
    print(f"{'transform':9} {'n':>5} {'numpy us':>9} {'scipy us':>9} {'tf fwd us':>9} "
          f"{'tf f+b us':>9} {'f+b/numpy':>9}")
    for transform in FFT.params[1]:
        for n in FFT.params[0]:
            b = setup_bench(FFT, n, transform)
            ts = medians_us([getattr(b, name) for name in names], (n, transform),
                            timer=cpu_timer())
            print(f"{transform:9} {n:5d} {ts[0]:9.1f} {ts[1]:9.1f} {ts[2]:9.1f} {ts[3]:9.1f} "
                  f"{ts[3] / ts[0]:9.2f}", flush=True)


if __name__ == "__main__":
    main()
