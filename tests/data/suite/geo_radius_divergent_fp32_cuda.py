"""Planted bottleneck: warp divergence (a WHERE clause whose expensive branch runs for one row in eight).

A query over a 16M-row table of (category int32, latitude fp32, longitude fp32) columns: for the rows of
one category (12.5% of the rows, spread at random) the distance to the nearest of 8 stores is computed
with the haversine formula (accurate sinf / cosf / asinf / sqrtf, 8 great-circle distances per row,
~700-850 instructions on the fast paths; nvcc 13, sm_90: 28 registers, 0 spills, 2,792 static SASS
instructions with the slow paths); other rows get -1. One thread per row, 256-thread blocks, 16 bytes of
traffic per row (268 MB, ~88 us at 3.05 TB/s). Almost every warp (1 - 0.875^32 = 98.6%) holds at least
one matching row, so almost every warp walks the whole expensive branch with ~4 of its 32 lanes active:
~16M / 32 x ~800 = ~0.4G warp-instructions, ~0.45-0.55 ms at the issue rate, where a compacted list of
the ~2M matching rows would need an eighth of that. The hypothesis: ThreadDivergence firing with ~5-6
active threads per instruction, SM% high (issue), DRAM low. The fix is to compact the matching row ids
first (or sort by category) and run the distance on dense warps.
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define STORES 8
#define EARTH_KM 6371.0f
#define DEG 0.017453292519943295f

struct Stores { float lat[STORES], lon[STORES], coslat[STORES]; };   // radians, cos(lat)

__global__ void __launch_bounds__(256) geo_radius_where(const int* __restrict__ category, const float* __restrict__ lat,
                                                         const float* __restrict__ lon, float* __restrict__ dist,
                                                         Stores st, int wanted, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float d = -1.0f;
    if (category[i] == wanted) {   // WHERE category = wanted: ~1 row in 8
        float la = lat[i] * DEG, lo = lon[i] * DEG;
        float cla = cosf(la);
        float best = 1e30f;
        #pragma unroll
        for (int s = 0; s < STORES; ++s) {   // haversine distance to each store
            float sdl = sinf(0.5f * (st.lat[s] - la));
            float sdo = sinf(0.5f * (st.lon[s] - lo));
            float a = sdl * sdl + cla * st.coslat[s] * sdo * sdo;
            float c = 2.0f * asinf(fminf(1.0f, sqrtf(a)));
            best = fminf(best, EARTH_KM * c);
        }
        d = best;
    }
    dist[i] = d;
}

torch::Tensor nearest_store(torch::Tensor category, torch::Tensor lat, torch::Tensor lon, torch::Tensor stores,
                            int64_t wanted) {
    int n = category.numel();
    TORCH_CHECK(stores.numel() == 2 * STORES && stores.device().is_cpu());
    Stores st;
    auto sp = stores.accessor<double, 2>();   // [2, STORES]: latitude, longitude in degrees
    for (int s = 0; s < STORES; ++s) {
        st.lat[s] = (float)(sp[0][s] * M_PI / 180.0);
        st.lon[s] = (float)(sp[1][s] * M_PI / 180.0);
        st.coslat[s] = (float)cos(sp[0][s] * M_PI / 180.0);
    }
    auto dist = torch::empty({n}, lat.options());
    geo_radius_where<<<(n + 255) / 256, 256>>>(category.data_ptr<int>(), lat.data_ptr<float>(), lon.data_ptr<float>(),
                                               dist.data_ptr<float>(), st, (int)wanted, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return dist;
}
"""

module = load_inline(
    "kls_geo_radius_divergent_fp32_cuda",
    cpp_sources="torch::Tensor nearest_store(torch::Tensor category, torch::Tensor lat, torch::Tensor lon, "
    "torch::Tensor stores, int64_t wanted);",
    cuda_sources=CUDA_SRC,
    functions=["nearest_store"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

ROWS = 1 << 24
CATEGORIES = 8
WANTED = 3
EARTH_KM = 6371.0
TOLERANCE = 1e-4  # fp32 haversine against float64
STORES = torch.tensor(
    [
        [48.8566, 52.5200, 41.9028, 40.4168, 50.8503, 47.4979, 59.3293, 38.7223],  # latitude (deg)
        [2.3522, 13.4050, 12.4964, -3.7038, 4.3517, 19.0402, 18.0686, -9.1393],  # longitude (deg)
    ],
    dtype=torch.float64,
)


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    category = torch.randint(0, CATEGORIES, (ROWS,), device="cuda", generator=g, dtype=torch.int32)
    lat = 36.0 + 24.0 * torch.rand(ROWS, device="cuda", generator=g)  # customers across Europe
    lon = -10.0 + 40.0 * torch.rand(ROWS, device="cuda", generator=g)
    return category, lat, lon


def run(category, lat, lon):
    return module.nearest_store(category, lat, lon, STORES, WANTED)


def reference(category, lat, lon):
    la = lat.double() * (math.pi / 180)
    lo = lon.double() * (math.pi / 180)
    s = STORES.to(lat.device) * (math.pi / 180)
    a = (
        torch.sin(0.5 * (s[0][None, :] - la[:, None])) ** 2
        + torch.cos(la)[:, None] * torch.cos(s[0])[None, :] * torch.sin(0.5 * (s[1][None, :] - lo[:, None])) ** 2
    )
    d = 2 * EARTH_KM * torch.asin(a.sqrt().clamp(max=1.0))
    return torch.where(category == WANTED, d.min(dim=1).values, torch.full_like(la, -1.0)).float()
