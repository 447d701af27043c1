"""Planted bottleneck: uncoalesced global loads (a transpose written over the output's flat index).

out = x.T for an 8192 x 8192 bf16 matrix, written as a 1-D kernel over the output: element i of
the output is x[(i % R) * C + i // R]. Consecutive threads write consecutive outputs (coalesced)
but read elements a whole row apart (16 KB), so each 2-byte load drags in its own 32-byte sector:
16x the sectors the data needs, most of them evicted before a neighbouring program could use
them. The fix is to move a 2-D tile at a time and let the transpose happen on chip
(transpose_tiled_bf16_triton.py).
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
R = C = 8192


@triton.jit
def transpose_flat_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # R * C = 2**26 fits in int32
    mask = i < R * C
    src = (i % R) * C + i // R  # out[j, r] = x[r, j] with j = i // R, r = i % R
    tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(R, C, device=DEVICE, dtype=torch.bfloat16),)


def run(x):
    out = torch.empty(x.shape[1], x.shape[0], device=x.device, dtype=x.dtype)
    transpose_flat_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, R=x.shape[0], C=x.shape[1], BLOCK=1024, num_warps=4)
    return out


def reference(x):
    return x.t().contiguous()
