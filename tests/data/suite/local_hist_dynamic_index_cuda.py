"""Planted bottleneck: local-memory traffic from a per-thread array indexed at run time (no spill instruction).

Each thread builds a private 64-bin weighted histogram of its share of 32M (key, value) pairs in
`float buf[64]`, updated as buf[key & 63] += value. Registers cannot be indexed at run time, so
the compiler places the array in local memory: every update is a local load and a local store,
256 B per thread, 512 KB per SM at full occupancy, more than L1 holds, so the traffic spills into
L2. Nothing here is a register spill in the compiler's sense (Nsight Compute's spill counter
stays at zero); the cost is the same kind: per-thread memory traffic the algorithm does not
need. The fix keeps the bins on chip (local_hist_smem_cuda.py: one column of shared memory per
thread).
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define BINS 64
#define THREADS 128

__global__ void __launch_bounds__(THREADS) local_hist_kernel(const int* __restrict__ keys, const float* __restrict__ vals,
                                                     float* __restrict__ out, int n) {
    float buf[BINS];  // indexed with a run-time value below: lives in local memory
    int t = blockIdx.x * THREADS + threadIdx.x, total = gridDim.x * THREADS;
    #pragma unroll
    for (int b = 0; b < BINS; ++b) buf[b] = 0.f;
    for (int i = t; i < n; i += total) buf[keys[i] & (BINS - 1)] += vals[i];  // run-time index: local-memory load and store
    #pragma unroll
    for (int b = 0; b < BINS; ++b) out[(size_t)b * total + t] = buf[b];   // coalesced
}

torch::Tensor hist(torch::Tensor keys, torch::Tensor vals, int64_t blocks) {
    auto out = torch::empty({BINS, blocks * THREADS}, vals.options());
    local_hist_kernel<<<blocks, THREADS>>>(keys.data_ptr<int>(), vals.data_ptr<float>(), out.data_ptr<float>(), keys.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_local_hist_dynamic_index_cuda", cpp_sources="torch::Tensor hist(torch::Tensor keys, torch::Tensor vals, int64_t blocks);",
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
