"""tf.linalg.svd (in progress)."""
__all__ = []
