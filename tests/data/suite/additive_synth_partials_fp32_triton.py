"""Planted bottleneck: compute bound (additive synthesis: 64 sine partials summed per output sample).

Renders 4,194,304 samples (87 s at 48 kHz) of a tone made of 64 partials with integer frequencies
(55..20,000 Hz) and amplitudes: out[t] = sum_k a_k sin(2 pi ((f_k (t mod 48000)) mod 48000) / 48000).
The phase is reduced exactly in int32 (f_k * 47,999 < 2^31) so the fp32 angle is in [0, 2 pi). Each
program renders 1,024 samples (4 warps) and loops over the partials, loading two scalars per partial:
per sample and partial an integer multiply-modulo (IMAD.HI / shifts), an int->float conversion, a
sine (libdevice-style range reduction and polynomial: ~20-30 FMA/ALU instructions, or the SFU) and an
FMA: ~268M sines, ~8-10G thread instructions, ~0.25-0.4 ms at 132 SMs x 128 lanes x ~1.8 GHz; the
only DRAM traffic is the 16.8 MB written (~6 us). The hypothesis: SM% >= 80 with the FMA/ALU (or XU)
pipe busiest, MEM% < 10. Faster means fewer instructions per sine (a phase-increment recurrence), not
better memory access.
"""

import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 22
PARTIALS = 64
SR = 48000
BLOCK = 1024
TOLERANCE = 1e-4  # the GPU's sine and torch's may differ by an ulp or two per partial


@triton.jit
def additive_synth_kernel(freq_ptr, amp_ptr, out_ptr, n, npartials, sr, scale, BLOCK: tl.constexpr):
    t = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = t < n
    tm = t % sr
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(npartials):
        f = tl.load(freq_ptr + k)
        a = tl.load(amp_ptr + k)
        idx = (f * tm) % sr
        acc += a * tl.sin(idx.to(tl.float32) * scale)
    tl.store(out_ptr + t, acc, mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    freq = torch.randint(55, 20001, (PARTIALS,), device=DEVICE, generator=g, dtype=torch.int32)
    amp = torch.rand(PARTIALS, device=DEVICE, generator=g) / torch.arange(1, PARTIALS + 1, device=DEVICE)
    return freq, amp


def run(freq, amp):
    out = torch.empty(N, device=freq.device, dtype=torch.float32)
    additive_synth_kernel[(triton.cdiv(N, BLOCK),)](
        freq, amp, out, N, freq.numel(), SR, 2.0 * math.pi / SR, BLOCK=BLOCK, num_warps=4
    )
    return out


def reference(freq, amp):
    tm = torch.arange(N, device=freq.device, dtype=torch.int64) % SR
    out = torch.zeros(N, device=freq.device, dtype=torch.float32)
    scale = torch.tensor(2.0 * math.pi / SR, dtype=torch.float32)
    for k in range(freq.numel()):
        idx = (int(freq[k]) * tm) % SR
        out += amp[k] * torch.sin(idx.float() * scale.to(freq.device))
    return out
