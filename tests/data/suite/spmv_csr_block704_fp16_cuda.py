"""Planted bottleneck: low occupancy, limited by warps per SM (704-thread blocks), a CSR SpMV.

The warp-per-row SpMV of spmv_csr_1warp_fp16_cuda.py launched with 704-thread (22-warp) blocks.
An SM holds 64 warps, so only two such blocks fit (44 warps, 68.75 % theoretical occupancy);
the remaining 20 warp slots stay empty because a third block does not fit whole. The kernel is
latency bound (three dependent round trips per row), so the missing warps are missing rows in
flight. Any block size that divides 2,048 threads (128, 256, 512, 1024) fills the SM.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
// __maxnreg__(24), the same in all three spmv cells: no spills (ptxas -v), and registers never
// become a second, equal occupancy limiter (at 32-58 registers they would tie with the block or warp limit)
#define THREADS 704  // threads per block; one warp per row

__global__ void __maxnreg__(24) spmv_block704(const int* __restrict__ rowptr, const int* __restrict__ col,
                                                    const __half* __restrict__ val, const __half* __restrict__ x,
                                                    __half* __restrict__ y, int rows) {
    int row = (blockIdx.x * THREADS + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (row >= rows) return;
    int start = rowptr[row], end = rowptr[row + 1];        // 1st round trip
    float s = 0.f;
    for (int k = start + lane; k < end; k += 32)            // 2nd: col/val; 3rd: x[col]
        s += __half2float(val[k]) * __half2float(x[col[k]]);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if (lane == 0) y[row] = __float2half(s);
}

torch::Tensor spmv(torch::Tensor rowptr, torch::Tensor col, torch::Tensor val, torch::Tensor x) {
    int rows = rowptr.numel() - 1;
    auto y = torch::empty({rows}, x.options());
    long threads = (long)rows * 32;
    spmv_block704<<<(threads + THREADS - 1) / THREADS, THREADS>>>(
        rowptr.data_ptr<int>(), col.data_ptr<int>(), reinterpret_cast<const __half*>(val.data_ptr<at::Half>()),
        reinterpret_cast<const __half*>(x.data_ptr<at::Half>()), reinterpret_cast<__half*>(y.data_ptr<at::Half>()), rows);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline("kls_spmv_csr_block704_fp16_cuda", cpp_sources="torch::Tensor spmv(torch::Tensor rowptr, torch::Tensor col, torch::Tensor val, torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["spmv"], extra_cuda_cflags=["-O3", "-lineinfo"])

ROWS = 2**20
NNZ_PER_ROW = 32   # every row has 32 nonzeros: one per lane, no divergence
COLS = 2**20       # x: 2 MB of fp16
BAND = 256         # banded matrix: row r has its nonzeros in columns [r - 128, r + 128)


def make_inputs():
    torch.manual_seed(0)
    rowptr = torch.arange(0, (ROWS + 1) * NNZ_PER_ROW, NNZ_PER_ROW, device="cuda", dtype=torch.int32)
    row = torch.arange(ROWS, device="cuda").repeat_interleave(NNZ_PER_ROW)
    off = torch.randint(-BAND // 2, BAND // 2, (ROWS * NNZ_PER_ROW,), device="cuda")
    col = (row + off).clamp(0, COLS - 1).int()
    val = torch.randn(ROWS * NNZ_PER_ROW, device="cuda", dtype=torch.float16)
    x = torch.randn(COLS, device="cuda", dtype=torch.float16)
    return rowptr, col, val, x


def run(rowptr, col, val, x):
    return module.spmv(rowptr, col, val, x)


def reference(rowptr, col, val, x):
    prod = val.float() * x[col.long()].float()
    return prod.view(ROWS, NNZ_PER_ROW).sum(1).half()
