"""Planted bottleneck: warp divergence (rare threshold exceedances in a time series refined by a Newton loop).

1,048,576 time series of 32 steps (fp32, laid out [step, series]: 128 MB), one series per thread. Each
step updates an EWMA (2 FLOPs); a sample above 1.86 (standard normal: ~3.1% of samples) is an
exceedance whose tail score W(x) (Lambert W, w e^w = x) is refined by 32 Newton steps (expf, an IEEE
divide: ~25 instructions each, ~800 per exceedance). In a warp, ~63% of steps have at least one lane
with an exceedance and then ~1 lane (1.0 on average, rarely more) runs the 800-instruction loop while 31
wait: nearly all issued instructions run with ~1-2 of 32 lanes active. ~0.5G warp instructions,
~0.4-0.8 ms, against ~45 us for the 134 MB read at 3.05 TB/s. The hypothesis: ncu ThreadDivergence
(average active threads per warp instruction ~2-4 of 32), SM% moderate with issue slots used by
nearly empty warps. The fix: compact the exceedances (a ballot / queue per warp, then one lane per
exceedance), so that a warp refines 32 of them at once.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void __launch_bounds__(256) lambertw_events_divergent(const float* __restrict__ x, float* __restrict__ out,
                                                                 int series, int steps, float thresh, int iters) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;   // one series per thread
    if (s >= series) return;
    float ewma = 0.f, score = 0.f;
    for (int t = 0; t < steps; ++t) {
        float v = x[(size_t)t * series + s];
        ewma = 0.9f * ewma + 0.1f * v;
        if (v > thresh) {                              // rare exceedance: refine its tail score W(v)
            float w = log1pf(v);
            for (int it = 0; it < iters; ++it) {
                float e = expf(w);
                w -= (w * e - v) / (e * (w + 1.f));
            }
            score += w;
        }
    }
    out[s] = ewma;
    out[series + s] = score;
}

torch::Tensor lambertw_events(torch::Tensor x, double thresh, int64_t iters) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat && x.is_contiguous());
    int steps = x.size(0), series = x.size(1);
    auto out = torch::empty({2, series}, x.options());
    lambertw_events_divergent<<<(series + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), series, steps,
                                                            (float)thresh, (int)iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_lambertw_events_divergent_fp32_cuda",
    cpp_sources="torch::Tensor lambertw_events(torch::Tensor x, double thresh, int64_t iters);",
    cuda_sources=CUDA_SRC,
    functions=["lambertw_events"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

SERIES = 1 << 20
STEPS = 32
THRESH = 1.86
ITERS = 32
TOLERANCE = 1e-4  # expf / division rounding differ from torch's by an ulp


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    return (torch.randn(STEPS, SERIES, device="cuda", generator=g),)


def run(x):
    return module.lambertw_events(x, THRESH, ITERS)


def reference(x):
    ewma = torch.zeros_like(x[0])
    score = torch.zeros_like(x[0])
    for t in range(x.shape[0]):
        v = x[t]
        ewma = 0.9 * ewma + 0.1 * v
        mask = v > THRESH
        vv = torch.where(mask, v, torch.ones_like(v))
        w = torch.log1p(vv)
        for _ in range(ITERS):
            e = torch.exp(w)
            w = w - (w * e - vv) / (e * (w + 1.0))
        score = score + torch.where(mask, w, torch.zeros_like(w))
    return torch.stack([ewma, score])
