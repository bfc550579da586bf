"""tf.linalg.triangular (in progress)."""
__all__ = []
