"""The derivatives of the incomplete gamma and beta functions and of Student's t cdf in
their shape parameters, summed in float64 from series and continued fractions (the
numerics on ndarrays; tenferro.special._incomplete records them as ops)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from numpy.typing import ArrayLike

import numpy as np
import scipy.special as _sc
from scipy.special import _ufuncs as _u

from ._support import _F64, _Idx, _Mask, _mask, _where
from ._gamma import _BERNOULLI


# ---- derivatives in the shape parameters -------------------------------------------------
#
# ∂/∂a of P(a, x) and of I_x(a, b) have no closed form: they are summed from the series and
# continued fractions of the functions, differentiated term by term in float64 (Moore,
# "Algorithm AS 187", Appl. Statist. 31 (1982); the recurrences of a continued fraction's
# convergents carry their derivatives as in Boik & Robison-Cox, J. Stat. Software 3
# (1998)). Each entry is iterated until the terms (bounded by a geometric tail) stop
# changing the sums at rounding level; an entry that has not converged after
# _SHAPE_MAX_TERMS terms gets NaN. Every such derivative is an op (first and second order)
# whose derivative in x is a closed form (the density differentiated in the shape), so
# mixed second derivatives and any order in x work; the third derivative in a shape
# parameter raises UnsupportedADError.

_EPS = float(np.finfo(np.float64).eps)
_SHAPE_MAX_TERMS = 20000


def _iterate(n: int, step: Callable[[_Idx, int], _Mask]) -> _Idx:
    """Call ``step(idx, k)`` for k = 1, 2, ... on the indices ``idx`` (of 0..n−1) not yet
    converged (step returns the converged mask of idx); the indices left after
    _SHAPE_MAX_TERMS steps."""
    idx = np.arange(n)
    k = 0
    while idx.size and k < _SHAPE_MAX_TERMS:
        k += 1
        done = step(idx, k)
        if done.any():
            idx = idx[~done]
    return idx


def _gamma_series(a: _F64, x: _F64, order: int) -> list[_F64]:
    """∂ᵏP/∂aᵏ (k <= order) for x < a + 1 (1-D float64 arrays): P = e^L·S with
    L = a log x − x − lgamma(a+1) and S = Σₙ tₙ, tₙ = Πₖ₌₁ⁿ x/(a+k) (DLMF 8.7.1), all terms
    positive; ∂ log tₙ/∂a = −Σₖ 1/(a+k), ∂² log tₙ/∂a² = Σₖ 1/(a+k)²."""
    n = a.size
    t, s0 = np.ones(n), np.ones(n)
    s1, s2, g, h = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)

    def step(i: _Idx, k: int) -> Any:
        ai, xi = a[i], x[i]
        r = 1 / (ai + k)
        ti = t[i] * (xi * r)
        gi = g[i] - r
        t[i], g[i] = ti, gi
        u1 = ti * gi
        s0[i] += ti
        s1[i] += u1
        # the remaining terms are below a geometric series of ratio x/(a+k+1) < 1
        tail = 1 / (1 - xi / (ai + k + 1))
        done = (ti * tail <= _EPS * s0[i]) & (np.abs(u1) * tail <= _EPS * np.abs(s1[i]))
        if order == 2:
            hi = h[i] + r * r
            h[i] = hi
            u2 = ti * (gi * gi + hi)
            s2[i] += u2
            done &= u2 * tail <= _EPS * s2[i]
        return done

    bad = _iterate(n, step)
    e = np.exp(_u.xlogy(a, x) - x - _u.gammaln(a + 1))
    L1 = np.log(x) - _u.psi(a + 1)
    out = [e * (L1 * s0 + s1)]
    if order == 2:
        L2 = -_sc.polygamma(1, a + 1)
        out.append(e * ((L2 + L1 * L1) * s0 + 2 * L1 * s1 + s2))
    for o in out:
        o[bad] = np.nan
    return out


def _gamma_cf(a: _F64, x: _F64, order: int) -> list[_F64]:
    """∂ᵏQ/∂aᵏ (k <= order) for x >= a + 1: Q = e^L·f with L = a log x − x − lgamma(a) and
    f = 1/(b₀ + a₁/(b₁ + a₂/(b₂ + ...))), bₙ = x + 2n + 1 − a, aₙ = −n(n − a) (DLMF 8.9.2,
    its even part); the convergents Aₙ/Bₙ follow Aₙ = bₙAₙ₋₁ + aₙAₙ₋₂ and their derivatives
    in a the derivative of that recurrence (∂bₙ/∂a = −1, ∂aₙ/∂a = n), all rescaled by
    1/|Aₙ| every step (f and its derivatives are ratios, unchanged by the scale)."""
    n = a.size
    st = [np.ones(n), x + 1 - a, np.zeros(n), np.ones(n),     # Aₙ₋₁, Aₙ, Bₙ₋₁, Bₙ
          np.zeros(n), -np.ones(n), np.zeros(n), np.zeros(n),  # their a-derivatives
          np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)]  # second derivatives
    f = st[3] / st[1]
    f1 = (st[7] - f * st[5]) / st[1]
    f2 = np.zeros(n)

    def step(i: _Idx, k: int) -> Any:
        Ap, A, Bp, B, dAp, dA, dBp, dB, ddAp, ddA, ddBp, ddB = (v[i] for v in st)
        ai = a[i]
        bk = x[i] + 2 * k + 1 - ai
        ak = -k * (k - ai)
        An = bk * A + ak * Ap
        Bn = bk * B + ak * Bp
        dAn = bk * dA - A + ak * dAp + k * Ap
        dBn = bk * dB - B + ak * dBp + k * Bp
        ddAn = bk * ddA - 2 * dA + ak * ddAp + 2 * k * dAp
        ddBn = bk * ddB - 2 * dB + ak * ddBp + 2 * k * dBp
        scale = 1 / np.abs(An)
        new = (A, An, B, Bn, dA, dAn, dB, dBn, ddA, ddAn, ddB, ddBn)
        for v, w in zip(st, new):
            v[i] = w * scale
        An, Bn, dAn, dBn, ddAn, ddBn = (st[j][i] for j in (1, 3, 5, 7, 9, 11))
        fn = Bn / An
        f1n = (dBn - fn * dAn) / An
        # successive convergents agree to rounding (a few ulps of noise: the
        # derivatives are differences of rescaled products)
        done = (np.abs(fn - f[i]) <= 2 * _EPS * np.abs(fn)) \
            & (np.abs(f1n - f1[i]) <= 8 * _EPS * np.abs(f1n))
        f[i], f1[i] = fn, f1n
        if order == 2:
            f2n = (ddBn - fn * ddAn - 2 * f1n * dAn) / An
            done &= np.abs(f2n - f2[i]) <= 64 * _EPS * np.abs(f2n)
            f2[i] = f2n
        return done

    bad = _iterate(n, step)
    e = np.exp(_u.xlogy(a, x) - x - _u.gammaln(a))
    L1 = np.log(x) - _u.psi(a)
    out = [e * (L1 * f + f1)]
    if order == 2:
        L2 = -_sc.polygamma(1, a)
        out.append(e * ((L2 + L1 * L1) * f + 2 * L1 * f1 + f2))
    for o in out:
        o[bad] = np.nan
    return out


def _gammainc_da_np(a: ArrayLike, x: ArrayLike, order: int) -> list[_F64]:
    """[∂P/∂a] (order 1) or [∂P/∂a, ∂²P/∂a²] (order 2) as float64 arrays of the broadcast
    shape: the series of P where x < a + 1, the continued fraction of Q = 1 − P elsewhere
    (each sums the small one of P and Q: no cancellation). 0 at x = 0 and x = inf; NaN for
    a <= 0, x < 0 or NaN input."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    out = [np.full(a.shape, np.nan) for _ in range(order)]
    ok = (a > 0) & (x >= 0)
    edge = ok & ((x == 0) | np.isposinf(x) | np.isposinf(a))
    inner = ok & ~edge
    series = inner & (x < a + 1)
    cfrac = inner & ~series
    with np.errstate(all="ignore"):
        for o in out:
            o[edge] = 0
        if series.any():
            for o, v in zip(out, _gamma_series(a[series], x[series], order)):
                o[series] = v
        if cfrac.any():
            for o, v in zip(out, _gamma_cf(a[cfrac], x[cfrac], order)):
                o[cfrac] = -v
    return [o.reshape(shape) for o in out]


