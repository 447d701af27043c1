"""Planted bottleneck: register spills / local memory (a move-to-front decoder whose 256-byte symbol list is indexed at run time).

Inverse move-to-front transform (the stage after the Burrows-Wheeler transform in bzip2-style
compressors) over 524,288 independent streams of 32 ranks each (uint8, laid out [position, stream] so
that a warp's loads and stores are coalesced). Each thread keeps its own alphabet list `unsigned char
list[256]`, initialised to 0..255; per rank r it reads s = list[r], shifts list[0..r-1] up by one and
puts s in front. The list is indexed with data-dependent positions, so it cannot live in registers: nvcc
13 (sm_90) puts it on the stack (256-byte frame, 30 registers, 0 spill bytes) and unrolls the shift into
a chain of LDL.U8 / STL.U8 / compare / branch, entered per lane, with the lanes of a warp at different
positions of their own lists (different 4-byte words, 3-8 cache lines per request). Ranks here are
16..31 (mean 23.5): ~49 local requests per symbol and thread, ~64 per symbol and warp (the longest
lane's chain); 16.8M symbols = ~34M warp-level local requests, mostly L1 hits (the hot 32 bytes of 2,048
lists are 64 KB per SM) with the 128 MB of list initialisation written through to L2. ~0.4-0.8 ms,
against ~11 us for the 34 MB of ranks and symbols at 3.05 TB/s. Loop lengths differ by lane (16..31
iterations, ~76% of lanes active) - a small ThreadDivergence lure. The hypothesis: local load/store
requests dominating (spill counters 0: an array indexed at run time, not a spill), L1 the busiest unit.
Keeping the list in registers across a warp (lane k holds entries 8k..8k+7, a ballot finds the symbol)
is the fix.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

__global__ void __launch_bounds__(256) mtf_decode_local(const uint8_t* __restrict__ ranks, uint8_t* __restrict__ out,
                                                        int streams, int len) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;   // one stream per thread
    if (t >= streams) return;
    unsigned char list[256];
    for (int j = 0; j < 256; ++j) list[j] = (unsigned char)j;
    for (int i = 0; i < len; ++i) {
        int r = ranks[(size_t)i * streams + t];
        unsigned char s = list[r];
        for (int j = r; j > 0; --j) list[j] = list[j - 1];   // move to front
        list[0] = s;
        out[(size_t)i * streams + t] = s;
    }
}

torch::Tensor mtf_decode(torch::Tensor ranks) {
    int len = ranks.size(0), streams = ranks.size(1);   // ranks: [len, streams] uint8
    auto out = torch::empty_like(ranks);
    mtf_decode_local<<<(streams + 255) / 256, 256>>>(ranks.data_ptr<uint8_t>(), out.data_ptr<uint8_t>(), streams, len);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_mtf_decode_local_uint8_cuda",
    cpp_sources="torch::Tensor mtf_decode(torch::Tensor ranks);",
    cuda_sources=CUDA_SRC,
    functions=["mtf_decode"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

STREAMS = 1 << 19
LEN = 32
RANK_LO, RANK_HI = 16, 32  # ranks drawn from [RANK_LO, RANK_HI)


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    ranks = torch.randint(RANK_LO, RANK_HI, (LEN, STREAMS), device="cuda", generator=g, dtype=torch.uint8)
    return (ranks,)


def run(ranks):
    return module.mtf_decode(ranks)


def reference(ranks):
    length, streams = ranks.shape
    lst = torch.arange(256, device=ranks.device, dtype=torch.uint8)[None, :].repeat(streams, 1)  # [streams, 256]
    pos = torch.arange(256, device=ranks.device)[None, :]
    out = torch.empty_like(ranks)
    for i in range(length):
        r = ranks[i].long()[:, None]
        s = lst.gather(1, r)  # [streams, 1]
        shifted = torch.cat([s, lst[:, :-1]], dim=1)  # candidate: everything moved up by one
        lst = torch.where(pos <= r, shifted, lst)  # positions 0..r take the shifted values (0 gets s)
        out[i] = s[:, 0]
    return out
