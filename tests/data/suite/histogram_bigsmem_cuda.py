"""Planted bottleneck: low occupancy, limited by shared memory (a 192 KB private histogram).

A histogram of 128M int32 keys into 49,152 bins. Each block keeps a private copy of the whole
histogram in shared memory (192 KB), counts its share of the keys with shared-memory atomics,
and merges the copy into the global histogram at the end. 192 KB of the SM's 228 KB leaves room
for one 256-thread block per SM: 8 warps of 64 (12.5 % theoretical occupancy). The work is a
stream of 512 MB of keys, and streaming DRAM at full speed needs many loads in flight; eight
warps cannot provide them. More threads per block (1,024 share the same table), or a smaller
table per block (sub-histograms of the key range), lets the SM keep enough loads in flight.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define BINS 49152   // 192 KB of int counters per block
#define THREADS 256

__global__ void __launch_bounds__(THREADS) hist_bigsmem_kernel(const int* __restrict__ keys, int* __restrict__ hist,
                                                               long n) {
    extern __shared__ int h[];
    for (int b = threadIdx.x; b < BINS; b += THREADS) h[b] = 0;
    __syncthreads();
    for (long i = (long)blockIdx.x * THREADS + threadIdx.x; i < n; i += (long)gridDim.x * THREADS)
        atomicAdd(&h[keys[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += THREADS) {
        int c = h[b];
        if (c) atomicAdd(&hist[b], c);
    }
}

torch::Tensor histogram(torch::Tensor keys) {
    auto hist = torch::zeros({BINS}, keys.options());
    int smem = BINS * sizeof(int);
    C10_CUDA_CHECK(cudaFuncSetAttribute(hist_bigsmem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, keys.device().index()));
    hist_bigsmem_kernel<<<sms, THREADS, smem>>>(keys.data_ptr<int>(), hist.data_ptr<int>(), keys.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return hist;
}
"""

module = load_inline("kls_histogram_bigsmem_cuda", cpp_sources="torch::Tensor histogram(torch::Tensor keys);",
                     cuda_sources=CUDA_SRC, functions=["histogram"], extra_cuda_cflags=["-O3", "-lineinfo"])

BINS = 49152
N = 2**27  # 512 MB of keys


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(0, BINS, (N,), device="cuda", dtype=torch.int32),)


def run(keys):
    return module.histogram(keys)


def reference(keys):
    return torch.bincount(keys, minlength=BINS).int()