def _beta_series(p: _F64, q: _F64, u: _F64, v: _F64, order: int) -> list[_F64]:
    """Derivatives of J = I_u(p, q) in (p, q), v = 1 − u (1-D float64 arrays): J = e^L·S,
    L = p log u + q log v − lgamma(p+1) − lgamma(q) + lgamma(p+q), S = Σₙ tₙ with
    tₙ = Πₖ₌₀ⁿ⁻¹ u(p+q+k)/(p+1+k) (DLMF 8.17.8 after Euler's transformation of the
    hypergeometric function: positive terms). Returns [Jp, Jq] (order 1) or
    [Jp, Jq, Jpp, Jpq, Jqq] (order 2)."""
    n = p.size
    t, s = np.ones(n), np.ones(n)
    gp, gq, hpp, hqq = (np.zeros(n) for _ in range(4))
    sp, sq, spp, spq, sqq = (np.zeros(n) for _ in range(5))

    def step(i: _Idx, k: int) -> Any:
        pi, qi, ui = p[i], q[i], u[i]
        c = 1 / (pi + qi + (k - 1))
        d = 1 / (pi + k)
        ti = t[i] * (ui * (pi + qi + (k - 1)) * d)
        gpi = gp[i] + (c - d)          # ∂ log tₙ/∂p
        gqi = gq[i] + c                # ∂ log tₙ/∂q
        t[i], gp[i], gq[i] = ti, gpi, gqi
        up, uq = ti * gpi, ti * gqi
        s[i] += ti
        sp[i] += up
        sq[i] += uq
        # past the largest term the ratios decrease to u or increase to it: the tail is
        # below a geometric series of ratio max(next ratio, u)
        nxt = np.maximum(ui * (pi + qi + k) / (pi + k + 1), ui)
        tail = np.where(nxt < 1, 1 / (1 - nxt), np.inf)
        done = (ti * tail <= 2 * _EPS * s[i]) \
            & (np.abs(up) * tail <= 2 * _EPS * np.abs(sp[i])) \
            & (uq * tail <= 2 * _EPS * sq[i])
        if order == 2:
            hppi = hpp[i] + (d * d - c * c)
            hqqi = hqq[i] - c * c      # = ∂² log tₙ/∂p∂q too
            hpp[i], hqq[i] = hppi, hqqi
            upp = ti * (gpi * gpi + hppi)
            upq = ti * (gpi * gqi + hqqi)
            uqq = ti * (gqi * gqi + hqqi)
            spp[i] += upp
            spq[i] += upq
            sqq[i] += uqq
            done &= (np.abs(upp) * tail <= 2 * _EPS * np.abs(spp[i])) \
                & (np.abs(upq) * tail <= 2 * _EPS * np.abs(spq[i])) \
                & (np.abs(uqq) * tail <= 2 * _EPS * np.abs(sqq[i]))
        return done

    bad = _iterate(n, step)
    return _beta_combine(p, q, u, v, (s, sp, sq, spp, spq, sqq), order, bad)


