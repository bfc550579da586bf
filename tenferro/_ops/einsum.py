"""tf.einsum (filled in by the einsum work)."""
__all__ = []
