"""Planted bottleneck: launch overhead.

The whole kernel adds 64K floats (768 KB of traffic) and finishes in a few
microseconds, about as long as it takes the CPU and driver to launch it. Tuning
the kernel's code cannot help; what helps is doing more work per launch: fuse
it with neighbouring operations, batch many small inputs into one launch, or
replay a sequence of launches with a CUDA graph.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def tiny_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    n = 2**16
    device = "cuda" if torch.cuda.is_available() else "cpu"  # the CPU runs Triton's interpreter
    x = torch.randn(n, device=device)
    y = torch.randn(n, device=device)
    return x, y


def run(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    tiny_add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128, num_warps=4)  # 512 programs
    return out


def reference(x, y):
    return x + y
