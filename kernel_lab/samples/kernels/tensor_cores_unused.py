"""Planted bottleneck: a bf16 matrix multiply that leaves the tensor cores idle.

The inputs are bfloat16, which the H100's tensor cores multiply at ~990 TFLOP/s.
This kernel is a classic shared-memory tiled matmul that converts every element
to float and uses ordinary fused multiply-adds (FFMA) on the CUDA cores, whose
peak is ~67 TFLOP/s: at best 1/15 of what the hardware offers for this data
type. Use tensor-core instructions instead (torch.matmul, tl.dot in Triton,
WMMA/MMA/WGMMA in CUDA); see bf16_gemm.py.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define BM 64   // each 256-thread block computes a 64x64 tile of C
#define BN 64
#define BK 32
#define TM 4    // each thread computes 4x4 elements of C, 16 apart
#define TN 4

__device__ __forceinline__ float bf16_to_float(unsigned short h) {
    return __uint_as_float((unsigned)h << 16);  // a bfloat16 is the upper half of a float32
}

// (256, 8): at most 32 registers per thread, so 8 blocks (full occupancy) fit on an SM
__global__ void __launch_bounds__(256, 8) matmul_fma_bf16(const unsigned short* __restrict__ A,  // bf16 bits
                                                          const unsigned short* __restrict__ B,
                                                          float* __restrict__ C, int n) {
    __shared__ float As[BM][BK + 1];  // +1: the a[i] reads of two rows fall in different banks
    __shared__ float Bs[BK][BN];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256)   // bf16 -> float while staging the tiles
            As[i / BK][i % BK] = bf16_to_float(A[(row0 + i / BK) * n + k0 + i % BK]);
        for (int i = threadIdx.x; i < BK * BN; i += 256)
            Bs[i / BN][i % BN] = bf16_to_float(B[(k0 + i / BN) * n + col0 + i % BN]);
        __syncthreads();
        #pragma unroll 8
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
            #pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[ty + 16 * i][k];
            #pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx + 16 * j];
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);  // plain FFMA
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) C[(row0 + ty + 16 * i) * n + col0 + tx + 16 * j] = acc[i][j];
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
    int n = a.size(0);  // square, n a multiple of 64
    auto c = torch::empty({n, n}, a.options().dtype(torch::kFloat32));
    matmul_fma_bf16<<<dim3(n / BN, n / BM), 256>>>(
        reinterpret_cast<const unsigned short*>(a.data_ptr<at::BFloat16>()),
        reinterpret_cast<const unsigned short*>(b.data_ptr<at::BFloat16>()), c.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

module = load_inline("kl_tensor_cores_unused", cpp_sources="torch::Tensor matmul(torch::Tensor a, torch::Tensor b);",
                     cuda_sources=CUDA_SRC, functions=["matmul"],
                     extra_cuda_cflags=["-O3", "-lineinfo"])


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    return a, b


def run(a, b):
    return module.matmul(a, b)  # float32 result


def reference(a, b):
    return a.float() @ b.float()
