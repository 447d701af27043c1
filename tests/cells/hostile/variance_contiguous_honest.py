"""Honest: makes its input contiguous first, then reads it as such."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(32, 256)]


@triton.jit
def variance_kernel(x_ptr, out_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    tl.store(out_ptr + row, tl.sum(d * d, axis=0) / n_cols)


def make_inputs(rows=32, cols=256):
    return (torch.randn(rows, cols, device=DEVICE),)


def run(x):
    x = x.contiguous()
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    block = triton.next_power_of_2(x.shape[1])
    variance_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), x.stride(1), BLOCK=block)
    return out
