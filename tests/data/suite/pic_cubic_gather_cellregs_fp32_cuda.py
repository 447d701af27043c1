"""Planted bottleneck: low occupancy (registers: a thread keeps its cell's cubic-spline field stencil in 96 registers).

Field gather and relativistic Boris push of a 2D3V electromagnetic particle-in-cell code with
cubic (PCS, 4 x 4 nodes) shape factors: a 512 x 512 grid (Ex, Ey, Ez, Bx, By, Bz at the nodes, fp32,
with guard cells, 6.3 MB) and 32 macro-particles per cell, kept sorted in a per-cell slot layout
(slot-major [5, 32, CELLS]: x, y, ux, uy, uz, fp32, 168 MB), 8.4M particles. One thread per cell:
it loads the cell's 4 x 4 stencil of the 6 field components once (96 values, kept in registers) and
then pushes its 32 particles one after the other (5 coalesced loads, 8 spline weights, 96 FMAs of
gather, Boris rotation, 5 coalesced stores). The stencil costs registers: ptxas (nvcc 13, sm_90) reports 128,
so only 4 blocks of 128 threads (16 warps, 25% theoretical occupancy) fit per SM, and each warp's
particle loop is a dependent chain from the particle loads to the stores with little to overlap
with the next particle's loads. 2,048 blocks of 128; bytes ~340 MB (particles in and out).
The hypothesis: low_occupancy (registers): theoretical occupancy 25%, achieved about the same,
long-scoreboard stalls dominating, issue ~0.3-0.5 per cycle, DRAM ~35-55%, SM ~30-50%, ~0.25-0.4 ms
against ~110 us for the bytes. The fix: stage the stencils of a block's cells in shared memory
(neighbouring cells share 12 of 16 nodes) and keep a few registers per thread, or split the gather
into a thread per (cell, particle) with the stencil read from shared memory.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ void pcs_weights(float t, float w[4]) {
    float t2 = t * t, t3 = t2 * t, s = 1.0f - t;
    w[0] = s * s * s * (1.0f / 6.0f);
    w[1] = (3.0f * t3 - 6.0f * t2 + 4.0f) * (1.0f / 6.0f);
    w[2] = (-3.0f * t3 + 3.0f * t2 + 3.0f * t + 1.0f) * (1.0f / 6.0f);
    w[3] = t3 * (1.0f / 6.0f);
}

// fld: [6, ny + 3, nx + 3] (node (i, j) at [j + 1][i + 1]); pin / pout: [5, ppc, cells]
__global__ void __launch_bounds__(128) pic_cell_gather_push(const float* __restrict__ fld,
                                                            const float* __restrict__ pin, float* __restrict__ pout,
                                                            int nx, int ny, int ppc, float qmdt2, float dt) {
    int cells = nx * ny;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cells) return;
    int i = c % nx, j = c / nx;
    int pitch = nx + 3, plane = (ny + 3) * pitch;
    float f[6][4][4];
#pragma unroll
    for (int q = 0; q < 6; ++q)
#pragma unroll
        for (int b = 0; b < 4; ++b)
#pragma unroll
            for (int a = 0; a < 4; ++a) f[q][b][a] = fld[q * plane + (j + b) * pitch + (i + a)];
    long stride = (long)ppc * cells;
    for (int p = 0; p < ppc; ++p) {
        long idx = (long)p * cells + c;
        float x = pin[idx], y = pin[stride + idx];
        float ux = pin[2 * stride + idx], uy = pin[3 * stride + idx], uz = pin[4 * stride + idx];
        float wx[4], wy[4];
        pcs_weights(x - (float)i, wx);
        pcs_weights(y - (float)j, wy);
        float fe[6];
#pragma unroll
        for (int q = 0; q < 6; ++q) {
            float s = 0.0f;
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                float r = 0.0f;
#pragma unroll
                for (int a = 0; a < 4; ++a) r += wx[a] * f[q][b][a];
                s += wy[b] * r;
            }
            fe[q] = s;
        }
        // Boris: half kick, rotation, half kick (u = gamma v / c, normalised units)
        float umx = ux + qmdt2 * fe[0], umy = uy + qmdt2 * fe[1], umz = uz + qmdt2 * fe[2];
        float ig = rsqrtf(1.0f + umx * umx + umy * umy + umz * umz);
        float tx = qmdt2 * fe[3] * ig, ty = qmdt2 * fe[4] * ig, tz = qmdt2 * fe[5] * ig;
        float s2 = 2.0f / (1.0f + tx * tx + ty * ty + tz * tz);
        float upx = umx + (umy * tz - umz * ty), upy = umy + (umz * tx - umx * tz), upz = umz + (umx * ty - umy * tx);
        float nux = umx + s2 * (upy * tz - upz * ty) + qmdt2 * fe[0];
        float nuy = umy + s2 * (upz * tx - upx * tz) + qmdt2 * fe[1];
        float nuz = umz + s2 * (upx * ty - upy * tx) + qmdt2 * fe[2];
        float ign = rsqrtf(1.0f + nux * nux + nuy * nuy + nuz * nuz);
        pout[idx] = x + dt * nux * ign;
        pout[stride + idx] = y + dt * nuy * ign;
        pout[2 * stride + idx] = nux;
        pout[3 * stride + idx] = nuy;
        pout[4 * stride + idx] = nuz;
    }
}

torch::Tensor gather_push(torch::Tensor fld, torch::Tensor pin, double qmdt2, double dt) {
    TORCH_CHECK(fld.is_cuda() && fld.scalar_type() == torch::kFloat && fld.is_contiguous() && fld.dim() == 3);
    TORCH_CHECK(pin.scalar_type() == torch::kFloat && pin.is_contiguous() && pin.dim() == 3 && pin.size(0) == 5);
    int ny = fld.size(1) - 3, nx = fld.size(2) - 3, ppc = pin.size(1);
    TORCH_CHECK(pin.size(2) == (long)nx * ny);
    auto pout = torch::empty_like(pin);
    int cells = nx * ny;
    pic_cell_gather_push<<<(cells + 127) / 128, 128>>>(fld.data_ptr<float>(), pin.data_ptr<float>(),
                                                       pout.data_ptr<float>(), nx, ny, ppc, (float)qmdt2, (float)dt);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return pout;
}
"""

