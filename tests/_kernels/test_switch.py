"""tenferro._kernels.load: the one switch between the compiled kernels and their Python
twins (``<name>_twin.py``), and the kernels' place at the bottom of the import graph."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tenferro import _kernels

NAMES = ["tape", "lapack_base", "lapack_eig", "lapack_qr", "lapack_lu_chol", "spectral",
         "triangular_backprop", "inverse", "expm", "small_ops", "lowered"]
SOURCE = Path(__file__).resolve().parents[2] / "tenferro"


def _public_functions(module):
    """The public callables a module defines itself (not the ones it imports)."""
    return {n for n, v in vars(module).items()
            if not n.startswith("_") and callable(v)
            and getattr(v, "__module__", None) == module.__name__}


@pytest.mark.parametrize("name", NAMES)
def test_twin_has_every_public_function_of_the_compiled_module(name):
    compiled = pytest.importorskip(f"tenferro._kernels.{name}")
    twin = __import__(f"tenferro._kernels.{name}_twin", fromlist=["_"])
    missing = _public_functions(compiled) - set(vars(twin))
    assert not missing, f"{name}_twin.py lacks {sorted(missing)}"
    assert _public_functions(compiled)      # the comparison is not vacuous


@pytest.mark.skipif(_kernels.PURE_PYTHON, reason="the default (compiled) switch")
@pytest.mark.parametrize("name", NAMES)
def test_load_gives_the_compiled_module_by_default(name):
    mod = _kernels.load(name)
    assert mod.__name__ == f"tenferro._kernels.{name}"
    assert not mod.__file__.endswith(".py")


def test_load_rejects_an_unknown_name():
    with pytest.raises(ValueError, match="no kernel module 'lapak'"):
        _kernels.load("lapak")


# what each user of a kernel binds, and the twin function it must be under the switch
USERS = {
    "tenferro._engine": [("Node", "tape", "Node"), ("run_backward", "tape", "run_backward"),
                         ("grad_plain", "tape", "grad_plain"), ("owned", "tape", "owned")],
    "tenferro.linalg._lapack": [("svd", "lapack_eig", "svd"),
                                ("potrf", "lapack_lu_chol", "potrf"),
                                ("getrs", "lapack_lu_chol", "getrs"),
                                ("qr", "lapack_qr", "qr")],
    "tenferro.linalg._common": [("_all_finite", "lapack_base", "all_finite")],
    "tenferro.linalg.svd": [("_kernel", "spectral", None)],
    "tenferro.linalg.qr": [("_backprop_kernel", "triangular_backprop", "qr_backprop")],
    "tenferro.linalg.cholesky": [("_backprop_kernel", "triangular_backprop",
                                  "cholesky_backprop")],
    "tenferro.linalg.lu": [("_backprop_kernel", "triangular_backprop", "lu_backprop")],
    "tenferro.linalg.triangular": [("_backprop_kernel", "triangular_backprop",
                                    "solve_triangular_backprop"),
                                   ("_trsm", "triangular_backprop", "trsm")],
    "tenferro.linalg.solve": [("_lu_inverse", "inverse", "lu_inverse")],
    "tenferro.linalg.det": [("_lu_det", "inverse", "lu_det")],
    "tenferro.linalg.matfuncs": [("expm_pade", "expm", "expm_pade"),
                                 ("expm_frechet", "expm", "expm_frechet")],
}

_CHECK_USERS = """
import importlib, json, sys
users = json.loads(sys.argv[1])
wrong = []
for modname, binds in users.items():
    mod = importlib.import_module(modname)
    for attr, kernel, fn in binds:
        twin = importlib.import_module("tenferro._kernels." + kernel + "_twin")
        want = twin if fn is None else getattr(twin, fn)
        if getattr(mod, attr) is not want:
            wrong.append(modname + "." + attr)
import numpy as np, tenferro as tf
x = tf.tensor(np.array([[4.0, 1.0], [1.0, 3.0]]), requires_grad=True)
(g,) = tf.grad(tf.linalg.cholesky(x).sum() + tf.linalg.svd(x).s.sum(), x)
print(json.dumps({"wrong": wrong, "pure": tf._kernels.PURE_PYTHON,
                  "node": type(x.exp()._node).__module__, "g": g.numpy().tolist()}))
