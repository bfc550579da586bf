"""The numpydoc entries that many linalg functions share, written once (filled into a
docstring's bare ``check_finite`` / ``a`` / ``ShapeError`` lines by ``_ops._docs.shared``).
A function whose argument or error means something else describes it in place."""

__all__ = ["PARAMS", "RAISES"]

PARAMS: dict[str, tuple[str, str]] = {
    "a": ("array_like", "Square matrices (*batch, n, n)."),
    "check_finite": ("bool, optional", "Raise LinAlgError on non-finite input. Default True."),
}
RAISES: dict[str, str] = {
    "DTypeError": "For an unsupported dtype.",
    "LinAlgError": "On non-finite input or no convergence.",
    "ShapeError": "If the matrices are not square.",
}
