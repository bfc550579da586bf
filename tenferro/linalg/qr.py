"""tf.linalg.qr (in progress)."""
__all__ = []
