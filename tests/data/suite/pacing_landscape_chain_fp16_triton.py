"""Planted bottleneck: latency bound (a budget-pacing controller whose every step waits on a load it just addressed).

Budget pacing simulation for an ad exchange's campaign planner: 262,144 campaigns, each with a daily
budget (fp32), replayed over 128 time slots. Each slot has a bid landscape per campaign: the cost of
the traffic won at 8 bid-multiplier levels (fp16 [SLOTS, LEVELS, CAMPAIGNS], 537 MB). A campaign's
pacing multiplier m in [0.05, 1.95] picks its level (piecewise-linear between levels i0 = floor(m *
3.5) and i0 + 1), the slot's spend is min(budget left, m * cost(m)), and a multiplicative controller
steers m towards the even-spend target. The address of a slot's two landscape loads depends on m,
which depends on the previous slot's loads: one dependent DRAM round trip per slot per lane (128 in
a row), ~30 instructions between them. One lane per campaign, 2,048 programs of 128 (4 warps,
num_stages=1); output: spend and final multiplier per campaign, fp32 [2, CAMPAIGNS] (2 MB). Only ~1/4
of each landscape row is touched (~134-200 MB of sectors).
The hypothesis: latency_bound: long-scoreboard stalls dominating (~80-90% of cycles per issue), issue
slots ~5-15% busy, SM% and DRAM% both low-moderate (DRAM ~15-35%), ~0.15-0.4 ms against ~55 us for
the touched sectors. The fix: prefetch both neighbouring levels' cost for the next slots (the level
moves by at most one per slot: load levels i0-1..i0+2 one slot ahead, software-pipelined), or lay the
landscape out campaign-major so a lane's slots are contiguous and can be streamed.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CAMPAIGNS = 1 << 18
SLOTS = 128
LEVELS = 8
GAIN = 0.25
BLOCK = 128
TOLERANCE = 1e-4  # fp32 controller recurrence over 128 slots against float64


@triton.jit
def pacing_kernel(cost_ptr, budget_ptr, out_ptr, campaigns, slots, gain, LEVELS: tl.constexpr,
                  BLOCK: tl.constexpr):
    c = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mc = c < campaigns
    budget = tl.load(budget_ptr + c, mask=mc, other=0.0)
    target = budget / slots
    left = budget
    m = tl.full([BLOCK], 1.0, dtype=tl.float32)
    spent = tl.zeros([BLOCK], dtype=tl.float32)
    scale = (LEVELS - 1) / 2.0
    for t in range(slots):
        lv = m * scale
        i0 = tl.minimum(lv.to(tl.int32), LEVELS - 2)
        fr = lv - i0.to(tl.float32)
        row = (t * LEVELS + i0).to(tl.int64) * campaigns + c
        c0 = tl.load(cost_ptr + row, mask=mc, other=0.0).to(tl.float32)
        c1 = tl.load(cost_ptr + row + campaigns, mask=mc, other=0.0).to(tl.float32)
        want = m * (c0 + fr * (c1 - c0))
        s = tl.minimum(left, want)
        left -= s
        spent += s
        err = (target - s) / tl.maximum(target, 1e-6)
        m = tl.minimum(tl.maximum(m * (1.0 + gain * err), 0.05), 1.95)
    tl.store(out_ptr + c, spent, mask=mc)
    tl.store(out_ptr + campaigns + c, m, mask=mc)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    # daily traffic curve x per-campaign scale x level curve (cost rises with the bid multiplier)
    slot = torch.arange(SLOTS, device=DEVICE, dtype=torch.float32)
    diurnal = 0.6 + 0.4 * torch.sin(2 * torch.pi * (slot / SLOTS - 0.3))
    lvl = torch.linspace(0.2, 1.8, LEVELS, device=DEVICE) ** 1.5
    camp = 0.5 + torch.rand(CAMPAIGNS, device=DEVICE, generator=g)
    noise = 1 + 0.2 * torch.rand(SLOTS, LEVELS, CAMPAIGNS, device=DEVICE, generator=g)
    cost = diurnal[:, None, None] * lvl[None, :, None] * camp[None, None, :] * noise
    budget = SLOTS * camp * (0.3 + 0.7 * torch.rand(CAMPAIGNS, device=DEVICE, generator=g))
    return cost.to(torch.float16).contiguous(), budget.contiguous()


def run(cost, budget):
    campaigns = budget.shape[0]
    out = torch.empty(2, campaigns, device=budget.device, dtype=torch.float32)
    pacing_kernel[(triton.cdiv(campaigns, BLOCK),)](cost, budget, out, campaigns, SLOTS, GAIN, LEVELS=LEVELS,
                                                    BLOCK=BLOCK, num_warps=4, num_stages=1)
    return out


def reference(cost, budget):
    cd, b = cost.double(), budget.double()
    n = b.shape[0]
    idx = torch.arange(n, device=b.device)
    target = b / SLOTS
    left, spent = b.clone(), torch.zeros_like(b)
    m = torch.ones_like(b)
    scale = (LEVELS - 1) / 2.0
    for t in range(SLOTS):
        lv = m * scale
        i0 = torch.clamp(lv.floor().long(), max=LEVELS - 2)
        fr = lv - i0.double()
        c0, c1 = cd[t, i0, idx], cd[t, i0 + 1, idx]
        s = torch.minimum(left, m * (c0 + fr * (c1 - c0)))
        left -= s
        spent += s
        m = (m * (1 + GAIN * (target - s) / target.clamp_min(1e-6))).clamp(0.05, 1.95)
    return torch.stack([spent, m]).float()
