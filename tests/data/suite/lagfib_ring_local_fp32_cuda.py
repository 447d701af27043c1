"""Planted bottleneck: local-memory traffic from a per-thread ring buffer indexed at run time (a lagged Fibonacci RNG).

524,288 independent additive lagged Fibonacci generators, x_n = x_(n-55) + x_(n-24) mod 2^32 (one
per thread, its 55 initial values hashed from a per-generator seed), each producing 256 uniform floats (512 MB out,
written coalesced: step-major). Each thread keeps its last 55 values in unsigned ring[55] and
walks two run-time positions around it (ring[i] += ring[j]; i, j advance modulo 55), so the ring
cannot live in registers: ptxas places it in a 220-byte stack frame in local memory. Per output
float: two local loads and one local store (12 bytes of local traffic per 4 bytes of output), and
the 115 MB of rings (220 bytes x 2,048 resident threads = 450 KB per SM, more than L1 holds) spill
out to L2 and DRAM. The hypothesis: local loads/stores and their L2/DRAM traffic (~1.7 GB) dominate
a kernel whose real work is writing 512 MB (~170 us at the roof). Unrolling the step loop by 55
(every ring index a constant: the ring in 55 registers), or a ring in shared memory, fixes it.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define LAG_R 55
#define LAG_S 24

__device__ __forceinline__ unsigned fmix32(unsigned h) {   // murmur3 finalizer
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return h;
}

__global__ void lagfib_ring(const int* __restrict__ seeds, float* __restrict__ out, int threads, int steps) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    unsigned s = (unsigned)seeds[t];
    unsigned ring[LAG_R];                                   // run-time indexed below: local memory
    #pragma unroll
    for (int k = 0; k < LAG_R; ++k) ring[k] = fmix32(s + k * 0x9e3779b9u);
    int i = 0, j = LAG_R - LAG_S;                           // ring[i] = x_(n-55), ring[j] = x_(n-24)
    for (int n = 0; n < steps; ++n) {
        unsigned v = ring[i] + ring[j];
        ring[i] = v;
        out[(size_t)n * threads + t] = (float)(v >> 8) * (1.0f / 16777216.0f);   // 24 bits -> [0, 1)
        i = (i == LAG_R - 1) ? 0 : i + 1;
        j = (j == LAG_R - 1) ? 0 : j + 1;
    }
}

torch::Tensor lagfib(torch::Tensor seeds, int64_t steps) {
    int threads = seeds.numel();
    auto out = torch::empty({steps, threads}, seeds.options().dtype(torch::kFloat32));
    lagfib_ring<<<(threads + 255) / 256, 256>>>(seeds.data_ptr<int>(), out.data_ptr<float>(), threads, (int)steps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_lagfib_ring_local_fp32_cuda",
    cpp_sources="torch::Tensor lagfib(torch::Tensor seeds, int64_t steps);",
    cuda_sources=CUDA_SRC,
    functions=["lagfib"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

THREADS, STEPS = 2**19, 256  # generators, outputs per generator
LAG_R, LAG_S = 55, 24
M32 = 0xFFFFFFFF


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(-(2**31), 2**31 - 1, (THREADS,), device="cuda", dtype=torch.int32),)  # one seed per generator


def run(seeds):
    return module.lagfib(seeds, STEPS)


def _mul32(a, x):  # (a * x) mod 2^32 for a constant a < 2^32 and int64 x in [0, 2^32), without int64 overflow
    return ((((a * (x >> 16)) & 0xFFFF) << 16) + a * (x & 0xFFFF)) & M32


def _fmix32(h):  # murmur3 finalizer on int64 holding uint32 values
    h = h ^ (h >> 16)
    h = _mul32(0x85EBCA6B, h)
    h = h ^ (h >> 13)
    h = _mul32(0xC2B2AE35, h)
    return h ^ (h >> 16)


def reference(seeds):
    s = seeds.long() & M32
    k = torch.arange(LAG_R, device=seeds.device, dtype=torch.int64)
    ring = _fmix32((s[:, None] + k[None, :] * 0x9E3779B9) & M32)
    out = torch.empty(STEPS, seeds.numel(), device=seeds.device)
    i, j = 0, LAG_R - LAG_S
    for n in range(STEPS):
        v = (ring[:, i] + ring[:, j]) & M32
        ring[:, i] = v
        out[n] = (v >> 8).float() * (1.0 / 16777216.0)
        i, j = (i + 1) % LAG_R, (j + 1) % LAG_R
    return out
