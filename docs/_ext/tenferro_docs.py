"""Sphinx extension for tenferro's documentation.

* ``public_api()``: every public name, per documented module (also used by
  ``scripts/check_docs.py`` to check that each has a docstring).
* At ``config-inited`` it writes the API reference (``docs/api/*.rst``, one page per
  module, the top level grouped by the module that defines each name) and one page per
  ``examples/*.py`` (``docs/examples/*.md``). Both folders are generated, not committed:
  a name added to ``tenferro`` or an example added to ``examples/`` appears without
  editing the docs.
* The ``tenferro-example`` directive runs an example script in a subprocess at build time
  and shows its docstring, its source, its standard output and the PNG files it wrote.
  A script that fails, or uses more than 120 s of CPU time (``:timeout:``), fails the
  build; its page states the wall and CPU time of the run.
* ``docs/examples/index.md`` is the gallery (the ``tenferro-gallery`` directive): a card
  per example with a thumbnail of the plot it wrote, its check's verdict and its output.
* The ``tenferro-op-table`` directive (docs/rules.md) is the table of every registered op
  (``tenferro._ops.registry.OPS``, the rows of ``python -m tenferro.rules``), each linked
  to the section of docs/rules.md that gives its formula. An op whose family has no
  section there fails the build (a warning under ``-W``).
"""
import ast
import re
import importlib
import inspect
import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.errors import ExtensionError
from sphinx.util import logging as sphinx_logging
from sphinx.util.docutils import SphinxDirective

logger = sphinx_logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parent.parent
REPO = DOCS.parent

# Submodules with their own API page. A module listed here that does not exist yet is
# skipped (other work adds tenferro.special and tenferro.functional).
SUBMODULES = [
    ("tenferro.linalg", "Linear algebra (the array API ``linalg`` extension and more)"),
    ("tenferro.fft", "Discrete Fourier transforms (the array API ``fft`` extension)"),
    ("tenferro.special", "Special functions (``scipy.special`` on tensors)"),
    ("tenferro.stats", "Probability distributions (``scipy.stats``' names)"),
    ("tenferro.integrate", "Integration: quadrature and differentiable ODE solutions (``scipy.integrate``' names)"),
    ("tenferro.signal", "Signal processing: convolution and linear filters (``scipy.signal``' names)"),
    ("tenferro.ndimage", "Image filters and interpolation (``scipy.ndimage``' names)"),
    ("tenferro.functional", "Function transforms"),
    ("tenferro.distributed", "Distributed gradients: sharded sums and sliced contractions on executors"),
    ("tenferro.forward", "Forward mode: dual numbers (also ``tenferro.forward_ad``)"),
    ("tenferro.testing", "Testing derivatives"),
]
# Modules whose every public name is re-exported at top level: documented there.
TOP_LEVEL_ONLY = ("tenferro.autograd", "tenferro.custom", "tenferro.builders",
                  "tenferro.compile")

