"""Planted bottleneck: tail effect (165 equal blocks, one option each, on 132 SMs that hold one block each).

Monte Carlo prices of 165 arithmetic-average Asian call options (each with its own spot, strike,
rate and volatility; one maturity, 128 fixing dates): one 1,024-thread block per option, each
thread simulating 8 geometric-Brownian paths side by side (a counter-based integer hash, Box-Muller
with logf/sqrtf/sincospif, one expf per step), then a block reduction of the payoffs. Every block
does the same work (8,192 paths x 128 steps). At 47 registers (nvcc 13, sm_90) a 1,024-thread block
fills its SM alone (64K registers), so a wave is 132 blocks: the grid is 1.25 waves, 132 blocks and
then 33 blocks alone on 33 SMs while 99 SMs idle, each for as long as a full-wave block takes. With
~1,045 SASS instructions per thread per step pair (8 paths) and 32 warps of 8 independent paths each,
a block keeps its SM's issue slots busy, ~2.1M warp-instructions, ~0.3 ms per block, so the kernel
takes ~2 block-times (~0.6 ms) where 1.25 would do: ~37% of the time is the tail. The fix is to
give each option several smaller blocks (split the paths and reduce across blocks), so that the grid
is many waves, or a grid that is a whole number of waves.
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define THREADS 1024
#define PATHS 8   // paths per thread

__device__ __forceinline__ unsigned int lowbias32(unsigned int x) {   // integer hash (counter-based RNG)
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

__global__ void __launch_bounds__(THREADS, 1) mc_asian_option(const float* __restrict__ spot,
        const float* __restrict__ strike, const float* __restrict__ rate, const float* __restrict__ vol,
        float maturity, int steps, float* __restrict__ price) {
    __shared__ float partial[THREADS / 32];
    int o = blockIdx.x;
    float s0 = spot[o], k = strike[o], r = rate[o], v = vol[o];
    float dt = maturity / steps;
    float drift = (r - 0.5f * v * v) * dt, diffusion = v * sqrtf(dt);
    float s[PATHS], sum[PATHS];
    #pragma unroll
    for (int p = 0; p < PATHS; ++p) { s[p] = s0; sum[p] = 0.f; }
    unsigned int path0 = (unsigned int)(o * THREADS + threadIdx.x) * PATHS;
    for (int t = 0; t < steps; t += 2) {
        #pragma unroll
        for (int p = 0; p < PATHS; ++p) {
            unsigned int c = (path0 + p) * (unsigned int)steps + t;   // counter of this path's step pair
            unsigned int h1 = lowbias32(2u * c + 0x9e3779b9u), h2 = lowbias32(2u * c + 0x9e3779bau);
            float u1 = (float)((h1 >> 8) + 1u) * 0x1p-24f;   // (0, 1]
            float u2 = (float)(h2 >> 8) * 0x1p-24f;          // [0, 1)
            float rad = sqrtf(-2.f * logf(u1)), sn, cs;
            sincospif(2.f * u2, &sn, &cs);
            s[p] *= expf(drift + diffusion * (rad * cs)); sum[p] += s[p];
            s[p] *= expf(drift + diffusion * (rad * sn)); sum[p] += s[p];
        }
    }
    float payoff = 0.f;
    #pragma unroll
    for (int p = 0; p < PATHS; ++p) payoff += fmaxf(sum[p] / steps - k, 0.f);
    for (int off = 16; off > 0; off >>= 1) payoff += __shfl_xor_sync(0xffffffffu, payoff, off);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = payoff;
    __syncthreads();
    if (threadIdx.x < 32) {
        payoff = partial[threadIdx.x];
        for (int off = 16; off > 0; off >>= 1) payoff += __shfl_xor_sync(0xffffffffu, payoff, off);
        if (threadIdx.x == 0) price[o] = expf(-r * maturity) * payoff / (THREADS * PATHS);
    }
}

torch::Tensor asian(torch::Tensor spot, torch::Tensor strike, torch::Tensor rate, torch::Tensor vol,
                    double maturity, int64_t steps) {
    int options = spot.numel();
    TORCH_CHECK(steps % 2 == 0);
    auto price = torch::empty_like(spot);
    mc_asian_option<<<options, THREADS>>>(spot.data_ptr<float>(), strike.data_ptr<float>(), rate.data_ptr<float>(),
                                         vol.data_ptr<float>(), (float)maturity, (int)steps, price.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return price;
}
"""

module = load_inline(
    "kls_mc_asian_block_per_option_fp32_cuda",
    cpp_sources="torch::Tensor asian(torch::Tensor spot, torch::Tensor strike, torch::Tensor rate, torch::Tensor vol, "
    "double maturity, int64_t steps);",
    cuda_sources=CUDA_SRC,
    functions=["asian"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

OPTIONS = 165  # 1.25 waves of 132 one-block SMs
THREADS, PATHS = 1024, 8
STEPS = 128
MATURITY = 1.0


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)

    def uniform(lo, hi):
        return lo + (hi - lo) * torch.rand(OPTIONS, device="cuda", generator=g)

    spot = uniform(80.0, 120.0)
    strike = uniform(90.0, 110.0)
    rate = uniform(0.0, 0.06)
    vol = uniform(0.15, 0.45)
    return spot, strike, rate, vol


def run(spot, strike, rate, vol):
    return module.asian(spot, strike, rate, vol, MATURITY, STEPS)


def _lowbias32(x):  # the kernel's hash on int64 tensors holding uint32 values
    m32 = 0xFFFFFFFF

    def mul(x, m):  # (x * m) mod 2^32 without int64 overflow
        return ((x & 0xFFFF) * m + ((((x >> 16) * m) & 0xFFFF) << 16)) & m32

    x = x ^ (x >> 16)
    x = mul(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = mul(x, 0x846CA68B)
    return x ^ (x >> 16)


def reference(spot, strike, rate, vol):
    dev = spot.device
    options = spot.numel()
    paths = THREADS * PATHS
    path = torch.arange(options * paths, device=dev, dtype=torch.int64)  # = (o * THREADS + thread) * PATHS + p
    dt = MATURITY / STEPS
    r = rate.double().repeat_interleave(paths)
    v = vol.double().repeat_interleave(paths)
    drift, diffusion = (r - 0.5 * v * v) * dt, v * math.sqrt(dt)
    s = spot.double().repeat_interleave(paths)
    total = torch.zeros_like(s)
    for t in range(0, STEPS, 2):
        c = (path * STEPS + t) & 0xFFFFFFFF
        h1 = _lowbias32((2 * c + 0x9E3779B9) & 0xFFFFFFFF)
        h2 = _lowbias32((2 * c + 0x9E3779BA) & 0xFFFFFFFF)
        u1 = ((h1 >> 8) + 1).double() * 2.0**-24
        u2 = (h2 >> 8).double() * 2.0**-24
        rad = torch.sqrt(-2.0 * torch.log(u1))
        for z in (rad * torch.cos(2.0 * math.pi * u2), rad * torch.sin(2.0 * math.pi * u2)):
            s = s * torch.exp(drift + diffusion * z)
            total += s
    payoff = (total / STEPS - strike.double().repeat_interleave(paths)).clamp_min(0.0)
    return (torch.exp(-rate.double() * MATURITY) * payoff.view(options, paths).mean(1)).float()
