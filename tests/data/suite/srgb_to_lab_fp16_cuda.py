"""Planted bottleneck: compute bound (sRGB to CIELAB per pixel with powf and cbrtf), a near miss for low occupancy.

Converts a 4,096 x 8,192 RGBA8 image (134 MB) to planar CIELAB (D65) in fp16 (three planes, 201 MB):
per channel the sRGB transfer function ((c + 0.055) / 1.055)^2.4 with an accurate powf, a 3 x 3
matrix to XYZ, then f(t) = cbrt(t) for each of X, Y, Z and the L, a, b combinations. Each thread
converts 16 pixels (four 16-byte loads, six 16-byte stores): ~4,100 SASS instructions per thread,
~256 per pixel (powf and cbrtf without fast math are long FMA/ALU sequences around MUFU.LG2/EX2/RCP
and a few branches for special values). 33.5M pixels x ~256 = 8.6G thread instructions: ~0.29 ms
at the issue rate, against ~110 us for the 335 MB at 3.05 TB/s. Holding 16 pixels' results costs
registers: 62 per thread (nvcc 13, sm_90), so 4 blocks of 256 threads per SM, 50% theoretical
occupancy, limited by registers; but 8 warps per scheduler, each with a long independent chain of
FP32 work, keep the issue slots busy: the occupancy finding is a near miss. Expected: SM% high
(FMA/ALU pipes), DRAM ~35%. Faster means fewer instructions per pixel (a 256-entry table for the
transfer function, a cheaper cube root), not more warps.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#include <cstdint>
#define PIX 16   // pixels per thread

__device__ __forceinline__ float srgb_to_linear(float c) {
    return c <= 0.04045f ? c * (1.f / 12.92f) : powf((c + 0.055f) * (1.f / 1.055f), 2.4f);
}

__device__ __forceinline__ float lab_f(float t) {
    return t > 0.008856452f ? cbrtf(t) : t * 7.787037f + 16.f / 116.f;
}

__device__ __forceinline__ uint4 pack8(const float* v) {
    uint4 out;
    uint32_t* w = reinterpret_cast<uint32_t*>(&out);
    #pragma unroll
    for (int k = 0; k < 4; ++k) {
        __half2 h = __floats2half2_rn(v[2 * k], v[2 * k + 1]);
        w[k] = *reinterpret_cast<uint32_t*>(&h);
    }
    return out;
}

__global__ void __launch_bounds__(256) srgb_to_lab(const uint4* __restrict__ rgba, uint4* __restrict__ lab, int groups) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;   // one group of 16 pixels
    if (t >= groups) return;
    uint4 px[4] = {rgba[4 * t], rgba[4 * t + 1], rgba[4 * t + 2], rgba[4 * t + 3]};
    const uint32_t* w = reinterpret_cast<const uint32_t*>(px);
    float L[PIX], A[PIX], B[PIX];
    #pragma unroll
    for (int k = 0; k < PIX; ++k) {
        uint32_t v = w[k];   // R, G, B, A bytes
        float r = srgb_to_linear((float)(v & 0xff) * (1.f / 255.f));
        float g = srgb_to_linear((float)((v >> 8) & 0xff) * (1.f / 255.f));
        float b = srgb_to_linear((float)((v >> 16) & 0xff) * (1.f / 255.f));
        float x = (0.4124564f * r + 0.3575761f * g + 0.1804375f * b) * (1.f / 0.95047f);
        float y = 0.2126729f * r + 0.7151522f * g + 0.0721750f * b;
        float z = (0.0193339f * r + 0.1191920f * g + 0.9503041f * b) * (1.f / 1.08883f);
        float fx = lab_f(x), fy = lab_f(y), fz = lab_f(z);
        L[k] = 116.f * fy - 16.f;
        A[k] = 500.f * (fx - fy);
        B[k] = 200.f * (fy - fz);
    }
    uint4* lp = lab + 2 * t;                         // 16 halves = two 16-byte stores per plane
    lp[0] = pack8(L);
    lp[1] = pack8(L + 8);
    lp[2 * groups] = pack8(A);
    lp[2 * groups + 1] = pack8(A + 8);
    lp[4 * groups] = pack8(B);
    lp[4 * groups + 1] = pack8(B + 8);
}

torch::Tensor to_lab(torch::Tensor rgba) {
    int h = rgba.size(0), w = rgba.size(1);
    TORCH_CHECK(rgba.size(2) == 4 && (h * w) % 16 == 0);
    auto lab = torch::empty({3, h, w}, rgba.options().dtype(torch::kFloat16));
    int groups = h * w / 16;
    srgb_to_lab<<<(groups + 255) / 256, 256>>>(reinterpret_cast<const uint4*>(rgba.data_ptr<uint8_t>()),
                                              reinterpret_cast<uint4*>(lab.data_ptr<at::Half>()), groups);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return lab;
}
"""

module = load_inline(
    "kls_srgb_to_lab_fp16_cuda",
    cpp_sources="torch::Tensor to_lab(torch::Tensor rgba);",
    cuda_sources=CUDA_SRC,
    functions=["to_lab"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

H, W = 4096, 8192
RGB_TO_XYZ = [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
WHITE = [0.95047, 1.0, 1.08883]


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    # a smooth colour field (values 8..232) plus sensor noise: dark and bright regions, rarely saturated
    yy = torch.linspace(0, 1, H, device="cuda")[:, None, None]
    xx = torch.linspace(0, 1, W, device="cuda")[None, :, None]
    field = torch.cat([xx.expand(H, W, 1), yy.expand(H, W, 1), (1 - xx * yy).expand(H, W, 1)], dim=2)
    base = 8 + 224 * field
    noise = torch.randn(H, W, 3, device="cuda", generator=g) * 6
    rgb = (base + noise).clamp(0, 255).round().to(torch.uint8)
    alpha = torch.full((H, W, 1), 255, device="cuda", dtype=torch.uint8)
    return (torch.cat([rgb, alpha], dim=2).contiguous(),)


def run(rgba):
    return module.to_lab(rgba)


def reference(rgba):
    c = rgba[..., :3].double() / 255.0
    lin = torch.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = torch.tensor(RGB_TO_XYZ, dtype=torch.float64, device=rgba.device)
    xyz = lin @ m.t() / torch.tensor(WHITE, dtype=torch.float64, device=rgba.device)
    f = torch.where(xyz > 0.008856452, xyz.clamp_min(0.0) ** (1.0 / 3.0), xyz * 7.787037 + 16.0 / 116.0)
    lab = torch.stack([116.0 * f[..., 1] - 16.0, 500.0 * (f[..., 0] - f[..., 1]), 200.0 * (f[..., 1] - f[..., 2])])
    return lab.to(torch.float16)
