"""Planted bottleneck: atomic contention (a PageRank-style push step whose edges mostly point at 8 hub vertices).

One push step of PageRank-style propagation, y[dst] += contrib[src] over every edge, on a graph of
1,048,576 vertices and 16,777,216 edges stored as a COO edge list sorted by source (int32 src and
dst, fp32 contributions per vertex). The graph is star-heavy, as web graphs with a few portal pages
are: 3 of 4 edges point at one of 8 hub vertices, the rest at uniformly random vertices. One thread
per edge issues one fp32 atomicAdd (RED) into y. Streaming the edge list is 134 MB (~44 us at
3.05 TB/s; the contributions are gathered nearly in order, y is 4 MB and stays in L2), but the
~12.6M hub updates land on 8 addresses, ~1.57M each, and L2 serializes updates to one address
(the suite's hash_groupby_hotkeys cell measured ~1.3G updates/s per hot address): ~1.2 ms, ~25x
the streaming time, with SM and DRAM nearly idle. The fix is to combine the hub updates before
they reach L2 (warp/block-level pre-aggregation of equal destinations, per-block partial sums for
the hubs, or a pull formulation over in-edges). Contributions are multiples of 1/16 (1/16..15/16),
so every partial sum is exact in fp32 and the result does not depend on the order of the atomics.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void pagerank_push_edges(const int* __restrict__ src, const int* __restrict__ dst,
                                    const float* __restrict__ contrib, float* __restrict__ y, int edges) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < edges) atomicAdd(y + dst[e], contrib[src[e]]);   // 3 of 4 land on one of 8 hub addresses
}

torch::Tensor push(torch::Tensor src, torch::Tensor dst, torch::Tensor contrib) {
    int edges = src.numel();
    auto y = torch::zeros_like(contrib);
    pagerank_push_edges<<<(edges + 255) / 256, 256>>>(src.data_ptr<int>(), dst.data_ptr<int>(),
                                                      contrib.data_ptr<float>(), y.data_ptr<float>(), edges);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline(
    "kls_pagerank_push_hubs_fp32_cuda",
    cpp_sources="torch::Tensor push(torch::Tensor src, torch::Tensor dst, torch::Tensor contrib);",
    cuda_sources=CUDA_SRC,
    functions=["push"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

VERTICES, EDGES = 2**20, 2**24
HUBS = 8
HUB_FRACTION = 0.75  # share of edges pointing at a hub


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    src = torch.randint(0, VERTICES, (EDGES,), device="cuda", generator=g).sort().values.int()
    hubs = torch.randint(0, VERTICES, (HUBS,), device="cuda", generator=g)
    to_hub = torch.rand(EDGES, device="cuda", generator=g) < HUB_FRACTION
    dst = torch.where(to_hub, hubs[torch.randint(0, HUBS, (EDGES,), device="cuda", generator=g)],
                      torch.randint(0, VERTICES, (EDGES,), device="cuda", generator=g)).int()
    contrib = torch.randint(1, 16, (VERTICES,), device="cuda", generator=g).float() / 16.0  # exact sums in fp32
    return src, dst, contrib


def run(src, dst, contrib):
    return module.push(src, dst, contrib)


def reference(src, dst, contrib):
    y = torch.zeros(contrib.numel(), device=contrib.device, dtype=torch.float64)
    y.index_add_(0, dst.long(), contrib.double()[src.long()])
    return y.float()
