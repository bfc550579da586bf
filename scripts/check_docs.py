"""Build and check tenferro's documentation.

    pip install ".[docs]" && python scripts/check_docs.py [--no-screenshots]

1. ``sphinx-build -E -W --keep-going -b html docs docs/_build/html`` (every warning is an
   error; the examples run during this build, a failing example fails it);
2. the guide's code (``>>>`` lines in docs/guide/*.md) as doctests, with pytest;
3. every public name (docs/_ext/tenferro_docs.py: ``public_api``) has a docstring, and
   so has every member a public class defines (``Tensor.shape``, ...);
4. every local link (href to a page, an anchor in it) and every image in the built HTML
   exists;
5. if a Chromium is installed (``apt-get install chromium``), screenshots of four pages
   into docs/_build/screenshots (index, a guide page, an API page, an example page);
   without one this step says so and is skipped.

Exits non-zero naming each page or name at fault.
"""
import argparse
import html.parser
import inspect
import os
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
SCREENSHOT_PAGES = ["index.html", "guide/concepts.html", "api/tenferro.linalg.html",
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
    args = p.parse_args(argv)
    failures = []
    steps = [("sphinx-build -W (html)", lambda: build_html() == 0 or ["warnings/errors"]),
             ("doctests of docs/guide/*.md", lambda: doctest_guide() == 0 or ["failed"]),
             ("docstrings of public names", check_docstrings),
             ("internal links and images", check_links)]
    if not args.no_screenshots:
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
