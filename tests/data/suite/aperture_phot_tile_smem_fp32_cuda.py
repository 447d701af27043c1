"""Planted bottleneck: low occupancy, limited by shared memory (aperture photometry on a 103 KB image tile per block).

Forced aperture photometry of a survey image: 9,216 x 9,216 fp32 pixels (340 MB) cut into 4,096 tiles of
144 x 144, 256 catalogue stars per tile (integer pixel centres, int32, 1M stars); per star the sum in a
radius-6 aperture (113 pixels) minus the aperture area times the mean of the 6 < r <= 9 annulus
(140 pixels), fp32 out. One block of 256 threads per tile stages the tile plus a 9-pixel halo,
162 x 162 fp32 = 104,976 B of dynamic shared memory (edge-replicated at the image border), then each
warp measures 32 stars, one 19-pixel row of the 19 x 19 box per step (one lane per column: contiguous,
conflict-free shared reads) and a shuffle reduction. ptxas: a few dozen registers; the shared memory
allows 2 blocks per SM: 16 warps of 64 (25% theoretical occupancy), and the 110-load staging phase and
the barrier leave few warps to hide global and shared latencies. ~0.3-0.6 ms against ~140 us for the
419 MB staged at 3.05 TB/s. The hypothesis: ncu's TheoreticalOccupancy / AchievedOccupancy (limit:
shared memory, 25%), long-scoreboard and barrier stalls, SM% and DRAM% moderate. The fix: smaller tiles
(or fp16 staging) for 4+ blocks per SM, or stream the star boxes from L1 without staging the tile.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define T 144          // tile interior
#define HALO 9
#define P (T + 2 * HALO)   // 162: staged pitch and height

__global__ void __launch_bounds__(256) aperture_phot_tile(const float* __restrict__ img, const int* __restrict__ stars,
                                                          float* __restrict__ flux, int h, int w, int tiles_x,
                                                          int per_tile, float n_ap, float n_ring) {
    extern __shared__ float tile[];                      // P x P
    int tile_id = blockIdx.x;
    int y0 = (tile_id / tiles_x) * T - HALO, x0 = (tile_id % tiles_x) * T - HALO;
    for (int idx = threadIdx.x; idx < P * P; idx += blockDim.x) {
        int r = idx / P, c = idx - r * P;
        int gy = min(max(y0 + r, 0), h - 1), gx = min(max(x0 + c, 0), w - 1);
        tile[idx] = img[(size_t)gy * w + gx];
    }
    __syncthreads();
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int dx = lane - HALO;                                // lanes 0..18 are columns -9..9
    for (int s = warp; s < per_tile; s += blockDim.x >> 5) {
        int sid = tile_id * per_tile + s;
        int sx = stars[2 * sid], sy = stars[2 * sid + 1];   // tile-local pixel centre, 0..T-1
        float ap = 0.f, ring = 0.f;
        if (lane < 2 * HALO + 1) {
            for (int dy = -HALO; dy <= HALO; ++dy) {
                float v = tile[(sy + HALO + dy) * P + sx + HALO + dx];
                int d2 = dx * dx + dy * dy;
                if (d2 <= 36) ap += v;
                else if (d2 <= 81) ring += v;
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            ap += __shfl_xor_sync(0xffffffffu, ap, o);
            ring += __shfl_xor_sync(0xffffffffu, ring, o);
        }
        if (lane == 0) flux[sid] = ap - n_ap * (ring / n_ring);
    }
}

torch::Tensor aperture_phot(torch::Tensor img, torch::Tensor stars, int64_t per_tile, double n_ap, double n_ring) {
    TORCH_CHECK(img.dim() == 2 && img.scalar_type() == torch::kFloat && img.is_contiguous());
    TORCH_CHECK(stars.scalar_type() == torch::kInt && stars.is_contiguous());
    int h = img.size(0), w = img.size(1);
    TORCH_CHECK(h % T == 0 && w % T == 0);
    int tiles_x = w / T, tiles = (h / T) * tiles_x;
    TORCH_CHECK(stars.numel() == 2 * (int64_t)tiles * per_tile);
    auto flux = torch::empty({tiles * per_tile}, img.options());
    size_t smem = (size_t)P * P * sizeof(float);
    C10_CUDA_CHECK(cudaFuncSetAttribute(aperture_phot_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    aperture_phot_tile<<<tiles, 256, smem>>>(img.data_ptr<float>(), stars.data_ptr<int>(), flux.data_ptr<float>(),
                                             h, w, tiles_x, (int)per_tile, (float)n_ap, (float)n_ring);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return flux;
}
"""

