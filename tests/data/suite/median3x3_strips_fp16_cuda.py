"""Planted bottleneck: small grid (a 3x3 median filter where one block walks a 64-row strip of the image).

3x3 median (replicated borders) of a 4,096 x 2,048 fp16 image (16.8 MB in, 16.8 MB out), as a
denoising step: the image is cut into 64-row strips and each strip is one block of 256 threads that
walks its rows in order, every thread taking the columns c = tid, tid + 256, ... (8 per row). Per
pixel: 9 loads (L1 hits after the first row), 9 conversions and the 19-exchange median network
(Devillard's opt_med9: 38 FMNMX), ~80 instructions. The grid is 4,096 / 64 = 64 blocks for 132 SMs:
68 SMs idle and 8 warps (of 64) on each busy one, so each scheduler has two warps to hide the load and
min/max latencies with: ~0.4-0.8 ms against ~11 us for the bytes. It looks like compute-heavy filter
code (min/max chains), but the ALU pipe is far from busy over the whole GPU. The hypothesis: ncu's
LaunchConfiguration ('grid too small', 64 blocks < 132 SMs, 0.06 waves), SM% and MEM% low. The fix:
4-8-row strips (512-1,024 blocks), or a 2D tiling of the image.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

#define SORT2(a, b) { float lo_ = fminf(a, b); b = fmaxf(a, b); a = lo_; }

__global__ void __launch_bounds__(256) median3x3_strips(const __half* __restrict__ img, __half* __restrict__ out,
                                                        int h, int w, int rows_per_block) {
    int r0 = blockIdx.x * rows_per_block;
    int r1 = min(h, r0 + rows_per_block);
    for (int r = r0; r < r1; ++r) {                       // one strip of rows per block, in order
        const __half* up = img + (size_t)max(r - 1, 0) * w;
        const __half* mid = img + (size_t)r * w;
        const __half* dn = img + (size_t)min(r + 1, h - 1) * w;
        for (int c = threadIdx.x; c < w; c += blockDim.x) {
            int cl = max(c - 1, 0), cr = min(c + 1, w - 1);
            float p0 = __half2float(up[cl]), p1 = __half2float(up[c]), p2 = __half2float(up[cr]);
            float p3 = __half2float(mid[cl]), p4 = __half2float(mid[c]), p5 = __half2float(mid[cr]);
            float p6 = __half2float(dn[cl]), p7 = __half2float(dn[c]), p8 = __half2float(dn[cr]);
            SORT2(p1, p2) SORT2(p4, p5) SORT2(p7, p8) SORT2(p0, p1) SORT2(p3, p4) SORT2(p6, p7)
            SORT2(p1, p2) SORT2(p4, p5) SORT2(p7, p8) SORT2(p0, p3) SORT2(p5, p8) SORT2(p4, p7)
            SORT2(p3, p6) SORT2(p1, p4) SORT2(p2, p5) SORT2(p4, p7) SORT2(p4, p2) SORT2(p6, p4)
            SORT2(p4, p2)
            out[(size_t)r * w + c] = __float2half(p4);
        }
    }
}

torch::Tensor median3x3(torch::Tensor img, int64_t rows_per_block) {
    TORCH_CHECK(img.dim() == 2 && img.scalar_type() == torch::kHalf && img.is_contiguous());
    int h = img.size(0), w = img.size(1);
    auto out = torch::empty_like(img);
    int blocks = (int)((h + rows_per_block - 1) / rows_per_block);
    median3x3_strips<<<blocks, 256>>>(reinterpret_cast<const __half*>(img.data_ptr<at::Half>()),
                                      reinterpret_cast<__half*>(out.data_ptr<at::Half>()), h, w, (int)rows_per_block);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_median3x3_strips_fp16_cuda",
    cpp_sources="torch::Tensor median3x3(torch::Tensor img, int64_t rows_per_block);",
    cuda_sources=CUDA_SRC,
    functions=["median3x3"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

H = 4096
W = 2048
ROWS_PER_BLOCK = 64


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    clean = torch.linspace(0, 1, W, device="cuda")[None, :].expand(H, W)
    noise = torch.rand(H, W, device="cuda", generator=g)
    img = torch.where(noise < 0.1, torch.rand(H, W, device="cuda", generator=g), clean)  # salt-and-pepper-ish
    return (img.half().contiguous(),)


def run(img):
    return module.median3x3(img, ROWS_PER_BLOCK)


def reference(img):
    p = torch.nn.functional.pad(img.float()[None, None], (1, 1, 1, 1), mode="replicate")[0, 0].half()
    h, w = img.shape
    taps = torch.stack([p[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)])
    return taps.median(dim=0).values
