"""Planted bottleneck: memory bound (a row-wise CSR SpMM that gathers each dense row from DRAM again for every use).

Sparse x dense product C = A B for a CSR matrix A of 524,288 rows x 2M columns with 16 nonzeros
per row at random columns (bf16 values) and a dense B of 2M rows x 128 bf16 (512 MB, ten times
L2). A program per row of A loads its 16 column indices and values, gathers the 16 rows of B it
names (a [16, 128] tile: 16 contiguous 256-byte rows, 4 KB in flight per program) and writes the
weighted sum (fp32 accumulation, bf16 out). The gathers are well formed (whole 256-byte rows) and
there are plenty of them in flight, so DRAM should run near its peak, but it moves each row of B
about four times: 8M gathered rows = 2.1 GB, for ~0.7 GB that the product needs (the ~98% of B's
rows that are used, read once, plus indices, values and C): ~0.75 ms where ~0.23 ms would do.
Reuse of B rows across rows of A (column-blocked or reordered traversal, rows of A grouped by the
columns they touch) is the fix; the kernel is not short of bandwidth, it spends it twice.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS, NNZ_ROW, FEAT = 2**19, 2**21, 16, 128


@triton.jit
def spmm_csr_gather_kernel(indptr_ptr, col_ptr, val_ptr, b_ptr, out_ptr, FEAT: tl.constexpr, MAX_NNZ: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(indptr_ptr + row)
    count = tl.load(indptr_ptr + row + 1) - start
    j = tl.arange(0, MAX_NNZ)
    valid = j < count
    cols = tl.load(col_ptr + start + j, mask=valid, other=0)
    vals = tl.load(val_ptr + start + j, mask=valid, other=0.0).to(tl.float32)
    f = tl.arange(0, FEAT)
    rows_b = tl.load(b_ptr + cols.to(tl.int64)[:, None] * FEAT + f[None, :], mask=valid[:, None], other=0.0)  # gather
    acc = tl.sum(vals[:, None] * rows_b.to(tl.float32), axis=0)
    tl.store(out_ptr + row.to(tl.int64) * FEAT + f, acc.to(out_ptr.dtype.element_ty))


def make_inputs():
    torch.manual_seed(0)
    indptr = torch.arange(0, (ROWS + 1) * NNZ_ROW, NNZ_ROW, device=DEVICE, dtype=torch.int32)
    cols = torch.randint(0, COLS, (ROWS * NNZ_ROW,), device=DEVICE, dtype=torch.int32)
    vals = torch.randn(ROWS * NNZ_ROW, device=DEVICE, dtype=torch.bfloat16)
    b = torch.randn(COLS, FEAT, device=DEVICE, dtype=torch.bfloat16)
    return indptr, cols, vals, b


def run(indptr, cols, vals, b):
    rows = indptr.numel() - 1
    out = torch.empty(rows, b.shape[1], device=b.device, dtype=b.dtype)
    spmm_csr_gather_kernel[(rows,)](indptr, cols, vals, b, out, FEAT=b.shape[1], MAX_NNZ=NNZ_ROW, num_warps=4)
    return out


def reference(indptr, cols, vals, b):
    rows = indptr.numel() - 1  # every row holds NNZ_ROW entries
    out = torch.empty(rows, b.shape[1], device=b.device, dtype=b.dtype)
    step = 32768
    for r in range(0, rows, step):
        e = slice(r * NNZ_ROW, min(r + step, rows) * NNZ_ROW)
        g = b[cols[e].long()].float().view(-1, NNZ_ROW, b.shape[1])
        out[r : r + step] = (vals[e].float().view(-1, NNZ_ROW, 1) * g).sum(1).to(b.dtype)
    return out
