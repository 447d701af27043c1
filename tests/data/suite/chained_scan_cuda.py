"""Planted bottleneck: latency bound, a serial chain between blocks (a chained prefix sum).

An inclusive scan of 8M floats in tiles of 2,048. Each block scans its tile, then waits until
the previous tile has published its running total, adds its own and publishes the result
(a flag and a value in global memory, with a fence in between). The tiles form one chain: each
link costs a couple of L2 round trips plus a memory fence, and 4,096 links are paid one after
another while the whole data set (32 MB in, 32 MB out) would stream in ~20 us. SMs and memory
are both nearly idle; block 0 of the chain is the only one making progress. The fix is to
break the chain: a decoupled look-back (read the predecessors' local sums, not only their
inclusive totals) or a reduce-then-scan in three kernels.
Tiles are taken in launch order through an atomic ticket, so a block only ever waits for a
tile that is already running or done.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define THREADS 256
#define ITEMS 8
#define TILE (THREADS * ITEMS)

__global__ void __launch_bounds__(THREADS) chained_scan_kernel(const float* __restrict__ x, float* __restrict__ out,
                                                               float* prefix, int* flag, int* ticket) {
    __shared__ int tile_s;
    __shared__ float warp_sum[THREADS / 32];
    __shared__ float carry_s;
    if (threadIdx.x == 0) tile_s = atomicAdd(ticket, 1);
    __syncthreads();
    const int tile = tile_s;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t base = (size_t)tile * TILE + threadIdx.x * ITEMS;
    float v[ITEMS];
    const float4* src = reinterpret_cast<const float4*>(x + base);
    float4 a = src[0], b = src[1];
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
    #pragma unroll
    for (int i = 1; i < ITEMS; ++i) v[i] += v[i - 1];          // scan within the thread
    float t = v[ITEMS - 1];
    #pragma unroll
    for (int o = 1; o < 32; o <<= 1) {                          // scan across the warp
        float u = __shfl_up_sync(0xffffffff, t, o);
        if (lane >= o) t += u;
    }
    if (lane == 31) warp_sum[warp] = t;
    __syncthreads();
    if (warp == 0) {                                            // scan of the warp totals
        float w = lane < THREADS / 32 ? warp_sum[lane] : 0.f;
        #pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            float u = __shfl_up_sync(0xffffffff, w, o);
            if (lane >= o) w += u;
        }
        if (lane < THREADS / 32) warp_sum[lane] = w;            // inclusive
    }
    __syncthreads();
    float before = (warp > 0 ? warp_sum[warp - 1] : 0.f) + t - v[ITEMS - 1];
    if (threadIdx.x == 0) {                                     // the chain: wait for the previous tile
        float carry = 0.f;
        if (tile > 0) {
            while (((volatile int*)flag)[tile - 1] == 0) { }
            __threadfence();
            carry = ((volatile float*)prefix)[tile - 1];
        }
        ((volatile float*)prefix)[tile] = carry + warp_sum[THREADS / 32 - 1];
        __threadfence();
        ((volatile int*)flag)[tile] = 1;
        carry_s = carry;
    }
    __syncthreads();
    float off = carry_s + before;
    float4* dst = reinterpret_cast<float4*>(out + base);
    dst[0] = make_float4(v[0] + off, v[1] + off, v[2] + off, v[3] + off);
    dst[1] = make_float4(v[4] + off, v[5] + off, v[6] + off, v[7] + off);
}

torch::Tensor scan(torch::Tensor x) {
    int tiles = x.numel() / TILE;  // a multiple of TILE
    auto out = torch::empty_like(x);
    auto prefix = torch::empty({tiles}, x.options());
    auto flag = torch::zeros({tiles + 1}, x.options().dtype(torch::kInt32));  // last slot: the ticket
    chained_scan_kernel<<<tiles, THREADS>>>(x.data_ptr<float>(), out.data_ptr<float>(), prefix.data_ptr<float>(),
                                            flag.data_ptr<int>(), flag.data_ptr<int>() + tiles);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_chained_scan_cuda", cpp_sources="torch::Tensor scan(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["scan"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**23  # 4096 tiles of 2048


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(0, 2, (N,), device="cuda").float(),)  # 0/1: every partial sum is exact in fp32


def run(x):
    return module.scan(x)


def reference(x):
    return torch.cumsum(x.double(), 0).float()
