"""Planted bottleneck: tail effect (396 equal blocks = 1.5 waves of 264), an iterated stencil.

Each 1,024-thread block loads its own 4,096-point segment into shared memory and applies a
3-point smoothing stencil (periodic within the segment) 500 times before writing it back: all
the work is on chip and every block takes the same time. __launch_bounds__(1024, 2) and 33 KB of
shared memory per block give exactly two blocks per SM: 264 per wave. 396 blocks = one full wave
plus a half wave in which half of the SMs are idle. A grid that is a multiple of 264 (or blocks
sized so that it is) removes the tail.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define SEG 4096
#define THREADS 1024

__global__ void __launch_bounds__(THREADS, 2) smooth_segments(const float* __restrict__ in, float* __restrict__ out,
                                                              int iters) {
    __shared__ float buf[2][SEG + 2];  // one halo cell on each side
    const float* src = in + (size_t)blockIdx.x * SEG;
    for (int j = threadIdx.x; j < SEG; j += THREADS) buf[0][j + 1] = src[j];
    __syncthreads();
    if (threadIdx.x == 0) { buf[0][0] = buf[0][SEG]; buf[0][SEG + 1] = buf[0][1]; }
    __syncthreads();
    int cur = 0;
    for (int it = 0; it < iters; ++it) {
        for (int j = threadIdx.x + 1; j <= SEG; j += THREADS)
            buf[cur ^ 1][j] = 0.25f * buf[cur][j - 1] + 0.5f * buf[cur][j] + 0.25f * buf[cur][j + 1];
        __syncthreads();
        cur ^= 1;
        if (threadIdx.x == 0) { buf[cur][0] = buf[cur][SEG]; buf[cur][SEG + 1] = buf[cur][1]; }
        __syncthreads();
    }
    float* dst = out + (size_t)blockIdx.x * SEG;
    for (int j = threadIdx.x; j < SEG; j += THREADS) dst[j] = buf[cur][j + 1];
}

torch::Tensor smooth(torch::Tensor x, int64_t iters) {
    auto out = torch::empty_like(x);
    smooth_segments<<<x.numel() / SEG, THREADS>>>(x.data_ptr<float>(), out.data_ptr<float>(), iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_stencil_iter_tail_cuda", cpp_sources="torch::Tensor smooth(torch::Tensor x, int64_t iters);",
                     cuda_sources=CUDA_SRC, functions=["smooth"], extra_cuda_cflags=["-O3", "-lineinfo"])

BLOCKS = 396  # 1.5 waves of 264 (2 blocks x 132 SMs)
SEG = 4096
ITERS = 500


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(BLOCKS * SEG, device="cuda"),)


def run(x):
    return module.smooth(x, ITERS)


def reference(x):
    v = x.view(BLOCKS, SEG).clone()
    for _ in range(ITERS):
        v = 0.25 * torch.roll(v, 1, 1) + 0.5 * v + 0.25 * torch.roll(v, -1, 1)
    return v.reshape(-1)
