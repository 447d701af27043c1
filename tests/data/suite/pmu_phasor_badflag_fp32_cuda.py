"""Planted bottleneck: near roof (near miss for warp_divergence: the bad-data branch is a predicated move).

Synchrophasor (PMU) stream conditioning at a grid control centre: 33,554,432 phasor samples (2,048
PMUs x 16,384 frames at 60 fps), complex voltage phasor as float2 (re, im) plus the C37.118 STAT byte
(uint8; bit 0x40 "data invalid" set on ~2% of samples, scattered). Per sample: magnitude hypotf and
angle atan2f (fp32 out, planar [2, N]); invalid samples are marked with magnitude -1 and angle 0 by
`if (stat & 0x40) { mag = -1; ang = 0; }`. The source has a data-dependent branch that ~48% of warps
take for a lane or two, but its body is two moves: nvcc predicates it (no divergent control flow).
One sample per thread, 8-byte vector loads, 131,072 blocks of 256. Bytes: 8 + 1 in, 8 out per sample
= 570 MB (~187 us at 3.05 TB/s); atan2f is ~40 instructions per sample, well below the SM roof.
The hypothesis: near_roof: DRAM ~85-92% with DRAM bytes ~1.0x needed, ~190-220 us, no real
divergence (~31-32 active threads per instruction; ncu may count the predicated-off lanes).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__global__ void pmu_phasor(const float2* __restrict__ ph, const uint8_t* __restrict__ stat,
                           float* __restrict__ out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 v = ph[i];
    float mag = hypotf(v.x, v.y);
    float ang = atan2f(v.y, v.x);
    if (stat[i] & 0x40) {        // C37.118 STAT: data invalid
        mag = -1.0f;
        ang = 0.0f;
    }
    out[i] = mag;
    out[n + i] = ang;
}

torch::Tensor phasor(torch::Tensor ph, torch::Tensor stat) {
    TORCH_CHECK(ph.dim() == 2 && ph.size(1) == 2 && ph.scalar_type() == torch::kFloat && ph.is_contiguous());
    TORCH_CHECK(stat.scalar_type() == torch::kByte && stat.is_contiguous() && stat.numel() == ph.size(0));
    long n = ph.size(0);
    auto out = torch::empty({2, n}, ph.options());
    pmu_phasor<<<(unsigned)((n + 255) / 256), 256>>>(reinterpret_cast<const float2*>(ph.data_ptr<float>()),
                                                     stat.data_ptr<uint8_t>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_pmu_phasor_badflag_fp32_cuda",
    cpp_sources="torch::Tensor phasor(torch::Tensor ph, torch::Tensor stat);",
    cuda_sources=CUDA_SRC,
    functions=["phasor"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

N = 1 << 25


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    mag = 1.0 + 0.02 * torch.randn(N, device="cuda", generator=g)               # per unit
    ang = (torch.rand(N, device="cuda", generator=g) * 2.0 - 1.0) * 3.14159
    ph = torch.stack([mag * torch.cos(ang), mag * torch.sin(ang)], dim=1)
    bad = torch.rand(N, device="cuda", generator=g) < 0.02
    stat = torch.where(bad, 0x40, 0x00).to(torch.uint8) | torch.randint(0, 2, (N,), device="cuda",
                                                                         generator=g).to(torch.uint8)
    return ph.contiguous(), stat.contiguous()


def run(ph, stat):
    return module.phasor(ph, stat)


def reference(ph, stat):
    re, im = ph.double().unbind(1)
    bad = (stat & 0x40) != 0
    mag = torch.where(bad, -1.0, torch.hypot(re, im))
    ang = torch.where(bad, 0.0, torch.atan2(im, re))
    return torch.stack([mag, ang]).float()
