"""Fix of layernorm_3pass_fp32_triton.py: the same LayerNorm with one pass fewer over DRAM.

The mean and the variance come from the same read (sum and sum of squares accumulated
together, in fp32), so each row is read twice (statistics, then normalize) and written once:
3 x 512 MB of DRAM traffic instead of 4 x 512 MB. The kernel is still memory bound, but it
moves a quarter fewer bytes; expect it to take about 3/4 of the three-pass time.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 2048, 65536
BLOCK = 2048
EPS = 1e-5


@triton.jit
def layernorm_2pass_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * N
    o_row = out_ptr + row.to(tl.int64) * N
    s1 = tl.zeros([BLOCK], dtype=tl.float32)
    s2 = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):  # one read for both statistics
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0)
        s1 += x
        s2 += x * x
    mean = tl.sum(s1, axis=0) / N
    var = tl.maximum(tl.sum(s2, axis=0) / N - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK):  # normalize and write
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
    layernorm_2pass_kernel[(x.shape[0],)](x, w, b, out, x.shape[1], EPS, BLOCK=BLOCK, num_warps=8)
    return out


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, EPS)
