"""Planted bottleneck: atomic contention (a scatter-add of 262K rows onto 8 output rows).

index_add written in Triton: row r of a [262144, 64] fp32 source is added to output row dst[r]
with tl.atomic_add, and dst takes only 8 values. 16.8M atomic additions land on 512 floats (2 KB):
each output address receives 32K updates, serialized at the L2 slice that owns it, while the
source streams in at a tiny fraction of DRAM bandwidth. Reduce before scattering (sort by
destination and sum runs, or accumulate per program in registers and issue one atomic per program
and destination).
Inputs are small integers, so the sums are exact in any order.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, D, OUT_ROWS = 2**18, 64, 8
BLOCK_R = 16


@triton.jit
def scatter_add_kernel(src_ptr, dst_ptr, out_ptr, n_rows, D: tl.constexpr, BLOCK_R: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    mask = r < n_rows
    dst = tl.load(dst_ptr + r, mask=mask, other=0)
    d = tl.arange(0, D)
    vals = tl.load(src_ptr + r[:, None] * D + d[None, :], mask=mask[:, None], other=0.0)
    tl.atomic_add(out_ptr + dst[:, None] * D + d[None, :], vals, mask=mask[:, None], sem="relaxed")  # 8 hot rows


def make_inputs():
    torch.manual_seed(0)
    src = torch.randint(0, 4, (ROWS, D), device=DEVICE).float()
    dst = torch.randint(0, OUT_ROWS, (ROWS,), device=DEVICE, dtype=torch.int32)
    return src, dst


def run(src, dst):
    out = torch.zeros(OUT_ROWS, src.shape[1], device=src.device, dtype=src.dtype)
    scatter_add_kernel[(triton.cdiv(src.shape[0], BLOCK_R),)](src, dst, out, src.shape[0], D=src.shape[1],
                                                               BLOCK_R=BLOCK_R, num_warps=4)
    return out


def reference(src, dst):
    return torch.zeros(OUT_ROWS, src.shape[1], device=src.device, dtype=torch.float64).index_add_(
        0, dst.long(), src.double()).float()
