"""Build and check tenferro's documentation.

    pip install ".[docs]" && python scripts/check_docs.py [--no-screenshots]

1. ``sphinx-build -E -W --keep-going -b html docs docs/_build/html`` (every warning is an
   error; the examples run during this build, a failing example fails it);
2. the guide's code (``>>>`` lines in docs/guide/*.md) as doctests, with pytest;
3. every public name (docs/_ext/tenferro_docs.py: ``public_api``) has a docstring, and
   so has every member a public class defines (``Tensor.shape``, ...); then
   scripts/check_docstrings.py: the numpydoc sections of every public name and its
   ``>>>`` examples as doctests (a public name without Parameters/Returns, a failing
   example or fewer than 150 names with examples fail);
4. every local link (href to a page, an anchor in it) and every image in the built HTML
   exists;
5. every reference to a Markdown file in the sources (tenferro/, docs/, README.md,
   examples/, scripts/, tests/, asv_bench/) opens: a path such as ``docs/rules.md`` or
   ``../design.md`` names a file of the repository (relative to the citing file, to the
   repository root or to docs/), and an anchor (``docs/design.md#conventions``) names a
   heading of that file; the old citations of the design and rules files that lived
   outside the repository (the bare words, with or without ``.md``) are reported too.
   Each offender is printed as ``file:line``. ``--references`` runs this step alone
   (no build: a second);
6. math renders offline: no page loads a script from the network (MathJax from a CDN
   leaves raw TeX on a machine without internet), every page with math loads the
   MathJax copy of the built site (``_static/mathjax/``, which must exist) and its
   configuration, and no page shows TeX outside a math node (``$$``, ``\\frac``,
   ``\\(``, ``$x^2$`` in the text); with a Chromium, the pages with math are also
   rendered and must have no TeX left in their visible text;
7. if a Chromium is installed (``apt-get install chromium``), screenshots of four pages
   into docs/_build/screenshots (index, a guide page, an API page, an example page);
   without one this step says so and is skipped.

Exits non-zero naming each page, name or reference at fault.
"""
import argparse
import html.parser
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
HTML = DOCS / "_build" / "html"
SHOTS = DOCS / "_build" / "screenshots"
SCREENSHOT_PAGES = ["index.html", "guide/concepts.html", "api/linalg-decompositions.html",
                    "examples/trg_ising.html"]

# Public names allowed to lack a docstring for now, each with the file that must get it.
# Empty the list as they are written; an entry that has a docstring is reported as stale.
KNOWN_UNDOCUMENTED = {}


# Child interpreters (sphinx, pytest, the examples, the interop page's SCIPY_ARRAY_API
# child) must import the INSTALLED tenferro, not the source tree in the working directory
# (it has no compiled kernels): Python >= 3.11 leaves the cwd off sys.path with this.
os.environ["PYTHONSAFEPATH"] = "1"


def run(cmd, **kw):
    print("$", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run(cmd, cwd=REPO, **kw).returncode


def build_html():
    # -E: a fresh environment, so a warning in an unchanged page is not hidden by the cache
    return run([sys.executable, "-m", "sphinx", "-q", "-E", "-W", "--keep-going", "-b", "html",
                "docs", str(HTML)])


def doctest_guide():
    guide = sorted(str(p.relative_to(REPO)) for p in (DOCS / "guide").glob("*.md"))
    return run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "--doctest-glob=*.md", "-o", "doctest_optionflags=ELLIPSIS "
                "NORMALIZE_WHITESPACE NUMBER", "--rootdir", str(REPO), *guide])


