"""Planted bottleneck: tail effect (148 one-per-SM blocks: 1.12 waves, the last 16 blocks run alone).

Conjunction screening for a constellation operator: 151,552 active satellites (primaries) against
a 5,120-object debris catalogue (secondaries), states at the start of a 10-minute window (fp32
position km, velocity km/s, [N, 6]). With linear relative motion over the window, each pair's time
of closest approach is t* = clamp(-dr.dv / |dv|^2, 0, T) and its miss distance |dr + dv t*|; the
kernel keeps each primary's minimum miss distance (fp32 [151,552] out). One thread per primary,
blocks of 1,024; the whole catalogue is staged once per block in shared memory (5,120 x 6 floats =
122,880 B), so only one block fits per SM (shared memory limit), and the grid of 148 blocks makes
1.12 waves: 132 blocks, then 16 blocks alone on 16 SMs for as long again. 776M pairs, ~25
instructions each (~610M warp instructions).
The hypothesis: tail_effect: ncu Tail Effect / waves 1.12, SM active cycles on 16 SMs ~2x those on
the others, SM% ~50-60% averaged over the elapsed time while the busy SMs are compute bound (FMA
pipe, issue ~80-90%), DRAM ~0, ~1.2-2 ms. The fix: a grid of whole waves (132 or 264 blocks looping
over primaries, or 512-thread blocks staging half the catalogue twice).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void __launch_bounds__(1024, 1) conjunction_screen(const float* __restrict__ prim, const float* __restrict__ sec,
                                                              float* __restrict__ miss, int np, int ns, float window) {
    extern __shared__ float cat[];                 // [6][ns]: x, y, z, vx, vy, vz of the catalogue
    for (int k = threadIdx.x; k < ns * 6; k += blockDim.x) {
        int o = k / 6, c = k % 6;
        cat[c * ns + o] = sec[k];
    }
    __syncthreads();
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= np) return;
    float px = prim[p * 6 + 0], py = prim[p * 6 + 1], pz = prim[p * 6 + 2];
    float pvx = prim[p * 6 + 3], pvy = prim[p * 6 + 4], pvz = prim[p * 6 + 5];
    float best = 3.4e38f;
    for (int s = 0; s < ns; ++s) {
        float dx = cat[s] - px, dy = cat[ns + s] - py, dz = cat[2 * ns + s] - pz;
        float dvx = cat[3 * ns + s] - pvx, dvy = cat[4 * ns + s] - pvy, dvz = cat[5 * ns + s] - pvz;
        float rv = dx * dvx + dy * dvy + dz * dvz;
        float vv = fmaxf(dvx * dvx + dvy * dvy + dvz * dvz, 1e-12f);
        float t = fminf(fmaxf(-rv / vv, 0.0f), window);
        float mx = dx + dvx * t, my = dy + dvy * t, mz = dz + dvz * t;
        best = fminf(best, mx * mx + my * my + mz * mz);
    }
    miss[p] = sqrtf(best);
}

torch::Tensor screen(torch::Tensor prim, torch::Tensor sec, double window) {
    TORCH_CHECK(prim.is_cuda() && prim.scalar_type() == torch::kFloat && prim.size(1) == 6 && prim.is_contiguous());
    TORCH_CHECK(sec.scalar_type() == torch::kFloat && sec.size(1) == 6 && sec.is_contiguous());
    int np = prim.size(0), ns = sec.size(0);
    auto miss = torch::empty({np}, prim.options());
    size_t smem = (size_t)ns * 6 * sizeof(float);
    cudaFuncSetAttribute(conjunction_screen, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    conjunction_screen<<<(np + 1023) / 1024, 1024, smem>>>(prim.data_ptr<float>(), sec.data_ptr<float>(),
                                                           miss.data_ptr<float>(), np, ns, (float)window);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return miss;
}
"""

module = load_inline(
    "kls_conjunction_screen_tail_fp32_cuda",
    cpp_sources="torch::Tensor screen(torch::Tensor prim, torch::Tensor sec, double window);",
    cuda_sources=CUDA_SRC,
    functions=["screen"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

PRIMARIES = 148 * 1024
SECONDARIES = 5120
WINDOW = 600.0       # s
MU = 398600.4418
TOLERANCE = 1e-3     # fp32 relative geometry: ~1e3 km offsets cancel to ~10 km misses


def _leo_states(n, g):
    r = 6778.0 + 600.0 * torch.rand(n, device="cuda", generator=g, dtype=torch.float64)
    pos = torch.randn(n, 3, device="cuda", generator=g, dtype=torch.float64)
    pos = pos / pos.norm(dim=1, keepdim=True)
    t = torch.randn(n, 3, device="cuda", generator=g, dtype=torch.float64)
    t = t - (t * pos).sum(1, keepdim=True) * pos                   # random in-plane direction
    t = t / t.norm(dim=1, keepdim=True)
    v = t * torch.sqrt(MU / r)[:, None]
    return torch.cat([pos * r[:, None], v], 1).float().contiguous()


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    return _leo_states(PRIMARIES, g), _leo_states(SECONDARIES, g)


def run(prim, sec):
    return module.screen(prim, sec, WINDOW)


def reference(prim, sec):
    p, s = prim.double(), sec.double()
    out = torch.empty(p.shape[0], dtype=torch.float64, device=p.device)
    for a in range(0, p.shape[0], 4096):
        pc = p[a:a + 4096]
        dr = s[None, :, :3] - pc[:, None, :3]
        dv = s[None, :, 3:] - pc[:, None, 3:]
        t = (-(dr * dv).sum(2) / (dv * dv).sum(2).clamp_min(1e-12)).clamp(0.0, WINDOW)
        m = dr + dv * t[..., None]
        out[a:a + 4096] = (m * m).sum(2).amin(1).sqrt()
    return out.float()
