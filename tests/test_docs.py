"""The documentation's own checks (scripts/check_docs.py) and the API reference generator
(docs/_ext/tenferro_docs.py), on small fixtures: no Sphinx build (that is check_docs.py's
job, ~minutes), so these run with the unit tests and show each check can fail."""
import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_docs = _load("check_docs_under_test", REPO / "scripts" / "check_docs.py")
check_docstrings = _load("check_docstrings_under_test", REPO / "scripts" / "check_docstrings.py")
sys.path.insert(0, str(REPO / "docs" / "_ext"))
import tenferro_docs  # noqa: E402  (needs Sphinx: in the test extra, so this never skips)

HEAD_LOCAL = ('<script>window.MathJax = {"tex": {}}</script>'
              '<script defer="defer" src="_static/mathjax/tex-chtml.js"></script>')
HEAD_CDN = '<script defer src="https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js"></script>'
MATH = '<p>the gap <span class="math notranslate nohighlight">\\(s_j^2 - s_i^2\\)</span>.</p>'


def _site(tmp_path, pages, mathjax=True):
    for name, html in pages.items():
        (tmp_path / name).write_text(f"<html><head>{html[0]}</head><body>{html[1]}</body></html>")
    if mathjax:
        (tmp_path / "_static" / "mathjax").mkdir(parents=True)
        (tmp_path / "_static" / "mathjax" / "tex-chtml.js").write_text("/* MathJax */")
    return tmp_path


def test_math_offline_accepts_local_mathjax(tmp_path):
    site = _site(tmp_path, {"a.html": (HEAD_LOCAL, MATH),
                            "b.html": ("", "<p>costs $5 or $6</p><pre>$ pip install .</pre>"
                                           "<code>x = $HOME</code>")})
    assert check_docs.check_math_offline(site) == []


def test_math_offline_rejects_cdn_and_missing_config(tmp_path):
    site = _site(tmp_path, {"cdn.html": (HEAD_CDN, MATH),
                            "noconf.html": ('<script src="_static/mathjax/tex-chtml.js"></script>',
                                            MATH)}, mathjax=False)
    problems = "\n".join(check_docs.check_math_offline(site))
    assert "cdn.html: loads MathJax from the network" in problems
    assert "cdn.html: 1 math node(s) but no script from _static/mathjax/" in problems
    assert "noconf.html: math without MathJax's configuration" in problems
    assert "the built site has no MathJax" in problems


@pytest.mark.parametrize("text", ["$$x^2$$", r"so \frac{a}{b} holds", r"a \(x\) b",
                                  r"the term $\mathrm{ive}_\nu$ here", "$x_1 + y$"])
def test_math_offline_rejects_raw_tex(tmp_path, text):
    site = _site(tmp_path, {"raw.html": (HEAD_LOCAL, MATH + f"<p>{text}</p>")})
    problems = check_docs.check_math_offline(site)
    assert problems and all("raw.html: TeX outside a math node" in p for p in problems)


def test_rendered_math_check_reads_mathjax_output():
    """What the chromium check parses: a rendered node holds mjx-container (hidden); a
    node MathJax skipped still shows its TeX."""
    rendered = _parse('<span class="math"><mjx-container>x²</mjx-container></span>', True)
    skipped = _parse('<span class="math">\\(x^2\\)</span>', True)
    assert check_docs.raw_tex(rendered) == []
    assert check_docs.raw_tex(skipped) != []


def _parse(body, rendered):
    page = check_docs._MathPage(rendered=rendered)
    page.feed(f"<html><body><p>{body}</p></body></html>")
    return "".join(page.text)


def test_references_reject_files_outside_the_repository(tmp_path):
    # the names are assembled so that this file does not cite them itself
    md = tmp_path / ("page" + ".md")
    md.write_text("See " + "DES" + "IGN" + ".md, " + "RUL" + "ES" + ".md#x and " + "STYLE"
                  + ".md;\n"
                  "docs/design.md#complex-numbers is fine.\n")
    problems = check_docs.check_references([md])
    assert len([p for p in problems if "does not exist in the repository" in p]) == 3
    assert not any(":2:" in p for p in problems)


# ---- the API reference generator ------------------------------------------------------

def _documented(pages):
    names = []
    for lines in pages.values():
        for line in lines:
            m = re.match(r"\.\. (?:autofunction|autoclass|autoexception|autodata|py:data)::"
                         r" (\S+)", line)
            if m:
                names.append(m.group(1))
    return names


def test_api_pages_document_every_name_once_by_topic():
    pages = tenferro_docs._api_pages()
    documented = _documented(pages)
    assert len(documented) == len(set(documented))
    api = tenferro_docs.public_api()
    top = {id(o) for _, o in api["tenferro"]}
    for module, entries in api.items():
        for name, obj in entries:
            # a name that is also at top level (tf.linalg.svd_ad is tf.svd_ad) is
            # documented once, as the top-level name
            assert f"{module}.{name}" in documented or id(obj) in top, f"{module}.{name}"
    for family in ("linalg-decompositions", "linalg-solvers", "linalg-matrix-functions",
                   "linalg-norms-products", "builders", "transforms", "creation"):
        assert family in pages
    builders = _documented({"b": pages["builders"]})
    assert "tenferro.svd_ad" in builders and "tenferro.einsum_ad" in builders
    assert not [n for page, lines in pages.items() if page != "builders"
                for n in _documented({page: lines}) if n.endswith("_ad")]
    assert "tenferro.linalg.svd" in _documented({"d": pages["linalg-decompositions"]})
    assert "tenferro.linalg.solve" in _documented({"s": pages["linalg-solvers"]})


def test_a_new_submodule_gets_its_page(monkeypatch):
    """tenferro.distributed (written on another branch) is documented once it exists."""
    def allreduce(x):
        """Sum over the processes."""
        return x
    real = tenferro_docs.public_api

    def with_distributed():
        api = real()
        api["tenferro.distributed"] = [("allreduce", allreduce)]
        return api
    monkeypatch.setattr(tenferro_docs, "public_api", with_distributed)
    pages = tenferro_docs._api_pages()
    assert "tenferro.distributed.allreduce" in _documented({"d": pages["distributed"]})
    assert "   distributed" in pages["index"]


def _doc_complete(x, axis=None):
    """Add.

    Parameters
    ----------
    x : array_like
        The input.
    axis : int, optional
        The axis.

    Returns
    -------
    Tensor
        The result.

    Examples
    --------
    >>> tf.asarray([1.0, 2.0]).sum()
    tensor(3.)
    """


def _undocumented(x):
    """Add one to x (no sections)."""


def _wrong_example():
    """Nothing.

    Returns
    -------
    None

    Examples
    --------
    >>> 1 + 1
    3
    """


def test_numpydoc_check_fails_on_missing_sections_and_wrong_examples():
    assert check_docstrings.missing_sections(_doc_complete) == []
    assert check_docstrings.missing_sections(_undocumented) == ["Parameters", "Returns"]
    assert check_docstrings.missing_sections(_wrong_example) == []   # no parameters
    assert check_docstrings.run_examples("_doc_complete", _doc_complete) == (1, [])
    count, failures = check_docstrings.run_examples("_wrong_example", _wrong_example)
    assert count == 1 and len(failures) == 1 and "Expected:" in failures[0]


def test_every_public_name_has_numpydoc_sections():
    missing = [f"{module}.{name}: {check_docstrings.missing_sections(obj)}"
               for module, entries in tenferro_docs.public_api().items()
               for name, obj in entries
               if tenferro_docs.needs_docstring(obj) and check_docstrings.missing_sections(obj)]
    assert missing == []
