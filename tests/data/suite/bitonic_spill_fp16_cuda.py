"""Planted bottleneck: register spills (a per-thread sorting network under a tight launch bound).

Each thread sorts its own 64 fp16 keys with a fully unrolled bitonic network (672 compare-and-
swap steps on a float array held in registers). The network needs all 64 keys live at once, but
__launch_bounds__(256, 8) promises eight 256-thread blocks per SM and so caps the kernel at 32
registers per thread: the compiler spills most of the array to local memory and reloads it at
every stage, so the kernel spends its time on local loads and stores instead of min/max.
Relaxing the bound (bitonic_regs_fp16_cuda.py: __launch_bounds__(256)) keeps the keys in
registers.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define K 64   // keys per thread

__global__ void __launch_bounds__(256, 8) bitonic_sort64_spill(const __half* __restrict__ in, __half* __restrict__ out, int threads) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v[K];
    #pragma unroll
    for (int i = 0; i < K; ++i) v[i] = __half2float(in[(size_t)i * threads + t]);  // key i of thread t: coalesced
    #pragma unroll
    for (int k = 2; k <= K; k <<= 1)          // bitonic sorting network, fully unrolled: all indices are constants
        #pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1)
            #pragma unroll
            for (int i = 0; i < K; ++i) {
                int l = i ^ j;
                if (l > i) {
                    float a = v[i], b = v[l];
                    bool up = (i & k) == 0;
                    v[i] = up ? fminf(a, b) : fmaxf(a, b);
                    v[l] = up ? fmaxf(a, b) : fminf(a, b);
                }
            }
    #pragma unroll
    for (int i = 0; i < K; ++i) out[(size_t)i * threads + t] = __float2half(v[i]);
}

torch::Tensor sort_columns(torch::Tensor x) {
    int threads = x.size(1);  // x: [64, threads] fp16; each column sorted by one thread
    auto out = torch::empty_like(x);
    bitonic_sort64_spill<<<threads / 256, 256>>>(reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
                                      reinterpret_cast<__half*>(out.data_ptr<at::Half>()), threads);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_bitonic_spill_fp16_cuda", cpp_sources="torch::Tensor sort_columns(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["sort_columns"], extra_cuda_cflags=["-O3", "-lineinfo"])

THREADS = 2**20  # 1M columns of 64 fp16 keys = 128 MB


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(64, THREADS, device="cuda", dtype=torch.float16),)


def run(x):
    return module.sort_columns(x)


def reference(x):
    return torch.sort(x, dim=0).values
