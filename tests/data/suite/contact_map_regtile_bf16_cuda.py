"""Planted bottleneck: compute bound (near miss for low_occupancy: register-heavy 8x8 tiles whose pipes are busy).

Residue contact frequency over a molecular-dynamics trajectory (the contact map of a protein complex):
C-alpha coordinates of 32 frames x 4,096 residues (fp32 [32, 4096, 3], 1.5 MB, L2-resident), and for
every residue pair the fraction of frames in contact with a smooth switch: mean_f 1 / (1 + exp((d - 8 A)
/ 0.5 A)), bf16 out [4096, 4096] (33.5 MB). Each thread owns an 8 x 8 tile of pairs (64 fp32
accumulators, 16 residues' coordinates per frame): 2,048 blocks of 128 threads. The tile costs
registers (ptxas reports ~100-130, so only 3-4 blocks / 12-16 warps fit per SM: theoretical occupancy
~19-25%), but the 64 pair updates per frame are independent (sqrt, exp, reciprocal: MUFU, and ~12
FMA/ALU each): ILP keeps the pipes fed with few warps. 537M pair-frame evaluations.
The hypothesis: compute_bound: SM% ~70-90% (XU / FMA pipes), DRAM < 10%, ~0.3-0.6 ms; ncu's
theoretical-occupancy rule fires (registers) but more warps would not help much: the fix is fewer
instructions (compare d^2 with a switch in d^2, __expf / rcp approximations), not occupancy.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

#define TI 8
#define TJ 8

__global__ void __launch_bounds__(128) contact_map(const float* __restrict__ xyz, __nv_bfloat16* __restrict__ out,
                                                   int frames, int nres, float d0, float inv_w) {
    int tiles_j = nres / TJ;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (nres / TI) * tiles_j) return;
    int i0 = (t / tiles_j) * TI, j0 = (t % tiles_j) * TJ;
    float acc[TI][TJ];
#pragma unroll
    for (int a = 0; a < TI; ++a)
#pragma unroll
        for (int b = 0; b < TJ; ++b) acc[a][b] = 0.0f;
    for (int f = 0; f < frames; ++f) {
        const float* x = xyz + (size_t)f * nres * 3;
        float xi[TI][3], xj[TJ][3];
#pragma unroll
        for (int a = 0; a < TI; ++a)
#pragma unroll
            for (int c = 0; c < 3; ++c) xi[a][c] = x[(i0 + a) * 3 + c];
#pragma unroll
        for (int b = 0; b < TJ; ++b)
#pragma unroll
            for (int c = 0; c < 3; ++c) xj[b][c] = x[(j0 + b) * 3 + c];
#pragma unroll
        for (int a = 0; a < TI; ++a)
#pragma unroll
            for (int b = 0; b < TJ; ++b) {
                float dx = xi[a][0] - xj[b][0], dy = xi[a][1] - xj[b][1], dz = xi[a][2] - xj[b][2];
                float d = sqrtf(dx * dx + dy * dy + dz * dz);
                acc[a][b] += 1.0f / (1.0f + expf((d - d0) * inv_w));
            }
    }
    float inv_f = 1.0f / frames;
#pragma unroll
    for (int a = 0; a < TI; ++a)
#pragma unroll
        for (int b = 0; b < TJ; ++b) out[(size_t)(i0 + a) * nres + j0 + b] = __float2bfloat16(acc[a][b] * inv_f);
}

torch::Tensor contact_frequency(torch::Tensor xyz, double d0, double width) {
    TORCH_CHECK(xyz.dim() == 3 && xyz.size(2) == 3 && xyz.scalar_type() == torch::kFloat && xyz.is_contiguous());
    int frames = xyz.size(0), nres = xyz.size(1);
    TORCH_CHECK(nres % TI == 0 && nres % TJ == 0);
    auto out = torch::empty({nres, nres}, xyz.options().dtype(torch::kBFloat16));
    int threads = (nres / TI) * (nres / TJ);
    contact_map<<<(threads + 127) / 128, 128>>>(xyz.data_ptr<float>(),
                                                reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()),
                                                frames, nres, (float)d0, (float)(1.0 / width));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_contact_map_regtile_bf16_cuda",
    cpp_sources="torch::Tensor contact_frequency(torch::Tensor xyz, double d0, double width);",
    cuda_sources=CUDA_SRC,
    functions=["contact_frequency"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

FRAMES = 32
RESIDUES = 4096
D0 = 8.0
WIDTH = 0.5


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    steps = torch.randn(RESIDUES, 3, device="cuda", generator=g)
    chain = torch.cumsum(3.8 * steps / steps.norm(dim=1, keepdim=True), 0) * 0.35     # compact random coil, A
    xyz = chain[None] + 1.0 * torch.randn(FRAMES, RESIDUES, 3, device="cuda", generator=g)
    return (xyz.contiguous(),)


def run(xyz):
    return module.contact_frequency(xyz, D0, WIDTH)


def reference(xyz):
    acc = torch.zeros(xyz.shape[1], xyz.shape[1], device=xyz.device, dtype=torch.float64)
    for f in range(xyz.shape[0]):
        d = torch.cdist(xyz[f].double(), xyz[f].double())
        acc += torch.sigmoid(-(d - D0) / WIDTH)
    return (acc / xyz.shape[0]).to(torch.bfloat16)
