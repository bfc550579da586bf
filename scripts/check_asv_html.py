"""Check the asv site of the tracked benchmarks (asv_bench/tracked-html): files, links, plots.

    cd asv_bench && asv publish --config tracked.conf.json && cd .. \
        && python scripts/check_asv_html.py [--no-screenshots] [--html DIR]

1. offline: asv's index.html loads jQuery, Flot, Bootstrap, stupidtable and blueimp-md5
   from CDNs, which a machine without the network (CI's) cannot reach, so the page would
   show asv's error page. Where Debian's copies are installed (``apt-get install
   libjs-jquery libjs-jquery-flot libjs-bootstrap libjs-jquery-stupidtable
   node-blueimp-md5``) they are copied into html/vendor/ and index.html points at them
   (Flot's orderBars plugin, used for bar charts only, has no Debian package: its tag is
   dropped); otherwise the CDN tags stay, the site needs the network, and step 4 is
   skipped;
2. index.html, index.json, info.json and error.html exist, and every local link, script,
   stylesheet and image of every page resolves;
3. index.json lists the tracked benchmarks (``--require``, default every benchmark of
   asv_bench/tracked/bench_tracked.py), and each has its graphs: the summary and at
   least one per-environment graph file, holding at least ``--min-commits`` commits;
4. if a Chromium is installed, it loads the index page (the grid of summary plots) and one
   benchmark's graph page (``--graph``) with JavaScript, and the rendered page must contain
   Flot's plot canvases and no asv error; then screenshots of both go to
   asv_bench/screenshots/ (a Chromium-less machine says so and skips this step).

Exits non-zero naming each file, link or page at fault.
"""
import argparse
import html.parser
import json
import re
import shutil
import sys
import time
import urllib.parse
from pathlib import Path

from check_docs import find_browser, render  # noqa: E402  (the docs check's Chromium)

REPO = Path(__file__).resolve().parent.parent
HTML = REPO / "asv_bench" / "tracked-html"
SHOTS = REPO / "asv_bench" / "screenshots"
DEFAULT_GRAPH = "bench_tracked.Linalg.time_forward_backward"

# asv's CDN script/stylesheet (the URL's file name, its folder) -> Debian's copy
# (under /usr/share/javascript) and where it goes in html/vendor/. None: dropped.
DEBIAN_JS = Path("/usr/share/javascript")
VENDOR = {
    "jquery-3.3.1.min.js": ("jquery/jquery.min.js", "jquery.min.js"),
    "jquery.flot.min.js": ("jquery-flot/jquery.flot.min.js", "jquery.flot.min.js"),
    "jquery.flot.time.min.js": ("jquery-flot/jquery.flot.time.min.js",
                                "jquery.flot.time.min.js"),
    "jquery.flot.selection.min.js": ("jquery-flot/jquery.flot.selection.min.js",
                                     "jquery.flot.selection.min.js"),
    "jquery.flot.categories.min.js": ("jquery-flot/jquery.flot.categories.min.js",
                                      "jquery.flot.categories.min.js"),
    "jquery.flot.orderBars.js": None,
    "stupidtable.min.js": ("jquery-stupidtable/stupidtable.min.js", "stupidtable.min.js"),
    "md5.min.js": ("blueimp-md5/md5.min.js", "md5.min.js"),
    "bootstrap.min.js": ("bootstrap/js/bootstrap.min.js", "bootstrap/js/bootstrap.min.js"),
    "bootstrap.min.css": ("bootstrap/css/bootstrap.min.css",
                          "bootstrap/css/bootstrap.min.css"),
}
VENDOR_EXTRA = [("bootstrap/fonts", "bootstrap/fonts")]   # the css's url(../fonts/...)

# Debian's Flot is 4.x (asv's CDN one 0.8.3), which draws axis labels itself (asv's own
# axislabels plugin would draw them a second time) and styles its SVG legend from a
# stylesheet of its own, without which the legend is a black box.
FLOT4_AXISLABELS = re.compile(r'<script[^>]*src="jquery\.flot\.axislabels\.js"[^>]*>\s*</script>')
FLOT4_LEGEND_CSS = """/* Flot 4's legend (its examples' style) */
.legendLayer .background { fill: rgba(255, 255, 255, 0.85); stroke: rgba(0, 0, 0, 0.85);
                           stroke-width: 1; }
"""

