"""Planted bottleneck: tensor cores unused (a SOCS projection, a plain matrix product, summed on the CUDA cores).

Aerial-image step of an optical proximity correction (OPC) flow with the Hopkins / SOCS model: the
partially coherent image at a point is I = sum_k lambda_k |(mask * h_k)(x)|^2, the sum of the squared
coherent fields of the K leading eigen-kernels of the transmission cross coefficients. For hotspot
verification the mask is cut into clips, one evaluation point per clip, and each clip's 16 x 16
rasterized window (8 nm pixels, fp16 transmission, [CLIPS, 256], 268 MB for 524,288 clips) is
projected on the 32 eigen-kernels sampled on the same window (fp16 [256, 32], real-valued here):
E = X @ H ([524,288 x 256] x [256 x 32], 8.6 GFLOP), then I = sum_k lambda_k E_k^2 (fp16 out, 1 MB).
Each program owns 64 clips and walks the 256 window pixels in chunks of 16, loading a coalesced
[64, 16] tile of X and a [16, 32] tile of H, converting both to fp32 and accumulating
tl.sum(x[:, :, None] * h[None, :, :], axis=1) into a [64, 32] fp32 accumulator: the product runs as
FMAs (and Triton's in-register reductions) on the CUDA cores; 8,192 programs of 4 warps.
The hypothesis: tensor_cores_unused: tensor pipe idle, FMA / ALU pipes busy (SM ~60-85%), DRAM
~15-35% of peak, ~0.3-0.8 ms against ~88 us for the 268 MB of clips at 3.05 TB/s (FP32 FMA roof for
the 8.6 GFLOP: ~130 us). The fix: tl.dot on the fp16 tiles (fp32 accumulation), which leaves the
kernel memory bound at ~0.1 ms.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CLIPS = 1 << 19
PIX = 256          # 16 x 16 window
KERN = 32          # SOCS eigen-kernels kept
BLOCK_M = 64
BLOCK_K = 16


@triton.jit
def socs_project_kernel(x_ptr, h_ptr, lam_ptr, out_ptr, clips, PIX: tl.constexpr, KERN: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rm = rows < clips
    ks = tl.arange(0, BLOCK_K)
    cols = tl.arange(0, KERN)
    acc = tl.zeros([BLOCK_M, KERN], dtype=tl.float32)
    for k0 in range(0, PIX, BLOCK_K):
        x = tl.load(x_ptr + rows[:, None] * PIX + (k0 + ks)[None, :], mask=rm[:, None], other=0.0).to(tl.float32)
        h = tl.load(h_ptr + (k0 + ks)[:, None] * KERN + cols[None, :]).to(tl.float32)
        acc += tl.sum(x[:, :, None] * h[None, :, :], axis=1)
    lam = tl.load(lam_ptr + cols)
    inten = tl.sum(acc * acc * lam[None, :], axis=1)
    tl.store(out_ptr + rows, inten.to(tl.float16), mask=rm)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    # Manhattan-ish mask clips: random rectangles' edges blurred into transmission in [0, 1]
    x = (torch.rand(CLIPS, PIX, device=DEVICE, generator=g) < 0.4).float()
    x = 0.5 * x + 0.25 * (torch.roll(x, 1, dims=1) + torch.roll(x, -1, dims=1))
    # eigen-kernels: Gaussian-windowed Hermite-like modes on the 16 x 16 window, orthonormalised
    yy, xx = torch.meshgrid(torch.arange(16.0, device=DEVICE) - 7.5, torch.arange(16.0, device=DEVICE) - 7.5,
                            indexing="ij")
    env = torch.exp(-(xx ** 2 + yy ** 2) / 40.0).reshape(PIX, 1)
    h = env * torch.randn(PIX, KERN, device=DEVICE, generator=g)
    h = torch.linalg.qr(h.cpu().double())[0].float().to(DEVICE)
    lam = 0.9 ** torch.arange(KERN, device=DEVICE, dtype=torch.float32)      # decaying TCC eigenvalues
    return x.to(torch.float16).contiguous(), h.to(torch.float16).contiguous(), lam.contiguous()


def run(x, h, lam):
    clips = x.shape[0]
    out = torch.empty(clips, device=x.device, dtype=torch.float16)
    socs_project_kernel[(triton.cdiv(clips, BLOCK_M),)](x, h, lam, out, clips, PIX=PIX, KERN=KERN, BLOCK_M=BLOCK_M,
                                                        BLOCK_K=BLOCK_K, num_warps=4)
    return out


def reference(x, h, lam):
    e = x.double() @ h.double()
    return (e * e * lam.double()[None, :]).sum(1).to(torch.float16)
