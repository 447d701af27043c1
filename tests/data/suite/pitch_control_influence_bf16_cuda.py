"""Planted bottleneck: compute bound (near miss for tensor_cores_unused: grid x players FMAs and exps, no matrix product).

Pitch control surfaces (Fernandez & Bornn 2018 player-influence model) for 1,024 tracking frames: each of
the 22 players exerts a bivariate-Gaussian influence whose centre leads the player by half a second of
velocity and whose covariance is stretched along the direction of travel by speed (radius grows with the
distance to the ball); a target location's control for the home team is sigmoid(sum_home I_p - sum_away
I_p), with I_p = exp(-0.5 (x - mu_p)^T Sigma_p^-1 (x - mu_p)). Tracking in: fp32 [1024, 22, 4] (x, y, vx,
vy) + ball fp32 [1024, 2]; out: bf16 [1024, 136, 210] (a 0.5 m grid, 58 MB). Per block (256 threads, one
frame, 1,024 grid points: 4 per thread) the first 22 threads turn the players into (mu, inverse covariance)
in shared memory (atan2-free: cos/sin from the velocity), then every thread evaluates 4 points x 22 players:
dx, dy, a quadratic form (5 FMA-class ops), one expf, one add each: 643M point-player evaluations (~7.7G
FP32 ops + 643M exp). The grid x players structure looks like a GEMM but is not one: the exp sits inside the
sum, so the work is elementwise transcendental + FMA, not an inner product (a K = 6 quadratic-feature GEMM
would leave the exps). 28 blocks per frame, 28,672 blocks.
The hypothesis: compute_bound: SM% ~70-90% (FMA and XU pipes; expf = FMUL + MUFU.EX2 + range fixups), DRAM <
15% (58 MB out), ~0.4-0.6 ms (~17 instructions per evaluation: ~340M warp instructions); tensor pipe 0 is
correct here (no matrix product to move). The fix, if any: __expf / exp2f with pre-scaled coefficients, and
culling players whose influence at the block's grid tile is below 1e-4.
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

#define NP 22
#define PTS 4

__global__ void __launch_bounds__(256) pitch_control(const float* __restrict__ track, const float* __restrict__ ball,
                                                     __nv_bfloat16* __restrict__ out, int gx, int gy, float res,
                                                     int blocks_per_frame) {
    __shared__ float s_par[NP][6];      // mux, muy, a, b, c, sign
    int frame = blockIdx.x / blocks_per_frame;
    int chunk = blockIdx.x % blocks_per_frame;
    int t = threadIdx.x;
    if (t < NP) {
        const float* pl = track + ((size_t)frame * NP + t) * 4;
        float px = pl[0], py = pl[1], vx = pl[2], vy = pl[3];
        float bx = ball[frame * 2], by = ball[frame * 2 + 1];
        float db = sqrtf((px - bx) * (px - bx) + (py - by) * (py - by));
        float radius = fminf(4.0f + db * db * db / 972.0f, 10.0f);          // 18^3 / 6 = 972
        float speed = sqrtf(vx * vx + vy * vy);
        float ratio = fminf(speed * speed / (13.0f * 13.0f), 0.9f);
        float sx = 0.5f * radius * (1.0f + ratio), sy = 0.5f * radius * (1.0f - ratio);
        float cs = speed > 1e-6f ? vx / speed : 1.0f, sn = speed > 1e-6f ? vy / speed : 0.0f;
        float ix = 1.0f / (sx * sx), iy = 1.0f / (sy * sy);
        s_par[t][0] = px + 0.5f * vx;
        s_par[t][1] = py + 0.5f * vy;
        s_par[t][2] = cs * cs * ix + sn * sn * iy;     // Sigma^-1 = R diag(ix, iy) R^T
        s_par[t][3] = cs * sn * (ix - iy);
        s_par[t][4] = sn * sn * ix + cs * cs * iy;
        s_par[t][5] = t < NP / 2 ? 1.0f : -1.0f;
    }
    __syncthreads();
    int npts = gx * gy;
    float x[PTS], y[PTS], z[PTS];
#pragma unroll
    for (int k = 0; k < PTS; ++k) {
        int q = chunk * (256 * PTS) + k * 256 + t;
        int qq = q < npts ? q : npts - 1;
        x[k] = (qq % gx + 0.5f) * res;
        y[k] = (qq / gx + 0.5f) * res;
        z[k] = 0.0f;
    }
    for (int p = 0; p < NP; ++p) {
        float mx = s_par[p][0], my = s_par[p][1], a = s_par[p][2], b = s_par[p][3], c = s_par[p][4], sg = s_par[p][5];
#pragma unroll
        for (int k = 0; k < PTS; ++k) {
            float dx = x[k] - mx, dy = y[k] - my;
            float qf = a * dx * dx + 2.0f * b * dx * dy + c * dy * dy;
            z[k] += sg * expf(-0.5f * qf);
        }
    }
#pragma unroll
    for (int k = 0; k < PTS; ++k) {
        int q = chunk * (256 * PTS) + k * 256 + t;
        if (q < npts) out[(size_t)frame * npts + q] = __float2bfloat16(1.0f / (1.0f + expf(-z[k])));
    }
}

torch::Tensor pitch_control_surface(torch::Tensor track, torch::Tensor ball, int64_t gx, int64_t gy, double res) {
    TORCH_CHECK(track.is_cuda() && track.scalar_type() == torch::kFloat && track.is_contiguous());
    TORCH_CHECK(track.size(1) == NP && track.size(2) == 4 && ball.is_contiguous());
    int frames = track.size(0);
    int npts = gx * gy;
    int bpf = (npts + 256 * PTS - 1) / (256 * PTS);
    auto out = torch::empty({frames, gy, gx}, track.options().dtype(torch::kBFloat16));
    pitch_control<<<frames * bpf, 256>>>(track.data_ptr<float>(), ball.data_ptr<float>(),
                                         reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()),
                                         (int)gx, (int)gy, (float)res, bpf);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_pitch_control_influence_bf16_cuda",
    cpp_sources="torch::Tensor pitch_control_surface(torch::Tensor track, torch::Tensor ball, int64_t gx, int64_t gy, "
                "double res);",
    cuda_sources=CUDA_SRC,
    functions=["pitch_control_surface"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

FRAMES = 1024
GX, GY = 210, 136      # 0.5 m grid over 105 x 68 m
RES = 0.5
PLAYERS = 22


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    base = torch.rand(1, PLAYERS, 2, device="cuda", generator=g) * torch.tensor([80.0, 60.0], device="cuda") \
        + torch.tensor([12.0, 4.0], device="cuda")
    t = torch.arange(FRAMES, device="cuda", dtype=torch.float32)[:, None, None]
    drift = torch.cat([8.0 * torch.sin(t / 150.0), 3.0 * torch.cos(t / 90.0)], dim=-1)
    pos = base + drift + 2.0 * torch.randn(FRAMES, PLAYERS, 2, device="cuda", generator=g)
    vel = 3.0 * torch.randn(FRAMES, PLAYERS, 2, device="cuda", generator=g)                  # m/s
    track = torch.cat([pos, vel], dim=-1).contiguous()
    ball = (pos[:, 0] + torch.randn(FRAMES, 2, device="cuda", generator=g) * 5.0).contiguous()
    return track, ball


def run(track, ball):
    return module.pitch_control_surface(track, ball, GX, GY, RES)


def reference(track, ball):
    tr, bl = track.double(), ball.double()
    px, py, vx, vy = tr[..., 0], tr[..., 1], tr[..., 2], tr[..., 3]
    db = torch.sqrt((px - bl[:, None, 0]) ** 2 + (py - bl[:, None, 1]) ** 2)
    radius = torch.clamp(4.0 + db ** 3 / 972.0, max=10.0)
    speed = torch.sqrt(vx * vx + vy * vy)
    ratio = torch.clamp(speed ** 2 / 169.0, max=0.9)
    sx, sy = 0.5 * radius * (1 + ratio), 0.5 * radius * (1 - ratio)
    cs = torch.where(speed > 1e-6, vx / speed, torch.ones_like(vx))
    sn = torch.where(speed > 1e-6, vy / speed, torch.zeros_like(vy))
    ix, iy = 1.0 / sx ** 2, 1.0 / sy ** 2
    a, b, c = cs * cs * ix + sn * sn * iy, cs * sn * (ix - iy), sn * sn * ix + cs * cs * iy
    mx, my = px + 0.5 * vx, py + 0.5 * vy
    sign = torch.tensor([1.0] * (PLAYERS // 2) + [-1.0] * (PLAYERS - PLAYERS // 2), device=track.device, dtype=torch.float64)
    gxs = (torch.arange(GX, device=track.device, dtype=torch.float64) + 0.5) * RES
    gys = (torch.arange(GY, device=track.device, dtype=torch.float64) + 0.5) * RES
    out = torch.empty(track.shape[0], GY, GX, device=track.device, dtype=torch.bfloat16)
    for f0 in range(0, track.shape[0], 32):
        sl = slice(f0, f0 + 32)
        dx = gxs[None, None, None, :] - mx[sl, :, None, None]
        dy = gys[None, None, :, None] - my[sl, :, None, None]
        q = a[sl, :, None, None] * dx * dx + 2 * b[sl, :, None, None] * dx * dy + c[sl, :, None, None] * dy * dy
        z = (sign[None, :, None, None] * torch.exp(-0.5 * q)).sum(1)
        out[sl] = torch.sigmoid(z).to(torch.bfloat16)
    return out
