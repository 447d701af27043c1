"""Reference: a small tiled matrix multiply with tl.dot (square, sizes a multiple of 32)."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def make_inputs():
    return torch.randn(64, 64, device=DEVICE), torch.randn(64, 64, device=DEVICE)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, n: tl.constexpr, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, n, BLOCK):
        a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * n + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc)


def run(a, b):
    n = a.shape[0]
    c = torch.empty_like(a)
    matmul_kernel[(n // 32, n // 32)](a, b, c, n, BLOCK=32)
    return c
