"""Planted bottleneck: atomic contention (a 16-bin histogram built with global atomics).

16M int32 keys in [0, 16), one thread per key doing atomicAdd(&hist[key], 1) in global memory.
All 16M atomics land on 16 counters, 64 contiguous bytes owned by one L2 slice, which applies
them one after another; the rest of the GPU waits. Privatize: count in shared memory per block
(histogram_smem_private_cuda.py) and add each block's 16 counts to the global histogram once.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void hist_global_atomic(const int* __restrict__ keys, int* __restrict__ hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[keys[i]], 1);  // 16 hot addresses
}

torch::Tensor histogram(torch::Tensor keys, int64_t bins) {
    auto hist = torch::zeros({bins}, keys.options());
    int n = keys.numel();
    hist_global_atomic<<<(n + 255) / 256, 256>>>(keys.data_ptr<int>(), hist.data_ptr<int>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return hist;
}
"""

module = load_inline("kls_histogram_global_atomic_cuda", cpp_sources="torch::Tensor histogram(torch::Tensor keys, int64_t bins);",
                     cuda_sources=CUDA_SRC, functions=["histogram"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**24
BINS = 16


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(0, BINS, (N,), device="cuda", dtype=torch.int32),)


def run(keys):
    return module.histogram(keys, BINS)


def reference(keys):
    return torch.bincount(keys, minlength=BINS).int()