_TAG = re.compile(r"<(script|link)\b[^>]*?\b(?:src|href)=\"(https?://[^\"]+)\"[^>]*>"
                  r"(?:\s*</script>)?", re.S)


def vendor(html_dir):
    """Point index.html's CDN tags at local copies of Debian's files: [] on success,
    None when they are not installed (the page keeps its CDN tags), else problems."""
    index = html_dir / "index.html"
    text = index.read_text()
    cdn = _TAG.findall(text)
    if not cdn:
        print("  index.html loads nothing from the network (vendored already)")
        return []
    missing = sorted({src for entry in VENDOR.values() if entry
                      for src in [entry[0]] if not (DEBIAN_JS / src).exists()})
    if missing:
        print("  Debian's JavaScript packages are not installed (missing "
              f"{', '.join(missing)}): index.html keeps its CDN links")
        return None
    problems = []

    def replace(match):
        tag, url = match.group(1), match.group(2)
        name = urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1]
        if name not in VENDOR:
            problems.append(f"index.html: no local copy known for {url}")
            return match.group(0)
        if VENDOR[name] is None:
            return ""
        src, dest = VENDOR[name]
        target = html_dir / "vendor" / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DEBIAN_JS / src, target)   # Debian's files are often symlinks
        if tag == "script":
            return f'<script src="vendor/{dest}"></script>'
        return f'<link rel="stylesheet" href="vendor/{dest}">'

    text = _TAG.sub(replace, text)
    text = FLOT4_AXISLABELS.sub("", text)
    (html_dir / "vendor" / "flot4-legend.css").write_text(FLOT4_LEGEND_CSS)
    text = text.replace("</head>", '  <link rel="stylesheet" href="vendor/flot4-legend.css">\n'
                        "  </head>", 1)
    for src, dest in VENDOR_EXTRA:
        if (DEBIAN_JS / src).is_dir():
            shutil.copytree(DEBIAN_JS / src, html_dir / "vendor" / dest, dirs_exist_ok=True)
    index.write_text(text)
    print(f"  {len(cdn)} CDN tags of index.html now load vendor/ (Debian's copies)")
    return problems


class _Refs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("href", "src"):
            if attrs.get(key):
                self.refs.append(attrs[key])


def check_files(html_dir):
    problems = [f"missing {name}" for name in ("index.html", "index.json", "info.json",
                                               "error.html")
                if not (html_dir / name).exists()]
    pages = sorted(html_dir.rglob("*.html"))
    checked = 0
    for page in pages:
        parser = _Refs()
        parser.feed(page.read_text(errors="replace"))
        for ref in parser.refs:
            url = urllib.parse.urlsplit(ref)
            if url.scheme or url.netloc or ref.startswith(("mailto:", "data:")) or not url.path:
                continue     # external (not checked: no network) or an in-page #route
            checked += 1
            if not (page.parent / urllib.parse.unquote(url.path)).exists():
                problems.append(f"{page.relative_to(html_dir)}: missing {ref}")
    print(f"  {len(pages)} pages, {checked} local links/scripts/images checked")
    return problems


def tracked_benchmarks():
    """The benchmark names of bench_tracked.py, read from its source (no import)."""
    source = (REPO / "asv_bench" / "tracked" / "bench_tracked.py").read_text()
    names = []
    for cls, body in re.findall(r"^class (\w+)\b.*?:\n((?:    .*\n|\n)*)", source, re.M):
        names += [f"bench_tracked.{cls}.{m}"
                  for m in re.findall(r"^    def (time_\w+)\(", body, re.M)]
    return names


