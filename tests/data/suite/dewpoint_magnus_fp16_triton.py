"""Planted bottleneck: near roof (an elementwise weather diagnostic at the DRAM roof with minimal bytes).

Dew-point temperature from 2 m temperature and relative humidity (Magnus-Tetens, Alduchov & Eskridge
constants a = 17.625, b = 243.04 C) on a stack of global model fields: 134,217,728 grid points
(e.g. 32 ensemble members x a 0.1-degree 3,600 x 1,165 band), T in Celsius and RH in percent, fp16 in,
fp16 out: gamma = ln(RH/100) + a T / (b + T), Td = b gamma / (a - gamma). 6 bytes per point, 805 MB in
all, each byte touched once with 16-byte vector accesses (BLOCK 4,096, 8 warps, 32,768 programs).
A log and two divisions per point are ~20 instructions per 6 bytes: far below the SM's roof.
The hypothesis: near_roof, DRAM ~85-92% of peak (~2.9-3.1 TB/s), SM% low, ~260-290 us against
~264 us for the 805 MB at 3.05 TB/s; nothing left to fix but fusing it into the producer.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 27
BLOCK = 4096
TOLERANCE = 1e-2


@triton.jit
def dewpoint_kernel(t_ptr, rh_ptr, td_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    t = tl.load(t_ptr + offs, mask=m, other=20.0).to(tl.float32)
    rh = tl.load(rh_ptr + offs, mask=m, other=50.0).to(tl.float32)
    gamma = tl.log(rh * 0.01) + 17.625 * t / (243.04 + t)
    td = 243.04 * gamma / (17.625 - gamma)
    tl.store(td_ptr + offs, td.to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    t = torch.randn(N, device=DEVICE, generator=g) * 12.0 + 12.0                 # C
    rh = torch.rand(N, device=DEVICE, generator=g) * 95.0 + 5.0                   # %
    return t.to(torch.float16).contiguous(), rh.to(torch.float16).contiguous()


def run(t, rh):
    n = t.numel()
    td = torch.empty_like(t)
    dewpoint_kernel[(triton.cdiv(n, BLOCK),)](t, rh, td, n, BLOCK=BLOCK, num_warps=8)
    return td


def reference(t, rh):
    td, rd = t.double(), rh.double()
    gamma = torch.log(rd * 0.01) + 17.625 * td / (243.04 + td)
    return (243.04 * gamma / (17.625 - gamma)).to(torch.float16)
