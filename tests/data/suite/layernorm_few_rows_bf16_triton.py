"""Planted bottleneck: small grid (a LayerNorm over few, very long rows, one program per row).

64 rows of 1M bf16 each (128 MB), one program per row: the grid has 64 programs for 132 SMs, so
more than half of the GPU has nothing to do, and each busy SM streams its 2 MB row alone. The
kernel is well written otherwise (statistics in one pass, normalize in a second). Split each row
over several programs (a two-stage reduction for the statistics) so that the grid covers every
SM several times.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 64, 2**20
BLOCK = 4096
EPS = 1e-5


@triton.jit
def layernorm_row_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * N
    o_row = out_ptr + row.to(tl.int64) * N
    s1 = tl.zeros([BLOCK], dtype=tl.float32)
    s2 = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        s1 += x
        s2 += x * x
    mean = tl.sum(s1, axis=0) / N
    rstd = 1.0 / tl.sqrt(tl.maximum(tl.sum(s2, axis=0) / N - mean * mean, 0.0) + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(x_row + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(o_row + cols, ((x - mean) * rstd * w + b).to(tl.bfloat16), mask=m)


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(ROWS, COLS, device=DEVICE, dtype=torch.bfloat16)
    w = (torch.rand(COLS, device=DEVICE) + 0.5).to(torch.bfloat16)
    b = torch.randn(COLS, device=DEVICE, dtype=torch.bfloat16)
    return x, w, b


def run(x, w, b):
    out = torch.empty_like(x)
    layernorm_row_kernel[(x.shape[0],)](x, w, b, out, x.shape[1], EPS, BLOCK=BLOCK, num_warps=8)
    return out


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[1],), w.float(), b.float(), EPS).to(torch.bfloat16)
