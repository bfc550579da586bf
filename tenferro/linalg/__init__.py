"""tf.linalg: decompositions, solvers and matrix functions (see the linalg issues)."""
__all__ = []
