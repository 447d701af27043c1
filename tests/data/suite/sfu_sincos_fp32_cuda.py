"""Planted bottleneck: compute bound on the special-function unit (MUFU sin/cos/exp).

Every thread iterates v <- 0.5 sin(v) + 0.25 cos(v) + x with the fast intrinsics __sinf and
__cosf, 256 times. Each intrinsic is one MUFU instruction (plus a range-reduction multiply), and
the MUFU (XU) pipe issues at a quarter of the FMA rate, so the XU pipe is saturated while
memory does nothing (8 bytes per element for 512 transcendental operations). Faster means
fewer transcendentals (a polynomial on the FMA pipe, or a cheaper formula).
Uses fast intrinsics (absolute error ~1e-6), so the check uses a looser tolerance.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void sfu_sincos_kernel(const float* __restrict__ x, float* __restrict__ out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float b = x[i], v = b;
    for (int k = 0; k < iters; ++k) v = 0.5f * __sinf(v) + 0.25f * __cosf(v) + b;
    out[i] = v;
}

torch::Tensor sfu(torch::Tensor x, int64_t iters) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    sfu_sincos_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n, iters);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_sfu_sincos_fp32_cuda", cpp_sources="torch::Tensor sfu(torch::Tensor x, int64_t iters);",
                     cuda_sources=CUDA_SRC, functions=["sfu"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**22
ITERS = 256
TOLERANCE = 1e-4  # __sinf/__cosf vs torch.sin/cos


def make_inputs():
    torch.manual_seed(0)
    return (torch.rand(N, device="cuda") * 2 - 1,)


def run(x):
    return module.sfu(x, ITERS)


def reference(x):
    v = x.clone()
    for _ in range(ITERS):
        v = 0.5 * torch.sin(v) + 0.25 * torch.cos(v) + x
    return v
