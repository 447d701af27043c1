"""Planted bottleneck: atomic contention (a hash-table group-by count on skewed keys: hot keys, hot slots).

Counts the occurrences of 4M int32 keys with an open-addressing hash table (65,536 slots, murmur3
finalizer, linear probing): a thread per key probes from its key's slot, claims an empty slot with
atomicCAS or finds its key there, then atomicAdd(count[slot], 1). The keys are skewed as group-by
keys often are: 90% of them are one of 4 hot keys, the rest uniform over 30,000 values. So ~3.8M
of the 4M count updates go to 4 addresses (~940K each; each of the 131K warps' atomic requests
carries ~7 lanes for each hot slot): the L2 slice owning a hot slot applies them one after
another, while the SMs and DRAM (16 MB of keys) idle: expected ~1-3 ms for ~6 us of DRAM work. Combining duplicates before the atomic (a warp match/ballot on equal
keys, or per-block shared-memory tables flushed once) fixes it.
The slot a key lands in depends on insertion order, so run() returns the (key, count) pairs
sorted by key, a few small torch operations after the kernel.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define EMPTY (-1)

__device__ __forceinline__ unsigned fmix32(unsigned h) {   // murmur3 finalizer
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return h;
}

__global__ void hash_groupby_count(const int* __restrict__ keys, int* table_keys, int* table_counts, int n, unsigned mask) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = keys[i];
    unsigned s = fmix32((unsigned)k) & mask;
    while (true) {                                   // linear probing
        int cur = __ldcg(&table_keys[s]);
        if (cur == k) break;
        if (cur == EMPTY) {
            int prev = atomicCAS(&table_keys[s], EMPTY, k);
            if (prev == EMPTY || prev == k) break;
        }
        s = (s + 1) & mask;
    }
    atomicAdd(&table_counts[s], 1);                  // hot keys: every lane of a warp on one address
}

std::vector<torch::Tensor> groupby_count(torch::Tensor keys, int64_t slots) {   // slots: a power of two
    int n = keys.numel();
    auto table_keys = torch::full({slots}, EMPTY, keys.options());
    auto table_counts = torch::zeros({slots}, keys.options());
    hash_groupby_count<<<(n + 255) / 256, 256>>>(keys.data_ptr<int>(), table_keys.data_ptr<int>(),
                                                 table_counts.data_ptr<int>(), n, (unsigned)(slots - 1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {table_keys, table_counts};
}
"""

module = load_inline(
    "kls_hash_groupby_hotkeys_int32_cuda",
    cpp_sources="std::vector<torch::Tensor> groupby_count(torch::Tensor keys, int64_t slots);",
    cuda_sources=CUDA_SRC,
    functions=["groupby_count"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

N, SLOTS = 2**22, 2**16  # 4M keys (16 MB), 65,536 slots
HOT, HOT_SHARE, COLD = 4, 0.9, 30000


def make_inputs():
    torch.manual_seed(0)
    cold = torch.randint(HOT, HOT + COLD, (N,), device="cuda", dtype=torch.int32)
    hot = torch.randint(0, HOT, (N,), device="cuda", dtype=torch.int32) * 7919 + 1_000_000  # 4 hot key values
    keys = torch.where(torch.rand(N, device="cuda") < HOT_SHARE, hot, cold)
    return (keys,)


def run(keys):
    table_keys, table_counts = module.groupby_count(keys, SLOTS)
    used = table_keys != -1
    k, c = table_keys[used], table_counts[used]
    order = torch.argsort(k)
    return torch.stack([k[order], c[order]])


def reference(keys):
    k, c = torch.unique(keys, sorted=True, return_counts=True)
    return torch.stack([k.int(), c.int()])
