"""Planted bottleneck: register spills to local memory.

Each thread smooths 48 values that it keeps in an array (fully unrolled, so the
array wants 48 registers). __launch_bounds__(256, 8) promises eight 256-thread
blocks per SM, which caps the kernel at 32 registers per thread. The values that
do not fit are "spilled": stored to and reloaded from local memory (per-thread
memory that lives in L1/L2/DRAM) in every round, adding memory instructions and
traffic that the real algorithm does not need. Relax the launch bound, or keep
fewer values live per thread.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define VALS 48

__global__ void __launch_bounds__(256, 8) stencil_spill_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                              int rounds) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;  // value k of thread t is x[k * stride + t]: coalesced
    float v[VALS];
    #pragma unroll
    for (int k = 0; k < VALS; ++k) v[k] = x[k * stride + t];
    for (int r = 0; r < rounds; ++r) {
        float first = v[0];
        #pragma unroll
        for (int k = 0; k < VALS - 1; ++k) v[k] = 0.5f * (v[k] + v[k + 1]);  // all 48 values stay live
        v[VALS - 1] = 0.5f * (v[VALS - 1] + first);
    }
    #pragma unroll
    for (int k = 0; k < VALS; ++k) out[k * stride + t] = v[k];
}

torch::Tensor smooth(torch::Tensor x, int64_t rounds) {
    auto out = torch::empty_like(x);  // x: [48, threads]
    int threads = x.size(1);
    stencil_spill_kernel<<<threads / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), rounds);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_register_spills", cpp_sources="torch::Tensor smooth(torch::Tensor x, int64_t rounds);",
                     cuda_sources=CUDA_SRC, functions=["smooth"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])

ROUNDS = 32


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(48, 2**18, device="cuda")  # 48 values for each of 262,144 threads
    return (x,)


def run(x):
    return module.smooth(x, ROUNDS)


def reference(x):
    v = x.clone()
    for _ in range(ROUNDS):
        v = 0.5 * (v + torch.roll(v, -1, dims=0))  # value k and k+1 (cyclic), like the kernel
    return v
