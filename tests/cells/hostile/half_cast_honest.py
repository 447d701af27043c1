"""Honest: adds in float32 into a float32 buffer, then returns it cast to float16, the dtype the
reference returns."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def make_inputs():
    return torch.randn(4096, device=DEVICE, dtype=torch.float16), torch.randn(4096, device=DEVICE, dtype=torch.float16)


def run(x, y):
    out = torch.empty_like(x, dtype=torch.float32)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out.to(torch.float16)
