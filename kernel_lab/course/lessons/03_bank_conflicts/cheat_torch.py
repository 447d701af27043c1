# Lesson 3, cheat: the C++ function returns PyTorch's transpose; the kernel is never launched.
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define TILE 32

__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];  // one column of padding
    int c = blockIdx.x * TILE + threadIdx.x, r = blockIdx.y * TILE + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];  // a row of the tile
    __syncthreads();
    c = blockIdx.y * TILE + threadIdx.x;  // out is cols x rows
    r = blockIdx.x * TILE + threadIdx.y;
    if (r < cols && c < rows) out[r * rows + c] = tile[threadIdx.x][threadIdx.y];  // a column of the tile
}

torch::Tensor transpose(torch::Tensor in) {
    int rows = in.size(0), cols = in.size(1);
    auto out = torch::empty({cols, rows}, in.options());
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE), block(TILE, TILE);
    out.copy_(in.t());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kl_course_transpose", cpp_sources="torch::Tensor transpose(torch::Tensor in);",
                     cuda_sources=CUDA_SRC, functions=["transpose"], extra_cuda_cflags=["-O3", "-lineinfo"])

S = 8192
SHAPES = [(S, S), (1000, 3000), (33, 65)]


def make_inputs(rows=S, cols=S):
    return (torch.randn(rows, cols, device="cuda"),)


def run(a):
    return module.transpose(a)
