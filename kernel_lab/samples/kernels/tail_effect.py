"""Planted bottleneck: tail effect (a partial last wave).

Every block does the same long computation. An SM holds two of these 1024-thread
blocks, so the 132 SMs run 264 blocks at a time: one "wave". The grid has 330
blocks = 1.25 waves. After the first wave only 66 blocks are left, so during
the last part of the kernel at least half of the SMs sit idle. Size the grid
to a whole number of waves (or many waves, so the tail is a small fraction),
or use a persistent kernel that loops over work items.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void __launch_bounds__(1024, 2) uniform_work_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                               int iters) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float b = x[t], v = b;
    for (int k = 0; k < iters; ++k) v = fmaf(v, 0.5f, b);  // the same long FMA chain in every thread
    out[t] = v;
}

torch::Tensor uniform_work(torch::Tensor x, int64_t iters) {
    auto out = torch::empty_like(x);
    uniform_work_kernel<<<x.numel() / 1024, 1024>>>(x.data_ptr<float>(), out.data_ptr<float>(), iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_tail_effect", cpp_sources="torch::Tensor uniform_work(torch::Tensor x, int64_t iters);",
                     cuda_sources=CUDA_SRC, functions=["uniform_work"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])

BLOCKS = 330  # 1.25 waves of 264 blocks (2 per SM x 132 SMs)
ITERS = 32768


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(BLOCKS * 1024, device="cuda")
    return (x,)


def run(x):
    return module.uniform_work(x, ITERS)


def reference(x):
    v = x.clone()
    for _ in range(ITERS):
        v = v * 0.5 + x  # v * 0.5 is exact, so this matches the fused multiply-add bit for bit
    return v
