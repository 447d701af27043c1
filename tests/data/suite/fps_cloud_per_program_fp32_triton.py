"""Planted bottleneck: small grid (farthest point sampling with one program per point cloud).

PointNet++-style farthest point sampling of 1,024 centroids from each of 16 LiDAR crops of 8,192
points (fp32 xyz, [B, 3, N], on a 1/64 m grid over 32 x 32 x 3 m, so squared distances are exact in fp32):
one program (16 warps) per cloud keeps its cloud's coordinates and running min-distances in registers
(16 points per thread) and does 1,023 dependent steps, each a distance update of all 8,192 points, an
argmax across the 512 threads (shuffles + shared memory + barriers) and three scalar loads of the chosen
point. The grid is 16 programs for 132 SMs: 116 SMs idle and each busy one has 16 warps doing a chain
of short reductions, ~1,000 cycles per step: ~0.5-0.8 ms against ~0.5 MB of data. The hypothesis:
ncu's LaunchConfiguration / SOLBottleneck 'Small Grid' (0.12 waves), SM% and MEM% low, barrier and
short-scoreboard stalls. The fix: split each cloud across several programs (or a cluster) per step, or
batch many more clouds per launch.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CLOUDS = 16
POINTS = 8192
SAMPLES = 1024
UNITS = 64  # coordinates are multiples of 1/64 m: squares and their sums (< 2^24 / 4096) are exact in fp32


@triton.jit
def fps_kernel(xyz_ptr, out_ptr, n, s, NPOW: tl.constexpr):
    b = tl.program_id(0)
    offs = tl.arange(0, NPOW)
    m = offs < n
    base = xyz_ptr + b * 3 * n
    x = tl.load(base + offs, mask=m, other=0.0)
    y = tl.load(base + n + offs, mask=m, other=0.0)
    z = tl.load(base + 2 * n + offs, mask=m, other=0.0)
    mind = tl.where(m, float("inf"), -1.0)
    px = tl.load(base)
    py = tl.load(base + n)
    pz = tl.load(base + 2 * n)
    tl.store(out_ptr + b * s, 0)
    for i in range(1, s):
        dx = x - px
        dy = y - py
        dz = z - pz
        d = dx * dx + dy * dy + dz * dz
        mind = tl.minimum(mind, d)
        best = tl.argmax(mind, axis=0, tie_break_left=True)
        tl.store(out_ptr + b * s + i, best.to(tl.int32))
        px = tl.load(base + best)
        py = tl.load(base + n + best)
        pz = tl.load(base + 2 * n + best)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    # a ground plane with clutter: 70% of points near z = 0 over 32 x 32 m, 30% in objects up to 3 m tall
    u = torch.rand(CLOUDS, 3, POINTS, device=DEVICE, generator=g)
    xyz = u * torch.tensor([32.0, 32.0, 3.0], device=DEVICE)[None, :, None]
    ground = torch.rand(CLOUDS, POINTS, device=DEVICE, generator=g) < 0.7
    xyz[:, 2] = torch.where(ground, xyz[:, 2] * 0.05, xyz[:, 2])
    xyz = torch.round(xyz * UNITS) / UNITS
    return (xyz.contiguous(),)


def run(xyz):
    clouds, _, n = xyz.shape
    out = torch.empty(clouds, SAMPLES, device=xyz.device, dtype=torch.int32)
    fps_kernel[(clouds,)](xyz, out, n, SAMPLES, NPOW=triton.next_power_of_2(n), num_warps=16)
    return out


def reference(xyz):
    clouds, _, n = xyz.shape
    p = xyz.double()
    out = torch.zeros(clouds, SAMPLES, device=xyz.device, dtype=torch.long)
    mind = torch.full((clouds, n), float("inf"), device=xyz.device, dtype=torch.float64)
    cur = torch.zeros(clouds, device=xyz.device, dtype=torch.long)
    ar = torch.arange(clouds, device=xyz.device)
    for i in range(1, SAMPLES):
        c = p[ar, :, cur]                               # [clouds, 3]
        d = ((p - c[:, :, None]) ** 2).sum(1)
        mind = torch.minimum(mind, d)
        cur = torch.argmax(mind, dim=1)                 # first maximal index
        out[:, i] = cur
    return out.int()
