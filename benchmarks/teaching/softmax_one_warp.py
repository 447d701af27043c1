"""Row softmax with one warp per row: each program holds a whole 4096-wide row in one warp."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def make_inputs():
    return (torch.randn(8192, 4096, device="cuda"),)


def run(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK=4096, num_warps=1)
    return out
