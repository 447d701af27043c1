"""Held out, control. Rotary position embedding in one kernel: no tensor is shared between kernels."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(32768, 128)] if DEVICE == "cuda" else [(16, 32)]


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, half, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < half
    x1 = tl.load(x_ptr + row * 2 * half + cols, mask=mask)
    x2 = tl.load(x_ptr + row * 2 * half + half + cols, mask=mask)
    c = tl.load(cos_ptr + row * half + cols, mask=mask)
    s = tl.load(sin_ptr + row * half + cols, mask=mask)
    tl.store(out_ptr + row * 2 * half + cols, x1 * c - x2 * s, mask=mask)
    tl.store(out_ptr + row * 2 * half + half + cols, x2 * c + x1 * s, mask=mask)


def make_inputs(rows=32768, dim=128):
    angle = torch.rand(rows, dim // 2, device=DEVICE) * 6.28
    return torch.randn(rows, dim, device=DEVICE), angle.cos(), angle.sin()


def run(x, cos, sin):
    out = torch.empty_like(x)
    half = x.shape[1] // 2
    rope_kernel[(x.shape[0],)](x, cos, sin, out, half, BLOCK=triton.next_power_of_2(half))
    return out


def torch_run(x, cos, sin):
    x1, x2 = x.chunk(2, dim=1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=1)
