"""tf.linalg.cholesky (in progress)."""
__all__ = []
