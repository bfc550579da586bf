"""The twin of lowered.pyx: the same instructions run by NumPy, one ndarray per value.

Forward, each instruction is the NumPy expression it stands for (a matmul operand that
reads a transposed value is that value's ``.T``, as in the eager program), so the values
are NumPy's, bit for bit, as the compiled kernel's must be. Backward, each instruction is
its rule from docs/rules.md on ndarrays; the cotangents agree with the kernel's to
rounding (tests/_kernels/test_lowered.py).
"""
from typing import Any

import numpy as np
import scipy.linalg as sla

from tenferro._kernels import lapack_lu_chol_twin as _lapack

(PY, MATMUL, ADD, SUB, ADD_CONST, SUB_CONST, RSUB_CONST, ADD_SCALAR, SUB_SCALAR,
 RSUB_SCALAR, SCALE, TRANSPOSE, DIAGONAL, SUM_BWD, LOG_BWD, EXP_BWD, CHOLESKY, SOLVE,
 TRSV_BWD) = range(19)
OPCODES = {"PY": PY, "MATMUL": MATMUL, "ADD": ADD, "SUB": SUB, "ADD_CONST": ADD_CONST,
           "SUB_CONST": SUB_CONST, "RSUB_CONST": RSUB_CONST, "ADD_SCALAR": ADD_SCALAR,
           "SUB_SCALAR": SUB_SCALAR, "RSUB_SCALAR": RSUB_SCALAR, "SCALE": SCALE,
           "TRANSPOSE": TRANSPOSE, "DIAGONAL": DIAGONAL, "SUM_BWD": SUM_BWD,
           "LOG_BWD": LOG_BWD, "EXP_BWD": EXP_BWD, "CHOLESKY": CHOLESKY, "SOLVE": SOLVE,
           "TRSV_BWD": TRSV_BWD}
SMALL_SIDE = 16
SMALL_BUFFER = 1024
(F_FWD, F_BWD, F_OUT, F_A, F_B, F_ASRC, F_ATR, F_BSRC, F_BTR, F_CONST, F_NEEDA,
 F_NEEDB, F_AUX) = range(13)
FIELDS = {"FWD": F_FWD, "BWD": F_BWD, "OUT": F_OUT, "A": F_A, "B": F_B, "ASRC": F_ASRC,
          "ATR": F_ATR, "BSRC": F_BSRC, "BTR": F_BTR, "CONST": F_CONST,
          "NEEDA": F_NEEDA, "NEEDB": F_NEEDB, "AUX": F_AUX}
N_FIELDS = 13


