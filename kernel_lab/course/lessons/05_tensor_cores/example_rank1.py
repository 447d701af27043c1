# Lesson 5, example: a 64 x 64 tile updated one k at a time (outer products): reuse in registers, still FMA units.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rm * K + k, mask=rm < M, other=0.0).to(tl.float32)  # a column of A's tile
        b = tl.load(b_ptr + k * N + rn, mask=rn < N, other=0.0).to(tl.float32)  # a row of B's tile
        acc += a[:, None] * b[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


S = 4096 if DEVICE == "cuda" else 64
SHAPES = [(S, S, S), (1000, 1000, 1000) if DEVICE == "cuda" else (33, 17, 40)]


def make_inputs(m=S, n=S, k=S):
    return (torch.randn(m, k, device=DEVICE, dtype=torch.float16),
            torch.randn(k, n, device=DEVICE, dtype=torch.float16))


def run(a, b):
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_kernel[grid](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64)
    return c
