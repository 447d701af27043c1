"""Planted bottleneck: uncoalesced global access (RoPE with consecutive threads on consecutive tokens).

Rotary embedding (half-split pairs (j, j + 64)) of x [8,192 tokens, 32 heads, 128] fp16, one thread
per rotation pair. The thread index is decomposed token-fastest (t = i % T), so the 32 lanes of a
warp take 32 consecutive tokens of the same (head, pair): their 2-byte loads of x are 8 KB apart
(one token's 32 x 128 halves), one 32-byte sector per lane for 2 useful bytes, and the same for the
two stores and, 256 B apart, for the cos/sin table reads (4 of 32 bytes). The other 15 halves of
every sector are used by other warps much later, so DRAM traffic stays near the 132 MB minimum,
but the load/store units and L2 move 12x the sectors the data needs (192 sectors, 6 KB, per warp
for 512 useful bytes): ~3.2 GB of sector traffic for 132 MB of data. Decomposing the index
pair-fastest (consecutive lanes on consecutive j, as rope_halfsplit_bf16_triton.py does) makes each
warp's accesses contiguous.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define D 128
#define HALF 64

__global__ void rope_token_major(const __half* __restrict__ x, const float* __restrict__ cosb,
                                 const float* __restrict__ sinb, __half* __restrict__ out, int T, int H) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // T * H * 64 pairs: < 2^31
    int t = i % T;        // token: fastest-varying index, so a warp spans 32 tokens ...
    int pair = i / T;     // ... of the same (head, j) pair
    int h = pair / HALF, j = pair % HALF;
    if (h >= H) return;
    size_t base = ((size_t)t * H + h) * D + j;        // lanes 8 KB apart
    float x1 = __half2float(x[base]), x2 = __half2float(x[base + HALF]);
    float c = cosb[(size_t)t * HALF + j], s = sinb[(size_t)t * HALF + j];  // lanes 256 B apart
    out[base] = __float2half(x1 * c - x2 * s);
    out[base + HALF] = __float2half(x2 * c + x1 * s);
}

torch::Tensor rope(torch::Tensor x, torch::Tensor cosb, torch::Tensor sinb) {
    int T = x.size(0), H = x.size(1);  // x: [T, H, 128] fp16; cos/sin: [T, 64] fp32
    auto out = torch::empty_like(x);
    int pairs = T * H * HALF;
    rope_token_major<<<(pairs + 255) / 256, 256>>>(reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
                                                   cosb.data_ptr<float>(), sinb.data_ptr<float>(),
                                                   reinterpret_cast<__half*>(out.data_ptr<at::Half>()), T, H);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_rope_token_stride_fp16_cuda",
                     cpp_sources="torch::Tensor rope(torch::Tensor x, torch::Tensor cosb, torch::Tensor sinb);",
                     cuda_sources=CUDA_SRC, functions=["rope"], extra_cuda_cflags=["-O3", "-lineinfo"])

T, H, D = 8192, 32, 128  # 64 MB of fp16 in, 64 MB out, 4 MB of tables
BASE = 10000.0


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(T, H, D, device="cuda", dtype=torch.float16)
    inv_freq = 1.0 / BASE ** (torch.arange(0, D, 2, device="cuda", dtype=torch.float32) / D)
    angles = torch.arange(T, device="cuda", dtype=torch.float32)[:, None] * inv_freq[None, :]  # [T, 64]
    return x, torch.cos(angles), torch.sin(angles)


def run(x, cos, sin):
    return module.rope(x, cos, sin)


def reference(x, cos, sin):
    half = x.shape[2] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).half()
