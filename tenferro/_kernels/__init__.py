"""Compiled kernels and their pure-Python twins (``_reference``)."""
