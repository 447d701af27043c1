"""Planted bottleneck: tensor cores unused (a short-time power spectrum as a direct DFT on the FP32 pipe).

Power spectrogram of a 4.2M-sample fp16 signal: 16,384 frames of 512 samples (hop 256), each multiplied
by a Hann-windowed cosine and sine basis (two fp16 [512, 256] tables, bins 0..255), then |re|^2 + |im|^2
per bin. That is a matrix product, [16,384 x 512] x [512 x 512] (cos and sin side by side): 8.6 GFLOP.
The kernel is a classic SIMT GEMM: 128-frame x 64-bin tiles, 256 threads, each thread accumulating 8
frames x 4 bins x (re, im) = 64 fp32 sums in registers from shared-memory tiles (the frames are gathered
straight from the signal, 16 samples per step, converted to fp32 in shared memory); per sample step a
warp reads 6 shared wavefronts for 64 FFMA per thread. At ~50 TFLOP/s of FP32 FMA that is ~170 us; the
same product on the tensor cores (fp16 in, fp32 accumulate: mma / wgmma) would take ~10-15 us. Traffic
is small (8 MB of signal, the 0.5 MB basis from L2, 16 MB of fp32 output). The hypothesis: tensor pipe
idle (all sm__ops_path_tensor_* at 0) with the FMA pipe busy and SM% high. nvcc 13 (sm_90): 121
registers, 0 spills, 16.6 KB of shared memory; the main loop is 1,024 FFMA, 64 LDS, 16 LDG and 16 STS
per 16-sample step. __launch_bounds__(256, 2) gives 2 blocks (16 warps) per SM: a TheoreticalOccupancy
lure that more warps would not fix (each warp has 64 independent FMAs per step).
"""

import math

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>
#define TF 128       // frames per block tile
#define TB 64        // bins per block tile
#define TK 16        // samples per step
#define APITCH (TF + 4)

__global__ void __launch_bounds__(256, 2) stft_power_simt(const __half* __restrict__ signal, const __half* __restrict__ cosb,
                                                          const __half* __restrict__ sinb, float* __restrict__ power,
                                                          int frames, int nfft, int bins, int hop) {
    __shared__ __align__(16) float As[TK][APITCH];   // [sample][frame]
    __shared__ __align__(16) float Cs[TK][TB];       // [sample][bin]
    __shared__ __align__(16) float Ss[TK][TB];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;   // 4 bins x 8 frames per thread
    int f0 = blockIdx.y * TF, b0 = blockIdx.x * TB;
    int ak = threadIdx.x % TK, af = threadIdx.x / TK;   // this thread's sample / frame in the frames tile
    int bb = threadIdx.x % TB, bk = threadIdx.x / TB;   // its bin / sample in the basis tiles
    const __half* sig = signal + (size_t)(f0 + af) * hop + ak;
    const __half* cb = cosb + (size_t)bk * bins + b0 + bb;
    const __half* sb = sinb + (size_t)bk * bins + b0 + bb;
    float re[8][4], im[8][4];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j) { re[i][j] = 0.f; im[i][j] = 0.f; }
    for (int n0 = 0; n0 < nfft; n0 += TK) {
        // frames tile: As[k][f] = signal[(f0 + f) * hop + n0 + k]  (16 consecutive samples per frame)
        #pragma unroll
        for (int p = 0; p < TF * TK / 256; ++p)
            As[ak][p * 16 + af] = __half2float(sig[(size_t)p * 16 * hop + n0]);
        // basis tiles: Cs[k][b] = cos[n0 + k][b0 + b]
        #pragma unroll
        for (int p = 0; p < TB * TK / 256; ++p) {
            Cs[p * 4 + bk][bb] = __half2float(cb[(size_t)(n0 + p * 4) * bins]);
            Ss[p * 4 + bk][bb] = __half2float(sb[(size_t)(n0 + p * 4) * bins]);
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TK; ++k) {
            float4 a0 = *reinterpret_cast<const float4*>(&As[k][ty * 8]);
            float4 a1 = *reinterpret_cast<const float4*>(&As[k][ty * 8 + 4]);
            float4 c = *reinterpret_cast<const float4*>(&Cs[k][tx * 4]);
            float4 s = *reinterpret_cast<const float4*>(&Ss[k][tx * 4]);
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float cc[4] = {c.x, c.y, c.z, c.w}, ss[4] = {s.x, s.y, s.z, s.w};
            #pragma unroll
            for (int i = 0; i < 8; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j) {
                    re[i][j] = fmaf(a[i], cc[j], re[i][j]);
                    im[i][j] = fmaf(a[i], ss[j], im[i][j]);
                }
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        float4 o = make_float4(re[i][0] * re[i][0] + im[i][0] * im[i][0], re[i][1] * re[i][1] + im[i][1] * im[i][1],
                               re[i][2] * re[i][2] + im[i][2] * im[i][2], re[i][3] * re[i][3] + im[i][3] * im[i][3]);
        *reinterpret_cast<float4*>(&power[(size_t)(f0 + ty * 8 + i) * bins + b0 + tx * 4]) = o;
    }
}

