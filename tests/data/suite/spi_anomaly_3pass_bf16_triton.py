"""Planted bottleneck: memory bound (three passes over a rainfall cube that is 8x larger than L2).

Standardised daily precipitation anomaly (the first step of an SPI-style drought index) on a gridded
rainfall product: 365 days x 524,288 grid cells, bf16 [day, cell] (383 MB; ~70% dry days, exponential
amounts on wet days). For every cell z[d, c] = (P[d, c] - mean_d P[:, c]) / sqrt(var_d P[:, c] + 1e-6),
bf16 out (383 MB). Each program owns 256 cells and walks the days in [8, 256] tiles (4 warps) three
times: once for the mean, once for the variance (two-pass, numerically safe), once to write z. All
2,048 programs are resident at once (~16 per SM) and move through the days together, so one pass
touches the whole 383 MB before the next starts: the cube is streamed from DRAM three times.
Bytes: 3 x 383 + 383 = 1.53 GB moved for 766 MB needed (~251 us at 3.05 TB/s).
The hypothesis: memory_bound: DRAM ~80-90% of peak (High Memory Throughput), DRAM bytes ~2.0x the bytes
needed, SM% low (~15-25%), long-scoreboard stalls, ~0.5-0.65 ms. The fix: one pass (Welford / sum and
sum of squares in fp32 in the same sweep, then a write pass: 1.5x), or keep the cell's days on chip
(365 x 256 bf16 = 187 KB per program does not fit; 64 cells x 365 days = 47 KB would, in shared memory).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DAYS = 365
CELLS = 524288
BLOCK_D = 8
BLOCK_C = 256


@triton.jit
def spi_anomaly_kernel(p_ptr, z_ptr, days, cells, inv_days,
                       BLOCK_D: tl.constexpr, BLOCK_C: tl.constexpr):
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cm = c < cells
    # pass 1: mean over days
    acc = tl.zeros([BLOCK_D, BLOCK_C], dtype=tl.float32)
    for d0 in range(0, days, BLOCK_D):
        d = d0 + tl.arange(0, BLOCK_D)
        m = (d[:, None] < days) & cm[None, :]
        x = tl.load(p_ptr + d[:, None] * cells + c[None, :], mask=m, other=0.0).to(tl.float32)
        acc += x
    mean = tl.sum(acc, axis=0) * inv_days
    # pass 2: variance about the mean
    acc2 = tl.zeros([BLOCK_D, BLOCK_C], dtype=tl.float32)
    for d0 in range(0, days, BLOCK_D):
        d = d0 + tl.arange(0, BLOCK_D)
        m = (d[:, None] < days) & cm[None, :]
        x = tl.load(p_ptr + d[:, None] * cells + c[None, :], mask=m, other=0.0).to(tl.float32)
        dev = tl.where(m, x - mean[None, :], 0.0)
        acc2 += dev * dev
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) * inv_days + 1e-6)
    # pass 3: standardised anomaly
    for d0 in range(0, days, BLOCK_D):
        d = d0 + tl.arange(0, BLOCK_D)
        m = (d[:, None] < days) & cm[None, :]
        x = tl.load(p_ptr + d[:, None] * cells + c[None, :], mask=m, other=0.0).to(tl.float32)
        z = (x - mean[None, :]) * rstd[None, :]
        tl.store(z_ptr + d[:, None] * cells + c[None, :], z.to(tl.bfloat16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    wet_prob = 0.15 + 0.3 * torch.rand(1, CELLS, device=DEVICE, generator=g)          # climate varies by cell
    wet = torch.rand(DAYS, CELLS, device=DEVICE, generator=g) < wet_prob
    scale = 2.0 + 10.0 * torch.rand(1, CELLS, device=DEVICE, generator=g)              # mm per wet day
    amount = -torch.log(torch.rand(DAYS, CELLS, device=DEVICE, generator=g).clamp_min(1e-7)) * scale
    p = torch.where(wet, amount, torch.zeros_like(amount)).to(torch.bfloat16)
    return (p.contiguous(),)


def run(p):
    days, cells = p.shape
    z = torch.empty_like(p)
    spi_anomaly_kernel[(triton.cdiv(cells, BLOCK_C),)](p, z, days, cells, 1.0 / days,
                                                     BLOCK_D=BLOCK_D, BLOCK_C=BLOCK_C, num_warps=4)
    return z


def reference(p):
    x = p.float()
    mean = x.mean(dim=0, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=0, keepdim=True)
    return ((x - mean) * torch.rsqrt(var + 1e-6)).to(torch.bfloat16)
