"""Planted bottleneck: tail effect (660 equal blocks = 1.25 waves of 528).

Every thread runs the same 1,024-step recurrence v <- 0.75 exp(-v^2) + 0.25 x on one bf16 input
(fp32 math, fast __expf), so every block takes the same time. __launch_bounds__(512, 4) keeps the
kernel at 32 registers, so exactly four 512-thread blocks share an SM: 528 blocks per wave. The
grid has 660 blocks: one full wave, then 132 blocks alone on 132 SMs, each SM a quarter busy, for
as long as a full wave takes. Size the work so that the grid is a whole number of waves (or many
waves), or loop inside a persistent grid.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

__global__ void __launch_bounds__(512, 4) sfu_tail_kernel(const __nv_bfloat16* __restrict__ x,
                                                          __nv_bfloat16* __restrict__ out, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float b = __bfloat162float(x[i]), v = b;
    for (int k = 0; k < iters; ++k) v = 0.75f * __expf(-v * v) + 0.25f * b;
    out[i] = __float2bfloat16(v);
}

torch::Tensor sfu(torch::Tensor x, int64_t iters) {
    auto out = torch::empty_like(x);
    sfu_tail_kernel<<<x.numel() / 512, 512>>>(reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
                                             reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_sfu_tail_bf16_cuda", cpp_sources="torch::Tensor sfu(torch::Tensor x, int64_t iters);",
                     cuda_sources=CUDA_SRC, functions=["sfu"], extra_cuda_cflags=["-O3", "-lineinfo"])

BLOCKS = 660  # 1.25 waves of 528 (4 blocks x 132 SMs)
ITERS = 1024


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(BLOCKS * 512, device="cuda", dtype=torch.bfloat16),)


def run(x):
    return module.sfu(x, ITERS)


def reference(x):
    b = x.float()
    v = b.clone()
    for _ in range(ITERS):
        v = 0.75 * torch.exp(-v * v) + 0.25 * b
    return v.to(torch.bfloat16)
