"""Fix of transpose_smem_conflict_cuda.py: the same transpose with a [32][33] tile.

With one float of padding per row, walking down a tile column moves 33 words, i.e. to the next
bank, so the 32 threads of a warp hit 32 different banks and a column read is one wavefront.
What is left is a coalesced copy of 256 MB in and 256 MB out: memory bound, near the DRAM roof.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define TILE 32
#define ROWS 8   // a 32 x 8 block moves a 32 x 32 tile, four rows per thread

__global__ void transpose_tile32_padded(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float tile[TILE][TILE + 1];  // one float of padding: a column spans all 32 banks
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    #pragma unroll
    for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];  // row: coalesced
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    #pragma unroll
    for (int j = 0; j < TILE; j += ROWS) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];  // column of the tile
}

torch::Tensor transpose(torch::Tensor in) {
    int n = in.size(0);  // square, a multiple of 32
    auto out = torch::empty_like(in);
    transpose_tile32_padded<<<dim3(n / TILE, n / TILE), dim3(TILE, ROWS)>>>(in.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_transpose_smem_padded_cuda", cpp_sources="torch::Tensor transpose(torch::Tensor in);",
                     cuda_sources=CUDA_SRC, functions=["transpose"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 8192  # 256 MB of fp32


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, N, device="cuda"),)


def run(a):
    return module.transpose(a)


def reference(a):
    return a.t().contiguous()