def check_docstrings():
    sys.path.insert(0, str(DOCS / "_ext"))
    from tenferro_docs import _class_members, needs_docstring, public_api
    problems = []
    for module, entries in public_api().items():
        for name, obj in entries:
            qualname = f"{module}.{name}"
            if not needs_docstring(obj):
                continue
            has_doc = bool((inspect.getdoc(obj) or "").strip())
            if not has_doc and qualname not in KNOWN_UNDOCUMENTED:
                problems.append(f"{qualname}: no docstring")
            if inspect.isclass(obj) and not issubclass(obj, tuple):
                own, _ = _class_members(obj)   # the members its API page documents
                problems += [f"{qualname}.{m}: no docstring" for m in own
                             if not (inspect.getdoc(getattr(obj, m)) or "").strip()]
            elif has_doc and qualname in KNOWN_UNDOCUMENTED:
                problems.append(f"{qualname} has a docstring now: remove it from "
                                "KNOWN_UNDOCUMENTED in scripts/check_docs.py")
    for qualname, path in KNOWN_UNDOCUMENTED.items():
        print(f"  note: {qualname} has no docstring yet (tolerated; add it in {path})")
    return problems


def check_numpydoc():
    """scripts/check_docstrings.py: numpydoc sections and the >>> examples of every public
    name (a missing section, a failing example or too few examples fail)."""
    cmd = [sys.executable, str(REPO / "scripts" / "check_docstrings.py")]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    tail = (proc.stdout + proc.stderr).strip().splitlines()
    summary = [line for line in tail if "names have examples" in line or ": " in line
               and "lack sections" in line]
    for line in summary:
        print(f"  {line}")
    if proc.returncode == 0:
        return []
    return [line for line in (proc.stderr.strip().splitlines() or tail[-20:])][-60:] or [
        f"check_docstrings.py exited with {proc.returncode}"]


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.images = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "link" and attrs.get("href") and attrs.get("rel") == "stylesheet":
            self.hrefs.append(attrs["href"])
        if tag == "script" and attrs.get("src"):
            self.images.append(attrs["src"])


