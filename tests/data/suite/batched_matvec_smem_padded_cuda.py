"""Fix of batched_matvec_smem_conflict_cuda.py: the same batched matrix-vector product, [32][33] tiles.

With a padded row, lane l reading row l, column k lands in bank (l + k) % 32: the 32 lanes hit 32
different banks and each step is one wavefront. The kernel then streams its 256 MB of matrices
at memory speed.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#define WARPS 8   // one warp per matrix, 8 matrices per block

__global__ void __launch_bounds__(WARPS * 32) batched_matvec_padded(const __nv_bfloat16* __restrict__ a,
                                                         const float* __restrict__ x, float* __restrict__ y, int batch) {
    __shared__ float tile[WARPS][32][33];  // one float of padding: row l, column k is in bank (l + k) % 32
    int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    int b = blockIdx.x * WARPS + warp;
    if (b >= batch) return;
    const __nv_bfloat16* m = a + (size_t)b * 1024;
    #pragma unroll 8
    for (int r = 0; r < 32; ++r) tile[warp][r][lane] = __bfloat162float(m[r * 32 + lane]);  // row r: coalesced, no conflict
    __syncwarp();
    float xv = x[(size_t)b * 32 + lane];
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < 32; ++k) s = fmaf(tile[warp][lane][k], __shfl_sync(0xffffffff, xv, k), s);  // lane reads its row
    y[(size_t)b * 32 + lane] = s;
}

torch::Tensor matvec(torch::Tensor a, torch::Tensor x) {
    int batch = a.size(0);  // a: [batch, 32, 32] bf16, x: [batch, 32] fp32
    auto y = torch::empty_like(x);
    batched_matvec_padded<<<(batch + WARPS - 1) / WARPS, WARPS * 32>>>(
        reinterpret_cast<const __nv_bfloat16*>(a.data_ptr<at::BFloat16>()), x.data_ptr<float>(), y.data_ptr<float>(), batch);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline("kls_batched_matvec_smem_padded_cuda", cpp_sources="torch::Tensor matvec(torch::Tensor a, torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["matvec"], extra_cuda_cflags=["-O3", "-lineinfo"])

BATCH = 2**17  # 131,072 matrices of 32 x 32 bf16 = 256 MB


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(BATCH, 32, 32, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(BATCH, 32, device="cuda")
    return a, x


def run(a, x):
    return module.matvec(a, x)


def reference(a, x):
    return torch.bmm(a.double(), x.double()[:, :, None])[:, :, 0].float()
