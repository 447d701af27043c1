"""Planted bottleneck: compute bound (FP32 FMA pipe), an all-pairs n-body force kernel.

67,584 bodies; each thread accumulates the softened gravitational acceleration on its body from
all 67,584 others, reading them in 128-body tiles staged through shared memory. Per pair: three
differences, a dot product, one rsqrt and a few multiplies and FMAs, about 20 FLOP, against no
global traffic inside the loop (each tile is read once per block and reused by 128 threads).
The FMA pipe is the busy unit. Faster means less arithmetic per pair (or fewer pairs:
Barnes-Hut), not better memory access.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define TILE 128

__global__ void __launch_bounds__(TILE) nbody_kernel(const float4* __restrict__ body, float4* __restrict__ acc_out,
                                                     int n, float eps2) {
    __shared__ float4 tile[TILE];
    int i = blockIdx.x * TILE + threadIdx.x;
    float4 bi = body[i];
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int t = 0; t < n; t += TILE) {
        tile[threadIdx.x] = body[t + threadIdx.x];
        __syncthreads();
        #pragma unroll 8
        for (int j = 0; j < TILE; ++j) {
            float4 bj = tile[j];
            float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
            float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
            float inv = rsqrtf(r2);
            float s = bj.w * inv * inv * inv;
            ax = fmaf(dx, s, ax); ay = fmaf(dy, s, ay); az = fmaf(dz, s, az);
        }
        __syncthreads();
    }
    acc_out[i] = make_float4(ax, ay, az, 0.f);
}

torch::Tensor nbody(torch::Tensor body, double eps2) {
    int n = body.size(0);  // multiple of TILE
    auto out = torch::empty_like(body);
    nbody_kernel<<<n / TILE, TILE>>>(reinterpret_cast<const float4*>(body.data_ptr<float>()),
                                     reinterpret_cast<float4*>(out.data_ptr<float>()), n, (float)eps2);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_nbody_fp32_cuda", cpp_sources="torch::Tensor nbody(torch::Tensor body, double eps2);",
                     cuda_sources=CUDA_SRC, functions=["nbody"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 132 * 4 * 128  # 67,584 bodies: 528 blocks of 128, exactly 4 per SM
EPS2 = 1e-2
TOLERANCE = 1e-4  # rsqrtf (approximate) and a different summation order over 67,584 terms


def make_inputs():
    torch.manual_seed(0)
    body = torch.randn(N, 4, device="cuda")
    body[:, 3] = torch.rand(N, device="cuda") / N  # masses
    return (body,)


def run(body):
    return module.nbody(body, EPS2)


def reference(body):
    pos, mass = body[:, :3].double(), body[:, 3].double()
    out = torch.zeros(N, 4, device=body.device, dtype=torch.float64)
    for s in range(0, N, 256):  # float64, 256 bodies at a time ([256, N, 3] = 400 MB)
        d = pos[None, :, :] - pos[s:s + 256, None, :]
        r2 = (d * d).sum(-1) + EPS2
        w = mass[None, :] * r2.rsqrt() ** 3
        out[s:s + 256, :3] = (d * w[..., None]).sum(1)
    return out.float()
