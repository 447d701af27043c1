"""Planted bottleneck: memory bound through L1 (a 64-tap FIR that re-reads its input once per tap), a near miss for compute bound.

Direct-form FIR low-pass of a 32-channel interleaved fp32 recording (1,048,576 frames x 32 channels,
'valid' correlation per channel, y[t, c] = sum_k h[k] x[t + k, c]): each program (8 warps) takes 32
frames x 32 channels and loops over the 64 taps, loading the input tile shifted by k frames and doing
one FMA per output. The source reads as FMA-heavy (64 FMA per output), but every FMA comes with its own
load: the shifted tiles overlap, so the input is re-read 64 times, from L1 (a program's 95 frames x 128
B = 12 KB), not from DRAM. Per warp and tap (triton 3.6, sm_90: 32 registers, 0 spills, no shared
memory): one 16-byte load per thread (512 contiguous, aligned bytes: 4 L1 wavefronts) and the tap's
broadcast load (1 wavefront) against 4 FFMA and ~3 other instructions (~2 issue cycles of the SM per
warp): L1 needs ~2.7x the cycles the issue slots need. 32,768 programs x 8 warps x 64 taps x 5
wavefronts / 132 SMs = ~0.64M L1 cycles per SM, ~0.35 ms, against ~88 us for the 268 MB in and out at
3.05 TB/s (nothing uncoalesced). The hypothesis: L1 (MEM%) the busiest unit, ~90%, SM% ~35-45%, DRAM
~25%: memory bound through a level that re-reads the same bytes. Keeping a sliding window of the input
in registers (each thread owning several consecutive frames of a channel, one new load per tap and
output block) is the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
FRAMES = 1 << 20  # output frames
CHANNELS = 32
TAPS = 64
BLOCK_T = 32
TOLERANCE = 1e-5


@triton.jit
def fir_direct_kernel(x_ptr, h_ptr, y_ptr, frames, taps, C: tl.constexpr, BLOCK_T: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs = t[:, None] * C + tl.arange(0, C)[None, :]  # [BLOCK_T, C] interleaved samples
    mask = t[:, None] < frames
    acc = tl.zeros([BLOCK_T, C], dtype=tl.float32)
    for k in range(taps):
        hk = tl.load(h_ptr + k)
        xk = tl.load(x_ptr + offs + k * C, mask=mask, other=0.0)  # the input tile shifted by k frames
        acc += hk * xk
    tl.store(y_ptr + offs, acc, mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    x = torch.randn(FRAMES + TAPS - 1, CHANNELS, device=DEVICE, generator=g)
    k = torch.arange(TAPS, device=DEVICE, dtype=torch.float64) - (TAPS - 1) / 2
    hamming = 0.54 + 0.46 * torch.cos(2 * torch.pi * k / TAPS)
    h = (torch.sinc(0.25 * k) * 0.25 * hamming).float()  # windowed-sinc low-pass, cutoff 1/8 of the sample rate
    return x, h


def run(x, h):
    frames = x.shape[0] - h.numel() + 1
    y = torch.empty(frames, x.shape[1], device=x.device, dtype=torch.float32)
    fir_direct_kernel[(triton.cdiv(frames, BLOCK_T),)](x, h, y, frames, h.numel(), C=x.shape[1], BLOCK_T=BLOCK_T, num_warps=8)
    return y


def reference(x, h):
    c = x.shape[1]
    w = h.double()[None, None, :].expand(c, 1, -1)
    return torch.nn.functional.conv1d(x.double().t()[None], w, groups=c)[0].t().float()
