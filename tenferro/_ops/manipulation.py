"""Array API manipulation functions (work in progress)."""

__all__ = []
