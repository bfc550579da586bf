"""Lowering a verified tf.compile trace to the C instructions of _kernels/lowered.pyx.

A trace (tenferro/_capture.py) replays one Python function per recorded op. When every
traced value is a float64 array, the common small ops of the trace become instructions of
``lowered.Lowered`` instead: their values and cotangents live in two flat arenas and no
Python runs for them (the kernel's docstring says why this pays). This module decides,
per recorded op, which instruction runs it; the table below is the whole instruction set.
An op that no instruction covers, or whose operands do not fit one (other dtypes,
broadcasting, more than two dimensions, large arrays), keeps its replay function and
rule; the two kinds mix freely in one trace.

The lowered program is then run on the recording's own inputs and must give every value
the op-by-op replay gave, bit for bit, else it is dropped (the trace replays op by op).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tenferro._kernels import load as _load_kernel

_lowered = _load_kernel("lowered")
_OPCODE = _lowered.OPCODES
_FIELD = _lowered.FIELDS

# The values an instruction touches are small: larger arrays gain nothing from skipping
# NumPy's per-call overhead, and a matmul's pullback here is plain loops.
MAX_SIZE = 4096
MAX_MATMUL_FLOPS = 1 << 16

# op name -> (forward opcode, backward opcode, the operand kind)
#   "ab": two arrays of one shape; "c": one array and a constant array of its shape (the
#   op's ctx); "s": one array and a real scalar (the ctx); "x": one array.
_TABLE: dict[str, tuple[str, str, str]] = {
    "add": ("ADD", "ADD", "ab"),
    "subtract": ("SUB", "SUB", "ab"),
    "add_array": ("ADD_CONST", "ADD_CONST", "c"),
    "array_add": ("ADD_CONST", "ADD_CONST", "c"),
    "subtract_array": ("SUB_CONST", "SUB_CONST", "c"),
    "array_subtract": ("RSUB_CONST", "RSUB_CONST", "c"),
    "add_scalar": ("ADD_SCALAR", "ADD_SCALAR", "s"),
    "subtract_scalar": ("SUB_SCALAR", "SUB_SCALAR", "s"),
    "scalar_subtract": ("RSUB_SCALAR", "RSUB_SCALAR", "s"),
    "multiply_scalar": ("SCALE", "SCALE", "s"),
    "transpose": ("TRANSPOSE", "TRANSPOSE", "x"),
    "diagonal": ("DIAGONAL", "DIAGONAL", "x"),
    "sum": ("PY", "SUM_BWD", "x"),      # forward: NumPy's sum (its summation order)
    "log": ("PY", "LOG_BWD", "x"),      # forward: NumPy's log (its own implementation)
    "exp": ("PY", "EXP_BWD", "x"),
    # and cholesky, solve, solve_triangular: see _linalg
}


def _small(v: Any, max_nd: int = 2) -> bool:
    return (type(v) is np.ndarray and v.dtype == np.float64 and v.ndim <= max_nd
            and 0 < v.size <= MAX_SIZE)


def _scalar(ctx: Any) -> float | None:
    """The ctx of a scalar op as the float the op computes with, or None."""
    if type(ctx) is np.ndarray:
        if ctx.shape != () or ctx.dtype != np.float64:
            return None
        return float(ctx)
    if type(ctx) is float:
        return ctx
    if type(ctx) is int and abs(ctx) < 2 ** 53:
        return float(ctx)
    return None


def _linalg(name: str, ctx: Any, xs: list[Any], y: Any) -> tuple[str, str, Any]:
    """cholesky (lower), solve and solve_triangular (left, no transpose) of one small
    matrix with a vector or matrix right-hand side."""
    a = xs[0]
    n = a.shape[0]
    if a.ndim != 2 or a.shape[1] != n or n > _lowered.SMALL_SIDE:
        return "PY", "PY", None
    if name == "cholesky":
        return ("CHOLESKY", "CHOLESKY", None) if ctx is False else ("PY", "PY", None)
    b = xs[1]
    if b.shape[0] != n or y.shape != b.shape or b.size > _lowered.SMALL_BUFFER:
        return "PY", "PY", None
    if name == "solve":
        return "SOLVE", "SOLVE", None
    lower, trans, unit, left, _ = ctx
    if trans != 0 or unit or not left:
        return "PY", "PY", None
    return "PY", "TRSV_BWD", 1.0 if lower else 0.0


def _choose(name: str, ctx: Any, xs: list[Any], y: Any) -> tuple[str, str, Any]:
    """(forward opcode, backward opcode, the param or constant) of one op."""
    if not _small(y) or not all(_small(x) for x in xs):
        return "PY", "PY", None
    if name in ("cholesky", "solve", "solve_triangular"):
        return _linalg(name, ctx, xs, y)
    if name == "matmul":
        a, b = xs
        m = a.shape[0] if a.ndim == 2 else 1
        n = b.shape[1] if b.ndim == 2 else 1
        if m * n * a.shape[-1] > MAX_MATMUL_FLOPS:
            return "PY", "PY", None
        return "MATMUL", "MATMUL", None
    rule = _TABLE.get(name)
    if rule is None:
        return "PY", "PY", None
    fwd, bwd, kind = rule
    if kind == "ab":
        if len(xs) != 2 or xs[0].shape != xs[1].shape or y.shape != xs[0].shape:
            return "PY", "PY", None
        return fwd, bwd, None
    if len(xs) != 1:
        return "PY", "PY", None
    x = xs[0]
    if kind == "c":
        if not (type(ctx) is np.ndarray and ctx.dtype == np.float64 and ctx.shape == x.shape):
            return "PY", "PY", None
        return fwd, bwd, ctx
    if kind == "s":
        s = _scalar(ctx)
        return (fwd, bwd, s) if s is not None else ("PY", "PY", None)
    if name == "transpose":
        ok = x.ndim == 2 and tuple(ctx) == (1, 0)
    elif name == "diagonal":
        ok = x.ndim == 2 and tuple(ctx) == (0, 0, 1)
    elif name == "sum":
        ok = ctx is None and y.shape == ()
    else:                                   # log, exp: elementwise
        ok = y.shape == x.shape
    return (fwd, bwd, None) if ok else ("PY", "PY", None)


def lower(trace: Any, values: list[Any], check: bool = True) -> Any:
    """The lowered program of ``trace`` (``values``: every slot's value from its verified
    replay), or None when it would not pay or does not reproduce the replay (``check``
    False: not compared; tests pair the kernel with its twin that way)."""
    n_slots = len(values)
    for r in range(n_slots):
        if trace.traced[r] and not (type(values[r]) is np.ndarray
                                    and values[r].dtype == np.float64):
            return None                     # every cotangent lives in the float64 arena
    n = len(trace.plan)
    code = np.full((n, _lowered.N_FIELDS), -1, dtype=np.intp)
    param = np.zeros(n)
    consts: list[Any] = []
    loc = np.full(n_slots, -1, dtype=np.intp)
    transposed_of: dict[int, int] = {}      # slot of a lowered xᵀ -> slot of x
    arena = 0
    lowered = 0
    for k, (entry, op, ctx, refs, needs) in enumerate(zip(trace.plan, trace.ops, trace.ctxs,
                                                         trace.ins, trace.needs)):
        first, n_out, dyn = entry[3], entry[4], entry[5]
        row = code[k]
        row[_FIELD["FWD"]] = row[_FIELD["BWD"]] = _OPCODE["PY"]
        row[_FIELD["OUT"]] = first
        row[_FIELD["ATR"]] = row[_FIELD["BTR"]] = 0
        row[_FIELD["NEEDA"]] = row[_FIELD["NEEDB"]] = 0
        if n_out != 1 or (dyn and op.name != "solve"):
            continue        # (solve's dyn ctx, its LU, lives in the arena when lowered)
        xs = [values[r] for r in refs]
        fwd, bwd, extra = _choose(op.name, ctx, xs, values[first])
        if fwd == "MATMUL":
            a, b = refs
            asrc, atr = (transposed_of[a], 1) if a in transposed_of else (a, 0)
            bsrc, btr = (transposed_of[b], 1) if b in transposed_of else (b, 0)
            if asrc == bsrc:
                continue                    # x @ x or x @ xᵀ: NumPy may call ?syrk
            row[_FIELD["ASRC"]], row[_FIELD["ATR"]] = asrc, atr
            row[_FIELD["BSRC"]], row[_FIELD["BTR"]] = bsrc, btr
        elif fwd != "PY" or bwd != "PY":
            row[_FIELD["ASRC"]] = refs[0]
            if len(refs) == 2:
                row[_FIELD["BSRC"]] = refs[1]
        if fwd == "PY" and bwd == "PY":
            continue
        row[_FIELD["FWD"]] = _OPCODE[fwd]
        row[_FIELD["BWD"]] = _OPCODE[bwd]
        row[_FIELD["A"]] = refs[0]
        row[_FIELD["NEEDA"]] = needs[0]
        if len(refs) == 2:
            row[_FIELD["B"]] = refs[1]
            row[_FIELD["NEEDB"]] = needs[1]
        if isinstance(extra, float):
            param[k] = extra
        elif extra is not None:
            row[_FIELD["CONST"]] = len(consts)
            consts.append(extra)
        if fwd != "PY":
            loc[first] = arena
            arena += values[first].size
        if fwd == "SOLVE":                  # the LU factors and the pivots
            row[_FIELD["AUX"]] = arena
            arena += xs[0].size + xs[0].shape[0]
        if fwd == "TRANSPOSE" and refs[0] not in transposed_of:
            transposed_of[first] = refs[0]
        lowered += 1
    if lowered == 0:
        return None
    ctloc = np.full(n_slots, -1, dtype=np.intp)
    offset = 0
    for r in range(n_slots):
        if trace.traced[r]:
            ctloc[r] = offset
            offset += values[r].size
    shapes: list[tuple[int, ...]] = [tuple(np.shape(v)) if v is not None else ()
                                     for v in values]
    size = np.array([int(np.prod(s)) for s in shapes], dtype=np.intp)
    nd = np.array([len(s) for s in shapes], dtype=np.intp)
    d0 = np.array([s[0] if len(s) > 0 else 1 for s in shapes], dtype=np.intp)
    d1 = np.array([s[1] if len(s) > 1 else 1 for s in shapes], dtype=np.intp)
    template = [None if loc[r] >= 0 else v for r, v in enumerate(trace.template)]
    program = _lowered.Lowered(code, param, loc, ctloc, size, nd, d0, d1, shapes, consts,
                               trace.plan, trace.ops, trace.ctxs, trace.ins, trace.needs,
                               template, trace.guards, trace.outs, trace.n_args,
                               trace._check, arena)
    if not check:
        return program
    try:
        _, run = program.forward([values[i] for i in range(trace.n_args)])
    except Exception:       # noqa: BLE001 - any failure: the trace replays op by op
        return None
    for r in range(n_slots):
        if loc[r] >= 0 and not _bitwise_equal(program.value(run, r), values[r]):
            return None
    return program


def _bitwise_equal(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return (a.shape == b.shape and a.dtype == b.dtype
            and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())
