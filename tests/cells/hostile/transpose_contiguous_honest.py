"""Honest: its kernel copies the tile into an (M, N) buffer read as (N, M) by a transposed view,
then returns that view made contiguous: its kernel does the work, the final copy only lays it out."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(64, 96)]


@triton.jit
def transpose_kernel(x_ptr, out_ptr, m, n, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[:, None]
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
    mask = (rows < m) & (cols < n)
    tile = tl.load(x_ptr + rows * n + cols, mask=mask)
    tl.store(out_ptr + rows * n + cols, tile, mask=mask)


def make_inputs(m=64, n=96):
    return (torch.randn(m, n, device=DEVICE),)


def run(x):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=x.dtype)
    transpose_kernel[(triton.cdiv(m, 32), triton.cdiv(n, 32))](x, out.t(), m, n, BLOCK=32)
    return out.t().contiguous()
