"""NumPy twin of ``triangular_backprop.pyx`` (trsm and the fused triangular-solve, QR,
Cholesky and LU pullbacks; same names, signatures and results).

``tests/_kernels/test_triangular_backprop.py`` and
``tests/_kernels/test_triangular_backprop_solve.py`` check that both agree.
"""

from typing import Any

import numpy as _np
from numpy.typing import NDArray

from .._errors import LinAlgError
from .lapack_base_twin import _lapack_solve_operands, _lapack_where
from .lapack_lu_chol_twin import trtrs

_Arr = NDArray[Any]


def _tri_adjoint_solve(a: _Arr, g: _Arr, lower: bool, trans: int, unit_diagonal: bool,
                       left: bool) -> _Arr:
    """op(a)⁻ᴴ g (left) or g op(a)⁻ᴴ (right), with the trtrs twin above."""
    cplx = a.dtype.kind == "c"
    if not left:   # g M⁻ᴴ = (M⁻¹ gᴴ)ᴴ
        gh = g.swapaxes(-1, -2).conj()
        out: _Arr = trtrs(a, gh, lower, trans, unit_diagonal).swapaxes(-1, -2).conj()
        return out
    if trans == 1 and cplx:   # M⁻ᴴ = conj(a)⁻¹: conj(a⁻¹ conj(g))
        out = trtrs(a, g.conj(), lower, 0, unit_diagonal).conj()
        return out
    # M⁻ᴴ is a⁻ᴴ for trans 0, a⁻¹ for trans 2 (and for real trans 1)
    return trtrs(a, g, lower, 2 if trans == 0 else 0, unit_diagonal)


def solve_triangular_backprop(a: _Arr, x: _Arr, gx: _Arr, lower: bool, trans: int,
                              unit_diagonal: bool, left: bool, need_a: bool = True,
                              need_b: bool = True) -> tuple[_Arr | None, _Arr | None]:
    """Twin of triangular_backprop.solve_triangular_backprop (docs/rules.md#solve_triangular):
    G = M⁻ᴴX̄ (left) or X̄M⁻ᴴ (right), M = op(a); Ā = P(op⁻¹(−GXᴴ)) or P(op⁻¹(−XᴴG)),
    P keeping the triangle the solve reads (strict for unit_diagonal)."""
    dt = _np.result_type(a.dtype, x.dtype, gx.dtype)
    a, x, gx = (_np.asarray(v).astype(dt, copy=False) for v in (a, x, gx))
    batch = _np.broadcast_shapes(a.shape[:-2], x.shape[:-2], gx.shape[:-2])
    n = a.shape[-1]
    shape = batch + x.shape[-2:]
    if a.size == 0 or x.size == 0:
        g = _np.zeros(shape, dt)
    else:
        g = _tri_adjoint_solve(a, _np.broadcast_to(gx, shape), lower, trans,
                               unit_diagonal, left)
    ga = None
    if need_a:
        xh = x.swapaxes(-1, -2).conj()
        mbar = -(g @ xh if left else xh @ g) if g.size else _np.zeros(batch + (n, n), dt)
        mbar = _np.broadcast_to(mbar, batch + (n, n))
        if trans == 1:
            mbar = mbar.swapaxes(-1, -2)
        elif trans == 2:
            mbar = mbar.swapaxes(-1, -2).conj()
        k = (-1 if lower else 1) if unit_diagonal else 0
        ga = _np.tril(mbar, k) if lower else _np.triu(mbar, k)
    return ga, (g if need_b else None)


def trsm(a: _Arr, b: _Arr, lower: bool = False, trans: int = 0, unit_diagonal: bool = False,
         left: bool = True, check: bool = False) -> _Arr:
    """Twin of triangular_backprop.trsm: the triangle and op(a) made explicit, then
    numpy.linalg.solve (x op(a) = b solved as op(a)ᵀxᵀ = bᵀ)."""
    a, b, batch = _lapack_solve_operands(a, b)
    shape = batch + b.shape[-2:]
    if a.size == 0 or b.size == 0:
        return _np.zeros(shape, a.dtype)
    n = a.shape[-1]
    t = _np.tril(a) if lower else _np.triu(a)
    if unit_diagonal:
        t = t.copy()
        t[..., _np.arange(n), _np.arange(n)] = 1
    elif check:
        bad = (_np.diagonal(t, 0, -2, -1) == 0).any(axis=-1)
        if bad.any():
            k = int(_np.flatnonzero(_np.broadcast_to(bad, batch))[0])
            raise LinAlgError(f"{_lapack_where(k, batch)} is singular: a diagonal entry "
                              "of the triangular matrix is exactly zero")
    if trans:
        t = t.swapaxes(-1, -2)
        if trans == 2:
            t = t.conj()
    t = _np.broadcast_to(t, batch + (n, n))
    if left:
        return _np.linalg.solve(t, _np.broadcast_to(b, shape))
    bt = _np.broadcast_to(b, shape).swapaxes(-1, -2)
    x: _Arr = _np.linalg.solve(t.swapaxes(-1, -2), bt).swapaxes(-1, -2)
    return x


