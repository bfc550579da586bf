"""The methods, operators and properties attached to Tensor at import (registry.METHODS and
the properties the op modules set) are declared for type checkers in the ``if
TYPE_CHECKING:`` block of the Tensor class, so that ``mypy --strict`` sees them
(tests/typing/usage.py, CI stage "typing"). A method registered without a declaration
fails here."""
import ast
import inspect

import tenferro as tf
from tenferro import _tensor
from tenferro._ops import registry

# attached with `Tensor.<name> = property(...)` by _ops.structure, _ops.elementwise and
# _ops.inplace rather than through registry.METHODS
PROPERTIES = {"T", "mT", "mH", "real", "imag", "at"}


def _declared():
    """Names defined in the `if TYPE_CHECKING:` block(s) of class Tensor in _tensor.py."""
    tree = ast.parse(inspect.getsource(_tensor))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    names = set()
    for node in cls.body:
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            names |= {d.name for d in node.body if isinstance(d, ast.FunctionDef)}
    return names


def test_every_installed_method_is_declared():
    declared = _declared()
    missing = (set(registry.METHODS) | PROPERTIES) - declared
    assert not missing, (f"Tensor members installed at import but not declared in the "
                         f"TYPE_CHECKING block of tenferro/_tensor.py: {sorted(missing)}")


def test_every_declaration_exists_at_runtime():
    # a declaration of a name that tenferro does not attach would lie to type checkers
    extra = {n for n in _declared() if not hasattr(tf.Tensor, n)}
    assert not extra, f"declared for type checkers but absent at runtime: {sorted(extra)}"


def _keyword_names(fn_node):
    """(keyword-capable parameter names after self, number of positional-only ones after
    self) of a declaration; ``*args`` appears as ``"*args"``."""
    a = fn_node.args
    positional = [x.arg for x in a.posonlyargs + a.args][1:]
    n_posonly = max(0, len(a.posonlyargs) - 1)
    names = positional[n_posonly:]
    if a.vararg is not None:
        names.append("*" + a.vararg.arg)
    return names + [x.arg for x in a.kwonlyargs], n_posonly


def test_declared_signatures_match_the_installed_functions():
    # every name a caller may pass by keyword is the installed function's; a declaration
    # may only make leading parameters positional-only (the operators: t.__add__(u))
    tree = ast.parse(inspect.getsource(_tensor))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    wrong = []
    for node in cls.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            continue
        for d in node.body:
            if not isinstance(d, ast.FunctionDef) or d.name not in registry.METHODS:
                continue
            params = list(inspect.signature(registry.METHODS[d.name]).parameters.values())
            runtime = ["*" + p.name if p.kind == p.VAR_POSITIONAL else p.name
                       for p in params[1:]
                       if p.kind not in (p.POSITIONAL_ONLY, p.VAR_KEYWORD)]
            declared, n_posonly = _keyword_names(d)
            if declared != runtime[n_posonly:]:
                wrong.append(f"{d.name}: declared {declared}, installed {runtime}")
    assert not wrong, "\n".join(wrong)


def test_the_declarations_do_not_run():
    # the block is for type checkers only: the installed functions are the registry's
    for name, fn in registry.METHODS.items():
        assert getattr(tf.Tensor, name) is fn, name
