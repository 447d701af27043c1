"""Held out: the sum of each row of a 16384×2048 matrix, one row per program in 64-wide chunks, 1 warp."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(16384, 2048)] if DEVICE == "cuda" else [(16, 256)]


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0) * n_cols
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(total, axis=0))


def make_inputs(rows=16384, cols=2048):
    return (torch.randn(rows, cols, device=DEVICE),)


def run(x):
    out = torch.empty(x.shape[0], device=x.device)
    rowsum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=64, num_warps=1)
    return out


def torch_run(x):
    return x.sum(dim=1)
