"""Planted bottleneck: warp divergence (PointNet++ ball query: each thread scans until it has 32 neighbours).

Ball query of PointNet++'s set-abstraction layer (the CUDA op as published: one thread per query,
scan the cloud's points in order, keep the first 32 within the radius, pad with the first one found):
66 LiDAR crops of 4,096 points (fp32, [B, N, 3], on a 1/256 m grid so squared distances are exact),
every point a query (in a shuffled order), radius^2 ~0.01: 270,336 threads, 1,056 blocks of 256 = one
full wave. 90% of each crop lies in a dense object (a blob of radius 0.12) where a query finds its 32
neighbours within the first ~60-120 points; the other 10% are scattered background points whose balls
hold ~1-3 points, so their threads scan all 4,096. Queries are in random order, so 97% of warps hold at
least one background query: the warp runs ~4,096 iterations (~10 instructions: 3 broadcast loads, the
distance, compare, branch) with 1-5 of its 32 lanes active. 8,448 warps x ~40k instructions,
~0.3-0.6 ms, against ~38 MB of data (the 35 MB index output; the points are L1/L2 broadcasts). The hypothesis: ncu's
ThreadDivergence (average active threads per warp instruction ~3-6 of 32), SM% low-moderate, MEM% low.
The fix: one warp per query (lanes over candidate points, ballot + popc to take the first 32), or
sort the queries by density.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void __launch_bounds__(256) ball_query_first_k(const float* __restrict__ pts, const float* __restrict__ qry,
                                                          int* __restrict__ idx, int b_n, int n, int m, float r2,
                                                          int nsample) {
    int b = blockIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;       // query index within the cloud
    if (j >= m) return;
    const float* p = pts + (size_t)b * n * 3;
    const float* q = qry + ((size_t)b * m + j) * 3;
    int* out = idx + ((size_t)b * m + j) * nsample;
    float qx = q[0], qy = q[1], qz = q[2];
    int cnt = 0;
    for (int k = 0; k < n && cnt < nsample; ++k) {
        float dx = p[k * 3] - qx, dy = p[k * 3 + 1] - qy, dz = p[k * 3 + 2] - qz;
        float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 < r2) {
            if (cnt == 0)
                for (int l = 0; l < nsample; ++l) out[l] = k;
            out[cnt] = k;
            ++cnt;
        }
    }
}

torch::Tensor ball_query(torch::Tensor pts, torch::Tensor qry, double r2, int64_t nsample) {
    TORCH_CHECK(pts.dim() == 3 && pts.size(2) == 3 && pts.scalar_type() == torch::kFloat && pts.is_contiguous());
    TORCH_CHECK(qry.dim() == 3 && qry.size(2) == 3 && qry.scalar_type() == torch::kFloat && qry.is_contiguous());
    int bn = pts.size(0), n = pts.size(1), m = qry.size(1);
    auto idx = torch::zeros({bn, m, nsample}, pts.options().dtype(torch::kInt));
    dim3 grid((m + 255) / 256, bn);
    ball_query_first_k<<<grid, 256>>>(pts.data_ptr<float>(), qry.data_ptr<float>(), idx.data_ptr<int>(), bn, n, m,
                                      (float)r2, (int)nsample);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return idx;
}
"""

module = load_inline(
    "kls_ball_query_first_k_fp32_cuda",
    cpp_sources="torch::Tensor ball_query(torch::Tensor pts, torch::Tensor qry, double r2, int64_t nsample);",
    cuda_sources=CUDA_SRC,
    functions=["ball_query"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

CLOUDS = 66
POINTS = 4096
QUERIES = 4096  # every point is a query
NSAMPLE = 32
UNITS = 256
R2 = 655.5 / 65536.0   # radius ~0.1 m; half a grid step of d^2 away from any exact squared distance
DENSE = 0.9


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    dense = torch.rand(CLOUDS, POINTS, device="cuda", generator=g) < DENSE
    d = torch.randn(CLOUDS, POINTS, 3, device="cuda", generator=g)
    d = d / d.norm(dim=-1, keepdim=True) * torch.rand(CLOUDS, POINTS, 1, device="cuda", generator=g) ** (1 / 3)
    blob = 0.5 + 0.12 * d                                                   # dense object
    back = torch.rand(CLOUDS, POINTS, 3, device="cuda", generator=g)        # background in the unit cube
    pts = torch.where(dense[..., None], blob, back)
    pts = torch.round(pts * UNITS) / UNITS
    pick = torch.argsort(torch.rand(CLOUDS, POINTS, device="cuda", generator=g), dim=1)[:, :QUERIES]
    qry = torch.gather(pts, 1, pick[..., None].expand(-1, -1, 3))
    return pts.contiguous(), qry.contiguous()


def run(pts, qry):
    return module.ball_query(pts, qry, R2, NSAMPLE)


def reference(pts, qry):
    bn, n, _ = pts.shape
    m = qry.shape[1]
    out = torch.empty(bn, m, NSAMPLE, device=pts.device, dtype=torch.long)
    ar = torch.arange(n, device=pts.device)
    for b in range(bn):
        d2 = ((qry[b].double()[:, None, :] - pts[b].double()[None, :, :]) ** 2).sum(-1)   # [m, n], exact
        key = torch.where(d2 < R2, ar[None, :], ar[None, :] + n)
        first = torch.topk(key, NSAMPLE, dim=1, largest=False, sorted=True).values
        valid = first < n
        pad = torch.where(valid[:, :1], first[:, :1], torch.zeros_like(first[:, :1]))
        out[b] = torch.where(valid, first, pad)
    return out.int()
