"""Planted bottleneck: shared-memory bank conflicts (a mel filterbank where each lane reads its own frame's row).

Applies 32 triangular mel-style filters (centres 4m + 2, half-width 4 bins: 7 taps each) to a power
spectrogram of 524,288 frames x 128 bins (fp32, 268 MB; out 524,288 x 32, 67 MB). A block of 256
threads stages 32 frames in shared memory as s[frame][bin] (16 KB, coalesced 16-byte loads and
conflict-free 16-byte stores), then lane = frame and warp w computes mels 4w..4w+3: each of the 28
filter taps is a read of s[lane][k], i.e. 32 lanes 512 bytes apart, all in one bank: 32-way conflicts,
32 wavefronts per request. The results go out through a padded o[32][33] tile (conflict-free) with
coalesced stores. 16,384 blocks x 8 warps x 28 conflicting reads x 32 wavefronts = ~117M shared
wavefronts, ~0.9M per SM: ~0.5 ms, against ~110 us for the 335 MB at 3.05 TB/s. Occupancy is full
(20.6 KB of shared memory per block: 8 blocks per SM by threads). The hypothesis: ncu
SharedMemoryConflicts / shared load wavefronts ~32x requests, L1/shared the busiest unit, DRAM ~20%.
The fix: a row stride of 129 floats (or lane = bin, frames in a loop).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define BINS 128
#define MELS 32
#define FPB 32   // frames per block

__global__ void __launch_bounds__(256) mel_fbank_smem(const float* __restrict__ spec, float* __restrict__ out,
                                                      int frames) {
    __shared__ __align__(16) float s[FPB][BINS];   // row stride 128 floats: every row starts in bank 0
    __shared__ float o[FPB][MELS + 1];
    int f0 = blockIdx.x * FPB;
    const float4* src = reinterpret_cast<const float4*>(spec + (size_t)f0 * BINS);
    for (int q = threadIdx.x; q < FPB * BINS / 4; q += blockDim.x) {
        int f = q / (BINS / 4);
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (f0 + f < frames) v = src[q];
        reinterpret_cast<float4*>(&s[f][0])[q % (BINS / 4)] = v;
    }
    __syncthreads();
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;   // lane = frame, warp = group of 4 mels
    #pragma unroll
    for (int mm = 0; mm < 4; ++mm) {
        int m = warp * 4 + mm;
        int c = 4 * m + 2;
        float acc = 0.f;
        #pragma unroll
        for (int dk = -3; dk <= 3; ++dk) {
            int k = c + dk;
            if (k >= 0 && k < BINS) acc += (1.f - 0.25f * fabsf((float)dk)) * s[lane][k];
        }
        o[lane][m] = acc;
    }
    __syncthreads();
    for (int q = threadIdx.x; q < FPB * MELS; q += blockDim.x) {
        int f = q / MELS;
        if (f0 + f < frames) out[(size_t)(f0 + f) * MELS + q % MELS] = o[f][q % MELS];
    }
}

torch::Tensor mel_fbank(torch::Tensor spec) {
    TORCH_CHECK(spec.dim() == 2 && spec.size(1) == BINS && spec.scalar_type() == torch::kFloat && spec.is_contiguous());
    int frames = spec.size(0);
    auto out = torch::empty({frames, MELS}, spec.options());
    mel_fbank_smem<<<(frames + FPB - 1) / FPB, 256>>>(spec.data_ptr<float>(), out.data_ptr<float>(), frames);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_mel_fbank_smem_conflict_fp32_cuda",
    cpp_sources="torch::Tensor mel_fbank(torch::Tensor spec);",
    cuda_sources=CUDA_SRC,
    functions=["mel_fbank"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

FRAMES = 1 << 19
BINS = 128
MELS = 32


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    spec = torch.rand(FRAMES, BINS, device="cuda", generator=g) ** 2  # power spectrum
    return (spec,)


def run(spec):
    return module.mel_fbank(spec)


def filterbank(device):
    k = torch.arange(BINS, device=device, dtype=torch.float32)[None, :]
    c = (4 * torch.arange(MELS, device=device, dtype=torch.float32) + 2)[:, None]
    return (1.0 - 0.25 * (k - c).abs()).clamp_min(0.0)  # [MELS, BINS], 7 nonzero taps per mel


def reference(spec):
    return spec @ filterbank(spec.device).t()
