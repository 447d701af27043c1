"""Planted bottleneck: warp divergence (point-in-polygon tests where only ~1 lane in 10 passes the bounding-box check).

Inside/outside flags of 2,097,152 points against one 1,024-vertex polygon (fp32 coordinates, one
uint8 flag per point) by ray casting: a point is inside when a ray from it towards +x crosses an odd
number of edges (half-open rule on the edge ends, division-free crossing test). The polygon is
staged in shared memory (8 KB, every lane reads the same vertex: broadcasts). Points outside the
polygon's bounding box are answered at once; the others walk all 1,024 edges (~6 instructions per
edge that does not straddle the point's row, ~20 for the few that do; ptxas unrolls by 4). The
points are uniform over a 2,048 x 2,048 square and the polygon's box covers ~10% of it, so a warp of
32 consecutive points holds ~3 points that walk the edges, and 96% of the warps hold at least one:
nearly every warp runs the full 1,024-edge loop with ~3 of its 32 lanes active. ~0.4G warp
instructions, ~0.4 ms at 4 issues per cycle per SM, for ~0.04G instructions' worth of useful lanes;
the 18 MB of inputs and outputs need ~6 us. Expected: ~3 active threads per warp instruction in the
loop and ncu's divergence rule, with the issue slots busy. The fix is to keep the lanes busy:
compact the points that pass the box test into a dense list first (or bin the points by tile) and
run the edge loop over that list, ~10x fewer warp instructions. Coordinates are integers below 2^10
in magnitude, so every product and difference in the test is exact in fp32 (with or without FMA) and
the flags match the float64 reference exactly.
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>
#define MAXV 1024

__global__ void __launch_bounds__(256) pip_bbox_crossings(const float2* __restrict__ pts, const float2* __restrict__ poly,
                                                          int nv, const float* __restrict__ box,
                                                          uint8_t* __restrict__ inside, int n) {
    __shared__ float2 sp[MAXV];
    for (int k = threadIdx.x; k < nv; k += blockDim.x) sp[k] = poly[k];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 p = pts[i];
    int c = 0;
    if (p.x >= box[0] && p.y >= box[1] && p.x <= box[2] && p.y <= box[3]) {   // ~10% of the points
        float2 a = sp[nv - 1];
        for (int k = 0; k < nv; ++k) {                                  // edge (a, b) = (v[k-1], v[k])
            float2 b = sp[k];
            if ((a.y > p.y) != (b.y > p.y)) {
                float t = (b.x - a.x) * (p.y - a.y) - (p.x - a.x) * (b.y - a.y);   // > 0: p left of the edge going up
                if (b.y > a.y ? t > 0.f : t < 0.f) c ^= 1;
            }
            a = b;
        }
    }
    inside[i] = (uint8_t)c;
}

torch::Tensor pip(torch::Tensor pts, torch::Tensor poly, torch::Tensor box) {
    int n = pts.size(0), nv = poly.size(0);   // pts: [n, 2], poly: [nv, 2], box: [4] (xmin, ymin, xmax, ymax) fp32
    TORCH_CHECK(nv >= 3 && nv <= MAXV && box.numel() == 4);
    auto inside = torch::empty({n}, pts.options().dtype(torch::kUInt8));
    pip_bbox_crossings<<<(n + 255) / 256, 256>>>(reinterpret_cast<const float2*>(pts.data_ptr<float>()),
                                                 reinterpret_cast<const float2*>(poly.data_ptr<float>()), nv,
                                                 box.data_ptr<float>(), inside.data_ptr<uint8_t>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return inside;
}
"""

module = load_inline(
    "kls_pip_bbox_divergent_fp32_cuda",
    cpp_sources="torch::Tensor pip(torch::Tensor pts, torch::Tensor poly, torch::Tensor box);",
    cuda_sources=CUDA_SRC,
    functions=["pip"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

POINTS, VERTICES = 2**21, 1024
HALF = 1024  # points uniform over integer coordinates in [-1024, 1024)^2
CENTER = (-180.0, 140.0)  # polygon: star-shaped, radius 220..320 around CENTER (bounding box ~10% of the square)


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    pts = torch.randint(-HALF, HALF, (POINTS, 2), device="cuda", generator=g).float()
    angle = torch.arange(VERTICES, device="cuda", dtype=torch.float64) * (2 * math.pi / VERTICES)
    radius = 220.0 + 100.0 * torch.rand(VERTICES, device="cuda", generator=g, dtype=torch.float64)
    poly = torch.stack([CENTER[0] + radius * angle.cos(), CENTER[1] + radius * angle.sin()], dim=1).round().float()
    box = torch.cat([poly.min(0).values, poly.max(0).values])  # the polygon's bounding box
    return pts, poly, box


def run(pts, poly, box):
    return module.pip(pts, poly, box)


def reference(pts, poly, box):
    p, b = pts.double(), poly.double()
    a = b.roll(1, 0)  # edge k runs from v[k-1] to v[k]
    ax, ay, bx, by = a[:, 0][None], a[:, 1][None], b[:, 0][None], b[:, 1][None]
    out = torch.empty(p.shape[0], device=pts.device, dtype=torch.uint8)
    for s in range(0, p.shape[0], 8192):
        px, py = p[s:s + 8192, 0:1], p[s:s + 8192, 1:2]
        straddle = (ay > py) != (by > py)
        t = (bx - ax) * (py - ay) - (px - ax) * (by - ay)
        cross = straddle & torch.where(by > ay, t > 0, t < 0)
        out[s:s + 8192] = (cross.sum(1) % 2).to(torch.uint8)
    return out
