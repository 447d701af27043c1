"""Planted bottleneck: launch overhead (a CUDA SAXPY on 4,096 floats).

y = a x + y over 4,096 floats (48 KB of traffic) in 16 blocks of 256 threads: the kernel body
takes a few hundred nanoseconds of a runtime dominated by launching it and ramping the grid up and
down. Work per launch has to grow: fuse it, batch it, or graph it.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void tiny_saxpy_kernel(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
                                  float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fmaf(a, x[i], y[i]);
}

torch::Tensor saxpy(double a, torch::Tensor x, torch::Tensor y) {
    auto out = torch::empty_like(y);
    int n = x.numel();
    tiny_saxpy_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), (float)a, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_tiny_saxpy_cuda", cpp_sources="torch::Tensor saxpy(double a, torch::Tensor x, torch::Tensor y);",
                     cuda_sources=CUDA_SRC, functions=["saxpy"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 4096
A = 2.5


def make_inputs():
    torch.manual_seed(0)
    return torch.randn(N, device="cuda"), torch.randn(N, device="cuda")


def run(x, y):
    return module.saxpy(A, x, y)


def reference(x, y):
    return A * x + y
