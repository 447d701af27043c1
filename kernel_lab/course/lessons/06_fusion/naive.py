# Lesson 6, naive: softmax over rows in three kernels (max; exp and sum; divide), like eager PyTorch.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def row_max_kernel(x_ptr, max_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    tl.store(max_ptr + row, tl.max(x, axis=0))


@triton.jit
def exp_sum_kernel(x_ptr, max_ptr, e_ptr, sum_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    e = tl.exp(x - tl.load(max_ptr + row))
    tl.store(e_ptr + row * N + cols, e, mask=cols < N)
    tl.store(sum_ptr + row, tl.sum(e, axis=0))


@triton.jit
def normalize_kernel(e_ptr, sum_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    e = tl.load(e_ptr + row * N + cols, mask=cols < N)
    tl.store(out_ptr + row * N + cols, e / tl.load(sum_ptr + row), mask=cols < N)


M, N = (8192, 4096) if DEVICE == "cuda" else (37, 300)
SHAPES = [(M, N), (1000, 1000) if DEVICE == "cuda" else (5, 33)]


def make_inputs(m=M, n=N):
    return (torch.randn(m, n, device=DEVICE),)


def run(x):
    m, n = x.shape
    block = triton.next_power_of_2(n)
    row_max = torch.empty(m, device=x.device)
    e = torch.empty_like(x)
    row_sum = torch.empty(m, device=x.device)
    out = torch.empty_like(x)
    row_max_kernel[(m,)](x, row_max, n, BLOCK=block, num_warps=8)
    exp_sum_kernel[(m,)](x, row_max, e, row_sum, n, BLOCK=block, num_warps=8)
    normalize_kernel[(m,)](e, row_sum, out, n, BLOCK=block, num_warps=8)
    return out
