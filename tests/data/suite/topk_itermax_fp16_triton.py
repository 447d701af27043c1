"""Planted bottleneck: compute bound (top-32 of each row by 32 rounds of max / argmax / knock-out in registers).

Top-32 values of each of 32,768 rows of 2,048 fp16 scores (128 MB). One program per row (4 warps)
loads the row once into registers (16 values per thread) and repeats 32 times: row max (a
reduction: max per thread, shuffles, a cross-warp step), the first index holding it (a compare
and select per value, then a min reduction), and a knock-out of that index (a compare and select per
value). The loop body is 166 SASS instructions (triton 3.6, sm_90; 55 registers, 9 programs = 36
warps per SM), ~5,300 per thread in all, ~0.7G warp instructions, ~0.75 ms at 4 issues per cycle
per SM, nearly all on the ALU/FMA pipes, for 128 MB of DRAM traffic (~43 us): the SMs' issue
slots, not memory, set the time. A selection that does less work per element (a radix or bucket
threshold pass, then a small sort of the survivors) is the fix.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS, K = 32768, 2048, 32


@triton.jit
def topk_itermax_kernel(x_ptr, out_ptr, N, K: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    for r in range(K):
        m = tl.max(x, axis=0)
        first = tl.min(tl.where(x == m, cols, BLOCK), axis=0)  # first index holding the max
        tl.store(out_ptr + row * K + r, m)
        x = tl.where(cols == first, -float("inf"), x)  # knock it out


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device=DEVICE, dtype=torch.float16),)


def run(x):
    out = torch.empty(x.shape[0], K, device=x.device, dtype=x.dtype)
    topk_itermax_kernel[(x.shape[0],)](x, out, x.shape[1], K=K, BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=4)
    return out


def reference(x):
    return torch.topk(x, K, dim=1).values
