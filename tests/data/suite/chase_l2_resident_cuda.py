"""Planted bottleneck: latency bound, dependent loads that hit in L2 (one chain per warp).

Each warp walks its own linked list of 32-byte nodes through a 16 MB table, which the 50 MB L2
holds after the first touches: no DRAM round trips, but every step still waits an L2 round trip
(hundreds of cycles) because the next node's address is in the current node. 64 warps per SM
have one 32-byte load each in flight, far too little to keep L2 busy; both throughputs stay low
and warps wait on the long scoreboard. More independent chains per warp is the fix.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

// nodes[i * 8 + 0] = next node, nodes[i * 8 + 1..7] = payload
__global__ void chase_l2_kernel(const int* __restrict__ nodes, int* __restrict__ out, int steps) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int node = t / 32;
    int sum = 0;
    for (int s = 0; s < steps; ++s) {
        int v = nodes[node * 8 + (lane & 7)];
        sum += v & 0xffff;
        node = __shfl_sync(0xffffffff, v, 0);
    }
    out[t] = sum;
}

torch::Tensor chase(torch::Tensor nodes, int64_t warps, int64_t steps) {
    auto out = torch::empty({warps * 32}, nodes.options());
    chase_l2_kernel<<<warps * 32 / 128, 128>>>(nodes.data_ptr<int>(), out.data_ptr<int>(), steps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_chase_l2_resident_cuda", cpp_sources="torch::Tensor chase(torch::Tensor nodes, int64_t warps, int64_t steps);",
                     cuda_sources=CUDA_SRC, functions=["chase"], extra_cuda_cflags=["-O3", "-lineinfo"])

NODES = 2**19          # 512K nodes x 32 B = 16 MB: fits in L2
WARPS = 132 * 64 * 2   # two full waves of 4-warp blocks
STEPS = 512


def make_inputs():
    torch.manual_seed(0)
    nodes = torch.randint(0, 2**16, (NODES, 8), device="cuda", dtype=torch.int32)
    nodes[:, 0] = torch.randperm(NODES, device="cuda", dtype=torch.int32)
    return (nodes,)


def run(nodes):
    return module.chase(nodes, WARPS, STEPS)


def reference(nodes):
    node = torch.arange(WARPS, device=nodes.device)
    slot = torch.arange(32, device=nodes.device) % 8
    total = torch.zeros(WARPS, 32, dtype=torch.long, device=nodes.device)
    for _ in range(STEPS):
        v = nodes[node].long()
        total += v[:, slot] & 0xFFFF
        node = v[:, 0]
    return total.reshape(-1).int()
