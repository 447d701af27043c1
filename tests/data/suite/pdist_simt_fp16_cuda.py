"""Planted bottleneck: tensor cores unused (pairwise squared distances as a matrix product on the CUDA cores).

Squared Euclidean distances between 4,096 points X and 4,096 points Y of 256 dimensions (fp16 in,
fp32 out), through the same identity as cdist_dot_fp16_triton.py, d = |x|^2 + |y|^2 - 2 x . y,
but with the cross term computed by a classic shared-memory tiled SIMT matrix product: 16 x 16
threads per 64 x 64 output tile, 32 dimensions per stage converted to fp32 in shared memory
(padded: the transposing stores and the reads are free of bank conflicts), 4 x 4 outputs per
thread with FFMA, the norms accumulated on the way. 8.6 GFLOP of matrix product (plus the norms)
on the FP32 pipe and 8 shared loads per 24 FFMA: ~0.3 ms, where mma on fp16 operands would take
~12 us of tensor time and the 64 MB output ~21 us of DRAM. The fix is tl.dot / mma / cuBLAS for
X Y^T (fp16 operands, fp32 accumulation).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define TILE 64     // outputs per block side
#define KC 32       // dimensions per stage
#define PITCH 65    // padded rows of the transposed stage

__global__ void __launch_bounds__(256) pdist_simt(const __half* __restrict__ x, const __half* __restrict__ y,
                                                  float* __restrict__ out, int M, int N, int D) {
    __shared__ float xs[KC][PITCH], ys[KC][PITCH];   // [dimension][point]
    int tx = threadIdx.x, ty = threadIdx.y, t = ty * 16 + tx;
    int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
    float acc[4][4] = {}, xn[4] = {}, yn[4] = {};
    for (int k0 = 0; k0 < D; k0 += KC) {
        #pragma unroll
        for (int r = 0; r < 4; ++r) {   // 64 points x 16 half2 per operand: coalesced rows of 64 bytes
            int idx = t + 256 * r, row = idx / 16, dp = idx % 16;
            float2 a = __half22float2(*reinterpret_cast<const __half2*>(x + (size_t)(m0 + row) * D + k0 + 2 * dp));
            float2 b = __half22float2(*reinterpret_cast<const __half2*>(y + (size_t)(n0 + row) * D + k0 + 2 * dp));
            xs[2 * dp][row] = a.x; xs[2 * dp + 1][row] = a.y;
            ys[2 * dp][row] = b.x; ys[2 * dp + 1][row] = b.y;
        }
        __syncthreads();
        #pragma unroll 8
        for (int k = 0; k < KC; ++k) {
            float xv[4], yv[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) { xv[i] = xs[k][ty + 16 * i]; yv[i] = ys[k][tx + 16 * i]; }
            #pragma unroll
            for (int i = 0; i < 4; ++i) {
                xn[i] = fmaf(xv[i], xv[i], xn[i]);
                yn[i] = fmaf(yv[i], yv[i], yn[i]);
                #pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(xv[i], yv[j], acc[i][j]);   // the matrix product
            }
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            out[(size_t)(m0 + ty + 16 * i) * N + n0 + tx + 16 * j] = fmaxf(xn[i] + yn[j] - 2.f * acc[i][j], 0.f);
}

torch::Tensor pdist(torch::Tensor x, torch::Tensor y) {
    int M = x.size(0), N = y.size(0), D = x.size(1);   // multiples of 64, 64 and 32
    TORCH_CHECK(M % TILE == 0 && N % TILE == 0 && D % KC == 0);
    auto out = torch::empty({M, N}, x.options().dtype(torch::kFloat32));
    pdist_simt<<<dim3(N / TILE, M / TILE), dim3(16, 16)>>>(reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
                                                           reinterpret_cast<const __half*>(y.data_ptr<at::Half>()),
                                                           out.data_ptr<float>(), M, N, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_pdist_simt_fp16_cuda",
    cpp_sources="torch::Tensor pdist(torch::Tensor x, torch::Tensor y);",
    cuda_sources=CUDA_SRC,
    functions=["pdist"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

M, N, D = 4096, 4096, 256


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(M, D, device="cuda", dtype=torch.float16)
    y = torch.randn(N, D, device="cuda", dtype=torch.float16)
    return x, y


def run(x, y):
    return module.pdist(x, y)


def reference(x, y):
    xd, yd = x.double(), y.double()
    d2 = (xd * xd).sum(1)[:, None] + (yd * yd).sum(1)[None, :] - 2.0 * xd @ yd.t()
    return d2.clamp_min(0.0).float()
