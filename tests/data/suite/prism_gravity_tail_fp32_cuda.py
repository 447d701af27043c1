"""Planted bottleneck: tail effect (296 equal blocks at 2 per SM = 1.12 waves: the last wave keeps 32 SMs busy).

Gravity forward modelling for mineral exploration: the vertical attraction gz at 303,104 survey stations
(296 survey lines x 1,024 stations, flown at 80 m over a 6 x 6 km area) of a block model of 96 right
rectangular prisms (a 4 x 4 x 6 ore-body model with density contrasts), with the closed-form prism
formula of Nagy et al. (2000): per station-prism pair, 8 corners of x ln(y + r) + y ln(x + r) - z
atan(xy / zr) (two logf with the cancellation-free form for negative arguments, one atanf, one sqrtf,
one division): ~30M pairs, ~240M corner evaluations, all on chip (prisms staged in shared memory,
2.7 KB). One block of 1,024 threads per survey line: 296 blocks; __launch_bounds__(1024, 2) caps the
registers at 32 so that 2 blocks (64 warps) fit per SM: 264 blocks per wave, 1.12 waves. The 32 blocks
of the second wave run alone on 32 SMs while 100 SMs idle; a lone block runs faster than a shared one,
but not 2x, so the tail costs ~0.5-0.7 of a wave.
The hypothesis: tail_effect: ncu LaunchConfiguration 'Tail Effect' (1.12 waves), SM active cycles
uneven across SMs (the 32 tail SMs ~1.5x the others), SM% ~50-65% averaged over the kernel although the
busy SMs are compute bound (FMA / XU / ALU), DRAM ~0, ~1-1.5 ms. The fix: a station count per block
chosen so the grid is a whole number of waves (e.g. 264 blocks of 1,148 stations, or 512 threads x 4
stations with a persistent loop over stations).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define MAXP 256

// ln(a + r) without cancellation when a < 0: (a + r)(r - a) = r^2 - a^2 = b2
__device__ __forceinline__ float log_a_plus_r(float a, float r, float b2) {
    return a >= 0.0f ? logf(a + r) : logf(b2 / (r - a));
}

__global__ void __launch_bounds__(1024, 2) prism_gravity(const float* __restrict__ stations, const float* __restrict__ prisms,
                                                         float* __restrict__ gz, int nstations, int nprisms) {
    __shared__ float s_pr[MAXP * 7];    // x1, x2, y1, y2, z1, z2, density contrast
    for (int i = threadIdx.x; i < nprisms * 7; i += blockDim.x) s_pr[i] = prisms[i];
    __syncthreads();
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nstations) return;
    float sx = stations[s * 3 + 0], sy = stations[s * 3 + 1], sz = stations[s * 3 + 2];
    float total = 0.0f;
    for (int p = 0; p < nprisms; ++p) {
        const float* q = s_pr + p * 7;
        float acc = 0.0f;
#pragma unroll 1
        for (int corner = 0; corner < 8; ++corner) {
            float x = q[corner & 1] - sx;
            float y = q[2 + ((corner >> 1) & 1)] - sy;
            float z = q[4 + (corner >> 2)] - sz;          // depth below the station (> 0)
            float x2 = x * x, y2 = y * y, z2 = z * z;
            float r = sqrtf(x2 + y2 + z2);
            float term = x * log_a_plus_r(y, r, x2 + z2) + y * log_a_plus_r(x, r, y2 + z2) - z * atanf(x * y / (z * r));
            float sign = ((corner ^ (corner >> 1) ^ (corner >> 2)) & 1) ? -1.0f : 1.0f;
            acc += sign * term;
        }
        total += q[6] * acc;
    }
    gz[s] = total * 6.674e-3f;                           // G in mGal per (g/cc * m)
}

torch::Tensor forward_gz(torch::Tensor stations, torch::Tensor prisms) {
    TORCH_CHECK(stations.is_cuda() && stations.scalar_type() == torch::kFloat && stations.is_contiguous());
    TORCH_CHECK(prisms.size(1) == 7 && prisms.size(0) <= MAXP && prisms.is_contiguous());
    int ns = stations.size(0), np = prisms.size(0);
    auto gz = torch::empty({ns}, stations.options());
    prism_gravity<<<(ns + 1023) / 1024, 1024>>>(stations.data_ptr<float>(), prisms.data_ptr<float>(), gz.data_ptr<float>(),
                                                ns, np);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return gz;
}
"""

module = load_inline(
    "kls_prism_gravity_tail_fp32_cuda",
    cpp_sources="torch::Tensor forward_gz(torch::Tensor stations, torch::Tensor prisms);",
    cuda_sources=CUDA_SRC,
    functions=["forward_gz"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

LINES = 296
PER_LINE = 1024
NXP, NYP, NZP = 4, 4, 6
TOLERANCE = 1e-3  # fp32 loses ~4 digits to the 8-corner cancellation: ~1.0e-4 rel. L2 error in a float32 emulation


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    lx = torch.linspace(-3000.0, 3000.0, PER_LINE, device="cuda")
    ly = torch.linspace(-3000.0, 3000.0, LINES, device="cuda")
    sx = lx[None, :].expand(LINES, PER_LINE) + 5.0 * torch.randn(LINES, PER_LINE, device="cuda", generator=g)
    sy = ly[:, None].expand(LINES, PER_LINE) + 5.0 * torch.randn(LINES, PER_LINE, device="cuda", generator=g)
    sz = -80.0 + 3.0 * torch.randn(LINES, PER_LINE, device="cuda", generator=g)        # z down, flight at 80 m
    stations = torch.stack([sx, sy, sz], dim=-1).reshape(-1, 3)
    # block model: 4 x 4 x 6 cells of 200 x 200 x 100 m, from 150 m to 750 m depth, centred
    i, j, k = torch.meshgrid(torch.arange(NXP, device="cuda"), torch.arange(NYP, device="cuda"),
                             torch.arange(NZP, device="cuda"), indexing="ij")
    x1 = -400.0 + 200.0 * i.reshape(-1).float()
    y1 = -400.0 + 200.0 * j.reshape(-1).float()
    z1 = 150.0 + 100.0 * k.reshape(-1).float()
    rho = 0.1 + 0.6 * torch.rand(x1.numel(), device="cuda", generator=g)                 # g/cc contrast
    prisms = torch.stack([x1, x1 + 200.0, y1, y1 + 200.0, z1, z1 + 100.0, rho], dim=1)
    return stations.contiguous(), prisms.contiguous()


def run(stations, prisms):
    return module.forward_gz(stations, prisms)


def reference(stations, prisms):
    st, pr = stations.double(), prisms.double()
    out = torch.zeros(st.shape[0], device=st.device, dtype=torch.float64)

    def lg(a, r, b2):
        return torch.where(a >= 0, torch.log((a + r).clamp_min(1e-300)), torch.log(b2 / (r - a)))

    for c in range(8):
        x = pr[None, :, c & 1] - st[:, 0:1]
        y = pr[None, :, 2 + ((c >> 1) & 1)] - st[:, 1:2]
        z = pr[None, :, 4 + (c >> 2)] - st[:, 2:3]
        r = torch.sqrt(x * x + y * y + z * z)
        term = x * lg(y, r, x * x + z * z) + y * lg(x, r, y * y + z * z) - z * torch.atan(x * y / (z * r))
        sign = -1.0 if (c ^ (c >> 1) ^ (c >> 2)) & 1 else 1.0
        out += sign * (term * pr[None, :, 6]).sum(1)
    return (out * 6.674e-3).float()
