"""Planted bottleneck: latency bound (a PageRank-style pull with one short-lived program per vertex).

One pull step of PageRank-style propagation, y[v] = sum of contrib[u] over the in-neighbours u of
v, on a random graph of 1,048,576 vertices with in-degrees uniform in 1..63 (mean 32, ~33.5M
edges), stored as CSR over in-edges (int32 row pointers and source ids); contributions are fp16
(2 MB, L2-resident), sums fp32. One program (2 warps, 64 lanes) per vertex: load its two row
pointers, then its <= 63 source ids (one coalesced masked load), then gather their contributions,
reduce, store one float. Each program is three dependent memory round trips (~0.3-0.6 us each)
and a few dozen instructions, and a million of them run 32 at a time per SM (the block limit):
~250 rounds of ~1.5 us, ~0.3 ms, while the bytes (134 MB of source ids, 4 MB of row pointers, the
contributions, 4 MB out: ~145 MB) need ~48 us at 3.05 TB/s. Expected: SM and memory throughput
both well below 60%, warps waiting on long-scoreboard stalls, no other cause. The fix is more
independent work per program: a block of rows per program (a [rows, 64] tile of ids and gathers
with per-row masks), so that one program's round trips cover many vertices.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
VERTICES = 2**20
MAX_DEGREE = 63
BLOCK = 64  # lanes per program (>= MAX_DEGREE)


@triton.jit
def pagerank_pull_vertex_kernel(rowptr_ptr, col_ptr, contrib_ptr, out_ptr, BLOCK: tl.constexpr):
    v = tl.program_id(0)
    start = tl.load(rowptr_ptr + v)
    end = tl.load(rowptr_ptr + v + 1)
    k = tl.arange(0, BLOCK)
    mask = k < end - start
    src = tl.load(col_ptr + start.to(tl.int64) + k, mask=mask, other=0)  # round trip 2 (after the row pointers)
    c = tl.load(contrib_ptr + src, mask=mask, other=0.0)                 # round trip 3: gather
    tl.store(out_ptr + v, tl.sum(c.to(tl.float32), axis=0))


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    degree = torch.randint(1, MAX_DEGREE + 1, (VERTICES,), device=DEVICE, generator=g)
    rowptr = torch.zeros(VERTICES + 1, device=DEVICE, dtype=torch.int64)
    rowptr[1:] = degree.cumsum(0)
    col = torch.randint(0, VERTICES, (int(rowptr[-1]),), device=DEVICE, generator=g, dtype=torch.int32)
    contrib = torch.rand(VERTICES, device=DEVICE, generator=g).half()
    return rowptr.int(), col, contrib


def run(rowptr, col, contrib):
    n = rowptr.numel() - 1
    out = torch.empty(n, device=col.device, dtype=torch.float32)
    pagerank_pull_vertex_kernel[(n,)](rowptr, col, contrib, out, BLOCK=BLOCK, num_warps=2)
    return out


def reference(rowptr, col, contrib):
    n = rowptr.numel() - 1
    seg = torch.repeat_interleave(torch.arange(n, device=col.device), rowptr.long().diff())
    y = torch.zeros(n, device=col.device, dtype=torch.float64)
    y.index_add_(0, seg, contrib.double()[col.long()])
    return y.float()
