"""examples/trg_ising.py's TRG in PyTorch, for timing comparisons only (never imported by
tenferro or its tests). The same steps: site tensor, per iteration scale, two SVD splits
truncated to k <= chi (no singular value below 1e-12 of the largest), the einsum of the
four pieces, the final trace as an einsum or as d^2 scalar indexings; u and c by
torch.autograd.grad with create_graph=True and a second grad.

PyTorch's own SVD backward divides by s_j^2 - s_i^2 and gives inf/NaN at the exactly
repeated singular values of the Ising tensors, so, as in Liao et al. (Phys. Rev. X 9,
031041 (2019)), the SVD is a custom autograd.Function with a broadened backward (the
same broadening as tenferro's, see BroadenedSVD); its backward is written in torch ops,
so it is differentiable again.

    python scripts/trg_torch.py --chi 24 --iterations 20 --beta 0.44 --trace loop
"""
import argparse
import math
import sys
import time

try:
    import torch
except ImportError:   # the benchmark scripts skip the comparison
    torch = None


def _broadened_inverse(x, eps=1e-12):
    return x / (x * x + eps)


if torch is not None:
    class BroadenedSVD(torch.autograd.Function):
        """A = U diag(S) V^T (real square A), the full SVD, as tenferro differentiates it:
        of 1/(s_j^2 - s_i^2) = 1/((s_j - s_i)(s_j + s_i)) the pole 1/d, d = s_j - s_i, is
        broadened to d/(d^2 + e^2) and 1/sigma, sigma = s_j + s_i, to
        sigma^3/(sigma^4 + e^2) (exact unless both values are ~0), e = n * machine eps *
        s_max (tenferro's default)."""

        @staticmethod
        def forward(ctx, a):
            u, s, vh = torch.linalg.svd(a)
            v = vh.mT
            ctx.save_for_backward(u, s, v)
            return u, s, v

        @staticmethod
        def backward(ctx, du, ds, dv):
            u, s, v = ctx.saved_tensors
            e = u.shape[0] * torch.finfo(s.dtype).eps * s[0]
            d = s[None, :] - s[:, None]
            sig = s[None, :] + s[:, None]
            g = sig ** 3 / (sig ** 4 + e * e)
            g = g - torch.diag(torch.diagonal(g))
            f = d / (d * d + e * e)
            udu = u.mT @ du
            vdv = v.mT @ dv
            su = (f + g) * (udu - udu.mT) / 2
            sv = (f - g) * (vdv - vdv.mT) / 2
            return u @ (su + sv + torch.diag(ds)) @ v.mT


def ising_tensor(beta):
    c, s = torch.sqrt(torch.cosh(beta)), torch.sqrt(torch.sinh(beta))
    m = torch.stack([torch.stack([c, s]), torch.stack([c, -s])])
    return torch.einsum("su,sl,sd,sr->uldr", m, m, m, m)


def _split_pair(m_a, m_b, d, chi):
    svds = [BroadenedSVD.apply(m) for m in (m_a, m_b)]
    k = chi
    for _, s, _ in svds:
        sv = s.detach()
        k = min(k, int(torch.count_nonzero(sv > 1e-12 * sv[0])))
    return [((u[:, :k] * s[:k]).reshape(d, d, k), v[:, :k].mT.reshape(k, d, d))
            for u, s, v in svds]


def trg_ln_z(beta, chi, iterations, trace="einsum"):
    t = ising_tensor(beta)
    ln_z = torch.zeros((), dtype=torch.float64)
    for n in range(iterations):
        scale = t.abs().max()
        t = t / scale
        ln_z = ln_z + torch.log(scale) / 2.0 ** n
        d = t.shape[0]
        (s1, s3), (s2, s4) = _split_pair(
            t.reshape(d * d, d * d), t.permute(1, 2, 3, 0).reshape(d * d, d * d), d, chi)
        t = torch.einsum("aqp,pwc,wzb,dzq->adbc", s3, s2, s1, s4)
    d = t.shape[0]
    if trace == "loop":
        total = torch.zeros((), dtype=torch.float64)
        for x in range(d):
            for y in range(d):
                total = total + t[x, y, x, y]
    else:
        total = torch.einsum("xyxy->", t)
    return ln_z + torch.log(total) / 2.0 ** iterations


def thermodynamics(beta_value, chi, iterations, trace="einsum"):
    torch.set_num_threads(1)
    beta = torch.tensor(beta_value, dtype=torch.float64, requires_grad=True)
    ln_z = trg_ln_z(beta, chi, iterations, trace)
    (dlnz,) = torch.autograd.grad(ln_z, beta, create_graph=True)
    (d2lnz,) = torch.autograd.grad(dlnz, beta)
    return float(ln_z.detach()), -float(dlnz.detach()), beta_value ** 2 * float(d2lnz)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chi", type=int, default=24)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--beta", type=float, default=0.44)
    p.add_argument("--trace", choices=("einsum", "loop"), default="einsum")
    args = p.parse_args(argv)
    if torch is None:
        print("PyTorch is not importable; nothing to compare")
        return 0
    t0 = time.perf_counter()
    ln_z, u, c = thermodynamics(args.beta, args.chi, args.iterations, args.trace)
    dt = time.perf_counter() - t0
    print(f"torch TRG chi={args.chi} beta={args.beta} trace={args.trace}: lnZ={ln_z:.12f} "
          f"u={u:.10f} c={c:.6f}  {dt:.3f} s")
    return 0 if all(math.isfinite(v) for v in (ln_z, u, c)) else 1


if __name__ == "__main__":
    sys.exit(main())
