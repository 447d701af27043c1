"""Planted bottleneck: uncoalesced global loads (a segmented sum with one thread per segment).

Sums of 1,048,576 variable-length segments of an fp16 array (lengths 56..72, mean 64, given by
int32 offsets: ~67M values, 134 MB), fp32 accumulation and output. One thread per segment walks
its own segment element by element: at each step the 32 lanes of a warp read 2 bytes each from 32
segments ~128 bytes apart, so every load instruction touches 32 different sectors (and lines) for
64 useful bytes, where consecutive lanes on consecutive elements would touch 2. Each sector is
fetched from DRAM about once (a lane reads its next 15 values from the sector it just touched, if
L1 still holds it: 32 lines per warp x 64 warps = 256 KB of working set per SM, about what L1 holds), so
the waste is in L1/L2 requests rather than in DRAM bytes: ~67M lane loads as ~2.1M warp requests
of 32 sectors each, ~500k L1 wavefronts per SM, ~0.3 ms, where the 139 MB need ~46 us.
Expected: ncu's uncoalesced-access rule with ~32 sectors per request (ideal ~2), L1 the busiest
unit, DRAM well below its peak. Lengths vary only by +-8 so that lanes finish nearly together
(divergence small). The fix is a warp (or block) per segment or a flat segmented reduction over
the contiguous values: coalesced loads, DRAM-bound at ~50 us.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

__global__ void segsum_thread_per_seg(const __half* __restrict__ x, const int* __restrict__ offsets,
                                      float* __restrict__ out, int segments) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= segments) return;
    int begin = offsets[s], end = offsets[s + 1];
    float acc = 0.f;
    for (int i = begin; i < end; ++i) acc += __half2float(x[i]);   // lanes ~128 B apart: 32 sectors per request
    out[s] = acc;
}

torch::Tensor segsum(torch::Tensor x, torch::Tensor offsets) {
    int segments = offsets.numel() - 1;   // x: fp16 values, offsets: int32 [segments + 1]
    auto out = torch::empty({segments}, x.options().dtype(torch::kFloat32));
    segsum_thread_per_seg<<<(segments + 255) / 256, 256>>>(reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
                                                           offsets.data_ptr<int>(), out.data_ptr<float>(), segments);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_segsum_thread_per_seg_fp16_cuda",
    cpp_sources="torch::Tensor segsum(torch::Tensor x, torch::Tensor offsets);",
    cuda_sources=CUDA_SRC,
    functions=["segsum"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

SEGMENTS = 2**20
MIN_LEN, MAX_LEN = 56, 72  # segment lengths, inclusive


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    lengths = torch.randint(MIN_LEN, MAX_LEN + 1, (SEGMENTS,), device="cuda", generator=g)
    offsets = torch.zeros(SEGMENTS + 1, device="cuda", dtype=torch.int64)
    offsets[1:] = lengths.cumsum(0)
    x = torch.randn(int(offsets[-1]), device="cuda", generator=g).half()
    return x, offsets.int()


def run(x, offsets):
    return module.segsum(x, offsets)


def reference(x, offsets):
    cs = torch.zeros(x.numel() + 1, device=x.device, dtype=torch.float64)
    cs[1:] = x.double().cumsum(0)
    o = offsets.long()
    return (cs[o[1:]] - cs[o[:-1]]).float()
