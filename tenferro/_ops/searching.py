"""Array API searching functions (work in progress)."""

__all__ = []
