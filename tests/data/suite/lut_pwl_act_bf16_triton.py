"""Already good (near_roof), a near miss for uncoalesced access: a piecewise-linear activation through a 65-entry lookup table.

y = PWL(x) for 67,108,864 bf16 activations (128 MB in, 128 MB out): a SiLU approximated by 64
linear segments on [-8, 8] (65 fp32 knot values, 260 bytes; inputs outside the range clamp to the
end segments), as fixed-function / LUT activation units do. Per element: a segment index and
fraction from x, two data-dependent gathers tab[i] and tab[i + 1], one lerp. The gathers look
like the textbook uncoalesced access (32 lanes, 32 unrelated indices), but the table is 3 cache
lines that stay in L1 for the whole kernel: each gather request is served by L1 in 1-3 wavefronts
and never reaches L2 or DRAM. 8 elements per thread (one 16-byte load and one 16-byte store), 16
gathers: ~50 L1 wavefronts per 256 elements per warp, ~100k cycles per SM (~55 us), and ~165
instructions per 8 elements (~48 us of issue), against the ~88 us that the 268 MB need at
3.05 TB/s. The hypothesis: DRAM near its peak with exactly the bytes needed, L1 busy but not the
limit; nothing to fix (the gathers cost no DRAM bytes).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 2**26
SEGMENTS = 64
LO, HI = -8.0, 8.0
BLOCK = 2048


@triton.jit
def lut_pwl_act_kernel(x_ptr, tab_ptr, out_ptr, n, lo, inv_step, SEGMENTS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.minimum(tl.maximum((x - lo) * inv_step, 0.0), SEGMENTS * 1.0)  # position in knot units, clamped
    i = tl.minimum(u.to(tl.int32), SEGMENTS - 1)
    f = u - i.to(tl.float32)
    y0 = tl.load(tab_ptr + i)       # data-dependent gathers from a 65-entry table (L1-resident)
    y1 = tl.load(tab_ptr + i + 1)
    tl.store(out_ptr + offs, (y0 + f * (y1 - y0)).to(tl.bfloat16), mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    x = (torch.randn(N, device=DEVICE, generator=g) * 3.0).to(torch.bfloat16)
    knots = torch.linspace(LO, HI, SEGMENTS + 1, device=DEVICE, dtype=torch.float64)
    table = (knots * torch.sigmoid(knots)).float()  # SiLU at the knots
    return x, table


def run(x, table):
    n = x.numel()
    out = torch.empty_like(x)
    inv_step = SEGMENTS / (HI - LO)
    lut_pwl_act_kernel[(triton.cdiv(n, BLOCK),)](x, table, out, n, LO, inv_step, SEGMENTS=SEGMENTS, BLOCK=BLOCK,
                                                num_warps=8)
    return out


def reference(x, table):
    u = ((x.double() - LO) * (SEGMENTS / (HI - LO))).clamp(0.0, float(SEGMENTS))
    i = u.floor().clamp(max=SEGMENTS - 1)
    f = u - i
    t = table.double()
    i = i.long()
    return (t[i] + f * (t[i + 1] - t[i])).to(torch.bfloat16)
