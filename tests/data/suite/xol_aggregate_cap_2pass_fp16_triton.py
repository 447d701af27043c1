"""Planted bottleneck: memory bound (a two-pass treaty kernel whose second read of every row comes from DRAM again).

Catastrophe excess-of-loss reinsurance on an event loss table: 1,024 treaties (rows) x 131,072 events of
the stochastic catalogue, ground-up losses fp16 [treaty, event] ($M, 268 MB). Per event the layer cedes
min(max(x - retention, 0), limit); each treaty also has an aggregate limit, so its recoveries are scaled
by min(1, aggregate / total ceded) before they go to the event-level allocation (fp16 out, 268 MB). The
kernel gives each treaty one program (4 warps, 2,048 events per step, fp32 vector accumulator) that walks
its 256 KB row twice: once for the total, once to write the scaled recoveries. 1,024 programs of 4 warps
are all resident at once (~7.8 per SM), so ~270 MB of rows are being walked concurrently: by the time a
program starts its second pass, the start of its row has long left the 50 MB L2, and the row is read
from DRAM twice. 805 MB move for the 537 MB needed (1.5x).
The hypothesis: memory_bound: DRAM ~80-90% of peak, DRAM bytes ~1.5x the needed bytes (two reads + one
write), SM% ~15-30%, long-scoreboard stalls, ~0.27-0.32 ms vs ~0.18 ms for the needed bytes at 3.05 TB/s.
The fix: write the unscaled recoveries in the first pass and rescale in place only the rows whose
aggregate binds (~a fifth here), or walk the rows in L2-sized groups (a persistent grid of ~132 programs,
~34 MB live) so that the second read hits L2.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TREATIES = 1024
EVENTS = 131072
BLOCK = 2048


@triton.jit
def xol_agg_cap_kernel(gu_ptr, ret_ptr, lim_ptr, agg_ptr, out_ptr, events, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * events
    retention = tl.load(ret_ptr + row)
    limit = tl.load(lim_ptr + row)
    aggregate = tl.load(agg_ptr + row)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, events, BLOCK):                       # pass 1: total ceded loss of the treaty
        m = start + cols < events
        x = tl.load(gu_ptr + base + start + cols, mask=m, other=0.0).to(tl.float32)
        acc += tl.minimum(tl.maximum(x - retention, 0.0), limit)
    total = tl.sum(acc, axis=0)
    scale = tl.minimum(aggregate / tl.maximum(total, 1e-20), 1.0)
    for start in range(0, events, BLOCK):                       # pass 2: scaled recoveries (re-reads the row)
        m = start + cols < events
        x = tl.load(gu_ptr + base + start + cols, mask=m, other=0.0).to(tl.float32)
        ceded = tl.minimum(tl.maximum(x - retention, 0.0), limit)
        tl.store(out_ptr + base + start + cols, (ceded * scale).to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    mu = -1.0 + 0.8 * torch.rand(TREATIES, 1, device=DEVICE, generator=g)            # treaty exposure level
    z = torch.randn(TREATIES, EVENTS, device=DEVICE, generator=g)
    gu = torch.exp(mu + 1.6 * z).clamp(max=60000.0)                                  # heavy-tailed event losses
    hit = torch.rand(TREATIES, EVENTS, device=DEVICE, generator=g) < 0.35            # events touching the portfolio
    gu = torch.where(hit, gu, torch.zeros_like(gu)).to(torch.float16)
    retention = 2.0 + 6.0 * torch.rand(TREATIES, device=DEVICE, generator=g)
    limit = 10.0 + 40.0 * torch.rand(TREATIES, device=DEVICE, generator=g)
    # aggregate limits around the expected annual recovery, so roughly a fifth of the treaties are capped
    exp_total = torch.minimum(torch.clamp(gu.float() - retention[:, None], min=0.0), limit[:, None]).sum(1)
    aggregate = exp_total * (0.8 + 0.9 * torch.rand(TREATIES, device=DEVICE, generator=g))
    return gu.contiguous(), retention.contiguous(), limit.contiguous(), aggregate.contiguous()


def run(gu, retention, limit, aggregate):
    treaties, events = gu.shape
    out = torch.empty_like(gu)
    xol_agg_cap_kernel[(treaties,)](gu, retention, limit, aggregate, out, events, BLOCK=BLOCK, num_warps=4)
    return out


def reference(gu, retention, limit, aggregate):
    ceded = torch.minimum(torch.clamp(gu.double() - retention.double()[:, None], min=0.0), limit.double()[:, None])
    scale = torch.clamp(aggregate.double() / ceded.sum(1).clamp(min=1e-20), max=1.0)
    return (ceded * scale[:, None]).to(torch.float16)
