"""Planted bottleneck: tensor cores unused (a Triton fp16 matmul written without tl.dot).

C = A @ B for 2048 x 2048 fp16 matrices, tiled 32 x 32 x 16, but each K-step computes the tile
product as a broadcast multiply and a sum: a [32, 16, 32] tensor of fp16 products, converted to
fp32 and reduced over K. That is correct, but it runs on the FP16/FP32 pipes (and moves partial
sums between threads), while the tensor cores, which would do the same tile with a handful of MMA
instructions, sit idle. Replace it with tl.dot (matmul_dot_fp16_triton.py: same tiles, same loop).

Why the .to(tl.float32) between the product and the sum: Triton's TritonCombineOps pass pattern-
matches exactly sum(x[:, :, None] * y[None, :, :], axis=1) and rewrites it into a tt.dot. With
fp16 operands that rewrite aborts Triton 3.6's compiler (an MLIR assertion: an fp32 zero splatted
into an fp16 accumulator; checked with triton 3.6.0 on the CPU before recording); with fp32
operands it would silently turn the loop into a TF32 tensor-core dot. The cast keeps the kernel
what it says it is: no tensor cores.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M = N = K = 2048
BM, BN, BK = 32, 32, 16


@triton.jit
def matmul_bcast_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):  # sizes are multiples of the tiles: no masks
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])  # [BM, BK] fp16
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])  # [BK, BN] fp16
        acc += tl.sum((a[:, :, None] * b[None, :, :]).to(tl.float32), axis=1)  # broadcast-multiply-and-sum: no tl.dot
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(M, K, device=DEVICE, dtype=torch.float16)
    b = torch.randn(K, N, device=DEVICE, dtype=torch.float16)
    return a, b


def run(a, b):
    c = torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=torch.float16)
    grid = (a.shape[0] // BM, b.shape[1] // BN)
    matmul_bcast_kernel[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1], BM=BM, BN=BN, BK=BK, num_warps=4)
    return c


def reference(a, b):
    return a @ b
