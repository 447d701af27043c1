"""Planted bottleneck: shared-memory bank conflicts (an fp16 transpose through an unpadded tile).

A 64 x 64 fp16 tile per 32 x 8 block: each thread moves pairs of halves (a __half2, 4 bytes)
when reading rows, so the global side is coalesced; when writing the transpose, each thread reads
two halves from a tile column. A tile row is 64 halves = 128 bytes = exactly the 32 banks, so the
elements of a column all fall in the same bank: 32 threads reading 32 rows of one column is a
32-way conflict (and each thread needs two such reads). The fix is padding the row by one __half2
(4 bytes), which spreads a column over all banks.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define T 64     // tile: 64 x 64 halves
#define ROWS 8   // block 32 x 8

__global__ void transpose_half_conflict(const __half* __restrict__ in, __half* __restrict__ out, int n) {
    __shared__ __half tile[T][T];  // 128-byte rows: a column sits in one bank
    int bx = blockIdx.x * T, by = blockIdx.y * T;
    #pragma unroll
    for (int j = 0; j < T; j += ROWS) {                       // rows of the tile, two halves per thread
        int r = threadIdx.y + j;
        __half2 v = *reinterpret_cast<const __half2*>(in + (size_t)(by + r) * n + bx + 2 * threadIdx.x);
        *reinterpret_cast<__half2*>(&tile[r][2 * threadIdx.x]) = v;
    }
    __syncthreads();
    #pragma unroll
    for (int j = 0; j < T; j += ROWS) {                       // columns of the tile
        int c = threadIdx.y + j;                               // output row = input column
        __half2 v = __halves2half2(tile[2 * threadIdx.x][c], tile[2 * threadIdx.x + 1][c]);
        *reinterpret_cast<__half2*>(out + (size_t)(bx + c) * n + by + 2 * threadIdx.x) = v;
    }
}

torch::Tensor transpose(torch::Tensor in) {
    int n = in.size(0);  // square, a multiple of 64
    auto out = torch::empty_like(in);
    transpose_half_conflict<<<dim3(n / T, n / T), dim3(32, ROWS)>>>(
        reinterpret_cast<const __half*>(in.data_ptr<at::Half>()), reinterpret_cast<__half*>(out.data_ptr<at::Half>()), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_transpose_smem_conflict_fp16_cuda", cpp_sources="torch::Tensor transpose(torch::Tensor in);",
                     cuda_sources=CUDA_SRC, functions=["transpose"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 16384  # 512 MB of fp16


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, N, device="cuda", dtype=torch.float16),)


def run(a):
    return module.transpose(a)


def reference(a):
    return a.t().contiguous()
