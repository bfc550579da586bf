"""NumPy twin of ``expm.pyx`` (same names, signatures and results; the algorithm and
formulas are in expm.pyx's docstring).

``tests/_kernels/test_expm.py`` checks that both agree. ``data`` is (groups, par): one
_ExpmPade per distinct (m, s) with the indices of its matrices, and the (nb, 2) int32
(m, s) of each matrix ((0, 0): NaN).
"""

import math
from typing import Any, Sequence

import numpy as _np
from numpy.typing import NDArray

# (saved, par): what expm_frechet reuses (expm.pyi)
ExpmData = tuple[Any, NDArray[_np.int32]]


# Padé coefficients b_j of r_m(x) = p_m(x)/p_m(−x), p_m(x) = Σ b_j x^j (Higham 2005)
_EXPM_B = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# ‖A‖₁ bounds θ_m for degree m without scaling (double precision, Higham 2005 Table 2.3)
_EXPM_THETA = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
               (7, 9.504178996162932e-1), (9, 2.097847961257068e0))
_EXPM_THETA13 = 5.371920351148152


def _expm_degree(norm1: float) -> tuple[int, int]:
    """(m, s): Padé degree and number of squarings for a matrix of 1-norm ``norm1``
    ((0, 0) when it is not finite).

    The 1-norm, not the sharper η = max(‖A⁴‖^(1/4), ‖A⁶‖^(1/6)) that scipy.linalg.expm
    uses for the value (Al-Mohy & Higham 2009a): the derivative's truncation terms are
    words A^j E A^l, which η does not bound (for A = 1000·(upper shift), 4×4, η = 0 and
    the degree-3 approximant's L is 5% off, while its value is exact).
    """
    if not math.isfinite(norm1):
        return 0, 0
    for m, theta in _EXPM_THETA:
        if norm1 <= theta:
            return m, 0
    return 13, max(0, math.ceil(math.log2(norm1 / _EXPM_THETA13)))


def _expm_combine(coef: Sequence[Sequence[float]], mats: Sequence[Any]) -> list[Any]:
    """Σ coef[k] mats[k] for each row of coef (a scalar k-th entry of mats is that
    multiple of I)."""
    out: list[Any] = []
    for row in coef:
        acc = None
        for c, x in zip(row, mats):
            acc = c * x if acc is None else acc + c * x
        out.append(acc)
    return out


class _ExpmPade:
    """exp(A) for a stack sharing one (m, s), and what L(A, ·) reuses."""
    __slots__ = ("m", "s", "a", "pows", "w", "w1", "z1", "qinv", "r", "xs", "value")

    def __init__(self, a: NDArray[Any], m: int, s: int) -> None:
        self.m, self.s = m, s
        b = _EXPM_B[m]
        n = a.shape[-1]
        eye = _np.eye(n, dtype=a.dtype)
        q = 3 if m == 13 else (m - 1) // 2              # A², A⁴, ..., A^2q
        a = a * 2.0 ** -s
        pows = [a @ a]
        while len(pows) < q:
            pows.append(pows[-1] @ pows[0])
        if m == 13:
            a6 = pows[2]
            w1, z1 = _expm_combine([b[9:14:2], b[8:13:2]], pows)
            w2, z2 = _expm_combine([b[3:8:2], b[2:7:2]], pows)
            w = a6 @ w1 + (w2 + b[1] * eye)
            v = a6 @ z1 + (z2 + b[0] * eye)
            self.w1, self.z1 = w1, z1
        else:
            w, v = _expm_combine([b[3::2], b[2::2]], pows)
            w = w + b[1] * eye
            v = v + b[0] * eye
            self.w1 = self.z1 = None
        u = a @ w
        self.a, self.pows, self.w = a, pows, w
        # r_m(A) = Q⁻¹(V + U), Q = V − U, Q⁻¹ kept for L
        self.qinv = _np.linalg.inv(v - u)
        self.r = self.qinv @ (v + u)
        xs = [self.r]
        for _ in range(s):
            xs.append(xs[-1] @ xs[-1])
        self.value = xs.pop()
        self.xs = xs                                    # X_0 = r, X_k = X_{k−1}², k < s

    def frechet(self, e: NDArray[Any]) -> NDArray[Any]:
        """L(A, E) for a stack E of A's shape (Al-Mohy & Higham 2009, Alg. 6.4)."""
        m, a, pows = self.m, self.a, self.pows
        b = _EXPM_B[m]
        e = e * 2.0 ** -self.s
        a2 = pows[0]
        ms = [a @ e + e @ a]                            # M₂ = L(A², E)
        for k in range(1, len(pows)):                   # M_2k = A^(2k−2) M₂ + M_(2k−2) A²
            ms.append(pows[k - 1] @ ms[0] + ms[-1] @ a2)
        if m == 13:
            a6, m6 = pows[2], ms[2]
            lw1, lz1 = _expm_combine([b[9:14:2], b[8:13:2]], ms)
            lw2, lz2 = _expm_combine([b[3:8:2], b[2:7:2]], ms)
            lw = a6 @ lw1 + m6 @ self.w1 + lw2          # L_W = L(A⁶W₁ + W₂, E)
            lv = a6 @ lz1 + m6 @ self.z1 + lz2
        else:
            lw, lv = _expm_combine([b[3::2], b[2::2]], ms)
        lu_ = a @ lw + e @ self.w                       # L_U = L(A W, E)
        # L(r_m) = (V − U)⁻¹(L_U + L_V + (L_U − L_V) r_m)
        lx: NDArray[Any] = self.qinv @ (lu_ + lv + (lu_ - lv) @ self.r)
        for x in self.xs:                               # X_(k+1) = X_k²
            lx = x @ lx + lx @ x
        return lx


