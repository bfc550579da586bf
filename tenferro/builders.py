"""The builder spelling of the Rust API: ``tf.einsum_ad(...).run()``, ``tf.svd_ad(a).run()``.

One generic mechanism: :func:`builder` turns a public function into ``<name>_ad``, whose
result holds the arguments and computes exactly what the function returns on ``run()``.
"""
from __future__ import annotations

from typing import Any, Callable

import functools
import inspect

__all__ = ["Builder", "builder"]


class Builder:
    """A deferred call: ``run()`` returns ``fn(*args, **kwargs)``.

    Made by the ``*_ad`` functions (``tf.svd_ad(a)``), the spelling of the Rust API; the
    call happens (and is recorded for autograd) only when :meth:`run` is called.

    Parameters
    ----------
    fn : callable
        The function to call.
    args : tuple
        Its positional arguments.
    kwargs : dict
        Its keyword arguments.

    Attributes
    ----------
    fn : callable
        The function ``run()`` calls.
    args : tuple
        The stored positional arguments.
    kwargs : dict
        The stored keyword arguments.

    Examples
    --------
    >>> b = tf.einsum_ad("ij,j->i", tf.eye(2), tf.tensor([1.0, 2.0]))
    >>> b
    <einsum_ad builder>
    >>> b.run()
    tensor([1., 2.])
    """
    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def with_options(self, **kwargs: Any) -> Builder:
        """A new builder with extra keyword arguments (e.g. ``full_matrices=True``).

        Parameters
        ----------
        **kwargs
            Keyword arguments added to (and overriding) the stored ones.

        Returns
        -------
        Builder
            A new builder; this one is unchanged.
        """
        return Builder(self.fn, self.args, {**self.kwargs, **kwargs})

    def run(self) -> Any:
        """Call the function: exactly what ``fn(*args, **kwargs)`` returns.

        Returns
        -------
        object
            ``fn(*args, **kwargs)``.
        """
        return self.fn(*self.args, **self.kwargs)

    def __repr__(self) -> str:
        return f"<{self.fn.__name__}_ad builder>"


def builder(fn: Callable[..., Any]) -> Callable[..., Builder]:
    """``fn`` -> ``fn_ad``: a function returning a :class:`Builder` of ``fn``.

    Parameters
    ----------
    fn : callable
        A public function of tenferro.

    Returns
    -------
    callable
        ``fn_ad(*args, **kwargs)``, with ``fn``'s signature, returning
        ``Builder(fn, args, kwargs)``; its docstring (numpydoc sections) is generated from
        ``fn``'s name and signature by one template.
    """
    @functools.wraps(fn)
    def make(*args: Any, **kwargs: Any) -> Builder:
        return Builder(fn, args, kwargs)
    make.__name__ = make.__qualname__ = fn.__name__ + "_ad"
    make.__doc__ = _builder_doc(fn)
    return make


_BUILDER_DOC = """Builder spelling of ``{name}``: ``{name}_ad(...).run()`` is ``{name}(...)``.

Parameters
----------
{params}
    The arguments of :func:`{public}.{name}`, stored unevaluated (nothing is computed
    or recorded until ``run()``).

Returns
-------
Builder
    Its ``run()`` returns exactly what ``{name}(...)`` returns;
    ``with_options(**kwargs)`` adds keyword arguments.

Notes
-----
Derivative: that of :func:`{public}.{name}` (the builder only defers the call).
"""


def _builder_doc(fn: Callable[..., Any]) -> str:
    """The numpydoc docstring of ``fn``'s builder, from its name and signature."""
    # the public module of fn: tf.linalg.* for the linalg families, top level otherwise
    public = "tenferro.linalg" if fn.__module__.startswith("tenferro.linalg") else "tenferro"
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.name not in ("self", "cls")]
    except (TypeError, ValueError):
        params = []
    names = ", ".join(("*" if p.kind is p.VAR_POSITIONAL else
                       "**" if p.kind is p.VAR_KEYWORD else "") + p.name for p in params)
    return _BUILDER_DOC.format(name=fn.__name__, public=public,
                               params=names or "*args, **kwargs")
