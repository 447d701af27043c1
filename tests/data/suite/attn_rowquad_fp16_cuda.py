"""Planted bottleneck: tensor cores unused (fp16 attention computed with fp32 FMAs on the CUDA cores).

Non-causal attention softmax(Q K^T / sqrt(d)) V for 32 heads of 2,048 tokens, head dim 64, fp16 in
and out. A hand-written flash-style CUDA kernel: four threads per query row (16 of the 64 dims
each), K/V tiles of 32 keys staged in shared memory as fp32, and for each key a 16-term dot product
per thread, two shuffles to combine the four parts, an online-softmax update and 16 FMAs into the
output accumulator. All of Q K^T and P V (~34 GFLOP) runs as scalar FFMA, ~1 ms at best, where
the same matrix products on the tensor cores (mma/wgmma, as any flash-attention kernel or
torch's scaled_dot_product_attention uses) take a small fraction of that. Shared-memory reads are
broadcasts (one LDS.128 per four FMAs) and DRAM traffic is small (32 MB).
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define D 64          // head dim
#define THREADS 128   // 32 query rows x 4 threads
#define QPB 32        // query rows per block
#define KT 32         // keys per shared-memory tile

__device__ __forceinline__ float4 load_half4(const __half* p) {   // 4 halves (8 bytes) -> float4
    float2 a = __half22float2(*reinterpret_cast<const __half2*>(p));
    float2 b = __half22float2(*reinterpret_cast<const __half2*>(p + 2));
    return make_float4(a.x, a.y, b.x, b.y);
}

__global__ void __launch_bounds__(THREADS) attn_rowquad(const __half* __restrict__ q, const __half* __restrict__ k,
                                                        const __half* __restrict__ v, __half* __restrict__ o,
                                                        int S, float qk_scale) {
    __shared__ float4 Ks[KT][D / 4];
    __shared__ float4 Vs[KT][D / 4];
    const size_t hbase = (size_t)blockIdx.y * S * D;     // this head
    const int qi = blockIdx.x * QPB + threadIdx.x / 4;   // this thread's query row
    const int part = threadIdx.x % 4;                    // owns float4 chunks part, part + 4, part + 8, part + 12
    float4 qr[4], acc[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) {
        float4 t = load_half4(q + hbase + (size_t)qi * D + 4 * (part + 4 * r));
        qr[r] = make_float4(t.x * qk_scale, t.y * qk_scale, t.z * qk_scale, t.w * qk_scale);
        acc[r] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    float m = -INFINITY, l = 0.f;
    for (int t0 = 0; t0 < S; t0 += KT) {
        __syncthreads();   // everyone is done with the previous tile
        for (int i = threadIdx.x; i < KT * D / 4; i += THREADS) {   // 512 float4 of K and of V
            int kk = i / (D / 4), c = i % (D / 4);
            size_t off = hbase + (size_t)(t0 + kk) * D + 4 * c;
            Ks[kk][c] = load_half4(k + off);
            Vs[kk][c] = load_half4(v + off);
        }
        __syncthreads();
        for (int j = 0; j < KT; ++j) {
            float s = 0.f;
            #pragma unroll
            for (int r = 0; r < 4; ++r) {   // 16-term partial dot product (scalar FMAs)
                float4 kv = Ks[j][part + 4 * r];
                s = fmaf(qr[r].x, kv.x, s); s = fmaf(qr[r].y, kv.y, s);
                s = fmaf(qr[r].z, kv.z, s); s = fmaf(qr[r].w, kv.w, s);
            }
            s += __shfl_xor_sync(0xffffffffu, s, 1);   // the 4 threads of a row are adjacent lanes
            s += __shfl_xor_sync(0xffffffffu, s, 2);
            float m_new = fmaxf(m, s);
            float alpha = exp2f(m - m_new);   // 0 for the first key (m = -inf)
            float p = exp2f(s - m_new);
            l = l * alpha + p;
            #pragma unroll
            for (int r = 0; r < 4; ++r) {   // 16 FMAs into the output accumulator
                float4 vv = Vs[j][part + 4 * r];
                acc[r].x = fmaf(p, vv.x, acc[r].x * alpha); acc[r].y = fmaf(p, vv.y, acc[r].y * alpha);
                acc[r].z = fmaf(p, vv.z, acc[r].z * alpha); acc[r].w = fmaf(p, vv.w, acc[r].w * alpha);
            }
            m = m_new;
        }
    }
    float inv = 1.f / l;
    #pragma unroll
    for (int r = 0; r < 4; ++r) {
        __half* dst = o + hbase + (size_t)qi * D + 4 * (part + 4 * r);
        *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(acc[r].x * inv, acc[r].y * inv);
        *reinterpret_cast<__half2*>(dst + 2) = __floats2half2_rn(acc[r].z * inv, acc[r].w * inv);
    }
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int heads = q.size(0) * q.size(1), S = q.size(2);   // [B, H, S, 64] fp16, S % 32 == 0
    auto o = torch::empty_like(q);
    float qk_scale = 1.4426950408889634f / sqrtf((float)D);   // log2(e) / sqrt(d): exp2 below
    attn_rowquad<<<dim3(S / QPB, heads), THREADS>>>(reinterpret_cast<const __half*>(q.data_ptr<at::Half>()),
                                                    reinterpret_cast<const __half*>(k.data_ptr<at::Half>()),
                                                    reinterpret_cast<const __half*>(v.data_ptr<at::Half>()),
                                                    reinterpret_cast<__half*>(o.data_ptr<at::Half>()), S, qk_scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return o;
}
"""

module = load_inline("kls_attn_rowquad_fp16_cuda", cpp_sources="torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v);",
                     cuda_sources=CUDA_SRC, functions=["attention"], extra_cuda_cflags=["-O3", "-lineinfo"])

B, H, S, D = 2, 16, 2048, 64


def make_inputs():
    torch.manual_seed(0)
    q = torch.randn(B, H, S, D, device="cuda", dtype=torch.float16)
    k = torch.randn(B, H, S, D, device="cuda", dtype=torch.float16)
    v = torch.randn(B, H, S, D, device="cuda", dtype=torch.float16)
    return q, k, v


def run(q, k, v):
    return module.attention(q, k, v)


def reference(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float()).half()