def _expm_wide(x: NDArray[Any]) -> NDArray[Any]:
    return x.astype(_np.complex128 if x.dtype.kind == "c" else _np.float64, copy=False)


def expm_pade(a: NDArray[Any]) -> tuple[NDArray[_np.inexact[Any]], ExpmData]:
    """Twin of expm.expm_pade: (exp(a), (groups, par)) in float64/complex128."""
    a = _expm_wide(a)
    n = a.shape[-1]
    # (annotated: NumPy 2.4's stubs infer a 0-d shape for this reshape)
    flat: NDArray[Any] = a.reshape((int(_np.prod(a.shape[:-2])), n, n))
    if a.size == 0:                              # ‖·‖₁ of an empty matrix is 0: (3, 0)
        par = _np.tile(_np.array([3, 0], _np.int32), (flat.shape[0], 1))
        return _np.zeros(a.shape, a.dtype), ([], par)
    norms = _np.abs(flat).sum(axis=-2).max(axis=-1)
    par = _np.array([_expm_degree(float(v)) for v in norms], _np.int32).reshape(-1, 2)
    value = _np.full(flat.shape, _np.nan, a.dtype)
    groups = []
    for key in sorted(set(map(tuple, par.tolist()))):
        if key == (0, 0):
            continue
        idx = _np.flatnonzero((par == key).all(axis=1))
        p = _ExpmPade(flat[idx], *key)
        groups.append((idx, p))
        value[idx] = p.value
    return value.reshape(a.shape), (groups, par)


def expm_frechet(data: ExpmData, e: NDArray[Any],
                 adjoint: bool = False) -> NDArray[_np.inexact[Any]]:
    """Twin of expm.expm_frechet: L(A, E), or L(Aᴴ, E) = L(A, Eᴴ)ᴴ with ``adjoint``."""
    groups, _ = data
    e = _expm_wide(e)
    if groups and groups[0][1].a.dtype != e.dtype:
        e = e.astype(groups[0][1].a.dtype)
    n = e.shape[-1]
    flat = e.reshape((int(_np.prod(e.shape[:-2])), n, n))
    if adjoint:
        flat = flat.swapaxes(-1, -2).conj()
    out = _np.full(flat.shape, _np.nan, e.dtype)
    for idx, p in groups:
        out[idx] = p.frechet(flat[idx])
    if adjoint:
        out = out.swapaxes(-1, -2).conj()
    return _np.ascontiguousarray(out).reshape(e.shape)
