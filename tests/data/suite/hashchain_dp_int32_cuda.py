"""Planted bottleneck: warp divergence (hash chains to a distinguished point: each lane stops after its own count).

Distinguished-point hash chains (as in rainbow tables or parallel collision search): from each of
1M 32-bit start values, iterate x <- fmix32(x + golden) (the murmur3 finalizer) until the low 8 bits
of x are zero (probability 1/256 per step) or 4,096 steps, and output the end point and the chain
length. A thread per chain runs a do-while loop whose trip count is geometric with mean 256; a warp
runs until its longest lane is done, ~256 x H_32 = ~1,040 steps, so on average only ~8 of its 32
lanes do useful work per instruction. ~11 integer instructions per step (two IMADs, shifts, XORs,
the test): ~0.4 ms of issue, ~4x the work the chains need, with no memory traffic to speak of (8 MB
in and out). Keeping lanes busy (each lane taking a new chain when its own ends, a persistent work
queue, or compacting live chains between rounds of steps) fixes it.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define DP_MASK 0xFFu     // distinguished point: low 8 bits zero
#define MAXLEN 4096

__device__ __forceinline__ unsigned chain_step(unsigned x) {
    x += 0x9e3779b9u;
    x ^= x >> 16; x *= 0x85ebca6bu; x ^= x >> 13; x *= 0xc2b2ae35u; x ^= x >> 16;
    return x;
}

__global__ void hashchain_dp(const int* __restrict__ starts, int* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = (unsigned)starts[i];
    int len = 0;
    do {                                                  // lanes leave after different numbers of steps
        x = chain_step(x);
        ++len;
    } while ((x & DP_MASK) != 0u && len < MAXLEN);
    out[i] = (int)x;                                      // end point
    out[n + i] = len;                                     // chain length
}

torch::Tensor chains(torch::Tensor starts) {
    int n = starts.numel();
    auto out = torch::empty({2, n}, starts.options());
    hashchain_dp<<<(n + 255) / 256, 256>>>(starts.data_ptr<int>(), out.data_ptr<int>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_hashchain_dp_int32_cuda",
    cpp_sources="torch::Tensor chains(torch::Tensor starts);",
    cuda_sources=CUDA_SRC,
    functions=["chains"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

N = 2**20  # chains
MAXLEN = 4096
M32 = 0xFFFFFFFF


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(-(2**31), 2**31 - 1, (N,), device="cuda", dtype=torch.int32),)


def run(starts):
    return module.chains(starts)


def _mul32(a, x):  # (a * x) mod 2^32 for a constant a < 2^32 and int64 x in [0, 2^32), without int64 overflow
    return ((((a * (x >> 16)) & 0xFFFF) << 16) + a * (x & 0xFFFF)) & M32


def _step(x):  # chain_step on int64 holding uint32 values
    x = (x + 0x9E3779B9) & M32
    x = x ^ (x >> 16)
    x = _mul32(0x85EBCA6B, x)
    x = x ^ (x >> 13)
    x = _mul32(0xC2B2AE35, x)
    return x ^ (x >> 16)


def reference(starts):
    n = starts.numel()
    cur = starts.long() & M32
    idx = torch.arange(n, device=starts.device)
    end = torch.empty(n, dtype=torch.int64, device=starts.device)
    length = torch.empty(n, dtype=torch.int64, device=starts.device)
    for step in range(1, MAXLEN + 1):  # all chains in lockstep, finished ones removed
        cur = _step(cur)
        done = ((cur & 0xFF) == 0) | (step == MAXLEN)
        end[idx[done]] = cur[done]
        length[idx[done]] = step
        cur, idx = cur[~done], idx[~done]
        if idx.numel() == 0:
            break
    end = torch.where(end >= 2**31, end - 2**32, end)  # uint32 bits as int32
    return torch.stack([end, length]).int()
