"""Fix of rowsum_thread_per_row_fp32_cuda.py: the same row sums with one warp per row.

Lane l of the warp that owns row r reads r's elements l, l + 32, l + 64, ...: each warp
instruction reads 128 contiguous bytes (four full sectors), and a shuffle reduction combines the
32 partial sums. Every sector fetched is used in full; the kernel streams 256 MB at DRAM speed.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void rowsum_warp_kernel(const float* __restrict__ a, float* __restrict__ out, int rows, int cols) {
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (r >= rows) return;
    const float* row = a + (size_t)r * cols;
    float s = 0.f;
    for (int c = lane; c < cols; c += 32) s += row[c];  // lanes read consecutive floats
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if (lane == 0) out[r] = s;
}

torch::Tensor rowsum(torch::Tensor a) {
    int rows = a.size(0), cols = a.size(1);
    auto out = torch::empty({rows}, a.options());
    long threads = (long)rows * 32;
    rowsum_warp_kernel<<<(threads + 255) / 256, 256>>>(a.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_rowsum_warp_per_row_fp32_cuda", cpp_sources="torch::Tensor rowsum(torch::Tensor a);",
                     cuda_sources=CUDA_SRC, functions=["rowsum"], extra_cuda_cflags=["-O3", "-lineinfo"])

ROWS, COLS = 2**18, 256


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device="cuda"),)


def run(a):
    return module.rowsum(a)


def reference(a):
    return a.double().sum(1).float()
