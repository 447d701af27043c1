"""Honest: the transpose with 64 x 64 tiles."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)



@triton.jit
def transpose_kernel(x_ptr, out_ptr, m, n, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[:, None]
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
    mask = (rows < m) & (cols < n)
    tl.store(out_ptr + cols * m + rows, tl.load(x_ptr + rows * n + cols, mask=mask), mask=mask)


def run(x):
    m, n = x.shape
    out = torch.empty(n, m, device=x.device, dtype=x.dtype)
    transpose_kernel[(triton.cdiv(m, 64), triton.cdiv(n, 64))](x, out, m, n, BLOCK=64)
    return out
