"""Planted bottleneck: near roof (near miss for uncoalesced_global: stride-4 AoS loads that L1 absorbs).

Beam-to-instrument coordinate transform of acoustic Doppler current profiler (ADCP) data, the first
step of any ocean-current processing chain: 67,108,864 (ensemble, depth cell) records of 4 Janus beam
velocities (20-degree beams, fp16, stored as the instrument writes them: [N, 4], beams interleaved,
537 MB) -> u = (b1 - b2) / (2 sin t), v = (b4 - b3) / (2 sin t), w = (b1 + b2 + b3 + b4) / (4 cos t) and
the error velocity e = (b1 + b2 - b3 - b4) / (2 sqrt 2 sin t), written planar ([4, N] fp16, 537 MB).
The four beams are read as four scalar loads with a 4-element (8-byte) stride, so each load request
uses 2 of every 8 bytes it touches (ncu will see 25% sector use per request), but the four loads of a
program touch the same lines back to back: L1 serves three of them, and DRAM reads each byte once.
BLOCK 2,048, 4 warps, 32,768 programs.
The hypothesis: near_roof: DRAM ~80-90% of peak, DRAM bytes ~1.0x the 1.07 GB needed, ~350-400 us
against ~352 us at 3.05 TB/s; L1 hit ~75%; ncu's uncoalesced-access rule may fire on the loads
although the sectors are reused from L1: loading [BLOCK, 4] tiles (8-byte vectors) would only trim
L1 wavefronts.
"""

import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 26
BLOCK = 2048
THETA = math.radians(20.0)


@triton.jit
def adcp_beam_kernel(b_ptr, out_ptr, n, c_uv, c_w, c_e, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    b1 = tl.load(b_ptr + offs * 4, mask=m, other=0.0).to(tl.float32)
    b2 = tl.load(b_ptr + offs * 4 + 1, mask=m, other=0.0).to(tl.float32)
    b3 = tl.load(b_ptr + offs * 4 + 2, mask=m, other=0.0).to(tl.float32)
    b4 = tl.load(b_ptr + offs * 4 + 3, mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, ((b1 - b2) * c_uv).to(tl.float16), mask=m)
    tl.store(out_ptr + n + offs, ((b4 - b3) * c_uv).to(tl.float16), mask=m)
    tl.store(out_ptr + 2 * n + offs, ((b1 + b2 + b3 + b4) * c_w).to(tl.float16), mask=m)
    tl.store(out_ptr + 3 * n + offs, ((b1 + b2 - b3 - b4) * c_e).to(tl.float16), mask=m)


def _coeffs():
    s, c = math.sin(THETA), math.cos(THETA)
    return 1.0 / (2.0 * s), 1.0 / (4.0 * c), 1.0 / (2.0 * math.sqrt(2.0) * s)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    uvw = torch.randn(N, 3, device=DEVICE, generator=g) * torch.tensor([0.5, 0.5, 0.05], device=DEVICE)
    s, c = math.sin(THETA), math.cos(THETA)
    b = torch.stack([uvw[:, 0] * s + uvw[:, 2] * c, -uvw[:, 0] * s + uvw[:, 2] * c,
                     -uvw[:, 1] * s + uvw[:, 2] * c, uvw[:, 1] * s + uvw[:, 2] * c], dim=1)
    b = b + 0.01 * torch.randn(N, 4, device=DEVICE, generator=g)                 # beam noise, m/s
    return (b.to(torch.float16).contiguous(),)


def run(b):
    n = b.shape[0]
    out = torch.empty((4, n), device=b.device, dtype=torch.float16)
    c_uv, c_w, c_e = _coeffs()
    adcp_beam_kernel[(triton.cdiv(n, BLOCK),)](b, out, n, c_uv, c_w, c_e, BLOCK=BLOCK, num_warps=4)
    return out


def reference(b):
    c_uv, c_w, c_e = _coeffs()
    b1, b2, b3, b4 = b.double().unbind(1)
    return torch.stack([(b1 - b2) * c_uv, (b4 - b3) * c_uv, (b1 + b2 + b3 + b4) * c_w,
                        (b1 + b2 - b3 - b4) * c_e]).to(torch.float16)
