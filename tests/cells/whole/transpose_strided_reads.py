"""A transpose whose loads stride by the row length: consecutive programs' lanes read one column.

A 2-D tile (load a BLOCK x BLOCK tile with coalesced rows, store it transposed) coalesces both sides."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192,)] if DEVICE == "cuda" else [(64,)]


@triton.jit
def transpose_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n * n
    row, col = offs // n, offs % n
    tl.store(out_ptr + offs, tl.load(x_ptr + col * n + row, mask=mask), mask=mask)


def make_inputs(n=8192):
    return (torch.randn(n, n, device=DEVICE),)


def run(x):
    n = x.shape[0]
    out = torch.empty_like(x)
    transpose_kernel[(triton.cdiv(n * n, 1024),)](x, out, n, BLOCK=1024)
    return out


def torch_run(x):
    return x.t().contiguous()
