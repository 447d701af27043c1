"""Fix of transpose_1d_index_bf16_triton.py: the same transpose, a 64 x 64 tile per program.

Each program loads a 64 x 64 tile with rows along the contiguous axis (coalesced), and stores
its transpose, also along the contiguous axis of the output; Triton moves the tile through
shared memory to change which thread holds which element. Every sector fetched is fully used:
a memory-bound copy of 128 MB in and 128 MB out.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
R = C = 8192
TILE = 64


@triton.jit
def transpose_tile_kernel(x_ptr, out_ptr, R, C, TILE: tl.constexpr):
    pid_r, pid_c = tl.program_id(0), tl.program_id(1)
    r = pid_r * TILE + tl.arange(0, TILE)
    c = pid_c * TILE + tl.arange(0, TILE)
    tile = tl.load(x_ptr + r[:, None].to(tl.int64) * C + c[None, :])          # rows of x: coalesced
    tl.store(out_ptr + c[:, None].to(tl.int64) * R + r[None, :], tl.trans(tile))  # rows of out: coalesced


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(R, C, device=DEVICE, dtype=torch.bfloat16),)


def run(x):
    out = torch.empty(x.shape[1], x.shape[0], device=x.device, dtype=x.dtype)
    transpose_tile_kernel[(x.shape[0] // TILE, x.shape[1] // TILE)](x, out, x.shape[0], x.shape[1], TILE=TILE, num_warps=4)
    return out


def reference(x):
    return x.t().contiguous()
