"""Planted bottleneck: warp divergence (trip counts that differ from lane to lane).

Each bf16 element is relaxed by an FMA recurrence whose length depends on the element: element i
runs 128 x (1 + i % 8) steps. Elements are mapped to threads in order, so every warp holds all
eight lengths: it loops 1,024 times, and in step k only the lanes that still have work are on.
On average 4.5 of every 8 lanes are active (about 18 of 32), so almost half of the FMA issue
slots do nothing. The fix keeps the work but groups equal trip counts in a warp
(warp_loop_bf16_cuda.py: element -> thread mapping changed so that i % 8 is the warp index).
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

__global__ void __launch_bounds__(256) lane_trip_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out,
                                                 int base_iters) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;  // 8 warps per block
    int i = blockIdx.x * 256 + threadIdx.x;  // element i -> lane i % 32: a warp holds all eight trip counts
    float b = __bfloat162float(x[i]), v = b;
    int trips = base_iters * (1 + (i & 7));  // elements need 1x .. 8x the base work
    for (int k = 0; k < trips; ++k) v = fmaf(v, 0.999f, b);
    out[i] = __float2bfloat16(v * 0.001f);
}

torch::Tensor relax(torch::Tensor x, int64_t base_iters) {
    auto out = torch::empty_like(x);
    lane_trip_kernel<<<x.numel() / 256, 256>>>(reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
                                      reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), base_iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_lane_loop_bf16_cuda", cpp_sources="torch::Tensor relax(torch::Tensor x, int64_t base_iters);",
                     cuda_sources=CUDA_SRC, functions=["relax"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 132 * 8 * 256 * 4  # four waves of 256-thread blocks at 8 per SM
BASE = 128             # trips per element: 128 .. 1024


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, device="cuda", dtype=torch.bfloat16),)


def run(x):
    return module.relax(x, BASE)


def reference(x):
    b = x.float()
    trips = BASE * (1 + (torch.arange(N, device=x.device) & 7))
    v = b.clone()
    for k in range(8 * BASE):
        v = torch.where(k < trips, v * 0.999 + b, v)
    return (v * 0.001).to(torch.bfloat16)