def check_links():
    pages = {}
    for page in HTML.rglob("*.html"):
        parser = _Links()
        parser.feed(page.read_text(errors="replace"))
        pages[page.resolve()] = parser
    problems = []
    for page, parser in sorted(pages.items()):
        rel = page.relative_to(HTML.resolve())
        for href in parser.hrefs:
            url = urllib.parse.urlsplit(href)
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue     # external: not checked (no network)
            target = page if not url.path else (page.parent / urllib.parse.unquote(
                url.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{rel}: link to missing {href}")
                continue
            if url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if urllib.parse.unquote(url.fragment) not in ids:
                    problems.append(f"{rel}: link to missing anchor {href}")
        for src in parser.images:
            url = urllib.parse.urlsplit(src)
            if url.scheme or url.netloc or src.startswith("data:"):
                continue
            if not (page.parent / urllib.parse.unquote(url.path)).resolve().exists():
                problems.append(f"{rel}: missing image/script {src}")
    print(f"  {len(pages)} pages, "
          f"{sum(len(p.hrefs) for p in pages.values())} links checked")
    return problems


# ---- math rendered offline ---------------------------------------------------------

MATHJAX_DIR = "_static/mathjax"
# TeX that a reader would see as such: display/inline delimiters, commands, and a
# $...$ span holding a TeX command, a sub/superscript or a brace (prose such as
# "$5 or $6" is not math). Looked for in the text outside math nodes and code.
_RAW_TEX = re.compile(r"\$\$|\\\(|\\\[|\\(?:frac|sum|mathrm|mathbf|partial|sqrt|begin|"
                      r"left|right|operatorname|cdot|alpha|sigma|lambda)\b"
                      r"|(?<![\w$])\$[^$\s](?:[^$\n]{0,80}?[\\^_{}])[^$\n]{0,80}?\$(?![\w$])")
_NO_TEXT_TAGS = {"script", "style", "pre", "code", "textarea", "kbd", "samp", "tt"}
_MATH_CLASS = "math"


class _MathPage(html.parser.HTMLParser):
    """The scripts of a page, its math nodes and the text outside math and code."""

    def __init__(self, rendered=False):
        super().__init__()
        # In a page rendered by MathJax the math nodes hold its output (mjx-container):
        # their text counts, so a node MathJax skipped shows its TeX.
        self.rendered = rendered
        self.scripts, self.inline_scripts, self.math_nodes = [], [], 0
        self.text = []
        self._stack = []             # (tag, hides text) of the open elements
        self._hidden = 0
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            if attrs.get("src"):
                self.scripts.append(attrs["src"])
            self._in_script = not attrs.get("src")
        classes = (attrs.get("class") or "").split()
        is_math = tag in ("mjx-container", "math") or (
            _MATH_CLASS in classes and not self.rendered)
        self.math_nodes += _MATH_CLASS in classes
        if tag in ("br", "img", "meta", "link", "input", "hr", "col", "wbr", "source"):
            return                   # void elements have no end tag
        hides = is_math or tag in _NO_TEXT_TAGS
        self._stack.append((tag, hides))
        self._hidden += hides

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False
        # close up to the matching tag (HTML's optional end tags: <p>, <li>)
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                for _, hides in self._stack[i:]:
                    self._hidden -= hides
                del self._stack[i:]
                break

    def handle_data(self, data):
        if self._in_script:
            self.inline_scripts.append(data)
        elif not self._hidden:
            self.text.append(data)


def raw_tex(text):
    """The TeX fragments a reader would see in ``text`` (each with some context)."""
    return [text[max(0, m.start() - 30):m.end() + 30].replace("\n", " ")
            for m in _RAW_TEX.finditer(text)]


def check_math_offline(html_root=None):
    """No page loads a remote script; every page with math loads the site's own MathJax
    (which must be there) and its configuration; no TeX is left outside math nodes."""
    root = HTML if html_root is None else Path(html_root)
    problems, with_math = [], 0
    local = (root / MATHJAX_DIR / "tex-chtml.js")
    for page in sorted(root.rglob("*.html")):
        rel = page.relative_to(root)
        parser = _MathPage()
        parser.feed(page.read_text(errors="replace"))
        for src in parser.scripts:
            url = urllib.parse.urlsplit(src)
            if url.scheme in ("http", "https") or src.startswith("//"):
                what = "MathJax" if "mathjax" in src.lower() else "a script"
                problems.append(f"{rel}: loads {what} from the network ({src}); math and "
                                "scripts must come from the built site (docs/conf.py: "
                                "mathjax_path, sphinx-mathjax-offline)")
        if parser.math_nodes:
            with_math += 1
            mathjax = [s for s in parser.scripts if MATHJAX_DIR in
                       (page.parent / urllib.parse.urlsplit(s).path).resolve().as_posix()
                       .replace(root.resolve().as_posix() + "/", "")]
            if not mathjax:
                problems.append(f"{rel}: {parser.math_nodes} math node(s) but no script "
                                f"from {MATHJAX_DIR}/")
            if not any("window.MathJax" in s for s in parser.inline_scripts):
                problems.append(f"{rel}: math without MathJax's configuration "
                                "(docs/conf.py: mathjax3_config)")
        for frag in raw_tex("".join(parser.text)):
            problems.append(f"{rel}: TeX outside a math node: ...{frag}...")
    if with_math and not local.exists():
        problems.append(f"{local.relative_to(root)} is missing: the built site has no "
                        "MathJax (pip install sphinx-mathjax-offline)")
    print(f"  {with_math} pages with math")
    return problems


def check_math_rendered(html_root=None):
    """With a Chromium: render each page with math (JavaScript on, no network needed) and
    report TeX left in its visible text, and pages where MathJax rendered nothing."""
    browser = find_browser()
    if browser is None:
        print("  no chromium on PATH: rendered math not checked (apt-get install chromium);"
              " the static check above still ran")
        return []
    root = HTML if html_root is None else Path(html_root)
    problems, checked = [], 0
    for page in sorted(root.rglob("*.html")):
        parser = _MathPage()
        parser.feed(page.read_text(errors="replace"))
        if not parser.math_nodes:
            continue
        checked += 1
        rel = page.relative_to(root)
        proc = render(browser, page.as_uri(), budget_ms=20000)
        dom = proc.stdout
        if "<mjx-container" not in dom:
            problems.append(f"{rel}: MathJax rendered no math ({parser.math_nodes} nodes)")
            continue
        shown = _MathPage(rendered=True)
        shown.feed(dom)
        # after rendering, a math node holds mjx-container; its TeX source is gone
        for frag in raw_tex("".join(shown.text)):
            problems.append(f"{rel}: rendered page shows TeX: ...{frag}...")
    print(f"  {checked} pages rendered")
    return problems


# ---- references to documentation files ----------------------------------------------

# Where references are looked for, and what is skipped there (generated and built files).
REFERENCE_ROOTS = ["tenferro", "docs", "README.md", "examples", "scripts", "tests",
                   "asv_bench"]
REFERENCE_SKIP = {"_build", "api", "examples", "_generated", "__pycache__", ".asv",
                  "results", "html", "tracked-results", "tracked-html", "screenshots",
                  ".ipynb_checkpoints"}
REFERENCE_SUFFIXES = {".py", ".pyx", ".pxd", ".pyi", ".md", ".rst", ".txt", ".toml",
                      ".cfg", ".json", ".build", ".in"}
# A Markdown path: not preceded by a path character (so URLs and globs such as
# docs/guide/*.md are not references), with an optional #anchor.
_MD_REF = re.compile(r"(?<![\w./*{}<>-])((?:\.\./)*\w[\w./-]*\.md)\b(#[\w-]+)?")
# The citations of the two contract files that used to live outside the repository,
# without their extension ("§2 of the design file", "(rules: adjoint)"); spelled in
# pieces so that this file does not cite them itself.
_OLD_CITATION = re.compile(r"\b(" + "DES" + "IGN" + "|" + "RUL" + "ES" + r")\b(?!\.md)")
# Markdown files that scripts write outside the repository (scripts/scipy_suite.py's
# report into its output folder): named, never committed.
GENERATED_MD = {"table.md", "triage.md"}
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_MYST_TARGET = re.compile(r"^\(([\w-]+)\)=\s*$")
_SLUG_CLEAN = re.compile(r"[^\w\u4e00-\u9fff\- ]")


def _reference_files():
    """The text files under REFERENCE_ROOTS, generated and built folders left out."""
    for root in REFERENCE_ROOTS:
        path = REPO / root
        if path.is_file():
            yield path
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            rel = Path(dirpath).relative_to(REPO)
            generated = rel.parts[:1] == ("docs",) and len(rel.parts) == 1
            dirnames[:] = sorted(
                d for d in dirnames
                if not d.startswith(".") and d not in ("__pycache__", ".ipynb_checkpoints")
                and not (generated and d in REFERENCE_SKIP)
                and not (rel.parts[:1] == ("asv_bench",) and d in REFERENCE_SKIP))
            for name in sorted(filenames):
                f = Path(dirpath) / name
                if f.suffix in REFERENCE_SUFFIXES or name == "meson.build":
                    yield f


def slugify(title):
    """The anchor MyST gives a heading (its GitHub-style slug, myst_heading_anchors): the
    text and code of the title (roles such as {doc}`x` dropped, as MyST does), lowercase,
    spaces to hyphens, other punctuation dropped."""
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", title)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)       # [t](u) -> t
    text = text.replace("`", "").replace("**", "").replace("*", "")
    return _SLUG_CLEAN.sub("", text.lower().replace(" ", "-"))


def heading_anchors(md, depth=3):
    """The anchors of a Markdown file: the slugs of its headings down to ``depth`` (docs/
    conf.py's myst_heading_anchors; a repeated slug gets -1, -2, ... as in MyST) and its
    explicit ``(label)=`` targets."""
    anchors, fenced = set(), False
    for line in md.read_text(errors="replace").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = _MYST_TARGET.match(line)
        if m:
            anchors.add(m.group(1))
            continue
        m = _HEADING.match(line)
        if m and len(m.group(1)) <= depth:
            slug = slugify(m.group(2))
            if slug in anchors:
                i = 1
                while f"{slug}-{i}" in anchors:
                    i += 1
                slug = f"{slug}-{i}"
            if slug:
                anchors.add(slug)
    return anchors


def _resolve(ref, source):
    """The existing file a reference in ``source`` names, or None."""
    for base in (source.parent, REPO, DOCS):
        target = (base / ref).resolve()
        if target.is_file():
            return target
    return None


def check_references(files=None):
    """Every ``*.md`` path mentioned in the sources exists (and has the heading its anchor
    names); the old citations of the external design/rules files are offenders."""
    problems, anchors, count = [], {}, 0
    for f in (_reference_files() if files is None else files):
        rel = f.relative_to(REPO) if f.is_relative_to(REPO) else f
        if f.resolve() == Path(__file__).resolve():
            lines = []      # this file explains the patterns; it cites nothing
        else:
            lines = f.read_text(errors="replace").splitlines()
        for n, line in enumerate(lines, 1):
            for m in _MD_REF.finditer(line):
                count += 1
                ref, frag = m.group(1), (m.group(2) or "")[1:]
                if Path(ref).name in GENERATED_MD:
                    continue
                target = _resolve(ref, f)
                if target is None:
                    problems.append(f"{rel}:{n}: {ref}{'#' + frag if frag else ''} "
                                    "does not exist in the repository")
                elif frag:
                    if target not in anchors:
                        anchors[target] = heading_anchors(target)
                    if frag not in anchors[target]:
                        problems.append(f"{rel}:{n}: {ref}#{frag}: no heading of "
                                        f"{target.relative_to(REPO)} has that anchor")
            for m in _OLD_CITATION.finditer(line):
                count += 1
                problems.append(f"{rel}:{n}: '{line.strip()[:90]}' cites the former "
                                f"{m.group(1)} file, which is not in the repository; "
                                "cite docs/design.md or docs/rules.md (with an anchor)")
    print(f"  {count} references checked")
    return problems


def find_browser():
    """A headless-capable Chromium on PATH, or None."""
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(b)), None)


