"""Planted bottleneck: launch overhead (a discrete-ordinates transport sweep launched one wavefront at a time).

One transport sweep of a 2-D discrete-ordinates (S_N) neutron transport solver on a small 64 x 64
fuel-assembly mesh (pin-cell sized cells, fp32 total cross sections and isotropic source), 8
directions per quadrant, all 4 quadrants, diamond differencing with vacuum boundaries. A cell's
angular flux depends on its upwind x and y neighbours, so the sweep goes along the 127 anti-diagonals
(KBA wavefronts): run() makes one Triton launch per wavefront, each handling every (quadrant, angle,
cell) of that diagonal (at most 4 x 8 x 64 = 2,048 items: 1 to 8 programs of 256). The incoming face
fluxes live in two small arrays (x faces per row, y faces per column) updated in place. Total work
~0.5M cell-angle updates (~2 MB touched).
The hypothesis: launch_overhead: each kernel runs ~2-4 us on 1-8 programs (ncu's Small Grid fires on
the one profiled launch, SM% and DRAM% ~0-2%), run() ~1-3 ms for 127 launches dominated by the gaps
between them (Triton's host-side launch path, ~10-20 us each); no change inside the kernel helps.
The fix: one persistent launch that walks the diagonals with a grid-wide barrier (or a cooperative
kernel per octant), or a CUDA graph of the 127 launches, or sweeping many energy groups / source
iterations per launch.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NX = 64
NY = 64
ANG = 8            # directions per quadrant (product quadrature)
DX = 1.26          # cm (pin pitch)
DY = 1.26
BLOCK = 256


@triton.jit
def sn_wavefront_kernel(sigt_ptr, src_ptr, mu_ptr, eta_ptr, xin_ptr, yin_ptr, psi_ptr, d, i_lo, ncell,
                        NX: tl.constexpr, NY: tl.constexpr, ANG: tl.constexpr, inv_dx, inv_dy,
                        BLOCK: tl.constexpr):
    item = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = item < 4 * ANG * ncell
    q = item // (ANG * ncell)
    a = (item // ncell) % ANG
    ii = i_lo + item % ncell            # local (sweep-order) coordinates of the cell on diagonal d
    jj = d - ii
    # physical cell: quadrant q sweeps from its own corner (q & 1: right to left, q & 2: top to bottom)
    i = tl.where((q & 1) == 1, NX - 1 - ii, ii)
    j = tl.where((q & 2) == 2, NY - 1 - jj, jj)
    sigt = tl.load(sigt_ptr + j * NX + i, mask=m, other=1.0)
    s = tl.load(src_ptr + j * NX + i, mask=m, other=0.0)
    mu = tl.load(mu_ptr + a, mask=m, other=1.0)
    eta = tl.load(eta_ptr + a, mask=m, other=1.0)
    qa = q * ANG + a
    xin = tl.load(xin_ptr + qa * NY + jj, mask=m, other=0.0)
    yin = tl.load(yin_ptr + qa * NX + ii, mask=m, other=0.0)
    cx = 2.0 * mu * inv_dx
    cy = 2.0 * eta * inv_dy
    psi = (s + cx * xin + cy * yin) / (sigt + cx + cy)
    tl.store(xin_ptr + qa * NY + jj, 2.0 * psi - xin, mask=m)
    tl.store(yin_ptr + qa * NX + ii, 2.0 * psi - yin, mask=m)
    tl.store(psi_ptr + (qa * NY + j) * NX + i, psi, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    yy, xx = torch.meshgrid(torch.arange(NY, device=DEVICE), torch.arange(NX, device=DEVICE), indexing="ij")
    fuel = ((xx % 17) != 8) & ((yy % 17) != 8)                                  # guide-tube / water rows
    sigt = torch.where(fuel, 0.55, 1.25) * (1 + 0.05 * torch.rand(NY, NX, device=DEVICE, generator=g))
    src = torch.where(fuel, 1.0, 0.05) * (1 + 0.1 * torch.rand(NY, NX, device=DEVICE, generator=g))
    # product quadrature in the first quadrant: polar cosines and azimuths -> direction cosines mu, eta > 0
    az = (torch.arange(ANG, device=DEVICE, dtype=torch.float32) + 0.5) * (torch.pi / 2) / ANG
    sin_th = torch.sqrt(1 - torch.linspace(0.2, 0.9, ANG, device=DEVICE) ** 2)
    mu = (sin_th * torch.cos(az)).contiguous()
    eta = (sin_th * torch.sin(az)).contiguous()
    return sigt.float().contiguous(), src.float().contiguous(), mu, eta


def run(sigt, src, mu, eta):
    xin = torch.zeros(4 * ANG * NY, device=sigt.device, dtype=torch.float32)
    yin = torch.zeros(4 * ANG * NX, device=sigt.device, dtype=torch.float32)
    psi = torch.empty(4, ANG, NY, NX, device=sigt.device, dtype=torch.float32)
    for d in range(NX + NY - 1):
        i_lo, i_hi = max(0, d - NY + 1), min(d, NX - 1)
        ncell = i_hi - i_lo + 1
        sn_wavefront_kernel[(triton.cdiv(4 * ANG * ncell, BLOCK),)](
            sigt, src, mu, eta, xin, yin, psi, d, i_lo, ncell, NX=NX, NY=NY, ANG=ANG,
            inv_dx=1.0 / DX, inv_dy=1.0 / DY, BLOCK=BLOCK, num_warps=4)
    return psi


def reference(sigt, src, mu, eta):
    dev = sigt.device
    st, sr = sigt.double(), src.double()
    cx = (2.0 * mu.double() / DX)[None, :, None]                # [1, ANG, 1]
    cy = (2.0 * eta.double() / DY)[None, :, None]
    xin = torch.zeros(4, ANG, NY, dtype=torch.float64, device=dev)
    yin = torch.zeros(4, ANG, NX, dtype=torch.float64, device=dev)
    psi = torch.empty(4, ANG, NY, NX, dtype=torch.float64, device=dev)
    q = torch.arange(4, device=dev)[:, None, None]
    for d in range(NX + NY - 1):
        ii = torch.arange(max(0, d - NY + 1), min(d, NX - 1) + 1, device=dev)[None, None, :]
        jj = d - ii
        i = torch.where((q & 1) == 1, NX - 1 - ii, ii).expand(4, 1, -1)
        j = torch.where((q & 2) == 2, NY - 1 - jj, jj).expand(4, 1, -1)
        s_t, s_q = st[j, i], sr[j, i]                          # [4, 1, L]
        xi = xin[:, :, jj[0, 0]]
        yi = yin[:, :, ii[0, 0]]
        p = (s_q + cx * xi + cy * yi) / (s_t + cx + cy)        # [4, ANG, L]
        xin[:, :, jj[0, 0]] = 2 * p - xi
        yin[:, :, ii[0, 0]] = 2 * p - yi
        qi = torch.arange(4, device=dev)[:, None, None].expand(4, ANG, ii.shape[-1])
        ai = torch.arange(ANG, device=dev)[None, :, None].expand(4, ANG, ii.shape[-1])
        psi[qi, ai, j.expand(4, ANG, -1), i.expand(4, ANG, -1)] = p
    return psi.float()