def _beta_combine(p: _F64, q: _F64, u: _F64, v: _F64, sums: Sequence[_F64 | None],
                  order: int, bad: _Idx) -> list[_F64]:
    """The derivatives of J = e^L·S in (p, q) from the sum S and its derivatives
    ``sums`` = (S, Sp, Sq, Spp, Spq, Sqq) (of the series or the continued fraction), with
    e^L = u^p v^q/(p B(p, q)); NaN where ``bad`` (not converged)."""
    s, sp, sq, spp, spq, sqq = sums
    # log u and log v from the smaller of u, v (log of a number near 1 would lose the
    # digits of the other); lgamma(p+q) − lgamma(p+1) − lgamma(q) without the error
    # ~1e-16·q·log q of the difference where one parameter is ½ (stdtr)
    log_u = np.where(v < 0.5, np.log1p(-v), np.log(u))
    log_v = np.where(u < 0.5, np.log1p(-u), np.log(v))
    lg = _u.gammaln(p + q) - _u.gammaln(p + 1) - _u.gammaln(q)
    half_q, half_p = q == 0.5, p == 0.5
    if half_q.any():
        lg[half_q] = (_lgamma_half_gap(p[half_q]) - np.log(p[half_q])
                      - _u.gammaln(0.5))
    if half_p.any():
        lg[half_p] = _lgamma_half_gap(q[half_p]) - _u.gammaln(1.5)
    e = np.exp(p * log_u + q * log_v + lg)
    psq = _u.psi(p + q)
    dpsi = psq - _u.psi(p + 1)      # −1/p − ψ(p) = −ψ(p+1): no cancellation with 1/p
    if half_q.any():   # ψ(p+½) − ψ(p+1) = ε(p) − 1/(2p) keeps its digits for large p
        dpsi[half_q] = _psi_half_gap(p[half_q]) - 0.5 / p[half_q]
    Lp = log_u + dpsi
    Lq = log_v - _u.psi(q) + psq
    out = [e * (Lp * s + sp), e * (Lq * s + sq)]
    if order == 2:
        t1 = _sc.polygamma(1, p + q)
        Lpp = t1 - _sc.polygamma(1, p + 1)
        if half_q.any():   # ψ₁(p+½) − ψ₁(p+1) = ε′(p) + 1/(2p²)
            ph = p[half_q]
            Lpp[half_q] = _psi_half_gap(ph, deriv=True) + 0.5 / (ph * ph)
        Lqq = t1 - _sc.polygamma(1, q)
        out += [e * ((Lpp + Lp * Lp) * s + 2 * Lp * sp + spp),
                e * ((t1 + Lp * Lq) * s + Lp * sq + Lq * sp + spq),
                e * ((Lqq + Lq * Lq) * s + 2 * Lq * sq + sqq)]
    for o in out:
        o[bad] = np.nan
    return out


