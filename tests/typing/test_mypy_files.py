"""Every module of the package is type-checked: pyproject.toml's [tool.mypy] ``files`` (the
list CI's ``mypy --strict`` runs on) names every .py and .pyi file under tenferro/, so a new
module cannot land untyped by being left off the list."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _mypy_files():
    text = (ROOT / "pyproject.toml").read_text()
    section = text[text.index("[tool.mypy]"):]
    body = section[section.index("files = ["):]
    body = body[:body.index("]")]
    return set(re.findall(r'"([^"]+)"', body))


def test_every_module_is_type_checked():
    package = {p.relative_to(ROOT).as_posix()
               for ext in ("*.py", "*.pyi") for p in (ROOT / "tenferro").rglob(ext)}
    assert package, "found no modules under tenferro/ (test run from an unexpected place?)"
    missing = package - _mypy_files()
    assert not missing, (f"modules not in pyproject.toml's [tool.mypy] files (make them "
                         f"clean under mypy --strict and add them): {sorted(missing)}")


def test_every_listed_file_exists():
    gone = {f for f in _mypy_files() if not (ROOT / f).exists()}
    assert not gone, f"pyproject.toml's [tool.mypy] files lists missing files: {sorted(gone)}"
