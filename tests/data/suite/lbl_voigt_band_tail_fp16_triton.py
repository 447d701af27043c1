"""Planted bottleneck: tail effect (1.09 waves of long, equal 32-warp programs: 24 SMs run a second wave alone).

Line-by-line (LBL) absorption spectrum of a gas cell, the inner loop of HITRAN-based radiative-transfer
and retrieval codes: 294,912 wavenumber points (a 2,200-2,495 cm^-1 band at 0.001 cm^-1) and 2,048
spectral lines (centre relative to the band start, strength x 1e20, Lorentz and Doppler half-widths;
fp32 [4, 2048]), each line a pseudo-Voigt profile (Lorentzian + Gaussian mixed by eta(gammaL /
gammaD)), no wing cut-off within the band; the optical depth tau(nu) = column * sum_lines S f(nu - nu0)
is stored in fp16 (an absorbance-like quantity, 0-12). One wavenumber point per thread, programs of
1,024 points (32 warps), every program loops over all 2,048 lines (~30-50 instructions per point-line,
the per-line widths recomputed by every thread): 288 equal programs. Triton/ptxas (offline, sm_90a):
26 registers, so 2 programs fit per SM (64 warps), one wave is 264 programs and the grid is 1.09 waves:
24 programs run in a second wave on 24 SMs while the other 108 idle, for the time of a whole program
(a lone program runs at most ~2x faster than two sharing the SM).
The hypothesis: tail_effect: ncu's Tail Effect rule (1.09 waves, est. up to ~45%), SM active cycles
~1.3-1.5x higher on 24 SMs than on the others, SM% ~65-75% averaged over the SMs while the busy ones
issue ~85-95% (FMA + XU: an ex2 and reciprocals per point-line), DRAM ~0%, ~0.7-1.5 ms. The fix:
size the programs so that the grid is whole waves (e.g. 528 programs of 558-559 points = 2.0 waves),
or a persistent grid of 264 programs looping over point blocks.
"""

import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
POINTS = 288 * 1024
LINES = 2048
BLOCK = 1024
NU0 = 2200.0
DNU = 0.001
COLUMN = 2.5e20          # molecules / cm^2
LN2 = math.log(2.0)


@triton.jit
def lbl_voigt_kernel(line_ptr, tau_ptr, npts, nlines, dnu, column, ln2, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < npts
    nu = i.to(tl.float32) * dnu                       # relative to the band start NU0
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for l in range(0, nlines):
        c = tl.load(line_ptr + l)                     # line centre - NU0, cm^-1
        s = tl.load(line_ptr + nlines + l)           # strength x 1e20, cm / molecule
        gl = tl.load(line_ptr + 2 * nlines + l)      # Lorentz HWHM
        gd = tl.load(line_ptr + 3 * nlines + l)      # Doppler HWHM
        fv = 0.5346 * gl + tl.sqrt(0.2166 * gl * gl + gd * gd)    # Olivero-Longbothum Voigt width
        r = gl / fv
        eta = r * (1.36603 - r * (0.47719 - r * 0.11116))
        x = nu - c
        lor = (0.3183099 * fv) / (x * x + fv * fv)
        gau = (0.4697186 / fv) * tl.exp(-ln2 * x * x / (fv * fv))
        acc += s * (eta * lor + (1.0 - eta) * gau)
    tl.store(tau_ptr + i, (acc * (column * 1e-20)).to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    span = POINTS * DNU
    centre = -2.0 + (span + 4.0) * torch.rand(LINES, device=DEVICE, generator=g)              # relative to NU0
    strength = 0.6 * 10.0 ** (-3.0 * torch.rand(LINES, device=DEVICE, generator=g))          # S x 1e20
    gam_l = 0.02 + 0.08 * torch.rand(LINES, device=DEVICE, generator=g)           # pressure broadening
    gam_d = 0.002 + 0.003 * torch.rand(LINES, device=DEVICE, generator=g)
    lines = torch.stack([centre, strength, gam_l, gam_d]).float()                   # [4, LINES]
    return (lines.contiguous(),)


def run(lines):
    nlines = lines.shape[1]
    tau = torch.empty(POINTS, device=lines.device, dtype=torch.float16)
    lbl_voigt_kernel[(triton.cdiv(POINTS, BLOCK),)](lines, tau, POINTS, nlines, DNU, COLUMN, LN2,
                                                   BLOCK=BLOCK, num_warps=32)
    return tau


def reference(lines):
    ln = lines.double()
    nu = torch.arange(POINTS, device=lines.device, dtype=torch.float64) * DNU
    tau = torch.zeros(POINTS, device=lines.device, dtype=torch.float64)
    for l0 in range(0, ln.shape[1], 32):
        c, s, gl, gd = (ln[k, l0:l0 + 32][None] for k in range(4))
        fv = 0.5346 * gl + torch.sqrt(0.2166 * gl * gl + gd * gd)
        r = gl / fv
        eta = r * (1.36603 - r * (0.47719 - r * 0.11116))
        x = nu[:, None] - c
        lor = (1.0 / math.pi) * fv / (x * x + fv * fv)
        gau = (math.sqrt(LN2 / math.pi) / fv) * torch.exp(-LN2 * x * x / (fv * fv))
        tau += (s * (eta * lor + (1.0 - eta) * gau)).sum(dim=1)
    return (tau * (COLUMN * 1e-20)).to(torch.float16)
