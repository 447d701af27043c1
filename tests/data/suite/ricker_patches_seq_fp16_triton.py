"""Planted bottleneck: latency bound (near miss for memory_bound: a 537 MB stream walked one year per DRAM round trip).

Stochastic Ricker dynamics of a metapopulation: 262,144 habitat patches (a 512 x 512 landscape of a
butterfly / amphibian population model), 512 years; per patch and year N <- N exp(r (1 - N / K) + e)
+ immigration, with the environmental anomaly e read from a precomputed climate-driven series (fp16
[year, patch], 268 MB) and every year's abundance written out (fp16 [year, patch], 268 MB) for the
extinction-risk statistics. A program takes 128 patches (4 warps, one patch per thread, 2,048 programs:
one wave at 16 programs per SM, full occupancy) and walks the years carrying N in a register: per year
one 2-byte load per thread (64 bytes per warp), ~12 instructions (an exp) and a 2-byte store. The next
year's load is independent of N, but it is issued after this year's store to an output the compiler
cannot tell apart from the input, and 2-byte loads are not software-pipelined: every year waits a DRAM
round trip with only ~4 KB of loads in flight per SM.
The hypothesis: latency_bound: 'Latency Issue' (SM% and MEM% both < 40%), long-scoreboard stalls
dominating, DRAM ~15-35% though the kernel streams 537 MB (~176 us at 3.05 TB/s), ~0.5-1 ms. The fix:
more bytes in flight (several patches per thread, 16-byte loads, loading a block of years ahead).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
YEARS = 512
PATCHES = 262144
BLOCK = 128
R = 1.4
K = 100.0
IMMIGRATION = 0.05


@triton.jit
def ricker_kernel(env_ptr, n0_ptr, out_ptr, years, patches, r, inv_k, immigration, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = p < patches
    n = tl.load(n0_ptr + p, mask=m, other=0.0).to(tl.float32)
    for t in range(years):
        e = tl.load(env_ptr + t * patches + p, mask=m, other=0.0).to(tl.float32)
        n = n * tl.exp(r * (1.0 - n * inv_k) + e) + immigration
        tl.store(out_ptr + t * patches + p, n.to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    # autocorrelated climate anomaly shared regionally + local noise
    regional = torch.randn(YEARS, 1, device=DEVICE, generator=g) * 0.25
    local = torch.randn(YEARS, PATCHES, device=DEVICE, generator=g) * 0.2
    env = (regional + local - 0.03).to(torch.float16)
    n0 = (K * torch.rand(PATCHES, device=DEVICE, generator=g)).to(torch.float16)
    return env.contiguous(), n0.contiguous()


def run(env, n0):
    years, patches = env.shape
    out = torch.empty_like(env)
    ricker_kernel[(triton.cdiv(patches, BLOCK),)](env, n0, out, years, patches, R, 1.0 / K, IMMIGRATION,
                                                  BLOCK=BLOCK, num_warps=4)
    return out


def reference(env, n0):
    n = n0.double()
    e = env.double()
    out = torch.empty(env.shape, device=env.device, dtype=torch.float16)
    for t in range(env.shape[0]):
        n = n * torch.exp(R * (1.0 - n / K) + e[t]) + IMMIGRATION
        out[t] = n.to(torch.float16)     # the kernel carries fp32 N; the comparison is at fp16 precision
    return out
