# cython: boundscheck=False, wraparound=False
"""Matrix exponential and its Frechet derivative (work in progress)."""
