"""Array API sets functions (work in progress)."""

__all__ = []
