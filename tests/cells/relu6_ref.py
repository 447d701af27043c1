"""Reference: ReLU6, min(max(x, 0), 6)."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192,)]


@triton.jit
def relu6_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(x, 0.0), 6.0), mask=mask)


def make_inputs(n=8192):
    return (torch.randn(n, device=DEVICE),)


def run(x):
    out = torch.empty_like(x)
    relu6_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
