"""Fix of sum_atomic_single_cuda.py: reduce in registers and shared memory, one atomic per block.

Same sum, same input. 1,056 blocks (8 per SM) of 256 threads read the input with a grid-stride
loop, reduce within each warp with shuffles and across the block through shared memory, and add
one value per block to the result: 1,056 atomic additions instead of 4M. The kernel streams its
16 MB of input at memory speed; the atomics no longer matter.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define THREADS 256

__global__ void __launch_bounds__(THREADS) sum_block_atomic(const float* __restrict__ x, float* __restrict__ out, int n) {
    __shared__ float warp_sum[THREADS / 32];
    float s = 0.f;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += gridDim.x * THREADS) s += x[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < THREADS / 32 ? warp_sum[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
        if (threadIdx.x == 0) atomicAdd(out, s);  // one atomic per block
    }
}

torch::Tensor sum(torch::Tensor x) {
    auto out = torch::zeros({1}, x.options());
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, x.device().index()));
    sum_block_atomic<<<sms * 8, THREADS>>>(x.data_ptr<float>(), out.data_ptr<float>(), x.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_sum_block_then_atomic_cuda", cpp_sources="torch::Tensor sum(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["sum"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**22


def make_inputs():
    torch.manual_seed(0)
    return (torch.randint(0, 4, (N,), device="cuda").float(),)


def run(x):
    return module.sum(x)


def reference(x):
    return x.double().sum().reshape(1).float()
