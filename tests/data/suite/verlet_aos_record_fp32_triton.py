"""Planted bottleneck: uncoalesced global access (a Verlet particle step over 64-byte array-of-structs records).

One symplectic-Euler / velocity-Verlet half step for 4,194,304 particles stored as an array of structs:
each particle is a 64-byte record of 16 fp32 (x y z, vx vy vz, fx fy fz, inverse mass, 6 spare), the
output state a 32-byte record (x y z vx vy vz + 2 spare, zeroed). Each program takes 512 particles
(8 warps, 2 per thread: ~40 registers, full occupancy; 8 per thread would need 80 registers) and reads the ten fields one by one (ten loads whose lanes are 64 bytes apart: 4 useful bytes per
32-byte sector, a warp's request touching 32 sectors in 16 lines) and writes six fields the same way
(lanes 32 bytes apart). The 256 MB of records (only 40 of 64 bytes per record wanted) and 134 MB of
output are ~130 us at 3.05 TB/s; L1 keeps the lines between the field loads, so DRAM traffic stays
near the record size, but L1/LSU must process ~8x the sectors a struct-of-arrays layout would. The
hypothesis: UncoalescedGlobalAccess (~4 B used per sector) with L1 the busiest unit, DRAM well under
its roof. The fix is the struct-of-arrays layout (or 16-byte vector loads of the record).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 22
BLOCK = 512
DT = 1e-3


@triton.jit
def verlet_aos_kernel(rec_ptr, out_ptr, n, dt, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    r = rec_ptr + i.to(tl.int64) * 16  # 16 fp32 per record
    x = tl.load(r + 0, mask=mask, other=0.0)
    y = tl.load(r + 1, mask=mask, other=0.0)
    z = tl.load(r + 2, mask=mask, other=0.0)
    vx = tl.load(r + 3, mask=mask, other=0.0)
    vy = tl.load(r + 4, mask=mask, other=0.0)
    vz = tl.load(r + 5, mask=mask, other=0.0)
    fx = tl.load(r + 6, mask=mask, other=0.0)
    fy = tl.load(r + 7, mask=mask, other=0.0)
    fz = tl.load(r + 8, mask=mask, other=0.0)
    im = tl.load(r + 9, mask=mask, other=0.0)
    s = dt * im
    vx = vx + s * fx
    vy = vy + s * fy
    vz = vz + s * fz
    o = out_ptr + i.to(tl.int64) * 8  # 8 fp32 per output record
    tl.store(o + 0, x + dt * vx, mask=mask)
    tl.store(o + 1, y + dt * vy, mask=mask)
    tl.store(o + 2, z + dt * vz, mask=mask)
    tl.store(o + 3, vx, mask=mask)
    tl.store(o + 4, vy, mask=mask)
    tl.store(o + 5, vz, mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    rec = torch.randn(N, 16, device=DEVICE, generator=g)
    rec[:, 9] = torch.rand(N, device=DEVICE, generator=g) + 0.5  # inverse mass
    return (rec,)


def run(rec):
    n = rec.shape[0]
    out = torch.zeros(n, 8, device=rec.device, dtype=torch.float32)
    verlet_aos_kernel[(triton.cdiv(n, BLOCK),)](rec, out, n, DT, BLOCK=BLOCK, num_warps=8)
    return out


def reference(rec):
    pos, vel, frc, im = rec[:, 0:3], rec[:, 3:6], rec[:, 6:9], rec[:, 9:10]
    v = vel + (DT * im) * frc
    out = torch.zeros(rec.shape[0], 8, device=rec.device, dtype=torch.float32)
    out[:, 0:3] = pos + DT * v
    out[:, 3:6] = v
    return out
