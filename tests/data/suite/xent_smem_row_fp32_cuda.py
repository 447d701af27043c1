"""Planted bottleneck: low occupancy, limited by shared memory (cross-entropy staging a whole row on chip).

Per-row cross-entropy loss over 2,048 rows of a 32,768-word vocabulary in fp32 (128 KB per row,
256 MB). To read the logits from DRAM only once, each 128-thread block copies its whole row into
128 KB of dynamic shared memory (taking the max on the way), then sums exp(x - max) from shared
memory and reads x[label] there. Two such blocks do not fit in an SM's 228 KB, so each SM runs one
block: 4 warps, 6.25% of the 64 it could hold. While it streams its row in, an SM has at most
128 threads x 16 loads (the unrolled copy loop) = 8 KB in flight, ~1 MB for the GPU, far from what
it takes to cover DRAM latency at full bandwidth; and the exp pass runs one warp per scheduler.
Each SM handles ~15.5 rows one after another: the kernel should take several times the ~90 us the
268 MB need at the DRAM roof. One pass with an online max and rescaled sum in registers (no
staging, full occupancy), or many more threads per row, fixes it.
"""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#define THREADS 128

__device__ float block_reduce(float v, float* red, bool is_max) {   // every thread gets the result
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = red[0];
    for (int i = 1; i < THREADS / 32; ++i) v = is_max ? fmaxf(v, red[i]) : v + red[i];
    __syncthreads();   // red is reused by the next reduction
    return v;
}

__global__ void __launch_bounds__(THREADS) xent_smem_row(const float* __restrict__ logits, const int64_t* __restrict__ labels,
                                                         float* __restrict__ loss, int V) {
    extern __shared__ float row[];   // the whole row: V floats (128 KB)
    __shared__ float red[THREADS / 32];
    const float* x = logits + (size_t)blockIdx.x * V;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < V; i += THREADS) {   // stream the row in, max on the way
        float v = x[i];
        row[i] = v;
        m = fmaxf(m, v);
    }
    m = block_reduce(m, red, true);   // its barrier also publishes row[]
    float s = 0.f;
    for (int i = threadIdx.x; i < V; i += THREADS) s += expf(row[i] - m);
    s = block_reduce(s, red, false);
    if (threadIdx.x == 0) loss[blockIdx.x] = logf(s) + m - row[labels[blockIdx.x]];
}

torch::Tensor xent(torch::Tensor logits, torch::Tensor labels) {
    int rows = logits.size(0), V = logits.size(1);
    auto loss = torch::empty({rows}, logits.options());
    int smem = V * sizeof(float);
    C10_CUDA_CHECK(cudaFuncSetAttribute(xent_smem_row, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    xent_smem_row<<<rows, THREADS, smem>>>(logits.data_ptr<float>(), labels.data_ptr<int64_t>(), loss.data_ptr<float>(), V);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return loss;
}
"""

module = load_inline("kls_xent_smem_row_fp32_cuda", cpp_sources="torch::Tensor xent(torch::Tensor logits, torch::Tensor labels);",
                     cuda_sources=CUDA_SRC, functions=["xent"], extra_cuda_cflags=["-O3", "-lineinfo"])

ROWS, VOCAB = 2048, 32768  # 256 MB of fp32 logits; a row is 128 KB


def make_inputs():
    torch.manual_seed(0)
    logits = torch.randn(ROWS, VOCAB, device="cuda") * 4
    labels = torch.randint(0, VOCAB, (ROWS,), device="cuda")
    return logits, labels


def run(logits, labels):
    return module.xent(logits, labels)


def reference(logits, labels):
    return torch.nn.functional.cross_entropy(logits, labels, reduction="none")
