"""Row softmax that walks each row in chunks of 32: the block size is far too small for the row.

Written to work for any row width, it makes three passes over the row (max, sum of exponentials,
normalise), each a loop of 32-wide loads: 128 trips per pass for a 4096-wide row, with 128
threads per program holding 32 elements, so most lanes idle and every trip waits on memory.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = in_ptr + tl.program_id(0) * n_cols
    out = out_ptr + tl.program_id(0) * n_cols
    peak = tl.full((BLOCK,), -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        peak = tl.maximum(peak, tl.load(row + cols, mask=cols < n_cols, other=-float("inf")))
    m = tl.max(peak, axis=0)
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.exp(tl.load(row + cols, mask=cols < n_cols, other=-float("inf")) - m)
    s = tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(out + cols, tl.exp(x - m) / s, mask=cols < n_cols)


def make_inputs():
    return (torch.randn(8192, 4096, device="cuda"),)


def run(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK=32, num_warps=4)
    return out
