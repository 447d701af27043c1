"""Planted bottleneck: register spills (local memory: per-thread radial-shell arrays indexed at run time).

Solid-phase lithium diffusion in the active-material particles of a pseudo-2D (Newman / DFN) battery
model: 262,144 particles (electrode nodes x particle-size classes), each a sphere discretised into
NR = 24 radial nodes (a run-time argument, up to 32), advanced 32 implicit-Euler steps of
dc/dt = D / r^2 d/dr (r^2 dc/dr) with the surface flux j[step, particle] from the electrolyte solver
(fp32 [32, P] in, 33.5 MB). Each step builds the tridiagonal system and solves it with the Thomas
algorithm in three per-thread arrays float c[32], cp[32], dp[32]: the node count is a run-time value, so
the loops are not unrolled and the arrays live in local memory (384-byte stack frame; ptxas reports no
spill bytes, the arrays are local by construction). Per thread and step ~7 x 24 local accesses:
~1.4G local loads/stores (5.6 GB), while the real data are 33.5 MB of fluxes + 25 MB of concentrations.
1,024 blocks of 256. Out: the final concentration profile, fp32 [NR, P] (node-major, coalesced).
The hypothesis: register_spills (local memory): local load/store instructions dominating the LSU,
L1 hit rate moderate (2048 threads x 288 B = 590 KB of live arrays per SM > 256 KB L1), L2 traffic
far above the bytes needed, DRAM low-moderate, ~0.4-1.2 ms. The fix: a compile-time node count
(template NR, fully unrolled Thomas in registers), or one warp per particle with the nodes across lanes
(a parallel cyclic-reduction tridiagonal solve).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define MAXR 32

__global__ void __launch_bounds__(256) particle_diffusion(const float* __restrict__ c0, const float* __restrict__ flux,
                                                          const float* __restrict__ lam_p, const float* __restrict__ beta_p,
                                                          float* __restrict__ out, int particles, int nr, int steps) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= particles) return;
    float c[MAXR], cp[MAXR], dp[MAXR];
    for (int i = 0; i < nr; ++i) c[i] = c0[(size_t)i * particles + p];
    float lam = lam_p[p];        // D dt / dr^2
    float beta = beta_p[p];      // 2 dr / D (flux -> ghost-node jump)
    int last = nr - 1;
    for (int s = 0; s < steps; ++s) {
        float j = flux[(size_t)s * particles + p];
        // Thomas forward sweep. Row 0 (centre, symmetry): (1 + 6 lam) c0 - 6 lam c1 = c0_old
        float b = 1.0f + 6.0f * lam;
        cp[0] = -6.0f * lam / b;
        dp[0] = c[0] / b;
        for (int i = 1; i < last; ++i) {
            float inv_i = 1.0f / (float)i;
            float a = -lam * (1.0f - inv_i);
            float cc = -lam * (1.0f + inv_i);
            float m = 1.0f / (1.0f + 2.0f * lam - a * cp[i - 1]);
            cp[i] = cc * m;
            dp[i] = (c[i] - a * dp[i - 1]) * m;
        }
        {   // surface row: ghost node c_N = c_{N-2} - beta j
            float inv_i = 1.0f / (float)last;
            float cc = -lam * (1.0f + inv_i);
            float a = -lam * (1.0f - inv_i) + cc;
            float rhs = c[last] + cc * beta * j;
            float m = 1.0f / (1.0f + 2.0f * lam - a * cp[last - 1]);
            dp[last] = (rhs - a * dp[last - 1]) * m;
        }
        c[last] = dp[last];
        for (int i = last - 1; i >= 0; --i) c[i] = dp[i] - cp[i] * c[i + 1];
    }
    for (int i = 0; i < nr; ++i) out[(size_t)i * particles + p] = c[i];
}

torch::Tensor diffuse(torch::Tensor c0, torch::Tensor flux, torch::Tensor lam, torch::Tensor beta) {
    TORCH_CHECK(c0.is_cuda() && c0.scalar_type() == torch::kFloat && c0.is_contiguous() && flux.is_contiguous());
    int nr = c0.size(0), particles = c0.size(1), steps = flux.size(0);
    TORCH_CHECK(nr >= 3 && nr <= MAXR && flux.size(1) == particles);
    auto out = torch::empty_like(c0);
    particle_diffusion<<<(particles + 255) / 256, 256>>>(c0.data_ptr<float>(), flux.data_ptr<float>(), lam.data_ptr<float>(),
                                                         beta.data_ptr<float>(), out.data_ptr<float>(), particles, nr, steps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_p2d_particle_diffusion_local_fp32_cuda",
    cpp_sources="torch::Tensor diffuse(torch::Tensor c0, torch::Tensor flux, torch::Tensor lam, torch::Tensor beta);",
    cuda_sources=CUDA_SRC,
    functions=["diffuse"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

PARTICLES = 262144
NR = 24
STEPS = 32
TOLERANCE = 1e-5


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    radius = 2e-6 + 8e-6 * torch.rand(PARTICLES, device="cuda", generator=g)            # m, size classes
    diff = 1e-14 * (0.5 + torch.rand(PARTICLES, device="cuda", generator=g))            # m^2/s
    dt = 1.0                                                                             # s
    dr = radius / (NR - 1)
    lam = (diff * dt / dr ** 2).float()
    beta = (2.0 * dr / diff).float()
    # flux normalised to c_max: j in 1/s * m; a 1C-like discharge pulse with spatial variation
    node = torch.arange(PARTICLES, device="cuda") // 128
    scale = 0.5 + torch.rand(PARTICLES, device="cuda", generator=g)
    t = torch.arange(STEPS, device="cuda", dtype=torch.float32)[:, None]
    j = 2e-9 * scale[None, :] * (1.0 + 0.3 * torch.sin(t / 5.0 + node[None, :].float() * 0.01)) * (radius[None, :] / 5e-6)
    c0 = (0.6 + 0.2 * torch.rand(1, PARTICLES, device="cuda", generator=g)).expand(NR, PARTICLES)
    c0 = c0 + 0.01 * torch.linspace(0, 1, NR, device="cuda")[:, None]                   # slight gradient
    return c0.float().contiguous(), j.float().contiguous(), lam.contiguous(), beta.contiguous()


def reference(c0, flux, lam, beta):
    nr, steps = c0.shape[0], flux.shape[0]
    c = [c0[i].double() for i in range(nr)]
    lam, beta = lam.double(), beta.double()
    last = nr - 1
    for s in range(steps):
        j = flux[s].double()
        b = 1.0 + 6.0 * lam
        cp, dp = [None] * nr, [None] * nr
        cp[0] = -6.0 * lam / b
        dp[0] = c[0] / b
        for i in range(1, last):
            a = -lam * (1.0 - 1.0 / i)
            cc = -lam * (1.0 + 1.0 / i)
            m = 1.0 / (1.0 + 2.0 * lam - a * cp[i - 1])
            cp[i] = cc * m
            dp[i] = (c[i] - a * dp[i - 1]) * m
        cc = -lam * (1.0 + 1.0 / last)
        a = -lam * (1.0 - 1.0 / last) + cc
        m = 1.0 / (1.0 + 2.0 * lam - a * cp[last - 1])
        dp[last] = (c[last] + cc * beta * j - a * dp[last - 1]) * m
        c[last] = dp[last]
        for i in range(last - 1, -1, -1):
            c[i] = dp[i] - cp[i] * c[i + 1]
    return torch.stack(c).float()


def run(c0, flux, lam, beta):
    return module.diffuse(c0, flux, lam, beta)