def _beta_cf(p: _F64, q: _F64, u: _F64, v: _F64, order: int) -> list[_F64]:
    """The derivatives of J = I_u(p, q) in (p, q) as _beta_series, from the continued
    fraction J = e^L·f, f = 1/(1 + d₁/(1 + d₂/(1 + ...))) with
    d₂ₘ₊₁ = −(p+m)(p+q+m)u/((p+2m)(p+2m+1)), d₂ₘ = m(q−m)u/((p+2m−1)(p+2m)) (DLMF
    8.17.22), for the large parameters where the series needs too many terms (it
    converges in O(√max(p, q)) steps for u < (p+1)/(p+q+2)). The convergents
    Aₙ = Aₙ₋₁ + dₙAₙ₋₂ (Bₙ likewise) carry their first and second derivatives in (p, q)
    (Boik & Robison-Cox 1998), rescaled by 1/|Aₙ| every step; dₙ is a quotient of two
    products of factors linear in p and q, differentiated by the quotient rule."""
    n = p.size
    m2 = 6 if order == 2 else 3          # tracks: value, ∂p, ∂q (, ∂pp, ∂pq, ∂qq)
    Ap, A = np.zeros((m2, n)), np.zeros((m2, n))
    Bp, B = np.zeros((m2, n)), np.zeros((m2, n))
    Ap[0], A[0], B[0] = 1, 1, 1
    f = np.ones((m2, n))
    f[1:] = 0

    def step(i: _Idx, k: int) -> Any:
        pi, qi, ui = p[i], q[i], u[i]
        one, zero = np.ones_like(pi), np.zeros_like(pi)
        if k % 2:
            mm = (k - 1) // 2
            sign = -ui
            n1, n1p, n1q = pi + mm, one, zero
            n2, n2p, n2q = pi + qi + mm, one, one
            den = (pi + 2 * mm) * (pi + 2 * mm + 1)
            den_p = 2 * pi + 4 * mm + 1
        else:
            mm = k // 2
            sign = ui
            n1, n1p, n1q = mm * one, zero, zero
            n2, n2p, n2q = qi - mm, zero, one
            den = (pi + 2 * mm - 1) * (pi + 2 * mm)
            den_p = 2 * pi + 4 * mm - 1
        d = sign * n1 * n2 / den
        dp = (sign * (n1p * n2 + n1 * n2p) - d * den_p) / den
        dq = sign * (n1q * n2 + n1 * n2q) / den
        ds = [d, dp, dq]
        if order == 2:
            dpp = (sign * 2 * n1p * n2p - 2 * dp * den_p - 2 * d) / den
            dpq = (sign * (n1p * n2q + n1q * n2p) - dq * den_p) / den
            dqq = sign * 2 * n1q * n2q / den
            ds += [dpp, dpq, dqq]
        new = []
        for X, Xp in ((A, Ap), (B, Bp)):
            x0, xp0 = X[:, i], Xp[:, i]
            y = x0 + d * xp0
            y[1] += dp * xp0[0]
            y[2] += dq * xp0[0]
            if order == 2:
                y[3] += ds[3] * xp0[0] + 2 * dp * xp0[1]
                y[4] += ds[4] * xp0[0] + dp * xp0[2] + dq * xp0[1]
                y[5] += ds[5] * xp0[0] + 2 * dq * xp0[2]
            new.append((x0, y))
        scale = 1 / np.abs(new[0][1][0])
        (a_old, a_new), (b_old, b_new) = new
        Ap[:, i], A[:, i] = a_old * scale, a_new * scale
        Bp[:, i], B[:, i] = b_old * scale, b_new * scale
        a_, b_ = A[:, i], B[:, i]
        fn = np.empty_like(a_)
        fn[0] = b_[0] / a_[0]
        fn[1] = (b_[1] - fn[0] * a_[1]) / a_[0]
        fn[2] = (b_[2] - fn[0] * a_[2]) / a_[0]
        if order == 2:
            fn[3] = (b_[3] - 2 * fn[1] * a_[1] - fn[0] * a_[3]) / a_[0]
            fn[4] = (b_[4] - fn[1] * a_[2] - fn[2] * a_[1] - fn[0] * a_[4]) / a_[0]
            fn[5] = (b_[5] - 2 * fn[2] * a_[2] - fn[0] * a_[5]) / a_[0]
        tol = np.array([2, 8, 8, 64, 64, 64][:m2])[:, None] * _EPS
        done = (np.abs(fn - f[:, i]) <= tol * np.abs(fn)).all(axis=0)
        f[:, i] = fn
        return done

    bad = _iterate(n, step)
    sums = tuple(f) + ((None,) * 3 if order == 1 else ())
    return _beta_combine(p, q, u, v, sums, order, bad)


