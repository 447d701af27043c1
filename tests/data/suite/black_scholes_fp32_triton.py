"""Already good (near_roof), a near miss for compute bound: Black-Scholes prices of a portfolio of European options.

Call and put prices of 33,554,432 independent European options, each with its own spot, strike,
maturity, rate and volatility (five fp32 inputs, two fp32 outputs: 28 bytes per option, 940 MB in
all). Per option the closed form needs a square root, a logarithm, an exponential, two normal CDFs
(erf) and two divisions: 576 SASS instructions for the 4 options of a thread (sm_90, from a CPU
compile), ~140 per option, 5 per byte, ~147M warp-instructions: ~0.16 ms at the issue rate (132
SMs x 4 per cycle at ~1.75 GHz), against ~308 us for the bytes at 3.05 TB/s. The source reads like
transcendental-heavy math and the SM is about half busy, but the kernel sits at the DRAM roof moving
exactly the bytes it needs (16-byte loads and stores, 40 registers, many waves). The hypothesis:
DRAM near its peak with ~1.0x the needed bytes, SM% around 50; nothing to fix in the code (fewer or
narrower inputs and outputs would change the problem).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**25  # options
BLOCK = 512
TOLERANCE = 1e-4  # tl.exp / tl.log / tl.sqrt and the divisions compile to the approximate (ex2/lg2/rsqrt) forms


@triton.jit
def black_scholes_kernel(s_ptr, k_ptr, t_ptr, r_ptr, v_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(s_ptr + offs, mask=mask, other=1.0)
    k = tl.load(k_ptr + offs, mask=mask, other=1.0)
    t = tl.load(t_ptr + offs, mask=mask, other=1.0)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=1.0)
    vol = v * tl.sqrt(t)
    d1 = (tl.log(s / k) + (r + 0.5 * v * v) * t) / vol
    d2 = d1 - vol
    nd1 = 0.5 + 0.5 * tl.math.erf(d1 * 0.7071067811865476)  # standard normal CDF
    nd2 = 0.5 + 0.5 * tl.math.erf(d2 * 0.7071067811865476)
    kdisc = k * tl.exp(-r * t)  # discounted strike
    call = s * nd1 - kdisc * nd2
    put = kdisc * (1.0 - nd2) - s * (1.0 - nd1)
    tl.store(out_ptr + offs, call, mask=mask)
    tl.store(out_ptr + n + offs, put, mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)

    def uniform(lo, hi):
        return lo + (hi - lo) * torch.rand(N, device=DEVICE, generator=g)

    spot = uniform(20.0, 200.0)
    strike = spot * uniform(0.7, 1.3)
    maturity = uniform(0.05, 3.0)  # years
    rate = uniform(0.0, 0.08)
    vol = uniform(0.1, 0.6)
    return spot, strike, maturity, rate, vol


def run(spot, strike, maturity, rate, vol):
    n = spot.numel()
    out = torch.empty(2, n, device=spot.device, dtype=torch.float32)  # [call, put]
    black_scholes_kernel[(triton.cdiv(n, BLOCK),)](spot, strike, maturity, rate, vol, out, n, BLOCK=BLOCK, num_warps=4)
    return out


def reference(spot, strike, maturity, rate, vol):
    s, k, t, r, v = (a.double() for a in (spot, strike, maturity, rate, vol))
    vol_t = v * t.sqrt()
    d1 = ((s / k).log() + (r + 0.5 * v * v) * t) / vol_t
    d2 = d1 - vol_t
    kdisc = k * torch.exp(-r * t)
    call = s * torch.special.ndtr(d1) - kdisc * torch.special.ndtr(d2)
    put = kdisc * torch.special.ndtr(-d2) - s * torch.special.ndtr(-d1)
    return torch.stack([call, put]).float()
