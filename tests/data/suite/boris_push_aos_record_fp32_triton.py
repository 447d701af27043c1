"""Planted bottleneck: uncoalesced global access (a Boris push reading 64-byte particle records one field at a time).

Particle push of an electromagnetic particle-in-cell (PIC) code, relativistic Boris scheme: 4,194,304
macro-particles stored as an array of structures, one 16-float (64 B) record each: x, y, z, ux, uy,
uz, weight, q/m, then the fields already interpolated to the particle by the gather step (Ex, Ey, Ez,
Bx, By, Bz) and two bookkeeping words (id, cell). The push reads 13 fields and writes the new state
(x, y, z, ux, uy, uz, gamma, weight) into an 8-float (32 B) record per particle. Each lane owns one
particle, so every field is its own 4-byte load with the lanes 64 bytes apart: one warp load touches
32 sectors and uses 4 bytes of each (and every store 32 sectors, 4 bytes each); the other fields of
those sectors come back through L1 / L2 on the next loads. 4,096 programs of 1,024 (8 warps).
Bytes: 268 MB of records in, 134 MB out (~132 us at 3.05 TB/s).
The hypothesis: uncoalesced_global: ~4 bytes used per sector requested, UncoalescedGlobalAccess and
the L1TEX / L2 access-pattern rules firing, L1 and L2 busier than DRAM (L1 ~70-95%), DRAM ~40-65%,
~0.2-0.4 ms. The fix: a structure-of-arrays particle layout (or loading whole records as float4 and
transposing through registers / shared memory), which brings it to the DRAM roof.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 22
REC = 16           # floats per particle record
OUTREC = 8
DT = 0.05          # in units of 1 / omega_p
BLOCK = 1024


@triton.jit
def boris_push_kernel(p_ptr, o_ptr, n, dt, REC: tl.constexpr, OUTREC: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    r = p_ptr + offs.to(tl.int64) * REC
    x = tl.load(r + 0, mask=m, other=0.0)
    y = tl.load(r + 1, mask=m, other=0.0)
    z = tl.load(r + 2, mask=m, other=0.0)
    ux = tl.load(r + 3, mask=m, other=0.0)
    uy = tl.load(r + 4, mask=m, other=0.0)
    uz = tl.load(r + 5, mask=m, other=0.0)
    w = tl.load(r + 6, mask=m, other=0.0)
    qm = tl.load(r + 7, mask=m, other=0.0)
    ex = tl.load(r + 8, mask=m, other=0.0)
    ey = tl.load(r + 9, mask=m, other=0.0)
    ez = tl.load(r + 10, mask=m, other=0.0)
    bx = tl.load(r + 11, mask=m, other=0.0)
    by = tl.load(r + 12, mask=m, other=0.0)
    bz = tl.load(r + 13, mask=m, other=0.0)
    h = 0.5 * qm * dt
    # half electric kick
    umx = ux + h * ex
    umy = uy + h * ey
    umz = uz + h * ez
    g = tl.sqrt(1.0 + umx * umx + umy * umy + umz * umz)
    tx = h * bx / g
    ty = h * by / g
    tz = h * bz / g
    s = 2.0 / (1.0 + tx * tx + ty * ty + tz * tz)
    # magnetic rotation
    upx = umx + (umy * tz - umz * ty)
    upy = umy + (umz * tx - umx * tz)
    upz = umz + (umx * ty - umy * tx)
    uqx = umx + s * (upy * tz - upz * ty)
    uqy = umy + s * (upz * tx - upx * tz)
    uqz = umz + s * (upx * ty - upy * tx)
    # second half kick, drift
    nux = uqx + h * ex
    nuy = uqy + h * ey
    nuz = uqz + h * ez
    gn = tl.sqrt(1.0 + nux * nux + nuy * nuy + nuz * nuz)
    f = dt / gn
    o = o_ptr + offs.to(tl.int64) * OUTREC
    tl.store(o + 0, x + nux * f, mask=m)
    tl.store(o + 1, y + nuy * f, mask=m)
    tl.store(o + 2, z + nuz * f, mask=m)
    tl.store(o + 3, nux, mask=m)
    tl.store(o + 4, nuy, mask=m)
    tl.store(o + 5, nuz, mask=m)
    tl.store(o + 6, gn, mask=m)
    tl.store(o + 7, w, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    rec = torch.empty(N, REC, device=DEVICE, dtype=torch.float32)
    rec[:, 0:3] = torch.rand(N, 3, device=DEVICE, generator=g) * 128.0               # cells
    rec[:, 3:6] = 0.3 * torch.randn(N, 3, device=DEVICE, generator=g)                # u = gamma v / c
    rec[:, 6] = 1.0 + 0.1 * torch.rand(N, device=DEVICE, generator=g)
    rec[:, 7] = torch.where(torch.rand(N, device=DEVICE, generator=g) < 0.5, -1.0, 1.0 / 1836.0)  # e-, p+
    rec[:, 8:11] = 0.2 * torch.randn(N, 3, device=DEVICE, generator=g)
    rec[:, 11:14] = torch.tensor([0.0, 0.0, 1.5], device=DEVICE) + 0.1 * torch.randn(N, 3, device=DEVICE, generator=g)
    rec[:, 14] = torch.arange(N, device=DEVICE, dtype=torch.float32)
    rec[:, 15] = torch.floor(rec[:, 0])
    return (rec.contiguous(),)


def run(rec):
    n = rec.shape[0]
    out = torch.empty(n, OUTREC, device=rec.device, dtype=torch.float32)
    boris_push_kernel[(triton.cdiv(n, BLOCK),)](rec, out, n, DT, REC=REC, OUTREC=OUTREC, BLOCK=BLOCK, num_warps=8)
    return out


def reference(rec):
    r = rec.double()
    h = (0.5 * r[:, 7] * DT)[:, None]
    e, b = r[:, 8:11], r[:, 11:14]
    um = r[:, 3:6] + h * e
    g = torch.sqrt(1 + (um * um).sum(1, keepdim=True))
    t = h * b / g
    s = 2 / (1 + (t * t).sum(1, keepdim=True))
    up = um + torch.cross(um, t, dim=1)
    uq = um + s * torch.cross(up, t, dim=1)
    nu = uq + h * e
    gn = torch.sqrt(1 + (nu * nu).sum(1, keepdim=True))
    out = torch.cat([r[:, 0:3] + nu * DT / gn, nu, gn, r[:, 6:7]], dim=1)
    return out.float()