def _beta_series_cost(p: _F64, q: _F64, u: _F64) -> _F64:
    """About how many terms the series of I_u(p, q) needs: up to its largest term, then
    until uⁿ is below rounding."""
    peak = np.maximum(0, (u * (p + q) - p - 1) / (1 - u))
    return peak + 37 / -np.log(u)


_BETA_ORDER = ((1, 0), (0, 1), (2, 0), (1, 1), (0, 2))


_SERIES_MAX_COST = 2000


def _betainc_dab_np(a: ArrayLike, b: ArrayLike, x: ArrayLike, y: ArrayLike, order: int
                    ) -> list[_F64]:
    """The derivatives of I_x(a, b) in (a, b) listed in _BETA_ORDER (the first two for
    order 1), float64 arrays of the broadcast shape; y = 1 − x (given by the caller where
    it is more accurate than 1 − x). Summed for I_x(a, b) or for 1 − I_x(a, b) =
    I_y(b, a): the one whose value is below 0.05 (the other's derivative would cancel
    against its value near 1), else the one whose series has fewer terms, or (between
    the tails) the one whose continued fraction converges fast, x < (a+1)/(a+b+2). The
    series where it needs at most _SERIES_MAX_COST terms, the continued fraction for the
    large parameters beyond. 0 at x = 0 and 1; NaN for a <= 0, b <= 0, x outside [0, 1],
    infinite a or b, NaN input."""
    a, b, x, y = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x, y)))
    shape = a.shape
    a, b, x, y = a.ravel(), b.ravel(), x.ravel(), y.ravel()
    out = [np.full(a.shape, np.nan) for _ in range(2 if order == 1 else 5)]
    ok = (a > 0) & (b > 0) & (x >= 0) & (x <= 1) & np.isfinite(a) & np.isfinite(b)
    edge = ok & ((x == 0) | (x == 1))
    inner = ok & ~edge
    with np.errstate(all="ignore"):
        for o in out:
            o[edge] = 0
        value = _u.betainc(a, b, x)
        tail = np.minimum(value, 1 - value) < 0.05
        cost_lower, cost_upper = _beta_series_cost(a, b, x), _beta_series_cost(b, a, y)
        swap = np.where(tail, value > 0.5, cost_upper < cost_lower)
        cost = np.where(swap, cost_upper, cost_lower)
        cfrac = cost > _SERIES_MAX_COST
        swap = np.where(cfrac & ~tail, x > (a + 1) / (a + b + 2), swap)
        for method, use in ((_beta_series, ~cfrac), (_beta_cf, cfrac)):
            for sel, flip in ((inner & use & ~swap, False), (inner & use & swap, True)):
                if not sel.any():
                    continue
                if flip:    # I_x(a, b) = 1 − I_y(b, a): p = b, q = a
                    r = method(b[sel], a[sel], y[sel], x[sel], order)
                    r = [-r[1], -r[0]] + ([-r[4], -r[3], -r[2]] if order == 2 else [])
                else:
                    r = method(a[sel], b[sel], x[sel], y[sel], order)
                for o, v in zip(out, r):
                    o[sel] = v
    return [o.reshape(shape) for o in out]


