"""LayerNorm as two kernels: per-row mean and reciprocal standard deviation, then the normalized, scaled output.

The input is read twice; the statistics make a small round trip through memory."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(16384, 2048)] if DEVICE == "cuda" else [(8, 48)]


@triton.jit
def stats_kernel(x_ptr, mean_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, 1 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps))


@triton.jit
def apply_kernel(x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    y = (x - tl.load(mean_ptr + row)) * tl.load(rstd_ptr + row)
    y = y * tl.load(w_ptr + cols, mask=mask) + tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, y, mask=mask)


def make_inputs(rows=16384, cols=2048):
    x = torch.randn(rows, cols, device=DEVICE)
    return x, torch.randn(cols, device=DEVICE), torch.randn(cols, device=DEVICE)


def run(x, w, b):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    mean = torch.empty(rows, device=x.device)
    rstd = torch.empty(rows, device=x.device)
    out = torch.empty_like(x)
    stats_kernel[(rows,)](x, mean, rstd, cols, 1e-5, BLOCK=block, num_warps=4)
    apply_kernel[(rows,)](x, mean, rstd, w, b, out, cols, BLOCK=block, num_warps=4)
    return out


def torch_run(x, w, b):
    return torch.nn.functional.layer_norm(x, x.shape[1:], w, b, 1e-5)