def qr_backprop(q: _Arr, r: _Arr, gq: _Arr | None, gr: _Arr | None,
                rtol: float = 0.0) -> _Arr:
    """Twin of triangular_backprop.qr_backprop (docs/rules.md#qr, m >= n): M = R R̄ᴴ − Q̄ᴴQ,
    Ā = (Q̄ + Q copyltu(M)) R⁻ᴴ, copyltu(M) = tril(M) + tril₋(M)ᴴ with real diagonal."""
    mag = _np.abs(_np.diagonal(r, 0, -2, -1))
    if mag.size:
        bad = ~(mag.min(axis=-1) > rtol * mag.max(axis=-1))
        if bad.any():
            k = int(_np.flatnonzero(bad)[0])
            raise LinAlgError(f"{_lapack_where(k, r.shape[:-2])}: R is singular to working "
                              "precision")
    if gq is None and gr is None:
        return _np.zeros(q.shape, q.dtype)
    mm: Any = 0      # 0 or an array
    if gr is not None:
        mm = r @ gr.swapaxes(-1, -2).conj()
    if gq is not None:
        mm = mm - gq.swapaxes(-1, -2).conj() @ q
    low = _np.tril(mm, -1)
    c = low + low.swapaxes(-1, -2).conj()
    n = q.shape[-1]
    c[..., _np.arange(n), _np.arange(n)] = _np.diagonal(mm, 0, -2, -1).real
    b: _Arr = q @ c if gq is None else gq + q @ c
    if b.size == 0:
        return b
    # B R⁻ᴴ = (R⁻¹ Bᴴ)ᴴ
    return trsm(r, b, False, 2, False, False)


def cholesky_backprop(l: _Arr, gl: _Arr) -> _Arr:
    """Twin of triangular_backprop.cholesky_backprop (docs/rules.md#cholesky): Ā = ½(S + Sᴴ),
    S = L⁻ᴴ Φ(LᴴL̄) L⁻¹, Φ = tril with the diagonal halved."""
    if l.size == 0:
        return _np.zeros(_np.broadcast_shapes(l.shape, gl.shape), l.dtype)
    p = _np.tril(l.swapaxes(-1, -2).conj() @ _np.tril(gl))
    n = l.shape[-1]
    p[..., _np.arange(n), _np.arange(n)] *= 0.5
    s = trsm(l, p, True, 2, False, True)
    s = trsm(l, s, True, 0, False, False)
    ga: _Arr = 0.5 * (s + s.swapaxes(-1, -2).conj())
    return ga


def lu_backprop(perm: _Arr | None, l: _Arr, u: _Arr, gl: _Arr | None,
                gu: _Arr | None) -> _Arr:
    """Twin of triangular_backprop.lu_backprop (docs/rules.md#lu, square): Ā = P L⁻ᴴ F̄ U⁻ᴴ with
    F̄ = tril₋(LᴴL̄) + triu(ŪUᴴ) and P[perm[i], i] = 1 (P = I for perm None)."""
    shape = _np.broadcast_shapes(*(x.shape for x in (l, u, gl, gu) if x is not None))
    dt = _np.result_type(*(x.dtype for x in (l, u, gl, gu) if x is not None))
    if l.size == 0:
        return _np.zeros(shape, dt)
    f = _np.zeros(shape, dt)
    if gl is not None:
        f += _np.tril(l.swapaxes(-1, -2).conj() @ gl, -1)
    if gu is not None:
        f += _np.triu(gu @ u.swapaxes(-1, -2).conj())
    f = trsm(u, f, False, 2, False, False)          # F̄ U⁻ᴴ
    f = trsm(l, f, True, 2, True, True)             # L⁻ᴴ ...
    if perm is None:
        return f
    idx = _np.broadcast_to(_np.asarray(perm)[..., None], shape[:-1] + (1,))
    out = _np.empty_like(f)
    _np.put_along_axis(out, _np.broadcast_to(idx, shape), f, -2)    # row i -> perm[i]
    return out
