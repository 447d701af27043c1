"""Planted bottleneck: tensor cores unused (batch-hard triplet mining: a 16,384 x 16,384 x 64 Gram matrix in FP32 FMAs).

Batch-hard triplet loss over 16,384 fp32 embeddings of 64 dimensions (256 classes x 64 samples): for
each anchor, the largest squared distance to a same-class sample and the smallest to another class,
loss = relu(d_pos - d_neg + 1). Distances come from the Gram matrix, d = |a|^2 + |b|^2 - 2 a.b: a
16,384 x 16,384 x 64 matrix product (17.2G FMA) done as a classic SIMT tiling: a block of 256 threads
owns 64 anchors and a 2,048-column slice (grid 256 x 8 = 2,048 blocks, ~3.9 waves), stages 64 x 16 tiles
of both sides in padded shared memory ([64][17]: conflict-free reads) and each thread accumulates a 4 x
4 tile with FFMA, then folds it into running max/min per anchor; the 8 slices meet through one
atomicMax / atomicMin per anchor and slice (non-negative floats compare as ints). 17.2G FMA at H100's
~33.5T FP32 FMA/s is >= 0.5 ms (more with the 2 shared loads per 4 FMA); with mma.sync / wgmma in TF32
or bf16 the product would be ~10-20x faster. The hypothesis: FMA pipe (or LSU / shared) busy, SM% high,
every sm__ops_path_tensor_* counter 0: a matrix product without tensor cores. The mining and the norms
(a separate small torch kernel before) are not profiled.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define TA 64
#define TB 64
#define KC 16

__global__ void __launch_bounds__(256) triplet_hardmine_simt(const float* __restrict__ emb, const float* __restrict__ norms,
                                                             const int* __restrict__ labels, int* __restrict__ hp_bits,
                                                             int* __restrict__ hn_bits, int n, int d, int cols_per_split) {
    __shared__ float As[TA][KC + 1];
    __shared__ float Bs[TB][KC + 1];
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    int a0 = blockIdx.x * TA;
    int c_begin = blockIdx.y * cols_per_split;
    int c_end = min(n, c_begin + cols_per_split);
    float na[4], hp[4], hn[4];
    int la[4];
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        int a = a0 + ty + 16 * i;   // rows ty, ty+16, ty+32, ty+48 of the anchor tile
        na[i] = norms[a];
        la[i] = labels[a];
        hp[i] = 0.f;
        hn[i] = 3.402823466e38f;
    }
    for (int c0 = c_begin; c0 < c_end; c0 += TB) {
        float acc[4][4];
        #pragma unroll
        for (int i = 0; i < 4; ++i)
            #pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
        for (int k0 = 0; k0 < d; k0 += KC) {
            #pragma unroll
            for (int q = 0; q < 4; ++q) {
                int e = threadIdx.x + 256 * q, row = e >> 4, kk = e & 15;
                As[row][kk] = emb[(size_t)(a0 + row) * d + k0 + kk];
                Bs[row][kk] = emb[(size_t)(c0 + row) * d + k0 + kk];
            }
            __syncthreads();
            #pragma unroll
            for (int kk = 0; kk < KC; ++kk) {
                float av[4], bv[4];
                #pragma unroll
                for (int i = 0; i < 4; ++i) av[i] = As[ty + 16 * i][kk];
                #pragma unroll
                for (int j = 0; j < 4; ++j) bv[j] = Bs[tx + 16 * j][kk];
                #pragma unroll
                for (int i = 0; i < 4; ++i)
                    #pragma unroll
                    for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
            __syncthreads();
        }
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            int c = c0 + tx + 16 * j;
            float nb = norms[c];
            int lb = labels[c];
            #pragma unroll
            for (int i = 0; i < 4; ++i) {
                float dd = fmaxf(na[i] + nb - 2.f * acc[i][j], 0.f);
                if (lb == la[i]) hp[i] = fmaxf(hp[i], dd);
                else hn[i] = fminf(hn[i], dd);
            }
        }
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        #pragma unroll
        for (int off = 8; off > 0; off >>= 1) {   // the 16 tx lanes of one anchor row
            hp[i] = fmaxf(hp[i], __shfl_xor_sync(0xffffffffu, hp[i], off));
            hn[i] = fminf(hn[i], __shfl_xor_sync(0xffffffffu, hn[i], off));
        }
        if (tx == 0) {
            int a = a0 + ty + 16 * i;
            atomicMax(&hp_bits[a], __float_as_int(hp[i]));   // non-negative floats order as ints
            atomicMin(&hn_bits[a], __float_as_int(hn[i]));
        }
    }
}

void triplet_mine(torch::Tensor emb, torch::Tensor norms, torch::Tensor labels, torch::Tensor hp_bits,
                  torch::Tensor hn_bits, int64_t splits) {
    int n = emb.size(0), d = emb.size(1);
    TORCH_CHECK(n % TA == 0 && d % KC == 0 && n % (splits * TB) == 0 && emb.is_contiguous());
    int cols = (int)(n / splits);
    dim3 grid(n / TA, (unsigned int)splits);
    triplet_hardmine_simt<<<grid, 256>>>(emb.data_ptr<float>(), norms.data_ptr<float>(), labels.data_ptr<int>(),
                                         hp_bits.data_ptr<int>(), hn_bits.data_ptr<int>(), n, d, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

module = load_inline(
    "kls_triplet_hardmine_simt_fp32_cuda",
    cpp_sources="void triplet_mine(torch::Tensor emb, torch::Tensor norms, torch::Tensor labels, torch::Tensor hp_bits, "
    "torch::Tensor hn_bits, int64_t splits);",
    cuda_sources=CUDA_SRC,
    functions=["triplet_mine"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

N = 16384
D = 64
CLASSES = 256
SPLITS = 8
MARGIN = 1.0
CHUNK = 2048  # anchors per reference chunk
TOLERANCE = 1e-4  # the Gram matrix summed in another order
FLT_MAX_BITS = 0x7F7FFFFF


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    labels = torch.randperm(N, device="cuda", generator=g).int() % CLASSES
    centres = torch.randn(CLASSES, D, device="cuda", generator=g) * 0.5
    emb = centres[labels.long()] + torch.randn(N, D, device="cuda", generator=g)
    return emb.contiguous(), labels


def run(emb, labels):
    norms = (emb * emb).sum(1)
    hp = torch.zeros(emb.shape[0], device=emb.device, dtype=torch.int32)
    hn = torch.full((emb.shape[0],), FLT_MAX_BITS, device=emb.device, dtype=torch.int32)
    module.triplet_mine(emb, norms, labels, hp, hn, SPLITS)
    return torch.relu(hp.view(torch.float32) - hn.view(torch.float32) + MARGIN)


def reference(emb, labels):
    norms = (emb * emb).sum(1)
    out = torch.empty(emb.shape[0], device=emb.device, dtype=torch.float32)
    for a0 in range(0, emb.shape[0], CHUNK):
        a = emb[a0 : a0 + CHUNK]
        dist = (norms[a0 : a0 + CHUNK, None] + norms[None, :] - 2.0 * (a @ emb.t())).clamp_min(0.0)
        same = labels[a0 : a0 + CHUNK, None] == labels[None, :]
        hp = torch.where(same, dist, torch.zeros_like(dist)).amax(1)
        hn = torch.where(same, torch.full_like(dist, float("inf")), dist).amin(1)
        out[a0 : a0 + CHUNK] = torch.relu(hp - hn + MARGIN)
        del dist, same
    return out
