"""A matrix product written as a broadcast multiply and a sum, over fp16 inputs converted to fp32.

The work is a tile product; ``tl.dot`` on fp16 tiles would run it on tensor cores. As written it multiplies in
fp32 on the CUDA cores and keeps a BLOCK_M x BLOCK_K x BLOCK_N product in registers."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.float16 if DEVICE == "cuda" else torch.float32
SHAPES = [(2048,)] if DEVICE == "cuda" else [(32,)]


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, n, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * n + rk[None, :]).to(tl.float32)
        b = tl.load(b_ptr + rk[:, None] * n + rn[None, :]).to(tl.float32)
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc.to(c_ptr.dtype.element_ty))


def make_inputs(n=2048):
    return torch.randn(n, n, device=DEVICE, dtype=DTYPE), torch.randn(n, n, device=DEVICE, dtype=DTYPE)


def run(a, b):
    n = a.shape[0]
    c = torch.empty(n, n, device=a.device, dtype=a.dtype)
    mm_kernel[(n // 32, n // 32)](a, b, c, n, BLOCK_M=32, BLOCK_N=32, BLOCK_K=8, num_warps=4)
    return c


def torch_run(a, b):
    return a @ b
