"""Array API creation functions (work in progress)."""

__all__ = []
