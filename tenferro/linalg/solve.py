"""tf.linalg.solve (in progress)."""
__all__ = []
