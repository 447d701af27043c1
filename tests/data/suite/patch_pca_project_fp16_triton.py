"""Planted bottleneck: tensor cores unused (a matrix product done as rank-1 FMA updates on the CUDA cores).

PCA patch projection for MRI denoising (the first step of MP-PCA / NORDIC-style local low-rank
denoisers): 262,144 patches of 256 voxels (4 x 8 x 8 neighbourhoods of a 4-D acquisition, fp16,
[patches, 256], 134 MB) projected on a 256 x 256 principal basis (fp16, [256 voxels, 256 components]):
coef = X @ B, fp32 accumulation, fp16 out (134 MB). Each program owns 64 patches x all 256 components
(a [64, 256] fp32 accumulator, 128 per thread at 4 warps) and loops over the 256 voxels: one column of
X (64 values, 512 B apart, L1-cached) and one row of B (broadcast), then acc += x[:, None] * b[None, :]:
34.4 GFLOP of FMA on the CUDA cores, 4,096 programs. Triton 3.9 -> ptxas sm_90 (CPU): 170 registers, no
spills, no mma instructions: 3 programs per SM (12 warps), but each warp has 128 independent FMAs per
step, enough to fill the FMA pipe. The hypothesis: tensor_cores_unused: FMA pipe busy
(~60-80%), tensor pipe idle, ~0.6-1.0 ms against ~67 TFLOP/s FP32 (0.5 ms) while the same product on the
fp16 tensor cores (tl.dot) would take ~0.1 ms (bytes: 268 MB, ~90 us).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
PATCHES = 1 << 18
VOX = 256
COMP = 256
BLOCK_M = 64


@triton.jit
def pca_project_kernel(x_ptr, b_ptr, c_ptr, patches, VOX: tl.constexpr, COMP: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, COMP)
    rm = rows < patches
    acc = tl.zeros([BLOCK_M, COMP], dtype=tl.float32)
    for k in range(VOX):
        xk = tl.load(x_ptr + rows * VOX + k, mask=rm, other=0.0).to(tl.float32)
        bk = tl.load(b_ptr + k * COMP + cols).to(tl.float32)
        acc += xk[:, None] * bk[None, :]
    tl.store(c_ptr + rows[:, None] * COMP + cols[None, :], acc.to(tl.float16), mask=rm[:, None])


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    x = torch.randn(PATCHES, VOX, device=DEVICE, generator=g)
    q, _ = torch.linalg.qr(torch.randn(VOX, COMP, device="cpu", generator=torch.Generator().manual_seed(1)))
    return x.to(torch.float16).contiguous(), q.to(DEVICE).to(torch.float16).contiguous()


def run(x, basis):
    patches = x.shape[0]
    coef = torch.empty(patches, COMP, device=x.device, dtype=torch.float16)
    pca_project_kernel[(triton.cdiv(patches, BLOCK_M),)](x, basis, coef, patches, VOX=VOX, COMP=COMP, BLOCK_M=BLOCK_M,
                                                         num_warps=4)
    return coef


def reference(x, basis):
    return (x.double() @ basis.double()).to(torch.float16)
