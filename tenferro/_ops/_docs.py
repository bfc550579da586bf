"""numpydoc docstrings of the generated functions (issue 31): one renderer for the families
built by factories from tables (tenferro._ops.elementwise, tenferro.special, tf.stats'
distributions), so that each section is written once.

``numpydoc(summary, params, returns, ...)`` renders the sections (napoleon's numpy style,
what scripts/check_docstrings.py asks for); ``describe(f, ...)`` puts them under the prose
``f`` already has. The ``>>>`` examples of the families are in ``_doc_examples`` (run as
doctests by scripts/check_docstrings.py).
"""
from __future__ import annotations

import inspect
import textwrap
from typing import Any, Callable, Sequence, TypeVar

from ._doc_examples import EXAMPLES

Param = tuple[str, str, str]          # (name, type, description)
F = TypeVar("F", bound=Callable[..., Any])


def _wrap(text: str, indent: str = "    ") -> list[str]:
    out: list[str] = []
    for para in text.split("\n"):
        out += textwrap.wrap(para, 88, initial_indent=indent, subsequent_indent=indent,
                             break_long_words=False, break_on_hyphens=False) or [""]
    return out


def _section(title: str, lines: list[str]) -> list[str]:
    return ["", title, "-" * len(title)] + lines


def numpydoc(summary: str, params: Sequence[Param] = (),
             returns: Sequence[tuple[str, str]] = (), raises: Sequence[tuple[str, str]] = (),
             notes: str = "", examples: str = "", methods: Sequence[tuple[str, str]] = (),
             title: str = "Parameters") -> str:
    """The docstring: ``summary`` (one or more paragraphs), then the Parameters (or
    ``title``), Returns, Raises, Notes (``methods`` listed first) and Examples sections
    that are given."""
    lines = summary.strip("\n").split("\n")
    if params:
        body: list[str] = []
        for name, typ, desc in params:
            body.append(f"{name} : {typ}" if typ else name)
            body += _wrap(desc)
        lines += _section(title, body)
    if returns:
        body = []
        for typ, desc in returns:
            body.append(typ)
            body += _wrap(desc)
        lines += _section("Returns", body)
    if raises:
        body = []
        for exc, desc in raises:
            body.append(exc)
            body += _wrap(desc)
        lines += _section("Raises", body)
    if methods or notes:
        # the methods of a callable object as a list under Notes: napoleon turns a Methods
        # section into method directives, which collide across the distributions
        body = []
        if methods:
            body += ["Methods:", ""]
            for sig, desc in methods:
                item = _wrap(f"* ``{sig}``: {desc[:1].lower()}{desc[1:]}", "")
                body += item[:1] + ["  " + ln for ln in item[1:]]
            if notes:
                body.append("")
        if notes:
            body += _wrap(notes, "")
        lines += _section("Notes", body)
    if examples:
        lines += _section("Examples", textwrap.dedent(examples).strip("\n").split("\n"))
    return "\n".join(lines) + "\n"


def example(qualname: str) -> str:
    """The ``>>>`` example of ``qualname`` (``tenferro.exp``, ``tenferro.special.erf``), or
    "" when it has none."""
    return EXAMPLES.get(qualname, "")


def describe(f: Any, params: Sequence[Param], returns: Sequence[tuple[str, str]], *,
             summary: str | None = None, raises: Sequence[tuple[str, str]] = (),
             notes: str = "", qualname: str | None = None) -> Any:
    """Set ``f.__doc__``: its prose (or ``summary``) and the sections; the example of
    ``qualname`` (default ``tenferro.<name>``) from the table. Returns ``f``."""
    prose = summary if summary is not None else (f.__doc__ or "")
    qual = qualname or f"tenferro.{f.__name__}"
    f.__doc__ = numpydoc(inspect.cleandoc(prose), params, returns, raises, notes,
                         example(qual))
    return f


def sections(glossary: dict[str, tuple[str, str]], params: Sequence[str],
             returns: Sequence[tuple[str, str]], *, raises: Sequence[tuple[str, str]] = (),
             notes: str = "", overrides: dict[str, tuple[str, str]] | None = None
             ) -> Callable[[F], F]:
    """A decorator: ``describe`` with the parameters named in ``params`` looked up in a
    module's ``glossary`` ({name: (type, description)}; ``overrides`` first), so that the
    functions of one module describe a shared argument (``axis``, ``norm``, ``mode``) in
    one place. The example is that of ``<module>.<name>``."""
    table = dict(glossary, **(overrides or {}))

    def deco(f: F) -> F:
        describe(f, [(p,) + table[p] for p in params], returns, raises=raises, notes=notes,
                 qualname=f"{f.__module__}.{f.__name__}")
        return f
    return deco
