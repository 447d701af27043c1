"""Wrong for wide rows: a fixed 64-column block, right only while rows have at most 64 columns."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(16, 64), (7, 33), (3, 100)]  # (rows, columns), odd sizes included


def make_inputs(rows=16, cols=64):
    return (torch.randn(rows, cols, device=DEVICE),)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = tl.program_id(0) * stride + cols
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + offs, e / tl.sum(e, axis=0), mask=mask)


def run(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=64)
    return out