def _log1p_neg_plus(y: Any) -> Any:
    """log(1 − y) + y for 0 <= y < 1, without the cancellation of the two terms for small
    y: −Σₖ₌₂ yᵏ/k (28 terms, below rounding for y < 0.25). Written with NumPy functions and
    operators: on Tensors it is differentiable."""
    small = _mask(y) < 0.25
    far = np.log1p(-y) + y
    if not small.any():
        return far
    ys = _where(small, y, 0) if not small.all() else y
    p = 1 / 29
    for k in range(28, 1, -1):
        p = p * ys + 1 / k
    near = -(ys * ys) * p
    return near if small.all() else _where(small, near, far)


def _log1pmx_small(h: Any) -> Any:
    """log(1 + h) − h for 0 <= h <= 0.05 (16 terms of its series)."""
    p = -1 / 16
    for k in range(15, 1, -1):
        p = p * h + (1 / k if k % 2 else -1 / k)
    return (h * h) * p


def _psi_half_gap(a: Any, deriv: bool = False) -> Any:
    """ε(a) = ψ(a+½) − ψ(a) − 1/(2a) (deriv: ε′(a) = ψ₁(a+½) − ψ₁(a) + 1/(2a²)), which the
    plain difference gets with ~log₁₀(a) digits lost: ε(a) = Σⱼ₌₀⁹ 1/(4c(c+½)(c+1))
    (c = a + j, from ψ(x+1) = ψ(x) + 1/x) plus ε at b = a + 10 from Stirling's series
    (DLMF 5.11.2), ε(b) = log1pmx(h) + h²/(1+h) − Σₖ B₂ₖ/(2k)·b⁻²ᵏ·expm1(−2k·log1p h),
    h = 1/(2b); ε′(b) = −1/(4b(b+½)²) + Σₖ B₂ₖ·b⁻²ᵏ⁻¹·expm1(−(2k+1)·log1p h). Full float64
    accuracy for every a > 0; NumPy functions and operators (differentiable on Tensors)."""
    tot = 0
    for j in range(10):
        c = a + j
        term = 1 / (4 * c * (c + 0.5) * (c + 1))
        tot = tot + (-term * (1 / c + 1 / (c + 0.5) + 1 / (c + 1)) if deriv else term)
    b = a + 10
    h = 0.5 / b
    lh = np.log1p(h)
    inv2 = 1 / (b * b)
    if deriv:
        asym = -0.25 / (b * (b + 0.5) * (b + 0.5))
        pw = 1 / b
        for k, bern in enumerate(_BERNOULLI, start=1):
            pw = pw * inv2
            asym = asym + bern * pw * np.expm1(-(2 * k + 1) * lh)
    else:
        asym = _log1pmx_small(h) + h * h / (1 + h)
        pw = 1
        for k, bern in enumerate(_BERNOULLI, start=1):
            pw = pw * inv2
            asym = asym - bern / (2 * k) * pw * np.expm1(-2 * k * lh)
    return tot + asym


