"""Planted bottleneck: memory latency (dependent loads, little work in flight).

Each warp walks its own linked list of 32-byte nodes, scattered at random over
128 MB (more than the 50 MB L2). The address of the next node is stored in the
current one, so a warp can have only one load in flight: every step waits a
full DRAM round trip before the next load can even be issued, and moves just
one 32-byte sector. The grid fills the GPU, yet the SMs are mostly idle and the
memory system is far from busy: both throughputs are low, and warps sit in
"long scoreboard" stalls. Help comes from more independent chains per warp (more
loads in flight) or a data layout that needs fewer dependent steps.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

// nodes[i * 8 + 0] = index of the node after node i; nodes[i * 8 + 1..7] = payload
__global__ void pointer_chase(const int* __restrict__ nodes, int* __restrict__ out, int steps) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int node = t / 32;  // one list per warp, starting at the warp's index
    int sum = 0;
    for (int s = 0; s < steps; ++s) {
        int v = nodes[node * 8 + (lane & 7)];  // the warp reads one 32-byte node
        sum += v & 0xffff;
        node = __shfl_sync(0xffffffff, v, 0);  // lane 0 holds the link: the next address depends on this load
    }
    out[t] = sum;
}

torch::Tensor chase(torch::Tensor nodes, int64_t warps, int64_t steps) {
    auto out = torch::empty({warps * 32}, nodes.options());
    pointer_chase<<<warps * 32 / 256, 256>>>(nodes.data_ptr<int>(), out.data_ptr<int>(), steps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_latency_bound", cpp_sources="torch::Tensor chase(torch::Tensor nodes, int64_t warps, int64_t steps);",
                     cuda_sources=CUDA_SRC, functions=["chase"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])

NODES = 2**22         # 4M nodes of 32 bytes = 128 MB
WARPS = 132 * 64 * 2  # two full waves: 64 warps on each of the 132 SMs, twice
STEPS = 256


def make_inputs():
    torch.manual_seed(0)
    nodes = torch.randint(0, 2**16, (NODES, 8), device="cuda", dtype=torch.int32)
    nodes[:, 0] = torch.randperm(NODES, device="cuda", dtype=torch.int32)  # a random permutation: the links
    return (nodes,)


def run(nodes):
    return module.chase(nodes, WARPS, STEPS)


def reference(nodes):
    node = torch.arange(WARPS, device=nodes.device)
    slot = torch.arange(32, device=nodes.device) % 8  # the int of the node each lane reads
    total = torch.zeros(WARPS, 32, dtype=torch.long, device=nodes.device)
    for _ in range(STEPS):
        v = nodes[node].long()  # [WARPS, 8]
        total += v[:, slot] & 0xFFFF
        node = v[:, 0]
    return total.reshape(-1).int()
