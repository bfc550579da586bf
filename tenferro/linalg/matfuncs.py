"""tf.linalg.matfuncs (in progress)."""
__all__ = []
