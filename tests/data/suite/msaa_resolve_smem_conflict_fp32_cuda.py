"""Planted bottleneck: shared-memory bank conflicts (per-pixel sample runs read with a 16-word stride).

Custom wide-filter MSAA resolve of a deferred renderer: a 3,840 x 2,160 frame with 16 samples per pixel
(fp32 luminance, sample-contiguous per pixel as the multisample target stores it: [2160, 3840, 16],
531 MB), resolved with a 3-pixel horizontal tent filter whose weight depends on each sample's sub-pixel
x offset (a [3, 16] weight table, summing to 1): out[y, x] = sum_d sum_k W[d, k] s[y, x + d, k] (fp32,
[2160, 3840], 33 MB; edge pixels replicated). A block of 256 threads takes 256 pixels of a row, stages
their samples plus one halo pixel each side ((256 + 2) x 16 floats, 16.5 KB, coalesced), then thread t
reads s[(t + 1 + d) * nsamp + k]. The sample count is a run-time argument (the same kernel serves 2x to
16x MSAA), so the reads are scalar LDS.32 with a 16-word stride between lanes: lanes t and t + 2 hit the
same bank, 16-way conflicts: 48 shared loads x 16 wavefronts per warp per 32 pixels. 32,400 blocks.
DRAM needs ~564 MB (~185 us at the roof); the shared pipe needs ~800 wavefronts per 32 pixels.
The hypothesis: shared_bank_conflicts: ~16 wavefronts per shared load request, MIO throttle / short
scoreboard stalls, L1/shared ~80-95% busy, DRAM ~20-35%, ~0.6-1.2 ms. The fix: pad the per-pixel run
to nsamp + 1 words (or a sample-major [k][pixel] staging layout).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void __launch_bounds__(256) msaa_resolve_wide(const float* __restrict__ samp, const float* __restrict__ wt,
                                                         float* __restrict__ out, int width, int nsamp) {
    extern __shared__ float s[];                       // (blockDim.x + 2) pixels x nsamp samples
    int y = blockIdx.y;
    int x0 = blockIdx.x * blockDim.x;
    int tile = (blockDim.x + 2) * nsamp;
    const float* row = samp + (size_t)y * width * nsamp;
    for (int i = threadIdx.x; i < tile; i += blockDim.x) {
        int px = x0 - 1 + i / nsamp;
        px = min(max(px, 0), width - 1);
        s[i] = row[(size_t)px * nsamp + i % nsamp];
    }
    __syncthreads();
    int x = x0 + threadIdx.x;
    if (x >= width) return;
    float acc = 0.f;
    for (int d = 0; d < 3; ++d) {
        const float* sp = s + (threadIdx.x + d) * nsamp;
        const float* wp = wt + d * nsamp;
        for (int k = 0; k < nsamp; ++k) acc += wp[k] * sp[k];
    }
    out[(size_t)y * width + x] = acc;
}

torch::Tensor resolve(torch::Tensor samp, torch::Tensor wt) {
    TORCH_CHECK(samp.dim() == 3 && samp.scalar_type() == torch::kFloat && samp.is_contiguous());
    TORCH_CHECK(wt.dim() == 2 && wt.size(0) == 3 && wt.scalar_type() == torch::kFloat && wt.is_contiguous());
    int height = samp.size(0), width = samp.size(1), nsamp = samp.size(2);
    TORCH_CHECK(wt.size(1) == nsamp);
    auto out = torch::empty({height, width}, samp.options());
    size_t smem = (size_t)(256 + 2) * nsamp * sizeof(float);
    dim3 grid((unsigned)((width + 255) / 256), (unsigned)height);
    msaa_resolve_wide<<<grid, 256, smem>>>(samp.data_ptr<float>(), wt.data_ptr<float>(), out.data_ptr<float>(), width,
                                           nsamp);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_msaa_resolve_smem_conflict_fp32_cuda",
    cpp_sources="torch::Tensor resolve(torch::Tensor samp, torch::Tensor wt);",
    cuda_sources=CUDA_SRC,
    functions=["resolve"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

HEIGHT = 2160
WIDTH = 3840
SAMPLES = 16


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    base = torch.rand(HEIGHT, WIDTH, 1, device="cuda", generator=g) * 4.0             # HDR luminance
    edge = torch.rand(HEIGHT, WIDTH, SAMPLES, device="cuda", generator=g) < 0.5       # geometry edges in the pixel
    samp = torch.where(edge, base * 0.25, base).contiguous()
    sx = torch.rand(SAMPLES, device="cuda", generator=g) - 0.5                        # sample x offsets in the pixel
    d = torch.tensor([-1.0, 0.0, 1.0], device="cuda")
    wt = (1.5 - (d[:, None] + sx[None, :]).abs()).clamp(min=0.0)                      # tent of radius 1.5 pixels
    return samp, (wt / wt.sum()).contiguous()


def run(samp, wt):
    return module.resolve(samp, wt)


def reference(samp, wt):
    s = samp.double()
    pad = torch.cat([s[:, :1], s, s[:, -1:]], dim=1)
    w = wt.double()
    width = samp.shape[1]
    return sum((pad[:, d:d + width, :] * w[d]).sum(dim=-1) for d in range(3)).float()
