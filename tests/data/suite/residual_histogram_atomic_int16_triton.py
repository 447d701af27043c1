"""Planted bottleneck: atomic contention (the symbol-frequency pass of an entropy coder, one global atomic per symbol onto a 256-bin table).

Before entropy-coding the prediction residuals of a lossless codec, the coder counts how often each
symbol occurs: 1,048,576 int16 residuals, clamped to [-128, 127], one 256-bin int32 histogram. The
straightforward kernel does tl.atomic_add(hist + bin, 1) for every residual (1,024 per program, 1,024
programs; triton 3.6 for sm_90: one REDG.E.ADD per residual, 24 registers). Residuals of a good
predictor are mostly zero: 65% of them land on the bin of 0 and ~25% on the bins of +-1 and +-2, so
~0.9M of the 1M atomic adds go to 5 addresses within 20 bytes (two sectors), which the L2 applies one
after another (~1-2 ns each). ~1-2 ms for 2 MB of input that DRAM streams in ~1 us. The hypothesis: SM%
and DRAM% near zero, global RED/ATOM requests funnelled onto a few addresses, the hot L2 slice's atomic
unit busy while the rest idle, long-scoreboard / drain stalls (ncu itself has no atomic rule: 'Latency
Issue'). Counting per program first (a block-private histogram, or tl.histogram over the block) and then
one add per program and bin is the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 20
BINS = 256
BLOCK = 1024


@triton.jit
def residual_histogram_kernel(res_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    r = tl.load(res_ptr + offs, mask=mask, other=0).to(tl.int32)
    b = tl.minimum(tl.maximum(r, -128), 127) + 128  # symbol = clamped residual + 128
    tl.atomic_add(hist_ptr + b, 1, mask=mask, sem="relaxed")


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    u = torch.rand(N, device=DEVICE, generator=g)
    mag = torch.floor(-torch.log(torch.rand(N, device=DEVICE, generator=g)) * 6.0) + 1  # geometric-like tail
    sign = torch.where(torch.rand(N, device=DEVICE, generator=g) < 0.5, -1.0, 1.0)
    small = torch.where(u < 0.80, 1.0, 2.0) * sign
    res = torch.where(u < 0.65, 0.0, torch.where(u < 0.90, small, mag * sign))
    return (res.clamp(-3000, 3000).to(torch.int16),)


def run(res):
    hist = torch.zeros(BINS, device=res.device, dtype=torch.int32)
    residual_histogram_kernel[(triton.cdiv(res.numel(), BLOCK),)](res, hist, res.numel(), BLOCK=BLOCK, num_warps=4)
    return hist


def reference(res):
    b = res.long().clamp(-128, 127) + 128
    return torch.bincount(b, minlength=BINS).int()
