"""Fix of local_hist_dynamic_index_cuda.py: the same per-thread histograms kept in shared memory.

Each thread owns column threadIdx.x of a [64][128] float array in shared memory (32 KB per
block), so the run-time index selects a row and every access of a warp hits 32 different banks.
No local memory is used; the kernel streams its 256 MB of input. The 32 KB per block allows 7
blocks per SM, fewer warps than before, but each update is now a shared-memory access instead of
a trip to L1/L2.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define BINS 64
#define THREADS 128

__global__ void __launch_bounds__(THREADS) smem_hist_kernel(const int* __restrict__ keys, const float* __restrict__ vals,
                                                     float* __restrict__ out, int n) {
    __shared__ float h[BINS][THREADS];  // one column per thread: thread t always hits bank t % 32
    int t = blockIdx.x * THREADS + threadIdx.x, total = gridDim.x * THREADS;
    #pragma unroll
    for (int b = 0; b < BINS; ++b) h[b][threadIdx.x] = 0.f;
    for (int i = t; i < n; i += total) h[keys[i] & (BINS - 1)][threadIdx.x] += vals[i];  // shared memory, no conflict, no barrier needed
    #pragma unroll
    for (int b = 0; b < BINS; ++b) out[(size_t)b * total + t] = h[b][threadIdx.x];   // coalesced
}

torch::Tensor hist(torch::Tensor keys, torch::Tensor vals, int64_t blocks) {
    auto out = torch::empty({BINS, blocks * THREADS}, vals.options());
    smem_hist_kernel<<<blocks, THREADS>>>(keys.data_ptr<int>(), vals.data_ptr<float>(), out.data_ptr<float>(), keys.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_local_hist_smem_cuda", cpp_sources="torch::Tensor hist(torch::Tensor keys, torch::Tensor vals, int64_t blocks);",
                     cuda_sources=CUDA_SRC, functions=["hist"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**25           # 128 MB of keys, 128 MB of values
BLOCKS = 132 * 16   # 270,336 threads, ~124 elements each
BINS = 64


def make_inputs():
    torch.manual_seed(0)
    keys = torch.randint(0, 2**30, (N,), device="cuda", dtype=torch.int32)
    vals = torch.randn(N, device="cuda")
    return keys, vals


def run(keys, vals):
    return module.hist(keys, vals, BLOCKS)


def reference(keys, vals):
    total = BLOCKS * 128
    i = torch.arange(N, device=keys.device)
    slot = (keys.long() & (BINS - 1)) * total + i % total  # thread i % total, bin keys & 63
    out = torch.zeros(BINS * total, device=keys.device, dtype=torch.float64)
    out.index_add_(0, slot, vals.double())
    return out.view(BINS, total).float()
