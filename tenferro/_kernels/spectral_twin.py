"""NumPy twin of ``spectral.pyx`` (the SVD and eigh pullback cores, same names,
signatures and results; the formulas are in spectral.pyx's docstring).

``tests/_kernels/test_spectral.py`` checks that both agree.
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

_Arr = NDArray[Any]


def _spectral_gap_inverse(d: _Arr, e2: _Arr) -> _Arr:
    """F = d/(d² + ε²), 0 where the denominator is 0 (d = 0 and ε = 0)."""
    den = d * d + e2
    f: _Arr = np.divide(d, den, out=np.zeros_like(den), where=den != 0)
    return f


def _same_block(x: _Arr, delta: _Arr) -> _Arr:
    """(B, k, k) mask of the pairs i ≠ j in one block of the sorted rows of x (B, k):
    runs of consecutive values within delta (B,) of each other."""
    k = x.shape[1]
    if k == 0:
        return np.zeros((x.shape[0], 0, 0), bool)
    gaps = np.abs(np.diff(x.astype(np.float64), axis=1)) <= delta[:, None]
    ids = np.concatenate([np.zeros((x.shape[0], 1), np.int64),
                          np.cumsum(~gaps, axis=1)], axis=1)
    mask: _Arr = (ids[:, :, None] == ids[:, None, :]) & ~np.eye(k, dtype=bool)
    return mask


def svd_core(X: _Arr | None, Y: _Arr | None, s: _Arr, sbar: _Arr | None, eps: float,
             rel: float, mode: int, out: _Arr, sinv: _Arr, drel: float = 0.0) -> None:
    """Fill ``out`` (B, k, k) and ``sinv`` (B, k) with the SVD pullback core;
    ε_b = eps + rel·s_max², block tolerance δ_b = drel·s_max."""
    smax = s[:, 0].astype(np.float64) if s.shape[1] else np.zeros(s.shape[0])
    e = eps + rel * smax * smax
    eps2 = e * e
    e2 = eps2[:, None]
    s2 = s * s
    den = s2 * s2 + e2
    sinv[...] = np.divide(s2 * s, den, out=np.zeros_like(den), where=den != 0)
    # the two poles of 1/(s_j² − s_i²), see spectral.pyx: σF ≈ 1/(s_j − s_i) (broadened)
    # and G ≈ 1/(s_j + s_i) (exact unless s_i + s_j ~ 0)
    sig = (s[:, None, :] + s[:, :, None]).astype(np.float64)
    F = sig * _spectral_gap_inverse(s2[:, None, :] - s2[:, :, None], eps2[:, None, None])
    F[_same_block(s, drel * smax)] = 0
    sig2 = sig * sig
    gden = sig2 * sig2 + eps2[:, None, None]
    G = np.divide(sig2 * sig, gden, out=np.zeros_like(gden), where=gden != 0)
    k = s.shape[1]
    G[:, np.arange(k), np.arange(k)] = 0
    P = np.zeros(out.shape, out.dtype) if X is None else X - X.conj().transpose(0, 2, 1)
    Q = np.zeros(out.shape, out.dtype) if Y is None else Y - Y.conj().transpose(0, 2, 1)
    core = (0.5 * (F * (P + Q) + G * (P - Q))).astype(out.dtype)
    diag = np.zeros(s.shape, out.dtype) if sbar is None else sbar.astype(out.dtype)
    if X is not None:
        xd = np.diagonal(X, 0, 1, 2)
        if out.dtype.kind == "c":
            diag = diag + 1j * xd.imag * sinv
        if mode == 1:
            core -= X * sinv[:, None, :]
            diag = diag - xd * sinv
    if Y is not None and mode == 2:
        core -= Y.conj().transpose(0, 2, 1) * sinv[:, :, None]
        diag = diag - np.diagonal(Y, 0, 1, 2).conj() * sinv
    k = s.shape[1]
    core[:, np.arange(k), np.arange(k)] = diag
    out[...] = core


def eigh_core(X: _Arr, w: _Arr, wbar: _Arr | None, eps: float, rel: float,
              out: _Arr, drel: float = 0.0) -> None:
    """Fill ``out`` (B, k, k) with the eigh pullback core; ε_b = eps + rel·max|λ|, block
    tolerance δ_b = drel·max|λ|."""
    k = w.shape[1]
    scale = (np.maximum(np.abs(w[:, 0]), np.abs(w[:, -1])).astype(np.float64) if k
             else np.zeros(w.shape[0]))
    e = eps + rel * scale
    F = _spectral_gap_inverse(w[:, None, :] - w[:, :, None], (e * e)[:, None, None])
    F[_same_block(w, drel * scale)] = 0
    core = 0.5 * F * (X - X.conj().transpose(0, 2, 1))
    core[:, np.arange(k), np.arange(k)] = 0 if wbar is None else wbar
    out[...] = core


def svd_backward(u: _Arr, s: _Arr, vt: _Arr, gu: _Arr | None, sbar: _Arr | None,
                 gvt: _Arr | None, eps: float, rel: float, out: _Arr,
                 drel: float = 0.0) -> None:
    """Fill ``out`` (B, m, n) with Ā of the thin SVD from the cotangents (each None when
    absent): svd_core's core of X = UᴴŪ, Y = VᴴV̄, then U·core·Vᴴ with the tall/wide
    terms."""
    nb, m, k = u.shape
    n = vt.shape[2]
    if nb == 0 or m == 0 or n == 0:
        return
    mode = 0 if m == n else (1 if m > n else 2)
    X = None if gu is None else u.conj().transpose(0, 2, 1) @ gu
    Y = None if gvt is None else vt @ gvt.conj().transpose(0, 2, 1)
    core = np.empty((nb, k, k), out.dtype)
    sinv = np.empty((nb, k), s.dtype)
    svd_core(X, Y, s, sbar, eps, rel, mode, core, sinv, drel)
    if mode == 2 and gvt is not None:
        out[...] = u @ (core @ vt + sinv[:, :, None] * gvt)
    elif mode == 1 and gu is not None:
        out[...] = (u @ core + gu * sinv[:, None, :]) @ vt
    else:
        out[...] = u @ core @ vt


def eigh_backward(v: _Arr, w: _Arr, gv: _Arr, wbar: _Arr | None, eps: float, rel: float,
                  out: _Arr, drel: float = 0.0) -> None:
    """Fill ``out`` (B, k, k) with Ā = V·core·Vᴴ, the core eigh_core's of X = VᴴV̄."""
    if out.size == 0:
        return
    core = np.empty(out.shape, out.dtype)
    eigh_core(v.conj().transpose(0, 2, 1) @ gv, w, wbar, eps, rel, core, drel)
    out[...] = v @ core @ v.conj().transpose(0, 2, 1)


def phase_check(X: _Arr | None, Y: _Arr | None, GU: _Arr | None,
                GV: _Arr | None) -> tuple[float, int]:
    """(worst, flat): the largest |Im(X_ii + Y_ii)| / (‖GU[b, :, i]‖ + ‖GV[b, i, :]‖)."""
    num: Any = 0      # 0 or an array
    den: Any = 0
    if X is not None:
        num = np.diagonal(X, 0, 1, 2).imag.astype(np.float64)
        # (GU is given whenever X is, GV whenever Y is)
        den = np.sqrt(np.sum(
            np.abs(GU.astype(np.complex128)) ** 2, axis=1))  # type: ignore[union-attr]
    if Y is not None:
        num = num + np.diagonal(Y, 0, 1, 2).imag
        den = den + np.sqrt(np.sum(
            np.abs(GV.astype(np.complex128)) ** 2, axis=2))  # type: ignore[union-attr]
    num = np.abs(num)
    if num.size == 0:
        return 0.0, 0
    ratio = np.where(num == 0, 0.0, num / np.where(den > 0, den, 1.0))
    ratio = np.where((num != 0) & (den == 0), 1e300, ratio)
    flat = int(np.argmax(ratio))
    return float(ratio.reshape(-1)[flat]), flat
