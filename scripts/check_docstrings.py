"""Check the numpydoc sections and run the ``>>>`` examples of tenferro's public names.

    python scripts/check_docstrings.py                 # sections + examples; exit 1 on a problem
    python scripts/check_docstrings.py --report        # counts per module, missing names; exit 0
    python scripts/check_docstrings.py --module tenferro.linalg [--module ...]

The public names are those of the API reference (docs/_ext/tenferro_docs.py:
``public_api``). What a docstring needs:

* a function: a ``Parameters`` section when its signature takes any parameter, and a
  ``Returns`` (or ``Yields``) section;
* a class that is not an exception: ``Parameters`` or ``Attributes``;
* a callable object (a distribution such as ``tf.stats.norm``): ``Parameters``,
  ``Methods`` or ``Attributes``;
* an exception or a constant: nothing here (check_docs.py asks for the docstring itself).

Examples are run as doctests with ``np`` (NumPy) and ``tf`` (tenferro) in their globals,
with ELLIPSIS and NORMALIZE_WHITESPACE, and the printed NumPy options of a fresh process.
A failing example is a problem in every mode. At least ``MIN_EXAMPLES`` names must have one.
"""
import argparse
import doctest
import inspect
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "_ext"))

MIN_EXAMPLES = 150


def _sections(doc):
    """Names of the numpydoc sections of a docstring (a title line underlined by dashes)."""
    lines = doc.splitlines()
    return {lines[i].strip() for i in range(len(lines) - 1)
            if lines[i].strip() and re.fullmatch(r"\s*-{3,}\s*", lines[i + 1])
            and len(lines[i + 1].strip()) >= len(lines[i].strip())}


def _takes_parameters(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return True
    return any(p.name not in ("self", "cls") for p in sig.parameters.values())


def missing_sections(obj):
    """The sections ``obj``'s docstring lacks (empty when it is complete)."""
    doc = inspect.getdoc(obj) or ""
    have = _sections(doc)
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return []
        return [] if have & {"Parameters", "Attributes"} else ["Parameters or Attributes"]
    if not callable(obj):
        return []
    if not inspect.isroutine(obj):      # a callable object (a distribution, a ufunc-like)
        return [] if have & {"Parameters", "Methods", "Attributes"} else [
            "Parameters or Methods"]
    missing = []
    if _takes_parameters(obj) and "Parameters" not in have:
        missing.append("Parameters")
    if not have & {"Returns", "Yields"}:
        missing.append("Returns")
    return missing


def run_examples(qualname, obj):
    """(number of examples, list of failure reports) of ``obj``'s docstring."""
    import numpy as np
    import tenferro as tf
    doc = inspect.getdoc(obj) or ""
    if ">>>" not in doc:
        return 0, []
    parser = doctest.DocTestParser()
    test = parser.get_doctest(doc, {"np": np, "tf": tf}, qualname, None, 0)
    out = []
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    runner.run(test, out=out.append)
    return len(test.examples), (["".join(out)] if runner.failures else [])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", action="store_true",
                    help="print counts and missing names; fail only on failing examples")
    ap.add_argument("--module", action="append", default=[],
                    help="only this module of the API reference (repeatable)")
    args = ap.parse_args(argv)
    from tenferro_docs import needs_docstring, public_api
    problems, failures = [], []
    with_examples = 0
    for module, entries in public_api().items():
        if args.module and module not in args.module:
            continue
        n_missing = n_examples = 0
        for name, obj in entries:
            if not needs_docstring(obj):
                continue
            qualname = f"{module}.{name}"
            missing = missing_sections(obj)
            if missing:
                n_missing += 1
                problems.append(f"{qualname}: no {' / '.join(missing)} section")
            count, fails = run_examples(qualname, obj)
            n_examples += count > 0
            failures += fails
        with_examples += n_examples
        print(f"{module}: {len(entries)} names, {n_missing} lack sections, "
              f"{n_examples} have examples")
    if args.report:
        print("\n".join(problems))
    print(f"{with_examples} names have examples (at least {MIN_EXAMPLES} wanted)")
    for f in failures:
        print(f)
    if failures:
        print(f"{len(failures)} docstring(s) with failing examples", file=sys.stderr)
    if args.report:
        return 1 if failures else 0
    if problems:
        print("\n".join(problems[:50]), file=sys.stderr)
        print(f"{len(problems)} public name(s) lack numpydoc sections", file=sys.stderr)
    if not args.module and with_examples < MIN_EXAMPLES:
        problems.append("too few examples")
        print(f"only {with_examples} names have examples", file=sys.stderr)
    return 1 if problems or failures else 0


if __name__ == "__main__":
    sys.exit(main())
