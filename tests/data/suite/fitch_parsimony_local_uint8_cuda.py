"""Planted bottleneck: register spills (local memory: a per-thread state-set array indexed by the tree's run-time child ids).

Fitch small-parsimony scores of every alignment column on a fixed tree (the inner loop of a parsimony
tree search, or site filtering before a likelihood run): 128 taxa, 2,097,152 sites, nucleotides as
4-bit state sets (A=1, C=2, G=4, T=8, N / gap = 15), alignment uint8 [taxon, site] (268 MB); the tree is
a post-order list of its 127 internal nodes with their two children's node ids (int32, run-time data).
One thread per site: it copies its 128 leaf sets into uint8_t set[256], then for each internal node
reads set[left[n]] and set[right[n]], writes the intersection (or the union, counting a change) to
set[128 + n]; out int32 [site] (the site's parsimony score). The array is indexed by loaded node ids,
so it lives in local memory: 256 B of stack per thread; the 128 leaf bytes go in as 32 word stores,
then every internal node costs two one-byte local loads and a one-byte local store (~413 local
accesses per site; every warp access is one 128-byte line of the interleaved local space); 2,048
threads x 256 B = 512 KB of local data per SM, more than L1, so much of it goes to L2 and back.
8,192 blocks of 256 (full occupancy at 32 registers: ~3.9 waves).
The hypothesis: register_spills: ptxas 256-byte stack frame, local load / store requests dominating
the memory instructions, L1 hit rate ~40-70% for local loads, L2 traffic ~1.5-3 GB against 268 MB of
alignment, long-scoreboard stalls, ~0.5-1.5 ms. The fix: keep the sets in registers (a fixed, unrolled
tree shape per compiled kernel) or pack 8 sites per thread as 4-bit fields in 32-bit words and walk the
tree with shared-memory node buffers laid out [node][thread].
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <stdint.h>

#define MAX_NODES 256

__global__ void __launch_bounds__(256) fitch_parsimony(const uint8_t* __restrict__ aln, const int* __restrict__ left,
                                                       const int* __restrict__ right, int* __restrict__ score_out,
                                                       int taxa, int sites) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= sites) return;
    uint8_t set[MAX_NODES];
    for (int t = 0; t < taxa; ++t) set[t] = aln[(size_t)t * sites + s];
    int score = 0;
    for (int n = 0; n < taxa - 1; ++n) {
        uint8_t a = set[left[n]], b = set[right[n]];
        uint8_t i = a & b;
        score += (i == 0);
        set[taxa + n] = i ? i : (uint8_t)(a | b);
    }
    score_out[s] = score;
}

torch::Tensor fitch_scores(torch::Tensor aln, torch::Tensor left, torch::Tensor right) {
    TORCH_CHECK(aln.is_cuda() && aln.scalar_type() == torch::kByte && aln.is_contiguous() && aln.dim() == 2);
    TORCH_CHECK(left.scalar_type() == torch::kInt && right.scalar_type() == torch::kInt);
    int taxa = aln.size(0), sites = aln.size(1);
    TORCH_CHECK(2 * taxa - 1 <= MAX_NODES && left.numel() == taxa - 1 && right.numel() == taxa - 1);
    auto out = torch::empty({sites}, aln.options().dtype(torch::kInt));
    fitch_parsimony<<<(sites + 255) / 256, 256>>>(aln.data_ptr<uint8_t>(), left.data_ptr<int>(), right.data_ptr<int>(),
                                                  out.data_ptr<int>(), taxa, sites);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_fitch_parsimony_local_uint8_cuda",
    cpp_sources="torch::Tensor fitch_scores(torch::Tensor aln, torch::Tensor left, torch::Tensor right);",
    cuda_sources=CUDA_SRC,
    functions=["fitch_scores"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

TAXA = 128
SITES = 2097152


def _random_tree(taxa, g, device):
    """Post-order internal nodes of a random binary tree (random pairwise merges, like a random-addition start)."""
    u = torch.rand(2 * (taxa - 1), device=device, generator=g).tolist()
    active = list(range(taxa))
    left, right = [], []
    for n in range(taxa - 1):
        i = active.pop(int(u[2 * n] * len(active)))
        j = active.pop(int(u[2 * n + 1] * len(active)))
        left.append(i)
        right.append(j)
        active.append(taxa + n)
    return (torch.tensor(left, dtype=torch.int32, device=device),
            torch.tensor(right, dtype=torch.int32, device=device))


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    dev = "cuda"
    left, right = _random_tree(TAXA, g, dev)
    consensus = torch.randint(0, 4, (1, SITES), device=dev, generator=g)
    rate = torch.rand(1, SITES, device=dev, generator=g) ** 3 * 0.6                # per-site variability
    mutate = torch.rand(TAXA, SITES, device=dev, generator=g) < rate
    other = torch.randint(0, 4, (TAXA, SITES), device=dev, generator=g)
    base = torch.where(mutate, other, consensus)
    sets = (1 << base).to(torch.uint8)
    ambiguous = torch.rand(TAXA, SITES, device=dev, generator=g) < 0.01
    sets = torch.where(ambiguous, torch.full_like(sets, 15), sets)
    return sets.contiguous(), left, right


def run(aln, left, right):
    return module.fitch_scores(aln, left, right)


def reference(aln, left, right):
    taxa, sites = aln.shape
    sets = torch.empty(2 * taxa - 1, sites, device=aln.device, dtype=torch.uint8)
    sets[:taxa] = aln
    score = torch.zeros(sites, device=aln.device, dtype=torch.int32)
    for n, (i, j) in enumerate(zip(left.tolist(), right.tolist())):
        a, b = sets[i], sets[j]
        inter = a & b
        empty = inter == 0
        score += empty.int()
        sets[taxa + n] = torch.where(empty, a | b, inter)
    return score
