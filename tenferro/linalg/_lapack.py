"""The LAPACK drivers tenferro's linalg primals call, batched over leading dimensions.

This is the one place that talks to LAPACK. Each function takes ndarrays of shape
``(*batch, m, n)`` (any strides; integer input is converted to float64) and returns
ndarrays of the input's dtype (``eig``: the matching complex dtype); a failing matrix
raises tenferro's LinAlgError naming its batch index. The functions are the compiled
drivers of ``tenferro/_kernels/lapack_eig.pyx`` (svd, eigh, eig), ``lapack_qr.pyx`` (qr,
gelsd, lstsq_qr, pinv_qr) and ``lapack_lu_chol.pyx`` (getrf, lu, potrf, getrs, trtrs):
one Cython loop over the batch with the GIL released, calling
``scipy.linalg.cython_lapack`` directly. ``TENFERRO_PURE_PYTHON=1`` swaps in their
NumPy/SciPy twins (``tenferro/_kernels/lapack_*_twin.py``).

  svd(a, full_matrices=False, compute_uv=True) -> (u, s, vt), or s
      gesdd, falling back to gesvd for a matrix where it does not converge.
  eigh(a, lower=True, compute_v=True) -> (w, v), or w
      syevd/heevd; ascending w; reads only the lower (or upper) triangle.
  qr(a, mode="reduced") -> (q, r), or r for mode="r"; mode "complete" as numpy.
      geqrf + orgqr/ungqr for small matrices, geqrt + blocked accumulation of Q for
      larger ones (k >= 64); same values as numpy.linalg.qr.
  getrf(a, return_info=False) -> (lu, piv) or (lu, piv, info)
      piv: 0-based row interchanges (int32), like scipy.linalg.lu_factor. Exactly
      singular matrices are factored, not rejected: info[...] = k > 0 says u[k-1, k-1]
      is exactly zero. lu is a per-matrix Fortran-ordered view (getrs uses it as is).
  lu(a, return_perm=False) -> (p, l, u) with a = p @ l @ u, any m x n, p of a's real
      dtype; (p, l, u, perm) with p[perm[i], i] = 1 when return_perm (intp).
  potrf(a, lower=True) -> l (a = l lᴴ) or u (a = uᴴ u), zeros in the other triangle;
      LinAlgError naming the batch index when a matrix is not positive definite.
  eig(a, compute_v=True) -> (w, v), or w; complex, unit-norm columns of v.
  getrs(lu, piv, b, trans=0) -> x with op(a) x = b, op = (a, aᵀ, aᴴ) for trans 0, 1, 2;
      b (*batch, n, k), batches broadcast.
  trtrs(a, b, lower=False, trans=0, unit_diagonal=False) -> x with op(a) x = b for
      triangular a (only that triangle is read); LinAlgError when a diagonal entry is 0.
  gelsd(a, b, rcond) -> (x, rank, s): minimum-norm least squares x (*batch, n, k) of
      a (*batch, m, n), b (*batch, m, k); rank (*batch) int64; s the singular values of a.
      s <= rcond * s_max count as zero, rcond < 0 means machine precision (scipy's cond).
  lstsq_qr(a, b, rcond) -> (x, rank, s, res, r): the same x, rank and s as gelsd, computed
      through a QR of a (of aᴴ when m < n; the minimum-norm solution x = Q R⁻ᴴ b) with the
      singular values of R (they are a's) deciding the rank by gelsd's rule (rcond <= 0
      or >= 1: machine precision); a rank-deficient matrix is handed to gelsd. res
      (*batch, k): squared column norms of b − a x where rank = n (the tail of Qᴴb), else
      0; r (*batch, p, p), p = min(m, n): the triangular factor, upper, for the backward.
      About 2.5x faster than gelsd for tall 2n x n matrices (n = 16 to 256).
  pinv_qr(a, rtol) -> (x, full): x = a⁺ (*batch, n, m) through QR (R⁻¹Qᴴ, or QR⁻ᴴ of
      aᴴ = QR when m < n) where full (*batch, bool) says every singular value of the
      matrix is > rtol·s_max (rtol broadcasts to the batch); x is unset elsewhere (rank
      below min(m, n), NaN or Inf): the caller uses svd there.

svd, eigh, eig, gelsd and lstsq_qr reject a matrix with a NaN or Inf entry (LinAlgError
naming it) rather than let LAPACK iterate on it; the direct factorizations propagate NaN.
"""
from .._kernels import load as load_kernel

_eig = load_kernel("lapack_eig")
_qr = load_kernel("lapack_qr")
_lu_chol = load_kernel("lapack_lu_chol")
eig, eigh, svd = _eig.eig, _eig.eigh, _eig.svd
gelsd, lstsq_qr, pinv_qr, qr = _qr.gelsd, _qr.lstsq_qr, _qr.pinv_qr, _qr.qr
getrf, getrs, lu, potrf, trtrs = (_lu_chol.getrf, _lu_chol.getrs, _lu_chol.lu,
                                  _lu_chol.potrf, _lu_chol.trtrs)

__all__ = ["svd", "eigh", "qr", "getrf", "lu", "potrf", "eig", "getrs", "trtrs", "gelsd",
           "lstsq_qr", "pinv_qr"]
