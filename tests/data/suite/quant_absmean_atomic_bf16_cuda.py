"""Planted bottleneck: atomic contention (a per-tensor absmean quantization scale, one atomic per element).

BitNet-style ternary quantization scales a weight tensor by mean |w|. Here every thread adds |w| of
its bf16 element to one global float with atomicAdd: 1M atomic additions (32,768 warp-wide
requests of 32 lanes each) on the same 4 bytes. Floating-point atomic adds cannot be combined by
the compiler (unlike an integer max, which nvcc folds into one atomic per warp), so every lane's
update is executed, one after another, by the L2 slice that owns the address, while the SMs and DRAM
(2 MB to read) idle. Reduce first (registers, warp shuffles, one value per block) and issue one
atomic per block, or a two-pass reduction. The weights lie on a 1/64 grid (|w| <= 8/64), so the
sum is exact in fp32 in any order.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

__global__ void absmean_atomic(const __nv_bfloat16* __restrict__ w, float* __restrict__ sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, fabsf(__bfloat162float(w[i])));  // every thread, one address
}

torch::Tensor absmean(torch::Tensor w) {
    auto sum = torch::zeros({1}, w.options().dtype(torch::kFloat32));
    int n = w.numel();
    absmean_atomic<<<(n + 255) / 256, 256>>>(reinterpret_cast<const __nv_bfloat16*>(w.data_ptr<at::BFloat16>()),
                                             sum.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return sum.div_(n);  // the scale: mean |w|
}
"""

module = load_inline("kls_quant_absmean_atomic_bf16_cuda", cpp_sources="torch::Tensor absmean(torch::Tensor w);",
                     cuda_sources=CUDA_SRC, functions=["absmean"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**20  # 1M bf16 weights (2 MB)


def make_inputs():
    torch.manual_seed(0)
    return ((torch.randint(-8, 9, (N,), device="cuda").float() / 64).to(torch.bfloat16),)  # exact in bf16


def run(w):
    return module.absmean(w)


def reference(w):
    return (w.double().abs().sum() / w.numel()).float().reshape(1)
