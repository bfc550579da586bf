"""tf.linalg.eig (in progress)."""
__all__ = []
