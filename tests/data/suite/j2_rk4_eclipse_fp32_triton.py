"""Planted bottleneck: near roof (compute: an RK4 J2 propagator whose pipes are already busy; near miss for warp_divergence).

Orbit propagation for a space-situational-awareness catalogue: 1,048,576 LEO objects (fp32 position
km, velocity km/s, SoA [6, N], 25 MB), each propagated by one lane over 64 fixed RK4 steps of 20 s
under two-body gravity plus the J2 oblateness term (per stage: r^2, 1/r via sqrt and a division,
~30 FMA / MUL; ~200 instructions per step), and at every step a cylindrical Earth-shadow test
(behind the Earth along the Sun direction and within one Earth radius of the Sun line) that counts the
steps spent in eclipse for the power / thermal model. The shadow test is written as an if on data
that differs between neighbouring objects, but it only selects a 0 / 1 increment, so it compiles to
a predicated select, not a divergent branch. Output: final state and eclipse fraction, fp32 [7, N]
(29 MB). 8,192 programs of 128 (4 warps); ~64 x 200 x 1M = 13.4G lane instructions (~420M warp
instructions), bytes ~55 MB.
The hypothesis: near_roof (compute): issue slots ~85-95% busy, FMA pipe ~50-70%, SM% ~85-95%, DRAM
~2-5%, ThreadDivergence quiet (predicated select), ~0.4-0.7 ms. Nothing large to fix: fewer
instructions per stage (rsqrt instead of sqrt and division) would give at most ~10-20%.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
OBJECTS = 1 << 20
STEPS = 64
DT = 20.0                  # s
MU = 398600.4418           # km^3 / s^2
RE = 6378.137              # km
J2 = 1.08262668e-3
SUN = (0.8, 0.55, 0.2395)  # unit vector to the Sun (fixed over the 21-minute window)
BLOCK = 128
TOLERANCE = 1e-4  # fp32 RK4 over 64 steps against float64


@triton.jit
def _accel(x, y, z, mu, re2j2):
    r2 = x * x + y * y + z * z
    r = tl.sqrt(r2)
    ir2 = 1.0 / r2
    ir3 = ir2 / r
    zr2 = z * z * ir2
    k = 1.5 * re2j2 * ir2
    c = -mu * ir3
    fxy = c * (1.0 + k * (1.0 - 5.0 * zr2))
    fz = c * (1.0 + k * (3.0 - 5.0 * zr2))
    return fxy * x, fxy * y, fz * z


@triton.jit
def j2_rk4_kernel(s_ptr, o_ptr, n, steps, dt, mu, re, re2j2, sx, sy, sz, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(s_ptr + offs, mask=m, other=7000.0)
    y = tl.load(s_ptr + n + offs, mask=m, other=0.0)
    z = tl.load(s_ptr + 2 * n + offs, mask=m, other=0.0)
    vx = tl.load(s_ptr + 3 * n + offs, mask=m, other=0.0)
    vy = tl.load(s_ptr + 4 * n + offs, mask=m, other=7.5)
    vz = tl.load(s_ptr + 5 * n + offs, mask=m, other=0.0)
    shadow = tl.zeros([BLOCK], dtype=tl.float32)
    h = 0.5 * dt
    for _ in range(steps):
        a1x, a1y, a1z = _accel(x, y, z, mu, re2j2)
        a2x, a2y, a2z = _accel(x + h * vx, y + h * vy, z + h * vz, mu, re2j2)
        v2x = vx + h * a1x
        v2y = vy + h * a1y
        v2z = vz + h * a1z
        a3x, a3y, a3z = _accel(x + h * v2x, y + h * v2y, z + h * v2z, mu, re2j2)
        v3x = vx + h * a2x
        v3y = vy + h * a2y
        v3z = vz + h * a2z
        a4x, a4y, a4z = _accel(x + dt * v3x, y + dt * v3y, z + dt * v3z, mu, re2j2)
        v4x = vx + dt * a3x
        v4y = vy + dt * a3y
        v4z = vz + dt * a3z
        x += dt / 6.0 * (vx + 2.0 * v2x + 2.0 * v3x + v4x)
        y += dt / 6.0 * (vy + 2.0 * v2y + 2.0 * v3y + v4y)
        z += dt / 6.0 * (vz + 2.0 * v2z + 2.0 * v3z + v4z)
        vx += dt / 6.0 * (a1x + 2.0 * a2x + 2.0 * a3x + a4x)
        vy += dt / 6.0 * (a1y + 2.0 * a2y + 2.0 * a3y + a4y)
        vz += dt / 6.0 * (a1z + 2.0 * a2z + 2.0 * a3z + a4z)
        # cylindrical shadow: behind the Earth and inside the Earth's shadow cylinder
        along = x * sx + y * sy + z * sz
        px = x - along * sx
        py = y - along * sy
        pz = z - along * sz
        in_shadow = (along < 0.0) & (px * px + py * py + pz * pz < re * re)
        shadow += tl.where(in_shadow, 1.0, 0.0)
    tl.store(o_ptr + offs, x, mask=m)
    tl.store(o_ptr + n + offs, y, mask=m)
    tl.store(o_ptr + 2 * n + offs, z, mask=m)
    tl.store(o_ptr + 3 * n + offs, vx, mask=m)
    tl.store(o_ptr + 4 * n + offs, vy, mask=m)
    tl.store(o_ptr + 5 * n + offs, vz, mask=m)
    tl.store(o_ptr + 6 * n + offs, shadow / steps, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    n = OBJECTS
    a = RE + 400.0 + 1200.0 * torch.rand(n, device=DEVICE, generator=g)           # near-circular LEO shells
    inc = torch.acos(1 - 2 * torch.rand(n, device=DEVICE, generator=g))
    raan = 2 * torch.pi * torch.rand(n, device=DEVICE, generator=g)
    u = 2 * torch.pi * torch.rand(n, device=DEVICE, generator=g)
    ecc_v = 1 + 0.01 * torch.randn(n, device=DEVICE, generator=g)                 # slightly non-circular speeds
    r = torch.stack([torch.cos(u), torch.sin(u), torch.zeros_like(u)])
    v = torch.stack([-torch.sin(u), torch.cos(u), torch.zeros_like(u)]) * torch.sqrt(MU / a) * ecc_v
    ci, si, co, so = torch.cos(inc), torch.sin(inc), torch.cos(raan), torch.sin(raan)

    def rot(w):
        xx, yy = w[0], w[1] * ci
        zz = w[1] * si
        return torch.stack([co * xx - so * yy, so * xx + co * yy, zz])

    state = torch.cat([rot(r) * a, rot(v)], 0)
    return (state.float().contiguous(),)


def run(state):
    n = state.shape[1]
    out = torch.empty(7, n, device=state.device, dtype=torch.float32)
    sx, sy, sz = SUN
    j2_rk4_kernel[(triton.cdiv(n, BLOCK),)](state, out, n, STEPS, DT, MU, RE, RE * RE * J2, sx, sy, sz,
                                            BLOCK=BLOCK, num_warps=4)
    return out


def _accel_ref(p):
    r2 = (p * p).sum(0)
    r = torch.sqrt(r2)
    zr2 = p[2] ** 2 / r2
    k = 1.5 * RE * RE * J2 / r2
    c = -MU / (r2 * r)
    return torch.stack([c * (1 + k * (1 - 5 * zr2)) * p[0], c * (1 + k * (1 - 5 * zr2)) * p[1],
                        c * (1 + k * (3 - 5 * zr2)) * p[2]])


def reference(state):
    s = state.double()
    p, v = s[:3].clone(), s[3:].clone()
    sun = torch.tensor(SUN, device=s.device, dtype=torch.float64)[:, None]
    shadow = torch.zeros(s.shape[1], device=s.device, dtype=torch.float64)
    h = 0.5 * DT
    for _ in range(STEPS):
        a1 = _accel_ref(p)
        a2 = _accel_ref(p + h * v)
        v2 = v + h * a1
        a3 = _accel_ref(p + h * v2)
        v3 = v + h * a2
        a4 = _accel_ref(p + DT * v3)
        v4 = v + DT * a3
        p = p + DT / 6 * (v + 2 * v2 + 2 * v3 + v4)
        v = v + DT / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        along = (p * sun).sum(0)
        perp = p - along * sun
        shadow += ((along < 0) & ((perp * perp).sum(0) < RE * RE)).double()
    return torch.cat([p, v, (shadow / STEPS)[None]], 0).float()

