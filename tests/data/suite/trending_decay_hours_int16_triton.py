"""Planted bottleneck: latency bound (an exponentially decayed trending score, one item per lane, hours in order).

Trending score for a recommender's item catalogue: 1,048,576 items x 256 hourly click counts (int16,
[hour, item]: 537 MB), s_h = decay_item * s_(h-1) + clicks_h, with a per-item decay (its category's
half-life, fp32), and the final score per item (fp32 out). A program takes 128 items (4 warps, one item
per lane) and walks the 256 hours in order: each step is one 2-byte load per lane (64 B per warp
request, coalesced) feeding a dependent FMA, and the next step's load only issues after it: ~4 KB in
flight per SM for ~800 cycles of DRAM latency. 8,192 programs = 3.9 waves at 16 per SM. ~0.4-0.7 ms
against ~180 us for the bytes at 3.05 TB/s. The hypothesis: ncu's 'Latency Issue' (SM% and MEM% both
< 60%, DRAM ~30-50%), long-scoreboard stalls dominating, full occupancy. The fix: several hours per
load (a [hours, items] tile per step, 16-byte loads) or more items per thread.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ITEMS = 1 << 20
HOURS = 256
BLOCK = 128


@triton.jit
def trending_kernel(c_ptr, decay_ptr, out_ptr, items, hours, BLOCK: tl.constexpr):
    it = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = it < items
    decay = tl.load(decay_ptr + it, mask=m, other=0.0)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for h in range(hours):
        c = tl.load(c_ptr + h * items + it, mask=m, other=0).to(tl.float32)
        s = decay * s + c
    tl.store(out_ptr + it, s, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    rate = torch.rand(ITEMS, device=DEVICE, generator=g) ** 4 * 50.0          # long-tailed popularity
    clicks = torch.poisson(rate[None, :].expand(HOURS, ITEMS).contiguous(), generator=g).clamp(max=32767)
    half_life = torch.tensor([6.0, 24.0, 72.0, 168.0], device=DEVICE)[
        torch.randint(0, 4, (ITEMS,), device=DEVICE, generator=g)]
    decay = torch.exp2(-1.0 / half_life)
    return clicks.to(torch.int16).contiguous(), decay.float().contiguous()


def run(clicks, decay):
    hours, items = clicks.shape
    out = torch.empty(items, device=clicks.device, dtype=torch.float32)
    trending_kernel[(triton.cdiv(items, BLOCK),)](clicks, decay, out, items, hours, BLOCK=BLOCK, num_warps=4)
    return out


def reference(clicks, decay):
    d = decay.double()
    s = torch.zeros_like(d)
    for h in range(clicks.shape[0]):
        s = d * s + clicks[h].double()
    return s.float()