"""


def test_pure_python_switch_swaps_every_user_to_the_twins(tmp_path):
    """TENFERRO_PURE_PYTHON=1: every module that binds a kernel binds its twin, and
    tenferro computes the same gradient as with the compiled kernels."""
    import numpy as np

    import tenferro as tf
    env = dict(os.environ, TENFERRO_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", _CHECK_USERS, json.dumps(USERS)], env=env,
                         capture_output=True, text=True, check=True,
                         cwd=tmp_path)   # not the source tree
    res = json.loads(out.stdout)
    assert res["wrong"] == []
    assert res["pure"] is True
    assert res["node"] == "tenferro._kernels.tape_twin"
    x = tf.tensor(np.array([[4.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    (g,) = tf.grad(tf.linalg.cholesky(x).sum() + tf.linalg.svd(x).s.sum(), x)
    np.testing.assert_allclose(res["g"], g.numpy(), rtol=1e-12, atol=1e-14)


def test_only_the_switch_reads_the_environment_variable():
    sources = sorted(SOURCE.rglob("*.py")) + sorted(SOURCE.rglob("*.pyx"))
    assert len(sources) > 20
    readers = set()
    for path in sources:
        text = path.read_text(encoding="utf-8")
        # os.environ.get("TENFERRO_PURE_PYTHON"), os.environ[...], os.getenv(...)
        if re.search(r"(environ|getenv)\W[^\n]*TENFERRO_PURE_PYTHON", text):
            readers.add(path.relative_to(SOURCE).as_posix())
    assert readers == {"_kernels/__init__.py"}


_IMPORT_KERNELS_ONLY = """
import importlib, importlib.util, json, sys, types
spec = importlib.util.find_spec("tenferro")
pkg = types.ModuleType("tenferro")          # the package without running its __init__,
pkg.__path__ = list(spec.submodule_search_locations)   # which imports everything
pkg.__spec__ = spec
sys.modules["tenferro"] = pkg
for name in json.loads(sys.argv[1]):
    importlib.import_module("tenferro._kernels." + name)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("tenferro"))))
"""


@pytest.mark.parametrize("kind", ["twin", "compiled"])
def test_kernels_do_not_import_the_tensor_layer(tmp_path, kind):
    """The kernels (and their twins) import only tenferro._errors, tenferro._threads, the
    native workers (_workers) and each other: no import circle through _engine, linalg, _ops or _tensor."""
    if kind == "compiled":
        pytest.importorskip("tenferro._kernels.tape")
    names = [n + "_twin" if kind == "twin" else n for n in NAMES]
    out = subprocess.run([sys.executable, "-c", _IMPORT_KERNELS_ONLY, json.dumps(names)],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    loaded = set(json.loads(out.stdout))
    assert {f"tenferro._kernels.{n}" for n in names} <= loaded
    assert loaded - {"tenferro", "tenferro._errors", "tenferro._threads",
                     "tenferro._kernels", "tenferro._kernels._batch",
                     "tenferro._kernels._workers"} \
        - {f"tenferro._kernels.{n}{s}" for n in NAMES for s in ("", "_twin")} == set()


@pytest.mark.parametrize("name", NAMES)
def test_stub_declares_every_function_of_the_compiled_module(name):
    """Each ``<name>.pyi`` declares exactly the Python-visible functions and classes of
    ``<name>.pyx`` (def, cpdef, cdef class), so that type checkers see all of them."""
    pyx = (SOURCE / "_kernels" / f"{name}.pyx").read_text(encoding="utf-8")
    pyi = (SOURCE / "_kernels" / f"{name}.pyi").read_text(encoding="utf-8")
    defined = set(re.findall(r"^(?:def|cpdef [\w.]+|cdef class) (\w+)", pyx, re.M))
    declared = set(re.findall(r"^(?:def|class) (\w+)", pyi, re.M))
    assert defined, f"nothing found in {name}.pyx"
    assert defined - declared == set(), f"{name}.pyi lacks {sorted(defined - declared)}"
    assert declared - defined == set(), f"{name}.pyi declares {sorted(declared - defined)}"
