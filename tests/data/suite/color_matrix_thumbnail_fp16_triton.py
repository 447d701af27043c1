"""Planted bottleneck: launch overhead (a colour-correction matrix applied to one 160 x 120 preview frame).

A camera preview path corrects each small frame as it arrives: out = clamp(M @ rgb + offset, 0, 1)
with a 3 x 3 colour-correction matrix and an offset per channel, on one planar fp16 RGB frame of
160 x 120 pixels (19,200 pixels, 115 KB in, 115 KB out). One launch of 19 programs of 1,024 pixels:
~9 FMAs per pixel and ~230 KB of traffic, work for well under a microsecond of the GPU, so the
kernel's ~2-3 us are its launch and ramp (grid 19 on 132 SMs), and run() costs mostly the
host-side launch. Nothing inside the kernel is worth tuning; batching frames into one launch (or
fusing the correction into the neighbouring kernel, or a CUDA graph for the whole preview path) is
the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
H, W = 120, 160
BLOCK = 1024


@triton.jit
def color_matrix_kernel(img_ptr, ccm_ptr, out_ptr, npix, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = p < npix
    r = tl.load(img_ptr + p, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(img_ptr + npix + p, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(img_ptr + 2 * npix + p, mask=mask, other=0.0).to(tl.float32)
    for ch in tl.static_range(3):  # ccm rows: [m0, m1, m2, offset]
        m0 = tl.load(ccm_ptr + 4 * ch)
        m1 = tl.load(ccm_ptr + 4 * ch + 1)
        m2 = tl.load(ccm_ptr + 4 * ch + 2)
        off = tl.load(ccm_ptr + 4 * ch + 3)
        y = tl.minimum(tl.maximum(m0 * r + m1 * g + m2 * b + off, 0.0), 1.0)
        tl.store(out_ptr + ch * npix + p, y.to(tl.float16), mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    img = torch.rand(3, H, W, device=DEVICE, generator=g).to(torch.float16)
    ccm = torch.tensor(
        [[1.62, -0.48, -0.14, 0.01], [-0.21, 1.39, -0.18, 0.0], [-0.05, -0.52, 1.57, -0.01]], device=DEVICE, dtype=torch.float32
    )
    return img, ccm


def run(img, ccm):
    npix = img.shape[1] * img.shape[2]
    out = torch.empty_like(img)
    color_matrix_kernel[(triton.cdiv(npix, BLOCK),)](img, ccm, out, npix, BLOCK=BLOCK, num_warps=4)
    return out


def reference(img, ccm):
    rgb = img.double().reshape(3, -1)
    m = ccm.double()
    y = (m[:, :3] @ rgb + m[:, 3:]).clamp(0.0, 1.0)
    return y.reshape(img.shape).to(torch.float16)
