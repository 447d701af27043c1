"""Planted bottleneck: register spills (the Smith-Waterman column of each thread lives in local memory).

Local alignment scores (Smith-Waterman with affine gaps: match +2, mismatch -3, gap open 5, extend
2) of one 80-base probe against a database of 131,072 reads of 64 bases, one thread per read
(inter-task parallelism, the database stored position-major so that a warp's reads of its 32
sequences' next base are coalesced), int16 scores. Each thread keeps the previous DP column,
H[0..qlen] and E[0..qlen], in two short arrays indexed by the query position; the query length is
a run-time argument, so the arrays cannot be registers: ptxas puts them on a 328-byte stack frame
(nvcc 13, sm_90, 0 spill stores: the arrays themselves are local), and every cell does two local
loads and two local stores. ~990 threads per SM x 328 bytes = 325 KB of stacks per SM, more than
L1, 43 MB for the grid, inside L2: 671M cells x 4 accesses = ~84M warp-level local requests
(~10.7 GB through L1/L2) against ~16 integer instructions per cell (~0.34G warp-instructions,
~0.35 ms of issue) and 8.4 MB of real input. Expected: local load/store requests dominating, L2
and L1 busy, ~1-2 ms. The fix is to keep the column in registers (a compile-time query length,
fully unrolled) or to switch to a striped intra-sequence layout (one warp per read, the column
across the lanes).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>
#define QMAX 80
#define MATCH 2
#define MISMATCH (-3)
#define GAP_OPEN 5     // cost of a gap's first position
#define GAP_EXTEND 2   // cost of each further position
#define NEG (-16384)

__global__ void __launch_bounds__(128) sw_thread_per_pair(const uint8_t* __restrict__ query,
        const uint8_t* __restrict__ db, int qlen, int tlen, int pairs, int16_t* __restrict__ score) {
    __shared__ uint8_t q[QMAX];
    for (int i = threadIdx.x; i < qlen; i += blockDim.x) q[i] = query[i];
    __syncthreads();
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    short H[QMAX + 1], E[QMAX + 1];   // previous DP column by query position (run-time qlen: local memory)
    for (int i = 0; i <= qlen; ++i) { H[i] = 0; E[i] = NEG; }
    int best = 0;
    for (int j = 0; j < tlen; ++j) {
        uint8_t tj = db[(size_t)j * pairs + p];   // position-major database: coalesced across the warp
        int diag = 0, up = 0, f = NEG;            // H[i-1][j-1], H[i-1][j], F[i-1][j]
        for (int i = 1; i <= qlen; ++i) {
            int left = H[i];                      // H[i][j-1]
            int e = max(E[i] - GAP_EXTEND, left - GAP_OPEN);
            f = max(f - GAP_EXTEND, up - GAP_OPEN);
            int h = max(max(diag + (q[i - 1] == tj ? MATCH : MISMATCH), 0), max(e, f));
            diag = left;
            H[i] = (short)h;
            E[i] = (short)e;
            up = h;
            best = max(best, h);
        }
    }
    score[p] = (int16_t)best;
}

torch::Tensor sw(torch::Tensor query, torch::Tensor db) {
    int qlen = query.numel(), tlen = db.size(0), pairs = db.size(1);
    TORCH_CHECK(qlen <= QMAX);
    auto score = torch::empty({pairs}, db.options().dtype(torch::kInt16));
    sw_thread_per_pair<<<(pairs + 127) / 128, 128>>>(query.data_ptr<uint8_t>(), db.data_ptr<uint8_t>(), qlen, tlen,
                                                    pairs, score.data_ptr<int16_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return score;
}
"""

module = load_inline(
    "kls_smith_waterman_thread_pair_int16_cuda",
    cpp_sources="torch::Tensor sw(torch::Tensor query, torch::Tensor db);",
    cuda_sources=CUDA_SRC,
    functions=["sw"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

PAIRS, QLEN, TLEN = 131072, 80, 64
MATCH, MISMATCH, GAP_OPEN, GAP_EXTEND, NEG = 2, -3, 5, 2, -16384


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    query = torch.randint(0, 4, (QLEN,), device="cuda", generator=g, dtype=torch.uint8)  # A, C, G, T as 0..3
    db = torch.randint(0, 4, (TLEN, PAIRS), device="cuda", generator=g, dtype=torch.uint8)  # [position, sequence]
    # plant a mutated copy of part of the query in every 8th sequence so that some scores are high
    hits = torch.arange(0, PAIRS, 8, device="cuda")
    piece = query[16:64].repeat(hits.numel(), 1)
    mutate = torch.rand(piece.shape, device="cuda", generator=g) < 0.1
    piece = torch.where(mutate, torch.randint(0, 4, piece.shape, device="cuda", generator=g, dtype=torch.uint8), piece)
    db[10:58, hits] = piece.t()
    return query, db


def run(query, db):
    return module.sw(query, db)


def reference(query, db):
    tlen, pairs = db.shape
    q = query.long()
    qlen = q.numel()
    h = torch.zeros(qlen + 1, pairs, dtype=torch.int32, device=db.device)  # column j-1, rows 0..qlen
    e = torch.full_like(h, NEG)
    best = torch.zeros(pairs, dtype=torch.int32, device=db.device)
    for j in range(tlen):
        e = torch.maximum(e - GAP_EXTEND, h - GAP_OPEN)  # E[i][j] from column j-1
        sub = torch.where(q[:, None] == db[j].long()[None, :], MATCH, MISMATCH)
        base = torch.maximum((h[:-1] + sub).clamp_min(0), e[1:])  # all but the vertical gap, rows 1..qlen
        new = torch.zeros_like(h)
        f = torch.full_like(best, NEG)
        up = torch.zeros_like(best)
        for i in range(1, qlen + 1):
            f = torch.maximum(f - GAP_EXTEND, up - GAP_OPEN)
            up = torch.maximum(base[i - 1], f)
            new[i] = up
        h = new
        best = torch.maximum(best, h.max(0).values)
    return best.to(torch.int16)
