"""Planted bottleneck: shared-memory bank conflicts.

Shared memory has 32 banks, each 4 bytes wide; word k lives in bank k % 32. The
transpose writes a 32x32 tile row by row, then reads it column by column: the 32
threads of a warp read tile[0][c], tile[1][c], ..., which are 32 floats apart and
all sit in the same bank. The hardware serves them one after another: a 32-way
conflict, 32 shared-memory cycles where 1 would do. transpose_padded.py fixes it.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define TILE 32

__global__ void transpose_naive_smem(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float tile[TILE][TILE];  // no padding: a column of the tile is one bank
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];   // coalesced read, row of the tile
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];  // column of the tile: 32-way conflict
}

torch::Tensor transpose(torch::Tensor in) {
    int n = in.size(0);  // square, n a multiple of 32
    auto out = torch::empty_like(in);
    transpose_naive_smem<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(
        in.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_transpose_naive", cpp_sources="torch::Tensor transpose(torch::Tensor in);",
                     cuda_sources=CUDA_SRC, functions=["transpose"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(4096, 4096, device="cuda")
    return (a,)


def run(a):
    return module.transpose(a)


def reference(a):
    return a.t().contiguous()
