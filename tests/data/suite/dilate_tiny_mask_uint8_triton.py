"""Planted bottleneck: launch overhead (a 3 x 3 dilation of one 96 x 128 mask: a few microseconds of work per launch).

Binary dilation with a 3 x 3 structuring element of a single 96 x 128 uint8 segmentation mask (a
thumbnail-sized region of interest, 12 KB in and out): 12 programs of 4 warps, one per 32 x 32 tile,
each taking the maximum of the 9 shifted tiles (borders masked to 0; triton 3.6: 64 registers, byte
loads for the shifted taps). ~24 KB of traffic and ~0.1M instructions: the kernel takes ~2-3 us under
ncu and run() is mostly the host-side launch. The hypothesis: launch_overhead (a few microseconds of
kernel time, SM and DRAM nearly idle). ncu's Small Grid (12 programs for 132 SMs) is a lure: no grid
makes 24 KB of work faster than its launch. Batching many masks per launch, fusing the dilation into the
kernel that produces the mask, or a CUDA graph is the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
H, W = 96, 128
BLOCK_H, BLOCK_W = 32, 32


@triton.jit
def dilate3x3_kernel(m_ptr, out_ptr, h, w, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    rows = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    cols = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    acc = tl.zeros([BLOCK_H, BLOCK_W], dtype=tl.uint8)
    for dy in tl.static_range(-1, 2):
        for dx in tl.static_range(-1, 2):
            r = rows[:, None] + dy
            c = cols[None, :] + dx
            inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
            acc = tl.maximum(acc, tl.load(m_ptr + r * w + c, mask=inside, other=0))
    tl.store(out_ptr + rows[:, None] * w + cols[None, :], acc, mask=(rows[:, None] < h) & (cols[None, :] < w))


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    y = torch.arange(H, device=DEVICE)[:, None]
    x = torch.arange(W, device=DEVICE)[None, :]
    blob = ((y - 40) ** 2 / 600 + (x - 70) ** 2 / 1500) < 1  # an ellipse with speckle noise
    noise = torch.rand(H, W, device=DEVICE, generator=g) < 0.03
    return ((blob ^ noise).to(torch.uint8),)


def run(mask):
    h, w = mask.shape
    out = torch.empty_like(mask)
    dilate3x3_kernel[(triton.cdiv(w, BLOCK_W), triton.cdiv(h, BLOCK_H))](
        mask, out, h, w, BLOCK_H=BLOCK_H, BLOCK_W=BLOCK_W, num_warps=4
    )
    return out


def reference(mask):
    m = mask.float()[None, None]
    return torch.nn.functional.max_pool2d(m, 3, stride=1, padding=1)[0, 0].to(torch.uint8)
