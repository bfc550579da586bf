"""The LAPACK drivers tenferro's linalg primals call, batched over leading dimensions.

This is the one place that talks to LAPACK. Each function takes ndarrays of shape
``(*batch, m, n)`` and returns ndarrays; a failing matrix raises LinAlgError naming its
batch index. INTERIM: these are NumPy/SciPy implementations; they are being replaced by
direct calls into ``tenferro/_kernels/lapack.pyx`` (scipy.linalg.cython_lapack), with
these versions kept as the NumPy twins in ``_kernels/_reference.py``.
"""
import numpy as np
import scipy.linalg as sla

from .._errors import LinAlgError
from ._common import batch_index

__all__ = ["svd", "eigh", "qr", "getrf", "lu", "potrf", "eig", "getrs", "trtrs"]


def _each(a, fn):
    """Apply fn to each matrix of a stack, naming the batch index on LinAlgError."""
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = []
    for k in range(flat.shape[0]):
        try:
            outs.append(fn(flat[k]))
        except (np.linalg.LinAlgError, ValueError) as e:
            raise LinAlgError(f"matrix {batch_index(k, batch)} of the stack: {e}") from None
    return outs, batch


def svd(a, full_matrices=False, compute_uv=True):
    """(u, s, vt) like numpy.linalg.svd (gesdd, falling back to gesvd)."""
    try:
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"SVD did not converge: {e}") from None


def eigh(a, lower=True, compute_v=True):
    """(w, v) ascending eigenvalues of Hermitian a, reading its lower (or upper) triangle."""
    uplo = "L" if lower else "U"
    try:
        if compute_v:
            return np.linalg.eigh(a, UPLO=uplo)
        return np.linalg.eigvalsh(a, UPLO=uplo)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"eigh did not converge: {e}") from None


def qr(a, mode="reduced"):
    """(q, r) or r alone for mode="r", like numpy.linalg.qr (geqrf + orgqr/ungqr)."""
    return np.linalg.qr(a, mode=mode)


def getrf(a):
    """LU factors of each matrix: (lu, piv) with 0-based row interchanges, like lu_factor.
    Square only. Exactly singular matrices are factored (zero pivot), not rejected."""
    outs, batch = _each(a, lambda m: sla.lu_factor(m, check_finite=False))
    lu = np.stack([o[0] for o in outs]).reshape(a.shape) if outs else a.copy()
    piv = np.stack([o[1] for o in outs]).reshape(batch + (a.shape[-1],)) if outs else \
        np.zeros(batch + (a.shape[-1],), dtype=np.int32)
    return lu, piv


def lu(a):
    """(p, l, u) with a = p @ l @ u for any m x n (l is m x k, u is k x n, k = min(m, n))."""
    return sla.lu(a, check_finite=False)


def potrf(a, lower=True):
    """Cholesky factor (lower: a = l lᴴ; upper: a = uᴴ u), zeros in the other triangle.
    Raises LinAlgError naming the batch index when a matrix is not positive definite."""
    def one(m):
        return sla.cholesky(m, lower=lower, check_finite=False)
    outs, _ = _each(a, one)
    return np.stack(outs).reshape(a.shape) if outs else a.copy()


def eig(a, compute_v=True):
    """(w, v) of a general square matrix, complex output, unit-norm columns."""
    try:
        if compute_v:
            w, v = np.linalg.eig(a)
            cdt = np.result_type(a.dtype, np.complex64)
            return w.astype(cdt, copy=False), v.astype(cdt, copy=False)
        return np.linalg.eigvals(a).astype(np.result_type(a.dtype, np.complex64), copy=False)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"eig did not converge: {e}") from None


def getrs(lu, piv, b, trans=0):
    """Solve with getrf's factors: op(a) x = b, op = (identity, transpose, conj-transpose)
    for trans = 0, 1, 2. b has shape (*batch, n, k)."""
    batch = lu.shape[:-2]
    n = lu.shape[-1]
    flu = lu.reshape((-1, n, n))
    fpiv = piv.reshape((-1, n))
    fb = b.reshape((-1,) + b.shape[-2:])
    out = np.empty(fb.shape, dtype=np.result_type(lu.dtype, b.dtype))
    for k in range(flu.shape[0]):
        out[k] = sla.lu_solve((flu[k], fpiv[k]), fb[k], trans=trans, check_finite=False)
    return out.reshape(batch + b.shape[-2:])


def trtrs(a, b, lower=False, trans=0, unit_diagonal=False):
    """Solve op(a) x = b with triangular a (trans 0, 1, 2 as in getrs); b (*batch, n, k)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    fa = a.reshape((-1,) + a.shape[-2:])
    fb = b.reshape((-1,) + b.shape[-2:])
    out = np.empty(fb.shape, dtype=np.result_type(a.dtype, b.dtype))
    for k in range(fa.shape[0]):
        out[k] = sla.solve_triangular(fa[k], fb[k], lower=lower, trans=trans,
                                      unit_diagonal=unit_diagonal, check_finite=False)
    return out.reshape(batch + b.shape[-2:])
