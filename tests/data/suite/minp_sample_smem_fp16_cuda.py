"""Planted bottleneck: low occupancy (min-p token sampling with each block's whole vocabulary row in shared memory).

One sampling step for 4,096 sequences over a 32,000-token vocabulary (fp16 logits, 262 MB): per row,
keep the tokens whose probability is at least min_p = 0.05 times the top token's (logit >= max + T ln
min_p), then draw one token from the kept, renormalised distribution by inverse CDF with a given uniform
u. One 256-thread block per row stages the row as fp32 in 128,000 bytes of dynamic shared memory
(16-byte loads, converted), then works on it there: block max, exp of the kept tokens, a sum per warp
over its contiguous eighth of the row, and warp 0 finds the chunk and scans it 32 tokens at a time to
the target. 128 KB per block leaves room for one block per SM: 8 warps of 64, 12.5% theoretical
occupancy, limited by shared memory (nvcc 13, sm_90: 40 registers, 0 spills, would allow 6 blocks).
While a block loads its row, ~16 KB of loads are in flight on its SM (four 16-byte loads per thread, ~4
round trips), and while it computes, scans (warp 0 alone, up to 125 dependent steps) and synchronises,
none are: ~8-10 us per row, 4,096 rows / 132 SMs = 31 rows per SM, ~0.25-0.35 ms, against ~86 us for the
262 MB at 3.05 TB/s. The hypothesis: TheoreticalOccupancy firing (12.5%,
launch__occupancy_limit_shared_mem = 1), SM% and MEM% low, long-scoreboard and barrier stalls. Staging
the row in fp16 (64 KB, 3 blocks per SM) or splitting a row over several smaller blocks, so that other
blocks load while one computes, is the fix. The uniforms are placed in the middle of the chosen token's
CDF interval (make_inputs), so that fp32 sums in any order pick the same token as the float64 reference.
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define THREADS 256
#define WARPS (THREADS / 32)
#define FULL 0xffffffffu

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    return v;
}

__global__ void __launch_bounds__(THREADS) minp_sample_smem(const __half* __restrict__ logits, const float* __restrict__ u,
                                                            int* __restrict__ token, int vocab, float inv_temp,
                                                            float log_min_p_t) {
    extern __shared__ float4 row4[];   // the whole row, fp32: vocab floats
    float* p = reinterpret_cast<float*>(row4);
    __shared__ float red[WARPS];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint4* src = reinterpret_cast<const uint4*>(logits + (size_t)blockIdx.x * vocab);
    // 1. stage the row as fp32 (8 logits per 16-byte load) and find its max
    float mx = -INFINITY;
    for (int i = threadIdx.x; i < vocab / 8; i += THREADS) {
        uint4 raw = src[i];
        const __half2* h = reinterpret_cast<const __half2*>(&raw);
        float2 a = __half22float2(h[0]), b = __half22float2(h[1]), c = __half22float2(h[2]), d = __half22float2(h[3]);
        row4[2 * i] = make_float4(a.x, a.y, b.x, b.y);
        row4[2 * i + 1] = make_float4(c.x, c.y, d.x, d.y);
        mx = fmaxf(mx, fmaxf(fmaxf(fmaxf(a.x, a.y), fmaxf(b.x, b.y)), fmaxf(fmaxf(c.x, c.y), fmaxf(d.x, d.y))));
    }
    mx = warp_max(mx);
    if (lane == 0) red[warp] = mx;
    __syncthreads();
    mx = red[0];
    for (int w = 1; w < WARPS; ++w) mx = fmaxf(mx, red[w]);
    float thr = mx + log_min_p_t;   // min-p: p >= min_p * p_max  <=>  logit >= max + T ln(min_p)
    __syncthreads();
    // 2. unnormalised probabilities of the kept tokens (0 for the others)
    for (int i = threadIdx.x; i < vocab / 4; i += THREADS) {
        float4 l = row4[i];
        l.x = l.x >= thr ? __expf((l.x - mx) * inv_temp) : 0.f;
        l.y = l.y >= thr ? __expf((l.y - mx) * inv_temp) : 0.f;
        l.z = l.z >= thr ? __expf((l.z - mx) * inv_temp) : 0.f;
        l.w = l.w >= thr ? __expf((l.w - mx) * inv_temp) : 0.f;
        row4[i] = l;
    }
    __syncthreads();
    // 3. each warp sums its contiguous chunk of the row
    int chunk = vocab / WARPS;
    float s = 0.f;
    for (int i = warp * chunk + lane; i < (warp + 1) * chunk; i += 32) s += p[i];
    s = warp_sum(s);
    if (lane == 0) red[warp] = s;
    __syncthreads();
    // 4. warp 0: find the chunk that holds u * total, then scan it 32 tokens at a time
    if (warp == 0) {
        float incl = lane < WARPS ? red[lane] : 0.f;
        for (int o = 1; o < 32; o <<= 1) {
            float n = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += n;
        }
        float total = __shfl_sync(FULL, incl, WARPS - 1);
        float target = u[blockIdx.x] * total;
        int c = min(__popc(__ballot_sync(FULL, lane < WARPS && incl <= target)), WARPS - 1);
        float before = __shfl_sync(FULL, incl, c > 0 ? c - 1 : 0);
        float run = c > 0 ? before : 0.f;
        int tok = (c + 1) * chunk - 1;
        for (int i0 = c * chunk; i0 < (c + 1) * chunk; i0 += 32) {
            float v = i0 + lane < (c + 1) * chunk ? p[i0 + lane] : 0.f;
            for (int o = 1; o < 32; o <<= 1) {
                float n = __shfl_up_sync(FULL, v, o);
                if (lane >= o) v += n;
            }
            unsigned over = __ballot_sync(FULL, run + v > target);
            if (over) {
                tok = i0 + __ffs(over) - 1;
                break;
            }
            run += __shfl_sync(FULL, v, 31);
        }
        if (lane == 0) token[blockIdx.x] = tok;
    }
}

torch::Tensor minp_sample(torch::Tensor logits, torch::Tensor u, double temperature, double min_p) {
    int rows = logits.size(0), vocab = logits.size(1);
    TORCH_CHECK(vocab % (8 * WARPS) == 0 && (vocab / WARPS) % 32 == 0);
    auto token = torch::empty({rows}, logits.options().dtype(torch::kInt32));
    size_t smem = (size_t)vocab * sizeof(float);   // 128,000 bytes for 32,000 tokens
    C10_CUDA_CHECK(cudaFuncSetAttribute(minp_sample_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    minp_sample_smem<<<rows, THREADS, smem>>>(reinterpret_cast<const __half*>(logits.data_ptr<at::Half>()),
                                              u.data_ptr<float>(), token.data_ptr<int>(), vocab,
                                              (float)(1.0 / temperature), (float)(temperature * log(min_p)));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return token;
}
"""