# The API reference is grouped by topic, one page per topic (docs/api/<page>.rst). Each
# public name goes to a page and a section of it:
# * a top-level name by the module that defines it (TOP_LEVEL_TOPICS, a prefix match);
# * a name ending in "_ad" (a builder, ``tf.svd_ad(a).run()``) to the builders page;
# * a name of tenferro.linalg to the page of its family (LINALG_FAMILIES: by name, then
#   by defining module);
# * a name of another module of SUBMODULES to that module's page (SUBMODULE_PAGES, or a
#   page named after the module: a module added to SUBMODULES gets a page without more).
# A name that matches no topic lands on an "Other" page of its module, never nowhere.
PAGES = [                        # (page, title, caption of the index's group)
    ("tensors", "Tensors, data types and threads", "Arrays"),
    ("creation", "Creation functions", "Arrays"),
    ("elementwise", "Element-wise functions", "Arrays"),
    ("reductions", "Reductions, statistics, searching, sorting and sets", "Arrays"),
    ("manipulation", "Shapes, indexing, products and einsum", "Arrays"),
    ("errors", "Errors", "Arrays"),
    ("linalg", "tenferro.linalg: linear algebra", "Linear algebra"),
    ("linalg-decompositions", "Linear algebra: decompositions", None),
    ("linalg-solvers", "Linear algebra: solvers and least squares", None),
    ("linalg-matrix-functions", "Linear algebra: matrix functions", None),
    ("linalg-norms-products", "Linear algebra: determinants, norms and products", None),
    ("linalg-other", "Linear algebra: other functions", None),
    ("builders", "Builders (``tf.svd_ad(a).run()``, the Rust API's spelling)", "Linear algebra"),
    ("special", "tenferro.special: special functions", "SciPy-style modules"),
    ("stats", "tenferro.stats: probability distributions", "SciPy-style modules"),
    ("fft", "tenferro.fft: discrete Fourier transforms", "SciPy-style modules"),
    ("signal", "tenferro.signal: convolution and linear filters", "SciPy-style modules"),
    ("ndimage", "tenferro.ndimage: image filters and interpolation", "SciPy-style modules"),
    ("integrate", "tenferro.integrate: quadrature and ODE solutions", "SciPy-style modules"),
    ("transforms", "Transforms: grad, jacobian, hessian, jvp, custom rules, compile",
     "Derivatives"),
    ("testing", "tenferro.testing: checking derivatives", "Derivatives"),
    ("distributed", "tenferro.distributed: gradients on many workers", "Parallel"),
    ("other", "Other functions", "Other"),
]
# Top-level names: (defining module, page, section title).
TOP_LEVEL_TOPICS = [
    ("tenferro._tensor", "tensors", "Tensors"),
    ("tenferro._dtypes", "tensors", "Data types and promotion"),
    ("tenferro._threads", "tensors", "Threads"),
    ("tenferro._ops.creation", "creation", "Creation functions"),
    ("tenferro._ops.elementwise", "elementwise", "Element-wise functions"),
    ("tenferro._ops.reductions", "reductions", "Reductions and statistics"),
    ("tenferro._ops.searching", "reductions", "Searching"),
    ("tenferro._ops.sorting", "reductions", "Sorting"),
    ("tenferro._ops.sets", "reductions", "Set functions"),
    ("tenferro._ops.structure", "manipulation", "Shapes, indexing and products"),
    ("tenferro._ops.manipulation", "manipulation", "Manipulation"),
    ("tenferro._ops.einsum", "manipulation", "einsum"),
    ("tenferro.linalg", "manipulation", "Products of the array API (also in tenferro.linalg)"),
    ("tenferro.autograd", "transforms", "Reverse mode (autograd)"),
    ("tenferro.forward", "transforms", "Forward mode and Hessian-vector products"),
    ("tenferro.functional", "transforms", "Jacobians, Hessians, operators, checkpointing"),
    ("tenferro.custom", "transforms", "Custom derivative rules, roots and fixed points"),
    ("tenferro.compile", "transforms", "Recording and replaying a function (``tf.compile``)"),
    ("tenferro.builders", "builders", "The builder"),
    ("tenferro._errors", "errors", "Errors"),
]
# The families of tenferro.linalg: (page, section title, defining modules, names). A name
# listed is placed by it; others by their defining module (a prefix match).
LINALG_FAMILIES = [
    ("linalg-decompositions", "Singular values",
     ("tenferro.linalg.svd", "tenferro.linalg.svds"), ()),
    ("linalg-decompositions", "Eigenvalues",
     ("tenferro.linalg.eigh", "tenferro.linalg.eigsh", "tenferro.linalg.eig"), ()),
    ("linalg-decompositions", "QR, LU and Cholesky",
     ("tenferro.linalg.qr", "tenferro.linalg.lu", "tenferro.linalg.cholesky"), ()),
    ("linalg-solvers", "Linear systems and inverses",
     ("tenferro.linalg.solve", "tenferro.linalg.triangular", "tenferro.linalg.banded"),
     ("cho_solve",)),
    ("linalg-solvers", "Least squares and the pseudo-inverse", ("tenferro.linalg.lstsq",), ()),
    ("linalg-solvers", "Matrix equations", ("tenferro.linalg.sylvester",), ()),
    ("linalg-matrix-functions", "Matrix functions", ("tenferro.linalg.schur_funcs",),
     ("expm", "matrix_exp", "matrix_power")),
    ("linalg-norms-products", "Determinants", ("tenferro.linalg.det",), ()),
    ("linalg-norms-products", "Norms", ("tenferro.linalg.matfuncs",), ("matrix_rank",)),
    ("linalg-norms-products", "Products", ("tenferro.linalg.products",), ()),
]
# Submodules whose page is not named after them.
SUBMODULE_PAGES = {"tenferro.functional": "transforms", "tenferro.forward": "transforms"}



def _is_module(obj):
    return isinstance(obj, types.ModuleType)


def _module_names(modname):
    """Public names of a module: ``__all__`` when it has one, else every name that does
    not start with an underscore and is not a module."""
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")
                 and not _is_module(getattr(mod, n))]
    return mod, list(names)


def public_api():
    """{module name: [(name, object), ...]} for every documented module; the top level is
    ``"tenferro"``. Names of ``TOP_LEVEL_ONLY`` modules and of ``tenferro.forward`` that
    are also at top level are listed only there."""
    top, names = _module_names("tenferro")
    api = {"tenferro": [(n, getattr(top, n)) for n in sorted(names)]}
    top_objects = {id(o) for _, o in api["tenferro"]}
    for modname, _ in SUBMODULES:
        try:
            mod, names = _module_names(modname)
        except ModuleNotFoundError:
            continue
        entries = [(n, getattr(mod, n)) for n in names]
        if modname == "tenferro.forward":
            entries = [(n, o) for n, o in entries if id(o) not in top_objects]
        api[modname] = entries
    return api


def _kind(obj):
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj):
        return "function"
    return "data"


def needs_docstring(obj):
    """Functions, classes and callable objects carry a docstring; dtypes and constants
    (``tf.float64``, ``tf.pi``, ``tf.newaxis``) are data."""
    kind = _kind(obj)
    return kind != "data" or (callable(obj) and type(obj).__module__.startswith("tenferro"))


