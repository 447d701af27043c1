"""Planted bottleneck: register spills (Triton softmax with a whole 16K row in a two-warp program).

Row softmax over 16,384 fp32 columns, one program per row, the whole row loaded as one block
(BLOCK = 16,384) by only two warps: 256 values per thread, more than the 255 registers a thread
can have, on top of the max, the exponentials and the addresses. The compiler spills to local
memory, so the row makes extra round trips through L1/L2 on its way through the kernel. More
warps per row (num_warps=16: 32 values per thread), or a loop over chunks of the row, keeps the
values in registers.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 8192, 16384  # 512 MB


@triton.jit
def softmax_wide_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device=DEVICE),)


def run(x):
    out = torch.empty_like(x)
    softmax_wide_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=2)
    return out


def reference(x):
    return torch.softmax(x, dim=1)
