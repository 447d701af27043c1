"""Planted bottleneck: memory bound, with redundant DRAM traffic (a three-pass softmax in CUDA).

Softmax over rows of 65,536 bf16 (128 KB each), one 512-thread block per row, written the
textbook way: pass 1 finds the row maximum, pass 2 sums exp(x - max), pass 3 writes
exp(x - max) / sum. With ~4 blocks per SM, about 500 rows (64 MB) are in flight at a time,
more than the 50 MB L2, so passes 2 and 3 read the row from DRAM again: about three reads and a
write where one read and a write would do. The fix is to read once: an online softmax (running
max and rescaled sum in one pass), or shorter rows kept in registers or shared memory.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#define THREADS 512

__device__ float block_reduce(float v, bool is_max, float* red) {
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = red[lane < THREADS / 32 ? lane : 0];
    if (lane >= THREADS / 32) v = is_max ? -INFINITY : 0.f;
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    return v;  // every thread holds the block's result
}

__global__ void __launch_bounds__(THREADS) softmax_3pass_kernel(const __nv_bfloat16* __restrict__ x,
                                                               __nv_bfloat16* __restrict__ out, int n) {
    __shared__ float red[32];
    const __nv_bfloat16* xr = x + (size_t)blockIdx.x * n;
    __nv_bfloat16* orow = out + (size_t)blockIdx.x * n;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < n; i += THREADS) m = fmaxf(m, __bfloat162float(xr[i]));   // pass 1
    m = block_reduce(m, true, red);
    float s = 0.f;
    for (int i = threadIdx.x; i < n; i += THREADS) s += __expf(__bfloat162float(xr[i]) - m);  // pass 2
    s = block_reduce(s, false, red);
    float inv = 1.f / s;
    for (int i = threadIdx.x; i < n; i += THREADS)                                              // pass 3
        orow[i] = __float2bfloat16(__expf(__bfloat162float(xr[i]) - m) * inv);
}

torch::Tensor softmax(torch::Tensor x) {
    auto out = torch::empty_like(x);
    int rows = x.size(0), n = x.size(1);
    softmax_3pass_kernel<<<rows, THREADS>>>(reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
                                            reinterpret_cast<__nv_bfloat16*>(out.data_ptr<at::BFloat16>()), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_softmax_3pass_bf16_cuda", cpp_sources="torch::Tensor softmax(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["softmax"], extra_cuda_cflags=["-O3", "-lineinfo"])

ROWS, COLS = 4096, 65536  # 512 MB of bf16 in, 512 MB out


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device="cuda", dtype=torch.bfloat16),)


def run(x):
    return module.softmax(x)


def reference(x):
    return torch.softmax(x.float(), dim=1).to(torch.bfloat16)
