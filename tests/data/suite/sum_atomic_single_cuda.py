"""Planted bottleneck: atomic contention (every thread adds its element to one address).

A sum of 4M floats written as `atomicAdd(out, x[i])` in every thread: 4M atomic additions to the
same 4 bytes. Atomics are executed at the L2 slice that owns the address, one after another, so
the whole GPU's work funnels through one L2 atomic unit while the SMs and DRAM idle. Reduce first
(in registers, warps and blocks) and add one value per block
(sum_block_then_atomic_cuda.py): 1,056 atomics instead of 4M.
Inputs are small integers, so the sum is exact in any order.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void sum_atomic_single(const float* __restrict__ x, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i]);  // 4M threads, one address
}

torch::Tensor sum(torch::Tensor x) {
    auto out = torch::zeros({1}, x.options());
    int n = x.numel();
    sum_atomic_single<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_sum_atomic_single_cuda", cpp_sources="torch::Tensor sum(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["sum"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**22


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(0, 4, (N,), device="cuda").float(),)  # sum < 2**24: exact in fp32


def run(x):
    return module.sum(x)


def reference(x):
    return x.double().sum().reshape(1).float()
