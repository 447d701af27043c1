"""Planted bottleneck: grid too small for the GPU.

Only 16 programs (thread blocks) are launched, each streaming a 4 MB chunk in a
loop. An H100 has 132 SMs, so 116 of them have nothing to do, and the 16 busy
ones cannot keep enough loads in flight to use the memory bandwidth. Split the
work into many more programs (thousands here) so every SM gets several.
"""
import torch
import triton
import triton.language as tl

PROGRAMS = 16


@triton.jit
def scale_small_grid_kernel(x_ptr, out_ptr, n, chunk, BLOCK: tl.constexpr):
    start = tl.program_id(0) * chunk
    for off in range(start, start + chunk, BLOCK):  # each program loops over its big chunk
        offs = off + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * 2.0 + 1.0, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    gpu = torch.cuda.is_available()  # without one: a smaller size, for Triton's CPU interpreter
    x = torch.randn(2**24 if gpu else 2**16, device="cuda" if gpu else "cpu")
    return (x,)


def run(x):
    out = torch.empty_like(x)
    n = x.numel()
    chunk = triton.cdiv(n, PROGRAMS)
    scale_small_grid_kernel[(PROGRAMS,)](x, out, n, chunk, BLOCK=1024)
    return out


def reference(x):
    return x * 2.0 + 1.0
