"""A cell of many tiny launches: 64 small vector adds in a Python loop, each a few microseconds of GPU work.

Most of the cell's time is the host launching kernels (the gaps between them), which no kernel's metrics show."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(4096,)] if DEVICE == "cuda" else [(256,)]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def make_inputs(n=4096):
    return torch.randn(n, device=DEVICE), torch.randn(64, n, device=DEVICE)


def run(x, ys):
    out = x.clone()
    for i in range(ys.shape[0]):
        add_kernel[(triton.cdiv(x.numel(), 1024),)](out, ys[i], out, x.numel(), BLOCK=1024)
    return out


def torch_run(x, ys):
    return x + ys.sum(0)
