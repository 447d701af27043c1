"""Planted bottleneck: warp divergence.

The 32 threads of a warp execute one instruction at a time together. Here even
and odd lanes take different, long code paths (a float recurrence and an integer
hash). The warp runs the two paths one after the other, each time with half of
its lanes switched off, so every instruction does the work of 16 threads instead
of 32: half of the SM's arithmetic throughput is wasted. Arrange the data so
that all lanes of a warp take the same branch (e.g. split by warp, not by lane).
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void divergent_kernel(const float* __restrict__ x, float* __restrict__ out, int iters) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[t];
    if (threadIdx.x & 1) {                 // odd lanes: a float recurrence
        float b = v;
        for (int k = 0; k < iters; ++k) v = fmaf(v, 0.5f, b);
    } else {                               // even lanes: an integer hash (xorshift32)
        unsigned h = __float_as_uint(v);
        for (int k = 0; k < iters; ++k) { h ^= h << 13; h ^= h >> 17; h ^= h << 5; }
        v = (float)(h & 0xffff);
    }
    out[t] = v;
}

torch::Tensor divergent(torch::Tensor x, int64_t iters) {
    auto out = torch::empty_like(x);
    divergent_kernel<<<x.numel() / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_warp_divergence", cpp_sources="torch::Tensor divergent(torch::Tensor x, int64_t iters);",
                     cuda_sources=CUDA_SRC, functions=["divergent"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])

ITERS = 2048


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(132 * 8 * 256 * 4, device="cuda")  # 4 full waves of 256-thread blocks (8 per SM)
    return (x,)


def run(x):
    return module.divergent(x, ITERS)


def reference(x):
    odd = torch.arange(x.numel(), device=x.device) % 2 == 1
    v = x.clone()
    for _ in range(ITERS):
        v = v * 0.5 + x  # v * 0.5 is exact, so this matches the fused multiply-add bit for bit
    h = x.view(torch.int32).long() & 0xFFFFFFFF
    for _ in range(ITERS):
        h ^= (h << 13) & 0xFFFFFFFF
        h ^= h >> 17
        h ^= (h << 5) & 0xFFFFFFFF
    return torch.where(odd, v, (h & 0xFFFF).float())
