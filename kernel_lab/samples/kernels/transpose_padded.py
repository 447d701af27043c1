"""Negative control: the same transpose with a padded tile, no bank conflicts.

Each row of the tile is 33 floats long instead of 32, so walking down a column
moves 33 words, i.e. to the next bank: the 32 threads of a warp now hit 32
different banks and the column read takes one shared-memory cycle. The kernel is
a plain, well-behaved memory-bound copy; Nsight Compute should not report bank
conflicts here (compare with shared_bank_conflicts.py).
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define TILE 32

__global__ void transpose_padded_smem(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float tile[TILE][TILE + 1];  // one float of padding per row
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];   // coalesced read, row of the tile
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];  // column: 33 floats apart, 32 banks
}

torch::Tensor transpose(torch::Tensor in) {
    int n = in.size(0);  // square, n a multiple of 32
    auto out = torch::empty_like(in);
    transpose_padded_smem<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(
        in.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_transpose_padded", cpp_sources="torch::Tensor transpose(torch::Tensor in);",
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