def _entry(qualname, obj):
    kind = _kind(obj)
    if kind == "function":
        return [f".. autofunction:: {qualname}", ""]
    if kind == "exception":
        return [f".. autoexception:: {qualname}", "   :show-inheritance:", ""]
    if kind == "class":
        if issubclass(obj, tuple):   # named tuples: the fields are documented in the text
            return [f".. autoclass:: {qualname}", "   :no-members:", ""]
        own, borrowed = _class_members(obj)
        lines = [f".. autoclass:: {qualname}"]
        lines += [f"   :members: {', '.join(own)}"] if own else ["   :no-members:"]
        lines.append("")
        if borrowed:
            short = qualname.rsplit(".", 1)[-1]
            lines += [f"   Also methods that are module functions with the {short.lower()} "
                      "as first argument (``t.exp()`` is ``tf.exp(t)``): "
                      + ", ".join(f"``{n}``" for n in borrowed) + ".", ""]
        return lines
    if needs_docstring(obj):         # a callable object (a distribution, ...)
        return [f".. autodata:: {qualname}", "   :no-value:", ""]
    return [f".. py:data:: {qualname}", f"   :value: {obj!r}", ""]


def _class_members(cls):
    """(members defined by the class itself, methods that are module-level functions
    installed on it): the second kind is documented once, as the function."""
    own, borrowed = [], []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        func = getattr(value, "fget", None) or getattr(value, "__func__", None) or value
        if isinstance(value, property) or getattr(func, "__module__", None) == cls.__module__:
            own.append(name)
        elif callable(value):
            borrowed.append(name)
    return own, sorted(borrowed)


def _summary_table(names):
    lines = [".. autosummary::", "   :nosignatures:", ""]
    lines += [f"   {n}" for n in names]   # relative to the section's current module
    return lines + [""]


def _title(text, char="="):
    return [text, char * len(text), ""]


def _module_of(obj):
    return getattr(obj, "__module__", "") or ""


def _matches(module, prefix):
    return module == prefix or module.startswith(prefix + ".")


def _linalg_family(name, obj):
    """(page, section) of a tenferro.linalg name (a builder's by the name it builds)."""
    base = name[:-3] if name.endswith("_ad") else name
    for page, section, modules, names in LINALG_FAMILIES:
        if base in names:
            return page, section
    module = _module_of(obj)
    for page, section, modules, names in LINALG_FAMILIES:
        if any(_matches(module, m) for m in modules):
            return page, section
    return "linalg-other", "Other functions"


def _is_builder(name, obj):
    return name.endswith("_ad") and callable(obj)


def _topic(modname, name, obj):
    """(page, section title) of the public name ``modname.name``."""
    if _is_builder(name, obj):
        if modname == "tenferro.linalg" or _matches(_module_of(obj), "tenferro.linalg"):
            return "builders", _linalg_family(name, obj)[1]
        return "builders", "Other builders"
    if modname == "tenferro":
        module = _module_of(obj)
        for prefix, page, section in TOP_LEVEL_TOPICS:
            if _matches(module, prefix):
                return page, section
        return "other", "Other functions"
    if modname == "tenferro.linalg":
        return _linalg_family(name, obj)
    if modname in SUBMODULE_PAGES:       # beside the top-level names of the module
        for prefix, page, section in TOP_LEVEL_TOPICS:
            if prefix == modname:
                return page, section
    page = SUBMODULE_PAGES.get(modname, modname.split(".", 1)[1])
    return page, None          # the module's own section on its page


def _placements():
    """{page: {section title or None: [(qualname, obj), ...]}} in the order of PAGES and of
    the sections' first appearance; a name reached twice (a builder of tenferro.linalg
    that is also at top level) is documented once, as the top-level name."""
    api = public_api()
    top_ids = {id(o) for _, o in api["tenferro"]}
    pages = {}
    for modname, entries in api.items():
        for name, obj in entries:
            if modname == "tenferro" and _kind(obj) == "data" and not needs_docstring(obj):
                section = "Data types and constants"
                page = "tensors"
            else:
                if modname != "tenferro" and id(obj) in top_ids and (
                        _is_builder(name, obj) or SUBMODULE_PAGES.get(modname)):
                    continue   # documented as tf.<name> on the same page
                page, section = _topic(modname, name, obj)
            if section is None:
                section = modname
            pages.setdefault(page, {}).setdefault(section, []).append(
                (f"{modname}.{name}", obj))
    return {page: dict(sorted(sections.items(), key=lambda kv: _section_rank(kv[0])))
            for page, sections in pages.items()}


def _section_rank(section):
    """Sections in the order of TOP_LEVEL_TOPICS, then of LINALG_FAMILIES, then others."""
    titles = [t for _, _, t in TOP_LEVEL_TOPICS]
    titles.insert(titles.index("Data types and promotion") + 1, "Data types and constants")
    titles += [t for _, t, _, _ in LINALG_FAMILIES]
    return titles.index(section) if section in titles else len(titles)


def _section_module(qualnames):
    """The module the names of a section are relative to: their longest common prefix."""
    parts = [q.split(".")[:-1] for q in qualnames]
    common = parts[0]
    for p in parts[1:]:
        n = 0
        while n < min(len(common), len(p)) and common[n] == p[n]:
            n += 1
        common = common[:n]
    return ".".join(common) or "tenferro"


def _module_header(modname):
    """The module's docstring, declared once (the target of {mod} references)."""
    if modname == "tenferro":
        return [".. module:: tenferro", "",
                "The ``tenferro`` module is the array namespace (the Python array API "
                "standard 2024.12, ``tf.__array_api_version__``) and holds the tensor, the "
                "differentiation functions and the errors. Conventionally "
                "``import tenferro as tf``.", ""]
    return [f".. automodule:: {modname}", "   :no-members:", ""]