torch::Tensor stft_power(torch::Tensor signal, torch::Tensor cosb, torch::Tensor sinb, int64_t frames, int64_t hop) {
    int nfft = cosb.size(0), bins = cosb.size(1);
    TORCH_CHECK(frames % TF == 0 && bins % TB == 0 && nfft % TK == 0);
    TORCH_CHECK(signal.numel() >= (frames - 1) * hop + nfft);
    auto power = torch::empty({frames, bins}, signal.options().dtype(torch::kFloat32));
    dim3 grid(bins / TB, frames / TF);
    stft_power_simt<<<grid, 256>>>(reinterpret_cast<const __half*>(signal.data_ptr<at::Half>()),
                                   reinterpret_cast<const __half*>(cosb.data_ptr<at::Half>()),
                                   reinterpret_cast<const __half*>(sinb.data_ptr<at::Half>()),
                                   power.data_ptr<float>(), (int)frames, nfft, bins, (int)hop);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return power;
}
"""

module = load_inline(
    "kls_stft_dft_simt_fp16_cuda",
    cpp_sources="torch::Tensor stft_power(torch::Tensor signal, torch::Tensor cosb, torch::Tensor sinb, int64_t frames, "
    "int64_t hop);",
    cuda_sources=CUDA_SRC,
    functions=["stft_power"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

FRAMES = 16384
NFFT = 512
HOP = 256
BINS = 256  # bins 0..255 (the Nyquist bin is dropped)
TOLERANCE = 1e-4  # fp32 sums of 512 products, against a float64 reference


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    n = (FRAMES - 1) * HOP + NFFT
    t = torch.arange(n, device="cuda", dtype=torch.float64) / 16000.0
    chirp = torch.sin(2 * math.pi * (200.0 + 1500.0 * t) * t)  # a rising tone plus noise
    signal = (0.5 * chirp + 0.1 * torch.randn(n, device="cuda", generator=g, dtype=torch.float64)).half()
    k = torch.arange(NFFT, device="cuda", dtype=torch.float64)
    window = 0.5 - 0.5 * torch.cos(2 * math.pi * k / NFFT)  # periodic Hann
    angle = 2 * math.pi * k[:, None] * torch.arange(BINS, device="cuda", dtype=torch.float64)[None, :] / NFFT
    cosb = (window[:, None] * torch.cos(angle)).half().contiguous()
    sinb = (-window[:, None] * torch.sin(angle)).half().contiguous()
    return signal, cosb, sinb


def run(signal, cosb, sinb):
    return module.stft_power(signal, cosb, sinb, FRAMES, HOP)


def reference(signal, cosb, sinb):
    frames = signal.double().unfold(0, NFFT, HOP)[:FRAMES]  # [FRAMES, NFFT]
    re = frames @ cosb.double()
    im = frames @ sinb.double()
    return (re * re + im * im).float()
