"""Planted bottleneck: local-memory traffic from a per-thread array indexed at run time (MoE top-8 routing).

Mixture-of-experts routing for 1M tokens over 64 experts: per token, the k = 8 largest router
logits and their softmax weights. Logits are stored expert-major ([64, tokens], so a thread per
token reads coalesced). Each thread copies its 64 logits into float v[64] and selects k times (k is
a run-time argument): scan for the largest (constant indices, unrolled), record it, then knock it
out with v[best] = -inf. That store has a run-time index, so the whole array is placed in local
memory (ptxas: 288-byte stack frame, 40 registers, no spill counted): 64 local stores, then per
selection 16 LDL.128 reloading all 64 values, ~2.3 KB of local traffic per thread, ~2.4 GB in all,
against 256 MB of logits and 32 MB of weights that DRAM must move. 288 B x ~1,500 resident threads
is ~430 KB per SM, more than L1 holds, so the traffic goes to L2 and beyond. Keeping the array in
registers (a compile-time k, or knocking out with a compare-and-select over all 64) removes it.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define E 64      // experts
#define MAXK 8    // largest top-k supported

__global__ void moe_topk_local(const float* __restrict__ logits, float* __restrict__ weights, int T, int k) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) return;
    float v[E];   // v[best] below has a run-time index: the array lives in local memory
    #pragma unroll
    for (int e = 0; e < E; ++e) v[e] = logits[(size_t)e * T + t];   // expert-major: coalesced
    float top[MAXK];
    for (int r = 0; r < k; ++r) {   // k is a run-time value (the router's top-k)
        int best = 0;
        float bv = v[0];
        #pragma unroll
        for (int e = 1; e < E; ++e)
            if (v[e] > bv) { bv = v[e]; best = e; }
        top[r] = bv;
        v[best] = -INFINITY;   // run-time index
    }
    float sum = 0.f;
    const float m = top[0];   // the largest: softmax over the k selected
    for (int r = 0; r < k; ++r) { top[r] = expf(top[r] - m); sum += top[r]; }
    for (int r = 0; r < k; ++r) weights[(size_t)r * T + t] = top[r] / sum;   // [k, tokens]: coalesced
}

torch::Tensor route(torch::Tensor logits, int64_t k) {
    int T = logits.size(1);   // logits: [64, T] fp32; 1 <= k <= MAXK
    auto weights = torch::empty({k, T}, logits.options());
    moe_topk_local<<<(T + 255) / 256, 256>>>(logits.data_ptr<float>(), weights.data_ptr<float>(), T, (int)k);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return weights;
}
"""

module = load_inline("kls_moe_topk_local_fp32_cuda", cpp_sources="torch::Tensor route(torch::Tensor logits, int64_t k);",
                     cuda_sources=CUDA_SRC, functions=["route"], extra_cuda_cflags=["-O3", "-lineinfo"])

EXPERTS, TOKENS, TOPK = 64, 2**20, 8  # 256 MB of logits


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(EXPERTS, TOKENS, device="cuda"),)


def run(logits):
    return module.route(logits, TOPK)


def reference(logits):
    top = torch.topk(logits, TOPK, dim=0).values  # [8, tokens], largest first
    return torch.softmax(top, dim=0)
