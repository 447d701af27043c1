"""Planted bottleneck: launch overhead (a softmax over a 16 x 256 tensor).

The whole job is 16 rows of 256 floats (16 KB in, 16 KB out): one program per row finishes in
about as long as it takes to launch a kernel at all. Nothing inside the kernel can make it
faster; batch many such softmaxes into one launch, fuse it with its neighbours, or capture the
sequence of small launches in a CUDA graph.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 16, 256


@triton.jit
def tiny_softmax_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device=DEVICE),)


def run(x):
    out = torch.empty_like(x)
    tiny_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=256, num_warps=2)
    return out


def reference(x):
    return torch.softmax(x, dim=1)
