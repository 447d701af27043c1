"""Planted bottleneck: tensor cores unused (a closed-shell density matrix D = 2 C_occ C_occ^T on the FP32 pipe).

The SCF step of a Hartree-Fock / DFT code: from the occupied molecular-orbital coefficients
C_occ [4,096 basis functions x 512 occupied orbitals] (fp16, 4 MB) form the density matrix
D = 2 C_occ C_occ^T (fp32, 4,096 x 4,096, 67 MB): 17.2 GFLOP of plain matrix product. The kernel is a
classic SIMT tiling: 128 x 128 tile of D per 256-thread block, k-steps of 8 staged (converted to fp32)
in shared memory [8][132], an 8 x 8 register tile per thread (rows ty + 16 m, columns tx + 16 n:
broadcast / conflict-free shared reads), 64 FFMA per 16 LDS per k. 1,024 blocks. At ~60-70% of the
FP32 FMA peak (67 TFLOP/s) that is ~0.4-0.5 ms; the fp16 mma path (~990 TFLOP/s dense) would take a
few tens of us. The hypothesis: SM% high on the FMA pipe (or LSU/shared feed), every
sm__ops_path_tensor_* counter 0, DRAM low. The fix: mma.sync / wgmma on the fp16 tiles (or
cuBLAS's HGEMM / SYRK), fp32 accumulation.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

#define TILE 128
#define KS 8
#define PAD 4

__global__ void __launch_bounds__(256) density_simt(const __half* __restrict__ C, float* __restrict__ D,
                                                    int nbf, int nocc) {
    __shared__ float As[KS][TILE + PAD];   // rows i0.. of C, k-major
    __shared__ float Bs[KS][TILE + PAD];   // rows j0.. of C, k-major
    int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
    float acc[8][8];
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[m][n] = 0.f;
    int lr = tid >> 1, lk = (tid & 1) * 4;   // each thread stages 4 halves of one row for A and for B
    for (int k0 = 0; k0 < nocc; k0 += KS) {
        uint2 a = *reinterpret_cast<const uint2*>(C + (size_t)(i0 + lr) * nocc + k0 + lk);
        uint2 b = *reinterpret_cast<const uint2*>(C + (size_t)(j0 + lr) * nocc + k0 + lk);
        float2 a01 = __half22float2(*reinterpret_cast<__half2*>(&a.x));
        float2 a23 = __half22float2(*reinterpret_cast<__half2*>(&a.y));
        float2 b01 = __half22float2(*reinterpret_cast<__half2*>(&b.x));
        float2 b23 = __half22float2(*reinterpret_cast<__half2*>(&b.y));
        __syncthreads();
        As[lk + 0][lr] = a01.x; As[lk + 1][lr] = a01.y; As[lk + 2][lr] = a23.x; As[lk + 3][lr] = a23.y;
        Bs[lk + 0][lr] = b01.x; Bs[lk + 1][lr] = b01.y; Bs[lk + 2][lr] = b23.x; Bs[lk + 3][lr] = b23.y;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KS; ++k) {
            float av[8], bv[8];
#pragma unroll
            for (int m = 0; m < 8; ++m) av[m] = As[k][ty + 16 * m];
#pragma unroll
            for (int n = 0; n < 8; ++n) bv[n] = Bs[k][tx + 16 * n];
#pragma unroll
            for (int m = 0; m < 8; ++m)
#pragma unroll
                for (int n = 0; n < 8; ++n) acc[m][n] = fmaf(av[m], bv[n], acc[m][n]);
        }
    }
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) D[(size_t)(i0 + ty + 16 * m) * nbf + j0 + tx + 16 * n] = 2.f * acc[m][n];
}

torch::Tensor density(torch::Tensor C) {
    TORCH_CHECK(C.dim() == 2 && C.scalar_type() == torch::kHalf && C.is_contiguous());
    int nbf = C.size(0), nocc = C.size(1);
    TORCH_CHECK(nbf % TILE == 0 && nocc % KS == 0);
    auto D = torch::empty({nbf, nbf}, C.options().dtype(torch::kFloat));
    dim3 grid(nbf / TILE, nbf / TILE);
    density_simt<<<grid, 256>>>(reinterpret_cast<const __half*>(C.data_ptr<at::Half>()), D.data_ptr<float>(), nbf, nocc);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return D;
}
"""

module = load_inline(
    "kls_density_matrix_simt_fp16_cuda",
    cpp_sources="torch::Tensor density(torch::Tensor C);",
    cuda_sources=CUDA_SRC,
    functions=["density"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

NBF = 4096
NOCC = 512


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    # orthonormal-ish MO coefficients scaled like a real basis: columns of a random orthogonal-ish matrix
    C = torch.randn(NBF, NOCC, device="cuda", generator=g) / NBF**0.5
    return (C.half().contiguous(),)


def run(C):
    return module.density(C)


def reference(C):
    c = C.double()
    return (2.0 * (c @ c.t())).float()
