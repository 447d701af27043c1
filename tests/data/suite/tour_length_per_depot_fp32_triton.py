"""Planted bottleneck: small grid (one program per depot: 16 programs stream 8 MB each).

Fleet-planning KPI for a parcel carrier: the driven length of the planned delivery tours of 16 depots,
each depot's tours concatenated into one closed stop sequence of 1,048,576 stops (latitude / longitude
in degrees, fp32, SoA per depot: [16, 2, 1048576], 134 MB). The hop length uses the equirectangular
approximation that routing engines use for short hops (dx = dlon cos(mean lat), dy = dlat, R sqrt(dx^2 +
dy^2)). One program per depot (4 warps) walks its stops in chunks of 1,024 and reduces at the end:
16 programs for 132 SMs, each SM that has one keeps only 4 warps with one chunk of loads in flight, so
the 134 MB move at a few tens of GB/s per SM instead of ~3 TB/s for the chip.
The hypothesis: small_grid: 16 blocks (0.12 waves), ncu's Small Grid / launch-configuration rule,
DRAM ~5-15%, SM% ~5%, ~0.5-1.5 ms vs ~50 us for the bytes. The fix: split each depot's stops over
many programs (e.g. 64 chunks per depot) with a second reduction pass or an atomic add per program.
"""

import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DEPOTS = 16
STOPS = 1 << 20
BLOCK = 1024
R_KM = 6371.0
TOLERANCE = 1e-4  # fp32 sums over ~1M hops


@triton.jit
def tour_length_kernel(ll_ptr, out_ptr, stops, deg, r_km, BLOCK: tl.constexpr):
    depot = tl.program_id(0)
    lat_ptr = ll_ptr + depot * 2 * stops
    lon_ptr = lat_ptr + stops
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, stops, BLOCK):
        i = start + tl.arange(0, BLOCK)
        m = i < stops
        j = tl.where(i + 1 < stops, i + 1, 0)                   # closed tour: back to the first stop
        lat0 = tl.load(lat_ptr + i, mask=m, other=0.0)
        lon0 = tl.load(lon_ptr + i, mask=m, other=0.0)
        lat1 = tl.load(lat_ptr + j, mask=m, other=0.0)
        lon1 = tl.load(lon_ptr + j, mask=m, other=0.0)
        dx = (lon1 - lon0) * tl.cos(0.5 * (lat0 + lat1) * deg)
        dy = lat1 - lat0
        acc += tl.where(m, tl.sqrt(dx * dx + dy * dy), 0.0)
    tl.store(out_ptr + depot, tl.sum(acc, axis=0) * deg * r_km)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    centre_lat = 45.0 + 8.0 * torch.rand(DEPOTS, 1, device=DEVICE, generator=g)
    centre_lon = -2.0 + 20.0 * torch.rand(DEPOTS, 1, device=DEVICE, generator=g)
    t = torch.linspace(0, 400 * math.pi, STOPS, device=DEVICE)[None]                  # tours wind around the depot
    rad = 0.05 + 0.25 * torch.rand(DEPOTS, STOPS, device=DEVICE, generator=g)         # degrees
    lat = centre_lat + rad * torch.sin(t) + 0.002 * torch.randn(DEPOTS, STOPS, device=DEVICE, generator=g)
    lon = centre_lon + 1.4 * rad * torch.cos(t) + 0.002 * torch.randn(DEPOTS, STOPS, device=DEVICE, generator=g)
    return (torch.stack([lat, lon], dim=1).float().contiguous(),)


def run(ll):
    depots, _, stops = ll.shape
    out = torch.empty(depots, device=ll.device, dtype=torch.float32)
    tour_length_kernel[(depots,)](ll, out, stops, math.pi / 180.0, R_KM, BLOCK=BLOCK, num_warps=4)
    return out


def reference(ll):
    lat, lon = ll[:, 0].double(), ll[:, 1].double()
    lat1, lon1 = torch.roll(lat, -1, dims=1), torch.roll(lon, -1, dims=1)
    deg = math.pi / 180.0
    dx = (lon1 - lon) * torch.cos(0.5 * (lat + lat1) * deg)
    dy = lat1 - lat
    return (torch.sqrt(dx * dx + dy * dy).sum(dim=1) * deg * R_KM).float()
