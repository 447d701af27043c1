"""Planted bottleneck: near roof (near miss for uncoalesced_global: stride-2 lon/lat loads and stores that L1/L2 absorb).

Tiling a GNSS point cloud for a web map: 33,554,432 (lon, lat) pairs in degrees (fp32, interleaved
[N, 2] as they come from the GPS logs, 268 MB) projected to spherical Web Mercator (EPSG:3857)
metres, x = R lon, y = R atanh(sin lat) = 0.5 R ln((1 + sin lat) / (1 - sin lat)), latitudes clamped
to +-85.0511 degrees, written interleaved [N, 2] (268 MB). The kernel loads lon at 2i and lat at 2i + 1
as two separate strided loads (and stores x and y the same way): each load instruction uses 4 of every
8 bytes it touches, so ncu's uncoalesced-access rule should fire (~50% of each sector used per
request), but the two loads of a warp read the same sectors back to back (the second hits L1) and the
two stores fill the same L2 sectors before they are written back: DRAM moves only the 537 MB needed.
~25 instructions per point (one sin, one log, one division) are far below the issue roof. 65,536
programs of 512 points (4 warps); Triton/ptxas offline (sm_90a): 35 registers, 75% theoretical
occupancy.
The hypothesis: near_roof: DRAM ~85-92% of peak, ~1.0x the minimal bytes, ~180-210 us; the
uncoalesced rule (and L1 ~50-70% busy) is a false lead; the only gain left would be 64-bit (pair)
loads and stores, a few percent.
"""

import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 25
BLOCK = 512
R_M = 6378137.0
LAT_MAX = 85.0511287798


@triton.jit
def webmercator_kernel(ll_ptr, xy_ptr, n, deg, r, lat_max, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    lon = tl.load(ll_ptr + 2 * i, mask=m, other=0.0)
    lat = tl.load(ll_ptr + 2 * i + 1, mask=m, other=0.0)
    lat = tl.minimum(tl.maximum(lat, -lat_max), lat_max)
    s = tl.sin(lat * deg)
    x = r * deg * lon
    y = 0.5 * r * tl.log((1.0 + s) / (1.0 - s))
    tl.store(xy_ptr + 2 * i, x, mask=m)
    tl.store(xy_ptr + 2 * i + 1, y, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    lon = -180.0 + 360.0 * torch.rand(N, device=DEVICE, generator=g)
    lat = torch.rad2deg(torch.asin(2.0 * torch.rand(N, device=DEVICE, generator=g) - 1.0)) * 0.95   # uniform on the sphere
    return (torch.stack([lon, lat], dim=1).contiguous(),)


def run(ll):
    n = ll.shape[0]
    xy = torch.empty_like(ll)
    webmercator_kernel[(triton.cdiv(n, BLOCK),)](ll, xy, n, math.pi / 180.0, R_M, LAT_MAX, BLOCK=BLOCK, num_warps=4)
    return xy


def reference(ll):
    lon, lat = ll[:, 0].double(), ll[:, 1].double().clamp(-LAT_MAX, LAT_MAX)
    x = R_M * torch.deg2rad(lon)
    y = R_M * torch.atanh(torch.sin(torch.deg2rad(lat)))
    return torch.stack([x, y], dim=1).float()