module = load_inline(
    "kls_pic_cubic_gather_cellregs_fp32_cuda",
    cpp_sources="torch::Tensor gather_push(torch::Tensor fld, torch::Tensor pin, double qmdt2, double dt);",
    cuda_sources=CUDA_SRC,
    functions=["gather_push"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

NX = 512
NY = 512
PPC = 32
DT = 0.2          # 1 / omega_p, cell size 1
QM = -1.0         # electrons
TOLERANCE = 1e-5


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    yy = torch.arange(NY + 3, device="cuda", dtype=torch.float32)[:, None] - 1
    xx = torch.arange(NX + 3, device="cuda", dtype=torch.float32)[None, :] - 1
    k = 2 * torch.pi / 64.0
    fld = torch.stack([0.05 * torch.sin(k * xx) + 0 * yy, 0.05 * torch.cos(k * yy) + 0 * xx,
                       0.02 * torch.sin(k * (xx + yy)), 0.01 * torch.cos(k * xx) + 0 * yy,
                       0.01 * torch.sin(k * yy) + 0 * xx, 1.0 + 0.05 * torch.cos(k * (xx - yy))])
    fld = fld + 0.005 * torch.randn(fld.shape, device="cuda", generator=g)
    cells = NX * NY
    cx = (torch.arange(cells, device="cuda") % NX).float()
    cy = (torch.arange(cells, device="cuda") // NX).float()
    x = cx[None, :] + torch.rand(PPC, cells, device="cuda", generator=g)
    y = cy[None, :] + torch.rand(PPC, cells, device="cuda", generator=g)
    u = 0.1 * torch.randn(3, PPC, cells, device="cuda", generator=g)
    pin = torch.cat([x[None], y[None], u], 0)
    return fld.contiguous(), pin.contiguous()


def _pcs(t):
    return torch.stack([(1 - t) ** 3 / 6, (3 * t ** 3 - 6 * t ** 2 + 4) / 6, (-3 * t ** 3 + 3 * t ** 2 + 3 * t + 1) / 6,
                        t ** 3 / 6])


def reference(fld, pin):
    f, p = fld.double(), pin.double()
    ny, nx = f.shape[1] - 3, f.shape[2] - 3
    cells = nx * ny
    c = torch.arange(cells, device=f.device)
    i, j = c % nx, c // nx
    x, y, ux, uy, uz = p[0], p[1], p[2], p[3], p[4]             # [PPC, cells]
    wx, wy = _pcs(x - i.double()), _pcs(y - j.double())          # [4, PPC, cells]
    fe = torch.zeros(6, *x.shape, dtype=torch.float64, device=f.device)
    for b in range(4):
        for a in range(4):
            fe += f[:, j + b, i + a][:, None, :] * (wy[b] * wx[a])[None]
    h = 0.5 * QM * DT
    um = torch.stack([ux, uy, uz]) + h * fe[:3]
    t = h * fe[3:] / torch.sqrt(1 + (um * um).sum(0))
    s = 2 / (1 + (t * t).sum(0))
    up = um + torch.cross(um, t, dim=0)
    nu = um + s * torch.cross(up, t, dim=0) + h * fe[:3]
    ig = 1 / torch.sqrt(1 + (nu * nu).sum(0))
    return torch.stack([x + DT * nu[0] * ig, y + DT * nu[1] * ig, nu[0], nu[1], nu[2]]).float()


def run(fld, pin):
    return module.gather_push(fld, pin, 0.5 * QM * DT, DT)
