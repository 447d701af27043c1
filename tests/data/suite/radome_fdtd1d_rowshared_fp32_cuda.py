"""Planted bottleneck: shared-memory bank conflicts (each thread's 1D FDTD line is a row of a shared array: 8-way conflicts).

Radome / absorber design sweep: 131,072 candidate sandwich panels (two dielectric skins around a lossy
core; skin and core permittivity, core conductivity and the layer thicknesses vary per candidate) are
screened with a 1D FDTD simulation each (Sullivan's normalised scheme, Courant 0.5, 24 cells: free
space, skin, core, skin, free space; a Gaussian pulse injected at cell 3, first-order absorbing ends):
64 time steps, and the transmitted energy sum E^2 at cell 19 (after the panel) is the figure of merit
(fp32 out). One thread simulates one candidate; to keep its two field arrays out of local memory the
author put them in shared memory as ex[threadIdx.x][k] and hy[threadIdx.x][k] (128 x 24 floats each,
24 KB per block of 128). A warp's 32 lanes access the same k of 32 rows 24 words apart: only 4 distinct
banks, an 8-way conflict on every field access (~6 shared accesses per cell per step). 1,024 blocks
(9 per SM by shared memory: one partial wave, ~31 warps per SM); per SM ~48k warp cell-steps x ~6
accesses x 8 wavefronts = ~2.3M shared-pipe cycles.
The hypothesis: shared_bank_conflicts: ~8 wavefronts per shared request (ncu's shared load/store
bank-conflict rules), the MIO / LSU pipe the busiest unit, short-scoreboard / mio-throttle stalls,
DRAM ~0, ~1-2 ms. The fix: lay the fields out as ex[k][threadIdx.x] (lane-contiguous, conflict-free),
or keep the 24-cell line in registers with a compile-time length.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define NXMAX 24
#define SLAB_BLOCK 128

__global__ void __launch_bounds__(SLAB_BLOCK) radome_fdtd1d(const float* __restrict__ params, float* __restrict__ energy,
                                                             int n_cand, int nx, int steps, int src_cell, int probe_cell,
                                                             int panel_start, float t0, float inv_spread) {
    __shared__ float ex[SLAB_BLOCK][NXMAX];
    __shared__ float hy[SLAB_BLOCK][NXMAX];
    int s = blockIdx.x * SLAB_BLOCK + threadIdx.x;
    if (s >= n_cand) return;
    int tx = threadIdx.x;
    // candidate: skin eps_r, core eps_r, core sigma*dt/(2 eps0), skin cells, core cells
    const float* p = params + (size_t)s * 5;
    float eps_skin = p[0], eps_core = p[1], loss_core = p[2];
    int skin = (int)p[3], core = (int)p[4];
    int a = panel_start, b = a + skin, c = b + core, d = c + skin;   // skin [a,b) core [b,c) skin [c,d)
    float ca_core = (1.0f - loss_core / eps_core) / (1.0f + loss_core / eps_core);
    float cb_core = 0.5f / (eps_core * (1.0f + loss_core / eps_core));
    float cb_skin = 0.5f / eps_skin;
    for (int k = 0; k < nx; ++k) { ex[tx][k] = 0.0f; hy[tx][k] = 0.0f; }
    float lo1 = 0.0f, lo2 = 0.0f, hi1 = 0.0f, hi2 = 0.0f, acc = 0.0f;
    for (int n = 0; n < steps; ++n) {
        for (int k = 1; k < nx; ++k) {
            bool in_core = (k >= b) & (k < c);
            bool in_skin = ((k >= a) & (k < b)) | ((k >= c) & (k < d));
            float ca = in_core ? ca_core : 1.0f;
            float cb = in_core ? cb_core : (in_skin ? cb_skin : 0.5f);
            ex[tx][k] = ca * ex[tx][k] + cb * (hy[tx][k - 1] - hy[tx][k]);
        }
        float arg = ((float)n - t0) * inv_spread;
        ex[tx][src_cell] += expf(-0.5f * arg * arg);                 // soft Gaussian source
        ex[tx][0] = lo2; lo2 = lo1; lo1 = ex[tx][1];                  // absorbing ends (two steps back)
        ex[tx][nx - 1] = hi2; hi2 = hi1; hi1 = ex[tx][nx - 2];
        for (int k = 0; k < nx - 1; ++k) hy[tx][k] += 0.5f * (ex[tx][k] - ex[tx][k + 1]);
        float e = ex[tx][probe_cell];
        acc += e * e;
    }
    energy[s] = acc;
}

torch::Tensor panel_energy(torch::Tensor params, int64_t nx, int64_t steps, int64_t src_cell, int64_t probe_cell,
                           int64_t panel_start, double t0, double spread) {
    TORCH_CHECK(params.is_cuda() && params.scalar_type() == torch::kFloat && params.is_contiguous() && params.size(1) == 5);
    TORCH_CHECK(nx <= NXMAX && probe_cell < nx - 1 && src_cell > 0);
    int n = params.size(0);
    auto out = torch::empty({n}, params.options());
    radome_fdtd1d<<<(n + SLAB_BLOCK - 1) / SLAB_BLOCK, SLAB_BLOCK>>>(params.data_ptr<float>(), out.data_ptr<float>(), n,
                                                                   (int)nx, (int)steps, (int)src_cell, (int)probe_cell,
                                                                   (int)panel_start, (float)t0, (float)(1.0 / spread));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_radome_fdtd1d_rowshared_fp32_cuda",
    cpp_sources="torch::Tensor panel_energy(torch::Tensor params, int64_t nx, int64_t steps, int64_t src_cell, "
                "int64_t probe_cell, int64_t panel_start, double t0, double spread);",
    cuda_sources=CUDA_SRC,
    functions=["panel_energy"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

CANDIDATES = 131072
NX = 24
STEPS = 64
SRC_CELL = 3
PROBE_CELL = 19
PANEL_START = 6
T0 = 12.0
SPREAD = 4.0
TOLERANCE = 1e-4  # fp32 leapfrog against a float64 reference


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    n = CANDIDATES
    eps_skin = 2.5 + 2.0 * torch.rand(n, device="cuda", generator=g)
    eps_core = 1.1 + 3.0 * torch.rand(n, device="cuda", generator=g)
    loss_core = 0.3 * torch.rand(n, device="cuda", generator=g)
    skin = torch.randint(1, 3, (n,), device="cuda", generator=g).float()
    core = torch.randint(2, 8, (n,), device="cuda", generator=g).float()
    return (torch.stack([eps_skin, eps_core, loss_core, skin, core], dim=1).contiguous(),)


def run(params):
    return module.panel_energy(params, NX, STEPS, SRC_CELL, PROBE_CELL, PANEL_START, T0, SPREAD)


def reference(params):
    p = params.double()
    n = p.shape[0]
    dev = p.device
    eps_skin, eps_core, loss_core = p[:, 0:1], p[:, 1:2], p[:, 2:3]
    skin, core = p[:, 3:4].long(), p[:, 4:5].long()
    k = torch.arange(NX, device=dev)[None, :]
    a = PANEL_START
    b = a + skin
    c = b + core
    d = c + skin
    in_core = (k >= b) & (k < c)
    in_skin = ((k >= a) & (k < b)) | ((k >= c) & (k < d))
    ca_core = (1.0 - loss_core / eps_core) / (1.0 + loss_core / eps_core)
    cb_core = 0.5 / (eps_core * (1.0 + loss_core / eps_core))
    ca = torch.where(in_core, ca_core, torch.ones_like(ca_core))
    cb = torch.where(in_core, cb_core, torch.where(in_skin, 0.5 / eps_skin, torch.full_like(eps_skin, 0.5)))
    ex = torch.zeros(n, NX, device=dev, dtype=torch.float64)
    hy = torch.zeros_like(ex)
    lo1 = lo2 = hi1 = hi2 = torch.zeros(n, device=dev, dtype=torch.float64)
    acc = torch.zeros(n, device=dev, dtype=torch.float64)
    for step in range(STEPS):
        ex[:, 1:] = ca[:, 1:] * ex[:, 1:] + cb[:, 1:] * (hy[:, :-1] - hy[:, 1:])
        arg = (step - T0) / SPREAD
        ex[:, SRC_CELL] += torch.exp(torch.tensor(-0.5 * arg * arg, dtype=torch.float64))
        ex[:, 0] = lo2
        lo2, lo1 = lo1, ex[:, 1].clone()
        ex[:, NX - 1] = hi2
        hi2, hi1 = hi1, ex[:, NX - 2].clone()
        hy[:, :-1] += 0.5 * (ex[:, :-1] - ex[:, 1:])
        acc += ex[:, PROBE_CELL] ** 2
    return acc.float()
