"""tf.linalg.eigh (in progress)."""
__all__ = []
