"""Held out. Gathers every column's first half into rows (out[j, i] = x[i, j] for i < n/2): each lane reads a row apart."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192,)] if DEVICE == "cuda" else [(64,)]


@triton.jit
def gather_kernel(x_ptr, out_ptr, n, half, BLOCK: tl.constexpr):
    j = tl.program_id(0)
    i = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = i < half
    tl.store(out_ptr + j * half + i, tl.load(x_ptr + i * n + j, mask=mask), mask=mask)


def make_inputs(n=8192):
    return (torch.randn(n, n, device=DEVICE),)


def run(x):
    n = x.shape[0]
    half = n // 2
    out = torch.empty(n, half, device=x.device)
    gather_kernel[(n, triton.cdiv(half, 256))](x, out, n, half, BLOCK=256)
    return out


def torch_run(x):
    return x[: x.shape[0] // 2].t().contiguous()
