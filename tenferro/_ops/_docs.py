"""numpydoc docstrings of the generated functions (issue 31): one renderer for the families
built by factories from tables (tenferro._ops.elementwise, tenferro.special, tf.stats'
distributions), so that each section is written once.

``numpydoc(summary, params, returns, ...)`` renders the sections (napoleon's numpy style,
what scripts/check_docstrings.py asks for); ``describe(f, ...)`` puts them under the prose
``f`` already has. The ``>>>`` examples of the families are in ``_doc_examples`` (run as
doctests by scripts/check_docstrings.py). ``sections(glossary, ...)`` renders a function's
sections from a module's glossary of shared arguments (fft.py); ``shared(glossary, raises)``
keeps a handwritten docstring as written and fills in only the entries it names bare
(ndimage, signal, the linalg modules, ...).
"""
from __future__ import annotations

import inspect
import re
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


_BARE = re.compile(r"\*{0,2}\w+(, \*{0,2}\w+)*")


def shared(params: dict[str, tuple[str, str]],
           raises: dict[str, str] | None = None) -> Callable[[F], F]:
    """A decorator for a handwritten numpydoc docstring: an entry of its Parameters (or
    Other Parameters) section written as the bare name (``mode``, or several names on one
    line: ``input, mode, cval``) is filled in from the module's glossary ``params``
    ({name: (type, description)}), and a bare exception name under Raises from ``raises``
    ({exception: description}); the rest of the docstring stays as written. So sibling
    functions describe a shared argument once, while each keeps its own summary, prose,
    Notes and Examples in place. A bare name missing from the glossary is an error at
    import."""
    def deco(f: F) -> F:
        if f.__doc__:          # (None under python -OO)
            f.__doc__ = _fill(inspect.cleandoc(f.__doc__), params, raises or {},
                              f.__qualname__)
        return f
    return deco


def _fill(doc: str, params: dict[str, tuple[str, str]], raises: dict[str, str],
          where: str) -> str:
    lines = doc.split("\n")
    out: list[str] = []
    section = ""
    for i, ln in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt.strip() and set(nxt.strip()) == {"-"} and len(nxt.strip()) == len(ln.strip()):
            section = ln.strip()
            out.append(ln)
            continue
        bare = (section in ("Parameters", "Other Parameters", "Raises")
                and _BARE.fullmatch(ln) is not None and not nxt.startswith(" "))
        if not bare:
            out.append(ln)
            continue
        for name in ln.split(", "):
            if section == "Raises":
                if name not in raises:
                    raise KeyError(f"{where}: no shared Raises entry for {name!r}")
                out += [name] + _wrap(raises[name])
            else:
                if name.lstrip("*") not in params:
                    raise KeyError(f"{where}: no shared description of parameter {name!r}")
                typ, desc = params[name.lstrip("*")]
                out += [f"{name} : {typ}" if typ else name] + _wrap(desc)
    return "\n".join(out)