def _lgamma_half_gap(a: ArrayLike) -> _F64:
    """lgamma(a + ½) − lgamma(a) for a > 0 (float64 arrays), without the absolute error
    ~1e-16·a·log a of the difference (also in betaln): for a >= 10 Stirling's series,
    ½ log a + a·log1pmx(h) + Σₖ B₂ₖ/(2k(2k−1))·a¹⁻²ᵏ·expm1((1−2k)·log1p h), h = 1/(2a)."""
    a = np.asarray(a, np.float64)
    big = a >= 10
    out: _F64 = _u.gammaln(a + 0.5) - _u.gammaln(a)
    if big.any():
        ab = a[big]
        h = 0.5 / ab
        lh = np.log1p(h)
        r = 0.5 * np.log(ab) + ab * _log1pmx_small(h)
        inv2 = 1 / (ab * ab)
        pw = ab
        for k, bern in enumerate(_BERNOULLI, start=1):
            pw = pw * inv2
            r = r + bern / (2 * k * (2 * k - 1)) * pw * np.expm1((1 - 2 * k) * lh)
        out[big] = r
    return out


def _stdtr_log_density_dnu(nu: Any, t: Any, second: bool) -> tuple[Any, Any]:
    """∂/∂ν of log f(ν, t) for Student's t density f (second: also ∂²/∂ν²), in forms
    without cancellation as ν grows (where both are O(1/ν²), O(1/ν³)): with s = ν + t²,
    y = t²/s, g = ½[ε(ν/2) + y/ν + log(1−y) + y] and g′ = ½[½ε′(ν/2) − y/ν² + y(t²−1)/(νs)]
    (ε: _psi_half_gap). Also ∂/∂ν of L = log of the prefactor of I_y(½, ν/2)."""
    t2 = t * t
    s = nu + t2
    y = t2 / s
    g = 0.5 * (_psi_half_gap(0.5 * nu) + y / nu + _log1p_neg_plus(y))
    if not second:
        return g, None
    g1 = 0.5 * (0.5 * _psi_half_gap(0.5 * nu, deriv=True) - y / (nu * nu)
                + y * (t2 - 1) / (nu * s))
    return g, g1


def _stdtr_series(nu: _F64, t: _F64, order: int) -> list[_F64]:
    """∂ᵏF/∂νᵏ (k <= order) of Student's t cdf from J = I_y(½, ν/2), y = t²/(ν+t²)
    (F = ½(1 + sign(t)·J)): J = e^L·S, S = Σₙ tₙ, tₙ = Πₖ₌₀ⁿ⁻¹ y(ν/2+½+k)/(3/2+k), and
    every derivative in ν taken as a whole (a, y, z all move with ν), then rearranged
    without the cancellations of the chain rule through ∂I/∂a and ∂I/∂x (those lose
    ~log₁₀ ν digits): ∂L/∂ν = ∂ log f/∂ν (_stdtr_log_density_dnu), ∂ log tₙ/∂ν =
    Σₖ (t² − 1 − 2k)/((ν+1+2k)s), ∂² log tₙ/∂ν² = Σₖ (1 + 2k − t²)(c+s)/(s²c²),
    c = ν + 1 + 2k."""
    n = nu.size
    t2 = t * t
    s = nu + t2
    y = t2 / s
    a = 0.5 * nu
    L1, L2 = _stdtr_log_density_dnu(nu, t, order == 2)
    tt, S = np.ones(n), np.ones(n)
    S1, S2, g, h = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    # the truncation error is measured against the scale of the result e^L(L′S + S′)
    scale1 = np.abs(L1)
    scale2: Any = np.abs(L2 + L1 * L1) if order == 2 else None

    def step(i: _Idx, k: int) -> Any:
        c = nu[i] + (2 * k - 1)
        si, yi = s[i], y[i]
        ti = tt[i] * (yi * (a[i] + k - 0.5) / (k + 0.5))
        gi = g[i] + (t2[i] - (2 * k - 1)) / (c * si)
        tt[i], g[i] = ti, gi
        u1 = ti * gi
        S[i] += ti
        S1[i] += u1
        nxt = np.maximum(yi * (a[i] + k + 0.5) / (k + 1.5), yi)
        tail = np.where(nxt < 1, 1 / (1 - nxt), np.inf)
        done = (ti * tail <= _EPS * S[i]) \
            & (np.abs(u1) * tail <= _EPS * (scale1[i] * S[i] + np.abs(S1[i])))
        if order == 2:
            hi = h[i] + ((2 * k - 1) - t2[i]) * (c + si) / (si * si * c * c)
            h[i] = hi
            u2 = ti * (gi * gi + hi)
            S2[i] += u2
            done &= np.abs(u2) * tail <= _EPS * (scale2[i] * S[i] + 2 * scale1[i]
                                                 * np.abs(S1[i]) + np.abs(S2[i]))
        return done

    bad = _iterate(n, step)
    e = np.exp(0.5 * np.log(y) + a * np.log1p(-y) - _u.gammaln(1.5) + _lgamma_half_gap(a))
    half_sign = 0.5 * np.sign(t)
    out = [half_sign * e * (L1 * S + S1)]
    if order == 2:
        out.append(half_sign * e * ((L2 + L1 * L1) * S + 2 * L1 * S1 + S2))
    for o in out:
        o[bad] = np.nan
    return out


