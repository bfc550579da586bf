"""Array API sorting functions (work in progress)."""

__all__ = []