def render(browser, url, out_png=None, height=1000, width=1400, budget_ms=15000):
    """Chromium, headless, on ``url`` with JavaScript and ``budget_ms`` of virtual time:
    the rendered DOM (or, with ``out_png``, a screenshot). file:// pages may read files
    beside them (asv's site fetches its JSON with XHR; scripts/check_asv_html.py)."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--allow-file-access-from-files", f"--user-data-dir={profile}",
               f"--virtual-time-budget={budget_ms}", f"--window-size={width},{height}",
               f"--screenshot={out_png}" if out_png else "--dump-dom", url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def screenshots():
    browser = find_browser()
    if browser is None:
        print("  no chromium on PATH: screenshots skipped (apt-get install chromium)")
        return []
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for page in SCREENSHOT_PAGES:
        out = SHOTS / (page.replace("/", "_").replace(".html", ".png"))
        out.unlink(missing_ok=True)
        proc = render(browser, (HTML / page).as_uri(), out, height=1600, width=1280)
        if not out.exists() or out.stat().st_size < 10_000:
            problems.append(f"screenshot of {page} failed: {proc.stderr[-500:]}")
        else:
            print(f"  {out.relative_to(REPO)}")
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--no-screenshots", action="store_true")
    p.add_argument("--references", action="store_true",
                   help="only check the references to Markdown files (step 5)")
    args = p.parse_args(argv)
    failures = []
    steps = [("sphinx-build -W (html)", lambda: build_html() == 0 or ["warnings/errors"]),
             ("doctests of docs/guide/*.md", lambda: doctest_guide() == 0 or ["failed"]),
             ("docstrings of public names", check_docstrings),
             ("numpydoc sections and docstring examples",
              check_numpydoc),
             ("internal links and images", check_links),
             ("math rendered offline (static)", check_math_offline),
             ("math rendered offline (headless chromium)", check_math_rendered),
             ("references to documentation files", check_references)]
    if args.references:
        steps = steps[-1:]
    elif not args.no_screenshots:
        steps.append(("screenshots (headless chromium)", screenshots))
    for name, step in steps:
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        result = step()
        problems = [] if result is True else list(result)
        for problem in problems:
            print(f"  FAIL: {problem}")
        failures += [f"{name}: {pr}" for pr in problems]
        print(f"== {name}: {'ok' if not problems else 'FAILED'} "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
        if name.startswith("sphinx-build") and not (HTML / "index.html").exists():
            break
    if failures:
        print(f"check_docs: {len(failures)} problem(s)", file=sys.stderr)
        return 1
    print("check_docs: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
