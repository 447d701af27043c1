"""Planted bottleneck: low occupancy (block size: one-warp blocks, each rendering 256 samples of one voice).

Offline render of a wavetable synthesiser (Serum / Vital style) for a sample-library export: 4,096
voices (notes with their pitch, wavetable position, velocity and an ADSR envelope, fp32 parameters)
rendered for 16,384 samples each (0.34 s at 48 kHz) into fp16 [VOICES, SAMPLES] (134 MB). A voice
reads two adjacent frames of a 16-frame x 2,048-sample wavetable bank (128 KB, L1 / L2 resident),
interpolating linearly within and between frames, times its envelope. The renderer was written with
the audio block as the unit of work: one 32-thread block renders one 256-sample block of one voice
(8 samples per thread), 262,144 blocks. The SM holds at most 32 blocks, so at most 32 warps
(50% theoretical occupancy), and each block lives only ~1-2 us (~250 instructions per warp), so
block launch and retirement keep the achieved occupancy lower still.
The hypothesis: low_occupancy (block_size): theoretical occupancy 50% (launch__occupancy_limit_blocks
32), achieved ~25-40%, issue ~0.3-0.5 per cycle, DRAM ~20-40% (134 MB written, ~44 us of bytes),
~0.1-0.2 ms. The fix: 256-thread blocks that each render several 256-sample blocks (or a whole voice
per block, looping), giving full occupancy and long-lived warps.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

#define TABLE 2048
#define FRAMES 16
#define SEG 256

// params: [voices, 8]: phase-increment (cycles / sample), wavetable position (0..FRAMES-1), gain,
//         attack, decay, sustain level, release start, release (samples)
__global__ void __launch_bounds__(32) wavetable_voice(const float* __restrict__ table, const float* __restrict__ params,
                                                      __half* __restrict__ out, int samples) {
    int segs = samples / SEG;
    int voice = blockIdx.x / segs;
    int seg = blockIdx.x % segs;
    const float* p = params + voice * 8;
    float inc = p[0], pos = p[1], gain = p[2];
    float att = p[3], dec = p[4], sus = p[5], rel_t = p[6], rel = p[7];
    int f0 = min((int)pos, FRAMES - 2);
    float mix = pos - (float)f0;
    const float* ta = table + f0 * TABLE;
    const float* tb = ta + TABLE;
#pragma unroll
    for (int k = 0; k < SEG / 32; ++k) {
        int t = seg * SEG + k * 32 + threadIdx.x;
        float ph = (float)t * inc;
        ph -= floorf(ph);
        float fi = ph * TABLE;
        int i0 = min((int)fi, TABLE - 1);
        int i1 = (i0 + 1) & (TABLE - 1);
        float fr = fi - (float)i0;
        float a = ta[i0] + fr * (ta[i1] - ta[i0]);
        float b = tb[i0] + fr * (tb[i1] - tb[i0]);
        float s = a + mix * (b - a);
        float tf = (float)t, env;
        if (tf < att) env = tf / att;
        else if (tf < att + dec) env = 1.0f - (1.0f - sus) * (tf - att) / dec;
        else env = sus;
        if (tf >= rel_t) env *= fmaxf(0.0f, 1.0f - (tf - rel_t) / rel);
        out[(long)voice * samples + t] = __float2half_rn(gain * env * s);
    }
}

torch::Tensor render(torch::Tensor table, torch::Tensor params, int64_t samples) {
    TORCH_CHECK(table.is_cuda() && table.scalar_type() == torch::kFloat && table.numel() == TABLE * FRAMES);
    TORCH_CHECK(params.scalar_type() == torch::kFloat && params.size(1) == 8 && samples % SEG == 0);
    int voices = params.size(0);
    auto out = torch::empty({voices, samples}, table.options().dtype(torch::kHalf));
    long blocks = (long)voices * (samples / SEG);
    wavetable_voice<<<(unsigned)blocks, 32>>>(table.data_ptr<float>(), params.data_ptr<float>(),
                                              reinterpret_cast<__half*>(out.data_ptr<at::Half>()), (int)samples);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_wavetable_voice_warpblocks_fp16_cuda",
    cpp_sources="torch::Tensor render(torch::Tensor table, torch::Tensor params, int64_t samples);",
    cuda_sources=CUDA_SRC,
    functions=["render"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

VOICES = 4096
SAMPLES = 16384
TABLE = 2048
FRAMES = 16
SR = 48000.0


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    # wavetable bank: frames morph from a sine to a bright saw-like spectrum (16 partials, fading in)
    ph = torch.arange(TABLE, device="cuda", dtype=torch.float64) / TABLE
    fr = torch.arange(FRAMES, device="cuda", dtype=torch.float64)[:, None, None]
    kk = torch.arange(1, 17, device="cuda", dtype=torch.float64)[None, :, None]
    amp = torch.where(kk == 1, 1.0, (fr / (FRAMES - 1)) / kk)
    table = (amp * torch.sin(2 * torch.pi * kk * ph[None, None, :])).sum(1)
    table = (table / table.abs().amax(1, keepdim=True)).float()
    u = lambda *s: torch.rand(*s, device="cuda", generator=g)  # noqa: E731
    note = torch.randint(28, 100, (VOICES,), device="cuda", generator=g).float()
    inc = 440.0 * 2 ** ((note - 69) / 12) / SR
    params = torch.stack([inc, (FRAMES - 1) * u(VOICES), 0.1 + 0.4 * u(VOICES),
                          SR * (0.002 + 0.02 * u(VOICES)), SR * (0.05 + 0.1 * u(VOICES)), 0.3 + 0.6 * u(VOICES),
                          SAMPLES * (0.5 + 0.4 * u(VOICES)), SR * (0.02 + 0.1 * u(VOICES))], 1)
    return table.contiguous(), params.contiguous()


def run(table, params):
    return module.render(table, params, SAMPLES)


def reference(table, params):
    p = params.double()
    tb = table.double()
    t = torch.arange(SAMPLES, device=table.device, dtype=torch.float64)[None, :]
    inc, pos, gain, att, dec, sus, rel_t, rel = [p[:, k:k + 1] for k in range(8)]
    ph = t * inc
    ph = ph - torch.floor(ph)
    fi = ph * TABLE
    i0 = fi.long().clamp(max=TABLE - 1)
    i1 = (i0 + 1) % TABLE
    fr = fi - i0.double()
    f0 = pos.long().clamp(max=FRAMES - 2)
    mix = pos - f0.double()
    ta, tbb = tb[f0[:, 0]], tb[f0[:, 0] + 1]                    # [V, TABLE]
    a = ta.gather(1, i0) + fr * (ta.gather(1, i1) - ta.gather(1, i0))
    b = tbb.gather(1, i0) + fr * (tbb.gather(1, i1) - tbb.gather(1, i0))
    s = a + mix * (b - a)
    env = torch.where(t < att, t / att, torch.where(t < att + dec, 1 - (1 - sus) * (t - att) / dec, sus))
    env = torch.where(t >= rel_t, env * torch.clamp(1 - (t - rel_t) / rel, min=0.0), env)
    return (gain * env * s).to(torch.float16)
