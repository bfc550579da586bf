"""tenferro/_ops/_docs.py: ``shared`` fills a handwritten docstring's bare parameter and
Raises names from a module's glossary and leaves the rest as written."""
import inspect
import sys
from pathlib import Path

import pytest

from tenferro._ops import _docs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))
import tenferro_docs  # noqa: E402

_PARAMS = {"x": ("array_like", "The input."),
           "axis": ("int, optional", "The axis. Default -1."),
           "keepdims": ("bool, optional", "Keep the axis with length 1. Default False.")}
_RAISES = {"ShapeError": "If the axis is out of range."}


_DOC = """Summary line.

    More prose, kept.

    Parameters
    ----------
    x, axis
    n : int, optional
        Specific to this function. Default 1.
    keepdims

    Returns
    -------
    Tensor
        The result.

    Raises
    ------
    ShapeError
    DTypeError
        For a bad dtype (written in place).

    Examples
    --------
    >>> 1 + 1
    2
    """


def _f(x, axis=-1, keepdims=False, n=1):
    pass


def test_shared_fills_bare_names_and_keeps_the_rest():
    _f.__doc__ = _DOC
    f = _docs.shared(_PARAMS, _RAISES)(_f)
    # the bare lines are replaced by the glossary's entries; every other line is as written
    filled = {"x, axis": "x : array_like\n    The input.\naxis : int, optional\n"
                         "    The axis. Default -1.",
              "keepdims": "keepdims : bool, optional\n    Keep the axis with length 1. Default "
                          "False.",
              "ShapeError": "ShapeError\n    If the axis is out of range."}
    want = "\n".join(filled.get(ln, ln) for ln in inspect.cleandoc(_DOC).split("\n"))
    assert inspect.getdoc(f) == want
    assert "    Specific to this function. Default 1.\nkeepdims : bool" in want
    assert "DTypeError\n    For a bad dtype (written in place).\n" in want


def test_shared_rejects_a_name_missing_from_the_glossary():
    def g(y):
        """Summary.

        Parameters
        ----------
        y
        """
    with pytest.raises(KeyError, match="'y'"):
        _docs.shared(_PARAMS)(g)

    def h():
        """Summary.

        Raises
        ------
        ShapeError
        """
    with pytest.raises(KeyError, match="ShapeError"):
        _docs.shared(_PARAMS)(h)   # no Raises glossary given


def test_shared_leaves_a_missing_docstring_alone():
    def g():
        pass
    assert _docs.shared(_PARAMS)(g).__doc__ is None   # (python -OO)


def _bare_entries(doc):
    """Entries of Parameters / Other Parameters / Raises without a description."""
    lines = doc.split("\n")
    section, bare = "", []
    for i, ln in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt.strip() and set(nxt.strip()) == {"-"} and len(nxt.strip()) == len(ln.strip()):
            section = ln.strip()
        elif (section in ("Parameters", "Other Parameters", "Raises") and ln.strip()
              and not ln.startswith(" ") and set(ln.strip()) != {"-"}
              and not nxt.startswith(" ")):
            bare.append(ln)
    return bare


def test_no_public_docstring_keeps_a_bare_entry():
    # a bare name left in a rendered docstring means a glossary decorator is missing
    found = {f"{mod}.{name}": _bare_entries(inspect.getdoc(obj) or "")
             for mod, entries in tenferro_docs.public_api().items() for name, obj in entries}
    assert {k: v for k, v in found.items() if v} == {}
    assert _bare_entries(inspect.cleandoc(_DOC)) == [
        "x, axis", "keepdims", "ShapeError"]   # (the check sees them)


def test_import_and_einsum_work_without_docstrings():
    # python -OO strips docstrings (None); code that fills or formats them must not fail
    import subprocess
    import sys
    code = ("import numpy as np, tenferro as tf\n"
            "from tenferro import distributed, special, stats, signal, ndimage, integrate, fft\n"
            "assert tf.einsum.__doc__ is None\n"
            "print(tf.einsum('ij,jk->ik', np.eye(2), np.eye(2)).numpy().sum())\n")
    out = subprocess.run([sys.executable, "-OO", "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2.0"
