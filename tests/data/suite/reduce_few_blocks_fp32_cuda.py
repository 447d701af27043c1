"""Planted bottleneck: small grid (a sum reduction launched with 32 blocks).

Summing 64M floats (256 MB) with a grid-stride loop in 32 blocks of 1,024 threads: each block
reduces its share and writes one partial sum. The H100 has 132 SMs; 100 of them get no block at
all, and the 32 busy ones cannot keep enough loads in flight to pull DRAM's bandwidth through
their own L1s. Launch at least a few blocks per SM (e.g. 132 x 8) and the same code runs at
memory speed.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define THREADS 1024

__global__ void __launch_bounds__(THREADS) reduce_grid_stride(const float* __restrict__ x, float* __restrict__ partial,
                                                              long n) {
    __shared__ float warp_sum[THREADS / 32];
    float s = 0.f;
    for (long i = (long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long)gridDim.x * THREADS) s += x[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = warp_sum[threadIdx.x];
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
        if (threadIdx.x == 0) partial[blockIdx.x] = s;
    }
}

torch::Tensor reduce(torch::Tensor x, int64_t blocks) {
    auto partial = torch::empty({blocks}, x.options());
    reduce_grid_stride<<<blocks, THREADS>>>(x.data_ptr<float>(), partial.data_ptr<float>(), x.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return partial;
}
"""

module = load_inline("kls_reduce_few_blocks_fp32_cuda", cpp_sources="torch::Tensor reduce(torch::Tensor x, int64_t blocks);",
                     cuda_sources=CUDA_SRC, functions=["reduce"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**26
BLOCKS = 32


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, device="cuda"),)


def run(x):
    return module.reduce(x, BLOCKS)


def reference(x):
    return x.double().view(-1, BLOCKS, 1024).sum((0, 2)).float()  # block b owns elements i with (i // 1024) % 32 == b
