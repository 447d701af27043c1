"""Sloppy: an fp16 kernel whose arithmetic keeps only bfloat16's 8 mantissa bits (8x coarser than fp16),
within fp16's norm-wise tolerance."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"



@triton.jit
def bf16(v):
    return ((v.to(tl.int32, bitcast=True) + 0x8000) & -65536).to(tl.float32, bitcast=True)  # rounded to bfloat16, in float32


@triton.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = bf16(tl.load(x_ptr + offs, mask=mask).to(tl.float32))
    y = bf16(tl.load(y_ptr + offs, mask=mask).to(tl.float32))
    z = bf16(tl.load(z_ptr + offs, mask=mask).to(tl.float32))
    tl.store(out_ptr + offs, bf16(bf16(x * y) + z), mask=mask)


def run(x, y, z):
    out = torch.empty_like(x)
    fma_kernel[(triton.cdiv(x.numel(), 2048),)](x, y, z, out, x.numel(), BLOCK=2048)
    return out
