"""tf.linalg.svds (placeholder, written next)."""
__all__: list[str] = []
