"""Strided gather: neighbouring threads read addresses far apart (uncoalesced)."""

import torch
import triton
import triton.language as tl


@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    src = (i % STRIDE) * (n // STRIDE) + i // STRIDE
    tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)


def make_inputs():
    return (torch.randn(2**24, device="cuda"),)


def run(x):
    out = torch.empty_like(x)
    strided_copy_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), STRIDE=4096, BLOCK=128)
    return out
