"""Planted bottleneck: low occupancy (registers: a 9 x 9 reference patch held per thread).

Dense stereo matching for photogrammetric surface reconstruction: for every pixel of a rectified left
image (fp16, 1,024 x 1,024, intensities 0-1), find the disparity d in [0, 64) whose 9 x 9 patch in the
right image (x - d) maximises the zero-mean normalised cross-correlation (ZNCC), replicate borders;
out fp16 [2, H, W] = (best disparity, best ZNCC). One thread per pixel, blocks of 128 along a row
(8,192 blocks). Each thread keeps its zero-mean reference patch in 81 fp32 registers (fully unrolled)
and, per disparity, streams the 81 right-image pixels (L1 hits: the block's 128 x 9 window is reused by
all its threads and all disparities) into three running sums. 1M pixels x 64 disparities x 81 taps =
5.4G multiply-adds x 3. nvcc 13 (sm_90) gives the kernel 128 registers (no spills), so an SM holds 4
blocks of 128 (16 warps, 25% theoretical occupancy), and each warp's loop body is a chain of dependent
FMAs on three accumulators fed by L1 loads (~33-cycle latency): too few warps to hide it.
The hypothesis: low_occupancy (registers): ncu theoretical occupancy 25% (register limit), achieved
about the same, issue ~0.3-0.5 per cycle, stalls short / long scoreboard (L1) and wait, SM% ~35-55%, L1
~40-60%, DRAM ~0, ~1-3 ms. The fix: 64 or fewer registers (a 7 x 7 patch kept in shared memory, or
split the 81 taps over lanes), or sliding-window box sums (ZNCC via integral images: O(1) per disparity).
"""

import torch
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

#define RAD 4
#define PW (2 * RAD + 1)
#define NPIX (PW * PW)

__global__ void __launch_bounds__(128) zncc_stereo(const __half* __restrict__ left, const __half* __restrict__ right,
                                                   __half* __restrict__ out, int height, int width, int ndisp) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= width) return;
    int rows[PW];
#pragma unroll
    for (int k = 0; k < PW; ++k) rows[k] = min(max(y + k - RAD, 0), height - 1) * width;
    float l[NPIX];
    float mean = 0.0f;
#pragma unroll
    for (int k = 0; k < PW; ++k)
#pragma unroll
        for (int m = 0; m < PW; ++m) {
            int xc = min(max(x + m - RAD, 0), width - 1);
            l[k * PW + m] = __half2float(left[rows[k] + xc]);
            mean += l[k * PW + m];
        }
    mean *= 1.0f / NPIX;
    float var_l = 0.0f;
#pragma unroll
    for (int i = 0; i < NPIX; ++i) { l[i] -= mean; var_l += l[i] * l[i]; }
    float best = -2.0f;
    int best_d = 0;
    for (int d = 0; d < ndisp; ++d) {
        float sr = 0.0f, srr = 0.0f, slr = 0.0f;
#pragma unroll
        for (int m = 0; m < PW; ++m) {
            int xc = min(max(x - d + m - RAD, 0), width - 1);
#pragma unroll
            for (int k = 0; k < PW; ++k) {
                float v = __half2float(right[rows[k] + xc]);
                sr += v;
                srr = fmaf(v, v, srr);
                slr = fmaf(l[k * PW + m], v, slr);
            }
        }
        float var_r = srr - sr * sr * (1.0f / NPIX);
        float zncc = slr / sqrtf(var_l * var_r + 1e-12f);
        if (zncc > best) { best = zncc; best_d = d; }
    }
    size_t o = (size_t)y * width + x;
    out[o] = __float2half((float)best_d);
    out[(size_t)height * width + o] = __float2half(best);
}

torch::Tensor zncc_match(torch::Tensor left, torch::Tensor right, int64_t ndisp) {
    TORCH_CHECK(left.is_cuda() && left.scalar_type() == torch::kHalf && left.is_contiguous() && right.is_contiguous());
    int height = left.size(0), width = left.size(1);
    auto out = torch::empty({2, height, width}, left.options());
    dim3 grid((width + 127) / 128, height);
    zncc_stereo<<<grid, 128>>>(reinterpret_cast<const __half*>(left.data_ptr<at::Half>()),
                               reinterpret_cast<const __half*>(right.data_ptr<at::Half>()),
                               reinterpret_cast<__half*>(out.data_ptr<at::Half>()), height, width, (int)ndisp);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_zncc_stereo_patchregs_fp16_cuda",
    cpp_sources="torch::Tensor zncc_match(torch::Tensor left, torch::Tensor right, int64_t ndisp);",
    cuda_sources=CUDA_SRC,
    functions=["zncc_match"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

H = 1024
W = 1024
NDISP = 64
RAD = 4


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    tex = torch.rand(1, 1, H, W + NDISP, device="cuda", generator=g)
    tex = F.avg_pool2d(tex, 3, stride=1, padding=1, count_include_pad=False)[0, 0]     # mildly smooth texture
    tex = (tex - tex.min()) / (tex.max() - tex.min())
    yy = torch.arange(H, device="cuda", dtype=torch.float32)[:, None]
    xx = torch.arange(W, device="cuda", dtype=torch.float32)[None, :]
    disp = torch.round(20.0 + 15.0 * torch.sin(xx / 200.0) * torch.cos(yy / 150.0)).long()   # 5..35 px
    left = tex[:, :W]
    # right(y, x') = left(y, x' + d): sample the texture at x' + d
    src = (torch.arange(W, device="cuda")[None, :] + disp).clamp(max=W + NDISP - 1)
    right = torch.gather(tex, 1, src)
    right = right + 0.02 * torch.randn(H, W, device="cuda", generator=g)
    return left.to(torch.float16).contiguous(), right.to(torch.float16).contiguous()


def run(left, right):
    return module.zncc_match(left, right, NDISP)


def reference(left, right):
    h, w = left.shape
    n = (2 * RAD + 1) ** 2
    L = F.pad(left.double()[None, None], (RAD, RAD, RAD, RAD), mode="replicate")[0, 0]
    R = F.pad(right.double()[None, None], (RAD + NDISP, RAD, RAD, RAD), mode="replicate")[0, 0]

    def box(img):  # 9 x 9 sums, valid
        return F.avg_pool2d(img[None, None], 2 * RAD + 1, stride=1)[0, 0] * n

    sl, sll = box(L), box(L * L)
    var_l = sll - sl * sl / n
    best = torch.full((h, w), -2.0, device=left.device, dtype=torch.float64)
    best_d = torch.zeros(h, w, device=left.device, dtype=torch.float64)
    for d in range(NDISP):
        Rd = R[:, NDISP - d: NDISP - d + w + 2 * RAD]
        sr, srr, slr = box(Rd), box(Rd * Rd), box(L * Rd)
        var_r = srr - sr * sr / n
        zncc = (slr - sl * sr / n) / torch.sqrt(var_l * var_r + 1e-12)
        better = zncc > best
        best = torch.where(better, zncc, best)
        best_d = torch.where(better, torch.full_like(best_d, d), best_d)
    return torch.stack([best_d, best]).to(torch.float16)
