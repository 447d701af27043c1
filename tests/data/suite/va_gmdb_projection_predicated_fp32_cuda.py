"""Planted bottleneck: compute bound (near miss for warp_divergence: the data-dependent branches compile to selects).

Stochastic reserve for a variable annuity with a guaranteed minimum death benefit (GMDB) and an annual
ratchet: 256 policy cohorts (issue age, fund value, guarantee) x 1,024 real-world equity scenarios,
projected monthly for 30 years (360 steps). Each thread is one (cohort, scenario) path: per month a
counter-based hash gives two uniforms, Box-Muller a normal (logf, sqrtf, cospif), the fund grows by
expf(mu dt + sigma sqrt(dt) z) less fees, the Makeham monthly death probability needs two expf, and
then the policy logic branches on the path's own state: a lower lapse rate while the guarantee is in
the money (if G > F: 0.4x the base rate), the death-benefit shortfall (if F < G) added to the present
value, the ratchet on each anniversary (if F > G). Lanes of a warp are different scenarios, so these
conditions differ from lane to lane - but each branch body is one or two arithmetic instructions,
which nvcc turns into predicated instructions / FSEL (the SASS of the loop has no branch that depends on them; the only
jumps are the never-taken slow paths of sqrtf / logf). 262,144 threads (1,024 blocks of 256, one
wave at full occupancy), ~94M path-months at ~148 SASS instructions each (~435M warp instructions);
fp32 out [256, 1024] (PV of the GMDB claims).
The hypothesis: compute_bound: SM% ~75-90% (issue slots, FMA / ALU / XU: the hash's integer multiplies,
the MUFU logs, exps, rsqrt, the cospi range reduction), warp execution efficiency ~100% (no divergent
branch inside the loop), DRAM ~0%, ~0.5-0.8 ms. The fix: fewer instructions per step (a cheaper
generator such as Philox with 4 normals per call, exp2f with pre-scaled constants, the mortality table
precomputed per cohort and age).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t mix32(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

__global__ void __launch_bounds__(256) va_gmdb_projection(const float* __restrict__ age0, const float* __restrict__ fund0,
                                                          const float* __restrict__ guar0, float* __restrict__ pv_out,
                                                          int cohorts, int scenarios, int months, float mu_dt,
                                                          float sig_sqdt, float keep_fee, float disc_m, float mk_a,
                                                          float mk_b, float mk_c, float lapse_base, uint32_t seed) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= cohorts * scenarios) return;
    int c = t / scenarios;
    float age = age0[c], F = fund0[c], G = guar0[c];
    float inforce = 1.0f, pv = 0.0f, df = 1.0f;
    uint32_t key = mix32(seed ^ ((uint32_t)t * 0x9E3779B9U));
    for (int m = 0; m < months; ++m) {
        uint32_t h1 = mix32(key + (uint32_t)m);
        uint32_t h2 = mix32(h1 ^ 0x85EBCA6BU);
        float u1 = ((float)(h1 >> 8) + 0.5f) * (1.0f / 16777216.0f);
        float u2 = (float)(h2 >> 8) * (1.0f / 16777216.0f);
        float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
        F *= expf(mu_dt + sig_sqdt * z) * keep_fee;
        float x = age + (float)m * (1.0f / 12.0f);
        float q = 1.0f - expf(-(mk_a + mk_b * expf(mk_c * x)) * (1.0f / 12.0f));   // Makeham, monthly
        float lapse = lapse_base;
        if (G > F) lapse = 0.4f * lapse_base;                         // in-the-money guarantees lapse less
        if (F < G) pv += df * inforce * q * (G - F);                  // death-benefit shortfall
        inforce *= (1.0f - q) * (1.0f - lapse);
        if ((m % 12) == 11 && F > G) G = F;                           // annual ratchet
        df *= disc_m;
    }
    pv_out[t] = pv;
}

torch::Tensor gmdb_reserve(torch::Tensor age0, torch::Tensor fund0, torch::Tensor guar0, int64_t scenarios,
                           int64_t months, double mu_dt, double sig_sqdt, double keep_fee, double disc_m,
                           double mk_a, double mk_b, double mk_c, double lapse_base, int64_t seed) {
    TORCH_CHECK(age0.is_cuda() && age0.scalar_type() == torch::kFloat && age0.is_contiguous());
    TORCH_CHECK(fund0.sizes() == age0.sizes() && guar0.sizes() == age0.sizes());
    int cohorts = age0.numel();
    auto out = torch::empty({cohorts, scenarios}, age0.options());
    int n = cohorts * (int)scenarios;
    va_gmdb_projection<<<(n + 255) / 256, 256>>>(age0.data_ptr<float>(), fund0.data_ptr<float>(), guar0.data_ptr<float>(),
                                                 out.data_ptr<float>(), cohorts, (int)scenarios, (int)months,
                                                 (float)mu_dt, (float)sig_sqdt, (float)keep_fee, (float)disc_m,
                                                 (float)mk_a, (float)mk_b, (float)mk_c, (float)lapse_base,
                                                 (uint32_t)seed);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_va_gmdb_projection_predicated_fp32_cuda",
    cpp_sources="torch::Tensor gmdb_reserve(torch::Tensor age0, torch::Tensor fund0, torch::Tensor guar0, int64_t scenarios, "
                "int64_t months, double mu_dt, double sig_sqdt, double keep_fee, double disc_m, double mk_a, double mk_b, "
                "double mk_c, double lapse_base, int64_t seed);",
    cuda_sources=CUDA_SRC,
    functions=["gmdb_reserve"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

COHORTS = 256
SCENARIOS = 1024
MONTHS = 360
MU, SIGMA = 0.06, 0.18                 # real-world equity drift and volatility (annual)
FEE = 0.015                            # annual M&E + fund fees
RATE = 0.03                            # discount rate (annual)
MK_A, MK_B, MK_C = 2.2e-4, 2.7e-6, 0.124   # Makeham: mu(x) = A + B exp(c x)
LAPSE = 0.005                          # monthly base lapse
SEED = 20240613
TOLERANCE = 1e-3  # fp32 paths of 360 compounded steps vs float64; the lapse rate switches at F = G (near-ties flip)


def _params():
    dt = 1.0 / 12.0
    return dict(mu_dt=(MU - 0.5 * SIGMA ** 2) * dt, sig_sqdt=SIGMA * dt ** 0.5, keep_fee=1.0 - FEE * dt,
                disc_m=(1.0 + RATE) ** -dt)


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    age0 = 55.0 + 20.0 * torch.rand(COHORTS, device="cuda", generator=g)
    fund0 = 100.0 * (0.6 + 0.8 * torch.rand(COHORTS, device="cuda", generator=g))
    guar0 = fund0 * (0.8 + 0.5 * torch.rand(COHORTS, device="cuda", generator=g))    # some start in the money
    return age0.contiguous(), fund0.contiguous(), guar0.contiguous()


def run(age0, fund0, guar0):
    p = _params()
    return module.gmdb_reserve(age0, fund0, guar0, SCENARIOS, MONTHS, p["mu_dt"], p["sig_sqdt"], p["keep_fee"],
                               p["disc_m"], MK_A, MK_B, MK_C, LAPSE, SEED)


M32 = 0xFFFFFFFF


def _mul32(x, c):
    """(x * c) mod 2^32 for int64 tensors holding uint32 values, without int64 overflow."""
    lo = x * (c & 0xFFFF)
    hi = (x * (c >> 16)) & 0xFFFF
    return (lo + (hi << 16)) & M32


def _mix32(x):
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def reference(age0, fund0, guar0):
    p = _params()
    dev = age0.device
    n = age0.numel() * SCENARIOS
    t = torch.arange(n, device=dev, dtype=torch.int64)
    c = t // SCENARIOS
    age, F, G = age0.double()[c], fund0.double()[c], guar0.double()[c]
    inforce = torch.ones(n, device=dev, dtype=torch.float64)
    pv = torch.zeros_like(inforce)
    df = 1.0
    key = _mix32(SEED ^ _mul32(t, 0x9E3779B9))
    for m in range(MONTHS):
        h1 = _mix32((key + m) & M32)
        h2 = _mix32(h1 ^ 0x85EBCA6B)
        u1 = ((h1 >> 8).double() + 0.5) / 16777216.0
        u2 = (h2 >> 8).double() / 16777216.0
        z = torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(2.0 * torch.pi * u2)
        F = F * torch.exp(p["mu_dt"] + p["sig_sqdt"] * z) * p["keep_fee"]
        x = age + m / 12.0
        q = 1.0 - torch.exp(-(MK_A + MK_B * torch.exp(MK_C * x)) / 12.0)
        lapse = torch.where(G > F, torch.full_like(F, 0.4 * LAPSE), torch.full_like(F, LAPSE))
        pv = pv + torch.where(F < G, df * inforce * q * (G - F), torch.zeros_like(F))
        inforce = inforce * (1.0 - q) * (1.0 - lapse)
        if m % 12 == 11:
            G = torch.maximum(G, F)
        df = df * p["disc_m"]
    return pv.float().reshape(age0.numel(), SCENARIOS)