class Lowered:
    """The lowered program of one trace (built by tenferro/_lower.py)."""

    def __init__(self, code: Any, param: Any, loc: Any, ctloc: Any, size: Any, nd: Any,
                 d0: Any, d1: Any, shapes: list[Any], consts: list[Any], plan: list[Any],
                 ops: list[Any], ctxs: list[Any], ins: list[Any], needs: list[Any],
                 template: list[Any], guards: list[Any], outs: list[int], n_args: int,
                 check: Any, arena_size: int) -> None:
        self.code = np.asarray(code)
        self.param = np.asarray(param, dtype=np.float64)
        self.loc = np.asarray(loc)
        self.ctloc = np.asarray(ctloc)
        self.shapes = shapes
        self.consts = [np.ascontiguousarray(c, dtype=np.float64) for c in consts]
        self.plan, self.ops, self.ctxs, self.ins, self.needs = plan, ops, ctxs, ins, needs
        self.template, self.guards, self.outs = template, guards, outs
        self.n_args, self.check = n_args, check
        self.n_lowered = int(np.sum((self.code[:, F_FWD] != PY) | (self.code[:, F_BWD] != PY)))

    @property
    def table(self) -> Any:
        return self.code

    def value(self, run: Any, r: int) -> Any:
        return run[0][r]

    # ---- forward -------------------------------------------------------------------------
    def forward(self, arrays: list[Any]) -> tuple[list[Any], Any]:
        slots = self.template.copy()
        slots[:self.n_args] = arrays
        dyn_ctx: dict[int, Any] = {}
        self._aux: dict[int, Any] = {}
        gi = 0
        for k, row in enumerate(self.code):
            while gi < len(self.guards) and self.guards[gi][0] == k:
                self.check(self.guards[gi], slots)
                gi += 1
            if row[F_FWD] == PY:
                self._py_forward(k, slots, dyn_ctx)
            else:
                slots[row[F_OUT]] = self._c_forward(k, row, slots)
        for guard in self.guards[gi:]:
            self.check(guard, slots)
        return [slots[r] for r in self.outs], (slots, dyn_ctx, self._aux)

    def _py_forward(self, k: int, slots: list[Any], dyn_ctx: dict[int, Any]) -> None:
        fn, refs, _, first, n_out, dyn = self.plan[k]
        out = fn(*[slots[r] for r in refs])
        if dyn:
            out, dyn_ctx[k] = out
        if n_out == 1:
            slots[first] = np.asarray(out)
        else:
            for i in range(n_out):
                slots[first + i] = out[i]

    def _c_forward(self, k: int, row: Any, slots: list[Any]) -> Any:
        op = row[F_FWD]
        a = slots[row[F_ASRC]]
        if op == MATMUL:
            b = slots[row[F_BSRC]]
            return np.asarray(np.matmul(a.T if row[F_ATR] else a, b.T if row[F_BTR] else b))
        if op in (CHOLESKY, SOLVE):
            if not np.all(np.isfinite(a)):
                raise FloatingPointError("non-finite input: the op runs eagerly")
            if op == CHOLESKY:
                return _lapack.potrf(a, lower=True)
            lu, piv, info = _lapack.getrf(a, return_info=True)  # type: ignore[misc]
            if info != 0:
                raise FloatingPointError("singular matrix: solve runs eagerly")
            self._aux[k] = lu, piv
            b = slots[row[F_BSRC]]
            x = _lapack.getrs(lu, piv, b.reshape(b.shape[0], -1))
            return np.ascontiguousarray(x.reshape(b.shape))
        if op == TRANSPOSE:
            return np.ascontiguousarray(a.T)
        if op == DIAGONAL:
            return a.diagonal().copy()
        if op in (ADD, SUB):
            b = slots[row[F_BSRC]]
            return np.asarray(a + b if op == ADD else a - b)
        if op in (ADD_CONST, SUB_CONST, RSUB_CONST):
            c = self.consts[row[F_CONST]]
            return np.asarray(a + c if op == ADD_CONST else a - c if op == SUB_CONST else c - a)
        s = self.param[k]
        if op == ADD_SCALAR:
            return np.asarray(a + s)
        if op == SUB_SCALAR:
            return np.asarray(a - s)
        if op == RSUB_SCALAR:
            return np.asarray(s - a)
        return np.asarray(a * s)

    # ---- backward ------------------------------------------------------------------------
    def needs_table(self, op_needs: list[Any]) -> Any:
        table = np.zeros((len(self.code), 2), dtype=np.intp)
        for k, need in enumerate(op_needs):
            for i in range(min(len(need), 2)):
                table[k, i] = bool(need[i])
        return table

    def backward(self, run: Any, gs: tuple[Any, ...], needs: tuple[bool, ...],
                 op_needs: list[Any] | None = None, table: Any = None) -> tuple[Any, ...]:
        slots, dyn_ctx, aux = run
        self._op_needs = op_needs if op_needs is not None else self.needs
        self._table = table
        cts: dict[int, Any] = {}
        for r, g in zip(self.outs, gs):
            if g is not None and self.ctloc[r] >= 0:
                self._acc(cts, r, g)
        for k in range(len(self.code) - 1, -1, -1):
            row = self.code[k]
            if row[F_BWD] == PY:
                self._py_backward(k, slots, cts, dyn_ctx)
            elif row[F_OUT] in cts:
                g = cts.pop(row[F_OUT])
                need_a, need_b = bool(row[F_NEEDA]), bool(row[F_NEEDB])
                if self._table is not None:
                    need_a, need_b = need_a and self._table[k, 0], need_b and self._table[k, 1]
                self._c_backward(k, row, g, slots, cts, aux, need_a, need_b)
        return tuple(cts.get(i) if needs[i] else None for i in range(self.n_args))

    def _acc(self, cts: dict[int, Any], r: int, v: Any) -> None:
        if hasattr(v, "densify"):
            v = v.densify()
        v = np.asarray(v)
        if v.dtype.kind == "c":
            v = v.real
        v = np.array(np.broadcast_to(v, self.shapes[r]), dtype=np.float64)
        cts[r] = v if r not in cts else cts[r] + v

    def _py_backward(self, k: int, slots: list[Any], cts: dict[int, Any],
                     dyn_ctx: dict[int, Any]) -> None:
        _, refs, _, first, n_out, dyn = self.plan[k]
        gk = tuple(cts.pop(first + i, None) for i in range(n_out))
        if all(g is None for g in gk):
            return
        xs = tuple(slots[r] for r in refs)
        ys = tuple(slots[first + i] for i in range(n_out))
        need = self._op_needs[k]
        if not any(need):
            return
        cots = self.ops[k].vjp(dyn_ctx[k] if dyn else self.ctxs[k], need, gk, xs, ys)
        for i, r in enumerate(refs):
            if need[i] and cots[i] is not None:
                self._acc(cts, r, cots[i])

    def _c_backward(self, k: int, row: Any, g: Any, slots: list[Any],
                    cts: dict[int, Any], aux: dict[int, Any], need_a: bool,
                    need_b: bool) -> None:
        op = row[F_BWD]
        a, b = row[F_A], row[F_B]
        if op in (SOLVE, TRSV_BWD):           # B̄ = A⁻ᵀ ḡ, Ā = −B̄ Xᵀ (on A's triangle)
            x = slots[row[F_OUT]]
            x2, g2 = x.reshape(x.shape[0], -1), g.reshape(x.shape[0], -1)
            if op == SOLVE:
                lu, piv = aux[k]
                gb = _lapack.getrs(lu, piv, g2, 1)
            else:
                lower = bool(self.param[k])
                gb = sla.solve_triangular(slots[a], g2, trans="T", lower=lower)
            if need_a:
                ga = -(gb @ x2.T)
                if op == TRSV_BWD:
                    ga = np.tril(ga) if lower else np.triu(ga)
                self._acc(cts, a, ga)
            if need_b:
                self._acc(cts, b, gb.reshape(x.shape))
            return
        if op == MATMUL:
            x = slots[row[F_ASRC]]
            y = slots[row[F_BSRC]]
            x = x.T if row[F_ATR] else x
            y = y.T if row[F_BTR] else y
            x2 = x[None, :] if x.ndim == 1 else x
            y2 = y[:, None] if y.ndim == 1 else y
            g2 = np.reshape(g, (x2.shape[0], y2.shape[1]))
            if need_a:
                self._acc(cts, a, (g2 @ y2.T).reshape(x.shape))
            if need_b:
                self._acc(cts, b, (x2.T @ g2).reshape(y.shape))
            return
        if op in (ADD, SUB):
            if need_a:
                self._acc(cts, a, g)
            if need_b:
                self._acc(cts, b, g if op == ADD else -g)
            return
        if not need_a:
            return
        if op in (ADD_CONST, SUB_CONST, ADD_SCALAR, SUB_SCALAR):
            v = g
        elif op in (RSUB_CONST, RSUB_SCALAR):
            v = -g
        elif op == SCALE:
            v = g * self.param[k]
        elif op == TRANSPOSE:
            v = g.T
        elif op == DIAGONAL:
            v = np.zeros(self.shapes[a])
            np.fill_diagonal(v, g)
        elif op == CHOLESKY:                  # ½(S + Sᵀ), S = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹
            lo = slots[row[F_OUT]]
            m = lo.T @ g
            m = np.tril(m) - 0.5 * np.diag(np.diag(m))
            m = sla.solve_triangular(lo, m, trans="T", lower=True)
            m = sla.solve_triangular(lo, m.T, trans="T", lower=True).T
            v = 0.5 * (m + m.T)
        elif op == SUM_BWD:
            v = np.full(self.shapes[a], g)
        elif op == LOG_BWD:
            v = g / slots[a]
        elif op == EXP_BWD:
            v = g * slots[row[F_OUT]]
        else:
            raise RuntimeError(f"lowered replay: no backward instruction {op}")
        self._acc(cts, a, v)
