"""Already good (near_roof): one fused stream-and-collide step of a D2Q9 lattice Boltzmann fluid.

A 4,096 x 4,096 periodic lattice, nine fp32 populations per node stored as nine planes (structure of
arrays, 604 MB), one thread per node: the pull scheme reads f_i at the upstream neighbour x - c_i
(nine coalesced loads, four of them shifted by one element, three from the row above or below,
which the neighbouring blocks have just brought into L2), computes density and velocity, the nine
BGK equilibria and the relaxation (tau = 0.6, ~170 SASS instructions), and writes the nine new
populations to a second lattice. 72 bytes per node are the minimum for a two-lattice step: 1.21 GB,
~396 us at 3.05 TB/s, against ~0.1 ms of instruction issue (~1.8 instructions per byte). The
hypothesis: DRAM near its peak with ~1.0x the needed bytes, SM well below it; nothing to fix short
of a different algorithm (in-place streaming, fp16 storage).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

// D2Q9: c_0 = (0,0), c_1..4 = (1,0) (0,1) (-1,0) (0,-1), c_5..8 = (1,1) (-1,1) (-1,-1) (1,-1)
__global__ void __launch_bounds__(256) lbm_d2q9_pull(const float* __restrict__ f, float* __restrict__ g,
                                                     int nx, int ny, float omega) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= nx) return;
    size_t plane = (size_t)nx * ny;
    int xm = x == 0 ? nx - 1 : x - 1, xp = x == nx - 1 ? 0 : x + 1;   // periodic neighbours
    int ym = y == 0 ? ny - 1 : y - 1, yp = y == ny - 1 ? 0 : y + 1;
    size_t r = (size_t)y * nx, rm = (size_t)ym * nx, rp = (size_t)yp * nx;
    // pull: population i arrives from x - c_i
    float f0 = f[r + x];
    float f1 = f[plane + r + xm];
    float f2 = f[2 * plane + rm + x];
    float f3 = f[3 * plane + r + xp];
    float f4 = f[4 * plane + rp + x];
    float f5 = f[5 * plane + rm + xm];
    float f6 = f[6 * plane + rm + xp];
    float f7 = f[7 * plane + rp + xp];
    float f8 = f[8 * plane + rp + xm];
    float rho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8;
    float ux = (f1 - f3 + f5 - f6 - f7 + f8) / rho;
    float uy = (f2 - f4 + f5 + f6 - f7 - f8) / rho;
    float usq = 1.5f * (ux * ux + uy * uy);
    float w0 = rho * (4.f / 9.f), w1 = rho * (1.f / 9.f), w5 = rho * (1.f / 36.f);
    #define FEQ(w, cu) ((w) * (1.f + 3.f * (cu) + 4.5f * (cu) * (cu) - usq))
    size_t o = r + x;
    g[o]             = f0 + omega * (FEQ(w0, 0.f) - f0);
    g[plane + o]     = f1 + omega * (FEQ(w1, ux) - f1);
    g[2 * plane + o] = f2 + omega * (FEQ(w1, uy) - f2);
    g[3 * plane + o] = f3 + omega * (FEQ(w1, -ux) - f3);
    g[4 * plane + o] = f4 + omega * (FEQ(w1, -uy) - f4);
    g[5 * plane + o] = f5 + omega * (FEQ(w5, ux + uy) - f5);
    g[6 * plane + o] = f6 + omega * (FEQ(w5, -ux + uy) - f6);
    g[7 * plane + o] = f7 + omega * (FEQ(w5, -ux - uy) - f7);
    g[8 * plane + o] = f8 + omega * (FEQ(w5, ux - uy) - f8);
}

torch::Tensor lbm_step(torch::Tensor f, double omega) {
    int ny = f.size(1), nx = f.size(2);
    auto g = torch::empty_like(f);
    lbm_d2q9_pull<<<dim3((nx + 255) / 256, ny), 256>>>(f.data_ptr<float>(), g.data_ptr<float>(), nx, ny, (float)omega);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return g;
}
"""

module = load_inline(
    "kls_lbm_d2q9_pull_fp32_cuda",
    cpp_sources="torch::Tensor lbm_step(torch::Tensor f, double omega);",
    cuda_sources=CUDA_SRC,
    functions=["lbm_step"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

NX = NY = 4096
TAU = 0.6
CX = [0, 1, 0, -1, 0, 1, -1, -1, 1]
CY = [0, 0, 1, 0, -1, 1, 1, -1, -1]
WEIGHTS = [4 / 9] + [1 / 9] * 4 + [1 / 36] * 4


def _equilibrium(rho, ux, uy):
    usq = 1.5 * (ux * ux + uy * uy)
    feq = []
    for i in range(9):
        cu = CX[i] * ux + CY[i] * uy
        feq.append(WEIGHTS[i] * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq))
    return torch.stack(feq)


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    rho = 1.0 + 0.05 * torch.randn(NY, NX, device="cuda", generator=g)
    ux = 0.05 * torch.randn(NY, NX, device="cuda", generator=g)
    uy = 0.05 * torch.randn(NY, NX, device="cuda", generator=g)
    f = _equilibrium(rho, ux, uy) * (1.0 + 0.01 * torch.randn(9, NY, NX, device="cuda", generator=g))
    return (f.contiguous(),)


def run(f):
    return module.lbm_step(f, 1.0 / TAU)


def reference(f):
    fd = f.double()
    pulled = torch.stack([torch.roll(fd[i], shifts=(CY[i], CX[i]), dims=(0, 1)) for i in range(9)])  # f_i(x - c_i)
    rho = pulled.sum(0)
    ux = sum(CX[i] * pulled[i] for i in range(9)) / rho
    uy = sum(CY[i] * pulled[i] for i in range(9)) / rho
    return (pulled + (1.0 / TAU) * (_equilibrium(rho, ux, uy) - pulled)).float()
