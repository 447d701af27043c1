"""Planted bottleneck: tensor cores unused (a descriptor Gram matrix built from rank-1 FMA updates, no tl.dot).

Gaussian-approximation-potential (GAP) / kernel-ridge fit of an interatomic potential: the polynomial
SOAP kernel K_ij = (x_i . y_j)^2 between the normalised SOAP descriptors of 8,192 atomic environments
of a training configuration and 4,096 sparse (representative) environments, stored channel-major as
the descriptor code writes them (bf16 [256, 8192] and [256, 4096]), fp32 out [8192, 4096] (134 MB).
Each program owns a 64 x 64 tile of K (8 warps, 8,192 programs) and accumulates it as 256 rank-1
updates, acc += x[:, k] (outer) y[:, k], loading one descriptor channel of each side per step: every
multiply-add goes to the FP32 FMA pipe, and with Triton's [1, 32]-lane layout each thread issues about
one load (a warp-uniform one for the x side) per FMA, so the load/store unit and L1 are busier than the
FMA pipe. The bf16 inputs and the 17.2 GFLOP of matrix-product structure would suit the tensor cores
(a tl.dot over [64, 32] x [32, 64] tiles). Triton/ptxas (offline, sm_90a): 64 registers, no spills.
The hypothesis: tensor_cores_unused: FP32 FMA pipe ~15-30% with LSU / L1 ~70-95% busy (the naive
column loads), every tensor-pipe op counter 0, DRAM < 15%, ~0.8-1.5 ms vs ~60-80 us with tl.dot (then
the 134 MB store dominates). The fix: load [64, 32] K-tiles of both sides and tl.dot them (bf16 in,
fp32 accumulate).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M = 8192
N = 4096
D = 256
BM = 64
BN = 64
TOLERANCE = 1e-4  # fp32 accumulation of 256 bf16 products, squared


@triton.jit
def soap_kernel_fma(xt_ptr, yt_ptr, k_ptr, m, n, d, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(n, BN)
    rm = (pid // tiles_n) * BM + tl.arange(0, BM)
    rn = (pid % tiles_n) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, d):
        a = tl.load(xt_ptr + k * m + rm).to(tl.float32)      # descriptor channel k of BM environments
        b = tl.load(yt_ptr + k * n + rn).to(tl.float32)      # channel k of BN sparse environments
        acc += a[:, None] * b[None, :]
    tl.store(k_ptr + rm[:, None] * n + rn[None, :], acc * acc)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    centres = torch.randn(16, D, device=DEVICE, generator=g)                         # a few chemical motifs
    xa = centres[torch.randint(0, 16, (M,), device=DEVICE, generator=g)] + 0.6 * torch.randn(M, D, device=DEVICE, generator=g)
    ya = centres[torch.randint(0, 16, (N,), device=DEVICE, generator=g)] + 0.6 * torch.randn(N, D, device=DEVICE, generator=g)
    x = torch.nn.functional.normalize(xa.abs(), dim=1).to(torch.bfloat16)          # power spectra are >= 0
    y = torch.nn.functional.normalize(ya.abs(), dim=1).to(torch.bfloat16)
    return x.t().contiguous(), y.t().contiguous()                                  # channel-major [D, M], [D, N]


def run(xt, yt):
    d, m = xt.shape
    n = yt.shape[1]
    assert m % BM == 0 and n % BN == 0
    k = torch.empty(m, n, device=xt.device, dtype=torch.float32)
    soap_kernel_fma[(m // BM * (n // BN),)](xt, yt, k, m, n, d, BM=BM, BN=BN, num_warps=8)
    return k


def reference(xt, yt):
    return ((xt.double().t() @ yt.double()) ** 2).float()
