"""Already good (near the roof): a bf16 GEMM through torch.matmul (cuBLAS), 8192 x 8192 x 8192.

torch.matmul on bf16 CUDA tensors calls cuBLAS, whose Hopper kernels use warpgroup MMA on the
tensor cores, TMA loads and a tuned schedule: the reference point for "little is left to gain".
The kernel's name is cuBLAS's own (not in this cell), so it is recorded with every kernel in the
profiled range (no -k filter).
"""
import torch

N = 8192


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    return a, b


def run(a, b):
    return torch.matmul(a, b)


def reference(a, b):
    return (a.float() @ b.float()).to(torch.bfloat16)
