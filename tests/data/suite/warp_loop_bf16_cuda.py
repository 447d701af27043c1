"""Fix of lane_loop_bf16_cuda.py: the same elements and trip counts, grouped by warp.

Thread (warp w, lane l) of a block handles element 8 l + w of the block's 256, so all 32 lanes of
warp w have i % 8 == w and the same trip count: no lane idles. The block still holds all eight
lengths, so the total work is unchanged; the loads are now 16 bytes apart (each warp touches
16 sectors, shared with the block's other warps through L1), a small cost next to the loop.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

__global__ void __launch_bounds__(256) warp_trip_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out,
                                                 int base_iters) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;  // 8 warps per block
    int i = blockIdx.x * 256 + lane * 8 + warp;  // element i -> warp i % 8: one trip count per warp
    float b = __bfloat162float(x[i]), v = b;
    int trips = base_iters * (1 + (i & 7));  // elements need 1x .. 8x the base work
    for (int k = 0; k < trips; ++k) v = fmaf(v, 0.999f, b);
    out[i] = __float2bfloat16(v * 0.001f);
}

torch::Tensor relax(torch::Tensor x, int64_t base_iters) {
    auto out = torch::empty_like(x);
    warp_trip_kernel<<<x.numel() / 256, 256>>>(reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
                                      reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), base_iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_warp_loop_bf16_cuda", cpp_sources="torch::Tensor relax(torch::Tensor x, int64_t base_iters);",
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
