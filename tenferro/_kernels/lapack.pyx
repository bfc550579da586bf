# cython: language_level=3
"""Placeholder: being written."""
