"""tf.linalg.det (in progress)."""
__all__ = []
