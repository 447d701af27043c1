"""Planted bottleneck: tensor cores unused (a CUDA fp16 GEMM on packed-half FMA instructions).

C = A @ B with A 2048 x 4096 and B 4096 x 2048 in fp16. A reasonable CUDA-core kernel: 64 x 64
tiles staged in shared memory, each thread computes 4 x 4 outputs with __hfma2 (two fp16
multiply-adds per instruction), and every 32-deep K step the fp16 partial sums are added to fp32
accumulators. The work is a matrix product in fp16, exactly what the tensor cores do at ~990
TFLOP/s; the HFMA2 path peaks near 134. Use WMMA/MMA (or cuBLAS, or tl.dot in Triton).
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define BM 64
#define BN 64
#define BK 32

__global__ void __launch_bounds__(256) hgemm_hfma2(const __half* __restrict__ A, const __half* __restrict__ B,
                                                   __half* __restrict__ C, int M, int N, int K) {
    __shared__ __half As[BK][BM + 2];   // A tile stored k-major: As[k][m]
    __shared__ __half Bs[BK][BN];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) As[i % BK][i / BK] = A[(size_t)(row0 + i / BK) * K + k0 + i % BK];
        for (int i = threadIdx.x; i < BK * BN; i += 256) Bs[i / BN][i % BN] = B[(size_t)(k0 + i / BN) * N + col0 + i % BN];
        __syncthreads();
        __half2 part[4][2];
        #pragma unroll
        for (int i = 0; i < 4; ++i) { part[i][0] = __float2half2_rn(0.f); part[i][1] = __float2half2_rn(0.f); }
        #pragma unroll 8
        for (int k = 0; k < BK; ++k) {
            __half2 b0 = *reinterpret_cast<const __half2*>(&Bs[k][2 * tx]);
            __half2 b1 = *reinterpret_cast<const __half2*>(&Bs[k][2 * tx + 32]);
            #pragma unroll
            for (int i = 0; i < 4; ++i) {
                __half2 a = __half2half2(As[k][ty + 16 * i]);
                part[i][0] = __hfma2(a, b0, part[i][0]);  // two fp16 FMAs per instruction, no tensor core
                part[i][1] = __hfma2(a, b1, part[i][1]);
            }
        }
        #pragma unroll
        for (int i = 0; i < 4; ++i) {
            float2 p0 = __half22float2(part[i][0]), p1 = __half22float2(part[i][1]);
            acc[i][0] += p0.x; acc[i][1] += p0.y; acc[i][2] += p1.x; acc[i][3] += p1.y;
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        __half* c = C + (size_t)(row0 + ty + 16 * i) * N + col0;
        *reinterpret_cast<__half2*>(c + 2 * tx) = __floats2half2_rn(acc[i][0], acc[i][1]);
        *reinterpret_cast<__half2*>(c + 2 * tx + 32) = __floats2half2_rn(acc[i][2], acc[i][3]);
    }
}

torch::Tensor hgemm(torch::Tensor a, torch::Tensor b) {
    int M = a.size(0), K = a.size(1), N = b.size(1);  // multiples of 64
    auto c = torch::empty({M, N}, a.options());
    hgemm_hfma2<<<dim3(N / BN, M / BM), 256>>>(reinterpret_cast<const __half*>(a.data_ptr<at::Half>()),
                                               reinterpret_cast<const __half*>(b.data_ptr<at::Half>()),
                                               reinterpret_cast<__half*>(c.data_ptr<at::Half>()), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

module = load_inline("kls_hgemm_half2_cuda", cpp_sources="torch::Tensor hgemm(torch::Tensor a, torch::Tensor b);",
                     cuda_sources=CUDA_SRC, functions=["hgemm"], extra_cuda_cflags=["-O3", "-lineinfo"])

M, N, K = 2048, 2048, 4096


def make_inputs():
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    return a, b


def run(a, b):
    return module.hgemm(a, b)


def reference(a, b):
    return (a.float() @ b.float()).half()