def check_graphs(html_dir, required, min_commits):
    index = json.loads((html_dir / "index.json").read_text())
    problems = []
    graphs = html_dir / "graphs"
    for name in required:
        if name not in index["benchmarks"]:
            problems.append(f"index.json: benchmark {name} missing")
            continue
        summary = graphs / "summary" / f"{name}.json"
        per_env = [p for p in graphs.rglob(f"{name}.json") if "summary" not in p.parts]
        if not summary.exists() or not per_env:
            problems.append(f"{name}: no graph files (summary: {summary.exists()}, "
                            f"per environment: {len(per_env)})")
            continue
        # a point is [revision, value or list of values (one per parameter combination)]
        points = [p for p in json.loads(per_env[0].read_text())
                  if p[1] is not None and (not isinstance(p[1], list)
                                           or any(v is not None for v in p[1]))]
        if len(points) < min_commits:
            problems.append(f"{per_env[0].relative_to(html_dir)}: {len(points)} commit(s) "
                            f"with a value, expected >= {min_commits}")
    print(f"  {len(required)} benchmarks' graphs checked ({len(index['revision_to_hash'])} "
          f"commits in index.json)")
    return problems


def screenshots(html_dir, graph, required):
    browser = find_browser()
    if browser is None:
        print("  no chromium on PATH: the rendering check and screenshots are skipped "
              "(apt-get install chromium)")
        return []
    if _TAG.search((html_dir / "index.html").read_text()):
        print("  index.html still loads its scripts from the network (step 1): the "
              "rendering check and screenshots are skipped")
        return []
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    index_url = (html_dir / "index.html").resolve().as_uri()
    # The grid plots only the benchmarks scrolled into view: a window tall enough for all
    # of them (asv lists every benchmark of benchmarks.json, a few for tracked.conf.json).
    pages = (("index", index_url, 1400, len(required)), ("graph", f"{index_url}#{graph}", 1000, 1))
    for label, url, height, expected in pages:
        dom = render(browser, url, height=height)
        canvases = dom.stdout.count('class="flot-base"')
        if (dom.returncode != 0 or canvases < expected
                or "continental origin of swallow" in dom.stdout):   # asv's error page
            problems.append(f"{label} page ({url}): {canvases} plot(s) rendered, expected "
                            f">= {expected} (exit {dom.returncode}): {dom.stderr[-300:]}")
            continue
        out = SHOTS / f"{label}.png"
        out.unlink(missing_ok=True)
        proc = render(browser, url, out, height=height)
        if not out.exists() or out.stat().st_size < 10_000:
            problems.append(f"screenshot of the {label} page failed: {proc.stderr[-400:]}")
        else:
            print(f"  {label}: {canvases} plots rendered; {out.relative_to(REPO)}")
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--html", type=Path, default=HTML, help="the published site")
    p.add_argument("--require", nargs="*", default=None,
                   help="benchmarks that must have graphs (default: bench_tracked.py's)")
    p.add_argument("--min-commits", type=int, default=2,
                   help="commits each required graph must show (default %(default)s)")
    p.add_argument("--graph", default=DEFAULT_GRAPH,
                   help="the benchmark whose graph page is rendered")
    p.add_argument("--no-screenshots", action="store_true")
    args = p.parse_args(argv)
    html_dir = args.html.resolve()
    if not (html_dir / "index.html").exists():
        print(f"check_asv_html: no {html_dir}/index.html (run `asv publish --config "
              "tracked.conf.json` in asv_bench first)", file=sys.stderr)
        return 1
    required = tracked_benchmarks() if args.require is None else args.require
    if not required:
        print("check_asv_html: no tracked benchmark found", file=sys.stderr)
        return 1
    steps = [("offline copies of the CDN scripts", lambda: vendor(html_dir) or []),
             ("files and local links", lambda: check_files(html_dir)),
             ("graphs of the tracked benchmarks",
              lambda: check_graphs(html_dir, required, args.min_commits))]
    if not args.no_screenshots:
        steps.append(("rendered plots and screenshots (headless chromium)",
                      lambda: screenshots(html_dir, args.graph, required)))
    failures = []
    for name, step in steps:
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        problems = list(step())
        for problem in problems:
            print(f"  FAIL: {problem}")
        failures += problems
        print(f"== {name}: {'ok' if not problems else 'FAILED'} "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
    if failures:
        print(f"check_asv_html: {len(failures)} problem(s)", file=sys.stderr)
        return 1
    print("check_asv_html: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
