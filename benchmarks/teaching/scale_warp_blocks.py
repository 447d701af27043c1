"""CUDA elementwise a*x + b launched with one warp per block.

An SM holds at most 32 blocks, so 32-thread blocks cap it at 32 of its 64 warps (50% occupancy)
however little each thread needs: the block size is the occupancy limiter.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define THREADS 32

__global__ void scale_shift(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}

torch::Tensor scale(torch::Tensor x, double a, double b) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    scale_shift<<<(n + THREADS - 1) / THREADS, THREADS>>>(x.data_ptr<float>(), y.data_ptr<float>(), a, b, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline(
    "kl_scale_warp_blocks",
    cpp_sources="torch::Tensor scale(torch::Tensor x, double a, double b);",
    cuda_sources=CUDA_SRC,
    functions=["scale"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


def make_inputs():
    return (torch.randn(2**25, device="cuda"),)


def run(x):
    return module.scale(x, 1.5, -0.25)
