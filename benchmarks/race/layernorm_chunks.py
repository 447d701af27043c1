"""LayerNorm over rows of 4096, looping in 32-wide chunks, one row per program (issue #15's second cell)."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192, 4096)] if DEVICE == "cuda" else [(16, 256)]


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0) * n_cols
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + row + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(total, axis=0) / n_cols
    spread = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row + cols, mask=cols < n_cols, other=0.0)
        spread += tl.where(cols < n_cols, (x - mean) * (x - mean), 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(spread, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(out_ptr + row + cols, (x - mean) * rstd * w + b, mask=mask)


def make_inputs(rows=8192, cols=4096):
    x = torch.randn(rows, cols, device=DEVICE)
    return x, torch.randn(cols, device=DEVICE), torch.randn(cols, device=DEVICE)


def run(x, w, b):
    out = torch.empty_like(x)
    layernorm_kernel[(x.shape[0],)](x, w, b, out, x.shape[1], 1e-5, BLOCK=32, num_warps=4)
    return out


def torch_run(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, 1e-5)
