"""Planted bottleneck: near roof (near miss for uncoalesced_global: the shifted Yee-grid reads hit L1 / L2).

One electric-field half step of a 2D TMz FDTD solver (Yee grid, a microwave-imaging / antenna
near-field domain): Ez[y, x] <- Ca[m] Ez[y, x] + Cb[m] ((Hy[y, x] - Hy[y, x-1]) - (Hx[y, x] - Hx[y-1, x])),
m = the cell's material id (uint8, Ca/Cb from a 4-entry table: air, two dielectrics, a lossy absorber),
PEC on the x = 0 and y = 0 edges. Grid 4,096 x 8,192 cells, fp32 fields (Ez, Hx, Hy: 134 MB each, 34 MB
of material ids, Ez out of place: 134 MB). One program per 1,024-cell row segment (4 warps, 32,768
programs). Each program issues six loads per cell: besides Ez, Hy, Hx and the id, Hy one cell to the
left (a 4-byte misaligned copy of the same lines: L1 hits) and Hx one row up (the row the previous
programs just read: L2 hits), plus the Ca/Cb gathers from a 32-byte table. It looks like redundant,
misaligned traffic, but DRAM should see each byte once: 570 MB (~187 us at 3.05 TB/s).
The hypothesis: near_roof: DRAM ~85-92% of peak, DRAM bytes ~1.0x the needed 570 MB, L2 traffic ~1.25x
(the row above), SM% ~20-35%, ~0.2-0.22 ms. The access-pattern rules may fire on the misaligned and
shifted loads, but there is little left to gain (a fused H + E update per time step would halve the
traffic of a whole step, not of this kernel).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NY = 4096
NX = 8192
BLOCK_X = 1024


@triton.jit
def fdtd_ez_kernel(ez_ptr, hx_ptr, hy_ptr, mat_ptr, ca_ptr, cb_ptr, out_ptr, nx, BLOCK_X: tl.constexpr):
    y = tl.program_id(1)
    x = tl.program_id(0) * BLOCK_X + tl.arange(0, BLOCK_X)
    m = x < nx
    row = y.to(tl.int64) * nx
    ez = tl.load(ez_ptr + row + x, mask=m, other=0.0)
    hy = tl.load(hy_ptr + row + x, mask=m, other=0.0)
    hy_left = tl.load(hy_ptr + row + x - 1, mask=m & (x > 0), other=0.0)
    hx = tl.load(hx_ptr + row + x, mask=m, other=0.0)
    not_top = (x * 0 + y) > 0
    hx_up = tl.load(hx_ptr + row - nx + x, mask=m & not_top, other=0.0)
    mat = tl.load(mat_ptr + row + x, mask=m, other=0).to(tl.int32)
    ca = tl.load(ca_ptr + mat)
    cb = tl.load(cb_ptr + mat)
    new = ca * ez + cb * ((hy - hy_left) - (hx - hx_up))
    new = tl.where((x > 0) & not_top, new, 0.0)                 # PEC edges
    tl.store(out_ptr + row + x, new, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    ez = torch.randn(NY, NX, device=DEVICE, generator=g)
    hx = 0.5 * torch.randn(NY, NX, device=DEVICE, generator=g)
    hy = 0.5 * torch.randn(NY, NX, device=DEVICE, generator=g)
    yy = torch.arange(NY, device=DEVICE, dtype=torch.float32)[:, None] / NY
    xx = torch.arange(NX, device=DEVICE, dtype=torch.float32)[None, :] / NX
    mat = torch.zeros(NY, NX, device=DEVICE, dtype=torch.uint8)
    mat = torch.where((xx - 0.5) ** 2 + (yy - 0.5) ** 2 < 0.04, torch.ones_like(mat), mat)         # dielectric cylinder
    mat = torch.where((xx > 0.7) & (xx < 0.75) & (yy > 0.2) & (yy < 0.8), torch.full_like(mat, 2), mat)  # slab
    mat = torch.where((xx < 0.03) | (xx > 0.97) | (yy < 0.03) | (yy > 0.97), torch.full_like(mat, 3), mat)  # absorber
    eps_r = torch.tensor([1.0, 4.0, 9.6, 1.0], device=DEVICE, dtype=torch.float64)
    sigma_dt = torch.tensor([0.0, 0.0, 0.01, 0.6], device=DEVICE, dtype=torch.float64)     # sigma dt / (2 eps0 eps_r)
    ca = ((1.0 - sigma_dt) / (1.0 + sigma_dt)).float()
    cb = (0.5 / eps_r / (1.0 + sigma_dt)).float()                                            # Courant 0.5, normalised H
    return ez, hx, hy, mat.contiguous(), ca.contiguous(), cb.contiguous()


def run(ez, hx, hy, mat, ca, cb):
    ny, nx = ez.shape
    out = torch.empty_like(ez)
    fdtd_ez_kernel[(triton.cdiv(nx, BLOCK_X), ny)](ez, hx, hy, mat, ca, cb, out, nx, BLOCK_X=BLOCK_X, num_warps=4)
    return out


def reference(ez, hx, hy, mat, ca, cb):
    ez, hx, hy = ez.double(), hx.double(), hy.double()
    idx = mat.long()
    hy_left = torch.zeros_like(hy)
    hy_left[:, 1:] = hy[:, :-1]
    hx_up = torch.zeros_like(hx)
    hx_up[1:, :] = hx[:-1, :]
    new = ca.double()[idx] * ez + cb.double()[idx] * ((hy - hy_left) - (hx - hx_up))
    new[0, :] = 0.0
    new[:, 0] = 0.0
    return new.float()
