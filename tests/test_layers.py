"""The package's layers, fenced: every import of tenferro/ read with ``ast``.

A module imports, at module level, only from its own layer and the layers below it
(``if TYPE_CHECKING:`` imports are free). An import inside a function stays only with a
comment naming the import cycle it breaks (the word "cycle" on its line or the line
above); there is no import cycle at module level. Only the core and the AD API read a
Tensor's graph slots (``._node``, ``._index``, ``._fw``) or the thread state ``STATE``;
every rule and transform asks ``tenferro._rule_api`` instead.

=====  ==========  =========================================================================
layer  name        modules (what they may import: their layer and those above in this table)
=====  ==========  =========================================================================
0      base        ``_errors``, ``_dtypes``, ``_threads``, ``builders`` (a deferred call,
                   no tenferro import: the ops' ``*_ad`` builders)
1      kernels     ``_kernels`` and ``_kernels/*``: the Cython kernels (``.pyx``, ``.pxd``)
                   and their NumPy twins; no Tensor, no op name
2      core        ``_state`` (grad mode, dual level), ``_sparse`` (the cotangent container),
                   ``_engine`` (recording, forward tangents, the tracking tests),
                   ``_tensor``, ``_ops/registry`` (Op, defop, the NumPy dispatch tables)
3      ad          ``autograd`` (grad, backward, grad mode), ``forward`` (dual levels, jvp,
                   hvp), ``_rule_api`` (what a rule may ask of the engine; it runs nested
                   reverse passes, hence this layer)
4      ops         ``_ops/*`` (elementwise, reductions, structure, views, ...), ``linalg``,
                   ``special``, ``stats``, ``fft``, ``integrate``, ``signal``, ``ndimage``
5      transforms  ``custom`` (custom_vjp/jvp, custom_root), ``functional`` (jacobian,
                   hessian, checkpoint, linear_operator), ``distributed``
6      facade      ``__init__``, ``__main__``, ``_numpy`` (NumPy's functions on tensors),
                   ``testing``, ``rules``
=====  ==========  =========================================================================

``_ops/__init__.py`` holds the core's registry and the ops, so it imports nothing.
The graph slots may be read by the core, the AD API, ``_kernels/tape_twin.py`` (the
tape's Python twin) and ``_ops/views.py`` (the in-place engine: views follow their base's
graph place).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "tenferro"

LAYERS = ["base", "kernels", "core", "ad", "ops", "transforms", "facade"]

# module (or "package.*" for every module below it) -> layer; the most specific rule wins
LAYER_OF = {
    "tenferro._errors": "base",
    "tenferro._dtypes": "base",
    "tenferro._threads": "base",
    "tenferro.builders": "base",
    "tenferro._kernels": "kernels",
    "tenferro._kernels.*": "kernels",
    "tenferro._state": "core",
    "tenferro._sparse": "core",
    "tenferro._engine": "core",
    "tenferro._capture": "core",
    "tenferro._lower": "core",
    "tenferro._tensor": "core",
    "tenferro._ops.registry": "core",
    "tenferro.autograd": "ad",
    "tenferro.forward": "ad",
    "tenferro._rule_api": "ad",
    "tenferro._ops": "ops",
    "tenferro._ops.*": "ops",
    "tenferro.linalg": "ops",
    "tenferro.linalg.*": "ops",
    "tenferro.special": "ops",
    "tenferro.special.*": "ops",
    "tenferro.stats": "ops",
    "tenferro.fft": "ops",
    "tenferro.integrate._quadrature": "ops",
    "tenferro.signal": "ops",
    "tenferro.ndimage": "ops",
    "tenferro.custom": "transforms",
    "tenferro.functional": "transforms",
    "tenferro.distributed": "transforms",
    "tenferro.compile": "transforms",
    "tenferro.integrate": "transforms",
    "tenferro.integrate._ode": "transforms",
    "tenferro": "facade",
    "tenferro.__main__": "facade",
    "tenferro._numpy": "facade",
    "tenferro._numpy.*": "facade",
    "tenferro.testing": "facade",
    "tenferro.rules": "facade",
}

# the modules that may read a Tensor's graph slots and the thread state
INTERNALS_ALLOWED = {"tenferro._state", "tenferro._sparse", "tenferro._engine", "tenferro._capture",
                     "tenferro._tensor", "tenferro._ops.registry", "tenferro.autograd",
                     "tenferro.forward", "tenferro._rule_api", "tenferro._kernels.tape_twin",
                     "tenferro._ops.views"}
INTERNAL_ATTRS = {"_node", "_index", "_fw", "STATE"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


PY_FILES = sorted(PKG.rglob("*.py"))
CY_FILES = sorted(list(PKG.rglob("*.pyx")) + list(PKG.rglob("*.pxd")))
MODULES = {_module_name(p) for p in PY_FILES} | {_module_name(p) for p in CY_FILES}
PACKAGES = {_module_name(p) for p in PY_FILES if p.name == "__init__.py"}


def layer_of(module: str) -> str | None:
    """The layer of a module by LAYER_OF (None: not mapped)."""
    if module in LAYER_OF:
        return LAYER_OF[module]
    parts = module.split(".")
    for k in range(len(parts) - 1, 0, -1):
        rule = ".".join(parts[:k]) + ".*"
        if rule in LAYER_OF:
            return LAYER_OF[rule]
    return None


def _rank(module: str) -> int:
    layer = layer_of(module)
    assert layer is not None, module
    return LAYERS.index(layer)


class _Import:
    """One import of a tenferro module: where, what, and how it runs."""

    def __init__(self, path: Path, line: int, source: str, target: str, in_function: bool,
                 type_checking: bool) -> None:
        self.path, self.line, self.source, self.target = path, line, source, target
        self.in_function, self.type_checking = in_function, type_checking

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _targets(source: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The tenferro modules an import statement names (a name imported from a module is
    the module itself; a submodule imported from a package is the submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "tenferro"]
    if node.level:
        base = source.split(".") if is_package else source.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    if module.split(".")[0] != "tenferro":
        return []
    out = []
    for a in node.names:
        sub = f"{module}.{a.name}"
        out.append(sub if sub in MODULES else module)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def _imports(path: Path) -> list[_Import]:
    source = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[_Import] = []

    def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for t in _targets(source, path.name == "__init__.py", node):
                found.append(_Import(path, node.lineno, source, t, in_function,
                                     type_checking))
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, in_function, True)
            for child in node.orelse:
                visit(child, in_function, type_checking)
            return
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner, type_checking)

    visit(tree, False, False)
    return found


IMPORTS = [imp for p in PY_FILES for imp in _imports(p)]
RUNTIME = [imp for imp in IMPORTS if not imp.in_function and not imp.type_checking]


def _inert(package: str) -> bool:
    """A package whose __init__ imports no tenferro module (importing a module inside it
    runs nothing else)."""
    return not any(imp.source == package for imp in RUNTIME)


def test_every_module_has_a_layer():
    unmapped = sorted(m for m in MODULES if layer_of(m) is None)
    assert not unmapped, (f"modules without a layer: {unmapped}; add them to LAYER_OF in "
                          f"tests/test_layers.py (and to its docstring's table)")


def test_module_level_imports_go_down():
    bad = []
    for imp in RUNTIME:
        # the module itself, and the packages Python imports on the way to it
        parts = imp.target.split(".")
        chain = [imp.target] + [".".join(parts[:k]) for k in range(2, len(parts))
                                if ".".join(parts[:k]) in PACKAGES
                                and not imp.source.startswith(".".join(parts[:k]) + ".")
                                and imp.source != ".".join(parts[:k])]
        for target in chain:
            if target != imp.target and _inert(target):
                continue
            if _rank(target) > _rank(imp.source):
                bad.append(f"{imp.where()}: {imp.source} ({layer_of(imp.source)}) imports "
                           f"{target} ({layer_of(target)})")
    assert not bad, ("upward imports at module level (import upward only under "
                     "`if TYPE_CHECKING:`, or move the code down):\n" + "\n".join(bad))


def test_cython_kernels_import_only_base_and_kernels():
    pattern = re.compile(r"^\s*(?:from\s+(tenferro[\w.]*)\s+c?import\s+([\w, ()]+)|"
                         r"c?import\s+(tenferro[\w.]*))", re.M)
    bad = []
    for path in CY_FILES:
        text = path.read_text(encoding="utf-8")
        for m in pattern.finditer(text):
            module = m.group(1) or m.group(3)
            names = [n.strip(" ()") for n in (m.group(2) or "").split(",") if n.strip(" ()")]
            targets = [f"{module}.{n}" if f"{module}.{n}" in MODULES else module
                       for n in names] or [module]
            line = text.count("\n", 0, m.start()) + 1
            for t in targets:
                if _rank(t) > LAYERS.index("kernels"):
                    bad.append(f"{path.relative_to(ROOT)}:{line}: imports {t} "
                               f"({layer_of(t)})")
    assert not bad, "kernels importing above their layer:\n" + "\n".join(bad)


def test_imports_inside_functions_name_the_cycle_they_break():
    bad = []
    for imp in IMPORTS:
        if not imp.in_function or imp.type_checking:
            continue
        lines = imp.path.read_text(encoding="utf-8").splitlines()
        near = lines[imp.line - 1] + " " + (lines[imp.line - 2] if imp.line >= 2 else "")
        if "cycle" not in near.lower():
            bad.append(f"{imp.where()}: {imp.source} imports {imp.target} inside a "
                       "function")
    assert not bad, ("imports inside functions without a comment naming the import cycle "
                     "they break (move them to the top of the module, or say `cycle: ...` "
                     "on the line or the line above):\n" + "\n".join(bad))


def test_no_import_cycle_at_module_level():
    graph: dict[str, set[str]] = {}
    for imp in RUNTIME:
        if imp.target != imp.source:
            graph.setdefault(imp.source, set()).add(imp.target)
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    where = {(imp.source, imp.target): imp.where() for imp in RUNTIME}
    lines = []
    for comp in cycles:
        edges = [f"  {where[(a, b)]}: {a} -> {b}" for a in comp for b in comp
                 if (a, b) in where]
        lines.append(" <-> ".join(comp) + "\n" + "\n".join(edges))
    assert not cycles, "import cycles at module level:\n" + "\n".join(lines)


def _internal_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute) and node.attr in INTERNAL_ATTRS:
            name = "." + node.attr
        elif isinstance(node, ast.Name) and node.id == "STATE":
            name = "STATE"
        elif isinstance(node, ast.ImportFrom) and any(a.name == "STATE" for a in node.names):
            name = "STATE"
        if name is not None:
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    return out


def test_only_the_core_reads_graph_internals():
    bad = [r for p in PY_FILES if _module_name(p) not in INTERNALS_ALLOWED
           for r in _internal_reads(p)]
    assert not bad, ("graph internals read outside the core (use tenferro._rule_api: "
                     "is_tracked, tangent_of, Cut, ...):\n" + "\n".join(bad))


@pytest.mark.parametrize("module", sorted(INTERNALS_ALLOWED))
def test_internals_allow_list_names_real_modules(module):
    assert module in MODULES
    assert layer_of(module) in ("core", "ad", "kernels") or module == "tenferro._ops.views"


def test_the_checks_see_what_they_check():
    # the parser finds the imports it is meant to fence (a check that finds nothing
    # passes vacuously)
    assert any(imp.source == "tenferro._tensor" and imp.target == "tenferro._engine"
               for imp in RUNTIME)
    assert any(imp.in_function and imp.source == "tenferro._tensor" for imp in IMPORTS)
    assert any(imp.type_checking and imp.source == "tenferro._tensor" for imp in IMPORTS)
    assert _internal_reads(PKG / "_engine.py")
    assert layer_of("tenferro._ops.registry") == "core"
    assert layer_of("tenferro._ops.elementwise") == "ops"


def test_linalg_helpers_have_one_home():
    # mH is linalg/_common.py's (Tensor.mH, the array API property, is _ops/structure.py's
    # _mH: a new tensor through the conj op); eps_of and the machine-epsilon table are
    # _dtypes.py's
    homes = {"mH": {"tenferro.linalg._common"}, "_mH": {"tenferro._ops.structure"},
             "eps_of": {"tenferro._dtypes"}}
    tables = {"EPS", "_EPS"}
    bad = []
    for path in PY_FILES:
        module = _module_name(path)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:   # module level
            if isinstance(node, ast.FunctionDef) and node.name in homes \
                    and module not in homes[node.name]:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: def {node.name}")
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and module != "tenferro._dtypes":
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id in tables for t in targets) \
                        and isinstance(node.value, (ast.Dict, ast.DictComp)):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: an eps table")
    assert not bad, ("a second copy of a helper with a home (import it from there):\n"
                     + "\n".join(bad))

