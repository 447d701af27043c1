"""Planted bottleneck: shared-memory bank conflicts (an area downscale by 16 that reads its staged tile F floats apart).

Area (box) downscale of 128 planes of 1,024 x 1,024 bf16 by an integer factor F = 16 (a run-time
argument), i.e. the mean of each 16 x 16 block. Each 256-thread block stages F input rows x 512
columns in shared memory as fp32 (coalesced loads, conflict-free stores), then each thread sums
one row segment of one output: its F values start F floats after its neighbour's, so for F = 16
the 32 lanes of a warp fall on 2 banks, 16 distinct words each: every shared load is a 16-way
conflict (16 wavefronts instead of 1). A block issues ~4,100 shared wavefronts for its 16 KB of
input, ~3.5x the time DRAM needs for those bytes (~84 us for 257 MB at 3.05 TB/s), so L1/shared
memory is the busiest unit and DRAM waits. Padding each row segment (a stride of F + 1), or one
lane per column with the row sums formed while staging, fixes it.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#define TILE_W 512    // input columns per block
#define THREADS 256

__global__ void __launch_bounds__(THREADS) resize_area_smem(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out,
                                                            int H, int W, int F) {
    extern __shared__ float tile[];        // F rows x TILE_W columns, then F x (TILE_W / F) partial sums
    const int outs = TILE_W / F;           // output columns of this block
    float* part = tile + F * TILE_W;
    const int plane = blockIdx.z, oy = blockIdx.y, x0 = blockIdx.x * TILE_W;
    const __nv_bfloat16* src = x + ((size_t)plane * H + (size_t)oy * F) * W + x0;
    for (int i = threadIdx.x; i < F * TILE_W; i += THREADS)    // a warp reads 64 contiguous bytes of one row
        tile[i] = __bfloat162float(src[(size_t)(i / TILE_W) * W + i % TILE_W]);
    __syncthreads();
    for (int j = threadIdx.x; j < F * outs; j += THREADS) {   // one tile row r, one output column ox
        int r = j / outs, ox = j % outs;
        const float* p = tile + r * TILE_W + ox * F;            // lanes F floats apart: F-way bank conflicts
        float s = 0.f;
        for (int c = 0; c < F; ++c) s += p[c];
        part[r * outs + ox] = s;
    }
    __syncthreads();
    if (threadIdx.x < outs) {
        float s = 0.f;
        for (int r = 0; r < F; ++r) s += part[r * outs + threadIdx.x];
        out[((size_t)plane * (H / F) + oy) * (W / F) + blockIdx.x * outs + threadIdx.x] = __float2bfloat16(s / (F * F));
    }
}

torch::Tensor resize_area(torch::Tensor x, int64_t factor) {
    int P = x.size(0), H = x.size(1), W = x.size(2), F = factor;   // H % F == 0, W % TILE_W == 0, TILE_W % F == 0
    TORCH_CHECK(H % F == 0 && W % TILE_W == 0 && TILE_W % F == 0);
    auto out = torch::empty({P, H / F, W / F}, x.options());
    size_t smem = (size_t)(F * TILE_W + TILE_W) * sizeof(float);
    resize_area_smem<<<dim3(W / TILE_W, H / F, P), THREADS, smem>>>(
        reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
        reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), H, W, F);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_resize_area_smem_bf16_cuda",
    cpp_sources="torch::Tensor resize_area(torch::Tensor x, int64_t factor);",
    cuda_sources=CUDA_SRC,
    functions=["resize_area"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

PLANES, H, W, FACTOR = 128, 1024, 1024, 16  # 256 MB in, 1 MB out


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(PLANES, H, W, device="cuda", dtype=torch.bfloat16),)


def run(x):
    return module.resize_area(x, FACTOR)


def reference(x):
    return torch.nn.functional.avg_pool2d(x[None].float(), FACTOR)[0].bfloat16()
