"""Planted bottleneck: memory bound, with redundant DRAM traffic (three passes over each row).

A LayerNorm over rows of 65,536 floats (256 KB each). Each program owns one row and walks it
three times: once for the mean, once for the variance, once to normalize and write. A row is
far too long to stay in registers, and the ~1,000 rows in flight at a time (256 MB) do not fit
in the 50 MB L2, so every pass reads the row from DRAM again: 3 reads + 1 write of the tensor
where 1 read + 1 write would do. The SMs do a few FLOPs per byte and wait for memory.
The fix is to move fewer bytes: compute the sum and the sum of squares in the same pass
(layernorm_2pass_fp32_triton.py: 2 reads + 1 write), or keep shorter rows on chip.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 2048, 65536  # 512 MB of fp32 in, 512 MB out
BLOCK = 2048
EPS = 1e-5


@triton.jit
def layernorm_3pass_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * N
    o_row = out_ptr + row.to(tl.int64) * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):  # pass 1: the mean
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):  # pass 2: the variance (reads the row from DRAM again)
        cols = off + tl.arange(0, BLOCK)
        d = tl.where(cols < N, tl.load(x_row + cols, mask=cols < N, other=0.0) - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for off in range(0, N, BLOCK):  # pass 3: normalize and write (a third read)
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(x_row + cols, mask=m, other=0.0)
        w = tl.load(w_ptr + cols, mask=m, other=0.0)
        b = tl.load(b_ptr + cols, mask=m, other=0.0)
        tl.store(o_row + cols, (x - mean) * rstd * w + b, mask=m)


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(ROWS, COLS, device=DEVICE)
    w = torch.rand(COLS, device=DEVICE) + 0.5
    b = torch.randn(COLS, device=DEVICE)
    return x, w, b


def run(x, w, b):
    out = torch.empty_like(x)
    layernorm_3pass_kernel[(x.shape[0],)](x, w, b, out, x.shape[1], EPS, BLOCK=BLOCK, num_warps=8)
    return out


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, EPS)
