"""Planted bottleneck: compute bound (ray-sphere chord lengths: every ray against every sphere).

For 2,097,152 rays (origins and unit directions, fp32, structure of arrays) and 256 spheres
(center, radius), the optical depth of each ray: the summed length of its path inside every sphere,
in front of its origin (t >= 0). Per ray-sphere pair: oc = c - o, b = oc . d, the closest approach
p = oc - b d, disc = r^2 - p . p, s = sqrt(max(disc, 0)), chord = max(b + s - max(b - s, 0), 0):
~21 FP32 instructions (FADD/FMUL/FFMA/FMNMX) and one MUFU.SQRT, no branch. A program takes 256
rays (4 warps, 2 rays per thread, their 6 parameters in registers) and walks the spheres one at a
time: 4 uniform scalar loads per sphere (every lane the same address: one L1 wavefront each, 4
loads per ~44 FP32 instructions; with addressing and the loop, ~64 instructions per sphere step
of 2 pairs, as ptxas compiles it for sm_90) and the accumulation in registers (32 registers, full
occupancy). 537M pairs x ~32 instructions = ~0.54G warp instructions: ~0.55 ms at 4 issues per
cycle per SM, against 67 MB of input and output (~22 us). Expected: SM busy >= 80% with the FMA
and ALU pipes on top, memory idle. No cheap fix: fewer pairs (a BVH or a grid over the spheres
culling the misses) or cheaper ones (packed half2 math where precision allows).
TOLERANCE is 1e-4 (not 1e-5): near-tangent rays take the square root of a small difference.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
RAYS, SPHERES = 2**21, 256
BLOCK_R = 256  # rays per program (4 warps: 2 rays per thread)
TOLERANCE = 1e-4


@triton.jit
def ray_sphere_depth_kernel(o_ptr, d_ptr, s_ptr, out_ptr, n_rays, n_spheres, BLOCK_R: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rm = r < n_rays
    ox = tl.load(o_ptr + r, mask=rm, other=0.0)
    oy = tl.load(o_ptr + n_rays + r, mask=rm, other=0.0)
    oz = tl.load(o_ptr + 2 * n_rays + r, mask=rm, other=0.0)
    dx = tl.load(d_ptr + r, mask=rm, other=0.0)
    dy = tl.load(d_ptr + n_rays + r, mask=rm, other=0.0)
    dz = tl.load(d_ptr + 2 * n_rays + r, mask=rm, other=0.0)
    acc = tl.zeros([BLOCK_R], dtype=tl.float32)
    for k in range(0, n_spheres):
        cx = tl.load(s_ptr + k)                  # one sphere per step: the same address in every lane (L1 broadcast)
        cy = tl.load(s_ptr + n_spheres + k)
        cz = tl.load(s_ptr + 2 * n_spheres + k)
        rad = tl.load(s_ptr + 3 * n_spheres + k)
        ocx = cx - ox
        ocy = cy - oy
        ocz = cz - oz
        b = ocx * dx + ocy * dy + ocz * dz       # distance along the ray to the closest approach
        px = ocx - b * dx
        py = ocy - b * dy
        pz = ocz - b * dz
        disc = rad * rad - (px * px + py * py + pz * pz)
        s = tl.sqrt(tl.maximum(disc, 0.0))       # half chord
        acc += tl.maximum(b + s - tl.maximum(b - s, 0.0), 0.0)
    tl.store(out_ptr + r, acc, mask=rm)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    origins = torch.rand(3, RAYS, device=DEVICE, generator=g) * 2.0 - 1.0
    d = torch.randn(3, RAYS, device=DEVICE, generator=g, dtype=torch.float64)
    dirs = (d / d.norm(dim=0, keepdim=True)).float()
    centers = torch.rand(3, SPHERES, device=DEVICE, generator=g) * 40.0 - 20.0
    radii = torch.rand(1, SPHERES, device=DEVICE, generator=g) * 2.5 + 0.5
    return origins, dirs, torch.cat([centers, radii]).contiguous()  # spheres: [4, SPHERES] (cx, cy, cz, r)


def run(origins, dirs, spheres):
    n_rays, n_spheres = origins.shape[1], spheres.shape[1]
    out = torch.empty(n_rays, device=origins.device, dtype=torch.float32)
    ray_sphere_depth_kernel[(triton.cdiv(n_rays, BLOCK_R),)](origins, dirs, spheres, out, n_rays, n_spheres,
                                                             BLOCK_R=BLOCK_R, num_warps=4)
    return out


def reference(origins, dirs, spheres):
    o, d, s = origins.double(), dirs.double(), spheres.double()
    out = torch.empty(o.shape[1], device=o.device, dtype=torch.float64)
    for a in range(0, o.shape[1], 16384):
        oc = s[None, :3, :] - o[:, a:a + 16384].t()[:, :, None]  # [rays, 3, spheres]
        dd = d[:, a:a + 16384].t()[:, :, None]
        b = (oc * dd).sum(1)
        p = oc - b[:, None, :] * dd
        root = (s[3][None, :] ** 2 - (p * p).sum(1)).clamp_min(0.0).sqrt()
        out[a:a + 16384] = (b + root - (b - root).clamp_min(0.0)).clamp_min(0.0).sum(1)
    return out.float()
