"""Planted bottleneck: compute bound (k-medians assignment under the L1 distance: FP32 adds, no matrix product).

Assigns 2M points of 16 dimensions to the nearest of 256 centroids under the Manhattan distance
sum_d |x_d - c_d|, fp32. Points are stored dimension-major ([16, N], so a warp's loads are
coalesced); each 256-thread block stages the 256 centroids (16 KB) in shared memory once, and
each thread keeps two points (32 floats) in registers and scans all centroids, reading each
centroid as four 16-byte broadcasts shared by its two points. Per point and centroid: 16
subtractions and 16 absolute-value adds (|t| is a free operand modifier), then a compare and two
selects: ~35 instructions, 2M x 256 x 35 = 18.8G lane operations, ~0.6 ms with the FP32 pipe busy
nearly every cycle, for 128 MB of points read once (~45 us of DRAM). A near miss for
tensor_cores_unused: unlike the squared Euclidean distance (|x|^2 - 2 x.c + |c|^2), the L1
distance has no matrix-product form, so tensor cores cannot take this work; fewer operations
(pruning centroids by a bound) or lower precision would.
Coordinates are small integers, so every distance is exact in fp32 and ties resolve to the first
centroid in both kernel and reference.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define D 16          // dimensions
#define KMAX 256      // centroids (shared memory holds them all)
#define THREADS 256   // each thread: two points, THREADS apart

__global__ void __launch_bounds__(THREADS) kmedians_l1_assign(const float* __restrict__ x, const float* __restrict__ cent,
                                                              int* __restrict__ assign, int n, int k) {
    __shared__ float4 cs[KMAX * D / 4];
    for (int i = threadIdx.x; i < k * D / 4; i += THREADS) cs[i] = reinterpret_cast<const float4*>(cent)[i];
    __syncthreads();
    int p0 = blockIdx.x * (2 * THREADS) + threadIdx.x, p1 = p0 + THREADS;
    float a[D], b[D];
    #pragma unroll
    for (int d = 0; d < D; ++d) {   // [D, n]: coalesced
        a[d] = p0 < n ? x[(size_t)d * n + p0] : 0.f;
        b[d] = p1 < n ? x[(size_t)d * n + p1] : 0.f;
    }
    float best_a = INFINITY, best_b = INFINITY;
    int arg_a = 0, arg_b = 0;
    for (int c = 0; c < k; ++c) {
        float da = 0.f, db = 0.f;
        #pragma unroll
        for (int q = 0; q < D / 4; ++q) {
            float4 v = cs[c * (D / 4) + q];   // same address for the whole warp: a broadcast
            da += fabsf(a[4 * q] - v.x) + fabsf(a[4 * q + 1] - v.y) + fabsf(a[4 * q + 2] - v.z) + fabsf(a[4 * q + 3] - v.w);
            db += fabsf(b[4 * q] - v.x) + fabsf(b[4 * q + 1] - v.y) + fabsf(b[4 * q + 2] - v.z) + fabsf(b[4 * q + 3] - v.w);
        }
        if (da < best_a) { best_a = da; arg_a = c; }   // strict: ties keep the first centroid
        if (db < best_b) { best_b = db; arg_b = c; }
    }
    if (p0 < n) assign[p0] = arg_a;
    if (p1 < n) assign[p1] = arg_b;
}

torch::Tensor assign_l1(torch::Tensor x, torch::Tensor cent) {
    int n = x.size(1), k = cent.size(0);   // x: [16, n]; cent: [k <= 256, 16]
    TORCH_CHECK(x.size(0) == D && cent.size(1) == D && k <= KMAX);
    auto assign = torch::empty({n}, x.options().dtype(torch::kInt32));
    kmedians_l1_assign<<<(n + 2 * THREADS - 1) / (2 * THREADS), THREADS>>>(x.data_ptr<float>(), cent.data_ptr<float>(),
                                                                           assign.data_ptr<int>(), n, k);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return assign;
}
"""

module = load_inline(
    "kls_kmedians_l1_assign_fp32_cuda",
    cpp_sources="torch::Tensor assign_l1(torch::Tensor x, torch::Tensor cent);",
    cuda_sources=CUDA_SRC,
    functions=["assign_l1"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

POINTS, DIM, CENTROIDS = 2**21, 16, 256  # 128 MB of points


def make_inputs():
    torch.manual_seed(0)
    x = torch.randint(-8, 9, (DIM, POINTS), device="cuda").float()  # small integers: exact distances
    cent = torch.randint(-8, 9, (CENTROIDS, DIM), device="cuda").float()
    return x, cent


def run(x, cent):
    return module.assign_l1(x, cent)


def reference(x, cent):
    pts = x.t()
    out = [torch.cdist(pts[i : i + 65536], cent, p=1).argmin(dim=1) for i in range(0, pts.shape[0], 65536)]
    return torch.cat(out).int()
