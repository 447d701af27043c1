"""Planted bottleneck: low occupancy, limited by shared memory (a 118 KB coefficient table per block: 1 block of 4 warps per SM).

Regional geoid undulation from a global gravity-field model (an EGM2008-style spherical-harmonic
synthesis, truncated at degree and order 120): N(phi, lambda) = R sum_{n,m} Pbar_nm(sin phi)
(Cbar_nm cos m lambda + Sbar_nm sin m lambda) on a 352 x 384 grid over Europe (30-60 N, 10 W-40 E,
135,168 points, fp32). Each block of 128 points first copies the whole model into shared memory as one
float4 {a_nm, b_nm, Cbar_nm, Sbar_nm} per term (7,381 terms, 118,096 B of dynamic shared memory: the
column-recursion factors of the fully normalised Legendre functions and the coefficients), then every
thread runs the order-by-order recursion (sectoral seed, then Pbar_nm = a t Pbar_n-1,m - b Pbar_n-2,m)
reading the table as warp-wide broadcasts. Only one such block fits in the 228 KB of an SM: 4 warps per
SM (one per scheduler, 6.25% theoretical occupancy), and each warp's recursion is a serial FMA chain
behind LDS latency; 1,056 blocks = 8 waves.
The hypothesis: low_occupancy (shared_memory): theoretical occupancy 6.25% limited by shared memory
(launch__occupancy_limit_shared_mem 1), ncu's occupancy rule, issue ~30-60% with short-scoreboard /
wait stalls and nothing saturated (DRAM ~0%, SM ~40-60%), ~0.3-0.8 ms. The fix: stream the table in
chunks of a few KB (or keep it in constant / L1-cached global memory) so that 8-16 blocks fit per SM.
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void __launch_bounds__(128) sh_geoid_synthesis(const float4* __restrict__ table,
                                                          const float* __restrict__ lat, const float* __restrict__ lon,
                                                          float* __restrict__ out, int npts, int lmax, int nterms,
                                                          float scale) {
    extern __shared__ float4 tab[];
    for (int e = threadIdx.x; e < nterms; e += blockDim.x) tab[e] = table[e];
    __syncthreads();
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= npts) return;
    float t = sinf(lat[p]), u = cosf(lat[p]);
    float c1 = cosf(lon[p]), s1 = sinf(lon[p]);
    float cm = 1.0f, sm = 0.0f;      // cos(m lambda), sin(m lambda)
    float pmm = 1.0f;                // Pbar_mm
    float acc = 0.0f;
    int e = 0;
    for (int m = 0; m <= lmax; ++m) {
        float4 q = tab[e++];
        if (m > 0) pmm *= u * q.x;   // sectoral seed
        float p1 = pmm, p2 = 0.0f;
        float sc = q.z * p1, ss = q.w * p1;
        for (int n = m + 1; n <= lmax; ++n) {
            q = tab[e++];
            float pn = q.x * t * p1 - q.y * p2;
            sc += q.z * pn;
            ss += q.w * pn;
            p2 = p1;
            p1 = pn;
        }
        acc += sc * cm + ss * sm;
        float cn = cm * c1 - sm * s1;
        sm = sm * c1 + cm * s1;
        cm = cn;
    }
    out[p] = scale * acc;
}

torch::Tensor geoid(torch::Tensor table, torch::Tensor lat, torch::Tensor lon, int64_t lmax, double scale) {
    TORCH_CHECK(table.is_cuda() && table.scalar_type() == torch::kFloat && table.is_contiguous() && table.size(1) == 4);
    TORCH_CHECK(lat.sizes() == lon.sizes() && lat.is_contiguous() && lon.is_contiguous());
    int nterms = table.size(0), npts = lat.numel();
    TORCH_CHECK(nterms == (lmax + 1) * (lmax + 2) / 2);
    size_t smem = (size_t)nterms * sizeof(float4);
    C10_CUDA_CHECK(cudaFuncSetAttribute(sh_geoid_synthesis, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    auto out = torch::empty_like(lat);
    sh_geoid_synthesis<<<(npts + 127) / 128, 128, smem>>>(reinterpret_cast<const float4*>(table.data_ptr<float>()),
                                                          lat.data_ptr<float>(), lon.data_ptr<float>(),
                                                          out.data_ptr<float>(), npts, (int)lmax, nterms, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_sh_geoid_synthesis_smem_fp32_cuda",
    cpp_sources="torch::Tensor geoid(torch::Tensor table, torch::Tensor lat, torch::Tensor lon, int64_t lmax, double scale);",
    cuda_sources=CUDA_SRC,
    functions=["geoid"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

LMAX = 120
NLAT = 352
NLON = 384
R_M = 6371000.0
TOLERANCE = 1e-4  # fp32 recursions to degree 120


def _recursion_factors(lmax, device):
    """a_nm, b_nm in the table's (m outer, n = m..lmax inner) order; a_mm holds the sectoral factor."""
    mn = torch.triu_indices(lmax + 1, lmax + 1, device=device)                          # rows m, columns n >= m
    m, n = mn[0].double(), mn[1].double()
    diag = n == m
    sect = torch.where(m == 1, torch.full_like(m, math.sqrt(3.0)), torch.sqrt((2 * m + 1) / (2 * m).clamp(min=1)))
    nm = ((n - m) * (n + m)).clamp(min=1)
    a = torch.sqrt((2 * n - 1) * (2 * n + 1) / nm)
    b = torch.sqrt(((2 * n + 1) * (n + m - 1) * (n - m - 1)).clamp(min=0) / (nm * (2 * n - 3).clamp(min=1)))
    a = torch.where(diag, sect, a)
    b = torch.where(diag, torch.zeros_like(b), b)
    return m, n, a, b


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    m, n, a, b = _recursion_factors(LMAX, "cuda")
    sigma = torch.where(n >= 2, 1e-5 / n.clamp(min=1) ** 2, torch.zeros_like(n))             # Kaula's rule
    c = sigma * torch.randn(n.shape, device="cuda", generator=g, dtype=torch.float64)
    s = torch.where(m > 0, sigma, torch.zeros_like(n)) * torch.randn(n.shape, device="cuda", generator=g, dtype=torch.float64)
    table = torch.stack([a, b, c, s], dim=1).float()
    lat = torch.deg2rad(torch.linspace(30.0, 60.0, NLAT, device="cuda", dtype=torch.float64))
    lon = torch.deg2rad(torch.linspace(-10.0, 40.0, NLON, device="cuda", dtype=torch.float64))
    la, lo = torch.meshgrid(lat, lon, indexing="ij")
    return table.contiguous(), la.float().reshape(-1).contiguous(), lo.float().reshape(-1).contiguous()


def run(table, lat, lon):
    return module.geoid(table, lat, lon, LMAX, R_M)


def reference(table, lat, lon):
    lmax = int(round((math.sqrt(8 * table.shape[0] + 1) - 3) / 2))
    tb = table.double()
    t, u = torch.sin(lat.double()), torch.cos(lat.double())
    acc = torch.zeros_like(t)
    pmm = torch.ones_like(t)
    e = 0
    for m in range(lmax + 1):
        if m > 0:
            pmm = pmm * u * tb[e, 0]
        p1, p2 = pmm, torch.zeros_like(t)
        sc, ss = tb[e, 2] * p1, tb[e, 3] * p1
        e += 1
        for _ in range(m + 1, lmax + 1):
            pn = tb[e, 0] * t * p1 - tb[e, 1] * p2
            sc, ss = sc + tb[e, 2] * pn, ss + tb[e, 3] * pn
            p2, p1 = p1, pn
            e += 1
        acc = acc + sc * torch.cos(m * lon.double()) + ss * torch.sin(m * lon.double())
    return (R_M * acc).float()
