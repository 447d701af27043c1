"""Planted bottleneck: uncoalesced global loads (a row reduction with one thread per row).

Row sums of a 262,144 x 256 fp32 matrix (256 MB), one thread per row: thread t walks row t from
left to right. At every step the 32 threads of a warp read 32 addresses 1 KB apart, one sector
each, using 4 of its 32 bytes; the rest of each sector is only useful if it survives in L1 until
the same thread's next seven steps, while 64 warps per SM stream their own rows through it.
The fix is to give each row to a warp (rowsum_warp_per_row_fp32_cuda.py): the lanes then read
consecutive floats, 128 bytes per warp instruction.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void rowsum_thread_kernel(const float* __restrict__ a, float* __restrict__ out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = a + (size_t)r * cols;
    float s = 0.f;
    for (int c = 0; c < cols; ++c) s += row[c];  // neighbouring threads: 1 KB apart
    out[r] = s;
}

torch::Tensor rowsum(torch::Tensor a) {
    int rows = a.size(0), cols = a.size(1);
    auto out = torch::empty({rows}, a.options());
    rowsum_thread_kernel<<<(rows + 255) / 256, 256>>>(a.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_rowsum_thread_per_row_fp32_cuda", cpp_sources="torch::Tensor rowsum(torch::Tensor a);",
                     cuda_sources=CUDA_SRC, functions=["rowsum"], extra_cuda_cflags=["-O3", "-lineinfo"])

ROWS, COLS = 2**18, 256


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device="cuda"),)


def run(a):
    return module.rowsum(a)


def reference(a):
    return a.double().sum(1).float()
