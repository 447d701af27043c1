"""Already good (near the roof): a vectorized fp16 copy, 16 bytes per thread.

Copies 256M halves (512 MB in, 512 MB out): each thread moves one 16-byte vector (8 halves) with
a single load and a single store, so a warp moves 512 contiguous bytes per instruction and the
SMs keep plenty of bytes in flight. The kernel moves exactly the bytes it must, at close to the
DRAM bandwidth: the reference for "memory bound and already at the roof".
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void copy_vec16(const uint4* __restrict__ in, uint4* __restrict__ out, long n16) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n16) out[i] = in[i];  // 16 bytes = 8 halves per thread
}

torch::Tensor copy(torch::Tensor x) {
    auto out = torch::empty_like(x);
    long n16 = x.numel() / 8;  // a multiple of 8 halves
    copy_vec16<<<(n16 + 255) / 256, 256>>>(reinterpret_cast<const uint4*>(x.data_ptr<at::Half>()),
                                           reinterpret_cast<uint4*>(out.data_ptr<at::Half>()), n16);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline("kls_copy_vec_fp16_cuda", cpp_sources="torch::Tensor copy(torch::Tensor x);",
                     cuda_sources=CUDA_SRC, functions=["copy"], extra_cuda_cflags=["-O3", "-lineinfo"])

N = 2**28


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(N, device="cuda", dtype=torch.float16),)


def run(x):
    return module.copy(x)


def reference(x):
    return x.clone()
