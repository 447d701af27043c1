"""Planted bottleneck: tensor cores unused (a covariance matrix accumulated as rank-1 updates on the CUDA cores).

Sample covariance C = (X - mean)^T (X - mean) / (n - 1) of 1,024 samples of 4,096 bf16 features
(X is 8 MB and stays in L2; C is 4,096 x 4,096 fp32, 67 MB). Each program owns a 32 x 128 tile of
C and walks the samples one at a time, adding the outer product of the two centred feature slices
of that sample in fp32 FMAs: the streaming-statistics way to write it. This is the matrix product
X_c^T X_c (M = N = 4,096, K = 1,024: 34.4 GFLOP) done on the FP32 pipe: per sample and thread one
2-byte and four 16-byte loads (L1/L2 hits), 32 bf16 unpacks, 33 subtractions and 32 FFMA, 133
instructions per warp per sample (sm_90 SASS from a CPU compile); 4,096 programs x 4 warps x 1,024
samples = 2.2G warp-instructions, ~2.4 ms at the issue rate (96 registers, 5 programs per SM, 6.2
waves), where tl.dot on bf16 [32, 32] x [32, 128] tiles (tensor cores, fp32 accumulation) would
need ~60 us. The fix is to centre X once and use tl.dot (or cuBLAS) for X_c^T X_c.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SAMPLES, FEATURES = 1024, 4096
BLOCK_I, BLOCK_J = 32, 128


@triton.jit
def covariance_outer_kernel(x_ptr, mean_ptr, out_ptr, samples, features, inv_nm1, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)[:, None]  # [BLOCK_I, 1]
    j = tl.program_id(1) * BLOCK_J + tl.arange(0, BLOCK_J)[None, :]  # [1, BLOCK_J]
    mean_i = tl.load(mean_ptr + i)
    mean_j = tl.load(mean_ptr + j)
    acc = tl.zeros([BLOCK_I, BLOCK_J], dtype=tl.float32)
    for s in range(0, samples):
        row = x_ptr + s * features
        xi = tl.load(row + i).to(tl.float32) - mean_i
        xj = tl.load(row + j).to(tl.float32) - mean_j
        acc += xi * xj  # rank-1 update, FP32 FMA
    tl.store(out_ptr + i * features + j, acc * inv_nm1)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    # correlated features: a few latent factors plus noise, with non-zero means
    factors = torch.randn(SAMPLES, 16, device=DEVICE, generator=g)
    loadings = torch.randn(16, FEATURES, device=DEVICE, generator=g) * 0.5
    x = factors @ loadings + torch.randn(SAMPLES, FEATURES, device=DEVICE, generator=g) + 2.0
    return (x.to(torch.bfloat16),)


def run(x):
    samples, features = x.shape
    mean = x.float().mean(0)
    out = torch.empty(features, features, device=x.device, dtype=torch.float32)
    grid = (features // BLOCK_I, features // BLOCK_J)
    covariance_outer_kernel[grid](
        x, mean, out, samples, features, 1.0 / (samples - 1), BLOCK_I=BLOCK_I, BLOCK_J=BLOCK_J, num_warps=4
    )
    return out


def reference(x):
    xc = x.double() - x.double().mean(0)
    return (xc.t() @ xc / (x.shape[0] - 1)).float()
