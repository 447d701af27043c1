"""Planted bottleneck: latency bound (a dependent chain of 32 one-byte loads per thread).

Transmission-tree reconstruction in a spatial agent-based epidemic model: 4,194,304 agents indexed
along a space-filling curve, 32 generations of infection; for generation g the simulator stored, per
agent, the offset (int8, -8..7) to its infector in generation g - 1 (transmission is local, so the
infector sits a few indices away): off [32, 4,194,304] int8 (134 MB). For every agent of the last
generation the kernel walks back to its index case (the seed of its cluster): cur = i; for g = 31..0:
cur = clamp(cur + off[g][cur], 0, N - 1); out = cur (int32). Each step's address depends on the
previous load, each load is one byte per lane (a warp touches one or two 32-byte sectors of a row
that is not in L2 yet), and there are 2 instructions of math between loads. 16,384 blocks of 256,
~16 registers: full occupancy, 15.5 waves.
The hypothesis: latency_bound: long-scoreboard stalls dominating, issue slots mostly idle, SM% and
MEM% both low (DRAM ~5-20%: 134 MB in ~0.4-0.8 ms), no other limiter. The fix: more independent
chains per thread (several agents per thread, interleaved) or restructure as 32 coalesced
generation-by-generation passes (pointer jumping).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void infector_backtrace(const int8_t* __restrict__ off, int* __restrict__ root, int n, int gens) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int cur = i;
    for (int g = gens - 1; g >= 0; --g) {
        int o = off[(size_t)g * n + cur];
        cur = min(max(cur + o, 0), n - 1);
    }
    root[i] = cur;
}

torch::Tensor backtrace(torch::Tensor off) {
    TORCH_CHECK(off.dim() == 2 && off.scalar_type() == torch::kChar && off.is_contiguous());
    int gens = off.size(0), n = off.size(1);
    auto root = torch::empty({n}, off.options().dtype(torch::kInt));
    infector_backtrace<<<(n + 255) / 256, 256>>>(off.data_ptr<int8_t>(), root.data_ptr<int>(), n, gens);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return root;
}
"""

module = load_inline(
    "kls_infector_backtrace_int8_cuda",
    cpp_sources="torch::Tensor backtrace(torch::Tensor off);",
    cuda_sources=CUDA_SRC,
    functions=["backtrace"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

AGENTS = 1 << 22
GENS = 32


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    off = torch.randint(-8, 8, (GENS, AGENTS), device="cuda", generator=g).to(torch.int8)
    return (off.contiguous(),)


def run(off):
    return module.backtrace(off)


def reference(off):
    n = off.shape[1]
    cur = torch.arange(n, device=off.device, dtype=torch.int64)
    for g in range(off.shape[0] - 1, -1, -1):
        cur = (cur + off[g].long()[cur]).clamp(0, n - 1)
    return cur.to(torch.int32)
