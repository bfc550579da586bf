"""tf.linalg.lu (in progress)."""
__all__ = []
