"""Planted bottleneck: warp divergence (non-uniform 8-bit quantization by a per-element linear code search).

Companded (square-law) int8 quantization of fp32 values in [-1, 1]: magnitude code k is the largest
k <= 127 with level(k) = k^2 / 16384 <= |x| (fine steps near 0, coarse near 1), sign kept. Each thread
finds k by walking the levels from 0 upwards until the next level exceeds |x|: a loop whose trip
count is the code itself. The inputs are heavy around 0 (x = u^5, u uniform in [-1, 1]): codes
average 36 but the largest of a warp's 32 averages 118, so a warp runs ~118 iterations (9
instructions each) with ~10 of its 32 lanes active on average; the rest sit masked off. 32M
elements (128 MB in, 32 MB out) need ~53 us of DRAM; the divergent loop issues ~1.1G warp
instructions, ~1 ms. A closed form
(k = floor(128 sqrt|x|) with a one-step correction) or a binary search over the 128 levels makes
the work per lane uniform and short.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void sqrtlaw_quant_scan(const float* __restrict__ x, int8_t* __restrict__ codes, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], a = fabsf(v);
    int k = 0;
    // level(k + 1) = (k + 1)^2 / 16384, exact in fp32; the trip count is the code: data-dependent per lane
    while (k < 127 && (float)((k + 1) * (k + 1)) * (1.0f / 16384.0f) <= a) ++k;
    codes[i] = (int8_t)(v < 0.f ? -k : k);
}

torch::Tensor quantize(torch::Tensor x) {
    auto codes = torch::empty(x.sizes(), x.options().dtype(torch::kInt8));
    int n = x.numel();
    sqrtlaw_quant_scan<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), codes.data_ptr<int8_t>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return codes;
}
"""

module = load_inline("kls_quant_sqrtlaw_scan_fp32_cuda", cpp_sources="torch::Tensor quantize(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["quantize"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**25  # 32M fp32 values (128 MB)


def make_inputs():
    torch.manual_seed(0)
    u = torch.rand(N, device="cuda") * 2 - 1
    return (u**5,)  # in [-1, 1], heavy around 0


def run(x):
    return module.quantize(x)


def reference(x):
    levels = torch.arange(1, 128, device=x.device, dtype=torch.float32) ** 2 / 16384  # level(1..127), exact
    k = torch.searchsorted(levels, x.abs().contiguous(), right=True)  # number of levels <= |x|
    return torch.where(x < 0, -k, k).to(torch.int8)
