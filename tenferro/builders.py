"""The builder spelling of the Rust API: ``tf.einsum_ad(...).run()``, ``tf.svd_ad(a).run()``.

One generic mechanism: :func:`builder` turns a public function into ``<name>_ad``, whose
result holds the arguments and computes exactly what the function returns on ``run()``.
"""
from __future__ import annotations

from typing import Any, Callable

import functools

__all__ = ["Builder", "builder"]


class Builder:
    """A deferred call: ``run()`` returns ``fn(*args, **kwargs)``."""
    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def with_options(self, **kwargs: Any) -> Builder:
        """A new builder with extra keyword arguments (e.g. ``full_matrices=True``)."""
        return Builder(self.fn, self.args, {**self.kwargs, **kwargs})

    def run(self) -> Any:
        """Call the function: exactly what ``fn(*args, **kwargs)`` returns."""
        return self.fn(*self.args, **self.kwargs)

    def __repr__(self) -> str:
        return f"<{self.fn.__name__}_ad builder>"


def builder(fn: Callable[..., Any]) -> Callable[..., Builder]:
    """``fn`` -> ``fn_ad``: a function returning a :class:`Builder` of ``fn``."""
    @functools.wraps(fn)
    def make(*args: Any, **kwargs: Any) -> Builder:
        return Builder(fn, args, kwargs)
    make.__name__ = make.__qualname__ = fn.__name__ + "_ad"
    make.__doc__ = f"Builder spelling of ``{fn.__name__}``: ``{fn.__name__}_ad(...).run()``."
    return make
