"""Sloppy: ReLU6 that forgets the cap at 6 (rare with randn inputs, certain with large ones)."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"



@triton.jit
def relu6_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


def run(x):
    out = torch.empty_like(x)
    relu6_kernel[(triton.cdiv(x.numel(), 2048),)](x, out, x.numel(), BLOCK=2048)
    return out
