"""Planted bottleneck: launch overhead (RoPE of one decode token: 2,048 rotation pairs).

One decoding step rotates the query of a single new token: [32 heads, 128] fp32, interleaved pairs
(x[2j], x[2j + 1]) rotated by the cos/sin row of its position (read from a [4096, 64] cache).
That is 2,048 pairs, 16 KB in and 16 KB out, in 8 blocks of 256 threads: the kernel body is a few
hundred nanoseconds of memory latency inside a time dominated by launching the kernel and ramping
the grid up and down. Fuse the rotation into the kernel that produces q (or batch the tokens).
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define HALF 64   // pairs per head (head dim 128)

__global__ void rope_decode_kernel(const float2* __restrict__ x, const float* __restrict__ cos_cache,
                                   const float* __restrict__ sin_cache, float2* __restrict__ out, int pos, int pairs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // one interleaved pair (x[2i], x[2i + 1])
    if (i >= pairs) return;
    int j = i % HALF;
    float c = cos_cache[pos * HALF + j], s = sin_cache[pos * HALF + j];
    float2 v = x[i];
    out[i] = make_float2(v.x * c - v.y * s, v.y * c + v.x * s);
}

torch::Tensor rope(torch::Tensor x, torch::Tensor cos_cache, torch::Tensor sin_cache, int64_t pos) {
    auto out = torch::empty_like(x);  // x: [heads, 128] fp32, contiguous
    int pairs = x.numel() / 2;
    rope_decode_kernel<<<(pairs + 255) / 256, 256>>>(reinterpret_cast<const float2*>(x.data_ptr<float>()),
                                                     cos_cache.data_ptr<float>(), sin_cache.data_ptr<float>(),
                                                     reinterpret_cast<float2*>(out.data_ptr<float>()), (int)pos, pairs);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_rope_decode_tiny_fp32_cuda",
                     cpp_sources="torch::Tensor rope(torch::Tensor x, torch::Tensor cos_cache, torch::Tensor sin_cache, int64_t pos);",
                     cuda_sources=CUDA_SRC, functions=["rope"], extra_cuda_cflags=["-O3", "-lineinfo"])

H, D = 32, 128
MAX_POS, POS = 4096, 1234
BASE = 10000.0


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(H, D, device="cuda")
    inv_freq = 1.0 / BASE ** (torch.arange(0, D, 2, device="cuda", dtype=torch.float32) / D)
    angles = torch.arange(MAX_POS, device="cuda", dtype=torch.float32)[:, None] * inv_freq[None, :]  # [4096, 64]
    return x, torch.cos(angles), torch.sin(angles)


def run(x, cos_cache, sin_cache):
    return module.rope(x, cos_cache, sin_cache, POS)


def reference(x, cos_cache, sin_cache):
    c, s = cos_cache[POS], sin_cache[POS]  # [64]
    x1, x2 = x[:, 0::2], x[:, 1::2]
    return torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).reshape(x.shape)
