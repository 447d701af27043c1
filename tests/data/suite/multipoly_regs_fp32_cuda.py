"""Near miss for tensor_cores_unused: FMA-heavy, register-hungry, but no matrix product.

Each thread evaluates one shared degree-256 polynomial at 64 points of its own (x scaled 64
ways), by Horner's rule, loading the coefficients from global memory (an L1 broadcast) as it
goes. The 64 running values and 64 points live in registers (~150 per thread), so only a few
128-thread blocks fit on an SM: theoretical occupancy is low and limited by registers. But the
64 independent FMA chains give each warp plenty of instruction-level parallelism, so the few
warps may still keep the FMA pipe busy. Which of the two (low occupancy, or the FMA pipe)
limits the kernel is decided by the report. There is no A x B structure here, so tensor cores
would not help.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define PTS 64

__global__ void __launch_bounds__(128) multipoly_kernel(const float* __restrict__ x, const float* __restrict__ coef,
                                                        float* __restrict__ out, int degree) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float xt = x[t];
    float p[PTS], acc[PTS];
    #pragma unroll
    for (int k = 0; k < PTS; ++k) { p[k] = xt * (1.0f - k * (1.0f / 128.0f)); acc[k] = 0.f; }
    for (int d = 0; d < degree; ++d) {
        float c = coef[d];  // same address for every thread: an L1 broadcast
        #pragma unroll
        for (int k = 0; k < PTS; ++k) acc[k] = fmaf(acc[k], p[k], c);
    }
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < PTS; ++k) s += acc[k];
    out[t] = s;
}

torch::Tensor multipoly(torch::Tensor x, torch::Tensor coef) {
    auto out = torch::empty_like(x);
    int n = x.numel();  // multiple of 128
    multipoly_kernel<<<n / 128, 128>>>(x.data_ptr<float>(), coef.data_ptr<float>(), out.data_ptr<float>(), coef.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_multipoly_regs_fp32_cuda", cpp_sources="torch::Tensor multipoly(torch::Tensor x, torch::Tensor coef);",
                     cuda_sources=CUDA_SRC, functions=["multipoly"], extra_cuda_cflags=["-O3", "-lineinfo"])

THREADS = 132 * 12 * 128  # 1584 blocks of 128 threads
DEGREE = 256


def make_inputs():
    torch.manual_seed(0)
    x = torch.rand(THREADS, device="cuda") * 1.8 - 0.9
    coef = torch.rand(DEGREE, device="cuda") - 0.5
    return x, coef


def run(x, coef):
    return module.multipoly(x, coef)


def reference(x, coef):
    k = torch.arange(64, device=x.device, dtype=torch.float32)
    p = x[:, None] * (1.0 - k * (1.0 / 128.0))[None, :]
    acc = torch.zeros_like(p)
    for d in range(coef.numel()):
        acc = acc * p + coef[d]
    return acc.sum(1)
