"""Held out: bf16 matrix product 4096×4096×4096 with grouped program order, 64×64×16 tiles, 4 warps, 2 stages."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(4096,)] if DEVICE == "cuda" else [(96,)]


@triton.jit
def mm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    pid = tl.program_id(0)
    per_row = tl.cdiv(N, BLOCK_SIZE_N)
    group = pid // (GROUP_SIZE_M * per_row)
    first_m = group * GROUP_SIZE_M
    size_m = min(tl.cdiv(M, BLOCK_SIZE_M) - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % (GROUP_SIZE_M * per_row)) % size_m
    pid_n = (pid % (GROUP_SIZE_M * per_row)) // size_m
    rm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    rk = tl.arange(0, BLOCK_SIZE_K)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_SIZE_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def make_inputs(n=4096):
    return torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16), torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)


def run(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.bfloat16)
    mm_kernel[(triton.cdiv(M, 64) * triton.cdiv(N, 64),)](
        a, b, c, M, N, K, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=16, GROUP_SIZE_M=1, num_warps=4, num_stages=2
    )
    return c


def torch_run(a, b):
    return a @ b