def _stdtr_ddf_np(df: ArrayLike, t: ArrayLike, order: int) -> list[_F64]:
    """[∂F/∂ν] or [∂F/∂ν, ∂²F/∂ν²] of Student's t cdf F(ν, t), float64 arrays of the
    broadcast shape. For ν > 2 outside the far tails: _stdtr_series (relative error
    ~1e-16/min(F, 1 − F)). In the far tails (min(F, 1 − F) < 0.001 and
    < 30t²/ν²) or for ν <= 2: with s = ν + t², z = ν/s, y = t²/s,
    F = ½ I_z(ν/2, ½) for t < 0 and 1 − F(ν, −t) for t > 0, so
    ∂F/∂ν = −sign(t)/2·(½ ∂I/∂a + z′ ∂I/∂x) and ∂²F/∂ν² = −sign(t)/2·(¼ ∂²I/∂a² +
    z′ ∂²I/∂a∂x + z″ ∂I/∂x + z′² ∂²I/∂x²), z′ = t²/s², z″ = −2t²/s³ (the terms cancel
    as ν grows: relative errors ~1e-17·ν²/t², 1e-7 at ν = 1e6). 0 at t = 0, ±inf and
    ν = inf; NaN for ν <= 0 or NaN input."""
    nu, t = np.broadcast_arrays(np.asarray(df, np.float64), np.asarray(t, np.float64))
    shape = nu.shape
    nu, t = nu.ravel(), t.ravel()
    out = [np.full(nu.shape, np.nan) for _ in range(order)]
    ok = (nu > 0) & ~np.isnan(t)
    edge = ok & (np.isposinf(nu) | (t == 0) | np.isinf(t))
    for o in out:
        o[edge] = 0
    inner = ok & ~edge
    with np.errstate(all="ignore"):
        t2 = t * t
        s = nu + t2
        z, y = nu / s, t2 / s
        # the series of J loses ~1e-16/F relative (F = (1 − J)/2, the tail probability),
        # the chain rule in the tails ~1e-17·ν²/t²: the better of the two
        tail_f = 0.5 * _u.betaincc(0.5, 0.5 * nu, y)
        series = inner & (nu > 2) & ((tail_f >= 0.001) | (tail_f * nu * nu > 30 * t2))
        if series.any():
            for o, v in zip(out, _stdtr_series(nu[series], t[series], order)):
                o[series] = v
        m = inner & ~series
        if m.any():
            v, tm, zm, ym, sm = nu[m], t[m], z[m], y[m], s[m]
            a = 0.5 * v
            r = _betainc_dab_np(a, 0.5, zm, ym, order)
            log_z = np.log1p(-ym)
            # betaln(a, ½) = lgamma(½) − (lgamma(a + ½) − lgamma(a))
            dens = np.exp((a - 1) * log_z - 0.5 * np.log(ym) - _u.gammaln(0.5)
                          + _lgamma_half_gap(a))
            z1 = ym / sm
            half_sign = -0.5 * np.sign(tm)
            out[0][m] = half_sign * (0.5 * r[0] + z1 * dens)
            if order == 2:
                La = log_z + _psi_half_gap(a) + 0.5 / a    # log z − ψ(a) + ψ(a+½)
                dxx = (a - 1) / zm + 0.5 / ym      # ∂²I/∂x² = ∂I/∂x·dxx
                out[1][m] = half_sign * (0.25 * r[2] + dens * (z1 * La - 2 * z1 / sm
                                                               + z1 * z1 * dxx))
    return [o.reshape(shape) for o in out]
