"""Planted bottleneck: memory bound (DRAM bandwidth).

A vector add reads two floats and writes one for a single addition: 12 bytes of
DRAM traffic per FLOP. The SMs finish the arithmetic long before the data arrives,
so the kernel runs at the speed of HBM, and the only way to make it faster is to
move fewer bytes (fuse it with the kernel that produces or consumes the data).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    gpu = torch.cuda.is_available()  # without one: a smaller size, for Triton's CPU interpreter
    n = 2**24 if gpu else 20_000
    x = torch.randn(n, device="cuda" if gpu else "cpu")
    y = torch.randn(n, device="cuda" if gpu else "cpu")
    return x, y


def run(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


def reference(x, y):
    return x + y
