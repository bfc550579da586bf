"""Compiled kernels (``<name>.pyx``) and their pure-Python twins (``<name>_twin.py``).

``load(name)`` is the one place that picks between them: the compiled module
``tenferro._kernels.<name>``, or its twin ``tenferro._kernels.<name>_twin`` when the
environment variable ``TENFERRO_PURE_PYTHON`` is set (non-empty; read once, at import).
Every user of a kernel imports it through ``load``.
"""
import importlib
import os
from typing import Any

__all__ = ["PURE_PYTHON", "load"]

PURE_PYTHON = bool(os.environ.get("TENFERRO_PURE_PYTHON"))

_NAMES = ("tape", "lapack_base", "lapack_eig", "lapack_qr", "lapack_lu_chol", "spectral",
          "triangular_backprop", "inverse", "expm", "small_ops", "lowered")


def load(name: str) -> Any:
    """The kernel module ``name`` (one of ``_NAMES``): compiled, or its Python twin under
    ``TENFERRO_PURE_PYTHON=1``."""
    if name not in _NAMES:
        raise ValueError(f"no kernel module {name!r}; the kernels are {', '.join(_NAMES)}")
    if PURE_PYTHON:
        return importlib.import_module(f"{__name__}.{name}_twin")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ImportError as e:  # pragma: no cover - a source tree without a build
        raise ImportError(
            f"tenferro's compiled kernel {name!r} (tenferro/_kernels/{name}.pyx) is missing: "
            "install the package (pip install .) and run from outside the source tree, or "
            "set TENFERRO_PURE_PYTHON=1 for the Python twins") from e
