"""Already good (near_roof): pairwise squared distances through the matrix-product identity, on tensor cores.

Squared Euclidean distances between 8,192 points X and 8,192 points Y of 64 dimensions (fp16),
written as an 8,192 x 8,192 fp32 matrix: d(i, j) = |x_i|^2 + |y_j|^2 - 2 x_i . y_j, with the
squared norms computed beforehand (two small torch reductions over 1 MB each, as torch.cdist
does). Each program (8 warps) loads a 64 x 64 tile of X and of Y (from L2 after the first touch:
both inputs are 1 MB), takes the cross term with one tl.dot (tensor cores, fp32 accumulation),
adds the norms and stores a 64 x 64 fp32 tile; 16,384 programs. The 8.6 GFLOP of products take
~12 us at the tensor roof; the 256 MB of output take ~84 us at 3.05 TB/s. The hypothesis: the
kernel is bound by writing its output, at the DRAM roof, with nothing left to gain short of
writing less (a smaller output type, or fusing the consumer, e.g. a top-k, into the kernel).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M, N, D = 8192, 8192, 64
BLOCK_M, BLOCK_N = 64, 64


@triton.jit
def cdist_dot_kernel(x_ptr, y_ptr, xn_ptr, yn_ptr, out_ptr, M, N, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    x = tl.load(x_ptr + offs_m[:, None] * D + offs_d[None, :])  # [BLOCK_M, D]; M, N are multiples of the blocks
    y = tl.load(y_ptr + offs_n[:, None] * D + offs_d[None, :])  # [BLOCK_N, D]
    cross = tl.dot(x, tl.trans(y))  # [BLOCK_M, BLOCK_N], fp32 accumulation on tensor cores
    xn = tl.load(xn_ptr + offs_m)
    yn = tl.load(yn_ptr + offs_n)
    d2 = tl.maximum(xn[:, None] + yn[None, :] - 2.0 * cross, 0.0)
    out = out_ptr + offs_m.to(tl.int64)[:, None] * N + offs_n[None, :]
    tl.store(out, d2)


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(M, D, device=DEVICE, dtype=torch.float16)
    y = torch.randn(N, D, device=DEVICE, dtype=torch.float16)
    return x, y


def run(x, y):
    m, d = x.shape
    n = y.shape[0]
    assert m % BLOCK_M == 0 and n % BLOCK_N == 0
    xn = x.float().pow(2).sum(1)  # squared norms (fp32)
    yn = y.float().pow(2).sum(1)
    out = torch.empty(m, n, device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    cdist_dot_kernel[grid](x, y, xn, yn, out, m, n, D=d, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8)
    return out


def reference(x, y):
    xd, yd = x.double(), y.double()
    d2 = (xd * xd).sum(1)[:, None] + (yd * yd).sum(1)[None, :] - 2.0 * xd @ yd.t()
    return d2.clamp_min(0.0).float()
