"""Planted bottleneck: local-memory traffic from a per-thread array indexed at run time (64 x 64 bit-matrix transposes).

Bit-slicing 262,144 groups of 64 words: each group's 64 x 64 bit matrix is transposed, so that
output word i of a group holds bit i of its 64 input words (bit q of it = bit i of word q), as
bit-sliced codecs and bit-plane coders need. The words are stored group-interleaved (word k of
group m at x[k * groups + m]), so that one thread per group loads and stores coalesced: 134 MB in,
134 MB out. Each thread keeps its 64 words in unsigned long long a[64] and runs the classic
in-place recursive transpose (Hacker's Delight transpose32, widened to 64: 6 rounds j = 32, 16,
..., 1 of 32 masked swaps of a[k] and a[k + j]), with the round loop kept rolled (#pragma unroll 1)
as a compact loop would be: k and k + j are run-time values, so a[] cannot live in registers and
ptxas puts it in a 512-byte stack frame in local memory. Per group: 64 local stores to fill it,
192 x (3 loads + 2 stores) in the rounds (a[k + j] is read again after the store to a[k]), 64
loads to write it out: ~1,100 local accesses (~8.7 KB) for 1 KB of global traffic, 8.5x. At 2,048
resident threads (32 registers) that is 1 MB of stack per SM, four times what L1 holds, and 134 MB
for the whole grid, more than the 50 MB L2: the local traffic (~2.3 GB) goes to L2 and partly on
to DRAM. Expected: local loads/stores a third of the instructions, L1 hit rate of local accesses
low, L2/DRAM traffic several times the 268 MB the transpose needs (~88 us at 3.05 TB/s), ~0.5-1 ms.
The fix is to unroll the rounds (every index a constant; with 64 words in 128 registers, or better
a warp-cooperative transpose: __ballot_sync / shuffles over 32 lanes holding one word each).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

typedef unsigned long long u64;

__global__ void __launch_bounds__(256, 8) bitplane_transpose64_local(const u64* __restrict__ x, u64* __restrict__ y,
                                                                     int groups) {
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= groups) return;
    u64 a[64];   // indexed at run time below: local memory
    #pragma unroll
    for (int k = 0; k < 64; ++k) a[k] = x[(size_t)(63 - k) * groups + m];   // row 0 = word 63 (MSB-first convention)
    u64 mask = 0x00000000FFFFFFFFull;
    #pragma unroll 1
    for (int j = 32; j != 0; j >>= 1, mask ^= (mask << j)) {
        for (int k = 0; k < 64; k = (k + j + 1) & ~j) {
            u64 t = (a[k] ^ (a[k + j] >> j)) & mask;
            a[k] ^= t;
            a[k + j] ^= t << j;
        }
    }
    #pragma unroll
    for (int i = 0; i < 64; ++i) y[(size_t)(63 - i) * groups + m] = a[i];
}

torch::Tensor transpose_bits(torch::Tensor x) {
    int groups = x.size(1);   // x: [64, groups] int64 (bit patterns), contiguous
    TORCH_CHECK(x.size(0) == 64);
    auto y = torch::empty_like(x);
    bitplane_transpose64_local<<<(groups + 255) / 256, 256>>>(reinterpret_cast<const u64*>(x.data_ptr<int64_t>()),
                                                              reinterpret_cast<u64*>(y.data_ptr<int64_t>()), groups);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline(
    "kls_bitplane_transpose64_local_int64_cuda",
    cpp_sources="torch::Tensor transpose_bits(torch::Tensor x);",
    cuda_sources=CUDA_SRC,
    functions=["transpose_bits"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

GROUPS = 2**18  # 64-word groups (one 64 x 64 bit matrix each)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(-(2**63), 2**63 - 1, (64, GROUPS), device="cuda", dtype=torch.int64),)


def run(x):
    return module.transpose_bits(x)


def reference(x):
    q = torch.arange(64, device=x.device, dtype=torch.int64)[:, None]
    out = torch.empty_like(x)
    for i in range(64):  # output word i: bit q = bit i of word q (disjoint bits: the sum is their OR, bit 63 wraps)
        out[i] = (((x >> i) & 1) << q).sum(0)
    return out