module = load_inline(
    "kls_minp_sample_smem_fp16_cuda",
    cpp_sources="torch::Tensor minp_sample(torch::Tensor logits, torch::Tensor u, double temperature, double min_p);",
    cuda_sources=CUDA_SRC,
    functions=["minp_sample"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

ROWS = 4096
VOCAB = 32000
TEMPERATURE = 0.8
MIN_P = 0.05


def kept_probs(logits):
    """Unnormalised float64 probabilities of the kept tokens; the keep decision is made in fp32 as the kernel does."""
    lf = logits.float()
    mx = lf.max(dim=1, keepdim=True).values
    thr = mx + torch.tensor(TEMPERATURE * math.log(MIN_P), dtype=torch.float32, device=logits.device)
    p = torch.exp((lf.double() - mx.double()) / TEMPERATURE)
    return torch.where(lf >= thr, p, torch.zeros_like(p))


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    logits = (2.0 * torch.randn(ROWS, VOCAB, device="cuda", generator=g)).half()
    cdf = kept_probs(logits).cumsum(dim=1)
    total = cdf[:, -1:]
    u0 = torch.rand(ROWS, 1, device="cuda", generator=g, dtype=torch.float64)
    j = torch.searchsorted(cdf, u0 * total, right=True).clamp(max=VOCAB - 1)  # the token u0 draws
    lo = torch.where(j > 0, cdf.gather(1, (j - 1).clamp(min=0)), torch.zeros_like(u0))
    u = ((lo + cdf.gather(1, j)) / 2 / total).float()[:, 0]  # the middle of that token's interval
    return logits, u


def run(logits, u):
    return module.minp_sample(logits, u, TEMPERATURE, MIN_P)


def reference(logits, u):
    cdf = kept_probs(logits).cumsum(dim=1)
    target = u.double()[:, None] * cdf[:, -1:]
    return torch.searchsorted(cdf, target, right=True).clamp(max=VOCAB - 1)[:, 0].int()
