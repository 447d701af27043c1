"""Planted bottleneck: compute bound (Kepler's equation by Newton iteration for an asteroid ephemeris).

Positions of 262,144 minor planets at 64 epochs (16.8M object-epochs): per object the orbital elements
(a, e, i, node, peri, M0, n: 7 fp32, coalesced [7, N]), per epoch the mean anomaly M = M0 + n t,
Kepler's equation E - e sin E = M solved by 6 Newton steps from E0 = M + e sin M (each step one sin,
one cos and one IEEE divide: libdevice sinf/cosf with their range reduction, ~100 instructions), then
the in-plane position and its rotation by (peri, i, node) into ecliptic x, y, z (fp32 out, [3, T, N]:
201 MB, ~66 us at 3.05 TB/s). ~700-800 fp32/int instructions per object-epoch, ~12G in all: ~0.3-0.5 ms
of issue on 132 SMs. The hypothesis: SM% high (FMA/ALU pipes and issue slots busy, 'High Compute
Throughput' or 'High Utilization'), DRAM 10-25%, full occupancy. The fix: fewer instructions (sincosf
once per step, __sinf/__cosf after a cheap range reduction, or a Danby/Markley starter with 2 steps).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
OBJECTS = 1 << 18
EPOCHS = 64
STEPS = 6
BLOCK_N = 128
BLOCK_T = 4
TOLERANCE = 1e-4  # libdevice sinf/cosf vs torch's, and FMA contraction, through the Newton steps (fp32 throughout)


@triton.jit
def kepler_kernel(el_ptr, t_ptr, out_ptr, n_obj, n_ep, STEPS: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_T: tl.constexpr):
    o = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k = tl.program_id(1) * BLOCK_T + tl.arange(0, BLOCK_T)
    mo = o < n_obj
    mk = k < n_ep
    a = tl.load(el_ptr + 0 * n_obj + o, mask=mo, other=1.0)
    e = tl.load(el_ptr + 1 * n_obj + o, mask=mo, other=0.0)
    inc = tl.load(el_ptr + 2 * n_obj + o, mask=mo, other=0.0)
    node = tl.load(el_ptr + 3 * n_obj + o, mask=mo, other=0.0)
    peri = tl.load(el_ptr + 4 * n_obj + o, mask=mo, other=0.0)
    m0 = tl.load(el_ptr + 5 * n_obj + o, mask=mo, other=0.0)
    mm = tl.load(el_ptr + 6 * n_obj + o, mask=mo, other=0.0)
    t = tl.load(t_ptr + k, mask=mk, other=0.0)
    # rotation (peri, inc, node) -> ecliptic, per object
    cw, sw = tl.cos(peri), tl.sin(peri)
    ci, si = tl.cos(inc), tl.sin(inc)
    cn, sn = tl.cos(node), tl.sin(node)
    px = cn * cw - sn * sw * ci
    py = sn * cw + cn * sw * ci
    pz = sw * si
    qx = -cn * sw - sn * cw * ci
    qy = -sn * sw + cn * cw * ci
    qz = cw * si
    b = a * tl.sqrt(1.0 - e * e)
    # Kepler's equation per object-epoch: tile [BLOCK_T, BLOCK_N]
    M = m0[None, :] + mm[None, :] * t[:, None]
    M = M - 6.283185307179586 * tl.floor(M * 0.15915494309189535 + 0.5)
    ee = e[None, :] + tl.zeros([BLOCK_T, BLOCK_N], dtype=tl.float32)
    E = M + ee * tl.sin(M)
    for _ in tl.static_range(STEPS):
        E = E - (E - ee * tl.sin(E) - M) / (1.0 - ee * tl.cos(E))
    xp = a[None, :] * (tl.cos(E) - ee)
    yp = b[None, :] * tl.sin(E)
    m = mk[:, None] & mo[None, :]
    base = k[:, None] * n_obj + o[None, :]
    plane = n_ep * n_obj
    tl.store(out_ptr + base, xp * px[None, :] + yp * qx[None, :], mask=m)
    tl.store(out_ptr + plane + base, xp * py[None, :] + yp * qy[None, :], mask=m)
    tl.store(out_ptr + 2 * plane + base, xp * pz[None, :] + yp * qz[None, :], mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    u = torch.rand(7, OBJECTS, device=DEVICE, generator=g)
    a = 2.0 + 1.5 * u[0]                     # AU, main belt
    e = 0.3 * u[1]
    inc = 0.5 * u[2]
    node = 6.283185307179586 * u[3]
    peri = 6.283185307179586 * u[4]
    m0 = 6.283185307179586 * u[5]
    n = 0.0172020989 / a ** 1.5              # rad/day (Gauss)
    el = torch.stack([a, e, inc, node, peri, m0, n]).contiguous()
    t = torch.arange(EPOCHS, device=DEVICE, dtype=torch.float32) * 30.0   # every 30 days
    return el, t


def run(el, t):
    n_obj = el.shape[1]
    n_ep = t.shape[0]
    out = torch.empty(3, n_ep, n_obj, device=el.device, dtype=torch.float32)
    grid = (triton.cdiv(n_obj, BLOCK_N), triton.cdiv(n_ep, BLOCK_T))
    kepler_kernel[grid](el, t, out, n_obj, n_ep, STEPS=STEPS, BLOCK_N=BLOCK_N, BLOCK_T=BLOCK_T, num_warps=4)
    return out


def reference(el, t):
    a, e, inc, node, peri, m0, mm = el.double()
    td = t.double()[:, None]
    M = m0 + mm * td
    M = M - 2 * torch.pi * torch.floor(M / (2 * torch.pi) + 0.5)
    E = M + e * torch.sin(M)
    for _ in range(STEPS):
        E = E - (E - e * torch.sin(E) - M) / (1.0 - e * torch.cos(E))
    xp = a * (torch.cos(E) - e)
    yp = a * torch.sqrt(1.0 - e * e) * torch.sin(E)
    cw, sw, ci, si, cn, sn = torch.cos(peri), torch.sin(peri), torch.cos(inc), torch.sin(inc), torch.cos(node), torch.sin(node)
    x = xp * (cn * cw - sn * sw * ci) + yp * (-cn * sw - sn * cw * ci)
    y = xp * (sn * cw + cn * sw * ci) + yp * (-sn * sw + cn * cw * ci)
    z = xp * (sw * si) + yp * (cw * si)
    return torch.stack([x, y, z]).float()
