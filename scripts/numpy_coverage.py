"""Which NumPy functions called on tenferro Tensors do what (docs/design.md#numpy-on-tensors).

    python scripts/numpy_coverage.py [--list] [--group tenferro|payload|fallback]

Enumerates NumPy's public callables that dispatch on their array arguments: every ufunc in
the ``numpy`` namespace (reaching ``Tensor.__array_ufunc__``) and every function of
``numpy``, ``numpy.linalg`` and ``numpy.fft`` that is an ``_ArrayFunctionDispatcher`` (the
type ``numpy._core.overrides.array_function_dispatch`` wraps Python and C functions in, and
the only way a NumPy function reaches ``Tensor.__array_function__``). Aliases (``np.abs``
and ``np.absolute``) are one entry, listed under their first public name. Each is classified:

* ``tenferro``: registered to a tenferro op (``registry.UFUNCS`` / ``registry.FUNCTIONS``):
  returns Tensors, differentiable;
* ``payload``: in ``registry.NONDIFF``: runs on the payloads and returns NumPy's own result,
  also for tensors that require grad;
* ``in-place``: writes into its first argument (np.put, np.copyto, ...): TypeError for a
  Tensor destination, group ``fallback``'s behaviour otherwise (``tenferro._numpy.INPLACE``);
* ``fallback``: none of these: NumPy's result for plain tensors, ``UnsupportedADError``
  for tracked ones.

The creation functions with a ``like=`` argument (``np.zeros(3, like=t)``) dispatch too
but have no array input to differentiate; they are counted separately.
"""
import argparse
import sys

import numpy as np
from numpy._core._multiarray_umath import _ArrayFunctionDispatcher

import tenferro  # noqa: F401  (registers everything)
from tenferro import _numpy
from tenferro._ops import registry

MODULES = (("numpy", np), ("numpy.linalg", np.linalg), ("numpy.fft", np.fft))
GROUPS = ("tenferro", "payload", "in-place", "fallback")


def dispatching():
    """{qualified name: callable} of NumPy's ufuncs and ``__array_function__`` functions,
    one entry per distinct object (first public name in MODULES order, sorted names)."""
    seen, out = set(), {}
    for prefix, mod in MODULES:
        for name in sorted(dir(mod)):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if not isinstance(obj, (np.ufunc, _ArrayFunctionDispatcher)):
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            out[f"{prefix}.{name}"] = obj
    return out


def like_creators():
    """NumPy's creation functions that take ``like=`` (they dispatch on ``like``)."""
    out = {}
    for name in sorted(dir(np)):
        obj = getattr(np, name)
        doc = getattr(obj, "__doc__", None) or ""
        if (callable(obj) and not isinstance(obj, (type, np.ufunc, _ArrayFunctionDispatcher))
                and "like : array_like" in doc):
            out[f"numpy.{name}"] = obj
    return out


def group(obj):
    if obj in _numpy.INPLACE:
        return "in-place"
    if obj in registry.UFUNCS or obj in registry.FUNCTIONS:
        return "tenferro"
    if obj in registry.NONDIFF:
        return "payload"
    return "fallback"


def classify():
    """{group: [qualified names]} over ``dispatching()``."""
    out = {g: [] for g in GROUPS}
    for name, obj in dispatching().items():
        out[group(obj)].append(name)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", action="store_true", help="print the names of every group")
    p.add_argument("--group", choices=GROUPS, help="print the names of one group only")
    args = p.parse_args(argv)
    fns = dispatching()
    n_ufunc = sum(isinstance(f, np.ufunc) for f in fns.values())
    table = classify()
    print(f"NumPy {np.__version__}: {len(fns)} dispatching callables "
          f"({n_ufunc} ufuncs, {len(fns) - n_ufunc} __array_function__ functions)")
    for g in GROUPS:
        names = table[g]
        nu = sum(isinstance(fns[n], np.ufunc) for n in names)
        print(f"  {g:9s} {len(names):4d}  ({nu} ufuncs)")
    likes = like_creators()
    reg = [n for n, f in likes.items() if f in registry.FUNCTIONS]
    print(f"  creation functions with like=: {len(likes)} ({len(reg)} registered)")
    show = [args.group] if args.group else (GROUPS if args.list else ())
    for g in show:
        print(f"\n[{g}]")
        for n in table[g]:
            print(f"  {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
