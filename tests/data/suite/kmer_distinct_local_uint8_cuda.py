"""Planted bottleneck: register spills / local memory (a per-thread 4-mer count table indexed by the sequence).

K-mer spectrum summary of 1,048,576 sequencing reads of 128 bases (2-bit codes 0..3 as uint8, laid out
[position, read] so that a warp's loads are coalesced: 134 MB): per read, the number of distinct 4-mers
and the count of the most frequent one. Each thread keeps `unsigned short cnt[256]` (512 bytes), zeroes
it, increments cnt[code] for each of the 125 rolling 4-mer codes and scans the 256 counters at the end.
The increments are indexed by the data, so the table cannot live in registers: nvcc puts it on the
stack (512-byte frame) and each increment is a local load + local store whose 32 lanes hit 32 different
words of their own tables (up to 32 sectors per request); 2,048 resident threads x 512 B = 1 MB of
tables per SM, 4x the L1, so the local traffic spills on to L2. ~125 x 2 data-dependent local requests
plus ~64 vector local requests per thread (the zeroing and the scan): ~10M warp-level local requests
per ~0.5-1.5 ms, against ~45 us for the 138 MB of DRAM the result needs. The hypothesis: local
load/store traffic dominating L1/L2 (ncu's spill counters may read 0: an array indexed at run time, not
a spill). The fix: a warp-cooperative table in shared memory (or a sort of the 125 codes in registers).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

__global__ void __launch_bounds__(256) kmer_distinct_local(const uint8_t* __restrict__ seq, int* __restrict__ out,
                                                           int reads, int len) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;   // one read per thread
    if (r >= reads) return;
    unsigned short cnt[256];
    for (int j = 0; j < 256; ++j) cnt[j] = 0;
    unsigned int code = 0;
    for (int p = 0; p < len; ++p) {
        code = ((code << 2) | seq[(size_t)p * reads + r]) & 255u;   // rolling 4-mer code
        if (p >= 3) cnt[code]++;
    }
    int distinct = 0, best = 0;
    for (int j = 0; j < 256; ++j) {
        distinct += cnt[j] != 0;
        best = max(best, (int)cnt[j]);
    }
    out[r] = distinct;
    out[reads + r] = best;
}

torch::Tensor kmer_distinct(torch::Tensor seq) {
    TORCH_CHECK(seq.dim() == 2 && seq.scalar_type() == torch::kByte && seq.is_contiguous());
    int len = seq.size(0), reads = seq.size(1);   // seq: [len, reads]
    auto out = torch::empty({2, reads}, seq.options().dtype(torch::kInt));
    kmer_distinct_local<<<(reads + 255) / 256, 256>>>(seq.data_ptr<uint8_t>(), out.data_ptr<int>(), reads, len);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_kmer_distinct_local_uint8_cuda",
    cpp_sources="torch::Tensor kmer_distinct(torch::Tensor seq);",
    cuda_sources=CUDA_SRC,
    functions=["kmer_distinct"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

READS = 1 << 20
LEN = 128
K = 4
CHUNK = 1 << 16  # reads per reference chunk (keeps the reference's count table at 64 MB)


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    seq = torch.randint(0, 4, (LEN, READS), device="cuda", generator=g, dtype=torch.uint8)
    return (seq,)


def run(seq):
    return module.kmer_distinct(seq)


def reference(seq):
    length, reads = seq.shape
    out = torch.empty(2, reads, device=seq.device, dtype=torch.int32)
    for c0 in range(0, reads, CHUNK):
        s = seq[:, c0 : c0 + CHUNK].long()
        codes = sum(s[k : length - K + 1 + k] << (2 * (K - 1 - k)) for k in range(K))  # [len-3, chunk]
        cnt = torch.zeros(s.shape[1], 256, device=seq.device, dtype=torch.int32)
        cnt.scatter_add_(1, codes.t(), torch.ones_like(codes.t(), dtype=torch.int32))
        out[0, c0 : c0 + CHUNK] = (cnt > 0).sum(1).int()
        out[1, c0 : c0 + CHUNK] = cnt.max(1).values
    return out
