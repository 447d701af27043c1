"""Hostile: the transpose done by PyTorch's data operators (.t().contiguous()), which compute nothing
by FLOPs; its own kernel is launched on nothing."""
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
    tl.store(out_ptr + cols * m + rows, tile, mask=mask)


def make_inputs(m=64, n=96):
    return (torch.randn(m, n, device=DEVICE),)


def run(x):
    m, n = x.shape
    out = torch.empty(n, m, device=x.device, dtype=x.dtype)
    transpose_kernel[(1, 1)](x, out, 0, 0, BLOCK=32)
    return out.copy_(x.t())
