"""Planted bottleneck: memory bound (an ELL SpMV that streams every padded slot of rows that are mostly empty).

y = A x for a sparse A of 1M rows x 1M columns stored in ELL format: every row padded to the
longest row's 64 slots (fp32 values, int32 column indices; padding = value 0 at column 0). Row
lengths are skewed, as in graphs and meshes with a few dense rows: 1 to 64, mean ~8.5. A program
takes 32 rows and loads their full [32, 64] value and index tiles (coalesced), gathers x (4 MB,
L2-resident; the padding all hits x[0]) and writes 32 sums. The loads are perfect, DRAM should be
near its peak, and it moves 512 MB of which ~71 MB are nonzeros (8.9M x 8 bytes): ~7x the bytes
the product needs (~175 us where ~25 us would do). Skipping the padding (a per-row length with masked loads, or
CSR / sliced ELL with rows sorted by length) is the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS, WIDTH = 2**20, 2**20, 64
BLOCK_M = 32


@triton.jit
def spmv_ell_kernel(val_ptr, col_ptr, x_ptr, y_ptr, rows, WIDTH: tl.constexpr, BLOCK_M: tl.constexpr):
    r = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    w = tl.arange(0, WIDTH)
    in_rows = r < rows
    offs = r.to(tl.int64)[:, None] * WIDTH + w[None, :]
    vals = tl.load(val_ptr + offs, mask=in_rows[:, None], other=0.0)  # every slot, padding included
    cols = tl.load(col_ptr + offs, mask=in_rows[:, None], other=0)
    xs = tl.load(x_ptr + cols)
    tl.store(y_ptr + r, tl.sum(vals * xs, axis=1), mask=in_rows)


def make_inputs():
    torch.manual_seed(0)
    lengths = (torch.rand(ROWS, device=DEVICE) ** 7 * WIDTH).long().clamp(max=WIDTH - 1) + 1  # 1..64, mean ~8.5
    slot = torch.arange(WIDTH, device=DEVICE)[None, :]
    used = slot < lengths[:, None]
    vals = torch.where(used, torch.randn(ROWS, WIDTH, device=DEVICE), 0.0)
    cols = torch.where(used, torch.randint(0, COLS, (ROWS, WIDTH), device=DEVICE, dtype=torch.int32), 0)
    x = torch.randn(COLS, device=DEVICE)
    return vals, cols.int(), x


def run(vals, cols, x):
    rows = vals.shape[0]
    y = torch.empty(rows, device=vals.device, dtype=vals.dtype)
    spmv_ell_kernel[(triton.cdiv(rows, BLOCK_M),)](vals, cols, x, y, rows, WIDTH=vals.shape[1], BLOCK_M=BLOCK_M, num_warps=4)
    return y


def reference(vals, cols, x):
    return (vals.double() * x.double()[cols.long()]).sum(1).float()
