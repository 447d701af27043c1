"""Planted bottleneck: low occupancy (block size: one-warp programs cap an SM at 32 resident warps).

Gassmann fluid substitution on a 3D elastic-property cube (reservoir geophysics: what would the seismic
velocities be if the brine in the pores were replaced by gas?): 33,554,432 voxels (a 256 x 256 x 512
cube) of Vp, Vs (km/s), bulk density (g/cc) and porosity, fp16, planar (268 MB in). Per voxel: moduli
from velocities, dry-rock bulk modulus by inverting Gassmann with the brine, re-saturation with gas,
new density, new Vp and Vs (two sqrt, ~6 divisions): Vp2, Vs2 out as fp16 [2, N] (134 MB). Programs of
128 voxels with num_warps=1 (4 per lane): 262,144 programs, but an SM holds at most 32 blocks, so at most 32 warps
(50% theoretical occupancy), and each one-warp program lives only a few hundred cycles, so block
launch/retire overhead keeps the achieved occupancy lower still.
The hypothesis: low_occupancy (block_size): theoretical occupancy 50% (block limit), achieved ~15-35%,
DRAM ~30-55% of peak, long-scoreboard stalls, ~0.3-0.6 ms vs ~132 us for the 403 MB at 3.05 TB/s.
The fix: BLOCK 2,048 with num_warps=8 (or 4), 16 x fewer and longer programs.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 256 * 256 * 512
BLOCK = 128
K_MIN = 36.6      # GPa, quartz
K_BRINE, RHO_BRINE = 2.8, 1.03
K_GAS, RHO_GAS = 0.06, 0.20


@triton.jit
def gassmann_kernel(vp_ptr, vs_ptr, rho_ptr, phi_ptr, out_ptr, n,
                    k_min, k_fl1, rho_fl1, k_fl2, rho_fl2, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    vp = tl.load(vp_ptr + offs, mask=m, other=3.0).to(tl.float32)
    vs = tl.load(vs_ptr + offs, mask=m, other=1.5).to(tl.float32)
    rho = tl.load(rho_ptr + offs, mask=m, other=2.3).to(tl.float32)
    phi = tl.load(phi_ptr + offs, mask=m, other=0.2).to(tl.float32)
    mu = rho * vs * vs                                   # GPa (g/cc x (km/s)^2)
    k_sat1 = rho * vp * vp - (4.0 / 3.0) * mu
    # invert Gassmann for the dry frame with fluid 1
    a = k_sat1 * (phi * k_min / k_fl1 + 1.0 - phi) - k_min
    b = phi * k_min / k_fl1 + k_sat1 / k_min - 1.0 - phi
    k_dry = a / b
    # re-saturate with fluid 2
    t = 1.0 - k_dry / k_min
    k_sat2 = k_dry + t * t / (phi / k_fl2 + (1.0 - phi) / k_min - k_dry / (k_min * k_min))
    rho2 = rho + phi * (rho_fl2 - rho_fl1)
    vp2 = tl.sqrt((k_sat2 + (4.0 / 3.0) * mu) / rho2)
    vs2 = tl.sqrt(mu / rho2)
    tl.store(out_ptr + offs, vp2.to(tl.float16), mask=m)
    tl.store(out_ptr + n + offs, vs2.to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    phi = 0.08 + 0.22 * torch.rand(N, device=DEVICE, generator=g)                       # porosity
    # consistent brine-saturated rock: a dry frame from a critical-porosity model, then Gassmann forward
    k_dry = K_MIN * (1.0 - phi / 0.4) * (0.85 + 0.1 * torch.rand(N, device=DEVICE, generator=g))
    mu = 0.8 * k_dry
    t = 1.0 - k_dry / K_MIN
    k_sat = k_dry + t * t / (phi / K_BRINE + (1.0 - phi) / K_MIN - k_dry / K_MIN ** 2)
    rho = 2.65 * (1.0 - phi) + RHO_BRINE * phi
    vp = torch.sqrt((k_sat + 4.0 / 3.0 * mu) / rho)
    vs = torch.sqrt(mu / rho)
    h = lambda x: x.to(torch.float16).contiguous()  # noqa: E731
    return h(vp), h(vs), h(rho), h(phi)


def run(vp, vs, rho, phi):
    n = vp.numel()
    out = torch.empty(2, n, device=vp.device, dtype=torch.float16)
    gassmann_kernel[(triton.cdiv(n, BLOCK),)](vp, vs, rho, phi, out, n, K_MIN, K_BRINE, RHO_BRINE, K_GAS, RHO_GAS,
                                              BLOCK=BLOCK, num_warps=1)
    return out


def reference(vp, vs, rho, phi):
    vp, vs, rho, phi = vp.double(), vs.double(), rho.double(), phi.double()
    mu = rho * vs * vs
    k_sat1 = rho * vp * vp - 4.0 / 3.0 * mu
    k_dry = (k_sat1 * (phi * K_MIN / K_BRINE + 1.0 - phi) - K_MIN) / (phi * K_MIN / K_BRINE + k_sat1 / K_MIN - 1.0 - phi)
    t = 1.0 - k_dry / K_MIN
    k_sat2 = k_dry + t * t / (phi / K_GAS + (1.0 - phi) / K_MIN - k_dry / K_MIN ** 2)
    rho2 = rho + phi * (RHO_GAS - RHO_BRINE)
    return torch.stack([torch.sqrt((k_sat2 + 4.0 / 3.0 * mu) / rho2), torch.sqrt(mu / rho2)]).to(torch.float16)
