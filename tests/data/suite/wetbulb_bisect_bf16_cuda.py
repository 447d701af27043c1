"""Planted bottleneck: compute bound (a 40-step bisection per grid point; FMA-heavy but not a matrix product).

Psychrometric wet-bulb temperature for post-processing of a weather model (heat-stress products):
16,777,216 grid points (e.g. 16 forecast hours of a 0.1-degree regional domain), 2 m temperature T (C),
relative humidity RH (%) and surface pressure p (hPa), bf16 in, Tw (C) bf16 out: the root of
es(Tw) - 6.6e-4 (1 + 1.15e-3 Tw) p (T - Tw) - RH/100 es(T) = 0 with Bolton's es(T) = 6.112
exp(17.67 T / (T + 243.5)), found by a fixed 40-step bisection on [Td - 1, T + 0.5] (Magnus dew point
first), the robust way met codes do it: every step an expf, an IEEE division and ~12 FMA/ALU, ~900
instructions per point, no branches that diverge (the halving is a select). 8 bytes per point (134 MB,
~45 us at the roof) against ~15G lane-instructions (~0.45 ms at the SM's issue rate). One point per
thread, 65,536 blocks of 256. The hypothesis: compute_bound: SM% ~80-95% (FMA/ALU pipes busy, issue
slots nearly full), DRAM < 15%, ~0.5-0.8 ms. Not tensor_cores_unused: no matrix product anywhere;
the fix is fewer steps (Newton, 4-5 iterations) or __expf / __fdividef.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

__device__ __forceinline__ float es_hpa(float t) { return 6.112f * expf(17.67f * t / (t + 243.5f)); }

__global__ void __launch_bounds__(256) wetbulb_bisect(const __nv_bfloat16* __restrict__ tc,
                                                      const __nv_bfloat16* __restrict__ rh,
                                                      const __nv_bfloat16* __restrict__ ps,
                                                      __nv_bfloat16* __restrict__ tw, long n, int steps) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t = __bfloat162float(tc[i]);
    float r = __bfloat162float(rh[i]) * 0.01f;
    float p = __bfloat162float(ps[i]);
    float e = r * es_hpa(t);                                   // vapour pressure
    float g = logf(r) + 17.67f * t / (t + 243.5f);
    float lo = 243.5f * g / (17.67f - g) - 1.0f;               // dew point - 1 C: f(lo) < 0
    float hi = t + 0.5f;                                       // f(hi) > 0
    for (int s = 0; s < steps; ++s) {
        float mid = 0.5f * (lo + hi);
        float f = es_hpa(mid) - 6.6e-4f * (1.0f + 1.15e-3f * mid) * p * (t - mid) - e;
        bool up = f > 0.0f;
        hi = up ? mid : hi;
        lo = up ? lo : mid;
    }
    tw[i] = __float2bfloat16(0.5f * (lo + hi));
}

torch::Tensor wetbulb(torch::Tensor t, torch::Tensor rh, torch::Tensor p, int64_t steps) {
    TORCH_CHECK(t.scalar_type() == torch::kBFloat16 && rh.scalar_type() == torch::kBFloat16 &&
                p.scalar_type() == torch::kBFloat16);
    TORCH_CHECK(t.is_contiguous() && rh.is_contiguous() && p.is_contiguous());
    long n = t.numel();
    TORCH_CHECK(rh.numel() == n && p.numel() == n);
    auto out = torch::empty_like(t);
    auto bf = [](torch::Tensor x) { return reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()); };
    wetbulb_bisect<<<(unsigned)((n + 255) / 256), 256>>>(bf(t), bf(rh), bf(p),
                                                        reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()),
                                                        n, (int)steps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_wetbulb_bisect_bf16_cuda",
    cpp_sources="torch::Tensor wetbulb(torch::Tensor t, torch::Tensor rh, torch::Tensor p, int64_t steps);",
    cuda_sources=CUDA_SRC,
    functions=["wetbulb"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

N = 1 << 24
STEPS = 40


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    t = torch.randn(N, device="cuda", generator=g) * 10.0 + 18.0                  # C
    rh = torch.rand(N, device="cuda", generator=g) * 90.0 + 8.0                   # %
    p = 1013.0 - torch.rand(N, device="cuda", generator=g) * 250.0                # hPa, sea level to ~2 km
    return t.bfloat16().contiguous(), rh.bfloat16().contiguous(), p.bfloat16().contiguous()


def run(t, rh, p):
    return module.wetbulb(t, rh, p, STEPS)


def reference(t, rh, p):
    td, r, pd = t.double(), rh.double() * 0.01, p.double()

    def es(x):
        return 6.112 * torch.exp(17.67 * x / (x + 243.5))

    e = r * es(td)
    g = torch.log(r) + 17.67 * td / (td + 243.5)
    lo = 243.5 * g / (17.67 - g) - 1.0
    hi = td + 0.5
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        up = es(mid) - 6.6e-4 * (1.0 + 1.15e-3 * mid) * pd * (td - mid) - e > 0
        hi = torch.where(up, mid, hi)
        lo = torch.where(up, lo, mid)
    return (0.5 * (lo + hi)).bfloat16()
