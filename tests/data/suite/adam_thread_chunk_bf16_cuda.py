"""Planted bottleneck: uncoalesced global access (an Adam step where each thread owns a contiguous chunk).

One Adam step over 16.8M bf16 parameters with bf16 optimizer state (p, g, m, v in, p', m', v'
out: 14 bytes per parameter, 235 MB). Each thread updates its own contiguous run of 32 parameters
(i = thread * 32 + j, j = 0..31): a pattern that reads naturally ("a thread per chunk") but puts the
32 lanes of a warp 64 bytes apart, so every 2-byte load or store touches a different 32-byte
sector: 32 sectors per warp instruction for 64 useful bytes (2 of 32 bytes per sector). The other
bytes of each sector are wanted by the same lane in later iterations, but with 2,048 threads per
SM and 4 streams each the lines do not survive in L1 (2,048 x 4 x 64 bytes = 512 KB in use per SM
for at most 256 KB of L1), so they are fetched again from L2, and every partial-sector store goes
to L2 alone. DRAM can
stay near the 235 MB minimum (~77 us at the roof) while the load/store units and L2 move ~16x the
sectors. Consecutive lanes on consecutive parameters (i = j * threads + thread) fixes it
(adam_flat_fp32_triton.py is that kernel, in fp32).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#define CHUNK 32   // parameters per thread, contiguous

struct AdamArgs { float lr, beta1, beta2, eps, bc1, bc2; };

__global__ void adam_thread_chunk(const __nv_bfloat16* __restrict__ p, const __nv_bfloat16* __restrict__ g,
                                  const __nv_bfloat16* __restrict__ m, const __nv_bfloat16* __restrict__ v,
                                  __nv_bfloat16* __restrict__ out, AdamArgs a, long n) {
    long first = ((long)blockIdx.x * blockDim.x + threadIdx.x) * CHUNK;   // lanes 64 bytes apart
    #pragma unroll 4
    for (int j = 0; j < CHUNK; ++j) {
        long i = first + j;
        if (i >= n) break;
        float gi = __bfloat162float(g[i]);
        float mi = a.beta1 * __bfloat162float(m[i]) + (1.f - a.beta1) * gi;
        float vi = a.beta2 * __bfloat162float(v[i]) + (1.f - a.beta2) * gi * gi;
        float pi = __bfloat162float(p[i]) - a.lr * (mi / a.bc1) / (sqrtf(vi / a.bc2) + a.eps);
        out[i] = __float2bfloat16(pi);
        out[n + i] = __float2bfloat16(mi);
        out[2 * n + i] = __float2bfloat16(vi);
    }
}

torch::Tensor adam_step(torch::Tensor p, torch::Tensor g, torch::Tensor m, torch::Tensor v, double lr, double beta1,
                        double beta2, double eps, int64_t step) {
    long n = p.numel();
    auto out = torch::empty({3, n}, p.options());
    AdamArgs a{(float)lr, (float)beta1, (float)beta2, (float)eps, (float)(1.0 - pow(beta1, (double)step)),
               (float)(1.0 - pow(beta2, (double)step))};
    long threads = (n + CHUNK - 1) / CHUNK;
    auto bf = [](torch::Tensor t) { return reinterpret_cast<const __nv_bfloat16*>(t.data_ptr<at::BFloat16>()); };
    adam_thread_chunk<<<(threads + 255) / 256, 256>>>(bf(p), bf(g), bf(m), bf(v),
                                                      reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), a, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_adam_thread_chunk_bf16_cuda",
    cpp_sources="torch::Tensor adam_step(torch::Tensor p, torch::Tensor g, torch::Tensor m, torch::Tensor v, double lr, "
    "double beta1, double beta2, double eps, int64_t step);",
    cuda_sources=CUDA_SRC,
    functions=["adam_step"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

N = 2**24  # parameters (32 MB per bf16 buffer)
LR, BETA1, BETA2, EPS, STEP = 1e-3, 0.9, 0.999, 1e-8, 10


def make_inputs():
    torch.manual_seed(0)
    p = torch.randn(N, device="cuda").bfloat16()
    g = (torch.randn(N, device="cuda") * 0.01).bfloat16()
    m = (torch.randn(N, device="cuda") * 0.001).bfloat16()
    v = (torch.rand(N, device="cuda") * 1e-4).bfloat16()
    return p, g, m, v


def run(p, g, m, v):
    return module.adam_step(p, g, m, v, LR, BETA1, BETA2, EPS, STEP)


def reference(p, g, m, v):
    p, g, m, v = p.float(), g.float(), m.float(), v.float()
    m = BETA1 * m + (1 - BETA1) * g
    v = BETA2 * v + (1 - BETA2) * g * g
    bc1, bc2 = 1.0 - BETA1**STEP, 1.0 - BETA2**STEP
    p = p - LR * (m / bc1) / ((v / bc2).sqrt() + EPS)
    return torch.stack([p, m, v]).bfloat16()
