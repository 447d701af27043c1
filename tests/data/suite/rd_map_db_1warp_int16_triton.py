"""Planted bottleneck: low occupancy (block-count limit: one-warp programs, 32 per SM = 50%).

Radar range-Doppler map to decibels, the display / detection front end of an FMCW radar: 16 receive
channels x 512 Doppler bins x 8,192 range bins = 67,108,864 cells of raw complex int16 I/Q (planar I
and Q planes, 268 MB) -> power 10 log10(I^2 + Q^2 + 1) - calibration (fp16 out, 134 MB). The writer
chose tiny programs: BLOCK 64 cells, num_warps=1, 1,048,576 programs. An SM holds at most 32 blocks,
so at most 32 warps (50% theoretical occupancy, limited by the block count, not registers or
shared memory), each with 64 cells x 4 bytes in flight: ~8 KB of loads per SM, far below what DRAM
latency needs; the per-program launch/ramp cost is paid a million times.
The hypothesis: low_occupancy (limiter: block count / block size): theoretical 50%, DRAM ~25-45%,
SM% low, long-scoreboard stalls, ~0.3-0.6 ms against ~132 us for the 403 MB at 3.05 TB/s. The fix:
BLOCK 2,048 with 4-8 warps per program.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 16 * 512 * 8192
BLOCK = 64
CAL_DB = 42.0


@triton.jit
def rd_map_db_kernel(i_ptr, q_ptr, out_ptr, n, cal, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(i_ptr + offs, mask=m, other=0).to(tl.float32)
    q = tl.load(q_ptr + offs, mask=m, other=0).to(tl.float32)
    db = 3.0102999566398120 * tl.log2(i * i + q * q + 1.0) - cal       # 10 log10(x) = 10 log10(2) log2(x)
    tl.store(out_ptr + offs, db.to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    amp = torch.exp(torch.randn(N, device=DEVICE, generator=g) * 1.5 + 4.0).clamp(max=20000.0)
    ph = torch.rand(N, device=DEVICE, generator=g) * 6.283185307179586
    i = (amp * torch.cos(ph)).round().to(torch.int16)
    q = (amp * torch.sin(ph)).round().to(torch.int16)
    return i.contiguous(), q.contiguous()


def run(i, q):
    n = i.numel()
    out = torch.empty(n, device=i.device, dtype=torch.float16)
    rd_map_db_kernel[(triton.cdiv(n, BLOCK),)](i, q, out, n, CAL_DB, BLOCK=BLOCK, num_warps=1)
    return out


def reference(i, q):
    p = i.double() ** 2 + q.double() ** 2 + 1.0
    return (10.0 * torch.log10(p) - CAL_DB).to(torch.float16)
