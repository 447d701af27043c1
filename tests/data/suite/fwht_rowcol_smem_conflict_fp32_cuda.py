"""Planted bottleneck: shared-memory bank conflicts (a 1024-point Walsh-Hadamard transform whose row pass reads a 32-float-pitch tile by rows).

Unnormalized fast Walsh-Hadamard transforms (Sylvester order) of 32,768 fp32 signals of 1,024
points (128 MB in, 128 MB out). One warp per signal: the signal is staged as a 32 x 32 tile in
shared memory (element n = 32 r + c at s[r * pitch + c], coalesced loads, conflict-free stores),
then the row pass gives lane r row r (32 values in registers, the 5 butterfly stages over the low
bits of n, written back), and the column pass gives lane c column c (the 5 stages over the high
bits, written to global memory coalesced). The tile pitch is a run-time argument, and run() passes
32: in the row pass every lane reads and writes word r * 32 + c, all in bank c, so each of the
32 loads and 32 stores of that pass is a 32-way conflict (32 wavefronts). Per signal: 2,048
shared wavefronts in the row pass against ~128 for everything else, ~2,200 in all, ~540k per SM:
~300 us of shared-memory time at 1 wavefront per cycle, where the 268 MB of DRAM traffic needs
~88 us. (The run-time pitch also keeps the row reads scalar, as any pitch but a multiple of 4
would. 72 registers: 7 blocks, 28 warps per SM, 43.75% theoretical occupancy, enough for a kernel
whose limit is the shared-memory pipe.) The fix is a padded pitch: passing 33 makes both passes
conflict-free, at the same code.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define WARPS 4   // signals per block, one warp each

__device__ __forceinline__ void wht32(float (&v)[32]) {   // 5 radix-2 stages over the 32 registers
    #pragma unroll
    for (int h = 1; h < 32; h <<= 1) {
        #pragma unroll
        for (int i = 0; i < 32; ++i) {
            if ((i & h) == 0) {
                float a = v[i], b = v[i + h];
                v[i] = a + b;
                v[i + h] = a - b;
            }
        }
    }
}

__global__ void __launch_bounds__(32 * WARPS) fwht1024_rowcol_smem(const float* __restrict__ x, float* __restrict__ y,
                                                                    int signals, int pitch) {
    extern __shared__ float smem[];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int sig = blockIdx.x * WARPS + warp;
    if (sig >= signals) return;   // warps are independent: no block-wide barrier below
    float* s = smem + warp * 32 * pitch;
    const float* xs = x + (size_t)sig * 1024;
    float* ys = y + (size_t)sig * 1024;
    float v[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) s[r * pitch + lane] = xs[r * 32 + lane];   // coalesced, conflict-free
    __syncwarp();
    #pragma unroll
    for (int c = 0; c < 32; ++c) v[c] = s[lane * pitch + c];   // row pass: lane = row; pitch 32 -> all lanes in bank c
    wht32(v);
    #pragma unroll
    for (int c = 0; c < 32; ++c) s[lane * pitch + c] = v[c];
    __syncwarp();
    #pragma unroll
    for (int r = 0; r < 32; ++r) v[r] = s[r * pitch + lane];   // column pass: lane = column, conflict-free
    wht32(v);
    #pragma unroll
    for (int r = 0; r < 32; ++r) ys[r * 32 + lane] = v[r];     // coalesced
}

torch::Tensor fwht(torch::Tensor x, int64_t pitch) {
    int signals = x.size(0);   // x: [signals, 1024] fp32, contiguous
    TORCH_CHECK(x.size(1) == 1024 && pitch >= 32);
    auto y = torch::empty_like(x);
    size_t smem = (size_t)WARPS * 32 * pitch * sizeof(float);
    fwht1024_rowcol_smem<<<(signals + WARPS - 1) / WARPS, 32 * WARPS, smem>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                                                               signals, (int)pitch);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline(
    "kls_fwht_rowcol_smem_conflict_fp32_cuda",
    cpp_sources="torch::Tensor fwht(torch::Tensor x, int64_t pitch);",
    cuda_sources=CUDA_SRC,
    functions=["fwht"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

SIGNALS, POINTS = 32768, 1024
PITCH = 32  # the planted tile pitch (33 is the fix)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(SIGNALS, POINTS, device="cuda"),)


def run(x):
    return module.fwht(x, PITCH)


def reference(x):
    n = x.shape[0]
    v = x.double()
    h = 1
    while h < POINTS:  # radix-2 stage over bit h of the index: (a, b) -> (a + b, a - b)
        v = v.view(n, POINTS // (2 * h), 2, h)
        v = torch.stack([v[:, :, 0] + v[:, :, 1], v[:, :, 0] - v[:, :, 1]], dim=2).reshape(n, POINTS)
        h *= 2
    return v.float()