def _section_lines(title, entries, header_module=None):
    lines = _title(title, "-") if title else []
    if header_module:
        lines += _module_header(header_module)
    if title == "Data types and constants":
        lines += ["NumPy dtype objects (``tf.float64 == np.float64``), the array API "
                  "constants and ``newaxis`` (``None``).", ""]
        for qualname, obj in sorted(entries, key=lambda e: e[0]):
            lines += _entry(qualname, obj)
        return lines
    module = _section_module([q for q, _ in entries])
    ordered = sorted(entries, key=lambda e: e[0]) if module in ("tenferro",
                                                               "tenferro.linalg") else entries
    lines += [f".. currentmodule:: {module}", ""]
    lines += _summary_table([q[len(module) + 1:] for q, _ in ordered])
    for qualname, obj in ordered:
        lines += _entry(qualname, obj)
    return lines


# The module whose docstring opens a page or a section (where {mod} references land).
_PAGE_MODULE = {"tensors": "tenferro", "linalg": "tenferro.linalg"}
_SECTION_MODULE = {("transforms", "Forward mode and Hessian-vector products"): "tenferro.forward",
                   ("transforms", "Jacobians, Hessians, operators, checkpointing"):
                       "tenferro.functional"}


def _api_pages():
    placements = _placements()
    titles = {page: title for page, title, _ in PAGES}
    submodule_titles = dict(SUBMODULES)
    api_modules = set(public_api())
    pages, groups = {}, {}
    order = [page for page, _, _ in PAGES] + sorted(set(placements) - set(titles))
    for page in order:
        sections = placements.get(page)
        if not sections and page != "linalg":
            continue
        if page == "linalg" and "tenferro.linalg" not in api_modules:
            continue
        modname = f"tenferro.{page}"
        title = titles.get(page) or (f"{modname}: {submodule_titles[modname]}"
                                     if modname in submodule_titles else modname)
        lines = _title(title)
        header = _PAGE_MODULE.get(page)
        own = modname in api_modules and page not in ("linalg",) and not SUBMODULE_PAGES.get(
            modname)
        if own:
            header = modname
        if header:
            lines += _module_header(header)
        if page == "linalg":
            lines += ["Its functions, one page per family (the builders ``*_ad`` are on "
                      ":doc:`builders`):", "", ".. toctree::", "   :maxdepth: 1", ""]
            lines += [f"   {p}" for p, _, _ in PAGES
                      if p.startswith("linalg-") and placements.get(p)] + [""]
        for section, entries in (sections or {}).items():
            if len(sections) == 1 and not _SECTION_MODULE.get((page, section)):
                section = None                  # the page's title is the section's
            lines += _section_lines(section, entries, _SECTION_MODULE.get((page, section)))
        pages[page] = lines
        caption = next((c for p, _, c in PAGES if p == page), "Other")
        if caption is not None:
            groups.setdefault(caption, []).append(page)
    index = _title("API reference")
    index += ["Every public name, with its docstring, grouped by topic. These pages are "
              "generated from the code at build time (``docs/_ext/tenferro_docs.py``).", "",
              "Names of ``tenferro.autograd``, ``tenferro.custom``, ``tenferro.functional`` "
              "and ``tenferro.builders`` are all re-exported at top level and documented "
              "there; the builders of ``tenferro.linalg`` (``tf.linalg.svd_ad`` is "
              "``tf.svd_ad``) on :doc:`builders`.", ""]
    for caption, members in groups.items():
        index += [".. toctree::", f"   :caption: {caption}", "   :maxdepth: 1", ""]
        index += [f"   {m}" for m in members] + [""]
    pages["index"] = index
    return pages


def _write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_api_pages():
    out = DOCS / "api"
    pages = _api_pages()
    for stale in out.glob("*.rst"):
        if stale.stem not in pages:
            stale.unlink()
    for name, lines in pages.items():
        _write_if_changed(out / f"{name}.rst", "\n".join(lines))


# ---- examples ------------------------------------------------------------------------

def write_example_pages(example_args):
    """One page per examples/*.py. ``example_args`` maps a script's stem to the command
    line arguments it runs with at build time (``{outdir}`` is the folder it may write
    PNG files to); scripts not in it are shown without running them."""
    out = DOCS / "examples"
    scripts = sorted((REPO / "examples").glob("*.py"))
    for stale in out.glob("*.md"):
        if stale.stem != "index" and not (REPO / "examples" / f"{stale.stem}.py").exists():
            stale.unlink()
    for script in scripts:
        first = (ast.get_docstring(ast.parse(script.read_text())) or script.stem)
        title = first.split("\n")[0].rstrip(".")
        body = [f"# {script.stem}: {title}", "",
                f"```{{tenferro-example}} ../../examples/{script.name}"]
        if script.stem in example_args:
            body.append(":args: " + " ".join(example_args[script.stem]))
        else:
            body.append(":no-run:")
        body += ["```", ""]
        _write_if_changed(out / f"{script.stem}.md", "\n".join(body))
    index = ["# Examples", "",
             "Scripts from the repository's `examples/` folder. Those listed in "
             "`tenferro_example_args` (docs/conf.py) run at build time, some with smaller "
             "parameters than their defaults (the command is on the page), and the output "
             "shown is the output of that run; the others are shown as code. Every example "
             "checks its result against a reference and exits with status 1 when it is off "
             "(a failing example fails this build). Each card below shows the plot the "
             "example wrote (a thumbnail), its check's verdict, the run time of this build "
             "and its whole output.", "",
             "```{tenferro-gallery}", "```", "",
             "```{toctree}", ":maxdepth: 1", ""]
    index += [s.stem for s in scripts] + ["```", ""]
    _write_if_changed(out / "index.md", "\n".join(index))


