"""Already good (near_roof), a near miss for uncoalesced access: NV12 video frames to normalised planar RGB fp16.

Preprocessing of a batch of 8 decoded 3840 x 2160 NV12 frames for a network: full-resolution luma
(uint8) plus one interleaved (u, v) pair per 2 x 2 pixels, converted with the BT.601 matrix, clamped,
scaled to [0, 1] and normalised per channel (mean / std folded into one FMA), written as [8, 3, 2160,
3840] fp16. A program (2 warps) takes two luma rows x 256 columns and the chroma row they share: the
luma loads are contiguous (8 bytes per thread), the chroma is gathered per column at (x // 2) * 2 and +
1, so each chroma byte is loaded for two columns of two rows, and a warp's gather instruction (lanes 8
columns apart) touches 8 sectors for 32 bytes (4 of 32 bytes per sector per instruction). L1 and L2
serve the repeats, so DRAM reads each byte once: 1.5 bytes in and 6 bytes out per pixel, 66.4M pixels =
498 MB, ~163 us at 3.05 TB/s. Triton 3.6 for sm_90: 42 registers, 0 spills, 1 KB of shared memory (a
layout conversion before the 16-byte stores), ~41 SASS instructions per pixel: ~85M warp-instructions,
~0.09 ms at the issue rate. The hypothesis: DRAM >= 80% of peak with ~1.0x the needed bytes, SM% ~50%;
ncu's UncoalescedGlobalAccess on the chroma gathers is the lure (no extra DRAM bytes). Nothing big left:
only narrower outputs (uint8, or fusing into the network's first layer) would move fewer bytes.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
FRAMES, H, W = 8, 2160, 3840
BLOCK_W = 256
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


@triton.jit
def nv12_to_rgb_kernel(y_ptr, uv_ptr, out_ptr, h, w, a0, a1, a2, b0, b1, b2, BLOCK_W: tl.constexpr):
    cols = (tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W))[None, :]  # [1, BLOCK_W]
    crow = tl.program_id(1)  # chroma row: luma rows 2 * crow and 2 * crow + 1
    frame = tl.program_id(2).to(tl.int64)
    rows = (2 * crow + tl.arange(0, 2))[:, None]  # [2, 1]
    cmask = cols < w
    pix = rows * w + cols  # [2, BLOCK_W]
    luma = tl.load(y_ptr + frame * h * w + pix, mask=cmask, other=16).to(tl.float32)
    uv = uv_ptr + frame * (h // 2) * w + crow * w + (cols // 2) * 2  # each (u, v) pair serves 2 x 2 pixels
    u = tl.load(uv, mask=cmask, other=128).to(tl.float32) - 128.0
    v = tl.load(uv + 1, mask=cmask, other=128).to(tl.float32) - 128.0
    yy = luma * 1.164 - 18.624  # (y - 16) * 1.164
    r = tl.minimum(tl.maximum(yy + 1.596 * v, 0.0), 255.0)
    g = tl.minimum(tl.maximum(yy - (0.392 * u + 0.813 * v), 0.0), 255.0)
    b = tl.minimum(tl.maximum(yy + 2.017 * u, 0.0), 255.0)
    plane = h * w
    base = out_ptr + frame * 3 * plane + pix
    tl.store(base, (r * a0 + b0).to(tl.float16), mask=cmask)  # (c / 255 - mean) / std
    tl.store(base + plane, (g * a1 + b1).to(tl.float16), mask=cmask)
    tl.store(base + 2 * plane, (b * a2 + b2).to(tl.float16), mask=cmask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    yy = torch.arange(H, device=DEVICE, dtype=torch.float32)[:, None]
    xx = torch.arange(W, device=DEVICE, dtype=torch.float32)[None, :]
    scene = 110 + 60 * torch.sin(xx / 300) * torch.cos(yy / 200)  # smooth content plus noise
    luma = (scene[None] + 20 * torch.randn(FRAMES, H, W, device=DEVICE, generator=g)).clamp(16, 235)
    chroma = 128 + 40 * torch.randn(FRAMES, H // 2, W // 2, 2, device=DEVICE, generator=g)
    return luma.to(torch.uint8), chroma.clamp(16, 240).to(torch.uint8).reshape(FRAMES, H // 2, W)


def run(luma, uv):
    frames, h, w = luma.shape
    out = torch.empty(frames, 3, h, w, device=luma.device, dtype=torch.float16)
    grid = (triton.cdiv(w, BLOCK_W), h // 2, frames)
    scale = [1.0 / (255.0 * sd) for sd in STD]
    shift = [-m / sd for m, sd in zip(MEAN, STD)]
    nv12_to_rgb_kernel[grid](luma, uv, out, h, w, *scale, *shift, BLOCK_W=BLOCK_W, num_warps=2)
    return out


def reference(luma, uv):
    frames, h, w = luma.shape
    c = uv.double().reshape(frames, h // 2, w // 2, 2) - 128.0
    u = c[..., 0].repeat_interleave(2, dim=1).repeat_interleave(2, dim=2)
    v = c[..., 1].repeat_interleave(2, dim=1).repeat_interleave(2, dim=2)
    yy = (luma.double() - 16.0) * 1.164
    rgb = torch.stack([yy + 1.596 * v, yy - 0.392 * u - 0.813 * v, yy + 2.017 * u], dim=1).clamp(0, 255) / 255.0
    mean = torch.tensor(MEAN, device=luma.device, dtype=torch.float64)[None, :, None, None]
    std = torch.tensor(STD, device=luma.device, dtype=torch.float64)[None, :, None, None]
    return ((rgb - mean) / std).half()
