"""Held out. Counts the values above a threshold: each element adds its 0 or 1 to one counter with an atomic."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(1 << 24,)] if DEVICE == "cuda" else [(4096,)]


@triton.jit
def count_kernel(x_ptr, count_ptr, n, threshold, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    hit = (tl.load(x_ptr + offs, mask=mask, other=0.0) > threshold).to(tl.int32)
    tl.atomic_add(count_ptr + tl.zeros_like(offs), hit, mask=mask)


def make_inputs(n=1 << 24):
    return (torch.rand(n, device=DEVICE),)


def run(x):
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    count_kernel[(triton.cdiv(x.numel(), 512),)](x, count, x.numel(), 0.75, BLOCK=512)
    return count


def torch_run(x):
    return (x > 0.75).sum().to(torch.int32).reshape(1)