class ExampleDirective(SphinxDirective):
    """``.. tenferro-example:: path/to/script.py`` with ``:args:`` (the command line; the
    token ``{outdir}`` becomes a folder for the files the script writes) or
    ``:no-run:``."""

    required_arguments = 1
    option_spec = {"args": directives.unchanged, "no-run": directives.flag,
                   "timeout": directives.positive_int}

    def _run(self, script, argv, shown):
        """Run the script; return the output nodes (text and the PNGs it wrote)."""
        result = []
        outdir = DOCS / "_generated" / script.stem
        shutil.rmtree(outdir, ignore_errors=True)
        outdir.mkdir(parents=True)
        cmd = [sys.executable, str(script)] + [a.replace("{outdir}", str(outdir))
                                               for a in argv]
        env = dict(os.environ, MPLBACKEND="Agg")
        # the limit is on CPU time (the run's own work), the wall-clock timeout only a
        # backstop: on a machine shared with other jobs an example gets a fraction of a
        # core, and a 3-s example has taken over 100 s of wall time
        cpu_limit = self.options.get("timeout", 120)

        def limit_cpu():
            import resource
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 5))

        import resource
        cpu0 = _children_cpu(resource)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=str(REPO), env=env, capture_output=True,
                                  text=True, timeout=10 * cpu_limit, preexec_fn=limit_cpu)
        except subprocess.TimeoutExpired as exc:
            raise ExtensionError(f"example {script.name} timed out: {exc}") from None
        seconds = time.perf_counter() - t0
        cpu = _children_cpu(resource) - cpu0
        if proc.returncode == -24:            # SIGXCPU
            raise ExtensionError(f"example {script.name} used more than {cpu_limit} s of "
                                 f"CPU time (make its build-time run smaller in "
                                 f"docs/conf.py):\n{proc.stdout}\n{proc.stderr}")
        if proc.returncode != 0:
            raise ExtensionError(f"example {script.name} exited with {proc.returncode}:\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        result.append(nodes.rubric(text="Output"))
        para = nodes.paragraph()
        para += nodes.Text("Output of ")
        para += nodes.literal(shown, shown)
        para += nodes.Text(f", run when these pages were built ({seconds:.1f} s of wall "
                           f"time, {cpu:.1f} s of CPU time, both including Python "
                           "start-up):")
        result.append(para)
        stdout = proc.stdout.replace(str(outdir) + os.sep, "")   # "wrote trg.png"
        result.append(nodes.literal_block(stdout, stdout, language="text"))
        pngs = sorted(outdir.glob("*.png"))
        for png in pngs:
            uri = "/" + png.relative_to(DOCS).as_posix()
            result.append(nodes.image(uri=uri, alt=f"{png.name}, written by {script.name}"))
        _record_for_gallery(script.stem, stdout, seconds, cpu, pngs[0] if pngs else None)
        return result

    def run(self):
        rel, script = self.env.relfn2path(self.arguments[0])
        script = Path(script)
        self.env.note_dependency(str(script))
        source = script.read_text()
        doc = ast.get_docstring(ast.parse(source)) or ""
        result = []
        # the docstring is plain text with some reST markup (``code``): show it as text
        container = nodes.container()
        paras = doc.split("\n\n")
        for para in paras[1:]:
            if para.startswith("    ") or "\n    " in para:
                result_block = nodes.literal_block(para, _dedent(para))
                container += result_block
            else:
                lines = para.splitlines()
                escape_plain_math(lines)
                self.state.nested_parse(StringList(lines, source=str(script)),
                                        self.content_offset, container)
        result += container.children
        argv = (self.options.get("args") or "").split()
        shown = " ".join(["python", f"examples/{script.name}"] + argv).replace(
            "{outdir}/", "")
        if "no-run" in self.options:
            result.append(nodes.paragraph(text="This example is not run when the "
                                               "documentation is built."))
        else:
            result += self._run(script, argv, shown)
        result.append(nodes.rubric(text="Source"))
        code = _without_docstring(source)
        result.append(nodes.literal_block(code, code, language="python"))
        return result


# ---- the gallery (docs/examples/index.md) ------------------------------------------------
# The examples run while their pages are read, which may be after the index is read; so
# the index holds a placeholder that is filled at doctree-resolved (all pages read), from
# what each run recorded (CARDS: the output; GALLERY: a thumbnail of its first PNG). The
# thumbnails live in a folder of html_static_path, which Sphinx copies after reading.

GALLERY = DOCS / "_generated" / "static" / "gallery"   # -> _build/html/_static/gallery/
CARDS = DOCS / "_generated" / "gallery_cards"          # each run's output (JSON)
THUMB_WIDTH = 320                                      # pixels


def _children_cpu(resource):
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _record_for_gallery(stem, stdout, seconds, cpu, png):
    """Write the example's card data: its output, run time and a thumbnail of ``png``."""
    import json
    GALLERY.mkdir(parents=True, exist_ok=True)
    CARDS.mkdir(parents=True, exist_ok=True)
    thumb = GALLERY / f"{stem}.png"
    thumb.unlink(missing_ok=True)
    if png is not None:
        import matplotlib.image
        width = matplotlib.image.imread(str(png)).shape[1]
        matplotlib.image.thumbnail(str(png), str(thumb), scale=min(1.0, THUMB_WIDTH / width))
    (CARDS / f"{stem}.json").write_text(json.dumps(
        {"stdout": stdout, "seconds": seconds, "cpu": cpu, "thumbnail": png is not None}))


class gallery_placeholder(nodes.General, nodes.Element):
    """Replaced by the gallery's HTML at doctree-resolved."""


class GalleryDirective(SphinxDirective):
    """``tenferro-gallery``: a grid of cards, one per examples/*.py, each linking to the
    example's page with the thumbnail of its plot and its output."""

    def run(self):
        return [gallery_placeholder()]


def _verdict(stdout):
    """The last line of the output that states the check's result."""
    lines = [ln for ln in stdout.splitlines()
             if re.search(r"\[OK\]|\[FAILED\]|\bok\b", ln)]
    return lines[-1].strip() if lines else ""


def _gallery_html():
    import html
    import json
    cards = []
    for script in sorted((REPO / "examples").glob("*.py")):
        stem = script.stem
        doc = ast.get_docstring(ast.parse(script.read_text())) or stem
        title = html.escape(doc.split("\n")[0].rstrip("."))
        data = CARDS / f"{stem}.json"
        info = json.loads(data.read_text()) if data.exists() else None
        card = [f'<div class="tf-card"><a href="{stem}.html"><b>{stem}</b></a><br>']
        if info and info["thumbnail"]:
            card.append(f'<a href="{stem}.html"><img src="../_static/gallery/{stem}.png" '
                        f'alt="plot of {stem}" width="{THUMB_WIDTH}"></a><br>')
        card.append(f"<small>{title}</small><br>")
        if info:
            verdict = html.escape(_verdict(info["stdout"]))
            card.append(f"<small>run at build time: {info['cpu']:.1f} s of CPU time "
                        f"({info['seconds']:.1f} s of wall time); "
                        f"<code>{verdict}</code></small>")
            card.append(f"<details><summary>output</summary><pre>"
                        f"{html.escape(info['stdout'])}</pre></details>")
        else:
            card.append("<small>not run when the documentation is built</small>")
        card.append("</div>")
        cards.append("".join(card))
    style = ("<style>.tf-gallery{display:flex;flex-wrap:wrap;gap:14px}"
             ".tf-card{width:340px;border:1px solid #ddd;padding:8px}"
             ".tf-card pre{font-size:9px;max-height:300px;overflow:auto}</style>")
    return style + '<div class="tf-gallery">' + "".join(cards) + "</div>"


def _on_doctree_resolved(app, doctree, docname):
    for node in doctree.findall(gallery_placeholder):
        node.replace_self(nodes.raw("", _gallery_html(), format="html"))


def _without_docstring(source):
    """The script without its module docstring (shown as text above the code)."""
    tree = ast.parse(source)
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(
            getattr(tree.body[0], "value", None), ast.Constant) and isinstance(
            tree.body[0].value.value, str):
        lines = source.splitlines(keepends=True)
        return "".join(lines[tree.body[0].end_lineno:]).lstrip("\n")
    return source


def _dedent(text):
    import textwrap
    return textwrap.dedent(text)


# ---- the op table of docs/rules.md -----------------------------------------------------
# Each registered op is listed with a link to the section of docs/rules.md that gives its
# formula (the anchor is the section heading's slug). The family of an op is found by its
# name first, then by the module that defines its rules (``op.vjp.__module__``, a prefix
# match, so a package split into submodules keeps its section). An op that matches
# nothing is reported: add its family here and a section to docs/rules.md.
FAMILY_SECTIONS = [              # the family sections of docs/rules.md, in the page's order
    "elementwise", "reductions-and-scans", "linear-maps", "in-place-updates-and-views",
    "einsum", "svd", "truncated-svd", "eigh", "eigsh-and-svds", "eig", "qr", "lu", "cholesky",
    "solve-and-inv", "solve_triangular", "det-and-slogdet", "pinv-and-lstsq", "matrix_exp",
    "sqrtm-and-logm", "solve_sylvester", "solve_banded", "norms", "products", "fft", "dct-and-dst", "convolution-and-lfilter",
    "special-functions", "integrate", "transforms-and-user-rules",
]
OP_FAMILY_BY_NAME = {
    "matrix_exp": "matrix_exp",
    "lazy_rule": "svd",
    # index choices (registry.index_op): integer results without a derivative
    "argsort": "linear-maps",
    "argmax": "linear-maps",
    "argmin": "linear-maps",
}
OP_FAMILY_BY_PREFIX = [          # (op name prefix, anchor)
    ("special.", "special-functions"),
    ("fft.", "fft"),
]
OP_FAMILY_BY_MODULE = [          # (module of the rules, anchor)
    ("tenferro._ops.elementwise", "elementwise"),
    ("tenferro._ops.pointwise", "elementwise"),     # the factory of elementwise's rules
    ("tenferro._ops.reductions", "reductions-and-scans"),
    ("tenferro._ops.structure", "linear-maps"),
    ("tenferro._ops.manipulation", "linear-maps"),
    ("tenferro._ops.sorting", "linear-maps"),
    ("tenferro._ops.sets", "linear-maps"),
    ("tenferro._ops.creation", "linear-maps"),
    ("tenferro._ops.inplace", "in-place-updates-and-views"),
    ("tenferro._ops.views", "in-place-updates-and-views"),
    ("tenferro._sparse", "in-place-updates-and-views"),
    ("tenferro._ops.einsum", "einsum"),
    ("tenferro.linalg.svd_truncated", "truncated-svd"),
    ("tenferro.linalg.svd", "svd"),
    ("tenferro.linalg.eigh", "eigh"),
    ("tenferro.linalg.eigsh", "eigsh-and-svds"),
    ("tenferro.linalg.svds", "eigsh-and-svds"),
    ("tenferro.linalg._iterative", "eigsh-and-svds"),
    ("tenferro.linalg.eig", "eig"),
    ("tenferro.linalg.qr", "qr"),
    ("tenferro.linalg.lu", "lu"),
    ("tenferro.linalg.cholesky", "cholesky"),
    ("tenferro.linalg.solve", "solve-and-inv"),
    ("tenferro.linalg.triangular", "solve_triangular"),
    ("tenferro.linalg.det", "det-and-slogdet"),
    ("tenferro.linalg.lstsq", "pinv-and-lstsq"),
    ("tenferro.linalg.matfuncs", "norms"),
    ("tenferro.linalg.schur_funcs", "sqrtm-and-logm"),
    ("tenferro.linalg.sylvester", "solve_sylvester"),
    ("tenferro.linalg.banded", "solve_banded"),
    ("tenferro.linalg.products", "products"),
    ("tenferro.fft", "fft"),
    ("tenferro.signal", "convolution-and-lfilter"),
    ("tenferro.ndimage", "convolution-and-lfilter"),
    ("tenferro.stats", "stats"),
    ("tenferro.special", "special-functions"),
    ("tenferro.integrate", "integrate"),
    ("tenferro.custom", "transforms-and-user-rules"),
    ("tenferro.functional", "transforms-and-user-rules"),
    ("tenferro.compile", "transforms-and-user-rules"),
]


def op_family(name, op):
    """The anchor of the docs/rules.md section of the op ``name``, or None."""
    if name in OP_FAMILY_BY_NAME:
        return OP_FAMILY_BY_NAME[name]
    for prefix, anchor in OP_FAMILY_BY_PREFIX:
        if name.startswith(prefix):
            return anchor
    module = getattr(getattr(op, "vjp", None), "__module__", None) or ""
    for prefix, anchor in OP_FAMILY_BY_MODULE:
        if module == prefix or module.startswith(prefix + "."):
            return anchor
    return None


def _cell(*children):
    entry = nodes.entry()
    para = nodes.paragraph()
    for child in children:
        para += child
    entry += para
    return entry


class OpTableDirective(SphinxDirective):
    """``.. tenferro-op-table::``: every registered op, its family section (a link within
    the page), the module of its rules, the columns of ``tenferro.rules.table()`` and the
    op's own one-line note (``Op.doc``).

    With ``:coverage:`` (the users' page, docs/guide/op_coverage.md): the family links to
    its section of docs/rules.md, the rules' module is left out, and a column says
    whether ``tf.compile`` can replay the op (``Op.replay``; a function using an op
    without one runs eagerly)."""

    has_content = False
    option_spec = {"coverage": directives.flag}

    def _family_uri(self, anchor):
        if "coverage" not in self.options:
            return "#" + anchor
        return self.env.app.builder.get_relative_uri(self.env.docname, "rules") + "#" + anchor

    def run(self):
        from tenferro._ops.registry import OPS
        from tenferro.rules import table
        coverage = "coverage" in self.options
        order = {anchor: i for i, anchor in enumerate(FAMILY_SECTIONS)}
        if coverage:
            head = ("op", "family", "reverse", "forward", "2nd order", "complex",
                    "batched", "tf.compile", "note")
            widths = (14, 12, 5, 5, 5, 5, 5, 6, 36)
        else:
            head = ("op", "family", "rules in", "vjp", "jvp", "2nd order", "complex",
                    "batched", "note")
            widths = (14, 10, 14, 4, 4, 6, 6, 6, 36)
        rows = []
        for row in table():
            name, flags = row[0], tuple(row[1:6])   # vjp, jvp, 2nd order, complex, batched
            op = OPS[name]
            anchor = op_family(name, op)
            if anchor is None:
                module = getattr(getattr(op, "vjp", None), "__module__", "?")
                logger.warning(f"op {name!r} (rules in {module}) has no family section in "
                               "docs/rules.md: add its module to OP_FAMILY_BY_MODULE in "
                               "docs/_ext/tenferro_docs.py and its formula to the page",
                               location=self.get_location())
                continue
            module = getattr(getattr(op, "vjp", None), "__module__", "") or ""
            if coverage:
                flags = flags + ("yes" if op.replay is not None else "-",)
            rows.append((order.get(anchor, len(order)), name, anchor, module, flags,
                         getattr(op, "doc", "") or ""))
        rows.sort(key=lambda r: (r[0], r[1]))
        tbl = nodes.table(classes=["tenferro-op-table"])
        group = nodes.tgroup(cols=len(head))
        tbl += group
        for width in widths:
            group += nodes.colspec(colwidth=width)
        thead = nodes.thead()
        row = nodes.row()
        for text in head:
            row += _cell(nodes.Text(text))
        thead += row
        group += thead
        body = nodes.tbody()
        for _, name, anchor, module, flags, doc in rows:
            row = nodes.row()
            row += _cell(nodes.literal(name, name))
            ref = nodes.reference("", anchor.replace("-", " "), internal=True,
                                  refuri=self._family_uri(anchor))
            row += _cell(ref)
            if not coverage:
                path = module.replace(".", "/") + ".py" if module else ""
                row += _cell(nodes.literal(path, path))
            for flag in flags:
                row += _cell(nodes.Text(flag))
            row += _cell(nodes.Text(doc))
            body += row
        group += body
        para = nodes.paragraph()
        para += nodes.Text(f"{len(rows)} ops, generated from the registry when these pages "
                           "were built (the same rows as ")
        para += nodes.literal("python -m tenferro.rules", "python -m tenferro.rules")
        para += nodes.Text(")")
        if coverage:
            count = [sum(r[4][i] == "yes" for r in rows) for i in range(len(rows[0][4]))]
            para += nodes.Text(
                f": {count[0]} with a reverse rule, {count[1]} with a forward rule, "
                f"{count[2]} with second order, {count[3]} accept complex input, "
                f"{count[4]} batch over leading axes, {count[5]} replayed by tf.compile.")
        else:
            para += nodes.Text(".")
        return [para, tbl]


# ---- docstrings as plain-text math ---------------------------------------------------
# tenferro's docstrings are prose with ``code`` spans and formulas written in plain text:
# |x|, |det|, (*batch, n, n), x* = g(x*, *params). reST reads |x| as a substitution and
# "(*batch" as the start of an emphasis, and warns. Before napoleon and reST see a
# docstring, this hook makes such characters literal: every "|", and every "*" that would
# open an emphasis with no closing "*" (a complete *word* emphasis is kept). Literal
# blocks (after "::", directives, >>> examples) and ``code`` / `role` spans are untouched.

_PROTECTED = re.compile(r"``.+?``|:[\w:.-]+:`[^`]*`|`[^`]*`_?|(?<![\w\\*])\*(?=[^\s*])[^*\n]*?"
                        r"(?<=\S)\*(?![\w*])")
_STAR_START = re.compile(r"(?:(?<=^)|(?<=[\s(\[{<'\"/:=,-]))(\*+)(?=\S)")


def _escape_prose(text):
    text = text.replace("|", "\\|")
    return _STAR_START.sub(lambda m: "\\*" * len(m.group(1)), text)


def _escape_line(line):
    out, pos = [], 0
    for m in _PROTECTED.finditer(line):
        out.append(_escape_prose(line[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape_prose(line[pos:]))
    return "".join(out)


def escape_plain_math(lines):
    """Escape, in place, the reST-active characters of plain-text formulas (see above)."""
    literal_indent = None      # indentation of the paragraph that opened a literal block
    pending = None
    in_doctest = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if pending is not None and stripped:
            if indent > pending:
                literal_indent = pending
                pending = None
                continue
            pending = None
        if stripped.startswith(">>>"):
            in_doctest = True
        if in_doctest:
            if not stripped:
                in_doctest = False
            continue
        if stripped.startswith(".. ") or stripped.endswith("::"):
            pending = indent
            if stripped.startswith(".. "):
                continue
        lines[i] = _escape_line(line)


_PROPERTY_DOCS = {}


def _on_process_docstring(app, what, name, obj, options, lines):
    escape_plain_math(lines)
    if what in ("property", "attribute"):
        _PROPERTY_DOCS[name] = list(lines)


def _after_napoleon(app, what, name, obj, options, lines):
    # napoleon reads "where the payload lives: always cpu" in a property's docstring as
    # "type: description"; tenferro's property docstrings are prose: keep them as written
    if name in _PROPERTY_DOCS:
        lines[:] = _PROPERTY_DOCS.pop(name)


def _on_config_inited(app, config):
    # before Sphinx lists the source files, so the generated pages are found
    write_api_pages()
    write_example_pages(config.tenferro_example_args)
    # the gallery's thumbnails (before Sphinx checks html_static_path, priority 800);
    # a removed example leaves no card behind
    for folder in (GALLERY, CARDS):
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.iterdir():
            if not (REPO / "examples" / f"{stale.stem}.py").exists():
                stale.unlink()
    static = str(GALLERY.parent.relative_to(DOCS))
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def setup(app):
    app.add_config_value("tenferro_example_args", {}, "env")
    app.add_directive("tenferro-example", ExampleDirective)
    app.add_node(gallery_placeholder)
    app.add_directive("tenferro-gallery", GalleryDirective)
    app.connect("doctree-resolved", _on_doctree_resolved)
    app.add_directive("tenferro-op-table", OpTableDirective)
    app.connect("config-inited", _on_config_inited)
    # before napoleon (priority 500), which escapes *args itself and writes *type*
    app.connect("autodoc-process-docstring", _on_process_docstring, priority=400)
    app.connect("autodoc-process-docstring", _after_napoleon, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
