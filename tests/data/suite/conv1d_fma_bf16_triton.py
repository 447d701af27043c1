"""Planted bottleneck: tensor cores unused (a bf16 1-D convolution as an outer-product loop).

out[b, co, t] = sum over ci, k of w[co, ci, k] * x[b, ci, t + k - 1], with 256 input and output
channels, kernel width 3, batch 16, length 2048, in bf16. Each program owns a 32 (channels) x 128
(time) output tile and loops over the 768 (ci, k) pairs, adding the outer product of a column of w
and a row of x, in fp32 FMAs: this is a matrix product (an implicit GEMM with K = 768) done on the
CUDA cores. Expressing the loop as tl.dot over [32, 16] x [16, 128] tiles of w and x would run it
on the tensor cores.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, CIN, COUT, T, KW = 16, 256, 256, 2048, 3
BLOCK_CO, BLOCK_T = 32, 128


@triton.jit
def conv1d_fma_kernel(x_ptr, w_ptr, out_ptr, CIN, COUT, T, KW: tl.constexpr,
                      BLOCK_CO: tl.constexpr, BLOCK_T: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    b = tl.program_id(2)
    acc = tl.zeros([BLOCK_CO, BLOCK_T], dtype=tl.float32)
    for ci in range(0, CIN):
        for k in tl.static_range(KW):
            w = tl.load(w_ptr + (co * CIN + ci) * KW + k).to(tl.float32)                  # [BLOCK_CO]
            tt = t + (k - KW // 2)
            xv = tl.load(x_ptr + (b * CIN + ci) * T + tt, mask=(tt >= 0) & (tt < T), other=0.0).to(tl.float32)  # [BLOCK_T]
            acc += w[:, None] * xv[None, :]                                               # outer product, FMA
    tl.store(out_ptr + (b * COUT + co[:, None]) * T + t[None, :], acc.to(tl.bfloat16))


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(B, CIN, T, device=DEVICE, dtype=torch.bfloat16)
    w = (torch.randn(COUT, CIN, KW, device=DEVICE) / (CIN * KW) ** 0.5).to(torch.bfloat16)
    return x, w


def run(x, w):
    out = torch.empty(x.shape[0], w.shape[0], x.shape[2], device=x.device, dtype=torch.bfloat16)
    grid = (x.shape[2] // BLOCK_T, w.shape[0] // BLOCK_CO, x.shape[0])
    conv1d_fma_kernel[grid](x, w, out, x.shape[1], w.shape[0], x.shape[2], KW=w.shape[2],
                            BLOCK_CO=BLOCK_CO, BLOCK_T=BLOCK_T, num_warps=4)
    return out


def reference(x, w):
    return torch.nn.functional.conv1d(x.float(), w.float(), padding=KW // 2).to(torch.bfloat16)
