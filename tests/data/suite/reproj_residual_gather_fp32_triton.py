"""Planted bottleneck: uncoalesced global access (each observation gathers its 3D point from a random row).

Bundle-adjustment residuals (the cost function of a Ceres / BAL-style solver) for 8,388,608 image
observations: per observation (camera index, point index, observed pixel u, v), the camera's 9
parameters (angle-axis rotation, translation, focal length, two radial distortion terms; 4,096 cameras,
fp32 [C, 9], L1-resident) and the point's coordinates (4,194,304 points, fp32 AoS [P, 3], 50 MB); the
point is rotated (Rodrigues), translated, projected, distorted, and the residual (predicted - observed)
is written as fp32 [OBS, 2]. Observations are sorted by camera (so the camera loads are broadcasts), and
the point indices are therefore effectively random: each warp's three point loads touch ~32 different
sectors for 12 useful bytes per lane (~1.5 bytes used per 32-byte sector per instruction), L2 hits
mostly (the 50 MB point table sits in L2 at best partly). 32,768 programs of 256 (8 warps, one
observation per thread; 35 registers).
Bytes needed: 134 MB of observations (idx + uv) + 50 MB points + 67 MB residuals = 251 MB (~83 us).
The hypothesis: uncoalesced_global: ncu UncoalescedGlobalAccess / L1TEX global load access pattern firing
(~4-6 bytes used per sector on the point loads), L1 / L2 busy (~50-80%), DRAM ~30-50%, ~150-350 us. The fix:
reorder observations by point (or renumber points in first-observation order) so that neighbouring
lanes gather neighbouring points, and store points SoA / padded to 16 bytes (one 128-bit load).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
OBS = 1 << 23
POINTS = 1 << 22
CAMS = 4096
BLOCK = 256
TOLERANCE = 1e-3  # residuals (~2 px) are differences of ~500 px projections computed in fp32


@triton.jit
def reproj_residual_kernel(cam_idx_ptr, pt_idx_ptr, uv_ptr, cam_ptr, pt_ptr, res_ptr, n_obs, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_obs
    ci = tl.load(cam_idx_ptr + offs, mask=m, other=0)
    pi = tl.load(pt_idx_ptr + offs, mask=m, other=0).to(tl.int64)
    # camera (sorted: broadcast within a warp)
    cb = cam_ptr + ci * 9
    wx = tl.load(cb + 0, mask=m, other=0.0)
    wy = tl.load(cb + 1, mask=m, other=0.0)
    wz = tl.load(cb + 2, mask=m, other=0.0)
    tx = tl.load(cb + 3, mask=m, other=0.0)
    ty = tl.load(cb + 4, mask=m, other=0.0)
    tz = tl.load(cb + 5, mask=m, other=1.0)
    f = tl.load(cb + 6, mask=m, other=1.0)
    k1 = tl.load(cb + 7, mask=m, other=0.0)
    k2 = tl.load(cb + 8, mask=m, other=0.0)
    # point: random gather, AoS
    X = tl.load(pt_ptr + pi * 3 + 0, mask=m, other=0.0)
    Y = tl.load(pt_ptr + pi * 3 + 1, mask=m, other=0.0)
    Z = tl.load(pt_ptr + pi * 3 + 2, mask=m, other=0.0)
    # Rodrigues rotation
    th2 = wx * wx + wy * wy + wz * wz
    th = tl.sqrt(th2)
    big = th2 > 1e-12
    inv = 1.0 / tl.where(big, th, 1.0)
    kx, ky, kz = wx * inv, wy * inv, wz * inv
    c = tl.where(big, tl.cos(th), 1.0)
    s = tl.where(big, tl.sin(th), 0.0)
    kdot = kx * X + ky * Y + kz * Z
    cx, cy, cz = ky * Z - kz * Y, kz * X - kx * Z, kx * Y - ky * X
    Xc = X * c + cx * s + kx * kdot * (1.0 - c) + tx
    Yc = Y * c + cy * s + ky * kdot * (1.0 - c) + ty
    Zc = Z * c + cz * s + kz * kdot * (1.0 - c) + tz
    px = Xc / Zc
    py = Yc / Zc
    r2 = px * px + py * py
    dist = 1.0 + r2 * (k1 + k2 * r2)
    u_obs = tl.load(uv_ptr + offs * 2, mask=m, other=0.0)
    v_obs = tl.load(uv_ptr + offs * 2 + 1, mask=m, other=0.0)
    tl.store(res_ptr + offs * 2, f * dist * px - u_obs, mask=m)
    tl.store(res_ptr + offs * 2 + 1, f * dist * py - v_obs, mask=m)


def _project(cam, pts):
    """float64 BAL-style projection of pts [K, 3] by per-row cameras cam [K, 9]."""
    w, t, f, k1, k2 = cam[:, 0:3], cam[:, 3:6], cam[:, 6], cam[:, 7], cam[:, 8]
    th = w.norm(dim=1, keepdim=True)
    k = w / th.clamp_min(1e-30)
    c, s = torch.cos(th), torch.sin(th)
    kdot = (k * pts).sum(1, keepdim=True)
    pc = pts * c + torch.cross(k, pts, dim=1) * s + k * kdot * (1.0 - c) + t
    p = pc[:, :2] / pc[:, 2:3]
    r2 = (p * p).sum(1)
    return (f * (1.0 + r2 * (k1 + k2 * r2)))[:, None] * p


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    pts = torch.rand(POINTS, 3, device=DEVICE, generator=g) * torch.tensor([100.0, 100.0, 20.0], device=DEVICE)
    pts -= torch.tensor([50.0, 50.0, 0.0], device=DEVICE)
    cam = torch.empty(CAMS, 9, device=DEVICE)
    cam[:, 0:3] = 0.05 * torch.randn(CAMS, 3, device=DEVICE, generator=g)                 # small rotations
    cam[:, 3:5] = 10.0 * torch.randn(CAMS, 2, device=DEVICE, generator=g)
    cam[:, 5] = 100.0 + 10.0 * torch.rand(CAMS, device=DEVICE, generator=g)               # ~100 m above the scene
    cam[:, 6] = 800.0 + 400.0 * torch.rand(CAMS, device=DEVICE, generator=g)              # focal, px
    cam[:, 7] = 0.05 * torch.randn(CAMS, device=DEVICE, generator=g)
    cam[:, 8] = 0.01 * torch.randn(CAMS, device=DEVICE, generator=g)
    cam_idx = (torch.arange(OBS, device=DEVICE) * CAMS // OBS).to(torch.int32)           # sorted by camera
    pt_idx = torch.randint(0, POINTS, (OBS,), device=DEVICE, generator=g, dtype=torch.int32)
    uv = _project(cam.double()[cam_idx.long()], pts.double()[pt_idx.long()]).float()
    uv += 2.0 * torch.randn(OBS, 2, device=DEVICE, generator=g)                          # detection noise, px
    return cam_idx, pt_idx, uv.contiguous(), cam.contiguous(), pts.contiguous()


def run(cam_idx, pt_idx, uv, cam, pts):
    n = cam_idx.numel()
    res = torch.empty(n, 2, device=uv.device, dtype=torch.float32)
    reproj_residual_kernel[(triton.cdiv(n, BLOCK),)](cam_idx, pt_idx, uv, cam, pts, res, n, BLOCK=BLOCK, num_warps=8)
    return res


def reference(cam_idx, pt_idx, uv, cam, pts):
    return (_project(cam.double()[cam_idx.long()], pts.double()[pt_idx.long()]) - uv.double()).float()
