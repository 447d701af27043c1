"""Planted bottleneck: low occupancy, limited by shared memory (an oversized stencil tile).

A 5-point stencil on an 8192 x 8192 fp32 grid. Each 128-thread block stages a 66 x 258 tile
(68 KB, halo included) in shared memory, then computes its 64 x 256 outputs from it. At 68 KB a
block, only three blocks fit in the SM's 228 KB: 12 warps of 64 (18.75 % theoretical occupancy).
The staging loop is kept rolled (as it would be with a run-time tile size), so each thread has
one global load in flight; with 12 warps per SM that is far too few loads to stream DRAM, and the
SMs spend their time waiting. Smaller tiles (more blocks per SM) or more threads per tile fix it.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define TX 256   // tile width
#define TY 64    // tile height
#define SW (TX + 2)
#define THREADS 128

__global__ void __launch_bounds__(THREADS) stencil_bigtile_kernel(const float* __restrict__ in, float* __restrict__ out,
                                                                  int n) {
    extern __shared__ float s[];  // (TY + 2) x (TX + 2)
    int x0 = blockIdx.x * TX - 1, y0 = blockIdx.y * TY - 1;
    #pragma unroll 1
    for (int k = threadIdx.x; k < (TY + 2) * SW; k += THREADS) {
        int gy = y0 + k / SW, gx = x0 + k % SW;
        s[k] = (gy >= 0 && gy < n && gx >= 0 && gx < n) ? in[(size_t)gy * n + gx] : 0.f;
    }
    __syncthreads();
    #pragma unroll 1
    for (int k = threadIdx.x; k < TY * TX; k += THREADS) {
        int r = k / TX + 1, c = k % TX + 1;
        float v = 0.5f * s[r * SW + c] + 0.125f * (s[(r - 1) * SW + c] + s[(r + 1) * SW + c] + s[r * SW + c - 1] + s[r * SW + c + 1]);
        out[(size_t)(y0 + r) * n + x0 + c] = v;
    }
}

torch::Tensor stencil(torch::Tensor in) {
    int n = in.size(0);  // square, n a multiple of 256
    auto out = torch::empty_like(in);
    int smem = (TY + 2) * SW * sizeof(float);
    C10_CUDA_CHECK(cudaFuncSetAttribute(stencil_bigtile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    stencil_bigtile_kernel<<<dim3(n / TX, n / TY), THREADS, smem>>>(in.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_stencil2d_bigtile_cuda", cpp_sources="torch::Tensor stencil(torch::Tensor in);",
                     cuda_sources=CUDA_SRC, functions=["stencil"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 8192


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, N, device="cuda"),)


def run(u):
    return module.stencil(u)


def reference(u):
    p = torch.nn.functional.pad(u, (1, 1, 1, 1))
    return 0.5 * u + 0.125 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
