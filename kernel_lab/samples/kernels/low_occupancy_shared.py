"""Planted bottleneck: low occupancy, limited by shared memory.

Each block copies a 100 KB lookup table into shared memory. An SM has 228 KB of
shared memory, so only two such blocks (8 warps of the 64 an SM can hold) fit
at a time. The threads then walk a random permutation (dependent DRAM loads)
and look each node up in the table; hiding DRAM latency needs many warps,
and the shared-memory footprint allows only a few. A smaller table per block
(or sharing it across a cluster, or reading it through L1/L2) lets more blocks
run per SM.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define LUT 25600   // 25600 floats = 100 KB of shared memory per block

__global__ void chase_big_smem(const int* __restrict__ next, const float* __restrict__ table,
                               float* __restrict__ out, int steps) {
    extern __shared__ float lut[];
    for (int k = threadIdx.x; k < LUT; k += blockDim.x) lut[k] = table[k];
    __syncthreads();
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int node = t / 32;  // one list per warp
    float acc = 0.f;
    for (int s = 0; s < steps; ++s) {
        node = next[node];                  // dependent load
        acc += lut[(node + lane) % LUT];    // consecutive lanes, consecutive banks
    }
    out[t] = acc;
}

torch::Tensor chase(torch::Tensor next, torch::Tensor table, int64_t warps, int64_t steps) {
    auto out = torch::empty({warps * 32}, table.options());
    int smem = LUT * sizeof(float);  // over 48 KB: the kernel must opt in
    C10_CUDA_CHECK(cudaFuncSetAttribute(chase_big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    chase_big_smem<<<warps * 32 / 128, 128, smem>>>(next.data_ptr<int>(), table.data_ptr<float>(),
                                                     out.data_ptr<float>(), steps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_low_occ_smem",
                     cpp_sources="torch::Tensor chase(torch::Tensor next, torch::Tensor table, int64_t warps, int64_t steps);",
                     cuda_sources=CUDA_SRC, functions=["chase"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])

LUT = 25600
WARPS = 132 * 8 * 4  # 1056 blocks of 4 warps
STEPS = 256


def make_inputs():
    torch.manual_seed(0)
    next_ = torch.randperm(2**24, device="cuda", dtype=torch.int32)  # 64 MB, larger than L2
    table = torch.randint(0, 1024, (LUT,), device="cuda").float()
    return next_, table


def run(next_, table):
    return module.chase(next_, table, WARPS, STEPS)


def reference(next_, table):
    nxt = next_.long()
    node = torch.arange(WARPS, device=next_.device)
    lane = torch.arange(32, device=next_.device)
    total = torch.zeros(WARPS, 32, device=next_.device)
    for _ in range(STEPS):
        node = nxt[node]
        total += table[(node[:, None] + lane) % LUT]  # small integers: float sums are exact
    return total.reshape(-1)
