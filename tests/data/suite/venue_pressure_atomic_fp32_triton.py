"""Planted bottleneck: atomic contention (every agent adds its infectiousness onto one of 32 mixing strata).

Force-of-infection step of an agent-based epidemic model (a COVASIM / FRED-style simulator): 2,097,152
agents, each with an infectiousness weight (fp32: 0 for susceptible / recovered agents, viral-load
shaped for infectious ones) and a mixing stratum (int8: 16 age bands x home / community = 32 strata).
The kernel sums the infectious pressure of every stratum with one fp32 tl.atomic_add per agent
(2,048 programs of 1,024, 4 warps) onto a 32-float array: 128 bytes, one L2 line, so the whole
kernel serialises on the L2 slice that owns it. Inputs are only 10.5 MB (~3.5 us at the roof).
The hypothesis: atomic_contention: the L2 atomic unit of one slice saturated while DRAM ~1% and SM%
low, long-scoreboard / lg-throttle / membar stalls, ~0.5-2 ms. The fix: reduce per program first
(32 partial sums per program, e.g. a one-hot tl.sum over the block), then 32 atomics per program.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 21
STRATA = 32
BLOCK = 1024
TOLERANCE = 1e-4  # fp32 atomics in arbitrary order over ~65k terms per stratum


@triton.jit
def venue_pressure_kernel(w_ptr, s_ptr, p_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    w = tl.load(w_ptr + offs, mask=m, other=0.0)
    s = tl.load(s_ptr + offs, mask=m, other=0).to(tl.int32)
    tl.atomic_add(p_ptr + s, w, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    infectious = torch.rand(N, device=DEVICE, generator=g) < 0.3
    load = torch.rand(N, device=DEVICE, generator=g) * 2.0 + 0.1                 # relative viral load
    w = torch.where(infectious, load, torch.zeros_like(load))
    s = torch.randint(0, STRATA, (N,), device=DEVICE, generator=g).to(torch.int8)
    return w.contiguous(), s.contiguous()


def run(w, s):
    n = w.numel()
    p = torch.zeros(STRATA, device=w.device, dtype=torch.float32)
    venue_pressure_kernel[(triton.cdiv(n, BLOCK),)](w, s, p, n, BLOCK=BLOCK, num_warps=4)
    return p


def reference(w, s):
    out = torch.zeros(STRATA, device=w.device, dtype=torch.float64).index_add_(0, s.long(), w.double())
    return out.float()
