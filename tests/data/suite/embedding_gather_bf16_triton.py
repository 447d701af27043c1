"""Planted bottleneck: memory bound (random rows from DRAM), an embedding lookup.

512K tokens each fetch one 256-byte row (128 bf16) of a 512 MB table at a random index and
write it out. Every byte moved is needed and every access is a whole, aligned row, so no sector
is wasted; but the rows are scattered over the table, so DRAM serves short, random bursts and
the kernel has nothing to compute while it waits. Time is set by the memory system: fewer bytes
(a smaller table dtype, deduplicated indices, fusing the lookup into its consumer) is the lever.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
VOCAB, DIM = 2**21, 128  # 2M rows x 256 B = 512 MB table
TOKENS = 2**19
BLOCK_T = 32


@triton.jit
def embedding_gather_kernel(idx_ptr, table_ptr, out_ptr, T, D: tl.constexpr, BLOCK_T: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    mask = t < T
    rows = tl.load(idx_ptr + t, mask=mask, other=0)
    d = tl.arange(0, D)
    vals = tl.load(table_ptr + rows[:, None] * D + d[None, :], mask=mask[:, None])
    tl.store(out_ptr + t[:, None].to(tl.int64) * D + d[None, :], vals, mask=mask[:, None])


def make_inputs():
    torch.manual_seed(0)
    table = torch.randn(VOCAB, DIM, device=DEVICE, dtype=torch.bfloat16)
    idx = torch.randint(0, VOCAB, (TOKENS,), device=DEVICE, dtype=torch.int64)
    return idx, table


def run(idx, table):
    out = torch.empty(idx.numel(), table.shape[1], device=table.device, dtype=table.dtype)
    embedding_gather_kernel[(triton.cdiv(idx.numel(), BLOCK_T),)](idx, table, out, idx.numel(),
                                                                   D=table.shape[1], BLOCK_T=BLOCK_T, num_warps=4)
    return out


def reference(idx, table):
    return table[idx]
