"""Planted bottleneck: warp divergence (adaptive sub-stepping: 1 Euler step at rest, 64 near threshold).

One 0.05 ms time step of a network of 2,097,152 Hodgkin-Huxley neurons (state V, m, h, n: fp32 SoA
[4, N], 33.6 MB in, 33.6 MB out; a per-neuron input current, 8.4 MB), with the local time stepping a
large-scale simulator uses to keep forward Euler stable during spikes: a neuron above -50 mV (near
threshold or spiking, ~10% of them, scattered at random) takes 64 sub-steps of dt/64, the rest one step.
Each sub-step evaluates the six rate functions (5 expf, 2 expm1f, 2 IEEE divisions) and the currents,
~150 instructions. One neuron per thread, 8,192 blocks of 256: with 10% fine neurons, ~97% of warps
hold at least one and run all 64 sub-steps with ~3 of 32 lanes active: ~11% of the lane slots do work.
The hypothesis: warp_divergence: average active threads per warp instruction ~3-6 in the sub-step loop
(ncu's thread divergence rule), issue slots busy but for few lanes, DRAM < 10%, ~0.4-1.0 ms against
~25 us for the 75 MB. The fix: compact the fine neurons (a stream-compaction pass) and sub-step them
warp-densely, or sort by state.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

struct HH { float dt, v_fine; int fine_steps; };

__device__ __forceinline__ float vtrap(float x, float k) {   // x / (1 - exp(-x / k)), its limit k at x = 0
    return fabsf(x) < 1e-4f ? k : x / -expm1f(-x / k);
}

__global__ void __launch_bounds__(256) hh_adaptive_step(const float* __restrict__ st, const float* __restrict__ iext,
                                                        float* __restrict__ out, long n, HH p) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = st[i], m = st[n + i], h = st[2 * n + i], nn = st[3 * n + i];
    float I = iext[i];
    int steps = v > p.v_fine ? p.fine_steps : 1;
    float dt = p.dt / steps;
    for (int s = 0; s < steps; ++s) {
        float am = 0.1f * vtrap(v + 40.0f, 10.0f);
        float bm = 4.0f * expf(-(v + 65.0f) / 18.0f);
        float ah = 0.07f * expf(-(v + 65.0f) / 20.0f);
        float bh = 1.0f / (1.0f + expf(-(v + 35.0f) / 10.0f));
        float an = 0.01f * vtrap(v + 55.0f, 10.0f);
        float bn = 0.125f * expf(-(v + 65.0f) / 80.0f);
        float m3h = m * m * m * h, n4 = (nn * nn) * (nn * nn);
        float iion = 120.0f * m3h * (v - 50.0f) + 36.0f * n4 * (v + 77.0f) + 0.3f * (v + 54.387f);
        v += dt * (I - iion);
        m += dt * (am * (1.0f - m) - bm * m);
        h += dt * (ah * (1.0f - h) - bh * h);
        nn += dt * (an * (1.0f - nn) - bn * nn);
    }
    out[i] = v; out[n + i] = m; out[2 * n + i] = h; out[3 * n + i] = nn;
}

torch::Tensor hh_step(torch::Tensor st, torch::Tensor iext, double dt, double v_fine, int64_t fine_steps) {
    TORCH_CHECK(st.dim() == 2 && st.size(0) == 4 && st.scalar_type() == torch::kFloat && st.is_contiguous());
    TORCH_CHECK(iext.scalar_type() == torch::kFloat && iext.is_contiguous() && iext.numel() == st.size(1));
    long n = st.size(1);
    auto out = torch::empty_like(st);
    HH p{(float)dt, (float)v_fine, (int)fine_steps};
    hh_adaptive_step<<<(unsigned)((n + 255) / 256), 256>>>(st.data_ptr<float>(), iext.data_ptr<float>(),
                                                           out.data_ptr<float>(), n, p);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_hh_adaptive_substep_divergent_fp32_cuda",
    cpp_sources="torch::Tensor hh_step(torch::Tensor st, torch::Tensor iext, double dt, double v_fine, "
    "int64_t fine_steps);",
    cuda_sources=CUDA_SRC,
    functions=["hh_step"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

NEURONS = 1 << 21
DT = 0.05          # ms
V_FINE = -50.0     # mV
FINE_STEPS = 64
TOLERANCE = 1e-4   # expf/expm1f in fp32 against float64, over up to 64 sub-steps


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    fine = torch.rand(NEURONS, device="cuda", generator=g) < 0.10
    v_rest = -75.0 + 20.0 * torch.rand(NEURONS, device="cuda", generator=g)           # -75 .. -55 mV
    v_act = -45.0 + 75.0 * torch.rand(NEURONS, device="cuda", generator=g)            # -45 .. +30 mV
    v = torch.where(fine, v_act, v_rest)
    gates = 0.05 + 0.6 * torch.rand(3, NEURONS, device="cuda", generator=g)
    st = torch.cat([v[None], gates], dim=0)
    iext = 15.0 * torch.rand(NEURONS, device="cuda", generator=g)                      # uA/cm^2
    return st.contiguous(), iext.contiguous()


def run(st, iext):
    return module.hh_step(st, iext, DT, V_FINE, FINE_STEPS)


def reference(st, iext):
    s = st.double()
    v, m, h, nn = s[0].clone(), s[1].clone(), s[2].clone(), s[3].clone()
    current = iext.double()
    steps = torch.where(st[0] > V_FINE, FINE_STEPS, 1)
    dt = DT / steps.double()

    def vtrap(x, k):
        safe = torch.where(x.abs() < 1e-4, torch.ones_like(x), x)
        return torch.where(x.abs() < 1e-4, torch.full_like(x, k), safe / -torch.expm1(-safe / k))

    for k in range(FINE_STEPS):
        act = k < steps
        am = 0.1 * vtrap(v + 40.0, 10.0)
        bm = 4.0 * torch.exp(-(v + 65.0) / 18.0)
        ah = 0.07 * torch.exp(-(v + 65.0) / 20.0)
        bh = 1.0 / (1.0 + torch.exp(-(v + 35.0) / 10.0))
        an = 0.01 * vtrap(v + 55.0, 10.0)
        bn = 0.125 * torch.exp(-(v + 65.0) / 80.0)
        iion = 120.0 * m ** 3 * h * (v - 50.0) + 36.0 * nn ** 4 * (v + 77.0) + 0.3 * (v + 54.387)
        v2 = v + dt * (current - iion)
        m2 = m + dt * (am * (1.0 - m) - bm * m)
        h2 = h + dt * (ah * (1.0 - h) - bh * h)
        n2 = nn + dt * (an * (1.0 - nn) - bn * nn)
        v, m, h, nn = (torch.where(act, a, b) for a, b in ((v2, v), (m2, m), (h2, h), (n2, nn)))
    return torch.stack([v, m, h, nn]).float()
