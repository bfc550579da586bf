# cython: boundscheck=False, wraparound=False
"""Matrix inverse from LU factors on gemm-rich recursive blocks (work in progress)."""
