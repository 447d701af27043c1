"""Fix of matmul_bcast_fp16_triton.py: the same tiled loop with tl.dot.

Same 32 x 32 x 16 tiles, same loads, same fp32 accumulator: the tile product is tl.dot(a, b, acc),
which Triton lowers to tensor-core MMA instructions. The small tiles leave performance on the
table (bigger tiles, more stages: see matmul_tutorial_fp16_triton.py), but the math moves from
the FMA pipes to the tensor cores.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M = N = K = 2048
BM, BN, BK = 32, 32, 16


@triton.jit
def matmul_dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):  # sizes are multiples of the tiles: no masks
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])  # [BM, BK] fp16
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])  # [BK, BN] fp16
        acc = tl.dot(a, b, acc)  # tensor cores
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(M, K, device=DEVICE, dtype=torch.float16)
    b = torch.randn(K, N, device=DEVICE, dtype=torch.float16)
    return a, b


def run(a, b):
    c = torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=torch.float16)
    grid = (a.shape[0] // BM, b.shape[1] // BN)
    matmul_dot_kernel[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1], BM=BM, BN=BN, BK=BK, num_warps=4)
    return c


def reference(a, b):
    return a @ b
