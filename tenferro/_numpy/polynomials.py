"""NumPy's polynomial functions on tensors (coefficient arrays, highest power first)."""
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import linalg
from .._errors import ShapeError
from .._ops import creation, elementwise, reductions, structure
from .._ops._util import floating
from .._tensor import Tensor
from .plumbing import _arr, _atleast, _cast, _fallback, _farr, _numpy_version
from .linalg_results import _eigvals
from .calculus import _convolve, _vander

def _poly_coeffs(p: ArrayLike) -> Tensor:
    p = _arr(p)
    return structure.reshape(p, (1,)) if p.ndim == 0 else p


@_numpy_version(np.polyval)
def _polyval(p: ArrayLike, x: ArrayLike) -> Tensor:
    """Horner's rule y = (...(p0·x + p1)·x + ...) + pN, as NumPy evaluates it."""
    p, x = _arr(p), _arr(x)
    y = creation.zeros_like(x)
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


def _poly_sum(a1: ArrayLike, a2: ArrayLike, sign: int) -> Tensor:
    a1, a2 = _poly_coeffs(a1), _poly_coeffs(a2)
    d = a2.shape[0] - a1.shape[0]
    if d > 0:
        a1 = structure.concatenate([creation.zeros((d,), dtype=a1.dtype), a1])
    elif d < 0:
        a2 = structure.concatenate([creation.zeros((-d,), dtype=a2.dtype), a2])
    return a1 + a2 if sign > 0 else a1 - a2


@_numpy_version(np.polyadd)
def _polyadd(a1: ArrayLike, a2: ArrayLike) -> Tensor:
    return _poly_sum(a1, a2, 1)


@_numpy_version(np.polysub)
def _polysub(a1: ArrayLike, a2: ArrayLike) -> Tensor:
    return _poly_sum(a1, a2, -1)


@_numpy_version(np.polymul)
def _polymul(a1: ArrayLike, a2: ArrayLike) -> Tensor:
    return _convolve(_poly_coeffs(a1), _poly_coeffs(a2))


@_numpy_version(np.polyder)
def _polyder(p: ArrayLike, m: int = 1) -> Tensor:
    m = int(m)
    if m < 0:
        raise ShapeError("Order of derivative must be positive (see polyint)")
    p = _arr(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = p[:-1] * np.arange(n, 0, -1)
    return p


@_numpy_version(np.polyint)
def _polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Tensor:
    m = int(m)
    if m < 0:
        raise ShapeError("Order of integral must be positive (see polyder)")
    k = creation.zeros((m,)) if k is None else _atleast(_farr(k), 1)
    if k.shape[0] == 1 and m > 1:
        k = structure.broadcast_to(k[0], (m,))
    if k.shape[0] < m:
        raise ShapeError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _arr(p)
    for i in range(m):
        p = structure.concatenate([p / np.arange(p.shape[0], 0, -1), k[i:i + 1]])
    return p


@_numpy_version(np.polydiv)
def _polydiv(u: ArrayLike, v: ArrayLike) -> tuple[Tensor, Tensor]:
    """Long division (NumPy's loop): u = q·v + r."""
    u, v = _farr(_poly_coeffs(u)), _farr(_poly_coeffs(v))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    rs = list(u)
    qs = []
    for k in range(max(m - n + 1, 0)):
        d = scale * rs[k]
        qs.append(d)
        for i in range(n + 1):
            rs[k + i] = rs[k + i] - d * v[i]
    q = structure.stack(qs) if qs else creation.zeros((1,), dtype=np.result_type(u.dtype, v.dtype))
    r = structure.stack(rs)
    while np.allclose(r._data[0], 0, rtol=1e-14) and r.shape[0] > 1:
        r = r[1:]
    return q, r


@_numpy_version(np.polyfit)
def _polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None,
             full: bool = False, w: ArrayLike | None = None, cov: bool | str = False) -> Any:
    """Least squares on the column-scaled Vandermonde matrix (NumPy's algorithm), through
    tf.linalg.lstsq: differentiable in x, y and w while the rank is constant."""
    order = int(deg) + 1
    x, y = _cast(_farr(x), np.float64) + 0.0, _cast(_farr(y), np.float64) + 0.0
    if cov:
        return _fallback(np.polyfit, (x, y, deg), dict(rcond=rcond, full=full, w=w, cov=cov))
    if deg < 0:
        raise ShapeError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs = _vander(x, order)
    rhs = y
    if w is not None:
        w = _farr(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = elementwise.sqrt(reductions.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=3)
    if full:
        return c, resids, rank, s, rcond
    return c


@_numpy_version(np.roots)
def _roots(p: ArrayLike) -> Tensor:
    """The eigenvalues of the companion matrix (NumPy's algorithm), through
    tf.linalg.eigvals: differentiable where the roots are simple."""
    p = _atleast(p, 1)
    if p.ndim != 1:
        raise ShapeError("Input must be a rank-1 array.")
    nz = np.flatnonzero(p._data)
    if nz.size == 0:
        return creation.zeros((0,))
    trailing = p.shape[0] - nz[-1] - 1
    p = _farr(p[int(nz[0]):int(nz[-1]) + 1])
    n = p.shape[0]
    if n > 1:
        rest = Tensor._wrap(np.eye(n - 2, n - 1, dtype=p.dtype))
        a = structure.concatenate([(-p[1:] / p[0])[None, :], rest], axis=0)
        roots = _eigvals(a)
    else:
        roots = creation.zeros((0,), dtype=p.dtype)
    if trailing:
        roots = structure.concatenate([roots, creation.zeros((trailing,), dtype=roots.dtype)])
    return roots


@_numpy_version(np.poly)
def _poly(seq_of_zeros: ArrayLike) -> Tensor | float:
    """The monic polynomial with these roots (or of this square matrix's eigenvalues): a
    product of linear factors by convolution; real if the roots are conjugate pairs."""
    z = _atleast(seq_of_zeros, 1)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = _eigvals(z)
    elif z.ndim == 1:
        z = floating(z)
    else:
        raise ShapeError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return 1.0
    a = creation.ones((1,), dtype=z.dtype)
    for k in range(z.shape[0]):
        a = _convolve(a, structure.stack([creation.ones((), dtype=z.dtype), -z[k]]))
    if a.dtype.kind == "c":
        r = z._data.astype(complex)
        if np.all(np.sort(r) == np.sort(r.conjugate())):
            a = elementwise.real(a)
    return a
