"""Planted bottleneck: warp divergence (~12% of particles, scattered, run a 32-step collision projection).

Body collision of a position-based-dynamics cloth solver (games / VFX): 2,097,152 cloth particles
(SoA [3, N] fp32), processed in graph-colour order, so particles that touch the body are scattered
over the array. The body is a smooth union (log-sum-exp, k = 60 / m) of 16 spheres (a character proxy).
Each thread evaluates the signed distance once; the ~12% of particles closer than the cloth thickness
(1 cm) then run 32 projection steps p <- p - (sdf(p) - thickness) grad sdf(p) (16 spheres, sqrt,
exp, division each), the rest are done. With ~12% of lanes in contact, ~98% of warps run all 32 steps
with ~4 active lanes. 8,192 blocks of 256; output [3, N] fp32.
The hypothesis: warp_divergence: ~3-6 active threads per warp instruction, ncu's thread-divergence
rule, issue slots busy with few lanes (SM% moderate-high), DRAM < 10%, ~0.3-0.8 ms. The fix: compact
the contact particles (a stream compaction) and project them warp-densely.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define NSPH 16

__device__ float body_sdf(float px, float py, float pz, const float* __restrict__ sph, float k,
                          float* gx, float* gy, float* gz) {
    float dmin = 1e30f;
#pragma unroll 1
    for (int s = 0; s < NSPH; ++s) {
        float dx = px - sph[4 * s], dy = py - sph[4 * s + 1], dz = pz - sph[4 * s + 2];
        dmin = fminf(dmin, sqrtf(dx * dx + dy * dy + dz * dz) - sph[4 * s + 3]);
    }
    float sw = 0.0f, ax = 0.0f, ay = 0.0f, az = 0.0f;
#pragma unroll 1
    for (int s = 0; s < NSPH; ++s) {
        float dx = px - sph[4 * s], dy = py - sph[4 * s + 1], dz = pz - sph[4 * s + 2];
        float r = sqrtf(dx * dx + dy * dy + dz * dz);
        float w = expf(-k * (r - sph[4 * s + 3] - dmin));
        float inv = w / r;
        ax += dx * inv; ay += dy * inv; az += dz * inv;
        sw += w;
    }
    *gx = ax / sw; *gy = ay / sw; *gz = az / sw;
    return dmin - logf(sw) / k;
}

__global__ void __launch_bounds__(256) cloth_collide(const float* __restrict__ pos, const float* __restrict__ sph,
                                                     float* __restrict__ out, int n, int steps, float k, float thick) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float px = pos[i], py = pos[n + i], pz = pos[2 * n + i];
    float gx, gy, gz;
    float d = body_sdf(px, py, pz, sph, k, &gx, &gy, &gz);
    if (d < thick) {
        for (int s = 0; s < steps; ++s) {
            float c = d - thick;
            px -= c * gx; py -= c * gy; pz -= c * gz;
            d = body_sdf(px, py, pz, sph, k, &gx, &gy, &gz);
        }
    }
    out[i] = px; out[n + i] = py; out[2 * n + i] = pz;
}

torch::Tensor collide(torch::Tensor pos, torch::Tensor sph, int64_t steps, double k, double thick) {
    TORCH_CHECK(pos.dim() == 2 && pos.size(0) == 3 && pos.scalar_type() == torch::kFloat && pos.is_contiguous());
    TORCH_CHECK(sph.numel() == 4 * NSPH && sph.scalar_type() == torch::kFloat && sph.is_contiguous());
    int n = pos.size(1);
    auto out = torch::empty_like(pos);
    cloth_collide<<<(n + 255) / 256, 256>>>(pos.data_ptr<float>(), sph.data_ptr<float>(), out.data_ptr<float>(), n,
                                            (int)steps, (float)k, (float)thick);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_cloth_sdf_collide_divergent_fp32_cuda",
    cpp_sources="torch::Tensor collide(torch::Tensor pos, torch::Tensor sph, int64_t steps, double k, double thick);",
    cuda_sources=CUDA_SRC,
    functions=["collide"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

N = 1 << 21
SPHERES = 16
STEPS = 32
K = 60.0
THICK = 0.01
TOLERANCE = 1e-5


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    t = torch.linspace(0.0, 1.0, SPHERES, device="cuda")
    centers = torch.stack([0.15 * torch.sin(6.0 * t), 1.7 * t, 0.1 * torch.cos(5.0 * t)], 1)     # a spine, m
    radii = 0.12 + 0.04 * torch.rand(SPHERES, device="cuda", generator=g)
    sph = torch.cat([centers, radii[:, None]], 1)
    # cloth particles around the body: 8% placed inside, ~4% more land inside a neighbouring sphere
    anchor = sph[torch.randint(0, SPHERES, (N,), device="cuda", generator=g)]
    direc = torch.randn(N, 3, device="cuda", generator=g)
    direc = direc / direc.norm(dim=1, keepdim=True)
    inside = torch.rand(N, device="cuda", generator=g) < 0.08
    rad = torch.where(inside, 0.6 * anchor[:, 3],
                      anchor[:, 3] + 0.25 + 0.15 * torch.rand(N, device="cuda", generator=g))
    pos = anchor[:, :3] + direc * rad[:, None]
    return pos.t().contiguous(), sph.contiguous()


def run(pos, sph):
    return module.collide(pos, sph, STEPS, K, THICK)


def _sdf(p, sph):
    diff = p[:, None, :] - sph[None, :, :3]
    r = diff.norm(dim=2)
    dist = r - sph[None, :, 3]
    dmin = dist.min(1, keepdim=True).values
    w = torch.exp(-K * (dist - dmin))
    sw = w.sum(1, keepdim=True)
    grad = (diff * (w / r)[:, :, None]).sum(1) / sw
    return dmin[:, 0] - torch.log(sw[:, 0]) / K, grad


def reference(pos, sph):
    p = pos.double().t().contiguous()
    s = sph.double()
    d, grad = _sdf(p, s)
    hit = d < THICK
    q, dq, gq = p[hit], d[hit], grad[hit]
    for _ in range(STEPS):
        q = q - (dq - THICK)[:, None] * gq
        dq, gq = _sdf(q, s)
    p[hit] = q
    return p.t().contiguous().float()
