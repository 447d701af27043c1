"""The textbook naive SGEMM: one thread per output, the K loop straight from global memory.

C = A @ B for 2048 x 2048 fp32 matrices. Thread (row, col) computes C[row, col] by walking row
`row` of A and column `col` of B in global memory: 2 loads per FMA. In a warp, the B loads are
coalesced (consecutive columns) and the A loads are one broadcast address; L1 and L2 catch most
of the reuse, but every FMA still costs two load instructions through L1, so the kernel is limited
by the load path (L1/L2 bandwidth and latency), not by arithmetic. The label is decided by the
report. The standard fix tiles A and B through shared memory (sgemm_smem_tiled_fp32_cuda.py),
so each element loaded from global memory is reused 32 times from shared memory.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    float s = 0.f;
    for (int k = 0; k < n; ++k) s = fmaf(A[(size_t)row * n + k], B[(size_t)k * n + col], s);
    C[(size_t)row * n + col] = s;
}

torch::Tensor sgemm(torch::Tensor a, torch::Tensor b) {
    int n = a.size(0);  // square, a multiple of 32
    auto c = torch::empty({n, n}, a.options());
    sgemm_naive<<<dim3(n / 32, n / 8), dim3(32, 8)>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

module = load_inline("kls_sgemm_naive_fp32_cuda", cpp_sources="torch::Tensor sgemm(torch::Tensor a, torch::Tensor b);",
                     cuda_sources=CUDA_SRC, functions=["sgemm"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2048


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda")
    b = torch.randn(N, N, device="cuda")
    return a, b


def run(a, b):
    return module.sgemm(a, b)


def reference(a, b):
    return (a.double() @ b.double()).float()
