"""Planted bottleneck: low occupancy, limited by registers.

Each thread keeps 128 running sums in registers (acc[LIVE], fully unrolled), so
the compiler gives it well over 128 of the 255 possible registers. An SM has
65,536 registers, enough for only a few 128-thread blocks of such threads:
a small fraction of the 64 warps an SM can hold. The work itself is a walk
through a random permutation (dependent DRAM loads, one per step), which needs
many warps in flight to hide DRAM latency (hundreds of ns per step); with so
few warps resident the SMs wait most of the time. Fewer live values per thread
(fewer registers) means more warps per SM and more loads in flight.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define LIVE 128   // running sums each thread keeps in registers

__global__ void __launch_bounds__(128) chase_heavy_regs(const int* __restrict__ next, float* __restrict__ out,
                                                         int rounds) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int node = t / 32;  // one list per warp
    float acc[LIVE];
    #pragma unroll
    for (int k = 0; k < LIVE; ++k) acc[k] = 0.f;
    for (int r = 0; r < rounds; ++r) {
        #pragma unroll
        for (int k = 0; k < LIVE; ++k) {
            node = next[node];                     // dependent load
            acc[k] += (float)((node ^ lane) & 1023);
        }
    }
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < LIVE; ++k) s += acc[k];  // every sum stays live until here
    out[t] = s;
}

torch::Tensor chase(torch::Tensor next, int64_t warps, int64_t rounds) {
    auto out = torch::empty({warps * 32}, next.options().dtype(torch::kFloat32));
    chase_heavy_regs<<<warps * 32 / 128, 128>>>(next.data_ptr<int>(), out.data_ptr<float>(), rounds);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_low_occ_regs", cpp_sources="torch::Tensor chase(torch::Tensor next, int64_t warps, int64_t rounds);",
                     cuda_sources=CUDA_SRC, functions=["chase"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])

WARPS = 132 * 12 * 4  # 1584 blocks of 4 warps
ROUNDS = 2            # 2 x 128 = 256 dependent loads per thread


def make_inputs():
    torch.manual_seed(0)
    next_ = torch.randperm(2**24, device="cuda", dtype=torch.int32)  # 64 MB, larger than L2
    return (next_,)


def run(next_):
    return module.chase(next_, WARPS, ROUNDS)


def reference(next_):
    nxt = next_.long()
    node = torch.arange(WARPS, device=next_.device)
    lane = torch.arange(32, device=next_.device)
    total = torch.zeros(WARPS, 32, device=next_.device)
    for _ in range(ROUNDS * 128):
        node = nxt[node]
        total += ((node[:, None] ^ lane) & 1023).float()  # small integers: float sums are exact
    return total.reshape(-1)
