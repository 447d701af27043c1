"""Planted bottleneck: memory bound (per-feature standardization that reads the whole matrix three times).

z = (x - mean) / sqrt(var + eps) per column (feature) of an 8,192 x 32,768 fp16 matrix (512 MiB), as
a StandardScaler's fit_transform does, in one kernel. Each program owns 64 adjacent columns (128
bytes of every row) and walks all 8,192 rows three times: once for the means, once for the
variances (the stable two-pass formula), once to write z. A program's strip is 1 MiB and the 512
programs run at once, so 512 MiB pass between a program's first and second reading of any row:
nothing survives in the 50 MB L2, and DRAM moves 3 x 512 MiB read + 512 MiB written = 2.15 GB,
2.0x the 1.07 GB the operation needs (~0.7 ms at 3.05 TB/s, against ~0.35 ms). Loads are 16-byte
and coalesced (64 rows x 128 bytes per program per step, 64 registers, all 512 programs resident:
~4 MB in flight over the GPU). The
hypothesis: DRAM near its peak, 2x the needed bytes, SM low. The fix is one read pass that keeps
the sums (Welford or sum/sum of squares in fp32, or the strip in shared memory) and one write pass.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 8192, 32768
BLOCK_R, BLOCK_C = 64, 64
EPS = 1e-5


@triton.jit
def standardize_cols_kernel(x_ptr, out_ptr, rows, cols, eps, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = c < cols
    r0 = tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for r in range(0, rows, BLOCK_R):  # pass 1: column sums
        rr = r + r0
        m = (rr < rows)[:, None] & cmask[None, :]
        acc += tl.load(x_ptr + rr[:, None].to(tl.int64) * cols + c[None, :], mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / rows
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for r in range(0, rows, BLOCK_R):  # pass 2: sums of squared deviations
        rr = r + r0
        m = (rr < rows)[:, None] & cmask[None, :]
        x = tl.load(x_ptr + rr[:, None].to(tl.int64) * cols + c[None, :], mask=m, other=0.0).to(tl.float32)
        d = tl.where(m, x - mean[None, :], 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / rows + eps)
    for r in range(0, rows, BLOCK_R):  # pass 3: write z
        rr = r + r0
        m = (rr < rows)[:, None] & cmask[None, :]
        offs = rr[:, None].to(tl.int64) * cols + c[None, :]
        x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
        tl.store(out_ptr + offs, ((x - mean[None, :]) * rstd[None, :]).to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    scale = torch.rand(COLS, device=DEVICE, generator=g) * 4.0 + 0.5  # features on different scales
    shift = torch.randn(COLS, device=DEVICE, generator=g) * 3.0
    x = torch.randn(ROWS, COLS, device=DEVICE, generator=g) * scale + shift
    return (x.to(torch.float16),)


def run(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    standardize_cols_kernel[(triton.cdiv(cols, BLOCK_C),)](x, out, rows, cols, EPS, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=4)
    return out


def reference(x):
    xd = x.double()
    mean = xd.mean(0)
    var = xd.var(0, unbiased=False)
    return ((xd - mean) / (var + EPS).sqrt()).to(torch.float16)
