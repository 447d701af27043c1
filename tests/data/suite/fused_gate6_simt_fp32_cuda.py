"""Planted bottleneck: tensor cores unused (a fused 6-qubit gate, i.e. a complex GEMM, done with FFMA).

Gate fusion in a state-vector simulator (qsim / cuStateVec style): a circuit layer acting on the 6 lowest
qubits is fused into one 64 x 64 complex64 unitary U and applied to a 25-qubit state (2^25 complex64
amplitudes, 256 MB in, 256 MB out): viewing the state as [2^19 groups, 64], out = psi U^T, a complex
[524,288 x 64] x [64 x 64] product: 2^25 x 64 = 2.15G complex MACs = 8.6G real FMAs (17.2 GFLOP). The kernel
is a classic SIMT tile: a persistent grid (4 blocks of 128 threads per SM: 67 registers, 49.4 KB of shared
memory each), U^T staged once per block in shared memory (32 KB), 32 groups of amplitudes per batch staged
in shared memory (16.6 KB, padded rows), and each thread accumulates 4 output rows x 4 groups (16 complex
accumulators) with 64 FFMA per 8 conflict-free LDS.64 per k step. No tensor-core instruction: TF32 (or
bf16x3) mma would give the same accuracy class for ~8x the throughput.
The hypothesis: tensor_cores_unused: FMA pipe ~60-80%, tensor pipe 0, SM% high, DRAM ~35-50% (the 537 MB
need ~176 us), ~300-400 us vs ~257 us at the FP32 FMA roof (67 TFLOP/s) and ~180 us (memory-bound) with mma.
The fix: mma.sync / wgmma in TF32 (3xTF32 for fp32 accuracy) or cuBLAS's complex GEMM (cublasCgemm3m /
TF32).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define GD 64            // gate dimension (6 qubits)
#define GB 32            // groups per batch
#define PAD 65           // padded group row (float2)
#define RT 4             // rows per thread
#define GT 4             // groups per thread

__global__ void __launch_bounds__(128) fused_gate_apply(const float2* __restrict__ psi, const float2* __restrict__ ut,
                                                       float2* __restrict__ out, int batches) {
    extern __shared__ float2 smem[];
    float2* s_ut = smem;                 // [GD (k)][GD (r)]: s_ut[k * GD + r] = U[r][k]
    float2* s_psi = smem + GD * GD;      // [GB][PAD]
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    for (int i = tid; i < GD * GD; i += blockDim.x) s_ut[i] = ut[i];
    int r0 = lane & 15;                  // rows r0, r0 + 16, r0 + 32, r0 + 48
    int gbase = warp * 8 + (lane >> 4) * GT;   // groups gbase .. gbase + 3 of the batch
    for (int b = blockIdx.x; b < batches; b += gridDim.x) {
        __syncthreads();                 // previous batch fully consumed (and s_ut loaded)
        const float2* src = psi + (size_t)b * GB * GD;
        for (int i = tid; i < GB * GD; i += blockDim.x) s_psi[(i >> 6) * PAD + (i & 63)] = src[i];
        __syncthreads();
        float2 acc[RT][GT];
#pragma unroll
        for (int a = 0; a < RT; ++a)
#pragma unroll
            for (int j = 0; j < GT; ++j) acc[a][j] = make_float2(0.0f, 0.0f);
#pragma unroll 4
        for (int k = 0; k < GD; ++k) {
            float2 u[RT], p[GT];
#pragma unroll
            for (int a = 0; a < RT; ++a) u[a] = s_ut[k * GD + r0 + 16 * a];
#pragma unroll
            for (int j = 0; j < GT; ++j) p[j] = s_psi[(gbase + j) * PAD + k];
#pragma unroll
            for (int a = 0; a < RT; ++a)
#pragma unroll
                for (int j = 0; j < GT; ++j) {
                    acc[a][j].x = fmaf(u[a].x, p[j].x, acc[a][j].x);
                    acc[a][j].x = fmaf(-u[a].y, p[j].y, acc[a][j].x);
                    acc[a][j].y = fmaf(u[a].x, p[j].y, acc[a][j].y);
                    acc[a][j].y = fmaf(u[a].y, p[j].x, acc[a][j].y);
                }
        }
        float2* dst = out + (size_t)b * GB * GD;
#pragma unroll
        for (int j = 0; j < GT; ++j)
#pragma unroll
            for (int a = 0; a < RT; ++a) dst[(gbase + j) * GD + r0 + 16 * a] = acc[a][j];
    }
}

torch::Tensor apply_fused_gate(torch::Tensor psi, torch::Tensor u) {
    // psi: float32 [n, 2] (complex64 interleaved), u: float32 [64, 64, 2]
    TORCH_CHECK(psi.is_cuda() && psi.scalar_type() == torch::kFloat && psi.is_contiguous() && psi.size(1) == 2);
    TORCH_CHECK(u.size(0) == GD && u.size(1) == GD && u.size(2) == 2);
    int64_t n = psi.size(0);
    TORCH_CHECK(n % (GB * GD) == 0);
    auto ut = u.transpose(0, 1).contiguous();               // ut[k][r] = U[r][k]
    auto out = torch::empty_like(psi);
    int batches = (int)(n / (GB * GD));
    size_t shmem = (size_t)(GD * GD + GB * PAD) * sizeof(float2);
    C10_CUDA_CHECK(cudaFuncSetAttribute(fused_gate_apply, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
    int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    int blocks = std::min(batches, 4 * sms);
    fused_gate_apply<<<blocks, 128, shmem>>>(reinterpret_cast<const float2*>(psi.data_ptr<float>()),
                                             reinterpret_cast<const float2*>(ut.data_ptr<float>()),
                                             reinterpret_cast<float2*>(out.data_ptr<float>()), batches);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_fused_gate6_simt_fp32_cuda",
    cpp_sources="torch::Tensor apply_fused_gate(torch::Tensor psi, torch::Tensor u);",
    cuda_sources=CUDA_SRC,
    functions=["apply_fused_gate"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

QUBITS = 25
GATE_QUBITS = 6
TOLERANCE = 1e-5


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    n = 1 << QUBITS
    psi = torch.randn(n, 2, device="cuda", generator=g)
    psi /= psi.norm()
    d = 1 << GATE_QUBITS
    a = torch.complex(torch.randn(d, d, device="cuda", generator=g, dtype=torch.float64),
                      torch.randn(d, d, device="cuda", generator=g, dtype=torch.float64))
    q, r = torch.linalg.qr(a)                                   # a Haar-like random unitary
    q = q * (torch.diagonal(r) / torch.diagonal(r).abs())[None, :]
    u = torch.view_as_real(q).float().contiguous()              # [64, 64, 2]
    return psi.contiguous(), u


def run(psi, u):
    return module.apply_fused_gate(psi, u)


def reference(psi, u):
    d = u.shape[0]
    a = torch.view_as_complex(psi.double().contiguous()).reshape(-1, d)
    uc = torch.view_as_complex(u.double().contiguous())
    return torch.view_as_real((a @ uc.T).reshape(-1)).float().contiguous()