module = load_inline(
    "kls_aperture_phot_tile_smem_fp32_cuda",
    cpp_sources="torch::Tensor aperture_phot(torch::Tensor img, torch::Tensor stars, int64_t per_tile, double n_ap, double n_ring);",
    cuda_sources=CUDA_SRC,
    functions=["aperture_phot"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

H = 9216
W = 9216
TILE = 144
PER_TILE = 256
R_AP2 = 36
R_OUT2 = 81
_D2 = [dx * dx + dy * dy for dy in range(-9, 10) for dx in range(-9, 10)]
N_AP = sum(d <= R_AP2 for d in _D2)                  # 113
N_RING = sum(R_AP2 < d <= R_OUT2 for d in _D2)       # 140
TOLERANCE = 1e-4  # fp32 sums of ~250 pixels in a different order; flux is a difference of two ~1e4 sums


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    img = 100.0 + 5.0 * torch.randn(H, W, device="cuda", generator=g)          # sky + noise
    tiles_x = W // TILE
    tiles = (H // TILE) * tiles_x
    stars = torch.randint(0, TILE, (tiles, PER_TILE, 2), device="cuda", generator=g, dtype=torch.int32)
    # paint each star as a 3x3 blob (amplitude 50-2,000) so the fluxes are well above the noise
    t = torch.arange(tiles, device="cuda")[:, None]
    gx = (t % tiles_x) * TILE + stars[..., 0]
    gy = (t // tiles_x) * TILE + stars[..., 1]
    amp = 50.0 + 1950.0 * torch.rand(tiles, PER_TILE, device="cuda", generator=g)
    flat = img.view(-1)
    for oy, ox, wgt in [(0, 0, 0.4)] + [(oy, ox, 0.075) for oy in (-1, 0, 1) for ox in (-1, 0, 1) if oy or ox]:
        yy = (gy + oy).clamp(0, H - 1)
        xx = (gx + ox).clamp(0, W - 1)
        flat.index_add_(0, (yy * W + xx).reshape(-1), (amp * wgt).reshape(-1))
    return img.contiguous(), stars.contiguous()


def run(img, stars):
    return module.aperture_phot(img, stars, PER_TILE, float(N_AP), float(N_RING))


def reference(img, stars):
    h, w = img.shape
    tiles_x = w // TILE
    tiles = stars.shape[0]
    t = torch.arange(tiles, device=img.device)[:, None]
    gx = ((t % tiles_x) * TILE + stars[..., 0].long()).reshape(-1)
    gy = ((t // tiles_x) * TILE + stars[..., 1].long()).reshape(-1)
    r = torch.arange(-9, 10, device=img.device)
    dy, dx = torch.meshgrid(r, r, indexing="ij")
    d2 = (dx * dx + dy * dy).reshape(-1)
    ap_m = (d2 <= R_AP2).double()
    ring_m = ((d2 > R_AP2) & (d2 <= R_OUT2)).double()
    out = torch.empty(gx.numel(), device=img.device, dtype=torch.float64)
    for s0 in range(0, gx.numel(), 1 << 17):
        yy = (gy[s0 : s0 + (1 << 17), None] + dy.reshape(1, -1)).clamp(0, h - 1)
        xx = (gx[s0 : s0 + (1 << 17), None] + dx.reshape(1, -1)).clamp(0, w - 1)
        v = img[yy, xx].double()
        out[s0 : s0 + (1 << 17)] = v @ ap_m - N_AP * ((v @ ring_m) / N_RING)
    return out.float()
